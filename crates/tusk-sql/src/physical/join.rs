//! Joins: the order of each region of inner joins, and the operator for
//! every join.
//!
//! A *region* is a maximal tree of inner joins (cross joins included): its
//! leaves are planned on their own and its conditions pooled. Up to
//! [`DP_LIMIT`] leaves are ordered by dynamic programming over the subsets
//! of leaves (`join_order`), with the equalities pooled into equivalence
//! classes (`equivalence`). Larger regions are joined greedily, left-deep,
//! on the written conditions: start from the smallest leaf and add, at each
//! step, the leaf that an equality connects to what is joined so far and
//! that gives the fewest rows.
//!
//! Conditions are placed at the first join where all their columns are
//! present: equalities between the two sides become hash keys, the rest a
//! join filter. A join with hash keys is a Hash Join that builds the
//! smaller side (for outer joins the side to build decides between Left
//! and Right; semi and anti joins build the subquery, their right side,
//! unless its table would spill and the preserved left side is cheaper to
//! build: then they run as a Hash Right Semi / Right Anti Join, which
//! marks the build rows the probe side matches and emits the marked /
//! unmarked ones at the end; mark joins always build the subquery). A
//! join without keys is a Nested Loop with the smaller side as its
//! materialised inner input. Where an index of a side's table serves
//! the keys, an index nested loop probing that side (`index_join`) is
//! costed too, and replaces the hash join when it is cheaper.

use super::cost::{CPU_OPERATOR_COST, CPU_TUPLE_COST, DISABLE_COST, SEQ_PAGE_COST};
use super::{Phys, Planner, Result};
use crate::logical::{conjuncts, expr_columns, ColumnId, JoinKind, Logical};
use std::collections::HashSet;
use tusk_exec::expr::CmpOp;
use tusk_exec::{Estimate, Expr, NodeKind, Plan};
use tusk_storage::DataType;

/// Regions of up to this many leaves are ordered by dynamic programming.
pub const DP_LIMIT: usize = 10;

/// Bytes a row written to a partition file takes beyond its width (its
/// hash, length and NULL map), roughly.
const SPILLED_ROW_OVERHEAD: f64 = 24.0;

/// What decides whether a hash join spills and what spilling costs: the
/// bytes its table will take in the executor
/// (`tusk_exec::hashjoin::estimated_table_bytes`), the bytes both sides
/// write to partition files if it spills, and the bytes the table may
/// take before the join spills (`tusk_exec::hashjoin::build_budget`).
#[derive(Clone, Copy)]
pub(super) struct HashMemory {
    pub table: f64,
    pub spilled: f64,
    pub budget: f64,
}

impl HashMemory {
    /// For a table of `build` (rows, width, key types) probed by `probe`
    /// (rows, width) under a limit of `hash_mem` bytes.
    pub fn new(build: (f64, f64, &[DataType]), probe: (f64, f64), hash_mem: f64) -> HashMemory {
        let spilled = |(rows, width): (f64, f64)| rows * (width + SPILLED_ROW_OVERHEAD);
        let table = tusk_exec::hashjoin::estimated_table_bytes(build.0, build.1, build.2);
        HashMemory {
            table,
            spilled: spilled((build.0, build.1)) + spilled(probe),
            budget: tusk_exec::hashjoin::build_budget(hash_mem as usize, table) as f64,
        }
    }

    /// Nothing to spill (the probe half of a join's cost).
    pub const NONE: HashMemory = HashMemory {
        table: 0.0,
        spilled: 0.0,
        budget: 0.0,
    };
}

/// The types of a join's keys.
pub(super) fn key_types(keys: &[Expr]) -> Vec<DataType> {
    keys.iter().map(Expr::data_type).collect()
}

/// Whether two plan costs are equal within PostgreSQL's `STD_FUZZ_FACTOR`
/// (1%), the margin within which `add_path` lets startup cost decide.
fn fuzzily_equal(a: f64, b: f64) -> bool {
    a <= b * 1.01 && b <= a * 1.01
}

