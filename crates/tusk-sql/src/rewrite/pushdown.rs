//! Predicate push-down and outer-join simplification.
//!
//! Filters move as far down as their columns allow: through projections
//! (by substituting the projected expressions), into the sides of inner
//! joins (a conjunct over both sides joins the join condition), through
//! sorts, DISTINCT and Apply nodes whose column they do not read, and below
//! an aggregation when they read only group keys. Conjuncts keep their
//! written order wherever they end up together, so that a conjunct that
//! guards another (`x <> 0 AND 10 / x > 1`) still runs first.
//!
//! A filter above an outer join that rejects NULLs of the nullable side
//! (any strict comparison on its columns) turns the outer join into an
//! inner one — `a LEFT JOIN b ... WHERE b.x = 1` keeps no NULL-extended
//! rows — as PostgreSQL's `reduce_outer_joins` does; then the filter can
//! go down into `b`.
//!
//! A filter that folded to `false` or NULL replaces its input by an empty
//! relation with the same columns, and so does a join with an empty side
//! that it needs (either side of an inner or semi join, the preserved side
//! of an outer one), as PostgreSQL's dummy relations do; so does an inner
//! or semi join whose condition has a `false` or NULL conjunct (PostgreSQL
//! gates the join with it: `(x, NULL) IN (SELECT ...)` evaluates nothing).
//!
//! A subquery the logical plan evaluates apart from the conjuncts (an
//! InitPlan's Apply, or a mark join made of `IN`/`NOT IN`) is a SubPlan in
//! PostgreSQL, tested among the quals of its level in cost order: the
//! conjuncts it would test after it stay above it (`split_at_subplan`,
//! `split_at_mark`), so that their errors are not raised for rows it
//! rejects; a mark join over an inner join first goes down into the side
//! it reads (`mark_join_side`), where PostgreSQL tests it. A subquery's
//! Apply goes down into the relation it and its conjuncts read
//! (`sink_apply`), as PostgreSQL tests a qual over an InitPlan's parameter
//! and one relation, or over a SubPlan correlated on that relation, in that
//! relation's scan.

mod sink_apply;

use crate::logical::{and_all, conjuncts, expr_columns, ColumnId, JoinKind, Logical};
use std::collections::{BTreeSet, HashSet};
use tusk_exec::expr::BoolTest;
use tusk_exec::{Expr, Value};

/// Splits the conjuncts above a subquery that the logical plan evaluates
/// apart from them (an Apply, or a mark join made of an `IN`), whose value
/// is the column `out`, into those that stay above it and those that go
/// below. PostgreSQL evaluates all of them as one qual list in cost order
/// (`order_qual_clauses`), running the subquery as a SubPlan where its
/// conjunct comes, at `subplan_cost` operator evaluations besides the
/// conjunct's own. So the conjuncts ordered before the first that reads
/// `out` go below, and that one and all after it stay in order above: rows
/// a cheaper conjunct rejects never meet a dearer one that could fail, nor
/// rows the subquery's conjunct rejects (`x NOT IN (q) AND 1 / y > 0`).
fn split_at_subplan(cs: Vec<Expr>, out: ColumnId, subplan_cost: f64) -> (Vec<Expr>, Vec<Expr>) {
    let reads_out = |c: &Expr| expr_columns(c).contains(&out);
    let mut ordered =
        crate::physical::cost::order_quals_with(
            cs,
            |c| {
                if reads_out(c) {
                    subplan_cost
                } else {
                    0.0
                }
            },
        );
    let first = ordered.iter().position(reads_out).unwrap_or(ordered.len());
    let stay = ordered.split_off(first);
    (stay, ordered)
}

