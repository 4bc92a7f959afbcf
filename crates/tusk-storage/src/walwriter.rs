//! The WAL writer: a background thread that flushes the WAL every
//! `wal_writer_delay` (200 ms) when there is something to flush.
//!
//! Transactions with `synchronous_commit = off` do not wait for their
//! commit record to reach the disk; without this thread it would get there
//! only with the next synchronous commit, checkpoint, page eviction or full
//! WAL buffer. As in PostgreSQL, an asynchronous commit is durable at most
//! about three times `wal_writer_delay` after it was reported (here: one
//! delay plus the flush), and a crash can lose only what was committed
//! within that window — never part of a transaction.
//!
//! Each round it also allocates the WAL ahead of its end
//! ([`Wal::prepare_ahead`], see "Preallocation" in `wal`), so that commits
//! overwrite blocks that already exist and their `fdatasync` has no file
//! metadata to write.

use crate::wal::Wal;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The running WAL writer.
pub struct WalWriter {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl WalWriter {
    pub fn start(wal: Arc<Wal>, delay: Duration) -> std::io::Result<WalWriter> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("tusk walwriter".into())
            .spawn(move || loop {
                let guard = s.0.lock().unwrap_or_else(|e| e.into_inner());
                let (guard, _) =
                    s.1.wait_timeout_while(guard, delay, |stopped| !*stopped)
                        .unwrap_or_else(|e| e.into_inner());
                if *guard {
                    return;
                }
                drop(guard);
                // Errors show up again at the next synchronous flush, or
                // when a write has to allocate for itself.
                if wal.insert_lsn() > wal.flushed_lsn() {
                    let _ = wal.flush_all();
                }
                let _ = wal.prepare_ahead();
            })?;
        Ok(WalWriter {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for WalWriter {
    fn drop(&mut self) {
        *self.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
