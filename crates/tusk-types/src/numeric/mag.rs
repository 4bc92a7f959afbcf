//! Unsigned integers of any size in base 10^9: the magnitudes of big numerics.
//!
//! A magnitude is a `Vec<u32>` of limbs, least significant first, each below
//! [`BASE`] = 10^9, with no most-significant zero limbs (zero is the empty
//! vector). Base 10^9 rather than 2^32 because a numeric is a decimal: moving
//! the decimal point, rounding at a decimal digit, counting digits and
//! printing are limb shifts and divisions by small powers of ten, not
//! conversions. Nine digits per limb is the most that keeps a limb product
//! plus carries inside 64 bits.
//!
//! Only what `numeric` needs is here: comparison, addition, subtraction,
//! schoolbook multiplication and Knuth's long division (The Art of Computer
//! Programming, vol. 2, 4.3.1, algorithm D, with a base-10^9 normalising
//! factor instead of a shift). Values in PostgreSQL's range have at most
//! 147,455 digits (16,384 limbs), where schoolbook is adequate.

use std::cmp::Ordering;

pub const BASE: u64 = 1_000_000_000;
pub const LIMB_DIGITS: u32 = 9;

pub type Mag = Vec<u32>;

const POW10: [u32; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

pub fn pow10_u32(n: u32) -> u32 {
    POW10[n as usize]
}

fn trim(mut v: Mag) -> Mag {
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

pub fn from_u128(mut x: u128) -> Mag {
    let mut v = Vec::with_capacity(5);
    while x > 0 {
        v.push((x % BASE as u128) as u32);
        x /= BASE as u128;
    }
    v
}

/// The value if it fits in 128 bits.
pub fn to_u128(a: &[u32]) -> Option<u128> {
    if a.len() > 5 {
        return None;
    }
    let mut x: u128 = 0;
    for &l in a.iter().rev() {
        x = x.checked_mul(BASE as u128)?.checked_add(l as u128)?;
    }
    Some(x)
}

pub fn cmp(a: &[u32], b: &[u32]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

pub fn add(a: &[u32], b: &[u32]) -> Mag {
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0u32;
    for (i, &x) in a.iter().enumerate() {
        let s = x + b.get(i).copied().unwrap_or(0) + carry;
        carry = (s >= BASE as u32) as u32;
        out.push(if carry == 1 { s - BASE as u32 } else { s });
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// `a - b`; requires `a >= b`.
pub fn sub(a: &[u32], b: &[u32]) -> Mag {
    debug_assert!(cmp(a, b) != Ordering::Less);
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i64;
    for (i, &x) in a.iter().enumerate() {
        let mut d = x as i64 - b.get(i).copied().unwrap_or(0) as i64 - borrow;
        borrow = (d < 0) as i64;
        if d < 0 {
            d += BASE as i64;
        }
        out.push(d as u32);
    }
    trim(out)
}

pub fn mul(a: &[u32], b: &[u32]) -> Mag {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u64; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &y) in b.iter().enumerate() {
            let t = out[i + j] + x as u64 * y as u64 + carry;
            out[i + j] = t % BASE;
            carry = t / BASE;
        }
        let mut k = i + b.len();
        while carry > 0 {
            let t = out[k] + carry;
            out[k] = t % BASE;
            carry = t / BASE;
            k += 1;
        }
    }
    trim(out.into_iter().map(|l| l as u32).collect())
}

pub fn mul_small(a: &[u32], m: u32) -> Mag {
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0u64;
    for &x in a {
        let t = x as u64 * m as u64 + carry;
        out.push((t % BASE) as u32);
        carry = t / BASE;
    }
    if carry > 0 {
        out.push(carry as u32);
    }
    trim(out)
}

/// `(a / d, a % d)` for a single-limb divisor.
pub fn divmod_small(a: &[u32], d: u32) -> (Mag, u32) {
    let mut q = vec![0u32; a.len()];
    let mut r = 0u64;
    for i in (0..a.len()).rev() {
        let cur = r * BASE + a[i] as u64;
        q[i] = (cur / d as u64) as u32;
        r = cur % d as u64;
    }
    (trim(q), r as u32)
}

/// `a * 10^n`.
pub fn mul_pow10(a: &[u32], n: u32) -> Mag {
    if a.is_empty() {
        return Vec::new();
    }
    let limbs = (n / LIMB_DIGITS) as usize;
    let mut out = vec![0u32; limbs];
    out.extend_from_slice(a);
    match n % LIMB_DIGITS {
        0 => out,
        r => mul_small(&out, pow10_u32(r)),
    }
}

/// `a / 10^n` truncated, and whether the digits dropped are at least half
/// of 10^n (the most significant dropped digit is 5 or more): rounding the
/// magnitude half up is then adding one.
pub fn div_pow10(a: &[u32], n: u32) -> (Mag, bool) {
    if n == 0 {
        return (a.to_vec(), false);
    }
    let half = digit_at(a, n - 1) >= 5;
    let limbs = (n / LIMB_DIGITS) as usize;
    if limbs >= a.len() {
        return (Vec::new(), half);
    }
    let rest = &a[limbs..];
    let q = match n % LIMB_DIGITS {
        0 => rest.to_vec(),
        r => divmod_small(rest, pow10_u32(r)).0,
    };
    (q, half)
}

/// The decimal digit of `a` at position `pos` (0 = units).
pub fn digit_at(a: &[u32], pos: u32) -> u32 {
    match a.get((pos / LIMB_DIGITS) as usize) {
        Some(&l) => l / pow10_u32(pos % LIMB_DIGITS) % 10,
        None => 0,
    }
}

/// Whether the low `n` decimal digits of `a` are all zero.
pub fn low_digits_zero(a: &[u32], n: u32) -> bool {
    let limbs = (n / LIMB_DIGITS) as usize;
    if a.iter().take(limbs).any(|&l| l != 0) {
        return false;
    }
    match (a.get(limbs), n % LIMB_DIGITS) {
        (Some(&l), r) if r > 0 => l % pow10_u32(r) == 0,
        _ => true,
    }
}

/// Number of trailing zero decimal digits (0 for zero).
pub fn trailing_zeros(a: &[u32]) -> u32 {
    let mut n = 0;
    for &l in a {
        if l == 0 {
            n += LIMB_DIGITS;
            continue;
        }
        let mut l = l;
        while l % 10 == 0 {
            l /= 10;
            n += 1;
        }
        return n;
    }
    0
}

/// Decimal digits in `a` (0 for zero).
pub fn digit_count(a: &[u32]) -> u32 {
    match a.last() {
        None => 0,
        Some(&top) => {
            let mut d = 1;
            while d < 9 && top >= pow10_u32(d) {
                d += 1;
            }
            (a.len() as u32 - 1) * LIMB_DIGITS + d
        }
    }
}

/// From ASCII decimal digits (no sign, no point).
pub fn from_digits(digits: &[u8]) -> Mag {
    let mut out = Vec::with_capacity(digits.len() / 9 + 1);
    let mut end = digits.len();
    while end > 0 {
        let start = end.saturating_sub(LIMB_DIGITS as usize);
        let mut l = 0u32;
        for &c in &digits[start..end] {
            l = l * 10 + (c - b'0') as u32;
        }
        out.push(l);
        end = start;
    }
    trim(out)
}

/// Appends the decimal digits of `a` ("0" for zero).
pub fn write_digits(a: &[u32], out: &mut String) {
    use std::fmt::Write;
    match a.split_last() {
        None => out.push('0'),
        Some((top, rest)) => {
            let _ = write!(out, "{top}");
            for l in rest.iter().rev() {
                let _ = write!(out, "{l:09}");
            }
        }
    }
}

/// `(a / b, a % b)`; `b` must not be zero.
pub fn divmod(a: &[u32], b: &[u32]) -> (Mag, Mag) {
    assert!(!b.is_empty(), "division by a zero magnitude");
    if cmp(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if b.len() == 1 {
        let (q, r) = divmod_small(a, b[0]);
        return (q, if r == 0 { Vec::new() } else { vec![r] });
    }
    // Normalise so that the divisor's top limb is at least BASE / 2; then
    // each trial quotient digit from the top two limbs is off by at most 2.
    let f = (BASE / (*b.last().unwrap() as u64 + 1)) as u32;
    let mut u = mul_small(a, f);
    let v = mul_small(b, f);
    u.resize(a.len() + 1, 0);
    let n = v.len();
    let m = a.len() - n;
    let mut q = vec![0u32; m + 1];
    let vtop = v[n - 1] as u64;
    let vnext = v[n - 2] as u64;
    for j in (0..=m).rev() {
        let num = u[j + n] as u64 * BASE + u[j + n - 1] as u64;
        let mut qhat = num / vtop;
        let mut rhat = num % vtop;
        while qhat >= BASE || qhat * vnext > rhat * BASE + u[j + n - 2] as u64 {
            qhat -= 1;
            rhat += vtop;
            if rhat >= BASE {
                break;
            }
        }
        // u[j..j+n+1] -= qhat * v
        let mut borrow = 0i64;
        let mut carry = 0u64;
        for i in 0..n {
            let p = qhat * v[i] as u64 + carry;
            carry = p / BASE;
            let mut d = u[i + j] as i64 - (p % BASE) as i64 - borrow;
            borrow = (d < 0) as i64;
            if d < 0 {
                d += BASE as i64;
            }
            u[i + j] = d as u32;
        }
        let mut d = u[j + n] as i64 - carry as i64 - borrow;
        if d < 0 {
            // qhat was one too large: add v back.
            qhat -= 1;
            d += BASE as i64;
            let mut c = 0u32;
            for i in 0..n {
                let s = u[i + j] + v[i] + c;
                c = (s >= BASE as u32) as u32;
                u[i + j] = if c == 1 { s - BASE as u32 } else { s };
            }
            d = (d + c as i64) % BASE as i64;
        }
        u[j + n] = d as u32;
        q[j] = qhat as u32;
    }
    u.truncate(n);
    let (r, rem) = divmod_small(&trim(u), f);
    debug_assert_eq!(rem, 0);
    (trim(q), r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(x: u128) -> Mag {
        from_u128(x)
    }

    #[test]
    fn arithmetic_agrees_with_u128() {
        let xs = [
            0u128,
            1,
            7,
            999_999_999,
            1_000_000_000,
            123_456_789_012_345_678,
            u64::MAX as u128,
            (u64::MAX as u128) * 977,
            u128::MAX / 3,
        ];
        for &a in &xs {
            for &b in &xs {
                if let Some(s) = a.checked_add(b) {
                    assert_eq!(to_u128(&add(&m(a), &m(b))), Some(s));
                }
                if a >= b {
                    assert_eq!(to_u128(&sub(&m(a), &m(b))), Some(a - b));
                }
                if let Some(p) = a.checked_mul(b) {
                    assert_eq!(to_u128(&mul(&m(a), &m(b))), Some(p));
                }
                if b != 0 {
                    let (q, r) = divmod(&m(a), &m(b));
                    assert_eq!((to_u128(&q), to_u128(&r)), (Some(a / b), Some(a % b)));
                }
                assert_eq!(cmp(&m(a), &m(b)), a.cmp(&b));
            }
        }
    }

    #[test]
    fn long_division_of_big_values() {
        // (10^60 + 12345) = q * (10^25 + 7) + r, checked by multiplying back.
        let a = add(&mul_pow10(&m(1), 60), &m(12345));
        let b = add(&mul_pow10(&m(1), 25), &m(7));
        let (q, r) = divmod(&a, &b);
        assert_eq!(add(&mul(&q, &b), &r), a);
        assert_eq!(cmp(&r, &b), Ordering::Less);
        let mut s = String::new();
        write_digits(&q, &mut s);
        assert_eq!(s, "99999999999999999999999930000000000");
    }

    #[test]
    fn decimal_digits() {
        let a = from_digits(b"12345678901234567890");
        assert_eq!(digit_count(&a), 20);
        assert_eq!(digit_at(&a, 0), 0);
        assert_eq!(digit_at(&a, 19), 1);
        assert_eq!(trailing_zeros(&a), 1);
        let (q, half) = div_pow10(&a, 11);
        assert_eq!(to_u128(&q), Some(123456789));
        assert!(!half);
        let (q, half) = div_pow10(&a, 12);
        assert_eq!(to_u128(&q), Some(12345678));
        assert!(half);
        assert!(low_digits_zero(&mul_pow10(&a, 13), 14));
        assert!(!low_digits_zero(&mul_pow10(&a, 13), 15));
    }
}
