//! Isolation tests in the style of PostgreSQL's isolation tester: scripted
//! interleavings of two or three sessions on one database (see
//! `isolation/tester.rs`), each step's result checked against the
//! transcript PostgreSQL 15 gives for the same schedule.

#[path = "isolation/tester.rs"]
mod tester;

use tester::Tester;

const ACCOUNTS: &str = "create table acct (id int not null, bal int);
    insert into acct values (1, 100), (2, 200)";

/// The same two rows in a columnar table, inside a row group (a load of
/// fewer rows would leave them in the row-wise delta, a heap): the
/// scenarios below run on both, and PostgreSQL's transcripts hold for both.
const COLUMNAR_ACCOUNTS: &str = "create table acct (id int not null, bal int) using columnar;
    insert into acct select g, g * 100 from generate_series(1, 10240) g;
    delete from acct where id > 2";

#[test]
fn lost_update_prevented_under_read_committed() {
    lost_update_prevented_under_read_committed_on(ACCOUNTS);
}

#[test]
fn columnar_lost_update_prevented_under_read_committed() {
    lost_update_prevented_under_read_committed_on(COLUMNAR_ACCOUNTS);
}

fn lost_update_prevented_under_read_committed_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = bal + 10 where id = 1");
    t.step("s2", "begin");
    // Waits for s1, then adds to the committed 110 (not to the 100 its
    // snapshot saw).
    t.step("s2", "update acct set bal = bal + 20 where id = 1");
    t.step("s1", "commit");
    t.step("s2", "select bal from acct where id = 1");
    t.step("s2", "commit");
    t.step("s1", "select bal from acct where id = 1");
    t.expect(
        "step s1: begin
         step s1: update acct set bal = bal + 10 where id = 1
         step s2: begin
         step s2: update acct set bal = bal + 20 where id = 1 <waiting ...>
         step s1: commit
         step s2: <... completed>
         step s2: select bal from acct where id = 1
         bal
         130
         step s2: commit
         step s1: select bal from acct where id = 1
         bal
         130",
    );
}

#[test]
fn read_committed_rechecks_the_where_clause() {
    read_committed_rechecks_the_where_clause_on(ACCOUNTS);
}

#[test]
fn columnar_read_committed_rechecks_the_where_clause() {
    read_committed_rechecks_the_where_clause_on(COLUMNAR_ACCOUNTS);
}

fn read_committed_rechecks_the_where_clause_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = bal + 10 where id = 1");
    // The row no longer qualifies once s1 committed: nothing updated.
    t.step("s2", "update acct set bal = 0 where bal = 100 returning id");
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = 150 where id = 2");
    // Qualifies again on the new version, and is computed from it.
    t.step(
        "s2",
        "update acct set bal = bal * 2 where bal > 120 returning id, bal",
    );
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "delete from acct where id = 1");
    // The row is gone: nothing to delete, no error.
    t.step("s2", "delete from acct where id = 1 returning id");
    t.step("s1", "commit");
    t.step("s2", "select * from acct order by id");
    t.expect(
        "step s1: begin
         step s1: update acct set bal = bal + 10 where id = 1
         step s2: update acct set bal = 0 where bal = 100 returning id <waiting ...>
         step s1: commit
         step s2: <... completed>
         id
         step s1: begin
         step s1: update acct set bal = 150 where id = 2
         step s2: update acct set bal = bal * 2 where bal > 120 returning id, bal <waiting ...>
         step s1: commit
         step s2: <... completed>
         id|bal
         2|300
         step s1: begin
         step s1: delete from acct where id = 1
         step s2: delete from acct where id = 1 returning id <waiting ...>
         step s1: commit
         step s2: <... completed>
         id
         step s2: select * from acct order by id
         id|bal
         2|300",
    );
}

#[test]
fn repeatable_read_serialization_failures() {
    repeatable_read_serialization_failures_on(ACCOUNTS);
}

#[test]
fn columnar_repeatable_read_serialization_failures() {
    repeatable_read_serialization_failures_on(COLUMNAR_ACCOUNTS);
}

