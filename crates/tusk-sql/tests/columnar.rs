//! Columnar tables where tusk's behaviour has no PostgreSQL counterpart to
//! compare with (the differential corpus `24_columnar.sql` covers the
//! rest): the access method setting, what is refused, EXPLAIN's row group
//! counts and join key filters, COPY FROM, VACUUM's rewrite under an old snapshot, and rows
//! surviving a restart.

mod common;

use common::{error, rows, run, session_with};
use tusk_sql::Session;

fn session(dir: &std::path::Path, conf: &str) -> Session {
    session_with(dir, &format!("huge_pages = off\nautovacuum = off\n{conf}"))
}

#[test]
fn default_table_access_method_chooses_the_storage() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "");
    assert_eq!(rows(&mut s, "show default_table_access_method"), ["heap"]);
    let e = s
        .query("set default_table_access_method = nosuch")
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str(), e.detail.as_deref()),
        (
            "22023",
            "invalid value for parameter \"default_table_access_method\": \"nosuch\"",
            Some("Table access method \"nosuch\" does not exist.")
        )
    );
    let e = s
        .query("set default_table_access_method = btree")
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        ("55000", "access method \"btree\" is not of type TABLE")
    );
    rows(&mut s, "set default_table_access_method = columnar");
    rows(&mut s, "create table c (a int)");
    rows(&mut s, "create table h (a int) using heap");
    rows(&mut s, "reset default_table_access_method");
    rows(&mut s, "create table h2 (a int)");
    // A columnar scan says so under EXPLAIN ANALYZE.
    let am = |s: &mut Session, t: &str| {
        let plan = run(s, &format!("explain analyze select * from {t}")).join("\n");
        if plan.contains("Columnar: row groups") {
            "columnar"
        } else {
            "heap"
        }
    };
    assert_eq!(am(&mut s, "c"), "columnar");
    assert_eq!(am(&mut s, "h"), "heap");
    assert_eq!(am(&mut s, "h2"), "heap");
    // pg_class.relam names it, as psql's `\d+` and `\dA` read it.
    assert_eq!(
        rows(
            &mut s,
            "select c.relname, a.amname, a.amtype from pg_class c join pg_am a on a.oid = c.relam \
             where c.relname in ('c', 'h', 'h2') order by 1"
        ),
        ["c|columnar|t", "h|heap|t", "h2|heap|t"]
    );
    // tusk.conf sets the default too.
    drop(s);
    let mut s = session(dir.path(), "default_table_access_method = columnar\n");
    assert_eq!(
        rows(&mut s, "show default_table_access_method"),
        ["columnar"]
    );
    rows(&mut s, "create table c2 as select 1 as x");
    assert_eq!(am(&mut s, "c2"), "columnar");
    // The catalog keeps it across a restart.
    drop(s);
    let mut s = session(dir.path(), "");
    assert_eq!(am(&mut s, "c"), "columnar");
}

#[test]
fn indexes_are_refused_on_columnar_tables() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "");
    rows(&mut s, "create table c (a int, b text) using columnar");
    let refused = "indexes on columnar tables are not supported";
    assert_eq!(error(&mut s, "create index on c (a)"), refused);
    assert_eq!(error(&mut s, "alter table c add primary key (a)"), refused);
    assert_eq!(
        error(&mut s, "create table d (a int primary key) using columnar"),
        refused
    );
    assert_eq!(
        error(&mut s, "create table d (a int, unique (a)) using columnar"),
        refused
    );
    let e = s.query("create index on c (b)").unwrap_err();
    assert_eq!(e.code, "0A000");
}

