//! Fast-path relation locks: the weak table locks that ordinary queries
//! take are recorded in their owner's own slots instead of the shared lock
//! table (PostgreSQL's fast-path locking, `lock.c`, since 9.2).
//!
//! ## Why
//!
//! Every query locks the tables it reads (`AccessShareLock`) or writes
//! (`RowExclusiveLock`). Through the shared table that is a partition mutex
//! and an entry that every session touches, so under `pgbench -S` all
//! sessions take turns at one mutex and pass one cache line between the
//! cores, twice per query, for locks that almost never conflict.
//!
//! ## The weak and the strong
//!
//! The *weak* modes — `AccessShare`, `RowShare`, `RowExclusive` — do not
//! conflict with each other. The *strong* ones, `Share` and above, conflict
//! with at least one weak mode (`ShareUpdateExclusive` conflicts with no
//! weak mode and needs neither side of this). For every relation-hash
//! bucket the manager counts the strong locks held or being acquired
//! ([`FastPath::strong`]).
//!
//! * A weak request on a relation, by an owner with slots, first locks its
//!   own slots. If the relation's bucket has no strong lock and a slot is
//!   free (or already names the relation), it counts the mode there and is
//!   done: no shared state is written.
//! * A strong request first raises its bucket's count, then visits every
//!   registered owner ([`FastPath::owners`]) and moves that owner's slot
//!   for the relation, if any, into the shared table as ordinary holds
//!   ([`super::LockManager`]'s `transfer`). Only then does it ask the
//!   shared table, where it meets every weak hold and queues behind them.
//!   The count goes down when the strong lock is released, or when the
//!   request fails.
//! * A release looks in the owner's slots first; a hold that is not there
//!   was taken in, or moved to, the shared table.
//!
//! ## Why no lock is missed
//!
//! The weak side reads the count while holding its own slots' mutex, and
//! the strong side raises the count *before* it locks each owner's slots.
//! So for a given owner either the weak request's critical section comes
//! first — the strong side then finds the slot and moves it — or it comes
//! after the strong side has visited the slots, and then (the mutex
//! ordering the two) it sees the raised count and goes to the shared table.
//! An owner registered while a strong request is visiting is created after
//! the count was raised (registration and the visit's list are under one
//! mutex), so it sees the count too. The deadlock detector needs no change:
//! nobody waits for a fast-path hold, because a strong request has moved
//! them all to the shared table before it can wait.
//!
//! Lock order: an owner's slots, then a table partition; the registry is
//! never held with either.

use super::{LockMode, LockOwner};
#[cfg(tusk_storage_loom)]
use loom::sync::atomic::{AtomicU32, Ordering};
#[cfg(not(tusk_storage_loom))]
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Relations an owner can hold on the fast path at once (PostgreSQL: 16).
pub(super) const SLOTS: usize = 16;

/// Buckets of strong-lock counts (PostgreSQL: 1024; a few in the loom
/// model).
#[cfg(not(tusk_storage_loom))]
const STRONG_BUCKETS: usize = 1024;
#[cfg(tusk_storage_loom)]
const STRONG_BUCKETS: usize = 4;

/// The weak modes, in the order of [`Slots`]' counts.
const WEAK: [LockMode; 3] = [
    LockMode::AccessShare,
    LockMode::RowShare,
    LockMode::RowExclusive,
];

/// A weak mode's index in a slot's counts.
pub(super) fn weak_index(mode: LockMode) -> Option<usize> {
    WEAK.iter().position(|&m| m == mode)
}

/// Whether `mode` conflicts with some weak mode.
pub(super) fn is_strong(mode: LockMode) -> bool {
    mode >= LockMode::Share
}

/// One owner's fast-path holds: a relation oid per used slot and how many
/// times each weak mode is held on it.
#[derive(Default)]
pub(super) struct Slots {
    rels: [u32; SLOTS],
    counts: [[u32; 3]; SLOTS],
    /// Bit `i` set: slot `i` is in use.
    used: u32,
}

impl Slots {
    fn find(&self, rel: u32) -> Option<usize> {
        (0..SLOTS).find(|&i| self.used & (1 << i) != 0 && self.rels[i] == rel)
    }

    /// Counts one hold of weak mode `w` on `rel`; false when all slots are
    /// taken by other relations.
    pub(super) fn add(&mut self, rel: u32, w: usize) -> bool {
        let i = match self.find(rel) {
            Some(i) => i,
            None => {
                let free = (!self.used).trailing_zeros() as usize;
                if free >= SLOTS {
                    return false;
                }
                self.used |= 1 << free;
                self.rels[free] = rel;
                self.counts[free] = [0; 3];
                free
            }
        };
        self.counts[i][w] += 1;
        true
    }

