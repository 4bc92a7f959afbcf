//! Btree indexes and VACUUM through SQL: index scans return exactly the
//! live rows, VACUUM removes dead tuples and their index entries, freed
//! space is reused, a small dead-TID budget takes several index passes.

mod common;

use common::{error, run, session_with};
use tusk_sql::Session;

fn session(dir: &std::path::Path) -> Session {
    session_with(dir, "shared_buffers = 1MB\nhuge_pages = off\n")
}

fn one(s: &mut Session, sql: &str) -> String {
    run(s, sql).pop().unwrap()
}

fn explain(s: &mut Session, sql: &str) -> String {
    run(s, &format!("explain (costs off) {sql}")).join("\n")
}

#[test]
fn index_scans_vacuum_and_space_reuse() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table t (i int, j bigint, w text)");
    run(
        &mut s,
        "insert into t select g, g * 2, 'row ' || g from generate_series(1, 20000) g",
    );
    assert_eq!(one(&mut s, "create index t_i_idx on t (i)"), "CREATE INDEX");
    assert_eq!(
        one(&mut s, "create index on t using btree (j)"),
        "CREATE INDEX"
    );
    assert_eq!(
        error(&mut s, "create index t_i_idx on t (j)"),
        "relation \"t_i_idx\" already exists"
    );
    assert_eq!(
        error(&mut s, "create index x on t (nosuch)"),
        "column \"nosuch\" does not exist"
    );
    assert_eq!(
        error(&mut s, "create index x on nosuch (i)"),
        "relation \"nosuch\" does not exist"
    );
    assert_eq!(
        error(&mut s, "create table t_j_idx (a int)"),
        "relation \"t_j_idx\" already exists"
    );

    // The planner picks the index for equality and closed ranges.
    assert_eq!(
        explain(&mut s, "select w from t where i = 5"),
        "Index Scan using t_i_idx on t\n  Index Cond: (i = 5)"
    );
    assert_eq!(
        explain(&mut s, "select w from t where j between 10 and 20 and w <> 'x'"),
        "Index Scan using t_j_idx on t\n  Index Cond: ((j >= 10) AND (j <= 20))\n  Filter: (w <> 'x'::text)"
    );
    run(&mut s, "set enable_indexscan = off");
    assert!(explain(&mut s, "select w from t where i = 5").starts_with("Seq Scan on t"));
    run(&mut s, "reset enable_indexscan");
    run(&mut s, "set enable_seqscan = off");
    assert!(explain(&mut s, "select w from t where i > 5").starts_with("Index Scan"));
    run(&mut s, "reset enable_seqscan");

    assert_eq!(one(&mut s, "select w from t where i = 77"), "row 77");
    assert_eq!(
        one(&mut s, "select count(*) from t where i between 100 and 199"),
        "100"
    );
    assert_eq!(one(&mut s, "select count(*) from t where 10 >= i"), "10");

    // INSERT maintains the indexes; DELETE leaves dead tuples that index
    // scans never return.
    run(
        &mut s,
        "insert into t values (77, 154, 'again'), (null, null, 'null')",
    );
    assert_eq!(one(&mut s, "select count(*) from t where i = 77"), "2");
    assert_eq!(one(&mut s, "delete from t where i % 2 = 0"), "DELETE 10000");
    assert_eq!(
        one(&mut s, "select count(*) from t where i between 1 and 100"),
        "51"
    );
    assert_eq!(
        one(&mut s, "select count(*) from t where j between 1 and 200"),
        "51"
    );

    let pages_before = {
        let db = s.database();
        let oid = db.catalog().table("t").unwrap().oid;
        db.nblocks(oid).unwrap()
    };
    let out = run(&mut s, "vacuum verbose t");
    assert_eq!(out[0], "INFO:  vacuuming \"tusk.public.t\"");
    let report = &out[1];
    assert!(
        report.starts_with("INFO:  finished vacuuming \"tusk.public.t\": index scans: 1\n"),
        "{report}"
    );
    assert!(
        report.contains("tuples: 10000 removed, 10002 remain, 0 are dead but not yet removable"),
        "{report}"
    );
    assert!(
        report.contains("had 10000 dead item identifiers removed"),
        "{report}"
    );
    assert!(
        report.contains("tusk: dead item storage: TidStore"),
        "{report}"
    );
    assert_eq!(out[2], "VACUUM");

    // After VACUUM: same answers, through the index and without it.
    assert_eq!(one(&mut s, "select count(*) from t"), "10002");
    assert_eq!(
        one(&mut s, "select count(*) from t where i between 1 and 100"),
        "51"
    );
    assert_eq!(one(&mut s, "select count(*) from t where i = 77"), "2");
    assert_eq!(one(&mut s, "select count(*) from t where i = 78"), "0");
    // A second VACUUM finds nothing to do.
    let out = run(&mut s, "vacuum verbose t");
    assert!(out[1].contains("index scans: 0"), "{}", out[1]);
    assert!(
        out[1].contains("tuples: 0 removed, 10002 remain"),
        "{}",
        out[1]
    );

    // Re-inserting as many rows as were deleted, none longer than the
    // deleted ones on average, fills the freed space: the heap does not grow.
    run(
        &mut s,
        "insert into t select g + 30000, g * 2 + 60000, 'new ' || g from generate_series(1, 10000) g",
    );
    let pages_after = {
        let db = s.database();
        let oid = db.catalog().table("t").unwrap().oid;
        db.nblocks(oid).unwrap()
    };
    assert_eq!(pages_after, pages_before);
    assert_eq!(one(&mut s, "select count(*) from t"), "20002");
    assert_eq!(one(&mut s, "select w from t where i = 35000"), "new 5000");
    assert_eq!(
        one(&mut s, "select count(*) from t where j > 60000"),
        "10000"
    );

    // VACUUM without a name does every table; DROP INDEX, DROP TABLE.
    run(&mut s, "create table u (a int)");
    assert_eq!(run(&mut s, "vacuum"), vec!["VACUUM"]);
    assert_eq!(one(&mut s, "drop index t_j_idx"), "DROP INDEX");
    assert_eq!(
        error(&mut s, "drop index t_j_idx"),
        "index \"t_j_idx\" does not exist"
    );
    assert_eq!(error(&mut s, "drop index u"), "\"u\" is not an index");
    assert_eq!(one(&mut s, "drop table t"), "DROP TABLE");
    assert!(s.database().catalog().index("t_i_idx").is_none());
    assert_eq!(error(&mut s, "vacuum t"), "relation \"t\" does not exist");
}

