//! The hash join's slot array: open addressing over key tags, with the
//! tuples of one tag chained behind their slot.
//!
//! ## Layout
//!
//! A table of *n* build rows has a power of two of 64-bit slots, at least
//! 4/3 · *n* (so at most three in four are used; [`SlotIndex::slots_for`]).
//! A slot is empty (0) or holds
//!
//! ```text
//! tag: u32 | entry: u32        entry = 1 + the tuple's index or ref, bit 31 = MORE
//! ```
//!
//! where *entry* names the first tuple of the slot's *chain*: every build
//! tuple whose key has this tag, linked through the tuples' own `next`
//! fields (0 ends a chain). `MORE` is set when the chain holds more than one
//! tuple, so that a probe of a slot whose chain is a single tuple need not
//! read the tuple to learn it is the last.
//!
//! The tag is the key itself for `integer` and `boolean` keys (*exact* tags:
//! equal tags mean equal keys), otherwise the top 32 bits of the key's
//! 64-bit hash. A key's *home* slot is the top log2(*n*) bits of its hash, so
//! equal tags always have equal homes (an exact tag is the key; a hash tag
//! contains the home bits), and a tag lives in exactly one slot: the first
//! one at or after its home that holds it, with no empty slot in between
//! (linear probing; slots are never emptied while the table lives, so a
//! probe stops at the first empty slot).
//!
//! Why slots and not bucket heads: with a bucket array of chain heads a probe
//! reads the bucket (a cache miss) and then the first tuple (another) to
//! compare keys. With exact tags the slot alone answers — the key matches or
//! not, and `MORE` says whether other tuples follow — so a probe that needs
//! no build columns (`count(*)` over a join) costs one cache miss, and even
//! with hash tags a probe key absent from the table is rejected by the slot
//! alone in all but one in 2^(32 − log2 *n*) cases. Linear probing keeps
//! collisions in the same cache line (eight slots) most of the time.
//!
//! ## Concurrency
//!
//! In a Parallel Hash Join every participant inserts its own tuples into the
//! shared slots at once ([`insert`]). A slot only ever changes from empty to
//! a tag, and then only its entry changes (new chain heads), so:
//!
//! 1. an empty slot is claimed with a compare-and-swap from 0 to (tag, entry)
//!    after the tuple's `next` was set to 0;
//! 2. a slot already holding the tag gets the tuple pushed onto its chain:
//!    the tuple's `next` is set to the current head, then a compare-and-swap
//!    replaces (tag, head) by (tag, entry | MORE);
//! 3. a slot holding another tag is passed for good (its tag never changes).
//!
//! A failed compare-and-swap returns what is there now and the step is
//! retried from it. Both successful swaps use *release* ordering after the
//! relaxed store of `next`, so a reader that acquires the slot sees the
//! link; tusk's probes start only after a barrier that follows every insert,
//! so they may read with relaxed loads. The loom model below checks that no
//! tuple is lost or duplicated when two threads insert tuples of equal and
//! different tags into a small table while a third reads it
//! (`RUSTFLAGS="--cfg tusk_exec_loom"`, run by `.ci/loom`).

#[cfg(tusk_exec_loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::atomic::Ordering::{Relaxed, Release};
#[cfg(not(tusk_exec_loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64};

/// Bit of a slot's entry (and of a probe's head) set when the chain holds
/// more than one tuple.
pub(crate) const MORE: u32 = 1 << 31;
/// The fewest slots a table gets.
const MIN_SLOTS: usize = 1024;
/// The most slots a table gets: homes must fit in a hash tag's 32 bits, and
/// entries in 31.
const MAX_SLOTS: usize = 1 << 31;

#[inline(always)]
pub(crate) fn pack(tag: u32, entry: u32) -> u64 {
    (tag as u64) << 32 | entry as u64
}

#[inline(always)]
pub(crate) fn tag_of(slot: u64) -> u32 {
    (slot >> 32) as u32
}

/// The chain head a slot holds (with its `MORE` bit).
#[inline(always)]
pub(crate) fn entry_of(slot: u64) -> u32 {
    slot as u32
}

/// How keys map to the slots of one table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotIndex {
    shift: u32,
    mask: usize,
    /// Tags are the keys themselves (`integer` and `boolean` keys).
    pub exact: bool,
}

