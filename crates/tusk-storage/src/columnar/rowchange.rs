//! Deleting, updating and locking rows of row groups: `heapam` for
//! columnar rows.
//!
//! `Transaction::delete`, `update`, `lock_row` and `lock_latest` send a TID
//! that is a [`RowId`] here; TIDs of the delta's rows stay with `heapam`.
//! The protocol is the heap's (see `heapam`), with the row's `xmax` read
//! from and written to the table's [`Claims`] instead of the tuple, under
//! the claims' mutex where the heap holds the page lock:
//!
//! * the claim tells what the heap's check would tell: invisible or
//!   changed by this transaction (`SelfModified`), deleted or updated by a
//!   committed transaction (`Deleted`, `Updated` with the new version),
//!   busy (a running transaction's conflicting claim, or a conflicting
//!   shared locker), or free;
//! * a busy row is waited for as a heap row is: the tuple lock, then each
//!   holder's xid lock, then the check again;
//! * a free row gets the claim: a delete or update stamps this (sub)xid
//!   and command id; an update then inserts the new version into the delta
//!   and records its TID in the claim, so that a READ COMMITTED writer
//!   that waited follows it ([`Transaction::lock_latest`]); an exclusive
//!   lock stamps a lock-only claim, a shared one registers in the
//!   database's `ShareLocks` and marks the claim shared.
//!
//! A delete (or the old version of an update) also becomes a pending
//! deletion of the transaction, written to the metadata heap as a deletion
//! entry when the command ends ([`Transaction::next_command`], or commit):
//! from then on snapshots that see this command see the row deleted.

use super::claims::{Claim, Claims, Extra};
use super::meta::{self, MetaEntry};
use super::RowId;
use crate::clog::XidStatus;
use crate::heap::{HeapInserter, Tid};
use crate::heapam::{Change, LatestOutcome, RowWait, TmResult};
use crate::lock::LockTag;
use crate::rowlock::{RowKey, RowLockMode};
use crate::snapshot::CommandId;
use crate::tuple::{self, XmaxState};
use crate::txn::{Xid, INVALID_XID};
use crate::xact::{lock_error, Transaction};
use crate::StorageError;

/// A row deleted by a command whose deletion entry is not written yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PendingDelete {
    rel: u32,
    xid: Xid,
    cid: CommandId,
    row: RowId,
}

/// What the check found.
enum Verdict {
    Done(TmResult),
    Free,
    Busy(Vec<Xid>),
}

impl Transaction {
    fn check_claim(&self, key: RowKey, claim: Option<Claim>, want: RowLockMode) -> Verdict {
        let status = |x| self.db.txn.clog.status(x);
        let mut busy = Vec::new();
        let Some(c) = claim else {
            return Verdict::Free;
        };
        if c.xid != INVALID_XID {
            if c.extra.lock_only {
                let held = if c.extra.strong {
                    RowLockMode::Update
                } else {
                    RowLockMode::NoKeyUpdate
                };
                if !self.is_own_xid(c.xid)
                    && status(c.xid) == XidStatus::InProgress
                    && held.conflicts_with(want)
                {
                    busy.push(c.xid);
                }
            } else if self.is_own_xid(c.xid) {
                return Verdict::Done(if c.cid >= self.command_id() {
                    TmResult::SelfModified { cmax: c.cid }
                } else {
                    TmResult::Invisible
                });
            } else {
                match status(c.xid) {
                    XidStatus::InProgress | XidStatus::SubCommitted => busy.push(c.xid),
                    XidStatus::Committed => {
                        return Verdict::Done(match c.extra.next {
                            Some(next) => TmResult::Updated { next },
                            None => TmResult::Deleted,
                        })
                    }
                    XidStatus::Aborted => {}
                }
            }
        }
        if c.extra.shared {
            let running = |x| status(x) == XidStatus::InProgress;
            for (x, m) in self.db.share_locks.lockers(key, running) {
                if !self.is_own_xid(x) && m.conflicts_with(want) {
                    busy.push(x);
                }
            }
        }
        if busy.is_empty() {
            Verdict::Free
        } else {
            Verdict::Busy(busy)
        }
    }

    /// `heapam`'s `modify` for a row of a row group of table `rel` (see
    /// the module doc).
    pub(crate) fn columnar_modify(
        &mut self,
        rel: u32,
        row: RowId,
        change: Change<'_>,
        wait: RowWait,
    ) -> Result<(TmResult, Option<Tid>), StorageError> {
        let tid = row.to_tid();
        let key = RowKey { rel, tid };
        let want = change.mode();
        let table = self.db.columnar.table(rel);
        let tuple_tag = LockTag::Tuple {
            rel,
            block: tid.block,
            item: tid.item,
        };
        let mut have_tuple_lock = false;
        let result = loop {
            let busy = {
                let mut claims = table.claims();
                let current = claims.get(row);
                match self.check_claim(key, current, want) {
                    Verdict::Done(r) => break Ok((r, None)),
                    Verdict::Free => break self.claim(&mut claims, rel, row, current, &change),
                    Verdict::Busy(xids) => xids,
                }
            };
            if wait != RowWait::Block {
                break Ok((TmResult::WouldBlock, None));
            }
            if !have_tuple_lock {
                if let Err(e) = self.lock(tuple_tag.clone(), want.tuple_lock_mode(), false) {
                    break Err(lock_error(e, &format!("row in relation {rel}")));
                }
                have_tuple_lock = true;
            }
            if let Some(e) = busy.into_iter().find_map(|x| self.wait_for_xid(x).err()) {
                break Err(lock_error(e, &format!("row in relation {rel}")));
            }
        };
        if have_tuple_lock {
            self.unlock(&tuple_tag, want.tuple_lock_mode());
        }
        let (result, new_tid) = result?;
        // An update's new version goes into the delta once the row is ours.
        if let (TmResult::Ok, Change::Update { new, .. }) = (result, &change) {
            let next = self.insert_new_version(rel, new)?;
            let mut claims = table.claims();
            if let Some(mut c) = claims.get(row) {
                c.extra.next = Some(next);
                claims.set(row, c);
            }
            return Ok((TmResult::Ok, Some(next)));
        }
        Ok((result, new_tid))
    }

