//! The SHA-2 digests (FIPS 180-4) behind `sha224`, `sha256`, `sha384` and
//! `sha512` of a `bytea`.
//!
//! SHA-256 works on 32-bit words and 64-byte blocks, SHA-512 on 64-bit
//! words and 128-byte blocks; both pad the message with a 1 bit, zeros and
//! its length in bits, then run each block through 64 (80) rounds of the
//! compression function. SHA-224 and SHA-384 are SHA-256 and SHA-512 with
//! other initial values, cut to 28 and 48 bytes. The round constants and
//! initial values are derived from the primes (see the tables).

/// The first 64 bits of the fractional parts of the cube roots of the
/// first 80 primes (FIPS 180-4, 4.2.3); SHA-256's constants are the first
/// 64 of them, cut to their high 32 bits.
const K: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];
/// The first 64 bits of the fractional parts of the square roots of the
/// first 8 primes: SHA-512's initial hash, whose high halves are SHA-256's.
const IV_512: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];
/// The same for the 9th to 16th primes: SHA-384's initial hash, whose low
/// halves are SHA-224's.
const IV_384: [u64; 8] = [
    0xcbbb9d5dc1059ed8,
    0x629a292a367cd507,
    0x9159015a3070dd17,
    0x152fecd8f70e5939,
    0x67332667ffc00b31,
    0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7,
    0x47b5481dbefa4fa4,
];

/// SHA-224's initial hash: the low halves of SHA-384's.
fn iv_224() -> [u32; 8] {
    IV_384.map(|v| v as u32)
}

/// SHA-256's initial hash: the high halves of SHA-512's.
fn iv_256() -> [u32; 8] {
    IV_512.map(|v| (v >> 32) as u32)
}

/// The message padded to whole blocks of `block` bytes, with its length
/// in bits in the last `len_bytes` bytes (big-endian).
fn padded(data: &[u8], block: usize, len_bytes: usize) -> Vec<u8> {
    let mut m = data.to_vec();
    m.push(0x80);
    while m.len() % block != block - len_bytes {
        m.push(0);
    }
    let bits = (data.len() as u128) * 8;
    m.extend_from_slice(&bits.to_be_bytes()[16 - len_bytes..]);
    m
}

/// What the compression function needs from its word type: SHA-256's
/// 32-bit words and SHA-512's 64-bit words differ only in these.
trait Word: Copy {
    /// Bytes per word; a block is 16 words.
    const BYTES: usize;
    /// Rounds per block (and words in the message schedule).
    const ROUNDS: usize;
    /// Rotations and shift of the schedule's σ0 and σ1.
    const SMALL_SIGMA: [(u32, u32, u32); 2];
    /// Rotations of the rounds' Σ0 and Σ1.
    const BIG_SIGMA: [(u32, u32, u32); 2];
    fn zero() -> Self;
    /// Round constant `i`, taken from `K`.
    fn k(i: usize) -> Self;
    fn from_be(bytes: &[u8]) -> Self;
    fn put_be(self, out: &mut Vec<u8>);
    fn add(self, other: Self) -> Self;
    fn rotr(self, n: u32) -> Self;
    fn shr(self, n: u32) -> Self;
    fn xor(self, other: Self) -> Self;
    fn and(self, other: Self) -> Self;
    fn not(self) -> Self;
}

macro_rules! word {
    ($t:ty, $rounds:expr, $small:expr, $big:expr, $k:expr) => {
        impl Word for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            const ROUNDS: usize = $rounds;
            const SMALL_SIGMA: [(u32, u32, u32); 2] = $small;
            const BIG_SIGMA: [(u32, u32, u32); 2] = $big;
            fn zero() -> Self {
                0
            }
            fn k(i: usize) -> Self {
                $k(K[i])
            }
            fn from_be(bytes: &[u8]) -> Self {
                <$t>::from_be_bytes(bytes.try_into().expect("one word"))
            }
            fn put_be(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn rotr(self, n: u32) -> Self {
                self.rotate_right(n)
            }
            fn shr(self, n: u32) -> Self {
                self >> n
            }
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            fn and(self, other: Self) -> Self {
                self & other
            }
            fn not(self) -> Self {
                !self
            }
        }
    };
}

word!(
    u32,
    64,
    [(7, 18, 3), (17, 19, 10)],
    [(2, 13, 22), (6, 11, 25)],
    |k: u64| (k >> 32) as u32
);
word!(
    u64,
    80,
    [(1, 8, 7), (19, 61, 6)],
    [(28, 34, 39), (14, 18, 41)],
    |k: u64| k
);

/// σ (with a shift) or Σ (with a third rotation) of `x`.
fn sigma<W: Word>(x: W, (r1, r2, r3): (u32, u32, u32), shift: bool) -> W {
    let third = if shift { x.shr(r3) } else { x.rotr(r3) };
    x.rotr(r1).xor(x.rotr(r2)).xor(third)
}

/// The hash of `data` from the initial value `iv`: the padded message's
/// blocks run through the compression function one after another.
fn hash_words<W: Word>(data: &[u8], iv: [W; 8]) -> [W; 8] {
    let block_bytes = 16 * W::BYTES;
    let mut h = iv;
    let mut w = vec![W::zero(); W::ROUNDS];
    for block in padded(data, block_bytes, 2 * W::BYTES).chunks(block_bytes) {
        for (i, c) in block.chunks(W::BYTES).enumerate() {
            w[i] = W::from_be(c);
        }
        for i in 16..W::ROUNDS {
            let s0 = sigma(w[i - 15], W::SMALL_SIGMA[0], true);
            let s1 = sigma(w[i - 2], W::SMALL_SIGMA[1], true);
            w[i] = w[i - 16].add(s0).add(w[i - 7]).add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for (i, &wi) in w.iter().enumerate() {
            let ch = e.and(f).xor(e.not().and(g));
            let t1 = hh
                .add(sigma(e, W::BIG_SIGMA[1], false))
                .add(ch)
                .add(W::k(i))
                .add(wi);
            let maj = a.and(b).xor(a.and(c)).xor(b.and(c));
            let t2 = sigma(a, W::BIG_SIGMA[0], false).add(maj);
            (hh, g, f, e, d, c, b, a) = (g, f, e, d.add(t1), c, b, a, t1.add(t2));
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.add(y);
        }
    }
    h
}

/// The first `len` bytes of the big-endian words of the hash.
fn cut<W: Word>(words: [W; 8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 * W::BYTES);
    for w in words {
        w.put_be(&mut out);
    }
    out.truncate(len);
    out
}

/// The digest of `data` with `bits` of output (224, 256, 384 or 512).
pub fn digest(bits: u32, data: &[u8]) -> Vec<u8> {
    match bits {
        224 => cut(hash_words(data, iv_224()), 28),
        256 => cut(hash_words(data, iv_256()), 32),
        384 => cut(hash_words(data, IV_384), 48),
        _ => cut(hash_words(data, IV_512), 64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn fips_examples() {
        // FIPS 180-4's examples: "abc" and the two-block messages.
        assert_eq!(
            hex(&digest(256, b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&digest(224, b"abc")),
            "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"
        );
        assert_eq!(
            hex(&digest(
                256,
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&digest(512, b"abc")),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a\
             2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        );
        assert_eq!(
            hex(&digest(384, b"abc")),
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed\
             8086072ba1e7cc2358baeca134c825a7"
        );
        assert_eq!(
            hex(&digest(256, b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
