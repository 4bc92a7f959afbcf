//! `json` and `jsonb` (PostgreSQL 15's `json.c`, `jsonb.c`, `jsonfuncs.c`).
//!
//! - [`lex`]: the lexer, the syntax check and string escapes, shared by
//!   both types.
//! - [`jsonb`]: [`Jsonb`], the parsed and normalised document with its
//!   order, containment and editing operations.
//! - This module: navigation over `json` *text*. A `json` value is its
//!   input text, kept as written (whitespace, key order, duplicate keys);
//!   operators that read into it ([`children`]) find the byte ranges of an
//!   object's members or an array's elements without building a tree, and
//!   return sub-values as the text they were written as. Of duplicate keys,
//!   the last is the one `->` finds, as in PostgreSQL.

pub mod jsonb;
pub mod lex;

pub use jsonb::Jsonb;
pub use lex::MAX_DEPTH;

use crate::error::Result;
use lex::{decode_string, walk, Event, Tok};

/// The top level of a `json` text, as byte ranges into it.
#[derive(Debug, Clone, PartialEq)]
pub enum Children {
    /// Members: each key (decoded) and its value's range.
    Object(Vec<(String, (usize, usize))>),
    /// Elements' ranges.
    Array(Vec<(usize, usize)>),
    /// A scalar: its token kind.
    Scalar(Tok),
}

/// The members or elements of the `json` document `text`.
pub fn children(text: &str) -> Result<Children> {
    let mut depth = 0usize;
    let mut top: Option<Children> = None;
    // The start of the child being read, and the key it goes with.
    let mut start = 0usize;
    let mut key = String::new();
    walk(text, |ev| {
        let push = |top: &mut Option<Children>, key: &mut String, range| match top {
            Some(Children::Object(m)) => m.push((std::mem::take(key), range)),
            Some(Children::Array(e)) => e.push(range),
            _ => {}
        };
        match ev {
            Event::Open(t) => {
                if depth == 0 {
                    top = Some(if t.tok == Tok::ObjectStart {
                        Children::Object(Vec::new())
                    } else {
                        Children::Array(Vec::new())
                    });
                } else if depth == 1 {
                    start = t.start;
                }
                depth += 1;
            }
            Event::Close(t) => {
                depth -= 1;
                if depth == 1 {
                    push(&mut top, &mut key, (start, t.end));
                }
            }
            Event::Key(t) => {
                if depth == 1 {
                    key = decode_string(&text[t.start..t.end])?;
                }
            }
            Event::Scalar(t) => match depth {
                0 => top = Some(Children::Scalar(t.tok)),
                1 => push(&mut top, &mut key, (t.start, t.end)),
                _ => {}
            },
        }
        Ok(())
    })?;
    Ok(top.expect("a valid document has a value"))
}

/// The kind of the `json` value `text` (`json_typeof`).
pub fn type_name(text: &str) -> Result<&'static str> {
    Ok(match children(text)? {
        Children::Object(_) => "object",
        Children::Array(_) => "array",
        Children::Scalar(Tok::String) => "string",
        Children::Scalar(Tok::Number) => "number",
        Children::Scalar(Tok::True | Tok::False) => "boolean",
        Children::Scalar(_) => "null",
    })
}

/// The `json` value at key `key` (the last such member) or `None`.
pub fn field<'t>(text: &'t str, key: &str) -> Result<Option<&'t str>> {
    Ok(match children(text)? {
        Children::Object(m) => m
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, (s, e))| &text[*s..*e]),
        _ => None,
    })
}

/// The `json` array element `i` (from the end when negative) or `None`.
pub fn element(text: &str, i: i64) -> Result<Option<&str>> {
    Ok(children(text)?.element(text, i))
}

impl Children {
    /// Element `i` of an array (from the end when negative) as text of
    /// the document `text` these are the children of; `None` otherwise.
    pub fn element<'t>(&self, text: &'t str, i: i64) -> Option<&'t str> {
        match self {
            Children::Array(e) => {
                jsonb::array_position(e.len(), i).map(|at| &text[e[at].0..e[at].1])
            }
            _ => None,
        }
    }
}

/// The `json` value at a path of keys and positions (`#>`).
pub fn path<'t>(text: &'t str, steps: &[&str]) -> Result<Option<&'t str>> {
    let mut at = text;
    for step in steps {
        let next = match children(at)? {
            Children::Object(_) => field(at, step)?,
            Children::Array(_) => match jsonb::parse_index(step) {
                Some(i) => element(at, i)?,
                None => None,
            },
            Children::Scalar(_) => None,
        };
        match next {
            Some(v) => at = v,
            None => return Ok(None),
        }
    }
    Ok(Some(at))
}

/// The text `->>` gives for a `json` value: a string's decoded value, NULL
/// for `null`, the text of anything else.
pub fn value_text(text: &str) -> Result<Option<String>> {
    let t = text.trim_matches([' ', '\t', '\n', '\r']);
    Ok(match children(t)? {
        Children::Scalar(Tok::Null) => None,
        Children::Scalar(Tok::String) => Some(decode_string(t)?),
        _ => Some(t.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_form_and_navigation() {
        let j = Jsonb::parse(r#"{"b":1,"a":[1,2.0,1e2,-0],"a":"x","aa":null}"#).unwrap();
        assert_eq!(j.to_string(), r#"{"a": "x", "b": 1, "aa": null}"#);
        assert_eq!(j.field("aa"), Some(&Jsonb::Null));
        let t = r#" {"a" : [1,  {"b": 2}], "a": 3} "#;
        assert_eq!(field(t, "a").unwrap(), Some("3"));
        assert_eq!(
            path(r#"{"a":[1,{"b":[7]}]}"#, &["a", "1", "b"]).unwrap(),
            Some("[7]")
        );
        assert_eq!(element("[1, 2, 3]", -1).unwrap(), Some("3"));
        assert_eq!(value_text(r#""x\ny""#).unwrap().as_deref(), Some("x\ny"));
        assert_eq!(value_text("null").unwrap(), None);
    }

    #[test]
    fn syntax_errors_name_the_token() {
        for (text, detail) in [
            ("{bad", "Token \"bad\" is invalid."),
            ("[1,2", "The input string ended unexpectedly."),
            ("[1,]", "Expected JSON value, but found \"]\"."),
            ("{\"a\" 1}", "Expected \":\", but found \"1\"."),
            ("1.x", "Token \"1.x\" is invalid."),
            ("[1] 2", "Expected end of input, but found \"2\"."),
        ] {
            let e = lex::validate(text).unwrap_err();
            assert_eq!(e.code, "22P02", "{text}");
            assert_eq!(e.detail.as_deref(), Some(detail), "{text}");
        }
        // `\u0000` is valid json text but no jsonb string.
        assert!(lex::validate(r#""\u0000""#).is_ok());
        assert_eq!(Jsonb::parse(r#""\u0000""#).unwrap_err().code, "22P05");
    }

    #[test]
    fn deep_nesting_is_bounded_without_overflowing_the_stack() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let run = |text: String| {
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || Jsonb::parse(&text).map(|j| j.to_string().len()))
                .unwrap()
                .join()
                .unwrap()
        };
        assert_eq!(run(deep(MAX_DEPTH)).unwrap(), 2 * MAX_DEPTH);
        assert_eq!(run(deep(MAX_DEPTH + 1)).unwrap_err().code, "54001");
    }
}
