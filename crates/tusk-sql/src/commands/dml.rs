//! INSERT, UPDATE and DELETE.
//!
//! INSERT binds its source (VALUES, coerced straight to the target columns,
//! or a query), projects it into the table's column order with assignment
//! casts (missing columns get NULL) and hands the rows to tusk-exec's heap
//! sink (with ON CONFLICT, `tusk_exec::conflict`'s; see `bind::conflict`).
//! UPDATE and DELETE plan a scan of the target that also yields each row's
//! TID (UPDATE: and the new row). Each takes `RowExclusiveLock` on its
//! table before binding the rest.
//!
//! A statement is planned first (`plan_*`: a [`PlannedChange`], which a
//! prepared statement keeps, and which keeps for UPDATE and DELETE the
//! bound statement that READ COMMITTED's re-check of rows changed by
//! concurrent transactions runs again, see `recheck`) and then run
//! ([`Session::run_change`]) with the statement's snapshot, as the current
//! command of the session's transaction; a plan kept for later takes its
//! locks again when it runs.

use super::recheck::{target_tid, DmlRecheck, RecheckPlan};
use crate::bind::{BindSettings, Binder, BoundQuery, Returning, B};
use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, Logical};
use crate::names::{ident, user_relation_name};
use crate::session::{BoundStatement, PlannedQuery, QueryResult, Result, Session};
use sqlparser::ast::{self as A, Spanned};
use std::sync::Arc;
use tusk_exec::dml::Target;
use tusk_exec::Expr;
use tusk_storage::{IndexDef, LockMode, SqlType, TableDef, UpdateKind};

/// Which change a [`PlannedChange`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Insert,
    Update(UpdateKind),
    Delete,
}

/// A data change ready to run: the plan of the rows it writes (INSERT: the
/// new rows in table order; UPDATE: the new rows and TIDs; DELETE: the old
/// rows and TIDs), its RETURNING list, and what running it needs.
#[derive(Debug, Clone)]
pub(crate) struct PlannedChange {
    pub kind: ChangeKind,
    pub table: TableDef,
    /// The table's indexes as the transaction saw them.
    pub indexes: Vec<IndexDef>,
    /// The table's CHECK constraints, bound (INSERT and UPDATE).
    pub checks: Vec<(String, Expr)>,
    pub rows: PlannedQuery,
    pub returning: Option<Returning>,
    /// UPDATE and DELETE: the bound statement, for re-checks.
    pub bound: Option<Arc<BoundStatement>>,
    /// INSERT's ON CONFLICT clause, bound.
    pub on_conflict: Option<tusk_exec::conflict::OnConflict>,
}

/// A copy of a bound statement, kept for re-checks.
fn keep_bound(binder: &Binder<'_>, rows: &BoundQuery) -> Arc<BoundStatement> {
    Arc::new(BoundStatement {
        query: rows.clone(),
        cols: binder.cols.clone(),
        ctes: binder.ctes.clone(),
        cte_refs: binder.cte_refs.clone(),
        params: binder.params.borrow().clone(),
    })
}

/// Whether a bound UPDATE assigns a new value to a column of one of
/// `indexes`: its top projection computes that column as something other
/// than the target's own column (then the update cannot be HOT).
fn assigns_any(binder: &Binder<'_>, plan: &Logical, indexes: &[IndexDef]) -> bool {
    let Logical::Project { input, exprs } = plan else {
        return true;
    };
    fn target_cols(p: &Logical) -> Option<&[ColumnId]> {
        match p {
            Logical::Get {
                cols, tid: Some(_), ..
            } => Some(cols),
            _ => p.children().into_iter().find_map(target_cols),
        }
    }
    let Some(cols) = target_cols(input) else {
        return true;
    };
    indexes.iter().any(|i| {
        i.columns.iter().any(|c| {
            exprs
                .get(c.attno)
                .is_none_or(|(_, e)| *e != binder.cols.expr(cols[c.attno]))
        })
    })
}

