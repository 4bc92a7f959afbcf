//! Branch-free search of a sorted array of up to 32 key bytes ("chunks").
//!
//! The linear node kinds keep their chunks sorted in a 32-byte array whose
//! first `count` entries are valid. Two questions are asked of it:
//!
//! * [`find_eq`]: the index of `key`, if present (lookup, delete);
//! * [`count_le`]: how many chunks are `<= key` (insert position, and the
//!   predecessor search the TidStore uses).
//!
//! Each is answered by comparing all 32 bytes at once, turning the result
//! into a bit mask, masking off the entries at or beyond `count`, and reading
//! the answer with one `trailing_zeros` or `count_ones`. There is no loop and
//! no data-dependent branch, so the cost does not depend on where the key
//! sits, and a shuffled probe sequence does not train the branch predictor
//! badly (seed 003: a byte-wise loop cost up to 2 % branch misses and 30 % of
//! the search time). The bytes past `count` may hold anything: they are
//! masked.
//!
//! Implementations: AVX2 (one 32-byte compare), SSE2 (two 16-byte compares;
//! SSE2 is part of the x86-64 baseline), and a portable scalar version that
//! computes the same mask bit by bit. The search uses AVX2 only when the
//! build enables it (`-C target-cpu=native` or `target-feature=+avx2`), and
//! SSE2 otherwise. Choosing AVX2 at run time looked free (a cached, well
//! predicted flag) but is not: a function compiled for a feature the
//! caller lacks cannot be inlined, so every search became a call through
//! the GOT plus the flag's load, some 20 instructions per tree level where
//! the inline SSE2 search takes about 12 — and a single TidStore lookup is
//! bounded by how many instructions it takes (see `TidStore::contains`). A
//! proptest checks that every implementation gives the scalar answer.

/// The 32 chunk bytes of a node, as the four little-endian words that hold
/// them. Searching the node's own words (rather than a copy) matters: copying
/// them to a byte array first made every search wait on a failed
/// store-to-load forward.
pub type Chunks = [u64; 4];

/// Ask the CPU to bring the cache line holding `addr` into L1 (see
/// `tusk_shmem::prefetch_line`).
#[inline(always)]
pub fn prefetch(addr: *const u64) {
    tusk_shmem::prefetch_line(addr)
}

/// Byte `i` of `chunks`.
#[inline(always)]
pub fn chunk(chunks: &Chunks, i: usize) -> u8 {
    (chunks[i >> 3] >> ((i & 7) * 8)) as u8
}

/// Mask with the low `count` bits set (`count <= 32`).
#[inline(always)]
fn valid_mask(count: usize) -> u32 {
    ((1u64 << count) - 1) as u32
}

/// Portable implementation: the same masks, computed byte by byte.
pub mod scalar {
    use super::{valid_mask, Chunks};

    #[inline]
    pub fn eq_mask(chunks: &Chunks, key: u8) -> u32 {
        let mut m = 0u32;
        for i in 0..32 {
            m |= u32::from(super::chunk(chunks, i) == key) << i;
        }
        m
    }

    #[inline]
    pub fn le_mask(chunks: &Chunks, key: u8) -> u32 {
        let mut m = 0u32;
        for i in 0..32 {
            m |= u32::from(super::chunk(chunks, i) <= key) << i;
        }
        m
    }

    pub fn find_eq(chunks: &Chunks, count: usize, key: u8) -> Option<usize> {
        let m = eq_mask(chunks, key) & valid_mask(count);
        (m != 0).then(|| m.trailing_zeros() as usize)
    }

    pub fn count_le(chunks: &Chunks, count: usize, key: u8) -> usize {
        (le_mask(chunks, key) & valid_mask(count)).count_ones() as usize
    }
}

