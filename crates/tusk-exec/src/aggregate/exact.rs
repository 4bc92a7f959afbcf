//! Exact decimal arithmetic for the finishing step of the statistics
//! aggregates (`variance`, `stddev` and their `_samp`/`_pop` forms over
//! integers and numerics), whose intermediate values outgrow 128 bits: the
//! numerator `N·Σx² − (Σx)²` of a bigint column is about 2^190.
//!
//! PostgreSQL computes these in its arbitrary-precision numeric with a
//! result scale chosen by `select_div_scale` (at least 16 significant digits,
//! never fewer fraction digits than either operand shows) and rounds half
//! away from zero; the square root is rounded the same way at the same scale.
//! Here the operands are unsigned big integers ([`Big`], 32-bit limbs) with a
//! decimal scale, and each step is exact until its one rounding, so the
//! digits are PostgreSQL's.
//!
//! Values come in and go out as decimal text, so this module does not depend
//! on how `numeric` stores its digits.

use std::cmp::Ordering;

/// An unsigned integer of any size, little-endian 32-bit limbs, no
/// trailing zero limbs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Big(Vec<u32>);

impl Big {
    pub fn zero() -> Big {
        Big(Vec::new())
    }

    pub fn from_u128(mut v: u128) -> Big {
        let mut l = Vec::new();
        while v > 0 {
            l.push(v as u32);
            v >>= 32;
        }
        Big(l)
    }

    /// `hi · 2^128 + lo`.
    pub fn from_u128_pair(hi: u128, lo: u128) -> Big {
        let mut l: Vec<u32> = (0..4).map(|i| (lo >> (32 * i)) as u32).collect();
        l.extend((0..4).map(|i| (hi >> (32 * i)) as u32));
        Big(l).trim()
    }

