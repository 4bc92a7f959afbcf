//! K-way merge of sorted runs.
//!
//! Each run is read through a [`RunCursor`]: a spill reader with one buffer
//! and the current *chunk* of decoded rows with their normalized keys. The
//! cursors sit in a binary min-heap ordered by their current key, ties going
//! to the earlier run, so the merge is stable. The output is built row by row
//! from the cursor at the top of the heap.
//!
//! A chunk holds about one spill buffer's worth of rows (estimated from the
//! run's bytes per row), so a cursor costs about two buffers; the fan-in `F`
//! is how many cursors fit in half the memory limit (at least 2). When there
//! are more runs than that, consecutive groups of `F` runs are merged into
//! new runs first, as many passes as needed.

use super::sorter::SortSpec;
use crate::error::Result;
use crate::memory::{batch_bytes, MemUse, WorkMem};
use crate::sortkey::{KeyBuf, KeyOrder};
use crate::spill::{SpillFile, SpillReader, SpillWriter};
use crate::vector::{Batch, Vector};
use std::sync::Arc;
use tusk_storage::DataType;

struct RunCursor {
    reader: SpillReader,
    chunk: Batch,
    keys: KeyBuf,
    pos: usize,
    chunk_rows: usize,
}

impl RunCursor {
    fn open(file: &Arc<SpillFile>, spec: &SortSpec, wm: &WorkMem) -> RunCursor {
        let per_row = (file.bytes / file.rows.max(1)).max(1) as usize;
        RunCursor {
            reader: SpillReader::new(
                std::slice::from_ref(file),
                spec.types.clone(),
                wm.buffer(),
                wm.spill.clone(),
            ),
            chunk: Batch::empty(&spec.types),
            keys: KeyBuf::new(),
            pos: 0,
            chunk_rows: (wm.buffer() / per_row).clamp(1, 1024),
        }
    }

    /// Loads the next chunk; false at the end of the run.
    fn load(&mut self, key_cols: &[usize], orders: &[KeyOrder]) -> Result<bool> {
        self.pos = 0;
        self.keys.clear();
        match self.reader.next_batch(self.chunk_rows)? {
            Some((b, _)) => {
                let cols: Vec<&Vector> = key_cols.iter().map(|&c| &b.columns[c]).collect();
                self.keys.push_rows(&cols, orders);
                self.chunk = b;
                Ok(true)
            }
            None => {
                self.chunk.len = 0;
                Ok(false)
            }
        }
    }

    fn key(&self) -> &[u8] {
        self.keys.get(self.pos)
    }

    fn mem(&self, buffer: usize) -> usize {
        buffer + batch_bytes(&self.chunk) + self.keys.mem_size()
    }
}

pub struct Merger {
    cursors: Vec<RunCursor>,
    /// Indexes of cursors with rows left, a min-heap by current key.
    heap: Vec<usize>,
    key_cols: Vec<usize>,
    orders: Vec<KeyOrder>,
    types: Vec<DataType>,
    /// Columns output (all for an intermediate pass).
    ncols: usize,
    remaining: u64,
    mem: MemUse,
    buffer: usize,
    max_bytes: usize,
}

impl Merger {
    /// Merges `runs` down to at most `F` and opens the final merge.
    /// Intermediate passes count into `mem`.
    pub fn new(
        mut runs: Vec<Arc<SpillFile>>,
        spec: &SortSpec,
        wm: WorkMem,
        mem: &mut MemUse,
    ) -> Result<Merger> {
        // Cursors get half the limit; the output batch and a writer the rest.
        let fan_in = (wm.limit / 2 / (2 * wm.buffer())).max(2);
        while runs.len() > fan_in {
            let mut next = Vec::with_capacity(runs.len().div_ceil(fan_in));
            for group in runs.chunks(fan_in) {
                let mut m = Merger::open(group, spec, &wm, spec.types.len(), None)?;
                let mut w = SpillWriter::new(&wm.dir, wm.buffer(), wm.spill.clone())?;
                while let Some(b) = m.next_batch(crate::vector::BATCH_SIZE)? {
                    for r in 0..b.len {
                        w.write_row(0, &b, r)?;
                    }
                }
                m.mem.add(wm.buffer());
                mem.absorb_peak(m.mem.peak);
                next.push(w.finish()?);
            }
            runs = next;
        }
        let m = Merger::open(&runs, spec, &wm, spec.out_cols, spec.limit)?;
        mem.absorb_peak(m.mem.peak);
        Ok(m)
    }

