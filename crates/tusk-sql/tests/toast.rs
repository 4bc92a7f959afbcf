//! Values of any size through SQL (TOAST, see tusk-storage's `toast`):
//! long text compressed or stored out of line by INSERT, UPDATE, COPY and
//! ON CONFLICT, read back whole by sequential and index scans, COPY TO,
//! unique violations' keys, and kept across a restart.

mod common;

use common::{rows, run, session_with};
use tusk_sql::Session;

/// Runs COPY `sql` with `input` as its STDIN data; the command tag and
/// what it wrote to STDOUT.
fn copy(s: &mut Session, sql: &str, input: &[u8]) -> (String, Vec<u8>) {
    common::copy(s, sql, input).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn session(dir: &std::path::Path) -> tusk_sql::Session {
    session_with(dir, "shared_buffers = 4MB\nhuge_pages = off\n")
}

#[test]
fn long_values_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(
        &mut s,
        "create table t (id int primary key, a text, b text)",
    );
    // Compressible (pglz, then out of line), incompressible (out of line
    // as it is), medium (compressed inline) and short values.
    run(
        &mut s,
        "insert into t values (1, repeat('abcdefgh', 100000), 'x'), \
         (3, repeat('0123456789', 300), repeat('z', 40000))",
    );
    run(
        &mut s,
        "insert into t select 2, string_agg(i::text, ',' order by i), 'y' \
         from generate_series(1, 20000) i",
    );
    let check = |s: &mut tusk_sql::Session| {
        assert_eq!(
            rows(
                s,
                "select id, length(a), length(b), substr(a, length(a) - 4), \
                 a = repeat('abcdefgh', 100000) from t order by id"
            ),
            vec![
                "1|800000|1|defgh|t",
                "2|108893|1|20000|f",
                "3|3000|40000|56789|f",
            ]
        );
        assert_eq!(
            rows(
                s,
                "select b = repeat('z', 40000), a = repeat('0123456789', 300) from t where id = 3"
            ),
            vec!["t|t"]
        );
    };
    check(&mut s);
    // An index scan reads them too.
    run(&mut s, "set enable_seqscan = off");
    assert_eq!(
        rows(&mut s, "select length(a) from t where id = 2"),
        vec!["108893"]
    );
    run(&mut s, "reset enable_seqscan");
    // UPDATE writes the new version's values toasted.
    run(
        &mut s,
        "update t set a = a || a, b = 'updated' where id = 1",
    );
    assert_eq!(
        rows(
            &mut s,
            "select length(a), a = repeat('abcdefgh', 200000), b from t where id = 1"
        ),
        vec!["1600000|t|updated"]
    );
    run(
        &mut s,
        "update t set a = repeat('abcdefgh', 100000), b = 'x' where id = 1",
    );
    check(&mut s);
    // A rolled-back insert leaves nothing visible.
    run(&mut s, "begin");
    run(&mut s, "insert into t values (4, repeat('q', 50000), null)");
    run(&mut s, "rollback");
    assert_eq!(rows(&mut s, "select count(*) from t"), vec!["3"]);
    // A rolled-back DELETE and UPDATE leave the values readable; the
    // committed ones take their chunks along.
    run(&mut s, "begin");
    run(&mut s, "delete from t where id = 2");
    run(&mut s, "update t set a = 'short' where id = 1");
    run(&mut s, "rollback");
    check(&mut s);
    drop(s);
    let mut s = session(dir.path());
    check(&mut s);
    run(&mut s, "delete from t where id = 2");
    run(&mut s, "update t set a = 'short' where id = 1");
    assert_eq!(
        rows(&mut s, "select id, length(a) from t order by id"),
        vec!["1|5", "3|3000"]
    );
}

/// Asserts `got == want`, showing where they part (they are long).
fn same(got: &[u8], want: &[u8]) {
    if let Some(at) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        let show = |b: &[u8]| {
            String::from_utf8_lossy(&b[at.saturating_sub(20)..(at + 20).min(b.len())]).into_owned()
        };
        panic!(
            "differ at byte {at}: got {:?}, want {:?}",
            show(got),
            show(want)
        );
    }
    assert_eq!(got.len(), want.len(), "lengths");
}

/// The rows COPY loads: long values compressed, moved out of line, or
/// both, next to short ones and NULLs.
fn copy_rows() -> Vec<(i32, String, Option<String>)> {
    let digits: String = (1..20000).map(|i| format!("{i},")).collect();
    vec![
        (1, "abcdefgh".repeat(100_000), Some("x".into())),
        (2, digits, None),
        (3, "0123456789".repeat(300), Some("z".repeat(40_000))),
        (4, "short".into(), Some(String::new())),
    ]
}

