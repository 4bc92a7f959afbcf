//! The lock manager: heavyweight locks with wait queues and deadlock
//! detection (PostgreSQL's `lock.c`, `proc.c` and `deadlock.c`, in small).
//!
//! ## What is locked
//!
//! A [`LockTag`] names the object: a relation (LOCK TABLE, DML and DDL), a
//! transaction id, a tuple, or a relation name being created. Each request
//! has one of PostgreSQL's eight [`LockMode`]s, and two requests by
//! different owners conflict according to PostgreSQL's table
//! ([`LockMode::conflicts_with`]); requests by the same owner never
//! conflict. An owner ([`LockOwner`]) is a transaction; it names the
//! process (`pid`) that deadlock reports mention.
//!
//! Row locks do not live here: they are in the tuples' `xmax` (see
//! `rowlock` and `heapam`). Waiting for a row means waiting for the
//! transaction that holds it: every transaction holds an `ExclusiveLock` on
//! its own xid (and on each sub-xid) from the moment it is assigned to its
//! end, and a waiter asks for a `ShareLock` on it, which is granted when the
//! holder ends. Tuple locks only order several waiters for the same row
//! (PostgreSQL's `heap_acquire_tuplock`).
//!
//! ## Queues
//!
//! The table is split into 16 partitions by the tag's hash, each a mutex
//! over a map from tag to its holders and its queue of waiters. A request
//! is granted at once when no other owner holds a conflicting mode and
//! either no waiter asks for a conflicting one or the requester already
//! holds some lock on the object (so upgrades do not queue behind their own
//! waiters). Otherwise — unless the request must not wait, `NOWAIT` /
//! `SKIP LOCKED` — it joins the queue. Whoever releases a lock walks the
//! queue in order and grants each waiter that conflicts neither with the
//! holders nor with a waiter still queued before it, and wakes it: the
//! waiter sleeps on its own condition variable, so a release wakes exactly
//! the owners it granted.
//!
//! Weak table locks (`AccessShare`, `RowShare`, `RowExclusive`), which
//! nearly every query takes and which never conflict with each other, are
//! kept in their owner's own slots instead while no strong lock is wanted
//! on the table: see `fastpath`.
//!
//! A waiter gives up when its `lock_timeout` passes (`canceling statement
//! due to lock timeout`), when its interrupt flag is set or its cancel test
//! says so (statement cancellation, `statement_timeout`), or when it is the victim of a deadlock; if the lock was
//! granted in the meantime it keeps it, as in PostgreSQL.
//!
//! ## Deadlocks
//!
//! A waiter that has waited `deadlock_timeout` (1 s by default) checks once
//! for a deadlock: it locks every partition (in order, so checks cannot
//! deadlock with each other), builds the waits-for graph — an edge from each
//! waiter to every other owner holding a conflicting mode (hard edges) and
//! to every waiter queued before it with a conflicting mode (soft edges) —
//! and looks for a cycle through itself. If there is one it leaves the
//! queue and fails with `deadlock detected` (40P01) and PostgreSQL's
//! DETAIL, one line per edge of the cycle, starting with itself:
//! `Process 1 waits for ShareLock on transaction 745; blocked by process 2.`
//! The detector is the victim, as in PostgreSQL, so exactly one of the
//! owners in the cycle fails (the others have not reached their own
//! timeout, or find the cycle gone when they do). Unlike PostgreSQL, a
//! cycle made only through soft edges is not resolved by reordering the
//! queue but reported too.

mod fastpath;

use crate::fasthash::FastHashMap;
use crate::txn::Xid;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// tusk has one database; deadlock reports name it with the oid of
/// PostgreSQL 15's `postgres` database.
pub const DATABASE_OID: u32 = 5;

const PARTITIONS: usize = 16;

/// How often a waiter with an interrupt flag looks at it.
const INTERRUPT_POLL: Duration = Duration::from_millis(10);

/// PostgreSQL's table lock modes, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LockMode {
    AccessShare = 1,
    RowShare = 2,
    RowExclusive = 3,
    ShareUpdateExclusive = 4,
    Share = 5,
    ShareRowExclusive = 6,
    Exclusive = 7,
    AccessExclusive = 8,
}

