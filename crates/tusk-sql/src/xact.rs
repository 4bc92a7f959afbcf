//! A session's transactions: PostgreSQL's transaction blocks on
//! tusk-storage's [`Transaction`] (see its `xact` module doc).
//!
//! ## States
//!
//! A session is outside any block ([`Block::None`]), inside a block that
//! `BEGIN` opened ([`Block::Explicit`]), inside a block whose statement
//! failed ([`Block::Failed`]: PostgreSQL's aborted state, where everything
//! but `COMMIT`, `ROLLBACK` and `ROLLBACK TO` is refused with `current
//! transaction is aborted, commands ignored until end of transaction block`,
//! 25P02), or running a string of several statements outside a block
//! ([`Block::Implicit`]: PostgreSQL's implicit transaction block, so that
//! the statements commit together or not at all). [`Session::transaction_status`]
//! folds these into psql's and the wire protocol's idle / in block / failed.
//!
//! A statement outside a block runs in a transaction of its own: begun
//! before the statement, committed after it, rolled back if it fails. In a
//! block the session keeps one [`Transaction`]; each statement ends with
//! `next_command`, so the next one sees its changes. Statements that need
//! no transaction (SET, SHOW, VACUUM, CHECKPOINT) do not begin one.
//!
//! ## What a statement does with its transaction
//!
//! A statement binds its names against the transaction's catalog view
//! (its own DDL included), then locks what it uses: `AccessShareLock` on
//! every relation it reads, `RowExclusiveLock` on the table it changes,
//! `RowShareLock` on tables it locks rows of, `AccessExclusiveLock` on what
//! DDL changes (taken by the storage layer). Only then does it take its
//! snapshot ([`Session::snapshot`]), so that under READ COMMITTED it sees
//! everything committed by the transactions it waited for. If a relation it
//! bound disappeared while it waited for the lock (a concurrent DROP
//! committed), or its committed definition changed since the statement
//! began (a concurrent ALTER TABLE), the statement is bound again from the
//! start ([`stale_catalog`]), as PostgreSQL looks a name up again after
//! locking.
//!
//! ## Settings, read-only transactions
//!
//! `SET` inside a block is undone by `ROLLBACK` (and by `ROLLBACK TO` a
//! savepoint set before it), as in PostgreSQL: the settings are saved when
//! the block begins and at each savepoint. `SET LOCAL` lasts until the
//! block ends either way: the session keeps, beside the current settings,
//! those the block leaves behind if it commits. A READ ONLY transaction refuses
//! every statement that writes with `cannot execute INSERT in a read-only
//! transaction` (25006). SERIALIZABLE is refused (there is no SSI): never
//! silently weaker.

use crate::error::{sqlstate, SqlError};
use crate::guc::Gucs;
use crate::session::{Result, Session};
use std::sync::Arc;
use tusk_storage::{
    Catalog, IsolationLevel, LockMode, Snapshot, Transaction, TxnOptions, WaitOptions,
};

/// `there is already a transaction in progress`.
pub(crate) const ACTIVE_SQL_TRANSACTION: &str = "25001";
/// `there is no transaction in progress`.
pub(crate) const NO_ACTIVE_SQL_TRANSACTION: &str = "25P01";
/// Internal: a relation bound by the statement went away while it waited
/// for a lock; the statement is bound again (never reaches a client).
const STALE_CATALOG: &str = "XXSTL";
/// How often a statement is bound again before giving up.
const MAX_REBINDS: usize = 8;

/// Where the session stands, as psql's prompt and the wire protocol's
/// ReadyForQuery show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Not in a transaction block.
    Idle,
    /// In a transaction block.
    InBlock,
    /// In a failed transaction block (until ROLLBACK).
    Failed,
}

impl TransactionStatus {
    /// ReadyForQuery's status byte: `I`, `T` or `E`.
    pub fn indicator(self) -> u8 {
        match self {
            TransactionStatus::Idle => b'I',
            TransactionStatus::InBlock => b'T',
            TransactionStatus::Failed => b'E',
        }
    }

    /// What psql's `%x` prompt escape shows: nothing, `*` or `!`.
    pub fn prompt_marker(self) -> &'static str {
        match self {
            TransactionStatus::Idle => "",
            TransactionStatus::InBlock => "*",
            TransactionStatus::Failed => "!",
        }
    }
}

