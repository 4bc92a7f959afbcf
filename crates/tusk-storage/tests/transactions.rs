//! Interleavings of concurrent transactions at the storage API: each test
//! runs sessions on threads and checks what PostgreSQL's transaction model
//! promises. No test depends on timing: a step that must wait is started on
//! its thread, the test waits until the lock manager shows it waiting, and
//! only then goes on.

mod common;

use common::*;
use std::sync::Arc;
use std::thread;
use std::time::Duration;
use tusk_storage::heapam::serialization_failure;
use tusk_storage::lock::LockTag;
use tusk_storage::xact::lock_error;
use tusk_storage::{
    Database, LatestOutcome, LockMode, RowLockMode, RowWait, StorageError, TmResult, Xid,
};

/// Blocks until some transaction waits for the lock on transaction `xid`.
fn wait_until_blocked_on(db: &Arc<Database>, xid: Xid) {
    while db.locks.waiters(&LockTag::Transaction(xid)).is_empty() {
        thread::yield_now();
    }
}

#[test]
fn lost_update_is_prevented_under_read_committed() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 100), (2, 200)]);
    let mut a = rc(&db);
    assert_eq!(add(&mut a, t, 1, 10).unwrap(), 1);
    let xa = a.top_xid().unwrap();
    let b = {
        let db = db.clone();
        thread::spawn(move || {
            let mut b = rc(&db);
            // Reads 100, finds the row being updated, waits for A, then
            // re-checks the newest version (110) and adds to that.
            let n = add(&mut b, t, 1, 5).unwrap();
            b.commit().unwrap();
            n
        })
    };
    wait_until_blocked_on(&db, xa);
    a.commit().unwrap();
    assert_eq!(b.join().unwrap(), 1);
    let mut r = rc(&db);
    assert_eq!(balances(&mut r, t), vec![(1, 115), (2, 200)]);
}

#[test]
fn repeatable_read_fails_with_40001_on_concurrent_update() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 100), (2, 200)]);
    let mut b = rr(&db);
    assert_eq!(
        balances(&mut b, t),
        vec![(1, 100), (2, 200)],
        "snapshot taken"
    );
    let mut a = rc(&db);
    add(&mut a, t, 1, 10).unwrap();
    a.commit().unwrap();
    // B's snapshot still shows 100, and updating the row fails.
    assert_eq!(find(&mut b, t, 1).unwrap().1, 100);
    let err = add(&mut b, t, 1, 1).unwrap_err();
    assert_eq!(err.sqlstate(), Some("40001"));
    assert_eq!(
        err.to_string(),
        "could not serialize access due to concurrent update"
    );
    drop(b);
    // The same with the first writer still running: B waits, then fails.
    let mut b = rr(&db);
    balances(&mut b, t);
    let mut a = rc(&db);
    add(&mut a, t, 2, 1).unwrap();
    let xa = a.top_xid().unwrap();
    let h = thread::spawn(move || add(&mut b, t, 2, 1).map_err(|e| e.sqlstate()));
    wait_until_blocked_on(&db, xa);
    a.commit().unwrap();
    assert_eq!(h.join().unwrap(), Err(Some("40001")));
    // A row deleted concurrently: "concurrent delete".
    let mut b = rr(&db);
    let (tid, _) = find(&mut b, t, 2).unwrap();
    let mut a = rc(&db);
    let (atid, _) = find(&mut a, t, 2).unwrap();
    assert_eq!(a.delete(t, atid, RowWait::Block).unwrap(), TmResult::Ok);
    a.commit().unwrap();
    assert_eq!(b.delete(t, tid, RowWait::Block).unwrap(), TmResult::Deleted);
    assert_eq!(
        serialization_failure(true).to_string(),
        "could not serialize access due to concurrent delete"
    );
}

