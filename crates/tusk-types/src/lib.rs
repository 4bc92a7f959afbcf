//! # tusk-types: SQL values with PostgreSQL's semantics
//!
//! The value types that tusk's executor stores in its vectors and that need
//! more than a machine integer: their representation, ordering, hashing,
//! arithmetic and text forms, each following PostgreSQL 15. This crate knows
//! nothing of tables, plans or vectors; tusk-exec builds its kernels on it and
//! any other engine can take it alone.
//!
//! | module | what |
//! |---|---|
//! | `interval` | `interval`: months, days and microseconds kept apart |
//! | `datetime` | `date`, `time`, `timestamp`, `timestamptz`: calendar and text forms |
//! | `float` | text output of `real` and `double precision` |

pub mod datetime;
pub mod float;
pub mod interval;

pub use interval::Interval;
