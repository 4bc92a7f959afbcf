//! Differential test: tusk against PostgreSQL 15, statement by statement.
//!
//! Every file `tests/corpus/*.sql` is a theme (joins, aggregates, errors, ...).
//! Each file is split into statements (see [`split_statements`]) and every
//! statement runs twice:
//!
//! * on PostgreSQL, through `psql -X -A -t -q -c STMT` on a throwaway cluster
//!   that this test creates (`initdb` into a temporary directory, a socket
//!   directory of its own, no TCP listener) and destroys again, also when the
//!   test panics ([`PgCluster`] stops the server in its `Drop`). One psql runs a
//!   whole file, one `-c` per statement, with marker lines in between (see
//!   [`PgCluster::run_file`]);
//! * on tusk, through `tusk -D DIR -A -t -q -c STMT`, with a fresh data
//!   directory per corpus file.
//!
//! Each corpus file gets a fresh PostgreSQL database and a fresh tusk data
//! directory, so files are independent of one another; statements inside a file
//! share state (a `CREATE TABLE` is seen by the statements after it).
//!
//! Outcomes are compared as follows:
//!
//! * a statement that succeeds on both sides must print the same rows: as a
//!   multiset, unless the statement has an `ORDER BY` at the top level (outside
//!   parentheses), in which case order matters too;
//! * a statement that fails on both sides must fail with the same first
//!   `ERROR:` line (`ERROR:  ` and the first line of the message; psql's
//!   `LINE 1:` / caret / `DETAIL:` lines are not compared);
//! * anything else (one side fails, or a side exits 0 but prints `ERROR:`, or
//!   exits non-zero without an `ERROR:` line, or hangs) is a mismatch.
//!
//! A statement preceded by the comment line `-- expect: error` is meant to fail
//! on PostgreSQL; one without it is meant to succeed. Where PostgreSQL disagrees
//! the corpus itself is wrong, and that is reported as a mismatch as well, so
//! the corpus stays valid PostgreSQL.
//!
//! All mismatches are collected and reported by a single assertion at the end.
//!
//! The test passes without checking anything, and says so on stderr, when
//! PostgreSQL is not installed (`$TUSK_PG_BIN`, default
//! `/usr/lib/postgresql/15/bin`) or when we are neither root (which runs
//! `initdb`/`pg_ctl` through `su postgres`) nor the `postgres` user.
//!
//! Knobs: `TUSK_DIFF_FILTER=substr` runs only the corpus files whose name
//! contains `substr`; `TUSK_DIFF_BIN=path` compares another binary with the tusk
//! command-line contract instead of the one Cargo built.

use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const DEFAULT_PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// Upper bound for one statement on either side; a hang becomes a mismatch.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Comment line that marks the next statement as failing deliberately.
const EXPECT_ERROR_MARKER: &str = "expect: error";
/// Marker lines that separate statement outcomes in psql's output.
const PSQL_MARK: &str = "@@tusk-diff-outcome@@";
const PSQL_END_MARK: &str = "@@tusk-diff-end@@";
/// Threads that run corpus files (each file once on PostgreSQL, once on tusk).
const WORKER_THREADS: usize = 4;
/// Output lines shown per side in the mismatch report.
const REPORT_LINES: usize = 20;

// ---------------------------------------------------------------------------
// Corpus parsing
// ---------------------------------------------------------------------------

/// One statement of a corpus file.
#[derive(Debug, Clone, PartialEq)]
struct Statement {
    /// 1-based line on which the statement starts.
    line: usize,
    /// Statement text without comments and without the final `;`.
    sql: String,
    /// The statement carries the `-- expect: error` marker.
    expect_error: bool,
}

