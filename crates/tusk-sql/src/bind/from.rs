//! The FROM clause: tables, CTE references, subqueries, table functions and
//! joins.
//!
//! Each FROM item adds relations to the current [`super::QueryScope`] and
//! yields a logical plan; items separated by commas are cross-joined (the
//! planner later reorders joins and turns WHERE equalities into join keys).
//! `JOIN ... USING (c)` and `NATURAL JOIN` add an unqualified relation with
//! the merged columns and hide the two sides' own columns of those names
//! from unqualified lookup, as PostgreSQL's join alias does; `SELECT *`
//! lists the merged columns first.

use super::{err, Binder, ExprCtx, Result, ScopeCol, ScopeRel};
use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, JoinKind, Logical, SubqueryKind, TableFunction};
use crate::names::{ident, object_name};
use sqlparser::ast::{self as A, Spanned};
use tusk_storage::{DataType, SqlType, TableDef};

/// A bound FROM item before it joins its neighbours.
pub(crate) struct FromItem {
    pub plan: Logical,
    /// Relations it adds to the scope (already pushed).
    pub rels: std::ops::Range<usize>,
    /// Its columns in `SELECT *` order.
    pub star: Vec<ColumnId>,
}

/// Places the subqueries of a join's ON clause (`applies`, whose result
/// columns the conjuncts `on` read). A subquery that reads only one side's
/// columns (or none) is computed on that side's rows, where its result is
/// one more column the condition reads. One that reads both sides must run
/// per pair of rows: for an inner join, where ON is a filter, it and the
/// conjuncts reading it move above the join (returned); for a left join it
/// runs on the right side, which then reads the left row laterally (for a
/// right join the other way round); a full join reports it as unsupported.
fn place_on_subqueries(
    kind: JoinKind,
    left: &mut FromItem,
    right: &mut FromItem,
    applies: Vec<super::PendingApply>,
    on: &mut Vec<tusk_exec::Expr>,
) -> Result<(Vec<super::PendingApply>, Vec<tusk_exec::Expr>)> {
    let mut above = Vec::new();
    for a in applies {
        let mut refs = a.subquery.free_columns();
        if let SubqueryKind::Any { test }
        | SubqueryKind::All { test }
        | SubqueryKind::RowCompare { test } = &a.kind
        {
            let inner = a.subquery.output();
            refs.extend(
                crate::logical::expr_columns(test)
                    .into_iter()
                    .filter(|c| !inner.contains(c)),
            );
        }
        let (lcols, rcols) = (left.plan.output(), right.plan.output());
        let side = if refs.iter().all(|c| !rcols.contains(c)) {
            Some(&mut *left)
        } else if refs.iter().all(|c| !lcols.contains(c)) {
            Some(&mut *right)
        } else {
            None
        };
        match side {
            Some(item) => {
                let input = std::mem::replace(&mut item.plan, Logical::unit());
                item.plan = Logical::Apply {
                    input: Box::new(input),
                    subquery: Box::new(a.subquery),
                    kind: a.kind,
                    out: a.out,
                };
            }
            None if kind == JoinKind::Inner => above.push(a),
            // Under a LEFT join it runs on the right side's rows, reading
            // the left row as a lateral reference (the join becomes a
            // dependent one, see `join_node`).
            None if matches!(kind, JoinKind::Left | JoinKind::Right) => {
                // (Under a RIGHT join the left side runs it, and the join is
                // turned around, see `join_node`.)
                let inner = if kind == JoinKind::Left {
                    &mut *right
                } else {
                    &mut *left
                };
                let input = std::mem::replace(&mut inner.plan, Logical::unit());
                inner.plan = Logical::Apply {
                    input: Box::new(input),
                    subquery: Box::new(a.subquery),
                    kind: a.kind,
                    out: a.out,
                };
            }
            // PostgreSQL cannot either: its full joins need hash or merge
            // keys.
            None => return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
            ),
        }
    }
    let outs: Vec<ColumnId> = above.iter().map(|a| a.out).collect();
    let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(on).into_iter().partition(|c| {
        crate::logical::expr_columns(c)
            .iter()
            .any(|x| outs.contains(x))
    });
    *on = kept;
    Ok((above, moved))
}

