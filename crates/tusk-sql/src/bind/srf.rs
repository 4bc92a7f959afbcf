//! Set-returning functions in the select list.
//!
//! `SELECT generate_series(a, b) + 1, unnest(x) [FROM ...]` is PostgreSQL's
//! ProjectSet: each row that reaches the select list (after WHERE,
//! grouping, HAVING and window functions) is repeated once per row of the
//! longest of its sets, the shorter ones padded with NULLs, and a row
//! whose sets are all empty disappears.
//!
//! The binder builds it in two steps. Here, before anything is bound, each
//! set-returning call is taken out of its item and replaced by a reference
//! to column `vK` of a relation named [`SELECT_LIST_SRF_ALIAS`]; the item
//! keeps its name. `select` then binds the calls' arguments like the rest
//! of the select list (so they may read grouped columns, aggregates and
//! window results), and adds the calls after the window functions as one
//! function scan of all of them side by side (`ROWS FROM`, see
//! `table_func`), joined laterally to the rows; the select list reads its
//! columns where the calls were.
//!
//! A call may sit under operators, casts, null tests and scalar function
//! calls (`abs(generate_series(-1, 1))`), as PostgreSQL allows; under CASE,
//! COALESCE or an aggregate it is refused with PostgreSQL's errors, since
//! there it would be evaluated conditionally or per group. A call nested
//! in another call's arguments is left there, for the binder to refuse
//! (PostgreSQL runs it in a ProjectSet of its own).

use super::func::aggregate_func;
use super::select::figure_colname;
use super::Result;
use crate::error::{sqlstate, SqlError};
use sqlparser::ast as A;

/// The relation name of the scan the select list's calls move into.
pub(crate) const SELECT_LIST_SRF_ALIAS: &str = "*SELECT* sets";

fn is_srf(e: &A::Expr) -> bool {
    matches!(e, A::Expr::Function(f) if f.over.is_none()
        && tusk_exec::func::is_set_returning(&f.name.to_string().to_ascii_lowercase()))
}

/// Takes the select list's set-returning calls out of their items (see
/// the module doc), replacing each by a reference to the scan's column
/// `vK` (`K` its position in the returned list) and keeping each item's
/// name.
pub(super) fn take_select_list_srfs(projection: &mut [A::SelectItem]) -> Result<Vec<A::Expr>> {
    let mut calls = Vec::new();
    for item in projection.iter_mut() {
        let alias_name = match item {
            A::SelectItem::UnnamedExpr(e) => figure_colname(e),
            A::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            _ => continue,
        };
        let (A::SelectItem::UnnamedExpr(e) | A::SelectItem::ExprWithAlias { expr: e, .. }) = item
        else {
            continue;
        };
        let mut found = Vec::new();
        collect_srfs(e, &mut found)?;
        if found.is_empty() {
            continue;
        }
        for call in found {
            let reference = A::Expr::CompoundIdentifier(vec![
                A::Ident::with_quote('"', SELECT_LIST_SRF_ALIAS),
                A::Ident::with_quote('"', format!("v{}", calls.len())),
            ]);
            calls.push(std::mem::replace(call, reference));
        }
        if let A::SelectItem::UnnamedExpr(e) = item {
            *item = A::SelectItem::ExprWithAlias {
                expr: e.clone(),
                alias: A::Ident::with_quote('"', alias_name),
            };
        }
    }
    Ok(calls)
}

/// PostgreSQL's refusal of a set-returning call in `context`.
fn refused(msg: &str) -> SqlError {
    SqlError::coded(sqlstate::FEATURE_NOT_SUPPORTED, msg.to_string())
        .with_hint("You might be able to move the set-returning function into a LATERAL FROM item.")
}

/// The arguments of a call written `f(x, y)`.
fn call_args(f: &mut A::Function) -> Vec<&mut A::Expr> {
    match &mut f.args {
        A::FunctionArguments::List(list) => list
            .args
            .iter_mut()
            .filter_map(|a| match a {
                A::FunctionArg::Unnamed(A::FunctionArgExpr::Expr(x)) => Some(x),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Collects the set-returning calls in `e` that a ProjectSet evaluates for
/// each row: under operators, casts, null tests and scalar function calls.
/// One under CASE, COALESCE or an aggregate call is PostgreSQL's error;
/// anywhere else (a subquery, a window call, BETWEEN, ...) it is left
/// where it is, for the binder to report.
fn collect_srfs<'e>(e: &'e mut A::Expr, out: &mut Vec<&'e mut A::Expr>) -> Result<()> {
    if is_srf(e) {
        out.push(e);
        return Ok(());
    }
    let refuse_under = |children: Vec<&mut A::Expr>, msg: &str| -> Result<()> {
        let mut found = Vec::new();
        for c in children {
            collect_srfs(c, &mut found)?;
        }
        if found.is_empty() {
            Ok(())
        } else {
            Err(refused(msg))
        }
    };
    match e {
        A::Expr::Cast { expr, .. }
        | A::Expr::Nested(expr)
        | A::Expr::UnaryOp { expr, .. }
        | A::Expr::IsNull(expr)
        | A::Expr::IsNotNull(expr) => collect_srfs(expr, out),
        A::Expr::BinaryOp { left, right, .. } => {
            collect_srfs(left, out)?;
            collect_srfs(right, out)
        }
        A::Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let mut children: Vec<&mut A::Expr> = Vec::new();
            if let Some(o) = operand {
                children.push(o);
            }
            for w in conditions {
                children.push(&mut w.condition);
                children.push(&mut w.result);
            }
            if let Some(x) = else_result {
                children.push(x);
            }
            refuse_under(children, "set-returning functions are not allowed in CASE")
        }
        A::Expr::Function(f) if f.over.is_none() => {
            let name = f.name.to_string().to_ascii_lowercase();
            if name == "coalesce" {
                refuse_under(
                    call_args(f),
                    "set-returning functions are not allowed in COALESCE",
                )
            } else if aggregate_func(&name).is_some() {
                refuse_under(
                    call_args(f),
                    "aggregate function calls cannot contain set-returning function calls",
                )
            } else {
                call_args(f)
                    .into_iter()
                    .try_for_each(|x| collect_srfs(x, out))
            }
        }
        _ => Ok(()),
    }
}
