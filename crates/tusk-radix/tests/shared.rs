#![cfg(not(tusk_radix_loom))]
//! The shared TidStore: built in a DSA area, published, read by threads and
//! by another process without locks; out-of-memory is an error.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use tusk_radix::{destroy_shared, OpenError, SharedTidStore, Tid, TidStore};
use tusk_shmem::{DsaArea, DsaConfig, Dsm, DsmConfig, HugePages};

// The second-process helper of tusk-shmem's tests, reused as it is.
#[path = "../../tusk-shmem/tests/common/mod.rs"]
mod common;

const KB: usize = 1 << 10;
const MB: usize = 1 << 20;

fn dsm() -> Dsm {
    Dsm::new(
        None,
        DsmConfig {
            huge_pages: HugePages::Off,
            ..DsmConfig::default()
        },
    )
}

fn area(dsm: &Dsm, limit: usize) -> DsaArea {
    DsaArea::create(
        dsm,
        DsaConfig {
            initial_segment_size: 256 * KB,
            max_segment_size: 4 * MB,
            max_total_size: limit,
            prepare_ahead: true,
        },
    )
    .unwrap()
}

/// A deterministic mix of densities (lists, inline bitmaps, bitmap chunks)
/// over `nblocks` blocks, the same in the parent and the child process.
fn pattern(nblocks: u32) -> Vec<(u32, Vec<u16>)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for b in 0..nblocks {
        let r = rnd() % 100;
        if r < 40 {
            continue;
        }
        let (k, max) = match r % 4 {
            0 => (1 + rnd() % 3, 291),
            1 => (8 + rnd() % 30, 63),
            2 => (100 + rnd() % 150, 291),
            _ => (1 + rnd() % 5, 2048),
        };
        let mut offs = BTreeSet::new();
        while offs.len() < k as usize {
            offs.insert(1 + (rnd() % max) as u16);
        }
        out.push((b, offs.into_iter().collect()));
    }
    out
}

/// Every TID of `pattern`, each followed by a near miss.
fn probes(blocks: &[(u32, Vec<u16>)]) -> (Vec<Tid>, BTreeSet<Tid>) {
    let set: BTreeSet<Tid> = blocks
        .iter()
        .flat_map(|(b, o)| o.iter().map(move |&o| Tid::new(*b, o)))
        .collect();
    let mut probes = Vec::new();
    for t in &set {
        probes.push(*t);
        probes.push(Tid::new(t.block, t.offset + 1));
        probes.push(Tid::new(t.block + 1, t.offset));
    }
    (probes, set)
}

fn build<'a>(area: &'a DsaArea, blocks: &[(u32, Vec<u16>)]) -> TidStore<tusk_radix::DsaAlloc<'a>> {
    let mut s = TidStore::new_shared(area).unwrap();
    for (b, offs) in blocks {
        s.try_add_block(*b, offs).unwrap();
    }
    s
}

/// Check `view` against `set` for every probe, one at a time and batched;
/// returns the number of hits.
fn check(view: &SharedTidStore<'_>, probes: &[Tid], set: &BTreeSet<Tid>) -> usize {
    let mut batch = vec![false; probes.len()];
    view.contains_batch(probes, &mut batch);
    let mut hits = 0;
    for (t, b) in probes.iter().zip(&batch) {
        let want = set.contains(t);
        assert_eq!(view.contains(*t), want, "{t:?}");
        assert_eq!(*b, want, "batch {t:?}");
        hits += usize::from(want);
    }
    hits
}

#[test]
fn threads_read_the_published_store_without_locks() {
    let dsm = dsm();
    let area = area(&dsm, usize::MAX);
    let blocks = pattern(8_000);
    let (probes, set) = probes(&blocks);
    let published = AtomicBool::new(false);
    let mut handle = None;
    std::thread::scope(|sc| {
        let store = TidStore::new_shared(&area).unwrap();
        let h = store.handle();
        // Readers start before the build ends: until publication they are
        // refused, then they read concurrently.
        let readers: Vec<_> = (0..4)
            .map(|i| {
                let (area, probes, set, published) = (&area, &probes, &set, &published);
                sc.spawn(move || {
                    let view = loop {
                        let was_published = published.load(Ordering::Relaxed);
                        // SAFETY: `h` is this area's store, destroyed only
                        // after the scope.
                        match unsafe { SharedTidStore::open_shared(area, h) } {
                            Ok(v) => break v,
                            Err(e) => {
                                assert_eq!(e, OpenError::NotPublished);
                                assert!(!was_published, "refused after publication");
                                std::thread::yield_now();
                            }
                        }
                    };
                    assert_eq!(view.len(), set.len());
                    // Each reader starts at a different point of the probes.
                    let start = i * probes.len() / 4;
                    let mut rotated = probes[start..].to_vec();
                    rotated.extend_from_slice(&probes[..start]);
                    check(&view, &rotated, set);
                    let listed: usize = view.iter().map(|(_, o)| o.len()).sum();
                    assert_eq!(listed, set.len());
                })
            })
            .collect();
        let mut store = store;
        for (b, offs) in &blocks {
            store.try_add_block(*b, offs).unwrap();
        }
        handle = Some(store.publish().unwrap());
        published.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
    });
    let used = area.stats().pages_in_use;
    // SAFETY: every view is gone.
    unsafe { destroy_shared(&area, handle.unwrap()) };
    assert!(area.stats().pages_in_use < used);
}

