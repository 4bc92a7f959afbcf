//! The columnar table access method (`CREATE TABLE ... USING columnar`).
//!
//! A columnar table stores most of its rows in *row groups* of up to
//! [`ROW_GROUP_ROWS`] rows, one compressed *segment* per column, so that a
//! scan reads only the columns it needs, decodes them a batch at a time
//! straight into the executor's vectors, and skips whole row groups whose
//! per-segment minimum and maximum rule out its filter. Everything lives in
//! tusk's own 8 kB pages, read and written through the buffer pool, with
//! checksums, WAL and crash recovery like every other page.
//!
//! ## Three files
//!
//! The table's files are the three forks of its oid (see `smgr`):
//!
//! * **main** — the *delta*: an ordinary heap of the table's rows in its
//!   tuple format. Small INSERTs land here, with everything a heap row has
//!   (MVCC headers, row locks, in-place deletes). Scans read it after the
//!   row groups; VACUUM compresses it into row groups.
//! * **`_colmeta`** — the *metadata heap* (`meta`): one tuple per row group
//!   and one per batch of deleted rows, versioned like rows.
//! * **`_coldata`** — the *row group pages* (`rowgroup`): each row group is
//!   one byte stream (header, then segments) over consecutive blocks,
//!   written once and never changed.
//!
//! ## Visibility
//!
//! MVCC for columnar rows comes from the metadata heap's tuples, so it is
//! the heap's rule, applied to row groups and deletions instead of rows:
//!
//! * a row group is visible to a snapshot that sees its entry (inserted by
//!   the writing transaction after the group's pages, with its command id);
//! * a row of a visible group is deleted for a snapshot that sees a
//!   deletion entry naming it (inserted by the deleting command);
//! * VACUUM replaces a row group by deleting its entry and inserting the
//!   replacement's in one transaction, so each snapshot sees one of them.
//!
//! Deleting a row must also stop a concurrent transaction from deleting it
//! again, which a heap does by stamping `xmax` into the tuple. A row
//! group cannot be changed, so the deleters of recent deletions are kept in
//! memory instead (`delete`: a per-table radix tree from row to deleter);
//! a second deleter finds the first there and waits for it, then gets the
//! outcome a heap update would report. Deletion entries are written when
//! the deleting command ends.
//!
//! ## Rows and row ids
//!
//! Rows of row groups are named to the executor by [`RowId`]s that look
//! like TIDs beyond any heap block ([`RowId::to_tid`]): DELETE and UPDATE
//! hand them back to `Transaction::delete` / `update`, which send them
//! here, while TIDs of delta rows go to the heap as usual.
//!
//! ## Loading
//!
//! INSERT and COPY go through a [`ColumnarWriter`]: rows are collected in
//! memory and compressed into a row group every [`ROW_GROUP_ROWS`] rows; at
//! the end of the statement a remainder of at least [`MIN_GROUP_ROWS`] rows
//! becomes a row group of its own, a smaller one goes into the delta.

pub mod claims;
pub mod column;
pub mod fetch;
pub mod ints;
pub mod meta;
pub mod registry;
pub mod rowchange;
pub mod rowgroup;
pub mod vacuum;
pub mod writer;

mod bitpack;

pub use column::{Bound, ColumnDecoder, ColumnStats};
pub use meta::{Directory, GroupEntry};
pub use rowgroup::{GroupReader, RowGroupHeader, SegmentInfo};
pub use writer::{ColumnarWriter, MIN_GROUP_ROWS, ROW_GROUP_ROWS};

use crate::catalog::TableDef;
use crate::heap::Tid;
use crate::smgr::{rel_of, Fork, Smgr};
use crate::{Database, StorageError};

/// A row of a row group: the group (its first block) and the row's number
/// within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowId {
    pub group: u32,
    pub row: u32,
}

/// The TID block bit that marks a row id (heap blocks stay below it).
const ROW_ID_BIT: u32 = 1 << 31;

impl RowId {
    /// The row id as a TID: block `ROW_ID_BIT | group << 1 | row >> 16`,
    /// item `row & 0xffff` (a group has fewer than 2^17 rows and its first
    /// block is below 2^30).
    pub fn to_tid(self) -> Tid {
        debug_assert!(self.group < 1 << 30 && (self.row as usize) < ROW_GROUP_ROWS);
        Tid {
            block: ROW_ID_BIT | self.group << 1 | self.row >> 16,
            item: (self.row & 0xffff) as u16,
        }
    }

    /// The row id a TID stands for, if it is one.
    pub fn from_tid(tid: Tid) -> Option<RowId> {
        (tid.block & ROW_ID_BIT != 0).then(|| RowId {
            group: (tid.block & !ROW_ID_BIT) >> 1,
            row: (tid.block & 1) << 16 | u32::from(tid.item),
        })
    }
}

/// Creates the files of a new relation `def` (a view has none): the main
/// fork, and the columnar forks of a columnar table. With `if_missing`
/// (recovery), files that exist are kept.
pub fn create_files(smgr: &Smgr, def: &TableDef, if_missing: bool) -> Result<(), StorageError> {
    if def.is_view() {
        return Ok(());
    }
    let mut rels = vec![def.oid];
    if def.is_columnar() {
        rels.push(rel_of(def.oid, Fork::ColumnarMeta));
        rels.push(rel_of(def.oid, Fork::ColumnarData));
    }
    for rel in rels {
        if if_missing {
            smgr.create_if_missing(rel)?;
        } else {
            smgr.create(rel)?;
        }
    }
    Ok(())
}

/// What the planner assumes of a columnar table: pages a full scan reads
/// (row group pages and delta pages) and rows (in row groups, whatever
/// their visibility, plus the delta's estimate).
pub fn estimate_size(db: &Database, oid: u32) -> Result<(f64, f64), StorageError> {
    let mut rows = 0f64;
    meta::scan(db, oid, None, |_, t, e| {
        match e {
            meta::MetaEntry::Group(g) if crate::tuple::xmax(t) == 0 => rows += f64::from(g.rows),
            meta::MetaEntry::Deletion { rows: r, .. } => rows -= r.len() as f64,
            _ => {}
        }
        Ok(())
    })?;
    let data_pages = db.pool.nblocks(rel_of(oid, Fork::ColumnarData))?;
    let delta_pages = db.pool.nblocks(oid)?;
    let delta_rows = crate::heap::estimate_tuples(&db.pool, oid, delta_pages)?;
    Ok((
        f64::from(data_pages + delta_pages),
        rows.max(0.0) + delta_rows,
    ))
}

#[cfg(test)]
mod tests;