    /// Removes one hold of weak mode `w` on `rel`; false if the slots have
    /// none (it is in the shared table).
    pub(super) fn remove(&mut self, rel: u32, w: usize) -> bool {
        let Some(i) = self.find(rel) else {
            return false;
        };
        if self.counts[i][w] == 0 {
            return false;
        }
        self.counts[i][w] -= 1;
        if self.counts[i] == [0; 3] {
            self.used &= !(1 << i);
        }
        true
    }

    /// Takes every hold on `rel` out of the slots: (mode, count) pairs.
    pub(super) fn take(&mut self, rel: u32) -> Option<[(LockMode, u32); 3]> {
        let i = self.find(rel)?;
        self.used &= !(1 << i);
        let c = self.counts[i];
        Some([(WEAK[0], c[0]), (WEAK[1], c[1]), (WEAK[2], c[2])])
    }

    /// The strongest weak mode held on `rel`, if any.
    pub(super) fn strongest(&self, rel: u32) -> Option<LockMode> {
        let i = self.find(rel)?;
        (0..3)
            .rev()
            .find(|&w| self.counts[i][w] > 0)
            .map(|w| WEAK[w])
    }
}

/// The manager's side: the strong-lock counts and the registry of owners
/// that have slots.
pub(super) struct FastPath {
    strong: Box<[AtomicU32]>,
    owners: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    owners: Vec<Weak<LockOwner>>,
    /// Dropped owners are swept out when the list reaches this length.
    sweep_at: usize,
}

impl Default for FastPath {
    fn default() -> Self {
        FastPath {
            strong: (0..STRONG_BUCKETS).map(|_| AtomicU32::new(0)).collect(),
            owners: Mutex::new(Registry::default()),
        }
    }
}

fn bucket(rel: u32) -> usize {
    // Fibonacci hashing: consecutive oids land in different buckets.
    (rel.wrapping_mul(0x9E37_79B9) >> 22) as usize % STRONG_BUCKETS
}

impl FastPath {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes `owner`'s slots visible to strong requests.
    pub(super) fn register(&self, owner: &Arc<LockOwner>) {
        let mut r = self.registry();
        if r.owners.len() >= r.sweep_at {
            r.owners.retain(|o| o.strong_count() > 0);
            r.sweep_at = (2 * r.owners.len()).max(64);
        }
        r.owners.push(Arc::downgrade(owner));
    }

    /// The registered owners still alive.
    pub(super) fn owners(&self) -> Vec<Arc<LockOwner>> {
        self.registry()
            .owners
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// Whether a strong lock on (a relation in the bucket of) `rel` is held
    /// or being acquired. Read under the asking owner's slots mutex.
    pub(super) fn strong_held(&self, rel: u32) -> bool {
        self.strong[bucket(rel)].load(Ordering::SeqCst) != 0
    }

    /// A strong request on `rel` begins: from now on weak requests on it
    /// go to the shared table.
    pub(super) fn strong_begin(&self, rel: u32) {
        self.strong[bucket(rel)].fetch_add(1, Ordering::SeqCst);
    }

    /// A strong lock on `rel` was released, or its request failed.
    pub(super) fn strong_end(&self, rel: u32) {
        let prev = self.strong[bucket(rel)].fetch_sub(1, Ordering::SeqCst);
        debug_assert!(prev > 0, "strong lock count underflow");
    }
}

/// The handshake of "Why no lock is missed", with the manager's own count
/// functions and slots: a weak request against a strong one on the same
/// relation. Whatever the interleaving, the weak hold is on the fast path
/// at the end only if the strong side found it there and moved it.
#[cfg(all(test, tusk_storage_loom))]
mod loom_tests {
    use super::*;
    use loom::sync::{Arc, Mutex};

    #[test]
    fn a_fast_path_hold_is_moved_or_never_taken() {
        loom::model(|| {
            let fast = Arc::new(FastPath::default());
            let slots = Arc::new(Mutex::new(Slots::default()));
            let weak = {
                let (fast, slots) = (fast.clone(), slots.clone());
                loom::thread::spawn(move || {
                    let mut s = slots.lock().unwrap();
                    !fast.strong_held(7) && s.add(7, 0)
                })
            };
            fast.strong_begin(7);
            let moved = slots.lock().unwrap().take(7).is_some();
            let on_fast_path = weak.join().unwrap();
            assert_eq!(on_fast_path, moved);
        });
    }
}
