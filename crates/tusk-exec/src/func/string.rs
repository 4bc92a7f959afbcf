//! String functions, as PostgreSQL 15 computes them in a database with the
//! C collation and UTF-8 encoding (`varlena.c`, `oracle_compat.c`).
//!
//! Positions and lengths count characters, not bytes (`octet_length`
//! excepted). Case mapping (`upper`, `lower`, `initcap`) touches ASCII
//! letters only, and only ASCII letters and digits are word characters for
//! `initcap`, as under the C collation: `upper('ñ')` is `ñ`. Results larger
//! than PostgreSQL's 1 GB value limit fail with `requested length too large`
//! (54000) before anything is allocated.
//!
//! Each kernel writes a row's result into one reused buffer that is then
//! appended to the output's string arena: no allocation per row.

use super::math::bad_args;
use super::md5::hex_digest;
use super::{Call, Func};
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::strip_blanks;
use crate::vector::{Data, Strings, Vector};
use tusk_storage::DataType;

/// PostgreSQL's `MaxAllocSize`: no value may be larger.
pub(crate) const MAX_ALLOC: i64 = 0x3fff_ffff;

pub(crate) fn too_large() -> ExecError {
    ExecError::coded(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        "requested length too large",
    )
}

/// Argument `k` of row `i` as text.
#[inline]
pub(super) fn text_arg<'a>(c: &'a Call, k: usize, i: usize) -> &'a str {
    match &c.args[k].data {
        Data::Text(s) => s.get_str(i),
        _ => "",
    }
}

/// Argument `k` of row `i` as bytes: a string's or a `bytea`'s.
#[inline]
pub(super) fn bytes_arg<'a>(c: &'a Call, k: usize, i: usize) -> &'a [u8] {
    match &c.args[k].data {
        Data::Text(s) | Data::Bytea(s) => s.get(i),
        _ => b"",
    }
}

/// Argument `k` of row `i` as an integer.
#[inline]
pub(super) fn int_arg(c: &Call, k: usize, i: usize) -> i64 {
    match &c.args[k].data {
        Data::Int2(v) => v[i] as i64,
        Data::Int4(v) => v[i] as i64,
        Data::Int8(v) => v[i],
        _ => 0,
    }
}

/// Builds a text result: `f` writes row `i`'s value into the buffer.
/// A reused per-row buffer of a string-valued kernel: `String` for text
/// results, `Vec<u8>` for bytea.
pub(super) trait RowBuffer: Default + AsRef<[u8]> {
    fn clear(&mut self);
}

impl RowBuffer for String {
    fn clear(&mut self) {
        String::clear(self)
    }
}

impl RowBuffer for Vec<u8> {
    fn clear(&mut self) {
        Vec::clear(self)
    }
}

/// The result of a string-valued kernel: `f` writes row `i`'s value into
/// one reused buffer (rows that are NULL or not selected stay empty), and
/// `wrap` names the vector type the arena becomes.
pub(super) fn strings_result<B: RowBuffer>(
    c: &Call,
    wrap: fn(Strings) -> Data,
    mut f: impl FnMut(usize, &mut B) -> Result<()>,
) -> Result<Vector> {
    let mut out = Strings::with_capacity(c.n, c.n * 8);
    let mut buf = B::default();
    for i in 0..c.n {
        buf.clear();
        if c.computes(i) {
            f(i, &mut buf)?;
        }
        out.push(buf.as_ref());
    }
    Ok(Vector::new(wrap(out), c.nulls.clone()))
}

pub(super) fn text_result(
    c: &Call,
    f: impl FnMut(usize, &mut String) -> Result<()>,
) -> Result<Vector> {
    strings_result(c, Data::Text, f)
}

pub(super) fn int_result(c: &Call, f: impl Fn(usize) -> Result<i32>) -> Result<Vector> {
    let mut out = Vec::with_capacity(c.n);
    for i in 0..c.n {
        out.push(if c.computes(i) { f(i)? } else { 0 });
    }
    Ok(Vector::new(Data::Int4(out), c.nulls.clone()))
}

/// The first `n` characters of `s` (all of it when shorter).
fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((b, _)) => &s[..b],
        None => s,
    }
}

/// `s` from character `n` (0-based) on.
fn skip_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((b, _)) => &s[b..],
        None => "",
    }
}

