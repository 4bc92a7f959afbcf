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
    let m = |p: &str, s: &str| LikePattern::compile(p, false).unwrap().matches(s).unwrap();
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
    let im = |p: &str, s: &str| LikePattern::compile(p, true).unwrap().matches(s).unwrap();
    assert!(im("A%", "abc"));
    // The C collation folds ASCII only: 'ñ' ILIKE 'Ñ' is false.
    assert!(!im("Ñ", "ñ"));
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

/// `'a' OP 'b' [ESCAPE 'e']` as the binder builds it: LIKE's escape through
/// `like_escape`, SIMILAR TO as `~` over `similar_to_escape`.
fn pattern_expr(case: &str) -> Expr {
    use crate::func::tests::{lit, Lit};
    let ops = [
        (" not similar to ", "nsim"),
        (" similar to ", "sim"),
        (" not ilike ", "nilike"),
        (" not like ", "nlike"),
        (" ilike ", "ilike"),
        (" like ", "like"),
        (" !~* ", "!~*"),
        (" !~ ", "!~"),
        (" ~* ", "~*"),
        (" ~ ", "~"),
    ];
    let (op_text, op) = ops.iter().find(|(t, _)| case.contains(t)).unwrap();
    let (l, rest) = case.split_once(op_text).unwrap();
    let (r, esc) = match rest.split_once(" escape ") {
        Some((r, e)) => (r, Some(e)),
        None => (rest, None),
    };
    let text = |s: &str| match lit(s) {
        Lit::Unknown(Some(t)) => Expr::constant(Value::Text(t), DataType::Text),
        other => panic!("not a string literal: {other:?}"),
    };
    let (arg, pat) = (Box::new(text(l)), text(r));
    let esc = esc.map(text);
    let negated = op.starts_with('n') || op.starts_with('!');
    match *op {
        "like" | "nlike" | "ilike" | "nilike" => Expr::Like {
            arg,
            pattern: Box::new(match esc {
                Some(e) => Expr::call(Func::LikeEscape, vec![pat, e], DataType::Text),
                None => pat,
            }),
            negated,
            case_insensitive: op.contains("ilike"),
        },
        "sim" | "nsim" => {
            let mut args = vec![pat];
            args.extend(esc);
            Expr::Regex {
                arg,
                pattern: Box::new(Expr::call(Func::SimilarToEscape, args, DataType::Text)),
                negated,
                case_insensitive: false,
            }
        }
        _ => Expr::Regex {
            arg,
            pattern: Box::new(pat),
            negated,
            case_insensitive: op.ends_with('*'),
        },
    }
}

#[test]
fn patterns_match_postgres() {
    use crate::func::tests::show_error;
    let cases = include_str!("pg15_patterns.tsv");
    let mut failures = Vec::new();
    for line in cases.lines() {
        let (case, want) = line.split_once('\t').unwrap();
        let got = match pattern_expr(case).eval_const() {
            Ok(v) => v.to_text().unwrap_or_else(|| "<NULL>".into()),
            Err(e) => show_error(e),
        };
        if got != want {
            failures.push(format!("{case}\n   want: {want}\n    got: {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ from PostgreSQL 15:\n{}",
        failures.len(),
        cases.lines().count(),
        failures.join("\n")
    );
}

#[test]
fn unsupported_regex_features_are_errors_not_wrong_answers() {
    // PostgreSQL 15 answers t to both.
    for case in ["'aa' ~ '(a)\\1'", "'a' ~ '(?=a)'"] {
        let e = pattern_expr(case).eval_const().unwrap_err();
        assert_eq!(e.code, "0A000", "{case}: {}", e.message);
    }
}
