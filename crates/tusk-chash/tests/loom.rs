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
//!
//! The reader is the model's main thread. A loom model whose reads never
//! meet a concurrent write proves nothing (tusk-exec's slots model and
//! tusk-shmem's segment-table model were such cases), so each model below
//! was checked twice. First, counting the explored executions in which the
//! reader's lookups ended after at least one of the writer's operations:
//! 4554 of 4566 (torn entry), 29955 of 29980 (spilled entry), 1572 of 1581
//! (publication). Second, weakening one ordering of the seqlock in
//! `src/chash.rs` at a time and seeing the model fail:
//!
//! * W1: the header store of `unlock_changed` `Release` → `Relaxed`;
//! * W2: the `fence(Release)` after taking the lock in `lock` removed;
//! * W3: the `fence(Acquire)` between the slot loads and the header
//!   re-check in `read` removed;
//! * W4: the first header load of `read` (`s1`) `Acquire` → `Relaxed`.
//!
//! No model catches `unlock_unchanged`'s store weakened to `Relaxed`, and
//! none can: a reader cannot tell, because the writer changed nothing after
//! `lock`'s `fence(Release)`, which already orders its earlier writes before
//! the restored header. (That `Release` keeps the writer's own loads under
//! the lock before the next writer's stores, a writer-writer matter.)
#![cfg(loom)]

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
/// Fails under each of W1–W4 (`lookup(1)` returns `Some(20)`: the old key
/// with the new value).
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

/// Overflow counts and a seqlock in an overflow bucket: keys 0..SLOTS fill
/// the home bucket, 97 and 99 spill into bucket 1. The writer removes 99
/// (the home bucket's count drops from 2 to 1) and inserts 98, which spills
/// into the slot 99 left (the count rises to 2 again). A reader that looks
/// up through the home bucket always reaches 97, and reads the reused slot
/// whole. Fails under each of W1–W4 (`lookup(99)` returns `Some(980)`).
/// (The model used to churn only the home bucket; the spilled entry's path
/// then hung on the home header's overflow count alone, which is non-zero
/// in every value that word takes, so no weakening could make it fail.)
#[test]
fn spilled_entry_stays_reachable() {
    loom::model(|| {
        let t = table_with((0..SLOTS as u32).chain([97, 99]));
        let w = {
            let t = t.clone();
            thread::spawn(move || {
                assert!(t.remove(&tag(99), 990));
                t.insert(&tag(98), 980).unwrap();
            })
        };
        let a = t.lookup(&tag(99));
        assert!(a.is_none() || a == Some(990), "{a:?}");
        assert_eq!(t.lookup(&tag(97)), Some(970));
        w.join().unwrap();
        assert_eq!(t.lookup(&tag(97)), Some(970));
        assert_eq!(t.lookup(&tag(98)), Some(980));
        assert_eq!(t.lookup(&tag(99)), None);
    });
}

/// Publication through the table: the writer inserts 42 (spilled, so it
/// also raises the home bucket's overflow count) and then removes 3 from the
/// home bucket. A reader that sees the remove has seen the insert that came
/// before it. Fails under W2 and W3: the reader can then accept the removed
/// slot under the header from before both changes, whose overflow count is
/// 0, and stops at the home bucket. W1 and W4 pass here, rightly: a reader
/// that saw the remove read the emptied slot, written after the writer's
/// `fence(Release)`, and its own `fence(Acquire)` synchronises with that.
/// (The model used to publish through a release/acquire flag of its own;
/// with that, every write of the writer happens before the lookups whatever
/// the table's orderings are, so no weakening could make it fail.)
#[test]
fn published_changes_are_seen() {
    loom::model(|| {
        let t = table_with(0..SLOTS as u32);
        let w = {
            let t = t.clone();
            thread::spawn(move || {
                t.insert(&tag(42), 420).unwrap();
                assert!(t.remove(&tag(3), 30));
            })
        };
        let removed = t.lookup(&tag(3)).is_none();
        let inserted = t.lookup(&tag(42));
        if removed {
            assert_eq!(inserted, Some(420));
        }
        w.join().unwrap();
        assert_eq!(t.lookup(&tag(42)), Some(420));
        assert_eq!(t.lookup(&tag(3)), None);
    });
}
