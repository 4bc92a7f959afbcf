//! Spill files: rows of a batch written to a temporary file and read back.
//!
//! A spill file lives in the data directory's temp area and is unlinked as
//! soon as it is created, so its data goes when its handle is dropped — at
//! the end of the statement, on error, and in a crash (the startup sweep of
//! the temp directory is only a second line of defence). A dropped file is
//! truncated to zero and its handle kept in a small pool for the next spill
//! in the same directory (see `FREE_FILES`): no name, no data, one inode.
//!
//! Each row is stored as
//!
//! ```text
//! u32 length of what follows | u64 hash | null bitmap | values
//! ```
//!
//! with values in the same little-endian encodings as heap tuples. Writers and
//! readers each own one buffer of a fixed size, which is what the memory
//! accounting of the hash join counts per open file.
//!
//! Every byte written or read is added to the statement's [`SpillStats`],
//! which also enforces `temp_file_limit`.

use crate::codec::{self, FixedCodec, VarCodec};
use crate::error::{ExecError, Result};
use crate::vector::{with_fixed, Batch, Data, Vector};
use std::cell::Cell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tusk_storage::DataType;

/// Largest buffer a spill writer or reader holds; callers pick smaller ones
/// under small memory limits.
pub const SPILL_BUFFER_SIZE: usize = 32 * 1024;

/// Temp-file traffic of one statement.
#[derive(Debug, Default)]
pub struct SpillStats {
    pub written: Cell<u64>,
    pub read: Cell<u64>,
    pub files: Cell<u64>,
    /// `temp_file_limit` in bytes, if any.
    pub limit: Option<u64>,
}

impl SpillStats {
    pub fn new(limit: Option<u64>) -> Rc<SpillStats> {
        Rc::new(SpillStats {
            limit,
            ..Default::default()
        })
    }

    pub(crate) fn add_written(&self, n: u64) -> Result<()> {
        let w = self.written.get() + n;
        self.written.set(w);
        match self.limit {
            Some(l) if w > l => Err(ExecError::new(format!(
                "temporary file size exceeds temp_file_limit ({}kB)",
                l / 1024
            ))),
            _ => Ok(()),
        }
    }
}

/// A temporary file, already unlinked.
pub struct SpillFile {
    file: File,
    /// The temp directory it was created in (`None` once handed back).
    dir: Option<PathBuf>,
    /// Rows and bytes written.
    pub rows: u64,
    pub bytes: u64,
}

static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

/// Emptied spill files kept open for reuse, with the temp directory each
/// belongs to. Creating a file costs an inode allocation, and under the
/// create/unlink churn of repeated spilling joins ext4's search for a free
/// inode (which skips recently deleted ones) took a fifth of a spilling
/// join's time; a truncated, already-unlinked file is reused instead. The
/// pool holds at most a quarter of the process's open-file limit.
static FREE_FILES: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

fn free_files_cap() -> usize {
    (tusk_storage::open_file_limit() / 4).min(4096) as usize
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else { return };
        if self.file.set_len(0).is_err() {
            return;
        }
        let mut free = FREE_FILES.lock().unwrap_or_else(|e| e.into_inner());
        if free.len() < free_files_cap() {
            // The pool keeps a duplicate of the handle (same open file, so
            // the same inode); this one closes as `self` goes. Reads and
            // writes are positional, so the shared offset does not matter.
            if let Ok(file) = self.file.try_clone() {
                free.push((dir, file));
            }
        }
    }
}

