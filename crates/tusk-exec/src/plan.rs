//! Physical plans: what the planner produces, the executor runs and EXPLAIN prints.

use crate::expr::Expr;
use tusk_storage::DataType;

/// The planner's estimates for a node, in PostgreSQL's cost units.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    pub startup_cost: f64,
    pub total_cost: f64,
    pub rows: f64,
    pub width: u32,
}

/// An aggregate function. Semantics, result types and the partial
/// (parallel) state of each are in `aggregate::funcs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    BoolAnd,
    BoolOr,
    /// `every`: bool_and under its SQL-standard name.
    Every,
    /// `stddev` (= stddev_samp), `stddev_samp`, `stddev_pop`.
    Stddev,
    StddevSamp,
    StddevPop,
    /// `variance` (= var_samp), `var_samp`, `var_pop`.
    Variance,
    VarSamp,
    VarPop,
    /// `string_agg(value, delimiter)`.
    StringAgg,
    BitAnd,
    BitOr,
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
            AggFunc::BoolAnd => "bool_and",
            AggFunc::BoolOr => "bool_or",
            AggFunc::Every => "every",
            AggFunc::Stddev => "stddev",
            AggFunc::StddevSamp => "stddev_samp",
            AggFunc::StddevPop => "stddev_pop",
            AggFunc::Variance => "variance",
            AggFunc::VarSamp => "var_samp",
            AggFunc::VarPop => "var_pop",
            AggFunc::StringAgg => "string_agg",
            AggFunc::BitAnd => "bit_and",
            AggFunc::BitOr => "bit_or",
        }
    }
}

/// Whether an aggregate works alone or in a parallel pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggMode {
    Simple,
    /// Below a Gather: one participant's share of the groups, output as
    /// group keys ++ each call's partial state columns
    /// (`AggCall::partial_types`).
    Partial,
    /// Above a Gather: input is the Partial node's output; `group` is
    /// `Column 0..g` and `aggs` are the Partial node's calls, unchanged.
    Finalize,
}

/// One aggregate call: `func(DISTINCT args ORDER BY order_by) FILTER (WHERE filter)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    /// Arguments over the input row; empty for `count(*)`.
    pub args: Vec<Expr>,
    pub distinct: bool,
    /// Rows where this is not true are not aggregated.
    pub filter: Option<Expr>,
    /// Order in which the rows reach the aggregate (`string_agg(x, ',' ORDER BY y)`).
    pub order_by: Vec<SortKey>,
    /// The result type (PostgreSQL's: see `aggregate::funcs::result_type`).
    pub result: DataType,
}

impl AggCall {
    /// A plain call: no DISTINCT, FILTER or ORDER BY, result type
    /// PostgreSQL's for these arguments.
    pub fn new(func: AggFunc, args: Vec<Expr>) -> AggCall {
        let arg = args.first().map(|a| a.data_type());
        AggCall {
            func,
            result: crate::aggregate::funcs::result_type(func, arg),
            args,
            distinct: false,
            filter: None,
            order_by: vec![],
        }
    }

    /// Types of the columns that carry this call's state from a Partial
    /// aggregate to its Finalize.
    pub fn partial_types(&self) -> Vec<DataType> {
        crate::aggregate::funcs::partial_types(self)
    }

