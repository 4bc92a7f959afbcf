//! Recognising a shape seen before without scanning the query again.
//!
//! A client that sends the same statement with new numbers (pgbench's
//! `... WHERE aid = 48213`) sends text that differs from the text of the
//! last time only in the digits of the literals the shape takes out. A
//! [`Template`] is that earlier text cut at those literals: the verbatim
//! pieces between them, and each literal's type and sign. A new query
//! string matches when it is the same pieces with a plain run of digits
//! (a number of the same type, with the same sign) at each cut. Then its
//! shape has the template's key and its literals' values are those
//! numbers, as [`shape`](super::shape) would find: a piece is copied
//! byte for byte, so every token around a literal, and every comment,
//! string and literal that was not taken out, is the same; and a run of
//! digits that stops before `.`, a letter, `_` or `$` is one integer token,
//! which the scan treats by its neighbours and its type alone. Anything
//! else (an `e` exponent, a decimal point, more digits than a `bigint` can
//! surely hold) is left to the full scan.
//!
//! Matching costs a comparison of the bytes and the parse of the digits,
//! instead of the scan's tokens, keyword checks and key string: about a
//! tenth of the instructions of [`shape`](super::shape) on pgbench's
//! select.

use super::{ident_char, Shape};
use tusk_exec::Value;
use tusk_storage::DataType;

/// Literals of more digits than this are left to the full scan (`u64`
/// holds them, and negated they fit an `i64`).
const MAX_DIGITS: usize = 18;

/// A query string cut at the literals its shape takes out (see the module
/// doc).
#[derive(Debug, Clone)]
pub(crate) struct Template {
    /// The shape's cache key.
    pub key: String,
    /// The string without the literals' digits.
    text: String,
    /// Where each literal's digits were cut out of `text`, in order.
    cuts: Vec<usize>,
    /// Each literal's type and whether a `-` before it belongs to it.
    literals: Vec<(DataType, bool)>,
}

impl Template {
    /// The template of `sql`, whose shape is `shape`; `None` when a
    /// literal is not an `integer` or `bigint` (the fast path parses only
    /// those).
    pub fn new(sql: &str, shape: &Shape, key: &str) -> Option<Template> {
        let mut text = String::with_capacity(sql.len());
        let mut cuts = Vec::with_capacity(shape.places.len());
        let mut literals = Vec::with_capacity(shape.places.len());
        let mut at = 0;
        for &(ty, start, end) in &shape.places {
            if !matches!(ty, DataType::Int4 | DataType::Int8) {
                return None;
            }
            // The literal's sign, if it has one, and any space after it
            // stay in the text; only the digits are cut.
            let digits = start + sql[start..end].find(|c: char| c.is_ascii_digit())?;
            if !sql.as_bytes()[digits..end].iter().all(u8::is_ascii_digit) {
                return None;
            }
            text.push_str(&sql[at..digits]);
            cuts.push(text.len());
            literals.push((ty, sql[start..digits].contains('-')));
            at = end;
        }
        text.push_str(&sql[at..]);
        Some(Template {
            key: key.to_owned(),
            text,
            cuts,
            literals,
        })
    }