#[test]
fn explain_analyze_counts_row_groups_read_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "");
    rows(&mut s, "create table c (a int, b text) using columnar");
    rows(
        &mut s,
        "insert into c select g, 'v' || g from generate_series(1, 400000) g",
    );
    let plan = run(
        &mut s,
        "explain (analyze, costs off, timing off) select count(*) from c where a between 150000 and 160000",
    )
    .join("\n");
    assert!(plan.contains("Seq Scan on c"), "{plan}");
    assert!(plan.contains("Columnar: row groups 4, skipped 3"), "{plan}");
    assert_eq!(
        rows(
            &mut s,
            "select count(*) from c where a between 150000 and 160000"
        ),
        ["10001"]
    );
    // Parallel: the participants share the row groups; the line counts all.
    rows(&mut s, "set min_parallel_table_scan_size = 0");
    let plan = run(
        &mut s,
        "explain (analyze, costs off, timing off) select count(*) from c where a > 390000",
    )
    .join("\n");
    assert!(plan.contains("Parallel Seq Scan on c"), "{plan}");
    assert!(plan.contains("Columnar: row groups 4, skipped 3"), "{plan}");
    // Without ANALYZE nothing tusk-specific is shown.
    let plan = run(&mut s, "explain (costs off) select * from c where a = 1").join("\n");
    assert!(!plan.contains("Columnar"), "{plan}");
}

/// The number after `label` on the line of `plan` that holds it.
fn figure_after(plan: &str, label: &str) -> u64 {
    let line = plan
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no `{label}` in\n{plan}"));
    line[line.find(label).unwrap() + label.len()..]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no figure after `{label}` in {line}"))
}

#[test]
fn join_key_filters_reach_the_columnar_probe_scan() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "");
    rows(&mut s, "create table fact (k int, v int) using columnar");
    rows(
        &mut s,
        "insert into fact select g % 10000, g from generate_series(1, 200000) g",
    );
    rows(&mut s, "create table dim (k int, name text) using columnar");
    rows(
        &mut s,
        "insert into dim select g * 100, 'd' || g from generate_series(1, 20) g",
    );
    rows(&mut s, "analyze");
    let join = "select count(*), sum(f.v) from fact f join dim d on f.k = d.k";
    // 20 keys, each in 20 rows of fact.
    let expected = ["400|38420000"];
    // The probe side's scan carries the join's keys; the build side's not.
    let plan = run(&mut s, &format!("explain (costs off) {join}")).join("\n");
    let shape: Vec<&str> = plan.lines().map(str::trim).collect();
    let fact = shape
        .iter()
        .position(|l| l.ends_with("Seq Scan on fact f"))
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(
        shape[fact - 1].starts_with("Hash Cond: (f.k = d.k)"),
        "{plan}"
    );
    assert_eq!(shape[fact + 1], "tusk: join key filter", "{plan}");
    assert_eq!(plan.matches("join key filter").count(), 1, "{plan}");
    // Under ANALYZE the scan says how many rows the filter dropped: all
    // but the 20 keys' rows (and the first batch, read before the build).
    for conf in [
        "set min_parallel_table_scan_size = 1000000",
        "set min_parallel_table_scan_size = 0",
    ] {
        rows(&mut s, conf);
        let plan = run(
            &mut s,
            &format!("explain (analyze, costs off, timing off) {join}"),
        )
        .join("\n");
        let removed = figure_after(&plan, "tusk: rows removed by join key filter:");
        assert!(removed > 150_000 && removed < 200_000, "{plan}");
        assert_eq!(rows(&mut s, join), expected, "{conf}");
    }
    // A left join keeps unmatched probe rows: no filter.
    let plan = run(
        &mut s,
        "explain (costs off) select count(*) from fact f left join dim d on f.k = d.k",
    )
    .join("\n");
    assert!(!plan.contains("join key filter"), "{plan}");
}

/// The estimated rows of the top node of `sql`'s plan.
fn estimated_rows(s: &mut Session, sql: &str) -> f64 {
    let plan = run(s, &format!("explain {sql}")).join("\n");
    let at = plan.find("rows=").expect("an estimate") + 5;
    let digits: String = plan[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

#[test]
fn analyze_samples_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "");
    rows(
        &mut s,
        "create table c (a int, b int, t text) using columnar",
    );
    rows(
        &mut s,
        "insert into c select g, g % 10, case when g % 4 = 0 then null else 'x' end \
         from generate_series(1, 250000) g",
    );
    rows(&mut s, "analyze c");
    // A unique column, one of ten values, a quarter NULLs, and a
    // self-join on the unique column: as the sample and the row groups'
    // row count say, not the defaults.
    assert_eq!(estimated_rows(&mut s, "select * from c where a = 5"), 1.0);
    let b = estimated_rows(&mut s, "select * from c where b = 3");
    assert!((20_000.0..30_000.0).contains(&b), "{b}");
    let n = estimated_rows(&mut s, "select * from c where t is null");
    assert!((55_000.0..70_000.0).contains(&n), "{n}");
    let j = estimated_rows(&mut s, "select * from c x join c y on x.a = y.a");
    assert!((200_000.0..300_000.0).contains(&j), "{j}");
    // (A serial aggregation: the parallel one guesses a tenth of its input.)
    rows(&mut s, "set max_parallel_workers_per_gather = 0");
    assert_eq!(estimated_rows(&mut s, "select b from c group by b"), 10.0);
}

