//! Values of any size through SQL (TOAST, see tusk-storage's `toast`):
//! long text compressed or stored out of line by INSERT and UPDATE, read
//! back whole by sequential and index scans, and kept across a restart.

mod common;

use common::{rows, run, session_with};

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
