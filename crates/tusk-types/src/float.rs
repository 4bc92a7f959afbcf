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
}
