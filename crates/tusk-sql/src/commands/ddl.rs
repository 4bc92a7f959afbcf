//! CREATE TABLE [AS], CREATE INDEX and DROP.

use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{QueryResult, Result, Session};
use crate::types::sql_type;
use sqlparser::ast as A;
use tusk_exec::exec::build;
use tusk_exec::vector::Data;
use tusk_exec::Plan;
use tusk_storage::{ColumnDef, DataType, SqlType, TableDef};

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
        if !ct.constraints.is_empty() {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "table constraints are not supported yet",
            ));
        }
        let (columns, query) = match &ct.query {
            Some(q) => {
                let pq = self.plan_query(q)?;
                let mut names = pq.names.clone();
                for (n, c) in names.iter_mut().zip(&ct.columns) {
                    *n = ident(&c.name)?;
                }
                let cols: Vec<ColumnDef> = names
                    .iter()
                    .zip(&pq.types)
                    .map(|(n, t)| ColumnDef {
                        name: n.clone(),
                        ty: SqlType::of(*t),
                        not_null: false,
                    })
                    .collect();
                (cols, Some(pq))
            }
            None => {
                let mut cols = Vec::new();
                for c in &ct.columns {
                    let mut not_null = false;
                    for o in &c.options {
                        match o.option {
                            A::ColumnOption::NotNull => not_null = true,
                            A::ColumnOption::Null => not_null = false,
                            _ => {
                                return Err(SqlError::coded(
                                    sqlstate::FEATURE_NOT_SUPPORTED,
                                    format!(
                                        "column constraint \"{}\" is not supported yet",
                                        o.option
                                    ),
                                ))
                            }
                        }
                    }
                    cols.push(ColumnDef {
                        name: ident(&c.name)?,
                        ty: sql_type(&c.data_type)?,
                        not_null,
                    });
                }
                (cols, None)
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
        let table = TableDef {
            oid,
            name: name.clone(),
            columns,
        };
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
                    A::ObjectType::Table => cat.table(&name).map(|t| t.oid),
                    _ => cat.index(&name).map(|i| i.oid),
                };
                match found {
                    Some(oid) => victims.push(oid),
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
