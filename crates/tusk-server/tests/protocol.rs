//! The wire protocol message by message, with a raw client: simple and
//! extended query, portals that suspend and resume, errors and Sync,
//! parameters in text and binary, cancel, statement_timeout, settings.
//!
//! Each scenario takes an address, so that it can also run against
//! PostgreSQL 15 to check that the expectations are PostgreSQL's: set
//! `TUSK_TEST_PG_ADDR=127.0.0.1:5432` (a server that trusts user `tusk`
//! on a scratch database; the scenarios create tables named `wire_*`).

mod common;

use common::wire::{self, tags};
use common::{both, client, TestServer};

#[test]
fn startup_reports_settings_and_key() {
    both(|addr| {
        let c = client(addr);
        assert!(c.params["server_version"].starts_with("15."));
        for (k, v) in [
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
            ("IntervalStyle", "postgres"),
            ("session_authorization", "tusk"),
        ] {
            assert_eq!(c.params[k], v, "{k}");
        }
        assert!(c.params.contains_key("TimeZone"));
        assert!(c.pid != 0);
    });
}

#[test]
fn simple_query_with_several_statements() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_s");
        let m = c.query(
            "create table wire_s (a int, b text); insert into wire_s values (1, 'x'), (2, null); select a, b from wire_s order by a; delete from wire_s",
        );
        assert_eq!(tags(&m), "CCTDDCCZ");
        assert_eq!(m[0].tag_text(), "CREATE TABLE");
        assert_eq!(m[1].tag_text(), "INSERT 0 2");
        assert_eq!(
            m[2].columns(),
            vec![("a".to_string(), 23, 0), ("b".to_string(), 25, 0)]
        );
        assert_eq!(m[4].values(), vec![Some("2".to_string()), None]);
        assert_eq!(m[5].tag_text(), "SELECT 2");
        assert_eq!(m[6].tag_text(), "DELETE 2");
        assert_eq!(m[7].body, b"I");
        // An error stops the rest of the string; the session goes on.
        let m = c.query("select 1; select 1/0; select 2");
        let t = tags(&m);
        assert!(t == "TDCEZ" || t == "TDCTEZ", "{t}");
        assert_eq!(wire::error(&m).code(), "22012");
        assert_eq!(tags(&c.query("")), "IZ");
        assert_eq!(tags(&c.query(";")), "IZ");
        // A syntax error carries its position.
        let m = c.query("select 1 frm wire_s");
        let f = m[0].fields();
        assert_eq!(f[&b'C'], "42601");
        assert_eq!(f[&b'S'], "ERROR");
        assert_eq!(f[&b'P'], "14");
        c.query("drop table wire_s");
    });
}

#[test]
fn notices_before_the_result() {
    both(|addr| {
        let mut c = client(addr);
        let m = c.query("drop table if exists wire_nope");
        assert_eq!(tags(&m), "NCZ");
        let f = m[0].fields();
        assert_eq!(f[&b'S'], "NOTICE");
        assert_eq!(f[&b'C'], "00000");
        assert_eq!(f[&b'M'], "table \"wire_nope\" does not exist, skipping");
    });
}

