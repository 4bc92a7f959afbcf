//! Regular expressions: PostgreSQL's syntax on the `regex` crate. The SQL
//! functions built on them are in [`super::regexp`].
//!
//! ## From PostgreSQL's ARE to the `regex` crate
//!
//! [`translate`] rewrites a PostgreSQL advanced regular expression into the
//! crate's syntax, token by token:
//! - `.` and negated brackets match a newline (PostgreSQL's default; flag
//!   `n` makes both stop at newlines and `^`/`$` match at lines);
//! - case-insensitive matching (`~*`, flag `i`) folds ASCII letters only,
//!   as PostgreSQL does under the C collation, so each letter becomes a
//!   two-case class (`'ñ' ~* 'Ñ'` is false);
//! - `\d \s \w` (and their negations) are ASCII classes; `\m \M \y \Y \Z`
//!   and `[[:<:]] [[:>:]]` become word boundaries and `\z`; `\b` is a
//!   backspace and `\B` a backslash, as in PostgreSQL; `\x`, `\u`, `\U`,
//!   `\c` and octal escapes become characters;
//! - bounds are checked as PostgreSQL checks them (at most 255), and the
//!   structure errors get PostgreSQL's words (`parentheses () not
//!   balanced`, `brackets [] not balanced`, `quantifier operand invalid`,
//!   `invalid escape \ sequence`, `invalid character range`);
//! - the `***=` (literal) and `***:` directors and leading embedded options
//!   `(?flags)` are honoured; expanded syntax (`x`) drops white space and
//!   `#` comments.
//!
//! Not supported (an error, never a wrong answer): back references
//! (`\1`, PostgreSQL: `invalid backreference number` unless a group exists)
//! and lookahead / lookbehind constraints (`(?=`, `(?!`, `(?<=`, `(?<!`).
//! The crate finds the leftmost-first match where PostgreSQL's engine finds
//! the leftmost-longest one for a pattern whose preference is greedy: the
//! two differ only for alternations whose earlier branch matches a prefix of
//! a later one (`a|ab`), which `regexp_replace` and `substring` can show.
//!
//! Compiled patterns are cached per thread (32 of them, as PostgreSQL keeps
//! per backend), keyed by pattern and flags.

use crate::error::{sqlstate, ExecError, Result};
use regex::Regex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// Matching options (PostgreSQL's flag letters in parentheses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ReFlags {
    /// `i`: ASCII letters match either case.
    pub case_insensitive: bool,
    /// `n` / `m`: `.` and `[^...]` do not match newlines; `^` `$` match at lines.
    pub newline_sensitive: bool,
    /// `x`: white space and `#` comments are ignored.
    pub expanded: bool,
    /// `q`: the pattern is a literal string.
    pub literal: bool,
}

/// `invalid regular expression: ...` (2201B).
fn invalid(msg: &str) -> ExecError {
    ExecError::coded(
        sqlstate::INVALID_REGULAR_EXPRESSION,
        format!("invalid regular expression: {msg}"),
    )
}

fn unsupported(what: &str) -> ExecError {
    ExecError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("regular expression {what} are not supported"),
    )
}

/// Applies flag letters (`regexp_replace`'s last argument, or an embedded
/// `(?...)`); `global` receives `g` where it is allowed.
pub fn parse_flags(letters: &str, flags: &mut ReFlags, global: Option<&mut bool>) -> Result<()> {
    let mut g = false;
    for ch in letters.chars() {
        match ch {
            'g' if global.is_some() => g = true,
            'i' => flags.case_insensitive = true,
            'c' => flags.case_insensitive = false,
            'n' | 'm' => flags.newline_sensitive = true,
            's' => flags.newline_sensitive = false,
            // Partial newline sensitivity: approximated by the full one.
            'p' | 'w' => flags.newline_sensitive = true,
            'x' => flags.expanded = true,
            't' => flags.expanded = false,
            'q' => flags.literal = true,
            'b' | 'e' => {}
            _ => {
                return Err(ExecError::coded(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid regular expression option: \"{ch}\""),
                ))
            }
        }
    }
    if let Some(out) = global {
        *out = g;
    }
    Ok(())
}

/// Appends `c` so that it stands for itself (inside or outside a bracket).
fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || !c.is_ascii() {
        out.push(c);
    } else if c == '\n' {
        out.push_str("\\n");
    } else if c.is_ascii_graphic() || c == ' ' {
        out.push('\\');
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:x}}}", c as u32);
    }
}

