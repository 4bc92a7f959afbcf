//! Order-preserving byte encoding of index keys.
//!
//! A btree compares keys as byte strings (`memcmp`, then length). This
//! module turns a tuple of typed values into bytes whose byte order is
//! PostgreSQL's order of the tuples under the index's per-column options,
//! so that the tree never needs to know a type: pages, searches, splits,
//! unique checks and scan bounds all work on bytes.
//!
//! ## One column
//!
//! Each column starts with a *marker* byte: `0x00` for a NULL that sorts
//! first, `0x01` for a value, `0x02` for a NULL that sorts last. The value
//! follows the `0x01` marker; a NULL has nothing after its marker. For a
//! DESC column every byte of the value (not the marker) is complemented,
//! which reverses the order of values while NULLS FIRST / LAST stays what
//! the marker says (PostgreSQL's defaults: NULLS LAST for ASC, NULLS FIRST
//! for DESC).
//!
//! Value encodings, each ascending:
//!
//! * `bool`: one byte, 0 or 1.
//! * `smallint`, `integer`, `bigint`, `date` (i32), `time`, `timestamp`,
//!   `timestamptz` (i64 microseconds): big-endian two's complement with the
//!   sign bit flipped. The infinities of dates and timestamps are the
//!   extreme integers, so they sort at the ends as in PostgreSQL.
//! * `real`, `double precision`: the IEEE bits, big-endian, with the sign bit
//!   flipped for positive numbers and all bits flipped for negative ones;
//!   `-0` is encoded as `0` and every NaN as one positive NaN, so that
//!   `-Infinity < numbers < Infinity < NaN` and `-0 = 0`, as PostgreSQL's
//!   `float8_cmp` has it.
//! * `interval`: PostgreSQL's `interval_cmp_value`, the 128-bit span in
//!   microseconds with 30-day months and 24-hour days, as a signed 128-bit
//!   integer (16 bytes). `'1 day' = '24 hours'`, as in PostgreSQL.
//! * `numeric`: a class byte (1 -Infinity, 2 negative, 3 zero, 4 positive,
//!   5 +Infinity, 6 NaN); for nonzero finite values the decimal exponent
//!   `e` of `0.d1d2d3... × 10^e` as a sign-flipped big-endian i32, then the
//!   significant digits (no leading or trailing zeros) two per byte as
//!   `1 + 10·d1 + d2` (1..=100; a lone last digit pairs with 0), then a
//!   `0x00` terminator. Negative values complement everything after the
//!   class byte. Equal values of different scales (`1.0`, `1.00`) encode
//!   alike, as `numeric_cmp` ignores the display scale; the form has no
//!   limit on the number of digits ([`Decimal`]).
//! * `text`, `varchar`: the bytes (PostgreSQL's C collation: bytewise, which
//!   for UTF-8 is code point order) with each `0x00` written `0x00 0xFF`,
//!   then the terminator `0x00 0x00`. `bpchar` drops trailing blanks first
//!   (`'ab' = 'ab   '`, as `bpcharcmp` has it).
//!
//! ## Tuples
//!
//! Every column encoding above is *prefix-free*: no encoded value is a
//! proper prefix of another (fixed widths, or a terminator that cannot
//! occur inside). Complementing keeps that property and reverses the order
//! between any two distinct values, because the first differing byte comes
//! before either ends. So the concatenation of the columns compares as the
//! tuple does, column by column, and a *prefix* of the columns (a scan
//! bound on the leading columns) compares against a full key by comparing
//! the key's first bytes ([`cmp_prefix`]).
//!
//! ## PostgreSQL's size limit
//!
//! PostgreSQL refuses index entries larger than a third of a page
//! (`index row size N exceeds btree version 4 maximum 2704`). The encoder
//! computes `N` as PostgreSQL's `index_form_tuple` would for the same
//! values (8-byte header, null bitmap, alignment, 1-byte varlena headers
//! for short values) so that the same rows fail; PostgreSQL compresses
//! long compressible values first and tusk does not, so tusk refuses a
//! long repetitive string that PostgreSQL would squeeze in.

use std::cmp::Ordering;

