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
    pub arg: Option<Expr>,
    pub result: DataType,
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
