#![cfg(not(loom))]
//! DSA areas: invariants, limits, growth, concurrency.

use proptest::prelude::*;
mod common;

use std::sync::Arc;
use tusk_shmem::{
    DsaArea, DsaConfig, DsaPointer, DsaPtr, Dsm, DsmConfig, HugePages, MainRegion, RegionLayout,
    ShmemError,
};

const KB: usize = 1 << 10;
const MB: usize = 1 << 20;

fn dsm(pool: usize) -> Dsm {
    let config = DsmConfig {
        huge_pages: HugePages::Off,
        ..DsmConfig::default()
    };
    if pool == 0 {
        return Dsm::new(None, config);
    }
    let mut layout = RegionLayout::new();
    let area = Dsm::reserve(&mut layout, pool).unwrap();
    let region = Arc::new(MainRegion::create(layout, HugePages::Off).unwrap());
    Dsm::new(Some((region, area)), config)
}

fn small_area(dsm: &Dsm, limit: usize) -> DsaArea {
    area_with(dsm, limit, true)
}

fn area_with(dsm: &Dsm, limit: usize, prepare_ahead: bool) -> DsaArea {
    DsaArea::create(
        dsm,
        DsaConfig {
            initial_segment_size: 256 * KB,
            max_segment_size: 4 * MB,
            max_total_size: limit,
            prepare_ahead,
        },
    )
    .unwrap()
}

fn fill(area: &DsaArea, p: DsaPointer, len: usize, tag: u8) {
    // SAFETY: `p` is a live allocation of at least `len` bytes owned by the caller.
    unsafe { std::ptr::write_bytes(area.get(p), tag, len) }
}

fn check(area: &DsaArea, p: DsaPointer, len: usize, tag: u8) -> bool {
    // SAFETY: as in `fill`.
    let s = unsafe { std::slice::from_raw_parts(area.get(p), len) };
    s.iter().all(|&b| b == tag)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Live allocations never overlap (each keeps its own fill pattern),
    /// and after freeing everything every page is back and coalesced.
    #[test]
    fn allocations_never_overlap_and_everything_returns(
        ops in proptest::collection::vec(
            (prop_oneof![1usize..200, 200usize..9000, 9000usize..300_000], any::<bool>(), any::<prop::sample::Index>()),
            1..150)
    ) {
        let dsm = dsm(8 * MB);
        let area = small_area(&dsm, usize::MAX);
        let mut live: Vec<(DsaPointer, usize, u8)> = Vec::new();
        let mut tag = 0u8;
        for (size, alloc, pick) in ops {
            if alloc || live.is_empty() {
                let p = area.allocate(size).unwrap();
                prop_assert!(!p.is_null());
                prop_assert_eq!(p.offset() % 16, 0);
                tag = tag.wrapping_add(1).max(1);
                fill(&area, p, size, tag);
                live.push((p, size, tag));
            } else {
                let (p, size, tag) = live.swap_remove(pick.index(live.len()));
                prop_assert!(check(&area, p, size, tag), "allocation {:?} was overwritten", p);
                area.free(p);
            }
        }
        for &(p, size, tag) in &live {
            prop_assert!(check(&area, p, size, tag), "allocation {:?} was overwritten", p);
        }
        // Address ranges are disjoint too.
        let mut ranges: Vec<(usize, usize)> = live.iter().map(|&(p, s, _)| (area.get(p) as usize, s)).collect();
        ranges.sort();
        for w in ranges.windows(2) {
            prop_assert!(w[0].0 + w[0].1 <= w[1].0);
        }
        for (p, _, _) in live.drain(..) {
            area.free(p);
        }
        let s = area.stats();
        prop_assert_eq!(s.pages_in_use, 0, "{:?}", s);
        for runs in area.free_runs() {
            prop_assert!(runs <= 1, "free pages did not coalesce: {:?}", area.free_runs());
        }
    }
}

