//! Interrupts: how a running statement learns that it must stop.
//!
//! PostgreSQL's backends call `CHECK_FOR_INTERRUPTS()` at safe points; a
//! signal handler only sets a flag, and the next check turns the flag into an
//! error. tusk does the same with an [`Interrupt`]: a small shared state that
//! other threads (a cancel request on another connection, a shutdown, a
//! SIGINT handler in the shell) set with one atomic store, and that the
//! executor checks once per batch — every operator built by
//! [`crate::build()`] checks it before producing its next batch (the
//! wrapper `operator::instrument` puts around each), so a
//! statement stops within one batch of work of the busiest operator (a hash
//! join's probe of one batch, a sort's intake of one batch, ...).
//!
//! Three reasons, worded and classified as PostgreSQL's:
//!
//! | reason | message | SQLSTATE |
//! |---|---|---|
//! | cancel request, Ctrl-C | `canceling statement due to user request` | 57014 |
//! | `statement_timeout` | `canceling statement due to statement timeout` | 57014 |
//! | fast shutdown | `terminating connection due to administrator command` | 57P01 |
//!
//! A cancel applies to the statement running when it arrives: the session
//! clears it when the next statement starts ([`Interrupt::start_statement`]),
//! so a cancel that lands between statements does nothing, as in PostgreSQL.
//! A termination is never cleared: every later check fails.
//!
//! `statement_timeout` needs no timer thread: the statement's deadline is
//! stored with the flag and compared with the clock at each check (one
//! monotonic clock read per check, only while a deadline is set).
//!
//! Setting a flag is a single atomic store with no allocation or lock, so
//! [`Interrupt::cancel`] may be called from a signal handler. Relaxed
//! ordering suffices: the flag carries no data, and a check that misses a
//! store made a moment ago sees it at the next batch.

use crate::error::{sqlstate, ExecError, Result};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const NONE: u8 = 0;
const CANCEL: u8 = 1;
const TERMINATE: u8 = 2;

/// The message of a statement stopped by a cancel request.
pub const CANCELED_MESSAGE: &str = "canceling statement due to user request";
/// The message of a statement stopped by `statement_timeout`.
pub const TIMEOUT_MESSAGE: &str = "canceling statement due to statement timeout";
/// The message of a statement stopped by a fast shutdown.
pub const TERMINATED_MESSAGE: &str = "terminating connection due to administrator command";

#[derive(Debug, Default)]
struct State {
    pending: AtomicU8,
    /// Nanoseconds since [`epoch`] at which the running statement times
    /// out; 0 when it has no deadline.
    deadline: AtomicU64,
}

/// A session's interrupt flag; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    state: Arc<State>,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos_since_epoch(at: Instant) -> u64 {
    at.saturating_duration_since(epoch()).as_nanos() as u64
}

impl Interrupt {
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Asks the running statement to stop (a cancel request). Async-signal
    /// safe.
    pub fn cancel(&self) {
        // A termination stays a termination.
        let _ =
            self.state
                .pending
                .compare_exchange(NONE, CANCEL, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Makes this and every later check fail (fast shutdown).
    pub fn terminate(&self) {
        self.state.pending.store(TERMINATE, Ordering::Relaxed);
    }

    /// Whether [`Interrupt::terminate`] was called.
    pub fn is_terminated(&self) -> bool {
        self.state.pending.load(Ordering::Relaxed) == TERMINATE
    }

    /// Starts a statement: forgets an earlier cancel and arms the deadline
    /// of `timeout` (none for `None` or zero).
    pub fn start_statement(&self, timeout: Option<Duration>) {
        let _ =
            self.state
                .pending
                .compare_exchange(CANCEL, NONE, Ordering::Relaxed, Ordering::Relaxed);
        let deadline = match timeout.filter(|t| !t.is_zero()) {
            Some(t) => nanos_since_epoch(Instant::now() + t).max(1),
            None => 0,
        };
        self.state.deadline.store(deadline, Ordering::Relaxed);
    }

    /// Ends a statement: disarms its deadline.
    pub fn end_statement(&self) {
        self.state.deadline.store(0, Ordering::Relaxed);
    }

    /// `CHECK_FOR_INTERRUPTS()`: the error the statement must stop with, if
    /// any.
    #[inline]
    pub fn check(&self) -> Result<()> {
        match self.state.pending.load(Ordering::Relaxed) {
            NONE => {}
            CANCEL => return Err(ExecError::coded(sqlstate::QUERY_CANCELED, CANCELED_MESSAGE)),
            _ => {
                return Err(ExecError::coded(
                    sqlstate::ADMIN_SHUTDOWN,
                    TERMINATED_MESSAGE,
                ))
            }
        }
        let deadline = self.state.deadline.load(Ordering::Relaxed);
        if deadline != 0 && nanos_since_epoch(Instant::now()) >= deadline {
            return Err(ExecError::coded(sqlstate::QUERY_CANCELED, TIMEOUT_MESSAGE));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_applies_to_the_running_statement_only() {
        let i = Interrupt::new();
        assert!(i.check().is_ok());
        i.cancel();
        assert_eq!(i.check().unwrap_err().message, CANCELED_MESSAGE);
        i.start_statement(None);
        assert!(i.check().is_ok());
    }

    #[test]
    fn termination_is_never_cleared() {
        let i = Interrupt::new();
        let other = i.clone();
        other.terminate();
        i.cancel();
        i.start_statement(None);
        assert_eq!(i.check().unwrap_err().message, TERMINATED_MESSAGE);
        assert!(i.is_terminated());
    }

    #[test]
    fn deadline_passes() {
        let i = Interrupt::new();
        i.start_statement(Some(Duration::from_nanos(1)));
        std::thread::sleep(Duration::from_millis(1));
        assert_eq!(i.check().unwrap_err().message, TIMEOUT_MESSAGE);
        i.end_statement();
        assert!(i.check().is_ok());
        i.start_statement(Some(Duration::ZERO));
        std::thread::sleep(Duration::from_millis(1));
        assert!(i.check().is_ok());
    }
}
