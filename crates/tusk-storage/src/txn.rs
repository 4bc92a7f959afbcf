//! Transactions: ids, commit status, snapshots and the single-writer rule.
//!
//! Every statement runs as its own transaction (autocommit). Statements that
//! change data take the *writer lock* for their whole run, so there is at most
//! one writing transaction at a time; readers never wait.
//!
//! A writing transaction gets a transaction id (`xid`) from a 32-bit counter.
//! Its commit status lives in the commit log, `pg_xact`: one byte per xid
//! (0 = in progress, 1 = committed, 2 = aborted), kept in memory and written
//! through to the file. The byte for a new xid is written *before* the xid is
//! used, so the file's length always covers every xid that may appear in a
//! tuple, and after a crash the counter resumes past them; xids left "in
//! progress" by a crash count as aborted, since nobody is running them.
//!
//! A [`Snapshot`] is taken at statement start: `xmax` is the first xid not yet
//! assigned, `in_progress` the writer running at that moment (if any) and
//! `own` the statement's own xid. A tuple version is visible when its `xmin`
//! committed before the snapshot and its `xmax` (if any) did not. A statement
//! does not see its own insertions, which is what `INSERT INTO t SELECT ... FROM t`
//! needs.

use crate::wal::{Lsn, RecordType, Wal};
use crate::StorageError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

pub type Xid = u32;

/// Invalid xid (an empty `xmax`).
pub const INVALID_XID: Xid = 0;
/// xids below this are "frozen": always committed.
pub const FIRST_NORMAL_XID: Xid = 3;

const IN_PROGRESS: u8 = 0;
const COMMITTED: u8 = 1;
const ABORTED: u8 = 2;

pub struct TxnManager {
    clog_file: File,
    status: RwLock<Vec<u8>>,
    next_xid: AtomicU32,
    /// Xid of the running writer, or 0.
    active_writer: AtomicU32,
    writer_lock: Mutex<()>,
    /// The WAL an aborting writer logs its abort to (set after recovery).
    wal: OnceLock<Arc<Wal>>,
}

/// What a statement may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub xmax: Xid,
    pub in_progress: Xid,
    pub own: Xid,
}

impl TxnManager {
    pub fn open(path: &Path) -> Result<TxnManager, StorageError> {
        let clog_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| {
                StorageError::io(format!("could not open file \"{}\"", path.display()), e)
            })?;
        let mut status = std::fs::read(path).map_err(|e| {
            StorageError::io(format!("could not read file \"{}\"", path.display()), e)
        })?;
        // Anything still "in progress" was cut off by a crash.
        for s in status.iter_mut() {
            if *s == IN_PROGRESS {
                *s = ABORTED;
            }
        }
        let next = (status.len() as u32).max(FIRST_NORMAL_XID);
        status.resize(next as usize, COMMITTED);
        Ok(TxnManager {
            clog_file,
            status: RwLock::new(status),
            next_xid: AtomicU32::new(next),
            active_writer: AtomicU32::new(INVALID_XID),
            writer_lock: Mutex::new(()),
            wal: OnceLock::new(),
        })
    }

    /// Attaches the WAL: from now on a writer that aborts after writing WAL
    /// logs an abort record (see [`WriteTxn`]).
    pub fn set_wal(&self, wal: Arc<Wal>) {
        let _ = self.wal.set(wal);
    }

    /// A snapshot for a read-only statement.
    pub fn snapshot(&self) -> Snapshot {
        // Read the writer first: if it commits between the two loads its xid is
        // below `xmax` and committed, which is correct either way.
        let in_progress = self.active_writer.load(Ordering::Acquire);
        Snapshot {
            xmax: self.next_xid.load(Ordering::Acquire),
            in_progress,
            own: INVALID_XID,
        }
    }

    /// Starts the one writing transaction; waits for the current writer.
    pub fn begin_write(&self) -> Result<WriteTxn<'_>, StorageError> {
        let guard = self.writer_lock.lock().unwrap_or_else(|e| e.into_inner());
        let xid = self.next_xid.load(Ordering::Acquire);
        if xid == u32::MAX {
            return Err(StorageError::Other(
                "database is not accepting commands to avoid wraparound data loss".into(),
            ));
        }
        {
            let mut st = self.status.write().unwrap_or_else(|e| e.into_inner());
            st.push(IN_PROGRESS);
        }
        self.write_status(xid, IN_PROGRESS)?;
        self.active_writer.store(xid, Ordering::Release);
        self.next_xid.store(xid + 1, Ordering::Release);
        Ok(WriteTxn {
            mgr: self,
            xid,
            wal_start: self.wal.get().map(|w| w.insert_lsn()),
            _guard: guard,
            done: false,
        })
    }

    fn write_status(&self, xid: Xid, s: u8) -> Result<(), StorageError> {
        self.clog_file
            .write_all_at(&[s], xid as u64)
            .map_err(|e| StorageError::io("could not write commit log".to_string(), e))
    }

    fn set_status(&self, xid: Xid, s: u8) {
        let mut st = self.status.write().unwrap_or_else(|e| e.into_inner());
        st[xid as usize] = s;
    }

    /// Whether `xid` committed.
    #[inline]
    pub fn is_committed(&self, xid: Xid) -> bool {
        if xid < FIRST_NORMAL_XID {
            return true;
        }
        let st = self.status.read().unwrap_or_else(|e| e.into_inner());
        st.get(xid as usize).copied() == Some(COMMITTED)
    }

    /// Takes the writer lock without starting a transaction (checkpoints
    /// run under it, so no page changes while they run).
    pub fn lock_writer(&self) -> MutexGuard<'_, ()> {
        self.writer_lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the outcomes WAL replay found: each `(xid, committed)` pair,
    /// growing the commit log (and the xid counter) if the crash lost its
    /// tail. The changed statuses reach the file in one write of the span
    /// from the smallest to the largest xid given (the in-memory log is the
    /// file's contents plus these changes, so the rest of the span is
    /// rewritten unchanged): replay ends with thousands of outcomes, and a
    /// write per xid was a tenth of a short recovery.
    pub fn recover_statuses(
        &self,
        outcomes: impl IntoIterator<Item = (Xid, bool)>,
    ) -> Result<(), StorageError> {
        let mut st = self.status.write().unwrap_or_else(|e| e.into_inner());
        let mut span: Option<(Xid, Xid)> = None;
        for (xid, committed) in outcomes {
            if xid < FIRST_NORMAL_XID {
                continue;
            }
            if st.len() <= xid as usize {
                st.resize(xid as usize + 1, ABORTED);
            }
            st[xid as usize] = if committed { COMMITTED } else { ABORTED };
            span = Some(span.map_or((xid, xid), |(lo, hi)| (lo.min(xid), hi.max(xid))));
        }
        let Some((lo, hi)) = span else {
            return Ok(());
        };
        self.clog_file
            .write_all_at(&st[lo as usize..=hi as usize], lo as u64)
            .map_err(|e| StorageError::io("could not write commit log".to_string(), e))?;
        self.next_xid.fetch_max(hi + 1, Ordering::AcqRel);
        Ok(())
    }

    pub fn sync(&self) -> Result<(), StorageError> {
        self.clog_file
            .sync_data()
            .map_err(|e| StorageError::io("could not fsync commit log".to_string(), e))
    }
}