/// Bit `m` set in `CONFLICTS[n]`: mode `m` conflicts with mode `n`
/// (PostgreSQL's `LockConflicts`).
const CONFLICTS: [u16; 9] = {
    const fn bits(modes: &[u8]) -> u16 {
        let mut b = 0;
        let mut i = 0;
        while i < modes.len() {
            b |= 1 << modes[i];
            i += 1;
        }
        b
    }
    [
        0,
        bits(&[8]),
        bits(&[7, 8]),
        bits(&[5, 6, 7, 8]),
        bits(&[4, 5, 6, 7, 8]),
        bits(&[3, 4, 6, 7, 8]),
        bits(&[3, 4, 5, 6, 7, 8]),
        bits(&[2, 3, 4, 5, 6, 7, 8]),
        bits(&[1, 2, 3, 4, 5, 6, 7, 8]),
    ]
};

impl LockMode {
    const ALL: [LockMode; 8] = [
        LockMode::AccessShare,
        LockMode::RowShare,
        LockMode::RowExclusive,
        LockMode::ShareUpdateExclusive,
        LockMode::Share,
        LockMode::ShareRowExclusive,
        LockMode::Exclusive,
        LockMode::AccessExclusive,
    ];

    /// The name deadlock reports and `pg_locks` use (`ShareLock`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LockMode::AccessShare => "AccessShareLock",
            LockMode::RowShare => "RowShareLock",
            LockMode::RowExclusive => "RowExclusiveLock",
            LockMode::ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            LockMode::Share => "ShareLock",
            LockMode::ShareRowExclusive => "ShareRowExclusiveLock",
            LockMode::Exclusive => "ExclusiveLock",
            LockMode::AccessExclusive => "AccessExclusiveLock",
        }
    }

    /// The mode named in `LOCK TABLE ... IN <name> MODE` (`access share`,
    /// `row exclusive`, ...; case-insensitive, spaces between words).
    pub fn from_sql(name: &str) -> Option<LockMode> {
        let n = name.split_whitespace().collect::<Vec<_>>().join(" ");
        Some(match n.to_ascii_lowercase().as_str() {
            "access share" => LockMode::AccessShare,
            "row share" => LockMode::RowShare,
            "row exclusive" => LockMode::RowExclusive,
            "share update exclusive" => LockMode::ShareUpdateExclusive,
            "share" => LockMode::Share,
            "share row exclusive" => LockMode::ShareRowExclusive,
            "exclusive" => LockMode::Exclusive,
            "access exclusive" => LockMode::AccessExclusive,
            _ => return None,
        })
    }

    #[inline]
    pub fn conflicts_with(self, other: LockMode) -> bool {
        CONFLICTS[self as usize] & (1 << other as u8) != 0
    }

    fn conflict_mask(self) -> u16 {
        CONFLICTS[self as usize]
    }
}

/// What a lock is on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LockTag {
    Relation(u32),
    Transaction(Xid),
    Tuple {
        rel: u32,
        block: u32,
        item: u16,
    },
    /// A relation name being created: concurrent CREATEs of one name queue
    /// here, and the second sees the first's outcome.
    RelationName(String),
}

impl LockTag {
    /// PostgreSQL's `DescribeLockTag` wording.
    pub fn describe(&self) -> String {
        match self {
            LockTag::Relation(oid) => format!("relation {oid} of database {DATABASE_OID}"),
            LockTag::Transaction(x) => format!("transaction {x}"),
            LockTag::Tuple { rel, block, item } => {
                format!("tuple ({block},{item}) of relation {rel} of database {DATABASE_OID}")
            }
            LockTag::RelationName(n) => format!("relation name \"{n}\" of database {DATABASE_OID}"),
        }
    }

    fn partition(&self) -> usize {
        let mut h = crate::fasthash::WordHasher::default();
        self.hash(&mut h);
        // The high half: the partition's own map indexes by the low bits.
        (h.finish() >> 32) as usize % PARTITIONS
    }
}

/// Why a lock was not acquired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// The lock is taken and the request said not to wait.
    WouldBlock,
    /// `lock_timeout` passed.
    Timeout,
    /// A deadlock was found and this request is the victim; the DETAIL
    /// lines.
    Deadlock(String),
    /// The interrupt flag was set while waiting.
    Interrupted,
}

