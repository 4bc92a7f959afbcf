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
//!   parentheses) or is a COPY (whose output is compared byte for byte), in
//!   which case order matters too;
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
//! PostgreSQL 15 has no columnar access method, so statements reach it
//! with tusk's `columnar` rewritten away ([`for_postgres`]): `USING
//! columnar` is taken out of CREATE TABLE, and `SET
//! default_table_access_method = columnar` becomes `= heap`. The same
//! queries then run over columnar tables on tusk and over heap tables on
//! PostgreSQL, which must give the same answers (`24_columnar.sql`).
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

mod common;

use common::outcome::{outcomes_agree, output_rows, Outcome, STATEMENT_TIMEOUT};
use common::pg::PgCluster;
use common::process::{run_with_timeout, say};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Instant;

/// Comment line that marks the next statement as failing deliberately.
const EXPECT_ERROR_MARKER: &str = "expect: error";
/// Threads that run corpus files (each file once on PostgreSQL, once on tusk).
const WORKER_THREADS: usize = 4;

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

/// Whether `sql` is a COPY: its output is compared line by line, in order
/// (`COPY t TO` writes the table in physical order on both systems, and a
/// `COPY (query)` in the corpus orders its rows).
fn is_copy(sql: &str) -> bool {
    sql.split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("copy"))
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

/// Statement `sql` as PostgreSQL runs it: tusk's columnar access method
/// written away (see the module doc).
fn for_postgres(sql: &str) -> String {
    let lower = sql.to_ascii_lowercase();
    let first = lower.split_whitespace().next().unwrap_or("");
    if first == "create" {
        let mut out = sql.to_string();
        while let Some(at) = out.to_ascii_lowercase().find(" using columnar") {
            out.replace_range(at..at + " using columnar".len(), "");
        }
        return out;
    }
    if matches!(first, "set" | "reset") && lower.contains("default_table_access_method") {
        return lower.replace("columnar", "heap");
    }
    sql.to_string()
}

// ---------------------------------------------------------------------------
// The tusk side
// ---------------------------------------------------------------------------

/// The tusk variants every corpus file runs in, besides the defaults: a
/// memory limit small enough that every hash join, sort and aggregation
/// spills (with every scan/join tree eligible for a parallel plan, so the
/// parallel operators spill too), and parallel plans forced at the default
/// memory limit.
const TUSK_VARIANTS: [(&str, Option<&str>); 3] = [
    ("tusk", None),
    (
        "tusk with work_mem = 64kB",
        Some("work_mem = 64kB\nmin_parallel_table_scan_size = 0\n"),
    ),
    (
        "tusk with parallel plans forced",
        Some("min_parallel_table_scan_size = 0\n"),
    ),
];

/// `TUSK_DIFF_BIN`: compare that binary, through its command line, instead
/// of the engine in-process.
fn tusk_binary() -> Option<PathBuf> {
    std::env::var_os("TUSK_DIFF_BIN").map(PathBuf::from)
}

fn run_tusk(bin: &Path, data_dir: &Path, sql: &str) -> Outcome {
    let mut cmd = Command::new(bin);
    cmd.env_remove("TUSKDATA")
        .arg("-D")
        .arg(data_dir)
        .args(["-A", "-t", "-q", "-c", sql]);
    Outcome::from_run(run_with_timeout(&mut cmd, STATEMENT_TIMEOUT))
}

/// Runs a corpus file on tusk in variant `v`.
fn run_tusk_file(root: &Path, i: usize, v: usize, statements: &[String]) -> Vec<Outcome> {
    let dir = root.join(format!("data-{i}-{v}"));
    let conf = TUSK_VARIANTS[v].1;
    match tusk_binary() {
        Some(bin) => {
            fs::create_dir_all(&dir).expect("tusk data directory");
            if let Some(c) = conf {
                fs::write(dir.join("tusk.conf"), c).expect("tusk.conf");
            }
            statements
                .iter()
                .map(|st| run_tusk(&bin, &dir, st))
                .collect()
        }
        None => common::tusk::run_all(&dir, conf, statements),
    }
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
    let systems = 1 + TUSK_VARIANTS.len();
    let jobs: Vec<(usize, usize)> = (0..corpus.len())
        .flat_map(|i| (0..systems).map(move |s| (i, s)))
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
                let sqls: Vec<String> = file.statements.iter().map(|s| s.sql.clone()).collect();
                let outcomes: Vec<Outcome> = if system == 0 {
                    let db = database_name(i, &file.name);
                    pg.create_database(&db).unwrap_or_else(|e| panic!("{e}"));
                    let sqls: Vec<String> = sqls.iter().map(|s| for_postgres(s)).collect();
                    pg.run_file(&db, &sqls)
                } else {
                    run_tusk_file(tusk_root.path(), i, system - 1, &sqls)
                };
                results.lock().unwrap()[j] = Some(outcomes);
            });
        }
    });
    let mut results = results.into_inner().unwrap().into_iter();
    let mut pg_outcomes = Vec::new();
    let mut tusk_outcomes: Vec<Vec<Vec<Outcome>>> = vec![Vec::new(); TUSK_VARIANTS.len()];
    for _ in 0..corpus.len() {
        pg_outcomes.push(results.next().flatten().expect("PostgreSQL job result"));
        for v in tusk_outcomes.iter_mut() {
            v.push(results.next().flatten().expect("tusk job result"));
        }
    }

    let mut report = String::new();
    let mut mismatches = 0;
    let mut total = 0;
    for ((label, _), outcomes) in TUSK_VARIANTS.iter().zip(&tusk_outcomes) {
        for ((file, pg_file), tusk_file) in corpus.iter().zip(&pg_outcomes).zip(outcomes.iter()) {
            for ((st, pg_out), tusk_out) in file.statements.iter().zip(pg_file).zip(tusk_file) {
                total += 1;
                let corpus_problem = st.expect_error != pg_out.is_error();
                let ordered = has_top_level_order_by(&st.sql) || is_copy(&st.sql);
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
        "{mismatches} of {total} statements differ between PostgreSQL and tusk:\n{report}"
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
fn columnar_is_written_away_for_postgresql() {
    assert_eq!(
        for_postgres("CREATE TABLE t (a int) USING columnar"),
        "CREATE TABLE t (a int)"
    );
    assert_eq!(
        for_postgres("create table t using Columnar as select 1"),
        "create table t as select 1"
    );
    assert_eq!(
        for_postgres("set default_table_access_method = columnar"),
        "set default_table_access_method = heap"
    );
    assert_eq!(
        for_postgres("select 'using columnar'"),
        "select 'using columnar'"
    );
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
