//! Sinking a subquery's Apply toward the relation its conjuncts read.
//!
//! A subquery in a qual is a SubPlan in PostgreSQL, and a qual is tested
//! at the lowest join level that holds every relation it reads. An
//! uncorrelated scalar or EXISTS subquery is an InitPlan: its value is a
//! parameter, computed once, that any qual of its query level may read. A
//! parameter is no relation, so PostgreSQL places a qual that reads it by
//! the relations it reads besides: `$0 <= a.x / a.x` is a restriction of
//! `a`, tested in `a`'s scan, where it fails for a row of `a` that a join
//! filter above would never have met. A correlated subquery reads, besides,
//! the outer columns it is correlated on: `a.y < (SELECT ... WHERE s.k =
//! a.k)` is a restriction of `a` too, run for every row of `a`'s scan
//! (raising `more than one row` for rows a join above would drop).
//!
//! In the logical plan the subquery's value is the `out` column of an
//! Apply, and a conjunct reading it can only go where that column is. So
//! the Apply itself moves down: through other Applies whose value it does
//! not read (they are independent, and commute) and filters, and into the
//! side of a join that holds every other column it and its conjuncts read,
//! where the join lets conjuncts from above go down (never into a side an
//! outer join NULL-extends, unless the conjuncts make the join inner). An
//! Apply that no conjunct reads (a subquery of the select list) stays where
//! it is, above the joins, as PostgreSQL evaluates the target list there.
//! The Apply's output keeps `out`, which every node above passes up, so
//! references above it are still met. Push-down then carries the conjuncts
//! after it, and meets the Apply again one level lower.

use crate::logical::{expr_columns, ColumnId, JoinKind, Logical, SubqueryKind};
use std::collections::HashSet;
use tusk_exec::Expr;

/// Whether an Apply of `kind` over `subquery` is an InitPlan: computed
/// once, its value a parameter of cost 0.
pub(super) fn is_init_plan(kind: &SubqueryKind, subquery: &Logical) -> bool {
    matches!(kind, SubqueryKind::Scalar | SubqueryKind::Exists)
        && subquery.free_columns().is_empty()
}

/// The columns besides `out` that the conjuncts reading `out` read.
pub(super) fn columns_beside(cs: &[Expr], out: ColumnId) -> HashSet<ColumnId> {
    let mut reads = HashSet::new();
    for c in cs {
        let cols = expr_columns(c);
        if cols.contains(&out) {
            reads.extend(cols.into_iter().filter(|&x| x != out));
        }
    }
    reads
}

/// Which side of a join of `kind` over `left` and `right` conjuncts
/// reading `reads` from above go down into, when `cs` are the conjuncts
/// above (which may make an outer join inner): `Some(true)` the left,
/// `Some(false)` the right.
fn join_side(
    kind: JoinKind,
    left: &Logical,
    right: &Logical,
    reads: &HashSet<ColumnId>,
    cs: &[Expr],
) -> Option<bool> {
    let lcols: HashSet<ColumnId> = left.output().into_iter().collect();
    let rcols: HashSet<ColumnId> = right.output().into_iter().collect();
    let in_left = reads.iter().all(|c| lcols.contains(c));
    let in_right = reads.iter().all(|c| rcols.contains(c));
    match super::simplified_kind(kind, &lcols, &rcols, cs) {
        JoinKind::Inner
        | JoinKind::Left
        | JoinKind::Semi
        | JoinKind::Anti
        | JoinKind::Mark { .. }
            if in_left =>
        {
            Some(true)
        }
        JoinKind::Inner | JoinKind::Right if in_right => Some(false),
        _ => None,
    }
}

/// The columns of its input that an Apply's placement depends on, when
/// conjuncts `cs` are above it: those its conjuncts read besides its value
/// `out`, and for a correlated subquery the input columns the subquery and
/// its comparison (`test`) read. Empty when no conjunct reads `out`: then
/// the Apply does not move.
pub(super) fn apply_reads(
    input: &Logical,
    subquery: &Logical,
    kind: &SubqueryKind,
    out: ColumnId,
    cs: &[Expr],
) -> HashSet<ColumnId> {
    if !cs.iter().any(|c| expr_columns(c).contains(&out)) {
        return HashSet::new();
    }
    let mut reads = columns_beside(cs, out);
    let mut own: Vec<ColumnId> = subquery.free_columns().into_iter().collect();
    if let SubqueryKind::Any { test }
    | SubqueryKind::All { test }
    | SubqueryKind::RowCompare { test } = kind
    {
        own.extend(expr_columns(test));
    }
    let input_cols: HashSet<ColumnId> = input.output().into_iter().collect();
    reads.extend(own.into_iter().filter(|c| input_cols.contains(c)));
    reads
}

