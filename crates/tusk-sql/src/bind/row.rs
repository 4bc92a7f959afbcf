//! Row constructors in comparisons: `(a, b) = (c, d)`, `ROW(a, b) < ROW(c, d)`,
//! `(a, b) IN ((1, 2), (3, 4))`, `(a, b) IS NULL`, `(a, b) IS DISTINCT FROM
//! (c, d)`.
//!
//! tusk has no composite type, so a row constructor never becomes a value:
//! the constructs PostgreSQL defines over rows are rewritten here into
//! expressions over the rows' fields, exactly as PostgreSQL's parser does
//! (`make_row_comparison_op`, `make_row_distinct_op`, `transformAExprIn`,
//! and the executor's row tests):
//! - `=` is the AND of the pairs' `=`, `<>` the OR of their `<>` (three-valued
//!   logic gives PostgreSQL's NULL rules: `(1, NULL) = (2, 2)` is false);
//! - `<`, `<=`, `>`, `>=` are one [`Expr::RowCompare`], the lexicographic
//!   comparison, in which the first pair with a NULL makes the result NULL;
//! - a one-field row compares as its field (PostgreSQL returns the single
//!   operator);
//! - `x IN (r1, r2)` is the OR of `x = rᵢ` (row comparisons when both are
//!   rows), `NOT IN` the AND of `x <> rᵢ`;
//! - `IS NULL` holds when every field is NULL, `IS NOT NULL` when none is
//!   (one [`Expr::RowIsNull`], which constant folding splits into the
//!   fields' tests, so that binding errors come before folding errors);
//! - `IS DISTINCT FROM` is the OR of the pairs' `IS DISTINCT FROM`.
//!
//! Every pair resolves its operator as a lone operator would (so a pair
//! without an operator reports `operator does not exist: integer < boolean`).
//! Rows of different lengths fail with `unequal number of entries in row
//! expressions` (42601); a row against a non-row fails as PostgreSQL's
//! `record` type does (`operator does not exist: record = integer`).
//!
//! A row compared with a row-valued subquery (`(a, b) = (SELECT x, y
//! ...)`, PostgreSQL's ROWCOMPARE sublink) is a subquery whose test is the
//! row comparison with its only row (`SubqueryKind::RowCompare`): NULL when
//! it returns no row, error 21000 when it returns more than one.
//!
//! Not supported: row values as results (`SELECT (a, b)`), and operators
//! other than comparisons between a row and a subquery (0A000).

use super::{err, Binder, ExprCtx, Result, B};
use crate::error::{sqlstate, SqlError};
use sqlparser::ast as A;
use tusk_exec::expr::CmpOp;
use tusk_exec::{Expr, Value};
use tusk_storage::DataType;

/// The fields of a row constructor: `(a, b)` (two or more items in
/// parentheses) or `ROW(...)` (any number, `ROW()` too); `None` for any other
/// expression.
pub(crate) fn row_items(e: &A::Expr) -> Option<Vec<&A::Expr>> {
    let mut e = e;
    while let A::Expr::Nested(inner) = e {
        e = inner;
    }
    match e {
        A::Expr::Tuple(items) => Some(items.iter().collect()),
        A::Expr::Function(f) => {
            let [name] = f.name.0.as_slice() else {
                return None;
            };
            let ident = name.as_ident()?;
            if ident.quote_style.is_some() || !ident.value.eq_ignore_ascii_case("row") {
                return None;
            }
            if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
                return None;
            }
            let A::FunctionArguments::List(list) = &f.args else {
                return None;
            };
            if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
                return None;
            }
            list.args
                .iter()
                .map(|a| match a {
                    A::FunctionArg::Unnamed(A::FunctionArgExpr::Expr(x)) => Some(x),
                    _ => None,
                })
                .collect()
        }
        _ => None,
    }
}

/// Whether `e` is a parenthesised subquery.
fn is_subquery(e: &A::Expr) -> bool {
    subquery_of(e).is_some()
}

/// The query of a parenthesised subquery.
fn subquery_of(e: &A::Expr) -> Option<&A::Query> {
    let mut e = e;
    while let A::Expr::Nested(inner) = e {
        e = inner;
    }
    match e {
        A::Expr::Subquery(q) => Some(q),
        _ => None,
    }
}

