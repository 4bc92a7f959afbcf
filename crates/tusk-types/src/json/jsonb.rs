//! `jsonb`: a parsed JSON document in PostgreSQL's normal form.
//!
//! Input is parsed into a [`Jsonb`] tree and normalised as PostgreSQL's
//! `jsonb_in` normalises it: an object's keys are sorted shortest first,
//! then bytewise (PostgreSQL's storage order), and of duplicate keys only
//! the last is kept; numbers become `numeric` values (`1e2` prints `100`,
//! `-0` prints `0`, `1.0` keeps its scale). The text form ([`Display`]) is
//! `jsonb_out`'s: `{"a": 1, "b": [1, 2]}`.
//!
//! ## Order (`compareJsonbContainers`)
//!
//! `Object > Array > Boolean > Number > String > Null`. Arrays compare by
//! element count first, then element by element; objects by pair count,
//! then key, value, key, value in storage order. A top-level scalar is
//! PostgreSQL's one-element *raw scalar* array: against a real array, the
//! element count decides first and the raw scalar is smaller at equal
//! counts, which is why `'[]'` sorts below `'null'`. Numbers compare as
//! numerics (`1.0 = 1`), strings bytewise.
//!
//! Trees can be as deep as [`MAX_DEPTH`]: the parser is iterative, the
//! recursive walks run on grown stacks (`stacker`), and dropping a tree
//! does not recurse.

use super::lex::{decode_string, walk, write_string, Event, Lexer, Tok, Token};
use crate::error::{Result, TypeError};
use crate::numeric::Numeric;
use std::cmp::Ordering;

pub use super::lex::MAX_DEPTH;

/// One JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Jsonb {
    Null,
    Bool(bool),
    Number(Numeric),
    String(String),
    Array(Vec<Jsonb>),
    /// Pairs in storage order: keys unique, shortest first, then bytewise.
    Object(Vec<(String, Jsonb)>),
}

/// Runs one level of a recursion over a tree, on a fresh stack segment
/// when the current one is nearly used.
pub(crate) fn grow<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, f)
}

impl Drop for Jsonb {
    fn drop(&mut self) {
        // Move children onto a heap stack so that a deep tree is freed
        // without one native frame per level.
        let mut pending: Vec<Jsonb> = Vec::new();
        take_children(self, &mut pending);
        while let Some(mut v) = pending.pop() {
            take_children(&mut v, &mut pending);
        }
    }
}

fn take_children(v: &mut Jsonb, into: &mut Vec<Jsonb>) {
    match v {
        Jsonb::Array(items) => into.append(items),
        Jsonb::Object(pairs) => into.extend(pairs.drain(..).map(|(_, v)| v)),
        _ => {}
    }
}

/// PostgreSQL's storage order of object keys: shorter first, then bytes.
pub fn key_order(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Sorts pairs into storage order, keeping the last of duplicate keys.
pub fn normalize_pairs(mut pairs: Vec<(String, Jsonb)>) -> Vec<(String, Jsonb)> {
    pairs.sort_by(|a, b| key_order(&a.0, &b.0));
    let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        match out.last_mut() {
            Some(last) if last.0 == p.0 => *last = p,
            _ => out.push(p),
        }
    }
    out
}

/// The value of a scalar token.
pub(crate) fn scalar(lex: &Lexer<'_>, t: Token) -> Result<Jsonb> {
    Ok(match t.tok {
        Tok::String => Jsonb::String(decode_string(lex.slice(t))?),
        Tok::Number => Jsonb::Number(
            Numeric::parse(lex.slice(t))
                .ok_or_else(|| TypeError::invalid_input("numeric", lex.slice(t)))?,
        ),
        Tok::True => Jsonb::Bool(true),
        Tok::False => Jsonb::Bool(false),
        _ => Jsonb::Null,
    })
}

enum Frame {
    Array(Vec<Jsonb>),
    Object(Vec<(String, Jsonb)>, String),
}

