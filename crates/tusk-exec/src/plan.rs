//! Physical plans: what the planner produces, the executor runs and EXPLAIN prints.

pub use crate::deform::LayoutCache;
use crate::expr::Expr;
use std::sync::Arc;
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
    /// `array_agg(value)`: every value (NULLs too) in input order.
    ArrayAgg,
    /// `json_agg(value)`, `jsonb_agg(value)`, `json_object_agg(key,
    /// value)`, `jsonb_object_agg(key, value)` (see `aggregate::json_agg`).
    JsonAgg,
    JsonbAgg,
    JsonObjectAgg,
    JsonbObjectAgg,
    /// The ordered-set aggregates, `f(direct) WITHIN GROUP (ORDER BY value)`:
    /// `args` are `[value, direct]` (`[value]` for `mode`) and `order_by`
    /// sorts the values (see `aggregate::ordered_set`).
    PercentileCont,
    PercentileDisc,
    Mode,
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
            AggFunc::ArrayAgg => "array_agg",
            AggFunc::JsonAgg => "json_agg",
            AggFunc::JsonbAgg => "jsonb_agg",
            AggFunc::JsonObjectAgg => "json_object_agg",
            AggFunc::JsonbObjectAgg => "jsonb_object_agg",
            AggFunc::PercentileCont => "percentile_cont",
            AggFunc::PercentileDisc => "percentile_disc",
            AggFunc::Mode => "mode",
        }
    }

    /// Whether it is an ordered-set aggregate (`percentile_cont`,
    /// `percentile_disc`, `mode`: see `aggregate::ordered_set`).
    pub fn is_ordered_set(self) -> bool {
        matches!(
            self,
            AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode
        )
    }

    /// PostgreSQL's result type over an argument of type `arg` (`None` for
    /// `count(*)`); see `aggregate::funcs`.
    pub fn result_type(self, arg: Option<DataType>) -> DataType {
        crate::aggregate::funcs::result_type(self, arg)
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

    /// The first argument (`None` for `count(*)`).
    pub fn arg(&self) -> Option<&Expr> {
        self.args.first()
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

/// The comparison of an index scan key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKeyOp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    /// `column IS NULL` (the key's `value` is not used).
    IsNull,
}

/// One condition of an index scan: `key column op value`, on column
/// `column` of the index key (0 is the leading one). `value` is evaluated
/// when the scan starts: a constant, or a parameter a SubPlan substitutes
/// (PostgreSQL's runtime keys). The planner hands over equalities (or IS
/// NULL) on every column before the first one with a range, ranges on that
/// one only; several conditions on one column narrow each other.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexKey {
    pub column: usize,
    pub op: IndexKeyOp,
    pub value: Expr,
}

/// What a sequential scan of a columnar table has beyond a heap scan's
/// fields (see `columnar_scan`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnarSpec {
    /// Conjuncts of the scan's filter that row group statistics can rule
    /// out: a row group none of whose rows can pass one of them is not read.
    pub skip: Vec<SkipKey>,
    /// The probe keys of the hash join whose probe side this scan is
    /// (over the scan's output), when that join drops probe rows without a
    /// match: the join fills a filter of its build keys, and the scan drops
    /// rows whose keys are not in it (see `keyfilter`). Empty otherwise.
    pub join_keys: Vec<Expr>,
}

/// A condition `column op values` on one column of a columnar scan's
/// output (its position), with values known when the scan starts:
/// constants or parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SkipKey {
    pub column: usize,
    pub op: SkipOp,
    pub values: Vec<Expr>,
}

