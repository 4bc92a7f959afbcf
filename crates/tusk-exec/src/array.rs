//! Array values: PostgreSQL's one-dimensional arrays and its zero-based
//! `int2vector` / `oidvector`.
//!
//! An [`ArrayValue`] knows its own type ([`DataType::Array`] of the element
//! type, or one of the vector types), the subscript of its first element
//! (1 unless written otherwise, 0 for the vector types) and its elements,
//! each a [`Value`] of the element type or NULL. Vectors of arrays hold one
//! `ArrayValue` per row (`Data::Array`); catalog relations and the array
//! functions are their users, so arrays favour simplicity over speed.
//!
//! The rules are PostgreSQL's (`arrayfuncs.c`):
//! - **Text form** (`array_out` / `array_in`): `{1,2,NULL}`; an element is
//!   double-quoted when it is empty, equals `NULL` in any case, or holds a
//!   blank, `{`, `}`, `,`, `"` or `\` (inside quotes `"` and `\` are
//!   escaped with `\`). A lower bound other than 1 prefixes the dimensions:
//!   `[0:2]={1,2,3}`. The vector types print their elements separated by
//!   single spaces. Multidimensional arrays are refused (0A000).
//! - **Comparison** (`array_cmp`): element by element, a NULL element above
//!   every value and equal to another NULL; when one array is a prefix of
//!   the other, the shorter sorts first; then the lower bound decides.
//!   Equality therefore also needs equal lower bounds, as in PostgreSQL.

use crate::error::{sqlstate, ExecError, Result};
use crate::value::Value;
use std::cmp::Ordering;
use tusk_storage::DataType;

/// One array value.
#[derive(Debug, Clone)]
pub struct ArrayValue {
    /// The array's type: `Array(element)`, `Int2Vector` or `OidVector`.
    pub ty: DataType,
    /// The subscript of the first element.
    pub lower: i32,
    /// The elements; `Value::Null` for a NULL element.
    pub items: Vec<Value>,
}

impl ArrayValue {
    /// An array of type `ty` with these elements, the first at subscript
    /// 1 (0 for the vector types).
    pub fn new(ty: DataType, items: Vec<Value>) -> ArrayValue {
        let lower = if matches!(ty, DataType::Int2Vector | DataType::OidVector) {
            0
        } else {
            1
        };
        ArrayValue { ty, lower, items }
    }

    /// The element type.
    pub fn element(&self) -> DataType {
        self.ty.element().expect("an array type")
    }

    /// The subscript of the last element (`lower - 1` when empty).
    pub fn upper(&self) -> i32 {
        self.lower + self.items.len() as i32 - 1
    }

    /// The element at subscript `i` (`None` outside the array).
    pub fn get(&self, i: i64) -> Option<&Value> {
        let at = i.checked_sub(self.lower as i64)?;
        usize::try_from(at).ok().and_then(|at| self.items.get(at))
    }

    fn is_vector(&self) -> bool {
        matches!(self.ty, DataType::Int2Vector | DataType::OidVector)
    }
}

impl PartialEq for ArrayValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for ArrayValue {}

impl PartialOrd for ArrayValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ArrayValue {
    fn cmp(&self, other: &Self) -> Ordering {
        let order = crate::expr::TextOrder::of(self.element());
        for (a, b) in self.items.iter().zip(&other.items) {
            let o = match (a.is_null(), b.is_null()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => cmp_values(a, b, order),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        self.items
            .len()
            .cmp(&other.items.len())
            .then(self.lower.cmp(&other.lower))
    }
}

/// The elements of `a` as one vector of its element type.
pub fn element_vector(a: &ArrayValue) -> crate::vector::Vector {
    let mut v = crate::vector::Vector::with_capacity(a.element(), a.items.len());
    for x in &a.items {
        v.push_value(x);
    }
    v
}

/// Orders two non-NULL values of one type as PostgreSQL's btree operator
/// class does (floats with NaN above everything, strings in `order`).
pub fn cmp_values(a: &Value, b: &Value, order: crate::expr::TextOrder) -> Ordering {
    use tusk_types::float::float_cmp;
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int2(x), Value::Int2(y)) => x.cmp(y),
        (Value::Int4(x), Value::Int4(y)) | (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (Value::Int8(x), Value::Int8(y))
        | (Value::Time(x), Value::Time(y))
        | (Value::Timestamp(x), Value::Timestamp(y))
        | (Value::TimestampTz(x), Value::TimestampTz(y)) => x.cmp(y),
        (Value::Float4(x), Value::Float4(y)) => float_cmp(*x as f64, *y as f64),
        (Value::Float8(x), Value::Float8(y)) => float_cmp(*x, *y),
        (Value::Numeric(x), Value::Numeric(y)) => x.cmp(y),
        (Value::Interval(x), Value::Interval(y)) => x.cmp(y),
        (Value::Text(x), Value::Text(y)) => order.cmp(x.as_bytes(), y.as_bytes()),
        (Value::Bytea(x), Value::Bytea(y)) => x.cmp(y),
        (Value::Uuid(x), Value::Uuid(y)) => x.cmp(y),
        (Value::Oid { oid: x, .. }, Value::Oid { oid: y, .. }) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x.cmp(y),
        // Values of one type never differ in kind.
        _ => Ordering::Equal,
    }
}

/// Whether an element's text must be quoted in an array's text form.
fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.eq_ignore_ascii_case("null")
        || s.bytes()
            .any(|b| matches!(b, b'{' | b'}' | b',' | b'"' | b'\\') || b.is_ascii_whitespace())
}