/// The session's block state (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Block {
    None,
    Implicit,
    Explicit,
    Failed,
}

/// Isolation levels as SQL names them (READ UNCOMMITTED runs as READ
/// COMMITTED, as in PostgreSQL, but keeps its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    pub(crate) fn parse(name: &str) -> Option<Isolation> {
        Some(match name {
            "read uncommitted" => Isolation::ReadUncommitted,
            "read committed" => Isolation::ReadCommitted,
            "repeatable read" => Isolation::RepeatableRead,
            "serializable" => Isolation::Serializable,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read uncommitted",
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The storage layer's level; SERIALIZABLE is refused.
    pub(crate) fn level(self) -> Result<IsolationLevel> {
        match self {
            Isolation::ReadUncommitted | Isolation::ReadCommitted => {
                Ok(IsolationLevel::ReadCommitted)
            }
            Isolation::RepeatableRead => Ok(IsolationLevel::RepeatableRead),
            Isolation::Serializable => Err(serializable_refused()),
        }
    }
}

/// The refusal of SERIALIZABLE (0A000).
pub(crate) fn serializable_refused() -> SqlError {
    SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "SERIALIZABLE isolation level is not supported",
    )
    .with_detail(
        "tusk has no serializable snapshot isolation and does not run SERIALIZABLE transactions at a weaker level.",
    )
    .with_hint("Use REPEATABLE READ, or READ COMMITTED with explicit locks.")
}

