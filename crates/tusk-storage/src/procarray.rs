//! The proc array: running transactions, xid assignment, snapshots and the
//! VACUUM horizon.
//!
//! A transaction takes a slot here when it is assigned its first xid (at
//! its first write, as in PostgreSQL) and gives it back at its end. A slot
//! lists the xids the transaction holds: the top-level xid first and then
//! the xids of its subtransactions that were not rolled back. A read-only
//! transaction never takes one: it has no xids for a snapshot to list, and
//! its snapshots keep the VACUUM horizon back through their own
//! registrations (below). That keeps the array's one mutex out of the
//! begin and end of the many short read-only transactions of a busy server.
//!
//! One mutex guards the array and the xid counter. That makes the three
//! operations that must be atomic with respect to each other simple:
//!
//! * *assigning an xid* bumps the counter and enters the xid in the slot in
//!   one step, so a snapshot either sees the xid running or has an `xmax`
//!   at or below it;
//! * *taking a snapshot* copies every slot's xids and the counter;
//! * *ending a transaction* empties its slot. The caller first makes the
//!   commit log final (commit or abort), so a snapshot that no longer lists
//!   the xids finds their outcome there.
//!
//! The sections are short (a snapshot copies a few dozen xids); a machine
//! running hundreds of writers would want PostgreSQL's finer scheme, with
//! the xids in a dense array read under a shared lock.
//!
//! ## Horizon
//!
//! A snapshot registers its `xmin` in a multiset here for as long as it
//! lives ([`Registration`]). [`ProcArray::horizon`] is the smallest of the
//! registered xmins, the running xids and the counter: every transaction
//! below it has ended and every live or future snapshot sees its outcome.
//! A tuple deleted by a committed xid below the horizon is invisible to
//! everybody, which is what VACUUM may remove. A snapshot taken after the
//! horizon was computed has an `xmin` at least as large (its running xids
//! were running then or assigned later), so the horizon never moves back
//! under a VACUUM that uses it.

use crate::clog::CommitLog;
use crate::snapshot::{CommandId, Snapshot};
use crate::txn::{Xid, FIRST_NORMAL_XID};
use crate::StorageError;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The xid counter stops this far from the end of the 32-bit space (tusk
/// does not freeze tuples: an xid is never reused).
const WRAPAROUND_MARGIN: Xid = 1_000_000;

pub struct ProcArray {
    inner: Mutex<Procs>,
}

struct Procs {
    next_xid: Xid,
    slots: Vec<Option<Vec<Xid>>>,
    free: Vec<u32>,
    /// xmin -> number of live snapshots with it.
    registered: BTreeMap<Xid, usize>,
}

/// A transaction's slot in the proc array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcSlot(u32);

/// Keeps a snapshot's `xmin` registered (see the module doc).
pub struct Registration {
    procs: Arc<ProcArray>,
    xmin: Xid,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut p = self.procs.lock();
        if let Some(n) = p.registered.get_mut(&self.xmin) {
            *n -= 1;
            if *n == 0 {
                p.registered.remove(&self.xmin);
            }
        }
    }
}

