//! The Parallel Hash Join's shared build: one table for all participants,
//! in DSA chunks (`shared_table`), or shared partition files when it does
//! not fit.

use super::nullaware::{self, AllInner};
use super::partition::Partitioner;
use super::probe::ProbeKeys;
use super::report::Report;
use super::shared_table::{ChunkWriter, MemoryReport, SharedTable, TableShape, TupleKey};
use super::table::Table;
use super::{HashJoin, Phase, ProbeSource};
use crate::error::Result;
use crate::expr::{eval_all, Expr};
use crate::operator::ExecContext;
use crate::parallel::{NodeShared, Phaser};
use crate::rowstore::StoredRows;
use crate::spill::{self, SpillFile};
use crate::vector::{physical, Physical};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};

/// One participant's partition files of one input, by partition number.
pub(super) type Partitions = Vec<Arc<SpillFile>>;

/// The shared state of a Parallel Hash Join (see `shared_table` for the
/// table and its phases).
///
/// **Memory.** The join's limit is `work_mem × hash_mem_multiplier ×
/// participants` (PostgreSQL's rule for a Parallel Hash). It covers every
/// participant's chunks, the slot array, the chunk directory and, should
/// the build not fit, every participant's spill-file buffers: room for those
/// (`participants × F × B`, as in the serial join) is kept free from the
/// start. A participant asks before taking each chunk; the asks of different
/// participants may race, so the peak stays within the limit plus one chunk
/// per participant.
///
/// **Spilling.** When a chunk would not fit (or the final slot array
/// would not), the spill flag is raised. Every participant then writes the
/// tuples of its chunks, and the rest of its share of the build input, to
/// its own `F` partition files (hash bits of level 0, as the serial join),
/// then its share of the probe input to `F` more. `F` is decided once, by
/// the first participant to spill ([`SharedBuild::spill_fanout`]), so that
/// every participant's partition *p* holds the same keys. After a phaser the table's
/// DSA area is dropped, and participants take partitions one at a time from
/// a shared counter: partition *p* is the *p*-th file of every participant,
/// joined by the serial join's partition code (`start_task`), which may
/// repartition it or join it in chunks within each participant's own
/// `work_mem × hash_mem_multiplier`.
pub struct SharedBuild {
    pub(crate) phaser: Phaser,
    pub(super) participants: usize,
    pub(super) table: Mutex<Option<Arc<SharedTable>>>,
    /// Tuples written so far (published once per input batch).
    pub(super) rows: AtomicUsize,
    pub(super) spill: AtomicBool,
    /// Spill buffers all participants hold during the build.
    pub(super) buffers: AtomicUsize,
    /// The fan-out of the level-0 partitions, 0 until some participant
    /// spills (see [`SharedBuild::spill_fanout`]).
    fanout: AtomicUsize,
    /// Peak of chunks + slots + directory + spill buffers.
    pub(super) peak: AtomicUsize,
    /// (inner, outer) partition files of each participant that spilled.
    pub(super) files: Mutex<Vec<(Partitions, Partitions)>>,
    pub(super) next_partition: AtomicUsize,
    pub(super) memory: Mutex<Option<MemoryReport>>,
    /// Participants' reports, combined by the last one to finish.
    pub(super) report: Mutex<(Report, usize, u64, u64)>,
    /// Build rows read by all participants (a null-aware mark join needs
    /// to know whether there were any).
    pub(super) inner_rows: AtomicU64,
    /// Every participant's chunks of the table: (directory index, bytes
    /// used), published after loading, for scans of the whole table.
    pub(super) extents: Mutex<Vec<(u32, usize)>>,
    /// A null-aware mark join's build rows with a NULL key, every
    /// participant's (see `nullaware`).
    pub(super) null_inner: Mutex<Vec<Arc<StoredRows>>>,
    /// Participants done probing the shared table (see `unmatched`).
    pub(super) probed: AtomicUsize,
    /// Some participant's share of the probe side has a row (see
    /// `HashJoin::read_first_outer`).
    pub(super) outer_nonempty: AtomicBool,
}

/// Locks `m`, whatever another participant's panic left in it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl NodeShared for SharedBuild {
    fn abort(&self) {
        self.phaser.abort();
    }
}

impl SharedBuild {
    pub fn new(participants: usize) -> SharedBuild {
        SharedBuild {
            phaser: Phaser::new(participants),
            participants,
            table: Mutex::new(None),
            rows: AtomicUsize::new(0),
            spill: AtomicBool::new(false),
            buffers: AtomicUsize::new(0),
            fanout: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            files: Mutex::new(Vec::new()),
            next_partition: AtomicUsize::new(0),
            memory: Mutex::new(None),
            report: Mutex::new((Report::default(), 0, 0, 0)),
            inner_rows: AtomicU64::new(0),
            extents: Mutex::new(Vec::new()),
            null_inner: Mutex::new(Vec::new()),
            probed: AtomicUsize::new(0),
            outer_nonempty: AtomicBool::new(false),
        }
    }

