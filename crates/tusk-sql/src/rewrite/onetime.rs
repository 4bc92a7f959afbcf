//! One-time filters: a conjunct that reads no column of the rows it
//! filters gates the whole join tree instead of filtering its rows.
//!
//! PostgreSQL's `distribute_qual_to_rels` calls a qual *pseudoconstant*
//! when it reads no column of its query level and calls no volatile
//! function. Unless it is below an outer join, such a qual goes to the
//! top of the query's join tree, and `create_gating_plan` puts a Result
//! node with a `One-Time Filter` over the whole join: the filter is
//! evaluated once, before anything below runs, and when it is not true
//! nothing below runs at all. So in
//!
//! ```sql
//! SELECT * FROM a JOIN b ON (1 > ALL (SELECT x FROM t)) WHERE a.y / a.y = 1
//! ```
//!
//! the division is never evaluated when the `ALL` is false: PostgreSQL
//! raises no division by zero, and neither may tusk. A pseudoconstant
//! conjunct may read uncorrelated subqueries (InitPlans, and `ANY`/`ALL`
//! SubPlans whose left side is constant); their `Apply` nodes move into
//! the filter's `init`, which computes them once for the filter.
//!
//! ## Regions
//!
//! The join tree of a query block — a *region* here — starts at a filter,
//! an Apply or a join, and takes in the projections (FROM subqueries,
//! which PostgreSQL pulls up), filters, Apply nodes and joins below it,
//! through the sides of joins whose rows are never NULL-extended: both
//! sides of an inner join, the preserved side of a left or right join,
//! the outer side of semi, anti, mark and lateral joins. The gating
//! conjuncts of a region's filters and inner joins' conditions are taken
//! out, and one [`Logical::OneTimeFilter`] over the region's top tests them
//! all. Everything else — an aggregation's input, set operation arms,
//! subqueries, the nullable side of an outer join (PostgreSQL gates quals
//! below an outer join at their own level) — is a region of its own. An
//! outer join's own condition is never a gate: it decides which rows are
//! NULL-extended, not whether there are any.
//!
//! Constant conjuncts are left to constant folding and push-down, which
//! turn `false` into an empty relation; this pass runs after decorrelation
//! (which keeps the subqueries it can gate as Apply nodes) and before
//! push-down.

use crate::logical::{and_all, conjuncts, expr_columns, ColumnId, JoinKind, Logical, SubqueryKind};
use std::collections::{HashMap, HashSet};
use tusk_exec::Expr;

/// Gives every region of the tree its one-time filter, where it has
/// gating conjuncts.
pub fn one_time_filters(plan: Logical) -> Logical {
    let mut reads = HashMap::new();
    count_reads(&plan, &mut reads);
    place(plan, &reads)
}

/// How many times each column is read by the expressions of the tree.
fn count_reads(plan: &Logical, reads: &mut HashMap<ColumnId, usize>) {
    plan.for_each_expr(&mut |e| {
        for c in expr_columns(e) {
            *reads.entry(c).or_default() += 1;
        }
    });
    for c in plan.children() {
        count_reads(c, reads);
    }
}

fn starts_region(plan: &Logical) -> bool {
    matches!(
        plan,
        Logical::Filter { .. }
            | Logical::Apply { .. }
            | Logical::Join { .. }
            | Logical::DependentJoin { .. }
    )
}

/// A region node's children: `(inside the region, outside it)`. A node
/// that is not part of a region has all its children outside.
fn split_children(plan: &mut Logical) -> (Vec<&mut Logical>, Vec<&mut Logical>) {
    match plan {
        Logical::Filter { input, .. } | Logical::Project { input, .. } => (vec![input], vec![]),
        Logical::Apply {
            input, subquery, ..
        } => (vec![input], vec![subquery]),
        Logical::Join {
            kind, left, right, ..
        } => match kind {
            JoinKind::Inner => (vec![left, right], vec![]),
            JoinKind::Right | JoinKind::RightSemi | JoinKind::RightAnti => {
                (vec![right], vec![left])
            }
            JoinKind::Full => (vec![], vec![left, right]),
            JoinKind::Left | JoinKind::Semi | JoinKind::Anti | JoinKind::Mark { .. } => {
                (vec![left], vec![right])
            }
        },
        Logical::DependentJoin { left, right, .. } => (vec![left], vec![right]),
        other => (vec![], other.children_mut()),
    }
}

