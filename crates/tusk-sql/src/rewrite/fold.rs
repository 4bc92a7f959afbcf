//! Constant folding, in the order PostgreSQL's `eval_const_expressions`
//! folds.
//!
//! Which expressions get evaluated at plan time decides which errors a
//! statement raises, so the order matters as much as the result:
//!
//! * Arguments are folded first, then the node. A strict operator or cast
//!   with a NULL constant argument is NULL without being evaluated; with
//!   all arguments constant it is evaluated now, and an error (division by
//!   zero, `integer out of range`) is the statement's error even if no row
//!   would reach it, exactly as in PostgreSQL (`select 1/0 from t where
//!   false` fails).
//! * `AND` drops `true` arguments and is `false` as soon as one argument
//!   folds to `false`; `OR` symmetrically. An argument that is not
//!   constant is kept, so `(s || i)::boolean AND false` folds to `false`
//!   and the cast never runs.
//! * `COALESCE` drops NULL constants and stops at the first non-NULL
//!   constant: later arguments are not folded, so their errors do not
//!   happen.
//!
//! Every expression of the logical plan goes through [`fold`]; a filter
//! that folds to `false` or NULL then empties its subtree (see
//! `rewrite::prune`).

use crate::error::SqlError;
use crate::logical::exprs::try_map_children;
use tusk_exec::vector::Batch;
use tusk_exec::{Expr, Value};

type Result<T> = std::result::Result<T, SqlError>;

/// Evaluates an expression without column references.
pub fn eval_constant(e: &Expr) -> Result<Value> {
    let batch = Batch::new(vec![], 1);
    let v = e.eval(&batch)?;
    Ok(v.value_as(0, e.data_type()))
}

fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Const { .. })
}

fn is_null_const(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Const {
            value: Value::Null,
            ..
        }
    )
}

fn bool_const(e: &Expr) -> Option<bool> {
    match e {
        Expr::Const {
            value: Value::Bool(b),
            ..
        } => Some(*b),
        _ => None,
    }
}

fn null_of(e: &Expr) -> Expr {
    Expr::Const {
        value: Value::Null,
        ty: e.data_type(),
    }
}

/// Whether the node is a strict operator: NULL in any argument gives NULL.
fn is_strict(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Arith { .. }
            | Expr::Neg { .. }
            | Expr::Cmp { .. }
            | Expr::Cast { .. }
            | Expr::Concat { .. }
            | Expr::Like { .. }
            | Expr::BpcharToText(_)
    )
}

/// Folds `e` (see the module doc for the order).
pub fn fold(e: Expr) -> Result<Expr> {
    match e {
        Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. } => Ok(e),
        Expr::And(..) | Expr::Or(..) => fold_bool_op(e),
        Expr::Coalesce(args) => {
            let mut out = Vec::new();
            let ty = args[0].data_type();
            for a in args {
                let a = fold(a)?;
                if is_null_const(&a) {
                    continue;
                }
                let stop = is_const(&a);
                out.push(a);
                if stop {
                    break;
                }
            }
            Ok(match out.len() {
                0 => Expr::Const {
                    value: Value::Null,
                    ty,
                },
                1 => out.pop().unwrap(),
                _ => Expr::Coalesce(out),
            })
        }
        e => {
            let e = try_map_children(e, &mut fold)?;
            let mut all_const = true;
            let mut any_null = false;
            e.for_each_child(|c| {
                all_const &= is_const(c);
                any_null |= is_null_const(c);
            });
            if is_strict(&e) && any_null {
                return Ok(null_of(&e));
            }
            if all_const && folds_when_constant(&e) {
                let v = eval_constant(&e)?;
                return Ok(Expr::Const {
                    value: v,
                    ty: e.data_type(),
                });
            }
            Ok(e)
        }
    }
}

/// Whether a node over constant arguments may be evaluated at plan time
/// (everything immutable; not parameters or volatile functions).
fn folds_when_constant(e: &Expr) -> bool {
    !matches!(e, Expr::Param { .. } | Expr::Column { .. })
}

/// AND / OR over the flattened argument list.
fn fold_bool_op(e: Expr) -> Result<Expr> {
    let is_and = matches!(e, Expr::And(..));
    let mut args = Vec::new();
    flatten(e, is_and, &mut args);
    let decisive = !is_and;
    let mut kept = Vec::new();
    let mut saw_null = false;
    for a in args {
        let a = fold(a)?;
        match bool_const(&a) {
            Some(b) if b == decisive => {
                return Ok(Expr::Const {
                    value: Value::Bool(decisive),
                    ty: tusk_storage::DataType::Bool,
                })
            }
            Some(_) => {}
            None if is_null_const(&a) => saw_null = true,
            None => kept.push(a),
        }
    }
    if saw_null {
        kept.push(Expr::Const {
            value: Value::Null,
            ty: tusk_storage::DataType::Bool,
        });
    }
    let mut it = kept.into_iter();
    let Some(first) = it.next() else {
        return Ok(Expr::Const {
            value: Value::Bool(is_and),
            ty: tusk_storage::DataType::Bool,
        });
    };
    Ok(it.fold(first, |acc, x| {
        if is_and {
            Expr::And(Box::new(acc), Box::new(x))
        } else {
            Expr::Or(Box::new(acc), Box::new(x))
        }
    }))
}

/// The arguments of a chain of AND (or OR), left to right, iteratively.
fn flatten(e: Expr, is_and: bool, out: &mut Vec<Expr>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::And(a, b) if is_and => {
                stack.push(*b);
                stack.push(*a);
            }
            Expr::Or(a, b) if !is_and => {
                stack.push(*b);
                stack.push(*a);
            }
            e => out.push(e),
        }
    }
}

/// Folds every expression of a logical plan.
pub fn fold_plan(plan: &mut crate::logical::Logical) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_exec::expr::{ArithOp, CmpOp};
    use tusk_storage::DataType;

    fn int(v: i32) -> Expr {
        Expr::Const {
            value: Value::Int4(v),
            ty: DataType::Int4,
        }
    }

    fn col() -> Expr {
        Expr::Column {
            index: 0,
            ty: DataType::Int4,
        }
    }

    #[test]
    fn strict_null_argument_is_not_evaluated() {
        // NULL::int - (x / 0) is NULL at plan time, no division happens.
        let e = Expr::Arith {
            op: ArithOp::Sub,
            left: Box::new(Expr::Const {
                value: Value::Null,
                ty: DataType::Int4,
            }),
            right: Box::new(Expr::Arith {
                op: ArithOp::Div,
                left: Box::new(col()),
                right: Box::new(int(0)),
                ty: DataType::Int4,
            }),
            ty: DataType::Int4,
        };
        assert!(is_null_const(&fold(e).unwrap()));
    }

    #[test]
    fn constant_errors_surface_and_false_conjuncts_win() {
        let div = Expr::Arith {
            op: ArithOp::Div,
            left: Box::new(int(1)),
            right: Box::new(int(0)),
            ty: DataType::Int4,
        };
        assert_eq!(fold(div).unwrap_err().message, "division by zero");
        let cmp = Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(col()),
            right: Box::new(int(1)),
        };
        let and = Expr::And(
            Box::new(cmp),
            Box::new(Expr::Const {
                value: Value::Bool(false),
                ty: DataType::Bool,
            }),
        );
        assert_eq!(bool_const(&fold(and).unwrap()), Some(false));
    }
}
