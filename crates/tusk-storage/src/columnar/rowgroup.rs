//! Row groups in the data fork: their byte layout and their pages.
//!
//! A row group is one byte stream — a header, then one segment per column
//! (see `column`) — laid over consecutive blocks of the table's
//! [`Fork::ColumnarData`] file. Each block is an ordinary 8 kB page whose
//! first [`PAGE_HEADER_SIZE`] bytes keep the page LSN and checksum (and an
//! empty slotted-page header, so that a heap routine that met one would see
//! a page without tuples); the stream continues in the remaining
//! [`PAYLOAD`] bytes of each page. Position `p` of a stream that starts at
//! block `b` is byte `PAGE_HEADER_SIZE + p % PAYLOAD` of block
//! `b + p / PAYLOAD`.
//!
//! ```text
//! header:  magic "TCRG" u32, version u16, columns u16, rows u32, header length u32,
//!          per column: segment offset u32, segment length u32, NULL count u32,
//!                      min bound, max bound
//! bound:   tag u8 — 0 none, 1 i64, 2 f64, 3 numeric (i128, scale u16), 4 bytes (u8 length, bytes)
//! ```
//!
//! ## Writing
//!
//! [`write_stream`] appends a stream's blocks to the fork under the fork's
//! relation mutex (so that one stream's blocks are consecutive even when
//! two loads write at once), each through the buffer pool: the block is
//! added ([`BufferPool::new_page`]), filled under its exclusive lock and
//! logged as one `ColumnarPage` record, a full-page image, whose LSN goes
//! into the page before the lock is released — the same rule as every
//! page change (WAL before data); recovery restores the image. A table
//! created by the running transaction is not logged (its commit writes
//! and fsyncs all its forks, see `bulk`). The blocks mean nothing until a
//! row group entry in the metadata heap names them (see `meta`): a crash or
//! an abort before that leaves unreferenced blocks, never a visible row.
//! A row group's blocks are never changed after they are written.
//!
//! ## Reading
//!
//! [`GroupReader`] copies byte ranges of a stream out of its pages (each
//! page pinned and share-locked while it is copied): the header, then each
//! segment a scan needs, into a buffer the decoder reads from. Columns a
//! query does not read are never fetched.

use super::column::{Bound, ColumnStats};
use crate::bufmgr::BufferPool;
use crate::page::{self, PAGE_HEADER_SIZE, PAGE_SIZE};
use crate::smgr::{rel_of, Fork};
use crate::txn::Xid;
use crate::wal::{BlockRef, RecordType};
use crate::{Database, StorageError};

/// Stream bytes per page.
pub const PAYLOAD: usize = PAGE_SIZE - PAGE_HEADER_SIZE;

const MAGIC: u32 = u32::from_le_bytes(*b"TCRG");
const VERSION: u16 = 1;
/// Bytes of the fixed part of the header.
const FIXED: usize = 16;

fn corrupt(what: &str) -> StorageError {
    StorageError::Other(format!("corrupt columnar row group: {what}"))
}

/// Where a segment is in its stream, and its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentInfo {
    pub offset: u32,
    pub len: u32,
    pub stats: ColumnStats,
}

/// A row group's header.
#[derive(Debug, Clone, PartialEq)]
pub struct RowGroupHeader {
    pub rows: u32,
    pub columns: Vec<SegmentInfo>,
}

