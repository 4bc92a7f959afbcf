//! TPC-B-like transactions at the storage API: what the transaction
//! machinery costs before any SQL, and how group commit behaves under load.
//!
//! Tables as pgbench's (`accounts` 100 000 rows per scale unit, `tellers` 10,
//! `branches` 1, `history` empty), each with a btree on its id, and
//! `--clients` threads running pgbench's default script for `--seconds`:
//!
//! ```text
//! UPDATE accounts SET abalance = abalance + :delta WHERE aid = :aid;
//! SELECT abalance FROM accounts WHERE aid = :aid;
//! UPDATE tellers  SET tbalance = tbalance + :delta WHERE tid = :tid;
//! UPDATE branches SET bbalance = bbalance + :delta WHERE bid = :bid;
//! INSERT INTO history (tid, bid, aid, delta) VALUES (...);
//! ```
//!
//! READ COMMITTED, each UPDATE with its re-check of a concurrently updated
//! row, HOT updates (no indexed column changes), deadlocks retried. Prints
//! transactions per second, WAL syncs per commit and how many commits rode
//! on another session's flush, and checks that the balances of the three
//! tables agree with the history.
//!
//! ```text
//! cargo run --release -p tusk-storage --example txn_bench -- \
//!     [--dir DIR] [--clients 8] [--seconds 10] [--scale 1] [--synchronous-commit on]
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tusk_storage::btree::{Btree, Datum, Direction, IndexBuild, KeyEncoder, KeyType, ScanBounds};
use tusk_storage::catalog::{IndexColumn, IndexKind};
use tusk_storage::heap::{self, HeapInserter, Tid, Visibility};
use tusk_storage::tuple::{self, Attr, TupleBuilder};
use tusk_storage::{
    ColumnDef, DataType, Database, LatestOutcome, RowLockMode, RowWait, SqlType, StorageError,
    TmResult, Transaction, TxnOptions, UpdateKind,
};

struct Table {
    oid: u32,
    index: u32,
}

fn columns(names: &[&str]) -> Vec<ColumnDef> {
    names
        .iter()
        .map(|n| ColumnDef {
            name: n.to_string(),
            ty: SqlType::Int4,
            not_null: true,
            default: None,
        })
        .collect()
}

fn row(vals: &[i32]) -> Vec<u8> {
    let mut b = TupleBuilder::new();
    b.begin();
    for &v in vals {
        b.push_i32(v);
    }
    b.finish(0).to_vec()
}

fn decode(t: &[u8], n: usize) -> Vec<i32> {
    let types = vec![DataType::Int4; n];
    let mut out = vec![0; n];
    tuple::walk(t, &types, n - 1, |i, a| {
        if let Attr::Int4(v) = a {
            out[i] = v;
        }
    });
    out
}

/// Creates table `name` with `rows` rows `(id, 0, ...)` and a btree on id.
fn create(db: &Arc<Database>, name: &str, cols: &[&str], rows: i32) -> Table {
    let mut txn = db.begin(TxnOptions::default());
    let t = txn.create_table(name, columns(cols)).unwrap();
    let xid = txn.xid().unwrap();
    let cid = txn.command_id_for_write();
    let mut ins = HeapInserter::new(&db.pool, t.oid);
    let mut b = TupleBuilder::new();
    let mut keys = Vec::new();
    for id in 1..=rows {
        b.begin();
        b.push_i32(id);
        for _ in 1..cols.len() {
            b.push_i32(0);
        }
        let tid = ins.insert(b.finish_cid(xid, cid)).unwrap();
        keys.push((id as i64, tid.to_u64()));
    }
    drop(ins);
    txn.count_inserts(t.oid, rows as u64);
    let idx = txn
        .create_index(
            &t,
            &format!("{name}_pkey"),
            vec![IndexColumn::asc(0)],
            IndexKind::PrimaryKey,
        )
        .unwrap();
    build_index(db, idx.oid, &keys, xid);
    txn.commit().unwrap();
    Table {
        oid: t.oid,
        index: idx.oid,
    }
}

/// The visible version of row `id` through the index.
fn lookup(txn: &mut Transaction, t: &Table, id: i32, ncols: usize) -> Option<(Tid, Vec<i32>)> {
    let db = txn.database().clone();
    // The snapshot comes first: index entries added after it lead to
    // versions it does not see anyway.
    let snapshot = txn.snapshot();
    let mut cursor = Btree::new(&db.pool, t.index)
        .scan(id_bounds(id), Direction::Forward)
        .unwrap();
    let mut tids = Vec::new();
    while cursor.next_batch(&db.pool, &mut tids, 16).unwrap() {}
    let mut vis = Visibility::new(&db.txn, snapshot);
    let mut found = None;
    heap::fetch(&db.pool, t.oid, &tids, &mut vis, |tid, tup| {
        found = Some((tid, decode(tup, ncols)))
    })
    .unwrap();
    found
}