/// PostgreSQL's error for an operator between a row and a non-row (both
/// names are type names; a row is `record`).
fn record_operator_error(left: &str, op: &str, right: &str) -> SqlError {
    tusk_exec::func::resolve::no_operator(left, op, right).into()
}

/// The left side of a row IN list.
enum Side {
    Row(Vec<B>),
    Value(B),
}

/// PostgreSQL's checks before it compares two rows: the same number of
/// fields, and at least one.
fn comparable_lengths(l: &[B], r: &[B]) -> Result<()> {
    if l.len() != r.len() {
        return Err(unequal_rows());
    }
    if l.is_empty() {
        return err(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "cannot compare rows of zero length",
        );
    }
    Ok(())
}

fn unequal_rows() -> SqlError {
    SqlError::coded(
        sqlstate::SYNTAX_ERROR,
        "unequal number of entries in row expressions",
    )
}

impl Binder<'_> {
    /// Binds each field of a row.
    pub(crate) fn row_fields(&mut self, items: &[&A::Expr], ctx: &mut ExprCtx) -> Result<Vec<B>> {
        items.iter().map(|x| self.expr(x, ctx)).collect()
    }

    /// `left op right` where at least one side is a row constructor; `None`
    /// when neither is (the caller binds an ordinary operator).
    pub(crate) fn row_operator(
        &mut self,
        left: &A::Expr,
        op: &A::BinaryOperator,
        right: &A::Expr,
        ctx: &mut ExprCtx,
    ) -> Result<Option<B>> {
        let (lrow, rrow) = (row_items(left), row_items(right));
        if lrow.is_none() && rrow.is_none() {
            return Ok(None);
        }
        let symbol = op.to_string();
        let (l, r) = match (lrow, rrow) {
            (Some(l), Some(r)) => (self.row_fields(&l, ctx)?, self.row_fields(&r, ctx)?),
            (Some(_), None) => {
                if let (Some(q), Some(cmp)) = (subquery_of(right), super::expr::cmp_op(op)) {
                    return self
                        .sublink(left, q, cmp, super::expr::Sublink::Row, ctx)
                        .map(Some);
                }
                if is_subquery(right) {
                    return err(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "comparing a row constructor with a subquery is not supported",
                    );
                }
                let l = row_items(left).expect("a row");
                self.row_fields(&l, ctx)?;
                let r = self.expr(right, ctx)?;
                return Err(record_operator_error("record", &symbol, r.type_name()));
            }
            (None, Some(r)) => {
                let l = self.expr(left, ctx)?;
                self.row_fields(&r, ctx)?;
                return Err(record_operator_error(l.type_name(), &symbol, "record"));
            }
            (None, None) => unreachable!("handled above"),
        };
        match super::expr::cmp_op(op) {
            Some(cmp) => self.row_comparison(cmp, l, r).map(|e| Some(B::known(e))),
            None => self.row_other_operator(op, l, r),
        }
    }

    /// `ROW(l) op ROW(r)` for a comparison operator (see the module doc).
    pub(crate) fn row_comparison(&mut self, op: CmpOp, l: Vec<B>, r: Vec<B>) -> Result<Expr> {
        comparable_lengths(&l, &r)?;
        let mut lefts = Vec::with_capacity(l.len());
        let mut rights = Vec::with_capacity(r.len());
        for (a, b) in l.into_iter().zip(r) {
            let (le, re, _) = self.operator(op.symbol(), a, b)?;
            lefts.push(le);
            rights.push(re);
        }
        if lefts.len() == 1 {
            let (le, re) = (lefts.pop().unwrap(), rights.pop().unwrap());
            return Ok(Expr::cmp(op, le, re));
        }
        let pairs = lefts
            .into_iter()
            .zip(rights)
            .map(|(le, re)| Expr::cmp(op, le, re));
        Ok(match op {
            CmpOp::Eq => Expr::and_all(pairs).expect("two or more pairs"),
            CmpOp::Ne => Expr::or_all(pairs).expect("two or more pairs"),
            _ => {
                let (left, right) = pairs
                    .map(|c| match c {
                        Expr::Cmp { left, right, .. } => (*left, *right),
                        _ => unreachable!("built as a comparison"),
                    })
                    .unzip();
                Expr::RowCompare { op, left, right }
            }
        })
    }

    /// Two rows under an operator that is not a comparison: PostgreSQL
    /// resolves it pair by pair, then refuses it as a row comparison.
    fn row_other_operator(
        &mut self,
        op: &A::BinaryOperator,
        l: Vec<B>,
        r: Vec<B>,
    ) -> Result<Option<B>> {
        comparable_lengths(&l, &r)?;
        for (a, b) in l.into_iter().zip(r) {
            let pair = self.binary(a, op, b)?;
            if pair.ty() != DataType::Bool {
                return err(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "row comparison operator must yield type boolean, not type {}",
                        pair.type_name()
                    ),
                );
            }
        }
        Err(SqlError::coded(
            sqlstate::UNDEFINED_FUNCTION,
            format!("could not determine interpretation of row comparison operator {op}"),
        )
        .with_hint("Row comparison operators must be associated with btree operator families."))
    }

    /// `row IS [NOT] NULL`: every field NULL, or every field not NULL. The
    /// constant-folding pass splits it into the fields' tests
    /// ([`Expr::RowIsNull`]), after binding has raised its own errors.
    pub(crate) fn row_is_null(
        &mut self,
        items: &[&A::Expr],
        negated: bool,
        ctx: &mut ExprCtx,
    ) -> Result<B> {
        let fields = self.row_fields(items, ctx)?;
        Ok(B::known(Expr::RowIsNull {
            fields: fields.into_iter().map(|b| b.e).collect(),
            negated,
        }))
    }

    /// `ROW(l) IS [NOT] DISTINCT FROM ROW(r)`: the OR of the pairs'
    /// `IS DISTINCT FROM` (false for two empty rows), negated for `NOT`.
    pub(crate) fn row_distinct(&mut self, l: Vec<B>, r: Vec<B>, negated: bool) -> Result<B> {
        if l.len() != r.len() {
            return Err(unequal_rows());
        }
        let mut tests = Vec::with_capacity(l.len());
        for (a, b) in l.into_iter().zip(r) {
            let (le, re, _) = self.operator("=", a, b)?;
            tests.push(Expr::IsDistinct {
                left: Box::new(le),
                right: Box::new(re),
                negated: false,
            });
        }
        let distinct = Expr::or_all(tests).unwrap_or(Expr::Const {
            value: Value::Bool(false),
            ty: DataType::Bool,
        });
        Ok(B::known(if negated {
            Expr::Not(Box::new(distinct))
        } else {
            distinct
        }))
    }

    /// `lhs [NOT] IN (items)` where the left side or an item is a row: the
    /// OR of `lhs = item` (AND of `<>` for NOT IN), each a row comparison
    /// when both are rows, in the items' order.
    pub(crate) fn row_in_list(
        &mut self,
        lhs: &A::Expr,
        list: &[A::Expr],
        negated: bool,
        ctx: &mut ExprCtx,
    ) -> Result<Option<B>> {
        let lrow = row_items(lhs);
        let rows: Vec<Option<Vec<&A::Expr>>> = list.iter().map(row_items).collect();
        if lrow.is_none() && rows.iter().all(Option::is_none) {
            return Ok(None);
        }
        let (op, symbol) = if negated {
            (CmpOp::Ne, "<>")
        } else {
            (CmpOp::Eq, "=")
        };
        let left = match &lrow {
            Some(items) => Side::Row(self.row_fields(items, ctx)?),
            None => Side::Value(self.expr(lhs, ctx)?),
        };
        let mut tests = Vec::with_capacity(list.len());
        for (item, row) in list.iter().zip(&rows) {
            let test = match (&left, row) {
                (Side::Row(lf), Some(items)) => {
                    let rf = self.row_fields(items, ctx)?;
                    self.row_comparison(op, lf.clone(), rf)?
                }
                (Side::Row(_), None) => {
                    let r = self.expr(item, ctx)?;
                    return Err(record_operator_error("record", symbol, r.type_name()));
                }
                (Side::Value(l), Some(items)) => {
                    self.row_fields(items, ctx)?;
                    return Err(record_operator_error(l.type_name(), symbol, "record"));
                }
                (Side::Value(l), None) => {
                    let r = self.expr(item, ctx)?;
                    let (le, re, _) = self.operator(symbol, l.clone(), r)?;
                    Expr::cmp(op, le, re)
                }
            };
            tests.push(test);
        }
        let combined = if negated {
            Expr::and_all(tests)
        } else {
            Expr::or_all(tests)
        };
        Ok(Some(B::known(combined.expect("a non-empty list"))))
    }
}
