//! Cost constants and estimates, in PostgreSQL's units (one sequential
//! page read = 1.0).
//!
//! Until ANALYZE keeps statistics, selectivities are PostgreSQL's defaults
//! for an unknown distribution (`DEFAULT_EQ_SEL` 0.005, `DEFAULT_INEQ_SEL`
//! one third) and a join of two relations on equality keys is estimated at
//! the larger side's row count (a foreign key joining a primary key).

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
        Expr::Like { .. } => 0.005,
        _ => 0.5,
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
