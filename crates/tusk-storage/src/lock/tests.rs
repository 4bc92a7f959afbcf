//! The lock manager's unit tests.

use super::*;
use std::thread;

#[test]
fn conflict_table_is_postgres_and_symmetric() {
    use LockMode::*;
    for a in LockMode::ALL {
        for b in LockMode::ALL {
            assert_eq!(a.conflicts_with(b), b.conflicts_with(a), "{a:?} {b:?}");
        }
    }
    assert!(!RowExclusive.conflicts_with(RowExclusive));
    assert!(RowExclusive.conflicts_with(Share));
    assert!(!Share.conflicts_with(Share));
    assert!(ShareUpdateExclusive.conflicts_with(ShareUpdateExclusive));
    assert!(!AccessShare.conflicts_with(Exclusive));
    assert!(AccessShare.conflicts_with(AccessExclusive));
    assert_eq!(
        LockMode::from_sql("ACCESS  exclusive"),
        Some(AccessExclusive)
    );
}

#[test]
fn release_grants_in_queue_order() {
    let lm = Arc::new(LockManager::default());
    let tag = LockTag::Relation(1);
    let a = LockOwner::new(1);
    lm.acquire(&a, &tag, LockMode::AccessExclusive, &WaitOptions::default())
        .unwrap();
    let nowait = WaitOptions {
        nowait: true,
        ..Default::default()
    };
    let b = LockOwner::new(2);
    assert_eq!(
        lm.acquire(&b, &tag, LockMode::AccessShare, &nowait),
        Err(LockError::WouldBlock)
    );
    let waiter = {
        let (lm, tag, b) = (lm.clone(), tag.clone(), b.clone());
        thread::spawn(move || lm.acquire(&b, &tag, LockMode::AccessShare, &WaitOptions::default()))
    };
    while lm.waiters(&tag).is_empty() {
        thread::yield_now();
    }
    assert_eq!(lm.waiters(&tag), vec![(2, LockMode::AccessShare)]);
    lm.release(&a, &tag, LockMode::AccessExclusive);
    waiter.join().unwrap().unwrap();
    assert_eq!(lm.holders(&tag), vec![(2, LockMode::AccessShare)]);
    lm.release(&b, &tag, LockMode::AccessShare);
    assert!(lm.holders(&tag).is_empty());
}

#[test]
fn timeout_and_interrupt_leave_the_queue() {
    let lm = LockManager::default();
    let tag = LockTag::Transaction(7);
    let a = LockOwner::new(1);
    lm.acquire(&a, &tag, LockMode::Exclusive, &WaitOptions::default())
        .unwrap();
    let b = LockOwner::new(2);
    let opts = WaitOptions {
        lock_timeout: Some(Duration::from_millis(1)),
        ..Default::default()
    };
    assert_eq!(
        lm.acquire(&b, &tag, LockMode::Share, &opts),
        Err(LockError::Timeout)
    );
    let flag = Arc::new(AtomicBool::new(true));
    let opts = WaitOptions {
        interrupt: Some(flag),
        ..Default::default()
    };
    assert_eq!(
        lm.acquire(&b, &tag, LockMode::Share, &opts),
        Err(LockError::Interrupted)
    );
    assert!(lm.waiters(&tag).is_empty());
    // Upgrades by the holder do not queue behind waiters.
    lm.acquire(&a, &tag, LockMode::AccessExclusive, &WaitOptions::default())
        .unwrap();
}