/// SQL's PREPARE / EXECUTE / DEALLOCATE in simple queries: EXECUTE's rows
/// carry the prepared query's column types; DEALLOCATE drops SQL's
/// statements and the protocol's alike.
#[test]
fn sql_prepare_execute_deallocate() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_p; create table wire_p (a int, b text)");
        c.query("insert into wire_p values (1, 'x'), (2, 'y'), (3, null)");
        let m = c.query("prepare wp (int) as select a, b from wire_p where a >= $1 order by a");
        assert_eq!(tags(&m), "CZ");
        assert_eq!(m[0].tag_text(), "PREPARE");
        let m = c.query("execute wp(2)");
        assert_eq!(tags(&m), "TDDCZ");
        assert_eq!(
            m[0].columns(),
            vec![("a".to_string(), 23, 0), ("b".to_string(), 25, 0)]
        );
        assert_eq!(m[2].values(), vec![Some("3".to_string()), None]);
        assert_eq!(m[3].tag_text(), "SELECT 2");
        // EXECUTE prepared by Parse: no parameters of its own, run twice.
        c.parse("wx", "execute wp(3)", &[]);
        c.describe(b'S', "wx");
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "1tTZ");
        assert_eq!(m[2].columns()[0], ("a".to_string(), 23, 0));
        for _ in 0..2 {
            c.bind("", "wx", &[], &[], &[]);
            c.execute("", 0);
            c.sync();
            let m = c.until_ready();
            assert_eq!(tags(&m), "2DCZ");
            assert_eq!(m[1].values(), vec![Some("3".to_string()), None]);
        }
        c.close(b'S', "wx");
        for (sql, code) in [
            ("prepare wp as select 1", "42P05"),
            ("execute wp", "42601"),
            ("execute wp('a'::text)", "42804"),
            ("execute wp_missing", "26000"),
        ] {
            assert_eq!(wire::error(&c.query(sql)).code(), code, "{sql}");
        }
        let m = c.query("deallocate wp");
        assert_eq!(m[0].tag_text(), "DEALLOCATE");
        assert_eq!(wire::error(&c.query("execute wp(1)")).code(), "26000");
        assert_eq!(wire::error(&c.query("deallocate wp")).code(), "26000");
        // A protocol statement, dropped by SQL's DEALLOCATE.
        c.parse("wp_proto", "select 1", &[]);
        c.sync();
        assert_eq!(tags(&c.until_ready()), "1Z");
        assert_eq!(c.query("deallocate wp_proto")[0].tag_text(), "DEALLOCATE");
        c.bind("", "wp_proto", &[], &[], &[]);
        c.sync();
        let m = c.until_ready();
        assert_eq!(m[0].code(), "26000");
        c.query("prepare wp2 as select 1");
        assert_eq!(c.query("deallocate all")[0].tag_text(), "DEALLOCATE ALL");
        assert_eq!(wire::error(&c.query("execute wp2")).code(), "26000");
        c.query("drop table wire_p");
    });
}

#[test]
fn errors_carry_sqlstates() {
    both(|addr| {
        let mut c = client(addr);
        for (sql, code) in [
            ("select * from wire_missing", "42P01"),
            ("select nope", "42703"),
            ("select 2147483647 + 1", "22003"),
            ("select 'x'::int", "22P02"),
            ("set nope = 1", "42704"),
            ("set work_mem = 'lots'", "22023"),
        ] {
            let m = c.query(sql);
            let e = wire::error(&m);
            assert_eq!(e.code(), code, "{sql}: {:?}", e.fields());
        }
        let m = c.query("set intervalstyle = 'x'");
        assert_eq!(
            m[0].fields()[&b'H'],
            "Available values: postgres, postgres_verbose, sql_standard, iso_8601."
        );
        let m = c.query("set datestyle = 'iso, german'");
        assert_eq!(
            m[0].fields()[&b'D'],
            "Conflicting \"datestyle\" specifications."
        );
    });
}

#[test]
fn only_utf8_is_spoken() {
    let server = TestServer::start(&[]);
    let mut c = server.connect();
    let m = c.query("set client_encoding = 'LATIN1'");
    let f = wire::error(&m).fields();
    assert_eq!(f[&b'C'], "0A000");
    assert_eq!(
        f[&b'M'],
        "conversion between LATIN1 and UTF8 is not supported"
    );
    assert_eq!(
        c.rows("set client_encoding = 'utf-8'; show client_encoding"),
        [[Some("UTF8".to_string())]]
    );
    let bad = common::wire::startup_packet("tusk", &[("client_encoding", "LATIN1")]);
    let mut raw = std::net::TcpStream::connect(server.addr).unwrap();
    std::io::Write::write_all(&mut raw, &bad).unwrap();
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut raw, &mut rest).unwrap();
    // AuthenticationOk, then the FATAL error, then the end.
    assert_eq!(rest[0], b'R');
    assert_eq!(rest[9], b'E');
    assert!(common::text(&rest).contains("FATAL"));
    server.stop().unwrap();
}

