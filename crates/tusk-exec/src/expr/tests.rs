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
fn row_compare_is_lexicographic_with_nulls_at_the_deciding_pair() {
    // ROW(x, 10 / (x - 1)) < ROW(2, 0) over x = 1, 3, 2, NULL: x = 1 is
    // decided by the first pair (its second pair would divide by zero and is
    // never evaluated), x = 3 is false, x = 2 goes on to 10 / 1 < 0 (false),
    // and a NULL first pair makes the result NULL.
    let e = Expr::RowCompare {
        op: CmpOp::Lt,
        left: vec![
            x4(),
            Expr::arith(
                ArithOp::Div,
                c4(10),
                Expr::arith(ArithOp::Sub, x4(), c4(1), DataType::Int4),
                DataType::Int4,
            ),
        ],
        right: vec![c4(2), c4(0)],
    };
    let b = Batch::new(
        vec![col(vec![1, 3, 2, 0], Some(vec![false, false, false, true]))],
        4,
    );
    let v = e.eval(&b).unwrap();
    let got: Vec<Option<bool>> = (0..4)
        .map(|i| match (&v.data, v.is_null(i)) {
            (_, true) => None,
            (Data::Bool(x), false) => Some(x[i]),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(got, vec![Some(true), Some(false), Some(false), None]);
    // (1, NULL) <= (1, NULL) is NULL; (1, NULL) < (2, NULL) is true;
    // (1, 2) <= (1, 2) is true and (1, 2) > (1, 2) false.
    let null = || Expr::constant(Value::Null, DataType::Int4);
    let row = |op, l: Vec<Expr>, r: Vec<Expr>| {
        Expr::RowCompare {
            op,
            left: l,
            right: r,
        }
        .eval_const()
        .unwrap()
    };
    assert_eq!(
        row(CmpOp::Le, vec![c4(1), null()], vec![c4(1), null()]),
        Value::Null
    );
    assert_eq!(
        row(CmpOp::Lt, vec![c4(1), null()], vec![c4(2), null()]),
        Value::Bool(true)
    );
    assert_eq!(
        row(CmpOp::Le, vec![c4(1), c4(2)], vec![c4(1), c4(2)]),
        Value::Bool(true)
    );
    assert_eq!(
        row(CmpOp::Gt, vec![c4(1), c4(2)], vec![c4(1), c4(2)]),
        Value::Bool(false)
    );
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

/// A nullable int4 column: `[0, 1, 2, NULL]`.
fn x_batch() -> Batch {
    Batch::new(
        vec![col(vec![0, 1, 2, 0], Some(vec![false, false, false, true]))],
        4,
    )
}

fn texts(v: &Vector) -> Vec<String> {
    (0..v.len())
        .map(|i| v.value(i).to_text().unwrap_or_else(|| "<NULL>".into()))
        .collect()
}

fn text(s: &str) -> Expr {
    Expr::constant(Value::Text(s.into()), DataType::Text)
}

fn bpchar(s: &str) -> Expr {
    Expr::constant(Value::Text(s.into()), DataType::Bpchar)
}

// Expected rows from PostgreSQL 15:
//   select ... from (values (0), (1), (2), (null::int)) t(x);

#[test]
fn searched_case_evaluates_branches_only_for_their_rows() {
    // case when x = 0 then 0 else 10 / x end: the ELSE never sees x = 0.
    let e = Expr::Case {
        operand: None,
        whens: vec![(Expr::cmp(CmpOp::Eq, x4(), c4(0)), c4(0))],
        otherwise: Some(Box::new(Expr::arith(
            ArithOp::Div,
            c4(10),
            x4(),
            DataType::Int4,
        ))),
        ty: DataType::Int4,
    };
    assert_eq!(
        texts(&e.eval(&x_batch()).unwrap()),
        ["0", "10", "5", "<NULL>"]
    );
}

#[test]
fn simple_case_without_else_is_null() {
    // case x when 1 then 'one' when 2 then 'two' end
    let e = Expr::Case {
        operand: Some(Box::new(x4())),
        whens: vec![(c4(1), text("one")), (c4(2), text("two"))],
        otherwise: None,
        ty: DataType::Text,
    };
    assert_eq!(
        texts(&e.eval(&x_batch()).unwrap()),
        ["<NULL>", "one", "two", "<NULL>"]
    );
}

#[test]
fn coalesce_evaluates_later_arguments_only_for_null_rows() {
    // coalesce(x, -1); and coalesce(x, 1 / 0) raises nothing where x is set.
    let e = Expr::Coalesce(vec![x4(), c4(-1)]);
    assert_eq!(texts(&e.eval(&x_batch()).unwrap()), ["0", "1", "2", "-1"]);
    let b = Batch::new(vec![col(vec![7, 8], None)], 2);
    let div0 = Expr::arith(ArithOp::Div, c4(1), c4(0), DataType::Int4);
    let e = Expr::Coalesce(vec![x4(), div0]);
    assert_eq!(texts(&e.eval(&b).unwrap()), ["7", "8"]);
    assert_eq!(e.eval(&x_batch()).unwrap_err().code, "22012");
}

#[test]
fn nullif_greatest_least_distinct() {
    let b = x_batch();
    let nullif = Expr::NullIf {
        left: Box::new(x4()),
        right: Box::new(c4(2)),
    };
    assert_eq!(
        texts(&nullif.eval(&b).unwrap()),
        ["0", "1", "<NULL>", "<NULL>"]
    );
    let greatest = Expr::MinMax {
        args: vec![x4(), c4(1)],
        greatest: true,
    };
    assert_eq!(texts(&greatest.eval(&b).unwrap()), ["1", "1", "2", "1"]);
    let least = Expr::MinMax {
        args: vec![x4(), c4(1)],
        greatest: false,
    };
    assert_eq!(texts(&least.eval(&b).unwrap()), ["0", "1", "1", "1"]);
    let all_null = Expr::MinMax {
        args: vec![
            Expr::constant(Value::Null, DataType::Int4),
            Expr::constant(Value::Null, DataType::Int4),
        ],
        greatest: true,
    };
    assert_eq!(all_null.eval_const().unwrap(), Value::Null);
    let distinct = Expr::IsDistinct {
        left: Box::new(x4()),
        right: Box::new(c4(2)),
        negated: false,
    };
    assert_eq!(texts(&distinct.eval(&b).unwrap()), ["t", "t", "f", "t"]);
    let not_distinct_null = Expr::IsDistinct {
        left: Box::new(x4()),
        right: Box::new(Expr::constant(Value::Null, DataType::Int4)),
        negated: true,
    };
    assert_eq!(
        texts(&not_distinct_null.eval(&b).unwrap()),
        ["f", "f", "f", "t"]
    );
}

#[test]
fn boolean_tests() {
    // select b is true, ... from (values (true), (false), (null::bool)).
    let b = Batch::new(
        vec![Vector::new(
            Data::Bool(vec![true, false, false]),
            Some(vec![false, false, true]),
        )],
        3,
    );
    let arg = Expr::Column {
        index: 0,
        ty: DataType::Bool,
    };
    let want = [
        (BoolTest::IsTrue, ["t", "f", "f"]),
        (BoolTest::IsNotTrue, ["f", "t", "t"]),
        (BoolTest::IsFalse, ["f", "t", "f"]),
        (BoolTest::IsNotFalse, ["t", "f", "t"]),
        (BoolTest::IsUnknown, ["f", "f", "t"]),
        (BoolTest::IsNotUnknown, ["t", "t", "f"]),
    ];
    for (test, w) in want {
        let e = Expr::BoolTest {
            arg: Box::new(arg.clone()),
            test,
        };
        assert_eq!(texts(&e.eval(&b).unwrap()), w, "{}", test.sql());
    }
}

#[test]
fn bpchar_ignores_trailing_blanks() {
    // 'a'::char(3) = 'a  '::char(5): t;  'a '::char(3) < 'a'::char(1): f;
    // 'a'::char(3) in ('a'::char(1), 'b'::char(1)): t;
    // nullif('a'::char(3), 'a'::char(5)): NULL; is distinct from: f.
    let eq = Expr::cmp(CmpOp::Eq, bpchar("a  "), bpchar("a    "));
    assert_eq!(eq.eval_const().unwrap(), Value::Bool(true));
    let lt = Expr::cmp(CmpOp::Lt, bpchar("a  "), bpchar("a"));
    assert_eq!(lt.eval_const().unwrap(), Value::Bool(false));
    // As text, the blanks count.
    let as_text = Expr::cmp(CmpOp::Eq, text("a  "), text("a    "));
    assert_eq!(as_text.eval_const().unwrap(), Value::Bool(false));
    let inl = Expr::in_list(bpchar("a  "), vec![bpchar("a"), bpchar("b")], false);
    assert_eq!(inl.eval_const().unwrap(), Value::Bool(true));
    let nullif = Expr::NullIf {
        left: Box::new(bpchar("a  ")),
        right: Box::new(bpchar("a    ")),
    };
    assert_eq!(nullif.eval_const().unwrap(), Value::Null);
    let distinct = Expr::IsDistinct {
        left: Box::new(bpchar("a  ")),
        right: Box::new(bpchar("a   ")),
        negated: false,
    };
    assert_eq!(distinct.eval_const().unwrap(), Value::Bool(false));
    // A long IN list goes through the sorted set, with the same rule.
    let list: Vec<Expr> = (0..20).map(|i| bpchar(&format!("k{i}"))).collect();
    let e = Expr::in_list(bpchar("k7   "), list, false);
    assert!(matches!(&e, Expr::InList { set: Some(_), .. }));
    assert_eq!(e.eval_const().unwrap(), Value::Bool(true));
}

#[test]
fn in_list_three_valued() {
    // 3 in (1..9, null): t; 30 in (...): NULL; 30 not in (...): NULL;
    // 30 not in (1..10): t; 'NaN' in (1, 'NaN', ...): t.
    let with_null = |x: i32, negated: bool| {
        let mut list: Vec<Expr> = (1..10).map(c4).collect();
        list.push(Expr::constant(Value::Null, DataType::Int4));
        Expr::in_list(c4(x), list, negated).eval_const().unwrap()
    };
    assert_eq!(with_null(3, false), Value::Bool(true));
    assert_eq!(with_null(30, false), Value::Null);
    assert_eq!(with_null(30, true), Value::Null);
    let e = Expr::in_list(c4(30), (1..11).map(c4).collect(), true);
    assert_eq!(e.eval_const().unwrap(), Value::Bool(true));
    let f = |v: f64| Expr::constant(Value::Float8(v), DataType::Float8);
    let list: Vec<Expr> = [1.0, f64::NAN, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        .into_iter()
        .map(f)
        .collect();
    let e = Expr::in_list(f(f64::NAN), list, false);
    assert_eq!(e.eval_const().unwrap(), Value::Bool(true));
    // Short lists and NULL probes behave the same.
    let short = Expr::in_list(
        x4(),
        vec![c4(2), Expr::constant(Value::Null, DataType::Int4)],
        false,
    );
    assert_eq!(
        texts(&short.eval(&x_batch()).unwrap()),
        ["<NULL>", "<NULL>", "t", "<NULL>"]
    );
}

#[test]
fn in_list_of_a_million_constants() {
    let list: Vec<Expr> = (0..1_000_000).map(|i| c4(i * 2)).collect();
    let e = Expr::in_list(x4(), list, false);
    let b = Batch::new(vec![col(vec![0, 1, 1_999_998, 2_000_000], None)], 4);
    assert_eq!(texts(&e.eval(&b).unwrap()), ["t", "f", "t", "f"]);
}

fn deep_batch() -> Batch {
    Batch::new(vec![col(vec![1, 2, 0], Some(vec![false, false, true]))], 3)
}

#[test]
fn chains_of_100000_terms_evaluate_without_recursion() {
    const N: i32 = 100_000;
    // x + 1 + 1 + ... : one chain.
    let mut e = x4();
    for _ in 0..N {
        e = Expr::arith(ArithOp::Add, e, c4(1), DataType::Int4);
    }
    assert!(matches!(&e, Expr::Arith { rest, .. } if rest.len() == N as usize));
    assert_eq!(
        texts(&e.eval(&deep_batch()).unwrap()),
        ["100001", "100002", "<NULL>"]
    );
    // x = 0 OR x = 1 OR ...: one OR node.
    let mut e = Expr::cmp(CmpOp::Eq, x4(), c4(0));
    for i in 1..N {
        e = Expr::or(e, Expr::cmp(CmpOp::Eq, x4(), c4(i)));
    }
    assert_eq!(texts(&e.eval(&deep_batch()).unwrap()), ["t", "t", "<NULL>"]);
    // x > 0 AND x > 0 AND ... AND x < 2.
    let terms = (0..N).map(|_| Expr::cmp(CmpOp::Gt, x4(), c4(0)));
    let e = Expr::and(
        Expr::and_all(terms).unwrap(),
        Expr::cmp(CmpOp::Lt, x4(), c4(2)),
    );
    assert_eq!(texts(&e.eval(&deep_batch()).unwrap()), ["t", "f", "<NULL>"]);
    // 'a' || 'a' || ...
    let mut e = text("a");
    for _ in 0..N {
        e = Expr::concat(e, text("a"));
    }
    assert_eq!(
        e.eval_const().unwrap().to_text().unwrap().len(),
        N as usize + 1
    );
    // The walkers take it too.
    let mut cols = Vec::new();
    e.columns(&mut cols);
    assert!(cols.is_empty() && e.is_constant());
}

#[test]
fn deep_nesting_fails_with_stack_depth_limit_exceeded() {
    // -(-(-(... x))) 20,000 deep: not a chain.
    let mut e = x4();
    for _ in 0..20_000 {
        e = Expr::Neg {
            arg: Box::new(e),
            ty: DataType::Int4,
        };
    }
    let err = e.eval(&deep_batch()).unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        ("54001", "stack depth limit exceeded")
    );
    // Walkers and the type need no stack.
    let mut cols = Vec::new();
    e.columns(&mut cols);
    assert_eq!(cols.len(), 1);
    e.remap_columns(&|i| i + 1);
    assert_eq!(e.data_type(), DataType::Int4);
    // Dropping it must not overflow either: unwind it iteratively.
    let mut cur = e;
    while let Expr::Neg { arg, .. } = cur {
        cur = *arg;
    }
    // 2,000 levels evaluate fine.
    let mut e = x4();
    for _ in 0..2_000 {
        e = Expr::Neg {
            arg: Box::new(e),
            ty: DataType::Int4,
        };
    }
    assert_eq!(texts(&e.eval(&deep_batch()).unwrap()), ["1", "2", "<NULL>"]);
}

#[test]
fn inactive_rows_raise_no_errors() {
    // Every family, over a row whose value would fail, masked out.
    let b = Batch::new(vec![col(vec![0, 4], None)], 2);
    let active = [false, true];
    let div = Expr::arith(ArithOp::Div, c4(8), x4(), DataType::Int4);
    let exprs = vec![
        div.clone(),
        Expr::Case {
            operand: None,
            whens: vec![(Expr::cmp(CmpOp::Gt, div.clone(), c4(0)), div.clone())],
            otherwise: None,
            ty: DataType::Int4,
        },
        Expr::Coalesce(vec![div.clone(), c4(0)]),
        Expr::MinMax {
            args: vec![div.clone(), c4(0)],
            greatest: true,
        },
        Expr::in_list(div.clone(), vec![c4(2)], false),
        Expr::and(
            Expr::cmp(CmpOp::Gt, div.clone(), c4(0)),
            Expr::cmp(CmpOp::Gt, div.clone(), c4(0)),
        ),
    ];
    for e in exprs {
        let v = e.eval_active(&b, Some(&active)).unwrap();
        assert!(!v.is_null(1));
        assert_eq!(e.eval(&b).unwrap_err().code, "22012");
    }
}

#[test]
fn bpchar_to_text_casts_drop_the_padding() {
    // select 'a  '::char(3)::text || 'x', length('ab '::char(3)::varchar): ax, 2.
    let cast = |to| Expr::Cast {
        arg: Box::new(bpchar("a  ")),
        to,
    };
    let e = Expr::concat(cast(DataType::Text), text("x"));
    assert_eq!(e.eval_const().unwrap(), Value::Text("ax".into()));
    assert_eq!(
        cast(DataType::Varchar).eval_const().unwrap(),
        Value::Text("a".into())
    );
    assert_eq!(
        cast(DataType::Bpchar).eval_const().unwrap(),
        Value::Text("a  ".into())
    );
}

/// `x / 0` over column 0.
fn div0() -> Expr {
    Expr::arith(ArithOp::Div, x4(), c4(0), DataType::Int4)
}

fn one_div_zero() -> Expr {
    Expr::arith(ArithOp::Div, c4(1), c4(0), DataType::Int4)
}

#[test]
fn folding_raises_and_skips_errors_as_postgres_plans() {
    // select (9223372036854775807)::int - x from t where false: an error.
    let big = Expr::Cast {
        arg: Box::new(Expr::constant(Value::Int8(i64::MAX), DataType::Int8)),
        to: DataType::Int4,
    };
    let e = Expr::arith(ArithOp::Sub, big, x4(), DataType::Int4);
    assert_eq!(e.fold().unwrap_err().message, "integer out of range");
    // where (s || x)::boolean and false: false, and nothing evaluated.
    let bad = Expr::Cast {
        arg: Box::new(Expr::concat(
            Expr::Column {
                index: 1,
                ty: DataType::Text,
            },
            text("x"),
        )),
        to: DataType::Bool,
    };
    let e = Expr::and(bad, Expr::constant(Value::Bool(false), DataType::Bool));
    assert_eq!(
        e.fold().unwrap(),
        Expr::constant(Value::Bool(false), DataType::Bool)
    );
    // null::int - (x / 0): NULL without evaluating the division.
    let e = Expr::arith(
        ArithOp::Sub,
        Expr::constant(Value::Null, DataType::Int4),
        div0(),
        DataType::Int4,
    );
    assert_eq!(
        e.fold().unwrap(),
        Expr::constant(Value::Null, DataType::Int4)
    );
    // true or 1/0 = 1: true; 1/0 = 1 or true: division by zero.
    let t = Expr::constant(Value::Bool(true), DataType::Bool);
    let bad = Expr::cmp(CmpOp::Eq, one_div_zero(), c4(1));
    assert_eq!(Expr::or(t.clone(), bad.clone()).fold().unwrap(), t);
    assert_eq!(Expr::or(bad, t).fold().unwrap_err().code, "22012");
}

#[test]
fn folding_a_row_null_test_folds_every_field_first() {
    let row = |fields: Vec<Expr>, negated: bool| Expr::RowIsNull { fields, negated };
    let null = || Expr::constant(Value::Null, DataType::Int4);
    let is_null = |e: Expr, negated: bool| Expr::IsNull {
        arg: Box::new(e),
        negated,
    };
    // (6, 1 / 0) IS NULL: the 6 decides, but the division is folded.
    let e = row(vec![c4(6), one_div_zero()], false);
    assert_eq!(e.fold().unwrap_err().code, "22012");
    // (x, 6) IS NULL: false; (x, NULL, x / 0) IS NULL: the tests of x and x / 0.
    assert_eq!(
        row(vec![x4(), c4(6)], false).fold().unwrap(),
        Expr::constant(Value::Bool(false), DataType::Bool)
    );
    assert_eq!(
        row(vec![x4(), null(), div0()], false).fold().unwrap(),
        Expr::and(is_null(x4(), false), is_null(div0(), false))
    );
    // (x, 6) IS NOT NULL: x IS NOT NULL; (6, 7) IS NOT NULL: true.
    assert_eq!(
        row(vec![x4(), c4(6)], true).fold().unwrap(),
        is_null(x4(), true)
    );
    assert_eq!(
        row(vec![c4(6), c4(7)], true).fold().unwrap(),
        Expr::constant(Value::Bool(true), DataType::Bool)
    );
    // Unfolded, it tests every field: (x, NULL) over x = 1, NULL.
    let batch = Batch::new(vec![col(vec![1, 0], Some(vec![false, true]))], 2);
    let v = row(vec![x4(), null()], false).eval(&batch).unwrap();
    assert_eq!(v.data, Data::Bool(vec![false, true]));
}

#[test]
fn folding_case_and_coalesce() {
    // case when false then 1/0 else 1 end: 1.
    let e = Expr::Case {
        operand: None,
        whens: vec![(
            Expr::constant(Value::Bool(false), DataType::Bool),
            one_div_zero(),
        )],
        otherwise: Some(Box::new(c4(1))),
        ty: DataType::Int4,
    };
    assert_eq!(e.fold().unwrap(), c4(1));
    // case when x > 0 then 1/0 else 0 end: the THEN is folded, so an error.
    let e = Expr::Case {
        operand: None,
        whens: vec![(Expr::cmp(CmpOp::Gt, x4(), c4(0)), one_div_zero())],
        otherwise: Some(Box::new(c4(0))),
        ty: DataType::Int4,
    };
    assert_eq!(e.fold().unwrap_err().code, "22012");
    // case 2 when 1 then 'a' when 2 then 'b' end: 'b'.
    let e = Expr::Case {
        operand: Some(Box::new(c4(2))),
        whens: vec![(c4(1), text("a")), (c4(2), text("b"))],
        otherwise: None,
        ty: DataType::Text,
    };
    assert_eq!(e.fold().unwrap(), text("b"));
    // coalesce(null, 2, 1/0): 2; coalesce(x, null, 3): coalesce(x, 3).
    let e = Expr::Coalesce(vec![
        Expr::constant(Value::Null, DataType::Int4),
        c4(2),
        one_div_zero(),
    ]);
    assert_eq!(e.fold().unwrap(), c4(2));
    let e = Expr::Coalesce(vec![
        x4(),
        Expr::constant(Value::Null, DataType::Int4),
        c4(3),
    ]);
    assert_eq!(e.fold().unwrap(), Expr::Coalesce(vec![x4(), c4(3)]));
}

#[test]
fn folding_chains_and_calls() {
    // 1 + 2 + x + 3: (3 + x) + 3; 'a' || 'b' || x: 'ab' || x.
    let e = Expr::arith(
        ArithOp::Add,
        Expr::arith(
            ArithOp::Add,
            Expr::arith(ArithOp::Add, c4(1), c4(2), DataType::Int4),
            x4(),
            DataType::Int4,
        ),
        c4(3),
        DataType::Int4,
    );
    let want = Expr::arith(
        ArithOp::Add,
        Expr::arith(ArithOp::Add, c4(3), x4(), DataType::Int4),
        c4(3),
        DataType::Int4,
    );
    assert_eq!(e.fold().unwrap(), want);
    let col_text = Expr::Column {
        index: 1,
        ty: DataType::Text,
    };
    let e = Expr::concat(Expr::concat(text("a"), text("b")), col_text.clone());
    assert_eq!(e.fold().unwrap(), Expr::concat(text("ab"), col_text));
    // A 100,000-term AND of true constants and one column test folds to the test.
    let terms = (0..100_000).map(|_| Expr::constant(Value::Bool(true), DataType::Bool));
    let test = Expr::cmp(CmpOp::Gt, x4(), c4(0));
    let e = Expr::and(Expr::and_all(terms).unwrap(), test.clone());
    assert_eq!(e.fold().unwrap(), test);
    // upper('a') folds; random() does not; a strict call of NULL is NULL.
    let call = |name: &str, args: Vec<Expr>| {
        let types: Vec<_> = args
            .iter()
            .map(|a| crate::func::ArgType::Known(a.data_type()))
            .collect();
        let r = crate::func::resolve(name, &types).unwrap();
        Expr::call(r.func.unwrap(), args, r.ret)
    };
    assert_eq!(call("upper", vec![text("a")]).fold().unwrap(), text("A"));
    let rand = call("random", vec![]);
    assert_eq!(rand.clone().fold().unwrap(), rand);
    let e = call(
        "left",
        vec![Expr::constant(Value::Null, DataType::Text), x4()],
    );
    assert_eq!(
        e.fold().unwrap(),
        Expr::constant(Value::Null, DataType::Text)
    );
}

#[test]
fn params_are_substituted_before_evaluation() {
    let p = Expr::Param {
        index: 0,
        ty: DataType::Int4,
    };
    let mut e = Expr::arith(ArithOp::Add, p.clone(), c4(1), DataType::Int4);
    assert!(!e.is_constant() && e.uses_params(&|i| i == 0));
    assert_eq!(
        e.eval_const().unwrap_err().message,
        "there is no parameter $1"
    );
    e.substitute_params(&|i| (i == 0).then_some(Value::Int4(41)));
    assert!(!e.uses_params(&|_| true));
    assert_eq!(e.eval_const().unwrap(), Value::Int4(42));
}
