//! `numeric`: exact decimals of PostgreSQL's size, fast when they are small.
//!
//! # Representation
//!
//! A finite numeric is `±magnitude / 10^scale`, where the scale is the
//! *display scale* (PostgreSQL's `dscale`): the digits printed after the
//! point, so `1.50` and `1.5` are distinct values that compare equal. Three
//! forms hold it:
//!
//! - **small**: a 128-bit unscaled integer and the scale, for every value
//!   whose unscaled integer fits in `i128` (38 digits). Arithmetic on two
//!   small values runs in 128-bit integers and allocates nothing; this is the
//!   form of every value a `decimal(15,2)` column or an `avg(bigint)` holds.
//! - **big**: sign, a base-10^9 magnitude of any length ([`mag`]) and the
//!   scale, boxed so that a numeric stays two words plus a tag. A result
//!   that does not fit 128 bits is computed here, exactly, and a big result
//!   that fits is stored small again: the form is canonical, so a value has
//!   one representation per scale.
//! - `NaN`, `Infinity`, `-Infinity`, as PostgreSQL 15 has them.
//!
//! # Limits and rules (PostgreSQL 15's `numeric.c`)
//!
//! At most 131,072 digits before the point and 16,383 after; beyond that
//! `value overflows numeric format` (22003). Result scales: `+` `-` the
//! larger input scale; `*` the sum (rounded to 16,383 when larger); `/` the
//! scale `select_div_scale` picks (at least 16 significant digits, at least
//! either input's scale, at most 1,000), rounding half away from zero; `%`
//! the larger input scale, with the sign of the dividend. Comparison is
//! exact for every pair of values; NaN equals NaN and sorts above
//! `Infinity`, which sorts above every finite value. Values that compare
//! equal hash alike (trailing fractional zeros are stripped before
//! hashing).
//!
//! Submodules: [`mag`] (unsigned big integers), `dec` (the exact working
//! form of the slow paths), `arith` (operators), `text` (input and output),
//! `convert` (integers, floats, typmods), `math` (functions), `to_char`
//! (template formatting).
//!
//! The expected values of the tests come from PostgreSQL 15:
//! `testdata/numeric_pg15.tsv` (2,165 operations, conversions, inputs and
//! typmods, recorded by `testdata/gen_numeric.py`).

mod arith;
mod convert;
mod dec;
pub mod mag;
mod math;
mod text;
mod to_char;

use dec::Dec;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

pub use arith::unscaled_product;
pub use convert::{typmod_error, NumericTypmod};

/// Most digits before the decimal point (PostgreSQL's `NUMERIC_WEIGHT_MAX`
/// of 32,767 base-10000 digits, plus one).
pub const MAX_INT_DIGITS: u32 = 131_072;
/// Most digits after the decimal point (`NUMERIC_DSCALE_MAX`).
pub const MAX_SCALE: u32 = 16_383;
/// PostgreSQL's `NUMERIC_MIN_SIG_DIGITS`: divisions and functions keep at
/// least this many significant digits.
const MIN_SIG_DIGITS: i64 = 16;
/// `NUMERIC_MAX_DISPLAY_SCALE`: the largest scale a division or function picks.
const MAX_DISPLAY_SCALE: i64 = 1000;

#[derive(Debug, Clone)]
pub struct Numeric(Repr);

#[derive(Debug, Clone)]
enum Repr {
    Small { unscaled: i128, scale: u16 },
    Big(Box<Big>),
    NaN,
    PosInf,
    NegInf,
}

/// A finite value whose unscaled integer does not fit `i128`.
#[derive(Debug, Clone)]
struct Big {
    neg: bool,
    mag: mag::Mag,
    scale: u16,
}

const POW10_I128: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// 10^n if it fits `i128` (n <= 38).
#[inline]
pub(crate) fn pow10_i128(n: u32) -> Option<i128> {
    POW10_I128.get(n as usize).copied()
}

impl Default for Numeric {
    fn default() -> Self {
        Numeric::zero()
    }
}

impl Numeric {
    pub const fn zero() -> Numeric {
        Numeric(Repr::Small {
            unscaled: 0,
            scale: 0,
        })
    }

    pub const fn from_i64(v: i64) -> Numeric {
        Numeric(Repr::Small {
            unscaled: v as i128,
            scale: 0,
        })
    }

    pub const fn from_i128(v: i128) -> Numeric {
        Numeric(Repr::Small {
            unscaled: v,
            scale: 0,
        })
    }