/// Splits the conjuncts above a mark join over `left` with condition `on`
/// and mark column `mark` into those that stay above it and those that go
/// below, as PostgreSQL orders the SubPlan the mark join stands for among
/// its other quals. PostgreSQL tests a qual at the lowest join level that
/// has every relation it reads ([`Levels`]); so a conjunct over fewer
/// relations than the mark's conjuncts, or over others, runs first (goes
/// below), one over more runs after (stays above), and those over the same
/// relations are ordered by cost with it ([`split_at_subplan`]).
fn split_at_mark(
    left: &Logical,
    on: &[Expr],
    mark: ColumnId,
    null_aware: bool,
    cs: Vec<Expr>,
) -> (Vec<Expr>, Vec<Expr>) {
    let levels = Levels::of(left);
    let reads_mark = |c: &Expr| expr_columns(c).contains(&mark);
    let mut subplan_level = levels.relations(on.iter());
    for c in cs.iter().filter(|c| reads_mark(c)) {
        subplan_level.extend(levels.relations(std::iter::once(c)));
    }
    let (mut down, mut same, mut after) = (vec![], vec![], vec![]);
    for c in cs {
        let rels = levels.relations(std::iter::once(&c));
        if reads_mark(&c) || rels == subplan_level {
            same.push(c);
        } else if rels.is_superset(&subplan_level) {
            after.push(c);
        } else {
            down.push(c);
        }
    }
    let (mut stay, same_down) = split_at_subplan(same, mark, mark_subplan_cost(on, null_aware));
    down.extend(same_down);
    stay.extend(after);
    (stay, down)
}

/// The relations below a join's input, as sets of the columns each
/// contributes: inner and outer joins are split into their sides (and
/// filters looked through), anything else is one relation. A mark
/// column belongs to the relations its join's condition reads.
struct Levels(Vec<HashSet<ColumnId>>);

impl Levels {
    fn of(plan: &Logical) -> Levels {
        let mut rels = Vec::new();
        Self::collect(plan, &mut rels);
        Levels(rels)
    }

    fn collect(plan: &Logical, rels: &mut Vec<HashSet<ColumnId>>) {
        match plan {
            Logical::Filter { input, .. } => Self::collect(input, rels),
            Logical::Join {
                kind: JoinKind::Inner | JoinKind::Left | JoinKind::Right | JoinKind::Full,
                left,
                right,
                ..
            } => {
                Self::collect(left, rels);
                Self::collect(right, rels);
            }
            Logical::Join {
                kind: JoinKind::Semi | JoinKind::Anti,
                left,
                ..
            } => Self::collect(left, rels),
            Logical::Join {
                kind: JoinKind::Mark { .. },
                left,
                on,
                mark,
                ..
            } => {
                let first = rels.len();
                Self::collect(left, rels);
                let on_cols: HashSet<ColumnId> = on.iter().flat_map(expr_columns).collect();
                for r in &mut rels[first..] {
                    if r.iter().any(|c| on_cols.contains(c)) {
                        r.extend(mark.iter().copied());
                    }
                }
            }
            other => rels.push(other.output().into_iter().collect()),
        }
    }

    /// The indexes of the relations that `exprs` read columns of.
    fn relations<'a>(&self, exprs: impl Iterator<Item = &'a Expr>) -> BTreeSet<usize> {
        let cols: HashSet<ColumnId> = exprs.flat_map(expr_columns).collect();
        (0..self.0.len())
            .filter(|&i| self.0[i].iter().any(|c| cols.contains(c)))
            .collect()
    }
}

