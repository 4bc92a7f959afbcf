//! Auto-parameterization: the shape of a simple query, with its numeric
//! literals taken out as parameters, so that `... WHERE aid = 17` and
//! `... WHERE aid = 42` share one prepared plan (see `stmtcache`).
//!
//! A hand-written scan (no allocation per token) reads the query string
//! with PostgreSQL's lexical rules — comments, quoted strings and
//! identifiers, dollar quotes, operators, numbers — and finds the numeric
//! literals that are safe to replace by a parameter of the literal's own
//! type. Everything else stays in the shape verbatim: two strings have the
//! same shape only if they differ in nothing but the digits of those
//! literals (and each literal keeps its type: `integer` when it fits,
//! `bigint`, else `numeric`, as the binder types literals).
//!
//! ## Which literals
//!
//! A parameter must mean exactly what the literal meant. The binder types
//! both alike, and the planner uses a parameter wherever it uses a
//! constant (index keys, estimates: tusk keeps no value statistics). What
//! differs is constant folding: `2147483647 + 1` fails while planning,
//! even if no row is read, but `$1 + $2` only when it is evaluated. So a
//! literal becomes a parameter only where nothing folds with it:
//!
//! * an operand of a comparison or arithmetic operator whose other operand
//!   is a plain column name (`aid = 17`, `abalance + -5`), with nothing
//!   binding tighter after it (the next token ends the expression: `)`,
//!   `,`, `;`, the end, or a keyword such as `AND` or `WHERE`);
//! * a whole item of an `INSERT ... VALUES` row.
//!
//! A sign before a literal belongs to it when it is unary (PostgreSQL's
//! grammar folds it into the constant: `-2147483648` is an `integer`).
//! Statements other than SELECT, INSERT, UPDATE and DELETE, strings of
//! several statements, strings holding `$n` parameters, and anything the
//! scan does not recognise have no shape: they are not cached.

mod template;

use crate::bind::literal_value;
pub(crate) use template::Template;
use tusk_exec::Value;
use tusk_storage::DataType;
use tusk_types::scalar::{format_uint, IntText};

/// A simple query with its parameterizable literals taken out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shape {
    /// The cache key: the text with each such literal's digits replaced by
    /// a NUL byte and a letter for its type (NUL never occurs in a query
    /// string: the protocol ends strings with it).
    pub key: String,
    /// Each literal's value, in order: what a cached plan runs with.
    pub values: Vec<Value>,
    /// Each literal's type and where it is (its sign included) in the
    /// query string: what preparing the shape's plan needs.
    pub places: Vec<(DataType, usize, usize)>,
}

impl Shape {
    /// `sql` (the string this shape was taken from) with each literal
    /// replaced by `$1`, `$2`, ...: the statement the plan is prepared
    /// from. Only a shape not cached yet needs it, so it is not built
    /// with the key.
    pub fn parameterized(&self, sql: &str) -> String {
        let mut out = String::with_capacity(sql.len() + 2 * self.places.len());
        let mut at = 0;
        for (n, &(_, start, end)) in self.places.iter().enumerate() {
            out.push_str(&sql[at..start]);
            out.push('$');
            push_number(&mut out, n as u64 + 1);
            at = end;
        }
        out.push_str(&sql[at..]);
        out
    }
}

/// Tokens as far as the rules need them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An unquoted word (identifier or keyword).
    Word,
    /// A quoted identifier.
    Quoted,
    /// A numeric literal (digits, point, exponent).
    Number,
    /// A string or bit-string constant, dollar-quoted or not.
    Str,
    Op,
    Open,
    Close,
    Comma,
    Semi,
    /// `.`, `[`, `]`, `::`, `:`
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

/// Keywords after which an operand ends (nothing binds tighter).
const ENDERS: &[&str] = &[
    "and",
    "or",
    "where",
    "returning",
    "order",
    "group",
    "having",
    "limit",
    "offset",
    "union",
    "intersect",
    "except",
    "then",
    "else",
    "when",
    "end",
    "from",
    "as",
];

