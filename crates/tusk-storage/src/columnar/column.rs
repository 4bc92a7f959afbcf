//! Column segments: one column's values of one row group, encoded.
//!
//! A [`ColumnBuffer`] collects a column's values as a writer receives rows
//! (typed arrays plus a null map); [`ColumnBuffer::encode`] turns it into a
//! segment and computes its [`ColumnStats`]; a [`ColumnDecoder`] reads a
//! segment back, a slice of rows at a time, into the caller's arrays.
//!
//! ## Segment layout
//!
//! ```text
//! flags u8            bit 0: the column has NULLs
//! [null map]          an integer stream of 0/1 per row, when it has NULLs
//! body                by type, below
//! ```
//!
//! Every row has a value in the body, NULL rows a placeholder (the previous
//! value, which keeps runs and differences intact), so that a slice of rows
//! decodes with no reference to the null map. The bodies are integer
//! streams (`ints`):
//!
//! | type | body |
//! |---|---|
//! | `boolean`, `smallint`, `integer`, `bigint`, `date`, `time`, `timestamp[tz]` | the values |
//! | `real`, `double precision` | the values' bit patterns |
//! | `numeric` | the scales, then repr 0 and the unscaled values when all fit 64 bits, else repr 1 and 16 bytes each |
//! | `interval` | microseconds, days, months |
//! | strings, `bytea`, `uuid` (16 bytes) | repr 0: the lengths, then the bytes; repr 1 (dictionary): the entry count u32, the entries' lengths and bytes, then each row's code |
//!
//! A string column gets a dictionary when it has at most 4096 distinct
//! values and the dictionary form is smaller.
//!
//! ## Statistics
//!
//! Each segment records its NULL count and the smallest and largest
//! non-NULL value ([`Bound`]) in the row group header, for filters to skip
//! row groups by. For strings these are bounds rather than values: the
//! smallest value cut to [`STRING_BOUND_BYTES`] bytes, and the largest cut
//! and incremented so that it stays above every value (no upper bound if
//! it cannot be). `character(n)` (whose comparisons ignore trailing
//! blanks) and `interval` have none.

use super::ints::{self, FromI64, IntDecoder, Reader};
use crate::catalog::DataType;
use crate::tuple::{Attr, TupleBuilder};
use crate::StorageError;
use std::cmp::Ordering;
use std::collections::HashMap;

/// Longest string bound kept in the statistics.
pub const STRING_BOUND_BYTES: usize = 64;
/// Largest string dictionary.
const TEXT_DICT_MAX: usize = 4096;

fn corrupt(what: &str) -> StorageError {
    StorageError::Other(format!("corrupt columnar segment: {what}"))
}

/// A column's values in memory, by representation.
#[derive(Debug, Clone)]
enum Values {
    /// Every integer type, `boolean`, `date`, `time`, `timestamp[tz]`.
    Int(Vec<i64>),
    Float4(Vec<f32>),
    Float8(Vec<f64>),
    /// Unscaled values and their scales.
    Numeric(Vec<i128>, Vec<u16>),
    /// Microseconds, days, months.
    Interval(Vec<i64>, Vec<i32>, Vec<i32>),
    /// Strings: the end offset of each in `bytes`.
    Text(Vec<u32>, Vec<u8>),
}

/// One column's values as a writer collects them (see the module doc).
#[derive(Debug, Clone)]
pub struct ColumnBuffer {
    ty: DataType,
    values: Values,
    nulls: Vec<bool>,
    null_count: usize,
}

/// A smallest or largest value of a segment (see "Statistics").
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    Int(i64),
    Float(f64),
    /// Unscaled value and scale.
    Numeric(i128, u16),
    Bytes(Vec<u8>),
}

/// What the row group header records of a segment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnStats {
    pub null_count: u32,
    /// No value is below `min`; `None` when unknown (no non-NULL value, or
    /// a type without statistics).
    pub min: Option<Bound>,
    /// No value is above `max`.
    pub max: Option<Bound>,
}

