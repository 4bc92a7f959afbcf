//! The commit log (`pg_xact`) and the parents of subtransactions
//! (PostgreSQL's `pg_subtrans`).
//!
//! ## Statuses
//!
//! Every transaction id has a status byte: 0 in progress, 1 committed,
//! 2 aborted, 3 sub-committed. In memory the bytes live in chunks of
//! [`CHUNK`] atomics, allocated the first time an xid of the chunk is
//! assigned (or read from the file) and never freed, so a status lookup is a
//! `OnceLock` load and a byte load: no lock, which matters because every
//! sequential scan looks statuses up. A chunk that does not exist yet
//! belongs to xids never assigned, which read as in progress — no tuple can
//! carry them.
//!
//! ## Committing a tree of transactions atomically
//!
//! A transaction with subtransactions (savepoints) commits all its xids at
//! once. Readers look at single xids, so the statuses change in three steps,
//! as in PostgreSQL's `TransactionIdCommitTree`: the sub-xids become
//! *sub-committed*, then the top xid committed, then the sub-xids committed.
//! A reader that meets a sub-committed xid asks for its parent's status
//! ([`CommitLog::status`] follows the parent links), so it sees either none
//! or all of the tree committed. The protocol is in `xidtree`, with its
//! memory-ordering argument and a loom model. Snapshots never need the links: the whole
//! tree stays in the proc array until its statuses are final (see
//! `procarray`).
//!
//! ## Parents
//!
//! The parent of a sub-xid matters only while its top-level transaction
//! runs: to wait for it (a row locked by a released savepoint waits for the
//! top-level transaction) and to resolve a sub-committed status during the
//! commit above. So parents are kept in memory only, in a map from sub-xid to
//! parent that the top-level transaction empties when it ends; after a crash
//! no such transaction runs. (PostgreSQL keeps `pg_subtrans` in SLRU pages
//! for the same reason without WAL.)
//!
//! ## The file
//!
//! `pg_xact` holds one status byte per xid at offset xid. It is written at
//! checkpoints only: recovery rebuilds every status decided after the
//! checkpoint's redo point from commit and abort records (and aborts every
//! xid that wrote WAL without either). The checkpoint copies the bytes
//! changed since the last write *before* it flushes the WAL, so a
//! committed status reaches the file only after its commit record is
//! durable (this matters for `synchronous_commit = off`). When the file is
//! read at startup every xid left in progress or sub-committed is set
//! aborted: nobody runs it any more.

use crate::txn::{Xid, FIRST_NORMAL_XID};
use crate::xidtree::{self, AtomicU8};
use crate::StorageError;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// Xids per chunk of the in-memory commit log.
pub const CHUNK: usize = 1 << 20;
const CHUNKS: usize = (1usize << 32) / CHUNK;

/// The status of a transaction id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum XidStatus {
    InProgress = 0,
    Committed = 1,
    Aborted = 2,
    /// Part of a committing tree: committed iff its parent is.
    SubCommitted = 3,
}

impl XidStatus {
    pub(crate) fn from_u8(b: u8) -> XidStatus {
        match b {
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            3 => XidStatus::SubCommitted,
            _ => XidStatus::InProgress,
        }
    }
}

pub struct CommitLog {
    file: File,
    chunks: Box<[OnceLock<Box<[AtomicU8]>>]>,
    /// Lowest xid whose status changed since the file was last written
    /// (`u32::MAX`: none).
    dirty_from: AtomicU32,
    /// Parent of each sub-xid whose top-level transaction runs.
    parents: Mutex<HashMap<Xid, Xid>>,
}

