//! Aggregation: plain (one output row) and hashed by GROUP BY keys, within
//! `work_mem × hash_mem_multiplier`, alone or as a parallel Partial/Finalize
//! pair; DISTINCT is a hash aggregation without aggregate calls.
//!
//! ## One pass
//!
//! A *pass* reads its input to the end. For each batch it evaluates the
//! group keys, finds every row's group in the [`groups::GroupTable`], and
//! adds the rows to each call's [`accum::Acc`] in one loop per call (FILTER
//! narrows the rows first). A `sum` or `avg` over numeric whose argument
//! is numeric columns and constants under `+ - *` runs as a fixed-point
//! kernel over 128-bit lanes ([`fixed`]) when the batch allows it, and
//! otherwise as any call does. Calls with DISTINCT or ORDER BY inputs keep
//! their rows in a sorter instead ([`ordered`]) and fold them in when the
//! pass ends. Then the pass emits one row per group: the key values and
//! each call's result (or, in a Partial aggregate, its partial state).
//!
//! ## Spilling (PostgreSQL 13's hash aggregation)
//!
//! The pass counts what it holds: the table (map, encoded keys, key values)
//! and every group's states. When that and the buffers of `F` partition
//! files would pass the limit, the pass stops creating groups. From then on
//! a row whose group exists is aggregated as before, and a row of a new
//! group is written, whole, to one of `F` partition files chosen by bits of
//! its key hash. When the input ends the groups in memory are emitted, and
//! each partition file becomes the input of a new pass, which may spill in
//! turn, using other hash bits (the hash is re-mixed per level). All rows of
//! a group go to the same partition, so each group is finished by exactly
//! one pass. `F` is a quarter of the limit divided by the spill buffer size,
//! between 4 and 256. Past 16 levels (only for keys whose hashes collide) a
//! pass no longer spills.
//!
//! EXPLAIN ANALYZE prints PostgreSQL's `Batches: N  Memory Usage: NkB` (and
//! `  Disk Usage: NkB` once it spilled) for grouped aggregation, where N is
//! one plus the number of partition passes.
//!
//! ## Partial and Finalize
//!
//! Under a Gather, each participant runs a Partial aggregate and emits, per
//! group, the key values and each call's partial state
//! ([`crate::plan::AggCall::partial_types`]). The Finalize aggregate above
//! the Gather groups those rows again by the keys (`Column 0..g`) and merges
//! the states ([`accum::Acc::combine`]). A Finalize pass spills like any
//! pass, partial-state rows.
//!
//! A Partial pass whose table is full need not spill: the Finalize merges
//! every state of a group wherever it comes from, so two partial rows of one
//! group are as good as one. When the input comes clustered by its keys (as
//! lineitem by `l_orderkey`) the groups in the table are done with, and the
//! pass *flushes* instead: the rows of the batch that found their group are
//! added, the pass ends and emits its groups, and a new pass starts with the
//! batch's other rows and goes on with the input (`tusk: partial groups
//! flushed: N` under EXPLAIN ANALYZE). No input row is written to a
//! partition file and read back. The test of clustering is the batch that
//! found the table full: if fewer than half of its rows found a group made
//! before it, the table is no use to the rows to come and is flushed;
//! otherwise (keys scattered over the input, as a join's output grouped by
//! the build side's key) the Finalize, which runs in one process, would get
//! nearly one state row per input row, and the pass spills as any pass
//! does. Partial calls with DISTINCT or ORDER BY inputs, which fold their
//! rows in only when the pass ends, do not flush; nor does a pass whose
//! table cannot take even one group.

pub mod accum;
pub mod exact;
pub mod fixed;
pub mod funcs;
pub mod groups;
pub mod json_agg;
pub mod ordered;
pub mod ordered_set;

use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::hashkey::rehash;
use crate::memory::{MemUse, WorkMem};
use crate::operator::{ExecContext, Operator};
use crate::plan::{AggCall, AggFunc, AggMode, NodeKind, Plan};
use crate::spill::{SpillFile, SpillReader, SpillWriter};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};
use accum::Acc;
use fixed::{FixedArg, Lanes};
use groups::GroupTable;
use ordered::OrderedInput;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use tusk_storage::DataType;

/// Past this many levels of partitioning a pass no longer spills.
const MAX_LEVEL: u32 = 16;

