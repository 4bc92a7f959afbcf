//! TOAST: text values of any size, compressed and moved out of line, as
//! PostgreSQL stores them.
//!
//! A heap tuple must fit in a page. PostgreSQL's answer, which tusk
//! follows, is to shrink a tuple that passes [`TOAST_TUPLE_THRESHOLD`]
//! (2032 bytes, a quarter of a page) before it is stored: long values are
//! compressed inline, and what is still too long moves *out of line*, cut
//! into chunks stored as tuples of a second heap, the table's TOAST
//! relation, with a pointer left in the tuple.
//!
//! ## Which values, in which order
//!
//! [`Toaster::toast`] runs PostgreSQL 15's rounds (`heap_toast_insert_or_update`)
//! on PostgreSQL's own size model of the tuple (its header, alignment and
//! 1-byte headers for short values, see [`PgSize`]), so that it takes the
//! same decisions for the same row, and `pg_column_size` reports the same
//! sizes:
//!
//! 1. while the data exceeds the target, the biggest value not yet tried
//!    (larger than a pointer) is compressed if that saves more than 2 bytes,
//!    and moved out of line at once if it alone still exceeds the target;
//! 2. while the data exceeds the target, the biggest inline value (larger
//!    than a pointer) moves out of line.
//!
//! Compression is PostgreSQL's default, `pglz` (see `pglz`): byte for byte
//! its output, so sizes match. (PostgreSQL 15 also offers LZ4 through
//! `default_toast_compression`; pglz is its default and the one whose
//! results tusk can reproduce exactly.)
//!
//! ## Forms
//!
//! A toasted value's bytes in its tuple (after the text header that marks
//! them, see `tuple`) start with a kind byte:
//!
//! ```text
//!   compressed inline: 1 | raw length u32 | method u8 (1 = pglz) | compressed bytes
//!   external:          2 | raw length u32 | stored length u32 | method u8 (0 = none, 1 = pglz)
//!                        | TOAST relation u32 | value id u32 | first chunk: block u32, item u16
//! ```
//!
//! ## The TOAST relation and its chunks
//!
//! A table's TOAST relation is a heap relation kept as the table's
//! [`Fork::Toast`] (file `<oid>_toast`, see `smgr`'s forks; [`toast_rel`]):
//! it has no catalog entry of its own and its file is created by the first
//! value moved out of line. It lives and dies with the table's relation
//! number, as every fork does: DROP TABLE, TRUNCATE and a rewrite (which
//! give the table a new number) drop its buffers and file along with the
//! table's (`BufferPool::drop_relation`, `Smgr::unlink`); a table the
//! running transaction created keeps its TOAST relation unlogged with it,
//! and the commit syncs both.
//!
//! A value is cut into chunks of [`CHUNK_SIZE`] bytes (four to a page),
//! each an ordinary heap tuple `(value id int4, seq int4, next int8,
//! data text)` inserted, WAL-logged and crash-safe like any row, with the
//! row's transaction as `xmin`. Chunks are written last first, so each
//! knows the TID of the next (`next`, -1 for none) and the pointer names the
//! first: reading a value follows the chain, and needs no index (PostgreSQL
//! keeps a btree on the value id instead). The value id and sequence
//! numbers are checked on the way.
//!
//! ## Visibility and clean-up
//!
//! A pointer is reached only through its row, so reading chunks needs no
//! visibility check of its own: a chunk lives as long as a row that points
//! to it can be seen. Deleting a row, or updating it away, deletes its
//! out-of-line values' chunks with the same transaction
//! ([`delete_external`], as PostgreSQL's `toast_delete`), so they become
//! dead exactly when the row does and VACUUM, which vacuums a table's TOAST
//! relation with it, reclaims them; a rolled-back insert leaves chunks
//! whose `xmin` aborted, dead as well. (An update writes every value of the
//! new version afresh; PostgreSQL keeps the pointer of an unchanged value.)

use crate::catalog::DataType;
use crate::heap::{self, HeapInserter, Tid};
use crate::pglz;
use crate::smgr::{fork_of, rel_of, Fork};
use crate::tuple::{self, Attr, TupleBuilder, HAS_EXTERNAL, HAS_NULLS};
use crate::txn::Xid;
use crate::{Database, StorageError};
use std::sync::atomic::{AtomicU32, Ordering};

