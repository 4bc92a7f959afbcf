//! Index nested loop joins: the inner side probed through a btree once per
//! outer row, PostgreSQL's Nested Loop over a parameterised Index Scan.
//!
//! A join can run this way when its inner side is a plain sequential scan
//! of a heap table (its filter stays the scan's filter) and some of its
//! equality keys, on the inner side a column of that table (or the column
//! cast to a type whose order it keeps, as for any index condition), bind
//! the leading columns of one of the table's btree indexes. Each such key
//! becomes an index condition `inner column = $n`, `$n` a parameter the
//! join sets from the outer row's key value, chosen as `scan::index_access`
//! chooses a scan's conditions; keys it leaves become part of the join
//! filter. Inner and left joins, and semi and anti joins, can run this
//! way; right and full joins cannot (their unmatched inner rows would need
//! a pass over the whole inner table).
//!
//! The join order search (`join`) costs a probe of a leaf without building
//! it (`ProbeSide`, [`Planner::index_probe_cost`]). The choice is by cost,
//! against the hash join `join` builds: the outer
//! side's cost, plus one index scan per outer row — a descent of the tree,
//! and the leaf and heap pages and tuples of the rows one key value
//! matches, the pages shared among the probes as PostgreSQL's `cost_index`
//! does with its `loop_count` — plus the output rows. As PostgreSQL's
//! `get_loop_count`, the loop count is the rows of the scans that supply
//! the outer keys when they have more rows than the outer side: a join
//! that drops outer rows leaves the probes the same pages to share. The probe's rows are
//! the inner table's rows times the share of one value of each key used
//! (`eq_unknown_value`: PostgreSQL sizes a parameterised scan with its join
//! clauses as restrictions against an unknown value), so
//! a small outer side against a large, selective index wins, and a large
//! outer side or an unselective key loses to the hash join's one pass.
//!
//! EXPLAIN shows PostgreSQL's form: `Nested Loop` over the outer plan and
//! `Index Scan using ... on ...` with `Index Cond: (l_partkey =
//! part.p_partkey)`, the outer values named by their columns.

use super::cost::{CPU_OPERATOR_COST, CPU_TUPLE_COST, DISABLE_COST};
use super::scan::{index_access, index_scan_cost};
use super::{Phys, Planner, Result};
use crate::logical::{ColumnId, JoinKind};
use std::collections::HashMap;
use tusk_exec::expr::CmpOp;
use tusk_exec::{Estimate, Expr, NodeKind, Plan};

/// A join to plan as an index nested loop: its sides and conditions, the
/// keys as (outer expression, inner expression) pairs, all over column ids.
pub(super) struct IndexJoin<'p> {
    pub kind: JoinKind,
    pub outer: &'p Phys,
    pub inner: &'p Phys,
    pub keys: &'p [(Expr, Expr)],
    pub residual: &'p [Expr],
    /// The join's estimated output rows.
    pub rows: f64,
    /// Whether the outer side's columns are output (not for a semi join
    /// run as an inner join from its unique side, see
    /// [`Planner::unique_on`]).
    pub emit_outer: bool,
}

/// An index nested loop's inner side as its cost depends on it, without
/// the outer plan: what the join order search knows of a join it has not
/// built (see `join`), and what [`Planner::index_nest_loop`] knows of one it
/// builds.
pub(super) struct ProbeSide<'p> {
    pub kind: JoinKind,
    pub inner: &'p Phys,
    /// The keys as (outer expression, inner expression) pairs.
    pub keys: &'p [(Expr, Expr)],
    /// Join conditions that are not keys.
    pub residual: usize,
    /// The join's estimated output rows.
    pub rows: f64,
    pub outer_rows: f64,
    /// The scans the probes' page reads are spread over (see
    /// [`Planner::loop_count`]).
    pub loops: f64,
}