/// Where a mark join (`kind`, with condition `on`) over `left` belongs when
/// `left` is an inner join whose sides are `(a, b)`: `Some(true)` in `a`,
/// `Some(false)` in `b`, when its condition reads columns of that side
/// only. PostgreSQL tests the SubPlan the mark join stands for with the
/// quals of that side's scan, below the join, and the join keeps its own
/// condition (a mark join left above an inner join would hold the join's
/// keys above it too, as conjuncts PostgreSQL tests after the SubPlan: see
/// [`split_at_mark`]).
fn mark_join_side(kind: JoinKind, left: &Logical, on: &[Expr]) -> Option<bool> {
    let (
        JoinKind::Mark { .. },
        Logical::Join {
            kind: JoinKind::Inner,
            left: a,
            right: b,
            ..
        },
    ) = (kind, left)
    else {
        return None;
    };
    let reads: HashSet<ColumnId> = on.iter().flat_map(expr_columns).collect();
    let reads_side = |side: &Logical| side.output().iter().any(|c| reads.contains(c));
    match (reads_side(a), reads_side(b)) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// What PostgreSQL's `cost_subplan` charges per row, in operator
/// evaluations, for the SubPlan that a mark join with condition `on`
/// stands for. An uncorrelated `IN` (null-aware) is a hashed SubPlan: its
/// comparisons (the `testexpr`) and nothing else. A correlated EXISTS runs
/// the subquery again for each row, which costs at least a page read: more
/// than any expression, so every other conjunct comes before it.
fn mark_subplan_cost(on: &[Expr], null_aware: bool) -> f64 {
    use crate::physical::cost::{eval_cost, CPU_OPERATOR_COST, SEQ_PAGE_COST};
    if null_aware {
        on.iter().map(eval_cost).sum()
    } else {
        SEQ_PAGE_COST / CPU_OPERATOR_COST
    }
}

/// Pushes every filter of the tree down as far as it goes.
pub fn push_down(plan: Logical) -> Logical {
    match plan {
        Logical::Filter { input, predicate } => {
            let mut cs = Vec::new();
            conjuncts(predicate, &mut cs);
            push_conjuncts(*input, cs)
        }
        Logical::Join {
            kind,
            left,
            right,
            on,
            mark,
        } => join(kind, *left, *right, on, mark, Vec::new()),
        mut other => {
            for c in other.children_mut() {
                let taken = std::mem::replace(c, Logical::unit());
                *c = push_down(taken);
            }
            other
        }
    }
}

fn is_false_or_null(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Const {
            value: Value::Bool(false) | Value::Null,
            ..
        }
    )
}

fn is_true(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Const {
            value: Value::Bool(true),
            ..
        }
    )
}

/// An empty relation with `plan`'s output columns.
fn empty_like(plan: &Logical) -> Logical {
    Logical::Values {
        rows: vec![],
        cols: plan.output(),
    }
}

/// Whether `plan` is an empty relation that push-down made, under nodes
/// that produce no row from none.
fn is_empty(plan: &Logical) -> bool {
    match plan {
        Logical::Values { rows, .. } => rows.is_empty(),
        Logical::Project { input, .. }
        | Logical::Filter { input, .. }
        | Logical::Sort { input, .. }
        | Logical::Limit { input, .. }
        | Logical::Distinct { input, .. } => is_empty(input),
        _ => false,
    }
}

fn with_filter(plan: Logical, cs: Vec<Expr>) -> Logical {
    match and_all(cs) {
        Some(p) => plan.filter(p),
        None => plan,
    }
}

fn reads_only(e: &Expr, cols: &HashSet<ColumnId>) -> bool {
    expr_columns(e).iter().all(|c| cols.contains(c))
}

