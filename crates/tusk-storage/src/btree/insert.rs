//! Insertion: placing an entry, splitting full pages, growing the root.
//!
//! An entry goes to the leaf the descent for `After(key, TID)` finds, at
//! the first position above it. If the page lacks room even after
//! compaction, it splits: the entries plus the new one are cut in two by
//! bytes (half each; 90 % left when appending at the right end of the
//! tree, so ascending insertions leave pages as full as a bulk build
//! does), the upper part moves to a new right sibling, and the left page's
//! high key becomes the first (key, TID) of the right page — the separator
//! that then goes into the parent, where it may split the parent in turn.
//! On an internal page the right half's first entry keeps only its child:
//! its key is the separator, now held by the parent (see `node`).
//!
//! The WAL records are written right page first, then the left page (both
//! as page images), then the parent's insertion, so that a crash at any
//! point leaves a tree that searches handle: a split without its downlink
//! is found by moving right (see `search`), and later insertions into the
//! parent level carry on around it. When the root splits, the new root
//! gets one downlink per page of the old root's level, read along the
//! right links from the old root: normally the two halves, and after a
//! crash that lost a root split also the pages that split left behind.

use super::node::{self, Entry, NO_BLOCK};
use super::search::Target;
use super::{corrupt, Btree, META_BLOCK};
use crate::heap::{log_page_change, log_page_image, Tid};
use crate::page::PAGE_SIZE;
use crate::txn::Xid;
use crate::wal::RecordType;
use crate::StorageError;

/// Bytes of a `BtreeInsert` payload before the key: position u16, TID
/// block u32, TID item u16, child u32.
pub(super) const INSERT_HEADER: usize = 12;

