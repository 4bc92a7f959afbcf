//! What `pg_stat_activity` shows of each session: who it is, what it runs
//! and whether it is idle, as PostgreSQL's backend status array does.
//!
//! Every admitted session has an [`Activity`], shared between its session
//! thread (the only writer) and the [`crate::registry::Registry`], which
//! answers `pg_stat_activity` queries from any session
//! ([`tusk_sql::ActivitySource`]) by copying each one. The session marks a
//! statement's start (`active`, the query text, its start time; the
//! transaction's start when it begins one) and each ReadyForQuery (`idle`,
//! `idle in transaction`, `idle in transaction (aborted)`). A session
//! querying `pg_stat_activity` sees itself `active` with that query, as in
//! PostgreSQL.

use std::sync::Mutex;
use tusk_sql::SessionActivity;

/// One session's entry.
pub struct Activity {
    state: Mutex<SessionActivity>,
}

impl Activity {
    pub fn new(pid: i32) -> Activity {
        let now = tusk_exec::func::datetime::clock_now();
        Activity {
            state: Mutex::new(SessionActivity {
                pid,
                user: String::new(),
                application_name: String::new(),
                client_addr: None,
                client_port: None,
                backend_start: now,
                xact_start: None,
                query_start: None,
                state_change: Some(now),
                state: "starting".into(),
                query: String::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SessionActivity> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection's peer: `None` for a Unix-domain socket, which
    /// PostgreSQL shows as a NULL `client_addr` and `client_port` -1.
    pub fn set_client(&self, peer: Option<std::net::SocketAddr>) {
        let mut s = self.lock();
        s.client_addr = peer.map(|p| p.ip().to_string());
        s.client_port = Some(peer.map_or(-1, |p| i32::from(p.port())));
    }

    /// The user and `application_name` (at startup, and when SET changes
    /// the name).
    pub fn set_identity(&self, user: &str, application_name: &str) {
        let mut s = self.lock();
        if s.user != user {
            s.user = user.to_string();
        }
        if s.application_name != application_name {
            s.application_name = application_name.to_string();
        }
    }

    /// A statement starts: `query` runs from `now` (a `timestamptz`);
    /// `in_block` when it runs inside a transaction block (which started
    /// earlier).
    pub fn start(&self, query: &str, in_block: bool, now: i64) {
        let mut s = self.lock();
        s.query.clear();
        s.query.push_str(query);
        s.query_start = Some(now);
        if !in_block || s.xact_start.is_none() {
            s.xact_start = Some(now);
        }
        if s.state != "active" {
            s.state.clear();
            s.state.push_str("active");
            s.state_change = Some(now);
        }
    }

    /// The session waits for the client: `state` is `idle`, `idle in
    /// transaction` or `idle in transaction (aborted)`.
    pub fn idle(&self, state: &str) {
        let now = tusk_exec::func::datetime::clock_now();
        let mut s = self.lock();
        if state == "idle" {
            s.xact_start = None;
        }
        if s.state != state {
            s.state.clear();
            s.state.push_str(state);
            s.state_change = Some(now);
        }
    }

    /// A copy of the entry.
    pub fn snapshot(&self) -> SessionActivity {
        self.lock().clone()
    }
}
