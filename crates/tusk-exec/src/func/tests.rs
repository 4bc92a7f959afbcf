//! Function calls checked against PostgreSQL 15.
//!
//! `pg15_calls.tsv` holds one call per line as written in SQL, a tab, and
//! what PostgreSQL 15 (C collation, UTF-8) printed for `SELECT call`: the
//! value (`<NULL>` for NULL, `⏎` for a newline) or `ERROR code: message`
//! with ` HINT hint`. The harness here reads the call's literals the way the
//! binder would type them (`'x'` unknown, `1` integer, `1.5` numeric,
//! `x::type`), resolves the function with [`resolve`], evaluates it as a
//! constant and compares the text.

use super::resolve::{resolve, resolve_operator, ArgType};
use crate::error::ExecError;
use crate::expr::Expr;
use crate::numeric::Numeric;
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::DataType;

/// A literal of the test language.
#[derive(Debug, Clone)]
pub(crate) enum Lit {
    /// A quoted string or NULL, of type unknown.
    Unknown(Option<String>),
    Typed(Value, DataType),
}

pub(crate) fn unquote(s: &str) -> Option<String> {
    if let Some(body) = s.strip_prefix("E'").and_then(|b| b.strip_suffix('\'')) {
        return Some(
            body.replace("''", "'")
                .replace("\\n", "\n")
                .replace("\\b", "\u{8}"),
        );
    }
    let body = s.strip_prefix('\'')?.strip_suffix('\'')?;
    Some(body.replace("''", "'"))
}

/// Parses `text` as a value of type `ty` (what the binder does with an
/// unknown literal or a `::type` cast of a string).
pub(crate) fn parse_as(text: &str, ty: DataType) -> Value {
    match ty {
        DataType::Int2 => Value::Int2(text.parse().unwrap()),
        DataType::Int4 => Value::Int4(text.parse().unwrap()),
        DataType::Int8 => Value::Int8(text.parse().unwrap()),
        DataType::Float4 => Value::Float4(text.parse().unwrap()),
        DataType::Float8 => Value::Float8(text.parse().unwrap()),
        DataType::Numeric => Value::Numeric(Numeric::parse(text).unwrap()),
        DataType::Bool => Value::Bool(text == "true" || text == "t"),
        _ => Value::Text(text.to_string()),
    }
}

pub(crate) fn lit(arg: &str) -> Lit {
    let arg = arg.trim();
    if arg == "NULL" {
        return Lit::Unknown(None);
    }
    if arg == "true" || arg == "false" {
        return Lit::Typed(Value::Bool(arg == "true"), DataType::Bool);
    }
    if let Some((v, ty)) = arg.rsplit_once("::") {
        let (ty, pad) = match ty {
            "int2" => (DataType::Int2, 0),
            "int4" => (DataType::Int4, 0),
            "int8" => (DataType::Int8, 0),
            "float4" => (DataType::Float4, 0),
            "float8" => (DataType::Float8, 0),
            "numeric" => (DataType::Numeric, 0),
            "text" => (DataType::Text, 0),
            "varchar" => (DataType::Varchar, 0),
            t => {
                let n = t.strip_prefix("char(").and_then(|r| r.strip_suffix(')'));
                (DataType::Bpchar, n.unwrap().parse::<usize>().unwrap())
            }
        };
        let text = unquote(v).unwrap_or_else(|| v.to_string());
        let text = format!("{text:<pad$}");
        return Lit::Typed(parse_as(&text, ty), ty);
    }
    if let Some(s) = unquote(arg) {
        return Lit::Unknown(Some(s));
    }
    if arg.contains('.') {
        return Lit::Typed(
            Value::Numeric(Numeric::parse(arg).unwrap()),
            DataType::Numeric,
        );
    }
    match arg.parse::<i32>() {
        Ok(v) => Lit::Typed(Value::Int4(v), DataType::Int4),
        Err(_) => Lit::Typed(Value::Int8(arg.parse().unwrap()), DataType::Int8),
    }
}

/// Splits `a, 'b,c', d` at top-level commas.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in s.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

pub(crate) fn show_error(e: ExecError) -> String {
    let mut s = format!("ERROR {}: {}", e.code, e.message);
    if let Some(h) = e.hint {
        s += &format!(" HINT {h}");
    }
    s
}

/// The function name, literals and argument types of `call`.
fn parse_call(call: &str) -> (&str, Vec<Lit>, Vec<ArgType>) {
    let open = call.find('(').unwrap();
    let args: Vec<Lit> = split_args(&call[open + 1..call.len() - 1])
        .iter()
        .map(|a| lit(a))
        .collect();
    let types = args
        .iter()
        .map(|a| match a {
            Lit::Unknown(_) => ArgType::Unknown,
            Lit::Typed(_, t) => ArgType::Known(*t),
        })
        .collect();
    (&call[..open], args, types)
}

