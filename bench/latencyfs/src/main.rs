//! `tusk-latencyfs`: a FUSE pass-through file system that delays every read,
//! for benchmarks only — it makes a fast local disk look like storage with
//! a fixed latency per read and deep parallelism (cloud block storage), the
//! setting of seed 001's recovery-prefetching measurements. tusk itself
//! never fakes latency; benchmarks run a data directory on this mount.
//!
//! ```text
//! tusk-latencyfs --backing DIR --mount DIR --read-latency-ms 1 \
//!     [--threads 4] [--workers 4] [--max-background 1024] \
//!     [--max-readahead-kb 128] [--direct-io]
//! ```
//!
//! Every read request the kernel sends is answered `--read-latency-ms`
//! after it arrived, however many are waiting (see `delay.rs`); writes,
//! metadata operations and fsync pass straight through to the backing
//! directory. The process runs until the mount is unmounted (`umount DIR`)
//! and then prints its counters. `bench/recovery_fuse.sh` mounts it, runs
//! a benchmark and always unmounts.
//!
//! What the kernel does on top, and why the defaults are what they are:
//! reads through the page cache (pread, io_uring buffered reads, readahead
//! started by `posix_fadvise(WILLNEED)`) become FUSE READ requests, sent
//! asynchronously ("background" requests) with `FUSE_ASYNC_READ`; the
//! kernel keeps at most `max_background` of those in flight and, above the
//! congestion threshold, drops readahead that was only hinted. Both are set
//! to `--max-background` (1024) so that the kernel's queue, not the
//! device, would never be the limit at the depths benchmarked (≤ 128).
//! `O_DIRECT` reads become FUSE READ requests too; with `FUSE_ASYNC_DIO`
//! (requested at INIT) an asynchronous one (io_uring) is sent as a
//! background request and does not hold the submitting thread.
//! `posix_fadvise(DONTNEED)` empties the kernel's cache of a file here as
//! on a local file system (the pages are clean: writes go through).

mod delay;
mod fs;

use clap::Parser;
use fuser::{Config, MountOption, Session};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Locks `m`, taking the data even if a thread panicked while holding it:
/// a benchmark mount keeps answering the other requests rather than fail
/// every later one on the poisoned lock. (Used for the path and file
/// tables and the delay queue.)
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Parser)]
#[command(about = "FUSE pass-through file system that delays every read (benchmarks only)")]
struct Args {
    /// Directory whose contents the mount shows.
    #[arg(long)]
    backing: PathBuf,
    /// Where to mount (created if missing).
    #[arg(long)]
    mount: PathBuf,
    /// Latency added to every read, in milliseconds.
    #[arg(long, default_value_t = 1.0)]
    read_latency_ms: f64,
    /// Threads reading requests from the kernel.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Threads answering reads once their latency has passed.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// The kernel's limit of asynchronous requests in flight (and its
    /// congestion threshold).
    #[arg(long, default_value_t = 1024)]
    max_background: u16,
    /// Largest readahead request, in kB.
    #[arg(long, default_value_t = 128)]
    max_readahead_kb: u32,
    /// No page cache: every read reaches the daemon (`FOPEN_DIRECT_IO`).
    #[arg(long)]
    direct_io: bool,
    /// Every write waits for the daemon (no `FUSE_WRITEBACK_CACHE`).
    #[arg(long)]
    write_through: bool,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("tusk-latencyfs: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> std::io::Result<()> {
    std::fs::create_dir_all(&args.mount)?;
    let backing = args.backing.canonicalize()?;
    let latency = Duration::from_secs_f64(args.read_latency_ms.max(0.0) / 1000.0);
    let stats = Arc::new(delay::Stats::default());
    let line = delay::DelayLine::start(latency, args.workers, stats.clone());
    let settings = fs::KernelSettings {
        max_background: args.max_background,
        max_readahead: args.max_readahead_kb.saturating_mul(1024),
        direct_io: args.direct_io,
        writeback_cache: !args.write_through,
    };
    let fs = fs::LatencyFs::new(backing.clone(), line, stats.clone(), settings)?;
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName(format!("tusk-latencyfs:{}", backing.display())),
        MountOption::Subtype("tusk-latencyfs".into()),
        MountOption::NoAtime,
    ];
    config.n_threads = Some(args.threads.max(1));
    config.clone_fd = true;
    let session = Session::new(fs, &args.mount, &config)?;
    eprintln!(
        "tusk-latencyfs: {} on {}, read latency {} ms, max_background {}, readahead {} kB{}{}",
        backing.display(),
        args.mount.display(),
        args.read_latency_ms,
        args.max_background,
        args.max_readahead_kb,
        if args.direct_io { ", direct_io" } else { "" },
        if args.write_through {
            ", write-through"
        } else {
            ""
        },
    );
    session.run()?;
    eprintln!(
        "tusk-latencyfs: unmounted; {} reads ({} MB), {} writes ({} MB), at most {} reads waiting at once",
        stats.reads.load(Ordering::Relaxed),
        stats.read_bytes.load(Ordering::Relaxed) >> 20,
        stats.writes.load(Ordering::Relaxed),
        stats.write_bytes.load(Ordering::Relaxed) >> 20,
        stats.max_waiting.load(Ordering::Relaxed),
    );
    Ok(())
}
