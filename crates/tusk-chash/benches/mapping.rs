//! Throughput of the buffer mapping tables: `cargo bench -p tusk-chash`.
//!
//! For each table size (entries), workload and thread count, every
//! implementation is measured in turn in the same process, so figures taken
//! together are comparable. Settings (environment):
//!
//! * `TUSK_BENCH_SIZES`    entries, comma separated (default `16384,1048576,8388608`)
//! * `TUSK_BENCH_SECS`     seconds per measurement (default 0.1)
//! * `TUSK_BENCH_THREADS`  (default `1,2`)
//! * `TUSK_BENCH_IMPLS`    (default `chash,partitioned,global,dashmap,papaya`)
//! * `TUSK_BENCH_ROUNDS`   rounds per figure, median reported (default 3)
//!
//! Workloads: `uniform` and `zipf` (θ = 0.99) are read-only lookups of
//! present keys; `churn` is 95 % uniform lookups and 5 % replaces (remove one
//! key, insert another: the eviction path).

use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tusk_chash::{
    thread_stats, BufferMapping, BufferTag, ChashTable, HashedTag, PartitionedTable, Stats,
    TagHasher,
};

type Hasher = BuildHasherDefault<TagHasher>;

struct Dash(dashmap::DashMap<HashedTag, u32, Hasher>);

impl BufferMapping for Dash {
    fn lookup(&self, tag: &BufferTag) -> Option<u32> {
        self.0.get(&HashedTag(*tag)).map(|r| *r)
    }
    fn insert(&self, tag: &BufferTag, buffer: u32) -> Result<(), u32> {
        match self.0.entry(HashedTag(*tag)) {
            dashmap::Entry::Occupied(e) => Err(*e.get()),
            dashmap::Entry::Vacant(v) => {
                v.insert(buffer);
                Ok(())
            }
        }
    }
    fn remove(&self, tag: &BufferTag, buffer: u32) -> bool {
        self.0
            .remove_if(&HashedTag(*tag), |_, v| *v == buffer)
            .is_some()
    }
    fn name(&self) -> &'static str {
        "dashmap"
    }
}

struct Papaya(papaya::HashMap<HashedTag, u32, Hasher>);

impl BufferMapping for Papaya {
    fn lookup(&self, tag: &BufferTag) -> Option<u32> {
        let g = self.0.guard();
        self.0.get(&HashedTag(*tag), &g).copied()
    }
    fn insert(&self, tag: &BufferTag, buffer: u32) -> Result<(), u32> {
        let g = self.0.guard();
        match self.0.try_insert(HashedTag(*tag), buffer, &g) {
            Ok(_) => Ok(()),
            Err(e) => Err(*e.current),
        }
    }
    fn remove(&self, tag: &BufferTag, buffer: u32) -> bool {
        let g = self.0.guard();
        matches!(
            self.0.remove_if(&HashedTag(*tag), |_, v| *v == buffer, &g),
            Ok(Some(_))
        )
    }
    fn name(&self) -> &'static str {
        "papaya"
    }
}

struct Rng(u64);

impl Rng {
    #[inline]
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }
}