/// A tuple longer than this (in PostgreSQL's size) is toasted.
pub const TOAST_TUPLE_THRESHOLD: usize = 2032;
/// What toasting shrinks a tuple's data to, when it can.
pub const TOAST_TUPLE_TARGET: usize = 2032;
/// PostgreSQL's `TOAST_INDEX_TARGET`: longer index values are compressed
/// (when that helps) before the index entry's size is checked.
pub const TOAST_INDEX_TARGET: usize = 510;
/// PostgreSQL's largest heap tuple (`MaxHeapTupleSize`).
pub const PG_MAX_TUPLE: usize = 8160;
/// Bytes of a pointer in PostgreSQL (`TOAST_POINTER_SIZE`): values no
/// bigger than its aligned size are never toasted.
const PG_POINTER_SIZE: usize = 18;
/// Data bytes per chunk: four chunk tuples to a page.
pub const CHUNK_SIZE: usize = 1986;
/// The attributes of a chunk tuple.
const CHUNK_TYPES: [DataType; 4] = [
    DataType::Int4,
    DataType::Int4,
    DataType::Int8,
    DataType::Text,
];

const KIND_COMPRESSED: u8 = 1;
const KIND_EXTERNAL: u8 = 2;
const METHOD_NONE: u8 = 0;
const METHOD_PGLZ: u8 = 1;
/// Bytes of an external form.
const EXTERNAL_LEN: usize = 24;
/// Bytes of a compressed form before the compressed data.
const COMPRESSED_HEADER: usize = 6;

/// The TOAST relation of table `rel`: its [`Fork::Toast`].
pub fn toast_rel(rel: u32) -> u32 {
    rel_of(rel, Fork::Toast)
}

/// Whether `rel` is a TOAST relation.
pub fn is_toast_rel(rel: u32) -> bool {
    fork_of(rel) == Fork::Toast
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Other(format!("invalid toasted value: {what}"))
}

/// A value's out-of-line address (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pointer {
    pub raw_len: u32,
    /// Bytes stored in the chunks (compressed, if `method` says so).
    pub stored_len: u32,
    pub method: u8,
    pub rel: u32,
    pub value_id: u32,
    pub first: Tid,
}

impl Pointer {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(KIND_EXTERNAL);
        out.extend_from_slice(&self.raw_len.to_le_bytes());
        out.extend_from_slice(&self.stored_len.to_le_bytes());
        out.push(self.method);
        out.extend_from_slice(&self.rel.to_le_bytes());
        out.extend_from_slice(&self.value_id.to_le_bytes());
        out.extend_from_slice(&self.first.block.to_le_bytes());
        out.extend_from_slice(&self.first.item.to_le_bytes());
    }

    fn decode(b: &[u8]) -> Option<Pointer> {
        let b = b.get(..EXTERNAL_LEN)?;
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        Some(Pointer {
            raw_len: u32_at(1),
            stored_len: u32_at(5),
            method: b[9],
            rel: u32_at(10),
            value_id: u32_at(14),
            first: Tid {
                block: u32_at(18),
                item: u16::from_le_bytes([b[22], b[23]]),
            },
        })
    }
}

/// A toasted value's form, parsed.
#[derive(Debug, Clone, Copy)]
pub enum Form<'a> {
    Compressed {
        raw_len: usize,
        method: u8,
        data: &'a [u8],
    },
    External(Pointer),
}

