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
    /// Hash join of kind `kind`; children are [outer (probe side), Hash
    /// (whose child is the build side)]. Rows match when every outer key
    /// equals its inner key (NULL keys never match) and `join_filter` is
    /// true. Output: see [`JoinKind`]; the planner must give at least one
    /// key (a join without equalities is a [`NodeKind::NestedLoop`]).
    HashJoin {
        kind: JoinKind,
        outer_keys: Vec<Expr>,
        inner_keys: Vec<Expr>,
        outer_out: Vec<usize>,
        inner_out: Vec<usize>,
        /// Residual condition over (all outer columns ++ all inner columns),
        /// part of the join condition: a pair failing it is not a match
        /// (PostgreSQL's `Join Filter`).
        join_filter: Option<Expr>,
        /// Parallel Hash Join: all participants build one shared table
        /// (only for kinds whose [`JoinKind::parallel_safe`] says so).
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
    Sort {
        keys: Vec<SortKey>,
    },
    Limit {
        limit: Option<u64>,
        offset: u64,
    },
    /// Nested loop join of kind `kind`; children are [outer, inner]. Every
    /// outer row is paired with every inner row; a pair matches when
    /// `join_filter` is true (always, without one: CROSS JOIN). Any
    /// condition works (no equality is needed). The inner input is read
    /// once and kept (in a spill file when it exceeds `work_mem`), the outer
    /// one streamed. `outer_out`/`inner_out` and the output as for
    /// [`NodeKind::HashJoin`].
    NestedLoop {
        kind: JoinKind,
        /// Condition over (all outer columns ++ all inner columns).
        join_filter: Option<Expr>,
        outer_out: Vec<usize>,
        inner_out: Vec<usize>,
    },
    /// The rows of every child, child after child (PostgreSQL's Append);
    /// the children have the same column types.
    Append,
    /// PostgreSQL's Result: the rows of its child (or, without a child, one
    /// row of no columns), unless `one_time_filter` — a condition without
    /// column references, evaluated once before anything else — is not
    /// true: then there are no rows and the child is never executed.
    Result {
        one_time_filter: Option<Expr>,
    },
}

/// How a join combines its outer rows (the first child) with its inner rows.
///
/// A pair of rows *matches* when the whole join condition is true: the key
/// equalities of a hash join and its `join_filter` (a NULL is not true).
/// With `outer_out`/`inner_out` the column lists a join keeps of each side,
/// the output is
///
/// | kind | rows | columns |
/// |---|---|---|
/// | `Inner` | every matching pair | `outer_out ++ inner_out` |
/// | `Left` | matching pairs, and every outer row without a match with NULL inner columns | `outer_out ++ inner_out` |
/// | `Right` | matching pairs, and every inner row without a match with NULL outer columns | `outer_out ++ inner_out` |
/// | `Full` | `Left`'s rows and `Right`'s unmatched inner rows | `outer_out ++ inner_out` |
/// | `Semi` | every outer row with at least one match, once | `outer_out` |
/// | `Anti` | every outer row without a match | `outer_out` |
/// | `Mark` | every outer row, once, with a mark | `outer_out ++ [mark: boolean]` |
///
/// The mark of `Mark { null_aware: false }` (EXISTS) is whether the row has
/// a match. With `null_aware` it is SQL's `x IN (subquery)`: the
/// three-valued OR, over all inner rows, of the condition (the AND of the
/// key equalities and the join filter): true if some inner row matches,
/// else NULL if the condition is NULL for some inner row (an outer or inner
/// key is NULL while the other keys are equal or NULL, and the filter is not
/// false), else false. An empty inner side gives false for every row, even
/// one with a NULL key. A filter meant as the subquery's WHERE clause (rows
/// where it is NULL take no part) must be written so that it is never NULL
/// (`filter IS TRUE`); correlation equalities of a null-aware mark belong
/// in the filter, not in the keys, since every key counts for the NULL rule.
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

impl JoinKind {
    /// Whether the output carries inner columns (`inner_out`).
    pub fn emits_inner_columns(self) -> bool {
        matches!(
            self,
            JoinKind::Inner | JoinKind::Left | JoinKind::Right | JoinKind::Full
        )
    }

    /// Whether outer rows without a match are emitted (left, full, anti, mark).
    pub fn keeps_unmatched_outer(self) -> bool {
        matches!(
            self,
            JoinKind::Left | JoinKind::Full | JoinKind::Anti | JoinKind::Mark { .. }
        )
    }

