//! Profiling aid: probe a sparse TidStore (1 dead TID in 5 % of 100 000 pages).
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
    for b in 0..100_000u32 {
        if rnd() % 100 < 5 {
            s.add_block(b, &[1 + (rnd() % 291) as u16]);
        }
    }
    let probes: Vec<Tid> = (0..1_000_000)
        .map(|_| Tid::new((rnd() % 100_000) as u32, 1 + (rnd() % 291) as u16))
        .collect();
    let t = std::time::Instant::now();
    let mut hits = 0;
    for _ in 0..20 {
        for p in &probes {
            hits += usize::from(s.contains(*p));
        }
    }
    println!(
        "{hits} hits, {:.1} ns/lookup",
        t.elapsed().as_nanos() as f64 / 20e6
    );
}
