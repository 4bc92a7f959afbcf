//! The server process: one open database, listeners, a thread per
//! connection and a pool that serves idle sessions, and fast shutdown.
//!
//! [`Server::bind`] opens the data directory (its `tusk.lock` keeps a
//! second server or a `tusk -c` out), reads the settings, refuses unsafe
//! ones and binds the listening sockets: TCP on `listen_addresses`, and a
//! Unix-domain socket in each of `unix_socket_directories` (see `unix`). [`Server::run`] then accepts on a
//! tokio reactor — accepting is all that waits on the reactor — and hands
//! each connection to its own thread, which does the TLS handshake, the
//! startup and the session's queries with blocking I/O, like a PostgreSQL
//! backend process; no query ever runs on the reactor. Once a session goes
//! idle between messages it may move to the session pool (`pool`, when `tusk.session_pool_seats` is set), whose
//! threads serve whichever session has a message next.
//!
//! When the shutdown future completes (SIGTERM or SIGINT for `tusk serve`:
//! PostgreSQL's fast shutdown), the listeners close, every session's
//! running statement is stopped and its socket shut, each session answers
//! FATAL 57P01 `terminating connection due to administrator command` and
//! ends (a statement cut short rolls back), and once the last connection
//! thread is gone the database writes its shutdown checkpoint.

use crate::config::{Overrides, ServerConfig};
use crate::conn::Stream;
use crate::pool::SessionPool;
use crate::registry::Registry;
use crate::roles::RoleFile;
use crate::startup::{serve_connection, Shared};
use crate::unix::SocketFile;
use std::future::Future;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tusk_storage::Database;

/// How long sessions get to report the shutdown to their clients before
/// their sockets are closed under them.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A bound, not yet serving, server.
pub struct Server {
    shared: Arc<Shared>,
    listeners: Vec<TcpListener>,
    unix_listeners: Vec<UnixListener>,
    /// Removed at shutdown (or when the server is dropped unserved).
    socket_files: Vec<SocketFile>,
}

/// A listening socket on the reactor.
enum Listener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

impl Listener {
    /// The next connection, as a blocking socket.
    async fn accept(&self) -> std::io::Result<Stream> {
        Ok(match self {
            Listener::Tcp(l) => {
                let s = l.accept().await?.0.into_std()?;
                s.set_nonblocking(false)?;
                Stream::Tcp(s)
            }
            Listener::Unix(l) => {
                let s = l.accept().await?.0.into_std()?;
                s.set_nonblocking(false)?;
                Stream::Unix(s)
            }
        })
    }
}

fn log(line: &str) {
    eprintln!("LOG:  {line}");
}

