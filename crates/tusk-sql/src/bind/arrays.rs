//! Array syntax: `ARRAY[a, b]`, `ARRAY(SELECT ...)`, subscripts `a[i]`,
//! and `x op ANY | ALL (array)`.
//!
//! - `ARRAY[...]`: the elements brought to one type as the branches of a
//!   CASE are (PostgreSQL's `select_common_type`); an empty `ARRAY[]`
//!   needs a cast to know its type (42P18 otherwise).
//! - `ARRAY(subquery)`: every row of a one-column subquery, in its order,
//!   an empty array when there are none. It is bound as the scalar
//!   subquery `(SELECT coalesce(array_agg(c), '{}') FROM (subquery))`:
//!   `array_agg` collects rows in input order, so the subquery's ORDER BY
//!   decides the elements' order.
//! - `a[i]`: an integer subscript; slices (`a[1:2]`) are not supported.
//! - `x op ANY (a)`: the operator is resolved between `x` and the array's
//!   element type, and both sides are brought to one type (an untyped
//!   literal array reads as an array of `x`'s type).

use super::{cast, err, Binder, ExprCtx, PendingApply, Result, B};
use crate::error::{sqlstate, SqlError};
use crate::logical::{Logical, SubqueryKind};
use sqlparser::ast as A;
use tusk_exec::expr::CmpOp;
use tusk_exec::plan::{AggCall, AggFunc};
use tusk_exec::{Expr, Value};
use tusk_storage::{DataType, SqlType};

impl Binder<'_> {
    /// `ARRAY[elems]`.
    pub(crate) fn array_constructor(&mut self, elems: &[A::Expr], ctx: &mut ExprCtx) -> Result<B> {
        if elems.is_empty() {
            return err(
                sqlstate::INDETERMINATE_DATATYPE,
                "cannot determine type of empty array",
            )
            .map_err(|e: SqlError| {
                e.with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[].")
            });
        }
        let mut items = Vec::with_capacity(elems.len());
        for e in elems {
            items.push(self.expr(e, ctx)?);
        }
        let (items, element) = self.unify_all(items, "ARRAY")?;
        let ty = array_type(element)?;
        Ok(B::known(Expr::Array { elems: items, ty }))
    }

    /// `ARRAY(subquery)`.
    pub(crate) fn array_subquery(&mut self, q: &A::Query, ctx: &mut ExprCtx) -> Result<B> {
        let sub = self.subquery(q)?;
        if sub.out.len() != 1 {
            return err(
                sqlstate::SYNTAX_ERROR,
                "subquery must return only one column",
            );
        }
        let element = self.cols.ty(sub.out[0]);
        let ty = array_type(element)?;
        let agg = self.column("array", SqlType::Plain(ty), None);
        let call = AggCall::new(AggFunc::ArrayAgg, vec![self.col_expr(sub.out[0])]);
        let collected = Logical::Aggregate {
            input: Box::new(sub.plan),
            group: vec![],
            aggs: vec![(agg, call)],
        };
        let out = self.column("array", SqlType::Plain(ty), None);
        let empty = Expr::Const {
            value: Value::Array(Box::new(tusk_exec::array::ArrayValue::new(ty, vec![]))),
            ty,
        };
        let plan = Logical::Project {
            input: Box::new(collected),
            exprs: vec![(out, super::coalesce(vec![self.col_expr(agg), empty]))],
        };
        let result = self.column("array", SqlType::Plain(ty), None);
        ctx.target_applies().push(PendingApply {
            subquery: plan,
            kind: SubqueryKind::Scalar,
            out: result,
        });
        Ok(B::known(self.col_expr(result)))
    }

    /// `root[index]...`.
    pub(crate) fn subscript(
        &mut self,
        root: &A::Expr,
        chain: &[A::AccessExpr],
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        let mut b = self.expr(root, ctx)?;
        for access in chain {
            let A::AccessExpr::Subscript(A::Subscript::Index { index }) = access else {
                return err(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "array slices and field selections are not supported",
                );
            };
            let Some(element) = b.ty().element().filter(|_| !b.unknown) else {
                return err(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "cannot subscript type {} because it does not support subscripting",
                        b.type_name()
                    ),
                );
            };
            let i = self.expr(index, ctx)?;
            let i = self.coerce(i, DataType::Int4, |t| {
                SqlError::coded(
                    sqlstate::DATATYPE_MISMATCH,
                    format!("array subscript must have type integer, not type {t}"),
                )
            })?;
            b = B::known(Expr::Subscript {
                array: Box::new(b.e),
                index: Box::new(i),
                ty: element,
            });
        }
        Ok(b)
    }

    /// `left op ANY (array)` / `ALL`.
    pub(crate) fn any_array(
        &mut self,
        left: &A::Expr,
        op: CmpOp,
        array: &A::Expr,
        all: bool,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        let l = self.expr(left, ctx)?;
        let r = self.expr(array, ctx)?;
        let r = if r.unknown {
            // An untyped literal is an array of the left side's type.
            let element = if l.unknown { DataType::Text } else { l.ty() };
            let ty = array_type(element)?;
            B::known(self.convert_unknown(r.e, ty)?)
        } else {
            r
        };
        let Some(element) = r.ty().element() else {
            return err(
                sqlstate::WRONG_OBJECT_TYPE,
                "op ANY/ALL (array) requires array on right side",
            );
        };
        // Resolve the operator against the element type.
        let probe = B::known(Expr::Const {
            value: Value::Null,
            ty: element,
        });
        let res = tusk_exec::func::resolve_operator(op.symbol(), l.arg_type(), probe.arg_type())?;
        let (lt, et) = (res.arg_types[0], res.arg_types[1]);
        let t = if lt == et { lt } else { et };
        let arg = self.to_type(l, t)?;
        let array = if t == element {
            r.e
        } else {
            cast(r.e, array_type(t)?)
        };
        Ok(B::known(Expr::AnyArray {
            arg: Box::new(arg),
            array: Box::new(array),
            op,
            all,
        }))
    }
}

/// The array type of `element` (42704 when it has none).
fn array_type(element: DataType) -> Result<DataType> {
    element.array_of().ok_or_else(|| {
        SqlError::coded(
            sqlstate::UNDEFINED_OBJECT,
            format!(
                "could not find array type for data type {}",
                element.display_name()
            ),
        )
    })
}
