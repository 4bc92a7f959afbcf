//! Row changes under concurrency: insert, update, delete and row locks of
//! a [`Transaction`] (PostgreSQL's `heap_update`, `heap_delete` and
//! `heap_lock_tuple`).
//!
//! ## The check
//!
//! Each operation looks at the tuple under the page's exclusive lock and
//! decides, as PostgreSQL's `HeapTupleSatisfiesUpdate` does:
//!
//! * inserted by this transaction in the current or a later command, or by
//!   an aborted one: [`TmResult::Invisible`];
//! * deleted or updated by this transaction: in the current or a later
//!   command [`TmResult::SelfModified`] (the caller ignores the row, or
//!   raises PostgreSQL's "tuple to be updated was already modified by an
//!   operation triggered by the current command"), in an earlier one
//!   `Invisible`;
//! * deleted or updated by a transaction that committed:
//!   [`TmResult::Deleted`] or [`TmResult::Updated`] with the newer
//!   version's TID;
//! * deleted, updated or locked in a conflicting mode by a transaction
//!   that is still running: *busy*;
//! * otherwise the change is made, logged, and the result is
//!   [`TmResult::Ok`].
//!
//! A busy row is waited for unless the caller said `NOWAIT` or `SKIP
//! LOCKED` ([`RowWait`]; both return [`TmResult::WouldBlock`], the caller
//! raises the error or skips). To wait, the page lock is released, the
//! *tuple lock* is taken (so that several waiters for one row queue in
//! order), then each conflicting transaction is waited for through its xid
//! lock ([`Transaction::wait_for_xid`]; lock_timeout, deadlock detection
//! and cancellation apply there), and the check starts over: the holder may
//! have aborted (go ahead), committed an update (`Updated`), or only
//! locked the row (go ahead).
//!
//! ## What the SQL layer builds on it
//!
//! * **READ COMMITTED** (PostgreSQL's EvalPlanQual): on `Updated`, call
//!   [`Transaction::lock_latest`] on the TID. It follows the update chain to
//!   the newest version and locks it, returning its TID and bytes; the
//!   caller re-evaluates its WHERE clause on them, and if the row still
//!   qualifies, computes the new row from them and updates that TID (which
//!   succeeds: the row is locked by us). On `Deleted` the row is skipped.
//! * **REPEATABLE READ**: `Updated` and `Deleted` become `could not
//!   serialize access due to concurrent update` (40001,
//!   [`serialization_failure`]).
//! * **SELECT FOR UPDATE / SHARE**: [`Transaction::lock_row`] in the
//!   clause's [`RowLockMode`], with `RowWait::NoWait` (error `could not
//!   obtain lock on row in relation "t"`, 55P03) or `RowWait::Skip` (skip
//!   the row); under READ COMMITTED an `Updated` row is followed with
//!   `lock_latest` and re-checked like an UPDATE.
//!
//! ## Update
//!
//! The new version is stamped with the current (sub)xid and command id and
//! goes to the same page if it fits — first pruning the page of versions
//! dead to everybody (see `prune`) if it does not — and the old
//! version gets `xmax`, `XMAX_IS_UPDATE` and a `ctid` pointing at the new
//! one, in one `HeapUpdate` record. If no indexed column changed
//! ([`UpdateKind::hot_allowed`]) such a same-page update is HOT: the new
//! version is heap-only and needs no index entries (see `prune` for HOT
//! chains). Otherwise the old version is first
//! locked by us (`HeapLock`), so that it stays ours while its page is
//! unlocked, the new version is inserted elsewhere (`HeapInsert`), and the
//! old one is then marked updated (`HeapUpdate`). A crash in between leaves
//! an uncommitted new version and a lock of a dead transaction: invisible
//! and meaningless. Unless the update was HOT ([`UpdateOutcome::hot`]) the
//! caller inserts the new version's index entries.
//!
//! Following an update chain checks that the next version's `xmin` is the
//! `xmax` of the one before: VACUUM may have removed the next version and
//! its line pointer may hold an unrelated tuple.

