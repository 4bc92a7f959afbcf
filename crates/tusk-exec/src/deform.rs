//! Tuple deforming: stored heap tuples into column vectors, shared by the
//! sequential scan, the index scan, ANALYZE and the DML paths.
//!
//! A [`Deformer`] is made once per scan for the attributes it needs. It
//! turns each page's visible tuples into vectors in one of three ways:
//!
//! - **fixed offsets**: when every attribute up to the last needed one has
//!   a fixed width and every tuple of the page stores them without NULLs
//!   (`dense`, a bulk-loaded table), each needed attribute lies at the same
//!   offset in every tuple, and each column is filled by one loop over the
//!   page's tuples;
//! - **offset program**: when some attribute before a needed one is a
//!   string but the page is still dense, a small program made once per
//!   scan (skip so many fixed bytes, skip a string, take an attribute)
//!   finds the needed attributes' offsets in each tuple — reading only the
//!   strings' lengths — into one array per page; then, again, each column
//!   is filled by one loop reading at those offsets;
//! - **tuple by tuple**: otherwise (tuples with NULLs or fewer stored
//!   attributes), each tuple is walked attribute by attribute.
//!
//! A damaged tuple too short for its attributes reads as zeros or empty
//! strings rather than out of bounds (the page passed its checksum, so this
//! is never expected).
//!
//! A toasted text value (compressed, or stored out of line in the table's
//! TOAST fork, see tusk-storage's `toast`) is detoasted on the way, through
//! the database given to [`Deformer::detoasting`]; a failure to read it is
//! kept for [`Deformer::take_error`], the value reading as empty meanwhile.

use crate::numeric::Numeric;
use crate::vector::{Data, Vector};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::OnceLock;
use tusk_storage::heap::{Tid, VisibleItem};
use tusk_storage::tuple::{self, Attr};
use tusk_storage::visible::attrs;
use tusk_storage::{toast, DataType, Database, StorageError};

/// One step of the offset program over a NULL-free tuple.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Skip this many bytes of fixed-width attributes.
    Skip(usize),
    /// Skip a string (its 2-byte length and its bytes).
    SkipText,
    /// The attribute here is the `k`th taken one; it is `width` bytes
    /// (`None`: a string).
    Take { width: Option<usize> },
}

/// What a [`Deformer`] does, fixed by the table's types, the attributes
/// it takes and whether it adds the TID: made once and shared (a cached
/// plan's index scan keeps one in its node, see [`LayoutCache`]).
#[derive(Debug)]
pub(crate) struct Layout {
    table_types: Vec<DataType>,
    /// For each attribute up to the last needed one: its output column.
    out_of_att: Vec<Option<usize>>,
    /// When every attribute up to the last needed one has a fixed width:
    /// (byte offset, type, output column) of each needed one, read straight
    /// from tuples that have no NULLs (`tuple::is_dense`).
    fixed: Option<Vec<(usize, DataType, usize)>>,
    /// The offset program (see the module doc) and, for each taken
    /// attribute in attribute order, its type and output column.
    program: Vec<Step>,
    taken: Vec<(DataType, usize)>,
    out_types: Vec<DataType>,
    with_tid: bool,
}

/// A plan node's [`Layout`], made by the first execution that needs it
/// and shared by its copies and later executions. It caches what the
/// node's other fields determine, so any two compare equal.
#[derive(Debug, Clone, Default)]
pub struct LayoutCache(Arc<OnceLock<Arc<Layout>>>);

impl PartialEq for LayoutCache {
    fn eq(&self, _: &LayoutCache) -> bool {
        true
    }
}

impl LayoutCache {
    /// The layout, made with `make` on first use.
    pub(crate) fn get(&self, make: impl FnOnce() -> Layout) -> Arc<Layout> {
        self.0.get_or_init(|| Arc::new(make())).clone()
    }
}

