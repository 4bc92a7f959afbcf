//! Whether evaluating an expression can raise an error.
//!
//! A rewrite that makes the engine evaluate an expression over rows
//! PostgreSQL would never evaluate it on (decorrelating a correlated
//! subquery computes it for every inner row, where PostgreSQL's SubPlan
//! computes it only for the rows an outer row's parameters select) is only
//! sound when no row can make the expression fail. [`Expr::cannot_raise`]
//! answers that conservatively: true only for nodes that never fail on any
//! input — reading columns, constants and parameters, comparisons, the
//! boolean connectives and tests, COALESCE / NULLIF / GREATEST / LEAST /
//! CASE / IN lists, text concatenation, `numeric` addition, subtraction, multiplication and
//! negation (exact; only a result beyond `numeric`'s format could fail, as
//! in PostgreSQL), casts that only widen a number, print a value as text or
//! pass strings through unchanged (`varchar` to `text`), and LIKE with a
//! constant pattern that does not end in a lone `\`. Division, integer and
//! float arithmetic (overflow), other casts, type modifiers, other pattern
//! matching (a bad pattern), subscripts and function calls count as able to
//! fail.

use super::{ArithOp, Expr, LikePattern};
use crate::cast::keeps_strings;
use crate::value::Value;
use tusk_storage::DataType;

impl Expr {
    /// Whether no row can make this expression raise an error (see the
    /// module doc); false when unsure.
    pub fn cannot_raise(&self) -> bool {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            if !node_cannot_raise(e) {
                return false;
            }
            e.for_each_child(|c| stack.push(c));
        }
        true
    }
}

/// Whether `e` itself (not counting its arguments) never fails.
fn node_cannot_raise(e: &Expr) -> bool {
    match e {
        Expr::Column { .. }
        | Expr::Const { .. }
        | Expr::Param { .. }
        | Expr::Cmp { .. }
        | Expr::RowCompare { .. }
        | Expr::IsDistinct { .. }
        | Expr::And(_)
        | Expr::Or(_)
        | Expr::Not(_)
        | Expr::IsNull { .. }
        | Expr::RowIsNull { .. }
        | Expr::BoolTest { .. }
        | Expr::BpcharToText(_)
        | Expr::Case { .. }
        | Expr::Coalesce(_)
        | Expr::NullIf { .. }
        | Expr::MinMax { .. }
        | Expr::InList { .. }
        | Expr::Concat(_) => true,
        Expr::Arith { rest, ty, .. } => {
            *ty == DataType::Numeric
                && rest
                    .iter()
                    .all(|(op, _)| matches!(op, ArithOp::Add | ArithOp::Sub | ArithOp::Mul))
        }
        Expr::Neg { ty, .. } => *ty == DataType::Numeric,
        Expr::Cast { arg, to } => {
            widening_cast(arg.data_type(), *to) || keeps_strings(arg.data_type(), *to)
        }
        Expr::Like {
            pattern,
            case_insensitive,
            ..
        } => match &**pattern {
            Expr::Const {
                value: Value::Null, ..
            } => true,
            Expr::Const {
                value: Value::Text(p),
                ..
            } => LikePattern::compile(p, *case_insensitive).is_ok_and(|c| !c.can_raise()),
            _ => false,
        },
        Expr::Typmod { .. }
        | Expr::Regex { .. }
        | Expr::Call { .. }
        | Expr::Array { .. }
        | Expr::Subscript { .. }
        | Expr::AnyArray { .. } => false,
    }
}

/// A cast that cannot fail: a number to a wider number type, or a number
/// or boolean to text.
fn widening_cast(from: DataType, to: DataType) -> bool {
    use DataType::*;
    match (from, to) {
        (a, b) if a == b => true,
        (Int2, Int4 | Int8 | Numeric | Float8) | (Int4, Int8 | Numeric | Float8) => true,
        (Int8, Numeric | Float8) => true,
        (Int2 | Int4 | Int8 | Numeric | Bool, Text) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn col(ty: DataType) -> Expr {
        Expr::Column { index: 0, ty }
    }

    fn arith(op: ArithOp, ty: DataType) -> Expr {
        Expr::Arith {
            first: Box::new(col(ty)),
            rest: vec![(
                op,
                Expr::Const {
                    value: Value::Int4(0),
                    ty,
                },
            )],
            ty,
        }
    }

    #[test]
    fn division_and_integer_arithmetic_can_raise() {
        assert!(!arith(ArithOp::Div, DataType::Int4).cannot_raise());
        assert!(!arith(ArithOp::Add, DataType::Int4).cannot_raise());
        assert!(!arith(ArithOp::Mul, DataType::Float8).cannot_raise());
        assert!(!arith(ArithOp::Div, DataType::Numeric).cannot_raise());
    }

    #[test]
    fn comparisons_and_exact_numeric_arithmetic_cannot() {
        let sum = arith(ArithOp::Mul, DataType::Numeric);
        let cmp = Expr::Cmp {
            op: crate::expr::CmpOp::Lt,
            left: Box::new(col(DataType::Numeric)),
            right: Box::new(sum),
        };
        assert!(cmp.cannot_raise());
        let nested = Expr::Cmp {
            op: crate::expr::CmpOp::Lt,
            left: Box::new(col(DataType::Int4)),
            right: Box::new(arith(ArithOp::Div, DataType::Int4)),
        };
        assert!(!nested.cannot_raise(), "a failing argument is found");
    }

    #[test]
    fn only_widening_casts_cannot() {
        let cast = |from, to| Expr::Cast {
            arg: Box::new(col(from)),
            to,
        };
        assert!(cast(DataType::Int4, DataType::Int8).cannot_raise());
        assert!(!cast(DataType::Int8, DataType::Int4).cannot_raise());
        assert!(!cast(DataType::Text, DataType::Int4).cannot_raise());
    }
}
