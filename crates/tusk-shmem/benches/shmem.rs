//! Benchmarks of tusk-shmem (plain binary, `cargo bench -p tusk-shmem --bench
//! shmem -- [create] [chunks] [build]`). Huge-page variants run only when
//! enough huge pages are usable (`/proc/sys/vm/nr_hugepages`); they are
//! reported as skipped otherwise.
//!
//! 1. `create`: create + map + destroy a DSM segment of 1 MB, 32 MB, 1 GB,
//!    from the pool vs fresh from the OS; also with every page touched once
//!    (what a user of the segment pays before it can use it).
//! 2. `chunks`: DSA allocation of 32 kB and 128 kB chunks (warm pool) from 1 and 2
//!    threads, against the same allocator behind one area-wide mutex (the
//!    shape of PostgreSQL's dsa.c).
//! 3. `build`: a hash-join-like build: random 8-byte read-modify-writes over
//!    `TUSK_BENCH_BUILD_MB` (default 1024) MB of DSA memory, 4 kB pages vs
//!    huge pages (pool in a huge-page main region), with fresh 4 kB segments
//!    (PostgreSQL's default) as the reference.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tusk_shmem::{
    huge_pages_usable, DsaArea, DsaConfig, DsaPointer, Dsm, DsmConfig, HugePages, MainRegion,
    RegionLayout, HUGE_PAGE_SIZE,
};

const KB: usize = 1 << 10;
const MB: usize = 1 << 20;
const GB: usize = 1 << 30;

fn dsm_with_pool(pool: usize, huge: HugePages) -> Option<Dsm> {
    let mut layout = RegionLayout::new();
    let area = Dsm::reserve(&mut layout, pool)?;
    let region = match MainRegion::create(layout, huge) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            eprintln!("  (pool on {huge:?} pages unavailable: {e})");
            return None;
        }
    };
    // Fault the pool in, as a running server's would be after first use.
    let seg = region.segment();
    for off in (area.offset..area.offset + area.len).step_by(4096) {
        // SAFETY: inside the live mapping of the region, used only here.
        unsafe { seg.as_ptr().add(off).write_volatile(0) };
    }
    Some(Dsm::new(
        Some((region, area)),
        DsmConfig {
            huge_pages: HugePages::Off,
            ..DsmConfig::default()
        },
    ))
}

