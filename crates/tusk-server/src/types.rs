//! Types on the wire: PostgreSQL's type OIDs for tusk's types, values in
//! text and binary format, and bound parameters decoded to text.
//!
//! Result values are written straight from the executor's column vectors
//! into DataRow messages ([`put_data_rows`]): no row is rendered to a
//! `String` first. Text format is PostgreSQL's output function's text;
//! binary format is its `send` function's bytes (big-endian integers, a
//! byte for boolean, the base-10000 digit layout for numeric).
//!
//! Parameters arrive as bytes in either format; [`param_text`] turns them
//! into PostgreSQL's text form, which the SQL layer reads as a literal of
//! the parameter's type ([`param_type`]).

use crate::error::{codes, Failure};
use crate::frontend::utf8;
use tusk_exec::vector::Data;
use tusk_exec::Batch;
use tusk_sql::portal::ParamType;
use tusk_storage::DataType;

pub const BOOL: u32 = 16;
pub const BYTEA: u32 = 17;
pub const NAME: u32 = 19;
pub const INT8: u32 = 20;
pub const INT2: u32 = 21;
pub const INT4: u32 = 23;
pub const TEXT: u32 = 25;
pub const OID: u32 = 26;
pub const FLOAT4: u32 = 700;
pub const FLOAT8: u32 = 701;
pub const UNKNOWN: u32 = 705;
pub const BPCHAR: u32 = 1042;
pub const VARCHAR: u32 = 1043;
pub const NUMERIC: u32 = 1700;

/// The OID and `typlen` of a result type.
pub fn oid_of(t: DataType) -> (u32, i16) {
    match t {
        DataType::Bool => (BOOL, 1),
        DataType::Int4 => (INT4, 4),
        DataType::Int8 => (INT8, 8),
        DataType::Numeric => (NUMERIC, -1),
        DataType::Text => (TEXT, -1),
    }
}

/// The type a parameter of type `oid` is cast to; `None` leaves the
/// literal untyped, for the SQL layer to resolve from context.
pub fn param_type(oid: u32) -> Option<ParamType> {
    match oid {
        BOOL => Some(ParamType::Bool),
        INT2 | INT4 | OID => Some(ParamType::Int4),
        INT8 => Some(ParamType::Int8),
        NUMERIC | FLOAT4 | FLOAT8 => Some(ParamType::Numeric),
        TEXT | VARCHAR | BPCHAR | NAME => Some(ParamType::Text),
        _ => None,
    }
}

/// The OID a statement's `$n` is described with: the client's, or `text`
/// where it left the type open (interim, until the binder infers types).
pub fn described_param_oid(given: u32) -> u32 {
    if given == 0 || given == UNKNOWN {
        TEXT
    } else {
        given
    }
}

fn bad_binary(what: &str) -> Failure {
    Failure::error(
        "22P03",
        format!("incorrect binary data format in bind parameter: {what}"),
    )
}

/// A parameter's value in text form, from its bytes in `format` (0 text,
/// 1 binary) for type `oid`.
pub fn param_text(oid: u32, format: i16, bytes: &[u8]) -> Result<String, Failure> {
    match format {
        0 => utf8(bytes),
        1 => {
            let fixed = |n: usize| -> Result<&[u8], Failure> {
                if bytes.len() == n {
                    Ok(bytes)
                } else {
                    Err(bad_binary("wrong length"))
                }
            };
            Ok(match oid {
                BOOL => (fixed(1)?[0] != 0).to_string(),
                INT2 => i16::from_be_bytes(fixed(2)?.try_into().expect("2")).to_string(),
                INT4 => i32::from_be_bytes(fixed(4)?.try_into().expect("4")).to_string(),
                OID => u32::from_be_bytes(fixed(4)?.try_into().expect("4")).to_string(),
                INT8 => i64::from_be_bytes(fixed(8)?.try_into().expect("8")).to_string(),
                FLOAT4 => float_text(f32::from_be_bytes(fixed(4)?.try_into().expect("4")) as f64),
                FLOAT8 => float_text(f64::from_be_bytes(fixed(8)?.try_into().expect("8"))),
                NUMERIC => numeric_from_binary(bytes)?,
                TEXT | VARCHAR | BPCHAR | NAME | UNKNOWN | 0 => utf8(bytes)?,
                other => {
                    return Err(Failure::error(
                        codes::FEATURE_NOT_SUPPORTED,
                        format!(
                            "binary format for parameters of type OID {other} is not supported"
                        ),
                    ))
                }
            })
        }
        other => Err(Failure::error(
            codes::PROTOCOL_VIOLATION,
            format!("unsupported format code: {other}"),
        )),
    }
}