/// The text form of an array (`array_out`); `element` prints one element.
pub fn format_array(a: &ArrayValue, element: &mut dyn FnMut(&Value) -> String) -> String {
    let mut out = String::new();
    if a.is_vector() {
        for (i, v) in a.items.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&element(v));
        }
        return out;
    }
    if a.lower != 1 && !a.items.is_empty() {
        out.push_str(&format!("[{}:{}]=", a.lower, a.upper()));
    }
    out.push('{');
    for (i, v) in a.items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if v.is_null() {
            out.push_str("NULL");
            continue;
        }
        let s = element(v);
        if needs_quotes(&s) {
            out.push('"');
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(&s);
        }
    }
    out.push('}');
    out
}

fn malformed(text: &str, detail: &str) -> ExecError {
    ExecError::coded(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{text}\""),
    )
    .with_detail(detail.to_string())
}

/// Reads an array of type `ty` from its text form (`array_in`);
/// `element` reads one element's text.
pub fn parse_array(
    text: &str,
    ty: DataType,
    element: &mut dyn FnMut(&str) -> Result<Value>,
) -> Result<ArrayValue> {
    if matches!(ty, DataType::Int2Vector | DataType::OidVector) {
        let items = text
            .split_ascii_whitespace()
            .map(&mut *element)
            .collect::<Result<Vec<_>>>()?;
        return Ok(ArrayValue::new(ty, items));
    }
    let mut s = text.trim_start();
    let mut lower = None;
    if let Some(rest) = s.strip_prefix('[') {
        // `[lower:upper]=` dimension decoration.
        let (dims, rest) = rest
            .split_once(']')
            .ok_or_else(|| malformed(text, "Missing \"]\" after array dimensions."))?;
        let (lo, hi) = dims
            .split_once(':')
            .map(|(l, h)| (l.trim(), h.trim()))
            .unwrap_or(("1", dims.trim()));
        let parse = |n: &str| {
            n.parse::<i32>()
                .map_err(|_| malformed(text, "Array bound is not an integer."))
        };
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        if hi < lo {
            return Err(ExecError::coded(
                sqlstate::ARRAY_SUBSCRIPT_ERROR,
                "upper bound cannot be less than lower bound",
            ));
        }
        lower = Some((lo, hi));
        s = rest.trim_start();
        if s.starts_with('[') {
            return Err(multidimensional());
        }
        s = s
            .strip_prefix('=')
            .ok_or_else(|| malformed(text, "Missing \"=\" after array dimensions."))?
            .trim_start();
    }
    let body = s.strip_prefix('{').ok_or_else(|| {
        malformed(
            text,
            "Array value must start with \"{\" or dimension information.",
        )
    })?;
    let mut items = Vec::new();
    let mut chars = body.char_indices().peekable();
    let mut closed = false;
    let mut expect_item = true;
    while let Some(&(_, c)) = chars.peek() {
        if c.is_ascii_whitespace() {
            chars.next();
            continue;
        }
        if c == '}' && (items.is_empty() || !expect_item) {
            chars.next();
            closed = true;
            break;
        }
        if !expect_item {
            if c == ',' {
                chars.next();
                expect_item = true;
                continue;
            }
            return Err(malformed(text, &format!("Unexpected \"{c}\" character.")));
        }
        if c == '{' {
            return Err(multidimensional());
        }
        // One element: quoted or not; backslashes escape in both.
        let mut item = String::new();
        let mut quoted = false;
        let mut was_quoted = false;
        let mut trailing_ws = 0;
        loop {
            let Some(&(_, c)) = chars.peek() else {
                return Err(malformed(text, "Unexpected end of input."));
            };
            match c {
                '\\' => {
                    chars.next();
                    let Some((_, e)) = chars.next() else {
                        return Err(malformed(text, "Unexpected end of input."));
                    };
                    item.push(e);
                    trailing_ws = 0;
                }
                '"' if quoted => {
                    chars.next();
                    quoted = false;
                }
                '"' if item.is_empty() && !was_quoted => {
                    chars.next();
                    quoted = true;
                    was_quoted = true;
                }
                '"' => return Err(malformed(text, "Unexpected array element.")),
                ',' | '}' if !quoted => break,
                '{' if !quoted => return Err(malformed(text, "Unexpected \"{\" character.")),
                c => {
                    chars.next();
                    if c.is_ascii_whitespace() && !quoted {
                        if item.is_empty() {
                            continue;
                        }
                        trailing_ws += 1;
                    } else {
                        trailing_ws = 0;
                    }
                    item.push(c);
                }
            }
        }
        if !quoted {
            item.truncate(item.len() - trailing_ws);
        }
        items.push(if !was_quoted && item.eq_ignore_ascii_case("null") {
            Value::Null
        } else {
            element(&item)?
        });
        expect_item = false;
    }
    if !closed {
        return Err(malformed(text, "Unexpected end of input."));
    }
    if chars.any(|(_, c)| !c.is_ascii_whitespace()) {
        return Err(malformed(text, "Junk after closing right brace."));
    }
    let mut a = ArrayValue::new(ty, items);
    if let Some((lo, hi)) = lower {
        if (hi as i64 - lo as i64 + 1) as usize != a.items.len() {
            return Err(malformed(
                text,
                "Specified array dimensions do not match array contents.",
            ));
        }
        a.lower = lo;
    }
    Ok(a)
}

