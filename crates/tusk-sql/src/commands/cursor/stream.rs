//! A cursor's rows, computed by a thread of its own.
//!
//! A cursor outlives the statement that declares it: FETCH after FETCH
//! pulls its rows, interleaved with the session's other statements. The
//! executor's operator trees are bound to one thread (they share
//! `Rc`-counted state), and a session moves between statement threads, so
//! a cursor's plan runs on a thread of its own, which answers the
//! session's requests one at a time ([`Request`]). The plan runs with the
//! snapshot, settings and interrupt flag of the declaring statement (a
//! cancel request stops it like any statement).
//!
//! The thread serves rows in one of two ways:
//!
//! - **Streaming** (`Next`): the plan's next batch, computed when asked
//!   for. A forward-only cursor over a huge query holds a batch, never the
//!   result.
//! - **From a store** (`Fill`, `Range`): the plan's rows are appended, as
//!   far as a request needs them, to a [`TupleStore`] (within `work_mem`,
//!   spilling the oldest rows to a file, as PostgreSQL's tuplestore does),
//!   and rows are read back by number, forward or backward. A SCROLL
//!   cursor starts so. A cursor PostgreSQL makes scrollable on its own (a
//!   plan that can run backward) streams until it first goes back: then
//!   `Materialize` runs its plan again from the start, with the same
//!   snapshot, into a store (the rows and their order are the same).
//!
//! `Hold` (the commit of a WITH HOLD cursor's transaction) computes the
//! remaining rows into the store — every row for a scrollable cursor, the
//! rows not yet fetched for another — and drops the plan, so no cursor
//! reads relations after its transaction has released their locks.
//!
//! Dropping the [`CursorThread`] (CLOSE, the end of the transaction)
//! closes the request channel; the thread ends, and the drop waits for it.

use crate::error::SqlError;
use crate::session::Result;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use tusk_exec::memory::WorkMem;
use tusk_exec::plan::Statement;
use tusk_exec::tuplestore::TupleStore;
use tusk_exec::{Batch, ExecError};

/// What the cursor's thread needs to run its plan.
pub(crate) struct RunParts {
    pub db: std::sync::Arc<tusk_storage::Database>,
    pub gucs: crate::guc::Gucs,
    pub interrupt: tusk_exec::Interrupt,
    pub env: std::sync::Arc<tusk_exec::env::SessionEnv>,
    pub snapshot: tusk_storage::Snapshot,
}

/// A request to the cursor's thread.
enum Request {
    /// The plan's next batch (streaming).
    Next,
    /// Start a store from the plan's first row, running the plan again
    /// if it has produced rows already.
    Materialize,
    /// Store rows until there are `to` or the plan ends.
    Fill(u64),
    /// Stored rows `from..to` (all stored).
    Range(u64, u64),
    /// Compute every remaining row into the store (from the first row if
    /// `from_start`) and drop the plan.
    Hold { from_start: bool },
}

/// The thread's answer.
enum Reply {
    Batch(Option<Batch>),
    /// Rows stored, and whether the plan has ended.
    Stored(u64, bool),
}

type Answer = std::result::Result<Reply, ExecError>;

/// The session's end of a cursor's thread.
pub(crate) struct CursorThread {
    tx: Option<Sender<Request>>,
    rx: Receiver<Answer>,
    thread: Option<JoinHandle<()>>,
}

impl CursorThread {
    /// Starts a thread for `stmt`; with `store`, its rows go to a store
    /// from the start (a SCROLL cursor).
    pub(crate) fn start(
        name: &str,
        stmt: Statement,
        parts: RunParts,
        store: bool,
    ) -> Result<CursorThread> {
        let (tx, requests) = channel::<Request>();
        let (answers, rx) = channel::<Answer>();
        let thread =
            crate::session::spawn_statement_thread(format!("tusk cursor {name}"), move || {
                serve(stmt, parts, store, requests, answers)
            })
            .map_err(|e| SqlError::new(format!("could not start a cursor thread: {e}")))?;
        Ok(CursorThread {
            tx: Some(tx),
            rx,
            thread: Some(thread),
        })
    }

