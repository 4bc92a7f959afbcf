//! Physical planning: from the logical plan to what tusk-exec runs.
//!
//! The planner walks the logical tree and chooses an operator for each
//! node: sequential or index scans with the filters above them pushed in,
//! hash joins where the condition has equality keys — or index nested
//! loops where an index of the inner table serves the keys and costs less
//! (`index_join`) — and nested loops where it has none, the join order of each region of inner joins (`join`),
//! hash aggregation, sorts (a top-N sort under a LIMIT), and parallel
//! plans under a Gather where the inputs are big enough (`parallel`).
//!
//! Each planned subtree is a [`Phys`]: an executor [`Plan`] plus the
//! [`ColumnId`] of each of its output positions. Expressions are remapped
//! from column ids to positions as they are placed; a column that the
//! subtree does not produce is an outer reference of a SubPlan and becomes
//! an `Expr::Param`, which the executor replaces by the outer row's value.

mod columnar;
mod equivalence;
mod estimate;
mod index_join;
mod join;
mod join_order;
mod key_filter;
mod merge_join;
mod narrow;
mod numbering;
mod onetime;
mod parallel;
mod reduce;
mod scan;

pub mod cost;

use crate::error::{sqlstate, SqlError};
use crate::logical::{
    ColumnId, Columns, CteDef, JoinKind, Logical, SetOpKind, SubqueryKind, TableFunction,
};
use cost::{flat, width_of, CPU_OPERATOR_COST, CPU_TUPLE_COST};
use std::collections::HashMap;
use std::sync::Arc;
use tusk_exec::plan::{
    AggCall, AggMode, SetOpCmd, SortKey, Statement, SubPlanKind, SubPlanSpec, WindowCallSpec,
};
use tusk_exec::{Estimate, Expr, NodeKind, Plan};
use tusk_storage::{DataType, Database};

pub(crate) type Result<T> = std::result::Result<T, SqlError>;

/// First `Expr::Param` index used for a SubPlan's outer references
/// (indexes below it are the statement's `$n` parameters).
pub const SUBPLAN_PARAM_BASE: usize = 1 << 16;

/// The planner's switches (GUCs).
#[derive(Debug, Clone)]
pub struct PlannerSettings {
    pub enable_indexscan: bool,
    pub enable_seqscan: bool,
    /// `enable_hashjoin` and `enable_nestloop`: when off, the planner
    /// avoids the method unless nothing else can run the join.
    pub enable_hashjoin: bool,
    pub enable_nestloop: bool,
    /// `enable_mergejoin`: as `enable_hashjoin`, for merge joins.
    pub enable_mergejoin: bool,
    /// The fraction of the rows the statement is expected to fetch
    /// (PostgreSQL's `tuple_fraction`): 1 for a query, `cursor_tuple_fraction`
    /// (0.1) for a cursor's, which favours plans that start fast where the
    /// join method is chosen (`merge_join`).
    pub tuple_fraction: f64,
    /// Worker threads per Gather (0: no parallel plans).
    pub workers: usize,
    /// Estimated rows of the biggest scan below which no Gather is used.
    pub min_parallel_rows: f64,
    /// Bytes a hash table may hold (`work_mem × hash_mem_multiplier`):
    /// a hash join whose build side is larger is costed as spilling.
    pub hash_mem: f64,
}

impl Default for PlannerSettings {
    fn default() -> Self {
        PlannerSettings {
            enable_indexscan: true,
            enable_seqscan: true,
            enable_hashjoin: true,
            enable_nestloop: true,
            enable_mergejoin: true,
            tuple_fraction: 1.0,
            workers: 2,
            min_parallel_rows: cost::MIN_PARALLEL_ROWS,
            hash_mem: 8.0 * 1024.0 * 1024.0,
        }
    }
}

/// A planned subtree and the column at each output position.
#[derive(Debug, Clone)]
pub struct Phys {
    pub plan: Plan,
    pub cols: Vec<ColumnId>,
}

pub struct Planner<'a> {
    pub(crate) db: &'a Database,
    /// The catalog the statement was bound against (a transaction's view:
    /// its own indexes count).
    pub(crate) catalog: Arc<tusk_storage::Catalog>,
    pub(crate) cols: &'a Columns,
    ctes: &'a [CteDef],
    cte_refs: &'a [usize],
    pub(crate) settings: PlannerSettings,
    /// Outer references of the SubPlans being planned, innermost last.
    params: Vec<HashMap<ColumnId, usize>>,
    /// Columns some expression reads: what scans must produce.
    pub(crate) used: std::collections::HashSet<ColumnId>,
    /// The statement's tree and output columns, once `plan_statement`
    /// starts: what joins are narrowed against (`narrow`).
    root: Option<(&'a Logical, &'a [ColumnId])>,
    next_param: usize,
    next_subplan: usize,
    /// The InitPlans planned so far: number and value column (see
    /// `numbering`).
    init_plans: Vec<(usize, ColumnId)>,
    cte_plans: Vec<Option<Plan>>,
    /// EXPLAIN qualifies column names only when the statement reads more
    /// than one relation, as PostgreSQL does.
    qualify: bool,
    /// The table attribute each column comes from (see `estimate`).
    pub(crate) origins: HashMap<ColumnId, estimate::Origin>,
    ctes_walked: std::collections::HashSet<usize>,
    /// The fraction of rows whose mark is true, for each mark join's mark
    /// column planned so far (what a filter on the mark keeps).
    pub(crate) mark_fractions: HashMap<ColumnId, f64>,
    /// (pages, tuples) of each table planned so far.
    table_sizes: std::cell::RefCell<HashMap<u32, (f64, f64)>>,
}

