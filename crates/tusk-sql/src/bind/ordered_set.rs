//! Ordered-set aggregate calls: `percentile_cont(f)`, `percentile_disc(f)`
//! and `mode()`, each `WITHIN GROUP (ORDER BY value)`.
//!
//! PostgreSQL resolves such a call as a function of the *direct* arguments
//! followed by the ORDER BY values, so a call with the wrong shape fails as
//! `function percentile_disc(numeric, integer, integer) does not exist`:
//!
//! | call | direct | value | result |
//! |---|---|---|---|
//! | `percentile_cont` | `double precision` | `double precision` or `interval` | the value's type |
//! | `percentile_cont` | `double precision[]` | the same | an array of it |
//! | `percentile_disc` | `double precision` | any | the value's type |
//! | `percentile_disc` | `double precision[]` | any | an array of it |
//! | `mode` | — | any | the value's type |
//!
//! The call becomes an [`AggCall`] whose arguments are the value and the
//! direct argument and whose ORDER BY is the value's; the executor keeps
//! the sorted values per group and computes the result at the end
//! (`tusk_exec::aggregate::ordered_set`). PostgreSQL evaluates the direct
//! argument once per group and lets it read grouped columns and outer
//! references; here it may read no column at all (constants and parameters
//! only), and a direct argument that does is refused with 0A000. (The final
//! step evaluates it on its own, which is what lets an empty input still
//! reject a percentile out of range, as PostgreSQL does.)

use super::func::{aggregate_allowed, no_function_err, sort_key};
use super::{err, Binder, ExprCtx, Result, B};
use crate::error::{sqlstate, SqlError};
use sqlparser::ast as A;
use tusk_exec::plan::{AggCall, AggFunc};
use tusk_exec::Expr;
use tusk_storage::DataType;

/// The ordered-set aggregate called `name`, if there is one.
pub fn ordered_set_func(name: &str) -> Option<AggFunc> {
    Some(match name {
        "percentile_cont" => AggFunc::PercentileCont,
        "percentile_disc" => AggFunc::PercentileDisc,
        "mode" => AggFunc::Mode,
        _ => return None,
    })
}

impl Binder<'_> {
    /// A call with `WITHIN GROUP`; `args` are its direct arguments, and
    /// `distinct` / `inner_order` what the argument list itself said.
    pub(crate) fn within_group_call(
        &mut self,
        name: &str,
        f: &A::Function,
        args: &[&A::FunctionArgExpr],
        distinct: bool,
        inner_order: bool,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        let func = ordered_set_func(name);
        if f.over.is_some() && func.is_some() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("OVER is not supported for ordered-set aggregate {name}"),
            );
        }
        if distinct {
            return err(
                sqlstate::SYNTAX_ERROR,
                "cannot use DISTINCT with WITHIN GROUP",
            );
        }
        if inner_order {
            return err(
                sqlstate::SYNTAX_ERROR,
                "cannot use multiple ORDER BY clauses with WITHIN GROUP",
            );
        }
        aggregate_allowed(ctx)?;
        ctx.in_aggregate = true;
        let bound = self.within_group_parts(f, args, ctx);
        ctx.in_aggregate = false;
        let (direct, values, filter) = bound?;
        let names: Vec<&str> = direct
            .iter()
            .chain(values.iter().map(|(b, _)| b))
            .map(|b| b.type_name())
            .collect();
        let shape = || no_function_err(name, &names);
        let Some(func) = func else {
            return Err(shape());
        };
        let wanted_direct = usize::from(func != AggFunc::Mode);
        if direct.len() != wanted_direct || values.len() != 1 {
            return Err(shape());
        }
        let (value, order) = values.into_iter().next().expect("one value");
        let value_type = if value.unknown {
            DataType::Text
        } else {
            value.ty()
        };
        let elem = match func {
            AggFunc::PercentileCont if value_type == DataType::Interval => DataType::Interval,
            AggFunc::PercentileCont => DataType::Float8,
            _ => value_type,
        };
        let value = self.coerce(value, elem, |_| shape())?;
        let mut args = vec![value.clone()];
        let mut result = elem;
        if let Some(d) = direct.into_iter().next() {
            let array = !d.unknown && d.ty().is_array();
            let to = if array {
                DataType::Float8.array_of().expect("float8[] exists")
            } else {
                DataType::Float8
            };
            let d = self.coerce(d, to, |_| shape())?;
            let mut read = Vec::new();
            d.columns(&mut read);
            if !read.is_empty() {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("a direct argument of {name} that references columns is not supported"),
                );
            }
            if array {
                result = elem.array_of().ok_or_else(|| {
                    SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("arrays of type {} are not supported", elem.display_name()),
                    )
                })?;
            }
            args.push(d);
        }
        let key = sort_key(self, B::known(value), &order)?;
        let call = AggCall {
            func,
            args,
            distinct: false,
            filter,
            order_by: vec![key],
            result,
        };
        Ok(self.aggregate_result(name, call, ctx))
    }

    /// The direct arguments, the ORDER BY values (each with its clause) and
    /// the FILTER of a WITHIN GROUP call, bound inside the aggregate.
    #[allow(clippy::type_complexity)]
    fn within_group_parts(
        &mut self,
        f: &A::Function,
        args: &[&A::FunctionArgExpr],
        ctx: &mut ExprCtx,
    ) -> Result<(Vec<B>, Vec<(B, A::OrderByExpr)>, Option<Expr>)> {
        let mut direct = Vec::new();
        for a in args {
            match a {
                A::FunctionArgExpr::Expr(x) => direct.push(self.expr(x, ctx)?),
                _ => return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"*\""),
            }
        }
        let mut values = Vec::new();
        for o in &f.within_group {
            values.push((self.expr(&o.expr, ctx)?, o.clone()));
        }
        let filter = match &f.filter {
            Some(x) => Some(self.predicate(x, ctx, "FILTER")?),
            None => None,
        };
        Ok((direct, values, filter))
    }
}
