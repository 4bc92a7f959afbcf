//! Bulk build (CREATE INDEX): sort the entries, then write the tree bottom
//! up.
//!
//! The caller pushes one (encoded key, heap TID) per row
//! ([`IndexBuild::push`]); the keys go into one arena and the entries,
//! 24 bytes each, carry the first 8 key bytes as a big-endian integer, so
//! that the sort compares integers and looks at the arena only when two
//! keys share those bytes (a 4-byte integer key never does). The sort is
//! in memory: it does not spill beyond `maintenance_work_mem`.
//!
//! A unique build then looks for two neighbours with equal keys and no
//! NULL ([`BuildOutcome::Duplicate`]: the caller reports PostgreSQL's
//! `could not create unique index`). Otherwise the leaves are written left
//! to right, filled to 90 % (PostgreSQL's leaf fillfactor) so that the
//! first insertions do not split at once, each with the next leaf's first
//! entry as its high key; then each internal level from the first entries
//! of the level below, filled to 70 %; then the metapage. Pages are
//! allocated in order, so each right link is the next block. Every page is
//! logged as an image.

use super::keyenc::EncodedKey;
use super::node;
use super::{Btree, META_BLOCK};
use crate::heap::{log_page_image, Tid};
use crate::txn::Xid;
use crate::StorageError;
use std::cmp::Ordering;

/// One pushed entry: its key's first 8 bytes (zero padded), its place in
/// the arena, its TID.
#[derive(Debug, Clone, Copy)]
struct BuildEntry {
    prefix: u64,
    /// Arena offset (48 bits) and key length (16 bits).
    at: u64,
    block: u32,
    item: u16,
    has_null: bool,
}

impl BuildEntry {
    fn tid(&self) -> Tid {
        Tid {
            block: self.block,
            item: self.item,
        }
    }
    fn key<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        let off = (self.at >> 16) as usize;
        &arena[off..off + (self.at & 0xffff) as usize]
    }
}

/// What a build found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOutcome {
    Built,
    /// A unique build found two rows with equal keys (the TIDs of two of
    /// them): nothing was written.
    Duplicate {
        first: Tid,
        second: Tid,
    },
}

/// Collects the entries of a new index (see the module doc).
#[derive(Default)]
pub struct IndexBuild {
    arena: Vec<u8>,
    entries: Vec<BuildEntry>,
}

/// Leaf and internal fill targets of a build (PostgreSQL's fillfactors).
const LEAF_FILL: usize = node::USABLE * 90 / 100;
const INTERNAL_FILL: usize = node::USABLE * 70 / 100;

impl IndexBuild {
    pub fn new() -> IndexBuild {
        IndexBuild::default()
    }