/// Turns stored tuples into column vectors: the needed attributes and,
/// optionally, a last Int8 column with the TID.
pub(crate) struct Deformer {
    layout: Arc<Layout>,
    /// Where toasted values are read (see the module doc).
    db: Option<Arc<Database>>,
    /// The first toasted value that could not be read.
    error: RefCell<Option<StorageError>>,
    /// A detoasted value.
    scratch: RefCell<Vec<u8>>,
}

impl Deformer {
    pub(crate) fn new(table_types: &[DataType], columns: &[usize], with_tid: bool) -> Deformer {
        Deformer::with_layout(Arc::new(Layout::new(table_types, columns, with_tid)))
    }

    /// A deformer doing what `layout` says.
    pub(crate) fn with_layout(layout: Arc<Layout>) -> Deformer {
        Deformer {
            layout,
            db: None,
            error: RefCell::new(None),
            scratch: RefCell::new(Vec::new()),
        }
    }
}

impl Layout {
    /// The layout taking attributes `columns` (in output order) of tuples
    /// of a table with `table_types`, and the TID if `with_tid`.
    pub(crate) fn new(table_types: &[DataType], columns: &[usize], with_tid: bool) -> Layout {
        let last = columns.iter().copied().max();
        let mut out_of_att = vec![None; last.map_or(0, |l| l + 1)];
        for (out, &att) in columns.iter().enumerate() {
            out_of_att[att] = Some(out);
        }
        let mut out_types: Vec<DataType> = columns.iter().map(|&a| table_types[a]).collect();
        if with_tid {
            out_types.push(DataType::Int8);
        }
        let fixed = last
            .and_then(|l| tuple::fixed_offsets(table_types, l))
            .map(|offsets| {
                out_of_att
                    .iter()
                    .enumerate()
                    .filter_map(|(att, o)| o.map(|o| (offsets[att], table_types[att], o)))
                    .collect()
            });
        let mut program = Vec::new();
        let mut taken = Vec::new();
        for (att, o) in out_of_att.iter().enumerate() {
            let ty = table_types[att];
            let width = ty.fixed_width();
            match (o, width) {
                (Some(o), _) => {
                    program.push(Step::Take { width });
                    taken.push((ty, *o));
                }
                (None, Some(w)) => match program.last_mut() {
                    Some(Step::Skip(n)) => *n += w,
                    _ => program.push(Step::Skip(w)),
                },
                (None, None) => program.push(Step::SkipText),
            }
        }
        Layout {
            table_types: table_types.to_vec(),
            out_of_att,
            fixed,
            program,
            taken,
            out_types,
            with_tid,
        }
    }
}

impl Deformer {
    /// The deformer, reading toasted values through `db`.
    pub(crate) fn detoasting(mut self, db: Arc<Database>) -> Deformer {
        self.db = Some(db);
        self
    }

    /// The error of a toasted value that could not be read, if any.
    pub(crate) fn take_error(&self) -> Option<StorageError> {
        self.error.borrow_mut().take()
    }

    /// Appends toasted value `form` to text column `v`, detoasted.
    fn push_toasted(&self, v: &mut Vector, form: &[u8]) {
        let before = v.len();
        let mut buf = self.scratch.borrow_mut();
        buf.clear();
        let read = match &self.db {
            Some(db) => toast::detoast(db, form, &mut buf),
            None => Err(StorageError::Other(
                "a toasted value read without its database".into(),
            )),
        };
        if let Err(e) = read {
            buf.clear();
            self.error.borrow_mut().get_or_insert(e);
        }
        match &mut v.data {
            Data::Text(d) | Data::Bytea(d) => d.push(&buf),
            d => d.push_default(),
        }
        v.push_null_flag(before, false);
    }

    pub(crate) fn columns(&self, capacity: usize) -> Vec<Vector> {
        self.layout
            .out_types
            .iter()
            .map(|&t| Vector::with_capacity(t, capacity))
            .collect()
    }

    /// Attributes a tuple must store, NULL-free, for the column-by-column
    /// paths (see [`Deformer::push_page`]).
    pub(crate) fn dense_natts(&self) -> usize {
        self.layout.out_of_att.len()
    }

