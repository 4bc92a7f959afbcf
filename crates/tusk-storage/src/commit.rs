//! Commits, DDL records and checkpoints at the database level.
//!
//! ## Commit
//!
//! A commit ([`Database::commit_xids`], which `xact::Transaction::commit`
//! and the single-statement [`Database::commit`] use) does, in order:
//!
//! 1. insert the commit record (the sub-xids in its payload) and, with
//!    `synchronous_commit = on` or DDL, flush it — group commit shares the
//!    flush with whoever commits at the same moment (see `wal`);
//! 2. apply the transaction's DDL to the catalog (one rewrite of the file)
//!    and remove the files of dropped relations;
//! 3. mark the xids committed in `pg_xact` (`clog::CommitLog::commit_tree`);
//! 4. (the caller) leave the proc array — from here on new snapshots see
//!    the transaction committed — and release the locks.
//!
//! Steps 1–3 run under the *commit gate* held shared. A checkpoint takes it
//! exclusively while it chooses its redo point (PostgreSQL's
//! `DELAY_CHKPT_START`): otherwise a commit record could fall just before
//! the redo point while the `pg_xact` status it stands for is set only
//! after the checkpoint copied `pg_xact` — recovery, starting at the redo
//! point, would never learn that the transaction committed.
//!
//! Once the commit record is inserted the transaction is committed in
//! memory whatever happens: a failing flush is reported to the caller, but
//! the record may still reach the disk, and then recovery commits it too.
//!
//! ## DDL records and checkpoints
//!
//! DDL records (`CreateTable`, `CreateIndex`, `DropTable`) are logged when
//! the statement runs, but their outcome is the transaction's. If a
//! checkpoint's redo point fell between the record and the commit, recovery
//! would see the commit but not the DDL. So every DDL record of a running
//! transaction is also kept in memory ([`PendingDdl`]), and a checkpoint
//! logs those again right after its redo point (under the commit gate, so
//! a transaction is either running — re-logged — or finished with its
//! catalog changes saved). Replaying a DDL record twice is harmless:
//! recovery enforces each one's outcome in WAL order.

use crate::catalog::{self, DdlChange, IndexDef, TableDef};
use crate::txn::{WriteTxn, Xid};
use crate::wal::{self, RecordType};
use crate::{Database, StorageError};
use std::time::Instant;

/// A DDL record of a running transaction, re-logged by checkpoints.
pub(crate) struct PendingDdl {
    /// The top-level xid (the record is dropped once it no longer runs).
    top: Xid,
    xid: Xid,
    kind: RecordType,
    payload: Vec<u8>,
}

impl Database {
    /// Logs DDL record `kind` of (sub)transaction `xid` of top-level
    /// transaction `top`, and keeps it for checkpoints while `top` runs.
    /// Creations are flushed: the record must be durable before the
    /// relation file or the catalog entry can exist, or recovery could not
    /// tell that they must go.
    pub(crate) fn log_ddl_record(
        &self,
        top: Xid,
        xid: Xid,
        kind: RecordType,
        payload: Vec<u8>,
    ) -> Result<(), StorageError> {
        let lsn = self.wal.insert(kind, xid, None, false, &payload)?;
        self.pending_ddl
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(PendingDdl {
                top,
                xid,
                kind,
                payload,
            });
        if kind != RecordType::DropTable {
            self.wal.flush(lsn)?;
        }
        Ok(())
    }