/// How a request waits.
#[derive(Debug, Clone)]
pub struct WaitOptions {
    /// Fail at once with [`LockError::WouldBlock`] instead of waiting.
    pub nowait: bool,
    /// Give up after this long (`lock_timeout`; `None` waits forever).
    pub lock_timeout: Option<Duration>,
    /// Look for a deadlock after waiting this long (`deadlock_timeout`).
    pub deadlock_timeout: Duration,
    /// Set by whoever wants the wait cancelled (looked at every 10 ms).
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Asked, as often, whether the wait is to be cancelled (a session's
    /// cancel request or `statement_timeout`).
    pub cancel: Option<CancelCheck>,
}

/// A test that a waiter polls to learn that it is cancelled.
#[derive(Clone)]
pub struct CancelCheck(pub Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for CancelCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelCheck")
    }
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            nowait: false,
            lock_timeout: None,
            deadlock_timeout: Duration::from_secs(1),
            interrupt: None,
            cancel: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitState {
    Idle,
    Waiting,
    Granted,
}

/// Who holds and waits for locks: a transaction (a session may hand its
/// owner from one transaction to the next, once the last has released
/// everything).
pub struct LockOwner {
    id: u64,
    pid: i32,
    state: Mutex<WaitState>,
    wake: Condvar,
    /// Fast-path relation locks (see `fastpath`); only owners made by
    /// [`LockManager::new_owner`] have them.
    fast: Option<Mutex<fastpath::Slots>>,
}

impl std::fmt::Debug for LockOwner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LockOwner({}, pid {})", self.id, self.pid)
    }
}

impl LockOwner {
    /// An owner without fast-path slots: every lock it takes goes through
    /// the shared table.
    pub fn new(pid: i32) -> Arc<LockOwner> {
        Arc::new(Self::with_slots(pid, None))
    }

    fn with_slots(pid: i32, fast: Option<Mutex<fastpath::Slots>>) -> LockOwner {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        LockOwner {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            pid,
            state: Mutex::new(WaitState::Idle),
            wake: Condvar::new(),
            fast,
        }
    }

    fn slots(&self) -> Option<MutexGuard<'_, fastpath::Slots>> {
        self.fast
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    fn state(&self) -> MutexGuard<'_, WaitState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Holder {
    owner: Arc<LockOwner>,
    /// How many times each mode is held.
    counts: [u32; 9],
}

impl Holder {
    fn modes(&self) -> u16 {
        (1..9).filter(|&m| self.counts[m] > 0).map(|m| 1 << m).sum()
    }
}

struct Waiter {
    owner: Arc<LockOwner>,
    mode: LockMode,
}

#[derive(Default)]
struct Entry {
    holders: Vec<Holder>,
    queue: VecDeque<Waiter>,
}

impl Entry {
    fn conflicts_with_holders(&self, owner: u64, mode: LockMode) -> bool {
        self.holders
            .iter()
            .any(|h| h.owner.id != owner && h.modes() & mode.conflict_mask() != 0)
    }

    fn grant(&mut self, owner: &Arc<LockOwner>, mode: LockMode) {
        self.grant_n(owner, mode, 1);
    }

    fn grant_n(&mut self, owner: &Arc<LockOwner>, mode: LockMode, n: u32) {
        match self.holders.iter_mut().find(|h| h.owner.id == owner.id) {
            Some(h) => h.counts[mode as usize] += n,
            None => {
                let mut counts = [0; 9];
                counts[mode as usize] = n;
                self.holders.push(Holder {
                    owner: owner.clone(),
                    counts,
                });
            }
        }
    }

    /// Grants every waiter that can have its lock now (see the module doc).
    fn wake_waiters(&mut self) {
        let mut ahead = 0u16;
        let mut i = 0;
        while i < self.queue.len() {
            let (id, mode) = (self.queue[i].owner.id, self.queue[i].mode);
            if mode.conflict_mask() & ahead != 0 || self.conflicts_with_holders(id, mode) {
                ahead |= 1 << mode as u8;
                i += 1;
                continue;
            }
            let w = self.queue.remove(i).expect("index in range");
            self.grant(&w.owner, w.mode);
            *w.owner.state() = WaitState::Granted;
            w.owner.wake.notify_one();
        }
    }
}

