//! ALTER TABLE, ALTER INDEX ... RENAME.
//!
//! `ALTER TABLE [IF EXISTS] [ONLY] t action, ...` takes
//! `AccessExclusiveLock` on the table and runs its actions in order, each
//! on the definition the one before left, all in the session's
//! transaction: a failing action fails the statement, a rollback undoes
//! everything, and other sessions see nothing until commit (they wait on
//! the lock; a statement that bound the old definition meanwhile binds
//! again, see `xact`'s `stale_catalog`).
//!
//! Two kinds of action:
//!
//! * **Catalog-only** — renames, `SET`/`DROP DEFAULT`, `SET`/`DROP NOT
//!   NULL`, `ADD CHECK`, `ADD PRIMARY KEY`/`UNIQUE` (a new index, see
//!   `index`), `DROP CONSTRAINT`: the table keeps its oid and file; the new
//!   definition replaces the old one through
//!   `Transaction::alter_relation` (WAL `AlterTable`). Constraints that
//!   existing rows must satisfy are checked by a scan before the statement
//!   ends (`rewrite::validate`), with PostgreSQL's errors.
//! * **Rewrites** — `ADD COLUMN`, `DROP COLUMN`, `ALTER COLUMN TYPE`: the
//!   rows are copied into a new relation of the new shape (see `rewrite`).
//!
//! ## Dropped columns
//!
//! PostgreSQL keeps a dropped column in the catalog (`attisdropped`) and in
//! old tuples. tusk does not: `DROP COLUMN` rewrites the table without it,
//! so attribute numbers stay dense and every reader of `TableDef::columns`
//! sees only live columns. The rewrite goes through the same transactional
//! CREATE and DROP as the other DDL, so it is crash-safe and undone by a
//! rollback; the price is a copy of the table, and the table's oid
//! changes (PostgreSQL keeps the oid and changes `relfilenode`).
//!
//! Indexes whose key contains a dropped column go with it, as do CHECK
//! constraints that mention it, as in PostgreSQL. A renamed column is
//! renamed inside the CHECK constraints' text too. Views keep their query
//! as text: a view whose query no longer binds to the columns it was made
//! with after a DROP COLUMN depended on the column (PostgreSQL's 2BP01,
//! or dropped with CASCADE). Known difference: a view does not follow a
//! column rename, as PostgreSQL's stored query trees do.

mod rewrite;

use super::ddl::{
    check_name_for, column_element, constraint_exists, foreign_keys_refused, unique_options,
};
use super::index::ConstraintSpec;
use super::view_text::{views_after_rename, Rename};
use crate::bind::{BindSettings, Binder};
use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{Notice, QueryResult, Result, Session};
use crate::types::sql_type;
use rewrite::Source;
use sqlparser::ast as A;
use std::ops::ControlFlow;
use tusk_storage::{CheckDef, IndexColumn, IndexDef, IndexKind, LockMode, TableDef};

fn command(tag: &str) -> QueryResult {
    QueryResult::Command { tag: tag.into() }
}

fn notice(message: String) -> QueryResult {
    QueryResult::Notice(Notice {
        level: "NOTICE",
        message,
        detail: None,
    })
}

/// `column "c" of relation "t" does not exist` (42703).
fn no_column(column: &str, table: &str) -> SqlError {
    SqlError::coded(
        sqlstate::UNDEFINED_COLUMN,
        format!("column \"{column}\" of relation \"{table}\" does not exist"),
    )
}

fn column_exists(column: &str, table: &str) -> SqlError {
    SqlError::coded(
        sqlstate::DUPLICATE_COLUMN,
        format!("column \"{column}\" of relation \"{table}\" already exists"),
    )
}

fn relation_exists(name: &str) -> SqlError {
    SqlError::coded(
        sqlstate::DUPLICATE_TABLE,
        format!("relation \"{name}\" already exists"),
    )
}

fn unsupported(what: impl std::fmt::Display) -> SqlError {
    SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("ALTER TABLE {what} is not supported"),
    )
}

