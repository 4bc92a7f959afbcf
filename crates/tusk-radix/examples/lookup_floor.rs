//! What bounds a single shuffled `TidStore::contains` on this machine.
//!
//! `cargo run --release -p tusk-radix --example lookup_floor`
//!
//! 1. Memory latency: a pointer chase over a random cycle of 64-byte lines
//!    (each load's address comes from the previous load, as in a binary
//!    search or a tree descent), and the same lines read at random
//!    addresses known in advance (independent loads, as consecutive
//!    lookups are), in mappings of 1 MB to 1 GB with and without
//!    `MADV_HUGEPAGE`.
//! 2. Seed 003's shuffled search (1 M blocks, half loaded, 1 to 32 dead
//!    among the first 63, every TID probed in random order) against: the
//!    TidStore, on all probes and on the probes of blocks with >= 16 TIDs
//!    (whose values are inline bitmaps: one leaf slot per lookup) and of
//!    blocks with <= 7 (mostly in list containers: a second, dependent
//!    load and a binary search); a flat array of one bitmap word per block
//!    (the floor: one independent load per lookup, no tree); and a sorted
//!    array of 6-byte TIDs searched with a binary search (PostgreSQL 15).
//!
//! Times are this thread's CPU time per load or lookup, best of 3.
use std::hint::black_box;
use tusk_radix::{Tid, TidStore};

#[path = "../tests/support/mod.rs"]
mod support;
use support::{cpu_ns, shuffle, Rng};

/// Best of three runs of `f`, in ns per item.
fn best(items: usize, mut f: impl FnMut() -> usize) -> f64 {
    (0..3)
        .map(|_| {
            let t = cpu_ns();
            black_box(f());
            (cpu_ns() - t) as f64 / items as f64
        })
        .fold(f64::MAX, f64::min)
}

fn latency(rng: &mut Rng) {
    println!("| mapping | pages | dependent ns/load | independent ns/load |\n|---|---|---|---|");
    for huge in [false, true] {
        for mb in [1usize, 8, 64, 1024] {
            let lines = mb << 14; // 64-byte lines
            let mut m = memmap2::MmapMut::map_anon(mb << 20).expect("anonymous map");
            let _ = m.advise(if huge {
                memmap2::Advice::HugePage
            } else {
                memmap2::Advice::NoHugePage
            });
            let w: &mut [u64] = bytemuck_words(&mut m);
            let mut order: Vec<u32> = (0..lines as u32).collect();
            shuffle(&mut order, rng);
            for i in 0..lines {
                w[order[i] as usize * 8] = u64::from(order[(i + 1) % lines]) * 8;
            }
            let steps = 2_000_000;
            let dep = best(steps, || {
                let mut p = 0usize;
                for _ in 0..steps {
                    p = w[p] as usize;
                }
                p
            });
            let idx: Vec<u32> = (0..steps).map(|_| rng.below(lines as u64) as u32).collect();
            let ind = best(steps, || {
                idx.iter().map(|&i| w[i as usize * 8] as usize).sum()
            });
            println!(
                "| {mb} MB | {} | {dep:.1} | {ind:.1} |",
                if huge { "MADV_HUGEPAGE" } else { "4 kB" }
            );
        }
    }
}

/// The map's bytes as 64-bit words (the map is page aligned).
fn bytemuck_words(m: &mut memmap2::MmapMut) -> &mut [u64] {
    let len = m.len() / 8;
    let ptr = m.as_mut_ptr();
    assert_eq!(ptr as usize % 8, 0);
    // SAFETY: the map is `len * 8` bytes, page aligned (so 8-byte aligned),
    // zero-filled (a valid u64 everywhere), and borrowed mutably for the
    // returned slice's lifetime.
    unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u64>(), len) }
}

fn main() {
    let mut rng = Rng(42);
    println!("## memory latency\n");
    latency(&mut rng);

    let mut store = TidStore::with_limit(1 << 30);
    let mut probes = Vec::new();
    let mut per_block = vec![0u32; 1_000_000];
    for b in 0..1_000_000u32 {
        let take = rng.below(2) == 0;
        let k = 1 + rng.below(32) as usize;
        if take {
            let mut offs: Vec<u16> = Vec::new();
            while offs.len() < k {
                let o = 1 + rng.below(63) as u16;
                if !offs.contains(&o) {
                    offs.push(o);
                }
            }
            offs.sort_unstable();
            store.add_block(b, &offs);
            per_block[b as usize] = k as u32;
            probes.extend(offs.iter().map(|&o| Tid::new(b, o)));
        }
    }
    let mut flat = vec![0u64; 1_000_000];
    for t in &probes {
        flat[t.block as usize] |= 1 << t.offset;
    }
    let key = |t: &Tid| u64::from(t.block) << 16 | u64::from(t.offset);
    let mut sorted: Vec<[u16; 3]> = probes
        .iter()
        .map(|t| [(t.block >> 16) as u16, t.block as u16, t.offset])
        .collect();
    sorted.sort_unstable();
    shuffle(&mut probes, &mut rng);

    println!(
        "\n## seed 003 shuffled search, {} TIDs\n\n| structure | probes | ns/lookup |\n|---|---|---|",
        probes.len()
    );
    let tid_ns = |ps: &[Tid]| {
        best(ps.len(), || {
            ps.iter()
                .map(|&t| usize::from(black_box(&store).contains(t)))
                .sum()
        })
    };
    let subset = |lo: u32, hi: u32| -> Vec<Tid> {
        probes
            .iter()
            .copied()
            .filter(|t| (lo..=hi).contains(&per_block[t.block as usize]))
            .collect()
    };
    let (many, few) = (subset(16, 32), subset(1, 7));
    let flat_ns = best(probes.len(), || {
        probes
            .iter()
            .map(|t| (black_box(&flat)[t.block as usize] >> (t.offset & 63) & 1) as usize)
            .sum()
    });
    let array_ns = best(probes.len(), || {
        let mut hits = 0;
        for t in &probes {
            let (k, a) = (key(t), black_box(&sorted));
            let (mut lo, mut hi) = (0, a.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                let m =
                    u64::from(a[mid][0]) << 32 | u64::from(a[mid][1]) << 16 | u64::from(a[mid][2]);
                match k.cmp(&m) {
                    std::cmp::Ordering::Less => hi = mid,
                    std::cmp::Ordering::Greater => lo = mid + 1,
                    std::cmp::Ordering::Equal => {
                        hits += 1;
                        break;
                    }
                }
            }
        }
        hits
    });
    for (name, n, ns) in [
        ("tidstore, all probes", probes.len(), tid_ns(&probes)),
        (
            "tidstore, blocks with 16..=32 TIDs (inline bitmaps)",
            many.len(),
            tid_ns(&many),
        ),
        (
            "tidstore, blocks with 1..=7 TIDs (mostly lists)",
            few.len(),
            tid_ns(&few),
        ),
        (
            "flat array, one bitmap word per block (8 MB)",
            probes.len(),
            flat_ns,
        ),
        ("sorted 6-byte array, binary search", probes.len(), array_ns),
    ] {
        println!("| {name} | {n} | {ns:.1} |");
    }
}
