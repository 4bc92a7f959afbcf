//! Lock-free push onto a bucket chain, used by the Parallel Hash Join build.
//!
//! A chain is a singly linked list of entry numbers: the bucket head holds
//! 1 + the first entry (0 = empty), each entry's `next` the following one.
//! Several threads push different entries onto the same chains at once:
//!
//! 1. read the head (`cur`),
//! 2. store `cur` into the new entry's `next` (relaxed: nobody reads it yet),
//! 3. compare-and-swap the head from `cur` to the new entry with *release*
//!    ordering, so whoever later acquires the head also sees step 2;
//!    on failure retry from the value the CAS returned.
//!
//! No entry is lost: a CAS only succeeds against the exact head it linked
//! behind. Readers in tusk only walk the chains after a barrier that follows
//! all pushes (the phaser's mutex orders them), so they may use relaxed loads;
//! the release/acquire pair is what makes a concurrent reader safe too, and
//! the loom model below checks it (`RUSTFLAGS="--cfg tusk_exec_loom"`, see
//! `.ci/loom`).

#[cfg(tusk_exec_loom)]
pub(crate) use loom::sync::atomic::AtomicU32;
#[cfg(not(tusk_exec_loom))]
pub(crate) use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::{Relaxed, Release};

/// Pushes `entry` (0-based) onto the chain headed by `head`; `next` is the
/// entry's link field.
#[inline]
pub(crate) fn push(head: &AtomicU32, next: &AtomicU32, entry: u32) {
    let mut cur = head.load(Relaxed);
    loop {
        next.store(cur, Relaxed);
        match head.compare_exchange_weak(cur, entry + 1, Release, Relaxed) {
            Ok(_) => return,
            Err(actual) => cur = actual,
        }
    }
}

#[cfg(all(test, tusk_exec_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use std::sync::atomic::Ordering::Acquire;

    /// Two threads push two entries each onto one chain while a third walks
    /// it: the walker only ever sees fully linked entries, and at the end the
    /// chain holds all four exactly once.
    #[test]
    fn concurrent_pushes_lose_nothing() {
        loom::model(|| {
            let head = Arc::new(AtomicU32::new(0));
            let next: Arc<Vec<AtomicU32>> =
                Arc::new((0..4).map(|_| AtomicU32::new(u32::MAX)).collect());
            let pushers: Vec<_> = (0..2u32)
                .map(|t| {
                    let (head, next) = (head.clone(), next.clone());
                    loom::thread::spawn(move || {
                        for e in [2 * t, 2 * t + 1] {
                            push(&head, &next[e as usize], e);
                        }
                    })
                })
                .collect();
            // A concurrent reader following acquire loads of the head.
            let mut seen = 0;
            let mut e = head.load(Acquire);
            while e != 0 {
                let n = next[e as usize - 1].load(Relaxed);
                assert_ne!(
                    n,
                    u32::MAX,
                    "reached an entry whose link was not yet written"
                );
                seen += 1;
                e = n;
            }
            assert!(seen <= 4);
            for p in pushers {
                p.join().unwrap();
            }
            let mut found = vec![];
            let mut e = head.load(Acquire);
            while e != 0 {
                found.push(e - 1);
                e = next[e as usize - 1].load(Relaxed);
            }
            found.sort_unstable();
            assert_eq!(found, vec![0, 1, 2, 3]);
        });
    }
}

#[cfg(all(test, not(tusk_exec_loom)))]
mod tests {
    use super::*;

    #[test]
    fn threads_pushing_onto_shared_chains_lose_nothing() {
        const ENTRIES: u32 = 40_000;
        let heads: Vec<AtomicU32> = (0..7).map(|_| AtomicU32::new(0)).collect();
        let next: Vec<AtomicU32> = (0..ENTRIES).map(|_| AtomicU32::new(u32::MAX)).collect();
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let (heads, next) = (&heads, &next);
                s.spawn(move || {
                    for e in (t..ENTRIES).step_by(4) {
                        push(&heads[(e % 7) as usize], &next[e as usize], e);
                    }
                });
            }
        });
        let mut seen = vec![false; ENTRIES as usize];
        for (b, h) in heads.iter().enumerate() {
            let mut e = h.load(Relaxed);
            while e != 0 {
                let i = e as usize - 1;
                assert_eq!(i % 7, b, "entry on the wrong chain");
                assert!(!seen[i], "entry linked twice");
                seen[i] = true;
                e = next[i].load(Relaxed);
            }
        }
        assert!(seen.iter().all(|&s| s), "an entry was lost");
    }
}
