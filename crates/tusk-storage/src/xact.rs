//! Transactions as sessions use them: PostgreSQL's transaction model.
//!
//! This is the API the SQL layer builds `BEGIN` / `COMMIT` / `ROLLBACK` /
//! `SAVEPOINT` on. A [`Transaction`] is one top-level transaction of one
//! session; the session keeps it across statements and ends it with
//! [`Transaction::commit`] or [`Transaction::rollback`]. A statement outside
//! a transaction block is a transaction of its own (begin, one statement,
//! commit).
//!
//! ## A session's life
//!
//! ```text
//! let mut txn = Transaction::begin(&db, TxnOptions { pid, isolation, .. });
//! // each statement:
//! txn.lock_relation(oid, LockMode::RowExclusive)?;   // DML; AccessShare for reads
//! let snap = txn.snapshot();        // READ COMMITTED: fresh; REPEATABLE READ: the first one
//! ... scan with Visibility::new(&db.txn, snap) ...
//! ... write with txn.insert / txn.update / txn.delete / txn.lock_row (see `heapam`) ...
//! txn.next_command();               // later statements see this one's changes
//! // SAVEPOINT a / ROLLBACK TO a / RELEASE a:
//! txn.savepoint("a"); txn.rollback_to("a")?; txn.release("a")?;
//! txn.commit()?;                    // or txn.rollback(), or just drop it
//! ```
//!
//! * **Snapshots.** [`Transaction::snapshot`] gives the statement's
//!   snapshot: a new one per call under READ COMMITTED, the transaction's
//!   first one (with the current command id) under REPEATABLE READ. The SQL
//!   layer takes one per statement and keeps it until the statement is done
//!   with the rows it found, re-checks included: a live snapshot holds back
//!   VACUUM and page pruning, which could otherwise remove a version the
//!   statement is about to update or follow. A snapshot must not outlive
//!   the transaction. SERIALIZABLE is not offered (no SSI): the SQL layer
//!   refuses it.
//! * **Command ids.** Every change is stamped with the current command id
//!   ([`Transaction::command_id`]); a snapshot sees the transaction's own
//!   changes of earlier commands only. [`Transaction::next_command`] ends a
//!   command (PostgreSQL's `CommandCounterIncrement`): call it after each
//!   statement, and between the steps of one statement that must see each
//!   other's effects. It only counts up if the command changed something.
//! * **Xids** are assigned on the first write ([`Transaction::xid`]), so
//!   read-only transactions never touch the commit log or the WAL. The
//!   transaction holds an `ExclusiveLock` on each of its xids: others wait
//!   for it by waiting for that lock ([`Transaction::wait_for_xid`], which
//!   a btree unique check waiting for an in-progress inserter uses too).
//! * **Locks.** [`Transaction::lock_relation`] takes a table lock (DML takes
//!   `RowExclusiveLock`, SELECT `AccessShareLock`, SELECT FOR UPDATE
//!   `RowShareLock`, `LOCK TABLE` its mode, DDL `AccessExclusiveLock`);
//!   locks are held to the end of the transaction (or of the savepoint that
//!   took them, if it is rolled back). Waits obey [`WaitOptions`]:
//!   `lock_timeout`, `deadlock_timeout` and the interrupt flag, which the
//!   session can change between statements ([`Transaction::wait_options_mut`]).
//!   A failed lock comes back as a [`StorageError`] with PostgreSQL's
//!   SQLSTATE and message ([`lock_error`]).
//! * **Row changes** are in `heapam`: update, delete and row locks that
//!   wait for concurrent writers and say what they found
//!   ([`crate::heapam::TmResult`]), which is what READ COMMITTED's re-check
//!   and REPEATABLE READ's serialization failure are built from.
//! * **Subtransactions.** [`Transaction::savepoint`] opens one;
//!   [`Transaction::rollback_to`] aborts everything since (its xids are
//!   aborted in `pg_xact`, its locks released, its DDL undone) and opens it
//!   again, as `ROLLBACK TO SAVEPOINT` keeps the savepoint;
//!   [`Transaction::release`] merges it into its parent (its xids commit
//!   with the top-level transaction). Sub-xids are assigned on first write,
//!   parents first, and their parents are noted in `clog`.
//! * **DDL** is transactional: [`Transaction::create_table`],
//!   [`Transaction::create_index`] and [`Transaction::drop_relation`] change
//!   only this transaction's view of the catalog ([`Transaction::catalog`])
//!   until commit; a rollback (or crash) leaves no trace. See "DDL" below.
//! * **Ending.** `commit` writes the commit record (flushed unless
//!   `synchronous_commit` is off for this transaction; group commit shares
//!   flushes), applies the DDL, marks the xids committed in `pg_xact`,
//!   leaves the proc array and releases every lock. `rollback` writes an
//!   abort record (if an xid was assigned), marks the xids aborted, undoes
//!   the DDL and releases the locks. **Dropping** a `Transaction` without
//!   either rolls it back: a session (or connection) that ends inside a
//!   transaction block just drops it.
//!
//! Errors inside a transaction block (PostgreSQL's "current transaction is
//! aborted" state) are the SQL layer's business: the transaction stays
//! usable here until the session rolls back or rolls back to a savepoint.
//!
//! ## DDL
//!
//! A CREATE logs its WAL record (`CreateTable` / `CreateIndex`, flushed)
//! before the relation file exists, holds `AccessExclusiveLock` on the new
//! relation and on its name (a concurrent CREATE of the same name waits, then
//! sees it exists), and adds a [`DdlChange`] to the current savepoint level.
//! A new table's pages are not logged until commit, which writes and fsyncs
//! the file before the commit record. A DROP takes `AccessExclusiveLock`,
//! logs `DropTable` and adds its change; the relation disappears at commit.
//! An ALTER that needs no new file ([`Transaction::alter_relation`],
//! [`Transaction::alter_index`]) takes `AccessExclusiveLock`, logs the new
//! definition (`AlterTable` / `AlterIndex`) and adds it as a change.
//! Recovery enforces the outcome of each DDL record's (sub)transaction, so a
//! crash undoes uncommitted DDL. A checkpoint re-logs the DDL records of
//! running transactions after its redo point, so recovery always sees them
//! (see `Database::checkpoint`).

