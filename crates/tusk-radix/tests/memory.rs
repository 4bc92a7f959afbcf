//! Bytes per TID for the patterns issue 7 names. Memory accounting is
//! deterministic (it counts allocator pages), so these are behaviour tests.

use tusk_radix::{Tid, TidStore};

mod support;
use support::Rng;

/// `k` distinct random offsets in 1..=max, sorted.
fn random_offsets(rng: &mut Rng, k: usize, max: u16) -> Vec<u16> {
    let mut v: Vec<u16> = Vec::with_capacity(k);
    while v.len() < k {
        let o = 1 + rng.below(u64::from(max)) as u16;
        if !v.contains(&o) {
            v.push(o);
        }
    }
    v.sort_unstable();
    v
}

fn measure(name: &str, bound: f64, blocks: impl Iterator<Item = (u32, Vec<u16>)>) {
    let mut s = TidStore::new();
    let mut sample = Vec::new();
    for (b, offs) in blocks {
        if sample.len() < 1000 {
            sample.push(Tid::new(b, offs[offs.len() / 2]));
        }
        s.add_block(b, &offs);
    }
    for t in sample {
        assert!(s.contains(t));
    }
    let per_tid = s.memory_usage() as f64 / s.len() as f64;
    let st = s.tree_stats();
    println!(
        "{name:<44} tids {:>9} blocks {:>8} bytes {:>10} bytes/TID {per_tid:.3} (bound {bound}) nodes {:?}",
        s.len(),
        s.num_blocks(),
        s.memory_usage(),
        st.nodes
    );
    assert!(per_tid <= bound, "{name}: {per_tid:.3} bytes/TID > {bound}");
}

const PAGE_TUPLES: u16 = 291; // MaxHeapTuplesPerPage for 8 kB pages

#[test]
fn whole_pages_dead() {
    let all: Vec<u16> = (1..=PAGE_TUPLES).collect();
    measure(
        "whole pages dead (291/page)",
        0.2,
        (0..20_000).map(|b| (b, all.clone())),
    );
}

#[test]
fn thirty_per_page() {
    // A page of 60 tuples with every second one dead.
    let offs: Vec<u16> = (1..=59).step_by(2).collect();
    assert_eq!(offs.len(), 30);
    measure(
        "30 dead per page (every 2nd of 60)",
        0.8,
        (0..100_000).map(|b| (b, offs.clone())),
    );
    // 30 at random among 62 line pointers.
    let mut rng = Rng(7);
    measure(
        "30 dead per page (random of 61)",
        0.8,
        (0..100_000).map(|b| (b, random_offsets(&mut rng, 30, 61))),
    );
}

#[test]
fn one_to_three_per_page() {
    for k in 1..=3 {
        let mut rng = Rng(k as u64);
        measure(
            &format!("{k} dead per page, every page"),
            3.0,
            (0..300_000).map(|b| (b, random_offsets(&mut rng, k, PAGE_TUPLES))),
        );
    }
    let mut rng = Rng(11);
    let blocks: Vec<(u32, Vec<u16>)> = (0..300_000)
        .map(|b| {
            let k = 1 + rng.below(3) as usize;
            (b, random_offsets(&mut rng, k, PAGE_TUPLES))
        })
        .collect();
    measure("1-3 dead per page, every page", 3.0, blocks.into_iter());
}

#[test]
fn scattered() {
    for (pct, label) in [(5u64, "5 %"), (1, "1 %")] {
        let mut rng = Rng(pct);
        let mut blocks = Vec::new();
        for b in 0..4_000_000u32 {
            if rng.below(100) < pct {
                blocks.push((b, random_offsets(&mut rng, 1, PAGE_TUPLES)));
            }
        }
        measure(
            &format!("scattered: 1 dead in {label} of pages"),
            5.0,
            blocks.into_iter(),
        );
    }
}