#[test]
fn an_unpublished_store_dropped_gives_its_memory_back() {
    let dsm = dsm();
    let area = area(&dsm, usize::MAX);
    let before = area.stats().pages_in_use;
    let store = build(&area, &pattern(5_000));
    assert!(area.stats().pages_in_use > before);
    drop(store);
    assert_eq!(area.stats().pages_in_use, before);
}

#[test]
fn a_full_area_is_an_error_and_the_store_stays_usable() {
    let dsm = dsm();
    let area = area(&dsm, MB);
    let blocks = pattern(1_000_000);
    let mut store = TidStore::new_shared(&area).unwrap();
    let mut added = Vec::new();
    let mut failed = false;
    for (b, offs) in &blocks {
        match store.try_add_block(*b, offs) {
            Ok(()) => added.push((*b, offs.clone())),
            Err(e) => {
                assert_eq!(e.to_string(), "out of shared memory");
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "1 MB should not hold the whole pattern");
    assert!(store.memory_usage() <= MB);
    // Everything added before the failure is there; publish may fail too.
    let (probes, set) = probes(&added);
    if let Ok(h) = store.publish() {
        // SAFETY: just published in this area; destroyed below.
        let view = unsafe { SharedTidStore::open_shared(&area, h) }.unwrap();
        check(&view, &probes, &set);
        drop(view);
        // SAFETY: the only view is gone.
        unsafe { destroy_shared(&area, h) };
    }
}

const CHILD_ENV: &str = "TUSK_RADIX_SHARED_CHILD";

/// Child side of `another_process_reads_the_published_store`: attaches the
/// area's segments at its own addresses and checks every probe.
#[test]
fn shared_child_process_entry() {
    let Ok(desc) = std::env::var(CHILD_ENV) else {
        return; // an ordinary test run
    };
    let mut parts = desc.split(',');
    let handle = tusk_radix::SharedHandle::from_u64(parts.next().unwrap().parse().unwrap());
    let nblocks: u32 = parts.next().unwrap().parse().unwrap();
    let segs: Vec<tusk_shmem::Segment> = parts
        .map(|p| tusk_shmem::Segment::attach(&tusk_shmem::AttachInfo::decode(p).unwrap()).unwrap())
        .collect();
    // SAFETY: the parent published `handle` in the area these segments
    // belong to and keeps it alive until this process exits.
    let view = unsafe { SharedTidStore::open_shared(segs.as_slice(), handle) }.unwrap();
    let (probes, set) = probes(&pattern(nblocks));
    let hits = check(&view, &probes, &set);
    println!(
        "child checked {} probes, {hits} hits, {} TIDs over {} segments",
        probes.len(),
        view.len(),
        segs.len()
    );
}

#[test]
fn another_process_reads_the_published_store() {
    let dsm = dsm();
    let area = area(&dsm, usize::MAX);
    let nblocks = 30_000;
    let blocks = pattern(nblocks);
    let (probes, set) = probes(&blocks);
    let want_hits = probes.iter().filter(|t| set.contains(t)).count();
    let handle = build(&area, &blocks).publish().unwrap();
    let nsegs = area.stats().segments;
    assert!(
        nsegs >= 2,
        "the store should span segments: {:?}",
        area.stats()
    );
    let mut desc = vec![handle.to_u64().to_string(), nblocks.to_string()];
    for i in 0..nsegs {
        desc.push(area.segment(i).unwrap().attach_info().encode());
    }
    let stdout = common::run_child("shared_child_process_entry", CHILD_ENV, &desc.join(","));
    assert!(
        stdout.contains(&format!(
            "child checked {} probes, {} hits, {} TIDs over {nsegs} segments",
            probes.len(),
            want_hits,
            set.len()
        )),
        "{stdout}"
    );
    // SAFETY: the child has exited; no view is open.
    unsafe { destroy_shared(&area, handle) };
}
