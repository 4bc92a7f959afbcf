//! Transaction ids, their outcomes, and the single-statement write path.
//!
//! [`TxnManager`] ties together the commit log (`clog`: the status of every
//! xid, `pg_xact`) and the proc array (`procarray`: running transactions,
//! xid assignment, snapshots and VACUUM's horizon). Sessions use it through
//! [`crate::xact::Transaction`], which adds command ids, subtransactions,
//! locks, WAL commit and abort records and transactional DDL; `xact`'s
//! module doc is the guide to the API.
//!
//! ## The single-statement path
//!
//! [`TxnManager::begin_write`] and [`crate::Database::commit`] keep the
//! interface of the time when tusk ran one writing statement at a time: a
//! [`WriteTxn`] is one statement that is its own transaction. Such writers
//! still run one at a time among themselves (they take no row locks and
//! would not notice each other's deletions), but alongside any number of
//! [`crate::xact::Transaction`]s. Its snapshot has command id 0 and the
//! statement's rows are stamped with command id 0, so the statement sees
//! neither its own insertions nor its own deletions.
//!
//! ## Xids
//!
//! Xids are 32-bit and never wrap: the counter refuses to pass 2^32 - 10^6
//! (tusk does not freeze tuples). 0 is invalid, 1 and 2 are "frozen"
//! (always committed), normal xids start at 3. After a crash the counter
//! resumes past every xid in `pg_xact` and in the replayed WAL.

use crate::clog::{CommitLog, XidStatus};
use crate::procarray::{ProcArray, ProcSlot};
use crate::snapshot::Snapshot;
use crate::wal::{RecordType, Wal};
use crate::StorageError;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

pub type Xid = u32;

/// Invalid xid (an empty `xmax`).
pub const INVALID_XID: Xid = 0;
/// xids below this are "frozen": always committed.
pub const FIRST_NORMAL_XID: Xid = 3;

pub struct TxnManager {
    pub clog: CommitLog,
    pub procs: Arc<ProcArray>,
    /// Serialises the single-statement writers ([`WriteTxn`]).
    compat_writer: Mutex<()>,
    /// The WAL aborts are logged to (set after recovery).
    wal: OnceLock<Arc<Wal>>,
}

impl TxnManager {
    pub fn open(path: &Path) -> Result<TxnManager, StorageError> {
        let (clog, next) = CommitLog::open(path)?;
        Ok(TxnManager {
            clog,
            procs: ProcArray::new(next),
            compat_writer: Mutex::new(()),
            wal: OnceLock::new(),
        })
    }

    /// Attaches the WAL: from now on aborts are logged.
    pub fn set_wal(&self, wal: Arc<Wal>) {
        let _ = self.wal.set(wal);
    }

    /// A snapshot for a statement outside any transaction (it sees what was
    /// committed when it was taken).
    pub fn snapshot(&self) -> Snapshot {
        self.procs.snapshot(Snapshot::no_xids(), 0)
    }

    /// Starts a single-statement writer; waits for the current one.
    pub fn begin_write(&self) -> Result<WriteTxn<'_>, StorageError> {
        let guard = self.compat_writer.lock().unwrap_or_else(|e| e.into_inner());
        let slot = self.procs.begin();
        let xid = match self.procs.assign(slot, &self.clog) {
            Ok(x) => x,
            Err(e) => {
                self.procs.end(slot);
                return Err(e);
            }
        };
        Ok(WriteTxn {
            mgr: self,
            slot,
            xid,
            wal_start: self.wal.get().map(|w| w.insert_lsn()),
            _guard: guard,
            done: false,
        })
    }

    /// Whether `xid` committed.
    #[inline]
    pub fn is_committed(&self, xid: Xid) -> bool {
        self.clog.status(xid) == XidStatus::Committed
    }

    /// The status of `xid` (sub-committed resolved through its parent).
    #[inline]
    pub fn status(&self, xid: Xid) -> XidStatus {
        self.clog.status(xid)
    }

    /// The oldest xid a running transaction or live snapshot may consider
    /// running: tuples deleted by committed xids below it are dead to all.
    pub fn horizon(&self) -> Xid {
        self.procs.horizon()
    }

    /// The next xid to be assigned.
    pub fn next_xid(&self) -> Xid {
        self.procs.next_xid()
    }

    /// Sets the outcomes WAL replay found (`(xid, committed)` pairs): every
    /// xid between the end of `pg_xact` and the largest one given that has
    /// no outcome is aborted, and the counter moves past them.
    pub fn recover_statuses(
        &self,
        outcomes: impl IntoIterator<Item = (Xid, bool)>,
    ) -> Result<(), StorageError> {
        let from = self.procs.next_xid();
        if let Some(hi) = self.clog.recover(outcomes, from) {
            self.procs.advance_next_xid(hi + 1);
        }
        Ok(())
    }

    /// Writes the statuses changed since the last call to `pg_xact` and
    /// fsyncs it (checkpoints). The bytes are copied before `wal` is
    /// flushed, so no committed status reaches the file before its commit
    /// record is durable.
    pub fn write_clog(&self, wal: Option<&Wal>) -> Result<(), StorageError> {
        let Some((from, bytes)) = self.clog.take_dirty(self.procs.next_xid()) else {
            return Ok(());
        };
        let res = match wal {
            Some(w) => w.flush_all(),
            None => Ok(()),
        }
        .and_then(|()| self.clog.write(from, &bytes));
        if res.is_err() {
            self.clog.mark_dirty(from);
        }
        res
    }

    /// Logs an abort record for `xid` and its sub-xids `subs` (not
    /// flushed: recovery aborts an xid without a commit record anyway).
    pub(crate) fn log_abort(&self, xid: Xid, subs: &[Xid]) {
        if let Some(wal) = self.wal.get() {
            let payload: Vec<u8> = subs.iter().flat_map(|x| x.to_le_bytes()).collect();
            let _ = wal.insert(RecordType::Abort, xid, None, false, &payload);
        }
    }
}