    /// Makes `change` to the free row `row` (its claims are locked).
    fn claim(
        &mut self,
        claims: &mut Claims,
        rel: u32,
        row: RowId,
        current: Option<Claim>,
        change: &Change<'_>,
    ) -> Result<(TmResult, Option<Tid>), StorageError> {
        let xid = self.xid()?;
        let shared = current.is_some_and(|c| c.extra.shared);
        let own_lock = current
            .filter(|c| c.extra.lock_only && self.is_own_xid(c.xid))
            .map(|c| c.extra.strong);
        match change {
            Change::Delete | Change::Update { .. } => {
                let cid = self.command_id_for_write();
                claims.set(
                    row,
                    Claim {
                        xid,
                        cid,
                        extra: Extra {
                            shared,
                            ..Extra::default()
                        },
                    },
                );
                self.columnar_deletes
                    .push(PendingDelete { rel, xid, cid, row });
                let delta = self.delta(rel);
                if matches!(change, Change::Delete) {
                    delta.deleted += 1;
                } else {
                    delta.updated += 1;
                }
            }
            Change::Lock(mode) if mode.is_exclusive() => {
                let strong = *mode == RowLockMode::Update;
                if own_lock.is_some_and(|s| s || !strong) {
                    return Ok((TmResult::Ok, None));
                }
                claims.set(
                    row,
                    Claim {
                        xid,
                        cid: current.map_or(0, |c| c.cid),
                        extra: Extra {
                            lock_only: true,
                            strong,
                            next: None,
                            shared,
                        },
                    },
                );
            }
            Change::Lock(mode) => {
                if own_lock.is_some() {
                    return Ok((TmResult::Ok, None));
                }
                let key = RowKey {
                    rel,
                    tid: row.to_tid(),
                };
                if self.db.share_locks.add(key, xid, *mode) {
                    self.share_locked.push(key);
                }
                claims.mark_shared(row);
            }
        }
        Ok((TmResult::Ok, None))
    }

    /// Inserts the new version of an updated columnar row into the delta.
    fn insert_new_version(&mut self, rel: u32, new: &[u8]) -> Result<Tid, StorageError> {
        let xid = self.xid()?;
        let cid = self.command_id_for_write();
        let mut t = new.to_vec();
        tuple::set_xmin(&mut t, xid);
        tuple::set_cmin(&mut t, cid);
        XmaxState {
            xmax: INVALID_XID,
            cmax: 0,
            infomask: tuple::infomask(new) & tuple::HAS_NULLS,
            ctid: (0, 0),
        }
        .apply(&mut t);
        let db = self.db.clone();
        let tid = HeapInserter::new(&db.pool, rel).insert(&t)?;
        Ok(tid)
    }

    /// `lock_latest` from a row of a row group: lock it, or follow its
    /// update into the delta.
    pub(crate) fn columnar_lock_latest(
        &mut self,
        rel: u32,
        row: RowId,
        mode: RowLockMode,
        wait: RowWait,
    ) -> Result<LatestOutcome, StorageError> {
        let tid = row.to_tid();
        match self.lock_row(rel, tid, mode, wait)? {
            TmResult::Ok => {
                let table = self.catalog().table_by_oid(rel).cloned();
                let Some(table) = table else {
                    return Ok(LatestOutcome::Deleted);
                };
                match super::fetch::fetch_row(&self.db, &table, row)? {
                    Some(tuple) => Ok(LatestOutcome::Locked { tid, tuple }),
                    None => Ok(LatestOutcome::Deleted),
                }
            }
            // Moved within the table by VACUUM: not followed.
            TmResult::Updated { next } if RowId::from_tid(next).is_some() => {
                Ok(LatestOutcome::Deleted)
            }
            TmResult::Updated { next } => {
                let updater = self
                    .db
                    .columnar
                    .table(rel)
                    .claims()
                    .get(row)
                    .map_or(INVALID_XID, |c| c.xid);
                if self.heap_xmin(rel, next)? != Some(updater) {
                    return Ok(LatestOutcome::Deleted);
                }
                self.lock_latest(rel, next, mode, wait)
            }
            TmResult::Deleted | TmResult::Invisible => Ok(LatestOutcome::Deleted),
            TmResult::SelfModified { cmax } => Ok(LatestOutcome::SelfModified { cmax }),
            TmResult::WouldBlock => Ok(LatestOutcome::WouldBlock),
        }
    }

    /// Writes the deletion entries of the rows deleted by commands that
    /// ended (see the module doc).
    pub(crate) fn flush_columnar_deletes(&mut self) -> Result<(), StorageError> {
        if self.columnar_deletes.is_empty() {
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.columnar_deletes);
        pending.sort_unstable();
        pending.dedup();
        let db = self.db.clone();
        let mut i = 0;
        while i < pending.len() {
            let p = pending[i];
            let n = pending[i..]
                .iter()
                .take_while(|q| {
                    (q.rel, q.xid, q.cid, q.row.group) == (p.rel, p.xid, p.cid, p.row.group)
                })
                .count();
            let entry = MetaEntry::Deletion {
                group: p.row.group,
                rows: pending[i..i + n].iter().map(|q| q.row.row).collect(),
            };
            meta::insert(&db, p.rel, p.xid, p.cid, &entry)?;
            i += n;
        }
        Ok(())
    }
}
