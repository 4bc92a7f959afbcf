use super::*;
use crate::render_rows;

fn session() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::open(dir.path()).unwrap();
    (dir, s)
}

/// Prepares `sql` (one statement), inferring parameter types.
fn prepare(s: &mut Session, sql: &str, declared: &[Option<DataType>]) -> Result<Prepared> {
    let st = s.split(sql)?.remove(0);
    s.prepare(&st, declared, true)
}

/// Runs a prepared statement and returns its rows as text.
fn rows(s: &mut Session, p: &mut Prepared, values: &[Value]) -> Result<Vec<Vec<Option<String>>>> {
    s.begin_statement();
    let r = match s.start(p, values, &mut |_| {})? {
        Started::Rows(mut stream) => {
            let mut out = Vec::new();
            while let Some(b) = stream.next_batch()? {
                out.extend(render_rows(&b, stream.types(), s.settings()));
            }
            out
        }
        Started::Rendered { rows, .. } => rows,
        Started::Command { tag } => vec![vec![Some(tag)]],
    };
    s.end_statement();
    Ok(r)
}

fn one(s: &mut Session, p: &mut Prepared, values: &[Value]) -> Vec<String> {
    rows(s, p, values)
        .unwrap()
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|v| v.unwrap_or_default())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn statements_parameters_and_streams() {
    let (_d, mut s) = session();
    let stmts = s
        .split("create table t (a int, b text); insert into t select g, 'x' from generate_series(1, 5000) g")
        .unwrap();
    assert_eq!(stmts.len(), 2);
    for st in &stmts {
        let mut p = s.prepare(st, &[], false).unwrap();
        let Started::Command { tag } = s.start(&mut p, &[], &mut |_| {}).unwrap() else {
            panic!("expected a command")
        };
        assert!(tag == "CREATE TABLE" || tag == "INSERT 0 5000", "{tag}");
    }
    let mut q = prepare(&mut s, "select a from t where a > $1 and b = $2", &[]).unwrap();
    assert_eq!(q.param_types(), [DataType::Int4, DataType::Text]);
    assert_eq!(
        q.columns().unwrap(),
        [ResultColumn {
            name: "a".into(),
            ty: SqlType::Int4
        }]
    );
    let values = [Value::Int4(10), Value::Text("x".into())];
    let got = one(&mut s, &mut q, &values);
    assert_eq!(got.len(), 4990);
    let sum: i64 = got.iter().map(|v| v.parse::<i64>().unwrap()).sum();
    assert_eq!(sum, (11..=5000).sum::<i64>());
    // The same plan again, with other values.
    let values = [Value::Int4(4998), Value::Text("x".into())];
    assert_eq!(one(&mut s, &mut q, &values), ["4999", "5000"]);
    assert!(s.start(&mut q, &[], &mut |_| {}).is_err());
    let e = rows(&mut s, &mut q, &[Value::Text("1".into()), Value::Null]).unwrap_err();
    assert_eq!(e.code, "42804");
}

#[test]
fn parameter_types_come_from_their_context() {
    let (_d, mut s) = session();
    s.query("create table t (i int, b bigint, v varchar(5), n numeric(6, 2), d date)")
        .unwrap();
    let types = |s: &mut Session, sql: &str| prepare(s, sql, &[]).unwrap().param_types().to_vec();
    use DataType as T;
    assert_eq!(types(&mut s, "select $1 + 1"), [T::Int4]);
    assert_eq!(types(&mut s, "select $1"), [T::Text]);
    assert_eq!(types(&mut s, "select $1::bigint, $2"), [T::Int8, T::Text]);
    assert_eq!(
        types(&mut s, "insert into t values ($1, $2, $3, $4, $5)"),
        [T::Int4, T::Int8, T::Varchar, T::Numeric, T::Date]
    );
    assert_eq!(
        types(&mut s, "insert into t (d, i) values ($1, $2)"),
        [T::Date, T::Int4]
    );
    assert_eq!(
        types(&mut s, "update t set v = $1 where b = $2"),
        [T::Varchar, T::Int8]
    );
    assert_eq!(types(&mut s, "delete from t where i < $1"), [T::Int4]);
    assert_eq!(
        types(&mut s, "select * from t where i = $1 and $1 > 0"),
        [T::Int4]
    );
    // A declared type wins over the context.
    assert_eq!(
        prepare(&mut s, "select i from t where i = $1", &[Some(T::Int8)])
            .unwrap()
            .param_types(),
        [T::Int8]
    );
    // A parameter neither declared nor used has no type.
    let e = prepare(&mut s, "select $2::int", &[]).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("42P18", "could not determine data type of parameter $1")
    );
    // A simple query cannot use parameters.
    let st = s.split("select $1").unwrap().remove(0);
    let e = s.prepare(&st, &[], false).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("42P02", "there is no parameter $1")
    );
    // The result column keeps its typmod.
    let p = prepare(&mut s, "select v, n from t", &[]).unwrap();
    let cols: Vec<SqlType> = p.columns().unwrap().iter().map(|c| c.ty).collect();
    assert_eq!(
        cols,
        [SqlType::Varchar(Some(5)), SqlType::Numeric(Some((6, 2)))]
    );
}

