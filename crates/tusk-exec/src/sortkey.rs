//! Normalized sort keys: every ORDER BY key list as one byte string whose
//! bytewise order is the SQL order.
//!
//! Sorting, merging runs, top-N selection, finding runs of equal keys
//! (`Unique`, window peers, DISTINCT aggregates) and min/max all need one
//! comparison that is a *total order* for every type. Comparing typed values
//! through per-type code invites inconsistencies (a numeric comparison that
//! overflows, a float comparison that is not transitive around NaN), and an
//! inconsistent comparator handed to `sort_by` panics. Here each row's keys
//! are encoded once into bytes, and all later comparisons are `&[u8]`
//! comparisons, which are total by construction and cannot panic.
//!
//! ## Encoding of one key
//!
//! A key starts with a NULL byte: `0x00` for a NULL under NULLS FIRST, `0x02`
//! for a NULL under NULLS LAST, `0x01` for a value, which follows. The value
//! bytes are chosen so that bytewise order is PostgreSQL's order:
//!
//! | type | bytes |
//! |---|---|
//! | boolean | `0` / `1` |
//! | smallint, integer, bigint, date, time, timestamp[tz] | big endian, sign bit flipped |
//! | real, double precision | the double's bits, flipped so they order as numbers; `-0` as `0`, every NaN as one NaN above `Infinity` (`float8_cmp_internal`) |
//! | numeric | a class byte (negative, zero, positive), then for non-zero values the decimal exponent and the significant digits, terminated; all inverted for negative values |
//! | interval | the 128-bit span of `interval_cmp_value` (30-day months, 24-hour days), big endian, sign bit flipped |
//! | text, varchar | the bytes (C collation), `0x00` escaped as `0x00 0xFF`, terminated by `0x00 0x00` |
//! | character(n) | as text, without trailing spaces (`bpcharcmp`) |
//! | jsonb | the document in `jsonb`'s order (see `func::json::write_sort_key`) |
//!
//! Variable-length encodings are *prefix free* (no encoding is a proper prefix
//! of another), so the keys of a list can be concatenated and a DESC key is
//! simply the bitwise complement of its value bytes. NULLS FIRST/LAST is
//! independent of the direction, as in PostgreSQL, so the NULL byte is never
//! complemented.
//!
//! Numeric values are read through their decimal text form, so the encoding
//! does not depend on how [`Numeric`] stores its digits.

use crate::numeric::Numeric;
use crate::vector::{Data, Vector};
use std::fmt::Write;
use tusk_storage::DataType;

/// How one key column is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOrder {
    pub ty: DataType,
    pub desc: bool,
    pub nulls_first: bool,
}

impl KeyOrder {
    /// Ascending with PostgreSQL's default NULL placement (NULLS LAST): the
    /// order used for equality tests, where only "equal or not" matters.
    pub fn asc(ty: DataType) -> KeyOrder {
        KeyOrder {
            ty,
            desc: false,
            nulls_first: false,
        }
    }
}

