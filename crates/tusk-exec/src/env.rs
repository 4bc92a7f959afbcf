//! The session environment of the running statement: the settings that
//! change how values read and print (`TimeZone`, `DateStyle`,
//! `IntervalStyle`, `extra_float_digits`: [`Settings`]), the transaction's
//! start time (what `now()`, `current_timestamp` and `'now'` mean: fixed
//! for a whole transaction block, as in PostgreSQL) and the statement's
//! (`statement_timestamp()`).
//!
//! PostgreSQL keeps these in global variables of the backend process, which
//! its input and output functions read. tusk runs each session on its own
//! thread, so the equivalent is a thread-local: the session installs its
//! [`SessionEnv`] for the work it does ([`enter`]), and expressions that
//! cast (`Expr::Cast`, typmod coercions) read it through [`with`]. Each
//! operator built by `build` re-installs the environment of its
//! [`crate::ExecContext`] around every batch (see `operator::instrument`),
//! which covers parallel workers (their own threads) and streams that a
//! server resumes later, possibly after a `SET`. Without an installed
//! environment, [`with`] uses PostgreSQL's defaults with `TimeZone = UTC`
//! and `now` at the epoch 2000-01-01, as `CastEnv::default()` does.
//!
//! The environment also carries the session's [`SessionState`]: what
//! session-dependent functions and the reg types ask of the session (see
//! `session`).
//!
//! Installing is a pointer comparison when the same environment is already
//! in place (the common case: every operator of a statement shares one), so
//! the per-batch cost is a thread-local read.

use crate::cast::CastEnv;
use crate::session::SessionState;
use std::cell::RefCell;
use std::sync::Arc;
use tusk_types::Settings;

/// A session's settings and its transaction's and statement's start times.
#[derive(Debug, Clone, Default)]
pub struct SessionEnv {
    pub settings: Settings,
    /// The transaction's start, as a `timestamptz` (microseconds since
    /// 2000-01-01 UTC): `now()`, `current_timestamp`, `'now'`.
    pub now: i64,
    /// The statement's start (`statement_timestamp()`).
    pub statement: i64,
    /// The session's answers to settings and catalog questions.
    pub session: Option<Arc<dyn SessionState>>,
    /// The session's interrupt flag, for functions that wait
    /// (`pg_sleep`).
    pub interrupt: crate::interrupt::Interrupt,
}

impl SessionEnv {
    /// The environment casts take.
    pub fn cast_env(&self) -> CastEnv<'_> {
        CastEnv {
            settings: &self.settings,
            now: self.now,
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<SessionEnv>>> = const { RefCell::new(None) };
}

/// Restores the environment that was in place before [`enter`].
#[must_use = "the environment is uninstalled when the guard drops"]
pub struct EnvGuard {
    previous: Option<Option<Arc<SessionEnv>>>,
}

impl Drop for EnvGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
}

/// Installs `env` on this thread until the guard drops.
pub fn enter(env: &Arc<SessionEnv>) -> EnvGuard {
    CURRENT.with(|c| {
        let mut cur = c.borrow_mut();
        if cur.as_ref().is_some_and(|e| Arc::ptr_eq(e, env)) {
            return EnvGuard { previous: None };
        }
        EnvGuard {
            previous: Some(cur.replace(env.clone())),
        }
    })
}

/// The running statement's interrupt flag (a fresh, never-set one outside
/// a statement).
pub fn interrupt() -> crate::interrupt::Interrupt {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .map(|e| e.interrupt.clone())
            .unwrap_or_default()
    })
}

/// The running statement's start times: (transaction, statement).
pub fn start_times() -> (i64, i64) {
    CURRENT.with(|c| c.borrow().as_ref().map_or((0, 0), |e| (e.now, e.statement)))
}

/// The session state of the running statement, if one is installed.
pub fn session_state() -> Option<Arc<dyn SessionState>> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|e| e.session.clone()))
}

/// Calls `f` with the cast environment of the running statement.
pub fn with<R>(f: impl FnOnce(&CastEnv) -> R) -> R {
    let env = CURRENT.with(|c| c.borrow().clone());
    match env {
        Some(e) => f(&e.cast_env()),
        None => f(&CastEnv::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_installs_and_restores() {
        with(|e| assert_eq!(e.settings.extra_float_digits, 1));
        let mut s = SessionEnv::default();
        s.settings.extra_float_digits = 3;
        let outer = Arc::new(s);
        let g = enter(&outer);
        with(|e| assert_eq!(e.settings.extra_float_digits, 3));
        {
            let mut s = SessionEnv::default();
            s.settings.extra_float_digits = -2;
            let inner = Arc::new(s);
            let _g2 = enter(&inner);
            with(|e| assert_eq!(e.settings.extra_float_digits, -2));
            // The same environment again: nothing to restore.
            let _g3 = enter(&inner);
        }
        with(|e| assert_eq!(e.settings.extra_float_digits, 3));
        drop(g);
        with(|e| assert_eq!(e.settings.extra_float_digits, 1));
    }
}
