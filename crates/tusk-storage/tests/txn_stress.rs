//! Concurrent transfers between accounts against a shadow model: several
//! sessions move money between random accounts in READ COMMITTED and
//! REPEATABLE READ transactions (retrying serialization failures and
//! deadlock victims, rolling some back, some inside savepoints), a reader
//! checks that every snapshot sees the same total, and VACUUM runs all the
//! while. At the end each balance is its start plus the committed
//! transfers, and the index on the account id finds exactly the live
//! version of every account.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;
use tusk_storage::btree::{Btree, Datum, Direction, IndexBuild, KeyEncoder, KeyType, ScanBounds};
use tusk_storage::catalog::{IndexColumn, IndexKind};
use tusk_storage::heap::{self, Tid, Visibility};
use tusk_storage::{
    Database, IsolationLevel, LatestOutcome, RowLockMode, RowWait, StorageError, TmResult,
    Transaction, TxnOptions, UpdateKind, WaitOptions,
};

const ACCOUNTS: i32 = 16;
const START: i64 = 1000;

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// `UPDATE accounts SET balance = balance + delta WHERE id = id`, keeping
/// the index current (every new version gets an entry).
fn add_indexed(
    txn: &mut Transaction,
    rel: u32,
    index: u32,
    id: i32,
    delta: i64,
    hot_allowed: bool,
) -> Result<(), StorageError> {
    let _statement = txn.snapshot();
    let (mut tid, mut bal) = find(txn, rel, id).expect("accounts are never deleted");
    loop {
        let kind = UpdateKind {
            key_update: false,
            hot_allowed,
        };
        let out = txn.update(rel, tid, &row(id, bal + delta), kind, RowWait::Block)?;
        match out.result {
            TmResult::Ok => {
                if !out.hot {
                    let xid = txn.xid()?;
                    let db = txn.database().clone();
                    Btree::new(&db.pool, index).insert(
                        &id_key(id).bytes,
                        out.new_tid.unwrap(),
                        xid,
                    )?;
                }
                return txn.next_command();
            }
            TmResult::Updated { .. } if txn.isolation() == IsolationLevel::ReadCommitted => {
                match txn.lock_latest(rel, tid, RowLockMode::NoKeyUpdate, RowWait::Block)? {
                    LatestOutcome::Locked { tid: t, tuple } => (tid, bal) = (t, decode(&tuple).1),
                    o => panic!("an account vanished: {o:?}"),
                }
            }
            TmResult::Updated { .. } => {
                return Err(tusk_storage::heapam::serialization_failure(false))
            }
            r => panic!("unexpected {r:?}"),
        }
    }
}

/// The visible rows the index finds for `id`.
fn via_index(db: &Arc<Database>, txn: &mut Transaction, rel: u32, index: u32, id: i32) -> Vec<i64> {
    let snapshot = txn.snapshot();
    let mut cursor = Btree::new(&db.pool, index)
        .scan(id_bounds(id), Direction::Forward)
        .unwrap();
    let mut tids: Vec<Tid> = Vec::new();
    while cursor.next_batch(&db.pool, &mut tids, 100).unwrap() {}
    tids.sort();
    let mut vis = Visibility::new(&db.txn, snapshot);
    let mut out = Vec::new();
    heap::fetch(&db.pool, rel, &tids, &mut vis, |_, t| {
        let (i, b) = decode(t);
        assert_eq!(i, id, "an index entry points at another row");
        out.push(b);
    })
    .unwrap();
    out
}