/// `UPDATE t SET col1 = col1 + delta WHERE id = id` (READ COMMITTED).
fn add(
    txn: &mut Transaction,
    t: &Table,
    id: i32,
    ncols: usize,
    delta: i32,
) -> Result<(), StorageError> {
    let _statement = txn.snapshot();
    let Some((mut tid, mut vals)) = lookup(txn, t, id, ncols) else {
        diagnose(txn, t, id);
        panic!("row {id} of relation {} not found through its index", t.oid);
    };
    loop {
        let mut new = vals.clone();
        new[1] += delta;
        let kind = UpdateKind {
            key_update: false,
            hot_allowed: true,
        };
        let out = txn.update(t.oid, tid, &row(&new), kind, RowWait::Block)?;
        match out.result {
            TmResult::Ok => {
                if !out.hot {
                    let xid = txn.xid()?;
                    let db = txn.database().clone();
                    Btree::new(&db.pool, t.index).insert(
                        &id_key(id).bytes,
                        out.new_tid.unwrap(),
                        xid,
                    )?;
                }
                return txn.next_command();
            }
            TmResult::Updated { .. } => {
                match txn.lock_latest(t.oid, tid, RowLockMode::NoKeyUpdate, RowWait::Block)? {
                    LatestOutcome::Locked { tid: newest, tuple } => {
                        (tid, vals) = (newest, decode(&tuple, ncols))
                    }
                    o => panic!("row vanished: {o:?}"),
                }
            }
            r => panic!("unexpected {r:?}"),
        }
    }
}

