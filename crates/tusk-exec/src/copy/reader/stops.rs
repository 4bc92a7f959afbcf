//! Finding the next byte a scanner must look at, eight bytes at a time.
//!
//! The scanners (see `scan`) walk a record field by field, and inside a
//! field only a few byte values matter: the delimiter, the quote (or the
//! backslash in text format), the escape inside CSV quotes, `\n`, `\r` and
//! NUL. Every other byte is copied through untouched, so the scan only has
//! to find the next of these *stop bytes*. A byte-at-a-time loop with a
//! lookup table does that at several cycles a byte; [`Stops::find`] tests
//! a whole 64-bit word per step instead (SWAR: SIMD within a register),
//! which matters because COPY's input is mostly such plain bytes.
//!
//! ## The word test
//!
//! For a stop byte `c`, `x = w ^ splat(c)` has a zero byte exactly where
//! `w` holds `c`. `(x - splat(0x01)) & !x & splat(0x80)` sets the high bit
//! of every zero byte of `x`, and may also set it in bytes *above* a zero
//! byte (the subtraction's borrow runs upwards), never below the lowest
//! one. So in the OR of that mask over all stop bytes, the lowest set bit
//! marks exactly the first stop byte of the word (words are read little
//! endian: lower bytes come first in the input), and the bits above it
//! are never used. The tail shorter than a word goes byte by byte through
//! the same set, kept as a table.

/// At most this many distinct stop bytes (repeats pad the set).
const MAX_STOPS: usize = 5;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A set of stop bytes (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct Stops {
    /// Each stop byte repeated in every byte of a word.
    splats: [u64; MAX_STOPS],
    table: [bool; 256],
}

impl Stops {
    /// The set of `bytes` (at most five distinct values; duplicates are
    /// fine).
    pub(super) fn new(bytes: &[u8]) -> Stops {
        let mut distinct: Vec<u8> = Vec::with_capacity(MAX_STOPS);
        for &b in bytes {
            if !distinct.contains(&b) {
                distinct.push(b);
            }
        }
        assert!(
            !distinct.is_empty() && distinct.len() <= MAX_STOPS,
            "a scanner stops at one to five byte values"
        );
        let mut table = [false; 256];
        let mut splats = [0; MAX_STOPS];
        for (i, s) in splats.iter_mut().enumerate() {
            // Unused slots repeat the first byte: the OR is unchanged.
            let b = distinct.get(i).copied().unwrap_or(distinct[0]);
            *s = ONES * u64::from(b);
            table[b as usize] = true;
        }
        Stops { splats, table }
    }

    /// The position of the first stop byte in `buf` at or after `p`, or
    /// `buf.len()` if there is none.
    #[inline]
    pub(super) fn find(&self, buf: &[u8], mut p: usize) -> usize {
        while let Some(chunk) = buf.get(p..p + 8) {
            let w = u64::from_le_bytes(chunk.try_into().expect("an 8-byte slice"));
            let mut mask = 0;
            for s in self.splats {
                let x = w ^ s;
                mask |= x.wrapping_sub(ONES) & !x & HIGHS;
            }
            if mask != 0 {
                return p + (mask.trailing_zeros() / 8) as usize;
            }
            p += 8;
        }
        while p < buf.len() && !self.table[buf[p] as usize] {
            p += 1;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time answer.
    fn naive(stops: &[u8], buf: &[u8], p: usize) -> usize {
        (p..buf.len())
            .find(|&i| stops.contains(&buf[i]))
            .unwrap_or(buf.len())
    }

    #[test]
    fn finds_the_first_stop_byte_anywhere_in_a_word() {
        let set = [b',', b'"', b'\n', b'\r', 0];
        let stops = Stops::new(&set);
        // Every position of a stop byte in and across words, with bytes
        // around it that trip a careless bit test (0x80, 0x81, 0xff, one
        // above or below a stop byte).
        let fillers = [b'a', 0x80, 0x81, 0xff, 0x01, b',' + 1, b'"' - 1, b'\n' + 1];
        for len in 0..24 {
            for &f in &fillers {
                for at in 0..=len {
                    for &s in &set {
                        let mut buf = vec![f; len];
                        if at < len {
                            buf[at] = s;
                        }
                        for start in 0..=len {
                            assert_eq!(
                                stops.find(&buf, start),
                                naive(&set, &buf, start),
                                "buf {buf:?} from {start}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn several_stop_bytes_in_a_word_give_the_first() {
        let set = [b'\t', b'\\', b'\n', b'\r', 0];
        let stops = Stops::new(&set);
        let buf = b"ab\\c\td\0e\nfghijklmno\r";
        let mut p = 0;
        let mut found = Vec::new();
        while p < buf.len() {
            p = stops.find(buf, p);
            if p < buf.len() {
                found.push(p);
                p += 1;
            }
        }
        assert_eq!(found, vec![2, 4, 6, 8, 19]);
    }

    #[test]
    fn duplicate_stop_bytes_are_one() {
        // CSV with QUOTE = ESCAPE (the default) inside quotes.
        let stops = Stops::new(&[b'\n', b'\r', 0, b'"', b'"']);
        assert_eq!(stops.find(b"abcdefghij\"k", 0), 10);
        assert_eq!(stops.find(b"abcdefghijk", 3), 11);
    }
}
