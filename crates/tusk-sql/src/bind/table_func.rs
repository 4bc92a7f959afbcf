//! Function scans: set-returning (and scalar) functions in FROM, `f(...)`
//! and `unnest(a, b)`, optionally `WITH ORDINALITY`, and the select list's
//! set-returning calls (see `srf`), which become a scan of all of them
//! side by side, PostgreSQL's `ROWS FROM (f(...), g(...))`.
//!
//! Every call is resolved like a scalar call (the same overload rules and
//! argument casts, see `func`); a scalar function gives one row. The scan
//! is one [`TableFunction::Calls`] with one column per call (see
//! `tusk_exec::function_scan` for how calls run side by side), then
//! `ordinality`.
//!
//! Names in FROM follow PostgreSQL's `addRangeTableEntryForFunction`:
//! - the relation is called by its alias, else after the (first) function;
//! - a single call's column is called by the relation alias when one is
//!   given, else after the function; with several calls each column is
//!   called after its function (`unnest(a, b)` gives `unnest`, `unnest`);
//! - the row number column is `ordinality`;
//! - a column alias list renames them in order.
//!
//! `unnest(a, b)` with several arguments is `ROWS FROM (unnest(a),
//! unnest(b))`, as in PostgreSQL. `json[b]_each[_text](doc)`, whose rows
//! have two columns (`key`, `value`), is two calls side by side over the
//! same document, one per column (`each_calls`). Arguments in FROM may read earlier FROM
//! items (the call is implicitly lateral) and hold subqueries, which run
//! on a row of their own that the scan then reads (laterally).

use super::func::no_function_err;
use super::{err, Binder, ExprCtx, Result, ScopeCol};
use crate::error::sqlstate;
use crate::logical::{ColumnId, JoinKind, Logical, SetFuncCall, TableFunction};
use crate::names::object_name;
use sqlparser::ast as A;
use tusk_exec::func::{self, ArgType};
use tusk_exec::Expr;
use tusk_storage::{DataType, SqlType};

/// One call of a function scan: its name and argument expressions.
pub(crate) struct TableCall<'a> {
    pub name: String,
    pub args: Vec<&'a A::Expr>,
}