#[test]
fn deadlock_has_one_victim_and_postgres_detail() {
    let lm = Arc::new(LockManager::default());
    let (t1, t2) = (LockTag::Transaction(100), LockTag::Transaction(101));
    let a = LockOwner::new(11);
    let b = LockOwner::new(22);
    let opts = WaitOptions {
        deadlock_timeout: Duration::from_millis(20),
        ..Default::default()
    };
    lm.acquire(&a, &t1, LockMode::Exclusive, &opts).unwrap();
    lm.acquire(&b, &t2, LockMode::Exclusive, &opts).unwrap();
    let run = |me: Arc<LockOwner>, want: LockTag, mine: LockTag| {
        let lm = lm.clone();
        let opts = opts.clone();
        thread::spawn(move || {
            let r = lm.acquire(&me, &want, LockMode::Share, &opts);
            // Whoever loses releases its own lock, letting the other on.
            lm.release(&me, &mine, LockMode::Exclusive);
            if r.is_ok() {
                lm.release(&me, &want, LockMode::Share);
            }
            r
        })
    };
    let ha = run(a, t2.clone(), t1.clone());
    let hb = run(b, t1.clone(), t2.clone());
    let (ra, rb) = (ha.join().unwrap(), hb.join().unwrap());
    let errors: Vec<&LockError> = [&ra, &rb]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
        .collect();
    assert_eq!(errors.len(), 1, "{ra:?} {rb:?}");
    let LockError::Deadlock(detail) = errors[0] else {
        panic!("{errors:?}")
    };
    let lines: Vec<&str> = detail.lines().collect();
    assert_eq!(lines.len(), 2);
    let (me, other) = if ra.is_err() { (11, 22) } else { (22, 11) };
    let (mine, theirs) = if ra.is_err() { (101, 100) } else { (100, 101) };
    assert_eq!(
        lines[0],
        format!(
            "Process {me} waits for ShareLock on transaction {mine}; blocked by process {other}."
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "Process {other} waits for ShareLock on transaction {theirs}; blocked by process {me}."
        )
    );
}

fn nowait() -> WaitOptions {
    WaitOptions {
        nowait: true,
        ..Default::default()
    }
}

#[test]
fn fast_path_holds_are_moved_before_a_strong_request() {
    let lm = LockManager::default();
    let tag = LockTag::Relation(7);
    let (a, b) = (lm.new_owner(1), lm.new_owner(2));
    lm.acquire(&a, &tag, LockMode::AccessShare, &nowait())
        .unwrap();
    lm.acquire(&a, &tag, LockMode::AccessShare, &nowait())
        .unwrap();
    // On the fast path: the shared table knows nothing yet.
    assert!(lm.holders_in_table(&tag).is_empty());
    assert_eq!(lm.holders(&tag), vec![(1, LockMode::AccessShare)]);
    assert_eq!(
        lm.acquire(&b, &tag, LockMode::AccessExclusive, &nowait()),
        Err(LockError::WouldBlock)
    );
    // The failed strong request moved a's holds (both) and let go of its count.
    assert_eq!(lm.holders_in_table(&tag), vec![(1, LockMode::AccessShare)]);
    lm.release(&a, &tag, LockMode::AccessShare);
    assert_eq!(
        lm.acquire(&b, &tag, LockMode::AccessExclusive, &nowait()),
        Err(LockError::WouldBlock)
    );
    lm.release(&a, &tag, LockMode::AccessShare);
    lm.acquire(&b, &tag, LockMode::AccessExclusive, &nowait())
        .unwrap();
    // While it is held, weak requests go to the table and conflict there.
    assert_eq!(
        lm.acquire(&a, &tag, LockMode::RowExclusive, &nowait()),
        Err(LockError::WouldBlock)
    );
    // Another relation in another bucket still takes the fast path.
    lm.acquire(&a, &LockTag::Relation(8), LockMode::RowExclusive, &nowait())
        .unwrap();
    assert!(lm.holders_in_table(&LockTag::Relation(8)).is_empty());
    lm.release(&b, &tag, LockMode::AccessExclusive);
    lm.acquire(&a, &tag, LockMode::RowExclusive, &nowait())
        .unwrap();
    assert!(lm.holders_in_table(&tag).is_empty(), "fast path again");
    lm.release(&a, &tag, LockMode::RowExclusive);
    lm.release(&a, &LockTag::Relation(8), LockMode::RowExclusive);
    assert!(lm.holders(&tag).is_empty());
}

#[test]
fn an_owner_upgrades_over_its_own_fast_path_hold() {
    let lm = LockManager::default();
    let tag = LockTag::Relation(3);
    let a = lm.new_owner(1);
    lm.acquire(&a, &tag, LockMode::RowExclusive, &nowait())
        .unwrap();
    lm.acquire(&a, &tag, LockMode::AccessExclusive, &nowait())
        .unwrap();
    let b = lm.new_owner(2);
    assert_eq!(
        lm.acquire(&b, &tag, LockMode::AccessShare, &nowait()),
        Err(LockError::WouldBlock)
    );
    lm.release(&a, &tag, LockMode::AccessExclusive);
    lm.release(&a, &tag, LockMode::RowExclusive);
    lm.acquire(&b, &tag, LockMode::AccessShare, &nowait())
        .unwrap();
    lm.release(&b, &tag, LockMode::AccessShare);
    assert!(lm.holders(&tag).is_empty());
}