fn float_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{f}")
    }
}

const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;

/// PostgreSQL's binary numeric (`numeric_recv`) as decimal text.
fn numeric_from_binary(b: &[u8]) -> Result<String, Failure> {
    if b.len() < 8 || !(b.len() - 8).is_multiple_of(2) {
        return Err(bad_binary("numeric"));
    }
    let word = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let ndigits = word(0) as usize;
    let weight = word(2) as i16 as i32;
    let sign = word(4);
    let dscale = word(6) as usize;
    if b.len() != 8 + 2 * ndigits {
        return Err(bad_binary("numeric"));
    }
    if sign == NUMERIC_NAN {
        return Ok("NaN".into());
    }
    let digits: Vec<u16> = (0..ndigits).map(|i| word(8 + 2 * i)).collect();
    if digits.iter().any(|&d| d >= 10000) || (sign != 0 && sign != NUMERIC_NEG) {
        return Err(bad_binary("numeric"));
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
    Ok(s)
}

/// Decimal text (`-12.340`, `NaN`) as PostgreSQL's binary numeric.
fn numeric_to_binary(text: &str, out: &mut Vec<u8>) {
    let put = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_be_bytes());
    if text == "NaN" {
        for v in [0, 0, NUMERIC_NAN, 0] {
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
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends one value: a 4-byte length (-1 for NULL) and its bytes.
fn put_value(out: &mut Vec<u8>, data: &Data, row: usize, binary: bool) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    match (data, binary) {
        (Data::Bool(d), false) => out.push(if d[row] { b't' } else { b'f' }),
        (Data::Bool(d), true) => out.push(d[row] as u8),
        (Data::Int4(d), false) => put_int(out, d[row] as i64),
        (Data::Int4(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Int8(d), false) => put_int(out, d[row]),
        (Data::Int8(d), true) => out.extend_from_slice(&d[row].to_be_bytes()),
        (Data::Numeric(d), false) => out.extend_from_slice(d[row].to_string().as_bytes()),
        (Data::Numeric(d), true) => numeric_to_binary(&d[row].to_string(), out),
        (Data::Text(d), _) => out.extend_from_slice(d.get(row)),
    }
    let len = (out.len() - at - 4) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Appends DataRow messages for rows `from..to` of `batch`; `binary[c]`
/// says whether column `c` goes in binary format.
pub fn put_data_rows(out: &mut Vec<u8>, batch: &Batch, from: usize, to: usize, binary: &[bool]) {
    for row in from..to {
        let start = out.len();
        out.push(b'D');
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&(batch.columns.len() as i16).to_be_bytes());
        for (c, col) in batch.columns.iter().enumerate() {
            if col.is_null(row) {
                out.extend_from_slice(&(-1i32).to_be_bytes());
            } else {
                put_value(out, &col.data, row, binary.get(c).copied().unwrap_or(false));
            }
        }
        let len = (out.len() - start - 1) as i32;
        out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    }
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
    fn parameters_in_both_formats() {
        assert_eq!(param_text(INT4, 0, b"42").unwrap(), "42");
        assert_eq!(param_text(INT4, 1, &(-7i32).to_be_bytes()).unwrap(), "-7");
        assert_eq!(
            param_text(INT8, 1, &(1i64 << 40).to_be_bytes()).unwrap(),
            "1099511627776"
        );
        assert_eq!(param_text(BOOL, 1, &[1]).unwrap(), "true");
        assert_eq!(param_text(FLOAT8, 1, &1.5f64.to_be_bytes()).unwrap(), "1.5");
        assert!(param_text(INT4, 1, &[0, 1]).is_err());
        assert_eq!(param_text(TEXT, 0, b"\xff").unwrap_err().code, "22021");
        assert_eq!(param_text(INT4, 7, b"1").unwrap_err().code, "08P01");
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
