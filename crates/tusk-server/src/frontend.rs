//! Messages from the client: framing and decoding, with every length and
//! count checked against the bytes that are really there.
//!
//! A message is a type byte, a 4-byte length that counts itself, and a
//! body; the first message of a connection (startup packet, SSLRequest,
//! CancelRequest) has no type byte. [`next_frame`] cuts one message out of
//! a buffer once it is complete; [`decode`] turns its body into a
//! [`Message`]. The two kinds of failure are PostgreSQL's:
//!
//! * A *framing* error — an unknown type byte, a length below 4 or above the
//!   limit for its type — means the stream can no longer be trusted: FATAL
//!   (08P01) and the connection closes.
//! * A *content* error — a count that promises more bytes than the message
//!   holds, a string without its terminator, bytes left over, text that is
//!   not UTF-8 — concerns one message whose boundaries are known: ERROR, and
//!   the connection goes on (an extended-query message then makes the server
//!   skip to the next Sync).
//!
//! Each body is decoded from its own slice, so a malformed message can
//! never read into the next one.

use crate::error::{codes, Failure};

/// PostgreSQL's limit for most messages (`PQ_SMALL_MESSAGE_LIMIT`).
const SMALL_LIMIT: usize = 10_000;
/// Its limit for Query, Parse, Bind, CopyData and SASL messages.
const LARGE_LIMIT: usize = 0x3fff_ffff;
/// Largest startup packet (`MAX_STARTUP_PACKET_LENGTH`).
const STARTUP_LIMIT: usize = 10_000;

/// The protocol version of the startup packet: 3.0.
pub const PROTOCOL_3_0: i32 = 3 << 16;
const CANCEL_REQUEST_CODE: i32 = (1234 << 16) | 5678;
const SSL_REQUEST_CODE: i32 = (1234 << 16) | 5679;
const GSSENC_REQUEST_CODE: i32 = (1234 << 16) | 5680;

/// The first packet of a connection.
#[derive(Debug, Clone, PartialEq)]
pub enum FirstPacket {
    SslRequest,
    GssEncRequest,
    Cancel {
        pid: i32,
        secret: i32,
    },
    Startup {
        major: u16,
        minor: u16,
        params: Vec<(String, String)>,
    },
}

/// A message of an established connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Query(String),
    Parse {
        name: String,
        query: String,
        types: Vec<u32>,
    },
    Bind {
        portal: String,
        statement: String,
        param_formats: Vec<i16>,
        params: Vec<Option<Vec<u8>>>,
        result_formats: Vec<i16>,
    },
    /// `kind` is `S` (statement) or `P` (portal).
    Describe {
        kind: u8,
        name: String,
    },
    Execute {
        portal: String,
        max_rows: i32,
    },
    Close {
        kind: u8,
        name: String,
    },
    Sync,
    Flush,
    Terminate,
    CopyData(Vec<u8>),
    CopyDone,
    CopyFail(String),
    /// A `p` message (password, SASL initial response or SASL response);
    /// its layout depends on the authentication step, see [`Reader`].
    Password(Vec<u8>),
}

impl Message {
    /// Whether an error in this message makes the server skip to Sync.
    pub fn is_extended(&self) -> bool {
        matches!(
            self,
            Message::Parse { .. }
                | Message::Bind { .. }
                | Message::Describe { .. }
                | Message::Execute { .. }
                | Message::Close { .. }
                | Message::Flush
                | Message::Sync
        )
    }
}

/// One complete message cut from the input: its type byte (0 for a first
/// packet) and where its body lies in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub tag: u8,
    pub body: (usize, usize),
    /// Bytes of the buffer the message occupies.
    pub len: usize,
}

fn limit_for(tag: u8) -> Option<usize> {
    match tag {
        b'Q' | b'P' | b'B' | b'd' | b'p' => Some(LARGE_LIMIT),
        b'D' | b'E' | b'C' | b'S' | b'H' | b'X' | b'c' | b'f' => Some(SMALL_LIMIT),
        _ => None,
    }
}

