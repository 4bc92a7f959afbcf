//! Functions that print values: `concat`, `concat_ws`, `format`, and the
//! quoting helpers `quote_ident`, `quote_literal`, `quote_nullable`.
//!
//! `concat`, `concat_ws` and `format` take `"any"` arguments: each is
//! printed with its type's output function (booleans as `t`/`f`, as
//! PostgreSQL prints them there). They are not strict: NULL arguments are
//! skipped (`concat`), skipped with their separator (`concat_ws`, which is
//! NULL only when the separator is), or printed as PostgreSQL's `format`
//! prints them (`%s` empty, `%L` as `NULL`, `%I` an error); a NULL format
//! string gives NULL.

use super::math::bad_args;
use super::string::text_result;
use super::{Call, Func};
use crate::error::{sqlstate, ExecError, Result};
use crate::vector::{Data, Strings, Vector};
use std::borrow::Cow;

/// Argument `k` of row `i` as its output text; `None` for NULL.
fn out_text<'a>(c: &'a Call, k: usize, i: usize) -> Option<Cow<'a, str>> {
    let v = &c.args[k];
    if v.is_null(i) {
        return None;
    }
    match &v.data {
        Data::Text(s) => Some(Cow::Borrowed(s.get_str(i))),
        _ => v.value_as(i, c.types[k]).to_text().map(Cow::Owned),
    }
}

/// PostgreSQL 15's keywords that are not `UNRESERVED_KEYWORD`:
/// `quote_ident` quotes them.
const QUOTED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

