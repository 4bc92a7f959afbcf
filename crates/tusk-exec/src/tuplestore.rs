//! A tuple store that stays within a memory limit and can be read while it
//! is being written, by row number or by cursor: PostgreSQL's tuplestore
//! with read pointers. Materialised CTEs (read while they are evaluated),
//! the working tables of WITH RECURSIVE, window partitions (frames read rows
//! by number) and the cached results of subplans live in one. Rows written
//! once and then read in order, possibly by several threads, go to
//! `rowstore` instead.
//!
//! Rows are appended in *chunks* of at most 1024 rows (and an eighth of the
//! limit in bytes). A chunk is either in memory or in the store's one spill
//! file, encoded row by row (`u32` length, then the spill encoding of
//! `spill::encode_row`). When the chunks in memory pass the limit, the
//! oldest ones are written out; the newest stay, since readers usually
//! follow close behind the writer. Readers address rows by number
//! ([`TupleStore::range`], [`TupleStore::value`]) or walk the chunks in order,
//! each with its own position, while rows are still being appended. A few
//! decoded chunks from the file are cached, so a reader moving forward
//! through nearby rows (a window frame) decodes each chunk about once.
//!
//! Memory counted: the in-memory chunks and the cached decoded chunks.

use crate::error::Result;
use crate::memory::{batch_bytes, MemUse, WorkMem};
use crate::spill::{decode_row, encode_row, SpillFile};
use crate::value::Value;
use crate::vector::{Batch, Vector};
use std::rc::Rc;
use tusk_storage::DataType;

/// Rows per chunk at most.
pub const CHUNK_ROWS: usize = 1024;

/// Decoded chunks of the file kept for readers.
const CACHED_CHUNKS: usize = 4;

enum Place {
    Memory(Rc<Batch>),
    Disk { offset: u64, len: u64 },
}

struct Chunk {
    first: u64,
    rows: usize,
    place: Place,
}

pub struct TupleStore {
    types: Vec<DataType>,
    wm: WorkMem,
    chunks: Vec<Chunk>,
    rows: u64,
    file: Option<SpillFile>,
    file_end: u64,
    /// The oldest chunk still in memory.
    first_in_memory: usize,
    cache: Vec<(usize, Rc<Batch>)>,
    /// The chunk the last row lookup landed in (readers move through
    /// nearby rows).
    hint: std::cell::Cell<usize>,
    in_memory: usize,
    cached: usize,
    mem: MemUse,
    /// Bytes ever written to the file.
    pub disk: u64,
}

