//! Crash harness: runs a workload in a `tusk` child process, SIGKILLs it at a
//! random moment (bulk load, COPY FROM STDIN, INSERT, DELETE, CREATE TABLE
//! AS, DROP TABLE, CREATE INDEX, VACUUM, CHECKPOINT), restarts, and checks that every
//! acknowledged statement is there and nothing unacknowledged is, except
//! that the one statement in flight at the kill may have committed or not.
//! Table `t` has a btree index from the start, so btree insertions, splits
//! and VACUUM's index pass are replayed too; every index must return
//! exactly the rows a sequential scan returns.
//!
//! The same trials run on a columnar table (`USING columnar`, no index):
//! COPY and bulk loads make row groups (or go to the delta when small),
//! DELETE and UPDATE change rows of row groups, VACUUM rewrites them, and
//! CREATE TABLE AS makes columnar copies; `killed_columnar_copy_and_delete`
//! kills large COPYs and DELETEs part-way.
//!
//! A few trials run in the normal test suite; `bench/crash_stress.sh` runs
//! many (`TUSK_CRASH_TRIALS`, `TUSK_CRASH_ROUNDS`, `TUSK_CRASH_SEED`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tusk_sql::{QueryResult, Session};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type Tables = BTreeMap<String, BTreeSet<i64>>;

/// How the trial's tables store their rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// Heap tables, `t` with a btree index.
    Heap,
    /// Columnar tables.
    Columnar,
}

/// One statement and the state it leads to if it commits.
fn random_op(
    rng: &mut Rng,
    state: &Tables,
    next_key: &mut i64,
    ctas: &mut u32,
    storage: Storage,
) -> (String, Tables) {
    let mut after = state.clone();
    let t = &state["t"];
    loop {
        match rng.below(100) {
            0..=7 => {
                // COPY FROM STDIN, its data in the script after it.
                let n = 1 + rng.below(30_000) as i64;
                let (a, b) = (*next_key, *next_key + n - 1);
                *next_key += n;
                after.get_mut("t").unwrap().extend(a..=b);
                let mut sql = String::from("copy t from stdin;\n");
                for k in a..=b {
                    sql.push_str(&format!("{k}\t{}\trow {k}\n", k * 7));
                }
                sql.push_str("\\.");
                return (sql, after);
            }
            8..=24 => {
                // Bulk load.
                let n = 1 + rng.below(30_000) as i64;
                let (a, b) = (*next_key, *next_key + n - 1);
                *next_key += n;
                after.get_mut("t").unwrap().extend(a..=b);
                return (
                    format!("insert into t select g, g * 7, 'row ' || g from generate_series({a}, {b}) g;"),
                    after,
                );
            }
            25..=54 => {
                let k = *next_key;
                *next_key += 1;
                after.get_mut("t").unwrap().insert(k);
                return (
                    format!("insert into t values ({k}, {}, 'single {k}');", k * 7),
                    after,
                );
            }
            55..=79 => {
                if t.is_empty() {
                    continue;
                }
                let lo = *t.iter().nth(rng.below(t.len() as u64) as usize).unwrap();
                let range = if rng.below(4) == 0 { 5000 } else { 3 };
                let width = 1 + rng.below(range) as i64;
                after
                    .get_mut("t")
                    .unwrap()
                    .retain(|&k| k < lo || k >= lo + width);
                return (
                    format!("delete from t where k >= {lo} and k < {};", lo + width),
                    after,
                );
            }
            80..=84 => return ("checkpoint;".into(), after),
            85..=88 => return ("vacuum t;".into(), after),
            89..=90 if storage == Storage::Columnar => {
                // Rows of row groups move to the delta, unchanged.
                if t.is_empty() {
                    continue;
                }
                let lo = *t.iter().nth(rng.below(t.len() as u64) as usize).unwrap();
                let width = 1 + rng.below(2000) as i64;
                return (
                    format!("update t set w = w where k >= {lo} and k < {};", lo + width),
                    after,
                );
            }
            89..=90 => {
                let extra: Vec<&String> = state.keys().filter(|k| *k != "t").collect();
                if extra.is_empty() {
                    continue;
                }
                let name = extra[rng.below(extra.len() as u64) as usize];
                return (format!("create index on {name} (k);"), after);
            }
            91..=94 => {
                *ctas += 1;
                let name = format!("c{ctas}");
                after.insert(name.clone(), t.clone());
                let using = match storage {
                    Storage::Heap => "",
                    Storage::Columnar => " using columnar",
                };
                return (
                    format!("create table {name}{using} as select * from t;"),
                    after,
                );
            }
            _ => {
                let extra: Vec<&String> = state.keys().filter(|k| *k != "t").collect();
                if extra.is_empty() {
                    continue;
                }
                let name = extra[rng.below(extra.len() as u64) as usize].clone();
                after.remove(&name);
                return (format!("drop table {name};"), after);
            }
        }
    }
}

