//! Binding UPDATE and DELETE, and RETURNING lists.
//!
//! Both statements bind to a query over the target table (joined with the
//! FROM / USING relations, filtered by WHERE) whose rows carry each target
//! row's TID as a last column: for DELETE the row's columns, for UPDATE
//! the new values of every column, in table order. The executor's sinks
//! then change the heap; a target row reached twice through a join is
//! changed once, as in PostgreSQL. RETURNING expressions are bound over the
//! target table's columns and evaluated on the rows as written.

use super::{err, Binder, ExprCtx, QueryScope, Result, ScopeCol, ScopeRel, B};
use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, JoinKind, Logical};
use crate::names::{ident, object_name};
use sqlparser::ast::{self as A, Spanned};
use tusk_exec::Expr;
use tusk_storage::{DataType, SqlType, TableDef};

use super::query::BoundQuery;

/// A RETURNING list over the target table's columns (by attribute number).
#[derive(Debug, Clone)]
pub struct Returning {
    pub exprs: Vec<Expr>,
    pub names: Vec<String>,
    pub types: Vec<DataType>,
}

/// A bound UPDATE or DELETE.
pub struct BoundChange {
    pub table: TableDef,
    /// Rows to write: new (UPDATE) or old (DELETE) column values in table
    /// order, then the TID.
    pub rows: BoundQuery,
    pub returning: Option<Returning>,
}

