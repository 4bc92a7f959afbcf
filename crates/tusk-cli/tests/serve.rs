//! `tusk serve` as a process: it listens, keeps other processes off its
//! data directory, and shuts down fast on SIGTERM or SIGINT — telling its
//! sessions, writing a shutdown checkpoint and exiting 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn tusk() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tusk"));
    cmd.env_remove("TUSKDATA");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

struct Served {
    child: Child,
    port: u16,
    log: std::sync::mpsc::Receiver<String>,
}

/// Starts `tusk serve` on a port the system picks and waits until it is
/// ready.
fn serve(dir: &std::path::Path) -> Served {
    std::fs::write(
        dir.join("tusk.conf"),
        "shared_buffers = 16MB\nunix_socket_directories = '.'\n",
    )
    .unwrap();
    let mut child = tusk()
        .args(["serve", "--listen", "127.0.0.1", "--port", "0", "-D"])
        .arg(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut port = 0;
    loop {
        let line = rx.recv().expect("tusk serve ended before it was ready");
        if let Some(p) = line.strip_prefix("LOG:  listening on IPv4 address \"127.0.0.1\", port ") {
            port = p.parse().unwrap();
        }
        if line == "LOG:  database system is ready to accept connections" {
            break;
        }
    }
    Served {
        child,
        port,
        log: rx,
    }
}

/// A minimal session: startup as `tusk`, then the messages up to
/// ReadyForQuery.
fn login(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut body = (3i32 << 16).to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0tusk\0\0");
    let mut packet = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    packet.extend_from_slice(&body);
    s.write_all(&packet).unwrap();
    read_until_ready(&mut s);
    s
}

/// Reads messages up to ReadyForQuery; returns their bytes.
fn read_until_ready(s: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let mut head = [0u8; 5];
        s.read_exact(&mut head).unwrap();
        let len = i32::from_be_bytes(head[1..].try_into().unwrap()) as usize;
        let mut body = vec![0u8; len - 4];
        s.read_exact(&mut body).unwrap();
        all.extend_from_slice(&head);
        all.extend_from_slice(&body);
        if head[0] == b'Z' {
            return all;
        }
    }
}

