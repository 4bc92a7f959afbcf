//! Binding scalar expressions.
//!
//! Each AST expression becomes a typed [`Expr`] over column ids. Left-deep
//! chains of binary operators (`a + b + c + ...`, long AND/OR lists) are
//! bound iteratively along their left spine, so a chain of 100,000 terms
//! needs no deeper recursion than one of two; every other level of nesting
//! counts against [`super::MAX_NESTING`].

use super::operators::castable;
use super::row::row_items;
use super::{cast, constant, err, Binder, ExprCtx, PendingApply, Result, B};
use crate::error::{sqlstate, SqlError};
use crate::logical::SubqueryKind;
use crate::names::ident;
use crate::types::sql_type;
use sqlparser::ast as A;
use tusk_exec::expr::{ArithOp, BoolTest, CmpOp};
use tusk_exec::{Expr, Numeric, Value};
use tusk_storage::DataType;

/// The operators bound along a left spine without recursion.
fn is_chain_op(op: &A::BinaryOperator) -> bool {
    use A::BinaryOperator as O;
    matches!(
        op,
        O::Plus | O::Minus | O::Multiply | O::Divide | O::Modulo | O::And | O::Or | O::StringConcat
    )
}

/// How a subquery compared with a left side is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sublink {
    /// `op ANY` / `IN`: true if some row satisfies the comparison.
    Any,
    /// `op ALL`: true if every row does.
    All,
    /// `(a, b) op (SELECT x, y ...)`: the comparison with the only row.
    Row,
}

impl Sublink {
    fn of(any: bool) -> Sublink {
        if any {
            Sublink::Any
        } else {
            Sublink::All
        }
    }
}