impl<'a> Form<'a> {
    /// Parses `form` (an [`Attr::Toasted`]'s bytes).
    pub fn parse(form: &'a [u8]) -> Result<Form<'a>, StorageError> {
        match form.first() {
            Some(&KIND_COMPRESSED) if form.len() >= COMPRESSED_HEADER => Ok(Form::Compressed {
                raw_len: u32::from_le_bytes(form[1..5].try_into().unwrap()) as usize,
                method: form[5],
                data: &form[COMPRESSED_HEADER..],
            }),
            Some(&KIND_EXTERNAL) => Pointer::decode(form)
                .map(Form::External)
                .ok_or_else(|| corrupt("short pointer")),
            _ => Err(corrupt("unknown kind")),
        }
    }

    /// The value's length.
    pub fn raw_len(&self) -> usize {
        match self {
            Form::Compressed { raw_len, .. } => *raw_len,
            Form::External(p) => p.raw_len as usize,
        }
    }

    /// `pg_column_size` of the value as stored: the compressed datum with
    /// its 8 bytes of headers, or what its chunks hold (with the 4-byte
    /// size word of a compressed one), as PostgreSQL counts.
    pub fn pg_column_size(&self) -> usize {
        match self {
            Form::Compressed { data, .. } => data.len() + 8,
            Form::External(p) if p.method == METHOD_NONE => p.stored_len as usize,
            Form::External(p) => p.stored_len as usize + 4,
        }
    }
}

/// `pg_column_size` of a text value of `len` bytes stored inline
/// uncompressed: a 1-byte header up to 126 bytes, else 4.
pub fn pg_inline_size(len: usize) -> usize {
    if len <= 126 {
        len + 1
    } else {
        len + 4
    }
}

/// Appends the value of toasted `form` to `out`, reading its chunks
/// through `db`'s buffer pool if it is out of line.
pub fn detoast(db: &Database, form: &[u8], out: &mut Vec<u8>) -> Result<(), StorageError> {
    match Form::parse(form)? {
        Form::Compressed {
            raw_len,
            method,
            data,
        } => decompress(method, data, raw_len, out),
        Form::External(p) if p.method == METHOD_NONE => read_chunks(db, &p, out),
        Form::External(p) => {
            let mut stored = Vec::with_capacity(p.stored_len as usize);
            read_chunks(db, &p, &mut stored)?;
            decompress(p.method, &stored, p.raw_len as usize, out)
        }
    }
}

fn decompress(
    method: u8,
    data: &[u8],
    raw_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), StorageError> {
    if method != METHOD_PGLZ {
        return Err(corrupt("unknown compression method"));
    }
    pglz::decompress(data, raw_len, out).ok_or_else(|| corrupt("compressed data is corrupt"))
}

/// One chunk tuple's attributes: value id, sequence number, next chunk, data.
fn chunk_of(t: &[u8]) -> Option<(u32, u32, Option<Tid>, &[u8])> {
    let mut parts = (None, None, None, None);
    tuple::walk(t, &CHUNK_TYPES, 3, |i, a| match (i, a) {
        (0, Attr::Int4(v)) => parts.0 = Some(v as u32),
        (1, Attr::Int4(v)) => parts.1 = Some(v as u32),
        (2, Attr::Int8(v)) => parts.2 = Some((v >= 0).then(|| Tid::from_u64(v as u64))),
        (3, Attr::Text(d)) => parts.3 = Some(d),
        _ => {}
    });
    Some((parts.0?, parts.1?, parts.2?, parts.3?))
}

/// Appends the bytes of `p`'s chunks to `out`, following the chain.
fn read_chunks(db: &Database, p: &Pointer, out: &mut Vec<u8>) -> Result<(), StorageError> {
    let want = p.stored_len as usize;
    let start = out.len();
    out.reserve(want);
    let mut next = Some(p.first);
    let mut seq = 0u32;
    while out.len() - start < want {
        let tid = next.ok_or_else(|| corrupt("chunk chain ends early"))?;
        let ok = heap::read_tuple(&db.pool, p.rel, tid, |t| match chunk_of(t) {
            Some((id, s, n, data)) if id == p.value_id && s == seq => {
                out.extend_from_slice(data);
                next = n;
                true
            }
            _ => false,
        })?;
        if ok != Some(true) {
            return Err(corrupt(&format!(
                "missing chunk {seq} of value {} in relation {}",
                p.value_id, p.rel
            )));
        }
        seq += 1;
    }
    if out.len() - start != want {
        return Err(corrupt("chunks longer than the value"));
    }
    Ok(())
}

/// Tuple `t` (a row of a table whose columns have `types`) with every
/// toasted value read back inline (in the wide form when long), for the
/// one-row paths that deform a stored tuple without a scan: unique
/// violations' keys, rechecks, ON CONFLICT's existing row. The header's
/// transaction fields are `t`'s; `t` itself when nothing is toasted.
pub fn detoast_tuple<'t>(
    db: &Database,
    t: &'t [u8],
    types: &[DataType],
) -> Result<std::borrow::Cow<'t, [u8]>, StorageError> {
    use std::borrow::Cow;
    let Some(last) = types.len().checked_sub(1) else {
        return Ok(Cow::Borrowed(t));
    };
    let mut toasted = false;
    tuple::walk(t, types, last, |_, a| {
        toasted |= matches!(a, Attr::Toasted(_))
    });
    if !toasted {
        return Ok(Cow::Borrowed(t));
    }
    let mut tb = TupleBuilder::new();
    let mut value = Vec::new();
    let mut failed = None;
    tb.begin();
    tuple::walk_raw(t, types, last, |_, a, raw| match a {
        Attr::Null => tb.push_null(),
        Attr::Toasted(form) => {
            value.clear();
            if let Err(e) = detoast(db, form, &mut value) {
                failed.get_or_insert(e);
            }
            tb.push_text(&value);
        }
        _ => tb.push_stored(raw),
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let mut out = tb.finish_cid(tuple::xmin(t), tuple::cmin(t)).to_vec();
    tuple::set_xmax(&mut out, tuple::xmax(t));
    tuple::set_cmax(&mut out, tuple::cmax(t));
    let (block, item) = tuple::ctid(t);
    tuple::set_ctid(&mut out, block, item);
    Ok(Cow::Owned(out))
}

/// Deletes, as `xid`, the chunks of every out-of-line value of tuple `t`
/// (a row of a table whose columns have `types`) that is being deleted or
/// updated away (see the module doc). Nothing to do unless the tuple has
/// [`HAS_EXTERNAL`].
pub fn delete_external(
    db: &Database,
    t: &[u8],
    types: &[DataType],
    xid: Xid,
) -> Result<(), StorageError> {
    if tuple::infomask(t) & HAS_EXTERNAL == 0 || types.is_empty() {
        return Ok(());
    }
    let mut pointers = Vec::new();
    tuple::walk(t, types, types.len() - 1, |_, a| {
        if let Attr::Toasted(form) = a {
            if let Ok(Form::External(p)) = Form::parse(form) {
                pointers.push(p);
            }
        }
    });
    for p in pointers {
        let mut next = Some(p.first);
        while let Some(tid) = next {
            next = heap::read_tuple(&db.pool, p.rel, tid, |t| {
                chunk_of(t).and_then(|(id, _, n, _)| if id == p.value_id { n } else { None })
            })?
            .flatten();
            heap::delete(&db.pool, p.rel, tid, xid)?;
        }
    }
    Ok(())
}

/// An attribute's size in PostgreSQL's heap tuple: bytes and alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgSize {
    pub len: usize,
    pub align: usize,
}

