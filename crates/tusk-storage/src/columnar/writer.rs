//! Writing rows into a columnar table: INSERT's and COPY's sink.
//!
//! A [`ColumnarWriter`] collects rows column by column in memory. Each time
//! it holds [`ROW_GROUP_ROWS`] rows it compresses them into a row group:
//! every column is encoded into a segment (`column`), the header records
//! where each segment is and its statistics, the stream is appended to the
//! data fork (`rowgroup::write_stream`, logged page by page) and, last, the
//! group's entry goes into the metadata heap (`meta`) with the writer's xid
//! and command id — from then on the group is visible to whoever sees that
//! transaction's work, exactly as its rows would be in a heap.
//!
//! [`ColumnarWriter::finish`] handles the rest: at least
//! [`MIN_GROUP_ROWS`] rows make a row group of their own; fewer go into the
//! table's row-wise delta (its main fork, an ordinary heap) as tuples, where
//! small INSERTs go too. VACUUM later compresses the delta into row groups
//! (see `vacuum`), so a table filled by many small transactions ends up
//! columnar as well.

use super::column::ColumnBuffer;
use super::meta::{self, GroupEntry, MetaEntry};
use super::rowgroup::{self, RowGroupHeader, SegmentInfo};
use crate::catalog::{DataType, TableDef};
use crate::heap::HeapInserter;
use crate::tuple::{self, TupleBuilder};
use crate::txn::Xid;
use crate::{Database, StorageError};

/// Rows per row group: fifty of the executor's batches.
pub const ROW_GROUP_ROWS: usize = 102_400;

/// Fewest rows a load writes as a row group of their own; fewer go to the
/// delta.
pub const MIN_GROUP_ROWS: usize = 10_240;

/// Collects rows and writes them as row groups (see the module doc).
pub struct ColumnarWriter<'a> {
    db: &'a Database,
    oid: u32,
    types: Vec<DataType>,
    xid: Xid,
    cid: u32,
    columns: Vec<ColumnBuffer>,
    /// Row groups written so far.
    pub groups: u64,
    /// Rows written to the delta by `finish`.
    pub delta_rows: u64,
    /// Rows taken so far.
    pub rows: u64,
    /// Whether `finish` may put a small remainder into the delta (not when
    /// VACUUM rewrites rows out of it).
    to_delta: bool,
}

impl<'a> ColumnarWriter<'a> {
    /// A writer into `table` for command `cid` of transaction `xid`.
    pub fn new(db: &'a Database, table: &TableDef, xid: Xid, cid: u32) -> ColumnarWriter<'a> {
        let types = table.column_types();
        ColumnarWriter {
            db,
            oid: table.oid,
            columns: types.iter().map(|&t| ColumnBuffer::new(t)).collect(),
            types,
            xid,
            cid,
            groups: 0,
            delta_rows: 0,
            rows: 0,
            to_delta: true,
        }
    }

    /// A writer that puts every row into row groups, however few are left
    /// at the end (VACUUM's rewrite, see `vacuum`).
    pub fn for_rewrite(db: &'a Database, table: &TableDef, xid: Xid, cid: u32) -> Self {
        ColumnarWriter {
            to_delta: false,
            ..ColumnarWriter::new(db, table, xid, cid)
        }
    }

    /// Adds row `row` of `columns` (one decoded row group, see
    /// `ColumnBuffer::decode`).
    pub fn push_row_from(
        &mut self,
        columns: &[ColumnBuffer],
        row: usize,
    ) -> Result<(), StorageError> {
        for (c, src) in self.columns.iter_mut().zip(columns) {
            c.push_row_from(src, row);
        }
        self.rows += 1;
        if self.pending() >= ROW_GROUP_ROWS {
            self.write_group()?;
        }
        Ok(())
    }

    /// Rows collected and not yet written.
    pub fn pending(&self) -> usize {
        self.columns.first().map_or(0, ColumnBuffer::len)
    }

    /// Adds one row, given as a heap tuple of the table's columns.
    pub fn push_tuple(&mut self, t: &[u8]) -> Result<(), StorageError> {
        let Some(last) = self.types.len().checked_sub(1) else {
            return Err(StorageError::Other(
                "a columnar table needs at least one column".into(),
            ));
        };
        let columns = &mut self.columns;
        tuple::walk(t, &self.types, last, |att, a| columns[att].push(a));
        self.rows += 1;
        if self.pending() >= ROW_GROUP_ROWS {
            self.write_group()?;
        }
        Ok(())
    }

    /// Writes what is left (see the module doc).
    pub fn finish(mut self) -> Result<ColumnarWriter<'a>, StorageError> {
        let n = self.pending();
        if n >= MIN_GROUP_ROWS || (n > 0 && !self.to_delta) {
            self.write_group()?;
        } else if n > 0 {
            let mut ins = HeapInserter::new(&self.db.pool, self.oid);
            let mut tb = TupleBuilder::new();
            for row in 0..n {
                tb.begin();
                for c in &self.columns {
                    c.push_to_tuple(row, &mut tb);
                }
                ins.insert(tb.finish_cid(self.xid, self.cid))?;
            }
            self.delta_rows += n as u64;
            self.columns.iter_mut().for_each(ColumnBuffer::clear);
        }
        Ok(self)
    }

    /// Compresses the collected rows into a row group and writes it.
    fn write_group(&mut self) -> Result<(), StorageError> {
        let rows = self.pending();
        let mut segments: Vec<Vec<u8>> = Vec::with_capacity(self.columns.len());
        let mut header = RowGroupHeader {
            rows: rows as u32,
            columns: Vec::with_capacity(self.columns.len()),
        };
        for c in &self.columns {
            let mut seg = Vec::new();
            let stats = c.encode(&mut seg);
            header.columns.push(SegmentInfo {
                offset: 0,
                len: seg.len() as u32,
                stats,
            });
            segments.push(seg);
        }
        // The header's length does not depend on the offsets it records.
        let mut offset = header.encode().len();
        for info in &mut header.columns {
            info.offset = offset as u32;
            offset += info.len as usize;
        }
        let mut stream = header.encode();
        for seg in &segments {
            stream.extend_from_slice(seg);
        }
        let stream_len = u32::try_from(stream.len())
            .map_err(|_| StorageError::Other("columnar row group is too big".into()))?;
        let first_block = rowgroup::write_stream(self.db, self.oid, self.xid, &stream)?;
        let entry = GroupEntry {
            first_block,
            blocks: rowgroup::blocks_for(stream.len()),
            rows: rows as u32,
            stream_len,
        };
        meta::insert(
            self.db,
            self.oid,
            self.xid,
            self.cid,
            &MetaEntry::Group(entry),
        )?;
        self.groups += 1;
        self.columns.iter_mut().for_each(ColumnBuffer::clear);
        Ok(())
    }
}
