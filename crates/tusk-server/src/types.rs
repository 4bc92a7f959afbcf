//! Types on the wire: PostgreSQL's type OIDs and typmods for tusk's types,
//! values in text and binary format, and parameter values decoded from
//! either.
//!
//! Result values are written straight from the executor's column vectors
//! into DataRow messages ([`put_data_rows`]): integers and strings without
//! an intermediate `String`, the other types through their output function
//! in the session's settings (`DateStyle`, `TimeZone`, `IntervalStyle`,
//! `extra_float_digits`). Binary format is PostgreSQL's `send` function's
//! bytes: big-endian integers and IEEE floats, a byte for boolean, the
//! base-10000 digit layout for numeric, days since 2000-01-01 for date,
//! microseconds (since midnight; since 2000-01-01) for time and the
//! timestamps, and microseconds, days and months for interval.
//!
//! Parameters arrive as bytes in either format for the type the statement
//! gave them ([`param_value`]): text goes through the type's input
//! function in the session's settings, binary through its `recv` layout.

use crate::engine::Engine;
use crate::error::{codes, Failure};
use crate::frontend::utf8_str;
use tusk_exec::vector::Data;
use tusk_exec::{Batch, Numeric, Value, Vector};
use tusk_sql::portal::ResultColumn;
use tusk_storage::{DataType, SqlType};
use tusk_types::scalar::{format_int, IntText};
use tusk_types::{Interval, Settings};

/// PostgreSQL's `unknown` type: a parameter whose type the client left open.
pub const UNKNOWN: u32 = 705;

/// The `typlen` RowDescription reports for a type.
pub fn type_len(t: DataType) -> i16 {
    t.pg_typlen()
}

/// The OID and typmod of a result column's type.
pub fn column_type(t: SqlType) -> (u32, i32) {
    (t.data_type().oid(), t.typmod())
}

/// The type the client declared for a parameter: `None` for 0 or
/// `unknown` (to be inferred).
pub fn declared_type(oid: u32) -> Result<Option<DataType>, Failure> {
    if oid == 0 || oid == UNKNOWN {
        return Ok(None);
    }
    DataType::from_oid(oid).map(Some).ok_or_else(|| {
        Failure::error(
            codes::FEATURE_NOT_SUPPORTED,
            format!("parameters of the type with OID {oid} are not supported"),
        )
    })
}

fn bad_binary(what: &str) -> Failure {
    Failure::error(
        codes::INVALID_BINARY_REPRESENTATION,
        format!("incorrect binary data format in bind parameter {what}"),
    )
}

/// A parameter's value of type `ty` from its bytes in `format` (0 text, 1
/// binary); `n` is its 1-based number, for messages.
pub fn param_value<E: Engine>(
    engine: &E,
    ty: DataType,
    format: i16,
    bytes: &[u8],
    n: usize,
) -> Result<Value, Failure> {
    match format {
        0 => Ok(engine.parameter_value(ty, utf8_str(bytes)?)?),
        1 => binary_value(ty, bytes).ok_or_else(|| bad_binary(&n.to_string())),
        other => Err(Failure::error(
            codes::PROTOCOL_VIOLATION,
            format!("unsupported format code: {other}"),
        )),
    }
}