/// Appends the literal `c` outside a bracket (both cases of an ASCII
/// letter when matching case-insensitively).
fn push_literal(out: &mut String, c: char, flags: ReFlags) {
    if flags.case_insensitive && c.is_ascii_alphabetic() {
        out.push('[');
        out.push(c.to_ascii_lowercase());
        out.push(c.to_ascii_uppercase());
        out.push(']');
    } else {
        push_char(out, c);
    }
}

/// A character escape (`\n`, `\x41`, `\u00e9`, `\cA`, `\0`...) starting after
/// the backslash at `chars[*p]`; `None` when it is not one.
fn char_escape(chars: &[char], p: &mut usize) -> Result<Option<char>> {
    let hex = |p: &mut usize, max: usize| -> Result<char> {
        let start = *p;
        while *p < chars.len() && *p - start < max && chars[*p].is_ascii_hexdigit() {
            *p += 1;
        }
        let s: String = chars[start..*p].iter().collect();
        u32::from_str_radix(&s, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| invalid("invalid escape \\ sequence"))
    };
    let c = chars[*p];
    *p += 1;
    Ok(Some(match c {
        'a' => '\x07',
        'b' => '\x08',
        'B' => '\\',
        'e' => '\x1b',
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\x0b',
        'c' => {
            let x = *chars
                .get(*p)
                .ok_or_else(|| invalid("invalid escape \\ sequence"))?;
            *p += 1;
            char::from_u32(x as u32 & 0x1f).unwrap()
        }
        'x' => hex(p, 8)?,
        'u' => hex(p, 4)?,
        'U' => hex(p, 8)?,
        '0' => {
            let start = *p;
            while *p < chars.len() && *p - start < 2 && ('0'..='7').contains(&chars[*p]) {
                *p += 1;
            }
            let s: String = chars[start..*p].iter().collect();
            char::from_u32(u32::from_str_radix(if s.is_empty() { "0" } else { &s }, 8).unwrap())
                .unwrap()
        }
        _ => {
            *p -= 1;
            return Ok(None);
        }
    }))
}

/// The ASCII class a class-shorthand escape stands for, as the inside of a
/// bracket (`[:digit:]`).
fn class_escape(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "[:digit:]",
        'D' => "[:^digit:]",
        's' => "[:space:]",
        'S' => "[:^space:]",
        'w' => "[:word:]",
        'W' => "[:^word:]",
        _ => return None,
    })
}