    fn open(
        runs: &[Arc<SpillFile>],
        spec: &SortSpec,
        wm: &WorkMem,
        ncols: usize,
        limit: Option<u64>,
    ) -> Result<Merger> {
        let key_cols: Vec<usize> = spec.keys.iter().map(|(c, _)| *c).collect();
        let orders: Vec<KeyOrder> = spec.keys.iter().map(|(_, o)| *o).collect();
        let mut m = Merger {
            cursors: runs.iter().map(|f| RunCursor::open(f, spec, wm)).collect(),
            heap: Vec::with_capacity(runs.len()),
            key_cols,
            orders,
            types: spec.types.clone(),
            ncols,
            remaining: limit.unwrap_or(u64::MAX),
            mem: MemUse::default(),
            buffer: wm.buffer(),
            max_bytes: wm.output_batch_bytes(),
        };
        for i in 0..m.cursors.len() {
            if m.cursors[i].load(&m.key_cols, &m.orders)? {
                m.heap.push(i);
                let n = m.heap.len() - 1;
                m.sift_up(n);
            }
        }
        m.track();
        Ok(m)
    }

    fn track(&mut self) {
        let held: usize = self.cursors.iter().map(|c| c.mem(self.buffer)).sum();
        self.mem.set(held);
    }

    pub fn memory(&self) -> MemUse {
        self.mem
    }

    /// Whether heap entry `a` orders before `b` (by key, then run).
    #[inline]
    fn less(&self, a: usize, b: usize) -> bool {
        let (x, y) = (self.heap[a], self.heap[b]);
        self.cursors[x]
            .key()
            .cmp(self.cursors[y].key())
            .then(x.cmp(&y))
            .is_lt()
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.less(i, parent) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < self.heap.len() && self.less(l, m) {
                m = l;
            }
            if r < self.heap.len() && self.less(r, m) {
                m = r;
            }
            if m == i {
                break;
            }
            self.heap.swap(i, m);
            i = m;
        }
    }

    /// Next batch of at most `max_rows` merged rows.
    pub fn next_batch(&mut self, max_rows: usize) -> Result<Option<Batch>> {
        let mut cols: Vec<Vector> = self.types[..self.ncols]
            .iter()
            .map(|&t| Vector::with_capacity(t, max_rows.min(1024)))
            .collect();
        let mut n = 0;
        let mut bytes = 0;
        while n < max_rows && bytes < self.max_bytes && self.remaining > 0 && !self.heap.is_empty()
        {
            let top = self.heap[0];
            let c = &mut self.cursors[top];
            bytes = 0;
            for (i, out) in cols.iter_mut().enumerate() {
                out.push_from(&c.chunk.columns[i], c.pos);
                bytes += crate::memory::vector_bytes(out);
            }
            n += 1;
            self.remaining -= 1;
            c.pos += 1;
            if c.pos >= c.chunk.len {
                if c.load(&self.key_cols, &self.orders)? {
                    self.track();
                } else {
                    let last = self.heap.len() - 1;
                    self.heap.swap(0, last);
                    self.heap.pop();
                }
            }
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
        if n == 0 {
            return Ok(None);
        }
        self.mem.absorb_peak(bytes);
        Ok(Some(Batch::new(cols, n)))
    }
}
