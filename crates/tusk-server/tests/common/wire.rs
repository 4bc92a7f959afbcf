//! A minimal PostgreSQL protocol 3.0 client for tests: it sends exactly
//! the messages a test asks for and hands back what the server answers,
//! so that tests can check the protocol itself (portal suspension, Sync
//! after errors, cancel keys) and feed the server malformed input.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A backend message: its type byte and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    pub tag: u8,
    pub body: Vec<u8>,
}

impl Msg {
    /// The fields of an ErrorResponse or NoticeResponse.
    pub fn fields(&self) -> HashMap<u8, String> {
        let mut out = HashMap::new();
        let mut b = &self.body[..];
        while let Some((&t, rest)) = b.split_first() {
            if t == 0 {
                break;
            }
            let end = rest.iter().position(|&c| c == 0).unwrap();
            out.insert(t, String::from_utf8_lossy(&rest[..end]).into_owned());
            b = &rest[end + 1..];
        }
        out
    }

    /// The SQLSTATE of an ErrorResponse.
    pub fn code(&self) -> String {
        assert_eq!(self.tag, b'E', "not an error: {self:?}");
        self.fields()[&b'C'].clone()
    }

    /// The values of a DataRow (text).
    pub fn values(&self) -> Vec<Option<String>> {
        self.raw_values()
            .into_iter()
            .map(|v| v.map(|b| String::from_utf8(b).unwrap()))
            .collect()
    }

    /// The values of a DataRow as bytes.
    pub fn raw_values(&self) -> Vec<Option<Vec<u8>>> {
        assert_eq!(self.tag, b'D', "not a data row: {self:?}");
        let n = i16::from_be_bytes([self.body[0], self.body[1]]) as usize;
        let mut pos = 2;
        let mut out = Vec::new();
        for _ in 0..n {
            let len = i32::from_be_bytes(self.body[pos..pos + 4].try_into().unwrap());
            pos += 4;
            if len < 0 {
                out.push(None);
            } else {
                out.push(Some(self.body[pos..pos + len as usize].to_vec()));
                pos += len as usize;
            }
        }
        out
    }

    /// A CommandComplete's tag.
    pub fn tag_text(&self) -> String {
        assert_eq!(self.tag, b'C', "not a CommandComplete: {self:?}");
        String::from_utf8_lossy(&self.body[..self.body.len() - 1]).into_owned()
    }

    /// A RowDescription's (name, type OID, format) triples.
    /// Each RowDescription field's type length and type modifier.
    pub fn type_sizes(&self) -> Vec<(i16, i32)> {
        assert_eq!(self.tag, b'T', "not a RowDescription: {self:?}");
        let n = i16::from_be_bytes([self.body[0], self.body[1]]) as usize;
        let mut pos = 2;
        let mut out = Vec::new();
        for _ in 0..n {
            pos += self.body[pos..].iter().position(|&c| c == 0).unwrap() + 1;
            let len = i16::from_be_bytes(self.body[pos + 10..pos + 12].try_into().unwrap());
            let typmod = i32::from_be_bytes(self.body[pos + 12..pos + 16].try_into().unwrap());
            pos += 18;
            out.push((len, typmod));
        }
        out
    }

    pub fn columns(&self) -> Vec<(String, u32, i16)> {
        assert_eq!(self.tag, b'T', "not a RowDescription: {self:?}");
        let n = i16::from_be_bytes([self.body[0], self.body[1]]) as usize;
        let mut pos = 2;
        let mut out = Vec::new();
        for _ in 0..n {
            let end = pos + self.body[pos..].iter().position(|&c| c == 0).unwrap();
            let name = String::from_utf8_lossy(&self.body[pos..end]).into_owned();
            pos = end + 1;
            let oid = u32::from_be_bytes(self.body[pos + 6..pos + 10].try_into().unwrap());
            let format = i16::from_be_bytes(self.body[pos + 16..pos + 18].try_into().unwrap());
            pos += 18;
            out.push((name, oid, format));
        }
        out
    }
}

pub fn cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// A message with its type byte and length.
pub fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// A startup packet for `user`.
pub fn startup_packet(user: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut body = (3i32 << 16).to_be_bytes().to_vec();
    cstr(&mut body, "user");
    cstr(&mut body, user);
    cstr(&mut body, "database");
    cstr(&mut body, "tusk");
    for (k, v) in extra {
        cstr(&mut body, k);
        cstr(&mut body, v);
    }
    body.push(0);
    let mut v = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    v.extend_from_slice(&body);
    v
}

pub struct Client {
    pub stream: TcpStream,
    pub pid: i32,
    pub secret: i32,
    pub params: HashMap<String, String>,
}

