//! Hash join, of every join kind, that stays within its memory limit.
//!
//! | module | what |
//! |---|---|
//! | `table`, `slots` | the serial table: entries, slot array, builder |
//! | `probe` | the prefetching probe pipeline and its pair sinks |
//! | `outer` | what becomes of each probe row by join kind; NULL keys |
//! | `unmatched` | right and full joins: inner rows no probe row matched |
//! | `nullaware` | the NULL rules of a null-aware mark join (`x IN (...)`) |
//! | `partition` | spilling: recursive hash partitioning |
//! | `shared`, `shared_table` | the Parallel Hash Join's shared build |
//! | `report` | EXPLAIN ANALYZE lines |
//!
//! ## Join kinds
//!
//! The outer input (first child) is the probe side, the Hash node's child
//! the build side; a pair matches when every key is equal (NULL equals
//! nothing) and the join filter is true, and the output is
//! `plan::JoinKind`'s. Inner, left, right and full joins emit each matching
//! pair as it is found. Every probe batch keeps a state per row (no match,
//! matched, or — for a null-aware mark — condition NULL for some pair), and
//! when the batch has been probed its rows are emitted by kind: unmatched
//! rows NULL-extended (left, full), matched rows (semi), unmatched rows
//! (anti), every row with its mark (mark); see `outer`. Semi, anti and mark
//! joins without a join filter stop walking a chain at its first match.
//! Right and full joins set a match bit per build row; once the probe side
//! is done the rows whose bit is clear are emitted NULL-extended (see
//! `unmatched`). Right semi and right anti joins (`EXISTS` / `NOT EXISTS`
//! with the preserved side built, where the planner chooses it) emit no pairs
//! at all: probing only sets the bits of every matching build row — all of
//! a probe row's matches, not the first — and at the end the build rows
//! whose bit is set (right semi) or clear (right anti) are emitted, alone.
//!
//! Rows whose key is NULL never enter the table or the partition files:
//! build rows with a NULL key go to a side store (emitted as unmatched by
//! right and full joins; kept for the NULL rules of a null-aware mark;
//! dropped otherwise), and probe rows with a NULL key are emitted as
//! unmatched where the kind keeps them (in a spilling join they are set aside
//! the same way and emitted at the end).
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
//! least 4/3 of the row count.
//!
//! Probing is a software pipeline over a probe batch: each row's home slot is
//! prefetched a fixed distance ahead of its search, and (when the chain's
//! tuples will be read) the chain's first entry is prefetched ahead of its
//! walk, so the cache misses of many rows overlap (see `probe::ProbeState`). With
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
//! check) and one output batch, plus what kinds other than inner add: the
//! side stores of NULL-key rows (each keeps at most limit/16 in memory, then
//! spills), the match bits of right, full, right semi and right anti joins
//! (one per build row, counted in the table), and in a chunked partition
//! two bits per probe row.
//!
//! When the build side outgrows its budget (the limit minus room for the spill
//! buffers), the join becomes a *recursive hash partitioning* join:
//!
//! 1. The rows built so far and the rest of the build input are written to
//!    `F` partition files by bits of the key hash; then the probe input is
//!    written to `F` partition files by the same bits (rows with NULL keys
//!    go to the side stores above). Only one side's `F` files are open
//!    at a time, each with a buffer of `B` bytes, where `B` = limit/1024
//!    clamped to 4–32 kB (8 kB at the default 8 MB limit, PostgreSQL's BufFile
//!    size). The serial join's `F` is sized from the planner's estimate of the
//!    table (the Hash node's rows and width, by [`estimated_table_bytes`]), as
//!    PostgreSQL sizes its batches: the fewest partitions, a power of two of
//!    at least 2, each expected to fill at most half of what a partition may
//!    load; so the table may grow to the limit less F·B ([`build_budget`],
//!    which the planner uses to cost the join), nearly the whole limit when
//!    it is expected to fit. The most `F` can be (and the Parallel Hash
//!    Join's `F`) is the largest power of two with F·B ≤ limit/2, at most 1024.
//! 2. Each pair of partitions is then joined on its own: if the build
//!    partition fits, it is loaded into a table and the probe partition is
//!    streamed through it. If not, both are partitioned again, `F` ways, with
//!    fresh hash bits (the hash is re-mixed with a per-level salt).
//! 3. A partition that repartitioning cannot split (every row went to the same
//!    child: one key, or too few distinct hashes) is not split further. It is
//!    joined in chunks: as many build rows as fit are loaded, the whole probe
//!    partition is streamed through them, and so on for the next chunk. For an
//!    inner join the union of the chunks' matches is the join; the other kinds
//!    keep each probe row's state across the chunks (by its position in the
//!    probe partition, which every chunk reads in the same order) and emit
//!    what depends on it during the last chunk's pass.
//!
//! ## Parallel Hash Join
//!
//! Under a Gather, all participants build one shared table in DSA chunks
//! (`shared_table`; phases and memory ordering there) and probe it with the
//! same code as the serial table (both implement `table::Chains`). Its limit is
//! `work_mem × hash_mem_multiplier × participants`; when the build does not
//! fit, every participant partitions its share of both inputs into its own
//! partition files and the participants then join the partitions one at a
//! time with the code above (see [`SharedBuild`]). Every kind runs in
//! parallel (`JoinKind::parallel_safe`): each probe row is probed by one
//! participant against the whole table; a right, full, right semi or right
//! anti join sets match bits in the shared table, and the last participant
//! to finish probing emits the unmatched (right semi: matched) build rows
//! (no participant waits for the others after it has sent rows); the side
//! stores of a null-aware mark join are shared by all participants.
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

