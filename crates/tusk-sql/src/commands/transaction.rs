//! Transaction control — BEGIN / START TRANSACTION, COMMIT / END,
//! ROLLBACK / ABORT, SAVEPOINT, RELEASE, ROLLBACK TO, SET TRANSACTION —
//! and LOCK TABLE.
//!
//! The rules are PostgreSQL's (`xact.c`'s block states, see the session's
//! `xact`): a BEGIN inside a block and a COMMIT or ROLLBACK outside one
//! only warn (`there is already a transaction in progress`, 25001; `there
//! is no transaction in progress`, 25P01); SAVEPOINT, RELEASE and
//! ROLLBACK TO outside a block are errors; in a failed block only COMMIT
//! (which rolls back and says ROLLBACK), ROLLBACK and ROLLBACK TO are
//! accepted. A failed RELEASE or ROLLBACK TO (no such savepoint) fails the
//! block, as any failed statement does.

use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{Notice, QueryResult, Result, Session};
use crate::xact::{
    aborted, serializable_refused, Block, Isolation, ACTIVE_SQL_TRANSACTION,
    NO_ACTIVE_SQL_TRANSACTION,
};
use sqlparser::ast as A;
use tusk_storage::LockMode;

/// Whether `s` is handled here rather than as a statement in the
/// session's transaction.
pub(crate) fn is_transaction_control(s: &A::Statement) -> bool {
    matches!(
        s,
        A::Statement::StartTransaction { .. }
            | A::Statement::Commit { .. }
            | A::Statement::Rollback { .. }
            | A::Statement::Savepoint { .. }
            | A::Statement::ReleaseSavepoint { .. }
            | A::Statement::Set(A::Set::SetTransaction { .. })
    )
}

fn command(tag: &str) -> QueryResult {
    QueryResult::Command { tag: tag.into() }
}

fn warning(message: &str) -> QueryResult {
    QueryResult::Notice(Notice {
        level: "WARNING",
        message: message.into(),
        detail: None,
    })
}

/// `SAVEPOINT can only be used in transaction blocks` (25P01).
fn only_in_blocks(what: &str) -> SqlError {
    SqlError::coded(
        NO_ACTIVE_SQL_TRANSACTION,
        format!("{what} can only be used in transaction blocks"),
    )
}

fn isolation_of(l: &A::TransactionIsolationLevel) -> Result<Isolation> {
    Ok(match l {
        A::TransactionIsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
        A::TransactionIsolationLevel::ReadCommitted => Isolation::ReadCommitted,
        A::TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
        A::TransactionIsolationLevel::Serializable => Isolation::Serializable,
        A::TransactionIsolationLevel::Snapshot => {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "syntax error at or near \"SNAPSHOT\"",
            ))
        }
    })
}

impl Session {
    /// Runs a transaction-control statement; a failure fails an open block.
    pub(crate) fn transaction_control(
        &mut self,
        s: &A::Statement,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let r = self.control(s, sink);
        if r.is_err() {
            self.fail_statement();
        }
        r
    }

