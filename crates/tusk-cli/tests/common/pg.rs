//! A throwaway PostgreSQL cluster for differential tests.

use super::outcome::{Outcome, STATEMENT_TIMEOUT};
use super::process::{run_checked, run_with_timeout, say, sh_quote};
use std::fs;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

pub const DEFAULT_PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// Marker lines that separate statement outcomes in psql's output.
const PSQL_MARK: &str = "@@tusk-diff-outcome@@";
const PSQL_END_MARK: &str = "@@tusk-diff-end@@";

// ---------------------------------------------------------------------------
// The PostgreSQL side
// ---------------------------------------------------------------------------

/// A throwaway PostgreSQL cluster; stopped and deleted when dropped.
pub struct PgCluster {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    /// The bootstrap superuser (`initdb -U`), whom psql connects as.
    user: String,
    /// Run `initdb`/`pg_ctl` through `su postgres` (we are root).
    via_su: bool,
    started: bool,
    // Declared last so that it is removed after `drop` has stopped the server.
    root: tempfile::TempDir,
}

impl PgCluster {
    /// Creates and starts a cluster, or says why this machine cannot (`Err`
    /// means: skip the test).
    pub fn start() -> Result<PgCluster, String> {
        PgCluster::start_as("postgres")
    }

    /// [`PgCluster::start`] with `user` as the bootstrap superuser.
    pub fn start_as(user: &str) -> Result<PgCluster, String> {
        let bin = PathBuf::from(
            std::env::var("TUSK_PG_BIN").unwrap_or_else(|_| DEFAULT_PG_BIN.to_string()),
        );
        for tool in ["initdb", "pg_ctl", "psql"] {
            if !bin.join(tool).is_file() {
                return Err(format!(
                    "PostgreSQL not found: {} is missing (install PostgreSQL 15 or set TUSK_PG_BIN)",
                    bin.join(tool).display()
                ));
            }
        }
        let id = |args: &[&str]| -> Option<u32> {
            let out = Command::new("id").args(args).output().ok()?;
            if !out.status.success() {
                return None;
            }
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        };
        let uid = id(&["-u"]).ok_or("cannot tell our user id (`id -u` failed)")?;
        let pg_uid = id(&["-u", "postgres"]);
        let via_su = if uid == 0 {
            if pg_uid.is_none() {
                return Err(
                    "running as root but there is no `postgres` user to run the server".into(),
                );
            }
            true
        } else if Some(uid) == pg_uid {
            false
        } else {
            return Err(format!(
                "neither root nor the postgres user (uid {uid}); cannot start a PostgreSQL cluster"
            ));
        };

        let root = tempfile::Builder::new()
            .prefix("tusk-diff-pg-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        if via_su {
            let gid = id(&["-g", "postgres"]);
            std::os::unix::fs::chown(root.path(), pg_uid, gid)
                .map_err(|e| format!("cannot chown {} to postgres: {e}", root.path().display()))?;
        }
        let mut cluster = PgCluster {
            bin,
            data: root.path().join("data"),
            socket_dir: root.path().to_path_buf(),
            port: 40000 + (std::process::id() % 20000) as u16,
            user: user.to_string(),
            via_su,
            started: false,
            root,
        };
        // From here on a failure is a real failure, not a reason to skip.
        cluster.init_and_start().unwrap_or_else(|e| panic!("{e}"));
        Ok(cluster)
    }

    fn init_and_start(&mut self) -> Result<(), String> {
        let data = self.data.to_string_lossy().into_owned();
        let user = self.user.clone();
        self.as_server_user(
            &[
                "initdb",
                "-D",
                &data,
                "-U",
                &user,
                "-A",
                "trust",
                "-E",
                "UTF8",
                // C collation: text sorts bytewise, and messages are English.
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
        )?;
        // The settings file is owned by postgres; appending keeps it so.
        let settings = format!(
            "\n# differential test\nport = {}\nlisten_addresses = ''\n\
             unix_socket_directories = '{}'\nhuge_pages = off\nshared_buffers = 128MB\n\
             fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n\
             autovacuum = off\njit = off\nmax_connections = 20\n",
            self.port,
            self.socket_dir.display()
        );
        fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("postgresql.conf"))
            .and_then(|mut f| f.write_all(settings.as_bytes()))
            .map_err(|e| format!("cannot write postgresql.conf: {e}"))?;
        let log = self.root.path().join("server.log");
        let log = log.to_string_lossy().into_owned();
        self.started = true; // from now on Drop tries to stop it
        self.as_server_user(
            &["pg_ctl", "-D", &data, "-l", &log, "-w", "-t", "60", "start"],
            "pg_ctl start",
        )
        .map_err(|e| {
            let server_log = fs::read_to_string(&log).unwrap_or_default();
            format!("{e}\nserver log:\n{server_log}")
        })
        .map(|_| ())
    }

