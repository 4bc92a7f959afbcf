//! COPY end to end through a session: loads and dumps in text and CSV,
//! defaults and constraints, errors with their CONTEXT lines, atomicity,
//! files, and the rows surviving a restart. Expected bytes and messages
//! come from PostgreSQL 15.

mod common;

use common::{copy, error, rows, session_with};
use tusk_sql::Session;

fn session(dir: &std::path::Path) -> Session {
    session_with(dir, "shared_buffers = 1MB\nhuge_pages = off\n")
}

fn copy_in(s: &mut Session, sql: &str, input: &str) -> String {
    copy(s, sql, input.as_bytes())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .0
}

fn copy_out(s: &mut Session, sql: &str) -> String {
    let (_, out) = copy(s, sql, b"").unwrap_or_else(|e| panic!("{sql}: {e}"));
    String::from_utf8(out).unwrap()
}

/// The error of a COPY: (SQLSTATE, message, detail, context).
fn copy_error(
    s: &mut Session,
    sql: &str,
    input: &[u8],
) -> (String, String, Option<String>, Option<String>) {
    match copy(s, sql, input) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => (
            e.code.to_string(),
            e.message,
            e.detail,
            e.context.map(String::from),
        ),
    }
}

#[test]
fn text_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(
        &mut s,
        "create table t (a int, b text, c numeric(6,2), d date, e boolean, f float8)",
    );
    let input = "1\thello\t1.5\t2020-01-31\tt\t1.5\n\
                 2\t\\N\t\\N\t\\N\t\\N\t\\N\n\
                 3\ttab\\there\\nnewline \\\\ back\t-0.005\t1999-12-31\tf\t-0\n";
    assert_eq!(copy_in(&mut s, "copy t from stdin", input), "COPY 3");
    assert_eq!(
        copy_out(&mut s, "copy t to stdout"),
        "1\thello\t1.50\t2020-01-31\tt\t1.5\n\
         2\t\\N\t\\N\t\\N\t\\N\t\\N\n\
         3\ttab\\there\\nnewline \\\\ back\t-0.01\t1999-12-31\tf\t-0\n"
    );
    assert_eq!(
        rows(&mut s, "select a, length(b) from t order by a"),
        ["1|5", "2|", "3|23"]
    );
}

#[test]
fn csv_with_header_and_column_lists() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(&mut s, "create table t (a int, b text, c text)");
    let input = "b,a\n\"x,y\",1\n\"say \"\"hi\"\"\",2\n,3\n\"\",4\n";
    assert_eq!(
        copy_in(
            &mut s,
            "copy t (b, a) from stdin with (format csv, header)",
            input
        ),
        "COPY 4"
    );
    assert_eq!(
        copy_out(&mut s, "copy t to stdout with csv header"),
        "a,b,c\n1,\"x,y\",\n2,\"say \"\"hi\"\"\",\n3,,\n4,\"\",\n"
    );
    assert_eq!(
        copy_out(
            &mut s,
            "copy t (c, a) to stdout (format csv, force_quote (a), null 'N')"
        ),
        "N,\"1\"\nN,\"2\"\nN,\"3\"\nN,\"4\"\n"
    );
    assert_eq!(
        copy_out(
            &mut s,
            "copy (select a * 10, upper(b) from t where a > 2 order by a desc) to stdout"
        ),
        "40\t\n30\t\\N\n"
    );
}