impl Jsonb {
    /// `jsonb` input.
    pub fn parse(text: &str) -> Result<Jsonb> {
        let lex = Lexer::new(text);
        let mut stack: Vec<Frame> = Vec::new();
        let mut root: Option<Jsonb> = None;
        walk(text, |ev| {
            let done = match ev {
                Event::Open(t) => {
                    stack.push(if t.tok == Tok::ObjectStart {
                        Frame::Object(Vec::new(), String::new())
                    } else {
                        Frame::Array(Vec::new())
                    });
                    return Ok(());
                }
                Event::Key(t) => {
                    if let Some(Frame::Object(_, key)) = stack.last_mut() {
                        *key = decode_string(lex.slice(t))?;
                    }
                    return Ok(());
                }
                Event::Scalar(t) => scalar(&lex, t)?,
                Event::Close(_) => match stack.pop() {
                    Some(Frame::Array(items)) => Jsonb::Array(items),
                    Some(Frame::Object(pairs, _)) => Jsonb::Object(normalize_pairs(pairs)),
                    None => unreachable!("walk closes only what it opened"),
                },
            };
            match stack.last_mut() {
                Some(Frame::Array(items)) => items.push(done),
                Some(Frame::Object(pairs, key)) => pairs.push((std::mem::take(key), done)),
                None => root = Some(done),
            }
            Ok(())
        })?;
        Ok(root.expect("a valid document has a value"))
    }

    /// Whether the value is an array or object.
    pub fn is_container(&self) -> bool {
        matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// `jsonb_typeof`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// The value of key `key` of an object (`->`).
    pub fn field(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(pairs) => pairs
                .binary_search_by(|(k, _)| key_order(k, key))
                .ok()
                .map(|i| &pairs[i].1),
            _ => None,
        }
    }

    /// Element `i` of an array, counting from the end when negative (`->`).
    pub fn element(&self, i: i64) -> Option<&Jsonb> {
        match self {
            Jsonb::Array(items) => array_position(items.len(), i).map(|at| &items[at]),
            _ => None,
        }
    }

    /// The value at a path of keys and array positions (`#>`): a step
    /// into an array must be an integer.
    pub fn path(&self, steps: &[&str]) -> Option<&Jsonb> {
        let mut at = self;
        for step in steps {
            at = match at {
                Jsonb::Object(_) => at.field(step)?,
                Jsonb::Array(_) => at.element(parse_index(step)?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    /// The text `->>` gives: a string's value, NULL for JSON null, the
    /// JSON text of anything else.
    pub fn to_text(&self) -> Option<String> {
        match self {
            Jsonb::Null => None,
            Jsonb::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Jsonb::Number(n) => {
                use std::fmt::Write;
                let _ = write!(out, "{n}");
            }
            Jsonb::String(s) => write_string(s, out),
            Jsonb::Array(items) => grow(|| {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }),
            Jsonb::Object(pairs) => grow(|| {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_string(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }),
        }
    }

    /// `jsonb_pretty`: one element per line, four spaces per level.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(0, &mut out);
        out
    }

    fn write_pretty(&self, level: usize, out: &mut String) {
        let indent = |out: &mut String, l: usize| {
            out.push('\n');
            for _ in 0..l {
                out.push_str("    ");
            }
        };
        match self {
            Jsonb::Array(items) => grow(|| {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, level + 1);
                    v.write_pretty(level + 1, out);
                }
                indent(out, level);
                out.push(']');
            }),
            Jsonb::Object(pairs) => grow(|| {
                out.push('{');
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, level + 1);
                    write_string(k, out);
                    out.push_str(": ");
                    v.write_pretty(level + 1, out);
                }
                indent(out, level);
                out.push('}');
            }),
            scalar => scalar.write(out),
        }
    }

    /// The rank of the value's type in PostgreSQL's order (`jbvType`).
    fn type_rank(&self) -> u8 {
        match self {
            Jsonb::Null => 0,
            Jsonb::String(_) => 1,
            Jsonb::Number(_) => 2,
            Jsonb::Bool(_) => 3,
            Jsonb::Array(_) => 4,
            Jsonb::Object(_) => 5,
        }
    }

