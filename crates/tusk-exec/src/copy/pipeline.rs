//! COPY FROM as a two-stage pipeline: reading and converting on one
//! thread, checking and storing on the statement's.
//!
//! A load spends about half its time framing and converting fields and
//! half laying out tuples and writing pages. The first half needs nothing
//! of the database, so [`run`] moves it to a thread of its own:
//!
//! ```text
//!   reading thread                          statement thread
//!   source.fill -> CopyReader::read_batch
//!   -> Converter::convert  ==(Converted)==>  Loader::load (check, lay out, store)
//!                          <==(RawBatch)===  (buffers handed back for reuse)
//! ```
//!
//! At most [`DEPTH`] converted batches wait between the two, so memory
//! stays bounded whatever the input's size. Batches arrive in input order
//! and an error travels in the same stream, after the batches before it:
//! the loader stores every row before the first bad one and then reports
//! it, so the error is PostgreSQL's first in row order, as with one thread.
//! When the loader fails it drops its end of the channel; the reading
//! thread's next send fails and it stops. Either way [`run`] returns only
//! when both threads are done, so the source is not used after it.
//!
//! The statement thread checks the statement's interrupt (cancel,
//! `statement_timeout`) before each batch it stores.
//!
//! Progress (rows stored, bytes read) is reported by the reading thread,
//! which owns the source; the stored count comes from the loader through
//! an atomic counter.

use super::convert::{Converted, Converter};
use super::load::Loader;
use super::reader::{CopyReader, RawBatch};
use super::CopyError;
use crate::interrupt::Interrupt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};

/// Converted batches that may wait for the loader.
pub const DEPTH: usize = 4;

/// Where COPY FROM's input comes from (a file, a client's stream). Used
/// by the reading thread only.
pub trait CopySource: Send {
    /// Reads the next piece of input into `reader`; 0 at its end.
    fn fill(&mut self, reader: &mut CopyReader) -> Result<usize, CopyError>;
    /// The data ended at `\.` before the input did: what is left is read
    /// and dropped (a client's stream must be consumed to its end).
    fn drain(&mut self) -> Result<(), CopyError> {
        Ok(())
    }
    /// `rows` rows stored from `bytes` bytes read so far.
    fn progress(&mut self, rows: u64, bytes: u64) {
        let _ = (rows, bytes);
    }
}

/// Loads everything `source` delivers through `reader`, `converter` and
/// `loader` (see the module doc); returns the rows stored.
pub fn run(
    source: &mut dyn CopySource,
    reader: CopyReader,
    converter: &Converter,
    loader: &mut Loader,
    interrupt: &Interrupt,
) -> Result<u64, CopyError> {
    let stored = AtomicU64::new(0);
    let (tx, rx) = sync_channel(DEPTH);
    let (back_tx, back_rx) = channel();
    std::thread::scope(|scope| {
        let stored = &stored;
        std::thread::Builder::new()
            .name("tusk-copy-read".into())
            .spawn_scoped(scope, move || {
                read(source, reader, converter, tx, back_rx, stored);
            })
            .expect("spawning the COPY reading thread");
        store(loader, rx, back_tx, stored, interrupt)
    })
}

/// The reading thread: fills, frames and converts until the input ends,
/// an error is sent, or the loader has gone.
fn read(
    source: &mut dyn CopySource,
    mut reader: CopyReader,
    converter: &Converter,
    tx: SyncSender<Result<Converted, CopyError>>,
    back: Receiver<RawBatch>,
    stored: &AtomicU64,
) {
    let mut at_end = false;
    while !reader.is_done() {
        if !at_end {
            match source.fill(&mut reader) {
                Ok(0) => {
                    reader.finish();
                    at_end = true;
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        loop {
            let mut batch = back.try_recv().unwrap_or_default();
            if let Err(e) = reader.read_batch(&mut batch) {
                let _ = tx.send(Err(e));
                return;
            }
            if batch.rows() == 0 {
                break;
            }
            if tx.send(Ok(converter.convert(batch))).is_err() {
                return;
            }
            source.progress(stored.load(Ordering::Relaxed), reader.bytes_in);
        }
    }
    if !at_end {
        if let Err(e) = source.drain() {
            let _ = tx.send(Err(e));
        }
    }
}

/// The statement thread's side: stores batches in order until the stream
/// ends (all stored) or brings an error.
fn store(
    loader: &mut Loader,
    rx: Receiver<Result<Converted, CopyError>>,
    back: Sender<RawBatch>,
    stored: &AtomicU64,
    interrupt: &Interrupt,
) -> Result<u64, CopyError> {
    for item in rx {
        interrupt.check()?;
        let mut c = item?;
        loader.load(&mut c)?;
        stored.store(loader.rows, Ordering::Relaxed);
        let _ = back.send(c.batch);
    }
    Ok(loader.rows)
}