impl ProcArray {
    pub fn new(next_xid: Xid) -> Arc<ProcArray> {
        Arc::new(ProcArray {
            inner: Mutex::new(Procs {
                next_xid: next_xid.max(FIRST_NORMAL_XID),
                slots: Vec::new(),
                free: Vec::new(),
                registered: BTreeMap::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Procs> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a transaction about to be assigned its first xid.
    pub fn begin(&self) -> ProcSlot {
        let mut p = self.lock();
        match p.free.pop() {
            Some(i) => {
                p.slots[i as usize] = Some(Vec::new());
                ProcSlot(i)
            }
            None => {
                p.slots.push(Some(Vec::new()));
                ProcSlot(p.slots.len() as u32 - 1)
            }
        }
    }

    /// Assigns the next xid to the transaction in `slot` (its top-level xid
    /// or a sub-xid), making room for its status in `clog` first.
    pub fn assign(&self, slot: ProcSlot, clog: &CommitLog) -> Result<Xid, StorageError> {
        let mut p = self.lock();
        let xid = p.next_xid;
        if xid >= Xid::MAX - WRAPAROUND_MARGIN {
            return Err(StorageError::Other(
                "database is not accepting commands to avoid wraparound data loss".into(),
            ));
        }
        clog.extend_to(xid);
        p.next_xid = xid + 1;
        p.slots[slot.0 as usize]
            .as_mut()
            .expect("assigning an xid to an ended transaction")
            .push(xid);
        Ok(xid)
    }

    /// Removes `xids` (a rolled-back subtransaction's) from `slot`; their
    /// aborted status is already in the commit log.
    pub fn remove_xids(&self, slot: ProcSlot, xids: &[Xid]) {
        let mut p = self.lock();
        if let Some(s) = p.slots[slot.0 as usize].as_mut() {
            s.retain(|x| !xids.contains(x));
        }
    }

    /// Ends the transaction in `slot`; its outcome is in the commit log.
    pub fn end(&self, slot: ProcSlot) {
        let mut p = self.lock();
        p.slots[slot.0 as usize] = None;
        p.free.push(slot.0);
    }

    /// A snapshot for command `curcid` of a transaction whose xids are `own`
    /// (ascending; empty for none), registered while it lives.
    pub fn snapshot(self: &Arc<Self>, own: Arc<[Xid]>, curcid: CommandId) -> Snapshot {
        let mut p = self.lock();
        let mut xip: Vec<Xid> = p.slots.iter().flatten().flatten().copied().collect();
        xip.sort_unstable();
        let xmax = p.next_xid;
        let xmin = xip.first().copied().unwrap_or(xmax);
        *p.registered.entry(xmin).or_insert(0) += 1;
        drop(p);
        let reg = Registration {
            procs: self.clone(),
            xmin,
        };
        let xip = if xip.is_empty() {
            Snapshot::no_xids()
        } else {
            Arc::from(xip)
        };
        Snapshot::new(xmin, xmax, xip, own, curcid, Some(reg))
    }

    /// A further registration of `xmin` (a copy of a snapshot that lives on
    /// its own, such as REPEATABLE READ's per-statement copies).
    pub fn register(self: &Arc<Self>, xmin: Xid) -> Registration {
        *self.lock().registered.entry(xmin).or_insert(0) += 1;
        Registration {
            procs: self.clone(),
            xmin,
        }
    }

    /// The oldest xid any running transaction or live snapshot may still
    /// consider running (see the module doc).
    pub fn horizon(&self) -> Xid {
        let p = self.lock();
        let mut h = p.next_xid;
        if let Some((&x, _)) = p.registered.iter().next() {
            h = h.min(x);
        }
        for x in p.slots.iter().flatten().flatten() {
            h = h.min(*x);
        }
        h
    }

    /// The next xid to be assigned.
    pub fn next_xid(&self) -> Xid {
        self.lock().next_xid
    }

    /// Moves the counter to at least `xid` (recovery found xids up to
    /// `xid - 1` in the WAL).
    pub fn advance_next_xid(&self, xid: Xid) {
        let mut p = self.lock();
        p.next_xid = p.next_xid.max(xid);
    }

    /// Whether `xid` belongs to a running transaction.
    pub fn is_running(&self, xid: Xid) -> bool {
        self.lock()
            .slots
            .iter()
            .flatten()
            .flatten()
            .any(|&x| x == xid)
    }

    /// Number of transactions with a slot (those holding xids).
    pub fn transactions(&self) -> usize {
        self.lock().slots.iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_and_horizon() {
        let dir = tempfile::tempdir().unwrap();
        let (clog, next) = CommitLog::open(&dir.path().join("pg_xact")).unwrap();
        let pa = ProcArray::new(next);
        let a = pa.begin();
        let b = pa.begin();
        let xa = pa.assign(a, &clog).unwrap();
        let xb = pa.assign(b, &clog).unwrap();
        let sb = pa.assign(b, &clog).unwrap();
        let s = pa.snapshot(Arc::from([]), 0);
        assert_eq!((s.xmin, s.xmax), (xa, sb + 1));
        assert!(s.in_progress(xa) && s.in_progress(xb) && s.in_progress(sb));
        assert_eq!(pa.horizon(), xa);
        clog.commit_tree(xa, &[]);
        pa.end(a);
        assert_eq!(pa.horizon(), xa, "the snapshot still holds it");
        drop(s);
        assert_eq!(pa.horizon(), xb);
        pa.remove_xids(b, &[sb]);
        assert!(!pa.is_running(sb));
        let s2 = pa.snapshot(Arc::from([xb]), 3);
        assert!(!s2.in_progress(xa));
        assert!(s2.is_own(xb));
        pa.end(b);
        drop(s2);
        assert_eq!(pa.horizon(), pa.next_xid());
        assert_eq!(pa.begin(), b, "slots are reused");
    }
}
