//! Subquery decorrelation: `Apply` nodes become joins where the subquery's
//! shape allows, as PostgreSQL's `pull_up_sublinks` does for EXISTS and IN
//! and as Neumann and Kemper's unnesting does for scalar aggregates.
//!
//! The subquery of an `Apply` is *pullable* when its outer references all
//! sit in conjuncts of filters along a chain of filters and projections
//! above an uncorrelated core. Those conjuncts become the join condition:
//!
//! | subquery | becomes |
//! |---|---|
//! | `EXISTS (q)` | mark join on the correlated conjuncts |
//! | `x IN (q)`, `x op ANY (q)`, uncorrelated, `x` reading the input | null-aware mark join on the comparison |
//! | `x IN (q)`, correlated, used as a plain WHERE conjunct | semi join on conjuncts and comparison |
//! | `(SELECT agg(..) FROM q WHERE inner = outer)`, nothing in `q` or `agg` able to fail | left join to `q` grouped by the inner keys |
//!
//! A WHERE conjunct that is just a mark column then turns its mark join
//! into a semi join, and `NOT mark` of a join that is not null-aware into
//! an anti join (`semi_anti`). Everything else stays an `Apply` and runs as
//! a SubPlan: correct for any correlation, one execution per outer row.
//!
//! Why a correlated `IN` only becomes a semi join in WHERE: `IN` may be
//! NULL (a NULL comparison and no match), while a join condition cannot
//! tell a comparison's NULL from a correlation predicate's NULL (which
//! only excludes the row). In a WHERE conjunct NULL and false both drop
//! the row, so the difference does not matter there.

use crate::logical::exprs::replace_columns;
use crate::logical::{
    and_all, conjuncts, expr_columns, ColumnId, Columns, JoinKind, Logical, SubqueryKind,
};
use std::collections::{BTreeSet, HashSet};
use tusk_exec::expr::CmpOp;
use tusk_exec::plan::AggFunc;
use tusk_exec::{Expr, Value};

/// Decorrelates every Apply of the tree, bottom up.
pub fn decorrelate(plan: Logical, cols: &mut Columns) -> Logical {
    decorrelate_under(plan, cols, &HashSet::new())
}

/// [`decorrelate`] for a node whose values in `failing` are read by a
/// filter conjunct right above it (through other Applies) that can raise
/// an error. A scalar subquery whose value such a conjunct reads stays a
/// SubPlan: PostgreSQL tests the conjunct on every row of its relation,
/// with NULL (or the aggregate of no rows) where no inner row matches,
/// while the left join it would become is made inner by that conjunct
/// (it rejects NULLs), which drops those rows before the conjunct runs
/// (`(SELECT min(s.x) ... WHERE s.k = a.k) <= a.y / a.y` fails for the
/// row of `a` with `y = 0` and no match only in PostgreSQL).
fn decorrelate_under(plan: Logical, cols: &mut Columns, failing: &HashSet<ColumnId>) -> Logical {
    let mut plan = plan;
    let below: HashSet<ColumnId> = match &plan {
        Logical::Filter { predicate, .. } => {
            let mut cs = Vec::new();
            conjuncts(predicate.clone(), &mut cs);
            cs.iter()
                .filter(|c| !c.cannot_raise())
                .flat_map(expr_columns)
                .collect()
        }
        Logical::Apply { .. } => failing.clone(),
        _ => HashSet::new(),
    };
    let is_apply = matches!(plan, Logical::Apply { .. });
    for (i, c) in plan.children_mut().into_iter().enumerate() {
        let taken = std::mem::replace(c, Logical::unit());
        // An Apply's input continues the chain; its subquery does not.
        let through = if !is_apply || i == 0 {
            &below
        } else {
            &HashSet::new()
        };
        *c = decorrelate_under(taken, cols, through);
    }
    let plan = match plan {
        Logical::Apply {
            input,
            subquery,
            kind: SubqueryKind::Scalar,
            out,
        } if failing.contains(&out) => Logical::Apply {
            input,
            subquery,
            kind: SubqueryKind::Scalar,
            out,
        },
        Logical::Apply {
            input,
            subquery,
            kind,
            out,
        } => rewrite_apply(*input, *subquery, kind, out, cols),
        other => other,
    };
    semi_anti(plan)
}

