//! B+tree indexes on one integer column (`integer` or `bigint`), in 8 kB
//! pages through the buffer manager.
//!
//! ## Keys
//!
//! An index entry is the pair *(value, heap TID)* and entries are ordered by
//! that pair, so every entry is unique even when values repeat: duplicates
//! need no special pages, and VACUUM can find the exact entry of a dead
//! tuple. Values of both integer types are stored widened to `i64`. NULLs are
//! not indexed (no supported index condition matches NULL).
//!
//! ## Pages
//!
//! Block 0 is the *metapage*: it names the root block and the tree's height.
//! Every other page is a node that starts with the common page header (LSN,
//! checksum; `upper` is set so `page::is_new` is false) and then:
//!
//! ```text
//! 24 magic u32 | level u16 (0 = leaf) | flags u16 | count u16 | pad u16
//! 36 right link u32 (NO_BLOCK on the rightmost page of a level)
//! 40 high key: value i64, tid u64   (valid when flags & HAS_HIGH_KEY)
//! 64 entries, sorted by key:
//!      leaf:     value i64, tid u64              (16 bytes)
//!      internal: value i64, tid u64, child u32   (24 bytes with padding)
//! ```
//!
//! The *high key* is an exclusive upper bound of the keys the page may hold;
//! the rightmost page of a level has none (+infinity). An internal entry
//! `(k, child)` says that `child` holds keys from `k` up to the next entry's
//! key; the first entry of the leftmost internal page of a level has the
//! smallest possible key, so it covers everything below the other entries.
//!
//! ## Lehman–Yao
//!
//! Each level is a linked list through the right links. When a page splits,
//! its upper half moves to a new right sibling and the page's high key
//! becomes the first key of that sibling *before* the separator reaches the
//! parent. A descent that lands on a page whose high key is not above the
//! key it looks for therefore just moves right. This is what makes the tree
//! correct for readers that run while the writer splits (they hold one page
//! lock at a time) and, as important here, what makes a split crash-safe
//! with one WAL record per page: the records are written right page first,
//! then the left page, then the parent; a crash after the left page but
//! before the parent leaves a split without a downlink, which searches
//! handle by moving right, and which the next split of that page repairs in
//! passing (a later insertion into the parent simply carries the new
//! separator). A crash before the left page leaves an unreferenced page.
//!
//! ## WAL
//!
//! `BtreeInsert` (position and entry) for an insertion without split,
//! `BtreePage` (a whole page image) for each page a split, a new root or a
//! metapage update writes, `BtreeDelete` (positions, as a list or a bitmap, whichever is
//! smaller) for the entries VACUUM removes from a leaf. The first change of a page after a checkpoint logs
//! the page instead (as heap changes do). The bulk build of `CREATE INDEX`
//! logs each page it writes as an image (see `Database::log_create_index`).
//!
//! ## Locking
//!
//! Insertions into one index run one at a time: [`Btree::insert`] holds the
//! index's relation mutex ([`BufferPool::relation_mutex`]) for the descent
//! and any splits, so splits never race each other (concurrent
//! transactions insert into the same index). Readers take page locks
//! shared, one page at a time, and the inserter takes them exclusive. A
//! scan remembers the last key it returned and resumes from there, moving
//! right if the page split in between, so it sees every entry exactly
//! once. VACUUM's bulk deletion takes the same mutex for each leaf it
//! cleans (so that the leaf does not change between its look and its
//! removal); it never removes pages.

use crate::bufmgr::BufferPool;
use crate::heap::{log_page_change, log_page_image, Tid};
use crate::page::{self, get_u16, get_u32, get_u64, put_u16, put_u32, PAGE_HEADER_SIZE, PAGE_SIZE};
use crate::txn::Xid;
use crate::wal::{decode_item_set, encode_item_set, BlockRef, RecordType};
use crate::StorageError;
use std::ops::Bound;

/// The metapage's block number.
pub const META_BLOCK: u32 = 0;
/// "No block": the right link of a rightmost page.
pub const NO_BLOCK: u32 = u32::MAX;