/// PostgreSQL's name of an ALTER TABLE action, for messages.
fn action_name(op: &A::AlterTableOperation) -> &'static str {
    use A::AlterColumnOperation as C;
    use A::AlterTableOperation as Op;
    match op {
        Op::AddColumn { .. } => "ADD COLUMN",
        Op::DropColumn { .. } => "DROP COLUMN",
        Op::AddConstraint { .. } => "ADD CONSTRAINT",
        Op::DropConstraint { .. } => "DROP CONSTRAINT",
        Op::RenameConstraint { .. } => "RENAME CONSTRAINT",
        Op::AlterColumn { op, .. } => match op {
            C::SetNotNull => "ALTER COLUMN ... SET NOT NULL",
            C::DropNotNull => "ALTER COLUMN ... DROP NOT NULL",
            C::SetDefault { .. } => "ALTER COLUMN ... SET DEFAULT",
            C::DropDefault => "ALTER COLUMN ... DROP DEFAULT",
            C::SetDataType { .. } => "ALTER COLUMN TYPE",
            C::AddGenerated { .. } => "ALTER COLUMN ... ADD IDENTITY",
        },
        _ => "",
    }
}

/// `expr` (SQL text) with every reference to column `from` renamed `to`.
fn rename_in_expr(expr: &str, from: &str, to: &str) -> Result<String> {
    let mut e = crate::bind::parse_expr(expr)?;
    let new_ident = || A::Ident::with_quote('"', to);
    let _ = A::visit_expressions_mut(&mut e, |x| {
        match x {
            A::Expr::Identifier(i) if ident(i).is_ok_and(|n| n == from) => *i = new_ident(),
            A::Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last_mut() {
                    if ident(last).is_ok_and(|n| n == from) {
                        *last = new_ident();
                    }
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(e.to_string())
}

impl Session {
    /// `ALTER TABLE [IF EXISTS] [ONLY] name action, ...`.
    pub(crate) fn alter_table(
        &mut self,
        at: &A::AlterTable,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        if at.table_type.is_some() || at.location.is_some() || at.on_cluster.is_some() {
            return Err(unsupported("for this kind of table"));
        }
        self.check_writable("ALTER TABLE")?;
        let name = user_relation_name(&at.name)?;
        let Some(table) = self.catalog()?.table(&name).cloned() else {
            if at.if_exists {
                sink(notice(format!(
                    "relation \"{name}\" does not exist, skipping"
                )));
                return Ok(command("ALTER TABLE"));
            }
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            ));
        };
        let renames_only = at.operations.iter().all(|o| {
            matches!(
                o,
                A::AlterTableOperation::RenameTable { .. }
                    | A::AlterTableOperation::RenameColumn { .. }
            )
        });
        if table.is_view() && !renames_only {
            let op = at.operations.iter().find(|o| {
                !matches!(
                    o,
                    A::AlterTableOperation::RenameTable { .. }
                        | A::AlterTableOperation::RenameColumn { .. }
                )
            });
            return Err(SqlError::coded(
                sqlstate::WRONG_OBJECT_TYPE,
                format!(
                    "ALTER action {} cannot be performed on relation \"{name}\"",
                    op.map_or("", action_name)
                ),
            )
            .with_detail("This operation is not supported for views."));
        }
        self.lock_relation(table.oid, LockMode::AccessExclusive, &name)?;
        let mut oid = table.oid;
        for op in &at.operations {
            oid = self.alter_action(oid, op, sink)?;
        }
        Ok(command("ALTER TABLE"))
    }

    /// The table `oid` as this transaction sees it now.
    fn table_now(&mut self, oid: u32) -> Result<TableDef> {
        self.catalog()?
            .table_by_oid(oid)
            .cloned()
            .ok_or_else(|| crate::xact::stale_catalog(oid))
    }

    /// Runs one action on table `oid`; returns the table's oid afterwards
    /// (a rewrite makes a new one).
    fn alter_action(
        &mut self,
        oid: u32,
        op: &A::AlterTableOperation,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<u32> {
        use A::AlterTableOperation as Op;
        let table = self.table_now(oid)?;
        match op {
            Op::AddConstraint {
                constraint,
                not_valid,
            } => self.add_constraint(table, constraint, *not_valid),
            Op::AddColumn {
                if_not_exists,
                column_def,
                column_position: None,
                ..
            } => self.add_column(table, column_def, *if_not_exists, sink),
            Op::DropColumn {
                column_names,
                if_exists,
                drop_behavior,
                ..
            } => {
                let cascade = matches!(drop_behavior, Some(A::DropBehavior::Cascade));
                let mut oid = oid;
                for c in column_names {
                    let table = self.table_now(oid)?;
                    let name = ident(c)?;
                    let before = oid;
                    let catalog_before = self.catalog()?;
                    oid = self.drop_column(table.clone(), &name, *if_exists, sink)?;
                    if oid != before {
                        self.check_views(&catalog_before, &table, &name, cascade, sink)?;
                    }
                }
                Ok(oid)
            }
            Op::DropConstraint {
                if_exists, name, ..
            } => self.drop_constraint(table, &ident(name)?, *if_exists, sink),
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (from, to) = (ident(old_column_name)?, ident(new_column_name)?);
                let Some(at) = table.columns.iter().position(|c| c.name == from) else {
                    return Err(SqlError::coded(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{from}\" does not exist"),
                    ));
                };
                if table.columns.iter().any(|c| c.name == to) {
                    return Err(column_exists(&to, &table.name));
                }
                super::ddl::check_name(&to, "column")?;
                let mut def = table.clone();
                def.columns[at].name = to.clone();
                for c in &mut def.checks {
                    c.expr = rename_in_expr(&c.expr, &from, &to)?;
                }
                let rename = Rename::Column {
                    oid,
                    from: &from,
                    to: &to,
                };
                let views = views_after_rename(&*self.catalog()?, rename)?;
                self.txn()?.alter_relation(def)?;
                self.store_views(views)?;
                Ok(oid)
            }
            Op::RenameTable { table_name } => {
                let (A::RenameTableNameKind::To(n) | A::RenameTableNameKind::As(n)) = table_name;
                let to = user_relation_name(n)?;
                super::ddl::check_name(&to, "table")?;
                if self.catalog()?.relation_exists(&to) {
                    return Err(relation_exists(&to));
                }
                let rename = Rename::Relation {
                    oid,
                    from: &table.name,
                    to: &to,
                };
                let views = views_after_rename(&*self.catalog()?, rename)?;
                let mut def = table;
                def.name = to;
                self.txn()?.alter_relation(def)?;
                self.store_views(views)?;
                Ok(oid)
            }
            Op::RenameConstraint { old_name, new_name } => {
                self.rename_constraint(table, &ident(old_name)?, &ident(new_name)?)
            }
            Op::AlterColumn { column_name, op } => {
                self.alter_column(table, &ident(column_name)?, op)
            }
            other => Err(unsupported(other)),
        }
    }

    /// Stores views whose text a rename rewrote.
    fn store_views(&mut self, views: Vec<TableDef>) -> Result<()> {
        for v in views {
            self.lock_relation(v.oid, LockMode::AccessExclusive, &v.name.clone())?;
            self.txn()?.alter_relation(v)?;
        }
        Ok(())
    }

    /// After column `column` of `table` was dropped: the views whose query
    /// no longer binds to the columns they were made with depended on it,
    /// and so do the views over those (found in `catalog_before`, the
    /// catalog from before the drop, where the broken views still bind).
    /// Without `cascade` that is PostgreSQL's 2BP01; with it they are
    /// dropped too.
    fn check_views(
        &mut self,
        catalog_before: &tusk_storage::Catalog,
        table: &TableDef,
        column: &str,
        cascade: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let catalog = self.catalog()?;
        let mut broken = Vec::new();
        for v in catalog.tables().filter(|t| t.is_view()) {
            if !v.view.as_deref().is_some_and(|q| q.contains(&table.name)) {
                continue;
            }
            let sql = format!(
                "SELECT * FROM public.{}",
                crate::names::quote_ident(&v.name)
            );
            let A::Statement::Query(q) = sqlparser::parser::Parser::parse_sql(
                &sqlparser::dialect::PostgreSqlDialect {},
                &sql,
            )
            .map_err(|e| crate::parse::syntax_error(&sql, &e))?
            .remove(0) else {
                continue;
            };
            let mut binder = Binder::new(&catalog, &BindSettings::default());
            let same = binder.bind_query(&q).is_ok_and(|bq| {
                bq.out.len() == v.columns.len()
                    && bq.out.iter().zip(&v.columns).all(|(&id, c)| {
                        binder.cols.ty(id) == c.ty.data_type() && binder.cols.get(id).name == c.name
                    })
            });
            if !same {
                broken.push(v.clone());
            }
        }
        if broken.is_empty() {
            return Ok(());
        }
        // Each broken view, then the views that depend on it, depth first,
        // as PostgreSQL lists them: (view, what it depends on).
        let mut dependents: Vec<(TableDef, String)> = Vec::new();
        for v in broken {
            if dependents.iter().any(|(d, _)| d.oid == v.oid) {
                continue;
            }
            let through = super::view_text::dependent_views(catalog_before, v.oid);
            dependents.push((v, format!("column {column} of table {}", table.name)));
            for (d, on) in through {
                if !dependents.iter().any(|(e, _)| e.oid == d.oid) {
                    let on_name = catalog.table_by_oid(on).map_or("", |t| t.name.as_str());
                    dependents.push((d, format!("view {on_name}")));
                }
            }
        }
        if !cascade {
            let detail: Vec<String> = dependents
                .iter()
                .map(|(v, on)| format!("view {} depends on {on}", v.name))
                .collect();
            return Err(SqlError::coded(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop column {column} of table {} because other objects depend on it",
                    table.name
                ),
            )
            .with_detail(detail.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        let names: Vec<String> = dependents
            .iter()
            .map(|(v, _)| format!("view {}", v.name))
            .collect();
        if let Some(n) = super::ddl::cascade_notice(&names) {
            sink(QueryResult::Notice(n));
        }
        for (v, _) in dependents {
            self.txn()?.drop_relation(v.oid, &v.name)?;
        }
        Ok(())
    }

    /// The constraint indexes of `table`.
    fn constraint_indexes_of(&mut self, table: &TableDef) -> Result<Vec<IndexDef>> {
        Ok(self
            .catalog()?
            .indexes_of(table.oid)
            .filter(|i| i.kind.is_constraint())
            .cloned()
            .collect())
    }

    /// `ADD [CONSTRAINT name] PRIMARY KEY (cols) | UNIQUE (cols) | CHECK
    /// (expr) [NOT VALID]`.
    fn add_constraint(
        &mut self,
        table: TableDef,
        constraint: &A::TableConstraint,
        not_valid: bool,
    ) -> Result<u32> {
        let oid = table.oid;
        match constraint {
            A::TableConstraint::Check(ck) => {
                let name = ck.name.as_ref().map(ident).transpose()?;
                self.add_checks(table, vec![(name, (*ck.expr).clone())], !not_valid)?;
                Ok(oid)
            }
            A::TableConstraint::ForeignKey(_) => Err(foreign_keys_refused()),
            A::TableConstraint::PrimaryKey(k) => {
                let name = k.name.as_ref().map(ident).transpose()?;
                let cols = ConstraintSpec::column_names(&k.columns)?;
                self.add_key(table, name, &cols, true)?;
                Ok(oid)
            }
            A::TableConstraint::Unique(k) => {
                unique_options(k)?;
                let name = k.name.as_ref().map(ident).transpose()?;
                let cols = ConstraintSpec::column_names(&k.columns)?;
                self.add_key(table, name, &cols, false)?;
                Ok(oid)
            }
            other => Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("table constraint \"{other}\" is not supported"),
            )),
        }
    }

    /// Adds CHECK constraints (name, condition) to `table`, checking the
    /// existing rows unless `validate` is false (NOT VALID).
    fn add_checks(
        &mut self,
        table: TableDef,
        written: Vec<(Option<String>, A::Expr)>,
        validate: bool,
    ) -> Result<()> {
        if written.is_empty() {
            return Ok(());
        }
        let keys = self.constraint_indexes_of(&table)?;
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        let mut def = table.clone();
        let mut added = Vec::new();
        for (name, e) in written {
            let bound = binder.bind_check(&table.name, &table.columns, &e)?;
            let taken = |n: &str| {
                def.checks.iter().any(|c| c.name == n) || keys.iter().any(|k| k.name == n)
            };
            let name = match name {
                Some(n) => {
                    if taken(&n) {
                        return Err(constraint_exists(&n, &table.name));
                    }
                    n
                }
                None => check_name_for(&table.name, &table.columns, &bound, taken),
            };
            super::ddl::check_name(&name, "constraint")?;
            let check = CheckDef {
                name,
                expr: e.to_string(),
                oid: self.txn()?.allocate_oid()?,
            };
            def.checks.push(check.clone());
            added.push(check);
        }
        self.txn()?.alter_relation(def.clone())?;
        if validate {
            self.validate(&def, &[], &added)?;
        }
        Ok(())
    }

    /// Adds a PRIMARY KEY (`primary`) or UNIQUE constraint on `columns` of
    /// `table`: builds its index, and for a primary key makes the columns
    /// NOT NULL after checking the rows (duplicates are reported first, as
    /// PostgreSQL builds the index before it checks for NULLs).
    fn add_key(
        &mut self,
        table: TableDef,
        name: Option<String>,
        columns: &[String],
        primary: bool,
    ) -> Result<()> {
        let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        if primary {
            if let Some(c) = columns.iter().find(|c| !names.contains(c)) {
                return Err(no_column(c, &table.name));
            }
            let cat = self.catalog()?;
            if cat
                .indexes_of(table.oid)
                .any(|i| i.kind == IndexKind::PrimaryKey)
            {
                return Err(SqlError::coded(
                    sqlstate::INVALID_TABLE_DEFINITION,
                    format!(
                        "multiple primary keys for table \"{}\" are not allowed",
                        table.name
                    ),
                ));
            }
        }
        let spec = ConstraintSpec::new(name, columns, primary, &names)?;
        self.constraint_indexes(&table, std::slice::from_ref(&spec))?;
        if primary {
            let mut def = table.clone();
            let mut newly = Vec::new();
            for &a in &spec.columns {
                if !def.columns[a].not_null {
                    def.columns[a].not_null = true;
                    newly.push(a);
                }
            }
            if !newly.is_empty() {
                self.txn()?.alter_relation(def.clone())?;
                self.validate(&def, &newly, &[])?;
            }
        }
        Ok(())
    }

    /// `ADD [COLUMN] [IF NOT EXISTS] c type [options]`.
    fn add_column(
        &mut self,
        table: TableDef,
        column: &A::ColumnDef,
        if_not_exists: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<u32> {
        let el = column_element(column)?;
        let name = el.column.name.clone();
        if table.columns.iter().any(|c| c.name == name) {
            if if_not_exists {
                sink(notice(format!(
                    "column \"{name}\" of relation \"{}\" already exists, skipping",
                    table.name
                )));
                return Ok(table.oid);
            }
            return Err(column_exists(&name, &table.name));
        }
        super::ddl::check_name(&name, "column")?;
        let mut def = table.clone();
        let mut col = el.column.clone();
        let not_null = col.not_null || el.keys.iter().any(|(_, primary)| *primary);
        col.not_null = false;
        if col.default.is_some() {
            let catalog = self.catalog()?;
            Binder::new(&catalog, &BindSettings::default()).column_default(&col)?;
        }
        def.columns.push(col);
        let mut sources: Vec<Source> = (0..table.columns.len()).map(Source::Column).collect();
        sources.push(Source::Default);
        let oid = self.rewrite_table(&table, def, &sources)?;
        if not_null {
            let mut def = self.table_now(oid)?;
            let at = def.columns.len() - 1;
            def.columns[at].not_null = true;
            self.txn()?.alter_relation(def.clone())?;
            self.validate(&def, &[at], &[])?;
        }
        let def = self.table_now(oid)?;
        self.add_checks(def, el.checks, true)?;
        for (kname, primary) in el.keys {
            let def = self.table_now(oid)?;
            self.add_key(def, kname, std::slice::from_ref(&name), primary)?;
        }
        Ok(oid)
    }

    /// `DROP [COLUMN] [IF EXISTS] c`: a rewrite without the column; indexes
    /// on it and CHECK constraints that mention it go too.
    fn drop_column(
        &mut self,
        table: TableDef,
        name: &str,
        if_exists: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<u32> {
        let Some(at) = table.columns.iter().position(|c| c.name == name) else {
            if if_exists {
                sink(notice(format!(
                    "column \"{name}\" of relation \"{}\" does not exist, skipping",
                    table.name
                )));
                return Ok(table.oid);
            }
            return Err(no_column(name, &table.name));
        };
        if table.columns.len() == 1 {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "tables without columns are not supported",
            ));
        }
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        let mut def = table.clone();
        def.checks.clear();
        for c in &table.checks {
            let bound = binder.bind_check(
                &table.name,
                &table.columns,
                &crate::bind::parse_expr(&c.expr)?,
            )?;
            let mut used = Vec::new();
            bound.columns(&mut used);
            if !used.contains(&at) {
                def.checks.push(c.clone());
            }
        }
        def.columns.remove(at);
        let sources: Vec<Source> = (0..table.columns.len())
            .filter(|&c| c != at)
            .map(Source::Column)
            .collect();
        self.rewrite_table(&table, def, &sources)
    }

    /// `DROP CONSTRAINT [IF EXISTS] name`: a CHECK, or the index of a
    /// PRIMARY KEY or UNIQUE constraint (a primary key's columns stay NOT
    /// NULL, as in PostgreSQL 15).
    fn drop_constraint(
        &mut self,
        table: TableDef,
        name: &str,
        if_exists: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<u32> {
        let oid = table.oid;
        if let Some(at) = table.checks.iter().position(|c| c.name == name) {
            let mut def = table;
            def.checks.remove(at);
            self.txn()?.alter_relation(def)?;
            return Ok(oid);
        }
        if let Some(i) = self
            .constraint_indexes_of(&table)?
            .into_iter()
            .find(|i| i.name == name)
        {
            self.txn()?.drop_relation(i.oid, &i.name)?;
            return Ok(oid);
        }
        let message = format!(
            "constraint \"{name}\" of relation \"{}\" does not exist",
            table.name
        );
        if if_exists {
            sink(notice(format!("{message}, skipping")));
            return Ok(oid);
        }
        Err(SqlError::coded(sqlstate::UNDEFINED_OBJECT, message))
    }

    /// `RENAME CONSTRAINT old TO new`.
    fn rename_constraint(&mut self, table: TableDef, from: &str, to: &str) -> Result<u32> {
        let oid = table.oid;
        let keys = self.constraint_indexes_of(&table)?;
        let check = table.checks.iter().position(|c| c.name == from);
        let key = keys.iter().find(|k| k.name == from);
        if check.is_none() && key.is_none() {
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_OBJECT,
                format!(
                    "constraint \"{from}\" for table \"{}\" does not exist",
                    table.name
                ),
            ));
        }
        super::ddl::check_name(to, "constraint")?;
        if let Some(k) = key {
            if self.catalog()?.relation_exists(to) {
                return Err(relation_exists(to));
            }
            let mut def = k.clone();
            def.name = to.to_string();
            self.txn()?.alter_index(def)?;
            return Ok(oid);
        }
        if table.checks.iter().any(|c| c.name == to) || keys.iter().any(|k| k.name == to) {
            return Err(constraint_exists(to, &table.name));
        }
        let mut def = table;
        def.checks[check.expect("found above")].name = to.to_string();
        self.txn()?.alter_relation(def)?;
        Ok(oid)
    }

    /// `ALTER [COLUMN] c SET DEFAULT e | DROP DEFAULT | SET NOT NULL | DROP
    /// NOT NULL | [SET DATA] TYPE t [USING e]`.
    fn alter_column(
        &mut self,
        table: TableDef,
        column: &str,
        op: &A::AlterColumnOperation,
    ) -> Result<u32> {
        let oid = table.oid;
        let Some(at) = table.columns.iter().position(|c| c.name == column) else {
            return Err(no_column(column, &table.name));
        };
        let mut def = table.clone();
        match op {
            A::AlterColumnOperation::SetDefault { value } => {
                def.columns[at].default = Some(value.to_string());
                let catalog = self.catalog()?;
                Binder::new(&catalog, &BindSettings::default()).column_default(&def.columns[at])?;
                self.txn()?.alter_relation(def)?;
            }
            A::AlterColumnOperation::DropDefault => {
                def.columns[at].default = None;
                self.txn()?.alter_relation(def)?;
            }
            A::AlterColumnOperation::SetNotNull => {
                if !def.columns[at].not_null {
                    def.columns[at].not_null = true;
                    self.txn()?.alter_relation(def.clone())?;
                    self.validate(&def, &[at], &[])?;
                }
            }
            A::AlterColumnOperation::DropNotNull => {
                let in_pk = self.catalog()?.indexes_of(oid).any(|i| {
                    i.kind == IndexKind::PrimaryKey && i.columns.iter().any(|c| c.attno == at)
                });
                if in_pk {
                    return Err(SqlError::coded(
                        sqlstate::INVALID_TABLE_DEFINITION,
                        format!("column \"{column}\" is in a primary key"),
                    ));
                }
                if def.columns[at].not_null {
                    def.columns[at].not_null = false;
                    self.txn()?.alter_relation(def)?;
                }
            }
            A::AlterColumnOperation::SetDataType {
                data_type, using, ..
            } => {
                let ty = sql_type(data_type)?;
                crate::types::check_storable(ty, &def.columns[at].name)?;
                def.columns[at].ty = ty;
                if let Some(d) = &def.columns[at].default {
                    let catalog = self.catalog()?;
                    let mut binder = Binder::new(&catalog, &BindSettings::default());
                    if binder.column_default(&def.columns[at]).is_err() {
                        return Err(SqlError::coded(
                            sqlstate::DATATYPE_MISMATCH,
                            format!(
                                "default for column \"{column}\" cannot be cast automatically to type {}",
                                ty.display_name()
                            ),
                        ));
                    }
                    let _ = d;
                }
                let mut sources: Vec<Source> =
                    (0..table.columns.len()).map(Source::Column).collect();
                sources[at] = match using {
                    Some(e) => Source::Using(e.to_string()),
                    None => Source::Converted(at),
                };
                return self.rewrite_table(&table, def, &sources);
            }
            A::AlterColumnOperation::AddGenerated { .. } => {
                return Err(unsupported("ADD GENERATED"));
            }
        }
        Ok(oid)
    }

    /// `ALTER INDEX [IF EXISTS] name RENAME TO new`.
    pub(crate) fn alter_index(
        &mut self,
        name: &A::ObjectName,
        operation: &A::AlterIndexOperation,
    ) -> Result<QueryResult> {
        self.check_writable("ALTER INDEX")?;
        let A::AlterIndexOperation::RenameIndex { index_name } = operation;
        let from = user_relation_name(name)?;
        let to = user_relation_name(index_name)?;
        super::ddl::check_name(&to, "index")?;
        let cat = self.catalog()?;
        let Some(index) = cat.index(&from).cloned() else {
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{from}\" does not exist"),
            ));
        };
        if cat.relation_exists(&to) {
            return Err(relation_exists(&to));
        }
        let table_name = cat
            .table_by_oid(index.table)
            .map_or(String::new(), |t| t.name.clone());
        self.lock_relation(index.table, LockMode::AccessExclusive, &table_name)?;
        let mut def = index;
        def.name = to;
        self.txn()?.alter_index(def)?;
        Ok(command("ALTER INDEX"))
    }
}

