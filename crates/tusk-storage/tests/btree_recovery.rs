//! Crash recovery of btrees with variable-length, multi-column keys: the
//! `CreateIndex` record of a unique two-column index and a plain one, their
//! bulk builds, insertions with splits (`BtreeInsert`, `BtreePage`),
//! VACUUM's removals (`BtreeDelete`) and the insertions of a transaction
//! still running at the crash — replayed with and without full-page
//! writes. Afterwards each index leads to every visible row exactly once,
//! in key order, and the unique index still refuses a duplicate.

mod common;

use common::*;
use std::sync::Arc;
use tusk_storage::btree::{
    BuildOutcome, Datum, Direction, EncodedKey, Index, InsertOutcome, ScanBounds,
};
use tusk_storage::catalog::{IndexColumn, IndexKind};
use tusk_storage::heap::{self, Tid, Visibility};
use tusk_storage::tuple::{self, Attr, TupleBuilder};
use tusk_storage::{
    ColumnDef, DataType, Database, IndexDef, RowWait, SqlType, TableDef, TmResult, Transaction,
};

/// Row `n`: a text of 1 to 300 bytes that repeats every 997 rows, and `n`.
fn values(n: u32) -> (String, i32) {
    let h = (n % 997).wrapping_mul(2_654_435_761) >> 7;
    let len = 1 + (h % 300) as usize;
    let c = (b'a' + (h % 26) as u8) as char;
    (
        format!("{}{}", c.to_string().repeat(len), n % 997),
        n as i32,
    )
}

fn row(n: u32) -> Vec<u8> {
    let (a, b) = values(n);
    let mut tb = TupleBuilder::new();
    tb.begin();
    tb.push_text(a.as_bytes());
    tb.push_i32(b);
    tb.finish(0).to_vec()
}

fn decode(t: &[u8]) -> (String, i32) {
    let mut out = (String::new(), 0);
    tuple::walk(t, &[DataType::Text, DataType::Int4], 1, |i, a| match a {
        Attr::Text(s) if i == 0 => out.0 = String::from_utf8(s.to_vec()).unwrap(),
        Attr::Int4(v) => out.1 = v,
        _ => panic!("unexpected {a:?}"),
    });
    out
}

fn insert(txn: &mut Transaction, table: &TableDef, defs: &[IndexDef], n: u32) -> InsertOutcome {
    let db = txn.database().clone();
    let t = row(n);
    let tid = txn.insert(table.oid, &t).unwrap();
    let mut key = EncodedKey::default();
    let mut outcome = InsertOutcome::Inserted;
    for def in defs {
        let index = Index::open(&db, def, table);
        index.key_of_tuple(&t, &mut key).unwrap();
        let o = index.insert(&key, tid, txn).unwrap();
        if o != InsertOutcome::Inserted {
            outcome = o;
        }
    }
    outcome
}

/// Every visible row reached through `def`, in index order, checking that
/// the keys ascend.
fn through_index(db: &Arc<Database>, table: &TableDef, def: &IndexDef) -> Vec<(String, i32)> {
    let index = Index::open(db, def, table);
    let mut c = index.scan(ScanBounds::all(), Direction::Forward).unwrap();
    let mut tids = Vec::new();
    while c.next_batch(&db.pool, &mut tids, 100).unwrap() {}
    let mut vis = Visibility::new(&db.txn, db.txn.snapshot());
    let mut rows = Vec::new();
    let mut last: Option<Vec<u8>> = None;
    let mut key = EncodedKey::default();
    for tid in tids {
        heap::fetch(&db.pool, table.oid, &[tid], &mut vis, |_, t| {
            index.key_of_tuple(t, &mut key).unwrap();
            assert!(last.as_ref().is_none_or(|l| *l <= key.bytes), "keys ascend");
            last = Some(key.bytes.clone());
            rows.push(decode(t));
        })
        .unwrap();
    }
    rows
}