/// Splits a corpus file into statements.
///
/// A statement ends at a `;` that is the last thing on its line (trailing
/// blanks and a `--` comment may follow it) and that is outside single-quoted
/// strings and double-quoted identifiers. `--` comments are removed outside
/// quotes; a comment line reading `-- expect: error` marks the next statement.
/// Text left after the last `;` counts as one more statement.
fn split_statements(text: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start_line = 0;
    let mut expect_error = false;
    // Quote character we are inside of, carried across lines.
    let mut quote: Option<char> = None;

    for (idx, raw) in text.lines().enumerate() {
        let mut cleaned = String::with_capacity(raw.len());
        let mut chars = raw.chars().peekable();
        let mut comment = None;
        while let Some(c) = chars.next() {
            match quote {
                Some(q) => {
                    cleaned.push(c);
                    if c == q {
                        if chars.peek() == Some(&q) {
                            // Doubled quote: an escaped quote, still inside.
                            cleaned.push(q);
                            chars.next();
                        } else {
                            quote = None;
                        }
                    }
                }
                None => {
                    if c == '-' && chars.peek() == Some(&'-') {
                        comment = Some(chars.collect::<String>());
                        break;
                    }
                    if c == '\'' || c == '"' {
                        quote = Some(c);
                    }
                    cleaned.push(c);
                }
            }
        }

        let blank = cleaned.trim().is_empty();
        if blank && current.trim().is_empty() {
            // A line outside any statement: only comments may mark things.
            if let Some(body) = comment {
                let body = body.trim_start_matches('-').trim();
                if body.starts_with(EXPECT_ERROR_MARKER) {
                    expect_error = true;
                }
            }
            continue;
        }
        if current.trim().is_empty() {
            current.clear();
            start_line = idx + 1;
        }
        if !current.is_empty() {
            current.push('\n');
        }
        current.push_str(cleaned.trim_end());
        if quote.is_none() && current.ends_with(';') {
            current.pop();
            out.push(Statement {
                line: start_line,
                sql: current.trim().to_string(),
                expect_error,
            });
            current.clear();
            expect_error = false;
        }
    }
    if !current.trim().is_empty() {
        out.push(Statement {
            line: start_line,
            sql: current.trim().to_string(),
            expect_error,
        });
    }
    out
}

/// Whether `sql` has `ORDER BY` outside all parentheses and quotes, i.e. the
/// statement's result order is defined and must be compared.
fn has_top_level_order_by(sql: &str) -> bool {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut word = String::new();
    let mut prev_word_was_order = false;
    for c in sql.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if finish_word(&mut word, &mut prev_word_was_order, depth) {
            return true;
        }
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '\'' | '"' => quote = Some(c),
            c if c.is_whitespace() => continue,
            _ => {}
        }
        // Any token other than blank space separates ORDER from BY.
        prev_word_was_order = false;
    }
    finish_word(&mut word, &mut prev_word_was_order, depth)
}

/// Closes the word being read by [`has_top_level_order_by`]; returns true when
/// it completes `ORDER BY` at parenthesis depth 0.
fn finish_word(word: &mut String, prev_was_order: &mut bool, depth: usize) -> bool {
    if word.is_empty() {
        return false;
    }
    let w = word.to_ascii_lowercase();
    word.clear();
    if depth != 0 {
        *prev_was_order = false;
        return false;
    }
    let hit = *prev_was_order && w == "by";
    *prev_was_order = w == "order";
    hit
}

// ---------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------

/// What one process run produced.
struct RunOutput {
    success: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Runs `cmd` with stdin closed, killing it after `timeout`.
///
/// Two threads drain stdout and stderr and report when they reach end of
/// file, which happens when the process exits; waiting on them (rather than
/// polling the process) returns as soon as the command is done.
fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<RunOutput> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    let pipes: [(bool, Box<dyn Read + Send>); 2] = [
        (true, Box::new(child.stdout.take().expect("piped stdout"))),
        (false, Box::new(child.stderr.take().expect("piped stderr"))),
    ];
    for (is_stdout, mut pipe) in pipes {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send((is_stdout, buf));
        });
    }
    drop(tx);
    let deadline = Instant::now() + timeout;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut timed_out = false;
    for _ in 0..2 {
        let wait = deadline.saturating_duration_since(Instant::now());
        let got = match rx.recv_timeout(wait) {
            Ok(got) => Some(got),
            Err(_) if !timed_out => {
                timed_out = true;
                let _ = child.kill();
                // The pipes close with the process; give the readers a moment.
                rx.recv_timeout(Duration::from_secs(5)).ok()
            }
            Err(_) => None,
        };
        match got {
            Some((true, buf)) => stdout = buf,
            Some((false, buf)) => stderr = buf,
            None => break,
        }
    }
    let status = child.wait()?;
    Ok(RunOutput {
        success: status.success() && !timed_out,
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        timed_out,
    })
}

/// Quotes `s` for `/bin/sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Output of a command that must succeed, or a description of its failure.
fn run_checked(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = run_with_timeout(cmd, Duration::from_secs(120))
        .map_err(|e| format!("{what}: cannot run: {e}"))?;
    if out.success {
        Ok(out.stdout)
    } else {
        Err(format!(
            "{what} failed (exit {:?}):\n{}{}",
            out.code, out.stdout, out.stderr
        ))
    }
}

/// Writes to the real stderr, past the test harness's output capture, so that a
/// skip is visible in a plain `cargo test`.
fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

