//! Unique indexes under concurrency: an inserter of a key that another
//! transaction is inserting or deleting waits for it and then fails or
//! goes ahead as that transaction ended; dead, own-deleted and NULL
//! duplicates never conflict; HOT chains are followed; the ON CONFLICT
//! lookup; a deadlock between two inserters; unique builds and the size
//! limit. The waits are observed in the lock manager's queues, never timed.

mod common;

use common::*;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use tusk_storage::btree::{
    describe_key, unique_violation, BuildOutcome, Datum, Direction, Index, InsertOutcome,
    ScanBounds, StatementWriter,
};
use tusk_storage::catalog::{IndexColumn, IndexKind};
use tusk_storage::heap::{HeapInserter, Tid};
use tusk_storage::tuple::TupleBuilder;
use tusk_storage::{
    ColumnDef, Database, IndexDef, LockTag, RowWait, SqlType, TableDef, TmResult, Transaction, Xid,
};

/// Table `name` of `(id, balance)` rows with a unique index on id.
fn setup(db: &Arc<Database>, name: &str, ids: &[i32]) -> (TableDef, IndexDef) {
    create(db, name, ids.iter().map(|&i| (i, 0)));
    let mut txn = rc(db);
    let table = txn.catalog().table(name).unwrap().clone();
    let def = txn
        .create_index(
            &table,
            &format!("{name}_pkey"),
            vec![IndexColumn::asc(0)],
            IndexKind::PrimaryKey,
        )
        .unwrap();
    let snap = txn.snapshot();
    let xid = txn.xid().unwrap();
    let built = Index::open(db, &def, &table)
        .build(snap, xid, 1 << 20)
        .unwrap();
    assert_eq!(built, BuildOutcome::Built);
    txn.commit().unwrap();
    (table, def)
}

/// INSERT of row (id, balance): the heap row, then its index entry.
fn insert(
    txn: &mut Transaction,
    table: &TableDef,
    def: &IndexDef,
    id: i32,
    balance: i64,
) -> Result<(Tid, InsertOutcome), tusk_storage::StorageError> {
    let tid = txn.insert(table.oid, &row(id, balance))?;
    let db = txn.database().clone();
    let index = Index::open(&db, def, table);
    let key = index.key_of(&[Datum::Int4(id)])?;
    let out = index.insert(&key, tid, txn)?;
    txn.next_command()?;
    Ok((tid, out))
}

/// Waits (without a time limit) until someone queues for `xid`'s lock.
fn wait_for_waiter(db: &Database, xid: Xid) {
    while db.locks.waiters(&LockTag::Transaction(xid)).is_empty() {
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn second_inserter_waits_then_fails_or_proceeds() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[1, 2, 3]);
    for first_commits in [true, false] {
        let id = if first_commits { 10 } else { 20 };
        let mut t1 = rc(&db);
        let (tid1, out) = insert(&mut t1, &table, &def, id, 1).unwrap();
        assert_eq!(out, InsertOutcome::Inserted);
        let x1 = t1.top_xid().unwrap();
        let second = {
            let (db, table, def) = (db.clone(), table.clone(), def.clone());
            thread::spawn(move || {
                let mut t2 = rc(&db);
                let out = insert(&mut t2, &table, &def, id, 2).unwrap().1;
                t2.commit().unwrap();
                out
            })
        };
        wait_for_waiter(&db, x1);
        if first_commits {
            t1.commit().unwrap();
            assert_eq!(
                second.join().unwrap(),
                InsertOutcome::Conflict { existing: tid1 }
            );
        } else {
            t1.rollback();
            assert_eq!(second.join().unwrap(), InsertOutcome::Inserted);
        }
        let rows: Vec<_> = balances(&mut rc(&db), table.oid)
            .into_iter()
            .filter(|r| r.0 == id)
            .collect();
        // The conflicting second insertion's heap row stays (the SQL layer
        // raises the error, which aborts its transaction); here it
        // committed, so only the aborted case has exactly one row.
        if !first_commits {
            assert_eq!(rows, vec![(id, 2)]);
        }
    }
}