impl Binder<'_> {
    /// Binds an expression in clause context `ctx`.
    pub(crate) fn expr(&mut self, mut e: &A::Expr, ctx: &mut ExprCtx) -> Result<B> {
        // Parentheses only group: unwrap them without nesting deeper.
        while let A::Expr::Nested(inner) = e {
            e = inner;
        }
        // A left-deep chain: walk the spine down, bind its leftmost operand,
        // then fold the operators back up.
        if let A::Expr::BinaryOp { op, left, right } = e {
            // An operator between rows is not a chain (see `row`).
            let rows = row_items(left).is_some() || row_items(right).is_some();
            if is_chain_op(op) && !rows {
                let mut spine = Vec::new();
                let mut cur = e;
                while let A::Expr::BinaryOp { left, op, right } = cur {
                    if !is_chain_op(op) {
                        break;
                    }
                    spine.push((op, right.as_ref()));
                    cur = left;
                }
                let mut acc = self.nested(|b| b.expr_node(cur, ctx))?;
                while let Some((op, right)) = spine.pop() {
                    let r = self.nested(|b| b.expr(right, ctx))?;
                    acc = self.binary(acc, op, r)?;
                }
                return Ok(acc);
            }
        }
        self.nested(|b| b.expr_node(e, ctx))
    }

    /// Binds an expression that must be boolean (`WHERE`, `ON`, `HAVING`).
    pub(crate) fn predicate(&mut self, e: &A::Expr, ctx: &mut ExprCtx, what: &str) -> Result<Expr> {
        let b = self.expr(e, ctx)?;
        self.bool_operand(b, what)
    }

    fn expr_node(&mut self, e: &A::Expr, ctx: &mut ExprCtx) -> Result<B> {
        match e {
            A::Expr::Identifier(i) => {
                let name = ident(i)?;
                let id = self.resolve(None, &name).map_err(|e| e.at_span(i.span))?;
                self.note_column(i, &name, id);
                Ok(B::known(self.col_expr(id)))
            }
            A::Expr::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident).collect::<Result<_>>()?;
                let (q, n) = match names.as_slice() {
                    [q, n] => (q.as_str(), n.as_str()),
                    [_schema, q, n] => (q.as_str(), n.as_str()),
                    [_db, _schema, q, n] => (q.as_str(), n.as_str()),
                    _ => {
                        return err(
                            sqlstate::SYNTAX_ERROR,
                            format!("improper qualified name (too many dotted names): {e}"),
                        )
                    }
                };
                let id = self
                    .resolve(Some(q), n)
                    .map_err(|e| e.at_span(parts[0].span))?;
                if let Some(last) = parts.last() {
                    self.note_column(last, n, id);
                }
                Ok(B::known(self.col_expr(id)))
            }
            A::Expr::Value(v) => self.literal(&v.value),
            A::Expr::TypedString(ts) => {
                let ty = sql_type(&ts.data_type)?;
                let s = match &ts.value.value {
                    A::Value::SingleQuotedString(s) | A::Value::EscapedStringLiteral(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                let lit = B {
                    e: constant(Value::Text(s), DataType::Text),
                    unknown: true,
                };
                let e = self.convert_unknown(lit.e, ty.data_type())?;
                Ok(B::known(self.typmod(e, ty, true)?))
            }
            A::Expr::Nested(inner) => self.expr(inner, ctx),
            A::Expr::UnaryOp { op, expr } => self.unary(op, expr, ctx),
            A::Expr::BinaryOp {
                left,
                op: A::BinaryOperator::Overlaps,
                right,
            } => self.overlaps(left, right, ctx),
            A::Expr::BinaryOp { left, op, right } => {
                if let Some(b) = self.row_operator(left, op, right, ctx)? {
                    return Ok(b);
                }
                let l = self.expr(left, ctx)?;
                let r = self.expr(right, ctx)?;
                self.binary(l, op, r)
            }
            A::Expr::IsNull(x) | A::Expr::IsNotNull(x) => {
                let negated = matches!(e, A::Expr::IsNotNull(_));
                if let Some(items) = row_items(x) {
                    return self.row_is_null(&items, negated, ctx);
                }
                let b = self.expr(x, ctx)?;
                Ok(B::known(Expr::IsNull {
                    arg: Box::new(b.e),
                    negated,
                }))
            }
            A::Expr::IsTrue(x)
            | A::Expr::IsNotTrue(x)
            | A::Expr::IsFalse(x)
            | A::Expr::IsNotFalse(x)
            | A::Expr::IsUnknown(x)
            | A::Expr::IsNotUnknown(x) => {
                let b = self.expr(x, ctx)?;
                let what = match e {
                    A::Expr::IsTrue(_) => "IS TRUE",
                    A::Expr::IsNotTrue(_) => "IS NOT TRUE",
                    A::Expr::IsFalse(_) => "IS FALSE",
                    A::Expr::IsNotFalse(_) => "IS NOT FALSE",
                    A::Expr::IsUnknown(_) => "IS UNKNOWN",
                    _ => "IS NOT UNKNOWN",
                };
                let arg = self.bool_operand(b, what)?;
                let test = match what {
                    "IS TRUE" => BoolTest::IsTrue,
                    "IS NOT TRUE" => BoolTest::IsNotTrue,
                    "IS FALSE" => BoolTest::IsFalse,
                    "IS NOT FALSE" => BoolTest::IsNotFalse,
                    "IS UNKNOWN" => BoolTest::IsUnknown,
                    _ => BoolTest::IsNotUnknown,
                };
                Ok(B::known(Expr::BoolTest {
                    arg: Box::new(arg),
                    test,
                }))
            }
            A::Expr::IsDistinctFrom(a, b) | A::Expr::IsNotDistinctFrom(a, b) => {
                let negated = matches!(e, A::Expr::IsNotDistinctFrom(..));
                if let (Some(l), Some(r)) = (row_items(a), row_items(b)) {
                    let (l, r) = (self.row_fields(&l, ctx)?, self.row_fields(&r, ctx)?);
                    return self.row_distinct(l, r, negated);
                }
                let l = self.expr(a, ctx)?;
                let r = self.expr(b, ctx)?;
                let (le, re, _) = self.operator("=", l, r)?;
                Ok(B::known(Expr::IsDistinct {
                    left: Box::new(le),
                    right: Box::new(re),
                    negated,
                }))
            }
            A::Expr::Between {
                expr,
                negated,
                low,
                high,
            } => self.between(expr, *negated, low, high, ctx),
            A::Expr::InList {
                expr,
                list,
                negated,
            } => self.in_list(expr, list, *negated, ctx),
            A::Expr::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let b = self.sublink(expr, subquery, CmpOp::Eq, Sublink::Any, ctx)?;
                Ok(B::known(if *negated {
                    Expr::Not(Box::new(b.e))
                } else {
                    b.e
                }))
            }
            A::Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | A::Expr::AllOp {
                left,
                compare_op,
                right,
            } => {
                let op = cmp_op(compare_op).ok_or_else(|| {
                    SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("operator {compare_op} is not supported with ANY/ALL"),
                    )
                })?;
                let any = matches!(e, A::Expr::AnyOp { .. });
                match right.as_ref() {
                    A::Expr::Subquery(q) => self.sublink(left, q, op, Sublink::of(any), ctx),
                    A::Expr::Nested(inner) if matches!(inner.as_ref(), A::Expr::Subquery(_)) => {
                        let A::Expr::Subquery(q) = inner.as_ref() else {
                            unreachable!()
                        };
                        self.sublink(left, q, op, Sublink::of(any), ctx)
                    }
                    array => self.any_array(left, op, array, !any, ctx),
                }
            }
            A::Expr::Exists { subquery, negated } => {
                let sub = self.subquery(subquery)?;
                let out = self.column("exists", tusk_storage::SqlType::Bool, None);
                ctx.target_applies().push(PendingApply {
                    subquery: sub.plan,
                    kind: SubqueryKind::Exists,
                    out,
                });
                let c = self.col_expr(out);
                Ok(B::known(if *negated { Expr::Not(Box::new(c)) } else { c }))
            }
            A::Expr::Subquery(q) => {
                let sub = self.subquery(q)?;
                if sub.out.len() != 1 {
                    return err(
                        sqlstate::SYNTAX_ERROR,
                        "subquery must return only one column",
                    );
                }
                let info = self.cols.get(sub.out[0]).clone();
                let out = self.column(&info.name, info.ty, None);
                ctx.target_applies().push(PendingApply {
                    subquery: sub.plan,
                    kind: SubqueryKind::Scalar,
                    out,
                });
                Ok(B::known(self.col_expr(out)))
            }
            A::Expr::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any,
            }
            | A::Expr::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any,
            } => {
                if *any {
                    return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \"ANY\"");
                }
                let x = self.expr(expr, ctx)?;
                let mut p = self.expr(pattern, ctx)?;
                if let Some(esc) = escape_char {
                    let e = self.expr(esc, ctx)?;
                    p = self.scalar_function("like_escape", vec![p, e])?;
                }
                let ci = matches!(e, A::Expr::ILike { .. });
                let sym = tusk_exec::expr::like_operator(*negated, ci);
                let (arg, pat, _) = self.operator(sym, x, p)?;
                Ok(B::known(Expr::Like {
                    arg: Box::new(arg),
                    pattern: Box::new(pat),
                    negated: *negated,
                    case_insensitive: ci,
                }))
            }
            A::Expr::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char,
            } => {
                let x = self.expr(expr, ctx)?;
                let mut args = vec![self.expr(pattern, ctx)?];
                if let Some(esc) = escape_char {
                    args.push(self.expr(esc, ctx)?);
                }
                let p = self.scalar_function("similar_to_escape", args)?;
                let sym = if *negated { "!~" } else { "~" };
                let (arg, pat, _) = self.operator(sym, x, p)?;
                Ok(B::known(Expr::Regex {
                    arg: Box::new(arg),
                    pattern: Box::new(pat),
                    negated: *negated,
                    case_insensitive: false,
                }))
            }
            A::Expr::Cast {
                expr, data_type, ..
            } => {
                let to = sql_type(data_type)?;
                let b = self.expr(expr, ctx)?;
                Ok(B::known(self.explicit_cast(b, to)?))
            }
            A::Expr::Collate { expr, collation } => {
                let q = crate::names::object_name(collation)?;
                if q.schema.as_deref().is_some_and(|s| s != "pg_catalog") {
                    return err(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("collation \"{collation}\" for encoding \"UTF8\" does not exist"),
                    );
                }
                let name = q.name;
                if !matches!(name.as_str(), "C" | "POSIX" | "default" | "ucs_basic") {
                    return err(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("collation \"{name}\" for encoding \"UTF8\" does not exist"),
                    );
                }
                self.expr(expr, ctx)
            }
            A::Expr::Tuple(_) => err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "row constructors are not supported here",
            ),
            A::Expr::Function(f) => match &f.args {
                A::FunctionArguments::Subquery(q)
                    if f.name.to_string().eq_ignore_ascii_case("array") =>
                {
                    self.array_subquery(q, ctx)
                }
                _ => self.function(f, ctx),
            },
            A::Expr::Array(a) => self.array_constructor(&a.elem, ctx),
            A::Expr::CompoundFieldAccess { root, access_chain } => {
                self.subscript(root, access_chain, ctx)
            }
            _ => self.special_form(e, ctx),
        }
    }

    fn unary(&mut self, op: &A::UnaryOperator, x: &A::Expr, ctx: &mut ExprCtx) -> Result<B> {
        match op {
            A::UnaryOperator::Minus => {
                if let Some(text) = number_text(x) {
                    return self.literal(&A::Value::Number(negate_number_text(&text), false));
                }
                let b = self.expr(x, ctx)?;
                if b.unknown {
                    // Numeric and interval candidates: no preferred one.
                    return Err(not_unique_operator("-"));
                }
                let t = b.ty();
                if super::operators::numeric_rank(t).is_none() && t != DataType::Interval {
                    return err(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("operator does not exist: - {}", t.display_name()),
                    )
                    .map_err(|e: SqlError| e.with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast."));
                }
                let arg = self.to_type(b, t)?;
                Ok(B::known(Expr::Neg {
                    arg: Box::new(arg),
                    ty: t,
                }))
            }
            A::UnaryOperator::Plus => {
                let b = self.expr(x, ctx)?;
                if b.unknown {
                    // Only numeric candidates: the preferred one, float8.
                    return Ok(B::known(self.to_type(b, DataType::Float8)?));
                }
                if super::operators::numeric_rank(b.ty()).is_none() {
                    return err(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("operator does not exist: + {}", b.type_name()),
                    );
                }
                Ok(b)
            }
            A::UnaryOperator::Not => {
                let b = self.expr(x, ctx)?;
                Ok(B::known(Expr::Not(Box::new(self.bool_operand(b, "NOT")?))))
            }
            other => err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("operator is not supported: {other}"),
            ),
        }
    }

    /// A literal as PostgreSQL types it: integers as `integer` when they fit,
    /// else `bigint`, else `numeric`; decimals as `numeric`; strings and NULL
    /// as `unknown` until context decides.
    pub(crate) fn literal(&mut self, v: &A::Value) -> Result<B> {
        Ok(match v {
            A::Value::Number(s, _) => {
                let (value, ty) = literal_value(s)?;
                B::known(constant(value, ty))
            }
            A::Value::SingleQuotedString(s)
            | A::Value::EscapedStringLiteral(s)
            | A::Value::UnicodeStringLiteral(s) => B {
                e: constant(Value::Text(s.clone()), DataType::Text),
                unknown: true,
            },
            A::Value::DollarQuotedString(d) => B {
                e: constant(Value::Text(d.value.clone()), DataType::Text),
                unknown: true,
            },
            A::Value::Boolean(b) => B::known(constant(Value::Bool(*b), DataType::Bool)),
            A::Value::Null => B {
                e: constant(Value::Null, DataType::Text),
                unknown: true,
            },
            A::Value::Placeholder(p) => self.parameter(p)?,
            other => {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("literal is not supported: {other}"),
                )
            }
        })
    }

    /// `$n`: a parameter of the extended query protocol.
    fn parameter(&mut self, p: &str) -> Result<B> {
        let n: usize = p
            .strip_prefix('$')
            .and_then(|d| d.parse().ok())
            .filter(|n| *n >= 1)
            .ok_or_else(|| {
                SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{p}\""),
                )
            })?;
        let declared = {
            let mut params = self.params.borrow_mut();
            if params.len() < n {
                params.resize(n, None);
            }
            params[n - 1]
        };
        match declared {
            Some(ty) => Ok(B::known(Expr::Param { index: n - 1, ty })),
            // An undeclared parameter is text until context says otherwise
            // (as an unknown literal is); the session infers its type from
            // the coercions applied to it.
            None => Ok(B {
                e: Expr::Param {
                    index: n - 1,
                    ty: DataType::Text,
                },
                unknown: true,
            }),
        }
    }

    pub(crate) fn binary(&mut self, l: B, op: &A::BinaryOperator, r: B) -> Result<B> {
        use A::BinaryOperator as O;
        if let Some(b) = self.json_operator(&l, op, &r)? {
            return Ok(b);
        }
        let a_op = match op {
            O::Plus => Some((ArithOp::Add, "+")),
            O::Minus => Some((ArithOp::Sub, "-")),
            O::Multiply => Some((ArithOp::Mul, "*")),
            O::Divide => Some((ArithOp::Div, "/")),
            O::Modulo => Some((ArithOp::Mod, "%")),
            _ => None,
        };
        if let Some((o, sym)) = a_op {
            let (le, re, ty) = self.operator(sym, l, r)?;
            return Ok(B::known(Expr::arith(o, le, re, ty)));
        }
        if let Some(o) = cmp_op(op) {
            let (le, re, _) = self.operator(o.symbol(), l, r)?;
            return Ok(B::known(Expr::cmp(o, le, re)));
        }
        match op {
            O::And | O::Or => {
                let what = if matches!(op, O::And) { "AND" } else { "OR" };
                let a = self.bool_operand(l, what)?;
                let b = self.bool_operand(r, what)?;
                Ok(B::known(if matches!(op, O::And) {
                    Expr::and(a, b)
                } else {
                    Expr::or(a, b)
                }))
            }
            O::StringConcat => {
                let res = tusk_exec::func::resolve_operator("||", l.arg_type(), r.arg_type())?;
                let le = self.to_type(l, res.arg_types[0])?;
                let re = self.to_type(r, res.arg_types[1])?;
                Ok(B::known(match res.func {
                    // Arrays: array_cat, array_append, array_prepend.
                    Some(f) => Expr::call(f, vec![le, re], res.ret),
                    None => Expr::concat(le, re),
                }))
            }
            O::PGRegexMatch | O::PGRegexIMatch | O::PGRegexNotMatch | O::PGRegexNotIMatch => {
                let (sym, negated, ci) = match op {
                    O::PGRegexMatch => ("~", false, false),
                    O::PGRegexIMatch => ("~*", false, true),
                    O::PGRegexNotMatch => ("!~", true, false),
                    _ => ("!~*", true, true),
                };
                let (arg, pat, _) = self.operator(sym, l, r)?;
                Ok(B::known(Expr::Regex {
                    arg: Box::new(arg),
                    pattern: Box::new(pat),
                    negated,
                    case_insensitive: ci,
                }))
            }
            O::PGLikeMatch | O::PGILikeMatch | O::PGNotLikeMatch | O::PGNotILikeMatch => {
                let (sym, negated, ci) = match op {
                    O::PGLikeMatch => ("~~", false, false),
                    O::PGILikeMatch => ("~~*", false, true),
                    O::PGNotLikeMatch => ("!~~", true, false),
                    _ => ("!~~*", true, true),
                };
                let (arg, pat, _) = self.operator(sym, l, r)?;
                Ok(B::known(Expr::Like {
                    arg: Box::new(arg),
                    pattern: Box::new(pat),
                    negated,
                    case_insensitive: ci,
                }))
            }
            O::PGExp => self.scalar_function("power", vec![l, r]),
            // `OPERATOR(pg_catalog.~)`: the built-in operator of that name.
            O::PGCustomBinaryOperator(parts) => {
                let (schema, name) = match parts.as_slice() {
                    [name] => (None, name.as_str()),
                    [schema, name] => (Some(schema.as_str()), name.as_str()),
                    _ => (Some(""), ""),
                };
                let builtin = builtin_operator(name)
                    .filter(|_| schema.is_none_or(|s| s.eq_ignore_ascii_case("pg_catalog")));
                match builtin {
                    Some(op) => self.binary(l, &op, r),
                    None => err(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!(
                            "operator does not exist: {} {op} {}",
                            l.type_name(),
                            r.type_name()
                        ),
                    ),
                }
            }
            other => err(
                sqlstate::UNDEFINED_FUNCTION,
                format!(
                    "operator does not exist: {} {other} {}",
                    l.type_name(),
                    r.type_name()
                ),
            ),
        }
    }

    /// The `json`/`jsonb` operators (`->`, `@>`, `?`, ... and `jsonb`'s
    /// `||` and `-`): a call of the function PostgreSQL implements each
    /// with. `None` for an operator that has no `json` form or operands
    /// that are not `json`.
    fn json_operator(&self, l: &B, op: &A::BinaryOperator, r: &B) -> Result<Option<B>> {
        use A::BinaryOperator as O;
        let sym = match op {
            O::Arrow => "->",
            O::LongArrow => "->>",
            O::HashArrow => "#>",
            O::HashLongArrow => "#>>",
            O::AtArrow => "@>",
            O::ArrowAt => "<@",
            O::Question => "?",
            O::QuestionAnd => "?&",
            O::QuestionPipe => "?|",
            O::HashMinus => "#-",
            O::StringConcat => "||",
            O::Minus => "-",
            _ => return Ok(None),
        };
        let json_only = !matches!(op, O::StringConcat | O::Minus);
        let is_json = |b: &B| !b.unknown && matches!(b.ty(), DataType::Json | DataType::Jsonb);
        if !json_only && !is_json(l) && !is_json(r) {
            return Ok(None);
        }
        let res = tusk_exec::func::resolve_operator(sym, l.arg_type(), r.arg_type())?;
        let Some(f) = res.func else {
            return Ok(None);
        };
        let le = self.to_type(l.clone(), res.arg_types[0])?;
        let re = self.to_type(r.clone(), res.arg_types[1])?;
        Ok(Some(B::known(Expr::call(f, vec![le, re], res.ret))))
    }

    /// `x [NOT] IN (a, b, ...)`: the left side and the items brought to one
    /// type, as PostgreSQL resolves it; three-valued.
    fn in_list(
        &mut self,
        expr: &A::Expr,
        list: &[A::Expr],
        negated: bool,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        if list.is_empty() {
            return err(sqlstate::SYNTAX_ERROR, "syntax error at or near \")\"");
        }
        if let Some(b) = self.row_in_list(expr, list, negated, ctx)? {
            return Ok(b);
        }
        let mut items = Vec::with_capacity(list.len() + 1);
        items.push(self.expr(expr, ctx)?);
        for item in list {
            items.push(self.expr(item, ctx)?);
        }
        let (mut es, _) = match self.unify_all(items.clone(), "IN") {
            Ok(unified) => unified,
            Err(_) => {
                // No common type: PostgreSQL compares item by item with
                // `=` (or `<>` for NOT IN), whose resolution reports the
                // pair that has no operator.
                let (op, symbol) = if negated {
                    (CmpOp::Ne, "<>")
                } else {
                    (CmpOp::Eq, "=")
                };
                let mut tests = Vec::with_capacity(items.len() - 1);
                for item in &items[1..] {
                    let (l, r, _) = self.operator(symbol, items[0].clone(), item.clone())?;
                    tests.push(Expr::cmp(op, l, r));
                }
                let combined = if negated {
                    Expr::and_all(tests)
                } else {
                    Expr::or_all(tests)
                };
                return Ok(B::known(combined.expect("a non-empty list")));
            }
        };
        let arg = es.remove(0);
        if let [item] = es.as_slice() {
            // PostgreSQL's transformAExprIn makes a one-item list a plain
            // `=` (`<>` for NOT IN), which constant folding then treats as
            // the strict operator it is: `x IN (NULL)` is NULL without
            // evaluating x.
            let op = if negated { CmpOp::Ne } else { CmpOp::Eq };
            return Ok(B::known(Expr::cmp(op, arg, item.clone())));
        }
        Ok(B::known(Expr::in_list(arg, es, negated)))
    }

    /// `lhs op ANY|ALL (subquery)`, `lhs IN (subquery)`, and `(a, b) op
    /// (subquery)` (see [`Sublink`]).
    pub(super) fn sublink(
        &mut self,
        lhs: &A::Expr,
        q: &A::Query,
        op: CmpOp,
        form: Sublink,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        let lhs_items = row_items(lhs).unwrap_or_else(|| vec![lhs]);
        let mut lb = Vec::new();
        for x in &lhs_items {
            lb.push(self.expr(x, ctx)?);
        }
        let sub = self.subquery(q)?;
        if sub.out.len() != lb.len() {
            return err(
                sqlstate::SYNTAX_ERROR,
                if sub.out.len() > lb.len() {
                    "subquery has too many columns"
                } else {
                    "subquery has too few columns"
                },
            );
        }
        // Each subquery row is compared with the left side as a row
        // comparison would compare them (`<` lexicographically, `<>` as the
        // OR of the fields'), a one-column row as its value.
        let rb = sub
            .out
            .iter()
            .map(|&c| B::known(self.col_expr(c)))
            .collect();
        let test = self.row_comparison(op, lb, rb)?;
        let (name, kind) = match form {
            Sublink::Any => ("any", SubqueryKind::Any { test }),
            Sublink::All => ("all", SubqueryKind::All { test }),
            Sublink::Row => ("row", SubqueryKind::RowCompare { test }),
        };
        let out = self.column(name, tusk_storage::SqlType::Bool, None);
        ctx.target_applies().push(PendingApply {
            subquery: sub.plan,
            kind,
            out,
        });
        Ok(B::known(self.col_expr(out)))
    }

    /// `CAST(b AS to)` / `b::to`, with the type's modifier applied as an
    /// explicit cast does (truncating strings, rounding numerics).
    pub(crate) fn explicit_cast(&self, b: B, to: tusk_storage::SqlType) -> Result<Expr> {
        let target = to.data_type();
        let e = if b.unknown {
            self.convert_unknown(b.e, target)?
        } else {
            let from = b.ty();
            if from != target && !castable(from, target) {
                return err(
                    sqlstate::CANNOT_COERCE,
                    format!(
                        "cannot cast type {} to {}",
                        from.display_name(),
                        to.display_name()
                    ),
                );
            }
            cast(b.e, target)
        };
        self.typmod(e, to, true)
    }

    /// Applies a type modifier (`varchar(n)`, `char(n)`, `numeric(p,s)`)
    /// to a value already of the base type: an explicit cast truncates
    /// strings, an assignment fails on a too-long value.
    pub(crate) fn typmod(
        &self,
        e: Expr,
        to: tusk_storage::SqlType,
        explicit: bool,
    ) -> Result<Expr> {
        if to.typmod() == -1 {
            return Ok(e);
        }
        Ok(Expr::Typmod {
            arg: Box::new(e),
            ty: to,
            explicit,
        })
    }
}

