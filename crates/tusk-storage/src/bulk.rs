//! Bulk loading of heap pages: what COPY FROM writes with.
//!
//! [`HeapInserter`](crate::heap::HeapInserter) places one tuple at a time
//! into a shared buffer, under its content lock, and logs each tuple as a
//! `HeapInsert` record. A load of millions of rows pays that per row: a
//! lock round trip, a WAL record header and a CRC per tuple. A
//! [`BulkInserter`] instead fills a page in private memory and installs it
//! whole when it is full:
//!
//! 1. **Reserve.** The first tuple of a page extends the relation by one
//!    block ([`BufferPool::new_page`]) and keeps that buffer *pinned*, not
//!    locked: concurrent scans find an empty page there (no tuples) and
//!    never wait for the load, however long the caller takes to deliver
//!    the next rows (a client streaming COPY data over the network).
//! 2. **Fill.** Tuples go into the private copy ([`page::add_item`]); each
//!    one's TID is known at once (the reserved block, the item number), so
//!    the caller can maintain indexes batch by batch.
//! 3. **Install.** When the next tuple does not fit (or at
//!    [`BulkInserter::finish`]), the private page is copied into the buffer
//!    under its exclusive lock and logged as *one* `HeapPage` record, a full
//!    page image, whose LSN is stamped into the page before the lock is
//!    released (WAL before data, as for every change). Recovery restores
//!    the image; it needs nothing else.
//!
//! ## Relations created by the running transaction
//!
//! When [`BufferPool::wal_for`] says the relation is not logged — it was
//! created by the running transaction, like the target of CREATE TABLE AS,
//! and is flagged with [`BufferPool::set_unlogged`] until commit — nothing
//! is logged at all: the commit writes and fsyncs the relation before its
//! commit record (`Database::commit`, `Transaction::commit`), and an abort
//! or a crash removes the whole file. This is PostgreSQL's `wal_level =
//! minimal` rule for a relfilenode created in the current transaction, and
//! it is decided per relation when the inserter is made.
//!
//! ## Visibility and failure
//!
//! Tuples carry the loading transaction's xid and command id like any
//! insert, so nobody sees them before it commits, and an abort (or a crash
//! before the commit record) leaves them invisible; VACUUM removes them.
//! A page that was reserved but never installed stays an empty page of the
//! relation. Pages are never shared with other writers: a bulk load only
//! appends new blocks, so the free space of existing pages is left to
//! ordinary inserts.

use crate::bufmgr::{BufferPool, PinnedBuffer};
use crate::heap::Tid;
use crate::page;
use crate::txn::Xid;
use crate::wal::{BlockRef, RecordType};
use crate::StorageError;

/// Appends tuples to new pages of one relation, a page at a time (see the
/// module doc).
pub struct BulkInserter<'p> {
    pool: &'p BufferPool,
    rel: u32,
    /// The xid the page records are logged under.
    xid: Xid,
    logged: bool,
    /// The reserved block of the page being filled, pinned.
    target: Option<PinnedBuffer<'p>>,
    /// The page being filled.
    page: Box<[u8]>,
    /// Pages installed so far.
    pub pages: u64,
    /// Tuples inserted so far.
    pub inserted: u64,
}

impl<'p> BulkInserter<'p> {
    /// An inserter into relation `rel` for transaction `xid`; whether its
    /// pages are logged is decided now (see the module doc).
    pub fn new(pool: &'p BufferPool, rel: u32, xid: Xid) -> Self {
        BulkInserter {
            pool,
            rel,
            xid,
            logged: pool.wal_for(rel).is_some(),
            target: None,
            page: vec![0u8; page::PAGE_SIZE].into_boxed_slice(),
            pages: 0,
            inserted: 0,
        }
    }

    /// Whether installed pages are WAL-logged.
    pub fn logged(&self) -> bool {
        self.logged
    }

    /// Adds one tuple (built by [`crate::tuple::TupleBuilder`] or laid out
    /// the same way) and returns its TID.
    pub fn insert(&mut self, t: &[u8]) -> Result<Tid, StorageError> {
        if t.len() > page::MAX_ITEM_SIZE {
            return Err(StorageError::Other(format!(
                "row is too big: size {}, maximum size {}",
                t.len(),
                page::MAX_ITEM_SIZE
            )));
        }
        if self.target.is_none() {
            self.start_page()?;
        }
        if let Some(item) = page::add_item(&mut self.page, t) {
            self.inserted += 1;
            return Ok(self.tid(item));
        }
        self.install()?;
        self.start_page()?;
        let item = page::add_item(&mut self.page, t).expect("a tuple of checked size fits");
        self.inserted += 1;
        Ok(self.tid(item))
    }

