//! The sort of a bulk build: in-memory runs within a memory budget
//! (`maintenance_work_mem`), spilled to files when it is exceeded, and
//! merged.
//!
//! Keys go into one arena and the entries, 24 bytes each, carry the first
//! 8 key bytes as a big-endian integer, so that the sort compares integers
//! and looks at the arena only when two keys share those bytes (a 4-byte
//! integer key never does). When entries and arena together pass the
//! budget, they are sorted and written to a run file in the data
//! directory's temp dir (`klen u16 | block u32 | item u16 | has_null u8 |
//! key`, little endian) and memory starts over. At the end the last run
//! stays in memory and all runs are merged through a binary heap; without
//! spilled runs the sorted entries are read directly. Run files are
//! removed when the sort is dropped (and by the next start-up, after a
//! crash).

use crate::heap::Tid;
use crate::StorageError;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// One entry of the in-memory run.
#[derive(Debug, Clone, Copy)]
struct SortEntry {
    /// The key's first 8 bytes, zero padded, big endian.
    prefix: u64,
    /// Arena offset (48 bits) and key length (16 bits).
    at: u64,
    block: u32,
    item: u16,
    has_null: bool,
}

impl SortEntry {
    fn tid(&self) -> Tid {
        Tid {
            block: self.block,
            item: self.item,
        }
    }
    fn key<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        let off = (self.at >> 16) as usize;
        &arena[off..off + (self.at & 0xffff) as usize]
    }
}

/// A spilled run; the file goes when this is dropped.
struct RunFile {
    path: PathBuf,
}

impl Drop for RunFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bytes an entry costs against the budget, besides its key.
const ENTRY_COST: usize = std::mem::size_of::<SortEntry>();

/// Sorts (key, TID) entries (see the module doc).
pub(super) struct Sorter {
    arena: Vec<u8>,
    entries: Vec<SortEntry>,
    budget: usize,
    dir: Option<PathBuf>,
    runs: Vec<RunFile>,
    total: u64,
}

fn io_error(what: &str, path: &std::path::Path, e: std::io::Error) -> StorageError {
    StorageError::io(format!("could not {what} \"{}\"", path.display()), e)
}

