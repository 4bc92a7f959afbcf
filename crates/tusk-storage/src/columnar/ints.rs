//! Integer streams: the encodings every column segment is built from.
//!
//! A stream holds `n` signed 64-bit values (`n` is known from the row
//! group, never stored here). Its first byte names the encoding, chosen per
//! stream by [`encode`] as the one that makes it smallest:
//!
//! | kind | layout after the kind byte | good for |
//! |---|---|---|
//! | `PLAIN` | width byte (1, 2, 4, 8), `n` little-endian values of that width | nothing compresses |
//! | `FOR` | base i64, width u8, `n` values `v - base` bit-packed | narrow ranges (frame of reference) |
//! | `RLE` | run count u32, run values (a stream), run lengths (a stream) | long runs: sorted or constant columns, null maps |
//! | `DICT` | entry count u32, the sorted distinct values (a stream), width u8, `n` codes bit-packed | few distinct wide values |
//! | `DELTA` | first i64, the `n - 1` differences as a `FOR` body | ascending keys, dates of a sorted load |
//!
//! Nested streams (a run's values, a dictionary) are streams of this same
//! format, so each picks its own encoding too. Widths and differences are
//! computed in 128-bit arithmetic, so any i64 values (floats' bit patterns
//! included) encode losslessly.
//!
//! [`IntDecoder`] reads a stream front to back in slices of any length
//! (scans ask for a batch at a time): `PLAIN`, `FOR` and `DICT` read any
//! position directly; `RLE` and `DELTA` carry their position (the current
//! run, the running sum) from one call to the next.

use super::bitpack::{self, bits};
use crate::StorageError;
use std::ops::Range;

const PLAIN: u8 = 0;
const FOR: u8 = 1;
const RLE: u8 = 2;
const DICT: u8 = 3;
const DELTA: u8 = 4;

/// Largest dictionary worth considering (codes of at most 12 bits).
const DICT_MAX: usize = 4096;

fn corrupt(what: &str) -> StorageError {
    StorageError::Other(format!("corrupt columnar segment: {what}"))
}

/// What [`encode`] learns about the values in one pass.
struct Shape {
    min: i64,
    max: i64,
    runs: usize,
    longest_run: usize,
    /// Smallest and largest difference between neighbours.
    delta_min: i128,
    delta_max: i128,
}

fn shape(values: &[i64]) -> Shape {
    let mut s = Shape {
        min: values[0],
        max: values[0],
        runs: 1,
        longest_run: 1,
        delta_min: 0,
        delta_max: 0,
    };
    let mut run = 1usize;
    let mut first_delta = true;
    for w in values.windows(2) {
        let (a, b) = (w[0], w[1]);
        s.min = s.min.min(b);
        s.max = s.max.max(b);
        if a == b {
            run += 1;
        } else {
            s.runs += 1;
            s.longest_run = s.longest_run.max(run);
            run = 1;
        }
        let d = i128::from(b) - i128::from(a);
        if first_delta {
            s.delta_min = d;
            s.delta_max = d;
            first_delta = false;
        } else {
            s.delta_min = s.delta_min.min(d);
            s.delta_max = s.delta_max.max(d);
        }
    }
    s.longest_run = s.longest_run.max(run);
    s
}

/// Bits to store `max - min`; more than 64 when it does not fit a u64
/// (differences of i64s span up to 65 bits).
fn range_bits(min: i128, max: i128) -> u32 {
    let span = max - min;
    match u64::try_from(span) {
        Ok(s) => bits(s),
        Err(_) => 65,
    }
}

fn plain_width(min: i64, max: i64) -> usize {
    if i8::try_from(min).is_ok() && i8::try_from(max).is_ok() {
        1
    } else if i16::try_from(min).is_ok() && i16::try_from(max).is_ok() {
        2
    } else if i32::try_from(min).is_ok() && i32::try_from(max).is_ok() {
        4
    } else {
        8
    }
}

/// The distinct values, sorted, if there are at most [`DICT_MAX`].
fn distinct(values: &[i64]) -> Option<Vec<i64>> {
    let mut set = std::collections::HashSet::with_capacity(256);
    for &v in values {
        if set.insert(v) && set.len() > DICT_MAX {
            return None;
        }
    }
    let mut d: Vec<i64> = set.into_iter().collect();
    d.sort_unstable();
    Some(d)
}