    /// Runs a PostgreSQL tool (`args[0]` in the bin directory) as the server's
    /// owner.
    fn as_server_user(&self, args: &[&str], what: &str) -> Result<String, String> {
        let program = self.bin.join(args[0]);
        let mut cmd = if self.via_su {
            let mut line = sh_quote(&program.to_string_lossy());
            for arg in &args[1..] {
                line.push(' ');
                line.push_str(&sh_quote(arg));
            }
            let mut cmd = Command::new("su");
            cmd.args(["postgres", "-s", "/bin/sh", "-c", &line]);
            cmd
        } else {
            let mut cmd = Command::new(program);
            cmd.args(&args[1..]);
            cmd
        };
        // pg_ctl's server inherits these pipes; send its output to the log only.
        run_checked(cmd.current_dir("/"), what)
    }

    /// `psql` on database `db`, with the environment cleared of PG* settings.
    pub fn psql(&self, db: &str) -> Command {
        let mut cmd = Command::new(self.bin.join("psql"));
        for (key, _) in std::env::vars() {
            if key.starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.args(["-X", "-A", "-t", "-q", "-h"])
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", &self.user, "-d", db]);
        cmd
    }

    /// psql on database `db` with no output options: what a user sees.
    pub fn plain_psql(&self, db: &str) -> Command {
        let mut cmd = Command::new(self.bin.join("psql"));
        for (key, _) in std::env::vars() {
            if key.starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.args(["-X", "-h"]).arg(&self.socket_dir).args([
            "-p",
            &self.port.to_string(),
            "-U",
            &self.user,
            "-d",
            db,
        ]);
        cmd
    }

    /// The directory of PostgreSQL's programs.
    pub fn bin(&self) -> &std::path::Path {
        &self.bin
    }

    pub fn create_database(&self, db: &str) -> Result<(), String> {
        run_checked(
            self.psql("postgres")
                .arg("-c")
                .arg(format!("create database {db}")),
            "create database",
        )
        .map(|_| ())
    }

    /// Runs `statements` in order on database `db`, in one psql session.
    ///
    /// Every statement is its own `-c` (psql runs them one after another on
    /// one connection, each in its own transaction, and goes on after an
    /// error). After each one, `\echo` prints a marker line with psql's
    /// `ERROR` and `LAST_ERROR_MESSAGE` variables, then an end marker: the rows
    /// come before the markers, the error message between them, all on stdout,
    /// so nothing depends on how stdout and stderr interleave. One psql for a
    /// whole file instead of one per statement saves most of the run time.
    pub fn run_file(&self, db: &str, statements: &[String]) -> Vec<Outcome> {
        let mut cmd = self.psql(db);
        for st in statements {
            cmd.arg("-c").arg(st);
            cmd.arg("-c")
                .arg(format!("\\echo {PSQL_MARK} :ERROR :LAST_ERROR_MESSAGE"));
            cmd.arg("-c").arg(format!("\\echo {PSQL_END_MARK}"));
        }
        let timeout = STATEMENT_TIMEOUT * 2 + Duration::from_secs(1) * statements.len() as u32;
        let run = match run_with_timeout(&mut cmd, timeout) {
            Ok(run) => run,
            Err(e) => {
                let why = Outcome::Error(format!("[could not start psql: {e}]"));
                return vec![why; statements.len()];
            }
        };
        let mut outcomes = Vec::with_capacity(statements.len());
        let mut rows = Vec::new();
        let mut lines = run.stdout.lines();
        while let Some(line) = lines.next() {
            let Some(rest) = line.strip_prefix(PSQL_MARK) else {
                rows.push(line.to_string());
                continue;
            };
            let rest = rest.trim_start();
            let (failed, first) = match rest.split_once(' ') {
                Some((flag, message)) => (flag == "true", message.to_string()),
                None => (rest == "true", String::new()),
            };
            // The message may span lines; only its first is compared.
            for more in lines.by_ref() {
                if more == PSQL_END_MARK {
                    break;
                }
            }
            outcomes.push(if failed {
                Outcome::Error(format!("ERROR:  {first}"))
            } else {
                Outcome::Rows(std::mem::take(&mut rows))
            });
        }
        // psql died or timed out part-way: the rest has no outcome.
        let why = if run.timed_out {
            format!("[psql timed out after {} s]", timeout.as_secs())
        } else {
            format!(
                "[psql ended early, exit {:?}] {}",
                run.code,
                run.stderr.lines().last().unwrap_or_default()
            )
        };
        outcomes.resize(statements.len(), Outcome::Error(why));
        outcomes
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if !self.started {
            return;
        }
        let data = self.data.to_string_lossy().into_owned();
        if let Err(e) = self.as_server_user(
            &["pg_ctl", "-D", &data, "-m", "immediate", "-w", "stop"],
            "pg_ctl stop",
        ) {
            say(&format!("differential: could not stop PostgreSQL: {e}"));
        }
    }
}
