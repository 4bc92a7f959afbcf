//! Batched insertion: many entries, sorted, under one hold of the index's
//! relation mutex, one descent per leaf instead of two per entry.
//!
//! A bulk load (COPY FROM) indexes its rows a few pages at a time. One
//! insertion at a time costs a descent from the metapage for the unique
//! check, another for the insertion, and the relation mutex twice; for
//! keys that arrive in order (a primary key loaded in key order, the
//! common case) every one of them lands on the same rightmost leaf.
//! [`Btree::insert_sorted`] takes the entries sorted by (key, TID), descends
//! once, and inserts every following entry that still belongs on the leaf
//! it holds exclusively locked (the leaf's high key is above it) before it
//! descends again; a leaf that is full splits through the ordinary path
//! (`insert`), and the next entry descends afresh.
//!
//! ## Uniqueness
//!
//! In a unique index each key without a NULL must have no live equal key.
//! On the leaf the entry goes to, the entries just before and after its
//! position are its neighbours in the whole index's order: when both
//! differ from its key (and, at the leaf's end, so does the high key, the
//! lower bound of the right sibling) no equal key exists anywhere, and no
//! heap row needs reading. That is the fast case. Otherwise (an equal
//! neighbour, or the entry would be the leaf's first, whose left
//! neighbour lies on another page) the leaf is let go and the ordinary
//! check of `unique` runs for the entry, still under the mutex. If it
//! finds no live conflict the entry is inserted the ordinary way and the
//! batch goes on; if it finds a conflict or a writer to wait for, the
//! batch stops there and reports how many entries it inserted: the caller
//! handles the rest one at a time in its own order, which raises the
//! error, or waits, exactly as it would have without batching. Equal keys
//! inside the batch are found before anything is inserted (they are
//! adjacent once sorted), and then nothing is: the caller's row-at-a-time
//! path reports the row PostgreSQL would.
//!
//! Holding the mutex for the whole batch makes the batch one step for
//! other inserters, as each single insertion is (see the module doc of
//! `btree`). WAL records are the ordinary `BtreeInsert` records, one per
//! entry.

use super::node;
use super::search::Target;
use super::unique::{Check, IndexWriter};
use super::{corrupt, Btree};
use crate::heap::Tid;
use crate::{Database, StorageError};

/// One entry of a batch.
#[derive(Debug, Clone, Copy)]
pub struct BatchEntry<'a> {
    pub key: &'a [u8],
    /// Some key column is NULL (never a unique conflict).
    pub has_null: bool,
    pub tid: Tid,
}

impl Btree<'_> {
    /// Inserts `entries`, sorted by (key, TID), into the index of heap
    /// relation `heap_rel` on behalf of `w`, checking uniqueness when
    /// `unique`; returns how many leading entries it inserted (see the
    /// module doc: the rest are the caller's to insert one at a time).
    pub fn insert_sorted(
        &self,
        db: &Database,
        heap_rel: u32,
        entries: &[BatchEntry<'_>],
        unique: bool,
        w: &mut dyn IndexWriter,
    ) -> Result<usize, StorageError> {
        debug_assert!(entries
            .windows(2)
            .all(|p| (p[0].key, p[0].tid) < (p[1].key, p[1].tid)));
        if entries.is_empty() {
            return Ok(0);
        }
        if unique
            && entries
                .windows(2)
                .any(|p| !p[0].has_null && p[0].key == p[1].key)
        {
            return Ok(0);
        }
        let xid = w.xid()?;
        let mutex = self.pool.relation_mutex(self.rel);
        let _one_inserter = mutex.lock().unwrap_or_else(|e| e.into_inner());
        let mut i = 0;
        'descend: while i < entries.len() {
            let first = entries[i];
            self.check_key_len(first.key)?;
            let d = self.descend(&Target::After(first.key, first.tid), false)?;
            let mut block = d.leaf;
            let mut buf = self.pool.read_buffer(self.rel, block)?;
            let mut g = buf.lock_exclusive();
            while Target::After(first.key, first.tid).beyond(g.page()) {
                block = node::right(g.page());
                if block == node::NO_BLOCK {
                    return Err(corrupt(self.rel, block));
                }
                drop(g);
                buf = self.pool.read_buffer(self.rel, block)?;
                g = buf.lock_exclusive();
            }
            if !node::is_node(g.page()) || !node::is_leaf(g.page()) {
                return Err(corrupt(self.rel, block));
            }
            while i < entries.len() {
                let e = entries[i];
                self.check_key_len(e.key)?;
                let target = Target::After(e.key, e.tid);
                let p = g.page_mut();
                if target.beyond(p) {
                    continue 'descend;
                }
                // Keys loaded in order go after the leaf's last entry.
                let n = node::count(p);
                let pos = if n > 0 && !target.after(&node::entry(p, n - 1)) {
                    n
                } else {
                    target.position(p)
                };
                let fits = node::fits(p, node::body_size(0, e.key.len()));
                if fits && (!unique || e.has_null || no_equal_neighbour(p, pos, e.key)) {
                    self.put_entry(p, block, pos, e.key, e.tid, 0, xid)?;
                    i += 1;
                    continue;
                }
                // The ordinary path: a full leaf splits, an entry whose
                // uniqueness the leaf does not prove gets the full check.
                drop(g);
                drop(buf);
                if unique && !e.has_null {
                    match self.check(db, heap_rel, e.key, Some(e.tid), w)? {
                        Check::Clear => {}
                        Check::Conflict(_) | Check::Wait(_) => return Ok(i),
                    }
                }
                self.insert_locked(e.key, e.tid, xid)?;
                i += 1;
                continue 'descend;
            }
        }
        Ok(i)
    }
}

/// Whether no entry of the index can have key `key`, judging by the
/// neighbours of position `pos` on leaf `p` (see the module doc).
fn no_equal_neighbour(p: &[u8], pos: usize, key: &[u8]) -> bool {
    if pos == 0 {
        return false;
    }
    if node::entry(p, pos - 1).key == key {
        return false;
    }
    if pos < node::count(p) {
        node::entry(p, pos).key != key
    } else {
        node::high_key(p).is_none_or(|h| h.key != key)
    }
}
