//! Constant folding of the logical plan's expressions, in the order
//! PostgreSQL's `eval_const_expressions` folds (tusk-exec's `Expr::fold`
//! holds the rules and their reasons).
//!
//! Which expressions get evaluated at plan time decides which errors a
//! statement raises, so the order matters as much as the result: a strict
//! operator with a NULL constant argument is NULL without being evaluated;
//! a node over constants is evaluated now, and its error is the statement's
//! error even if no row would reach it (`select 1/0 from t where false`
//! fails in PostgreSQL); `AND false` stops folding the terms after it, so
//! `(s || i)::boolean AND false` never evaluates the cast. A filter that
//! folds to `false` or NULL then empties its subtree (`rewrite::pushdown`).

use crate::error::SqlError;
use crate::logical::Logical;
use tusk_exec::{Expr, Value};

type Result<T> = std::result::Result<T, SqlError>;

/// Evaluates an expression without column references.
pub fn eval_constant(e: &Expr) -> Result<Value> {
    Ok(e.eval_const()?)
}

/// Folds one expression.
pub fn fold(e: Expr) -> Result<Expr> {
    Ok(e.fold()?)
}

/// Folds every expression of a logical plan.
pub fn fold_plan(plan: &mut Logical) -> Result<()> {
    let mut failure = None;
    plan.for_each_expr_mut(&mut |e| {
        if failure.is_some() {
            return;
        }
        let taken = std::mem::replace(
            e,
            Expr::Const {
                value: Value::Null,
                ty: tusk_storage::DataType::Bool,
            },
        );
        match fold(taken) {
            Ok(f) => *e = f,
            Err(x) => failure = Some(x),
        }
    });
    if let Some(x) = failure {
        return Err(x);
    }
    for c in plan.children_mut() {
        fold_plan(c)?;
    }
    Ok(())
}
