//! Queries: WITH, set operations, VALUES, ORDER BY and LIMIT around a body.
//!
//! A query level pushes its own scope; its WITH clause's CTEs are visible in
//! that scope and the scopes nested in it. A non-recursive CTE is bound
//! once; each reference gets fresh column ids over the shared definition
//! (the physical planner inlines a CTE referenced once, unless
//! `MATERIALIZED`, and materialises the others). `WITH RECURSIVE` binds the
//! non-recursive term first, then the recursive term with the CTE's name
//! bound to a work table of the first term's types.

use super::{err, Binder, CteName, ExprCtx, QueryScope, Result, B};
use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, CteDef, Logical, SetOpKind};
use crate::names::ident;
use sqlparser::ast as A;
use tusk_exec::{Expr, Value};
use tusk_storage::{DataType, SqlType};

/// A bound query: its plan, output columns and their names.
#[derive(Debug, Clone)]
pub struct BoundQuery {
    pub plan: Logical,
    pub out: Vec<ColumnId>,
    pub names: Vec<String>,
    /// Output columns that are untyped literals (`SELECT 'x'`, `NULL`):
    /// INSERT converts them to the column type, a subquery makes them text.
    pub unknown: Vec<bool>,
}

impl Binder<'_> {
    /// A whole statement's query.
    pub fn bind_query(&mut self, q: &A::Query) -> Result<BoundQuery> {
        self.query(q)
    }

    /// A query nested in another (in FROM, in an expression, in a CTE):
    /// its untyped outputs resolve to text, as PostgreSQL's do there.
    pub(crate) fn subquery(&mut self, q: &A::Query) -> Result<BoundQuery> {
        let mut bq = self.nested(|b| b.query(q))?;
        self.resolve_unknown_outputs(&mut bq);
        Ok(bq)
    }

    /// Gives untyped output columns the type text.
    pub(crate) fn resolve_unknown_outputs(&mut self, bq: &mut BoundQuery) {
        if !bq.unknown.iter().any(|u| *u) {
            return;
        }
        // The columns already carry text type; only the flag goes.
        bq.unknown = vec![false; bq.out.len()];
    }

    fn query(&mut self, q: &A::Query) -> Result<BoundQuery> {
        self.scopes.push(QueryScope::default());
        let r = self.query_in_scope(q);
        self.scopes.pop();
        r
    }

    fn query_in_scope(&mut self, q: &A::Query) -> Result<BoundQuery> {
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                self.bind_cte(cte, with.recursive)?;
            }
        }
        if q.fetch.is_some() {
            return err(sqlstate::FEATURE_NOT_SUPPORTED, "FETCH is not supported");
        }
        if !q.locks.is_empty() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "SELECT ... FOR UPDATE/SHARE is not supported yet",
            );
        }
        let order: Vec<&A::OrderByExpr> = match &q.order_by {
            None => vec![],
            Some(ob) => match &ob.kind {
                A::OrderByKind::Expressions(v) => v.iter().collect(),
                A::OrderByKind::All(_) => {
                    return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"ALL\"")
                }
            },
        };
        let mut bq = match q.body.as_ref() {
            A::SetExpr::Select(s) => self.select(s, &order)?,
            body => {
                let bq = self.set_expr(body)?;
                self.order_outputs(bq, &order)?
            }
        };
        let (limit, offset) = self.limit_clause(q.limit_clause.as_ref())?;
        if limit.is_some() || offset > 0 {
            bq.plan = Logical::Limit {
                input: Box::new(bq.plan),
                limit,
                offset,
            };
        }
        Ok(bq)
    }

    /// A set-expression operand: a SELECT, VALUES, a parenthesized query or
    /// a set operation.
    fn set_expr(&mut self, body: &A::SetExpr) -> Result<BoundQuery> {
        match body {
            A::SetExpr::Select(s) => {
                self.scopes.push(QueryScope::default());
                let r = self.select(s, &[]);
                self.scopes.pop();
                r
            }
            A::SetExpr::Query(inner) => self.nested(|b| b.query(inner)),
            A::SetExpr::Values(v) => self.values(v, None),
            A::SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let kind = match op {
                    A::SetOperator::Union => SetOpKind::Union,
                    A::SetOperator::Intersect => SetOpKind::Intersect,
                    A::SetOperator::Except | A::SetOperator::Minus => SetOpKind::Except,
                };
                let all = match set_quantifier {
                    A::SetQuantifier::All => true,
                    A::SetQuantifier::Distinct | A::SetQuantifier::None => false,
                    other => {
                        return err(
                            sqlstate::SYNTAX_ERROR,
                            format!("syntax error at or near \"{other}\""),
                        )
                    }
                };
                let l = self.nested(|b| b.set_expr(left))?;
                let r = self.nested(|b| b.set_expr(right))?;
                self.set_operation(kind, all, l, r)
            }
            other => err(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{other}\""),
            ),
        }
    }

    fn set_operation(
        &mut self,
        op: SetOpKind,
        all: bool,
        l: BoundQuery,
        r: BoundQuery,
    ) -> Result<BoundQuery> {
        let word = match op {
            SetOpKind::Union => "UNION",
            SetOpKind::Intersect => "INTERSECT",
            SetOpKind::Except => "EXCEPT",
        };
        if l.out.len() != r.out.len() {
            return err(
                sqlstate::SYNTAX_ERROR,
                format!("each {word} query must have the same number of columns"),
            );
        }
        let mut types = Vec::new();
        let mut unknown = Vec::new();
        for i in 0..l.out.len() {
            let lb = B {
                e: self.col_expr(l.out[i]),
                unknown: l.unknown[i],
            };
            let rb = B {
                e: self.col_expr(r.out[i]),
                unknown: r.unknown[i],
            };
            let t = self.common_type_of(&[&lb, &rb], word)?;
            unknown.push(lb.unknown && rb.unknown);
            types.push(t);
        }
        let left = self.cast_outputs(l.plan, &l.out, &types)?;
        let right = self.cast_outputs(r.plan, &r.out, &types)?;
        let out: Vec<ColumnId> = l
            .names
            .iter()
            .zip(&types)
            .map(|(n, t)| self.column(n, self.sql_type_of(l.out[0], *t), None))
            .collect();
        Ok(BoundQuery {
            plan: Logical::SetOp {
                op,
                all,
                left: Box::new(left),
                right: Box::new(right),
                out: out.clone(),
            },
            out,
            names: l.names,
            unknown,
        })
    }

    /// The SqlType for a column that gets type `t` (keeping a typmod only
    /// when the source column already has that type).
    fn sql_type_of(&self, _like: ColumnId, t: DataType) -> SqlType {
        SqlType::of(t)
    }

    /// `plan` with its output columns `cols` converted to `types` (a
    /// projection with casts, or `plan` itself when nothing changes).
    pub(crate) fn cast_outputs(
        &mut self,
        plan: Logical,
        cols: &[ColumnId],
        types: &[DataType],
    ) -> Result<Logical> {
        let same =
            plan.output() == cols && cols.iter().zip(types).all(|(&c, &t)| self.cols.ty(c) == t);
        if same {
            return Ok(plan);
        }
        let mut exprs = Vec::with_capacity(cols.len());
        for (&c, &t) in cols.iter().zip(types) {
            let e = self.col_expr(c);
            let e = super::cast(e, t);
            let info = self.cols.get(c).clone();
            let id = self.column(&info.name, SqlType::of(t), info.qualifier.as_deref());
            exprs.push((id, e));
        }
        Ok(Logical::Project {
            input: Box::new(plan),
            exprs,
        })
    }

    /// ORDER BY over a query's output columns (after a set operation or
    /// VALUES): output names, ordinals, or expressions over output names.
    fn order_outputs(
        &mut self,
        mut bq: BoundQuery,
        order: &[&A::OrderByExpr],
    ) -> Result<BoundQuery> {
        if order.is_empty() {
            return Ok(bq);
        }
        let mut keys = Vec::new();
        for o in order {
            let id = match self.output_reference(&o.expr, &bq.names, &bq.out)? {
                Some(id) => id,
                None => {
                    return err(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                    )
                    .map_err(|e: SqlError| {
                        e.with_detail(
                            "Only result column names can be used, not expressions or functions.",
                        )
                    })
                }
            };
            let b = B::known(self.col_expr(id));
            keys.push(super::func::sort_key(self, b, o)?);
        }
        bq.plan = Logical::Sort {
            input: Box::new(bq.plan),
            keys,
        };
        Ok(bq)
    }

    /// An ORDER BY / GROUP BY item that names an output column: an integer
    /// ordinal or a bare output name. `Ok(None)` when it is neither.
    pub(crate) fn output_reference(
        &mut self,
        e: &A::Expr,
        names: &[String],
        out: &[ColumnId],
    ) -> Result<Option<ColumnId>> {
        if let Some(k) = super::select::constant_position(e, "ORDER BY", out.len())? {
            return Ok(Some(out[k]));
        }
        match e {
            A::Expr::Identifier(i) => {
                let name = ident(i)?;
                let hits: Vec<usize> = (0..names.len()).filter(|&k| names[k] == name).collect();
                match hits.as_slice() {
                    [] => Ok(None),
                    [k] => Ok(Some(out[*k])),
                    many => {
                        // Duplicates are fine when they are the same column.
                        if many.iter().all(|&k| out[k] == out[many[0]]) {
                            Ok(Some(out[many[0]]))
                        } else {
                            err(
                                sqlstate::AMBIGUOUS_COLUMN,
                                format!("ORDER BY \"{name}\" is ambiguous"),
                            )
                        }
                    }
                }
            }
            _ => Ok(None),
        }
    }

    /// LIMIT and OFFSET: constants (NULL LIMIT means none).
    fn limit_clause(&mut self, lc: Option<&A::LimitClause>) -> Result<(Option<u64>, u64)> {
        let (limit, offset) = match lc {
            None => return Ok((None, 0)),
            Some(A::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"BY\"");
                }
                (limit.as_ref(), offset.as_ref().map(|o| &o.value))
            }
            Some(A::LimitClause::OffsetCommaLimit { .. }) => {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "LIMIT #,# syntax is not supported",
                )
                .map_err(|e: SqlError| e.with_hint("Use separate LIMIT and OFFSET clauses."))
            }
        };
        let l = match limit {
            Some(e) => self.row_count(e, "LIMIT")?,
            None => None,
        };
        let o = match offset {
            Some(e) => self.row_count(e, "OFFSET")?.unwrap_or(0),
            None => 0,
        };
        Ok((l, o))
    }

    fn row_count(&mut self, e: &A::Expr, what: &'static str) -> Result<Option<u64>> {
        let mut ctx = ExprCtx::new(what);
        let b = self.expr(e, &mut ctx)?;
        let x = self.coerce(b, DataType::Int8, |t| {
            SqlError::coded(
                sqlstate::DATATYPE_MISMATCH,
                format!("argument of {what} must be type bigint, not type {t}"),
            )
        })?;
        let mut cols = Vec::new();
        x.columns(&mut cols);
        if !cols.is_empty() || !ctx.applies.is_empty() {
            return err(
                sqlstate::INVALID_COLUMN_REFERENCE,
                format!("argument of {what} must not contain variables"),
            );
        }
        match crate::rewrite::fold::eval_constant(&x)? {
            Value::Null => Ok(None),
            Value::Int8(n) if n < 0 => err(
                if what == "LIMIT" {
                    sqlstate::INVALID_ROW_COUNT_IN_LIMIT
                } else {
                    sqlstate::INVALID_ROW_COUNT_IN_RESULT_OFFSET
                },
                format!("{what} must not be negative"),
            ),
            Value::Int8(n) => Ok(Some(n as u64)),
            other => err(
                sqlstate::DATATYPE_MISMATCH,
                format!("argument of {what} must be type bigint: {other:?}"),
            ),
        }
    }

    /// `VALUES (...), (...)`; with `target`, column `i` is coerced to
    /// `target[i]` (INSERT's assignment), else the columns resolve like a
    /// UNION's.
    pub(crate) fn values(
        &mut self,
        v: &A::Values,
        target: Option<&[(String, SqlType, Expr)]>,
    ) -> Result<BoundQuery> {
        let mut ctx = ExprCtx::new("VALUES");
        let mut rows: Vec<Vec<B>> = Vec::with_capacity(v.rows.len());
        for row in &v.rows {
            let mut r = Vec::with_capacity(row.len());
            for e in row.iter() {
                r.push(self.value_item(e, &mut ctx)?);
            }
            if let Some(first) = rows.first() {
                if first.len() != r.len() {
                    return err(
                        sqlstate::SYNTAX_ERROR,
                        "VALUES lists must all be the same length",
                    );
                }
            }
            rows.push(r);
        }
        if !ctx.applies.is_empty() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "subqueries in VALUES are not supported",
            );
        }
        let ncols = rows.first().map_or(0, |r| r.len());
        let mut types = Vec::with_capacity(ncols);
        let mut unknown = Vec::with_capacity(ncols);
        for c in 0..ncols {
            let col: Vec<&B> = rows.iter().map(|r| &r[c]).collect();
            let all_unknown = col.iter().all(|b| b.unknown);
            let t = match target.and_then(|t| t.get(c)) {
                Some((_, t, _)) => *t,
                None => SqlType::of(self.common_type_of(&col, "VALUES")?),
            };
            unknown.push(target.is_none() && all_unknown);
            types.push(t);
        }
        let mut out_rows = Vec::with_capacity(rows.len());
        for r in rows {
            let mut out = Vec::with_capacity(ncols);
            for (c, b) in r.into_iter().enumerate() {
                let t = types[c];
                let e = match target.and_then(|tg| tg.get(c)) {
                    Some((name, _, default)) => {
                        if is_default(&b) {
                            default.clone()
                        } else {
                            let e = self.assign(b, t.data_type(), name)?;
                            self.typmod(e, t, false)?
                        }
                    }
                    None => self.coerce(b, t.data_type(), |from| {
                        SqlError::coded(
                            sqlstate::DATATYPE_MISMATCH,
                            format!(
                                "VALUES types {} and {from} cannot be matched",
                                t.display_name()
                            ),
                        )
                    })?,
                };
                out.push(e);
            }
            out_rows.push(out);
        }
        let names: Vec<String> = (1..=ncols).map(|i| format!("column{i}")).collect();
        let out: Vec<ColumnId> = names
            .iter()
            .zip(&types)
            .map(|(n, t)| self.column(n, *t, Some("*VALUES*")))
            .collect();
        Ok(BoundQuery {
            plan: Logical::Values {
                rows: out_rows,
                cols: out.clone(),
            },
            out,
            names,
            unknown,
        })
    }

    /// A VALUES item; `DEFAULT` becomes a marker the INSERT binder replaces.
    fn value_item(&mut self, e: &A::Expr, ctx: &mut ExprCtx) -> Result<B> {
        if let A::Expr::Identifier(i) = e {
            if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") {
                return Ok(B {
                    e: Expr::Const {
                        value: Value::Null,
                        ty: DataType::Text,
                    },
                    unknown: true,
                }
                .default_marker());
            }
        }
        self.expr(e, ctx)
    }

    fn bind_cte(&mut self, cte: &A::Cte, recursive: bool) -> Result<()> {
        let name = ident(&cte.alias.name)?;
        if self.scope().ctes.iter().any(|(n, _)| *n == name) {
            return err(
                sqlstate::DUPLICATE_OBJECT,
                format!("WITH query name \"{name}\" specified more than once"),
            );
        }
        let alias_cols: Vec<String> = cte
            .alias
            .columns
            .iter()
            .map(|c| ident(&c.name))
            .collect::<Result<_>>()?;
        let materialize = matches!(cte.materialized, Some(A::CteAsMaterialized::Materialized));
        let self_referencing = recursive && refers_to(&cte.query, &name);
        let (plan, out, names) = if self_referencing {
            self.recursive_cte(&name, &cte.query, &alias_cols)?
        } else {
            let mut bq = self.subquery(&cte.query)?;
            self.resolve_unknown_outputs(&mut bq);
            (bq.plan, bq.out, bq.names)
        };
        let names = rename_cols(&name, names, &alias_cols)?;
        let id = self.ctes.len();
        self.ctes.push(CteDef {
            name: name.clone(),
            plan,
            cols: out,
            recursive: self_referencing,
            materialize,
        });
        self.cte_names.push(names);
        self.cte_refs.push(0);
        self.scope().ctes.push((name, CteName::Cte(id)));
        Ok(())
    }

    /// `WITH RECURSIVE name AS (seed UNION [ALL] step)`.
    fn recursive_cte(
        &mut self,
        name: &str,
        q: &A::Query,
        alias_cols: &[String],
    ) -> Result<(Logical, Vec<ColumnId>, Vec<String>)> {
        let A::SetExpr::SetOperation {
            op: A::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = q.body.as_ref()
        else {
            return err(
                sqlstate::INVALID_RECURSION,
                format!("recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"),
            );
        };
        if q.order_by.is_some() || q.limit_clause.is_some() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "ORDER BY/LIMIT in a recursive query is not implemented",
            );
        }
        let distinct = !matches!(set_quantifier, A::SetQuantifier::All);
        let mut seed = self.nested(|b| b.set_expr(left))?;
        self.resolve_unknown_outputs(&mut seed);
        let names = rename_cols(name, seed.names.clone(), alias_cols)?;
        let types: Vec<DataType> = seed.out.iter().map(|&c| self.cols.ty(c)).collect();
        let work_table = self.new_work_table();
        self.work_tables.push((names.clone(), types.clone()));
        self.scope()
            .ctes
            .push((name.to_string(), CteName::WorkTable { id: work_table }));
        let step = self.nested(|b| b.set_expr(right));
        self.scope().ctes.pop();
        let step = step?;
        if step.out.len() != seed.out.len() {
            return err(
                sqlstate::SYNTAX_ERROR,
                "each UNION query must have the same number of columns",
            );
        }
        for (i, (&s, &t)) in step.out.iter().zip(&types).enumerate() {
            let st = self.cols.ty(s);
            if st != t && !super::operators::implicit(st, t) {
                return err(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                        i + 1,
                        t.display_name(),
                        st.display_name()
                    ),
                )
                .map_err(|e: SqlError| e.with_hint("Cast the output of the non-recursive term to the correct type."));
            }
        }
        let step_plan = self.cast_outputs(step.plan, &step.out, &types)?;
        let out: Vec<ColumnId> = names
            .iter()
            .zip(&types)
            .map(|(n, t)| self.column(n, SqlType::of(*t), None))
            .collect();
        Ok((
            Logical::RecursiveUnion {
                seed: Box::new(seed.plan),
                step: Box::new(step_plan),
                distinct,
                work_table,
                out: out.clone(),
            },
            out,
            names,
        ))
    }

    /// A FROM reference to a CTE (or, inside a recursive term, to its work
    /// table), if `name` is one visible here.
    pub(crate) fn cte_reference(
        &mut self,
        name: &str,
        alias: Option<String>,
        alias_cols: &[String],
    ) -> Result<Option<super::from::FromItem>> {
        let found = self.scopes.iter().rev().find_map(|s| {
            s.ctes
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, c)| *c)
        });
        let Some(found) = found else {
            return Ok(None);
        };
        let (names, types): (Vec<String>, Vec<SqlType>) = match found {
            CteName::Cte(id) => (
                self.cte_names[id].clone(),
                self.ctes[id]
                    .cols
                    .iter()
                    .map(|&c| self.cols.get(c).ty)
                    .collect(),
            ),
            CteName::WorkTable { id } => {
                let (n, t) = &self.work_tables[id];
                (n.clone(), t.iter().map(|&t| SqlType::of(t)).collect())
            }
        };
        let alias = alias.unwrap_or_else(|| name.to_string());
        let names = rename_cols(&alias, names, alias_cols)?;
        let cols: Vec<ColumnId> = names
            .iter()
            .zip(&types)
            .map(|(n, t)| self.column(n, *t, Some(&alias)))
            .collect();
        let scope_cols = names
            .iter()
            .zip(&cols)
            .map(|(n, &id)| super::ScopeCol {
                name: n.clone(),
                id,
                hidden: false,
            })
            .collect();
        let scope = self.scope();
        if scope
            .rels
            .iter()
            .any(|r| r.alias.as_deref() == Some(alias.as_str()))
        {
            return err(
                sqlstate::DUPLICATE_OBJECT,
                format!("table name \"{alias}\" specified more than once"),
            );
        }
        scope.rels.push(super::ScopeRel {
            alias: Some(alias),
            cols: scope_cols,
        });
        let n = scope.rels.len();
        let plan = match found {
            CteName::Cte(id) => {
                self.cte_refs[id] += 1;
                Logical::CteRef {
                    id,
                    cols: cols.clone(),
                }
            }
            CteName::WorkTable { id } => Logical::WorkTable {
                id,
                cols: cols.clone(),
            },
        };
        Ok(Some(super::from::FromItem {
            plan,
            rels: n - 1..n,
            star: cols,
        }))
    }
}

