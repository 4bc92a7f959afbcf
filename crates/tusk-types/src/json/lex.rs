//! The JSON lexer and the syntax check of `json` input (PostgreSQL 15's
//! `jsonapi.c`).
//!
//! Tokens are the six punctuators, strings, numbers and the three keywords.
//! The grammar is RFC 8259's with PostgreSQL's lexical rules:
//!
//! - whitespace is space, tab, newline and carriage return;
//! - a number is `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`,
//!   and a number or keyword run together with letters, digits or `_` is
//!   one invalid token (`1.x`, `truex`), as is any other word;
//! - a string may not hold a character below 0x20 unescaped, and its
//!   escapes are `\" \\ \/ \b \f \n \r \t \uXXXX`.
//!
//! A string is *decoded* (its escapes turned into characters) only where
//! its value is needed: `jsonb` input, keys and values that an operator
//! reads. Only decoding checks what the text form cannot hold: `\u0000`
//! (22P05, `unsupported Unicode escape sequence`) and surrogates that do
//! not pair. So `'"\u0000"'::json` is valid `json` and invalid `jsonb`, as
//! in PostgreSQL.
//!
//! Every syntax error is PostgreSQL's `invalid input syntax for type json`
//! (22P02) with its DETAIL naming the offending token.

use crate::error::{sqlstate, Result, TypeError};

/// Deepest nesting of arrays and objects accepted (PostgreSQL's limit is
/// its stack depth, which allows somewhat more than this).
pub const MAX_DEPTH: usize = 10_000;

/// One token's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    ObjectStart,
    ObjectEnd,
    ArrayStart,
    ArrayEnd,
    Comma,
    Colon,
    String,
    Number,
    True,
    False,
    Null,
    End,
}

/// A token: its kind and its bytes in the input (for a string, quotes
/// included).
#[derive(Debug, Clone, Copy)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Reads tokens from a JSON text.
pub struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

/// `invalid input syntax for type json` with `detail`.
pub fn syntax_error(detail: impl Into<String>) -> TypeError {
    TypeError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type json",
    )
    .with_detail(detail)
}

fn unexpected_end() -> TypeError {
    syntax_error("The input string ended unexpectedly.")
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, pos: 0 }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The text of token `t`.
    pub fn slice(&self, t: Token) -> &'a str {
        &self.text[t.start..t.end]
    }

    /// The next token; `Tok::End` at the end of the input.
    pub fn next_token(&mut self) -> Result<Token> {
        let b = self.text.as_bytes();
        while self.pos < b.len() && matches!(b[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let Some(&c) = b.get(start) else {
            return Ok(Token {
                tok: Tok::End,
                start,
                end: start,
            });
        };
        let single = |tok| Token {
            tok,
            start,
            end: start + 1,
        };
        let t = match c {
            b'{' => single(Tok::ObjectStart),
            b'}' => single(Tok::ObjectEnd),
            b'[' => single(Tok::ArrayStart),
            b']' => single(Tok::ArrayEnd),
            b',' => single(Tok::Comma),
            b':' => single(Tok::Colon),
            b'"' => self.string(start)?,
            b'-' | b'0'..=b'9' => self.number(start)?,
            _ => {
                let mut end = start;
                while end < b.len() && is_word_byte(b[end]) {
                    end += 1;
                }
                if end == start {
                    // A lone punctuation character that is no token.
                    end = start + self.text[start..].chars().next().map_or(1, char::len_utf8);
                }
                let word = &self.text[start..end];
                let tok = match word {
                    "true" => Tok::True,
                    "false" => Tok::False,
                    "null" => Tok::Null,
                    _ => return Err(syntax_error(format!("Token \"{word}\" is invalid."))),
                };
                Token { tok, start, end }
            }
        };
        self.pos = t.end;
        Ok(t)
    }

    fn string(&self, start: usize) -> Result<Token> {
        let b = self.text.as_bytes();
        let mut i = start + 1;
        loop {
            let Some(&c) = b.get(i) else {
                return Err(syntax_error(format!(
                    "Token \"{}\" is invalid.",
                    &self.text[start..]
                )));
            };
            match c {
                b'"' => {
                    return Ok(Token {
                        tok: Tok::String,
                        start,
                        end: i + 1,
                    })
                }
                b'\\' => {
                    let Some(&e) = b.get(i + 1) else {
                        return Err(unexpected_end());
                    };
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            let hex = b.get(i + 2..i + 6);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                return Err(syntax_error(
                                    "\"\\u\" must be followed by four hexadecimal digits.",
                                ));
                            }
                            i += 6;
                        }
                        _ => {
                            let ch = self.text[i + 1..].chars().next().unwrap_or('?');
                            return Err(syntax_error(format!(
                                "Escape sequence \"\\{ch}\" is invalid."
                            )));
                        }
                    }
                }
                c if c < 0x20 => {
                    return Err(syntax_error(format!(
                        "Character with value 0x{c:02x} must be escaped."
                    )))
                }
                _ => i += 1,
            }
        }
    }

    fn number(&self, start: usize) -> Result<Token> {
        let b = self.text.as_bytes();
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let mut i = start;
        let mut ok = true;
        if b[i] == b'-' {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i),
            _ => ok = false,
        }
        if ok && b.get(i) == Some(&b'.') {
            let after = digits(i + 1);
            ok = after > i + 1;
            i = after;
        }
        if ok && matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let after = digits(i);
            ok = after > i;
            i = after;
        }
        // Letters or digits run on: one invalid token with them.
        let mut end = i;
        while end < b.len() && (is_word_byte(b[end]) || (!ok && b[end] == b'.')) {
            end += 1;
        }
        if !ok || end != i {
            if end == b.len() && !ok && !self.text[start..end].bytes().any(is_word_byte) {
                return Err(unexpected_end());
            }
            return Err(syntax_error(format!(
                "Token \"{}\" is invalid.",
                &self.text[start..end]
            )));
        }
        Ok(Token {
            tok: Tok::Number,
            start,
            end: i,
        })
    }
}

