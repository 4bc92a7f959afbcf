//! The WAL writer: a background thread that writes the WAL buffer out
//! when it passes `wal_buffers`, and flushes the WAL every
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
//! Writing full buffers here takes the `write` system calls (the kernel's
//! copy into its page cache: a large part of a bulk load's cost, which logs
//! every page it fills) off the sessions that insert the records; they
//! wait only if this thread falls four buffers behind (see `wal`).
//!
//! Each round that writes nothing behind also allocates the WAL ahead of its end
//! ([`Wal::prepare_ahead`], see "Preallocation" in `wal`), so that commits
//! overwrite blocks that already exist and their `fdatasync` has no file
//! metadata to write.

use crate::wal::{Wal, Work};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The running WAL writer.
pub struct WalWriter {
    wal: Arc<Wal>,
    thread: Option<JoinHandle<()>>,
}

impl WalWriter {
    pub fn start(wal: Arc<Wal>, delay: Duration) -> std::io::Result<WalWriter> {
        let w = wal.clone();
        let thread = std::thread::Builder::new()
            .name("tusk walwriter".into())
            .spawn(move || loop {
                // An error shows up again at the next synchronous flush or
                // at the inserting session's own write.
                match w.wait_for_work(delay) {
                    Work::Stop => return,
                    Work::WriteBehind => {
                        let _ = w.write_behind();
                    }
                    Work::Timeout => {
                        if w.insert_lsn() > w.flushed_lsn() {
                            let _ = w.flush_all();
                        }
                        // Not while writing behind a bulk load: its large
                        // writes extend the file themselves (see `wal`).
                        let _ = w.prepare_ahead();
                    }
                }
            })?;
        Ok(WalWriter {
            wal,
            thread: Some(thread),
        })
    }
}

impl Drop for WalWriter {
    fn drop(&mut self) {
        self.wal.stop_writer();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