impl ColumnBuffer {
    pub fn new(ty: DataType) -> ColumnBuffer {
        let values = match ty {
            DataType::Float4 => Values::Float4(Vec::new()),
            DataType::Float8 => Values::Float8(Vec::new()),
            DataType::Numeric => Values::Numeric(Vec::new(), Vec::new()),
            DataType::Interval => Values::Interval(Vec::new(), Vec::new(), Vec::new()),
            t if held_as_bytes(t) => Values::Text(Vec::new(), Vec::new()),
            _ => Values::Int(Vec::new()),
        };
        ColumnBuffer {
            ty,
            values,
            nulls: Vec::new(),
            null_count: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.nulls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nulls.is_empty()
    }

    /// Forgets every value (the buffer is reused for the next row group).
    pub fn clear(&mut self) {
        *self = ColumnBuffer::new(self.ty);
    }

    /// Appends one stored attribute (of the column's type, or NULL).
    pub fn push(&mut self, a: Attr<'_>) {
        let null = matches!(a, Attr::Null);
        match (&mut self.values, a) {
            (Values::Int(v), Attr::Bool(x)) => v.push(x as i64),
            (Values::Int(v), Attr::Int2(x)) => v.push(x.into()),
            (Values::Int(v), Attr::Int4(x)) => v.push(x.into()),
            (Values::Int(v), Attr::Int8(x)) => v.push(x),
            (Values::Float4(v), Attr::Float4(x)) => v.push(x),
            (Values::Float8(v), Attr::Float8(x)) => v.push(x),
            (Values::Numeric(v, s), Attr::Numeric(x, scale)) => {
                v.push(x);
                s.push(scale);
            }
            (Values::Interval(us, d, m), Attr::Interval(a, b, c)) => {
                us.push(a);
                d.push(b);
                m.push(c);
            }
            (Values::Text(o, b), Attr::Text(x)) => {
                b.extend_from_slice(x);
                o.push(b.len() as u32);
            }
            (Values::Text(o, b), Attr::Uuid(x)) => {
                b.extend_from_slice(&x.to_be_bytes());
                o.push(b.len() as u32);
            }
            // NULL (or a value of another type, which a writer never
            // sends): the previous value stands in.
            (values, _) => values.repeat_last(),
        }
        self.nulls.push(null);
        self.null_count += usize::from(null);
    }

    /// The first `n` rows of a segment, decoded (VACUUM's rewrite).
    pub fn decode(dec: &mut ColumnDecoder, ty: DataType, n: usize) -> ColumnBuffer {
        let mut c = ColumnBuffer::new(ty);
        dec.next_nulls(n, &mut c.nulls);
        c.null_count = c.nulls.iter().filter(|&&x| x).count();
        match &mut c.values {
            Values::Int(v) => dec.next_ints(n, v),
            Values::Float4(v) => dec.next_f32(n, v),
            Values::Float8(v) => dec.next_f64(n, v),
            Values::Numeric(v, sc) => dec.next_numeric(n, |x, s| {
                v.push(x);
                sc.push(s);
            }),
            Values::Interval(us, d, m) => dec.next_interval(n, |a, b, c| {
                us.push(a);
                d.push(b);
                m.push(c);
            }),
            Values::Text(o, b) => dec.next_strings(n, |x| {
                b.extend_from_slice(x);
                o.push(b.len() as u32);
            }),
        }
        c
    }

    /// Appends row `row` of `src` (a column of the same type).
    pub fn push_row_from(&mut self, src: &ColumnBuffer, row: usize) {
        let null = src.nulls[row];
        match (&mut self.values, &src.values) {
            _ if null => self.values.repeat_last(),
            (Values::Int(v), Values::Int(s)) => v.push(s[row]),
            (Values::Float4(v), Values::Float4(s)) => v.push(s[row]),
            (Values::Float8(v), Values::Float8(s)) => v.push(s[row]),
            (Values::Numeric(v, sc), Values::Numeric(s, ss)) => {
                v.push(s[row]);
                sc.push(ss[row]);
            }
            (Values::Interval(us, d, m), Values::Interval(sus, sd, sm)) => {
                us.push(sus[row]);
                d.push(sd[row]);
                m.push(sm[row]);
            }
            (Values::Text(o, b), Values::Text(so, sb)) => {
                let start = if row == 0 { 0 } else { so[row - 1] as usize };
                b.extend_from_slice(&sb[start..so[row] as usize]);
                o.push(b.len() as u32);
            }
            (values, _) => values.repeat_last(),
        }
        self.nulls.push(null);
        self.null_count += usize::from(null);
    }

    /// Adds row `row`'s value to a tuple being built.
    pub fn push_to_tuple(&self, row: usize, tb: &mut TupleBuilder) {
        if self.nulls[row] {
            tb.push_null();
            return;
        }
        match &self.values {
            Values::Int(v) => match self.ty {
                DataType::Bool => tb.push_bool(v[row] != 0),
                DataType::Int2 => tb.push_i16(v[row] as i16),
                DataType::Int4 | DataType::Date => tb.push_i32(v[row] as i32),
                _ => tb.push_i64(v[row]),
            },
            Values::Float4(v) => tb.push_f32(v[row]),
            Values::Float8(v) => tb.push_f64(v[row]),
            Values::Numeric(v, s) => tb.push_numeric(v[row], s[row]),
            Values::Interval(us, d, m) => tb.push_interval(us[row], d[row], m[row]),
            Values::Text(o, b) => {
                let start = if row == 0 { 0 } else { o[row - 1] as usize };
                push_bytes_to_tuple(self.ty, &b[start..o[row] as usize], tb);
            }
        }
    }

    /// Appends the segment to `out` and returns its statistics.
    pub fn encode(&self, out: &mut Vec<u8>) -> ColumnStats {
        let has_nulls = self.null_count > 0;
        out.push(u8::from(has_nulls));
        if has_nulls {
            let map: Vec<i64> = self.nulls.iter().map(|&n| n as i64).collect();
            ints::encode(&map, out);
        }
        let mut stats = ColumnStats {
            null_count: self.null_count as u32,
            min: None,
            max: None,
        };
        let live = |i: usize| !self.nulls[i];
        match &self.values {
            Values::Int(v) => {
                ints::encode(v, out);
                let mut it = (0..v.len()).filter(|&i| live(i)).map(|i| v[i]);
                if let Some(first) = it.next() {
                    let (lo, hi) = it.fold((first, first), |(a, b), x| (a.min(x), b.max(x)));
                    stats.min = Some(Bound::Int(lo));
                    stats.max = Some(Bound::Int(hi));
                }
            }
            Values::Float4(v) => {
                let bits: Vec<i64> = v.iter().map(|x| i64::from(x.to_bits())).collect();
                ints::encode(&bits, out);
                float_bounds(
                    (0..v.len()).filter(|&i| live(i)).map(|i| f64::from(v[i])),
                    &mut stats,
                );
            }
            Values::Float8(v) => {
                let bits: Vec<i64> = v.iter().map(|x| x.to_bits() as i64).collect();
                ints::encode(&bits, out);
                float_bounds((0..v.len()).filter(|&i| live(i)).map(|i| v[i]), &mut stats);
            }
            Values::Numeric(v, s) => {
                let scales: Vec<i64> = s.iter().map(|&x| i64::from(x)).collect();
                ints::encode(&scales, out);
                if v.iter().all(|&x| i64::try_from(x).is_ok()) {
                    out.push(0);
                    let narrow: Vec<i64> = v.iter().map(|&x| x as i64).collect();
                    ints::encode(&narrow, out);
                } else {
                    out.push(1);
                    for x in v {
                        out.extend_from_slice(&x.to_le_bytes());
                    }
                }
                numeric_bounds(
                    (0..v.len()).filter(|&i| live(i)).map(|i| (v[i], s[i])),
                    &mut stats,
                );
            }
            Values::Interval(us, d, m) => {
                ints::encode(us, out);
                ints::encode(&d.iter().map(|&x| i64::from(x)).collect::<Vec<_>>(), out);
                ints::encode(&m.iter().map(|&x| i64::from(x)).collect::<Vec<_>>(), out);
            }
            Values::Text(o, b) => {
                encode_strings(o, b, out);
                // Bytewise bounds are no bounds for `character(n)` (trailing
                // blanks), `json` (no order) or `jsonb` (its own order).
                if !matches!(self.ty, DataType::Bpchar | DataType::Json | DataType::Jsonb) {
                    string_bounds(
                        (0..o.len())
                            .filter(|&i| live(i))
                            .map(|i| &b[if i == 0 { 0 } else { o[i - 1] as usize }..o[i] as usize]),
                        &mut stats,
                    );
                }
            }
        }
        stats
    }
}

impl Values {
    /// Appends a copy of the last value (a default for the first).
    fn repeat_last(&mut self) {
        match self {
            Values::Int(v) => v.push(v.last().copied().unwrap_or(0)),
            Values::Float4(v) => v.push(v.last().copied().unwrap_or(0.0)),
            Values::Float8(v) => v.push(v.last().copied().unwrap_or(0.0)),
            Values::Numeric(v, s) => {
                v.push(v.last().copied().unwrap_or(0));
                s.push(s.last().copied().unwrap_or(0));
            }
            Values::Interval(us, d, m) => {
                us.push(us.last().copied().unwrap_or(0));
                d.push(d.last().copied().unwrap_or(0));
                m.push(m.last().copied().unwrap_or(0));
            }
            // An empty string: no bytes to repeat.
            Values::Text(o, b) => o.push(b.len() as u32),
        }
    }
}

/// Whether a column of type `ty` is held as strings of bytes: the string
/// types, `bytea`, and `uuid` (its 16 bytes, big-endian, so that byte
/// order is the type's order and the string bounds apply).
pub fn held_as_bytes(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Text
            | DataType::Varchar
            | DataType::Bpchar
            | DataType::Bytea
            | DataType::Uuid
            | DataType::Json
            | DataType::Jsonb
    )
}