#[test]
fn never_above_six() {
    // Extremely sparse: one TID per 65 536 blocks over the whole block space.
    let mut rng = Rng(3);
    measure(
        "1 TID per 65536 blocks, offsets to 2048",
        6.0,
        (0..65_536u32).map(|i| {
            (
                i << 16 | rng.below(1 << 16) as u32,
                random_offsets(&mut rng, 1, 2048),
            )
        }),
    );
    // Wide offsets, one per block, random blocks at 0.1 %.
    let mut rng = Rng(4);
    let mut blocks = Vec::new();
    for b in (0..100_000_000u32).step_by(97) {
        if rng.below(10) == 0 {
            blocks.push((b, random_offsets(&mut rng, 1, tusk_radix::MAX_OFFSET)));
        }
    }
    measure(
        "1 TID in 0.1 % of pages, offsets to 4095",
        6.0,
        blocks.into_iter(),
    );
    // Alternating: a sparse page, then a page just dense enough for its own key.
    let mut rng = Rng(5);
    measure(
        "alternating sparse / 24-dead pages",
        6.0,
        (0..200_000u32).map(|b| {
            if b % 2 == 0 {
                (b, random_offsets(&mut rng, 1, PAGE_TUPLES))
            } else {
                (b, random_offsets(&mut rng, 24, 61))
            }
        }),
    );
    // Adversarial for closing short lists: a single wide-offset TID (a list
    // of one entry), then a page just dense enough for its own inline key.
    let mut rng = Rng(12);
    measure(
        "alternating 1-TID / 8-dead pages",
        6.0,
        (0..200_000u32).map(|b| {
            if b % 2 == 0 {
                (b, random_offsets(&mut rng, 1, 2048))
            } else {
                (b, random_offsets(&mut rng, 8, 63))
            }
        }),
    );
    // The same with the dense page far away: a list of one, then new nodes.
    let mut rng = Rng(13);
    measure(
        "1-TID page then 8-dead page 256 blocks on",
        6.0,
        (0..100_000u32).flat_map(|i| {
            let a = (i * 512, random_offsets(&mut rng, 1, 2048));
            let b = (i * 512 + 256, random_offsets(&mut rng, 16, 63));
            [a, b]
        }),
    );
    // Adversarial for the own-key rule: 64 very sparse single-TID pages (a
    // list just long enough to be closed without penalty), then a page with
    // 8 dead (just enough for an inline key), far apart.
    let mut rng = Rng(8);
    measure(
        "64 sparse pages + one 8-dead page, far apart",
        6.0,
        (0..65_000u32).map(|i| {
            let b = i << 16 | rng.below(1 << 16) as u32;
            if i % 65 == 64 {
                (b, random_offsets(&mut rng, 8, 61))
            } else {
                (b, random_offsets(&mut rng, 1, 2048))
            }
        }),
    );
    // Pages dense enough for an inline key next to their neighbour, but
    // alone in their part of the block space.
    for k in [8, 24] {
        let mut rng = Rng(9 + k as u64);
        measure(
            &format!("{k} dead of 61 on every 65536th page"),
            6.0,
            (0..65_000u32).map(|i| (i << 16, random_offsets(&mut rng, k, 61))),
        );
    }
    // A small store, where a whole 32 kB arena page would dominate: 1 or 2
    // dead on 5 % of a 100 000-page table, 7 561 TIDs (the bench grid's
    // cell). Below ~2 000 TIDs the store's fixed part (the open list's
    // 1 kB buffer, the struct) and the 4 kB granularity of the kernel's
    // pages come to more than 6 bytes per TID whatever the layout.
    let mut rng = Rng(14);
    let mut blocks = Vec::new();
    for b in 0..100_000u32 {
        if rng.below(100) < 5 {
            let k = 1 + rng.below(2) as usize;
            blocks.push((b, random_offsets(&mut rng, k, PAGE_TUPLES)));
        }
    }
    measure(
        "small store: 1-2 dead on 5 % of 100 000 pages",
        6.0,
        blocks.into_iter(),
    );
    // Every density from 1 to 291 in turn.
    let mut rng = Rng(6);
    measure(
        "densities 1..=291 in turn",
        6.0,
        (0..50_000u32).map(|b| {
            (
                b,
                random_offsets(&mut rng, 1 + (b % 291) as usize, PAGE_TUPLES),
            )
        }),
    );
    // Spread over a wide page: 8 and 64 dead among 2048 line pointers.
    for k in [8, 64, 129] {
        let mut rng = Rng(k as u64);
        measure(
            &format!("{k} dead among 2048 line pointers"),
            6.0,
            (0..30_000u32).map(|b| (b, random_offsets(&mut rng, k, 2048))),
        );
    }
}

#[test]
fn a_store_with_a_large_limit_counts_whole_huge_runs() {
    let mut s = TidStore::with_limit(64 << 20);
    let all: Vec<u16> = (1..=PAGE_TUPLES).collect();
    for b in 0..1000 {
        s.add_block(b * 3, &all);
    }
    // One 2 MB run holds this store, and it is counted whole.
    assert!(s.memory_usage() >= 2 << 20, "{}", s.memory_usage());
    assert!(s.memory_usage() < 3 << 20, "{}", s.memory_usage());
    for b in 0..1000 {
        assert!(s.contains(Tid::new(b * 3, 1 + b as u16 % PAGE_TUPLES)));
        assert!(!s.contains(Tid::new(b * 3 + 1, 1)));
    }
    // Below the threshold: 32 kB pages.
    let mut s = TidStore::with_limit(16 << 20);
    s.add_block(7, &[1, 2, 3]);
    assert!(s.memory_usage() < 64 << 10, "{}", s.memory_usage());
}