/// Whether `plan` is an Apply whose value does not depend on the row it is
/// computed for: a subquery without outer references, and for `ANY`/`ALL`
/// a test that reads nothing but the subquery's columns.
fn uncorrelated_apply(plan: &Logical) -> Option<ColumnId> {
    let Logical::Apply {
        subquery,
        kind,
        out,
        ..
    } = plan
    else {
        return None;
    };
    let uncorrelated = match kind {
        SubqueryKind::Any { test }
        | SubqueryKind::All { test }
        | SubqueryKind::RowCompare { test } => {
            super::decorrelate::reads_no_outer_column(subquery, test)
        }
        SubqueryKind::Scalar | SubqueryKind::Exists => subquery.free_columns().is_empty(),
    };
    uncorrelated.then_some(*out)
}

fn place(mut plan: Logical, reads: &HashMap<ColumnId, usize>) -> Logical {
    if !starts_region(&plan) {
        for c in plan.children_mut() {
            let taken = std::mem::replace(c, Logical::unit());
            *c = place(taken, reads);
        }
        return plan;
    }
    // The regions that hang off this one first (they are independent).
    place_outside(&mut plan, reads);
    let mut claimable = HashSet::new();
    collect_claimable(&mut plan, &mut claimable);
    let mut gates = Vec::new();
    take_gates(&mut plan, &claimable, reads, &mut gates);
    if gates.is_empty() {
        return plan;
    }
    let claimed: HashSet<ColumnId> = gates.iter().flat_map(expr_columns).collect();
    let mut applies = Vec::new();
    take_applies(&mut plan, &claimed, &mut applies);
    let mut init = Logical::unit();
    for (subquery, kind, out) in applies.into_iter().rev() {
        init = Logical::Apply {
            input: Box::new(init),
            subquery: Box::new(subquery),
            kind,
            out,
        };
    }
    Logical::OneTimeFilter {
        input: Box::new(plan),
        init: Box::new(init),
        predicate: and_all(gates).expect("a gating conjunct"),
    }
}

/// Places the one-time filters of the regions that hang off the region
/// `plan` belongs to (below `plan`).
fn place_outside(plan: &mut Logical, reads: &HashMap<ColumnId, usize>) {
    let (inside, outside) = split_children(plan);
    for c in outside {
        let taken = std::mem::replace(c, Logical::unit());
        *c = place(taken, reads);
    }
    for c in inside {
        place_outside(c, reads);
    }
}

/// Visits the region nodes of the region `plan` starts (or continues).
fn region_nodes(plan: &mut Logical, f: &mut dyn FnMut(&mut Logical)) {
    if !(starts_region(plan) || matches!(plan, Logical::Project { .. })) {
        return;
    }
    f(plan);
    for c in split_children(plan).0 {
        region_nodes(c, f);
    }
}

fn collect_claimable(plan: &mut Logical, claimable: &mut HashSet<ColumnId>) {
    region_nodes(plan, &mut |n| claimable.extend(uncorrelated_apply(n)));
}

/// Whether conjunct `c` gates: it reads nothing but the values of
/// uncorrelated subqueries of the region (which nothing else reads), calls
/// no volatile function, and is not a constant.
fn gates(c: &Expr, claimable: &HashSet<ColumnId>, reads: &HashMap<ColumnId, usize>) -> bool {
    if matches!(c, Expr::Const { .. }) || c.is_volatile() {
        return false;
    }
    let cols = expr_columns(c);
    cols.iter().all(|x| {
        claimable.contains(x) && reads.get(x) == Some(&cols.iter().filter(|y| *y == x).count())
    })
}

/// Takes the gating conjuncts out of the region's filters and inner join
/// conditions, below before above (the order PostgreSQL distributes a
/// join's ON before the WHERE clause above it).
fn take_gates(
    plan: &mut Logical,
    claimable: &HashSet<ColumnId>,
    reads: &HashMap<ColumnId, usize>,
    out: &mut Vec<Expr>,
) {
    if !(starts_region(plan) || matches!(plan, Logical::Project { .. })) {
        return;
    }
    for c in split_children(plan).0 {
        take_gates(c, claimable, reads, out);
    }
    match plan {
        Logical::Filter { input, predicate } => {
            let mut cs = Vec::new();
            conjuncts(predicate.clone(), &mut cs);
            let (gating, rest): (Vec<Expr>, Vec<Expr>) =
                cs.into_iter().partition(|c| gates(c, claimable, reads));
            if gating.is_empty() {
                return;
            }
            out.extend(gating);
            *plan = match and_all(rest) {
                Some(p) => Logical::Filter {
                    input: std::mem::replace(input, Box::new(Logical::unit())),
                    predicate: p,
                },
                None => std::mem::replace(input.as_mut(), Logical::unit()),
            };
        }
        Logical::Join {
            kind: JoinKind::Inner,
            on,
            ..
        } => {
            let (gating, rest): (Vec<Expr>, Vec<Expr>) = std::mem::take(on)
                .into_iter()
                .partition(|c| gates(c, claimable, reads));
            *on = rest;
            out.extend(gating);
        }
        _ => {}
    }
}