#[test]
fn a_deleter_in_progress_makes_the_inserter_wait() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[5, 6]);
    for deleter_commits in [true, false] {
        let id = if deleter_commits { 5 } else { 6 };
        let mut t1 = rc(&db);
        let (tid, _) = find(&mut t1, table.oid, id).unwrap();
        assert_eq!(
            t1.delete(table.oid, tid, RowWait::Block).unwrap(),
            TmResult::Ok
        );
        let x1 = t1.top_xid().unwrap();
        let second = {
            let (db, table, def) = (db.clone(), table.clone(), def.clone());
            thread::spawn(move || {
                let mut t2 = rc(&db);
                let out = insert(&mut t2, &table, &def, id, 7).unwrap().1;
                t2.rollback();
                out
            })
        };
        wait_for_waiter(&db, x1);
        if deleter_commits {
            t1.commit().unwrap();
            assert_eq!(second.join().unwrap(), InsertOutcome::Inserted);
        } else {
            t1.rollback();
            assert_eq!(
                second.join().unwrap(),
                InsertOutcome::Conflict { existing: tid }
            );
        }
    }
}

#[test]
fn own_deleted_dead_and_own_live_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[1, 2]);
    // Deleted by the inserter itself: no conflict.
    let mut t = rc(&db);
    let (tid, _) = find(&mut t, table.oid, 1).unwrap();
    assert_eq!(
        t.delete(table.oid, tid, RowWait::Block).unwrap(),
        TmResult::Ok
    );
    assert_eq!(
        insert(&mut t, &table, &def, 1, 10).unwrap().1,
        InsertOutcome::Inserted
    );
    // Inserted by itself and live: a conflict.
    let (tid2, _) = insert(&mut t, &table, &def, 3, 0).unwrap();
    assert_eq!(
        insert(&mut t, &table, &def, 3, 1).unwrap().1,
        InsertOutcome::Conflict { existing: tid2 }
    );
    t.rollback();
    // Deleted by a committed transaction: dead, no conflict.
    let mut t = rc(&db);
    let (tid, _) = find(&mut t, table.oid, 2).unwrap();
    assert_eq!(
        t.delete(table.oid, tid, RowWait::Block).unwrap(),
        TmResult::Ok
    );
    t.commit().unwrap();
    let mut t = rc(&db);
    assert_eq!(
        insert(&mut t, &table, &def, 2, 5).unwrap().1,
        InsertOutcome::Inserted
    );
    // A committed live row: a conflict without any wait.
    let (tid1, _) = find(&mut t, table.oid, 1).unwrap();
    assert_eq!(
        insert(&mut t, &table, &def, 1, 5).unwrap().1,
        InsertOutcome::Conflict { existing: tid1 }
    );
    t.commit().unwrap();
}

#[test]
fn hot_chains_are_followed_to_the_live_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[1, 2, 3]);
    for _ in 0..5 {
        let mut t = rc(&db);
        assert_eq!(add(&mut t, table.oid, 3, 100).unwrap(), 1);
        t.commit().unwrap();
    }
    let mut t = rc(&db);
    let (latest, bal) = find(&mut t, table.oid, 3).unwrap();
    assert_eq!(bal, 500);
    let root = Tid { block: 0, item: 3 };
    assert_ne!(
        latest, root,
        "the updates were HOT: a new version, one entry"
    );
    assert_eq!(
        insert(&mut t, &table, &def, 3, 0).unwrap().1,
        InsertOutcome::Conflict { existing: latest }
    );
    let db2 = t.database().clone();
    let index = Index::open(&db2, &def, &table);
    let key = index.key_of(&[Datum::Int4(3)]).unwrap();
    assert_eq!(index.find_conflict(&key, &mut t).unwrap(), Some(latest));
}

#[test]
fn find_conflict_waits_and_finds_nothing_after_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[9]);
    let mut t = rc(&db);
    let index = Index::open(&db, &def, &table);
    let k9 = index.key_of(&[Datum::Int4(9)]).unwrap();
    let k10 = index.key_of(&[Datum::Int4(10)]).unwrap();
    let (tid9, _) = find(&mut t, table.oid, 9).unwrap();
    assert_eq!(index.find_conflict(&k9, &mut t).unwrap(), Some(tid9));
    assert_eq!(index.find_conflict(&k10, &mut t).unwrap(), None);
    let mut t1 = rc(&db);
    insert(&mut t1, &table, &def, 11, 0).unwrap();
    let x1 = t1.top_xid().unwrap();
    let looker = {
        let (db, table, def) = (db.clone(), table.clone(), def.clone());
        thread::spawn(move || {
            let mut t2 = rc(&db);
            let index = Index::open(&db, &def, &table);
            let k = index.key_of(&[Datum::Int4(11)]).unwrap();
            index.find_conflict(&k, &mut t2).unwrap()
        })
    };
    wait_for_waiter(&db, x1);
    t1.rollback();
    assert_eq!(looker.join().unwrap(), None);
}