/// The type of an index column, as far as ordering goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    /// `character(n)`: trailing blanks do not count.
    Bpchar,
    Date,
    Time,
    Timestamp,
    TimestampTz,
    Interval,
    /// `bytea`: bytes in order, a shorter prefix first.
    Bytea,
    Uuid,
}

impl KeyType {
    /// The ordering type of a column of SQL type `ty`.
    pub fn of(ty: crate::catalog::SqlType) -> KeyType {
        use crate::catalog::SqlType;
        match ty {
            SqlType::Bool => KeyType::Bool,
            SqlType::Int2 => KeyType::Int2,
            SqlType::Int4 => KeyType::Int4,
            SqlType::Int8 => KeyType::Int8,
            SqlType::Float4 => KeyType::Float4,
            SqlType::Float8 => KeyType::Float8,
            SqlType::Numeric(_) => KeyType::Numeric,
            SqlType::Text | SqlType::Varchar(_) => KeyType::Text,
            SqlType::Char(_) => KeyType::Bpchar,
            SqlType::Date => KeyType::Date,
            SqlType::Time(_) => KeyType::Time,
            SqlType::Timestamp(_) => KeyType::Timestamp,
            SqlType::TimestampTz(_) => KeyType::TimestampTz,
            SqlType::Interval(_) => KeyType::Interval,
            SqlType::Plain(crate::catalog::DataType::Bytea) => KeyType::Bytea,
            SqlType::Plain(crate::catalog::DataType::Uuid) => KeyType::Uuid,
            SqlType::Plain(t) => unreachable!("indexes are built on stored types, not {t:?}"),
        }
    }

    /// PostgreSQL's `typlen` (-1 for varlena types) and `typalign` in
    /// bytes, for the size check.
    fn pg_layout(self) -> (i32, usize) {
        match self {
            KeyType::Bool => (1, 1),
            KeyType::Int2 => (2, 2),
            KeyType::Int4 | KeyType::Date | KeyType::Float4 => (4, 4),
            KeyType::Int8
            | KeyType::Float8
            | KeyType::Time
            | KeyType::Timestamp
            | KeyType::TimestampTz => (8, 8),
            KeyType::Interval => (16, 8),
            KeyType::Uuid => (16, 1),
            KeyType::Numeric | KeyType::Text | KeyType::Bpchar | KeyType::Bytea => (-1, 4),
        }
    }
}

/// Per-column ordering options of an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnOrder {
    pub desc: bool,
    pub nulls_first: bool,
}

impl ColumnOrder {
    /// `ASC NULLS LAST`, the default.
    pub const ASC: ColumnOrder = ColumnOrder {
        desc: false,
        nulls_first: false,
    };
    /// `DESC NULLS FIRST`, the default for DESC.
    pub const DESC: ColumnOrder = ColumnOrder {
        desc: true,
        nulls_first: true,
    };
}

impl Default for ColumnOrder {
    fn default() -> Self {
        ColumnOrder::ASC
    }
}

/// A numeric value of any precision: `±0.d1d2d3... × 10^exponent`, or one
/// of the special values. `digits` are decimal digits (0..=9), most
/// significant first; leading and trailing zeros are allowed (they are
/// skipped) and no digits, or only zeros, mean zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decimal<'a> {
    Finite {
        negative: bool,
        digits: &'a [u8],
        exponent: i32,
    },
    NaN,
    Infinity,
    NegInfinity,
}