/// Whether an Apply whose placement depends on `reads` ([`apply_reads`])
/// can go below the top of `plan`, under conjuncts `cs`.
pub(super) fn can_sink(plan: &Logical, reads: &HashSet<ColumnId>, cs: &[Expr]) -> bool {
    if reads.is_empty() {
        return false;
    }
    match plan {
        Logical::Filter { input, .. } => can_sink(input, reads, cs),
        Logical::Apply { input, out, .. } => !reads.contains(out) && can_sink(input, reads, cs),
        Logical::Join {
            kind, left, right, ..
        } => join_side(*kind, left, right, reads, cs).is_some(),
        _ => false,
    }
}

/// The parts of an Apply node, without its input.
pub(super) struct SinkingApply {
    pub subquery: Box<Logical>,
    pub kind: SubqueryKind,
    pub out: ColumnId,
}

impl SinkingApply {
    fn over(self, input: Logical) -> Logical {
        Logical::Apply {
            input: Box::new(input),
            subquery: self.subquery,
            kind: self.kind,
            out: self.out,
        }
    }
}

/// Moves `apply` below the top of `plan`, where [`can_sink`] found it can
/// go (under conjuncts `cs`): under filters and other InitPlans, into the
/// side of the join below.
pub(super) fn sink(
    plan: Logical,
    apply: SinkingApply,
    reads: &HashSet<ColumnId>,
    cs: &[Expr],
) -> Logical {
    match plan {
        Logical::Filter { input, predicate } => Logical::Filter {
            input: Box::new(sink(*input, apply, reads, cs)),
            predicate,
        },
        Logical::Apply {
            input,
            subquery,
            kind,
            out,
        } => Logical::Apply {
            input: Box::new(sink(*input, apply, reads, cs)),
            subquery,
            kind,
            out,
        },
        Logical::Join {
            kind,
            left,
            right,
            on,
            mark,
        } => {
            let into_left = join_side(kind, &left, &right, reads, cs)
                .expect("a side that holds the columns, as can_sink found");
            let (left, right) = if into_left {
                (Box::new(apply.over(*left)), right)
            } else {
                (left, Box::new(apply.over(*right)))
            };
            Logical::Join {
                kind,
                left,
                right,
                on,
                mark,
            }
        }
        other => unreachable!("can_sink found no place in {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use crate::logical::{ColumnId, Columns, JoinKind, Logical, SubqueryKind};
    use crate::rewrite::onetime::tests::{int, values};
    use crate::rewrite::pushdown::push_down;
    use tusk_exec::expr::{ArithOp, CmpOp};
    use tusk_exec::Expr;
    use tusk_storage::DataType;

    /// Integer columns of these names.
    fn columns<const N: usize>(names: [&str; N]) -> (Columns, [ColumnId; N]) {
        let mut cols = Columns::default();
        let ids = names.map(|n| int(&mut cols, n));
        (cols, ids)
    }

    /// `a <kind> JOIN b` with no condition.
    fn join(kind: JoinKind, a: ColumnId, b: ColumnId) -> Logical {
        Logical::Join {
            kind,
            left: Box::new(values(a)),
            right: Box::new(values(b)),
            on: vec![],
            mark: None,
        }
    }

    /// `out <op> x / x`: a conjunct over the subquery's value and `x`.
    fn over(cols: &Columns, op: CmpOp, out: ColumnId, x: ColumnId) -> Expr {
        Expr::Cmp {
            op,
            left: Box::new(cols.expr(out)),
            right: Box::new(Expr::arith(
                ArithOp::Div,
                cols.expr(x),
                cols.expr(x),
                DataType::Int4,
            )),
        }
    }

    fn init_apply(input: Logical, s: ColumnId, out: ColumnId) -> Logical {
        Logical::Apply {
            input: Box::new(input),
            subquery: Box::new(values(s)),
            kind: SubqueryKind::Scalar,
            out,
        }
    }

    /// The value of the Apply over `side`, filtered on it, if it is one.
    fn filtered_apply(side: &Logical) -> Option<ColumnId> {
        match side {
            Logical::Filter { input, .. } => match input.as_ref() {
                Logical::Apply { out, .. } => Some(*out),
                _ => None,
            },
            _ => None,
        }
    }

    /// `(SELECT s1) >= b / b AND (SELECT s2) <= a / a` over `a JOIN b`
    /// (what `x BETWEEN ...` binds to): each subquery goes down into the
    /// side its conjunct reads, with the conjunct.
    #[test]
    fn each_init_plan_goes_to_the_relation_its_conjunct_reads() {
        let mut cols = Columns::default();
        let (a, b, s1, s2, o1, o2) = (
            int(&mut cols, "a"),
            int(&mut cols, "b"),
            int(&mut cols, "s1"),
            int(&mut cols, "s2"),
            int(&mut cols, "o1"),
            int(&mut cols, "o2"),
        );
        let join = join(JoinKind::Inner, a, b);
        let plan = init_apply(init_apply(join, s1, o1), s2, o2).filter(Expr::And(vec![
            over(&cols, CmpOp::Ge, o1, b),
            over(&cols, CmpOp::Le, o2, a),
        ]));
        let Logical::Join { left, right, .. } = push_down(plan) else {
            panic!("the join at the top, its filter gone down")
        };
        assert_eq!(filtered_apply(&left), Some(o2));
        assert_eq!(filtered_apply(&right), Some(o1));
    }

    /// A strict conjunct over the nullable side makes a left join inner:
    /// then the InitPlan goes into that side.
    #[test]
    fn a_left_join_made_inner_takes_it_into_its_right_side() {
        let (cols, [a, b, s, out]) = columns(["a", "b", "s", "out"]);
        let plan =
            init_apply(join(JoinKind::Left, a, b), s, out).filter(over(&cols, CmpOp::Lt, out, b));
        let Logical::Join { kind, right, .. } = push_down(plan) else {
            panic!("the join at the top, its filter gone down")
        };
        assert_eq!(kind, JoinKind::Inner);
        assert_eq!(filtered_apply(&right), Some(out));
    }

    /// An InitPlan never goes into the side an outer join NULL-extends,
    /// nor below a conjunct over both sides.
    #[test]
    fn nullable_sides_and_join_conjuncts_keep_it_above() {
        let (cols, [a, b, s, out]) = columns(["a", "b", "s", "out"]);
        let left_join = join(JoinKind::Left, a, b);
        // `out <> b` does not reject b's NULLs: the join stays a left join.
        let not_distinct = Expr::IsDistinct {
            left: Box::new(cols.expr(out)),
            right: Box::new(cols.expr(b)),
            negated: false,
        };
        let plan = init_apply(left_join, s, out).filter(not_distinct);
        let Logical::Filter { input, .. } = push_down(plan) else {
            panic!("the filter stays above")
        };
        assert!(matches!(*input, Logical::Apply { .. }));
        let both = Expr::Cmp {
            op: CmpOp::Lt,
            left: Box::new(cols.expr(out)),
            right: Box::new(Expr::arith(
                ArithOp::Add,
                cols.expr(a),
                cols.expr(b),
                DataType::Int4,
            )),
        };
        let inner = join(JoinKind::Inner, a, b);
        let Logical::Filter { input, .. } = push_down(init_apply(inner, s, out).filter(both))
        else {
            panic!("the filter stays above")
        };
        assert!(matches!(*input, Logical::Apply { .. }));
    }

    /// A correlated subquery's Apply goes into the side it is correlated
    /// on, with its conjunct over that side, as PostgreSQL tests such a
    /// qual in that relation's scan; one that no conjunct reads (a
    /// select-list subquery) stays above the join.
    #[test]
    fn a_correlated_subquery_goes_to_the_relation_it_reads() {
        let (cols, [a, b, s, out]) = columns(["a", "b", "s", "out"]);
        let correlated = || {
            values(s).filter(Expr::Cmp {
                op: CmpOp::Eq,
                left: Box::new(cols.expr(s)),
                right: Box::new(cols.expr(a)),
            })
        };
        let apply = |input: Logical| Logical::Apply {
            input: Box::new(input),
            subquery: Box::new(correlated()),
            kind: SubqueryKind::Scalar,
            out,
        };
        let plan = apply(join(JoinKind::Inner, a, b)).filter(over(&cols, CmpOp::Lt, out, a));
        let Logical::Join { left, .. } = push_down(plan) else {
            panic!("the join at the top, its filter gone down")
        };
        assert_eq!(filtered_apply(&left), Some(out));
        let unread = apply(join(JoinKind::Inner, a, b));
        assert!(matches!(push_down(unread), Logical::Apply { .. }));
    }
}
