//! Pattern matching: `[NOT] LIKE`, `[NOT] ILIKE` and the regular-expression
//! operators `~ ~* !~ !~*` (and so `SIMILAR TO`, which PostgreSQL turns into
//! `~` over `similar_to_escape(pattern)`).
//!
//! LIKE patterns are compiled and matched by [`LikePattern`] (see `like`).
//! Regular expressions go through [`crate::func::regex`], which translates
//! PostgreSQL's syntax and caches compiled patterns. Each batch compiles a
//! pattern once while consecutive rows share it (the usual case: a
//! constant pattern, which is never made into a vector of copies).

use super::like::LikePattern;
use super::{live, or_nulls, Expr};
use crate::error::{ExecError, Result};
use crate::func::regex::{self, ReFlags};
use crate::value::Value;
use crate::vector::{Batch, Data, Strings, Vector};

/// The text operands of a pattern match.
fn texts<'a>(v: &'a Vector, p: &'a Vector, what: &str) -> Result<(&'a Strings, &'a Strings)> {
    match (&v.data, &p.data) {
        (Data::Text(a), Data::Text(b)) => Ok((a, b)),
        _ => Err(ExecError::new(format!("{what} expects text operands"))),
    }
}

pub(super) fn eval_like(
    arg: &Expr,
    pattern: &Expr,
    negated: bool,
    case_insensitive: bool,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let v = arg.eval_ref(batch, active)?;
    // A constant pattern is compiled once for the batch; any other is
    // evaluated to a vector and compiled while consecutive rows share it.
    let (constant, patterns) = match pattern {
        Expr::Const {
            value: Value::Null, ..
        } => return Ok(Vector::new(Data::Bool(vec![false; n]), Some(vec![true; n]))),
        Expr::Const {
            value: Value::Text(p),
            ..
        } => (Some(LikePattern::compile(p, case_insensitive)?), None),
        _ => (None, Some(pattern.eval_ref(batch, active)?)),
    };
    let (a, b) = match &patterns {
        Some(p) => {
            let (a, b) = texts(&v, p, "LIKE")?;
            (a, Some(b))
        }
        None => match &v.data {
            Data::Text(a) => (a, None),
            _ => return Err(ExecError::new("LIKE expects text operands")),
        },
    };
    let nulls = match &patterns {
        Some(p) => or_nulls(&v, p),
        None => v.nulls.clone(),
    };
    let mut out = Vec::with_capacity(n);
    let mut cached: Option<(&[u8], LikePattern)> = None;
    let mut folded = Vec::new();
    for i in 0..n {
        if !live(active, i) || nulls.as_ref().is_some_and(|m| m[i]) {
            out.push(false);
            continue;
        }
        let compiled = match (&constant, b) {
            (Some(c), _) => c,
            (None, Some(b)) => {
                let pat = b.get(i);
                if cached.as_ref().is_none_or(|(raw, _)| *raw != pat) {
                    cached = Some((pat, LikePattern::compile(b.get_str(i), case_insensitive)?));
                }
                &cached.as_ref().expect("compiled above").1
            }
            (None, None) => unreachable!("a pattern vector without a constant"),
        };
        let m = compiled.matches_bytes(a.get(i), &mut folded)?;
        out.push(m != negated);
    }
    Ok(Vector::new(Data::Bool(out), nulls))
}

pub(super) fn eval_regex(
    arg: &Expr,
    pattern: &Expr,
    negated: bool,
    case_insensitive: bool,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let v = arg.eval_active(batch, active)?;
    let p = pattern.eval_active(batch, active)?;
    let (a, b) = texts(&v, &p, "regular expression match")?;
    let nulls = or_nulls(&v, &p);
    let flags = ReFlags {
        case_insensitive,
        ..ReFlags::default()
    };
    let mut out = Vec::with_capacity(n);
    let mut cached: Option<(&[u8], std::sync::Arc<::regex::Regex>)> = None;
    for i in 0..n {
        if !live(active, i) || nulls.as_ref().is_some_and(|m| m[i]) {
            out.push(false);
            continue;
        }
        let pat = b.get(i);
        if cached.as_ref().is_none_or(|(raw, _)| *raw != pat) {
            cached = Some((pat, regex::compile(b.get_str(i), flags)?));
        }
        let m = cached.as_ref().unwrap().1.is_match(a.get_str(i));
        out.push(m != negated);
    }
    Ok(Vector::new(Data::Bool(out), nulls))
}
