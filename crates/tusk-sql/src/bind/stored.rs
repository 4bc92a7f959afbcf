//! Expressions the catalog keeps as SQL text: column DEFAULTs and CHECK
//! constraints. They are bound again where they are used (INSERT, UPDATE),
//! a CHECK over the table's columns by position, a DEFAULT with no columns
//! at all, with PostgreSQL's restrictions on what they may contain.

use super::{err, Binder, ExprCtx, QueryScope, Result, ScopeCol, ScopeRel};
use crate::error::{sqlstate, SqlError};
use crate::logical::ColumnId;
use sqlparser::ast as A;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use tusk_exec::Expr;
use tusk_storage::{ColumnDef, TableDef};

/// Parses stored (or written) expression text.
pub fn parse_expr(sql: &str) -> Result<A::Expr> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| crate::parse::syntax_error(sql, &e))
}

impl Binder<'_> {
    /// A CHECK condition over `columns` (of table `table`), as an
    /// expression over their positions.
    pub fn bind_check(&mut self, table: &str, columns: &[ColumnDef], e: &A::Expr) -> Result<Expr> {
        let p = self.over_columns(table, columns, |b| {
            let mut ctx = ExprCtx::new("check constraints");
            let p = b.predicate(e, &mut ctx, "CHECK")?;
            if !ctx.applies.is_empty() {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "cannot use subquery in check constraint",
                );
            }
            Ok(p)
        })?;
        crate::rewrite::fold::fold(p)
    }

    /// A stored expression (a CHECK, or a DEFAULT with its column's type
    /// cast) over `columns` of `table`, unfolded, as PostgreSQL keeps its
    /// expression trees (for printing them: `catalog::deparse`).
    pub fn bind_stored_expr(
        &mut self,
        table: &str,
        columns: &[ColumnDef],
        e: &A::Expr,
    ) -> Result<Expr> {
        self.over_columns(table, columns, |b| {
            let mut ctx = ExprCtx::new("stored expressions");
            let v = b.expr(e, &mut ctx)?;
            if !ctx.applies.is_empty() {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "cannot use subquery in stored expression",
                );
            }
            if v.unknown {
                return b.convert_unknown(v.e, tusk_storage::DataType::Text);
            }
            Ok(v.e)
        })
    }

    /// Runs `f` with `columns` (of `table`) in scope and maps their
    /// references in its result to column positions.
    fn over_columns(
        &mut self,
        table: &str,
        columns: &[ColumnDef],
        f: impl FnOnce(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        let mut ids: Vec<ColumnId> = Vec::with_capacity(columns.len());
        let mut scope_cols = Vec::new();
        for c in columns {
            let id = self.column(&c.name, c.ty, Some(table));
            ids.push(id);
            scope_cols.push(ScopeCol {
                name: c.name.clone(),
                id,
                hidden: false,
            });
        }
        self.scopes.push(QueryScope {
            rels: vec![ScopeRel {
                alias: Some(table.to_string()),
                cols: scope_cols,
            }],
            ..Default::default()
        });
        let r = f(self);
        self.scopes.pop();
        Ok(crate::logical::exprs::replace_columns(r?, &|c| {
            ids.iter().position(|&x| x == c).map(|i| Expr::Column {
                index: i,
                ty: columns[i].ty.data_type(),
            })
        }))
    }

    /// A DEFAULT expression for `column`, converted to its type as an
    /// assignment would.
    pub fn bind_default(&mut self, column: &ColumnDef, e: &A::Expr) -> Result<Expr> {
        self.scopes.push(QueryScope::default());
        let r = (|| -> Result<Expr> {
            let mut ctx = ExprCtx::new("DEFAULT expressions");
            let b = self.expr(e, &mut ctx).map_err(|x| {
                if x.code == sqlstate::UNDEFINED_COLUMN {
                    SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "cannot use column reference in DEFAULT expression",
                    )
                } else {
                    x
                }
            })?;
            if !ctx.applies.is_empty() {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "cannot use subquery in DEFAULT expression",
                );
            }
            let ty = column.ty.data_type();
            let v = self.assign(b, ty, &column.name)?;
            self.typmod(v, column.ty, false)
        })();
        self.scopes.pop();
        r
    }

    /// The CHECK constraints of `table` over its columns by position, in
    /// the order PostgreSQL evaluates them (by name).
    pub fn table_checks(&mut self, table: &TableDef) -> Result<Vec<(String, Expr)>> {
        let mut checks: Vec<(String, Expr)> = Vec::new();
        for c in &table.checks {
            let e = parse_expr(&c.expr)?;
            checks.push((
                c.name.clone(),
                self.bind_check(&table.name, &table.columns, &e)?,
            ));
        }
        checks.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(checks)
    }

    /// The default of `column` (NULL when it has none).
    pub fn column_default(&mut self, column: &ColumnDef) -> Result<Expr> {
        match &column.default {
            Some(sql) => {
                let e = parse_expr(sql)?;
                self.bind_default(column, &e)
            }
            None => Ok(Expr::Const {
                value: tusk_exec::Value::Null,
                ty: column.ty.data_type(),
            }),
        }
    }
}