#[test]
fn defaults_and_constraints() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(
        &mut s,
        "create table t (a int not null, b text default 'none', c int default 7 check (c > 0))",
    );
    assert_eq!(copy_in(&mut s, "copy t (a) from stdin", "1\n2\n"), "COPY 2");
    assert_eq!(
        copy_in(&mut s, "copy t (a, b) from stdin", "3\t\\N\n"),
        "COPY 1"
    );
    assert_eq!(
        rows(&mut s, "select * from t order by a"),
        ["1|none|7", "2|none|7", "3||7"]
    );
    let e = copy_error(&mut s, "copy t from stdin", b"4\tx\t1\n5\ty\t-1\n6\tz\t1\n");
    assert_eq!(
        e,
        (
            "23514".into(),
            "new row for relation \"t\" violates check constraint \"t_c_check\"".into(),
            Some("Failing row contains (5, y, -1).".into()),
            Some("COPY t, line 2: \"5\ty\t-1\"".into())
        )
    );
    let e = copy_error(&mut s, "copy t (b, a) from stdin", b"x\t4\ny\t\\N\n");
    assert_eq!(
        e,
        (
            "23502".into(),
            "null value in column \"a\" of relation \"t\" violates not-null constraint".into(),
            Some("Failing row contains (null, y, 7).".into()),
            Some("COPY t, line 2: \"y\t\\N\"".into())
        )
    );
    // Nothing of the failed loads is visible.
    assert_eq!(rows(&mut s, "select count(*) from t"), ["3"]);
}

#[test]
fn the_first_bad_row_is_reported_in_row_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(&mut s, "create table t (a int not null, b int)");
    // Row 2 has a NULL in a (NOT NULL) and row 3 a bad b: row 2 first.
    let e = copy_error(&mut s, "copy t from stdin", b"1\t1\n\\N\t2\n3\tx\n");
    assert_eq!(e.0, "23502");
    // Within a row, conversion comes before constraints.
    let e = copy_error(&mut s, "copy t from stdin", b"1\t1\n\\N\tx\n");
    assert_eq!(
        (e.1.as_str(), e.3.as_deref()),
        (
            "invalid input syntax for type integer: \"x\"",
            Some("COPY t, line 2, column b: \"x\"")
        )
    );
    // Rows of an earlier batch were converted first.
    let mut input = String::new();
    for i in 0..10000 {
        input.push_str(&format!("{i}\t{i}\n"));
    }
    input.push_str("bad\t1\n");
    let e = copy_error(&mut s, "copy t from stdin", input.as_bytes());
    assert_eq!(
        (e.1.as_str(), e.3.as_deref()),
        (
            "invalid input syntax for type integer: \"bad\"",
            Some("COPY t, line 10001, column a: \"bad\"")
        )
    );
    assert_eq!(rows(&mut s, "select count(*) from t"), ["0"]);
}

#[test]
fn malformed_input() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(&mut s, "create table t (a int, b text)");
    let cases: &[(&str, &[u8], &str, &str, &str)] = &[
        (
            "copy t from stdin",
            b"abc\tx\n",
            "22P02",
            "invalid input syntax for type integer: \"abc\"",
            "COPY t, line 1, column a: \"abc\"",
        ),
        (
            "copy t from stdin",
            b"1\tx\textra\n",
            "22P04",
            "extra data after last expected column",
            "COPY t, line 1: \"1\tx\textra\"",
        ),
        (
            "copy t from stdin",
            b"1\tok\n2\n",
            "22P04",
            "missing data for column \"b\"",
            "COPY t, line 2: \"2\"",
        ),
        (
            "copy t from stdin (format csv)",
            b"1,\"abc\n",
            "22P04",
            "unterminated CSV quoted field",
            "COPY t, line 1: \"1,\"abc\n\"",
        ),
        (
            "copy t from stdin",
            b"1\tab\xffc\n",
            "22021",
            "invalid byte sequence for encoding \"UTF8\": 0xff",
            "COPY t, line 1",
        ),
        (
            "copy t from stdin",
            b"99999999999\tx\n",
            "22003",
            "value \"99999999999\" is out of range for type integer",
            "COPY t, line 1, column a: \"99999999999\"",
        ),
    ];
    for &(sql, input, code, message, context) in cases {
        let e = copy_error(&mut s, sql, input);
        assert_eq!(
            (e.0.as_str(), e.1.as_str(), e.3.as_deref()),
            (code, message, Some(context)),
            "{input:?}"
        );
    }
    assert_eq!(rows(&mut s, "select count(*) from t"), ["0"]);
}