/// PostgreSQL's size of a fixed-width attribute of type `ty`.
fn pg_fixed(ty: DataType) -> Option<PgSize> {
    let (len, align) = match ty {
        DataType::Bool => (1, 1),
        DataType::Int2 => (2, 2),
        DataType::Int4 | DataType::Float4 | DataType::Date => (4, 4),
        DataType::Int8
        | DataType::Float8
        | DataType::Time
        | DataType::Timestamp
        | DataType::TimestampTz => (8, 8),
        DataType::Interval => (16, 8),
        DataType::Uuid => (16, 1),
        // Varlenas (sized by their value), and the catalog types, which
        // tables never store.
        _ => return None,
    };
    Some(PgSize { len, align })
}

/// PostgreSQL's size of a varlena of `payload` bytes stored uncompressed
/// inline: a 1-byte header and no alignment up to 126 bytes.
fn pg_varlena(payload: usize) -> PgSize {
    if payload <= 126 {
        PgSize {
            len: payload + 1,
            align: 1,
        }
    } else {
        PgSize {
            len: payload + 4,
            align: 4,
        }
    }
}

/// PostgreSQL's data size of attributes `sizes` (NULLs are `None`).
fn pg_data_size(sizes: &[Option<PgSize>]) -> usize {
    sizes
        .iter()
        .flatten()
        .fold(0, |at, s| at.next_multiple_of(s.align) + s.len)
}