use crate::clog::XidStatus;
use crate::columnar::RowId;
use crate::heap::{log_page_change, HeapInserter, Tid};
use crate::lock::LockTag;
use crate::page;
use crate::rowlock::{RowKey, RowLockMode};
use crate::snapshot::CommandId;
use crate::tuple::{self, XmaxState};
use crate::txn::{Xid, FIRST_NORMAL_XID, INVALID_XID};
use crate::wal::{BlockRef, RecordType};
use crate::xact::{lock_error, Transaction};
use crate::{ErrorReport, StorageError};

/// What a row operation found (PostgreSQL's `TM_Result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmResult {
    /// The change (or lock) was made.
    Ok,
    /// The version is not one the command could change (see the module doc).
    Invisible,
    /// Updated or deleted by this transaction in command `cmax`, the
    /// current one or later.
    SelfModified { cmax: CommandId },
    /// Updated by a transaction that committed; `next` is the newer version.
    Updated { next: Tid },
    /// Deleted by a transaction that committed.
    Deleted,
    /// Held by a running transaction and the caller would not wait.
    WouldBlock,
}

/// Whether a row operation waits for a conflicting transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowWait {
    #[default]
    Block,
    /// `NOWAIT`
    NoWait,
    /// `SKIP LOCKED`
    Skip,
}

/// What kind of update [`Transaction::update`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UpdateKind {
    /// A key column changes: the row lock is `FOR UPDATE` rather than
    /// `FOR NO KEY UPDATE`.
    pub key_update: bool,
    /// No indexed column changes, so the new version may be heap-only (a
    /// HOT update) if it fits on the old version's page.
    pub hot_allowed: bool,
}

/// The result of [`Transaction::update`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateOutcome {
    pub result: TmResult,
    /// The new version's TID when `result` is `Ok`.
    pub new_tid: Option<Tid>,
    /// Whether the new version is heap-only (needs no index entries).
    pub hot: bool,
}

/// The result of [`Transaction::lock_latest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LatestOutcome {
    /// The newest version, now locked: its TID and bytes.
    Locked { tid: Tid, tuple: Vec<u8> },
    /// The row was deleted (or the chain ended in a removed version).
    Deleted,
    /// The newest version was changed by this transaction's current or a
    /// later command.
    SelfModified { cmax: CommandId },
    /// Not visible to the command.
    Invisible,
    /// `NOWAIT` / `SKIP LOCKED` met a lock.
    WouldBlock,
}

/// PostgreSQL's REPEATABLE READ error for a row changed since the
/// snapshot: `could not serialize access due to concurrent update` (40001;
/// `concurrent delete` for a deleted row, as PostgreSQL words it too).
pub fn serialization_failure(deleted: bool) -> StorageError {
    let what = if deleted { "delete" } else { "update" };
    StorageError::Report(Box::new(ErrorReport {
        code: "40001",
        message: format!("could not serialize access due to concurrent {what}"),
        detail: None,
        hint: None,
    }))
}

/// What [`check`] decided.
enum Verdict {
    Done(TmResult),
    /// Free to change; the shared lockers still running (all compatible).
    Free {
        live_sharers: bool,
    },
    /// Running transactions hold conflicting claims.
    Busy(Vec<Xid>),
}

/// What `apply` did.
enum Applied {
    Done(TmResult, Option<Tid>),
    /// The old version of an update is locked by us; the new one goes to
    /// another page ([`Transaction::move_update`]).
    Move,
}

/// What an operation does once the row is free (under the page lock).
pub(crate) enum Change<'a> {
    Delete,
    Lock(RowLockMode),
    Update { new: &'a [u8], kind: UpdateKind },
}

