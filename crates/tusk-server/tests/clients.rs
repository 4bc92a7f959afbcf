//! Real clients against a real server: psql, pgbench in its three query
//! modes, and psycopg 3 (in a venv this test creates from
//! `tests/clients/requirements.txt`). A client that is not installed, or a
//! venv that cannot be made, skips its part with a message.

mod common;

use common::{pg_program, psql, text, TestServer};
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn psql_works_as_with_postgres() {
    let server = TestServer::start(&[]);
    let Some(out) = psql(
        &server,
        "tusk",
        &[],
        &[
            "-v",
            "VERBOSITY=verbose",
            "-c",
            "create table t (a int not null, b text, c numeric)",
            "-c",
            "insert into t select g, 'row ' || g, g * 1.5 from generate_series(1, 3) g",
            "-c",
            "select * from t order by a",
            "-c",
            "select a from t where b = 'row 2'; select count(*) from t",
            "-c",
            "select * from nope",
            "-c",
            "drop table if exists nope",
            "-c",
            "vacuum verbose t",
            "-c",
            "show server_version",
        ],
    ) else {
        return;
    };
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(
        stdout,
        "CREATE TABLE\nINSERT 0 3\n a |   b   |  c  \n---+-------+-----\n 1 | row 1 | 1.5\n 2 | row 2 | 3.0\n 3 | row 3 | 4.5\n(3 rows)\n\n a \n---\n 2\n(1 row)\n\n count \n-------\n     3\n(1 row)\n\nDROP TABLE\nVACUUM\n server_version \n----------------\n 15.0 (tusk)\n(1 row)\n\n"
    );
    assert!(
        stderr.contains("ERROR:  42P01: relation \"nope\" does not exist"),
        "{stderr}"
    );
    assert!(
        stderr.contains("NOTICE:  00000: table \"nope\" does not exist, skipping"),
        "{stderr}"
    );
    assert!(
        stderr.contains("INFO:  00000: vacuuming \"tusk.public.t\""),
        "{stderr}"
    );
    server.stop().unwrap();
}

#[test]
fn psql_through_the_unix_socket() {
    let server = TestServer::start(&[]);
    let socket = server
        .dir
        .path()
        .join(format!(".s.PGSQL.{}", server.port()));
    let lock = server
        .dir
        .path()
        .join(format!(".s.PGSQL.{}.lock", server.port()));
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(&socket).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.mode() & 0o777, 0o700, "only the server's OS user");
    assert!(lock.exists());
    let Some(psql_bin) = pg_program("psql") else {
        eprintln!("skipping: psql not found");
        return;
    };
    // psql's -h with a directory means its socket.
    let out = Command::new(&psql_bin)
        .args(["-X", "-A", "-t", "-h"])
        .arg(server.dir.path())
        .args(["-p", &server.port().to_string(), "-U", "tusk", "-d", "tusk"])
        .args(["-c", "select 40 + 2"])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "42\n", "{}", text(&out.stderr));
    // No TLS on a Unix socket: an SSLRequest is answered N.
    use std::io::{Read, Write};
    let mut raw = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    raw.write_all(&[0, 0, 0, 8, 4, 210, 22, 47]).unwrap();
    let mut answer = [0u8];
    raw.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"N");
    drop(raw);
    // A second server cannot take the same socket name.
    let second = tempfile::tempdir().unwrap();
    common::write_conf(
        second.path(),
        &[
            (
                "unix_socket_directories",
                &server.dir.path().display().to_string(),
            ),
            ("port", &server.port().to_string()),
            ("listen_addresses", ""),
        ],
    );
    let e = tusk_server::Server::bind(second.path(), &Default::default())
        .err()
        .unwrap();
    assert!(e.contains("Is another server (PID "), "{e}");
    assert!(socket.exists());
    // Shutdown removes the socket and its lock.
    server.stop().unwrap();
    assert!(!socket.exists() && !lock.exists());
}

/// pgbench's tables, filled with SQL tusk supports today (`pgbench -i`
/// needs COPY and ALTER TABLE).
pub fn pgbench_tables(accounts: u32) -> String {
    format!(
        "create table pgbench_branches (bid int not null, bbalance int, filler char(88));
         insert into pgbench_branches values (1, 0, null);
         create table pgbench_tellers (tid int not null, bid int, tbalance int, filler char(84));
         insert into pgbench_tellers select g, 1, 0, null from generate_series(1, 10) g;
         create table pgbench_accounts (aid int not null, bid int, abalance int, filler char(84));
         insert into pgbench_accounts select g, 1, 0, '' from generate_series(1, {accounts}) g;
         create index pgbench_accounts_pkey on pgbench_accounts (aid);
         create table pgbench_history (tid int, bid int, aid int, delta int, mtime text, filler char(22))"
    )
}