/// The comparison of a [`SkipKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipOp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
    /// Equal to one of the values (`IN (...)`).
    In,
    IsNull,
    IsNotNull,
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
        /// A columnar table's scan (see `columnar_scan`): `None` for a heap.
        columnar: Option<Box<ColumnarSpec>>,
    },
    /// Index scan: the btree `index_oid` yields the TIDs of the entries
    /// that satisfy `keys` (see [`IndexKey`]), in index order (reversed
    /// when `backward`); the visible tuples are fetched from the heap.
    /// Output as for `SeqScan`.
    IndexScan {
        table: String,
        alias: String,
        oid: u32,
        index: String,
        index_oid: u32,
        table_types: Vec<DataType>,
        columns: Vec<usize>,
        with_tid: bool,
        keys: Vec<IndexKey>,
        backward: bool,
        /// `Index Cond:` as EXPLAIN prints it.
        index_cond: String,
        filter: Option<Expr>,
        /// The index and its table as the planning transaction's catalog
        /// has them: an index created earlier in the same transaction is
        /// not in the committed catalog yet.
        defs: Arc<(tusk_storage::IndexDef, tusk_storage::TableDef)>,
        /// How the scan deforms its tuples, made by the first execution
        /// (a cached plan runs many).
        deform: LayoutCache,
    },
    /// The rows of set-returning calls side by side (see
    /// `function_scan`); with `ordinality`, a last column numbers them.
    FunctionScan {
        alias: String,
        calls: Vec<crate::srf::SetCall>,
        ordinality: bool,
        filter: Option<Expr>,
    },
    /// The rows of system relation `relation` (`pg_class`), every column
    /// of it, computed by `source` (see `systemscan`). EXPLAIN: `Seq Scan on
    /// relation alias`.
    SystemScan {
        relation: String,
        alias: String,
        source: crate::systemscan::SystemSource,
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
    /// Merge join of kind `kind` (inner, left, right, full, semi or anti;
    /// see `mergejoin`); children are [outer, inner], each sorted ascending
    /// on its keys with NULLs last (a Sort below each). Rows match when every
    /// outer key equals its inner key (NULL keys never match) and
    /// `join_filter` is true; a key pair has one type, or two integer types
    /// (`mergejoin::compared_as`). `outer_out`/`inner_out`, `join_filter`
    /// and the output as for [`NodeKind::HashJoin`].
    MergeJoin {
        kind: JoinKind,
        outer_keys: Vec<Expr>,
        inner_keys: Vec<Expr>,
        outer_out: Vec<usize>,
        inner_out: Vec<usize>,
        join_filter: Option<Expr>,
    },
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
    /// A join whose inner side (children[1]) reads the outer row through
    /// parameters: `LATERAL` (see `lateral`). For each outer row,
    /// `params[i]` (over the outer columns) replaces `Param
    /// { index: param_ids[i] }` in the inner plan, which is then run.
    /// `kind` is inner or left; `join_filter` is over (outer columns ++
    /// inner columns); the output is every outer column, then every inner
    /// column.
    LateralLoop {
        kind: JoinKind,
        join_filter: Option<Expr>,
        params: Vec<Expr>,
        param_ids: Vec<usize>,
    },
    /// Index nested loop join (PostgreSQL's Nested Loop over a
    /// parameterised Index Scan; see `index_nestloop`): children are
    /// [outer, inner], the inner an [`NodeKind::IndexScan`] whose key
    /// values read `Param { index: param_ids[i] }`; for each outer row
    /// `params[i]` (over the outer columns) gives those values and the
    /// index is probed with them. `kind` is inner, left, semi or anti;
    /// `join_filter` is over (all outer columns ++ all inner columns);
    /// `outer_out`/`inner_out` and the output as for
    /// [`NodeKind::HashJoin`].
    IndexNestLoop {
        kind: JoinKind,
        join_filter: Option<Expr>,
        params: Vec<Expr>,
        param_ids: Vec<usize>,
        outer_out: Vec<usize>,
        inner_out: Vec<usize>,
    },
    /// The rows of every child, child after child (PostgreSQL's Append);
    /// the children have the same column types.
    Append,
    /// PostgreSQL's Result: the rows of its first child (or, without a
    /// child, one row of no columns), unless `one_time_filter` — a
    /// condition evaluated once before anything else — is not true: then
    /// there are no rows and the first child is never executed. With a
    /// second child (the *init* child: one row, the values of the
    /// uncorrelated subqueries the condition reads, computed by SubPlans
    /// over one row of no columns), the condition reads that row's
    /// columns; otherwise it reads no columns.
    Result {
        one_time_filter: Option<Expr>,
    },
    /// Keeps the first row of each run of rows equal (NULLs equal) in the
    /// first `key_count` columns; the input must be sorted on them. DISTINCT
    /// (all columns) and DISTINCT ON (the ON expressions, placed first).
    Unique {
        keys: usize,
    },
    /// INTERSECT / EXCEPT [ALL] of children [left, right], whose columns
    /// have the same types; output has the left's columns. Hashed, spilling
    /// within `work_mem × hash_mem_multiplier` (EXPLAIN `HashSetOp ...`).
    SetOp {
        op: SetOpCmd,
        all: bool,
    },
    /// Window functions over input sorted by `partition` then `order` (the
    /// planner adds that Sort). Output: the input columns ++ one column per
    /// call, in order. Rows of one partition are buffered (spilling past
    /// `work_mem`).
    WindowAgg {
        partition: Vec<Expr>,
        order: Vec<SortKey>,
        calls: Vec<WindowCallSpec>,
    },
    /// Reads the statement's CTE number `cte` (`Statement::ctes[cte]`),
    /// evaluated at most once per statement and only as far as its readers
    /// need, shared by all its scans. EXPLAIN: `CTE Scan on name [alias]`.
    /// Parallel-restricted (never below a Gather).
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
    /// EXPLAIN: `WorkTable Scan on alias`. Parallel-restricted.
    WorkTableScan {
        work_table: usize,
        alias: String,
    },
    /// Appends one column per subplan, computed for each input row (see
    /// [`SubPlanSpec`]): input ++ one column per spec, in order. Not shown
    /// by EXPLAIN itself; its specs print as `SubPlan N` (correlated) or
    /// `InitPlan N (returns $k)` sections under the node that reads the
    /// columns.
    SubPlans {
        subplans: Vec<SubPlanSpec>,
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
/// | `RightSemi` | every inner row with at least one match, once | `inner_out` |
/// | `RightAnti` | every inner row without a match | `inner_out` |
///
/// `RightSemi` and `RightAnti` are `Semi` and `Anti` with the sides
/// swapped: the preserved side is the inner (build) input, so a hash join
/// can build the smaller side of an `EXISTS` / `NOT EXISTS` whose
/// subquery is the bigger one (PostgreSQL 16's `Hash Right Anti Join` and
/// 18's `Hash Right Semi Join`). Their `outer_out` is empty; only the hash
/// join runs them.
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
    RightSemi,
    RightAnti,
}

impl JoinKind {
    /// Whether the output carries inner columns (`inner_out`).
    pub fn emits_inner_columns(self) -> bool {
        self.emits_pairs() || self.is_right_semi_or_anti()
    }

    /// Whether the output carries outer columns (`outer_out`): all kinds
    /// but right semi and right anti.
    pub fn emits_outer_columns(self) -> bool {
        !self.is_right_semi_or_anti()
    }

    /// Whether matching pairs are output rows (inner, left, right, full).
    pub fn emits_pairs(self) -> bool {
        matches!(
            self,
            JoinKind::Inner | JoinKind::Left | JoinKind::Right | JoinKind::Full
        )
    }

    /// Right semi and right anti: kinds that emit inner rows alone.
    pub fn is_right_semi_or_anti(self) -> bool {
        matches!(self, JoinKind::RightSemi | JoinKind::RightAnti)
    }

    /// The kind that keeps what `self` keeps with the sides swapped, for
    /// semi and anti joins (`RightSemi`, `RightAnti`), and back.
    pub fn swapped_semi_or_anti(self) -> Option<JoinKind> {
        match self {
            JoinKind::Semi => Some(JoinKind::RightSemi),
            JoinKind::Anti => Some(JoinKind::RightAnti),
            JoinKind::RightSemi => Some(JoinKind::Semi),
            JoinKind::RightAnti => Some(JoinKind::Anti),
            _ => None,
        }
    }

    /// Whether each inner row carries a match bit that the join reads
    /// once the outer side is done, to emit the inner rows without a match
    /// (right, full, right anti) or with one (right semi).
    pub fn marks_inner(self) -> bool {
        self.keeps_unmatched_inner() || self == JoinKind::RightSemi
    }

    /// Whether outer rows without a match are emitted (left, full, anti, mark).
    pub fn keeps_unmatched_outer(self) -> bool {
        matches!(
            self,
            JoinKind::Left | JoinKind::Full | JoinKind::Anti | JoinKind::Mark { .. }
        )
    }

    /// Whether inner rows without a match are emitted (right, full, right
    /// anti).
    pub fn keeps_unmatched_inner(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full | JoinKind::RightAnti)
    }

    /// Whether what becomes of an outer row depends on whether it found a
    /// match (left, full, semi, anti, mark), so that a join keeps a state
    /// per outer row until its matches are all found.
    pub fn decides_outer_rows(self) -> bool {
        self.keeps_unmatched_outer() || self.first_match_only()
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
    /// is: outer rows are probed by one participant each, a right, full,
    /// right semi or right anti join marks matched inner rows in bits all
    /// participants share and the last participant to finish probing emits
    /// the unmatched (or matched) ones, and a
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
            JoinKind::RightSemi => "Right Semi",
            JoinKind::RightAnti => "Right Anti",
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
            NodeKind::MergeJoin { kind, .. } => Some(join("Merge", *kind)),
            NodeKind::NestedLoop { kind, .. }
            | NodeKind::LateralLoop { kind, .. }
            | NodeKind::IndexNestLoop { kind, .. } => Some(join("Nested Loop", *kind)),
            NodeKind::Append => Some("Append".into()),
            NodeKind::Result { .. } => Some("Result".into()),
            _ => None,
        }
    }

    /// Lines tusk adds below PostgreSQL's for this node in EXPLAIN: a mark
    /// join, which PostgreSQL does not have, says what it is
    /// (`tusk: mark join` or `tusk: mark join, null-aware`); a columnar scan
    /// the hash join above filters by its build keys says so (`tusk: join
    /// key filter`, see `keyfilter`).
    pub fn explain_notes(&self) -> Vec<String> {
        match self {
            NodeKind::SeqScan {
                columnar: Some(spec),
                ..
            } if !spec.join_keys.is_empty() => vec!["tusk: join key filter".into()],
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

/// What a SubPlan computes for each outer row.
#[derive(Debug, Clone, PartialEq)]
pub enum SubPlanKind {
    /// Whether the subplan returns a row (boolean, never NULL).
    Exists,
    /// The single value of its first column (NULL for no row; more than one
    /// row is error 21000). Type: the subplan's first column's.
    Scalar,
    /// `test` over (subplan row, outer parameters) is true for some row;
    /// else NULL if it was NULL for some row; else false (also for no rows).
    /// `test` reads the subplan's columns as `Column` 0.. and outer values
    /// as `Param`.
    Any { test: Expr },
    /// `test` is true for every row (also for no rows); else false if it
    /// was false for some row; else NULL.
    All { test: Expr },
    /// `test` over the only row (`(a, b) = (SELECT x, y ...)`): NULL for
    /// no row, error 21000 for more than one.
    RowCompare { test: Expr },
}

/// A subquery the executor runs per outer row: `params[i]`, evaluated on
/// the outer row, replaces `Expr::Param { index: param_ids[i] }` everywhere
/// inside `plan` and `kind`'s test, nested SubPlans included. Parameter
/// numbers are unique in a statement, so substituting an outer level's
/// parameters never touches an inner level's. A subplan whose plan uses
/// none of its parameters runs once and is cached (PostgreSQL's InitPlan,
/// or its hashed SubPlan for `= ANY`).
#[derive(Debug, Clone, PartialEq)]
pub struct SubPlanSpec {
    pub plan: Plan,
    pub kind: SubPlanKind,
    pub params: Vec<Expr>,
    pub param_ids: Vec<usize>,
    /// Statement-wide number for EXPLAIN (`SubPlan 1`).
    pub number: usize,
    /// Whether the plan reads the column above the node that consumes it.
    /// A Filter directly above the SubPlans node computes the column only
    /// where its predicate reaches it (see `subplan::deferred`), and passes
    /// it on computed for its passing rows when this is set, NULL when not.
    pub needed_above: bool,
}

impl SubPlanSpec {
    /// The type of the column the subplan adds.
    pub fn result_type(&self) -> DataType {
        match self.kind {
            SubPlanKind::Scalar => self.plan.output.first().copied().unwrap_or(DataType::Text),
            _ => DataType::Bool,
        }
    }
}

/// A plan together with the CTEs it scans: `CteScan { cte }` reads
/// `ctes[cte]`. Build it with `build::build_statement`, which makes the CTE
/// plans available to every scan of the statement (subplans included).
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub root: Plan,
    pub ctes: Vec<Plan>,
}

impl Statement {
    /// Numbers the nodes of the root and then of each CTE plan in one
    /// sequence, so that all index one statistics vector; returns the count.
    pub fn assign_ids(&mut self) -> usize {
        let mut next = self.root.assign_ids();
        for c in &mut self.ctes {
            next = c.assign_ids_from(next);
        }
        next
    }

    /// The number of nodes `assign_ids` numbers (root, CTEs, subplans).
    pub fn node_count(&self) -> usize {
        self.root.assign_ids_count() + self.ctes.iter().map(Plan::assign_ids_count).sum::<usize>()
    }
}

/// One window function call: `func(args) FILTER (WHERE filter) OVER (... frame)`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCallSpec {
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
    Aggregate(AggFunc),
}

