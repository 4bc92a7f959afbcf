//! Heap tuple format.
//!
//! ```text
//!  0 xmin u32        inserting transaction (or subtransaction)
//!  4 xmax u32        deleting, updating or locking transaction; 0 if none
//!  8 natts u16
//! 10 infomask u16    HAS_NULLS and the xmax bits below
//! 12 cmin u32        command id of the insertion within xmin's transaction
//! 16 cmax u32        command id of the deletion/update within xmax's
//! 20 ctid block u32  newer version of an updated tuple (valid with XMAX_IS_UPDATE)
//! 24 ctid item u16
//! 26 reserved u16
//! 28 [null bitmap] attributes...
//! ```
//!
//! The null bitmap (one bit per attribute, set = NULL) is present only when
//! `infomask & HAS_NULLS`. NULL attributes take no bytes. Attribute encodings, all
//! little endian and unaligned: `boolean` 1 byte, `integer` 4, `bigint` 8,
//! `numeric` 16-byte unscaled value + 2-byte scale, `uuid` its 16 bytes in
//! order, text types and `bytea` a 2-byte header and their bytes.
//!
//! ## Text values of any size
//!
//! A text value's 2-byte header `h` says which form follows (see `toast`
//! for the forms and when each is chosen):
//!
//! * `h < 0x8000`: the value, `h` bytes, inline;
//! * `0x8000 <= h < 0xFFFF`: a *toasted* value, `h & 0x7FFF` bytes that
//!   start with a kind byte: compressed inline, or a pointer to the value's
//!   chunks in the table's TOAST relation ([`Attr::Toasted`]);
//! * `h == 0xFFFF`: a 4-byte length and the value, of any size. Only a
//!   tuple being built has this form ([`TupleBuilder`] writes it for values
//!   of 32 kB and more); `toast` replaces it before the tuple is stored, so
//!   no page ever holds it.
//!
//! [`HAS_EXTERNAL`] marks a tuple with a pointer to TOAST chunks, whose
//! deletion must delete the chunks too.
//!
//! ## The xmax bits
//!
//! `xmax` names at most one transaction that deleted, updated or
//! exclusively locked the tuple; what it did is in the infomask:
//!
//! * [`XMAX_LOCK_ONLY`]: it only locked the row (`SELECT ... FOR UPDATE` /
//!   `FOR NO KEY UPDATE`, with [`XMAX_KEYS_UPDATED`] for the stronger `FOR
//!   UPDATE`). A locker never makes the tuple invisible.
//! * otherwise it deleted the tuple, or updated it when [`XMAX_IS_UPDATE`]
//!   is set, and then `ctid` is the newer version. [`XMAX_KEYS_UPDATED`]
//!   marks a delete or an update that changed key columns (the row lock it
//!   implies is `FOR UPDATE` rather than `FOR NO KEY UPDATE`).
//!
//! Shared row locks (`FOR SHARE`, `FOR KEY SHARE`) can be held by several
//! transactions at once. PostgreSQL puts a MultiXactId in `xmax` for them;
//! tusk sets [`SHARE_LOCKED`] and keeps the lockers in memory (see
//! `rowlock`): locks only matter while their holders run, and after a crash
//! none does, so a flag left on a page by a crash means nothing.
//!
//! PostgreSQL stores `cmin` and `cmax` in one field and keeps a per-backend
//! "combo" map for tuples inserted and deleted by the same transaction; tusk
//! spends four more bytes per tuple and stores both.
//!
//! [`HEAP_ONLY`] and [`HOT_UPDATED`] mark heap-only tuples (HOT updates, see
//! `heapam`): versions without index entries, reached along the chain from
//! the version the index points at.

use crate::catalog::DataType;
use crate::txn::Xid;

pub const TUPLE_HEADER_SIZE: usize = 28;
/// Infomask: the tuple has a null bitmap.
pub const HAS_NULLS: u16 = 0x0001;
/// Infomask: `xmax` only locked the row.
pub const XMAX_LOCK_ONLY: u16 = 0x0002;
/// Infomask: a delete, a key-changing update, or a `FOR UPDATE` lock.
pub const XMAX_KEYS_UPDATED: u16 = 0x0004;
/// Infomask: `xmax` updated the tuple; `ctid` is the newer version.
pub const XMAX_IS_UPDATE: u16 = 0x0008;
/// Infomask: shared row lockers may be registered for this tuple.
pub const SHARE_LOCKED: u16 = 0x0010;
/// Infomask: the newer version is a heap-only tuple on the same page.
pub const HOT_UPDATED: u16 = 0x0020;
/// Infomask: this version has no index entries (a HOT update made it).
pub const HEAP_ONLY: u16 = 0x0040;
/// Infomask: some attribute points to chunks in the TOAST relation.
pub const HAS_EXTERNAL: u16 = 0x0080;
/// A text header: the value is toasted (see the module doc).
pub const TEXT_TOASTED: u16 = 0x8000;
/// A text header: a 4-byte length follows (tuples being built only).
pub const TEXT_WIDE: u16 = 0xFFFF;
/// The bits that describe `xmax`; cleared when `xmax` is replaced.
pub const XMAX_BITS: u16 = XMAX_LOCK_ONLY | XMAX_KEYS_UPDATED | XMAX_IS_UPDATE | HOT_UPDATED;

