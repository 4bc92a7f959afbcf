//! ALTER TABLE is transactional: rolled back with its block, invisible to
//! other sessions until it commits (they wait on its AccessExclusiveLock,
//! then see the committed shape), as PostgreSQL 15's isolation tester
//! shows the same schedules.

#[path = "isolation/tester.rs"]
#[allow(dead_code)]
mod tester;

use tester::Tester;

const ACCOUNTS: &str = "create table acct (id int not null, bal int);
    insert into acct values (1, 100), (2, 200)";

#[test]
fn rollback_undoes_every_action() {
    let mut t = Tester::new(ACCOUNTS, &["s1"]);
    t.step("s1", "begin");
    t.step(
        "s1",
        "alter table acct add column note text default 'x', add primary key (id), add check (bal > 0)",
    );
    t.step("s1", "alter table acct rename to accounts");
    t.step("s1", "select * from accounts order by id");
    t.step("s1", "rollback");
    t.step("s1", "select * from acct order by id");
    // The key and the check went with the block.
    t.step("s1", "insert into acct values (1, -5)");
    t.step("s1", "select count(*) from acct");
    // A failed action inside a block fails the block; ROLLBACK TO undoes
    // only what came after the savepoint.
    t.step("s1", "begin");
    t.step("s1", "alter table acct drop column bal");
    t.step("s1", "savepoint a");
    t.step("s1", "alter table acct add primary key (id)");
    t.step("s1", "rollback to a");
    t.step("s1", "select * from acct order by id");
    t.step("s1", "commit");
    t.step("s1", "select * from acct order by id");
    t.expect(
        "step s1: begin
         step s1: alter table acct add column note text default 'x', add primary key (id), add check (bal > 0)
         step s1: alter table acct rename to accounts
         step s1: select * from accounts order by id
         id|bal|note
         1|100|x
         2|200|x
         step s1: rollback
         step s1: select * from acct order by id
         id|bal
         1|100
         2|200
         step s1: insert into acct values (1, -5)
         step s1: select count(*) from acct
         count
         3
         step s1: begin
         step s1: alter table acct drop column bal
         step s1: savepoint a
         step s1: alter table acct add primary key (id)
         ERROR:  could not create unique index \"acct_pkey\" (23505)
         step s1: rollback to a
         step s1: select * from acct order by id
         id
         1
         1
         2
         step s1: commit
         step s1: select * from acct order by id
         id
         1
         1
         2",
    );
}

#[test]
fn concurrent_reader_waits_and_sees_the_committed_shape() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step("s1", "alter table acct add column c int default 5");
    // Blocked by the AccessExclusiveLock: it never sees the new column
    // uncommitted.
    t.step("s2", "select * from acct order by id");
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "alter table acct rename column bal to balance");
    t.step("s2", "select bal from acct order by id");
    t.step("s1", "commit");
    t.step("s1", "begin");
    t.step("s1", "alter table acct drop column c");
    t.step("s2", "select * from acct order by id");
    t.step("s1", "rollback");
    t.expect(
        "step s1: begin
         step s1: alter table acct add column c int default 5
         step s2: select * from acct order by id <waiting ...>
         step s1: commit
         step s2: <... completed>
         id|bal|c
         1|100|5
         2|200|5
         step s1: begin
         step s1: alter table acct rename column bal to balance
         step s2: select bal from acct order by id <waiting ...>
         step s1: commit
         step s2: <... completed>
         ERROR:  column \"bal\" does not exist (42703)
         step s1: begin
         step s1: alter table acct drop column c
         step s2: select * from acct order by id <waiting ...>
         step s1: rollback
         step s2: <... completed>
         id|balance|c
         1|100|5
         2|200|5",
    );
}

#[test]
fn concurrent_writer_meets_a_constraint_added_meanwhile() {
    let mut t = Tester::new(ACCOUNTS, &["s1", "s2"]);
    t.step("s1", "begin");
    t.step(
        "s1",
        "alter table acct add constraint positive check (bal > 0)",
    );
    // Bound before the CHECK existed, run after: it must be checked.
    t.step("s2", "insert into acct values (3, -1)");
    t.step("s1", "commit");
    t.step("s2", "select count(*) from acct");
    t.expect(
        "step s1: begin
         step s1: alter table acct add constraint positive check (bal > 0)
         step s2: insert into acct values (3, -1) <waiting ...>
         step s1: commit
         step s2: <... completed>
         ERROR:  new row for relation \"acct\" violates check constraint \"positive\" (23514)
         step s2: select count(*) from acct
         count
         2",
    );
}
