//! Profiling aid: seed 003's load, shuffled single lookups.
use tusk_radix::{Tid, TidStore};
fn main() {
    let mut x = 1u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut s = TidStore::new();
    let mut probes = Vec::new();
    for b in 0..1_000_000u32 {
        if rnd() % 2 == 0 {
            let k = 1 + rnd() % 32;
            let mut offs: Vec<u16> = Vec::new();
            while offs.len() < k as usize {
                let o = 1 + (rnd() % 63) as u16;
                if !offs.contains(&o) {
                    offs.push(o)
                }
            }
            offs.sort();
            for &o in &offs {
                probes.push(Tid::new(b, o));
            }
            s.add_block(b, &offs);
        }
    }
    for i in (1..probes.len()).rev() {
        let j = (rnd() % (i as u64 + 1)) as usize;
        probes.swap(i, j);
    }
    let batch = std::env::args().any(|a| a == "batch");
    let mut out = vec![false; probes.len()];
    let t = std::time::Instant::now();
    let mut hits = 0;
    for _ in 0..3 {
        if batch {
            s.contains_batch(&probes, &mut out);
            hits += out.iter().filter(|&&b| b).count();
        } else {
            for p in &probes {
                hits += usize::from(s.contains(*p));
            }
        }
    }
    println!(
        "{hits} hits, {:.1} ns/lookup, {} bytes",
        t.elapsed().as_nanos() as f64 / (3 * probes.len()) as f64,
        s.memory_usage()
    );
    let ahp = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap();
    println!(
        "{}",
        ahp.lines()
            .filter(|l| l.starts_with("AnonHuge") || l.starts_with("Rss"))
            .collect::<Vec<_>>()
            .join(" ")
    );
}