/// Zipf(θ) over 0..n by Gray et al.'s method (as in YCSB).
#[derive(Clone)]
struct Zipf {
    n: f64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Zipf {
        let zetan: f64 = (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum();
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        Zipf {
            n: n as f64,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }
    #[inline]
    fn sample(&self, rng: &mut Rng) -> u64 {
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let uz = u * self.zetan;
        if uz < 1.0 {
            0
        } else if uz < 1.0 + 0.5f64.powf(self.theta) {
            1
        } else {
            ((self.n * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64)
                .min(self.n as u64 - 1)
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Workload {
    Uniform,
    Zipf,
    Churn,
}

fn tag(rel: u32, block: u64) -> BufferTag {
    BufferTag::new(rel, block as u32)
}

/// Key streams: per thread, indices into 0..n drawn from the workload's
/// distribution ahead of time, so that sampling (a `powf` for Zipf) is not
/// measured.
const STREAM: usize = 1 << 20;

fn streams(n: u64, w: Workload, threads: usize, zipf: &Zipf) -> Vec<Arc<Vec<u32>>> {
    (0..threads)
        .map(|ti| {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((ti as u64 + 1) << 32));
            Arc::new(
                (0..STREAM)
                    .map(|_| match w {
                        // Spread hot ranks over the key space (a bijection for n = 2^k).
                        Workload::Zipf => {
                            (zipf.sample(&mut rng).wrapping_mul(0x9e37_79b1) & (n - 1)) as u32
                        }
                        _ => rng.below(n) as u32,
                    })
                    .collect(),
            )
        })
        .collect()
}

/// Runs `threads` threads of `w` on `t` (holding keys (1, 0..n) or, after
/// churn, (2, j) for some j) for `secs`; returns Mops/s and merged stats.
fn run(
    t: &Arc<dyn BufferMapping>,
    n: u64,
    w: Workload,
    keys: &[Arc<Vec<u32>>],
    secs: f64,
) -> (f64, Stats) {
    let threads = keys.len();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|ti| {
            let (t, stop, keys) = (t.clone(), stop.clone(), keys[ti].clone());
            std::thread::spawn(move || {
                tusk_chash::reset_thread_stats();
                let mut rng = Rng(0x1234_5678_9abc_def1 ^ ((ti as u64 + 1) << 40));
                // Churn: this thread owns slots j with j % threads == ti.
                let mut flipped = vec![0u64; (n as usize).div_ceil(64)];
                let mut ops = 0u64;
                let mut found = 0u64;
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        let k = keys[i] as u64;
                        i = (i + 1) & (STREAM - 1);
                        if w != Workload::Churn || !rng.next().is_multiple_of(20) {
                            found += t.lookup(&tag(1, k)).is_some() as u64;
                        } else {
                            let j = k - k % threads as u64 + ti as u64;
                            let j = if j >= n { ti as u64 } else { j };
                            let (word, bit) = ((j / 64) as usize, 1u64 << (j % 64));
                            let cur = if flipped[word] & bit != 0 { 2 } else { 1 };
                            assert!(t.remove(&tag(cur, j), j as u32));
                            t.insert(&tag(3 - cur, j), j as u32).unwrap();
                            flipped[word] ^= bit;
                        }
                        ops += 1;
                    }
                }
                // Put churned keys back, so the next run starts from (1, 0..n).
                for (word, bits) in flipped.iter().enumerate() {
                    let mut b = *bits;
                    while b != 0 {
                        let j = word as u64 * 64 + b.trailing_zeros() as u64;
                        assert!(t.remove(&tag(2, j), j as u32));
                        t.insert(&tag(1, j), j as u32).unwrap();
                        b &= b - 1;
                    }
                }
                std::hint::black_box(found);
                (ops, thread_stats())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let mut total = 0;
    let mut stats = Stats::default();
    for h in handles {
        let (ops, s) = h.join().unwrap();
        total += ops;
        stats.merge(&s);
    }
    (total as f64 / elapsed / 1e6, stats)
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn build(name: &str, cap: usize) -> Arc<dyn BufferMapping> {
    match name {
        "chash" => Arc::new(ChashTable::with_capacity(cap)),
        "partitioned" => Arc::new(PartitionedTable::new(cap)),
        "global" => Arc::new(PartitionedTable::global(cap)),
        "dashmap" => Arc::new(Dash(dashmap::DashMap::with_capacity_and_hasher(
            cap,
            Hasher::default(),
        ))),
        "papaya" => Arc::new(Papaya(papaya::HashMap::with_capacity_and_hasher(
            cap,
            Hasher::default(),
        ))),
        other => panic!("unknown table {other}"),
    }
}

fn main() {
    let sizes: Vec<u64> = env_list("TUSK_BENCH_SIZES", "16384,1048576,8388608")
        .iter()
        .map(|s| s.parse().expect("size"))
        .collect();
    let secs: f64 = std::env::var("TUSK_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.1);
    let threads: Vec<usize> = env_list("TUSK_BENCH_THREADS", "1,2")
        .iter()
        .map(|s| s.parse().expect("threads"))
        .collect();
    let impls = env_list(
        "TUSK_BENCH_IMPLS",
        "chash,partitioned,global,dashmap,papaya",
    );
    println!(
        "{:>8} {:<8} {:>2} {:<12} {:>8}",
        "entries", "workload", "th", "table", "speed"
    );
    let rounds: usize = std::env::var("TUSK_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    for &n in &sizes {
        assert!(n.is_power_of_two(), "sizes must be powers of two");
        let zipf = Zipf::new(n, 0.99);
        // The engine's sizing: nbuffers plus slack.
        let cap = n as usize + n as usize / 8 + 128;
        let tables: Vec<Arc<dyn BufferMapping>> = impls
            .iter()
            .map(|name| {
                let t = build(name, cap);
                for b in 0..n {
                    t.insert(&tag(1, b), b as u32).unwrap();
                }
                t
            })
            .collect();
        for (w, wname) in [
            (Workload::Uniform, "uniform"),
            (Workload::Zipf, "zipf"),
            (Workload::Churn, "churn"),
        ] {
            for &th in &threads {
                let keys = streams(n, w, th, &zipf);
                // Rounds interleave the tables, so that noise from a shared
                // machine hits them alike; the median round is reported.
                let mut results: Vec<Vec<(f64, Stats)>> = vec![vec![]; tables.len()];
                for _ in 0..rounds {
                    for (i, t) in tables.iter().enumerate() {
                        results[i].push(run(t, n, w, &keys, secs));
                    }
                }
                for (t, mut r) in tables.iter().zip(results) {
                    r.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let (mops, s) = r[r.len() / 2];
                    let probe = if s.lookups > 0 {
                        s.probes as f64 / s.lookups as f64
                    } else {
                        0.0
                    };
                    println!(
                        "{:>8} {:<8} {:>2} {:<12} {:>8.2} Mops/s   (probe {:.3}, max {}, retries {})",
                        n, wname, th, t.name(), mops, probe, s.max_probe, s.retries
                    );
                }
            }
        }
    }
}