const META_MAGIC: u32 = 0x4d54_4254; // "TBTM"
const NODE_MAGIC: u32 = 0x4e54_4254; // "TBTN"
const OFF_MAGIC: usize = PAGE_HEADER_SIZE;
const OFF_LEVEL: usize = 28;
const OFF_FLAGS: usize = 30;
const OFF_COUNT: usize = 32;
const OFF_RIGHT: usize = 36;
const OFF_HIGH: usize = 40;
// Metapage fields.
const OFF_ROOT: usize = 40;
const OFF_HEIGHT: usize = 44;
const ENTRIES: usize = 64;
const HAS_HIGH_KEY: u16 = 1;
const LEAF_ENTRY: usize = 16;
const INTERNAL_ENTRY: usize = 24;
/// Entries a leaf page holds.
pub const LEAF_CAPACITY: usize = (PAGE_SIZE - ENTRIES) / LEAF_ENTRY;
/// Entries an internal page holds.
pub const INTERNAL_CAPACITY: usize = (PAGE_SIZE - ENTRIES) / INTERNAL_ENTRY;
/// Entries per page a bulk build leaves (PostgreSQL's fillfactors: 90 % for
/// leaves, 70 % for internal pages), so that later insertions do not split
/// at once.
const LEAF_BUILD_FILL: usize = LEAF_CAPACITY * 9 / 10;
const INTERNAL_BUILD_FILL: usize = INTERNAL_CAPACITY * 7 / 10;

/// An index key: the column value and the heap TID (`Tid::to_u64`).
pub type Key = (i64, u64);
/// The smallest key: the lower bound of the leftmost page of each level.
const MIN_KEY: Key = (i64::MIN, 0);

#[inline]
fn get_key(p: &[u8], off: usize) -> Key {
    (
        i64::from_le_bytes(p[off..off + 8].try_into().unwrap()),
        u64::from_le_bytes(p[off + 8..off + 16].try_into().unwrap()),
    )
}
#[inline]
fn put_key(p: &mut [u8], off: usize, k: Key) {
    p[off..off + 8].copy_from_slice(&k.0.to_le_bytes());
    p[off + 8..off + 16].copy_from_slice(&k.1.to_le_bytes());
}

/// Byte-level access to a node page. All functions assume a node page
/// (checked by [`is_node`] where pages come from disk).
mod node {
    use super::*;

