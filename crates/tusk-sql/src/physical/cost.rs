//! Cost constants and estimates, in PostgreSQL's units (one sequential
//! page read = 1.0).
//!
//! [`selectivity`] holds PostgreSQL's defaults for an unknown distribution
//! (`DEFAULT_EQ_SEL` 0.005, `DEFAULT_INEQ_SEL` one third); the estimates
//! from ANALYZE's statistics are in `estimate`, which falls back to these.

use tusk_exec::expr::CmpOp;
use tusk_exec::{Estimate, Expr};
use tusk_storage::DataType;

pub const SEQ_PAGE_COST: f64 = 1.0;
pub const RANDOM_PAGE_COST: f64 = 4.0;
pub const CPU_TUPLE_COST: f64 = 0.01;
pub const CPU_INDEX_TUPLE_COST: f64 = 0.005;
pub const CPU_OPERATOR_COST: f64 = 0.0025;
/// PostgreSQL's cost penalty for a disabled plan method.
pub const DISABLE_COST: f64 = 1.0e10;

/// Rows a Parallel Seq Scan must be estimated at before it pays (at the
/// default `min_parallel_table_scan_size` of 8 MB, ~100k narrow rows).
pub const MIN_PARALLEL_ROWS: f64 = 100_000.0;
pub const DEFAULT_MIN_PARALLEL_SCAN: f64 = (8 << 20) as f64;

/// The fraction of rows a predicate is guessed to keep.
pub fn selectivity(e: &Expr) -> f64 {
    match e {
        Expr::Cmp { op: CmpOp::Eq, .. } => 0.005,
        Expr::Cmp { op: CmpOp::Ne, .. } => 0.995,
        Expr::Cmp { .. } => 0.3333,
        Expr::And(terms) => terms.iter().map(selectivity).product(),
        Expr::Or(terms) => 1.0 - terms.iter().map(|t| 1.0 - selectivity(t)).product::<f64>(),
        Expr::InList { list, negated, .. } => {
            let s = (0.005 * list.len() as f64).min(0.5);
            if *negated {
                1.0 - s
            } else {
                s
            }
        }
        Expr::Not(a) => 1.0 - selectivity(a),
        Expr::IsNull { negated: false, .. } => 0.005,
        Expr::IsNull { negated: true, .. } => 0.995,
        Expr::BoolTest { arg, test } => bool_test_selectivity(*test, selectivity(arg), 0.005),
        Expr::Like { .. } => 0.005,
        _ => 0.5,
    }
}

/// PostgreSQL's `booltestsel`: `IS [NOT] TRUE` and `IS [NOT] FALSE` keep
/// the argument's own selectivity `arg` (or its complement), `IS [NOT]
/// UNKNOWN` the fraction of NULLs `nulls` (`DEFAULT_UNK_SEL`, 0.005,
/// without statistics) or its complement.
pub fn bool_test_selectivity(test: tusk_exec::expr::BoolTest, arg: f64, nulls: f64) -> f64 {
    use tusk_exec::expr::BoolTest as B;
    match test {
        B::IsTrue | B::IsNotFalse => arg,
        B::IsFalse | B::IsNotTrue => 1.0 - arg,
        B::IsUnknown => nulls,
        B::IsNotUnknown => 1.0 - nulls,
    }
}

/// Bytes PostgreSQL would estimate for a value of the type.
pub fn type_width(t: DataType) -> u32 {
    match t.fixed_width() {
        Some(w) if t != DataType::Numeric => w as u32,
        _ => 32,
    }
}

pub fn width_of(types: &[DataType]) -> u32 {
    types.iter().map(|&t| type_width(t)).sum()
}

/// An estimate of `rows` rows costing `total` with no startup cost.
pub fn flat(rows: f64, total: f64, width: u32) -> Estimate {
    Estimate {
        startup_cost: 0.0,
        total_cost: total,
        rows: rows.max(1.0).round(),
        width,
    }
}

