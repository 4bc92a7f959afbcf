//! Parallel query: the Gather node and what its participants share.
//!
//! Participants are threads: the leader and `max_parallel_workers_per_gather`
//! workers, each with its own operator tree built from the same plan. What
//! they share is per node: a Parallel Seq Scan hands out blocks through one
//! counter (`scan`), a Parallel Hash Join builds one table in DSA chunks
//! (`hashjoin::shared`). Each such node owns its shared state and creates
//! it before the participants start; [`state`] keeps the registry, the abort
//! flag and the [`Phaser`] barrier, [`gather`] runs the participants.

pub mod gather;
pub mod state;

pub use gather::Gather;
pub use state::{InitSharedFn, NodeShared, ParallelState, Phaser};