/// Adds a value held as bytes (see [`held_as_bytes`]) to a tuple.
fn push_bytes_to_tuple(ty: DataType, b: &[u8], tb: &mut TupleBuilder) {
    match ty {
        DataType::Uuid => tb.push_uuid(b.try_into().map_or(0, u128::from_be_bytes)),
        _ => tb.push_text(b),
    }
}

/// PostgreSQL's float order: NaN above everything, -0 equal to 0.
fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

fn float_bounds(mut it: impl Iterator<Item = f64>, stats: &mut ColumnStats) {
    let Some(first) = it.next() else {
        return;
    };
    let (lo, hi) = it.fold((first, first), |(lo, hi), x| {
        (
            if float_cmp(x, lo) == Ordering::Less {
                x
            } else {
                lo
            },
            if float_cmp(x, hi) == Ordering::Greater {
                x
            } else {
                hi
            },
        )
    });
    stats.min = Some(Bound::Float(lo));
    stats.max = Some(Bound::Float(hi));
}

/// Compares two numerics given as (unscaled, scale); `None` when bringing
/// them to one scale overflows 128 bits.
pub fn numeric_cmp(a: (i128, u16), b: (i128, u16)) -> Option<Ordering> {
    let scale = a.1.max(b.1);
    let up = |(v, s): (i128, u16)| -> Option<i128> {
        10i128
            .checked_pow(u32::from(scale - s))
            .and_then(|m| v.checked_mul(m))
    };
    Some(up(a)?.cmp(&up(b)?))
}

