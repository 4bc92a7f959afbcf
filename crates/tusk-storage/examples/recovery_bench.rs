//! Recovery prefetching benchmark.
//!
//! Builds a table at least 8x larger than `shared_buffers`, checkpoints, makes
//! random single-row changes (one DELETE per transaction), "crashes" (the WAL
//! is flushed, the buffer pool is abandoned without writing), and then, for
//! each configuration, copies the crashed data directory, evicts its data
//! files from the OS page cache (`posix_fadvise(DONTNEED)`), and times the
//! recovery in `Database::open`.
//!
//! ```text
//! cargo run --release -p tusk-storage --example recovery_bench -- \
//!     [--dir DIR] [--run-dir DIR] [--shared-buffers-mb 16] [--table-factor 8] \
//!     [--changes 20000] [--runs 3] [--only 'SUBSTRING|SUBSTRING...']
//! ```
//!
//! `--only` keeps the configurations whose name contains one of the
//! `|`-separated substrings (prefetch off always runs: the speed-ups are
//! relative to it), e.g. `--only 'fadvise|O_DIRECT, conc. 10|O_DIRECT, conc. 32'`.
//! `--skip-off` leaves prefetch off out too, to profile one configuration
//! (e.g. `perf record ... --skip-off --only 'CPU floor'`); speed-ups are
//! then relative to the first configuration kept.
//!
//! The crashed data directory is built under `--dir`; each recovery runs on
//! a copy in `--run-dir` (default `DIR/run`), which may be on other storage:
//! `bench/recovery_fuse.sh` points it at a FUSE mount that delays every read
//! (`bench/latencyfs`), to measure recovery on storage with the latency of
//! cloud block storage instead of this machine's local disk.
//!
//! Each configuration runs `--runs` times (the configurations take turns, so
//! a burst of load on the machine does not hit one of them only), and the
//! minimum and median replay times are printed with the speed-up over
//! `recovery_prefetch = off`. The last configuration, `cached (CPU floor)`,
//! recovers with every data file in the kernel's page cache: no read waits
//! for the disk, so it is the replay's CPU cost alone — what prefetching can
//! approach at best. "CPU s" is the CPU time (user + system, all threads,
//! 10 ms resolution) the process used while opening the database: replay
//! plus the end-of-recovery checkpoint; unlike the wall-clock times it
//! hardly depends on how busy the machine is.
//!
//! `full_page_writes` is off for the change phase: with it on, each random
//! change after the checkpoint would log its page's image and redo would read
//! nothing, which is what the images are for but leaves nothing to prefetch.

use std::path::{Path, PathBuf};
use std::time::Instant;
use tusk_storage::heap::{self, HeapInserter, Tid};
use tusk_storage::tuple::TupleBuilder;
use tusk_storage::{ColumnDef, Database, SqlType, TableDef};

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
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

