//! Set-returning functions in the select list.
//!
//! `SELECT generate_series(a, b) + 1 [, ...] [FROM ...]`: the set-returning
//! call moves into FROM as a function scan joined to the FROM rows
//! (implicitly lateral, so its arguments may read them), and the select
//! list reads the function's column where the call was. For one such call
//! this is PostgreSQL's ProjectSet: each input row is repeated once per
//! value of its series, and a row whose series is empty disappears.
//!
//! The call may sit under operators, casts, null tests and scalar function
//! calls (`abs(generate_series(-1, 1))`), as PostgreSQL allows; under CASE,
//! COALESCE or an aggregate it is refused with PostgreSQL's errors, since
//! there it would be evaluated conditionally or per group.
//!
//! Several calls run in lockstep in PostgreSQL (the longest sets the row
//! count, the others are padded with NULLs): that is not a join of function
//! scans, so they are refused (0A000) rather than answered wrongly.

use super::func::aggregate_func;
use super::select::figure_colname;
use super::{err, Result};
use crate::error::{sqlstate, SqlError};
use sqlparser::ast as A;

fn is_srf(e: &A::Expr) -> bool {
    matches!(e, A::Expr::Function(f) if f.over.is_none() && f.name.to_string().eq_ignore_ascii_case("generate_series"))
}

/// `SELECT generate_series(a, b) [, ...] [FROM ...]`: moves the set-returning
/// call into FROM as a cross-joined function scan (PostgreSQL's ProjectSet
/// for one SRF with arguments that do not depend on the FROM rows), and
/// replaces it in the select list by the function's column, keeping the
/// item's name.
///
/// Several such calls run in lockstep in PostgreSQL (the longest sets the
/// row count, the others are padded with NULLs): that is not a cross join
/// of function scans, so they are refused rather than answered wrongly.
pub(super) fn move_srf_to_from(
    projection: &mut [A::SelectItem],
    from: &mut Vec<A::TableWithJoins>,
) -> Result<()> {
    let mut moved = false;
    for (n, item) in projection.iter_mut().enumerate() {
        let alias_name = match item {
            A::SelectItem::UnnamedExpr(e) => figure_colname(e),
            A::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            _ => continue,
        };
        let (A::SelectItem::UnnamedExpr(e) | A::SelectItem::ExprWithAlias { expr: e, .. }) = item
        else {
            continue;
        };
        let mut calls = Vec::new();
        collect_srfs(e, &mut calls)?;
        if calls.len() > 1 || (moved && !calls.is_empty()) {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "more than one set-returning function in the select list is not supported",
            );
        }
        let Some(call) = calls.pop() else {
            continue;
        };
        if moved {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "more than one set-returning function in the select list is not supported",
            );
        }
        moved = true;
        let A::Expr::Function(f) = call.clone() else {
            continue;
        };
        let A::FunctionArguments::List(list) = &f.args else {
            continue;
        };
        let rel = format!("tusk_srf_{n}");
        from.push(A::TableWithJoins {
            relation: A::TableFactor::Table {
                name: f.name.clone(),
                alias: Some(A::TableAlias {
                    explicit: true,
                    name: A::Ident::with_quote('"', rel.clone()),
                    columns: vec![A::TableAliasColumnDef::from_name("v")],
                    at: None,
                }),
                args: Some(A::TableFunctionArgs {
                    args: list.args.clone(),
                    settings: None,
                }),
                with_hints: vec![],
                version: None,
                with_ordinality: false,
                partitions: vec![],
                json_path: None,
                sample: None,
                index_hints: vec![],
            },
            joins: vec![],
        });
        *call =
            A::Expr::CompoundIdentifier(vec![A::Ident::with_quote('"', rel), A::Ident::new("v")]);
        if let A::SelectItem::UnnamedExpr(e) = item {
            *item = A::SelectItem::ExprWithAlias {
                expr: e.clone(),
                alias: A::Ident::with_quote('"', alias_name),
            };
        }
    }
    Ok(())
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
