//! The logical plan: a small relational algebra between binding and
//! physical planning.
//!
//! The binder turns a statement into a tree of [`Logical`] nodes; rewrite
//! passes (`crate::rewrite`) transform the tree; the physical planner
//! (`crate::physical`) chooses operators for it. The tree says *what* to
//! compute, never *how*: a `Join` has a kind and a condition, not an
//! algorithm or a build side.
//!
//! ## Columns
//!
//! Every column any node produces has a statement-wide [`ColumnId`],
//! registered in [`Columns`] with its name and type. Expressions are
//! tusk-exec's [`Expr`] with `Expr::Column { index }` holding a `ColumnId`,
//! not a position; the physical planner maps ids to positions when it lays
//! out each operator's batch. Ids make rewrites local: moving a predicate
//! below a join needs no renumbering, and a correlated subquery is simply
//! one whose expressions mention ids its own inputs do not produce.
//!
//! ## Output of each node
//!
//! | node | output columns |
//! |---|---|
//! | `Get`, `TableFunc`, `Values`, `CteRef` | their `cols` |
//! | `Filter`, `OneTimeFilter`, `Sort`, `Limit`, `Distinct` | the input's |
//! | `Project` | the ids of its expressions, in order |
//! | `Join` inner/left/right/full | left's then right's |
//! | `Join` semi/anti | left's |
//! | `Join` mark | left's, then the mark column |
//! | `DependentJoin` | left's then right's |
//! | `Apply` | the input's, then `out` |
//! | `Aggregate` | group ids, then aggregate ids |
//! | `Window` | the input's, then one per window call |
//! | `SetOp` | `out` |

pub mod exprs;
mod raises;
pub mod reads;

pub use tusk_exec::plan::JoinKind;
use tusk_exec::plan::{AggCall, SortKey};
use tusk_exec::Expr;
use tusk_storage::{DataType, SqlType, TableDef};

/// A column's statement-wide identity.
pub type ColumnId = usize;

/// What is known about each column of a statement.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    /// The name it is shown under (EXPLAIN, `*` expansion, output headers).
    pub name: String,
    pub ty: SqlType,
    /// The relation alias that qualifies it in EXPLAIN (`t1.x`), if any.
    pub qualifier: Option<String>,
}

/// The registry of a statement's columns.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    cols: Vec<ColumnInfo>,
}

impl Columns {
    pub fn add(
        &mut self,
        name: impl Into<String>,
        ty: SqlType,
        qualifier: Option<String>,
    ) -> ColumnId {
        self.cols.push(ColumnInfo {
            name: name.into(),
            ty,
            qualifier,
        });
        self.cols.len() - 1
    }

    pub fn get(&self, id: ColumnId) -> &ColumnInfo {
        &self.cols[id]
    }

    pub fn ty(&self, id: ColumnId) -> DataType {
        self.cols[id].ty.data_type()
    }

    pub fn len(&self) -> usize {
        self.cols.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cols.is_empty()
    }

    /// How many distinct relation aliases qualify columns.
    pub fn qualifiers(&self) -> usize {
        let set: std::collections::HashSet<&str> = self
            .cols
            .iter()
            .filter_map(|c| c.qualifier.as_deref())
            .collect();
        set.len()
    }

    /// A column reference expression for `id`.
    pub fn expr(&self, id: ColumnId) -> Expr {
        Expr::Column {
            index: id,
            ty: self.ty(id),
        }
    }

    /// The name EXPLAIN prints for `id`: `alias.name`, or the bare name.
    pub fn display(&self, id: ColumnId) -> String {
        let c = &self.cols[id];
        let name = crate::names::quote_ident(&c.name);
        match &c.qualifier {
            Some(q) => format!("{}.{name}", crate::names::quote_ident(q)),
            None => name,
        }
    }
}

