//! Unique checks (PostgreSQL's `_bt_check_unique`) and the conflict
//! lookup of INSERT ... ON CONFLICT.
//!
//! An insertion into a unique index whose key has no NULL (NULLs never
//! conflict: PostgreSQL's default NULLS DISTINCT) first looks at every
//! entry with an equal key, under the index's relation mutex, and at the
//! heap row each one points to. The entry's TID is the root of a HOT chain
//! (a non-key update keeps one index entry per chain), so the chain is
//! walked for a version that is *live for the check*, as PostgreSQL's
//! dirty snapshot sees it:
//!
//! * inserted by the writer itself: live, unless the writer also deleted it;
//! * inserted by a transaction still running: live — wait for it;
//! * inserted by an aborted one: not live;
//! * deleted (or updated away) by the writer: not live; by a running
//!   transaction: live — wait for it; by a committed one: not live (the
//!   chain goes on to the newer version); by an aborted one, or only
//!   locked: live.
//!
//! A live version that needs no wait is a conflict:
//! [`InsertOutcome::Conflict`] with its TID, and nothing is inserted. If
//! some version needs a wait, the mutex is let go, the writer waits for
//! that transaction through its xid lock ([`IndexWriter::wait_for_xid`]:
//! lock_timeout, deadlock detection and cancellation apply), and the check
//! starts over — the other inserter may have committed (a conflict), or
//! aborted (no conflict), or its delete may have committed (no conflict).
//! When nothing conflicts the entry is inserted before the mutex is let go,
//! so two inserters of one key never both pass.
//!
//! [`Btree::find_conflict`] is the same check without the insertion: the
//! first step of INSERT ... ON CONFLICT, which the SQL layer runs as
//! PostgreSQL does:
//!
//! 1. `find_conflict` for the arbiter index's key: `Some(tid)` — DO NOTHING
//!    skips the row, DO UPDATE locks and updates the version at `tid`
//!    (`Transaction::lock_row` / `update`, following it if it changed);
//! 2. `None` — insert the heap row, then its index entries; if an arbiter
//!    index answers `Conflict` after all (another session inserted the key
//!    in between), delete the heap row just inserted (`Transaction::delete`
//!    of an own row) and go back to 1.

use super::keyenc::EncodedKey;
use super::node::{self, NO_BLOCK};
use super::search::Target;
use super::{corrupt, Btree};
use crate::clog::XidStatus;
use crate::heap::Tid;
use crate::lock::{LockOwner, WaitOptions};
use crate::page;
use crate::tuple::{self, XMAX_LOCK_ONLY};
use crate::txn::{Xid, FIRST_NORMAL_XID, INVALID_XID};
use crate::xact::{lock_error, Transaction};
use crate::{Database, StorageError};
use std::sync::Arc;

/// The writer an index insertion works for: a [`Transaction`], or a
/// single-statement writer ([`StatementWriter`]).
pub trait IndexWriter {
    /// The xid the insertion's WAL records carry.
    fn xid(&mut self) -> Result<Xid, StorageError>;
    /// Whether `xid` is the writer's own (its rows never make it wait).
    fn is_own_xid(&self, xid: Xid) -> bool;
    /// Waits until transaction `xid` has ended.
    fn wait_for_xid(&mut self, xid: Xid) -> Result<(), StorageError>;
}

impl IndexWriter for Transaction {
    fn xid(&mut self) -> Result<Xid, StorageError> {
        Transaction::xid(self)
    }
    fn is_own_xid(&self, xid: Xid) -> bool {
        Transaction::is_own_xid(self, xid)
    }
    fn wait_for_xid(&mut self, xid: Xid) -> Result<(), StorageError> {
        Transaction::wait_for_xid(self, xid).map_err(|e| lock_error(e, "transaction"))
    }
}

/// A single-statement writer (`WriteTxn`'s xid) as an [`IndexWriter`]: it
/// waits for other transactions through a lock owner of its own.
pub struct StatementWriter<'d> {
    db: &'d Database,
    xid: Xid,
    owner: Arc<LockOwner>,
    wait: WaitOptions,
}

impl<'d> StatementWriter<'d> {
    pub fn new(db: &'d Database, xid: Xid) -> StatementWriter<'d> {
        StatementWriter {
            db,
            xid,
            owner: LockOwner::new(0),
            wait: WaitOptions::default(),
        }
    }
}

impl IndexWriter for StatementWriter<'_> {
    fn xid(&mut self) -> Result<Xid, StorageError> {
        Ok(self.xid)
    }
    fn is_own_xid(&self, xid: Xid) -> bool {
        xid == self.xid
    }
    fn wait_for_xid(&mut self, xid: Xid) -> Result<(), StorageError> {
        let own = self.xid;
        crate::xact::wait_for_xid_as(self.db, &self.owner, &self.wait, |x| x == own, xid)
            .map_err(|e| lock_error(e, "transaction"))
    }
}

/// What an insertion into a unique index did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOutcome {
    Inserted,
    /// A live row has an equal key: the version at `existing` (of the heap
    /// relation). Nothing was inserted.
    Conflict {
        existing: Tid,
    },
}

/// What the check found among the entries with an equal key.
pub(super) enum Check {
    Clear,
    Conflict(Tid),
    Wait(Xid),
}

/// Whether a version is live for the check (see the module doc).
enum Liveness {
    Dead,
    Live,
    Wait(Xid),
}

