//! Software prefetching: the one place tusk issues the CPU's prefetch
//! instruction (the hash join's pipelines and the TidStore's batched
//! lookups come here).

/// Hints the CPU to bring the cache line holding `*p` into its L1 cache.
/// Only a hint: it never faults and has no visible effect, so any address is
/// acceptable — a guessed one, or one that is freed before the line arrives.
/// A no-op on targets without a prefetch instruction.
#[inline(always)]
pub fn prefetch_line<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is an SSE instruction (part of the x86-64 baseline,
    // so it exists on every CPU this code runs on); it does not access memory
    // architecturally and cannot fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
