//! Page reads by block number through `BufferPool::read_buffer`, with each
//! buffer mapping table:
//!
//! ```text
//! cargo run --release -p tusk-storage --example read_buffer
//! ```
//!
//! A relation 8× larger than shared_buffers is read at random block numbers
//! ("cold": about 7 reads in 8 miss, evict a victim and read the page from
//! the kernel's page cache), and a range half the size of shared_buffers is
//! read at random ("hot": every read hits, so the mapping lookup, pin and tag
//! check dominate). Settings (environment): `TUSK_BENCH_SB` shared_buffers
//! (default 16MB), `TUSK_BENCH_SECS` per measurement (default 0.5),
//! `TUSK_BENCH_THREADS` (default `1,2`), `TUSK_BENCH_ROUNDS` (default 3,
//! tables interleaved, median reported).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tusk_storage::{page, Database};

const REL: u32 = 1;

fn open(dir: &std::path::Path, sb: &str, kind: &str) -> Arc<Database> {
    Database::open(
        dir,
        &[
            ("shared_buffers".into(), sb.into()),
            ("huge_pages".into(), "off".into()),
            ("tusk.buffer_mapping".into(), kind.into()),
        ],
    )
    .unwrap()
}

fn run(db: &Arc<Database>, blocks: u32, threads: usize, secs: f64) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut x = 0x2545_f491_4f6c_dd1d_u64 ^ ((t as u64 + 1) << 32);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..64 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let b = (((x >> 32) * blocks as u64) >> 32) as u32;
                        let buf = db.pool.read_buffer(REL, b).unwrap();
                        let g = buf.lock_shared();
                        std::hint::black_box(page::item_count(g.page()));
                        n += 1;
                    }
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let total: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    total as f64 / start.elapsed().as_secs_f64() / 1e6
}

fn main() {
    let sb = std::env::var("TUSK_BENCH_SB").unwrap_or_else(|_| "16MB".into());
    let secs: f64 = std::env::var("TUSK_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.5);
    let rounds: usize = std::env::var("TUSK_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let threads: Vec<usize> = std::env::var("TUSK_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2".into())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let kinds = ["chash", "partitioned", "global"];
    let dir = tempfile::tempdir().unwrap();
    let nbuffers;
    {
        let db = open(dir.path(), &sb, "chash");
        nbuffers = db.pool.nbuffers() as u32;
        db.smgr.create(REL).unwrap();
        for _ in 0..nbuffers * 8 {
            let buf = db.pool.new_page(REL).unwrap();
            let mut g = buf.lock_exclusive();
            page::add_item(g.page_mut(), &buf.block().to_le_bytes()).unwrap();
        }
        db.pool.flush_all().unwrap();
    }
    println!(
        "shared_buffers {sb} ({nbuffers} buffers), relation {} blocks",
        nbuffers * 8
    );
    println!("{:<5} {:>2} {:<12} {:>10}", "reads", "th", "table", "speed");
    for (label, blocks) in [("cold", nbuffers * 8), ("hot", nbuffers / 2)] {
        for &th in &threads {
            let mut results = vec![vec![]; kinds.len()];
            for _ in 0..rounds {
                for (i, kind) in kinds.iter().enumerate() {
                    let db = open(dir.path(), &sb, kind);
                    assert_eq!(db.pool.mapping_name(), *kind);
                    // Warm the pool with the range before timing.
                    run(&db, blocks, 1, secs / 4.0);
                    results[i].push(run(&db, blocks, th, secs));
                }
            }
            for (kind, mut r) in kinds.iter().zip(results) {
                r.sort_by(|a: &f64, b| a.total_cmp(b));
                println!(
                    "{label:<5} {th:>2} {kind:<12} {:>7.3} M reads/s",
                    r[r.len() / 2]
                );
            }
        }
    }
}
