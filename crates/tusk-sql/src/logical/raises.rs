//! Whether running a logical subtree can raise an error.
//!
//! Decorrelation runs a subquery once over all its rows where PostgreSQL's
//! SubPlan runs it per outer row, over only the rows that row's
//! parameters select; and it runs it even when no outer row reaches it. The
//! two agree on every outcome only when nothing in the subquery can fail
//! on the rows only one of them reads. [`Logical::cannot_raise`] answers
//! that conservatively: every expression must pass
//! [`Expr::cannot_raise`](tusk_exec::Expr::cannot_raise), every aggregate
//! must be one whose transition cannot fail on its argument type, and the
//! tree may hold only nodes that evaluate nothing else (scans, filters,
//! projections, joins, aggregates, sorts, limits, DISTINCT, set operations,
//! VALUES). Table functions, nested subqueries, CTE and work-table scans
//! and window functions count as able to fail.

use super::Logical;
use tusk_exec::plan::{AggCall, AggFunc};
use tusk_storage::DataType;

impl Logical {
    /// Whether no row can make running this subtree raise an error (see
    /// the module doc); false when unsure.
    pub fn cannot_raise(&self) -> bool {
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            if !node_cannot_raise(node) {
                return false;
            }
            let mut exprs_ok = true;
            node.for_each_expr(&mut |e| exprs_ok &= e.cannot_raise());
            if !exprs_ok {
                return false;
            }
            stack.extend(node.children());
        }
        true
    }
}

fn node_cannot_raise(node: &Logical) -> bool {
    match node {
        Logical::Get { .. }
        | Logical::Values { .. }
        | Logical::Filter { .. }
        | Logical::Project { .. }
        | Logical::Join { .. }
        | Logical::Distinct { .. }
        | Logical::SetOp { .. }
        | Logical::Sort { .. }
        | Logical::Limit { .. } => true,
        Logical::Aggregate { aggs, .. } => aggs.iter().all(|(_, a)| aggregate_cannot_raise(a)),
        Logical::TableFunc { .. }
        | Logical::OneTimeFilter { .. }
        | Logical::DependentJoin { .. }
        | Logical::Apply { .. }
        | Logical::Window { .. }
        | Logical::CteRef { .. }
        | Logical::RecursiveUnion { .. }
        | Logical::WorkTable { .. } => false,
    }
}

/// Counting, min/max, boolean and bit folds and collecting never fail;
/// sums, averages and variances only over integers and `numeric`, whose
/// accumulators are exact (a `float` one can overflow).
fn aggregate_cannot_raise(a: &AggCall) -> bool {
    let arg = a.args.first().map(|e| e.data_type());
    match a.func {
        AggFunc::CountStar
        | AggFunc::Count
        | AggFunc::Min
        | AggFunc::Max
        | AggFunc::BoolAnd
        | AggFunc::BoolOr
        | AggFunc::Every
        | AggFunc::StringAgg
        | AggFunc::BitAnd
        | AggFunc::BitOr
        | AggFunc::ArrayAgg
        | AggFunc::JsonAgg
        | AggFunc::JsonbAgg
        | AggFunc::Mode => true,
        // A NULL key raises.
        AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg => false,
        // A percentile out of range raises; so can interpolating.
        AggFunc::PercentileCont | AggFunc::PercentileDisc => false,
        AggFunc::Sum
        | AggFunc::Avg
        | AggFunc::Stddev
        | AggFunc::StddevSamp
        | AggFunc::StddevPop
        | AggFunc::Variance
        | AggFunc::VarSamp
        | AggFunc::VarPop => matches!(
            arg,
            Some(DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Numeric)
        ),
    }
}