    pub fn init(p: &mut [u8], level: u16) {
        page::init(p);
        put_u32(p, OFF_MAGIC, NODE_MAGIC);
        put_u16(p, OFF_LEVEL, level);
        put_u32(p, OFF_RIGHT, NO_BLOCK);
    }
    pub fn is_node(p: &[u8]) -> bool {
        !page::is_new(p) && get_u32(p, OFF_MAGIC) == NODE_MAGIC
    }
    pub fn level(p: &[u8]) -> u16 {
        get_u16(p, OFF_LEVEL)
    }
    pub fn is_leaf(p: &[u8]) -> bool {
        level(p) == 0
    }
    pub fn count(p: &[u8]) -> usize {
        get_u16(p, OFF_COUNT) as usize
    }
    pub fn set_count(p: &mut [u8], n: usize) {
        put_u16(p, OFF_COUNT, n as u16);
    }
    pub fn right(p: &[u8]) -> u32 {
        get_u32(p, OFF_RIGHT)
    }
    pub fn set_right(p: &mut [u8], b: u32) {
        put_u32(p, OFF_RIGHT, b);
    }
    pub fn high_key(p: &[u8]) -> Option<Key> {
        (get_u16(p, OFF_FLAGS) & HAS_HIGH_KEY != 0).then(|| get_key(p, OFF_HIGH))
    }
    pub fn set_high_key(p: &mut [u8], k: Option<Key>) {
        let flags = get_u16(p, OFF_FLAGS) & !HAS_HIGH_KEY;
        match k {
            Some(k) => {
                put_key(p, OFF_HIGH, k);
                put_u16(p, OFF_FLAGS, flags | HAS_HIGH_KEY);
            }
            None => put_u16(p, OFF_FLAGS, flags),
        }
    }
    pub fn entry_size(p: &[u8]) -> usize {
        if is_leaf(p) {
            LEAF_ENTRY
        } else {
            INTERNAL_ENTRY
        }
    }
    pub fn capacity(p: &[u8]) -> usize {
        if is_leaf(p) {
            LEAF_CAPACITY
        } else {
            INTERNAL_CAPACITY
        }
    }
    #[inline]
    pub fn key(p: &[u8], i: usize) -> Key {
        get_key(p, ENTRIES + i * entry_size(p))
    }
    pub fn child(p: &[u8], i: usize) -> u32 {
        get_u32(p, ENTRIES + i * INTERNAL_ENTRY + 16)
    }
    /// Whether `key` belongs to a page to the right of this one.
    pub fn beyond(p: &[u8], key: Key) -> bool {
        high_key(p).is_some_and(|h| key >= h)
    }
    /// Position of the first entry not below `key`.
    pub fn lower_bound(p: &[u8], key: Key) -> usize {
        let (mut lo, mut hi) = (0, count(p));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self::key(p, mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
    /// The child of an internal page that covers `key`.
    pub fn child_for(p: &[u8], key: Key) -> u32 {
        let (mut lo, mut hi) = (0, count(p));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self::key(p, mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        child(p, lo.saturating_sub(1))
    }
    /// Writes an entry (`child` ignored on leaves) at position `i`,
    /// shifting the entries from `i` on one place up. Caller checked room.
    pub fn insert(p: &mut [u8], i: usize, key: Key, child: u32) {
        let es = entry_size(p);
        let n = count(p);
        let at = ENTRIES + i * es;
        p.copy_within(at..ENTRIES + n * es, at + es);
        write(p, i, key, child);
        set_count(p, n + 1);
    }
    pub fn write(p: &mut [u8], i: usize, key: Key, child: u32) {
        let at = ENTRIES + i * entry_size(p);
        put_key(p, at, key);
        if !is_leaf(p) {
            put_u32(p, at + 16, child);
            put_u32(p, at + 20, 0);
        }
    }
    /// Removes the entries at the ascending positions `gone`.
    pub fn remove(p: &mut [u8], gone: &[u16]) {
        let es = entry_size(p);
        let n = count(p);
        // The entries between two removed ones move down together.
        let mut out = gone.first().map_or(n, |&g| g as usize);
        for (k, &g) in gone.iter().enumerate() {
            let from = g as usize + 1;
            let to = gone.get(k + 1).map_or(n, |&x| x as usize);
            page::move_bytes(p, ENTRIES + from * es, ENTRIES + out * es, (to - from) * es);
            out += to - from;
        }
        set_count(p, out);
    }
}

fn meta_init(p: &mut [u8], root: u32, height: u16) {
    page::init(p);
    put_u32(p, OFF_MAGIC, META_MAGIC);
    put_u32(p, OFF_ROOT, root);
    put_u16(p, OFF_HEIGHT, height);
}

fn corrupt(rel: u32, block: u32) -> StorageError {
    StorageError::Other(format!(
        "index relation {rel} block {block} is not a btree page"
    ))
}

/// What [`Btree::bulk_delete`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkDeleteStats {
    /// Entries removed.
    pub removed: u64,
    /// Entries left.
    pub remaining: u64,
    /// Pages of the index (including the metapage).
    pub pages: u32,
}

/// An index relation.
pub struct Btree<'p> {
    pool: &'p BufferPool,
    rel: u32,
}

impl<'p> Btree<'p> {
    pub fn new(pool: &'p BufferPool, rel: u32) -> Self {
        Btree { pool, rel }
    }

    fn block_ref(&self, block: u32) -> BlockRef {
        BlockRef {
            rel: self.rel,
            block,
        }
    }

