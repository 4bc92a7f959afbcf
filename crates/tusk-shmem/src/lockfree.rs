//! The two lock-free pieces of the DSA allocator, small enough to model
//! exhaustively with loom (`RUSTFLAGS="--cfg loom"`, run by `.ci/loom`).
//!
//! * [`BumpPages`]: a segment's never-used pages, handed out by compare-and-swap
//!   on one word. Two participants that take runs at the same time get
//!   disjoint runs, and no run passes the end.
//! * [`SegmentTable`]: the area's segment index → base address table. Only
//!   the one thread holding the area's grow lock writes it; any thread reads
//!   it without a lock.
//!
//! Memory ordering. `BumpPages::take` needs no ordering with other memory: a
//! run is only *reserved* by the CAS, and its contents are written by the
//! thread that reserved it and reach other threads through whatever hands the
//! pointer over (which must itself synchronise). So the CAS is `Relaxed`; the
//! atomicity of the read-modify-write alone makes the runs disjoint.
//! `SegmentTable::publish` stores the base with `Release` after the grower has
//! written the segment's header (page map), and `count` with `Release` after
//! that; `base`/`count` load with `Acquire`. A reader that sees index `i` in
//! `count`, or a non-null base at `i`, therefore also sees the header writes
//! that preceded publication.

// Under loom only the models use this module.
#![cfg_attr(loom, allow(dead_code))]

#[cfg(loom)]
use loom::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Never-used pages `[next, end)` of one segment.
#[derive(Debug)]
pub(crate) struct BumpPages {
    next: AtomicUsize,
    end: usize,
}

impl BumpPages {
    pub(crate) fn new(start: usize, end: usize) -> BumpPages {
        assert!(start <= end);
        BumpPages {
            next: AtomicUsize::new(start),
            end,
        }
    }

    /// Reserves `n` pages; returns the first page, or `None` if fewer than `n`
    /// are left (in which case nothing changes).
    pub(crate) fn take(&self, n: usize) -> Option<usize> {
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let new = cur.checked_add(n).filter(|&e| e <= self.end)?;
            match self
                .next
                .compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(cur),
                Err(actual) => cur = actual,
            }
        }
    }

    /// First page never handed out (a snapshot).
    pub(crate) fn high_water(&self) -> usize {
        self.next.load(Ordering::Relaxed)
    }
}

/// Segment index → base address of the segment in this process.
#[derive(Debug)]
pub(crate) struct SegmentTable {
    bases: Box<[AtomicPtr<u8>]>,
    count: AtomicUsize,
}

impl SegmentTable {
    pub(crate) fn new(capacity: usize) -> SegmentTable {
        SegmentTable {
            bases: (0..capacity)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            count: AtomicUsize::new(0),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.bases.len()
    }

    /// Makes segment `index` (which must be the next one) visible. Only one
    /// thread at a time may publish (the area's grow lock).
    pub(crate) fn publish(&self, index: usize, base: *mut u8) {
        assert_eq!(index, self.count.load(Ordering::Relaxed));
        assert!(!base.is_null());
        self.bases[index].store(base, Ordering::Release);
        self.count.store(index + 1, Ordering::Release);
    }

    /// Segments published so far.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Base of segment `index`, null if it is not published (yet).
    pub(crate) fn base(&self, index: usize) -> *mut u8 {
        match self.bases.get(index) {
            Some(b) => b.load(Ordering::Acquire),
            None => std::ptr::null_mut(),
        }
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// Two participants take runs of one segment's five pages at once (the
    /// main thread one of 3, a spawned thread two of 2): the runs are
    /// disjoint, inside the segment, and exactly two fit. The CAS is
    /// `Relaxed` by design, so there is no ordering to weaken; the model
    /// was shown to fail when the CAS is split into a load and a store
    /// (overlapping runs). In 7 of its 12 executions the main thread's
    /// take ran after the other thread's first take, so it does race.
    #[test]
    fn concurrent_takes_are_disjoint_and_bounded() {
        loom::model(|| {
            let b = Arc::new(BumpPages::new(1, 6));
            let b2 = b.clone();
            let t = thread::spawn(move || (b2.take(2), b2.take(2)));
            let mine = b.take(3);
            let (a1, a2) = t.join().unwrap();
            let mut runs: Vec<(usize, usize)> = Vec::new();
            for (r, n) in [(mine, 3), (a1, 2), (a2, 2)] {
                if let Some(s) = r {
                    assert!(s >= 1 && s + n <= 6);
                    runs.push((s, s + n));
                }
            }
            runs.sort();
            for w in runs.windows(2) {
                assert!(w[0].1 <= w[1].0, "overlapping runs {runs:?}");
            }
            // 5 pages: 3 + 2 fit, a third run cannot.
            assert_eq!(runs.len(), 2);
        });
    }

    /// A grower writes a segment's header and publishes the segment while
    /// a reader looks at `count` and at the base: whichever it sees, it
    /// also sees the header. The reader is a spawned thread: on the
    /// model's main thread, loom never ran its `count` load after the
    /// grower's publication (0 of 6 executions), so weakening `count`'s
    /// release or acquire went unnoticed. Now the model fails with any one
    /// of `publish`'s two stores or `count`'s or `base`'s load weakened to
    /// `Relaxed`.
    #[test]
    fn published_segment_header_is_visible() {
        loom::model(|| {
            let table = Arc::new(SegmentTable::new(2));
            // The "segment": its first word is the header the grower writes.
            let header = Arc::new(AtomicUsize::new(0));
            let seg = Box::into_raw(Box::new(0u8));
            let seg_addr = seg as usize;
            let grower = {
                let (table, header) = (table.clone(), header.clone());
                thread::spawn(move || {
                    header.store(42, Ordering::Relaxed);
                    table.publish(0, seg_addr as *mut u8);
                })
            };
            let reader = {
                let table = table.clone();
                thread::spawn(move || {
                    if table.count() == 1 {
                        assert_eq!(table.base(0) as usize, seg_addr);
                        assert_eq!(header.load(Ordering::Relaxed), 42);
                    }
                    if !table.base(0).is_null() {
                        assert_eq!(header.load(Ordering::Relaxed), 42);
                    }
                })
            };
            grower.join().unwrap();
            reader.join().unwrap();
            assert_eq!(table.count(), 1);
            // SAFETY: `seg` came from Box::into_raw above and is freed once.
            drop(unsafe { Box::from_raw(seg) });
        });
    }
}