#[test]
fn settings_are_kept_per_session_and_reported() {
    both(|addr| {
        let mut a = client(addr);
        let mut b = client(addr);
        let m = a.query("set datestyle = 'german'");
        // The change is reported with ParameterStatus before the result.
        let status: Vec<String> = m
            .iter()
            .filter(|m| m.tag == b'S')
            .map(|m| String::from_utf8_lossy(&m.body).replace('\0', "|"))
            .collect();
        assert_eq!(status, ["DateStyle|German, DMY|"]);
        assert_eq!(
            a.rows("show datestyle"),
            [[Some("German, DMY".to_string())]]
        );
        assert_eq!(b.rows("show datestyle"), [[Some("ISO, MDY".to_string())]]);
        a.query("set search_path = wire_a, \"Wire_B\", public");
        assert_eq!(
            a.rows("show search_path"),
            [[Some("wire_a, \"Wire_B\", public".to_string())]]
        );
        a.query("set statement_timeout = '1500'");
        assert_eq!(
            a.rows("show statement_timeout"),
            [[Some("1500ms".to_string())]]
        );
        a.query("set application_name = 'wire test'");
        assert_eq!(
            a.rows("show application_name"),
            [[Some("wire test".to_string())]]
        );
        a.query("set extra_float_digits = 3");
        assert_eq!(a.rows("show extra_float_digits"), [[Some("3".to_string())]]);
        a.query("set lock_timeout = '2s'");
        assert_eq!(a.rows("show lock_timeout"), [[Some("2s".to_string())]]);
        a.query("set timezone = 'UTC'");
        assert_eq!(a.rows("show timezone"), [[Some("UTC".to_string())]]);
        a.query("set intervalstyle = iso_8601");
        assert_eq!(
            a.rows("show intervalstyle"),
            [[Some("iso_8601".to_string())]]
        );
    });
}

#[test]
fn extended_query_named_and_unnamed() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_e; create table wire_e (a int, b text)");
        c.query("insert into wire_e select g, 'v' || g from generate_series(1, 10) g");
        // Unnamed statement, parameters in text, one of them binary.
        c.parse(
            "",
            "select a, b from wire_e where a > $1 and b <> $2 order by a",
            &[23, 25],
        );
        c.bind(
            "",
            "",
            &[1, 0],
            &[Some(&7i32.to_be_bytes()), Some(b"v9")],
            &[0, 1],
        );
        c.describe(b'P', "");
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "12TDDCZ");
        assert_eq!(
            m[2].columns(),
            vec![("a".to_string(), 23, 0), ("b".to_string(), 25, 1)]
        );
        assert_eq!(
            m[3].raw_values(),
            vec![Some(b"8".to_vec()), Some(b"v8".to_vec())]
        );
        assert_eq!(m[5].tag_text(), "SELECT 2");
        // A named statement, described, executed twice.
        c.parse("s1", "select count(*) from wire_e where a <= $1", &[]);
        c.describe(b'S', "s1");
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "1tTZ");
        assert_eq!(m[2].columns(), vec![("count".to_string(), 20, 0)]);
        for (p, n) in [(&b"3"[..], "3"), (b"5", "5")] {
            c.bind("", "s1", &[], &[Some(p)], &[]);
            c.execute("", 0);
            c.sync();
            let m = c.until_ready();
            assert_eq!(tags(&m), "2DCZ");
            assert_eq!(m[1].values(), vec![Some(n.to_string())]);
        }
        // Closing it makes it unknown.
        c.close(b'S', "s1");
        c.bind("", "s1", &[], &[Some(b"1")], &[]);
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "3EZ");
        assert_eq!(m[1].code(), "26000");
        // Statements without rows.
        c.parse("", "insert into wire_e values ($1, $2)", &[]);
        c.bind("", "", &[], &[Some(b"11"), None], &[]);
        c.describe(b'P', "");
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "12nCZ");
        assert_eq!(m[3].tag_text(), "INSERT 0 1");
        // An empty statement.
        c.parse("", "", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        c.sync();
        assert_eq!(tags(&c.until_ready()), "12IZ");
        c.query("drop table wire_e");
    });
}