/// Set-returning functions usable in FROM.
#[derive(Debug, Clone, PartialEq)]
pub enum TableFunction {
    /// Set-returning calls read side by side (`ROWS FROM (f(...), g(...))`,
    /// or one call): the TableFunc's `args` are the calls' arguments in
    /// order, `SetFuncCall::nargs` of them each, and its `cols` one column
    /// per call, then the row number with `ordinality`.
    Calls {
        calls: Vec<SetFuncCall>,
        ordinality: bool,
    },
    /// A system relation (`pg_class`), whose rows are computed (see
    /// `catalog`); no arguments.
    System(&'static crate::catalog::RelationDef),
}

/// One call of a [`TableFunction::Calls`].
#[derive(Debug, Clone, PartialEq)]
pub struct SetFuncCall {
    pub func: tusk_exec::func::Func,
    /// How many of the TableFunc's `args` are this call's.
    pub nargs: usize,
}

/// What a subquery in an expression computes for each outer row.
#[derive(Debug, Clone, PartialEq)]
pub enum SubqueryKind {
    /// `(SELECT x ...)`: the single value, NULL for no row, an error for more.
    Scalar,
    /// `EXISTS (...)`: true or false, never NULL.
    Exists,
    /// `lhs op ANY (...)` (and `IN`): true if some row satisfies
    /// `lhs op row`, else NULL if some comparison was NULL, else false.
    /// `test` is the comparison with the subquery's columns as `Expr::Column`
    /// references to its output ids and `lhs` already inside it.
    Any { test: Expr },
    /// `lhs op ALL (...)`: false if some row fails, else NULL if some
    /// comparison was NULL, else true (also for no rows).
    All { test: Expr },
    /// `(a, b) op (SELECT x, y ...)` (PostgreSQL's ROWCOMPARE sublink):
    /// `test` over the only row; NULL for no row, error 21000 for more.
    RowCompare { test: Expr },
}

/// A common table expression, planned once per statement.
#[derive(Debug, Clone)]
pub struct CteDef {
    pub name: String,
    pub plan: Logical,
    /// The CTE's own output ids (what `plan` produces).
    pub cols: Vec<ColumnId>,
    /// `WITH RECURSIVE`: `plan` is a `RecursiveUnion`.
    pub recursive: bool,
    /// Scanned more than once, or `MATERIALIZED`: computed once and stored;
    /// otherwise inlined at its single reference.
    pub materialize: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

/// A window function call.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    pub call: tusk_exec::plan::WindowFunc,
    pub args: Vec<Expr>,
    /// `FILTER (WHERE ...)` of an aggregate used as a window function.
    pub filter: Option<Expr>,
    pub partition: Vec<Expr>,
    pub order: Vec<SortKey>,
    pub frame: tusk_exec::plan::WindowFrame,
    pub result: DataType,
}

#[derive(Debug, Clone)]
pub enum Logical {
    /// A table's rows; `cols[i]` is attribute `i`; with `tid`, also each
    /// row's tuple identifier (for UPDATE and DELETE), as a last column.
    Get {
        table: TableDef,
        alias: String,
        cols: Vec<ColumnId>,
        tid: Option<ColumnId>,
    },
    TableFunc {
        func: TableFunction,
        args: Vec<Expr>,
        alias: String,
        cols: Vec<ColumnId>,
    },
    /// Literal rows; a query without FROM is one row of no columns.
    Values {
        rows: Vec<Vec<Expr>>,
        cols: Vec<ColumnId>,
    },
    Filter {
        input: Box<Logical>,
        predicate: Expr,
    },
    /// PostgreSQL's gating qual: `input`'s rows if `predicate` is true,
    /// none otherwise. The predicate reads no column of `input`; it is
    /// evaluated once, before `input` runs, over the one row of `init`:
    /// a chain of uncorrelated `Apply` nodes over [`Logical::unit`] that
    /// computes the subqueries it reads (or the unit row alone). See
    /// `rewrite::onetime`.
    OneTimeFilter {
        input: Box<Logical>,
        init: Box<Logical>,
        predicate: Expr,
    },
    Project {
        input: Box<Logical>,
        exprs: Vec<(ColumnId, Expr)>,
    },
    Join {
        kind: JoinKind,
        left: Box<Logical>,
        right: Box<Logical>,
        /// Conjuncts of the join condition (empty: a cross join).
        on: Vec<Expr>,
        /// The boolean column a mark join adds.
        mark: Option<ColumnId>,
    },
    /// A join whose right side reads columns of the left one (`LATERAL`):
    /// the right side is evaluated for each left row. `kind` is inner or
    /// left; output: left's columns, then right's.
    DependentJoin {
        kind: JoinKind,
        left: Box<Logical>,
        right: Box<Logical>,
        on: Vec<Expr>,
    },
    /// A subquery evaluated for each input row (a dependent join): the
    /// decorrelation pass turns it into joins where it can.
    Apply {
        input: Box<Logical>,
        subquery: Box<Logical>,
        kind: SubqueryKind,
        out: ColumnId,
    },
    Aggregate {
        input: Box<Logical>,
        group: Vec<(ColumnId, Expr)>,
        aggs: Vec<(ColumnId, AggCall)>,
    },
    Window {
        input: Box<Logical>,
        calls: Vec<(ColumnId, WindowCall)>,
    },
    /// `DISTINCT` (all columns) or `DISTINCT ON (exprs)` (the first row of
    /// each group in the input's order).
    Distinct {
        input: Box<Logical>,
        on: Option<Vec<Expr>>,
    },
    SetOp {
        op: SetOpKind,
        all: bool,
        left: Box<Logical>,
        right: Box<Logical>,
        out: Vec<ColumnId>,
    },
    Sort {
        input: Box<Logical>,
        keys: Vec<SortKey>,
    },
    Limit {
        input: Box<Logical>,
        limit: Option<u64>,
        offset: u64,
    },
    /// A scan of CTE `id` of the statement; `cols` are this reference's own
    /// ids, positionally matching the CTE's columns.
    CteRef {
        id: usize,
        cols: Vec<ColumnId>,
    },
    /// WITH RECURSIVE's fixpoint: `seed`, then `step` repeatedly over the
    /// rows the previous round produced (read by `WorkTable` references)
    /// until a round produces nothing.
    RecursiveUnion {
        seed: Box<Logical>,
        step: Box<Logical>,
        distinct: bool,
        work_table: usize,
        out: Vec<ColumnId>,
    },
    WorkTable {
        id: usize,
        cols: Vec<ColumnId>,
    },
}

impl Logical {
    /// The node's output columns (see the module doc's table).
    pub fn output(&self) -> Vec<ColumnId> {
        match self {
            Logical::Get {
                cols, tid: Some(t), ..
            } => cols.iter().copied().chain([*t]).collect(),
            Logical::Get { cols, .. }
            | Logical::TableFunc { cols, .. }
            | Logical::Values { cols, .. }
            | Logical::CteRef { cols, .. }
            | Logical::WorkTable { cols, .. } => cols.clone(),
            Logical::Filter { input, .. }
            | Logical::OneTimeFilter { input, .. }
            | Logical::Sort { input, .. }
            | Logical::Limit { input, .. }
            | Logical::Distinct { input, .. } => input.output(),
            Logical::Project { exprs, .. } => exprs.iter().map(|(id, _)| *id).collect(),
            Logical::Join {
                kind,
                left,
                right,
                mark,
                ..
            } => {
                let mut out = left.output();
                match kind {
                    JoinKind::Semi | JoinKind::Anti => {}
                    JoinKind::Mark { .. } => out.extend(mark.iter().copied()),
                    _ => out.extend(right.output()),
                }
                out
            }
            Logical::DependentJoin { left, right, .. } => {
                let mut o = left.output();
                o.extend(right.output());
                o
            }
            Logical::Apply { input, out, .. } => {
                let mut o = input.output();
                o.push(*out);
                o
            }
            Logical::Aggregate { group, aggs, .. } => group
                .iter()
                .map(|(id, _)| *id)
                .chain(aggs.iter().map(|(id, _)| *id))
                .collect(),
            Logical::Window { input, calls } => {
                let mut o = input.output();
                o.extend(calls.iter().map(|(id, _)| *id));
                o
            }
            Logical::SetOp { out, .. } | Logical::RecursiveUnion { out, .. } => out.clone(),
        }
    }

