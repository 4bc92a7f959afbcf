//! Inner hash join that stays within its memory limit.
//!
//! ## In memory
//!
//! The build side (the plan's Hash child) is read into a hash table; then the
//! probe side streams through it batch by batch. Build row *r* owns entry *r*.
//! The entries are indexed by a *slot array* (`slots`): open addressing over
//! key *tags* — the key itself for `integer` and `boolean` keys, else 32 bits
//! of its hash — where each slot names the first entry of the chain of all
//! entries with its tag, and each entry links to the next. For a single
//! integer key an entry is `{key: i64, next: u32}`; other keys keep their hash
//! and an encoded byte key per entry. The slot count is a power of two at
//! least 4/3 of the row count. Rows with a NULL key are stored (so payload
//! row numbers stay aligned) but never inserted: NULLs never join.
//!
//! Probing is a software pipeline over a probe batch: each row's home slot is
//! prefetched a fixed distance ahead of its search, and (when the chain's
//! tuples will be read) the chain's first entry is prefetched ahead of its
//! walk, so the cache misses of many rows overlap (see [`ProbeState`]). With
//! exact tags a slot whose chain is one entry answers the probe alone: one
//! cache miss per probe row. A probe batch may produce any number of matches,
//! so the probe keeps a cursor (row and chain position) and stops each output
//! batch at a fixed size; a join with no output columns only counts matches.
//!
//! ## Memory limit and spilling
//!
//! The limit is `work_mem × hash_mem_multiplier`, and it covers everything
//! the join holds: entries, payload, the slot array it will need, and the
//! buffer of every open spill file. Whatever the input, the join's peak stays
//! within the limit plus one input batch (at most 2048 rows read before the
//! check) and one output batch.
//!
//! When the build side outgrows its budget (the limit minus room for the spill
//! buffers), the join becomes a *recursive hash partitioning* join:
//!
//! 1. The rows built so far and the rest of the build input are written to
//!    `F` partition files by bits of the key hash; then the probe input is
//!    written to `F` partition files by the same bits. NULL keys are dropped
//!    (they cannot match in an inner join). Only one side's `F` files are open
//!    at a time, each with a buffer of `B` bytes, where `B` = limit/1024
//!    clamped to 4–32 kB (8 kB at the default 8 MB limit, PostgreSQL's BufFile
//!    size) and `F` = the largest power of two with F·B ≤ limit/2, at most 1024.
//! 2. Each pair of partitions is then joined on its own: if the build
//!    partition fits, it is loaded into a table and the probe partition is
//!    streamed through it. If not, both are partitioned again, `F` ways, with
//!    fresh hash bits (the hash is re-mixed with a per-level salt).
//! 3. A partition that repartitioning cannot split (every row went to the same
//!    child: one key, or too few distinct hashes) is not split further. It is
//!    joined in chunks: as many build rows as fit are loaded, the whole probe
//!    partition is streamed through them, and so on for the next chunk. For an
//!    inner join the union of the chunks' matches is the join.
//!
//! ## Parallel Hash Join
//!
//! Under a Gather, all participants build one shared table in DSA chunks
//! (`shared_table`; phases and memory ordering there) and probe it with the
//! same code as the serial table (both implement [`Chains`]). Its limit is
//! `work_mem × hash_mem_multiplier × participants`; when the build does not
//! fit, every participant partitions its share of both inputs into its own
//! partition files and the participants then join the partitions one at a
//! time with the code above (see [`SharedBuild`]).
//!
//! ### Why not slices with overflow files
//!
//! PostgreSQL doubles the batch count as the build side grows and, under the
//! seed's proposal, groups batches into slices with one overflow file per
//! slice, to bound the number of open files; that writes the data about 2.2
//! times. Partitioning with a fan-out fixed by the memory limit writes every
//! row once per level, and one level suffices while the build side is smaller
//! than about F × limit (512 × 8 MB = 4 GB at the defaults); each further level
//! multiplies that by F. So the data is written once or twice — write
//! amplification ≤ 2 for builds up to F² × limit — with at most F files open,
//! and there is never a moment when thousands of file buffers exist.

mod partition;
mod probe;
mod report;
mod shared;
mod shared_table;
mod slots;
mod table;

