//! Gather: runs its child plan in worker threads and in the leader, and
//! merges their rows.
//!
//! A `Gather` node runs its child plan in `max_parallel_workers_per_gather`
//! worker threads and in the leader, which takes part whenever no worker has
//! a batch ready (PostgreSQL's `parallel_leader_participation`). Before any
//! participant starts, the Gather lets every parallel-aware node of its
//! subtree create the state its participants share (see `state`); then every
//! participant builds its own operator tree from the same plan, with the
//! [`BuildFn`] the dispatcher handed in.
//!
//! Workers send batches to the leader over a bounded channel. An error in any
//! participant aborts the state: phasers wake everyone with an error and the
//! leader reports the first real error. A worker that panics reports an
//! internal error the same way instead of leaving the others waiting. No participant sends rows before
//! every phaser of its plan has released it, so the leader can never be
//! blocked at a phaser while a worker waits for channel space.

use super::state::{InitSharedFn, ParallelState};
use crate::error::{ExecError, Result};
use crate::operator::{BuildFn, ExecContext, NodeStats, Operator};
use crate::plan::{NodeKind, Plan};
use crate::spill::SpillStats;
use crate::vector::Batch;
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

enum Msg {
    Batch(Batch),
    Error(ExecError),
    Done,
}

/// The error a participant that panicked reports (`XX000`, with the
/// panic's message).
fn panicked(payload: &(dyn std::any::Any + Send)) -> ExecError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    ExecError::new(format!("parallel worker failed: {what}"))
}

/// Per-node statistics of each worker, handed to the leader at the end.
type WorkerStats = Arc<Mutex<Vec<Vec<NodeStats>>>>;

pub struct Gather {
    child: Plan,
    build: BuildFn,
    init_shared: InitSharedFn,
    worker_stats: WorkerStats,
    workers: usize,
    ctx: ExecContext,
    id: usize,
    started: bool,
    state: Option<Arc<ParallelState>>,
    rx: Option<Receiver<Msg>>,
    handles: Vec<JoinHandle<()>>,
    leader: Option<Box<dyn Operator>>,
    running: usize,
}

impl Gather {
    /// A Gather for `plan`, whose participants build its child with
    /// `build` after `init_shared` has created the nodes' shared state.
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        build: BuildFn,
        init_shared: InitSharedFn,
    ) -> Result<Gather> {
        let NodeKind::Gather { workers } = plan.kind else {
            unreachable!()
        };
        Ok(Gather {
            child: plan.children[0].clone(),
            build,
            init_shared,
            worker_stats: Arc::default(),
            workers,
            ctx: ctx.clone(),
            id: plan.id,
            started: false,
            state: None,
            rx: None,
            handles: Vec::new(),
            leader: None,
            running: 0,
        })
    }

    fn start(&mut self) -> Result<()> {
        self.started = true;
        let nodes = self
            .ctx
            .stats
            .as_ref()
            .map_or(0, |s| s.borrow().len())
            .max(self.child.id + self.child.assign_ids_count() + 1);
        let mut state = ParallelState::new(self.workers + 1);
        (self.init_shared)(&self.child, &mut state);
        let state = Arc::new(state);
        let (tx, rx) = sync_channel::<Msg>(8);
        for w in 0..self.workers {
            let tx = tx.clone();
            let plan = self.child.clone();
            let state = state.clone();
            let db = self.ctx.db.clone();
            let snapshot = self.ctx.snapshot.clone();
            let (work_mem, mult) = (self.ctx.work_mem, self.ctx.hash_mem_multiplier);
            let analyze = self.ctx.stats.is_some();
            let temp_limit = self.ctx.spill.limit;
            let prefetch = self.ctx.prefetch;
            let hash_chunk_size = self.ctx.hash_chunk_size;
            let (interrupt, env) = (self.ctx.interrupt.clone(), self.ctx.env.clone());
            let params = self.ctx.params.clone();
            let (build, worker_stats) = (self.build, self.worker_stats.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("tusk worker {w}"))
                .spawn(move || {
                    let ctx = ExecContext {
                        db,
                        snapshot,
                        work_mem,
                        hash_mem_multiplier: mult,
                        stats: analyze.then(|| {
                            std::rc::Rc::new(std::cell::RefCell::new(vec![
                                NodeStats::default();
                                nodes
                            ]))
                        }),
                        spill: SpillStats::new(temp_limit),
                        prefetch,
                        hash_chunk_size,
                        parallel: Some(state.clone()),
                        participant: w + 1,
                        interrupt,
                        env,
                        ctes: Default::default(),
                        key_filters: Default::default(),
                        params,
                    };
                    let run = || -> Result<()> {
                        let mut op = build(&plan, &ctx)?;
                        while let Some(b) = op.next()? {
                            if state.is_aborted() || tx.send(Msg::Batch(b)).is_err() {
                                return Ok(());
                            }
                        }
                        Ok(())
                    };
                    // A panic must not leave the others waiting at a phaser
                    // for this participant, nor the leader short of its rows.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                        .unwrap_or_else(|p| Err(panicked(p.as_ref())));
                    if let Err(e) = result {
                        state.fail(&e);
                        let _ = tx.send(Msg::Error(e));
                    }
                    if let Some(s) = &ctx.stats {
                        worker_stats
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(s.borrow().clone());
                    }
                    let _ = tx.send(Msg::Done);
                });
            match spawned {
                Ok(h) => {
                    self.handles.push(h);
                    self.running += 1;
                }
                Err(_) => break,
            }
        }
        if self.running < self.workers {
            // Fewer workers than planned: the others never arrive at the
            // shared phasers, so run with what we have by giving up on the
            // parallel plan is not possible here; report it clearly instead.
            state.abort();
            return Err(ExecError::new("could not start parallel workers"));
        }
        let mut leader_ctx = self.ctx.clone();
        leader_ctx.parallel = Some(state.clone());
        leader_ctx.participant = 0;
        self.leader = Some((self.build)(&self.child, &leader_ctx)?);
        self.ctx
            .note(self.id, format!("Workers Launched: {}", self.running));
        self.state = Some(state);
        self.rx = Some(rx);
        Ok(())
    }

    /// Stops every participant after an error seen as `e`; returns the
    /// error to report (the first real one of any participant).
    fn fail(&mut self, e: ExecError) -> ExecError {
        match &self.state {
            Some(s) => {
                s.fail(&e);
                s.error_to_report(e)
            }
            None => e,
        }
    }

    /// Joins the workers and adds their per-node statistics to the leader's.
    fn finish(&mut self) {
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
        if let Some(stats) = &self.ctx.stats {
            let mut mine = stats.borrow_mut();
            for w in self
                .worker_stats
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..)
            {
                for (m, s) in mine.iter_mut().zip(w) {
                    m.rows += s.rows;
                    m.loops += s.loops;
                    m.rows_removed_by_filter += s.rows_removed_by_filter;
                    m.total = m.total.max(s.total);
                    m.first_row = match (m.first_row, s.first_row) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    if m.extra.is_empty() {
                        m.extra = s.extra;
                    }
                }
            }
        }
    }
}