impl SlotIndex {
    pub fn new(nslots: usize, exact: bool) -> SlotIndex {
        assert!(nslots.is_power_of_two() && (MIN_SLOTS..=MAX_SLOTS).contains(&nslots));
        SlotIndex {
            shift: 64 - nslots.trailing_zeros(),
            mask: nslots - 1,
            exact,
        }
    }

    /// Slots for a table of `rows` build rows.
    pub fn slots_for(rows: usize) -> usize {
        (rows + rows / 3)
            .next_power_of_two()
            .clamp(MIN_SLOTS, MAX_SLOTS)
    }

    pub fn len(&self) -> usize {
        self.mask + 1
    }

    #[inline(always)]
    pub fn home(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    /// The tag of an integer key with hash `hash`, or `None` when the key
    /// cannot be in an exact-tag table (a `bigint` probe key outside the
    /// `integer` range of the build keys).
    #[inline(always)]
    pub fn int_tag(&self, hash: u64, key: i64) -> Option<u32> {
        if !self.exact {
            Some((hash >> 32) as u32)
        } else if key as i32 as i64 == key {
            Some(key as u32)
        } else {
            None
        }
    }

    /// The tag of a key with hash `hash` in a hash-tag table.
    #[inline(always)]
    pub fn hash_tag(&self, hash: u64) -> u32 {
        debug_assert!(!self.exact);
        (hash >> 32) as u32
    }

    /// Inserts tuple `entry` (1 + its index or ref, below [`MORE`]) with
    /// `tag` and home `home`; `next` is the tuple's link field. Safe to call
    /// from several threads at once (see the module doc).
    #[inline]
    pub fn insert(&self, slots: &[AtomicU64], home: usize, tag: u32, entry: u32, next: &AtomicU32) {
        debug_assert!(entry != 0 && entry & MORE == 0);
        let mut i = home;
        loop {
            let slot = &slots[i];
            let mut cur = slot.load(Relaxed);
            loop {
                let new = if cur == 0 {
                    next.store(0, Relaxed);
                    pack(tag, entry)
                } else if tag_of(cur) == tag {
                    next.store(entry_of(cur) & !MORE, Relaxed);
                    pack(tag, entry | MORE)
                } else {
                    break;
                };
                match slot.compare_exchange_weak(cur, new, Release, Relaxed) {
                    Ok(_) => return,
                    Err(actual) => cur = actual,
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The chain head (with its `MORE` bit) of `tag`, probing from `home`;
    /// 0 when no tuple has the tag.
    #[inline(always)]
    pub fn find(&self, slots: &[AtomicU64], home: usize, tag: u32) -> u32 {
        let mut i = home;
        loop {
            let cur = slots[i].load(Relaxed);
            if cur == 0 {
                return 0;
            }
            if tag_of(cur) == tag {
                return entry_of(cur);
            }
            i = (i + 1) & self.mask;
        }
    }
}

#[cfg(all(test, not(tusk_exec_loom)))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Walks a chain through `next` (entries are 1-based indexes into it).
    fn chain(next: &[AtomicU32], head: u32) -> Vec<u32> {
        let mut out = vec![];
        let mut e = head & !MORE;
        while e != 0 {
            out.push(e);
            e = next[e as usize - 1].load(Relaxed);
        }
        out
    }

    /// Four threads insert 200,000 tuples over 3,000 tags (so chains and
    /// probe runs are long) into one table: each tag ends up in one slot
    /// whose chain holds exactly that tag's tuples, and `MORE` is set
    /// exactly on chains of two or more.
    #[test]
    fn concurrent_inserts_keep_every_tuple_once() {
        const N: usize = 200_000;
        let index = SlotIndex::new(SlotIndex::slots_for(3_000), false);
        let slots: Vec<AtomicU64> = (0..index.len()).map(|_| AtomicU64::new(0)).collect();
        let next: Vec<AtomicU32> = (0..N).map(|_| AtomicU32::new(u32::MAX)).collect();
        let hash = |e: usize| tusk_chash::mix64((e % 3_000) as u64);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (slots, next, index) = (&slots, &next, &index);
                s.spawn(move || {
                    for e in (t..N).step_by(4) {
                        let h = hash(e);
                        index.insert(
                            slots,
                            index.home(h),
                            index.hash_tag(h),
                            e as u32 + 1,
                            &next[e],
                        );
                    }
                });
            }
        });
        let mut expected: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for e in 0..N {
            expected
                .entry(index.hash_tag(hash(e)))
                .or_default()
                .push(e as u32 + 1);
        }
        for (&tag, entries) in &expected {
            let h = hash(entries[0] as usize - 1);
            let head = index.find(&slots, index.home(h), tag);
            let mut got = chain(&next, head);
            got.sort_unstable();
            assert_eq!(&got, entries, "tag {tag}");
            assert_eq!(head & MORE != 0, entries.len() > 1);
        }
        let used = slots.iter().filter(|s| s.load(Relaxed) != 0).count();
        assert_eq!(used, expected.len(), "a tag took two slots");
    }

    /// Exact tags: a `bigint` probe key outside the `integer` range has no
    /// tag (it cannot equal an `integer` build key whose bits it shares).
    #[test]
    fn exact_tags_refuse_keys_outside_integer() {
        let index = SlotIndex::new(1024, true);
        assert_eq!(index.int_tag(0, 5), Some(5));
        assert_eq!(index.int_tag(0, -1), Some(u32::MAX));
        assert_eq!(index.int_tag(0, (1 << 32) + 5), None);
        assert_eq!(index.int_tag(0, i32::MIN as i64 - 1), None);
    }

    #[test]
    fn slot_counts_leave_a_quarter_free() {
        assert_eq!(SlotIndex::slots_for(0), 1024);
        assert_eq!(SlotIndex::slots_for(10_000_000), 1 << 24);
        assert_eq!(SlotIndex::slots_for(12_500_000), 1 << 24);
        assert_eq!(SlotIndex::slots_for(12_600_000), 1 << 25);
    }
}

#[cfg(all(test, tusk_exec_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use std::sync::atomic::Ordering::Acquire;

