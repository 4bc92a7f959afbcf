//! Conditional expressions: CASE, COALESCE, NULLIF, GREATEST and LEAST.
//!
//! CASE and COALESCE decide per row which argument gives the result, and
//! evaluate each argument only for the rows that reach it (a narrowed active
//! mask), as PostgreSQL's row-at-a-time evaluation does: in
//! `CASE WHEN x = 0 THEN 0 ELSE 1 / x END` the division never sees a zero.
//! The result is then gathered row by row from the branch each row took.
//! NULLIF, GREATEST and LEAST evaluate all their arguments, as PostgreSQL
//! does.

use super::compare::{check_same, cmp_rows, compare, CmpOp, TextOrder};
use super::{bools, live, Expr};
use crate::error::{ExecError, Result};
use crate::value::Value;
use crate::vector::{physical, Batch, Vector};
use std::cmp::Ordering;
use tusk_storage::DataType;

/// Marks a row that no branch took (its result is NULL).
const NO_BRANCH: u32 = u32::MAX;

/// Builds the result: row `i` from `branches[pick[i]]`, NULL for
/// [`NO_BRANCH`]. A single branch that took every row is returned as is.
/// Branches of another representation than `ty` (a binder bug) are an
/// error, not a panic.
fn gather(branches: Vec<Vector>, pick: &[u32], ty: DataType) -> Result<Vector> {
    if branches.iter().any(|b| b.physical() != physical(ty)) {
        return Err(ExecError::new(format!(
            "branch results are not all of type {}",
            ty.display_name()
        )));
    }
    if branches.len() == 1 && pick.iter().all(|&p| p == 0) {
        return Ok(branches.into_iter().next().unwrap());
    }
    let mut out = Vector::with_capacity(ty, pick.len());
    for (i, &p) in pick.iter().enumerate() {
        if p == NO_BRANCH {
            out.push_value(&Value::Null);
        } else {
            out.push_from(&branches[p as usize], i);
        }
    }
    Ok(out)
}

pub(super) fn eval_case(
    operand: Option<&Expr>,
    whens: &[(Expr, Expr)],
    otherwise: Option<&Expr>,
    ty: DataType,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let mut remaining: Vec<bool> = (0..n).map(|i| live(active, i)).collect();
    let mut pick = vec![NO_BRANCH; n];
    let mut branches = Vec::new();
    let subject = match operand {
        Some(o) => Some((o.eval_active(batch, active)?, o.data_type())),
        None => None,
    };
    for (w, then) in whens {
        if !remaining.contains(&true) {
            break;
        }
        let wv = w.eval_active(batch, Some(&remaining))?;
        let cond = match &subject {
            Some((s, sty)) => compare(CmpOp::Eq, s, &wv, TextOrder::between(*sty, w.data_type()))?,
            None => wv,
        };
        let (b, nulls) = bools(&cond)?;
        let takes: Vec<bool> = (0..n)
            .map(|i| remaining[i] && b[i] && !nulls.is_some_and(|m| m[i]))
            .collect();
        if !takes.contains(&true) {
            continue;
        }
        let rv = then.eval_active(batch, Some(&takes))?;
        let k = branches.len() as u32;
        branches.push(rv);
        for i in 0..n {
            if takes[i] {
                pick[i] = k;
                remaining[i] = false;
            }
        }
    }
    if let Some(e) = otherwise {
        if remaining.contains(&true) {
            let ev = e.eval_active(batch, Some(&remaining))?;
            let k = branches.len() as u32;
            branches.push(ev);
            for i in 0..n {
                if remaining[i] {
                    pick[i] = k;
                }
            }
        }
    }
    if branches.is_empty() {
        return Ok(Vector::nulls(ty, n));
    }
    gather(branches, &pick, ty)
}

pub(super) fn eval_coalesce(
    args: &[Expr],
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let ty = args[0].data_type();
    let mut out = args[0].eval_active(batch, active)?;
    for a in &args[1..] {
        let need: Vec<bool> = (0..n).map(|i| live(active, i) && out.is_null(i)).collect();
        if !need.contains(&true) {
            break;
        }
        let v = a.eval_active(batch, Some(&need))?;
        let pick: Vec<u32> = need.iter().map(|&t| t as u32).collect();
        out = gather(vec![out, v], &pick, ty)?;
    }
    Ok(out)
}

pub(super) fn eval_nullif(
    left: &Expr,
    right: &Expr,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let (lt, rt) = (left.data_type(), right.data_type());
    let bp = TextOrder::between(lt, rt);
    let l = left.eval_active(batch, active)?;
    let r = right.eval_active(batch, active)?;
    // A narrower integer or float `left` is compared in `right`'s type
    // (PostgreSQL's cross-type `=`); the result keeps `left`'s.
    let eq = if lt != rt {
        let widened = crate::env::with(|env| {
            crate::cast::cast_vector(&l, lt, tusk_storage::SqlType::of(rt), true, env, active)
        })?;
        compare(CmpOp::Eq, &widened, &r, bp)?
    } else {
        compare(CmpOp::Eq, &l, &r, bp)?
    };
    let (b, nulls) = bools(&eq)?;
    let null: Vec<bool> = (0..batch.len)
        .map(|i| l.is_null(i) || (b[i] && !nulls.is_some_and(|m| m[i])))
        .collect();
    Ok(Vector::new(l.data, Some(null)))
}

pub(super) fn eval_minmax(
    args: &[Expr],
    greatest: bool,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let ty = args[0].data_type();
    let bp = if args.iter().all(|a| a.data_type() == ty) {
        TextOrder::of(ty)
    } else {
        TextOrder::Bytes
    };
    let vs = args
        .iter()
        .map(|a| a.eval_active(batch, active))
        .collect::<Result<Vec<_>>>()?;
    for v in &vs[1..] {
        check_same(&vs[0], v)?;
    }
    let better = if greatest {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let mut pick = vec![NO_BRANCH; n];
    for (k, v) in vs.iter().enumerate() {
        for (i, p) in pick.iter_mut().enumerate() {
            if v.is_null(i) {
                continue;
            }
            if *p == NO_BRANCH || cmp_rows(v, i, &vs[*p as usize], i, bp) == better {
                *p = k as u32;
            }
        }
    }
    gather(vs, &pick, ty)
}