/// The cost of a hash join of `build` rows into a table probed by `probe`
/// rows on `keys` keys, producing `rows` rows (besides its inputs' costs);
/// when the table does not fit its budget (`memory`), both sides are
/// written to partition files and read back.
pub(super) fn hash_join_cost(
    build: f64,
    probe: f64,
    keys: usize,
    rows: f64,
    memory: HashMemory,
) -> f64 {
    let keys = keys.max(1) as f64;
    let spill = if memory.table > memory.budget {
        2.0 * SEQ_PAGE_COST * memory.spilled / 8192.0
    } else {
        0.0
    };
    build * (CPU_OPERATOR_COST * keys + 2.0 * CPU_TUPLE_COST)
        + probe * CPU_OPERATOR_COST * keys
        + rows * CPU_TUPLE_COST
        + spill
}

/// The cost of a nested loop over `outer` and `inner` rows, before its
/// output, as PostgreSQL's `initial_cost_nestloop` weighs its two paths:
/// the inner side scanned again for every outer row after the first, or
/// materialised once (two operator costs a row) and read back (one). So a
/// side of one row goes outside, where the inner side is scanned once;
/// otherwise the smaller side is the cheaper one to materialise. Each pair
/// is tested by the join filter.
fn nest_loop_cost(outer: &Estimate, inner: &Estimate) -> f64 {
    let rescans = (outer.rows - 1.0).max(0.0);
    let scanned_again = rescans * inner.total_cost;
    let materialised = (2.0 + rescans) * CPU_OPERATOR_COST * inner.rows;
    outer.total_cost
        + inner.total_cost
        + scanned_again.min(materialised)
        + outer.rows * inner.rows * CPU_OPERATOR_COST
}

