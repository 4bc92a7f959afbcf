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
//!
//! Folding can also remove the only reference to a subquery's value:
//! `(1, (SELECT ...)) <> (2, x)` is true whatever the subquery returns.
//! PostgreSQL's SubPlan is part of the expression and goes with it, so it
//! never runs (nor raises `more than one row returned by a subquery`);
//! [`drop_unread_subqueries`] removes such subqueries here.

use crate::error::SqlError;
use crate::logical::{expr_columns, ColumnId, Logical};
use std::collections::HashSet;
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

/// Removes the subqueries (Apply nodes below a projection, among the
/// filters and Applies over its input) whose value no expression of the
/// plan reads any longer (see the module doc). Runs after [`fold_plan`].
pub fn drop_unread_subqueries(plan: &mut Logical) {
    let mut read = HashSet::new();
    collect_read(plan, &mut read);
    drop_unread(plan, &read);
}

fn collect_read(plan: &Logical, read: &mut HashSet<ColumnId>) {
    plan.for_each_expr(&mut |e| read.extend(expr_columns(e)));
    for c in plan.children() {
        collect_read(c, read);
    }
}

fn drop_unread(plan: &mut Logical, read: &HashSet<ColumnId>) {
    if let Logical::Project { input, .. } = plan {
        let taken = std::mem::replace(input.as_mut(), Logical::unit());
        **input = without_unread(taken, read);
    }
    for c in plan.children_mut() {
        drop_unread(c, read);
    }
}

/// `plan` without the unread Applies of its chain of Applies and filters
/// (the projection above names every column it passes on, so nothing else
/// can read theirs).
fn without_unread(plan: Logical, read: &HashSet<ColumnId>) -> Logical {
    match plan {
        Logical::Apply {
            input,
            subquery,
            kind,
            out,
        } => {
            let input = without_unread(*input, read);
            if read.contains(&out) {
                Logical::Apply {
                    input: Box::new(input),
                    subquery,
                    kind,
                    out,
                }
            } else {
                input
            }
        }
        Logical::Filter { input, predicate } => Logical::Filter {
            input: Box::new(without_unread(*input, read)),
            predicate,
        },
        other => other,
    }
}
