//! Numeric operators: `+ - * / %` and integer division, with PostgreSQL 15's
//! result scales and special-value rules.
//!
//! Each operator first tries the 128-bit fast path (aligned `i128`
//! arithmetic, checked), and on overflow redoes the operation exactly in
//! [`Dec`]. The special values follow `numeric.c`: NaN in gives NaN out;
//! `Inf - Inf`, `Inf * 0`, `Inf / Inf` and `Inf % x` are NaN; `x / Inf` is
//! 0; `x % Inf` is x; division by zero is an error even for `Inf / 0`,
//! but `NaN / 0` is NaN.

use super::dec::Dec;
use super::{pow10_i128, Numeric, Repr, MAX_DISPLAY_SCALE, MAX_SCALE, MIN_SIG_DIGITS};
use crate::error::{Result, TypeError};

/// Brings two small values to their common scale, if 128 bits hold both.
#[inline]
fn aligned(a: i128, sa: u16, b: i128, sb: u16) -> Option<(i128, i128, u16)> {
    if sa == sb {
        // The common case (two values of one `numeric(p, s)` column, or a
        // running sum of them): nothing to rescale.
        return Some((a, b, sa));
    }
    let s = sa.max(sb);
    let x = a.checked_mul(pow10_i128((s - sa) as u32)?)?;
    let y = b.checked_mul(pow10_i128((s - sb) as u32)?)?;
    Some((x, y, s))
}

/// The exact product of two small unscaled values, if it fits 128 bits.
/// Two values that fit 64 bits (every `numeric(p, s)` with p <= 18, and
/// most products of two such) multiply in one widening multiply that
/// cannot overflow; only wider operands need the checked 128-bit multiply.
#[inline]
pub fn unscaled_product(a: i128, b: i128) -> Option<i128> {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) => Some(x as i128 * y as i128),
        _ => a.checked_mul(b),
    }
}

// The operators below are split in two: an inlined fast path for two
// small values whose result fits 128 bits (what a vector loop over
// `numeric(p, s)` columns runs on every row), and an out-of-line rest for
// everything else (special values, rescaling overflow, the big form), so
// the loops stay small and no `Result` of the slow path is built per row.
impl Numeric {
    /// `self ± o` when both are small and the result fits 128 bits.
    #[inline]
    fn small_add_sub(&self, o: &Numeric, sub: bool) -> Option<Numeric> {
        let (Some((a, sa)), Some((b, sb))) = (self.as_small(), o.as_small()) else {
            return None;
        };
        let (x, y, s) = aligned(a, sa, b, sb)?;
        let r = if sub {
            x.checked_sub(y)
        } else {
            x.checked_add(y)
        }?;
        Some(Numeric::from_parts(r, s))
    }

    #[inline]
    pub fn checked_add(&self, o: &Numeric) -> Result<Numeric> {
        match self.small_add_sub(o, false) {
            Some(r) => Ok(r),
            None => self.add_slow(o),
        }
    }

    /// `self += o`, in place when both are small with one scale (a
    /// running sum of a `numeric(p, s)` column); on error `self` is kept.
    #[inline]
    pub fn checked_add_assign(&mut self, o: &Numeric) -> Result<()> {
        if let (
            Repr::Small {
                unscaled: a,
                scale: sa,
            },
            Repr::Small {
                unscaled: b,
                scale: sb,
            },
        ) = (&mut self.0, &o.0)
        {
            if *sa == *sb {
                if let Some(r) = a.checked_add(*b) {
                    *a = r;
                    return Ok(());
                }
            }
        }
        *self = self.add_unaligned(o)?;
        Ok(())
    }

    /// [`Numeric::checked_add`] out of line, for the in-place sum's rare
    /// case of two scales.
    #[cold]
    #[inline(never)]
    fn add_unaligned(&self, o: &Numeric) -> Result<Numeric> {
        self.checked_add(o)
    }