/// A value from PostgreSQL's binary format (`recv`); `None` if the bytes
/// are not a value of the type.
fn binary_value(ty: DataType, b: &[u8]) -> Option<Value> {
    fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
        b.try_into().ok()
    }
    Some(match ty {
        DataType::Bool => match b {
            [x] => Value::Bool(*x != 0),
            _ => return None,
        },
        DataType::Int2 => Value::Int2(i16::from_be_bytes(be(b)?)),
        DataType::Int4 => Value::Int4(i32::from_be_bytes(be(b)?)),
        DataType::Int8 => Value::Int8(i64::from_be_bytes(be(b)?)),
        DataType::Float4 => Value::Float4(f32::from_be_bytes(be(b)?)),
        DataType::Float8 => Value::Float8(f64::from_be_bytes(be(b)?)),
        DataType::Numeric => Value::Numeric(Numeric::from_text(&numeric_from_binary(b)?).ok()?),
        DataType::Text | DataType::Varchar | DataType::Bpchar => {
            Value::Text(std::str::from_utf8(b).ok()?.to_string())
        }
        DataType::Date => Value::Date(i32::from_be_bytes(be(b)?)),
        DataType::Time => Value::Time(i64::from_be_bytes(be(b)?)),
        DataType::Timestamp => Value::Timestamp(i64::from_be_bytes(be(b)?)),
        DataType::TimestampTz => Value::TimestampTz(i64::from_be_bytes(be(b)?)),
        DataType::Interval => {
            if b.len() != 16 {
                return None;
            }
            Value::Interval(Interval::new(
                i32::from_be_bytes(be(&b[12..16])?),
                i32::from_be_bytes(be(&b[8..12])?),
                i64::from_be_bytes(be(&b[0..8])?),
            ))
        }
        t if t.is_oid() || t == DataType::Xid => Value::Oid {
            ty: t,
            oid: u32::from_be_bytes(be(b)?),
        },
        DataType::Bytea => Value::Bytea(b.to_vec()),
        DataType::Uuid => Value::Uuid(u128::from_be_bytes(be(b)?)),
        // `json_recv` takes the text; `jsonb_recv` a version byte (1) and
        // the text. Both are checked as their input functions check.
        DataType::Json => {
            let t = std::str::from_utf8(b).ok()?;
            tusk_types::json::lex::validate(t).ok()?;
            Value::Text(t.to_string())
        }
        DataType::Jsonb => match b.split_first() {
            Some((1, rest)) => Value::Text(
                tusk_types::json::Jsonb::parse(std::str::from_utf8(rest).ok()?)
                    .ok()?
                    .to_string(),
            ),
            _ => return None,
        },
        DataType::Name | DataType::Char | DataType::NodeTree => {
            Value::Text(std::str::from_utf8(b).ok()?.to_string())
        }
        t => array_from_binary(t, b)?,
    })
}

/// An array from PostgreSQL's binary format (`array_recv`): dimensions,
/// a NULL flag, the element type, each dimension's size and lower bound,
/// then each element's length (-1 for NULL) and bytes. One dimension (or
/// none, for an empty array) only.
fn array_from_binary(ty: DataType, b: &[u8]) -> Option<Value> {
    let element = ty.element()?;
    let int = |at: usize| -> Option<i32> {
        Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    };
    let ndim = int(0)?;
    let elem_oid = int(8)? as u32;
    if elem_oid != element.oid() {
        return None;
    }
    let mut a = tusk_exec::array::ArrayValue::new(ty, Vec::new());
    if ndim == 0 {
        return (b.len() == 12).then_some(Value::Array(Box::new(a)));
    }
    if ndim != 1 {
        return None;
    }
    let n = usize::try_from(int(12)?).ok()?;
    a.lower = int(16)?;
    let mut at = 20;
    for _ in 0..n {
        let len = int(at)?;
        at += 4;
        if len < 0 {
            a.items.push(Value::Null);
            continue;
        }
        let bytes = b.get(at..at + len as usize)?;
        a.items.push(binary_value(element, bytes)?);
        at += len as usize;
    }
    (at == b.len()).then_some(Value::Array(Box::new(a)))
}

/// Appends an array in PostgreSQL's binary format (`array_send`).
fn array_to_binary(out: &mut Vec<u8>, a: &tusk_exec::array::ArrayValue, settings: &Settings) {
    let element = a.element();
    let has_null = a.items.iter().any(Value::is_null);
    let ndim: i32 = if a.items.is_empty() { 0 } else { 1 };
    out.extend_from_slice(&ndim.to_be_bytes());
    out.extend_from_slice(&i32::from(has_null).to_be_bytes());
    out.extend_from_slice(&element.oid().to_be_bytes());
    if ndim == 1 {
        out.extend_from_slice(&(a.items.len() as i32).to_be_bytes());
        out.extend_from_slice(&a.lower.to_be_bytes());
    }
    let elems = tusk_exec::array::element_vector(a);
    for i in 0..a.items.len() {
        if elems.is_null(i) {
            out.extend_from_slice(&(-1i32).to_be_bytes());
        } else {
            put_value(out, &elems, element, i, true, settings);
        }
    }
}