fn rewrite_apply(
    input: Logical,
    subquery: Logical,
    kind: SubqueryKind,
    out: ColumnId,
    cols: &mut Columns,
) -> Logical {
    let free = subquery.free_columns();
    let keep = |input: Logical, subquery: Logical, kind: SubqueryKind| Logical::Apply {
        input: Box::new(input),
        subquery: Box::new(subquery),
        kind,
        out,
    };
    match kind {
        SubqueryKind::Exists => {
            if free.is_empty() {
                // An uncorrelated EXISTS is one SubPlan run (an InitPlan).
                return keep(input, subquery, SubqueryKind::Exists);
            }
            match pull_correlated(subquery.clone(), &free) {
                Some((core, preds)) => mark_join(input, core, preds, out, false),
                None => keep(input, subquery, SubqueryKind::Exists),
            }
        }
        SubqueryKind::Any { test } => {
            if reads_no_outer_column(&subquery, &test) {
                return keep(input, subquery, SubqueryKind::Any { test });
            }
            if free.is_empty() {
                let mut on = Vec::new();
                conjuncts(test, &mut on);
                return mark_join(input, subquery, on, out, true);
            }
            // Correlated: a semi join if it turns out to be a WHERE
            // conjunct (see `semi_anti`), else a SubPlan.
            keep(input, subquery, SubqueryKind::Any { test })
        }
        SubqueryKind::Scalar => {
            match scalar_aggregate(input.clone(), subquery.clone(), out, &free, cols) {
                Some(p) => p,
                None => keep(input, subquery, SubqueryKind::Scalar),
            }
        }
        k @ (SubqueryKind::All { .. } | SubqueryKind::RowCompare { .. }) => {
            keep(input, subquery, k)
        }
    }
}

/// Whether `lhs op ANY (subquery)` (or `ALL`) with test `test` reads no
/// column of the query around it (`5 IN (SELECT ...)`). That is not a join: PostgreSQL's
/// `convert_ANY_sublink_to_join` needs the test to read the outer query.
/// It stays a SubPlan, which a WHERE clause tests once (`onetime`).
pub(crate) fn reads_no_outer_column(subquery: &Logical, test: &Expr) -> bool {
    let inner = subquery.output();
    subquery.free_columns().is_empty() && expr_columns(test).iter().all(|c| inner.contains(c))
}

/// Drops the select lists of every EXISTS subquery of the tree (the
/// projections at the subquery's top). EXISTS asks only whether a row comes
/// out, so, as PostgreSQL's `simplify_EXISTS_query` does before any
/// constant folding, the list is never evaluated (`exists (select 1 / 0
/// ...)` raises nothing), and the columns only the list named (`select *`)
/// are neither read nor carried into a join's hash table. Runs first.
pub fn simplify_exists(plan: &mut Logical) {
    for c in plan.children_mut() {
        simplify_exists(c);
    }
    if let Logical::Apply {
        subquery,
        kind: SubqueryKind::Exists,
        ..
    } = plan
    {
        let taken = std::mem::replace(subquery.as_mut(), Logical::unit());
        **subquery = without_target_list(taken);
    }
}

fn without_target_list(plan: Logical) -> Logical {
    match plan {
        Logical::Project { input, .. } => without_target_list(*input),
        other => other,
    }
}

fn mark_join(
    input: Logical,
    right: Logical,
    on: Vec<Expr>,
    out: ColumnId,
    null_aware: bool,
) -> Logical {
    Logical::Join {
        kind: JoinKind::Mark { null_aware },
        left: Box::new(input),
        right: Box::new(right),
        on,
        mark: Some(out),
    }
}