#[test]
fn two_inserters_of_each_others_keys_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[]);
    let short = |mut t: Transaction| {
        t.wait_options_mut().deadlock_timeout = Duration::from_millis(20);
        t
    };
    let mut t1 = short(rc(&db));
    let mut t2 = short(rc(&db));
    insert(&mut t1, &table, &def, 1, 0).unwrap();
    insert(&mut t2, &table, &def, 2, 0).unwrap();
    let x2 = t2.top_xid().unwrap();
    // Each inserter ends its transaction as soon as its insertion returns:
    // the victim rolls back, which lets the other one through.
    let run = |mut t: Transaction, id: i32| {
        let (table, def) = (table.clone(), def.clone());
        thread::spawn(move || match insert(&mut t, &table, &def, id, 0) {
            Ok((_, out)) => {
                t.commit().unwrap();
                Ok(out)
            }
            Err(e) => {
                t.rollback();
                Err(e)
            }
        })
    };
    let first = run(t1, 2);
    wait_for_waiter(&db, x2);
    let second = run(t2, 1);
    let mut results = [first.join().unwrap(), second.join().unwrap()];
    results.sort_by_key(|r| r.is_ok());
    let [victim, survivor] = results;
    assert_eq!(victim.unwrap_err().sqlstate(), Some("40P01"));
    assert_eq!(survivor.unwrap(), InsertOutcome::Inserted);
}

#[test]
fn single_statement_writers_check_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[4]);
    let txn = db.txn.begin_write().unwrap();
    let mut ins = HeapInserter::new(&db.pool, table.oid);
    let index = Index::open(&db, &def, &table);
    let mut w = StatementWriter::new(&db, txn.xid());
    let mut tb = TupleBuilder::new();
    let mut outcomes = Vec::new();
    for id in [5, 4, 5] {
        tb.begin();
        tb.push_i32(id);
        tb.push_i64(0);
        let t = tb.finish(txn.xid());
        let tid = ins.insert(t).unwrap();
        let mut key = Default::default();
        index.key_of_tuple(t, &mut key).unwrap();
        outcomes.push(index.insert(&key, tid, &mut w).unwrap());
    }
    assert_eq!(outcomes[0], InsertOutcome::Inserted);
    assert!(matches!(outcomes[1], InsertOutcome::Conflict { .. }));
    assert!(
        matches!(outcomes[2], InsertOutcome::Conflict { .. }),
        "the statement's own row conflicts"
    );
}

/// One handle inserting ascending keys goes through the last-leaf fast path
/// across many leaf splits; it still finds a duplicate of the last key (on
/// the last leaf) and of the first key (far to the left), and a key below
/// every other still lands in order.
#[test]
fn ascending_loads_check_duplicates_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let (table, def) = setup(&db, "t", &[]);
    let txn = db.txn.begin_write().unwrap();
    let mut ins = HeapInserter::new(&db.pool, table.oid);
    let index = Index::open(&db, &def, &table);
    let mut w = StatementWriter::new(&db, txn.xid());
    let mut tb = TupleBuilder::new();
    let mut put = |id: i32| {
        tb.begin();
        tb.push_i32(id);
        tb.push_i64(0);
        let t = tb.finish(txn.xid());
        let tid = ins.insert(t).unwrap();
        let mut key = Default::default();
        index.key_of_tuple(t, &mut key).unwrap();
        index.insert(&key, tid, &mut w).unwrap()
    };
    for id in 1..=20_000 {
        assert_eq!(put(id), InsertOutcome::Inserted, "id {id}");
    }
    assert!(matches!(put(20_000), InsertOutcome::Conflict { .. }));
    assert!(matches!(put(1), InsertOutcome::Conflict { .. }));
    assert!(matches!(put(12_345), InsertOutcome::Conflict { .. }));
    assert_eq!(put(-5), InsertOutcome::Inserted);
    assert_eq!(put(20_001), InsertOutcome::Inserted);
    let mut c = index.scan(ScanBounds::all(), Direction::Forward).unwrap();
    let mut tids = Vec::new();
    while c.next_batch(&db.pool, &mut tids, 1000).unwrap() {}
    assert_eq!(tids.len(), 20_002);
}

/// A table `(a text, b int4)`, both nullable.
fn text_table(db: &Arc<Database>) -> TableDef {
    let mut t = rc(db);
    let cols = vec![
        ColumnDef::new("a", SqlType::Text, false),
        ColumnDef::new("b", SqlType::Int4, false),
    ];
    let table = t.create_table("u", cols).unwrap();
    t.commit().unwrap();
    table
}