impl Btree<'_> {
    /// Inserts the entry (`key`, `tid`) as `xid`, without any uniqueness
    /// check (see `unique` for that). Keys longer than
    /// [`node::MAX_KEY`] are refused (the index layer reports PostgreSQL's
    /// size error before this).
    pub fn insert(&self, key: &[u8], tid: Tid, xid: Xid) -> Result<(), StorageError> {
        let mutex = self.pool.relation_mutex(self.rel);
        let _one_inserter = mutex.lock().unwrap_or_else(|e| e.into_inner());
        self.insert_locked(key, tid, xid)
    }

    /// [`Btree::insert`] for a caller that holds the relation mutex.
    pub(super) fn insert_locked(&self, key: &[u8], tid: Tid, xid: Xid) -> Result<(), StorageError> {
        self.check_key_len(key)?;
        let d = self.descend(&Target::After(key, tid), false)?;
        self.insert_at(d.leaf, d.stack, key, tid, 0, xid)
    }

    /// Refuses keys longer than [`node::MAX_KEY`].
    pub(super) fn check_key_len(&self, key: &[u8]) -> Result<(), StorageError> {
        if key.len() > node::MAX_KEY {
            return Err(StorageError::Other(format!(
                "index key of {} bytes exceeds the maximum of {} in index relation {}",
                key.len(),
                node::MAX_KEY,
                self.rel
            )));
        }
        Ok(())
    }

    /// Puts (`key`, `tid`, `child`) at position `pos` of page `p` (block
    /// `block`, exclusively locked, with room for it) and logs it as a
    /// `BtreeInsert` record.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put_entry(
        &self,
        p: &mut [u8],
        block: u32,
        pos: usize,
        key: &[u8],
        tid: Tid,
        child: u32,
        xid: Xid,
    ) -> Result<(), StorageError> {
        node::insert(p, pos, key, tid, child);
        let mut payload = [0u8; INSERT_HEADER + node::MAX_KEY];
        payload[0..2].copy_from_slice(&(pos as u16).to_le_bytes());
        payload[2..6].copy_from_slice(&tid.block.to_le_bytes());
        payload[6..8].copy_from_slice(&tid.item.to_le_bytes());
        payload[8..12].copy_from_slice(&child.to_le_bytes());
        payload[INSERT_HEADER..INSERT_HEADER + key.len()].copy_from_slice(key);
        log_page_change(
            self.pool,
            p,
            RecordType::BtreeInsert,
            xid,
            self.block_ref(block),
            &payload[..INSERT_HEADER + key.len()],
        )
    }

    /// Inserts (`key`, `tid`) — with `child` on internal levels — into the
    /// page at `block` or a right sibling of it, splitting as needed;
    /// `stack` holds the path of parents.
    fn insert_at(
        &self,
        mut block: u32,
        mut stack: Vec<u32>,
        key: &[u8],
        tid: Tid,
        child: u32,
        xid: Xid,
    ) -> Result<(), StorageError> {
        let target = Target::After(key, tid);
        loop {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            if !node::is_node(p) {
                return Err(corrupt(self.rel, block));
            }
            if target.beyond(p) {
                block = node::right(p);
                if block == NO_BLOCK {
                    return Err(corrupt(self.rel, block));
                }
                continue;
            }
            let level = node::level(p);
            let mut pos = target.position(p);
            if level > 0 {
                pos = pos.max(1);
            }
            if node::fits(p, node::body_size(level, key.len())) {
                return self.put_entry(p, block, pos, key, tid, child, xid);
            }
            let rightmost = node::right(p) == NO_BLOCK;
            let append = pos == node::count(p) && rightmost;
            let (right_block, sep) = self.split(p, block, pos, key, tid, child, append, xid)?;
            drop(g);
            drop(buf);
            return match stack.pop() {
                // The separator goes to the parent (or a right sibling of it).
                Some(parent) => self.insert_at(parent, stack, &sep.0, sep.1, right_block, xid),
                None => self.new_root(level + 1, xid),
            };
        }
    }

    /// Splits the full page `p` (block `block`, exclusively locked) with the
    /// new entry at `pos`; returns the new right page and the separator.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &self,
        p: &mut [u8],
        block: u32,
        pos: usize,
        key: &[u8],
        tid: Tid,
        child: u32,
        append: bool,
        xid: Xid,
    ) -> Result<(u32, (Vec<u8>, Tid)), StorageError> {
        let level = node::level(p);
        let mut old = [0u8; PAGE_SIZE];
        old.copy_from_slice(&p[..PAGE_SIZE]);
        let n = node::count(&old);
        let mut all: Vec<Entry<'_>> = (0..n).map(|i| node::entry(&old, i)).collect();
        all.insert(pos, Entry { key, tid, child });
        let old_high = node::high_key(&old);
        let cut = choose_cut(&all, level, old_high.map(|h| h.key.len()), append)
            .ok_or_else(|| corrupt(self.rel, block))?;
        let sep = (all[cut].key.to_vec(), all[cut].tid);
        let rbuf = self.pool.new_page(self.rel)?;
        let right_block = rbuf.block();
        {
            let mut rg = rbuf.lock_exclusive();
            let r = rg.page_mut();
            node::init(r, level);
            let first_key: &[u8] = if level == 0 { all[cut].key } else { &[] };
            let entries = std::iter::once((first_key, all[cut].tid, all[cut].child))
                .chain(all[cut + 1..].iter().map(|e| (e.key, e.tid, e.child)));
            node::fill(r, entries, old_high.map(|h| (h.key, h.tid)));
            node::set_right(r, node::right(&old));
            log_page_image(self.pool, r, xid, self.block_ref(right_block))?;
        }
        node::init(p, level);
        node::fill(
            p,
            all[..cut].iter().map(|e| (e.key, e.tid, e.child)),
            Some((&sep.0, sep.1)),
        );
        node::set_right(p, right_block);
        log_page_image(self.pool, p, xid, self.block_ref(block))?;
        Ok((right_block, sep))
    }

    /// Makes a new root of `level` above the pages of the level below,
    /// read from the current root along the right links (see the module
    /// doc), and points the metapage at it.
    fn new_root(&self, level: u16, xid: Xid) -> Result<(), StorageError> {
        let (old_root, height) = self.root()?;
        // (low key, block) of each page of the old root's level.
        let mut pages: Vec<(Vec<u8>, Tid, u32)> = Vec::new();
        let mut block = old_root;
        let mut low: (Vec<u8>, Tid) = (Vec::new(), Tid { block: 0, item: 0 });
        while block != NO_BLOCK {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if !node::is_node(p) || node::level(p) + 1 != level {
                return Err(corrupt(self.rel, block));
            }
            pages.push((low.0, low.1, block));
            low = match node::high_key(p) {
                Some(h) => (h.key.to_vec(), h.tid),
                None => (Vec::new(), Tid { block: 0, item: 0 }),
            };
            block = node::right(p);
        }
        let need: usize = pages
            .iter()
            .map(|(k, _, _)| node::entry_size(level, k.len()))
            .sum();
        if need > node::USABLE {
            return Err(StorageError::Other(format!(
                "index relation {}: too many pages without a parent to make a new root",
                self.rel
            )));
        }
        let buf = self.pool.new_page(self.rel)?;
        let root = buf.block();
        {
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            node::init(p, level);
            node::fill(p, pages.iter().map(|(k, t, c)| (&k[..], *t, *c)), None);
            log_page_image(self.pool, p, xid, self.block_ref(root))?;
        }
        let meta = self.pool.read_buffer(self.rel, META_BLOCK)?;
        let mut g = meta.lock_exclusive();
        let p = g.page_mut();
        node::meta_init(p, root, height.max(level) + 1);
        log_page_image(self.pool, p, xid, self.block_ref(META_BLOCK))
    }
}

