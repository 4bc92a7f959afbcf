//! PRIMARY KEY, UNIQUE, multi-column indexes and INSERT ... ON CONFLICT
//! through SQL: the errors with their SQLSTATE and DETAIL lines as
//! PostgreSQL 15 words them (checked against it), the catalog entries the
//! constraints make, and the plans that use the indexes.

mod common;

use common::{error, rows, run, session_with};
use tusk_sql::{Session, SqlError};

fn session(dir: &std::path::Path) -> Session {
    session_with(dir, "shared_buffers = 1MB\nhuge_pages = off\n")
}

fn fail(s: &mut Session, sql: &str) -> SqlError {
    match s.query(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e,
    }
}

fn explain(s: &mut Session, sql: &str) -> String {
    run(s, &format!("explain (costs off) {sql}")).join("\n")
}

#[test]
fn unique_violations_report_the_new_key() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(
        &mut s,
        "create table t (c char(4) unique, v varchar(5) primary key, n numeric unique, a int, b text, unique (a, b))",
    );
    run(&mut s, "insert into t values ('a', 'x', 1.50, 1, 'p')");
    let e = fail(&mut s, "insert into t values ('a ', 'y', 2, 2, 'p')");
    assert_eq!(e.code, "23505");
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"t_c_key\""
    );
    // char(n) as stored, blank-padded.
    assert_eq!(e.detail.as_deref(), Some("Key (c)=(a   ) already exists."));
    let e = fail(&mut s, "insert into t values ('b', 'x', 3, 3, 'p')");
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"t_pkey\""
    );
    assert_eq!(e.detail.as_deref(), Some("Key (v)=(x) already exists."));
    // The new row's value, not the existing one's.
    let e = fail(&mut s, "insert into t values ('q', 'z', 1.5, 4, 'p')");
    assert_eq!(e.detail.as_deref(), Some("Key (n)=(1.5) already exists."));
    let e = fail(&mut s, "insert into t values ('q', 'z', 7, 1, 'p')");
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (a, b)=(1, p) already exists.")
    );
    // The primary key's column is NOT NULL.
    let e = fail(&mut s, "insert into t values ('q', null, 7, 9, 'p')");
    assert_eq!(e.code, "23502");
    // NULLs never conflict.
    run(
        &mut s,
        "insert into t values (null, 'n1', null, null, 'p'), (null, 'n2', null, 1, null), (null, 'n3', null, 1, null)",
    );
    assert_eq!(rows(&mut s, "select count(*) from t"), vec!["4"]);
    // UPDATE checks the new versions.
    let e = fail(&mut s, "update t set v = 'x' where v = 'n1'");
    assert_eq!(e.detail.as_deref(), Some("Key (v)=(x) already exists."));
    run(&mut s, "update t set v = 'w' where v = 'n1'");
    assert_eq!(
        rows(&mut s, "select v from t where v = 'w'"),
        vec!["w".to_string()]
    );
}

#[test]
fn constraint_indexes_in_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(
        &mut s,
        "create table t (a int unique, b int unique, unique (a), primary key (b), unique (b, a), unique (a, b))",
    );
    {
        let db = s.database();
        let cat = db.catalog();
        let t = cat.table("t").unwrap();
        let mut idx: Vec<_> = cat.indexes_of(t.oid).cloned().collect();
        idx.sort_by_key(|i| i.oid);
        let names: Vec<&str> = idx.iter().map(|i| i.name.as_str()).collect();
        // PostgreSQL's choice and order: the primary key first, redundant
        // ones dropped.
        assert_eq!(names, vec!["t_pkey", "t_a_key", "t_b_a_key", "t_a_b_key"]);
        assert_eq!(idx[0].kind, tusk_storage::IndexKind::PrimaryKey);
        assert_eq!(idx[1].kind, tusk_storage::IndexKind::UniqueConstraint);
        assert!(t.columns[1].not_null && !t.columns[0].not_null);
    }
    let e = fail(&mut s, "drop index t_pkey");
    assert_eq!(e.code, "2BP01");
    assert_eq!(
        e.message,
        "cannot drop index t_pkey because constraint t_pkey on table t requires it"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("You can drop constraint t_pkey on table t instead.")
    );
    // Taken names get a number.
    run(&mut s, "create table u_a_key (x int)");
    run(&mut s, "create table u (a int unique)");
    run(&mut s, "create index on u (a)");
    run(&mut s, "create index on u (a)");
    {
        let db = s.database();
        let cat = db.catalog();
        let u = cat.table("u").unwrap().oid;
        let mut names: Vec<String> = cat.indexes_of(u).map(|i| i.name.clone()).collect();
        names.sort();
        assert_eq!(names, vec!["u_a_idx", "u_a_idx1", "u_a_key1"]);
    }
    assert_eq!(
        run(&mut s, "create index if not exists u_a_idx on u (a)"),
        vec![
            "NOTICE:  relation \"u_a_idx\" already exists, skipping",
            "CREATE INDEX"
        ]
    );
    assert_eq!(
        error(
            &mut s,
            "create table w (a int, b int, primary key (a), primary key (b))"
        ),
        "multiple primary keys for table \"w\" are not allowed"
    );
    // A failed CREATE TABLE leaves nothing behind.
    assert_eq!(
        error(
            &mut s,
            "create table w (a int, b int, constraint c1 unique (a), constraint c1 unique (b))"
        ),
        "relation \"c1\" already exists"
    );
    assert!(!s.database().catalog().relation_exists("w"));
    assert!(!s.database().catalog().relation_exists("c1"));
    run(&mut s, "create table w (a int)");
}

