//! Crash test under load (issue 20, "Prove it"): clients run pgbench's
//! TPC-B transaction against `tusk serve` and record every commit the
//! server acknowledged; the server is SIGKILLed at a random moment, started
//! again on the same data directory, and checked:
//!
//! * every acknowledged commit is there (its history row, found by the id
//!   the client gave it);
//! * nothing unacknowledged is half there: every account, teller and
//!   branch balance is exactly the sum of the deltas of the history rows
//!   that name it (balances start at 0), so a transaction is in all four
//!   tables or in none;
//! * hence `sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta)`.
//!
//! Transactions that fail for any reason but the kill fail the test. The
//! run is `TUSK_CRASH_TPCB_KILLS` kills (default 3) with seed
//! `TUSK_CRASH_TPCB_SEED`; `bench/crash_tpcb.sh` runs 20 or more on a
//! release build. The settings make the server evict pages (small
//! `shared_buffers`) and checkpoint often (small `max_wal_size`) while the
//! load runs, so recovery starts from checkpoints taken under load.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ACCOUNTS: u32 = 20_000;
const TELLERS: u32 = 10;
const BRANCHES: u32 = 2;
const CLIENTS: usize = 6;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `tusk serve` on `dir`; returns the child and its port once it accepts
/// connections. Its log goes to `DIR/../serve.log`.
fn serve(dir: &std::path::Path, log: &std::path::Path) -> (Child, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .env_remove("TUSKDATA")
        .args(["serve", "--listen", "127.0.0.1", "--port", "0", "-D"])
        .arg(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let log = log.to_path_buf();
    std::thread::spawn(move || {
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = writeln!(out, "{line}");
            let _ = tx.send(line);
        }
    });
    let mut port = 0;
    loop {
        let Ok(line) = rx.recv_timeout(Duration::from_secs(300)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tusk serve ended before it was ready");
        };
        if let Some(p) = line.strip_prefix("LOG:  listening on IPv4 address \"127.0.0.1\", port ") {
            port = p.parse().unwrap();
        }
        if line == "LOG:  database system is ready to accept connections" {
            return (child, port);
        }
    }
}

/// A simple-query session; any I/O failure is `Err` (the server is gone).
struct Session(TcpStream);

/// What a query answered: rows (text), and the ErrorResponse's SQLSTATE
/// and message if it failed.
struct Answer {
    rows: Vec<Vec<Option<String>>>,
    error: Option<(String, String)>,
}

impl Session {
    fn connect(port: u16) -> std::io::Result<Session> {
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut body = (3i32 << 16).to_be_bytes().to_vec();
        body.extend_from_slice(b"user\0tusk\0\0");
        let mut packet = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        packet.extend_from_slice(&body);
        s.write_all(&packet)?;
        let mut session = Session(s);
        let a = session.answer()?;
        assert!(a.error.is_none(), "login refused: {:?}", a.error);
        Ok(session)
    }

    fn answer(&mut self) -> std::io::Result<Answer> {
        let mut a = Answer {
            rows: Vec::new(),
            error: None,
        };
        loop {
            let mut head = [0u8; 5];
            self.0.read_exact(&mut head)?;
            let len = i32::from_be_bytes(head[1..].try_into().unwrap()) as usize;
            let mut body = vec![0u8; len - 4];
            self.0.read_exact(&mut body)?;
            match head[0] {
                b'Z' => return Ok(a),
                b'D' => {
                    let n = i16::from_be_bytes([body[0], body[1]]) as usize;
                    let mut at = 2;
                    let mut row = Vec::with_capacity(n);
                    for _ in 0..n {
                        let l = i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
                        at += 4;
                        if l < 0 {
                            row.push(None);
                        } else {
                            let l = l as usize;
                            row.push(Some(
                                String::from_utf8_lossy(&body[at..at + l]).into_owned(),
                            ));
                            at += l;
                        }
                    }
                    a.rows.push(row);
                }
                b'E' => {
                    let mut code = String::new();
                    let mut message = String::new();
                    for f in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
                        let v = String::from_utf8_lossy(&f[1..]).into_owned();
                        match f[0] {
                            b'C' => code = v,
                            b'M' => message = v,
                            _ => {}
                        }
                    }
                    a.error = Some((code, message));
                }
                _ => {}
            }
        }
    }

    fn query(&mut self, sql: &str) -> std::io::Result<Answer> {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        let mut m = vec![b'Q'];
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(&body);
        self.0.write_all(&m)?;
        self.answer()
    }

    /// Runs `sql`, panicking on an error.
    fn must(&mut self, sql: &str) -> Vec<Vec<Option<String>>> {
        let a = self.query(sql).expect("server gone");
        if let Some(e) = a.error {
            panic!("{sql}: {e:?}");
        }
        a.rows
    }
}