mod nullaware;
mod outer;
mod partition;
mod probe;
mod report;
mod shared;
mod shared_table;
mod slots;
mod table;
#[cfg(test)]
mod tests;
mod unmatched;

pub use shared::SharedBuild;
pub use table::estimated_table_bytes;

/// The hash of each of the `n` rows of key vectors `kv`, as the join's
/// tables hash them (`None`: a NULL key); see `keyfilter`.
pub(crate) fn key_hashes(kv: &[Vector], n: usize) -> Vec<Option<u64>> {
    let keys = ProbeKeys::of(kv, n);
    (0..n).map(|i| keys.hash(i)).collect()
}

use crate::error::{ExecError, Result};
use crate::expr::{eval_all, Expr};
use crate::join::{JoinOutput, PairFilter};
use crate::keyfilter::KeyFilter;
use crate::operator::{ExecContext, Operator};
use crate::plan::{JoinKind, NodeKind, Plan};
use crate::rowstore::{RowStore, StoredRows};
use crate::spill::{SpillFile, SPILL_BUFFER_SIZE};
use crate::vector::{Batch, Vector, BATCH_SIZE};
use nullaware::AllInner;
use outer::ChunkStates;
use partition::{BuildSource, Partitioner, ProbeSource, Task};
use probe::{FirstPairs, PairCount, PairSink, Pairs, ProbeKeys, ProbeState};
use report::Report;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use table::{JoinTable, Table, TableBuilder};
use tusk_storage::DataType;
use unmatched::UnmatchedScan;

/// Most partition files open at once.
const MAX_FANOUT: usize = 1024;

/// Rows of an output batch with no columns (a count of matches).
const ZERO_WIDTH_BATCH: usize = 1 << 16;

/// The serial join's spill-file buffer size and partition fan-out under
/// memory limit `limit`: buffers of 8 kB (PostgreSQL's BufFile size) at the
/// default limit, so that half the limit buys a fan-out of 512 and one
/// level of partitioning covers build sides of up to ~512 × the limit.
fn spill_geometry(limit: usize) -> (usize, usize) {
    let buf = (limit / 1024).clamp(4096, SPILL_BUFFER_SIZE);
    let fanout = ((limit / 2) / buf).max(2);
    let fanout = if fanout.is_power_of_two() {
        fanout
    } else {
        fanout.next_power_of_two() / 2
    }
    .min(MAX_FANOUT);
    (buf, fanout)
}

/// The fan-out of a serial join's first partitioning under memory limit
/// `limit`, from the planner's estimate of its table (`expected` bytes, by
/// [`estimated_table_bytes`]): the fewest partitions, a power of two from
/// 2 to `spill_geometry`'s fan-out, of which each is expected to fill at
/// most half of what a partition may load (the limit less two buffers),
/// as the recursive levels size theirs (`partition`). So a table expected
/// to fit reserves the buffers of two files only and may take nearly the
/// whole limit, and only a large one reserves a wide fan-out's. A table
/// larger than expected partitions again, by its real size, at the next
/// level.
fn first_fanout(limit: usize, expected: f64) -> usize {
    let (buf, max) = spill_geometry(limit);
    let room = limit.saturating_sub(2 * buf).max(1) as f64;
    let parts = (2.0 * expected / room).ceil();
    if parts.is_nan() || parts >= max as f64 {
        return max;
    }
    (parts as usize).next_power_of_two().clamp(2, max)
}

