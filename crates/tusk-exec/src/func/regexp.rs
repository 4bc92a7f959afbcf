//! The SQL functions over patterns: `regexp_replace`, `regexp_like`,
//! `regexp_count`, `regexp_match`, `substring(s FROM pattern)` and `substring(s SIMILAR p
//! ESCAPE e)`, and the pattern translators PostgreSQL's grammar calls:
//! `similar_to_escape` (SIMILAR TO into a regular expression) and
//! `like_escape` (LIKE ... ESCAPE into the default `\\` escape). Patterns
//! compile through [`super::regex`], which translates PostgreSQL's syntax
//! and caches; consecutive rows with the same pattern reuse one compiled
//! regex without a cache lookup.
//!
//! [`pg_matches`] finds matches as PostgreSQL's `setup_regexp_matches` does
//! for `regexp_match`, and for the set-returning `regexp_matches` and
//! `regexp_split_to_table` (in `crate::srf`): after a zero-length match the
//! search resumes one character later, and the split functions ignore
//! "degenerate" matches, zero-length ones at either end of the string or
//! right after the previous match. [`groups_array`] is a match as those
//! functions return it: a `text[]` of its capture groups.

use super::math::bad_args;
use super::regex::{compile, parse_flags, ReFlags};
use super::string::{int_arg, text_arg, text_result};
use super::{Call, Func};
use crate::array::ArrayValue;
use crate::error::{sqlstate, ExecError, Result};
use crate::value::Value;
use crate::vector::{Data, Strings, Vector};
use regex::{Captures, Regex};
use std::sync::Arc;

/// PostgreSQL's `similar_to_escape`: a SIMILAR TO pattern as a regular
/// expression anchored at both ends. `escape`: `None` for the default
/// backslash, `Some("")` for none.
pub fn similar_to_regex(pattern: &str, escape: Option<&str>) -> Result<String> {
    let esc = match escape {
        None => Some('\\'),
        Some(e) => {
            let mut it = e.chars();
            match (it.next(), it.next()) {
                (None, _) => None,
                (Some(c), None) => Some(c),
                _ => {
                    return Err(ExecError::coded(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "invalid escape string",
                    )
                    .with_hint("Escape string must be empty or one character."))
                }
            }
        }
    };
    let mut r = String::from("^(?:");
    let mut after_escape = false;
    let mut nquotes = 0;
    let mut class_depth = 0;
    let mut class_start = 0;
    for c in pattern.chars() {
        if after_escape {
            if c == '"' && class_depth < 1 {
                match nquotes {
                    0 => r.push_str("){1,1}?("),
                    1 => r.push_str("){1,1}(?:"),
                    _ => {
                        return Err(ExecError::coded(
                            "2200C",
                            "SQL regular expression may not contain more than two escape-double-quote separators",
                        ))
                    }
                }
                nquotes += 1;
            } else {
                r.push('\\');
                r.push(c);
            }
            after_escape = false;
        } else if Some(c) == esc {
            after_escape = true;
        } else if class_depth > 0 {
            if c == '\\' {
                r.push('\\');
            }
            r.push(c);
            if c == ']' && class_start > 2 {
                class_depth -= 1;
            } else if c == '[' {
                class_depth += 1;
            }
            if c == '^' {
                class_start += 1;
            } else {
                class_start = 3;
            }
        } else {
            match c {
                '[' => {
                    r.push('[');
                    class_depth += 1;
                    class_start = 1;
                }
                '%' => r.push_str(".*"),
                '_' => r.push('.'),
                '(' => r.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    r.push('\\');
                    r.push(c);
                }
                c => r.push(c),
            }
        }
    }
    r.push_str(")$");
    Ok(r)
}

