//! COPY FROM, `\copy` and COPY data inside scripts: the same script and the
//! same files go to `psql -f` against PostgreSQL 15 and to `tusk -f`, and
//! everything both print must be the same, stdout and stderr (errors with
//! their CONTEXT lines, script line numbers), as must the files `\copy ...
//! to` writes. Both stop at the first error (`ON_ERROR_STOP`).
//!
//! Like the differential corpus, this skips (and says so) where PostgreSQL
//! 15 is not installed or cannot be started.

mod common;

use common::pg::PgCluster;
use common::process::{run_with_timeout, say, RunOutput};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A file's name and the function that makes its bytes.
type Generated = (&'static str, fn() -> Vec<u8>);

/// One script and the files it reads (name, bytes).
struct Case {
    name: &'static str,
    script: &'static [u8],
    files: &'static [(&'static str, &'static [u8])],
    /// A file made by a function (too big to write out here).
    generated: Option<Generated>,
    /// Files the script writes, compared after the run.
    writes: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "text_inline",
        script: b"create table t (a int not null, b text default 'dflt', c numeric(6,2), d date);\n\
copy t from stdin;\n\
1\thello\t1.5\t2020-01-31\n\
2\t\\N\t\\N\t\\N\n\
3\ttab\\there\\\\x \\x41\\101\t-0.005\t1999-12-31\n\
\\.\n\
copy t (a, c) from stdin;\n\
4\t7\n\
\\.\n\
select * from t order by a;\n\
copy t to stdout;\n\
select count(*) from t;\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "csv_inline",
        script: b"create table t (a int, b text, c text);\n\
copy t from stdin with (format csv, header);\n\
a,b,c\n\
1,\"x,y\",\"multi\n\
line\"\n\
2,,\"\"\n\
3,\"say \"\"hi\"\"\",z\n\
\\.\n\
copy t from stdin (format csv, force_not_null (b), force_null (c));\n\
4,,\"\"\n\
\\.\n\
select a, b is null, c is null, b, c from t order by a;\n\
copy t to stdout csv;\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "slash_copy_files",
        script: b"create table t (id int, name varchar(10), price numeric(10,2));\n\
\\copy t from 'in.csv' with (format csv, header)\n\
\\copy t (id, name) from in.txt\n\
select count(*), sum(price) from t;\n\
\\copy t to 'out.csv' csv header\n\
\\copy (select id, name from t where id > 2 order by id) to out.txt\n\
\\copy t to stdout (format csv)\n\
select 'done';\n",
        files: &[
            ("in.csv", b"id,name,price\n1,one,1.10\n2,\"t,wo\",2.25\n3,,\n"),
            ("in.txt", b"4\tfour\n5\t\\N\n"),
        ],
        generated: None,
        writes: &["out.csv", "out.txt"],
    },
    Case {
        name: "script_goes_on_after_the_data",
        script: b"create table t (a int);\n\
copy t from stdin;\n\
1\n\
2\n\
\\.\n\
select sum(a) from t;\n\
select 1 / 0;\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "bad_integer",
        script: b"create table t (a int, b text);\n\
copy t from stdin;\n\
1\tok\n\
x1\tbad\n\
3\tnever\n\
\\.\n\
select 1;\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "missing_column",
        script: b"create table t (a int, b text, c int);\ncopy t from stdin;\n1\tx\t3\n2\ty\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "extra_data",
        script: b"create table t (a int, b text);\ncopy t from stdin (format csv);\n1,x\n2,y,z\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "unterminated_csv_quote",
        script: b"create table t (a int, b text);\n\\copy t from 'q.csv' csv\n",
        files: &[("q.csv", b"1,\"ok\"\n2,\"never closed\n3,x\n")],
        generated: None,
        writes: &[],
    },
    Case {
        name: "invalid_utf8",
        script: b"create table t (a int, b text);\ncopy t from stdin;\n1\tfine\n2\tbad \xff byte\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "null_into_not_null",
        script: b"create table t (a int not null, b text);\ncopy t from stdin;\n1\tx\n\\N\ty\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "check_violation",
        script: b"create table t (a int check (a > 0), b text);\ncopy t (b, a) from stdin (format csv);\nx,1\ny,-5\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "value_too_long_and_overflow",
        script: b"create table t (v varchar(3), n numeric(4,1));\ncopy t from stdin;\nabc\t1.25\nab \t999.95\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "bad_date",
        script: b"create table t (d date);\ncopy t from stdin;\n2020-02-29\n2021-02-29\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "newline_styles_must_agree",
        script: b"create table t (a int, b text);\ncopy t from stdin;\n1\tx\r\n2\ty\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "error_in_a_later_batch",
        script: b"create table t (a int);\n\\copy t from big.txt\nselect count(*) from t;\n",
        files: &[],
        generated: Some(("big.txt", big)),
        writes: &[],
    },
    Case {
        name: "unique_violation",
        script: b"create table t (a int primary key, b text);\ncopy t from stdin;\n1\tx\n2\ty\n\\.\n\
copy t from stdin;\n3\tz\n2\tdup\n\\.\n",
        files: &[],
        generated: None,
        writes: &[],
    },
    Case {
        name: "missing_file",
        script: b"create table t (a int);\n\\copy t from 'nope.csv'\n",
        files: &[],
        generated: None,
        writes: &[],
    },
];