impl Change<'_> {
    pub(crate) fn mode(&self) -> RowLockMode {
        match self {
            Change::Delete => RowLockMode::Update,
            Change::Lock(m) => *m,
            Change::Update { kind, .. } if kind.key_update => RowLockMode::Update,
            Change::Update { .. } => RowLockMode::NoKeyUpdate,
        }
    }
}

impl Transaction {
    fn status(&self, xid: Xid) -> XidStatus {
        self.db.txn.clog.status(xid)
    }

    /// The check of the module doc, for tuple `t` of `row`, wanting `want`.
    fn check(&self, row: RowKey, t: &[u8], want: RowLockMode) -> Verdict {
        let cid = self.command_id();
        let xmin = tuple::xmin(t);
        if xmin >= FIRST_NORMAL_XID {
            if self.is_own_xid(xmin) {
                if tuple::cmin(t) >= cid {
                    return Verdict::Done(TmResult::Invisible);
                }
            } else if self.status(xmin) != XidStatus::Committed {
                return Verdict::Done(TmResult::Invisible);
            }
        }
        let mut busy = Vec::new();
        let (xmax, mask) = (tuple::xmax(t), tuple::infomask(t));
        if xmax != INVALID_XID {
            if mask & tuple::XMAX_LOCK_ONLY != 0 {
                let held = if mask & tuple::XMAX_KEYS_UPDATED != 0 {
                    RowLockMode::Update
                } else {
                    RowLockMode::NoKeyUpdate
                };
                if !self.is_own_xid(xmax)
                    && self.status(xmax) == XidStatus::InProgress
                    && held.conflicts_with(want)
                {
                    busy.push(xmax);
                }
            } else if self.is_own_xid(xmax) {
                let cmax = tuple::cmax(t);
                return Verdict::Done(if cmax >= cid {
                    TmResult::SelfModified { cmax }
                } else {
                    TmResult::Invisible
                });
            } else {
                match self.status(xmax) {
                    XidStatus::InProgress | XidStatus::SubCommitted => busy.push(xmax),
                    XidStatus::Committed => {
                        return Verdict::Done(if mask & tuple::XMAX_IS_UPDATE != 0 {
                            let (block, item) = tuple::ctid(t);
                            TmResult::Updated {
                                next: Tid { block, item },
                            }
                        } else {
                            TmResult::Deleted
                        })
                    }
                    XidStatus::Aborted => {}
                }
            }
        }
        let mut live_sharers = false;
        if mask & tuple::SHARE_LOCKED != 0 {
            let running = |x| self.status(x) == XidStatus::InProgress;
            for (x, m) in self.db.share_locks.lockers(row, running) {
                if self.is_own_xid(x) {
                    continue;
                }
                live_sharers = true;
                if m.conflicts_with(want) {
                    busy.push(x);
                }
            }
        }
        if busy.is_empty() {
            Verdict::Free { live_sharers }
        } else {
            Verdict::Busy(busy)
        }
    }

