//! Statements, one family per module: queries and EXPLAIN (`query`), DDL
//! (`ddl`, indexes and key constraints in `index`), data changes (`dml`),
//! settings and maintenance (`utility`), roles (`role`), COPY (`copy/`,
//! which also has its own entry point for the COPY client,
//! `Session::execute_copy`). This module only dispatches.

pub(crate) mod copy;
mod ddl;
pub(crate) mod dml;
mod index;
mod query;
pub mod role;
mod utility;
mod view;

use crate::error::{sqlstate, SqlError};
use crate::session::{QueryResult, Result, Session};
use sqlparser::ast as A;

impl Session {
    pub(crate) fn sql_statement(
        &mut self,
        s: &A::Statement,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let r = match s {
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
                ..
            } => self.drop(*object_type, *if_exists, names, sink)?,
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
            A::Statement::Set(set) => self.set(set)?,
            A::Statement::ShowVariable { variable } => self.show_variable(variable)?,
            A::Statement::Reset(r) => self.reset(r)?,
            A::Statement::Vacuum(v)
                if !(v.full || v.sort_only || v.delete_only || v.reindex || v.recluster)
                    && v.threshold.is_none()
                    && !v.boost =>
            {
                let table = v
                    .table_name
                    .as_ref()
                    .map(crate::names::user_relation_name)
                    .transpose()?;
                return self.vacuum(false, table, sink);
            }
            A::Statement::StartTransaction { .. }
            | A::Statement::Commit { .. }
            | A::Statement::Rollback { .. } => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "transaction blocks are not supported yet: each statement runs in its own transaction",
                ))
            }
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