impl Planner<'_> {
    /// Plans a region of inner joins rooted at `l`.
    pub(crate) fn inner_join_region(&mut self, l: &Logical) -> Result<Phys> {
        let mut leaves = Vec::new();
        let mut conds = Vec::new();
        collect_region(l, &mut leaves, &mut conds);
        let mut parts: Vec<Option<Phys>> = Vec::with_capacity(leaves.len());
        for leaf in &leaves {
            parts.push(Some(self.plan(leaf)?));
        }
        for i in 0..leaves.len() {
            if let Some(reduced) = self.reduce_grouped_leaf(i, &leaves, &parts, &conds) {
                parts[i] = Some(self.plan(&reduced)?);
            }
        }
        let above = self.needed_above(l);
        let (mut current, used) = if parts.len() <= DP_LIMIT {
            let leaf_conds = leaf_filter_conjuncts(&leaves);
            self.join_by_subsets(&mut parts, &conds, &leaf_conds, above.as_ref())?
        } else {
            self.join_greedily(&mut parts, &conds, above.as_ref())?
        };
        // Whatever is left (constant conditions, outer references) filters the top.
        let rest: Vec<Expr> = conds
            .into_iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(c, _)| c)
            .collect();
        if let Some(p) = crate::logical::and_all(rest) {
            current = self.filter(current, &p)?;
        }
        Ok(current)
    }

    /// Joins `parts` greedily, left-deep (see the module doc); returns the
    /// plan and which of `conds` it placed. With `above`, the columns read
    /// above the region, each join keeps only those and what the
    /// conditions not placed yet read (`narrow`).
    fn join_greedily(
        &mut self,
        parts: &mut [Option<Phys>],
        conds: &[Expr],
        above: Option<&HashSet<ColumnId>>,
    ) -> Result<(Phys, Vec<bool>)> {
        self.narrow_leaves(parts, conds, above);
        let mut used = vec![false; conds.len()];
        // Conditions over no column of any leaf (constants) stay for the top.
        let col_sets: Vec<HashSet<ColumnId>> = conds
            .iter()
            .map(|c| expr_columns(c).into_iter().collect())
            .collect();
        let start = (0..parts.len())
            .min_by(|&a, &b| {
                let ra = parts[a].as_ref().unwrap().plan.est.rows;
                let rb = parts[b].as_ref().unwrap().plan.est.rows;
                ra.total_cmp(&rb)
            })
            .unwrap_or(0);
        let mut current = parts[start].take().expect("a leaf");
        let mut remaining: Vec<usize> = (0..parts.len()).filter(|&i| i != start).collect();
        while !remaining.is_empty() {
            let have: HashSet<ColumnId> = current.cols.iter().copied().collect();
            // The rows of joining leaf `i` next, if an unused equality
            // connects it.
            let joined_rows = |i: usize| -> Option<f64> {
                let p = parts[i].as_ref().unwrap();
                let cols: HashSet<ColumnId> = p.cols.iter().copied().collect();
                let keys: Vec<(Expr, Expr)> = conds
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !used[*k])
                    .filter_map(|(_, c)| equi_sides(c, &have, &cols))
                    .collect();
                (!keys.is_empty()).then(|| {
                    self.join_rows(
                        JoinKind::Inner,
                        current.plan.est.rows,
                        p.plan.est.rows,
                        &keys,
                        &[],
                    )
                })
            };
            let scored: Vec<(usize, f64)> = remaining
                .iter()
                .filter_map(|&i| joined_rows(i).map(|r| (i, r)))
                .collect();
            let pick = if scored.is_empty() {
                *remaining
                    .iter()
                    .min_by(|&&a, &&b| {
                        let ra = parts[a].as_ref().unwrap().plan.est.rows;
                        let rb = parts[b].as_ref().unwrap().plan.est.rows;
                        ra.total_cmp(&rb)
                    })
                    .expect("remaining is not empty")
            } else {
                scored
                    .iter()
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .expect("not empty")
                    .0
            };
            remaining.retain(|&i| i != pick);
            let right = parts[pick].take().expect("not joined yet");
            let mut both: HashSet<ColumnId> = have.clone();
            both.extend(right.cols.iter().copied());
            let mut on = Vec::new();
            for (k, c) in conds.iter().enumerate() {
                if !used[k]
                    && !col_sets[k].is_empty()
                    && col_sets[k].iter().all(|x| both.contains(x))
                {
                    used[k] = true;
                    on.push(c.clone());
                }
            }
            current = self.join(JoinKind::Inner, current, right, on, None)?;
            if let Some(above) = above {
                let mut keep = above.clone();
                for (k, cols) in col_sets.iter().enumerate() {
                    if !used[k] {
                        keep.extend(cols.iter().copied());
                    }
                }
                current = self.narrow(current, &keep);
            }
        }
        Ok((current, used))
    }

    /// Narrows the leaves of a region with conditions `conds`, when
    /// `above` (the columns read above the region) is known, to those
    /// columns and what the conditions read: not what only a leaf's own
    /// filter read (`narrow`).
    pub(super) fn narrow_leaves(
        &self,
        parts: &mut [Option<Phys>],
        conds: &[Expr],
        above: Option<&HashSet<ColumnId>>,
    ) {
        let Some(above) = above else {
            return;
        };
        let mut keep = above.clone();
        keep.extend(conds.iter().flat_map(expr_columns));
        for part in parts {
            let p = part.take().expect("a leaf");
            *part = Some(self.narrow(p, &keep));
        }
    }

    /// One join of `left` and `right` on conjuncts `on`.
    pub(crate) fn join(
        &mut self,
        kind: JoinKind,
        left: Phys,
        right: Phys,
        on: Vec<Expr>,
        mark: Option<ColumnId>,
    ) -> Result<Phys> {
        let lcols: HashSet<ColumnId> = left.cols.iter().copied().collect();
        let rcols: HashSet<ColumnId> = right.cols.iter().copied().collect();
        let (mut lkeys, mut rkeys, mut residual) = (Vec::new(), Vec::new(), Vec::new());
        for c in on {
            match equi_sides(&c, &lcols, &rcols) {
                Some((l, r)) => {
                    lkeys.push(l);
                    rkeys.push(r);
                }
                None => residual.push(c),
            }
        }
        if !self.settings.enable_hashjoin
            && !self.settings.enable_mergejoin
            && self.settings.enable_nestloop
            && kind != JoinKind::Full
        {
            // Both key methods off: PostgreSQL's nested loop tests the
            // equalities as its join filter.
            let keys = lkeys
                .drain(..)
                .zip(rkeys.drain(..))
                .map(|(l, r)| Expr::Cmp {
                    op: CmpOp::Eq,
                    left: Box::new(l),
                    right: Box::new(r),
                });
            residual = keys.chain(residual).collect();
        }
        if kind == JoinKind::Full && lkeys.is_empty() {
            return Err(crate::error::SqlError::coded(
                crate::error::sqlstate::FEATURE_NOT_SUPPORTED,
                "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
            ));
        }
        // Index nested loops to weigh against the hash join: the right
        // side probed by the left's rows, and for an inner join the other
        // way round too.
        let index_loops = if lkeys.is_empty() {
            None
        } else {
            self.index_nest_loops(kind, &left, &right, &lkeys, &rkeys, &residual)?
        };
        // Which side is built (hashed / materialised). A hash join builds
        // the cheaper one (`hash_sides_cost`), where the kind allows a
        // choice. A nested
        // loop, as PostgreSQL's, runs only inner, left, semi, anti and mark
        // joins with the left side outer (a right join as a left join of
        // its sides swapped), and an inner join takes the cheaper of the
        // two orders (`nest_loop_cost`).
        let swap = if lkeys.is_empty() {
            match kind {
                JoinKind::Inner => {
                    nest_loop_cost(&right.plan.est, &left.plan.est)
                        < nest_loop_cost(&left.plan.est, &right.plan.est)
                }
                JoinKind::Right => true,
                _ => false,
            }
        } else {
            // Of two costs equal within 1% (the join's inputs included) the
            // one that starts sooner, building the side that costs less to
            // read, as PostgreSQL's add_path keeps the path with the better
            // startup cost of two whose totals it compares fuzzily
            // (`STD_FUZZ_FACTOR`; fuzzer seeds 20261305 and 20261403: a
            // scan with a correlated SubPlan is dear, so it is probed, and
            // runs first).
            // A semi or anti join builds its left (preserved) side as a
            // right semi / right anti join when the subquery's table would
            // spill and the left side is the cheaper one to build
            // (`subquery_table_spills`, `right_semi_anti_cost`).
            let build_left = self.hash_sides_cost((&left, &lkeys), (&right, &rkeys));
            let build_right = self.hash_sides_cost((&right, &rkeys), (&left, &lkeys));
            let inputs = left.plan.est.total_cost + right.plan.est.total_cost;
            let cheaper_left = if fuzzily_equal(inputs + build_left, inputs + build_right) {
                let (l, r) = (left.plan.est.total_cost, right.plan.est.total_cost);
                l < r || (l == r && build_left < build_right)
            } else {
                build_left < build_right
            };
            match kind {
                JoinKind::Inner | JoinKind::Full | JoinKind::Left | JoinKind::Right => cheaper_left,
                JoinKind::Semi | JoinKind::Anti => {
                    self.subquery_table_spills((&right, &rkeys), &left)
                        && self.right_semi_anti_cost(
                            &left,
                            &right,
                            &lkeys,
                            &rkeys,
                            !residual.is_empty(),
                        ) < build_right
                }
                _ => false,
            }
        };
        let (outer, inner, okeys, ikeys, kind) = match (kind, swap) {
            (JoinKind::Left, true) => (right, left, rkeys, lkeys, JoinKind::Right),
            (JoinKind::Right, true) => (right, left, rkeys, lkeys, JoinKind::Left),
            (JoinKind::Semi | JoinKind::Anti, true) if !lkeys.is_empty() => {
                let right_kind = kind.swapped_semi_or_anti().expect("semi or anti");
                (right, left, rkeys, lkeys, right_kind)
            }
            (_, true) => (right, left, rkeys, lkeys, kind),
            (_, false) => (left, right, lkeys, rkeys, kind),
        };
        let outer_out: Vec<usize> = if kind.emits_outer_columns() {
            (0..outer.cols.len()).collect()
        } else {
            vec![]
        };
        let inner_out: Vec<usize> = if kind.emits_inner_columns() {
            (0..inner.cols.len()).collect()
        } else {
            vec![]
        };
        let mut cols: Vec<ColumnId> = outer_out.iter().map(|&i| outer.cols[i]).collect();
        cols.extend(inner_out.iter().map(|&i| inner.cols[i]));
        if let JoinKind::Mark { .. } = kind {
            cols.push(mark.expect("a mark join has a mark column"));
        }
        let both: Vec<ColumnId> = outer.cols.iter().chain(&inner.cols).copied().collect();
        let residual_for_estimate = residual.clone();
        let join_filter = super::cost::ordered_and(residual)
            .map(|f| self.remap(&f, &both))
            .transpose()?;
        let (o, i) = (outer.plan.est, inner.plan.est);
        let key_pairs: Vec<(Expr, Expr)> =
            okeys.iter().cloned().zip(ikeys.iter().cloned()).collect();
        let rows = match kind.swapped_semi_or_anti() {
            // Estimated as the semi or anti join it is, sides as written.
            Some(written) if kind.is_right_semi_or_anti() => {
                let pairs: Vec<(Expr, Expr)> =
                    ikeys.iter().cloned().zip(okeys.iter().cloned()).collect();
                self.join_rows(written, i.rows, o.rows, &pairs, &residual_for_estimate)
            }
            _ => self.join_rows(kind, o.rows, i.rows, &key_pairs, &residual_for_estimate),
        };
        if let (JoinKind::Mark { .. }, Some(m), false) = (kind, mark, key_pairs.is_empty()) {
            // A filter on the mark keeps the rows a semi join would.
            let semi = self.join_rows(
                JoinKind::Semi,
                o.rows,
                i.rows,
                &key_pairs,
                &residual_for_estimate,
            );
            self.mark_fractions
                .insert(m, (semi / o.rows.max(1.0)).clamp(0.0, 1.0));
        }
        if okeys.is_empty() {
            let disabled = if self.settings.enable_nestloop {
                0.0
            } else {
                DISABLE_COST
            };
            let total = disabled + nest_loop_cost(&o, &i);
            return Ok(self.node(
                NodeKind::NestedLoop {
                    kind,
                    join_filter,
                    outer_out,
                    inner_out,
                },
                vec![outer.plan, inner.plan],
                cols,
                Estimate {
                    startup_cost: i.total_cost,
                    total_cost: total + rows * CPU_TUPLE_COST,
                    rows,
                    width: 0,
                },
            ));
        }
        let outer_keys = okeys
            .iter()
            .map(|k| self.remap(k, &outer.cols))
            .collect::<Result<Vec<_>>>()?;
        let inner_keys = ikeys
            .iter()
            .map(|k| self.remap(k, &inner.cols))
            .collect::<Result<Vec<_>>>()?;
        let hash_est = Estimate {
            startup_cost: i.total_cost,
            total_cost: i.total_cost,
            rows: i.rows,
            width: i.width,
        };
        let hash = Plan::new(
            NodeKind::Hash,
            vec![inner.plan.clone()],
            inner.plan.output.clone(),
            inner.plan.names.clone(),
            hash_est,
        );
        let spill = HashMemory::new(
            (i.rows, f64::from(i.width), &key_types(&inner_keys)),
            (o.rows, f64::from(o.width)),
            self.settings.hash_mem,
        );
        let disabled = if self.settings.enable_hashjoin {
            0.0
        } else {
            DISABLE_COST
        };
        let startup =
            disabled + i.total_cost + hash_join_cost(i.rows, 0.0, outer_keys.len(), 0.0, spill);
        let total = startup
            + o.total_cost
            + hash_join_cost(0.0, o.rows, outer_keys.len(), rows, HashMemory::NONE);
        // A right semi or anti join emits its rows once the probe side is done.
        let startup = if kind.is_right_semi_or_anti() {
            total
        } else {
            startup
        };
        if let Some(p) = index_loops.filter(|p| p.plan.est.total_cost < total) {
            return Ok(p);
        }
        let key_rows =
            o.rows.max(1.0) * i.rows.max(1.0) * self.keys_selectivity(&key_pairs, o.rows, i.rows);
        let bucket = self.hash_bucket_fraction(&ikeys, i.rows);
        let choice = super::merge_join::JoinChoice {
            kind,
            outer: &outer,
            inner: &inner,
            outer_keys: &outer_keys,
            inner_keys: &inner_keys,
            join_filter: join_filter.as_ref(),
            rows,
            bucket,
            key_rows,
            cols: &cols,
            outer_out: &outer_out,
            inner_out: &inner_out,
            swapped: swap,
        };
        if let Some(p) = self.merge_join_instead(&choice) {
            return Ok(p);
        }
        Ok(self.node(
            NodeKind::HashJoin {
                kind,
                outer_keys,
                inner_keys,
                outer_out,
                inner_out,
                join_filter,
                parallel: false,
            },
            vec![outer.plan, hash],
            cols,
            Estimate {
                startup_cost: startup,
                total_cost: total,
                rows,
                width: 0,
            },
        ))
    }
}