/// What every pass of one Aggregate node shares.
struct Config {
    group: Vec<Expr>,
    key_types: Vec<DataType>,
    aggs: Vec<AggCall>,
    /// Each call's fixed-point kernel, for a `sum` or `avg` over numeric
    /// without DISTINCT, ORDER BY or FILTER whose argument compiles.
    fixed: Vec<Option<FixedArg>>,
    mode: AggMode,
    /// Types of the input rows (what spills).
    input_types: Vec<DataType>,
    /// First input column of each call's partial state (Finalize).
    state_at: Vec<usize>,
    /// Each call's partial state types ([`AggCall::partial_types`]).
    state_types: Vec<Vec<DataType>>,
    /// Limit for the group table and states.
    table_limit: usize,
    /// Work memory of each DISTINCT/ORDER BY sorter.
    sorter_wm: WorkMem,
    wm: WorkMem,
    partitions: usize,
    /// A Partial aggregation that flushes its groups instead of spilling
    /// (see the module doc).
    flush: bool,
}

/// How the aggregation went, for EXPLAIN ANALYZE and tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct AggReport {
    /// One plus the partition passes run.
    pub batches: usize,
    pub mem: MemUse,
    /// Bytes written to partition files.
    pub disk: u64,
    /// Times a Partial pass emitted its groups early (see the module doc).
    pub flushes: usize,
}

impl AggReport {
    /// PostgreSQL's `Batches: ...` line of a HashAggregate.
    pub fn line(&self) -> String {
        let mut s = format!(
            "Batches: {}  Memory Usage: {}kB",
            self.batches,
            self.mem.peak_kb()
        );
        if self.batches > 1 {
            s.push_str(&format!("  Disk Usage: {}kB", self.disk.div_ceil(1024)));
        }
        s
    }
}

/// One pass over an input (the child, or a partition file).
struct Pass {
    table: GroupTable,
    accs: Vec<Acc>,
    ordered: Vec<Option<OrderedInput>>,
    spill: Option<Vec<SpillWriter>>,
    level: u32,
    mem: MemUse,
}

impl Pass {
    fn new(cfg: &Config, level: u32) -> Pass {
        let mut accs: Vec<Acc> = cfg.aggs.iter().map(Acc::new).collect();
        let table = GroupTable::new(&cfg.key_types);
        for a in &mut accs {
            a.grow(table.len());
        }
        let ordered = cfg
            .aggs
            .iter()
            .map(|c| {
                (c.distinct || !c.order_by.is_empty())
                    .then(|| OrderedInput::new(c, cfg.sorter_wm.clone()))
            })
            .collect();
        Pass {
            table,
            accs,
            ordered,
            spill: None,
            level,
            mem: MemUse::default(),
        }
    }

    /// Bytes held by the table and the states.
    fn held(&self) -> usize {
        let groups = self.table.len();
        self.table.mem()
            + self
                .accs
                .iter()
                .map(|a| a.group_bytes() * groups + a.extra_bytes())
                .sum::<usize>()
    }

