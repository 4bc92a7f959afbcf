//! Constant folding of one expression, as PostgreSQL's
//! `eval_const_expressions` does it when planning. The planner's
//! constant-folding pass calls [`Expr::fold`] on every expression it keeps.
//!
//! Folding matters for more than speed: it decides which errors a query
//! raises. PostgreSQL evaluates constant sub-expressions once, at plan time,
//! so `SELECT 9223372036854775807::int - x FROM t WHERE false` fails although
//! no row is read, and it simplifies `... AND false` to false without ever
//! evaluating the other side, so `(s || i)::boolean AND false` never fails.
//! The rules, bottom-up:
//! - a strict node (operators, casts, strict functions) with a NULL constant
//!   argument becomes a NULL constant, once its arguments are folded;
//! - a node whose arguments are all constants is evaluated now (errors
//!   included), unless it calls a volatile function (`random()`) or a
//!   stable one (`now()`: a kept plan may run in a later transaction);
//! - AND drops constant-true terms and becomes false at the first
//!   constant-false term, *without folding the terms after it*; OR mirrors
//!   that; an AND left with a NULL constant keeps one;
//! - CASE drops WHEN arms whose condition folds to false or NULL (without
//!   folding their result), and an arm whose condition folds to true ends
//!   the CASE, its result becoming the ELSE; results of the arms kept are
//!   folded even if no row will take them (PostgreSQL's documented
//!   behaviour for `CASE WHEN x > 0 THEN 1/0 END`);
//! - a row's `IS [NOT] NULL` folds every field, then becomes the AND of
//!   the tests of the fields that are not constants (false if a constant
//!   field has the other nullness);
//! - COALESCE drops NULL constants and stops at the first non-NULL constant;
//! - an arithmetic or `||` chain folds its constant prefix (the chain is
//!   left-deep, so that is what PostgreSQL's tree folds).

use super::{CmpOp, Expr, InSet};
use crate::error::Result;
use crate::stack;
use crate::value::Value;
use std::sync::Arc;
use tusk_storage::DataType;

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

fn null(ty: DataType) -> Expr {
    Expr::Const {
        value: Value::Null,
        ty,
    }
}

fn boolean(b: bool) -> Expr {
    Expr::Const {
        value: Value::Bool(b),
        ty: DataType::Bool,
    }
}

/// `e` (without column references) evaluated into a constant.
fn evaluate(e: &Expr) -> Result<Expr> {
    Ok(Expr::Const {
        value: e.eval_const()?,
        ty: e.data_type(),
    })
}

/// Folds the expression in `e`, reusing its allocation.
fn fold_box(mut e: Box<Expr>) -> Result<Box<Expr>> {
    let inner = std::mem::replace(&mut *e, null(DataType::Bool));
    *e = inner.fold()?;
    Ok(e)
}

fn fold_all(es: Vec<Expr>) -> Result<Vec<Expr>> {
    es.into_iter().map(Expr::fold).collect()
}

/// The node, or its value when its arguments are all constants, or NULL
/// when it is strict and one of them is a NULL constant.
fn strict_node(e: Expr, args_const: bool, any_null: bool) -> Result<Expr> {
    if any_null {
        return Ok(null(e.data_type()));
    }
    if args_const {
        return evaluate(&e);
    }
    Ok(e)
}

/// `date_expr::timestamp op T` for a finite timestamp constant `T` (what
/// the binder makes of comparing a date with `date + interval`) compared
/// as dates: `d::timestamp < T` is `d < ceil(T)`, `<=` is `d <= floor(T)`,
/// `>` is `d > floor(T)`, `>=` is `d >= ceil(T)`, where floor and ceil are
/// the days on or before and on or after `T`. The result is the same for
/// every date (PostgreSQL's cross-type `date_lt_timestamp` and friends
/// compare without error too, also for dates beyond the timestamp range,
/// which the cast alone would refuse), and the date comparison needs no
/// per-row conversion and can use the date column's statistics and
/// indexes. Equality and the other forms are left as they are.
fn date_against_timestamp(e: Expr) -> Expr {
    use tusk_types::datetime::{timestamp_is_finite, USECS_PER_DAY};
    let Expr::Cmp { op, left, right } = e else {
        return e;
    };
    // With the constant on the left, the operator is read as if the
    // operands were swapped (`T > cast` is `cast < T`); anything left
    // unchanged keeps the original operator and order.
    let (cast, konst, as_cast_op) = match (left.as_ref(), right.as_ref()) {
        (Expr::Cast { .. }, Expr::Const { .. }) => (&left, &right, op),
        (Expr::Const { .. }, Expr::Cast { .. }) => (&right, &left, op.commuted()),
        _ => return Expr::Cmp { op, left, right },
    };
    let (
        Expr::Cast {
            arg,
            to: DataType::Timestamp,
        },
        Expr::Const {
            value: Value::Timestamp(t),
            ..
        },
    ) = (cast.as_ref(), konst.as_ref())
    else {
        return Expr::Cmp { op, left, right };
    };
    if arg.data_type() != DataType::Date || !timestamp_is_finite(*t) {
        return Expr::Cmp { op, left, right };
    }
    let floor = t.div_euclid(USECS_PER_DAY);
    let ceil = floor + i64::from(t.rem_euclid(USECS_PER_DAY) != 0);
    let day = match as_cast_op {
        CmpOp::Lt | CmpOp::Ge => ceil,
        CmpOp::Le | CmpOp::Gt => floor,
        _ => return Expr::Cmp { op, left, right },
    };
    let Ok(day) = i32::try_from(day) else {
        return Expr::Cmp { op, left, right };
    };
    if !tusk_types::datetime::date_is_finite(day) {
        return Expr::Cmp { op, left, right };
    }
    Expr::Cmp {
        op: as_cast_op,
        left: arg.clone(),
        right: Box::new(Expr::Const {
            value: Value::Date(day),
            ty: DataType::Date,
        }),
    }
}