// ---------------------------------------------------------------------------
// Outcomes
// ---------------------------------------------------------------------------

/// The result of one statement on one system.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Rows as printed by `-A -t` (fields separated by `|`, NULL empty).
    Rows(Vec<String>),
    /// The first `ERROR:` line, or a description of an abnormal end.
    Error(String),
}

impl Outcome {
    fn from_run(run: std::io::Result<RunOutput>) -> Outcome {
        let run = match run {
            Ok(run) => run,
            Err(e) => return Outcome::Error(format!("[could not start: {e}]")),
        };
        if run.timed_out {
            return Outcome::Error(format!(
                "[timed out after {} s]",
                STATEMENT_TIMEOUT.as_secs()
            ));
        }
        let error_line = run
            .stderr
            .lines()
            .find(|l| l.starts_with("ERROR:"))
            .map(|l| l.trim_end().to_string());
        match (run.success, error_line) {
            (true, None) => Outcome::Rows(output_rows(&run.stdout)),
            (false, Some(line)) => Outcome::Error(line),
            (true, Some(line)) => Outcome::Error(format!("{line} [but exit status 0]")),
            (false, None) => {
                // A panic message is two lines; the backtrace after it is noise here.
                let head: Vec<&str> = run
                    .stderr
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .take_while(|l| !l.starts_with("stack backtrace:") && !l.starts_with("note:"))
                    .take(4)
                    .collect();
                Outcome::Error(format!(
                    "[exit {:?} without an ERROR: line] {}",
                    run.code,
                    head.join(" / ")
                ))
            }
        }
    }

    fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }

    fn render(&self) -> String {
        match self {
            Outcome::Error(line) => format!("    {line}\n"),
            Outcome::Rows(rows) if rows.is_empty() => "    (no rows)\n".to_string(),
            Outcome::Rows(rows) => {
                let mut s = String::new();
                for row in rows.iter().take(REPORT_LINES) {
                    // Quote rows whose blanks would be invisible (NULL-only
                    // rows print as empty lines, char(n) pads with blanks).
                    if row.is_empty() || row.trim() != row {
                        let _ = writeln!(s, "    {row:?}");
                    } else {
                        let _ = writeln!(s, "    {row}");
                    }
                }
                if rows.len() > REPORT_LINES {
                    let _ = writeln!(s, "    ... ({} rows in all)", rows.len());
                }
                s
            }
        }
    }
}

/// Splits `-A -t` output into rows. Zero rows print nothing; a row whose only
/// field is NULL prints an empty line, so `""` and `"\n"` differ.
fn output_rows(stdout: &str) -> Vec<String> {
    if stdout.is_empty() {
        return Vec::new();
    }
    let body = stdout.strip_suffix('\n').unwrap_or(stdout);
    body.split('\n').map(str::to_string).collect()
}

/// Whether two outcomes agree, given whether row order is defined.
fn outcomes_agree(pg: &Outcome, tusk: &Outcome, ordered: bool) -> bool {
    match (pg, tusk) {
        (Outcome::Rows(a), Outcome::Rows(b)) if !ordered => {
            let mut a = a.clone();
            let mut b = b.clone();
            a.sort();
            b.sort();
            a == b
        }
        _ => pg == tusk,
    }
}

// ---------------------------------------------------------------------------
// The PostgreSQL side
// ---------------------------------------------------------------------------

/// A throwaway PostgreSQL cluster; stopped and deleted when dropped.
struct PgCluster {
    bin: PathBuf,
    data: PathBuf,
    socket_dir: PathBuf,
    port: u16,
    /// Run `initdb`/`pg_ctl` through `su postgres` (we are root).
    via_su: bool,
    started: bool,
    // Declared last so that it is removed after `drop` has stopped the server.
    root: tempfile::TempDir,
}

