//! The server's table of running sessions: cancel keys, the connection
//! limit and shutdown.
//!
//! Every session gets a backend key — a process id (here a number unique
//! in this server, like a PostgreSQL backend's pid) and a random secret —
//! which the client receives in BackendKeyData. A CancelRequest arriving on
//! a new connection names such a key; when both parts match, the session's
//! [`Interrupt`] is cancelled and its running statement stops at its next
//! batch. A wrong secret is ignored silently, as in PostgreSQL, so cancel
//! requests cannot be used to probe for sessions.
//!
//! [`Registry::admit`] counts sessions against `max_connections`; the slot
//! is released when the [`Admission`] is dropped, whatever way the session
//! ends. Shutdown ([`Registry::shut_down`]) terminates every session's
//! interrupt and shuts its socket, so a session busy in a statement stops at
//! its next batch and an idle one wakes from its read; the server then waits
//! for every connection to close ([`Registry::wait_idle`]; after a grace period
//! their sockets are shut both ways, so that a session blocked writing to a
//! client that reads nothing cannot hold up the shutdown) before the
//! database is closed with its shutdown checkpoint.

use crate::activity::Activity;
use crate::conn::Stream;
use std::collections::HashMap;
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use tusk_exec::Interrupt;

struct Backend {
    secret: i32,
    interrupt: Interrupt,
    activity: Arc<Activity>,
}

#[derive(Default)]
struct State {
    backends: HashMap<i32, Backend>,
    /// Connections open (sessions and connections still starting), with a
    /// clone of their socket to shut at shutdown.
    connections: HashMap<u64, Option<Stream>>,
    next_connection: u64,
}

pub struct Registry {
    state: Mutex<State>,
    changed: Condvar,
    next_pid: AtomicI32,
    max_connections: usize,
    shutting_down: AtomicBool,
}

/// A session's place in the registry; dropping it gives the place back.
pub struct Admission {
    registry: Arc<Registry>,
    pub pid: i32,
    pub secret: i32,
    /// What `pg_stat_activity` shows of the session.
    pub activity: Arc<Activity>,
}

/// An open connection, counted until dropped (it goes with the session when
/// the session moves between threads).
pub struct ConnectionGuard {
    registry: Arc<Registry>,
    id: u64,
}

impl Registry {
    pub fn new(max_connections: usize) -> Arc<Registry> {
        Arc::new(Registry {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            // Start at this process's id so keys differ between runs.
            next_pid: AtomicI32::new((std::process::id() % 1_000_000) as i32 + 1),
            max_connections,
            shutting_down: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a new connection; `socket` is a clone of it, shut down at
    /// server shutdown.
    pub fn enter(self: &Arc<Self>, socket: Option<Stream>) -> ConnectionGuard {
        let mut st = self.lock();
        let id = st.next_connection;
        st.next_connection += 1;
        st.connections.insert(id, socket);
        ConnectionGuard {
            registry: self.clone(),
            id,
        }
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Admits a session unless `max_connections` are running.
    pub fn admit(self: &Arc<Self>, interrupt: Interrupt) -> Option<Admission> {
        let mut st = self.lock();
        if st.backends.len() >= self.max_connections {
            return None;
        }
        let secret = i32::from_ne_bytes(crate::random::bytes::<4>());
        let pid = loop {
            let pid = self
                .next_pid
                .fetch_add(1, Ordering::Relaxed)
                .rem_euclid(i32::MAX - 1)
                + 1;
            if !st.backends.contains_key(&pid) {
                break pid;
            }
        };
        if self.is_shutting_down() {
            interrupt.terminate();
        }
        let activity = Arc::new(Activity::new(pid));
        st.backends.insert(
            pid,
            Backend {
                secret,
                interrupt,
                activity: activity.clone(),
            },
        );
        Some(Admission {
            registry: self.clone(),
            pid,
            secret,
            activity,
        })
    }

    /// A CancelRequest: cancels the session with this key, if any.
    pub fn cancel(&self, pid: i32, secret: i32) -> bool {
        match self.lock().backends.get(&pid) {
            Some(b) if b.secret == secret => {
                b.interrupt.cancel();
                true
            }
            _ => false,
        }
    }

    /// Number of sessions.
    pub fn sessions(&self) -> usize {
        self.lock().backends.len()
    }

    /// Fast shutdown: every session's statement is stopped and its socket
    /// shut, so that its session reports the termination and ends.
    pub fn shut_down(&self) {
        self.shutting_down.store(true, Ordering::Release);
        let st = self.lock();
        for b in st.backends.values() {
            b.interrupt.terminate();
        }
        for s in st.connections.values().flatten() {
            let _ = s.shutdown(Shutdown::Read);
        }
    }

    /// Waits until no connection is left. Sessions still there after
    /// `grace` (one blocked writing to a client that reads nothing, say)
    /// get their sockets shut in both directions, which ends their I/O.
    pub fn wait_idle(&self, grace: std::time::Duration) {
        let mut st = self.lock();
        let deadline = std::time::Instant::now() + grace;
        let mut forced = false;
        while !st.connections.is_empty() {
            let now = std::time::Instant::now();
            if !forced && now >= deadline {
                for s in st.connections.values().flatten() {
                    let _ = s.shutdown(Shutdown::Both);
                }
                forced = true;
            }
            let wait = if forced {
                std::time::Duration::from_secs(3600)
            } else {
                deadline - now
            };
            st = self
                .changed
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// `pg_stat_activity`: every admitted session, by pid.
impl tusk_sql::ActivitySource for Registry {
    fn sessions(&self) -> Vec<tusk_sql::SessionActivity> {
        let activities: Vec<Arc<Activity>> = {
            let st = self.lock();
            st.backends.values().map(|b| b.activity.clone()).collect()
        };
        let mut out: Vec<_> = activities.iter().map(|a| a.snapshot()).collect();
        out.sort_by_key(|a| a.pid);
        out
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.registry.lock().backends.remove(&self.pid);
        self.registry.changed.notify_all();
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.registry.lock().connections.remove(&self.id);
        self.registry.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_limits_and_cancel() {
        let r = Registry::new(2);
        let (i1, i2) = (Interrupt::new(), Interrupt::new());
        let a = r.admit(i1.clone()).unwrap();
        let b = r.admit(i2.clone()).unwrap();
        assert_ne!(a.pid, b.pid);
        assert!(r.admit(Interrupt::new()).is_none());
        assert!(!r.cancel(a.pid, a.secret.wrapping_add(1)));
        assert!(i1.check().is_ok());
        assert!(r.cancel(a.pid, a.secret));
        assert!(i1.check().is_err());
        assert!(i2.check().is_ok());
        drop(a);
        assert_eq!(r.sessions(), 1);
        assert!(r.admit(Interrupt::new()).is_some());
        r.shut_down();
        assert!(i2.is_terminated());
        drop(b);
        let t = r.enter(None);
        let r2 = r.clone();
        let waiter = std::thread::spawn(move || r2.wait_idle(std::time::Duration::from_secs(5)));
        drop(t);
        waiter.join().unwrap();
    }
}