    /// Every participant's chunks (after loading).
    pub(super) fn all_extents(&self) -> Vec<(u32, usize)> {
        self.extents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The shared table, created by the first participant to ask; the
    /// planner expects `estimate` rows of about `width` bytes.
    pub(super) fn table(
        &self,
        ctx: &ExecContext,
        shape: TableShape,
        limit: usize,
        (estimate, width): (usize, usize),
    ) -> Result<Arc<SharedTable>> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = &*t {
            return Ok(t.clone());
        }
        // Tuples: header, key, and (unless key-only) the row.
        let tuple = if shape.key_only.is_some() {
            16
        } else {
            24 + width
        };
        let expected = SharedTable::slot_bytes(estimate) + estimate * tuple + (2 << 20);
        let table = Arc::new(SharedTable::new(
            &ctx.db.dsm,
            ctx.hash_chunk_size,
            shape,
            limit,
            expected,
        )?);
        *t = Some(table.clone());
        Ok(table)
    }

    /// The fan-out every participant partitions with, decided by the first
    /// to ask: `wanted` unless another participant decided before.
    ///
    /// The reserve kept free for spill buffers assumes the widest fan-out
    /// (`spill_geometry`'s, 512 at the default limit), sized for a build
    /// side of hundreds of times the limit. Most builds that spill are a
    /// few times the limit, and a fan-out of 512 per participant then
    /// means thousands of small files, whose creation costs more than the
    /// rows they hold. So a participant asks for the fan-out the larger of
    /// two guesses of the build side needs (`first_fanout`): the planner's
    /// estimate, and four times what the table held when it spilled (the
    /// table filled with some share of the input; a quarter is the guess).
    /// A partition that still does not fit one participant's limit is split
    /// again by its real size when it is joined (`start_task`), at the cost
    /// of one more pass over that partition's rows.
    pub(super) fn spill_fanout(&self, wanted: usize) -> usize {
        match self.fanout.compare_exchange(0, wanted, Relaxed, Relaxed) {
            Ok(_) => wanted,
            Err(decided) => decided,
        }
    }

    pub(super) fn note_peak(&self, bytes: usize) {
        self.peak.fetch_max(bytes, Relaxed);
    }

    /// Whether `bytes` more of chunks fit: chunks, the slot array the rows
    /// so far need, the directory and the room kept for spill buffers.
    pub(super) fn may_allocate(
        &self,
        table: &SharedTable,
        bytes: usize,
        reserve: usize,
        limit: usize,
    ) -> bool {
        let rows = self.rows.load(Relaxed);
        let used =
            table.chunk_bytes() + bytes + SharedTable::slot_bytes(rows) + table.directory_bytes();
        if used + reserve > limit || self.spill.load(Relaxed) {
            return false;
        }
        self.note_peak(used + self.buffers.load(Relaxed));
        true
    }
}