/// `quote_ident`: double-quotes `s` unless it is a plain lower-case name
/// that is not a reserved word.
pub fn quote_ident(s: &str, out: &mut String) {
    let safe = s
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && QUOTED_KEYWORDS.binary_search(&s).is_err();
    if safe {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
}

/// `quote_literal`: single quotes, doubled inside; an `E` prefix and
/// doubled backslashes when `s` has a backslash.
pub fn quote_literal(s: &str, out: &mut String) {
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
}

fn format_error(msg: impl Into<String>) -> ExecError {
    ExecError::coded(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn spec_error(msg: impl Into<String>) -> ExecError {
    format_error(msg).with_hint("For a single \"%\" use \"%%\".")
}

/// Reads a decimal number at `chars[*p..]`, if any.
fn number(chars: &[char], p: &mut usize) -> Result<Option<i64>> {
    let start = *p;
    let mut v: i64 = 0;
    while *p < chars.len() && chars[*p].is_ascii_digit() {
        v = v * 10 + chars[*p].to_digit(10).unwrap() as i64;
        if v > i32::MAX as i64 {
            return Err(format_error("number is out of range"));
        }
        *p += 1;
    }
    Ok((*p > start).then_some(v))
}

/// `format(fmt, args...)` for one row; `args` are the call's arguments
/// after the format string.
fn format_row(c: &Call, i: usize, fmt: &str, out: &mut String) -> Result<()> {
    let nargs = c.args.len() - 1;
    let chars: Vec<char> = fmt.chars().collect();
    let mut p = 0;
    let mut next_arg = 0usize;
    // The argument numbered `n` (from 1), or an error when there is none.
    let arg_at = |n: usize| -> Result<usize> {
        if n == 0 || n > nargs {
            return Err(format_error("too few arguments for format()"));
        }
        Ok(n)
    };
    while p < chars.len() {
        let ch = chars[p];
        p += 1;
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let unterminated = || spec_error("unterminated format() type specifier");
        if p >= chars.len() {
            return Err(unterminated());
        }
        if chars[p] == '%' {
            out.push('%');
            p += 1;
            continue;
        }
        // [argpos$][-][width|*[argpos$]]type
        let mut argpos = None;
        let save = p;
        if let Some(n) = number(&chars, &mut p)? {
            if p < chars.len() && chars[p] == '$' {
                if n == 0 {
                    return Err(format_error(
                        "format specifies argument 0, but arguments are numbered from 1",
                    ));
                }
                argpos = Some(n as usize);
                p += 1;
            } else {
                p = save;
            }
        }
        let mut left = false;
        while p < chars.len() && chars[p] == '-' {
            left = true;
            p += 1;
        }
        let mut width: Option<i64> = None;
        if p < chars.len() && chars[p] == '*' {
            p += 1;
            let save = p;
            let wpos = match number(&chars, &mut p)? {
                Some(n) if p < chars.len() && chars[p] == '$' => {
                    p += 1;
                    n as usize
                }
                _ => {
                    p = save;
                    next_arg += 1;
                    next_arg
                }
            };
            let k = arg_at(wpos)?;
            next_arg = wpos;
            if !c.args[k].is_null(i) {
                let w = super::string::int_arg(c, k, i);
                width = Some(w);
            }
        } else {
            width = number(&chars, &mut p)?;
        }
        if p >= chars.len() {
            return Err(unterminated());
        }
        let kind = chars[p];
        p += 1;
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(spec_error(format!(
                "unrecognized format() type specifier \"{kind}\""
            )));
        }
        let n = match argpos {
            Some(n) => n,
            None => next_arg + 1,
        };
        let k = arg_at(n)?;
        next_arg = n;
        let mut piece = String::new();
        match (kind, out_text(c, k, i)) {
            ('s', Some(v)) => piece.push_str(&v),
            ('s', None) => {}
            ('I', Some(v)) => quote_ident(&v, &mut piece),
            ('I', None) => {
                return Err(ExecError::coded(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier",
                ))
            }
            ('L', Some(v)) => quote_literal(&v, &mut piece),
            (_, None) => piece.push_str("NULL"),
            _ => unreachable!(),
        }
        let (left, width) = match width {
            Some(w) if w < 0 => (true, w.unsigned_abs() as usize),
            Some(w) => (left, w as usize),
            None => (left, 0),
        };
        let len = piece.chars().count();
        if width > len && (width - len) as i64 >= super::string::MAX_ALLOC - out.len() as i64 {
            return Err(
                ExecError::coded(sqlstate::PROGRAM_LIMIT_EXCEEDED, "out of memory").with_detail(
                    format!(
                        "Cannot enlarge string buffer containing {} bytes by {} more bytes.",
                        out.len(),
                        width - len
                    ),
                ),
            );
        }
        if len < width && !left {
            out.extend(std::iter::repeat_n(' ', width - len));
        }
        out.push_str(&piece);
        if len < width && left {
            out.extend(std::iter::repeat_n(' ', width - len));
        }
    }
    Ok(())
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    match f {
        Func::QuoteIdent => text_result(c, |i, o| {
            quote_ident(&out_text(c, 0, i).unwrap_or_default(), o);
            Ok(())
        }),
        Func::QuoteLiteral => text_result(c, |i, o| {
            quote_literal(&out_text(c, 0, i).unwrap_or_default(), o);
            Ok(())
        }),
        Func::QuoteNullable => text_result(c, |i, o| {
            match out_text(c, 0, i) {
                Some(v) => quote_literal(&v, o),
                None => o.push_str("NULL"),
            }
            Ok(())
        }),
        Func::Concat | Func::ConcatWs | Func::Format => {
            let mut out = Strings::with_capacity(c.n, c.n * 16);
            let mut nulls = vec![false; c.n];
            let mut buf = String::new();
            for (i, null) in nulls.iter_mut().enumerate() {
                buf.clear();
                if c.computes(i) {
                    match f {
                        Func::Concat => {
                            for k in 0..c.args.len() {
                                if let Some(v) = out_text(c, k, i) {
                                    buf.push_str(&v);
                                }
                            }
                        }
                        Func::ConcatWs => match out_text(c, 0, i) {
                            None => *null = true,
                            Some(sep) => {
                                let mut first = true;
                                for k in 1..c.args.len() {
                                    if let Some(v) = out_text(c, k, i) {
                                        if !first {
                                            buf.push_str(&sep);
                                        }
                                        buf.push_str(&v);
                                        first = false;
                                    }
                                }
                            }
                        },
                        _ => match out_text(c, 0, i) {
                            None => *null = true,
                            Some(fmt) => format_row(c, i, &fmt, &mut buf)?,
                        },
                    }
                }
                out.push(buf.as_bytes());
            }
            Ok(Vector::new(Data::Text(out), Some(nulls)))
        }
        _ => Err(bad_args(f)),
    }
}