/// Where to cut `all` (the entries of a full page of `level` plus the new
/// one) so both halves fit: the left half takes its entries and a high key
/// (the first entry of the right half), the right half its entries (on an
/// internal page the first without its key) and the old high key. Aims at
/// half the bytes on each side, or 90 % on the left when appending.
fn choose_cut(
    all: &[Entry<'_>],
    level: u16,
    old_high: Option<usize>,
    append: bool,
) -> Option<usize> {
    let sizes: Vec<usize> = all.iter().map(|e| e.size(level)).collect();
    let total: usize = sizes.iter().sum();
    let goal = if append { total * 9 / 10 } else { total / 2 };
    let right_high = old_high.map_or(0, node::high_key_size);
    let mut best: Option<(usize, usize)> = None;
    let mut left = 0;
    for cut in 1..all.len() {
        left += sizes[cut - 1];
        let left_bytes = left + node::high_key_size(all[cut].key.len());
        let first_right = if level == 0 {
            sizes[cut]
        } else {
            node::entry_size(level, 0)
        };
        let right_bytes = total - left - sizes[cut] + first_right + right_high;
        if left_bytes > node::USABLE || right_bytes > node::USABLE {
            continue;
        }
        let miss = left.abs_diff(goal);
        if best.is_none_or(|(_, m)| miss < m) {
            best = Some((cut, miss));
        }
    }
    best.map(|(c, _)| c)
}

/// Redo of `BtreeInsert` (the page is exclusively locked and older than
/// the record).
pub(super) fn redo_insert(p: &mut [u8], payload: &[u8]) -> Result<(), &'static str> {
    if payload.len() < INSERT_HEADER {
        return Err("short payload");
    }
    let get16 = |o: usize| u16::from_le_bytes([payload[o], payload[o + 1]]);
    let get32 = |o: usize| u32::from_le_bytes(payload[o..o + 4].try_into().unwrap());
    let pos = get16(0) as usize;
    let tid = Tid {
        block: get32(2),
        item: get16(6),
    };
    let child = get32(8);
    let key = &payload[INSERT_HEADER..];
    if pos > node::count(p) || !node::fits(p, node::body_size(node::level(p), key.len())) {
        return Err("insert position out of range or page full");
    }
    node::insert(p, pos, key, tid, child);
    Ok(())
}