    /// Builds the index from `entries` into the empty relation (CREATE
    /// INDEX): sorts them, writes the leaves left to right, then each
    /// internal level from the first keys of the level below, then the
    /// metapage. Each page is logged as an image.
    pub fn build(&self, entries: &mut [Key], xid: Xid) -> Result<(), StorageError> {
        if self.pool.nblocks(self.rel)? != 0 {
            return Err(StorageError::Other(
                "btree build needs an empty relation".into(),
            ));
        }
        entries.sort_unstable();
        let meta = self.pool.new_page(self.rel)?;
        debug_assert_eq!(meta.block(), META_BLOCK);
        // Level 0 from the entries; each level above from (first key, block)
        // of the pages below, until one page remains.
        let mut level: u16 = 0;
        let mut below: Vec<(Key, u32)> = Vec::new();
        let leaves = entries.len().div_ceil(LEAF_BUILD_FILL).max(1);
        let first_block = self.pool.nblocks(self.rel)?;
        for i in 0..leaves {
            let chunk = &entries[(i * LEAF_BUILD_FILL).min(entries.len())
                ..((i + 1) * LEAF_BUILD_FILL).min(entries.len())];
            let next = entries.get((i + 1) * LEAF_BUILD_FILL).copied();
            let buf = self.pool.new_page(self.rel)?;
            debug_assert_eq!(buf.block(), first_block + i as u32);
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            node::init(p, 0);
            for (j, &k) in chunk.iter().enumerate() {
                node::write(p, j, k, 0);
            }
            node::set_count(p, chunk.len());
            if i + 1 < leaves {
                node::set_right(p, buf.block() + 1);
                node::set_high_key(p, next);
            }
            let lower = if i == 0 { MIN_KEY } else { chunk[0] };
            below.push((lower, buf.block()));
            log_page_image(self.pool, p, xid, self.block_ref(buf.block()))?;
        }
        while below.len() > 1 {
            level += 1;
            let pages = below.len().div_ceil(INTERNAL_BUILD_FILL);
            let first_block = self.pool.nblocks(self.rel)?;
            let mut above = Vec::with_capacity(pages);
            for i in 0..pages {
                let chunk = &below
                    [i * INTERNAL_BUILD_FILL..((i + 1) * INTERNAL_BUILD_FILL).min(below.len())];
                let buf = self.pool.new_page(self.rel)?;
                debug_assert_eq!(buf.block(), first_block + i as u32);
                let mut g = buf.lock_exclusive();
                let p = g.page_mut();
                node::init(p, level);
                for (j, &(k, child)) in chunk.iter().enumerate() {
                    node::write(p, j, k, child);
                }
                node::set_count(p, chunk.len());
                if i + 1 < pages {
                    node::set_right(p, buf.block() + 1);
                    node::set_high_key(p, Some(below[(i + 1) * INTERNAL_BUILD_FILL].0));
                }
                above.push((chunk[0].0, buf.block()));
                log_page_image(self.pool, p, xid, self.block_ref(buf.block()))?;
            }
            below = above;
        }
        let mut g = meta.lock_exclusive();
        let p = g.page_mut();
        meta_init(p, below[0].1, level + 1);
        log_page_image(self.pool, p, xid, self.block_ref(META_BLOCK))
    }

    /// Root block and height from the metapage.
    fn root(&self) -> Result<(u32, u16), StorageError> {
        let buf = self.pool.read_buffer(self.rel, META_BLOCK)?;
        let g = buf.lock_shared();
        let p = g.page();
        if page::is_new(p) || get_u32(p, OFF_MAGIC) != META_MAGIC {
            return Err(corrupt(self.rel, META_BLOCK));
        }
        Ok((get_u32(p, OFF_ROOT), get_u16(p, OFF_HEIGHT)))
    }