/// Resolves and evaluates `call`, printing the result as psql would.
fn run(call: &str) -> String {
    let (name, args, types) = parse_call(call);
    let r = match resolve(name, &types) {
        Ok(r) => r,
        Err(e) => return show_error(e),
    };
    let exprs: Vec<Expr> = args
        .into_iter()
        .zip(&r.arg_types)
        .map(|(a, &t)| match a {
            Lit::Unknown(None) => Expr::constant(Value::Null, t),
            Lit::Unknown(Some(s)) => Expr::constant(parse_as(&s, t), t),
            Lit::Typed(v, vt) if vt == t => Expr::constant(v, t),
            Lit::Typed(v, vt) => Expr::Cast {
                arg: Box::new(Expr::constant(v, vt)),
                to: t,
            },
        })
        .collect();
    let e = Expr::call(r.func.unwrap(), exprs, r.ret);
    match e.eval_const() {
        Ok(v) => v.to_text().unwrap_or_else(|| "<NULL>".into()),
        Err(e) => show_error(e),
    }
}

#[test]
fn calls_match_postgres() {
    let mut failures = Vec::new();
    let cases = include_str!("pg15_calls.tsv");
    for line in cases.lines() {
        let (call, want) = line.split_once('\t').unwrap();
        let want = want.replace('⏎', "\n");
        let got = run(call);
        if got != want {
            failures.push(format!("{call}\n   want: {want}\n    got: {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} calls differ from PostgreSQL 15:\n{}",
        failures.len(),
        cases.lines().count(),
        failures.join("\n")
    );
}

/// A batch of one text column with a NULL and rows the mask leaves out.
fn text_batch(rows: &[Option<&str>]) -> Batch {
    let mut v = Vector::with_capacity(DataType::Text, rows.len());
    for r in rows {
        v.push_value(&r.map_or(Value::Null, |s| Value::Text(s.into())));
    }
    Batch::new(vec![v], rows.len())
}

#[test]
fn strict_functions_skip_null_and_inactive_rows() {
    // chr(x) over [65, NULL, 0 (inactive)]: the 0 would be an error.
    let x = Vector::new(Data::Int4(vec![65, 0, 0]), Some(vec![false, true, false]));
    let b = Batch::new(vec![x], 3);
    let r = resolve("chr", &[ArgType::Known(DataType::Int4)]).unwrap();
    let e = Expr::call(
        r.func.unwrap(),
        vec![Expr::Column {
            index: 0,
            ty: DataType::Int4,
        }],
        r.ret,
    );
    let v = e.eval_active(&b, Some(&[true, true, false])).unwrap();
    assert_eq!(v.value(0), Value::Text("A".into()));
    assert!(v.is_null(1));
    // With the row active, PostgreSQL's error.
    let err = e.eval(&b).unwrap_err();
    assert_eq!(err.message, "null character not permitted");

    // split_part(s, ',', 0) errors only where s is not NULL.
    let b = text_batch(&[None, None]);
    let r = resolve(
        "split_part",
        &[
            ArgType::Known(DataType::Text),
            ArgType::Unknown,
            ArgType::Known(DataType::Int4),
        ],
    )
    .unwrap();
    let e = Expr::call(
        r.func.unwrap(),
        vec![
            Expr::Column {
                index: 0,
                ty: DataType::Text,
            },
            Expr::constant(Value::Text(",".into()), DataType::Text),
            Expr::constant(Value::Int4(0), DataType::Int4),
        ],
        r.ret,
    );
    let v = e.eval(&b).unwrap();
    assert!(v.is_null(0) && v.is_null(1));
}

#[test]
fn non_strict_functions_see_nulls() {
    let b = text_batch(&[Some("a"), None, Some("c")]);
    let col = Expr::Column {
        index: 0,
        ty: DataType::Text,
    };
    let sep = Expr::constant(Value::Text("-".into()), DataType::Text);
    let r = resolve(
        "concat_ws",
        &[
            ArgType::Unknown,
            ArgType::Known(DataType::Text),
            ArgType::Known(DataType::Text),
        ],
    )
    .unwrap();
    let e = Expr::call(r.func.unwrap(), vec![sep, col.clone(), col], r.ret);
    let v = e.eval(&b).unwrap();
    let texts: Vec<Value> = (0..3).map(|i| v.value(i)).collect();
    assert_eq!(
        texts,
        vec![
            Value::Text("a-a".into()),
            Value::Text("".into()),
            Value::Text("c-c".into())
        ]
    );
}

#[test]
fn volatility_and_constants() {
    let r = resolve("random", &[]).unwrap();
    let rand = Expr::call(r.func.unwrap(), vec![], r.ret);
    assert!(!rand.is_constant());
    let r = resolve("abs", &[ArgType::Known(DataType::Int4)]).unwrap();
    let abs = Expr::call(
        r.func.unwrap(),
        vec![Expr::constant(Value::Int4(-3), DataType::Int4)],
        r.ret,
    );
    assert!(abs.is_constant() && abs.is_strict());
    assert_eq!(abs.eval_const().unwrap(), Value::Int4(3));
}

#[test]
fn resolution_matches_postgres() {
    // pg15_resolve.tsv: a call and PostgreSQL 15's `pg_typeof(call)` (or its
    // error): the overload chosen, seen through its result type.
    let cases = include_str!("pg15_resolve.tsv");
    let mut failures = Vec::new();
    for line in cases.lines() {
        let (call, want) = line.split_once('\t').unwrap();
        let (name, _, types) = parse_call(call);
        let got = match resolve(name, &types) {
            Ok(r) => r.ret.display_name().to_string(),
            Err(e) => show_error(e),
        };
        if got != want {
            failures.push(format!("{call}\n   want: {want}\n    got: {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} resolutions differ from PostgreSQL 15:\n{}",
        failures.len(),
        cases.lines().count(),
        failures.join("\n")
    );
}

#[test]
fn operator_resolution_matches_postgres() {
    // pg15_operators.tsv: `left op right` and PostgreSQL 15's
    // `pg_typeof(left op right)` (or its error).
    let cases = include_str!("pg15_operators.tsv");
    let mut failures = Vec::new();
    let arg_type = |s: &str| match lit(s) {
        Lit::Unknown(_) => ArgType::Unknown,
        Lit::Typed(_, t) => ArgType::Known(t),
    };
    for line in cases.lines() {
        let (expr, want) = line.split_once('\t').unwrap();
        let mut parts = expr.splitn(3, ' ');
        let (l, op, r) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let got = match resolve_operator(op, arg_type(l), arg_type(r)) {
            Ok(res) => res.ret.display_name().to_string(),
            Err(e) => show_error(e),
        };
        if got != want {
            failures.push(format!("{expr}\n   want: {want}\n    got: {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} operators differ from PostgreSQL 15:\n{}",
        failures.len(),
        cases.lines().count(),
        failures.join("\n")
    );
    // The operand types to cast to: both sides of one type.
    let k = ArgType::Known;
    let r = resolve_operator("=", k(DataType::Bpchar), ArgType::Unknown).unwrap();
    assert_eq!(r.arg_types, [DataType::Bpchar, DataType::Bpchar]);
    let r = resolve_operator("=", k(DataType::Bpchar), k(DataType::Text)).unwrap();
    assert_eq!(r.arg_types, [DataType::Text, DataType::Text]);
    let r = resolve_operator("+", k(DataType::Int4), k(DataType::Int8)).unwrap();
    assert_eq!(r.arg_types, [DataType::Int8, DataType::Int8]);
    let r = resolve_operator("<", k(DataType::Int4), k(DataType::Numeric)).unwrap();
    assert_eq!(r.arg_types, [DataType::Numeric, DataType::Numeric]);
}

#[test]
fn common_types_match_postgres() {
    use super::resolve::common_type;
    use DataType as D;
    let k = ArgType::Known;
    let u = ArgType::Unknown;
    // select pg_typeof(coalesce(...)) in PostgreSQL 15.
    let cases: &[(&[ArgType], &str)] = &[
        (&[k(D::Float4), k(D::Numeric)], "real"),
        (&[k(D::Numeric), k(D::Float4)], "real"),
        (&[k(D::Int4), k(D::Int8)], "bigint"),
        (&[u, u], "text"),
        (&[u, k(D::Int4)], "integer"),
        (&[k(D::Bpchar), k(D::Varchar)], "character"),
        (&[k(D::Varchar), k(D::Bpchar)], "character varying"),
        (
            &[k(D::Int4), k(D::Float8), k(D::Numeric)],
            "double precision",
        ),
        (&[k(D::Int2), k(D::Int4)], "integer"),
    ];
    for (types, want) in cases {
        assert_eq!(
            common_type("COALESCE", types).unwrap().display_name(),
            *want,
            "{types:?}"
        );
    }
    // select case when true then 1 else 'a'::text end (ELSE first).
    let e = common_type("CASE", &[k(D::Text), k(D::Int4)]).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("42804", "CASE types text and integer cannot be matched")
    );
    let e = common_type("COALESCE", &[k(D::Date), k(D::Time)]).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "42846",
            "COALESCE could not convert type time without time zone to date"
        )
    );
}
