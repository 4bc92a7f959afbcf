//! Numeric text input (`numeric_in`) and output (`numeric_out`).
//!
//! Input, as PostgreSQL 15 takes it: optional white space; then `NaN`,
//! `Infinity`, `inf` (any case, with a sign for the infinities) or a
//! decimal: an optional sign, digits with at most one point and at least
//! one digit, and an optional exponent `e[+-]n` (C's `strtol`, which also
//! skips white space after the `e`); then only white space. The scale is
//! the number of digits after the point minus the exponent, at least 0.
//! No underscores and no hexadecimal (those came in PostgreSQL 16).
//! Errors quote the whole input: `invalid input syntax for type numeric:
//! " 1x"` (22P02); a value outside the limits is `value overflows numeric
//! format` (22003).
//!
//! Output prints the digits with exactly `scale` digits after the point,
//! and `NaN`, `Infinity`, `-Infinity`.

use super::dec::{overflow, Dec};
use super::{mag, Numeric, Repr};
use crate::error::{Result, TypeError};
use std::fmt;

/// C's `isspace` in the C locale.
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn starts_with_ci(s: &[u8], word: &str) -> bool {
    s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word.as_bytes())
}

impl Numeric {
    /// Parses PostgreSQL's numeric input; `None` for any error (see
    /// [`Numeric::from_text`] for the error itself).
    pub fn parse(s: &str) -> Option<Numeric> {
        Numeric::from_text(s).ok()
    }

    /// `numeric_in`.
    pub fn from_text(s: &str) -> Result<Numeric> {
        let b = s.as_bytes();
        let syntax = || TypeError::invalid_input("numeric", s);
        let mut i = 0;
        while i < b.len() && is_c_space(b[i]) {
            i += 1;
        }
        let rest = &b[i..];
        const SPECIAL: [(&str, Repr); 7] = [
            ("NaN", Repr::NaN),
            ("Infinity", Repr::PosInf),
            ("+Infinity", Repr::PosInf),
            ("-Infinity", Repr::NegInf),
            ("inf", Repr::PosInf),
            ("+inf", Repr::PosInf),
            ("-inf", Repr::NegInf),
        ];
        let (value, used) = match SPECIAL.iter().find(|(w, _)| starts_with_ci(rest, w)) {
            Some((w, r)) => (Numeric(r.clone()), w.len()),
            None => parse_decimal(rest).ok_or_else(syntax)??,
        };
        if !rest[used..].iter().all(|&c| is_c_space(c)) {
            return Err(syntax());
        }
        Ok(value)
    }
}

/// Parses a decimal at the start of `b`: `None` for a syntax error, else
/// the value (or the overflow error) and the bytes used.
fn parse_decimal(b: &[u8]) -> Option<Result<(Numeric, usize)>> {
    if let Some(fast) = parse_plain(b) {
        return Some(Ok(fast));
    }
    let mut i = 0;
    let mut neg = false;
    match b.first() {
        Some(b'+') => i += 1,
        Some(b'-') => {
            neg = true;
            i += 1
        }
        _ => {}
    }
    let mut digits: Vec<u8> = Vec::with_capacity(b.len());
    let mut frac_digits: i64 = 0;
    let mut have_point = false;
    let mut any_digit = false;
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                any_digit = true;
                // Leading zeros carry nothing but keep their place after the point.
                if !(digits.is_empty() && c == b'0') {
                    digits.push(c);
                }
                if have_point {
                    frac_digits += 1;
                }
            }
            b'.' if !have_point => have_point = true,
            b'.' => return None,
            _ => break,
        }
        i += 1;
    }
    if !any_digit {
        return None;
    }
    let mut exponent: i64 = 0;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let (e, used) = strtol(&b[i..])?;
        i += used;
        // PostgreSQL refuses exponents beyond INT_MAX / 2 before anything else.
        if e >= (i32::MAX / 2) as i64 || e <= -((i32::MAX / 2) as i64) {
            return Some(Err(overflow()));
        }
        exponent = e;
    }
    let scale = frac_digits - exponent;
    if !digits.is_empty() && (digits.len() as i64 - scale) > super::MAX_INT_DIGITS as i64 {
        return Some(Err(overflow()));
    }
    let mut m = mag::from_digits(&digits);
    let scale = if scale < 0 {
        m = mag::mul_pow10(&m, (-scale).min(u32::MAX as i64) as u32);
        0
    } else {
        scale
    };
    if scale > u32::MAX as i64 {
        return Some(Err(overflow()));
    }
    let d = Dec {
        neg: neg && !m.is_empty(),
        mag: m,
        scale: scale as u32,
    };
    Some(d.into_num().map(|n| (n, i)))
}

/// The common case without allocating: `[-+]digits[.digits]`, no
/// exponent, at most 38 significant digits (so the unscaled value fits
/// `i128`). `None` sends the input to the general parser.
fn parse_plain(b: &[u8]) -> Option<(Numeric, usize)> {
    let mut i = 0;
    let neg = match b.first()? {
        b'-' => {
            i += 1;
            true
        }
        b'+' => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i128 = 0;
    let mut digits = 0u32;
    let mut scale = 0u16;
    let mut point = false;
    let mut any = false;
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                any = true;
                if v != 0 || c != b'0' {
                    digits += 1;
                }
                if digits > 38 {
                    return None;
                }
                v = v * 10 + (c - b'0') as i128;
                if point {
                    scale += 1;
                }
            }
            b'.' if !point => point = true,
            b'.' | b'e' | b'E' => return None,
            _ => break,
        }
        i += 1;
    }
    if !any || scale as u32 > super::MAX_SCALE {
        return None;
    }
    Some((Numeric::from_parts(if neg { -v } else { v }, scale), i))
}

/// C's `strtol` on a decimal: optional white space, optional sign, digits.
/// `None` when there are no digits; saturates like `strtol` does.
fn strtol(b: &[u8]) -> Option<(i64, usize)> {
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
        i += 1;
    }
    (i > start).then_some((if neg { -v } else { v }, i))
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (neg, digits, scale) = match &self.0 {
            Repr::NaN => return f.write_str("NaN"),
            Repr::PosInf => return f.write_str("Infinity"),
            Repr::NegInf => return f.write_str("-Infinity"),
            Repr::Small { unscaled, scale } => (
                *unscaled < 0,
                unscaled.unsigned_abs().to_string(),
                *scale as usize,
            ),
            Repr::Big(b) => {
                let mut s = String::new();
                mag::write_digits(&b.mag, &mut s);
                (b.neg, s, b.scale as usize)
            }
        };
        if neg {
            f.write_str("-")?;
        }
        if scale == 0 {
            return f.write_str(&digits);
        }
        if digits.len() <= scale {
            f.write_str("0.")?;
            for _ in 0..scale - digits.len() {
                f.write_str("0")?;
            }
            f.write_str(&digits)
        } else {
            let (i, fr) = digits.split_at(digits.len() - scale);
            write!(f, "{i}.{fr}")
        }
    }
}
