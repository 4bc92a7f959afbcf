//! Numeric conversions: integers, floats and the `numeric(p, s)` typmod.
//!
//! - To integers: round half away from zero, then range-check
//!   (`integer out of range`, 22003); NaN and the infinities cannot convert
//!   (`cannot convert NaN to integer`, 0A000).
//! - From floats: PostgreSQL 15 prints the float with `%.15g` (`%.6g` for
//!   `real`) and reads that text, so `0.1::float8::numeric` is `0.1` and
//!   `(1/3::float8)::numeric` has 15 significant digits.
//! - To floats: through the numeric's text and `float8in`/`float4in`
//!   (correctly rounded); a value outside the float's range is the float
//!   input's error quoting the numeric's digits.
//! - Typmod (`apply_typmod`): round to the scale (which may be negative:
//!   `numeric(2,-3)` rounds to thousands), then at most `precision - scale`
//!   digits may remain before the point, else `numeric field overflow`
//!   with PostgreSQL's DETAIL. NaN passes; infinities cannot be stored.

use super::dec::Dec;
use super::{Numeric, Repr};
use crate::error::{sqlstate, Result, TypeError};

/// The `(precision, scale)` of a `numeric(p, s)` column.
pub type NumericTypmod = (u16, i16);

/// `numeric field overflow` with its DETAIL for a value needing more than
/// `precision - scale` digits before the point.
pub fn typmod_error(precision: u16, scale: i16) -> TypeError {
    let maxdigits = precision as i32 - scale as i32;
    let bound = if maxdigits > 0 {
        format!("10^{maxdigits}")
    } else {
        "1".to_string()
    };
    TypeError::out_of_range("numeric field overflow").with_detail(format!(
        "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
    ))
}

fn cannot_convert(what: &str, ty: &str) -> TypeError {
    TypeError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("cannot convert {what} to {ty}"),
    )
}