/// Words that are values, not column names.
const VALUE_WORDS: &[&str] = &["null", "true", "false", "default"];

const COMPARISONS: &[&str] = &["=", "<>", "!=", "<", ">", "<=", ">="];
const ARITHMETIC: &[&str] = &["+", "-", "*", "/", "%"];

/// Byte classes, looked up in [`CLASS`] (the scan's inner loops run once
/// per byte of the query).
const IDENT_START: u8 = 1;
const IDENT_CHAR: u8 = 2;
const OP_CHAR: u8 = 4;

const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 {
            t[c] |= IDENT_START | IDENT_CHAR;
        }
        if b.is_ascii_digit() || b == b'$' {
            t[c] |= IDENT_CHAR;
        }
        c += 1;
    }
    let ops = b"+-*/<>=~!@#%^&|`?";
    let mut i = 0;
    while i < ops.len() {
        t[ops[i] as usize] |= OP_CHAR;
        i += 1;
    }
    t
};

fn op_char(c: u8) -> bool {
    CLASS[c as usize] & OP_CHAR != 0
}

fn ident_start(c: u8) -> bool {
    CLASS[c as usize] & IDENT_START != 0
}

fn ident_char(c: u8) -> bool {
    CLASS[c as usize] & IDENT_CHAR != 0
}

/// Splits `sql` into tokens; `None` for anything unexpected (an
/// unterminated quote, `$n`, a number running into letters).
fn scan(sql: &str) -> Option<Vec<Token>> {
    let b = sql.as_bytes();
    let mut out = Vec::with_capacity(32);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                if depth != 0 {
                    return None;
                }
                continue;
            }
            b'\'' => {
                i = quoted(b, i, b'\'', false)?;
                Kind::Str
            }
            b'"' => {
                i = quoted(b, i, b'"', false)?;
                Kind::Quoted
            }
            b'$' => {
                // A dollar quote `$tag$ ... $tag$`; `$n` is a parameter.
                let mut j = i + 1;
                while j < b.len() && ident_char(b[j]) && b[j] != b'$' {
                    j += 1;
                }
                if b.get(j) != Some(&b'$') || b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
                let tag = &b[i..=j];
                let body = j + 1;
                let close = b[body..].windows(tag.len()).position(|w| w == tag)?;
                i = body + close + tag.len();
                Kind::Str
            }
            b'0'..=b'9' => {
                i = number(b, i)?;
                Kind::Number
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = number(b, i)?;
                Kind::Number
            }
            _ if ident_start(c) => {
                // E'...', B'...', X'...', U&'...' are strings.
                let prefixed = |n: usize| b.get(i + n) == Some(&b'\'');
                if matches!(c | 0x20, b'e' | b'b' | b'x') && prefixed(1) {
                    i = quoted(b, i + 1, b'\'', c | 0x20 == b'e')?;
                    Kind::Str
                } else if c | 0x20 == b'u' && b.get(i + 1) == Some(&b'&') {
                    return None;
                } else {
                    while i < b.len() && ident_char(b[i]) {
                        i += 1;
                    }
                    Kind::Word
                }
            }
            b'(' | b')' | b',' | b';' | b'.' | b'[' | b']' => {
                i += 1;
                match c {
                    b'(' => Kind::Open,
                    b')' => Kind::Close,
                    b',' => Kind::Comma,
                    b';' => Kind::Semi,
                    _ => Kind::Other,
                }
            }
            b':' => {
                i += if b.get(i + 1) == Some(&b':') { 2 } else { 1 };
                Kind::Other
            }
            _ if op_char(c) => {
                while i < b.len() && op_char(b[i]) {
                    if b[i..].starts_with(b"--") || b[i..].starts_with(b"/*") {
                        break;
                    }
                    i += 1;
                }
                // PostgreSQL's rule: a multi-character operator does not
                // end in + or - unless it holds one of ~!@#%^&|`?.
                let special = b[start..i].iter().any(|c| b"~!@#%^&|`?".contains(c));
                while !special && i - start > 1 && matches!(b[i - 1], b'+' | b'-') {
                    i -= 1;
                }
                Kind::Op
            }
            _ => return None,
        };
        out.push(Token {
            kind,
            start,
            end: i,
        });
    }
    Some(out)
}