    /// Whether a Partial/Finalize pair can compute this call (false for
    /// DISTINCT and ORDER BY inputs and for `string_agg`, as in PostgreSQL 15).
    pub fn supports_partial(&self) -> bool {
        crate::aggregate::funcs::supports_partial(self)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub desc: bool,
    pub nulls_first: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// Sequential scan of a heap table, emitting columns `columns` (attribute
    /// numbers) and, when `with_tid`, a last Int8 column with each row's TID.
    SeqScan {
        table: String,
        alias: String,
        oid: u32,
        table_types: Vec<DataType>,
        columns: Vec<usize>,
        with_tid: bool,
        filter: Option<Expr>,
        /// Parallel Seq Scan: participants share the blocks.
        parallel: bool,
    },
    /// Index scan: the btree `index_oid` on attribute `key_att` of the
    /// table yields the TIDs whose key lies within `lo..hi`; the visible
    /// tuples are fetched from the heap. Output as for `SeqScan`.
    IndexScan {
        table: String,
        alias: String,
        oid: u32,
        index: String,
        index_oid: u32,
        table_types: Vec<DataType>,
        columns: Vec<usize>,
        with_tid: bool,
        lo: std::ops::Bound<i64>,
        hi: std::ops::Bound<i64>,
        /// `Index Cond:` as EXPLAIN prints it.
        index_cond: String,
        filter: Option<Expr>,
    },
    /// `generate_series(start, stop [, step])`.
    FunctionScan {
        alias: String,
        args: Vec<Expr>,
        ty: DataType,
        filter: Option<Expr>,
    },
    /// Literal rows (`VALUES`, or `SELECT` without `FROM`).
    Values {
        rows: Vec<Vec<Expr>>,
    },
    /// Computes new columns from each input row (not shown by EXPLAIN).
    Project {
        exprs: Vec<Expr>,
    },
    /// Keeps rows where the predicate is true (shown as `Result` with `Filter`
    /// when it cannot be folded into the node below).
    Filter {
        predicate: Expr,
    },
    /// Inner hash join; children are [outer (probe side), Hash (build side)].
    HashJoin {
        outer_keys: Vec<Expr>,
        inner_keys: Vec<Expr>,
        outer_out: Vec<usize>,
        inner_out: Vec<usize>,
        /// Residual condition over (outer columns ++ inner columns).
        join_filter: Option<Expr>,
        /// Parallel Hash Join: all participants build one shared table.
        parallel: bool,
    },
    /// The build side of a hash join (its only child); executed by the join.
    Hash,
    /// Aggregation; `group` empty means one output row (plain aggregate).
    Aggregate {
        group: Vec<Expr>,
        aggs: Vec<AggCall>,
        mode: AggMode,
    },
    /// Runs its child in `workers` worker threads plus the leader and
    /// merges their rows.
    Gather {
        workers: usize,
    },
    /// ORDER BY. With `limit` (LIMIT + OFFSET of the node above) only the
    /// first `limit` rows are returned and the sort keeps no more (top-N).
    Sort {
        keys: Vec<SortKey>,
        limit: Option<u64>,
    },
    Limit {
        limit: Option<u64>,
        offset: u64,
    },
    /// Keeps the first row of each run of rows equal (NULLs equal) in the
    /// first `key_count` columns; the input must be sorted on them. DISTINCT
    /// (all columns) and DISTINCT ON (the ON expressions, placed first).
    Unique {
        key_count: usize,
    },
    /// INTERSECT / EXCEPT [ALL] of children [left, right], whose columns
    /// have the same types; output has the left's columns. Hashed, spilling
    /// within `work_mem × hash_mem_multiplier` (EXPLAIN `HashSetOp ...`).
    SetOp {
        op: SetOpKind,
        all: bool,
    },
    /// Window functions over input sorted by `partition` then `order` (the
    /// planner adds that Sort). Output: the input columns ++ one column per
    /// call, in order. Rows of one partition are buffered (spilling past
    /// `work_mem`).
    WindowAgg {
        partition: Vec<Expr>,
        order: Vec<SortKey>,
        funcs: Vec<WindowCall>,
    },
    /// Attaches CTEs to a query: children are the CTE plans (in `ctes`
    /// order) followed by the body; output is the body's. Not shown by
    /// EXPLAIN itself: its CTE children print as `CTE name` sections under
    /// the body's top node, as PostgreSQL prints them.
    With {
        ctes: Vec<CteDef>,
    },
    /// Reads CTE number `cte` (evaluated at most once per query, as far as
    /// its readers need, shared by all its scans). EXPLAIN: `CTE Scan on
    /// name [alias]`. Parallel-restricted.
    CteScan {
        cte: usize,
        name: String,
        alias: String,
    },
    /// WITH RECURSIVE's union: children [non-recursive term, recursive
    /// term]; the recursive term reads the previous iteration's rows through
    /// `WorkTableScan { work_table }`. `distinct` for UNION, not for UNION
    /// ALL. EXPLAIN: `Recursive Union`.
    RecursiveUnion {
        distinct: bool,
        work_table: usize,
    },
    /// The working table of the RecursiveUnion numbered `work_table`.
    /// EXPLAIN: `WorkTable Scan on name [alias]`. Parallel-restricted.
    WorkTableScan {
        work_table: usize,
        name: String,
        alias: String,
    },
}

/// One CTE of a `With` node: its query-wide number (what `CteScan::cte`
/// names) and its name.
#[derive(Debug, Clone, PartialEq)]
pub struct CteDef {
    pub id: usize,
    pub name: String,
}

/// One window function call: `func(args) FILTER (WHERE filter) OVER (... frame)`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    pub func: WindowFunc,
    /// Arguments over the input row: `ntile(n)`; `lag/lead(value [, offset
    /// [, default]])`; `first_value/last_value(value)`; `nth_value(value,
    /// n)`; an aggregate's arguments.
    pub args: Vec<Expr>,
    /// Aggregates only.
    pub filter: Option<Expr>,
    pub frame: WindowFrame,
    pub result: DataType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// Any aggregate, over the frame.
    Agg(AggFunc),
}