/// Appends `values` (at least one) as a stream, in the encoding that takes
/// the fewest bytes.
pub fn encode(values: &[i64], out: &mut Vec<u8>) {
    if values.is_empty() {
        // A stream of no values: FOR with width 0.
        out.push(FOR);
        out.extend_from_slice(&0i64.to_le_bytes());
        out.push(0);
        bitpack::pack(std::iter::empty(), 0, out);
        return;
    }
    let n = values.len();
    let s = shape(values);
    let width = range_bits(s.min.into(), s.max.into());
    let plain = 2 + n * plain_width(s.min, s.max);
    let for_size = 10 + bitpack::packed_len(n, width);
    let mut best = (for_size, FOR);
    if plain < best.0 {
        best = (plain, PLAIN);
    }
    // A rough size of the nested streams: both frame-of-reference packed.
    if s.runs < n {
        let rle = 5
            + 10
            + bitpack::packed_len(s.runs, width)
            + 10
            + bitpack::packed_len(s.runs, bits(s.longest_run as u64));
        if rle < best.0 {
            best = (rle, RLE);
        }
    }
    if n > 1 {
        let dw = range_bits(s.delta_min, s.delta_max);
        // The differences' base must fit an i64, their span 64 bits.
        if i64::try_from(s.delta_min).is_ok() && dw <= 64 {
            let delta = 9 + 10 + bitpack::packed_len(n - 1, dw);
            if delta < best.0 {
                best = (delta, DELTA);
            }
        }
    }
    // A dictionary pays only when its codes are much narrower than the
    // values: look for the distinct values only then.
    if width > 12 && s.runs > 1 {
        if let Some(dict) = distinct(values) {
            let cw = bits(dict.len() as u64 - 1);
            let dict_size = 5 + 10 + bitpack::packed_len(dict.len(), width) + 1;
            let size = dict_size + bitpack::packed_len(n, cw);
            if size < best.0 {
                encode_dict(values, &dict, out);
                return;
            }
        }
    }
    match best.1 {
        PLAIN => {
            let w = plain_width(s.min, s.max);
            out.push(PLAIN);
            out.push(w as u8);
            for &v in values {
                out.extend_from_slice(&v.to_le_bytes()[..w]);
            }
        }
        RLE => encode_rle(values, s.runs, out),
        DELTA => {
            out.push(DELTA);
            out.extend_from_slice(&values[0].to_le_bytes());
            let base = s.delta_min as i64;
            let dw = range_bits(s.delta_min, s.delta_max);
            out.extend_from_slice(&base.to_le_bytes());
            out.push(dw as u8);
            let deltas = values
                .windows(2)
                .map(|w| (i128::from(w[1]) - i128::from(w[0]) - s.delta_min) as u64);
            bitpack::pack(deltas, dw, out);
        }
        _ => encode_for(values, s.min, width, out),
    }
}

fn encode_for(values: &[i64], min: i64, width: u32, out: &mut Vec<u8>) {
    out.push(FOR);
    out.extend_from_slice(&min.to_le_bytes());
    out.push(width as u8);
    bitpack::pack(
        values.iter().map(|&v| v.wrapping_sub(min) as u64),
        width,
        out,
    );
}

fn encode_rle(values: &[i64], runs: usize, out: &mut Vec<u8>) {
    let mut run_values = Vec::with_capacity(runs);
    let mut run_lengths = Vec::with_capacity(runs);
    let mut i = 0;
    while i < values.len() {
        let v = values[i];
        let len = values[i..].iter().take_while(|&&x| x == v).count();
        run_values.push(v);
        run_lengths.push(len as i64);
        i += len;
    }
    out.push(RLE);
    out.extend_from_slice(&(runs as u32).to_le_bytes());
    encode(&run_values, out);
    encode(&run_lengths, out);
}

fn encode_dict(values: &[i64], dict: &[i64], out: &mut Vec<u8>) {
    out.push(DICT);
    out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    encode(dict, out);
    let cw = bits(dict.len() as u64 - 1);
    out.push(cw as u8);
    let code = |v: i64| dict.binary_search(&v).expect("value in its dictionary") as u64;
    bitpack::pack(values.iter().map(|&v| code(v)), cw, out);
}