pub struct LockManager {
    parts: Box<[Mutex<FastHashMap<LockTag, Entry>>]>,
    fast: fastpath::FastPath,
}

impl Default for LockManager {
    fn default() -> Self {
        LockManager {
            parts: (0..PARTITIONS).map(|_| Mutex::default()).collect(),
            fast: fastpath::FastPath::default(),
        }
    }
}

type Partition<'a> = MutexGuard<'a, FastHashMap<LockTag, Entry>>;

impl LockManager {
    fn part(&self, i: usize) -> Partition<'_> {
        self.parts[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new owner with fast-path slots for weak relation locks (see
    /// `fastpath`).
    pub fn new_owner(&self, pid: i32) -> Arc<LockOwner> {
        let owner = Arc::new(LockOwner::with_slots(pid, Some(Mutex::default())));
        self.fast.register(&owner);
        owner
    }

    /// Acquires `mode` on `tag` for `owner`, waiting as `opts` says.
    pub fn acquire(
        &self,
        owner: &Arc<LockOwner>,
        tag: &LockTag,
        mode: LockMode,
        opts: &WaitOptions,
    ) -> Result<(), LockError> {
        if let LockTag::Relation(rel) = *tag {
            if let Some(w) = fastpath::weak_index(mode) {
                if let Some(mut slots) = owner.slots() {
                    if !self.fast.strong_held(rel) && slots.add(rel, w) {
                        return Ok(());
                    }
                }
            } else if fastpath::is_strong(mode) {
                self.fast.strong_begin(rel);
                self.transfer(rel);
                let r = self.acquire_in_table(owner, tag, mode, opts);
                if r.is_err() {
                    self.fast.strong_end(rel);
                }
                return r;
            }
        }
        self.acquire_in_table(owner, tag, mode, opts)
    }

    /// Moves every owner's fast-path holds on `rel` into the shared table
    /// (a strong request on it has raised its count).
    fn transfer(&self, rel: u32) {
        let tag = LockTag::Relation(rel);
        for owner in self.fast.owners() {
            let Some(mut slots) = owner.slots() else {
                continue;
            };
            let Some(held) = slots.take(rel) else {
                continue;
            };
            let mut part = self.part(tag.partition());
            let entry = part.entry(tag.clone()).or_default();
            for (mode, n) in held {
                if n > 0 {
                    entry.grant_n(&owner, mode, n);
                }
            }
        }
    }

    fn acquire_in_table(
        &self,
        owner: &Arc<LockOwner>,
        tag: &LockTag,
        mode: LockMode,
        opts: &WaitOptions,
    ) -> Result<(), LockError> {
        let pi = tag.partition();
        {
            let mut part = self.part(pi);
            let entry = part.entry(tag.clone()).or_default();
            let holds_any = entry.holders.iter().any(|h| h.owner.id == owner.id);
            let queue_conflicts = entry
                .queue
                .iter()
                .any(|w| w.mode.conflicts_with(mode) && w.owner.id != owner.id);
            if !entry.conflicts_with_holders(owner.id, mode) && (holds_any || !queue_conflicts) {
                entry.grant(owner, mode);
                return Ok(());
            }
            if opts.nowait {
                if entry.holders.is_empty() && entry.queue.is_empty() {
                    part.remove(tag);
                }
                return Err(LockError::WouldBlock);
            }
            entry.queue.push_back(Waiter {
                owner: owner.clone(),
                mode,
            });
            *owner.state() = WaitState::Waiting;
        }
        self.wait(pi, owner, tag, opts)
    }

    /// Acquires `mode` on `tag` only if that needs no wait.
    pub fn try_acquire(&self, owner: &Arc<LockOwner>, tag: &LockTag, mode: LockMode) -> bool {
        let opts = WaitOptions {
            nowait: true,
            ..WaitOptions::default()
        };
        self.acquire(owner, tag, mode, &opts).is_ok()
    }

    fn wait(
        &self,
        pi: usize,
        owner: &Arc<LockOwner>,
        tag: &LockTag,
        opts: &WaitOptions,
    ) -> Result<(), LockError> {
        crate::wait_event::blocking();
        let start = Instant::now();
        let deadlock_at = start + opts.deadlock_timeout;
        let timeout_at = opts.lock_timeout.map(|t| start + t);
        let mut checked = false;
        let mut st = owner.state();
        let err = loop {
            if *st == WaitState::Granted {
                *st = WaitState::Idle;
                return Ok(());
            }
            if opts
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Acquire))
                || opts.cancel.as_ref().is_some_and(|c| (c.0)())
            {
                break LockError::Interrupted;
            }
            let now = Instant::now();
            if timeout_at.is_some_and(|t| now >= t) {
                break LockError::Timeout;
            }
            if !checked && now >= deadlock_at {
                checked = true;
                drop(st);
                if let Some(detail) = self.check_deadlock(owner) {
                    return Err(LockError::Deadlock(detail));
                }
                st = owner.state();
                continue;
            }
            let mut until = timeout_at.unwrap_or(now + Duration::from_secs(3600));
            if !checked {
                until = until.min(deadlock_at);
            }
            if opts.interrupt.is_some() || opts.cancel.is_some() {
                until = until.min(now + INTERRUPT_POLL);
            }
            st = owner
                .wake
                .wait_timeout(st, until.saturating_duration_since(now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(st);
        // Leave the queue, unless the lock was granted meanwhile.
        let mut part = self.part(pi);
        let mut st = owner.state();
        if *st == WaitState::Granted {
            *st = WaitState::Idle;
            return Ok(());
        }
        *st = WaitState::Idle;
        drop(st);
        if let Some(entry) = part.get_mut(tag) {
            entry.queue.retain(|w| w.owner.id != owner.id);
            entry.wake_waiters();
            if entry.holders.is_empty() && entry.queue.is_empty() {
                part.remove(tag);
            }
        }
        Err(err)
    }

    /// Releases one hold of `mode` on `tag` by `owner` and grants what
    /// that allows.
    pub fn release(&self, owner: &LockOwner, tag: &LockTag, mode: LockMode) {
        if let LockTag::Relation(rel) = *tag {
            if let Some(w) = fastpath::weak_index(mode) {
                if owner.slots().is_some_and(|mut s| s.remove(rel, w)) {
                    return;
                }
            } else if fastpath::is_strong(mode) {
                self.release_in_table(owner, tag, mode);
                self.fast.strong_end(rel);
                return;
            }
        }
        self.release_in_table(owner, tag, mode);
    }

    fn release_in_table(&self, owner: &LockOwner, tag: &LockTag, mode: LockMode) {
        let mut part = self.part(tag.partition());
        let Some(entry) = part.get_mut(tag) else {
            debug_assert!(false, "releasing a lock not held: {tag:?}");
            return;
        };
        if let Some(i) = entry.holders.iter().position(|h| h.owner.id == owner.id) {
            let h = &mut entry.holders[i];
            h.counts[mode as usize] = h.counts[mode as usize].saturating_sub(1);
            if h.counts.iter().all(|&c| c == 0) {
                entry.holders.swap_remove(i);
            }
        }
        entry.wake_waiters();
        if entry.holders.is_empty() && entry.queue.is_empty() {
            part.remove(tag);
        }
    }

    /// The pids holding `tag` and their modes (strongest held per owner;
    /// an owner holding `tag` both on the fast path and in the shared table
    /// appears twice).
    pub fn holders(&self, tag: &LockTag) -> Vec<(i32, LockMode)> {
        let mut held = self.holders_in_table(tag);
        if let LockTag::Relation(rel) = *tag {
            for owner in self.fast.owners() {
                if let Some(m) = owner.slots().and_then(|s| s.strongest(rel)) {
                    held.push((owner.pid, m));
                }
            }
        }
        held
    }

    fn holders_in_table(&self, tag: &LockTag) -> Vec<(i32, LockMode)> {
        let part = self.part(tag.partition());
        part.get(tag)
            .map(|e| {
                e.holders
                    .iter()
                    .filter_map(|h| {
                        let m = LockMode::ALL
                            .iter()
                            .rev()
                            .find(|m| h.counts[**m as usize] > 0)?;
                        Some((h.owner.pid, *m))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The pids waiting for `tag`, in queue order, with their modes.
    pub fn waiters(&self, tag: &LockTag) -> Vec<(i32, LockMode)> {
        let part = self.part(tag.partition());
        part.get(tag)
            .map(|e| e.queue.iter().map(|w| (w.owner.pid, w.mode)).collect())
            .unwrap_or_default()
    }

    /// Whether process `pid` waits for some lock now (PostgreSQL's
    /// `pg_blocking_pids` being non-empty; isolation tests use it to see
    /// that a step blocks).
    pub fn is_waiting(&self, pid: i32) -> bool {
        (0..PARTITIONS).any(|i| {
            self.part(i)
                .values()
                .any(|e| e.queue.iter().any(|w| w.owner.pid == pid))
        })
    }

    /// Looks for a cycle of waits through `me`; if there is one, takes `me`
    /// out of its queue and returns the DETAIL text (see the module doc).
    fn check_deadlock(&self, me: &Arc<LockOwner>) -> Option<String> {
        let mut parts: Vec<Partition<'_>> = (0..PARTITIONS).map(|i| self.part(i)).collect();
        if *me.state() != WaitState::Waiting {
            return None;
        }
        // owner -> (pid, what it waits for, whom it waits for)
        struct Wait {
            pid: i32,
            tag: LockTag,
            mode: LockMode,
            blockers: Vec<(u64, i32)>,
        }
        let mut waits: HashMap<u64, Wait> = HashMap::new();
        let mut my_place = None;
        for (pi, part) in parts.iter().enumerate() {
            for (tag, e) in part.iter() {
                for (i, w) in e.queue.iter().enumerate() {
                    let mut blockers: Vec<(u64, i32)> = e
                        .holders
                        .iter()
                        .filter(|h| {
                            h.owner.id != w.owner.id && h.modes() & w.mode.conflict_mask() != 0
                        })
                        .map(|h| (h.owner.id, h.owner.pid))
                        .collect();
                    blockers.extend(
                        e.queue
                            .iter()
                            .take(i)
                            .filter(|a| a.owner.id != w.owner.id && a.mode.conflicts_with(w.mode))
                            .map(|a| (a.owner.id, a.owner.pid)),
                    );
                    if w.owner.id == me.id {
                        my_place = Some((pi, tag.clone()));
                    }
                    waits.insert(
                        w.owner.id,
                        Wait {
                            pid: w.owner.pid,
                            tag: tag.clone(),
                            mode: w.mode,
                            blockers,
                        },
                    );
                }
            }
        }
        // Depth-first search for a path from `me` back to `me`.
        fn search(
            waits: &HashMap<u64, Wait>,
            at: u64,
            target: u64,
            path: &mut Vec<(u64, i32)>,
            seen: &mut HashSet<u64>,
        ) -> bool {
            let Some(w) = waits.get(&at) else {
                return false;
            };
            for &(b, pid) in &w.blockers {
                path.push((b, pid));
                if b == target {
                    return true;
                }
                if seen.insert(b) && search(waits, b, target, path, seen) {
                    return true;
                }
                path.pop();
            }
            false
        }
        let mut path = Vec::new();
        let mut seen = HashSet::new();
        if !search(&waits, me.id, me.id, &mut path, &mut seen) {
            return None;
        }
        let mut lines = Vec::new();
        let mut from = me.id;
        for &(to, to_pid) in &path {
            let w = &waits[&from];
            lines.push(format!(
                "Process {} waits for {} on {}; blocked by process {}.",
                w.pid,
                w.mode.name(),
                w.tag.describe(),
                to_pid
            ));
            from = to;
        }
        // The victim leaves its queue.
        let (pi, tag) = my_place.expect("a waiter is in a queue");
        *me.state() = WaitState::Idle;
        if let Some(e) = parts[pi].get_mut(&tag) {
            e.queue.retain(|w| w.owner.id != me.id);
            e.wake_waiters();
            if e.holders.is_empty() && e.queue.is_empty() {
                parts[pi].remove(&tag);
            }
        }
        Some(lines.join("\n"))
    }
}

#[cfg(test)]
mod tests;