fn liveness(t: &[u8], w: &dyn IndexWriter, status: impl Fn(Xid) -> XidStatus) -> Liveness {
    let running = |s| matches!(s, XidStatus::InProgress | XidStatus::SubCommitted);
    let xmin = tuple::xmin(t);
    let xmax = if tuple::infomask(t) & XMAX_LOCK_ONLY != 0 {
        INVALID_XID
    } else {
        tuple::xmax(t)
    };
    if xmin >= FIRST_NORMAL_XID {
        if w.is_own_xid(xmin) {
            return if xmax != INVALID_XID && w.is_own_xid(xmax) {
                Liveness::Dead
            } else {
                Liveness::Live
            };
        }
        match status(xmin) {
            XidStatus::Aborted => return Liveness::Dead,
            s if running(s) => return Liveness::Wait(xmin),
            _ => {}
        }
    }
    if xmax == INVALID_XID {
        return Liveness::Live;
    }
    if w.is_own_xid(xmax) {
        return Liveness::Dead;
    }
    match status(xmax) {
        XidStatus::Committed => Liveness::Dead,
        XidStatus::Aborted => Liveness::Live,
        _ => Liveness::Wait(xmax),
    }
}

impl Btree<'_> {
    /// Inserts (`key`, `tid`) into a unique index of heap relation
    /// `heap_rel` unless a live row has an equal key (see the module doc).
    /// A key with a NULL is inserted without a check.
    pub fn insert_unique(
        &self,
        db: &Database,
        heap_rel: u32,
        key: &EncodedKey,
        tid: Tid,
        w: &mut dyn IndexWriter,
    ) -> Result<InsertOutcome, StorageError> {
        let xid = w.xid()?;
        if key.has_null {
            self.insert(&key.bytes, tid, xid)?;
            return Ok(InsertOutcome::Inserted);
        }
        loop {
            let mutex = self.pool.relation_mutex(self.rel);
            let one_inserter = mutex.lock().unwrap_or_else(|e| e.into_inner());
            match self.check(db, heap_rel, &key.bytes, Some(tid), w)? {
                Check::Clear => {
                    self.insert_locked(&key.bytes, tid, xid)?;
                    return Ok(InsertOutcome::Inserted);
                }
                Check::Conflict(existing) => return Ok(InsertOutcome::Conflict { existing }),
                Check::Wait(x) => {
                    drop(one_inserter);
                    w.wait_for_xid(x)?;
                }
            }
        }
    }

    /// The version of a live row of `heap_rel` whose key equals `key`, if
    /// any, waiting for running writers of such rows first (INSERT ... ON
    /// CONFLICT; see the module doc). `None` for a key with a NULL.
    pub fn find_conflict(
        &self,
        db: &Database,
        heap_rel: u32,
        key: &EncodedKey,
        w: &mut dyn IndexWriter,
    ) -> Result<Option<Tid>, StorageError> {
        if key.has_null {
            return Ok(None);
        }
        loop {
            let mutex = self.pool.relation_mutex(self.rel);
            let one_inserter = mutex.lock().unwrap_or_else(|e| e.into_inner());
            match self.check(db, heap_rel, &key.bytes, None, w)? {
                Check::Clear => return Ok(None),
                Check::Conflict(t) => return Ok(Some(t)),
                Check::Wait(x) => {
                    drop(one_inserter);
                    w.wait_for_xid(x)?;
                }
            }
        }
    }

    /// Looks at the rows of every entry whose key is `key` (the caller
    /// holds the relation mutex); `skip` is the TID being inserted.
    pub(super) fn check(
        &self,
        db: &Database,
        heap_rel: u32,
        key: &[u8],
        skip: Option<Tid>,
        w: &dyn IndexWriter,
    ) -> Result<Check, StorageError> {
        let tids = self.equal_entries(key)?;
        let status = |x| db.txn.clog.status(x);
        let mut wait = None;
        for tid in tids {
            if Some(tid) == skip {
                continue;
            }
            let buf = db.pool.read_buffer(heap_rel, tid.block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if page::is_new(p) {
                continue;
            }
            for (item, t) in crate::prune::hot_chain(p, tid.item) {
                match liveness(t, w, status) {
                    Liveness::Dead => continue,
                    Liveness::Live => {
                        return Ok(Check::Conflict(Tid {
                            block: tid.block,
                            item,
                        }))
                    }
                    Liveness::Wait(x) => {
                        wait.get_or_insert(x);
                        break;
                    }
                }
            }
        }
        Ok(wait.map_or(Check::Clear, Check::Wait))
    }

    /// The TIDs of the entries whose key is `key`, read leaf by leaf along
    /// the right links (the caller holds the relation mutex, so no split
    /// moves them meanwhile).
    fn equal_entries(&self, key: &[u8]) -> Result<Vec<Tid>, StorageError> {
        let target = Target::Prefix {
            prefix: key,
            strict: false,
        };
        let mut block = self.descend(&target, false)?.leaf;
        let mut tids = Vec::new();
        loop {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if !node::is_node(p) || !node::is_leaf(p) {
                return Err(corrupt(self.rel, block));
            }
            let n = node::count(p);
            let mut i = target.position(p);
            while i < n {
                let e = node::entry(p, i);
                if e.key != key {
                    return Ok(tids);
                }
                tids.push(e.tid);
                i += 1;
            }
            match node::right(p) {
                NO_BLOCK => return Ok(tids),
                r => block = r,
            }
        }
    }
}