    /// Runs `change` on the row at `tid` of `rel`: check, wait, change (see
    /// the module doc). Returns the result and, for an update, the new TID.
    fn modify(
        &mut self,
        rel: u32,
        tid: Tid,
        change: Change<'_>,
        wait: RowWait,
    ) -> Result<(TmResult, Option<Tid>), StorageError> {
        if let Some(id) = RowId::from_tid(tid) {
            return self.columnar_modify(rel, id, change, wait);
        }
        let row = RowKey { rel, tid };
        let want = change.mode();
        let tuple_tag = LockTag::Tuple {
            rel,
            block: tid.block,
            item: tid.item,
        };
        let mut have_tuple_lock = false;
        let result = loop {
            let db = self.db.clone();
            let buf = match db.pool.read_buffer(rel, tid.block) {
                Ok(b) => b,
                Err(e) => break Err(e),
            };
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            let Some(t) = (!page::is_new(p) && tid.item >= 1 && tid.item <= page::item_count(p))
                .then(|| page::item_bytes(p, tid.item))
                .flatten()
            else {
                break Ok((TmResult::Deleted, None));
            };
            match self.check(row, t, want) {
                Verdict::Done(r) => break Ok((r, None)),
                Verdict::Free { live_sharers } => {
                    let r = self.apply(rel, tid, p, &change, live_sharers);
                    drop(g);
                    drop(buf);
                    break match r {
                        Ok(Applied::Done(res, new_tid)) => Ok((res, new_tid)),
                        Ok(Applied::Move) => {
                            let Change::Update { new, kind } = change else {
                                unreachable!("only updates move")
                            };
                            self.move_update(rel, tid, new, kind.key_update)
                                .map(|t| (TmResult::Ok, Some(t)))
                        }
                        Err(e) => Err(e),
                    };
                }
                Verdict::Busy(xids) => {
                    drop(g);
                    drop(buf);
                    if wait != RowWait::Block {
                        // PostgreSQL tries the tuple lock, then the holders,
                        // without waiting; both end in "would block" here.
                        break Ok((TmResult::WouldBlock, None));
                    }
                    if !have_tuple_lock {
                        if let Err(e) = self.lock(tuple_tag.clone(), want.tuple_lock_mode(), false)
                        {
                            break Err(lock_error(e, &format!("row in relation {rel}")));
                        }
                        have_tuple_lock = true;
                    }
                    if let Some(e) = xids.into_iter().find_map(|x| self.wait_for_xid(x).err()) {
                        break Err(lock_error(e, &format!("row in relation {rel}")));
                    }
                }
            }
        };
        if have_tuple_lock {
            self.unlock(&tuple_tag, want.tuple_lock_mode());
        }
        result
    }

