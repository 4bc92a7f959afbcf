//! Spilling: recursive hash partitioning of both inputs when the build side
//! outgrows the join's memory limit, and the joining of partition pairs
//! (see the `hashjoin` module doc, "Memory limit and spilling").

use super::probe::ProbeKeys;
use super::table::TableBuilder;
use super::{HashJoin, Phase};
use crate::error::Result;
use crate::expr::eval_all;
use crate::hashkey::rehash;
use crate::operator::ExecContext;
use crate::spill::{bytes_of, rows_of, SpillFile, SpillReader, SpillWriter};
use crate::vector::{Batch, BATCH_SIZE};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use tusk_storage::DataType;

/// Rows read from a spill file per batch while (re)loading a partition, small
/// so that the memory check overshoots by little.
const LOAD_BATCH_ROWS: usize = 256;

/// Writes rows into `fanout` partition files by bits of their re-mixed hash.
pub(super) struct Partitioner {
    pub(super) writers: Vec<SpillWriter>,
    pub(super) level: u32,
}

impl Partitioner {
    pub(super) fn new(
        fanout: usize,
        level: u32,
        ctx: &ExecContext,
        buf: usize,
    ) -> Result<Partitioner> {
        let dir = ctx.db.temp_dir();
        let writers = (0..fanout)
            .map(|_| SpillWriter::new(&dir, buf, ctx.spill.clone()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Partitioner { writers, level })
    }

    #[inline]
    pub(super) fn partition(&self, hash: u64) -> usize {
        (rehash(hash, self.level) as usize) & (self.writers.len() - 1)
    }

    #[inline]
    pub(super) fn write(&mut self, hash: u64, b: &Batch, row: usize) -> Result<()> {
        let p = self.partition(hash);
        self.writers[p].write_row(hash, b, row)
    }

    /// Writes a row already in the spill encoding.
    pub(super) fn write_encoded(&mut self, hash: u64, row: &[u8]) -> Result<()> {
        let p = self.partition(hash);
        self.writers[p].write_encoded(hash, row)
    }

    /// Writes every row of `b` with a non-NULL key (hashes in `keys`), from row `from`.
    pub(super) fn write_batch(&mut self, b: &Batch, keys: &ProbeKeys, from: usize) -> Result<()> {
        for i in from..b.len {
            if let Some(h) = keys.hash(i) {
                self.write(h, b, i)?;
            }
        }
        Ok(())
    }

    pub(super) fn finish(self) -> Result<Vec<Arc<SpillFile>>> {
        self.writers.into_iter().map(|w| w.finish()).collect()
    }
}

/// The build rows of a partition not loaded yet.
pub(super) struct BuildSource {
    pub(super) reader: SpillReader,
    /// A batch read but not loaded because the table was full.
    pub(super) pending: Option<Batch>,
}

/// A pair of partition files still to be joined.
pub(super) struct Task {
    /// One file per participant that wrote this partition.
    pub(super) inner: Vec<Arc<SpillFile>>,
    pub(super) outer: Vec<Arc<SpillFile>>,
    pub(super) level: u32,
    /// Repartitioning could not split it: join it chunk by chunk.
    pub(super) chunked: bool,
}

/// Where probe batches come from.
pub(super) enum ProbeSource {
    Outer,
    File(SpillReader),
}

impl HashJoin {
    /// The next pair of partitions to join: this participant's own (from
    /// repartitioning) first, then the next shared one of a parallel join.
    pub(super) fn next_task(&mut self) -> Option<Task> {
        if let Some(t) = self.tasks.pop() {
            return Some(t);
        }
        let shared = self.shared.as_ref()?;
        let p = shared.next_partition.fetch_add(1, Relaxed);
        let files = shared.files.lock().unwrap_or_else(|e| e.into_inner());
        if p >= files.first()?.0.len() {
            return None;
        }
        Some(Task {
            inner: files.iter().map(|(i, _)| i[p].clone()).collect(),
            outer: files.iter().map(|(_, o)| o[p].clone()).collect(),
            level: 0,
            chunked: false,
        })
    }