/// The cheapest way to probe a [`ProbeSide`]: the index, how its
/// conditions use the keys (parameter of key `k`: `base + k`), and the
/// costs.
struct Probe {
    index: tusk_storage::IndexDef,
    access: super::scan::IndexAccess,
    /// The keys the index conditions use.
    used: Vec<usize>,
    /// One probe's estimate (an Index Scan's).
    probe_est: Estimate,
    /// The join's startup cost beyond its outer side's.
    startup: f64,
    /// The join's total cost beyond its outer side's.
    cost: f64,
}

impl Planner<'_> {
    /// The cost of an index nested loop over side `p` beyond its outer
    /// side's cost, if its inner side has an index its keys can use.
    pub(super) fn index_probe_cost(&self, p: &ProbeSide<'_>) -> Result<Option<f64>> {
        Ok(self.cheapest_probe(p, 0)?.map(|probe| probe.cost))
    }

    /// The cheapest index nested loop for `j`, if its inner side has an
    /// index its keys can use.
    pub(super) fn index_nest_loop(&mut self, j: &IndexJoin<'_>) -> Result<Option<Phys>> {
        let outer_rows = j.outer.plan.est.rows.max(1.0);
        let side = ProbeSide {
            kind: j.kind,
            inner: j.inner,
            keys: j.keys,
            residual: j.residual.len(),
            rows: j.rows,
            outer_rows,
            loops: self.loop_count(j, outer_rows),
        };
        // Each key's parameter stands for the outer value (numbered only
        // if the plan is kept).
        let base = self.numbering().1;
        let Some(probe) = self.cheapest_probe(&side, base)? else {
            return Ok(None);
        };
        let plan = self.build_index_nest_loop(
            j,
            base,
            &probe,
            Estimate {
                startup_cost: j.outer.plan.est.startup_cost + probe.startup,
                total_cost: j.outer.plan.est.total_cost + probe.cost,
                rows: j.rows,
                width: 0,
            },
        )?;
        // Parameters `base..base + keys` are this join's.
        let (subplan, _) = self.numbering();
        self.restore_numbering((subplan, base + j.keys.len()));
        Ok(Some(plan))
    }

    /// The cheapest index of `p`'s inner table to probe with its keys (see
    /// the module doc), key `k`'s parameter numbered `base + k`.
    fn cheapest_probe(&self, p: &ProbeSide<'_>, base: usize) -> Result<Option<Probe>> {
        if !matches!(
            p.kind,
            JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
        ) || p.keys.is_empty()
        {
            return Ok(None);
        }
        let NodeKind::SeqScan {
            oid,
            columns,
            with_tid: false,
            filter,
            parallel: false,
            columnar: None,
            ..
        } = &p.inner.plan.kind
        else {
            return Ok(None);
        };
        let Some(table) = self.catalog.table_by_oid(*oid) else {
            return Ok(None);
        };
        // The column id of each attribute the scan reads.
        let attr_col: HashMap<usize, ColumnId> = columns
            .iter()
            .zip(&p.inner.cols)
            .map(|(&a, &c)| (a, c))
            .collect();
        let (pages, tuples) = self.table_size(table)?;
        let outer_rows = p.outer_rows.max(1.0);
        // Each key as `inner = $param`.
        let conds: Vec<Expr> = p
            .keys
            .iter()
            .enumerate()
            .map(|(k, (o, i))| Expr::Cmp {
                op: CmpOp::Eq,
                left: Box::new(i.clone()),
                right: Box::new(Expr::Param {
                    index: base + k,
                    ty: o.data_type(),
                }),
            })
            .collect();
        let filter_terms = filter.as_ref().map_or(0, |f| {
            let mut v = Vec::new();
            crate::logical::conjuncts(f.clone(), &mut v);
            v.len()
        });
        // The fraction of the scan's rows its filter keeps.
        let filter_sel = (p.inner.plan.est.rows / tuples.max(1.0)).clamp(0.0, 1.0);
        let disabled = if self.settings.enable_nestloop {
            0.0
        } else {
            DISABLE_COST
        } + if self.settings.enable_indexscan {
            0.0
        } else {
            DISABLE_COST
        };
        let mut best: Option<Probe> = None;
        for index in self.catalog.indexes_of(table.oid) {
            let key_ids: Vec<ColumnId> = index
                .columns
                .iter()
                .map_while(|c| attr_col.get(&c.attno).copied())
                .collect();
            let Some(access) = index_access(&key_ids, &conds, |c| self.cols.ty(c), &|_| false)
            else {
                continue;
            };
            let used: Vec<usize> = (0..conds.len())
                .filter(|k| !access.rest.contains(&conds[*k]))
                .collect();
            // A probe keeps the rows of one value of each key, whichever
            // value the outer row brings, as PostgreSQL sizes a
            // parameterised scan (its join clauses as restrictions).
            let sel = if access.equal_columns == index.columns.len() && index.unique() {
                1.0 / tuples.max(1.0)
            } else {
                used.iter()
                    .map(|&k| self.eq_unknown_value(&p.keys[k].1))
                    .product()
            };
            let (probe_startup, probe_total) =
                index_scan_cost(tuples, pages, sel, access.keys.len(), filter_terms, p.loops);
            let probe_rows = (tuples * sel * filter_sel).max(1.0);
            let filter_pairs = outer_rows * probe_rows;
            let residual = p.residual + conds.len() - used.len();
            let indexed = residual == 0 && filter.is_none();
            let (probes, pairs) = probe_work(p, outer_rows, probe_rows, indexed);
            let cost = disabled
                + probes * probe_total
                + filter_pairs * pairs * CPU_OPERATOR_COST * residual as f64
                + p.rows * CPU_TUPLE_COST;
            if best.as_ref().is_some_and(|b| b.cost <= cost) {
                continue;
            }
            best = Some(Probe {
                index: index.clone(),
                access,
                used,
                probe_est: Estimate {
                    startup_cost: probe_startup,
                    total_cost: probe_total,
                    rows: probe_rows.round(),
                    width: 0,
                },
                startup: disabled + probe_startup,
                cost,
            });
        }
        Ok(best)
    }

    /// How many index scans the probes' page reads are spread over, as
    /// PostgreSQL's `get_loop_count` counts them: the rows of the scans
    /// that supply the outer key values, when more than the outer side's
    /// rows (a join above those scans that drops rows leaves the probes
    /// the same pages to share, fewer of them each).
    fn loop_count(&self, j: &IndexJoin<'_>, outer_rows: f64) -> f64 {
        j.keys
            .iter()
            .filter_map(|(o, _)| match o {
                Expr::Column { index, .. } => j.outer.cols.iter().position(|c| c == index),
                _ => None,
            })
            .filter_map(|pos| scan_rows(&j.outer.plan, pos))
            .fold(outer_rows, f64::max)
    }

    /// Whether no two rows of `plan` agree on the values of its output
    /// columns `positions` (rows with NULLs aside): the rows are some of a
    /// table's, read by a scan and kept or dropped by filters and semi,
    /// anti or mark joins, and the columns hold the key columns of one of
    /// the table's unique indexes. A semi join whose inner side is unique
    /// on its keys is an inner join that outputs the other side's columns
    /// (each row matches at most one row), which can run from that side.
    pub(super) fn unique_on(&self, plan: &Plan, positions: &[usize]) -> bool {
        let child = |map: &dyn Fn(usize) -> Option<usize>| -> bool {
            let mapped: Option<Vec<usize>> = positions.iter().map(|&p| map(p)).collect();
            mapped.is_some_and(|m| self.unique_on(&plan.children[0], &m))
        };
        match &plan.kind {
            NodeKind::SeqScan {
                oid,
                columns,
                with_tid: false,
                ..
            }
            | NodeKind::IndexScan {
                oid,
                columns,
                with_tid: false,
                ..
            } => {
                let attnos: Vec<usize> = positions
                    .iter()
                    .filter_map(|&p| columns.get(p).copied())
                    .collect();
                self.catalog
                    .indexes_of(*oid)
                    .any(|i| i.unique() && i.columns.iter().all(|c| attnos.contains(&c.attno)))
            }
            NodeKind::Filter { .. } => self.unique_on(&plan.children[0], positions),
            NodeKind::Project { exprs } => child(&|p| match exprs.get(p) {
                Some(Expr::Column { index, .. }) => Some(*index),
                _ => None,
            }),
            NodeKind::HashJoin {
                kind, outer_out, ..
            }
            | NodeKind::MergeJoin {
                kind, outer_out, ..
            }
            | NodeKind::NestedLoop {
                kind, outer_out, ..
            }
            | NodeKind::IndexNestLoop {
                kind, outer_out, ..
            } if matches!(
                kind,
                JoinKind::Semi | JoinKind::Anti | JoinKind::Mark { .. }
            ) =>
            {
                child(&|p| outer_out.get(p).copied())
            }
            _ => false,
        }
    }

    /// The Nested Loop node over `j.outer` and an Index Scan as `probe`
    /// chose it (keys it does not use join the join filter); key `k`'s
    /// parameter is `base + k`.
    fn build_index_nest_loop(
        &self,
        j: &IndexJoin<'_>,
        base: usize,
        probe: &Probe,
        est: Estimate,
    ) -> Result<Phys> {
        let (index, access, used) = (&probe.index, &probe.access, &probe.used[..]);
        let NodeKind::SeqScan {
            table: table_name,
            table_types,
            columns,
            oid,
            alias,
            filter,
            ..
        } = &j.inner.plan.kind
        else {
            unreachable!("checked by cheapest_probe")
        };
        let table = self
            .catalog
            .table_by_oid(*oid)
            .expect("checked by cheapest_probe");
        let mut param_ids = Vec::new();
        let mut params = Vec::new();
        let mut shown_params = HashMap::new();
        for k in 0..j.keys.len() {
            if used.contains(&k) {
                let outer_value = self.remap(&j.keys[k].0, &j.outer.cols)?;
                shown_params.insert(
                    base + k,
                    crate::explain::deparse(&outer_value, &j.outer.plan.names),
                );
                params.push(outer_value);
                param_ids.push(base + k);
            }
        }
        let cond_names: Vec<String> = index
            .columns
            .iter()
            .map(|c| table.columns[c.attno].name.clone())
            .collect();
        let cond = crate::logical::and_all(access.shown.clone()).expect("a key condition");
        let index_cond = crate::explain::deparse_with_params(&cond, &cond_names, &shown_params);
        let scan = Plan::new(
            NodeKind::IndexScan {
                table: table_name.clone(),
                alias: alias.to_string(),
                oid: table.oid,
                index: index.name.clone(),
                index_oid: index.oid,
                table_types: table_types.clone(),
                columns: columns.clone(),
                with_tid: false,
                keys: access.keys.clone(),
                backward: false,
                index_cond,
                filter: filter.clone(),
                defs: std::sync::Arc::new((index.clone(), table.clone())),
                deform: Default::default(),
            },
            vec![],
            j.inner.plan.output.clone(),
            j.inner.plan.names.clone(),
            Estimate {
                width: j.inner.plan.est.width,
                ..probe.probe_est
            },
        );
        // Keys the index does not use are checked with the residual.
        let mut rest: Vec<Expr> = j.residual.to_vec();
        for (k, (o, i)) in j.keys.iter().enumerate() {
            if !used.contains(&k) {
                rest.push(Expr::Cmp {
                    op: CmpOp::Eq,
                    left: Box::new(o.clone()),
                    right: Box::new(i.clone()),
                });
            }
        }
        let both: Vec<ColumnId> = j.outer.cols.iter().chain(&j.inner.cols).copied().collect();
        let join_filter = super::cost::ordered_and(rest)
            .map(|f| self.remap(&f, &both))
            .transpose()?;
        let outer_out: Vec<usize> = if j.emit_outer {
            (0..j.outer.cols.len()).collect()
        } else {
            vec![]
        };
        let inner_out: Vec<usize> = if j.kind.emits_inner_columns() {
            (0..j.inner.cols.len()).collect()
        } else {
            vec![]
        };
        let mut cols: Vec<ColumnId> = outer_out.iter().map(|&i| j.outer.cols[i]).collect();
        cols.extend(inner_out.iter().map(|&i| j.inner.cols[i]));
        Ok(self.node(
            NodeKind::IndexNestLoop {
                kind: j.kind,
                join_filter,
                params,
                param_ids,
                outer_out,
                inner_out,
            },
            vec![j.outer.plan.clone(), scan],
            cols,
            est,
        ))
    }
}

