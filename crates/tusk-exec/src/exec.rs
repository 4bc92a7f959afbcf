//! The executor: turns a [`Plan`] into a tree of pull-based operators.
//!
//! Each operator returns the next [`Batch`] of its output, or `None` when it is
//! done. The virtual call happens once per batch, never per row. With
//! EXPLAIN ANALYZE every operator is wrapped in an instrumenting operator that
//! counts rows and time per plan node. Every operator is also wrapped in one
//! that checks the statement's [`Interrupt`] before each batch (see
//! `interrupt`): cancel requests and `statement_timeout` stop a statement
//! there.

use crate::error::{ExecError, Result};
use crate::interrupt::Interrupt;
use crate::plan::{NodeKind, Plan};
use crate::vector::{Batch, Vector, BATCH_SIZE};
use crate::{agg, join, scan, sort};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tusk_storage::{Database, Snapshot};

pub trait Operator {
    fn next(&mut self) -> Result<Option<Batch>>;
}

/// Per-node actuals for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Default)]
pub struct NodeStats {
    pub rows: u64,
    pub loops: u64,
    pub first_row: Option<Duration>,
    pub total: Duration,
    /// Extra lines the node prints (e.g. `Buckets: ...` for Hash).
    pub extra: Vec<String>,
    pub rows_removed_by_filter: u64,
}

pub type StatsHandle = Rc<RefCell<Vec<NodeStats>>>;

/// What operators need from the outside world.
#[derive(Clone)]
pub struct ExecContext {
    pub db: Arc<Database>,
    pub snapshot: Snapshot,
    /// Memory limit of a hash table or sort, in bytes (work_mem × hash_mem_multiplier for hashes).
    pub work_mem: usize,
    pub hash_mem_multiplier: f64,
    pub stats: Option<StatsHandle>,
    /// Temp-file traffic of the statement (and its `temp_file_limit`).
    pub spill: Rc<crate::spill::SpillStats>,
    /// Shared state when running under a Gather.
    pub parallel: Option<std::sync::Arc<crate::parallel::ParallelState>>,
    /// 0 for the leader, 1.. for workers.
    pub participant: usize,
    /// `tusk.hash_join_prefetch`: software prefetching in hash joins.
    pub prefetch: bool,
    /// `tusk.hash_chunk_size`: bytes of each chunk of a Parallel Hash Join's
    /// shared table (a power of two).
    pub hash_chunk_size: usize,
    /// Checked before every batch: cancel requests, `statement_timeout`,
    /// shutdown. Workers share the leader's.
    pub interrupt: Interrupt,
}

impl ExecContext {
    /// Records extra EXPLAIN lines for node `id` (ignored without ANALYZE).
    pub fn note(&self, id: usize, line: String) {
        if let Some(s) = &self.stats {
            s.borrow_mut()[id].extra.push(line);
        }
    }

    pub fn add_removed(&self, id: usize, n: u64) {
        if let Some(s) = &self.stats {
            s.borrow_mut()[id].rows_removed_by_filter += n;
        }
    }
}

struct Instrumented {
    inner: Box<dyn Operator>,
    id: usize,
    stats: StatsHandle,
}

impl Operator for Instrumented {
    fn next(&mut self) -> Result<Option<Batch>> {
        let start = Instant::now();
        let r = self.inner.next();
        let elapsed = start.elapsed();
        let mut stats = self.stats.borrow_mut();
        let s = &mut stats[self.id];
        s.loops = 1;
        s.total += elapsed;
        if let Ok(Some(b)) = &r {
            s.rows += b.len as u64;
            if s.first_row.is_none() && b.len > 0 {
                s.first_row = Some(s.total);
            }
        }
        if s.first_row.is_none() && matches!(r, Ok(None)) {
            s.first_row = Some(s.total);
        }
        r
    }
}

/// Checks the statement's interrupt flag before each batch of its input
/// (PostgreSQL's `CHECK_FOR_INTERRUPTS()` at the top of `ExecProcNode`).
struct Interruptible {
    inner: Box<dyn Operator>,
    interrupt: Interrupt,
}

impl Operator for Interruptible {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.interrupt.check()?;
        self.inner.next()
    }
}

