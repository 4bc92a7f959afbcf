//! Statements other than queries, one family per file.

pub mod role;
