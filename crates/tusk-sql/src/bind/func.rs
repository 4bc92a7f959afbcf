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
        "bool_and" => AggFunc::BoolAnd,
        "bool_or" => AggFunc::BoolOr,
        "every" => AggFunc::Every,
        "stddev" => AggFunc::Stddev,
        "stddev_samp" => AggFunc::StddevSamp,
        "stddev_pop" => AggFunc::StddevPop,
        "variance" => AggFunc::Variance,
        "var_samp" => AggFunc::VarSamp,
        "var_pop" => AggFunc::VarPop,
        "string_agg" => AggFunc::StringAgg,
        "bit_and" => AggFunc::BitAnd,
        "bit_or" => AggFunc::BitOr,
        "array_agg" => AggFunc::ArrayAgg,
        "json_agg" => AggFunc::JsonAgg,
        "jsonb_agg" => AggFunc::JsonbAgg,
        "json_object_agg" => AggFunc::JsonObjectAgg,
        "jsonb_object_agg" => AggFunc::JsonbObjectAgg,
        _ => return None,
    })
}

/// The result type of aggregate `f` over `arg`, as PostgreSQL defines it,
/// or `None` when PostgreSQL has no such aggregate.
pub fn agg_result_type(f: AggFunc, arg: Option<DataType>) -> Option<DataType> {
    use AggFunc as F;
    use DataType::*;
    let exists = match (f, arg) {
        (F::CountStar | F::Count, _) => true,
        (F::Sum | F::Avg, Some(Int2 | Int4 | Int8 | Numeric | Float4 | Float8 | Interval)) => true,
        (F::Min | F::Max, Some(Bool | Bytea | Uuid | Json | Jsonb)) => false,
        (F::Min | F::Max, Some(_)) => true,
        (F::BoolAnd | F::BoolOr | F::Every, Some(Bool)) => true,
        (
            F::Stddev | F::StddevSamp | F::StddevPop | F::Variance | F::VarSamp | F::VarPop,
            Some(Int2 | Int4 | Int8 | Numeric | Float4 | Float8),
        ) => true,
        (F::StringAgg, Some(Text | Varchar | Bpchar | Bytea)) => true,
        (F::BitAnd | F::BitOr, Some(Int2 | Int4 | Int8)) => true,
        // array_agg(anyarray) builds multidimensional arrays, which tusk lacks.
        (F::ArrayAgg, Some(t)) => t.array_of().is_some(),
        (F::JsonAgg | F::JsonbAgg, Some(_)) => true,
        _ => false,
    };
    exists.then(|| tusk_exec::aggregate::funcs::result_type(f, arg))
}