    /// Makes `change` to the free tuple at `tid` (its page `p` is locked
    /// exclusively).
    fn apply(
        &mut self,
        rel: u32,
        tid: Tid,
        p: &mut [u8],
        change: &Change<'_>,
        live_sharers: bool,
    ) -> Result<Applied, StorageError> {
        let xid = self.xid()?;
        let block = BlockRef {
            rel,
            block: tid.block,
        };
        let old = XmaxState::of(page::item_bytes(p, tid.item).expect("checked normal"));
        let keep = old.infomask & !(tuple::XMAX_BITS | tuple::SHARE_LOCKED);
        let sharers = if live_sharers { tuple::SHARE_LOCKED } else { 0 };
        let mut payload = Vec::with_capacity(64);
        match change {
            Change::Delete => {
                let cmax = self.command_id_for_write();
                let state = XmaxState {
                    xmax: xid,
                    cmax,
                    infomask: keep | tuple::XMAX_KEYS_UPDATED,
                    ctid: (0, 0),
                };
                set_state(p, tid.item, &state, &mut payload);
                log_page_change(
                    &self.db.pool,
                    p,
                    RecordType::HeapDelete,
                    xid,
                    block,
                    &payload,
                )?;
                self.delta(rel).deleted += 1;
                Ok(Applied::Done(TmResult::Ok, None))
            }
            Change::Lock(mode) if mode.is_exclusive() => {
                let strong = *mode == RowLockMode::Update;
                let already = old.xmax != INVALID_XID
                    && self.is_own_xid(old.xmax)
                    && old.infomask & tuple::XMAX_LOCK_ONLY != 0
                    && (!strong || old.infomask & tuple::XMAX_KEYS_UPDATED != 0);
                if already {
                    return Ok(Applied::Done(TmResult::Ok, None));
                }
                let state = XmaxState {
                    xmax: xid,
                    cmax: old.cmax,
                    infomask: keep
                        | sharers
                        | tuple::XMAX_LOCK_ONLY
                        | if strong { tuple::XMAX_KEYS_UPDATED } else { 0 },
                    ctid: (0, 0),
                };
                set_state(p, tid.item, &state, &mut payload);
                log_page_change(&self.db.pool, p, RecordType::HeapLock, xid, block, &payload)?;
                Ok(Applied::Done(TmResult::Ok, None))
            }
            Change::Lock(mode) => {
                let row = RowKey { rel, tid };
                // An own exclusive lock is stronger already.
                if old.xmax != INVALID_XID
                    && self.is_own_xid(old.xmax)
                    && old.infomask & tuple::XMAX_LOCK_ONLY != 0
                {
                    return Ok(Applied::Done(TmResult::Ok, None));
                }
                if self.db.share_locks.add(row, xid, *mode) {
                    self.share_locked.push(row);
                }
                // A dead or aborted xmax goes; a running own one (an update
                // would have returned SelfModified) cannot be here.
                let xmax_live = old.xmax != INVALID_XID
                    && old.infomask & tuple::XMAX_LOCK_ONLY != 0
                    && self.status(old.xmax) == XidStatus::InProgress;
                let state = if xmax_live {
                    XmaxState {
                        infomask: old.infomask | tuple::SHARE_LOCKED,
                        ..old
                    }
                } else {
                    XmaxState {
                        xmax: INVALID_XID,
                        cmax: 0,
                        infomask: keep | tuple::SHARE_LOCKED,
                        ctid: (0, 0),
                    }
                };
                if state != old {
                    set_state(p, tid.item, &state, &mut payload);
                    log_page_change(&self.db.pool, p, RecordType::HeapLock, xid, block, &payload)?;
                }
                Ok(Applied::Done(TmResult::Ok, None))
            }
            Change::Update { new, kind } => {
                let cid = self.command_id_for_write();
                let mut new_t = new.to_vec();
                tuple::set_xmin(&mut new_t, xid);
                tuple::set_cmin(&mut new_t, cid);
                tuple::XmaxState {
                    xmax: INVALID_XID,
                    cmax: 0,
                    infomask: tuple::infomask(new) & (tuple::HAS_NULLS | tuple::HAS_EXTERNAL),
                    ctid: (0, 0),
                }
                .apply(&mut new_t);
                if new_t.len() > page::MAX_ITEM_SIZE {
                    return Err(StorageError::Other(format!(
                        "row is too big: size {}, maximum size {}",
                        new_t.len(),
                        page::MAX_ITEM_SIZE
                    )));
                }
                let keys = if kind.key_update {
                    tuple::XMAX_KEYS_UPDATED
                } else {
                    0
                };
                let hot = if kind.hot_allowed {
                    tuple::HOT_UPDATED
                } else {
                    0
                };
                if kind.hot_allowed {
                    let m = tuple::infomask(&new_t) | tuple::HEAP_ONLY;
                    tuple::set_infomask(&mut new_t, m);
                }
                let mut placed = page::add_item(p, &new_t);
                if placed.is_none() {
                    let db = &self.db;
                    let status = |x| db.txn.clog.status(x);
                    let pruned =
                        crate::prune::prune(&db.pool, rel, tid.block, p, db.txn.horizon(), status)?;
                    if pruned.removed > 0 {
                        placed = page::add_item(p, &new_t);
                    }
                }
                let delta = self.delta(rel);
                delta.updated += 1;
                if placed.is_some() && kind.hot_allowed {
                    delta.hot_updated += 1;
                }
                if let Some(item) = placed {
                    let state = XmaxState {
                        xmax: xid,
                        cmax: cid,
                        infomask: keep | sharers | tuple::XMAX_IS_UPDATE | keys | hot,
                        ctid: (tid.block, item),
                    };
                    set_state(p, tid.item, &state, &mut payload);
                    payload.extend_from_slice(&item.to_le_bytes());
                    payload.extend_from_slice(&new_t);
                    log_page_change(
                        &self.db.pool,
                        p,
                        RecordType::HeapUpdate,
                        xid,
                        block,
                        &payload,
                    )?;
                    let new_tid = Tid {
                        block: tid.block,
                        item,
                    };
                    self.last_update_hot = kind.hot_allowed;
                    return Ok(Applied::Done(TmResult::Ok, Some(new_tid)));
                }
                // Another page: keep the row ours while its page is unlocked.
                let locked = XmaxState {
                    xmax: xid,
                    cmax: cid,
                    infomask: keep | sharers | tuple::XMAX_LOCK_ONLY | tuple::XMAX_KEYS_UPDATED,
                    ctid: (0, 0),
                };
                set_state(p, tid.item, &locked, &mut payload);
                log_page_change(&self.db.pool, p, RecordType::HeapLock, xid, block, &payload)?;
                Ok(Applied::Move)
            }
        }
    }

