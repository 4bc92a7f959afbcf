//! Function calls: aggregates, window functions and scalar functions.
//!
//! An aggregate call is bound with its arguments in the FROM scope, recorded
//! in the clause context (`ExprCtx::aggs`, deduplicated so that `sum(x)` in
//! the select list and in HAVING is computed once) and replaced by a
//! reference to its result column. Window calls likewise go to
//! `ExprCtx::windows`. Their result types follow PostgreSQL's `pg_aggregate`
//! (see [`agg_result_type`]).

use super::{err, Binder, ExprCtx, Result, B};
use crate::error::{sqlstate, SqlError};
use crate::logical::WindowCall;
use crate::names::ident;
use sqlparser::ast as A;
use tusk_exec::func::{self, ArgType};
use tusk_exec::plan::{AggCall, AggFunc, SortKey, WindowFrame, WindowFunc};
use tusk_exec::Expr;
use tusk_storage::{DataType, SqlType};

/// Aggregate functions by name.
pub fn aggregate_func(name: &str) -> Option<AggFunc> {
    Some(match name {
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "avg" => AggFunc::Avg,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "bool_and" | "every" => AggFunc::BoolAnd,
        "bool_or" => AggFunc::BoolOr,
        "stddev" | "stddev_samp" => AggFunc::StddevSamp,
        "stddev_pop" => AggFunc::StddevPop,
        "variance" | "var_samp" => AggFunc::VarSamp,
        "var_pop" => AggFunc::VarPop,
        "string_agg" => AggFunc::StringAgg,
        _ => return None,
    })
}

/// The result type of aggregate `f` over `arg`, as PostgreSQL defines it,
/// or `None` when PostgreSQL has no such aggregate.
pub fn agg_result_type(f: AggFunc, arg: Option<DataType>) -> Option<DataType> {
    use DataType::*;
    Some(match (f, arg) {
        (AggFunc::CountStar | AggFunc::Count, _) => Int8,
        (AggFunc::Sum, Some(Int2 | Int4)) => Int8,
        (AggFunc::Sum, Some(Int8 | Numeric)) => Numeric,
        (AggFunc::Sum, Some(t @ (Float4 | Float8 | Interval))) => t,
        (AggFunc::Avg, Some(Int2 | Int4 | Int8 | Numeric)) => Numeric,
        (AggFunc::Avg, Some(Float4 | Float8)) => Float8,
        (AggFunc::Avg, Some(Interval)) => Interval,
        (AggFunc::Min | AggFunc::Max, Some(Bool)) => return None,
        (AggFunc::Min | AggFunc::Max, Some(Varchar | Bpchar)) => arg?,
        (AggFunc::Min | AggFunc::Max, Some(t)) => t,
        (AggFunc::BoolAnd | AggFunc::BoolOr, Some(Bool)) => Bool,
        (
            AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop,
            Some(Int2 | Int4 | Int8 | Numeric),
        ) => Numeric,
        (
            AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop,
            Some(Float4 | Float8),
        ) => Float8,
        (AggFunc::StringAgg, Some(Text | Varchar | Bpchar)) => Text,
        _ => return None,
    })
}

/// The argument type an aggregate is resolved at (`sum(smallint)` reads
/// its argument as is; `string_agg(varchar)` as text; an untyped literal
/// as text).
fn agg_arg_type(f: AggFunc, b: &B) -> DataType {
    if b.unknown {
        return DataType::Text;
    }
    match (f, b.ty()) {
        (AggFunc::StringAgg, t) if t.is_string() => DataType::Text,
        (_, t) => t,
    }
}

fn window_func(name: &str) -> Option<WindowFunc> {
    Some(match name {
        "row_number" => WindowFunc::RowNumber,
        "rank" => WindowFunc::Rank,
        "dense_rank" => WindowFunc::DenseRank,
        "percent_rank" => WindowFunc::PercentRank,
        "cume_dist" => WindowFunc::CumeDist,
        "ntile" => WindowFunc::Ntile,
        "lag" => WindowFunc::Lag,
        "lead" => WindowFunc::Lead,
        "first_value" => WindowFunc::FirstValue,
        "last_value" => WindowFunc::LastValue,
        "nth_value" => WindowFunc::NthValue,
        _ => return None,
    })
}

/// The plain arguments of a call, and whether it says DISTINCT.
struct CallArgs<'f> {
    args: Vec<&'f A::FunctionArgExpr>,
    distinct: bool,
    order_by: Vec<&'f A::OrderByExpr>,
}