/// PostgreSQL's `simplify_boolean_equality`: a boolean `=` or `<>` with a
/// non-NULL constant side is the other side or its negation (`x = true`
/// is `x`, `x = false` and `x <> true` are `NOT x`), which also changes
/// the estimate (`NOT x` keeps half the rows, `x = false` one in 200).
fn boolean_equality(e: Expr) -> Expr {
    let Expr::Cmp {
        op: op @ (CmpOp::Eq | CmpOp::Ne),
        left,
        right,
    } = e
    else {
        return e;
    };
    let constant = |x: &Expr| match x {
        Expr::Const {
            value: Value::Bool(b),
            ..
        } => Some(*b),
        _ => None,
    };
    let (value, other) = match (constant(&left), constant(&right)) {
        (Some(b), None) if right.data_type() == DataType::Bool => (b, right),
        (None, Some(b)) if left.data_type() == DataType::Bool => (b, left),
        _ => return Expr::Cmp { op, left, right },
    };
    if value == (op == CmpOp::Eq) {
        *other
    } else {
        Expr::Not(other)
    }
}

impl Expr {
    /// Folds constant sub-expressions (see the module doc); may raise the
    /// errors PostgreSQL raises while planning.
    pub fn fold(self) -> Result<Expr> {
        stack::guarded(move || self.fold_node())
    }