/// Prints what the index and the heap hold for row `id`.
fn diagnose(txn: &mut Transaction, t: &Table, id: i32) {
    use tusk_storage::page;
    let db = txn.database().clone();
    let mut cursor = Btree::new(&db.pool, t.index)
        .scan(id_bounds(id), Direction::Forward)
        .unwrap();
    let mut tids = Vec::new();
    while cursor.next_batch(&db.pool, &mut tids, 16).unwrap() {}
    let snap = txn.snapshot();
    eprintln!("snapshot {snap:?}; index entries {tids:?}");
    for tid in tids {
        let buf = db.pool.read_buffer(t.oid, tid.block).unwrap();
        let g = buf.lock_shared();
        let p = g.page();
        let mut item = tid.item;
        for _ in 0..20 {
            let (state, off, len) = page::item(p, item);
            eprint!("  ({},{}) {state:?}", tid.block, item);
            if state == page::ItemState::Redirect {
                item = off as u16;
                eprintln!(" -> {item}");
                continue;
            }
            if state != page::ItemState::Normal {
                eprintln!();
                break;
            }
            let tup = &p[off..off + len];
            let x = tuple::XmaxState::of(tup);
            eprintln!(
                " xmin {} ({:?}) xmax {} ({:?}) mask {:#x} ctid {:?} vals {:?}",
                tuple::xmin(tup),
                db.txn.status(tuple::xmin(tup)),
                x.xmax,
                db.txn.status(x.xmax),
                x.infomask,
                x.ctid,
                decode(tup, 2)
            );
            if x.infomask & tuple::HOT_UPDATED == 0 {
                break;
            }
            item = x.ctid.1;
        }
    }
    // Every visible version of the row, by a scan of the whole table.
    let mut vis = Visibility::new(&db.txn, snap);
    for b in 0..db.nblocks(t.oid).unwrap() {
        heap::scan_page(&db.pool, t.oid, b, &mut vis, |item, tup| {
            if decode(tup, 1)[0] == id {
                eprintln!("  visible: ({b},{item}) mask {:#x}", tuple::infomask(tup));
            }
        })
        .unwrap();
    }
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let clients: usize = arg(&args, "--clients", 8);
    let seconds: u64 = arg(&args, "--seconds", 10);
    let scale: i32 = arg(&args, "--scale", 1);
    let sync: String = arg(&args, "--synchronous-commit", "on".to_string());
    let base: String = arg(&args, "--dir", String::new());
    let tmp = tempfile::tempdir().unwrap();
    let dir = if base.is_empty() {
        tmp.path().to_path_buf()
    } else {
        std::path::PathBuf::from(base).join("txn_bench")
    };
    let _ = std::fs::remove_dir_all(&dir);
    let settings: Vec<(String, String)> = [
        ("shared_buffers", "128MB"),
        ("huge_pages", "off"),
        ("synchronous_commit", sync.as_str()),
        ("autovacuum_naptime", "5s"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let db = Database::open(&dir, &settings).unwrap();
    let accounts = Arc::new(create(
        &db,
        "accounts",
        &["aid", "abalance", "bid"],
        100_000 * scale,
    ));
    let tellers = Arc::new(create(
        &db,
        "tellers",
        &["tid", "tbalance", "bid"],
        10 * scale,
    ));
    let branches = Arc::new(create(&db, "branches", &["bid", "bbalance"], scale));
    let history = {
        let mut txn = db.begin(TxnOptions::default());
        let t = txn
            .create_table("history", columns(&["tid", "bid", "aid", "delta"]))
            .unwrap();
        txn.commit().unwrap();
        t.oid
    };
    db.checkpoint().unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let (done, retries) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let stats = &db.wal.stats;
    let (syncs0, commits0, grouped0) = (
        stats.syncs.load(Ordering::Relaxed),
        stats.commits.load(Ordering::Relaxed),
        stats.commits_grouped.load(Ordering::Relaxed),
    );
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (db, stop, done, retries) =
                (db.clone(), stop.clone(), done.clone(), retries.clone());
            let (accounts, tellers, branches) =
                (accounts.clone(), tellers.clone(), branches.clone());
            std::thread::spawn(move || {
                let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (c as u64 + 1);
                let mut rand = |n: i32| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % n as u64) as i32 + 1
                };
                while !stop.load(Ordering::Relaxed) {
                    let (aid, tid, bid) = (rand(100_000 * scale), rand(10 * scale), rand(scale));
                    let delta = rand(10_000) - 5_000;
                    loop {
                        let mut txn = db.begin(TxnOptions::default());
                        let r = (|| -> Result<(), StorageError> {
                            add(&mut txn, &accounts, aid, 3, delta)?;
                            lookup(&mut txn, &accounts, aid, 3);
                            add(&mut txn, &tellers, tid, 3, delta)?;
                            add(&mut txn, &branches, bid, 2, delta)?;
                            txn.insert(history, &row(&[tid, bid, aid, delta]))?;
                            Ok(())
                        })();
                        match r {
                            Ok(()) => {
                                txn.commit().unwrap();
                                break;
                            }
                            Err(e) if e.sqlstate() == Some("40P01") => {
                                retries.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("{e}"),
                        }
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let n = done.load(Ordering::Relaxed);
    let syncs = stats.syncs.load(Ordering::Relaxed) - syncs0;
    let commits = stats.commits.load(Ordering::Relaxed) - commits0;
    let grouped = stats.commits_grouped.load(Ordering::Relaxed) - grouped0;
    println!(
        "clients {clients}, scale {scale}, synchronous_commit {sync}: {n} transactions in {elapsed:.1} s = {:.0} tps",
        n as f64 / elapsed
    );
    println!(
        "WAL: {commits} flushed commits, {syncs} syncs ({:.3} per commit), {grouped} commits rode on another session's flush; {} deadlock retries",
        if commits > 0 { syncs as f64 / commits as f64 } else { 0.0 },
        retries.load(Ordering::Relaxed)
    );
    let a = db.stats.table(accounts.oid);
    println!(
        "accounts: {} updates, {} HOT; {} pages (tellers {}, branches {}, history {})",
        a.n_tup_upd,
        a.n_tup_hot_upd,
        db.nblocks(accounts.oid).unwrap(),
        db.nblocks(tellers.oid).unwrap(),
        db.nblocks(branches.oid).unwrap(),
        db.nblocks(history).unwrap()
    );
    // Consistency: the three balances and the history agree.
    let mut txn = db.begin(TxnOptions::default());
    let snap = txn.snapshot();
    let sum = |rel: u32, col: usize, ncols: usize| -> i64 {
        let mut vis = Visibility::new(&db.txn, snap.clone());
        let mut s = 0i64;
        for b in 0..db.nblocks(rel).unwrap() {
            heap::scan_page(&db.pool, rel, b, &mut vis, |_, t| {
                s += decode(t, ncols)[col] as i64
            })
            .unwrap();
        }
        s
    };
    let (sa, st, sb, sh) = (
        sum(accounts.oid, 1, 3),
        sum(tellers.oid, 1, 3),
        sum(branches.oid, 1, 2),
        sum(history, 3, 4),
    );
    println!("sum(abalance) {sa} = sum(tbalance) {st} = sum(bbalance) {sb} = sum(delta) {sh}");
    assert!(sa == st && st == sb && sb == sh, "balances disagree");
    drop(txn);
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