use crate::catalog::{Catalog, ColumnDef, DdlChange, IndexColumn, IndexDef, IndexKind, TableDef};
use crate::lock::{LockError, LockMode, LockOwner, LockTag, WaitOptions};
use crate::procarray::ProcSlot;
use crate::snapshot::{CommandId, Snapshot};
use crate::txn::{Xid, INVALID_XID};
use crate::wal::RecordType;
use crate::{Database, ErrorReport, StorageError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// The isolation levels tusk offers (SERIALIZABLE is refused by the SQL
/// layer: there is no SSI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IsolationLevel {
    #[default]
    ReadCommitted,
    RepeatableRead,
}

/// How a transaction runs.
#[derive(Debug, Clone)]
pub struct TxnOptions {
    pub isolation: IsolationLevel,
    /// `synchronous_commit` for this transaction; `None`: the data
    /// directory's setting.
    pub synchronous_commit: Option<bool>,
    /// The session's process id, as deadlock reports show it; 0: a number
    /// of tusk's own.
    pub pid: i32,
    /// `lock_timeout`, `deadlock_timeout` and the interrupt flag.
    pub wait: WaitOptions,
    /// The lock owner to use, made by [`crate::lock::LockManager::new_owner`]
    /// and holding no lock (a session hands its owner from one transaction
    /// to the next); `None`: a new one.
    pub lock_owner: Option<Arc<LockOwner>>,
}

impl Default for TxnOptions {
    fn default() -> Self {
        TxnOptions {
            isolation: IsolationLevel::ReadCommitted,
            synchronous_commit: None,
            pid: 0,
            wait: WaitOptions::default(),
            lock_owner: None,
        }
    }
}

/// Per-table counts of a transaction (or savepoint level) for
/// `pg_stat_user_tables` (see `pgstat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableDelta {
    pub inserted: u64,
    pub updated: u64,
    pub hot_updated: u64,
    pub deleted: u64,
}

impl TableDelta {
    fn add(&mut self, o: &TableDelta) {
        self.inserted += o.inserted;
        self.updated += o.updated;
        self.hot_updated += o.hot_updated;
        self.deleted += o.deleted;
    }
}

