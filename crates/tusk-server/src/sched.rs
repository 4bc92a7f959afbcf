//! The kernel scheduling policy of session threads: `SCHED_BATCH` unless
//! `tusk.session_scheduling = normal`.
//!
//! ## Why
//!
//! A query arriving on a session's socket wakes the session's thread. Under
//! the normal policy (`SCHED_OTHER`) the woken thread may *preempt* the
//! thread that woke it, usually the client, in the middle of its work: on
//! a machine whose cores are all busy, a client thread that drives several
//! connections (pgbench with `-c 8 -j 2`, a connection pool, an
//! application server) is switched out after every query it sends, and
//! back in when the session has answered and gone to sleep again.
//! `SCHED_BATCH` (see sched(7)) keeps the thread's fair share of the CPU
//! but gives up wakeup preemption: the woken session thread waits until
//! the client blocks of its own accord, by then usually having sent the
//! queries of its other connections too, and the sessions then answer them
//! one after another. Fewer switches per query, and more of the client's
//! and the sessions' work done while their caches are warm.
//!
//! On an idle machine a woken thread gets an idle core at once and nothing
//! is preempted either way, so the policy changes nothing there; an
//! interactive session on a busy machine may wait up to one scheduler time
//! slice longer to start. Measured with `pgbench -S -c 8 -j 2` over a Unix
//! socket on the 2-core test machine (scale 10, 10 s runs, nothing else
//! running), 11 alternating pairs of runs of the same build under either
//! policy gave 0 to 19 % more tps under `SCHED_BATCH`, median 5.5 %; in
//! the best set, 100,500-104,700 tps against 115,700-118,000. pgbench's
//! involuntary context switches fell from 0.29 to 0.06 per transaction.
//!
//! ## How
//!
//! Each session thread sets the policy of its own thread when it starts
//! ([`apply`]); a session thread serves its session, and in the session
//! pool other sessions too, so every query runs under it. A thread inherits
//! the policy of the thread that starts it: the reactor and the threads
//! started when the database opens (WAL writer, autovacuum) keep the
//! normal policy, while threads a session starts run as batch threads too:
//! its parallel workers, its deep-recursion stacks, and the session pool's
//! monitor, which the first pooled session starts. Work a session does
//! itself, such as a checkpoint its commit triggers, runs on its own
//! thread. Changing between the two non-real-time policies needs no
//! privilege; should the kernel refuse, the thread logs it once and keeps
//! the normal policy.

use std::sync::atomic::{AtomicBool, Ordering};

/// `tusk.session_scheduling`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionScheduling {
    /// `SCHED_BATCH` (the default).
    Batch,
    /// `SCHED_OTHER`: whatever the server process was started with.
    Normal,
}

impl SessionScheduling {
    /// The setting's value from `tusk.conf`.
    pub fn parse(v: &str) -> Option<SessionScheduling> {
        match v.to_ascii_lowercase().as_str() {
            "batch" => Some(SessionScheduling::Batch),
            "normal" => Some(SessionScheduling::Normal),
            _ => None,
        }
    }
}

/// Whether a refusal has been logged already.
static REFUSAL_LOGGED: AtomicBool = AtomicBool::new(false);

/// Gives the calling thread the policy `s` asks for. `Normal` leaves the
/// thread as it is.
pub fn apply(s: SessionScheduling) {
    if s == SessionScheduling::Normal {
        return;
    }
    if let Err(e) = set_own_policy(libc::SCHED_BATCH) {
        if !REFUSAL_LOGGED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "LOG:  could not set the session threads' scheduling policy to SCHED_BATCH: {e}"
            );
        }
    }
}

/// `sched_setscheduler(0, policy, {0})`: `policy` for the calling thread.
fn set_own_policy(policy: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads one `sched_param` through the
    // pointer, which points to a live, initialised local for the whole call;
    // pid 0 names the calling thread, so no other thread is affected.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's policy (`SCHED_OTHER`, `SCHED_BATCH`, ...).
    fn own_policy() -> std::io::Result<libc::c_int> {
        // SAFETY: `sched_getscheduler` takes no pointers; pid 0 names the
        // calling thread.
        let rc = unsafe { libc::sched_getscheduler(0) };
        if rc < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(rc)
        }
    }

    #[test]
    fn batch_applies_to_the_calling_thread_only() {
        let before = own_policy().unwrap();
        let inside = std::thread::spawn(|| {
            apply(SessionScheduling::Batch);
            own_policy().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(inside, libc::SCHED_BATCH);
        assert_eq!(own_policy().unwrap(), before, "other threads keep theirs");
        let normal = std::thread::spawn(|| {
            apply(SessionScheduling::Normal);
            own_policy().unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(normal, before);
    }

    #[test]
    fn setting_values() {
        assert_eq!(
            SessionScheduling::parse("BATCH"),
            Some(SessionScheduling::Batch)
        );
        assert_eq!(
            SessionScheduling::parse("normal"),
            Some(SessionScheduling::Normal)
        );
        assert_eq!(SessionScheduling::parse("fifo"), None);
    }
}