/// A join of `left` and `right`: a [`Logical::DependentJoin`] when the
/// right side reads the left one's columns (LATERAL), else a plain join. A
/// RIGHT join whose left side reads the right one's (an ON subquery) is
/// the LEFT dependent join the other way round, its columns put back in
/// order by a projection (`cols` gives their expressions).
pub(super) fn join_node(
    kind: JoinKind,
    left: Logical,
    right: Logical,
    on: Vec<tusk_exec::Expr>,
    cols: &crate::logical::Columns,
) -> Logical {
    let lcols = left.output();
    let rcols = right.output();
    if kind == JoinKind::Right && left.free_columns().iter().any(|c| rcols.contains(c)) {
        let exprs = lcols
            .iter()
            .chain(&rcols)
            .map(|&c| (c, cols.expr(c)))
            .collect();
        return Logical::Project {
            input: Box::new(Logical::DependentJoin {
                kind: JoinKind::Left,
                left: Box::new(right),
                right: Box::new(left),
                on,
            }),
            exprs,
        };
    }
    if right.free_columns().iter().any(|c| lcols.contains(c)) {
        return Logical::DependentJoin {
            kind,
            left: Box::new(left),
            right: Box::new(right),
            on,
        };
    }
    Logical::Join {
        kind,
        left: Box::new(left),
        right: Box::new(right),
        on,
        mark: None,
    }
}