fn numeric_bounds(mut it: impl Iterator<Item = (i128, u16)>, stats: &mut ColumnStats) {
    let Some(first) = it.next() else {
        return;
    };
    let (mut lo, mut hi) = (first, first);
    for x in it {
        match (numeric_cmp(x, lo), numeric_cmp(x, hi)) {
            (Some(l), Some(h)) => {
                if l == Ordering::Less {
                    lo = x;
                }
                if h == Ordering::Greater {
                    hi = x;
                }
            }
            // Values too far apart to compare exactly: no statistics.
            _ => return,
        }
    }
    stats.min = Some(Bound::Numeric(lo.0, lo.1));
    stats.max = Some(Bound::Numeric(hi.0, hi.1));
}

fn string_bounds<'b>(mut it: impl Iterator<Item = &'b [u8]>, stats: &mut ColumnStats) {
    let Some(first) = it.next() else {
        return;
    };
    let (lo, hi) = it.fold((first, first), |(lo, hi), x| (lo.min(x), hi.max(x)));
    stats.min = Some(Bound::Bytes(
        lo[..lo.len().min(STRING_BOUND_BYTES)].to_vec(),
    ));
    stats.max = string_upper_bound(hi).map(Bound::Bytes);
}

/// A string no shorter prefix-wise than `s` and at most
/// [`STRING_BOUND_BYTES`] long that sorts at or above `s` (bytewise):
/// `s` itself when short enough, else its cut with the last byte below 255
/// incremented. `None` when no such string exists.
fn string_upper_bound(s: &[u8]) -> Option<Vec<u8>> {
    if s.len() <= STRING_BOUND_BYTES {
        return Some(s.to_vec());
    }
    let mut cut = s[..STRING_BOUND_BYTES].to_vec();
    while let Some(last) = cut.pop() {
        if last < 255 {
            cut.push(last + 1);
            return Some(cut);
        }
    }
    None
}

fn encode_strings(ends: &[u32], bytes: &[u8], out: &mut Vec<u8>) {
    let n = ends.len();
    let get = |i: usize| &bytes[if i == 0 { 0 } else { ends[i - 1] as usize }..ends[i] as usize];
    let plain_len = |out: &mut Vec<u8>| {
        let lengths: Vec<i64> = (0..n).map(|i| get(i).len() as i64).collect();
        ints::encode(&lengths, out);
        out.extend_from_slice(bytes);
    };
    // A dictionary, if the distinct strings are few.
    let mut codes: HashMap<&[u8], u32> = HashMap::new();
    let mut row_codes: Vec<i64> = Vec::with_capacity(n);
    let mut entries: Vec<&[u8]> = Vec::new();
    for i in 0..n {
        let s = get(i);
        let next = codes.len() as u32;
        let c = *codes.entry(s).or_insert_with(|| {
            entries.push(s);
            next
        });
        if codes.len() > TEXT_DICT_MAX {
            break;
        }
        row_codes.push(i64::from(c));
    }
    if codes.len() <= TEXT_DICT_MAX && n > 0 {
        let mut dict = Vec::new();
        dict.push(1u8);
        dict.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        let lengths: Vec<i64> = entries.iter().map(|e| e.len() as i64).collect();
        ints::encode(&lengths, &mut dict);
        for e in &entries {
            dict.extend_from_slice(e);
        }
        ints::encode(&row_codes, &mut dict);
        let mut plain = vec![0u8];
        plain_len(&mut plain);
        out.extend_from_slice(if dict.len() < plain.len() {
            &dict
        } else {
            &plain
        });
        return;
    }
    out.push(0);
    plain_len(out);
}

