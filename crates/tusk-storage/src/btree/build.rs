//! Bulk build (CREATE INDEX): sort the entries, then write the tree bottom
//! up.
//!
//! The caller pushes one (encoded key, heap TID) per row
//! ([`IndexBuild::push`]); `sort` orders them within `maintenance_work_mem`,
//! spilling sorted runs to files beyond it. The sorted entries then stream
//! into the leaf level: a unique build compares each with the one before
//! and stops at two equal keys without a NULL
//! ([`BuildOutcome::Duplicate`]: the caller reports PostgreSQL's `could
//! not create unique index` and aborts, which removes the relation with
//! the pages already written).
//!
//! A [`LevelWriter`] fills one page at a time to 90 % (PostgreSQL's leaf
//! fillfactor; 70 % on internal levels), so that the first insertions do
//! not split at once. When an entry does not fit the fill target, the page
//! is closed with that entry as its high key — after moving its last
//! entries to the next page if the high key would not fit — and the entry
//! starts the next page. Each internal level is written the same way from
//! the first entries of the pages below, until one page, the root, is
//! left; then the metapage. Pages are allocated in order, so each right
//! link is the next block. Every page is logged as an image.

use super::keyenc::EncodedKey;
use super::node;
use super::sort::Sorter;
use super::{Btree, META_BLOCK};
use crate::heap::{log_page_image, Tid};
use crate::txn::Xid;
use crate::StorageError;
use std::path::PathBuf;

/// What a build found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOutcome {
    Built,
    /// A unique build found two rows with equal keys (the TIDs of two of
    /// them). The index is incomplete: the caller aborts.
    Duplicate {
        first: Tid,
        second: Tid,
    },
}

/// Collects the entries of a new index (see the module doc).
pub struct IndexBuild {
    sorter: Sorter,
}

impl Default for IndexBuild {
    fn default() -> Self {
        IndexBuild::new()
    }
}

/// Leaf and internal fill targets of a build (PostgreSQL's fillfactors).
const LEAF_FILL: usize = node::USABLE * 90 / 100;
const INTERNAL_FILL: usize = node::USABLE * 70 / 100;

impl IndexBuild {
    /// A build that sorts in memory, however much it takes.
    pub fn new() -> IndexBuild {
        IndexBuild {
            sorter: Sorter::new(usize::MAX, None),
        }
    }

    /// A build that keeps about `budget` bytes in memory
    /// (`maintenance_work_mem`) and spills sorted runs into `dir` (the
    /// data directory's temp dir) beyond that.
    pub fn with_budget(budget: usize, dir: PathBuf) -> IndexBuild {
        IndexBuild {
            sorter: Sorter::new(budget.max(16 << 10), Some(dir)),
        }
    }

    /// Adds the entry (`key`, `tid`). Keys longer than [`node::MAX_KEY`]
    /// must have been refused by the caller (the index layer checks
    /// PostgreSQL's size limit first).
    pub fn push(&mut self, key: &EncodedKey, tid: Tid) -> Result<(), StorageError> {
        assert!(
            key.bytes.len() <= node::MAX_KEY,
            "key too long for a btree page"
        );
        self.sorter.push(&key.bytes, tid, key.has_null)
    }

    pub fn len(&self) -> u64 {
        self.sorter.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorter.len() == 0
    }

    /// Runs spilled to files so far.
    pub fn spilled_runs(&self) -> usize {
        self.sorter.spilled_runs()
    }

    /// Sorts the entries and writes the index into `tree`'s empty
    /// relation as `xid`; with `unique`, stops at two equal keys without a
    /// NULL.
    pub fn finish(
        self,
        tree: &Btree<'_>,
        unique: bool,
        xid: Xid,
    ) -> Result<BuildOutcome, StorageError> {
        if tree.pool.nblocks(tree.rel)? != 0 {
            return Err(StorageError::Other(
                "btree build needs an empty relation".into(),
            ));
        }
        let meta = tree.pool.new_page(tree.rel)?;
        debug_assert_eq!(meta.block(), META_BLOCK);
        let mut leaves = LevelWriter::new(tree, 0, xid)?;
        let mut prev: Option<(Vec<u8>, Tid)> = None;
        let mut duplicate = None;
        self.sorter.for_each_sorted(|key, tid, has_null| {
            if unique && !has_null {
                if let Some((k, t)) = &prev {
                    if k[..] == *key {
                        duplicate = Some((*t, tid));
                        return Ok(false);
                    }
                }
            }
            leaves.push(key, tid, 0)?;
            if unique {
                let p = prev.get_or_insert_with(|| (Vec::new(), tid));
                p.0.clear();
                p.0.extend_from_slice(key);
                p.1 = tid;
            }
            Ok(true)
        })?;
        if let Some((first, second)) = duplicate {
            return Ok(BuildOutcome::Duplicate { first, second });
        }
        let mut below = leaves.finish()?;
        let mut level = 0;
        while below.len() > 1 {
            level += 1;
            let mut w = LevelWriter::new(tree, level, xid)?;
            for (k, t, b) in &below {
                w.push(k, *t, *b)?;
            }
            below = w.finish()?;
        }
        let mut g = meta.lock_exclusive();
        let p = g.page_mut();
        node::meta_init(p, below[0].2, level + 1);
        log_page_image(tree.pool, p, xid, tree.block_ref(META_BLOCK))?;
        Ok(BuildOutcome::Built)
    }
}