    /// Descends to the leaf that covers `key`; returns the blocks of the
    /// internal pages passed on the way (the last one is the leaf's parent).
    fn descend(&self, key: Key) -> Result<(u32, Vec<u32>), StorageError> {
        let (mut block, _) = self.root()?;
        let mut stack = Vec::new();
        loop {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if !node::is_node(p) {
                return Err(corrupt(self.rel, block));
            }
            if node::beyond(p, key) {
                block = node::right(p);
                continue;
            }
            if node::is_leaf(p) {
                return Ok((block, stack));
            }
            stack.push(block);
            block = node::child_for(p, key);
        }
    }

    /// Inserts `(value, tid)` (INSERT's index maintenance) as `xid`.
    pub fn insert(&self, value: i64, tid: Tid, xid: Xid) -> Result<(), StorageError> {
        let mutex = self.pool.relation_mutex(self.rel);
        let _one_inserter = mutex.lock().unwrap_or_else(|e| e.into_inner());
        let key = (value, tid.to_u64());
        let (leaf, stack) = self.descend(key)?;
        self.insert_at(leaf, stack, key, 0, xid)
    }

    /// Inserts `key` (with `child` on internal levels) into the page at
    /// `block` or a right sibling of it, splitting as needed; `stack` holds
    /// the path of parents.
    fn insert_at(
        &self,
        mut block: u32,
        mut stack: Vec<u32>,
        key: Key,
        child: u32,
        xid: Xid,
    ) -> Result<(), StorageError> {
        loop {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            if !node::is_node(p) {
                return Err(corrupt(self.rel, block));
            }
            if node::beyond(p, key) {
                block = node::right(p);
                continue;
            }
            let pos = node::lower_bound(p, key);
            if node::count(p) < node::capacity(p) {
                node::insert(p, pos, key, child);
                let mut payload = [0u8; 2 + 16 + 4];
                put_u16(&mut payload, 0, pos as u16);
                put_key(&mut payload, 2, key);
                put_u32(&mut payload, 18, child);
                let len = if node::is_leaf(p) { 18 } else { 22 };
                return log_page_change(
                    self.pool,
                    p,
                    RecordType::BtreeInsert,
                    xid,
                    self.block_ref(block),
                    &payload[..len],
                );
            }
            // Split: all entries plus the new one, cut in two.
            let level = node::level(p);
            let n = node::count(p);
            let mut all: Vec<(Key, u32)> = (0..n)
                .map(|i| {
                    let c = if level == 0 { 0 } else { node::child(p, i) };
                    (node::key(p, i), c)
                })
                .collect();
            all.insert(pos, (key, child));
            // Appending to the rightmost page (ascending insertions) leaves
            // the left page nearly full, as a bulk build would.
            let cut = if pos == n && node::right(p) == NO_BLOCK {
                all.len() * 9 / 10
            } else {
                all.len() / 2
            };
            let sep = all[cut].0;
            let rbuf = self.pool.new_page(self.rel)?;
            let right_block = rbuf.block();
            {
                let mut rg = rbuf.lock_exclusive();
                let r = rg.page_mut();
                node::init(r, level);
                for (j, &(k, c)) in all[cut..].iter().enumerate() {
                    node::write(r, j, k, c);
                }
                node::set_count(r, all.len() - cut);
                node::set_right(r, node::right(p));
                node::set_high_key(r, node::high_key(p));
                log_page_image(self.pool, r, xid, self.block_ref(right_block))?;
            }
            for (j, &(k, c)) in all[..cut].iter().enumerate() {
                node::write(p, j, k, c);
            }
            node::set_count(p, cut);
            node::set_right(p, right_block);
            node::set_high_key(p, Some(sep));
            log_page_image(self.pool, p, xid, self.block_ref(block))?;
            drop(g);
            drop(buf);
            match stack.pop() {
                Some(parent) => {
                    // The separator goes to the parent (or a right sibling of it).
                    return self.insert_at(parent, stack, sep, right_block, xid);
                }
                None => {
                    let (root, height) = self.root()?;
                    if root != block {
                        // Only a second writer could have grown the tree
                        // above this page since the descent.
                        return Err(StorageError::Other(format!(
                            "index relation {} changed its root during an insertion",
                            self.rel
                        )));
                    }
                    return self.new_root(block, right_block, sep, level + 1, height + 1, xid);
                }
            }
        }
    }

