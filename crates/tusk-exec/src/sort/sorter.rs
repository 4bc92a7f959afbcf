//! The sorter: rows in, rows out in key order, within a memory limit.
//!
//! Rows arrive as batches whose columns include the key columns (the
//! caller evaluates key expressions first). Each row's keys are encoded once
//! into a normalized key ([`crate::sortkey`]); from then on every comparison
//! is a byte comparison, total and panic-free, started on an 8-byte prefix
//! held in the sort entry itself.
//!
//! **In memory.** While the buffered rows (their values, keys and one
//! [`Entry`] each) fit the limit, they are kept and sorted at the end:
//! PostgreSQL's `quicksort`.
//!
//! **Top-N.** With a bound `n` (LIMIT + OFFSET above the sort), as soon as
//! more than `2n` rows are buffered the `n` smallest are selected and the
//! others dropped, so at most `2n` rows (plus one batch) are ever held:
//! PostgreSQL switches to its bounded heap at the same point, and EXPLAIN
//! calls both `top-N heapsort`.
//!
//! **External merge.** When the buffer outgrows the limit, it is sorted and
//! written to a spill file as a *run* (at most `n` rows of it under a bound),
//! and buffering starts again. At the end the last buffer becomes a run too
//! and the runs are merged ([`super::merge`]): up to `F` at a time, where `F`
//! is how many run readers (one spill buffer and one decoded chunk each) fit
//! in half the limit. While more than `F` runs remain, consecutive groups of
//! `F` are merged into longer runs; the last merge streams to the caller.
//! Runs keep the key columns, so merging re-encodes keys from the rows it
//! reads.
//!
//! Ties keep their input order (the sort is stable), which PostgreSQL does
//! not promise but costs nothing here: entries compare by their input
//! position last, and merges take the earlier run first.

use super::merge::Merger;
use crate::error::Result;
use crate::memory::{batch_bytes, MemUse, WorkMem};
use crate::sortkey::{KeyBuf, KeyOrder};
use crate::spill::{SpillFile, SpillWriter};
use crate::vector::{Batch, Vector};
use std::cmp::Ordering;
use std::sync::Arc;
use tusk_storage::DataType;

/// What to sort: the row layout, the key columns and how much to return.
#[derive(Debug, Clone)]
pub struct SortSpec {
    /// Types of the columns of every row pushed.
    pub types: Vec<DataType>,
    /// Key columns, most significant first.
    pub keys: Vec<(usize, KeyOrder)>,
    /// Output keeps the first `out_cols` columns (key columns the caller
    /// added after its own are dropped).
    pub out_cols: usize,
    /// Only the first `limit` rows are wanted.
    pub limit: Option<u64>,
}

/// One buffered row: its key's first 8 bytes, its key's index in the key
/// buffer (also its arrival order) and where its values are.
#[derive(Debug, Clone, Copy)]
struct Entry {
    prefix: u64,
    key: u32,
    batch: u32,
    row: u32,
}

/// How the sort went, for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortMethod {
    Quicksort,
    TopN,
    ExternalMerge,
}

#[derive(Debug, Clone, Copy)]
pub struct SortReport {
    pub method: SortMethod,
    /// Peak bytes held.
    pub peak: usize,
    /// Bytes written to runs.
    pub disk: u64,
}

impl SortReport {
    /// `Sort Method: ...` as PostgreSQL prints it.
    pub fn line(&self) -> String {
        let kb = self.peak.div_ceil(1024).max(1);
        match self.method {
            SortMethod::Quicksort => format!("Sort Method: quicksort  Memory: {kb}kB"),
            SortMethod::TopN => format!("Sort Method: top-N heapsort  Memory: {kb}kB"),
            SortMethod::ExternalMerge => format!(
                "Sort Method: external merge  Disk: {}kB",
                self.disk.div_ceil(1024).max(1)
            ),
        }
    }
}

pub struct Sorter {
    spec: SortSpec,
    orders: Vec<KeyOrder>,
    wm: WorkMem,
    batches: Vec<Batch>,
    keys: KeyBuf,
    entries: Vec<Entry>,
    mem: MemUse,
    runs: Vec<Arc<SpillFile>>,
    bounded: bool,
    /// Top-N: the largest key kept so far once `n` rows were kept; only
    /// smaller keys are still wanted.
    threshold: Option<Vec<u8>>,
    disk: u64,
}

