//! One SELECT block, built in the order SQL defines its meaning:
//! FROM, WHERE, GROUP BY with the aggregates, HAVING, window functions,
//! the select list, DISTINCT, ORDER BY. (LIMIT is the query's.)
//!
//! The select list, HAVING and ORDER BY are bound against the FROM scope
//! with aggregate and window calls replaced by references to their result
//! columns; for a grouped query they are then rewritten over the group
//! columns (`grouping`), which is where an ungrouped column is caught.
//! ORDER BY items that are not output columns become hidden columns of the
//! projection, sorted on and then dropped.

use super::grouping::{regroup, Grouping};
use super::{err, Binder, ExprCtx, Result, B};
use crate::error::sqlstate;
use crate::logical::{ColumnId, JoinKind, Logical};
use crate::names::ident;
use crate::types::sql_type;
use sqlparser::ast::{self as A, Spanned};
use tusk_exec::plan::SortKey;
use tusk_exec::Expr;
use tusk_storage::SqlType;

use super::query::BoundQuery;

/// A select-list item after `*` expansion.
struct Item {
    b: B,
    name: String,
}

impl Binder<'_> {
    pub(crate) fn select(
        &mut self,
        s: &A::Select,
        order: &[&A::OrderByExpr],
    ) -> Result<BoundQuery> {
        if s.into.is_some() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "SELECT ... INTO is not supported",
            );
        }
        if s.top.is_some() || s.qualify.is_some() {
            return err(sqlstate::SYNTAX_ERROR, "syntax error in SELECT");
        }
        let mut projection = s.projection.clone();
        super::named_windows::resolve(&s.named_window, &mut projection)?;
        let srf_calls = super::srf::take_select_list_srfs(&mut projection)?;
        // FROM, then the select list, then WHERE: PostgreSQL's order, which
        // decides which error a query with several reports.
        let mut plan = self.bind_from_list(&s.from)?;
        let mut ctx = ExprCtx::new("SELECT");
        ctx.allow_aggs = true;
        ctx.allow_windows = true;
        let mut srf_sets = Vec::with_capacity(srf_calls.len());
        for (level, calls) in srf_calls.iter().enumerate() {
            srf_sets.push(self.select_list_sets(calls, level, &mut ctx)?);
        }
        let items = self.select_items(&projection, &mut ctx)?;
        if let Some(w) = &s.selection {
            let mut ctx = ExprCtx::new("WHERE");
            let p = self.predicate(w, &mut ctx, "WHERE")?;
            plan = ctx.apply_to(plan).filter(p);
        }
        // GROUP BY items are bound first (they may name output aliases).
        let group_items = match &s.group_by {
            A::GroupByExpr::Expressions(es, mods) => {
                if !mods.is_empty() {
                    return err(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "GROUP BY modifiers are not supported",
                    );
                }
                es.clone()
            }
            A::GroupByExpr::All(_) => {
                return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"ALL\"")
            }
        };
        let names: Vec<String> = items.iter().map(|i| i.name.clone()).collect();
        let agg_ids: Vec<ColumnId> = ctx.aggs.iter().map(|(id, _)| *id).collect();
        let (group, sets) = self.group_by(&group_items, &names, &items, &agg_ids)?;
        for g in &group {
            super::func::check_equality(g.data_type())?;
        }
        let having = match &s.having {
            Some(h) => {
                ctx.clause = "HAVING";
                ctx.allow_windows = false;
                let b = self.expr(h, &mut ctx)?;
                ctx.allow_windows = true;
                Some(self.bool_operand(b, "HAVING")?)
            }
            None => None,
        };
        // ORDER BY: output columns by ordinal or name, else expressions.
        ctx.clause = "ORDER BY";
        let mut order_refs: Vec<OrderRef> = Vec::new();
        let distinct = s.distinct.as_ref();
        for o in order {
            order_refs.push(self.order_item(o, &names, &items, &mut ctx)?);
        }
        let distinct_on: Option<Vec<B>> = match distinct {
            Some(A::Distinct::On(es)) => {
                ctx.clause = "DISTINCT ON";
                let mut v = Vec::new();
                for e in es {
                    v.push(match constant_position(e, "DISTINCT ON", names.len())? {
                        Some(k) => items[k].b.clone(),
                        None => self.expr(e, &mut ctx)?,
                    });
                }
                Some(v)
            }
            _ => None,
        };
        // Aggregation.
        let grouped = !group.is_empty()
            || !ctx.aggs.is_empty()
            || having.is_some()
            || sets.is_some()
            || !ctx.groupings.is_empty();
        let mut grouping = None;
        if grouped {
            let input = pre_agg(&mut ctx, plan);
            let groupings = std::mem::take(&mut ctx.groupings);
            let g = self.aggregate(input, group, sets, std::mem::take(&mut ctx.aggs), groupings)?;
            plan = g.0;
            for p in &mut ctx.applies {
                super::grouping::regroup_apply(self, p, &g.1)?;
            }
            grouping = Some(g.1);
        } else if !ctx.pre_agg_applies.is_empty() {
            plan = pre_agg(&mut ctx, plan);
        }
        let fix = |this: &Self, e: Expr| -> Result<Expr> {
            match &grouping {
                Some(g) => regroup(this, e, g),
                None => Ok(e),
            }
        };
        if let Some(h) = having {
            let h = fix(self, h)?;
            plan = ctx.apply_to(plan).filter(h);
        }
        // Window functions over the grouped rows.
        if grouping.is_some() && !ctx.windows.is_empty() {
            // Report an ungrouped column in select-list order, as PostgreSQL
            // does: each item, then the window calls it contains.
            for it in &items {
                fix(self, it.b.e.clone())?;
                let used = crate::logical::expr_columns(&it.b.e);
                for (_, c) in ctx.windows.iter().filter(|(id, _)| used.contains(id)) {
                    let mut exprs = c.args.iter().chain(&c.filter).chain(&c.partition);
                    exprs.try_for_each(|e| fix(self, e.clone()).map(drop))?;
                    for k in &c.order {
                        fix(self, k.expr.clone())?;
                    }
                }
            }
        }
        if !ctx.windows.is_empty() {
            let mut calls = std::mem::take(&mut ctx.windows);
            for (_, c) in &mut calls {
                for a in &mut c.args {
                    *a = fix(self, a.clone())?;
                }
                if let Some(x) = &mut c.filter {
                    *x = fix(self, x.clone())?;
                }
                for p in &mut c.partition {
                    *p = fix(self, p.clone())?;
                }
                for k in &mut c.order {
                    k.expr = fix(self, k.expr.clone())?;
                }
            }
            plan = Logical::Window {
                input: Box::new(plan),
                calls,
            };
        }
        plan = ctx.apply_to(plan);
        // The select list's set-returning calls (ProjectSet), over the rows
        // the select list sees.
        for mut level in srf_sets {
            for a in &mut level.args {
                *a = fix(self, a.clone())?;
            }
            // Always run per row, in row order (never reordered as a cross
            // join could be), as a ProjectSet runs.
            plan = Logical::DependentJoin {
                kind: JoinKind::Inner,
                left: Box::new(plan),
                right: Box::new(level.scan()),
                on: vec![],
            };
        }
        // The projection: one new column per item, plus hidden sort columns.
        let mut exprs: Vec<(ColumnId, Expr)> = Vec::new();
        let mut out = Vec::new();
        let mut unknown = Vec::new();
        for it in &items {
            let e = fix(self, it.b.e.clone())?;
            let ty = if it.b.unknown {
                SqlType::Text
            } else {
                self.output_type(&e)
            };
            let id = self.column(&it.name, ty, None);
            exprs.push((id, e));
            out.push(id);
            unknown.push(it.b.unknown);
        }
        let mut keys: Vec<SortKey> = Vec::new();
        for r in order_refs {
            match r {
                OrderRef::Output(k, o) => {
                    let b = B::known(self.col_expr(out[k]));
                    keys.push(super::func::sort_key(self, b, o)?);
                }
                OrderRef::Expr(b, o) => {
                    if distinct.is_some_and(|d| matches!(d, A::Distinct::Distinct)) {
                        return err(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                        );
                    }
                    let e = fix(self, self.resolve_unknown_text(b)?)?;
                    // Reuse an identical output column rather than a hidden copy.
                    let id = match exprs.iter().find(|(_, x)| *x == e) {
                        Some((id, _)) => *id,
                        None => {
                            let ty = self.output_type(&e);
                            let id = self.column("?column?", ty, None);
                            exprs.push((id, e));
                            id
                        }
                    };
                    keys.push(super::func::sort_key(self, B::known(self.col_expr(id)), o)?);
                }
            }
        }
        let hidden = exprs.len() > out.len();
        plan = Logical::Project {
            input: Box::new(plan),
            exprs: exprs.clone(),
        };
        match distinct {
            Some(A::Distinct::Distinct) => {
                if hidden {
                    return err(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                    );
                }
                for e in &exprs {
                    super::func::check_equality(e.1.data_type())?;
                }
                plan = Logical::Distinct {
                    input: Box::new(plan),
                    on: None,
                };
            }
            Some(A::Distinct::On(_)) => {
                let on: Vec<Expr> = distinct_on
                    .unwrap_or_default()
                    .into_iter()
                    .map(|b| self.resolve_unknown_text(b).and_then(|e| fix(self, e)))
                    .collect::<Result<_>>()?;
                // DISTINCT ON keys refer to the projection's inputs; express
                // them over its outputs when they are output columns.
                let on: Vec<Expr> = on
                    .into_iter()
                    .map(|e| match exprs.iter().find(|(_, x)| *x == e) {
                        Some((id, _)) => Ok(self.col_expr(*id)),
                        None => err(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "DISTINCT ON expressions must appear in the select list",
                        ),
                    })
                    .collect::<Result<_>>()?;
                // PostgreSQL requires ORDER BY to start with the DISTINCT ON keys.
                for (k, e) in keys.iter().zip(&on) {
                    if k.expr != *e {
                        return err(
                            sqlstate::INVALID_COLUMN_REFERENCE,
                            "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                        );
                    }
                }
                let mut sort = keys.clone();
                for e in &on {
                    if !sort.iter().any(|k| k.expr == *e) {
                        sort.push(SortKey {
                            expr: e.clone(),
                            desc: false,
                            nulls_first: false,
                        });
                    }
                }
                plan = Logical::Sort {
                    input: Box::new(plan),
                    keys: sort,
                };
                plan = Logical::Distinct {
                    input: Box::new(plan),
                    on: Some(on),
                };
            }
            Some(A::Distinct::All) | None => {}
        }
        if !keys.is_empty() {
            plan = Logical::Sort {
                input: Box::new(plan),
                keys,
            };
        }
        if hidden {
            plan = Logical::Project {
                input: Box::new(plan),
                exprs: out.iter().map(|&id| (id, self.col_expr(id))).collect(),
            };
        }
        Ok(BoundQuery {
            plan,
            out,
            names,
            unknown,
        })
    }

    /// The SQL type an output column gets: a plain column reference keeps
    /// its column's modifier (`varchar(10)`), as does a cast to a type with
    /// one (`x::numeric(6,2)`); anything else gets the bare type.
    fn output_type(&self, e: &Expr) -> SqlType {
        match e {
            Expr::Column { index, .. } if *index < self.cols.len() => self.cols.get(*index).ty,
            Expr::Typmod { ty, .. } => *ty,
            e => SqlType::of(e.data_type()),
        }
    }

    fn select_items(
        &mut self,
        projection: &[A::SelectItem],
        ctx: &mut ExprCtx,
    ) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        for it in projection {
            match it {
                A::SelectItem::UnnamedExpr(e) => {
                    let b = self.expr(e, ctx)?;
                    let name = figure_colname(e);
                    match e {
                        A::Expr::Identifier(i) => self.note_output_name(i, &name),
                        A::Expr::CompoundIdentifier(parts) => {
                            if let Some(last) = parts.last() {
                                self.note_output_name(last, &name);
                            }
                        }
                        _ => {}
                    }
                    items.push(Item { b, name });
                }
                A::SelectItem::ExprWithAlias { expr, alias } => {
                    let b = self.expr(expr, ctx)?;
                    items.push(Item {
                        b,
                        name: ident(alias)?,
                    });
                }
                A::SelectItem::Wildcard(options) => {
                    let star = self.scope().star.clone();
                    if star.is_empty() && self.scope().rels.is_empty() {
                        return err(
                            sqlstate::SYNTAX_ERROR,
                            "SELECT * with no tables specified is not valid",
                        );
                    }
                    let mut expanded = Vec::with_capacity(star.len());
                    for id in star {
                        let name = self.scope_name_of(id);
                        expanded.push((self.scope_qualifier_of(id), name.clone()));
                        items.push(Item {
                            b: B::known(self.col_expr(id)),
                            name,
                        });
                    }
                    self.note_star(options.wildcard_token.0.span, &expanded);
                }
                A::SelectItem::QualifiedWildcard(kind, options) => {
                    let A::SelectItemQualifiedWildcardKind::ObjectName(n) = kind else {
                        return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \".*\"");
                    };
                    let q = crate::names::object_name(n)?;
                    let cols = self.relation_columns(&q.name)?;
                    let mut expanded = Vec::with_capacity(cols.len());
                    for (name, id) in cols {
                        expanded.push((Some(q.name.clone()), name.clone()));
                        items.push(Item {
                            b: B::known(self.col_expr(id)),
                            name,
                        });
                    }
                    let span = n.span().union(&options.wildcard_token.0.span);
                    self.note_star(span, &expanded);
                }
                A::SelectItem::ExprWithAliases { .. } => {
                    return err(sqlstate::SYNTAX_ERROR, "syntax error in select list")
                }
            }
        }
        Ok(items)
    }

    /// The name a column has in the current scope (for `*`).
    fn scope_name_of(&mut self, id: ColumnId) -> String {
        for rel in &self.scope().rels {
            if let Some(c) = rel.cols.iter().find(|c| c.id == id) {
                return c.name.clone();
            }
        }
        self.cols.get(id).name.clone()
    }

    /// The name that qualifies column `id` in the current scope: its
    /// relation's alias, or none for a column merged by `JOIN ... USING`.
    fn scope_qualifier_of(&mut self, id: ColumnId) -> Option<String> {
        self.scope()
            .rels
            .iter()
            .find(|rel| rel.cols.iter().any(|c| c.id == id))
            .and_then(|rel| rel.alias.clone())
    }

    /// The columns of relation `alias` for `alias.*`, searching outward.
    fn relation_columns(&self, alias: &str) -> Result<Vec<(String, ColumnId)>> {
        for scope in self.scopes.iter().rev() {
            if let Some(rel) = scope
                .rels
                .iter()
                .find(|r| r.alias.as_deref() == Some(alias))
            {
                return Ok(rel.cols.iter().map(|c| (c.name.clone(), c.id)).collect());
            }
        }
        err(
            sqlstate::UNDEFINED_TABLE,
            format!("missing FROM-clause entry for table \"{alias}\""),
        )
    }

    /// The position of an output column named by an ordinal or alias.
    fn order_item<'o>(
        &mut self,
        o: &'o A::OrderByExpr,
        names: &[String],
        items: &[Item],
        ctx: &mut ExprCtx,
    ) -> Result<OrderRef<'o>> {
        if let Some(k) = constant_position(&o.expr, "ORDER BY", items.len())? {
            return Ok(OrderRef::Output(k, o));
        }
        if let A::Expr::Identifier(i) = &o.expr {
            let name = ident(i)?;
            let hits: Vec<usize> = (0..names.len()).filter(|&k| names[k] == name).collect();
            if let Some(&first) = hits.first() {
                let same = hits.iter().all(|&k| items[k].b.e == items[first].b.e);
                if !same {
                    return err(
                        sqlstate::AMBIGUOUS_COLUMN,
                        format!("ORDER BY \"{name}\" is ambiguous"),
                    );
                }
                return Ok(OrderRef::Output(first, o));
            }
        }
        let b = self.expr(&o.expr, ctx)?;
        Ok(OrderRef::Expr(b, o))
    }

    /// GROUP BY: the distinct group expressions, and the grouping sets as
    /// lists of positions in them (`None` without ROLLUP, CUBE or GROUPING
    /// SETS). Several items multiply their sets, as in PostgreSQL.
    fn group_by(
        &mut self,
        group_items: &[A::Expr],
        names: &[String],
        items: &[Item],
        agg_ids: &[ColumnId],
    ) -> Result<(Vec<Expr>, Option<GroupingSets>)> {
        let mut out: Vec<Expr> = Vec::new();
        let mut sets: Vec<Vec<usize>> = vec![vec![]];
        let mut any_sets = false;
        for g in group_items {
            let item_sets: Vec<Vec<usize>> = match g {
                A::Expr::Rollup(lists) | A::Expr::Cube(lists) | A::Expr::GroupingSets(lists) => {
                    any_sets = true;
                    let mut elems = Vec::new();
                    for list in lists {
                        let mut idx = Vec::new();
                        for e in list {
                            // A nested ROLLUP/CUBE is not supported.
                            let x = self.group_item(e, names, items, agg_ids)?;
                            idx.push(intern(&mut out, x));
                        }
                        elems.push(idx);
                    }
                    match g {
                        A::Expr::Rollup(_) => (0..=elems.len())
                            .rev()
                            .map(|k| elems[..k].concat())
                            .collect(),
                        A::Expr::Cube(_) => {
                            if elems.len() > 12 {
                                return err(
                                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                                    "CUBE is limited to 12 elements",
                                );
                            }
                            let n = elems.len();
                            (0..1u32 << n)
                                .rev()
                                .map(|mask| {
                                    (0..n)
                                        .filter(|i| mask & (1 << (n - 1 - i)) != 0)
                                        .flat_map(|i| elems[i].clone())
                                        .collect()
                                })
                                .collect()
                        }
                        _ => elems,
                    }
                }
                e => {
                    let x = self.group_item(e, names, items, agg_ids)?;
                    vec![vec![intern(&mut out, x)]]
                }
            };
            let mut next = Vec::with_capacity(sets.len() * item_sets.len());
            for s in &sets {
                for t in &item_sets {
                    let mut u = s.clone();
                    for &i in t {
                        if !u.contains(&i) {
                            u.push(i);
                        }
                    }
                    next.push(u);
                }
            }
            sets = next;
        }
        Ok((out, any_sets.then_some(sets)))
    }

    /// One GROUP BY expression: an ordinal or an output alias names a
    /// select-list expression; a name that is an input column stays that
    /// column (input names win over aliases in GROUP BY, as in PostgreSQL).
    fn group_item(
        &mut self,
        g: &A::Expr,
        names: &[String],
        items: &[Item],
        agg_ids: &[ColumnId],
    ) -> Result<Expr> {
        let mut ctx = ExprCtx::new("GROUP BY");
        let e = match constant_position(g, "GROUP BY", items.len())? {
            Some(k) => {
                let b = &items[k].b;
                let mut cols = Vec::new();
                b.e.columns(&mut cols);
                if cols.iter().any(|c| agg_ids.contains(c)) {
                    return err(
                        sqlstate::GROUPING_ERROR,
                        "aggregate functions are not allowed in GROUP BY",
                    );
                }
                self.resolve_unknown_text(b.clone())?
            }
            None => match g {
                A::Expr::Identifier(i) => {
                    let name = ident(i)?;
                    match self.resolve(None, &name) {
                        Ok(id) => self.col_expr(id),
                        Err(e) if e.code == sqlstate::UNDEFINED_COLUMN => {
                            match names.iter().position(|n| *n == name) {
                                Some(k) => self.resolve_unknown_text(items[k].b.clone())?,
                                None => return Err(e.at_span(i.span)),
                            }
                        }
                        Err(e) => return Err(e),
                    }
                }
                other => {
                    let b = self.expr(other, &mut ctx)?;
                    self.resolve_unknown_text(b)?
                }
            },
        };
        if !ctx.applies.is_empty() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "subqueries in GROUP BY are not supported",
            );
        }
        Ok(e)
    }

    /// The Aggregate node over `input` (with grouping sets, a union of one
    /// aggregation per set over the input computed once), and what
    /// regrouping needs.
    fn aggregate(
        &mut self,
        input: Logical,
        group: Vec<Expr>,
        sets: Option<Vec<Vec<usize>>>,
        aggs: Vec<(ColumnId, tusk_exec::plan::AggCall)>,
        groupings: Vec<(ColumnId, Vec<Expr>)>,
    ) -> Result<(Logical, Grouping)> {
        let mut gcols = Vec::with_capacity(group.len());
        for g in &group {
            let name = match g {
                Expr::Column { index, .. } => self.cols.get(*index).name.clone(),
                _ => "?column?".to_string(),
            };
            let ty = self.output_type(g);
            let id = self.column(&name, ty, None);
            gcols.push((id, g.clone()));
        }
        // GROUPING(args): each argument must be a group expression.
        let mut grouping_args = Vec::new();
        for (_, args) in &groupings {
            let mut pos = Vec::new();
            for a in args {
                match group.iter().position(|g| g == a) {
                    Some(p) => pos.push(p),
                    None => {
                        return err(
                            sqlstate::GROUPING_ERROR,
                            "arguments to GROUPING must be grouping expressions of the associated query level",
                        )
                    }
                }
            }
            grouping_args.push(pos);
        }
        // The select list's set-returning calls run after aggregation (see
        // `srf`): their columns are not FROM columns.
        let from_cols: std::collections::HashSet<ColumnId> = self
            .scope()
            .rels
            .iter()
            .filter(|r| !r.alias.as_deref().is_some_and(super::srf::is_sets_alias))
            .flat_map(|r| r.cols.iter().map(|c| c.id))
            .collect();
        let mut agg_ids: std::collections::HashSet<ColumnId> =
            aggs.iter().map(|(id, _)| *id).collect();
        agg_ids.extend(groupings.iter().map(|(id, _)| *id));
        let all: Vec<usize> = (0..group.len()).collect();
        let plan = match sets {
            None => {
                let plan = Logical::Aggregate {
                    input: Box::new(input),
                    group: gcols.clone(),
                    aggs: aggs.clone(),
                };
                if groupings.is_empty() {
                    plan
                } else {
                    self.grouping_projection(plan, &gcols, &aggs, &groupings, &grouping_args, &all)
                }
            }
            Some(sets) => {
                self.grouping_sets(input, &gcols, &aggs, &groupings, &grouping_args, &sets)
            }
        };
        Ok((
            plan,
            Grouping {
                group: gcols,
                from_cols,
                agg_ids,
            },
        ))
    }

    /// One aggregation per grouping set over the input, stored once as a
    /// CTE, united. Columns a set does not group by are NULL in its rows.
    fn grouping_sets(
        &mut self,
        input: Logical,
        gcols: &[(ColumnId, Expr)],
        aggs: &[(ColumnId, tusk_exec::plan::AggCall)],
        groupings: &[(ColumnId, Vec<Expr>)],
        grouping_args: &[Vec<usize>],
        sets: &[Vec<usize>],
    ) -> Logical {
        let in_cols = input.output();
        let cte = self.ctes.len();
        self.ctes.push(crate::logical::CteDef {
            name: "*GROUPING SETS*".into(),
            plan: input,
            cols: in_cols.clone(),
            recursive: false,
            materialize: sets.len() > 1,
        });
        self.cte_names.push(
            in_cols
                .iter()
                .map(|&c| self.cols.get(c).name.clone())
                .collect(),
        );
        self.cte_refs.push(sets.len());
        let out: Vec<ColumnId> = gcols
            .iter()
            .map(|(id, _)| *id)
            .chain(aggs.iter().map(|(id, _)| *id))
            .chain(groupings.iter().map(|(id, _)| *id))
            .collect();
        let mut branches = Vec::new();
        for set in sets {
            // A fresh reference to the stored input, and the expressions
            // over it.
            let ref_cols: Vec<ColumnId> = in_cols
                .iter()
                .map(|&c| {
                    let info = self.cols.get(c).clone();
                    self.cols.add(info.name, info.ty, info.qualifier)
                })
                .collect();
            let in_types: Vec<tusk_storage::DataType> =
                in_cols.iter().map(|&c| self.cols.ty(c)).collect();
            let remap = |e: &Expr| {
                crate::logical::exprs::replace_columns(e.clone(), &|c| {
                    in_cols.iter().position(|&x| x == c).map(|i| Expr::Column {
                        index: ref_cols[i],
                        ty: in_types[i],
                    })
                })
            };
            let bgroup: Vec<(ColumnId, Expr)> = set
                .iter()
                .map(|&i| {
                    let info = self.cols.get(gcols[i].0).clone();
                    (self.cols.add(info.name, info.ty, None), remap(&gcols[i].1))
                })
                .collect();
            let baggs: Vec<(ColumnId, tusk_exec::plan::AggCall)> = aggs
                .iter()
                .map(|(id, call)| {
                    let info = self.cols.get(*id).clone();
                    let mut call = call.clone();
                    call.args = call.args.iter().map(remap).collect();
                    call.filter = call.filter.as_ref().map(remap);
                    for k in &mut call.order_by {
                        k.expr = remap(&k.expr);
                    }
                    (self.cols.add(info.name, info.ty, None), call)
                })
                .collect();
            let agg = Logical::Aggregate {
                input: Box::new(Logical::CteRef {
                    id: cte,
                    cols: ref_cols.clone(),
                }),
                group: bgroup.clone(),
                aggs: baggs.clone(),
            };
            // Project to the union's layout.
            let mut exprs = Vec::new();
            for (i, (gid, g)) in gcols.iter().enumerate() {
                let id = self.cols.add(
                    self.cols.get(*gid).name.clone(),
                    self.cols.get(*gid).ty,
                    None,
                );
                let e = match set.iter().position(|&k| k == i) {
                    Some(p) => self.col_expr(bgroup[p].0),
                    None => Expr::Const {
                        value: tusk_exec::Value::Null,
                        ty: g.data_type(),
                    },
                };
                exprs.push((id, e));
            }
            for (id, _) in &baggs {
                let nid =
                    self.cols
                        .add(self.cols.get(*id).name.clone(), self.cols.get(*id).ty, None);
                exprs.push((nid, self.col_expr(*id)));
            }
            for args in grouping_args {
                let nid = self.cols.add("grouping", SqlType::Int4, None);
                exprs.push((nid, grouping_bits(args, set)));
            }
            branches.push(Logical::Project {
                input: Box::new(agg),
                exprs,
            });
        }
        let mut it = branches.into_iter();
        let first = it.next().expect("at least one grouping set");
        it.fold(first, |acc, b| Logical::SetOp {
            op: crate::logical::SetOpKind::Union,
            all: true,
            left: Box::new(acc),
            right: Box::new(b),
            out: out.clone(),
        })
    }

    /// GROUPING() results over a plain aggregation (every column grouped).
    fn grouping_projection(
        &mut self,
        plan: Logical,
        gcols: &[(ColumnId, Expr)],
        aggs: &[(ColumnId, tusk_exec::plan::AggCall)],
        groupings: &[(ColumnId, Vec<Expr>)],
        grouping_args: &[Vec<usize>],
        set: &[usize],
    ) -> Logical {
        let mut exprs: Vec<(ColumnId, Expr)> = gcols
            .iter()
            .map(|(id, _)| (*id, self.col_expr(*id)))
            .chain(aggs.iter().map(|(id, _)| (*id, self.col_expr(*id))))
            .collect();
        for ((id, _), args) in groupings.iter().zip(grouping_args) {
            exprs.push((*id, grouping_bits(args, set)));
        }
        Logical::Project {
            input: Box::new(plan),
            exprs,
        }
    }
}