    /// Appends the visible tuples `items` of page `page` (block `block`) to
    /// `cols`; `dense` says whether every one of them stores
    /// [`Deformer::dense_natts`] attributes with no NULL (see the module
    /// doc for the three ways).
    pub(crate) fn push_page(
        &self,
        cols: &mut [Vector],
        page: &[u8],
        items: &[VisibleItem],
        dense: bool,
        block: u32,
    ) {
        if self.layout.out_of_att.is_empty() {
            // No attribute needed (count(*)): nothing to deform.
        } else if !dense {
            for it in items {
                self.push_tuple(cols, it.tuple(page));
            }
        } else if let Some(fixed) = self.layout.fixed.as_deref() {
            for &(off, ty, o) in fixed {
                push_fixed_column(&mut cols[o], ty, page, items, off);
            }
        } else {
            self.push_by_program(cols, page, items);
        }
        if self.layout.with_tid {
            if let Some(Data::Int8(d)) = cols.last_mut().map(|c| &mut c.data) {
                d.extend(items.iter().map(|it| {
                    Tid {
                        block,
                        item: it.item(),
                    }
                    .to_u64() as i64
                }));
            }
        }
    }

    /// The offset program's path: every tuple stores the needed attributes
    /// without NULLs, some after a string.
    fn push_by_program(&self, cols: &mut [Vector], page: &[u8], items: &[VisibleItem]) {
        let k = self.layout.taken.len();
        // offsets[i * k + j]: where taken attribute j of tuple i starts
        // (u32::MAX: the tuple is too short).
        let mut offsets = vec![u32::MAX; items.len() * k];
        for (i, it) in items.iter().enumerate() {
            let t = it.tuple(page);
            let mut pos = tuple::TUPLE_HEADER_SIZE;
            let mut j = 0;
            for step in &self.layout.program {
                match *step {
                    Step::Skip(n) => pos += n,
                    Step::SkipText => match text_len(t, pos) {
                        Some(n) => pos += n,
                        None => break,
                    },
                    Step::Take { width } => {
                        let len = match width {
                            Some(w) => w,
                            None => match text_len(t, pos) {
                                Some(n) => n,
                                None => break,
                            },
                        };
                        if pos + len > t.len() {
                            break;
                        }
                        offsets[i * k + j] = pos as u32;
                        pos += len;
                        j += 1;
                    }
                }
            }
        }
        for (j, &(ty, o)) in self.layout.taken.iter().enumerate() {
            let v = &mut cols[o];
            let at = |i: usize| offsets[i * k + j];
            if matches!(v.data, Data::Text(_) | Data::Bytea(_)) {
                for (i, it) in items.iter().enumerate() {
                    let t = it.tuple(page);
                    let a = match at(i) {
                        u32::MAX => Attr::Text(b""),
                        p => tuple::text_attr(&t[p as usize..]).0,
                    };
                    match a {
                        Attr::Toasted(form) => self.push_toasted(v, form),
                        a => push_attr_data(&mut v.data, a),
                    }
                }
            } else {
                for (i, it) in items.iter().enumerate() {
                    match at(i) {
                        u32::MAX => v.data.push_default(),
                        p => push_attr_data(
                            &mut v.data,
                            tuple::fixed_attr(&it.tuple(page)[p as usize..], ty),
                        ),
                    }
                }
            }
            let n = v.len();
            if let Some(m) = &mut v.nulls {
                m.resize(n, false);
            }
        }
    }

    /// Appends tuple `t` to `cols` (the TID column, if any, is the
    /// caller's), attribute by attribute.
    #[inline]
    pub(crate) fn push_tuple(&self, cols: &mut [Vector], t: &[u8]) {
        let Some(last) = self.layout.out_of_att.len().checked_sub(1) else {
            return;
        };
        match self.layout.fixed.as_deref() {
            Some(fixed) if tuple::is_dense(t, last) => {
                for &(off, ty, o) in fixed {
                    push_attr(&mut cols[o], tuple::fixed_attr(&t[off..], ty));
                }
            }
            _ => {
                let out_of_att = &self.layout.out_of_att;
                tuple::walk(t, &self.layout.table_types, last, |att, a| {
                    if let Some(o) = out_of_att[att] {
                        match a {
                            Attr::Toasted(form) => self.push_toasted(&mut cols[o], form),
                            a => push_attr(&mut cols[o], a),
                        }
                    }
                });
            }
        }
    }