#[test]
fn changes_with_parameters_and_returning() {
    let (_d, mut s) = session();
    s.query("create table t (a int, b varchar(3))").unwrap();
    let mut ins = prepare(
        &mut s,
        "insert into t values ($1, $2) returning a * 2, b",
        &[],
    )
    .unwrap();
    for i in 1..=3 {
        let got = one(
            &mut s,
            &mut ins,
            &[Value::Int4(i), Value::Text(format!("v{i}"))],
        );
        assert_eq!(got, [format!("{}|v{i}", i * 2)]);
    }
    let e = rows(
        &mut s,
        &mut ins,
        &[Value::Int4(9), Value::Text("long".into())],
    )
    .unwrap_err();
    assert_eq!(e.code, "22001");
    let mut upd = prepare(&mut s, "update t set b = $2 where a = $1", &[]).unwrap();
    assert_eq!(
        one(
            &mut s,
            &mut upd,
            &[Value::Int4(2), Value::Text("two".into())]
        ),
        ["UPDATE 1"]
    );
    let mut del = prepare(&mut s, "delete from t where a >= $1", &[]).unwrap();
    assert_eq!(one(&mut s, &mut del, &[Value::Int4(3)]), ["DELETE 1"]);
    let mut all = prepare(&mut s, "select a, b from t order by a", &[]).unwrap();
    assert_eq!(one(&mut s, &mut all, &[]), ["1|v1", "2|two"]);
}

#[test]
fn generic_plans_use_indexes_and_follow_ddl() {
    let (_d, mut s) = session();
    s.query("create table t as select g as a, g * 10 as b from generate_series(1, 20000) g")
        .unwrap();
    s.query("create index on t (a)").unwrap();
    let mut p = prepare(&mut s, "select b from t where a = $1", &[]).unwrap();
    let Some(Plan::Query(q)) = p.generic.as_ref().map(|g| &*g.plan) else {
        panic!("a query keeps its plan")
    };
    let text = crate::explain::explain(
        &q.stmt,
        crate::explain::ExplainOptions {
            analyze: false,
            costs: false,
            timing: false,
        },
        None,
    )
    .join("\n");
    assert!(text.contains("Index Scan using t_a_idx on t"), "{text}");
    assert!(text.contains("Index Cond: (a = $1)"), "{text}");
    for k in [1, 777, 20000, 20001] {
        let want: Vec<String> = if k <= 20000 {
            vec![(k * 10).to_string()]
        } else {
            vec![]
        };
        assert_eq!(one(&mut s, &mut p, &[Value::Int4(k)]), want);
    }
    // A NULL key matches nothing.
    assert!(one(&mut s, &mut p, &[Value::Null]).is_empty());
    // The table is dropped and created again: the plan follows.
    s.query("drop table t").unwrap();
    let e = rows(&mut s, &mut p, &[Value::Int4(1)]).unwrap_err();
    assert_eq!(e.code, "42P01");
    s.query("create table t (a int, b int)").unwrap();
    s.query("insert into t values (1, 5)").unwrap();
    assert_eq!(one(&mut s, &mut p, &[Value::Int4(1)]), ["5"]);
    // ... unless its result columns change.
    s.query("drop table t").unwrap();
    s.query("create table t (a int, b text)").unwrap();
    let e = rows(&mut s, &mut p, &[Value::Int4(1)]).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("0A000", "cached plan must not change result type")
    );
}

