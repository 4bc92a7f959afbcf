//! PostgreSQL's LZ compression (`pglz`), byte for byte.
//!
//! TOAST compresses long values before it moves them out of line (see
//! `toast`). tusk uses PostgreSQL 15's default method and reproduces its
//! output exactly, so that a compressed value has the size PostgreSQL's
//! has: `pg_column_size` reports it, and PostgreSQL's decisions (store
//! inline or out of line, whether an index entry fits) depend on it.
//!
//! ## Format
//!
//! The output is a sequence of items, each announced by one bit of a
//! control byte (least significant bit first; a control byte covers the
//! next eight items): 0 is a literal byte, copied; 1 is a back reference,
//! two or three bytes: `offset` (1..4095) back into the output produced so
//! far, `length` (3..273) bytes to copy from there:
//!
//! ```text
//!   [ (offset >> 4) & 0xf0 | (length - 3) ] [ offset & 0xff ]                 length 3..=17
//!   [ (offset >> 4) & 0xf0 | 0x0f ] [ offset & 0xff ] [ length - 18 ]         length 18..=273
//! ```
//!
//! A reference may overlap the bytes it produces (a run of one byte is a
//! literal and a reference at offset 1).
//!
//! ## Compression (`pglz_compress` with `PGLZ_strategy_default`)
//!
//! Inputs under 32 bytes are not compressed. The encoder walks the input
//! once, keeping the positions of the last 4096 bytes in hash chains
//! keyed by their next four bytes (a table of 512 to 8192 chains by input
//! size). At each position it follows the chain, newest first, for the
//! longest match within 4095 bytes, stopping early once a match reaches
//! the "good" length (128, lowered by 10 % per chain step); a match of 3
//! or more bytes becomes a reference, anything else a literal. It gives up
//! — the value is stored uncompressed — when no match was found in the
//! first 1024 bytes of output, or the output would not be at least 25 %
//! smaller than the input.

/// `PGLZ_strategy_default`: inputs shorter than this are not compressed.
pub const MIN_INPUT: usize = 32;
const MIN_COMP_RATE: usize = 25;
const FIRST_SUCCESS_BY: usize = 1024;
const MATCH_SIZE_GOOD: i32 = 128;
const MATCH_SIZE_DROP: i32 = 10;
const MAX_MATCH: usize = 273;
const HISTORY_SIZE: usize = 4096;
const MAX_OFFSET: usize = 0x0fff;

/// A history entry: a position of the input in one hash chain. Entry 0
/// is the chains' end marker (PostgreSQL's `INVALID_ENTRY`).
#[derive(Clone, Copy, Default)]
struct Entry {
    next: u16,
    prev: u16,
    hindex: u16,
    pos: u32,
}

/// The hash chain of the bytes at `s` (`pglz_hist_idx`). PostgreSQL
/// reads the input as `char`, signed on the platforms it is built for, so
/// bytes from 0x80 up take part sign-extended; so they do here.
#[inline]
fn hash(input: &[u8], s: usize, mask: usize) -> usize {
    let b = |i: usize| input[s + i] as i8 as i32;
    let h = if input.len() - s < 4 {
        b(0)
    } else {
        (b(0) << 6) ^ (b(1) << 4) ^ (b(2) << 2) ^ b(3)
    };
    (h & mask as i32) as usize
}

/// The encoder's state: chains and entries (`hist_start`, `hist_entries`).
struct History {
    start: Vec<u16>,
    entries: Vec<Entry>,
    next: usize,
    recycle: bool,
    mask: usize,
}

impl History {
    fn new(len: usize) -> History {
        let size = match len {
            0..128 => 512,
            128..256 => 1024,
            256..512 => 2048,
            512..1024 => 4096,
            _ => 8192,
        };
        History {
            start: vec![0; size],
            entries: vec![Entry::default(); HISTORY_SIZE + 1],
            next: 1,
            recycle: false,
            mask: size - 1,
        }
    }