impl Planner<'_> {
    /// The cost of a hash join that builds `build` and probes it with
    /// `probe` (each a side and its keys) that depends on that choice: the
    /// build, the probe, and PostgreSQL's comparisons of each probe row
    /// with half its bucket (`final_cost_hashjoin`), so a key of few
    /// distinct values on the build side makes building it dearer.
    fn hash_sides_cost(&self, build: (&Phys, &[Expr]), probe: (&Phys, &[Expr])) -> f64 {
        let (b, p) = (&build.0.plan.est, &probe.0.plan.est);
        let memory = HashMemory::new(
            (b.rows, f64::from(b.width), &key_types(build.1)),
            (p.rows, f64::from(p.width)),
            self.settings.hash_mem,
        );
        hash_join_cost(b.rows, p.rows, build.1.len(), 0.0, memory)
            + self.bucket_cost(b.rows, p.rows, build.1)
    }

    /// Whether a hash table of `subquery` (a side and its keys), probed by
    /// `preserved`, would outgrow its memory and spill. Only then does a
    /// semi or anti join consider building the preserved side instead
    /// (`right_semi_anti_cost`): PostgreSQL 15 has no right semi or right
    /// anti join, and its Hash Semi / Anti Join reads a row of the
    /// preserved side, then the whole subquery, before the rest of the
    /// preserved side — an order that decides which of the two sides'
    /// errors (a division by zero in a filter, say) a query raises when
    /// the other side is empty. A join whose subquery fits keeps that
    /// order; one whose subquery spills gains most from the other.
    fn subquery_table_spills(&self, subquery: (&Phys, &[Expr]), preserved: &Phys) -> bool {
        let (s, p) = (&subquery.0.plan.est, &preserved.plan.est);
        let memory = HashMemory::new(
            (s.rows, f64::from(s.width), &key_types(subquery.1)),
            (p.rows, f64::from(p.width)),
            self.settings.hash_mem,
        );
        memory.table > memory.budget
    }

    /// The cost of a semi or anti join of `left` and `right` on keys
    /// `lkeys = rkeys` run as a right semi / right anti hash join: `left`
    /// built and probed by `right` (`hash_sides_cost`). A probe row cannot
    /// stop at its first match — it must mark every matching build row — so
    /// with a join filter (`filtered`) each probe row is tested against its
    /// whole bucket, not half of it: the bucket comparisons count twice.
    /// The semi or anti join as written costs `hash_sides_cost` with the
    /// sides the other way; the planner takes the cheaper of the two.
    fn right_semi_anti_cost(
        &self,
        left: &Phys,
        right: &Phys,
        lkeys: &[Expr],
        rkeys: &[Expr],
        filtered: bool,
    ) -> f64 {
        let whole_buckets = if filtered {
            self.bucket_cost(left.plan.est.rows, right.plan.est.rows, lkeys)
        } else {
            0.0
        };
        self.hash_sides_cost((left, lkeys), (right, rkeys)) + whole_buckets
    }

    /// The cheapest index nested loop for a join of `left` and `right` on
    /// keys `lkeys = rkeys` and `residual` (see `index_join`): the right
    /// side probed, or for an inner join either side.
    fn index_nest_loops(
        &mut self,
        kind: JoinKind,
        left: &Phys,
        right: &Phys,
        lkeys: &[Expr],
        rkeys: &[Expr],
        residual: &[Expr],
    ) -> Result<Option<Phys>> {
        // (outer, inner, outer keys, inner keys, the kind it runs as,
        // whether the outer columns are output)
        let mut sides = vec![(left, right, lkeys, rkeys, kind, true)];
        if kind == JoinKind::Inner {
            sides.push((right, left, rkeys, lkeys, kind, true));
        }
        if kind == JoinKind::Semi && self.unique_keys(right, rkeys) {
            // Each left row matches at most one right row: an inner join
            // from the right side, outputting the left's columns.
            sides.push((right, left, rkeys, lkeys, JoinKind::Inner, false));
        }
        let pairs: Vec<(Expr, Expr)> = lkeys.iter().cloned().zip(rkeys.iter().cloned()).collect();
        let rows = self.join_rows(
            kind,
            left.plan.est.rows,
            right.plan.est.rows,
            &pairs,
            residual,
        );
        let mut best: Option<Phys> = None;
        for (outer, inner, okeys, ikeys, run_as, emit_outer) in sides {
            let keys: Vec<(Expr, Expr)> =
                okeys.iter().cloned().zip(ikeys.iter().cloned()).collect();
            let j = super::index_join::IndexJoin {
                kind: run_as,
                outer,
                inner,
                keys: &keys,
                residual,
                rows,
                emit_outer,
            };
            if let Some(p) = self.index_nest_loop(&j)? {
                if best
                    .as_ref()
                    .is_none_or(|b| p.plan.est.total_cost < b.plan.est.total_cost)
                {
                    best = Some(p);
                }
            }
        }
        Ok(best)
    }
}