impl<'a> Planner<'a> {
    pub fn new(
        db: &'a Database,
        cols: &'a Columns,
        ctes: &'a [CteDef],
        cte_refs: &'a [usize],
        settings: PlannerSettings,
        used: std::collections::HashSet<ColumnId>,
    ) -> Planner<'a> {
        Planner {
            db,
            catalog: db.catalog_snapshot(),
            cols,
            ctes,
            cte_refs,
            settings,
            params: Vec::new(),
            used,
            root: None,
            next_param: SUBPLAN_PARAM_BASE,
            next_subplan: 1,
            init_plans: Vec::new(),
            cte_plans: vec![None; ctes.len()],
            qualify: cols.qualifiers() > 1,
            origins: HashMap::new(),
            ctes_walked: Default::default(),
            table_sizes: Default::default(),
            mark_fractions: HashMap::new(),
        }
    }

    /// Plans against `catalog` (a transaction's view) rather than the
    /// committed catalog.
    pub fn with_catalog(mut self, catalog: Arc<tusk_storage::Catalog>) -> Planner<'a> {
        self.catalog = catalog;
        self
    }

    /// Plans a statement's query whose output columns are `out`, in order.
    pub fn plan_statement(&mut self, l: &'a Logical, out: &'a [ColumnId]) -> Result<Statement> {
        self.root = Some((l, out));
        self.collect_origins(l);
        let p = self.plan(l)?;
        let p = self.project_to(p, out)?;
        let root = self.parallelize(p.plan);
        let ctes = self
            .cte_plans
            .drain(..)
            .map(|p| {
                p.unwrap_or_else(|| {
                    Plan::new(
                        NodeKind::Values { rows: vec![] },
                        vec![],
                        vec![],
                        vec![],
                        Estimate::default(),
                    )
                })
            })
            .collect();
        let mut stmt = Statement { root, ctes };
        key_filter::add_key_filters(&mut stmt.root);
        stmt.ctes.iter_mut().for_each(key_filter::add_key_filters);
        numbering::renumber_init_plans(&mut stmt, &self.init_plans);
        stmt.assign_ids();
        Ok(stmt)
    }

    /// The next SubPlan and parameter numbers, to give back what a plan
    /// made only for its estimate took ([`Planner::restore_numbering`]).
    pub(crate) fn numbering(&self) -> (usize, usize) {
        (self.next_subplan, self.next_param)
    }

    pub(crate) fn restore_numbering(&mut self, (subplan, param): (usize, usize)) {
        self.next_subplan = subplan;
        self.next_param = param;
        self.init_plans.retain(|(n, _)| *n < subplan);
    }

    /// A node over `children` producing columns `cols`.
    pub(crate) fn node(
        &self,
        kind: NodeKind,
        children: Vec<Plan>,
        cols: Vec<ColumnId>,
        est: Estimate,
    ) -> Phys {
        let types: Vec<DataType> = cols.iter().map(|&c| self.cols.ty(c)).collect();
        let names: Vec<String> = cols.iter().map(|&c| self.display(c)).collect();
        let mut est = est;
        est.width = width_of(&types);
        Phys {
            plan: Plan::new(kind, children, types, names, est),
            cols,
        }
    }

    /// A column's name as EXPLAIN prints it.
    pub(crate) fn display(&self, c: ColumnId) -> String {
        if self.qualify {
            self.cols.display(c)
        } else {
            crate::names::quote_ident(&self.cols.get(c).name)
        }
    }

    /// `e` with column ids replaced by positions in `layout` (outer
    /// references of a SubPlan by their parameters).
    pub(crate) fn remap(&self, e: &Expr, layout: &[ColumnId]) -> Result<Expr> {
        let pos: HashMap<ColumnId, usize> = layout
            .iter()
            .enumerate()
            .rev()
            .map(|(i, &c)| (c, i))
            .collect();
        self.remap_with(e, &pos)
    }

    fn remap_with(&self, e: &Expr, pos: &HashMap<ColumnId, usize>) -> Result<Expr> {
        let mut failure = None;
        let out = crate::logical::exprs::transform_up(e.clone(), &mut |n| match n {
            Expr::Column { index, ty } => match pos.get(&index) {
                Some(&p) => Expr::Column { index: p, ty },
                None => match self.params.iter().rev().find_map(|m| m.get(&index)) {
                    Some(&k) => Expr::Param { index: k, ty },
                    None => {
                        failure = Some(SqlError::coded(
                            sqlstate::INTERNAL_ERROR,
                            format!(
                                "internal error: column {} is not available here",
                                self.cols.display(index)
                            ),
                        ));
                        Expr::Column { index, ty }
                    }
                },
            },
            other => other,
        });
        match failure {
            Some(f) => Err(f),
            None => Ok(out),
        }
    }

    /// Whether every column `e` reads is in `layout` or an outer
    /// reference of the SubPlan being planned.
    fn available(&self, e: &Expr, layout: &[ColumnId]) -> bool {
        let mut reads = Vec::new();
        e.columns(&mut reads);
        reads
            .iter()
            .all(|c| layout.contains(c) || self.params.iter().any(|m| m.contains_key(c)))
    }

    /// `p` projected to exactly `out` (a Project node unless it already is).
    pub(crate) fn project_to(&self, p: Phys, out: &[ColumnId]) -> Result<Phys> {
        if p.cols == out {
            return Ok(p);
        }
        let exprs = out
            .iter()
            .map(|&c| self.remap(&self.cols.expr(c), &p.cols))
            .collect::<Result<Vec<_>>>()?;
        let est = p.plan.est;
        Ok(self.node(NodeKind::Project { exprs }, vec![p.plan], out.to_vec(), est))
    }

    /// Plans a logical subtree.
    pub fn plan(&mut self, l: &Logical) -> Result<Phys> {
        match l {
            Logical::Get { .. } | Logical::TableFunc { .. } => self.scan(l, Vec::new()),
            Logical::Filter { input, predicate } => {
                if matches!(
                    input.as_ref(),
                    Logical::Get { .. } | Logical::TableFunc { .. }
                ) {
                    let mut cs = Vec::new();
                    crate::logical::conjuncts(predicate.clone(), &mut cs);
                    return self.scan(input, cs);
                }
                let above = matches!(input.as_ref(), Logical::Apply { .. })
                    .then(|| self.needed_above(l))
                    .flatten();
                let child = self.plan(input)?;
                let mut filtered = self.filter(child, predicate)?;
                if let Some(above) = above {
                    mark_subplans_read_above(&mut filtered, &above);
                }
                Ok(filtered)
            }
            Logical::Values { rows, cols } => {
                let rows = rows
                    .iter()
                    .map(|r| r.iter().map(|e| self.remap(e, &[])).collect())
                    .collect::<Result<Vec<Vec<Expr>>>>()?;
                let n = rows.len() as f64;
                Ok(self.node(
                    NodeKind::Values { rows },
                    vec![],
                    cols.clone(),
                    Estimate {
                        startup_cost: 0.0,
                        total_cost: n * CPU_OPERATOR_COST,
                        rows: n,
                        width: 0,
                    },
                ))
            }
            Logical::OneTimeFilter {
                input,
                init,
                predicate,
            } => self.one_time_filter(input, init, predicate),
            Logical::Project { input, exprs } => {
                let child = self.plan(input)?;
                // Columns nobody reads are not computed (and what they
                // read is not scanned: see `logical::reads`). An output
                // whose id something reads, but whose expression reads a
                // column a narrowed join below no longer carries, is read
                // by nothing above (`narrow` kept what is): the same id
                // passed through, read again only inside the join.
                let exprs: Vec<&(ColumnId, Expr)> = exprs
                    .iter()
                    .filter(|(c, e)| self.used.contains(c) && self.available(e, &child.cols))
                    .collect();
                let out: Vec<ColumnId> = exprs.iter().map(|(c, _)| *c).collect();
                // A projection that only selects columns the child has is
                // cheaper as a Project of column references; either way it
                // is one node.
                let es = exprs
                    .iter()
                    .map(|(_, e)| self.remap(e, &child.cols))
                    .collect::<Result<Vec<_>>>()?;
                if es
                    .iter()
                    .enumerate()
                    .all(|(i, e)| matches!(e, Expr::Column { index, .. } if *index == i))
                    && es.len() == child.cols.len()
                {
                    return Ok(Phys {
                        cols: out,
                        plan: child.plan,
                    });
                }
                let est = child.plan.est;
                Ok(self.node(NodeKind::Project { exprs: es }, vec![child.plan], out, est))
            }
            Logical::Join {
                kind: JoinKind::Inner,
                ..
            } => self.inner_join_region(l),
            Logical::Join {
                kind,
                left,
                right,
                on,
                mark,
            } => {
                let above = self.needed_above(l);
                let joined = self.outer_join(*kind, left, right, on, *mark, above.as_ref())?;
                Ok(match above {
                    Some(keep) => self.narrow(joined, &keep),
                    None => joined,
                })
            }
            Logical::DependentJoin {
                kind,
                left,
                right,
                on,
            } => self.dependent_join(*kind, left, right, on),
            Logical::Apply {
                input,
                subquery,
                kind,
                out,
            } => self.apply(input, subquery, kind, *out),
            Logical::Aggregate { input, group, aggs } => self.aggregate(input, group, aggs),
            Logical::Window { input, calls } => self.window(input, calls),
            Logical::Distinct { input, on } => self.distinct(input, on.as_deref()),
            Logical::SetOp {
                op,
                all,
                left,
                right,
                out,
            } => self.set_op(*op, *all, left, right, out),
            Logical::Sort { input, keys } => self.sort(input, keys, None),
            Logical::Limit {
                input,
                limit,
                offset,
            } => {
                let child = match (input.as_ref(), limit) {
                    (Logical::Sort { input: si, keys }, Some(n)) => {
                        self.sort(si, keys, Some(n.saturating_add(*offset)))?
                    }
                    _ => self.plan(input)?,
                };
                let mut est = child.plan.est;
                if let Some(n) = limit {
                    est.rows = est.rows.min(*n as f64).max(1.0);
                }
                let cols = child.cols.clone();
                Ok(self.node(
                    NodeKind::Limit {
                        limit: *limit,
                        offset: *offset,
                    },
                    vec![child.plan],
                    cols,
                    est,
                ))
            }
            Logical::CteRef { id, cols } => self.cte_ref(*id, cols),
            Logical::RecursiveUnion {
                seed,
                step,
                distinct,
                work_table,
                out,
            } => {
                let s = self.plan(seed)?;
                let s = self.relabel(s, out)?;
                let t = self.plan(step)?;
                let t = self.relabel(t, out)?;
                let est = flat(s.plan.est.rows * 10.0, s.plan.est.total_cost * 10.0, 0);
                Ok(self.node(
                    NodeKind::RecursiveUnion {
                        distinct: *distinct,
                        work_table: *work_table,
                    },
                    vec![s.plan, t.plan],
                    out.clone(),
                    est,
                ))
            }
            Logical::WorkTable { id, cols } => Ok(self.node(
                NodeKind::WorkTableScan {
                    work_table: *id,
                    alias: self.cols.get(cols[0]).qualifier.clone().unwrap_or_default(),
                },
                vec![],
                cols.clone(),
                flat(100.0, 100.0 * CPU_TUPLE_COST, 0),
            )),
        }
    }

    /// A join other than an inner join (those are planned by regions,
    /// `join`): semi and anti joins pushed into the region on their left
    /// where that is cheaper, the right side of a left join reduced to the
    /// keys its left side asks for (`reduce`). With `above`, the columns
    /// read above the join, its inputs are narrowed to those and what its
    /// condition reads (`narrow`).
    fn outer_join(
        &mut self,
        kind: JoinKind,
        left: &Logical,
        right: &Logical,
        on: &[Expr],
        mark: Option<ColumnId>,
        above: Option<&std::collections::HashSet<ColumnId>>,
    ) -> Result<Phys> {
        let keep = above.map(|a| {
            let mut keep = a.clone();
            keep.extend(on.iter().flat_map(crate::logical::expr_columns));
            keep
        });
        let narrow = |p: &Self, side: Phys| match &keep {
            Some(k) => p.narrow(side, k),
            None => side,
        };
        if matches!(kind, JoinKind::Semi | JoinKind::Anti) {
            if let Some(push) = join::push_into_region(left, right, on) {
                return self.cheaper(&push(kind), |p| {
                    let lp = p.plan(left)?;
                    let lp = narrow(p, lp);
                    let rp = p.plan(right)?;
                    let rp = narrow(p, rp);
                    p.join(kind, lp, rp, on.to_vec(), mark)
                });
            }
        }
        let lp = self.plan(left)?;
        let mut rp = self.plan(right)?;
        if kind == JoinKind::Left {
            if let Some(r) = self.reduce_left_join_side(left, right, rp.plan.est.rows, on)? {
                rp = self.plan(&r)?;
            }
        }
        let (lp, rp) = (narrow(self, lp), narrow(self, rp));
        self.join(kind, lp, rp, on.to_vec(), mark)
    }

    /// The cheaper of two plans of one relation: `first` planned as a
    /// logical tree, and `second`'s. Each is numbered from the same SubPlan
    /// and parameter numbers; the one dropped gives its numbers back.
    fn cheaper(
        &mut self,
        first: &Logical,
        second: impl FnOnce(&mut Self) -> Result<Phys>,
    ) -> Result<Phys> {
        let start = self.numbering();
        let a = self.plan(first)?;
        let after_a = self.numbering();
        let init_plans_a = self.init_plans.clone();
        self.restore_numbering(start);
        let b = second(self)?;
        if a.plan.est.total_cost <= b.plan.est.total_cost {
            self.restore_numbering(after_a);
            self.init_plans = init_plans_a;
            Ok(a)
        } else {
            Ok(b)
        }
    }

    /// A subtree's columns renamed to `out` (positionally): its output
    /// order must match the logical node's column order.
    fn relabel(&self, p: Phys, out: &[ColumnId]) -> Result<Phys> {
        Ok(Phys {
            plan: p.plan,
            cols: out.to_vec(),
        })
    }

    pub(crate) fn filter(&mut self, child: Phys, predicate: &Expr) -> Result<Phys> {
        let ordered = cost::ordered_and(vec![predicate.clone()]).expect("a predicate");
        let p = self.remap(&ordered, &child.cols)?;
        let mut est = child.plan.est;
        est.rows = (est.rows * self.selectivity(predicate)).max(1.0).round();
        est.total_cost += child.plan.est.rows * CPU_OPERATOR_COST;
        let cols = child.cols.clone();
        Ok(self.node(
            NodeKind::Filter { predicate: p },
            vec![child.plan],
            cols,
            est,
        ))
    }

    /// A lateral join: a LateralLoop whose inner plan reads the left row's
    /// columns as parameters.
    fn dependent_join(
        &mut self,
        kind: JoinKind,
        left: &Logical,
        right: &Logical,
        on: &[Expr],
    ) -> Result<Phys> {
        let lp = self.plan(left)?;
        let free: Vec<ColumnId> = right
            .free_columns()
            .into_iter()
            .filter(|c| lp.cols.contains(c))
            .collect();
        let mut pmap = HashMap::new();
        let mut param_ids = Vec::new();
        for &c in &free {
            let k = self.next_param;
            self.next_param += 1;
            pmap.insert(c, k);
            param_ids.push(k);
        }
        self.params.push(pmap);
        let rp = self.plan(right);
        self.params.pop();
        let rp = rp?;
        let params = free
            .iter()
            .map(|&c| self.remap(&self.cols.expr(c), &lp.cols))
            .collect::<Result<Vec<_>>>()?;
        let mut cols = lp.cols.clone();
        cols.extend(rp.cols.iter().copied());
        let join_filter = match crate::logical::and_all(on.to_vec()) {
            Some(f) => Some(self.remap(&f, &cols)?),
            None => None,
        };
        let (l, r) = (lp.plan.est, rp.plan.est);
        let est = Estimate {
            startup_cost: l.startup_cost + r.startup_cost,
            total_cost: l.total_cost + l.rows * r.total_cost,
            rows: (l.rows * r.rows).max(1.0),
            width: l.width + r.width,
        };
        Ok(self.node(
            NodeKind::LateralLoop {
                kind,
                join_filter,
                params,
                param_ids,
            },
            vec![lp.plan, rp.plan],
            cols,
            est,
        ))
    }

    /// A subquery that stays correlated: a SubPlans node that computes the
    /// `out` column for each input row.
    fn apply(
        &mut self,
        input: &Logical,
        subquery: &Logical,
        kind: &SubqueryKind,
        out: ColumnId,
    ) -> Result<Phys> {
        // A subquery whose value nothing reads (constant folding decided
        // the expression without it) is never computed, as PostgreSQL
        // never plans it.
        if !self.used.contains(&out) {
            return self.plan(input);
        }
        // The subquery is planned before its input so that subqueries are
        // numbered top-down as PostgreSQL numbers them: the select list's
        // before the WHERE clause's.
        //
        // The subquery's outer references become parameters, and so do the
        // outer columns an ANY/ALL test compares with.
        let mut free = subquery.free_columns();
        if let SubqueryKind::Any { test }
        | SubqueryKind::All { test }
        | SubqueryKind::RowCompare { test } = kind
        {
            let inner = subquery.output();
            free.extend(
                crate::logical::expr_columns(test)
                    .into_iter()
                    .filter(|c| !inner.contains(c)),
            );
        }
        let mut pmap = HashMap::new();
        let mut params = Vec::new();
        for &c in &free {
            let k = self.next_param;
            self.next_param += 1;
            pmap.insert(c, k);
            params.push((c, k));
        }
        self.params.push(pmap);
        let sub = self.plan(subquery);
        let sub = match sub {
            Ok(s) => s,
            Err(e) => {
                self.params.pop();
                return Err(e);
            }
        };
        let spec_kind = match kind {
            SubqueryKind::Exists => Ok(SubPlanKind::Exists),
            SubqueryKind::Scalar => Ok(SubPlanKind::Scalar),
            SubqueryKind::Any { test } => self
                .remap(test, &sub.cols)
                .map(|t| SubPlanKind::Any { test: t }),
            SubqueryKind::All { test } => self
                .remap(test, &sub.cols)
                .map(|t| SubPlanKind::All { test: t }),
            SubqueryKind::RowCompare { test } => self
                .remap(test, &sub.cols)
                .map(|t| SubPlanKind::RowCompare { test: t }),
        };
        self.params.pop();
        let spec_kind = spec_kind?;
        let number = self.next_subplan;
        self.next_subplan += 1;
        if params.is_empty() && matches!(spec_kind, SubPlanKind::Exists | SubPlanKind::Scalar) {
            self.record_init_plan(number, out);
        }
        let child = self.plan(input)?;
        // The outer values, evaluated on the input row, feed the params.
        // The test of ANY/ALL reads outer columns as parameters too.
        let mut param_exprs = Vec::new();
        let mut param_ids = Vec::new();
        for (c, k) in &params {
            param_exprs.push(self.remap(&self.cols.expr(*c), &child.cols)?);
            param_ids.push(*k);
        }
        // A correlated subquery runs again for each input row: its cost
        // counts as PostgreSQL's `cost_subplan` counts it, per row, so that
        // the join search sees a relation with such a qual as as dear as
        // PostgreSQL does (and builds a hash table on the other side).
        let per_row = if params.is_empty() {
            0.0
        } else {
            cost::correlated_subplan_cost(&spec_kind, &sub.plan.est)
        };
        let spec = SubPlanSpec {
            plan: sub.plan,
            kind: spec_kind,
            params: param_exprs,
            param_ids,
            number,
            needed_above: true,
        };
        let mut cols = child.cols.clone();
        cols.push(out);
        let mut est = child.plan.est;
        est.total_cost += est.rows * per_row;
        Ok(self.node(
            NodeKind::SubPlans {
                subplans: vec![spec],
            },
            vec![child.plan],
            cols,
            est,
        ))
    }

    fn aggregate(
        &mut self,
        input: &Logical,
        group: &[(ColumnId, Expr)],
        aggs: &[(ColumnId, AggCall)],
    ) -> Result<Phys> {
        let child = self.plan(input)?;
        let g = group
            .iter()
            .map(|(_, e)| self.remap(e, &child.cols))
            .collect::<Result<Vec<_>>>()?;
        let a = aggs
            .iter()
            .map(|(_, call)| self.remap_agg(call, &child.cols))
            .collect::<Result<Vec<_>>>()?;
        let cols: Vec<ColumnId> = group
            .iter()
            .map(|(c, _)| *c)
            .chain(aggs.iter().map(|(c, _)| *c))
            .collect();
        let rows_in = child.plan.est.rows;
        let keys: Vec<Expr> = group.iter().map(|(_, e)| e.clone()).collect();
        let groups = self.num_groups(&keys, rows_in);
        if let Some(p) = self.parallel_aggregate(&child, &g, &a, &cols, groups)? {
            return Ok(p);
        }
        let total = child.plan.est.total_cost
            + rows_in * CPU_OPERATOR_COST * (a.len().max(1) + g.len()) as f64;
        let est = Estimate {
            startup_cost: total,
            total_cost: total + groups * CPU_TUPLE_COST,
            rows: groups.round(),
            width: 0,
        };
        Ok(self.node(
            NodeKind::Aggregate {
                group: g,
                aggs: a,
                mode: AggMode::Simple,
            },
            vec![child.plan],
            cols,
            est,
        ))
    }

    pub(crate) fn remap_agg(&self, call: &AggCall, layout: &[ColumnId]) -> Result<AggCall> {
        Ok(AggCall {
            func: call.func,
            args: call
                .args
                .iter()
                .map(|e| self.remap(e, layout))
                .collect::<Result<_>>()?,
            distinct: call.distinct,
            filter: call
                .filter
                .as_ref()
                .map(|f| self.remap(f, layout))
                .transpose()?,
            order_by: self.remap_keys(&call.order_by, layout)?,
            result: call.result,
        })
    }

    pub(crate) fn remap_keys(&self, keys: &[SortKey], layout: &[ColumnId]) -> Result<Vec<SortKey>> {
        keys.iter()
            .map(|k| {
                Ok(SortKey {
                    expr: self.remap(&k.expr, layout)?,
                    desc: k.desc,
                    nulls_first: k.nulls_first,
                })
            })
            .collect()
    }

    fn window(
        &mut self,
        input: &Logical,
        calls: &[(ColumnId, crate::logical::WindowCall)],
    ) -> Result<Phys> {
        let mut cur = self.plan(input)?;
        // Calls with the same PARTITION BY and ORDER BY share one sort.
        let mut groups: Vec<(Vec<Expr>, Vec<SortKey>, Vec<usize>)> = Vec::new();
        for (i, (_, c)) in calls.iter().enumerate() {
            match groups
                .iter_mut()
                .find(|(p, o, _)| *p == c.partition && *o == c.order)
            {
                Some(g) => g.2.push(i),
                None => groups.push((c.partition.clone(), c.order.clone(), vec![i])),
            }
        }
        for (partition, order, members) in groups {
            let mut keys: Vec<SortKey> = partition
                .iter()
                .map(|e| SortKey {
                    expr: e.clone(),
                    desc: false,
                    nulls_first: false,
                })
                .collect();
            keys.extend(order.iter().cloned());
            if !keys.is_empty() {
                let k = self.remap_keys(&keys, &cur.cols)?;
                let est = cur.plan.est;
                let cols = cur.cols.clone();
                cur = self.node(
                    NodeKind::Sort {
                        keys: k,
                        limit: None,
                    },
                    vec![cur.plan],
                    cols,
                    est,
                );
            }
            let p = partition
                .iter()
                .map(|e| self.remap(e, &cur.cols))
                .collect::<Result<Vec<_>>>()?;
            let o = self.remap_keys(&order, &cur.cols)?;
            let mut specs = Vec::new();
            let mut cols = cur.cols.clone();
            for &m in &members {
                let (id, c) = &calls[m];
                specs.push(WindowCallSpec {
                    func: c.call,
                    args: c
                        .args
                        .iter()
                        .map(|e| self.remap(e, &cur.cols))
                        .collect::<Result<_>>()?,
                    filter: match &c.filter {
                        Some(f) => Some(self.remap(f, &cur.cols)?),
                        None => None,
                    },
                    frame: c.frame.clone(),
                    result: c.result,
                });
                cols.push(*id);
            }
            let est = cur.plan.est;
            cur = self.node(
                NodeKind::WindowAgg {
                    partition: p,
                    order: o,
                    calls: specs,
                },
                vec![cur.plan],
                cols,
                est,
            );
        }
        Ok(cur)
    }

    fn distinct(&mut self, input: &Logical, on: Option<&[Expr]>) -> Result<Phys> {
        let child = self.plan(input)?;
        let out = input.output();
        let child = self.project_to(child, &out)?;
        match on {
            None => {
                let group = (0..out.len())
                    .map(|i| Expr::Column {
                        index: i,
                        ty: self.cols.ty(out[i]),
                    })
                    .collect();
                let mut est = child.plan.est;
                est.rows = (est.rows / 2.0).max(1.0).round();
                Ok(self.node(
                    NodeKind::Aggregate {
                        group,
                        aggs: vec![],
                        mode: AggMode::Simple,
                    },
                    vec![child.plan],
                    out,
                    est,
                ))
            }
            Some(keys) => {
                // The keys first, then the columns; Unique on the keys.
                let mut exprs = Vec::new();
                for k in keys {
                    exprs.push(self.remap(k, &child.cols)?);
                }
                let nkeys = exprs.len();
                for (i, &c) in out.iter().enumerate() {
                    exprs.push(Expr::Column {
                        index: i,
                        ty: self.cols.ty(c),
                    });
                }
                let mut cols: Vec<ColumnId> = keys
                    .iter()
                    .map(|k| match k {
                        Expr::Column { index, .. } => *index,
                        _ => usize::MAX,
                    })
                    .collect();
                cols.extend(&out);
                let est = child.plan.est;
                let keyed = Phys {
                    plan: Plan::new(
                        NodeKind::Project { exprs },
                        vec![child.plan],
                        cols.iter()
                            .enumerate()
                            .map(|(i, &c)| {
                                if c == usize::MAX {
                                    keys[i].data_type()
                                } else {
                                    self.cols.ty(c)
                                }
                            })
                            .collect::<Vec<_>>(),
                        cols.iter()
                            .map(|&c| {
                                if c == usize::MAX {
                                    "?column?".into()
                                } else {
                                    self.cols.display(c)
                                }
                            })
                            .collect::<Vec<String>>(),
                        est,
                    ),
                    cols: cols.clone(),
                };
                let types = keyed.plan.output.clone();
                let names = keyed.plan.names.clone();
                let uniq = Plan::new(
                    NodeKind::Unique { keys: nkeys },
                    vec![keyed.plan],
                    types,
                    names,
                    est,
                );
                let back: Vec<Expr> = (0..out.len())
                    .map(|i| Expr::Column {
                        index: nkeys + i,
                        ty: self.cols.ty(out[i]),
                    })
                    .collect();
                Ok(self.node(NodeKind::Project { exprs: back }, vec![uniq], out, est))
            }
        }
    }

    fn set_op(
        &mut self,
        op: SetOpKind,
        all: bool,
        left: &Logical,
        right: &Logical,
        out: &[ColumnId],
    ) -> Result<Phys> {
        let l = self.plan(left)?;
        let l = self.project_to(l, &left.output())?;
        let r = self.plan(right)?;
        let r = self.project_to(r, &right.output())?;
        let (l, r) = (self.relabel(l, out)?, self.relabel(r, out)?);
        let rows = l.plan.est.rows + r.plan.est.rows;
        let est = flat(rows, l.plan.est.total_cost + r.plan.est.total_cost, 0);
        match op {
            SetOpKind::Union => {
                let append = self.node(NodeKind::Append, vec![l.plan, r.plan], out.to_vec(), est);
                if all {
                    return Ok(append);
                }
                let group = (0..out.len())
                    .map(|i| Expr::Column {
                        index: i,
                        ty: self.cols.ty(out[i]),
                    })
                    .collect();
                Ok(self.node(
                    NodeKind::Aggregate {
                        group,
                        aggs: vec![],
                        mode: AggMode::Simple,
                    },
                    vec![append.plan],
                    out.to_vec(),
                    est,
                ))
            }
            SetOpKind::Intersect | SetOpKind::Except => Ok(self.node(
                NodeKind::SetOp {
                    op: if op == SetOpKind::Intersect {
                        SetOpCmd::Intersect
                    } else {
                        SetOpCmd::Except
                    },
                    all,
                },
                vec![l.plan, r.plan],
                out.to_vec(),
                est,
            )),
        }
    }

    fn sort(&mut self, input: &Logical, keys: &[SortKey], limit: Option<u64>) -> Result<Phys> {
        let child = self.plan(input)?;
        let k = self.remap_keys(keys, &child.cols)?;
        let n = child.plan.est.rows.max(2.0);
        let c = child.plan.est.total_cost + 2.0 * CPU_OPERATOR_COST * n * n.log2();
        let est = Estimate {
            startup_cost: c,
            total_cost: c + n * CPU_OPERATOR_COST,
            rows: child.plan.est.rows,
            width: 0,
        };
        let cols = child.cols.clone();
        Ok(self.node(
            NodeKind::Sort { keys: k, limit },
            vec![child.plan],
            cols,
            est,
        ))
    }

    fn cte_ref(&mut self, id: usize, cols: &[ColumnId]) -> Result<Phys> {
        let cte = &self.ctes[id];
        let inline = self.cte_refs[id] <= 1 && !cte.materialize && !cte.recursive;
        if inline {
            let p = self.plan(&cte.plan)?;
            let p = self.project_to(p, &cte.cols)?;
            return self.relabel(p, cols);
        }
        if self.cte_plans[id].is_none() {
            let p = self.plan(&cte.plan)?;
            let p = self.project_to(p, &cte.cols)?;
            self.cte_plans[id] = Some(p.plan);
        }
        let est = self.cte_plans[id].as_ref().unwrap().est;
        Ok(self.node(
            NodeKind::CteScan {
                cte: id,
                name: cte.name.clone(),
                alias: self
                    .cols
                    .get(cols[0])
                    .qualifier
                    .clone()
                    .unwrap_or_else(|| cte.name.clone()),
            },
            vec![],
            cols.to_vec(),
            est,
        ))
    }

    /// A table function's scan.
    pub(crate) fn function_scan(&self, l: &Logical, filter: Option<Expr>) -> Result<Phys> {
        let Logical::TableFunc {
            func,
            args,
            alias,
            cols,
        } = l
        else {
            unreachable!("a table function")
        };
        if let TableFunction::System(def) = func {
            let rows = crate::catalog::estimated_rows(def, &self.catalog);
            let source = crate::catalog::SystemScanSource {
                def,
                catalog: self.catalog.clone(),
            };
            return Ok(self.node(
                NodeKind::SystemScan {
                    relation: def.name.to_string(),
                    alias: alias.clone(),
                    source: tusk_exec::systemscan::SystemSource(std::sync::Arc::new(source)),
                    filter,
                },
                vec![],
                cols.clone(),
                flat(rows, rows * CPU_TUPLE_COST, 0),
            ));
        }
        let TableFunction::Calls {
            calls: logical_calls,
            ordinality,
        } = func
        else {
            unreachable!("system relations are handled above")
        };
        let mut args = args
            .iter()
            .map(|a| self.remap(a, &[]))
            .collect::<Result<Vec<_>>>()?
            .into_iter();
        let mut calls = Vec::with_capacity(logical_calls.len());
        for (c, &col) in logical_calls.iter().zip(cols) {
            calls.push(tusk_exec::srf::SetCall {
                func: c.func,
                args: args.by_ref().take(c.nargs).collect(),
                ty: self.cols.ty(col),
            });
        }
        let rows = calls.iter().map(scan::function_rows).fold(1.0, f64::max);
        Ok(self.node(
            NodeKind::FunctionScan {
                alias: alias.clone(),
                calls,
                ordinality: *ordinality,
                filter,
            },
            vec![],
            cols.clone(),
            flat(rows, rows * CPU_TUPLE_COST, 0),
        ))
    }
}

/// Marks the subplans of the SubPlans chain below Filter `filtered` whose
/// columns nothing above the Filter reads (`above`: the columns read
/// there): the Filter, which computes them on demand, then passes NULL for
/// them instead of computing them for its passing rows.
fn mark_subplans_read_above(filtered: &mut Phys, above: &std::collections::HashSet<ColumnId>) {
    let cols = &filtered.cols;
    let Some(mut node) = filtered.plan.children.first_mut() else {
        return;
    };
    while let NodeKind::SubPlans { subplans } = &mut node.kind {
        let width = node.children[0].output.len();
        for (k, spec) in subplans.iter_mut().enumerate() {
            spec.needed_above = cols.get(width + k).is_none_or(|c| above.contains(c));
        }
        node = &mut node.children[0];
    }
}