/// A configuration: its name, its settings, and whether the data files are
/// evicted from the OS cache before it runs.
type Config = (String, Vec<(&'static str, String)>, bool);

/// Reads every file under `dir` so that it sits in the kernel's page cache.
fn warm_os_cache(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let _ = std::fs::read(e.path());
    }
}

fn main() {
    let dir: PathBuf = arg("--dir")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("tusk-recovery-bench"));
    let sb_mb: usize = arg("--shared-buffers-mb").map_or(16, |v| v.parse().unwrap());
    let factor: usize = arg("--table-factor").map_or(8, |v| v.parse().unwrap());
    let changes: u64 = arg("--changes").map_or(20_000, |v| v.parse().unwrap());
    let run = arg("--run-dir")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("run"));
    let _ = std::fs::remove_dir_all(&dir);
    let crashed = dir.join("crashed");
    let sb = format!("{sb_mb}MB");
    let base_settings = |extra: &[(&str, &str)]| -> Vec<(String, String)> {
        let mut v = vec![
            ("shared_buffers".to_string(), sb.clone()),
            ("huge_pages".into(), "off".into()),
            ("synchronous_commit".into(), "off".into()),
            ("full_page_writes".into(), "off".into()),
            ("max_wal_size".into(), "64GB".into()),
            ("checkpoint_timeout".into(), "1d".into()),
        ];
        v.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        v
    };

    // Load.
    let db = Database::open(&crashed, &base_settings(&[])).unwrap();
    let table = TableDef {
        oid: db.catalog_mut().allocate_oid().unwrap(),
        name: "bench".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: SqlType::Int8,
                not_null: false,
                default: None,
            },
            ColumnDef {
                name: "pad".into(),
                ty: SqlType::Text,
                not_null: false,
                default: None,
            },
        ],
        checks: Vec::new(),
        view: None,
        access_method: Default::default(),
        sequence: None,
    };
    let target_blocks = (sb_mb * factor * 1024 / 8) as u32;
    let t0 = Instant::now();
    {
        let txn = db.txn.begin_write().unwrap();
        db.log_create_table(&txn, &table).unwrap();
        db.smgr.create(table.oid).unwrap();
        let mut ins = HeapInserter::new(&db.pool, table.oid);
        let mut tb = TupleBuilder::new();
        let pad = [b'x'; 80];
        let mut id = 0i64;
        while db.nblocks(table.oid).unwrap() < target_blocks {
            tb.begin();
            tb.push_i64(id);
            tb.push_text(&pad);
            ins.insert(tb.finish(txn.xid())).unwrap();
            id += 1;
        }
        db.catalog_mut().add_table(table.clone()).unwrap();
        db.commit(txn).unwrap();
    }
    db.checkpoint().unwrap();
    let nblocks = db.nblocks(table.oid).unwrap();
    let items_per_page = {
        let buf = db.pool.read_buffer(table.oid, 0).unwrap();
        let g = buf.lock_shared();
        tusk_storage::page::item_count(g.page())
    };
    eprintln!(
        "loaded {nblocks} blocks ({} MB, shared_buffers {sb}) in {:.1} s",
        nblocks as u64 * 8 / 1024,
        t0.elapsed().as_secs_f64()
    );

    // Random single-row changes.
    let t0 = Instant::now();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..changes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let block = (x % nblocks as u64) as u32;
        let item = 1 + ((x >> 32) % items_per_page as u64) as u16;
        let txn = db.txn.begin_write().unwrap();
        heap::delete(&db.pool, table.oid, Tid { block, item }, txn.xid()).unwrap();
        db.commit(txn).unwrap();
    }
    // Crash: the WAL is durable, dirty pages are abandoned.
    db.wal.flush_all().unwrap();
    eprintln!(
        "{changes} random deletes in {:.1} s; WAL since checkpoint: {} MB",
        t0.elapsed().as_secs_f64(),
        (db.wal.insert_lsn() - db.wal.redo_lsn()) >> 20
    );
    // Keep the crashed instance from checkpointing at drop.
    std::mem::forget(db);

    let runs: usize = arg("--runs").map_or(3, |v| v.parse().unwrap());
    let only = arg("--only");
    // (name, settings, evict the data files from the OS cache)
    let mut configs: Vec<Config> = vec![(
        "recovery_prefetch=off".into(),
        vec![("recovery_prefetch", "off".into())],
        true,
    )];
    let on = |method: &str, conc: usize, direct: bool| {
        vec![
            ("recovery_prefetch", "on".to_string()),
            ("tusk.recovery_prefetch_method", method.to_string()),
            ("maintenance_io_concurrency", conc.to_string()),
            (
                "tusk.recovery_direct_io",
                if direct { "on" } else { "off" }.into(),
            ),
        ]
    };
    for conc in [10, 32] {
        configs.push((
            format!("fadvise, concurrency {conc}"),
            on("fadvise", conc, false),
            true,
        ));
    }
    for conc in [10, 32] {
        configs.push((
            format!("threads, concurrency {conc}"),
            on("threads", conc, false),
            true,
        ));
    }
    for conc in [10, 32] {
        configs.push((
            format!("io_uring buffered, conc. {conc}"),
            on("io_uring", conc, false),
            true,
        ));
    }
    for conc in [10, 32, 64, 128] {
        configs.push((
            format!("io_uring O_DIRECT, conc. {conc}"),
            on("io_uring", conc, true),
            true,
        ));
    }
    configs.push((
        "cached (CPU floor)".into(),
        vec![("recovery_prefetch", "off".into())],
        false,
    ));
    let skip_off = std::env::args().any(|a| a == "--skip-off");
    configs.retain(|(name, _, _)| {
        if name == "recovery_prefetch=off" {
            !skip_off
        } else {
            only.as_ref()
                .is_none_or(|only| only.split('|').any(|o| name.contains(o)))
        }
    });
    assert!(
        !configs.is_empty(),
        "--skip-off and --only left no configuration"
    );

    let mut times: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut last: Vec<Option<tusk_storage::RecoveryStats>> = vec![None; configs.len()];
    for _ in 0..runs {
        for (i, (_, extra, evict)) in configs.iter().enumerate() {
            let _ = std::fs::remove_dir_all(&run);
            copy_dir(&crashed, &run);
            let smgr = tusk_storage::smgr::Smgr::new(run.join("base"));
            if *evict {
                smgr.evict_os_cache().unwrap();
            } else {
                warm_os_cache(&run.join("base"));
            }
            let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let cpu0 = cpu_seconds();
            let db = Database::open(&run, &base_settings(&extra)).unwrap();
            cpu[i].push(cpu_seconds() - cpu0);
            let s = db.recovery_stats().clone();
            times[i].push(s.elapsed.as_secs_f64());
            last[i] = Some(s);
            drop(db);
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let off_median = median(&times[0]);
    println!(
        "| config | method used | min s | median s | speed-up (median) | CPU s (median) | prefetch | hit | skip_new | skip_rep | block_distance | io_depth |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (i, (name, _, _)) in configs.iter().enumerate() {
        let s = last[i].as_ref().unwrap();
        let min = times[i].iter().copied().fold(f64::INFINITY, f64::min);
        let med = median(&times[i]);
        println!(
            "| {name} | {} | {min:.3} | {med:.3} | {:.2}x | {:.2} | {} | {} | {} | {} | {:.0} | {:.1} |",
            s.method,
            off_median / med,
            median(&cpu[i]),
            s.prefetch,
            s.hit,
            s.skip_new,
            s.skip_rep,
            s.block_distance,
            s.io_depth
        );
    }
    // Every run's time, in run order, for combining several invocations.
    for (i, (name, _, _)) in configs.iter().enumerate() {
        let all: Vec<String> = times[i].iter().map(|t| format!("{t:.3}")).collect();
        eprintln!("times {name}: {}", all.join(" "));
    }
    let _ = std::fs::remove_dir_all(&run);
    let _ = std::fs::remove_dir_all(&dir);
}