/// PostgreSQL's `like_escape`: a LIKE pattern with escape character
/// `escape` rewritten to use the default `\`.
pub fn like_escape(pattern: &str, escape: &str, out: &mut String) -> Result<()> {
    let mut it = escape.chars();
    let e = match (it.next(), it.next()) {
        (None, _) => {
            for c in pattern.chars() {
                if c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            return Ok(());
        }
        (Some(e), None) => e,
        _ => {
            return Err(ExecError::coded(
                sqlstate::INVALID_ESCAPE_SEQUENCE,
                "invalid escape string",
            )
            .with_hint("Escape string must be empty or one character."))
        }
    };
    if e == '\\' {
        out.push_str(pattern);
        return Ok(());
    }
    let mut after = false;
    for c in pattern.chars() {
        if c == e && !after {
            out.push('\\');
            after = true;
        } else if c == '\\' {
            out.push('\\');
            if !after {
                out.push('\\');
            }
            after = false;
        } else {
            out.push(c);
            after = false;
        }
    }
    Ok(())
}

/// Expands a `regexp_replace` replacement: `\1`..`\9` the groups, `\&` the
/// whole match, `\\` a backslash.
fn expand(rep: &str, caps: &regex::Captures, out: &mut String) {
    let mut chars = rep.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                if let Some(m) = caps.get(d as usize - '0' as usize) {
                    out.push_str(m.as_str());
                }
            }
            Some('&') => {
                chars.next();
                out.push_str(&caps[0]);
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

/// The matches of `re` in `s`, all of them with `global`, else the first.
/// With `ignore_degenerate`, zero-length matches at the start or end of
/// `s`, or where the previous match ended, are skipped (the split
/// functions). The search after a zero-length match starts one character
/// later; the pattern still sees the text before the search position (for
/// `^`, `\b` and the like), as PostgreSQL's `RE_wchar_execute` does.
pub(crate) fn pg_matches<'s>(
    re: &Regex,
    s: &'s str,
    global: bool,
    ignore_degenerate: bool,
) -> Vec<Captures<'s>> {
    let mut out = Vec::new();
    let (mut from, mut prev_end) = (0, 0);
    while let Some(caps) = re.captures_at(s, from) {
        let m = caps.get(0).expect("group 0 is the match");
        let (start, end) = (m.start(), m.end());
        if !ignore_degenerate || (start < s.len() && end > prev_end) {
            out.push(caps);
        }
        prev_end = end;
        if !global {
            break;
        }
        from = end;
        if start == end {
            match s[end..].chars().next() {
                Some(c) => from += c.len_utf8(),
                None => break,
            }
        }
    }
    out
}

/// A match as `regexp_match(es)` return it: its capture groups as a
/// `text[]` (NULL for a group that took no part), or the whole match when
/// the pattern has no groups.
pub(crate) fn groups_array(caps: &Captures) -> ArrayValue {
    let text = |m: Option<regex::Match>| m.map_or(Value::Null, |m| Value::Text(m.as_str().into()));
    let items = if caps.len() > 1 {
        (1..caps.len()).map(|g| text(caps.get(g))).collect()
    } else {
        vec![text(caps.get(0))]
    };
    ArrayValue::new(tusk_storage::TEXT_ARRAY, items)
}

/// Flags of a `regexp_*` call from its text argument `k`, if present.
fn call_flags(
    c: &Call,
    k: usize,
    i: usize,
    global: Option<&mut bool>,
    func: &str,
) -> Result<ReFlags> {
    if c.args.len() > k {
        flags_of(text_arg(c, k, i), global, func)
    } else {
        Ok(ReFlags::default())
    }
}

/// Flag letters of function `func`; `global` receives `g` where the
/// function takes it, else `g` is PostgreSQL's error (after the letters
/// are checked, as PostgreSQL checks them).
pub(crate) fn flags_of(letters: &str, global: Option<&mut bool>, func: &str) -> Result<ReFlags> {
    let mut flags = ReFlags::default();
    let mut g = false;
    parse_flags(letters, &mut flags, Some(&mut g))?;
    match global {
        Some(out) => *out = g,
        None if g => {
            let e = ExecError::coded(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("{func}() does not support the \"global\" option"),
            );
            return Err(if func == "regexp_match" {
                e.with_hint("Use the regexp_matches function instead.")
            } else {
                e
            });
        }
        None => {}
    }
    Ok(flags)
}