fn fresh_dsm(huge: HugePages) -> Dsm {
    Dsm::new(
        None,
        DsmConfig {
            huge_pages: huge,
            ..DsmConfig::default()
        },
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

/// Median time of `iters` create (+ touch) + destroy cycles.
fn time_create(dsm: &Dsm, size: usize, iters: usize, touch: bool) -> Duration {
    let mut times = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let seg = dsm.create(size).expect("create");
        if touch {
            for off in (0..seg.len()).step_by(4096) {
                // SAFETY: inside the segment, which only this loop uses.
                unsafe { seg.as_ptr().add(off).write_volatile(1) };
            }
        }
        drop(seg);
        times.push(t.elapsed());
    }
    median(times)
}

fn bench_create() {
    println!("## 1. DSM segment create + map + destroy (median)");
    let pool4k = dsm_with_pool(GB + 32 * MB, HugePages::Off).expect("4 kB pool");
    let fresh4k = fresh_dsm(HugePages::Off);
    let huge_ok = huge_pages_usable() * HUGE_PAGE_SIZE >= GB + 64 * MB;
    let fresh_huge = huge_ok.then(|| fresh_dsm(HugePages::Try));
    println!(
        "{:>6} | {:>12} | {:>12} | {:>12} | {:>8} | {:>14} | {:>14}",
        "size", "pool", "fresh 4kB", "fresh huge", "speedup", "pool+touch", "fresh4k+touch"
    );
    for (size, iters) in [(MB, 2000), (32 * MB, 100), (GB, 6)] {
        let fresh_iters = (iters / 4).max(3);
        let p = time_create(&pool4k, size, iters, false);
        let f = time_create(&fresh4k, size, fresh_iters, false);
        let fh = fresh_huge
            .as_ref()
            .map(|d| fmt(time_create(d, size, fresh_iters, false)))
            .unwrap_or_else(|| "skipped".into());
        let pt = time_create(&pool4k, size, (iters / 10).max(3), true);
        let ft = time_create(&fresh4k, size, (fresh_iters / 10).max(3), true);
        println!(
            "{:>6} | {:>12} | {:>12} | {:>12} | {:>7.0}x | {:>14} | {:>14}",
            format!("{}MB", size / MB),
            fmt(p),
            fmt(f),
            fh,
            f.as_nanos() as f64 / p.as_nanos().max(1) as f64,
            fmt(pt),
            fmt(ft)
        );
    }
    let s = pool4k.stats();
    println!(
        "   counters (pool dsm): pool segments {}, fresh {}; fresh dsm: fresh segments {}",
        s.pool_segments_created,
        s.fresh_segments_created,
        fresh4k.stats().fresh_segments_created
    );
}

/// Allocates `total` bytes of `chunk`-sized chunks from `threads` threads;
/// returns chunks per second and allocations slower than 20 us (medians of 9
/// rounds).
fn chunk_rate(
    dsm: &Dsm,
    chunk: usize,
    threads: usize,
    global_lock: bool,
    prepare_ahead: bool,
) -> (f64, usize) {
    let slow_cycles = (cycles_per_ns() * 20_000.0) as u64;
    let total = 512 * MB;
    let per_thread = total / chunk / threads;
    let mut rates = Vec::new();
    let mut worst = Vec::new();
    for _ in 0..9 {
        let area = DsaArea::create(
            dsm,
            DsaConfig {
                prepare_ahead,
                ..DsaConfig::default()
            },
        )
        .unwrap();
        let lock = Mutex::new(());
        let t = Instant::now();
        let w = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut slow = 0usize;
                        let mut last = DsaPointer::NULL;
                        for _ in 0..per_thread {
                            let t = cycles();
                            last = if global_lock {
                                let _g = lock.lock().unwrap();
                                area.allocate(chunk).unwrap()
                            } else {
                                area.allocate(chunk).unwrap()
                            };
                            if cycles() - t > slow_cycles {
                                slow += 1;
                            }
                        }
                        std::hint::black_box(last);
                        slow
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum::<usize>()
        });
        let el = t.elapsed();
        rates.push((per_thread * threads) as f64 / el.as_secs_f64());
        worst.push(w);
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    worst.sort();
    (rates[rates.len() / 2], worst[worst.len() / 2])
}

/// The time-stamp counter: a clock read cheap enough to wrap every call.
fn cycles() -> u64 {
    // SAFETY: `rdtsc` has no preconditions on x86-64; it only reads a counter.
    unsafe { std::arch::x86_64::_rdtsc() }
}

fn cycles_per_ns() -> f64 {
    let (c, t) = (cycles(), Instant::now());
    std::thread::sleep(Duration::from_millis(20));
    (cycles() - c) as f64 / t.elapsed().as_nanos() as f64
}

fn bench_chunks() {
    println!("## 2. DSA chunk allocation: 512 MB per round from a warm 1 GB pool, untouched;");
    println!("##    throughput and allocations slower than 20 us (median of 9 rounds)");
    let dsm = dsm_with_pool(GB, HugePages::Off).expect("pool");
    println!(
        "{:>6} | {:>7} | {:>28} | {:>28} | {:>28}",
        "chunk",
        "threads",
        "lock-free, prepare ahead",
        "lock-free, grow on demand",
        "one area mutex, on demand"
    );
    for chunk in [32 * KB, 128 * KB] {
        for threads in [1, 2] {
            let cells: Vec<String> = [(false, true), (false, false), (true, false)]
                .into_iter()
                .map(|(global, ahead)| {
                    let (r, w) = chunk_rate(&dsm, chunk, threads, global, ahead);
                    format!("{:>6.1} M/s, {:>4} over 20us", r / 1e6, w)
                })
                .collect();
            println!(
                "{:>6} | {:>7} | {:>28} | {:>28} | {:>28}",
                format!("{}kB", chunk / KB),
                threads,
                cells[0],
                cells[1],
                cells[2]
            );
        }
    }
    println!(
        "   (figures from a shared 2-core machine: preemption adds slow calls to every column)"
    );
}

