//! # tusk-sql: from SQL text to results
//!
//! A statement goes through these stages, one module each:
//!
//! | stage | module | what |
//! |---|---|---|
//! | parse | `parse` | sqlparser's PostgreSQL dialect, PostgreSQL's syntax errors |
//! | bind | `bind` | names and types resolved, casts inserted: a [`logical::Logical`] plan |
//! | rewrite | `rewrite` | constant folding, subquery decorrelation, predicate push-down |
//! | plan | `physical` | operators, join order, parallelism: a tusk-exec plan |
//! | run | `commands`, `session` | each statement family's execution; results rendered as PostgreSQL sends them |
//!
//! The binder never plans and the planner never resolves names: everything
//! the planner needs is in the logical plan and its column registry.
//! Settings (`SET`, `SHOW`, `RESET`) live in `guc` (the values clients
//! send, such as `DateStyle` and `search_path`, are parsed in
//! `client_settings`); EXPLAIN's text format in `explain`; transaction
//! blocks and how statements use the session's transaction (locks,
//! snapshots, the catalog view) in `xact`.
//!
//! A wire-protocol server drives a session statement by statement through
//! `portal`: parse a string into statements, prepare one (bound and planned
//! once, with its `$n` parameter types inferred), then run it with
//! parameter values as often as the client likes, pulling a query's rows
//! batch by batch.

mod autoparam;
pub mod bind;
pub mod catalog;
pub mod client_settings;
mod commands;
pub mod error;
pub mod explain;
pub mod guc;
pub mod logical;
pub mod names;
mod params;
pub mod parse;
pub mod physical;
pub mod portal;
pub mod rewrite;
pub mod session;
mod stmtcache;
pub mod types;
pub mod xact;

pub use catalog::{ActivitySource, SessionActivity, SessionInfo};
pub use commands::copy::{BufferCopyClient, CopyClient, CopyStream, NoCopyClient};
pub use commands::role::{RoleChange, RoleInfo, RoleStore};
pub use error::{sqlstate, SqlError};
pub use session::{
    on_statement_stack, render_rows, spawn_statement_thread, ColumnHeader, Notice, QueryResult,
    Session,
};
pub use xact::TransactionStatus;