fn replay_and_check(full_page_writes: &str) {
    let dir = tempfile::tempdir().unwrap();
    let crashed = dir.path().join("crashed");
    let settings = [
        ("full_page_writes", full_page_writes),
        ("shared_buffers", "512kB"),
    ];
    let db = open(&crashed, &settings);
    let mut t = rc(&db);
    let cols = vec![
        ColumnDef::new("a", SqlType::Text, false),
        ColumnDef::new("b", SqlType::Int4, false),
    ];
    let table = t.create_table("u", cols).unwrap();
    for n in 0..500 {
        t.insert(table.oid, &row(n)).unwrap();
    }
    t.next_command().unwrap();
    let unique = t
        .create_index(
            &table,
            "u_b_a_key",
            vec![IndexColumn::desc(1), IndexColumn::asc(0)],
            IndexKind::UniqueConstraint,
        )
        .unwrap();
    let plain = t
        .create_index(
            &table,
            "u_a_idx",
            vec![IndexColumn::asc(0)],
            IndexKind::Plain,
        )
        .unwrap();
    for def in [&unique, &plain] {
        let (snap, xid) = (t.snapshot(), t.xid().unwrap());
        let out = Index::open(&db, def, &table)
            .build(snap, xid, 1 << 20)
            .unwrap();
        assert_eq!(out, BuildOutcome::Built);
    }
    t.commit().unwrap();
    db.checkpoint().unwrap();
    let defs = [unique.clone(), plain.clone()];

    // Committed: insertions that split pages of both indexes.
    let mut t = rc(&db);
    for n in 500..3000 {
        assert_eq!(insert(&mut t, &table, &defs, n), InsertOutcome::Inserted);
    }
    t.commit().unwrap();
    // Committed: a third deleted, then VACUUM removes their entries.
    let mut t = rc(&db);
    let mut vis_rows = Vec::new();
    {
        let snap = t.snapshot();
        let mut vis = Visibility::new(&db.txn, snap);
        for b in 0..db.nblocks(table.oid).unwrap() {
            heap::scan_page(&db.pool, table.oid, b, &mut vis, |item, tup| {
                vis_rows.push((Tid { block: b, item }, decode(tup)));
            })
            .unwrap();
        }
    }
    for (tid, (_, b)) in &vis_rows {
        if b % 3 == 0 {
            assert_eq!(
                t.delete(table.oid, *tid, RowWait::Block).unwrap(),
                TmResult::Ok
            );
        }
    }
    t.commit().unwrap();
    let w = db.txn.begin_write().unwrap();
    let report = tusk_storage::vacuum::vacuum_table(&db, &table, &defs, w.xid(), 64 << 20).unwrap();
    db.commit(w).unwrap();
    assert!(!report.verbose_messages("t").is_empty());
    // Running at the crash: rows with new keys, and with keys that
    // duplicate committed rows' keys in the plain index only.
    let mut running = rc(&db);
    for n in 3000..3100 {
        insert(&mut running, &table, &defs, n);
    }
    // Committed after it, so its records are durable too.
    let mut t = rc(&db);
    insert(&mut t, &table, &defs, 5000);
    t.commit().unwrap();
    db.wal.flush_all().unwrap();

    let run = dir.path().join("run");
    copy_dir(&crashed, &run);
    std::mem::forget(running);
    crash(db);

    let db = open(&run, &settings);
    assert!(db.recovery_stats().records > 0);
    let cat = db.catalog_snapshot();
    assert_eq!(cat.index("u_b_a_key"), Some(&unique));
    assert_eq!(cat.index("u_a_idx"), Some(&plain));
    let mut want: Vec<(String, i32)> = (0..3000)
        .chain([5000])
        .filter(|n| n % 3 != 0 || *n == 5000)
        .map(values)
        .collect();
    for def in [&unique, &plain] {
        let mut got = through_index(&db, &table, def);
        assert_eq!(got.len(), want.len(), "{}", def.name);
        got.sort();
        want.sort();
        assert_eq!(got, want, "{}", def.name);
    }
    // The order of the unique index: b descending.
    let bs: Vec<i32> = through_index(&db, &table, &unique)
        .into_iter()
        .map(|r| r.1)
        .collect();
    assert!(bs.windows(2).all(|w| w[0] > w[1]));
    // Unique checks: a committed key conflicts; the keys of the
    // transaction the crash aborted are free.
    let mut t = rc(&db);
    let index = Index::open(&db, &unique, &table);
    let (a, b) = values(1);
    let key = index
        .key_of(&[Datum::Int4(b), Datum::Text(a.as_bytes())])
        .unwrap();
    assert!(index.find_conflict(&key, &mut t).unwrap().is_some());
    assert_eq!(insert(&mut t, &table, &defs, 3050), InsertOutcome::Inserted);
    assert!(matches!(
        insert(&mut t, &table, &defs, 2),
        InsertOutcome::Conflict { .. }
    ));
}

#[test]
fn btrees_replay_with_full_page_writes() {
    replay_and_check("on");
}

#[test]
fn btrees_replay_without_full_page_writes() {
    replay_and_check("off");
}