/// A single-statement writer (see the module doc). Dropping it without
/// [`crate::Database::commit`] aborts it: an abort record follows its
/// records, so recovery finds the outcome in the WAL itself.
pub struct WriteTxn<'a> {
    mgr: &'a TxnManager,
    slot: ProcSlot,
    xid: Xid,
    /// End of WAL when it began: if the WAL did not grow, the writer wrote
    /// nothing and needs no abort record (with other transactions writing,
    /// one may be logged needlessly, which is harmless).
    wal_start: Option<crate::wal::Lsn>,
    _guard: MutexGuard<'a, ()>,
    done: bool,
}

impl WriteTxn<'_> {
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// The statement's snapshot: everything committed before it, not its
    /// own work.
    pub fn snapshot(&self) -> Snapshot {
        self.mgr.procs.snapshot(Arc::from([self.xid]), 0)
    }

    /// Marks the transaction committed; the caller has logged and flushed
    /// its commit record.
    pub fn commit(mut self) -> Result<(), StorageError> {
        self.mgr.clog.commit_tree(self.xid, &[]);
        self.mgr.procs.end(self.slot);
        self.done = true;
        Ok(())
    }
}

impl Drop for WriteTxn<'_> {
    fn drop(&mut self) {
        if !self.done {
            let wrote = match (self.mgr.wal.get(), self.wal_start) {
                (Some(w), Some(start)) => w.insert_lsn() != start,
                _ => false,
            };
            if wrote {
                self.mgr.log_abort(self.xid, &[]);
            }
            self.mgr.clog.abort_all(&[self.xid]);
            self.mgr.procs.end(self.slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tuple::TupleBuilder;

    fn row(xmin: Xid, xmax: Xid) -> Vec<u8> {
        let mut b = TupleBuilder::new();
        b.begin();
        let mut t = b.finish(xmin).to_vec();
        crate::tuple::set_xmax(&mut t, xmax);
        t
    }

    #[test]
    fn visibility_and_crash_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pg_xact");
        let (x1, x2);
        {
            let m = TxnManager::open(&path).unwrap();
            let committed = |x| m.is_committed(x);
            let t = m.begin_write().unwrap();
            x1 = t.xid();
            let during = m.snapshot();
            assert!(!during.sees(&row(x1, 0), committed));
            assert!(!t.snapshot().sees(&row(x1, 0), committed), "own statement");
            t.commit().unwrap();
            let after = m.snapshot();
            assert!(after.sees(&row(x1, 0), committed));
            assert!(
                !during.sees(&row(x1, 0), committed),
                "old snapshot must not see it"
            );
            let t2 = m.begin_write().unwrap();
            x2 = t2.xid();
            assert!(t2.snapshot().sees(&row(x1, x2), committed), "own delete");
            m.write_clog(None).unwrap();
            std::mem::forget(t2); // simulate a crash: status stays "in progress" on disk
        }
        let m = TxnManager::open(&path).unwrap();
        assert!(m.is_committed(x1));
        assert!(!m.is_committed(x2));
        assert_eq!(m.status(x2), XidStatus::Aborted);
        let t = m.begin_write().unwrap();
        assert!(t.xid() > x2);
    }
}