/// PostgreSQL's tuple header size for `natts` attributes.
fn pg_header(natts: usize, has_nulls: bool) -> usize {
    (23 + if has_nulls { natts.div_ceil(8) } else { 0 }).next_multiple_of(8)
}

/// What toasting does to one attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Stored as it is.
    Keep,
    /// Compressed inline: the compressed bytes are at this offset and
    /// length of the toaster's buffer.
    Compressed(usize, usize),
    /// Moved out of line (compressed first when the first field is set).
    External(Option<(usize, usize)>),
}

/// Toasts the tuples of one table (see the module doc).
pub struct Toaster<'d> {
    db: &'d Database,
    rel: u32,
    types: Vec<DataType>,
    chunks: Option<HeapInserter<'d>>,
    out: TupleBuilder,
    chunk: TupleBuilder,
    /// Compressed values of the tuple being toasted.
    compressed: Vec<u8>,
    form: Vec<u8>,
}

/// Value ids: unique enough to tell chains apart when checking them.
static NEXT_VALUE_ID: AtomicU32 = AtomicU32::new(1);

impl<'d> Toaster<'d> {
    /// A toaster for the rows of table `rel`, whose columns have `types`.
    pub fn new(db: &'d Database, rel: u32, types: Vec<DataType>) -> Toaster<'d> {
        Toaster {
            db,
            rel,
            types,
            chunks: None,
            out: TupleBuilder::new(),
            chunk: TupleBuilder::new(),
            compressed: Vec::new(),
            form: Vec::new(),
        }
    }

    /// Whether tuple `t` must be toasted before it is stored: it passes
    /// the threshold in PostgreSQL's size model, or holds a value of the
    /// wide form no page can hold.
    pub fn needs_toast(&self, t: &[u8]) -> bool {
        // PostgreSQL's tuple is longer than tusk's by less than 8 bytes an
        // attribute (alignment, 4-byte headers): short tuples need no look.
        if t.len() + 8 * self.types.len() <= TOAST_TUPLE_THRESHOLD {
            return false;
        }
        has_wide(t, &self.types) || pg_tuple_len(t, &self.types) > TOAST_TUPLE_THRESHOLD
    }

    /// Tuple `t` (of transaction `xid`, command `cid`) as it is to be
    /// stored: toasted if it must be (values moved out of line are written
    /// to the TOAST relation as `xid`, `cid`), else `t` itself.
    pub fn toast<'a>(
        &'a mut self,
        t: &'a [u8],
        xid: Xid,
        cid: u32,
    ) -> Result<&'a [u8], StorageError> {
        if !self.needs_toast(t) {
            return Ok(t);
        }
        let last = self.types.len() - 1;
        let mut raws: Vec<&[u8]> = Vec::with_capacity(self.types.len());
        let mut values: Vec<Option<&[u8]>> = Vec::with_capacity(self.types.len());
        let mut sizes: Vec<Option<PgSize>> = Vec::with_capacity(self.types.len());
        let types = &self.types;
        tuple::walk_raw(t, types, last, |i, a, raw| {
            raws.push(raw);
            let (value, size) = match a {
                Attr::Null => (None, None),
                Attr::Text(v) => (Some(v), Some(pg_varlena(v.len()))),
                Attr::Toasted(_) => (None, pg_stored(a)),
                _ => (None, pg_fixed(types[i]).or_else(|| pg_stored(a))),
            };
            values.push(value);
            sizes.push(size);
        });
        let has_nulls = tuple::infomask(t) & HAS_NULLS != 0;
        let max_data = TOAST_TUPLE_TARGET - pg_header(raws.len(), has_nulls);
        let mut plan = vec![Plan::Keep; raws.len()];
        // Per attribute: PostgreSQL's `tai_size` (the whole varlena in
        // memory) while it is a candidate; `None` once it is not.
        let mut candidate: Vec<Option<usize>> =
            values.iter().map(|v| v.map(|v| v.len() + 4)).collect();
        let mut incompressible = vec![false; raws.len()];
        self.compressed.clear();
        let biggest = |candidate: &[Option<usize>], skip: &dyn Fn(usize) -> bool| {
            let mut best: Option<(usize, usize)> = None;
            for (i, c) in candidate.iter().enumerate() {
                if let Some(size) = *c {
                    let floor = best.map_or(PG_POINTER_SIZE.next_multiple_of(8), |b| b.1);
                    if !skip(i) && size > floor {
                        best = Some((i, size));
                    }
                }
            }
            best.map(|b| b.0)
        };
        // Round 1: compress, and move out of line what alone is too long.
        while pg_data_size(&sizes) > max_data {
            let skip = |i: usize| incompressible[i] || matches!(plan[i], Plan::Compressed(..));
            let Some(i) = biggest(&candidate, &skip) else {
                break;
            };
            let v = values[i].expect("candidates have values");
            let at = self.compressed.len();
            let mut size = v.len() + 4;
            if pglz::compress(v, &mut self.compressed) {
                let clen = self.compressed.len() - at;
                if clen + 8 < v.len().saturating_sub(2) {
                    plan[i] = Plan::Compressed(at, clen);
                    size = clen + 8;
                    sizes[i] = Some(PgSize {
                        len: size,
                        align: 4,
                    });
                    candidate[i] = Some(size);
                } else {
                    self.compressed.truncate(at);
                    incompressible[i] = true;
                }
            } else {
                incompressible[i] = true;
            }
            if size > max_data {
                plan[i] = externalize(plan[i]);
                sizes[i] = Some(PgSize {
                    len: PG_POINTER_SIZE,
                    align: 1,
                });
                candidate[i] = None;
            }
        }
        // Round 2: move the biggest values out of line.
        while pg_data_size(&sizes) > max_data {
            let Some(i) = biggest(&candidate, &|_| false) else {
                break;
            };
            plan[i] = externalize(plan[i]);
            sizes[i] = Some(PgSize {
                len: PG_POINTER_SIZE,
                align: 1,
            });
            candidate[i] = None;
        }
        // The tuple again, with the planned forms.
        self.out.begin();
        for (i, raw) in raws.iter().enumerate() {
            match (plan[i], values[i]) {
                (Plan::Keep, _) if raw.is_empty() => self.out.push_null(),
                (Plan::Keep, _) => self.out.push_stored(raw),
                (Plan::Compressed(at, len), Some(v)) => {
                    self.form.clear();
                    self.form.push(KIND_COMPRESSED);
                    self.form.extend_from_slice(&(v.len() as u32).to_le_bytes());
                    self.form.push(METHOD_PGLZ);
                    self.form.extend_from_slice(&self.compressed[at..at + len]);
                    self.out.push_toasted(&self.form, false);
                }
                (Plan::External(c), Some(v)) => {
                    let (stored, method) = match c {
                        Some((at, len)) => (&self.compressed[at..at + len], METHOD_PGLZ),
                        None => (v, METHOD_NONE),
                    };
                    let p = write_chunks(
                        self.db,
                        self.rel,
                        &mut self.chunks,
                        &mut self.chunk,
                        stored,
                        (v.len(), method),
                        (xid, cid),
                    )?;
                    self.form.clear();
                    p.encode(&mut self.form);
                    self.out.push_toasted(&self.form, true);
                }
                (_, None) => unreachable!("only values are toasted"),
            }
        }
        let t = self.out.finish_cid(xid, cid);
        if t.len() > crate::page::MAX_ITEM_SIZE {
            let pg = pg_tuple_len(t, &self.types);
            return Err(StorageError::Report(Box::new(crate::ErrorReport {
                code: "54000",
                message: format!(
                    "row is too big: size {}, maximum size {PG_MAX_TUPLE}",
                    pg.max(PG_MAX_TUPLE + 1)
                ),
                detail: None,
                hint: None,
            })));
        }
        Ok(t)
    }
}