#[test]
fn where_header_match_and_force_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(&mut s, "create table t (a int, b text default 'd', c text)");
    // WHERE sees defaults; skipped rows are not counted.
    let input = "a,c\n1,x\n2,\n3,\"\"\n";
    assert_eq!(
        copy_in(
            &mut s,
            "copy t (a, c) from stdin (format csv, header match, force_null (c)) where a > 1 and b = 'd'",
            input
        ),
        "COPY 2"
    );
    assert_eq!(
        rows(&mut s, "select a, b, c is null from t order by a"),
        ["2|d|t", "3|d|t"]
    );
    let e = copy_error(
        &mut s,
        "copy t (a, c) from stdin (format csv, header match)",
        b"a,b\n",
    );
    assert_eq!(
        (e.1.as_str(), e.3.as_deref()),
        (
            "column name mismatch in header line field 2: got \"b\", expected \"c\"",
            Some("COPY t, line 1: \"a,b\"")
        )
    );
    // A row WHERE skips is not checked either.
    rows(&mut s, "create table n (a int not null check (a > 0))");
    assert_eq!(
        copy_in(
            &mut s,
            "copy n from stdin where a is not null and a > 0",
            "\\N\n-1\n5\n"
        ),
        "COPY 1"
    );
    // The header is never forced into quotes.
    assert_eq!(
        copy_out(
            &mut s,
            "copy t to stdout (format csv, force_quote *, header on)"
        ),
        "a,b,c\n\"2\",\"d\",\n\"3\",\"d\",\n"
    );
}

#[test]
fn unique_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(&mut s, "create table pk (a int primary key, b text unique)");
    assert_eq!(
        copy_in(&mut s, "copy pk from stdin", "1\tx\n2\ty\n"),
        "COPY 2"
    );
    // A duplicate inside the load and one of a stored row, with
    // PostgreSQL's DETAIL and the line (without its text) as context.
    let e = copy_error(&mut s, "copy pk from stdin", b"3\tz\n4\tw\n3\tv\n");
    assert_eq!(
        e,
        (
            "23505".into(),
            "duplicate key value violates unique constraint \"pk_pkey\"".into(),
            Some("Key (a)=(3) already exists.".into()),
            Some("COPY pk, line 3".into())
        )
    );
    let e = copy_error(&mut s, "copy pk from stdin", b"5\tq\n6\tx\n");
    assert_eq!(
        (e.1.as_str(), e.2.as_deref(), e.3.as_deref()),
        (
            "duplicate key value violates unique constraint \"pk_b_key\"",
            Some("Key (b)=(x) already exists."),
            Some("COPY pk, line 2")
        )
    );
    assert_eq!(rows(&mut s, "select count(*) from pk"), ["2"]);
    assert_eq!(rows(&mut s, "select b from pk where a = 2"), ["y"]);
}

/// Loads large enough to index in sorted batches (see tusk-storage's
/// `btree::batch`): keys in scrambled order, a second and a non-unique
/// index, rows already stored; the first duplicate in input order is the
/// one reported, wherever the batches cut.
#[test]
fn unique_indexes_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(
        &mut s,
        "create table big (a int primary key, b text unique, c int)",
    );
    rows(&mut s, "create index big_c on big (c)");
    let line = |k: u64| format!("{k}\tv{k}\t{}\n", k % 7);
    // 1..=20000 in a scrambled order, then 20001..=30000 ascending.
    let scrambled: Vec<u64> = (0..20_000u64).map(|i| (i * 7919) % 20_000 + 1).collect();
    let input: String = scrambled.iter().map(|&k| line(k)).collect();
    assert_eq!(copy_in(&mut s, "copy big from stdin", &input), "COPY 20000");
    let input: String = (20_001..=30_000).map(line).collect();
    assert_eq!(copy_in(&mut s, "copy big from stdin", &input), "COPY 10000");
    assert_eq!(
        rows(
            &mut s,
            "select count(*), count(distinct a), sum(a), min(b), max(b) from big"
        ),
        ["30000|30000|450015000|v1|v9999"]
    );
    rows(&mut s, "set enable_seqscan = off");
    for (sql, want) in [
        ("select b from big where a = 17077", "v17077"),
        ("select a from big where b = 'v29999'", "29999"),
        ("select count(*) from big where c = 3", "4286"),
        (
            "select count(*) from big where a between 5000 and 25000",
            "20001",
        ),
    ] {
        assert_eq!(rows(&mut s, sql), [want], "{sql}");
    }
    // Duplicates of stored rows and of earlier rows of the same load, at
    // lines 4000 and 2500 of a load of 6000 new keys: line 2500 is the
    // first in input order.
    let mut keys: Vec<u64> = (40_001..=46_000).collect();
    keys[3999] = 12_345;
    keys[2499] = keys[100];
    let input: String = keys.iter().map(|&k| line(k)).collect();
    let e = copy_error(&mut s, "copy big from stdin", input.as_bytes());
    assert_eq!(
        (e.1.as_str(), e.2.as_deref(), e.3.as_deref()),
        (
            "duplicate key value violates unique constraint \"big_pkey\"",
            Some("Key (a)=(40101) already exists."),
            Some("COPY big, line 2500")
        )
    );
    keys[2499] = 2;
    let input: String = keys.iter().map(|&k| line(k)).collect();
    let e = copy_error(&mut s, "copy big from stdin", input.as_bytes());
    assert_eq!(
        (e.2.as_deref(), e.3.as_deref()),
        (
            Some("Key (a)=(2) already exists."),
            Some("COPY big, line 2500")
        )
    );
    assert_eq!(rows(&mut s, "select count(*) from big"), ["30000"]);
}