impl Numeric {
    /// Rounds to `scale` digits after the point (half away from zero); a
    /// negative scale rounds before the point (`round(x, s)`'s value; the
    /// display scale becomes `max(scale, 0)`).
    pub fn round_to(&self, scale: i64) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        if let Some((u, s)) = self.as_small() {
            if scale >= 0 && scale <= s as i64 {
                let f = super::pow10_i128((s as i64 - scale) as u32);
                if let Some(f) = f {
                    let (q, r) = (u / f, u % f);
                    let adj = if r.unsigned_abs() >= (f / 2 + f % 2) as u128 && f > 1 {
                        u.signum()
                    } else {
                        0
                    };
                    return Ok(Numeric::from_parts(q + adj, scale as u16));
                }
            }
        }
        let scale = scale.clamp(
            -(super::MAX_INT_DIGITS as i64) - 1,
            super::MAX_SCALE as i64 + 1,
        );
        Dec::from_num(self).round(scale).into_num()
    }

    /// Truncates toward zero to `scale` digits (like [`round_to`](Self::round_to)).
    pub fn trunc_to(&self, scale: i64) -> Result<Numeric> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let scale = scale.clamp(
            -(super::MAX_INT_DIGITS as i64) - 1,
            super::MAX_SCALE as i64 + 1,
        );
        Dec::from_num(self).trunc(scale).into_num()
    }

    /// `numeric(precision, scale)`'s coercion (`apply_typmod`).
    pub fn apply_typmod(&self, (precision, scale): NumericTypmod) -> Result<Numeric> {
        match self.0 {
            Repr::NaN => return Ok(self.clone()),
            Repr::PosInf | Repr::NegInf => {
                return Err(
                    TypeError::out_of_range("numeric field overflow").with_detail(format!(
                "A field with precision {precision}, scale {scale} cannot hold an infinite value."
            )),
                )
            }
            _ => {}
        }
        let r = self.round_to(scale as i64)?;
        let maxdigits = precision as i64 - scale as i64;
        let int_digits = Dec::from_num(&r).msd_exp().map_or(0, |e| (e + 1).max(0));
        if int_digits > maxdigits {
            return Err(typmod_error(precision, scale));
        }
        Ok(r)
    }

    fn to_int(&self, ty: &str, min: i128, max: i128) -> Result<i128> {
        match self.0 {
            Repr::NaN => return Err(cannot_convert("NaN", ty)),
            Repr::PosInf | Repr::NegInf => return Err(cannot_convert("infinity", ty)),
            _ => {}
        }
        let out_of_range = || TypeError::out_of_range(format!("{ty} out of range"));
        let r = self.round_to(0).map_err(|_| out_of_range())?;
        match r.as_small() {
            Some((u, _)) if (min..=max).contains(&u) => Ok(u),
            _ => Err(out_of_range()),
        }
    }

    /// `numeric::smallint`.
    pub fn to_i16(&self) -> Result<i16> {
        self.to_int("smallint", i16::MIN as i128, i16::MAX as i128)
            .map(|v| v as i16)
    }

    /// `numeric::integer`.
    pub fn to_i32(&self) -> Result<i32> {
        self.to_int("integer", i32::MIN as i128, i32::MAX as i128)
            .map(|v| v as i32)
    }

    /// `numeric::bigint`.
    pub fn to_i64(&self) -> Result<i64> {
        self.to_int("bigint", i64::MIN as i128, i64::MAX as i128)
            .map(|v| v as i64)
    }

    /// `double precision::numeric` (`%.15g`, then numeric input).
    pub fn from_f64(v: f64) -> Numeric {
        Numeric::from_float_digits(v, 15)
    }

    /// `real::numeric` (`%.6g`).
    pub fn from_f32(v: f32) -> Numeric {
        Numeric::from_float_digits(v as f64, 6)
    }

    fn from_float_digits(v: f64, digits: usize) -> Numeric {
        if v.is_nan() {
            return Numeric::nan();
        }
        if v.is_infinite() {
            return if v > 0.0 {
                Numeric::infinity()
            } else {
                Numeric::neg_infinity()
            };
        }
        // `{:.N e}` rounds to N+1 significant digits like `%g` does; the
        // trailing zeros `%g` strips are stripped here too.
        let s = format!("{:.*e}", digits - 1, v);
        let (mant, exp) = s.split_once('e').expect("exponent form");
        let mant = if mant.contains('.') {
            mant.trim_end_matches('0').trim_end_matches('.')
        } else {
            mant
        };
        Numeric::from_text(&format!("{mant}e{exp}")).unwrap_or_default()
    }

    /// `numeric::double precision`.
    pub fn to_f64(&self) -> Result<f64> {
        match self.0 {
            Repr::NaN => return Ok(f64::NAN),
            Repr::PosInf => return Ok(f64::INFINITY),
            Repr::NegInf => return Ok(f64::NEG_INFINITY),
            Repr::Small { unscaled, scale: 0 } if unscaled.unsigned_abs() < 1 << 53 => {
                return Ok(unscaled as f64)
            }
            _ => {}
        }
        crate::float::parse_float8(&self.to_string())
    }

    /// `numeric::real`.
    pub fn to_f32(&self) -> Result<f32> {
        match self.0 {
            Repr::NaN => return Ok(f32::NAN),
            Repr::PosInf => return Ok(f32::INFINITY),
            Repr::NegInf => return Ok(f32::NEG_INFINITY),
            _ => {}
        }
        crate::float::parse_float4(&self.to_string())
    }

    /// A close `f64` without range errors (huge values become infinite):
    /// for estimates such as PostgreSQL's `numericvar_to_double_no_overflow`.
    pub fn approx_f64(&self) -> f64 {
        match self.0 {
            Repr::NaN => f64::NAN,
            Repr::PosInf => f64::INFINITY,
            Repr::NegInf => f64::NEG_INFINITY,
            _ => Dec::from_num(self).to_f64(),
        }
    }
}
