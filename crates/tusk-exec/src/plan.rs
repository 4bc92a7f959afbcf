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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// Sum of partial counts or partial `sum(int4)`s, as bigint (finalize only).
    SumInt8,
    BoolAnd,
    BoolOr,
    StddevSamp,
    StddevPop,
    VarSamp,
    VarPop,
    StringAgg,
}

/// The kinds of join. Semi and anti joins emit left rows with at least one
/// / no match; a mark join emits every left row plus a boolean column:
/// true if some right row satisfies the condition, else (when
/// `null_aware`, the `IN` semantics) NULL if some comparison was NULL,
/// else false.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Full,
    Semi,
    Anti,
    Mark { null_aware: bool },
}

/// Window functions proper, and aggregates used as window functions.
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
    Aggregate(AggFunc),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
    Groups,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(i64),
    CurrentRow,
    Following(i64),
    UnboundedFollowing,
}

/// A window frame: `units BETWEEN start AND end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowFrame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl WindowFrame {
    /// PostgreSQL's default frame: `RANGE UNBOUNDED PRECEDING` to the
    /// current row and its peers; without ORDER BY every row is a peer, so
    /// the frame is the whole partition.
    pub fn default_for(ordered: bool) -> WindowFrame {
        WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: if ordered {
                FrameBound::CurrentRow
            } else {
                FrameBound::UnboundedFollowing
            },
        }
    }
}

impl AggFunc {
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
            AggFunc::SumInt8 => "sum",
            AggFunc::BoolAnd => "bool_and",
            AggFunc::BoolOr => "bool_or",
            AggFunc::StddevSamp => "stddev_samp",
            AggFunc::StddevPop => "stddev_pop",
            AggFunc::VarSamp => "var_samp",
            AggFunc::VarPop => "var_pop",
            AggFunc::StringAgg => "string_agg",
        }
    }

    /// Result type of the aggregate over `arg` (PostgreSQL's choices:
    /// sum(int4) is bigint, sum(int8) and avg of integers are numeric).
    pub fn result_type(self, arg: Option<DataType>) -> DataType {
        match (self, arg) {
            (AggFunc::CountStar | AggFunc::Count | AggFunc::SumInt8, _) => DataType::Int8,
            (AggFunc::Sum, Some(DataType::Int4)) => DataType::Int8,
            (AggFunc::Sum | AggFunc::Avg, _) => DataType::Numeric,
            (AggFunc::Min | AggFunc::Max, Some(t)) => t,
            (AggFunc::Min | AggFunc::Max, None) => DataType::Text,
            (AggFunc::BoolAnd | AggFunc::BoolOr, _) => DataType::Bool,
            (AggFunc::StringAgg, _) => DataType::Text,
            (
                AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop,
                Some(DataType::Float4 | DataType::Float8),
            ) => DataType::Float8,
            (AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop, _) => {
                DataType::Numeric
            }
        }
    }
}

/// Whether an aggregate works alone or in a parallel pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggMode {
    Simple,
    /// Below a Gather: one participant's share of the groups.
    Partial,
    /// Above a Gather: combines the partial results.
    Finalize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggCall {
    pub func: AggFunc,
    pub args: Vec<Expr>,
    pub distinct: bool,
    /// `FILTER (WHERE ...)`.
    pub filter: Option<Expr>,
    /// `ORDER BY` inside the call (string_agg).
    pub order_by: Vec<SortKey>,
    pub result: DataType,
}

impl AggCall {
    /// The first argument (`None` for `count(*)`).
    pub fn arg(&self) -> Option<&Expr> {
        self.args.first()
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
        /// Conditions `key op value` whose value is known only when the scan
        /// starts (a `$n` parameter of a prepared statement's generic plan):
        /// the values are computed then and narrow `lo..hi` (PostgreSQL's
        /// runtime keys).
        runtime_keys: Vec<(crate::expr::CmpOp, Expr)>,
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
    /// Hash join of kind `kind`; children are [outer (probe side), Hash
    /// (build side)]. Output: outer_out ++ inner_out columns (semi/anti:
    /// outer_out only; mark: outer_out ++ the mark).
    HashJoin {
        kind: JoinKind,
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
    /// Any join condition; children [outer, inner]; the inner side is
    /// materialised. Output as for HashJoin.
    NestedLoop {
        kind: JoinKind,
        join_filter: Option<Expr>,
        outer_out: Vec<usize>,
        inner_out: Vec<usize>,
    },
    /// The children's rows, one child after the other.
    Append,
    /// PostgreSQL's Result: with a false `one_time_filter` the child never runs.
    Result {
        one_time_filter: Option<Expr>,
    },
    /// INTERSECT / EXCEPT [ALL] of children [left, right].
    SetOp {
        op: SetOpCmd,
        all: bool,
    },
    /// Keeps the first row of each run of rows equal on the first `keys` columns.
    Unique {
        keys: usize,
    },
    /// Window functions over input sorted by partition then order keys;
    /// output = input ++ one column per call.
    WindowAgg {
        partition: Vec<Expr>,
        order: Vec<SortKey>,
        calls: Vec<WindowCallSpec>,
    },
    /// A scan of the statement's CTE number `cte` (materialised once).
    CteScan {
        cte: usize,
        name: String,
        alias: String,
    },
    /// WITH RECURSIVE: children [seed, step]; `step` reads the previous
    /// round's rows through WorkTableScan { work_table }.
    RecursiveUnion {
        distinct: bool,
        work_table: usize,
    },
    WorkTableScan {
        work_table: usize,
        alias: String,
    },
    /// Appends one column per subplan, computed for each input row.
    SubPlans {
        subplans: Vec<SubPlanSpec>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOpCmd {
    Intersect,
    Except,
}

/// One window function call of a WindowAgg.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCallSpec {
    pub func: WindowFunc,
    pub args: Vec<Expr>,
    pub frame: WindowFrame,
    pub result: DataType,
}

/// What a SubPlan computes for each outer row.
#[derive(Debug, Clone, PartialEq)]
pub enum SubPlanKind {
    /// Whether the subplan returns a row.
    Exists,
    /// The single value (NULL for none; more than one row is an error).
    Scalar,
    /// `test` over (outer params, subplan row) is true for some row; NULL
    /// if for none but some test was NULL; else false. `test` reads the
    /// subplan's columns as `Column` 0.. and the outer values as `Param`.
    Any { test: Expr },
    /// `test` true for every row (NULL/false rules mirrored).
    All { test: Expr },
}

/// A subquery the executor runs per outer row: `params[i]` is evaluated on
/// the outer row and substituted for `Expr::Param { index: param_ids[i] }`
/// everywhere inside `plan` and `kind`'s test, nested SubPlans included.
/// Parameter numbers are unique in a statement, so substituting an outer
/// level's parameters never touches an inner level's.
#[derive(Debug, Clone, PartialEq)]
pub struct SubPlanSpec {
    pub plan: Plan,
    pub kind: SubPlanKind,
    pub params: Vec<Expr>,
    pub param_ids: Vec<usize>,
    /// Statement-wide number for EXPLAIN (`SubPlan 1`).
    pub number: usize,
}

/// A plan together with the CTEs it scans.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub root: Plan,
    pub ctes: Vec<Plan>,
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