impl Client {
    /// Connects and logs in as `user`; with a password, SCRAM is answered
    /// with a proof that is certainly wrong (the tests only need to see the
    /// refusal). Returns the ErrorResponse when the server refuses.
    pub fn connect(addr: SocketAddr, user: &str, password: Option<&str>) -> Result<Client, Msg> {
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let mut c = Client {
            stream,
            pid: 0,
            secret: 0,
            params: HashMap::new(),
        };
        c.stream.write_all(&startup_packet(user, &[])).unwrap();
        loop {
            let m = c.read().expect("server closed during startup");
            match m.tag {
                b'R' => {
                    let code = i32::from_be_bytes(m.body[..4].try_into().unwrap());
                    match code {
                        0 | 12 => {}
                        10 => {
                            assert!(password.is_some(), "server asked for a password");
                            let mut b = Vec::new();
                            cstr(&mut b, "SCRAM-SHA-256");
                            let first = b"n,,n=,r=abcdefghijklmnopqrstuvwx";
                            b.extend_from_slice(&(first.len() as i32).to_be_bytes());
                            b.extend_from_slice(first);
                            c.send(b'p', &b);
                        }
                        11 => {
                            let server_first = String::from_utf8_lossy(&m.body[4..]).into_owned();
                            let nonce = server_first
                                .split(',')
                                .find_map(|f| f.strip_prefix("r="))
                                .unwrap()
                                .to_string();
                            let proof = "A".repeat(43) + "=";
                            let fin = format!("c=biws,r={nonce},p={proof}");
                            c.send(b'p', fin.as_bytes());
                        }
                        other => panic!("unexpected authentication request {other}"),
                    }
                }
                b'S' => {
                    let mut parts = m.body.split(|&b| b == 0);
                    let k = String::from_utf8_lossy(parts.next().unwrap()).into_owned();
                    let v = String::from_utf8_lossy(parts.next().unwrap()).into_owned();
                    c.params.insert(k, v);
                }
                b'K' => {
                    c.pid = i32::from_be_bytes(m.body[..4].try_into().unwrap());
                    c.secret = i32::from_be_bytes(m.body[4..8].try_into().unwrap());
                }
                b'Z' => return Ok(c),
                b'E' => return Err(m),
                b'N' | b'v' => {}
                other => panic!("unexpected message {} during startup", other as char),
            }
        }
    }

    pub fn send(&mut self, tag: u8, body: &[u8]) {
        self.stream.write_all(&frame(tag, body)).unwrap();
    }

    /// The next message, `None` when the server closed the connection.
    pub fn read(&mut self) -> Option<Msg> {
        let mut head = [0u8; 5];
        self.stream.read_exact(&mut head).ok()?;
        let len = i32::from_be_bytes(head[1..].try_into().unwrap()) as usize;
        let mut body = vec![0u8; len - 4];
        self.stream.read_exact(&mut body).ok()?;
        Some(Msg { tag: head[0], body })
    }

    /// Messages up to and including ReadyForQuery.
    pub fn until_ready(&mut self) -> Vec<Msg> {
        let mut out = Vec::new();
        loop {
            let m = self.read().expect("server closed the connection");
            let done = m.tag == b'Z';
            out.push(m);
            if done {
                return out;
            }
        }
    }

    /// A simple query and everything up to ReadyForQuery.
    pub fn query(&mut self, sql: &str) -> Vec<Msg> {
        let mut b = Vec::new();
        cstr(&mut b, sql);
        self.send(b'Q', &b);
        self.until_ready()
    }

    /// The text values of the rows a simple query returns; panics on error.
    pub fn rows(&mut self, sql: &str) -> Vec<Vec<Option<String>>> {
        let msgs = self.query(sql);
        if let Some(e) = msgs.iter().find(|m| m.tag == b'E') {
            panic!("{sql}: {:?}", e.fields());
        }
        msgs.iter()
            .filter(|m| m.tag == b'D')
            .map(|m| m.values())
            .collect()
    }

    pub fn parse(&mut self, name: &str, sql: &str, types: &[u32]) {
        let mut b = Vec::new();
        cstr(&mut b, name);
        cstr(&mut b, sql);
        b.extend_from_slice(&(types.len() as i16).to_be_bytes());
        for t in types {
            b.extend_from_slice(&t.to_be_bytes());
        }
        self.send(b'P', &b);
    }

    pub fn bind(
        &mut self,
        portal: &str,
        statement: &str,
        formats: &[i16],
        params: &[Option<&[u8]>],
        result_formats: &[i16],
    ) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        cstr(&mut b, statement);
        b.extend_from_slice(&(formats.len() as i16).to_be_bytes());
        for f in formats {
            b.extend_from_slice(&f.to_be_bytes());
        }
        b.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for p in params {
            match p {
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
            }
        }
        b.extend_from_slice(&(result_formats.len() as i16).to_be_bytes());
        for f in result_formats {
            b.extend_from_slice(&f.to_be_bytes());
        }
        self.send(b'B', &b);
    }

    pub fn describe(&mut self, kind: u8, name: &str) {
        let mut b = vec![kind];
        cstr(&mut b, name);
        self.send(b'D', &b);
    }

    pub fn execute(&mut self, portal: &str, max_rows: i32) {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        b.extend_from_slice(&max_rows.to_be_bytes());
        self.send(b'E', &b);
    }

    pub fn close(&mut self, kind: u8, name: &str) {
        let mut b = vec![kind];
        cstr(&mut b, name);
        self.send(b'C', &b);
    }

    pub fn sync(&mut self) {
        self.send(b'S', &[]);
    }

    pub fn flush(&mut self) {
        self.send(b'H', &[]);
    }
}

/// Sends a CancelRequest for the session with this key.
pub fn cancel(addr: SocketAddr, pid: i32, secret: i32) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut b = 16i32.to_be_bytes().to_vec();
    b.extend_from_slice(&((1234 << 16) | 5678i32).to_be_bytes());
    b.extend_from_slice(&pid.to_be_bytes());
    b.extend_from_slice(&secret.to_be_bytes());
    s.write_all(&b).unwrap();
    // The server closes the connection without a reply.
    let _ = s.read(&mut [0u8; 1]);
}

/// The first ErrorResponse of `msgs`. (Where an error arises at run
/// time rather than while planning, a RowDescription may come before it,
/// in PostgreSQL as in tusk.)
pub fn error(msgs: &[Msg]) -> &Msg {
    msgs.iter()
        .find(|m| m.tag == b'E')
        .unwrap_or_else(|| panic!("no error in {:?}", tags(msgs)))
}

/// The type bytes of `msgs`, as a string (`"1T2DDC Z"` style, without spaces).
pub fn tags(msgs: &[Msg]) -> String {
    msgs.iter().map(|m| m.tag as char).collect()
}