fn repeatable_read_serialization_failures_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2"]);
    t.step("s2", "begin isolation level repeatable read");
    t.step("s2", "select bal from acct where id = 1");
    t.step("s1", "update acct set bal = 1 where id = 1");
    // s1 committed after s2's snapshot: updating that row fails.
    t.step("s2", "update acct set bal = bal + 1 where id = 1");
    t.step("s2", "rollback");
    t.step("s1", "begin");
    t.step("s1", "delete from acct where id = 2");
    t.step("s2", "begin isolation level repeatable read");
    t.step("s2", "select count(*) from acct");
    t.step("s2", "update acct set bal = 0 where id = 2");
    t.step("s1", "commit");
    t.step("s2", "rollback");
    t.expect(
        "step s2: begin isolation level repeatable read
         step s2: select bal from acct where id = 1
         bal
         100
         step s1: update acct set bal = 1 where id = 1
         step s2: update acct set bal = bal + 1 where id = 1
         ERROR:  could not serialize access due to concurrent update (40001)
         step s2: rollback
         step s1: begin
         step s1: delete from acct where id = 2
         step s2: begin isolation level repeatable read
         step s2: select count(*) from acct
         count
         2
         step s2: update acct set bal = 0 where id = 2 <waiting ...>
         step s1: commit
         step s2: <... completed>
         ERROR:  could not serialize access due to concurrent delete (40001)
         step s2: rollback",
    );
}

#[test]
fn deadlock_detected() {
    deadlock_detected_on(ACCOUNTS);
}

#[test]
fn columnar_deadlock_detected() {
    deadlock_detected_on(COLUMNAR_ACCOUNTS);
}

fn deadlock_detected_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2"]);
    // s2 checks for a deadlock first, so it is the victim; its failed
    // transaction lets go of its locks at once (before its ROLLBACK).
    t.step("s1", "set deadlock_timeout = '100s'");
    t.step("s2", "set deadlock_timeout = '10ms'");
    t.step("s1", "begin");
    t.step("s2", "begin");
    t.step("s1", "update acct set bal = bal + 1 where id = 1");
    t.step("s2", "update acct set bal = bal + 1 where id = 2");
    t.step("s1", "update acct set bal = bal + 1 where id = 2");
    t.step_to_end("s2", "update acct set bal = bal + 1 where id = 1");
    let detail = t.last_error.as_ref().and_then(|e| e.detail.clone());
    t.step("s2", "rollback");
    t.step("s1", "commit");
    t.step("s1", "select * from acct order by id");
    t.expect(
        "step s1: set deadlock_timeout = '100s'
         step s2: set deadlock_timeout = '10ms'
         step s1: begin
         step s2: begin
         step s1: update acct set bal = bal + 1 where id = 1
         step s2: update acct set bal = bal + 1 where id = 2
         step s1: update acct set bal = bal + 1 where id = 2 <waiting ...>
         step s2: update acct set bal = bal + 1 where id = 1
         ERROR:  deadlock detected (40P01)
         step s1: <... completed>
         step s2: rollback
         step s1: commit
         step s1: select * from acct order by id
         id|bal
         1|101
         2|201",
    );
    // PostgreSQL's DETAIL: one line per edge of the cycle, the victim first.
    let detail = detail.expect("deadlock DETAIL");
    let lines: Vec<&str> = detail.lines().collect();
    assert_eq!(lines.len(), 2, "{detail}");
    for l in &lines {
        assert!(
            l.starts_with("Process ")
                && l.contains(" waits for ShareLock on transaction ")
                && l.contains("; blocked by process ")
                && l.ends_with('.'),
            "{detail}"
        );
    }
}

#[test]
fn skip_locked_queue_and_nowait() {
    skip_locked_queue_and_nowait_on(
        "create table queue (id int, job text);
        insert into queue values (1, 'a'), (2, 'b'), (3, 'c')",
    );
}

