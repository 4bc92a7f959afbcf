//! The operator contract: what every executor node implements and what it
//! may use. This module sits at the bottom of the executor; it knows no
//! operator, and every operator knows it.
//!
//! An operator is pulled: [`Operator::next`] returns the next [`Batch`] of
//! its output, or `None` when it is done (and keeps returning `None`). The
//! virtual call happens once per batch, never per row. An operator receives
//! its input operators already built (by `build`, the one dispatcher at the
//! top of the crate) and never builds plans itself; a node that must build a
//! subtree later or elsewhere — Gather, in each worker thread — is handed a
//! [`BuildFn`].
//!
//! [`ExecContext`] carries what operators need from outside: the database
//! and snapshot, the memory limits, EXPLAIN ANALYZE's per-node statistics,
//! the statement's temp-file accounting and, under a Gather, the state the
//! participants share ([`ParallelState`]), the statement's [`Interrupt`]
//! and its session environment ([`SessionEnv`]). [`instrument`] wraps every
//! operator: before each batch it checks the interrupt (PostgreSQL's
//! `CHECK_FOR_INTERRUPTS()` at the top of `ExecProcNode`: cancel requests,
//! `statement_timeout` and shutdown stop a statement there) and installs the
//! session environment (see `env`); with EXPLAIN ANALYZE it also counts rows
//! and time per plan node.
//!
//! The helpers at the end ([`apply_filter`], [`emit_chunk`], [`collect`])
//! are what several operators do to batches.

use crate::env::SessionEnv;
use crate::error::{ExecError, Result};
use crate::interrupt::Interrupt;
use crate::parallel::ParallelState;
use crate::plan::Plan;
use crate::value::Value;
use crate::vector::{Batch, BATCH_SIZE};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tusk_storage::{Database, Snapshot};

pub trait Operator {
    /// The next batch of output rows, or `None` at the end.
    fn next(&mut self) -> Result<Option<Batch>>;
}

/// Builds the operator tree of a plan (what `build::build` is): handed to
/// nodes that build subtrees themselves, such as Gather in its workers.
pub type BuildFn = fn(&Plan, &ExecContext) -> Result<Box<dyn Operator>>;

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
    pub parallel: Option<Arc<ParallelState>>,
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
    /// The session's settings and the statement's start time, installed on
    /// the running thread around every batch.
    pub env: Arc<SessionEnv>,
    /// The query's CTEs and recursive working tables (see `cte`); empty in
    /// parallel workers.
    pub ctes: Rc<crate::cte::Registry>,
    /// The key filters of this participant's serial hash joins, by the
    /// plan id of the scan each filters (see `keyfilter`).
    pub key_filters: crate::keyfilter::LocalFilters,
    /// The statement's `$n` values that index scans read for their keys
    /// when they open (`$n` is `params[n - 1]`). A plan whose only
    /// parameters are index keys runs this way, without a copy of the plan
    /// to substitute them into; any other plan has its parameters
    /// substituted before it is built, and this is empty.
    pub params: Arc<[Value]>,
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

    /// The shared state of parallel-aware node `id` (created before the
    /// participants started by the node's own initialiser; see
    /// `parallel::state`), or an error naming `what` outside a Gather.
    pub fn shared_state<T: crate::parallel::NodeShared>(
        &self,
        id: usize,
        what: &str,
    ) -> Result<Arc<T>> {
        self.parallel
            .as_ref()
            .and_then(|p| p.node::<T>(id))
            .ok_or_else(|| ExecError::new(format!("{what} outside a Gather")))
    }
}

/// Counts rows and time of one plan node for EXPLAIN ANALYZE.
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

/// Checks the statement's interrupt before each batch of its operator and
/// runs the operator in the session's environment.
struct Guarded {
    inner: Box<dyn Operator>,
    interrupt: Interrupt,
    env: Arc<SessionEnv>,
}

impl Operator for Guarded {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.interrupt.check()?;
        let _env = crate::env::enter(&self.env);
        self.inner.next()
    }
}

/// `op`, wrapped (if `guarded`) to check the statement's interrupt and
/// install its session environment before each batch, and to count rows
/// and time under node `id` when the context collects statistics (EXPLAIN
/// ANALYZE).
pub fn instrument(
    op: Box<dyn Operator>,
    id: usize,
    ctx: &ExecContext,
    guarded: bool,
) -> Box<dyn Operator> {
    let op: Box<dyn Operator> = if guarded {
        Box::new(Guarded {
            inner: op,
            interrupt: ctx.interrupt.clone(),
            env: ctx.env.clone(),
        })
    } else {
        op
    };
    match &ctx.stats {
        Some(stats) => Box::new(Instrumented {
            inner: op,
            id,
            stats: stats.clone(),
        }),
        None => op,
    }
}

/// Runs an operator to completion, collecting its output into one batch.
pub fn collect(op: &mut dyn Operator, types: &[tusk_storage::DataType]) -> Result<Batch> {
    let mut out = Batch::empty(types);
    while let Some(b) = op.next()? {
        out.append(&b);
    }
    Ok(out)
}

/// Applies `predicate` to `batch`, keeping the rows where it is true;
/// returns them and how many were removed.
pub fn apply_filter(batch: Batch, predicate: &crate::expr::Expr) -> Result<(Batch, u64)> {
    let passed = predicate.eval_qual(&batch)?;
    Ok(keep_passed(batch, &passed))
}

