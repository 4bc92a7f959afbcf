//! SQL's special syntax for what are function calls in PostgreSQL:
//! `CASE`, `EXTRACT(f FROM x)`, `SUBSTRING(x FROM a FOR b)`,
//! `POSITION(a IN b)`, `TRIM(BOTH c FROM x)`, `CEIL`/`FLOOR`,
//! `INTERVAL '...'`, `x AT TIME ZONE z` (those two in `datetime`). Each is
//! bound by naming the function PostgreSQL's grammar turns it into.

use super::{err, Binder, ExprCtx, Result, B};
use crate::error::sqlstate;
use sqlparser::ast as A;
use tusk_exec::Expr;

impl Binder<'_> {
    pub(crate) fn special_form(&mut self, e: &A::Expr, ctx: &mut ExprCtx) -> Result<B> {
        match e {
            A::Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(operand.as_deref(), conditions, else_result.as_deref(), ctx),
            A::Expr::Ceil { expr, field } | A::Expr::Floor { expr, field } => {
                let name = if matches!(e, A::Expr::Ceil { .. }) {
                    "ceil"
                } else {
                    "floor"
                };
                if !matches!(
                    field,
                    A::CeilFloorKind::DateTimeField(A::DateTimeField::NoDateTime)
                ) {
                    return err(
                        sqlstate::SYNTAX_ERROR,
                        format!("syntax error at or near \"{name}\""),
                    );
                }
                let a = self.expr(expr, ctx)?;
                self.scalar_function(name, vec![a])
            }
            A::Expr::Position { expr, r#in } => {
                let a = self.expr(expr, ctx)?;
                let b = self.expr(r#in, ctx)?;
                self.scalar_function("position", vec![b, a])
            }
            A::Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(expr, ctx)?];
                match substring_from {
                    Some(f) => args.push(self.expr(f, ctx)?),
                    None => args.push(B::known(super::constant(
                        tusk_exec::Value::Int4(1),
                        tusk_storage::DataType::Int4,
                    ))),
                }
                if let Some(f) = substring_for {
                    args.push(self.expr(f, ctx)?);
                }
                self.scalar_function("substring", args)
            }
            A::Expr::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => {
                let name = match trim_where {
                    Some(A::TrimWhereField::Leading) => "ltrim",
                    Some(A::TrimWhereField::Trailing) => "rtrim",
                    _ => "btrim",
                };
                let mut args = vec![self.expr(expr, ctx)?];
                if let Some(w) = trim_what {
                    args.push(self.expr(w, ctx)?);
                }
                for c in trim_characters.iter().flatten() {
                    args.push(self.expr(c, ctx)?);
                }
                self.scalar_function(name, args)
            }
            A::Expr::Extract { field, expr, .. } => {
                let f = B {
                    e: super::constant(
                        tusk_exec::Value::Text(field.to_string().to_lowercase()),
                        tusk_storage::DataType::Text,
                    ),
                    unknown: true,
                };
                let x = self.expr(expr, ctx)?;
                // PostgreSQL's grammar names it with its schema.
                self.scalar_function("extract", vec![f, x])
                    .map_err(|mut e| {
                        if let Some(rest) = e.message.strip_prefix("function extract(") {
                            e.message = format!("function pg_catalog.extract({rest}");
                        }
                        e
                    })
            }
            A::Expr::Interval(iv) => self.interval_literal(iv),
            A::Expr::AtTimeZone {
                timestamp,
                time_zone,
            } => self.at_time_zone(timestamp, time_zone, ctx),
            other => err(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("expression is not supported: {other}"),
            ),
        }
    }

    fn case(
        &mut self,
        operand: Option<&A::Expr>,
        conditions: &[A::CaseWhen],
        else_result: Option<&A::Expr>,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        // Bound in the written order, as PostgreSQL's transformCaseExpr
        // does (which decides the error a statement with two bad parts
        // reports): the operand, each WHEN and its result, the ELSE.
        let operand = match operand {
            Some(op) => Some(self.expr(op, ctx)?),
            None => None,
        };
        let mut results = Vec::new();
        let mut conds = Vec::new();
        for w in conditions {
            conds.push(self.expr(&w.condition, ctx)?);
            results.push(self.expr(&w.result, ctx)?);
        }
        let otherwise = match else_result {
            Some(e) => Some(self.expr(e, ctx)?),
            None => None,
        };
        // PostgreSQL resolves the result type with the ELSE first.
        let has_else = otherwise.is_some();
        let mut all: Vec<B> = otherwise.into_iter().collect();
        all.extend(results);
        let (mut typed, ty) = self.unify_all(all, "CASE")?;
        let otherwise = if has_else {
            Some(Box::new(typed.remove(0)))
        } else {
            None
        };
        // The simple form compares the operand with each WHEN value as one
        // type; the searched form needs boolean conditions.
        let (operand, whens) = match operand {
            Some(o) => {
                let mut items = vec![o];
                items.extend(conds);
                let (mut vals, _) = self.unify_all(items, "CASE/WHEN")?;
                let o = vals.remove(0);
                (Some(Box::new(o)), vals)
            }
            None => (
                None,
                conds
                    .into_iter()
                    .map(|c| self.bool_operand(c, "CASE/WHEN"))
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        Ok(B::known(Expr::Case {
            operand,
            whens: whens.into_iter().zip(typed).collect(),
            otherwise,
            ty,
        }))
    }
}
