//! Recovery: abort records, asynchronous reads into buffers, and replay with
//! io_uring prefetching on a relation much larger than the buffer pool.

use std::path::Path;
use std::sync::Arc;
use tusk_storage::heap::{self, HeapInserter, Tid, Visibility};
use tusk_storage::tuple::TupleBuilder;
use tusk_storage::uring::Ring;
use tusk_storage::wal::{RecordType, WalReader};
use tusk_storage::{ColumnDef, Database, SqlType, TableDef};

fn open(dir: &Path, extra: &[(&str, &str)]) -> Arc<Database> {
    let mut settings: Vec<(String, String)> = vec![
        ("shared_buffers".into(), "256kB".into()),
        ("huge_pages".into(), "off".into()),
        ("full_page_writes".into(), "off".into()),
    ];
    settings.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Database::open(dir, &settings).unwrap()
}

/// Creates table `t (id int8)` with `rows` rows and checkpoints.
fn create_filled(db: &Database, rows: i64) -> u32 {
    let table = TableDef {
        oid: db.catalog_mut().allocate_oid().unwrap(),
        name: "t".into(),
        columns: vec![ColumnDef {
            name: "id".into(),
            ty: SqlType::Int8,
            not_null: false,
            default: None,
        }],
        checks: Vec::new(),
        view: None,
        access_method: Default::default(),
        sequence: None,
    };
    let txn = db.txn.begin_write().unwrap();
    db.log_create_table(&txn, &table).unwrap();
    db.smgr.create(table.oid).unwrap();
    let mut ins = HeapInserter::new(&db.pool, table.oid);
    let mut tb = TupleBuilder::new();
    for id in 0..rows {
        tb.begin();
        tb.push_i64(id);
        ins.insert(tb.finish(txn.xid())).unwrap();
    }
    drop(ins);
    db.catalog_mut().add_table(table.clone()).unwrap();
    db.commit(txn).unwrap();
    db.checkpoint().unwrap();
    table.oid
}

/// Visible tuples per block.
fn visible(db: &Database, oid: u32) -> Vec<usize> {
    let mut vis = Visibility::new(&db.txn, db.txn.snapshot());
    (0..db.nblocks(oid).unwrap())
        .map(|b| {
            let mut n = 0;
            heap::scan_page(&db.pool, oid, b, &mut vis, |_, _| n += 1).unwrap();
            n
        })
        .collect()
}

/// Leaves `db` as a crash would: WAL durable, dirty pages never written.
fn crash(db: Arc<Database>) {
    db.wal.flush_all().unwrap();
    std::mem::forget(db);
}

#[test]
fn failed_writer_logs_an_abort_record_and_stays_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(&dir.path().join("crashed"), &[]);
    let oid = create_filled(&db, 100);
    let redo = db.wal.redo_lsn();
    // A writer that changes a page and then fails: dropped without commit.
    let failed = {
        let txn = db.txn.begin_write().unwrap();
        assert!(heap::delete(&db.pool, oid, Tid { block: 0, item: 1 }, txn.xid()).unwrap());
        txn.xid()
    };
    // A writer that fails before writing anything logs nothing.
    let quiet = db.txn.begin_write().unwrap().xid();
    // A later committed change.
    let txn = db.txn.begin_write().unwrap();
    assert!(heap::delete(&db.pool, oid, Tid { block: 0, item: 2 }, txn.xid()).unwrap());
    db.commit(txn).unwrap();
    db.wal.flush_all().unwrap();

    let mut reader = WalReader::new(&dir.path().join("crashed/pg_wal"), redo);
    let mut aborts = vec![];
    while let Some(rec) = reader.next_record().unwrap() {
        if rec.kind == RecordType::Abort {
            aborts.push(rec.xid);
        }
    }
    assert_eq!(aborts, vec![failed]);
    assert_ne!(failed, quiet);
    crash(db);

    // The crashed process still holds the directory's lock: restart a copy.
    let run = dir.path().join("run");
    copy_dir(&dir.path().join("crashed"), &run);
    let db = open(&run, &[]);
    assert_eq!(db.recovery_stats().aborted, 1);
    assert!(!db.txn.is_committed(failed));
    // Row 1's delete was aborted, row 2's committed.
    let mut vis = Visibility::new(&db.txn, db.txn.snapshot());
    let mut items = vec![];
    heap::scan_page(&db.pool, oid, 0, &mut vis, |item, _| items.push(item)).unwrap();
    assert!(items.contains(&1) && !items.contains(&2), "{items:?}");
}