/// The bytes a serial join under memory limit `limit` lets its table hold
/// before it spills, when the planner expects the table to take `expected`
/// bytes: the limit less the buffers of the partition files it would open
/// ([`first_fanout`]). The planner compares a build side's
/// [`estimated_table_bytes`] with this to know whether the join spills.
pub fn build_budget(limit: usize, expected: f64) -> usize {
    let (buf, _) = spill_geometry(limit);
    limit.saturating_sub(first_fanout(limit, expected) * buf)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Build,
    Probe,
    /// Right and full joins: the current table's unmatched build rows.
    UnmatchedInner,
    NextPartition,
    /// The side stores: NULL-key rows set aside (see `outer`, `unmatched`).
    Finish,
    /// All output produced; EXPLAIN lines not yet written.
    Done,
    Reported,
}

pub struct HashJoin {
    outer: Box<dyn Operator>,
    inner: Option<Box<dyn Operator>>,
    out: JoinOutput,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    filter: Option<PairFilter>,
    limit: usize,
    /// Spill file buffer size and the widest partition fan-out for this
    /// limit (the Parallel Hash Join's, and the most a recursive level
    /// takes).
    buf: usize,
    fanout: usize,
    /// The serial join's first fan-out, from the planner's estimate of
    /// the table ([`first_fanout`]).
    first_fanout: usize,
    /// The planner's estimate of the table's bytes
    /// ([`estimated_table_bytes`]).
    expected_table: f64,
    phase: Phase,
    table: Option<Table>,
    probe: Option<ProbeState>,
    /// The current probe batch has been probed to its end and its rows
    /// emitted by kind.
    probe_finished: bool,
    /// Per row of the probe batch: `outer::NONE`, `NULL_SEEN` or `MATCHED`.
    row_state: Vec<u8>,
    /// (probe row, build entry) pairs of the current output batch.
    pairs: (Vec<u32>, Vec<u32>),
    source: ProbeSource,
    tasks: Vec<Task>,
    /// The task being joined, with the rest of its build side when chunked.
    current: Option<(Task, Option<BuildSource>)>,
    /// A chunked partition's probe-row states across its chunks.
    chunk_states: Option<ChunkStates>,
    /// Build rows with a NULL key, while reading the build side (see
    /// `unmatched` and `nullaware`)...
    null_inner_store: Option<RowStore>,
    /// ... and once read: this participant's for a right or full join,
    /// every participant's for a null-aware mark.
    null_inner: Vec<Arc<StoredRows>>,
    /// Probe rows set aside to be emitted at the end (see `outer`).
    null_outer: Option<RowStore>,
    /// Whether the build side has any row (all participants'); a null-aware
    /// mark join needs to know.
    inner_nonempty: bool,
    /// Where a null-aware mark join finds every build row (see `nullaware`).
    all_inner: Option<AllInner>,
    /// Level-0 build partitions, kept for `all_inner` when it needs them.
    inner_files: Vec<Arc<SpillFile>>,
    unmatched: Option<UnmatchedScan>,
    finish: Option<outer::Finish>,
    ready: VecDeque<Batch>,
    report: Report,
    ctx: ExecContext,
    id: usize,
    hash_id: usize,
    /// The planner's estimate of the build side: rows and bytes per row.
    build_estimate: (usize, usize),
    /// Set for a Parallel Hash Join: the build all participants share.
    shared: Option<Arc<SharedBuild>>,
    /// The probe side's first batch, read before the build side (see
    /// `read_first_outer`) and probed first.
    first_outer: Option<Batch>,
    /// Whether the join reads the probe side's first batch before building
    /// (see `peeks_outer_first`).
    peek_outer: bool,
    /// A data error reading that first batch raised, held until the probe
    /// side is read again (see `read_first_outer`).
    deferred_outer_error: Option<ExecError>,
    /// Whether such an error may be held: not when the probe side has a
    /// Parallel Hash Join (see `holds_probe_errors`).
    may_hold_outer_error: bool,
    /// Whether the probe side raises its data errors in row order (see
    /// `errors_in_row_order`), so that an error from its first batch came
    /// before any row that passes.
    row_order_errors: bool,
    /// The filter of build keys this join fills for the columnar scan
    /// below it (see `keyfilter`).
    key_filter: Option<Arc<KeyFilter>>,
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
        if outer_keys.is_empty() || outer_keys.len() != inner_keys.len() {
            return Err(ExecError::new(format!(
                "a hash join needs equal numbers of outer and inner keys, at least one (has {} and {}); a join without keys is a nested loop",
                outer_keys.len(),
                inner_keys.len()
            )));
        }
        let hash = &plan.children[1];
        let out = JoinOutput::checked(
            *kind,
            outer_out,
            inner_out,
            &plan.children[0].output,
            &hash.children[0].output,
        )?;
        if !*parallel && ctx.parallel.is_some() && kind.marks_inner() {
            // Every participant would build the whole table and emit its
            // unmatched (or matched) rows.
            return Err(ExecError::new(
                "a right, full, right semi or right anti hash join below a Gather must be a Parallel Hash Join",
            ));
        }
        let shared = if *parallel {
            Some(ctx.shared_state::<SharedBuild>(plan.id, "Parallel Hash Join")?)
        } else {
            None
        };
        let limit = ((ctx.work_mem as f64) * ctx.hash_mem_multiplier) as usize;
        let (buf, fanout) = spill_geometry(limit);
        let key_types: Vec<DataType> = inner_keys.iter().map(Expr::data_type).collect();
        let expected = estimated_table_bytes(hash.est.rows, f64::from(hash.est.width), &key_types);
        let peek_outer = peeks_outer_first(*kind, &plan.children[0], hash);
        let key_filter = key_filter_for(plan, ctx, *kind, *parallel, limit);
        Ok(HashJoin {
            outer,
            inner: Some(inner),
            filter: join_filter
                .as_ref()
                .map(|f| PairFilter::new(f, out.outer_types.len())),
            out,
            outer_keys: outer_keys.clone(),
            inner_keys: inner_keys.clone(),
            limit,
            buf,
            fanout,
            first_fanout: first_fanout(limit, expected),
            expected_table: expected,
            phase: Phase::Build,
            table: None,
            probe: None,
            probe_finished: true,
            row_state: Vec::new(),
            pairs: (Vec::new(), Vec::new()),
            source: ProbeSource::Outer,
            tasks: Vec::new(),
            current: None,
            chunk_states: None,
            null_inner_store: None,
            null_inner: Vec::new(),
            null_outer: None,
            inner_nonempty: false,
            all_inner: None,
            inner_files: Vec::new(),
            unmatched: None,
            finish: None,
            ready: VecDeque::new(),
            report: Report {
                batches: 1,
                ..Default::default()
            },
            ctx: ctx.clone(),
            id: plan.id,
            hash_id: hash.id,
            build_estimate: (hash.est.rows.max(0.0) as usize, hash.est.width as usize),
            shared,
            first_outer: None,
            peek_outer,
            deferred_outer_error: None,
            may_hold_outer_error: holds_probe_errors(&plan.children[0]),
            row_order_errors: errors_in_row_order(&plan.children[0]),
            key_filter,
        })
    }

    /// Sets the key filter's bits for build keys `kv` (`n` rows).
    fn filter_build_keys(&self, kv: &[Vector], n: usize) {
        if let Some(f) = &self.key_filter {
            f.insert_keys(kv, n);
        }
    }

    /// Every build key of this (serial) join is in the key filter.
    fn publish_key_filter(&self) {
        if let Some(f) = &self.key_filter {
            f.publish();
        }
    }

    fn kind(&self) -> JoinKind {
        self.out.kind
    }

    fn note_memory(&mut self, extra: usize) {
        let table = match &self.table {
            Some(Table::Local(t)) => t.memory,
            _ => 0,
        };
        let stores = self.null_inner_store.as_ref().map_or(0, |s| s.memory())
            + self.null_outer.as_ref().map_or(0, |s| s.memory());
        self.report.peak = self.report.peak.max(table + extra + stores);
    }

    fn set_table(&mut self, t: JoinTable) {
        if self.report.original_buckets == 0 {
            self.report.original_buckets = t.index.len();
        }
        self.report.buckets = self.report.buckets.max(t.index.len());
        self.report.table_peak = self.report.table_peak.max(t.memory);
        self.table = Some(Table::Local(Arc::new(t)));
        self.unmatched = None;
    }

    /// Budget of each side store (NULL-key rows) before it spills.
    fn store_budget(&self) -> usize {
        self.limit / 16
    }

    /// Separates the build rows of `b` whose key (`kv`) is NULL: they go to
    /// the side store when the kind needs them (see the module doc); the
    /// other rows are returned.
    fn set_aside_null_inner(&mut self, b: Batch, kv: Vec<Vector>) -> Result<(Batch, Vec<Vector>)> {
        let Some((nulls, rest)) = outer::split_null_keys(&b, &kv) else {
            return Ok((b, kv));
        };
        if self.kind().keeps_unmatched_inner() || nullaware::is_null_aware(self.kind()) {
            let budget = self.store_budget();
            let store = self
                .null_inner_store
                .get_or_insert_with(|| RowStore::new(&self.out.inner_types, budget, &self.ctx));
            store.push(b.gather(&nulls))?;
        }
        let kept = b.gather(&rest);
        let kv = kv.iter().map(|v| v.gather(&rest)).collect();
        Ok((kept, kv))
    }

    /// Sets probe rows with a NULL key aside for the end, where the kind
    /// keeps them; returns the rows to partition.
    fn set_aside_null_outer(&mut self, b: Batch, kv: Vec<Vector>) -> Result<(Batch, Vec<Vector>)> {
        let Some((nulls, rest)) = outer::split_null_keys(&b, &kv) else {
            return Ok((b, kv));
        };
        if self.kind().keeps_unmatched_outer() {
            self.null_outer_store().push(b.gather(&nulls))?;
        }
        let kept = b.gather(&rest);
        let kv = kv.iter().map(|v| v.gather(&rest)).collect();
        Ok((kept, kv))
    }

    fn null_outer_store(&mut self) -> &mut RowStore {
        let budget = self.store_budget();
        self.null_outer
            .get_or_insert_with(|| RowStore::new(&self.out.outer_types, budget, &self.ctx))
    }

    /// This participant has read its build input: its NULL-key build rows
    /// become readable.
    fn finish_null_inner(&mut self) -> Result<Option<Arc<StoredRows>>> {
        self.null_inner_store
            .take()
            .map(|s| s.finish().map(Arc::new))
            .transpose()
    }

    /// Reads the probe side's first non-empty batch before anything of the
    /// build side (when `peeks_outer_first` says so); false when the probe
    /// side is empty, so the join ends without ever running its build side.
    /// The order is visible: an error the build side would raise (a
    /// division by zero in its scan, say) is not raised when the probe side
    /// is empty.
    ///
    /// In a Parallel Hash Join each participant reads the first batch of
    /// its share, and the participants agree (one phaser wait) that the
    /// probe side is empty only when every share is: the join then ends
    /// for all of them, and the build is skipped as the serial join skips
    /// it. (PostgreSQL's Parallel Hash Join always builds; its serial join,
    /// which the same query runs without parallelism, does not — tusk
    /// gives the serial join's answer under either plan.)
    ///
    /// PostgreSQL reads one probe row here, tusk a batch. A probe side
    /// that raises data errors in row order (a scan or Filter, see
    /// [`errors_in_row_order`]) returns the rows before a failing one
    /// first, so an error from its first batch is the one PostgreSQL's
    /// first fetch raises, and it is raised. In a Parallel Hash Join such
    /// an error is raised only when no participant found a probe row
    /// (PostgreSQL's serial join over a table of one page: its first fetch
    /// meets the error before any row that passes); else it is held like
    /// the next case.
    ///
    /// Any other probe side may have raised a data error (SQLSTATE class
    /// 22: a division by zero, an overflow) in a row after the first, which
    /// PostgreSQL would not have reached yet. Such an error is held
    /// instead, the probe side counts as not empty, and the error is
    /// raised when the probe side is read again — never, when the build
    /// side turns out empty and the join ends there, as in PostgreSQL.
    /// Only where no other participant can be waiting for this one to go
    /// on: see [`holds_probe_errors`].
    fn read_first_outer(&mut self) -> Result<bool> {
        let mut first_row_error = None;
        loop {
            match self.outer.next() {
                Ok(Some(b)) if b.len == 0 => continue,
                Ok(Some(b)) => self.first_outer = Some(b),
                Ok(None) => {}
                Err(e) if !e.code.starts_with("22") || !self.may_hold_outer_error => return Err(e),
                Err(e) if self.row_order_errors && self.shared.is_none() => return Err(e),
                Err(e) if self.row_order_errors => first_row_error = Some(e),
                Err(e) => self.deferred_outer_error = Some(e),
            }
            break;
        }
        let nonempty = self.first_outer.is_some() || self.deferred_outer_error.is_some();
        let Some(shared) = &self.shared else {
            return Ok(nonempty);
        };
        if nonempty {
            shared.outer_nonempty.store(true, Relaxed);
        }
        // The phaser orders every participant's store before the loads.
        shared.phaser.wait()?;
        let any_rows = shared.outer_nonempty.load(Relaxed);
        match first_row_error {
            Some(e) if !any_rows => Err(e),
            held => {
                self.deferred_outer_error = held;
                Ok(any_rows)
            }
        }
    }

    /// The next batch of the probe input itself: the one read ahead of the
    /// build first.
    pub(super) fn next_outer(&mut self) -> Result<Option<Batch>> {
        if let Some(e) = self.deferred_outer_error.take() {
            return Err(e);
        }
        match self.first_outer.take() {
            Some(b) => Ok(Some(b)),
            None => self.outer.next(),
        }
    }

    /// Reads the build side; joins in memory if it fits, else partitions both sides.
    fn build_phase(&mut self) -> Result<()> {
        if let Some(shared) = self.shared.clone() {
            return self.parallel_build(shared);
        }
        let mut input = self.inner.take().expect("build side consumed once");
        let budget = self.limit.saturating_sub(self.first_fanout * self.buf);
        let mut builder = TableBuilder::new(&self.out.inner_types);
        let mut overflow: Option<(Batch, Vec<Vector>)> = None;
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            let kv = eval_all(&self.inner_keys, &b)?;
            let (b, kv) = self.set_aside_null_inner(b, kv)?;
            self.filter_build_keys(&kv, b.len);
            if builder.memory_after(&b) > budget {
                overflow = Some((b, kv));
                break;
            }
            builder.add(&b, &kv);
            self.report.peak = self.report.peak.max(builder.memory());
        }
        let Some((first_unbuilt, first_kv)) = overflow else {
            self.publish_key_filter();
            self.inner_nonempty = self.report.inner_rows > 0;
            let rows = self.finish_null_inner()?;
            self.null_inner.extend(rows);
            let t = builder.finish(self.ctx.prefetch, self.kind().marks_inner());
            self.set_table(t);
            if let Some(Table::Local(t)) = &self.table {
                self.all_inner = AllInner::local(self, t.clone());
            }
            self.note_memory(0);
            self.phase = Phase::Probe;
            self.source = ProbeSource::Outer;
            return Ok(());
        };
        // Spill: what was built, then the rest of the build input, then the probe input.
        self.report.levels = 1;
        self.report.fanout = self.first_fanout;
        self.report.original_buckets = builder.slot_count();
        let mut parts = Partitioner::new(self.first_fanout, 0, &self.ctx, self.buf)?;
        self.report.peak = self
            .report
            .peak
            .max(builder.memory() + self.first_fanout * self.buf);
        for i in 0..builder.rows() {
            if let Some(h) = builder.hash_of(i) {
                parts.write(h, &builder.payload, i)?;
            }
        }
        drop(builder);
        parts.write_batch(
            &first_unbuilt,
            &ProbeKeys::of(&first_kv, first_unbuilt.len),
            0,
        )?;
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            let kv = eval_all(&self.inner_keys, &b)?;
            let (b, kv) = self.set_aside_null_inner(b, kv)?;
            self.filter_build_keys(&kv, b.len);
            parts.write_batch(&b, &ProbeKeys::of(&kv, b.len), 0)?;
        }
        // The probe side, read next, is filtered from here on.
        self.publish_key_filter();
        self.inner_nonempty = self.report.inner_rows > 0;
        let rows = self.finish_null_inner()?;
        self.null_inner.extend(rows);
        let inner_files = parts.finish()?;
        let mut parts = Partitioner::new(self.first_fanout, 0, &self.ctx, self.buf)?;
        while let Some(b) = self.next_outer()? {
            let kv = eval_all(&self.outer_keys, &b)?;
            let (b, kv) = self.set_aside_null_outer(b, kv)?;
            parts.write_batch(&b, &ProbeKeys::of(&kv, b.len), 0)?;
        }
        self.note_memory(self.first_fanout * self.buf);
        let outer_files = parts.finish()?;
        if nullaware::needs_all_inner(self.kind(), self.outer_keys.len(), self.filter.is_some()) {
            self.inner_files = inner_files.clone();
            self.all_inner = Some(AllInner::Files(inner_files.clone()));
        }
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

    /// Starts probing the next batch from the probe source; false when the
    /// source is done.
    fn next_probe(&mut self) -> Result<bool> {
        let table = self.table.as_ref().expect("a table to probe");
        if table.linked() == 0 && !self.kind().keeps_unmatched_outer() {
            return Ok(false);
        }
        let Some(b) = self.next_probe_batch()? else {
            return Ok(false);
        };
        let kv = if nullaware::is_null_aware(self.kind()) && !self.inner_nonempty {
            // A null-aware mark join is PostgreSQL's hashed SubPlan, which
            // answers false over an empty subquery without evaluating its
            // left side: the keys are computed for no row.
            let idle = vec![false; b.len];
            self.outer_keys
                .iter()
                .map(|e| e.eval_active(&b, Some(&idle)))
                .collect::<Result<Vec<_>>>()?
        } else {
            eval_all(&self.outer_keys, &b)?
        };
        let keys = ProbeKeys::of(&kv, b.len);
        let table = self.table.as_ref().expect("a table to probe");
        let prefetch = self.ctx.prefetch;
        let old = self.probe.take();
        self.row_state.clear();
        if self.kind() != JoinKind::Inner {
            self.row_state.resize(b.len, outer::NONE);
        }
        self.probe = Some(match table {
            Table::Local(t) => ProbeState::new(&**t, b, keys, prefetch, old),
            Table::Shared(t) => ProbeState::new(&t.view(), b, keys, prefetch, old),
        });
        self.probe_finished = false;
        Ok(true)
    }

    /// Probes on from where the current batch stands; returns a batch of
    /// output pairs, if any.
    fn probe_step(&mut self) -> Result<Option<Batch>> {
        let kind = self.kind();
        let table = self.table.as_ref().expect("a table to probe");
        let st = self.probe.as_mut().expect("a probe batch");
        // Zero-width output (count(*) over a join) needs only the number of
        // matches: no pairs, no gathering, and much larger batches.
        if kind == JoinKind::Inner && self.filter.is_none() && self.out.zero_width() {
            let mut count = PairCount {
                n: 0,
                limit: ZERO_WIDTH_BATCH,
            };
            run_pairs(table, st, &mut count);
            return Ok((count.n > 0).then(|| Batch::new(Vec::new(), count.n)));
        }
        // The pair buffers live across calls.
        let (oi, ii) = &mut self.pairs;
        oi.clear();
        ii.clear();
        let sink = Pairs {
            outer: oi,
            inner: ii,
            limit: BATCH_SIZE,
        };
        if kind.first_match_only() && self.filter.is_none() {
            run_pairs(table, st, &mut FirstPairs(sink));
        } else {
            run_pairs(table, st, &mut { sink });
        }
        if kind.first_match_only() {
            // Rows matched in an earlier round need no more pairs.
            let state = &self.row_state;
            let mut k = 0;
            for j in 0..oi.len() {
                if state[oi[j] as usize] != outer::MATCHED {
                    (oi[k], ii[k]) = (oi[j], ii[j]);
                    k += 1;
                }
            }
            oi.truncate(k);
            ii.truncate(k);
        }
        if oi.is_empty() {
            return Ok(None);
        }
        let inner_types = &self.out.inner_types;
        let results = match &self.filter {
            None => None,
            Some(f) => {
                let cols = table.gather(inner_types, &f.inner_cols, ii);
                // A null-aware mark needs the condition's NULLs; any
                // other join tests it as PostgreSQL's qual list.
                let r = if nullaware::is_null_aware(kind) {
                    f.eval(&st.batch, oi, cols)?
                } else {
                    f.eval_quals(&st.batch, oi, cols)?
                };
                let removed = r.iter().filter(|v| **v != Some(true)).count();
                self.ctx.add_removed(self.id, removed as u64);
                Some(r)
            }
        };
        if kind == JoinKind::Inner && results.is_none() {
            let cols = table.gather(inner_types, &self.out.inner_out, ii);
            return Ok(Some(self.out.pairs(&st.batch, oi, cols)));
        }
        // Record what each pair means for its rows; keep the matches.
        let null_aware = nullaware::is_null_aware(kind);
        let mut k = 0;
        for j in 0..oi.len() {
            let r = results.as_ref().map_or(Some(true), |r| r[j]);
            match r {
                Some(true) => {
                    if kind != JoinKind::Inner {
                        self.row_state[oi[j] as usize] = outer::MATCHED;
                    }
                    (oi[k], ii[k]) = (oi[j], ii[j]);
                    k += 1;
                }
                None if null_aware => {
                    let s = &mut self.row_state[oi[j] as usize];
                    if *s == outer::NONE {
                        *s = outer::NULL_SEEN;
                    }
                }
                _ => {}
            }
        }
        oi.truncate(k);
        ii.truncate(k);
        if kind.marks_inner() {
            table.set_matched(ii);
        }
        if !kind.emits_pairs() || oi.is_empty() {
            return Ok(None);
        }
        let cols = table.gather(inner_types, &self.out.inner_out, ii);
        Ok(Some(self.out.pairs(&st.batch, oi, cols)))
    }
}