/// `{ROWS | RANGE | GROUPS} BETWEEN start AND end [EXCLUDE ...]`. The
/// default (no frame clause) is `RANGE BETWEEN UNBOUNDED PRECEDING AND
/// CURRENT ROW`: with ORDER BY the rows up to the current row's last peer,
/// without it the whole partition.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    pub mode: FrameMode,
    pub start: FrameBound,
    pub end: FrameBound,
    pub exclude: FrameExclude,
}

impl Default for WindowFrame {
    fn default() -> Self {
        WindowFrame {
            mode: FrameMode::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
            exclude: FrameExclude::NoOthers,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameMode {
    Rows,
    Range,
    Groups,
}

/// A frame bound; offsets are constant expressions (bigint for ROWS and
/// GROUPS; for RANGE of the ORDER BY column's type, or interval for dates
/// and timestamps).
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameExclude {
    NoOthers,
    CurrentRow,
    Group,
    Ties,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpKind {
    Intersect,
    Except,
}

/// A plan node with its children.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Position in pre-order; indexes the per-node statistics of EXPLAIN ANALYZE.
    pub id: usize,
    pub kind: NodeKind,
    pub children: Vec<Plan>,
    /// Types of the output columns.
    pub output: Vec<DataType>,
    /// Display names of the output columns (for EXPLAIN's expressions).
    pub names: Vec<String>,
    pub est: Estimate,
}

impl Plan {
    pub fn new(
        kind: NodeKind,
        children: Vec<Plan>,
        output: Vec<DataType>,
        names: Vec<String>,
        est: Estimate,
    ) -> Plan {
        Plan {
            id: 0,
            kind,
            children,
            output,
            names,
            est,
        }
    }

    /// Number of nodes in the tree.
    pub fn assign_ids_count(&self) -> usize {
        1 + self
            .children
            .iter()
            .map(|c| c.assign_ids_count())
            .sum::<usize>()
    }

    /// Numbers the nodes in pre-order; returns the node count.
    pub fn assign_ids(&mut self) -> usize {
        fn walk(p: &mut Plan, next: &mut usize) {
            p.id = *next;
            *next += 1;
            for c in &mut p.children {
                walk(c, next);
            }
        }
        let mut n = 0;
        walk(self, &mut n);
        n
    }
}