/// Cuts the next message from `buf`; `None` until it is complete.
pub fn next_frame(buf: &[u8], first: bool) -> Result<Option<Frame>, Failure> {
    if first {
        if buf.len() < 4 {
            return Ok(None);
        }
        let len = i32::from_be_bytes(buf[..4].try_into().expect("4 bytes")) as i64;
        if !(8..=STARTUP_LIMIT as i64).contains(&len) {
            return Err(Failure::fatal(
                codes::PROTOCOL_VIOLATION,
                "invalid length of startup packet",
            ));
        }
        let len = len as usize;
        return Ok((buf.len() >= len).then_some(Frame {
            tag: 0,
            body: (4, len),
            len,
        }));
    }
    let Some(&tag) = buf.first() else {
        return Ok(None);
    };
    let Some(limit) = limit_for(tag) else {
        return Err(Failure::fatal(
            codes::PROTOCOL_VIOLATION,
            format!("invalid frontend message type {tag}"),
        ));
    };
    if buf.len() < 5 {
        return Ok(None);
    }
    let len = i32::from_be_bytes(buf[1..5].try_into().expect("4 bytes")) as i64;
    if len < 4 || len - 4 > limit as i64 {
        return Err(Failure::fatal(
            codes::PROTOCOL_VIOLATION,
            "invalid message length",
        ));
    }
    let total = 1 + len as usize;
    Ok((buf.len() >= total).then_some(Frame {
        tag,
        body: (5, total),
        len: total,
    }))
}

/// A cursor over one message body that never reads past its end.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn format_error(what: &str) -> Failure {
    Failure::error(codes::PROTOCOL_VIOLATION, what)
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], Failure> {
        if self.buf.len() - self.pos < n {
            return Err(format_error("insufficient data left in message"));
        }
        let b = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }

    pub fn u8(&mut self) -> Result<u8, Failure> {
        Ok(self.bytes(1)?[0])
    }

    pub fn i16(&mut self) -> Result<i16, Failure> {
        Ok(i16::from_be_bytes(self.bytes(2)?.try_into().expect("2")))
    }

    pub fn i32(&mut self) -> Result<i32, Failure> {
        Ok(i32::from_be_bytes(self.bytes(4)?.try_into().expect("4")))
    }

    /// A NUL-terminated string, which must be UTF-8.
    pub fn cstr(&mut self) -> Result<String, Failure> {
        let rest = &self.buf[self.pos..];
        let end = string_len(rest)?;
        let s = utf8(&rest[..end])?;
        self.pos += end + 1;
        Ok(s)
    }

    /// The rest of the message.
    pub fn rest(&mut self) -> &'a [u8] {
        let r = &self.buf[self.pos..];
        self.pos = self.buf.len();
        r
    }

    /// PostgreSQL's `pq_getmsgend`: nothing may be left over.
    pub fn end(&self) -> Result<(), Failure> {
        if self.pos != self.buf.len() {
            return Err(format_error("invalid message format"));
        }
        Ok(())
    }

    /// A count read as int16 that must not be negative.
    fn count(&mut self) -> Result<usize, Failure> {
        let n = self.i16()?;
        usize::try_from(n).map_err(|_| format_error("invalid message format"))
    }
}

/// Text from the client: UTF-8, as PostgreSQL checks when the client and
/// server encodings are both UTF8.
pub fn utf8(b: &[u8]) -> Result<String, Failure> {
    utf8_str(b).map(str::to_string)
}

/// [`utf8`] without the copy.
pub fn utf8_str(b: &[u8]) -> Result<&str, Failure> {
    match std::str::from_utf8(b) {
        Ok(s) => Ok(s),
        Err(e) => {
            let at = e.valid_up_to();
            let bad: Vec<String> = b[at..]
                .iter()
                .take(e.error_len().unwrap_or(1).max(1))
                .map(|x| format!("{x:02x}"))
                .collect();
            Err(Failure::error(
                codes::CHARACTER_NOT_IN_REPERTOIRE,
                format!(
                    "invalid byte sequence for encoding \"UTF8\": 0x{}",
                    bad.join(" 0x")
                ),
            ))
        }
    }
}

