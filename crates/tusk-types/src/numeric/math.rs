//! Numeric functions: `abs`, `sign`, `ceil`, `floor`, `round`, `trunc`,
//! `sqrt`, `exp`, `ln`, `log`, `power`.
//!
//! Each function picks its result scale exactly as PostgreSQL 15's
//! `numeric.c` does (the heuristics are quoted beside the code: at least 16
//! significant digits, at least the input's scale, at most 1000), then
//! computes the value to that scale with guard digits and rounds half away
//! from zero. The algorithms are our own: `sqrt` is Newton's method on
//! integers (exactly truncated, then rounded on one more digit), `exp`
//! halves its argument to below 0.01, sums the Taylor series and squares
//! back, `ln` takes square roots until the argument is near 1 and sums the
//! series of `2 atanh((x-1)/(x+1))`. Guard digits cover the error that
//! squaring and doubling amplify, so the results are PostgreSQL's digits
//! except, in principle, when the exact value lies within a guard digit's
//! width of a rounding boundary.

use super::dec::{overflow, Dec};
use super::{mag, Numeric, Repr, MAX_DISPLAY_SCALE, MIN_SIG_DIGITS};
use crate::error::{sqlstate, Result, TypeError};

/// PostgreSQL's `NUMERIC_MAX_RESULT_SCALE` (`NUMERIC_MAX_PRECISION * 2`).
const MAX_RESULT_SCALE: f64 = 2000.0;

/// log10(e) as PostgreSQL writes it (one digit short of `LOG10_E`): its
/// scale estimates truncate products with it, so the same digits matter.
#[allow(clippy::approx_constant)]
const PG_LOG10_E: f64 = 0.434294481903252;

fn clamp_scale(rscale: i64) -> i64 {
    rscale.clamp(0, MAX_DISPLAY_SCALE)
}

fn dec(n: &Numeric) -> Dec {
    Dec::from_num(n)
}

/// Decimal weight PostgreSQL uses (`weight * 4 + ...`) for a Dec: the base
/// 10000 weight of its leading digit group.
fn nbase_weight(d: &Dec) -> i64 {
    d.nbase_digits(1).0
}

impl Numeric {
    /// `sign(x)`: -1, 0 or 1 at scale 0; NaN for NaN.
    pub fn sign(&self) -> Numeric {
        if self.is_nan() {
            return Numeric::nan();
        }
        Numeric::from_i64(self.signum() as i64)
    }