/// One level of the savepoint stack (level 0: the top-level transaction).
#[derive(Default)]
pub(crate) struct Level {
    name: Option<String>,
    /// The level's xid, `INVALID_XID` until its first write.
    pub(crate) xid: Xid,
    /// Xids of released (sub-committed) savepoints below this level.
    children: Vec<Xid>,
    locks: Vec<(LockTag, LockMode)>,
    ddl: Vec<DdlChange>,
    /// Relations this level created (their files go if it is rolled back).
    created: Vec<u32>,
    pub(crate) stats: HashMap<u32, TableDelta>,
}

/// A top-level transaction (see the module doc).
pub struct Transaction {
    pub(crate) db: Arc<Database>,
    /// The proc array slot, taken with the first xid: a read-only
    /// transaction never enters the proc array (see `procarray`).
    slot: Option<ProcSlot>,
    pub(crate) owner: Arc<LockOwner>,
    opts: TxnOptions,
    pub(crate) levels: Vec<Level>,
    cid: CommandId,
    cid_used: bool,
    /// REPEATABLE READ's snapshot.
    xact_snapshot: Option<Snapshot>,
    /// The xids of all levels and their children, ascending.
    own: Arc<[Xid]>,
    /// The catalog with this transaction's DDL applied, and the shared
    /// catalog it was built from.
    view: Option<(Arc<Catalog>, Arc<Catalog>)>,
    /// Rows this transaction share-locked (see `rowlock`).
    pub(crate) share_locked: Vec<crate::rowlock::RowKey>,
    /// Whether the last update was HOT (see `heapam`).
    pub(crate) last_update_hot: bool,
    /// Rows of columnar row groups deleted by the current command, whose
    /// deletion entries are written when it ends (see
    /// `columnar::rowchange`).
    pub(crate) columnar_deletes: Vec<crate::columnar::rowchange::PendingDelete>,
    done: bool,
}

/// Process ids for sessions that do not bring one.
static NEXT_PID: AtomicI32 = AtomicI32::new(1_000_000);