const OFF_INFOMASK: usize = 10;
const OFF_CMIN: usize = 12;
const OFF_CMAX: usize = 16;
const OFF_CTID: usize = 20;

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

pub fn set_xmin(t: &mut [u8], xid: Xid) {
    t[0..4].copy_from_slice(&xid.to_le_bytes());
}

#[inline]
pub fn infomask(t: &[u8]) -> u16 {
    u16::from_le_bytes([t[OFF_INFOMASK], t[OFF_INFOMASK + 1]])
}

pub fn set_infomask(t: &mut [u8], m: u16) {
    t[OFF_INFOMASK..OFF_INFOMASK + 2].copy_from_slice(&m.to_le_bytes());
}

#[inline]
pub fn cmin(t: &[u8]) -> u32 {
    u32::from_le_bytes(t[OFF_CMIN..OFF_CMIN + 4].try_into().unwrap())
}

pub fn set_cmin(t: &mut [u8], cid: u32) {
    t[OFF_CMIN..OFF_CMIN + 4].copy_from_slice(&cid.to_le_bytes());
}

#[inline]
pub fn cmax(t: &[u8]) -> u32 {
    u32::from_le_bytes(t[OFF_CMAX..OFF_CMAX + 4].try_into().unwrap())
}

pub fn set_cmax(t: &mut [u8], cid: u32) {
    t[OFF_CMAX..OFF_CMAX + 4].copy_from_slice(&cid.to_le_bytes());
}

/// The newer version's (block, item), meaningful with [`XMAX_IS_UPDATE`].
#[inline]
pub fn ctid(t: &[u8]) -> (u32, u16) {
    (
        u32::from_le_bytes(t[OFF_CTID..OFF_CTID + 4].try_into().unwrap()),
        u16::from_le_bytes([t[OFF_CTID + 4], t[OFF_CTID + 5]]),
    )
}

pub fn set_ctid(t: &mut [u8], block: u32, item: u16) {
    t[OFF_CTID..OFF_CTID + 4].copy_from_slice(&block.to_le_bytes());
    t[OFF_CTID + 4..OFF_CTID + 6].copy_from_slice(&item.to_le_bytes());
}

/// Everything about a tuple's `xmax`, as WAL records carry it: the xmax,
/// `cmax`, the infomask and `ctid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XmaxState {
    pub xmax: Xid,
    pub cmax: u32,
    pub infomask: u16,
    pub ctid: (u32, u16),
}

/// Bytes of an encoded [`XmaxState`].
pub const XMAX_STATE_SIZE: usize = 16;

impl XmaxState {
    pub fn of(t: &[u8]) -> XmaxState {
        XmaxState {
            xmax: xmax(t),
            cmax: cmax(t),
            infomask: infomask(t),
            ctid: ctid(t),
        }
    }

    pub fn apply(&self, t: &mut [u8]) {
        set_xmax(t, self.xmax);
        set_cmax(t, self.cmax);
        set_infomask(t, self.infomask);
        set_ctid(t, self.ctid.0, self.ctid.1);
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.xmax.to_le_bytes());
        out.extend_from_slice(&self.cmax.to_le_bytes());
        out.extend_from_slice(&self.infomask.to_le_bytes());
        out.extend_from_slice(&self.ctid.0.to_le_bytes());
        out.extend_from_slice(&self.ctid.1.to_le_bytes());
    }

    pub fn decode(b: &[u8]) -> Option<XmaxState> {
        let b = b.get(..XMAX_STATE_SIZE)?;
        Some(XmaxState {
            xmax: u32::from_le_bytes(b[0..4].try_into().unwrap()),
            cmax: u32::from_le_bytes(b[4..8].try_into().unwrap()),
            infomask: u16::from_le_bytes([b[8], b[9]]),
            ctid: (
                u32::from_le_bytes(b[10..14].try_into().unwrap()),
                u16::from_le_bytes([b[14], b[15]]),
            ),
        })
    }
}

/// Builds one tuple's bytes. Reuse it across rows to avoid allocation.
#[derive(Default)]
pub struct TupleBuilder {
    nulls: Vec<u8>,
    data: Vec<u8>,
    natts: usize,
    any_null: bool,
    /// A value has the wide form (see the module doc).
    wide: bool,
    /// A value points to TOAST chunks.
    external: bool,
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
        self.wide = false;
        self.external = false;
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
    /// A `uuid`, its 16 bytes in PostgreSQL's (big-endian) order.
    pub fn push_uuid(&mut self, v: u128) {
        self.next_att(false);
        self.data.extend_from_slice(&v.to_be_bytes());
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
        if v.len() < TEXT_TOASTED as usize {
            self.data.extend_from_slice(&(v.len() as u16).to_le_bytes());
        } else {
            self.wide = true;
            self.data.extend_from_slice(&TEXT_WIDE.to_le_bytes());
            self.data.extend_from_slice(&(v.len() as u32).to_le_bytes());
        }
        self.data.extend_from_slice(v);
    }