    /// `unscaled / 10^scale`. The caller keeps `scale` within [`MAX_SCALE`].
    pub const fn from_parts(unscaled: i128, scale: u16) -> Numeric {
        Numeric(Repr::Small { unscaled, scale })
    }

    pub const fn nan() -> Numeric {
        Numeric(Repr::NaN)
    }

    pub const fn infinity() -> Numeric {
        Numeric(Repr::PosInf)
    }

    pub const fn neg_infinity() -> Numeric {
        Numeric(Repr::NegInf)
    }

    pub fn is_nan(&self) -> bool {
        matches!(self.0, Repr::NaN)
    }

    pub fn is_infinite(&self) -> bool {
        matches!(self.0, Repr::PosInf | Repr::NegInf)
    }

    pub fn is_finite(&self) -> bool {
        matches!(self.0, Repr::Small { .. } | Repr::Big(_))
    }

    /// The 128-bit form `(unscaled, scale)`, when the value has one.
    #[inline]
    pub fn as_small(&self) -> Option<(i128, u16)> {
        match self.0 {
            Repr::Small { unscaled, scale } => Some((unscaled, scale)),
            _ => None,
        }
    }

    /// The display scale (0 for NaN and the infinities).
    pub fn scale(&self) -> u16 {
        match &self.0 {
            Repr::Small { scale, .. } => *scale,
            Repr::Big(b) => b.scale,
            _ => 0,
        }
    }

    /// -1, 0 or 1; NaN counts as 0 here (`sign(NaN)` is NaN, see `math`).
    pub fn signum(&self) -> i32 {
        match &self.0 {
            Repr::Small { unscaled, .. } => unscaled.signum() as i32,
            Repr::Big(b) => {
                if b.neg {
                    -1
                } else {
                    1
                }
            }
            Repr::PosInf => 1,
            Repr::NegInf => -1,
            Repr::NaN => 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self.0, Repr::Small { unscaled: 0, .. })
    }

    pub fn negated(&self) -> Numeric {
        Numeric(match &self.0 {
            Repr::Small { unscaled, scale } => match unscaled.checked_neg() {
                Some(u) => Repr::Small {
                    unscaled: u,
                    scale: *scale,
                },
                None => {
                    return Dec::from_small(*unscaled, *scale as u32)
                        .neg()
                        .into_num_unchecked()
                }
            },
            Repr::Big(b) => Repr::Big(Box::new(Big {
                neg: !b.neg,
                mag: b.mag.clone(),
                scale: b.scale,
            })),
            Repr::NaN => Repr::NaN,
            Repr::PosInf => Repr::NegInf,
            Repr::NegInf => Repr::PosInf,
        })
    }

    pub fn abs(&self) -> Numeric {
        if self.signum() < 0 {
            self.negated()
        } else {
            self.clone()
        }
    }

    /// Rank for ordering the special values: -Infinity < finite < Infinity < NaN.
    fn class(&self) -> u8 {
        match self.0 {
            Repr::NegInf => 0,
            Repr::Small { .. } | Repr::Big(_) => 1,
            Repr::PosInf => 2,
            Repr::NaN => 3,
        }
    }

    /// The value with trailing fractional zeros removed: the form equal
    /// values share, for hashing and hash keys.
    pub fn normalized(&self) -> Numeric {
        match &self.0 {
            Repr::Small { unscaled, scale } => {
                let (mut u, mut s) = (*unscaled, *scale);
                if u == 0 {
                    return Numeric::zero();
                }
                while s > 0 && u % 10 == 0 {
                    u /= 10;
                    s -= 1;
                }
                Numeric::from_parts(u, s)
            }
            Repr::Big(b) => {
                let tz = mag::trailing_zeros(&b.mag).min(b.scale as u32);
                let (m, _) = mag::div_pow10(&b.mag, tz);
                Dec {
                    neg: b.neg,
                    mag: m,
                    scale: b.scale as u32 - tz,
                }
                .into_num_unchecked()
            }
            _ => self.clone(),
        }
    }