impl Snapshot {
    /// Whether a tuple with these header xids is visible, given `committed`.
    #[inline]
    pub fn sees(&self, xmin: Xid, xmax: Xid, mut committed: impl FnMut(Xid) -> bool) -> bool {
        let inserted = xmin < FIRST_NORMAL_XID
            || (xmin < self.xmax
                && xmin != self.in_progress
                && xmin != self.own
                && committed(xmin));
        if !inserted {
            return false;
        }
        xmax == INVALID_XID
            || xmax >= self.xmax
            || xmax == self.in_progress
            || xmax == self.own
            || !committed(xmax)
    }
}

/// The running writer. Dropping it without [`WriteTxn::commit`] aborts:
/// `pg_xact` says aborted and, if the transaction wrote WAL (a statement that
/// failed half-way), an abort record follows its records, so that recovery
/// sees the outcome in the WAL itself rather than inferring it from a missing
/// commit record. The abort record is not flushed: were it lost in a crash,
/// recovery would still abort the transaction for want of a commit record.
pub struct WriteTxn<'a> {
    mgr: &'a TxnManager,
    xid: Xid,
    /// End of WAL when the transaction began (None without a WAL). Writers
    /// run one at a time and checkpoints wait for the writer, so any WAL
    /// inserted since is this transaction's.
    wal_start: Option<Lsn>,
    _guard: MutexGuard<'a, ()>,
    done: bool,
}

impl WriteTxn<'_> {
    pub fn xid(&self) -> Xid {
        self.xid
    }

    /// The statement's snapshot: everything committed before it, not its own work.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            xmax: self.xid + 1,
            in_progress: INVALID_XID,
            own: self.xid,
        }
    }

    /// Marks the transaction committed. The caller has written its pages out
    /// (or logged them) before calling this.
    pub fn commit(mut self) -> Result<(), StorageError> {
        self.mgr.write_status(self.xid, COMMITTED)?;
        self.mgr.set_status(self.xid, COMMITTED);
        self.done = true;
        Ok(())
    }
}

impl Drop for WriteTxn<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let (Some(wal), Some(start)) = (self.mgr.wal.get(), self.wal_start) {
                if wal.insert_lsn() != start {
                    let _ = wal.insert(RecordType::Abort, self.xid, None, false, &[]);
                }
            }
            self.mgr.set_status(self.xid, ABORTED);
            let _ = self.mgr.write_status(self.xid, ABORTED);
        }
        self.mgr.active_writer.store(INVALID_XID, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visibility_and_crash_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pg_xact");
        let (x1, x2);
        {
            let m = TxnManager::open(&path).unwrap();
            let t = m.begin_write().unwrap();
            x1 = t.xid();
            let during = m.snapshot();
            assert!(!during.sees(x1, 0, |x| m.is_committed(x)));
            t.commit().unwrap();
            let after = m.snapshot();
            assert!(after.sees(x1, 0, |x| m.is_committed(x)));
            assert!(
                !during.sees(x1, 0, |x| m.is_committed(x)),
                "old snapshot must not see it"
            );
            let t2 = m.begin_write().unwrap();
            x2 = t2.xid();
            assert!(!t2.snapshot().sees(x2, 0, |x| m.is_committed(x)));
            assert!(t2.snapshot().sees(x1, x2, |x| m.is_committed(x)));
            std::mem::forget(t2); // simulate a crash: status stays "in progress" on disk
        }
        let m = TxnManager::open(&path).unwrap();
        assert!(m.is_committed(x1));
        assert!(!m.is_committed(x2));
        let t = m.begin_write().unwrap();
        assert!(t.xid() > x2);
    }
}