impl Operator for Gather {
    fn next(&mut self) -> Result<Option<Batch>> {
        if !self.started {
            if let Err(e) = self.start() {
                return Err(self.fail(e));
            }
        }
        loop {
            let msg = match self.rx.as_ref().map(|rx| rx.try_recv()) {
                Some(Ok(m)) => Some(m),
                Some(Err(TryRecvError::Empty)) => None,
                Some(Err(TryRecvError::Disconnected)) | None => {
                    self.running = 0;
                    None
                }
            };
            match msg {
                Some(Msg::Batch(b)) => return Ok(Some(b)),
                Some(Msg::Error(e)) => return Err(self.fail(e)),
                Some(Msg::Done) => {
                    self.running -= 1;
                    continue;
                }
                None => {}
            }
            if let Some(op) = &mut self.leader {
                match op.next() {
                    Ok(Some(b)) => return Ok(Some(b)),
                    Ok(None) => self.leader = None,
                    Err(e) => return Err(self.fail(e)),
                }
                continue;
            }
            if self.running == 0 {
                self.finish();
                return Ok(None);
            }
            match self.rx.as_ref().unwrap().recv() {
                Ok(Msg::Batch(b)) => return Ok(Some(b)),
                Ok(Msg::Error(e)) => return Err(self.fail(e)),
                Ok(Msg::Done) => self.running -= 1,
                Err(_) => self.running = 0,
            }
        }
    }
}

impl Drop for Gather {
    fn drop(&mut self) {
        if let Some(s) = &self.state {
            if self.running > 0 || self.leader.is_some() {
                s.abort();
            }
        }
        // Unblock workers waiting to send, then wait for them.
        self.leader = None;
        self.rx = None;
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::build::build;
    use crate::expr::{ArithOp, CmpOp, Expr};
    use crate::join_reference::{rows, scan, table, JoinCase};
    use crate::plan::{JoinKind, NodeKind};
    use crate::testing::{lit, node, rows_of, TestDb};
    use crate::value::Value;
    use tusk_storage::DataType;

    /// One participant divides by zero while reading its share of the
    /// build side; the others are stopped at the build's barrier with a
    /// cancellation. The leader reports the division by zero, however the
    /// race goes.
    #[test]
    fn the_first_real_error_is_reported() {
        let db = TestDb::new();
        let (o, ot) = table(&db, "o", &rows(20_000, 100, 0));
        // One failing row, in the last block: whoever reads it, the
        // others are waiting at the build's barrier by then.
        let mut inner_rows = rows(20_000, 40, 0);
        inner_rows.push(vec![Value::Int4(42), Value::Int4(0)]);
        let (i, it) = table(&db, "i", &inner_rows);
        let int = |index| Expr::Column {
            index,
            ty: DataType::Int4,
        };
        // 1 / (k - 42) > 0 fails on the row whose key is 42.
        let fails = Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(Expr::arith(
                ArithOp::Div,
                lit(Value::Int4(1), DataType::Int4),
                Expr::arith(
                    ArithOp::Sub,
                    int(0),
                    lit(Value::Int4(42), DataType::Int4),
                    DataType::Int4,
                ),
                DataType::Int4,
            )),
            right: Box::new(lit(Value::Int4(0), DataType::Int4)),
        };
        let mut inner = scan(i, "i", &it, true);
        let NodeKind::SeqScan { filter, .. } = &mut inner.kind else {
            unreachable!()
        };
        *filter = Some(fails);
        let case = JoinCase {
            kind: JoinKind::Inner,
            outer_types: ot.clone(),
            inner_types: it,
            outer: vec![],
            inner: vec![],
            outer_keys: vec![0],
            inner_keys: vec![0],
            filter: None,
            outer_out: vec![0],
            inner_out: vec![],
        };
        for _ in 0..10 {
            let join = case.hash_plan(scan(o, "o", &ot, true), inner.clone(), true);
            let out = join.output.to_vec();
            let mut gather = node(NodeKind::Gather { workers: 2 }, vec![join], out);
            gather.assign_ids();
            let ctx = db.ctx(4 << 20, 8);
            let mut op = build(&gather, &ctx).unwrap();
            let err = rows_of(op.as_mut(), &gather.output).unwrap_err();
            assert_eq!(err.message, "division by zero");
        }
    }
}
