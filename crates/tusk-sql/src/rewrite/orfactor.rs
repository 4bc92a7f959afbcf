//! Common conjuncts out of OR: `(A AND B) OR (A AND C)` becomes
//! `A AND (B OR C)`, as PostgreSQL's `canonicalize_qual` does with
//! `process_duplicate_ors`.
//!
//! The point is planning: a join condition that every arm of an OR repeats
//! (TPC-H Q19 writes `p_partkey = l_partkey` in each of its three arms) is
//! only a join key once it stands alone, so without this pass such a query
//! is a filtered cross product. The rewrite is an identity of three-valued
//! logic, so it holds for NULLs: distributivity gives the first form, and
//! when an arm consists only of common conjuncts, absorption
//! (`A OR (A AND B)` is `A`) drops the OR altogether, again as PostgreSQL
//! does.
//!
//! Constants resolve as PostgreSQL's `find_duplicate_ors` resolves them
//! in a qual, where NULL and `false` both reject the row: see [`factor`].
//!
//! Conjuncts are compared structurally (`Expr`'s equality). The pass runs
//! over filter predicates and join conditions, the places PostgreSQL
//! canonicalizes, at every depth of their AND/OR trees.

use crate::logical::Logical;
use tusk_exec::Expr;

/// Factors the ORs of every filter and join condition of the tree.
pub fn factor_ors(plan: &mut Logical) {
    for c in plan.children_mut() {
        factor_ors(c);
    }
    match plan {
        Logical::Filter { predicate, .. } => {
            let taken = std::mem::replace(predicate, true_const());
            *predicate = factor(taken);
        }
        Logical::Join { on, .. } => {
            let taken = std::mem::take(on);
            for e in taken {
                match factor(e) {
                    Expr::And(v) => on.extend(v),
                    e => on.push(e),
                }
            }
        }
        _ => {}
    }
}

/// The constant `true`, what a predicate is while it is being rewritten.
pub(super) fn true_const() -> Expr {
    Expr::Const {
        value: tusk_exec::Value::Bool(true),
        ty: tusk_storage::DataType::Bool,
    }
}

/// A boolean constant of a qual's AND/OR tree: `Some(true)` for `true`,
/// `Some(false)` for `false` or NULL (a qual drops a row for either).
fn qual_constant(e: &Expr) -> Option<bool> {
    match e {
        Expr::Const {
            value: tusk_exec::Value::Bool(b),
            ..
        } => Some(*b),
        Expr::Const {
            value: tusk_exec::Value::Null,
            ..
        } => Some(false),
        _ => None,
    }
}

fn bool_const(b: bool) -> Expr {
    Expr::Const {
        value: tusk_exec::Value::Bool(b),
        ty: tusk_storage::DataType::Bool,
    }
}

/// `e` with the common conjuncts of each of its ORs factored out, and its
/// constants resolved as in a qual, where NULL rejects a row as `false`
/// does (PostgreSQL's `find_duplicate_ors`, for WHERE and ON): an AND with
/// a `false` or NULL term is `false`, an OR drops such arms, `true` terms
/// go from an AND and make an OR `true`. So `((x + 1, y) IN ((2, NULL),
/// (3, 4))` tests only `x + 1 = 3 AND y = 4`, and its first arm's `x + 1`
/// is never computed.
fn factor(e: Expr) -> Expr {
    match e {
        Expr::And(terms) => {
            let mut kept = Vec::new();
            for t in terms.into_iter().map(factor) {
                match qual_constant(&t) {
                    Some(true) => {}
                    Some(false) => return bool_const(false),
                    None => kept.push(t),
                }
            }
            Expr::and_all(kept).unwrap_or_else(|| bool_const(true))
        }
        Expr::Or(arms) => {
            let mut kept = Vec::new();
            for a in arms.into_iter().map(factor) {
                match qual_constant(&a) {
                    Some(true) => return bool_const(true),
                    Some(false) => {}
                    None => kept.push(a),
                }
            }
            match kept.len() {
                0 => bool_const(false),
                1 => kept.pop().expect("one arm"),
                _ => factor_or(kept),
            }
        }
        other => other,
    }
}

fn conjuncts_of(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::And(v) => v.clone(),
        other => vec![other.clone()],
    }
}

fn factor_or(arms: Vec<Expr>) -> Expr {
    let arm_terms: Vec<Vec<Expr>> = arms.iter().map(conjuncts_of).collect();
    let Some((first, others)) = arm_terms.split_first() else {
        return Expr::Or(arms);
    };
    let mut common: Vec<Expr> = Vec::new();
    for t in first {
        if !common.contains(t) && others.iter().all(|a| a.contains(t)) {
            common.push(t.clone());
        }
    }
    if common.is_empty() {
        return Expr::Or(arms);
    }
    let mut rest = Vec::new();
    let mut absorbed = false;
    for terms in arm_terms {
        let left: Vec<Expr> = terms.into_iter().filter(|t| !common.contains(t)).collect();
        match Expr::and_all(left) {
            Some(arm) => rest.push(arm),
            // An arm of common conjuncts only: the OR is implied by them.
            None => absorbed = true,
        }
    }
    if !absorbed {
        common.extend(Expr::or_all(rest));
    }
    Expr::and_all(common).expect("common conjuncts exist")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_storage::DataType;

    fn col(i: usize) -> Expr {
        Expr::Column {
            index: i,
            ty: DataType::Bool,
        }
    }

    #[test]
    fn common_conjuncts_move_out() {
        let e = Expr::Or(vec![
            Expr::And(vec![col(1), col(2)]),
            Expr::And(vec![col(3), col(1)]),
        ]);
        assert_eq!(
            factor(e),
            Expr::And(vec![col(1), Expr::Or(vec![col(2), col(3)])])
        );
    }

    #[test]
    fn an_arm_of_common_conjuncts_absorbs_the_or() {
        let e = Expr::Or(vec![col(1), Expr::And(vec![col(1), col(2)])]);
        assert_eq!(factor(e), col(1));
    }

    #[test]
    fn nothing_common_leaves_the_or() {
        let e = Expr::Or(vec![
            Expr::And(vec![col(1), col(2)]),
            Expr::And(vec![col(3), col(4)]),
        ]);
        assert_eq!(factor(e.clone()), e);
    }

    fn constant(value: tusk_exec::Value) -> Expr {
        Expr::Const {
            value,
            ty: DataType::Bool,
        }
    }

    #[test]
    fn a_null_term_rejects_its_arm_as_false_does() {
        let null = constant(tusk_exec::Value::Null);
        let e = Expr::Or(vec![
            Expr::And(vec![col(1), null.clone()]),
            Expr::And(vec![col(2), col(3)]),
        ]);
        assert_eq!(factor(e), Expr::And(vec![col(2), col(3)]));
        let all_null = Expr::Or(vec![Expr::And(vec![col(1), null.clone()]), null]);
        assert_eq!(factor(all_null), bool_const(false));
        let always = Expr::Or(vec![col(1), constant(tusk_exec::Value::Bool(true))]);
        assert_eq!(factor(always), bool_const(true));
    }

    #[test]
    fn nested_ors_are_factored_too() {
        let inner = Expr::Or(vec![
            Expr::And(vec![col(1), col(2)]),
            Expr::And(vec![col(1), col(3)]),
        ]);
        let e = Expr::And(vec![col(5), inner]);
        assert_eq!(
            factor(e),
            Expr::And(vec![col(5), col(1), Expr::Or(vec![col(2), col(3)])])
        );
    }
}
