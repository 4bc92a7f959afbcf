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
//! columns where the calls were. Calls nested in another call's arguments
//! make levels, one scan each, as PostgreSQL's stacked ProjectSets: the
//! calls of a level run side by side for each row of the level below.
//!
//! A call may sit under operators, casts, null tests and scalar function
//! calls (`abs(generate_series(-1, 1))`), as PostgreSQL allows; under CASE,
//! COALESCE or an aggregate it is refused with PostgreSQL's errors, since
//! there it would be evaluated conditionally or per group.

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

/// The select list's set-returning calls by nesting level, each with the
/// `K` of its column `vK`: `levels[0]` holds the calls with no
/// set-returning call in their arguments, and `levels[k]` those whose
/// arguments read level `k - 1`'s results, as
/// PostgreSQL stacks one ProjectSet per level (`srf1(srf2(x))`: `srf2`
/// runs first, then `srf1` for each of its rows).
pub(crate) type SrfLevels = Vec<Vec<(usize, A::Expr)>>;

/// The relation name of the scan of nesting level `level` (from 0).
pub(crate) fn level_alias(level: usize) -> String {
    if level == 0 {
        SELECT_LIST_SRF_ALIAS.to_string()
    } else {
        format!("{SELECT_LIST_SRF_ALIAS} {}", level + 1)
    }
}

/// Whether `alias` names one of the select list's scans.
pub(crate) fn is_sets_alias(alias: &str) -> bool {
    alias.starts_with(SELECT_LIST_SRF_ALIAS)
}

/// Takes the select list's set-returning calls out of their items (see
/// the module doc), replacing each by a reference to column `vK` of its
/// level's scan (`K` counts every call) and keeping each item's name.
pub(super) fn take_select_list_srfs(projection: &mut [A::SelectItem]) -> Result<SrfLevels> {
    let mut levels = SrfLevels::new();
    let mut count = 0;
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
        if take_calls(e, &mut levels, &mut count)?.is_none() {
            continue;
        }
        if let A::SelectItem::UnnamedExpr(e) = item {
            *item = A::SelectItem::ExprWithAlias {
                expr: e.clone(),
                alias: A::Ident::with_quote('"', alias_name),
            };
        }
    }
    Ok(levels)
}

/// Takes the set-returning calls out of `e`, each after the ones in its
/// own arguments; returns the highest level taken (`None`: no call).
fn take_calls(e: &mut A::Expr, levels: &mut SrfLevels, count: &mut usize) -> Result<Option<usize>> {
    let mut found = Vec::new();
    collect_srfs(e, &mut found)?;
    let mut top = None;
    for call in found {
        let mut inner = None;
        if let A::Expr::Function(f) = call {
            for arg in call_args(f) {
                inner = inner.max(take_calls(arg, levels, count)?);
            }
        }
        let level = inner.map_or(0, |l| l + 1);
        let reference = A::Expr::CompoundIdentifier(vec![
            A::Ident::with_quote('"', level_alias(level)),
            A::Ident::with_quote('"', format!("v{count}")),
        ]);
        if levels.len() <= level {
            levels.resize_with(level + 1, Vec::new);
        }
        levels[level].push((*count, std::mem::replace(call, reference)));
        *count += 1;
        top = top.max(Some(level));
    }
    Ok(top)
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
