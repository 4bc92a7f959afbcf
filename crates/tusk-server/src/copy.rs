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

    /// Fills `buf` from the CopyData messages at hand: it waits for the
    /// client only while nothing is filled yet. A client sends a message
    /// per row (libpq's `PQputCopyData`, as pgbench -i does), so returning
    /// one message per call would hand the COPY pipeline a batch of one
    /// row at a time.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut filled = 0;
        loop {
            if self.at < self.pending.len() {
                let n = (buf.len() - filled).min(self.pending.len() - self.at);
                buf[filled..filled + n].copy_from_slice(&self.pending[self.at..self.at + n]);
                self.at += n;
                filled += n;
                if filled == buf.len() {
                    return Ok(filled);
                }
            }
            if self.ended || (filled > 0 && !self.conn.has_buffered_message()) {
                return Ok(filled);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::{Stream, Transport};
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    fn copy_data(row: &[u8]) -> Vec<u8> {
        let mut m = vec![b'd'];
        m.extend_from_slice(&(row.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(row);
        m
    }

    /// Rows that arrived one CopyData message each come out of one read,
    /// as far as they are at hand; the read waits only when none is.
    #[test]
    fn read_takes_every_message_at_hand() {
        let (server, mut client) = UnixStream::pair().unwrap();
        let mut conn = Conn::new(Transport::Plain(Stream::Unix(server)));
        let mut copy = WireCopy::new(&mut conn);
        let mut sent = Vec::new();
        for row in [&b"1\ta\n"[..], b"2\tb\n", b"3\tc\n"] {
            sent.extend_from_slice(&copy_data(row));
        }
        sent.extend_from_slice(&[b'c', 0, 0, 0, 4]);
        client.write_all(&sent).unwrap();
        let mut buf = [0u8; 64];
        let n = copy.read(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"1\ta\n2\tb\n3\tc\n");
        assert_eq!(copy.read(&mut buf).unwrap(), 0);
        // A buffer smaller than a message takes it in parts.
        let (server, mut client) = UnixStream::pair().unwrap();
        client.write_all(&copy_data(b"12345\n")).unwrap();
        client.write_all(&[b'c', 0, 0, 0, 4]).unwrap();
        let mut conn = Conn::new(Transport::Plain(Stream::Unix(server)));
        let mut copy = WireCopy::new(&mut conn);
        let mut small = [0u8; 4];
        assert_eq!(copy.read(&mut small).unwrap(), 4);
        assert_eq!(&small, b"1234");
        assert_eq!(copy.read(&mut small).unwrap(), 2);
        assert_eq!(&small[..2], b"5\n");
        assert_eq!(copy.read(&mut small).unwrap(), 0);
    }
}