/// Compiles the pattern of row `i`, reusing the previous row's when equal.
fn row_regex<'a>(
    c: &'a Call,
    i: usize,
    flags: ReFlags,
    last: &mut Option<(&'a str, ReFlags, Arc<Regex>)>,
) -> Result<Arc<Regex>> {
    let pat = text_arg(c, 1, i);
    if let Some((p, f, re)) = last {
        if *p == pat && *f == flags {
            return Ok(re.clone());
        }
    }
    let re = compile(pat, flags)?;
    *last = Some((pat, flags, re.clone()));
    Ok(re)
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let mut last = None;
    match f {
        Func::LikeEscape => text_result(c, |i, o| {
            like_escape(text_arg(c, 0, i), text_arg(c, 1, i), o)
        }),
        Func::SimilarToEscape => text_result(c, |i, o| {
            let esc = (c.args.len() == 2).then(|| text_arg(c, 1, i));
            o.push_str(&similar_to_regex(text_arg(c, 0, i), esc)?);
            Ok(())
        }),
        Func::RegexpReplace => text_result(c, |i, o| {
            let mut global = false;
            let flags = call_flags(c, 3, i, Some(&mut global), "regexp_replace")?;
            let re = row_regex(c, i, flags, &mut last)?;
            let (s, rep) = (text_arg(c, 0, i), text_arg(c, 2, i));
            let mut at = 0;
            for caps in re.captures_iter(s) {
                let m = caps.get(0).unwrap();
                o.push_str(&s[at..m.start()]);
                expand(rep, &caps, o);
                at = m.end();
                if !global {
                    break;
                }
            }
            o.push_str(&s[at..]);
            Ok(())
        }),
        Func::RegexpLike => {
            let mut out = Vec::with_capacity(c.n);
            for i in 0..c.n {
                out.push(if c.computes(i) {
                    let flags = call_flags(c, 2, i, None, "regexp_like")?;
                    row_regex(c, i, flags, &mut last)?.is_match(text_arg(c, 0, i))
                } else {
                    false
                });
            }
            Ok(Vector::new(Data::Bool(out), c.nulls.clone()))
        }
        Func::RegexpMatch => {
            let mut out = Vector::with_capacity(c.ty, c.n);
            for i in 0..c.n {
                if !c.computes(i) {
                    out.push_value(&Value::Null);
                    continue;
                }
                let flags = call_flags(c, 2, i, None, "regexp_match")?;
                let re = row_regex(c, i, flags, &mut last)?;
                let found = pg_matches(&re, text_arg(c, 0, i), false, false);
                out.push_value(&match found.first() {
                    Some(caps) => Value::Array(Box::new(groups_array(caps))),
                    None => Value::Null,
                });
            }
            Ok(out)
        }
        Func::RegexpCount => {
            let mut out = Vec::with_capacity(c.n);
            for i in 0..c.n {
                if !c.computes(i) {
                    out.push(0);
                    continue;
                }
                let start = if c.args.len() > 2 {
                    int_arg(c, 2, i)
                } else {
                    1
                };
                if start <= 0 {
                    return Err(ExecError::coded(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"start\": {start}"),
                    ));
                }
                let flags = call_flags(c, 3, i, None, "regexp_count")?;
                let re = row_regex(c, i, flags, &mut last)?;
                let s = text_arg(c, 0, i);
                let from = s
                    .char_indices()
                    .nth(start as usize - 1)
                    .map_or(s.len(), |(b, _)| b);
                out.push(re.find_iter(&s[from..]).count() as i32);
            }
            Ok(Vector::new(Data::Int4(out), c.nulls.clone()))
        }
        Func::SubstringRegex | Func::SubstringSimilar => {
            // NULL when nothing matches (or the chosen group took no part).
            let mut out = Strings::with_capacity(c.n, c.n * 8);
            let mut nulls = vec![false; c.n];
            for (i, null) in nulls.iter_mut().enumerate() {
                if !c.computes(i) {
                    *null = true;
                    out.push(b"");
                    continue;
                }
                let s = text_arg(c, 0, i);
                let re = if f == Func::SubstringSimilar {
                    compile(
                        &similar_to_regex(text_arg(c, 1, i), Some(text_arg(c, 2, i)))?,
                        ReFlags::default(),
                    )?
                } else {
                    row_regex(c, i, ReFlags::default(), &mut last)?
                };
                let found = re.captures(s).and_then(|caps| {
                    if caps.len() > 1 {
                        caps.get(1).map(|m| m.as_str())
                    } else {
                        caps.get(0).map(|m| m.as_str())
                    }
                });
                match found {
                    Some(m) => out.push(m.as_bytes()),
                    None => {
                        *null = true;
                        out.push(b"");
                    }
                }
            }
            Ok(Vector::new(Data::Text(out), Some(nulls)))
        }
        _ => Err(bad_args(f)),
    }
}