/// Operator evaluations per row for `e`, counted as PostgreSQL's
/// `cost_qual_eval` does with every built-in's `procost` of 1: each
/// operator, function call and type-converting cast is one; columns,
/// constants, AND/OR/NOT, null tests and COALESCE are free; an `IN` list is
/// half its length (the expected position of a match).
pub fn eval_cost(e: &Expr) -> f64 {
    let sum = |xs: &[Expr]| xs.iter().map(eval_cost).sum::<f64>();
    match e {
        Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. } => 0.0,
        Expr::Arith { first, rest, .. } => {
            eval_cost(first) + rest.iter().map(|(_, x)| 1.0 + eval_cost(x)).sum::<f64>()
        }
        Expr::Neg { arg, .. } | Expr::BpcharToText(arg) | Expr::Typmod { arg, .. } => {
            1.0 + eval_cost(arg)
        }
        Expr::Cast { arg, to } => {
            let relabel = matches!(
                (arg.data_type(), to),
                (
                    DataType::Text | DataType::Varchar,
                    DataType::Text | DataType::Varchar
                )
            );
            f64::from(u8::from(!relabel)) + eval_cost(arg)
        }
        Expr::Cmp { left, right, .. }
        | Expr::IsDistinct { left, right, .. }
        | Expr::NullIf { left, right } => 1.0 + eval_cost(left) + eval_cost(right),
        Expr::Like { arg, pattern, .. } | Expr::Regex { arg, pattern, .. } => {
            1.0 + eval_cost(arg) + eval_cost(pattern)
        }
        Expr::And(xs) | Expr::Or(xs) | Expr::Coalesce(xs) | Expr::RowIsNull { fields: xs, .. } => {
            sum(xs)
        }
        Expr::Not(arg) | Expr::IsNull { arg, .. } | Expr::BoolTest { arg, .. } => eval_cost(arg),
        Expr::Concat(parts) => (parts.len().saturating_sub(1)) as f64 + sum(parts),
        Expr::Case {
            operand,
            whens,
            otherwise,
            ..
        } => {
            let compare = f64::from(u8::from(operand.is_some()));
            operand.as_deref().map_or(0.0, eval_cost)
                + whens
                    .iter()
                    .map(|(w, t)| compare + eval_cost(w) + eval_cost(t))
                    .sum::<f64>()
                + otherwise.as_deref().map_or(0.0, eval_cost)
        }
        Expr::MinMax { args, .. } => 1.0 + sum(args),
        Expr::RowCompare { left, right, .. } => left.len() as f64 + sum(left) + sum(right),
        Expr::InList { arg, list, .. } => eval_cost(arg) + 0.5 * list.len() as f64 + sum(list),
        Expr::Call { args, .. } => 1.0 + sum(args),
        Expr::Array { elems, .. } => sum(elems),
        Expr::Subscript { array, index, .. } => 1.0 + eval_cost(array) + eval_cost(index),
        // PostgreSQL's estimate: the operator runs on half the elements (of
        // a constant array, else of an array of 10).
        Expr::AnyArray { arg, array, .. } => {
            let n = match array.as_ref() {
                Expr::Const {
                    value: tusk_exec::Value::Array(a),
                    ..
                } => a.items.len(),
                Expr::Array { elems, .. } => elems.len(),
                _ => 10,
            };
            0.5 * n as f64 + eval_cost(arg) + eval_cost(array)
        }
    }
}

/// What one evaluation of a correlated SubPlan of `kind` over a plan
/// estimated `plan` costs, as PostgreSQL's `cost_subplan` charges it per
/// outer row: the plan's startup every time, and of its run cost the part
/// the answer needs (one row for EXISTS, half the rows with a comparison
/// each for ANY/ALL, every row otherwise).
pub fn correlated_subplan_cost(kind: &tusk_exec::plan::SubPlanKind, plan: &Estimate) -> f64 {
    use tusk_exec::plan::SubPlanKind;
    let run = plan.total_cost - plan.startup_cost;
    let fetched = match kind {
        SubPlanKind::Exists => run / plan.rows.max(1.0),
        SubPlanKind::Any { .. } | SubPlanKind::All { .. } => {
            0.5 * run + 0.5 * plan.rows * CPU_OPERATOR_COST
        }
        _ => run,
    };
    plan.startup_cost + fetched
}

/// Conjuncts in the order a filter evaluates them: cheapest first, ties in
/// their written order (PostgreSQL's `order_qual_clauses`). Besides speed,
/// this decides which rows reach an expression that can fail: in
/// `x * x <= x AND x * x >= x / 0` the division is never reached for a row
/// the cheaper test rejects, in PostgreSQL and so in tusk.
pub fn order_quals(quals: Vec<Expr>) -> Vec<Expr> {
    order_quals_with(quals, |_| 0.0)
}

/// [`order_quals`] where each qual also costs `extra(qual)`: what a
/// subquery the logical plan has turned into a join would cost PostgreSQL,
/// which evaluates it in place as a SubPlan (see `rewrite::pushdown`).
pub fn order_quals_with(quals: Vec<Expr>, extra: impl Fn(&Expr) -> f64) -> Vec<Expr> {
    let mut costed: Vec<(f64, Expr)> = quals
        .into_iter()
        .map(|q| (eval_cost(&q) + extra(&q), q))
        .collect();
    costed.sort_by(|a, b| a.0.total_cmp(&b.0));
    costed.into_iter().map(|(_, q)| q).collect()
}

/// The conjunction of `quals` (each flattened into its conjuncts) in
/// evaluation order ([`order_quals`]); `None` when there are none.
pub fn ordered_and(quals: Vec<Expr>) -> Option<Expr> {
    let mut flat = Vec::new();
    for q in quals {
        crate::logical::conjuncts(q, &mut flat);
    }
    Expr::and_all(order_quals(flat))
}

/// `final_cost_hashjoin`'s comparisons of each of `probe_rows` probe rows
/// with half its bucket of a hash table of `build_rows` rows whose bucket
/// holds `bucket_fraction` of them, each comparison costing `compare` (a
/// key of few distinct values on the build side makes the join dearer).
pub(crate) fn bucket_compare_cost(
    probe_rows: f64,
    build_rows: f64,
    bucket_fraction: f64,
    compare: f64,
) -> f64 {
    let bucket_rows = (build_rows * bucket_fraction).round().max(1.0);
    compare * probe_rows * bucket_rows * 0.5
}