/// Random deletes over a relation 8x the pool, crash, evict, recover with
/// each prefetch method; every method must replay the whole WAL and rebuild
/// the same contents, keep at most `maintenance_io_concurrency` reads in
/// flight, and the io_uring methods must have read blocks asynchronously.
/// One I/O thread (concurrency 1) is often still busy when redo has caught
/// up with the decoder: redo must then go on decoding, not stop early.
#[test]
fn replay_with_each_prefetch_method_gives_the_same_pages() {
    let dir = tempfile::tempdir().unwrap();
    let crashed = dir.path().join("crashed");
    let db = open(&crashed, &[]);
    let oid = create_filled(&db, 100_000);
    let nblocks = db.nblocks(oid).unwrap();
    assert!(nblocks as usize >= 8 * db.pool.nbuffers());
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..3000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let tid = Tid {
            block: (x % nblocks as u64) as u32,
            item: 1 + (x >> 40) as u16 % 100,
        };
        let txn = db.txn.begin_write().unwrap();
        heap::delete(&db.pool, oid, tid, txn.xid()).unwrap();
        db.commit(txn).unwrap();
    }
    let expected = visible(&db, oid);
    crash(db);

    let methods: [&[(&str, &str)]; 6] = [
        &[("recovery_prefetch", "off")],
        &[("tusk.recovery_prefetch_method", "fadvise")],
        &[("tusk.recovery_prefetch_method", "threads")],
        &[
            ("tusk.recovery_prefetch_method", "io_uring"),
            ("tusk.recovery_direct_io", "off"),
        ],
        &[
            ("tusk.recovery_prefetch_method", "io_uring"),
            ("tusk.recovery_direct_io", "on"),
            ("maintenance_io_concurrency", "32"),
        ],
        &[
            ("tusk.recovery_prefetch_method", "threads"),
            ("maintenance_io_concurrency", "1"),
        ],
    ];
    let mut replayed = None;
    for (i, settings) in methods.iter().enumerate() {
        let run = dir.path().join(format!("run{i}"));
        copy_dir(&crashed, &run);
        tusk_storage::smgr::Smgr::new(run.join("base"))
            .evict_os_cache()
            .unwrap();
        eprintln!("recovering with {settings:?}");
        let db = open(&run, settings);
        let s = db.recovery_stats().clone();
        assert_eq!(visible(&db, oid), expected, "{settings:?}");
        assert!(s.records >= 6000, "{settings:?}: {}", s.records);
        let whole = *replayed.get_or_insert((s.records, s.redo_end));
        assert_eq!((s.records, s.redo_end), whole, "{settings:?}");
        let concurrency = settings
            .iter()
            .find(|(k, _)| *k == "maintenance_io_concurrency")
            .map_or(10.0, |(_, v)| v.parse().unwrap());
        assert!(s.io_depth <= concurrency, "{settings:?}: {}", s.summary());
        if i > 0 {
            assert!(s.prefetch > 0, "{settings:?}: {}", s.summary());
        }
        if settings.contains(&("tusk.recovery_prefetch_method", "io_uring")) {
            let want = if Ring::available() {
                "io_uring"
            } else {
                "fadvise"
            };
            assert_eq!(s.method, want);
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else if e.file_name() != "tusk.lock" {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

/// The buffer manager's split read: a claimed buffer makes other readers
/// wait, a completed read is checked, a bad page is refused and read again.
#[test]
fn async_read_is_verified_at_completion() {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let oid = create_filled(&db, 30_000);
    // Push block 3 out of the pool (each pass lowers its usage count).
    for _ in 0..6 {
        for b in 10..db.nblocks(oid).unwrap() {
            drop(db.pool.read_buffer(oid, b).unwrap());
        }
    }
    assert!(!db.pool.is_cached(oid, 3));
    let file = std::fs::File::open(db.smgr.path(oid)).unwrap();
    let mut good = vec![0u8; 8192];
    file.read_exact_at(&mut good, 3 * 8192).unwrap();

    // A read that delivers a damaged page fails and leaves the block unread.
    let read = db
        .pool
        .start_async_read(oid, 3)
        .unwrap()
        .expect("not cached");
    let mut bad = good.clone();
    bad[4000] ^= 0xff;
    // SAFETY: the claimed buffer is ours until finish_async_read.
    unsafe { std::ptr::copy_nonoverlapping(bad.as_ptr(), read.page_ptr(), 8192) };
    let err = db.pool.finish_async_read(read, Ok(8192)).unwrap_err();
    assert!(err.to_string().contains("invalid page in block 3"), "{err}");
    assert!(!db.pool.is_cached(oid, 3));

    // A short read fails too.
    let read = db.pool.start_async_read(oid, 3).unwrap().unwrap();
    assert!(db.pool.finish_async_read(read, Ok(4096)).is_err());

    // A good read makes the page valid; it is then a hit.
    let read = db.pool.start_async_read(oid, 3).unwrap().unwrap();
    // SAFETY: as above.
    unsafe { std::ptr::copy_nonoverlapping(good.as_ptr(), read.page_ptr(), 8192) };
    db.pool.finish_async_read(read, Ok(8192)).unwrap();
    assert!(db.pool.is_cached(oid, 3));
    assert!(db.pool.start_async_read(oid, 3).unwrap().is_none());
    assert_eq!(visible(&db, oid)[3], visible(&db, oid)[4]);
}

/// The background writer's step writes the dirty buffers that clock sweep
/// will take next, and only once.
#[test]
fn clean_ahead_writes_dirty_buffers_once() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &[]);
    let oid = create_filled(&db, 30_000);
    let txn = db.txn.begin_write().unwrap();
    for block in 0..8 {
        assert!(heap::delete(&db.pool, oid, Tid { block, item: 1 }, txn.xid()).unwrap());
    }
    db.commit(txn).unwrap();
    let before = db.pool.stats.writes.load(Ordering::Relaxed);
    let written = db.pool.clean_ahead(db.pool.nbuffers()).unwrap();
    assert_eq!(written, 8);
    assert_eq!(db.pool.stats.writes.load(Ordering::Relaxed), before + 8);
    assert_eq!(db.pool.clean_ahead(db.pool.nbuffers()).unwrap(), 0);
    // The pages on disk now carry the deletes.
    let file = std::fs::read(db.smgr.path(oid)).unwrap();
    for block in 0..8usize {
        let page = &file[block * 8192..(block + 1) * 8192];
        assert_eq!(tusk_storage::page::lsn(page), {
            let buf = db.pool.read_buffer(oid, block as u32).unwrap();
            let g = buf.lock_shared();
            tusk_storage::page::lsn(g.page())
        });
    }
}

/// A bulk load (COPY's path) into a logged table: one page image per page.
/// After a crash, the committed load is back from the WAL alone and an
/// uncommitted one stays invisible.
#[test]
fn bulk_loaded_pages_are_restored_from_their_images() {
    use tusk_storage::bulk::BulkInserter;
    let dir = tempfile::tempdir().unwrap();
    let crashed = dir.path().join("crashed");
    let db = open(&crashed, &[]);
    let oid = create_filled(&db, 0);
    let load = |rows: i64, commit: bool| {
        let txn = db.txn.begin_write().unwrap();
        let mut bulk = BulkInserter::new(&db.pool, oid, txn.xid());
        assert!(bulk.logged());
        let mut tb = TupleBuilder::new();
        for id in 0..rows {
            tb.begin();
            tb.push_i64(id);
            bulk.insert(tb.finish(txn.xid())).unwrap();
        }
        bulk.finish().unwrap();
        let pages = bulk.pages;
        if commit {
            db.commit(txn).unwrap();
        }
        pages
    };
    let committed = load(3000, true);
    let before = db.wal.insert_lsn();
    let aborted = load(1000, false);
    assert!(committed >= 10 && aborted >= 3);
    db.wal.flush_all().unwrap();
    let mut reader = WalReader::new(&crashed.join("pg_wal"), before);
    let mut images = 0;
    while let Some(rec) = reader.next_record().unwrap() {
        if rec.kind == RecordType::HeapPage {
            assert!(rec.fpi);
            images += 1;
        }
    }
    assert_eq!(images, aborted, "one record per page");
    crash(db);

    let run = dir.path().join("run");
    copy_dir(&crashed, &run);
    let db = open(&run, &[]);
    let counts = visible(&db, oid);
    assert_eq!(counts.iter().sum::<usize>(), 3000);
    assert_eq!(counts.len() as u64, committed + aborted);
}