/// The tables and keys in the data directory (opened in this process).
fn read_state(dir: &Path) -> Tables {
    let mut s = Session::open(dir).expect("restart after crash");
    let names: Vec<String> = s
        .database()
        .catalog()
        .tables()
        .filter(|t| t.is_plain_table())
        .map(|t| t.name.clone())
        .collect();
    let mut out = Tables::new();
    for name in names {
        let r = s.query(&format!("select k, v, w from {name}")).unwrap();
        let QueryResult::Rows { rows, .. } = &r[0] else {
            panic!("no rows")
        };
        let mut keys = BTreeSet::new();
        for row in rows {
            let k: i64 = row[0].as_deref().unwrap().parse().unwrap();
            let v: i64 = row[1].as_deref().unwrap().parse().unwrap();
            assert_eq!(v, k * 7, "row {k} of {name} is damaged");
            assert_eq!(
                row[2].as_deref().unwrap().split(' ').nth(1),
                Some(&*k.to_string())
            );
            assert!(keys.insert(k), "row {k} of {name} appears twice");
        }
        // Each index returns exactly the rows the sequential scan did.
        let indexes: Vec<String> = {
            let cat = s.database().catalog();
            let oid = cat.table(&name).unwrap().oid;
            cat.indexes_of(oid).map(|i| i.name.clone()).collect()
        };
        if !indexes.is_empty() {
            s.query("set enable_seqscan = off").unwrap();
            let r = s
                .query(&format!("select k from {name} where k > -1"))
                .unwrap();
            let QueryResult::Rows { rows, .. } = &r[0] else {
                panic!("no rows")
            };
            let via_index: BTreeSet<i64> = rows
                .iter()
                .map(|r| r[0].as_deref().unwrap().parse().unwrap())
                .collect();
            assert_eq!(via_index.len(), rows.len(), "index of {name} repeats a row");
            assert_eq!(
                via_index, keys,
                "index scan of {name} disagrees with its heap"
            );
            s.query("reset enable_seqscan").unwrap();
        }
        out.insert(name, keys);
    }
    out
}