impl Planner<'_> {
    /// Whether `side`'s rows are unique on `keys`, each a plain column of
    /// it (see `index_join::unique_on`).
    fn unique_keys(&self, side: &Phys, keys: &[Expr]) -> bool {
        let positions: Option<Vec<usize>> = keys
            .iter()
            .map(|k| match k {
                Expr::Column { index, .. } => side.cols.iter().position(|c| c == index),
                _ => None,
            })
            .collect();
        positions.is_some_and(|p| self.unique_on(&side.plan, &p))
    }
}

fn is_inner_join(l: &Logical) -> bool {
    matches!(
        l,
        Logical::Join {
            kind: JoinKind::Inner,
            ..
        }
    )
}

/// The leaves and pooled conditions of the inner-join region at `l`.
pub(crate) fn collect_region<'l>(
    l: &'l Logical,
    leaves: &mut Vec<&'l Logical>,
    conds: &mut Vec<Expr>,
) {
    match l {
        Logical::Join {
            kind: JoinKind::Inner,
            left,
            right,
            on,
            ..
        } => {
            collect_region(left, leaves, conds);
            collect_region(right, leaves, conds);
            for c in on {
                conjuncts(c.clone(), conds);
            }
        }
        Logical::Filter { input, predicate } if is_inner_join(input) => {
            collect_region(input, leaves, conds);
            conjuncts(predicate.clone(), conds);
        }
        other => leaves.push(other),
    }
}

