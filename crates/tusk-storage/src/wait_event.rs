//! Announcing waits: a thread about to block on another session (a
//! heavyweight lock) or on the disk (the WAL flush at commit) says so first
//! through [`blocking`], at the places where PostgreSQL reports a wait
//! event (`pgstat_report_wait_start`).
//!
//! Storage does nothing with the announcement itself. A scheduler above it
//! installs a per-thread hook with [`set_hook`]: the server's session pool
//! runs at most one seated thread per CPU, and a seated thread that is
//! about to block gives its seat to another thread for the length of the
//! wait, instead of holding it until the pool's monitor notices the stall.
//! The hook must be cheap, must not block, and must not call back into
//! storage.

use std::cell::RefCell;

type Hook = Box<dyn Fn()>;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = const { RefCell::new(None) };
}

/// Installs (or with `None` removes) the calling thread's hook.
pub fn set_hook(hook: Option<Hook>) {
    HOOK.with(|h| *h.borrow_mut() = hook);
}

/// The calling thread is about to wait for another session or the disk.
pub fn blocking() {
    // `try_with`: a wait during thread-local destruction has no hook.
    let _ = HOOK.try_with(|h| {
        if let Ok(h) = h.try_borrow() {
            if let Some(f) = h.as_ref() {
                f();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn the_hook_runs_on_its_own_thread_only() {
        blocking();
        let calls = Rc::new(Cell::new(0));
        let c = calls.clone();
        set_hook(Some(Box::new(move || c.set(c.get() + 1))));
        blocking();
        blocking();
        assert_eq!(calls.get(), 2);
        std::thread::spawn(blocking).join().unwrap();
        assert_eq!(calls.get(), 2);
        set_hook(None);
        blocking();
        assert_eq!(calls.get(), 2);
    }
}