#[test]
fn full_slots_fall_back_to_the_table() {
    let lm = LockManager::default();
    let a = lm.new_owner(1);
    let n = fastpath::SLOTS as u32 + 4;
    for rel in 1..=n {
        lm.acquire(
            &a,
            &LockTag::Relation(rel),
            LockMode::AccessShare,
            &nowait(),
        )
        .unwrap();
    }
    let in_table = (1..=n)
        .filter(|&r| !lm.holders_in_table(&LockTag::Relation(r)).is_empty())
        .count();
    assert_eq!(in_table, 4);
    let b = lm.new_owner(2);
    for rel in 1..=n {
        let tag = LockTag::Relation(rel);
        assert_eq!(
            lm.acquire(&b, &tag, LockMode::AccessExclusive, &nowait()),
            Err(LockError::WouldBlock),
            "relation {rel}"
        );
        lm.release(&a, &tag, LockMode::AccessShare);
        lm.acquire(&b, &tag, LockMode::AccessExclusive, &nowait())
            .unwrap();
        lm.release(&b, &tag, LockMode::AccessExclusive);
    }
}

/// Threads take and drop random relation locks (waiting, with a short
/// deadlock timeout) while a shadow records who holds what: no two owners
/// may ever hold conflicting modes on one relation at the same time.
#[test]
fn stress_fast_path_against_a_shadow() {
    use std::collections::HashMap as Map;
    const THREADS: usize = 4;
    const RELS: u32 = 3;
    let lm = Arc::new(LockManager::default());
    // (relation, owner pid) -> how often each mode is held.
    type Shadow = Map<(u32, i32), [u32; 9]>;
    let shadow: Arc<Mutex<Shadow>> = Arc::default();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (lm, shadow) = (lm.clone(), shadow.clone());
            thread::spawn(move || {
                let mut seed = 0x2545_f491_4f6c_dd1d_u64 ^ (t as u64 + 1);
                let mut rnd = move |n: u64| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed % n
                };
                let opts = WaitOptions {
                    deadlock_timeout: Duration::from_millis(5),
                    ..Default::default()
                };
                let mut conflicts = 0;
                for _round in 0..400 {
                    let owner = lm.new_owner(t as i32 + 1);
                    let mut held = Vec::new();
                    for _ in 0..1 + rnd(4) {
                        let rel = 1 + rnd(RELS as u64) as u32;
                        // Mostly weak modes, as real work is.
                        let mode = match rnd(10) {
                            0 => LockMode::AccessExclusive,
                            1 => LockMode::Share,
                            2 => LockMode::ShareUpdateExclusive,
                            3..=5 => LockMode::RowExclusive,
                            _ => LockMode::AccessShare,
                        };
                        let tag = LockTag::Relation(rel);
                        if lm.acquire(&owner, &tag, mode, &opts).is_err() {
                            break; // a deadlock victim gives up its round
                        }
                        let mut sh = shadow.lock().unwrap();
                        for (&(r, pid), counts) in sh.iter() {
                            if r == rel && pid != owner.pid() {
                                let theirs = (1..9)
                                    .filter(|&m| counts[m] > 0)
                                    .fold(0u16, |b, m| b | 1 << m);
                                if theirs & mode.conflict_mask() != 0 {
                                    conflicts += 1;
                                }
                            }
                        }
                        sh.entry((rel, owner.pid())).or_default()[mode as usize] += 1;
                        drop(sh);
                        held.push((tag, mode, rel));
                    }
                    for (tag, mode, rel) in held.into_iter().rev() {
                        shadow.lock().unwrap().get_mut(&(rel, owner.pid())).unwrap()
                            [mode as usize] -= 1;
                        lm.release(&owner, &tag, mode);
                    }
                }
                conflicts
            })
        })
        .collect();
    let conflicts: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(conflicts, 0);
    for rel in 1..=RELS {
        assert!(lm.holders(&LockTag::Relation(rel)).is_empty());
    }
    assert!((1..=RELS).all(|r| !lm.fast.strong_held(r)));
}