    /// Two threads insert two tuples each into a four-slot table — the first
    /// tuple of each thread has tag 7, the second a tag of its own, and every
    /// home is slot 3, so inserts wrap around and contend for the same slots — while
    /// a third thread reads the slot of the shared tag with acquire loads:
    /// it only ever reaches fully linked tuples, and at the end every tuple
    /// is in the chain of its tag exactly once. (The reader is a spawned
    /// thread: loom never preempted the model's main thread before its
    /// reads here, so a reader there saw only empty slots. With the swaps'
    /// release weakened to relaxed, this model fails.)
    #[test]
    fn concurrent_inserts_lose_nothing() {
        loom::model(|| {
            let index = SlotIndex {
                shift: 62,
                mask: 3,
                exact: true,
            };
            let slots: Arc<Vec<AtomicU64>> = Arc::new((0..4).map(|_| AtomicU64::new(0)).collect());
            let next: Arc<Vec<AtomicU32>> =
                Arc::new((0..4).map(|_| AtomicU32::new(u32::MAX)).collect());
            let tags = [7u32, 7, 8, 9];
            let home = 3;
            let inserters: Vec<_> = (0..2usize)
                .map(|t| {
                    let (slots, next) = (slots.clone(), next.clone());
                    loom::thread::spawn(move || {
                        for e in [t, t + 2] {
                            index.insert(&slots, home, tags[e], e as u32 + 1, &next[e]);
                        }
                    })
                })
                .collect();
            // A concurrent reader of tag 7's chain.
            let reader = {
                let (slots, next) = (slots.clone(), next.clone());
                loom::thread::spawn(move || {
                    for i in 0..4 {
                        let cur = slots[(home + i) & 3].load(Acquire);
                        if cur != 0 && tag_of(cur) == 7 {
                            let mut e = entry_of(cur) & !MORE;
                            while e != 0 {
                                let n = next[e as usize - 1].load(Relaxed);
                                assert_ne!(
                                    n,
                                    u32::MAX,
                                    "reached a tuple whose link was not written"
                                );
                                e = n;
                            }
                            break;
                        }
                    }
                })
            };
            reader.join().unwrap();
            for t in inserters {
                t.join().unwrap();
            }
            for (e, &tag) in tags.iter().enumerate() {
                let head = index.find(&slots, home, tag);
                let mut n = 0;
                let mut cur = head & !MORE;
                let mut found = false;
                while cur != 0 {
                    found |= cur == e as u32 + 1;
                    n += 1;
                    cur = next[cur as usize - 1].load(Relaxed);
                }
                assert!(found, "tuple {e} lost");
                assert_eq!(n, if tag == 7 { 2 } else { 1 });
                assert_eq!(head & MORE != 0, tag == 7);
            }
        });
    }
}
