#![cfg(not(loom))]
//! DSM segments: pool and fallback, handles, counters, another process.

mod common;

use std::sync::Arc;
use tusk_shmem::{
    huge_pages_usable, AttachInfo, Dsm, DsmConfig, DsmHandle, HugePages, MainRegion, RegionLayout,
    Segment, ShmemError,
};

const MB: usize = 1 << 20;

fn dsm_with_pool(pool: usize, huge_pages: HugePages) -> Dsm {
    let mut layout = RegionLayout::new();
    layout.reserve("something before", 12345, 64);
    let area = Dsm::reserve(&mut layout, pool).unwrap();
    let region = Arc::new(MainRegion::create(layout, HugePages::Off).unwrap());
    Dsm::new(
        Some((region, area)),
        DsmConfig {
            huge_pages,
            ..DsmConfig::default()
        },
    )
}

#[test]
fn segments_come_from_the_pool_until_it_is_full() {
    let dsm = dsm_with_pool(4 * MB, HugePages::Off);
    let a = dsm.create(3 * MB).unwrap();
    assert!(a.from_pool());
    let b = dsm.create(2 * MB).unwrap();
    assert!(!b.from_pool(), "pool has only 1 MB left: fresh segment");
    let c = dsm.create(MB).unwrap();
    assert!(c.from_pool());
    let s = dsm.stats();
    assert_eq!(s.pool_size, 4 * MB);
    assert_eq!(s.pool_segments_created, 2);
    assert_eq!(s.fresh_segments_created, 1);
    assert_eq!(s.pool_bytes, 4 * MB);
    assert_eq!(s.fresh_bytes, 2 * MB);
    // Segments are writable and distinct.
    // SAFETY: each segment is `len` bytes, mapped, and used only here.
    unsafe {
        std::ptr::write_bytes(a.as_ptr(), 1, a.len());
        std::ptr::write_bytes(c.as_ptr(), 3, c.len());
        assert_eq!(*a.as_ptr().add(a.len() - 1), 1);
    }
    drop((a, b, c));
    let s = dsm.stats();
    assert_eq!((s.pool_bytes, s.fresh_bytes), (0, 0));
    // Everything went back and coalesced into one run.
    assert_eq!(dsm.pool_free(), (4 * MB, 1));
}

#[test]
fn no_pool_means_fresh_segments() {
    let dsm = Dsm::new(None, DsmConfig::default());
    let a = dsm.create(100).unwrap();
    assert!(!a.from_pool());
    assert_eq!(a.len(), 4096);
    assert_eq!(dsm.stats().fresh_segments_created, 1);
}

#[test]
fn stale_handles_are_detected() {
    let dsm = dsm_with_pool(MB, HugePages::Off);
    let a = dsm.create(8192).unwrap();
    let h = a.handle();
    assert_eq!(dsm.lookup(h).unwrap().as_ptr(), a.as_ptr());
    drop(a);
    assert!(matches!(dsm.lookup(h), Err(ShmemError::StaleHandle { .. })));
    // The slot is reused with a new generation; the old handle stays stale.
    let b = dsm.create(8192).unwrap();
    assert_eq!(b.handle().slot(), h.slot());
    assert_ne!(b.handle(), h);
    assert!(matches!(dsm.lookup(h), Err(ShmemError::StaleHandle { .. })));
    assert!(dsm.lookup(b.handle()).is_ok());
    // Handles that never existed.
    assert!(dsm.lookup(DsmHandle::from_u64(u64::MAX)).is_err());
    assert!(dsm.lookup(DsmHandle::from_u64(0)).is_err());
}

#[test]
fn running_out_of_slots_is_an_error() {
    let dsm = Dsm::new(
        None,
        DsmConfig {
            max_segments: 2,
            huge_pages: HugePages::Off,
        },
    );
    let _a = dsm.create(1).unwrap();
    let b = dsm.create(1).unwrap();
    assert!(matches!(
        dsm.create(1),
        Err(ShmemError::TooManySegments { max: 2 })
    ));
    drop(b);
    assert!(dsm.create(1).is_ok());
}

#[test]
fn fresh_segments_fall_back_when_no_huge_pages_are_free() {
    // `on` is treated as `try` for DSM segments: never an error for lack of
    // huge pages. Passes with and without huge pages reserved.
    for setting in [HugePages::Try, HugePages::On] {
        let dsm = Dsm::new(
            None,
            DsmConfig {
                huge_pages: setting,
                ..DsmConfig::default()
            },
        );
        let usable = huge_pages_usable();
        let seg = dsm.create(4 * MB).unwrap();
        if usable < 2 {
            assert!(!seg.huge_pages());
            assert_eq!(dsm.stats().fresh_huge_pages, 0);
        } else if seg.huge_pages() {
            assert_eq!(dsm.stats().fresh_huge_pages, 2);
        }
        // SAFETY: the segment is `len` bytes and used only here.
        unsafe { std::ptr::write_bytes(seg.as_ptr(), 7, seg.len()) };
    }
}