impl ExprCtx {
    /// Where a subquery met now must be applied: inside an aggregate's
    /// arguments, below the aggregation; elsewhere, to the clause's input.
    pub(crate) fn target_applies(&mut self) -> &mut Vec<PendingApply> {
        if self.in_aggregate {
            &mut self.pre_agg_applies
        } else {
            &mut self.applies
        }
    }
}

/// The built-in binary operator spelled `name` (what `OPERATOR(name)`
/// names).
fn builtin_operator(name: &str) -> Option<A::BinaryOperator> {
    use A::BinaryOperator as O;
    Some(match name {
        "+" => O::Plus,
        "-" => O::Minus,
        "*" => O::Multiply,
        "/" => O::Divide,
        "%" => O::Modulo,
        "^" => O::PGExp,
        "=" => O::Eq,
        "<>" | "!=" => O::NotEq,
        "<" => O::Lt,
        "<=" => O::LtEq,
        ">" => O::Gt,
        ">=" => O::GtEq,
        "||" => O::StringConcat,
        "~" => O::PGRegexMatch,
        "~*" => O::PGRegexIMatch,
        "!~" => O::PGRegexNotMatch,
        "!~*" => O::PGRegexNotIMatch,
        "~~" => O::PGLikeMatch,
        "~~*" => O::PGILikeMatch,
        "!~~" => O::PGNotLikeMatch,
        "!~~*" => O::PGNotILikeMatch,
        _ => return None,
    })
}

