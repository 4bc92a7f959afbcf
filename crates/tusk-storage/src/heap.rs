//! Heap relations: unordered tuples in slotted pages, with MVCC headers.
//!
//! Insertion fills pages the free-space map (`fsm`) knows to have room
//! after a VACUUM, then the relation's last page, adding pages as needed
//! ([`HeapInserter`] keeps its target page pinned across rows). Deletion
//! stamps the deleting xid into the tuple's `xmax`; the dead version stays
//! until VACUUM. Scans read a page under its shared content lock and hand the
//! visible tuples to a callback.
//!
//! Every change is WAL-logged while the page is still exclusively locked,
//! and the record's LSN is stamped into the page before the lock is released
//! (see `wal` and `recovery`): an insertion into an empty page logs
//! `HeapInsertInit` (redo formats the page, so no image is needed), any other
//! change logs its item (and tuple), or the whole page when it is the page's
//! first change since the last checkpoint and `full_page_writes` is on.
//! Changes to a relation created by the running transaction (CREATE TABLE
//! AS) are not logged at all: the commit writes and fsyncs the relation
//! before its commit record, as PostgreSQL does with `wal_level = minimal`.

use crate::bufmgr::{BufferPool, PinnedBuffer};
use crate::page;
use crate::snapshot::Snapshot;
use crate::tuple;
use crate::txn::{TxnManager, Xid};
use crate::wal::{BlockRef, RecordType};
use crate::StorageError;

/// Logs a change just made to `page` (block `block` of `rel`, exclusively
/// locked by the caller) and stamps the record's LSN into it. `payload` is
/// the change; it is replaced by a full-page image when one is due. Without a
/// WAL (recovery, bare pools in tests) nothing is logged.
pub(crate) fn log_page_change(
    pool: &BufferPool,
    page: &mut [u8],
    kind: RecordType,
    xid: Xid,
    block: BlockRef,
    payload: &[u8],
) -> Result<(), StorageError> {
    let Some(wal) = pool.wal_for(block.rel) else {
        return Ok(());
    };
    let lsn = wal.insert_page_change(kind, xid, block, page, payload)?;
    page::set_lsn(page, lsn);
    Ok(())
}

/// Logs the whole of `page` (block `block`, exclusively locked, just
/// changed) as a page image of kind `BtreePage` and stamps the LSN: for
/// changes that rewrite a page or touch several pages at once (btree
/// splits). Nothing is logged for an unlogged relation.
pub(crate) fn log_page_image(
    pool: &BufferPool,
    page: &mut [u8],
    xid: Xid,
    block: BlockRef,
) -> Result<(), StorageError> {
    let Some(wal) = pool.wal_for(block.rel) else {
        return Ok(());
    };
    let lsn = wal.insert(
        RecordType::BtreePage,
        xid,
        Some(block),
        true,
        &page[..page::PAGE_SIZE],
    )?;
    page::set_lsn(page, lsn);
    Ok(())
}

/// A tuple's address: block number and item number (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tid {
    pub block: u32,
    pub item: u16,
}

impl Tid {
    /// Packs the TID into one integer (for carrying it through the executor).
    pub fn to_u64(self) -> u64 {
        (self.block as u64) << 16 | self.item as u64
    }
    pub fn from_u64(v: u64) -> Tid {
        Tid {
            block: (v >> 16) as u32,
            item: (v & 0xffff) as u16,
        }
    }
}

/// Caches the commit status of the last xids looked up during a scan: the
/// tuples of a page almost always share a handful of xids.
pub struct Visibility<'a> {
    txn: &'a TxnManager,
    snapshot: Snapshot,
    last: [(Xid, bool); 2],
    /// The last inserting xid found visible to the snapshot ([`NO_XID`] at
    /// first), never one of the snapshot's own (whose visibility depends on
    /// the command id). Whether another transaction's insertion is visible
    /// depends on its xid alone, so a tuple with this xmin and no `xmax` is
    /// visible without further checks: a bulk-loaded table costs one
    /// comparison per tuple.
    visible_xmin: Xid,
}

/// The commit status of `xid` through a two-entry cache.
#[inline]
fn cached_committed(txn: &TxnManager, last: &mut [(Xid, bool); 2], xid: Xid) -> bool {
    if last[0].0 == xid {
        return last[0].1;
    }
    if last[1].0 == xid {
        return last[1].1;
    }
    let c = txn.is_committed(xid);
    last[1] = last[0];
    last[0] = (xid, c);
    c
}

/// No transaction ever gets this xid (the counter stops well before it).
const NO_XID: Xid = u32::MAX;