pub use shared::SharedBuild;

use crate::error::Result;
use crate::expr::{eval_all, Expr};
use crate::operator::{apply_filter, ExecContext, Operator};
use crate::plan::{NodeKind, Plan};
use crate::spill::SPILL_BUFFER_SIZE;
use crate::vector::{Batch, Vector, BATCH_SIZE};
use partition::{BuildSource, Partitioner, ProbeSource, Task};
use probe::{PairCount, Pairs, ProbeKeys, ProbeState};
use report::Report;
use std::sync::Arc;
use table::{JoinTable, Table, TableBuilder};
use tusk_storage::DataType;

/// Most partition files open at once.
const MAX_FANOUT: usize = 1024;

/// Rows of an output batch with no columns (a count of matches).
const ZERO_WIDTH_BATCH: usize = 1 << 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Build,
    Probe,
    NextPartition,
    /// All output produced; EXPLAIN lines not yet written.
    Done,
    Reported,
}

pub struct HashJoin {
    outer: Box<dyn Operator>,
    inner: Option<Box<dyn Operator>>,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    outer_out: Vec<usize>,
    inner_out: Vec<usize>,
    outer_types: Vec<DataType>,
    inner_types: Vec<DataType>,
    join_filter: Option<Expr>,
    limit: usize,
    /// Spill file buffer size and partition fan-out for this limit.
    buf: usize,
    fanout: usize,
    phase: Phase,
    table: Option<Table>,
    probe: Option<ProbeState>,
    /// (probe row, build entry) pairs of the current output batch.
    pairs: (Vec<u32>, Vec<u32>),
    source: ProbeSource,
    tasks: Vec<Task>,
    /// The task being joined, with the rest of its build side when chunked.
    current: Option<(Task, Option<BuildSource>)>,
    report: Report,
    ctx: ExecContext,
    id: usize,
    hash_id: usize,
    /// The planner's estimate of the build side: rows and bytes per row.
    build_estimate: (usize, usize),
    /// Set for a Parallel Hash Join: the build all participants share.
    shared: Option<Arc<SharedBuild>>,
}

impl HashJoin {
    /// The shared state of Parallel Hash Join node `plan` for
    /// `participants` (created before they start).
    pub fn init_shared(_plan: &Plan, participants: usize) -> Arc<SharedBuild> {
        Arc::new(SharedBuild::new(participants))
    }

