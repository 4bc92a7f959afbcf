//! Rows written once and read back any number of times, in memory while
//! they fit and in a spill file when they do not (PostgreSQL's tuplestore).
//!
//! A [`RowStore`] takes batches until it is finished. While the bytes of
//! the batches it holds stay within its budget it keeps them; the first
//! batch that would exceed it moves everything to a spill file, and every
//! later batch goes there too, so a store holds at most its budget plus one
//! spill buffer. [`RowStore::finish`] turns it into [`StoredRows`], which is
//! immutable and may be shared between threads: any number of
//! [`RowCursor`]s read it from the start, in the order the rows were
//! written (each cursor of a spilled store has its own read buffer).
//!
//! The nested loop join keeps its inner side in one and reads it once per
//! block of outer rows; the hash join keeps the rows a null-aware mark join
//! must compare outside its hash table in one.

use crate::error::Result;
use crate::memory::{batch_bytes, spill_buffer_size};
use crate::operator::ExecContext;
use crate::spill::{SpillFile, SpillReader, SpillStats, SpillWriter};
use crate::vector::{Batch, BATCH_SIZE};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use tusk_storage::DataType;

/// Rows being written.
pub struct RowStore {
    types: Vec<DataType>,
    batches: Vec<Arc<Batch>>,
    bytes: usize,
    budget: usize,
    writer: Option<SpillWriter>,
    rows: u64,
    dir: PathBuf,
    buf: usize,
    stats: Rc<SpillStats>,
}

impl RowStore {
    /// A store of rows of `types` that keeps at most `budget` bytes in memory.
    pub fn new(types: &[DataType], budget: usize, ctx: &ExecContext) -> RowStore {
        RowStore {
            types: types.to_vec(),
            batches: Vec::new(),
            bytes: 0,
            budget,
            writer: None,
            rows: 0,
            dir: ctx.db.temp_dir(),
            buf: spill_buffer_size(budget),
            stats: ctx.spill.clone(),
        }
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Bytes held in memory (batches, or the spill buffer).
    pub fn memory(&self) -> usize {
        if self.writer.is_some() {
            self.buf
        } else {
            self.bytes
        }
    }

    pub fn spilled(&self) -> bool {
        self.writer.is_some()
    }

    /// Appends the rows of `b`.
    pub fn push(&mut self, b: Batch) -> Result<()> {
        if b.len == 0 {
            return Ok(());
        }
        self.rows += b.len as u64;
        if self.writer.is_none() {
            let bytes = batch_bytes(&b);
            if self.bytes + bytes <= self.budget {
                self.bytes += bytes;
                self.batches.push(Arc::new(b));
                return Ok(());
            }
            let mut w = SpillWriter::new(&self.dir, self.buf, self.stats.clone())?;
            for held in self.batches.drain(..) {
                write_all(&mut w, &held)?;
            }
            self.bytes = 0;
            self.writer = Some(w);
        }
        write_all(self.writer.as_mut().expect("spilled"), &b)
    }

    /// The rows, ready to be read.
    pub fn finish(self) -> Result<StoredRows> {
        Ok(StoredRows {
            types: self.types,
            batches: self.batches,
            file: self.writer.map(|w| w.finish()).transpose()?,
            rows: self.rows,
            buf: self.buf,
        })
    }
}

fn write_all(w: &mut SpillWriter, b: &Batch) -> Result<()> {
    for r in 0..b.len {
        w.write_row(0, b, r)?;
    }
    Ok(())
}

/// Rows written and finished: in memory, or in one spill file.
pub struct StoredRows {
    types: Vec<DataType>,
    batches: Vec<Arc<Batch>>,
    file: Option<Arc<SpillFile>>,
    rows: u64,
    buf: usize,
}

impl StoredRows {
    /// No rows, of `types`.
    pub fn empty(types: &[DataType]) -> StoredRows {
        StoredRows {
            types: types.to_vec(),
            batches: Vec::new(),
            file: None,
            rows: 0,
            buf: 0,
        }
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    pub fn spilled(&self) -> bool {
        self.file.is_some()
    }

    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// A cursor at the first row; `stats` counts what it reads from disk.
    pub fn cursor(&self, stats: &Rc<SpillStats>) -> RowCursor {
        RowCursor {
            next: 0,
            reader: self.file.as_ref().map(|f| {
                SpillReader::new(
                    std::slice::from_ref(f),
                    self.types.clone(),
                    self.buf,
                    stats.clone(),
                )
            }),
        }
    }
}

/// A read position in [`StoredRows`].
pub struct RowCursor {
    next: usize,
    reader: Option<SpillReader>,
}

impl RowCursor {
    /// The next batch of `rows` (those it was made for), or `None` at the end.
    pub fn next_batch(&mut self, rows: &StoredRows) -> Result<Option<Arc<Batch>>> {
        if let Some(r) = &mut self.reader {
            return Ok(r.next_batch(BATCH_SIZE)?.map(|(b, _)| Arc::new(b)));
        }
        let b = rows.batches.get(self.next).cloned();
        self.next += 1;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, TestDb};
    use crate::value::Value;

    fn read_all(rows: &StoredRows, stats: &Rc<SpillStats>) -> Vec<Value> {
        let mut out = Vec::new();
        let mut c = rows.cursor(stats);
        while let Some(b) = c.next_batch(rows).unwrap() {
            out.extend((0..b.len).map(|i| b.columns[0].value(i)));
        }
        out
    }

    /// Within budget the rows stay in memory; past it they all move to a
    /// file; either way every cursor reads them all, in order.
    #[test]
    fn keeps_order_in_memory_and_spilled() {
        let tdb = TestDb::new();
        let ctx = tdb.ctx(1 << 20, 1);
        let types = [DataType::Int8];
        let input: Vec<Vec<Value>> = (0..5000)
            .map(|i| {
                vec![if i % 7 == 0 {
                    Value::Null
                } else {
                    Value::Int8(i)
                }]
            })
            .collect();
        let expected: Vec<Value> = input.iter().map(|r| r[0].clone()).collect();
        for (budget, spilled) in [(1 << 20, false), (10_000, true)] {
            let mut store = RowStore::new(&types, budget, &ctx);
            for b in batches(&types, &input, 700).0 {
                store.push(b).unwrap();
            }
            assert_eq!(store.spilled(), spilled);
            assert!(store.memory() <= budget.max(store.buf));
            let rows = store.finish().unwrap();
            assert_eq!(rows.rows(), 5000);
            assert_eq!(read_all(&rows, &ctx.spill), expected);
            assert_eq!(read_all(&rows, &ctx.spill), expected, "read twice");
        }
        assert!(ctx.spill.written.get() > 0);
        assert!(read_all(&StoredRows::empty(&types), &ctx.spill).is_empty());
    }
}
