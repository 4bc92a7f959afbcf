//! One row of a row group, as a heap tuple: what READ COMMITTED's re-check
//! of a locked row reads (`Transaction::lock_latest`).
//!
//! Row groups are made for scans, not for fetching single rows: each of the
//! row's columns is decoded from the start of its segment up to the row.
//! Only writers that met a concurrent change of the same row get here.

use super::column::ColumnDecoder;
use super::meta::{self, MetaEntry};
use super::rowgroup::GroupReader;
use super::RowId;
use crate::catalog::TableDef;
use crate::tuple::TupleBuilder;
use crate::{Database, StorageError};

/// Row `row` of `table` as a tuple of its columns (header zeroed), or
/// `None` if its row group is gone.
pub fn fetch_row(
    db: &Database,
    table: &TableDef,
    row: RowId,
) -> Result<Option<Vec<u8>>, StorageError> {
    let mut entry = None;
    meta::scan(db, table.oid, None, |_, _, e| {
        if let MetaEntry::Group(g) = e {
            if g.first_block == row.group {
                entry = Some(g);
            }
        }
        Ok(())
    })?;
    let Some(g) = entry.filter(|g| row.row < g.rows) else {
        return Ok(None);
    };
    let reader = GroupReader::new(&db.pool, table.oid, g.first_block, g.stream_len as usize);
    let header = reader.header()?;
    let mut tb = TupleBuilder::new();
    tb.begin();
    let mut seg = Vec::new();
    for (info, ty) in header.columns.iter().zip(table.column_types()) {
        reader.segment(info, &mut seg)?;
        let mut d = ColumnDecoder::new(std::mem::take(&mut seg), ty, g.rows as usize)?;
        d.skip(row.row as usize);
        d.next_into_tuple(ty, &mut tb);
    }
    Ok(Some(tb.finish(0).to_vec()))
}