    /// Appends tuple `t` (at `tid`) to `cols`, its TID too when the
    /// deformer makes a TID column.
    #[inline]
    pub(crate) fn push(&self, cols: &mut [Vector], t: &[u8], tid: Tid) {
        self.push_tuple(cols, t);
        if self.layout.with_tid {
            if let Some(Data::Int8(d)) = cols.last_mut().map(|c| &mut c.data) {
                d.push(tid.to_u64() as i64);
            }
        }
    }
}

/// The bytes the string stored at `pos` of tuple `t` takes, header
/// included (any of its forms, see tusk-storage's `tuple`), if the tuple
/// holds all of it.
#[inline]
fn text_len(t: &[u8], pos: usize) -> Option<usize> {
    let b = t.get(pos..pos + 2)?;
    let h = u16::from_le_bytes([b[0], b[1]]);
    let n = if h < tuple::TEXT_TOASTED {
        2 + h as usize
    } else if h == tuple::TEXT_WIDE {
        let w = t.get(pos + 2..pos + 6)?;
        6 + u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize
    } else {
        2 + (h & !tuple::TEXT_TOASTED) as usize
    };
    (pos + n <= t.len()).then_some(n)
}

/// Fills column `v` (of type `ty`) from the attribute at byte `off` of each
/// of `items`, which store it with no NULL.
fn push_fixed_column(v: &mut Vector, ty: DataType, page: &[u8], items: &[VisibleItem], off: usize) {
    match &mut v.data {
        Data::Int4(d) => d.extend(attrs(page, items, off).map(|b| b.map_or(0, i32::from_le_bytes))),
        Data::Int8(d) => d.extend(attrs(page, items, off).map(|b| b.map_or(0, i64::from_le_bytes))),
        Data::Int2(d) => d.extend(attrs(page, items, off).map(|b| b.map_or(0, i16::from_le_bytes))),
        Data::Float8(d) => d.extend(
            attrs(page, items, off)
                .map(|b| b.map_or(0.0, |b| f64::from_bits(u64::from_le_bytes(b)))),
        ),
        Data::Bool(d) => {
            d.extend(attrs(page, items, off).map(|b: Option<[u8; 1]>| b.is_some_and(|b| b[0] != 0)))
        }
        Data::Numeric(d) => d.extend(attrs(page, items, off).map(|b: Option<[u8; 18]>| {
            b.map_or(Numeric::zero(), |b| {
                Numeric::from_storage_parts(
                    i128::from_le_bytes(b[..16].try_into().expect("16 bytes")),
                    u16::from_le_bytes([b[16], b[17]]),
                )
            })
        })),
        _ => {
            for it in items {
                let t = it.tuple(page);
                match t.get(off..) {
                    Some(b) if b.len() >= ty.fixed_width().unwrap_or(usize::MAX) => {
                        push_attr(v, tuple::fixed_attr(b, ty))
                    }
                    _ => v.push_value(&crate::value::Value::Null),
                }
            }
            return;
        }
    }
    let n = v.len();
    if let Some(m) = &mut v.nulls {
        m.resize(n, false);
    }
}

