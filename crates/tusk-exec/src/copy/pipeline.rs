//! COPY FROM as a three-stage pipeline: reading, converting, storing.
//!
//! A load's work splits three ways, each about a third: framing records
//! and fields; converting fields into column vectors and laying them out
//! as tuples with their index keys; and storing tuples and index entries
//! in pages. Only the last needs the database, so [`run`] gives each of
//! the first two a thread of its own:
//!
//! ```text
//!   reading thread           converting thread              statement thread
//!   source.fill
//!   -> CopyReader::read_batch
//!           ==(RawBatch)==>  Converter::convert
//!                            -> Preparer::prepare ==(Prepared)==> Sink::store
//!           <==(RawBatch)==                       <==(Prepared)==  (buffers handed
//!                                                                   back for reuse)
//! ```
//!
//! At most [`DEPTH`] batches wait between two stages, so memory stays
//! bounded whatever the input's size. Batches arrive in input order and an
//! error travels in the same stream, after the batches before it: the
//! loader stores every row before the first bad one and then reports it,
//! so the error is PostgreSQL's first in row order, as with one thread.
//! When a later stage fails it drops its end of the channel; the stage
//! before it stops at its next send. Either way [`run`] returns only when
//! all three threads are done, so the source is not used after it.
//!
//! The statement thread checks the statement's interrupt (cancel,
//! `statement_timeout`) before each batch it stores.
//!
//! Progress (rows stored, bytes read) is reported by the reading thread,
//! which owns the source; the stored count comes from the loader through
//! an atomic counter.

use super::convert::Converter;
use super::load::{Loader, Sink};
use super::prepare::{Prepared, Preparer};
use super::reader::{CopyReader, RawBatch};
use super::CopyError;
use crate::interrupt::Interrupt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};

/// Batches that may wait between two stages.
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
    let (raw_tx, raw_rx) = sync_channel(DEPTH);
    let (raw_back_tx, raw_back_rx) = channel();
    let (prep_tx, prep_rx) = sync_channel(DEPTH);
    let (prep_back_tx, prep_back_rx) = channel();
    let Loader { prep, sink } = loader;
    let prep: &Preparer = prep;
    std::thread::scope(|scope| {
        let stored = &stored;
        std::thread::Builder::new()
            .name("tusk-copy-read".into())
            .spawn_scoped(scope, move || {
                read(source, reader, raw_tx, raw_back_rx, stored);
            })
            .expect("spawning the COPY reading thread");
        std::thread::Builder::new()
            .name("tusk-copy-convert".into())
            .spawn_scoped(scope, move || {
                convert(converter, prep, raw_rx, raw_back_tx, prep_tx, prep_back_rx);
            })
            .expect("spawning the COPY converting thread");
        store(sink, prep_rx, prep_back_tx, stored, interrupt)
    })
}

/// The reading thread: fills and frames until the input ends, an error is
/// sent, or the converting thread has gone.
fn read(
    source: &mut dyn CopySource,
    mut reader: CopyReader,
    tx: SyncSender<Result<RawBatch, CopyError>>,
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
            if tx.send(Ok(batch)).is_err() {
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

/// The converting thread: converts and prepares each batch in order until
/// the stream ends, brings an error, or the statement thread has gone.
fn convert(
    converter: &Converter,
    prep: &Preparer,
    rx: Receiver<Result<RawBatch, CopyError>>,
    raw_back: Sender<RawBatch>,
    tx: SyncSender<Result<Prepared, CopyError>>,
    back: Receiver<Prepared>,
) {
    for item in rx {
        let raw = match item {
            Ok(raw) => raw,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let mut c = converter.convert(raw);
        let mut out = back.try_recv().unwrap_or_default();
        let prepared = prep.prepare(&mut c, &mut out);
        let _ = raw_back.send(c.batch);
        let stop = prepared.is_err();
        if tx.send(prepared.map(|()| out)).is_err() || stop {
            return;
        }
    }
}

/// The statement thread's side: stores batches in order until the stream
/// ends (all stored) or brings an error.
fn store(
    sink: &mut Sink,
    rx: Receiver<Result<Prepared, CopyError>>,
    back: Sender<Prepared>,
    stored: &AtomicU64,
    interrupt: &Interrupt,
) -> Result<u64, CopyError> {
    for item in rx {
        interrupt.check()?;
        let p = item?;
        sink.store(&p)?;
        stored.store(sink.rows, Ordering::Relaxed);
        let _ = back.send(p);
    }
    Ok(sink.rows)
}