/// Writes the pages of one level left to right (see the module doc).
struct LevelWriter<'t, 'p> {
    tree: &'t Btree<'p>,
    level: u16,
    fill: usize,
    xid: Xid,
    /// The open page's entries: (offset in `keys`, key length, TID, child).
    items: Vec<(usize, usize, Tid, u32)>,
    keys: Vec<u8>,
    /// Bytes the open page's entries take.
    used: usize,
    /// (first key, its TID, block) of each page written; the level's first
    /// page has an empty key (minus infinity).
    out: Vec<(Vec<u8>, Tid, u32)>,
    first_block: u32,
}

impl<'t, 'p> LevelWriter<'t, 'p> {
    fn new(tree: &'t Btree<'p>, level: u16, xid: Xid) -> Result<Self, StorageError> {
        Ok(LevelWriter {
            tree,
            level,
            fill: if level == 0 { LEAF_FILL } else { INTERNAL_FILL },
            xid,
            items: Vec::new(),
            keys: Vec::new(),
            used: 0,
            out: Vec::new(),
            first_block: tree.pool.nblocks(tree.rel)?,
        })
    }

    /// Bytes an entry of `key_len` takes as the page's `first` entry or not
    /// (an internal page's first entry is stored without its key).
    fn size(&self, key_len: usize, first: bool) -> usize {
        node::entry_size(
            self.level,
            if self.level > 0 && first { 0 } else { key_len },
        )
    }

    fn push(&mut self, key: &[u8], tid: Tid, child: u32) -> Result<(), StorageError> {
        if !self.items.is_empty() && self.used + self.size(key.len(), false) > self.fill {
            self.close(Some((key, tid)))?;
        }
        self.add(key, tid, child);
        Ok(())
    }

    fn add(&mut self, key: &[u8], tid: Tid, child: u32) {
        self.used += self.size(key.len(), self.items.is_empty());
        self.items.push((self.keys.len(), key.len(), tid, child));
        self.keys.extend_from_slice(key);
    }

    fn key(&self, i: usize) -> &[u8] {
        let (off, len, _, _) = self.items[i];
        &self.keys[off..off + len]
    }

    /// Writes the open page with high key `high` (the next page's first
    /// entry); entries that leave the high key no room move to the next
    /// page, and the high key becomes the first of them.
    fn close(&mut self, high: Option<(&[u8], Tid)>) -> Result<(), StorageError> {
        let mut keep = self.items.len();
        if let Some((hk, _)) = high {
            let mut hk_len = hk.len();
            while keep > 1 && self.used + node::high_key_size(hk_len) > node::USABLE {
                keep -= 1;
                self.used -= self.size(self.items[keep].1, keep == 0);
                hk_len = self.items[keep].1;
            }
        }
        let block = self.first_block + self.out.len() as u32;
        let buf = self.tree.pool.new_page(self.tree.rel)?;
        if buf.block() != block {
            return Err(StorageError::Other(format!(
                "index relation {} grew during its build",
                self.tree.rel
            )));
        }
        let high_key: Option<(Vec<u8>, Tid)> = match high {
            Some(_) if keep < self.items.len() => {
                Some((self.key(keep).to_vec(), self.items[keep].2))
            }
            Some((k, t)) => Some((k.to_vec(), t)),
            None => None,
        };
        let (low, tid) = match self.items.first() {
            Some(&(_, _, t, _)) if !self.out.is_empty() => (self.key(0).to_vec(), t),
            Some(&(_, _, t, _)) => (Vec::new(), t),
            None => (Vec::new(), Tid { block: 0, item: 0 }),
        };
        {
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            let level = self.level;
            node::init(p, level);
            let (items, keys) = (&self.items, &self.keys);
            let entries = (0..keep).map(|i| {
                let (off, len, tid, child) = items[i];
                let k: &[u8] = if level > 0 && i == 0 {
                    &[]
                } else {
                    &keys[off..off + len]
                };
                (k, tid, child)
            });
            node::fill(p, entries, high_key.as_ref().map(|(k, t)| (&k[..], *t)));
            if high.is_some() {
                node::set_right(p, block + 1);
            }
            log_page_image(self.tree.pool, p, self.xid, self.tree.block_ref(block))?;
        }
        self.out.push((low, tid, block));
        // The entries that moved start the next page.
        let moved: Vec<(Vec<u8>, Tid, u32)> = (keep..self.items.len())
            .map(|i| (self.key(i).to_vec(), self.items[i].2, self.items[i].3))
            .collect();
        self.items.clear();
        self.keys.clear();
        self.used = 0;
        for (k, t, c) in moved {
            self.add(&k, t, c);
        }
        Ok(())
    }

    /// Writes the last page (an empty one if the level has no entries).
    fn finish(mut self) -> Result<Vec<(Vec<u8>, Tid, u32)>, StorageError> {
        self.close(None)?;
        Ok(self.out)
    }
}
