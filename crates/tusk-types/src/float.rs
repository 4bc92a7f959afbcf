//! Text output of `real` and `double precision`.
//!
//! PostgreSQL 12 and later print the shortest decimal that reads back as the
//! same binary value (with the default `extra_float_digits = 1`). The digits
//! come from Rust's formatter, which produces the same shortest round-trip
//! digits; what is PostgreSQL's own is the layout: positional notation when
//! the decimal exponent `e` of the first digit satisfies `-4 <= e < 15`
//! (`< 6` for `real`), else `d.ddde+XX` with a sign and at least two exponent
//! digits. Special values print as `NaN`, `Infinity` and `-Infinity`; minus
//! zero prints as `-0`.
//!
//! Input follows `float8in`/`float4in`: C's `strtod` between optional white
//! space, plus PostgreSQL's own spellings of the special values (`NaN`,
//! `Infinity`, `inf`, signed, any case). A decimal that overflows, or that
//! is not zero but rounds to zero, is out of range (22003) quoting the
//! number without its surrounding white space; subnormal results are
//! accepted. Anything else is `invalid input syntax` quoting the whole input.

use crate::error::{Result, TypeError};

/// PostgreSQL's float ordering (`float8_cmp_internal`): NaN equals NaN and
/// sorts above every other value; `-0` equals `0`.
#[inline]
pub fn float_cmp(a: f64, b: f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("neither side is NaN"),
    }
}

/// `double precision` output (`float8out`).
pub fn format_float8(v: f64) -> String {
    if let Some(s) = special(v.is_nan(), v.is_infinite(), v.is_sign_negative()) {
        return s.to_string();
    }
    layout(&format!("{v:e}"), 15)
}

/// `real` output (`float4out`).
pub fn format_float4(v: f32) -> String {
    if let Some(s) = special(v.is_nan(), v.is_infinite(), v.is_sign_negative()) {
        return s.to_string();
    }
    layout(&format!("{v:e}"), 6)
}

fn special(nan: bool, inf: bool, neg: bool) -> Option<&'static str> {
    match (nan, inf, neg) {
        (true, _, _) => Some("NaN"),
        (_, true, false) => Some("Infinity"),
        (_, true, true) => Some("-Infinity"),
        _ => None,
    }
}

/// Lays out Rust's `{:e}` form (`-1.2345e-7`) as PostgreSQL does; `max_exp`
/// is the first exponent printed in exponential notation.
fn layout(sci: &str, max_exp: i32) -> String {
    let (mantissa, exp) = sci.split_once('e').expect("{:e} output has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..max_exp).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp < 0 {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        } else if exp + 1 >= n {
            format!("{}{}", digits, "0".repeat((exp + 1 - n) as usize))
        } else {
            let (int, frac) = digits.split_at(exp as usize + 1);
            format!("{int}.{frac}")
        };
        return format!("{sign}{body}");
    }
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{mantissa}e{esign}{:02}", exp.abs())
}

/// `double precision` output under `extra_float_digits`: 1 or more prints
/// the shortest exact form, otherwise `%.{15 + extra}g`.
pub fn format_float8_digits(v: f64, extra_float_digits: i32) -> String {
    if extra_float_digits > 0 {
        return format_float8(v);
    }
    format_g(v, (15 + extra_float_digits).max(1) as usize)
}

/// `real` output under `extra_float_digits` (`%.{6 + extra}g` at 0 or less).
pub fn format_float4_digits(v: f32, extra_float_digits: i32) -> String {
    if extra_float_digits > 0 {
        return format_float4(v);
    }
    format_g(v as f64, (6 + extra_float_digits).max(1) as usize)
}

