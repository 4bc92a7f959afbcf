//! Binding INSERT's ON CONFLICT clause.
//!
//! The conflict target chooses the *arbiter* indexes, as PostgreSQL's
//! `infer_arbiter_indexes` does:
//!
//! * `(col, ...)`: every unique index whose key columns are exactly those
//!   columns, in any order (42P10 when there is none);
//! * `ON CONSTRAINT name`: the index of that PRIMARY KEY or UNIQUE
//!   constraint (42704 when the table has no such constraint);
//! * none: every unique index of the table, which only DO NOTHING allows
//!   (DO UPDATE needs a target: 42601).
//!
//! DO UPDATE's SET list and WHERE condition are bound in a scope with two
//! relations: the target table under its name (or the INSERT's alias) for
//! the existing row, and `excluded` for the row proposed for insertion.
//! Both become expressions over one row of the existing row's columns
//! followed by the proposed row's, in table order, which is what
//! `tusk_exec::conflict` evaluates; SET yields every column, unassigned
//! ones keeping the existing value.

use super::{err, Binder, ExprCtx, QueryScope, Result, ScopeCol, ScopeRel};
use crate::error::{sqlstate, SqlError};
use crate::logical::ColumnId;
use crate::names::ident;
use sqlparser::ast as A;
use tusk_exec::conflict::{ConflictAction, OnConflict};
use tusk_exec::Expr;
use tusk_storage::{IndexDef, TableDef};

impl Binder<'_> {
    /// The ON CONFLICT clause `oc` of an INSERT into `table`, whose rows
    /// the statement calls `alias`.
    pub fn bind_on_conflict(
        &mut self,
        oc: &A::OnConflict,
        table: &TableDef,
        alias: &str,
    ) -> Result<OnConflict> {
        let mut indexes: Vec<&IndexDef> = self.catalog.indexes_of(table.oid).collect();
        indexes.sort_by_key(|i| i.oid);
        let arbiters: Vec<u32> = match &oc.conflict_target {
            None => {
                if matches!(oc.action, A::OnConflictAction::DoUpdate(_)) {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                    )
                    .with_hint("For example, ON CONFLICT (column_name)."));
                }
                indexes
                    .iter()
                    .filter(|i| i.unique())
                    .map(|i| i.oid)
                    .collect()
            }
            Some(A::ConflictTarget::Columns(cols)) => {
                let mut attnos = Vec::with_capacity(cols.len());
                for c in cols {
                    let name = ident(c)?;
                    let attno = table
                        .columns
                        .iter()
                        .position(|d| d.name == name)
                        .ok_or_else(|| {
                            SqlError::coded(
                                sqlstate::UNDEFINED_COLUMN,
                                format!("column \"{name}\" does not exist"),
                            )
                        })?;
                    attnos.push(attno);
                }
                attnos.sort_unstable();
                attnos.dedup();
                let found: Vec<u32> = indexes
                    .iter()
                    .filter(|i| {
                        let mut key: Vec<usize> = i.columns.iter().map(|c| c.attno).collect();
                        key.sort_unstable();
                        key.dedup();
                        i.unique() && key == attnos
                    })
                    .map(|i| i.oid)
                    .collect();
                if found.is_empty() {
                    return err(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
                    );
                }
                found
            }
            Some(A::ConflictTarget::OnConstraint(name)) => {
                let name = crate::names::object_name(name)?.name;
                match indexes
                    .iter()
                    .find(|i| i.name == name && i.kind.is_constraint())
                {
                    Some(i) => vec![i.oid],
                    None => {
                        return err(
                            sqlstate::UNDEFINED_OBJECT,
                            format!(
                                "constraint \"{name}\" for table \"{}\" does not exist",
                                table.name
                            ),
                        )
                    }
                }
            }
        };
        let action = match &oc.action {
            A::OnConflictAction::DoNothing => ConflictAction::Nothing,
            A::OnConflictAction::DoUpdate(u) => {
                self.conflict_update(table, alias, &u.assignments, u.selection.as_ref())?
            }
        };
        Ok(OnConflict { arbiters, action })
    }

    /// DO UPDATE SET ... [WHERE ...] (see the module doc).
    fn conflict_update(
        &mut self,
        table: &TableDef,
        alias: &str,
        assignments: &[A::Assignment],
        selection: Option<&A::Expr>,
    ) -> Result<ConflictAction> {
        let rel = |binder: &mut Self, name: &str| -> (Vec<ColumnId>, ScopeRel) {
            let mut ids = Vec::new();
            let mut cols = Vec::new();
            for c in &table.columns {
                let id = binder.column(&c.name, c.ty, Some(name));
                ids.push(id);
                cols.push(ScopeCol {
                    name: c.name.clone(),
                    id,
                    hidden: false,
                });
            }
            (
                ids,
                ScopeRel {
                    alias: Some(name.to_string()),
                    cols,
                },
            )
        };
        let (existing, existing_rel) = rel(self, alias);
        let (excluded, excluded_rel) = rel(self, "excluded");
        self.scopes.push(QueryScope {
            rels: vec![existing_rel, excluded_rel],
            star: existing.clone(),
            ..Default::default()
        });
        let r = (|| -> Result<(Vec<Expr>, Option<Expr>)> {
            let mut ctx = ExprCtx::new("ON CONFLICT DO UPDATE");
            let new = self.set_list(table, assignments, &mut ctx)?;
            let set: Vec<Expr> = new
                .into_iter()
                .enumerate()
                .map(|(i, e)| e.unwrap_or_else(|| self.col_expr(existing[i])))
                .collect();
            let filter = selection
                .map(|w| self.predicate(w, &mut ctx, "WHERE"))
                .transpose()?;
            if !ctx.applies.is_empty() {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "subqueries in ON CONFLICT DO UPDATE are not supported yet",
                );
            }
            Ok((set, filter))
        })();
        self.scopes.pop();
        let (set, filter) = r?;
        let n = table.columns.len();
        let position = |c: ColumnId| {
            existing
                .iter()
                .position(|&x| x == c)
                .or_else(|| excluded.iter().position(|&x| x == c).map(|i| n + i))
                .map(|index| Expr::Column {
                    index,
                    ty: table.columns[index % n].ty.data_type(),
                })
        };
        let bind = |e: Expr| -> Result<Expr> {
            let e = crate::rewrite::fold::fold(e)?;
            let mut refs = Vec::new();
            e.columns(&mut refs);
            if refs
                .iter()
                .any(|r| !existing.contains(r) && !excluded.contains(r))
            {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "ON CONFLICT DO UPDATE may refer only to the target row and EXCLUDED",
                );
            }
            Ok(crate::logical::exprs::replace_columns(e, &position))
        };
        Ok(ConflictAction::Update {
            set: set.into_iter().map(bind).collect::<Result<_>>()?,
            filter: filter.map(bind).transpose()?,
        })
    }
}