/// Places conjuncts `cs` at or below `plan`.
fn push_conjuncts(plan: Logical, cs: Vec<Expr>) -> Logical {
    let cs: Vec<Expr> = cs.into_iter().filter(|c| !is_true(c)).collect();
    if cs.iter().any(is_false_or_null) {
        let mut p = plan;
        // The subtree never runs; keep its expressions folded but drop it.
        p = push_down(p);
        return empty_like(&p);
    }
    if cs.is_empty() {
        return push_down(plan);
    }
    match plan {
        Logical::Filter { input, predicate } => {
            let mut all = Vec::new();
            conjuncts(predicate, &mut all);
            all.extend(cs);
            push_conjuncts(*input, all)
        }
        Logical::Project { input, exprs } => {
            // Conjuncts over projected expressions that are plain enough
            // (no subquery outputs) are rewritten over the input.
            let map: std::collections::HashMap<ColumnId, Expr> =
                exprs.iter().map(|(c, e)| (*c, e.clone())).collect();
            let input_cols: HashSet<ColumnId> = input.output().into_iter().collect();
            let (down, stay): (Vec<Expr>, Vec<Expr>) = cs.into_iter().partition(|c| {
                expr_columns(c)
                    .iter()
                    .all(|x| map.contains_key(x) || input_cols.contains(x))
            });
            let down: Vec<Expr> = down
                .into_iter()
                .map(|c| crate::logical::exprs::replace_columns(c, &|x| map.get(&x).cloned()))
                .collect();
            let input = push_conjuncts(*input, down);
            with_filter(
                Logical::Project {
                    input: Box::new(input),
                    exprs,
                },
                stay,
            )
        }
        Logical::Join {
            kind,
            left,
            right,
            on,
            mark,
        } => join(kind, *left, *right, on, mark, cs),
        Logical::Sort { input, keys } => Logical::Sort {
            input: Box::new(push_conjuncts(*input, cs)),
            keys,
        },
        // A one-time filter reads no column of its input's rows.
        Logical::OneTimeFilter {
            input,
            init,
            predicate,
        } => Logical::OneTimeFilter {
            input: Box::new(push_conjuncts(*input, cs)),
            init: Box::new(push_down(*init)),
            predicate,
        },
        Logical::Distinct { input, on: None } => Logical::Distinct {
            input: Box::new(push_conjuncts(*input, cs)),
            on: None,
        },
        // Conditions on the left side alone go below a lateral join (its
        // rows are the same either way); the rest stay above.
        Logical::DependentJoin {
            kind,
            left,
            right,
            on,
        } => {
            let lcols: HashSet<ColumnId> = left.output().into_iter().collect();
            let (down, stay): (Vec<Expr>, Vec<Expr>) = cs.into_iter().partition(|c| {
                let cols = expr_columns(c);
                !cols.is_empty() && cols.iter().all(|x| lcols.contains(x))
            });
            let node = Logical::DependentJoin {
                kind,
                left: Box::new(push_conjuncts(*left, down)),
                right: Box::new(push_down(*right)),
                on,
            };
            with_filter(node, stay)
        }
        Logical::Apply {
            input,
            subquery,
            kind,
            out,
        } => {
            let init_plan = sink_apply::is_init_plan(&kind, &subquery);
            let reads = sink_apply::apply_reads(&input, &subquery, &kind, out, &cs);
            if sink_apply::can_sink(&input, &reads, &cs) {
                let apply = sink_apply::SinkingApply {
                    subquery,
                    kind,
                    out,
                };
                return push_conjuncts(sink_apply::sink(*input, apply, &reads, &cs), cs);
            }
            let (stay, down) = if init_plan {
                // An InitPlan's value is a parameter, of cost 0.
                split_at_subplan(cs, out, 0.0)
            } else {
                cs.into_iter().partition(|c| expr_columns(c).contains(&out))
            };
            // The conditions that stay above the subquery still reject
            // the NULL-extended rows of an outer join right below it, as
            // PostgreSQL's reduce_outer_joins sees them: the join is
            // simplified first, so the subquery never runs for such rows.
            let input = match *input {
                Logical::Join {
                    kind,
                    left,
                    right,
                    on,
                    mark,
                } => {
                    let lcols: HashSet<ColumnId> = left.output().into_iter().collect();
                    let rcols: HashSet<ColumnId> = right.output().into_iter().collect();
                    Logical::Join {
                        kind: simplified_kind(kind, &lcols, &rcols, &stay),
                        left,
                        right,
                        on,
                        mark,
                    }
                }
                other => other,
            };
            let node = Logical::Apply {
                input: Box::new(push_conjuncts(input, down)),
                subquery: Box::new(push_down(*subquery)),
                kind,
                out,
            };
            with_filter(node, stay)
        }
        Logical::Aggregate { input, group, aggs } => {
            let gmap: std::collections::HashMap<ColumnId, Expr> =
                group.iter().map(|(c, e)| (*c, e.clone())).collect();
            let gcols: HashSet<ColumnId> = gmap.keys().copied().collect();
            let (down, stay): (Vec<Expr>, Vec<Expr>) = cs.into_iter().partition(|c| {
                let cols = expr_columns(c);
                !cols.is_empty() && cols.iter().all(|x| gcols.contains(x))
            });
            let down: Vec<Expr> = down
                .into_iter()
                .map(|c| crate::logical::exprs::replace_columns(c, &|x| gmap.get(&x).cloned()))
                .collect();
            let node = Logical::Aggregate {
                input: Box::new(push_conjuncts(*input, down)),
                group,
                aggs,
            };
            with_filter(node, stay)
        }
        other => with_filter(push_down(other), cs),
    }
}

