//! Loom models of the memory-ordering arguments in the crate doc. Run with
//! `.ci/loom` (`RUSTFLAGS="--cfg loom" cargo test -p tusk-chash --release --test loom`).
//!
//! Every model uses a table with a single home bucket (capacity 3), so all
//! keys collide and overflow chains form with a handful of entries.
//!
//! The models have one writer each: they check the lock-free read side
//! against a writer (seqlock, overflow counts, publication). Two writers
//! racing for one bucket lock are not modelled: loom 0.7 cannot explore a
//! spinning test-and-set lock (even a two-thread toy lock with `yield_now`
//! exceeds its branch limit), so the writer-writer race (insert-if-absent
//! agreement) is covered by the multi-thread stress test in `src/tests.rs`.
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use std::sync::Arc;
use tusk_chash::{BufferMapping, BufferTag, ChashTable, SLOTS};

fn tag(b: u32) -> BufferTag {
    BufferTag::new(1, b)
}

fn table_with(keys: impl IntoIterator<Item = u32>) -> Arc<ChashTable> {
    let t = ChashTable::with_capacity(3);
    assert_eq!(t.home_buckets(), 1);
    for b in keys {
        t.insert(&tag(b), b * 10).unwrap();
    }
    Arc::new(t)
}

/// Seqlock: a slot is emptied and reused for another key while a reader
/// looks both keys up. Without the header re-check the reader could pair the
/// new key word with the old value word; it must only ever see whole entries.
#[test]
fn reader_never_sees_a_torn_entry() {
    loom::model(|| {
        let t = table_with([1]);
        let w = {
            let t = t.clone();
            thread::spawn(move || {
                assert!(t.remove(&tag(1), 10));
                t.insert(&tag(2), 20).unwrap();
            })
        };
        let a = t.lookup(&tag(2));
        let b = t.lookup(&tag(1));
        assert!(a.is_none() || a == Some(20), "{a:?}");
        assert!(b.is_none() || b == Some(10), "{b:?}");
        w.join().unwrap();
        assert_eq!(t.lookup(&tag(2)), Some(20));
        assert_eq!(t.lookup(&tag(1)), None);
    });
}

/// Overflow counts: an entry that spilled into the next bucket stays
/// reachable while entries of its home bucket are removed and replaced.
#[test]
fn spilled_entry_stays_reachable() {
    loom::model(|| {
        // Keys 0..SLOTS fill the home bucket; key 99 spills into bucket 1.
        let t = table_with((0..SLOTS as u32).chain([99]));
        let w = {
            let t = t.clone();
            thread::spawn(move || {
                assert!(t.remove(&tag(0), 0));
                t.insert(&tag(50), 500).unwrap();
            })
        };
        assert_eq!(t.lookup(&tag(99)), Some(990));
        w.join().unwrap();
        assert_eq!(t.lookup(&tag(99)), Some(990));
        assert_eq!(t.lookup(&tag(50)), Some(500));
    });
}

/// Publication: once a writer's insert (spilled, so it also raises the home
/// bucket's overflow count) and remove happen before a reader's lookup
/// through a release/acquire flag, the reader sees their effect.
#[test]
fn published_changes_are_seen() {
    loom::model(|| {
        let t = table_with(0..SLOTS as u32);
        let flag = Arc::new(AtomicBool::new(false));
        let w = {
            let (t, flag) = (t.clone(), flag.clone());
            thread::spawn(move || {
                t.insert(&tag(42), 420).unwrap();
                assert!(t.remove(&tag(3), 30));
                flag.store(true, Ordering::Release);
            })
        };
        if flag.load(Ordering::Acquire) {
            assert_eq!(t.lookup(&tag(42)), Some(420));
            assert_eq!(t.lookup(&tag(3)), None);
        }
        w.join().unwrap();
    });
}
