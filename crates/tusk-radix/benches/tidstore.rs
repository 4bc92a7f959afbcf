//! TidStore against the alternatives: `cargo bench -p tusk-radix`
//! (`-- quick` for a smaller table).
//!
//! A plain bench binary (no harness): every structure is loaded with the same
//! TIDs and probed with the same probe sequence in one run, side by side, so
//! that the comparison holds even on a machine shared with other work.
//!
//! * `array`: PostgreSQL <= 16's design, a sorted array searched by binary
//!   search. Memory is reported as PostgreSQL's 6 bytes per ItemPointer; the
//!   bench searches u64 keys, which is if anything faster than comparing
//!   6-byte ItemPointers.
//! * `roaring`: `roaring::RoaringTreemap` of `block << 16 | offset`; memory is
//!   its `serialized_size()`, a lower bound of its heap use.
//! * `hashbm`: `HashMap<u32, Vec<u64>>`, a bitmap per block; memory counts the
//!   table's buckets (key, Vec header, control byte) and the bitmap words.
//! * `tidstore`: this crate; memory is `memory_usage()`.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use roaring::RoaringTreemap;
use tusk_radix::{Tid, TidStore};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
}

/// `k` distinct offsets in 1..=max, sorted.
fn offsets(rng: &mut Rng, k: usize, max: u16) -> Vec<u16> {
    if k as u16 >= max {
        return (1..=max).collect();
    }
    let mut v = Vec::with_capacity(k);
    while v.len() < k {
        let o = 1 + rng.below(u64::from(max)) as u16;
        if !v.contains(&o) {
            v.push(o);
        }
    }
    v.sort_unstable();
    v
}

struct Loaded {
    array: Vec<u64>,
    roaring: RoaringTreemap,
    hashbm: HashMap<u32, Vec<u64>>,
    store: TidStore,
    ntids: usize,
}

fn load(blocks: &[(u32, Vec<u16>)]) -> Loaded {
    let mut array = Vec::new();
    let mut roaring = RoaringTreemap::new();
    let mut hashbm: HashMap<u32, Vec<u64>> = HashMap::new();
    let mut store = TidStore::new();
    for (b, offs) in blocks {
        store.add_block(*b, offs);
        let words = *offs.last().unwrap() as usize / 64 + 1;
        let mut bm = vec![0u64; words];
        for &o in offs {
            array.push(u64::from(*b) << 16 | u64::from(o));
            bm[o as usize / 64] |= 1 << (o % 64);
        }
        roaring
            .append(offs.iter().map(|&o| u64::from(*b) << 16 | u64::from(o)))
            .unwrap();
        hashbm.insert(*b, bm);
    }
    let ntids = array.len();
    Loaded {
        array,
        roaring,
        hashbm,
        store,
        ntids,
    }
}

fn hash_bytes(h: &HashMap<u32, Vec<u64>>) -> usize {
    h.capacity() * (4 + 24 + 1) + h.values().map(|v| v.capacity() * 8).sum::<usize>()
}

/// ns per lookup for each structure: [array, roaring, hashbm, tidstore].
fn probe(l: &Loaded, probes: &[Tid]) -> [f64; 4] {
    let n = probes.len() as f64;
    let mut out = [0.0; 4];
    let mut hits = [0usize; 4];
    let t = Instant::now();
    for p in probes {
        let k = u64::from(p.block) << 16 | u64::from(p.offset);
        hits[0] += usize::from(black_box(&l.array).binary_search(&k).is_ok());
    }
    out[0] = t.elapsed().as_nanos() as f64 / n;
    let t = Instant::now();
    for p in probes {
        let k = u64::from(p.block) << 16 | u64::from(p.offset);
        hits[1] += usize::from(black_box(&l.roaring).contains(k));
    }
    out[1] = t.elapsed().as_nanos() as f64 / n;
    let t = Instant::now();
    for p in probes {
        let hit = black_box(&l.hashbm).get(&p.block).is_some_and(|bm| {
            bm.get(p.offset as usize / 64)
                .is_some_and(|w| w >> (p.offset % 64) & 1 != 0)
        });
        hits[2] += usize::from(hit);
    }
    out[2] = t.elapsed().as_nanos() as f64 / n;
    let t = Instant::now();
    for p in probes {
        hits[3] += usize::from(black_box(&l.store).contains(*p));
    }
    out[3] = t.elapsed().as_nanos() as f64 / n;
    assert!(
        hits.iter().all(|&h| h == hits[0]),
        "structures disagree: {hits:?}"
    );
    out
}