#[test]
fn deadlock_is_detected_with_one_victim() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 100), (2, 200)]);
    let start = Arc::new(std::sync::Barrier::new(2));
    let run = |first: i32, second: i32, pid: i32| {
        let (db, start) = (db.clone(), start.clone());
        thread::spawn(move || {
            let mut txn = db.begin(tusk_storage::TxnOptions {
                pid,
                wait: tusk_storage::WaitOptions {
                    deadlock_timeout: Duration::from_millis(50),
                    ..Default::default()
                },
                ..Default::default()
            });
            add(&mut txn, t, first, 1).unwrap();
            let me = txn.top_xid().unwrap();
            start.wait();
            match add(&mut txn, t, second, 1) {
                Ok(_) => {
                    txn.commit().unwrap();
                    Ok(me)
                }
                Err(e) => Err((me, e)),
            }
        })
    };
    let a = run(1, 2, 101);
    let b = run(2, 1, 202);
    let (ra, rb) = (a.join().unwrap(), b.join().unwrap());
    let (winner, (victim_xid, err), victim_pid, winner_pid) = match (ra, rb) {
        (Ok(w), Err(e)) => (w, e, 202, 101),
        (Err(e), Ok(w)) => (w, e, 101, 202),
        (ra, rb) => panic!("want exactly one victim: {ra:?} {rb:?}"),
    };
    assert_eq!(err.sqlstate(), Some("40P01"));
    assert_eq!(err.to_string(), "deadlock detected");
    let report = err.report_details().unwrap();
    assert_eq!(
        report.detail.as_deref().unwrap(),
        format!(
            "Process {victim_pid} waits for ShareLock on transaction {winner}; blocked by process {winner_pid}.\n\
             Process {winner_pid} waits for ShareLock on transaction {victim_xid}; blocked by process {victim_pid}."
        )
    );
    assert_eq!(
        report.hint.as_deref(),
        Some("See server log for query details.")
    );
    // The winner's two increments committed, the victim's none.
    let mut r = rc(&db);
    assert_eq!(balances(&mut r, t), vec![(1, 101), (2, 201)]);
}

#[test]
fn waiting_for_a_row_lock_then_seeing_the_updated_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 100)]);
    let mut a = rc(&db);
    add(&mut a, t, 1, 50).unwrap();
    let xa = a.top_xid().unwrap();
    let h = {
        let db = db.clone();
        thread::spawn(move || {
            let mut b = rc(&db);
            let (tid, bal) = find(&mut b, t, 1).unwrap();
            assert_eq!(bal, 100, "B's snapshot is older than A's commit");
            // SELECT ... FOR UPDATE: waits for A, then finds the row updated.
            let r = b
                .lock_row(t, tid, RowLockMode::Update, RowWait::Block)
                .unwrap();
            let TmResult::Updated { next } = r else {
                panic!("{r:?}")
            };
            let latest = b
                .lock_latest(t, tid, RowLockMode::Update, RowWait::Block)
                .unwrap();
            let LatestOutcome::Locked { tid: locked, tuple } = latest else {
                panic!("{latest:?}")
            };
            assert_eq!(locked, next);
            decode(&tuple)
        })
    };
    wait_until_blocked_on(&db, xa);
    a.commit().unwrap();
    assert_eq!(h.join().unwrap(), (1, 150));
}

