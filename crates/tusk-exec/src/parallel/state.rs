//! What the participants of one Gather share: the registry of per-node
//! shared state, the abort flag with the first real error, and the
//! [`Phaser`] that parallel-aware nodes use as their barrier.
//!
//! ## Per-node shared state
//!
//! A parallel-aware node (Parallel Seq Scan, Parallel Hash Join) owns the
//! state its participants share: its type implements [`NodeShared`] and
//! lives in the node's own module. Before any participant starts, the
//! Gather walks its subtree and lets each parallel-aware node create its
//! state (`build::init_shared`, which calls each node's own initialiser, as
//! PostgreSQL's `ExecParallelInitializeDSM` calls `ExecSeqScanInitializeDSM`
//! and `ExecHashJoinInitializeDSM`); the registry maps the node's plan id to
//! it. The registry is complete before the participants exist and never
//! changes afterwards, so it needs no lock: each participant's operator
//! looks its node's state up by id ([`ParallelState::node`]) when it is
//! built.
//!
//! ## Errors
//!
//! An error in any participant aborts the state: the flag stops loops, and
//! every node's [`NodeShared::abort`] wakes participants waiting in it (the
//! phasers return "canceling statement due to an error in another parallel
//! participant"). The first error that is not such a cancellation is kept
//! ([`ParallelState::fail`]), so that the leader reports the participant's
//! own error — `integer out of range`, say — whichever participant noticed
//! the abort first.

use crate::error::{sqlstate, ExecError, Result};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The error of a participant stopped because another one failed.
pub fn canceled() -> ExecError {
    ExecError::coded(
        sqlstate::QUERY_CANCELED,
        "canceling statement due to an error in another parallel participant",
    )
}

/// Whether `e` is the cancellation of [`canceled`] (not a real error).
pub fn is_canceled(e: &ExecError) -> bool {
    e.code == sqlstate::QUERY_CANCELED && e.message == canceled().message
}

/// A reusable barrier that can be aborted.
pub struct Phaser {
    parties: usize,
    /// (arrived, generation, aborted)
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
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.2 {
            return Err(canceled());
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
            return Err(canceled());
        }
        Ok(false)
    }

    pub fn abort(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.2 = true;
        self.cv.notify_all();
    }
}

/// The shared state of one parallel-aware plan node.
pub trait NodeShared: Any + Send + Sync {
    /// Wakes every participant waiting in this state (another participant
    /// failed). Nodes without waits need not implement it.
    fn abort(&self) {}
}

/// Creates the shared state of every parallel-aware node of a subtree
/// (what `build::init_shared` is): handed to Gather.
pub type InitSharedFn = fn(&crate::plan::Plan, &mut ParallelState);

/// What the participants of one Gather share.
pub struct ParallelState {
    pub participants: usize,
    nodes: HashMap<usize, Arc<dyn NodeShared>>,
    aborted: AtomicBool,
    first_error: Mutex<Option<ExecError>>,
}

impl ParallelState {
    /// An empty registry for `participants` (the leader and the workers).
    pub fn new(participants: usize) -> ParallelState {
        ParallelState {
            participants,
            nodes: HashMap::new(),
            aborted: AtomicBool::new(false),
            first_error: Mutex::new(None),
        }
    }

    /// Registers the shared state of node `id` (before participants start).
    pub fn insert(&mut self, id: usize, state: Arc<dyn NodeShared>) {
        let old = self.nodes.insert(id, state);
        assert!(old.is_none(), "plan node {id} has two shared states");
    }

    /// The shared state of node `id`, if it has one of type `T`.
    pub fn node<T: NodeShared>(&self, id: usize) -> Option<Arc<T>> {
        let any: Arc<dyn Any + Send + Sync> = self.nodes.get(&id)?.clone();
        any.downcast::<T>().ok()
    }

    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
    }

    /// Stops every participant: phasers fail, loops see the flag.
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::Relaxed);
        for n in self.nodes.values() {
            n.abort();
        }
    }

    /// A participant failed with `e`: keeps it if it is the first real
    /// error (not a cancellation), then aborts everyone.
    pub fn fail(&self, e: &ExecError) {
        if !is_canceled(e) {
            let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
            first.get_or_insert_with(|| e.clone());
        }
        self.abort();
    }

    /// The error to report for a failure seen as `e`: the first real error
    /// of any participant, else `e`.
    pub fn error_to_report(&self, e: ExecError) -> ExecError {
        let first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        first.clone().unwrap_or(e)
    }
}

#[cfg(all(test, not(tusk_exec_loom)))]
mod tests {
    use super::*;

    struct Counter;
    impl NodeShared for Counter {}

    struct Waiter(Phaser);
    impl NodeShared for Waiter {
        fn abort(&self) {
            self.0.abort();
        }
    }

    #[test]
    fn nodes_are_found_by_id_and_type() {
        let mut s = ParallelState::new(2);
        s.insert(3, Arc::new(Counter));
        assert!(s.node::<Counter>(3).is_some());
        assert!(s.node::<Counter>(4).is_none());
        assert!(s.node::<Waiter>(3).is_none(), "wrong type is not found");
    }

    #[test]
    fn abort_wakes_waiters_and_the_first_real_error_wins() {
        let mut s = ParallelState::new(2);
        s.insert(1, Arc::new(Waiter(Phaser::new(2))));
        let s = Arc::new(s);
        let waiter = {
            let s = s.clone();
            std::thread::spawn(move || s.node::<Waiter>(1).unwrap().0.wait())
        };
        s.fail(&canceled());
        s.fail(&ExecError::new("first"));
        s.fail(&ExecError::new("second"));
        let err = waiter.join().unwrap().unwrap_err();
        assert!(is_canceled(&err));
        assert!(s.is_aborted());
        assert_eq!(s.error_to_report(err).message, "first");
    }
}