/// Which 0-based positions `substring(... FROM start [FOR count])` takes,
/// in characters for text and bytes for `bytea`: from `.0` on, and at
/// most `.1` of them; `None` when nothing.
pub(super) fn substring_span(
    start: i64,
    count: Option<i64>,
) -> Result<Option<(usize, Option<usize>)>> {
    let end = match count {
        Some(c) if c < 0 => {
            return Err(ExecError::coded(
                sqlstate::SUBSTRING_ERROR,
                "negative substring length not allowed",
            ))
        }
        Some(c) => Some(start + c),
        None => None,
    };
    let from = start.max(1);
    if end.is_some_and(|e| e <= from) {
        return Ok(None);
    }
    Ok(Some((
        (from - 1) as usize,
        end.map(|e| (e - from) as usize),
    )))
}

/// SQL `substring(s FROM start [FOR count])`.
fn substr(s: &str, start: i64, count: Option<i64>) -> Result<&str> {
    Ok(match substring_span(start, count)? {
        None => "",
        Some((skip, None)) => skip_chars(s, skip),
        Some((skip, Some(take))) => prefix_chars(skip_chars(s, skip), take),
    })
}

/// `btrim`/`ltrim`/`rtrim` of `s` by the characters of `set`.
fn trim<'a>(f: Func, s: &'a str, set: &str) -> &'a str {
    let in_set = |ch: char| set.contains(ch);
    match f {
        Func::Ltrim => s.trim_start_matches(in_set),
        Func::Rtrim => s.trim_end_matches(in_set),
        _ => s.trim_matches(in_set),
    }
}

/// `split_part` (negative fields count from the end, PostgreSQL 14+).
fn split_part<'a>(s: &'a str, delim: &str, field: i64) -> Result<&'a str> {
    if field == 0 {
        return Err(ExecError::coded(
            sqlstate::INVALID_PARAMETER_VALUE,
            "field position must not be zero",
        ));
    }
    if s.is_empty() {
        return Ok("");
    }
    if delim.is_empty() {
        return Ok(if field == 1 || field == -1 { s } else { "" });
    }
    if field > 0 {
        Ok(s.split(delim).nth((field - 1) as usize).unwrap_or(""))
    } else {
        Ok(s.rsplit(delim).nth((-field - 1) as usize).unwrap_or(""))
    }
}

/// `lpad` / `rpad` into `out`.
fn pad(left: bool, s: &str, len: i64, fill: &str, out: &mut String) -> Result<()> {
    if len <= 0 {
        return Ok(());
    }
    if len * 4 > MAX_ALLOC {
        return Err(too_large());
    }
    let len = len as usize;
    let have = s.chars().count();
    if have >= len || fill.is_empty() {
        out.push_str(prefix_chars(s, len));
        return Ok(());
    }
    let padding = fill.chars().cycle().take(len - have);
    if left {
        out.extend(padding);
        out.push_str(s);
    } else {
        out.push_str(s);
        out.extend(padding);
    }
    Ok(())
}

/// `chr(n)`.
fn chr(n: i64, out: &mut String) -> Result<()> {
    let limit = |m: String| ExecError::coded(sqlstate::PROGRAM_LIMIT_EXCEEDED, m);
    if n < 0 {
        return Err(ExecError::coded(
            sqlstate::INVALID_PARAMETER_VALUE,
            "character number must be positive",
        ));
    }
    if n == 0 {
        return Err(limit("null character not permitted".into()));
    }
    if n > 0x10ffff {
        return Err(limit(format!(
            "requested character too large for encoding: {n}"
        )));
    }
    let c = char::from_u32(n as u32)
        .ok_or_else(|| limit(format!("requested character not valid for encoding: {n}")))?;
    out.push(c);
    Ok(())
}

/// `initcap`: ASCII letters after a non-alphanumeric become upper case,
/// the others lower case.
fn initcap(s: &str, out: &mut String) {
    let mut prev_alnum = false;
    for c in s.chars() {
        let alnum = c.is_ascii_alphanumeric();
        out.push(if !alnum {
            c
        } else if prev_alnum {
            c.to_ascii_lowercase()
        } else {
            c.to_ascii_uppercase()
        });
        prev_alnum = alnum;
    }
}