    /// PostgreSQL's `jsonb` order between two documents (see the module
    /// doc for the raw-scalar rule at the top level).
    pub fn cmp_documents(&self, other: &Jsonb) -> Ordering {
        // Element counts and raw-scalar flags of top-level arrays.
        let shape = |v: &Jsonb| match v {
            Jsonb::Array(items) => Some((items.len(), true)),
            Jsonb::Object(_) => None,
            _ => Some((1, false)),
        };
        match (shape(self), shape(other)) {
            (Some((n1, real1)), Some((n2, real2))) => {
                if n1 != n2 {
                    return n1.cmp(&n2);
                }
                if real1 != real2 {
                    return real1.cmp(&real2);
                }
                self.cmp_values(other)
            }
            _ => self.cmp_values(other),
        }
    }

    /// The order of two values inside a document.
    fn cmp_values(&self, other: &Jsonb) -> Ordering {
        match (self, other) {
            (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
            (Jsonb::Bool(a), Jsonb::Bool(b)) => a.cmp(b),
            (Jsonb::Number(a), Jsonb::Number(b)) => a.cmp(b),
            (Jsonb::String(a), Jsonb::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Jsonb::Array(a), Jsonb::Array(b)) => grow(|| {
                a.len().cmp(&b.len()).then_with(|| {
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| x.cmp_values(y))
                        .find(|o| o.is_ne())
                        .unwrap_or(Ordering::Equal)
                })
            }),
            (Jsonb::Object(a), Jsonb::Object(b)) => grow(|| {
                a.len().cmp(&b.len()).then_with(|| {
                    a.iter()
                        .zip(b)
                        .map(|((ka, va), (kb, vb))| {
                            ka.as_bytes()
                                .cmp(kb.as_bytes())
                                .then_with(|| va.cmp_values(vb))
                        })
                        .find(|o| o.is_ne())
                        .unwrap_or(Ordering::Equal)
                })
            }),
            (a, b) => a.type_rank().cmp(&b.type_rank()),
        }
    }

    /// `a @> b` (`JsonbDeepContains`): every key of an object `b` is in
    /// `a` with a value containing `b`'s; every element of an array `b`
    /// is contained in some element of `a`; a top-level array contains a
    /// scalar it has as an element.
    pub fn contains(&self, other: &Jsonb) -> bool {
        match (self, other) {
            (Jsonb::Array(items), s) if !s.is_container() => items
                .iter()
                .any(|x| !x.is_container() && x.cmp_values(s).is_eq()),
            _ => self.deep_contains(other),
        }
    }

    fn deep_contains(&self, other: &Jsonb) -> bool {
        match (self, other) {
            (Jsonb::Object(_), Jsonb::Object(want)) => grow(|| {
                want.iter().all(|(k, wv)| match self.field(k) {
                    Some(have) if have.is_container() || wv.is_container() => {
                        have.type_rank() == wv.type_rank() && have.deep_contains(wv)
                    }
                    Some(have) => have.cmp_values(wv).is_eq(),
                    None => false,
                })
            }),
            (Jsonb::Array(have), Jsonb::Array(want)) => grow(|| {
                want.iter().all(|w| {
                    if w.is_container() {
                        have.iter()
                            .any(|h| h.type_rank() == w.type_rank() && h.deep_contains(w))
                    } else {
                        have.iter()
                            .any(|h| !h.is_container() && h.cmp_values(w).is_eq())
                    }
                })
            }),
            (a, b) if !a.is_container() && !b.is_container() => a.cmp_values(b).is_eq(),
            _ => false,
        }
    }

    /// `a ? key`: an object with that key, or an array (or string) with
    /// that string as an element.
    pub fn has_key(&self, key: &str) -> bool {
        match self {
            Jsonb::Object(_) => self.field(key).is_some(),
            Jsonb::Array(items) => items
                .iter()
                .any(|v| matches!(v, Jsonb::String(s) if s == key)),
            Jsonb::String(s) => s == key,
            _ => false,
        }
    }