/// Decodes the first packet of a connection.
pub fn decode_first(body: &[u8]) -> Result<FirstPacket, Failure> {
    let fatal = |m: &str| Failure::fatal(codes::PROTOCOL_VIOLATION, m);
    let mut r = Reader::new(body);
    let code = r
        .i32()
        .map_err(|_| fatal("invalid length of startup packet"))?;
    match code {
        SSL_REQUEST_CODE => Ok(FirstPacket::SslRequest),
        GSSENC_REQUEST_CODE => Ok(FirstPacket::GssEncRequest),
        CANCEL_REQUEST_CODE => {
            let pid = r
                .i32()
                .map_err(|_| fatal("invalid length of startup packet"))?;
            let secret = r
                .i32()
                .map_err(|_| fatal("invalid length of startup packet"))?;
            Ok(FirstPacket::Cancel { pid, secret })
        }
        _ => {
            let (major, minor) = ((code >> 16) as u16, (code & 0xffff) as u16);
            if major != 3 {
                return Err(Failure::fatal(
                    codes::FEATURE_NOT_SUPPORTED,
                    format!(
                        "unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"
                    ),
                ));
            }
            let mut params = Vec::new();
            loop {
                let name = r.cstr().map_err(|_| {
                    fatal("invalid startup packet layout: expected terminator as last byte")
                })?;
                if name.is_empty() {
                    break;
                }
                let value = r.cstr().map_err(|_| {
                    fatal("invalid startup packet layout: expected terminator as last byte")
                })?;
                params.push((name, value));
            }
            r.end().map_err(|_| {
                fatal("invalid startup packet layout: expected terminator as last byte")
            })?;
            Ok(FirstPacket::Startup {
                major,
                minor,
                params,
            })
        }
    }
}

/// The length of the NUL-terminated string at the start of `b`.
fn string_len(b: &[u8]) -> Result<usize, Failure> {
    // `from_bytes_until_nul` finds the NUL with the library's word-at-a-
    // time search (a byte loop was ten times slower on a query string).
    Ok(std::ffi::CStr::from_bytes_until_nul(b)
        .map_err(|_| format_error("invalid string in message"))?
        .count_bytes())
}

/// A Query message: its string, kept in the message's own buffer (this
/// runs for every simple query). The same checks as [`Reader::cstr`] and
/// [`Reader::end`].
fn decode_query(mut body: Vec<u8>) -> Result<Message, Failure> {
    let end = string_len(&body)?;
    if end + 1 != body.len() {
        return Err(format_error("invalid message format"));
    }
    body.truncate(end);
    match String::from_utf8(body) {
        Ok(s) => Ok(Message::Query(s)),
        Err(e) => Err(utf8(e.as_bytes()).expect_err("not UTF-8")),
    }
}