    /// Deletes the row at `tid` of `rel` (see the module doc).
    pub fn delete(&mut self, rel: u32, tid: Tid, wait: RowWait) -> Result<TmResult, StorageError> {
        Ok(self.modify(rel, tid, Change::Delete, wait)?.0)
    }

    /// Locks the row at `tid` of `rel` in `mode` (`SELECT ... FOR ...`).
    pub fn lock_row(
        &mut self,
        rel: u32,
        tid: Tid,
        mode: RowLockMode,
        wait: RowWait,
    ) -> Result<TmResult, StorageError> {
        Ok(self.modify(rel, tid, Change::Lock(mode), wait)?.0)
    }

    /// Replaces the row at `tid` of `rel` with `new` (tuple bytes from a
    /// `TupleBuilder`; the header is filled in here). On `Ok` the caller
    /// inserts index entries for the new version unless it is heap-only
    /// ([`UpdateOutcome::hot`]).
    pub fn update(
        &mut self,
        rel: u32,
        tid: Tid,
        new: &[u8],
        kind: UpdateKind,
        wait: RowWait,
    ) -> Result<UpdateOutcome, StorageError> {
        self.last_update_hot = false;
        let (result, new_tid) = self.modify(rel, tid, Change::Update { new, kind }, wait)?;
        Ok(UpdateOutcome {
            result,
            new_tid,
            hot: result == TmResult::Ok && self.last_update_hot,
        })
    }

    /// The second half of an update whose new version goes to another
    /// page: the old version at `tid` is locked by us (see `apply`).
    fn move_update(
        &mut self,
        rel: u32,
        tid: Tid,
        new: &[u8],
        key_update: bool,
    ) -> Result<Tid, StorageError> {
        let xid = self.xid()?;
        let cid = self.command_id_for_write();
        let mut new_t = new.to_vec();
        tuple::set_xmin(&mut new_t, xid);
        tuple::set_cmin(&mut new_t, cid);
        XmaxState {
            xmax: INVALID_XID,
            cmax: 0,
            infomask: tuple::infomask(new) & (tuple::HAS_NULLS | tuple::HAS_EXTERNAL),
            ctid: (0, 0),
        }
        .apply(&mut new_t);
        let db = self.db.clone();
        let new_tid = HeapInserter::new(&db.pool, rel).insert(&new_t)?;
        let buf = db.pool.read_buffer(rel, tid.block)?;
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        let t = page::item_bytes(p, tid.item).expect("a row we lock stays");
        let old = XmaxState::of(t);
        debug_assert_eq!(old.xmax, xid);
        let state = XmaxState {
            xmax: xid,
            cmax: cid,
            infomask: (old.infomask & !tuple::XMAX_BITS)
                | tuple::XMAX_IS_UPDATE
                | if key_update {
                    tuple::XMAX_KEYS_UPDATED
                } else {
                    0
                },
            ctid: (new_tid.block, new_tid.item),
        };
        let mut payload = Vec::with_capacity(32);
        set_state(p, tid.item, &state, &mut payload);
        log_page_change(
            &db.pool,
            p,
            RecordType::HeapUpdate,
            xid,
            BlockRef {
                rel,
                block: tid.block,
            },
            &payload,
        )?;
        Ok(new_tid)
    }