/// The end of a quoted run starting at `b[i] == q` (doubled quotes stay
/// inside; with `escapes`, an E'' string's, backslashes escape).
fn quoted(b: &[u8], i: usize, q: u8, escapes: bool) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'\\' if escapes => j += 2,
            &c if c == q => {
                if b.get(j + 1) == Some(&q) {
                    j += 2;
                } else {
                    return Some(j + 1);
                }
            }
            _ => j += 1,
        }
    }
}

/// The end of a number starting at `i`; `None` if letters follow it
/// (PostgreSQL's `trailing junk after numeric literal`).
fn number(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
    };
    digits(&mut i);
    if b.get(i) == Some(&b'.') && b.get(i + 1) != Some(&b'.') {
        i += 1;
        digits(&mut i);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            i = j;
            digits(&mut i);
        }
    }
    if b.get(i).is_some_and(|&c| ident_char(c)) {
        return None;
    }
    Some(i)
}

/// The shape of `sql` (see the module doc), or `None` if it has none.
pub(crate) fn shape(sql: &str) -> Option<Shape> {
    let toks = scan(sql)?;
    let text = |t: &Token| &sql[t.start..t.end];
    let word_is = |t: Option<&Token>, words: &[&str]| {
        t.is_some_and(|t| {
            t.kind == Kind::Word && words.iter().any(|w| text(t).eq_ignore_ascii_case(w))
        })
    };
    let first = toks.first()?;
    if !word_is(Some(first), &["select", "insert", "update", "delete"]) {
        return None;
    }
    // One statement: only trailing semicolons after the first one.
    if let Some(semi) = toks.iter().position(|t| t.kind == Kind::Semi) {
        if toks[semi..].iter().any(|t| t.kind != Kind::Semi) {
            return None;
        }
    }
    let insert = word_is(Some(first), &["insert"]);
    let column = |t: Option<&Token>| {
        t.is_some_and(|t| match t.kind {
            Kind::Quoted => true,
            Kind::Word => !VALUE_WORDS.iter().any(|w| text(t).eq_ignore_ascii_case(w)),
            _ => false,
        })
    };
    let op_is = |t: Option<&Token>, ops: &[&str]| {
        t.is_some_and(|t| t.kind == Kind::Op && ops.contains(&text(t)))
    };
    let ends = |t: Option<&Token>| {
        t.is_none_or(|t| {
            matches!(t.kind, Kind::Close | Kind::Comma | Kind::Semi) || word_is(Some(t), ENDERS)
        })
    };

    let mut shape = Shape {
        key: String::with_capacity(sql.len()),
        values: Vec::new(),
        places: Vec::new(),
    };
    // Copied verbatim up to here.
    let mut key_at = 0;
    // Parenthesis depth, and whether the tokens are in the row list of
    // an INSERT's own VALUES (its rows are at depth 1).
    let (mut depth, mut in_values) = (0usize, false);
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => depth = depth.checked_sub(1)?,
            Kind::Word if insert && depth == 0 && text(&t).eq_ignore_ascii_case("values") => {
                in_values = true;
                i += 1;
                continue;
            }
            // Between rows only commas: anything else ends the list.
            Kind::Comma => {}
            _ if depth == 0 => in_values = false,
            _ => {}
        }
        if t.kind != Kind::Number {
            i += 1;
            continue;
        }
        // The literal with a unary sign before it: the sign is unary when
        // what precedes it is no operand.
        let mut lit_start = i;
        if i > 0 && op_is(toks.get(i - 1), &["-", "+"]) {
            let before = (i >= 2).then(|| toks[i - 2]);
            let operand_before = before.is_some_and(|b| {
                matches!(
                    b.kind,
                    Kind::Number | Kind::Str | Kind::Quoted | Kind::Close
                ) || (b.kind == Kind::Word && !word_is(Some(&b), ENDERS))
                    || (b.kind == Kind::Other && text(&b) == "]")
            });
            if !operand_before {
                lit_start = i - 1;
            }
        }
        let prev = lit_start.checked_sub(1).map(|p| &toks[p]);
        let prev2 = lit_start.checked_sub(2).map(|p| &toks[p]);
        let next = toks.get(i + 1);
        let next2 = toks.get(i + 2);
        let operator_operand =
            (op_is(prev, COMPARISONS) || op_is(prev, ARITHMETIC)) && column(prev2) && ends(next);
        let operand_before_operator = lit_start == i
            && (op_is(next, COMPARISONS) || op_is(next, ARITHMETIC))
            && column(next2)
            && ends(toks.get(i + 3))
            && !prev.is_some_and(|p| p.kind == Kind::Op || p.kind == Kind::Other);
        let values_item = in_values
            && depth == 1
            && prev.is_some_and(|p| matches!(p.kind, Kind::Open | Kind::Comma))
            && next.is_some_and(|n| matches!(n.kind, Kind::Close | Kind::Comma));
        if !(operator_operand || operand_before_operator || values_item) {
            i += 1;
            continue;
        }
        let literal = &sql[toks[lit_start].start..t.end];
        // A sign may be apart from its digits, and `+` is dropped.
        let digits: std::borrow::Cow<'_, str> = if literal
            .bytes()
            .all(|c| c != b'+' && !c.is_ascii_whitespace())
        {
            literal.into()
        } else {
            literal
                .bytes()
                .filter(|c| !c.is_ascii_whitespace() && *c != b'+')
                .map(char::from)
                .collect::<String>()
                .into()
        };
        let Ok((value, ty)) = literal_value(&digits) else {
            i += 1;
            continue;
        };
        shape.key.push_str(&sql[key_at..t.start]);
        shape.key.push('\0');
        shape.key.push(match ty {
            DataType::Int4 => 'i',
            DataType::Int8 => 'l',
            _ => 'n',
        });
        key_at = t.end;
        shape.values.push(value);
        shape.places.push((ty, toks[lit_start].start, t.end));
        i += 1;
    }
    if shape.values.is_empty() {
        // Nothing to take out: the text itself is the key.
        shape.key.clear();
        shape.key.push_str(sql);
        return Some(shape);
    }
    shape.key.push_str(&sql[key_at..]);
    Some(shape)
}