/// Decodes the body of a message of an established connection.
pub fn decode(tag: u8, body: Vec<u8>) -> Result<Message, Failure> {
    if tag == b'Q' {
        return decode_query(body);
    }
    let mut r = Reader::new(&body);
    let m = match tag {
        b'P' => {
            let name = r.cstr()?;
            let query = r.cstr()?;
            let n = r.count()?;
            let mut types = Vec::with_capacity(n.min(body.len() / 4));
            for _ in 0..n {
                types.push(r.i32()? as u32);
            }
            Message::Parse { name, query, types }
        }
        b'B' => {
            let portal = r.cstr()?;
            let statement = r.cstr()?;
            let nf = r.count()?;
            let mut param_formats = Vec::with_capacity(nf.min(body.len() / 2));
            for _ in 0..nf {
                param_formats.push(r.i16()?);
            }
            let np = r.count()?;
            let mut params = Vec::with_capacity(np.min(body.len() / 4));
            for _ in 0..np {
                let len = r.i32()?;
                params.push(match len {
                    -1 => None,
                    n if n < 0 => return Err(format_error("invalid message format")),
                    n => Some(r.bytes(n as usize)?.to_vec()),
                });
            }
            let nr = r.count()?;
            let mut result_formats = Vec::with_capacity(nr.min(body.len() / 2));
            for _ in 0..nr {
                result_formats.push(r.i16()?);
            }
            Message::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            }
        }
        b'D' | b'C' => {
            let kind = r.u8()?;
            if kind != b'S' && kind != b'P' {
                let what = if tag == b'D' { "Describe" } else { "Close" };
                return Err(format_error(&format!(
                    "invalid {what} message subtype {kind}"
                )));
            }
            let name = r.cstr()?;
            if tag == b'D' {
                Message::Describe { kind, name }
            } else {
                Message::Close { kind, name }
            }
        }
        b'E' => Message::Execute {
            portal: r.cstr()?,
            max_rows: r.i32()?,
        },
        b'S' => Message::Sync,
        b'H' => Message::Flush,
        b'X' => Message::Terminate,
        b'd' => Message::CopyData(r.rest().to_vec()),
        b'c' => Message::CopyDone,
        b'f' => Message::CopyFail(r.cstr()?),
        b'p' => Message::Password(r.rest().to_vec()),
        other => {
            return Err(Failure::fatal(
                codes::PROTOCOL_VIOLATION,
                format!("invalid frontend message type {other}"),
            ))
        }
    };
    r.end()?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn frames_wait_for_whole_messages() {
        let m = msg(b'Q', b"select 1\0");
        assert_eq!(next_frame(&m[..3], false).unwrap(), None);
        assert_eq!(next_frame(&m[..m.len() - 1], false).unwrap(), None);
        let f = next_frame(&m, false).unwrap().unwrap();
        assert_eq!(f.len, m.len());
        assert_eq!(
            decode(f.tag, m[f.body.0..f.body.1].to_vec()).unwrap(),
            Message::Query("select 1".into())
        );
    }

    #[test]
    fn framing_errors_are_fatal() {
        let e = next_frame(b"Z\0\0\0\x04", false).unwrap_err();
        assert!(e.fatal);
        assert_eq!(e.message, "invalid frontend message type 90");
        let e = next_frame(b"Q\0\0\0\x02", false).unwrap_err();
        assert!(e.fatal && e.message == "invalid message length");
        let e = next_frame(b"S\x7f\0\0\0", false).unwrap_err();
        assert!(e.fatal);
        let e = next_frame(&[0, 0, 0, 3], true).unwrap_err();
        assert!(e.fatal && e.message == "invalid length of startup packet");
    }

    #[test]
    fn content_errors_are_not() {
        // A Bind whose parameter claims more bytes than the message holds.
        let mut body = b"\0\0".to_vec();
        body.extend_from_slice(&0i16.to_be_bytes());
        body.extend_from_slice(&1i16.to_be_bytes());
        body.extend_from_slice(&100i32.to_be_bytes());
        body.extend_from_slice(b"abc");
        let e = decode(b'B', body).unwrap_err();
        assert!(!e.fatal);
        assert_eq!(e.message, "insufficient data left in message");
        let e = decode(b'Q', b"select 1".to_vec()).unwrap_err();
        assert_eq!(e.message, "invalid string in message");
        let e = decode(b'Q', b"select 1\0junk".to_vec()).unwrap_err();
        assert_eq!(e.message, "invalid message format");
        let e = decode(b'Q', b"select \xff\0".to_vec()).unwrap_err();
        assert_eq!(e.code, codes::CHARACTER_NOT_IN_REPERTOIRE);
        assert_eq!(
            e.message,
            "invalid byte sequence for encoding \"UTF8\": 0xff"
        );
        let e = decode(b'P', b"\0x\0\xff\xff".to_vec()).unwrap_err();
        assert_eq!(e.message, "invalid message format");
    }

    #[test]
    fn first_packets() {
        let mut body = PROTOCOL_3_0.to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0me\0database\0db\0\0");
        assert_eq!(
            decode_first(&body).unwrap(),
            FirstPacket::Startup {
                major: 3,
                minor: 0,
                params: vec![
                    ("user".into(), "me".into()),
                    ("database".into(), "db".into())
                ]
            }
        );
        body.pop();
        assert!(decode_first(&body).unwrap_err().fatal);
        let mut c = CANCEL_REQUEST_CODE.to_be_bytes().to_vec();
        c.extend_from_slice(&7i32.to_be_bytes());
        c.extend_from_slice(&(-9i32).to_be_bytes());
        assert_eq!(
            decode_first(&c).unwrap(),
            FirstPacket::Cancel { pid: 7, secret: -9 }
        );
        assert_eq!(
            decode_first(&SSL_REQUEST_CODE.to_be_bytes()).unwrap(),
            FirstPacket::SslRequest
        );
    }
}