impl TupleStore {
    pub fn new(types: &[DataType], wm: WorkMem) -> TupleStore {
        TupleStore {
            types: types.to_vec(),
            wm,
            chunks: Vec::new(),
            rows: 0,
            file: None,
            file_end: 0,
            first_in_memory: 0,
            cache: Vec::new(),
            hint: std::cell::Cell::new(0),
            in_memory: 0,
            cached: 0,
            mem: MemUse::default(),
            disk: 0,
        }
    }

    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// Rows stored.
    pub fn len(&self) -> u64 {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    pub fn memory(&self) -> MemUse {
        self.mem
    }

    /// Whether some rows went to the spill file.
    pub fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Appends the rows of `b`.
    pub fn append(&mut self, b: &Batch) -> Result<()> {
        if b.len == 0 {
            return Ok(());
        }
        let max_bytes = (self.wm.limit / 8).max(4096);
        let per_row = batch_bytes(b) / b.len + 1;
        let step = (max_bytes / per_row).clamp(1, CHUNK_ROWS);
        let mut at = 0;
        // Small batches fill up the last chunk while it is in memory.
        if let Some(last) = self.chunks.last_mut() {
            if let Place::Memory(held) = &mut last.place {
                let room = step.saturating_sub(held.len);
                if room > 0 {
                    let take = room.min(b.len);
                    let part = b.gather(&(0..take as u32).collect::<Vec<_>>());
                    let size = batch_bytes(&part);
                    Rc::make_mut(held).append(&part);
                    last.rows += take;
                    self.rows += take as u64;
                    self.in_memory += size;
                    at = take;
                }
            }
        }
        while at < b.len {
            let end = (at + step).min(b.len);
            let part = if at == 0 && end == b.len {
                b.clone()
            } else {
                b.gather(&(at as u32..end as u32).collect::<Vec<_>>())
            };
            let size = batch_bytes(&part);
            self.chunks.push(Chunk {
                first: self.rows,
                rows: part.len,
                place: Place::Memory(Rc::new(part)),
            });
            self.rows += (end - at) as u64;
            self.in_memory += size;
            at = end;
        }
        while self.in_memory + self.cached > self.wm.limit
            && self.first_in_memory + 1 < self.chunks.len()
        {
            self.write_out(self.first_in_memory)?;
            self.first_in_memory += 1;
        }
        self.mem.set(self.in_memory + self.cached);
        Ok(())
    }

    /// Moves chunk `i` from memory to the file.
    fn write_out(&mut self, i: usize) -> Result<()> {
        let Place::Memory(b) = &self.chunks[i].place else {
            return Ok(());
        };
        let b = b.clone();
        let mut buf = Vec::new();
        let mut row = Vec::new();
        for r in 0..b.len {
            row.clear();
            encode_row(&mut row, &b, r);
            buf.extend_from_slice(&(row.len() as u32).to_le_bytes());
            buf.extend_from_slice(&row);
        }
        if self.file.is_none() {
            self.wm.spill.files.set(self.wm.spill.files.get() + 1);
            self.file = Some(SpillFile::create(&self.wm.dir)?);
        }
        let offset = self.file_end;
        self.file
            .as_mut()
            .unwrap()
            .write_at(&buf, offset, &self.wm.spill)?;
        self.file_end += buf.len() as u64;
        self.disk += buf.len() as u64;
        self.in_memory -= batch_bytes(&b);
        self.chunks[i].place = Place::Disk {
            offset,
            len: buf.len() as u64,
        };
        Ok(())
    }

    /// Chunk `i`'s rows.
    pub fn chunk(&mut self, i: usize) -> Result<Rc<Batch>> {
        let (offset, len) = match &self.chunks[i].place {
            Place::Memory(b) => return Ok(b.clone()),
            Place::Disk { offset, len } => (*offset, *len),
        };
        if let Some(pos) = self.cache.iter().position(|(c, _)| *c == i) {
            let hit = self.cache.remove(pos);
            let b = hit.1.clone();
            self.cache.push(hit);
            return Ok(b);
        }
        let mut buf = vec![0u8; len as usize];
        self.file
            .as_ref()
            .expect("a chunk on disk has a file")
            .read_at(&mut buf, offset, &self.wm.spill)?;
        let mut cols: Vec<Vector> = self
            .types
            .iter()
            .map(|&t| Vector::with_capacity(t, self.chunks[i].rows))
            .collect();
        let mut p = 0;
        while p < buf.len() {
            let n = u32::from_le_bytes(buf[p..p + 4].try_into().unwrap()) as usize;
            decode_row(&buf[p + 4..p + 4 + n], &mut cols);
            p += 4 + n;
        }
        let b = Rc::new(Batch::new(cols, self.chunks[i].rows));
        self.cached += batch_bytes(&b);
        self.cache.push((i, b.clone()));
        if self.cache.len() > CACHED_CHUNKS {
            let (_, old) = self.cache.remove(0);
            self.cached -= batch_bytes(&old);
        }
        self.mem.set(self.in_memory + self.cached);
        Ok(b)
    }

    /// The chunk holding row `row` and the row's position in it.
    pub fn locate(&self, row: u64) -> (usize, usize) {
        let h = self.hint.get();
        if let Some(c) = self.chunks.get(h) {
            if c.first <= row && row < c.first + c.rows as u64 {
                return (h, (row - c.first) as usize);
            }
        }
        let i = self
            .chunks
            .partition_point(|c| c.first + c.rows as u64 <= row);
        self.hint.set(i);
        (i, (row - self.chunks[i].first) as usize)
    }

    /// Rows `from..to` as one batch.
    pub fn range(&mut self, from: u64, to: u64) -> Result<Batch> {
        let mut out = Batch::empty(&self.types);
        let mut row = from;
        while row < to {
            let (i, at) = self.locate(row);
            let c = self.chunk(i)?;
            let end = (at + (to - row) as usize).min(c.len);
            if at == 0 && end == c.len {
                out.append(&c);
            } else {
                out.append(&c.gather(&(at as u32..end as u32).collect::<Vec<_>>()));
            }
            row += (end - at) as u64;
        }
        Ok(out)
    }

    /// The value in column `col` of row `row`.
    pub fn value(&mut self, row: u64, col: usize) -> Result<Value> {
        let (i, at) = self.locate(row);
        let c = self.chunk(i)?;
        Ok(c.columns[col].value_as(at, self.types[col]))
    }

    /// Whether rows `a` and `b` hold the same bytes in text column `col`
    /// (equal stored keys).
    pub fn same_key(&mut self, a: u64, b: u64, col: usize) -> Result<bool> {
        let (ca, ra) = self.locate(a);
        let (cb, rb) = self.locate(b);
        let (x, y) = (self.chunk(ca)?, self.chunk(cb)?);
        Ok(match (&x.columns[col].data, &y.columns[col].data) {
            (crate::vector::Data::Text(s), crate::vector::Data::Text(t)) => s.get(ra) == t.get(rb),
            _ => false,
        })
    }

    /// Drops every row (the file is kept for reuse).
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.cache.clear();
        self.hint.set(0);
        self.rows = 0;
        self.file_end = 0;
        self.first_in_memory = 0;
        self.in_memory = 0;
        self.cached = 0;
        self.mem.set(0);
    }
}

