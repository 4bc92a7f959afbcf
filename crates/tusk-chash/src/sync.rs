//! The atomics the tables use: std's normally, loom's under `--cfg loom` so
//! that the loom models exercise exactly the code the engine runs.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Called in every wait loop: a pause hint normally, a yield under loom (loom
/// must be told that a thread cannot progress on its own).
#[inline]
pub(crate) fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
