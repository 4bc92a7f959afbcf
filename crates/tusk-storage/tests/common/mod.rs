//! Helpers for the transaction tests: a table of `(id int4, balance int8)`
//! rows driven through the storage API the way the SQL layer drives it.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use tusk_storage::heap::{self, Tid, Visibility};
use tusk_storage::heapam::serialization_failure;
use tusk_storage::tuple::{self, Attr, TupleBuilder};
use tusk_storage::{
    ColumnDef, DataType, Database, IsolationLevel, LatestOutcome, RowLockMode, RowWait, SqlType,
    StorageError, TmResult, Transaction, TxnOptions, UpdateKind,
};

pub fn open(dir: &Path, extra: &[(&str, &str)]) -> Arc<Database> {
    let mut settings: Vec<(String, String)> = vec![
        ("shared_buffers".into(), "2MB".into()),
        ("huge_pages".into(), "off".into()),
        ("autovacuum".into(), "off".into()),
    ];
    settings.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Database::open(dir, &settings).unwrap()
}

pub fn begin(db: &Arc<Database>, isolation: IsolationLevel) -> Transaction {
    db.begin(TxnOptions {
        isolation,
        ..TxnOptions::default()
    })
}

pub fn rc(db: &Arc<Database>) -> Transaction {
    begin(db, IsolationLevel::ReadCommitted)
}

pub fn rr(db: &Arc<Database>) -> Transaction {
    begin(db, IsolationLevel::RepeatableRead)
}

pub fn row(id: i32, balance: i64) -> Vec<u8> {
    let mut b = TupleBuilder::new();
    b.begin();
    b.push_i32(id);
    b.push_i64(balance);
    b.finish(0).to_vec()
}

pub fn decode(t: &[u8]) -> (i32, i64) {
    let (mut id, mut bal) = (0, 0);
    tuple::walk(t, &[DataType::Int4, DataType::Int8], 1, |i, a| {
        match (i, a) {
            (0, Attr::Int4(v)) => id = v,
            (1, Attr::Int8(v)) => bal = v,
            _ => panic!("unexpected attribute {i}: {a:?}"),
        }
    });
    (id, bal)
}

/// Creates and commits table `name` with rows `(id, balance)`.
pub fn create(db: &Arc<Database>, name: &str, rows: impl IntoIterator<Item = (i32, i64)>) -> u32 {
    let mut txn = rc(db);
    let t = txn
        .create_table(
            name,
            vec![
                ColumnDef {
                    name: "id".into(),
                    ty: SqlType::Int4,
                    not_null: true,
                    default: None,
                },
                ColumnDef {
                    name: "balance".into(),
                    ty: SqlType::Int8,
                    not_null: true,
                    default: None,
                },
            ],
        )
        .unwrap();
    for (id, bal) in rows {
        txn.insert(t.oid, &row(id, bal)).unwrap();
    }
    txn.commit().unwrap();
    t.oid
}

/// Every row the transaction's next statement sees: (tid, id, balance).
pub fn scan(txn: &mut Transaction, rel: u32) -> Vec<(Tid, i32, i64)> {
    let snap = txn.snapshot();
    let db = txn.database().clone();
    let mut vis = Visibility::new(&db.txn, snap);
    let mut out = Vec::new();
    for b in 0..db.nblocks(rel).unwrap() {
        heap::scan_page(&db.pool, rel, b, &mut vis, |item, t| {
            let (id, bal) = decode(t);
            out.push((Tid { block: b, item }, id, bal));
        })
        .unwrap();
    }
    out
}

pub fn balances(txn: &mut Transaction, rel: u32) -> Vec<(i32, i64)> {
    let mut v: Vec<(i32, i64)> = scan(txn, rel).into_iter().map(|(_, i, b)| (i, b)).collect();
    v.sort();
    v
}

pub fn find(txn: &mut Transaction, rel: u32, id: i32) -> Option<(Tid, i64)> {
    scan(txn, rel)
        .into_iter()
        .find(|r| r.1 == id)
        .map(|(t, _, b)| (t, b))
}

/// `UPDATE rel SET balance = balance + delta WHERE id = id` as the SQL layer
/// runs it: READ COMMITTED re-checks the newest version of a concurrently
/// updated row (EvalPlanQual); REPEATABLE READ fails with 40001. Returns
/// the number of rows updated. Ends the command.
pub fn add(txn: &mut Transaction, rel: u32, id: i32, delta: i64) -> Result<u64, StorageError> {
    // The statement's snapshot lives until the statement is done with the
    // rows it found (it holds back pruning of the versions it follows).
    let _statement = txn.snapshot();
    let Some((mut tid, mut bal)) = find(txn, rel, id) else {
        return Ok(0);
    };
    let n = loop {
        let kind = UpdateKind {
            key_update: false,
            hot_allowed: true,
        };
        let out = txn.update(rel, tid, &row(id, bal + delta), kind, RowWait::Block)?;
        match out.result {
            TmResult::Ok => break 1,
            TmResult::Updated { .. } if txn.isolation() == IsolationLevel::ReadCommitted => {
                match txn.lock_latest(rel, tid, RowLockMode::NoKeyUpdate, RowWait::Block)? {
                    LatestOutcome::Locked { tid: t, tuple } => {
                        let (newest_id, newest_bal) = decode(&tuple);
                        if newest_id != id {
                            break 0; // the WHERE clause no longer holds
                        }
                        (tid, bal) = (t, newest_bal);
                    }
                    _ => break 0,
                }
            }
            TmResult::Deleted if txn.isolation() == IsolationLevel::ReadCommitted => break 0,
            TmResult::Updated { .. } => return Err(serialization_failure(false)),
            TmResult::Deleted => return Err(serialization_failure(true)),
            TmResult::SelfModified { .. } | TmResult::Invisible => break 0,
            TmResult::WouldBlock => unreachable!("waits"),
        }
    };
    txn.next_command()?;
    Ok(n)
}

/// Copies a data directory (a crashed process still holds the original's
/// lock).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if e.file_name() == "tusk.lock" {
            continue;
        }
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// Leaves `db` as a crash would: WAL durable up to where it was flushed,
/// dirty pages never written, nothing shut down.
pub fn crash(db: Arc<Database>) {
    std::mem::forget(db);
}
