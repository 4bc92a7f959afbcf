//! The rightmost-leaf fast path for ascending insertions (PostgreSQL's
//! `_bt_search_insert` fastpath in nbtinsert.c).
//!
//! Loads usually arrive in key order — TPC-H's lineitem by
//! (l_orderkey, l_linenumber), any serial key — so each new entry lands on
//! the tree's last leaf. A [`Btree`] handle remembers that leaf when an
//! insertion puts an entry on it, and the next insertion (and, in a unique
//! index, its check) goes straight to it instead of descending from the
//! metapage through every level: one buffer lookup instead of one per level
//! plus the metapage, twice for a unique index.
//!
//! The remembered block is only a guess; it is trusted only while the page,
//! under its lock, proves that the position of the new entry is on it:
//!
//! * it is a leaf without a right sibling, so it is the last leaf of the
//!   tree (pages are never deleted, and a split gives the page a right
//!   sibling, after which the slow path finds and remembers the new last
//!   leaf), covering every key from its lower bound up;
//! * its first entry's key is strictly below the new key, so the new key is
//!   above the page's lower bound, and any entry with an equal key — which
//!   a unique check must see — is on this page and not on the one before.
//!
//! An insertion that would split the page takes the slow path (the split
//! needs the descent's stack of parents). All of this runs under the
//! index's relation mutex, as every insertion does (see the module doc of
//! `btree`), so nothing else changes the leaf between the test and the use.

use super::node::{self, NO_BLOCK};
use super::search::Target;
use super::Btree;
use crate::heap::Tid;
use crate::txn::Xid;
use crate::StorageError;
use std::sync::atomic::Ordering;

/// Whether leaf page `p` is the tree's last leaf and holds the position of
/// every entry with key `key` (see the module doc).
fn holds_position(p: &[u8], key: &[u8]) -> bool {
    node::is_node(p)
        && node::is_leaf(p)
        && node::right(p) == NO_BLOCK
        && node::count(p) > 0
        && node::entry(p, 0).key < key
}

impl Btree<'_> {
    /// Remembers `block`, a leaf that just took an entry, if it is the
    /// last leaf (`p` is its page).
    pub(super) fn remember_leaf(&self, block: u32, p: &[u8]) {
        if node::is_leaf(p) && node::right(p) == NO_BLOCK {
            self.last_leaf.store(block, Ordering::Relaxed);
        }
    }

    fn guessed_leaf(&self) -> Option<u32> {
        match self.last_leaf.load(Ordering::Relaxed) {
            NO_BLOCK => None,
            b => Some(b),
        }
    }

    /// The TIDs of the entries whose key is `key`, read from the
    /// remembered last leaf; `None` when that leaf does not prove it holds
    /// them all (then the caller descends).
    pub(super) fn fast_equal_entries(&self, key: &[u8]) -> Result<Option<Vec<Tid>>, StorageError> {
        let Some(block) = self.guessed_leaf() else {
            return Ok(None);
        };
        let buf = self.pool.read_buffer(self.rel, block)?;
        let g = buf.lock_shared();
        let p = g.page();
        if !holds_position(p, key) {
            return Ok(None);
        }
        let target = Target::Prefix {
            prefix: key,
            strict: false,
        };
        let tids = (target.position(p)..node::count(p))
            .map(|i| node::entry(p, i))
            .take_while(|e| e.key == key)
            .map(|e| e.tid)
            .collect();
        Ok(Some(tids))
    }

    /// Inserts leaf entry (`key`, `tid`) into the remembered last leaf if
    /// it holds its position and has room; whether it did.
    pub(super) fn fast_insert(&self, key: &[u8], tid: Tid, xid: Xid) -> Result<bool, StorageError> {
        let Some(block) = self.guessed_leaf() else {
            return Ok(false);
        };
        let buf = self.pool.read_buffer(self.rel, block)?;
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        if !holds_position(p, key) || !node::fits(p, node::body_size(0, key.len())) {
            return Ok(false);
        }
        let pos = Target::After(key, tid).position(p);
        self.put_entry(p, block, pos, key, tid, 0, xid)?;
        Ok(true)
    }
}