#[test]
fn unique_index_builds_report_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table t (a int, b text)");
    run(
        &mut s,
        "insert into t select g % 100, 'r' || g from generate_series(1, 1000) g",
    );
    let e = fail(&mut s, "create unique index t_u on t (a)");
    assert_eq!(e.code, "23505");
    assert_eq!(e.message, "could not create unique index \"t_u\"");
    let detail = e.detail.unwrap();
    assert!(
        detail.starts_with("Key (a)=(") && detail.ends_with(") is duplicated."),
        "{detail}"
    );
    assert!(!s.database().catalog().relation_exists("t_u"));
    run(&mut s, "create unique index t_u on t (a, b)");
    let e = fail(&mut s, "insert into t values (5, 'r5')");
    assert_eq!(
        e.detail.as_deref(),
        Some("Key (a, b)=(5, r5) already exists.")
    );
}

#[test]
fn plans_use_key_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table t (a int, b text, c int)");
    run(
        &mut s,
        "insert into t select g % 50, 'b' || (g % 7), g from generate_series(1, 20000) g",
    );
    run(&mut s, "create index t_ab on t (a, b desc nulls last)");
    assert_eq!(
        explain(&mut s, "select c from t where b = 'b3' and a = 7"),
        "Index Scan using t_ab on t\n  Index Cond: ((a = 7) AND (b = 'b3'::text))"
    );
    // A range on the second column after an equality on the first.
    assert_eq!(
        explain(&mut s, "select c from t where a = 7 and b > 'b3'"),
        "Index Scan using t_ab on t\n  Index Cond: ((a = 7) AND (b > 'b3'::text))"
    );
    // Only the first column bounded: the rest filters.
    assert_eq!(
        explain(&mut s, "select c from t where a < 2 and c = 5"),
        "Index Scan using t_ab on t\n  Index Cond: (a < 2)\n  Filter: (c = 5)"
    );
    // The second column alone does not bound a descent.
    assert!(explain(&mut s, "select c from t where b = 'b3'").starts_with("Seq Scan"));
    assert_eq!(
        explain(&mut s, "select c from t where a is null"),
        "Index Scan using t_ab on t\n  Index Cond: (a IS NULL)"
    );
    assert_eq!(
        rows(&mut s, "select count(*) from t where a = 7 and b > 'b3'"),
        vec!["171"]
    );
    assert_eq!(
        rows(
            &mut s,
            "select count(*) from t where a = 7 and b >= 'b3' and b < 'b5' and b <> 'b4'"
        ),
        vec!["57"]
    );
    run(
        &mut s,
        "insert into t values (null, 'n', -1), (7, null, -2)",
    );
    assert_eq!(rows(&mut s, "select c from t where a is null"), vec!["-1"]);
    assert_eq!(
        rows(&mut s, "select c from t where a = 7 and b is null"),
        vec!["-2"]
    );
    // UPDATE and DELETE find their rows through the index too.
    assert_eq!(
        run(&mut s, "update t set c = -c where a = 3 and b = 'b1'"),
        vec!["UPDATE 57"]
    );
    assert_eq!(
        rows(
            &mut s,
            "select count(*) from t where a = 3 and b = 'b1' and c < 0"
        ),
        vec!["57"]
    );
    assert_eq!(run(&mut s, "delete from t where a = 3"), vec!["DELETE 400"]);
    assert_eq!(
        rows(&mut s, "select count(*) from t where a = 3"),
        vec!["0"]
    );
}