/// Appends `n` in decimal (without `format!`'s machinery: this runs for
/// every simple query, and so does the command tag's count).
pub(crate) fn push_number(out: &mut String, n: u64) {
    let mut buf = IntText::default();
    let digits = format_uint(&mut buf, n);
    out.push_str(std::str::from_utf8(digits).expect("ASCII digits"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(sql: &str) -> Option<(String, Vec<Value>)> {
        shape(sql).map(|s| (s.parameterized(sql), s.values))
    }

    #[test]
    fn numbers_in_decimal() {
        for n in [0, 7, 10, 12345, u64::MAX] {
            let mut s = String::from("x");
            push_number(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }

    #[test]
    fn pgbench_statements() {
        assert_eq!(
            params("SELECT abalance FROM pgbench_accounts WHERE aid = 123456;"),
            Some((
                "SELECT abalance FROM pgbench_accounts WHERE aid = $1;".into(),
                vec![Value::Int4(123456)]
            ))
        );
        assert_eq!(
            params("UPDATE pgbench_accounts SET abalance = abalance + -4213 WHERE aid = 77;"),
            Some((
                "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;".into(),
                vec![Value::Int4(-4213), Value::Int4(77)]
            ))
        );
        assert_eq!(
            params(
                "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
                 VALUES (3, 1, 5150, -93, CURRENT_TIMESTAMP);"
            ),
            Some((
                "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
                 VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);"
                    .into(),
                vec![
                    Value::Int4(3),
                    Value::Int4(1),
                    Value::Int4(5150),
                    Value::Int4(-93)
                ]
            ))
        );
    }

    #[test]
    fn same_shape_only_for_same_types() {
        let key = |s: &str| shape(s).unwrap().key;
        assert_eq!(
            key("select * from t where a = 1"),
            key("select * from t where a = 99")
        );
        assert_ne!(
            key("select * from t where a = 1"),
            key("select * from t where a = 1.5")
        );
        assert_ne!(
            key("select * from t where a = 1"),
            key("select * from t where a = 3000000000")
        );
        // A sign written apart stays in the key: `a=-1` and `a=1` differ.
        assert_ne!(
            key("select * from t where a = -1"),
            key("select * from t where a = 1")
        );
        assert_eq!(
            key("select * from t where a = -1"),
            key("select * from t where a = -7")
        );
        assert_eq!(
            shape("select * from t where a = -2147483648")
                .unwrap()
                .values,
            vec![Value::Int4(i32::MIN)]
        );
    }

    #[test]
    fn literals_that_fold_or_place_stay() {
        for sql in [
            "select 1 + 2 from t",
            "select * from t where a = 1 + 2",
            "select * from t where a = 2147483647 + b",
            "select * from t order by 1",
            "select * from t limit 5",
            "select a::numeric(10, 2) from t",
            "select * from t where a = 5::int8",
            "select * from t where a in (1, 2)",
            "select f(1, 2) from t",
            "select * from t where (a) = 5",
            "select * from t where null = 5",
            "select * from t where a = - -5",
            "insert into t select 1, 2",
            "insert into t values (f(1), 2 + 3)",
        ] {
            assert_eq!(params(sql).unwrap().1, Vec::<Value>::new(), "{sql}");
        }
        // Only the items of the VALUES rows.
        assert_eq!(
            params("insert into t (a, b) values (1, 2), (3, f(4)) returning a + 5").unwrap(),
            (
                "insert into t (a, b) values ($1, $2), ($3, f(4)) returning a + $4".into(),
                vec![
                    Value::Int4(1),
                    Value::Int4(2),
                    Value::Int4(3),
                    Value::Int4(5)
                ]
            )
        );
    }

    #[test]
    fn values_rows_only_of_the_insert_itself() {
        let (sql, values) =
            params("insert into t values (1) on conflict (a) do update set b = f(5, 6)").unwrap();
        assert_eq!(values, vec![Value::Int4(1)]);
        assert!(sql.ends_with("set b = f(5, 6)"), "{sql}");
        assert_eq!(
            params("select * from (values (1, 2)) v").unwrap().1,
            Vec::<Value>::new()
        );
        // Backslashes escape only in E'' strings.
        let (_, values) = params("select * from t where a like 'x\\' and b = 7").unwrap();
        assert_eq!(values, vec![Value::Int4(7)]);
        // ... so here `b = 7` is inside the string.
        let (_, values) = params("select * from t where a like E'x\\' and b = 7 -- '").unwrap();
        assert_eq!(values, Vec::<Value>::new());
    }

    #[test]
    fn no_shape() {
        for sql in [
            "begin",
            "select 1; select 2",
            "select * from t where a = $1",
            "select 'unterminated",
            "select 12abc",
            "create table t (a int)",
        ] {
            assert_eq!(shape(sql), None, "{sql}");
        }
    }

    #[test]
    fn quotes_and_comments_are_skipped() {
        let sql = "select 'a = 1', \"b = 2\", $q$ c = 3 $q$ /* d = 4 /* nested */ */ from t \
             -- e = 5\n where x = 6";
        let s = shape(sql).unwrap();
        assert_eq!(s.values, vec![Value::Int4(6)]);
        assert_eq!(s.places[0].0, DataType::Int4);
        assert!(s.parameterized(sql).ends_with("where x = $1"));
    }
}