    /// The join of plan node `plan`, whose children are `outer` (the probe
    /// side) and `inner` (the input of its Hash node, the build side).
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        outer: Box<dyn Operator>,
        inner: Box<dyn Operator>,
    ) -> Result<HashJoin> {
        let NodeKind::HashJoin {
            kind,
            outer_keys,
            inner_keys,
            outer_out,
            inner_out,
            join_filter,
            parallel,
        } = &plan.kind
        else {
            unreachable!()
        };
        if *kind != crate::plan::JoinKind::Inner || outer_keys.is_empty() {
            return Err(crate::error::ExecError::coded(
                crate::error::sqlstate::FEATURE_NOT_SUPPORTED,
                "this hash join kind is not implemented yet",
            ));
        }
        let hash = &plan.children[1];
        let shared = if *parallel {
            Some(ctx.shared_state::<SharedBuild>(plan.id, "Parallel Hash Join")?)
        } else {
            None
        };
        let limit = ((ctx.work_mem as f64) * ctx.hash_mem_multiplier) as usize;
        // Spill buffers of 8 kB (PostgreSQL's BufFile size) at the default
        // limit, so that half the limit buys a fan-out of 512 and one level
        // of partitioning covers build sides of up to ~512 × the limit.
        let buf = (limit / 1024).clamp(4096, SPILL_BUFFER_SIZE);
        let fanout = ((limit / 2) / buf).max(2);
        let fanout = if fanout.is_power_of_two() {
            fanout
        } else {
            fanout.next_power_of_two() / 2
        }
        .min(MAX_FANOUT);
        Ok(HashJoin {
            outer,
            inner: Some(inner),
            outer_keys: outer_keys.clone(),
            inner_keys: inner_keys.clone(),
            outer_out: outer_out.clone(),
            inner_out: inner_out.clone(),
            outer_types: plan.children[0].output.clone(),
            inner_types: hash.children[0].output.clone(),
            join_filter: join_filter.clone(),
            limit,
            buf,
            fanout,
            phase: Phase::Build,
            table: None,
            probe: None,
            pairs: (Vec::new(), Vec::new()),
            source: ProbeSource::Outer,
            tasks: Vec::new(),
            current: None,
            report: Report {
                batches: 1,
                ..Default::default()
            },
            ctx: ctx.clone(),
            id: plan.id,
            hash_id: hash.id,
            build_estimate: (hash.est.rows.max(0.0) as usize, hash.est.width as usize),
            shared,
        })
    }

    fn note_memory(&mut self, extra: usize) {
        let table = match &self.table {
            Some(Table::Local(t)) => t.memory,
            _ => 0,
        };
        self.report.peak = self.report.peak.max(table + extra);
    }

    fn set_table(&mut self, t: JoinTable) {
        if self.report.original_buckets == 0 {
            self.report.original_buckets = t.index.len();
        }
        self.report.buckets = self.report.buckets.max(t.index.len());
        self.report.table_peak = self.report.table_peak.max(t.memory);
        self.table = Some(Table::Local(Arc::new(t)));
    }

    /// Reads the build side; joins in memory if it fits, else partitions both sides.
    fn build_phase(&mut self) -> Result<()> {
        if let Some(shared) = self.shared.clone() {
            return self.parallel_build(shared);
        }
        let mut input = self.inner.take().expect("build side consumed once");
        let budget = self.limit.saturating_sub(self.fanout * self.buf);
        let mut builder = TableBuilder::new(&self.inner_types);
        let mut overflow: Option<Batch> = None;
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            if builder.memory_after(&b) > budget {
                overflow = Some(b);
                break;
            }
            let kv = eval_all(&self.inner_keys, &b)?;
            builder.add(&b, &kv);
            self.report.peak = self.report.peak.max(builder.memory());
        }
        let Some(first_unbuilt) = overflow else {
            let t = builder.finish(self.ctx.prefetch);
            self.set_table(t);
            self.note_memory(0);
            self.phase = Phase::Probe;
            self.source = ProbeSource::Outer;
            return Ok(());
        };
        // Spill: what was built, then the rest of the build input, then the probe input.
        self.report.levels = 1;
        self.report.fanout = self.fanout;
        self.report.original_buckets = builder.slot_count();
        let mut parts = Partitioner::new(self.fanout, 0, &self.ctx, self.buf)?;
        self.report.peak = self
            .report
            .peak
            .max(builder.memory() + self.fanout * self.buf);
        for i in 0..builder.rows() {
            if let Some(h) = builder.hash_of(i) {
                parts.write(h, &builder.payload, i)?;
            }
        }
        drop(builder);
        let write_batch = |parts: &mut Partitioner, b: &Batch, keys: &[Expr]| -> Result<()> {
            let kv = eval_all(keys, b)?;
            parts.write_batch(b, &ProbeKeys::of(&kv, b.len), 0)
        };
        let inner_keys = self.inner_keys.clone();
        write_batch(&mut parts, &first_unbuilt, &inner_keys)?;
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            write_batch(&mut parts, &b, &inner_keys)?;
        }
        let inner_files = parts.finish()?;
        let mut parts = Partitioner::new(self.fanout, 0, &self.ctx, self.buf)?;
        let outer_keys = self.outer_keys.clone();
        while let Some(b) = self.outer.next()? {
            write_batch(&mut parts, &b, &outer_keys)?;
        }
        let outer_files = parts.finish()?;
        self.report.batches = 0;
        for (inner, outer) in inner_files.into_iter().zip(outer_files).rev() {
            self.tasks.push(Task {
                inner: vec![inner],
                outer: vec![outer],
                level: 0,
                chunked: false,
            });
        }
        self.phase = Phase::NextPartition;
        Ok(())
    }
}

