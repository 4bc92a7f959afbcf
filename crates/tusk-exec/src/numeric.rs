//! A small exact decimal type for the results PostgreSQL gives as `numeric`:
//! `avg` of integers, `sum` of `bigint`, and decimal literals.
//!
//! A value is `unscaled / 10^scale` with a 128-bit unscaled part, which covers
//! every value these operations produce from 64-bit inputs. Arithmetic that
//! would leave that range fails with PostgreSQL's "value overflows numeric
//! format". Division follows PostgreSQL's `select_div_scale`, so `avg` prints
//! the same digits as PostgreSQL (`1.5000000000000000`).

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Numeric {
    pub unscaled: i128,
    pub scale: u16,
}

pub const OVERFLOW: &str = "value overflows numeric format";

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Numeric {
    pub fn from_i64(v: i64) -> Numeric {
        Numeric {
            unscaled: v as i128,
            scale: 0,
        }
    }

    pub fn from_i128(v: i128) -> Numeric {
        Numeric {
            unscaled: v,
            scale: 0,
        }
    }

    /// Parses `123`, `-1.50`, `.5`, `1e3`.
    pub fn parse(s: &str) -> Option<Numeric> {
        let s = s.trim();
        let (mant, exp) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
            None => (s, 0),
        };
        let (neg, mant) = match mant.as_bytes().first()? {
            b'-' => (true, &mant[1..]),
            b'+' => (false, &mant[1..]),
            _ => (false, mant),
        };
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut unscaled: i128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            unscaled = unscaled.checked_mul(10)?.checked_add((b - b'0') as i128)?;
        }
        let mut scale = frac.len() as i32 - exp;
        if scale < 0 {
            unscaled = unscaled.checked_mul(pow10((-scale) as u32)?)?;
            scale = 0;
        }
        Some(Numeric {
            unscaled: if neg { -unscaled } else { unscaled },
            scale: u16::try_from(scale).ok()?,
        })
    }

    /// Rescales to `scale` digits, rounding half away from zero.
    pub fn rescale(self, scale: u16) -> Result<Numeric, &'static str> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Ok(self),
            Ordering::Greater => {
                let f = pow10((scale - self.scale) as u32).ok_or(OVERFLOW)?;
                Ok(Numeric {
                    unscaled: self.unscaled.checked_mul(f).ok_or(OVERFLOW)?,
                    scale,
                })
            }
            Ordering::Less => {
                let f = pow10((self.scale - scale) as u32).ok_or(OVERFLOW)?;
                let q = self.unscaled / f;
                let r = self.unscaled % f;
                let adj = if r.abs() * 2 >= f {
                    self.unscaled.signum()
                } else {
                    0
                };
                Ok(Numeric {
                    unscaled: q + adj,
                    scale,
                })
            }
        }
    }

    fn aligned(a: Numeric, b: Numeric) -> Result<(i128, i128, u16), &'static str> {
        let s = a.scale.max(b.scale);
        Ok((a.rescale(s)?.unscaled, b.rescale(s)?.unscaled, s))
    }

    pub fn checked_add(self, o: Numeric) -> Result<Numeric, &'static str> {
        let (a, b, scale) = Self::aligned(self, o)?;
        Ok(Numeric {
            unscaled: a.checked_add(b).ok_or(OVERFLOW)?,
            scale,
        })
    }

    pub fn checked_sub(self, o: Numeric) -> Result<Numeric, &'static str> {
        self.checked_add(o.negated())
    }

    pub fn negated(self) -> Numeric {
        Numeric {
            unscaled: -self.unscaled,
            scale: self.scale,
        }
    }

    pub fn checked_mul(self, o: Numeric) -> Result<Numeric, &'static str> {
        Ok(Numeric {
            unscaled: self.unscaled.checked_mul(o.unscaled).ok_or(OVERFLOW)?,
            scale: self.scale.checked_add(o.scale).ok_or(OVERFLOW)?,
        })
    }

    /// Base-10000 weight and first digit group of |v| (PostgreSQL's layout).
    fn weight_and_first(self) -> (i32, i128) {
        let mut v = self.unscaled.abs();
        if v == 0 {
            return (0, 0);
        }
        // Shift the decimal point so the digit groups align to multiples of 4.
        let pad = (4 - (self.scale as i32 % 4)) % 4;
        v *= 10i128.pow(pad as u32);
        let frac_groups = (self.scale as i32 + pad) / 4;
        let mut groups = 0;
        let mut t = v;
        let mut first = 0;
        while t > 0 {
            first = t % 10000;
            t /= 10000;
            groups += 1;
        }
        (groups - 1 - frac_groups, first)
    }

    /// Division with PostgreSQL's result scale rules.
    pub fn checked_div(self, o: Numeric) -> Result<Numeric, &'static str> {
        if o.unscaled == 0 {
            return Err("division by zero");
        }
        let (w1, f1) = self.weight_and_first();
        let (w2, f2) = o.weight_and_first();
        let mut qweight = w1 - w2;
        if f1 <= f2 {
            qweight -= 1;
        }
        let rscale = (16 - qweight * 4)
            .max(self.scale as i32)
            .max(o.scale as i32)
            .clamp(0, 1000) as u16;
        // quotient = (a / 10^sa) / (b / 10^sb) = a * 10^(sb - sa) / b; want it * 10^rscale.
        let shift = rscale as i32 + o.scale as i32 - self.scale as i32;
        let neg = (self.unscaled < 0) != (o.unscaled < 0);
        let (mut num, mut den) = (self.unscaled.unsigned_abs(), o.unscaled.unsigned_abs());
        if shift < 0 {
            den = den
                .checked_mul(10u128.checked_pow((-shift) as u32).ok_or(OVERFLOW)?)
                .ok_or(OVERFLOW)?;
        }
        // Long division, one decimal digit at a time, so no intermediate overflows.
        let mut q = num / den;
        let mut r = num % den;
        for _ in 0..shift.max(0) {
            num = r * 10;
            q = q.checked_mul(10).ok_or(OVERFLOW)? + num / den;
            r = num % den;
        }
        // Round half away from zero on the next digit.
        if r * 2 >= den {
            q += 1;
        }
        let q = i128::try_from(q).map_err(|_| OVERFLOW)?;
        Ok(Numeric {
            unscaled: if neg { -q } else { q },
            scale: rscale,
        })
    }

    /// Rounds to an integer (half away from zero).
    pub fn round_to_i128(self) -> i128 {
        self.rescale(0).map(|n| n.unscaled).unwrap_or(0)
    }

    /// The value with trailing fractional zeros removed (for hashing / equality).
    pub fn normalized(self) -> Numeric {
        let mut n = self;
        while n.scale > 0 && n.unscaled % 10 == 0 {
            n.unscaled /= 10;
            n.scale -= 1;
        }
        n
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.normalized(), other.normalized());
        match Numeric::aligned(a, b) {
            Ok((x, y, _)) => x.cmp(&y),
            // Cannot overflow after normalisation unless values are astronomically
            // far apart; then the sign and scale decide.
            Err(_) => (a.unscaled.signum(), a.scale).cmp(&(b.unscaled.signum(), b.scale)),
        }
    }
}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.unscaled.unsigned_abs().to_string();
        let scale = self.scale as usize;
        if self.unscaled < 0 {
            f.write_str("-")?;
        }
        if scale == 0 {
            return f.write_str(&digits);
        }
        if digits.len() <= scale {
            write!(f, "0.{}{}", "0".repeat(scale - digits.len()), digits)
        } else {
            let (i, fr) = digits.split_at(digits.len() - scale);
            write!(f, "{i}.{fr}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avg(sum: i64, n: i64) -> String {
        Numeric::from_i64(sum)
            .checked_div(Numeric::from_i64(n))
            .unwrap()
            .to_string()
    }

    #[test]
    fn avg_matches_postgres() {
        // Values checked against PostgreSQL 15.
        assert_eq!(avg(3, 2), "1.5000000000000000");
        assert_eq!(avg(10, 1), "10.0000000000000000");
        assert_eq!(avg(50000005000000, 10000000), "5000000.500000000000");
        assert_eq!(avg(50000005000000, 2), "25000002500000.0000");
        assert_eq!(avg(1, 3), "0.33333333333333333333");
        assert_eq!(avg(2, 3), "0.66666666666666666667");
        assert_eq!(avg(-7, 2), "-3.5000000000000000");
        assert_eq!(avg(1, 10000000), "0.000000100000000000000000");
        assert_eq!(avg(0, 5), "0.00000000000000000000");
    }

    #[test]
    fn parse_and_print() {
        assert_eq!(Numeric::parse("1.50").unwrap().to_string(), "1.50");
        assert_eq!(Numeric::parse("-.5").unwrap().to_string(), "-0.5");
        assert_eq!(Numeric::parse("1e3").unwrap().to_string(), "1000");
        assert!(Numeric::parse("abc").is_none());
        assert_eq!(
            Numeric::parse("1.5")
                .unwrap()
                .checked_add(Numeric::parse("2.25").unwrap())
                .unwrap()
                .to_string(),
            "3.75"
        );
        assert_eq!(
            Numeric::parse("1.0").unwrap(),
            Numeric::parse("1.0").unwrap()
        );
        assert_eq!(
            Numeric::parse("1.0")
                .unwrap()
                .cmp(&Numeric::parse("1.00").unwrap()),
            Ordering::Equal
        );
        assert_eq!(Numeric::parse("2.5").unwrap().round_to_i128(), 3);
        assert_eq!(Numeric::parse("-2.5").unwrap().round_to_i128(), -3);
    }
}
