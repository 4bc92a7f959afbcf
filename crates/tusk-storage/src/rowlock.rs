//! Row lock modes and the holders of shared row locks.
//!
//! PostgreSQL has four row lock strengths ([`RowLockMode`]): `FOR KEY
//! SHARE`, `FOR SHARE`, `FOR NO KEY UPDATE` (also taken by an UPDATE that
//! changes no key column) and `FOR UPDATE` (also taken by DELETE and by an
//! UPDATE of a key column), with its conflict table
//! ([`RowLockMode::conflicts_with`]).
//!
//! The two exclusive strengths are recorded in the tuple itself: `xmax` is
//! the locker with `XMAX_LOCK_ONLY` (see `tuple`). The two shared strengths
//! can be held by many transactions at once. PostgreSQL stores a
//! MultiXactId in `xmax` for them; tusk keeps them in memory here, keyed by
//! row, and sets `SHARE_LOCKED` in the tuple so that a writer knows to look.
//! Row locks only matter while their holders run — after a crash none
//! does, and a stale flag costs one lookup — so nothing here needs to be
//! durable; the flag is set under WAL like any tuple change (`HeapLock`).
//! A transaction's entries are removed when it ends ([`release_all`]);
//! entries of rolled-back savepoints stay until then and are ignored, as
//! their xids are aborted.
//!
//! Unlike PostgreSQL's multixacts, a shared lock does not follow the row to
//! its newer version when a `NO KEY UPDATE` passes a `KEY SHARE` locker.

use crate::clog::XidStatus;
use crate::heap::Tid;
use crate::lock::LockMode;
use crate::txn::Xid;
use crate::xact::Transaction;
use std::collections::HashMap;
use std::sync::Mutex;

/// PostgreSQL's `LockTupleMode`, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RowLockMode {
    KeyShare,
    Share,
    NoKeyUpdate,
    Update,
}

impl RowLockMode {
    /// PostgreSQL's tuple lock conflict table.
    pub fn conflicts_with(self, other: RowLockMode) -> bool {
        use RowLockMode::*;
        match self {
            KeyShare => other == Update,
            Share => matches!(other, NoKeyUpdate | Update),
            NoKeyUpdate => matches!(other, Share | NoKeyUpdate | Update),
            Update => true,
        }
    }

    /// Whether the mode is recorded in `xmax` (else in [`ShareLocks`]).
    pub fn is_exclusive(self) -> bool {
        matches!(self, RowLockMode::NoKeyUpdate | RowLockMode::Update)
    }

    /// The heavyweight mode of the tuple lock that orders waiters for a
    /// row in this mode (PostgreSQL's `tupleLockExtraInfo`).
    pub fn tuple_lock_mode(self) -> LockMode {
        match self {
            RowLockMode::KeyShare => LockMode::AccessShare,
            RowLockMode::Share => LockMode::RowShare,
            RowLockMode::NoKeyUpdate => LockMode::Exclusive,
            RowLockMode::Update => LockMode::AccessExclusive,
        }
    }
}

/// A row: relation and TID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowKey {
    pub rel: u32,
    pub tid: Tid,
}

/// Holders of shared row locks (see the module doc).
#[derive(Default)]
pub struct ShareLocks {
    rows: Mutex<HashMap<RowKey, Vec<(Xid, RowLockMode)>>>,
}

impl ShareLocks {
    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<RowKey, Vec<(Xid, RowLockMode)>>> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that `xid` holds `mode` on `row`; false if it already held
    /// it (or a stronger shared mode).
    pub fn add(&self, row: RowKey, xid: Xid, mode: RowLockMode) -> bool {
        let mut rows = self.rows();
        let v = rows.entry(row).or_default();
        if v.iter().any(|&(x, m)| x == xid && m >= mode) {
            return false;
        }
        v.push((xid, mode));
        true
    }

    /// The recorded lockers of `row` whose xid `running` says still runs.
    pub fn lockers(&self, row: RowKey, running: impl Fn(Xid) -> bool) -> Vec<(Xid, RowLockMode)> {
        let mut rows = self.rows();
        let Some(v) = rows.get_mut(&row) else {
            return Vec::new();
        };
        v.retain(|&(x, _)| running(x));
        let out = v.clone();
        if v.is_empty() {
            rows.remove(&row);
        }
        out
    }

    /// Forgets the lockers of `row` that no longer run.
    fn prune(&self, row: RowKey, running: impl Fn(Xid) -> bool) {
        let mut rows = self.rows();
        if let Some(v) = rows.get_mut(&row) {
            v.retain(|&(x, _)| running(x));
            if v.is_empty() {
                rows.remove(&row);
            }
        }
    }

    /// Rows with recorded lockers (tests).
    pub fn len(&self) -> usize {
        self.rows().len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows().is_empty()
    }
}

/// Removes the ended transaction's shared row locks (its xids have their
/// final status).
pub(crate) fn release_all(txn: &mut Transaction) {
    let rows = std::mem::take(&mut txn.share_locked);
    let db = &txn.db;
    for row in rows {
        db.share_locks
            .prune(row, |x| db.txn.clog.status(x) == XidStatus::InProgress);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_table() {
        use RowLockMode::*;
        let all = [KeyShare, Share, NoKeyUpdate, Update];
        for a in all {
            for b in all {
                assert_eq!(a.conflicts_with(b), b.conflicts_with(a));
            }
        }
        assert!(!KeyShare.conflicts_with(NoKeyUpdate));
        assert!(!Share.conflicts_with(Share));
        assert!(Share.conflicts_with(NoKeyUpdate));
        assert!(KeyShare.conflicts_with(Update));
    }

    #[test]
    fn lockers_are_pruned() {
        let s = ShareLocks::default();
        let row = RowKey {
            rel: 1,
            tid: Tid { block: 0, item: 1 },
        };
        assert!(s.add(row, 10, RowLockMode::Share));
        assert!(!s.add(row, 10, RowLockMode::KeyShare), "already stronger");
        assert!(s.add(row, 11, RowLockMode::KeyShare));
        assert_eq!(
            s.lockers(row, |x| x == 11),
            vec![(11, RowLockMode::KeyShare)]
        );
        assert!(s.lockers(row, |_| false).is_empty());
        assert!(s.is_empty());
    }
}
