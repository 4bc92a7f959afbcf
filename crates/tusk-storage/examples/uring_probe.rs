//! What this machine's disk can do: random 8 kB reads per second from a cold
//! file, read synchronously (`pread`, one at a time, as recovery without
//! prefetching does), through io_uring into ordinary memory with the page
//! cache in between, and through io_uring with `O_DIRECT` (the device writes
//! straight into the destination) — the latter two at several queue depths.
//! The recovery benchmark cannot beat these figures; they say what a
//! speed-up target is up against.
//!
//! io_uring lines come in two manners: `batch 1` refills one read and
//! submits it (a system call, and a device notification, per read) each
//! time one completes; `batch depth/4` submits reads in groups of a
//! quarter of the depth and reaps every completion that is ready before
//! waiting, as recovery does. "CPU µs/read" is the process's CPU time
//! (user + system, all threads, 10 ms resolution) per read.
//!
//! ```text
//! cargo run --release -p tusk-storage --example uring_probe -- \
//!     [--file PATH] [--size-mb 1024] [--reads 20000]
//! ```
//!
//! The file is created once (left in place for later runs) and evicted from
//! the page cache (`posix_fadvise(DONTNEED)`) before every measurement; each
//! measurement reads a different random sequence of blocks.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::time::Instant;
use tusk_storage::uring::Ring;

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;

const BLOCK: usize = 8192;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// 4096-aligned buffers for `O_DIRECT`.
struct Buffers {
    ptr: *mut u8,
    layout: Layout,
}

impl Buffers {
    fn new(n: usize) -> Buffers {
        let layout = Layout::from_size_align(n * BLOCK, 4096).unwrap();
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Buffers { ptr, layout }
    }

    fn slot(&self, i: usize) -> *mut u8 {
        assert!((i + 1) * BLOCK <= self.layout.size());
        // SAFETY: inside the allocation (checked above).
        unsafe { self.ptr.add(i * BLOCK) }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn evict(f: &File) {
    rustix::fs::fadvise(f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
}

/// Reads per second and CPU µs per read of a measurement.
struct Rate {
    reads_per_s: f64,
    cpu_us: f64,
}

fn measure(reads: usize, run: impl FnOnce()) -> Rate {
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    run();
    let secs = t0.elapsed().as_secs_f64();
    Rate {
        reads_per_s: reads as f64 / secs,
        cpu_us: (cpu_seconds() - cpu0) * 1e6 / reads as f64,
    }
}

fn pread_rate(f: &File, blocks: u64, reads: usize, rng: &mut Rng) -> Rate {
    evict(f);
    let mut buf = vec![0u8; BLOCK];
    measure(reads, || {
        for _ in 0..reads {
            let b = rng.next() % blocks;
            f.read_exact_at(&mut buf, b * BLOCK as u64).unwrap();
        }
    })
}

/// `reads` random reads through io_uring, `depth` at a time, placed and
/// submitted whenever at least `batch` slots are free.
fn uring_rate(
    f: &File,
    blocks: u64,
    reads: usize,
    depth: usize,
    batch: usize,
    rng: &mut Rng,
) -> Rate {
    evict(f);
    let mut ring = Ring::new(depth as u32).unwrap();
    let bufs = Buffers::new(depth);
    let mut free: Vec<usize> = (0..depth).collect();
    let (mut issued, mut done) = (0, 0);
    let complete = |c: tusk_storage::uring::Completion, free: &mut Vec<usize>| {
        assert_eq!(c.result.unwrap(), BLOCK);
        free.push(c.user_data as usize);
    };
    let rate = measure(reads, || {
        while done < reads {
            if free.len() >= batch.min(reads - issued).max(1) {
                while issued < reads && ring.room() > 0 {
                    let Some(slot) = free.pop() else { break };
                    let b = rng.next() % blocks;
                    // SAFETY: each slot's 8 kB of `bufs` serve one read at a
                    // time (a slot goes back to `free` only when its
                    // completion is reaped), and `bufs` is dropped only
                    // after the ring, below.
                    let placed = unsafe {
                        ring.prepare_read(
                            f.as_fd(),
                            bufs.slot(slot),
                            BLOCK as u32,
                            b * BLOCK as u64,
                            slot as u64,
                        )
                    };
                    assert!(placed);
                    issued += 1;
                }
                ring.submit().unwrap();
            }
            let c = ring.wait().unwrap().expect("reads outstanding");
            complete(c, &mut free);
            done += 1;
            while let Some(c) = ring.pop() {
                complete(c, &mut free);
                done += 1;
            }
        }
    });
    drop(ring);
    drop(bufs);
    rate
}

fn main() {
    let path: PathBuf = arg("--file")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("tusk-uring-probe.dat"));
    let size_mb: u64 = arg("--size-mb").map_or(1024, |v| v.parse().unwrap());
    let reads: usize = arg("--reads").map_or(20_000, |v| v.parse().unwrap());
    let blocks = size_mb * 1024 * 1024 / BLOCK as u64;
    if std::fs::metadata(&path).map_or(true, |m| m.len() < blocks * BLOCK as u64) {
        let mut f = File::create(&path).unwrap();
        let chunk: Vec<u8> = (0..1 << 20).map(|i| (i * 31 % 251) as u8).collect();
        for _ in 0..size_mb {
            f.write_all(&chunk).unwrap();
        }
        f.sync_all().unwrap();
    }
    if !Ring::available() {
        eprintln!("io_uring is not available on this kernel");
    }
    let buffered = File::open(&path).unwrap();
    let direct = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(&path)
        .ok();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    println!(
        "file {} ({size_mb} MB), {reads} random 8 kB reads per line, cold cache",
        path.display()
    );
    println!("| method | depth | batch | reads/s | CPU µs/read |");
    println!("|---|---|---|---|---|");
    let line = |method: &str, depth: usize, batch: usize, r: Rate| {
        println!(
            "| {method} | {depth} | {batch} | {:.0} | {:.1} |",
            r.reads_per_s, r.cpu_us
        );
    };
    line(
        "pread",
        1,
        1,
        pread_rate(&buffered, blocks, reads, &mut rng),
    );
    if Ring::available() {
        for depth in [1, 10, 32] {
            let r = uring_rate(&buffered, blocks, reads, depth, 1, &mut rng);
            line("io_uring buffered", depth, 1, r);
        }
        if let Some(d) = &direct {
            for depth in [1, 10, 32, 64, 128, 256] {
                let batches: &[usize] = if depth >= 8 { &[1, depth / 4] } else { &[1] };
                for &batch in batches {
                    let r = uring_rate(d, blocks, reads, depth, batch, &mut rng);
                    line("io_uring O_DIRECT", depth, batch, r);
                }
            }
        } else {
            println!("(O_DIRECT refused by this file system)");
        }
    }
}
