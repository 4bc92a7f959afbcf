//! A small isolation tester in the manner of PostgreSQL's
//! `src/test/isolation`: several sessions on one database, each on a
//! thread of its own, driven step by step from the test, with a transcript
//! of what every step returned.
//!
//! A step is sent to its session and the tester then waits until the step
//! has either finished or is blocked — its session waits for a lock, as the
//! lock manager says (`LockManager::is_waiting`, PostgreSQL's
//! `pg_isolation_test_session_is_blocked`). A blocked step prints
//! `<waiting ...>`; after every later step the tester waits for each
//! blocked session to finish or block again, and prints `<... completed>`
//! and its result for those that finished, in session order, as
//! PostgreSQL's tester does. A step whose wait ends by itself (a lock
//! timeout, a deadlock it detects) runs with [`Tester::step_to_end`],
//! which waits for its outcome whether or not it blocked first. Nothing
//! depends on timing: the only time limit is a generous one after which a
//! step that neither finishes nor blocks fails the test.
//!
//! The transcript shows each step's rows as psql's unaligned output does
//! (a header line, then rows, `|`-separated), notices as `LEVEL:  text` and
//! errors as `ERROR:  text`; command tags are left out, as in PostgreSQL's
//! expected files.

use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tusk_sql::{QueryResult, Session, SqlError};
use tusk_storage::Database;

/// How long a step may run without finishing or blocking.
const STEP_LIMIT: Duration = Duration::from_secs(120);

/// What a session sends back for a step.
type Outcome = (Vec<QueryResult>, Result<(), SqlError>);

struct Client {
    name: String,
    pid: i32,
    tx: Option<Sender<String>>,
    rx: Receiver<Outcome>,
    thread: Option<JoinHandle<()>>,
    /// The step it is blocked in.
    waiting: Option<String>,
}

/// Sessions on one database and the transcript of their steps.
pub struct Tester {
    pub db: Arc<Database>,
    _dir: tempfile::TempDir,
    clients: Vec<Client>,
    transcript: String,
    /// The full error of the last step that failed (DETAIL included).
    pub last_error: Option<SqlError>,
}

