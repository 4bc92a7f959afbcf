//! COPY FROM's sink: prepared batches (see `copy::prepare`) into heap pages
//! and index entries.
//!
//! A [`Loader`] pairs the table's [`Preparer`] with the storing side,
//! [`Sink`]; the pipeline (see `copy::pipeline`) runs the first on its
//! converting thread and the second on the statement's.
//!
//! [`Sink::store`] appends a prepared batch's tuples with tusk-storage's
//! [`BulkInserter`] (toasted first when too long, see tusk-storage's
//! `toast`: long values compressed or moved to the TOAST relation, row at
//! a time, as PostgreSQL's COPY does), a page at a time (one WAL record per page, none for a
//! table the transaction created); a columnar table's [`ColumnarWriter`]
//! takes them instead and makes row groups of them (see
//! `tusk_storage::columnar`). A row's index entries wait until its
//! page is in place (it is filled in private memory until then), so that
//! unique checks find the rows of this load as they find any other: rows
//! are indexed some pages at a time, as one sorted batch per index (one
//! descent per leaf, see tusk-storage's `btree::batch`), and a unique
//! violation is reported with the row's line (as PostgreSQL's COPY
//! indexes its buffered rows when it flushes them).

use super::line_context;
use super::prepare::{Prepared, Preparer, TableRules};
use super::CopyError;
use crate::dml::unique_violation;
use tusk_storage::btree::{EncodedKey, Index, IndexWriter, InsertOutcome};
use tusk_storage::bulk::BulkInserter;
use tusk_storage::columnar::ColumnarWriter;
use tusk_storage::heap::Tid;
use tusk_storage::toast::Toaster;
use tusk_storage::{page, Database, IndexDef, TableDef, Xid};

/// Rows whose index entries wait for a batch: they go in once their
/// pages are in place and at least this many wait (see `index_pending`).
const INDEX_BATCH_ROWS: usize = 1024;

/// Loads batches into one table (see the module doc).
pub struct Loader<'a> {
    pub(super) prep: Preparer,
    pub(super) sink: Sink<'a>,
}

/// The storing side of a load.
pub struct Sink<'a> {
    db: &'a Database,
    /// Shrinks tuples too long for a page before they are stored (see
    /// tusk-storage's `toast`), as the loading transaction and command.
    toaster: Toaster<'a>,
    xid: Xid,
    cid: u32,
    table: TableDef,
    store: Store<'a>,
    /// Whether the table's pages are WAL-logged.
    logged: bool,
    /// The table's indexes in creation order.
    indexes: Vec<Index<'a>>,
    /// Whom the index insertions work for (unique checks wait as it).
    writer: &'a mut dyn IndexWriter,
    /// Rows waiting for their index entries (their page may not be in
    /// place yet): TID and line.
    pending: Vec<(Tid, u64)>,
    /// Per index, the pending rows' keys (entries past `pending.len()`
    /// are kept for their buffers).
    pending_keys: Vec<Vec<EncodedKey>>,
    /// Rows stored so far.
    pub rows: u64,
}

/// Where the tuples go.
enum Store<'a> {
    Heap(BulkInserter<'a>),
    /// A columnar table (`None` once finished).
    Columnar(Option<ColumnarWriter<'a>>),
}

impl<'a> Loader<'a> {
    /// A loader into `table`, whose indexes are `indexes` (as the writing
    /// transaction sees them), under `rules`, for transaction `xid`,
    /// command `cid`; index insertions work for `writer` (the
    /// transaction).
    pub fn new(
        db: &'a Database,
        table: TableDef,
        indexes: &[IndexDef],
        rules: TableRules,
        (xid, cid): (Xid, u32),
        writer: &'a mut dyn IndexWriter,
    ) -> Loader<'a> {
        let mut defs: Vec<&IndexDef> = indexes.iter().collect();
        defs.sort_by_key(|d| d.oid);
        let indexes: Vec<Index<'a>> = defs
            .iter()
            .map(|d| Index::open_owned(db, (*d).clone(), table.clone()))
            .collect();
        let keys = indexes.iter().map(Index::tuple_keys).collect();
        Loader {
            prep: Preparer::new(table.clone(), rules, (xid, cid), keys),
            sink: Sink {
                db,
                toaster: Toaster::new(db, table.oid, table.column_types()),
                xid,
                cid,
                logged: db.pool.wal_for(table.oid).is_some(),
                store: if table.is_columnar() {
                    Store::Columnar(Some(ColumnarWriter::new(db, &table, xid, cid)))
                } else {
                    Store::Heap(BulkInserter::new(&db.pool, table.oid, xid))
                },
                pending_keys: vec![Vec::new(); indexes.len()],
                table,
                indexes,
                writer,
                pending: Vec::new(),
                rows: 0,
            },
        }
    }

    /// Whether the table's pages are WAL-logged (not when the running
    /// transaction created the table).
    pub fn logged(&self) -> bool {
        self.sink.logged
    }

    /// Installs the last page and adds the index entries still waiting;
    /// returns the rows stored.
    pub fn finish(&mut self) -> Result<u64, CopyError> {
        self.sink.finish()
    }

    /// Rows stored so far.
    pub fn rows(&self) -> u64 {
        self.sink.rows
    }
}