#[test]
fn nowait_and_skip_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", (1..=5).map(|i| (i, 0)));
    // A queue: A takes the first two jobs.
    let mut a = rc(&db);
    let rows = scan(&mut a, t);
    for (tid, _, _) in &rows[..2] {
        assert_eq!(
            a.lock_row(t, *tid, RowLockMode::Update, RowWait::Skip)
                .unwrap(),
            TmResult::Ok
        );
    }
    // B skips them and gets the rest.
    let mut b = rc(&db);
    let mut got = Vec::new();
    for (tid, id, _) in scan(&mut b, t) {
        match b
            .lock_row(t, tid, RowLockMode::Update, RowWait::Skip)
            .unwrap()
        {
            TmResult::Ok => got.push(id),
            TmResult::WouldBlock => {}
            r => panic!("{r:?}"),
        }
    }
    assert_eq!(got, vec![3, 4, 5]);
    // NOWAIT on a locked row: PostgreSQL's error.
    let (tid, _) = find(&mut b, t, 1).unwrap();
    let r = b
        .lock_row(t, tid, RowLockMode::Share, RowWait::NoWait)
        .unwrap();
    assert_eq!(r, TmResult::WouldBlock);
    let err = lock_error(tusk_storage::LockError::WouldBlock, "row in relation \"t\"");
    assert_eq!(
        err.to_string(),
        "could not obtain lock on row in relation \"t\""
    );
    assert_eq!(err.sqlstate(), Some("55P03"));
    // Shared locks do not block each other, but block a writer.
    drop(a);
    let mut c = rc(&db);
    let (tid1, _) = find(&mut c, t, 1).unwrap();
    assert_eq!(
        c.lock_row(t, tid1, RowLockMode::Share, RowWait::NoWait)
            .unwrap(),
        TmResult::Ok
    );
    let mut d = rc(&db);
    assert_eq!(
        d.lock_row(t, tid1, RowLockMode::KeyShare, RowWait::NoWait)
            .unwrap(),
        TmResult::Ok
    );
    assert_eq!(
        d.lock_row(t, tid1, RowLockMode::Share, RowWait::NoWait)
            .unwrap(),
        TmResult::Ok
    );
    let mut e = rc(&db);
    assert_eq!(
        e.delete(t, tid1, RowWait::NoWait).unwrap(),
        TmResult::WouldBlock
    );
    drop(c);
    assert_eq!(
        e.delete(t, tid1, RowWait::NoWait).unwrap(),
        TmResult::WouldBlock,
        "D still shares it"
    );
    d.commit().unwrap();
    assert_eq!(e.delete(t, tid1, RowWait::NoWait).unwrap(), TmResult::Ok);
    e.commit().unwrap();
    assert!(
        db.share_locks.is_empty(),
        "lockers are forgotten when they end"
    );
}

#[test]
fn lock_timeout_and_cancellation_end_a_row_wait() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 0)]);
    let mut a = rc(&db);
    add(&mut a, t, 1, 1).unwrap();
    let mut b = rc(&db);
    b.wait_options_mut().lock_timeout = Some(Duration::from_millis(1));
    let (tid, _) = find(&mut b, t, 1).unwrap();
    let err = b.delete(t, tid, RowWait::Block).unwrap_err();
    assert_eq!(err.to_string(), "canceling statement due to lock timeout");
    assert_eq!(err.sqlstate(), Some("55P03"));
    b.wait_options_mut().lock_timeout = None;
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(true));
    b.wait_options_mut().interrupt = Some(flag);
    let err = b.delete(t, tid, RowWait::Block).unwrap_err();
    assert_eq!(err.sqlstate(), Some("57014"));
    // LOCK TABLE conflicts with the writer's ROW EXCLUSIVE.
    a.lock_relation(t, LockMode::RowExclusive).unwrap();
    b.wait_options_mut().interrupt = None;
    let err = b
        .lock(LockTag::Relation(t), LockMode::Share, true)
        .unwrap_err();
    assert_eq!(
        lock_error(err, "relation \"t\"").to_string(),
        "could not obtain lock on relation \"t\""
    );
    assert!(b
        .lock(LockTag::Relation(t), LockMode::RowExclusive, true)
        .is_ok());
}

#[test]
fn a_snapshot_does_not_see_later_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 1)]);
    let mut repeatable = rr(&db);
    let mut committed = rc(&db);
    assert_eq!(balances(&mut repeatable, t).len(), 1);
    assert_eq!(balances(&mut committed, t).len(), 1);
    let mut w = rc(&db);
    w.insert(t, &row(2, 2)).unwrap();
    // Not committed yet: nobody else sees it; the writer does, from its
    // next command on.
    assert_eq!(balances(&mut committed, t).len(), 1);
    assert_eq!(balances(&mut w, t).len(), 1, "same command");
    w.next_command().unwrap();
    assert_eq!(balances(&mut w, t).len(), 2);
    w.commit().unwrap();
    assert_eq!(balances(&mut repeatable, t).len(), 1, "REPEATABLE READ");
    assert_eq!(balances(&mut committed, t).len(), 2, "READ COMMITTED");
}