/// The rows of `batch` that `passed`, and how many were removed.
fn keep_passed(batch: Batch, passed: &[bool]) -> (Batch, u64) {
    let keep: Vec<u32> = (0..batch.len)
        .filter(|&i| passed[i])
        .map(|i| i as u32)
        .collect();
    let removed = (batch.len - keep.len()) as u64;
    if keep.len() == batch.len {
        return (batch, 0);
    }
    (batch.gather(&keep), removed)
}

/// A scan's or a Filter node's predicate, with PostgreSQL's row order for
/// its data errors.
///
/// PostgreSQL tests a qual one row at a time and returns each row that
/// passes before it tests the next: a division by zero in the tenth row is
/// raised only when the consumer asks for more after the rows before it.
/// A batch is tested at once, so when that fails with a data error
/// (SQLSTATE class 22) the batch is tested again row by row to find the
/// first row that fails. The rows before it that pass are returned, and the
/// error is held and raised by the next call ([`RowOrderFilter::raise_held`]);
/// with none before it the error is raised at once. A consumer that stops
/// after those rows (a hash join whose build side turns out empty, a
/// Limit) so never raises an error PostgreSQL would not reach, and one
/// that reads on raises it where PostgreSQL does. Only the failing path
/// pays for the second pass.
pub struct RowOrderFilter {
    predicate: Option<crate::expr::Expr>,
    held: Option<crate::error::ExecError>,
}

impl RowOrderFilter {
    pub fn new(predicate: Option<crate::expr::Expr>) -> RowOrderFilter {
        RowOrderFilter {
            predicate,
            held: None,
        }
    }

    /// Raises the error met after the rows the last call returned.
    pub fn raise_held(&mut self) -> Result<()> {
        match self.held.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The rows of `batch` that pass (all of them without a predicate),
    /// and how many were removed.
    pub fn apply(&mut self, batch: Batch) -> Result<(Batch, u64)> {
        let Some(predicate) = &self.predicate else {
            return Ok((batch, 0));
        };
        let passed = match predicate.eval_qual(&batch) {
            Ok(passed) => passed,
            Err(e) if e.code.starts_with("22") && batch.len > 1 => {
                let mut passed = vec![false; batch.len];
                let mut first_error = None;
                for (i, p) in passed.iter_mut().enumerate() {
                    match predicate.eval_qual(&batch.gather(&[i as u32])) {
                        Ok(one) => *p = one[0],
                        Err(e) => {
                            first_error = Some(e);
                            break;
                        }
                    }
                }
                // No row fails alone: raise the batch's own error.
                let first_error = first_error.unwrap_or(e);
                if !passed.contains(&true) {
                    return Err(first_error);
                }
                self.held = Some(first_error);
                passed
            }
            Err(e) => return Err(e),
        };
        Ok(keep_passed(batch, &passed))
    }
}

/// Splits a large batch into batches of at most [`BATCH_SIZE`] rows: the
/// next one from `*pos`, advancing it.
pub fn emit_chunk(all: &Batch, pos: &mut usize) -> Option<Batch> {
    if *pos >= all.len {
        return None;
    }
    let end = (*pos + BATCH_SIZE).min(all.len);
    let idx: Vec<u32> = (*pos as u32..end as u32).collect();
    *pos = end;
    Some(all.gather(&idx))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{ArithOp, CmpOp, Expr};
    use crate::testing::{col, lit};
    use crate::value::Value;
    use crate::vector::Vector;
    use tusk_storage::DataType;

    /// `6 / c0 > 0` over the rows of `c0`.
    fn six_over(rows: &[i32]) -> (RowOrderFilter, Batch) {
        let predicate = Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(Expr::Arith {
                first: Box::new(lit(Value::Int4(6), DataType::Int4)),
                rest: vec![(ArithOp::Div, col(0, DataType::Int4))],
                ty: DataType::Int4,
            }),
            right: Box::new(lit(Value::Int4(0), DataType::Int4)),
        };
        let mut column = Vector::empty(DataType::Int4);
        for &v in rows {
            column.push_value(&Value::Int4(v));
        }
        let batch = Batch::new(vec![column], rows.len());
        (RowOrderFilter::new(Some(predicate)), batch)
    }

    /// The rows that pass before the failing one come first; the error
    /// follows on the next call.
    #[test]
    fn rows_before_a_failing_row_come_first() {
        let (mut f, batch) = six_over(&[2, -3, 3, 0, 1]);
        let (kept, _) = f.apply(batch).unwrap();
        assert_eq!(kept.len, 2);
        let err = f.raise_held().unwrap_err();
        assert!(err.message.contains("division by zero"), "{err:?}");
        assert!(f.raise_held().is_ok());
    }

    /// A failing row before any that passes raises at once.
    #[test]
    fn a_failing_row_first_raises_at_once() {
        let (mut f, batch) = six_over(&[-1, 0, 2]);
        assert!(f.apply(batch).is_err());
        assert!(f.raise_held().is_ok());
        let (mut f, batch) = six_over(&[2, 3]);
        assert_eq!(f.apply(batch).unwrap().0.len, 2);
    }
}
