//! TidStore against the alternatives: `cargo bench -p tusk-radix`
//! (`TUSK_BENCH_QUICK=1` or `-- quick` for a CI-sized run of half a minute;
//! `TUSK_BENCH_ONLY=seed` for the seed 003 table only).
//!
//! A plain bench binary (no harness): every structure is loaded with the same
//! TIDs and probed with the same probe sequence in one run, side by side, in
//! alternating rounds, so that the comparison holds even on a machine shared
//! with other work. Each figure is the median (and minimum) of the rounds,
//! in CPU time of the probing thread.
//!
//! * `pg15 array`: PostgreSQL 15's dead-item storage as `lazy_tid_reaped`
//!   searches it: a sorted array of 6-byte `ItemPointerData` (block number
//!   as two 16-bit halves, then the offset), a range check against the first
//!   and last item, then glibc's `bsearch` loop with `vac_cmp_itemptr`'s
//!   comparison (inlined, as gcc -O2 inlines both). 6 bytes per TID.
//! * `roaring`: `roaring::RoaringTreemap` of `block << 16 | offset`; memory is
//!   its `serialized_size()`, a lower bound of its heap use.
//! * `hash bm`: `HashMap<u32, Vec<u64>>`, a bitmap per block; memory counts
//!   the table's buckets (key, Vec header, control byte) and bitmap words.
//! * `tidstore`: this crate, one `contains` per probe; memory is
//!   `memory_usage()`. Created with `TidStore::with_limit(1 GB)`, as VACUUM
//!   would with a large `maintenance_work_mem`: its memory comes in 2 MB
//!   huge-page runs (counted whole). The others use the system allocator,
//!   as PostgreSQL 15's `palloc` of the dead-item array does.
//! * `tidstore batch`: the same store probed through `contains_batch`
//!   (the probe sequence handed over whole).
//!
//! The tables are printed and (unless quick) written to
//! `bench/results/tidstore-latest.md`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;

use roaring::RoaringTreemap;
use tusk_radix::{Tid, TidStore};

#[path = "../tests/support/mod.rs"]
mod support;
use support::{cpu_ns, shuffle, Rng};

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

/// PostgreSQL 15's `ItemPointerData`: `BlockIdData { bi_hi, bi_lo }` and
/// `ip_posid`, 6 bytes, 2-byte aligned.
#[derive(Clone, Copy)]
#[repr(C)]
struct ItemPointer {
    bi_hi: u16,
    bi_lo: u16,
    posid: u16,
}

impl ItemPointer {
    fn new(block: u32, offset: u16) -> ItemPointer {
        ItemPointer {
            bi_hi: (block >> 16) as u16,
            bi_lo: block as u16,
            posid: offset,
        }
    }
    #[inline(always)]
    fn block(&self) -> u32 {
        u32::from(self.bi_hi) << 16 | u32::from(self.bi_lo)
    }
    /// `itemptr_encode`.
    #[inline(always)]
    fn encode(&self) -> u64 {
        u64::from(self.block()) << 16 | u64::from(self.posid)
    }
}

/// `vac_cmp_itemptr`.
#[inline(always)]
fn vac_cmp_itemptr(l: &ItemPointer, r: &ItemPointer) -> i32 {
    let (lb, rb) = (l.block(), r.block());
    if lb < rb {
        return -1;
    }
    if lb > rb {
        return 1;
    }
    if l.posid < r.posid {
        return -1;
    }
    if l.posid > r.posid {
        return 1;
    }
    0
}

/// `lazy_tid_reaped`: range check, then glibc's `bsearch`.
#[inline(never)]
fn lazy_tid_reaped(items: &[ItemPointer], key: &ItemPointer) -> bool {
    let (Some(first), Some(last)) = (items.first(), items.last()) else {
        return false;
    };
    let item = key.encode();
    if item < first.encode() || item > last.encode() {
        return false;
    }
    let (mut l, mut u) = (0, items.len());
    while l < u {
        let idx = (l + u) / 2;
        let c = vac_cmp_itemptr(key, &items[idx]);
        if c < 0 {
            u = idx;
        } else if c > 0 {
            l = idx + 1;
        } else {
            return true;
        }
    }
    false
}

const NAMES: [&str; 5] = [
    "pg15 array",
    "roaring",
    "hash bm",
    "tidstore",
    "tidstore batch",
];

struct Loaded {
    array: Vec<ItemPointer>,
    roaring: RoaringTreemap,
    hashbm: HashMap<u32, Vec<u64>>,
    store: TidStore,
    /// `memory_usage` of the same TIDs in a `TidStore::new()` (32 kB pages).
    small_pages_bytes: usize,
    ntids: usize,
}