/// The key filter join `plan` (of `kind`, memory limit `limit`) fills,
/// when the planner gave the columnar scan that is its probe side (or a
/// Project's input there) the join's keys (see `keyfilter`): a fresh one in this participant's
/// registry for a serial join, the one in the parallel scan's shared state
/// for a Parallel Hash Join.
fn key_filter_for(
    plan: &Plan,
    ctx: &ExecContext,
    kind: JoinKind,
    parallel: bool,
    limit: usize,
) -> Option<Arc<KeyFilter>> {
    let mut scan = &plan.children[0];
    if let (NodeKind::Project { .. }, Some(input)) = (&scan.kind, scan.children.first()) {
        scan = input;
    }
    let NodeKind::SeqScan {
        columnar: Some(spec),
        ..
    } = &scan.kind
    else {
        return None;
    };
    if spec.join_keys.is_empty() || kind.keeps_unmatched_outer() {
        return None;
    }
    let rows = plan.children[1].est.rows;
    let max_bytes = limit / 8;
    if parallel {
        // The participants' filter lives in the parallel scan's shared
        // state; a scan without one (not parallel) gets no filter.
        let shared = ctx
            .parallel
            .as_ref()
            .and_then(|p| p.node::<crate::columnar_scan::ColumnarShared>(scan.id));
        return shared.map(|s| s.key_filter(rows, max_bytes));
    }
    let f = Arc::new(KeyFilter::for_rows(rows, max_bytes));
    ctx.key_filters.borrow_mut().insert(scan.id, f.clone());
    Some(f)
}