    /// Loads build rows from `src` while the table stays within `budget` (at
    /// least one batch, so that progress is made). Returns whether rows remain.
    pub(super) fn load(&mut self, src: &mut BuildSource, budget: usize) -> Result<bool> {
        let mut builder = TableBuilder::new(&self.out.inner_types);
        loop {
            let b = match src.pending.take() {
                Some(b) => b,
                None => match src.reader.next_batch(LOAD_BATCH_ROWS)? {
                    Some((b, _)) => b,
                    None => break,
                },
            };
            if builder.rows() > 0 && builder.memory_after(&b) > budget {
                src.pending = Some(b);
                break;
            }
            let kv = eval_all(&self.inner_keys, &b)?;
            builder.add(&b, &kv);
        }
        let t = builder.finish(self.ctx.prefetch, self.kind().marks_inner());
        self.set_table(t);
        Ok(src.pending.is_some() || !src.reader.at_end())
    }

    /// Starts joining the next pair of partitions (or repartitions it).
    pub(super) fn start_task(&mut self, task: Task) -> Result<()> {
        // A partition with no probe rows only matters to a right, full or
        // right anti join (its build rows are unmatched), one with no build
        // rows only
        // to a kind that keeps unmatched probe rows.
        let kind = self.kind();
        let (inner_rows, outer_rows) = (rows_of(&task.inner), rows_of(&task.outer));
        if (inner_rows == 0 || outer_rows == 0)
            && !(outer_rows == 0 && inner_rows > 0 && kind.keeps_unmatched_inner())
            && !(inner_rows == 0 && outer_rows > 0 && kind.keeps_unmatched_outer())
        {
            self.report.batches += 1;
            return Ok(());
        }
        // Table memory for the partition: entries (16 bytes a row) and slots
        // (8 bytes, at most 8/3 of them a row) plus the payload (≈ its
        // spilled bytes); two file buffers stay open.
        let estimate = bytes_of(&task.inner) as usize + rows_of(&task.inner) as usize * 38;
        let budget = self.limit.saturating_sub(2 * self.buf);
        if estimate <= budget || task.chunked {
            let mut src = BuildSource {
                reader: SpillReader::new(
                    &task.inner,
                    self.out.inner_types.clone(),
                    self.buf,
                    self.ctx.spill.clone(),
                ),
                pending: None,
            };
            let more = self.load(&mut src, budget)?;
            self.report.batches += 1;
            if task.chunked {
                self.report.chunked += 1;
            }
            // Chunks: the probe rows' states must outlive each pass.
            self.chunk_states = (more && kind.decides_outer_rows())
                .then(|| super::ChunkStates::new(outer_rows as usize));
            self.probe_partition(task, more.then_some(src));
            self.phase = Phase::Probe;
            return Ok(());
        }
        // Too big: partition both sides again with the next level's hash bits.
        let level = task.level + 1;
        self.report.levels = self.report.levels.max(level + 1);
        self.table = None;
        // Only as many sub-partitions as the estimate needs (with room for
        // skew): a partition just over the budget splits in 2 or 4, not 512.
        let fanout = (estimate.div_ceil(budget.max(1)) * 2)
            .next_power_of_two()
            .clamp(2, self.fanout);
        let split = |this: &mut Self,
                     files: &[Arc<SpillFile>],
                     types: &[DataType]|
         -> Result<Vec<Arc<SpillFile>>> {
            let mut parts = Partitioner::new(fanout, level, &this.ctx, this.buf)?;
            this.report.peak = this.report.peak.max((fanout + 1) * this.buf);
            let mut reader =
                SpillReader::new(files, types.to_vec(), this.buf, this.ctx.spill.clone());
            while let Some((b, hashes)) = reader.next_batch(BATCH_SIZE)? {
                for (i, &h) in hashes.iter().enumerate() {
                    parts.write(h, &b, i)?;
                }
            }
            parts.finish()
        };
        let inner_types = self.out.inner_types.clone();
        let outer_types = self.out.outer_types.clone();
        let inner_parts = split(self, &task.inner, &inner_types)?;
        let outer_parts = split(self, &task.outer, &outer_types)?;
        let rows = rows_of(&task.inner);
        drop(task);
        for (inner, outer) in inner_parts.into_iter().zip(outer_parts).rev() {
            let chunked = inner.rows == rows;
            self.tasks.push(Task {
                inner: vec![inner],
                outer: vec![outer],
                level,
                chunked,
            });
        }
        Ok(())
    }