    /// Makes a new root above the split pages `left` and `right`.
    fn new_root(
        &self,
        left: u32,
        right: u32,
        sep: Key,
        level: u16,
        height: u16,
        xid: Xid,
    ) -> Result<(), StorageError> {
        let buf = self.pool.new_page(self.rel)?;
        let root = buf.block();
        {
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            node::init(p, level);
            node::write(p, 0, MIN_KEY, left);
            node::write(p, 1, sep, right);
            node::set_count(p, 2);
            log_page_image(self.pool, p, xid, self.block_ref(root))?;
        }
        let meta = self.pool.read_buffer(self.rel, META_BLOCK)?;
        let mut g = meta.lock_exclusive();
        let p = g.page_mut();
        meta_init(p, root, height);
        log_page_image(self.pool, p, xid, self.block_ref(META_BLOCK))
    }

    /// A cursor over the entries whose value lies within the bounds.
    pub fn scan(&self, lo: Bound<i64>, hi: Bound<i64>) -> Result<Cursor, StorageError> {
        let start = match lo {
            Bound::Unbounded => MIN_KEY,
            Bound::Included(v) => (v, 0),
            Bound::Excluded(v) => match v.checked_add(1) {
                Some(v) => (v, 0),
                None => (i64::MAX, u64::MAX),
            },
        };
        let (leaf, _) = self.descend(start)?;
        Ok(Cursor {
            rel: self.rel,
            block: leaf,
            after: None,
            start,
            hi,
            done: false,
        })
    }

