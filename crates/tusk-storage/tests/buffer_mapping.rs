//! The buffer pool works the same with every mapping table that
//! `tusk.buffer_mapping` can select, under eviction pressure from several
//! threads.

use std::sync::Arc;
use tusk_storage::{page, Database};

fn open(dir: &std::path::Path, kind: &str) -> Result<Arc<Database>, tusk_storage::StorageError> {
    Database::open(
        dir,
        &[
            ("shared_buffers".into(), "256kB".into()),
            ("huge_pages".into(), "off".into()),
            ("tusk.buffer_mapping".into(), kind.into()),
        ],
    )
}

/// Writes `blocks` pages into relation `rel`, each holding its block number.
fn fill(db: &Database, rel: u32, blocks: u32) {
    db.smgr.create(rel).unwrap();
    for b in 0..blocks {
        let buf = db.pool.new_page(rel).unwrap();
        assert_eq!(buf.block(), b);
        let mut g = buf.lock_exclusive();
        page::add_item(g.page_mut(), &b.to_le_bytes()).unwrap();
    }
    db.pool.flush_all().unwrap();
}

fn block_of(db: &Database, rel: u32, block: u32) -> u32 {
    let buf = db.pool.read_buffer(rel, block).unwrap();
    let g = buf.lock_shared();
    let item = page::item_bytes(g.page(), 1).unwrap();
    u32::from_le_bytes(item.try_into().unwrap())
}

#[test]
fn every_mapping_table_serves_the_pool() {
    for kind in ["chash", "partitioned", "global"] {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), kind).unwrap();
        assert_eq!(db.pool.mapping_name(), kind);
        // 32 buffers, 300 blocks: nearly every read evicts.
        fill(&db, 1, 300);
        let handles: Vec<_> = (0..3u64)
            .map(|t| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let mut x = 0x2545_f491_4f6c_dd1d ^ (t + 1);
                    for _ in 0..3000 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Skewed: half the reads go to 16 hot blocks, which stay cached.
                        let b = if x & 1 == 0 {
                            (x >> 8) % 16
                        } else {
                            (x >> 8) % 300
                        } as u32;
                        assert_eq!(block_of(&db, 1, b), b);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        for b in 0..300 {
            assert_eq!(block_of(&db, 1, b), b);
        }
    }
}

#[test]
fn default_is_chash_and_bad_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), &[("huge_pages".into(), "off".into())]).unwrap();
    assert_eq!(db.pool.mapping_name(), "chash");
    drop(db);
    let err = open(dir.path(), "dynahash").err().unwrap();
    assert!(err.to_string().contains("tusk.buffer_mapping"), "{err}");
}