fn put_bound(out: &mut Vec<u8>, b: &Option<Bound>) {
    match b {
        None => out.push(0),
        Some(Bound::Int(v)) => {
            out.push(1);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Some(Bound::Float(v)) => {
            out.push(2);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Some(Bound::Numeric(v, s)) => {
            out.push(3);
            out.extend_from_slice(&v.to_le_bytes());
            out.extend_from_slice(&s.to_le_bytes());
        }
        Some(Bound::Bytes(v)) => {
            out.push(4);
            out.push(v.len() as u8);
            out.extend_from_slice(v);
        }
    }
}

/// A cursor over header bytes.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StorageError> {
        if self.0.len() < n {
            return Err(corrupt("header is truncated"));
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, StorageError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, StorageError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, StorageError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn bound(&mut self) -> Result<Option<Bound>, StorageError> {
        Ok(match self.u8()? {
            0 => None,
            1 => Some(Bound::Int(i64::from_le_bytes(
                self.take(8)?.try_into().unwrap(),
            ))),
            2 => Some(Bound::Float(f64::from_le_bytes(
                self.take(8)?.try_into().unwrap(),
            ))),
            3 => {
                let v = i128::from_le_bytes(self.take(16)?.try_into().unwrap());
                Some(Bound::Numeric(v, self.u16()?))
            }
            4 => {
                let n = self.u8()? as usize;
                Some(Bound::Bytes(self.take(n)?.to_vec()))
            }
            _ => return Err(corrupt("bound tag")),
        })
    }
}

impl RowGroupHeader {
    /// The header's bytes (the start of the stream); the segments follow.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.columns.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.rows.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for c in &self.columns {
            out.extend_from_slice(&c.offset.to_le_bytes());
            out.extend_from_slice(&c.len.to_le_bytes());
            out.extend_from_slice(&c.stats.null_count.to_le_bytes());
            put_bound(&mut out, &c.stats.min);
            put_bound(&mut out, &c.stats.max);
        }
        let len = out.len() as u32;
        out[12..16].copy_from_slice(&len.to_le_bytes());
        out
    }

    /// The length of a header, from its first [`FIXED`] bytes.
    fn encoded_len(fixed: &[u8]) -> Result<usize, StorageError> {
        let mut c = Cursor(fixed);
        if c.u32()? != MAGIC {
            return Err(corrupt("bad magic number"));
        }
        if c.u16()? != VERSION {
            return Err(corrupt("unknown version"));
        }
        c.take(6)?;
        Ok(c.u32()? as usize)
    }

    /// Parses a header of a stream `stream_len` bytes long.
    pub fn decode(b: &[u8], stream_len: usize) -> Result<RowGroupHeader, StorageError> {
        let mut c = Cursor(b);
        c.take(6)?;
        let ncols = c.u16()? as usize;
        let rows = c.u32()?;
        let header_len = c.u32()? as usize;
        let mut columns = Vec::with_capacity(ncols);
        for _ in 0..ncols {
            let offset = c.u32()?;
            let len = c.u32()?;
            let end = offset as usize + len as usize;
            if (offset as usize) < header_len || end > stream_len {
                return Err(corrupt("segment outside its row group"));
            }
            let null_count = c.u32()?;
            let min = c.bound()?;
            let max = c.bound()?;
            columns.push(SegmentInfo {
                offset,
                len,
                stats: ColumnStats {
                    null_count,
                    min,
                    max,
                },
            });
        }
        Ok(RowGroupHeader { rows, columns })
    }
}

/// Blocks a stream of `len` bytes takes.
pub fn blocks_for(len: usize) -> u32 {
    len.div_ceil(PAYLOAD) as u32
}

/// Writes `stream` into consecutive blocks of table `oid`'s data fork (see
/// "Writing"): a run of free blocks long enough if the table has one (see
/// `registry`), else new blocks at the end; logged under `xid` unless the
/// table is not logged. Returns the first block.
pub fn write_stream(db: &Database, oid: u32, xid: Xid, stream: &[u8]) -> Result<u32, StorageError> {
    let pool = &db.pool;
    let rel = rel_of(oid, Fork::ColumnarData);
    let logged = pool.wal_for(rel).is_some();
    let mutex = pool.relation_mutex(rel);
    let _extending = mutex.lock().unwrap_or_else(|e| e.into_inner());
    let reuse = db.columnar.table(oid).take_free(blocks_for(stream.len()));
    let mut first = None;
    for (i, chunk) in stream.chunks(PAYLOAD).enumerate() {
        let buf = match reuse {
            Some(b) => pool.buffer_to_overwrite(rel, b + i as u32)?,
            None => pool.new_page(rel)?,
        };
        let block = buf.block();
        let first = *first.get_or_insert(block);
        if block != first + i as u32 {
            return Err(StorageError::Other(format!(
                "columnar row group blocks are not consecutive ({block} after {first} + {i})"
            )));
        }
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        page::init(p);
        p[PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + chunk.len()].copy_from_slice(chunk);
        if logged {
            if let Some(wal) = pool.wal() {
                let lsn = wal.insert(
                    RecordType::ColumnarPage,
                    xid,
                    Some(BlockRef { rel, block }),
                    true,
                    p,
                )?;
                page::set_lsn(p, lsn);
            }
        }
    }
    first.ok_or_else(|| StorageError::Other("empty columnar row group".into()))
}

/// Reads a row group's stream (see "Reading").
pub struct GroupReader<'p> {
    pool: &'p BufferPool,
    rel: u32,
    first_block: u32,
    stream_len: usize,
}

impl<'p> GroupReader<'p> {
    /// The stream of `stream_len` bytes from block `first_block` of table
    /// `oid`'s data fork.
    pub fn new(pool: &'p BufferPool, oid: u32, first_block: u32, stream_len: usize) -> Self {
        GroupReader {
            pool,
            rel: rel_of(oid, Fork::ColumnarData),
            first_block,
            stream_len,
        }
    }

