//! # tusk-exec: the batch-at-a-time executor
//!
//! Plans ([`plan::Plan`]) come from the SQL layer; [`build()`] turns them
//! into operators that pull [`vector::Batch`]es of column vectors from their
//! children. Per-row work happens in tight loops over typed arrays inside an
//! operator; the dynamic dispatch between operators happens once per batch.
//!
//! ## Layers
//!
//! Modules import only modules below them:
//!
//! | layer | modules | what |
//! |---|---|---|
//! | top | `build`, `analyze` | the one dispatcher: builds each node's children and hands them in; ANALYZE's sample (through the scan's deformer) and column statistics |
//! | operators | `scan`, `indexscan`, `project`, `filter`, `limit`, `result`, `append`, `hashjoin/`, `nestloop`, `aggregate/`, `sort/`, `unique`, `setop`, `window/`, `cte`, `recursive`, `subplan`, `parallel::gather`, `dml`, `conflict` | one node each (a folder for a big one) |
//! | shared by operators | `join`, `rowstore`, `tuplestore`, `memory` | join output by kind and pair filters; rows written once and re-read; rows read while written or by number; memory accounting |
//! | contract | `operator`, `parallel::state` | the `Operator` trait, `ExecContext`, EXPLAIN statistics; what parallel participants share |
//! | data | `deform` (stored tuples into vectors), `vector`, `value`, `numeric`, `copy/` (COPY formats and load path), `expr/`, `func/`, `cast`, `hashkey`, `sortkey`, `spill`, `codec`, `error`, `stack`, `text` | column vectors, values, scalar expressions and built-in functions (with their `pg_proc`-like table and overload resolution), key hashing, normalized sort keys, spill files, the recursion guard, UTF-8 checks |
//! | session | `interrupt`, `env` | cancel requests and `statement_timeout` (checked once per batch); the session's settings and statement time that casts read |
//!
//! A parallel-aware node owns the state its participants share and creates
//! it in its own initialiser, which `build::init_shared` calls before a
//! Gather starts (see `parallel::state`).

pub mod aggregate;
pub mod analyze;
pub mod analyze_columnar;
pub mod append;
pub mod array;
pub mod build;
pub mod cast;
pub mod codec;
pub mod columnar_scan;
pub mod conflict;
pub mod copy;
pub mod cte;
mod deform;
pub mod dml;
pub mod env;
pub mod error;
pub mod expr;
pub mod filter;
pub mod func;
pub mod function_scan;
pub mod hashjoin;
pub mod hashkey;
pub mod index_nestloop;
pub mod indexscan;
pub mod interrupt;
pub mod join;
#[cfg(test)]
mod join_reference;
pub mod keyfilter;
pub mod lateral;
pub mod limit;
pub mod memory;
pub mod mergejoin;
pub mod nestloop;
pub mod numeric;
pub mod operator;
pub mod parallel;
pub mod plan;
pub mod project;
pub mod recursive;
pub mod result;
pub mod rowstore;
pub mod scan;
pub mod session;
pub mod setop;
pub mod sort;
pub mod sortkey;
pub mod spill;
pub mod srf;
pub mod stack;
pub mod subplan;
pub mod systemscan;
#[cfg(test)]
mod testing;
pub mod text;
pub mod tuplestore;
pub mod unique;
pub mod value;
pub mod vector;
pub mod window;

/// The former home of the contract and the dispatcher, kept as aliases
/// for callers not yet moved to the crate root (`tusk_exec::build`, ...).
pub mod exec {
    pub use crate::build::{build, build_statement};
    pub use crate::operator::{
        apply_filter, collect, emit_chunk, ExecContext, NodeStats, Operator, StatsHandle,
    };
}

pub use build::build;
pub use error::{ExecError, Result};
pub use expr::Expr;
pub use interrupt::Interrupt;
pub use numeric::Numeric;
pub use operator::{collect, ExecContext, NodeStats, Operator};
pub use plan::{Estimate, NodeKind, Plan};
pub use value::Value;
pub use vector::{Batch, Vector};