impl<'a> TableCall<'a> {
    /// The call `name(args)` as written.
    pub(crate) fn of(name: &A::ObjectName, args: &'a [A::FunctionArg]) -> Result<TableCall<'a>> {
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
        Ok(TableCall {
            name: object_name(name)?.name,
            args: exprs,
        })
    }
}

/// Bound calls: what a [`Logical::TableFunc`] takes, and each call's type.
struct BoundCalls {
    calls: Vec<SetFuncCall>,
    args: Vec<Expr>,
    types: Vec<DataType>,
}

/// The select list's set-returning calls of one level, bound: their
/// columns are in scope (as a relation named after
/// `srf::SELECT_LIST_SRF_ALIAS`) for the select list to read; [`SelectListSets::scan`] makes the scan once the arguments are
/// rewritten over the rows they run on.
pub(crate) struct SelectListSets {
    calls: Vec<SetFuncCall>,
    pub args: Vec<Expr>,
    alias: String,
    cols: Vec<ColumnId>,
}

impl SelectListSets {
    /// The function scan of the calls.
    pub(crate) fn scan(self) -> Logical {
        Logical::TableFunc {
            func: TableFunction::Calls {
                calls: self.calls,
                ordinality: false,
            },
            args: self.args,
            alias: self.alias,
            cols: self.cols,
        }
    }
}

impl Binder<'_> {
    /// Binds and resolves `calls`, their arguments in `ctx`.
    fn bind_calls(&mut self, calls: &[TableCall<'_>], ctx: &mut ExprCtx) -> Result<BoundCalls> {
        let mut out = BoundCalls {
            calls: Vec::with_capacity(calls.len()),
            args: Vec::new(),
            types: Vec::with_capacity(calls.len()),
        };
        for call in calls {
            let mut bound = Vec::with_capacity(call.args.len());
            for x in &call.args {
                bound.push(self.expr(x, ctx)?);
            }
            let arg_types: Vec<ArgType> = bound.iter().map(|b| b.arg_type()).collect();
            let res = func::resolve(&call.name, &arg_types)?;
            let Some(f) = res.func else {
                let names: Vec<&str> = bound.iter().map(|b| b.type_name()).collect();
                return Err(no_function_err(&call.name, &names));
            };
            for (b, &t) in bound.into_iter().zip(&res.arg_types) {
                out.args.push(self.to_type(b, t)?);
            }
            out.calls.push(SetFuncCall {
                func: f,
                nargs: call.args.len(),
            });
            out.types.push(res.ret);
        }
        Ok(out)
    }

    /// `json[b]_each[_text](doc)`: the document cast as `json[b]_object_keys`
    /// takes it, then two calls over it, keys and values (see
    /// `tusk_exec::srf` for the pair).
    fn bind_each(
        &mut self,
        call: &TableCall<'_>,
        (key, value, value_ty): (func::Func, func::Func, DataType),
        ctx: &mut ExprCtx,
    ) -> Result<BoundCalls> {
        let b = self.expr(call.args[0], ctx)?;
        let keys_of = if key == func::Func::JsonbEachKey {
            "jsonb_object_keys"
        } else {
            "json_object_keys"
        };
        let res = func::resolve(keys_of, &[b.arg_type()])
            .map_err(|_| no_function_err(&call.name, &[b.type_name()]))?;
        let arg = self.to_type(b, res.arg_types[0])?;
        Ok(BoundCalls {
            calls: vec![
                SetFuncCall {
                    func: key,
                    nargs: 1,
                },
                SetFuncCall {
                    func: value,
                    nargs: 1,
                },
            ],
            args: vec![arg.clone(), arg],
            types: vec![DataType::Text, value_ty],
        })
    }

    /// Columns named `names` of types `types`, in scope as relation `alias`.
    fn scan_columns(
        &mut self,
        alias: &str,
        names: Vec<String>,
        types: Vec<DataType>,
    ) -> Result<(Vec<ColumnId>, std::ops::Range<usize>)> {
        let mut scope_cols = Vec::with_capacity(names.len());
        let mut ids = Vec::with_capacity(names.len());
        for (name, ty) in names.into_iter().zip(types) {
            let id = self.column(&name, SqlType::of(ty), Some(alias));
            ids.push(id);
            scope_cols.push(ScopeCol {
                name,
                id,
                hidden: false,
            });
        }
        let rels = self.push_rel(alias, scope_cols)?;
        Ok((ids, rels))
    }

    /// A FROM item of the function calls `calls`.
    pub(super) fn table_functions(
        &mut self,
        mut calls: Vec<TableCall<'_>>,
        alias: Option<String>,
        alias_cols: Vec<String>,
        ordinality: bool,
    ) -> Result<super::from::FromItem> {
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
        let each = match calls.as_slice() {
            [c] if c.args.len() == 1 => each_calls(&c.name),
            _ => None,
        };
        let mut bound = match each {
            Some(pair) => self.bind_each(&calls[0], pair, &mut ctx)?,
            None => self.bind_calls(&calls, &mut ctx)?,
        };
        let alias = alias.unwrap_or_else(|| calls[0].name.clone());
        let mut names: Vec<String> = if each.is_some() {
            vec!["key".into(), "value".into()]
        } else if calls.len() == 1 {
            vec![alias.clone()]
        } else {
            calls.iter().map(|c| c.name.clone()).collect()
        };
        if ordinality {
            names.push("ordinality".into());
            bound.types.push(DataType::Int8);
        }
        let names = self.rename(&alias, &names, &alias_cols)?;
        let (ids, rels) = self.scan_columns(&alias, names, bound.types)?;
        let mut plan = Logical::TableFunc {
            func: TableFunction::Calls {
                calls: bound.calls,
                ordinality,
            },
            args: bound.args,
            alias,
            cols: ids.clone(),
        };
        if !ctx.applies.is_empty() {
            // Subqueries in the arguments (`unnest(array(select ...))`) run
            // once per scan, on a row of their own, which the scan reads.
            let values = ctx.apply_to(Logical::unit());
            plan = super::from::join_node(JoinKind::Inner, values, plan, vec![], &self.cols);
        }
        Ok(super::from::FromItem {
            plan,
            rels,
            star: ids,
        })
    }

    /// Binds the select list's set-returning calls of one nesting level
    /// (see `srf`), their arguments in the select list's `ctx`, and puts
    /// their columns `vK` in scope as the level's relation.
    pub(super) fn select_list_sets(
        &mut self,
        calls: &[(usize, A::Expr)],
        level: usize,
        ctx: &mut ExprCtx,
    ) -> Result<SelectListSets> {
        let mut table_calls = Vec::with_capacity(calls.len());
        for (_, c) in calls {
            let A::Expr::Function(f) = c else {
                return err(sqlstate::SYNTAX_ERROR, "a set-returning call expected");
            };
            let args: &[A::FunctionArg] = match &f.args {
                A::FunctionArguments::List(list) => &list.args,
                _ => &[],
            };
            table_calls.push(TableCall::of(&f.name, args)?);
        }
        let bound = self.bind_calls(&table_calls, ctx)?;
        let names = calls.iter().map(|(k, _)| format!("v{k}")).collect();
        let alias = super::srf::level_alias(level);
        let (cols, _) = self.scan_columns(&alias, names, bound.types)?;
        Ok(SelectListSets {
            calls: bound.calls,
            args: bound.args,
            alias,
            cols,
        })
    }
}

/// The key and value calls of `json[b]_each[_text]`, and the value type.
fn each_calls(name: &str) -> Option<(func::Func, func::Func, DataType)> {
    use func::Func as F;
    Some(match name {
        "jsonb_each" => (F::JsonbEachKey, F::JsonbEachValue, DataType::Jsonb),
        "jsonb_each_text" => (F::JsonbEachKey, F::JsonbEachTextValue, DataType::Text),
        "json_each" => (F::JsonEachKey, F::JsonEachValue, DataType::Json),
        "json_each_text" => (F::JsonEachKey, F::JsonEachTextValue, DataType::Text),
        _ => return None,
    })
}