/// One value of an index column. Dates travel as `Int4`, times and
/// timestamps as `Int8`; `Numeric` is tusk's 128-bit form (unscaled value,
/// scale) and `Decimal` any other.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Datum<'a> {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(i128, u16),
    Decimal(Decimal<'a>),
    Text(&'a [u8]),
    /// Microseconds, days, months.
    Interval(i64, i32, i32),
    Uuid(u128),
}

impl<'a> Datum<'a> {
    /// The value of a stored attribute; `None` for a toasted one, which
    /// must be detoasted first (see `toast`).
    pub fn of_attr(a: crate::tuple::Attr<'a>) -> Option<Datum<'a>> {
        use crate::tuple::Attr;
        Some(match a {
            Attr::Null => Datum::Null,
            Attr::Bool(b) => Datum::Bool(b),
            Attr::Int2(v) => Datum::Int2(v),
            Attr::Int4(v) => Datum::Int4(v),
            Attr::Int8(v) => Datum::Int8(v),
            Attr::Float4(v) => Datum::Float4(v),
            Attr::Float8(v) => Datum::Float8(v),
            // The heap's special scales (see tusk-types' `to_storage_parts`).
            Attr::Numeric(_, u16::MAX) => Datum::Decimal(Decimal::NaN),
            Attr::Numeric(_, s) if s == u16::MAX - 1 => Datum::Decimal(Decimal::Infinity),
            Attr::Numeric(_, s) if s == u16::MAX - 2 => Datum::Decimal(Decimal::NegInfinity),
            Attr::Numeric(u, s) => Datum::Numeric(u, s),
            Attr::Interval(us, d, m) => Datum::Interval(us, d, m),
            Attr::Text(t) => Datum::Text(t),
            Attr::Uuid(u) => Datum::Uuid(u),
            Attr::Toasted(_) => return None,
        })
    }
}

/// Marker bytes (see the module doc).
const NULL_FIRST: u8 = 0x00;
const VALUE: u8 = 0x01;
const NULL_LAST: u8 = 0x02;

/// A value that does not belong to its column's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    pub column: usize,
    pub expected: KeyType,
}

impl std::fmt::Display for TypeMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "index key column {} expects a value of type {:?}",
            self.column + 1,
            self.expected
        )
    }
}

/// An encoded key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedKey {
    pub bytes: Vec<u8>,
    /// Some column is NULL (such keys never conflict in a unique index).
    pub has_null: bool,
    /// The size PostgreSQL's index tuple would have (see the module doc).
    pub pg_size: usize,
}

/// Encodes tuples of values for one index's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEncoder {
    columns: Vec<(KeyType, ColumnOrder)>,
}

impl KeyEncoder {
    pub fn new(columns: Vec<(KeyType, ColumnOrder)>) -> KeyEncoder {
        KeyEncoder { columns }
    }

    /// One ascending column of type `ty`.
    pub fn single(ty: KeyType) -> KeyEncoder {
        KeyEncoder::new(vec![(ty, ColumnOrder::ASC)])
    }

    pub fn columns(&self) -> &[(KeyType, ColumnOrder)] {
        &self.columns
    }

