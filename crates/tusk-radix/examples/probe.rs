//! Profiling aid (`perf record`, or `valgrind --tool=callgrind`: it reads
//! no clock through rustix's vDSO call, which valgrind cannot run):
//! shuffled lookups in one store.
//!
//! `cargo run --release -p tusk-radix --example probe -- [seed|sparse] [batch]`
//! * `seed`: seed 003's load (1 M blocks, half loaded, 1 to 32 dead among
//!   the first 63), every TID probed in random order;
//! * `sparse`: 1 dead TID in 5 % of 100 000 pages, 1 M random probes.
//!
//! `batch` probes through `contains_batch` instead of `contains`.
use tusk_radix::{Tid, TidStore};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sparse = args.iter().any(|a| a == "sparse");
    let batch = args.iter().any(|a| a == "batch");
    let mut x = 1u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut s = TidStore::with_limit(1 << 30);
    let mut probes = Vec::new();
    if sparse {
        for b in 0..100_000u32 {
            if rnd() % 100 < 5 {
                s.add_block(b, &[1 + (rnd() % 291) as u16]);
            }
        }
        probes.extend(
            (0..1_000_000).map(|_| Tid::new((rnd() % 100_000) as u32, 1 + (rnd() % 291) as u16)),
        );
    } else {
        for b in 0..1_000_000u32 {
            if rnd() % 2 == 0 {
                let k = 1 + rnd() % 32;
                let mut offs: Vec<u16> = Vec::new();
                while offs.len() < k as usize {
                    let o = 1 + (rnd() % 63) as u16;
                    if !offs.contains(&o) {
                        offs.push(o);
                    }
                }
                offs.sort_unstable();
                probes.extend(offs.iter().map(|&o| Tid::new(b, o)));
                s.add_block(b, &offs);
            }
        }
        for i in (1..probes.len()).rev() {
            probes.swap(i, (rnd() % (i as u64 + 1)) as usize);
        }
    }
    let mut out = vec![false; probes.len()];
    let rounds = 3;
    let t = std::time::Instant::now();
    let mut hits = 0;
    for _ in 0..rounds {
        if batch {
            s.contains_batch(&probes, &mut out);
            hits += out.iter().filter(|&&b| b).count();
        } else {
            hits += count_hits(&s, &probes);
        }
    }
    println!(
        "{hits} hits, {:.1} ns/lookup (wall), {} bytes",
        t.elapsed().as_nanos() as f64 / (rounds * probes.len()) as f64,
        s.memory_usage()
    );
}

/// The single-lookup loop, out of line so that its code is easy to find
/// (`objdump -d --disassemble=...count_hits...`) and to count under callgrind.
#[inline(never)]
fn count_hits(s: &TidStore, probes: &[Tid]) -> usize {
    probes.iter().filter(|&&p| s.contains(p)).count()
}