    /// The node's direct inputs.
    pub fn children(&self) -> Vec<&Logical> {
        match self {
            Logical::Get { .. }
            | Logical::TableFunc { .. }
            | Logical::Values { .. }
            | Logical::CteRef { .. }
            | Logical::WorkTable { .. } => vec![],
            Logical::Filter { input, .. }
            | Logical::Project { input, .. }
            | Logical::Aggregate { input, .. }
            | Logical::Window { input, .. }
            | Logical::Distinct { input, .. }
            | Logical::Sort { input, .. }
            | Logical::Limit { input, .. } => vec![input],
            Logical::Join { left, right, .. }
            | Logical::SetOp { left, right, .. }
            | Logical::DependentJoin { left, right, .. } => {
                vec![left, right]
            }
            Logical::Apply {
                input, subquery, ..
            } => vec![input, subquery],
            Logical::OneTimeFilter { input, init, .. } => vec![input, init],
            Logical::RecursiveUnion { seed, step, .. } => vec![seed, step],
        }
    }

    /// The node's direct inputs, mutably.
    pub fn children_mut(&mut self) -> Vec<&mut Logical> {
        match self {
            Logical::Get { .. }
            | Logical::TableFunc { .. }
            | Logical::Values { .. }
            | Logical::CteRef { .. }
            | Logical::WorkTable { .. } => vec![],
            Logical::Filter { input, .. }
            | Logical::Project { input, .. }
            | Logical::Aggregate { input, .. }
            | Logical::Window { input, .. }
            | Logical::Distinct { input, .. }
            | Logical::Sort { input, .. }
            | Logical::Limit { input, .. } => vec![input],
            Logical::Join { left, right, .. }
            | Logical::SetOp { left, right, .. }
            | Logical::DependentJoin { left, right, .. } => {
                vec![left, right]
            }
            Logical::Apply {
                input, subquery, ..
            } => vec![input, subquery],
            Logical::OneTimeFilter { input, init, .. } => vec![input, init],
            Logical::RecursiveUnion { seed, step, .. } => vec![seed, step],
        }
    }

