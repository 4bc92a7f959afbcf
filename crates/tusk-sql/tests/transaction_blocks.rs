//! Transaction blocks in one session: what the differential corpus
//! (`21_transactions.sql`) does not compare — command tags, warnings, the
//! block state the prompt and ReadyForQuery show, SERIALIZABLE refused —
//! checked against what PostgreSQL 15 prints for the same statements.

mod common;

use tusk_sql::{Session, TransactionStatus};

fn session(dir: &std::path::Path) -> Session {
    common::session_with(dir, "shared_buffers = 1MB\nhuge_pages = off\n")
}

/// Runs `sql` and returns what psql would print: tags, rows, notices and
/// the error (with its SQLSTATE), one item per line, then the state.
fn transcript(s: &mut Session, sql: &str) -> String {
    let mut out = Vec::new();
    let r = s.execute(sql, &mut |r| out.push(r));
    let mut lines = Vec::new();
    for r in out {
        lines.extend(common::lines(r));
    }
    if let Err(e) = r {
        lines.push(format!("ERROR:  {} ({})", e.message, e.code));
    }
    let state = match s.transaction_status() {
        TransactionStatus::Idle => "I",
        TransactionStatus::InBlock => "T",
        TransactionStatus::Failed => "E",
    };
    lines.push(format!("[{state}]"));
    lines.join("\n")
}

fn check(s: &mut Session, steps: &[(&str, &str)]) {
    for (sql, want) in steps {
        assert_eq!(transcript(s, sql), *want, "{sql}");
    }
}

#[test]
fn tags_warnings_and_states() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    check(
        &mut s,
        &[
            ("create table t (a int)", "CREATE TABLE\n[I]"),
            ("commit", "WARNING:  there is no transaction in progress\nCOMMIT\n[I]"),
            ("rollback", "WARNING:  there is no transaction in progress\nROLLBACK\n[I]"),
            ("abort", "WARNING:  there is no transaction in progress\nROLLBACK\n[I]"),
            ("end", "WARNING:  there is no transaction in progress\nCOMMIT\n[I]"),
            ("start transaction", "START TRANSACTION\n[T]"),
            ("begin", "WARNING:  there is already a transaction in progress\nBEGIN\n[T]"),
            ("savepoint a", "SAVEPOINT\n[T]"),
            ("release a", "RELEASE\n[T]"),
            ("savepoint a", "SAVEPOINT\n[T]"),
            ("insert into t values (1)", "INSERT 0 1\n[T]"),
            ("rollback to savepoint a", "ROLLBACK\n[T]"),
            ("select 1 / 0", "ERROR:  division by zero (22012)\n[E]"),
            (
                "select 1",
                "ERROR:  current transaction is aborted, commands ignored until end of transaction block (25P02)\n[E]",
            ),
            (
                "begin",
                "ERROR:  current transaction is aborted, commands ignored until end of transaction block (25P02)\n[E]",
            ),
            (
                "release a",
                "ERROR:  current transaction is aborted, commands ignored until end of transaction block (25P02)\n[E]",
            ),
            ("rollback to a", "ROLLBACK\n[T]"),
            ("release nosuch", "ERROR:  savepoint \"nosuch\" does not exist (3B001)\n[E]"),
            ("commit", "ROLLBACK\n[I]"),
            ("select count(*) from t", "0\n[I]"),
            (
                "savepoint a",
                "ERROR:  SAVEPOINT can only be used in transaction blocks (25P01)\n[I]",
            ),
            (
                "set transaction read only",
                "WARNING:  SET TRANSACTION can only be used in transaction blocks\nSET\n[I]",
            ),
            (
                "set local work_mem = '1MB'",
                "WARNING:  SET LOCAL can only be used in transaction blocks\nSET\n[I]",
            ),
            ("show work_mem", "4MB\n[I]"),
            ("begin; select 1 / 0", "BEGIN\nERROR:  division by zero (22012)\n[E]"),
            ("rollback", "ROLLBACK\n[I]"),
            // A syntax error fails a block too.
            ("begin", "BEGIN\n[T]"),
            ("selec 1", "ERROR:  syntax error at or near \"selec\" (42601)\n[E]"),
            ("rollback and chain", "ROLLBACK\n[T]"),
            ("insert into t values (2)", "INSERT 0 1\n[T]"),
            ("commit and chain", "COMMIT\n[T]"),
            ("commit", "COMMIT\n[I]"),
            ("select count(*) from t", "1\n[I]"),
            (
                "commit and chain",
                "ERROR:  COMMIT AND CHAIN can only be used in transaction blocks (25P01)\n[I]",
            ),
            // A string of statements is one transaction, not a block.
            (
                "insert into t values (3); select 1 / 0",
                "INSERT 0 1\nERROR:  division by zero (22012)\n[I]",
            ),
            ("select count(*) from t", "1\n[I]"),
        ],
    );
}

#[test]
fn serializable_is_refused_never_weakened() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    let refused = "ERROR:  SERIALIZABLE isolation level is not supported (0A000)";
    check(
        &mut s,
        &[
            (
                "begin isolation level serializable",
                &format!("{refused}\n[I]"),
            ),
            (
                "start transaction isolation level serializable",
                &format!("{refused}\n[I]"),
            ),
            (
                "set default_transaction_isolation = 'serializable'",
                &format!("{refused}\n[I]"),
            ),
            (
                "set session characteristics as transaction isolation level serializable",
                &format!("{refused}\n[I]"),
            ),
            ("begin", "BEGIN\n[T]"),
            (
                "set transaction isolation level serializable",
                &format!("{refused}\n[E]"),
            ),
            ("rollback", "ROLLBACK\n[I]"),
            ("show default_transaction_isolation", "read committed\n[I]"),
        ],
    );
    let e = s.query("begin isolation level serializable").unwrap_err();
    assert!(e.detail.unwrap().contains("does not run SERIALIZABLE"));
}

#[test]
fn dropping_a_session_inside_a_block_rolls_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    common::run(&mut s, "create table t (a int)");
    let db = s.database().clone();
    let mut other = Session::with_database(db).unwrap();
    common::run(
        &mut other,
        "begin; insert into t values (1); create table u (b int)",
    );
    assert_eq!(other.transaction_status(), TransactionStatus::InBlock);
    drop(other);
    assert_eq!(common::rows(&mut s, "select count(*) from t"), ["0"]);
    assert_eq!(
        common::error(&mut s, "select * from u"),
        "relation \"u\" does not exist"
    );
}

/// `now()` is the transaction's start: one value for a whole block (and for
/// a string's implicit block), a new one for the next transaction; the
/// first statement of a transaction starts it, so there `now()` and
/// `statement_timestamp()` are the same instant.
#[test]
fn now_is_the_transactions_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    let one = |s: &mut Session, sql: &str| common::rows(s, sql).join("\n");
    assert_eq!(one(&mut s, "select now() = statement_timestamp()"), "t");
    one(&mut s, "begin");
    let start = one(&mut s, "select now()::text");
    one(&mut s, "select 1");
    assert_eq!(one(&mut s, "select now()::text"), start);
    assert_eq!(one(&mut s, "select current_timestamp::text"), start);
    assert_eq!(one(&mut s, "select transaction_timestamp()::text"), start);
    one(&mut s, "commit");
    assert_eq!(one(&mut s, "select now() = statement_timestamp()"), "t");
    // Several statements in one string: one transaction, one now().
    let both = common::run(&mut s, "select now()::text; select now()::text");
    assert_eq!(both.len(), 2);
    assert_eq!(both[0], both[1]);
}