    /// Encodes a whole key (one value per column) into `out`.
    pub fn encode_into(
        &self,
        values: &[Datum<'_>],
        out: &mut EncodedKey,
    ) -> Result<(), TypeMismatch> {
        assert_eq!(values.len(), self.columns.len(), "one value per column");
        out.bytes.clear();
        out.has_null = false;
        let mut data = 0usize;
        for (i, (&(ty, order), v)) in self.columns.iter().zip(values).enumerate() {
            encode_column(&mut out.bytes, ty, order, v).map_err(|()| TypeMismatch {
                column: i,
                expected: ty,
            })?;
            match pg_attr_size(ty, v) {
                None => out.has_null = true,
                Some(AttrSize::Fixed(len, align)) => data = data.next_multiple_of(align) + len,
                Some(AttrSize::Varlena(payload)) if payload <= 126 => data += 1 + payload,
                Some(AttrSize::Varlena(payload)) => data = data.next_multiple_of(4) + 4 + payload,
            }
        }
        // IndexTupleData (8 bytes), then the null bitmap when a value is
        // NULL, then the data at a MAXALIGN'ed offset.
        let header: usize = if out.has_null { 8 + 4 } else { 8 };
        out.pg_size = (header.next_multiple_of(8) + data).next_multiple_of(8);
        Ok(())
    }

    pub fn encode(&self, values: &[Datum<'_>]) -> Result<EncodedKey, TypeMismatch> {
        let mut k = EncodedKey::default();
        self.encode_into(values, &mut k)?;
        Ok(k)
    }

    /// Encodes the leading `values.len()` columns: a scan bound on a prefix
    /// of the key (see [`cmp_prefix`]). A NULL stands for `IS NULL`.
    pub fn encode_prefix(&self, values: &[Datum<'_>]) -> Result<Vec<u8>, TypeMismatch> {
        assert!(
            values.len() <= self.columns.len(),
            "more values than columns"
        );
        let mut out = Vec::new();
        for (i, (&(ty, order), v)) in self.columns.iter().zip(values).enumerate() {
            encode_column(&mut out, ty, order, v).map_err(|()| TypeMismatch {
                column: i,
                expected: ty,
            })?;
        }
        Ok(out)
    }
}

/// Compares a full key with a bound that encodes a prefix of the columns:
/// `Equal` when the key's leading columns equal the bound's.
#[inline]
pub fn cmp_prefix(key: &[u8], prefix: &[u8]) -> Ordering {
    let n = key.len().min(prefix.len());
    match key[..n].cmp(&prefix[..n]) {
        Ordering::Equal if key.len() < prefix.len() => Ordering::Less,
        o => o,
    }
}

/// Appends one column's encoding; `Err` if `v` is not of type `ty`.
fn encode_column(
    out: &mut Vec<u8>,
    ty: KeyType,
    order: ColumnOrder,
    v: &Datum<'_>,
) -> Result<(), ()> {
    if let Datum::Null = v {
        out.push(if order.nulls_first {
            NULL_FIRST
        } else {
            NULL_LAST
        });
        return Ok(());
    }
    out.push(VALUE);
    let start = out.len();
    match (ty, v) {
        (KeyType::Bool, Datum::Bool(b)) => out.push(*b as u8),
        (KeyType::Int2, Datum::Int2(x)) => {
            out.extend_from_slice(&(*x as u16 ^ 0x8000).to_be_bytes())
        }
        (KeyType::Int4 | KeyType::Date, Datum::Int4(x)) => {
            out.extend_from_slice(&(*x as u32 ^ 0x8000_0000).to_be_bytes())
        }
        (
            KeyType::Int8 | KeyType::Time | KeyType::Timestamp | KeyType::TimestampTz,
            Datum::Int8(x),
        ) => out.extend_from_slice(&(*x as u64 ^ (1 << 63)).to_be_bytes()),
        (KeyType::Float4, Datum::Float4(x)) => {
            out.extend_from_slice(&float4_bits(*x).to_be_bytes())
        }
        (KeyType::Float8, Datum::Float8(x)) => {
            out.extend_from_slice(&float8_bits(*x).to_be_bytes())
        }
        (KeyType::Interval, Datum::Interval(micros, days, months)) => {
            let span = (*months as i128 * 30 + *days as i128) * 86_400_000_000 + *micros as i128;
            out.extend_from_slice(&(span as u128 ^ (1 << 127)).to_be_bytes());
        }
        (KeyType::Numeric, Datum::Numeric(unscaled, scale)) => {
            let mut buf = [0u8; 40];
            let digits = decimal_digits(unscaled.unsigned_abs(), &mut buf);
            encode_decimal(
                out,
                Decimal::Finite {
                    negative: *unscaled < 0,
                    digits,
                    exponent: digits.len() as i32 - *scale as i32,
                },
            );
        }
        (KeyType::Numeric, Datum::Decimal(d)) => encode_decimal(out, *d),
        (KeyType::Text | KeyType::Bytea, Datum::Text(t)) => encode_text(out, t),
        (KeyType::Uuid, Datum::Uuid(u)) => out.extend_from_slice(&u.to_be_bytes()),
        (KeyType::Bpchar, Datum::Text(t)) => encode_text(out, bpchar_trim(t)),
        _ => return Err(()),
    }
    if order.desc {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
    Ok(())
}

fn float8_bits(x: f64) -> u64 {
    let x = if x.is_nan() {
        f64::NAN
    } else if x == 0.0 {
        0.0
    } else {
        x
    };
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

fn float4_bits(x: f32) -> u32 {
    let x = if x.is_nan() {
        f32::NAN
    } else if x == 0.0 {
        0.0
    } else {
        x
    };
    let b = x.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 1 << 31
    }
}

fn bpchar_trim(t: &[u8]) -> &[u8] {
    let end = t.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &t[..end]
}

fn encode_text(out: &mut Vec<u8>, t: &[u8]) {
    for &b in t {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// The decimal digits of `v` (none for 0), most significant first.
fn decimal_digits(mut v: u128, buf: &mut [u8; 40]) -> &[u8] {
    let mut at = buf.len();
    while v != 0 {
        at -= 1;
        buf[at] = (v % 10) as u8;
        v /= 10;
    }
    &buf[at..]
}

const CLASS_NEG_INF: u8 = 1;
const CLASS_NEG: u8 = 2;
const CLASS_ZERO: u8 = 3;
const CLASS_POS: u8 = 4;
const CLASS_POS_INF: u8 = 5;
const CLASS_NAN: u8 = 6;

fn encode_decimal(out: &mut Vec<u8>, d: Decimal<'_>) {
    let (negative, digits, exponent) = match d {
        Decimal::NaN => return out.push(CLASS_NAN),
        Decimal::Infinity => return out.push(CLASS_POS_INF),
        Decimal::NegInfinity => return out.push(CLASS_NEG_INF),
        Decimal::Finite {
            negative,
            digits,
            exponent,
        } => (negative, digits, exponent),
    };
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    let digits = &digits[lead..];
    let end = digits.iter().rposition(|&d| d != 0).map_or(0, |i| i + 1);
    let digits = &digits[..end];
    if digits.is_empty() {
        return out.push(CLASS_ZERO);
    }
    out.push(if negative { CLASS_NEG } else { CLASS_POS });
    let start = out.len();
    let exponent = exponent - lead as i32;
    out.extend_from_slice(&(exponent as u32 ^ 0x8000_0000).to_be_bytes());
    for pair in digits.chunks(2) {
        let lo = pair.get(1).copied().unwrap_or(0);
        out.push(1 + 10 * pair[0] + lo);
    }
    out.push(0);
    if negative {
        for b in &mut out[start..] {
            *b = !*b;
        }
    }
}

/// How PostgreSQL would store an attribute in an index tuple.
enum AttrSize {
    /// Length and alignment.
    Fixed(usize, usize),
    /// A varlena's payload bytes (without its header).
    Varlena(usize),
}

/// The stored size of `v` in PostgreSQL (`None` for NULL).
fn pg_attr_size(ty: KeyType, v: &Datum<'_>) -> Option<AttrSize> {
    if let Datum::Null = v {
        return None;
    }
    let (len, align) = ty.pg_layout();
    if len > 0 {
        return Some(AttrSize::Fixed(len as usize, align));
    }
    Some(AttrSize::Varlena(match v {
        Datum::Text(t) => t.len(),
        Datum::Numeric(unscaled, scale) => {
            let mut buf = [0u8; 40];
            let digits = decimal_digits(unscaled.unsigned_abs(), &mut buf);
            pg_numeric_payload(digits, digits.len() as i32 - *scale as i32, *scale as i32)
        }
        Datum::Decimal(Decimal::Finite {
            digits, exponent, ..
        }) => {
            let scale = (digits.len() as i32 - exponent).max(0);
            pg_numeric_payload(digits, *exponent, scale)
        }
        _ => 2,
    }))
}

/// Payload bytes of PostgreSQL's numeric datum for tusk's 128-bit form
/// (unscaled value, scale; NaN and the infinities as their marker scales).
pub(crate) fn pg_numeric_size(unscaled: i128, scale: u16) -> usize {
    if scale > u16::MAX - 3 {
        return 2;
    }
    let mut buf = [0u8; 40];
    let digits = decimal_digits(unscaled.unsigned_abs(), &mut buf);
    pg_numeric_payload(digits, digits.len() as i32 - scale as i32, scale as i32)
}

/// Payload bytes of PostgreSQL's numeric for `0.digits × 10^exponent` with
/// display scale `dscale`: a 2-byte (short) or 4-byte header and 2 bytes
/// per base-10000 digit between the first and last nonzero one.
fn pg_numeric_payload(digits: &[u8], exponent: i32, dscale: i32) -> usize {
    // Decimal digit i (0-based) has place value 10^(exponent - 1 - i); it
    // falls in the base-10000 group floor((exponent - 1 - i) / 4).
    let place = |i: usize| exponent - 1 - i as i32;
    let first = digits.iter().position(|&d| d != 0);
    let last = digits.iter().rposition(|&d| d != 0);
    let (Some(first), Some(last)) = (first, last) else {
        return 2;
    };
    let hi = place(first).div_euclid(4);
    let lo = place(last).div_euclid(4);
    let ndigits = (hi - lo + 1) as usize;
    let short = dscale <= 63 && (-64..=63).contains(&hi);
    (if short { 2 } else { 4 }) + 2 * ndigits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(ty: KeyType, order: ColumnOrder, v: Datum<'_>) -> Vec<u8> {
        KeyEncoder::new(vec![(ty, order)])
            .encode(&[v])
            .unwrap()
            .bytes
    }

    fn sorted_by_key(ty: KeyType, order: ColumnOrder, vals: &[Datum<'_>]) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..vals.len()).collect();
        idx.sort_by_key(|&i| enc(ty, order, vals[i]));
        idx
    }

    #[test]
    fn floats_order_as_postgres() {
        let vals = [
            f64::NAN,
            f64::INFINITY,
            1.5,
            0.0,
            -0.0,
            -1.5,
            f64::NEG_INFINITY,
            -f64::NAN,
        ];
        let ds: Vec<Datum> = vals.iter().map(|&v| Datum::Float8(v)).collect();
        let order: Vec<f64> = sorted_by_key(KeyType::Float8, ColumnOrder::ASC, &ds)
            .into_iter()
            .map(|i| vals[i])
            .collect();
        assert_eq!(order[0], f64::NEG_INFINITY);
        assert_eq!(order[1], -1.5);
        assert_eq!(order[4], 1.5);
        assert_eq!(order[5], f64::INFINITY);
        assert!(order[6].is_nan() && order[7].is_nan());
        let z = |v| enc(KeyType::Float8, ColumnOrder::ASC, Datum::Float8(v));
        assert_eq!(z(0.0), z(-0.0), "-0 = 0");
        assert_eq!(z(f64::NAN), z(-f64::NAN), "NaN = NaN");
        let z4 = |v| enc(KeyType::Float4, ColumnOrder::ASC, Datum::Float4(v));
        assert!(z4(-1.0) < z4(-0.5) && z4(-0.5) < z4(0.0) && z4(f32::INFINITY) < z4(f32::NAN));
    }

    #[test]
    fn numeric_scales_are_equal_and_digits_order() {
        let n = |u: i128, s: u16| enc(KeyType::Numeric, ColumnOrder::ASC, Datum::Numeric(u, s));
        assert_eq!(n(10, 1), n(100, 2), "1.0 = 1.00");
        assert_eq!(n(0, 0), n(0, 5));
        let vals = [
            (-12, 0),
            (-115, 1),
            (-11, 0),
            (-1, 20),
            (0, 3),
            (1, 20),
            (9, 1),
            (1, 0),
            (101, 2),
            (11, 1),
            (2, 0),
            (i128::MAX, 0),
        ];
        for w in vals.windows(2) {
            assert!(n(w[0].0, w[0].1) < n(w[1].0, w[1].1), "{w:?}");
        }
        let big = [1u8; 1000];
        let d = |neg, exp| {
            enc(
                KeyType::Numeric,
                ColumnOrder::ASC,
                Datum::Decimal(Decimal::Finite {
                    negative: neg,
                    digits: &big,
                    exponent: exp,
                }),
            )
        };
        assert!(d(false, 1000) > n(i128::MAX, 0));
        assert!(d(true, 1000) < n(i128::MIN + 1, 0));
        let special = |d| enc(KeyType::Numeric, ColumnOrder::ASC, Datum::Decimal(d));
        assert!(special(Decimal::NegInfinity) < d(true, 1000));
        assert!(special(Decimal::Infinity) > d(false, 1000));
        assert!(special(Decimal::NaN) > special(Decimal::Infinity));
    }

    #[test]
    fn text_bpchar_and_prefix_freedom() {
        let t = |s: &[u8]| enc(KeyType::Text, ColumnOrder::ASC, Datum::Text(s));
        assert!(t(b"") < t(b"\0") && t(b"\0") < t(b"\0\0") && t(b"a") < t(b"a\0"));
        assert!(t(b"a") < t(b"ab") && t(b"ab") < t(b"b"));
        let b = |s: &[u8]| enc(KeyType::Bpchar, ColumnOrder::ASC, Datum::Text(s));
        assert_eq!(b(b"ab"), b(b"ab   "));
        assert!(b(b"a b") > b(b"a"));
        // Two columns: ("a", 2) < ("ab", 1): the first column decides.
        let e = KeyEncoder::new(vec![
            (KeyType::Text, ColumnOrder::ASC),
            (KeyType::Int4, ColumnOrder::ASC),
        ]);
        let k = |s: &'static [u8], i| e.encode(&[Datum::Text(s), Datum::Int4(i)]).unwrap().bytes;
        assert!(k(b"a", 2) < k(b"ab", 1));
        let p = e.encode_prefix(&[Datum::Text(b"a")]).unwrap();
        assert_eq!(cmp_prefix(&k(b"a", 7), &p), Ordering::Equal);
        assert_eq!(cmp_prefix(&k(b"ab", 7), &p), Ordering::Greater);
        assert_eq!(cmp_prefix(&k(b"", 7), &p), Ordering::Less);
    }

    #[test]
    fn desc_and_nulls() {
        let vals = [Datum::Int4(1), Datum::Null, Datum::Int4(-3), Datum::Int4(7)];
        let order = |o| sorted_by_key(KeyType::Int4, o, &vals);
        assert_eq!(order(ColumnOrder::ASC), vec![2, 0, 3, 1]);
        assert_eq!(order(ColumnOrder::DESC), vec![1, 3, 0, 2]);
        let asc_nulls_first = ColumnOrder {
            desc: false,
            nulls_first: true,
        };
        assert_eq!(order(asc_nulls_first), vec![1, 2, 0, 3]);
        let desc_nulls_last = ColumnOrder {
            desc: true,
            nulls_first: false,
        };
        assert_eq!(order(desc_nulls_last), vec![3, 0, 2, 1]);
        // DESC text keeps prefix-freedom: ("b") < ("a") < ("") descending.
        let t = |s: &[u8]| enc(KeyType::Text, ColumnOrder::DESC, Datum::Text(s));
        assert!(t(b"b") < t(b"ab") && t(b"ab") < t(b"a") && t(b"a") < t(b""));
    }

    #[test]
    fn interval_compares_by_span() {
        let i = |us, d, m| {
            enc(
                KeyType::Interval,
                ColumnOrder::ASC,
                Datum::Interval(us, d, m),
            )
        };
        assert_eq!(i(0, 1, 0), i(86_400_000_000, 0, 0), "1 day = 24 hours");
        assert_eq!(i(0, 30, 0), i(0, 0, 1), "1 month = 30 days");
        assert!(i(-1, 0, 0) < i(0, 0, 0) && i(0, 0, i32::MAX) > i(i64::MAX, 0, 0));
    }

    #[test]
    fn postgres_sizes() {
        let size = |ty, v| KeyEncoder::single(ty).encode(&[v]).unwrap().pg_size;
        // The examples PostgreSQL 15 reports.
        assert_eq!(size(KeyType::Text, Datum::Text(&[b'x'; 3040])), 3056);
        assert_eq!(size(KeyType::Int4, Datum::Int4(1)), 16);
        assert_eq!(size(KeyType::Int8, Datum::Int8(1)), 16);
        assert_eq!(size(KeyType::Text, Datum::Text(&[b'x'; 2692])), 2704);
        assert_eq!(size(KeyType::Text, Datum::Text(&[b'x'; 2693])), 2712);
        assert_eq!(size(KeyType::Int4, Datum::Null), 16);
        // numeric 12345.678: groups 1|2345|6780 -> 3 digits, short header.
        assert_eq!(
            pg_numeric_payload(&[1, 2, 3, 4, 5, 6, 7, 8], 5, 3),
            2 + 2 * 3
        );
    }
}