    /// Calls `f` on every expression the node itself holds (not its children's).
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Logical::Get { .. }
            | Logical::CteRef { .. }
            | Logical::WorkTable { .. }
            | Logical::SetOp { .. }
            | Logical::RecursiveUnion { .. }
            | Logical::Limit { .. } => {}
            Logical::TableFunc { args, .. } => args.iter().for_each(f),
            Logical::Values { rows, .. } => rows.iter().flatten().for_each(f),
            Logical::Filter { predicate, .. } | Logical::OneTimeFilter { predicate, .. } => {
                f(predicate)
            }
            Logical::Project { exprs, .. } => exprs.iter().for_each(|(_, e)| f(e)),
            Logical::Join { on, .. } | Logical::DependentJoin { on, .. } => on.iter().for_each(f),
            Logical::Apply { kind, .. } => match kind {
                SubqueryKind::Any { test }
                | SubqueryKind::All { test }
                | SubqueryKind::RowCompare { test } => f(test),
                _ => {}
            },
            Logical::Aggregate { group, aggs, .. } => {
                group.iter().for_each(|(_, e)| f(e));
                for (_, a) in aggs {
                    a.args.iter().for_each(&mut *f);
                    if let Some(x) = &a.filter {
                        f(x);
                    }
                    a.order_by.iter().for_each(|k| f(&k.expr));
                }
            }
            Logical::Window { calls, .. } => {
                for (_, c) in calls {
                    c.args.iter().for_each(&mut *f);
                    c.filter.iter().for_each(&mut *f);
                    c.partition.iter().for_each(&mut *f);
                    c.order.iter().for_each(|k| f(&k.expr));
                }
            }
            Logical::Distinct { on, .. } => on.iter().flatten().for_each(f),
            Logical::Sort { keys, .. } => keys.iter().for_each(|k| f(&k.expr)),
        }
    }

    /// Calls `f` on every expression the node itself holds, mutably.
    pub fn for_each_expr_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Logical::Get { .. }
            | Logical::CteRef { .. }
            | Logical::WorkTable { .. }
            | Logical::SetOp { .. }
            | Logical::RecursiveUnion { .. }
            | Logical::Limit { .. } => {}
            Logical::TableFunc { args, .. } => args.iter_mut().for_each(f),
            Logical::Values { rows, .. } => rows.iter_mut().flatten().for_each(f),
            Logical::Filter { predicate, .. } | Logical::OneTimeFilter { predicate, .. } => {
                f(predicate)
            }
            Logical::Project { exprs, .. } => exprs.iter_mut().for_each(|(_, e)| f(e)),
            Logical::Join { on, .. } | Logical::DependentJoin { on, .. } => {
                on.iter_mut().for_each(f)
            }
            Logical::Apply { kind, .. } => match kind {
                SubqueryKind::Any { test }
                | SubqueryKind::All { test }
                | SubqueryKind::RowCompare { test } => f(test),
                _ => {}
            },
            Logical::Aggregate { group, aggs, .. } => {
                group.iter_mut().for_each(|(_, e)| f(e));
                for (_, a) in aggs {
                    a.args.iter_mut().for_each(&mut *f);
                    if let Some(x) = &mut a.filter {
                        f(x);
                    }
                    a.order_by.iter_mut().for_each(|k| f(&mut k.expr));
                }
            }
            Logical::Window { calls, .. } => {
                for (_, c) in calls {
                    c.args.iter_mut().for_each(&mut *f);
                    c.filter.iter_mut().for_each(&mut *f);
                    c.partition.iter_mut().for_each(&mut *f);
                    c.order.iter_mut().for_each(|k| f(&mut k.expr));
                }
            }
            Logical::Distinct { on, .. } => on.iter_mut().flatten().for_each(f),
            Logical::Sort { keys, .. } => keys.iter_mut().for_each(|k| f(&mut k.expr)),
        }
    }

    /// Column ids the subtree's expressions read that the subtree does not
    /// produce: the outer references of a correlated subquery.
    pub fn free_columns(&self) -> std::collections::BTreeSet<ColumnId> {
        let mut produced = std::collections::HashSet::new();
        let mut used = std::collections::BTreeSet::new();
        self.collect_columns(&mut produced, &mut used);
        used.retain(|c| !produced.contains(c));
        used
    }

    fn collect_columns(
        &self,
        produced: &mut std::collections::HashSet<ColumnId>,
        used: &mut std::collections::BTreeSet<ColumnId>,
    ) {
        produced.extend(self.output());
        if let Logical::Join { mark: Some(m), .. } = self {
            produced.insert(*m);
        }
        self.for_each_expr(&mut |e| {
            let mut cols = Vec::new();
            e.columns(&mut cols);
            used.extend(cols);
        });
        for c in self.children() {
            c.collect_columns(produced, used);
        }
    }

    /// Replaces the column references `map` maps, in every expression of
    /// the subtree.
    pub fn replace_columns(&mut self, map: &dyn Fn(ColumnId) -> Option<Expr>) {
        self.for_each_expr_mut(&mut |e| {
            let placeholder = Expr::constant(tusk_exec::Value::Null, DataType::Bool);
            *e = exprs::replace_columns(std::mem::replace(e, placeholder), map)
        });
        for c in self.children_mut() {
            c.replace_columns(map);
        }
    }

    /// A one-row, no-column relation (a query without FROM).
    pub fn unit() -> Logical {
        Logical::Values {
            rows: vec![vec![]],
            cols: vec![],
        }
    }

    pub fn filter(self, predicate: Expr) -> Logical {
        Logical::Filter {
            input: Box::new(self),
            predicate,
        }
    }
}

/// Splits a predicate into its AND-ed conjuncts.
pub fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::And(terms) => stack.extend(terms.into_iter().rev()),
            e => out.push(e),
        }
    }
}

/// The conjunction of `es` (`None` when empty).
pub fn and_all(es: Vec<Expr>) -> Option<Expr> {
    Expr::and_all(es)
}

/// The columns an expression reads.
pub fn expr_columns(e: &Expr) -> Vec<ColumnId> {
    let mut v = Vec::new();
    e.columns(&mut v);
    v
}