    fn ask(&self, r: Request) -> Result<Reply> {
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(r).is_ok());
        match sent.then(|| self.rx.recv()) {
            Some(Ok(answer)) => Ok(answer?),
            // The thread ended without a word: it panicked.
            _ => Err(SqlError::new("cursor thread failed")),
        }
    }

    /// The plan's next batch, `None` at the end (streaming).
    pub(crate) fn next(&self) -> Result<Option<Batch>> {
        match self.ask(Request::Next)? {
            Reply::Batch(b) => Ok(b),
            Reply::Stored(..) => Ok(None),
        }
    }

    /// Switches to a store holding the rows from the first one.
    pub(crate) fn materialize(&self) -> Result<()> {
        self.ask(Request::Materialize).map(|_| ())
    }

    /// Stores rows until there are `to`; returns the rows stored and
    /// whether they are all of them.
    pub(crate) fn fill(&self, to: u64) -> Result<(u64, bool)> {
        self.stored(Request::Fill(to))
    }

    /// Stored rows `from..to`.
    pub(crate) fn range(&self, from: u64, to: u64) -> Result<Batch> {
        match self.ask(Request::Range(from, to))? {
            Reply::Batch(Some(b)) => Ok(b),
            _ => Err(SqlError::new("cursor rows out of range")),
        }
    }

    /// Computes the remaining rows into the store (see the module doc);
    /// returns the rows stored.
    pub(crate) fn hold(&self, from_start: bool) -> Result<u64> {
        self.stored(Request::Hold { from_start }).map(|(n, _)| n)
    }

    fn stored(&self, r: Request) -> Result<(u64, bool)> {
        match self.ask(r)? {
            Reply::Stored(n, done) => Ok((n, done)),
            Reply::Batch(_) => Err(SqlError::new("cursor thread answered out of turn")),
        }
    }
}

impl Drop for CursorThread {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The thread's loop: builds the plan and answers requests until the
/// session drops its end.
fn serve(
    stmt: Statement,
    parts: RunParts,
    store: bool,
    requests: Receiver<Request>,
    answers: Sender<Answer>,
) {
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
    let mut rows = Rows {
        op: None,
        store: store.then(|| TupleStore::new(&stmt.root.output, WorkMem::sort(&ctx))),
        produced: 0,
        ended: false,
    };
    let build = |rows: &mut Rows| -> std::result::Result<(), ExecError> {
        rows.op = Some(tusk_exec::build::build_statement(&stmt, &ctx)?);
        rows.produced = 0;
        rows.ended = false;
        Ok(())
    };
    let mut started = build(&mut rows);
    for request in requests {
        let answer = match std::mem::replace(&mut started, Ok(())) {
            Err(e) => Err(e),
            Ok(()) => match request {
                Request::Next => rows.pull().map(Reply::Batch),
                Request::Materialize => {
                    if rows.store.is_none() {
                        rows.store = Some(TupleStore::new(&stmt.root.output, WorkMem::sort(&ctx)));
                        if rows.produced > 0 || rows.ended {
                            build(&mut rows).map(|_| Reply::Stored(0, false))
                        } else {
                            Ok(Reply::Stored(0, false))
                        }
                    } else {
                        Ok(Reply::Stored(0, false))
                    }
                }
                Request::Fill(to) => rows.fill(to),
                Request::Range(from, to) => match rows.store.as_mut() {
                    Some(s) if to <= s.len() => s.range(from, to).map(|b| Reply::Batch(Some(b))),
                    _ => Ok(Reply::Batch(None)),
                },
                Request::Hold { from_start } => {
                    let rebuild = rows.store.is_none() && from_start && rows.produced > 0;
                    if rows.store.is_none() {
                        rows.store = Some(TupleStore::new(&stmt.root.output, WorkMem::sort(&ctx)));
                    }
                    let filled = if rebuild {
                        build(&mut rows).and_then(|_| rows.fill(u64::MAX))
                    } else {
                        rows.fill(u64::MAX)
                    };
                    rows.op = None;
                    filled
                }
            },
        };
        if answers.send(answer).is_err() {
            return;
        }
    }
}

/// The plan and the store on the cursor's thread.
struct Rows {
    op: Option<Box<dyn tusk_exec::operator::Operator>>,
    store: Option<TupleStore>,
    /// Rows the plan has produced since it was built.
    produced: u64,
    ended: bool,
}

impl Rows {
    fn pull(&mut self) -> std::result::Result<Option<Batch>, ExecError> {
        if self.ended {
            return Ok(None);
        }
        let Some(op) = self.op.as_mut() else {
            return Ok(None);
        };
        match op.next()? {
            Some(b) => {
                self.produced += b.len as u64;
                Ok(Some(b))
            }
            None => {
                self.ended = true;
                self.op = None;
                Ok(None)
            }
        }
    }

    fn fill(&mut self, to: u64) -> Answer {
        loop {
            let stored = self.store.as_ref().map_or(0, |s| s.len());
            if stored >= to || self.ended || self.op.is_none() {
                return Ok(Reply::Stored(stored, self.ended || self.op.is_none()));
            }
            if let Some(b) = self.pull()? {
                if let Some(s) = self.store.as_mut() {
                    s.append(&b)?;
                }
            }
        }
    }
}
