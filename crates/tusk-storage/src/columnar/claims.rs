//! Who deleted, updated or locked which row of a row group: the columnar
//! counterpart of a heap tuple's `xmax`.
//!
//! A heap marks a row as deleted, updated or locked by writing the
//! transaction into the tuple (`xmax`, with infomask bits saying which), so
//! that a second writer finds the first there, waits for it and learns the
//! outcome. Row groups are never rewritten in place, so the same facts live
//! in memory, per table, in a [`Claims`]:
//!
//! * `xmax`: a [`RadixTree`] from a row's key (`group << 17 | row`) to the
//!   claiming xid and its command id (`xid | cid << 32`). A claim with no
//!   further entry is a delete.
//! * `extra`: for the rarer claims, what else the heap would keep in the
//!   infomask: a lock-only claim (`SELECT ... FOR UPDATE`) and its
//!   strength, an update's new version (in the delta), and whether shared
//!   row lockers may be registered in the database's `ShareLocks`.
//! * `retired`: row groups that VACUUM replaced, with its xid: every row of
//!   such a group counts as updated by it (a writer whose snapshot still
//!   sees the old group must not change a row the new group carries).
//!
//! Claims matter only while some snapshot may not see their outcome: a
//! claim whose transaction is aborted, or a lock whose transaction ended,
//! is ignored, and a delete whose transaction committed before every
//! running snapshot (below the horizon) can never meet another writer,
//! since no scan returns that row any more. So nothing here is durable, or
//! loaded at startup — after a restart every committed deletion is older
//! than every snapshot — and [`Claims::prune`] (VACUUM) drops what is
//! settled. The deletions themselves are durable as metadata entries
//! (see `meta`), written when the deleting command ends.
//!
//! The database's `columnar::registry` holds each columnar table's claims
//! behind a mutex; a writer holds it only to read and set one row's claim.

use crate::heap::Tid;
use crate::txn::Xid;
use std::collections::HashMap;
use tusk_radix::RadixTree;

use super::RowId;

/// The key of a row in the claims.
pub fn row_key(id: RowId) -> u64 {
    u64::from(id.group) << 17 | u64::from(id.row)
}

fn key_group(key: u64) -> u32 {
    (key >> 17) as u32
}

/// What a claim is, beyond its xid (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extra {
    /// The claim only locks the row (`strong`: `FOR UPDATE`, else `FOR NO
    /// KEY UPDATE`).
    pub lock_only: bool,
    pub strong: bool,
    /// The claim updated the row; its new version is here.
    pub next: Option<Tid>,
    /// Shared row lockers may be registered for the row.
    pub shared: bool,
}

/// One row's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    pub xid: Xid,
    pub cid: u32,
    pub extra: Extra,
}

/// The claims of one table (see the module doc).
#[derive(Default)]
pub struct Claims {
    xmax: RadixTree,
    extra: HashMap<u64, Extra>,
    retired: HashMap<u32, Xid>,
}

impl Claims {
    /// The claim on `row`, if any (a retired group's rows are claimed by
    /// the VACUUM that retired it, as updates).
    pub fn get(&self, row: RowId) -> Option<Claim> {
        if let Some(&xid) = self.retired.get(&row.group) {
            return Some(Claim {
                xid,
                cid: 0,
                extra: Extra {
                    next: Some(row.to_tid()),
                    ..Extra::default()
                },
            });
        }
        let key = row_key(row);
        let v = self.xmax.get(key)?;
        Some(Claim {
            xid: v as u32,
            cid: (v >> 32) as u32,
            extra: self.extra.get(&key).copied().unwrap_or_default(),
        })
    }

    /// Sets the claim on `row`.
    pub fn set(&mut self, row: RowId, claim: Claim) {
        let key = row_key(row);
        self.xmax
            .insert(key, u64::from(claim.xid) | u64::from(claim.cid) << 32);
        if claim.extra == Extra::default() {
            self.extra.remove(&key);
        } else {
            self.extra.insert(key, claim.extra);
        }
    }

    /// Marks `row` as possibly share-locked (keeping its claim).
    pub fn mark_shared(&mut self, row: RowId) {
        let key = row_key(row);
        self.extra.entry(key).or_default().shared = true;
        if self.xmax.get(key).is_none() {
            // No claim yet: an aborted xid 0 stands for "none".
            self.xmax.insert(key, 0);
        }
    }

    /// Records that `xid` (a VACUUM) replaces row group `group`.
    pub fn retire(&mut self, group: u32, xid: Xid) {
        self.retired.insert(group, xid);
    }

    /// Forgets every claim of group `group` (its blocks are reused).
    pub fn forget_group(&mut self, group: u32) {
        self.retired.remove(&group);
        let keys: Vec<u64> = self
            .xmax
            .iter()
            .map(|(k, _)| k)
            .filter(|&k| key_group(k) == group)
            .collect();
        for k in keys {
            self.xmax.remove(k);
            self.extra.remove(&k);
        }
    }

    /// Drops the claims that can no longer matter: those `settled` says so
    /// of (their xid aborted, or committed below the horizon, or a lock
    /// whose transaction ended). Returns how many are left.
    pub fn prune(&mut self, settled: impl Fn(Xid, bool) -> bool) -> usize {
        let gone: Vec<u64> = self
            .xmax
            .iter()
            .filter(|&(k, v)| {
                let e = self.extra.get(&k).copied().unwrap_or_default();
                settled(v as u32, e.lock_only) && !e.shared
            })
            .map(|(k, _)| k)
            .collect();
        for k in gone {
            self.xmax.remove(k);
            self.extra.remove(&k);
        }
        self.retired.retain(|_, x| !settled(*x, false));
        self.xmax.len()
    }

    /// Claims held (tests and VACUUM VERBOSE).
    pub fn len(&self) -> usize {
        self.xmax.len() + self.retired.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_and_prune() {
        let mut c = Claims::default();
        let a = RowId {
            group: 7,
            row: 100_000,
        };
        let b = RowId { group: 9, row: 3 };
        assert_eq!(c.get(a), None);
        c.set(
            a,
            Claim {
                xid: 50,
                cid: u32::MAX,
                extra: Extra::default(),
            },
        );
        let upd = Extra {
            next: Some(Tid { block: 4, item: 2 }),
            ..Extra::default()
        };
        c.set(
            b,
            Claim {
                xid: 51,
                cid: 1,
                extra: upd,
            },
        );
        assert_eq!(c.get(a).map(|x| (x.xid, x.cid)), Some((50, u32::MAX)));
        assert_eq!(c.get(b).map(|x| x.extra), Some(upd));
        c.retire(9, 60);
        let r = c.get(b).unwrap();
        assert_eq!((r.xid, r.extra.next), (60, Some(b.to_tid())));
        assert_eq!(c.prune(|x, _| x == 50), 1);
        assert_eq!(c.get(a), None);
        c.forget_group(9);
        assert!(c.is_empty());
    }
}