impl Binder<'_> {
    /// Binds a whole FROM list into one plan (a query without FROM is one
    /// row of no columns).
    pub(crate) fn bind_from_list(&mut self, from: &[A::TableWithJoins]) -> Result<Logical> {
        let mut plan: Option<Logical> = None;
        for twj in from {
            let item = self.join_tree(twj)?;
            self.scope().star.extend(item.star);
            plan = Some(match plan {
                None => item.plan,
                Some(left) => join_node(JoinKind::Inner, left, item.plan, vec![], &self.cols),
            });
        }
        Ok(plan.unwrap_or_else(Logical::unit))
    }

    fn join_tree(&mut self, twj: &A::TableWithJoins) -> Result<FromItem> {
        let mut left = self.factor(&twj.relation)?;
        for j in &twj.joins {
            left = self.nested(|b| b.join(left, j))?;
        }
        Ok(left)
    }

    fn join(&mut self, mut left: FromItem, j: &A::Join) -> Result<FromItem> {
        use A::JoinOperator as J;
        let (kind, constraint) = match &j.join_operator {
            J::Join(c) | J::Inner(c) => (JoinKind::Inner, Some(c)),
            J::Left(c) | J::LeftOuter(c) => (JoinKind::Left, Some(c)),
            J::Right(c) | J::RightOuter(c) => (JoinKind::Right, Some(c)),
            J::FullOuter(c) => (JoinKind::Full, Some(c)),
            J::CrossJoin(_) => (JoinKind::Inner, None),
            other => {
                return err(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{}\"", join_word(other)),
                )
            }
        };
        // The right side of a RIGHT or FULL join cannot be LATERAL to the
        // left one (PostgreSQL: "The combining JOIN type must be INNER or
        // LEFT for a LATERAL reference.").
        let hide = matches!(kind, JoinKind::Right | JoinKind::Full).then(|| {
            self.scope()
                .on_visible
                .replace(left.rels.end..left.rels.end)
        });
        let right = self.factor(&j.relation);
        if let Some(saved) = hide {
            self.scope().on_visible = saved;
        }
        let mut right = right?;
        let constraint = match constraint {
            Some(A::JoinConstraint::None) | None => None,
            Some(c) => Some(c),
        };
        let mut on = Vec::new();
        let mut star: Vec<ColumnId> = Vec::new();
        let mut merged: Option<ScopeRel> = None;
        let mut plan_above: Vec<(ColumnId, tusk_exec::Expr)> = Vec::new();
        // ON subqueries that read both sides (inner joins only): applied
        // above the join, with the conjuncts that read them.
        let mut above_on: (Vec<super::PendingApply>, Vec<tusk_exec::Expr>) = Default::default();
        match constraint {
            None => {
                if !matches!(j.join_operator, J::CrossJoin(_)) {
                    return err(sqlstate::SYNTAX_ERROR, "syntax error at end of input");
                }
                star.extend(&left.star);
                star.extend(&right.star);
            }
            Some(A::JoinConstraint::On(e)) => {
                let mut ctx = ExprCtx::new("JOIN conditions");
                let saved = self
                    .scope()
                    .on_visible
                    .replace(left.rels.start..right.rels.end);
                let p = self.predicate(e, &mut ctx, "JOIN/ON");
                self.scope().on_visible = saved;
                let p = p?;
                crate::logical::conjuncts(p, &mut on);
                above_on = place_on_subqueries(kind, &mut left, &mut right, ctx.applies, &mut on)?;
                star.extend(&left.star);
                star.extend(&right.star);
            }
            Some(c @ (A::JoinConstraint::Using(_) | A::JoinConstraint::Natural)) => {
                let names: Vec<String> = match c {
                    A::JoinConstraint::Using(ns) => ns
                        .iter()
                        .map(|n| object_name(n).map(|q| q.name))
                        .collect::<Result<_>>()?,
                    _ => {
                        // NATURAL: the names the two sides share, in left order.
                        let rnames: Vec<String> = self.visible_names(&right);
                        self.visible_names(&left)
                            .into_iter()
                            .filter(|n| rnames.contains(n))
                            .collect()
                    }
                };
                let mut mcols = Vec::new();
                let (mut lused, mut rused) = (Vec::new(), Vec::new());
                for name in &names {
                    if mcols.iter().any(|c: &ScopeCol| &c.name == name) {
                        return err(
                            sqlstate::DUPLICATE_COLUMN,
                            format!(
                                "column name \"{name}\" appears more than once in USING clause"
                            ),
                        );
                    }
                    let l = self.side_column(&left, name, "left")?;
                    let r = self.side_column(&right, name, "right")?;
                    let lb = super::B::known(self.col_expr(l));
                    let rb = super::B::known(self.col_expr(r));
                    let eq = self.binary(lb, &A::BinaryOperator::Eq, rb)?;
                    on.push(eq.e);
                    let id = match kind {
                        JoinKind::Right => r,
                        JoinKind::Full => {
                            let lb = super::B::known(self.col_expr(l));
                            let rb = super::B::known(self.col_expr(r));
                            let t = self.common_type_of(&[&lb, &rb], "JOIN/USING")?;
                            let id = self.column(name, SqlType::of(t), None);
                            plan_above.push((
                                id,
                                super::coalesce(vec![
                                    super::cast(self.col_expr(l), t),
                                    super::cast(self.col_expr(r), t),
                                ]),
                            ));
                            id
                        }
                        _ => l,
                    };
                    mcols.push(ScopeCol {
                        name: name.clone(),
                        id,
                        hidden: false,
                    });
                    lused.push(l);
                    rused.push(r);
                }
                // Hide the sides' own columns of the merged names.
                for rel in left.rels.start..right.rels.end {
                    for c in &mut self.scope().rels[rel].cols {
                        if names.contains(&c.name) {
                            c.hidden = true;
                        }
                    }
                }
                star.extend(mcols.iter().map(|c| c.id));
                star.extend(left.star.iter().filter(|c| !lused.contains(c)));
                star.extend(right.star.iter().filter(|c| !rused.contains(c)));
                merged = Some(ScopeRel {
                    alias: None,
                    cols: mcols,
                });
            }
            Some(_) => unreachable!("None was handled above"),
        }
        let mut plan = join_node(kind, left.plan, right.plan, on, &self.cols);
        if !above_on.0.is_empty() {
            for a in above_on.0 {
                plan = Logical::Apply {
                    input: Box::new(plan),
                    subquery: Box::new(a.subquery),
                    kind: a.kind,
                    out: a.out,
                };
            }
            if let Some(f) = crate::logical::and_all(above_on.1) {
                plan = plan.filter(f);
            }
        }
        if !plan_above.is_empty() {
            let mut exprs: Vec<(ColumnId, tusk_exec::Expr)> = plan
                .output()
                .into_iter()
                .map(|c| (c, self.col_expr(c)))
                .collect();
            exprs.extend(plan_above);
            plan = Logical::Project {
                input: Box::new(plan),
                exprs,
            };
        }
        let end = {
            let scope = self.scope();
            if let Some(m) = merged {
                scope.rels.push(m);
            }
            scope.rels.len()
        };
        Ok(FromItem {
            plan,
            rels: left.rels.start..end,
            star,
        })
    }

    /// Names an item's relations show to unqualified lookup, in order.
    fn visible_names(&mut self, item: &FromItem) -> Vec<String> {
        let mut out = Vec::new();
        for rel in item.rels.clone() {
            for c in &self.scope().rels[rel].cols {
                if !c.hidden && !out.contains(&c.name) {
                    out.push(c.name.clone());
                }
            }
        }
        out
    }

    /// The column `name` of one side of a USING join.
    fn side_column(&mut self, item: &FromItem, name: &str, side: &str) -> Result<ColumnId> {
        let mut hits = Vec::new();
        for rel in item.rels.clone() {
            for c in &self.scope().rels[rel].cols {
                if c.name == name && !c.hidden && !hits.contains(&c.id) {
                    hits.push(c.id);
                }
            }
        }
        match hits.as_slice() {
            [id] => Ok(*id),
            [] => err(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column \"{name}\" specified in USING clause does not exist in {side} table"
                ),
            ),
            _ => err(
                sqlstate::AMBIGUOUS_COLUMN,
                format!("common column name \"{name}\" appears more than once in {side} table"),
            ),
        }
    }

    /// Pushes one relation into the scope, checking that its name is new.
    pub(super) fn push_rel(
        &mut self,
        alias: &str,
        cols: Vec<ScopeCol>,
    ) -> Result<std::ops::Range<usize>> {
        let scope = self.scope();
        if scope.rels.iter().any(|r| r.alias.as_deref() == Some(alias)) {
            return err(
                sqlstate::DUPLICATE_OBJECT,
                format!("table name \"{alias}\" specified more than once"),
            );
        }
        scope.rels.push(ScopeRel {
            alias: Some(alias.to_string()),
            cols,
        });
        let n = scope.rels.len();
        Ok(n - 1..n)
    }

    fn alias_parts(&self, alias: &Option<A::TableAlias>) -> Result<(Option<String>, Vec<String>)> {
        match alias {
            None => Ok((None, vec![])),
            Some(a) => Ok((
                Some(ident(&a.name)?),
                a.columns
                    .iter()
                    .map(|c| ident(&c.name))
                    .collect::<Result<_>>()?,
            )),
        }
    }

    fn factor(&mut self, tf: &A::TableFactor) -> Result<FromItem> {
        match tf {
            A::TableFactor::Table {
                name,
                alias,
                args,
                with_ordinality,
                ..
            } => {
                let (alias_name, alias_cols) = self.alias_parts(alias)?;
                if let Some(fargs) = args {
                    let call = super::table_func::TableCall::of(name, &fargs.args)?;
                    return self.table_functions(
                        vec![call],
                        alias_name,
                        alias_cols,
                        *with_ordinality,
                    );
                }
                let q = object_name(name)?;
                if q.schema.is_none() {
                    if let Some(item) =
                        self.cte_reference(&q.name, alias_name.clone(), &alias_cols)?
                    {
                        return Ok(item);
                    }
                }
                self.table(name, alias_name, alias_cols)
            }
            A::TableFactor::Function {
                name,
                args,
                alias,
                with_ordinality,
                ..
            } => {
                let (alias_name, alias_cols) = self.alias_parts(alias)?;
                let call = super::table_func::TableCall::of(name, args)?;
                self.table_functions(vec![call], alias_name, alias_cols, *with_ordinality)
            }
            A::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => {
                let (alias_name, alias_cols) = self.alias_parts(alias)?;
                let call = super::table_func::TableCall {
                    name: "unnest".into(),
                    args: array_exprs.iter().collect(),
                };
                self.table_functions(vec![call], alias_name, alias_cols, *with_ordinality)
            }
            A::TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                let (alias_name, alias_cols) = self.alias_parts(alias)?;
                let Some(alias_name) = alias_name else {
                    return err(
                        sqlstate::SYNTAX_ERROR,
                        "subquery in FROM must have an alias",
                    )
                    .map_err(|e: SqlError| {
                        e.with_hint("For example, FROM (SELECT ...) [AS] foo.")
                    });
                };
                // Without LATERAL the FROM list's other items are out of
                // reach (outer queries' are not).
                let saved = (!*lateral).then(|| self.scope().on_visible.replace(0..0));
                let sub = self.subquery(subquery);
                if let Some(saved) = saved {
                    self.scope().on_visible = saved;
                }
                let sub = sub?;
                let names = self.rename(&alias_name, &sub.names, &alias_cols)?;
                // A subquery's untyped output columns become text here.
                let cols: Vec<ScopeCol> = sub
                    .out
                    .iter()
                    .zip(names)
                    .map(|(&id, name)| ScopeCol {
                        name,
                        id,
                        hidden: false,
                    })
                    .collect();
                let star = sub.out.clone();
                let rels = self.push_rel(&alias_name, cols)?;
                Ok(FromItem {
                    plan: sub.plan,
                    rels,
                    star,
                })
            }
            A::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return err(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "aliases on parenthesized joins are not supported",
                    );
                }
                self.nested(|b| b.join_tree(table_with_joins))
            }
            other => err(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{other}\""),
            ),
        }
    }

    /// Column names after an alias list (`AS t(a, b)`) renames the first ones.
    pub(super) fn rename(
        &self,
        alias: &str,
        names: &[String],
        alias_cols: &[String],
    ) -> Result<Vec<String>> {
        if alias_cols.len() > names.len() {
            return err(
                sqlstate::INVALID_COLUMN_REFERENCE,
                format!(
                    "table \"{alias}\" has {} columns available but {} columns specified",
                    names.len(),
                    alias_cols.len()
                ),
            );
        }
        let mut out = names.to_vec();
        for (n, a) in out.iter_mut().zip(alias_cols) {
            *n = a.clone();
        }
        Ok(out)
    }

    fn table(
        &mut self,
        name: &A::ObjectName,
        alias: Option<String>,
        alias_cols: Vec<String>,
    ) -> Result<FromItem> {
        // pg_catalog comes first in every search path.
        let q = object_name(name)?;
        if let Some(def) = crate::catalog::lookup(q.schema.as_deref(), &q.name) {
            return self.system_relation(def, alias, alias_cols);
        }
        if let Some(s) = q
            .schema
            .as_deref()
            .filter(|s| crate::catalog::is_system_schema(s))
        {
            return err(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{s}.{}\" does not exist", q.name),
            );
        }
        let relname = crate::names::user_relation_name(name)?;
        let table = match self.catalog.table(&relname) {
            Some(t) => t.clone(),
            None => {
                // Named as written: `relation "public.nosuch"` when qualified.
                let written = match &q.schema {
                    Some(s) => format!("{s}.{}", q.name),
                    None => relname,
                };
                return Err(SqlError::coded(
                    sqlstate::UNDEFINED_TABLE,
                    format!("relation \"{written}\" does not exist"),
                )
                .at_span(name.span()));
            }
        };
        let aliased = alias.is_some();
        let alias = alias.unwrap_or_else(|| relname.clone());
        if table.is_sequence() {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("reading sequence \"{relname}\" as a table is not supported"),
            )
            .with_hint("Use currval(), nextval() or the pg_sequences view.")
            .at_span(name.span()));
        }
        if let Some(sql) = &table.view {
            let renamed = alias_cols.len();
            let item = self.view(&table, sql, alias, alias_cols)?;
            let own_names = table.columns.iter().skip(renamed);
            let ids: Vec<(ColumnId, String)> = item.star[renamed..]
                .iter()
                .zip(own_names)
                .map(|(&id, c)| (id, c.name.clone()))
                .collect();
            self.note_relation(name, table.oid, aliased, ids);
            return Ok(item);
        }
        let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        let names = self.rename(&alias, &names, &alias_cols)?;
        let mut cols = Vec::with_capacity(names.len());
        let mut ids = Vec::with_capacity(names.len());
        let mut sources = Vec::new();
        for (i, (c, n)) in table.columns.iter().zip(names).enumerate() {
            let id = self.column(&n, c.ty, Some(&alias));
            if i >= alias_cols.len() {
                sources.push((id, c.name.clone()));
            }
            ids.push(id);
            cols.push(ScopeCol {
                name: n,
                id,
                hidden: false,
            });
        }
        let rels = self.push_rel(&alias, cols)?;
        self.note_relation(name, table.oid, aliased, sources);
        Ok(FromItem {
            plan: Logical::Get {
                table,
                alias,
                cols: ids.clone(),
                tid: None,
            },
            rels,
            star: ids,
        })
    }

    /// A system relation (`pg_catalog.pg_class`): a scan of its computed
    /// rows.
    fn system_relation(
        &mut self,
        def: &'static crate::catalog::RelationDef,
        alias: Option<String>,
        alias_cols: Vec<String>,
    ) -> Result<FromItem> {
        let alias = alias.unwrap_or_else(|| def.name.to_string());
        let names: Vec<String> = def.columns.iter().map(|(n, _)| n.to_string()).collect();
        let names = self.rename(&alias, &names, &alias_cols)?;
        let mut cols = Vec::with_capacity(names.len());
        let mut ids = Vec::with_capacity(names.len());
        for ((_, ty), n) in def.columns.iter().zip(names) {
            let id = self.column(&n, *ty, Some(&alias));
            ids.push(id);
            cols.push(ScopeCol {
                name: n,
                id,
                hidden: false,
            });
        }
        let rels = self.push_rel(&alias, cols)?;
        Ok(FromItem {
            plan: Logical::TableFunc {
                func: TableFunction::System(def),
                args: vec![],
                alias,
                cols: ids.clone(),
            },
            rels,
            star: ids,
        })
    }

    /// A view: its query bound in a scope of its own (it sees no column of
    /// the query that names it), its columns named and typed as stored.
    fn view(
        &mut self,
        def: &TableDef,
        sql: &str,
        alias: String,
        alias_cols: Vec<String>,
    ) -> Result<FromItem> {
        let stmts =
            sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
                .map_err(|e| crate::parse::syntax_error(sql, &e))?;
        let Some(A::Statement::Query(q)) = stmts.into_iter().next() else {
            return err(
                sqlstate::DATA_CORRUPTED,
                format!("the definition of view \"{}\" is not a query", def.name),
            );
        };
        let outer = std::mem::take(&mut self.scopes);
        self.pause_references(true);
        // Names in the view's own text are not in the query string.
        let sub = self.subquery(&q).map_err(SqlError::without_location);
        self.pause_references(false);
        self.scopes = outer;
        let sub = sub?;
        if sub.out.len() != def.columns.len() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "view \"{}\" no longer matches its definition (its tables changed)",
                    def.name
                ),
            );
        }
        let types: Vec<DataType> = def.columns.iter().map(|c| c.ty.data_type()).collect();
        let plan = self.cast_outputs(sub.plan, &sub.out, &types)?;
        let out = plan.output();
        let names: Vec<String> = def.columns.iter().map(|c| c.name.clone()).collect();
        let names = self.rename(&alias, &names, &alias_cols)?;
        let cols: Vec<ScopeCol> = out
            .iter()
            .zip(names)
            .map(|(&id, name)| ScopeCol {
                name,
                id,
                hidden: false,
            })
            .collect();
        let rels = self.push_rel(&alias, cols)?;
        Ok(FromItem {
            plan,
            rels,
            star: out,
        })
    }
}

fn join_word(op: &A::JoinOperator) -> &'static str {
    match op {
        A::JoinOperator::Semi(_) | A::JoinOperator::LeftSemi(_) | A::JoinOperator::RightSemi(_) => {
            "SEMI"
        }
        A::JoinOperator::Anti(_) | A::JoinOperator::LeftAnti(_) | A::JoinOperator::RightAnti(_) => {
            "ANTI"
        }
        A::JoinOperator::CrossApply | A::JoinOperator::OuterApply => "APPLY",
        _ => "JOIN",
    }
}