/// Reads a segment a slice of rows at a time (see the module doc). The
/// caller reads the null map and the values of each slice with the same
/// `count`s, or skips both with [`ColumnDecoder::skip`]. The decoder owns
/// the segment's bytes.
#[derive(Debug)]
pub struct ColumnDecoder {
    seg: Vec<u8>,
    nulls: Option<IntDecoder>,
    body: Body,
}

#[derive(Debug)]
enum Body {
    Int(IntDecoder),
    Float4(IntDecoder),
    Float8(IntDecoder),
    Numeric {
        scales: IntDecoder,
        values: Wide,
    },
    Interval {
        micros: IntDecoder,
        days: IntDecoder,
        months: IntDecoder,
    },
    /// Plain strings: their lengths, and where the next string starts.
    Text {
        lengths: IntDecoder,
        at: usize,
        scratch: Vec<u32>,
    },
    /// Dictionary strings: the entries' (start, end) in the segment, the
    /// codes.
    TextDict {
        entries: Vec<(u32, u32)>,
        codes: IntDecoder,
        scratch: Vec<u32>,
    },
}

/// Unscaled numerics: 64-bit (a stream) or 128-bit (16 bytes each, from
/// byte `at` on).
#[derive(Debug)]
enum Wide {
    Narrow(IntDecoder),
    Raw { at: usize },
}

/// Checks the lengths of `n` strings that a stream at the reader holds
/// (without moving the reader) and returns their total.
fn string_total(r: &Reader<'_>, n: usize) -> Result<usize, StorageError> {
    let mut probe = Reader {
        buf: r.buf,
        pos: r.pos,
    };
    let lengths = probe.all_values(n)?;
    lengths.iter().try_fold(0usize, |acc, &l| {
        usize::try_from(l)
            .ok()
            .and_then(|l| acc.checked_add(l))
            .ok_or_else(|| corrupt("string length"))
    })
}

impl ColumnDecoder {
    /// A decoder of segment `seg` of a column of type `ty` with `n` rows.
    pub fn new(seg: Vec<u8>, ty: DataType, n: usize) -> Result<ColumnDecoder, StorageError> {
        let mut r = Reader::new(&seg);
        let flags = r.u8()?;
        let nulls = if flags & 1 != 0 {
            Some(IntDecoder::new(&mut r, n)?)
        } else {
            None
        };
        let body = match ty {
            DataType::Float4 => Body::Float4(IntDecoder::new(&mut r, n)?),
            DataType::Float8 => Body::Float8(IntDecoder::new(&mut r, n)?),
            DataType::Numeric => {
                let scales = IntDecoder::new(&mut r, n)?;
                let values = match r.u8()? {
                    0 => Wide::Narrow(IntDecoder::new(&mut r, n)?),
                    1 => Wide::Raw {
                        at: r
                            .take(n.checked_mul(16).ok_or_else(|| corrupt("numeric length"))?)?
                            .start,
                    },
                    _ => return Err(corrupt("numeric representation")),
                };
                Body::Numeric { scales, values }
            }
            DataType::Interval => Body::Interval {
                micros: IntDecoder::new(&mut r, n)?,
                days: IntDecoder::new(&mut r, n)?,
                months: IntDecoder::new(&mut r, n)?,
            },
            t if held_as_bytes(t) => match r.u8()? {
                0 => {
                    let total = string_total(&r, n)?;
                    let lengths = IntDecoder::new(&mut r, n)?;
                    let at = r.take(total)?.start;
                    Body::Text {
                        lengths,
                        at,
                        scratch: Vec::new(),
                    }
                }
                1 => {
                    let count = r.u32()? as usize;
                    if count == 0 || count > TEXT_DICT_MAX {
                        return Err(corrupt("string dictionary size"));
                    }
                    let total = string_total(&r, count)?;
                    let lengths = r.all_values(count)?;
                    let mut start = r.take(total)?.start as u32;
                    let mut entries = Vec::with_capacity(count);
                    for l in lengths {
                        entries.push((start, start + l as u32));
                        start += l as u32;
                    }
                    let codes = IntDecoder::new(&mut r, n)?;
                    Body::TextDict {
                        entries,
                        codes,
                        scratch: Vec::new(),
                    }
                }
                _ => return Err(corrupt("string representation")),
            },
            _ => Body::Int(IntDecoder::new(&mut r, n)?),
        };
        Ok(ColumnDecoder { seg, nulls, body })
    }

    /// Whether the segment has NULLs at all.
    pub fn has_nulls(&self) -> bool {
        self.nulls.is_some()
    }

    /// Appends the next `count` rows' NULL flags (all false without NULLs).
    pub fn next_nulls(&mut self, count: usize, out: &mut Vec<bool>) {
        match &mut self.nulls {
            Some(d) => d.next_into(&self.seg, count, out),
            None => out.resize(out.len() + count, false),
        }
    }