    /// The low 256 bits as `(hi, lo)` halves.
    pub fn to_u128_pair(&self) -> (u128, u128) {
        let half = |from: usize| {
            (0..4).fold(0u128, |acc, i| {
                acc | (*self.0.get(from + i).unwrap_or(&0) as u128) << (32 * i)
            })
        };
        (half(4), half(0))
    }

    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn trim(mut self) -> Big {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    /// Parses decimal digits (no sign, no point).
    pub fn from_decimal(digits: &str) -> Big {
        let mut b = Big::zero();
        for chunk in digits.as_bytes().chunks(9) {
            let s = std::str::from_utf8(chunk).unwrap_or("0");
            let v: u32 = s.parse().unwrap_or(0);
            b = b
                .mul_small(10u32.pow(chunk.len() as u32))
                .add(&Big::from_u128(v as u128));
        }
        b
    }

    pub fn to_decimal(&self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let mut parts = Vec::new();
        let mut v = self.clone();
        while !v.is_zero() {
            let (q, r) = v.divrem_small(1_000_000_000);
            parts.push(r);
            v = q;
        }
        let mut s = parts.pop().unwrap().to_string();
        for p in parts.iter().rev() {
            s.push_str(&format!("{p:09}"));
        }
        s
    }

    pub fn add(&self, o: &Big) -> Big {
        let n = self.0.len().max(o.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u64;
        for i in 0..n {
            let s = *self.0.get(i).unwrap_or(&0) as u64 + *o.0.get(i).unwrap_or(&0) as u64 + carry;
            out.push(s as u32);
            carry = s >> 32;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        Big(out).trim()
    }

    /// `self - o`; requires `self >= o`.
    pub fn sub(&self, o: &Big) -> Big {
        debug_assert!(self.cmp(o) != Ordering::Less);
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut d = self.0[i] as i64 - *o.0.get(i).unwrap_or(&0) as i64 - borrow;
            borrow = 0;
            if d < 0 {
                d += 1 << 32;
                borrow = 1;
            }
            out.push(d as u32);
        }
        Big(out).trim()
    }

    pub fn mul(&self, o: &Big) -> Big {
        if self.is_zero() || o.is_zero() {
            return Big::zero();
        }
        let mut out = vec![0u32; self.0.len() + o.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in o.0.iter().enumerate() {
                let t = a as u64 * b as u64 + out[i + j] as u64 + carry;
                out[i + j] = t as u32;
                carry = t >> 32;
            }
            let mut k = i + o.0.len();
            while carry > 0 {
                let t = out[k] as u64 + carry;
                out[k] = t as u32;
                carry = t >> 32;
                k += 1;
            }
        }
        Big(out).trim()
    }

    pub fn mul_small(&self, m: u32) -> Big {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = 0u64;
        for &a in &self.0 {
            let t = a as u64 * m as u64 + carry;
            out.push(t as u32);
            carry = t >> 32;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        Big(out).trim()
    }

    pub fn pow10(n: u32) -> Big {
        let mut b = Big::from_u128(1);
        for _ in 0..n / 9 {
            b = b.mul_small(1_000_000_000);
        }
        b.mul_small(10u32.pow(n % 9))
    }

    fn divrem_small(&self, d: u32) -> (Big, u32) {
        let mut out = vec![0u32; self.0.len()];
        let mut rem = 0u64;
        for i in (0..self.0.len()).rev() {
            let cur = (rem << 32) | self.0[i] as u64;
            out[i] = (cur / d as u64) as u32;
            rem = cur % d as u64;
        }
        (Big(out).trim(), rem as u32)
    }

    fn bits(&self) -> usize {
        match self.0.last() {
            None => 0,
            Some(&top) => self.0.len() * 32 - top.leading_zeros() as usize,
        }
    }

    fn bit(&self, i: usize) -> bool {
        self.0.get(i / 32).is_some_and(|l| l >> (i % 32) & 1 == 1)
    }

    fn shl1_or(&self, bit: bool) -> Big {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        let mut carry = bit as u32;
        for &a in &self.0 {
            out.push((a << 1) | carry);
            carry = a >> 31;
        }
        if carry > 0 {
            out.push(carry);
        }
        Big(out).trim()
    }

    /// Quotient and remainder (binary long division; the operands here are
    /// a few hundred bits, and this runs once per group).
    pub fn divrem(&self, d: &Big) -> (Big, Big) {
        assert!(!d.is_zero(), "division by zero in exact arithmetic");
        let mut q = vec![0u32; self.0.len()];
        let mut r = Big::zero();
        for i in (0..self.bits()).rev() {
            r = r.shl1_or(self.bit(i));
            if r.cmp(d) != Ordering::Less {
                r = r.sub(d);
                q[i / 32] |= 1 << (i % 32);
            }
        }
        (Big(q).trim(), r)
    }

    /// Floor of the square root (Newton's iteration from above).
    pub fn isqrt(&self) -> Big {
        if self.is_zero() {
            return Big::zero();
        }
        // Start at a power of two not below the root.
        let mut x = Big::zero();
        let e = self.bits().div_ceil(2);
        x.0 = vec![0; e / 32 + 1];
        x.0[e / 32] = 1 << (e % 32);
        let mut x = x.trim();
        loop {
            // y = (x + n / x) / 2
            let (q, _) = self.divrem(&x);
            let y = x.add(&q).divrem_small(2).0;
            if y.cmp(&x) != Ordering::Less {
                return x;
            }
            x = y;
        }
    }
}

impl Ord for Big {
    fn cmp(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, o: &Big) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A signed exact decimal: `±mag / 10^scale`, where `scale` is also the
/// number of fraction digits shown (PostgreSQL's dscale).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dec {
    pub neg: bool,
    pub mag: Big,
    pub scale: u32,
}

impl Dec {
    pub fn from_i128(v: i128) -> Dec {
        Dec {
            neg: v < 0,
            mag: Big::from_u128(v.unsigned_abs()),
            scale: 0,
        }
    }

    /// Parses `-123.4500` (what numeric's output looks like).
    pub fn parse(text: &str) -> Option<Dec> {
        let (neg, digits) = match text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, text),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mag = Big::from_decimal(&format!("{int}{frac}"));
        Some(Dec {
            neg: neg && !mag.is_zero(),
            mag,
            scale: frac.len() as u32,
        })
    }

    /// The value in numeric's output form, with exactly `scale` fraction digits.
    pub fn to_text(&self) -> String {
        let digits = self.mag.to_decimal();
        let s = self.scale as usize;
        let body = if s == 0 {
            digits
        } else if digits.len() <= s {
            format!("0.{}{}", "0".repeat(s - digits.len()), digits)
        } else {
            let (i, f) = digits.split_at(digits.len() - s);
            format!("{i}.{f}")
        };
        if self.neg && !self.mag.is_zero() {
            format!("-{body}")
        } else {
            body
        }
    }

    /// The magnitude scaled to `scale` (which must not be below `self.scale`).
    fn mag_at(&self, scale: u32) -> Big {
        self.mag.mul(&Big::pow10(scale - self.scale))
    }

    /// Base-10000 weight and first digit group of a positive value, as
    /// PostgreSQL's NumericVar holds it.
    fn weight_and_first(&self) -> (i64, u64) {
        let digits = self.mag.to_decimal();
        let s = self.scale as usize;
        // Pad the fraction to whole groups of four.
        let pad = (4 - s % 4) % 4;
        let all = format!("{digits}{}", "0".repeat(pad));
        let frac_groups = (s + pad) / 4;
        // Group the padded digits from the right.
        let lead = all.len() % 4;
        let mut groups: Vec<u64> = Vec::new();
        if lead > 0 {
            groups.push(all[..lead].parse().unwrap_or(0));
        }
        for c in all.as_bytes()[lead..].chunks(4) {
            groups.push(std::str::from_utf8(c).unwrap().parse().unwrap_or(0));
        }
        let n = groups.len() as i64;
        for (i, &g) in groups.iter().enumerate() {
            if g != 0 {
                return (n - 1 - frac_groups as i64 - i as i64, g);
            }
        }
        (0, 0)
    }
}

/// PostgreSQL's `select_div_scale` for positive `num` / `den`.
pub fn select_div_scale(num: &Dec, den: &Dec) -> u32 {
    let (w1, f1) = num.weight_and_first();
    let (w2, f2) = den.weight_and_first();
    let mut qweight = w1 - w2;
    if f1 <= f2 {
        qweight -= 1;
    }
    (16 - qweight * 4)
        .max(num.scale as i64)
        .max(den.scale as i64)
        .clamp(0, 1000) as u32
}

/// `n / d` at `scale` fraction digits, rounded half away from zero
/// (both non-negative).
pub fn div_round(n: &Dec, d: &Dec, scale: u32) -> Dec {
    // n/d = (nm / 10^ns) / (dm / 10^ds); want q = round(n/d · 10^scale)
    //     = round(nm · 10^(ds + scale) / (dm · 10^ns)).
    let num = n.mag.mul(&Big::pow10(d.scale + scale));
    let den = d.mag.mul(&Big::pow10(n.scale));
    let (q, r) = num.divrem(&den);
    let q = if r.mul_small(2).cmp(&den) != Ordering::Less {
        q.add(&Big::from_u128(1))
    } else {
        q
    };
    Dec {
        neg: false,
        mag: q,
        scale,
    }
}

/// Square root of a non-negative `v` at `scale` fraction digits, rounded
/// half away from zero.
pub fn sqrt_round(v: &Dec, scale: u32) -> Dec {
    // sqrt(m / 10^s) · 10^scale = sqrt(m · 10^e), e = 2·scale − s. Make the
    // radicand an integer by scaling it by 10^(2t): X = m · 10^(e + 2t) and
    // the wanted root is sqrt(X) / 10^t.
    let e = 2 * scale as i64 - v.scale as i64;
    let t = if e < 0 { (-e + 1) / 2 } else { 0 };
    let x = v.mag.mul(&Big::pow10((e + 2 * t) as u32));
    let scale_t = Big::pow10(t as u32);
    let q = x.isqrt().divrem(&scale_t).0;
    // Round up when sqrt(X) / 10^t ≥ q + 1/2, i.e. 4X ≥ (2q + 1)² · 10^(2t).
    let twice = q.mul_small(2).add(&Big::from_u128(1));
    let rhs = twice.mul(&twice).mul(&scale_t).mul(&scale_t);
    let q = if x.mul_small(4) >= rhs {
        q.add(&Big::from_u128(1))
    } else {
        q
    };
    Dec {
        neg: false,
        mag: q,
        scale,
    }
}

/// What `variance`/`var_pop`/`stddev`/`stddev_pop` return over integers or
/// numerics (`numeric_stddev_internal`): `None` is SQL NULL (no rows, or one
/// row for the sample forms).
pub fn numeric_stats(n: i64, sum_x: &Dec, sum_x2: &Dec, sample: bool, stddev: bool) -> Option<Dec> {
    if n == 0 || (sample && n <= 1) {
        return None;
    }
    // N·Σx² − (Σx)², exact at scale 2·dscale(Σx).
    let s = (2 * sum_x.scale).max(sum_x2.scale);
    let nsx2 = sum_x2.mag_at(s).mul(&Big::from_u128(n as u128));
    let sx_sq = sum_x
        .mag
        .mul(&sum_x.mag)
        .mul(&Big::pow10(s - 2 * sum_x.scale));
    if nsx2.cmp(&sx_sq) != Ordering::Greater {
        // Roundoff cannot happen in exact arithmetic, but an all-equal
        // input gives exactly zero: PostgreSQL returns a plain 0.
        return Some(Dec::from_i128(0));
    }
    let num = Dec {
        neg: false,
        mag: nsx2.sub(&sx_sq),
        scale: s,
    };
    let n = n as u128;
    let den = Dec::from_i128((n * if sample { n - 1 } else { n }) as i128);
    let rscale = select_div_scale(&num, &den);
    let var = div_round(&num, &den, rscale);
    Some(if stddev {
        sqrt_round(&var, rscale)
    } else {
        var
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(xs: &[&str], sample: bool, stddev: bool) -> Option<String> {
        let mut sx = Dec::from_i128(0);
        let mut sx2 = Dec::from_i128(0);
        for x in xs {
            let d = Dec::parse(x).unwrap();
            sx = add(&sx, &d);
            let sq = Dec {
                neg: false,
                mag: d.mag.mul(&d.mag),
                scale: 2 * d.scale,
            };
            sx2 = add(&sx2, &sq);
        }
        numeric_stats(xs.len() as i64, &sx, &sx2, sample, stddev).map(|d| d.to_text())
    }

    fn add(a: &Dec, b: &Dec) -> Dec {
        let s = a.scale.max(b.scale);
        let (x, y) = (a.mag_at(s), b.mag_at(s));
        match (a.neg, b.neg) {
            (false, false) | (true, true) => Dec {
                neg: a.neg,
                mag: x.add(&y),
                scale: s,
            },
            _ => {
                let (big, small, neg) = if x >= y { (x, y, a.neg) } else { (y, x, b.neg) };
                let mag = big.sub(&small);
                Dec {
                    neg: neg && !mag.is_zero(),
                    mag,
                    scale: s,
                }
            }
        }
    }

    #[test]
    fn big_arithmetic() {
        let a = Big::from_decimal("123456789012345678901234567890");
        let b = Big::from_decimal("987654321");
        assert_eq!(a.to_decimal(), "123456789012345678901234567890");
        let (q, r) = a.divrem(&b);
        assert_eq!(q.mul(&b).add(&r), a);
        assert!(r < b);
        assert_eq!(Big::from_decimal("1000000").isqrt().to_decimal(), "1000");
        assert_eq!(Big::from_decimal("999999").isqrt().to_decimal(), "999");
        assert_eq!(Big::pow10(20).to_decimal(), "100000000000000000000");
        let sq = Big::from_decimal("85070591730234615847396907784232501249");
        assert_eq!(sq.isqrt().to_decimal(), "9223372036854775807");
    }

    /// Expected values from PostgreSQL 15.
    #[test]
    fn variance_digits_match_postgres() {
        let xs = ["1", "2", "3", "4"];
        assert_eq!(stats(&xs, true, false).unwrap(), "1.6666666666666667");
        assert_eq!(stats(&xs, false, false).unwrap(), "1.2500000000000000");
        assert_eq!(stats(&xs, true, true).unwrap(), "1.2909944487358056");
        assert_eq!(stats(&xs, false, true).unwrap(), "1.1180339887498948");
        assert_eq!(stats(&["1", "1"], true, false).unwrap(), "0");
        assert_eq!(stats(&["1"], true, false), None);
        assert_eq!(stats(&["1"], false, true).unwrap(), "0");
        let xs = ["1.5", "2.25", "3.125"];
        assert_eq!(stats(&xs, true, false).unwrap(), "0.66145833333333333333");
        assert_eq!(stats(&xs, true, true).unwrap(), "0.81330088733096395985");
        let big = ["9223372036854775807", "1", "-9223372036854775807"];
        assert_eq!(
            stats(&big, true, false).unwrap(),
            "85070591730234615847396907784232501249"
        );
        assert_eq!(stats(&big, true, true).unwrap(), "9223372036854775807");
    }
}