    /// Adds batch `b`. A flushing pass whose table is full returns the
    /// rows of `b` that found no group, unadded: the pass must end, and a
    /// new one take them.
    fn consume(&mut self, b: &Batch, cfg: &Config) -> Result<Option<Batch>> {
        let n = b.len;
        let keys = eval_refs(&cfg.group, b, None)?;
        let keys: Vec<&Vector> = keys.iter().map(|k| &**k).collect();
        let mut gids = Vec::with_capacity(n);
        let mut hashes = Vec::with_capacity(n);
        // New groups may be created while their estimated cost fits what is
        // left of the limit (with room kept for the partition buffers).
        let may_spill = !cfg.key_types.is_empty() && self.level < MAX_LEVEL;
        let per_group = self.group_cost();
        let room = if self.spill.is_some() {
            0
        } else if may_spill {
            cfg.table_limit as isize - (self.held() + cfg.partitions * cfg.wm.buffer()) as isize
        } else {
            isize::MAX
        };
        let mut budget = room;
        let known = self.table.len() as u32;
        self.table
            .lookup(&keys, n, &mut budget, per_group, &mut gids, &mut hashes);
        let groups = self.table.len();
        for a in &mut self.accs {
            a.grow(groups);
        }
        let mut rest = None;
        let full = gids.iter().any(|g| g.is_none());
        // Flush only when the table is no use to the rows to come: when
        // fewer than half of this batch's rows found a group made before
        // the batch (clustered input); otherwise spill as any pass does.
        let useful = || gids.iter().filter(|g| g.is_some_and(|g| g < known)).count() * 2 >= n;
        if cfg.flush && self.spill.is_none() && groups > 0 && full && !useful() {
            let left: Vec<u32> = (0..n as u32)
                .filter(|&r| gids[r as usize].is_none())
                .collect();
            rest = Some(b.gather(&left));
        } else if self.spill.is_none() && full {
            let writers = (0..cfg.partitions)
                .map(|_| SpillWriter::new(&cfg.wm.dir, cfg.wm.buffer(), cfg.wm.spill.clone()))
                .collect::<Result<Vec<_>>>()?;
            self.spill = Some(writers);
        }
        if let Some(writers) = &mut self.spill {
            let f = writers.len() as u64;
            for (row, g) in gids.iter().enumerate() {
                if g.is_none() {
                    let p = ((rehash(hashes[row], self.level) >> 32) * f) >> 32;
                    writers[p as usize].write_row(hashes[row], b, row)?;
                }
            }
        }
        let has_gid: Vec<bool> = gids.iter().map(|g| g.is_some()).collect();
        let dense: Vec<u32> = gids.iter().map(|g| g.unwrap_or(0)).collect();
        // The rows every call without a FILTER adds: those with a group.
        let grouped: Vec<u32> = (0..n as u32).filter(|&r| has_gid[r as usize]).collect();
        match cfg.mode {
            AggMode::Finalize => {
                let mut state: Vec<Value> = Vec::new();
                for (row, g) in gids.iter().enumerate() {
                    let Some(g) = g else { continue };
                    for (i, acc) in self.accs.iter_mut().enumerate() {
                        let at = cfg.state_at[i];
                        let types = &cfg.state_types[i];
                        state.clear();
                        state.extend(
                            types
                                .iter()
                                .enumerate()
                                .map(|(c, &t)| b.columns[at + c].value_as(row, t)),
                        );
                        acc.combine(*g as usize, &state)?;
                    }
                }
            }
            AggMode::Simple | AggMode::Partial => {
                let mut lanes = Lanes::new(b);
                for (i, call) in cfg.aggs.iter().enumerate() {
                    match &mut self.ordered[i] {
                        Some(o) => {
                            // Arguments are computed only for the rows the
                            // FILTER keeps, as PostgreSQL computes them.
                            let take = filter_mask(call, b, &has_gid)?;
                            let active = call.filter.as_ref().map(|_| &take[..]);
                            let args = call
                                .args
                                .iter()
                                .map(|e| e.eval_active(b, active))
                                .collect::<Result<Vec<Vector>>>()?;
                            let order = call
                                .order_by
                                .iter()
                                .map(|k| k.expr.eval_active(b, active))
                                .collect::<Result<Vec<Vector>>>()?;
                            o.push(call, args, order, &take, &dense)?;
                        }
                        None => {
                            let fixed = cfg.fixed[i].as_ref();
                            if let Some(lane) = fixed.and_then(|f| f.lane(&mut lanes)) {
                                if self.accs[i].update_lane(&lane, &grouped, &dense)? {
                                    continue;
                                }
                            }
                            if call.filter.is_some() {
                                let take = filter_mask(call, b, &has_gid)?;
                                let args = eval_refs(&call.args, b, Some(&take))?;
                                let args: Vec<&Vector> = args.iter().map(|a| &**a).collect();
                                self.accs[i].update(call, &args, n, Some(&take), Some(&dense))?;
                            } else {
                                let args = eval_refs(&call.args, b, None)?;
                                let args: Vec<&Vector> = args.iter().map(|a| &**a).collect();
                                self.accs[i].update_rows(call, &args, &grouped, Some(&dense))?;
                            }
                        }
                    }
                }
            }
        }
        let sorters: usize = self.ordered.iter().flatten().map(|o| o.mem()).sum();
        let buffers = self.spill.as_ref().map_or(0, |w| w.len() * cfg.wm.buffer());
        self.mem.set(self.held() + sorters + buffers);
        Ok(rest)
    }

    /// Estimated bytes one more group costs: its states, its key (the
    /// average so far) and its map entry, doubled for the map's growth.
    fn group_cost(&self) -> usize {
        let states: usize = self.accs.iter().map(|a| a.group_bytes()).sum();
        let groups = self.table.len().max(1);
        states + self.table.key_bytes() / groups + 50
    }