impl Server {
    /// Opens the data directory and binds the listening sockets.
    pub fn bind(data_dir: &Path, overrides: &Overrides) -> Result<Server, String> {
        let db = Database::open(data_dir, &[]).map_err(|e| e.to_string())?;
        let config = ServerConfig::from_settings(db.settings(), data_dir, overrides)?;
        let addrs = config.addresses()?;
        config.check_security(&addrs)?;
        let tls = config.tls.as_ref().map(crate::tls::load).transpose()?;
        let roles = Arc::new(RoleFile::open(data_dir).map_err(|e| e.message)?);
        let mut listeners = Vec::new();
        let mut last_error = None;
        for a in &addrs {
            let family = if a.is_ipv4() { "IPv4" } else { "IPv6" };
            match TcpListener::bind(a) {
                Ok(l) => {
                    let local = l.local_addr().map_err(|e| e.to_string())?;
                    log(&format!(
                        "listening on {family} address \"{}\", port {}",
                        local.ip(),
                        local.port()
                    ));
                    listeners.push(l);
                }
                Err(e) => {
                    let msg = format!("could not bind {family} address \"{}\": {e}", a.ip());
                    eprintln!("WARNING:  {msg}");
                    last_error = Some(msg);
                }
            }
        }
        if listeners.is_empty() && !config.listen_addresses.is_empty() {
            return Err(format!(
                "could not create any TCP/IP sockets ({})\nHINT: Is another server already running on port {}? If not, wait a few seconds and retry.",
                last_error.unwrap_or_default(),
                config.port
            ));
        }
        // `--port 0` (tests): the sockets are named after the TCP port.
        let port = match (config.port, listeners.first()) {
            (0, Some(l)) => l.local_addr().map_err(|e| e.to_string())?.port(),
            (0, None) => return Err("port 0 needs a TCP listener to name the Unix socket".into()),
            (p, _) => p,
        };
        let (mut unix_listeners, mut socket_files) = (Vec::new(), Vec::new());
        for dir in &config.unix_socket_directories {
            let (l, f) = crate::unix::bind(dir, port, config.unix_socket_permissions)?;
            log(&format!(
                "listening on Unix socket \"{}\"",
                f.path.display()
            ));
            unix_listeners.push(l);
            socket_files.push(f);
        }
        let registry = Registry::new(config.max_connections);
        Ok(Server {
            shared: Arc::new(Shared {
                db,
                pool: SessionPool::new(config.session_pool_seats)
                    .map_err(|e| format!("could not create the session pool: {e}"))?,
                config,
                tls,
                roles,
                registry,
                mock_nonce: crate::random::bytes(),
            }),
            listeners,
            unix_listeners,
            socket_files,
        })
    }

    /// The addresses the server listens on.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// The Unix sockets the server listens on.
    pub fn unix_sockets(&self) -> Vec<PathBuf> {
        self.socket_files.iter().map(|f| f.path.clone()).collect()
    }

    /// Serves until `shutdown` completes, then shuts down fast.
    pub fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("could not start the reactor: {e}"))?;
        let Server {
            shared,
            listeners,
            unix_listeners,
            socket_files,
        } = self;
        runtime.block_on(async {
            let mut accepting = Vec::new();
            for l in listeners {
                l.set_nonblocking(true).map_err(|e| e.to_string())?;
                let l = tokio::net::TcpListener::from_std(l).map_err(|e| e.to_string())?;
                accepting.push(tokio::spawn(accept_loop(Listener::Tcp(l), shared.clone())));
            }
            for l in unix_listeners {
                l.set_nonblocking(true).map_err(|e| e.to_string())?;
                let l = tokio::net::UnixListener::from_std(l).map_err(|e| e.to_string())?;
                accepting.push(tokio::spawn(accept_loop(Listener::Unix(l), shared.clone())));
            }
            log("database system is ready to accept connections");
            shutdown.await;
            log("received fast shutdown request");
            for a in accepting {
                a.abort();
            }
            Ok::<(), String>(())
        })?;
        drop(runtime);
        drop(socket_files);
        shared.registry.shut_down();
        shared.registry.wait_idle(SHUTDOWN_GRACE);
        let result = shared.db.checkpoint().map_err(|e| e.to_string());
        log("database system is shut down");
        result
    }

    /// Serves until SIGTERM or SIGINT.
    pub fn run_until_signal(self) -> Result<(), String> {
        self.run(async {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                eprintln!("WARNING:  could not install signal handlers");
                return std::future::pending().await;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        })
    }
}

async fn accept_loop(listener: Listener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of descriptors and the like: report, wait, go on.
                eprintln!("LOG:  could not accept new connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        // Counted before the thread starts, so shutdown waits for it.
        let guard = shared.registry.enter(stream.try_clone().ok());
        let shared = shared.clone();
        // A statement-stack thread: statements run on it directly.
        let spawned = tusk_sql::spawn_statement_thread("tusk session".into(), move || {
            serve_connection(shared, guard, stream)
        });
        if let Err(e) = spawned {
            eprintln!("LOG:  could not start a session thread: {e}");
        }
    }
}