#[test]
fn on_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table kv (k int primary key, v text, n int)");
    run(&mut s, "insert into kv values (1, 'one', 0), (2, 'two', 0)");
    assert_eq!(
        run(
            &mut s,
            "insert into kv values (1, 'uno', 0), (3, 'three', 0) on conflict do nothing returning k"
        ),
        vec!["3", "INSERT 0 1"]
    );
    assert_eq!(
        run(
            &mut s,
            "insert into kv as t values (1, 'uno', 0), (4, 'four', 0) on conflict (k) do update set v = t.v || '+' || excluded.v, n = t.n + 1 returning *"
        ),
        vec!["1|one+uno|1", "4|four|0", "INSERT 0 2"]
    );
    // WHERE false: the row stays and is not counted.
    assert_eq!(
        run(
            &mut s,
            "insert into kv values (2, 'dos', 0) on conflict (k) do update set v = excluded.v where kv.n > 0"
        ),
        vec!["INSERT 0 0"]
    );
    let e = fail(
        &mut s,
        "insert into kv values (5, 'a', 0), (5, 'b', 0) on conflict (k) do update set v = excluded.v",
    );
    assert_eq!(e.code, "21000");
    assert_eq!(
        e.message,
        "ON CONFLICT DO UPDATE command cannot affect row a second time"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
    );
    assert_eq!(
        rows(&mut s, "select count(*) from kv where k = 5"),
        vec!["0"]
    );
    let e = fail(
        &mut s,
        "insert into kv values (1, 'x', 0) on conflict (v) do nothing",
    );
    assert_eq!(e.code, "42P10");
    let e = fail(
        &mut s,
        "insert into kv values (1, 'x', 0) on conflict do update set v = 'z'",
    );
    assert_eq!(e.code, "42601");
    assert_eq!(
        e.hint.as_deref(),
        Some("For example, ON CONFLICT (column_name).")
    );
    let e = fail(
        &mut s,
        "insert into kv values (1, 'x', 0) on conflict on constraint nope do nothing",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "42704",
            "constraint \"nope\" for table \"kv\" does not exist"
        )
    );
    // DO UPDATE's new version is checked like any other.
    let e = fail(
        &mut s,
        "insert into kv values (1, 'x', 0) on conflict (k) do update set k = 2",
    );
    assert_eq!(e.detail.as_deref(), Some("Key (k)=(2) already exists."));
    assert_eq!(
        rows(&mut s, "select k, v, n from kv order by k"),
        vec!["1|one+uno|1", "2|two|0", "3|three|0", "4|four|0"]
    );
    // A non-arbiter unique index still raises 23505.
    run(&mut s, "create unique index kv_v on kv (v)");
    let e = fail(
        &mut s,
        "insert into kv values (9, 'two', 0) on conflict (k) do nothing",
    );
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"kv_v\""
    );
    // ...but is an arbiter without a target.
    assert_eq!(
        run(
            &mut s,
            "insert into kv values (9, 'two', 0) on conflict do nothing"
        ),
        vec!["INSERT 0 0"]
    );
}

/// Index scans inside a correlated subquery: the outer row's values are
/// the SubPlan's parameters, which become the scan's keys each time it
/// runs (PostgreSQL's runtime keys).
#[test]
fn index_scan_with_runtime_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table o (x bigint)");
    run(
        &mut s,
        "insert into o select g from generate_series(1, 6) g union all select null",
    );
    run(&mut s, "create table i (a int, b text)");
    run(
        &mut s,
        "insert into i select g, 'v' || g from generate_series(1, 20000) g",
    );
    run(&mut s, "create index i_a on i (a desc)");
    assert_eq!(
        rows(
            &mut s,
            "select x, (select b from i where a = o.x * 7) from o order by x"
        ),
        vec!["1|v7", "2|v14", "3|v21", "4|v28", "5|v35", "6|v42", "|"]
    );
    assert_eq!(
        rows(
            &mut s,
            "select x, (select count(*) from i where a > o.x * 3000 and a <= 9999999999) from o order by x"
        ),
        vec!["1|17000", "2|14000", "3|11000", "4|8000", "5|5000", "6|2000", "|0"]
    );
    assert_eq!(
        rows(
            &mut s,
            "select x, (select max(a) from i where a < o.x * 2 and a >= o.x) from o where x < 4 order by x"
        ),
        vec!["1|1", "2|3", "3|5"]
    );
}