/// `{ROWS | RANGE | GROUPS} BETWEEN start AND end [EXCLUDE ...]`. The
/// default (no frame clause) is `RANGE BETWEEN UNBOUNDED PRECEDING AND
/// CURRENT ROW`: with ORDER BY the rows up to the current row's last peer,
/// without it the whole partition.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
    pub exclude: FrameExclude,
}

impl WindowFrame {
    /// PostgreSQL's default frame, `RANGE UNBOUNDED PRECEDING` to the current
    /// row and its peers; without ORDER BY every row is a peer, so the frame
    /// is the whole partition (the same frame either way).
    pub fn default_for(_ordered: bool) -> WindowFrame {
        WindowFrame::default()
    }
}

impl Default for WindowFrame {
    fn default() -> Self {
        WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
            exclude: FrameExclude::NoOthers,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
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
pub enum SetOpCmd {
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
    /// Types of the output columns (shared: a cached plan is cloned for
    /// every execution).
    pub output: Arc<[DataType]>,
    /// Display names of the output columns (for EXPLAIN's expressions).
    pub names: Arc<[String]>,
    pub est: Estimate,
}

impl Plan {
    pub fn new(
        kind: NodeKind,
        children: Vec<Plan>,
        output: impl Into<Arc<[DataType]>>,
        names: impl Into<Arc<[String]>>,
        est: Estimate,
    ) -> Plan {
        Plan {
            id: 0,
            kind,
            children,
            output: output.into(),
            names: names.into(),
            est,
        }
    }

    /// Calls `f` on every expression of every node of the tree — filters,
    /// projections, keys, aggregate and window arguments, frame offsets —
    /// and inside SubPlans nodes on their parameters, tests and plans.
    /// Substituting an outer row's parameter values this way instantiates a
    /// subplan for that row.
    pub fn for_each_expr_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        let keys = |ks: &mut Vec<SortKey>, f: &mut dyn FnMut(&mut Expr)| {
            ks.iter_mut().for_each(|k| f(&mut k.expr))
        };
        match &mut self.kind {
            NodeKind::SeqScan { filter, .. } | NodeKind::SystemScan { filter, .. } => {
                filter.iter_mut().for_each(&mut *f)
            }
            NodeKind::IndexScan {
                keys: index_keys,
                filter,
                ..
            } => {
                index_keys.iter_mut().for_each(|k| f(&mut k.value));
                filter.iter_mut().for_each(&mut *f);
            }
            NodeKind::FunctionScan { calls, filter, .. } => {
                calls
                    .iter_mut()
                    .flat_map(|c| c.args.iter_mut())
                    .for_each(&mut *f);
                filter.iter_mut().for_each(&mut *f);
            }
            NodeKind::Values { rows } => rows.iter_mut().flatten().for_each(&mut *f),
            NodeKind::Project { exprs } => exprs.iter_mut().for_each(&mut *f),
            NodeKind::Filter { predicate } => f(predicate),
            NodeKind::HashJoin {
                outer_keys,
                inner_keys,
                join_filter,
                ..
            }
            | NodeKind::MergeJoin {
                outer_keys,
                inner_keys,
                join_filter,
                ..
            } => {
                outer_keys.iter_mut().for_each(&mut *f);
                inner_keys.iter_mut().for_each(&mut *f);
                join_filter.iter_mut().for_each(&mut *f);
            }
            NodeKind::NestedLoop { join_filter, .. } => join_filter.iter_mut().for_each(&mut *f),
            NodeKind::LateralLoop {
                join_filter,
                params,
                ..
            }
            | NodeKind::IndexNestLoop {
                join_filter,
                params,
                ..
            } => {
                join_filter.iter_mut().for_each(&mut *f);
                params.iter_mut().for_each(&mut *f);
            }
            NodeKind::Result { one_time_filter } => one_time_filter.iter_mut().for_each(&mut *f),
            NodeKind::Aggregate { group, aggs, .. } => {
                group.iter_mut().for_each(&mut *f);
                for a in aggs {
                    a.args.iter_mut().for_each(&mut *f);
                    a.filter.iter_mut().for_each(&mut *f);
                    keys(&mut a.order_by, f);
                }
            }
            NodeKind::Sort { keys: ks, .. } => keys(ks, f),
            NodeKind::WindowAgg {
                partition,
                order,
                calls,
            } => {
                partition.iter_mut().for_each(&mut *f);
                keys(order, f);
                for c in calls {
                    c.args.iter_mut().for_each(&mut *f);
                    c.filter.iter_mut().for_each(&mut *f);
                    for b in [&mut c.frame.start, &mut c.frame.end] {
                        if let FrameBound::Preceding(e) | FrameBound::Following(e) = b {
                            f(e);
                        }
                    }
                }
            }
            NodeKind::SubPlans { subplans } => {
                for s in subplans {
                    s.params.iter_mut().for_each(&mut *f);
                    if let SubPlanKind::Any { test }
                    | SubPlanKind::All { test }
                    | SubPlanKind::RowCompare { test } = &mut s.kind
                    {
                        f(test);
                    }
                    s.plan.for_each_expr_mut(f);
                }
            }
            NodeKind::Hash
            | NodeKind::Gather { .. }
            | NodeKind::Limit { .. }
            | NodeKind::Append
            | NodeKind::Unique { .. }
            | NodeKind::SetOp { .. }
            | NodeKind::CteScan { .. }
            | NodeKind::RecursiveUnion { .. }
            | NodeKind::WorkTableScan { .. } => {}
        }
        for c in &mut self.children {
            c.for_each_expr_mut(f);
        }
    }

    /// Whether any expression of the tree reads a `Param` that `wanted`
    /// accepts.
    pub fn uses_params(&self, wanted: &dyn Fn(usize) -> bool) -> bool {
        let mut copy = self.clone();
        let mut found = false;
        copy.for_each_expr_mut(&mut |e| found = found || e.uses_params(wanted));
        found
    }

    /// Number of nodes in the tree, subplans included.
    pub fn assign_ids_count(&self) -> usize {
        let mut n = 1 + self
            .children
            .iter()
            .map(|c| c.assign_ids_count())
            .sum::<usize>();
        if let NodeKind::SubPlans { subplans } = &self.kind {
            n += subplans
                .iter()
                .map(|s| s.plan.assign_ids_count())
                .sum::<usize>();
        }
        n
    }

    /// Numbers the nodes in pre-order (a SubPlans node's subplans after its
    /// children); returns the node count.
    pub fn assign_ids(&mut self) -> usize {
        self.assign_ids_from(0)
    }

    /// Numbers the nodes from `first`; returns the next free number.
    pub fn assign_ids_from(&mut self, first: usize) -> usize {
        fn walk(p: &mut Plan, next: &mut usize) {
            p.id = *next;
            *next += 1;
            for c in &mut p.children {
                walk(c, next);
            }
            if let NodeKind::SubPlans { subplans } = &mut p.kind {
                for s in subplans {
                    walk(&mut s.plan, next);
                }
            }
        }
        let mut n = first;
        walk(self, &mut n);
        n
    }
}

impl Plan {
    /// Whether the plan could run backward without materialising its rows,
    /// by PostgreSQL's rule (`ExecSupportsBackwardScan`): scans, sorts,
    /// CTE scans and literal rows can; joins, aggregation, window functions,
    /// set operations, parallel plans and a `SELECT` without `FROM` (one
    /// row: PostgreSQL's Result) cannot; projections, filters, limits and
    /// subplan columns follow their input, an Append all of its. A cursor
    /// declared without SCROLL or NO SCROLL is scrollable when this holds,
    /// as in PostgreSQL.
    pub fn supports_backward_scan(&self) -> bool {
        let child = |i: usize| {
            self.children
                .get(i)
                .is_some_and(Plan::supports_backward_scan)
        };
        match &self.kind {
            NodeKind::SeqScan { parallel, .. } => !parallel,
            NodeKind::IndexScan { .. }
            | NodeKind::FunctionScan { .. }
            | NodeKind::SystemScan { .. }
            | NodeKind::CteScan { .. }
            | NodeKind::Sort { .. } => true,
            NodeKind::Values { rows } => rows.len() > 1,
            NodeKind::Project { .. }
            | NodeKind::Filter { .. }
            | NodeKind::Limit { .. }
            | NodeKind::SubPlans { .. }
            | NodeKind::Result { .. } => child(0),
            NodeKind::Append => self.children.iter().all(Plan::supports_backward_scan),
            NodeKind::HashJoin { .. }
            | NodeKind::MergeJoin { .. }
            | NodeKind::Hash
            | NodeKind::Aggregate { .. }
            | NodeKind::Gather { .. }
            | NodeKind::NestedLoop { .. }
            | NodeKind::LateralLoop { .. }
            | NodeKind::IndexNestLoop { .. }
            | NodeKind::Unique { .. }
            | NodeKind::SetOp { .. }
            | NodeKind::WindowAgg { .. }
            | NodeKind::RecursiveUnion { .. }
            | NodeKind::WorkTableScan { .. } => false,
        }
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
        assert_eq!(
            name(hash(JoinKind::RightSemi, false)),
            "Hash Right Semi Join"
        );
        assert_eq!(
            name(hash(JoinKind::RightAnti, true)),
            "Parallel Hash Right Anti Join"
        );
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
