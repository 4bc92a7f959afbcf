//! # tusk-radix (doc written below)

pub mod alloc;
pub mod simd;
pub mod tidstore;
pub mod tree;

pub use alloc::{LocalAlloc, NodeAlloc, RelPtr};
pub use tidstore::{Tid, TidStore, MAX_OFFSET};
pub use tree::{RadixTree, TreeStats};
