//! SQL cursors over the wire: DECLARE, FETCH, MOVE and CLOSE in the simple
//! and the extended query protocol, their command tags and errors, BINARY
//! cursors, and rows that stream (a cursor over a query of a billion rows
//! answers its first FETCH at once).
//!
//! Each scenario can also run against PostgreSQL 15 to check that the
//! expectations are PostgreSQL's: set `TUSK_TEST_PG_ADDR=127.0.0.1:5432` (a
//! server that trusts user `tusk`; the scenarios create tables named
//! `wire_*`).

mod common;

use common::wire::{self, tags};
use common::{both, client, TestServer};

fn ints(rows: &[wire::Msg]) -> Vec<String> {
    rows.iter()
        .filter(|m| m.tag == b'D')
        .map(|m| m.values()[0].clone().unwrap_or_default())
        .collect()
}

#[test]
fn simple_protocol_tags_and_errors() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_c; create table wire_c (a int, b text)");
        c.query("insert into wire_c select g, 'v' || g from generate_series(1, 10) g");
        let m = c.query("declare c1 cursor for select a from wire_c");
        assert_eq!(wire::error(&m).code(), "25P01");
        let m = c.query("begin; declare c1 cursor for select a, b from wire_c order by a");
        assert_eq!(tags(&m), "CCZ");
        assert_eq!(m[1].tag_text(), "DECLARE CURSOR");
        assert_eq!(m[2].body, b"T");
        let m = c.query("fetch 3 from c1");
        assert_eq!(tags(&m), "TDDDCZ");
        assert_eq!(
            m[0].columns(),
            vec![("a".to_string(), 23, 0), ("b".to_string(), 25, 0)]
        );
        assert_eq!(ints(&m), ["1", "2", "3"]);
        assert_eq!(m[4].tag_text(), "FETCH 3");
        let m = c.query("move forward 4 in c1");
        assert_eq!(tags(&m), "CZ");
        assert_eq!(m[0].tag_text(), "MOVE 4");
        let m = c.query("fetch all from c1");
        assert_eq!(ints(&m), ["8", "9", "10"]);
        assert_eq!(m[4].tag_text(), "FETCH 3");
        let m = c.query("fetch next from c1");
        assert_eq!(tags(&m), "TCZ");
        assert_eq!(m[1].tag_text(), "FETCH 0");
        let m = c.query("move all in c1");
        assert_eq!(m[0].tag_text(), "MOVE 0");
        let m = c.query("declare c1 cursor for select 1");
        assert_eq!(wire::error(&m).code(), "42P03");
        assert_eq!(m.last().unwrap().body, b"E");
        c.query("rollback");
        let m = c.query("fetch c1");
        assert_eq!(wire::error(&m).code(), "34000");
        assert_eq!(
            wire::error(&m).fields()[&b'M'],
            "cursor \"c1\" does not exist"
        );
        let m = c.query("close c1");
        assert_eq!(wire::error(&m).code(), "34000");
        // Going back on a NO SCROLL cursor.
        c.query("begin; declare c2 no scroll cursor for select a from wire_c order by a");
        c.query("fetch 2 from c2");
        let m = c.query("fetch prior from c2");
        let e = wire::error(&m);
        assert_eq!(e.code(), "55000");
        assert_eq!(e.fields()[&b'M'], "cursor can only scan forward");
        c.query("rollback");
        // CLOSE and CLOSE ALL; a string of statements is a block too.
        let m = c.query(
            "declare c3 cursor for select a from wire_c order by a; fetch 2 from c3; close c3",
        );
        assert_eq!(tags(&m), "CTDDCCZ");
        assert_eq!(m[5].tag_text(), "CLOSE CURSOR");
        let m = c.query("begin; declare c4 cursor for select 1; close all; commit");
        assert_eq!(m[2].tag_text(), "CLOSE CURSOR ALL");
        // WITH HOLD survives the commit.
        c.query("begin; declare h cursor with hold for select a from wire_c where a > 8 order by a; commit");
        let m = c.query("fetch all from h");
        assert_eq!(ints(&m), ["9", "10"]);
        let m = c.query("select name, is_holdable from pg_cursors");
        assert_eq!(m[1].values(), vec![Some("h".into()), Some("t".into())]);
        c.query("close h");
        c.query("drop table wire_c");
    });
}