impl SpillFile {
    /// Writes `buf` at byte `offset`, for stores that lay out their own
    /// chunks (see `tuplestore`); counted in `stats`.
    pub fn write_at(&mut self, buf: &[u8], offset: u64, stats: &SpillStats) -> Result<()> {
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| ExecError::new(format!("could not write to temporary file: {e}")))?;
        stats.add_written(buf.len() as u64)?;
        self.bytes = self.bytes.max(offset + buf.len() as u64);
        Ok(())
    }

    /// Reads `buf.len()` bytes at byte `offset`; counted in `stats`.
    pub fn read_at(&self, buf: &mut [u8], offset: u64, stats: &SpillStats) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| ExecError::new(format!("could not read from temporary file: {e}")))?;
        stats.read.set(stats.read.get() + buf.len() as u64);
        Ok(())
    }

    pub fn create(dir: &Path) -> Result<SpillFile> {
        {
            let mut free = FREE_FILES.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = free.iter().rposition(|(d, _)| d == dir) {
                let (d, file) = free.swap_remove(i);
                return Ok(SpillFile {
                    file,
                    dir: Some(d),
                    rows: 0,
                    bytes: 0,
                });
            }
        }
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let path: PathBuf = dir.join(format!("tusk_tmp.{}.{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                ExecError::new(format!(
                    "could not create temporary file \"{}\": {e}",
                    path.display()
                ))
            })?;
        // Unlinked right away: the data lives as long as the handle.
        let _ = std::fs::remove_file(&path);
        Ok(SpillFile {
            file,
            dir: Some(dir.to_path_buf()),
            rows: 0,
            bytes: 0,
        })
    }
}

/// Appends rows to a spill file through a fixed-size buffer.
pub struct SpillWriter {
    file: SpillFile,
    buf: Vec<u8>,
    buf_size: usize,
    stats: Rc<SpillStats>,
}

impl SpillWriter {
    /// A writer whose buffer holds `buf_size` bytes (flushed when full).
    pub fn new(dir: &Path, buf_size: usize, stats: Rc<SpillStats>) -> Result<SpillWriter> {
        stats.files.set(stats.files.get() + 1);
        Ok(SpillWriter {
            file: SpillFile::create(dir)?,
            buf: Vec::with_capacity(buf_size + 64),
            buf_size,
            stats,
        })
    }

    pub fn rows(&self) -> u64 {
        self.file.rows
    }

    /// Bytes written so far, including what is still buffered.
    pub fn bytes(&self) -> u64 {
        self.file.bytes + self.buf.len() as u64
    }

    /// Appends row `row` of `batch` with its key hash.
    pub fn write_row(&mut self, hash: u64, batch: &Batch, row: usize) -> Result<()> {
        let start = self.begin_row(hash);
        encode_row(&mut self.buf, batch, row);
        self.end_row(start)
    }

    /// Appends a row already in the spill encoding ([`encode_row`]'s output),
    /// e.g. the payload of a Parallel Hash Join tuple.
    pub fn write_encoded(&mut self, hash: u64, row: &[u8]) -> Result<()> {
        let start = self.begin_row(hash);
        self.buf.extend_from_slice(row);
        self.end_row(start)
    }

    fn begin_row(&mut self, hash: u64) -> usize {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        self.buf.extend_from_slice(&hash.to_le_bytes());
        start
    }