const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;
const NUMERIC_PINF: u16 = 0xD000;
const NUMERIC_NINF: u16 = 0xF000;

/// PostgreSQL's binary numeric (`numeric_recv`) as decimal text.
fn numeric_from_binary(b: &[u8]) -> Option<String> {
    if b.len() < 8 || !(b.len() - 8).is_multiple_of(2) {
        return None;
    }
    let word = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let ndigits = word(0) as usize;
    let weight = word(2) as i16 as i32;
    let sign = word(4);
    let dscale = word(6) as usize;
    if b.len() != 8 + 2 * ndigits {
        return None;
    }
    match sign {
        NUMERIC_NAN => return Some("NaN".into()),
        NUMERIC_PINF => return Some("Infinity".into()),
        NUMERIC_NINF => return Some("-Infinity".into()),
        _ => {}
    }
    let digits: Vec<u16> = (0..ndigits).map(|i| word(8 + 2 * i)).collect();
    if digits.iter().any(|&d| d >= 10000) || (sign != 0 && sign != NUMERIC_NEG) {
        return None;
    }
    // Integer part: groups 0..=weight; fraction: groups after.
    let mut int = String::new();
    for g in 0..=weight.max(-1) {
        let d = digits.get(g as usize).copied().unwrap_or(0);
        if int.is_empty() {
            if d != 0 {
                int = d.to_string();
            }
        } else {
            int.push_str(&format!("{d:04}"));
        }
    }
    if int.is_empty() {
        int.push('0');
    }
    let mut frac = String::new();
    let mut g = weight + 1;
    while frac.len() < dscale {
        let d = if g < 0 {
            0
        } else {
            digits.get(g as usize).copied().unwrap_or(0)
        };
        frac.push_str(&format!("{d:04}"));
        g += 1;
    }
    frac.truncate(dscale);
    let mut s = String::new();
    if sign == NUMERIC_NEG {
        s.push('-');
    }
    s.push_str(&int);
    if dscale > 0 {
        s.push('.');
        s.push_str(&frac);
    }
    Some(s)
}

/// Decimal text (`-12.340`, `NaN`) as PostgreSQL's binary numeric.
fn numeric_to_binary(text: &str, out: &mut Vec<u8>) {
    let put = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_be_bytes());
    let special = match text {
        "NaN" => Some(NUMERIC_NAN),
        "Infinity" => Some(NUMERIC_PINF),
        "-Infinity" => Some(NUMERIC_NINF),
        _ => None,
    };
    if let Some(sign) = special {
        for v in [0, 0, sign, 0] {
            put(out, v);
        }
        return;
    }
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let int = int.trim_start_matches('0');
    let dscale = frac.len();
    // Pad both parts to whole base-10000 groups around the decimal point.
    let lead = (4 - int.len() % 4) % 4;
    let mut all = "0".repeat(lead);
    all.push_str(int);
    let int_groups = all.len() / 4;
    all.push_str(frac);
    all.push_str(&"0".repeat((4 - frac.len() % 4) % 4));
    let mut groups: Vec<u16> = all
        .as_bytes()
        .chunks(4)
        .map(|c| c.iter().fold(0u16, |a, d| a * 10 + (d - b'0') as u16))
        .collect();
    let mut weight = int_groups as i32 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    put(out, groups.len() as u16);
    put(out, weight as i16 as u16);
    put(
        out,
        if neg && !groups.is_empty() {
            NUMERIC_NEG
        } else {
            0
        },
    );
    put(out, dscale as u16);
    for g in groups {
        put(out, g);
    }
}