#[test]
fn pgbench_select_only_in_every_mode() {
    let server = TestServer::start(&[]);
    let Some(pgbench) = pg_program("pgbench") else {
        eprintln!("skipping: pgbench not found");
        return;
    };
    server.connect().rows(&pgbench_tables(10_000));
    for mode in ["simple", "extended", "prepared"] {
        let out = Command::new(&pgbench)
            .args(["-n", "-S", "-M", mode, "-c", "2", "-j", "2", "-t", "200"])
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &server.port().to_string(),
                "-U",
                "tusk",
                "tusk",
            ])
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{mode}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(stdout.contains(&format!("query mode: {mode}")), "{stdout}");
        assert!(
            stdout.contains("number of transactions actually processed: 400/400"),
            "{mode}: {stdout}"
        );
        assert!(
            stdout.contains("number of failed transactions: 0"),
            "{stdout}"
        );
    }
    server.stop().unwrap();
}

/// `pgbench -i -s 1` unmodified (drop, create `with (fillfactor=100)`,
/// client-side COPY, `vacuum analyze`, primary keys), then the default
/// TPC-B script for a few seconds in each query mode: no failed
/// transaction, and the balances add up.
#[test]
fn pgbench_init_and_tpcb() {
    let server = TestServer::start(&[]);
    let Some(pgbench) = pg_program("pgbench") else {
        eprintln!("skipping: pgbench not found");
        return;
    };
    let port = server.port().to_string();
    let conn = ["-h", "127.0.0.1", "-p", &port, "-U", "tusk", "tusk"];
    let out = Command::new(&pgbench)
        .args(["-i", "-s", "1"])
        .args(conn)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "pgbench -i: {stderr}");
    assert!(stderr.contains("creating primary keys..."), "{stderr}");
    let mut c = server.connect();
    assert_eq!(
        c.rows("select count(*) from pgbench_accounts"),
        vec![vec![Some("100000".into())]]
    );
    for mode in ["simple", "extended", "prepared"] {
        let out = Command::new(&pgbench)
            .args(["-n", "-M", mode, "-c", "4", "-j", "2", "-T", "2"])
            .args(conn)
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(
            out.status.success(),
            "{mode}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(
            stdout.contains("transaction type: <builtin: TPC-B (sort of)>"),
            "{stdout}"
        );
        assert!(
            stdout.contains("number of failed transactions: 0 (0.000%)"),
            "{mode}: {stdout}"
        );
    }
    let sums = c.rows(
        "select (select sum(abalance) from pgbench_accounts), (select sum(tbalance) from pgbench_tellers), \
         (select sum(bbalance) from pgbench_branches), (select sum(delta) from pgbench_history), \
         (select count(*) > 0 from pgbench_history)",
    );
    let r = &sums[0];
    assert!(r[0] == r[1] && r[1] == r[2] && r[2] == r[3], "{r:?}");
    assert_eq!(r[4].as_deref(), Some("t"));
    server.stop().unwrap();
}

/// A venv with psycopg, made once per requirements file under the target
/// directory; `None` (with a message) where that cannot be done.
fn psycopg_python() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients");
    let req = here.join("requirements.txt");
    let req_text = std::fs::read_to_string(&req).ok()?;
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("psycopg-venv");
    let python = venv.join("bin/python");
    let stamp = venv.join("requirements.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(req_text.as_str()) && python.exists()
    {
        return Some(python);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipping psycopg: could not create a venv with python3 -m venv");
        return None;
    }
    let out = Command::new(&python)
        .args(["-m", "pip", "install", "-q", "-r"])
        .arg(&req)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "skipping psycopg: pip install failed: {}",
            text(&out.stderr).lines().last().unwrap_or("")
        );
        return None;
    }
    std::fs::write(&stamp, req_text).ok()?;
    Some(python)
}

#[test]
fn psycopg_parameters_types_errors_and_cancel() {
    let Some(python) = psycopg_python() else {
        return;
    };
    let server = TestServer::start(&[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/psycopg_check.py");
    let out = Command::new(python)
        .arg(script)
        .arg(server.conninfo("tusk"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "ok\n");
    server.stop().unwrap();
}