impl Tester {
    /// A fresh database, `setup` run on it, and one session per name.
    pub fn new(setup: &str, names: &[&str]) -> Tester {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tusk.conf"),
            "shared_buffers = 2MB\nhuge_pages = off\nautovacuum = off\n",
        )
        .unwrap();
        let mut s = Session::open(dir.path()).unwrap();
        s.query(setup).unwrap_or_else(|e| panic!("setup: {e}"));
        let db = s.database().clone();
        drop(s);
        let clients = names
            .iter()
            .map(|&name| {
                let mut session = Session::with_database(db.clone()).unwrap();
                let pid = session.pid();
                let (tx, steps) = channel::<String>();
                let (results, rx) = channel::<Outcome>();
                let thread = std::thread::Builder::new()
                    .name(format!("session {name}"))
                    .spawn(move || {
                        for sql in steps {
                            let mut out = Vec::new();
                            let r = session.execute(&sql, &mut |r| out.push(r));
                            if results.send((out, r)).is_err() {
                                break;
                            }
                        }
                        // The session ends (inside a block: rolled back).
                    })
                    .unwrap();
                Client {
                    name: name.to_string(),
                    pid,
                    tx: Some(tx),
                    rx,
                    thread: Some(thread),
                    waiting: None,
                }
            })
            .collect();
        Tester {
            db,
            _dir: dir,
            clients,
            transcript: String::new(),
            last_error: None,
        }
    }

    fn client(&self, name: &str) -> usize {
        self.clients
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("no session {name}"))
    }

    /// Runs `sql` in session `name` (see the module doc).
    pub fn step(&mut self, name: &str, sql: &str) {
        let i = self.client(name);
        assert!(
            self.clients[i].waiting.is_none(),
            "session {name} is blocked"
        );
        self.transcript.push_str(&format!("step {name}: {sql}"));
        self.clients[i]
            .tx
            .as_ref()
            .expect("session ended")
            .send(sql.to_string())
            .unwrap();
        match self.wait(i) {
            Some(outcome) => {
                self.transcript.push('\n');
                self.record(outcome);
            }
            None => {
                self.transcript.push_str(" <waiting ...>\n");
                self.clients[i].waiting = Some(sql.to_string());
            }
        }
        self.settle();
    }

    /// Runs `sql` in session `name` and waits for its outcome even if it
    /// blocks meanwhile: for a step whose wait ends by itself (a lock
    /// timeout, a deadlock it detects), so that the transcript does not
    /// depend on whether the tester saw it wait.
    pub fn step_to_end(&mut self, name: &str, sql: &str) {
        let i = self.client(name);
        assert!(
            self.clients[i].waiting.is_none(),
            "session {name} is blocked"
        );
        self.transcript.push_str(&format!("step {name}: {sql}\n"));
        self.clients[i]
            .tx
            .as_ref()
            .expect("session ended")
            .send(sql.to_string())
            .unwrap();
        let outcome = self.clients[i]
            .rx
            .recv_timeout(STEP_LIMIT)
            .unwrap_or_else(|_| panic!("a step of {name} did not end:\n{}", self.transcript));
        self.record(outcome);
        self.settle();
    }

    /// Ends session `name`, as a client that disconnects (inside a block:
    /// the block is rolled back).
    pub fn disconnect(&mut self, name: &str) {
        let i = self.client(name);
        self.transcript.push_str(&format!("disconnect {name}\n"));
        self.clients[i].tx = None;
        if let Some(t) = self.clients[i].thread.take() {
            t.join().unwrap();
        }
        self.settle();
    }

    /// Waits until client `i`'s step finishes (its outcome) or blocks.
    fn wait(&mut self, i: usize) -> Option<Outcome> {
        let start = Instant::now();
        loop {
            match self.clients[i].rx.recv_timeout(Duration::from_millis(2)) {
                Ok(outcome) => return Some(outcome),
                Err(RecvTimeoutError::Disconnected) => panic!("session thread died"),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.db.locks.is_waiting(self.clients[i].pid) {
                return None;
            }
            assert!(
                start.elapsed() < STEP_LIMIT,
                "a step of {} neither finished nor blocked:\n{}",
                self.clients[i].name,
                self.transcript
            );
        }
    }

    /// Reports the blocked steps that finished.
    fn settle(&mut self) {
        for i in 0..self.clients.len() {
            if self.clients[i].waiting.is_none() {
                continue;
            }
            if let Some(outcome) = self.wait(i) {
                self.clients[i].waiting = None;
                let name = self.clients[i].name.clone();
                self.transcript
                    .push_str(&format!("step {name}: <... completed>\n"));
                self.record(outcome);
            }
        }
    }

    fn record(&mut self, (results, r): Outcome) {
        for res in results {
            match res {
                QueryResult::Rows { columns, rows, .. } => {
                    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                    self.transcript.push_str(&names.join("|"));
                    self.transcript.push('\n');
                    for row in rows {
                        let fields: Vec<&str> =
                            row.iter().map(|v| v.as_deref().unwrap_or("")).collect();
                        self.transcript.push_str(&fields.join("|"));
                        self.transcript.push('\n');
                    }
                }
                QueryResult::Command { .. } => {}
                QueryResult::Notice(n) => {
                    let level = n.level;
                    // VACUUM VERBOSE: only the tuple counts are stable.
                    for line in n.message.lines() {
                        if level != "INFO" || line.starts_with("tuples:") {
                            self.transcript.push_str(&format!("{level}:  {line}\n"));
                        }
                    }
                }
            }
        }
        if let Err(e) = r {
            self.transcript
                .push_str(&format!("ERROR:  {} ({})\n", e.message, e.code));
            self.last_error = Some(e);
        }
    }

    /// The transcript so far (and a fresh one from here).
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.transcript)
    }

    /// Checks the transcript so far against `expected` (leading
    /// indentation and blank lines ignored).
    pub fn expect(&mut self, expected: &str) {
        let want: Vec<&str> = expected
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let got = self.take();
        let have: Vec<&str> = got.lines().map(str::trim).collect();
        assert_eq!(
            have.join("\n"),
            want.join("\n"),
            "\n--- transcript ---\n{got}"
        );
    }
}

impl Drop for Tester {
    fn drop(&mut self) {
        for c in &mut self.clients {
            c.tx = None;
        }
        if std::thread::panicking() {
            return;
        }
        for c in &mut self.clients {
            if let Some(t) = c.thread.take() {
                let _ = t.join();
            }
        }
    }
}