/// Whether conjunct `e` can only be true when every column it reads from
/// `cols` is not NULL, and reads at least one: then NULL-extended rows of
/// an outer join fail it.
pub fn rejects_nulls(e: &Expr, cols: &HashSet<ColumnId>) -> bool {
    nulls_make_not_true(e, cols, true)
}

/// The proof behind [`rejects_nulls`], after PostgreSQL's
/// `find_nonnullable_rels`. At the top level the expression only has to
/// fail to be true, so `IS NOT NULL`, `IS TRUE` and one arm of an AND
/// suffice. Below the top level (under NOT, inside an argument) it must
/// come out NULL, which only strict operators guarantee: there an AND or
/// OR needs every arm, and the null tests prove nothing.
fn nulls_make_not_true(e: &Expr, cols: &HashSet<ColumnId>, top: bool) -> bool {
    let strict = |x: &Expr| nulls_make_not_true(x, cols, false);
    match e {
        Expr::Column { index, .. } => cols.contains(index),
        Expr::Arith { first, rest, .. } => strict(first) || rest.iter().any(|(_, x)| strict(x)),
        Expr::Cmp { left, right, .. } => strict(left) || strict(right),
        // A row comparison proves nothing: PostgreSQL's
        // find_nonnullable_rels does not look inside a RowCompareExpr, so
        // `(a.x, 1) >= (1 / b.y, 2)` keeps the outer join and its
        // NULL-extended rows reach the comparison (and its errors).
        Expr::Concat(parts) => parts.iter().any(strict),
        Expr::Like { arg, pattern, .. } | Expr::Regex { arg, pattern, .. } => {
            strict(arg) || strict(pattern)
        }
        Expr::Neg { arg, .. }
        | Expr::Cast { arg, .. }
        | Expr::Typmod { arg, .. }
        | Expr::BpcharToText(arg)
        | Expr::Not(arg) => strict(arg),
        Expr::InList { arg, .. } => strict(arg),
        Expr::And(terms) if top => terms.iter().any(|t| nulls_make_not_true(t, cols, true)),
        Expr::And(terms) => terms.iter().all(strict),
        Expr::Or(terms) => terms.iter().all(|t| nulls_make_not_true(t, cols, top)),
        Expr::Call { func, args, .. } if func.strict() => args.iter().any(strict),
        Expr::IsNull { arg, negated: true } if top => strict(arg),
        Expr::BoolTest {
            arg,
            test: BoolTest::IsTrue | BoolTest::IsFalse | BoolTest::IsNotUnknown,
        } if top => strict(arg),
        _ => false,
    }
}

/// The kind of a join of `kind` whose sides have columns `lcols` and
/// `rcols` under conjuncts `cs` from above: an outer join whose
/// NULL-extended rows they reject is inner (outer-join simplification).
pub(super) fn simplified_kind(
    kind: JoinKind,
    lcols: &HashSet<ColumnId>,
    rcols: &HashSet<ColumnId>,
    cs: &[Expr],
) -> JoinKind {
    let rejects_right = cs.iter().any(|c| rejects_nulls(c, rcols));
    let rejects_left = cs.iter().any(|c| rejects_nulls(c, lcols));
    match kind {
        JoinKind::Left if rejects_right => JoinKind::Inner,
        JoinKind::Right if rejects_left => JoinKind::Inner,
        JoinKind::Full if rejects_left && rejects_right => JoinKind::Inner,
        JoinKind::Full if rejects_left => JoinKind::Left,
        JoinKind::Full if rejects_right => JoinKind::Right,
        k => k,
    }
}