/// Converts a decoded i64 to a stored value type (truncating: the stream
/// was written from values of that type).
pub trait FromI64: Copy {
    fn from_i64(v: i64) -> Self;
}

macro_rules! from_i64_as {
    ($($t:ty),*) => {$(
        impl FromI64 for $t {
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
        }
    )*};
}
from_i64_as!(i8, i16, i32, i64, u8, u16, u32, u64);

impl FromI64 for bool {
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
}

/// A position in a buffer of streams, advanced as streams are parsed.
/// Decoders keep byte ranges of that buffer, not references into it, so
/// that the buffer can live beside them (a column decoder owns both); each
/// read is handed the buffer again.
pub struct Reader<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// The next `n` bytes, as a range of the buffer.
    pub fn take(&mut self, n: usize) -> Result<Range<usize>, StorageError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| corrupt("stream is truncated"))?;
        let r = self.pos..end;
        self.pos = end;
        Ok(r)
    }

    pub fn u8(&mut self) -> Result<u8, StorageError> {
        let r = self.take(1)?;
        Ok(self.buf[r.start])
    }

    pub fn u32(&mut self) -> Result<u32, StorageError> {
        let r = self.take(4)?;
        Ok(u32::from_le_bytes(self.buf[r].try_into().unwrap()))
    }

    fn i64(&mut self) -> Result<i64, StorageError> {
        let r = self.take(8)?;
        Ok(i64::from_le_bytes(self.buf[r].try_into().unwrap()))
    }

    fn packed(&mut self, n: usize, width: u32) -> Result<Range<usize>, StorageError> {
        if width > 64 {
            return Err(corrupt("bit width above 64"));
        }
        self.take(bitpack::packed_len(n, width))
    }

    /// Decodes a whole stream of `n` values.
    pub fn all_values(&mut self, n: usize) -> Result<Vec<i64>, StorageError> {
        let mut d = IntDecoder::new(self, n)?;
        let mut out = Vec::with_capacity(n);
        d.next_into(self.buf, n, &mut out);
        Ok(out)
    }
}

/// Reads a stream front to back (see the module doc). Every read is given
/// the buffer the decoder was made from.
#[derive(Debug)]
pub struct IntDecoder {
    kind: Kind,
    /// Values handed out (or skipped) so far.
    pos: usize,
    n: usize,
}

#[derive(Debug)]
enum Kind {
    Plain {
        width: usize,
        bytes: Range<usize>,
    },
    For {
        base: i64,
        width: u32,
        packed: Range<usize>,
    },
    Rle {
        values: Vec<i64>,
        ends: Vec<usize>,
        /// The run that holds position `pos`.
        run: usize,
    },
    Dict {
        dict: Vec<i64>,
        width: u32,
        packed: Range<usize>,
    },
    Delta {
        /// The value at position `pos - 1` (the first value before any).
        last: i64,
        base: i64,
        width: u32,
        packed: Range<usize>,
    },
}

impl IntDecoder {
    /// A decoder of the stream of `n` values at the reader's position; the
    /// reader is advanced past the stream.
    pub fn new(r: &mut Reader<'_>, n: usize) -> Result<IntDecoder, StorageError> {
        let kind = match r.u8()? {
            PLAIN => {
                let width = r.u8()? as usize;
                if !matches!(width, 1 | 2 | 4 | 8) {
                    return Err(corrupt("plain width"));
                }
                let len = n
                    .checked_mul(width)
                    .ok_or_else(|| corrupt("plain length"))?;
                Kind::Plain {
                    width,
                    bytes: r.take(len)?,
                }
            }
            FOR => {
                let base = r.i64()?;
                let width = r.u8()? as u32;
                Kind::For {
                    base,
                    width,
                    packed: r.packed(n, width)?,
                }
            }
            RLE => {
                let runs = r.u32()? as usize;
                if runs > n {
                    return Err(corrupt("more runs than values"));
                }
                let values = r.all_values(runs)?;
                let lengths = r.all_values(runs)?;
                let mut ends = Vec::with_capacity(runs);
                let mut end = 0usize;
                for l in lengths {
                    end = end
                        .checked_add(usize::try_from(l).map_err(|_| corrupt("run length"))?)
                        .ok_or_else(|| corrupt("run length"))?;
                    ends.push(end);
                }
                if end != n {
                    return Err(corrupt("runs do not add up"));
                }
                Kind::Rle {
                    values,
                    ends,
                    run: 0,
                }
            }
            DICT => {
                let entries = r.u32()? as usize;
                if entries == 0 || entries > DICT_MAX {
                    return Err(corrupt("dictionary size"));
                }
                let mut dict = r.all_values(entries)?;
                let width = r.u8()? as u32;
                if width < bits(entries as u64 - 1) || width > bits(DICT_MAX as u64 - 1) {
                    return Err(corrupt("dictionary code width"));
                }
                let packed = r.packed(n, width)?;
                // Every code the width can express indexes the dictionary,
                // so a damaged code reads a wrong value, never out of bounds.
                let last = dict[entries - 1];
                dict.resize(1 << width, last);
                Kind::Dict {
                    dict,
                    width,
                    packed,
                }
            }
            DELTA => {
                let first = r.i64()?;
                let base = r.i64()?;
                let width = r.u8()? as u32;
                Kind::Delta {
                    last: first,
                    base,
                    width,
                    packed: r.packed(n.saturating_sub(1), width)?,
                }
            }
            _ => return Err(corrupt("unknown integer encoding")),
        };
        Ok(IntDecoder { kind, pos: 0, n })
    }

