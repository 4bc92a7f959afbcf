//! Restrictions of single relations implied by an OR over several, as
//! PostgreSQL's `extract_restriction_or_clauses` derives them.
//!
//! TPC-H Q19's WHERE clause is an OR of three arms, each of which ANDs
//! conditions on `part`, conditions on `lineitem` and the join key. No arm
//! alone restricts a relation, so the OR can only be tested on joined rows:
//! every row of both tables reaches the join. But each arm implies its own
//! conjuncts on `part`, so the OR implies the OR of them:
//!
//! ```text
//! (P1 AND L1 AND K) OR (P2 AND L2 AND K)   implies   (P1 OR P2)  and  (L1 OR L2)
//! ```
//!
//! Those derived ORs read one relation each; added beside the original
//! clause (which stays, as the join filter), the pushdown pass moves them
//! into the scans. A relation for which some arm has no conjunct of its
//! own gets nothing, and neither does one the OR reads alone already.
//!
//! Only filters over a tree of inner joins, and the conditions of inner
//! joins, are used. A row the clause keeps satisfies some arm, so its part
//! from every relation satisfies that arm's conjuncts: the derived clause
//! is true for it, and dropping the other rows earlier changes nothing.
//! (Below an outer join's nullable side a restriction would turn dropped
//! rows into NULL-extended ones, so an outer join is a leaf here, never
//! looked into.) Volatile ORs are left alone: evaluating them again would
//! change what they return.

use super::orfactor::true_const;
use crate::logical::{conjuncts, expr_columns, ColumnId, JoinKind, Logical};
use std::collections::HashSet;
use tusk_exec::Expr;

/// Adds the derived restrictions to every filter over an inner-join tree
/// and to the condition of every inner join.
pub fn derive_restrictions(plan: &mut Logical) {
    for c in plan.children_mut() {
        derive_restrictions(c);
    }
    match plan {
        Logical::Filter { input, predicate } => {
            let mut leaves = Vec::new();
            inner_leaves(input, &mut leaves);
            let mut terms = Vec::new();
            conjuncts(predicate.clone(), &mut terms);
            let derived = implied_restrictions(&terms, &leaves);
            if !derived.is_empty() {
                let p = std::mem::replace(predicate, true_const());
                *predicate = Expr::and_all(std::iter::once(p).chain(derived)).expect("terms");
            }
        }
        Logical::Join {
            kind: JoinKind::Inner,
            left,
            right,
            on,
            ..
        } => {
            let mut leaves = Vec::new();
            inner_leaves(left, &mut leaves);
            inner_leaves(right, &mut leaves);
            let mut terms = Vec::new();
            for t in on.iter() {
                conjuncts(t.clone(), &mut terms);
            }
            let derived = implied_restrictions(&terms, &leaves);
            on.extend(derived);
        }
        _ => {}
    }
}

/// The restrictions of single leaves that the ORs among `terms` (the
/// conjuncts of a clause over the join of `leaves`) imply, leaving out any
/// that `terms` hold already.
fn implied_restrictions(terms: &[Expr], leaves: &[HashSet<ColumnId>]) -> Vec<Expr> {
    let mut derived = Vec::new();
    if leaves.len() < 2 {
        return derived;
    }
    for t in terms {
        let Expr::Or(arms) = t else {
            continue;
        };
        if t.is_volatile() {
            continue;
        }
        for leaf in leaves {
            if let Some(d) = restriction_for(arms, leaf) {
                if !terms.contains(&d) && !derived.contains(&d) {
                    derived.push(d);
                }
            }
        }
    }
    derived
}

/// The output columns of each leaf of the inner-join tree at `l` (a node
/// that is neither an inner join nor a filter over one is a leaf).
fn inner_leaves(l: &Logical, out: &mut Vec<HashSet<ColumnId>>) {
    match l {
        Logical::Join {
            kind: JoinKind::Inner,
            left,
            right,
            ..
        } => {
            inner_leaves(left, out);
            inner_leaves(right, out);
        }
        Logical::Filter { input, .. }
            if matches!(
                input.as_ref(),
                Logical::Join {
                    kind: JoinKind::Inner,
                    ..
                }
            ) =>
        {
            inner_leaves(input, out)
        }
        other => out.push(other.output().into_iter().collect()),
    }
}

/// The OR over `arms` of each arm's conjuncts that read only `leaf`'s
/// columns (and some column); `None` when an arm has none, or when the OR
/// reads only `leaf` already.
fn restriction_for(arms: &[Expr], leaf: &HashSet<ColumnId>) -> Option<Expr> {
    let own = |e: &Expr| {
        let cols = expr_columns(e);
        !cols.is_empty() && cols.iter().all(|c| leaf.contains(c))
    };
    if arms.iter().all(own) {
        return None;
    }
    let mut parts = Vec::with_capacity(arms.len());
    for arm in arms {
        let mut cs = Vec::new();
        conjuncts(arm.clone(), &mut cs);
        let mine: Vec<Expr> = cs.into_iter().filter(own).collect();
        parts.push(Expr::and_all(mine)?);
    }
    Expr::or_all(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_exec::expr::CmpOp;
    use tusk_storage::DataType;

    fn col(i: usize) -> Expr {
        Expr::Column {
            index: i,
            ty: DataType::Int4,
        }
    }

    fn eq(a: usize, v: i32) -> Expr {
        Expr::cmp(
            CmpOp::Eq,
            col(a),
            Expr::constant(tusk_exec::Value::Int4(v), DataType::Int4),
        )
    }

    fn leaf(cols: &[usize]) -> HashSet<ColumnId> {
        cols.iter().copied().collect()
    }

    #[test]
    fn each_relation_gets_the_or_of_its_conjuncts() {
        let (a, b) = (leaf(&[1, 2]), leaf(&[3]));
        let arms = vec![
            Expr::And(vec![eq(1, 1), eq(3, 1)]),
            Expr::And(vec![eq(2, 2), eq(1, 5), eq(3, 2)]),
        ];
        assert_eq!(
            restriction_for(&arms, &a),
            Some(Expr::Or(vec![
                eq(1, 1),
                Expr::And(vec![eq(2, 2), eq(1, 5)])
            ]))
        );
        assert_eq!(
            restriction_for(&arms, &b),
            Some(Expr::Or(vec![eq(3, 1), eq(3, 2)]))
        );
        // An arm without a conjunct of the relation: nothing.
        let arms = vec![Expr::And(vec![eq(1, 1), eq(3, 1)]), eq(3, 2)];
        assert_eq!(restriction_for(&arms, &a), None);
        // An OR over one relation only is a restriction already.
        let arms = vec![eq(1, 1), eq(2, 2)];
        assert_eq!(restriction_for(&arms, &a), None);
    }

    #[test]
    fn nothing_is_derived_twice_or_from_one_leaf() {
        let leaves = vec![leaf(&[1]), leaf(&[3])];
        let or = Expr::Or(vec![
            Expr::And(vec![eq(1, 1), eq(3, 1)]),
            Expr::And(vec![eq(1, 2), eq(3, 2)]),
        ]);
        let held = Expr::Or(vec![eq(1, 1), eq(1, 2)]);
        let derived = implied_restrictions(&[or.clone(), held, or.clone()], &leaves);
        assert_eq!(derived, vec![Expr::Or(vec![eq(3, 1), eq(3, 2)])]);
        assert!(implied_restrictions(&[or], &leaves[..1]).is_empty());
    }
}