    /// `ceil(x)`: the smallest integer not below x, scale 0.
    pub fn ceil(&self) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let d = dec(self);
        let t = d.trunc(0);
        if !d.neg && !d.is_integral() {
            t.add(&Dec::from_i128(1)).into_num()
        } else {
            t.into_num()
        }
    }

    /// `floor(x)`: the largest integer not above x, scale 0.
    pub fn floor(&self) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let d = dec(self);
        let t = d.trunc(0);
        if d.neg && !d.is_integral() {
            t.sub(&Dec::from_i128(1)).into_num()
        } else {
            t.into_num()
        }
    }

    /// `round(x, s)`: the display scale is `max(s, 0)`.
    pub fn round_fn(&self, s: i32) -> Result<Numeric> {
        self.round_to(s as i64)
    }

    /// `trunc(x, s)`.
    pub fn trunc_fn(&self, s: i32) -> Result<Numeric> {
        self.trunc_to(s as i64)
    }

    /// `sqrt(x)`.
    pub fn sqrt(&self) -> Result<Numeric> {
        match self.0 {
            Repr::NaN | Repr::PosInf => return Ok(self.clone()),
            _ if self.signum() < 0 => {
                return Err(TypeError::new(
                    sqlstate::INVALID_ARGUMENT_FOR_POWER,
                    "cannot take square root of a negative number",
                ))
            }
            _ => {}
        }
        let d = dec(self);
        // sweight = (arg.weight + 1) * DEC_DIGITS / 2 - 1;
        // rscale = NUMERIC_MIN_SIG_DIGITS - sweight, at least the input's scale.
        let sweight = (nbase_weight(&d) + 1) * 4 / 2 - 1;
        let rscale = clamp_scale((MIN_SIG_DIGITS - sweight).max(d.scale as i64));
        sqrt_dec(&d, rscale as u32).into_num()
    }

    /// `exp(x)`.
    pub fn exp(&self) -> Result<Numeric> {
        match self.0 {
            Repr::NaN | Repr::PosInf => return Ok(self.clone()),
            Repr::NegInf => return Ok(Numeric::zero()),
            _ => {}
        }
        let d = dec(self);
        // rscale = NUMERIC_MIN_SIG_DIGITS - (int) (x * log10(e)), clamped.
        let val = (d.to_f64() * PG_LOG10_E).clamp(-MAX_RESULT_SCALE, MAX_RESULT_SCALE);
        let rscale = clamp_scale((MIN_SIG_DIGITS - val as i64).max(d.scale as i64));
        exp_dec(&d, rscale as u32)?.into_num()
    }

    /// `ln(x)`.
    pub fn ln(&self) -> Result<Numeric> {
        match self.0 {
            Repr::NaN | Repr::PosInf => return Ok(self.clone()),
            _ => {}
        }
        check_log_arg(self)?;
        let d = dec(self);
        let rscale = clamp_scale((MIN_SIG_DIGITS - estimate_ln_dweight(&d)).max(d.scale as i64));
        ln_dec(&d, rscale as u32).into_num()
    }

    /// `log(x)`: base 10.
    pub fn log10(&self) -> Result<Numeric> {
        Numeric::from_i64(10).log(self)
    }

    /// `log(b, x)` with `self` the base (`log_var`).
    pub fn log(&self, x: &Numeric) -> Result<Numeric> {
        if self.is_nan() || x.is_nan() {
            return Ok(Numeric::nan());
        }
        check_log_arg(self)?;
        check_log_arg(x)?;
        match (&self.0, &x.0) {
            // log(Inf, Inf) is NaN; log(Inf, x) is 0; log(b, Inf) is ±Inf.
            (Repr::PosInf, Repr::PosInf) => return Ok(Numeric::nan()),
            (Repr::PosInf, _) => return Ok(Numeric::zero()),
            (_, Repr::PosInf) => {
                let b = dec(self);
                return match b.cmp(&Dec::from_i128(1)) {
                    std::cmp::Ordering::Equal => Err(TypeError::division_by_zero()),
                    std::cmp::Ordering::Less => Ok(Numeric::neg_infinity()),
                    std::cmp::Ordering::Greater => Ok(Numeric::infinity()),
                };
            }
            _ => {}
        }
        let (b, n) = (dec(self), dec(x));
        let ln_base_dweight = estimate_ln_dweight(&b);
        let ln_num_dweight = estimate_ln_dweight(&n);
        let result_dweight = ln_num_dweight - ln_base_dweight;
        let rscale = clamp_scale(
            (MIN_SIG_DIGITS - result_dweight)
                .max(b.scale as i64)
                .max(n.scale as i64),
        );
        let base_rscale = (rscale + result_dweight - ln_base_dweight + 8).max(0);
        let num_rscale = (rscale + result_dweight - ln_num_dweight + 8).max(0);
        let ln_b = ln_dec(&b, base_rscale as u32);
        let ln_n = ln_dec(&n, num_rscale as u32);
        if ln_b.is_zero() {
            return Err(TypeError::division_by_zero());
        }
        ln_n.div(&ln_b, rscale as u32, true).into_num()
    }

    /// `power(x, y)` / `x ^ y`.
    pub fn power(&self, y: &Numeric) -> Result<Numeric> {
        if let Some(r) = power_special(self, y)? {
            return Ok(r);
        }
        let (b, e) = (dec(self), dec(y));
        if b.is_zero() && e.neg {
            return Err(TypeError::new(
                sqlstate::INVALID_ARGUMENT_FOR_POWER,
                "zero raised to a negative power is undefined",
            ));
        }
        if b.neg && !e.is_integral() {
            return Err(complex_result());
        }
        if e.is_integral() {
            if let Ok(n) = y.to_i64() {
                if let Ok(n) = i32::try_from(n) {
                    let rscale = clamp_scale(MIN_SIG_DIGITS.max(b.scale as i64));
                    return power_int(&b, n, rscale)?.into_num();
                }
            }
        }
        if b.is_zero() {
            return Ok(Numeric::from_parts(0, MIN_SIG_DIGITS as u16));
        }
        let negative = b.neg && e.trunc(0).mag.first().is_some_and(|l| l % 2 != 0);
        let b = b.abs();
        let ln_dweight = estimate_ln_dweight(&b);
        let local = (8 - ln_dweight).max(0);
        let ln_b = ln_dec(&b, local as u32);
        let val = ln_b.mul(&e).round(local).to_f64();
        if val.abs() > MAX_RESULT_SCALE * 3.01 {
            if val > 0.0 {
                return Err(overflow());
            }
            return Ok(Numeric::from_parts(0, MAX_DISPLAY_SCALE as u16));
        }
        let val = val * PG_LOG10_E;
        let rscale = clamp_scale(
            (MIN_SIG_DIGITS - val as i64)
                .max(b.scale as i64)
                .max(e.scale as i64),
        );
        let sig_digits = (rscale + val as i64).max(0);
        let local = (sig_digits - ln_dweight + 8).max(0);
        let ln_b = ln_dec(&b, local as u32);
        let prod = ln_b.mul(&e).round(local);
        let r = exp_dec(&prod, rscale as u32)?;
        if negative { r.neg() } else { r }.into_num()
    }
}

