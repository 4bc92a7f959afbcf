//! A client connection's byte stream: plain TCP or TLS, read in whole
//! messages and written through one output buffer.
//!
//! The thread serving a session owns its connection and blocks on it, as a
//! PostgreSQL backend does on its socket: a query costs a poll, a read and a
//! write system call, with no hand-off between threads. (In the session
//! pool an idle session waits in the pool's `epoll` instead, and the read
//! after its wake-up skips the poll: [`Conn::skip_next_wait`].) Output collects in [`Conn::out`]
//! and goes to the socket at ReadyForQuery, at a Flush message, after a
//! notice, and whenever more than [`FLUSH_AT`] bytes are waiting (so a large
//! result streams instead of piling up in memory).
//!
//! ## Waiting for the next message
//!
//! Once the session is past authentication, a read on a plain socket first
//! waits in `poll(2)` for the socket to become readable, as a PostgreSQL
//! backend waits in its latch's `epoll` before `recv`. A thread asleep in
//! a blocking `recv` sits on the socket's wait queue with a wake function
//! that does not look at the event, so it is woken, to find nothing and
//! sleep again, every time the client *reads* our reply (the kernel's
//! `unix_write_space` / `sk_write_space` wakes writers waiting for room on
//! the same queue). That was a second context switch per query, and on
//! pgbench -S the largest cost in the kernel. A `poll` waiter is woken for
//! readable data only. TLS streams read as before: rustls may hold
//! decrypted bytes that the socket does not show.
//!
//! Backend messages are encoded with pgwire's message types
//! ([`Conn::send`]); DataRow messages, the only ones sent per row, are
//! written straight into the buffer by `types`.

use crate::error::{codes, Failure};
use crate::frontend::{self, Frame};
use bytes::BytesMut;
use pgwire::messages::Message as PgMessage;
use pgwire::tokio::tokio_rustls::rustls;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Output waiting beyond this many bytes is written out at once.
pub const FLUSH_AT: usize = 64 * 1024;

/// An accepted socket: TCP, or a Unix-domain socket (local clients; no
/// TLS on it, as in PostgreSQL).
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    /// Another handle on the same socket (to shut it from another thread).
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        }
    }
}

impl AsFd for Stream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Stream::Tcp(s) => s.as_fd(),
            Stream::Unix(s) => s.as_fd(),
        }
    }
}

/// Reads and writes are `recv(2)` and `send(2)` made directly by rustix,
/// as std makes them (`send` with `MSG_NOSIGNAL`) but without the C
/// library's wrapper, which turns thread cancellation on and off around
/// every call (a query pays for two of them).
impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, _) = rustix::net::recv(self.as_fd(), buf, rustix::net::RecvFlags::empty())?;
        Ok(n)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(rustix::net::send(
            self.as_fd(),
            buf,
            rustix::net::SendFlags::NOSIGNAL,
        )?)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The connection's transport.
pub enum Transport {
    Plain(Stream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl Transport {
    /// The client's address: `None` on a Unix-domain socket.
    pub fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        match self {
            Transport::Plain(Stream::Tcp(s)) => s.peer_addr().ok(),
            Transport::Plain(Stream::Unix(_)) => None,
            Transport::Tls(s) => s.get_ref().peer_addr().ok(),
        }
    }

    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.set_read_timeout(t),
            Transport::Tls(s) => s.get_ref().set_read_timeout(t),
        }
    }

    /// The socket of a plain connection (`None` under TLS).
    pub fn socket(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        match self {
            Transport::Plain(s) => Some(s.as_fd()),
            Transport::Tls(_) => None,
        }
    }

    /// Waits in `poll` until a plain socket is readable (data, EOF or an
    /// error, which the read that follows reports); returns at once for
    /// TLS. See the module doc.
    fn wait_readable(&self) {
        use rustix::event::{poll, PollFd, PollFlags};
        let Some(fd) = self.socket() else {
            return;
        };
        loop {
            match poll(&mut [PollFd::from_borrowed_fd(fd, PollFlags::IN)], None) {
                Err(rustix::io::Errno::INTR) => continue,
                _ => return,
            }
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
        }
    }
}

/// Why reading a message failed.
#[derive(Debug)]
pub enum ReadError {
    /// The client went away (EOF or a socket error).
    Closed,
    /// The stream broke the protocol; report FATAL and close.
    Protocol(Failure),
}

/// A connection with its input and output buffers.
pub struct Conn {
    pub io: Transport,
    input: Vec<u8>,
    /// Start of unread input.
    pos: usize,
    /// Encoded messages not yet written.
    pub out: Vec<u8>,
    scratch: BytesMut,
    /// Where socket reads land before they join `input`.
    chunk: Box<[u8; READ_CHUNK]>,
    /// Wait in `poll` before each socket read (see the module doc); set
    /// once the startup's read timeout is gone.
    poll_before_read: bool,
    /// The socket is known to be readable: the next read need not wait.
    readable: bool,
}

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 16 * 1024;