/// The conjuncts of the filters that top the leaves of a region (where
/// push-down put each leaf's own conditions).
fn leaf_filter_conjuncts(leaves: &[&Logical]) -> Vec<Expr> {
    let mut out = Vec::new();
    for leaf in leaves {
        if let Logical::Filter { predicate, .. } = leaf {
            conjuncts(predicate.clone(), &mut out);
        }
    }
    out
}

/// For an equality whose sides read only `l` columns and only `r` columns
/// (in either order), the (left key, right key) pair.
fn equi_sides(c: &Expr, l: &HashSet<ColumnId>, r: &HashSet<ColumnId>) -> Option<(Expr, Expr)> {
    let (left, right) = crate::logical::exprs::equality_sides(c)?;
    let a = expr_columns(left);
    let b = expr_columns(right);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let within = |cols: &[ColumnId], set: &HashSet<ColumnId>| cols.iter().all(|x| set.contains(x));
    if within(&a, l) && within(&b, r) {
        Some((left.clone(), right.clone()))
    } else if within(&a, r) && within(&b, l) {
        Some((right.clone(), left.clone()))
    } else {
        None
    }
}

/// For an equality whose sides each read the columns of one leaf, the two
/// leaves and the two sides.
pub(super) fn equality_leaves(
    c: &Expr,
    leaf_of: &std::collections::HashMap<ColumnId, usize>,
) -> Option<(usize, usize, Expr, Expr)> {
    let (left, right) = crate::logical::exprs::equality_sides(c)?;
    let side = |e: &Expr| -> Option<usize> {
        let cols = expr_columns(e);
        let first = *leaf_of.get(cols.first()?)?;
        cols.iter()
            .all(|x| leaf_of.get(x) == Some(&first))
            .then_some(first)
    };
    Some((side(left)?, side(right)?, left.clone(), right.clone()))
}