/// `current transaction is aborted, commands ignored until end of
/// transaction block` (25P02).
pub(crate) fn aborted() -> SqlError {
    SqlError::coded(
        sqlstate::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

/// The internal error that makes a statement be bound again.
pub(crate) fn stale_catalog(oid: u32) -> SqlError {
    SqlError::coded(
        STALE_CATALOG,
        format!("could not open relation with OID {oid}"),
    )
}

/// The settings at the start of a block or at a savepoint.
#[derive(Clone)]
pub(crate) struct SavedSettings {
    /// The savepoint (`None`: the block's start).
    pub savepoint: Option<String>,
    pub current: Gucs,
    pub after_commit: Gucs,
}

/// A session's transaction state.
pub(crate) struct SessionXact {
    pub(crate) txn: Option<Transaction>,
    pub(crate) block: Block,
    /// The current (or next) transaction's isolation level and access mode.
    pub(crate) isolation: Isolation,
    pub(crate) read_only: bool,
    /// Whether the transaction took a snapshot: SET TRANSACTION ISOLATION
    /// LEVEL must come before.
    pub(crate) snapshot_taken: bool,
    /// Settings when the block began (name `None`) and at each savepoint.
    pub(crate) saved: Vec<SavedSettings>,
    /// In a block: the settings it leaves behind if it commits (SET LOCAL
    /// changes only the current ones).
    pub(crate) after_commit: Option<Gucs>,
    pub(crate) pid: i32,
    /// The shared catalog when the running statement (or its latest
    /// attempt) began: a relation whose committed definition differs after
    /// a lock wait makes the statement bind again (see [`stale_catalog`]).
    pub(crate) catalog_at_start: Option<Arc<Catalog>>,
    /// An implicit block opened before its first statement began: that
    /// statement fixes the transaction's start time.
    pub(crate) block_fresh: bool,
    /// The running statement failed (its `set_config` calls are void).
    pub(crate) statement_failed: bool,
    /// The lock owner handed from each transaction to the next, so that
    /// its fast-path slots are registered once per session (see
    /// `tusk_storage::lock`).
    lock_owner: Option<Arc<tusk_storage::lock::LockOwner>>,
}

impl SessionXact {
    pub(crate) fn new() -> SessionXact {
        use std::sync::atomic::{AtomicI32, Ordering};
        // Process ids of sessions that are not given one (deadlock reports
        // name them); the server sets its own.
        static NEXT_PID: AtomicI32 = AtomicI32::new(10_000);
        SessionXact {
            txn: None,
            block: Block::None,
            isolation: Isolation::ReadCommitted,
            read_only: false,
            snapshot_taken: false,
            saved: Vec::new(),
            after_commit: None,
            catalog_at_start: None,
            pid: NEXT_PID.fetch_add(1, Ordering::Relaxed),
            block_fresh: false,
            statement_failed: false,
            lock_owner: None,
        }
    }
}

impl Session {
    /// Idle, in a transaction block, or in a failed one.
    pub fn transaction_status(&self) -> TransactionStatus {
        match self.xact.block {
            Block::None | Block::Implicit => TransactionStatus::Idle,
            Block::Explicit => TransactionStatus::InBlock,
            Block::Failed => TransactionStatus::Failed,
        }
    }

    /// The process id that deadlock reports name for this session.
    pub fn pid(&self) -> i32 {
        self.xact.pid
    }

    /// Sets the process id (the server's backend pid) for transactions
    /// begun from now on.
    pub fn set_pid(&mut self, pid: i32) {
        self.xact.pid = pid;
        self.info.set_pid(pid);
    }

    /// How this session's lock waits behave: `lock_timeout`,
    /// `deadlock_timeout`, and the session's interrupt (a cancel request,
    /// `statement_timeout`) polled while waiting.
    pub(crate) fn wait_options(&self) -> WaitOptions {
        WaitOptions {
            nowait: false,
            lock_timeout: self.gucs.lock_timeout(),
            deadlock_timeout: self.gucs.deadlock_timeout(),
            interrupt: None,
            cancel: Some(self.cancel_check.clone()),
        }
    }

    /// Begins the session's transaction with the current characteristics
    /// (the defaults, or what BEGIN and SET TRANSACTION chose).
    pub(crate) fn begin_transaction(&mut self) -> Result<()> {
        let level = self.xact.isolation.level()?;
        // The session's owner, unless the last transaction is somehow
        // still alive or the session's pid changed.
        let pid = self.xact.pid;
        let owner = match &self.xact.lock_owner {
            Some(o) if Arc::strong_count(o) == 1 && o.pid() == pid => o.clone(),
            _ => {
                let o = self.db.locks.new_owner(pid);
                self.xact.lock_owner = Some(o.clone());
                o
            }
        };
        let txn = self.db.begin(TxnOptions {
            isolation: level,
            synchronous_commit: None,
            pid,
            wait: self.wait_options(),
            lock_owner: Some(owner),
        });
        self.xact.txn = Some(txn);
        self.xact.snapshot_taken = false;
        Ok(())
    }

    /// The session's transaction, begun now if there is none.
    pub(crate) fn txn(&mut self) -> Result<&mut Transaction> {
        if self.xact.txn.is_none() {
            self.begin_transaction()?;
        }
        Ok(self.xact.txn.as_mut().expect("begun above"))
    }

    /// The statement's snapshot (see the module doc: take it after the
    /// locks).
    pub(crate) fn snapshot(&mut self) -> Result<Snapshot> {
        let snap = self.txn()?.snapshot();
        self.xact.snapshot_taken = true;
        Ok(snap)
    }

    /// The catalog as the session's transaction sees it (also what the
    /// session's catalog functions read from now on).
    pub(crate) fn catalog(&mut self) -> Result<Arc<Catalog>> {
        let c = self.txn()?.catalog();
        self.info.set_catalog(&c);
        Ok(c)
    }

    /// The catalog for a look that needs no transaction (`\d`): the
    /// transaction's view if one is open.
    pub(crate) fn catalog_view(&mut self) -> Arc<Catalog> {
        match self.xact.txn.as_mut() {
            Some(t) => t.catalog(),
            None => self.db.catalog_snapshot(),
        }
    }

    /// Takes `mode` on relation `oid` for the rest of the transaction, then
    /// checks that the relation still exists (see [`stale_catalog`]).
    pub(crate) fn lock_relation(&mut self, oid: u32, mode: LockMode, name: &str) -> Result<()> {
        let txn = self.txn()?;
        txn.lock_relation(oid, mode).map_err(|e| {
            SqlError::from(tusk_storage::xact::lock_error(
                e,
                &format!("relation \"{name}\""),
            ))
        })?;
        let cat = txn.catalog();
        if cat.table_by_oid(oid).is_none() && cat.index_by_oid(oid).is_none() {
            return Err(stale_catalog(oid));
        }
        // A concurrent ALTER committed while the statement bound or waited:
        // what it bound may be out of date.
        if let Some(start) = &self.xact.catalog_at_start {
            let now = self.db.catalog_snapshot();
            if !Arc::ptr_eq(start, &now)
                && (start.table_by_oid(oid) != now.table_by_oid(oid)
                    || start.index_by_oid(oid) != now.index_by_oid(oid))
            {
                return Err(stale_catalog(oid));
            }
        }
        Ok(())
    }

    /// Refuses a statement that writes in a read-only transaction:
    /// `cannot execute INSERT in a read-only transaction` (25006).
    pub(crate) fn check_writable(&self, what: &str) -> Result<()> {
        if self.xact.read_only {
            return Err(SqlError::coded(
                sqlstate::READ_ONLY_SQL_TRANSACTION,
                format!("cannot execute {what} in a read-only transaction"),
            ));
        }
        Ok(())
    }

    /// Ends the session's transaction, committing or rolling back. Held
    /// cursors compute their rows first (see `commands::cursor`); if that
    /// fails, the transaction rolls back.
    pub(crate) fn end_transaction(&mut self, commit: bool) -> Result<()> {
        let held = self.cursors_at_transaction_end(commit);
        self.xact.snapshot_taken = false;
        let Some(mut txn) = self.xact.txn.take() else {
            return held;
        };
        if let Err(e) = held {
            txn.rollback();
            return Err(e);
        }
        if commit {
            let synchronous = self.gucs.synchronous_commit();
            if synchronous {
                // Sequence values this transaction used, as its commit
                // record would make them durable (see `sequence_calls`).
                self.info.flush_sequence_wal()?;
            }
            txn.set_synchronous_commit(Some(synchronous));
            txn.commit()?;
        } else {
            txn.rollback();
        }
        Ok(())
    }

    /// Opens a block (BEGIN, or a string of several statements), saving the
    /// settings for a rollback.
    pub(crate) fn open_block(&mut self, block: Block) {
        self.xact.block = block;
        self.xact.saved = vec![self.saved_settings(None)];
        self.xact.after_commit = Some(self.gucs.clone());
    }

    /// The settings now, to go back to at a rollback (to `savepoint`).
    pub(crate) fn saved_settings(&self, savepoint: Option<String>) -> SavedSettings {
        SavedSettings {
            savepoint,
            current: self.gucs.clone(),
            after_commit: self
                .xact
                .after_commit
                .clone()
                .unwrap_or_else(|| self.gucs.clone()),
        }
    }

    /// Goes back to settings saved by [`Session::saved_settings`].
    pub(crate) fn restore_settings(&mut self, saved: &SavedSettings) {
        self.gucs = saved.current.clone();
        if self.xact.after_commit.is_some() {
            self.xact.after_commit = Some(saved.after_commit.clone());
        }
    }

    /// Changes settings with `change`: for the session, or with `local`
    /// (SET LOCAL) only until the block ends.
    pub(crate) fn change_settings(
        &mut self,
        local: bool,
        change: &dyn Fn(&mut Gucs) -> std::result::Result<(), String>,
    ) -> std::result::Result<(), String> {
        change(&mut self.gucs)?;
        if let (false, Some(after)) = (local, self.xact.after_commit.as_mut()) {
            change(after)?;
        }
        Ok(())
    }

    /// Leaves the block: commits (its settings stay, but for SET LOCAL's)
    /// or rolls back (the settings go back to the block's start).
    pub(crate) fn close_block(&mut self, commit: bool) -> Result<()> {
        let saved = std::mem::take(&mut self.xact.saved);
        let after = self.xact.after_commit.take();
        self.xact.block = Block::None;
        match (commit, after, saved.first()) {
            (true, Some(after), _) => self.gucs = after,
            (false, _, Some(start)) => self.gucs = start.current.clone(),
            _ => {}
        }
        self.end_transaction(commit)
    }

    /// Runs a statement that belongs to a transaction: refused in a failed
    /// block; in a transaction of its own outside a block; bound again if
    /// the catalog changed under it; a failure in a block fails the block.
    /// `needs_txn`: whether it uses the transaction at all (SET and SHOW do
    /// not begin one).
    pub(crate) fn transactional(
        &mut self,
        needs_txn: bool,
        run: &mut dyn FnMut(&mut Session) -> Result<()>,
    ) -> Result<()> {
        if self.xact.block == Block::Failed {
            return Err(aborted());
        }
        let own = self.xact.block == Block::None;
        if own {
            self.reset_characteristics();
        }
        if needs_txn {
            let wait = self.wait_options();
            *self.txn()?.wait_options_mut() = wait;
        }
        let mut attempts = 0;
        let result = loop {
            self.xact.catalog_at_start = Some(self.db.catalog_snapshot());
            match run(self) {
                Err(e) if e.code == STALE_CATALOG && attempts < MAX_REBINDS => attempts += 1,
                Err(mut e) if e.code == STALE_CATALOG => {
                    e.code = sqlstate::INTERNAL_ERROR;
                    break Err(e);
                }
                r => break r,
            }
        };
        self.xact.catalog_at_start = None;
        let result = result
            .and_then(|()| match self.xact.txn.as_mut() {
                Some(t) => Ok(t.next_command()?),
                None => Ok(()),
            })
            .map_err(|e| self.interrupted(e));
        match result {
            Ok(()) if own => self.end_transaction(true),
            Ok(()) => Ok(()),
            Err(e) => {
                self.fail_statement();
                Err(e)
            }
        }
    }

    /// A lock wait cut short by the session's interrupt says why, as the
    /// executor does (`canceling statement due to statement timeout`).
    fn interrupted(&self, e: SqlError) -> SqlError {
        if e.code != sqlstate::QUERY_CANCELED {
            return e;
        }
        match self.interrupt.check() {
            Err(why) => why.into(),
            Ok(()) => e,
        }
    }

    /// What a failed statement (or transaction-control command) does to the
    /// transaction: outside a block it is rolled back; an explicit block
    /// becomes failed; a string's implicit block is rolled back by the
    /// caller once the string stops.
    ///
    /// As in PostgreSQL, the failed work is undone at once, not at the
    /// ROLLBACK: the whole transaction if no savepoint is open (its locks go,
    /// so that sessions waiting for it go on), else the innermost savepoint
    /// level (which a ROLLBACK TO then opens again).
    pub(crate) fn fail_statement(&mut self) {
        self.xact.statement_failed = true;
        match self.xact.block {
            Block::None => {
                let _ = self.end_transaction(false);
            }
            Block::Explicit => {
                self.xact.block = Block::Failed;
                let innermost = self.xact.saved.last().and_then(|s| s.savepoint.clone());
                match (innermost, self.xact.txn.as_mut()) {
                    (Some(name), Some(txn)) => {
                        if txn.rollback_to(&name).is_err() {
                            let _ = self.end_transaction(false);
                        }
                    }
                    _ => {
                        let _ = self.end_transaction(false);
                    }
                }
            }
            Block::Implicit | Block::Failed => {}
        }
    }

    /// Starts a string of several statements: outside a block they run as
    /// one transaction (PostgreSQL's implicit transaction block), which
    /// [`Session::end_implicit_block`] ends after the last statement or the
    /// first that fails. [`Session::execute`] does both; a wire-protocol
    /// server running a simple query statement by statement calls them.
    pub fn begin_implicit_block(&mut self) {
        if self.xact.block == Block::None {
            self.open_block(Block::Implicit);
            self.reset_characteristics();
            self.xact.block_fresh = true;
        }
    }

    /// Ends a string of statements: commits its implicit transaction
    /// (`ok`), or rolls it back after a failure. Nothing happens if the
    /// string opened a block of its own (BEGIN without COMMIT).
    pub fn end_implicit_block(&mut self, ok: bool) -> Result<()> {
        if self.xact.block == Block::Implicit {
            return self.close_block(ok);
        }
        Ok(())
    }

    /// The running statement failed where the session did not see it (a
    /// query's rows pulled with `portal::RowStream::next_batch`): an open
    /// block becomes failed, as any failed statement makes it.
    pub fn statement_failed(&mut self) {
        self.fail_statement();
    }

    /// VACUUM and the like: `VACUUM cannot run inside a transaction block`.
    pub(crate) fn prevent_in_block(&self, what: &str) -> Result<()> {
        match self.xact.block {
            Block::None => Ok(()),
            Block::Failed => Err(aborted()),
            Block::Explicit | Block::Implicit => Err(SqlError::coded(
                ACTIVE_SQL_TRANSACTION,
                format!("{what} cannot run inside a transaction block"),
            )),
        }
    }
}