    /// Forgets the DDL records of top-level transaction `top` (it ended).
    pub(crate) fn forget_ddl_records(&self, top: Xid) {
        self.pending_ddl
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| d.top != top);
    }

    /// Steps 1–3 of a commit (see the module doc) for top-level xid `top`
    /// with committed sub-xids `subs` and catalog changes `ddl`. The outer
    /// error means the commit record could not be inserted: nothing
    /// committed, the caller aborts. The inner one comes after: the
    /// transaction committed, but its flush or DDL failed.
    pub(crate) fn commit_xids(
        &self,
        top: Xid,
        subs: &[Xid],
        sync: bool,
        ddl: &[DdlChange],
    ) -> Result<Result<(), StorageError>, StorageError> {
        let payload: Vec<u8> = subs.iter().flat_map(|x| x.to_le_bytes()).collect();
        let _gate = self.commit_gate.read().unwrap_or_else(|e| e.into_inner());
        let lsn = self
            .wal
            .insert(RecordType::Commit, top, None, false, &payload)?;
        // Committed from here on (see the module doc).
        let flushed = if sync || !ddl.is_empty() {
            self.wal.flush_commit(lsn)
        } else {
            Ok(())
        };
        let applied = self.apply_ddl(ddl);
        self.txn.clog.commit_tree(top, subs);
        self.txn.clog.forget_parents(subs);
        self.forget_ddl_records(top);
        Ok(flushed.and(applied))
    }

    /// Applies committed catalog changes: one rewrite of the catalog file,
    /// then the files of dropped relations go.
    fn apply_ddl(&self, ddl: &[DdlChange]) -> Result<(), StorageError> {
        if ddl.is_empty() {
            return Ok(());
        }
        let mut gone = Vec::new();
        {
            let mut cat = self.catalog_mut();
            for change in ddl {
                if let DdlChange::Drop(oid) = change {
                    gone.push(*oid);
                }
                gone.extend(cat.apply_unsaved(change));
            }
            cat.save()?;
        }
        for rel in gone {
            self.pool.drop_relation(rel);
            self.stats.forget(rel);
            self.smgr.unlink(rel)?;
        }
        Ok(())
    }

    /// Makes a single-statement writer's changes durable (a flushed commit
    /// record, unless `synchronous_commit = off`) and visible. Tables it
    /// dropped disappear here, after the commit record is durable.
    pub fn commit(&self, txn: WriteTxn<'_>) -> Result<(), StorageError> {
        let xid = txn.xid();
        // Relations this transaction created were not logged: make them
        // durable before the commit record can be.
        let created: Vec<(Xid, u32)> =
            std::mem::take(&mut *self.new_relations.lock().unwrap_or_else(|e| e.into_inner()));
        for &(x, oid) in &created {
            if x == xid && self.smgr.exists(oid) {
                self.pool.flush_relation(oid)?;
                self.smgr.sync(oid)?;
            }
            self.pool.set_unlogged(oid, false);
        }
        let drops: Vec<DdlChange> = {
            let mut p = self.pending_drops.lock().unwrap_or_else(|e| e.into_inner());
            let mine = p
                .iter()
                .filter(|(x, _)| *x == xid)
                .map(|&(_, o)| DdlChange::Drop(o))
                .collect();
            p.clear();
            mine
        };
        let sync = self.options().durability.synchronous_commit;
        // An error before the commit record drops (aborts) `txn`.
        let res = self.commit_xids(xid, &[], sync, &drops)?;
        txn.commit()?;
        res?;
        self.maybe_checkpoint()
    }

    /// Logs the creation of `table` by single-statement writer `txn`; call
    /// before creating its file. Until `txn` commits, changes to the new
    /// relation are not logged (an abort or crash discards the whole
    /// relation anyway); the commit writes and fsyncs it instead.
    pub fn log_create_table(
        &self,
        txn: &WriteTxn<'_>,
        table: &TableDef,
    ) -> Result<(), StorageError> {
        self.new_relations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((txn.xid(), table.oid));
        self.pool.set_unlogged(table.oid, true);
        self.log_ddl_record(
            txn.xid(),
            txn.xid(),
            RecordType::CreateTable,
            catalog::encode_table(table).into_bytes(),
        )
    }

    /// Logs the creation of index `index` by `txn`; call before creating
    /// its file. Unlike a table created by CREATE TABLE AS, the index is
    /// logged from its first page: the bulk build writes every page as an
    /// image (PostgreSQL's `log_newpage` with `wal_level = replica`), so the
    /// index's later changes need no full-page image until the next
    /// checkpoint, and recovery rebuilds it from the WAL alone.
    pub fn log_create_index(
        &self,
        txn: &WriteTxn<'_>,
        index: &IndexDef,
    ) -> Result<(), StorageError> {
        self.log_ddl_record(
            txn.xid(),
            txn.xid(),
            RecordType::CreateIndex,
            catalog::encode_index(index).into_bytes(),
        )
    }

    /// Drops `table` (with its indexes) when `txn` commits (and not at all
    /// if it aborts).
    pub fn drop_table(&self, txn: &WriteTxn<'_>, table: &TableDef) -> Result<(), StorageError> {
        self.drop_relation(txn, table.oid)
    }

    /// Drops relation `oid` (a table with its indexes, or an index) when
    /// `txn` commits.
    pub fn drop_relation(&self, txn: &WriteTxn<'_>, oid: u32) -> Result<(), StorageError> {
        self.log_ddl_record(
            txn.xid(),
            txn.xid(),
            RecordType::DropTable,
            oid.to_le_bytes().to_vec(),
        )?;
        self.pending_drops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((txn.xid(), oid));
        Ok(())
    }

    /// Checkpoints if `max_wal_size` of WAL or `checkpoint_timeout` passed
    /// since the last one (and no other checkpoint is running).
    pub(crate) fn maybe_checkpoint(&self) -> Result<(), StorageError> {
        let d = &self.options().durability;
        let wal_since = self.wal.insert_lsn() - self.wal.redo_lsn();
        let due = wal_since >= d.max_wal_size
            || self
                .last_checkpoint
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                >= d.checkpoint_timeout;
        if due {
            if let Ok(guard) = self.checkpoint_lock.try_lock() {
                return self.checkpoint_locked(guard);
            }
        }
        Ok(())
    }

    /// A checkpoint (`CHECKPOINT`, periodic, end of recovery, shutdown):
    /// take the end of WAL as the redo point (under the commit gate, and
    /// re-log running transactions' DDL after it), write and fsync every
    /// dirty page and the relation files, write `pg_xact` (after flushing
    /// the WAL), record the redo point in `pg_control` and remove WAL
    /// segments before it. Transactions run on meanwhile.
    pub fn checkpoint(&self) -> Result<(), StorageError> {
        let guard = self
            .checkpoint_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.checkpoint_locked(guard)
    }

    fn checkpoint_locked(&self, _guard: std::sync::MutexGuard<'_, ()>) -> Result<(), StorageError> {
        let redo = {
            let _gate = self.commit_gate.write().unwrap_or_else(|e| e.into_inner());
            let redo = self.wal.begin_checkpoint();
            let mut pending = self.pending_ddl.lock().unwrap_or_else(|e| e.into_inner());
            pending.retain(|d| self.txn.procs.is_running(d.top));
            for d in pending.iter() {
                self.wal.insert(d.kind, d.xid, None, false, &d.payload)?;
            }
            redo
        };
        self.pool.flush_all()?;
        self.smgr.sync_all()?;
        self.txn.write_clog(Some(&self.wal))?;
        self.wal.flush_all()?;
        wal::control::write(&self.dir().join("pg_control"), redo)?;
        self.wal.remove_old_segments(redo)?;
        *self
            .last_checkpoint
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
        Ok(())
    }
}