#[test]
fn columnar_skip_locked_queue_and_nowait() {
    skip_locked_queue_and_nowait_on(
        "create table queue (id int, job text) using columnar;
        insert into queue select g, chr(96 + g) from generate_series(1, 10240) g;
        delete from queue where id > 3",
    );
}

fn skip_locked_queue_and_nowait_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2", "s3"]);
    let take = "select id, job from queue order by id for update skip locked limit 1";
    for s in ["s1", "s2", "s3"] {
        t.step(s, "begin");
        t.step(s, take);
    }
    t.step("s1", "select id from queue where id = 2 for update nowait");
    t.step("s1", "rollback");
    // s1's row is free again; s2's and s3's are still taken.
    t.step("s1", "begin");
    t.step("s1", take);
    t.step("s2", "delete from queue where id = 2");
    t.step("s2", "commit");
    // FOR SHARE is compatible with another FOR SHARE, not with FOR UPDATE.
    t.step("s2", "begin");
    t.step("s2", "select id from queue where id = 1 for share nowait");
    t.step("s2", "rollback");
    t.step("s1", "commit");
    t.step("s3", "commit");
    t.step("s1", "select id from queue order by id");
    t.expect(
        "step s1: begin
         step s1: select id, job from queue order by id for update skip locked limit 1
         id|job
         1|a
         step s2: begin
         step s2: select id, job from queue order by id for update skip locked limit 1
         id|job
         2|b
         step s3: begin
         step s3: select id, job from queue order by id for update skip locked limit 1
         id|job
         3|c
         step s1: select id from queue where id = 2 for update nowait
         ERROR:  could not obtain lock on row in relation \"queue\" (55P03)
         step s1: rollback
         step s1: begin
         step s1: select id, job from queue order by id for update skip locked limit 1
         id|job
         1|a
         step s2: delete from queue where id = 2
         step s2: commit
         step s2: begin
         step s2: select id from queue where id = 1 for share nowait
         ERROR:  could not obtain lock on row in relation \"queue\" (55P03)
         step s2: rollback
         step s1: commit
         step s3: commit
         step s1: select id from queue order by id
         id
         1
         3",
    );
}

#[test]
fn for_update_waits_and_returns_the_new_version() {
    for_update_waits_and_returns_the_new_version_on(ACCOUNTS);
}

#[test]
fn columnar_for_update_waits_and_returns_the_new_version() {
    for_update_waits_and_returns_the_new_version_on(COLUMNAR_ACCOUNTS);
}

fn for_update_waits_and_returns_the_new_version_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = bal + 5 where id = 1");
    t.step("s2", "begin");
    t.step(
        "s2",
        "select * from acct where bal >= 100 order by id for update",
    );
    t.step("s1", "commit");
    t.step("s2", "commit");
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = 50 where id = 1");
    t.step(
        "s2",
        "select * from acct where bal >= 100 order by id for share",
    );
    t.step("s1", "commit");
    t.expect(
        "step s1: begin
         step s1: update acct set bal = bal + 5 where id = 1
         step s2: begin
         step s2: select * from acct where bal >= 100 order by id for update <waiting ...>
         step s1: commit
         step s2: <... completed>
         id|bal
         1|105
         2|200
         step s2: commit
         step s1: begin
         step s1: update acct set bal = 50 where id = 1
         step s2: select * from acct where bal >= 100 order by id for share <waiting ...>
         step s1: commit
         step s2: <... completed>
         id|bal
         2|200",
    );
}

#[test]
fn snapshots_and_later_commits() {
    snapshots_and_later_commits_on(ACCOUNTS);
}

#[test]
fn columnar_snapshots_and_later_commits() {
    snapshots_and_later_commits_on(COLUMNAR_ACCOUNTS);
}