    /// Ends the input: folds in the ordered inputs and closes the partition
    /// files (returned, with the bytes they hold).
    fn finish(&mut self, cfg: &Config) -> Result<Vec<Arc<SpillFile>>> {
        let mut files = Vec::new();
        for w in self.spill.take().unwrap_or_default() {
            let f = w.finish()?;
            if f.rows > 0 {
                files.push(f);
            }
        }
        // The partition buffers are gone; each sorter, fed in turn, holds
        // at most its peak beside the table.
        self.mem.set(self.held());
        for (i, o) in self.ordered.iter_mut().enumerate() {
            if let Some(o) = o.take() {
                let peak = o.feed(&cfg.aggs[i], &mut self.accs[i])?;
                self.mem.absorb_peak(peak);
            }
        }
        self.mem.set(self.held());
        Ok(files)
    }

    /// Output rows for groups `from..to`.
    fn emit(&self, cfg: &Config, from: usize, to: usize, out_types: &[DataType]) -> Result<Batch> {
        let idx: Vec<u32> = (from as u32..to as u32).collect();
        let mut cols: Vec<Vector> = self.table.keys.iter().map(|k| k.gather(&idx)).collect();
        let mut c = cols.len();
        for (acc, call) in self.accs.iter().zip(&cfg.aggs) {
            if cfg.mode == AggMode::Partial {
                let types = call.partial_types();
                let mut vs: Vec<Vector> = types
                    .iter()
                    .map(|&t| Vector::with_capacity(t, idx.len()))
                    .collect();
                for k in from..to {
                    for (v, x) in vs.iter_mut().zip(acc.state(k, call.result)?) {
                        v.push_value(&x);
                    }
                }
                c += vs.len();
                cols.extend(vs);
            } else {
                let mut v = Vector::with_capacity(out_types[c], idx.len());
                for k in from..to {
                    v.push_value(&acc.finish(k, call.result)?);
                }
                c += 1;
                cols.push(v);
            }
        }
        Ok(Batch::new(cols, idx.len()))
    }
}

/// `exprs` over `b`; a column reference is the batch's own vector.
fn eval_refs<'b>(
    exprs: &[Expr],
    b: &'b Batch,
    active: Option<&[bool]>,
) -> Result<Vec<Cow<'b, Vector>>> {
    exprs.iter().map(|e| e.eval_ref(b, active)).collect()
}

/// Rows of `b` a call aggregates: those with a group that pass its FILTER.
fn filter_mask(call: &AggCall, b: &Batch, has_gid: &[bool]) -> Result<Vec<bool>> {
    let Some(f) = &call.filter else {
        return Ok(has_gid.to_vec());
    };
    let v = f.eval(b)?;
    let Data::Bool(t) = &v.data else {
        return Err(ExecError::new("argument of FILTER must be type boolean"));
    };
    Ok((0..b.len)
        .map(|i| has_gid[i] && t[i] && !v.is_null(i))
        .collect())
}

enum Input {
    Child(Box<dyn Operator>),
    Partition(SpillReader),
}

impl Input {
    fn next(&mut self) -> Result<Option<Batch>> {
        match self {
            Input::Child(op) => op.next(),
            Input::Partition(r) => Ok(r.next_batch(BATCH_SIZE)?.map(|(b, _)| b)),
        }
    }
}

pub struct Aggregate {
    cfg: Config,
    out_types: Vec<DataType>,
    child: Option<Box<dyn Operator>>,
    /// A flushed pass's input, its level, and the rows of its last batch
    /// that the next pass must add first.
    resume: Option<(Input, u32, Batch)>,
    /// Partition files still to aggregate, with their level.
    pending: VecDeque<(Arc<SpillFile>, u32)>,
    /// The finished pass being emitted, and the next group to emit.
    done: Option<(Pass, usize)>,
    report: AggReport,
    reported: bool,
    ctx: ExecContext,
    id: usize,
}