/// Takes the Apply nodes whose values are `claimed` out of the region,
/// outermost first.
fn take_applies(
    plan: &mut Logical,
    claimed: &HashSet<ColumnId>,
    out: &mut Vec<(Logical, SubqueryKind, ColumnId)>,
) {
    while let Logical::Apply { out: o, .. } = plan {
        if !claimed.contains(o) {
            break;
        }
        let Logical::Apply {
            input,
            subquery,
            kind,
            out: o,
        } = std::mem::replace(plan, Logical::unit())
        else {
            unreachable!("an Apply, as matched above")
        };
        out.push((*subquery, kind, o));
        *plan = *input;
    }
    if !(starts_region(plan) || matches!(plan, Logical::Project { .. })) {
        return;
    }
    for c in split_children(plan).0 {
        take_applies(c, claimed, out);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::logical::Columns;
    use tusk_exec::expr::CmpOp;
    use tusk_exec::Value;
    use tusk_storage::{DataType, SqlType};

    pub(crate) fn int(cols: &mut Columns, name: &str) -> ColumnId {
        cols.add(name, SqlType::of(DataType::Int4), None)
    }

    /// One row of `col`.
    pub(crate) fn values(col: ColumnId) -> Logical {
        Logical::Values {
            rows: vec![vec![Expr::constant(Value::Int4(1), DataType::Int4)]],
            cols: vec![col],
        }
    }

    fn gt_one(cols: &Columns, c: ColumnId) -> Expr {
        Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(cols.expr(c)),
            right: Box::new(Expr::constant(Value::Int4(1), DataType::Int4)),
        }
    }

    /// `a <kind> JOIN b ON (SELECT s) > 1 WHERE a > 1` as the binder builds
    /// it (the subquery's Apply on the left side), and the ids of `a` and
    /// the subquery's value.
    fn join_on_subquery(kind: JoinKind) -> (Columns, Logical, ColumnId, ColumnId) {
        let mut cols = Columns::default();
        let (a, b, s, out) = (
            int(&mut cols, "a"),
            int(&mut cols, "b"),
            int(&mut cols, "s"),
            int(&mut cols, "out"),
        );
        let left = Logical::Apply {
            input: Box::new(values(a)),
            subquery: Box::new(values(s)),
            kind: SubqueryKind::Scalar,
            out,
        };
        let join = Logical::Join {
            kind,
            left: Box::new(left),
            right: Box::new(values(b)),
            on: vec![gt_one(&cols, out)],
            mark: None,
        };
        let plan = join.filter(gt_one(&cols, a));
        (cols, plan, a, out)
    }

    /// Under an inner join the ON conjunct gates the join, and its
    /// subquery moves into the gate's init.
    #[test]
    fn an_uncorrelated_subquery_conjunct_gates_the_join() {
        let (cols, plan, _, out) = join_on_subquery(JoinKind::Inner);
        let plan = one_time_filters(plan);
        let Logical::OneTimeFilter {
            input,
            init,
            predicate,
        } = plan
        else {
            panic!("a one-time filter at the top: {plan:?}")
        };
        assert_eq!(predicate, gt_one(&cols, out));
        assert!(matches!(*init, Logical::Apply { out: o, .. } if o == out));
        let Logical::Filter { input: join, .. } = *input else {
            panic!("the WHERE clause stays")
        };
        assert!(matches!(
            *join,
            Logical::Join { ref left, ref on, .. } if on.is_empty() && matches!(**left, Logical::Values { .. })
        ));
    }

    /// A conjunct that reads a row's column, or a left join's condition,
    /// never gates.
    #[test]
    fn row_conjuncts_and_outer_join_conditions_stay() {
        let (_, plan, _, _) = join_on_subquery(JoinKind::Left);
        let plan = one_time_filters(plan);
        assert!(matches!(plan, Logical::Filter { .. }), "{plan:?}");
    }
}