pub(crate) fn cmp_op(op: &A::BinaryOperator) -> Option<CmpOp> {
    use A::BinaryOperator as O;
    Some(match op {
        O::Eq => CmpOp::Eq,
        O::NotEq => CmpOp::Ne,
        O::Lt => CmpOp::Lt,
        O::LtEq => CmpOp::Le,
        O::Gt => CmpOp::Gt,
        O::GtEq => CmpOp::Ge,
        _ => return None,
    })
}

/// PostgreSQL's error for a prefix operator over an untyped literal when
/// the candidates span type categories.
fn not_unique_operator(op: &str) -> SqlError {
    SqlError::coded(
        sqlstate::AMBIGUOUS_FUNCTION,
        format!("operator is not unique: {op} unknown"),
    )
    .with_hint(
        "Could not choose a best candidate operator. You might need to add explicit type casts.",
    )
}

/// The text of a numeric literal under any parentheses and minus signs,
/// signs folded in: PostgreSQL's grammar negates constants as it parses
/// (`doNegate`), so `- -2147483648` is the bigint 2147483648, not the
/// negation of an integer.
fn number_text(x: &A::Expr) -> Option<String> {
    match x {
        A::Expr::Value(v) => match &v.value {
            A::Value::Number(s, _) => Some(s.clone()),
            _ => None,
        },
        A::Expr::Nested(e) => number_text(e),
        A::Expr::UnaryOp {
            op: A::UnaryOperator::Minus,
            expr,
        } => number_text(expr).map(|t| negate_number_text(&t)),
        _ => None,
    }
}

/// A numeric literal's value and type, as PostgreSQL types it: integers as
/// `integer` when they fit, else `bigint`, else `numeric`; decimals as
/// `numeric`. `text` is the literal with its sign folded in.
pub(crate) fn literal_value(text: &str) -> Result<(Value, DataType)> {
    let is_int = text.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    if is_int {
        if let Ok(i) = text.parse::<i32>() {
            return Ok((Value::Int4(i), DataType::Int4));
        }
        if let Ok(i) = text.parse::<i64>() {
            return Ok((Value::Int8(i), DataType::Int8));
        }
    }
    let n = Numeric::from_text(text).map_err(tusk_exec::ExecError::from)?;
    Ok((Value::Numeric(n), DataType::Numeric))
}

fn negate_number_text(t: &str) -> String {
    match t.strip_prefix('-') {
        Some(rest) => rest.to_string(),
        None => format!("-{t}"),
    }
}