    /// Streams `task`'s probe partition through the table just loaded;
    /// `rest` holds the build rows of a chunked partition not loaded yet.
    pub(super) fn probe_partition(&mut self, task: Task, rest: Option<BuildSource>) {
        let states = self.chunk_states.as_mut().map_or(0, |c| {
            c.start_pass();
            c.memory()
        });
        self.note_memory(2 * self.buf + states);
        self.source = ProbeSource::File(SpillReader::new(
            &task.outer,
            self.out.outer_types.clone(),
            self.buf,
            self.ctx.spill.clone(),
        ));
        self.current = Some((task, rest));
    }

    /// The next batch to probe with, or `None` when the current source is done.
    pub(super) fn next_probe_batch(&mut self) -> Result<Option<Batch>> {
        match &mut self.source {
            ProbeSource::Outer => self.next_outer(),
            ProbeSource::File(r) => Ok(r.next_batch(BATCH_SIZE)?.map(|(b, _)| b)),
        }
    }

    /// Called when the probe source of a table is exhausted (and its
    /// unmatched build rows emitted): the next chunk of a chunked partition,
    /// the next partition, or the end.
    pub(super) fn after_probe_source(&mut self) -> Result<()> {
        self.table = None;
        let Some((task, rest)) = self.current.take() else {
            self.phase = if matches!(self.source, ProbeSource::Outer) {
                Phase::Finish
            } else {
                Phase::NextPartition
            };
            return Ok(());
        };
        match rest {
            Some(mut src) => {
                let budget = self.limit.saturating_sub(2 * self.buf);
                let more = self.load(&mut src, budget)?;
                self.probe_partition(task, more.then_some(src));
                self.phase = Phase::Probe;
            }
            None => {
                self.chunk_states = None;
                self.phase = Phase::NextPartition;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, TestDb};
    use crate::value::Value;

    /// Every row lands in the partition its hash names, once; the next
    /// level's bits send rows of one level-0 partition to several.
    #[test]
    fn rows_go_to_the_partition_of_their_hash() {
        let db = TestDb::new();
        let ctx = db.ctx(1 << 20, 1);
        let types = [DataType::Int8];
        let rows: Vec<Vec<Value>> = (0..4000).map(|i| vec![Value::Int8(i)]).collect();
        let b = batches(&types, &rows, 4000).0.pop_front().unwrap();
        let hash = |i: usize| crate::hashkey::hash_i64(i as i64);
        let mut parts = Partitioner::new(8, 0, &ctx, 4096).unwrap();
        for i in 0..b.len {
            parts.write(hash(i), &b, i).unwrap();
        }
        let level0 = Partitioner::new(8, 0, &ctx, 4096).unwrap();
        let level1 = Partitioner::new(8, 1, &ctx, 4096).unwrap();
        let files = parts.finish().unwrap();
        assert_eq!(rows_of(&files), 4000);
        let mut seen = vec![false; 4000];
        for (p, f) in files.iter().enumerate() {
            let mut r = SpillReader::new(
                std::slice::from_ref(f),
                types.to_vec(),
                4096,
                ctx.spill.clone(),
            );
            let mut children = std::collections::HashSet::new();
            while let Some((b, hashes)) = r.next_batch(100).unwrap() {
                for (k, &h) in hashes.iter().enumerate() {
                    let Value::Int8(i) = b.columns[0].value(k) else {
                        panic!()
                    };
                    assert_eq!(h, hash(i as usize));
                    assert_eq!(level0.partition(h), p);
                    assert!(!seen[i as usize], "row written twice");
                    seen[i as usize] = true;
                    children.insert(level1.partition(h));
                }
            }
            assert!(children.len() > 4, "level 1 splits partition {p}");
        }
        assert!(seen.iter().all(|&s| s));
    }
}