    /// The literals' values when `sql` has this template's shape (see the
    /// module doc); `None` when it may not.
    pub fn values(&self, sql: &str) -> Option<Vec<Value>> {
        let b = sql.as_bytes();
        let text = self.text.as_bytes();
        let mut values = Vec::with_capacity(self.cuts.len());
        let (mut pos, mut piece_start) = (0, 0);
        for (&cut, &(ty, negative)) in self.cuts.iter().zip(&self.literals) {
            let piece = &text[piece_start..cut];
            if !b[pos..].starts_with(piece) {
                return None;
            }
            pos += piece.len();
            let start = pos;
            let mut n: u64 = 0;
            while pos < b.len() && b[pos].is_ascii_digit() {
                if pos - start == MAX_DIGITS {
                    return None;
                }
                n = n * 10 + u64::from(b[pos] - b'0');
                pos += 1;
            }
            if pos == start || b.get(pos).is_some_and(|&c| c == b'.' || ident_char(c)) {
                return None;
            }
            let v = if negative { -(n as i64) } else { n as i64 };
            let value = match (i32::try_from(v), ty) {
                (Ok(v), DataType::Int4) => Value::Int4(v),
                (Err(_), DataType::Int8) => Value::Int8(v),
                _ => return None,
            };
            values.push(value);
            piece_start = cut;
        }
        (b[pos..] == text[piece_start..]).then_some(values)
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape;
    use super::*;

    fn template(sql: &str) -> Template {
        let s = shape(sql).unwrap();
        Template::new(sql, &s, &s.key).unwrap()
    }

    #[test]
    fn new_numbers_match() {
        let t = template("SELECT abalance FROM pgbench_accounts WHERE aid = 123456;");
        assert_eq!(
            t.values("SELECT abalance FROM pgbench_accounts WHERE aid = 7;"),
            Some(vec![Value::Int4(7)])
        );
        let t = template("UPDATE a SET b = b + -4213 WHERE aid = 77;");
        assert_eq!(
            t.values("UPDATE a SET b = b + -5 WHERE aid = 2147483647;"),
            Some(vec![Value::Int4(-5), Value::Int4(i32::MAX)])
        );
        // A sign apart from its digits stays in the text.
        let t = template("select * from t where a = - 5");
        assert_eq!(
            t.values("select * from t where a = - 6"),
            Some(vec![Value::Int4(-6)])
        );
        assert_eq!(t.values("select * from t where a = 6"), None);
        let t = template("select * from t where a = -2147483648");
        assert_eq!(
            t.values("select * from t where a = -2147483648"),
            Some(vec![Value::Int4(i32::MIN)])
        );
    }

    #[test]
    fn other_types_and_tokens_do_not() {
        let t = template("select * from t where a = 1");
        for sql in [
            "select * from t where a = 3000000000",
            "select * from t where a = 1.5",
            "select * from t where a = 1e5",
            "select * from t where a = 1x",
            "select * from t where a = 1_000",
            "select * from t where a = ",
            "select * from t where a = 1 ",
            "select * from t where b = 1",
            "select * from t where a = 0000000000000000001",
        ] {
            assert_eq!(t.values(sql), None, "{sql}");
        }
        let s = shape("select * from t where a = 1.5").unwrap();
        assert!(Template::new("select * from t where a = 1.5", &s, &s.key).is_none());
    }

    /// Whenever a template says a string matches, the full scan finds the
    /// same key and values: strings made from template texts by small
    /// edits (digits, signs, dots, letters, spaces, quotes, comment marks).
    #[test]
    fn a_match_is_what_the_scan_finds() {
        let bases = [
            "SELECT abalance FROM pgbench_accounts WHERE aid = 123456;",
            "UPDATE pgbench_accounts SET abalance = abalance + -4213 WHERE aid = 77;",
            "insert into t values (1, 2), (3, -4) returning a + 5",
            "select 'a = 1', x from t where x = 6 -- x = 7",
            "select * from t where a = 1 and b = 20000000000 and c = 1 + 2",
            "select * from t where a = 5",
        ];
        let edits: &[&str] = &[
            "0", "9", "-", "+", ".", "e", "a", " ", "'", "--", "/*", "$", ";",
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut matched = 0;
        for base in bases {
            let t = template(base);
            for _ in 0..3000 {
                let mut s = base.to_string();
                for _ in 0..1 + next(3) {
                    let at = next(s.len() + 1);
                    let at = (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap();
                    match next(3) {
                        0 => s.insert_str(at, edits[next(edits.len())]),
                        1 if at < s.len() => {
                            s.remove(at);
                        }
                        _ if at < s.len() => s.replace_range(at..at + 1, edits[next(2)]),
                        _ => {}
                    }
                }
                if let Some(values) = t.values(&s) {
                    matched += 1;
                    let full = shape(&s).expect("a match has a shape");
                    assert_eq!(full.key, t.key, "{s}");
                    assert_eq!(full.values, values, "{s}");
                }
            }
        }
        assert!(matched > 100, "only {matched} edits kept the shape");
    }
}
