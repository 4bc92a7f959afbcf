//! `x [NOT] BETWEEN [SYMMETRIC] lo AND hi`, bound as PostgreSQL's
//! `transformAExprBetween` rewrites it before binding:
//!
//! | form | comparisons |
//! |---|---|
//! | `BETWEEN` | `x >= lo AND x <= hi` |
//! | `NOT BETWEEN` | `x < lo OR x > hi` |
//! | `BETWEEN SYMMETRIC` | `(x >= lo AND x <= hi) OR (x >= hi AND x <= lo)` |
//! | `NOT BETWEEN SYMMETRIC` | `(x < lo OR x > hi) AND (x < hi OR x > lo)` |
//!
//! Each comparison binds its own copies of its operands, in the written
//! order: the first comparison is resolved (and fails) before `hi` is
//! bound, and a subquery in `x` is two subqueries (four when symmetric),
//! each an InitPlan placed with its own comparison. `SYMMETRIC` reaches
//! the binder as a call around `lo` (see `parse::between`).

use super::{Binder, ExprCtx, Result, B};
use sqlparser::ast as A;
use tusk_exec::Expr;

impl Binder<'_> {
    pub(crate) fn between(
        &mut self,
        x: &A::Expr,
        negated: bool,
        low: &A::Expr,
        high: &A::Expr,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        let (ge, le) = if negated {
            (A::BinaryOperator::Lt, A::BinaryOperator::Gt)
        } else {
            (A::BinaryOperator::GtEq, A::BinaryOperator::LtEq)
        };
        let mut range = |this: &mut Self, lo: &A::Expr, hi: &A::Expr| -> Result<Expr> {
            let x1 = this.expr(x, ctx)?;
            let lo = this.expr(lo, ctx)?;
            let low_test = this.binary(x1, &ge, lo)?;
            let x2 = this.expr(x, ctx)?;
            let hi = this.expr(hi, ctx)?;
            let high_test = this.binary(x2, &le, hi)?;
            Ok(if negated {
                Expr::or(low_test.e, high_test.e)
            } else {
                Expr::and(low_test.e, high_test.e)
            })
        };
        let Some(low) = crate::parse::symmetric_low(low) else {
            return Ok(B::known(range(self, low, high)?));
        };
        let forward = range(self, low, high)?;
        let backward = range(self, high, low)?;
        Ok(B::known(if negated {
            Expr::and(forward, backward)
        } else {
            Expr::or(forward, backward)
        }))
    }
}