impl Session {
    /// The table `name` that a statement changes, locked in
    /// `RowExclusiveLock` (views are refused).
    pub(crate) fn target_table(&mut self, name: &A::ObjectName) -> Result<TableDef> {
        let n = user_relation_name(name)?;
        let t = self.catalog()?.table(&n).cloned().ok_or_else(|| {
            SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{n}\" does not exist"),
            )
            .at_span(name.span())
        })?;
        if t.is_sequence() {
            return Err(SqlError::coded(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("cannot change sequence \"{n}\""),
            ));
        }
        if t.is_view() {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("cannot change view \"{n}\""),
            )
            .with_detail("tusk does not update views; change the tables the view reads."));
        }
        self.lock_relation(t.oid, LockMode::RowExclusive, &t.name)?;
        Ok(t)
    }

    /// The pieces of a re-check (see `recheck`) of a bound UPDATE or DELETE.
    fn dml_recheck(
        &mut self,
        bound: Arc<BoundStatement>,
        table: &TableDef,
        snapshot: tusk_storage::Snapshot,
    ) -> Result<DmlRecheck> {
        let tid = target_tid(&bound.query.plan)
            .ok_or_else(|| SqlError::new("row changes need row identifiers"))?;
        Ok(DmlRecheck {
            plan: RecheckPlan {
                db: self.db.clone(),
                catalog: self.catalog()?,
                gucs: self.gucs.clone(),
                planner: self.planner_settings(),
                snapshot,
                interrupt: self.interrupt.clone(),
                env: self.env.clone(),
                bound,
            },
            tid,
            table: table.clone(),
        })
    }

    pub(crate) fn insert(
        &mut self,
        ins: &A::Insert,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let change = self.plan_insert(ins, &BindSettings::default())?;
        self.run_change(&change, sink)
    }

    pub(crate) fn plan_insert(
        &mut self,
        ins: &A::Insert,
        settings: &BindSettings,
    ) -> Result<PlannedChange> {
        let A::TableObject::TableName(tname) = &ins.table else {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "INSERT into a table function is not supported",
            ));
        };
        self.check_writable("INSERT")?;
        let table = self.target_table(tname)?;
        // `DEFAULT VALUES` is one row of DEFAULT in every column.
        let all_defaults;
        let source = match &ins.source {
            Some(source) => source,
            None => {
                all_defaults = default_values(table.columns.len())?;
                &all_defaults
            }
        };
        // Target columns in the order the statement names them.
        let targets: Vec<usize> = if ins.columns.is_empty() {
            (0..table.columns.len()).collect()
        } else {
            let mut v = Vec::new();
            for c in &ins.columns {
                let n = crate::names::object_name(c)?.name;
                let i = table
                    .columns
                    .iter()
                    .position(|d| d.name == n)
                    .ok_or_else(|| {
                        SqlError::coded(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{n}\" of relation \"{}\" does not exist",
                                table.name
                            ),
                        )
                        .at_span(c.span())
                    })?;
                if v.contains(&i) {
                    return Err(SqlError::coded(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("column \"{n}\" specified more than once"),
                    ));
                }
                v.push(i);
            }
            v
        };
        let catalog = self.catalog()?;
        super::sequence::check_identity_insert(&catalog, &table, &targets, source)?;
        let mut binder = Binder::new(&catalog, settings);
        let defaults: Vec<Expr> = table
            .columns
            .iter()
            .map(|c| binder.column_default(c))
            .collect::<Result<_>>()?;
        let target_types: Vec<(String, SqlType, Expr)> = targets
            .iter()
            .map(|&i| {
                (
                    table.columns[i].name.clone(),
                    table.columns[i].ty,
                    defaults[i].clone(),
                )
            })
            .collect();
        let bq = match source.body.as_ref() {
            A::SetExpr::Values(v) if source.order_by.is_none() && source.limit_clause.is_none() => {
                if v.rows.iter().any(|r| r.len() > targets.len()) {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "INSERT has more expressions than target columns",
                    ));
                }
                if v.rows.iter().any(|r| r.len() < targets.len()) && !ins.columns.is_empty() {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "INSERT has more target columns than expressions",
                    ));
                }
                binder.scopes_push();
                let r = binder.values(v, Some(&target_types));
                binder.scopes_pop();
                r?
            }
            _ => binder.bind_query(source)?,
        };
        let ncols = bq.out.len();
        if ncols > targets.len() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "INSERT has more expressions than target columns",
            ));
        }
        if ncols < targets.len() && !ins.columns.is_empty() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "INSERT has more target columns than expressions",
            ));
        }
        // The source projected into table column order, with assignment casts.
        let mut exprs: Vec<(ColumnId, Expr)> = Vec::new();
        let mut out = Vec::new();
        for (ci, col) in table.columns.iter().enumerate() {
            let ty = col.ty.data_type();
            let e = match targets.iter().position(|&t| t == ci).filter(|&p| p < ncols) {
                Some(p) => {
                    let src = binder.cols.expr(bq.out[p]);
                    let b = B {
                        e: src,
                        unknown: bq.unknown.get(p).copied().unwrap_or(false),
                    };
                    if b.unknown && b.ty() != ty {
                        // An untyped literal of the query: converted now (with
                        // PostgreSQL's input-syntax error if it fails).
                        binder.typmod(crate::bind::cast_expr(b.e, ty), col.ty, false)?
                    } else {
                        let e = binder.assign_public(b, ty, &col.name)?;
                        binder.typmod(e, col.ty, false)?
                    }
                }
                None => defaults[ci].clone(),
            };
            let id = binder.cols.add(col.name.clone(), col.ty, None);
            exprs.push((id, e));
            out.push(id);
        }
        let plan = Logical::Project {
            input: Box::new(bq.plan),
            exprs,
        };
        let names = table.columns.iter().map(|c| c.name.clone()).collect();
        let returning = {
            binder.scopes_push();
            let ids: Vec<ColumnId> = table
                .columns
                .iter()
                .map(|c| binder.target_column(&table.name, &c.name, c.ty))
                .collect();
            let r = binder.returning(ins.returning.as_deref(), &ids);
            binder.scopes_pop();
            r?
        };
        let bound = BoundQuery {
            plan,
            out: out.clone(),
            names,
            unknown: vec![false; out.len()],
        };
        let on_conflict = match &ins.on {
            None => None,
            Some(A::OnInsert::OnConflict(oc)) => {
                let alias = match &ins.table_alias {
                    Some(a) => ident(&a.alias)?,
                    None => table.name.clone(),
                };
                Some(binder.bind_on_conflict(oc, &table, &alias)?)
            }
            Some(_) => {
                return Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    "syntax error at or near \"DUPLICATE\"",
                ))
            }
        };
        let checks = binder.table_checks(&table)?;
        let indexes: Vec<IndexDef> = catalog.indexes_of(table.oid).cloned().collect();
        let rows = self.plan_bound(binder, bound)?;
        Ok(PlannedChange {
            kind: ChangeKind::Insert,
            table,
            indexes,
            checks,
            rows,
            returning,
            bound: None,
            on_conflict,
        })
    }

    pub(crate) fn delete(
        &mut self,
        d: &A::Delete,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let change = self.plan_delete(d, &BindSettings::default())?;
        self.run_change(&change, sink)
    }

    pub(crate) fn plan_delete(
        &mut self,
        d: &A::Delete,
        settings: &BindSettings,
    ) -> Result<PlannedChange> {
        let tables = match &d.from {
            A::FromTable::WithFromKeyword(t) | A::FromTable::WithoutKeyword(t) => t,
        };
        if tables.len() != 1 || !tables[0].joins.is_empty() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "DELETE takes one table (use USING for others)",
            ));
        }
        let A::TableFactor::Table { name, alias, .. } = &tables[0].relation else {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "DELETE needs a table",
            ));
        };
        self.check_writable("DELETE")?;
        let table = self.target_table(name)?;
        let alias = match alias {
            Some(a) => ident(&a.name)?,
            None => table.name.clone(),
        };
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, settings);
        let change = binder.bind_delete(d, &table, &alias)?;
        let returning = change.returning.clone();
        let bound = Some(keep_bound(&binder, &change.rows));
        let rows = self.plan_bound(binder, change.rows)?;
        Ok(PlannedChange {
            kind: ChangeKind::Delete,
            table,
            indexes: Vec::new(),
            checks: Vec::new(),
            rows,
            returning,
            bound,
            on_conflict: None,
        })
    }

    pub(crate) fn update(
        &mut self,
        u: &A::Update,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let change = self.plan_update(u, &BindSettings::default())?;
        self.run_change(&change, sink)
    }

    pub(crate) fn plan_update(
        &mut self,
        u: &A::Update,
        settings: &BindSettings,
    ) -> Result<PlannedChange> {
        let A::TableFactor::Table { name, .. } = &u.table.relation else {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "UPDATE needs a table",
            ));
        };
        self.check_writable("UPDATE")?;
        let table = self.target_table(name)?;
        let catalog = self.catalog()?;
        super::sequence::check_identity_update(&catalog, &table, &u.assignments)?;
        let mut binder = Binder::new(&catalog, settings);
        let change = binder.bind_update(u, &table)?;
        let returning = change.returning.clone();
        let checks = binder.table_checks(&table)?;
        let indexes: Vec<IndexDef> = catalog.indexes_of(table.oid).cloned().collect();
        // PostgreSQL's key columns are those of unique indexes; an update
        // that assigns one takes the stronger row lock (FOR UPDATE).
        let unique: Vec<IndexDef> = indexes.iter().filter(|i| i.unique()).cloned().collect();
        let kind = UpdateKind {
            key_update: assigns_any(&binder, &change.rows.plan, &unique),
            hot_allowed: !assigns_any(&binder, &change.rows.plan, &indexes),
        };
        let bound = Some(keep_bound(&binder, &change.rows));
        let rows = self.plan_bound(binder, change.rows)?;
        Ok(PlannedChange {
            kind: ChangeKind::Update(kind),
            table,
            indexes,
            checks,
            rows,
            returning,
            bound,
            on_conflict: None,
        })
    }

    /// Runs a planned change as the current command of the session's
    /// transaction; RETURNING rows go to `sink` before the command tag is
    /// returned.
    pub(crate) fn run_change(
        &mut self,
        change: &PlannedChange,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let (tag, returned) = self.run_change_rows(change)?;
        if let (Some(r), Some(batch)) = (&change.returning, returned) {
            sink(QueryResult::Rows {
                title: None,
                columns: r
                    .names
                    .iter()
                    .zip(&r.types)
                    .map(|(n, t)| crate::session::header(n, *t))
                    .collect(),
                rows: crate::session::render_rows(&batch, &r.types, self.settings()),
            });
        }
        Ok(QueryResult::Command { tag })
    }

    /// Runs a planned change: its command tag (`INSERT 0 5`) and, with
    /// RETURNING, the returned rows.
    pub(crate) fn run_change_rows(
        &mut self,
        change: &PlannedChange,
    ) -> Result<(String, Option<tusk_exec::Batch>)> {
        let table = &change.table;
        // Held already when planned in this transaction; a plan kept for
        // later takes them now.
        self.lock_relation(table.oid, LockMode::RowExclusive, &table.name)?;
        self.lock_planned(&change.rows)?;
        let snapshot = self.snapshot()?;
        let mut recheck = match &change.bound {
            Some(b) => Some(self.dml_recheck(b.clone(), table, snapshot.clone())?),
            None => None,
        };
        let ctx = self.exec_context(snapshot, false, 0);
        let mut written = change
            .returning
            .as_ref()
            .map(|_| tusk_exec::dml::Written::new(&table.column_types()));
        let mut op = tusk_exec::exec::build_statement(&change.rows.stmt, &ctx)?;
        let target = Target {
            table,
            indexes: &change.indexes,
            checks: &change.checks,
        };
        let (txn, w) = (self.txn()?, written.as_mut());
        let tag = match (change.kind, recheck.as_mut()) {
            (ChangeKind::Insert, _) => {
                let n = match &change.on_conflict {
                    None => tusk_exec::dml::insert(txn, target, op.as_mut(), w)?,
                    Some(oc) => {
                        tusk_exec::conflict::insert_on_conflict(txn, target, op.as_mut(), oc, w)?
                    }
                };
                format!("INSERT 0 {n}")
            }
            (ChangeKind::Update(kind), Some(r)) => format!(
                "UPDATE {}",
                tusk_exec::dml::update(txn, target, kind, op.as_mut(), r, w)?
            ),
            (ChangeKind::Delete, Some(r)) => format!(
                "DELETE {}",
                tusk_exec::dml::delete(txn, table, op.as_mut(), r, w)?
            ),
            _ => {
                return Err(SqlError::new(
                    "UPDATE and DELETE need their bound statement",
                ))
            }
        };
        drop(op);
        let returned = match (&change.returning, written) {
            (Some(r), Some(w)) => {
                let cols = r
                    .exprs
                    .iter()
                    .map(|e| e.eval(&w.rows))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Some(tusk_exec::Batch::new(cols, w.rows.len))
            }
            _ => None,
        };
        Ok((tag, returned))
    }
}

/// `VALUES (DEFAULT, ...)` with `n` columns: what `INSERT ... DEFAULT
/// VALUES` inserts.
fn default_values(n: usize) -> Result<Box<A::Query>> {
    let sql = format!("VALUES ({})", vec!["DEFAULT"; n].join(", "));
    let mut statements =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, &sql)
            .map_err(|e| SqlError::coded(sqlstate::INTERNAL_ERROR, e.to_string()))?;
    match statements.pop() {
        Some(A::Statement::Query(q)) => Ok(q),
        _ => Err(SqlError::coded(
            sqlstate::INTERNAL_ERROR,
            "DEFAULT VALUES did not parse as a query",
        )),
    }
}
