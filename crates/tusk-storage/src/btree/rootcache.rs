//! The root block of each btree as a scan last read it from the metapage,
//! so that a scan starts its descent at the root without reading the
//! metapage first (PostgreSQL keeps the metapage's contents in the
//! relcache, `rd_amcache`, for the same reason).
//!
//! ## Why a stale root is good enough for a scan
//!
//! tusk never deletes a btree page (VACUUM removes entries, not pages), and
//! a root split leaves the old root where it was: it becomes the leftmost
//! page of its level, with a right link to its new sibling. So a root that
//! was read once stays a valid page of the same tree at the same level for
//! as long as the relation's storage lives. A descent started there finds
//! the right leaf as one started at the true root does: keys beyond the
//! page's high key are reached by moving right, as after any concurrent
//! split (Lehman–Yao, see the module doc of `btree`). It only reads more
//! pages than needed when the tree has grown a level since.
//!
//! Insertions must not use it: their descent remembers the internal pages
//! it passed, to insert a split's separator into the parent, and a stack
//! that misses the levels above a stale root would make a new root in the
//! wrong place. They read the metapage (`Btree::descend`).
//!
//! ## The table
//!
//! A fixed array of words, one per slot, each `relation << 32 | root`
//! (0: empty; no relation is 0 and no root is block 0, the metapage). A
//! relation uses slot `relation % SLOTS`; two relations sharing a slot
//! just displace each other. Reads and writes are single atomic words, so
//! a reader sees either entry whole; a store releases and a load acquires,
//! so a reader that finds a root also sees the extension of the relation
//! that made that page. Relation numbers are not reused, but
//! dropping a relation's buffers ([`RootCache::forget`]) also clears its
//! entry, so nothing of a dropped relation stays behind.

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots of the table.
const SLOTS: usize = 512;

/// See the module doc.
pub struct RootCache {
    slots: Box<[AtomicU64]>,
}

impl Default for RootCache {
    fn default() -> RootCache {
        RootCache {
            slots: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl RootCache {
    fn slot(&self, rel: u32) -> &AtomicU64 {
        &self.slots[rel as usize % SLOTS]
    }

    /// The root block last recorded for `rel`.
    pub fn get(&self, rel: u32) -> Option<u32> {
        let word = self.slot(rel).load(Ordering::Acquire);
        ((word >> 32) as u32 == rel && word != 0).then_some(word as u32)
    }

    /// Records that `rel`'s root is `root` (as its metapage said).
    pub fn set(&self, rel: u32, root: u32) {
        self.slot(rel)
            .store((rel as u64) << 32 | root as u64, Ordering::Release);
    }

    /// Clears `rel`'s entry (its storage is going away).
    pub fn forget(&self, rel: u32) {
        let slot = self.slot(rel);
        let word = slot.load(Ordering::Relaxed);
        if (word >> 32) as u32 == rel {
            let _ = slot.compare_exchange(word, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_displace_and_forget() {
        let c = RootCache::default();
        assert_eq!(c.get(7), None);
        c.set(7, 3);
        assert_eq!(c.get(7), Some(3));
        // Another relation of the same slot displaces it.
        c.set(7 + SLOTS as u32, 9);
        assert_eq!(c.get(7), None);
        assert_eq!(c.get(7 + SLOTS as u32), Some(9));
        // Forgetting a relation not in its slot leaves the slot alone.
        c.forget(7);
        assert_eq!(c.get(7 + SLOTS as u32), Some(9));
        c.forget(7 + SLOTS as u32);
        assert_eq!(c.get(7 + SLOTS as u32), None);
    }
}