impl CommitLog {
    /// Opens `pg_xact`, creating it empty. Returns the log and the number
    /// of xids the file covers (the xid counter resumes there at least).
    pub fn open(path: &Path) -> Result<(CommitLog, Xid), StorageError> {
        let io = |what: &str, e| {
            StorageError::io(format!("could not {what} file \"{}\"", path.display()), e)
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io("open", e))?;
        let bytes = std::fs::read(path).map_err(|e| io("read", e))?;
        let log = CommitLog {
            file,
            chunks: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
            dirty_from: AtomicU32::new(u32::MAX),
            parents: Mutex::new(HashMap::new()),
        };
        let len = u32::try_from(bytes.len())
            .map_err(|_| StorageError::Other("commit log is too large".into()))?;
        for (xid, &b) in bytes.iter().enumerate() {
            let s = match XidStatus::from_u8(b) {
                // Cut off by a crash: nobody runs it any more.
                XidStatus::InProgress | XidStatus::SubCommitted => XidStatus::Aborted,
                s => s,
            };
            if xid as u32 >= FIRST_NORMAL_XID {
                xidtree::store(log.slot(xid as u32), s);
            }
        }
        Ok((log, len.max(FIRST_NORMAL_XID)))
    }

    /// The status byte of `xid`, allocating its chunk.
    fn slot(&self, xid: Xid) -> &AtomicU8 {
        let chunk = self.chunks[xid as usize / CHUNK]
            .get_or_init(|| (0..CHUNK).map(|_| AtomicU8::new(0)).collect());
        &chunk[xid as usize % CHUNK]
    }

    /// Makes sure the status of `xid` can be set without allocating later
    /// (called when the xid is assigned).
    pub fn extend_to(&self, xid: Xid) {
        self.slot(xid);
    }

    /// The status byte of `xid` if its chunk exists.
    #[inline]
    fn existing_slot(&self, xid: Xid) -> Option<&AtomicU8> {
        self.chunks[xid as usize / CHUNK]
            .get()
            .map(|c| &c[xid as usize % CHUNK])
    }

    /// The status of `xid` as stored (sub-committed is not resolved).
    #[inline]
    pub fn raw_status(&self, xid: Xid) -> XidStatus {
        if xid < FIRST_NORMAL_XID {
            return XidStatus::Committed;
        }
        self.existing_slot(xid)
            .map_or(XidStatus::InProgress, xidtree::load)
    }

    /// The status of `xid`; a sub-committed xid has its top-level parent's
    /// status (committed, or still in progress during the commit).
    #[inline]
    pub fn status(&self, xid: Xid) -> XidStatus {
        if xid < FIRST_NORMAL_XID {
            return XidStatus::Committed;
        }
        xidtree::resolve(|x| self.existing_slot(x), |x| self.parent(x), xid)
    }

    fn set(&self, xid: Xid, s: XidStatus) {
        if xid < FIRST_NORMAL_XID {
            return;
        }
        xidtree::store(self.slot(xid), s);
        self.dirty_from.fetch_min(xid, Ordering::AcqRel);
    }

    /// Marks `top` and its sub-xids `subs` committed, atomically for
    /// readers (see the module doc).
    pub fn commit_tree(&self, top: Xid, subs: &[Xid]) {
        xidtree::commit_tree(|x| self.slot(x), top, subs);
        for &x in subs.iter().chain([&top]) {
            self.dirty_from.fetch_min(x, Ordering::AcqRel);
        }
    }

    /// Marks `xids` aborted.
    pub fn abort_all(&self, xids: &[Xid]) {
        for &x in xids {
            self.set(x, XidStatus::Aborted);
        }
    }

    /// Records that `sub` is a subtransaction of `parent`.
    pub fn set_parent(&self, sub: Xid, parent: Xid) {
        self.parents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(sub, parent);
    }