fn bytes_per_tid(l: &Loaded) -> [f64; 4] {
    let n = l.ntids as f64;
    [
        6.0,
        l.roaring.serialized_size() as f64 / n,
        hash_bytes(&l.hashbm) as f64 / n,
        l.store.memory_usage() as f64 / n,
    ]
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    println!(
        "simd: {}; all structures loaded with the same TIDs and probed in one run",
        tusk_radix::simd::implementation()
    );

    // 1. Seed 003's search benchmark: 1 M blocks, each loaded with
    //    probability 1/2 (the v6 test with patch 0004), item ids below 64.
    let nblocks: u32 = if quick { 200_000 } else { 1_000_000 };
    let mut rng = Rng(42);
    let blocks: Vec<(u32, Vec<u16>)> = (0..nblocks)
        .filter_map(|b| {
            let take = rng.below(2) == 0;
            let k = 1 + rng.below(32) as usize;
            take.then(|| (b, offsets(&mut rng, k, 63)))
        })
        .collect();
    let t = Instant::now();
    let l = load(&blocks);
    let load_s = t.elapsed().as_secs_f64();
    let mut probes: Vec<Tid> = blocks
        .iter()
        .flat_map(|(b, offs)| offs.iter().map(move |&o| Tid::new(*b, o)))
        .collect();
    let st = l.store.tree_stats();
    println!(
        "\n## seed 003 search: {} blocks, {} TIDs, all probes hit (load of all 4: {load_s:.1} s)",
        nblocks, l.ntids
    );
    println!(
        "tidstore tree: height {} keys {} nodes n4/n16/n32/n48/n256 {:?}",
        st.height, st.keys, st.nodes
    );
    let bpt = bytes_per_tid(&l);
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>10}",
        "", "array", "roaring", "hashbm", "tidstore"
    );
    println!(
        "{:<10} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
        "bytes/TID", bpt[0], bpt[1], bpt[2], bpt[3]
    );
    let seq = probe(&l, &probes);
    println!(
        "{:<10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        "seq ns", seq[0], seq[1], seq[2], seq[3]
    );
    shuffle(&mut probes, &mut rng);
    let shuf = probe(&l, &probes);
    println!(
        "{:<10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        "shuf ns", shuf[0], shuf[1], shuf[2], shuf[3]
    );
    println!(
        "shuffled: tidstore is {:.1}x faster than the sorted array",
        shuf[0] / shuf[3]
    );
    drop(l);

    // 2. The density grid.
    let nblocks: u32 = if quick { 20_000 } else { 100_000 };
    let nprobes = if quick { 200_000 } else { 1_000_000 };
    println!(
        "\n## density grid: table of {nblocks} blocks (291 line pointers each), {nprobes} probes \
         at uniformly random (block, offset 1..=291)"
    );
    println!(
        "{:>5} {:>5} | {:>7} {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7} {:>7} | {:>6}",
        "dead", "blk%", "B/TID:a", "roar", "hash", "tids", "ord ns:a", "roar", "hash", "tids", "shuf:a", "roar",
        "hash", "tids", "a/tids"
    );
    for k in [1usize, 2, 3, 4, 8, 30, 64, 291] {
        for pct in [100u64, 50, 5] {
            let mut rng = Rng(k as u64 * 1000 + pct);
            let blocks: Vec<(u32, Vec<u16>)> = (0..nblocks)
                .filter_map(|b| {
                    let take = rng.below(100) < pct;
                    take.then(|| (b, offsets(&mut rng, k, 291)))
                })
                .collect();
            let l = load(&blocks);
            let mut probes: Vec<Tid> = (0..nprobes)
                .map(|_| {
                    Tid::new(
                        rng.below(u64::from(nblocks)) as u32,
                        1 + rng.below(291) as u16,
                    )
                })
                .collect();
            probes.sort_unstable();
            let bpt = bytes_per_tid(&l);
            let ord = probe(&l, &probes);
            shuffle(&mut probes, &mut rng);
            let shuf = probe(&l, &probes);
            println!(
                "{k:>5} {pct:>5} | {:>7.3} {:>7.3} {:>7.3} {:>7.3} | {:>7.1} {:>7.1} {:>7.1} {:>7.1} | {:>7.1} {:>7.1} {:>7.1} {:>7.1} | {:>6.1}",
                bpt[0], bpt[1], bpt[2], bpt[3], ord[0], ord[1], ord[2], ord[3], shuf[0], shuf[1], shuf[2], shuf[3],
                shuf[0] / shuf[3]
            );
        }
    }
}
