//! psql's describe commands against `tusk serve` print what they print
//! against PostgreSQL 15 for the same schema.
//!
//! The test creates one schema in a PostgreSQL 15 cluster (initdb'd with
//! the bootstrap superuser `tusk` and the C locale, as tusk's database is)
//! and in a tusk server, runs psql 15 with each meta command against both
//! and compares everything psql prints. `\d`, `\d table`, `\dt`, `\di`,
//! `\dv`, `\dn` and `\du` must match exactly. `\l` differs in one way that
//! is inherent: a PostgreSQL cluster has the template databases
//! `template0` and `template1` beside `postgres`, a tusk data directory is
//! one database; the test compares `\l`'s rows for `postgres` (unaligned,
//! so that the other rows do not change column widths). Without
//! PostgreSQL 15 or psql the test is skipped with a message.

mod common;

use common::pg::PgCluster;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// `tusk serve` on a port the system picks.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    fn start(dir: &std::path::Path) -> Served {
        std::fs::write(dir.join("tusk.conf"), "shared_buffers = 16MB\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tusk"))
            .env_remove("TUSKDATA")
            .args(["serve", "--listen", "127.0.0.1", "--port", "0", "-D"])
            .arg(dir)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut port = 0;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(p) =
                line.strip_prefix("LOG:  listening on IPv4 address \"127.0.0.1\", port ")
            {
                port = p.parse().unwrap();
            }
            if line == "LOG:  database system is ready to accept connections" {
                break;
            }
        }
        // Keep reading the log so that the server never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        Served { child, port }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The schema both sides get: keys, unique constraints and indexes of
/// several shapes, CHECK constraints and DEFAULTs that PostgreSQL prints in
/// many ways, NOT NULL columns, quoted names and views.
const SCHEMA: &str = r#"
create table items (id int primary key, name text not null, price numeric(10,2) default 0,
    qty int check (qty >= 0), code varchar(20) unique, created date default current_date);
create index items_name_idx on items (name);
create index items_price_desc on items (price desc nulls last, qty);
create index items_qty_nf on items (qty nulls first);
create table orders (oid_ bigint, item int, note char(5),
    constraint orders_pk primary key (oid_, item), constraint qty_pos check (item > 0));
create unique index orders_note_u on orders (note);
create view cheap as select id, name from items where price < 10;
create table "Mixed Case" ("Col A" int not null default 42, "select" text, b boolean default true);
create table defaults (a int default -1, b bigint default 1, c bigint default 3000000000,
    d numeric(10,2) default 1.5, e numeric default -2.5, f text default 'x',
    g varchar(10) default 'y', h char(3) default 'z', i date default '2020-01-02',
    j timestamptz default now(), k timestamp default current_timestamp,
    l int default (1 + 2) * 3, m boolean default true, n float8 default 1.5,
    o real default 2, p int default '5'::int, q text default 'a' || 'b',
    r interval default '1 day', s int default abs(-3), t timestamp(3) default localtimestamp(3),
    check (d > 0), check (f <> ''), check (a between 1 and 10 or a is null),
    check (n > 1.5 and m), check (f like 'x%'), check (a in (1, 2, 3)),
    check (length(f) < 5 and (a > 0 or b > 0)), check (not m), check (a + 1 > -b),
    check (a * 2 - 1 > b - (a - 1)), check (f || 'x' <> g || 'y' || f));
create table bare (x int);
"#;

/// The meta commands compared exactly.
const COMMANDS: &[&str] = &[
    r"\d",
    r"\dt",
    r"\di",
    r"\dv",
    r"\dn",
    r"\du",
    r"\d items",
    r"\d orders",
    r"\d cheap",
    r#"\d "Mixed Case""#,
    r"\d defaults",
    r"\d bare",
    r"\d nosuch",
];

fn output(cmd: &mut Command) -> String {
    let out = cmd.output().expect("running psql");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn psql_describe_commands_print_what_postgresql_prints() {
    let pg = match PgCluster::start_as("tusk") {
        Ok(pg) => pg,
        Err(why) => {
            eprintln!("skipping: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let mut server = Served::start(dir.path());
    let port = server.port;
    let tusk_psql = || {
        let mut cmd = Command::new(pg.bin().join("psql"));
        for (key, _) in std::env::vars() {
            if key.starts_with("PG") {
                cmd.env_remove(key);
            }
        }
        cmd.args(["-X", "-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["-U", "tusk", "-d", "postgres"]);
        cmd
    };

    for (what, mut cmd) in [
        ("PostgreSQL", pg.plain_psql("postgres")),
        ("tusk", tusk_psql()),
    ] {
        let out = cmd
            .args(["-q", "-v", "ON_ERROR_STOP=1", "-c", SCHEMA])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the schema failed on {what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let mut differences = Vec::new();
    for c in COMMANDS {
        let want = output(pg.plain_psql("postgres").args(["-c", c]));
        let got = output(tusk_psql().args(["-c", c]));
        if want != got {
            differences.push(format!("{c}\n--- PostgreSQL 15\n{want}--- tusk\n{got}"));
        }
    }

    // \l: the postgres database's row (see the module doc).
    let databases = |cmd: &mut Command| -> String {
        output(cmd.args(["-A", "-c", r"\l"]))
            .lines()
            .filter(|l| {
                !l.starts_with("template") && !l.starts_with("tusk=CTc/tusk") && !l.starts_with('(')
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (want, got) = (
        databases(&mut pg.plain_psql("postgres")),
        databases(&mut tusk_psql()),
    );
    if want != got {
        differences.push(format!("\\l\n--- PostgreSQL 15\n{want}\n--- tusk\n{got}\n"));
    }

    server.stop();
    assert!(
        differences.is_empty(),
        "psql printed differently:\n{}",
        differences.join("\n")
    );
}
