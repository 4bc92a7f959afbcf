//! Large WAL writes that bypass the page cache (`O_DIRECT`).
//!
//! A bulk load logs every page it fills, so its WAL is as large as its
//! data, and handing that to the kernel through the page cache costs a
//! copy into freshly allocated cache pages per byte — as much CPU as
//! laying out the rows. A write of at least [`DIRECT_MIN`] bytes therefore
//! goes to the segment file with `O_DIRECT` where the file system allows
//! it: its whole 4 kB blocks are copied into an aligned buffer (a plain
//! memory copy) and written from there by the device, and only the
//! partial blocks at its two ends go through the page cache.
//!
//! Each block of a segment is written either entirely by one direct write
//! or only through the page cache: a write's partial end block is
//! completed by the next write's partial start block, both buffered, so
//! the two kinds never overlap (Linux keeps them coherent anyway). The
//! segment's `fdatasync` covers both. Small writes (commits) stay buffered,
//! as PostgreSQL writes its WAL with `wal_sync_method = fdatasync`.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Writes at least this long use `O_DIRECT` for their whole blocks.
pub const DIRECT_MIN: usize = 256 << 10;
/// Alignment of direct writes: offsets, lengths and the buffer's address.
const BLOCK: usize = 4096;
/// Bytes copied into the aligned buffer and written per direct write.
const CHUNK: usize = 1 << 20;

/// Direct writes into the WAL's segment files.
pub struct DirectWriter {
    /// The segment opened with `O_DIRECT`: number and file.
    file: Option<(u64, File)>,
    /// `CHUNK + BLOCK` bytes, of which `CHUNK` from `offset` are aligned.
    buf: Vec<u8>,
    offset: usize,
    /// The file system refused `O_DIRECT`: everything goes buffered.
    refused: bool,
}

impl Default for DirectWriter {
    fn default() -> Self {
        DirectWriter::new()
    }
}

impl DirectWriter {
    pub fn new() -> DirectWriter {
        DirectWriter {
            file: None,
            buf: Vec::new(),
            offset: 0,
            refused: false,
        }
    }

    /// Writes `data` at `off` of segment `seg` (path `path`), whose
    /// buffered file is `buffered`: long runs of whole blocks directly,
    /// the rest through the page cache.
    pub fn write(
        &mut self,
        buffered: &File,
        seg: u64,
        path: &Path,
        data: &[u8],
        off: u64,
    ) -> std::io::Result<()> {
        let end = off + data.len() as u64;
        let first = off.next_multiple_of(BLOCK as u64);
        let last = end / BLOCK as u64 * BLOCK as u64;
        if data.len() < DIRECT_MIN || last <= first || !self.open(seg, path) {
            return buffered.write_all_at(data, off);
        }
        let (head, rest) = data.split_at((first - off) as usize);
        let (middle, tail) = rest.split_at((last - first) as usize);
        buffered.write_all_at(head, off)?;
        if self.buf.is_empty() {
            self.buf = vec![0; CHUNK + BLOCK];
            self.offset = self.buf.as_ptr().align_offset(BLOCK);
        }
        let mut at = first;
        for piece in middle.chunks(CHUNK) {
            let aligned = &mut self.buf[self.offset..self.offset + piece.len()];
            aligned.copy_from_slice(piece);
            let (_, f) = self.file.as_ref().expect("opened above");
            if let Err(e) = f.write_all_at(aligned, at) {
                if e.raw_os_error() != Some(rustix::io::Errno::INVAL.raw_os_error()) {
                    return Err(e);
                }
                // Refused after all (an odd device block size): buffered
                // from here on.
                self.refused = true;
                self.file = None;
                buffered.write_all_at(&middle[(at - first) as usize..], at)?;
                break;
            }
            at += piece.len() as u64;
        }
        buffered.write_all_at(tail, last)
    }

    /// Opens segment `seg` with `O_DIRECT` unless it is open already;
    /// false if the file system refuses.
    fn open(&mut self, seg: u64, path: &Path) -> bool {
        if self.refused {
            return false;
        }
        if self.file.as_ref().is_some_and(|(s, _)| *s == seg) {
            return true;
        }
        self.file = None;
        match OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
            .open(path)
        {
            Ok(f) => {
                self.file = Some((seg, f));
                true
            }
            Err(_) => {
                self.refused = true;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_land_where_buffered_writes_would() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .unwrap();
        let mut w = DirectWriter::new();
        let mut expect = Vec::new();
        let mut off = 0u64;
        // Unaligned starts and ends, short and long writes, in sequence.
        for (i, len) in [
            100usize,
            DIRECT_MIN + 5000,
            7,
            3 * CHUNK + 123,
            4096,
            DIRECT_MIN,
        ]
        .into_iter()
        .enumerate()
        {
            let data: Vec<u8> = (0..len).map(|j| (j * 7 + i * 13) as u8).collect();
            w.write(&f, 0, &path, &data, off).unwrap();
            expect.extend_from_slice(&data);
            off += len as u64;
        }
        assert_eq!(std::fs::read(&path).unwrap(), expect);
    }
}