impl Transaction {
    /// Begins a transaction.
    pub fn begin(db: &Arc<Database>, mut opts: TxnOptions) -> Transaction {
        if opts.pid == 0 {
            opts.pid = NEXT_PID.fetch_add(1, Ordering::Relaxed);
        }
        Transaction {
            db: db.clone(),
            slot: None,
            owner: opts
                .lock_owner
                .take()
                .unwrap_or_else(|| db.locks.new_owner(opts.pid)),
            opts,
            levels: vec![Level::default()],
            cid: 0,
            cid_used: false,
            xact_snapshot: None,
            own: Snapshot::no_xids(),
            view: None,
            share_locked: Vec::new(),
            last_update_hot: false,
            columnar_deletes: Vec::new(),
            done: false,
        }
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    pub fn isolation(&self) -> IsolationLevel {
        self.opts.isolation
    }

    /// Changes the isolation level (`SET TRANSACTION ISOLATION LEVEL`);
    /// only before the transaction's first snapshot, which the SQL layer
    /// checks ("must be called before any query").
    pub fn set_isolation(&mut self, isolation: IsolationLevel) {
        debug_assert!(
            self.xact_snapshot.is_none(),
            "isolation set after a snapshot"
        );
        self.opts.isolation = isolation;
    }

    pub fn pid(&self) -> i32 {
        self.opts.pid
    }

    /// How lock waits behave from now on (`SET lock_timeout`, ...).
    pub fn wait_options_mut(&mut self) -> &mut WaitOptions {
        &mut self.opts.wait
    }

    pub fn wait_options(&self) -> &WaitOptions {
        &self.opts.wait
    }

    pub fn set_synchronous_commit(&mut self, on: Option<bool>) {
        self.opts.synchronous_commit = on;
    }

    /// The top-level xid, if one was assigned.
    pub fn top_xid(&self) -> Option<Xid> {
        (self.levels[0].xid != INVALID_XID).then_some(self.levels[0].xid)
    }

    /// The xid that writes of the current savepoint level carry, assigned
    /// now if needed (parents first).
    pub fn xid(&mut self) -> Result<Xid, StorageError> {
        let depth = self.levels.len() - 1;
        if self.levels[depth].xid != INVALID_XID {
            return Ok(self.levels[depth].xid);
        }
        for i in 0..=depth {
            if self.levels[i].xid != INVALID_XID {
                continue;
            }
            let procs = &self.db.txn.procs;
            let slot = *self.slot.get_or_insert_with(|| procs.begin());
            let xid = procs.assign(slot, &self.db.txn.clog)?;
            if i > 0 {
                self.db.txn.clog.set_parent(xid, self.levels[i - 1].xid);
            }
            let tag = LockTag::Transaction(xid);
            self.db
                .locks
                .acquire(
                    &self.owner,
                    &tag,
                    LockMode::Exclusive,
                    &WaitOptions::default(),
                )
                .expect("a new xid's lock is free");
            self.levels[i].locks.push((tag, LockMode::Exclusive));
            self.levels[i].xid = xid;
        }
        self.rebuild_own();
        Ok(self.levels[depth].xid)
    }

    /// Whether `xid` is one of this transaction's live xids.
    pub fn is_own_xid(&self, xid: Xid) -> bool {
        xid != INVALID_XID && self.own.binary_search(&xid).is_ok()
    }

    fn rebuild_own(&mut self) {
        let mut own: Vec<Xid> = self
            .levels
            .iter()
            .flat_map(|l| l.children.iter().copied().chain([l.xid]))
            .filter(|&x| x != INVALID_XID)
            .collect();
        own.sort_unstable();
        self.own = Arc::from(own);
    }

    /// The current command id.
    pub fn command_id(&self) -> CommandId {
        self.cid
    }

    /// The command id for a change: marks it used, so that
    /// [`Transaction::next_command`] counts up.
    pub fn command_id_for_write(&mut self) -> CommandId {
        self.cid_used = true;
        self.cid
    }

    /// Ends the current command (see the module doc).
    pub fn next_command(&mut self) -> Result<(), StorageError> {
        self.flush_columnar_deletes()?;
        if !self.cid_used {
            return Ok(());
        }
        if self.cid >= CommandId::MAX - 1 {
            return Err(StorageError::report(
                "54000",
                "cannot have more than 2^32-2 commands in a transaction",
            ));
        }
        self.cid += 1;
        self.cid_used = false;
        Ok(())
    }

    /// The statement's snapshot (see the module doc).
    pub fn snapshot(&mut self) -> Snapshot {
        let procs = &self.db.txn.procs;
        match self.opts.isolation {
            IsolationLevel::ReadCommitted => procs.snapshot(self.own.clone(), self.cid),
            IsolationLevel::RepeatableRead => match &self.xact_snapshot {
                Some(s) => s.with_cid(self.cid, self.own.clone(), Some(procs.register(s.xmin))),
                None => {
                    let s = procs.snapshot(self.own.clone(), self.cid);
                    self.xact_snapshot = Some(s.clone());
                    s
                }
            },
        }
    }

    /// Takes `mode` on relation `oid` for the rest of the transaction (or
    /// of the current savepoint, if it is rolled back).
    pub fn lock_relation(&mut self, oid: u32, mode: LockMode) -> Result<(), LockError> {
        self.lock(LockTag::Relation(oid), mode, false)
    }

    /// Takes a lock on `tag`; `nowait` fails at once instead of waiting.
    pub fn lock(&mut self, tag: LockTag, mode: LockMode, nowait: bool) -> Result<(), LockError> {
        // Held already (at this level or an enclosing one, which a rollback
        // to the current savepoint does not release): nothing to do.
        if self
            .levels
            .iter()
            .any(|l| l.locks.iter().any(|(t, m)| *m == mode && *t == tag))
        {
            return Ok(());
        }
        let mut opts = self.opts.wait.clone();
        opts.nowait |= nowait;
        self.db.locks.acquire(&self.owner, &tag, mode, &opts)?;
        self.levels
            .last_mut()
            .expect("level 0 exists")
            .locks
            .push((tag, mode));
        Ok(())
    }

    /// Releases one hold of a lock taken with [`Transaction::lock`] before
    /// the end of the transaction (tuple locks, which PostgreSQL also
    /// releases early).
    pub fn unlock(&mut self, tag: &LockTag, mode: LockMode) {
        for l in self.levels.iter_mut().rev() {
            if let Some(i) = l.locks.iter().rposition(|(t, m)| t == tag && *m == mode) {
                l.locks.swap_remove(i);
                self.db.locks.release(&self.owner, tag, mode);
                return;
            }
        }
    }

    /// Waits until transaction `xid` (and, for a released subtransaction,
    /// its top-level transaction) has ended (PostgreSQL's
    /// `XactLockTableWait`). Returns at once for an ended or own xid.
    pub fn wait_for_xid(&mut self, xid: Xid) -> Result<(), LockError> {
        wait_for_xid_as(
            &self.db,
            &self.owner,
            &self.opts.wait,
            |x| self.is_own_xid(x),
            xid,
        )
    }

    /// Opens a savepoint called `name`.
    pub fn savepoint(&mut self, name: &str) {
        self.levels.push(Level {
            name: Some(name.to_string()),
            ..Level::default()
        });
    }

    /// The savepoint level called `name` (the most recent one).
    fn find_savepoint(&self, name: &str) -> Result<usize, StorageError> {
        self.levels
            .iter()
            .rposition(|l| l.name.as_deref() == Some(name))
            .ok_or_else(|| {
                StorageError::report("3B001", format!("savepoint \"{name}\" does not exist"))
            })
    }

    /// Rolls back to savepoint `name`: aborts it and every savepoint opened
    /// after it, and opens it again.
    pub fn rollback_to(&mut self, name: &str) -> Result<(), StorageError> {
        let at = self.find_savepoint(name)?;
        while self.levels.len() > at {
            let level = self.levels.pop().expect("levels above `at`");
            self.abort_level(level);
        }
        self.view = None;
        self.rebuild_own();
        self.savepoint(name);
        Ok(())
    }

    /// Releases savepoint `name` and every savepoint opened after it: their
    /// work becomes part of the enclosing level.
    pub fn release(&mut self, name: &str) -> Result<(), StorageError> {
        let at = self.find_savepoint(name)?;
        while self.levels.len() > at {
            let level = self.levels.pop().expect("levels above `at`");
            let parent = self.levels.last_mut().expect("level 0 is never released");
            if level.xid != INVALID_XID {
                parent.children.push(level.xid);
            }
            parent.children.extend(level.children);
            parent.locks.extend(level.locks);
            parent.ddl.extend(level.ddl);
            parent.created.extend(level.created);
            for (rel, d) in level.stats {
                parent.stats.entry(rel).or_default().add(&d);
            }
        }
        Ok(())
    }

    /// Undoes one savepoint level being rolled back (its xids abort).
    fn abort_level(&mut self, level: Level) {
        let db = self.db.clone();
        let mut xids = level.children.clone();
        if level.xid != INVALID_XID {
            db.txn.log_abort(level.xid, &level.children);
            xids.push(level.xid);
        }
        if !xids.is_empty() {
            db.txn.clog.abort_all(&xids);
            if let Some(slot) = self.slot {
                db.txn.procs.remove_xids(slot, &xids);
            }
            db.txn.clog.forget_parents(&xids);
        }
        self.drop_created(&level.created);
        for (tag, mode) in level.locks.iter().rev() {
            db.locks.release(&self.owner, tag, *mode);
        }
        db.stats.aborted(&level.stats);
    }

    /// Forgets the buffers of and removes relations created by rolled-back work.
    fn drop_created(&self, created: &[u32]) {
        for &oid in created {
            self.db.pool.drop_relation(oid);
            self.db.pool.set_unlogged(oid, false);
            let _ = self.db.smgr.unlink(oid);
        }
    }

    /// The catalog as this transaction sees it: the committed catalog with
    /// the transaction's own DDL applied.
    pub fn catalog(&mut self) -> Arc<Catalog> {
        let shared = self.db.catalog_snapshot();
        if self.levels.iter().all(|l| l.ddl.is_empty()) {
            return shared;
        }
        if let Some((base, view)) = &self.view {
            if Arc::ptr_eq(base, &shared) {
                return view.clone();
            }
        }
        let view = Arc::new(shared.with_changes(self.levels.iter().flat_map(|l| &l.ddl)));
        self.view = Some((shared, view.clone()));
        view
    }

    fn add_ddl(&mut self, change: DdlChange) {
        self.levels
            .last_mut()
            .expect("level 0 exists")
            .ddl
            .push(change);
        self.view = None;
    }

    /// Logs a DDL record (flushed: it must be durable before the file or
    /// the catalog entry can exist) and registers it for re-logging by
    /// checkpoints while this transaction runs.
    fn log_ddl(&mut self, kind: RecordType, payload: Vec<u8>) -> Result<(), StorageError> {
        let xid = self.xid()?;
        let top = self.levels[0].xid;
        self.db.log_ddl_record(top, xid, kind, payload)
    }

    /// Takes the lock on a relation name about to be created and checks
    /// that the name is free.
    fn claim_name(&mut self, name: &str) -> Result<(), StorageError> {
        self.lock(
            LockTag::RelationName(name.to_string()),
            LockMode::AccessExclusive,
            false,
        )
        .map_err(|e| lock_error(e, &format!("relation \"{name}\"")))?;
        if self.catalog().relation_exists(name) {
            return Err(StorageError::report(
                "42P07",
                format!("relation \"{name}\" already exists"),
            ));
        }
        Ok(())
    }

    /// CREATE TABLE: a new empty table, visible to this transaction only
    /// until it commits. Its pages are not logged (the commit fsyncs the
    /// file), so a CREATE TABLE AS fills it cheaply.
    pub fn create_table(
        &mut self,
        name: &str,
        columns: Vec<ColumnDef>,
    ) -> Result<TableDef, StorageError> {
        self.create_relation(TableDef::new(0, name, columns))
    }

    /// A new oid for a catalog object that is not a relation (a CHECK
    /// constraint), from the relations' counter.
    pub fn allocate_oid(&mut self) -> Result<u32, StorageError> {
        self.db.catalog_mut().allocate_oid()
    }

    /// CREATE TABLE or CREATE VIEW from a whole definition (columns, CHECK
    /// constraints, a view's query); `def.oid` is assigned here. A table
    /// gets an empty file as [`Transaction::create_table`] describes; a view
    /// has none.
    pub fn create_relation(&mut self, mut def: TableDef) -> Result<TableDef, StorageError> {
        self.claim_name(&def.name)?;
        let oid = self.db.catalog_mut().allocate_oid()?;
        self.lock(LockTag::Relation(oid), LockMode::AccessExclusive, false)
            .map_err(|e| lock_error(e, "relation"))?;
        def.oid = oid;
        self.log_ddl(
            RecordType::CreateTable,
            crate::catalog::encode_table(&def).into_bytes(),
        )?;
        if !def.is_view() {
            self.db.pool.set_unlogged(oid, true);
            self.levels.last_mut().expect("level 0").created.push(oid);
            crate::columnar::create_files(&self.db.smgr, &def, false)?;
            if def.is_sequence() {
                crate::sequence::init_relation(&self.db.pool, &def)?;
            }
        }
        self.add_ddl(DdlChange::CreateTable(def.clone()));
        Ok(def)
    }

    /// CREATE INDEX: registers a new (empty) btree of `kind` on `columns`
    /// of `table`, after taking `ShareLock` on the table (writers wait until this
    /// transaction ends). The caller builds it (`btree::Index::build`,
    /// which logs every page).
    pub fn create_index(
        &mut self,
        table: &TableDef,
        name: &str,
        columns: Vec<IndexColumn>,
        kind: IndexKind,
    ) -> Result<IndexDef, StorageError> {
        assert!(!columns.is_empty(), "an index has key columns");
        self.lock(LockTag::Relation(table.oid), LockMode::Share, false)
            .map_err(|e| lock_error(e, &format!("relation \"{}\"", table.name)))?;
        self.claim_name(name)?;
        let oid = self.db.catalog_mut().allocate_oid()?;
        self.lock(LockTag::Relation(oid), LockMode::AccessExclusive, false)
            .map_err(|e| lock_error(e, "relation"))?;
        let index = IndexDef {
            oid,
            name: name.to_string(),
            table: table.oid,
            columns,
            kind,
        };
        self.log_ddl(
            RecordType::CreateIndex,
            crate::catalog::encode_index(&index).into_bytes(),
        )?;
        self.db.smgr.create(oid)?;
        self.levels.last_mut().expect("level 0").created.push(oid);
        self.add_ddl(DdlChange::CreateIndex(index.clone()));
        Ok(index)
    }

    /// ALTER TABLE / ALTER VIEW without a new relation file: `def` (an
    /// existing table's oid) replaces its definition for this transaction
    /// now and for everybody at commit. Takes `AccessExclusiveLock` on the
    /// relation, and on a new name (which must be free).
    pub fn alter_relation(&mut self, def: TableDef) -> Result<(), StorageError> {
        let old = self.catalog().table_by_oid(def.oid).map(|t| t.name.clone());
        let payload = crate::catalog::encode_table(&def).into_bytes();
        self.alter_catalog_entry(def.oid, old, &def.name, RecordType::AlterTable, payload)?;
        self.add_ddl(DdlChange::AlterTable(def));
        Ok(())
    }

    /// ALTER INDEX ... RENAME (and renames of the constraints indexes stand
    /// for): `def` (an existing index's oid) replaces its definition, as
    /// [`Transaction::alter_relation`] does for tables.
    pub fn alter_index(&mut self, def: IndexDef) -> Result<(), StorageError> {
        let old = self.catalog().index_by_oid(def.oid).map(|i| i.name.clone());
        let payload = crate::catalog::encode_index(&def).into_bytes();
        self.alter_catalog_entry(def.oid, old, &def.name, RecordType::AlterIndex, payload)?;
        self.add_ddl(DdlChange::AlterIndex(def));
        Ok(())
    }

    /// The steps both ALTERs share: relation `oid` (named `old_name` in
    /// this transaction's catalog, `None` if it does not exist) is locked
    /// AccessExclusive, a changed name `new_name` is claimed, and the new
    /// definition is WAL-logged as `record`.
    fn alter_catalog_entry(
        &mut self,
        oid: u32,
        old_name: Option<String>,
        new_name: &str,
        record: RecordType,
        payload: Vec<u8>,
    ) -> Result<(), StorageError> {
        let old_name = old_name.ok_or_else(|| {
            StorageError::report("42P01", format!("relation \"{new_name}\" does not exist"))
        })?;
        self.lock(LockTag::Relation(oid), LockMode::AccessExclusive, false)
            .map_err(|e| lock_error(e, &format!("relation \"{old_name}\"")))?;
        if old_name != new_name {
            self.claim_name(new_name)?;
        }
        self.log_ddl(record, payload)
    }

    /// DROP TABLE / DROP INDEX: relation `oid` (a table takes its indexes
    /// along) disappears for this transaction now and for everybody at
    /// commit. Takes `AccessExclusiveLock` on it first; `name` is for the
    /// error message should the lock fail.
    pub fn drop_relation(&mut self, oid: u32, name: &str) -> Result<(), StorageError> {
        self.lock(LockTag::Relation(oid), LockMode::AccessExclusive, false)
            .map_err(|e| lock_error(e, &format!("relation \"{name}\"")))?;
        self.log_ddl(RecordType::DropTable, oid.to_le_bytes().to_vec())?;
        self.add_ddl(DdlChange::Drop(oid));
        Ok(())
    }

    /// Counts rows written with a bulk path (a [`crate::heap::HeapInserter`]
    /// filled by the caller) for `pg_stat_user_tables`.
    pub fn count_inserts(&mut self, rel: u32, n: u64) {
        self.delta(rel).inserted += n;
    }

    pub(crate) fn delta(&mut self, rel: u32) -> &mut TableDelta {
        self.levels
            .last_mut()
            .expect("level 0")
            .stats
            .entry(rel)
            .or_default()
    }

    /// Commits (see the module doc).
    pub fn commit(mut self) -> Result<(), StorageError> {
        // The last command's columnar deletions (an error leaves the
        // transaction to be rolled back when it is dropped).
        self.flush_columnar_deletes()?;
        self.done = true;
        // Open savepoints commit with the transaction.
        while self.levels.len() > 1 {
            let name = self
                .levels
                .last()
                .and_then(|l| l.name.clone())
                .expect("named");
            self.release(&name)?;
        }
        let mut level = self.levels.pop().expect("level 0");
        let ddl = std::mem::take(&mut level.ddl);
        if level.xid == INVALID_XID {
            self.finish(&level);
            self.db.stats.committed(&level.stats);
            return Ok(());
        }
        let db = self.db.clone();
        let top = level.xid;
        let subs = level.children.clone();
        let result = (|| -> Result<Result<(), StorageError>, StorageError> {
            // Relations created here were not logged: make them durable
            // before the commit record can be.
            let dropped: Vec<u32> = ddl
                .iter()
                .filter_map(|c| match c {
                    DdlChange::Drop(o) => Some(*o),
                    _ => None,
                })
                .collect();
            for &oid in &level.created {
                if !dropped.contains(&oid) && db.smgr.exists(oid) {
                    db.pool.flush_relation(oid)?;
                    db.smgr.sync(oid)?;
                }
                db.pool.set_unlogged(oid, false);
            }
            let sync = self
                .opts
                .synchronous_commit
                .unwrap_or(db.options().durability.synchronous_commit);
            db.commit_xids(top, &subs, sync, &ddl)
        })();
        let after = match result {
            Ok(after) => after,
            Err(e) => {
                // Nothing committed: the xids abort.
                self.levels.push(level);
                self.levels[0].ddl = ddl;
                self.done = false;
                return Err(e);
            }
        };
        self.finish(&level);
        db.stats.committed(&level.stats);
        after?;
        db.maybe_checkpoint()
    }

    /// Leaves the proc array and releases the locks (the end of commit and
    /// abort).
    fn finish(&mut self, level: &Level) {
        if let Some(slot) = self.slot.take() {
            self.db.txn.procs.end(slot);
        }
        crate::rowlock::release_all(self);
        for (tag, mode) in level.locks.iter().rev() {
            self.db.locks.release(&self.owner, tag, *mode);
        }
    }

    /// Rolls back (the same as dropping the transaction).
    pub fn rollback(mut self) {
        self.abort();
    }

    fn abort(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        while self.levels.len() > 1 {
            let level = self.levels.pop().expect("levels above 0");
            self.abort_level(level);
        }
        let level = self.levels.pop().expect("level 0");
        let db = self.db.clone();
        if level.xid != INVALID_XID {
            db.txn.log_abort(level.xid, &level.children);
            let mut xids = level.children.clone();
            xids.push(level.xid);
            db.txn.clog.abort_all(&xids);
            db.txn.clog.forget_parents(&level.children);
            db.forget_ddl_records(level.xid);
        }
        self.drop_created(&level.created);
        self.finish(&level);
        db.stats.aborted(&level.stats);
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.abort();
    }
}

/// [`Transaction::wait_for_xid`] for lock owner `owner`, whose own xids
/// `is_own` recognises (a single-statement writer waits this way too).
pub(crate) fn wait_for_xid_as(
    db: &Database,
    owner: &Arc<LockOwner>,
    wait: &WaitOptions,
    is_own: impl Fn(Xid) -> bool,
    mut xid: Xid,
) -> Result<(), LockError> {
    loop {
        if is_own(xid) {
            return Ok(());
        }
        if db.txn.clog.status(xid) != crate::clog::XidStatus::InProgress {
            return Ok(());
        }
        let tag = LockTag::Transaction(xid);
        db.locks.acquire(owner, &tag, LockMode::Share, wait)?;
        db.locks.release(owner, &tag, LockMode::Share);
        // The lock is free: the xid ended, or it was a sub-xid whose
        // savepoint was released — then its top-level transaction holds
        // the lock on its own xid and we wait for that.
        match db.txn.clog.status(xid) {
            crate::clog::XidStatus::InProgress => match db.txn.clog.parent(xid) {
                Some(p) => xid = p,
                // Not running any more (a crash left it in progress).
                None if !db.txn.procs.is_running(xid) => return Ok(()),
                None => std::thread::yield_now(),
            },
            _ => return Ok(()),
        }
    }
}

/// The error a client sees for a failed lock on `object` (`relation "t"`
/// or `row in relation "t"`, for the NOWAIT message):
/// `could not obtain lock on ...` (55P03), `canceling statement due to
/// lock timeout` (55P03), `deadlock detected` (40P01, with PostgreSQL's
/// DETAIL and HINT) or `canceling statement due to user request` (57014).
pub fn lock_error(e: LockError, object: &str) -> StorageError {
    match e {
        LockError::WouldBlock => {
            StorageError::report("55P03", format!("could not obtain lock on {object}"))
        }
        LockError::Timeout => {
            StorageError::report("55P03", "canceling statement due to lock timeout")
        }
        LockError::Deadlock(detail) => StorageError::Report(Box::new(ErrorReport {
            code: "40P01",
            message: "deadlock detected".into(),
            detail: Some(detail),
            hint: Some("See server log for query details.".into()),
        })),
        LockError::Interrupted => {
            StorageError::report("57014", "canceling statement due to user request")
        }
    }
}