/// Encoded keys of many rows in one buffer (row `i` is
/// `bytes[ends[i-1]..ends[i]]`).
#[derive(Debug, Default, Clone)]
pub struct KeyBuf {
    pub bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyBuf {
    pub fn new() -> KeyBuf {
        KeyBuf::default()
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Bytes held (for memory accounting).
    pub fn mem_size(&self) -> usize {
        self.bytes.len() + self.ends.len() * std::mem::size_of::<usize>()
    }

    /// Appends the keys of every row of `cols` (one vector per key, ordered
    /// by `orders`).
    pub fn push_rows(&mut self, cols: &[&Vector], orders: &[KeyOrder]) {
        let n = cols.first().map_or(0, |c| c.len());
        let mut scratch = String::new();
        for row in 0..n {
            for (c, o) in cols.iter().zip(orders) {
                encode_value(c, row, *o, &mut self.bytes, &mut scratch);
            }
            self.ends.push(self.bytes.len());
        }
    }

    /// Appends one row's key, encoded by the caller into `key`.
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }
}

/// Appends the key of row `row` of `cols` to `out`.
pub fn encode_row(cols: &[&Vector], orders: &[KeyOrder], row: usize, out: &mut Vec<u8>) {
    let mut scratch = String::new();
    for (c, o) in cols.iter().zip(orders) {
        encode_value(c, row, *o, out, &mut scratch);
    }
}

/// Appends the key of one value (`v[row]`) to `out`. `scratch` is reused
/// for the text form of numerics.
pub fn encode_value(v: &Vector, row: usize, o: KeyOrder, out: &mut Vec<u8>, scratch: &mut String) {
    if v.is_null(row) {
        out.push(if o.nulls_first { 0x00 } else { 0x02 });
        return;
    }
    out.push(0x01);
    let start = out.len();
    match &v.data {
        Data::Bool(d) => out.push(d[row] as u8),
        Data::Int2(d) => out.extend_from_slice(&((d[row] as u16) ^ 0x8000).to_be_bytes()),
        Data::Int4(d) => out.extend_from_slice(&((d[row] as u32) ^ 0x8000_0000).to_be_bytes()),
        Data::Int8(d) => out.extend_from_slice(&((d[row] as u64) ^ (1 << 63)).to_be_bytes()),
        Data::Float4(d) => out.extend_from_slice(&float_key(d[row] as f64).to_be_bytes()),
        Data::Float8(d) => out.extend_from_slice(&float_key(d[row]).to_be_bytes()),
        Data::Interval(d) => {
            out.extend_from_slice(&((d[row].cmp_key() as u128) ^ (1 << 127)).to_be_bytes())
        }
        Data::Numeric(d) => numeric_key(&d[row], out, scratch),
        Data::Uuid(d) => out.extend_from_slice(&d[row].to_be_bytes()),
        Data::Text(s) if o.ty == DataType::Jsonb => {
            crate::func::json::write_sort_key(s.get(row), out, scratch)
        }
        Data::Text(s) | Data::Bytea(s) => {
            let mut b = s.get(row);
            if o.ty == DataType::Bpchar {
                let end = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
                b = &b[..end];
            }
            for &c in b {
                out.push(c);
                if c == 0 {
                    out.push(0xFF);
                }
            }
            out.extend_from_slice(&[0, 0]);
        }
        // Element by element (NULL elements last), then an end marker
        // below every element's, so a prefix sorts first (`array_cmp`).
        Data::Array(d) => {
            let a = &d[row];
            let elems = crate::array::element_vector(a);
            let element = KeyOrder {
                ty: a.element(),
                desc: false,
                nulls_first: false,
            };
            for j in 0..a.items.len() {
                encode_value(&elems, j, element, out, scratch);
            }
            out.push(0x00);
            out.extend_from_slice(&((a.lower as u32) ^ 0x8000_0000).to_be_bytes());
        }
    }
    if o.desc {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
}

/// A double's bits mapped so that unsigned order is PostgreSQL's order.
#[inline]
pub fn float_key(v: f64) -> u64 {
    let v = if v.is_nan() {
        f64::NAN
    } else if v == 0.0 {
        0.0
    } else {
        v
    };
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// Appends the order-preserving encoding of a numeric (see the module doc).
pub(crate) fn numeric_key(n: &Numeric, out: &mut Vec<u8>, scratch: &mut String) {
    scratch.clear();
    let _ = write!(scratch, "{n}");
    let text = scratch.as_str();
    // Special values, if the type carries them, order as PostgreSQL's:
    // -Infinity < negatives < 0 < positives < Infinity < NaN.
    match text {
        "NaN" => return out.push(5),
        "Infinity" => return out.push(4),
        "-Infinity" => return out.push(0),
        _ => {}
    }
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let int = int.trim_start_matches('0');
    // Significant digits and the exponent of the first one: value is
    // 0.d1d2... × 10^exp.
    let (exp, sig): (i64, Vec<u8>) = if !int.is_empty() {
        let sig = int.bytes().chain(frac.bytes()).collect();
        (int.len() as i64, sig)
    } else {
        let lead = frac.bytes().take_while(|&b| b == b'0').count();
        (-(lead as i64), frac.bytes().skip(lead).collect())
    };
    let sig_len = sig.iter().rposition(|&b| b != b'0').map_or(0, |p| p + 1);
    if sig_len == 0 {
        return out.push(2);
    }
    out.push(if neg { 1 } else { 3 });
    let start = out.len();
    out.extend_from_slice(&(((exp as i32) as u32) ^ 0x8000_0000).to_be_bytes());
    for &d in &sig[..sig_len] {
        out.push(d - b'0' + 1);
    }
    out.push(0);
    if neg {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
}

/// The number an ascending key (as [`encode_value`] writes it, NULL byte
/// first) stands for, where the type has one: integers, dates, times and
/// timestamps (their stored integer), floats and numerics (their value).
/// The planner interpolates within histogram buckets with it; `None` for
/// strings, intervals, booleans and NULLs.
pub fn key_to_f64(key: &[u8], ty: DataType) -> Option<f64> {
    let v = key.strip_prefix(&[0x01])?;
    let int = |bytes: &[u8]| -> Option<u64> {
        Some(u64::from_be_bytes(
            [vec![0u8; 8usize.checked_sub(bytes.len())?], bytes.to_vec()]
                .concat()
                .try_into()
                .ok()?,
        ))
    };
    Some(match ty {
        DataType::Int2 => (int(v.get(..2)?)? as u16 ^ 0x8000) as i16 as f64,
        DataType::Int4 | DataType::Date => (int(v.get(..4)?)? as u32 ^ 0x8000_0000) as i32 as f64,
        DataType::Int8 | DataType::Time | DataType::Timestamp | DataType::TimestampTz => {
            (int(v.get(..8)?)? ^ (1 << 63)) as i64 as f64
        }
        DataType::Float4 | DataType::Float8 => {
            let k = int(v.get(..8)?)?;
            f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
        }
        DataType::Numeric => {
            let class = *v.first()?;
            match class {
                0 => f64::NEG_INFINITY,
                2 => 0.0,
                4 => f64::INFINITY,
                1 | 3 => {
                    let neg = class == 1;
                    let body: Vec<u8> = v[1..].iter().map(|&b| if neg { !b } else { b }).collect();
                    let exp =
                        (u32::from_be_bytes(body.get(..4)?.try_into().ok()?) ^ 0x8000_0000) as i32;
                    let mut mant = 0f64;
                    let mut scale = 0.1f64;
                    for &d in body[4..].iter().take_while(|&&d| d != 0).take(17) {
                        mant += f64::from(d - 1) * scale;
                        scale /= 10.0;
                    }
                    let x = mant * 10f64.powi(exp);
                    if neg {
                        -x
                    } else {
                        x
                    }
                }
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The bytes of the string an ascending text key stands for (the
/// `character(n)` value without its trailing blanks); `None` for a NULL or
/// a key that is not a string's.
pub fn key_to_text(key: &[u8]) -> Option<Vec<u8>> {
    let v = key.strip_prefix(&[0x01])?;
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        match (v[i], v.get(i + 1)) {
            (0, Some(0)) => return Some(out),
            (0, Some(0xFF)) => {
                out.push(0);
                i += 2;
            }
            (0, _) => return None,
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use std::cmp::Ordering;

    fn key(v: &Value, ty: DataType, desc: bool, nulls_first: bool) -> Vec<u8> {
        let mut vec = Vector::with_capacity(ty, 1);
        vec.push_value(v);
        let mut out = Vec::new();
        encode_row(
            &[&vec],
            &[KeyOrder {
                ty,
                desc,
                nulls_first,
            }],
            0,
            &mut out,
        );
        out
    }

    /// Keys decode to the numbers and strings they encode.
    #[test]
    fn keys_decode() {
        let asc = |v: Value, ty| key(&v, ty, false, false);
        assert_eq!(
            key_to_f64(&asc(Value::Int4(-7), DataType::Int4), DataType::Int4),
            Some(-7.0)
        );
        assert_eq!(
            key_to_f64(&asc(Value::Date(9000), DataType::Date), DataType::Date),
            Some(9000.0)
        );
        assert_eq!(
            key_to_f64(&asc(Value::Int8(1 << 40), DataType::Int8), DataType::Int8),
            Some((1u64 << 40) as f64)
        );
        assert_eq!(
            key_to_f64(
                &asc(Value::Float8(-2.5), DataType::Float8),
                DataType::Float8
            ),
            Some(-2.5)
        );
        for n in ["0", "12.5", "-0.0031", "123456789.25"] {
            let got = key_to_f64(&asc(num(n), DataType::Numeric), DataType::Numeric).unwrap();
            let want: f64 = n.parse().unwrap();
            assert!((got - want).abs() <= want.abs() * 1e-12, "{n}: {got}");
        }
        assert_eq!(
            key_to_f64(&asc(Value::Null, DataType::Int4), DataType::Int4),
            None
        );
        let t = asc(Value::Text("a\0b".into()), DataType::Text);
        assert_eq!(key_to_text(&t).unwrap(), b"a\0b");
        assert_eq!(
            key_to_text(&asc(Value::Text("xyz  ".into()), DataType::Bpchar)).unwrap(),
            b"xyz"
        );
    }

    fn num(s: &str) -> Value {
        Value::Numeric(Numeric::parse(s).unwrap())
    }

    /// Values listed in ascending order must encode in ascending order, in
    /// both directions, with equal values encoding alike.
    fn assert_ordered(ty: DataType, vals: &[Value]) {
        for (i, a) in vals.iter().enumerate() {
            for (j, b) in vals.iter().enumerate() {
                let want = i.cmp(&j);
                let (ka, kb) = (key(a, ty, false, false), key(b, ty, false, false));
                assert_eq!(ka.cmp(&kb), want, "{a:?} vs {b:?}");
                let (da, db) = (key(a, ty, true, false), key(b, ty, true, false));
                assert_eq!(da.cmp(&db), want.reverse(), "desc {a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn integers_and_floats() {
        assert_ordered(
            DataType::Int4,
            &[
                Value::Int4(i32::MIN),
                Value::Int4(-1),
                Value::Int4(0),
                Value::Int4(7),
                Value::Int4(i32::MAX),
            ],
        );
        assert_ordered(
            DataType::Int8,
            &[
                Value::Int8(i64::MIN),
                Value::Int8(-5),
                Value::Int8(i64::MAX),
            ],
        );
        assert_ordered(
            DataType::Int2,
            &[Value::Int2(-300), Value::Int2(0), Value::Int2(300)],
        );
        assert_ordered(
            DataType::Float8,
            &[
                Value::Float8(f64::NEG_INFINITY),
                Value::Float8(-1e300),
                Value::Float8(-1.0),
                Value::Float8(-1e-300),
                Value::Float8(0.0),
                Value::Float8(1e-300),
                Value::Float8(2.5),
                Value::Float8(f64::INFINITY),
                Value::Float8(f64::NAN),
            ],
        );
        // -0 = 0 and every NaN is one NaN.
        let t = DataType::Float8;
        assert_eq!(
            key(&Value::Float8(-0.0), t, false, false),
            key(&Value::Float8(0.0), t, false, false)
        );
        assert_eq!(
            key(&Value::Float8(-f64::NAN), t, false, false),
            key(&Value::Float8(f64::NAN), t, false, false)
        );
    }

    #[test]
    fn numerics_order_exactly_across_scales() {
        // The fuzzer's cases: tiny fractions against huge integers.
        assert_ordered(
            DataType::Numeric,
            &[
                num("-9223372036854775807"),
                num("-27.5"),
                num("-27.0000000000000000001"),
                num("-27"),
                num("-0.00000000000000000001"),
                num("0"),
                num("0.00000000000000000001"),
                num("0.04050000332100027232"),
                num("0.5"),
                num("1"),
                num("1.05"),
                num("27.0000000000000000"),
                num("4611686019501129728"),
                num("9223372032559808512"),
                num("9223372036854775807"),
            ],
        );
        let t = DataType::Numeric;
        assert_eq!(
            key(&num("1.500"), t, false, false),
            key(&num("1.5"), t, false, false)
        );
        assert_eq!(
            key(&num("0.000"), t, false, false),
            key(&num("0"), t, false, false)
        );
        assert_eq!(
            key(&num("-0.0"), t, false, false),
            key(&num("0"), t, false, false)
        );
        assert_eq!(
            key(&num("100"), t, false, false),
            key(&num("100.00"), t, false, false)
        );
    }

    #[test]
    fn text_bpchar_interval() {
        let t = |s: &str| Value::Text(s.into());
        assert_ordered(
            DataType::Text,
            &[t(""), t("a"), t("a\0"), t("a\0b"), t("ab"), t("b"), t("é")],
        );
        let b = DataType::Bpchar;
        assert_eq!(
            key(&t("ab  "), b, false, false),
            key(&t("ab"), b, false, false)
        );
        assert_ne!(
            key(&t("ab  "), DataType::Text, false, false),
            key(&t("ab"), DataType::Text, false, false)
        );
        use tusk_types::Interval;
        assert_ordered(
            DataType::Interval,
            &[
                Value::Interval(Interval::new(-1, 0, 0)),
                Value::Interval(Interval::new(0, 0, -1)),
                Value::Interval(Interval::new(0, 0, 0)),
                Value::Interval(Interval::new(0, 29, 0)),
                Value::Interval(Interval::new(1, 0, 1)),
            ],
        );
        assert_eq!(
            key(
                &Value::Interval(Interval::new(1, 0, 0)),
                DataType::Interval,
                false,
                false
            ),
            key(
                &Value::Interval(Interval::new(0, 30, 0)),
                DataType::Interval,
                false,
                false
            )
        );
    }

    #[test]
    fn nulls_first_and_last_in_both_directions() {
        let t = DataType::Int4;
        for desc in [false, true] {
            let null_last = key(&Value::Null, t, desc, false);
            let null_first = key(&Value::Null, t, desc, true);
            for v in [i32::MIN, 0, i32::MAX] {
                let k = key(&Value::Int4(v), t, desc, false);
                assert_eq!(null_last.cmp(&k), Ordering::Greater);
                assert_eq!(null_first.cmp(&k), Ordering::Less);
            }
        }
    }

    #[test]
    fn key_lists_concatenate() {
        // (1, 'b') < (1, 'ba') < (2, '') with the text key DESC in between.
        let ints = Vector::new(Data::Int4(vec![1, 1, 2]), None);
        let mut texts = Vector::empty(DataType::Text);
        for s in ["b", "ba", ""] {
            texts.push_value(&Value::Text(s.into()));
        }
        let mut kb = KeyBuf::new();
        kb.push_rows(
            &[&ints, &texts],
            &[KeyOrder::asc(DataType::Int4), KeyOrder::asc(DataType::Text)],
        );
        assert!(kb.get(0) < kb.get(1) && kb.get(1) < kb.get(2));
        let mut kd = KeyBuf::new();
        kd.push_rows(
            &[&ints, &texts],
            &[
                KeyOrder::asc(DataType::Int4),
                KeyOrder {
                    ty: DataType::Text,
                    desc: true,
                    nulls_first: false,
                },
            ],
        );
        assert!(kd.get(1) < kd.get(0) && kd.get(0) < kd.get(2));
    }

    proptest::proptest! {
        #[test]
        fn numeric_keys_agree_with_exact_comparison(a in -10_000_000i64..10_000_000, sa in 0u16..12,
                                                    b in -10_000_000i64..10_000_000, sb in 0u16..12) {
            let dec = |v: i64, s: u16| {
                let m = format!("{}{:0>w$}", if v < 0 { "-" } else { "" }, v.unsigned_abs(), w = s as usize + 1);
                let (i, f) = m.split_at(m.len() - s as usize);
                Numeric::parse(&if s == 0 { i.to_string() } else { format!("{i}.{f}") }).unwrap()
            };
            let (x, y) = (dec(a, sa), dec(b, sb));
            // Exact: a/10^sa vs b/10^sb  <=>  a*10^sb vs b*10^sa (fits i128 here).
            let want = (a as i128 * 10i128.pow(sb as u32)).cmp(&(b as i128 * 10i128.pow(sa as u32)));
            let t = DataType::Numeric;
            let got = key(&Value::Numeric(x), t, false, false).cmp(&key(&Value::Numeric(y), t, false, false));
            proptest::prop_assert_eq!(got, want);
        }
    }
}