impl<'a> Visibility<'a> {
    pub fn new(txn: &'a TxnManager, snapshot: Snapshot) -> Self {
        Visibility {
            txn,
            snapshot,
            last: [(0, false); 2],
            visible_xmin: NO_XID,
        }
    }

    #[inline]
    fn committed(&mut self, xid: Xid) -> bool {
        cached_committed(self.txn, &mut self.last, xid)
    }

    /// Whether the tuple (whose header is the start of `t`) is visible to
    /// the snapshot.
    #[inline(always)]
    pub fn sees(&mut self, t: &[u8]) -> bool {
        if tuple::xmin(t) == self.visible_xmin && tuple::xmax(t) == crate::txn::INVALID_XID {
            return true;
        }
        self.sees_slow(t)
    }

    #[inline(never)]
    fn sees_slow(&mut self, t: &[u8]) -> bool {
        let (txn, last) = (self.txn, &mut self.last);
        let visible = self.snapshot.sees(t, |x| cached_committed(txn, last, x));
        let xmin = tuple::xmin(t);
        if visible && tuple::xmax(t) == crate::txn::INVALID_XID && !self.snapshot.is_own(xmin) {
            self.visible_xmin = xmin;
        }
        visible
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Commit status lookup with the same cache (for callers that need it).
    pub fn is_committed(&mut self, xid: Xid) -> bool {
        self.committed(xid)
    }
}

/// Calls `f(item, tuple)` for every tuple on block `block` of `rel` visible
/// through `vis`. The page stays share-locked while `f` runs. A convenience
/// over [`scan_page_items`] (which scans reuse to avoid its allocation).
pub fn scan_page(
    pool: &BufferPool,
    rel: u32,
    block: u32,
    vis: &mut Visibility<'_>,
    mut f: impl FnMut(u16, &[u8]),
) -> Result<(), StorageError> {
    let mut items = Vec::new();
    scan_page_items(pool, rel, block, vis, &mut items, 0, |p, items, _| {
        for it in items {
            f(it.item(), it.tuple(p));
        }
    })
}

pub use crate::visible::VisibleItem;

/// Page-at-a-time form of [`scan_page`]: fills `items` with the tuples of
/// block `block` visible through `vis` and calls `f(page, items, dense)`
/// once, with the page still share-locked; `dense` says whether every one of
/// them stores its first `natts` attributes with no NULL
/// ([`tuple::stores_dense`]; always true for `natts` = 0). Callers that
/// deform the tuples column by column (the executor's sequential scan) run
/// one tight loop per column instead of one call per tuple.
pub fn scan_page_items<R>(
    pool: &BufferPool,
    rel: u32,
    block: u32,
    vis: &mut Visibility<'_>,
    items: &mut Vec<VisibleItem>,
    natts: usize,
    f: impl FnOnce(&[u8], &[VisibleItem], bool) -> R,
) -> Result<R, StorageError> {
    let buf = pool.read_buffer(rel, block)?;
    let guard = buf.lock_shared();
    let p = guard.page();
    items.clear();
    let mut dense = true;
    if !page::is_new(p) {
        let n = page::item_count(p) as usize;
        items.reserve(n);
        for (i, (state, off, len)) in page::line_pointers(p) {
            if state != page::ItemState::Normal || len < tuple::TUPLE_HEADER_SIZE {
                continue;
            }
            // A tuple that does not fit the page (a damaged page that passed
            // its checksum) is skipped rather than read out of bounds.
            let Some(item) = VisibleItem::new(i, off, len) else {
                continue;
            };
            let header: &[u8; tuple::TUPLE_HEADER_SIZE] = item.tuple(p)[..tuple::TUPLE_HEADER_SIZE]
                .try_into()
                .unwrap();
            if vis.sees(header) {
                let word = u32::from_le_bytes(header[8..12].try_into().unwrap());
                dense &= natts == 0 || tuple::stores_dense(word, natts);
                items.push(item);
            }
        }
    }
    Ok(f(p, items, dense))
}

/// Calls `f(tid, tuple)` for each of `tids` (of relation `rel`) whose
/// tuple is visible through `vis` (an index scan's heap fetches). A TID is
/// the root of a HOT chain: the version the snapshot sees is looked for
/// along the chain ([`crate::prune::hot_search`]) and `f` gets that
/// version's TID. Runs of TIDs on the same block share one buffer lookup
/// and lock.
pub fn fetch(
    pool: &BufferPool,
    rel: u32,
    tids: &[Tid],
    vis: &mut Visibility<'_>,
    mut f: impl FnMut(Tid, &[u8]),
) -> Result<(), StorageError> {
    fetch_each(pool, rel, tids, vis, |_, tid, t| f(tid, t))
}

/// [`fetch`], also telling `f` the position in `tids` of the TID each
/// visible tuple was found from (an index nested loop knows from it which
/// outer row the tuple belongs to). `f` is called in the order of `tids`,
/// at most once per position.
pub fn fetch_each(
    pool: &BufferPool,
    rel: u32,
    tids: &[Tid],
    vis: &mut Visibility<'_>,
    mut f: impl FnMut(usize, Tid, &[u8]),
) -> Result<(), StorageError> {
    let mut i = 0;
    while i < tids.len() {
        let block = tids[i].block;
        let run = tids[i..].iter().take_while(|t| t.block == block).count();
        let buf = pool.read_buffer(rel, block)?;
        let g = buf.lock_shared();
        let p = g.page();
        if !page::is_new(p) {
            let n = page::item_count(p);
            for (k, &tid) in tids[i..i + run].iter().enumerate() {
                if tid.item == 0 || tid.item > n {
                    continue;
                }
                if let Some((item, t)) = crate::prune::hot_search(p, tid.item, vis) {
                    f(i + k, Tid { block, item }, t);
                }
            }
        }
        i += run;
    }
    Ok(())
}

/// Calls `f` with the tuple at `tid` of `rel`, whatever its visibility
/// (INSERT ... ON CONFLICT reads the version a unique check found live);
/// `None` if no tuple is there.
pub fn read_tuple<R>(
    pool: &BufferPool,
    rel: u32,
    tid: Tid,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<Option<R>, StorageError> {
    let buf = pool.read_buffer(rel, tid.block)?;
    let g = buf.lock_shared();
    let p = g.page();
    if page::is_new(p) || tid.item == 0 || tid.item > page::item_count(p) {
        return Ok(None);
    }
    Ok(page::item_bytes(p, tid.item).map(f))
}

/// Replaces each of `tids` (versions of rows of `rel`, as a scan returned
/// them) with the TID its index entries must carry: the root of its HOT
/// chain (see `prune`). CREATE INDEX calls this before building. A version
/// no chain reaches keeps its own TID.
pub fn index_tids(pool: &BufferPool, rel: u32, tids: &mut [Tid]) -> Result<(), StorageError> {
    let mut i = 0;
    while i < tids.len() {
        let block = tids[i].block;
        let run = tids[i..].iter().take_while(|t| t.block == block).count();
        let buf = pool.read_buffer(rel, block)?;
        let g = buf.lock_shared();
        let roots = crate::prune::root_items(g.page());
        for t in &mut tids[i..i + run] {
            match roots.get(t.item as usize) {
                Some(&r) if r != 0 => t.item = r,
                _ => {}
            }
        }
        i += run;
    }
    Ok(())
}

/// Appends tuples to a relation, keeping the current target page pinned.
pub struct HeapInserter<'p> {
    pool: &'p BufferPool,
    rel: u32,
    target: Option<PinnedBuffer<'p>>,
    /// Whether insertions are WAL-logged (not into a relation created by
    /// the running transaction).
    logged: bool,
    /// Scratch space for WAL payloads.
    payload: Vec<u8>,
    pub inserted: u64,
}

impl<'p> HeapInserter<'p> {
    pub fn new(pool: &'p BufferPool, rel: u32) -> Self {
        HeapInserter {
            pool,
            rel,
            target: None,
            logged: pool.wal_for(rel).is_some(),
            payload: Vec::new(),
            inserted: 0,
        }
    }

