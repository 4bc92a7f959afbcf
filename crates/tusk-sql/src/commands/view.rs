//! CREATE [OR REPLACE] VIEW and DROP VIEW.
//!
//! A view is a catalog relation without a file: its columns (names and
//! types) and its defining query as SQL text. A reference to it binds the
//! query again in its place (`bind::from`), in a scope of its own, so the
//! view sees only what it names. CREATE OR REPLACE may add columns at the
//! end but not drop, rename or retype existing ones, as in PostgreSQL.
//! `commands::view_text` keeps the text meaning what it meant: `*` is
//! expanded when the view is made, renames rewrite it, and DROP knows which
//! views depend on a relation.

use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{QueryResult, Result, Session};
use sqlparser::ast as A;
use tusk_storage::{ColumnDef, LockMode, TableDef};

impl Session {
    pub(crate) fn create_view(&mut self, cv: &A::CreateView) -> Result<QueryResult> {
        if cv.materialized {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "materialized views are not supported",
            ));
        }
        self.check_writable("CREATE VIEW")?;
        let name = user_relation_name(&cv.name)?;
        if name.contains('\n') || name.contains('\0') {
            return Err(SqlError::coded(
                sqlstate::INVALID_NAME,
                "view names must not contain newlines or NUL characters",
            ));
        }
        let pq = self.plan_query(&cv.query)?;
        let mut names = pq.names.clone();
        if cv.columns.len() > names.len() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "CREATE VIEW specifies more column names than columns",
            ));
        }
        for (n, c) in names.iter_mut().zip(&cv.columns) {
            *n = ident(&c.name)?;
        }
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{n}\" specified more than once"),
                ));
            }
        }
        let columns: Vec<ColumnDef> = names
            .iter()
            .zip(&pq.column_types)
            .map(|(n, t)| ColumnDef::new(n.clone(), *t, false))
            .collect();
        let existing = self.catalog()?.table(&name).cloned();
        if let Some(old) = &existing {
            if !cv.or_replace {
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists"),
                ));
            }
            if !old.is_view() {
                return Err(SqlError::coded(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a view"),
                ));
            }
            check_replacement(old, &columns)?;
        } else if self.catalog()?.relation_exists(&name) {
            return Err(SqlError::coded(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        if let Some(old) = &existing {
            self.lock_relation(old.oid, LockMode::AccessExclusive, &name)?;
            self.txn()?.drop_relation(old.oid, &name)?;
        }
        let text = super::view_text::expand_stars(&*self.catalog()?, &cv.query.to_string())?;
        let mut view = TableDef::new(0, name, columns);
        view.view = Some(text);
        self.txn()?.create_relation(view)?;
        Ok(QueryResult::Command {
            tag: "CREATE VIEW".into(),
        })
    }
}

/// PostgreSQL's rules for CREATE OR REPLACE VIEW: the old columns stay, by
/// name and type, in their places; new ones may follow.
fn check_replacement(old: &TableDef, new: &[ColumnDef]) -> Result<()> {
    if new.len() < old.columns.len() {
        return Err(SqlError::coded(
            sqlstate::INVALID_TABLE_DEFINITION,
            "cannot drop columns from view",
        ));
    }
    for (o, n) in old.columns.iter().zip(new) {
        if o.name != n.name {
            return Err(SqlError::coded(
                sqlstate::INVALID_TABLE_DEFINITION,
                format!(
                    "cannot change name of view column \"{}\" to \"{}\"",
                    o.name, n.name
                ),
            )
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if o.ty.data_type() != n.ty.data_type() {
            return Err(SqlError::coded(
                sqlstate::INVALID_TABLE_DEFINITION,
                format!(
                    "cannot change data type of view column \"{}\" from {} to {}",
                    o.name,
                    o.ty.display_name(),
                    n.ty.display_name()
                ),
            ));
        }
    }
    Ok(())
}