    #[cold]
    #[inline(never)]
    fn add_slow(&self, o: &Numeric) -> Result<Numeric> {
        match (&self.0, &o.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => Ok(Numeric::nan()),
            (Repr::PosInf, Repr::NegInf) | (Repr::NegInf, Repr::PosInf) => Ok(Numeric::nan()),
            (Repr::PosInf | Repr::NegInf, _) => Ok(self.clone()),
            (_, Repr::PosInf | Repr::NegInf) => Ok(o.clone()),
            _ => Dec::from_num(self).add(&Dec::from_num(o)).into_num(),
        }
    }

    #[inline]
    pub fn checked_sub(&self, o: &Numeric) -> Result<Numeric> {
        match self.small_add_sub(o, true) {
            Some(r) => Ok(r),
            None => self.sub_slow(o),
        }
    }

    #[cold]
    #[inline(never)]
    fn sub_slow(&self, o: &Numeric) -> Result<Numeric> {
        self.add_slow(&o.negated())
    }

    #[inline]
    pub fn checked_mul(&self, o: &Numeric) -> Result<Numeric> {
        if let (Some((a, sa)), Some((b, sb))) = (self.as_small(), o.as_small()) {
            let s = sa as u32 + sb as u32;
            if s <= MAX_SCALE {
                if let Some(r) = unscaled_product(a, b) {
                    return Ok(Numeric::from_parts(r, s as u16));
                }
            }
        }
        self.mul_slow(o)
    }

    #[cold]
    #[inline(never)]
    fn mul_slow(&self, o: &Numeric) -> Result<Numeric> {
        match (&self.0, &o.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => Ok(Numeric::nan()),
            (Repr::PosInf | Repr::NegInf, _) | (_, Repr::PosInf | Repr::NegInf) => {
                Ok(match self.signum() * o.signum() {
                    0 => Numeric::nan(),
                    1 => Numeric::infinity(),
                    _ => Numeric::neg_infinity(),
                })
            }
            _ => {
                let p = Dec::from_num(self).mul(&Dec::from_num(o));
                if p.scale > MAX_SCALE {
                    p.round(MAX_SCALE as i64).into_num()
                } else {
                    p.into_num()
                }
            }
        }
    }

    /// Division with `select_div_scale`'s result scale.
    pub fn checked_div(&self, o: &Numeric) -> Result<Numeric> {
        if let Some(r) = self.special_div(o)? {
            return Ok(r);
        }
        let rscale = select_div_scale(self, o);
        if let (Some((a, sa)), Some((b, sb))) = (self.as_small(), o.as_small()) {
            if let Some(q) = div_small(a, sa, b, sb, rscale) {
                return Ok(q);
            }
        }
        Dec::from_num(self)
            .div(&Dec::from_num(o), rscale as u32, true)
            .into_num()
    }

    /// The special-value cases of `/`, `div` and `%` (`Ok(None)` when both
    /// are finite and the divisor is not zero).
    fn special_div(&self, o: &Numeric) -> Result<Option<Numeric>> {
        match (&self.0, &o.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => Ok(Some(Numeric::nan())),
            (_, _) if o.is_zero() => Err(TypeError::division_by_zero()),
            (Repr::PosInf | Repr::NegInf, Repr::PosInf | Repr::NegInf) => Ok(Some(Numeric::nan())),
            (Repr::PosInf | Repr::NegInf, _) => Ok(Some(if self.signum() * o.signum() > 0 {
                Numeric::infinity()
            } else {
                Numeric::neg_infinity()
            })),
            (_, Repr::PosInf | Repr::NegInf) => Ok(Some(Numeric::zero())),
            _ => Ok(None),
        }
    }

