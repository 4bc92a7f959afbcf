//! Any number of sessions write at once: bank transfers between a few hot
//! accounts from several threads, each transfer one transaction that
//! updates two rows (in random order, so deadlocks happen and are retried)
//! and logs itself in a history table. Afterwards every balance must be its
//! starting value plus what the committed history says — a lost update, a
//! half-applied transfer or a logged transfer that did not happen would
//! break it. Run under READ COMMITTED (re-checks) and REPEATABLE READ
//! (serialization failures, retried).

mod common;

use std::sync::Arc;
use tusk_sql::Session;

const ACCOUNTS: i64 = 4;
const THREADS: usize = 4;
const TRANSFERS: usize = 40;

/// A small deterministic generator (one per thread).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: i64) -> i64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as i64
    }
}

fn transfers(isolation: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = common::session_with(
        dir.path(),
        "shared_buffers = 2MB\nhuge_pages = off\nautovacuum = off\n",
    );
    common::run(
        &mut s,
        &format!(
            "create table acct (id int not null, bal bigint not null);
             insert into acct select g, 1000 from generate_series(1, {ACCOUNTS}) g;
             create index on acct (id);
             create table history (src int, dst int, amount bigint)"
        ),
    );
    let db = s.database().clone();
    let retries: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let db = Arc::clone(&db);
                scope.spawn(move || {
                    let mut s = Session::with_database(db).unwrap();
                    common::run(&mut s, "set deadlock_timeout = '10ms'");
                    let mut rng = Lcg(t as u64 + 1);
                    let mut retries = 0;
                    for _ in 0..TRANSFERS {
                        let src = rng.next(ACCOUNTS) + 1;
                        let dst = (src + rng.next(ACCOUNTS - 1)) % ACCOUNTS + 1;
                        let amount = rng.next(50) + 1;
                        // One statement at a time, as a client sends them.
                        let steps = [
                            format!("begin isolation level {isolation}"),
                            format!("update acct set bal = bal - {amount} where id = {src}"),
                            format!("update acct set bal = bal + {amount} where id = {dst}"),
                            format!("insert into history values ({src}, {dst}, {amount})"),
                            "commit".to_string(),
                        ];
                        'retry: loop {
                            for step in &steps {
                                match s.query(step) {
                                    Ok(_) => {}
                                    Err(e) if matches!(e.code, "40P01" | "40001") => {
                                        common::run(&mut s, "rollback");
                                        retries += 1;
                                        continue 'retry;
                                    }
                                    Err(e) => panic!("{step}: {e:?}"),
                                }
                            }
                            break;
                        }
                    }
                    retries
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        common::rows(&mut s, "select count(*), sum(bal) from acct"),
        [format!("{ACCOUNTS}|{}", ACCOUNTS * 1000)]
    );
    assert_eq!(
        common::rows(&mut s, "select count(*) from history"),
        [(THREADS * TRANSFERS).to_string()]
    );
    let wrong = common::rows(
        &mut s,
        "select a.id, a.bal, 1000 + coalesce(i.amount, 0) - coalesce(o.amount, 0)
         from acct a
         left join (select dst, sum(amount) as amount from history group by dst) i
           on i.dst = a.id
         left join (select src, sum(amount) as amount from history group by src) o
           on o.src = a.id
         where a.bal <> 1000 + coalesce(i.amount, 0) - coalesce(o.amount, 0)",
    );
    assert!(wrong.is_empty(), "balances off: {wrong:?}");
    eprintln!(
        "{isolation}: {} transfers, {} retried",
        THREADS * TRANSFERS,
        retries.iter().sum::<usize>()
    );
}

#[test]
fn transfers_read_committed() {
    transfers("read committed");
}

#[test]
fn transfers_repeatable_read() {
    transfers("repeatable read");
}