impl B {
    /// Marks a `DEFAULT` item of VALUES.
    fn default_marker(self) -> B {
        B {
            e: Expr::Const {
                value: Value::Text(DEFAULT_MARKER.to_string()),
                ty: DataType::Text,
            },
            unknown: true,
        }
    }
}

/// The text of the constant standing for `DEFAULT` in INSERT ... VALUES,
/// which the INSERT binder replaces by the column's default.
pub(crate) const DEFAULT_MARKER: &str = "\u{0}tusk-default\u{0}";

pub(crate) fn is_default(b: &B) -> bool {
    matches!(&b.e, Expr::Const { value: Value::Text(s), .. } if s == DEFAULT_MARKER) && b.unknown
}

/// Applies a CTE's column alias list to its output names.
fn rename_cols(name: &str, mut names: Vec<String>, alias_cols: &[String]) -> Result<Vec<String>> {
    if alias_cols.len() > names.len() {
        return err(
            sqlstate::INVALID_COLUMN_REFERENCE,
            format!(
                "WITH query \"{name}\" has {} columns available but {} columns specified",
                names.len(),
                alias_cols.len()
            ),
        );
    }
    for (n, a) in names.iter_mut().zip(alias_cols) {
        *n = a.clone();
    }
    Ok(names)
}

/// Whether query `q` mentions relation `name` anywhere (a recursive CTE's
/// self-reference).
fn refers_to(q: &A::Query, name: &str) -> bool {
    use std::ops::ControlFlow;
    let mut found = false;
    let _ = A::visit_relations(q, |rel: &A::ObjectName| {
        if rel.0.len() == 1 {
            if let A::ObjectNamePart::Identifier(i) = &rel.0[0] {
                if ident(i).is_ok_and(|n| n == name) {
                    found = true;
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    found
}