impl Sorter {
    /// A sorter that keeps about `budget` bytes in memory and spills runs
    /// into `dir` (never, without one).
    pub fn new(budget: usize, dir: Option<PathBuf>) -> Sorter {
        Sorter {
            arena: Vec::new(),
            entries: Vec::new(),
            budget,
            dir,
            runs: Vec::new(),
            total: 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    /// Runs spilled so far.
    pub fn spilled_runs(&self) -> usize {
        self.runs.len()
    }

    pub fn push(&mut self, key: &[u8], tid: Tid, has_null: bool) -> Result<(), StorageError> {
        let mut prefix = [0u8; 8];
        let n = key.len().min(8);
        prefix[..n].copy_from_slice(&key[..n]);
        self.entries.push(SortEntry {
            prefix: u64::from_be_bytes(prefix),
            at: (self.arena.len() as u64) << 16 | key.len() as u64,
            block: tid.block,
            item: tid.item,
            has_null,
        });
        self.arena.extend_from_slice(key);
        self.total += 1;
        if self.dir.is_some() && self.entries.len() * ENTRY_COST + self.arena.len() > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn sort(&mut self) {
        let arena = &self.arena;
        self.entries.sort_unstable_by(|a, b| {
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| a.key(arena).cmp(b.key(arena)))
                .then(a.tid().cmp(&b.tid()))
        });
    }

    /// Writes the in-memory entries as a sorted run file.
    fn spill(&mut self) -> Result<(), StorageError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        self.sort();
        let dir = self.dir.as_ref().expect("spilling needs a directory");
        let path = dir.join(format!(
            "btree-build-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, AtomicOrdering::Relaxed)
        ));
        let run = RunFile { path };
        let file = File::create(&run.path).map_err(|e| io_error("create", &run.path, e))?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        for e in &self.entries {
            let key = e.key(&self.arena);
            let mut head = [0u8; 9];
            head[0..2].copy_from_slice(&(key.len() as u16).to_le_bytes());
            head[2..6].copy_from_slice(&e.block.to_le_bytes());
            head[6..8].copy_from_slice(&e.item.to_le_bytes());
            head[8] = e.has_null as u8;
            w.write_all(&head)
                .and_then(|()| w.write_all(key))
                .map_err(|e| io_error("write", &run.path, e))?;
        }
        w.flush().map_err(|e| io_error("write", &run.path, e))?;
        self.runs.push(run);
        self.entries.clear();
        self.arena.clear();
        Ok(())
    }

    /// Calls `f(key, tid, has_null)` for every entry in (key, TID) order
    /// until it returns false.
    pub fn for_each_sorted(
        mut self,
        mut f: impl FnMut(&[u8], Tid, bool) -> Result<bool, StorageError>,
    ) -> Result<(), StorageError> {
        self.sort();
        if self.runs.is_empty() {
            for e in &self.entries {
                if !f(e.key(&self.arena), e.tid(), e.has_null)? {
                    break;
                }
            }
            return Ok(());
        }
        let mut readers = Vec::with_capacity(self.runs.len());
        for run in &self.runs {
            let file = File::open(&run.path).map_err(|e| io_error("open", &run.path, e))?;
            readers.push((BufReader::with_capacity(1 << 16, file), &run.path));
        }
        let mem = self.runs.len();
        let mut next_mem = 0usize;
        let mut heap = BinaryHeap::with_capacity(mem + 1);
        // Reads source `src`'s next entry into `h` (reusing its key buffer).
        let mut refill = |src: usize, mut h: Head| -> Result<Option<Head>, StorageError> {
            h.src = src;
            if src == mem {
                let Some(e) = self.entries.get(next_mem) else {
                    return Ok(None);
                };
                next_mem += 1;
                h.key.clear();
                h.key.extend_from_slice(e.key(&self.arena));
                h.tid = e.tid();
                h.has_null = e.has_null;
                return Ok(Some(h));
            }
            let (r, path) = &mut readers[src];
            let mut head = [0u8; 9];
            match r.read_exact(&mut head) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(io_error("read", path, e)),
            }
            let len = u16::from_le_bytes([head[0], head[1]]) as usize;
            h.tid = Tid {
                block: u32::from_le_bytes(head[2..6].try_into().unwrap()),
                item: u16::from_le_bytes([head[6], head[7]]),
            };
            h.has_null = head[8] != 0;
            h.key.resize(len, 0);
            r.read_exact(&mut h.key)
                .map_err(|e| io_error("read", path, e))?;
            Ok(Some(h))
        };
        for src in 0..=mem {
            if let Some(h) = refill(src, Head::default())? {
                heap.push(h);
            }
        }
        while let Some(h) = heap.pop() {
            if !f(&h.key, h.tid, h.has_null)? {
                break;
            }
            if let Some(h) = refill(h.src, h)? {
                heap.push(h);
            }
        }
        Ok(())
    }
}

/// The current entry of one run in the merge; the heap's top is the
/// smallest (key, TID).
struct Head {
    key: Vec<u8>,
    tid: Tid,
    has_null: bool,
    src: usize,
}

impl Default for Head {
    fn default() -> Self {
        Head {
            key: Vec::new(),
            tid: Tid { block: 0, item: 0 },
            has_null: false,
            src: 0,
        }
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key).then(other.tid.cmp(&self.tid))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_runs_merge_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::new(4096, Some(dir.path().to_path_buf()));
        let mut want = Vec::new();
        for i in 0..5000u32 {
            let k = (i.wrapping_mul(2_654_435_761) % 1000)
                .to_be_bytes()
                .repeat(1 + (i % 3) as usize);
            let tid = Tid { block: i, item: 1 };
            s.push(&k, tid, false).unwrap();
            want.push((k, tid));
        }
        assert!(s.spilled_runs() > 10);
        want.sort();
        let mut got = Vec::new();
        s.for_each_sorted(|k, t, _| {
            got.push((k.to_vec(), t));
            Ok(true)
        })
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "runs removed"
        );
    }
}