/// The argument type an aggregate is resolved at: `sum(smallint)` reads
/// its argument as is, `string_agg(varchar)` as text. An untyped literal
/// takes the preferred type of the candidates' category (PostgreSQL's
/// `func_select_candidate`): text for min/max/string_agg, boolean for
/// bool_and, double precision for the statistics; `sum`, `avg` and the bit
/// aggregates have candidates in several categories, so it is ambiguous.
fn agg_arg_type(name: &str, f: AggFunc, b: &B) -> Result<DataType> {
    use AggFunc as F;
    if b.unknown {
        return match f {
            F::Sum | F::Avg | F::BitAnd | F::BitOr => Err(SqlError::coded(
                sqlstate::AMBIGUOUS_FUNCTION,
                format!("function {name}(unknown) is not unique"),
            )
            .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")),
            F::BoolAnd | F::BoolOr | F::Every => Ok(DataType::Bool),
            F::Stddev | F::StddevSamp | F::StddevPop | F::Variance | F::VarSamp | F::VarPop => {
                Ok(DataType::Float8)
            }
            F::CountStar | F::Count | F::Min | F::Max | F::StringAgg => Ok(DataType::Text),
            F::JsonObjectAgg | F::JsonbObjectAgg => Ok(DataType::Text),
            F::ArrayAgg
            | F::JsonAgg
            | F::JsonbAgg
            | F::PercentileCont
            | F::PercentileDisc
            | F::Mode => Err(SqlError::coded(
                sqlstate::DATATYPE_MISMATCH,
                "could not determine polymorphic type because input has type unknown",
            )),
        };
    }
    Ok(match (f, b.ty()) {
        (F::StringAgg, t) if t.is_string() => DataType::Text,
        (_, t) => t,
    })
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
        if let Some(b) = self.sql_value_function(&name, f)? {
            return Ok(b);
        }
        if let Some(b) = self.make_interval_call(&name, f, ctx)? {
            return Ok(b);
        }
        let ca = call_args(f)?;
        if !f.within_group.is_empty() {
            let inner_order = !ca.order_by.is_empty();
            return self.within_group_call(&name, f, &ca.args, ca.distinct, inner_order, ctx);
        }
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
        if func::is_set_returning(&name) {
            return Err(srf_not_allowed(ctx.clause));
        }
        self.scalar_function(&name, args)
    }

    /// A scalar function over bound arguments: the conditional forms that
    /// look like calls (COALESCE, NULLIF, GREATEST, LEAST), else the
    /// overload PostgreSQL's resolution rules pick.
    pub(crate) fn scalar_function(&mut self, name: &str, args: Vec<B>) -> Result<B> {
        match name {
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
                // NULLIF(a, b): NULL where `a = b`, with `=` resolved as
                // usual, and of the type of the operator's left operand.
                // PostgreSQL has cross-type `=` between integer types and
                // between float types (`int4 = int8`), which leave `a` at
                // its own type: there only `b` is brought to the wider
                // type, and the comparison widens `a` (see `Expr::NullIf`).
                let mut it = args.into_iter();
                let (a, b) = (it.next().unwrap(), it.next().unwrap());
                let (l, r) = match (a.arg_type(), b.arg_type()) {
                    (ArgType::Known(x), ArgType::Known(y)) if cross_type_equality(x, y) => {
                        let wider = if rank(y) > rank(x) { y } else { x };
                        (self.to_type(a, x)?, self.to_type(b, wider)?)
                    }
                    _ => {
                        let (l, r, _) = self.operator("=", a, b)?;
                        (l, r)
                    }
                };
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
        aggregate_allowed(ctx)?;
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
                let vt = agg_arg_type(name, func, &v)?;
                // string_agg(text, text) or string_agg(bytea, bytea).
                let t = match vt {
                    DataType::Bytea => DataType::Bytea,
                    t if t.is_string() => DataType::Text,
                    _ => return no_aggregate(name, &[v.type_name(), d.type_name()]),
                };
                let v = self.coerce(v, t, |_| SqlError::new("unreachable"))?;
                let d = self.coerce(d, t, |dt| {
                    SqlError::coded(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!(
                            "function string_agg({}, {dt}) does not exist",
                            t.display_name()
                        ),
                    )
                })?;
                (func, vec![v, d], t)
            }
            (AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg, 2) => {
                // `"any", "any"`: each argument keeps its type.
                let mut es = Vec::with_capacity(2);
                for b in args {
                    let t = agg_arg_type(name, func, &b)?;
                    es.push(self.coerce(b, t, |_| SqlError::new("unreachable"))?);
                }
                let result = tusk_exec::aggregate::funcs::result_type(func, None);
                (func, es, result)
            }
            (_, 1) => {
                let b = args.into_iter().next().unwrap();
                let t = agg_arg_type(name, func, &b)?;
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
        Ok(self.aggregate_result(name, call, ctx))
    }

    /// Records aggregate `call` in the clause context (once: an equal call
    /// already there is reused) and returns a reference to its result.
    pub(crate) fn aggregate_result(&mut self, name: &str, call: AggCall, ctx: &mut ExprCtx) -> B {
        let id = match ctx.aggs.iter().find(|(_, c)| *c == call) {
            Some((id, _)) => *id,
            None => {
                let id = self.column(name, SqlType::of(call.result), None);
                ctx.aggs.push((id, call));
                id
            }
        };
        B::known(self.col_expr(id))
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
        if ca.distinct {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "DISTINCT is not implemented for window functions",
            );
        }
        if !ca.order_by.is_empty() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "aggregate ORDER BY is not implemented for window functions",
            );
        }
        if f.filter.is_some() && aggregate_func(name).is_none() {
            return err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "FILTER is not implemented for non-aggregate window functions",
            );
        }
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
            let filter = match &f.filter {
                Some(x) => Some(self.predicate(x, ctx, "FILTER")?),
                None => None,
            };
            Ok((args, filter, partition, order))
        })();
        ctx.in_window = false;
        let (args, filter, partition, order) = bound?;
        let frame = self.window_frame(spec.window_frame.as_ref(), &order)?;
        let (call, arg_exprs, result) = if let Some(wf) = window_func(name) {
            self.bind_window_func(name, wf, args)?
        } else if let Some(af) = aggregate_func(name) {
            let star = matches!(ca.args.as_slice(), [A::FunctionArgExpr::Wildcard]);
            let af = if star { AggFunc::CountStar } else { af };
            match args.len() {
                0 if star => (WindowFunc::Aggregate(af), vec![], DataType::Int8),
                1 => {
                    let b = args.into_iter().next().unwrap();
                    let t = agg_arg_type(name, af, &b)?;
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
            filter,
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

/// Refuses grouping or DISTINCT over a type without an equality operator
/// (`json`), as PostgreSQL does.
pub(crate) fn check_equality(ty: DataType) -> Result<()> {
    if ty == DataType::Json {
        return err(
            sqlstate::UNDEFINED_FUNCTION,
            "could not identify an equality operator for type json",
        );
    }
    Ok(())
}

/// An ORDER BY item over a bound expression.
pub(crate) fn sort_key(binder: &Binder, b: B, o: &A::OrderByExpr) -> Result<SortKey> {
    let expr = binder.resolve_unknown_text(b)?;
    if expr.data_type() == DataType::Json {
        return err(
            sqlstate::UNDEFINED_FUNCTION,
            "could not identify an ordering operator for type json",
        );
    }
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

/// The type a RANGE frame offset takes for an ORDER BY column of type
/// `ty` (PostgreSQL's `in_range` support functions that tusk has), `None`
/// for column types without one.
fn range_offset_type(ty: DataType) -> Option<DataType> {
    match ty {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => Some(DataType::Int8),
        DataType::Float4 | DataType::Float8 => Some(DataType::Float8),
        DataType::Numeric => Some(DataType::Numeric),
        DataType::Date | DataType::Time | DataType::Timestamp | DataType::TimestampTz => {
            Some(DataType::Interval)
        }
        _ => None,
    }
}

impl Binder<'_> {
    /// Binds a window's frame clause. Offsets are constant expressions:
    /// bigint for ROWS and GROUPS; for RANGE, of a type matching the single
    /// ORDER BY column (`order`).
    fn window_frame(
        &mut self,
        frame: Option<&A::WindowFrame>,
        order: &[SortKey],
    ) -> Result<WindowFrame> {
        use tusk_exec::plan::{FrameBound, FrameExclude, FrameUnits};
        let Some(f) = frame else {
            return Ok(WindowFrame::default_for(!order.is_empty()));
        };
        let (units, unit_name) = match f.units {
            A::WindowFrameUnits::Rows => (FrameUnits::Rows, "ROWS"),
            A::WindowFrameUnits::Range => (FrameUnits::Range, "RANGE"),
            A::WindowFrameUnits::Groups => (FrameUnits::Groups, "GROUPS"),
        };
        let has_offset = |b: &A::WindowFrameBound| {
            matches!(
                b,
                A::WindowFrameBound::Preceding(Some(_)) | A::WindowFrameBound::Following(Some(_))
            )
        };
        let any_offset = has_offset(&f.start_bound) || f.end_bound.as_ref().is_some_and(has_offset);
        let offset_type = match units {
            _ if !any_offset => DataType::Int8,
            FrameUnits::Rows => DataType::Int8,
            FrameUnits::Groups if order.is_empty() => {
                return err(
                    sqlstate::WINDOWING_ERROR,
                    "GROUPS mode requires an ORDER BY clause",
                )
            }
            FrameUnits::Groups => DataType::Int8,
            FrameUnits::Range => {
                if order.len() != 1 {
                    return err(
                        sqlstate::WINDOWING_ERROR,
                        "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                    );
                }
                let col = order[0].expr.data_type();
                range_offset_type(col).ok_or_else(|| {
                    SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!(
                            "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {}",
                            col.display_name()
                        ),
                    )
                })?
            }
        };
        let offset = |this: &mut Self, e: &A::Expr| -> Result<Expr> {
            let mut ctx = ExprCtx::new(unit_name);
            let b = this.expr(e, &mut ctx)?;
            let mut has_column = false;
            b.e.visit(|x| has_column |= matches!(x, Expr::Column { .. }));
            if has_column || !ctx.applies.is_empty() {
                return err(
                    sqlstate::INVALID_COLUMN_REFERENCE,
                    format!("argument of {unit_name} must not contain variables"),
                );
            }
            let from = b.type_name();
            this.coerce(b, offset_type, |_| {
                if units == FrameUnits::Range {
                    SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!(
                            "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} and offset type {from}",
                            order[0].expr.data_type().display_name()
                        ),
                    )
                } else {
                    SqlError::coded(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("argument of {unit_name} must be type bigint, not type {from}"),
                    )
                }
            })
        };
        let bound = |this: &mut Self, b: &A::WindowFrameBound| -> Result<FrameBound> {
            Ok(match b {
                A::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
                A::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
                A::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
                A::WindowFrameBound::Preceding(Some(e)) => FrameBound::Preceding(offset(this, e)?),
                A::WindowFrameBound::Following(Some(e)) => FrameBound::Following(offset(this, e)?),
            })
        };
        let start = bound(self, &f.start_bound)?;
        let end = match &f.end_bound {
            Some(b) => bound(self, b)?,
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
        let rank = |b: &FrameBound| match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(_) => 1,
            FrameBound::CurrentRow => 2,
            FrameBound::Following(_) => 3,
            FrameBound::UnboundedFollowing => 4,
        };
        if rank(&start) == 2 && rank(&end) == 1 {
            return err(
                sqlstate::WINDOWING_ERROR,
                "frame starting from current row cannot have preceding rows",
            );
        }
        if rank(&start) == 3 && rank(&end) <= 2 {
            return err(
                sqlstate::WINDOWING_ERROR,
                "frame starting from following row cannot have preceding rows",
            );
        }
        Ok(WindowFrame {
            units,
            start,
            end,
            exclude: FrameExclude::NoOthers,
        })
    }
}

/// Refuses an aggregate call where the clause allows none, or inside
/// another aggregate's arguments.
pub(crate) fn aggregate_allowed(ctx: &ExprCtx) -> Result<()> {
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
    Ok(())
}

/// PostgreSQL's refusal of a set-returning call in `clause` (the select
/// list's calls never get here: see `srf`, which moves them into FROM).
fn srf_not_allowed(clause: &str) -> SqlError {
    let msg = match clause {
        "functions in FROM" => "set-returning functions must appear at top level of FROM".into(),
        "SELECT" => "set-returning functions are not supported here".into(),
        _ => format!("set-returning functions are not allowed in {clause}"),
    };
    SqlError::coded(sqlstate::FEATURE_NOT_SUPPORTED, msg)
}

pub(crate) fn no_function_err(name: &str, args: &[&str]) -> SqlError {
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

/// Whether PostgreSQL has an `=` operator taking `x` and `y` as they are,
/// without coercing either: two different integer types, or two different
/// float types.
fn cross_type_equality(x: DataType, y: DataType) -> bool {
    use DataType::{Float4, Float8, Int2, Int4, Int8};
    x != y
        && (matches!((x, y), (Int2 | Int4 | Int8, Int2 | Int4 | Int8))
            || matches!((x, y), (Float4 | Float8, Float4 | Float8)))
}

/// The width order within the integer types and within the float types.
fn rank(t: DataType) -> u8 {
    match t {
        DataType::Int2 | DataType::Float4 => 0,
        DataType::Int4 | DataType::Float8 => 1,
        _ => 2,
    }
}
