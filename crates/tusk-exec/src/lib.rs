//! # tusk-exec: the batch-at-a-time executor
//!
//! Plans ([`plan::Plan`]) come from the SQL layer; [`exec::build`] turns them
//! into operators that pull [`vector::Batch`]es of column vectors from their
//! children. Per-row work happens in tight loops over typed arrays inside an
//! operator; the dynamic dispatch between operators happens once per batch.
//!
//! | module | what |
//! |---|---|
//! | `vector`, `value`, `numeric` | column vectors, single values, the decimal type |
//! | `expr`, `cast` | scalar expressions, vectorised, with PostgreSQL's error rules |
//! | `scan` | heap sequential scan, `generate_series`, literal rows |
//! | `join`, `hashkey` | inner hash join (resumable pipelined probe, spilling) |
//! | `slots` | the hash table's slots: open addressing over key tags, chains of equal tags |
//! | `shared_table` | the Parallel Hash Join's shared table in DSA chunks |
//! | `spill` | spill files |
//! | `parallel` | Gather, worker threads, shared state |
//! | `agg` | plain and grouped aggregation |
//! | `sort` | ORDER BY |
//! | `dml` | INSERT and DELETE sinks |
//! | `interrupt` | cancel requests, `statement_timeout`: checked once per batch |

pub mod agg;
pub mod cast;
pub mod dml;
pub mod error;
pub mod exec;
pub mod expr;
pub mod hashkey;
pub mod interrupt;
pub mod join;
pub mod numeric;
pub mod parallel;
pub mod plan;
pub mod scan;
mod shared_table;
mod slots;
pub mod sort;
pub mod spill;
pub mod value;
pub mod vector;

pub use error::{ExecError, Result};
pub use exec::{build, ExecContext, NodeStats, Operator};
pub use expr::Expr;
pub use interrupt::Interrupt;
pub use numeric::Numeric;
pub use plan::{Estimate, NodeKind, Plan};
pub use value::Value;
pub use vector::{Batch, Vector};
