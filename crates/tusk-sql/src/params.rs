//! `$n` parameters in a planned statement: which ones it uses, with which
//! types, and the values bound for an execution.
//!
//! A prepared statement is bound and planned once with its parameters left
//! as `Expr::Param { index: n - 1 }` (PostgreSQL's generic plan). Each
//! execution substitutes the bound values as constants into a copy of the
//! plan ([`substitute`]); nothing is parsed, bound or planned again, and a
//! value never passes through SQL text. Parameters at or above
//! `physical::SUBPLAN_PARAM_BASE` are a SubPlan's outer references, which
//! the executor substitutes per outer row; they are left alone here.
//!
//! A plan whose parameters are all index scan keys (`WHERE aid = $1` on an
//! index) is not copied: its scans read the values from
//! `ExecContext::params` when they open ([`only_index_keys`]). This is
//! the common case of short statements, where the copy and its drop cost
//! more than the lookup itself.
//!
//! The walk over a plan's expressions is `Plan::for_each_expr_mut`, which
//! covers every node kind, SubPlans included; [`for_each_statement_expr`]
//! adds the CTE plans.

use crate::error::{sqlstate, SqlError};
use crate::physical::SUBPLAN_PARAM_BASE;
use tusk_exec::plan::{NodeKind, Plan, Statement};
use tusk_exec::{Expr, Value};
use tusk_storage::DataType;

/// Calls `f` on every expression of `plan` and of the plans below it.
pub fn for_each_expr_mut(plan: &mut Plan, f: &mut dyn FnMut(&mut Expr)) {
    plan.for_each_expr_mut(f);
}

/// Substitutes `values` into every expression of a bound (logical) plan
/// and the plans below it: the statement an UPDATE or DELETE keeps for
/// READ COMMITTED's re-check is planned again at each re-check, with the
/// execution's values.
pub fn substitute_logical(plan: &mut crate::logical::Logical, values: &[Value]) {
    plan.for_each_expr_mut(&mut |e| substitute(e, values));
    for c in plan.children_mut() {
        substitute_logical(c, values);
    }
}

/// Calls `f` on every expression of a statement (its CTEs included).
pub fn for_each_statement_expr(stmt: &mut Statement, f: &mut dyn FnMut(&mut Expr)) {
    for_each_expr_mut(&mut stmt.root, f);
    for c in &mut stmt.ctes {
        for_each_expr_mut(c, f);
    }
}

/// Whether every `$n` of `stmt` is the value of an index scan's key,
/// which the scan reads from `ExecContext::params` when it opens: such a
/// statement runs from its plan as it is, with no copy to substitute the
/// values into. Determined once per plan.
pub fn only_index_keys(stmt: &Statement) -> bool {
    fn drop_index_keys(plan: &mut Plan) {
        match &mut plan.kind {
            NodeKind::IndexScan { keys, .. } => keys.clear(),
            NodeKind::SubPlans { subplans } => {
                for s in subplans {
                    drop_index_keys(&mut s.plan);
                }
            }
            _ => {}
        }
        plan.children.iter_mut().for_each(drop_index_keys);
    }
    let mut rest = stmt.clone();
    drop_index_keys(&mut rest.root);
    rest.ctes.iter_mut().for_each(drop_index_keys);
    let mut used = Vec::new();
    for_each_statement_expr(&mut rest, &mut |e| occurrences(e, &mut used));
    used.is_empty()
}

/// The `$n` parameters an expression reads: `(index, type)` for each
/// occurrence.
pub fn occurrences(e: &Expr, out: &mut Vec<(usize, DataType)>) {
    e.visit(|n| {
        if let Expr::Param { index, ty } = n {
            if *index < SUBPLAN_PARAM_BASE {
                out.push((*index, *ty));
            }
        }
    });
}

/// The final parameter types of a statement bound with `params` (declared
/// or inferred types, `None` where neither) whose expressions read the
/// parameter occurrences `used`: a parameter still untyped but used is
/// `text` (as an `unknown` literal resolves); one neither declared nor used
/// is an error, as is a parameter used with two different types.
pub fn resolve_types(
    params: &[Option<DataType>],
    used: &[(usize, DataType)],
) -> Result<Vec<DataType>, SqlError> {
    let mut types = Vec::with_capacity(params.len());
    for (i, declared) in params.iter().enumerate() {
        let first_use = used.iter().find(|(k, _)| *k == i).map(|(_, t)| *t);
        let ty = match (declared, first_use) {
            (Some(t), _) => *t,
            (None, Some(t)) => t,
            (None, None) => {
                return Err(SqlError::coded(
                    sqlstate::INDETERMINATE_DATATYPE,
                    format!("could not determine data type of parameter ${}", i + 1),
                ))
            }
        };
        types.push(ty);
    }
    for &(i, t) in used {
        if let Some(&want) = types.get(i) {
            if want != t {
                return Err(SqlError::coded(
                    sqlstate::AMBIGUOUS_PARAMETER,
                    format!("inconsistent types deduced for parameter ${}", i + 1),
                )
                .with_detail(format!(
                    "{} versus {}",
                    want.display_name(),
                    t.display_name()
                )));
            }
        }
    }
    Ok(types)
}

/// Replaces every `$n` of `e` by `values[n - 1]`.
pub fn substitute(e: &mut Expr, values: &[Value]) {
    e.substitute_params(&|i| values.get(i).cloned());
}