    fn tid(&self, item: u16) -> Tid {
        Tid {
            block: self.target.as_ref().expect("a page is reserved").block(),
            item,
        }
    }

    /// Reserves the next block and starts an empty private page.
    fn start_page(&mut self) -> Result<(), StorageError> {
        self.target = Some(self.pool.new_page(self.rel)?);
        page::init(&mut self.page);
        Ok(())
    }

    /// Copies the private page into its reserved buffer and logs it.
    fn install(&mut self) -> Result<(), StorageError> {
        let Some(buf) = self.target.take() else {
            return Ok(());
        };
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        p.copy_from_slice(&self.page);
        if self.logged {
            if let Some(wal) = self.pool.wal() {
                let block = BlockRef {
                    rel: self.rel,
                    block: buf.block(),
                };
                let lsn = wal.insert(RecordType::HeapPage, self.xid, Some(block), true, p)?;
                page::set_lsn(p, lsn);
            }
        }
        self.pages += 1;
        Ok(())
    }

    /// Installs the page being filled, if it holds any tuple.
    pub fn finish(&mut self) -> Result<(), StorageError> {
        if self.target.is_some() && page::item_count(&self.page) > 0 {
            self.install()
        } else {
            self.target = None;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuple::TupleBuilder;

    fn tuple(tb: &mut TupleBuilder, v: i64, text: &[u8]) -> Vec<u8> {
        tb.begin();
        tb.push_i64(v);
        tb.push_text(text);
        tb.finish(7).to_vec()
    }

    #[test]
    fn fills_pages_in_order_and_installs_on_finish() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Database::open(dir.path(), &[]).unwrap();
        let txn = db.txn.begin_write().unwrap();
        let oid = db.catalog_mut().allocate_oid().unwrap();
        db.smgr.create(oid).unwrap();
        let mut tb = TupleBuilder::new();
        let mut bulk = BulkInserter::new(&db.pool, oid, txn.xid());
        assert!(bulk.logged());
        let text = [b'x'; 200];
        let mut tids = Vec::new();
        for i in 0..100 {
            tids.push(bulk.insert(&tuple(&mut tb, i, &text)).unwrap());
        }
        // Nothing is visible in the buffers before a page is installed.
        let before = db.pool.read_buffer(oid, tids[99].block).unwrap();
        assert_eq!(page::item_count(before.lock_shared().page()), 0);
        drop(before);
        bulk.finish().unwrap();
        assert_eq!(bulk.inserted, 100);
        assert!(bulk.pages >= 3, "{} pages", bulk.pages);
        // TIDs are dense: block by block, items from 1.
        assert_eq!(tids[0], Tid { block: 0, item: 1 });
        for w in tids.windows(2) {
            assert!(
                (w[1].block == w[0].block && w[1].item == w[0].item + 1)
                    || (w[1].block == w[0].block + 1 && w[1].item == 1)
            );
        }
        for (i, tid) in tids.iter().enumerate() {
            let buf = db.pool.read_buffer(oid, tid.block).unwrap();
            let g = buf.lock_shared();
            let t = page::item_bytes(g.page(), tid.item).unwrap();
            assert_eq!(t, tuple(&mut tb, i as i64, &text).as_slice());
            // Installed pages carry their record's LSN (the very first
            // record of a new WAL is at 0).
            assert!(page::lsn(g.page()) > 0 || tid.block == 0);
        }
        assert_eq!(db.nblocks(oid).unwrap() as u64, bulk.pages);
    }

    #[test]
    fn oversized_tuples_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Database::open(dir.path(), &[]).unwrap();
        let oid = db.catalog_mut().allocate_oid().unwrap();
        db.smgr.create(oid).unwrap();
        let mut bulk = BulkInserter::new(&db.pool, oid, 3);
        let big = vec![0u8; page::MAX_ITEM_SIZE + 1];
        assert!(bulk.insert(&big).is_err());
        bulk.finish().unwrap();
        assert_eq!(db.nblocks(oid).unwrap(), 0);
    }
}