/// One acknowledged transaction.
#[derive(Clone, Copy)]
struct Commit {
    id: i64,
}

/// Runs TPC-B transactions until the connection breaks or `stop` is set;
/// acknowledged ones go to `acked`, other failures to `failures`.
fn client(
    port: u16,
    seed: u64,
    next_id: i64,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Vec<Commit>>>,
    failures: Arc<Mutex<Vec<String>>>,
) {
    let Ok(mut s) = Session::connect(port) else {
        return;
    };
    let mut rng = Rng(seed | 1);
    let mut id = next_id;
    while !stop.load(Ordering::Relaxed) {
        let aid = rng.range(1, ACCOUNTS as i64);
        let tid = rng.range(1, TELLERS as i64);
        let bid = rng.range(1, BRANCHES as i64);
        let delta = rng.range(-5000, 5000);
        id += 1;
        let steps = [
            "BEGIN".to_string(),
            format!("UPDATE pgbench_accounts SET abalance = abalance + {delta} WHERE aid = {aid}"),
            format!("SELECT abalance FROM pgbench_accounts WHERE aid = {aid}"),
            format!("UPDATE pgbench_tellers SET tbalance = tbalance + {delta} WHERE tid = {tid}"),
            format!("UPDATE pgbench_branches SET bbalance = bbalance + {delta} WHERE bid = {bid}"),
            format!(
                "INSERT INTO pgbench_history (id, tid, bid, aid, delta) VALUES ({id}, {tid}, {bid}, {aid}, {delta})"
            ),
            "COMMIT".to_string(),
        ];
        for (i, sql) in steps.iter().enumerate() {
            match s.query(sql) {
                Err(_) => return,
                Ok(a) => {
                    if let Some((code, message)) = a.error {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{sql}: {code} {message}"));
                        if s.query("ROLLBACK").is_err() {
                            return;
                        }
                        break;
                    }
                    if i == steps.len() - 1 {
                        acked.lock().unwrap().push(Commit { id });
                    }
                }
            }
        }
    }
}

