//! Skew stress test for the hash joins (issue 5): Zipf(1.0) build keys and
//! one key repeated a million times, joined serially, in parallel, and
//! spilled (serially and in parallel) — all must give the same answers.
//! Sized to run in seconds in a test build; `bench/run.py join --skew` runs
//! a bigger version.

mod common;

use common::rows;
use tusk_sql::Session;

/// Keys 1..=`keys` where key r appears ⌊`scale` / r⌋ times: Zipf(1.0).
fn zipf_values(keys: u32, scale: u32) -> Vec<String> {
    let mut out = Vec::new();
    let mut v = 0u64;
    for r in 1..=keys {
        for _ in 0..scale / r {
            v += 1;
            out.push(format!("({r},{v})"));
        }
    }
    out
}

#[test]
fn skewed_builds_give_the_same_answers_serial_parallel_and_spilled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tusk.conf"),
        "shared_buffers = 16MB\nhuge_pages = off\n",
    )
    .unwrap();
    let mut s = Session::open(dir.path()).unwrap();
    // The tables are never analyzed: without the switch PostgreSQL's costs
    // (and so tusk's) would merge them.
    rows(&mut s, "set enable_mergejoin = off");
    rows(&mut s, "create table zipf (k int, v int)");
    let values = zipf_values(5000, 20_000);
    for part in values.chunks(20_000) {
        rows(
            &mut s,
            &format!("insert into zipf values {}", part.join(",")),
        );
    }
    rows(
        &mut s,
        "create table hot as select 0 as k, g as v from generate_series(1, 1000000) g",
    );
    // The probe side: every key 0..499999 three times (bigger than either
    // build side, so the skewed tables are the ones hashed).
    rows(
        &mut s,
        "create table probe as select g % 500000 as k, g as w from generate_series(1, 1500000) g",
    );
    let queries = [
        "select count(*), sum(zipf.v), sum(probe.w) from zipf join probe using (k)",
        "select count(*), sum(hot.v), sum(probe.w) from hot join probe using (k)",
    ];
    let modes: [(&str, &[&str]); 5] = [
        (
            "serial, in memory",
            &[
                "set max_parallel_workers_per_gather = 0",
                "set work_mem = '256MB'",
            ],
        ),
        (
            "parallel, 1 worker",
            &["set max_parallel_workers_per_gather = 1"],
        ),
        (
            "parallel, 2 workers",
            &["set max_parallel_workers_per_gather = 2"],
        ),
        (
            "serial, spilled",
            &[
                "set max_parallel_workers_per_gather = 0",
                "set work_mem = '1MB'",
            ],
        ),
        (
            "parallel, spilled",
            &["set max_parallel_workers_per_gather = 2"],
        ),
    ];
    let mut first: Option<Vec<Vec<String>>> = None;
    for (name, settings) in modes {
        for set in settings {
            rows(&mut s, set);
        }
        let got: Vec<Vec<String>> = queries.iter().map(|q| rows(&mut s, q)).collect();
        let plan = rows(&mut s, &format!("explain analyze {}", queries[1]));
        assert_eq!(
            plan.iter().any(|l| l.contains("Parallel Hash Join")),
            name.starts_with("parallel"),
            "{name}: {plan:#?}"
        );
        assert_eq!(
            plan.iter().any(|l| l.contains("(originally 1)")),
            name.ends_with("spilled"),
            "{name}: {plan:#?}"
        );
        match &first {
            None => first = Some(got),
            Some(expected) => assert_eq!(&got, expected, "{name}"),
        }
    }
    let expected = first.unwrap();
    // Zipf: key r appears ⌊20000 / r⌋ times and meets 3 probe rows.
    let zipf_rows: u64 = (1..=5000u64).map(|r| 20_000 / r).sum();
    assert!(expected[0][0].starts_with(&format!("{}|", zipf_rows * 3)));
    assert!(expected[1][0].starts_with("3000000|"));
}