/// The spill-file encoding: type oid, lower bound, element count, then
/// each element as a NULL flag and its text form (in PostgreSQL's default
/// styles, which read back exactly).
impl crate::codec::VarCodec for ArrayValue {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ty.oid().to_le_bytes());
        out.extend_from_slice(&self.lower.to_le_bytes());
        out.extend_from_slice(&(self.items.len() as u32).to_le_bytes());
        for v in &self.items {
            match v.to_text() {
                None => out.push(0),
                Some(t) => {
                    out.push(1);
                    out.extend_from_slice(&(t.len() as u32).to_le_bytes());
                    out.extend_from_slice(t.as_bytes());
                }
            }
        }
    }

    fn decode(b: &[u8]) -> (Self, usize) {
        let u32_at = |p: usize| u32::from_le_bytes(b[p..p + 4].try_into().unwrap());
        let ty = DataType::from_oid(u32_at(0)).expect("an array type oid");
        let lower = u32_at(4) as i32;
        let n = u32_at(8) as usize;
        let element = ty.element().expect("an array type");
        let env = crate::cast::CastEnv::default();
        let mut p = 12;
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            p += 1;
            if b[p - 1] == 0 {
                items.push(Value::Null);
                continue;
            }
            let len = u32_at(p) as usize;
            let text = std::str::from_utf8(&b[p + 4..p + 4 + len]).expect("UTF-8 element");
            items.push(crate::cast::from_text(text, element, &env).expect("an element it wrote"));
            p += 4 + len;
        }
        (ArrayValue { ty, lower, items }, p)
    }

    fn placeholder() -> Self {
        ArrayValue::new(DataType::Int4.array_of().expect("integer[]"), Vec::new())
    }
}

fn multidimensional() -> ExecError {
    ExecError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "multidimensional arrays are not supported",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(text: &str) -> Result<ArrayValue> {
        let ty = DataType::Int4.array_of().unwrap();
        parse_array(text, ty, &mut |s| {
            Ok(Value::Int4(crate::cast::parse_int4(s)?))
        })
    }

    fn texts(text: &str) -> ArrayValue {
        let ty = DataType::Text.array_of().unwrap();
        parse_array(text, ty, &mut |s| Ok(Value::Text(s.to_string()))).unwrap()
    }

    fn show(a: &ArrayValue) -> String {
        format_array(a, &mut |v| v.to_text().unwrap())
    }

    #[test]
    fn text_forms_round_trip() {
        assert_eq!(show(&ints("{1, 2 ,NULL}").unwrap()), "{1,2,NULL}");
        assert_eq!(show(&ints("{}").unwrap()), "{}");
        assert_eq!(show(&ints("[0:1]={7,8}").unwrap()), "[0:1]={7,8}");
        let t = texts(r#"{a,"b c","",NULL,"NULL","x\"y",z\\w}"#);
        assert_eq!(t.items[3], Value::Null);
        assert_eq!(t.items[4], Value::Text("NULL".into()));
        assert_eq!(show(&t), r#"{a,"b c","",NULL,"NULL","x\"y","z\\w"}"#);
        assert!(ints("{1,2").is_err());
        assert!(ints("1,2").is_err());
        assert!(ints("{1}x").is_err());
        assert_eq!(
            ints("{{1}}").unwrap_err().code,
            sqlstate::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(
            ints("{a}").unwrap_err().code,
            sqlstate::INVALID_TEXT_REPRESENTATION
        );
        let v = parse_array("1 2  3", DataType::Int2Vector, &mut |s| {
            Ok(Value::Int2(s.parse().unwrap()))
        })
        .unwrap();
        assert_eq!((v.lower, v.items.len()), (0, 3));
        assert_eq!(show(&v), "1 2 3");
    }

    #[test]
    fn comparison_is_elementwise() {
        let a = |t: &str| ints(t).unwrap();
        assert!(a("{1,2}") < a("{1,3}"));
        assert!(a("{1,2}") < a("{1,2,0}"));
        assert!(a("{1,NULL}") > a("{1,5}"));
        assert_eq!(a("{1,NULL}"), a("{1,NULL}"));
        assert_ne!(a("{1}"), a("[0:0]={1}"));
        assert_eq!(a("{1}").get(1), Some(&Value::Int4(1)));
        assert_eq!(a("{1}").get(2), None);
    }
}