fn snapshots_and_later_commits_on(setup: &str) {
    let mut t = Tester::new(setup, &["s1", "s2"]);
    t.step("s1", "begin isolation level repeatable read");
    t.step("s1", "select count(*) from acct");
    t.step("s2", "insert into acct values (3, 300)");
    // The snapshot was taken before s2 committed.
    t.step("s1", "select count(*) from acct");
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "select count(*) from acct");
    t.step("s2", "delete from acct where id = 3");
    // READ COMMITTED: each statement sees what was committed before it.
    t.step("s1", "select count(*) from acct");
    t.step("s1", "commit");
    t.expect(
        "step s1: begin isolation level repeatable read
         step s1: select count(*) from acct
         count
         2
         step s2: insert into acct values (3, 300)
         step s1: select count(*) from acct
         count
         2
         step s1: commit
         step s1: begin
         step s1: select count(*) from acct
         count
         3
         step s2: delete from acct where id = 3
         step s1: select count(*) from acct
         count
         2
         step s1: commit",
    );
}

#[test]
fn vacuum_keeps_rows_an_open_snapshot_can_see() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin isolation level repeatable read");
    t.step("s1", "select sum(bal) from acct");
    t.step("s2", "delete from acct");
    t.step("s2", "vacuum verbose acct");
    t.step("s1", "select sum(bal) from acct");
    t.step("s1", "commit");
    t.step("s2", "vacuum verbose acct");
    t.step("s1", "select count(*) from acct");
    t.expect(
        "step s1: begin isolation level repeatable read
         step s1: select sum(bal) from acct
         sum
         300
         step s2: delete from acct
         step s2: vacuum verbose acct
         INFO:  tuples: 0 removed, 2 remain, 2 are dead but not yet removable
         step s1: select sum(bal) from acct
         sum
         300
         step s1: commit
         step s2: vacuum verbose acct
         INFO:  tuples: 2 removed, 0 remain, 0 are dead but not yet removable
         step s1: select count(*) from acct
         count
         0",
    );
}

#[test]
fn rollback_to_savepoint_undoes_rows_and_ddl() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "insert into acct values (3, 300)");
    t.step("s1", "savepoint a");
    t.step("s1", "create table extra (x int)");
    t.step("s1", "insert into extra values (1)");
    t.step("s1", "update acct set bal = 0");
    // Uncommitted DDL is invisible to others.
    t.step("s2", "select * from extra");
    t.step("s1", "select count(*) from extra");
    t.step("s1", "rollback to savepoint a");
    t.step("s1", "select * from extra");
    t.step("s1", "rollback to a");
    t.step("s1", "select * from acct order by id");
    t.step("s1", "commit");
    t.step("s2", "select * from acct order by id");
    t.step("s2", "create table extra (y int)");
    t.expect(
        "step s1: begin
         step s1: insert into acct values (3, 300)
         step s1: savepoint a
         step s1: create table extra (x int)
         step s1: insert into extra values (1)
         step s1: update acct set bal = 0
         step s2: select * from extra
         ERROR:  relation \"extra\" does not exist (42P01)
         step s1: select count(*) from extra
         count
         1
         step s1: rollback to savepoint a
         step s1: select * from extra
         ERROR:  relation \"extra\" does not exist (42P01)
         step s1: rollback to a
         step s1: select * from acct order by id
         id|bal
         1|100
         2|200
         3|300
         step s1: commit
         step s2: select * from acct order by id
         id|bal
         1|100
         2|200
         3|300
         step s2: create table extra (y int)",
    );
}

#[test]
fn a_session_that_ends_in_a_block_rolls_back() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "insert into acct values (3, 300)");
    t.step("s1", "update acct set bal = 0 where id = 1");
    t.step("s2", "update acct set bal = bal + 1 where id = 1");
    t.disconnect("s1");
    t.step("s2", "select * from acct order by id");
    t.expect(
        "step s1: begin
         step s1: insert into acct values (3, 300)
         step s1: update acct set bal = 0 where id = 1
         step s2: update acct set bal = bal + 1 where id = 1 <waiting ...>
         disconnect s1
         step s2: <... completed>
         step s2: select * from acct order by id
         id|bal
         1|101
         2|200",
    );
}