#[test]
fn statement_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    rows(&mut s, "create table t (a int, b text)");
    rows(&mut s, "create view v as select a from t");
    let e = |s: &mut Session, sql: &str| {
        let (code, message, _, _) = copy_error(s, sql, b"");
        (code, message)
    };
    assert_eq!(
        e(&mut s, "copy nope to stdout"),
        ("42P01".into(), "relation \"nope\" does not exist".into())
    );
    assert_eq!(
        e(&mut s, "copy t (x) from stdin"),
        (
            "42703".into(),
            "column \"x\" of relation \"t\" does not exist".into()
        )
    );
    assert_eq!(
        e(&mut s, "copy t (a, a) to stdout"),
        (
            "42701".into(),
            "column \"a\" specified more than once".into()
        )
    );
    assert_eq!(
        e(&mut s, "copy v to stdout"),
        ("42809".into(), "cannot copy from view \"v\"".into())
    );
    assert_eq!(
        e(&mut s, "copy v from stdin"),
        ("42809".into(), "cannot copy to view \"v\"".into())
    );
    assert_eq!(
        e(&mut s, "copy t (b) to stdout (format csv, force_quote (a))"),
        (
            "42P10".into(),
            "FORCE_QUOTE column \"a\" not referenced by COPY".into()
        )
    );
    assert_eq!(
        e(&mut s, "copy t from stdin (freeze)"),
        (
            "55000".into(),
            "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction".into()
        )
    );
    assert_eq!(
        e(&mut s, "copy t to 'relative.txt'"),
        (
            "42602".into(),
            "relative path not allowed for COPY to file".into()
        )
    );
    // Without a COPY client.
    assert!(error(&mut s, "copy t from stdin").contains("not supported by this client"));
}

#[test]
fn files_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let data = files.path().join("in.csv");
    let mut text = String::new();
    for i in 0..50000 {
        text.push_str(&format!("{i},name {i},{}.{:02}\n", i / 100, i % 100));
    }
    std::fs::write(&data, &text).unwrap();
    let out = files.path().join("out.csv");
    {
        let mut s = session(dir.path());
        rows(
            &mut s,
            "create table t (id bigint, name varchar(20), price numeric(10,2))",
        );
        rows(&mut s, "create index on t (id)");
        let sql = format!("copy t from '{}' (format csv)", data.display());
        assert_eq!(rows(&mut s, &sql), ["COPY 50000"]);
        let sql = format!("copy t to '{}' (format csv)", out.display());
        assert_eq!(rows(&mut s, &sql), ["COPY 50000"]);
        let e = copy_error(&mut s, "copy t from '/nonexistent/x.csv'", b"");
        assert_eq!(
            (e.0.as_str(), e.1.as_str()),
            (
                "58P01",
                "could not open file \"/nonexistent/x.csv\" for reading: No such file or directory"
            )
        );
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    let mut s = session(dir.path());
    assert_eq!(
        rows(&mut s, "select count(*), sum(id), sum(price) from t"),
        ["50000|1249975000|12499750.00"]
    );
    // The index found the rows COPY added.
    assert_eq!(
        rows(&mut s, "select name from t where id = 31337"),
        ["name 31337"]
    );
}