    /// `%`: the remainder of truncating division, with the dividend's sign
    /// and the larger input scale (`mod_var`).
    pub fn checked_rem(&self, o: &Numeric) -> Result<Numeric> {
        match (&self.0, &o.0) {
            (Repr::NaN, _) | (_, Repr::NaN) => return Ok(Numeric::nan()),
            _ if o.is_zero() => return Err(TypeError::division_by_zero()),
            (Repr::PosInf | Repr::NegInf, _) => return Ok(Numeric::nan()),
            (_, Repr::PosInf | Repr::NegInf) => return Ok(self.clone()),
            _ => {}
        }
        if let (Some((a, sa)), Some((b, sb))) = (self.as_small(), o.as_small()) {
            if let Some((x, y, s)) = aligned(a, sa, b, sb) {
                if let Some(r) = x.checked_rem(y) {
                    return Ok(Numeric::from_parts(r, s));
                }
            }
        }
        let (a, b) = (Dec::from_num(self), Dec::from_num(o));
        let q = a.div(&b, 0, false);
        a.sub(&q.mul(&b)).into_num()
    }

    /// `div(x, y)`: the quotient truncated toward zero, scale 0.
    pub fn div_trunc(&self, o: &Numeric) -> Result<Numeric> {
        if let Some(r) = self.special_div(o)? {
            return Ok(r);
        }
        Dec::from_num(self)
            .div(&Dec::from_num(o), 0, false)
            .into_num()
    }
}

/// PostgreSQL's `select_div_scale`: enough scale for 16 significant digits
/// of the quotient (estimated from the base-10000 weights and leading digits
/// of the inputs), at least either input's scale, at most 1000.
pub(crate) fn select_div_scale(a: &Numeric, b: &Numeric) -> i64 {
    let (w1, f1) = weight_and_first(a);
    let (w2, f2) = weight_and_first(b);
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    (MIN_SIG_DIGITS - qweight * 4)
        .max(a.scale() as i64)
        .max(b.scale() as i64)
        .clamp(0, MAX_DISPLAY_SCALE)
}

/// Base-10000 weight and leading base-10000 digit of a finite value.
fn weight_and_first(n: &Numeric) -> (i64, u32) {
    if let Some((u, s)) = n.as_small() {
        let mut v = u.unsigned_abs();
        if v == 0 {
            return (0, 0);
        }
        // Align the digit groups to multiples of four decimal places.
        let pad = (4 - (s as i64 % 4)) % 4;
        let frac_groups = (s as i64 + pad) / 4;
        if let Some(p) = 10u128
            .checked_pow(pad as u32)
            .and_then(|p| v.checked_mul(p))
        {
            v = p;
            let mut groups = 0;
            let mut first = 0;
            while v > 0 {
                first = (v % 10000) as u32;
                v /= 10000;
                groups += 1;
            }
            return (groups - 1 - frac_groups, first);
        }
    }
    let (w, d) = Dec::from_num(n).nbase_digits(1);
    (w, d.first().copied().unwrap_or(0))
}

/// `a / b` rounded to `rscale` in 128 bits, or `None` if that overflows.
fn div_small(a: i128, sa: u16, b: i128, sb: u16, rscale: i64) -> Option<Numeric> {
    let shift = rscale + sb as i64 - sa as i64;
    let neg = (a < 0) != (b < 0);
    let (mut num, mut den) = (a.unsigned_abs(), b.unsigned_abs());
    if shift < 0 {
        den = den.checked_mul(10u128.checked_pow((-shift) as u32)?)?;
    }
    // Long division one decimal digit at a time, so nothing overflows early.
    let mut q = num / den;
    let mut r = num % den;
    for _ in 0..shift.max(0) {
        num = r.checked_mul(10)?;
        q = q.checked_mul(10)?.checked_add(num / den)?;
        r = num % den;
    }
    if r.checked_mul(2)? >= den {
        q = q.checked_add(1)?;
    }
    let q = i128::try_from(q).ok()?;
    Some(Numeric::from_parts(if neg { -q } else { q }, rscale as u16))
}