/// Splits a subquery into an uncorrelated core and the correlated conjuncts
/// of the filters above it; `None` if an outer reference appears anywhere
/// else (a projection, an aggregate, a join, below a limit).
fn pull_correlated(plan: Logical, free: &BTreeSet<ColumnId>) -> Option<(Logical, Vec<Expr>)> {
    let refs_free = |e: &Expr| expr_columns(e).iter().any(|c| free.contains(c));
    match plan {
        Logical::Filter { input, predicate } => {
            let (core, mut preds) = pull_correlated(*input, free)?;
            let mut cs = Vec::new();
            conjuncts(predicate, &mut cs);
            let (corr, local): (Vec<Expr>, Vec<Expr>) = cs.into_iter().partition(refs_free);
            preds.extend(corr);
            let core = match and_all(local) {
                Some(p) => core.filter(p),
                None => core,
            };
            Some((core, preds))
        }
        Logical::Project { input, exprs } => {
            if exprs.iter().any(|(_, e)| refs_free(e)) {
                return None;
            }
            let (core, preds) = pull_correlated(*input, free)?;
            // The pulled predicates may read columns the projection drops:
            // keep every input column visible above the projection.
            let mut exprs = exprs;
            let have: HashSet<ColumnId> = exprs.iter().map(|(c, _)| *c).collect();
            for c in core.output() {
                if !have.contains(&c) {
                    exprs.push((
                        c,
                        Expr::Column {
                            index: c,
                            ty: col_type(&core, c),
                        },
                    ));
                }
            }
            Some((
                Logical::Project {
                    input: Box::new(core),
                    exprs,
                },
                preds,
            ))
        }
        Logical::Distinct { input, on: None } => {
            // EXISTS/IN do not care about duplicates.
            pull_correlated(*input, free)
        }
        other => {
            if other.free_columns().iter().any(|c| free.contains(c)) {
                None
            } else {
                Some((other, Vec::new()))
            }
        }
    }
}

/// The type of column `c` as some expression of `plan` reads it (falls back
/// to the column registry's view through a search of the plan's exprs).
fn col_type(plan: &Logical, c: ColumnId) -> tusk_storage::DataType {
    let mut found = None;
    fn walk(p: &Logical, c: ColumnId, found: &mut Option<tusk_storage::DataType>) {
        if found.is_some() {
            return;
        }
        p.for_each_expr(&mut |e| {
            find_col(e, c, found);
        });
        if let Logical::Project { exprs, .. } = p {
            for (id, e) in exprs {
                if *id == c {
                    *found = Some(e.data_type());
                }
            }
        }
        if let Logical::Get { table, cols, .. } = p {
            if let Some(i) = cols.iter().position(|x| *x == c) {
                *found = Some(table.columns[i].ty.data_type());
            }
        }
        for ch in p.children() {
            walk(ch, c, found);
        }
    }
    fn find_col(e: &Expr, c: ColumnId, found: &mut Option<tusk_storage::DataType>) {
        if let Expr::Column { index, ty } = e {
            if *index == c {
                *found = Some(*ty);
            }
        }
        e.for_each_child(|x| find_col(x, c, found));
    }
    walk(plan, c, &mut found);
    found.unwrap_or(tusk_storage::DataType::Int4)
}