    /// `a || b` (`jsonb_concat`): objects merge (`b`'s keys win), arrays
    /// concatenate, and anything else is wrapped as a one-element array
    /// first.
    pub fn concat(&self, other: &Jsonb) -> Jsonb {
        match (self, other) {
            (Jsonb::Object(a), Jsonb::Object(b)) => {
                Jsonb::Object(normalize_pairs(a.iter().chain(b).cloned().collect()))
            }
            _ => {
                let as_items = |v: &Jsonb| match v {
                    Jsonb::Array(items) => items.clone(),
                    other => vec![other.clone()],
                };
                let mut items = as_items(self);
                items.extend(as_items(other));
                Jsonb::Array(items)
            }
        }
    }

    /// `a - key`: an object without that key, an array without its string
    /// elements equal to it.
    pub fn delete_key(&self, key: &str) -> Result<Jsonb> {
        match self {
            Jsonb::Object(pairs) => Ok(Jsonb::Object(
                pairs.iter().filter(|(k, _)| k != key).cloned().collect(),
            )),
            Jsonb::Array(items) => Ok(Jsonb::Array(
                items
                    .iter()
                    .filter(|v| !matches!(v, Jsonb::String(s) if s == key))
                    .cloned()
                    .collect(),
            )),
            _ => Err(cannot_delete_from_scalar()),
        }
    }

    /// `a - i`: an array without element `i` (from the end when negative).
    pub fn delete_index(&self, i: i64) -> Result<Jsonb> {
        match self {
            Jsonb::Array(items) => {
                let at = array_position(items.len(), i);
                Ok(Jsonb::Array(
                    items
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| Some(*j) != at)
                        .map(|(_, v)| v.clone())
                        .collect(),
                ))
            }
            Jsonb::Object(_) => Err(TypeError::new(
                "22023",
                "cannot delete from object using integer index",
            )),
            _ => Err(cannot_delete_from_scalar()),
        }
    }

    /// `jsonb_strip_nulls`: object fields whose value is null removed, at
    /// every level.
    pub fn strip_nulls(&self) -> Jsonb {
        match self {
            Jsonb::Object(pairs) => grow(|| {
                Jsonb::Object(
                    pairs
                        .iter()
                        .filter(|(_, v)| !matches!(v, Jsonb::Null))
                        .map(|(k, v)| (k.clone(), v.strip_nulls()))
                        .collect(),
                )
            }),
            Jsonb::Array(items) => {
                grow(|| Jsonb::Array(items.iter().map(Jsonb::strip_nulls).collect()))
            }
            other => other.clone(),
        }
    }
}

/// What [`Jsonb::edit_path`] does at the end of its path.
#[derive(Debug, Clone, Copy)]
pub enum PathEdit<'a> {
    /// `jsonb_set`: replace the value there, or add it where the last step
    /// is missing when `create`.
    Set { value: &'a Jsonb, create: bool },
    /// `jsonb_insert`: insert before (or `after`) an array position, or
    /// add a missing object key (an existing one is an error).
    Insert { value: &'a Jsonb, after: bool },
    /// `#-` (`jsonb_delete_path`): remove the value there.
    Delete,
}

impl PathEdit<'_> {
    /// Whether a missing last step is added (`JB_PATH_CREATE_OR_INSERT`).
    fn creates(self) -> bool {
        matches!(
            self,
            PathEdit::Set { create: true, .. } | PathEdit::Insert { .. }
        )
    }
}

impl Jsonb {
    /// `jsonb_set`, `jsonb_insert` and `#-` (PostgreSQL's `setPath`): the
    /// document with `edit` applied at `path` (`None` steps are SQL
    /// NULLs). A path through a missing key or position, or through a
    /// scalar, leaves the document as it is; an empty path too.
    pub fn edit_path(&self, path: &[Option<&str>], edit: PathEdit<'_>) -> Result<Jsonb> {
        if !self.is_container() {
            return Err(TypeError::new(
                "22023",
                match edit {
                    PathEdit::Delete => "cannot delete path in scalar",
                    _ => "cannot set path in scalar",
                },
            ));
        }
        if path.is_empty() {
            return Ok(self.clone());
        }
        self.edit_at(path, 0, edit)
    }