#[test]
fn table_locks_timeouts_and_concurrent_ddl() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "lock table acct in exclusive mode");
    // Reads go on; writes wait.
    t.step("s2", "select count(*) from acct");
    t.step("s2", "insert into acct values (3, 300)");
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "lock acct");
    t.step("s2", "begin");
    t.step("s2", "lock table acct in access share mode nowait");
    t.step("s2", "rollback");
    t.step("s2", "set lock_timeout = '10ms'");
    t.step_to_end("s2", "select count(*) from acct");
    t.step("s2", "reset lock_timeout");
    t.step("s1", "commit");
    // A DROP waits for readers; a reader that waited for a DROP finds the
    // table gone.
    t.step("s1", "begin");
    t.step("s1", "select count(*) from acct");
    t.step("s2", "drop table acct");
    t.step("s1", "commit");
    t.step("s1", "create table acct (id int)");
    t.step("s1", "begin");
    t.step("s1", "drop table acct");
    t.step("s2", "select count(*) from acct");
    t.step("s1", "commit");
    t.expect(
        "step s1: begin
         step s1: lock table acct in exclusive mode
         step s2: select count(*) from acct
         count
         2
         step s2: insert into acct values (3, 300) <waiting ...>
         step s1: commit
         step s2: <... completed>
         step s1: begin
         step s1: lock acct
         step s2: begin
         step s2: lock table acct in access share mode nowait
         ERROR:  could not obtain lock on relation \"acct\" (55P03)
         step s2: rollback
         step s2: set lock_timeout = '10ms'
         step s2: select count(*) from acct
         ERROR:  canceling statement due to lock timeout (55P03)
         step s2: reset lock_timeout
         step s1: commit
         step s1: begin
         step s1: select count(*) from acct
         count
         3
         step s2: drop table acct <waiting ...>
         step s1: commit
         step s2: <... completed>
         step s1: create table acct (id int)
         step s1: begin
         step s1: drop table acct
         step s2: select count(*) from acct <waiting ...>
         step s1: commit
         step s2: <... completed>
         ERROR:  relation \"acct\" does not exist (42P01)",
    );
}