impl PgCluster {
    /// Creates and starts a cluster, or says why this machine cannot (`Err`
    /// means: skip the test).
    fn start() -> Result<PgCluster, String> {
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
        self.as_server_user(
            &[
                "initdb",
                "-D",
                &data,
                "-U",
                "postgres",
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
    fn psql(&self, db: &str) -> Command {
        let mut cmd = Command::new(self.bin.join("psql"));
        for (key, _) in std::env::vars() {
            if key.starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.args(["-X", "-A", "-t", "-q", "-h"])
            .arg(&self.socket_dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db]);
        cmd
    }

    fn create_database(&self, db: &str) -> Result<(), String> {
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
    fn run_file(&self, db: &str, statements: &[Statement]) -> Vec<Outcome> {
        let mut cmd = self.psql(db);
        for st in statements {
            cmd.arg("-c").arg(&st.sql);
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

// ---------------------------------------------------------------------------
// The tusk side
// ---------------------------------------------------------------------------

/// Settings of the second tusk run: a memory limit small enough that every
/// hash join in the corpus spills, and every scan/join tree eligible for a
/// parallel plan, so that the Parallel Hash Join spills too.
const TUSK_SPILL_CONF: &str = "work_mem = 64kB\nmin_parallel_table_scan_size = 0\n";

fn tusk_binary() -> PathBuf {
    std::env::var_os("TUSK_DIFF_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tusk")))
}

fn run_tusk(bin: &Path, data_dir: &Path, sql: &str) -> Outcome {
    let mut cmd = Command::new(bin);
    cmd.env_remove("TUSKDATA")
        .arg("-D")
        .arg(data_dir)
        .args(["-A", "-t", "-q", "-c", sql]);
    Outcome::from_run(run_with_timeout(&mut cmd, STATEMENT_TIMEOUT))
}

// ---------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------

struct CorpusFile {
    name: String,
    statements: Vec<Statement>,
}

fn load_corpus() -> Vec<CorpusFile> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let filter = std::env::var("TUSK_DIFF_FILTER").unwrap_or_default();
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("corpus directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            CorpusFile {
                name: format!(
                    "corpus/{}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ),
                statements: split_statements(&text),
            }
        })
        .collect()
}

/// Lower-case letters, digits and `_` only, so it can name a database.
fn database_name(index: usize, file: &str) -> String {
    let stem: String = file
        .trim_start_matches("corpus/")
        .trim_end_matches(".sql")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("diff_{index}_{stem}")
}

#[test]
fn differential_corpus() {
    let corpus = load_corpus();
    assert!(!corpus.is_empty(), "no corpus files matched");
    let pg = match PgCluster::start() {
        Ok(pg) => pg,
        Err(why) => {
            say(&format!("differential: SKIPPED, {why}"));
            return;
        }
    };
    let tusk = tusk_binary();
    let tusk_root = tempfile::Builder::new()
        .prefix("tusk-diff-data-")
        .tempdir()
        .expect("temporary directory for tusk");
    let started = Instant::now();

    // Jobs are (file, system) pairs: the files are independent of each other
    // and so are the two systems, so a few threads share the jobs; within one
    // job the statements run in order. Most of the time goes to starting
    // processes and connections, which overlaps well.
    // Each file runs on PostgreSQL and on tusk twice: with default settings,
    // and with `work_mem = 64kB` so that every hash join spills to partitions
    // (with `min_parallel_table_scan_size = 0`: parallel plans spill too).
    let jobs: Vec<(usize, usize)> = (0..corpus.len())
        .flat_map(|i| [(i, 0), (i, 1), (i, 2)])
        .collect();
    let next_job = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Vec<Outcome>>>> = Mutex::new(vec![None; jobs.len()]);
    thread::scope(|s| {
        for _ in 0..WORKER_THREADS {
            s.spawn(|| loop {
                let j = next_job.fetch_add(1, Ordering::Relaxed);
                let Some(&(i, system)) = jobs.get(j) else {
                    break;
                };
                let file = &corpus[i];
                let outcomes: Vec<Outcome> = if system == 0 {
                    let db = database_name(i, &file.name);
                    pg.create_database(&db).unwrap_or_else(|e| panic!("{e}"));
                    pg.run_file(&db, &file.statements)
                } else {
                    let dir = tusk_root.path().join(format!("data-{i}-{system}"));
                    if system == 2 {
                        std::fs::create_dir_all(&dir).expect("tusk data directory");
                        std::fs::write(dir.join("tusk.conf"), TUSK_SPILL_CONF).expect("tusk.conf");
                    }
                    file.statements
                        .iter()
                        .map(|st| run_tusk(&tusk, &dir, &st.sql))
                        .collect()
                };
                results.lock().unwrap()[j] = Some(outcomes);
            });
        }
    });
    let mut results = results.into_inner().unwrap().into_iter();
    let mut pg_outcomes = Vec::new();
    let mut tusk_outcomes = Vec::new();
    let mut spill_outcomes = Vec::new();
    for _ in 0..corpus.len() {
        pg_outcomes.push(results.next().flatten().expect("PostgreSQL job result"));
        tusk_outcomes.push(results.next().flatten().expect("tusk job result"));
        spill_outcomes.push(
            results
                .next()
                .flatten()
                .expect("tusk (spilling) job result"),
        );
    }

    let mut report = String::new();
    let mut mismatches = 0;
    let mut total = 0;
    let variants = [
        ("tusk", &tusk_outcomes),
        ("tusk with work_mem = 64kB", &spill_outcomes),
    ];
    for (label, outcomes) in variants {
        for ((file, pg_file), tusk_file) in corpus.iter().zip(&pg_outcomes).zip(outcomes.iter()) {
            for ((st, pg_out), tusk_out) in file.statements.iter().zip(pg_file).zip(tusk_file) {
                total += 1;
                let corpus_problem = st.expect_error != pg_out.is_error();
                let ordered = has_top_level_order_by(&st.sql);
                if !corpus_problem && outcomes_agree(pg_out, tusk_out, ordered) {
                    continue;
                }
                mismatches += 1;
                let _ = writeln!(report, "--- {}:{}", file.name, st.line);
                for line in st.sql.lines() {
                    let _ = writeln!(report, "  {line}");
                }
                if corpus_problem {
                    let _ = writeln!(
                    report,
                    "  CORPUS BUG: PostgreSQL {} but the statement is {}marked `-- {EXPECT_ERROR_MARKER}`",
                    if pg_out.is_error() { "fails" } else { "succeeds" },
                    if st.expect_error { "" } else { "not " },
                );
                }
                let order = if ordered { "ordered" } else { "as a multiset" };
                let _ = writeln!(report, "  PostgreSQL ({order}):");
                report.push_str(&pg_out.render());
                let _ = writeln!(report, "  {label}:");
                report.push_str(&tusk_out.render());
            }
        }
    }
    say(&format!(
        "differential: {total} statements in {} files, {mismatches} mismatches, {:.1} s",
        corpus.len(),
        started.elapsed().as_secs_f64()
    ));
    assert!(
        mismatches == 0,
        "{mismatches} of {total} statements differ between PostgreSQL and tusk ({}):\n{report}",
        tusk.display()
    );
}

#[test]
fn splitting_statements() {
    let text = "-- leading comment\n\
                create table t (a int); -- trailing\n\
                \n\
                -- expect: error\n\
                select 'x;\n\
                y' from t;\n\
                select \"a;b\" -- comment; not an end\n\
                  from t;\n\
                select 'it''s';\n\
                select 1";
    let got = split_statements(text);
    let want = vec![
        Statement {
            line: 2,
            sql: "create table t (a int)".into(),
            expect_error: false,
        },
        Statement {
            line: 5,
            sql: "select 'x;\ny' from t".into(),
            expect_error: true,
        },
        Statement {
            line: 7,
            sql: "select \"a;b\"\nfrom t".into(),
            expect_error: false,
        },
        Statement {
            line: 9,
            sql: "select 'it''s'".into(),
            expect_error: false,
        },
        Statement {
            line: 10,
            sql: "select 1".into(),
            expect_error: false,
        },
    ];
    assert_eq!(got, want);
}

#[test]
fn detecting_top_level_order_by() {
    assert!(has_top_level_order_by("select a from t order by a"));
    assert!(has_top_level_order_by(
        "SELECT a FROM t ORDER\n  BY a DESC LIMIT 3"
    ));
    assert!(!has_top_level_order_by("select a from t"));
    assert!(!has_top_level_order_by("select 'order by' from t"));
    assert!(!has_top_level_order_by("select \"order\", by from t"));
    assert!(!has_top_level_order_by(
        "select count(*) from (select a from t order by a) s"
    ));
    assert!(!has_top_level_order_by("select border, by from t"));
}

#[test]
fn comparing_outcomes() {
    let rows = |r: &[&str]| Outcome::Rows(r.iter().map(|s| s.to_string()).collect());
    assert!(outcomes_agree(
        &rows(&["1", "2"]),
        &rows(&["2", "1"]),
        false
    ));
    assert!(!outcomes_agree(
        &rows(&["1", "2"]),
        &rows(&["2", "1"]),
        true
    ));
    assert!(!outcomes_agree(&rows(&["1", "1"]), &rows(&["1"]), false));
    assert!(!outcomes_agree(&rows(&[]), &rows(&[""]), false));
    let err = |s: &str| Outcome::Error(s.to_string());
    assert!(outcomes_agree(
        &err("ERROR:  division by zero"),
        &err("ERROR:  division by zero"),
        false
    ));
    assert!(!outcomes_agree(
        &err("ERROR:  division by zero"),
        &rows(&[]),
        false
    ));
    assert_eq!(output_rows(""), Vec::<String>::new());
    assert_eq!(output_rows("\n"), vec![String::new()]);
    assert_eq!(output_rows("1|a\n2|\n"), vec!["1|a", "2|"]);
}