    /// Whether inner rows without a match are emitted (right, full).
    pub fn keeps_unmatched_inner(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full)
    }

    /// Whether an outer row needs only its first match (semi, anti, mark).
    pub fn first_match_only(self) -> bool {
        matches!(
            self,
            JoinKind::Semi | JoinKind::Anti | JoinKind::Mark { .. }
        )
    }

    /// Output column types of a join of this kind that keeps columns
    /// `outer_out` of `outer` and `inner_out` of `inner`.
    pub fn output_types(
        self,
        outer: &[DataType],
        inner: &[DataType],
        outer_out: &[usize],
        inner_out: &[usize],
    ) -> Vec<DataType> {
        let mut out: Vec<DataType> = outer_out.iter().map(|&c| outer[c]).collect();
        match self {
            JoinKind::Semi | JoinKind::Anti => {}
            JoinKind::Mark { .. } => out.push(DataType::Bool),
            _ => out.extend(inner_out.iter().map(|&c| inner[c])),
        }
        out
    }

    /// Whether a Parallel Hash Join of this kind is supported. Every kind
    /// is: outer rows are probed by one participant each, a right or full
    /// join marks matched inner rows in bits all participants share and the
    /// last participant to finish probing emits the unmatched ones, and a
    /// null-aware mark join shares its inner rows with NULL keys.
    pub fn parallel_safe(self) -> bool {
        true
    }

    /// The word PostgreSQL's EXPLAIN puts between a join method and "Join"
    /// (`Hash Left Join`), empty for an inner join. A mark join prints as a
    /// semi join (PostgreSQL has no mark join; tusk adds a line saying so,
    /// see [`NodeKind::explain_notes`]).
    pub fn explain_word(self) -> &'static str {
        match self {
            JoinKind::Inner => "",
            JoinKind::Left => "Left",
            JoinKind::Right => "Right",
            JoinKind::Full => "Full",
            JoinKind::Semi | JoinKind::Mark { .. } => "Semi",
            JoinKind::Anti => "Anti",
        }
    }
}

impl NodeKind {
    /// The node's name as PostgreSQL's EXPLAIN prints it, for the nodes
    /// whose name depends on more than the variant (joins): `Hash Join`,
    /// `Parallel Hash Left Join`, `Nested Loop`, `Nested Loop Anti Join`,
    /// `Append`, `Result`. `None` for the others (EXPLAIN names them).
    pub fn explain_name(&self) -> Option<String> {
        let join = |method: &str, kind: JoinKind| match kind.explain_word() {
            "" if method == "Nested Loop" => method.to_string(),
            "" => format!("{method} Join"),
            w => format!("{method} {w} Join"),
        };
        match self {
            NodeKind::HashJoin { kind, parallel, .. } => Some(join(
                if *parallel { "Parallel Hash" } else { "Hash" },
                *kind,
            )),
            NodeKind::NestedLoop { kind, .. } => Some(join("Nested Loop", *kind)),
            NodeKind::Append => Some("Append".into()),
            NodeKind::Result { .. } => Some("Result".into()),
            _ => None,
        }
    }

    /// Lines tusk adds below PostgreSQL's for this node in EXPLAIN: a mark
    /// join, which PostgreSQL does not have, says what it is
    /// (`tusk: mark join` or `tusk: mark join, null-aware`).
    pub fn explain_notes(&self) -> Vec<String> {
        match self {
            NodeKind::HashJoin {
                kind: JoinKind::Mark { null_aware },
                ..
            }
            | NodeKind::NestedLoop {
                kind: JoinKind::Mark { null_aware },
                ..
            } => vec![if *null_aware {
                "tusk: mark join, null-aware".into()
            } else {
                "tusk: mark join".into()
            }],
            _ => vec![],
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL's node names, and tusk's note for a mark join.
    #[test]
    fn explain_names() {
        let hash = |kind, parallel| NodeKind::HashJoin {
            kind,
            outer_keys: vec![],
            inner_keys: vec![],
            outer_out: vec![],
            inner_out: vec![],
            join_filter: None,
            parallel,
        };
        let nl = |kind| NodeKind::NestedLoop {
            kind,
            join_filter: None,
            outer_out: vec![],
            inner_out: vec![],
        };
        let name = |k: NodeKind| k.explain_name().unwrap();
        assert_eq!(name(hash(JoinKind::Inner, false)), "Hash Join");
        assert_eq!(name(hash(JoinKind::Inner, true)), "Parallel Hash Join");
        assert_eq!(name(hash(JoinKind::Left, false)), "Hash Left Join");
        assert_eq!(
            name(hash(JoinKind::Right, true)),
            "Parallel Hash Right Join"
        );
        assert_eq!(name(hash(JoinKind::Full, false)), "Hash Full Join");
        assert_eq!(name(hash(JoinKind::Semi, false)), "Hash Semi Join");
        assert_eq!(name(hash(JoinKind::Anti, false)), "Hash Anti Join");
        let mark = hash(JoinKind::Mark { null_aware: true }, false);
        assert_eq!(name(mark.clone()), "Hash Semi Join");
        assert_eq!(mark.explain_notes(), ["tusk: mark join, null-aware"]);
        assert_eq!(name(nl(JoinKind::Inner)), "Nested Loop");
        assert_eq!(name(nl(JoinKind::Left)), "Nested Loop Left Join");
        assert_eq!(name(nl(JoinKind::Anti)), "Nested Loop Anti Join");
        assert_eq!(
            nl(JoinKind::Mark { null_aware: false }).explain_notes(),
            ["tusk: mark join"]
        );
        assert!(nl(JoinKind::Full).explain_notes().is_empty());
        assert_eq!(name(NodeKind::Append), "Append");
        assert_eq!(
            name(NodeKind::Result {
                one_time_filter: None
            }),
            "Result"
        );
        assert_eq!(NodeKind::Hash.explain_name(), None);
    }
}