#[test]
fn indexes_survive_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut s = session(dir.path());
        run(&mut s, "create table t (k bigint)");
        run(
            &mut s,
            "insert into t select g from generate_series(1, 5000) g",
        );
        run(&mut s, "create index t_k on t (k)");
        run(
            &mut s,
            "insert into t select g from generate_series(5001, 9000) g",
        );
        run(&mut s, "delete from t where k <= 1000");
        run(&mut s, "vacuum t");
    }
    let mut s = session(dir.path());
    assert!(explain(&mut s, "select k from t where k = 3").starts_with("Index Scan using t_k"));
    assert_eq!(
        one(
            &mut s,
            "select count(*) from t where k between 900 and 1100"
        ),
        "100"
    );
    assert_eq!(
        one(
            &mut s,
            "select count(*) from t where k between 8000 and 9999"
        ),
        "1001"
    );
}

/// With a dead-TID budget smaller than the dead TIDs, VACUUM cleans the
/// indexes several times (PostgreSQL's multiple index scans); the result is
/// the same. `maintenance_work_mem` cannot go below 1MB, so the storage
/// routine is called with a tiny budget directly.
#[test]
fn small_budget_takes_several_index_scans() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table t (i int)");
    run(
        &mut s,
        "insert into t select g from generate_series(1, 30000) g",
    );
    run(&mut s, "create index t_i on t (i)");
    run(&mut s, "delete from t where i % 3 <> 0");
    let db = s.database().clone();
    let (table, indexes) = {
        let cat = db.catalog();
        let t = cat.table("t").unwrap().clone();
        let i: Vec<_> = cat.indexes_of(t.oid).cloned().collect();
        (t, i)
    };
    let txn = db.txn.begin_write().unwrap();
    let report =
        tusk_storage::vacuum::vacuum_table(&db, &table, &indexes, txn.xid(), 2048).unwrap();
    db.commit(txn).unwrap();
    assert!(report.index_scans >= 3, "{report:?}");
    assert_eq!(report.tuples_removed, 20000);
    assert_eq!(report.indexes[0].1.removed, 20000);
    assert_eq!(report.indexes[0].1.remaining, 10000);
    assert_eq!(
        one(&mut s, "select count(*) from t where i between 1 and 300"),
        "100"
    );
    assert_eq!(one(&mut s, "select count(*) from t"), "10000");
}