    fn control(&mut self, s: &A::Statement, sink: &mut dyn FnMut(QueryResult)) -> Result<()> {
        let block = self.xact.block;
        match s {
            A::Statement::StartTransaction { modes, begin, .. } => {
                let tag = if *begin { "BEGIN" } else { "START TRANSACTION" };
                match block {
                    Block::Failed => return Err(aborted()),
                    Block::Explicit => {
                        sink(warning("there is already a transaction in progress"));
                        self.set_transaction_modes(modes)?;
                    }
                    Block::Implicit => {
                        self.xact.block = Block::Explicit;
                        self.set_transaction_modes(modes)?;
                    }
                    Block::None => {
                        self.reset_characteristics();
                        self.set_transaction_modes(modes)?;
                        self.xact.isolation.level()?;
                        self.open_block(Block::Explicit);
                        self.begin_transaction()?;
                    }
                }
                sink(command(tag));
            }
            A::Statement::Commit { chain, .. } => {
                let tag = match block {
                    Block::None | Block::Implicit => {
                        if *chain {
                            return Err(only_in_blocks("COMMIT AND CHAIN"));
                        }
                        sink(warning("there is no transaction in progress"));
                        if block == Block::Implicit {
                            self.end_transaction(true)?;
                        }
                        "COMMIT"
                    }
                    Block::Explicit | Block::Failed => {
                        let failed = block == Block::Failed;
                        self.end_block(!failed, *chain)?;
                        if failed {
                            "ROLLBACK"
                        } else {
                            "COMMIT"
                        }
                    }
                };
                sink(command(tag));
            }
            A::Statement::Rollback {
                chain,
                savepoint: None,
            } => {
                match block {
                    Block::None | Block::Implicit => {
                        if *chain {
                            return Err(only_in_blocks("ROLLBACK AND CHAIN"));
                        }
                        sink(warning("there is no transaction in progress"));
                        if block == Block::Implicit {
                            self.end_transaction(false)?;
                        }
                    }
                    Block::Explicit | Block::Failed => self.end_block(false, *chain)?,
                }
                sink(command("ROLLBACK"));
            }
            A::Statement::Rollback {
                savepoint: Some(name),
                ..
            } => {
                if matches!(block, Block::None | Block::Implicit) {
                    return Err(only_in_blocks("ROLLBACK TO SAVEPOINT"));
                }
                let name = ident(name)?;
                // A failed block without savepoints has no transaction left.
                let Some(txn) = self.xact.txn.as_mut() else {
                    return Err(SqlError::coded(
                        "3B001",
                        format!("savepoint \"{name}\" does not exist"),
                    ));
                };
                txn.rollback_to(&name)?;
                // The settings go back to what they were at the savepoint,
                // which stays.
                if let Some(at) = self
                    .xact
                    .saved
                    .iter()
                    .rposition(|s| s.savepoint.as_deref() == Some(name.as_str()))
                {
                    self.xact.saved.truncate(at + 1);
                    let saved = self.xact.saved[at].clone();
                    self.restore_settings(&saved);
                }
                self.xact.block = Block::Explicit;
                sink(command("ROLLBACK"));
            }
            A::Statement::Savepoint { name } => {
                match block {
                    Block::None | Block::Implicit => return Err(only_in_blocks("SAVEPOINT")),
                    Block::Failed => return Err(aborted()),
                    Block::Explicit => {}
                }
                let name = ident(name)?;
                self.txn()?.savepoint(&name);
                let saved = self.saved_settings(Some(name));
                self.xact.saved.push(saved);
                sink(command("SAVEPOINT"));
            }
            A::Statement::ReleaseSavepoint { name } => {
                match block {
                    Block::None | Block::Implicit => {
                        return Err(only_in_blocks("RELEASE SAVEPOINT"))
                    }
                    Block::Failed => return Err(aborted()),
                    Block::Explicit => {}
                }
                let name = ident(name)?;
                self.txn()?.release(&name)?;
                if let Some(at) = self
                    .xact
                    .saved
                    .iter()
                    .rposition(|s| s.savepoint.as_deref() == Some(name.as_str()))
                {
                    self.xact.saved.truncate(at);
                }
                sink(command("RELEASE"));
            }
            A::Statement::Set(A::Set::SetTransaction {
                modes,
                snapshot,
                session,
            }) => {
                if snapshot.is_some() {
                    return Err(SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "SET TRANSACTION SNAPSHOT is not supported",
                    ));
                }
                if block == Block::Failed {
                    return Err(aborted());
                }
                if *session {
                    self.set_session_characteristics(modes)?;
                } else if block == Block::None {
                    sink(warning(
                        "SET TRANSACTION can only be used in transaction blocks",
                    ));
                } else {
                    self.set_transaction_modes(modes)?;
                }
                sink(command("SET"));
            }
            other => {
                return Err(SqlError::new(format!(
                    "not a transaction control statement: {other}"
                )))
            }
        }
        Ok(())
    }

    /// COMMIT or ROLLBACK of an explicit (or failed) block; with `chain`, a
    /// new block with the same characteristics begins at once.
    fn end_block(&mut self, commit: bool, chain: bool) -> Result<()> {
        let (isolation, read_only) = (self.xact.isolation, self.xact.read_only);
        self.close_block(commit)?;
        if chain {
            self.open_block(Block::Explicit);
            self.xact.isolation = isolation;
            self.begin_transaction()?;
            self.xact.read_only = read_only;
        }
        Ok(())
    }

    /// The characteristics a new transaction starts with (the
    /// `default_transaction_*` settings).
    pub(crate) fn reset_characteristics(&mut self) {
        self.xact.isolation = self.gucs.default_isolation();
        self.xact.read_only = self.gucs.default_transaction_read_only();
    }

    /// `ISOLATION LEVEL ...`, `READ ONLY`, `READ WRITE` of BEGIN or SET
    /// TRANSACTION, with PostgreSQL's checks.
    pub(crate) fn set_transaction_modes(&mut self, modes: &[A::TransactionMode]) -> Result<()> {
        let in_savepoint = self.xact.saved.len() > 1;
        for m in modes {
            match m {
                A::TransactionMode::IsolationLevel(l) => {
                    let iso = isolation_of(l)?;
                    if self.xact.snapshot_taken {
                        return Err(SqlError::coded(
                            ACTIVE_SQL_TRANSACTION,
                            "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                        ));
                    }
                    if in_savepoint {
                        return Err(SqlError::coded(
                            ACTIVE_SQL_TRANSACTION,
                            "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction",
                        ));
                    }
                    let level = iso.level()?;
                    self.xact.isolation = iso;
                    if let Some(t) = self.xact.txn.as_mut() {
                        t.set_isolation(level);
                    }
                }
                A::TransactionMode::AccessMode(A::TransactionAccessMode::ReadOnly) => {
                    self.xact.read_only = true;
                }
                A::TransactionMode::AccessMode(A::TransactionAccessMode::ReadWrite) => {
                    if self.xact.read_only && self.xact.block != Block::None {
                        if in_savepoint {
                            return Err(SqlError::coded(
                                ACTIVE_SQL_TRANSACTION,
                                "cannot set transaction read-write mode inside a read-only transaction",
                            ));
                        }
                        if self.xact.snapshot_taken {
                            return Err(SqlError::coded(
                                ACTIVE_SQL_TRANSACTION,
                                "transaction read-write mode must be set before any query",
                            ));
                        }
                    }
                    self.xact.read_only = false;
                }
            }
        }
        Ok(())
    }

    /// `SET SESSION CHARACTERISTICS AS TRANSACTION ...`: the defaults.
    fn set_session_characteristics(&mut self, modes: &[A::TransactionMode]) -> Result<()> {
        for m in modes {
            let (name, value) = match m {
                A::TransactionMode::IsolationLevel(l) => {
                    let iso = isolation_of(l)?;
                    if iso == Isolation::Serializable {
                        return Err(serializable_refused());
                    }
                    ("default_transaction_isolation", iso.name())
                }
                A::TransactionMode::AccessMode(A::TransactionAccessMode::ReadOnly) => {
                    ("default_transaction_read_only", "on")
                }
                A::TransactionMode::AccessMode(A::TransactionAccessMode::ReadWrite) => {
                    ("default_transaction_read_only", "off")
                }
            };
            self.change_settings(false, &|g| g.set(name, value))
                .map_err(crate::guc::error)?;
        }
        Ok(())
    }

    /// `LOCK [TABLE] name, ... [IN mode MODE] [NOWAIT]`: only in a
    /// transaction block; the locks last until it ends.
    pub(crate) fn lock_table(&mut self, l: &A::Lock) -> Result<QueryResult> {
        if self.xact.block == Block::None {
            return Err(only_in_blocks("LOCK TABLE"));
        }
        let mode = match &l.lock_mode {
            None | Some(A::LockTableMode::AccessExclusive) => LockMode::AccessExclusive,
            Some(A::LockTableMode::AccessShare) => LockMode::AccessShare,
            Some(A::LockTableMode::RowShare) => LockMode::RowShare,
            Some(A::LockTableMode::RowExclusive) => LockMode::RowExclusive,
            Some(A::LockTableMode::ShareUpdateExclusive) => LockMode::ShareUpdateExclusive,
            Some(A::LockTableMode::Share) => LockMode::Share,
            Some(A::LockTableMode::ShareRowExclusive) => LockMode::ShareRowExclusive,
            Some(A::LockTableMode::Exclusive) => LockMode::Exclusive,
        };
        for t in &l.tables {
            let name = user_relation_name(&t.name)?;
            let cat = self.catalog()?;
            let oid = match (cat.table(&name), cat.index(&name)) {
                (Some(t), _) => t.oid,
                (None, Some(_)) => {
                    return Err(SqlError::coded(
                        sqlstate::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a table or view"),
                    ))
                }
                (None, None) => {
                    return Err(SqlError::coded(
                        sqlstate::UNDEFINED_TABLE,
                        format!("relation \"{name}\" does not exist"),
                    ))
                }
            };
            let txn = self.txn()?;
            txn.lock(tusk_storage::LockTag::Relation(oid), mode, l.nowait)
                .map_err(|e| {
                    SqlError::from(tusk_storage::xact::lock_error(
                        e,
                        &format!("relation \"{name}\""),
                    ))
                })?;
            if txn.catalog().table_by_oid(oid).is_none() {
                return Err(crate::xact::stale_catalog(oid));
            }
        }
        Ok(command("LOCK TABLE"))
    }
}