#[test]
fn limit_fails_cleanly_and_freeing_makes_room() {
    let dsm = dsm(0);
    let area = small_area(&dsm, 2 * MB);
    let mut chunks = Vec::new();
    let err = loop {
        match area.allocate(32 * KB) {
            Ok(p) => chunks.push(p),
            Err(e) => break e,
        }
        assert!(chunks.len() < 1000, "the limit was not enforced");
    };
    assert!(matches!(err, ShmemError::OutOfSharedMemory { .. }));
    assert!(err.to_string().starts_with("out of shared memory"), "{err}");
    assert!(area.stats().total_size <= 2 * MB);
    // Nearly all of the 2 MB is usable.
    assert!(chunks.len() * 32 * KB > 2 * MB * 8 / 10, "{}", chunks.len());
    // A request larger than the whole limit fails too.
    assert!(matches!(
        area.allocate(3 * MB),
        Err(ShmemError::OutOfSharedMemory { .. })
    ));
    for p in chunks.drain(..) {
        area.free(p);
    }
    // Freed memory is reused without growing.
    for _ in 0..10 {
        chunks.push(area.allocate(32 * KB).unwrap());
    }
}

#[test]
fn segments_grow_geometrically_and_fall_back_from_the_pool() {
    // A 2 MB pool: the first segments come from it, later ones are fresh.
    let dsm = dsm(2 * MB);
    let area = small_area(&dsm, usize::MAX);
    let mut ps = Vec::new();
    for _ in 0..(24 * MB / (128 * KB)) {
        ps.push(area.allocate(128 * KB).unwrap());
    }
    let s = area.stats();
    assert!(s.segments >= 4 && s.segments <= 16, "{s:?}");
    assert!(
        s.pool_segments >= 1 && s.pool_segments < s.segments,
        "{s:?}"
    );
    let sizes: Vec<usize> = (0..s.segments)
        .map(|i| area.segment(i).unwrap().len())
        .collect();
    for w in sizes.windows(2) {
        assert!(w[1] >= w[0], "segment sizes shrink: {sizes:?}");
    }
    let d = dsm.stats();
    assert!(d.pool_segments_created >= 1 && d.fresh_segments_created >= 1);
    // A request larger than the next segment gets a segment of its own size.
    let big = area.allocate(9 * MB).unwrap();
    fill(&area, big, 9 * MB, 9);
    area.free(big);
    for p in ps {
        area.free(p);
    }
    assert_eq!(area.stats().pages_in_use, 0);
    drop(area);
    let d = dsm.stats();
    assert_eq!((d.pool_bytes, d.fresh_bytes), (0, 0), "{d:?}");
}

#[test]
fn typed_pointers_and_linked_structures() {
    #[repr(C)]
    struct Node {
        value: u64,
        next: DsaPtr<Node>,
    }
    let dsm = dsm(0);
    let area = small_area(&dsm, usize::MAX);
    let mut head = DsaPtr::<Node>::NULL;
    for v in 0..1000u64 {
        let n = area.allocate_typed::<Node>().unwrap();
        // SAFETY: a fresh allocation of a `Node`, owned here.
        unsafe {
            n.get(&area).write(Node {
                value: v,
                next: head,
            })
        };
        head = n;
    }
    let (mut sum, mut p) = (0, head);
    while !p.is_null() {
        // SAFETY: every node was initialised above.
        let node = unsafe { &*p.get(&area) };
        sum += node.value;
        let next = node.next;
        area.free(p.raw());
        p = next;
    }
    assert_eq!(sum, 999 * 1000 / 2);
    assert_eq!(area.stats().pages_in_use, 0);
}

#[test]
#[should_panic(expected = "not an allocation")]
fn freeing_a_wild_pointer_panics() {
    let dsm = dsm(0);
    let area = small_area(&dsm, usize::MAX);
    let p = area.allocate(64 * KB).unwrap();
    area.free(p.offset_by(4096));
}

/// Several threads allocate and free small objects and chunks at once while
/// the area grows; every allocation keeps its contents.
#[test]
fn stress_concurrent_allocation_and_growth() {
    stress(true);
}

#[test]
fn stress_concurrent_allocation_growing_on_demand() {
    stress(false);
}