/// C's `%.{p}g` (with PostgreSQL's spelling of NaN and the infinities).
pub fn format_g(v: f64, p: usize) -> String {
    if let Some(s) = special(v.is_nan(), v.is_infinite(), v.is_sign_negative()) {
        return s.to_string();
    }
    let sci = format!("{:.*e}", p - 1, v);
    let (mant, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("integer exponent");
    let strip = |m: &str| -> String {
        if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{}e{esign}{:02}", strip(mant), exp.abs());
    }
    let decimals = (p as i32 - 1 - exp).max(0) as usize;
    strip(&format!("{v:.decimals$}"))
}

/// `float8in`.
pub fn parse_float8(s: &str) -> Result<f64> {
    parse_float(s, "double precision", |t| t.parse::<f64>().ok())
}

/// `float4in`.
pub fn parse_float4(s: &str) -> Result<f32> {
    parse_float(s, "real", |t| t.parse::<f32>().ok())
}

fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

fn parse_float<F>(s: &str, ty: &str, parse: impl Fn(&str) -> Option<F>) -> Result<F>
where
    F: Copy + PartialEq + Into<f64> + From<f32>,
{
    let t = s.trim_matches(is_c_space);
    let syntax = || TypeError::invalid_input(ty, s);
    if t.is_empty() {
        return Err(syntax());
    }
    let unsigned = t.trim_start_matches(['+', '-']);
    if t.len() - unsigned.len() > 1 {
        return Err(syntax());
    }
    let lower = unsigned.to_ascii_lowercase();
    let decimal = match lower.as_str() {
        "nan" | "inf" | "infinity" => false,
        _ if lower.starts_with("0x") => {
            let hex = &lower[2..];
            if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(syntax());
            }
            let mut v = 0f64;
            for b in hex.bytes() {
                v = v * 16.0 + (b as char).to_digit(16).unwrap() as f64;
            }
            let v = if t.starts_with('-') { -v } else { v };
            return parse(&format!("{v:e}")).ok_or_else(syntax);
        }
        _ => {
            // Rust accepts exactly strtod's decimal grammar here, except
            // that it also knows no hexadecimal (handled above).
            if !lower
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
            {
                return Err(syntax());
            }
            true
        }
    };
    let v = parse(t).ok_or_else(syntax)?;
    if decimal {
        let f: f64 = v.into();
        let mantissa = lower.split('e').next().unwrap_or("");
        let nonzero = mantissa.bytes().any(|b| matches!(b, b'1'..=b'9'));
        if f.is_infinite() || (f == 0.0 && nonzero) {
            return Err(TypeError::out_of_range(format!(
                "\"{t}\" is out of range for type {ty}"
            )));
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_postgres() {
        // Checked against PostgreSQL 15.
        let f8 = [
            (1e15, "1e+15"),
            (1e14, "100000000000000"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-0.0, "-0"),
            (1.0 / 3.0, "0.3333333333333333"),
            (1e301, "1e+301"),
            (3.0, "3"),
            (100.0, "100"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (v, want) in f8 {
            assert_eq!(format_float8(v), want, "{v}");
        }
        let f4 = [
            (1e6f32, "1e+06"),
            (1e5, "100000"),
            (123456.7, "123456.7"),
            (1.0 / 3.0, "0.33333334"),
            (2.5e-5, "2.5e-05"),
        ];
        for (v, want) in f4 {
            assert_eq!(format_float4(v), want, "{v}");
        }
    }

    #[test]
    fn extra_float_digits_zero_matches_postgres() {
        // SET extra_float_digits = 0 in PostgreSQL 15.
        assert_eq!(format_float8_digits(0.1 + 0.2, 0), "0.3");
        assert_eq!(format_float8_digits(1.0 / 3.0, 0), "0.333333333333333");
        assert_eq!(format_float8_digits(1e20, 0), "1e+20");
        assert_eq!(format_float8_digits(123456.0, 0), "123456");
        assert_eq!(format_float8_digits(1.5e-7, 0), "1.5e-07");
        assert_eq!(format_float4_digits(1.0 / 3.0, 0), "0.333333");
        assert_eq!(format_float8_digits(0.1 + 0.2, 1), "0.30000000000000004");
    }

    #[test]
    fn input_matches_postgres() {
        // Checked against PostgreSQL 15.
        assert_eq!(parse_float8("0x1A").unwrap(), 26.0);
        assert_eq!(parse_float8(" -inf ").unwrap(), f64::NEG_INFINITY);
        assert!(parse_float8("NaN").unwrap().is_nan());
        assert!(parse_float8("-nan").unwrap().is_nan());
        assert_eq!(parse_float8("+Inf").unwrap(), f64::INFINITY);
        assert_eq!(parse_float8("infinity").unwrap(), f64::INFINITY);
        assert_eq!(parse_float8("1.e5").unwrap(), 1e5);
        assert_eq!(parse_float8("  1e5  ").unwrap(), 1e5);
        assert_eq!(format_float8(parse_float8("-0").unwrap()), "-0");
        assert_eq!(format_float8(parse_float8("4e-320").unwrap()), "4e-320");
        let e = parse_float8("1e-400").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "22003",
                "\"1e-400\" is out of range for type double precision"
            )
        );
        assert_eq!(
            parse_float8(" 1e400").unwrap_err().message,
            "\"1e400\" is out of range for type double precision"
        );
        assert_eq!(
            parse_float4("1e-50").unwrap_err().message,
            "\"1e-50\" is out of range for type real"
        );
        let e = parse_float4("abc").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22P02", "invalid input syntax for type real: \"abc\"")
        );
        assert_eq!(
            parse_float8("").unwrap_err().message,
            "invalid input syntax for type double precision: \"\""
        );
        assert!(parse_float8("1e").is_err());
        assert!(parse_float8("0e-400").unwrap() == 0.0);
    }
}