/// A hash-join-like table: `bytes` of DSA memory in 32 kB chunks, each
/// touched once when it is allocated (the tuples being loaded).
struct BuildTable {
    area: DsaArea,
    chunks: Vec<*mut u64>,
    fill: Duration,
    huge_share: f64,
}

impl BuildTable {
    fn new(dsm: &Dsm, bytes: usize) -> BuildTable {
        let area = DsaArea::create(
            dsm,
            DsaConfig {
                initial_segment_size: 32 * MB,
                ..DsaConfig::default()
            },
        )
        .unwrap();
        let chunk = 32 * KB;
        let t = Instant::now();
        let chunks: Vec<*mut u64> = (0..bytes / chunk)
            .map(|_| {
                let p = area.get(area.allocate(chunk).unwrap());
                // SAFETY: a fresh 32 kB allocation owned by this table.
                unsafe { std::ptr::write_bytes(p, 0, chunk) };
                p.cast()
            })
            .collect();
        let fill = t.elapsed();
        let (mut on_huge, mut all) = (0, 0);
        for i in 0..area.stats().segments {
            let seg = area.segment(i).unwrap();
            all += seg.len();
            on_huge += if seg.huge_pages() { seg.len() } else { 0 };
        }
        BuildTable {
            area,
            chunks,
            fill,
            huge_share: on_huge as f64 / all as f64,
        }
    }

    /// `writes` random 8-byte read-modify-writes (bucket-head updates).
    fn writes(&self, writes: usize, seed: u64) -> Duration {
        let words = 32 * KB / 8;
        let mut x = seed | 1;
        let t = Instant::now();
        for i in 0..writes {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let c = self.chunks[(x as usize) % self.chunks.len()];
            let w = (x >> 40) as usize % words;
            // SAFETY: `w < words`, inside a live chunk of `self.area`.
            unsafe {
                let p = c.add(w);
                p.write(p.read().wrapping_add(i as u64));
            }
        }
        let _ = &self.area;
        t.elapsed()
    }
}

fn bench_build() {
    let mb: usize = std::env::var("TUSK_BENCH_BUILD_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let bytes = mb * MB;
    let writes = 10_000_000;
    let rounds = 7;
    println!(
        "## 3. hash-join-like build: {mb} MB of DSA chunks; {rounds} rounds of {}M random 8-byte \
         read-modify-writes per variant, variants interleaved",
        writes / 1_000_000
    );
    println!("   huge pages usable: {}", huge_pages_usable());
    let mut tables: Vec<(&str, BuildTable)> = Vec::new();
    let fresh4k = fresh_dsm(HugePages::Off);
    tables.push((
        "4 kB pages, fresh segments",
        BuildTable::new(&fresh4k, bytes),
    ));
    let pool4k = dsm_with_pool(bytes * 3 / 2, HugePages::Off).expect("4 kB pool");
    tables.push(("4 kB pages, pool", BuildTable::new(&pool4k, bytes)));
    let pool_huge = dsm_with_pool(bytes * 3 / 2, HugePages::On);
    match &pool_huge {
        Some(d) => tables.push(("huge pages, pool", BuildTable::new(d, bytes))),
        None => println!("{:>28}: skipped", "huge pages, pool"),
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); tables.len()];
    for r in 0..rounds {
        for (i, (_, t)) in tables.iter().enumerate() {
            times[i].push(t.writes(writes, 0x9E37_79B9 + r as u64));
        }
    }
    let base = median(times[0].clone());
    for ((name, t), ts) in tables.iter().zip(times) {
        let best = *ts.iter().min().unwrap();
        let med = median(ts);
        println!(
            "{name:>28}: fill {:>9}  writes median {:>9} ({:.1} ns/write, best {:.1}), \
             {:.0}% faster than the first; {:.0}% on huge pages",
            fmt(t.fill),
            fmt(med),
            med.as_nanos() as f64 / writes as f64,
            best.as_nanos() as f64 / writes as f64,
            (base.as_secs_f64() / med.as_secs_f64() - 1.0) * 100.0,
            t.huge_share * 100.0
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let all = args.is_empty();
    let want = |n: &str| all || args.iter().any(|a| a == n);
    if want("create") {
        bench_create();
    }
    if want("chunks") {
        bench_chunks();
    }
    if want("build") {
        bench_build();
    }
}
