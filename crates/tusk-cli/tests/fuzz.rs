//! A differential fuzzer in the style of SQLancer.
//!
//! Each round creates a few small random tables (int, bigint, text,
//! boolean, numeric, date, timestamp; NULLs and duplicates) and generates random queries
//! over them (`common::querygen`). Two oracles check every query:
//!
//! * **Differential:** the query runs on PostgreSQL 15 and on tusk (with
//!   default settings, and with `work_mem = 64kB` and parallel plans
//!   forced); the outcomes must agree: the same rows as a multiset, or the
//!   same first error line. Where the query keeps one of several equal
//!   values (set operations, DISTINCT, GROUP BY, min, max), numerics
//!   compare at their smallest scale: which of `0.00` and `0.0000`
//!   survives is the plan's choice, in PostgreSQL as in tusk.
//! * **Ternary logic partitioning:** for a query `SELECT ... FROM f WHERE p`,
//!   tusk's `count(*)` of `f` must equal the sum of its counts where `p`,
//!   where `NOT p` and where `p IS NULL`. This needs no reference system.
//!
//! The run is bounded: `TUSK_FUZZ_QUERIES` queries (default 600) from seed
//! `TUSK_FUZZ_SEED` (default 1) in CI; `TUSK_FUZZ_SECONDS` keeps going,
//! round after round with new seeds, for that long (a longer hunt on
//! demand). Every mismatch is printed with the schema that reproduces it;
//! each bug found becomes a case in `tests/corpus/`. `TUSK_FUZZ_TRACE=1`
//! prints each statement before tusk runs it (to find one that hangs);
//! `TUSK_FUZZ_ONLY=text` runs only the queries that contain `text` (to
//! find the round of a known shape fast: rounds generate the same queries);
//! `TUSK_FUZZ_REPORT=n` prints the first `n` mismatches (default 15).

mod common;

use common::outcome::{outcomes_agree, Outcome};
use common::pg::PgCluster;
use common::process::say;
use common::querygen::{schema, Features, Gen, Rng};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

const QUERIES_PER_ROUND: usize = 150;
const TABLES_PER_ROUND: usize = 3;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The grammar the fuzzer uses: what tusk supports.
fn features() -> Features {
    Features {
        outer_joins: true,
        subqueries: true,
        set_ops: true,
        case_exprs: true,
        distinct: true,
        row_comparisons: true,
    }
}

fn count_of(o: &Outcome) -> Option<i64> {
    match o {
        Outcome::Rows(r) if r.len() == 1 => r[0].parse().ok(),
        _ => None,
    }
}

/// Both engines failed a query on a data error, but not the same one: a
/// query whose rows raise two errors reports whichever its evaluation order
/// meets first, and a vectorised engine computes a column for a batch of
/// rows before the next column, where PostgreSQL finishes each row first.
/// Counted, not reported: neither answer is wrong. A scalar subquery that
/// returns two rows for some outer row is such an error too: PostgreSQL
/// raises it for the row that meets it first, so beside a division by zero
/// in another row (or another column of a joined row that PostgreSQL
/// projects before it filters the next) which one comes first is the
/// order of evaluation (fuzz seeds 20261403 and 20261404).
fn both_data_errors(pg: &Outcome, tusk: &Outcome) -> bool {
    const DATA_ERRORS: [&str; 6] = [
        "more than one row returned by a subquery",
        "division by zero",
        "out of range",
        "numeric field overflow",
        "invalid input syntax",
        "cannot take logarithm",
    ];
    let data = |o: &Outcome| match o {
        Outcome::Error(m) => DATA_ERRORS.iter().any(|d| m.contains(d)),
        _ => false,
    };
    data(pg) && data(tusk)
}

/// Whether the query collapses equal values into one (set operations,
/// DISTINCT, GROUP BY, min and max). Among equal numerics of different
/// display scale (`0.00` and `0.0000`) the one such a query keeps is not
/// defined by SQL, and PostgreSQL's own choice changes with its plan: a
/// hash keeps the first it meets, a sort whichever its quicksort leaves
/// first, and min and max the last of equal values in the order the join
/// below them happens to produce rows.
fn collapses_equal_values(sql: &str) -> bool {
    let upper = sql.to_ascii_uppercase();
    [
        "UNION",
        "INTERSECT",
        "EXCEPT",
        "DISTINCT",
        "GROUP BY",
        "MIN(",
        "MAX(",
    ]
    .iter()
    .any(|k| upper.contains(k))
}

/// `o` with every field that is a decimal number written at its smallest
/// scale (`0.0000` and `-0.00` as `0`, `1.50` as `1.5`), for comparing the
/// outcomes of queries that keep an arbitrary one of equal values.
fn at_smallest_scale(o: &Outcome) -> Outcome {
    let field = |f: &str| -> String {
        let digits = f.strip_prefix('-').unwrap_or(f);
        let numeric = digits.contains('.')
            && !digits.starts_with('.')
            && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
            && digits.matches('.').count() == 1;
        if !numeric {
            return f.to_string();
        }
        let t = f.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" {
            "0".to_string()
        } else {
            t.to_string()
        }
    };
    match o {
        Outcome::Rows(rows) => Outcome::Rows(
            rows.iter()
                .map(|r| r.split('|').map(field).collect::<Vec<_>>().join("|"))
                .collect(),
        ),
        e => e.clone(),
    }
}