    /// The parent of sub-xid `xid` while its top-level transaction runs.
    pub fn parent(&self, xid: Xid) -> Option<Xid> {
        self.parents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&xid)
            .copied()
    }

    /// Forgets the parents of `subs` (their top-level transaction ended and
    /// their statuses are final).
    pub fn forget_parents(&self, subs: &[Xid]) {
        if subs.is_empty() {
            return;
        }
        let mut p = self.parents.lock().unwrap_or_else(|e| e.into_inner());
        for s in subs {
            p.remove(s);
        }
    }

    /// Sets the statuses recovery found and marks every xid from `from` up
    /// to the largest one given that got no status aborted (assigned before
    /// the crash, no outcome logged). Returns the largest xid given.
    pub fn recover(
        &self,
        outcomes: impl IntoIterator<Item = (Xid, bool)>,
        from: Xid,
    ) -> Option<Xid> {
        let mut hi: Option<Xid> = None;
        let mut set = Vec::new();
        for (xid, committed) in outcomes {
            if xid < FIRST_NORMAL_XID {
                continue;
            }
            hi = Some(hi.map_or(xid, |h| h.max(xid)));
            set.push((xid, committed));
        }
        let hi = hi?;
        for x in from.max(FIRST_NORMAL_XID)..=hi {
            if self.raw_status(x) == XidStatus::InProgress {
                self.set(x, XidStatus::Aborted);
            }
        }
        for (xid, committed) in set {
            let s = if committed {
                XidStatus::Committed
            } else {
                XidStatus::Aborted
            };
            self.set(xid, s);
        }
        Some(hi)
    }

    /// The statuses changed since the last write, up to (not including)
    /// `end`: the first xid and the bytes. The range is marked clean; pass
    /// it to [`CommitLog::write`] (a failed write must be retried by a later
    /// checkpoint, so the caller re-marks it with [`CommitLog::mark_dirty`]).
    pub fn take_dirty(&self, end: Xid) -> Option<(Xid, Vec<u8>)> {
        let from = self.dirty_from.swap(u32::MAX, Ordering::AcqRel);
        if from >= end {
            if from != u32::MAX {
                self.dirty_from.fetch_min(from, Ordering::AcqRel);
            }
            return None;
        }
        let bytes = (from..end)
            .map(|x| self.existing_slot(x).map_or(0, |s| xidtree::load(s) as u8))
            .collect();
        Some((from, bytes))
    }

    pub fn mark_dirty(&self, from: Xid) {
        self.dirty_from.fetch_min(from, Ordering::AcqRel);
    }

    /// Writes status bytes at xid `from` and fsyncs the file.
    pub fn write(&self, from: Xid, bytes: &[u8]) -> Result<(), StorageError> {
        self.file
            .write_all_at(bytes, from as u64)
            .map_err(|e| StorageError::io("could not write commit log".to_string(), e))?;
        self.file
            .sync_data()
            .map_err(|e| StorageError::io("could not fsync commit log".to_string(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_persist_and_in_progress_becomes_aborted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pg_xact");
        {
            let (log, next) = CommitLog::open(&path).unwrap();
            assert_eq!(next, FIRST_NORMAL_XID);
            log.extend_to(10);
            log.commit_tree(5, &[6, 7]);
            log.abort_all(&[8]);
            assert_eq!(log.status(6), XidStatus::Committed);
            assert_eq!(log.status(9), XidStatus::InProgress);
            let (from, bytes) = log.take_dirty(10).unwrap();
            assert_eq!(from, 5);
            log.write(from, &bytes).unwrap();
            assert!(log.take_dirty(10).is_none());
        }
        let (log, next) = CommitLog::open(&path).unwrap();
        assert_eq!(next, 10);
        assert_eq!(log.status(5), XidStatus::Committed);
        assert_eq!(log.status(7), XidStatus::Committed);
        assert_eq!(log.status(8), XidStatus::Aborted);
        assert_eq!(log.status(9), XidStatus::Aborted, "cut off by a crash");
        assert_eq!(log.status(1), XidStatus::Committed, "frozen");
    }

    #[test]
    fn sub_committed_follows_the_parent() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(&dir.path().join("pg_xact")).unwrap();
        log.extend_to(20);
        log.set_parent(11, 10);
        log.set(11, XidStatus::SubCommitted);
        assert_eq!(log.status(11), XidStatus::InProgress);
        log.set(10, XidStatus::Committed);
        assert_eq!(log.status(11), XidStatus::Committed);
        log.forget_parents(&[11]);
        assert_eq!(log.parent(11), None);
        assert_eq!(log.recover([(15, true), (17, false)], 12), Some(17));
        assert_eq!(log.status(12), XidStatus::Aborted);
        assert_eq!(log.status(15), XidStatus::Committed);
        assert_eq!(log.status(16), XidStatus::Aborted);
    }
}