/// Appends `v` in decimal to `out`.
fn put_int(out: &mut Vec<u8>, v: i64) {
    let mut buf = IntText::default();
    out.extend_from_slice(format_int(&mut buf, v));
}

/// Appends one value of type `ty`: a 4-byte length and its bytes.
fn put_value(
    out: &mut Vec<u8>,
    col: &Vector,
    ty: DataType,
    row: usize,
    binary: bool,
    settings: &Settings,
) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    match (&col.data, binary) {
        (Data::Int4(d), false) if ty == DataType::Int4 => put_int(out, d[row] as i64),
        (Data::Int8(d), false) if ty == DataType::Int8 => put_int(out, d[row]),
        (Data::Int2(d), false) => put_int(out, d[row] as i64),
        (Data::Bool(d), false) => out.push(if d[row] { b't' } else { b'f' }),
        // `jsonb_send`: a version byte, then the text.
        (Data::Text(d), true) if ty == DataType::Jsonb => {
            out.push(1);
            out.extend_from_slice(d.get(row));
        }
        (Data::Text(d), _) => out.extend_from_slice(d.get(row)),
        (Data::Bool(d), true) => out.push(d[row] as u8),
        // oid, the reg types and xid are 4 bytes on the wire.
        (Data::Int8(d), true) if ty.is_oid() || ty == DataType::Xid => {
            out.extend_from_slice(&(d[row] as u32).to_be_bytes())
        }
        (Data::Array(d), true) => array_to_binary(out, &d[row], settings),
        (Data::Int2(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        // date is an Int4 vector; time and the timestamps Int8 vectors.
        (Data::Int4(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Int8(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Float4(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Float8(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Numeric(d), true) => numeric_to_binary(&d[row].to_string(), out),
        (Data::Bytea(d), true) => out.extend_from_slice(d.get(row)),
        (Data::Uuid(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Interval(d), true) => {
            let iv = d[row];
            out.extend_from_slice(&iv.micros.to_be_bytes());
            out.extend_from_slice(&iv.days.to_be_bytes());
            out.extend_from_slice(&iv.months.to_be_bytes());
        }
        (Data::Numeric(d), false) => out.extend_from_slice(d[row].to_string().as_bytes()),
        (_, false) => {
            if let Some(text) = tusk_exec::cast::output(&col.value_as(row, ty), settings) {
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
    let len = (out.len() - at - 4) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Appends DataRow messages for rows `from..to` of `batch`, whose columns
/// have types `types`; `binary[c]` says whether column `c` goes in binary
/// format. Text follows `settings`.
pub fn put_data_rows(
    out: &mut Vec<u8>,
    batch: &Batch,
    types: &[DataType],
    from: usize,
    to: usize,
    binary: &[bool],
    settings: &Settings,
) {
    for row in from..to {
        let start = out.len();
        out.push(b'D');
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&(batch.columns.len() as i16).to_be_bytes());
        for (c, col) in batch.columns.iter().enumerate() {
            if col.is_null(row) {
                out.extend_from_slice(&(-1i32).to_be_bytes());
            } else {
                let ty = types.get(c).copied().unwrap_or(DataType::Text);
                let binary = binary.get(c).copied().unwrap_or(false);
                put_value(out, col, ty, row, binary, settings);
            }
        }
        let len = (out.len() - start - 1) as i32;
        out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    }
}

/// Appends a RowDescription for `columns` under a Bind's result format
/// codes (written here rather than through pgwire's field list: it goes
/// out with every query's result).
pub fn put_row_description(out: &mut Vec<u8>, columns: &[ResultColumn], formats: &[i16]) {
    let start = out.len();
    out.push(b'T');
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(columns.len() as i16).to_be_bytes());
    for (i, c) in columns.iter().enumerate() {
        let (oid, typmod) = column_type(c.ty);
        out.extend_from_slice(c.name.as_bytes());
        out.push(0);
        out.extend_from_slice(&0i32.to_be_bytes()); // table oid
        out.extend_from_slice(&0i16.to_be_bytes()); // column number
        out.extend_from_slice(&oid.to_be_bytes());
        out.extend_from_slice(&type_len(c.data_type()).to_be_bytes());
        out.extend_from_slice(&typmod.to_be_bytes());
        out.extend_from_slice(&format_of(formats, i).to_be_bytes());
    }
    let len = (out.len() - start - 1) as i32;
    out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
}

/// The format of column `i` under a Bind's result format codes.
pub fn format_of(formats: &[i16], i: usize) -> i16 {
    match formats {
        [] => 0,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(0),
    }
}

/// Appends a CommandComplete with `tag`.
pub fn put_command_complete(out: &mut Vec<u8>, tag: &str) {
    out.push(b'C');
    out.extend_from_slice(&(tag.len() as i32 + 5).to_be_bytes());
    out.extend_from_slice(tag.as_bytes());
    out.push(0);
}

/// Appends a DataRow of values already rendered as text (SHOW, EXPLAIN).
pub fn put_text_row(out: &mut Vec<u8>, row: &[Option<String>]) {
    let start = out.len();
    out.push(b'D');
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(row.len() as i16).to_be_bytes());
    for v in row {
        match v {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(s) => {
                out.extend_from_slice(&(s.len() as i32).to_be_bytes());
                out.extend_from_slice(s.as_bytes());
            }
        }
    }
    let len = (out.len() - start - 1) as i32;
    out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_binary_round_trips() {
        for s in [
            "0",
            "1",
            "-1",
            "12345.678",
            "0.0001",
            "-0.00012",
            "10000",
            "123456789012.5",
            "1.10",
            "NaN",
            "0.000",
            "Infinity",
            "-Infinity",
        ] {
            let mut b = Vec::new();
            numeric_to_binary(s, &mut b);
            assert_eq!(numeric_from_binary(&b).unwrap(), s, "{s}");
        }
        // PostgreSQL's own bytes for 12345.678: 3 digits, weight 1, dscale 3.
        let mut b = Vec::new();
        numeric_to_binary("12345.678", &mut b);
        assert_eq!(b, [0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]);
    }

    #[test]
    fn binary_parameters() {
        assert_eq!(
            binary_value(DataType::Int4, &(-7i32).to_be_bytes()),
            Some(Value::Int4(-7))
        );
        assert_eq!(
            binary_value(DataType::Int8, &(1i64 << 40).to_be_bytes()),
            Some(Value::Int8(1 << 40))
        );
        assert_eq!(binary_value(DataType::Bool, &[1]), Some(Value::Bool(true)));
        assert_eq!(
            binary_value(DataType::Float8, &1.5f64.to_be_bytes()),
            Some(Value::Float8(1.5))
        );
        assert_eq!(binary_value(DataType::Int4, &[0, 1]), None);
        assert_eq!(binary_value(DataType::Text, b"\xff"), None);
        // 2024-03-01 is day 8826 after 2000-01-01.
        assert_eq!(
            binary_value(DataType::Date, &8826i32.to_be_bytes()),
            Some(Value::Date(8826))
        );
        let mut iv = Vec::new();
        iv.extend_from_slice(&5_000_000i64.to_be_bytes());
        iv.extend_from_slice(&3i32.to_be_bytes());
        iv.extend_from_slice(&14i32.to_be_bytes());
        assert_eq!(
            binary_value(DataType::Interval, &iv),
            Some(Value::Interval(Interval::new(14, 3, 5_000_000)))
        );
        let mut n = Vec::new();
        numeric_to_binary("-12.340", &mut n);
        assert_eq!(
            binary_value(DataType::Numeric, &n),
            Some(Value::Numeric(Numeric::from_text("-12.340").unwrap()))
        );
    }

    #[test]
    fn integers_in_text() {
        let mut v = Vec::new();
        for n in [0, 7, -7, i64::MIN, i64::MAX] {
            v.clear();
            put_int(&mut v, n);
            assert_eq!(String::from_utf8(v.clone()).unwrap(), n.to_string());
        }
    }
}