/// The token's text as a DETAIL names it (`end of input` at the end).
fn found(lex: &Lexer<'_>, t: Token) -> String {
    if t.tok == Tok::End {
        return String::new();
    }
    lex.slice(t).to_string()
}

/// What the parser expects next, for its error DETAILs.
#[derive(Clone, Copy)]
enum Expect {
    Value,
    ArrayFirst,
    ArrayNext,
    ObjectFirst,
    ObjectNext,
    Colon,
    Key,
    End,
}

fn expected(lex: &Lexer<'_>, what: Expect, t: Token) -> TypeError {
    if t.tok == Tok::End {
        return unexpected_end();
    }
    let f = found(lex, t);
    syntax_error(match what {
        Expect::Value => format!("Expected JSON value, but found \"{f}\"."),
        Expect::ArrayFirst => format!("Expected array element or \"]\", but found \"{f}\"."),
        Expect::ArrayNext => format!("Expected \",\" or \"]\", but found \"{f}\"."),
        Expect::ObjectFirst => format!("Expected string or \"}}\", but found \"{f}\"."),
        Expect::ObjectNext => format!("Expected \",\" or \"}}\", but found \"{f}\"."),
        Expect::Colon => format!("Expected \":\", but found \"{f}\"."),
        Expect::Key => format!("Expected string, but found \"{f}\"."),
        Expect::End => format!("Expected end of input, but found \"{f}\"."),
    })
}

/// What a [`walk`] reports, in document order.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// A scalar (string, number, keyword) token.
    Scalar(Token),
    /// `[` or `{`.
    Open(Token),
    /// `]` or `}`.
    Close(Token),
    /// An object key (the string token).
    Key(Token),
}