/// A join with conjuncts `cs` from above: outer joins that the conjuncts
/// make inner become inner, then each conjunct goes to the side it reads,
/// into the condition, or stays above.
fn join(
    kind: JoinKind,
    left: Logical,
    right: Logical,
    on: Vec<Expr>,
    mark: Option<ColumnId>,
    cs: Vec<Expr>,
) -> Logical {
    if let Some(into_left) = mark_join_side(kind, &left, &on) {
        let Logical::Join {
            left: a,
            right: b,
            on: join_on,
            mark: join_mark,
            ..
        } = left
        else {
            unreachable!("an inner join, as mark_join_side found")
        };
        let mark_join = |input: Box<Logical>| {
            Box::new(Logical::Join {
                kind,
                left: input,
                right: Box::new(right),
                on,
                mark,
            })
        };
        let (a, b) = if into_left {
            (mark_join(a), b)
        } else {
            (a, mark_join(b))
        };
        let sunk = Logical::Join {
            kind: JoinKind::Inner,
            left: a,
            right: b,
            on: join_on,
            mark: join_mark,
        };
        return push_conjuncts(sunk, cs);
    }
    let lcols: HashSet<ColumnId> = left.output().into_iter().collect();
    let rcols: HashSet<ColumnId> = right.output().into_iter().collect();
    let kind = simplified_kind(kind, &lcols, &rcols, &cs);
    let (mut to_left, mut to_right, mut above, mut new_on) = (vec![], vec![], vec![], vec![]);
    // A mark join is a SubPlan in PostgreSQL, tested in cost order among
    // the other conjuncts of its level: those it would test later stay above.
    let cs = match (kind, mark) {
        (JoinKind::Mark { null_aware }, Some(m)) => {
            let (stay, down) = split_at_mark(&left, &on, m, null_aware, cs);
            above = stay;
            down
        }
        _ => cs,
    };
    // The join's own condition first: PostgreSQL distributes a JOIN's ON
    // quals before the WHERE clause above it, and a scan tests its quals in
    // that order among equal costs (which decides whether a later qual's
    // error is raised for a row an earlier one rejects).
    for c in on {
        let l = reads_only(&c, &lcols) && !expr_columns(&c).is_empty();
        let r = reads_only(&c, &rcols) && !expr_columns(&c).is_empty();
        match kind {
            JoinKind::Inner | JoinKind::Semi if l => to_left.push(c),
            JoinKind::Inner | JoinKind::Semi | JoinKind::Anti | JoinKind::Left if r => {
                to_right.push(c)
            }
            JoinKind::Right if l => to_left.push(c),
            JoinKind::Inner if is_true(&c) => {}
            _ => new_on.push(c),
        }
    }
    // Then conjuncts from above the join.
    for c in cs {
        let l = reads_only(&c, &lcols);
        let r = reads_only(&c, &rcols);
        match kind {
            JoinKind::Inner if l => to_left.push(c),
            JoinKind::Inner if r => to_right.push(c),
            JoinKind::Inner
                if !expr_columns(&c)
                    .iter()
                    .any(|x| !lcols.contains(x) && !rcols.contains(x)) =>
            {
                new_on.push(c)
            }
            JoinKind::Left | JoinKind::Semi | JoinKind::Anti | JoinKind::Mark { .. } if l => {
                to_left.push(c)
            }
            JoinKind::Right if r => to_right.push(c),
            _ => above.push(c),
        }
    }
    let left = push_conjuncts(left, to_left);
    let right = push_conjuncts(right, to_right);
    // PostgreSQL's dummy relations: a join that cannot produce a row
    // because a side it needs is empty is empty itself, and neither side
    // runs (so a conjunct pushed into the other side raises nothing).
    let needs_left = matches!(
        kind,
        JoinKind::Inner
            | JoinKind::Left
            | JoinKind::Semi
            | JoinKind::Anti
            | JoinKind::Mark { .. }
            | JoinKind::RightSemi
    );
    let needs_right = matches!(
        kind,
        JoinKind::Inner
            | JoinKind::Right
            | JoinKind::Semi
            | JoinKind::RightSemi
            | JoinKind::RightAnti
    );
    if (needs_left && is_empty(&left))
        || (needs_right && is_empty(&right))
        || (matches!(kind, JoinKind::Inner | JoinKind::Semi | JoinKind::RightSemi)
            && new_on.iter().any(is_false_or_null))
    {
        let node = Logical::Join {
            kind,
            left: Box::new(left),
            right: Box::new(right),
            on: vec![],
            mark,
        };
        return empty_like(&node);
    }
    with_filter(
        Logical::Join {
            kind,
            left: Box::new(left),
            right: Box::new(right),
            on: new_on,
            mark,
        },
        above,
    )
}