    /// Adds a toasted text value: `form` starts with its kind byte (see
    /// `toast`); `external` when it points to TOAST chunks.
    pub fn push_toasted(&mut self, form: &[u8], external: bool) {
        self.next_att(false);
        debug_assert!(form.len() < (TEXT_WIDE & !TEXT_TOASTED) as usize);
        self.data
            .extend_from_slice(&(TEXT_TOASTED | form.len() as u16).to_le_bytes());
        self.data.extend_from_slice(form);
        self.external |= external;
    }

    /// Adds an attribute exactly as another tuple stores it (`bytes`,
    /// header included, as [`walk_raw`] hands it out).
    pub fn push_stored(&mut self, bytes: &[u8]) {
        self.next_att(false);
        if bytes.len() >= 2 && u16::from_le_bytes([bytes[0], bytes[1]]) == TEXT_WIDE {
            self.wide = true;
        }
        self.data.extend_from_slice(bytes);
    }

    /// Bytes of the tuple [`TupleBuilder::finish`] would make.
    pub fn len(&self) -> usize {
        TUPLE_HEADER_SIZE + if self.any_null { self.nulls.len() } else { 0 } + self.data.len()
    }

    /// Whether no attribute was added since [`TupleBuilder::begin`].
    pub fn is_empty(&self) -> bool {
        self.natts == 0
    }

    /// Whether some value has the wide form: the tuple must go through
    /// `toast` before it can be stored.
    pub fn has_wide(&self) -> bool {
        self.wide
    }

    /// Finishes the tuple with the inserting transaction's xid (command
    /// id 0: the single-statement path).
    pub fn finish(&mut self, xmin: Xid) -> &[u8] {
        self.finish_cid(xmin, 0)
    }

    /// Finishes the tuple as inserted by command `cmin` of transaction
    /// `xmin`.
    pub fn finish_cid(&mut self, xmin: Xid, cmin: u32) -> &[u8] {
        self.out.clear();
        self.out.extend_from_slice(&xmin.to_le_bytes());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        self.out
            .extend_from_slice(&(self.natts as u16).to_le_bytes());
        let flags = if self.any_null { HAS_NULLS } else { 0 }
            | if self.external { HAS_EXTERNAL } else { 0 };
        self.out.extend_from_slice(&flags.to_le_bytes());
        self.out.extend_from_slice(&cmin.to_le_bytes());
        self.out.extend_from_slice(&[0; 12]);
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
    /// A `uuid` (see `DataType::Uuid`).
    Uuid(u128),
    /// The bytes of a string or `bytea` value.
    Text(&'a [u8]),
    /// A toasted text value: its form, from the kind byte on (see `toast`).
    Toasted(&'a [u8]),
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
        DataType::Uuid => Attr::Uuid(u128::from_be_bytes(b[0..16].try_into().unwrap())),
        DataType::Text
        | DataType::Varchar
        | DataType::Bpchar
        | DataType::Bytea
        | DataType::Json
        | DataType::Jsonb => text_attr(b).0,
        other => unreachable!("tuples store no values of type {other:?}"),
    }
}

/// The text attribute at the start of `b` and the bytes it takes.
#[inline]
pub fn text_attr(b: &[u8]) -> (Attr<'_>, usize) {
    let h = u16::from_le_bytes([b[0], b[1]]);
    if h < TEXT_TOASTED {
        let len = h as usize;
        (Attr::Text(&b[2..2 + len]), 2 + len)
    } else if h == TEXT_WIDE {
        let len = u32::from_le_bytes(b[2..6].try_into().unwrap()) as usize;
        (Attr::Text(&b[6..6 + len]), 6 + len)
    } else {
        let len = (h & !TEXT_TOASTED) as usize;
        (Attr::Toasted(&b[2..2 + len]), 2 + len)
    }
}

/// Walks the attributes of tuple `t` (whose columns have `types`) up to and
/// including attribute `last`, calling `f(attno, attr)` for each.
#[inline]
pub fn walk<'t>(t: &'t [u8], types: &[DataType], last: usize, mut f: impl FnMut(usize, Attr<'t>)) {
    walk_raw(t, types, last, |attno, a, _| f(attno, a));
}

/// [`walk`], also handing out each attribute's stored bytes (header
/// included; empty for NULL).
#[inline]
pub fn walk_raw<'t>(
    t: &'t [u8],
    types: &[DataType],
    last: usize,
    mut f: impl FnMut(usize, Attr<'t>, &'t [u8]),
) {
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
            f(attno, Attr::Null, &[]);
            continue;
        }
        let (a, len) = match ty.fixed_width() {
            Some(w) => (fixed_attr(&t[pos..], *ty), w),
            None => text_attr(&t[pos..]),
        };
        f(attno, a, &t[pos..pos + len]);
        pos += len;
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