#[inline]
fn prefix_of(key: &[u8]) -> u64 {
    let mut p = [0u8; 8];
    let n = key.len().min(8);
    p[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(p)
}

/// The entries' order: key bytes (prefix first), then arrival.
#[inline]
fn cmp_entries(keys: &KeyBuf, a: &Entry, b: &Entry) -> Ordering {
    a.prefix
        .cmp(&b.prefix)
        .then_with(|| keys.get(a.key as usize).cmp(keys.get(b.key as usize)))
        .then(a.key.cmp(&b.key))
}

impl Sorter {
    pub fn new(spec: SortSpec, wm: WorkMem) -> Sorter {
        let orders = spec.keys.iter().map(|(_, o)| *o).collect();
        Sorter {
            spec,
            orders,
            wm,
            batches: Vec::new(),
            keys: KeyBuf::new(),
            entries: Vec::new(),
            mem: MemUse::default(),
            runs: Vec::new(),
            bounded: false,
            threshold: None,
            disk: 0,
        }
    }

    /// Bytes held now and at most.
    pub fn memory(&self) -> MemUse {
        self.mem
    }

    /// Adds a batch of rows (with the layout of `SortSpec::types`).
    pub fn push(&mut self, batch: Batch) -> Result<()> {
        if batch.len == 0 {
            return Ok(());
        }
        // A batch that is large against the limit goes in halves, so that
        // making room for it never needs more than a quarter of the limit.
        let estimate = batch_bytes(&batch) + batch.len * (std::mem::size_of::<Entry>() + 16);
        if batch.len > 1 && estimate > self.wm.limit / 4 {
            let half = (batch.len / 2) as u32;
            let first: Vec<u32> = (0..half).collect();
            let second: Vec<u32> = (half..batch.len as u32).collect();
            self.push(batch.gather(&first))?;
            return self.push(batch.gather(&second));
        }
        let mut keys = KeyBuf::new();
        {
            let cols: Vec<&Vector> = self
                .spec
                .keys
                .iter()
                .map(|(c, _)| &batch.columns[*c])
                .collect();
            keys.push_rows(&cols, &self.orders);
        }
        self.mem.absorb_peak(keys.mem_size());
        // Top-N: a row not below the n-th smallest key so far can never be
        // returned (it would lose the tie too, arriving later).
        let (batch, keys) = match &self.threshold {
            Some(t) => {
                let keep: Vec<u32> = (0..batch.len)
                    .filter(|&r| keys.get(r) < t.as_slice())
                    .map(|r| r as u32)
                    .collect();
                if keep.is_empty() {
                    return Ok(());
                }
                let mut kept = KeyBuf::new();
                for &r in &keep {
                    kept.push(keys.get(r as usize));
                }
                (batch.gather(&keep), kept)
            }
            None => (batch, keys),
        };
        let size = batch_bytes(&batch) + keys.mem_size() + batch.len * std::mem::size_of::<Entry>();
        let over = |used: usize, wm: &WorkMem| used + wm.buffer() > wm.limit;
        // Without a bound, make room before taking the batch; with one, the
        // batch may bring the rows that let most of the buffer go.
        if self.spec.limit.is_none()
            && !self.entries.is_empty()
            && over(self.mem.current + size, &self.wm)
        {
            self.write_run()?;
        }
        let first = self.keys.len() as u32;
        let b = self.batches.len() as u32;
        for r in 0..batch.len {
            self.keys.push(keys.get(r));
            self.entries.push(Entry {
                prefix: prefix_of(keys.get(r)),
                key: first + r as u32,
                batch: b,
                row: r as u32,
            });
        }
        self.mem.add(size);
        self.batches.push(batch);
        if let Some(n) = self.spec.limit {
            let held = self.entries.len() as u64;
            if held > n.saturating_mul(2) || (held > n && over(self.mem.current, &self.wm)) {
                self.keep_smallest(n as usize);
            }
        }
        if over(self.mem.current, &self.wm) {
            self.write_run()?;
        }
        Ok(())
    }

    /// Top-N: keeps the `n` smallest buffered rows, compacted, and
    /// remembers the largest of them as the bar for later rows.
    fn keep_smallest(&mut self, n: usize) {
        self.bounded = true;
        let keys = &self.keys;
        if self.entries.len() > n {
            if n > 0 {
                self.entries
                    .select_nth_unstable_by(n - 1, |a, b| cmp_entries(keys, a, b));
            }
            self.entries.truncate(n);
        }
        self.entries
            .sort_unstable_by(|a, b| cmp_entries(keys, a, b));
        let (batch, keys) = self.gather(&self.entries, self.spec.types.len());
        self.entries = (0..batch.len)
            .map(|i| Entry {
                prefix: prefix_of(keys.get(i)),
                key: i as u32,
                batch: 0,
                row: i as u32,
            })
            .collect();
        if batch.len == n {
            let bar = if n == 0 { &[][..] } else { keys.get(n - 1) };
            if self.threshold.as_deref().is_none_or(|t| bar < t) {
                self.threshold = Some(bar.to_vec());
            }
        }
        self.mem
            .set(batch_bytes(&batch) + keys.mem_size() + batch.len * std::mem::size_of::<Entry>());
        self.batches = vec![batch];
        self.keys = keys;
    }

    /// The rows of `entries`, in that order, as one batch of the first
    /// `ncols` columns, with their keys.
    fn gather(&self, entries: &[Entry], ncols: usize) -> (Batch, KeyBuf) {
        let mut cols: Vec<Vector> = self.spec.types[..ncols]
            .iter()
            .map(|&t| Vector::with_capacity(t, entries.len()))
            .collect();
        let mut keys = KeyBuf::new();
        for e in entries {
            let src = &self.batches[e.batch as usize];
            for (c, out) in cols.iter_mut().enumerate() {
                out.push_from(&src.columns[c], e.row as usize);
            }
            keys.push(self.keys.get(e.key as usize));
        }
        (Batch::new(cols, entries.len()), keys)
    }

    fn sort_entries(&mut self) {
        let keys = &self.keys;
        self.entries
            .sort_unstable_by(|a, b| cmp_entries(keys, a, b));
        if let Some(n) = self.spec.limit {
            self.entries.truncate(n.min(usize::MAX as u64) as usize);
        }
    }

    /// Sorts the buffer and writes it out as a run.
    fn write_run(&mut self) -> Result<()> {
        self.sort_entries();
        let mut w = SpillWriter::new(&self.wm.dir, self.wm.buffer(), self.wm.spill.clone())?;
        self.mem.add(self.wm.buffer());
        for e in &self.entries {
            w.write_row(0, &self.batches[e.batch as usize], e.row as usize)?;
        }
        let f = w.finish()?;
        self.disk += f.bytes;
        self.runs.push(f);
        self.batches.clear();
        self.entries.clear();
        self.keys.clear();
        self.mem.set(0);
        Ok(())
    }

    /// Ends the input; the rows come back in order from the stream.
    pub fn finish(mut self) -> Result<SortedStream> {
        if self.runs.is_empty() {
            self.sort_entries();
            let method = if self.bounded {
                SortMethod::TopN
            } else {
                SortMethod::Quicksort
            };
            let report = SortReport {
                method,
                peak: self.mem.peak,
                disk: 0,
            };
            return Ok(SortedStream {
                source: Source::Memory {
                    sorter: Box::new(self),
                    pos: 0,
                },
                report,
            });
        }
        if !self.entries.is_empty() {
            self.write_run()?;
        }
        let merger = Merger::new(
            std::mem::take(&mut self.runs),
            &self.spec,
            self.wm.clone(),
            &mut self.mem,
        )?;
        let report = SortReport {
            method: SortMethod::ExternalMerge,
            peak: self.mem.peak,
            disk: self.disk,
        };
        Ok(SortedStream {
            source: Source::Merge(Box::new(merger)),
            report,
        })
    }
}

enum Source {
    Memory { sorter: Box<Sorter>, pos: usize },
    Merge(Box<Merger>),
}

/// The sorted rows (the first `out_cols` columns), batch by batch.
pub struct SortedStream {
    source: Source,
    report: SortReport,
}

impl SortedStream {
    /// Next batch of at most `max_rows` rows, `None` at the end.
    pub fn next_batch(&mut self, max_rows: usize) -> Result<Option<Batch>> {
        match &mut self.source {
            Source::Memory { sorter, pos } => {
                if *pos >= sorter.entries.len() {
                    return Ok(None);
                }
                let max_bytes = sorter.wm.output_batch_bytes();
                let mut cols: Vec<Vector> = sorter.spec.types[..sorter.spec.out_cols]
                    .iter()
                    .map(|&t| Vector::with_capacity(t, max_rows.min(1024)))
                    .collect();
                let mut n = 0;
                let mut bytes = 0;
                while *pos < sorter.entries.len() && n < max_rows && bytes < max_bytes {
                    let e = sorter.entries[*pos];
                    let src = &sorter.batches[e.batch as usize];
                    bytes = 0;
                    for (c, out) in cols.iter_mut().enumerate() {
                        out.push_from(&src.columns[c], e.row as usize);
                        bytes += crate::memory::vector_bytes(out);
                    }
                    n += 1;
                    *pos += 1;
                }
                sorter.mem.absorb_peak(bytes);
                self.report.peak = sorter.mem.peak;
                Ok(Some(Batch::new(cols, n)))
            }
            Source::Merge(m) => {
                let b = m.next_batch(max_rows)?;
                self.report.peak = self.report.peak.max(m.memory().peak);
                Ok(b)
            }
        }
    }

    pub fn report(&self) -> SortReport {
        self.report
    }
}