#[test]
fn notices_and_rendered_results() {
    let (_d, mut s) = session();
    let mut notices = Vec::new();
    let mut p = prepare(&mut s, "drop table if exists nope", &[]).unwrap();
    let Started::Command { tag } = s
        .start(&mut p, &[], &mut |n| {
            notices.push(format!("{}: {}", n.level, n.message))
        })
        .unwrap()
    else {
        panic!("expected a command")
    };
    assert_eq!(tag, "DROP TABLE");
    assert_eq!(notices, ["NOTICE: table \"nope\" does not exist, skipping"]);
    let mut p = prepare(&mut s, "show timezone", &[]).unwrap();
    assert_eq!(p.columns().unwrap()[0].name, "TimeZone");
    let Started::Rendered { rows, tag, .. } = s.start(&mut p, &[], &mut |_| {}).unwrap() else {
        panic!("expected rows")
    };
    assert_eq!(tag, "SHOW");
    assert_eq!(rows, vec![vec![Some("UTC".to_string())]]);
    assert!(s.split("").unwrap().is_empty());
}

#[test]
fn settings_reach_casts_and_output() {
    let (_d, mut s) = session();
    s.query("set timezone = 'America/New_York'").unwrap();
    s.query("set datestyle = 'sql, dmy'").unwrap();
    let mut p = prepare(
        &mut s,
        "select '2024-01-02 03:04:05+00'::timestamptz, $1::date, 0.1::float8 + $2",
        &[],
    )
    .unwrap();
    assert_eq!(p.param_types(), [DataType::Date, DataType::Float8]);
    let date = s.parameter_value(DataType::Date, "3/4/2024").unwrap();
    let values = [date, Value::Float8(0.2)];
    let got = one(&mut s, &mut p, &values);
    assert_eq!(
        got,
        ["01/01/2024 22:04:05 EST|03/04/2024|0.30000000000000004"]
    );
    s.query("set extra_float_digits = 0").unwrap();
    let got = one(&mut s, &mut p, &values);
    assert_eq!(got, ["01/01/2024 22:04:05 EST|03/04/2024|0.3"]);
}

#[test]
fn interrupt_stops_a_stream() {
    let (_d, mut s) = session();
    let mut p = prepare(
        &mut s,
        "select count(*) from generate_series(1, 100000000) g",
        &[],
    )
    .unwrap();
    s.begin_statement();
    let Started::Rows(mut rows) = s.start(&mut p, &[], &mut |_| {}).unwrap() else {
        panic!("expected rows")
    };
    s.interrupt().cancel();
    let e = rows.next_batch().unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("57014", "canceling statement due to user request")
    );
    s.end_statement();
}

#[test]
fn a_cancel_from_another_thread_stops_execute() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_d, mut s) = session();
    let interrupt = s.interrupt().clone();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    // Cancels until the statement has stopped (a cancel that lands
    // before the statement starts is forgotten when it starts).
    let canceller = std::thread::spawn(move || {
        while !d.load(Ordering::Relaxed) {
            interrupt.cancel();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
    let e = s
        .query("select count(*) from generate_series(1, 10000000000) g")
        .unwrap_err();
    done.store(true, Ordering::Relaxed);
    canceller.join().unwrap();
    assert_eq!(e.message, "canceling statement due to user request");
}

/// EXECUTE of a statement PREPARE made, itself prepared by Parse: it takes
/// no parameters (its values are its arguments) and runs again.
#[test]
fn execute_of_a_prepared_statement_runs_again() {
    let (_d, mut s) = session();
    s.query("create table t (a int); insert into t values (1), (2), (3)")
        .unwrap();
    s.query("prepare q (int) as select count(*) from t where a >= $1")
        .unwrap();
    let mut p = prepare(&mut s, "execute q(2)", &[]).unwrap();
    assert!(p.param_types().is_empty());
    assert_eq!(p.columns().map(|c| c.len()), Some(1));
    for _ in 0..2 {
        assert_eq!(one(&mut s, &mut p, &[]), ["2"]);
    }
}
