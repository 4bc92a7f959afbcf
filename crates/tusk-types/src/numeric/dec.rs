//! `Dec`: the exact working form of numeric's slow paths.
//!
//! A `Dec` is `±mag / 10^scale` with a base-10^9 magnitude and no limits:
//! intermediate results of the math functions may carry thousands of guard
//! digits. Every operation is exact except the explicitly rounding ones
//! ([`Dec::round`], [`Dec::div`]), which round half away from zero as
//! PostgreSQL's `round_var` does. [`Dec::into_num`] applies PostgreSQL's
//! limits and stores the result in the canonical [`Numeric`] form.

use super::mag::{self, Mag};
use super::{Big, Numeric, Repr, MAX_INT_DIGITS, MAX_SCALE};
use crate::error::{Result, TypeError};
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dec {
    pub neg: bool,
    pub mag: Mag,
    pub scale: u32,
}

pub(crate) fn overflow() -> TypeError {
    TypeError::out_of_range("value overflows numeric format")
}

impl Dec {
    pub fn zero(scale: u32) -> Dec {
        Dec {
            neg: false,
            mag: Vec::new(),
            scale,
        }
    }

    pub fn from_i128(v: i128) -> Dec {
        Dec::from_small(v, 0)
    }

    pub fn from_small(unscaled: i128, scale: u32) -> Dec {
        Dec {
            neg: unscaled < 0,
            mag: mag::from_u128(unscaled.unsigned_abs()),
            scale,
        }
    }

    /// The value of a finite numeric.
    pub fn from_num(n: &Numeric) -> Dec {
        match &n.0 {
            Repr::Small { unscaled, scale } => Dec::from_small(*unscaled, *scale as u32),
            Repr::Big(b) => Dec {
                neg: b.neg,
                mag: b.mag.clone(),
                scale: b.scale as u32,
            },
            _ => unreachable!("Dec::from_num of a special value"),
        }
    }

    pub fn is_zero(&self) -> bool {
        self.mag.is_empty()
    }

    pub fn neg(mut self) -> Dec {
        self.neg = !self.neg && !self.mag.is_empty();
        self
    }

    pub fn abs(mut self) -> Dec {
        self.neg = false;
        self
    }

    /// Checks PostgreSQL's limits and stores the value.
    pub fn into_num(self) -> Result<Numeric> {
        if self.scale > MAX_SCALE {
            return Err(overflow());
        }
        let digits = mag::digit_count(&self.mag);
        if digits > self.scale && digits - self.scale > MAX_INT_DIGITS {
            return Err(overflow());
        }
        Ok(self.into_num_unchecked())
    }

    /// Stores a value already known to be within the limits.
    pub fn into_num_unchecked(self) -> Numeric {
        let scale = self.scale as u16;
        if let Some(m) = mag::to_u128(&self.mag) {
            if m <= i128::MAX as u128 {
                let u = m as i128;
                return Numeric::from_parts(if self.neg { -u } else { u }, scale);
            }
        }
        Numeric(Repr::Big(Box::new(Big {
            neg: self.neg,
            mag: self.mag,
            scale,
        })))
    }

    /// The magnitude brought to scale `s >= self.scale`.
    fn mag_at(&self, s: u32) -> Mag {
        mag::mul_pow10(&self.mag, s - self.scale)
    }

    /// Exact sum at the larger scale.
    pub fn add(&self, o: &Dec) -> Dec {
        let s = self.scale.max(o.scale);
        let (a, b) = (self.mag_at(s), o.mag_at(s));
        if self.neg == o.neg {
            return Dec {
                neg: self.neg && !(a.is_empty() && b.is_empty()),
                mag: mag::add(&a, &b),
                scale: s,
            };
        }
        match mag::cmp(&a, &b) {
            Ordering::Less => Dec {
                neg: o.neg,
                mag: mag::sub(&b, &a),
                scale: s,
            },
            _ => {
                let m = mag::sub(&a, &b);
                Dec {
                    neg: self.neg && !m.is_empty(),
                    mag: m,
                    scale: s,
                }
            }
        }
    }

    pub fn sub(&self, o: &Dec) -> Dec {
        self.add(&o.clone().neg())
    }

    /// Exact product at the sum of the scales.
    pub fn mul(&self, o: &Dec) -> Dec {
        let m = mag::mul(&self.mag, &o.mag);
        Dec {
            neg: (self.neg != o.neg) && !m.is_empty(),
            mag: m,
            scale: self.scale + o.scale,
        }
    }