impl Binder<'_> {
    /// Pushes the scope of a statement that changes `table`, returning the
    /// Get that reads it (with TIDs) and its column ids.
    fn target(&mut self, table: &TableDef, alias: &str) -> (Logical, Vec<ColumnId>, ColumnId) {
        let mut cols = Vec::new();
        let mut scope_cols = Vec::new();
        for c in &table.columns {
            let id = self.column(&c.name, c.ty, Some(alias));
            cols.push(id);
            scope_cols.push(ScopeCol {
                name: c.name.clone(),
                id,
                hidden: false,
            });
        }
        let tid = self.column("ctid", SqlType::Int8, Some(alias));
        self.scopes.push(QueryScope {
            rels: vec![ScopeRel {
                alias: Some(alias.to_string()),
                cols: scope_cols,
            }],
            star: cols.clone(),
            ..Default::default()
        });
        let get = Logical::Get {
            table: table.clone(),
            alias: alias.to_string(),
            cols: cols.clone(),
            tid: Some(tid),
        };
        (get, cols, tid)
    }

    /// FROM/USING relations joined to the target, then WHERE.
    fn change_source(
        &mut self,
        get: Logical,
        from: Option<&[A::TableWithJoins]>,
        selection: Option<&A::Expr>,
    ) -> Result<Logical> {
        let mut plan = get;
        if let Some(from) = from.filter(|f| !f.is_empty()) {
            let other = self.bind_from_list(from)?;
            plan = Logical::Join {
                kind: JoinKind::Inner,
                left: Box::new(plan),
                right: Box::new(other),
                on: vec![],
                mark: None,
            };
        }
        if let Some(w) = selection {
            let mut ctx = ExprCtx::new("WHERE");
            let p = self.predicate(w, &mut ctx, "WHERE")?;
            plan = ctx.apply_to(plan).filter(p);
        }
        Ok(plan)
    }

    pub fn bind_update(&mut self, u: &A::Update, table: &TableDef) -> Result<BoundChange> {
        if !u.table.joins.is_empty() {
            return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"JOIN\"");
        }
        let alias = match &u.table.relation {
            A::TableFactor::Table { alias: Some(a), .. } => ident(&a.name)?,
            _ => table.name.clone(),
        };
        let (get, cols, tid) = self.target(table, &alias);
        let r = (|| -> Result<BoundChange> {
            let from = match &u.from {
                Some(A::UpdateTableFromKind::AfterSet(f))
                | Some(A::UpdateTableFromKind::BeforeSet(f)) => Some(f.as_slice()),
                None => None,
            };
            let mut plan = self.change_source(get, from, u.selection.as_ref())?;
            // SET: new values by column.
            let mut ctx = ExprCtx::new("UPDATE");
            let mut new = self.set_list(table, &u.assignments, &mut ctx)?;
            plan = ctx.apply_to(plan);
            let mut exprs = Vec::new();
            let mut out = Vec::new();
            for (i, c) in table.columns.iter().enumerate() {
                let e = new[i].take().unwrap_or_else(|| self.col_expr(cols[i]));
                let id = self.column(&c.name, c.ty, None);
                exprs.push((id, e));
                out.push(id);
            }
            exprs.push((tid, self.col_expr(tid)));
            out.push(tid);
            let plan = Logical::Project {
                input: Box::new(plan),
                exprs,
            };
            let returning = self.returning(u.returning.as_deref(), &cols)?;
            Ok(BoundChange {
                table: table.clone(),
                rows: BoundQuery {
                    plan,
                    names: out.iter().map(|&c| self.cols.get(c).name.clone()).collect(),
                    unknown: vec![false; out.len()],
                    out,
                },
                returning,
            })
        })();
        self.scopes.pop();
        r
    }

    /// The values a SET list assigns (UPDATE, ON CONFLICT DO UPDATE), by
    /// attribute number of `table`, bound in the current scope.
    pub(crate) fn set_list(
        &mut self,
        table: &TableDef,
        assignments: &[A::Assignment],
        ctx: &mut ExprCtx,
    ) -> Result<Vec<Option<Expr>>> {
        let mut new: Vec<Option<Expr>> = vec![None; table.columns.len()];
        for a in assignments {
            let targets: Vec<&A::ObjectName> = match &a.target {
                A::AssignmentTarget::ColumnName(n) => vec![n],
                A::AssignmentTarget::Tuple(ns) => ns.iter().collect(),
            };
            let values: Vec<&A::Expr> = match (&a.value, targets.len()) {
                (A::Expr::Tuple(vs), n) if n > 1 => vs.iter().collect(),
                (A::Expr::Nested(inner), n) if n > 1 => match inner.as_ref() {
                    A::Expr::Tuple(vs) => vs.iter().collect(),
                    _ => vec![&a.value],
                },
                _ => vec![&a.value],
            };
            if values.len() != targets.len() {
                return err(
                    sqlstate::SYNTAX_ERROR,
                    "number of columns does not match number of values",
                );
            }
            for (t, v) in targets.into_iter().zip(values) {
                let q = object_name(t)?;
                let name = q.name;
                let i = table
                    .columns
                    .iter()
                    .position(|c| c.name == name)
                    .ok_or_else(|| {
                        SqlError::coded(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{name}\" of relation \"{}\" does not exist",
                                table.name
                            ),
                        )
                        .at_span(t.span())
                    })?;
                if new[i].is_some() {
                    return err(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("multiple assignments to same column \"{name}\""),
                    );
                }
                let col = &table.columns[i];
                let e = if is_default_keyword(v) {
                    self.column_default(col)?
                } else {
                    let b = self.expr(v, ctx)?;
                    let e = self.assign(b, col.ty.data_type(), &col.name)?;
                    self.typmod(e, col.ty, false)?
                };
                new[i] = Some(e);
            }
        }
        Ok(new)
    }

    pub fn bind_delete(
        &mut self,
        d: &A::Delete,
        table: &TableDef,
        alias: &str,
    ) -> Result<BoundChange> {
        let (get, cols, tid) = self.target(table, alias);
        let r = (|| -> Result<BoundChange> {
            let plan = self.change_source(get, d.using.as_deref(), d.selection.as_ref())?;
            let mut out = cols.clone();
            out.push(tid);
            let exprs = out.iter().map(|&c| (c, self.col_expr(c))).collect();
            let plan = Logical::Project {
                input: Box::new(plan),
                exprs,
            };
            let returning = self.returning(d.returning.as_deref(), &cols)?;
            Ok(BoundChange {
                table: table.clone(),
                rows: BoundQuery {
                    plan,
                    names: out.iter().map(|&c| self.cols.get(c).name.clone()).collect(),
                    unknown: vec![false; out.len()],
                    out,
                },
                returning,
            })
        })();
        self.scopes.pop();
        r
    }

    /// A RETURNING list in the current (target) scope, over the target's
    /// attributes `cols`.
    pub(crate) fn returning(
        &mut self,
        items: Option<&[A::SelectItem]>,
        cols: &[ColumnId],
    ) -> Result<Option<Returning>> {
        let Some(items) = items else {
            return Ok(None);
        };
        let mut exprs = Vec::new();
        let mut names = Vec::new();
        let mut ctx = ExprCtx::new("RETURNING");
        for it in items {
            match it {
                A::SelectItem::Wildcard(_) => {
                    for &c in cols {
                        names.push(self.cols.get(c).name.clone());
                        exprs.push(B::known(self.col_expr(c)));
                    }
                }
                A::SelectItem::UnnamedExpr(e) => {
                    names.push(super::select::figure_colname(e));
                    exprs.push(self.expr(e, &mut ctx)?);
                }
                A::SelectItem::ExprWithAlias { expr, alias } => {
                    names.push(ident(alias)?);
                    exprs.push(self.expr(expr, &mut ctx)?);
                }
                _ => {
                    return err(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "this RETURNING item is not supported",
                    )
                }
            }
        }
        if !ctx.applies.is_empty() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "subqueries in RETURNING are not supported yet",
            );
        }
        let mut out = Vec::new();
        let mut types = Vec::new();
        for b in exprs {
            let e = self.resolve_unknown_text(b)?;
            let e = crate::rewrite::fold::fold(e)?;
            let mut refs = Vec::new();
            e.columns(&mut refs);
            if refs.iter().any(|r| !cols.contains(r)) {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "RETURNING may refer only to the target table's columns",
                );
            }
            let e = crate::logical::exprs::replace_columns(e, &|c| {
                cols.iter().position(|&x| x == c).map(|i| Expr::Column {
                    index: i,
                    ty: self.cols.ty(c),
                })
            });
            types.push(e.data_type());
            out.push(e);
        }
        Ok(Some(Returning {
            exprs: out,
            names,
            types,
        }))
    }

    /// Registers a target-table column visible to RETURNING in the current
    /// scope (INSERT's target has no FROM scope of its own).
    pub(crate) fn target_column(&mut self, table: &str, name: &str, ty: SqlType) -> ColumnId {
        let id = self.column(name, ty, Some(table));
        let scope = self.scope();
        match scope.rels.first_mut() {
            Some(rel) => rel.cols.push(ScopeCol {
                name: name.to_string(),
                id,
                hidden: false,
            }),
            None => scope.rels.push(ScopeRel {
                alias: Some(table.to_string()),
                cols: vec![ScopeCol {
                    name: name.to_string(),
                    id,
                    hidden: false,
                }],
            }),
        }
        scope.star.push(id);
        id
    }

    pub(crate) fn scopes_push(&mut self) {
        self.scopes.push(QueryScope::default());
    }

    pub(crate) fn scopes_pop(&mut self) {
        self.scopes.pop();
    }
}

/// Whether `e` is the key word DEFAULT (in VALUES or a SET list).
pub(crate) fn is_default_keyword(e: &A::Expr) -> bool {
    matches!(e, A::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}