/// Translates the bracket expression starting after `[` at `chars[*p]`.
fn translate_bracket(
    chars: &[char],
    p: &mut usize,
    flags: ReFlags,
    out: &mut String,
) -> Result<()> {
    let unbalanced = || invalid("brackets [] not balanced");
    // [[:<:]] and [[:>:]]: word starts and ends.
    for (form, rep) in [("[:<:]]", "\\b{start}"), ("[:>:]]", "\\b{end}")] {
        let f: Vec<char> = form.chars().collect();
        if chars[*p..].starts_with(&f) {
            *p += f.len();
            out.push_str(rep);
            return Ok(());
        }
    }
    let mut negated = false;
    if chars.get(*p) == Some(&'^') {
        negated = true;
        *p += 1;
    }
    // Character ranges (a single character is a range of one) and classes.
    let mut ranges: Vec<(char, char)> = Vec::new();
    let mut classes: Vec<&'static str> = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(*p).ok_or_else(unbalanced)?;
        *p += 1;
        if c == ']' && !first {
            break;
        }
        first = false;
        let lo = match c {
            '[' if matches!(chars.get(*p), Some(':') | Some('=') | Some('.')) => {
                let kind = chars[*p];
                let start = *p + 1;
                let end = (start..chars.len().saturating_sub(1))
                    .find(|&k| chars[k] == kind && chars[k + 1] == ']')
                    .ok_or_else(unbalanced)?;
                let name: String = chars[start..end].iter().collect();
                *p = end + 2;
                if kind == ':' {
                    const KNOWN: [(&str, &str); 13] = [
                        ("alnum", "[:alnum:]"),
                        ("alpha", "[:alpha:]"),
                        ("blank", "[:blank:]"),
                        ("cntrl", "[:cntrl:]"),
                        ("digit", "[:digit:]"),
                        ("graph", "[:graph:]"),
                        ("lower", "[:lower:]"),
                        ("print", "[:print:]"),
                        ("punct", "[:punct:]"),
                        ("space", "[:space:]"),
                        ("upper", "[:upper:]"),
                        ("xdigit", "[:xdigit:]"),
                        ("word", "[:word:]"),
                    ];
                    let (_, cls) = KNOWN
                        .iter()
                        .find(|(n, _)| *n == name)
                        .ok_or_else(|| invalid("invalid character class"))?;
                    // Under ASCII case folding, lower and upper both mean letters.
                    let ci = flags.case_insensitive && (name == "lower" || name == "upper");
                    classes.push(if ci { "[:alpha:]" } else { cls });
                    continue;
                }
                let mut it = name.chars();
                match (it.next(), it.next()) {
                    (Some(ch), None) => ch,
                    _ => return Err(invalid("invalid collating element")),
                }
            }
            '\\' => {
                if *p >= chars.len() {
                    return Err(invalid("invalid escape \\ sequence"));
                }
                if let Some(cls) = class_escape(chars[*p]) {
                    *p += 1;
                    classes.push(cls);
                    continue;
                }
                match char_escape(chars, p)? {
                    Some(ch) => ch,
                    None => {
                        let ch = chars[*p];
                        *p += 1;
                        if ch.is_ascii_alphanumeric() {
                            return Err(invalid("invalid escape \\ sequence"));
                        }
                        ch
                    }
                }
            }
            c => c,
        };
        // A range `lo-hi` (a `-` before the closing bracket is literal).
        if chars.get(*p) == Some(&'-') && chars.get(*p + 1).is_some_and(|&n| n != ']') {
            *p += 1;
            let mut hi = chars[*p];
            *p += 1;
            if hi == '\\' && *p < chars.len() {
                hi = match char_escape(chars, p)? {
                    Some(ch) => ch,
                    None => {
                        *p += 1;
                        chars[*p - 1]
                    }
                };
            }
            if hi < lo {
                return Err(invalid("invalid character range"));
            }
            ranges.push((lo, hi));
        } else {
            ranges.push((lo, lo));
        }
    }
    if flags.case_insensitive {
        // The other case of every ASCII letter in the ranges.
        let mut extra = Vec::new();
        for &(lo, hi) in &ranges {
            for (a, z, d) in [('a', 'z', -32i32), ('A', 'Z', 32)] {
                let (l, h) = (lo.max(a), hi.min(z));
                if l <= h {
                    let sh = |c: char| char::from_u32((c as i32 + d) as u32).unwrap();
                    extra.push((sh(l), sh(h)));
                }
            }
        }
        ranges.extend(extra);
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    for (lo, hi) in ranges {
        push_char(out, lo);
        if hi != lo {
            out.push('-');
            push_char(out, hi);
        }
    }
    for cls in classes {
        out.push_str(cls);
    }
    if negated && flags.newline_sensitive {
        out.push_str("\\n");
    }
    out.push(']');
    Ok(())
}