fn describe(t: &Tables) -> String {
    t.iter()
        .map(|(k, v)| format!("{k}:{}", v.len()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where the kills landed: per kind of statement in flight, how many kills
/// and what recovery made of the statement (`[committed, rolled back, no
/// row change]`; CHECKPOINT and VACUUM change no row), and kills per
/// recovery prefetch method. Printed by the stress run.
#[derive(Default)]
struct Tally {
    by_kind: BTreeMap<&'static str, [u64; 3]>,
    by_method: BTreeMap<String, u64>,
}

/// The kind of statement `random_op` made.
fn kind(sql: &str) -> &'static str {
    const KINDS: [(&str, &str); 10] = [
        ("copy", "COPY"),
        ("insert into t select", "bulk load"),
        ("insert", "INSERT"),
        ("delete", "DELETE"),
        ("update", "UPDATE"),
        ("checkpoint", "CHECKPOINT"),
        ("vacuum", "VACUUM"),
        ("create index", "CREATE INDEX"),
        ("create table", "CREATE TABLE AS"),
        ("drop table", "DROP TABLE"),
    ];
    KINDS
        .iter()
        .find(|(prefix, _)| sql.starts_with(prefix))
        .map_or("other", |(_, k)| k)
}

/// Recovery prefetch methods the trials rotate through (`io_uring` falls
/// back to `fadvise` where the kernel refuses io_uring).
const METHODS: [&str; 4] = ["io_uring", "io_uring", "fadvise", "threads"];

/// Runs `rounds` crash/restart rounds on a fresh data directory.
fn trial(seed: u64, rounds: usize, tally: &mut Tally, storage: Storage) -> usize {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let dir = tempfile::tempdir().unwrap();
    let method = METHODS[seed as usize % METHODS.len()];
    // Every other io_uring trial reads through the page cache.
    let direct = if seed % 4 == 1 { "off" } else { "on" };
    std::fs::write(
        dir.path().join("tusk.conf"),
        format!(
            "shared_buffers = 256kB\nmax_wal_size = 4MB\nhuge_pages = off\n\
             tusk.recovery_prefetch_method = {method}\ntusk.recovery_direct_io = {direct}\n"
        ),
    )
    .unwrap();
    {
        let mut s = Session::open(dir.path()).unwrap();
        match storage {
            Storage::Heap => {
                s.query("create table t (k int8, v int8, w text)").unwrap();
                s.query("create index t_k on t (k)").unwrap();
            }
            Storage::Columnar => {
                s.query("create table t (k int8, v int8, w text) using columnar")
                    .unwrap();
            }
        }
    }
    let mut state = read_state(dir.path());
    let (mut next_key, mut ctas) = (1i64, 0u32);
    let mut acked_total = 0;
    for round in 0..rounds {
        let mut child = spawn_tusk(dir.path());
        let mut stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let ops_before_kill = rng.below(12) as usize;
        let mut in_flight: Option<(String, Tables)> = None;
        for i in 0..=ops_before_kill {
            let (sql, after) = random_op(&mut rng, &state, &mut next_key, &mut ctas, storage);
            stdin.write_all(sql.as_bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
            stdin.flush().unwrap();
            if i == ops_before_kill {
                // Kill somewhere inside this statement (or just after it).
                std::thread::sleep(Duration::from_micros(rng.below(30_000)));
                child.kill().unwrap();
                in_flight = Some((sql, after));
                break;
            }
            let ack = rx
                .recv_timeout(Duration::from_secs(600))
                .unwrap_or_else(|_| panic!("no answer to {sql}"));
            assert!(!ack.starts_with("ERROR"), "{sql}: {ack}");
            state = after;
            acked_total += 1;
        }
        child.wait().unwrap();
        drop(stdin);
        reader.join().unwrap();
        let (sql, after) = in_flight.unwrap();
        let late_ack = rx.try_recv().is_ok();
        let found = read_state(dir.path());
        let outcome = if after == state {
            2
        } else if found == after {
            0
        } else {
            1
        };
        tally.by_kind.entry(kind(&sql)).or_default()[outcome] += 1;
        let method = if method == "io_uring" && direct == "off" {
            "io_uring (page cache)".to_string()
        } else {
            method.to_string()
        };
        *tally.by_method.entry(method).or_default() += 1;
        if late_ack {
            assert_eq!(
                describe(&found),
                describe(&after),
                "seed {seed} round {round}: acknowledged {sql} lost"
            );
            assert_eq!(found, after, "seed {seed} round {round}");
            state = after;
        } else if found == after {
            state = after;
        } else {
            assert_eq!(
                describe(&found),
                describe(&state),
                "seed {seed} round {round}: after crash in {sql}"
            );
            assert_eq!(
                found, state,
                "seed {seed} round {round}: after crash in {sql}"
            );
        }
    }
    acked_total
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn crash_recovery_keeps_acknowledged_commits_only() {
    trials(Storage::Heap);
}

#[test]
fn columnar_crash_recovery_keeps_acknowledged_commits_only() {
    trials(Storage::Columnar);
}

/// The random trials (see the module doc) and their tally.
fn trials(storage: Storage) {
    let trials = env_or("TUSK_CRASH_TRIALS", 2);
    let rounds = env_or("TUSK_CRASH_ROUNDS", 3) as usize;
    let base = env_or("TUSK_CRASH_SEED", 1);
    let mut acked = 0;
    let mut tally = Tally::default();
    for i in 0..trials {
        acked += trial(base + i, rounds, &mut tally, storage);
    }
    let what = match storage {
        Storage::Heap => "heap",
        Storage::Columnar => "columnar",
    };
    eprintln!(
        "crash harness ({what}): {trials} trials x {rounds} crashes, {acked} acknowledged statements verified"
    );
    eprintln!("killed during: statement, kills, committed, rolled back, no row change");
    for (k, [c, r, n]) in &tally.by_kind {
        eprintln!("  {k}: {}, {c}, {r}, {n}", c + r + n);
    }
    let methods: Vec<String> = tally
        .by_method
        .iter()
        .map(|(m, n)| format!("{m} {n}"))
        .collect();
    eprintln!("recovery prefetch method: {}", methods.join(", "));
}

/// A statement that fails half-way, after some of its rows were inserted and
/// logged, leaves an abort record behind it in the WAL; its rows never
/// become visible, before or after a restart.
#[test]
fn failed_statement_logs_an_abort_record() {
    use tusk_storage::wal::{RecordType, WalReader};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tusk.conf"), "huge_pages = off\n").unwrap();
    let mut s = Session::open(dir.path()).unwrap();
    s.query("create table t (k int8, v int8, w text)").unwrap();
    s.query("checkpoint").unwrap();
    let redo = s.database().wal.redo_lsn();
    s.query("insert into t values (1, 7, 'row 1')").unwrap();
    let err = s
        .query("insert into t select g, 7 * g / (g - 90000), 'row ' || g from generate_series(2, 100000) g")
        .unwrap_err();
    assert!(err.to_string().contains("division by zero"), "{err}");
    s.database().wal.flush_all().unwrap();
    let (mut aborts, mut inserts) = (0, 0);
    let mut reader = WalReader::new(&dir.path().join("pg_wal"), redo);
    while let Some(rec) = reader.next_record().unwrap() {
        match rec.kind {
            RecordType::Abort => aborts += 1,
            RecordType::HeapInsert | RecordType::HeapInsertInit => inserts += 1,
            _ => {}
        }
    }
    assert_eq!(aborts, 1);
    assert!(
        inserts > 1,
        "the failed statement logged no rows before failing"
    );
    drop(s);
    let state = read_state(dir.path());
    assert_eq!(state["t"], BTreeSet::from([1]));
}

/// A COPY that fails after several pages of its rows were logged leaves
/// them invisible, before and after a crash, and its page images are in
/// the WAL (one record per page, not per row).
#[test]
fn failed_copy_leaves_nothing_after_a_crash() {
    use tusk_storage::wal::{RecordType, WalReader};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tusk.conf"), "huge_pages = off\n").unwrap();
    let redo = {
        let mut s = Session::open(dir.path()).unwrap();
        s.query("create table t (k int8, v int8, w text)").unwrap();
        s.query("insert into t values (1, 7, 'row 1')").unwrap();
        s.query("checkpoint").unwrap();
        s.database().wal.redo_lsn()
    };
    let data = dir.path().join("load.txt");
    let mut text = String::new();
    for k in 2..50_000 {
        text.push_str(&format!("{k}\t{}\trow {k}\n", k * 7));
    }
    text.push_str("50000\tseven\trow 50000\n");
    std::fs::write(&data, text).unwrap();
    let mut child = spawn_tusk(dir.path());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "copy t from '{}';", data.display()).unwrap();
    writeln!(stdin, "select 'after';").unwrap();
    stdin.flush().unwrap();
    // The shell stops at the error: its output ends.
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert_eq!(out, "");
    child.kill().unwrap();
    child.wait().unwrap();
    let (mut pages, mut inserts, mut aborts) = (0, 0, 0);
    let mut reader = WalReader::new(&dir.path().join("pg_wal"), redo);
    while let Some(rec) = reader.next_record().unwrap() {
        match rec.kind {
            RecordType::HeapPage => pages += 1,
            RecordType::HeapInsert | RecordType::HeapInsertInit => inserts += 1,
            RecordType::Abort => aborts += 1,
            _ => {}
        }
    }
    assert!(pages > 100, "{pages} page images");
    assert_eq!((inserts, aborts), (0, 1));
    let state = read_state(dir.path());
    assert_eq!(state["t"], BTreeSet::from([1]));
}

/// Starts a `tusk` shell on `dir` reading statements from a pipe; the
/// first error ends it (`ON_ERROR_STOP`).
fn spawn_tusk(dir: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_tusk"))
        .arg("-D")
        .arg(dir)
        .args(["-v", "ON_ERROR_STOP=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Runs `statements` in a `tusk` child, waits for each acknowledgement, then
/// SIGKILLs it (nothing is written at shutdown).
fn run_and_kill(dir: &Path, statements: &[&str]) {
    let mut child = spawn_tusk(dir);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for sql in statements {
        writeln!(stdin, "{sql}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(
            !line.is_empty() && !line.starts_with("ERROR"),
            "{sql}: {line}"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// One number from a one-row, one-column result.
fn number(s: &mut Session, sql: &str) -> i64 {
    let r = s.query(sql).unwrap();
    let QueryResult::Rows { rows, .. } = &r[0] else {
        panic!("no rows from {sql}")
    };
    rows[0][0].as_deref().unwrap().parse().unwrap()
}

/// A serial column's sequence after SIGKILLs: every id acknowledged before
/// a crash is behind the sequence after it (values may be skipped, never
/// handed out twice), with and without a checkpoint in between.
#[test]
fn sequences_never_repeat_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tusk.conf"), "huge_pages = off\n").unwrap();
    {
        let mut s = Session::open(dir.path()).unwrap();
        s.query("create table s (id serial primary key, round int)")
            .unwrap();
    }
    for round in 0..4 {
        let mut statements: Vec<String> = (0..50)
            .map(|_| format!("insert into s (round) values ({round});"))
            .collect();
        if round % 2 == 1 {
            statements.insert(20, "checkpoint;".into());
        }
        statements.push("select nextval('s_id_seq');".into());
        let refs: Vec<&str> = statements.iter().map(String::as_str).collect();
        run_and_kill(dir.path(), &refs);
        let mut s = Session::open(dir.path()).expect("restart after crash");
        let (count, distinct, max) = (
            number(&mut s, "select count(*) from s"),
            number(&mut s, "select count(distinct id) from s"),
            number(&mut s, "select max(id) from s"),
        );
        assert_eq!(count, 50 * (round + 1));
        assert_eq!(count, distinct);
        let next = number(&mut s, "select nextval('s_id_seq')");
        // The killed session also took one value with its last nextval.
        assert!(next > max + 1, "round {round}: {next} after {max}");
    }
}

/// A data page torn by the crash is rebuilt from the full-page image logged
/// by its first change after the checkpoint (with `full_page_writes = off`
/// the restart fails with "invalid page in block 0").
#[test]
fn full_page_images_repair_torn_pages() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tusk.conf"), "huge_pages = off\n").unwrap();
    let oid = {
        let mut s = Session::open(dir.path()).unwrap();
        s.query("create table t (k int8, v int8, w text)").unwrap();
        s.query("insert into t select g, g * 7, 'row ' || g from generate_series(1, 2000) g")
            .unwrap();
        let oid = s.database().catalog().table("t").unwrap().oid;
        oid
    };
    // After the checkpoint the first change to block 0 logs its image.
    run_and_kill(
        dir.path(),
        &[
            "checkpoint;",
            "delete from t where k = 1;",
            "insert into t values (5000, 35000, 'row 5000');",
        ],
    );
    // Tear block 0: its second half is lost, as if the write had been cut.
    let rel = dir.path().join("base").join(oid.to_string());
    let f = std::fs::OpenOptions::new().write(true).open(&rel).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[0u8; 4096], 4096).unwrap();
    drop(f);
    let state = read_state(dir.path());
    let expect: BTreeSet<i64> = (2..=2000).chain([5000]).collect();
    assert_eq!(state["t"], expect);
    let mut s = Session::open(dir.path()).unwrap();
    let r = s.query("select * from pg_stat_recovery_prefetch").unwrap();
    let QueryResult::Rows { columns, rows, .. } = &r[0] else {
        panic!("no rows")
    };
    assert_eq!(columns.len(), 9);
    assert_eq!(columns[4].name, "skip_fpw");
    assert_eq!(rows.len(), 1);
}

/// Recovery replays an index build and the btree insertions (with page
/// splits, new roots) and VACUUM's prune, index-deletion and unused records
/// that followed it, without any checkpoint in between.
#[test]
fn recovery_replays_btree_and_vacuum() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tusk.conf"),
        "huge_pages = off\nshared_buffers = 256kB\n",
    )
    .unwrap();
    run_and_kill(
        dir.path(),
        &[
            "create table t (k int8, v int8, w text);",
            "insert into t select g, g * 7, 'row ' || g from generate_series(1, 3000) g;",
            "create index t_k on t (k);",
            "checkpoint;",
            // Descending and ascending insertions split leaves and grow the root.
            "insert into t select 10000 - g, (10000 - g) * 7, 'row ' || (10000 - g) from generate_series(1, 4000) g;",
            "insert into t select g, g * 7, 'row ' || g from generate_series(20000, 30000) g;",
            "delete from t where k % 3 = 0;",
            "vacuum t;",
            // Reuses the space vacuum freed.
            "insert into t select g, g * 7, 'row ' || g from generate_series(40000, 41000) g;",
        ],
    );
    let state = read_state(dir.path());
    let expect: BTreeSet<i64> = (1..=3000)
        .chain(6000..=9999)
        .chain(20000..=30000)
        .filter(|k| k % 3 != 0)
        .chain(40000..=41000)
        .collect();
    assert_eq!(state["t"], expect);
    let mut s = Session::open(dir.path()).unwrap();
    let r = s
        .query("select count(*) from t where k between 100 and 200")
        .unwrap();
    let QueryResult::Rows { rows, .. } = &r[0] else {
        panic!("no rows")
    };
    assert_eq!(rows[0][0].as_deref(), Some("68"));
}

/// SIGKILL part-way through large COPYs and DELETEs of a columnar table:
/// after the restart the table holds exactly the rows of before the
/// statement, or (had its commit made it) of after it. Each kind of
/// statement first runs to its end once, timed; the kills then land at
/// random moments within that time, counted from when the shell answered a
/// first query (so the restart's recovery is over).
#[test]
fn killed_columnar_copy_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tusk.conf"),
        "huge_pages = off\nshared_buffers = 1MB\nmax_wal_size = 8MB\n",
    )
    .unwrap();
    {
        let mut s = Session::open(dir.path()).unwrap();
        s.query("create table t (k int8, v int8, w text) using columnar")
            .unwrap();
        s.query("insert into t select g, g * 7, 'row ' || g from generate_series(1, 150000) g")
            .unwrap();
    }
    let data = dir.path().join("load.txt");
    let mut rng = Rng(0x05ee_dc01);
    let mut state = read_state(dir.path())["t"].clone();
    let mut took = [Duration::ZERO; 2];
    let (mut committed, mut rolled_back) = (0, 0);
    for round in 0..10i64 {
        let copy = round % 2 == 0;
        let mut after = state.clone();
        let sql = if copy {
            let lo = 1_000_000 * (round + 1);
            let rows: String = (lo..lo + 250_000)
                .map(|k| format!("{k}\t{}\trow {k}\n", k * 7))
                .collect();
            std::fs::write(&data, rows).unwrap();
            after.extend(lo..lo + 250_000);
            format!("copy t from '{}';", data.display())
        } else {
            let m = 2 + round;
            after.retain(|k| k % m != 1);
            format!("delete from t where k % {m} = 1;")
        };
        let mut child = spawn_tusk(dir.path());
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        writeln!(stdin, "checkpoint;").unwrap();
        stdin.flush().unwrap();
        stdout.read_line(&mut line).unwrap();
        writeln!(stdin, "{sql}").unwrap();
        stdin.flush().unwrap();
        let start = std::time::Instant::now();
        let kind = usize::from(!copy);
        if round < 2 {
            // The timing run: to the end.
            line.clear();
            stdout.read_line(&mut line).unwrap();
            assert!(!line.starts_with("ERROR"), "{sql}: {line}");
            took[kind] = start.elapsed();
        } else {
            let max = took[kind].as_micros().max(1) as u64;
            std::thread::sleep(Duration::from_micros(rng.below(max)));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let found = read_state(dir.path())["t"].clone();
        assert!(
            found == state || found == after,
            "round {round}: after a kill in {sql}: {} rows, expected {} or {}",
            found.len(),
            state.len(),
            after.len()
        );
        if round >= 2 {
            if found == state {
                rolled_back += 1;
            } else {
                committed += 1;
            }
        }
        state = found;
    }
    eprintln!(
        "columnar COPY/DELETE kills: {committed} committed, {rolled_back} rolled back \
         (full runs took {:?} and {:?})",
        took[0], took[1]
    );
}