/// Whether a hash join reads its probe side (`outer`) before building the
/// table from `hash`, PostgreSQL's rule in ExecHashJoinImpl: never when
/// build rows are kept by their match bits (right, full, right semi, right
/// anti: the build is needed anyway, and an empty build side ends a right
/// semi or anti join before its probe side runs); always when unmatched
/// probe rows are kept (left, anti, mark: an empty build side could not
/// end the join early); otherwise (inner,
/// semi) only when the probe side's startup cost is below the Hash node's
/// total cost, else the table is built first and an empty build side ends
/// the join without reading the probe side at all.
fn peeks_outer_first(kind: JoinKind, outer: &Plan, hash: &Plan) -> bool {
    if kind.marks_inner() {
        return false;
    }
    kind.keeps_unmatched_outer() || outer.est.startup_cost < hash.est.total_cost
}

/// Whether a hash join over probe side `outer` may hold a data error of
/// the probe side's first batch (`read_first_outer`). Not when the probe
/// side has a Parallel Hash Join below it (down to a nested Gather): the
/// error may have left that join's build half done, with the other
/// participants waiting at its barrier for this one, which would instead
/// go on to wait at this join's; raised at once, the error reaches the
/// Gather, which wakes them all with it.
fn holds_probe_errors(outer: &Plan) -> bool {
    match &outer.kind {
        NodeKind::HashJoin { parallel: true, .. } => false,
        NodeKind::Gather { .. } => true,
        _ => outer.children.iter().all(holds_probe_errors),
    }
}

