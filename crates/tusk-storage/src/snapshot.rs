//! MVCC snapshots and the visibility rule (PostgreSQL's
//! `HeapTupleSatisfiesMVCC`).
//!
//! A [`Snapshot`] says which transactions' work a statement may see. It is
//! taken from the proc array (see `procarray`) as PostgreSQL takes one:
//!
//! * `xmax`: the first xid not yet assigned. Anything at or above it started
//!   after the snapshot and is invisible.
//! * `xip`: the xids (top-level and sub-xids) of transactions running at that
//!   moment. They are invisible even if they commit later.
//! * `xmin`: the smallest xid in `xip`, or `xmax` when nothing runs. Every
//!   xid below it had ended, so only the commit log decides.
//! * `own`: the xids of the snapshot's own transaction (the top-level xid
//!   and those of its subtransactions that were not rolled back), with
//!   `curcid`, the command id of the statement: the transaction sees its
//!   own changes made by *earlier* commands only, so a statement never sees
//!   the rows it inserts itself (`INSERT INTO t SELECT * FROM t` terminates)
//!   and still sees the rows it deletes.
//!
//! A tuple is visible when its inserter is visible — a frozen xid, an own
//! xid with `cmin < curcid`, or an xid that is neither running for the
//! snapshot nor anything but committed — and its `xmax` is not a visible
//! deleter: empty, a mere locker ([`XMAX_LOCK_ONLY`]), an own xid with
//! `cmax >= curcid`, running for the snapshot, or not committed.
//!
//! A snapshot registers its `xmin` in the proc array while it lives (see
//! [`crate::procarray::ProcArray::horizon`]); VACUUM never removes a tuple
//! whose deleter such a snapshot could still consider running.
//!
//! READ COMMITTED takes a new snapshot per statement; REPEATABLE READ takes
//! one for the transaction and gives each statement a copy with the
//! statement's command id ([`SnapshotData::with_cid`]). Which one applies is
//! the caller's choice (see `xact`).

use crate::procarray::Registration;
use crate::tuple::{self, XMAX_LOCK_ONLY};
use crate::txn::{Xid, FIRST_NORMAL_XID, INVALID_XID};
use std::sync::Arc;

/// A command's number within its transaction.
pub type CommandId = u32;

/// What a statement may see; cheap to clone (parallel workers share it).
#[derive(Clone)]
pub struct Snapshot(Arc<SnapshotData>);

pub struct SnapshotData {
    pub xmin: Xid,
    pub xmax: Xid,
    /// Running xids at the time, ascending.
    xip: Arc<[Xid]>,
    /// The own transaction's xids, ascending.
    own: Arc<[Xid]>,
    pub curcid: CommandId,
    /// Keeps `xmin` registered in the proc array while the snapshot lives.
    _reg: Option<Registration>,
}

impl std::ops::Deref for Snapshot {
    type Target = SnapshotData;
    fn deref(&self) -> &SnapshotData {
        &self.0
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("xmin", &self.xmin)
            .field("xmax", &self.xmax)
            .field("xip", &&self.xip[..])
            .field("own", &&self.own[..])
            .field("curcid", &self.curcid)
            .finish()
    }
}

impl Snapshot {
    pub(crate) fn new(
        xmin: Xid,
        xmax: Xid,
        xip: Arc<[Xid]>,
        own: Arc<[Xid]>,
        curcid: CommandId,
        reg: Option<Registration>,
    ) -> Snapshot {
        debug_assert!(xip.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(own.windows(2).all(|w| w[0] < w[1]));
        Snapshot(Arc::new(SnapshotData {
            xmin,
            xmax,
            xip,
            own,
            curcid,
            _reg: reg,
        }))
    }

    /// An empty list of xids, shared (a snapshot taken while nothing else
    /// runs, a transaction that has no xid yet) instead of allocated.
    pub fn no_xids() -> Arc<[Xid]> {
        static EMPTY: std::sync::LazyLock<Arc<[Xid]>> = std::sync::LazyLock::new(|| Arc::from([]));
        EMPTY.clone()
    }

    /// A snapshot that sees every committed transaction and nothing else
    /// (tests, and tools that run alone).
    pub fn everything_committed(next_xid: Xid) -> Snapshot {
        Snapshot::new(
            next_xid,
            next_xid,
            Snapshot::no_xids(),
            Snapshot::no_xids(),
            0,
            None,
        )
    }
}

impl SnapshotData {
    /// The same snapshot for command `cid` (REPEATABLE READ's later
    /// statements); `own` replaces the own xids (a subtransaction may have
    /// started or been rolled back since).
    pub fn with_cid(&self, cid: CommandId, own: Arc<[Xid]>, reg: Option<Registration>) -> Snapshot {
        Snapshot::new(self.xmin, self.xmax, self.xip.clone(), own, cid, reg)
    }