/// A reader's position: a chunk and the rows of it already returned (the
/// last chunk may grow after a reader saw part of it).
#[derive(Debug, Default, Clone, Copy)]
pub struct Cursor {
    chunk: usize,
    row: usize,
}

impl Cursor {
    /// The next rows not yet returned, or `None` when the reader has caught
    /// up with what is stored so far.
    pub fn next(&mut self, store: &mut TupleStore) -> Result<Option<Batch>> {
        while self.chunk < store.chunk_count() {
            let b = store.chunk(self.chunk)?;
            if self.row < b.len {
                let out = if self.row == 0 {
                    (*b).clone()
                } else {
                    b.gather(&(self.row as u32..b.len as u32).collect::<Vec<_>>())
                };
                self.row = b.len;
                return Ok(Some(out));
            }
            if self.chunk + 1 == store.chunk_count() {
                break;
            }
            self.chunk += 1;
            self.row = 0;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestDb;

    fn batch(from: i64, n: usize) -> Batch {
        let mut b = Batch::empty(&[DataType::Int8, DataType::Text]);
        for i in from..from + n as i64 {
            b.columns[0].push_value(&if i % 9 == 0 {
                Value::Null
            } else {
                Value::Int8(i)
            });
            b.columns[1].push_value(&Value::Text(format!("row {i}")));
            b.len += 1;
        }
        b
    }

    #[test]
    fn spills_the_oldest_chunks_and_reads_everything_back() {
        let db = TestDb::new();
        let ctx = db.ctx(64 << 10, 1);
        let mut s = TupleStore::new(&[DataType::Int8, DataType::Text], WorkMem::sort(&ctx));
        let mut cursor = Cursor::default();
        let mut seen = 0u64;
        for k in 0..50 {
            s.append(&batch(k * 1000, 1000)).unwrap();
            // A reader following the writer.
            while let Some(b) = cursor.next(&mut s).unwrap() {
                for r in 0..b.len {
                    assert_eq!(b.columns[1].value(r), Value::Text(format!("row {}", seen)));
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, 50_000);
        assert!(s.spilled());
        assert!(
            s.memory().peak <= (64 << 10) + (16 << 10),
            "{:?}",
            s.memory()
        );
        // Random access, across chunk boundaries, from the file.
        for row in [0u64, 1023, 1024, 25_017, 49_999] {
            let want = if row % 9 == 0 {
                Value::Null
            } else {
                Value::Int8(row as i64)
            };
            assert_eq!(s.value(row, 0).unwrap(), want);
        }
        let r = s.range(1020, 3100).unwrap();
        assert_eq!(r.len, 2080);
        assert_eq!(r.columns[1].value(2079), Value::Text("row 3099".into()));
        s.clear();
        assert!(s.is_empty());
        s.append(&batch(7, 3)).unwrap();
        assert_eq!(s.value(2, 1).unwrap(), Value::Text("row 9".into()));
    }
}
