//! Hostile and broken clients: random bytes, truncated and mutated
//! messages, clients that vanish in the middle of a statement. Each such
//! connection may end; the server, and every other session, must go on.
//!
//! The inputs come from a fixed-seed generator, so a failure repeats; set
//! `TUSK_FUZZ_SEED` and `TUSK_FUZZ_ROUNDS` to explore further.

mod common;

use common::wire::{self, frame, startup_packet, Client};
use common::TestServer;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// xorshift64*: small, deterministic, good enough to pick bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Valid messages of every kind, to truncate and mutate.
fn valid_messages() -> Vec<Vec<u8>> {
    let c = |tag: u8, f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = Vec::new();
        f(&mut b);
        frame(tag, &b)
    };
    vec![
        c(b'Q', &|b| {
            wire::cstr(b, "select g, g::text from generate_series(1, 100) g")
        }),
        c(b'P', &|b| {
            wire::cstr(b, "s");
            wire::cstr(b, "select $1::int + 1");
            b.extend_from_slice(&1i16.to_be_bytes());
            b.extend_from_slice(&23u32.to_be_bytes());
        }),
        c(b'B', &|b| {
            wire::cstr(b, "");
            wire::cstr(b, "s");
            b.extend_from_slice(&1i16.to_be_bytes());
            b.extend_from_slice(&0i16.to_be_bytes());
            b.extend_from_slice(&1i16.to_be_bytes());
            b.extend_from_slice(&2i32.to_be_bytes());
            b.extend_from_slice(b"41");
            b.extend_from_slice(&0i16.to_be_bytes());
        }),
        c(b'D', &|b| {
            b.push(b'P');
            wire::cstr(b, "");
        }),
        c(b'E', &|b| {
            wire::cstr(b, "");
            b.extend_from_slice(&0i32.to_be_bytes());
        }),
        c(b'C', &|b| {
            b.push(b'S');
            wire::cstr(b, "s");
        }),
        c(b'H', &|_| {}),
        c(b'S', &|_| {}),
        c(b'd', &|b| b.extend_from_slice(b"1\t2\n")),
        c(b'f', &|b| wire::cstr(b, "no")),
    ]
}

/// Sends `bytes` on a fresh connection (after a startup packet when
/// `login`), reads what comes back for a moment, and hangs up.
fn hit(addr: std::net::SocketAddr, login: bool, bytes: &[u8]) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    if login {
        s.write_all(&startup_packet("fuzz", &[])).unwrap();
    }
    let _ = s.write_all(bytes);
    let mut sink = [0u8; 4096];
    while let Ok(n) = s.read(&mut sink) {
        if n == 0 {
            break;
        }
    }
}

fn still_serving(c: &mut Client) {
    assert_eq!(c.rows("select 1 + 1"), [[Some("2".to_string())]]);
}