#[test]
fn differential_fuzz() {
    let pg = match PgCluster::start() {
        Ok(pg) => pg,
        Err(why) => {
            say(&format!("fuzz: SKIPPED, {why}"));
            return;
        }
    };
    let seed = env_num("TUSK_FUZZ_SEED", 1);
    let budget_queries = env_num("TUSK_FUZZ_QUERIES", 600) as usize;
    let budget_time = std::env::var("TUSK_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_secs);
    let trace = env_num("TUSK_FUZZ_TRACE", 0) != 0;
    let only = std::env::var("TUSK_FUZZ_ONLY").ok();
    let report_limit = env_num("TUSK_FUZZ_REPORT", 15) as usize;
    let root = tempfile::Builder::new()
        .prefix("tusk-fuzz-")
        .tempdir()
        .expect("temporary directory");
    let started = Instant::now();
    let mut report = String::new();
    let (mut mismatches, mut total, mut tlp_checked) = (0usize, 0usize, 0usize);
    let mut order_dependent = 0usize;
    let mut round = 0u64;
    loop {
        let done = match budget_time {
            Some(t) => started.elapsed() >= t,
            None => total >= budget_queries,
        };
        if done {
            break;
        }
        let round_seed = seed.wrapping_add(round.wrapping_mul(0x1000_0001));
        let mut rng = Rng::new(round_seed);
        let (tables, setup) = schema(&mut rng, TABLES_PER_ROUND);
        let mut gen = Gen {
            rng: &mut rng,
            tables: &tables,
            features: features(),
        };
        let mut queries: Vec<_> = (0..QUERIES_PER_ROUND).map(|_| gen.query()).collect();
        if let Some(only) = &only {
            queries.retain(|q| q.sql.contains(only.as_str()));
        }
        // Statements: the schema, then the queries, then the TLP parts.
        let mut sqls = setup.clone();
        for q in &queries {
            sqls.push(q.sql.clone());
        }
        let db = format!("fuzz_{round}");
        pg.create_database(&db).unwrap_or_else(|e| panic!("{e}"));
        let pg_out = pg.run_file(&db, &sqls);
        let variants: [(&str, Option<&str>); 2] = [
            ("tusk", None),
            (
                "tusk with work_mem = 64kB and parallel plans",
                Some("work_mem = 64kB\nmin_parallel_table_scan_size = 0\n"),
            ),
        ];
        for (v, (label, conf)) in variants.iter().enumerate() {
            let dir = root.path().join(format!("r{round}-{v}"));
            let mut session = common::tusk::open(&dir, *conf);
            let tusk_out: Vec<Outcome> = sqls
                .iter()
                .map(|s| {
                    if trace {
                        say(&format!("fuzz: round {round}, {label}: {s}"));
                    }
                    common::tusk::run(&mut session, s)
                })
                .collect();
            for (k, q) in queries.iter().enumerate() {
                let i = setup.len() + k;
                total += 1;
                let agree = outcomes_agree(&pg_out[i], &tusk_out[i], false)
                    || (collapses_equal_values(&q.sql)
                        && outcomes_agree(
                            &at_smallest_scale(&pg_out[i]),
                            &at_smallest_scale(&tusk_out[i]),
                            false,
                        ));
                if !agree && both_data_errors(&pg_out[i], &tusk_out[i]) {
                    order_dependent += 1;
                    continue;
                }
                let mut tlp_note = None;
                if v == 0 {
                    if let Some((from, p)) = &q.tlp {
                        let mut part = |w: &str| -> Outcome {
                            common::tusk::run(
                                &mut session,
                                &format!("SELECT count(*) FROM {from}{w}"),
                            )
                        };
                        let all = part("");
                        let parts = [
                            part(&format!(" WHERE {p}")),
                            part(&format!(" WHERE NOT ({p})")),
                            part(&format!(" WHERE ({p}) IS NULL")),
                        ];
                        if let (Some(a), [Some(x), Some(y), Some(z)]) =
                            (count_of(&all), parts.each_ref().map(count_of))
                        {
                            tlp_checked += 1;
                            if a != x + y + z {
                                tlp_note = Some(format!(
                                    "TLP: count {a} but {x} + {y} + {z} over WHERE p / NOT p / p IS NULL"
                                ));
                            }
                        }
                    }
                }
                if agree && tlp_note.is_none() {
                    continue;
                }
                mismatches += 1;
                if mismatches <= report_limit {
                    let _ = writeln!(
                        report,
                        "--- round {round} (seed {round_seed}), query {k}, {label}"
                    );
                    let _ = writeln!(report, "  schema:");
                    for s in &setup {
                        let _ = writeln!(report, "    {s};");
                    }
                    let _ = writeln!(report, "  query:\n    {};", q.sql);
                    if let Some(n) = &tlp_note {
                        let _ = writeln!(report, "  {n}");
                    }
                    if !agree {
                        let _ = writeln!(report, "  PostgreSQL:");
                        report.push_str(&pg_out[i].render());
                        let _ = writeln!(report, "  {label}:");
                        report.push_str(&tusk_out[i].render());
                    }
                }
            }
        }
        round += 1;
    }
    say(&format!(
        "fuzz: {total} query runs ({} rounds from seed {seed}), {tlp_checked} TLP checks, {mismatches} mismatches, {order_dependent} different data errors, {:.1} s",
        round,
        started.elapsed().as_secs_f64()
    ));
    assert!(mismatches == 0, "{mismatches} mismatches:\n{report}");
}
