//! Text input of `smallint`, `integer`, `bigint` and `boolean`, and their
//! output (without `format!`'s machinery: it runs for every value sent).
//!
//! Integers (`pg_strtoint16/32/64` of PostgreSQL 15): optional white space,
//! an optional `+` or `-`, at least one decimal digit, optional white
//! space; nothing else (no underscores, no hexadecimal: those came in 16).
//! A malformed string is `invalid input syntax for type integer: "s"`
//! (22P02); a well-formed one outside the range is `value "s" is out of
//! range for type integer` (22003). Both quote the whole input.
//!
//! Booleans (`boolin`): after trimming white space, any case, `t`/`true`,
//! `y`/`yes`, `on`, `1` and `f`/`false`, `n`/`no`, `off`, `0`, where a
//! unique prefix of the words counts (`tr`, `ye`, but `of` at least for
//! `off`, since `o` alone is ambiguous).

use crate::error::{Result, TypeError};

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Parses a decimal integer within `[min, max]`; `ty` names the type in
/// the messages.
fn parse_int(s: &str, ty: &str, min: i64, max: i64) -> Result<i64> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    // Accumulate negatively so that the minimum value parses.
    let mut v: i64 = 0;
    let mut overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        let d = (b[i] - b'0') as i64;
        match v.checked_mul(10).and_then(|x| x.checked_sub(d)) {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return Err(TypeError::invalid_input(ty, s));
    }
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    if i != b.len() {
        return Err(TypeError::invalid_input(ty, s));
    }
    let v = if neg { Some(v) } else { v.checked_neg() };
    match v {
        Some(v) if !overflow && (min..=max).contains(&v) => Ok(v),
        _ => Err(TypeError::out_of_range(format!(
            "value \"{s}\" is out of range for type {ty}"
        ))),
    }
}

/// `int2in`.
pub fn parse_int2(s: &str) -> Result<i16> {
    parse_int(s, "smallint", i16::MIN as i64, i16::MAX as i64).map(|v| v as i16)
}

/// `int4in`.
pub fn parse_int4(s: &str) -> Result<i32> {
    parse_int(s, "integer", i32::MIN as i64, i32::MAX as i64).map(|v| v as i32)
}

/// `int8in`.
pub fn parse_int8(s: &str) -> Result<i64> {
    parse_int(s, "bigint", i64::MIN, i64::MAX)
}

/// `boolin`.
pub fn parse_bool(s: &str) -> Result<bool> {
    let t = s.trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let l = t.to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| l.len() >= min && word.starts_with(l.as_str());
    if prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || l == "1" {
        Ok(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || l == "0" {
        Ok(false)
    } else {
        Err(TypeError::invalid_input("boolean", s))
    }
}

/// A buffer for [`format_int`] and [`format_uint`]: the longest output,
/// `-9223372036854775808` or `18446744073709551615`, is 20 bytes.
pub type IntText = [u8; 20];

/// `int8out` (and `int2out`/`int4out` for narrower values): `v` in
/// decimal, with a `-` when negative, written into the end of `buf`.
pub fn format_int(buf: &mut IntText, v: i64) -> &[u8] {
    let start = digits(buf, v.unsigned_abs());
    if v < 0 {
        buf[start - 1] = b'-';
        &buf[start - 1..]
    } else {
        &buf[start..]
    }
}

/// `v` in decimal, written into the end of `buf`.
pub fn format_uint(buf: &mut IntText, v: u64) -> &[u8] {
    let start = digits(buf, v);
    &buf[start..]
}

/// Writes `v`'s digits at the end of `buf`; returns where they start (at
/// least 1 for a value below 10^19, leaving room for a sign).
fn digits(buf: &mut IntText, mut v: u64) -> usize {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return at;
        }
    }
}

/// `boolout`: `t` or `f`.
pub fn format_bool(b: bool) -> &'static str {
    if b {
        "t"
    } else {
        "f"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_output() {
        let mut buf = IntText::default();
        assert_eq!(format_int(&mut buf, 0), b"0");
        assert_eq!(format_int(&mut buf, 1234), b"1234");
        assert_eq!(format_int(&mut buf, -7), b"-7");
        assert_eq!(format_int(&mut buf, i64::MIN), b"-9223372036854775808");
        assert_eq!(format_int(&mut buf, i64::MAX), b"9223372036854775807");
        assert_eq!(format_uint(&mut buf, u64::MAX), b"18446744073709551615");
        assert_eq!(format_uint(&mut buf, 10), b"10");
    }

    fn show<T: ToString>(r: Result<T>) -> String {
        match r {
            Ok(v) => v.to_string(),
            Err(e) => format!("ERROR {}: {}", e.code, e.message),
        }
    }

    #[test]
    fn integers_match_postgres() {
        // Checked against PostgreSQL 15.
        let cases = [
            ("  +42  ", "42"),
            ("-0", "0"),
            (
                "+-1",
                "ERROR 22P02: invalid input syntax for type integer: \"+-1\"",
            ),
            (
                "0x10",
                "ERROR 22P02: invalid input syntax for type integer: \"0x10\"",
            ),
            (
                "1_000",
                "ERROR 22P02: invalid input syntax for type integer: \"1_000\"",
            ),
            (
                "",
                "ERROR 22P02: invalid input syntax for type integer: \"\"",
            ),
            (
                "-",
                "ERROR 22P02: invalid input syntax for type integer: \"-\"",
            ),
            (
                "1.5",
                "ERROR 22P02: invalid input syntax for type integer: \"1.5\"",
            ),
            (
                "2147483648",
                "ERROR 22003: value \"2147483648\" is out of range for type integer",
            ),
            ("-2147483648", "-2147483648"),
            (
                " 99999999999999999999 ",
                "ERROR 22003: value \" 99999999999999999999 \" is out of range for type integer",
            ),
        ];
        for (s, want) in cases {
            assert_eq!(show(parse_int4(s)), want, "{s:?}");
        }
        assert_eq!(
            show(parse_int8("-9223372036854775808")),
            "-9223372036854775808"
        );
        assert_eq!(
            show(parse_int8("9223372036854775808")),
            "ERROR 22003: value \"9223372036854775808\" is out of range for type bigint"
        );
        assert_eq!(
            show(parse_int2("32768")),
            "ERROR 22003: value \"32768\" is out of range for type smallint"
        );
        assert_eq!(
            show(parse_int2("x")),
            "ERROR 22P02: invalid input syntax for type smallint: \"x\""
        );
    }

    #[test]
    fn booleans_match_postgres() {
        // Checked against PostgreSQL 15.
        for s in ["t", "TRUE", " tr ", "y", "yes", "on", "1"] {
            assert!(parse_bool(s).unwrap(), "{s:?}");
        }
        for s in ["f", "fAlSe", "n", "no", "of", "off", "0"] {
            assert!(!parse_bool(s).unwrap(), "{s:?}");
        }
        for s in ["o", "", "2", "yess", "truee", "onn"] {
            assert_eq!(
                parse_bool(s).unwrap_err().message,
                format!("invalid input syntax for type boolean: \"{s}\"")
            );
        }
    }
}
