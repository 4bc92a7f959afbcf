//! tusk-cli: the `tusk` binary, a psql-like terminal for the tusk engine.
//!
//! The binary is thin (`main.rs` parses the command line); the behaviour
//! lives in this library so that it can be tested without an engine:
//!
//! * [`format`] prints result tables exactly like psql 15 (aligned and
//!   unaligned, tuples only), with [`width`] measuring display columns;
//! * [`scan`] splits input into statements and backslash commands;
//! * [`report`] builds psql's client-side messages (error excerpts with a
//!   caret, `\timing` lines);
//! * [`copy`] handles COPY data on the client side (`\copy`, data after
//!   `COPY ... FROM STDIN` in scripts, the progress line);
//! * [`shell`] runs statements and backslash commands against anything that
//!   implements [`shell::Engine`], in `-c`, script or interactive mode;
//! * [`variables`] holds psql's variables (`-v`, `\set`, `ON_ERROR_STOP`);
//! * [`interactive`] is the line-editing loop around the shell;
//! * [`allocator`] is the process's heap allocator (mimalloc).

pub mod allocator;
pub mod copy;
pub mod format;
pub mod interactive;
pub mod report;
pub mod scan;
pub mod shell;
pub mod variables;
pub mod width;