    /// Values not yet read.
    pub fn remaining(&self) -> usize {
        self.n - self.pos
    }

    /// Appends the next `count` values (at most [`remaining`](Self::remaining))
    /// to `out`; `buf` is the buffer the decoder was made from.
    pub fn next_into<T: FromI64>(&mut self, buf: &[u8], count: usize, out: &mut Vec<T>) {
        assert!(count <= self.remaining(), "read past the end of a stream");
        if count == 0 {
            return;
        }
        out.reserve(count);
        let start = self.pos;
        match &mut self.kind {
            Kind::Plain { width, bytes } => {
                let w = *width;
                let chunk = &buf[bytes.start + start * w..bytes.start + (start + count) * w];
                match w {
                    1 => out.extend(chunk.iter().map(|&b| T::from_i64(b as i8 as i64))),
                    2 => out.extend(
                        chunk
                            .chunks_exact(2)
                            .map(|c| T::from_i64(i16::from_le_bytes([c[0], c[1]]) as i64)),
                    ),
                    4 => out.extend(
                        chunk
                            .chunks_exact(4)
                            .map(|c| T::from_i64(i32::from_le_bytes(c.try_into().unwrap()) as i64)),
                    ),
                    _ => out.extend(
                        chunk
                            .chunks_exact(8)
                            .map(|c| T::from_i64(i64::from_le_bytes(c.try_into().unwrap()))),
                    ),
                }
            }
            Kind::For {
                base,
                width,
                packed,
            } => {
                let base = *base;
                bitpack::unpack(&buf[packed.clone()], *width, start, count, |v| {
                    out.push(T::from_i64(base.wrapping_add(v as i64)))
                });
            }
            Kind::Dict {
                dict,
                width,
                packed,
            } => {
                bitpack::unpack(&buf[packed.clone()], *width, start, count, |c| {
                    out.push(T::from_i64(dict[c as usize]))
                });
            }
            Kind::Rle { values, ends, run } => {
                let mut pos = start;
                let end = start + count;
                while pos < end {
                    let run_end = ends[*run].min(end);
                    let v = T::from_i64(values[*run]);
                    out.extend(std::iter::repeat_n(v, run_end - pos));
                    pos = run_end;
                    if pos == ends[*run] {
                        *run += 1;
                    }
                }
            }
            Kind::Delta {
                last,
                base,
                width,
                packed,
            } => {
                let mut v = *last;
                let mut i = start;
                if i == 0 {
                    out.push(T::from_i64(v));
                    i = 1;
                }
                let (base, width) = (*base, *width);
                // Difference `k` leads from value `k` to value `k + 1`.
                bitpack::unpack(&buf[packed.clone()], width, i - 1, start + count - i, |d| {
                    v = v.wrapping_add(base.wrapping_add(d as i64));
                    out.push(T::from_i64(v));
                });
                *last = v;
            }
        }
        self.pos += count;
    }