    fn end_row(&mut self, start: usize) -> Result<()> {
        let len = (self.buf.len() - start - 4) as u32;
        self.buf[start..start + 4].copy_from_slice(&len.to_le_bytes());
        self.file.rows += 1;
        if self.buf.len() >= self.buf_size {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // Positional: a reused file's cursor is wherever its last user left it.
        self.file
            .file
            .write_all_at(&self.buf, self.file.bytes)
            .map_err(|e| ExecError::new(format!("could not write to temporary file: {e}")))?;
        self.stats.add_written(self.buf.len() as u64)?;
        self.file.bytes += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Flushes and hands back the file for reading.
    pub fn finish(mut self) -> Result<Arc<SpillFile>> {
        self.flush()?;
        Ok(Arc::new(self.file))
    }
}

/// Reads one or more spill files back as batches, from the start, one file
/// after the other (a Parallel Hash Join partition is one file per
/// participant). One buffer serves all of them.
pub struct SpillReader {
    files: Vec<Arc<SpillFile>>,
    /// File being read and the position in it.
    file: usize,
    pos: u64,
    buf: Vec<u8>,
    buf_size: usize,
    start: usize,
    types: Vec<DataType>,
    stats: Rc<SpillStats>,
}

/// Rows in a list of spill files.
pub fn rows_of(files: &[Arc<SpillFile>]) -> u64 {
    files.iter().map(|f| f.rows).sum()
}

/// Bytes in a list of spill files.
pub fn bytes_of(files: &[Arc<SpillFile>]) -> u64 {
    files.iter().map(|f| f.bytes).sum()
}

impl SpillReader {
    pub fn new(
        files: &[Arc<SpillFile>],
        types: Vec<DataType>,
        buf_size: usize,
        stats: Rc<SpillStats>,
    ) -> SpillReader {
        SpillReader {
            files: files.to_vec(),
            file: 0,
            pos: 0,
            buf: Vec::with_capacity(buf_size),
            buf_size,
            start: 0,
            types,
            stats,
        }
    }

    fn fill(&mut self) -> Result<bool> {
        // Keep the unread tail, then top the buffer up from the file. Rows
        // never span files: a file ends with a whole row.
        self.buf.drain(..self.start);
        self.start = 0;
        while self.file < self.files.len() && self.pos >= self.files[self.file].bytes {
            if !self.buf.is_empty() {
                return Ok(false);
            }
            self.file += 1;
            self.pos = 0;
        }
        let Some(f) = self.files.get(self.file) else {
            return Ok(false);
        };
        // A row longer than the buffer grows it for that row only.
        let want = (self.buf_size.max(self.buf.len() * 2) - self.buf.len())
            .min((f.bytes - self.pos) as usize);
        let old = self.buf.len();
        self.buf.resize(old + want, 0);
        f.file
            .read_exact_at(&mut self.buf[old..], self.pos)
            .map_err(|e| ExecError::new(format!("could not read from temporary file: {e}")))?;
        self.pos += want as u64;
        self.stats.read.set(self.stats.read.get() + want as u64);
        Ok(true)
    }

    /// Whether every row has been returned.
    pub fn at_end(&self) -> bool {
        self.start >= self.buf.len()
            && self.files[self.file.min(self.files.len())..]
                .iter()
                .enumerate()
                .all(|(i, f)| {
                    if i == 0 {
                        self.pos >= f.bytes
                    } else {
                        f.bytes == 0
                    }
                })
    }

    /// Next batch of up to `max_rows` rows with their hashes, or `None` at the end.
    pub fn next_batch(&mut self, max_rows: usize) -> Result<Option<(Batch, Vec<u64>)>> {
        let mut cols: Vec<Vector> = self
            .types
            .iter()
            .map(|&t| Vector::with_capacity(t, max_rows.min(4096)))
            .collect();
        let mut hashes = Vec::new();
        while hashes.len() < max_rows {
            let avail = self.buf.len() - self.start;
            let need = if avail >= 4 {
                4 + u32::from_le_bytes(self.buf[self.start..self.start + 4].try_into().unwrap())
                    as usize
            } else {
                4
            };
            if avail < need {
                if !self.fill()? {
                    break;
                }
                continue;
            }
            let row = &self.buf[self.start + 4..self.start + need];
            hashes.push(u64::from_le_bytes(row[..8].try_into().unwrap()));
            decode_row(&row[8..], &mut cols);
            self.start += need;
        }
        if hashes.is_empty() {
            return Ok(None);
        }
        let n = hashes.len();
        Ok(Some((Batch::new(cols, n), hashes)))
    }
}

/// Appends row `row` of `batch` in the spill encoding (null bitmap, then the
/// non-NULL values) to `buf`; [`decode_row`] reads it back.
pub fn encode_row(buf: &mut Vec<u8>, batch: &Batch, row: usize) {
    let cols = &batch.columns;
    let bitmap_at = buf.len();
    // Room for the bitmap and every fixed-width value, so the pushes below
    // do not grow the buffer.
    buf.reserve(cols.len().div_ceil(8) + cols.len() * 18);
    for _ in 0..cols.len().div_ceil(8) {
        buf.push(0);
    }
    for (c, col) in cols.iter().enumerate() {
        if col.is_null(row) {
            buf[bitmap_at + c / 8] |= 1 << (c % 8);
            continue;
        }
        with_fixed!(&col.data, d => codec::push(buf, d[row]), d => VarCodec::encode(&d[row], buf), d => {
            let s = d.get(row);
            buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
            buf.extend_from_slice(s);
        });
    }
}

/// Encodes every row of `batch` as [`encode_row`] would, one after the
/// other, into `out`; row *i* is `out[ends[i - 1]..ends[i]]` (from 0 for the
/// first). A batch of NULL-free fixed-width columns, the common case, is
/// encoded a column at a time.
pub fn encode_rows(batch: &Batch, out: &mut Vec<u8>, ends: &mut Vec<usize>) {
    out.clear();
    ends.clear();
    let cols = &batch.columns;
    let width = |c: &Vector| match &c.data {
        _ if c.nulls.is_some() => None,
        data => with_fixed!(data, d => Some(codec::width_of(d)), _n => None, _s => None),
    };
    let widths: Option<Vec<usize>> = cols.iter().map(width).collect();
    let Some(widths) = widths else {
        for row in 0..batch.len {
            encode_row(out, batch, row);
            ends.push(out.len());
        }
        return;
    };
    let bitmap = cols.len().div_ceil(8);
    let w = bitmap + widths.iter().sum::<usize>();
    out.resize(w * batch.len, 0);
    let mut at = bitmap;
    for (c, cw) in cols.iter().zip(&widths) {
        let slots = out[at..].chunks_mut(w);
        with_fixed!(&c.data, d => slots.zip(d).for_each(|(o, v)| v.put(o)),
            _n => unreachable!("numeric has no fixed width"),
            _s => unreachable!("text has no fixed width"));
        at += cw;
    }
    ends.extend((1..=batch.len).map(|i| i * w));
}

/// Appends one row in the spill encoding to `cols` (one vector per column).
pub fn decode_row(row: &[u8], cols: &mut [Vector]) {
    let nbytes = cols.len().div_ceil(8);
    let (bitmap, mut p) = (&row[..nbytes], nbytes);
    for (c, col) in cols.iter_mut().enumerate() {
        let n = col.len();
        let null = bitmap[c / 8] & (1 << (c % 8)) != 0;
        with_fixed!(&mut col.data, d => {
            if null {
                d.push(Default::default());
            } else {
                d.push(FixedCodec::get(&row[p..]));
                p += codec::width_of(d);
            }
        }, d => {
            if null {
                d.push(VarCodec::placeholder());
            } else {
                let (v, used) = VarCodec::decode(&row[p..]);
                d.push(v);
                p += used;
            }
        }, d => {
            if null {
                d.push(b"");
            } else {
                let len = u32::from_le_bytes(row[p..p + 4].try_into().unwrap()) as usize;
                d.push(&row[p + 4..p + 4 + len]);
                p += 4 + len;
            }
        });
        col.push_null_flag(n, null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::Numeric;
    use crate::value::Value;

    #[test]
    fn a_reused_file_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        let types = vec![DataType::Int8];
        let batch_of = |n: i64| {
            let mut b = Batch::empty(&types);
            for i in 0..n {
                b.columns[0].push_value(&Value::Int8(i));
                b.len += 1;
            }
            b
        };
        let stats = SpillStats::new(None);
        let write = |b: &Batch| {
            let mut w = SpillWriter::new(dir.path(), 256, stats.clone()).unwrap();
            for r in 0..b.len {
                w.write_row(r as u64, b, r).unwrap();
            }
            w.finish().unwrap()
        };
        // A big file, dropped: its handle goes to the pool, emptied.
        drop(write(&batch_of(3000)));
        // The next file of this directory may be that one: it must hold only
        // what is written now, from offset 0.
        let small = batch_of(10);
        let f = write(&small);
        let mut r = SpillReader::new(std::slice::from_ref(&f), types.clone(), 256, stats.clone());
        let mut back = Batch::empty(&types);
        while let Some((bb, _)) = r.next_batch(100).unwrap() {
            back.append(&bb);
        }
        assert_eq!(back.len, 10);
        for i in 0..10 {
            assert_eq!(back.columns[0].value(i), Value::Int8(i as i64));
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn round_trip_and_limit() {
        let dir = tempfile::tempdir().unwrap();
        let types = vec![
            DataType::Int4,
            DataType::Text,
            DataType::Numeric,
            DataType::Bool,
            DataType::Int8,
        ];
        let mut b = Batch::empty(&types);
        for i in 0..5000i32 {
            let row = [
                if i % 7 == 0 {
                    Value::Null
                } else {
                    Value::Int4(i)
                },
                Value::Text("x".repeat((i % 50) as usize)),
                if i % 11 == 0 {
                    Value::Numeric(Numeric::from_text("1e60").unwrap())
                } else {
                    Value::Numeric(Numeric::from_parts(i as i128 * 3, 1))
                },
                if i % 5 == 0 {
                    Value::Null
                } else {
                    Value::Bool(i % 2 == 0)
                },
                Value::Int8(-(i as i64)),
            ];
            for (c, v) in b.columns.iter_mut().zip(&row) {
                c.push_value(v);
            }
            b.len += 1;
        }
        let stats = SpillStats::new(None);
        let mut w = SpillWriter::new(dir.path(), 4096, stats.clone()).unwrap();
        for r in 0..b.len {
            w.write_row(r as u64 * 11, &b, r).unwrap();
        }
        let f = w.finish().unwrap();
        assert_eq!(f.rows, 5000);
        assert_eq!(stats.written.get(), f.bytes);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "spill files are unlinked"
        );
        for _pass in 0..2 {
            let mut r =
                SpillReader::new(std::slice::from_ref(&f), types.clone(), 4096, stats.clone());
            let mut back = Batch::empty(&types);
            let mut hashes = vec![];
            while let Some((bb, h)) = r.next_batch(777).unwrap() {
                back.append(&bb);
                hashes.extend(h);
            }
            assert_eq!(hashes, (0..5000u64).map(|i| i * 11).collect::<Vec<_>>());
            for r in 0..b.len {
                for c in 0..types.len() {
                    assert_eq!(
                        back.columns[c].value(r),
                        b.columns[c].value(r),
                        "row {r} col {c}"
                    );
                }
            }
        }
        // Whole-batch encoding equals row-by-row encoding, with NULLs and
        // text (row by row) and without (a column at a time).
        let fixed = Batch::new(vec![b.columns[2].clone(), b.columns[4].clone()], b.len);
        for batch in [&b, &fixed] {
            let (mut out, mut ends) = (Vec::new(), Vec::new());
            encode_rows(batch, &mut out, &mut ends);
            let mut one = Vec::new();
            for r in 0..batch.len {
                one.clear();
                encode_row(&mut one, batch, r);
                let start = if r == 0 { 0 } else { ends[r - 1] };
                assert_eq!(&out[start..ends[r]], &one[..], "row {r}");
            }
        }
        let limited = SpillStats::new(Some(1024));
        let mut w = SpillWriter::new(dir.path(), 4096, limited).unwrap();
        let mut err = None;
        for r in 0..b.len {
            if let Err(e) = w.write_row(0, &b, r) {
                err = Some(e);
                break;
            }
        }
        assert_eq!(
            err.unwrap().message,
            "temporary file size exceeds temp_file_limit (1kB)"
        );
    }
}