/// How much of the inner side's work a join of `outer_rows` rows does, as
/// (full probes, fraction of the (outer, inner) pairs its join filter
/// tests), each probe returning `probe_rows` rows; `indexed`: every join
/// condition is an index condition and the inner scan has no filter.
///
/// Inner and left joins probe each outer row in full. A semi or anti join
/// is settled by a row's first match, as PostgreSQL's `final_cost_nestloop`
/// costs it: a row that matches reads on average `2 / (matches + 1)` of
/// its probe's rows, and a row that matches nothing reads its whole probe,
/// unless every condition is in the index (and the scan filters nothing),
/// when the descent finds no row and costs about one returned row's share.
fn probe_work(p: &ProbeSide<'_>, outer_rows: f64, probe_rows: f64, indexed: bool) -> (f64, f64) {
    let matched = match p.kind {
        JoinKind::Semi => p.rows.min(outer_rows),
        JoinKind::Anti => (outer_rows - p.rows).max(0.0),
        _ => return (outer_rows, 1.0),
    };
    let unmatched = outer_rows - matched;
    let scan_frac = (2.0 / (probe_rows.max(1.0) + 1.0)).min(1.0);
    let unmatched_frac = if indexed {
        1.0 / probe_rows.max(1.0)
    } else {
        1.0
    };
    let probes = matched * scan_frac + unmatched * unmatched_frac;
    (probes, probes / outer_rows.max(1.0))
}