/// `(SELECT agg(x) FROM q WHERE q.k = outer.k AND ...)` as a left join of
/// the input with `q` grouped by `q.k`. Only equalities between an inner
/// column and an outer expression may correlate; `count` becomes
/// `coalesce(count, 0)` because an outer row without inner rows gets the
/// aggregate of an empty set, not NULL.
fn scalar_aggregate(
    input: Logical,
    subquery: Logical,
    out: ColumnId,
    free: &BTreeSet<ColumnId>,
    cols: &mut Columns,
) -> Option<Logical> {
    if free.is_empty() {
        return None;
    }
    // Shape: Project([single expr over agg results]) over Aggregate(no group).
    let Logical::Project {
        input: agg_node,
        exprs,
    } = subquery
    else {
        return None;
    };
    // The join aggregates every inner row, where PostgreSQL's SubPlan
    // aggregates only those an outer row's parameters select, and only for
    // the outer rows that reach it: the same outcome only when no row can
    // make the aggregate or what it reads fail.
    if exprs.len() != 1 || !agg_node.cannot_raise() {
        return None;
    }
    let Logical::Aggregate {
        input: agg_input,
        group,
        aggs,
    } = *agg_node
    else {
        return None;
    };
    if !group.is_empty()
        || aggs
            .iter()
            .any(|(_, a)| a.distinct || !a.order_by.is_empty())
    {
        return None;
    }
    let (core, preds) = pull_correlated(*agg_input, free)?;
    // Every correlated predicate: inner column = outer expression.
    let core_out: HashSet<ColumnId> = core.output().into_iter().collect();
    let mut keys = Vec::new();
    for p in &preds {
        let Expr::Cmp {
            op: CmpOp::Eq,
            left,
            right,
        } = p
        else {
            return None;
        };
        let inner_side =
            |e: &Expr| matches!(e, Expr::Column { index, .. } if core_out.contains(index));
        let outer_side = |e: &Expr| expr_columns(e).iter().all(|c| free.contains(c));
        if inner_side(left) && outer_side(right) {
            keys.push(((**left).clone(), (**right).clone()));
        } else if inner_side(right) && outer_side(left) {
            keys.push(((**right).clone(), (**left).clone()));
        } else {
            return None;
        }
    }
    // Group the core by the inner key columns.
    let mut group_cols = Vec::new();
    let mut on = Vec::new();
    for (inner, outer) in keys {
        let Expr::Column { index, ty } = inner else {
            unreachable!("checked above")
        };
        let info = cols.get(index).clone();
        let g = cols.add(info.name.clone(), info.ty, None);
        group_cols.push((g, Expr::Column { index, ty }));
        on.push(Expr::Cmp {
            op: CmpOp::Eq,
            left: Box::new(outer),
            right: Box::new(Expr::Column { index: g, ty }),
        });
    }
    let counts: Vec<ColumnId> = aggs
        .iter()
        .filter(|(_, a)| matches!(a.func, AggFunc::CountStar | AggFunc::Count))
        .map(|(id, _)| *id)
        .collect();
    let grouped = Logical::Aggregate {
        input: Box::new(core),
        group: group_cols,
        aggs: aggs.clone(),
    };
    let joined = Logical::Join {
        kind: JoinKind::Left,
        left: Box::new(input.clone()),
        right: Box::new(grouped),
        on,
        mark: None,
    };
    // out = the select expression with counts of missing groups as 0.
    let (_, select_expr) = exprs.into_iter().next().unwrap();
    let select_expr = crate::logical::exprs::replace_columns(select_expr, &|c| {
        counts.contains(&c).then(|| {
            Expr::Coalesce(vec![
                Expr::Column {
                    index: c,
                    ty: tusk_storage::DataType::Int8,
                },
                Expr::Const {
                    value: Value::Int8(0),
                    ty: tusk_storage::DataType::Int8,
                },
            ])
        })
    });
    let mut proj: Vec<(ColumnId, Expr)> = input
        .output()
        .into_iter()
        .map(|c| {
            (
                c,
                Expr::Column {
                    index: c,
                    ty: cols.ty(c),
                },
            )
        })
        .collect();
    proj.push((out, select_expr));
    Some(Logical::Project {
        input: Box::new(joined),
        exprs: proj,
    })
}