    /// Inserts one row (tuple bytes from a `TupleBuilder`; the header is
    /// filled in here) and returns its TID. Bulk inserts use a
    /// [`HeapInserter`] with tuples finished by
    /// `TupleBuilder::finish_cid(txn.xid()?, txn.command_id_for_write())`
    /// and report their count with [`Transaction::count_inserts`].
    pub fn insert(&mut self, rel: u32, t: &[u8]) -> Result<Tid, StorageError> {
        let xid = self.xid()?;
        let cid = self.command_id_for_write();
        let mut t = t.to_vec();
        tuple::set_xmin(&mut t, xid);
        tuple::set_cmin(&mut t, cid);
        let db = self.db.clone();
        let tid = HeapInserter::new(&db.pool, rel).insert(&t)?;
        self.delta(rel).inserted += 1;
        Ok(tid)
    }

    /// Follows the update chain from `tid` to the newest version and locks
    /// it in `mode` (READ COMMITTED's re-check; see the module doc).
    pub fn lock_latest(
        &mut self,
        rel: u32,
        mut tid: Tid,
        mode: RowLockMode,
        wait: RowWait,
    ) -> Result<LatestOutcome, StorageError> {
        if let Some(id) = RowId::from_tid(tid) {
            return self.columnar_lock_latest(rel, id, mode, wait);
        }
        loop {
            match self.lock_row(rel, tid, mode, wait)? {
                TmResult::Ok => {
                    let buf = self.db.pool.read_buffer(rel, tid.block)?;
                    let g = buf.lock_shared();
                    let t = page::item_bytes(g.page(), tid.item)
                        .expect("a locked row stays")
                        .to_vec();
                    return Ok(LatestOutcome::Locked { tid, tuple: t });
                }
                TmResult::Updated { next } => {
                    let prior = self.xmax_of(rel, tid)?;
                    match self.heap_xmin(rel, next)? {
                        Some(x) if x == prior => tid = next,
                        _ => return Ok(LatestOutcome::Deleted),
                    }
                }
                TmResult::Deleted => return Ok(LatestOutcome::Deleted),
                TmResult::SelfModified { cmax } => return Ok(LatestOutcome::SelfModified { cmax }),
                TmResult::Invisible => return Ok(LatestOutcome::Invisible),
                TmResult::WouldBlock => return Ok(LatestOutcome::WouldBlock),
            }
        }
    }

    fn xmax_of(&self, rel: u32, tid: Tid) -> Result<Xid, StorageError> {
        let buf = self.db.pool.read_buffer(rel, tid.block)?;
        let g = buf.lock_shared();
        Ok(page::item_bytes(g.page(), tid.item).map_or(INVALID_XID, tuple::xmax))
    }

    /// The `xmin` of the heap tuple at `tid`, if one is there.
    pub(crate) fn heap_xmin(&self, rel: u32, tid: Tid) -> Result<Option<Xid>, StorageError> {
        let buf = self.db.pool.read_buffer(rel, tid.block)?;
        let g = buf.lock_shared();
        let p = g.page();
        if page::is_new(p) || tid.item == 0 || tid.item > page::item_count(p) {
            return Ok(None);
        }
        Ok(page::item_bytes(p, tid.item).map(tuple::xmin))
    }
}

/// Writes `state` into item `item` of `p` and encodes the record payload
/// (item number, state) into `payload`.
fn set_state(p: &mut [u8], item: u16, state: &XmaxState, payload: &mut Vec<u8>) {
    let t = page::item_bytes_mut(p, item).expect("checked normal");
    state.apply(t);
    payload.clear();
    payload.extend_from_slice(&item.to_le_bytes());
    state.encode(payload);
}