/// The plan of an attribute moved out of line.
fn externalize(p: Plan) -> Plan {
    match p {
        Plan::Compressed(at, len) => Plan::External(Some((at, len))),
        _ => Plan::External(None),
    }
}

/// PostgreSQL's size of a stored (non-text, or toasted) attribute.
fn pg_stored(a: Attr<'_>) -> Option<PgSize> {
    match a {
        Attr::Toasted(form) => match Form::parse(form).ok()? {
            Form::Compressed { data, .. } => Some(PgSize {
                len: data.len() + 8,
                align: 4,
            }),
            Form::External(_) => Some(PgSize {
                len: PG_POINTER_SIZE,
                align: 1,
            }),
        },
        Attr::Numeric(unscaled, scale) => Some(pg_varlena(crate::btree::keyenc::pg_numeric_size(
            unscaled, scale,
        ))),
        _ => None,
    }
}

/// PostgreSQL's length of tuple `t` (columns of `types`): header and data.
pub fn pg_tuple_len(t: &[u8], types: &[DataType]) -> usize {
    let mut sizes = Vec::with_capacity(types.len());
    if let Some(last) = types.len().checked_sub(1) {
        tuple::walk(t, types, last, |i, a| {
            sizes.push(match a {
                Attr::Null => None,
                Attr::Text(v) => Some(pg_varlena(v.len())),
                _ => pg_fixed(types[i]).or_else(|| pg_stored(a)),
            })
        });
    }
    pg_header(types.len(), tuple::infomask(t) & HAS_NULLS != 0) + pg_data_size(&sizes)
}