fn stress(prepare_ahead: bool) {
    let dsm = dsm(4 * MB);
    let area = Arc::new(area_with(&dsm, usize::MAX, prepare_ahead));
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            let area = area.clone();
            std::thread::spawn(move || {
                let mut live: Vec<(DsaPointer, usize, u8)> = Vec::new();
                let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ t as u64;
                for i in 0..4000u32 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let size = match x % 4 {
                        0 => 32 * KB,
                        1 => (x as usize >> 8) % 9000 + 1,
                        2 => (x as usize >> 8) % 100 + 1,
                        _ => 128 * KB,
                    };
                    let tag = (i as u8) ^ (t << 6) | 1;
                    let p = area.allocate(size).unwrap();
                    fill(&area, p, size, tag);
                    live.push((p, size, tag));
                    if x.is_multiple_of(3) {
                        let (p, s, tag) = live.swap_remove((x >> 20) as usize % live.len());
                        assert!(check(&area, p, s, tag));
                        area.free(p);
                    }
                }
                for (p, s, tag) in live {
                    assert!(check(&area, p, s, tag));
                    area.free(p);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = area.stats();
    assert_eq!(s.pages_in_use, 0, "{s:?}");
    assert!(area.free_runs().iter().all(|&r| r <= 1));
}

/// Chunks handed out concurrently are disjoint (the lock-free tail path).
#[test]
fn concurrent_chunks_are_disjoint() {
    let dsm = dsm(0);
    let area = Arc::new(small_area(&dsm, usize::MAX));
    let per_thread: Vec<Vec<usize>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let area = area.clone();
                s.spawn(move || {
                    (0..500)
                        .map(|_| area.get(area.allocate(32 * KB).unwrap()) as usize)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<usize> = per_thread.concat();
    all.sort();
    for w in all.windows(2) {
        assert!(w[0] + 32 * KB <= w[1]);
    }
}

const CHILD_ENV: &str = "TUSK_SHMEM_DSA_CHILD";

#[repr(C)]
struct ListNode {
    value: u64,
    next: DsaPtr<ListNode>,
}

/// Child side of `another_process_walks_a_list_by_dsa_pointers`: maps every
/// segment of the area at its own addresses and follows the pointers.
#[test]
fn dsa_child_process_entry() {
    let Ok(desc) = std::env::var(CHILD_ENV) else {
        return; // an ordinary test run
    };
    let mut parts = desc.split(',');
    let head = DsaPointer::from_u64(parts.next().unwrap().parse().unwrap());
    let segs: Vec<tusk_shmem::Segment> = parts
        .map(|p| tusk_shmem::Segment::attach(&tusk_shmem::AttachInfo::decode(p).unwrap()).unwrap())
        .collect();
    let resolve = |p: DsaPointer| segs[p.segment()].as_ptr().wrapping_add(p.offset());
    let (mut sum, mut n, mut p) = (0u64, 0, head);
    while !p.is_null() {
        // SAFETY: the parent built the list in these segments and waits for us.
        let node = unsafe { &*resolve(p).cast::<ListNode>() };
        sum += node.value;
        n += 1;
        p = node.next.raw();
    }
    println!(
        "child-walked {n} nodes sum {sum} over {} segments",
        segs.len()
    );
}

#[test]
fn another_process_walks_a_list_by_dsa_pointers() {
    let dsm = dsm(2 * MB);
    let area = small_area(&dsm, usize::MAX);
    let mut head = DsaPtr::<ListNode>::NULL;
    let mut expected = 0u64;
    // Page-sized nodes so that the list spans several segments, some from
    // the pool and some fresh.
    for v in 1..=400u64 {
        let n = DsaPtr::<ListNode>::from_raw(area.allocate(12 * KB).unwrap());
        // SAFETY: a fresh allocation large enough for a node.
        unsafe {
            n.get(&area).write(ListNode {
                value: v,
                next: head,
            })
        };
        head = n;
        expected += v;
    }
    let nsegs = area.stats().segments;
    assert!(
        nsegs >= 3 && area.stats().pool_segments >= 1,
        "{:?}",
        area.stats()
    );
    let mut desc = vec![head.raw().to_u64().to_string()];
    for i in 0..nsegs {
        let seg = area.segment(i).unwrap();
        // Another participant would look the segment up by its handle.
        let found = dsm.lookup(area.segment_handle(i).unwrap()).unwrap();
        assert_eq!(found.as_ptr(), seg.as_ptr());
        desc.push(found.attach_info().encode());
    }
    let stdout = common::run_child("dsa_child_process_entry", CHILD_ENV, &desc.join(","));
    assert!(
        stdout.contains(&format!(
            "child-walked 400 nodes sum {expected} over {nsegs} segments"
        )),
        "{stdout}"
    );
}
