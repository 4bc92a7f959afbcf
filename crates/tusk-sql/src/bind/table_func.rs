//! Set-returning functions in FROM: `f(...)`, `unnest(a, b)` and the
//! side-by-side form `ROWS FROM (f(...), g(...))`, each optionally `WITH
//! ORDINALITY`.
//!
//! Every call is resolved like a scalar call (the same overload rules and
//! argument casts, see `func`); a scalar function gives one row. The FROM item is one [`TableFunction::Calls`] scan with one
//! column per call (see `tusk_exec::function_scan` for how the calls run
//! side by side), then `ordinality`.
//!
//! Names follow PostgreSQL's `addRangeTableEntryForFunction`:
//! - the relation is called by its alias, else after the (first) function;
//! - a single call's column is called by the relation alias when one is
//!   given, else after the function; with several calls each column is
//!   called after its function (`unnest(a, b)` gives `unnest`, `unnest`);
//! - the row number column is `ordinality`;
//! - a column alias list renames them in order.
//!
//! `unnest(a, b)` with several arguments is `ROWS FROM (unnest(a),
//! unnest(b))`, as in PostgreSQL. Arguments may read earlier FROM items
//! (the call is implicitly lateral); a subquery in an argument is not
//! supported yet.
//!
//! sqlparser has no `ROWS FROM` syntax; the select list's set-returning
//! calls (see `srf`) reach this module as a lateral function item named
//! [`ROWS_FROM`] whose arguments are the calls.

use super::from::FromItem;
use super::func::no_function_err;
use super::{err, Binder, ExprCtx, Result, ScopeCol};
use crate::error::sqlstate;
use crate::logical::{Logical, SetFuncCall, TableFunction};
use crate::names::object_name;
use sqlparser::ast as A;
use tusk_exec::func::{self, ArgType};
use tusk_storage::{DataType, SqlType};

/// The function name that stands for `ROWS FROM (...)` (see the module
/// doc).
pub(crate) const ROWS_FROM: &str = "rows from";

/// One call of a function item: its name and argument expressions.
pub(crate) struct TableCall<'a> {
    pub name: String,
    pub args: Vec<&'a A::Expr>,
}

/// The calls of `f(args)` written in FROM: `ROWS FROM`'s calls, or one.
pub(crate) fn calls_of<'a>(
    name: &A::ObjectName,
    args: &'a [A::FunctionArg],
) -> Result<Vec<TableCall<'a>>> {
    let fname = object_name(name)?.name;
    let mut exprs = Vec::with_capacity(args.len());
    for a in args {
        let A::FunctionArg::Unnamed(A::FunctionArgExpr::Expr(x)) = a else {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "named function arguments are not supported",
            );
        };
        exprs.push(x);
    }
    if fname != ROWS_FROM {
        return Ok(vec![TableCall {
            name: fname,
            args: exprs,
        }]);
    }
    exprs
        .into_iter()
        .map(|x| match x {
            A::Expr::Function(f) => {
                let A::FunctionArguments::List(list) = &f.args else {
                    return Ok(TableCall {
                        name: object_name(&f.name)?.name,
                        args: vec![],
                    });
                };
                let one = calls_of(&f.name, &list.args)?;
                Ok(one.into_iter().next().expect("one call"))
            }
            _ => err(sqlstate::SYNTAX_ERROR, "ROWS FROM takes function calls"),
        })
        .collect()
}

impl Binder<'_> {
    /// A FROM item of set-returning `calls`.
    pub(super) fn table_functions(
        &mut self,
        mut calls: Vec<TableCall<'_>>,
        alias: Option<String>,
        alias_cols: Vec<String>,
        ordinality: bool,
    ) -> Result<FromItem> {
        if calls.len() == 1 && calls[0].name == "unnest" && calls[0].args.len() > 1 {
            let args = std::mem::take(&mut calls[0].args);
            calls = args
                .into_iter()
                .map(|a| TableCall {
                    name: "unnest".into(),
                    args: vec![a],
                })
                .collect();
        }
        let mut ctx = ExprCtx::new("functions in FROM");
        let mut args = Vec::new();
        let mut logical_calls = Vec::with_capacity(calls.len());
        let mut types = Vec::with_capacity(calls.len());
        for call in &calls {
            let mut bound = Vec::with_capacity(call.args.len());
            for x in &call.args {
                bound.push(self.expr(x, &mut ctx)?);
            }
            let arg_types: Vec<ArgType> = bound.iter().map(|b| b.arg_type()).collect();
            let res = func::resolve(&call.name, &arg_types)?;
            let Some(f) = res.func else {
                let names: Vec<&str> = bound.iter().map(|b| b.type_name()).collect();
                return Err(no_function_err(&call.name, &names));
            };
            for (b, &t) in bound.into_iter().zip(&res.arg_types) {
                args.push(self.to_type(b, t)?);
            }
            logical_calls.push(SetFuncCall {
                func: f,
                nargs: call.args.len(),
            });
            types.push(res.ret);
        }
        if !ctx.applies.is_empty() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "subqueries in function arguments in FROM are not supported",
            );
        }
        let alias = alias.unwrap_or_else(|| calls[0].name.clone());
        let mut names: Vec<String> = if calls.len() == 1 {
            vec![alias.clone()]
        } else {
            calls.iter().map(|c| c.name.clone()).collect()
        };
        if ordinality {
            names.push("ordinality".into());
            types.push(DataType::Int8);
        }
        let names = self.rename(&alias, &names, &alias_cols)?;
        let mut scope_cols = Vec::with_capacity(names.len());
        let mut ids = Vec::with_capacity(names.len());
        for (name, ty) in names.into_iter().zip(types) {
            let id = self.column(&name, SqlType::of(ty), Some(&alias));
            ids.push(id);
            scope_cols.push(ScopeCol {
                name,
                id,
                hidden: false,
            });
        }
        let rels = self.push_rel(&alias, scope_cols)?;
        Ok(FromItem {
            plan: Logical::TableFunc {
                func: TableFunction::Calls {
                    calls: logical_calls,
                    ordinality,
                },
                args,
                alias,
                cols: ids.clone(),
            },
            rels,
            star: ids,
        })
    }
}