#[test]
fn a_statement_does_not_see_its_own_insertions() {
    // INSERT INTO t SELECT * FROM t doubles the table, once.
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", (1..=50).map(|i| (i, i as i64)));
    let mut txn = rc(&db);
    let snap = txn.snapshot();
    let mut vis = tusk_storage::heap::Visibility::new(&db.txn, snap);
    let mut inserted = 0;
    let mut block = 0;
    while block < db.nblocks(t).unwrap() {
        let mut rows = Vec::new();
        tusk_storage::heap::scan_page(&db.pool, t, block, &mut vis, |_, tup| {
            rows.push(decode(tup))
        })
        .unwrap();
        for (id, b) in rows {
            txn.insert(t, &row(id + 1000, b)).unwrap();
            inserted += 1;
        }
        block += 1;
    }
    txn.next_command().unwrap();
    assert_eq!(inserted, 50);
    assert_eq!(balances(&mut txn, t).len(), 100);
    // Deleting in one command: the command still sees the rows it deleted.
    let rows = scan(&mut txn, t);
    for (tid, _, _) in &rows {
        assert_eq!(txn.delete(t, *tid, RowWait::Block).unwrap(), TmResult::Ok);
    }
    assert_eq!(scan(&mut txn, t).len(), 100, "snapshot of the same command");
    let again = txn.delete(t, rows[0].0, RowWait::Block).unwrap();
    assert!(matches!(again, TmResult::SelfModified { .. }), "{again:?}");
    txn.next_command().unwrap();
    assert!(scan(&mut txn, t).is_empty());
    txn.rollback();
    let mut r = rc(&db);
    assert_eq!(balances(&mut r, t).len(), 50);
}

#[test]
fn vacuum_keeps_rows_an_open_snapshot_can_see() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", (1..=10).map(|i| (i, 0)));
    let mut old = rr(&db);
    assert_eq!(balances(&mut old, t).len(), 10);
    let mut d = rc(&db);
    for (tid, id, _) in scan(&mut d, t) {
        if id % 2 == 0 {
            assert_eq!(d.delete(t, tid, RowWait::Block).unwrap(), TmResult::Ok);
        }
    }
    d.commit().unwrap();
    let table = db.catalog_snapshot().table("t").unwrap().clone();
    let r = tusk_storage::vacuum::vacuum_table(&db, &table, &[], 0, 1 << 20).unwrap();
    assert_eq!(r.tuples_removed, 0);
    assert_eq!(r.dead_not_removable, 5);
    assert_eq!(
        balances(&mut old, t).len(),
        10,
        "the old snapshot still sees them"
    );
    drop(old);
    let r = tusk_storage::vacuum::vacuum_table(&db, &table, &[], 0, 1 << 20).unwrap();
    assert_eq!(r.tuples_removed, 5);
    let s = db.stats.table(t);
    assert_eq!((s.n_live_tup, s.n_dead_tup, s.vacuum_count), (5, 0, 2));
}

#[test]
fn savepoints_roll_back_and_release() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 0)]);
    let mut txn = rc(&db);
    txn.insert(t, &row(2, 0)).unwrap();
    txn.next_command().unwrap();
    txn.savepoint("a");
    txn.insert(t, &row(3, 0)).unwrap();
    add(&mut txn, t, 1, 5).unwrap();
    txn.savepoint("b");
    txn.insert(t, &row(4, 0)).unwrap();
    txn.next_command().unwrap();
    assert_eq!(balances(&mut txn, t), vec![(1, 5), (2, 0), (3, 0), (4, 0)]);
    // ROLLBACK TO a undoes b's work too, and keeps a.
    txn.rollback_to("a").unwrap();
    assert_eq!(balances(&mut txn, t), vec![(1, 0), (2, 0)]);
    assert_eq!(
        txn.rollback_to("b").unwrap_err().to_string(),
        "savepoint \"b\" does not exist"
    );
    txn.insert(t, &row(5, 0)).unwrap();
    txn.next_command().unwrap();
    txn.savepoint("c");
    add(&mut txn, t, 5, 7).unwrap();
    txn.release("a").unwrap(); // c goes with it
    txn.next_command().unwrap();
    // Another session waits for the released savepoint's row until the
    // top-level transaction ends.
    let top = txn.top_xid().unwrap();
    let h = {
        let db = db.clone();
        thread::spawn(move || {
            let mut o = rc(&db);
            let n = add(&mut o, t, 1, 100).unwrap();
            assert_eq!(n, 1);
            o.commit().unwrap();
        })
    };
    // The other session updates row 1, which the rolled-back savepoint had
    // locked: that lock is gone, so it must not wait (wait for it to finish).
    h.join().unwrap();
    assert!(db.locks.waiters(&LockTag::Transaction(top)).is_empty());
    txn.commit().unwrap();
    let mut r = rc(&db);
    assert_eq!(balances(&mut r, t), vec![(1, 100), (2, 0), (5, 7)]);
}