fn call_args(f: &A::Function) -> Result<CallArgs<'_>> {
    match &f.args {
        A::FunctionArguments::None => Ok(CallArgs {
            args: vec![],
            distinct: false,
            order_by: vec![],
        }),
        A::FunctionArguments::List(list) => {
            let distinct = matches!(
                list.duplicate_treatment,
                Some(A::DuplicateTreatment::Distinct)
            );
            let mut order_by = Vec::new();
            for c in &list.clauses {
                match c {
                    A::FunctionArgumentClause::OrderBy(obs) => order_by.extend(obs.iter()),
                    other => {
                        return err(
                            sqlstate::SYNTAX_ERROR,
                            format!("syntax error at or near \"{other}\""),
                        )
                    }
                }
            }
            let args = list
                .args
                .iter()
                .map(|a| match a {
                    A::FunctionArg::Unnamed(x) => Ok(x),
                    _ => err(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "named function arguments are not supported",
                    ),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(CallArgs {
                args,
                distinct,
                order_by,
            })
        }
        A::FunctionArguments::Subquery(_) => {
            err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"SELECT\"")
        }
    }
}

impl Binder<'_> {
    pub(crate) fn function(&mut self, f: &A::Function, ctx: &mut ExprCtx) -> Result<B> {
        let q = crate::names::object_name(&f.name)?;
        if q.schema.as_deref().is_some_and(|s| s != "pg_catalog") {
            return err(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {}() does not exist", f.name),
            );
        }
        let name = q.name;
        let ca = call_args(f)?;
        if f.over.is_some() {
            return self.window_call(&name, f, ca, ctx);
        }
        if name == "grouping" {
            return self.grouping_call(f, ca, ctx);
        }
        if let Some(func) = aggregate_func(&name) {
            return self.aggregate_call(&name, func, f, ca, ctx);
        }
        if f.filter.is_some() {
            return err(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("FILTER specified, but {name} is not an aggregate function"),
            );
        }
        if ca.distinct {
            return err(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("DISTINCT specified, but {name} is not an aggregate function"),
            );
        }
        if window_func(&name).is_some() {
            return err(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("window function {name} requires an OVER clause"),
            );
        }
        let mut args = Vec::with_capacity(ca.args.len());
        for a in &ca.args {
            match a {
                A::FunctionArgExpr::Expr(x) => args.push(self.expr(x, ctx)?),
                _ => return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"*\""),
            }
        }
        self.scalar_function(&name, args)
    }

    /// A scalar function over bound arguments: the conditional forms that
    /// look like calls (COALESCE, NULLIF, GREATEST, LEAST), else the
    /// overload PostgreSQL's resolution rules pick.
    pub(crate) fn scalar_function(&mut self, name: &str, args: Vec<B>) -> Result<B> {
        match name {
            "generate_series" => {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "set-returning functions are only supported in FROM",
                )
            }
            "coalesce" | "greatest" | "least" if !args.is_empty() => {
                let context = name.to_ascii_uppercase();
                let (es, _) = self.unify_all(args, &context)?;
                return Ok(B::known(match name {
                    "coalesce" => Expr::Coalesce(es),
                    _ => Expr::MinMax {
                        args: es,
                        greatest: name == "greatest",
                    },
                }));
            }
            "nullif" if args.len() == 2 => {
                // NULLIF(a, b): NULL where `a = b`, with `=` resolved as usual.
                let mut it = args.into_iter();
                let (a, b) = (it.next().unwrap(), it.next().unwrap());
                let (l, r, _) = self.operator("=", a, b)?;
                return Ok(B::known(Expr::NullIf {
                    left: Box::new(l),
                    right: Box::new(r),
                }));
            }
            _ => {}
        }
        let types: Vec<ArgType> = args.iter().map(|b| b.arg_type()).collect();
        let res = func::resolve(name, &types)?;
        let mut es = Vec::with_capacity(args.len());
        for (b, &t) in args.into_iter().zip(&res.arg_types) {
            es.push(self.to_type(b, t)?);
        }
        let f = res.func.ok_or_else(|| {
            SqlError::coded(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {name} is not callable"),
            )
        })?;
        Ok(B::known(Expr::call(f, es, res.ret)))
    }

    fn aggregate_call(
        &mut self,
        name: &str,
        func: AggFunc,
        f: &A::Function,
        ca: CallArgs<'_>,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        if ctx.in_aggregate {
            return err(
                sqlstate::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            );
        }
        if !ctx.allow_aggs {
            return err(
                sqlstate::GROUPING_ERROR,
                format!("aggregate functions are not allowed in {}", ctx.clause),
            );
        }
        let star = matches!(ca.args.as_slice(), [A::FunctionArgExpr::Wildcard]);
        if star && name != "count" {
            return err(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("{name}(*) must be used to call a parameterless aggregate function"),
            );
        }
        ctx.in_aggregate = true;
        let bound = (|| -> Result<_> {
            let mut args = Vec::new();
            if !star {
                for a in &ca.args {
                    match a {
                        A::FunctionArgExpr::Expr(x) => args.push(self.expr(x, ctx)?),
                        _ => return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"*\""),
                    }
                }
            }
            let filter = match &f.filter {
                Some(x) => Some(self.predicate(x, ctx, "FILTER")?),
                None => None,
            };
            let mut order = Vec::new();
            for o in &ca.order_by {
                let b = self.expr(&o.expr, ctx)?;
                order.push(sort_key(self, b, o)?);
            }
            Ok((args, filter, order))
        })();
        ctx.in_aggregate = false;
        let (args, filter, order_by) = bound?;
        let (func, arg_exprs, result) = match (func, args.len()) {
            (AggFunc::Count, 0) if star => (AggFunc::CountStar, vec![], DataType::Int8),
            (AggFunc::StringAgg, 2) => {
                let mut it = args.into_iter();
                let v = it.next().unwrap();
                let d = it.next().unwrap();
                let vt = agg_arg_type(func, &v);
                if !vt.is_string() {
                    return no_aggregate(name, &[v.type_name(), d.type_name()]);
                }
                let v = self.coerce(v, DataType::Text, |_| SqlError::new("unreachable"))?;
                let d = self.coerce(d, DataType::Text, |t| {
                    SqlError::coded(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function string_agg(text, {t}) does not exist"),
                    )
                })?;
                (func, vec![v, d], DataType::Text)
            }
            (_, 1) => {
                let b = args.into_iter().next().unwrap();
                let t = agg_arg_type(func, &b);
                let result = agg_result_type(func, Some(t))
                    .ok_or_else(|| no_aggregate_err(name, &[b.type_name()]))?;
                let e = self.coerce(b, t, |_| SqlError::new("unreachable"))?;
                (func, vec![e], result)
            }
            _ => {
                let names: Vec<&str> = args.iter().map(|b| b.type_name()).collect();
                return no_aggregate(name, &names);
            }
        };
        let call = AggCall {
            func,
            args: arg_exprs,
            distinct: ca.distinct,
            filter,
            order_by,
            result,
        };
        let id = match ctx.aggs.iter().find(|(_, c)| *c == call) {
            Some((id, _)) => *id,
            None => {
                let id = self.column(name, SqlType::of(result), None);
                ctx.aggs.push((id, call));
                id
            }
        };
        Ok(B::known(self.col_expr(id)))
    }

    /// `GROUPING(a, b, ...)`: which arguments the current grouping set
    /// leaves ungrouped, as bits.
    fn grouping_call(&mut self, f: &A::Function, ca: CallArgs<'_>, ctx: &mut ExprCtx) -> Result<B> {
        let _ = f;
        if !ctx.allow_aggs || ctx.in_aggregate {
            return err(
                sqlstate::GROUPING_ERROR,
                format!("grouping operations are not allowed in {}", ctx.clause),
            );
        }
        if ca.args.is_empty() || ca.args.len() > 31 {
            return err(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                "GROUPING must have fewer than 32 arguments",
            );
        }
        let mut args = Vec::new();
        ctx.in_aggregate = true;
        for a in &ca.args {
            let r = match a {
                A::FunctionArgExpr::Expr(x) => self.expr(x, ctx),
                _ => err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"*\""),
            };
            match r.and_then(|b| self.resolve_unknown_text(b)) {
                Ok(e) => args.push(e),
                Err(e) => {
                    ctx.in_aggregate = false;
                    return Err(e);
                }
            }
        }
        ctx.in_aggregate = false;
        let id = self.column("grouping", SqlType::Int4, None);
        ctx.groupings.push((id, args));
        Ok(B::known(self.col_expr(id)))
    }

    fn window_call(
        &mut self,
        name: &str,
        f: &A::Function,
        ca: CallArgs<'_>,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        if !ctx.allow_windows {
            return err(
                sqlstate::WINDOWING_ERROR,
                format!("window functions are not allowed in {}", ctx.clause),
            );
        }
        if ctx.in_window {
            return err(
                sqlstate::WINDOWING_ERROR,
                "window function calls cannot be nested",
            );
        }
        let Some(A::WindowType::WindowSpec(spec)) = &f.over else {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "named windows are not supported",
            );
        };
        ctx.in_window = true;
        let bound = (|| -> Result<_> {
            let mut args = Vec::new();
            for a in &ca.args {
                match a {
                    A::FunctionArgExpr::Expr(x) => args.push(self.expr(x, ctx)?),
                    A::FunctionArgExpr::Wildcard if name == "count" => {}
                    _ => return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"*\""),
                }
            }
            let mut partition = Vec::new();
            for p in &spec.partition_by {
                let b = self.expr(p, ctx)?;
                partition.push(if b.unknown {
                    self.convert_unknown(b.e, DataType::Text)?
                } else {
                    b.e
                });
            }
            let mut order = Vec::new();
            for o in &spec.order_by {
                let b = self.expr(&o.expr, ctx)?;
                order.push(sort_key(self, b, o)?);
            }
            Ok((args, partition, order))
        })();
        ctx.in_window = false;
        let (args, partition, order) = bound?;
        let frame = window_frame(spec.window_frame.as_ref(), !order.is_empty())?;
        let (call, arg_exprs, result) = if let Some(wf) = window_func(name) {
            self.bind_window_func(name, wf, args)?
        } else if let Some(af) = aggregate_func(name) {
            let star = matches!(ca.args.as_slice(), [A::FunctionArgExpr::Wildcard]);
            let af = if star { AggFunc::CountStar } else { af };
            match args.len() {
                0 if star => (WindowFunc::Aggregate(af), vec![], DataType::Int8),
                1 => {
                    let b = args.into_iter().next().unwrap();
                    let t = agg_arg_type(af, &b);
                    let result = agg_result_type(af, Some(t))
                        .ok_or_else(|| no_aggregate_err(name, &[b.type_name()]))?;
                    let e = self.coerce(b, t, |_| SqlError::new("unreachable"))?;
                    (WindowFunc::Aggregate(af), vec![e], result)
                }
                _ => {
                    let names: Vec<&str> = args.iter().map(|b| b.type_name()).collect();
                    return no_aggregate(name, &names);
                }
            }
        } else {
            return err(
                sqlstate::WRONG_OBJECT_TYPE,
                format!(
                    "OVER specified, but {name} is not a window function nor an aggregate function"
                ),
            );
        };
        let wc = WindowCall {
            call,
            args: arg_exprs,
            partition,
            order,
            frame,
            result,
        };
        let id = self.column(name, SqlType::of(result), None);
        ctx.windows.push((id, wc));
        Ok(B::known(self.col_expr(id)))
    }

    fn bind_window_func(
        &mut self,
        name: &str,
        wf: WindowFunc,
        args: Vec<B>,
    ) -> Result<(WindowFunc, Vec<Expr>, DataType)> {
        let names: Vec<&str> = args.iter().map(|b| b.type_name()).collect();
        let bad = || no_function_err(name, &names);
        let int_arg =
            |this: &Self, b: B| -> Result<Expr> { this.coerce(b, DataType::Int4, |_| bad()) };
        match wf {
            WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank => {
                if !args.is_empty() {
                    return Err(bad());
                }
                Ok((wf, vec![], DataType::Int8))
            }
            WindowFunc::PercentRank | WindowFunc::CumeDist => {
                if !args.is_empty() {
                    return Err(bad());
                }
                Ok((wf, vec![], DataType::Float8))
            }
            WindowFunc::Ntile => {
                let [a] = <[B; 1]>::try_from(args).map_err(|_| bad())?;
                Ok((wf, vec![int_arg(self, a)?], DataType::Int4))
            }
            WindowFunc::FirstValue | WindowFunc::LastValue => {
                let [a] = <[B; 1]>::try_from(args).map_err(|_| bad())?;
                let e = self.resolve_unknown_text(a)?;
                let t = e.data_type();
                Ok((wf, vec![e], t))
            }
            WindowFunc::NthValue => {
                let [a, n] = <[B; 2]>::try_from(args).map_err(|_| bad())?;
                let e = self.resolve_unknown_text(a)?;
                let t = e.data_type();
                Ok((wf, vec![e, int_arg(self, n)?], t))
            }
            WindowFunc::Lag | WindowFunc::Lead => {
                let mut it = args.into_iter();
                let v = it.next().ok_or_else(bad)?;
                let off = it.next();
                let def = it.next();
                if it.next().is_some() {
                    return Err(bad());
                }
                let (v, t) = match &def {
                    Some(d) if v.unknown && !d.unknown => {
                        let t = d.ty();
                        (self.convert_unknown(v.e, t)?, t)
                    }
                    _ => {
                        let e = self.resolve_unknown_text(v)?;
                        let t = e.data_type();
                        (e, t)
                    }
                };
                let mut out = vec![v];
                out.push(match off {
                    Some(o) => int_arg(self, o)?,
                    None => super::constant(tusk_exec::Value::Int4(1), DataType::Int4),
                });
                if let Some(d) = def {
                    out.push(self.coerce(d, t, |_| bad())?);
                }
                Ok((wf, out, t))
            }
            WindowFunc::Aggregate(_) => unreachable!("aggregates are bound by the caller"),
        }
    }

    /// An expression whose untyped literal, if it is one, becomes text.
    pub(crate) fn resolve_unknown_text(&self, b: B) -> Result<Expr> {
        if b.unknown {
            self.convert_unknown(b.e, DataType::Text)
        } else {
            Ok(b.e)
        }
    }
}

