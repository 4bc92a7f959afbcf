//! Guarding recursion: `stack depth limit exceeded` instead of a crash.
//!
//! Evaluating a bound expression recurses once per level of nesting. Chains
//! that users write long (`a + b + c ...`, `x OR y OR ...`, `a || b || ...`)
//! are flattened into n-ary nodes when they are built, so their length costs
//! no depth; what remains deep is genuine nesting (`-(-(-(...)))`,
//! `f(f(f(...)))`, CASE inside CASE), which the parser bounds.
//!
//! Every recursive step of the evaluator goes through [`guarded`], which
//! does two things:
//! - it counts the depth per thread and, beyond [`MAX_DEPTH`] levels, fails
//!   with PostgreSQL's `stack depth limit exceeded` (54001, with its HINT
//!   about `max_stack_depth`), as `check_stack_depth()` does in PostgreSQL;
//! - below that limit it never overflows: when less than [`RED_ZONE`] bytes
//!   of the thread's stack remain, the step continues on a fresh heap-allocated
//!   stack segment (the `stacker` crate), so the limit does not depend on how
//!   big the calling thread's stack is (session threads, parallel workers and
//!   test threads all differ).
//!
//! The binder and the rewrite passes can use the same guard for their own
//! recursion over the parse tree and the plan.

use crate::error::{sqlstate, ExecError, Result};
use std::cell::Cell;

/// Deepest nesting evaluated before `stack depth limit exceeded`.
///
/// PostgreSQL's limit is in bytes (`max_stack_depth`, 2MB by default), which
/// allows a few thousand levels of nested operators; this one is in levels.
pub const MAX_DEPTH: u32 = 10_000;

/// Stack bytes that must remain before a step runs on the current stack.
pub const RED_ZONE: usize = 128 * 1024;

/// Size of each extra stack segment.
const SEGMENT: usize = 4 * 1024 * 1024;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// PostgreSQL's error for too deep a recursion (54001).
pub fn stack_depth_exceeded() -> ExecError {
    ExecError::coded(
        sqlstate::STATEMENT_TOO_COMPLEX,
        "stack depth limit exceeded",
    )
    .with_hint(
        "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), \
         after ensuring the platform's stack depth limit is adequate.",
    )
}

/// Runs one level of a recursion: fails beyond [`MAX_DEPTH`] nested calls,
/// and runs `f` on a fresh stack segment when the current one is nearly used.
pub fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let depth = DEPTH.with(|d| {
        let v = d.get() + 1;
        d.set(v);
        v
    });
    // Restores the count however `f` leaves (including by unwinding).
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
        }
    }
    let _leave = Leave;
    if depth > MAX_DEPTH {
        return Err(stack_depth_exceeded());
    }
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Like [`guarded`] for recursions that cannot fail (walkers): past
/// [`MAX_DEPTH`] they still run, on grown stacks.
pub fn grow<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(n: u32) -> Result<u32> {
        if n == 0 {
            return Ok(0);
        }
        guarded(|| Ok(nest(n - 1)? + 1))
    }

    #[test]
    fn deep_recursion_runs_until_the_limit() {
        assert_eq!(nest(MAX_DEPTH).unwrap(), MAX_DEPTH);
        let e = nest(MAX_DEPTH + 1).unwrap_err();
        assert_eq!(e.code, "54001");
        assert_eq!(e.message, "stack depth limit exceeded");
        assert!(e.hint.unwrap().contains("max_stack_depth"));
        // The count is restored after an error.
        assert_eq!(nest(10).unwrap(), 10);
    }

    #[test]
    fn small_thread_stacks_do_not_overflow() {
        let h = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| nest(MAX_DEPTH).unwrap())
            .unwrap();
        assert_eq!(h.join().unwrap(), MAX_DEPTH);
    }
}