/// The estimated rows of the scan that produces output column `pos` of
/// `plan`, followed through filters, projections of a plain column and
/// joins' outputs.
fn scan_rows(plan: &Plan, pos: usize) -> Option<f64> {
    match &plan.kind {
        NodeKind::SeqScan { .. } | NodeKind::IndexScan { .. } => Some(plan.est.rows),
        NodeKind::Filter { .. } => scan_rows(&plan.children[0], pos),
        NodeKind::Project { exprs } => match exprs.get(pos)? {
            Expr::Column { index, .. } => scan_rows(&plan.children[0], *index),
            _ => None,
        },
        NodeKind::HashJoin {
            outer_out,
            inner_out,
            ..
        }
        | NodeKind::MergeJoin {
            outer_out,
            inner_out,
            ..
        }
        | NodeKind::NestedLoop {
            outer_out,
            inner_out,
            ..
        }
        | NodeKind::IndexNestLoop {
            outer_out,
            inner_out,
            ..
        } => {
            if let Some(&p) = outer_out.get(pos) {
                return scan_rows(&plan.children[0], p);
            }
            let p = *inner_out.get(pos - outer_out.len())?;
            let inner = &plan.children[1];
            match inner.kind {
                // A hash join's inner side sits under its Hash node.
                NodeKind::Hash => scan_rows(&inner.children[0], p),
                _ => scan_rows(inner, p),
            }
        }
        _ => None,
    }
}