fn text_row(a: Option<&str>, b: Option<i32>) -> Vec<u8> {
    let mut tb = TupleBuilder::new();
    tb.begin();
    match a {
        Some(a) => tb.push_text(a.as_bytes()),
        None => tb.push_null(),
    }
    match b {
        Some(b) => tb.push_i32(b),
        None => tb.push_null(),
    }
    tb.finish(0).to_vec()
}

#[test]
fn multi_column_text_keys_nulls_and_builds() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let table = text_table(&db);
    let rows = [
        (Some("x"), Some(1)),
        (Some("x"), None),
        (Some("x"), None),
        (None, Some(1)),
        (None, Some(1)),
        (Some("x "), Some(1)),
        (Some("y"), Some(1)),
    ];
    let mut t = rc(&db);
    for (a, b) in rows {
        t.insert(table.oid, &text_row(a, b)).unwrap();
    }
    t.next_command().unwrap();
    let def = t
        .create_index(
            &table,
            "u_a_b_key",
            vec![IndexColumn::asc(0), IndexColumn::desc(1)],
            IndexKind::UniqueConstraint,
        )
        .unwrap();
    let (snap, xid) = (t.snapshot(), t.xid().unwrap());
    let index = Index::open(&db, &def, &table);
    assert_eq!(
        index.build(snap, xid, 1 << 20).unwrap(),
        BuildOutcome::Built
    );
    let put = |t: &mut Transaction, a, b| {
        let tid = t.insert(table.oid, &text_row(a, b)).unwrap();
        let a = a.map_or(Datum::Null, |a: &str| Datum::Text(a.as_bytes()));
        let b = b.map_or(Datum::Null, Datum::Int4);
        let key = index.key_of(&[a, b]).unwrap();
        index.insert(&key, tid, t).unwrap()
    };
    assert!(matches!(
        put(&mut t, Some("x"), Some(1)),
        InsertOutcome::Conflict { .. }
    ));
    assert_eq!(put(&mut t, Some("x"), None), InsertOutcome::Inserted);
    assert_eq!(put(&mut t, None, None), InsertOutcome::Inserted);
    assert_eq!(put(&mut t, Some("x"), Some(2)), InsertOutcome::Inserted);
    // A key too large for a third of a page: PostgreSQL's error.
    let long = "é".repeat(2000);
    let e = {
        let tid = t
            .insert(table.oid, &text_row(Some(&long), Some(1)))
            .unwrap();
        let key = index
            .key_of(&[Datum::Text(long.as_bytes()), Datum::Int4(1)])
            .unwrap();
        index.insert(&key, tid, &mut t).unwrap_err()
    };
    assert_eq!(e.sqlstate(), Some("54000"));
    assert_eq!(
        e.to_string(),
        "index row size 4016 exceeds btree version 4 maximum 2704 for index \"u_a_b_key\""
    );
    let r = e.report_details().unwrap();
    assert!(r
        .detail
        .as_ref()
        .unwrap()
        .starts_with("Index row references tuple ("));
    assert!(r.detail.as_ref().unwrap().ends_with(") in relation \"u\"."));
    t.commit().unwrap();

    // A unique build over duplicates fails; the error as the SQL layer
    // raises it.
    let mut t = rc(&db);
    let def = t
        .create_index(
            &table,
            "u_b_key",
            vec![IndexColumn::asc(1)],
            IndexKind::UniqueConstraint,
        )
        .unwrap();
    let (snap, xid) = (t.snapshot(), t.xid().unwrap());
    let out = Index::open(&db, &def, &table)
        .build(snap, xid, 1 << 20)
        .unwrap();
    assert!(matches!(out, BuildOutcome::Duplicate { .. }), "{out:?}");
    let e = tusk_storage::btree::duplicate_key_error("u_b_key", &describe_key(&["b"], &["1"]));
    assert_eq!(e.to_string(), "could not create unique index \"u_b_key\"");
    assert_eq!(
        e.report_details().unwrap().detail.as_deref(),
        Some("Key (b)=(1) is duplicated.")
    );
    let e = unique_violation("u_a_b_key", &describe_key(&["a", "b"], &["x", "1"]));
    assert_eq!(e.sqlstate(), Some("23505"));
    assert_eq!(
        e.report_details().unwrap().detail.as_deref(),
        Some("Key (a, b)=(x, 1) already exists.")
    );
}