/// Turns mark joins whose mark is a plain WHERE conjunct into semi joins
/// (and `NOT mark`, for joins that are not null-aware, into anti joins);
/// likewise a pullable correlated `IN` Apply used as a plain conjunct.
///
/// The converted join no longer produces its mark, yet other conjuncts
/// may still read it: folding can leave the same sublink both alone and
/// inside an OR (`(x IN (q), c) NOT IN ((false, 1), (false, NULL))` keeps
/// `mark OR c <> 1` beside `mark`). Every row the semi join passes has
/// the mark true (false for the anti join), so those conjuncts read that
/// constant instead, folded again.
fn semi_anti(plan: Logical) -> Logical {
    let Logical::Filter { input, predicate } = plan else {
        return plan;
    };
    let mut cs = Vec::new();
    conjuncts(predicate, &mut cs);
    let mut input = *input;
    let mut rest = Vec::new();
    let mut converted: Vec<(ColumnId, bool)> = Vec::new();
    for c in cs {
        let (mark, negated) = match &c {
            Expr::Column { index, .. } => (*index, false),
            Expr::Not(inner) => match inner.as_ref() {
                Expr::Column { index, .. } => (*index, true),
                _ => {
                    rest.push(c);
                    continue;
                }
            },
            _ => {
                rest.push(c);
                continue;
            }
        };
        match convert_mark(input, mark, negated) {
            (next, true) => {
                input = next;
                converted.push((mark, !negated));
            }
            (next, false) => {
                input = next;
                rest.push(c);
            }
        }
    }
    if !converted.is_empty() {
        rest = rest
            .into_iter()
            .map(|c| with_converted_marks(c, &converted))
            .collect();
    }
    match and_all(rest) {
        Some(p) => input.filter(p),
        None => input,
    }
}

/// `c` reading each converted mark as the value it has on every row the
/// converted join passes, folded again where that folds without error (an
/// error stays for the rows to raise, as they would have).
fn with_converted_marks(c: Expr, converted: &[(ColumnId, bool)]) -> Expr {
    if !expr_columns(&c)
        .iter()
        .any(|col| converted.iter().any(|(m, _)| m == col))
    {
        return c;
    }
    let replaced = replace_columns(c, &|index| {
        converted
            .iter()
            .find(|(m, _)| *m == index)
            .map(|&(_, value)| Expr::Const {
                value: Value::Bool(value),
                ty: tusk_storage::DataType::Bool,
            })
    });
    replaced.clone().fold().unwrap_or(replaced)
}

/// Finds the join or Apply producing `mark` along the input's spine of
/// joins/applies/filters and converts it; returns whether it did.
fn convert_mark(plan: Logical, mark: ColumnId, negated: bool) -> (Logical, bool) {
    match plan {
        Logical::Join {
            kind: JoinKind::Mark { null_aware },
            left,
            right,
            on,
            mark: Some(m),
        } if m == mark => {
            if negated && null_aware {
                return (
                    Logical::Join {
                        kind: JoinKind::Mark { null_aware },
                        left,
                        right,
                        on,
                        mark: Some(m),
                    },
                    false,
                );
            }
            (
                Logical::Join {
                    kind: if negated {
                        JoinKind::Anti
                    } else {
                        JoinKind::Semi
                    },
                    left,
                    right,
                    on,
                    mark: None,
                },
                true,
            )
        }
        Logical::Apply {
            input,
            subquery,
            kind: SubqueryKind::Any { test },
            out,
        } if out == mark && !negated && !reads_no_outer_column(&subquery, &test) => {
            let free = subquery.free_columns();
            match pull_correlated((*subquery).clone(), &free) {
                Some((core, mut preds)) => {
                    conjuncts(test, &mut preds);
                    (
                        Logical::Join {
                            kind: JoinKind::Semi,
                            left: input,
                            right: Box::new(core),
                            on: preds,
                            mark: None,
                        },
                        true,
                    )
                }
                None => (
                    Logical::Apply {
                        input,
                        subquery,
                        kind: SubqueryKind::Any { test },
                        out,
                    },
                    false,
                ),
            }
        }
        Logical::Join {
            kind,
            left,
            right,
            on,
            mark: m,
        } if matches!(kind, JoinKind::Mark { .. }) => {
            let (l, done) = convert_mark(*left, mark, negated);
            (
                Logical::Join {
                    kind,
                    left: Box::new(l),
                    right,
                    on,
                    mark: m,
                },
                done,
            )
        }
        Logical::Apply {
            input,
            subquery,
            kind,
            out,
        } => {
            let (i, done) = convert_mark(*input, mark, negated);
            (
                Logical::Apply {
                    input: Box::new(i),
                    subquery,
                    kind,
                    out,
                },
                done,
            )
        }
        other => (other, false),
    }
}
