//! A hasher for the small in-process hash maps on a statement's path —
//! the lock table, the open relation files, a session's statement cache
//! and its portals — whose keys are integers or short strings the process
//! made itself.
//!
//! The standard library's SipHash resists hash flooding, at about 20
//! instructions a byte plus a fixed cost per key; on pgbench's select
//! those lookups added up to over a thousand instructions a statement.
//! [`WordHasher`] mixes a word at a time with one rotate and one multiply
//! (the multiplier is an odd constant with well-spread bits, as FxHash
//! uses), which is enough for keys no outsider chooses. Maps whose keys
//! come from client data (hash joins, aggregates) keep their own hashing.

use std::hash::{BuildHasherDefault, Hasher};

/// See the module doc.
#[derive(Default, Clone, Copy)]
pub struct WordHasher(u64);

const MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl WordHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.mix(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            // The length tells "ab" from "ab\0".
            self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, v: u8) {
        self.mix(v as u64);
    }

    fn write_u32(&mut self, v: u32) {
        self.mix(v as u64);
    }

    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.mix(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`WordHasher`].
pub type FastHashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash<T: Hash>(v: T) -> u64 {
        BuildHasherDefault::<WordHasher>::default().hash_one(v)
    }

    #[test]
    fn distinguishes_near_keys() {
        let keys = [
            "",
            "a",
            "b",
            "ab",
            "ab\0",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
        ];
        let mut hashes: Vec<u64> = keys.iter().map(hash).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), keys.len());
        assert_ne!(hash((1u32, 2u32)), hash((2u32, 1u32)));
    }

    #[test]
    fn map_works() {
        let mut m: FastHashMap<String, u32> = FastHashMap::default();
        for i in 0..1000 {
            m.insert(format!("SELECT {i}"), i);
        }
        assert!((0..1000).all(|i| m[&format!("SELECT {i}")] == i));
    }
}