impl Aggregate {
    pub fn new(plan: &Plan, ctx: &ExecContext, input: Box<dyn Operator>) -> Result<Aggregate> {
        let NodeKind::Aggregate { group, aggs, mode } = &plan.kind else {
            unreachable!("Aggregate::new on another node")
        };
        if *mode != AggMode::Simple {
            if let Some(c) = aggs.iter().find(|c| !c.supports_partial()) {
                return Err(ExecError::new(format!(
                    "aggregate {} cannot be computed in parallel",
                    c.func.name()
                )));
            }
        }
        let wm = WorkMem::hash(ctx);
        let ordered = aggs
            .iter()
            .filter(|c| c.distinct || !c.order_by.is_empty())
            .count();
        // DISTINCT/ORDER BY sorters share half the limit; each may pass its
        // own by a quarter (sorter.rs).
        let (table_limit, sorter_wm) = match (wm.limit / 2).checked_div(ordered) {
            None => (wm.limit, WorkMem::sort(ctx)),
            Some(share) => (
                wm.limit / 2,
                WorkMem {
                    limit: (share * 3 / 4).max(16 << 10),
                    ..wm.clone()
                },
            ),
        };
        let mut state_at = Vec::with_capacity(aggs.len());
        let mut at = group.len();
        for c in aggs {
            state_at.push(at);
            at += c.partial_types().len();
        }
        let partitions = (wm.limit / 4 / wm.buffer()).clamp(4, 256);
        let flush = *mode == AggMode::Partial && ordered == 0 && !group.is_empty();
        Ok(Aggregate {
            cfg: Config {
                key_types: group.iter().map(|g| g.data_type()).collect(),
                group: group.clone(),
                fixed: aggs
                    .iter()
                    .map(|c| {
                        let plain = c.filter.is_none() && !c.distinct && c.order_by.is_empty();
                        match (c.func, &c.args[..]) {
                            (AggFunc::Sum | AggFunc::Avg, [arg]) if plain => FixedArg::compile(arg),
                            _ => None,
                        }
                    })
                    .collect(),
                aggs: aggs.clone(),
                mode: *mode,
                input_types: plan.children[0].output.to_vec(),
                state_at,
                state_types: aggs.iter().map(AggCall::partial_types).collect(),
                table_limit,
                sorter_wm,
                wm,
                partitions,
                flush,
            },
            out_types: plan.output.to_vec(),
            child: Some(input),
            resume: None,
            pending: VecDeque::new(),
            done: None,
            report: AggReport {
                batches: 1,
                ..Default::default()
            },
            reported: false,
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    /// How the aggregation went so far.
    pub fn report(&self) -> AggReport {
        self.report
    }

    /// Runs one pass over `input` at `level`, starting with the rows of
    /// `first`: to the end of the input, or until a flushing pass is full
    /// (then `resume` holds what the next pass starts with).
    fn run_pass(&mut self, mut input: Input, level: u32, first: Option<Batch>) -> Result<()> {
        let mut pass = Pass::new(&self.cfg, level);
        let mut next = first;
        loop {
            let b = match next.take() {
                Some(b) => b,
                None => match input.next()? {
                    Some(b) => b,
                    None => break,
                },
            };
            if b.len == 0 {
                continue;
            }
            if let Some(rest) = pass.consume(&b, &self.cfg)? {
                self.report.flushes += 1;
                self.resume = Some((input, level, rest));
                break;
            }
        }
        for f in pass.finish(&self.cfg)? {
            self.report.disk += f.bytes;
            self.pending.push_back((f, level + 1));
        }
        self.report.mem.absorb_peak(pass.mem.peak);
        self.done = Some((pass, 0));
        Ok(())
    }
}

impl Operator for Aggregate {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some((pass, pos)) = &mut self.done {
                if *pos < pass.table.len() {
                    let to = (*pos + BATCH_SIZE).min(pass.table.len());
                    let b = pass.emit(&self.cfg, *pos, to, &self.out_types)?;
                    *pos = to;
                    return Ok(Some(b));
                }
                self.done = None;
            }
            if let Some((input, level, first)) = self.resume.take() {
                self.run_pass(input, level, Some(first))?;
                continue;
            }
            if let Some(child) = self.child.take() {
                self.run_pass(Input::Child(child), 0, None)?;
                continue;
            }
            if let Some((file, level)) = self.pending.pop_front() {
                self.report.batches += 1;
                let reader = SpillReader::new(
                    std::slice::from_ref(&file),
                    self.cfg.input_types.clone(),
                    self.cfg.wm.buffer(),
                    self.cfg.wm.spill.clone(),
                );
                self.run_pass(Input::Partition(reader), level, None)?;
                continue;
            }
            if !self.reported && !self.cfg.key_types.is_empty() {
                self.reported = true;
                self.ctx.note(self.id, self.report.line());
                if self.report.flushes > 0 {
                    let line = format!("tusk: partial groups flushed: {}", self.report.flushes);
                    self.ctx.note(self.id, line);
                }
            }
            return Ok(None);
        }
    }
}

#[cfg(test)]
mod tests;