    fn fold_node(self) -> Result<Expr> {
        match self {
            e @ (Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. }) => Ok(e),
            Expr::Arith { first, rest, ty } => fold_chain(*first, rest, ty),
            Expr::Concat(parts) => {
                let parts = fold_all(parts)?;
                if parts.iter().any(is_null_const) {
                    return Ok(null(DataType::Text));
                }
                // Fold the constant prefix into one constant.
                let k = parts.iter().take_while(|p| is_const(p)).count();
                let mut rest = parts;
                if k >= 2 {
                    let tail = rest.split_off(k);
                    let head = evaluate(&Expr::Concat(rest))?;
                    rest = std::iter::once(head).chain(tail).collect();
                }
                if rest.len() == 1 {
                    return Ok(rest.pop().unwrap());
                }
                Ok(Expr::Concat(rest))
            }
            Expr::Neg { arg, ty } => {
                let arg = fold_box(arg)?;
                let (c, n) = (is_const(&arg), is_null_const(&arg));
                strict_node(Expr::Neg { arg, ty }, c, n)
            }
            Expr::Not(arg) => {
                let arg = fold_box(arg)?;
                let (c, n) = (is_const(&arg), is_null_const(&arg));
                strict_node(Expr::Not(arg), c, n)
            }
            Expr::BpcharToText(arg) => {
                let arg = fold_box(arg)?;
                let (c, n) = (is_const(&arg), is_null_const(&arg));
                strict_node(Expr::BpcharToText(arg), c, n)
            }
            Expr::Typmod { arg, ty, explicit } => {
                let arg = fold_box(arg)?;
                let (c, n) = (is_const(&arg), is_null_const(&arg));
                strict_node(Expr::Typmod { arg, ty, explicit }, c, n)
            }
            Expr::Cast { arg, to } => {
                let arg = fold_box(arg)?;
                // A reg type's name lookup is stable (it reads the catalog):
                // not folded into a plan that may run in a later
                // transaction.
                let stable = super::cast_reads_catalog(arg.data_type(), to);
                let (c, n) = (is_const(&arg) && !stable, is_null_const(&arg));
                strict_node(Expr::Cast { arg, to }, c, n)
            }
            Expr::IsNull { arg, negated } => {
                let arg = fold_box(arg)?;
                let c = is_const(&arg);
                let e = Expr::IsNull { arg, negated };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::RowIsNull { fields, negated } => fold_row_is_null(fields, negated),
            Expr::BoolTest { arg, test } => {
                let arg = fold_box(arg)?;
                let c = is_const(&arg);
                let e = Expr::BoolTest { arg, test };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::Cmp { op, left, right } => {
                let (left, right) = (fold_box(left)?, fold_box(right)?);
                let c = is_const(&left) && is_const(&right);
                let n = is_null_const(&left) || is_null_const(&right);
                Ok(boolean_equality(date_against_timestamp(strict_node(
                    Expr::Cmp { op, left, right },
                    c,
                    n,
                )?)))
            }
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let (arg, pattern) = (fold_box(arg)?, fold_box(pattern)?);
                let c = is_const(&arg) && is_const(&pattern);
                let n = is_null_const(&arg) || is_null_const(&pattern);
                let e = Expr::Like {
                    arg,
                    pattern,
                    negated,
                    case_insensitive,
                };
                strict_node(e, c, n)
            }
            Expr::Regex {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let (arg, pattern) = (fold_box(arg)?, fold_box(pattern)?);
                let c = is_const(&arg) && is_const(&pattern);
                let n = is_null_const(&arg) || is_null_const(&pattern);
                let e = Expr::Regex {
                    arg,
                    pattern,
                    negated,
                    case_insensitive,
                };
                strict_node(e, c, n)
            }
            Expr::IsDistinct {
                left,
                right,
                negated,
            } => {
                let (left, right) = (fold_box(left)?, fold_box(right)?);
                let c = is_const(&left) && is_const(&right);
                let e = Expr::IsDistinct {
                    left,
                    right,
                    negated,
                };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::NullIf { left, right } => {
                let (left, right) = (fold_box(left)?, fold_box(right)?);
                // A NULL argument is never equal to the other: the result
                // is the first argument (PostgreSQL folds it so too, which
                // decides whether errors beside it are raised at all).
                if is_null_const(&left) || is_null_const(&right) {
                    return Ok(*left);
                }
                let c = is_const(&left) && is_const(&right);
                let e = Expr::NullIf { left, right };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::RowCompare { op, left, right } => {
                let (left, right) = (fold_all(left)?, fold_all(right)?);
                let c = left.iter().chain(&right).all(is_const);
                let e = Expr::RowCompare { op, left, right };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::MinMax { args, greatest } => {
                let args = fold_all(args)?;
                let c = args.iter().all(is_const);
                let e = Expr::MinMax { args, greatest };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::InList {
                arg, list, negated, ..
            } => {
                let arg = arg.fold()?;
                let list = fold_all(list)?;
                let c = is_const(&arg) && list.iter().all(is_const);
                let set = InSet::build(arg.data_type(), &list).map(Arc::new);
                let e = Expr::InList {
                    arg: Box::new(arg),
                    list,
                    negated,
                    set,
                };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::And(terms) => fold_junction(terms, true),
            Expr::Or(terms) => fold_junction(terms, false),
            Expr::Coalesce(args) => {
                let ty = args[0].data_type();
                let mut kept = Vec::new();
                for a in args {
                    let a = a.fold()?;
                    if is_null_const(&a) {
                        continue;
                    }
                    let stop = is_const(&a);
                    kept.push(a);
                    if stop {
                        break;
                    }
                }
                Ok(match kept.len() {
                    0 => null(ty),
                    1 => kept.pop().unwrap(),
                    _ => Expr::Coalesce(kept),
                })
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
                ty,
            } => fold_case(operand, whens, otherwise, ty),
            Expr::Call { func, args, ty } => {
                let args = fold_all(args)?;
                let n = func.strict() && args.iter().any(is_null_const);
                let c = !func.volatile() && !func.stable() && args.iter().all(is_const);
                strict_node(Expr::Call { func, args, ty }, c, n)
            }
            Expr::Array { elems, ty } => {
                let elems = fold_all(elems)?;
                let c = elems.iter().all(is_const);
                let e = Expr::Array { elems, ty };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
            Expr::Subscript { array, index, ty } => {
                let (array, index) = (fold_box(array)?, fold_box(index)?);
                let c = is_const(&array) && is_const(&index);
                let n = is_null_const(&array) || is_null_const(&index);
                strict_node(Expr::Subscript { array, index, ty }, c, n)
            }
            Expr::AnyArray {
                arg,
                array,
                op,
                all,
            } => {
                let (arg, array) = (fold_box(arg)?, fold_box(array)?);
                let c = is_const(&arg) && is_const(&array);
                let e = Expr::AnyArray {
                    arg,
                    array,
                    op,
                    all,
                };
                if c {
                    evaluate(&e)
                } else {
                    Ok(e)
                }
            }
        }
    }
}

/// Folds an arithmetic chain: its operands, then its constant prefix.
fn fold_chain(first: Expr, rest: Vec<(super::ArithOp, Expr)>, ty: DataType) -> Result<Expr> {
    let mut acc = first.fold()?;
    let mut steps = Vec::with_capacity(rest.len());
    for (op, e) in rest {
        steps.push((op, e.fold()?));
    }
    // Evaluate step by step while both sides are constants (a NULL
    // constant gives NULL without raising anything).
    let mut k = 0;
    while k < steps.len() && is_const(&acc) && is_const(&steps[k].1) {
        let (op, e) = steps[k].clone();
        acc = evaluate(&Expr::Arith {
            first: Box::new(acc),
            rest: vec![(op, e)],
            ty,
        })?;
        k += 1;
    }
    let steps: Vec<_> = steps.into_iter().skip(k).collect();
    if steps.is_empty() {
        return Ok(acc);
    }
    if is_null_const(&acc) || steps.iter().any(|(_, e)| is_null_const(e)) {
        return Ok(null(ty));
    }
    Ok(Expr::Arith {
        first: Box::new(acc),
        rest: steps,
        ty,
    })
}

/// `ROW(fields) IS [NOT] NULL`: every field folded first (errors
/// included), then one test per field that is not a constant, ANDed; a
/// constant field of the other nullness makes the test false, one of the
/// tested nullness drops out (PostgreSQL's `eval_const_expressions` for a
/// row's `NullTest`).
fn fold_row_is_null(fields: Vec<Expr>, negated: bool) -> Result<Expr> {
    let fields = fold_all(fields)?;
    let mut tests = Vec::with_capacity(fields.len());
    for f in fields {
        if let Expr::Const { value, .. } = &f {
            if value.is_null() == negated {
                return Ok(boolean(false));
            }
            continue;
        }
        tests.push(Expr::IsNull {
            arg: Box::new(f),
            negated,
        });
    }
    Ok(Expr::and_all(tests).unwrap_or_else(|| boolean(true)))
}

/// AND (`is_and`) or OR: PostgreSQL's `simplify_and_arguments` /
/// `simplify_or_arguments`.
fn fold_junction(terms: Vec<Expr>, is_and: bool) -> Result<Expr> {
    let decisive = !is_and;
    let mut kept = Vec::new();
    let mut have_null = false;
    for t in terms {
        let t = t.fold()?;
        match &t {
            Expr::Const {
                value: Value::Null, ..
            } => have_null = true,
            Expr::Const {
                value: Value::Bool(b),
                ..
            } => {
                if *b == decisive {
                    // The later terms are not even folded.
                    return Ok(boolean(decisive));
                }
            }
            _ => kept.push(t),
        }
    }
    if have_null {
        kept.push(null(DataType::Bool));
    }
    Ok(match kept.len() {
        0 => boolean(!decisive),
        _ if is_and => Expr::and_all(kept).unwrap(),
        _ => Expr::or_all(kept).unwrap(),
    })
}

fn fold_case(
    operand: Option<Box<Expr>>,
    whens: Vec<(Expr, Expr)>,
    otherwise: Option<Box<Expr>>,
    ty: DataType,
) -> Result<Expr> {
    let operand = operand.map(|o| o.fold()).transpose()?;
    let mut arms = Vec::new();
    let mut default = None;
    for (w, then) in whens {
        let w = w.fold()?;
        // The condition's constant value, if it has one.
        let cond = match (&operand, is_const(&w)) {
            (None, true) => Some(evaluate(&w)?),
            (Some(o), true) if is_const(o) => Some(evaluate(&Expr::cmp(
                super::CmpOp::Eq,
                o.clone(),
                w.clone(),
            ))?),
            _ => None,
        };
        match cond {
            Some(Expr::Const {
                value: Value::Bool(true),
                ..
            }) => {
                default = Some(then.fold()?);
                break;
            }
            // False or NULL: the arm can never be taken.
            Some(_) => continue,
            None => arms.push((w, then.fold()?)),
        }
    }
    let default = match default {
        Some(d) => Some(d),
        None => otherwise.map(|e| e.fold()).transpose()?,
    };
    if arms.is_empty() {
        return Ok(default.unwrap_or_else(|| null(ty)));
    }
    Ok(Expr::Case {
        operand: operand.map(Box::new),
        whens: arms,
        otherwise: default.map(Box::new),
        ty,
    })
}