/// Checks the syntax of one JSON document, calling `on` for each event;
/// iterative, so nesting costs no stack (it is bounded by [`MAX_DEPTH`]).
pub fn walk(text: &str, mut on: impl FnMut(Event) -> Result<()>) -> Result<()> {
    let mut lex = Lexer::new(text);
    // Open containers: true for an object.
    let mut stack: Vec<bool> = Vec::new();
    let mut t = lex.next_token()?;
    // Parse one value, then loop over container continuations.
    'value: loop {
        match t.tok {
            Tok::ObjectStart | Tok::ArrayStart => {
                if stack.len() >= MAX_DEPTH {
                    return Err(depth_exceeded());
                }
                let object = t.tok == Tok::ObjectStart;
                on(Event::Open(t))?;
                stack.push(object);
                let n = lex.next_token()?;
                if n.tok
                    == (if object {
                        Tok::ObjectEnd
                    } else {
                        Tok::ArrayEnd
                    })
                {
                    stack.pop();
                    on(Event::Close(n))?;
                } else if object {
                    t = object_key(&mut lex, n, &mut on, Expect::ObjectFirst)?;
                    continue 'value;
                } else {
                    if !starts_value(n.tok) {
                        return Err(expected(&lex, Expect::ArrayFirst, n));
                    }
                    t = n;
                    continue 'value;
                }
            }
            Tok::String | Tok::Number | Tok::True | Tok::False | Tok::Null => on(Event::Scalar(t))?,
            _ => return Err(expected(&lex, Expect::Value, t)),
        }
        // A value is complete: continue the enclosing containers.
        loop {
            let Some(&object) = stack.last() else {
                let n = lex.next_token()?;
                if n.tok != Tok::End {
                    return Err(expected(&lex, Expect::End, n));
                }
                return Ok(());
            };
            let n = lex.next_token()?;
            match (object, n.tok) {
                (_, Tok::Comma) => {
                    let v = lex.next_token()?;
                    if object {
                        t = object_key(&mut lex, v, &mut on, Expect::Key)?;
                    } else {
                        t = v;
                    }
                    continue 'value;
                }
                (true, Tok::ObjectEnd) | (false, Tok::ArrayEnd) => {
                    stack.pop();
                    on(Event::Close(n))?;
                }
                (true, _) => return Err(expected(&lex, Expect::ObjectNext, n)),
                (false, _) => return Err(expected(&lex, Expect::ArrayNext, n)),
            }
        }
    }
}

fn starts_value(t: Tok) -> bool {
    matches!(
        t,
        Tok::ObjectStart
            | Tok::ArrayStart
            | Tok::String
            | Tok::Number
            | Tok::True
            | Tok::False
            | Tok::Null
    )
}

/// Reads `key :` (the key token is `k`) and returns the value's first token.
fn object_key(
    lex: &mut Lexer<'_>,
    k: Token,
    on: &mut impl FnMut(Event) -> Result<()>,
    what: Expect,
) -> Result<Token> {
    if k.tok != Tok::String {
        return Err(expected(lex, what, k));
    }
    on(Event::Key(k))?;
    let c = lex.next_token()?;
    if c.tok != Tok::Colon {
        return Err(expected(lex, Expect::Colon, c));
    }
    lex.next_token()
}

/// PostgreSQL's error for too deep a recursion (54001).
pub fn depth_exceeded() -> TypeError {
    TypeError::new("54001", "stack depth limit exceeded").with_hint(
        "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), \
         after ensuring the platform's stack depth limit is adequate.",
    )
}

/// Checks that `text` is one JSON document (`json` input).
pub fn validate(text: &str) -> Result<()> {
    walk(text, |_| Ok(()))
}

/// The value of a string token (quotes included in `raw`), escapes decoded.
pub fn decode_string(raw: &str) -> Result<String> {
    let inner = &raw[1..raw.len() - 1];
    if !inner.contains('\\') {
        return Ok(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.char_indices();
    let mut high: Option<u32> = None;
    let low_needed = || syntax_error("Unicode low surrogate must follow a high surrogate.");
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            if high.is_some() {
                return Err(low_needed());
            }
            out.push(c);
            continue;
        }
        let (_, e) = chars.next().expect("the lexer checked every escape");
        if e != 'u' {
            if high.is_some() {
                return Err(low_needed());
            }
            out.push(match e {
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                other => other,
            });
            continue;
        }
        let code = u32::from_str_radix(&inner[i + 2..i + 6], 16).expect("four hex digits");
        for _ in 0..4 {
            chars.next();
        }
        match code {
            0xD800..=0xDBFF => {
                if high.is_some() {
                    return Err(syntax_error(
                        "Unicode high surrogate must not follow a high surrogate.",
                    ));
                }
                high = Some(code);
            }
            0xDC00..=0xDFFF => {
                let Some(h) = high.take() else {
                    return Err(low_needed());
                };
                let cp = 0x10000 + ((h - 0xD800) << 10) + (code - 0xDC00);
                out.push(char::from_u32(cp).expect("a surrogate pair is a character"));
            }
            0 => {
                return Err(
                    TypeError::new("22P05", "unsupported Unicode escape sequence")
                        .with_detail("\\u0000 cannot be converted to text."),
                )
            }
            _ => {
                if high.is_some() {
                    return Err(low_needed());
                }
                out.push(char::from_u32(code).expect("not a surrogate"));
            }
        }
    }
    if high.is_some() {
        return Err(low_needed());
    }
    Ok(out)
}

/// Appends `s` as a JSON string literal, escaped as PostgreSQL's
/// `escape_json` escapes it.
pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