    /// Appends the next `count` values of an integer-like column.
    pub fn next_ints<T: FromI64>(&mut self, count: usize, out: &mut Vec<T>) {
        match &mut self.body {
            Body::Int(d) => d.next_into(&self.seg, count, out),
            _ => panic!("not an integer column"),
        }
    }

    pub fn next_f32(&mut self, count: usize, out: &mut Vec<f32>) {
        let Body::Float4(d) = &mut self.body else {
            panic!("not a real column")
        };
        let mut bits: Vec<u32> = Vec::with_capacity(count);
        d.next_into(&self.seg, count, &mut bits);
        out.extend(bits.into_iter().map(f32::from_bits));
    }

    pub fn next_f64(&mut self, count: usize, out: &mut Vec<f64>) {
        let Body::Float8(d) = &mut self.body else {
            panic!("not a double precision column")
        };
        let mut bits: Vec<u64> = Vec::with_capacity(count);
        d.next_into(&self.seg, count, &mut bits);
        out.extend(bits.into_iter().map(f64::from_bits));
    }

    /// Calls `f(unscaled, scale)` for the next `count` values.
    pub fn next_numeric(&mut self, count: usize, mut f: impl FnMut(i128, u16)) {
        let Body::Numeric { scales, values } = &mut self.body else {
            panic!("not a numeric column")
        };
        let mut s: Vec<u16> = Vec::with_capacity(count);
        scales.next_into(&self.seg, count, &mut s);
        match values {
            Wide::Narrow(d) => {
                let mut v: Vec<i64> = Vec::with_capacity(count);
                d.next_into(&self.seg, count, &mut v);
                for (x, sc) in v.into_iter().zip(s) {
                    f(i128::from(x), sc);
                }
            }
            Wide::Raw { at } => {
                let bytes = &self.seg[*at..*at + count * 16];
                for (c, sc) in bytes.chunks_exact(16).zip(s) {
                    f(i128::from_le_bytes(c.try_into().unwrap()), sc);
                }
                *at += count * 16;
            }
        }
    }

    /// Calls `f(micros, days, months)` for the next `count` values.
    pub fn next_interval(&mut self, count: usize, mut f: impl FnMut(i64, i32, i32)) {
        let Body::Interval {
            micros,
            days,
            months,
        } = &mut self.body
        else {
            panic!("not an interval column")
        };
        let (mut us, mut d, mut m): (Vec<i64>, Vec<i32>, Vec<i32>) = Default::default();
        micros.next_into(&self.seg, count, &mut us);
        days.next_into(&self.seg, count, &mut d);
        months.next_into(&self.seg, count, &mut m);
        for i in 0..count {
            f(us[i], d[i], m[i]);
        }
    }

    /// Calls `f(bytes)` for the next `count` strings.
    pub fn next_strings(&mut self, count: usize, mut f: impl FnMut(&[u8])) {
        match &mut self.body {
            Body::Text {
                lengths,
                at,
                scratch,
            } => {
                scratch.clear();
                lengths.next_into(&self.seg, count, scratch);
                for &l in scratch.iter() {
                    let end = *at + l as usize;
                    f(&self.seg[*at..end]);
                    *at = end;
                }
            }
            Body::TextDict {
                entries,
                codes,
                scratch,
            } => {
                scratch.clear();
                codes.next_into(&self.seg, count, scratch);
                for &c in scratch.iter() {
                    // A damaged code reads the last entry, not past it.
                    let (s, e) = entries[(c as usize).min(entries.len() - 1)];
                    f(&self.seg[s as usize..e as usize]);
                }
            }
            _ => panic!("not a string column"),
        }
    }

    /// Whether the segment is a dictionary-encoded string segment.
    pub fn is_dictionary(&self) -> bool {
        matches!(self.body, Body::TextDict { .. })
    }