/// Builds the operator tree for `plan`.
pub fn build(plan: &Plan, ctx: &ExecContext) -> Result<Box<dyn Operator>> {
    let op: Box<dyn Operator> = match &plan.kind {
        NodeKind::SeqScan { .. } => Box::new(scan::SeqScan::new(plan, ctx)?),
        NodeKind::IndexScan { .. } => Box::new(scan::IndexScan::new(plan, ctx)?),
        NodeKind::FunctionScan { .. } => Box::new(scan::FunctionScan::new(plan, ctx)?),
        NodeKind::Values { rows } => {
            Box::new(scan::ValuesScan::new(rows.clone(), plan.output.clone()))
        }
        NodeKind::Project { exprs } => Box::new(Project {
            input: build(&plan.children[0], ctx)?,
            exprs: exprs.clone(),
        }),
        NodeKind::Filter { predicate } => Box::new(Filter {
            input: build(&plan.children[0], ctx)?,
            predicate: predicate.clone(),
            ctx: ctx.clone(),
            id: plan.id,
        }),
        NodeKind::HashJoin { .. } => Box::new(join::HashJoin::new(plan, ctx)?),
        NodeKind::Hash => return Err(ExecError::new("Hash node outside a hash join")),
        NodeKind::Aggregate { .. } => Box::new(agg::Aggregate::new(plan, ctx)?),
        NodeKind::Gather { .. } => Box::new(crate::parallel::Gather::new(plan, ctx)?),
        NodeKind::Sort { keys } => Box::new(sort::Sort::new(
            build(&plan.children[0], ctx)?,
            keys.clone(),
            plan.output.clone(),
            ctx.clone(),
            plan.id,
        )),
        NodeKind::Limit { limit, offset } => Box::new(Limit {
            input: build(&plan.children[0], ctx)?,
            remaining: limit.unwrap_or(u64::MAX),
            skip: *offset,
        }),
    };
    let op: Box<dyn Operator> = Box::new(Interruptible {
        inner: op,
        interrupt: ctx.interrupt.clone(),
    });
    Ok(match &ctx.stats {
        Some(stats) => Box::new(Instrumented {
            inner: op,
            id: plan.id,
            stats: stats.clone(),
        }),
        None => op,
    })
}

/// Runs a plan to completion, collecting its output into one batch.
pub fn collect(op: &mut dyn Operator, types: &[tusk_storage::DataType]) -> Result<Batch> {
    let mut out = Batch::empty(types);
    while let Some(b) = op.next()? {
        out.append(&b);
    }
    Ok(out)
}

struct Project {
    input: Box<dyn Operator>,
    exprs: Vec<crate::expr::Expr>,
}

impl Operator for Project {
    fn next(&mut self) -> Result<Option<Batch>> {
        let Some(b) = self.input.next()? else {
            return Ok(None);
        };
        let cols = self
            .exprs
            .iter()
            .map(|e| e.eval(&b))
            .collect::<Result<Vec<Vector>>>()?;
        Ok(Some(Batch::new(cols, b.len)))
    }
}

/// Applies `predicate` to `batch`, keeping the rows where it is true.
pub fn apply_filter(batch: Batch, predicate: &crate::expr::Expr) -> Result<(Batch, u64)> {
    let v = predicate.eval(&batch)?;
    let crate::vector::Data::Bool(b) = &v.data else {
        return Err(ExecError::new("argument of WHERE must be type boolean"));
    };
    let keep: Vec<u32> = (0..batch.len)
        .filter(|&i| b[i] && !v.is_null(i))
        .map(|i| i as u32)
        .collect();
    let removed = (batch.len - keep.len()) as u64;
    if keep.len() == batch.len {
        return Ok((batch, 0));
    }
    Ok((batch.gather(&keep), removed))
}

struct Filter {
    input: Box<dyn Operator>,
    predicate: crate::expr::Expr,
    ctx: ExecContext,
    id: usize,
}

impl Operator for Filter {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.input.next()? {
            let (b, removed) = apply_filter(b, &self.predicate)?;
            self.ctx.add_removed(self.id, removed);
            if b.len > 0 {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}

struct Limit {
    input: Box<dyn Operator>,
    remaining: u64,
    skip: u64,
}

impl Operator for Limit {
    fn next(&mut self) -> Result<Option<Batch>> {
        while self.remaining > 0 {
            let Some(b) = self.input.next()? else {
                return Ok(None);
            };
            let n = b.len as u64;
            if self.skip >= n {
                self.skip -= n;
                continue;
            }
            let start = self.skip as usize;
            self.skip = 0;
            let take = ((n - start as u64).min(self.remaining)) as usize;
            self.remaining -= take as u64;
            if start == 0 && take == b.len {
                return Ok(Some(b));
            }
            let idx: Vec<u32> = (start..start + take).map(|i| i as u32).collect();
            return Ok(Some(b.gather(&idx)));
        }
        Ok(None)
    }
}

/// Splits a large batch into batches of at most [`BATCH_SIZE`] rows.
pub fn emit_chunk(all: &Batch, pos: &mut usize) -> Option<Batch> {
    if *pos >= all.len {
        return None;
    }
    let end = (*pos + BATCH_SIZE).min(all.len);
    let idx: Vec<u32> = (*pos as u32..end as u32).collect();
    *pos = end;
    Some(all.gather(&idx))
}
