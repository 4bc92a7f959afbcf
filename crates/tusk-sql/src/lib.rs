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
//! Settings (`SET`, `SHOW`, `RESET`) live in `guc`; EXPLAIN's text format in
//! `explain`.

pub mod bind;
mod commands;
pub mod error;
pub mod explain;
pub mod guc;
pub mod logical;
pub mod names;
pub mod parse;
pub mod physical;
pub mod rewrite;
pub mod session;
pub mod types;

pub use commands::copy::{BufferCopyClient, CopyClient, CopyStream, NoCopyClient};
pub use error::{sqlstate, SqlError};
pub use session::{on_statement_stack, render_rows, ColumnHeader, QueryResult, Session};