/// Appends one stored attribute to a column's values (not its null mask).
#[inline(always)]
fn push_attr_data(d: &mut Data, a: Attr<'_>) {
    match (d, a) {
        (Data::Int4(d), Attr::Int4(x)) => d.push(x),
        (Data::Int8(d), Attr::Int8(x)) => d.push(x),
        (Data::Bool(d), Attr::Bool(x)) => d.push(x),
        (Data::Text(d) | Data::Bytea(d), Attr::Text(x)) => d.push(x),
        (Data::Uuid(d), Attr::Uuid(x)) => d.push(x),
        (Data::Int2(d), Attr::Int2(x)) => d.push(x),
        (Data::Float4(d), Attr::Float4(x)) => d.push(x),
        (Data::Float8(d), Attr::Float8(x)) => d.push(x),
        (Data::Interval(d), Attr::Interval(us, days, months)) => {
            d.push(tusk_types::Interval::new(months, days, us))
        }
        (Data::Numeric(d), Attr::Numeric(u, s)) => d.push(Numeric::from_storage_parts(u, s)),
        (data, a) => {
            // Only a NULL reaches here: the catalog's column type chose the
            // vector, and the tuple was formed from the same type.
            debug_assert!(
                matches!(a, Attr::Null),
                "stored attribute {a:?} does not match its column's vector"
            );
            data.push_default()
        }
    }
}

/// Appends one stored attribute to a column vector. The null mask is only
/// materialised once the first NULL arrives.
#[inline(always)]
fn push_attr(v: &mut Vector, a: Attr<'_>) {
    let before = v.len();
    push_attr_data(&mut v.data, a);
    v.push_null_flag(before, matches!(a, Attr::Null));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use tusk_storage::tuple::TupleBuilder;

    /// A page image holding `tuples`, and their items.
    fn page_of(tuples: &[Vec<u8>]) -> (Vec<u8>, Vec<VisibleItem>) {
        let mut page = vec![0u8; tusk_storage::page::PAGE_SIZE];
        let mut items = Vec::new();
        let mut off = 64;
        for (i, t) in tuples.iter().enumerate() {
            page[off..off + t.len()].copy_from_slice(t);
            items.push(VisibleItem::new(i as u16 + 1, off, t.len()).unwrap());
            off += t.len();
        }
        (page, items)
    }

    fn row(b: &mut TupleBuilder, id: i32, name: Option<&str>, n: i64) -> Vec<u8> {
        b.begin();
        b.push_i32(id);
        match name {
            Some(s) => b.push_text(s.as_bytes()),
            None => b.push_null(),
        }
        b.push_numeric(n as i128, 2);
        b.push_i32(id * 10);
        b.finish(1).to_vec()
    }

    /// The offset program and the tuple-by-tuple walk agree, for every
    /// subset of the columns, on dense pages and on pages with NULLs.
    #[test]
    fn paths_agree() {
        let types = [
            DataType::Int4,
            DataType::Text,
            DataType::Numeric,
            DataType::Int4,
        ];
        let mut b = TupleBuilder::new();
        let dense: Vec<Vec<u8>> = (0..5)
            .map(|i| row(&mut b, i, Some(&"x".repeat(i as usize)), 100 + i as i64))
            .collect();
        let mut sparse = dense.clone();
        sparse[2] = row(&mut b, 2, None, 7);
        for cols in [
            vec![0],
            vec![2],
            vec![3],
            vec![1, 3],
            vec![3, 0, 2],
            vec![0, 1, 2, 3],
        ] {
            let d = Deformer::new(&types, &cols, false);
            for (tuples, is_dense) in [(&dense, true), (&sparse, false)] {
                let (page, items) = page_of(tuples);
                let mut fast = d.columns(8);
                d.push_page(&mut fast, &page, &items, is_dense, 0);
                let mut slow = d.columns(8);
                for it in &items {
                    d.push_tuple(&mut slow, it.tuple(&page));
                }
                assert_eq!(fast, slow, "columns {cols:?}, dense {is_dense}");
                assert_eq!(fast[0].len(), 5);
            }
        }
        let d = Deformer::new(&types, &[1, 3], false);
        let (page, items) = page_of(&dense);
        let mut out = d.columns(8);
        d.push_page(&mut out, &page, &items, true, 0);
        assert_eq!(out[0].value(4), Value::Text("xxxx".into()));
        assert_eq!(out[1].value(3), Value::Int4(30));
    }
}