fn complex_result() -> TypeError {
    TypeError::new(
        sqlstate::INVALID_ARGUMENT_FOR_POWER,
        "a negative number raised to a non-integer power yields a complex result",
    )
}

fn check_log_arg(x: &Numeric) -> Result<()> {
    match x.signum() {
        0 if !x.is_nan() => Err(TypeError::new(
            sqlstate::INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of zero",
        )),
        -1 => Err(TypeError::new(
            sqlstate::INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of a negative number",
        )),
        _ => Ok(()),
    }
}

/// `numeric_power`'s rules for NaN and the infinities (POSIX `pow`).
fn power_special(x: &Numeric, y: &Numeric) -> Result<Option<Numeric>> {
    let one = Numeric::from_i64(1);
    if x.is_nan() || y.is_nan() {
        if x.is_nan() && y.is_finite() && y.is_zero() || y.is_nan() && *x == one && !x.is_nan() {
            return Ok(Some(Numeric::from_parts(1, 0)));
        }
        return Ok(Some(Numeric::nan()));
    }
    if x.is_finite() && y.is_finite() {
        return Ok(None);
    }
    // x ^ 0 = 1 and 1 ^ y = 1 even for infinities.
    if y.is_zero() || *x == one {
        return Ok(Some(Numeric::from_parts(1, 0)));
    }
    if !x.is_finite() && y.is_finite() {
        // (+-Inf) ^ y: 0 for y < 0; else Inf, negative for -Inf and odd integer y.
        if y.signum() < 0 {
            return Ok(Some(Numeric::zero()));
        }
        if x.signum() < 0 {
            let d = dec(y);
            if !d.is_integral() {
                return Err(complex_result());
            }
            let odd = d.trunc(0).mag.first().is_some_and(|l| l % 2 == 1);
            return Ok(Some(if odd {
                Numeric::neg_infinity()
            } else {
                Numeric::infinity()
            }));
        }
        return Ok(Some(Numeric::infinity()));
    }
    // y is infinite.
    if x.is_zero() {
        return if y.signum() < 0 {
            Err(TypeError::new(
                sqlstate::INVALID_ARGUMENT_FOR_POWER,
                "zero raised to a negative power is undefined",
            ))
        } else {
            Ok(Some(Numeric::zero()))
        };
    }
    let abs_cmp = x.abs().cmp(&one);
    let big = abs_cmp == std::cmp::Ordering::Greater;
    if x.is_finite() && x.signum() < 0 && abs_cmp == std::cmp::Ordering::Equal {
        return Ok(Some(Numeric::from_parts(1, 0)));
    }
    if !x.is_finite() {
        // (+-Inf) ^ (+-Inf)
        return Ok(Some(if y.signum() > 0 {
            Numeric::infinity()
        } else {
            Numeric::zero()
        }));
    }
    Ok(Some(if (y.signum() > 0) == big {
        Numeric::infinity()
    } else {
        Numeric::zero()
    }))
}

