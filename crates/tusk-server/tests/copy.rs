//! COPY over the wire protocol: psql's COPY FROM STDIN / TO STDOUT and
//! `\copy` (the script `copy/script.sql`, whose output under PostgreSQL 15
//! is `copy/expected.out`), and the CopyIn / CopyOut exchange in the
//! extended protocol message by message, as PostgreSQL 15 answers it.

mod common;

use common::wire::{cstr, error, tags, Client};
use common::{text, TestServer};
use std::path::Path;

#[test]
fn psql_copy_and_backslash_copy_as_postgres() {
    let server = TestServer::start(&[]);
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/copy");
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(here.join("in.txt"), work.path().join("in.txt")).unwrap();
    std::fs::copy(here.join("script.sql"), work.path().join("s.sql")).unwrap();
    let conninfo = server.conninfo("tusk");
    let Some(psql_path) = common::pg_program("psql") else {
        eprintln!("skipping: psql not found");
        return;
    };
    // psql -f s.sql, run where in.txt is (\copy's files are the client's).
    let out = std::process::Command::new(psql_path)
        .current_dir(work.path())
        .args(["-X", "-d", &conninfo, "-f", "s.sql"])
        .output()
        .unwrap();
    let expected = std::fs::read_to_string(here.join("expected.out")).unwrap();
    let got = text(&out.stdout) + &text(&out.stderr);
    // psql prints stdout and stderr interleaved in a terminal; compare
    // each stream's lines in order.
    let errors: Vec<&str> = expected
        .lines()
        .filter(|l| l.starts_with("psql:") || l.starts_with("CONTEXT:"))
        .collect();
    let rest: Vec<&str> = expected
        .lines()
        .filter(|l| !(l.starts_with("psql:") || l.starts_with("CONTEXT:")))
        .collect();
    assert_eq!(text(&out.stdout).lines().collect::<Vec<_>>(), rest, "{got}");
    assert_eq!(
        text(&out.stderr).lines().collect::<Vec<_>>(),
        errors,
        "{got}"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("out.txt")).unwrap(),
        "1,one\n2,\n3,three\n4,four\n5,\n"
    );
    server.stop().unwrap();
}

/// Parse, Bind and Execute of `sql` in the unnamed statement and portal.
fn extended(c: &mut Client, sql: &str) {
    c.parse("", sql, &[]);
    c.bind("", "", &[], &[], &[]);
    c.execute("", 0);
}

#[test]
fn copy_in_and_out_in_the_extended_protocol() {
    let server = TestServer::start(&[]);
    let mut c = server.connect();
    c.rows("create table t (a int, b text)");

    // COPY FROM STDIN: CopyInResponse (text, two text columns) at Execute;
    // rows may straddle CopyData messages.
    extended(&mut c, "copy t from stdin");
    c.flush();
    assert_eq!(c.read().unwrap().tag, b'1');
    assert_eq!(c.read().unwrap().tag, b'2');
    let g = c.read().unwrap();
    assert_eq!(
        (g.tag, g.body.as_slice()),
        (b'G', &[0u8, 0, 2, 0, 0, 0, 0][..])
    );
    c.send(b'd', b"7\tseven\n");
    c.send(b'd', b"8\teig");
    c.send(b'd', b"ht\n");
    c.send(b'c', &[]);
    c.sync();
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "CZ");
    assert_eq!(msgs[0].tag_text(), "COPY 2");

    // CopyFail: the COPY fails with the client's message, nothing stored.
    extended(&mut c, "copy t from stdin");
    c.flush();
    let msgs: Vec<_> = (0..3).map(|_| c.read().unwrap()).collect();
    assert_eq!(tags(&msgs), "12G");
    c.send(b'd', b"9\tnine\n");
    let mut fail = Vec::new();
    cstr(&mut fail, "boom");
    c.send(b'f', &fail);
    c.sync();
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "EZ");
    assert_eq!(error(&msgs).code(), "57014");
    assert_eq!(error(&msgs).fields()[&b'M'], "COPY from stdin failed: boom");

    // COPY TO STDOUT: CopyOutResponse, the rows, CopyDone, then the tag.
    extended(&mut c, "copy (select * from t order by a) to stdout");
    c.sync();
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "12HdcCZ");
    assert_eq!(msgs[2].body, vec![0u8, 0, 2, 0, 0, 0, 0]);
    assert_eq!(msgs[3].body, b"7\tseven\n8\teight\n".to_vec());
    assert_eq!(msgs[5].tag_text(), "COPY 2");

    // Simple query: a bad row ends the COPY with its CONTEXT; the data the
    // client still sends is ignored.
    let mut q = Vec::new();
    cstr(&mut q, "copy t from stdin");
    c.send(b'Q', &q);
    assert_eq!(c.read().unwrap().tag, b'G');
    c.send(b'd', b"x\n");
    c.send(b'd', b"1\tz\n");
    c.send(b'c', &[]);
    let msgs = c.until_ready();
    assert_eq!(tags(&msgs), "EZ");
    let f = error(&msgs).fields();
    assert_eq!(f[&b'C'], "22P02");
    assert_eq!(f[&b'M'], "invalid input syntax for type integer: \"x\"");
    assert_eq!(f[&b'W'], "COPY t, line 1, column a: \"x\"");
    assert_eq!(
        c.rows("select count(*) from t"),
        vec![vec![Some("2".into())]]
    );
    server.stop().unwrap();
}