/// Whether `p` raises its data errors in PostgreSQL's row order: a heap
/// or index scan or a Filter (`RowOrderFilter`) returns the rows that pass
/// before a failing one first (a Parallel Seq Scan within each
/// participant's share), so an error from its first batch came before any
/// row that passes.
fn errors_in_row_order(p: &Plan) -> bool {
    match &p.kind {
        NodeKind::SeqScan { columnar: None, .. } | NodeKind::IndexScan { .. } => true,
        NodeKind::Filter { .. } => p.children.iter().all(errors_in_row_order),
        _ => false,
    }
}

/// Runs the probe of `st` against `table` into `sink`.
fn run_pairs<S: PairSink>(table: &Table, st: &mut ProbeState, sink: &mut S) {
    match table {
        Table::Local(t) => st.pairs(&**t, sink),
        Table::Shared(t) => st.pairs(&t.view(), sink),
    }
}

impl Operator for HashJoin {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = self.ready.pop_front() {
                return Ok(Some(b));
            }
            match self.phase {
                Phase::Build => {
                    if self.peek_outer && !self.read_first_outer()? {
                        self.phase = Phase::Done;
                        continue;
                    }
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
                Phase::Probe => {
                    if self.probe.as_ref().is_none_or(|p| p.done()) {
                        if !self.probe_finished {
                            self.probe_finished = true;
                            self.finish_probe_batch()?;
                            continue;
                        }
                        if !self.next_probe()? {
                            self.probe = None;
                            self.probe_source_done()?;
                        }
                        continue;
                    }
                    if let Some(b) = self.probe_step()? {
                        return Ok(Some(b));
                    }
                }
                Phase::UnmatchedInner => {
                    if let Some(b) = self.unmatched_step()? {
                        return Ok(Some(b));
                    }
                }
                Phase::NextPartition => match self.next_task() {
                    Some(t) => self.start_task(t)?,
                    None => self.phase = Phase::Finish,
                },
                Phase::Finish => {
                    if let Some(b) = self.finish_step()? {
                        return Ok(Some(b));
                    }
                }
                Phase::Done => {
                    self.finish_report();
                    self.phase = Phase::Reported;
                    return Ok(None);
                }
                Phase::Reported => return Ok(None),
            }
        }
    }
}