/// 20000 good rows and a bad one.
fn big() -> Vec<u8> {
    let mut out: Vec<u8> = (1..=20000)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect();
    out.extend_from_slice(b"20001x\n");
    out
}

fn tusk() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tusk"));
    cmd.env_remove("TUSKDATA");
    cmd
}

/// What a run printed, with psql's program name as tusk's.
fn normalised(run: &RunOutput) -> (bool, String, String) {
    (
        run.success,
        run.stdout.clone(),
        run.stderr.replace("psql:", "tusk:"),
    )
}

fn prepare(dir: &Path, case: &Case) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("script.sql"), case.script).unwrap();
    for (name, bytes) in case.files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    if let Some((name, make)) = case.generated {
        std::fs::write(dir.join(name), make()).unwrap();
    }
}

#[test]
fn copy_scripts_match_psql() {
    let pg = match PgCluster::start() {
        Ok(pg) => pg,
        Err(why) => {
            say(&format!("copy_psql: SKIPPED, {why}"));
            return;
        }
    };
    let root = tempfile::tempdir().unwrap();
    let timeout = Duration::from_secs(120);
    let mut report = String::new();
    for (i, case) in CASES.iter().enumerate() {
        let db = format!("copy_{i}");
        pg.create_database(&db).unwrap();
        let pg_dir = root.path().join(format!("pg-{}", case.name));
        let tusk_dir = root.path().join(format!("tusk-{}", case.name));
        prepare(&pg_dir, case);
        prepare(&tusk_dir, case);
        let mut psql = pg.psql(&db);
        psql.current_dir(&pg_dir)
            .args(["-v", "ON_ERROR_STOP=1", "-f", "script.sql"]);
        let want = normalised(&run_with_timeout(&mut psql, timeout).unwrap());
        let mut t = tusk();
        t.current_dir(&tusk_dir)
            .args(["-D", "data", "-X", "-A", "-t", "-q"])
            .args(["-v", "ON_ERROR_STOP=1", "-f", "script.sql"]);
        let got = normalised(&run_with_timeout(&mut t, timeout).unwrap());
        if want != got {
            report.push_str(&format!(
                "--- {}\n  psql ({}):\n{}{}\n  tusk ({}):\n{}{}\n",
                case.name,
                if want.0 { "ok" } else { "failed" },
                want.1,
                want.2,
                if got.0 { "ok" } else { "failed" },
                got.1,
                got.2
            ));
        }
        for name in case.writes {
            let a = std::fs::read(pg_dir.join(name)).unwrap_or_default();
            let b = std::fs::read(tusk_dir.join(name)).unwrap_or_default();
            if a != b || a.is_empty() {
                report.push_str(&format!(
                    "--- {}: {name} differs\n  psql:\n{}\n  tusk:\n{}\n",
                    case.name,
                    String::from_utf8_lossy(&a),
                    String::from_utf8_lossy(&b)
                ));
            }
        }
    }
    assert!(report.is_empty(), "tusk and psql differ:\n{report}");
}

/// Without `-q`: like psql, no `COPY n` after rows that went to the output
/// (`COPY ... TO STDOUT`, `\copy ... to stdout` and `to pstdout`), but one
/// after `\copy ... to 'file'`. Expected output from psql 15.
#[test]
fn copy_tags_where_psql_prints_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.sql"),
        "create table t (a int, b text);\ninsert into t values (1, null);\n\
         copy t to stdout;\n\\copy t to stdout csv\n\\copy t to pstdout\n\
         \\copy t to out.txt\ncopy (select 1) to stdout;\ncopy t from stdin;\n2\tx\n\\.\n",
    )
    .unwrap();
    let out = tusk()
        .current_dir(dir.path())
        .args(["-D", "data", "-X", "-f", "s.sql"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "CREATE TABLE\nINSERT 0 1\n1\t\\N\n1,\n1\t\\N\nCOPY 1\n1\nCOPY 1\n"
    );
    assert_eq!(
        std::fs::read(dir.path().join("out.txt")).unwrap(),
        b"1\t\\N\n"
    );
}