    /// Adds the entry (`key`, `tid`). Keys longer than [`node::MAX_KEY`]
    /// must have been refused by the caller (the index layer checks
    /// PostgreSQL's size limit first).
    pub fn push(&mut self, key: &EncodedKey, tid: Tid) {
        let k = &key.bytes;
        assert!(k.len() <= node::MAX_KEY, "key too long for a btree page");
        let mut prefix = [0u8; 8];
        let n = k.len().min(8);
        prefix[..n].copy_from_slice(&k[..n]);
        self.entries.push(BuildEntry {
            prefix: u64::from_be_bytes(prefix),
            at: (self.arena.len() as u64) << 16 | k.len() as u64,
            block: tid.block,
            item: tid.item,
            has_null: key.has_null,
        });
        self.arena.extend_from_slice(k);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn cmp_keys(&self, a: &BuildEntry, b: &BuildEntry) -> Ordering {
        a.prefix
            .cmp(&b.prefix)
            .then_with(|| a.key(&self.arena).cmp(b.key(&self.arena)))
    }

    /// Sorts the entries and writes the index into `tree`'s empty
    /// relation as `xid`; with `unique`, first checks that no two keys
    /// without NULLs are equal.
    pub fn finish(
        mut self,
        tree: &Btree<'_>,
        unique: bool,
        xid: Xid,
    ) -> Result<BuildOutcome, StorageError> {
        if tree.pool.nblocks(tree.rel)? != 0 {
            return Err(StorageError::Other(
                "btree build needs an empty relation".into(),
            ));
        }
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_unstable_by(|a, b| self.cmp_keys(a, b).then(a.tid().cmp(&b.tid())));
        if unique {
            if let Some(w) = entries
                .windows(2)
                .find(|w| !w[0].has_null && self.cmp_keys(&w[0], &w[1]) == Ordering::Equal)
            {
                return Ok(BuildOutcome::Duplicate {
                    first: w[0].tid(),
                    second: w[1].tid(),
                });
            }
        }
        let arena = &self.arena;
        let meta = tree.pool.new_page(tree.rel)?;
        debug_assert_eq!(meta.block(), META_BLOCK);
        // Level 0 from the entries; each level above from (first key, TID,
        // block) of the pages below, until one page remains.
        let mut below = write_level(
            tree,
            0,
            entries.len(),
            |i| (entries[i].key(arena), entries[i].tid(), 0),
            xid,
        )?;
        drop(entries);
        let mut level = 0;
        while below.len() > 1 {
            level += 1;
            below = write_level(
                tree,
                level,
                below.len(),
                |i| (&below[i].0[..], below[i].1, below[i].2),
                xid,
            )?;
        }
        let mut g = meta.lock_exclusive();
        let p = g.page_mut();
        node::meta_init(p, below[0].2, level + 1);
        log_page_image(tree.pool, p, xid, tree.block_ref(META_BLOCK))?;
        Ok(BuildOutcome::Built)
    }
}

/// Writes the pages of one level from its `n` items (`item(i)`: key, TID
/// and, on internal levels, child block; sorted); returns each page's
/// first (key, TID) and block. The first page of the level gets an empty
/// key (minus infinity).
fn write_level<'a>(
    tree: &Btree<'_>,
    level: u16,
    n: usize,
    item: impl Fn(usize) -> (&'a [u8], Tid, u32),
    xid: Xid,
) -> Result<Vec<(Vec<u8>, Tid, u32)>, StorageError> {
    let fill = if level == 0 { LEAF_FILL } else { INTERNAL_FILL };
    // An internal page's first entry is stored without its key.
    let size = |i: usize, first: bool| {
        let len = if level > 0 && first {
            0
        } else {
            item(i).0.len()
        };
        node::entry_size(level, len)
    };
    // Page boundaries: each page takes entries while they fit its fill
    // target (at least one) and leave room for the next one as high key.
    let mut cuts = vec![0];
    let mut used = 0;
    for i in 0..n {
        let first = i == *cuts.last().expect("cuts start with 0");
        let high = if i + 1 < n {
            node::high_key_size(item(i + 1).0.len())
        } else {
            0
        };
        let more = used + size(i, false);
        if !first && (more > fill || more + high > node::USABLE) {
            cuts.push(i);
            used = size(i, true);
        } else {
            used += size(i, first);
        }
    }
    cuts.push(n);
    let pages = cuts.len() - 1;
    let first_block = tree.pool.nblocks(tree.rel)?;
    let mut out = Vec::with_capacity(pages);
    for w in 0..pages {
        let (from, to) = (cuts[w], cuts[w + 1]);
        let buf = tree.pool.new_page(tree.rel)?;
        debug_assert_eq!(buf.block(), first_block + w as u32);
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        node::init(p, level);
        let high = (w + 1 < pages).then(|| {
            let (k, t, _) = item(to);
            (k, t)
        });
        let entries = (from..to).map(|i| {
            let (k, t, c) = item(i);
            let k: &[u8] = if level > 0 && i == from { &[] } else { k };
            (k, t, c)
        });
        node::fill(p, entries, high);
        if w + 1 < pages {
            node::set_right(p, buf.block() + 1);
        }
        let (low, tid) = if from < to {
            let (k, t, _) = item(from);
            (if w == 0 { Vec::new() } else { k.to_vec() }, t)
        } else {
            (Vec::new(), Tid { block: 0, item: 0 })
        };
        out.push((low, tid, buf.block()));
        log_page_image(tree.pool, p, xid, tree.block_ref(buf.block()))?;
    }
    Ok(out)
}