#[test]
fn a_released_savepoint_is_waited_for_until_its_transaction_ends() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", [(1, 0)]);
    let mut txn = rc(&db);
    txn.savepoint("s");
    add(&mut txn, t, 1, 1).unwrap();
    txn.release("s").unwrap();
    let top = txn.top_xid().unwrap();
    let h = {
        let db = db.clone();
        thread::spawn(move || {
            let mut o = rc(&db);
            add(&mut o, t, 1, 10).unwrap();
            o.commit().unwrap();
        })
    };
    // It waits on the sub-xid's lock, which the top-level transaction holds.
    loop {
        let waiting = (top..db.txn.next_xid())
            .any(|x| !db.locks.waiters(&LockTag::Transaction(x)).is_empty());
        if waiting {
            break;
        }
        thread::yield_now();
    }
    txn.commit().unwrap();
    h.join().unwrap();
    let mut r = rc(&db);
    assert_eq!(balances(&mut r, t), vec![(1, 11)]);
}

#[test]
fn ddl_is_transactional() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let mut a = rc(&db);
    let cols = || {
        vec![tusk_storage::ColumnDef {
            name: "x".into(),
            ty: tusk_storage::SqlType::Int4,
            not_null: false,
            default: None,
        }]
    };
    let t = a.create_table("u", cols()).unwrap();
    assert!(a.catalog().table("u").is_some());
    assert!(db.catalog_snapshot().table("u").is_none(), "not committed");
    let mut b = rc(&db);
    assert!(b.catalog().table("u").is_none());
    // A second CREATE of the name waits, then sees it exists.
    let h = {
        let db = db.clone();
        thread::spawn(move || {
            let mut c = rc(&db);
            c.create_table("u", cols())
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    };
    while db
        .locks
        .waiters(&LockTag::RelationName("u".into()))
        .is_empty()
    {
        thread::yield_now();
    }
    a.commit().unwrap();
    assert_eq!(
        h.join().unwrap(),
        Err("relation \"u\" already exists".into())
    );
    assert_eq!(b.catalog().table("u").map(|x| x.oid), Some(t.oid));
    // DROP in a transaction that rolls back leaves the table; one that
    // commits removes it and its file.
    let mut d = rc(&db);
    d.drop_relation(t.oid, "u").unwrap();
    assert!(d.catalog().table("u").is_none());
    d.rollback();
    assert!(db.catalog_snapshot().table("u").is_some());
    let mut d = rc(&db);
    d.savepoint("s");
    let v = d.create_table("v", cols()).unwrap();
    d.rollback_to("s").unwrap();
    assert!(
        !db.smgr.exists(v.oid),
        "rolled-back CREATE removes its file"
    );
    d.drop_relation(t.oid, "u").unwrap();
    d.commit().unwrap();
    assert!(db.catalog_snapshot().table("u").is_none());
    assert!(!db.smgr.exists(t.oid));
    drop(b);
}

#[test]
fn group_commit_shares_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", (0..8).map(|i| (i, 0)));
    let (syncs0, commits0) = (
        db.wal
            .stats
            .syncs
            .load(std::sync::atomic::Ordering::Relaxed),
        db.wal
            .stats
            .commits
            .load(std::sync::atomic::Ordering::Relaxed),
    );
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let db = db.clone();
            thread::spawn(move || {
                for _ in 0..25 {
                    let mut txn = rc(&db);
                    add(&mut txn, t, i, 1).unwrap();
                    txn.commit().unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = &db.wal.stats;
    let syncs = s.syncs.load(std::sync::atomic::Ordering::Relaxed) - syncs0;
    let commits = s.commits.load(std::sync::atomic::Ordering::Relaxed) - commits0;
    assert_eq!(commits, 200);
    assert!(syncs <= commits, "{syncs} syncs for {commits} commits");
    let mut r = rc(&db);
    assert!(balances(&mut r, t).iter().all(|&(_, b)| b == 25));
    // synchronous_commit = off: no flush of its own.
    let before = s.syncs.load(std::sync::atomic::Ordering::Relaxed);
    let mut txn = rc(&db);
    txn.set_synchronous_commit(Some(false));
    add(&mut txn, t, 0, 1).unwrap();
    txn.commit().unwrap();
    assert_eq!(s.syncs.load(std::sync::atomic::Ordering::Relaxed), before);
}

#[test]
fn errors_carry_sqlstates() {
    let e = StorageError::report("40001", "x");
    assert_eq!(e.sqlstate(), Some("40001"));
    assert_eq!(StorageError::Other("y".into()).sqlstate(), None);
}

#[test]
fn autovacuum_vacuums_and_analyzes_past_the_thresholds() {
    use tusk_storage::autovacuum::{run_round, AnalyzeHook, AutovacuumOptions};
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let t = create(&db, "t", (0..100).map(|i| (i, 0)));
    let quiet = create(&db, "quiet", (0..10).map(|i| (i, 0)));
    let analyzed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let hook: AnalyzeHook = {
        let analyzed = analyzed.clone();
        Arc::new(move |_db: &Arc<Database>, table: &tusk_storage::TableDef| {
            analyzed.lock().unwrap().push(table.name.clone());
            Ok(())
        })
    };
    let opts = AutovacuumOptions {
        vacuum_insert_threshold: -1.0,
        ..AutovacuumOptions::default()
    };
    // 100 live rows and 10 quiet ones: nothing due yet but ANALYZE of `t`
    // (100 changes > 50 + 10% of 100).
    let r = run_round(&db, &opts, Some(&hook)).unwrap();
    assert!(r.vacuumed.is_empty());
    assert_eq!(r.analyzed, vec!["t".to_string()]);
    // Deleting 69 rows: 69 dead > 50 + 20% of 31 live.
    let mut d = rc(&db);
    for (tid, id, _) in scan(&mut d, t) {
        if id < 69 {
            assert_eq!(d.delete(t, tid, RowWait::Block).unwrap(), TmResult::Ok);
        }
    }
    d.commit().unwrap();
    assert_eq!(db.stats.table(t).n_dead_tup, 69);
    let r = run_round(&db, &opts, Some(&hook)).unwrap();
    assert_eq!(r.vacuumed, vec!["t".to_string()]);
    let s = db.stats.table(t);
    assert_eq!((s.n_live_tup, s.n_dead_tup, s.autovacuum_count), (31, 0, 1));
    assert!(s.last_autovacuum.is_some() && s.last_vacuum.is_none());
    assert_eq!(db.stats.table(quiet).autovacuum_count, 0);
    // A table someone holds a conflicting lock on is skipped, not waited for.
    let mut d = rc(&db);
    for (tid, _, _) in scan(&mut d, t) {
        d.delete(t, tid, RowWait::Block).unwrap();
    }
    d.commit().unwrap();
    let opts = AutovacuumOptions {
        vacuum_threshold: 10.0,
        ..opts
    };
    let mut locker = rc(&db);
    locker
        .lock_relation(t, LockMode::ShareUpdateExclusive)
        .unwrap();
    let r = run_round(&db, &opts, None).unwrap();
    assert_eq!(r.skipped, vec!["t".to_string()]);
    drop(locker);
    let r = run_round(&db, &opts, None).unwrap();
    assert_eq!(r.vacuumed, vec!["t".to_string()]);
}