#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::{valid_mask, Chunks};
    use std::arch::x86_64::*;

    /// SSE2: two 16-byte compares. `a <= b` for unsigned bytes is
    /// `min(a, b) == a`.
    #[inline(always)]
    fn masks_sse2(chunks: &Chunks, key: u8) -> (u32, u32) {
        // SAFETY: SSE2 is enabled on every x86-64 target; `chunks` is 32
        // readable bytes (four u64) and the loads are unaligned loads of 16
        // bytes at byte offsets 0 and 16. On x86 (little-endian) byte i of
        // the vector is chunk i.
        unsafe {
            let k = _mm_set1_epi8(key as i8);
            let lo = _mm_loadu_si128(chunks.as_ptr().cast());
            let hi = _mm_loadu_si128(chunks.as_ptr().add(2).cast());
            let eq = (_mm_movemask_epi8(_mm_cmpeq_epi8(lo, k)) as u32 & 0xffff)
                | ((_mm_movemask_epi8(_mm_cmpeq_epi8(hi, k)) as u32) << 16);
            let le = (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(lo, k), lo)) as u32 & 0xffff)
                | ((_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(hi, k), hi)) as u32) << 16);
            (eq, le)
        }
    }

    #[target_feature(enable = "avx2")]
    fn eq_mask_avx2(chunks: &Chunks, key: u8) -> u32 {
        // SAFETY: this function only runs when AVX2 is available (callers
        // check `have_avx2` or build with AVX2 enabled); `chunks` is
        // exactly 32 readable bytes, byte i being chunk i on little-endian
        // x86.
        unsafe {
            let k = _mm256_set1_epi8(key as i8);
            let v = _mm256_loadu_si256(chunks.as_ptr().cast());
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, k)) as u32
        }
    }

    #[target_feature(enable = "avx2")]
    fn le_mask_avx2(chunks: &Chunks, key: u8) -> u32 {
        // SAFETY: as in `eq_mask_avx2`.
        unsafe {
            let k = _mm256_set1_epi8(key as i8);
            let v = _mm256_loadu_si256(chunks.as_ptr().cast());
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(v, k), v)) as u32
        }
    }

    #[inline(always)]
    pub fn have_avx2() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    pub fn find_eq_sse2(chunks: &Chunks, count: usize, key: u8) -> Option<usize> {
        let m = masks_sse2(chunks, key).0 & valid_mask(count);
        (m != 0).then(|| m.trailing_zeros() as usize)
    }

    pub fn count_le_sse2(chunks: &Chunks, count: usize, key: u8) -> usize {
        (masks_sse2(chunks, key).1 & valid_mask(count)).count_ones() as usize
    }

    /// `None` when the CPU lacks AVX2.
    pub fn find_eq_avx2(chunks: &Chunks, count: usize, key: u8) -> Option<Option<usize>> {
        if !have_avx2() {
            return None;
        }
        // SAFETY: AVX2 was detected just above.
        let m = unsafe { eq_mask_avx2(chunks, key) } & valid_mask(count);
        Some((m != 0).then(|| m.trailing_zeros() as usize))
    }

    /// `None` when the CPU lacks AVX2.
    pub fn count_le_avx2(chunks: &Chunks, count: usize, key: u8) -> Option<usize> {
        if !have_avx2() {
            return None;
        }
        // SAFETY: AVX2 was detected just above.
        let m = unsafe { le_mask_avx2(chunks, key) } & valid_mask(count);
        Some(m.count_ones() as usize)
    }

    /// The build's best mask of chunks equal to `key` (see the module
    /// documentation: AVX2 only when compiled in, so that it inlines).
    #[inline(always)]
    pub fn eq_mask(chunks: &Chunks, key: u8) -> u32 {
        if cfg!(target_feature = "avx2") {
            // SAFETY: taken only in a build that enables AVX2 everywhere.
            unsafe { eq_mask_avx2(chunks, key) }
        } else {
            masks_sse2(chunks, key).0
        }
    }

    /// The build's best mask of chunks `<= key`.
    #[inline(always)]
    pub fn le_mask(chunks: &Chunks, key: u8) -> u32 {
        if cfg!(target_feature = "avx2") {
            // SAFETY: taken only in a build that enables AVX2 everywhere.
            unsafe { le_mask_avx2(chunks, key) }
        } else {
            masks_sse2(chunks, key).1
        }
    }
}

/// Index of `key` among the first `count` chunks (best implementation).
#[inline(always)]
pub fn find_eq(chunks: &Chunks, count: usize, key: u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    let m = x86::eq_mask(chunks, key);
    #[cfg(not(target_arch = "x86_64"))]
    let m = scalar::eq_mask(chunks, key);
    let m = m & valid_mask(count);
    (m != 0).then(|| m.trailing_zeros() as usize)
}

/// Number of the first `count` chunks that are `<= key` (best implementation).
#[inline(always)]
pub fn count_le(chunks: &Chunks, count: usize, key: u8) -> usize {
    #[cfg(target_arch = "x86_64")]
    let m = x86::le_mask(chunks, key);
    #[cfg(not(target_arch = "x86_64"))]
    let m = scalar::le_mask(chunks, key);
    (m & valid_mask(count)).count_ones() as usize
}

/// Name of the implementation [`find_eq`] uses in this build.
pub fn implementation() -> &'static str {
    if cfg!(not(target_arch = "x86_64")) {
        "scalar"
    } else if cfg!(target_feature = "avx2") {
        "avx2"
    } else {
        "sse2"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn simd_equals_scalar(mut bytes in proptest::array::uniform32(any::<u8>()),
                              count in 0usize..=32, key in any::<u8>(), sorted in any::<bool>()) {
            if sorted {
                bytes[..count].sort_unstable();
            }
            let mut chunks: Chunks = [0; 4];
            for (i, w) in chunks.iter_mut().enumerate() {
                *w = u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
            }
            let e = scalar::find_eq(&chunks, count, key);
            let l = scalar::count_le(&chunks, count, key);
            prop_assert_eq!(find_eq(&chunks, count, key), e);
            prop_assert_eq!(count_le(&chunks, count, key), l);
            // The scalar answer is the obvious one.
            prop_assert_eq!(e, bytes[..count].iter().position(|&c| c == key));
            prop_assert_eq!(l, bytes[..count].iter().filter(|&&c| c <= key).count());
            #[cfg(target_arch = "x86_64")]
            {
                prop_assert_eq!(x86::find_eq_sse2(&chunks, count, key), e);
                prop_assert_eq!(x86::count_le_sse2(&chunks, count, key), l);
                if let Some(r) = x86::find_eq_avx2(&chunks, count, key) {
                    prop_assert_eq!(r, e);
                }
                if let Some(r) = x86::count_le_avx2(&chunks, count, key) {
                    prop_assert_eq!(r, l);
                }
            }
        }
    }
}