    /// Rounds (half away from zero) to `s` digits after the point; a
    /// negative `s` rounds to a power of ten and leaves scale 0.
    pub fn round(&self, s: i64) -> Dec {
        self.round_mode(s, true)
    }

    /// Truncates toward zero to `s` digits after the point.
    pub fn trunc(&self, s: i64) -> Dec {
        self.round_mode(s, false)
    }

    fn round_mode(&self, s: i64, round: bool) -> Dec {
        let cur = self.scale as i64;
        if s >= cur {
            return Dec {
                neg: self.neg,
                mag: self.mag_at(s as u32),
                scale: s as u32,
            };
        }
        let drop = (cur - s) as u64;
        let (mut m, half) = if drop > mag::digit_count(&self.mag) as u64 + 1 {
            (Vec::new(), false)
        } else {
            mag::div_pow10(&self.mag, drop as u32)
        };
        if round && half {
            m = mag::add(&m, &[1]);
        }
        let (m, scale) = if s < 0 {
            (mag::mul_pow10(&m, (-s) as u32), 0)
        } else {
            (m, s as u32)
        };
        Dec {
            neg: self.neg && !m.is_empty(),
            mag: m,
            scale,
        }
    }

    /// `self / o` to `rscale` digits, rounded half away from zero when
    /// `round`, else truncated; `o` must not be zero.
    pub fn div(&self, o: &Dec, rscale: u32, round: bool) -> Dec {
        // q = (a / 10^sa) / (b / 10^sb) * 10^(rscale + 1), computed as
        // a * 10^(rscale + 1 + sb - sa) / b with one extra digit to round on.
        let extra = u32::from(round);
        let shift = rscale as i64 + extra as i64 + o.scale as i64 - self.scale as i64;
        let (num, den) = if shift >= 0 {
            (mag::mul_pow10(&self.mag, shift as u32), o.mag.clone())
        } else {
            (self.mag.clone(), mag::mul_pow10(&o.mag, (-shift) as u32))
        };
        let (q, _) = mag::divmod(&num, &den);
        let (mut q, half) = if round {
            mag::div_pow10(&q, 1)
        } else {
            (q, false)
        };
        if half {
            q = mag::add(&q, &[1]);
        }
        Dec {
            neg: (self.neg != o.neg) && !q.is_empty(),
            mag: q,
            scale: rscale,
        }
    }

    /// Exact comparison.
    pub fn cmp(&self, o: &Dec) -> Ordering {
        let sign = |d: &Dec| match (d.mag.is_empty(), d.neg) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (sa, sb) = (sign(self), sign(o));
        if sa != sb || sa == 0 {
            return sa.cmp(&sb);
        }
        let s = self.scale.max(o.scale);
        let c = mag::cmp(&self.mag_at(s), &o.mag_at(s));
        if sa < 0 {
            c.reverse()
        } else {
            c
        }
    }

    /// Decimal exponent of the leading digit (`None` for zero): 2 for 123.4,
    /// -3 for 0.001.
    pub fn msd_exp(&self) -> Option<i64> {
        let d = mag::digit_count(&self.mag);
        (d > 0).then(|| d as i64 - 1 - self.scale as i64)
    }

    /// PostgreSQL's base-10000 `weight` of the value and its leading
    /// base-10000 digits (`count` of them, the rest zero): the inputs of
    /// its scale heuristics. Zero has weight 0 and no digits.
    pub fn nbase_digits(&self, count: usize) -> (i64, Vec<u32>) {
        let Some(e) = self.msd_exp() else {
            return (0, Vec::new());
        };
        let weight = e.div_euclid(4);
        // Shift so that the units of the lowest wanted group land at 10^0.
        let low = (weight - count as i64 + 1) * 4;
        let scaled = low + self.scale as i64;
        let m = if scaled >= 0 {
            mag::div_pow10(&self.mag, scaled as u32).0
        } else {
            mag::mul_pow10(&self.mag, (-scaled) as u32)
        };
        let mut out = vec![0u32; count];
        let mut rest = m;
        for slot in out.iter_mut().rev() {
            let (q, r) = mag::divmod_small(&rest, 10_000);
            *slot = r;
            rest = q;
        }
        (weight, out)
    }

    /// The nearest `f64` (through text, as PostgreSQL converts).
    pub fn to_f64(&self) -> f64 {
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        mag::write_digits(&self.mag, &mut s);
        s.push_str(&format!("e-{}", self.scale));
        s.parse().unwrap_or(0.0)
    }

    /// Whether the value is an integer.
    pub fn is_integral(&self) -> bool {
        mag::low_digits_zero(&self.mag, self.scale)
    }
}