    /// The dictionary of a dictionary-encoded string segment: its entries,
    /// by code (see [`ColumnDecoder::next_codes`]).
    pub fn dictionary(&self) -> Option<Vec<&[u8]>> {
        match &self.body {
            Body::TextDict { entries, .. } => Some(
                entries
                    .iter()
                    .map(|&(s, e)| &self.seg[s as usize..e as usize])
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Appends the next `count` rows' dictionary codes (a dictionary
    /// segment only; see [`ColumnDecoder::dictionary`]). A code is below
    /// the number of entries.
    pub fn next_codes(&mut self, count: usize, out: &mut Vec<u32>) {
        let Body::TextDict { entries, codes, .. } = &mut self.body else {
            panic!("not a dictionary column")
        };
        let start = out.len();
        codes.next_into(&self.seg, count, out);
        let last = entries.len() as u32 - 1;
        for c in &mut out[start..] {
            *c = (*c).min(last);
        }
    }

    /// Adds the next row's value (a column of type `ty`) to a tuple.
    pub fn next_into_tuple(&mut self, ty: DataType, tb: &mut TupleBuilder) {
        let mut null = Vec::with_capacity(1);
        self.next_nulls(1, &mut null);
        if null[0] {
            self.skip_values(1);
            tb.push_null();
            return;
        }
        match ty {
            DataType::Float4 => {
                let mut v = Vec::new();
                self.next_f32(1, &mut v);
                tb.push_f32(v[0]);
            }
            DataType::Float8 => {
                let mut v = Vec::new();
                self.next_f64(1, &mut v);
                tb.push_f64(v[0]);
            }
            DataType::Numeric => self.next_numeric(1, |u, s| tb.push_numeric(u, s)),
            DataType::Interval => self.next_interval(1, |a, b, c| tb.push_interval(a, b, c)),
            t if held_as_bytes(t) => self.next_strings(1, |s| push_bytes_to_tuple(t, s, tb)),
            _ => {
                let mut v: Vec<i64> = Vec::new();
                self.next_ints(1, &mut v);
                match ty {
                    DataType::Bool => tb.push_bool(v[0] != 0),
                    DataType::Int2 => tb.push_i16(v[0] as i16),
                    DataType::Int4 | DataType::Date => tb.push_i32(v[0] as i32),
                    _ => tb.push_i64(v[0]),
                }
            }
        }
    }

    /// Passes over the next `count` rows.
    pub fn skip(&mut self, count: usize) {
        if let Some(n) = &mut self.nulls {
            n.skip(&self.seg, count);
        }
        self.skip_values(count);
    }

    /// Passes over the next `count` values (not the null map).
    fn skip_values(&mut self, count: usize) {
        let seg = &self.seg;
        match &mut self.body {
            Body::Int(d) | Body::Float4(d) | Body::Float8(d) => d.skip(seg, count),
            Body::Numeric { scales, values } => {
                scales.skip(seg, count);
                match values {
                    Wide::Narrow(d) => d.skip(seg, count),
                    Wide::Raw { at } => *at += count * 16,
                }
            }
            Body::Interval {
                micros,
                days,
                months,
            } => {
                micros.skip(seg, count);
                days.skip(seg, count);
                months.skip(seg, count);
            }
            Body::Text {
                lengths,
                at,
                scratch,
            } => {
                scratch.clear();
                lengths.next_into(seg, count, scratch);
                *at += scratch.iter().map(|&l| l as usize).sum::<usize>();
            }
            Body::TextDict { codes, .. } => codes.skip(seg, count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(ty: DataType, attrs: &[Attr<'_>]) -> ColumnBuffer {
        let mut c = ColumnBuffer::new(ty);
        for &a in attrs {
            c.push(a);
        }
        c
    }

    /// Encodes, decodes in slices of 3 with a skip, and compares through
    /// tuples (the writer's other output).
    fn round_trip(ty: DataType, attrs: &[Attr<'_>]) -> ColumnStats {
        let c = column(ty, attrs);
        let mut seg = Vec::new();
        let stats = c.encode(&mut seg);
        let mut d = ColumnDecoder::new(seg, ty, attrs.len()).unwrap();
        let mut pos = 0;
        while pos < attrs.len() {
            let n = 3.min(attrs.len() - pos);
            if pos % 9 == 6 {
                d.skip(n);
                pos += n;
                continue;
            }
            let mut nulls = Vec::new();
            d.next_nulls(n, &mut nulls);
            let mut got: Vec<String> = Vec::new();
            match ty {
                DataType::Float4 => {
                    let mut v = Vec::new();
                    d.next_f32(n, &mut v);
                    got.extend(v.iter().map(|x| format!("{:?}", Attr::Float4(*x))));
                }
                DataType::Float8 => {
                    let mut v = Vec::new();
                    d.next_f64(n, &mut v);
                    got.extend(v.iter().map(|x| format!("{:?}", Attr::Float8(*x))));
                }
                DataType::Numeric => {
                    d.next_numeric(n, |v, s| got.push(format!("{:?}", Attr::Numeric(v, s))))
                }
                DataType::Interval => d.next_interval(n, |a, b, c| {
                    got.push(format!("{:?}", Attr::Interval(a, b, c)))
                }),
                DataType::Text | DataType::Bpchar => {
                    d.next_strings(n, |s| got.push(format!("{:?}", Attr::Text(s))))
                }
                DataType::Int4 => {
                    let mut v: Vec<i32> = Vec::new();
                    d.next_ints(n, &mut v);
                    got.extend(v.iter().map(|x| format!("{:?}", Attr::Int4(*x))));
                }
                _ => unreachable!(),
            }
            for i in 0..n {
                let want = format!("{:?}", attrs[pos + i]);
                if nulls[i] {
                    assert_eq!(want, "Null");
                } else {
                    assert_eq!(got[i], want, "row {}", pos + i);
                }
            }
            pos += n;
        }
        // The writer's tuple path agrees.
        for (i, a) in attrs.iter().enumerate() {
            let mut tb = TupleBuilder::new();
            tb.begin();
            c.push_to_tuple(i, &mut tb);
            let t = tb.finish(3).to_vec();
            crate::tuple::walk(&t, &[ty], 0, |_, got| {
                assert_eq!(format!("{got:?}"), format!("{a:?}"))
            });
        }
        stats
    }

    #[test]
    fn every_representation_round_trips() {
        let ints: Vec<Attr> = (0..50)
            .map(|i| {
                if i % 7 == 3 {
                    Attr::Null
                } else {
                    Attr::Int4(i * 1000 - 7)
                }
            })
            .collect();
        let s = round_trip(DataType::Int4, &ints);
        assert_eq!(s.null_count, 7);
        assert_eq!(s.min, Some(Bound::Int(-7)));
        assert_eq!(s.max, Some(Bound::Int(48993)));
        let floats: Vec<Attr> = [1.5, f64::NAN, -0.0, -3.25, f64::INFINITY]
            .iter()
            .map(|&x| Attr::Float8(x))
            .collect();
        let s = round_trip(DataType::Float8, &floats);
        assert!(matches!(s.max, Some(Bound::Float(x)) if x.is_nan()));
        assert_eq!(s.min, Some(Bound::Float(-3.25)));
        round_trip(
            DataType::Float4,
            &[Attr::Float4(1.0), Attr::Null, Attr::Float4(-2.5)],
        );
        let nums = [
            Attr::Numeric(12345, 2),
            Attr::Numeric(-1, 0),
            Attr::Null,
            Attr::Numeric(999, 1),
        ];
        let s = round_trip(DataType::Numeric, &nums);
        assert_eq!(s.min, Some(Bound::Numeric(-1, 0)));
        assert_eq!(s.max, Some(Bound::Numeric(12345, 2)));
        round_trip(
            DataType::Numeric,
            &[Attr::Numeric(i128::MAX / 3, 4), Attr::Numeric(-5, 0)],
        );
        round_trip(
            DataType::Interval,
            &[
                Attr::Interval(5, 6, 7),
                Attr::Null,
                Attr::Interval(-1, 0, 12),
            ],
        );
        let words = ["b", "a", "", "zz", "a", "b"];
        let texts: Vec<Attr> = words
            .iter()
            .cycle()
            .take(40)
            .enumerate()
            .map(|(i, w)| {
                if i == 5 {
                    Attr::Null
                } else {
                    Attr::Text(w.as_bytes())
                }
            })
            .collect();
        let s = round_trip(DataType::Text, &texts);
        assert_eq!(s.min, Some(Bound::Bytes(b"".to_vec())));
        assert_eq!(s.max, Some(Bound::Bytes(b"zz".to_vec())));
        let unique: Vec<String> = (0..5000).map(|i| format!("row {i} of many")).collect();
        let texts: Vec<Attr> = unique.iter().map(|s| Attr::Text(s.as_bytes())).collect();
        round_trip(DataType::Text, &texts);
        let s = round_trip(DataType::Bpchar, &[Attr::Text(b"x  ")]);
        assert_eq!(s.min, None);
    }

    #[test]
    fn long_strings_get_bounds() {
        let long = vec![b'q'; 100];
        let mut hi = vec![0xffu8; 100];
        hi[10] = b'r';
        let s = round_trip(DataType::Text, &[Attr::Text(&long), Attr::Text(&hi)]);
        assert_eq!(s.min, Some(Bound::Bytes(vec![b'q'; STRING_BOUND_BYTES])));
        let Some(Bound::Bytes(max)) = s.max else {
            panic!()
        };
        assert!(max.as_slice() > hi.as_slice() && max.len() <= STRING_BOUND_BYTES);
        let s = round_trip(DataType::Text, &[Attr::Text(&[0xff; 80])]);
        assert_eq!(s.max, None);
    }

    #[test]
    fn all_null_columns_have_no_bounds() {
        let s = round_trip(DataType::Int4, &[Attr::Null, Attr::Null]);
        assert_eq!((s.null_count, s.min, s.max), (2, None, None));
    }

    #[test]
    fn damaged_segments_are_errors() {
        let c = column(DataType::Text, &[Attr::Text(b"abc"), Attr::Text(b"de")]);
        let mut seg = Vec::new();
        c.encode(&mut seg);
        for cut in 0..seg.len() {
            assert!(ColumnDecoder::new(seg[..cut].to_vec(), DataType::Text, 2).is_err());
        }
    }
}