/// `estimate_ln_dweight`: the decimal weight of ln(x), roughly.
fn estimate_ln_dweight(x: &Dec) -> i64 {
    if x.neg || x.is_zero() {
        return 0;
    }
    let lo = Dec::from_small(9, 1);
    let hi = Dec::from_small(11, 1);
    if x.cmp(&lo).is_ge() && x.cmp(&hi).is_le() {
        // ln(1 + y) ~ y: the decimal weight of x - 1.
        return x.sub(&Dec::from_i128(1)).msd_exp().unwrap_or(0);
    }
    // From the first two base-10000 digits: x ~ digits * 10^dweight.
    let (weight, d) = x.nbase_digits(2);
    let (digits, dweight) = if d[1] != 0 || has_more_digits(x, weight) {
        (d[0] as f64 * 10000.0 + d[1] as f64, weight * 4 - 4)
    } else {
        (d[0] as f64, weight * 4)
    };
    let ln_var = digits.ln() + dweight as f64 * std::f64::consts::LN_10;
    ln_var.abs().log10() as i64
}

/// Whether x has a second base-10000 digit at all (PostgreSQL looks at
/// `ndigits > 1`, which counts stored digits, trailing zero groups stripped).
fn has_more_digits(x: &Dec, weight: i64) -> bool {
    // Digits below the first group are nonzero?
    let first_group_low = weight * 4; // decimal exponent of the group's units
    let drop = first_group_low + x.scale as i64;
    if drop <= 0 {
        return false;
    }
    !mag::low_digits_zero(&x.mag, drop as u32)
}

/// `floor(sqrt(n))` for an integer magnitude.
fn isqrt(n: &[u32]) -> mag::Mag {
    if n.is_empty() {
        return Vec::new();
    }
    // Start above the root: 10^ceil(digits / 2).
    let d = mag::digit_count(n);
    let mut x = mag::mul_pow10(&[1], d.div_ceil(2));
    loop {
        let (q, _) = mag::divmod(n, &x);
        let (y, _) = mag::divmod_small(&mag::add(&x, &q), 2);
        if mag::cmp(&y, &x).is_ge() {
            return x;
        }
        x = y;
    }
}

/// sqrt(x) rounded to `rscale`.
fn sqrt_dec(x: &Dec, rscale: u32) -> Dec {
    // r = floor(sqrt(x * 10^(2 (rscale + 1)))) carries one digit to round on.
    let e = 2 * (rscale as i64 + 1) - x.scale as i64;
    let n = if e >= 0 {
        mag::mul_pow10(&x.mag, e as u32)
    } else {
        mag::div_pow10(&x.mag, (-e) as u32).0
    };
    let r = Dec {
        neg: false,
        mag: isqrt(&n),
        scale: rscale + 1,
    };
    r.round(rscale as i64)
}

/// exp(x) rounded to `rscale`.
fn exp_dec(x: &Dec, rscale: u32) -> Result<Dec> {
    let val = x.to_f64();
    if val.abs() >= MAX_RESULT_SCALE * 3.0 {
        if val > 0.0 {
            return Err(overflow());
        }
        return Ok(Dec::zero(rscale));
    }
    if x.is_zero() {
        return Ok(Dec::from_i128(1).round(rscale as i64));
    }
    let neg = x.neg;
    let ax = x.clone().abs();
    // Halve until below 0.01: k halvings, then k squarings.
    let k = {
        let mut k = 0u32;
        let mut v = val.abs();
        while v >= 0.01 {
            v /= 2.0;
            k += 1;
        }
        k
    };
    let int_digits = (val.abs() * PG_LOG10_E).ceil() as i64 + 1;
    let guard = 12 + (k as i64 * 31 + 99) / 100;
    let ws = (rscale as i64 + guard + if neg { 0 } else { int_digits }).max(guard) as u32;
    // r = |x| / 2^k, exactly enough at scale ws + k.
    let mut r = ax.clone();
    for _ in 0..k {
        r = r.div(&Dec::from_i128(2), ws + 4, false);
    }
    // Taylor series: sum r^n / n!.
    let mut sum = Dec::from_i128(1);
    let mut term = Dec::from_i128(1);
    let mut n = 1;
    loop {
        term = term
            .mul(&r)
            .round(ws as i64 + 4)
            .div(&Dec::from_i128(n), ws + 4, false);
        if term.is_zero() {
            break;
        }
        sum = sum.add(&term);
        n += 1;
    }
    let mut y = sum.round(ws as i64);
    for _ in 0..k {
        y = y.mul(&y).round(ws as i64);
    }
    let y = if neg {
        Dec::from_i128(1).div(&y, rscale, true)
    } else {
        y.round(rscale as i64)
    };
    Ok(y)
}

