//! Heap tuple format.
//!
//! ```text
//! xmin u32 | xmax u32 | natts u16 | flags u16 | [null bitmap] | attributes...
//! ```
//!
//! The null bitmap (one bit per attribute, set = NULL) is present only when
//! `flags & HAS_NULLS`. NULL attributes take no bytes. Attribute encodings, all
//! little endian and unaligned: `boolean` 1 byte, `integer` 4, `bigint` 8,
//! `numeric` 16-byte unscaled value + 2-byte scale, text types a 2-byte length
//! and the UTF-8 bytes (a tuple must fit in a page; there is no TOAST).

use crate::catalog::DataType;
use crate::txn::Xid;

pub const TUPLE_HEADER_SIZE: usize = 12;
const HAS_NULLS: u16 = 1;

#[inline]
pub fn xmin(t: &[u8]) -> Xid {
    u32::from_le_bytes(t[0..4].try_into().unwrap())
}

#[inline]
pub fn xmax(t: &[u8]) -> Xid {
    u32::from_le_bytes(t[4..8].try_into().unwrap())
}

/// `xmin | xmax << 32`: both xids in one load, for comparing whole pairs.
#[inline]
pub fn xids(t: &[u8]) -> u64 {
    u64::from_le_bytes(t[0..8].try_into().unwrap())
}

pub fn set_xmax(t: &mut [u8], xid: Xid) {
    t[4..8].copy_from_slice(&xid.to_le_bytes());
}

/// Builds one tuple's bytes. Reuse it across rows to avoid allocation.
#[derive(Default)]
pub struct TupleBuilder {
    nulls: Vec<u8>,
    data: Vec<u8>,
    natts: usize,
    any_null: bool,
    out: Vec<u8>,
}

