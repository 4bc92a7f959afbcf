//! Buffer pool under pressure: a pool much smaller than the relation, several
//! threads reading random blocks, each page checked against what was written.

use std::sync::Arc;
use tusk_storage::heap::{self, HeapInserter, Visibility};
use tusk_storage::tuple::{self, Attr, TupleBuilder};
use tusk_storage::{DataType, Database};

fn open_small(dir: &std::path::Path) -> Arc<Database> {
    // 16 buffers: every scan of the test relation evicts constantly.
    Database::open(
        dir,
        &[
            ("shared_buffers".into(), "128kB".into()),
            ("huge_pages".into(), "off".into()),
        ],
    )
    .unwrap()
}

/// Fills relation `oid` with `rows` tuples (i, i*2) and commits.
fn fill(db: &Database, oid: u32, rows: i32) {
    db.smgr.create(oid).unwrap();
    let txn = db.txn.begin_write().unwrap();
    let mut ins = HeapInserter::new(&db.pool, oid);
    let mut tb = TupleBuilder::new();
    for i in 0..rows {
        tb.begin();
        tb.push_i32(i);
        tb.push_i64(i as i64 * 2);
        ins.insert(tb.finish(txn.xid())).unwrap();
    }
    drop(ins);
    db.commit(txn).unwrap();
}

fn block_values(db: &Database, oid: u32, block: u32) -> Vec<i32> {
    let mut vis = Visibility::new(&db.txn, db.txn.snapshot());
    let mut out = vec![];
    heap::scan_page(&db.pool, oid, block, &mut vis, |_, t| {
        tuple::walk(t, &[DataType::Int4, DataType::Int8], 1, |att, a| {
            match (att, a) {
                (0, Attr::Int4(v)) => out.push(v),
                (1, Attr::Int8(v)) => assert_eq!(v, *out.last().unwrap() as i64 * 2),
                other => panic!("unexpected attribute {other:?}"),
            }
        });
    })
    .unwrap();
    out
}

#[test]
fn concurrent_readers_see_every_page_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_small(dir.path());
    assert_eq!(db.pool.nbuffers(), 16);
    fill(&db, 20000, 50_000);
    let nblocks = db.nblocks(20000).unwrap();
    assert!(nblocks > 100, "relation must be much larger than the pool");
    // Expected content of each block, read once serially.
    let expected: Vec<Vec<i32>> = (0..nblocks).map(|b| block_values(&db, 20000, b)).collect();
    assert_eq!(expected.iter().map(|v| v.len()).sum::<usize>(), 50_000);
    let expected = Arc::new(expected);
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let db = db.clone();
            let expected = expected.clone();
            std::thread::spawn(move || {
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ t;
                for _ in 0..3000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let b = (x % nblocks as u64) as u32;
                    assert_eq!(
                        block_values(&db, 20000, b),
                        expected[b as usize],
                        "block {b}"
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn committed_data_survives_reopen_and_aborted_data_stays_invisible() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open_small(dir.path());
        fill(&db, 30000, 5000);
        // An aborted writer: its tuples reach disk but must stay invisible.
        let txn = db.txn.begin_write().unwrap();
        let mut ins = HeapInserter::new(&db.pool, 30000);
        let mut tb = TupleBuilder::new();
        for i in 0..1000 {
            tb.begin();
            tb.push_i32(-i);
            tb.push_i64(-i as i64 * 2);
            ins.insert(tb.finish(txn.xid())).unwrap();
        }
        drop(ins);
        db.pool.flush_all().unwrap();
        drop(txn);
    }
    let db = open_small(dir.path());
    let n = db.nblocks(30000).unwrap();
    let all: Vec<i32> = (0..n).flat_map(|b| block_values(&db, 30000, b)).collect();
    assert_eq!(all.len(), 5000);
    assert!(all.iter().all(|&v| v >= 0));
}

#[test]
fn second_open_of_a_data_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _db = open_small(dir.path());
    let err = Database::open(dir.path(), &[])
        .err()
        .expect("second open must fail");
    assert!(
        err.to_string().contains("in use by another tusk process"),
        "{err}"
    );
}