    /// Adds position `s` to its chain (`pglz_hist_add`), recycling the
    /// oldest entry once all are in use.
    fn add(&mut self, input: &[u8], s: usize) {
        let h = hash(input, s, self.mask);
        let me = self.next;
        if self.recycle {
            let old = self.entries[me];
            if old.prev == 0 {
                self.start[old.hindex as usize] = old.next;
            } else {
                self.entries[old.prev as usize].next = old.next;
            }
            if old.next != 0 {
                self.entries[old.next as usize].prev = old.prev;
            }
        }
        let head = self.start[h];
        self.entries[me] = Entry {
            next: head,
            prev: 0,
            hindex: h as u16,
            pos: s as u32,
        };
        // Entry 0 is never a chain member: writing to it when the chain
        // was empty is harmless, as in PostgreSQL.
        self.entries[head as usize].prev = me as u16;
        self.start[h] = me as u16;
        self.next += 1;
        if self.next > HISTORY_SIZE {
            self.next = 1;
            self.recycle = true;
        }
    }

    /// The longest match for the bytes at `s` in the chain of their hash
    /// (`pglz_find_match`): (length, offset) when 3 bytes or longer.
    fn find(&self, input: &[u8], s: usize) -> Option<(usize, usize)> {
        let mut good = MATCH_SIZE_GOOD;
        let (mut len, mut off) = (0usize, 0usize);
        let mut e = self.start[hash(input, s, self.mask)];
        while e != 0 {
            let entry = &self.entries[e as usize];
            let hp = entry.pos as usize;
            let this_off = s - hp;
            if this_off >= MAX_OFFSET {
                break;
            }
            let mut this_len = 0;
            if len >= 16 {
                if input[s..s + len] == input[hp..hp + len] {
                    this_len = len;
                    while s + this_len < input.len()
                        && input[s + this_len] == input[hp + this_len]
                        && this_len < MAX_MATCH
                    {
                        this_len += 1;
                    }
                }
            } else {
                while s + this_len < input.len()
                    && input[s + this_len] == input[hp + this_len]
                    && this_len < MAX_MATCH
                {
                    this_len += 1;
                }
            }
            if this_len > len {
                len = this_len;
                off = this_off;
            }
            e = entry.next;
            if e != 0 {
                if len as i32 >= good {
                    break;
                }
                good -= good * MATCH_SIZE_DROP / 100;
            }
        }
        (len > 2).then_some((len, off))
    }
}

/// Compresses `input` as PostgreSQL's default strategy does, appending
/// to `out`; false (and `out` as it was) when the strategy gives up (see
/// the module doc).
pub fn compress(input: &[u8], out: &mut Vec<u8>) -> bool {
    let n = input.len();
    if n < MIN_INPUT {
        return false;
    }
    let result_max = if n > i32::MAX as usize / 100 {
        (n / 100) * (100 - MIN_COMP_RATE)
    } else {
        n * (100 - MIN_COMP_RATE) / 100
    };
    let base = out.len();
    let mut hist = History::new(n);
    // The control byte being filled, where it goes, and its next bit.
    let mut ctrl_at: Option<usize> = None;
    let (mut ctrl_byte, mut ctrl_bit) = (0u8, 0u32);
    let mut found = false;
    let mut s = 0;
    let fail = |out: &mut Vec<u8>| {
        out.truncate(base);
        false
    };
    while s < n {
        let produced = out.len() - base;
        if produced >= result_max || (!found && produced >= FIRST_SUCCESS_BY) {
            return fail(out);
        }
        // A new control byte every eight items.
        if ctrl_bit & 0xff == 0 {
            if let Some(at) = ctrl_at {
                out[at] = ctrl_byte;
            }
            ctrl_at = Some(out.len());
            out.push(0);
            ctrl_byte = 0;
            ctrl_bit = 1;
        }
        match hist.find(input, s) {
            Some((len, off)) => {
                ctrl_byte |= ctrl_bit as u8;
                ctrl_bit <<= 1;
                if len > 17 {
                    out.push((((off & 0xf00) >> 4) | 0x0f) as u8);
                    out.push((off & 0xff) as u8);
                    out.push((len - 18) as u8);
                } else {
                    out.push((((off & 0xf00) >> 4) | (len - 3)) as u8);
                    out.push((off & 0xff) as u8);
                }
                for i in s..s + len {
                    hist.add(input, i);
                }
                s += len;
                found = true;
            }
            None => {
                ctrl_bit <<= 1;
                out.push(input[s]);
                hist.add(input, s);
                s += 1;
            }
        }
    }
    if let Some(at) = ctrl_at {
        out[at] = ctrl_byte;
    }
    if out.len() - base >= result_max {
        return fail(out);
    }
    true
}