    /// Appends stream bytes `offset .. offset + len` to `out`.
    pub fn read(&self, offset: usize, len: usize, out: &mut Vec<u8>) -> Result<(), StorageError> {
        if offset + len > self.stream_len {
            return Err(corrupt("read past the end of a row group"));
        }
        out.reserve(len);
        let (mut pos, end) = (offset, offset + len);
        while pos < end {
            let block = self.first_block + (pos / PAYLOAD) as u32;
            let at = pos % PAYLOAD;
            let n = (PAYLOAD - at).min(end - pos);
            let buf = self.pool.read_buffer(self.rel, block)?;
            let g = buf.lock_shared();
            out.extend_from_slice(&g.page()[PAGE_HEADER_SIZE + at..PAGE_HEADER_SIZE + at + n]);
            pos += n;
        }
        Ok(())
    }

    /// The row group's header.
    pub fn header(&self) -> Result<RowGroupHeader, StorageError> {
        let mut fixed = Vec::with_capacity(FIXED);
        self.read(0, FIXED, &mut fixed)?;
        let len = RowGroupHeader::encoded_len(&fixed)?;
        if !(FIXED..=self.stream_len).contains(&len) {
            return Err(corrupt("header length"));
        }
        let mut bytes = Vec::with_capacity(len);
        self.read(0, len, &mut bytes)?;
        RowGroupHeader::decode(&bytes, self.stream_len)
    }

    /// Reads segment `info` into `out` (cleared first).
    pub fn segment(&self, info: &SegmentInfo, out: &mut Vec<u8>) -> Result<(), StorageError> {
        out.clear();
        self.read(info.offset as usize, info.len as usize, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = RowGroupHeader {
            rows: 7,
            columns: vec![
                SegmentInfo {
                    offset: 100,
                    len: 5,
                    stats: ColumnStats {
                        null_count: 1,
                        min: Some(Bound::Int(-3)),
                        max: Some(Bound::Numeric(12345, 2)),
                    },
                },
                SegmentInfo {
                    offset: 105,
                    len: 9,
                    stats: ColumnStats {
                        null_count: 0,
                        min: Some(Bound::Bytes(b"abc".to_vec())),
                        max: Some(Bound::Float(2.5)),
                    },
                },
            ],
        };
        let b = h.encode();
        assert_eq!(RowGroupHeader::encoded_len(&b[..FIXED]).unwrap(), b.len());
        assert_eq!(RowGroupHeader::decode(&b, 200).unwrap(), h);
        assert!(
            RowGroupHeader::decode(&b, 110).is_err(),
            "segment past the end"
        );
        for cut in FIXED..b.len() {
            assert!(RowGroupHeader::decode(&b[..cut], 200).is_err());
        }
    }

    #[test]
    fn streams_span_pages_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Database::open(dir.path(), &[]).unwrap();
        let oid = db.catalog_mut().allocate_oid().unwrap();
        db.smgr.create(rel_of(oid, Fork::ColumnarData)).unwrap();
        let stream: Vec<u8> = (0..3 * PAYLOAD + 100)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let first = write_stream(&db, oid, 5, &stream).unwrap();
        let second = write_stream(&db, oid, 5, &stream[..10]).unwrap();
        assert_eq!((first, second), (0, 4));
        let r = GroupReader::new(&db.pool, oid, first, stream.len());
        for (off, len) in [
            (0, 10),
            (PAYLOAD - 3, 10),
            (100, 2 * PAYLOAD + 50),
            (0, stream.len()),
        ] {
            let mut out = Vec::new();
            r.read(off, len, &mut out).unwrap();
            assert_eq!(out, &stream[off..off + len]);
        }
        let mut out = Vec::new();
        assert!(r.read(stream.len() - 1, 2, &mut out).is_err());
        // Free blocks are used first (here: the second and third).
        db.columnar.table(oid).set_free(vec![(1, 2)]);
        let other: Vec<u8> = (0..PAYLOAD + 1).map(|i| (i % 13) as u8).collect();
        assert_eq!(write_stream(&db, oid, 5, &other).unwrap(), 1);
        assert_eq!(write_stream(&db, oid, 5, &other[..1]).unwrap(), 5);
        let mut out = Vec::new();
        GroupReader::new(&db.pool, oid, 1, other.len())
            .read(0, other.len(), &mut out)
            .unwrap();
        assert_eq!(out, other);
    }
}