#[test]
fn rechecks_with_joins_and_subqueries() {
    let setup = "create table acct (id int not null, bal int);
        insert into acct values (1, 100), (2, 200);
        create table adj (id int, delta int);
        insert into adj values (1, 5), (2, 7)";
    let mut t = Tester::new(setup, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = bal + 1000 where id = 1");
    // The joined row of acct 1 fails the re-check; acct 2 was not waited for.
    t.step(
        "s2",
        "update acct set bal = bal + adj.delta from adj \
         where acct.id = adj.id and acct.bal < 1000 returning acct.id, acct.bal",
    );
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = bal + 1000 where id = 1");
    t.step(
        "s2",
        "update acct set bal = bal + adj.delta from adj \
         where acct.id = adj.id and adj.id = 1 returning acct.id, acct.bal",
    );
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = 0 where id = 2");
    t.step(
        "s2",
        "delete from acct where id in (select id from adj where delta > 6) \
         and bal > 100 returning id",
    );
    t.step("s1", "commit");
    t.step("s2", "select * from acct order by id");
    t.expect(
        "step s1: begin
         step s1: update acct set bal = bal + 1000 where id = 1
         step s2: update acct set bal = bal + adj.delta from adj where acct.id = adj.id and acct.bal < 1000 returning acct.id, acct.bal <waiting ...>
         step s1: commit
         step s2: <... completed>
         id|bal
         2|207
         step s1: begin
         step s1: update acct set bal = bal + 1000 where id = 1
         step s2: update acct set bal = bal + adj.delta from adj where acct.id = adj.id and adj.id = 1 returning acct.id, acct.bal <waiting ...>
         step s1: commit
         step s2: <... completed>
         id|bal
         1|2105
         step s1: begin
         step s1: update acct set bal = 0 where id = 2
         step s2: delete from acct where id in (select id from adj where delta > 6) and bal > 100 returning id <waiting ...>
         step s1: commit
         step s2: <... completed>
         id
         step s2: select * from acct order by id
         id|bal
         1|2105
         2|0",
    );
}

#[test]
fn unique_insert_races_and_upserts() {
    let mut t = Tester::new(
        "create table kv (k int primary key, n int)",
        &["s1", "s2", "s3"],
    );
    t.step("s1", "begin");
    t.step("s1", "insert into kv values (1, 0)");
    // Waits for the other inserter of the key, then finds it committed.
    t.step("s2", "insert into kv values (1, 5)");
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step(
        "s1",
        "insert into kv values (2, 1) on conflict (k) do update set n = kv.n + 1",
    );
    t.step(
        "s2",
        "insert into kv values (2, 1) on conflict (k) do update set n = kv.n + 1 returning n",
    );
    t.step("s1", "commit");
    t.step("s3", "begin");
    t.step("s3", "insert into kv values (3, 0)");
    // The other inserter rolls back: no conflict after all.
    t.step(
        "s2",
        "insert into kv values (3, 1) on conflict do nothing returning k",
    );
    t.step("s3", "rollback");
    t.step("s2", "select * from kv order by k");
    t.expect(
        "step s1: begin
         step s1: insert into kv values (1, 0)
         step s2: insert into kv values (1, 5) <waiting ...>
         step s1: commit
         step s2: <... completed>
         ERROR:  duplicate key value violates unique constraint \"kv_pkey\" (23505)
         step s1: begin
         step s1: insert into kv values (2, 1) on conflict (k) do update set n = kv.n + 1
         step s2: insert into kv values (2, 1) on conflict (k) do update set n = kv.n + 1 returning n <waiting ...>
         step s1: commit
         step s2: <... completed>
         n
         2
         step s3: begin
         step s3: insert into kv values (3, 0)
         step s2: insert into kv values (3, 1) on conflict do nothing returning k <waiting ...>
         step s3: rollback
         step s2: <... completed>
         k
         3
         step s2: select * from kv order by k
         k|n
         1|0
         2|2
         3|1",
    );
}

#[test]
fn statement_timeout_cancels_a_lock_wait() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "update acct set bal = 0 where id = 1");
    t.step("s2", "set statement_timeout = '20ms'");
    t.step_to_end("s2", "update acct set bal = 1 where id = 1");
    t.step("s2", "begin");
    t.step_to_end("s2", "lock table acct in exclusive mode");
    t.step("s2", "rollback");
    t.step("s2", "reset statement_timeout");
    t.step("s1", "rollback");
    t.expect(
        "step s1: begin
         step s1: update acct set bal = 0 where id = 1
         step s2: set statement_timeout = '20ms'
         step s2: update acct set bal = 1 where id = 1
         ERROR:  canceling statement due to statement timeout (57014)
         step s2: begin
         step s2: lock table acct in exclusive mode
         ERROR:  canceling statement due to statement timeout (57014)
         step s2: rollback
         step s2: reset statement_timeout
         step s1: rollback",
    );
}

#[test]
fn truncate_is_transactional_and_waits_for_readers() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "truncate acct");
    // AccessExclusiveLock: the reader waits, and sees the rows again once
    // the TRUNCATE is rolled back.
    t.step("s2", "select count(*) from acct");
    t.step("s1", "rollback");
    t.step("s1", "begin");
    t.step("s1", "truncate acct");
    t.step("s1", "insert into acct values (3, 300)");
    // The writer waits, then finds the new, truncated table.
    t.step("s2", "update acct set bal = 0 where id = 1 returning id");
    t.step("s1", "commit");
    t.step("s2", "select * from acct order by id");
    // A reader's lock holds TRUNCATE back until the reader's transaction ends.
    t.step("s2", "begin isolation level repeatable read");
    t.step("s2", "select count(*) from acct");
    t.step("s1", "truncate acct");
    t.step("s2", "commit");
    t.step("s2", "select count(*) from acct");
    t.expect(
        "step s1: begin
         step s1: truncate acct
         step s2: select count(*) from acct <waiting ...>
         step s1: rollback
         step s2: <... completed>
         count
         2
         step s1: begin
         step s1: truncate acct
         step s1: insert into acct values (3, 300)
         step s2: update acct set bal = 0 where id = 1 returning id <waiting ...>
         step s1: commit
         step s2: <... completed>
         id
         step s2: select * from acct order by id
         id|bal
         3|300
         step s2: begin isolation level repeatable read
         step s2: select count(*) from acct
         count
         1
         step s1: truncate acct <waiting ...>
         step s2: commit
         step s1: <... completed>
         step s2: select count(*) from acct
         count
         0",
    );
}