/// Decompresses `input` (what [`compress`] made of `raw_len` bytes) into
/// `out`; `None` if the data is corrupt.
pub fn decompress(input: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Option<()> {
    let base = out.len();
    out.reserve(raw_len);
    let mut i = 0;
    while i < input.len() && out.len() - base < raw_len {
        let ctrl = input[i];
        i += 1;
        for bit in 0..8 {
            if i >= input.len() || out.len() - base >= raw_len {
                break;
            }
            if ctrl & (1 << bit) != 0 {
                let b0 = *input.get(i)? as usize;
                let b1 = *input.get(i + 1)? as usize;
                let mut len = (b0 & 0x0f) + 3;
                let off = ((b0 & 0xf0) << 4) | b1;
                i += 2;
                if len == 18 {
                    len += *input.get(i)? as usize;
                    i += 1;
                }
                let from = (out.len() - base).checked_sub(off).filter(|_| off > 0)? + base;
                for k in 0..len {
                    let b = out[from + k];
                    out.push(b);
                }
            } else {
                out.push(input[i]);
                i += 1;
            }
        }
    }
    (out.len() - base == raw_len && i == input.len()).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &[u8]) -> Option<usize> {
        let mut c = Vec::new();
        if !compress(v, &mut c) {
            assert!(c.is_empty());
            return None;
        }
        let mut d = Vec::new();
        decompress(&c, v.len(), &mut d).expect("valid");
        assert_eq!(d, v);
        Some(c.len())
    }

    #[test]
    fn compresses_repetition_and_gives_up_on_noise() {
        assert_eq!(round_trip(b"short"), None);
        let rep = b"abcdefgh".repeat(1000);
        let n = round_trip(&rep).unwrap();
        assert!(n < 200, "{n}");
        assert_eq!(round_trip(&vec![b'x'; 10_000]).map(|n| n < 150), Some(true));
        // A pseudo-random sequence has no repeats to find.
        let mut x = 12345u32;
        let noise: Vec<u8> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert_eq!(round_trip(&noise), None);
        // Text with some repetition, of every hash table size.
        for len in [40, 130, 300, 700, 3000, 70_000] {
            let text: Vec<u8> = (0..len)
                .map(|i| b"the quick brown fox jumps over the lazy dog "[(i + i / 997 % 3) % 44])
                .collect();
            round_trip(&text);
        }
    }

    /// Compressed sizes PostgreSQL 15 reports for the same values
    /// (`pg_column_size` of a compressed inline datum is the compressed
    /// bytes and 8 bytes of headers; `None`: PostgreSQL stored the value
    /// uncompressed, pglz having given up).
    #[test]
    fn sizes_match_postgres() {
        let join = |sep: &str, f: &dyn Fn(u64) -> u64, n: u64| {
            (1..=n)
                .map(|i| f(i).to_string())
                .collect::<Vec<_>>()
                .join(sep)
                .into_bytes()
        };
        let cases: [(Vec<u8>, Option<usize>); 5] = [
            // repeat('abcdefgh', 1000)
            (b"abcdefgh".repeat(1000), Some(111)),
            // repeat('the quick brown fox jumps over the lazy dog ', 100)
            (
                b"the quick brown fox jumps over the lazy dog ".repeat(100),
                Some(107),
            ),
            // string_agg(i::text, ',' order by i), i in 1..2000
            (join(",", &|i| i, 2000), None),
            // string_agg((i*i % 1000)::text, ' ' order by i), i in 1..3000
            (join(" ", &|i| i * i % 1000, 3000), Some(1284)),
            // string_agg((i*7919 % 100003)::text, ';' order by i), i in 1..1500
            (join(";", &|i| i * 7919 % 100_003, 1500), None),
        ];
        for (v, pg) in cases {
            assert_eq!(round_trip(&v).map(|n| n + 8), pg, "{} bytes", v.len());
        }
    }

    #[test]
    fn corrupt_input_is_refused() {
        let mut c = Vec::new();
        assert!(compress(
            &b"abcabcabcabcabcabcabcabcabcabcabcabc".repeat(3),
            &mut c
        ));
        let mut d = Vec::new();
        assert!(decompress(&c, 1000, &mut d).is_none());
        // A reference before the start of the output.
        let mut d = Vec::new();
        assert!(decompress(&[0x01, 0x00, 0x05], 3, &mut d).is_none());
    }
}
