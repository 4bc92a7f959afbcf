//! CREATE TABLE [AS], CREATE INDEX and DROP.

use crate::bind::{BindSettings, Binder};
use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{QueryResult, Result, Session};
use crate::types::sql_type;
use sqlparser::ast as A;
use tusk_exec::exec::build;
use tusk_exec::vector::Data;
use tusk_exec::Plan;
use tusk_storage::{CheckDef, ColumnDef, DataType, SqlType, TableDef};

fn foreign_keys_refused() -> SqlError {
    SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "FOREIGN KEY constraints are not supported: tusk would not enforce them",
    )
}

fn command(tag: &str) -> QueryResult {
    QueryResult::Command { tag: tag.into() }
}

/// Names stored in the line-based catalog file cannot hold a newline.
fn check_name(name: &str, what: &str) -> Result<()> {
    if name.contains('\n') || name.contains('\0') {
        return Err(SqlError::coded(
            sqlstate::INVALID_NAME,
            format!("{what} names must not contain newlines or NUL characters"),
        ));
    }
    Ok(())
}

impl Session {
    pub(crate) fn create_table(&mut self, ct: &A::CreateTable) -> Result<QueryResult> {
        if ct.temporary || ct.external {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "only permanent tables are supported",
            ));
        }
        let name = user_relation_name(&ct.name)?;
        check_name(&name, "table")?;
        if self.db.catalog().relation_exists(&name) {
            if ct.if_not_exists {
                return Ok(command("CREATE TABLE"));
            }
            return Err(SqlError::coded(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let (columns, checks, query) = match &ct.query {
            Some(q) => {
                if !ct.constraints.is_empty() {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "syntax error at or near \"AS\"",
                    ));
                }
                let pq = self.plan_query(q)?;
                let mut names = pq.names.clone();
                if ct.columns.len() > names.len() {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "too many column names were specified",
                    ));
                }
                for (n, c) in names.iter_mut().zip(&ct.columns) {
                    *n = ident(&c.name)?;
                }
                let cols: Vec<ColumnDef> = names
                    .iter()
                    .zip(&pq.types)
                    .map(|(n, t)| ColumnDef::new(n.clone(), SqlType::of(*t), false))
                    .collect();
                (cols, Vec::new(), Some(pq))
            }
            None => {
                let (cols, checks) = self.table_elements(&name, &ct.columns, &ct.constraints)?;
                (cols, checks, None)
            }
        };
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].iter().any(|d| d.name == c.name) {
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{}\" specified more than once", c.name),
                ));
            }
            check_name(&c.name, "column")?;
        }
        let txn = self.db.txn.begin_write()?;
        let oid = self.db.catalog_mut().allocate_oid()?;
        let mut table = TableDef::new(oid, name.clone(), columns);
        table.checks = checks;
        self.db.log_create_table(&txn, &table)?;
        self.db.smgr.create(oid)?;
        let result = (|| -> Result<u64> {
            match &query {
                Some(pq) => {
                    let ctx = self.exec_context(txn.snapshot(), false, 0);
                    let mut op = tusk_exec::exec::build_statement(&pq.stmt, &ctx)?;
                    Ok(tusk_exec::dml::insert(
                        &self.db,
                        &table,
                        &[],
                        txn.xid(),
                        op.as_mut(),
                        None,
                    )?)
                }
                None => Ok(0),
            }
        })();
        match result {
            Ok(n) => {
                self.db.catalog_mut().add_table(table)?;
                self.db.commit(txn)?;
                Ok(if query.is_some() {
                    command(&format!("SELECT {n}"))
                } else {
                    command("CREATE TABLE")
                })
            }
            Err(e) => {
                drop(txn);
                self.db.pool.drop_relation(oid);
                let _ = self.db.smgr.unlink(oid);
                Err(e)
            }
        }
    }

    /// Columns (with NOT NULL, DEFAULT and CHECK options) and table
    /// constraints of CREATE TABLE; every DEFAULT and CHECK is bound once
    /// here, so a bad one fails the CREATE as in PostgreSQL.
    fn table_elements(
        &self,
        table: &str,
        columns: &[A::ColumnDef],
        constraints: &[A::TableConstraint],
    ) -> Result<(Vec<ColumnDef>, Vec<CheckDef>)> {
        let mut cols = Vec::new();
        // (constraint name, expression, the column it was written on)
        let mut written_checks: Vec<(Option<String>, A::Expr)> = Vec::new();
        for c in columns {
            let mut col = ColumnDef::new(ident(&c.name)?, sql_type(&c.data_type)?, false);
            for o in &c.options {
                match &o.option {
                    A::ColumnOption::NotNull => col.not_null = true,
                    A::ColumnOption::Null => col.not_null = false,
                    A::ColumnOption::Default(e) => col.default = Some(e.to_string()),
                    A::ColumnOption::Check(ck) => written_checks.push((
                        o.name
                            .as_ref()
                            .or(ck.name.as_ref())
                            .map(ident)
                            .transpose()?,
                        (*ck.expr).clone(),
                    )),
                    A::ColumnOption::ForeignKey(_) => return Err(foreign_keys_refused()),
                    A::ColumnOption::PrimaryKey(_) | A::ColumnOption::Unique(_) => {
                        return Err(SqlError::coded(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "PRIMARY KEY and UNIQUE constraints are not supported yet",
                        ))
                    }
                    other => {
                        return Err(SqlError::coded(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            format!("column constraint \"{other}\" is not supported"),
                        ))
                    }
                }
            }
            cols.push(col);
        }
        for tc in constraints {
            match tc {
                A::TableConstraint::Check(ck) => written_checks
                    .push((ck.name.as_ref().map(ident).transpose()?, (*ck.expr).clone())),
                A::TableConstraint::ForeignKey(_) => return Err(foreign_keys_refused()),
                A::TableConstraint::PrimaryKey(_) | A::TableConstraint::Unique(_) => {
                    return Err(SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "PRIMARY KEY and UNIQUE constraints are not supported yet",
                    ))
                }
                other => {
                    return Err(SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("table constraint \"{other}\" is not supported"),
                    ))
                }
            }
        }
        let catalog = self.db.catalog();
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        for c in &cols {
            if c.default.is_some() {
                binder.column_default(c)?;
            }
        }
        // CHECK names: PostgreSQL's `table_column_check` for a condition on
        // one column, `table_check` otherwise, numbered on collisions.
        let mut checks: Vec<CheckDef> = Vec::new();
        for (name, e) in written_checks {
            let bound = binder.bind_check(table, &cols, &e)?;
            let name = match name {
                Some(n) => n,
                None => {
                    let mut used = Vec::new();
                    bound.columns(&mut used);
                    used.sort_unstable();
                    used.dedup();
                    let base = match used.as_slice() {
                        [one] => format!("{table}_{}_check", cols[*one].name),
                        _ => format!("{table}_check"),
                    };
                    let base = crate::names::truncate(&base);
                    let mut n = base.clone();
                    let mut k = 0;
                    while checks.iter().any(|c| c.name == n) {
                        k += 1;
                        n = format!("{base}{k}");
                    }
                    n
                }
            };
            if checks.iter().any(|c| c.name == name) {
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("constraint \"{name}\" for relation \"{table}\" already exists"),
                ));
            }
            checks.push(CheckDef {
                name,
                expr: e.to_string(),
            });
        }
        Ok((cols, checks))
    }

    /// `CREATE INDEX [name] ON table [USING btree] (column)`: a btree built
    /// from a scan of the table's visible rows, in one transaction.
    pub(crate) fn create_index(&mut self, ci: &A::CreateIndex) -> Result<QueryResult> {
        if ci.unique
            || ci.concurrently
            || !ci.include.is_empty()
            || ci.predicate.is_some()
            || !ci.with.is_empty()
        {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "only plain CREATE INDEX [name] ON table (column) is supported",
            ));
        }
        if let Some(u) = &ci.using {
            if !matches!(u, A::IndexType::BTree) {
                return Err(SqlError::coded(
                    sqlstate::UNDEFINED_OBJECT,
                    format!(
                        "access method \"{}\" does not exist",
                        u.to_string().to_lowercase()
                    ),
                ));
            }
        }
        let tname = user_relation_name(&ci.table_name)?;
        let table = self.db.catalog().table(&tname).cloned().ok_or_else(|| {
            SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{tname}\" does not exist"),
            )
        })?;
        if table.is_view() {
            return Err(SqlError::coded(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("cannot create index on relation \"{tname}\""),
            )
            .with_detail("This operation is not supported for views."));
        }
        if ci.columns.len() != 1 {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "btree indexes on more than one column are not supported yet",
            ));
        }
        let A::Expr::Identifier(id) = &ci.columns[0].column.expr else {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "indexes on expressions are not supported",
            ));
        };
        let cname = ident(id)?;
        let column = table
            .columns
            .iter()
            .position(|c| c.name == cname)
            .ok_or_else(|| {
                SqlError::coded(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{cname}\" does not exist"),
                )
            })?;
        if !matches!(
            table.columns[column].ty.data_type(),
            DataType::Int4 | DataType::Int8
        ) {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "btree indexes on type {} are not supported yet (integer and bigint are)",
                    table.columns[column].ty.display_name()
                ),
            ));
        }
        let name = match &ci.name {
            Some(n) => {
                let n = user_relation_name(n)?;
                if self.db.catalog().relation_exists(&n) {
                    if ci.if_not_exists {
                        return Ok(command("CREATE INDEX"));
                    }
                    return Err(SqlError::coded(
                        sqlstate::DUPLICATE_TABLE,
                        format!("relation \"{n}\" already exists"),
                    ));
                }
                n
            }
            None => {
                // PostgreSQL's choice: table_column_idx, then ...idx1, idx2, ...
                let cat = self.db.catalog();
                let base = crate::names::truncate(&format!(
                    "{}_{}_idx",
                    table.name, table.columns[column].name
                ));
                let mut n = base.clone();
                let mut k = 0;
                while cat.relation_exists(&n) {
                    k += 1;
                    n = format!("{base}{k}");
                }
                n
            }
        };
        check_name(&name, "index")?;
        let txn = self.db.txn.begin_write()?;
        let oid = self.db.catalog_mut().allocate_oid()?;
        let index = tusk_storage::IndexDef {
            oid,
            name,
            table: table.oid,
            column,
        };
        self.db.log_create_index(&txn, &index)?;
        self.db.smgr.create(oid)?;
        let built = (|| -> Result<()> {
            // The keys of the visible rows, with their TIDs.
            let plan = Plan::new(
                tusk_exec::NodeKind::SeqScan {
                    table: table.name.clone(),
                    alias: table.name.clone(),
                    oid: table.oid,
                    table_types: table.column_types(),
                    columns: vec![column],
                    with_tid: true,
                    filter: None,
                    parallel: false,
                },
                vec![],
                vec![table.columns[column].ty.data_type(), DataType::Int8],
                vec![],
                Default::default(),
            );
            let ctx = self.exec_context(txn.snapshot(), false, 0);
            let mut op = build(&plan, &ctx)?;
            let mut keys: Vec<(i64, u64)> = Vec::new();
            while let Some(b) = op.next()? {
                let Data::Int8(tids) = &b.columns[1].data else {
                    unreachable!("TID column")
                };
                let col = &b.columns[0];
                for (row, &tid) in tids.iter().enumerate().take(b.len) {
                    if col.is_null(row) {
                        continue;
                    }
                    let v = match &col.data {
                        Data::Int4(d) => d[row] as i64,
                        Data::Int8(d) => d[row],
                        _ => unreachable!("integer column"),
                    };
                    keys.push((v, tid as u64));
                }
            }
            tusk_storage::btree::Btree::new(&self.db.pool, oid).build(&mut keys, txn.xid())?;
            Ok(())
        })();
        match built {
            Ok(()) => {
                self.db.catalog_mut().add_index(index)?;
                self.db.commit(txn)?;
                Ok(command("CREATE INDEX"))
            }
            Err(e) => {
                drop(txn);
                self.db.pool.drop_relation(oid);
                let _ = self.db.smgr.unlink(oid);
                Err(e)
            }
        }
    }

    /// `DROP TABLE | INDEX [IF EXISTS] name, ...`.
    pub(crate) fn drop(
        &mut self,
        object_type: A::ObjectType,
        if_exists: bool,
        names: &[A::ObjectName],
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let (what, tag) = match object_type {
            A::ObjectType::Table => ("table", "DROP TABLE"),
            A::ObjectType::Index => ("index", "DROP INDEX"),
            A::ObjectType::View => ("view", "DROP VIEW"),
            other => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("DROP {other} is not supported"),
                ))
            }
        };
        let txn = self.db.txn.begin_write()?;
        let mut victims = Vec::new();
        {
            let cat = self.db.catalog();
            for n in names {
                let name = user_relation_name(n)?;
                let found = match object_type {
                    A::ObjectType::Table => {
                        cat.table(&name).filter(|t| !t.is_view()).map(|t| t.oid)
                    }
                    A::ObjectType::View => cat.table(&name).filter(|t| t.is_view()).map(|t| t.oid),
                    _ => cat.index(&name).map(|i| i.oid),
                };
                let view = cat.table(&name).is_some_and(|t| t.is_view());
                match found {
                    Some(oid) => victims.push(oid),
                    None if object_type == A::ObjectType::Table && view => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a table"),
                        )
                        .with_hint("Use DROP VIEW to remove a view."))
                    }
                    None if object_type == A::ObjectType::View && cat.table(&name).is_some() => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a view"),
                        )
                        .with_hint("Use DROP TABLE to remove a table."))
                    }
                    None if object_type == A::ObjectType::Index && cat.table(&name).is_some() => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not an index"),
                        )
                        .with_hint("Use DROP TABLE to remove a table."))
                    }
                    None if object_type == A::ObjectType::Table && cat.index(&name).is_some() => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a table"),
                        )
                        .with_hint("Use DROP INDEX to remove an index."))
                    }
                    None if if_exists => sink(QueryResult::Notice {
                        level: "NOTICE",
                        message: format!("{what} \"{name}\" does not exist, skipping"),
                    }),
                    None => {
                        return Err(SqlError::coded(
                            sqlstate::UNDEFINED_TABLE,
                            format!("{what} \"{name}\" does not exist"),
                        ))
                    }
                }
            }
        }
        for oid in victims {
            // Takes effect at commit, once the commit record is durable.
            self.db.drop_relation(&txn, oid)?;
        }
        self.db.commit(txn)?;
        Ok(command(tag))
    }
}