#[test]
fn garbage_ends_only_its_connection() {
    let seed = std::env::var("TUSK_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_7a5c_u64);
    let rounds: usize = std::env::var("TUSK_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150);
    let server = TestServer::start(&[]);
    let mut bystander = server.connect();
    bystander.query("create table fuzz_t (a int); insert into fuzz_t values (1)");
    let mut rng = Rng(seed | 1);
    let messages = valid_messages();
    for round in 0..rounds {
        let input = match round % 5 {
            // Random bytes in place of the startup packet.
            0 => {
                let n = rng.below(64) + 1;
                rng.bytes(n)
            }
            // Random bytes after a good startup.
            1 => {
                let n = rng.below(256) + 1;
                rng.bytes(n)
            }
            // A valid message cut short.
            2 => {
                let m = &messages[rng.below(messages.len())];
                m[..rng.below(m.len())].to_vec()
            }
            // A valid message with a few bytes changed (its length too).
            3 => {
                let mut m = messages[rng.below(messages.len())].clone();
                for _ in 0..rng.below(3) + 1 {
                    let i = rng.below(m.len());
                    m[i] = rng.next() as u8;
                }
                m
            }
            // A stream of valid messages with random ones mixed in.
            _ => {
                let mut s = Vec::new();
                for _ in 0..rng.below(6) + 1 {
                    if rng.below(4) == 0 {
                        let n = rng.below(32);
                        s.extend(rng.bytes(n));
                    } else {
                        s.extend(&messages[rng.below(messages.len())]);
                    }
                }
                s
            }
        };
        hit(server.addr, round % 5 != 0, &input);
        if round % 10 == 9 {
            still_serving(&mut bystander);
        }
    }
    still_serving(&mut bystander);
    let mut fresh = server.connect();
    still_serving(&mut fresh);
    server.stop().unwrap();
}

#[test]
fn malformed_content_is_an_error_not_the_end() {
    let server = TestServer::start(&[]);
    let mut c = server.connect();
    // A Bind whose parameter claims more bytes than the message holds.
    let mut b = Vec::new();
    wire::cstr(&mut b, "");
    wire::cstr(&mut b, "");
    b.extend_from_slice(&0i16.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&1000i32.to_be_bytes());
    c.send(b'B', &b);
    c.sync();
    let m = c.until_ready();
    assert_eq!(wire::error(&m).code(), "08P01");
    assert_eq!(
        wire::error(&m).fields()[&b'M'],
        "insufficient data left in message"
    );
    // Invalid UTF-8 in a query.
    c.send(b'Q', b"select '\xff'\0");
    let m = c.until_ready();
    assert_eq!(wire::error(&m).code(), "22021");
    still_serving(&mut c);
    // An unknown message type is FATAL for that connection only.
    c.send(b'!', b"");
    let m = c.read().unwrap();
    assert_eq!(m.fields()[&b'S'], "FATAL");
    assert_eq!(m.code(), "08P01");
    assert!(c.read().is_none());
    still_serving(&mut server.connect());
    server.stop().unwrap();
}

#[test]
fn clients_vanishing_mid_statement() {
    let server = TestServer::start(&[]);
    let mut other = server.connect();
    other.query("create table gone (a int)");
    for sql in [
        "select count(*) from generate_series(1, 3000000) g",
        "select g from generate_series(1, 2000000) g",
        "insert into gone select g from generate_series(1, 200000) g",
    ] {
        let mut c = server.connect();
        let mut b = Vec::new();
        wire::cstr(&mut b, sql);
        c.send(b'Q', &b);
        // Gone without waiting for the answer.
        c.stream.shutdown(std::net::Shutdown::Both).unwrap();
        drop(c);
        still_serving(&mut other);
    }
    // Portals of a vanished session do not hold anything up.
    let mut c = server.connect();
    c.parse("", "select g from generate_series(1, 100000) g", &[]);
    c.bind("p", "", &[], &[], &[]);
    c.execute("p", 10);
    c.flush();
    assert_eq!(c.read().unwrap().tag, b'1');
    drop(c);
    still_serving(&mut other);
    let rows = other.rows("select count(*) from gone");
    assert!(rows[0][0].is_some());
    // An open transaction of a vanished client is rolled back: its rows
    // never appear and its row locks are released.
    other.query("create table left_open (a int primary key, b int)");
    other.query("insert into left_open values (1, 0)");
    let mut c = server.connect();
    c.query("begin; insert into left_open values (2, 0); update left_open set b = 1 where a = 1");
    c.stream.shutdown(std::net::Shutdown::Both).unwrap();
    drop(c);
    still_serving(&mut other);
    // A lock never released fails the test instead of hanging it.
    other.query("set lock_timeout = '20s'");
    let m = other.query("update left_open set b = 2 where a = 1");
    assert_eq!(m[0].tag_text(), "UPDATE 1");
    let rows = other.rows("select a, b from left_open order by a");
    assert_eq!(
        rows,
        vec![vec![Some("1".to_string()), Some("2".to_string())]]
    );
    server.stop().unwrap();
}