#[test]
fn copy_from_a_file_fills_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path(), "");
    let file = dir.path().join("rows.csv");
    let text: String = (1..=120_000)
        .map(|i| format!("{i},name {}\n", i % 13))
        .collect();
    std::fs::write(&file, text).unwrap();
    rows(&mut s, "create table c (a int, b text) using columnar");
    assert_eq!(
        rows(
            &mut s,
            &format!("copy c from '{}' with (format csv)", file.display())
        ),
        ["COPY 120000"]
    );
    assert_eq!(
        rows(&mut s, "select count(*), sum(a), count(distinct b) from c"),
        ["120000|7200060000|13"]
    );
    let plan = run(
        &mut s,
        "explain (analyze, costs off, timing off) select * from c where a = 7",
    )
    .join("\n");
    assert!(plan.contains("Columnar: row groups 2, skipped 1"), "{plan}");
}

#[test]
fn vacuum_rewrites_under_an_old_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut s1 = session(dir.path(), "");
    let mut s2 = Session::with_database(s1.database().clone()).unwrap();
    rows(&mut s1, "create table c (a int) using columnar");
    rows(&mut s1, "insert into c select generate_series(1, 20000)");
    rows(&mut s1, "delete from c where a > 10000");
    rows(&mut s2, "begin isolation level repeatable read");
    assert_eq!(
        rows(&mut s2, "select count(*), sum(a) from c"),
        ["10000|50005000"]
    );
    // VACUUM rewrites the half-deleted group while s2's snapshot is open.
    let report = run(&mut s1, "vacuum verbose c").join("\n");
    assert!(report.contains("1 row groups rewritten into 1"), "{report}");
    assert_eq!(
        rows(&mut s1, "select count(*), sum(a) from c"),
        ["10000|50005000"]
    );
    // s2 still sees the old group, and may not change a row the new one
    // carries.
    assert_eq!(
        rows(&mut s2, "select count(*), sum(a) from c"),
        ["10000|50005000"]
    );
    let e = s2.query("delete from c where a = 1").unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "40001",
            "could not serialize access due to concurrent update"
        )
    );
    rows(&mut s2, "rollback");
    assert_eq!(rows(&mut s2, "delete from c where a = 1"), ["DELETE 1"]);
    // The old group's blocks are free once no snapshot can see it.
    run(&mut s1, "vacuum c");
    let report = run(&mut s1, "vacuum verbose c").join("\n");
    assert!(!report.contains(" 0 free blocks"), "{report}");
    rows(&mut s1, "insert into c select generate_series(1, 15000)");
    assert_eq!(rows(&mut s1, "select count(*) from c"), ["24999"]);
}

#[test]
fn rows_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = session(dir.path(), "");
        rows(&mut s, "create table c (a int, b text) using columnar");
        rows(
            &mut s,
            "insert into c select g, repeat('x', g % 50) from generate_series(1, 150000) g",
        );
        rows(&mut s, "delete from c where a % 10 = 0");
        rows(&mut s, "update c set b = 'changed' where a = 11");
        rows(&mut s, "insert into c values (0, 'delta')");
    }
    let mut s = session(dir.path(), "");
    assert_eq!(
        rows(&mut s, "select count(*), sum(a), sum(length(b)) from c"),
        rows(
            &mut s,
            "select count(*), sum(g), sum(length(case g when 0 then 'delta' when 11 then 'changed' else repeat('x', g % 50) end))
             from (select generate_series(0, 150000) g) s where g % 10 <> 0 or g = 0"
        )
    );
    assert_eq!(rows(&mut s, "select b from c where a = 11"), ["changed"]);
}