    /// Removes every entry whose TID is dead (VACUUM's index pass,
    /// PostgreSQL's `ambulkdelete`): walks the leaf level left to right once.
    /// `are_dead(probes, dead)` answers for all the TIDs of one leaf page at
    /// a time, so a dead-TID store can probe them together (the TIDs of a
    /// leaf are in key order, i.e. in random heap order: batching lets the
    /// store overlap its cache misses). `probe` turns each TID into what
    /// `are_dead` takes (the store's own TID type), as the entries are read.
    pub fn bulk_delete<P>(
        &self,
        probe: impl Fn(Tid) -> P,
        mut are_dead: impl FnMut(&[P], &mut [bool]),
        xid: Xid,
    ) -> Result<BulkDeleteStats, StorageError> {
        let mut stats = BulkDeleteStats {
            pages: self.pool.nblocks(self.rel)?,
            ..Default::default()
        };
        // The leftmost leaf: descend along first children.
        let (mut block, _) = self.descend(MIN_KEY)?;
        let mut gone: Vec<u16> = Vec::new();
        let mut payload: Vec<u8> = Vec::new();
        let mut probes: Vec<P> = Vec::new();
        let mut dead: Vec<bool> = Vec::new();
        let mutex = self.pool.relation_mutex(self.rel);
        while block != NO_BLOCK {
            // No insertion (and so no split) changes the leaf between the
            // look and the removal.
            let _no_inserts = mutex.lock().unwrap_or_else(|e| e.into_inner());
            let buf = self.pool.read_buffer(self.rel, block)?;
            // Look under a shared lock first: most pages of a sparse delete
            // keep everything and need no exclusive lock nor WAL.
            probes.clear();
            let next = {
                let g = buf.lock_shared();
                let p = g.page();
                if !node::is_node(p) || !node::is_leaf(p) {
                    return Err(corrupt(self.rel, block));
                }
                let n = node::count(p);
                probes.extend(
                    p[ENTRIES..ENTRIES + n * LEAF_ENTRY]
                        .chunks_exact(LEAF_ENTRY)
                        .map(|e| probe(Tid::from_u64(get_u64(e, 8)))),
                );
                node::right(p)
            };
            if next != NO_BLOCK {
                self.pool.prefetch_mapping(self.rel, next);
            }
            dead.clear();
            dead.resize(probes.len(), false);
            are_dead(&probes, &mut dead);
            gone.clear();
            gone.extend((0..dead.len()).filter(|&i| dead[i]).map(|i| i as u16));
            stats.remaining += (dead.len() - gone.len()) as u64;
            if !gone.is_empty() {
                // Inserters wait on the index's mutex: nothing changed
                // the page since the look.
                let mut g = buf.lock_exclusive();
                let p = g.page_mut();
                node::remove(p, &gone);
                payload.clear();
                encode_item_set(&gone, &mut payload);
                log_page_change(
                    self.pool,
                    p,
                    RecordType::BtreeDelete,
                    xid,
                    self.block_ref(block),
                    &payload,
                )?;
                stats.removed += gone.len() as u64;
            }
            block = next;
        }
        Ok(stats)
    }
}

/// Walks the leaf level from a start key up to an upper bound, handing out
/// TIDs in batches; between batches no lock or pin is held.
pub struct Cursor {
    rel: u32,
    block: u32,
    /// The last key handed out (resume strictly after it).
    after: Option<Key>,
    start: Key,
    hi: Bound<i64>,
    done: bool,
}

impl Cursor {
    /// Appends up to `max` TIDs of the index (in `pool`) to `out`; returns
    /// false once the range is exhausted.
    pub fn next_batch(
        &mut self,
        pool: &BufferPool,
        out: &mut Vec<Tid>,
        max: usize,
    ) -> Result<bool, StorageError> {
        let target = out.len() + max;
        while !self.done && out.len() < target {
            let buf = pool.read_buffer(self.rel, self.block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if !node::is_node(p) || !node::is_leaf(p) {
                return Err(corrupt(self.rel, self.block));
            }
            let from = match self.after {
                Some(k) => {
                    if node::beyond(p, k) {
                        // Split since the last batch: our place moved right.
                        self.block = node::right(p);
                        continue;
                    }
                    let i = node::lower_bound(p, k);
                    if i < node::count(p) && node::key(p, i) == k {
                        i + 1
                    } else {
                        i
                    }
                }
                None => {
                    if node::beyond(p, self.start) {
                        self.block = node::right(p);
                        continue;
                    }
                    node::lower_bound(p, self.start)
                }
            };
            let n = node::count(p);
            let mut i = from;
            while i < n && out.len() < target {
                let k = node::key(p, i);
                let past = match self.hi {
                    Bound::Unbounded => false,
                    Bound::Included(h) => k.0 > h,
                    Bound::Excluded(h) => k.0 >= h,
                };
                if past {
                    self.done = true;
                    break;
                }
                out.push(Tid::from_u64(k.1));
                self.after = Some(k);
                i += 1;
            }
            if i == n && !self.done {
                match node::right(p) {
                    NO_BLOCK => self.done = true,
                    r => self.block = r,
                }
            }
        }
        Ok(!self.done)
    }
}

/// Redo of the btree record kinds other than page images (the page is
/// exclusively locked, its LSN is older than the record).
pub(crate) fn redo(kind: RecordType, p: &mut [u8], payload: &[u8]) -> Result<(), &'static str> {
    if !node::is_node(p) {
        return Err("not a btree page");
    }
    match kind {
        RecordType::BtreeInsert => {
            if payload.len() < 18 {
                return Err("short payload");
            }
            let pos = get_u16(payload, 0) as usize;
            let key = get_key(payload, 2);
            let child = if payload.len() >= 22 {
                get_u32(payload, 18)
            } else {
                0
            };
            if pos > node::count(p) || node::count(p) >= node::capacity(p) {
                return Err("insert position out of range");
            }
            node::insert(p, pos, key, child);
        }
        RecordType::BtreeDelete => {
            let mut gone = Vec::new();
            decode_item_set(payload, &mut gone)?;
            if gone.iter().any(|&g| g as usize >= node::count(p))
                || gone.windows(2).any(|w| w[0] >= w[1])
            {
                return Err("delete positions out of range");
            }
            node::remove(p, &gone);
        }
        _ => return Err("not a btree record"),
    }
    Ok(())
}