/// Checks the invariants of the module doc; returns the history's size.
fn check(s: &mut Session, acked: &[Commit]) -> usize {
    let ids: HashSet<i64> = s
        .must("select id from pgbench_history")
        .into_iter()
        .map(|r| r[0].as_deref().unwrap().parse().unwrap())
        .collect();
    let missing: Vec<i64> = acked
        .iter()
        .map(|c| c.id)
        .filter(|id| !ids.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged commits lost, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    for (table, key, balance) in [
        ("pgbench_accounts", "aid", "abalance"),
        ("pgbench_tellers", "tid", "tbalance"),
        ("pgbench_branches", "bid", "bbalance"),
    ] {
        let bad = s.must(&format!(
            "select x.{key}, x.{balance}, coalesce(h.s, 0) from {table} x \
             left join (select {key}, sum(delta) s from pgbench_history group by {key}) h \
             on h.{key} = x.{key} where x.{balance} <> coalesce(h.s, 0)"
        ));
        assert!(
            bad.is_empty(),
            "{table}: balances differ from the history: {:?}",
            &bad[..bad.len().min(10)]
        );
    }
    let sums = s.must(
        "select (select sum(abalance) from pgbench_accounts), (select sum(tbalance) from pgbench_tellers), \
         (select sum(bbalance) from pgbench_branches), (select coalesce(sum(delta), 0) from pgbench_history), \
         (select count(*) from pgbench_accounts), (select count(*) from pgbench_tellers), \
         (select count(*) from pgbench_branches)",
    );
    let r = &sums[0];
    assert!(
        r[0] == r[1] && r[1] == r[2] && r[2] == r[3],
        "sums differ: {r:?}"
    );
    assert_eq!(
        (r[4].as_deref(), r[5].as_deref(), r[6].as_deref()),
        (
            Some(ACCOUNTS.to_string().as_str()),
            Some(TELLERS.to_string().as_str()),
            Some(BRANCHES.to_string().as_str())
        )
    );
    ids.len()
}

#[test]
fn tpcb_survives_sigkill_under_load() {
    let kills = env_u64("TUSK_CRASH_TPCB_KILLS", 3);
    let seed = env_u64("TUSK_CRASH_TPCB_SEED", 20);
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("data");
    let log = top.path().join("serve.log");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("tusk.conf"),
        "shared_buffers = 2MB\nmax_wal_size = 4MB\nunix_socket_directories = '.'\n",
    )
    .unwrap();
    let (mut child, mut port) = serve(&dir, &log);
    {
        let mut s = Session::connect(port).unwrap();
        s.must(&format!(
            "create table pgbench_branches (bid int primary key, bbalance int, filler char(88)) with (fillfactor = 100);
             insert into pgbench_branches select g, 0 from generate_series(1, {BRANCHES}) g;
             create table pgbench_tellers (tid int primary key, bid int, tbalance int, filler char(84)) with (fillfactor = 100);
             insert into pgbench_tellers select g, (g - 1) % {BRANCHES} + 1, 0 from generate_series(1, {TELLERS}) g;
             create table pgbench_accounts (aid int primary key, bid int, abalance int, filler char(84)) with (fillfactor = 100);
             insert into pgbench_accounts select g, (g - 1) % {BRANCHES} + 1, 0, '' from generate_series(1, {ACCOUNTS}) g;
             create table pgbench_history (id bigint, tid int, bid int, aid int, delta int, filler char(22))"
        ));
    }
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let mut round_base = 0i64;
    for kill in 0..kills {
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (stop, acked, failures) = (stop.clone(), acked.clone(), failures.clone());
                let seed = rng.next();
                // Ids never repeat: each client of each round has its range.
                let base = round_base + (c as i64) * 1_000_000_000;
                std::thread::spawn(move || client(port, seed, base, stop, acked, failures))
            })
            .collect();
        round_base += CLIENTS as i64 * 1_000_000_000;
        // Load for a while, then SIGKILL at a random moment.
        let wait = Duration::from_millis(300 + rng.next() % 2500);
        let started = Instant::now();
        while started.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        let failed = failures.lock().unwrap().clone();
        assert!(failed.is_empty(), "transactions failed: {failed:?}");
        let (c, p) = serve(&dir, &log);
        child = c;
        let mut s = Session::connect(p).unwrap();
        let acked_now = acked.lock().unwrap().clone();
        let history = check(&mut s, &acked_now);
        eprintln!(
            "kill {}/{kills} after {:?}: {} acknowledged commits so far, {} history rows, all there and consistent",
            kill + 1,
            wait,
            acked_now.len(),
            history
        );
        assert!(history >= acked_now.len());
        // The next round's clients use the restarted server.
        port = p;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !acked.lock().unwrap().is_empty(),
        "no transaction was acknowledged"
    );
}