/// The key of `index` on a table whose column `attno` moved to
/// `map[attno]`; `None` when a key column is gone.
fn remap_index(index: &IndexDef, map: &[Option<usize>]) -> Option<Vec<IndexColumn>> {
    index
        .columns
        .iter()
        .map(|c| {
            map[c.attno].map(|attno| IndexColumn {
                attno,
                desc: c.desc,
                nulls_first: c.nulls_first,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_columns_in_check_text() {
        assert_eq!(
            rename_in_expr("a > 0 AND t.a < b", "a", "z").unwrap(),
            "\"z\" > 0 AND t.\"z\" < b"
        );
        assert_eq!(rename_in_expr("aa > a", "a", "b").unwrap(), "aa > \"b\"");
    }

    #[test]
    fn remaps_index_keys() {
        let index = IndexDef {
            oid: 1,
            name: "i".into(),
            table: 2,
            columns: vec![IndexColumn::asc(2), IndexColumn::desc(0)],
            kind: IndexKind::Plain,
        };
        let cols = remap_index(&index, &[Some(0), None, Some(1)]).unwrap();
        assert_eq!(cols, vec![IndexColumn::asc(1), IndexColumn::desc(0)]);
        assert!(remap_index(&index, &[None, Some(0), Some(1)]).is_none());
    }
}