/// Whether tuple `t` holds a value of the wide form.
fn has_wide(t: &[u8], types: &[DataType]) -> bool {
    let mut wide = false;
    if let Some(last) = types.len().checked_sub(1) {
        tuple::walk_raw(t, types, last, |_, a, raw| {
            wide |= matches!(a, Attr::Text(_))
                && raw.len() >= 2
                && u16::from_le_bytes([raw[0], raw[1]]) == tuple::TEXT_WIDE;
        });
    }
    wide
}

/// Writes `stored` (the value, or its compressed bytes: `(raw length,
/// method)`) as chunks of table `rel`'s TOAST relation, last chunk first,
/// as `(xid, cid)`; returns the pointer.
fn write_chunks<'d>(
    db: &'d Database,
    rel: u32,
    inserter: &mut Option<HeapInserter<'d>>,
    chunk: &mut TupleBuilder,
    stored: &[u8],
    (raw_len, method): (usize, u8),
    (xid, cid): (Xid, u32),
) -> Result<Pointer, StorageError> {
    let trel = toast_rel(rel);
    let ins = match inserter {
        Some(i) => i,
        None => {
            db.smgr.create_if_missing(trel)?;
            inserter.insert(HeapInserter::new(&db.pool, trel))
        }
    };
    let value_id = NEXT_VALUE_ID.fetch_add(1, Ordering::Relaxed) ^ xid.rotate_left(16);
    let n = stored.len().div_ceil(CHUNK_SIZE).max(1);
    let mut next: i64 = -1;
    for seq in (0..n).rev() {
        let data = &stored[seq * CHUNK_SIZE..((seq + 1) * CHUNK_SIZE).min(stored.len())];
        chunk.begin();
        chunk.push_i32(value_id as i32);
        chunk.push_i32(seq as i32);
        chunk.push_i64(next);
        chunk.push_text(data);
        let tid = ins.insert(chunk.finish_cid(xid, cid))?;
        next = tid.to_u64() as i64;
    }
    Ok(Pointer {
        raw_len: raw_len as u32,
        stored_len: stored.len() as u32,
        method,
        rel: trel,
        value_id,
        first: Tid::from_u64(next as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_round_trip() {
        let p = Pointer {
            raw_len: 5_000_000,
            stored_len: 1_234_567,
            method: METHOD_PGLZ,
            rel: toast_rel(16_384),
            value_id: 0xdead_beef,
            first: Tid { block: 77, item: 3 },
        };
        let mut b = Vec::new();
        p.encode(&mut b);
        assert_eq!(b.len(), EXTERNAL_LEN);
        match Form::parse(&b).unwrap() {
            Form::External(q) => assert_eq!(p, q),
            f => panic!("{f:?}"),
        }
        assert!(is_toast_rel(p.rel) && !is_toast_rel(16_384));
        assert_eq!(Form::parse(&b).unwrap().pg_column_size(), 1_234_571);
    }

    /// A row with a compressible 100 kB value, an incompressible 20 kB
    /// one and a short one goes through the toaster into the heap, reads
    /// back detoasted, and deleting it deletes its chunks.
    #[test]
    fn values_round_trip_through_the_toast_relation() {
        use crate::catalog::{ColumnDef, SqlType, TableDef};
        use crate::TxnOptions;
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), &[]).unwrap();
        let mut txn = db.begin(TxnOptions::default());
        let def = TableDef::new(
            0,
            "t",
            vec![
                ColumnDef::new("id", SqlType::Int4, false),
                ColumnDef::new("a", SqlType::Text, false),
                ColumnDef::new("b", SqlType::Text, false),
                ColumnDef::new("c", SqlType::Text, false),
            ],
        );
        let def = txn.create_relation(def).unwrap();
        txn.commit().unwrap();

        let a: Vec<u8> = (0..100_000).map(|i| b"abcdefgh"[i % 8]).collect();
        let mut x = 0x2545_f491_u32;
        let b: Vec<u8> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                b'a' + (x % 26) as u8
            })
            .collect();
        let c = b"short".to_vec();
        let mut txn = db.begin(TxnOptions::default());
        let xid = txn.xid().unwrap();
        let cid = txn.command_id_for_write();
        let mut tb = TupleBuilder::new();
        tb.begin();
        tb.push_i32(7);
        tb.push_text(&a);
        tb.push_text(&b);
        tb.push_text(&c);
        let raw = tb.finish_cid(xid, cid).to_vec();
        assert!(tb.has_wide());
        let mut toaster = Toaster::new(&db, def.oid, def.column_types());
        let stored = toaster.toast(&raw, xid, cid).unwrap().to_vec();
        assert!(stored.len() <= TOAST_TUPLE_THRESHOLD);
        assert_ne!(tuple::infomask(&stored) & HAS_EXTERNAL, 0);
        let tid = txn.insert(def.oid, &stored).unwrap();
        txn.commit().unwrap();

        let types = def.column_types();
        let back = heap::read_tuple(&db.pool, def.oid, tid, <[u8]>::to_vec)
            .unwrap()
            .unwrap();
        let mut values: Vec<Vec<u8>> = Vec::new();
        let mut forms = Vec::new();
        tuple::walk(&back, &types, 3, |i, a| match a {
            Attr::Int4(v) => assert_eq!((i, v), (0, 7)),
            Attr::Text(v) => values.push(v.to_vec()),
            Attr::Toasted(f) => {
                let mut v = Vec::new();
                detoast(&db, f, &mut v).unwrap();
                forms.push(Form::parse(f).unwrap().pg_column_size());
                values.push(v);
            }
            a => panic!("{a:?}"),
        });
        assert_eq!(values, vec![a.clone(), b.clone(), c]);
        // The repetitive value compressed to a few hundred bytes; the
        // random one did not compress by a quarter and moved out whole.
        assert!(forms[0] < 2000, "{forms:?}");
        assert_eq!(forms[1], b.len());

        let trel = toast_rel(def.oid);
        assert!(db.smgr.exists(trel));
        let mut txn = db.begin(TxnOptions::default());
        let xid = txn.xid().unwrap();
        delete_external(&db, &back, &types, xid).unwrap();
        let mut live = 0;
        for block in 0..db.pool.nblocks(trel).unwrap() {
            for item in 1..=8u16 {
                let r = heap::read_tuple(&db.pool, trel, Tid { block, item }, tuple::xmax);
                if r.unwrap().is_some_and(|xmax| xmax != xid) {
                    live += 1;
                }
            }
        }
        assert_eq!(live, 0);
        txn.commit().unwrap();
    }

    #[test]
    fn pg_sizes() {
        assert_eq!(pg_varlena(126).len, 127);
        assert_eq!(pg_varlena(127), PgSize { len: 131, align: 4 });
        let sizes = [
            Some(PgSize { len: 1, align: 1 }),
            None,
            Some(PgSize { len: 8, align: 8 }),
            Some(pg_varlena(3)),
            Some(pg_varlena(200)),
        ];
        // 1, pad to 8, 8 -> 16, +4 -> 20, pad to 20, +204 -> 224.
        assert_eq!(pg_data_size(&sizes), 224);
        assert_eq!(pg_header(3, false), 24);
        assert_eq!(pg_header(9, true), 32);
        assert_eq!(pg_header(8, true), 24);
    }
}