/// ln(x) for x > 0, rounded to `rscale`.
fn ln_dec(x: &Dec, rscale: u32) -> Dec {
    let one = Dec::from_i128(1);
    if x.cmp(&one).is_eq() {
        return Dec::zero(rscale);
    }
    let lo = Dec::from_small(99, 2);
    let hi = Dec::from_small(101, 2);
    // Count the square roots needed to bring x into [0.99, 1.01].
    let mut k = 0u32;
    {
        let mut v = x.to_f64().ln().abs();
        if !v.is_finite() {
            v = (mag::digit_count(&x.mag) as f64 - x.scale as f64) * std::f64::consts::LN_10;
            v = v.abs();
        }
        while v > 0.005 {
            v /= 2.0;
            k += 1;
        }
    }
    let guard = 12 + (k as i64 * 31 + 99) / 100;
    let ws = rscale + guard as u32;
    let mut y = x.clone();
    for _ in 0..k {
        y = sqrt_dec(&y, ws + 2);
    }
    while y.cmp(&lo).is_lt() || y.cmp(&hi).is_gt() {
        y = sqrt_dec(&y, ws + 2);
        k += 1;
    }
    // ln(y) = 2 atanh(z), z = (y - 1) / (y + 1): 2 (z + z^3/3 + z^5/5 + ...).
    let z = y.sub(&one).div(&y.add(&one), ws + 4, true);
    let z2 = z.mul(&z).round(ws as i64 + 4);
    let mut power = z.clone();
    let mut sum = z;
    let mut n = 3;
    loop {
        power = power.mul(&z2).round(ws as i64 + 4);
        let term = power.div(&Dec::from_i128(n), ws + 4, false);
        if term.is_zero() {
            break;
        }
        sum = sum.add(&term);
        n += 2;
    }
    let two_k = Dec {
        neg: false,
        mag: pow2(k + 1),
        scale: 0,
    };
    sum.mul(&two_k).round(rscale as i64)
}

fn pow2(k: u32) -> mag::Mag {
    let mut m = vec![1u32];
    for _ in 0..k {
        m = mag::mul_small(&m, 2);
    }
    m
}

/// `power_var_int`: x^n for a 32-bit integer n, rounded to `rscale`.
fn power_int(x: &Dec, n: i32, rscale: i64) -> Result<Dec> {
    match n {
        0 => return Ok(Dec::from_i128(1).round(rscale)),
        1 => return Ok(x.round(rscale)),
        -1 => return Ok(Dec::from_i128(1).div(x, rscale as u32, true)),
        2 => return Ok(x.mul(x).round(rscale)),
        _ => {}
    }
    if x.is_zero() {
        if n < 0 {
            return Err(TypeError::division_by_zero());
        }
        return Ok(Dec::zero(rscale as u32));
    }
    // log10(result) ~ n * log10(|x|).
    let (weight, d) = x.nbase_digits(4);
    let mut f = 0f64;
    for &g in &d {
        f = f * 10000.0 + g as f64;
    }
    let p = weight * 4 - 12;
    let f = n as f64 * (f.log10() + p as f64);
    if f > 3.0 * i16::MAX as f64 * 4.0 {
        return Err(overflow());
    }
    if f + 1.0 < -(rscale as f64) || f + 1.0 < -(MAX_DISPLAY_SCALE as f64) {
        return Ok(Dec::zero(rscale as u32));
    }
    let sig_digits = 1 + rscale + f as i64 + ((n as f64).abs().ln() as i64) + 8;
    let mut mask = n.unsigned_abs();
    let mut base = x.clone();
    let mut result = if mask & 1 == 1 {
        x.clone()
    } else {
        Dec::from_i128(1)
    };
    while {
        mask >>= 1;
        mask > 0
    } {
        let w = nbase_weight(&base);
        let local = (sig_digits - 2 * w * 4).min(2 * base.scale as i64).max(0);
        base = base.mul(&base).round(local);
        if mask & 1 == 1 {
            let local = (sig_digits - (nbase_weight(&base) + nbase_weight(&result)) * 4)
                .min(base.scale as i64 + result.scale as i64)
                .max(0);
            result = result.mul(&base).round(local);
        }
        if nbase_weight(&base) > i16::MAX as i64 || nbase_weight(&result) > i16::MAX as i64 {
            if n > 0 {
                return Err(overflow());
            }
            return Ok(Dec::zero(rscale as u32));
        }
    }
    Ok(if n < 0 {
        Dec::from_i128(1).div(&result, rscale as u32, true)
    } else {
        result.round(rscale)
    })
}