/// Translates a PostgreSQL regular expression into the `regex` crate's
/// syntax (see the module doc).
pub fn translate(pattern: &str, mut flags: ReFlags) -> Result<String> {
    let mut pat = pattern;
    if let Some(rest) = pat.strip_prefix("***=") {
        flags.literal = true;
        pat = rest;
    } else if let Some(rest) = pat.strip_prefix("***:") {
        pat = rest;
    }
    let chars: Vec<char> = pat.chars().collect();
    let mut p = 0;
    if !flags.literal && chars.starts_with(&['(', '?']) {
        if let Some(end) = chars.iter().position(|&c| c == ')') {
            let letters: String = chars[2..end].iter().collect();
            if letters.chars().all(|c| c.is_ascii_alphabetic()) {
                parse_flags(&letters, &mut flags, None)
                    .map_err(|_| invalid("invalid embedded option"))?;
                p = end + 1;
            }
        }
    }
    let mut out = String::new();
    if flags.newline_sensitive {
        out.push_str("(?m)");
    }
    if flags.literal {
        for &c in &chars[p..] {
            push_literal(&mut out, c, flags);
        }
        return Ok(out);
    }
    // Whether the last thing emitted can take a quantifier: 0 no, 1 an
    // atom, 2 a quantifier (which may take one `?`), 3 a lazy quantifier.
    let mut quant_state = 0u8;
    let mut depth = 0usize;
    let operand_invalid = || invalid("quantifier operand invalid");
    while p < chars.len() {
        let c = chars[p];
        p += 1;
        match c {
            ' ' | '\t' | '\n' | '\r' if flags.expanded => {}
            '#' if flags.expanded => {
                while p < chars.len() && chars[p] != '\n' {
                    p += 1;
                }
            }
            '*' | '+' | '?' | '{' => {
                match quant_state {
                    0 | 3 => return Err(operand_invalid()),
                    2 if c != '?' => return Err(operand_invalid()),
                    2 => {
                        out.push('?');
                        quant_state = 3;
                        continue;
                    }
                    _ => {}
                }
                if c == '{' {
                    let end = chars[p..]
                        .iter()
                        .position(|&x| x == '}')
                        .map(|k| p + k)
                        .ok_or_else(|| invalid("braces {} not balanced"))?;
                    let body: String = chars[p..end].iter().collect();
                    let (m, n) = match body.split_once(',') {
                        Some((m, "")) => (m, None),
                        Some((m, n)) => (m, Some(n)),
                        None => (body.as_str(), Some(body.as_str())),
                    };
                    let num = |s: &str| s.parse::<u32>().ok().filter(|&v| v <= 255);
                    let bad = || invalid("invalid repetition count(s)");
                    let lo = num(m).ok_or_else(bad)?;
                    if let Some(n) = n {
                        let hi = num(n).ok_or_else(bad)?;
                        if hi < lo {
                            return Err(bad());
                        }
                    }
                    out.push('{');
                    out.push_str(&body);
                    out.push('}');
                    p = end + 1;
                } else {
                    out.push(c);
                }
                quant_state = 2;
            }
            '(' => {
                if chars.get(p) == Some(&'?') {
                    let next = chars.get(p + 1).copied();
                    match next {
                        Some(':') => {
                            out.push_str("(?:");
                            p += 2;
                        }
                        Some('=') | Some('!') | Some('<') => {
                            return Err(unsupported("lookahead and lookbehind constraints"))
                        }
                        _ => return Err(invalid("quantifier operand invalid")),
                    }
                } else {
                    out.push('(');
                }
                depth += 1;
                quant_state = 0;
            }
            ')' => {
                if depth == 0 {
                    return Err(invalid("parentheses () not balanced"));
                }
                depth -= 1;
                out.push(')');
                quant_state = 1;
            }
            '|' => {
                out.push('|');
                quant_state = 0;
            }
            '^' | '$' => {
                out.push(c);
                quant_state = 0;
            }
            '.' => {
                out.push_str(if flags.newline_sensitive {
                    "[^\\n]"
                } else {
                    "(?s:.)"
                });
                quant_state = 1;
            }
            '[' => {
                translate_bracket(&chars, &mut p, flags, &mut out)?;
                quant_state = if out.ends_with('}') { 0 } else { 1 };
            }
            '\\' => {
                let Some(&e) = chars.get(p) else {
                    return Err(invalid("invalid escape \\ sequence"));
                };
                quant_state = 1;
                if let Some(cls) = class_escape(e) {
                    p += 1;
                    let _ = write!(out, "[{cls}]");
                    continue;
                }
                let constraint = match e {
                    'A' => Some("\\A"),
                    'Z' => Some("\\z"),
                    'm' => Some("\\b{start}"),
                    'M' => Some("\\b{end}"),
                    'y' => Some("\\b"),
                    'Y' => Some("\\B"),
                    _ => None,
                };
                if let Some(con) = constraint {
                    p += 1;
                    out.push_str(con);
                    quant_state = 0;
                    continue;
                }
                if ('1'..='9').contains(&e) {
                    return Err(if depth == 0 && !out.contains('(') {
                        invalid("invalid backreference number")
                    } else {
                        unsupported("back references")
                    });
                }
                if let Some(ch) = char_escape(&chars, &mut p)? {
                    push_literal(&mut out, ch, flags);
                } else {
                    p += 1;
                    if e.is_ascii_alphanumeric() {
                        return Err(invalid("invalid escape \\ sequence"));
                    }
                    push_literal(&mut out, e, flags);
                }
            }
            c => {
                push_literal(&mut out, c, flags);
                quant_state = 1;
            }
        }
    }
    if depth != 0 {
        return Err(invalid("parentheses () not balanced"));
    }
    Ok(out)
}

const CACHE_SIZE: usize = 32;

thread_local! {
    static CACHE: RefCell<HashMap<(String, ReFlags), Arc<Regex>>> = RefCell::new(HashMap::new());
}

/// The compiled form of PostgreSQL pattern `pattern` (cached).
pub fn compile(pattern: &str, flags: ReFlags) -> Result<Arc<Regex>> {
    let key = (pattern.to_string(), flags);
    if let Some(re) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(re);
    }
    let src = translate(pattern, flags)?;
    let re = regex::RegexBuilder::new(&src)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => invalid("regular expression is too complex"),
            e => invalid(&e.to_string()),
        })?;
    let re = Arc::new(re);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_SIZE {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    Ok(re)
}
