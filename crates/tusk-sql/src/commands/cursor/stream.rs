//! A cursor's rows, computed by its own thread.
//!
//! A cursor outlives the statement that declares it: FETCH after FETCH
//! pulls its rows, interleaved with the session's other statements. The
//! executor's operator trees are bound to one thread (they share
//! `Rc`-counted state), and a session moves between statement threads, so
//! a cursor's plan runs on a thread of its own: it builds the operator tree
//! and sends its batches through a channel of [`AHEAD`] batches, blocking
//! when the session has not taken them. The rows are thus computed as they
//! are fetched — a cursor over a huge query holds a batch or two, never
//! the result — and the plan runs with the snapshot, settings and
//! interrupt flag of the declaring statement (a cancel request stops it
//! like any statement).
//!
//! Dropping the stream (CLOSE, the end of the transaction) closes the
//! channel; the thread notices at its next send and ends, and the drop
//! waits for it, so no cursor reads relations after its transaction has
//! released their locks.

use crate::error::SqlError;
use crate::session::Result;
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;
use tusk_exec::plan::Statement;
use tusk_exec::Batch;

/// Batches the thread computes ahead of the fetches.
pub(crate) const AHEAD: usize = 1;

/// What the cursor's thread needs to run its plan.
pub(crate) struct RunParts {
    pub db: std::sync::Arc<tusk_storage::Database>,
    pub gucs: crate::guc::Gucs,
    pub interrupt: tusk_exec::Interrupt,
    pub env: std::sync::Arc<tusk_exec::env::SessionEnv>,
    pub snapshot: tusk_storage::Snapshot,
}

type Produced = std::result::Result<Option<Batch>, tusk_exec::ExecError>;

/// The receiving end of a cursor's thread.
pub(crate) struct CursorStream {
    rx: Option<Receiver<Produced>>,
    thread: Option<JoinHandle<()>>,
    done: bool,
}

impl CursorStream {
    /// Starts running `stmt` on a thread of its own.
    pub(crate) fn start(name: &str, stmt: Statement, parts: RunParts) -> Result<CursorStream> {
        let (tx, rx) = sync_channel::<Produced>(AHEAD);
        let thread =
            crate::session::spawn_statement_thread(format!("tusk cursor {name}"), move || {
                let ctx = crate::session::exec_context(
                    &parts.db,
                    &parts.gucs,
                    &parts.interrupt,
                    &parts.env,
                    parts.snapshot,
                    false,
                    0,
                );
                let _env = tusk_exec::env::enter(&parts.env);
                let mut op = match tusk_exec::build::build_statement(&stmt, &ctx) {
                    Ok(op) => op,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                loop {
                    let next = op.next();
                    let last = !matches!(next, Ok(Some(_)));
                    if tx.send(next).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(|e| SqlError::new(format!("could not start a cursor thread: {e}")))?;
        Ok(CursorStream {
            rx: Some(rx),
            thread: Some(thread),
            done: false,
        })
    }

    /// The next batch, `None` at the end; the plan's error if it failed.
    pub(crate) fn next(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        let got = match self.rx.as_ref().map(|rx| rx.recv()) {
            Some(Ok(p)) => p,
            // The thread ended without a word: it panicked.
            Some(Err(_)) | None => Err(tusk_exec::ExecError::new("cursor thread failed")),
        };
        if !matches!(got, Ok(Some(_))) {
            self.done = true;
        }
        Ok(got?)
    }
}

impl Drop for CursorStream {
    fn drop(&mut self) {
        // Closing the channel makes the thread's next send fail.
        self.rx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