#[test]
fn extended_protocol_declare_with_parameters_and_fetch() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_x; create table wire_x (a int, b text)");
        c.query("insert into wire_x select g, 'v' || g from generate_series(1, 10) g");
        c.query("begin");
        // postgres_fdw's way: a parameterized DECLARE, types left open.
        c.parse(
            "",
            "DECLARE c1 CURSOR FOR SELECT a, b FROM wire_x WHERE a > $1::integer ORDER BY a",
            &[],
        );
        c.bind("", "", &[], &[Some(b"6")], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "12CZ");
        assert_eq!(m[2].tag_text(), "DECLARE CURSOR");
        // FETCH prepared, described, run; its row count in the tag.
        c.parse("f", "FETCH 2 FROM c1", &[]);
        c.describe(b'S', "f");
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "1tTZ");
        assert_eq!(
            m[2].columns(),
            vec![("a".to_string(), 23, 0), ("b".to_string(), 25, 0)]
        );
        for want in [&["7", "8"][..], &["9", "10"][..], &[][..]] {
            c.bind("", "f", &[], &[], &[1, 0]);
            c.execute("", 0);
            c.sync();
            let m = c.until_ready();
            let values: Vec<i32> = m
                .iter()
                .filter(|x| x.tag == b'D')
                .map(|x| {
                    let v = x.raw_values()[0].clone().unwrap();
                    i32::from_be_bytes(v.try_into().unwrap())
                })
                .collect();
            let want: Vec<i32> = want.iter().map(|s| s.parse().unwrap()).collect();
            assert_eq!(values, want);
            assert_eq!(
                m.iter().find(|x| x.tag == b'C').unwrap().tag_text(),
                format!("FETCH {}", want.len())
            );
        }
        c.parse("", "CLOSE c1", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(m[2].tag_text(), "CLOSE CURSOR");
        // A FETCH of a cursor that is gone fails at Parse or Execute.
        c.parse("", "FETCH 1 FROM c1", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(wire::error(&m).code(), "34000");
        c.query("rollback");
        c.query("drop table wire_x");
    });
}

#[test]
fn binary_cursor_sends_binary_rows() {
    both(|addr| {
        let mut c = client(addr);
        c.query("begin; declare b binary cursor for select 258::int, 'xy'::text");
        let m = c.query("fetch b");
        assert_eq!(tags(&m), "TDCZ");
        assert_eq!(
            m[1].raw_values(),
            vec![Some(258i32.to_be_bytes().to_vec()), Some(b"xy".to_vec())]
        );
        c.query("rollback");
    });
}

/// A cursor computes its rows as they are fetched: over a query of a
/// billion rows, the first FETCH answers at once and CLOSE stops the rest.
#[test]
fn cursor_rows_stream() {
    let server = TestServer::start(&[]);
    let mut c = client(server.addr);
    c.query("begin");
    let m = c.query("declare big cursor for select g, g * 2 from generate_series(1, 1000000000) g");
    assert_eq!(tags(&m), "CZ");
    let m = c.query("fetch 3 from big");
    assert_eq!(ints(&m), ["1", "2", "3"]);
    let m = c.query("move 100000 in big");
    assert_eq!(m[0].tag_text(), "MOVE 100000");
    let m = c.query("fetch 1 from big");
    assert_eq!(ints(&m), ["100004"]);
    let m = c.query("close big; commit");
    assert_eq!(tags(&m), "CCZ");
    server.stop().unwrap();
}

#[test]
fn scroll_cursors_go_back_with_postgres_counts() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_s; create table wire_s (a int)");
        c.query("insert into wire_s select g from generate_series(1, 3000) g");
        c.query("begin; declare s scroll cursor for select a from wire_s order by a");
        let m = c.query("fetch last from s");
        assert_eq!(ints(&m), ["3000"]);
        assert_eq!(m[2].tag_text(), "FETCH 1");
        let m = c.query("fetch backward 3 from s");
        assert_eq!(ints(&m), ["2999", "2998", "2997"]);
        assert_eq!(m[4].tag_text(), "FETCH 3");
        let m = c.query("move backward all in s");
        assert_eq!(m[0].tag_text(), "MOVE 2996");
        let m = c.query("fetch prior from s");
        assert_eq!(tags(&m), "TCZ");
        assert_eq!(m[1].tag_text(), "FETCH 0");
        let m = c.query("move absolute -1 in s");
        assert_eq!(m[0].tag_text(), "MOVE 1");
        let m = c.query("move forward all in s");
        assert_eq!(m[0].tag_text(), "MOVE 0");
        // A FETCH through the extended protocol, suspended by a row limit
        // and resumed, going backward.
        c.parse("", "FETCH BACKWARD 5 FROM s", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 2);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(ints(&m), ["3000", "2999", "2998", "2997", "2996"]);
        assert_eq!(tags(&m), "12DDsDDDCZ");
        let m = c.query("fetch relative 0 from s");
        assert_eq!(ints(&m), ["2996"]);
        c.query("commit");
        // A cursor PostgreSQL does not scroll (an aggregate) refuses.
        c.query("begin; declare g cursor for select a % 3, count(*) from wire_s group by 1");
        c.query("fetch 1 from g");
        let m = c.query("fetch prior from g");
        let e = wire::error(&m);
        assert_eq!(e.code(), "55000");
        assert_eq!(
            e.fields()[&b'H'],
            "Declare it with SCROLL option to enable backward scan."
        );
        c.query("rollback");
        c.query("drop table wire_s");
    });
}