impl HashJoin {
    /// Parallel Hash Join: loads this participant's share of the build input
    /// into its chunks of the shared table, then fills the slots with the
    /// others — or, if the table does not fit, partitions (see [`SharedBuild`]).
    pub(super) fn parallel_build(&mut self, shared: Arc<SharedBuild>) -> Result<()> {
        let mut input = self.inner.take().expect("build side consumed once");
        let (me, all) = (self.ctx.participant, shared.participants);
        let limit = self.limit * all;
        // Room for every participant's partition files, should they be needed.
        let reserve = all * self.fanout * self.buf;
        // By representation, as the probe side's `ProbeKeys` sees the keys:
        // a `date` key is an integer one, a `timestamp` a bigint one.
        let key_physical = physical(self.inner_keys[0].data_type());
        let int_key = self.inner_keys.len() == 1
            && matches!(
                key_physical,
                Physical::Int2 | Physical::Int4 | Physical::Int8 | Physical::Bool
            );
        let shape = TableShape {
            int_key,
            // `integer` and `boolean` keys are their own slot tags (see `slots`).
            exact: int_key
                && matches!(
                    key_physical,
                    Physical::Int2 | Physical::Int4 | Physical::Bool
                ),
            // A build row that is just its key needs no payload.
            key_only: (int_key
                && self.out.inner_types.len() == 1
                && matches!(self.inner_keys[0], Expr::Column { index: 0, .. }))
            .then(|| self.out.inner_types[0]),
        };
        let table = shared.table(&self.ctx, shape, limit, self.build_estimate)?;
        let mut writer = ChunkWriter::new();
        let mut parts: Option<Partitioner> = None;
        // The build rows of a batch in the spill encoding, row i ending at
        // ends[i]; for key-only tuples the batch's non-NULL keys.
        let (mut rows, mut ends, mut nonnull) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            let kv = eval_all(&self.inner_keys, &b)?;
            let (b, kv) = self.set_aside_null_inner(b, kv)?;
            if b.len == 0 {
                continue;
            }
            let keys = ProbeKeys::of(&kv, b.len);
            if let Some(f) = &self.key_filter {
                f.insert_keys(&kv, b.len);
            }
            let mut from = 0;
            if parts.is_none() && shape.key_only.is_some() {
                let ProbeKeys::Int(k) = &keys else {
                    unreachable!("key-only tables have integer keys")
                };
                nonnull.clear();
                nonnull.extend(k.iter().flatten());
                let mut may = |bytes| shared.may_allocate(&table, bytes, reserve, limit);
                let added = writer.insert_keys(&table, &nonnull, &mut may)?;
                shared.rows.fetch_add(added, Relaxed);
                if added == nonnull.len() {
                    continue;
                }
                shared.spill.store(true, Relaxed);
                // The rest of the batch goes to the partitions: from the
                // row of the first key not written.
                let mut seen = 0;
                from = k
                    .iter()
                    .position(|k| {
                        seen += k.is_some() as usize;
                        seen > added
                    })
                    .unwrap_or(b.len);
            } else if parts.is_none() {
                spill::encode_rows(&b, &mut rows, &mut ends);
                let mut added = 0;
                let mut may = |bytes| shared.may_allocate(&table, bytes, reserve, limit);
                while from < b.len {
                    let key = match &keys {
                        ProbeKeys::Int(k) => k[from].map(TupleKey::Int),
                        ProbeKeys::Bytes(k, arena) => k[from]
                            .as_ref()
                            .map(|(h, r)| TupleKey::Bytes(*h, &arena[r.clone()])),
                    };
                    if let Some(key) = key {
                        let row = &rows[if from == 0 { 0 } else { ends[from - 1] }..ends[from]];
                        if !writer.insert(&table, key, row, &mut may)? {
                            shared.spill.store(true, Relaxed);
                            break;
                        }
                        added += 1;
                    }
                    from += 1;
                }
                shared.rows.fetch_add(added, Relaxed);
                if from == b.len {
                    continue;
                }
            }
            let p = match &mut parts {
                Some(p) => p,
                None => parts.insert(self.spill_tuples(&shared, &table, &writer)?),
            };
            p.write_batch(&b, &keys, from)?;
        }
        // What the others need to know of this participant's build.
        shared.inner_rows.fetch_add(self.report.inner_rows, Relaxed);
        lock(&shared.extents).extend(writer.extents());
        if let Some(rows) = self.finish_null_inner()? {
            if nullaware::is_null_aware(self.kind()) {
                lock(&shared.null_inner).push(rows);
            } else {
                self.null_inner.push(rows);
            }
        }
        let match_bits = self.kind().marks_inner();
        if shared.phaser.wait()? {
            // Last to finish loading: every participant's build keys are
            // in the key filter (the barrier orders their bits before
            // this), and the probe sides may use it.
            if let Some(f) = &self.key_filter {
                f.publish();
            }
            // Does the whole table fit?
            let rows = shared.rows.load(Relaxed);
            let need = table.chunk_bytes()
                + SharedTable::slot_bytes(rows)
                + table.directory_bytes()
                + if match_bits {
                    table.match_bit_bytes()
                } else {
                    0
                };
            if !shared.spill.load(Relaxed) && need <= limit {
                table.publish(rows, match_bits)?;
                shared.note_peak(need);
            } else {
                shared.spill.store(true, Relaxed);
            }
            *shared.memory.lock().unwrap_or_else(|e| e.into_inner()) = Some(table.memory_report());
        }
        shared.phaser.wait()?;
        self.inner_nonempty = shared.inner_rows.load(Relaxed) > 0;
        if nullaware::is_null_aware(self.kind()) {
            self.null_inner = lock(&shared.null_inner).clone();
        }
        if shared.spill.load(Relaxed) {
            let parts = match parts {
                Some(p) => p,
                None => self.spill_tuples(&shared, &table, &writer)?,
            };
            drop(writer);
            drop(table);
            return self.parallel_partition(&shared, parts);
        }
        table.zero_slots(me, all);
        shared.phaser.wait()?;
        writer.link(&table, self.ctx.prefetch);
        shared.phaser.wait()?;
        self.report.buckets = table.view().index.len();
        self.report.table_peak = table.chunk_bytes() + table.view().index.len() * 8;
        if nullaware::needs_all_inner(self.kind(), self.outer_keys.len(), self.filter.is_some()) {
            self.all_inner = Some(AllInner::Shared(table.clone(), shared.all_extents()));
        }
        self.table = Some(Table::Shared(table));
        self.phase = Phase::Probe;
        self.source = ProbeSource::Outer;
        Ok(())
    }

    /// Starts this participant's build partitions and writes the tuples it
    /// has put into the shared table so far to them.
    pub(super) fn spill_tuples(
        &mut self,
        shared: &SharedBuild,
        table: &SharedTable,
        writer: &ChunkWriter,
    ) -> Result<Partitioner> {
        let held_bytes = table.chunk_bytes() as f64;
        let wanted = super::first_fanout(self.limit, self.expected_table.max(4.0 * held_bytes))
            .min(self.fanout);
        let fanout = shared.spill_fanout(wanted);
        let mut parts = Partitioner::new(fanout, 0, &self.ctx, self.buf)?;
        let held = shared.buffers.fetch_add(fanout * self.buf, Relaxed) + fanout * self.buf;
        shared.note_peak(
            table.chunk_bytes()
                + SharedTable::slot_bytes(shared.rows.load(Relaxed))
                + table.directory_bytes()
                + held,
        );
        let mut scratch = Vec::new();
        writer.for_each(table, |_, tuple| {
            let (hash, row) = ChunkWriter::hash_and_row(table, tuple, &mut scratch);
            parts.write_encoded(hash, row)
        })?;
        Ok(parts)
    }

    /// The parallel build did not fit: finishes this participant's build
    /// partitions, partitions its share of the probe input, and hands both
    /// to the others; then partitions are joined one by one (`next_task`).
    pub(super) fn parallel_partition(
        &mut self,
        shared: &SharedBuild,
        parts: Partitioner,
    ) -> Result<()> {
        let fanout = parts.writers.len();
        let inner_files = parts.finish()?;
        let mut parts = Partitioner::new(fanout, 0, &self.ctx, self.buf)?;
        while let Some(b) = self.next_outer()? {
            let kv = eval_all(&self.outer_keys, &b)?;
            let (b, kv) = self.set_aside_null_outer(b, kv)?;
            parts.write_batch(&b, &ProbeKeys::of(&kv, b.len), 0)?;
        }
        let outer_files = parts.finish()?;
        lock(&shared.files).push((inner_files, outer_files));
        if shared.phaser.wait()? {
            // Every participant has written its tuples out: the area can go.
            lock(&shared.table).take();
        }
        if nullaware::needs_all_inner(self.kind(), self.outer_keys.len(), self.filter.is_some()) {
            let files = lock(&shared.files)
                .iter()
                .flat_map(|(i, _)| i.clone())
                .collect();
            self.all_inner = Some(AllInner::Files(files));
        }
        self.report.levels = 1;
        self.report.fanout = fanout;
        self.report.batches = 0;
        self.report.peak = 0;
        self.phase = Phase::NextPartition;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::case;
    use crate::join_reference::{canonical, rows, run, scan, table};
    use crate::plan::{JoinKind, NodeKind};
    use crate::testing::{node, TestDb};

    /// A Parallel Hash Join's participants build one table: its rows equal
    /// the serial join's, and the Hash node's lines (written by the last
    /// participant to finish) tell the shared memory it used or the
    /// partitions all participants shared.
    #[test]
    fn participants_share_one_build() {
        let db = TestDb::new();
        let (o, ot) = table(&db, "o", &rows(20_000, 2_000, 0));
        let (i, it) = table(&db, "i", &rows(20_000, 2_000, 3));
        let c = case(JoinKind::Right, vec![], vec![], false);
        let serial = c.hash_plan(scan(o, "o", &ot, false), scan(i, "i", &it, false), false);
        let expected = canonical(&run(&serial, &db.ctx(4 << 20, 8)));
        for (work_mem, spills) in [(4 << 20, false), (32 << 10, true)] {
            let join = c.hash_plan(scan(o, "o", &ot, true), scan(i, "i", &it, true), true);
            let out = join.output.to_vec();
            let mut gather = node(NodeKind::Gather { workers: 2 }, vec![join], out);
            gather.assign_ids();
            let ctx = db.ctx(work_mem, 8);
            assert!(
                canonical(&run(&gather, &ctx)) == expected,
                "work_mem {work_mem}"
            );
            let stats = ctx.stats.as_ref().unwrap().borrow();
            // Gather 0, join 1, outer scan 2, Hash 3.
            let lines = stats[3].extra.join("\n");
            assert!(lines.contains("× 3 participants"), "{lines}");
            assert!(lines.contains("Chunk Size: 64kB"), "{lines}");
            assert_eq!(lines.contains("Partitions:"), spills, "{lines}");
            let gather_lines = stats[0].extra.join("\n");
            assert!(
                gather_lines.contains("Workers Launched: 2"),
                "{gather_lines}"
            );
        }
    }
}
