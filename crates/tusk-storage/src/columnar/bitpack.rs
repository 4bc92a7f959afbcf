//! Bit-packing: unsigned integers of `width` bits laid end to end.
//!
//! Value `i` occupies bits `i * width .. (i + 1) * width` of a little-endian
//! bit stream. The packed bytes are followed by 8 bytes of padding
//! ([`packed_len`] counts them), so that unpacking may always read one
//! whole unaligned `u64` at the byte where a value starts: no value is
//! wider than 64 bits, and a value of width `w` starting at bit `b % 8`
//! ends within `b % 8 + w <= 71` bits, which the 8-byte load plus the one
//! byte that follows cover (the one case of more than 57 bits reads a
//! second word).

/// Bytes [`pack`] writes for `n` values of `width` bits (padding included).
pub fn packed_len(n: usize, width: u32) -> usize {
    (n * width as usize).div_ceil(8) + 8
}

/// Bits needed for `v` (0 for 0).
#[inline]
pub fn bits(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// Appends `values` packed at `width` bits each to `out` (each value must
/// fit: `bits(v) <= width`).
pub fn pack(values: impl Iterator<Item = u64>, width: u32, out: &mut Vec<u8>) {
    debug_assert!(width <= 64);
    let start = out.len();
    let mut acc: u128 = 0;
    let mut filled: u32 = 0;
    let mut n = 0usize;
    if width == 0 {
        values.for_each(|_| n += 1);
    } else {
        for v in values {
            debug_assert!(bits(v) <= width, "{v} does not fit {width} bits");
            acc |= u128::from(v) << filled;
            filled += width;
            while filled >= 64 {
                out.extend_from_slice(&(acc as u64).to_le_bytes());
                acc >>= 64;
                filled -= 64;
            }
            n += 1;
        }
    }
    let tail = filled.div_ceil(8) as usize;
    out.extend_from_slice(&(acc as u64).to_le_bytes()[..tail]);
    out.extend_from_slice(&[0u8; 8]);
    debug_assert_eq!(out.len() - start, packed_len(n, width));
}

/// Reads value `i` of a stream of `width`-bit values.
#[inline(always)]
pub fn get(packed: &[u8], width: u32, i: usize) -> u64 {
    if width == 0 {
        return 0;
    }
    let bit = i * width as usize;
    let byte = bit >> 3;
    let shift = (bit & 7) as u32;
    let word = u64::from_le_bytes(packed[byte..byte + 8].try_into().unwrap());
    let mut v = word >> shift;
    if shift + width > 64 {
        v |= u64::from(packed[byte + 8]) << (64 - shift);
    }
    if width == 64 {
        v
    } else {
        v & ((1u64 << width) - 1)
    }
}

/// Calls `f(v)` for values `start .. start + n` in order.
#[inline(always)]
pub fn unpack(packed: &[u8], width: u32, start: usize, n: usize, mut f: impl FnMut(u64)) {
    if width == 0 {
        (0..n).for_each(|_| f(0));
        return;
    }
    // The padding makes every load in range (see the module doc); a
    // truncated stream is caught here rather than by a panic in `get`.
    let need = packed_len(start + n, width);
    assert!(packed.len() >= need, "bit-packed stream is truncated");
    for i in start..start + n {
        f(get(packed, width, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_width() {
        for width in 0..=64u32 {
            let mask = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            let values: Vec<u64> = (0..300u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & mask)
                .collect();
            let mut out = vec![0xAA];
            pack(values.iter().copied(), width, &mut out);
            assert_eq!(out.len(), 1 + packed_len(values.len(), width));
            let packed = &out[1..];
            for (i, &v) in values.iter().enumerate() {
                assert_eq!(get(packed, width, i), v, "width {width} value {i}");
            }
            let mut got = Vec::new();
            unpack(packed, width, 7, 200, |v| got.push(v));
            assert_eq!(got, values[7..207]);
        }
    }
}