impl Conn {
    pub fn new(io: Transport) -> Conn {
        Conn {
            io,
            input: Vec::with_capacity(8192),
            pos: 0,
            out: Vec::with_capacity(16 * 1024),
            scratch: BytesMut::with_capacity(256),
            chunk: Box::new([0; READ_CHUNK]),
            poll_before_read: false,
            readable: false,
        }
    }

    /// Ends the startup's read timeout: from now on a read waits as long
    /// as the client is idle, in `poll` on a plain socket (see the module
    /// doc).
    pub fn clear_read_timeout(&mut self) {
        let _ = self.io.set_read_timeout(None);
        self.poll_before_read = matches!(self.io, Transport::Plain(_));
    }

    /// Swaps the transport (after the TLS handshake).
    pub fn upgrade(self, f: impl FnOnce(Transport) -> io::Result<Transport>) -> io::Result<Conn> {
        let Conn {
            io,
            input,
            pos,
            out,
            scratch,
            chunk,
            poll_before_read,
            readable,
        } = self;
        Ok(Conn {
            io: f(io)?,
            input,
            pos,
            out,
            scratch,
            chunk,
            poll_before_read,
            readable,
        })
    }

    /// The socket was just reported readable (by the session pool's
    /// `epoll`): the next read goes straight to the socket.
    pub fn skip_next_wait(&mut self) {
        self.readable = true;
    }

    /// Whether the socket is known to be readable (see
    /// [`Conn::skip_next_wait`]) and no message has been read since.
    pub fn known_readable(&self) -> bool {
        self.readable
    }

    /// Whether input beyond the last message is already buffered.
    pub fn has_buffered_input(&self) -> bool {
        self.pos < self.input.len()
    }

    /// Whether [`Conn::read_message`] would return without reading the
    /// socket: a whole message, or a framing error, is already buffered.
    pub fn has_buffered_message(&self) -> bool {
        !matches!(
            frontend::next_frame(&self.input[self.pos..], false),
            Ok(None)
        )
    }

    /// The next message: its type byte (0 for a first packet) and body.
    pub fn read_message(&mut self, first: bool) -> Result<(u8, Vec<u8>), ReadError> {
        // Known readable: this message's first socket read need not wait.
        let mut skip_wait = std::mem::take(&mut self.readable);
        loop {
            match frontend::next_frame(&self.input[self.pos..], first) {
                Err(f) => return Err(ReadError::Protocol(f)),
                Ok(Some(Frame { tag, body, len })) => {
                    let b = self.input[self.pos + body.0..self.pos + body.1].to_vec();
                    self.pos += len;
                    if self.pos == self.input.len() {
                        self.input.clear();
                        self.pos = 0;
                    }
                    return Ok((tag, b));
                }
                Ok(None) => {}
            }
            if self.pos > 0 {
                self.input.drain(..self.pos);
                self.pos = 0;
            }
            if self.poll_before_read && !std::mem::take(&mut skip_wait) {
                self.io.wait_readable();
            }
            let n = loop {
                match self.io.read(&mut self.chunk[..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => return Err(ReadError::Closed),
                }
            };
            self.input.extend_from_slice(&self.chunk[..n]);
            if n == 0 {
                return Err(ReadError::Closed);
            }
        }
    }

    /// Queues a backend message.
    pub fn send<M: PgMessage>(&mut self, m: M) {
        self.scratch.clear();
        match m.encode(&mut self.scratch) {
            Ok(()) => self.out.extend_from_slice(&self.scratch),
            // Only an oversized message fails to encode; say so instead.
            Err(e) => {
                self.scratch.clear();
                let f = Failure::error(
                    codes::INTERNAL_ERROR,
                    format!("could not send message: {e}"),
                );
                let _ = pgwire::messages::response::ErrorResponse::new(f.fields())
                    .encode(&mut self.scratch);
                self.out.extend_from_slice(&self.scratch);
            }
        }
    }

    /// Queues an ErrorResponse.
    pub fn send_failure(&mut self, f: &Failure) {
        self.send(pgwire::messages::response::ErrorResponse::new(f.fields()));
    }

    /// Queues a NoticeResponse (NOTICE, INFO, WARNING).
    pub fn send_notice(&mut self, n: &tusk_sql::Notice) {
        let code = if n.level == "WARNING" {
            "01000"
        } else {
            "00000"
        };
        let mut fields = vec![
            (b'S', n.level.to_string()),
            (b'V', n.level.to_string()),
            (b'C', code.to_string()),
            (b'M', n.message.clone()),
        ];
        if let Some(detail) = &n.detail {
            fields.push((b'D', detail.clone()));
        }
        self.send(pgwire::messages::response::NoticeResponse::new(fields));
    }

    /// Writes all queued output.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.io.write_all(&self.out)?;
            self.out.clear();
        }
        self.io.flush()
    }

    /// Writes queued output if enough of it is waiting.
    pub fn flush_if_full(&mut self) -> io::Result<()> {
        if self.out.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }
}