#[test]
fn concurrent_transfers_conserve_money() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let rel = create(&db, "accounts", (0..ACCOUNTS).map(|i| (i, START)));
    let index = {
        let mut txn = rc(&db);
        let table = txn.catalog().table("accounts").unwrap().clone();
        let idx = txn
            .create_index(
                &table,
                "accounts_id",
                vec![IndexColumn::asc(0)],
                IndexKind::Plain,
            )
            .unwrap();
        let keys: Vec<(i64, u64)> = scan(&mut txn, rel)
            .into_iter()
            .map(|(tid, id, _)| (id as i64, tid.to_u64()))
            .collect();
        let xid = txn.xid().unwrap();
        build_index(&db, idx.oid, &keys, xid);
        txn.commit().unwrap();
        idx.oid
    };
    let committed: Arc<Mutex<Vec<(i32, i32, i64)>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4u64)
        .map(|w| {
            let (db, committed) = (db.clone(), committed.clone());
            thread::spawn(move || {
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((w + 1) * 0x1234_5678));
                let mut outcomes = BTreeMap::<&str, u32>::new();
                for _ in 0..150 {
                    let (a, b) = loop {
                        let a = rng.below(ACCOUNTS as u64) as i32;
                        let b = rng.below(ACCOUNTS as u64) as i32;
                        if a != b {
                            break (a, b);
                        }
                    };
                    let x = 1 + rng.below(50) as i64;
                    let isolation = if rng.below(3) == 0 {
                        IsolationLevel::RepeatableRead
                    } else {
                        IsolationLevel::ReadCommitted
                    };
                    let use_savepoint = rng.below(4) == 0;
                    let hot = rng.below(2) == 0;
                    let give_up = rng.below(10) == 0;
                    loop {
                        let mut txn = db.begin(TxnOptions {
                            isolation,
                            wait: WaitOptions {
                                deadlock_timeout: Duration::from_millis(20),
                                ..WaitOptions::default()
                            },
                            ..TxnOptions::default()
                        });
                        let r = (|| -> Result<(), StorageError> {
                            if use_savepoint {
                                // A transfer attempted and taken back first.
                                txn.savepoint("s");
                                add_indexed(&mut txn, rel, index, a, 1_000_000, hot)?;
                                txn.rollback_to("s")?;
                            }
                            add_indexed(&mut txn, rel, index, a, -x, hot)?;
                            add_indexed(&mut txn, rel, index, b, x, hot)?;
                            Ok(())
                        })();
                        match r {
                            Ok(()) if give_up => {
                                txn.rollback();
                                *outcomes.entry("rolled back").or_default() += 1;
                                break;
                            }
                            Ok(()) => {
                                txn.commit().unwrap();
                                committed.lock().unwrap().push((a, b, x));
                                *outcomes.entry("committed").or_default() += 1;
                                break;
                            }
                            Err(e) if matches!(e.sqlstate(), Some("40001" | "40P01")) => {
                                *outcomes.entry(e.sqlstate().unwrap()).or_default() += 1;
                                drop(txn);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
                outcomes
            })
        })
        .collect();
    // A reader: every snapshot sees the same total.
    let reader = {
        let (db, done) = (db.clone(), done.clone());
        thread::spawn(move || {
            let mut checks = 0;
            while !done.load(Ordering::Acquire) {
                let mut txn = rr(&db);
                let total: i64 = balances(&mut txn, rel).iter().map(|r| r.1).sum();
                assert_eq!(total, START * ACCOUNTS as i64);
                assert_eq!(balances(&mut txn, rel).len(), ACCOUNTS as usize);
                checks += 1;
            }
            checks
        })
    };
    // VACUUM meanwhile.
    let vacuum = {
        let (db, done) = (db.clone(), done.clone());
        thread::spawn(move || {
            let mut removed = 0;
            while !done.load(Ordering::Acquire) {
                let cat = db.catalog_snapshot();
                let table = cat.table("accounts").unwrap();
                let indexes: Vec<_> = cat.indexes_of(table.oid).cloned().collect();
                let mut txn = rc(&db);
                txn.lock_relation(table.oid, tusk_storage::LockMode::ShareUpdateExclusive)
                    .unwrap();
                let r =
                    tusk_storage::vacuum::vacuum_table(&db, table, &indexes, 0, 1 << 20).unwrap();
                removed += r.tuples_removed;
                txn.commit().unwrap();
                thread::sleep(Duration::from_millis(5));
            }
            removed
        })
    };
    let mut outcomes = BTreeMap::new();
    for w in workers {
        for (k, v) in w.join().unwrap() {
            *outcomes.entry(k).or_insert(0) += v;
        }
    }
    done.store(true, Ordering::Release);
    let checks = reader.join().unwrap();
    let removed = vacuum.join().unwrap();
    let stats = db.stats.table(rel);
    eprintln!(
        "outcomes {outcomes:?}, {checks} snapshot checks, VACUUM removed {removed}, \
         {} updates ({} HOT), table {} pages",
        stats.n_tup_upd,
        stats.n_tup_hot_upd,
        db.nblocks(rel).unwrap()
    );
    assert!(stats.n_tup_hot_upd > 0);

    let mut want: Vec<i64> = vec![START; ACCOUNTS as usize];
    for &(a, b, x) in committed.lock().unwrap().iter() {
        want[a as usize] -= x;
        want[b as usize] += x;
    }
    let mut txn = rc(&db);
    let got: Vec<i64> = balances(&mut txn, rel).into_iter().map(|r| r.1).collect();
    assert_eq!(got, want);
    for id in 0..ACCOUNTS {
        assert_eq!(
            via_index(&db, &mut txn, rel, index, id),
            vec![want[id as usize]]
        );
    }
    assert_eq!(
        outcomes["committed"],
        committed.lock().unwrap().len() as u32
    );
}

/// The key of row `id` in the index on the `integer` id column.
fn id_key(id: i32) -> tusk_storage::btree::EncodedKey {
    KeyEncoder::single(KeyType::Int4)
        .encode(&[Datum::Int4(id)])
        .unwrap()
}

/// The scan bounds of `id = id`.
fn id_bounds(id: i32) -> ScanBounds {
    ScanBounds::build(&KeyEncoder::single(KeyType::Int4), &[Datum::Int4(id)], None).unwrap()
}

/// Builds the index `rel` from (id, TID) pairs.
fn build_index(db: &Database, rel: u32, keys: &[(i64, u64)], xid: tusk_storage::Xid) {
    let mut build = IndexBuild::new();
    for &(id, tid) in keys {
        build.push(&id_key(id as i32), Tid::from_u64(tid)).unwrap();
    }
    build
        .finish(&Btree::new(&db.pool, rel), false, xid)
        .unwrap();
}
