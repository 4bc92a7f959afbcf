//! COPY over the wire: the connection as the [`CopyClient`] of a `COPY ...
//! FROM STDIN` or `COPY ... TO STDOUT`, as PostgreSQL's `copyfromparse.c`
//! and `copyto.c` speak to the frontend.
//!
//! * **COPY FROM STDIN.** The statement announces the stream with
//!   CopyInResponse (text format, one format code per column) and reads:
//!   each CopyData message's bytes in turn, until CopyDone (the end of the
//!   data) or CopyFail (the client gives up: `COPY from stdin failed:
//!   <its message>`, 57014). Flush and Sync are ignored, as PostgreSQL
//!   ignores them for client libraries that send them without noticing the
//!   COPY; any other message fails the COPY (`unexpected message type`).
//!   When the COPY fails before the client has finished (a bad row), the
//!   CopyData and CopyDone still on their way are dropped by the message
//!   loop, which ignores them outside a COPY.
//! * **COPY TO STDOUT.** CopyOutResponse, then the rows in CopyData
//!   messages of about 64 kB (written into the output buffer, which goes
//!   out whenever it is full), then CopyDone from [`WireCopy::finish`]
//!   before the CommandComplete. A COPY that fails midway sends only the
//!   ErrorResponse, as PostgreSQL does.
//!
//! The same happens in the simple and the extended protocol: Execute of a
//! COPY portal starts the same exchange.

use crate::conn::{Conn, ReadError};
use pgwire::messages::copy::{CopyDone, CopyInResponse, CopyOutResponse};
use std::io;
use tusk_sql::{CopyClient, CopyStream, SqlError};

/// PostgreSQL's `connection_failure`.
const CONNECTION_FAILURE: &str = "08006";

/// The connection during one statement, as its COPY client.
pub struct WireCopy<'c> {
    conn: &'c mut Conn,
    /// Unread bytes of the last CopyData message, from `at`.
    pending: Vec<u8>,
    at: usize,
    /// CopyDone arrived: the data ended.
    ended: bool,
    /// A COPY TO STDOUT has started.
    out: bool,
}

impl<'c> WireCopy<'c> {
    pub fn new(conn: &'c mut Conn) -> WireCopy<'c> {
        WireCopy {
            conn,
            pending: Vec::new(),
            at: 0,
            ended: false,
            out: false,
        }
    }

    /// After a statement succeeded: ends a COPY TO STDOUT stream
    /// (CopyDone).
    pub fn finish(self) {
        if self.out {
            self.conn.send(CopyDone::new());
        }
    }
}

fn io_error(message: String) -> io::Error {
    io::Error::other(message)
}

impl CopyClient for WireCopy<'_> {
    fn copy_in(&mut self, stream: &CopyStream) -> Result<(), SqlError> {
        let n = stream.columns as i16;
        self.conn
            .send(CopyInResponse::new(0, n, vec![0; n as usize]));
        self.conn.flush().map_err(|e| {
            SqlError::coded(
                CONNECTION_FAILURE,
                format!("could not send data to client: {e}"),
            )
        })
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.at < self.pending.len() {
                let n = buf.len().min(self.pending.len() - self.at);
                buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            let (tag, body) = match self.conn.read_message(false) {
                Ok(m) => m,
                Err(ReadError::Closed) => {
                    return Err(io_error(
                        "unexpected EOF on client connection with an open transaction".into(),
                    ))
                }
                Err(ReadError::Protocol(f)) => return Err(io_error(f.message)),
            };
            match tag {
                b'd' => {
                    self.pending = body;
                    self.at = 0;
                }
                b'c' => self.ended = true,
                b'f' => {
                    let message = body.split(|&b| b == 0).next().unwrap_or_default();
                    return Err(io_error(String::from_utf8_lossy(message).into_owned()));
                }
                b'H' | b'S' => {}
                other => {
                    return Err(io_error(format!(
                        "unexpected message type 0x{other:02X} during COPY from stdin"
                    )))
                }
            }
        }
    }

    fn copy_out(&mut self, stream: &CopyStream) -> Result<(), SqlError> {
        let n = stream.columns as i16;
        self.conn
            .send(CopyOutResponse::new(0, n, vec![0; n as usize]));
        self.out = true;
        Ok(())
    }

    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        let out = &mut self.conn.out;
        out.push(b'd');
        out.extend_from_slice(&(data.len() as u32 + 4).to_be_bytes());
        out.extend_from_slice(data);
        self.conn.flush_if_full()
    }
}
