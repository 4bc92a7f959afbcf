//! The constant select-list entries of an `IN` / `op ANY` subquery that
//! PostgreSQL flattens into its query, substituted into the subquery's
//! test before constant folding.
//!
//! PostgreSQL turns `lhs op ANY (subquery)` written as a WHERE conjunct
//! into a semi join (`convert_ANY_sublink_to_join`) when the subquery reads
//! no column of the query around it, the test reads some (a Var: another
//! subquery's value is a SubLink, which does not count), and the test
//! calls nothing volatile. `pull_up_subqueries` then flattens the subquery
//! into the join tree if it is simple (`is_simple_subquery`: no aggregate,
//! window function, GROUP BY, HAVING, DISTINCT, ORDER BY, LIMIT or set
//! operation, nothing volatile in its select list), replacing the test's
//! references to the select list by the entries themselves. Only then does
//! constant folding see the test, as one expression:
//! `(a, 3, 3 / 0.00) = ANY (SELECT false, 4, x FROM u)` folds `3 = 4` to
//! false and never evaluates `3 / 0.00`, and `(a / b, b) = ANY (SELECT 0.5,
//! 1.5 FROM u)` leaves conjuncts over the outer relation alone, which go
//! down into its scan and run there in cost order (`b = 1.5` first).
//! Where the subquery stays a SubPlan (in the select list, under NOT or OR,
//! in HAVING, correlated, or not simple) its test compares with parameters
//! and nothing is substituted: there `3 / 0.00` is folded and fails.
//!
//! tusk keeps the subquery and its columns, so only the entries that are
//! constant expressions are substituted; such an entry then becomes a NULL
//! in the subquery's projection, which nothing reads any longer, so that
//! it is folded only where PostgreSQL folds it, inside the test. (A
//! non-constant entry stays in the projection, whose folding raises the
//! errors of its constant parts even where the test's folding would have
//! stopped before them.)

use crate::logical::{expr_columns, ColumnId, Logical, SubqueryKind};
use std::collections::{HashMap, HashSet};
use tusk_exec::{Expr, Value};

/// Substitutes, in every WHERE-conjunct `ANY` subquery of the tree that
/// PostgreSQL would flatten, the constant select-list entries into the test
/// (see the module doc). Runs before constant folding.
pub fn substitute_flattened_constants(plan: &mut Logical) {
    for c in plan.children_mut() {
        substitute_flattened_constants(c);
    }
    let Logical::Filter { input, predicate } = plan else {
        return;
    };
    let terms = match predicate {
        Expr::And(terms) => terms.as_slice(),
        p => std::slice::from_ref(p),
    };
    let marks: Vec<ColumnId> = terms
        .iter()
        .filter_map(|t| match t {
            Expr::Column { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    if marks.is_empty() || !below_where(input) {
        return;
    }
    let sublinks = sublink_values(input);
    let mut node = input.as_mut();
    while let Logical::Apply {
        input,
        subquery,
        kind,
        out,
    } = node
    {
        if let SubqueryKind::Any { test } = kind {
            if marks.contains(out) && converted_to_join(subquery, test, &sublinks) {
                substitute(subquery, test);
            }
        }
        node = input;
    }
}

/// The values of the WHERE clause's subqueries: the outputs of the chain
/// of Apply nodes at `input`. In PostgreSQL these are SubLinks, not
/// columns of the query's relations.
fn sublink_values(input: &Logical) -> HashSet<ColumnId> {
    let mut values = HashSet::new();
    let mut node = input;
    while let Logical::Apply { input, out, .. } = node {
        values.insert(*out);
        node = input;
    }
    values
}

/// Whether the chain of Apply nodes at `input` stands on a FROM clause (a
/// WHERE filter), not on an aggregation (a HAVING filter).
fn below_where(input: &Logical) -> bool {
    let mut node = input;
    while let Logical::Apply { input, .. } = node {
        node = input;
    }
    !matches!(node, Logical::Aggregate { .. } | Logical::Window { .. })
}

/// PostgreSQL's conditions for making the sublink a semi join and
/// flattening its subquery. The test must read a column of the query's
/// relations: another subquery's value does not count (`(1 - 9223372036854775807,
/// (SELECT max(x) FROM u)) IN (SELECT 7, y FROM v)` stays a SubPlan, so
/// `1 - 9223372036854775807` is folded, and fails, in its test).
fn converted_to_join(subquery: &Logical, test: &Expr, sublinks: &HashSet<ColumnId>) -> bool {
    let inner = subquery.output();
    subquery.free_columns().is_empty()
        && expr_columns(test)
            .iter()
            .any(|c| !inner.contains(c) && !sublinks.contains(c))
        && !test.is_volatile()
        && is_simple(subquery)
}

/// PostgreSQL's `is_simple_subquery` over the logical shape of one query
/// level: a projection without volatile entries over filters (and the
/// subqueries they test) over its FROM clause, with no aggregation,
/// window, DISTINCT, sort, limit or set operation in between.
fn is_simple(subquery: &Logical) -> bool {
    let Logical::Project { input, exprs } = subquery else {
        return false;
    };
    if exprs.iter().any(|(_, e)| e.is_volatile()) {
        return false;
    }
    let mut node = input.as_ref();
    loop {
        match node {
            Logical::Filter { input, .. } | Logical::Apply { input, .. } => node = input,
            Logical::Aggregate { .. }
            | Logical::Window { .. }
            | Logical::Distinct { .. }
            | Logical::Sort { .. }
            | Logical::Limit { .. }
            | Logical::SetOp { .. }
            | Logical::RecursiveUnion { .. } => return false,
            _ => return true,
        }
    }
}

/// Replaces the test's references to constant entries of the subquery's
/// projection by the entries, and those entries by NULLs.
fn substitute(subquery: &mut Logical, test: &mut Expr) {
    let Logical::Project { exprs, .. } = subquery else {
        return;
    };
    let mut constants: HashMap<ColumnId, Expr> = HashMap::new();
    for (id, e) in exprs.iter_mut() {
        if e.is_constant() {
            let null = Expr::Const {
                value: Value::Null,
                ty: e.data_type(),
            };
            constants.insert(*id, std::mem::replace(e, null));
        }
    }
    if constants.is_empty() {
        return;
    }
    let taken = std::mem::replace(test, Expr::constant(Value::Null, test.data_type()));
    *test = crate::logical::exprs::replace_columns(taken, &|c| constants.get(&c).cloned());
}