fn load(blocks: &[(u32, Vec<u16>)]) -> Loaded {
    let mut array = Vec::new();
    let mut roaring = RoaringTreemap::new();
    let mut hashbm: HashMap<u32, Vec<u64>> = HashMap::new();
    // As VACUUM creates it with a large maintenance_work_mem: huge-page runs.
    let mut store = TidStore::with_limit(1 << 30);
    let mut small = TidStore::new();
    for (b, offs) in blocks {
        store.add_block(*b, offs);
        small.add_block(*b, offs);
        let words = *offs.last().unwrap() as usize / 64 + 1;
        let mut bm = vec![0u64; words];
        for &o in offs {
            array.push(ItemPointer::new(*b, o));
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
        small_pages_bytes: small.memory_usage(),
        ntids,
    }
}

fn hash_bytes(h: &HashMap<u32, Vec<u64>>) -> usize {
    h.capacity() * (4 + 24 + 1) + h.values().map(|v| v.capacity() * 8).sum::<usize>()
}

/// Bytes per TID: array, roaring, hash, tidstore with 32 kB pages, and the
/// probed tidstore (2 MB runs, counted whole).
fn bytes_per_tid(l: &Loaded) -> [f64; 5] {
    let n = l.ntids as f64;
    [
        6.0,
        l.roaring.serialized_size() as f64 / n,
        hash_bytes(&l.hashbm) as f64 / n,
        l.small_pages_bytes as f64 / n,
        l.store.memory_usage() as f64 / n,
    ]
}

/// One pass of structure `which` over `probes`: (ns per lookup, hits).
fn pass(l: &Loaded, which: usize, probes: &[Tid], out: &mut [bool]) -> (f64, usize) {
    let t = cpu_ns();
    let mut hits = 0usize;
    match which {
        0 => {
            for p in probes {
                let key = ItemPointer::new(p.block, p.offset);
                hits += usize::from(lazy_tid_reaped(black_box(&l.array), &key));
            }
        }
        1 => {
            for p in probes {
                let k = u64::from(p.block) << 16 | u64::from(p.offset);
                hits += usize::from(black_box(&l.roaring).contains(k));
            }
        }
        2 => {
            for p in probes {
                let hit = black_box(&l.hashbm).get(&p.block).is_some_and(|bm| {
                    bm.get(p.offset as usize / 64)
                        .is_some_and(|w| w >> (p.offset % 64) & 1 != 0)
                });
                hits += usize::from(hit);
            }
        }
        3 => {
            for p in probes {
                hits += usize::from(black_box(&l.store).contains(*p));
            }
        }
        _ => {
            black_box(&l.store).contains_batch(probes, out);
            hits = out.iter().filter(|&&b| b).count();
        }
    }
    ((cpu_ns() - t) as f64 / probes.len() as f64, hits)
}

/// Median and minimum ns/lookup per structure over `rounds` alternating
/// rounds; every structure must give the same number of hits.
fn probe(l: &Loaded, probes: &[Tid], rounds: usize) -> [(f64, f64); 5] {
    let mut times = vec![Vec::new(); 5];
    let mut out = vec![false; probes.len()];
    let mut hits = [0usize; 5];
    for _ in 0..rounds {
        for (w, t) in times.iter_mut().enumerate() {
            let (ns, h) = pass(l, w, probes, &mut out);
            t.push(ns);
            hits[w] = h;
        }
    }
    assert!(
        hits.iter().all(|&h| h == hits[0]),
        "structures disagree: {hits:?}"
    );
    let mut r = [(0.0, 0.0); 5];
    for (w, t) in times.iter_mut().enumerate() {
        t.sort_by(f64::total_cmp);
        r[w] = (t[t.len() / 2], t[0]);
    }
    r
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick")
        || std::env::var_os("TUSK_BENCH_QUICK").is_some_and(|v| v != "0");
    let rounds = if quick { 3 } else { 5 };
    let mut md = String::new();
    let loadavg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let head = format!(
        "simd: {}; load average at start {}; {} rounds, median (min) ns per lookup in \
         thread CPU time; all structures loaded with the same TIDs and probed with the same \
         sequence in alternating rounds{}",
        tusk_radix::simd::implementation(),
        loadavg
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        rounds,
        if quick { "; QUICK (small) run" } else { "" }
    );
    println!("{head}");
    writeln!(
        md,
        "# TidStore benchmark (`cargo bench -p tusk-radix`)\n\n{head}.\n"
    )
    .unwrap();

    // 1. Seed 003's search benchmark: 1 M blocks, each loaded with
    //    probability 1/2 (the v6 test with patch 0004), 1 to 32 dead item
    //    ids among the first 63; every TID probed, in order and shuffled.
    let nblocks: u32 = if quick { 200_000 } else { 1_000_000 };
    let mut rng = Rng(42);
    let blocks: Vec<(u32, Vec<u16>)> = (0..nblocks)
        .filter_map(|b| {
            let take = rng.below(2) == 0;
            let k = 1 + rng.below(32) as usize;
            take.then(|| (b, offsets(&mut rng, k, 63)))
        })
        .collect();
    let l = load(&blocks);
    let mut probes: Vec<Tid> = blocks
        .iter()
        .flat_map(|(b, offs)| offs.iter().map(move |&o| Tid::new(*b, o)))
        .collect();
    let st = l.store.tree_stats();
    let title = format!(
        "## seed 003 search: {nblocks} blocks, half loaded, {} TIDs, every TID probed",
        l.ntids
    );
    println!("\n{title}");
    writeln!(
        md,
        "{title}\n\ntidstore tree: height {}, {} keys, nodes n4/n16/n32/n48/n256 {:?}\n",
        st.height, st.keys, st.nodes
    )
    .unwrap();
    let bpt = bytes_per_tid(&l);
    let seq = probe(&l, &probes, rounds);
    shuffle(&mut probes, &mut rng);
    let shuf = probe(&l, &probes, rounds);
    drop(l);
    let note = format!(
        "tidstore bytes/TID: {:.3} with 32 kB pages (`TidStore::new`); {:.3} as probed \
         (`TidStore::with_limit(1 GB)`: 2 MB huge-page runs, counted whole)",
        bpt[3], bpt[4]
    );
    println!("{note}");
    writeln!(md, "{note}\n").unwrap();
    let hdr = "| structure | bytes/TID | sequential ns | shuffled ns | shuffled vs pg15 array |\n|---|---|---|---|---|";
    println!("{hdr}");
    writeln!(md, "{hdr}").unwrap();
    for w in 0..5 {
        let row = format!(
            "| {} | {:.3} | {:.1} ({:.1}) | {:.1} ({:.1}) | {:.1}x |",
            NAMES[w],
            bpt[if w >= 3 { 4 } else { w }],
            seq[w].0,
            seq[w].1,
            shuf[w].0,
            shuf[w].1,
            shuf[0].0 / shuf[w].0
        );
        println!("{row}");
        writeln!(md, "{row}").unwrap();
    }

    // 2. The density grid.
    if std::env::var("TUSK_BENCH_ONLY").is_ok_and(|v| v == "seed") {
        return;
    }
    let nblocks: u32 = if quick { 20_000 } else { 100_000 };
    let nprobes = if quick { 100_000 } else { 1_000_000 };
    let title = format!(
        "## density grid: table of {nblocks} blocks of 291 line pointers; `dead` TIDs at random \
         offsets on `blk%` of the blocks; {nprobes} probes at uniformly random (block, offset \
         1..=291), ordered and shuffled. Cells: bytes/TID and median ns/lookup; `x` = shuffled \
         pg15 array / tidstore."
    );
    println!("\n{title}");
    writeln!(md, "\n{title}\n").unwrap();
    let hdr = "| dead | blk% | TIDs | B/TID array / roaring / hash / tidstore 32 kB pages / tidstore 2 MB runs | ordered ns array / roaring / hash / tidstore / batch | shuffled ns array / roaring / hash / tidstore / batch | x single | x batch |\n|---|---|---|---|---|---|---|---|";
    println!("{hdr}");
    writeln!(md, "{hdr}").unwrap();
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
            let ord = probe(&l, &probes, rounds);
            shuffle(&mut probes, &mut rng);
            let shuf = probe(&l, &probes, rounds);
            let f = |v: &[(f64, f64); 5]| {
                v.iter()
                    .map(|x| format!("{:.1}", x.0))
                    .collect::<Vec<_>>()
                    .join(" / ")
            };
            let row = format!(
                "| {k} | {pct} | {} | {:.2} / {:.2} / {:.2} / {:.2} / {:.2} | {} | {} | {:.1} | {:.1} |",
                l.ntids,
                bpt[0],
                bpt[1],
                bpt[2],
                bpt[3],
                bpt[4],
                f(&ord),
                f(&shuf),
                shuf[0].0 / shuf[3].0,
                shuf[0].0 / shuf[4].0
            );
            println!("{row}");
            writeln!(md, "{row}").unwrap();
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/results/tidstore-latest.md"
    );
    if quick {
        println!("\nquick run: {path} not written");
    } else if let Err(e) = std::fs::write(path, md) {
        eprintln!("could not write {path}: {e}");
    } else {
        println!("\nwritten to bench/results/tidstore-latest.md");
    }
}