/// An ORDER BY item over a bound expression.
pub(crate) fn sort_key(binder: &Binder, b: B, o: &A::OrderByExpr) -> Result<SortKey> {
    let expr = binder.resolve_unknown_text(b)?;
    let desc = matches!(o.options.sort, Some(A::OrderBySort::Desc));
    if let Some(A::OrderBySort::Using(op)) = &o.options.sort {
        return err(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("ORDER BY ... USING {op} is not supported"),
        );
    }
    Ok(SortKey {
        expr,
        desc,
        // PostgreSQL: NULLs sort as larger than everything by default.
        nulls_first: o.options.nulls_first.unwrap_or(desc),
    })
}

fn window_frame(frame: Option<&A::WindowFrame>, ordered: bool) -> Result<WindowFrame> {
    use tusk_exec::plan::{FrameBound, FrameUnits};
    let Some(f) = frame else {
        return Ok(WindowFrame::default_for(ordered));
    };
    let units = match f.units {
        A::WindowFrameUnits::Rows => FrameUnits::Rows,
        A::WindowFrameUnits::Range => FrameUnits::Range,
        A::WindowFrameUnits::Groups => FrameUnits::Groups,
    };
    let bound = |b: &A::WindowFrameBound| -> Result<FrameBound> {
        Ok(match b {
            A::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
            A::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
            A::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
            A::WindowFrameBound::Preceding(Some(e)) => FrameBound::Preceding(frame_offset(e)?),
            A::WindowFrameBound::Following(Some(e)) => FrameBound::Following(frame_offset(e)?),
        })
    };
    let start = bound(&f.start_bound)?;
    let end = match &f.end_bound {
        Some(b) => bound(b)?,
        None => FrameBound::CurrentRow,
    };
    if matches!(start, FrameBound::UnboundedFollowing) {
        return err(
            sqlstate::WINDOWING_ERROR,
            "frame start cannot be UNBOUNDED FOLLOWING",
        );
    }
    if matches!(end, FrameBound::UnboundedPreceding) {
        return err(
            sqlstate::WINDOWING_ERROR,
            "frame end cannot be UNBOUNDED PRECEDING",
        );
    }
    Ok(WindowFrame { units, start, end })
}

fn frame_offset(e: &A::Expr) -> Result<i64> {
    match e {
        A::Expr::Value(v) => match &v.value {
            A::Value::Number(s, _) => s.parse::<i64>().map_err(|_| {
                SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "only integer frame offsets are supported",
                )
            }),
            _ => err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "only integer frame offsets are supported",
            ),
        },
        _ => err(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "only constant frame offsets are supported",
        ),
    }
}

fn no_function_err(name: &str, args: &[&str]) -> SqlError {
    SqlError::coded(
        sqlstate::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", args.join(", ")),
    )
    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

fn no_aggregate_err(name: &str, args: &[&str]) -> SqlError {
    no_function_err(name, args)
}

fn no_aggregate<T>(name: &str, args: &[&str]) -> Result<T> {
    Err(no_aggregate_err(name, args))
}

/// The identifier of a bare name, for callers that need one.
#[allow(dead_code)]
pub(crate) fn plain_name(i: &A::Ident) -> Result<String> {
    ident(i)
}