fn query(s: &mut TcpStream, sql: &str) -> String {
    let mut body = sql.as_bytes().to_vec();
    body.push(0);
    let mut m = vec![b'Q'];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(&body);
    s.write_all(&m).unwrap();
    text(&read_until_ready(s))
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn sigterm_is_a_fast_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let mut served = serve(dir.path());
    let mut s = login(served.port);
    let out = query(
        &mut s,
        "create table kept (a int); insert into kept select g from generate_series(1, 1000) g",
    );
    assert!(out.contains("INSERT 0 1000"), "{out}");

    // The data directory is taken.
    let out = tusk()
        .arg("-D")
        .arg(dir.path())
        .args(["-c", "select 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is in use by another tusk process"),
        "{}",
        text(&out.stderr)
    );
    let out = tusk()
        .args(["serve", "--listen", "127.0.0.1", "--port", "0", "-D"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is in use by another tusk process"));

    // A statement running at shutdown is stopped and its client told.
    let mut busy = login(served.port);
    let mut m = vec![b'Q'];
    let sql = b"select count(*) from generate_series(1, 10000000000) g\0";
    m.extend_from_slice(&((sql.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(sql);
    busy.write_all(&m).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&served.child, "-TERM");
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut rest = Vec::new();
    let _ = busy.read_to_end(&mut rest);
    let rest = text(&rest);
    assert!(rest.contains("57P01"), "{rest}");
    assert!(rest.contains("terminating connection due to administrator command"));
    let log: Vec<String> = served.log.try_iter().collect();
    assert!(
        log.contains(&"LOG:  received fast shutdown request".to_string()),
        "{log:?}"
    );
    assert_eq!(
        log.last().map(String::as_str),
        Some("LOG:  database system is shut down")
    );

    // Committed work survived, and nothing needed recovery.
    let out = tusk()
        .arg("-D")
        .arg(dir.path())
        .args(["-Atc", "select count(*) from kept"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "1000\n");
    assert!(!text(&out.stderr).contains("redo"), "{}", text(&out.stderr));
}

#[test]
fn sigint_stops_the_server_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut served = serve(dir.path());
    let mut s = login(served.port);
    assert!(query(&mut s, "select 1").contains("SELECT 1"));
    signal(&served.child, "-INT");
    assert!(served.child.wait().unwrap().success());
}

#[test]
fn roles_made_with_the_shell_keep_verifiers_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = tusk()
        .arg("-D")
        .arg(dir.path())
        .args([
            "-c",
            "create role app login password 'hunter2'",
            "-c",
            "drop role if exists ghost",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "CREATE ROLE\nDROP ROLE\n");
    assert_eq!(
        text(&out.stderr),
        "NOTICE:  role \"ghost\" does not exist, skipping\n"
    );
    let file = std::fs::read_to_string(dir.path().join("pg_authid")).unwrap();
    assert!(file.contains("app\tlogin\tSCRAM-SHA-256$4096:"), "{file}");
    assert!(!file.contains("hunter2"));
}

#[test]
fn serve_refuses_trust_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let out = tusk()
        .args(["serve", "--listen", "*", "--port", "0", "-D"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("tusk: error: refusing to listen on 0.0.0.0 with auth_method = trust"),
        "{err}"
    );
    assert!(err.contains("HINT:"), "{err}");
}

/// PostgreSQL 15's client programs, if installed.
fn pg_program(name: &str) -> Option<std::path::PathBuf> {
    let p = std::path::Path::new("/usr/lib/postgresql/15/bin").join(name);
    p.exists().then_some(p)
}

#[test]
fn psql_and_pgbench_talk_to_tusk_serve() {
    let (Some(psql), Some(pgbench)) = (pg_program("psql"), pg_program("pgbench")) else {
        eprintln!("skipping: psql or pgbench of PostgreSQL 15 not found");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut served = serve(dir.path());
    let port = served.port.to_string();
    let conn = ["-h", "127.0.0.1", "-p", &port, "-U", "tusk", "tusk"];
    // The two tables `pgbench -S` reads: the branches (for the scale) and
    // the accounts.
    let out = Command::new(&psql)
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
        .args([
            "-c",
            "create table pgbench_branches (bid int not null, bbalance int, filler char(88))",
            "-c",
            "insert into pgbench_branches values (1, 0, null)",
            "-c",
            "create table pgbench_accounts (aid int not null, bid int, abalance int, filler char(84))",
            "-c",
            "insert into pgbench_accounts select g, 1, 0, '' from generate_series(1, 100000) g",
            "-c",
            "create index pgbench_accounts_pkey on pgbench_accounts (aid)",
            "-c",
            "select count(*), sum(abalance) from pgbench_accounts",
        ])
        .args(conn)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        " count  | sum \n--------+-----\n 100000 |   0\n(1 row)\n\n"
    );
    let out = Command::new(&pgbench)
        .args([
            "-n", "-S", "-M", "prepared", "-c", "2", "-j", "2", "-t", "100",
        ])
        .args(conn)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("number of transactions actually processed: 200/200"),
        "{stdout}"
    );
    assert!(
        stdout.contains("number of failed transactions: 0"),
        "{stdout}"
    );
    signal(&served.child, "-TERM");
    assert!(served.child.wait().unwrap().success());
}

/// Undefined relations and columns point at the name, as PostgreSQL's
/// ErrorResponse position does: psql prints the same `LINE n:` and caret
/// lines for tusk serve as for PostgreSQL 15 (the expected text is
/// PostgreSQL's output for these commands).
#[test]
fn psql_shows_the_position_of_an_undefined_name() {
    let Some(psql) = pg_program("psql") else {
        eprintln!("skipping: psql of PostgreSQL 15 not found");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut served = serve(dir.path());
    let port = served.port.to_string();
    let out = Command::new(&psql)
        .args(["-X", "-q"])
        .args([
            "-c",
            "create table t (a int)",
            "-c",
            "select * from nosuch",
            "-c",
            "select nosuch, a from t",
            "-c",
            "select t.nosuch from t",
            "-c",
            "select 1; select x.a from t",
            "-c",
            "select a from t\n where\n   zz > 1",
            "-c",
            "insert into t (zz) values (1)",
            "-c",
            "update nosuch set a = 1",
            "-c",
            "select a from t group by zz",
        ])
        .args(["-h", "127.0.0.1", "-p", &port, "-U", "tusk", "tusk"])
        .output()
        .unwrap();
    let expected = "\
ERROR:  relation \"nosuch\" does not exist
LINE 1: select * from nosuch
                      ^
ERROR:  column \"nosuch\" does not exist
LINE 1: select nosuch, a from t
               ^
ERROR:  column t.nosuch does not exist
LINE 1: select t.nosuch from t
               ^
ERROR:  missing FROM-clause entry for table \"x\"
LINE 1: select 1; select x.a from t
                         ^
ERROR:  column \"zz\" does not exist
LINE 3:    zz > 1
           ^
ERROR:  column \"zz\" of relation \"t\" does not exist
LINE 1: insert into t (zz) values (1)
                       ^
ERROR:  relation \"nosuch\" does not exist
LINE 1: update nosuch set a = 1
               ^
ERROR:  column \"zz\" does not exist
LINE 1: select a from t group by zz
                                 ^
";
    assert_eq!(text(&out.stderr), expected);
    signal(&served.child, "-TERM");
    assert!(served.child.wait().unwrap().success());
}