    /// Appends bytes that are equal exactly for equal values (`1.0` and
    /// `1.00` alike): the key hash tables hash and compare.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        self.normalized().encode(out)
    }

    /// The fixed 18-byte form tusk's heap tuples store, `(unscaled,
    /// scale)`, with NaN and the infinities as scales 65535, 65534 and
    /// 65533 (no finite value has a scale above 16383); `None` for a value
    /// of more than 38 digits, which needs [`encode`](Self::encode).
    pub fn to_storage_parts(&self) -> Option<(i128, u16)> {
        match self.0 {
            Repr::Small { unscaled, scale } => Some((unscaled, scale)),
            Repr::Big(_) => None,
            Repr::NaN => Some((0, u16::MAX)),
            Repr::PosInf => Some((0, u16::MAX - 1)),
            Repr::NegInf => Some((0, u16::MAX - 2)),
        }
    }

    /// Inverse of [`to_storage_parts`](Self::to_storage_parts).
    pub fn from_storage_parts(unscaled: i128, scale: u16) -> Numeric {
        match scale {
            u16::MAX => Numeric::nan(),
            s if s == u16::MAX - 1 => Numeric::infinity(),
            s if s == u16::MAX - 2 => Numeric::neg_infinity(),
            s => Numeric::from_parts(unscaled, s),
        }
    }

    /// Self-delimiting binary form (for spill files and tuples): the
    /// [`write_key`](Self::write_key) layout without the normalisation,
    /// so the scale survives.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::Small { unscaled, scale } => {
                out.push(0);
                out.extend_from_slice(&unscaled.to_le_bytes());
                out.extend_from_slice(&scale.to_le_bytes());
            }
            Repr::Big(b) => {
                out.push(if b.neg { 2 } else { 1 });
                out.extend_from_slice(&b.scale.to_le_bytes());
                out.extend_from_slice(&(b.mag.len() as u32).to_le_bytes());
                for l in &b.mag {
                    out.extend_from_slice(&l.to_le_bytes());
                }
            }
            Repr::NaN => out.push(3),
            Repr::PosInf => out.push(4),
            Repr::NegInf => out.push(5),
        }
    }

    /// Reads what [`encode`](Self::encode) wrote at the start of `b`;
    /// returns the value and the bytes used.
    pub fn decode(b: &[u8]) -> (Numeric, usize) {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        match b[0] {
            0 => (
                Numeric::from_parts(
                    i128::from_le_bytes(b[1..17].try_into().unwrap()),
                    u16_at(17),
                ),
                19,
            ),
            tag @ (1 | 2) => {
                let scale = u16_at(1);
                let n = u32_at(3) as usize;
                let mag = (0..n).map(|i| u32_at(7 + 4 * i)).collect();
                let v = Numeric(Repr::Big(Box::new(Big {
                    neg: tag == 2,
                    mag,
                    scale,
                })));
                (v, 7 + 4 * n)
            }
            3 => (Numeric::nan(), 1),
            4 => (Numeric::infinity(), 1),
            _ => (Numeric::neg_infinity(), 1),
        }
    }

    /// Exact comparison of two finite values.
    fn cmp_finite(&self, other: &Numeric) -> Ordering {
        if let (Some((a, sa)), Some((b, sb))) = (self.as_small(), other.as_small()) {
            return cmp_small(a, sa, b, sb);
        }
        Dec::from_num(self).cmp(&Dec::from_num(other))
    }
}

/// Exact comparison of `a / 10^sa` and `b / 10^sb` without allocating: when
/// bringing one side to the other's scale overflows 128 bits, that side is
/// larger in magnitude than anything 128 bits hold at that scale, the other
/// side included, so its sign decides.
#[inline]
fn cmp_small(a: i128, sa: u16, b: i128, sb: u16) -> Ordering {
    match sa.cmp(&sb) {
        Ordering::Equal => a.cmp(&b),
        // Zero rescales to zero at any scale, even where 10^k has no i128.
        _ if a == 0 || b == 0 => a.signum().cmp(&b.signum()),
        Ordering::Less => match pow10_i128((sb - sa) as u32).and_then(|f| a.checked_mul(f)) {
            Some(x) => x.cmp(&b),
            None => a.signum().cmp(&0),
        },
        Ordering::Greater => match pow10_i128((sa - sb) as u32).and_then(|f| b.checked_mul(f)) {
            Some(y) => a.cmp(&y),
            None => 0.cmp(&b.signum()),
        },
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.class(), other.class()) {
            (1, 1) => self.cmp_finite(other),
            (a, b) => a.cmp(&b),
        }
    }
}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.normalized().0 {
            Repr::Small { unscaled, scale } => {
                state.write_u8(0);
                state.write_i128(unscaled);
                state.write_u16(scale);
            }
            _ => {
                let mut key = Vec::new();
                self.write_key(&mut key);
                state.write(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests;