    /// Inserts one tuple (built by [`tuple::TupleBuilder`]); returns its TID.
    pub fn insert(&mut self, t: &[u8]) -> Result<Tid, StorageError> {
        if t.len() > page::MAX_ITEM_SIZE {
            return Err(StorageError::Other(format!(
                "row is too big: size {}, maximum size {}",
                t.len(),
                page::MAX_ITEM_SIZE
            )));
        }
        if self.target.is_none() {
            // Start at a page VACUUM freed space on, or at the relation's
            // last page.
            let block = match self.pool.fsm.find(self.rel, t.len()) {
                Some(b) => Some(b),
                None => self.pool.nblocks(self.rel)?.checked_sub(1),
            };
            if let Some(b) = block {
                self.target = Some(self.pool.read_buffer(self.rel, b)?);
            }
        }
        while let Some(buf) = self.target.take() {
            if let Some(tid) = self.place(&buf, t)? {
                self.target = Some(buf);
                return Ok(tid);
            }
            // Full: try the next page with room, if any.
            self.pool.fsm.forget(self.rel, buf.block());
            if let Some(b) = self.pool.fsm.find(self.rel, t.len()) {
                self.target = Some(self.pool.read_buffer(self.rel, b)?);
            }
        }
        let buf = self.pool.new_page(self.rel)?;
        let tid = self
            .place(&buf, t)?
            .expect("a tuple of checked size fits an empty page");
        self.target = Some(buf);
        Ok(tid)
    }