/// A READ COMMITTED update of a toasted row that waits for a concurrent
/// update and is retried on the new version: the retry's long values are
/// written afresh (the first attempt's chunks are deleted, see
/// tusk-exec's `dml::update`), and the row reads back whole, also after
/// VACUUM.
#[test]
fn retried_update_of_toasted_values() {
    let mut t = Tester::new(
        "create table big (id int, a text);
         insert into big values (1, repeat('abcdefgh', 100000))",
        &["s1", "s2"],
    );
    t.step("s1", "begin");
    t.step(
        "s1",
        "update big set a = a || repeat('1', 50000) where id = 1",
    );
    t.step("s2", "begin");
    t.step(
        "s2",
        "update big set a = a || repeat('2', 60000) where id = 1",
    );
    t.step("s1", "commit");
    t.step("s2", "commit");
    t.step("s1", "vacuum big");
    t.step(
        "s1",
        "select length(a), a = repeat('abcdefgh', 100000) || repeat('1', 50000) || repeat('2', 60000) from big",
    );
    t.expect(
        "step s1: begin
         step s1: update big set a = a || repeat('1', 50000) where id = 1
         step s2: begin
         step s2: update big set a = a || repeat('2', 60000) where id = 1 <waiting ...>
         step s1: commit
         step s2: <... completed>
         step s2: commit
         step s1: vacuum big
         step s1: select length(a), a = repeat('abcdefgh', 100000) || repeat('1', 50000) || repeat('2', 60000) from big
         length|?column?
         910000|t",
    );
}

/// An index nested loop's probes see what the snapshot sees: under
/// REPEATABLE READ, rows another session updates (HOT: no key changes),
/// deletes and inserts after the snapshot do not change the join, and do
/// after the transaction. (With hash joins off the joins run as index
/// nested loops.)
#[test]
fn index_nested_loop_probes_see_the_snapshot() {
    let mut t = Tester::new(
        "create table o (id int);
         insert into o values (1), (2), (3), (null);
         create table i (k int, v int);
         insert into i values (1, 10), (1, 11), (2, 20), (3, 30), (null, 40);
         create index i_k on i (k)",
        &["s1", "s2"],
    );
    t.step("s1", "set enable_hashjoin = off");
    t.step("s1", "begin isolation level repeatable read");
    let join = "select o.id, i.v from o join i on i.k = o.id order by 1, 2";
    let semi = "select o.id from o where exists (select 1 from i where i.k = o.id and i.v > 100) order by 1";
    t.step("s1", join);
    t.step("s2", "update i set v = v + 100 where k = 1");
    t.step("s2", "delete from i where k = 2");
    t.step("s2", "insert into i values (3, 999)");
    t.step("s1", join);
    t.step("s1", semi);
    t.step("s1", "commit");
    t.step("s1", join);
    t.step("s1", semi);
    t.expect(&format!(
        "step s1: set enable_hashjoin = off
         step s1: begin isolation level repeatable read
         step s1: {join}
         id|v
         1|10
         1|11
         2|20
         3|30
         step s2: update i set v = v + 100 where k = 1
         step s2: delete from i where k = 2
         step s2: insert into i values (3, 999)
         step s1: {join}
         id|v
         1|10
         1|11
         2|20
         3|30
         step s1: {semi}
         id
         step s1: commit
         step s1: {join}
         id|v
         1|110
         1|111
         3|30
         3|999
         step s1: {semi}
         id
         1
         3"
    ));
}