impl Sink<'_> {
    /// Stores the rows of `p`.
    pub fn store(&mut self, p: &Prepared) -> Result<(), CopyError> {
        if let Store::Columnar(w) = &mut self.store {
            let w = w.as_mut().expect("a loader is not used after finish");
            for r in 0..p.rows {
                w.push_tuple(p.tuple(r))?;
            }
            self.rows += p.rows as u64;
            return Ok(());
        }
        for r in 0..p.rows {
            let Store::Heap(bulk) = &mut self.store else {
                unreachable!("a heap table's sink")
            };
            let pages = bulk.pages;
            let t = self.toaster.toast(p.tuple(r), self.xid, self.cid)?;
            let tid = bulk.insert(t)?;
            if self.indexes.is_empty() {
                continue;
            }
            if bulk.pages != pages && self.pending.len() >= INDEX_BATCH_ROWS {
                // The pages of the rows waiting for their index entries
                // are in place: their keys can be checked against them.
                self.index_pending()?;
            }
            let at = self.pending.len();
            self.pending.push((tid, p.lines[r]));
            for (keys, from) in self.pending_keys.iter_mut().zip(&p.keys) {
                if keys.len() == at {
                    keys.push(EncodedKey::default());
                }
                let (key, k) = (&mut keys[at], &from[r]);
                key.bytes.clear();
                key.bytes.extend_from_slice(&k.bytes);
                key.has_null = k.has_null;
                key.pg_size = k.pg_size;
            }
        }
        self.rows += p.rows as u64;
        Ok(())
    }

    /// Inserts the index entries of the rows waiting for them, each index
    /// in creation order, as one sorted batch per index (see tusk-storage's
    /// `btree::batch`); the entries a batch leaves out go in one at a time
    /// in input order, as PostgreSQL inserts them, so that a unique
    /// violation names the row PostgreSQL names, with its line.
    fn index_pending(&mut self) -> Result<(), CopyError> {
        let n = self.pending.len();
        if n == 0 {
            return Ok(());
        }
        let tids: Vec<Tid> = self.pending.iter().map(|p| p.0).collect();
        let table = &self.table;
        let fail_at = |line: u64| {
            move |e: tusk_storage::StorageError| {
                CopyError::new(e.into(), Some(line_context(&table.name, line)))
            }
        };
        for (index, keys) in self.indexes.iter().zip(&self.pending_keys) {
            let rest = index
                .insert_batch(&keys[..n], &tids, self.writer)
                .map_err(fail_at(self.pending[0].1))?;
            for r in rest {
                let (tid, line) = self.pending[r];
                let outcome = index
                    .insert(&keys[r], tid, self.writer)
                    .map_err(fail_at(line))?;
                if let InsertOutcome::Conflict { .. } = outcome {
                    let t = stored_tuple(self.db, table.oid, tid).map_err(fail_at(line))?;
                    let e = unique_violation(self.db, table, index.def(), &t);
                    return Err(CopyError::new(e, Some(line_context(&table.name, line))));
                }
            }
        }
        self.pending.clear();
        Ok(())
    }

    fn finish(&mut self) -> Result<u64, CopyError> {
        match &mut self.store {
            Store::Heap(bulk) => bulk.finish()?,
            Store::Columnar(w) => {
                if let Some(w) = w.take() {
                    w.finish()?;
                }
            }
        }
        self.index_pending()?;
        Ok(self.rows)
    }
}

/// The bytes of the tuple at `tid` of relation `rel`, a row this load put
/// on a page that is in place.
fn stored_tuple(db: &Database, rel: u32, tid: Tid) -> Result<Vec<u8>, tusk_storage::StorageError> {
    let buf = db.pool.read_buffer(rel, tid.block)?;
    let g = buf.lock_shared();
    page::item_bytes(g.page(), tid.item)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| tusk_storage::StorageError::Other(format!("no row at {tid:?}")))
}