#[test]
fn attach_in_this_process_gives_a_new_address_for_the_same_bytes() {
    let dsm = dsm_with_pool(4 * MB, HugePages::Off);
    let pool_seg = dsm.create(64 * 1024).unwrap();
    let fresh_seg = dsm.create(8 * MB).unwrap();
    for seg in [&pool_seg, &fresh_seg] {
        let info = seg.attach_info();
        let other = Segment::attach(&info).unwrap();
        assert_ne!(other.as_ptr(), seg.as_ptr());
        // SAFETY: both mappings are `len` bytes of the same file.
        unsafe {
            *seg.as_ptr().add(100) = 0xAB;
            assert_eq!(*other.as_ptr().add(100), 0xAB);
            *other.as_ptr().add(seg.len() - 1) = 0xCD;
            assert_eq!(*seg.as_ptr().add(seg.len() - 1), 0xCD);
        }
        assert_eq!(AttachInfo::decode(&info.encode()), Some(info));
    }
}

const CHILD_ENV: &str = "TUSK_SHMEM_ATTACH_CHILD";

/// Runs in the child process (re-executed test binary): maps the segment the
/// parent described, checks the parent's bytes, writes an answer.
#[test]
fn child_process_entry() {
    let Ok(desc) = std::env::var(CHILD_ENV) else {
        return; // an ordinary test run: nothing to do
    };
    for part in desc.split(',') {
        let info = AttachInfo::decode(part).expect("attach info");
        let seg = Segment::attach(&info).expect("attach in child");
        // SAFETY: the mapping is `len` bytes; the parent waits for us.
        let bytes = unsafe { std::slice::from_raw_parts_mut(seg.as_ptr(), seg.len()) };
        for (i, b) in bytes.iter().enumerate().take(4096) {
            assert_eq!(*b, (i % 251) as u8, "byte {i} differs in the child");
        }
        bytes[0] = 0x5A;
        let last = bytes.len() - 1;
        bytes[last] = 0xA5;
        println!("child-mapped-at {:p}", seg.as_ptr());
    }
}

#[test]
fn another_process_attaches_by_handle_description() {
    let dsm = dsm_with_pool(4 * MB, HugePages::Off);
    let pool_seg = dsm.create(MB).unwrap();
    let fresh_seg = dsm.create(8 * MB).unwrap();
    assert!(pool_seg.from_pool() && !fresh_seg.from_pool());
    let mut desc = Vec::new();
    for seg in [&pool_seg, &fresh_seg] {
        // SAFETY: the segment is `len` bytes and the child only runs below.
        let bytes = unsafe { std::slice::from_raw_parts_mut(seg.as_ptr(), seg.len()) };
        for (i, b) in bytes.iter_mut().enumerate().take(4096) {
            *b = (i % 251) as u8;
        }
        // Another participant finds the segment by its handle.
        let found = dsm.lookup(seg.handle()).unwrap();
        desc.push(found.attach_info().encode());
    }
    let stdout = common::run_child("child_process_entry", CHILD_ENV, &desc.join(","));
    assert_eq!(stdout.matches("child-mapped-at").count(), 2, "{stdout}");
    for seg in [&pool_seg, &fresh_seg] {
        // SAFETY: as above; the child has exited.
        unsafe {
            assert_eq!(*seg.as_ptr(), 0x5A);
            assert_eq!(*seg.as_ptr().add(seg.len() - 1), 0xA5);
        }
    }
}

/// Threads create, look up and drop segments at once; handles never alias and
/// every pool page comes back.
#[test]
fn concurrent_create_lookup_destroy() {
    let dsm = dsm_with_pool(4 * MB, HugePages::Off);
    std::thread::scope(|s| {
        for t in 0..4usize {
            let dsm = dsm.clone();
            s.spawn(move || {
                let mut old = Vec::new();
                for i in 0..300usize {
                    let seg = dsm.create(4096 * (1 + (i + t) % 40)).unwrap();
                    // SAFETY: the segment is ours and at least 4 kB.
                    unsafe { *seg.as_ptr() = t as u8 };
                    let again = dsm.lookup(seg.handle()).unwrap();
                    assert_eq!(again.as_ptr(), seg.as_ptr());
                    // SAFETY: as above.
                    assert_eq!(unsafe { *again.as_ptr() }, t as u8);
                    old.push(seg.handle());
                }
                for h in old {
                    assert!(dsm.lookup(h).is_err(), "handle {h} outlived its segment");
                }
            });
        }
    });
    let s = dsm.stats();
    assert_eq!((s.pool_bytes, s.fresh_bytes), (0, 0));
    assert_eq!(dsm.pool_free(), (4 * MB, 1));
}
