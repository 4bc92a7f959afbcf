//! Per-thread statistics counters.
//!
//! Every table counts its operations in plain `Cell`s of the calling thread
//! (no atomic, no shared cache line), so counting costs a few instructions on
//! the hot path. A benchmark thread reads its own counters with
//! [`thread_stats`] when it finishes and sums them with the others'. With the
//! `stats` feature off (it is on by default) the counters compile to nothing;
//! the micro-benchmark compares both builds.

#[cfg(feature = "stats")]
use std::cell::Cell;

/// Counts of one thread's operations since its last [`reset_thread_stats`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub lookups: u64,
    pub hits: u64,
    pub inserts: u64,
    /// Inserts that found the key present and returned the existing id.
    pub insert_conflicts: u64,
    pub deletes: u64,
    /// Seqlock read attempts that had to start over (tusk-chash only).
    pub retries: u64,
    /// Buckets visited by lookups, summed (tusk-chash only).
    pub probes: u64,
    /// Longest lookup probe, in buckets (tusk-chash only).
    pub max_probe: u64,
}

impl Stats {
    /// Adds another thread's counts to these.
    pub fn merge(&mut self, o: &Stats) {
        self.lookups += o.lookups;
        self.hits += o.hits;
        self.inserts += o.inserts;
        self.insert_conflicts += o.insert_conflicts;
        self.deletes += o.deletes;
        self.retries += o.retries;
        self.probes += o.probes;
        self.max_probe = self.max_probe.max(o.max_probe);
    }
}

#[cfg(feature = "stats")]
struct Local {
    lookups: Cell<u64>,
    hits: Cell<u64>,
    inserts: Cell<u64>,
    insert_conflicts: Cell<u64>,
    deletes: Cell<u64>,
    retries: Cell<u64>,
    probes: Cell<u64>,
    max_probe: Cell<u64>,
}

#[cfg(feature = "stats")]
thread_local! {
    static LOCAL: Local = const {
        Local {
            lookups: Cell::new(0),
            hits: Cell::new(0),
            inserts: Cell::new(0),
            insert_conflicts: Cell::new(0),
            deletes: Cell::new(0),
            retries: Cell::new(0),
            probes: Cell::new(0),
            max_probe: Cell::new(0),
        }
    };
}

#[cfg(feature = "stats")]
macro_rules! bump {
    ($field:ident, $n:expr) => {
        LOCAL.with(|l| l.$field.set(l.$field.get() + $n))
    };
}

#[inline]
pub(crate) fn lookup(hit: bool, probes: u64) {
    #[cfg(feature = "stats")]
    LOCAL.with(|l| {
        l.lookups.set(l.lookups.get() + 1);
        l.hits.set(l.hits.get() + hit as u64);
        l.probes.set(l.probes.get() + probes);
        if probes > l.max_probe.get() {
            l.max_probe.set(probes);
        }
    });
    #[cfg(not(feature = "stats"))]
    let _ = (hit, probes);
}

#[inline]
pub(crate) fn insert(conflict: bool) {
    #[cfg(feature = "stats")]
    {
        bump!(inserts, 1);
        bump!(insert_conflicts, conflict as u64);
    }
    #[cfg(not(feature = "stats"))]
    let _ = conflict;
}

#[inline]
pub(crate) fn delete() {
    #[cfg(feature = "stats")]
    bump!(deletes, 1);
}

#[inline]
pub(crate) fn retry() {
    #[cfg(feature = "stats")]
    bump!(retries, 1);
}

/// This thread's counters.
pub fn thread_stats() -> Stats {
    #[cfg(feature = "stats")]
    {
        LOCAL.with(|l| Stats {
            lookups: l.lookups.get(),
            hits: l.hits.get(),
            inserts: l.inserts.get(),
            insert_conflicts: l.insert_conflicts.get(),
            deletes: l.deletes.get(),
            retries: l.retries.get(),
            probes: l.probes.get(),
            max_probe: l.max_probe.get(),
        })
    }
    #[cfg(not(feature = "stats"))]
    Stats::default()
}

/// Sets this thread's counters to zero.
pub fn reset_thread_stats() {
    #[cfg(feature = "stats")]
    LOCAL.with(|l| {
        for c in [
            &l.lookups,
            &l.hits,
            &l.inserts,
            &l.insert_conflicts,
            &l.deletes,
            &l.retries,
            &l.probes,
            &l.max_probe,
        ] {
            c.set(0);
        }
    });
}