impl Operator for HashJoin {
    fn next(&mut self) -> Result<Option<Batch>> {
        // Zero-width output (count(*) over a join) needs only the number of
        // matches: no pairs, no gathering, and much larger batches.
        let zero_width =
            self.outer_out.is_empty() && self.inner_out.is_empty() && self.join_filter.is_none();
        loop {
            match self.phase {
                Phase::Build => {
                    let start = std::time::Instant::now();
                    self.build_phase()?;
                    if let Some(stats) = &self.ctx.stats {
                        let mut s = stats.borrow_mut();
                        let h = &mut s[self.hash_id];
                        h.loops = 1;
                        h.total = start.elapsed();
                        h.first_row = Some(h.total);
                        h.rows = self.report.inner_rows;
                    }
                }
                Phase::NextPartition => match self.next_task() {
                    Some(t) => self.start_task(t)?,
                    None => self.phase = Phase::Done,
                },
                Phase::Done => {
                    self.finish_report();
                    self.phase = Phase::Reported;
                    return Ok(None);
                }
                Phase::Reported => return Ok(None),
                Phase::Probe => {
                    if self.probe.as_ref().is_none_or(|p| p.done()) {
                        let table = self.table.as_ref().unwrap();
                        if table.linked() == 0 {
                            self.probe = None;
                            self.probe_source_done()?;
                            continue;
                        }
                        match self.next_probe_batch()? {
                            Some(b) => {
                                let kv = eval_all(&self.outer_keys, &b)?;
                                let keys = ProbeKeys::of(&kv, b.len);
                                let table = self.table.as_ref().unwrap();
                                let prefetch = self.ctx.prefetch;
                                let old = self.probe.take();
                                self.probe = Some(match table {
                                    Table::Local(t) => {
                                        ProbeState::new(&**t, b, keys, prefetch, old)
                                    }
                                    Table::Shared(t) => {
                                        ProbeState::new(&t.view(), b, keys, prefetch, old)
                                    }
                                });
                            }
                            None => {
                                self.probe = None;
                                self.probe_source_done()?;
                                continue;
                            }
                        }
                    }
                    let table = self.table.as_ref().unwrap();
                    let st = self.probe.as_mut().unwrap();
                    if zero_width {
                        let mut count = PairCount {
                            n: 0,
                            limit: ZERO_WIDTH_BATCH,
                        };
                        match table {
                            Table::Local(t) => st.pairs(&**t, &mut count),
                            Table::Shared(t) => st.pairs(&t.view(), &mut count),
                        }
                        if count.n == 0 {
                            continue;
                        }
                        return Ok(Some(Batch::new(Vec::new(), count.n)));
                    }
                    // The pair buffers live across calls.
                    let (oi, ii) = &mut self.pairs;
                    oi.clear();
                    ii.clear();
                    let mut sink = Pairs {
                        outer: oi,
                        inner: ii,
                        limit: BATCH_SIZE,
                    };
                    match table {
                        Table::Local(t) => st.pairs(&**t, &mut sink),
                        Table::Shared(t) => st.pairs(&t.view(), &mut sink),
                    }
                    if oi.is_empty() {
                        continue;
                    }
                    let out = match &self.join_filter {
                        None => {
                            let mut cols: Vec<Vector> = self
                                .outer_out
                                .iter()
                                .map(|&c| st.batch.columns[c].gather(oi))
                                .collect();
                            cols.extend(table.gather(&self.inner_types, &self.inner_out, ii));
                            Batch::new(cols, oi.len())
                        }
                        Some(f) => {
                            let nouter = st.batch.columns.len();
                            let mut cols: Vec<Vector> =
                                st.batch.columns.iter().map(|c| c.gather(oi)).collect();
                            let all: Vec<usize> = (0..self.inner_types.len()).collect();
                            cols.extend(table.gather(&self.inner_types, &all, ii));
                            let (full, removed) = apply_filter(Batch::new(cols, oi.len()), f)?;
                            self.ctx.add_removed(self.id, removed);
                            let mut keep: Vec<Vector> = self
                                .outer_out
                                .iter()
                                .map(|&c| full.columns[c].clone())
                                .collect();
                            keep.extend(
                                self.inner_out
                                    .iter()
                                    .map(|&c| full.columns[nouter + c].clone()),
                            );
                            Batch::new(keep, full.len)
                        }
                    };
                    if out.len > 0 {
                        return Ok(Some(out));
                    }
                }
            }
        }
    }
}
