//! Parallel query: Gather, worker threads, and the state participants share.
//!
//! A `Gather` node runs its child plan in `max_parallel_workers_per_gather`
//! worker threads and in the leader, which takes part whenever no worker has
//! a batch ready (PostgreSQL's `parallel_leader_participation`). Every
//! participant builds its own operator tree from the same plan; what they
//! share lives in one [`ParallelState`]:
//!
//! * **Parallel Seq Scan** hands out blocks through one atomic counter per
//!   scan node, so each block is read by exactly one participant.
//! * **Parallel Hash Join** builds one shared table in DSA chunks (see
//!   `join` and `shared_table`), with a [`Phaser`] separating its build
//!   phases, and spills to partition files all participants share.
//!
//! Workers send batches to the leader over a bounded channel. An error in any
//! participant aborts the state: phasers wake everyone with an error and the
//! leader reports the first error. No participant sends rows before every
//! phaser of its plan has released it, so the leader can never be blocked at
//! a phaser while a worker waits for channel space.

use crate::error::{ExecError, Result};
use crate::exec::{build, ExecContext, NodeStats, Operator};
use crate::plan::{NodeKind, Plan};
use crate::spill::SpillStats;
use crate::vector::Batch;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A reusable barrier that can be aborted.
pub struct Phaser {
    parties: usize,
    state: Mutex<(usize, u64, bool)>,
    cv: Condvar,
}

impl Phaser {
    pub fn new(parties: usize) -> Phaser {
        Phaser {
            parties,
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
        }
    }

    /// Waits until every party has arrived. Returns true for exactly one
    /// party (the last to arrive), false for the others; fails when aborted.
    pub fn wait(&self) -> Result<bool> {
        let aborted = || {
            ExecError::new("canceling statement due to an error in another parallel participant")
        };
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.2 {
            return Err(aborted());
        }
        st.0 += 1;
        if st.0 == self.parties {
            st.0 = 0;
            st.1 += 1;
            self.cv.notify_all();
            return Ok(true);
        }
        let generation = st.1;
        while st.1 == generation && !st.2 {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.1 == generation {
            return Err(aborted());
        }
        Ok(false)
    }

    pub fn abort(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.2 = true;
        self.cv.notify_all();
    }
}

/// Blocks a Parallel Seq Scan participant takes at a time: few enough that
/// participants finish together (16 pages are a few microseconds of work),
/// enough that the shared counter is not touched for every page.
pub const SCAN_CHUNK_BLOCKS: u32 = 16;

/// What the participants of one Gather share.
pub struct ParallelState {
    pub participants: usize,
    scan_next: Vec<AtomicU32>,
    joins: Mutex<HashMap<usize, Arc<crate::join::SharedBuild>>>,
    aborted: AtomicBool,
    worker_stats: Mutex<Vec<Vec<NodeStats>>>,
}

impl ParallelState {
    pub fn new(participants: usize, nodes: usize) -> ParallelState {
        ParallelState {
            participants,
            scan_next: (0..nodes).map(|_| AtomicU32::new(0)).collect(),
            joins: Mutex::new(HashMap::new()),
            aborted: AtomicBool::new(false),
            worker_stats: Mutex::new(Vec::new()),
        }
    }

    /// The next range of blocks for parallel scan node `id` to read: up to
    /// [`SCAN_CHUNK_BLOCKS`] blocks from `start` (which may lie past the
    /// end of the relation: then the scan is done).
    pub fn next_blocks(&self, id: usize) -> u32 {
        self.scan_next[id].fetch_add(SCAN_CHUNK_BLOCKS, Ordering::Relaxed)
    }

    /// The shared build state of parallel hash join node `id`.
    pub fn join(&self, id: usize) -> Arc<crate::join::SharedBuild> {
        let mut joins = self.joins.lock().unwrap_or_else(|e| e.into_inner());
        joins
            .entry(id)
            .or_insert_with(|| Arc::new(crate::join::SharedBuild::new(self.participants)))
            .clone()
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    /// Stops every participant: phasers fail, loops see the flag.
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::Relaxed);
        for j in self
            .joins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            j.phaser.abort();
        }
    }
}

enum Msg {
    Batch(Batch),
    Error(ExecError),
    Done,
}

pub struct Gather {
    child: Plan,
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
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<Gather> {
        let NodeKind::Gather { workers } = plan.kind else {
            unreachable!()
        };
        Ok(Gather {
            child: plan.children[0].clone(),
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
        let state = Arc::new(ParallelState::new(self.workers + 1, nodes));
        let (tx, rx) = sync_channel::<Msg>(8);
        for w in 0..self.workers {
            let tx = tx.clone();
            let plan = self.child.clone();
            let state = state.clone();
            let db = self.ctx.db.clone();
            let snapshot = self.ctx.snapshot;
            let (work_mem, mult) = (self.ctx.work_mem, self.ctx.hash_mem_multiplier);
            let analyze = self.ctx.stats.is_some();
            let temp_limit = self.ctx.spill.limit;
            let prefetch = self.ctx.prefetch;
            let hash_chunk_size = self.ctx.hash_chunk_size;
            let interrupt = self.ctx.interrupt.clone();
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
                    if let Err(e) = run() {
                        state.abort();
                        let _ = tx.send(Msg::Error(e));
                    }
                    if let Some(s) = &ctx.stats {
                        state
                            .worker_stats
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
        self.leader = Some(build(&self.child, &leader_ctx)?);
        self.ctx
            .note(self.id, format!("Workers Launched: {}", self.running));
        self.state = Some(state);
        self.rx = Some(rx);
        Ok(())
    }

    fn fail(&mut self, e: ExecError) -> ExecError {
        if let Some(s) = &self.state {
            s.abort();
        }
        e
    }

    /// Joins the workers and adds their per-node statistics to the leader's.
    fn finish(&mut self) {
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
        if let (Some(stats), Some(state)) = (&self.ctx.stats, &self.state) {
            let mut mine = stats.borrow_mut();
            for w in state
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