/// A join whose small outer side probes an index of the inner table runs
/// as an index nested loop (chosen by cost), shown as PostgreSQL shows it;
/// a big outer side still takes a hash join.
#[test]
fn index_nested_loop_plans() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(dir.path());
    run(&mut s, "create table big (k int, k2 int, v text)");
    run(
        &mut s,
        "insert into big select g % 2000, g % 7, 'v' || g from generate_series(1, 40000) g",
    );
    run(&mut s, "create index big_k_k2 on big (k, k2)");
    run(&mut s, "create table small (id int, tag text)");
    run(
        &mut s,
        "insert into small values (1, 'a'), (2, 'b'), (3, 'c'), (null, 'd')",
    );
    run(&mut s, "analyze big");
    run(&mut s, "analyze small");
    assert_eq!(
        explain(&mut s, "select s.tag, b.v from small s join big b on b.k = s.id"),
        "Nested Loop\n  ->  Seq Scan on small s\n  ->  Index Scan using big_k_k2 on big b\n        Index Cond: (k = s.id)"
    );
    assert_eq!(
        explain(
            &mut s,
            "select s.tag, b.v from small s left join big b on b.k = s.id and b.k2 = s.id + 1 where s.tag <> 'x'"
        ),
        "Nested Loop Left Join\n  ->  Seq Scan on small s\n        Filter: (tag <> 'x'::text)\n  ->  Index Scan using big_k_k2 on big b\n        Index Cond: ((k = s.id) AND (k2 = (s.id + 1)))"
    );
    assert_eq!(
        explain(
            &mut s,
            "select s.tag from small s where exists (select 1 from big b where b.k = s.id and b.v like 'v1%')"
        ),
        "Nested Loop Semi Join\n  ->  Seq Scan on small s\n  ->  Index Scan using big_k_k2 on big b\n        Index Cond: (k = s.id)\n        Filter: (v ~~ 'v1%'::text)"
    );
    assert!(explain(
        &mut s,
        "select s.tag from small s where not exists (select 1 from big b where b.k = s.id)"
    )
    .starts_with("Nested Loop Anti Join"));
    // A semi join whose subquery side is unique on the keys (a primary
    // key) runs as an inner join from that side.
    run(&mut s, "create table keyed (id int primary key, kind text)");
    run(
        &mut s,
        "insert into keyed select g, 'k' || g from generate_series(1, 3000) g",
    );
    run(&mut s, "analyze keyed");
    let semi = explain(
        &mut s,
        "select count(*) from big b where b.k in (select id from keyed where id < 4)",
    );
    assert!(
        semi.contains("  ->  Nested Loop\n        ->  Index Scan using keyed_pkey on keyed")
            && semi.contains("->  Index Scan using big_k_k2 on big b"),
        "{semi}"
    );
    assert_eq!(
        run(
            &mut s,
            "select count(*) from big b where b.k in (select id from keyed where id < 4)"
        ),
        ["60"]
    );
    // Every row of a big outer side would probe: one pass and a hash table.
    assert!(explain(
        &mut s,
        "select count(*) from big a join big b on a.k = b.k and a.k2 = b.k2"
    )
    .contains("Hash Join"));
    // The probes' rows are right, and EXPLAIN ANALYZE counts one loop per
    // outer row on the index scan.
    assert_eq!(
        run(
            &mut s,
            "select s.tag, count(*) from small s join big b on b.k = s.id group by s.tag order by 1"
        ),
        ["a|20", "b|20", "c|20"]
    );
    let analyzed = run(
        &mut s,
        "explain (analyze, costs off, timing off) select s.tag, b.v from small s join big b on b.k = s.id",
    )
    .join("\n");
    assert!(
        analyzed.contains("Index Scan using big_k_k2 on big b (actual rows=15 loops=4)"),
        "{analyzed}"
    );
}