/// A load into a table its own transaction created (CREATE TABLE AS's
/// rule) writes no WAL for the rows: the commit writes and syncs the
/// relation instead. Driven at the engine's level, as SQL statements are
/// their own transactions here.
#[test]
fn a_table_created_by_the_loading_transaction_is_not_logged() {
    use tusk_exec::copy::convert::Converter;
    use tusk_exec::copy::load::Loader;
    use tusk_exec::copy::pipeline::{self, CopySource};
    use tusk_exec::copy::prepare::TableRules;
    use tusk_exec::copy::reader::{CopyReader, ReaderOptions};
    use tusk_exec::copy::{CopyError, CopyOptions, Format};
    use tusk_storage::wal::{RecordType, WalReader};
    use tusk_storage::{ColumnDef, SqlType, TableDef};

    /// Input from memory, in one piece.
    struct Bytes(Option<Vec<u8>>);
    impl CopySource for Bytes {
        fn fill(&mut self, reader: &mut CopyReader) -> Result<usize, CopyError> {
            Ok(self.0.take().map_or(0, |b| {
                reader.push(&b);
                b.len()
            }))
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    for i in 0..20_000 {
        input.extend_from_slice(format!("{i}\tname {i}\n").as_bytes());
    }
    let oid = {
        let s = session(dir.path());
        let db = s.database().clone();
        db.checkpoint().unwrap();
        let start = db.wal.insert_lsn();
        let txn = db.txn.begin_write().unwrap();
        let oid = db.catalog_mut().allocate_oid().unwrap();
        let table = TableDef::new(
            oid,
            "loaded",
            vec![
                ColumnDef::new("id", SqlType::Int4, true),
                ColumnDef::new("name", SqlType::Text, false),
            ],
        );
        db.log_create_table(&txn, &table).unwrap();
        db.smgr.create(oid).unwrap();
        let reader = CopyReader::new(ReaderOptions {
            options: CopyOptions::new(Format::Text),
            table: "loaded".into(),
            columns: vec!["id".into(), "name".into()],
            force_not_null: vec![false; 2],
            force_null: vec![false; 2],
        });
        let converter = Converter::new(&table, vec![0, 1], Default::default(), 0);
        let mut writer = tusk_storage::btree::StatementWriter::new(&db, txn.xid());
        let mut loader = Loader::new(
            &db,
            table.clone(),
            &[],
            TableRules::default(),
            (txn.xid(), 0),
            &mut writer,
        );
        assert!(!loader.logged());
        let interrupt = tusk_exec::interrupt::Interrupt::new();
        let n = pipeline::run(
            &mut Bytes(Some(input)),
            reader,
            &converter,
            &mut loader,
            &interrupt,
        )
        .unwrap();
        assert_eq!(n, 20_000);
        loader.finish().unwrap();
        drop(loader);
        db.catalog_mut().add_table(table).unwrap();
        db.commit(txn).unwrap();
        db.wal.flush_all().unwrap();
        let mut rows_logged = 0;
        let mut reader = WalReader::new(&dir.path().join("pg_wal"), start);
        while let Some(rec) = reader.next_record().unwrap() {
            if matches!(
                rec.kind,
                RecordType::HeapPage | RecordType::HeapInsert | RecordType::HeapInsertInit
            ) {
                rows_logged += 1;
            }
        }
        assert_eq!(rows_logged, 0);
        // The commit wrote the relation itself.
        let file = dir.path().join("base").join(oid.to_string());
        assert!(std::fs::metadata(&file).unwrap().len() >= 8192 * 10);
        oid
    };
    let mut s = session(dir.path());
    assert_eq!(
        rows(&mut s, "select count(*), sum(id), max(name) from loaded"),
        ["20000|199990000|name 9999"]
    );
    assert!(oid > 0);
}