    /// Adds `t` to the page of `buf` and logs it; `None` if the page is full.
    fn place(&mut self, buf: &PinnedBuffer<'p>, t: &[u8]) -> Result<Option<Tid>, StorageError> {
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        if page::is_new(p) {
            page::init(p);
        }
        let Some(item) = page::add_item(p, t) else {
            return Ok(None);
        };
        let block = BlockRef {
            rel: self.rel,
            block: buf.block(),
        };
        log_insert(self.pool, self.logged, &mut self.payload, p, block, item, t)?;
        self.inserted += 1;
        Ok(Some(Tid {
            block: buf.block(),
            item,
        }))
    }
}

/// Logs the insertion of `t` as item `item` of `block`,
/// using `scratch` for the payload (nothing if not `logged`).
fn log_insert(
    pool: &BufferPool,
    logged: bool,
    scratch: &mut Vec<u8>,
    page: &mut [u8],
    block: BlockRef,
    item: u16,
    t: &[u8],
) -> Result<(), StorageError> {
    if !logged || pool.wal().is_none() {
        return Ok(());
    }
    scratch.clear();
    scratch.extend_from_slice(&item.to_le_bytes());
    scratch.extend_from_slice(t);
    // Only an insertion into a page that was empty may be redone by
    // formatting the page (a reused item 1 of a vacuumed page is not).
    let kind = if item == 1 && page::item_count(page) == 1 {
        RecordType::HeapInsertInit
    } else {
        RecordType::HeapInsert
    };
    log_page_change(pool, page, kind, tuple::xmin(t), block, scratch)
}

/// Marks the tuple at `tid` deleted by `xid` (command 0), whatever its
/// state: the single-statement path, whose writers run one at a time (see
/// `txn`). Transactions use [`crate::heapam`], which checks for concurrent
/// changes and waits. Returns false if the tuple was not there.
pub fn delete(pool: &BufferPool, rel: u32, tid: Tid, xid: Xid) -> Result<bool, StorageError> {
    let buf = pool.read_buffer(rel, tid.block)?;
    let mut g = buf.lock_exclusive();
    let p = g.page_mut();
    if tid.item == 0 || tid.item > page::item_count(p) {
        return Ok(false);
    }
    let Some(t) = page::item_bytes_mut(p, tid.item) else {
        return Ok(false);
    };
    let state = tuple::XmaxState {
        xmax: xid,
        cmax: 0,
        infomask: (tuple::infomask(t) & !tuple::XMAX_BITS) | tuple::XMAX_KEYS_UPDATED,
        ctid: (0, 0),
    };
    state.apply(t);
    let mut payload = Vec::with_capacity(2 + tuple::XMAX_STATE_SIZE);
    payload.extend_from_slice(&tid.item.to_le_bytes());
    state.encode(&mut payload);
    let block = BlockRef {
        rel,
        block: tid.block,
    };
    log_page_change(pool, p, RecordType::HeapDelete, xid, block, &payload)?;
    Ok(true)
}

/// Estimates the number of live tuples of a relation of `nblocks` blocks
/// from up to three sampled pages (first, middle, last): the planner's
/// substitute for `reltuples` until ANALYZE exists. Tuples with an `xmax`
/// that is more than a row lock count as dead.
pub fn estimate_tuples(pool: &BufferPool, rel: u32, nblocks: u32) -> Result<f64, StorageError> {
    if nblocks == 0 {
        return Ok(0.0);
    }
    let mut samples = vec![0, nblocks / 2, nblocks - 1];
    samples.dedup();
    let mut live = 0usize;
    for &block in &samples {
        let buf = pool.read_buffer(rel, block)?;
        let g = buf.lock_shared();
        let p = g.page();
        if page::is_new(p) {
            continue;
        }
        live += (1..=page::item_count(p))
            .filter_map(|i| page::item_bytes(p, i))
            .filter(|t| tuple::xmax(t) == 0 || tuple::infomask(t) & tuple::XMAX_LOCK_ONLY != 0)
            .count();
    }
    Ok((live as f64 / samples.len() as f64 * nblocks as f64).round())
}