    /// Whether `xid` counts as running for this snapshot (so its work is
    /// invisible whatever its outcome).
    #[inline]
    pub fn in_progress(&self, xid: Xid) -> bool {
        xid >= self.xmax || (xid >= self.xmin && self.xip.binary_search(&xid).is_ok())
    }

    /// Whether `xid` is one of the snapshot's own transaction's xids.
    #[inline]
    pub fn is_own(&self, xid: Xid) -> bool {
        xid != INVALID_XID && self.own.contains(&xid)
    }

    /// The own transaction's xids.
    pub fn own_xids(&self) -> &[Xid] {
        &self.own
    }

    /// The running xids the snapshot saw.
    pub fn running(&self) -> &[Xid] {
        &self.xip
    }

    /// Whether the tuple whose header is `t` is visible; `committed` answers
    /// from the commit log.
    #[inline]
    pub fn sees(&self, t: &[u8], mut committed: impl FnMut(Xid) -> bool) -> bool {
        let xmin = tuple::xmin(t);
        if xmin >= FIRST_NORMAL_XID {
            if self.is_own(xmin) {
                if tuple::cmin(t) >= self.curcid {
                    return false;
                }
            } else if self.in_progress(xmin) || !committed(xmin) {
                return false;
            }
        }
        let xmax = tuple::xmax(t);
        if xmax == INVALID_XID || tuple::infomask(t) & XMAX_LOCK_ONLY != 0 {
            return true;
        }
        if self.is_own(xmax) {
            return tuple::cmax(t) >= self.curcid;
        }
        self.in_progress(xmax) || !committed(xmax)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuple::TupleBuilder;

    fn tuple_of(xmin: Xid, cmin: u32, xmax: Xid, cmax: u32, mask: u16) -> Vec<u8> {
        let mut b = TupleBuilder::new();
        b.begin();
        b.push_i32(1);
        let mut t = b.finish_cid(xmin, cmin).to_vec();
        tuple::set_xmax(&mut t, xmax);
        tuple::set_cmax(&mut t, cmax);
        tuple::set_infomask(&mut t, mask);
        t
    }

    #[test]
    fn rules() {
        // xids 10 (committed), 11 (running), 12 (aborted), 13 own; next 14.
        let snap = Snapshot::new(11, 14, Arc::from([11, 13]), Arc::from([13]), 5, None);
        let committed = |x: Xid| x == 10;
        let sees = |t: &[u8]| snap.sees(t, committed);
        assert!(sees(&tuple_of(10, 0, 0, 0, 0)));
        assert!(!sees(&tuple_of(11, 0, 0, 0, 0)), "running inserter");
        assert!(!sees(&tuple_of(12, 0, 0, 0, 0)), "aborted inserter");
        assert!(
            !sees(&tuple_of(14, 0, 0, 0, 0)),
            "started after the snapshot"
        );
        assert!(sees(&tuple_of(13, 4, 0, 0, 0)), "own earlier command");
        assert!(!sees(&tuple_of(13, 5, 0, 0, 0)), "own current command");
        assert!(!sees(&tuple_of(10, 0, 10, 0, 0)), "committed deleter");
        assert!(sees(&tuple_of(10, 0, 11, 0, 0)), "running deleter");
        assert!(sees(&tuple_of(10, 0, 12, 0, 0)), "aborted deleter");
        assert!(sees(&tuple_of(10, 0, 10, 0, XMAX_LOCK_ONLY)), "locker");
        assert!(
            !sees(&tuple_of(10, 0, 13, 4, 0)),
            "deleted by own earlier command"
        );
        assert!(
            sees(&tuple_of(10, 0, 13, 5, 0)),
            "deleted by own current command"
        );
        assert!(!sees(&tuple_of(13, 1, 13, 2, 0)), "own insert, own delete");
        let later = snap.with_cid(6, Arc::from([13]), None);
        assert!(later.sees(&tuple_of(13, 5, 0, 0, 0), committed));
        assert!(!later.sees(&tuple_of(10, 0, 13, 5, 0), committed));
    }
}