impl TupleBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn begin(&mut self) {
        self.nulls.clear();
        self.data.clear();
        self.natts = 0;
        self.any_null = false;
    }

    fn next_att(&mut self, null: bool) {
        if self.natts.is_multiple_of(8) {
            self.nulls.push(0);
        }
        if null {
            self.nulls[self.natts / 8] |= 1 << (self.natts % 8);
            self.any_null = true;
        }
        self.natts += 1;
    }

    pub fn push_null(&mut self) {
        self.next_att(true);
    }
    pub fn push_bool(&mut self, v: bool) {
        self.next_att(false);
        self.data.push(v as u8);
    }
    pub fn push_i16(&mut self, v: i16) {
        self.next_att(false);
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    pub fn push_f32(&mut self, v: f32) {
        self.next_att(false);
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    pub fn push_f64(&mut self, v: f64) {
        self.next_att(false);
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    pub fn push_interval(&mut self, micros: i64, days: i32, months: i32) {
        self.next_att(false);
        self.data.extend_from_slice(&micros.to_le_bytes());
        self.data.extend_from_slice(&days.to_le_bytes());
        self.data.extend_from_slice(&months.to_le_bytes());
    }
    pub fn push_i32(&mut self, v: i32) {
        self.next_att(false);
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    pub fn push_i64(&mut self, v: i64) {
        self.next_att(false);
        self.data.extend_from_slice(&v.to_le_bytes());
    }
    pub fn push_numeric(&mut self, unscaled: i128, scale: u16) {
        self.next_att(false);
        self.data.extend_from_slice(&unscaled.to_le_bytes());
        self.data.extend_from_slice(&scale.to_le_bytes());
    }
    pub fn push_text(&mut self, v: &[u8]) {
        self.next_att(false);
        let len = v.len().min(u16::MAX as usize) as u16;
        self.data.extend_from_slice(&len.to_le_bytes());
        self.data.extend_from_slice(&v[..len as usize]);
    }

    /// Finishes the tuple with the inserting transaction's xid.
    pub fn finish(&mut self, xmin: Xid) -> &[u8] {
        self.out.clear();
        self.out.extend_from_slice(&xmin.to_le_bytes());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        self.out
            .extend_from_slice(&(self.natts as u16).to_le_bytes());
        let flags = if self.any_null { HAS_NULLS } else { 0 };
        self.out.extend_from_slice(&flags.to_le_bytes());
        if self.any_null {
            self.out.extend_from_slice(&self.nulls);
        }
        self.out.extend_from_slice(&self.data);
        &self.out
    }
}

/// Byte offsets of attributes `0..=last` in a tuple without NULLs, when all
/// of them have a fixed width (no text); `None` otherwise. With [`is_dense`],
/// scans read such attributes straight from their offsets instead of
/// walking the tuple.
pub fn fixed_offsets(types: &[DataType], last: usize) -> Option<Vec<usize>> {
    let mut pos = TUPLE_HEADER_SIZE;
    let mut offsets = Vec::with_capacity(last + 1);
    for ty in types.get(..=last)? {
        offsets.push(pos);
        pos += ty.fixed_width()?;
    }
    Some(offsets)
}

/// Whether tuple `t` stores attributes `0..=last` with no NULL among its
/// attributes, so that [`fixed_offsets`] applies to it.
#[inline]
pub fn is_dense(t: &[u8], last: usize) -> bool {
    t.get(8..12)
        .is_some_and(|w| stores_dense(u32::from_le_bytes(w.try_into().unwrap()), last + 1))
}

/// [`is_dense`] from the tuple's header word at byte 8 (`natts | flags <<
/// 16`): it stores at least `natts` attributes and no NULL.
#[inline(always)]
pub fn stores_dense(word: u32, natts: usize) -> bool {
    (word & 0xffff) as usize >= natts && (word >> 16) as u16 & HAS_NULLS == 0
}

/// One attribute as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Attr<'a> {
    Null,
    Bool(bool),
    Int2(i16),
    /// `integer` and `date`.
    Int4(i32),
    /// `bigint`, `time`, `timestamp` and `timestamptz`.
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(i128, u16),
    /// Microseconds, days, months.
    Interval(i64, i32, i32),
    Text(&'a [u8]),
}

/// Decodes the fixed-width attribute of type `ty` at the start of `b`.
#[inline]
pub fn fixed_attr(b: &[u8], ty: DataType) -> Attr<'_> {
    let i32_at = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let i64_at = |o: usize| i64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    match ty {
        DataType::Bool => Attr::Bool(b[0] != 0),
        DataType::Int2 => Attr::Int2(i16::from_le_bytes([b[0], b[1]])),
        DataType::Int4 | DataType::Date => Attr::Int4(i32_at(0)),
        DataType::Int8 | DataType::Time | DataType::Timestamp | DataType::TimestampTz => {
            Attr::Int8(i64_at(0))
        }
        DataType::Float4 => Attr::Float4(f32::from_bits(i32_at(0) as u32)),
        DataType::Float8 => Attr::Float8(f64::from_bits(i64_at(0) as u64)),
        DataType::Interval => Attr::Interval(i64_at(0), i32_at(8), i32_at(12)),
        DataType::Numeric => Attr::Numeric(
            i128::from_le_bytes(b[0..16].try_into().unwrap()),
            u16::from_le_bytes([b[16], b[17]]),
        ),
        DataType::Text | DataType::Varchar | DataType::Bpchar => {
            let len = u16::from_le_bytes([b[0], b[1]]) as usize;
            Attr::Text(&b[2..2 + len])
        }
    }
}

/// Walks the attributes of tuple `t` (whose columns have `types`) up to and
/// including attribute `last`, calling `f(attno, attr)` for each.
#[inline]
pub fn walk<'t>(t: &'t [u8], types: &[DataType], last: usize, mut f: impl FnMut(usize, Attr<'t>)) {
    let natts = u16::from_le_bytes([t[8], t[9]]) as usize;
    let flags = u16::from_le_bytes([t[10], t[11]]);
    let mut pos = TUPLE_HEADER_SIZE;
    let bitmap = if flags & HAS_NULLS != 0 {
        let b = &t[pos..pos + natts.div_ceil(8)];
        pos += natts.div_ceil(8);
        Some(b)
    } else {
        None
    };
    for (attno, ty) in types.iter().enumerate().take(last + 1) {
        if attno >= natts || bitmap.is_some_and(|b| b[attno / 8] & (1 << (attno % 8)) != 0) {
            f(attno, Attr::Null);
            continue;
        }
        let a = fixed_attr(&t[pos..], *ty);
        pos += match a {
            Attr::Text(b) => 2 + b.len(),
            _ => ty.fixed_width().unwrap_or(0),
        };
        f(attno, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let types = [
            DataType::Int4,
            DataType::Text,
            DataType::Int8,
            DataType::Bool,
            DataType::Numeric,
        ];
        let mut b = TupleBuilder::new();
        b.begin();
        b.push_i32(-5);
        b.push_null();
        b.push_i64(1 << 40);
        b.push_bool(true);
        b.push_numeric(-12345, 2);
        let t = b.finish(7).to_vec();
        assert_eq!(xmin(&t), 7);
        assert_eq!(xmax(&t), 0);
        let mut got = vec![];
        walk(&t, &types, 4, |i, a| got.push((i, format!("{a:?}"))));
        assert_eq!(got.len(), 5);
        assert_eq!(got[0].1, "Int4(-5)");
        assert_eq!(got[1].1, "Null");
        assert_eq!(got[2].1, format!("Int8({})", 1i64 << 40));
        assert_eq!(got[3].1, "Bool(true)");
        assert_eq!(got[4].1, "Numeric(-12345, 2)");
        b.begin();
        b.push_i32(1);
        b.push_text(b"hi");
        let t = b.finish(9).to_vec();
        let mut texts = vec![];
        walk(&t, &types[..2], 1, |_, a| texts.push(a));
        assert_eq!(texts[1], Attr::Text(b"hi"));
    }
}