/// A semi or anti join whose condition reads, of its left side, only the
/// columns of one leaf of an inner-join region can be joined to that leaf
/// before the region's joins: `(A ⋈ B) ⋉ S = (A ⋉ S) ⋈ B` when the
/// condition reads only `A` (and likewise for `▷`), so the rows that find
/// no match (or a match) never reach the other joins, as PostgreSQL's join
/// search places semi joins. Returns, if so, the region with that leaf
/// replaced by the join of the given kind.
pub(crate) fn push_into_region<'l>(
    left: &'l Logical,
    right: &'l Logical,
    on: &'l [Expr],
) -> Option<impl FnOnce(JoinKind) -> Logical + 'l> {
    let is_region = match left {
        Logical::Filter { input, .. } => is_inner_join(input),
        l => is_inner_join(l),
    };
    if !is_region {
        return None;
    }
    let inner: HashSet<ColumnId> = right.output().into_iter().collect();
    let needed: HashSet<ColumnId> = on
        .iter()
        .flat_map(expr_columns)
        .filter(|c| !inner.contains(c))
        .collect();
    if needed.is_empty() {
        return None;
    }
    let mut leaves = Vec::new();
    let mut conds = Vec::new();
    collect_region(left, &mut leaves, &mut conds);
    let target = leaves.iter().position(|leaf| {
        let cols: HashSet<ColumnId> = leaf.output().into_iter().collect();
        needed.iter().all(|c| cols.contains(c))
    })?;
    let target: *const Logical = leaves[target];
    Some(move |kind: JoinKind| {
        replace_leaf(left, target, &|leaf: &Logical| Logical::Join {
            kind,
            left: Box::new(leaf.clone()),
            right: Box::new(right.clone()),
            on: on.to_vec(),
            mark: None,
        })
    })
}

/// A copy of region `l` with the leaf at address `target` replaced by
/// `with(leaf)` (the region's structure as [`collect_region`] walks it).
fn replace_leaf(
    l: &Logical,
    target: *const Logical,
    with: &dyn Fn(&Logical) -> Logical,
) -> Logical {
    if std::ptr::eq(l, target) {
        return with(l);
    }
    match l {
        Logical::Join {
            kind: JoinKind::Inner,
            left,
            right,
            on,
            mark,
        } => Logical::Join {
            kind: JoinKind::Inner,
            left: Box::new(replace_leaf(left, target, with)),
            right: Box::new(replace_leaf(right, target, with)),
            on: on.clone(),
            mark: *mark,
        },
        Logical::Filter { input, predicate } if is_inner_join(input) => Logical::Filter {
            input: Box::new(replace_leaf(input, target, with)),
            predicate: predicate.clone(),
        },
        other => other.clone(),
    }
}