#[test]
fn copy_round_trips_long_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    let mut input = String::new();
    for (id, a, b) in copy_rows() {
        let b = b.as_deref().unwrap_or("\\N");
        input.push_str(&format!("{id}\t{a}\t{b}\n"));
    }
    let check = |s: &mut Session| {
        same(&copy(s, "copy c to stdout", b"").1, input.as_bytes());
        assert_eq!(
            rows(
                s,
                "select id, length(a), length(b), a = repeat('abcdefgh', 100000) \
                 from c order by id"
            ),
            vec!["1|800000|1|t", "2|108888||f", "3|3000|40000|f", "4|5|0|f"]
        );
    };
    // Logged: a table of an earlier transaction, with an index.
    run(
        &mut s,
        "create table c (id int primary key, a text, b text)",
    );
    assert_eq!(
        copy(&mut s, "copy c from stdin", input.as_bytes()).0,
        "COPY 4"
    );
    check(&mut s);
    // CSV out reads them back too.
    let csv: String = copy_rows()
        .into_iter()
        .map(|(id, a, b)| {
            (
                id,
                if a.contains(',') {
                    format!("\"{a}\"")
                } else {
                    a
                },
                b,
            )
        })
        .map(|(id, a, b)| match b.as_deref() {
            None => format!("{id},{a},\n"),
            Some("") => format!("{id},{a},\"\"\n"),
            Some(b) => format!("{id},{a},{b}\n"),
        })
        .collect();
    same(
        &copy(&mut s, "copy c to stdout with (format csv)", b"").1,
        csv.as_bytes(),
    );
    // A rolled-back COPY leaves nothing behind.
    run(&mut s, "begin");
    copy(&mut s, "copy c from stdin", b"5\tlong\tlong\n");
    run(&mut s, "rollback");
    check(&mut s);
    // Unlogged: a table created by the loading transaction.
    run(&mut s, "begin");
    run(&mut s, "create table d (id int, a text, b text)");
    copy(&mut s, "copy d from stdin", input.as_bytes());
    run(&mut s, "commit");
    drop(s);
    let mut s = session(dir.path());
    check(&mut s);
    assert_eq!(
        rows(
            &mut s,
            "select count(*) from c join d using (id, a) where c.b is not distinct from d.b"
        ),
        vec!["4"]
    );
}

#[test]
fn on_conflict_and_unique_keys_read_toasted_values() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(
        &mut s,
        "create table t (id int primary key, a text, b text unique)",
    );
    run(
        &mut s,
        "insert into t values (1, repeat('abcdefgh', 100000), repeat('0123456789', 200))",
    );
    // DO UPDATE's WHERE and SET see the existing row's values whole, and
    // the new version is toasted.
    run(
        &mut s,
        "insert into t values (1, 'new', null) on conflict (id) do update \
         set a = t.a || excluded.a where t.a = repeat('abcdefgh', 100000)",
    );
    assert_eq!(
        rows(&mut s, "select length(a), right(a, 5), length(b) from t"),
        vec!["800003|ghnew|2000"]
    );
    run(
        &mut s,
        "insert into t values (1, 'x', null) on conflict (id) do update \
         set a = repeat('y', 50000) where t.a = 'no'",
    );
    assert_eq!(rows(&mut s, "select length(a) from t"), vec!["800003"]);
    // A toasted key in a unique violation's DETAIL.
    let e = s
        .query("insert into t values (2, 'a', repeat('0123456789', 200))")
        .unwrap_err();
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"t_b_key\""
    );
    assert_eq!(
        e.detail,
        Some(format!(
            "Key (b)=({}) already exists.",
            "0123456789".repeat(200)
        ))
    );
    // DO NOTHING on a conflict of a toasted row keeps nothing of it.
    run(
        &mut s,
        "insert into t values (1, repeat('q', 60000), 'b') on conflict do nothing",
    );
    assert_eq!(
        rows(&mut s, "select count(*), sum(length(a)) from t"),
        vec!["1|800003"]
    );
}

#[test]
fn vacuum_reclaims_dead_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table v (id int, a text)");
    let oid = rows(&mut s, "select 'v'::regclass::oid")[0].clone();
    let chunks = dir.path().join(format!("base/{oid}_toast"));
    let fill = "insert into v select i, repeat(i::text || 'abcdefgh', 100000) \
                from generate_series(1, 10) i";
    let check = |s: &mut Session| {
        assert_eq!(
            rows(
                s,
                "select count(*), sum(length(a)), \
                 bool_and(a = repeat(id::text || 'abcdefgh', 100000)) from v"
            ),
            vec!["10|9100000|t"]
        );
    };
    run(&mut s, fill);
    check(&mut s);
    let size = std::fs::metadata(&chunks).unwrap().len();
    assert!(size > 0);
    // Without VACUUM the chunks of deleted rows stay: the file grows.
    run(&mut s, "delete from v");
    run(&mut s, fill);
    check(&mut s);
    let grown = std::fs::metadata(&chunks).unwrap().len();
    assert!(grown > size, "{grown} > {size}");
    // VACUUM frees them, and the next rows reuse the space.
    run(&mut s, "delete from v");
    run(&mut s, "vacuum v");
    run(&mut s, fill);
    check(&mut s);
    run(&mut s, "delete from v");
    run(&mut s, "vacuum v");
    run(&mut s, fill);
    check(&mut s);
    assert_eq!(std::fs::metadata(&chunks).unwrap().len(), grown);
}
