//! The session pool (`pool.rs`): sessions move between threads when idle,
//! a session blocked on a lock does not hold up the others even with a
//! single seat, each session keeps its own `random()` sequence, and many
//! more sessions than seats all get answers.

mod common;

use common::wire;
use common::TestServer;
use std::time::{Duration, Instant};

fn one_value(c: &mut wire::Client, sql: &str) -> String {
    let rows = c.rows(sql);
    assert_eq!(rows.len(), 1, "{sql}");
    rows[0][0].clone().unwrap_or_default()
}

#[test]
fn a_lock_wait_does_not_hold_up_other_sessions() {
    let server = TestServer::start(&[("tusk.session_pool_seats", "1")]);
    let mut holder = server.connect();
    let mut waiter = server.connect();
    let mut other = server.connect();
    holder.query("create table pool_lock (k int primary key, v int)");
    holder.query("insert into pool_lock values (1, 0)");
    holder.query("begin");
    holder.query("update pool_lock set v = 1 where k = 1");
    // The waiter's update blocks on the holder's row lock, occupying the
    // pool's only seat until the monitor sees it stalled.
    let mut b = Vec::new();
    wire::cstr(&mut b, "update pool_lock set v = 2 where k = 1");
    waiter.send(b'Q', &b);
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    assert_eq!(one_value(&mut other, "select 40 + 2"), "42");
    assert_eq!(one_value(&mut other, "select v from pool_lock"), "0");
    // The holder's COMMIT needs a thread too: it gets one.
    holder.query("commit");
    assert!(started.elapsed() < Duration::from_secs(5));
    let done = waiter.until_ready();
    let complete = done
        .iter()
        .find(|m| m.tag == b'C')
        .expect("CommandComplete");
    assert_eq!(complete.tag_text(), "UPDATE 1");
    assert_eq!(one_value(&mut other, "select v from pool_lock"), "2");
}

#[test]
fn a_client_that_stops_reading_does_not_hold_up_other_sessions() {
    // A wait storage cannot announce: the session's thread blocks writing
    // to a client that reads nothing. The monitor gives its seat away.
    let server = TestServer::start(&[("tusk.session_pool_seats", "1")]);
    let mut stuck = server.connect();
    let mut other = server.connect();
    let mut b = Vec::new();
    wire::cstr(
        &mut b,
        "select repeat('x', 1000) from generate_series(1, 100000)",
    );
    stuck.send(b'Q', &b);
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    assert_eq!(one_value(&mut other, "select 'served'"), "served");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(stuck);
    assert_eq!(
        one_value(&mut other, "select 'still served'"),
        "still served"
    );
    server.stop().unwrap();
}

#[test]
fn a_bad_frame_behind_a_query_is_answered() {
    // The bad frame arrives with the query, so the socket has nothing more
    // to report: the session must not go idle on it.
    use std::io::Write;
    let server = TestServer::start(&[("tusk.session_pool_seats", "2")]);
    let mut c = server.connect();
    let mut bytes = wire::frame(b'Q', b"select 1\0");
    bytes.extend_from_slice(&[b'!', 0, 0, 0, 4]);
    c.stream.write_all(&bytes).unwrap();
    c.stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let answer = c.until_ready();
    assert!(answer.iter().any(|m| m.tag == b'D'));
    let fatal = c.read().expect("the FATAL error, not silence");
    assert_eq!(fatal.tag, b'E');
    assert_eq!(fatal.code(), "08P01");
    assert!(c.read().is_none());
}

#[test]
fn each_session_keeps_its_random_sequence() {
    let server = TestServer::start(&[("tusk.session_pool_seats", "1")]);
    let mut a = server.connect();
    let mut b = server.connect();
    a.query("select setseed(0.5)");
    // Another session's seed, set on whichever thread serves it, must not
    // move `a`'s sequence (PostgreSQL 15: after setseed(0.5), random()
    // gives 0.9851677175347999, then 0.825301858027981).
    b.query("select setseed(-1)");
    assert_eq!(one_value(&mut a, "select random()"), "0.9851677175347999");
    assert_eq!(one_value(&mut b, "select random()"), "0.725656831544149");
    assert_eq!(one_value(&mut a, "select random()"), "0.825301858027981");
}

#[test]
fn many_sessions_on_few_seats() {
    let server = TestServer::start(&[("tusk.session_pool_seats", "2")]);
    let mut clients: Vec<wire::Client> = (0..24).map(|_| server.connect()).collect();
    for round in 0..20 {
        // Every session sends its query before any answer is read, so that
        // several are ready at once.
        for (i, c) in clients.iter_mut().enumerate() {
            let mut b = Vec::new();
            wire::cstr(&mut b, &format!("select {i} * 1000 + {round}"));
            c.send(b'Q', &b);
        }
        for (i, c) in clients.iter_mut().enumerate() {
            let msgs = c.until_ready();
            let row = msgs.iter().find(|m| m.tag == b'D').expect("a row");
            assert_eq!(
                row.values()[0].as_deref(),
                Some((i * 1000 + round).to_string().as_str())
            );
        }
    }
    // Sessions that end leave the others working.
    clients.truncate(3);
    for c in &mut clients {
        assert_eq!(one_value(c, "select 'still here'"), "still here");
    }
    drop(clients);
    server.stop().unwrap();
}