/// `translate(s, from, to)`.
fn translate(s: &str, from: &str, to: &str, out: &mut String) {
    let to: Vec<char> = to.chars().collect();
    for c in s.chars() {
        match from.chars().position(|f| f == c) {
            Some(k) => {
                if let Some(t) = to.get(k) {
                    out.push(*t);
                }
            }
            None => out.push(c),
        }
    }
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let t = |k: usize, i: usize| text_arg(c, k, i);
    let int = |k: usize, i: usize| int_arg(c, k, i);
    let bpchar = c.types.first() == Some(&DataType::Bpchar);
    match f {
        Func::Length => int_result(c, |i| {
            let s = t(0, i);
            let s = if bpchar {
                // bpcharlen: trailing blanks do not count.
                std::str::from_utf8(strip_blanks(s.as_bytes())).unwrap_or(s)
            } else {
                s
            };
            Ok(s.chars().count() as i32)
        }),
        // Bytes, of text and `bytea` alike.
        Func::OctetLength => int_result(c, |i| Ok(bytes_arg(c, 0, i).len() as i32)),
        Func::BitLength => int_result(c, |i| Ok(bytes_arg(c, 0, i).len() as i32 * 8)),
        Func::Strpos => int_result(c, |i| {
            let (s, sub) = (t(0, i), t(1, i));
            Ok(match s.find(sub) {
                Some(b) => s[..b].chars().count() as i32 + 1,
                None => 0,
            })
        }),
        Func::Ascii => int_result(c, |i| Ok(t(0, i).chars().next().map_or(0, |ch| ch as i32))),
        Func::StartsWith => {
            let out = (0..c.n)
                .map(|i| c.computes(i) && t(0, i).starts_with(t(1, i)))
                .collect();
            Ok(Vector::new(Data::Bool(out), c.nulls.clone()))
        }
        Func::Upper => text_result(c, |i, o| {
            o.push_str(t(0, i));
            o.make_ascii_uppercase();
            Ok(())
        }),
        Func::Lower => text_result(c, |i, o| {
            o.push_str(t(0, i));
            o.make_ascii_lowercase();
            Ok(())
        }),
        Func::Initcap => text_result(c, |i, o| {
            initcap(t(0, i), o);
            Ok(())
        }),
        Func::Substr => text_result(c, |i, o| {
            let count = (c.args.len() == 3).then(|| int(2, i));
            o.push_str(substr(t(0, i), int(1, i), count)?);
            Ok(())
        }),
        Func::Btrim | Func::Ltrim | Func::Rtrim => text_result(c, |i, o| {
            let set = if c.args.len() == 2 { t(1, i) } else { " " };
            o.push_str(trim(f, t(0, i), set));
            Ok(())
        }),
        Func::Replace => text_result(c, |i, o| {
            let (s, from, to) = (t(0, i), t(1, i), t(2, i));
            if from.is_empty() {
                o.push_str(s);
            } else {
                let mut last = 0;
                for (b, _) in s.match_indices(from) {
                    o.push_str(&s[last..b]);
                    o.push_str(to);
                    last = b + from.len();
                }
                o.push_str(&s[last..]);
            }
            Ok(())
        }),
        Func::SplitPart => text_result(c, |i, o| {
            o.push_str(split_part(t(0, i), t(1, i), int(2, i))?);
            Ok(())
        }),
        Func::Left | Func::Right => text_result(c, |i, o| {
            let (s, n) = (t(0, i), int(1, i));
            let len = s.chars().count() as i64;
            // Characters to keep, and whether they are the leading ones.
            let keep = if n >= 0 { n.min(len) } else { (len + n).max(0) };
            o.push_str(if f == Func::Left {
                prefix_chars(s, keep as usize)
            } else {
                skip_chars(s, (len - keep) as usize)
            });
            Ok(())
        }),
        Func::Lpad | Func::Rpad => text_result(c, |i, o| {
            let fill = if c.args.len() == 3 { t(2, i) } else { " " };
            pad(f == Func::Lpad, t(0, i), int(1, i), fill, o)
        }),
        Func::Repeat => text_result(c, |i, o| {
            let (s, n) = (t(0, i), int(1, i));
            if n <= 0 {
                return Ok(());
            }
            let total = (s.len() as i64).checked_mul(n).ok_or_else(too_large)?;
            if total > i32::MAX as i64 - 4 || total + 4 > MAX_ALLOC {
                return Err(too_large());
            }
            o.reserve(total as usize);
            for _ in 0..n {
                o.push_str(s);
            }
            Ok(())
        }),
        Func::Reverse => text_result(c, |i, o| {
            o.extend(t(0, i).chars().rev());
            Ok(())
        }),
        Func::Md5 => text_result(c, |i, o| {
            hex_digest(bytes_arg(c, 0, i), o);
            Ok(())
        }),
        Func::Chr => text_result(c, |i, o| chr(int(0, i), o)),
        Func::Translate => text_result(c, |i, o| {
            translate(t(0, i), t(1, i), t(2, i), o);
            Ok(())
        }),
        Func::ToHex => text_result(c, |i, o| {
            use std::fmt::Write;
            let _ = match &c.args[0].data {
                Data::Int4(v) => write!(o, "{:x}", v[i] as u32),
                Data::Int8(v) => write!(o, "{:x}", v[i] as u64),
                _ => return Err(bad_args(f)),
            };
            Ok(())
        }),
        _ => Err(bad_args(f)),
    }
}
