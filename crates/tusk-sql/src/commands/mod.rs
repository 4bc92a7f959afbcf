//! Statements, one family per module: queries and EXPLAIN (`query`), DDL
//! (`ddl`, indexes and key constraints in `index`, ALTER in `alter/`), data changes (`dml`,
//! with READ COMMITTED's re-check in `recheck`), SELECT ... FOR UPDATE
//! (`rowlock`), transaction control and LOCK TABLE (`transaction`),
//! TRUNCATE (`truncate`), CREATE TABLE's storage parameters (`reloptions`),
//! settings and maintenance (`utility`), ANALYZE (`analyze`), roles (`role`), COPY (`copy/`,
//! which also has its own entry point for the COPY client,
//! `Session::execute_copy`), cursors (`cursor/`). This module only
//! dispatches.

mod alter;
mod analyze;
pub(crate) mod copy;
pub(crate) mod cursor;
mod ddl;
pub(crate) mod dml;
mod index;
pub(crate) mod prepare;
mod query;
mod recheck;
mod reloptions;
pub mod role;
mod rowlock;
mod sequence;
mod transaction;
mod truncate;
mod utility;
mod view;
pub(crate) mod view_text;

pub(crate) use analyze::autoanalyze;
pub(crate) use transaction::is_transaction_control;

/// Whether a statement uses a transaction (SET, SHOW and VACUUM do not
/// begin one).
pub(crate) fn needs_transaction(s: &A::Statement) -> bool {
    !matches!(
        s,
        A::Statement::Set(_)
            | A::Statement::ShowVariable { .. }
            | A::Statement::Reset(_)
            | A::Statement::Vacuum(_)
    )
}

use crate::error::{sqlstate, SqlError};
use crate::session::{QueryResult, Result, Session};
use sqlparser::ast as A;

impl Session {
    /// Runs one statement in the session's transaction; `row_locks` are the
    /// strengths of its row-locking clauses (see `parse::Parsed`).
    pub(crate) fn sql_statement(
        &mut self,
        s: &A::Statement,
        row_locks: &[tusk_storage::RowLockMode],
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let r = match s {
            A::Statement::Query(q) if !q.locks.is_empty() => {
                self.select_for_update(q, row_locks)?
            }
            A::Statement::Query(q) => self.select(q)?,
            A::Statement::Explain {
                analyze,
                statement,
                format,
                options,
                ..
            } => self.explain(*analyze, statement, format.as_ref(), options.as_deref())?,
            A::Statement::CreateTable(ct) => self.create_table(ct)?,
            A::Statement::CreateIndex(ci) => self.create_index(ci, sink)?,
            A::Statement::CreateView(cv) => self.create_view(cv)?,
            A::Statement::CreateSequence {
                temporary,
                if_not_exists,
                name,
                data_type,
                sequence_options,
                owned_by,
            } => self.create_sequence(
                *temporary,
                *if_not_exists,
                name,
                data_type.as_ref(),
                sequence_options,
                owned_by.as_ref(),
                sink,
            )?,
            A::Statement::AlterTable(at) => self.alter_table(at, sink)?,
            A::Statement::AlterIndex { name, operation } => self.alter_index(name, operation)?,
            A::Statement::Drop {
                object_type: A::ObjectType::Role,
                if_exists,
                names,
                ..
            } => self.drop_roles(names, *if_exists, sink)?,
            A::Statement::Drop {
                object_type,
                if_exists,
                names,
                cascade,
                ..
            } => self.drop(*object_type, *if_exists, names, *cascade, sink)?,
            A::Statement::CreateRole(cr) => self.create_role(cr, sink)?,
            A::Statement::AlterRole { name, operation } => {
                self.alter_role(name, operation, sink)?
            }
            A::Statement::Insert(ins) => self.insert(ins, sink)?,
            A::Statement::Copy { .. } => self.copy(
                &copy::CopyStatement::from_sqlparser(s)?,
                &mut copy::NoCopyClient,
            )?,
            A::Statement::Delete(d) => self.delete(d, sink)?,
            A::Statement::Update(u) => self.update(u, sink)?,
            A::Statement::Set(set) => self.set(set, sink)?,
            A::Statement::ShowVariable { variable } => self.show_variable(variable)?,
            A::Statement::Reset(r) => self.reset(r)?,
            A::Statement::Vacuum(v)
                if !(v.full || v.sort_only || v.delete_only || v.reindex || v.recluster)
                    && v.threshold.is_none()
                    && !v.boost =>
            {
                let tables = v
                    .table_name
                    .as_ref()
                    .map(crate::names::user_relation_name)
                    .transpose()?;
                return self.vacuum(false, false, tables.into_iter().collect(), sink);
            }
            A::Statement::Lock(l) => self.lock_table(l)?,
            A::Statement::Declare { stmts } if stmts.len() == 1 => self.declare(&stmts[0])?,
            A::Statement::Close { cursor } => self.close_cursor(cursor)?,
            A::Statement::Truncate(t) => self.truncate(t)?,
            A::Statement::Prepare {
                name,
                data_types,
                statement,
            } => self.prepare_named(name, data_types, statement, row_locks)?,
            A::Statement::Deallocate { name, .. } => self.deallocate_named(name)?,
            other => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "statement is not supported: {}",
                        other
                            .to_string()
                            .split_whitespace()
                            .take(3)
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                ))
            }
        };
        sink(r);
        Ok(())
    }
}