/// GROUPING(args) for the rows of grouping set `set`: bit k (from the
/// right, for the last argument) is set when argument k is not grouped.
fn grouping_bits(args: &[usize], set: &[usize]) -> Expr {
    let mut v = 0i32;
    for &a in args {
        v = (v << 1) | i32::from(!set.contains(&a));
    }
    Expr::Const {
        value: tusk_exec::Value::Int4(v),
        ty: tusk_storage::DataType::Int4,
    }
}

/// Grouping sets as lists of positions in the GROUP BY expressions.
type GroupingSets = Vec<Vec<usize>>;

/// How an ORDER BY item was resolved.
enum OrderRef<'o> {
    /// The select list's item at this position.
    Output(usize, &'o A::OrderByExpr),
    /// An expression over the input.
    Expr(B, &'o A::OrderByExpr),
}

/// The clause's subqueries inside aggregate arguments, applied to `input`.
fn pre_agg(ctx: &mut ExprCtx, mut input: Logical) -> Logical {
    for a in ctx.pre_agg_applies.drain(..) {
        input = Logical::Apply {
            input: Box::new(input),
            subquery: Box::new(a.subquery),
            kind: a.kind,
            out: a.out,
        };
    }
    input
}

/// An ORDER BY / GROUP BY / DISTINCT ON item that is a constant: an
/// integer names the output column at that position (1-based) of a list of
/// `len`; any other constant is an error, as in PostgreSQL's
/// `findTargetlistEntrySQL92`. `-5` is the constant PostgreSQL's grammar
/// makes of it, so `GROUP BY -1` is an out-of-range position; an integer
/// literal too big for `integer` is a non-integer constant, as PostgreSQL's
/// lexer makes it a float. `Ok(None)` when `e` is not a constant.
pub(crate) fn constant_position(e: &A::Expr, clause: &str, len: usize) -> Result<Option<usize>> {
    let (value, negated) = match e {
        A::Expr::Value(v) => (&v.value, false),
        A::Expr::UnaryOp {
            op: A::UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            A::Expr::Value(v) if matches!(v.value, A::Value::Number(..)) => (&v.value, true),
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let position = match value {
        A::Value::Number(s, _) => s.parse::<i32>().ok(),
        A::Value::Placeholder(_) => return Ok(None),
        _ => None,
    };
    let Some(p) = position else {
        return err(
            sqlstate::SYNTAX_ERROR,
            format!("non-integer constant in {clause}"),
        );
    };
    let p = if negated { -(p as i64) } else { p as i64 };
    if p < 1 || p as usize > len {
        return err(
            sqlstate::INVALID_COLUMN_REFERENCE,
            format!("{clause} position {p} is not in select list"),
        );
    }
    Ok(Some(p as usize - 1))
}

/// The position of `e` in `list`, appending it if new.
fn intern(list: &mut Vec<Expr>, e: Expr) -> usize {
    match list.iter().position(|x| *x == e) {
        Some(i) => i,
        None => {
            list.push(e);
            list.len() - 1
        }
    }
}

/// PostgreSQL's `FigureColname`: the name an unaliased select item gets.
pub fn figure_colname(e: &A::Expr) -> String {
    fn figure(e: &A::Expr) -> Option<String> {
        match e {
            A::Expr::Identifier(i) => ident(i).ok(),
            A::Expr::CompoundIdentifier(v) => v.last().and_then(|i| ident(i).ok()),
            A::Expr::Function(f) => f.name.0.last().and_then(|p| match p {
                A::ObjectNamePart::Identifier(i) => ident(i).ok(),
                _ => None,
            }),
            A::Expr::Nested(x) => figure(x),
            A::Expr::Cast {
                expr, data_type, ..
            } => figure(expr).or_else(|| {
                // The type name's last part: an array's is its element's.
                sql_type(data_type).ok().map(|t| match t {
                    SqlType::Varchar(_) => "varchar".to_string(),
                    SqlType::Char(_) => "bpchar".to_string(),
                    t => {
                        let ty = t.data_type();
                        ty.element().unwrap_or(ty).type_name().to_string()
                    }
                })
            }),
            A::Expr::TypedString(ts) => sql_type(&ts.data_type)
                .ok()
                .map(|t| t.data_type().type_name().to_string()),
            A::Expr::Array(_) => Some("array".into()),
            // The last field name of an indirection, else its base's name
            // (subscripts do not name a column).
            A::Expr::CompoundFieldAccess { root, access_chain } => access_chain
                .iter()
                .rev()
                .find_map(|a| match a {
                    A::AccessExpr::Dot(A::Expr::Identifier(i)) => ident(i).ok(),
                    _ => None,
                })
                .or_else(|| figure(root)),
            A::Expr::Case { .. } => Some("case".into()),
            A::Expr::Exists { .. } => Some("exists".into()),
            A::Expr::Subquery(q) => match q.body.as_ref() {
                A::SetExpr::Select(s) => match s.projection.first() {
                    Some(A::SelectItem::UnnamedExpr(e)) if s.projection.len() == 1 => figure(e),
                    Some(A::SelectItem::ExprWithAlias { alias, .. }) if s.projection.len() == 1 => {
                        ident(alias).ok()
                    }
                    _ => None,
                },
                _ => None,
            },
            A::Expr::Extract { .. } => Some("extract".into()),
            A::Expr::Substring { .. } => Some("substring".into()),
            A::Expr::Position { .. } => Some("position".into()),
            A::Expr::Trim { .. } => Some("btrim".into()),
            A::Expr::Ceil { .. } => Some("ceil".into()),
            A::Expr::Floor { .. } => Some("floor".into()),
            A::Expr::Interval(_) => Some("interval".into()),
            A::Expr::InSubquery { .. } | A::Expr::AnyOp { .. } | A::Expr::AllOp { .. } => None,
            _ => None,
        }
    }
    figure(e).unwrap_or_else(|| "?column?".into())
}