#[test]
fn portals_suspend_and_resume() {
    both(|addr| {
        let mut c = client(addr);
        c.parse("", "select g from generate_series(1, 5000) g", &[]);
        c.bind("p", "", &[], &[], &[1]);
        c.execute("p", 2);
        c.execute("p", 3);
        c.flush();
        let mut got = Vec::new();
        for _ in 0..7 {
            got.push(c.read().unwrap());
        }
        assert_eq!(tags(&got), "12DDsDD");
        got.push(c.read().unwrap());
        assert_eq!(got[7].tag, b'D');
        got.push(c.read().unwrap());
        assert_eq!(got[8].tag, b's');
        let ints: Vec<i32> = got
            .iter()
            .filter(|m| m.tag == b'D')
            .map(|m| i32::from_be_bytes(m.raw_values()[0].clone().unwrap().try_into().unwrap()))
            .collect();
        assert_eq!(ints, [1, 2, 3, 4, 5]);
        // The rest, across the executor's batch boundary.
        c.execute("p", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(m.iter().filter(|m| m.tag == b'D').count(), 4995);
        let last = &m[m.len() - 2];
        assert_eq!(last.tag_text(), "SELECT 4995");
        // The portal ended with the transaction, at Sync.
        c.execute("p", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(m[0].code(), "34000");
    });
}

#[test]
fn errors_skip_to_sync() {
    both(|addr| {
        let mut c = client(addr);
        c.parse("", "select 1 / g from generate_series(0, 1) g", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        // Skipped: the error above discards everything up to Sync.
        c.parse("", "select 1", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "12EZ");
        assert_eq!(wire::error(&m).code(), "22012");
        // A constant expression fails where it is folded: PostgreSQL folds
        // while planning, at Bind; tusk's binder folds, at Parse.
        c.parse("", "select 1/0", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        let t = tags(&m);
        assert!(t == "1EZ" || t == "EZ", "{t}");
        assert_eq!(wire::error(&m).code(), "22012");
        // Parameter count mismatch, unknown portal, duplicate name.
        c.parse("", "select $1::int", &[]);
        c.bind("", "", &[], &[], &[]);
        c.sync();
        assert_eq!(c.until_ready()[1].code(), "08P01");
        c.execute("nope", 0);
        c.sync();
        assert_eq!(c.until_ready()[0].code(), "34000");
        c.parse("dup", "select 1", &[]);
        c.parse("dup", "select 2", &[]);
        c.sync();
        let m = c.until_ready();
        assert_eq!(tags(&m), "1EZ");
        assert_eq!(m[1].code(), "42P05");
        c.parse("", "select 1; select 2", &[]);
        c.sync();
        assert_eq!(c.until_ready()[0].code(), "42601");
        // Still a working session.
        assert_eq!(c.rows("select 7"), [[Some("7".to_string())]]);
    });
}

#[test]
fn cancel_stops_the_running_statement() {
    both(|addr| {
        let mut c = client(addr);
        let mut b = Vec::new();
        wire::cstr(
            &mut b,
            "select count(*) from generate_series(1, 10000000000) g",
        );
        c.send(b'Q', &b);
        // Cancel until the statement reports it (a cancel that lands before
        // the statement starts is ignored, as in PostgreSQL).
        c.stream
            .set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        loop {
            wire::cancel(addr, c.pid, c.secret);
            let mut head = [0u8; 1];
            if c.stream.peek(&mut head).is_ok() {
                break;
            }
        }
        c.stream.set_read_timeout(None).unwrap();
        let m = c.until_ready();
        let e = wire::error(&m);
        assert_eq!(e.code(), "57014");
        assert_eq!(e.fields()[&b'M'], "canceling statement due to user request");
        // A wrong key cancels nothing; the session works.
        wire::cancel(addr, c.pid, c.secret.wrapping_add(1));
        assert_eq!(c.rows("select 1"), [[Some("1".to_string())]]);
    });
}

#[test]
fn statement_timeout_cancels() {
    both(|addr| {
        let mut c = client(addr);
        c.query("set statement_timeout = 50");
        // A scan, and a nested loop whose filter rejects every one of its
        // 10^11 pairs (no batch comes out of it until it ends).
        for sql in [
            "select count(*) from generate_series(1, 10000000000) g",
            "select count(*) from generate_series(1, 1000000) a, generate_series(1, 100000) b where a + b < 0",
        ] {
            let m = c.query(sql);
            assert_eq!(wire::error(&m).code(), "57014");
            assert_eq!(
                wire::error(&m).fields()[&b'M'],
                "canceling statement due to statement timeout"
            );
        }
        c.query("reset statement_timeout");
        assert_eq!(c.rows("select 1"), [[Some("1".to_string())]]);
    });
}

#[test]
fn row_descriptions_carry_type_lengths_and_modifiers() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_t");
        c.query("create table wire_t (n numeric(6,3), v varchar(4), c char(3), i int, t text)");
        let expect = [
            ("n", 1700, -1, (6 << 16 | 3) + 4),
            ("v", 1043, -1, 4 + 4),
            ("c", 1042, -1, 3 + 4),
            ("i", 23, 4, -1),
            ("t", 25, -1, -1),
        ];
        for sql in [
            "select n, v, c, i, t from wire_t",
            "select 1.5::numeric(6,3) n, 'ab'::varchar(4) v, 'x'::char(3) c, 1 i, 'y'::text t",
        ] {
            let m = c.query(sql);
            let names: Vec<(String, u32)> =
                m[0].columns().into_iter().map(|(n, o, _)| (n, o)).collect();
            let want: Vec<(String, u32)> = expect.iter().map(|e| (e.0.to_string(), e.1)).collect();
            assert_eq!(names, want, "{sql}");
            let sizes: Vec<(i16, i32)> = expect.iter().map(|e| (e.2, e.3)).collect();
            assert_eq!(m[0].type_sizes(), sizes, "{sql}");
        }
    });
}

#[test]
fn binary_results() {
    both(|addr| {
        let mut c = client(addr);
        c.parse(
            "",
            "select true, 7::int, 8::bigint, 12345.678::numeric, 'x'::text, null::int",
            &[],
        );
        c.bind("", "", &[], &[], &[1]);
        c.describe(b'P', "");
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        let oids: Vec<u32> = m[2].columns().iter().map(|c| c.1).collect();
        assert_eq!(oids, [16, 23, 20, 1700, 25, 23]);
        assert_eq!(
            m[3].raw_values(),
            vec![
                Some(vec![1]),
                Some(7i32.to_be_bytes().to_vec()),
                Some(8i64.to_be_bytes().to_vec()),
                Some(vec![0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]),
                Some(b"x".to_vec()),
                None
            ]
        );
    });
}

/// The status byte of the last message (ReadyForQuery).
fn status(m: &[wire::Msg]) -> u8 {
    let z = m.last().expect("ReadyForQuery");
    assert_eq!(z.tag, b'Z');
    z.body[0]
}

#[test]
fn transaction_blocks_over_the_wire() {
    both(|addr| {
        let mut c = client(addr);
        c.query("drop table if exists wire_t; create table wire_t (a int)");
        assert_eq!(status(&c.query("begin")), b'T');
        assert_eq!(status(&c.query("insert into wire_t values (1)")), b'T');
        let m = c.query("select 1/0");
        assert_eq!((wire::error(&m).code(), status(&m)), ("22012".into(), b'E'));
        let m = c.query("select 1");
        assert_eq!((wire::error(&m).code(), status(&m)), ("25P02".into(), b'E'));
        let m = c.query("commit");
        assert_eq!((m[0].tag_text(), status(&m)), ("ROLLBACK".into(), b'I'));
        // The statements of one Query message commit together or not at all.
        let m = c.query("insert into wire_t values (2); select 1/0");
        assert_eq!(status(&m), b'I');
        assert_eq!(c.rows("select count(*) from wire_t"), [[Some("0".into())]]);
        // A BEGIN in the string makes its statements so far part of the
        // block it opens, which stays open.
        let m = c.query("insert into wire_t values (3); begin; insert into wire_t values (4)");
        assert_eq!(status(&m), b'T');
        // The extended protocol inside a block.
        c.parse("", "insert into wire_t values ($1)", &[23]);
        c.bind("", "", &[], &[Some(b"5")], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!((tags(&m), status(&m)), ("12CZ".into(), b'T'));
        c.parse("", "select a from wire_t where a = $1", &[23]);
        c.bind("", "", &[], &[Some(b"0")], &[]);
        c.execute("", 0);
        c.parse("", "select 1/a from wire_t where a = 0", &[]);
        c.sync();
        let m = c.until_ready();
        assert_eq!(status(&m), b'T');
        c.parse("", "select 1/(a - 3) from wire_t", &[]);
        c.bind("", "", &[], &[], &[]);
        c.execute("", 0);
        c.sync();
        let m = c.until_ready();
        assert_eq!((wire::error(&m).code(), status(&m)), ("22012".into(), b'E'));
        assert_eq!(status(&c.query("rollback")), b'I');
        assert!(c.rows("select a from wire_t").is_empty());
        c.query("drop table wire_t");
    });
}