    /// Passes over the next `count` values.
    pub fn skip(&mut self, buf: &[u8], count: usize) {
        assert!(
            count <= self.remaining(),
            "skipped past the end of a stream"
        );
        match &mut self.kind {
            Kind::Rle { ends, run, .. } => {
                let target = self.pos + count;
                while *run < ends.len() && ends[*run] <= target {
                    *run += 1;
                }
            }
            Kind::Delta {
                last,
                base,
                width,
                packed,
            } if count > 0 => {
                let mut v = *last;
                let from = self.pos.max(1);
                let (base, width) = (*base, *width);
                let n = self.pos + count - from;
                bitpack::unpack(&buf[packed.clone()], width, from - 1, n, |d| {
                    v = v.wrapping_add(base.wrapping_add(d as i64));
                });
                *last = v;
            }
            _ => {}
        }
        self.pos += count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(values: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(values, &mut out);
        let mut r = Reader::new(&out);
        let mut d = IntDecoder::new(&mut r, values.len()).unwrap();
        assert_eq!(r.pos, out.len(), "stream fully consumed");
        // Read in uneven slices, with a skip in the middle.
        let mut got: Vec<i64> = Vec::new();
        let mut pos = 0;
        let mut step = 1;
        while pos < values.len() {
            let n = step.min(values.len() - pos);
            if step % 5 == 0 {
                d.skip(&out, n);
                got.extend_from_slice(&values[pos..pos + n]);
            } else {
                d.next_into(&out, n, &mut got);
            }
            pos += n;
            step += 1;
        }
        assert_eq!(got, values);
        out
    }

    fn kind(values: &[i64]) -> u8 {
        round_trip(values)[0]
    }

    #[test]
    fn picks_the_smallest_encoding() {
        let seq: Vec<i64> = (0..10_000).map(|i| 1_000_000 + i * 3).collect();
        assert_eq!(kind(&seq), DELTA);
        let constant = vec![42i64; 5000];
        let enc = round_trip(&constant);
        assert!(enc.len() < 40, "{} bytes", enc.len());
        let runs: Vec<i64> = (0..10_000).map(|i| i / 1000).collect();
        assert_eq!(kind(&runs), RLE);
        let small: Vec<i64> = (0..10_000).map(|i| (i * 7919) % 100).collect();
        assert_eq!(kind(&small), FOR);
        let wide_few: Vec<i64> = (0..10_000)
            .map(|i| [i64::MIN, 7, i64::MAX, -5][(i * 7) % 4])
            .collect();
        assert_eq!(kind(&wide_few), DICT);
        let random: Vec<i64> = (0..1000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) as i64)
            .collect();
        let k = kind(&random);
        assert!(k == PLAIN || k == FOR, "{k}");
    }

    #[test]
    fn round_trips_edge_values() {
        round_trip(&[0]);
        round_trip(&[i64::MIN]);
        round_trip(&[i64::MIN, i64::MAX]);
        round_trip(&[i64::MAX, i64::MIN, 0, -1, 1]);
        round_trip(&(0..200).map(|i| i64::MAX - i).collect::<Vec<_>>());
        round_trip(
            &(0..200)
                .map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX })
                .collect::<Vec<_>>(),
        );
        let mut out = Vec::new();
        encode(&[], &mut out);
        assert_eq!(
            IntDecoder::new(&mut Reader::new(&out), 0)
                .unwrap()
                .remaining(),
            0
        );
    }

    #[test]
    fn rejects_damage() {
        let values: Vec<i64> = (0..1000).map(|i| i / 10).collect();
        let mut out = Vec::new();
        encode(&values, &mut out);
        for cut in [0, 1, 5, out.len() / 2, out.len() - 1] {
            let mut r = Reader::new(&out[..cut]);
            assert!(
                IntDecoder::new(&mut r, values.len()).is_err(),
                "cut at {cut}"
            );
        }
        let mut bad = out.clone();
        bad[0] = 99;
        assert!(IntDecoder::new(&mut Reader::new(&bad), values.len()).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_values_round_trip(values in proptest::collection::vec(proptest::prelude::any::<i64>(), 1..300)) {
            round_trip(&values);
        }

        #[test]
        fn narrow_values_round_trip(values in proptest::collection::vec(-3i64..3, 1..600)) {
            round_trip(&values);
        }
    }
}
