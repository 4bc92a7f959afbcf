//! Hashing and encoding of key columns, shared by hash join and hash aggregation.
//!
//! A single integer key (the common case: `USING (id)`) is kept as an `i64`
//! and hashed with one multiplication. Any other key list is encoded per row
//! into bytes — integers widened to 8 bytes so `integer` and `bigint` keys
//! compare equal, numerics normalised so `1.0` equals `1.00`, text as length and
//! bytes — and compared bytewise.

use crate::vector::{Data, Vector};

/// Fibonacci hashing: a multiplication whose *high* bits are well mixed.
#[inline]
pub fn hash_i64(k: i64) -> u64 {
    (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A 64-bit hash of a byte string whose high bits are well mixed.
#[inline]
pub fn hash_bytes(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(0x0000_0100_0000_01b3);
        h ^= h >> 29;
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(0x0000_0100_0000_01b3);
    // Final avalanche so the top bits depend on every input bit.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Whether a key list can use the single-integer fast path.
pub fn is_int_key<V: std::borrow::Borrow<Vector>>(keys: &[V]) -> bool {
    keys.len() == 1
        && matches!(
            keys[0].borrow().data,
            Data::Int2(_) | Data::Int4(_) | Data::Int8(_) | Data::Bool(_)
        )
}

/// Row `i` of a single integer-like key as i64 (`None` when NULL).
#[inline]
pub fn int_key(v: &Vector, i: usize) -> Option<i64> {
    if v.is_null(i) {
        return None;
    }
    Some(match &v.data {
        Data::Int2(d) => d[i] as i64,
        Data::Int4(d) => d[i] as i64,
        Data::Int8(d) => d[i],
        Data::Bool(d) => d[i] as i64,
        _ => unreachable!("int_key on a non-integer vector"),
    })
}

/// Appends the encoding of row `i` of `keys` to `out`; returns false (and
/// leaves `out` in an unspecified state) if any key is NULL.
pub fn encode_row(keys: &[Vector], i: usize, out: &mut Vec<u8>) -> bool {
    for k in keys {
        if k.is_null(i) {
            return false;
        }
        match &k.data {
            Data::Bool(d) => out.extend_from_slice(&(d[i] as i64).to_le_bytes()),
            Data::Int4(d) => out.extend_from_slice(&(d[i] as i64).to_le_bytes()),
            Data::Int8(d) => out.extend_from_slice(&d[i].to_le_bytes()),
            Data::Int2(d) => out.extend_from_slice(&(d[i] as i64).to_le_bytes()),
            Data::Float4(d) => out.extend_from_slice(&canonical_float(d[i] as f64).to_le_bytes()),
            Data::Float8(d) => out.extend_from_slice(&canonical_float(d[i]).to_le_bytes()),
            Data::Interval(d) => out.extend_from_slice(&d[i].cmp_key().to_le_bytes()),
            Data::Numeric(d) => d[i].write_key(out),
            Data::Uuid(d) => out.extend_from_slice(&d[i].to_le_bytes()),
            Data::Text(d) | Data::Bytea(d) => {
                let s = d.get(i);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s);
            }
            // Arrays equal as PostgreSQL's `array_eq`: same bounds, equal
            // elements, NULL elements equal to each other.
            Data::Array(d) => {
                let a = &d[i];
                out.extend_from_slice(&a.lower.to_le_bytes());
                out.extend_from_slice(&(a.items.len() as u32).to_le_bytes());
                let elems = crate::array::element_vector(a);
                for j in 0..a.items.len() {
                    if elems.is_null(j) {
                        out.push(0);
                    } else {
                        out.push(1);
                        encode_row(std::slice::from_ref(&elems), j, out);
                    }
                }
            }
        }
    }
    true
}

/// The bits of a float key such that values PostgreSQL calls equal encode
/// alike: `-0` as `0`, and every NaN as one NaN (NaN equals NaN in sorting,
/// grouping and joins).
#[inline]
pub fn canonical_float(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

/// Re-mixes a key hash for partitioning at `level`, so every level of
/// recursive partitioning uses bits independent of the previous levels' and
/// of the in-memory bucket bits.
#[inline]
pub fn rehash(h: u64, level: u32) -> u64 {
    tusk_chash::mix64(h ^ 0x243F_6A88_85A3_08D3u64.wrapping_mul(level as u64 + 1))
}