    fn edit_at(&self, path: &[Option<&str>], level: usize, edit: PathEdit<'_>) -> Result<Jsonb> {
        if !self.is_container() {
            return Ok(self.clone());
        }
        let Some(step) = path[level] else {
            return Err(TypeError::new(
                "22004",
                format!("path element at position {} is null", level + 1),
            ));
        };
        let last = level + 1 == path.len();
        grow(|| match self {
            Jsonb::Object(pairs) => {
                let mut out = Vec::with_capacity(pairs.len() + 1);
                let mut found = false;
                for (k, v) in pairs {
                    if k != step {
                        out.push((k.clone(), v.clone()));
                        continue;
                    }
                    found = true;
                    if !last {
                        out.push((k.clone(), v.edit_at(path, level + 1, edit)?));
                        continue;
                    }
                    match edit {
                        PathEdit::Insert { .. } => {
                            return Err(TypeError::new("22023", "cannot replace existing key")
                                .with_hint(
                                    "Try using the function jsonb_set to replace key value.",
                                ))
                        }
                        PathEdit::Set { value, .. } => out.push((k.clone(), value.clone())),
                        PathEdit::Delete => {}
                    }
                }
                if !found && last && edit.creates() {
                    if let PathEdit::Set { value, .. } | PathEdit::Insert { value, .. } = edit {
                        out.push((step.to_string(), value.clone()));
                    }
                }
                Ok(Jsonb::Object(normalize_pairs(out)))
            }
            Jsonb::Array(items) => {
                let n = items.len() as i64;
                let mut at = parse_index(step).ok_or_else(|| {
                    TypeError::new(
                        "22P02",
                        format!(
                            "path element at position {} is not an integer: \"{step}\"",
                            level + 1
                        ),
                    )
                })?;
                if at < 0 {
                    at = if -at > n { i64::MIN } else { n + at };
                }
                at = at.min(n);
                let value = match edit {
                    PathEdit::Set { value, .. } | PathEdit::Insert { value, .. } => Some(value),
                    PathEdit::Delete => None,
                };
                let mut out = Vec::with_capacity(items.len() + 1);
                let mut done = false;
                if (at == i64::MIN || n == 0) && last && edit.creates() {
                    out.extend(value.cloned());
                    done = true;
                }
                for (i, v) in items.iter().enumerate() {
                    if i as i64 == at {
                        if !last {
                            out.push(v.edit_at(path, level + 1, edit)?);
                        } else {
                            match edit {
                                PathEdit::Insert {
                                    value,
                                    after: false,
                                } => {
                                    out.push(value.clone());
                                    out.push(v.clone());
                                }
                                PathEdit::Insert { value, after: true } => {
                                    out.push(v.clone());
                                    out.push(value.clone());
                                }
                                PathEdit::Set { value, .. } => out.push(value.clone()),
                                PathEdit::Delete => {}
                            }
                            done = true;
                        }
                    } else {
                        out.push(v.clone());
                    }
                    if edit.creates() && !done && last && i as i64 == n - 1 {
                        out.extend(value.cloned());
                        done = true;
                    }
                }
                Ok(Jsonb::Array(out))
            }
            _ => Ok(self.clone()),
        })
    }
}

fn cannot_delete_from_scalar() -> TypeError {
    TypeError::new("22023", "cannot delete from scalar")
}

/// The index that array position `i` names among `len` elements,
/// counting from the end when negative; `None` when outside the array.
pub fn array_position(len: usize, i: i64) -> Option<usize> {
    let n = len as i64;
    let at = if i < 0 { n + i } else { i };
    (0..n).contains(&at).then_some(at as usize)
}

/// A path step as an array position: an optionally signed integer.
pub fn parse_index(step: &str) -> Option<i64> {
    let t = step.trim_start();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i32>().ok().map(i64::from)
}

impl std::fmt::Display for Jsonb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}
