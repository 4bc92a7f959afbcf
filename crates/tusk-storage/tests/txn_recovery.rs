//! Crash recovery of transactions: updates (same page and across pages),
//! row locks, savepoints rolled back and released, aborts, transactions in
//! progress at the crash, and DDL of a transaction that a checkpoint
//! overtook.

mod common;

use common::*;
use tusk_storage::{ColumnDef, RowLockMode, RowWait, SqlType, TmResult};

fn replay_and_check(full_page_writes: &str) {
    let dir = tempfile::tempdir().unwrap();
    let crashed = dir.path().join("crashed");
    let db = open(&crashed, &[("full_page_writes", full_page_writes)]);
    // 400 rows: more than two pages, so updates move rows across pages.
    let t = create(&db, "t", (0..400).map(|i| (i, 1000)));
    db.checkpoint().unwrap();

    // Committed: updates, a row lock, a rolled-back and a released savepoint.
    let mut a = rc(&db);
    for id in [0, 1, 2, 150, 399] {
        assert_eq!(add(&mut a, t, id, 1).unwrap(), 1);
    }
    let (tid, _) = find(&mut a, t, 3).unwrap();
    assert_eq!(
        a.lock_row(t, tid, RowLockMode::Update, RowWait::Block)
            .unwrap(),
        TmResult::Ok
    );
    a.savepoint("s1");
    add(&mut a, t, 4, 500).unwrap();
    a.insert(t, &row(1000, 1)).unwrap();
    a.rollback_to("s1").unwrap();
    a.savepoint("s2");
    add(&mut a, t, 5, 7).unwrap();
    a.insert(t, &row(1001, 1)).unwrap();
    a.release("s2").unwrap();
    a.commit().unwrap();

    // Rolled back: an abort record.
    let mut b = rc(&db);
    add(&mut b, t, 6, 99).unwrap();
    b.insert(t, &row(1002, 1)).unwrap();
    b.rollback();

    // A table created before a checkpoint by a transaction that commits
    // after it, and one whose transaction is still running at the crash.
    let cols = || {
        vec![ColumnDef {
            name: "x".into(),
            ty: SqlType::Int4,
            not_null: false,
            default: None,
        }]
    };
    let mut c = rc(&db);
    let kept = c.create_table("kept", cols()).unwrap();
    let mut d = rc(&db);
    let lost = d.create_table("lost", cols()).unwrap();
    db.checkpoint().unwrap();
    c.commit().unwrap();

    // In progress at the crash: updates of many rows, a delete, an insert.
    let mut e = rc(&db);
    for id in 10..60 {
        add(&mut e, t, id, 1).unwrap();
    }
    let (tid, _) = find(&mut e, t, 7).unwrap();
    assert_eq!(e.delete(t, tid, RowWait::Block).unwrap(), TmResult::Ok);
    e.insert(t, &row(1003, 1)).unwrap();
    // Committed after them, so the in-progress records are durable too.
    let mut f = rc(&db);
    add(&mut f, t, 8, 2).unwrap();
    f.commit().unwrap();
    db.wal.flush_all().unwrap();

    let run = dir.path().join("run");
    copy_dir(&crashed, &run);
    std::mem::forget(d);
    std::mem::forget(e);
    crash(db);

    let db = open(&run, &[("full_page_writes", full_page_writes)]);
    assert!(db.recovery_stats().records > 0);
    let mut r = rc(&db);
    let got = balances(&mut r, t);
    let mut want: Vec<(i32, i64)> = (0..400).map(|i| (i, 1000)).collect();
    for id in [0, 1, 2, 150, 399] {
        want[id as usize].1 += 1;
    }
    want[5].1 += 7;
    want[8].1 += 2;
    want.push((1001, 1));
    assert_eq!(got, want);
    let cat = r.catalog();
    assert!(cat.table("kept").is_some_and(|k| k.oid == kept.oid));
    assert!(cat.table("lost").is_none());
    assert!(
        !db.smgr.exists(lost.oid),
        "the running transaction's table is gone"
    );
    // Life goes on: new xids are past every recovered one.
    let mut g = rc(&db);
    assert_eq!(add(&mut g, t, 7, 1).unwrap(), 1);
    assert_eq!(add(&mut g, t, 10, 1).unwrap(), 1);
    g.commit().unwrap();
    let mut r = rc(&db);
    let got = balances(&mut r, t);
    assert_eq!(got[7], (7, 1001));
    assert_eq!(got[10], (10, 1001));
}

#[test]
fn transactions_replay_with_full_page_writes() {
    replay_and_check("on");
}

#[test]
fn transactions_replay_without_full_page_writes() {
    replay_and_check("off");
}
