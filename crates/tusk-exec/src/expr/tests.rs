//! Expression-level tests: semantics, NULLs, inactive lanes that must not
//! raise errors, and deep expressions. Expected values come from
//! PostgreSQL 15 (C collation, UTF-8).

use super::*;
use crate::vector::Data;

fn col(v: Vec<i32>, nulls: Option<Vec<bool>>) -> Vector {
    Vector::new(Data::Int4(v), nulls)
}

fn c4(v: i32) -> Expr {
    Expr::constant(Value::Int4(v), DataType::Int4)
}

fn x4() -> Expr {
    Expr::Column {
        index: 0,
        ty: DataType::Int4,
    }
}

#[test]
fn like() {
    let m = |p: &str, s: &str| LikePattern::compile(p, false).unwrap().matches(s);
    assert!(m("a%", "abc"));
    assert!(m("%c", "abc"));
    assert!(m("a_c", "abc"));
    assert!(!m("a_c", "abbc"));
    assert!(m("%b%", "abc"));
    assert!(m("%", ""));
    assert!(!m("_", ""));
    assert!(m("a\\%", "a%"));
    assert!(!m("a\\%", "ab"));
    assert!(m("%a%a%", "banana"));
    assert!(m("_", "ñ"));
    assert!(m("%ñ_", "aañé"));
    assert!(LikePattern::compile("A%", true).unwrap().matches("abc"));
    // The C collation folds ASCII only: 'ñ' ILIKE 'Ñ' is false.
    assert!(!LikePattern::compile("Ñ", true).unwrap().matches("ñ"));
}

#[test]
fn and_skips_errors_on_rows_the_left_side_rejects() {
    // x <> 0 AND 10 / x > 1
    let e = Expr::and(
        Expr::cmp(CmpOp::Ne, x4(), c4(0)),
        Expr::cmp(
            CmpOp::Gt,
            Expr::arith(ArithOp::Div, c4(10), x4(), DataType::Int4),
            c4(1),
        ),
    );
    let b = Batch::new(vec![col(vec![0, 5, 20], None)], 3);
    let v = e.eval(&b).unwrap();
    assert_eq!(v.data, Data::Bool(vec![false, true, false]));
}

#[test]
fn overflow_and_division_errors() {
    let b = Batch::new(
        vec![
            col(vec![i32::MAX, 1], None),
            col(vec![1, 0], Some(vec![false, true])),
        ],
        2,
    );
    let add = Expr::arith(ArithOp::Add, x4(), c4(1), DataType::Int4);
    assert_eq!(add.eval(&b).unwrap_err().message, "integer out of range");
    // Division by a NULL zero is NULL, not an error.
    let div = Expr::arith(
        ArithOp::Div,
        c4(1),
        Expr::Column {
            index: 1,
            ty: DataType::Int4,
        },
        DataType::Int4,
    );
    let v = div.eval(&b).unwrap();
    assert!(v.is_null(1));
}

#[test]
fn three_valued_or() {
    let b = Batch::new(
        vec![Vector::new(
            Data::Bool(vec![true, false, false]),
            Some(vec![false, false, true]),
        )],
        3,
    );
    let c = Expr::Column {
        index: 0,
        ty: DataType::Bool,
    };
    let null = Expr::constant(Value::Null, DataType::Bool);
    let v = Expr::or(c, null).eval(&b).unwrap();
    assert_eq!(v.value(0), Value::Bool(true));
    assert_eq!(v.value(1), Value::Null);
    assert_eq!(v.value(2), Value::Null);
}
