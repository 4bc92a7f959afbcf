//! Pattern matching: `[NOT] LIKE`, `[NOT] ILIKE` and the regular-expression
//! operators `~ ~* !~ !~*` (and so `SIMILAR TO`, which PostgreSQL turns into
//! `~` over `similar_to_escape(pattern)`).
//!
//! LIKE matches over UTF-8 bytes: `%` any run of characters, `_` exactly one
//! character, `\` makes the next character literal (a pattern may not end
//! with it). ILIKE folds ASCII letters only, as PostgreSQL does under the C
//! collation (`'ñ' ILIKE 'Ñ'` is false). Regular expressions go through
//! [`crate::func::regex`], which translates PostgreSQL's syntax and caches
//! compiled patterns. Each batch compiles a pattern once while consecutive
//! rows share it (the usual case: a constant pattern).

use super::{live, or_nulls, Expr};
use crate::error::{sqlstate, ExecError, Result};
use crate::func::regex::{self, ReFlags};
use crate::vector::{Batch, Data, Strings, Vector};

/// A compiled LIKE pattern.
#[derive(Debug, Clone)]
pub struct LikePattern {
    tokens: Vec<LikeToken>,
    case_insensitive: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum LikeToken {
    /// `%`.
    Any,
    /// `_`.
    One,
    /// A literal byte (ASCII-lowercased for ILIKE).
    Lit(u8),
    /// A `\` ending the pattern: an error if matching reaches it with text
    /// left, as in PostgreSQL (where `'a' LIKE 'a\'` is simply false).
    TrailingEscape,
}

/// Byte length of the UTF-8 character starting with `b`.
#[inline]
pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

impl LikePattern {
    pub fn compile(p: &str, case_insensitive: bool) -> Result<LikePattern> {
        let fold = |b: u8| {
            if case_insensitive {
                b.to_ascii_lowercase()
            } else {
                b
            }
        };
        let mut tokens = Vec::new();
        let mut chars = p.chars();
        let mut buf = [0u8; 4];
        while let Some(c) = chars.next() {
            let lit = match c {
                '%' => {
                    // Runs of `%` are one `%`.
                    if tokens.last() != Some(&LikeToken::Any) {
                        tokens.push(LikeToken::Any);
                    }
                    continue;
                }
                '_' => {
                    tokens.push(LikeToken::One);
                    continue;
                }
                '\\' => match chars.next() {
                    Some(e) => e,
                    None => {
                        tokens.push(LikeToken::TrailingEscape);
                        continue;
                    }
                },
                c => c,
            };
            for &b in lit.encode_utf8(&mut buf).as_bytes() {
                tokens.push(LikeToken::Lit(fold(b)));
            }
        }
        Ok(LikePattern {
            tokens,
            case_insensitive,
        })
    }

    pub fn matches(&self, s: &str) -> Result<bool> {
        let text = s.as_bytes();
        let fold = |b: u8| {
            if self.case_insensitive {
                b.to_ascii_lowercase()
            } else {
                b
            }
        };
        // Greedy matching that backtracks to the last `%` (linear for the
        // usual patterns). Positions in `text` stay on character boundaries.
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.tokens.get(p) {
                Some(LikeToken::Any) => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(LikeToken::One) => {
                    t += utf8_len(text[t]);
                    p += 1;
                }
                Some(LikeToken::Lit(c)) if *c == fold(text[t]) => {
                    t += 1;
                    p += 1;
                }
                Some(LikeToken::TrailingEscape) => {
                    return Err(ExecError::coded(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "LIKE pattern must not end with escape character",
                    ))
                }
                _ => match star {
                    Some((sp, st)) => {
                        let next = st + utf8_len(text[st]);
                        p = sp + 1;
                        t = next;
                        star = Some((sp, next));
                    }
                    None => return Ok(false),
                },
            }
        }
        Ok(self.tokens[p..].iter().all(|t| *t == LikeToken::Any))
    }
}

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
    let v = arg.eval_active(batch, active)?;
    let p = pattern.eval_active(batch, active)?;
    let (a, b) = texts(&v, &p, "LIKE")?;
    let nulls = or_nulls(&v, &p);
    let mut out = Vec::with_capacity(n);
    let mut cached: Option<(&[u8], LikePattern)> = None;
    for i in 0..n {
        if !live(active, i) || nulls.as_ref().is_some_and(|m| m[i]) {
            out.push(false);
            continue;
        }
        let pat = b.get(i);
        if cached.as_ref().is_none_or(|(raw, _)| *raw != pat) {
            cached = Some((pat, LikePattern::compile(b.get_str(i), case_insensitive)?));
        }
        let m = cached.as_ref().unwrap().1.matches(a.get_str(i))?;
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
