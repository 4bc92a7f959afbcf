//! Test support: a server on a free loopback port in a temporary data
//! directory, a minimal wire-protocol client, and the paths of
//! PostgreSQL's client programs.

#![allow(dead_code)]

pub mod wire;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A running server and its data directory.
pub struct TestServer {
    pub dir: tempfile::TempDir,
    pub addr: SocketAddr,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

/// Writes `tusk.conf` lines for a server about to start in `dir` (its Unix
/// socket in `dir`, unless `conf` says otherwise).
pub fn write_conf(dir: &Path, conf: &[(&str, &str)]) {
    let mut text = String::from("shared_buffers = 16MB\nunix_socket_directories = '.'\n");
    for (k, v) in conf {
        text.push_str(&format!("{k} = '{v}'\n"));
    }
    std::fs::write(dir.join("tusk.conf"), text).unwrap();
}

impl TestServer {
    /// A server with `conf` in its tusk.conf, listening on 127.0.0.1 on a
    /// port the system picks.
    pub fn start(conf: &[(&str, &str)]) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        write_conf(dir.path(), conf);
        TestServer::start_in(dir)
    }

    /// A server on an existing directory (its tusk.conf as it is).
    pub fn start_in(dir: tempfile::TempDir) -> TestServer {
        let server = tusk_server::Server::bind(
            dir.path(),
            &tusk_server::Overrides {
                port: Some(0),
                listen_addresses: Some("127.0.0.1".into()),
            },
        )
        .unwrap();
        let addr = server.local_addrs()[0];
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            server.run(async move {
                // Wait for the stop signal without blocking the reactor.
                tokio::task::spawn_blocking(move || {
                    let _ = rx.recv();
                })
                .await
                .unwrap();
            })
        });
        TestServer {
            dir,
            addr,
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A connection string for libpq.
    pub fn conninfo(&self, user: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user={user} dbname=tusk",
            self.port()
        )
    }

    /// A raw protocol client, logged in as `user` (trust).
    pub fn connect(&self) -> wire::Client {
        wire::Client::connect(self.addr, "tusk", None).unwrap()
    }

    /// Stops the server (fast shutdown) and returns what `run` returned.
    pub fn stop(mut self) -> Result<(), String> {
        self.stop.take();
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A PostgreSQL 15 client program, if installed.
pub fn pg_program(name: &str) -> Option<PathBuf> {
    let p = Path::new("/usr/lib/postgresql/15/bin").join(name);
    if p.exists() {
        return Some(p);
    }
    let out = Command::new("which").arg(name).output().ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Runs psql against the server: `-X -v ON_ERROR_STOP=0` and `args`.
pub fn psql(
    server: &TestServer,
    user: &str,
    env: &[(&str, &str)],
    args: &[&str],
) -> Option<Output> {
    let Some(psql) = pg_program("psql") else {
        eprintln!("skipping: psql not found");
        return None;
    };
    let mut c = Command::new(psql);
    c.arg("-X")
        .arg("-d")
        .arg(server.conninfo(user))
        .args(args)
        .env_remove("PGPASSWORD")
        .env("PGCONNECT_TIMEOUT", "30");
    for (k, v) in env {
        c.env(k, v);
    }
    Some(c.output().unwrap())
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `scenario` against tusk, and against PostgreSQL too when
/// `TUSK_TEST_PG_ADDR` gives one's address.
pub fn both(scenario: fn(SocketAddr)) {
    let server = TestServer::start(&[]);
    scenario(server.addr);
    if let Ok(pg) = std::env::var("TUSK_TEST_PG_ADDR") {
        scenario(pg.parse().unwrap());
    }
    server.stop().unwrap();
}

/// A wire-protocol client connected as `tusk`.
pub fn client(addr: SocketAddr) -> wire::Client {
    wire::Client::connect(addr, "tusk", None).unwrap()
}
