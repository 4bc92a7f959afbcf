//! COPY FROM's sink: batches of fields into vectors, heap tuples, pages and
//! index entries.
//!
//! [`Loader::load`] takes one [`RawBatch`]:
//!
//! 1. **Convert.** Each input column's [`ColumnParser`] makes a vector
//!    (columns not in the COPY's column list are NULL). A parser stops at
//!    its first bad row; later columns then only convert the rows before
//!    the earliest failure found so far.
//! 2. **Check.** NOT NULL constraints, column by column. The error reported
//!    is the one PostgreSQL meets first working row by row: the earliest
//!    row; in a row, conversion errors (in input column order) before a NOT
//!    NULL violation (the first such column in table order).
//! 3. **Lay out.** Tuples are built column by column into one buffer: a
//!    first pass sizes every row (header, null bitmap, attributes), a second
//!    writes the headers, then each column writes its values at every
//!    row's cursor — one tight loop per column and type, no per-row
//!    dispatch. The bytes are exactly what [`TupleBuilder`] makes.
//! 4. **Store.** [`BulkInserter`] appends the tuples a page at a time (one
//!    WAL record per page, none for a table the transaction created); the
//!    TIDs it returns feed each index, whose entries are inserted in key
//!    order per batch.
//!
//! [`TupleBuilder`]: tusk_storage::tuple::TupleBuilder

use super::columns::{ColumnFailure, ColumnParser, Failed};
use super::reader::{CopyReader, RawBatch};
use super::{column_context, row_context, CopyError};
use crate::cast::CastEnv;
use crate::error::{sqlstate, ExecError};
use crate::vector::{Data, Vector};
use tusk_storage::btree::Btree;
use tusk_storage::bulk::BulkInserter;
use tusk_storage::heap::Tid;
use tusk_storage::tuple::{HAS_NULLS, TUPLE_HEADER_SIZE};
use tusk_storage::{DataType, Database, TableDef, Xid};

/// Loads batches into one table (see the module doc).
pub struct Loader<'a> {
    table: TableDef,
    /// Per input column: the table column it fills.
    targets: Vec<usize>,
    /// Per table column: its parser.
    parsers: Vec<ColumnParser>,
    types: Vec<DataType>,
    xid: Xid,
    cid: u32,
    bulk: BulkInserter<'a>,
    indexes: Vec<(Btree<'a>, usize)>,
    env: CastEnv<'static>,
    tuples: Vec<u8>,
    offsets: Vec<usize>,
    keys: Vec<(i64, Tid)>,
    /// Rows stored so far.
    pub rows: u64,
}

impl<'a> Loader<'a> {
    /// A loader into `table` for transaction `xid`, command `cid`;
    /// `targets[i]` is the table column input column `i` fills.
    pub fn new(
        db: &'a Database,
        table: TableDef,
        targets: Vec<usize>,
        xid: Xid,
        cid: u32,
    ) -> Loader<'a> {
        let indexes = db
            .catalog()
            .indexes_of(table.oid)
            .map(|i| (Btree::new(&db.pool, i.oid), i.column))
            .collect();
        Loader {
            parsers: table.columns.iter().map(|c| ColumnParser::new(c.ty)).collect(),
            types: table.column_types(),
            bulk: BulkInserter::new(&db.pool, table.oid, xid),
            table,
            targets,
            xid,
            cid,
            indexes,
            env: CastEnv::default(),
            tuples: Vec::new(),
            offsets: Vec::new(),
            keys: Vec::new(),
            rows: 0,
        }
    }

    /// Whether the table's pages are WAL-logged (not when the running
    /// transaction created the table).
    pub fn logged(&self) -> bool {
        self.bulk.logged()
    }

    /// Converts, checks and stores one batch. `reader` gives the rows' text
    /// for context lines.
    pub fn load(&mut self, reader: &CopyReader, batch: &RawBatch) -> Result<(), CopyError> {
        let n = batch.rows();
        if n == 0 {
            return Ok(());
        }
        let ncols = self.table.columns.len();
        let mut vectors: Vec<Option<Vector>> = vec![None; ncols];
        // The earliest conversion failure: (row, input column, failure).
        let mut first: Option<(usize, usize, ColumnFailure)> = None;
        for (i, &c) in self.targets.iter().enumerate() {
            let rows = first.as_ref().map_or(n, |f| f.0);
            let (v, failed) = self.parsers[c].parse(batch, i, rows, &self.env);
            if let Some(Failed { row, failure }) = failed {
                if first.as_ref().is_none_or(|f| row < f.0) {
                    first = Some((row, i, failure));
                }
            }
            vectors[c] = Some(v);
        }
        let checked = first.as_ref().map_or(n, |f| f.0);
        let vectors: Vec<Vector> = vectors
            .into_iter()
            .zip(&self.types)
            .map(|(v, &ty)| v.unwrap_or_else(|| Vector::nulls(ty, n)))
            .collect();
        // NOT NULL, within the rows every column converted.
        let mut violation: Option<(usize, usize)> = None;
        for (c, def) in self.table.columns.iter().enumerate() {
            if !def.not_null {
                continue;
            }
            if let Some(row) = (0..checked).find(|&r| vectors[c].is_null(r)) {
                if violation.is_none_or(|(r, _)| row < r) {
                    violation = Some((row, c));
                }
            }
        }
        if let Some((row, c)) = violation {
            return Err(self.not_null_error(reader, batch, &vectors, row, c));
        }
        if let Some((row, i, failure)) = first {
            let line = batch.line(row);
            let name = &self.table.columns[self.targets[i]].name;
            let table = &self.table.name;
            return Err(match failure {
                ColumnFailure::Value(e) => {
                    let value = match batch.field(row, i) {
                        super::reader::Field::Value(v) => Some(v),
                        _ => None,
                    };
                    CopyError::new(e, Some(column_context(table, line, name, value)))
                }
                ColumnFailure::Missing => CopyError::new(
                    ExecError::coded(
                        sqlstate::BAD_COPY_FILE_FORMAT,
                        format!("missing data for column \"{name}\""),
                    ),
                    Some(row_context(table, line, reader.raw_row(batch, row))),
                ),
            });
        }
        self.store(&vectors, n)
            .map_err(|e| CopyError::new(e, None))?;
        self.rows += n as u64;
        Ok(())
    }

    /// `null value in column ... violates not-null constraint` with
    /// PostgreSQL's DETAIL (the row's values) and the row's context.
    fn not_null_error(
        &self,
        reader: &CopyReader,
        batch: &RawBatch,
        vectors: &[Vector],
        row: usize,
        col: usize,
    ) -> CopyError {
        let values: Vec<String> = vectors
            .iter()
            .zip(&self.types)
            .map(|(v, &ty)| match v.value_as(row, ty).to_text() {
                None => "null".to_string(),
                Some(s) => clip(&s, 64),
            })
            .collect();
        let e = ExecError::coded(
            sqlstate::NOT_NULL_VIOLATION,
            format!(
                "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                self.table.columns[col].name, self.table.name
            ),
        )
        .with_detail(format!("Failing row contains ({}).", values.join(", ")));
        let context = row_context(&self.table.name, batch.line(row), reader.raw_row(batch, row));
        CopyError::new(e, Some(context))
    }

    /// Lays out and stores `n` checked rows.
    fn store(&mut self, vectors: &[Vector], n: usize) -> Result<(), ExecError> {
        layout_tuples(
            vectors,
            &self.types,
            n,
            self.xid,
            self.cid,
            &mut self.tuples,
            &mut self.offsets,
        );
        let mut tids = Vec::with_capacity(if self.indexes.is_empty() { 0 } else { n });
        for r in 0..n {
            let tid = self
                .bulk
                .insert(&self.tuples[self.offsets[r]..self.offsets[r + 1]])?;
            if !self.indexes.is_empty() {
                tids.push(tid);
            }
        }
        for (index, col) in &self.indexes {
            self.keys.clear();
            let v = &vectors[*col];
            for (r, &tid) in tids.iter().enumerate() {
                if v.is_null(r) {
                    continue;
                }
                let key = match &v.data {
                    Data::Int4(d) => d[r] as i64,
                    Data::Int8(d) => d[r],
                    _ => return Err(ExecError::new("btree indexes support integer columns only")),
                };
                self.keys.push((key, tid));
            }
            self.keys.sort_unstable();
            for &(key, tid) in &self.keys {
                index.insert(key, tid, self.xid)?;
            }
        }
        Ok(())
    }

    /// Installs the last page; returns the rows stored.
    pub fn finish(&mut self) -> Result<u64, CopyError> {
        self.bulk.finish()?;
        Ok(self.rows)
    }
}

/// `s` cut to at most `max` bytes (at a character boundary) with `...`.
fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// Lays out rows `0..n` of `vectors` (one per table column, of `types`) as
/// heap tuples of transaction `xmin`, command `cmin`, in `out`; row `r` is
/// `out[offsets[r]..offsets[r + 1]]`. The bytes are [`TupleBuilder`]'s.
///
/// [`TupleBuilder`]: tusk_storage::tuple::TupleBuilder
pub fn layout_tuples(
    vectors: &[Vector],
    types: &[DataType],
    n: usize,
    xmin: Xid,
    cmin: u32,
    out: &mut Vec<u8>,
    offsets: &mut Vec<usize>,
) {
    let natts = vectors.len();
    let bitmap = natts.div_ceil(8);
    // Pass 1: sizes (kept in `offsets` as cursors of where data starts).
    let mut has_nulls = vec![false; n];
    for v in vectors {
        if let Some(m) = &v.nulls {
            for (h, &null) in has_nulls.iter_mut().zip(&m[..n]) {
                *h |= null;
            }
        }
    }
    let mut size: Vec<usize> = has_nulls
        .iter()
        .map(|&h| TUPLE_HEADER_SIZE + if h { bitmap } else { 0 })
        .collect();
    let mut cursor = size.clone();
    for (v, ty) in vectors.iter().zip(types) {
        let null = |r: usize| v.nulls.as_ref().is_some_and(|m| m[r]);
        match (&v.data, ty.fixed_width()) {
            (Data::Text(s), _) => {
                for (r, sz) in size.iter_mut().enumerate() {
                    if !null(r) {
                        *sz += 2 + s.get(r).len().min(u16::MAX as usize);
                    }
                }
            }
            (_, Some(w)) => match &v.nulls {
                None => size.iter_mut().for_each(|sz| *sz += w),
                Some(m) => {
                    for (sz, &is_null) in size.iter_mut().zip(m) {
                        if !is_null {
                            *sz += w;
                        }
                    }
                }
            },
            (_, None) => unreachable!("strings are Text vectors"),
        }
    }
    offsets.clear();
    offsets.reserve(n + 1);
    let mut total = 0;
    offsets.push(0);
    for sz in &size {
        total += sz;
        offsets.push(total);
    }
    out.clear();
    out.resize(total, 0);
    // Pass 2: headers and null bitmaps.
    let word = |h: bool| (natts as u32) | (if h { HAS_NULLS as u32 } else { 0 }) << 16;
    for r in 0..n {
        let at = offsets[r];
        let t = &mut out[at..at + TUPLE_HEADER_SIZE];
        t[0..4].copy_from_slice(&xmin.to_le_bytes());
        t[8..12].copy_from_slice(&word(has_nulls[r]).to_le_bytes());
        t[12..16].copy_from_slice(&cmin.to_le_bytes());
        if has_nulls[r] {
            for (c, v) in vectors.iter().enumerate() {
                if v.is_null(r) {
                    out[at + TUPLE_HEADER_SIZE + c / 8] |= 1 << (c % 8);
                }
            }
        }
        cursor[r] += at;
    }
    // Pass 3: each column's values at every row's cursor.
    for v in vectors {
        let m = v.nulls.as_deref();
        macro_rules! fixed {
            ($d:expr, |$x:ident| $bytes:expr) => {
                for (r, $x) in $d.iter().enumerate().take(n) {
                    if m.is_some_and(|m| m[r]) {
                        continue;
                    }
                    let b = $bytes;
                    let at = cursor[r];
                    out[at..at + b.len()].copy_from_slice(&b);
                    cursor[r] += b.len();
                }
            };
        }
        match &v.data {
            Data::Bool(d) => fixed!(d, |x| [*x as u8]),
            Data::Int2(d) => fixed!(d, |x| x.to_le_bytes()),
            Data::Int4(d) => fixed!(d, |x| x.to_le_bytes()),
            Data::Int8(d) => fixed!(d, |x| x.to_le_bytes()),
            Data::Float4(d) => fixed!(d, |x| x.to_le_bytes()),
            Data::Float8(d) => fixed!(d, |x| x.to_le_bytes()),
            Data::Interval(d) => fixed!(d, |x| {
                let mut b = [0u8; 16];
                b[0..8].copy_from_slice(&x.micros.to_le_bytes());
                b[8..12].copy_from_slice(&x.days.to_le_bytes());
                b[12..16].copy_from_slice(&x.months.to_le_bytes());
                b
            }),
            Data::Numeric(d) => fixed!(d, |x| {
                let (unscaled, scale) = x.to_storage_parts().unwrap_or((0, 0));
                let mut b = [0u8; 18];
                b[0..16].copy_from_slice(&unscaled.to_le_bytes());
                b[16..18].copy_from_slice(&scale.to_le_bytes());
                b
            }),
            Data::Text(s) => {
                for r in 0..n {
                    if m.is_some_and(|m| m[r]) {
                        continue;
                    }
                    let v = s.get(r);
                    let len = v.len().min(u16::MAX as usize);
                    let at = cursor[r];
                    out[at..at + 2].copy_from_slice(&(len as u16).to_le_bytes());
                    out[at + 2..at + 2 + len].copy_from_slice(&v[..len]);
                    cursor[r] += 2 + len;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::Numeric;
    use crate::vector::Strings;
    use tusk_storage::tuple::TupleBuilder;
    use tusk_types::Interval;

    #[test]
    fn layout_matches_the_tuple_builder() {
        let mut text = Strings::new();
        for s in ["abc", "", "héllo"] {
            text.push(s.as_bytes());
        }
        let vectors = vec![
            Vector::new(Data::Int4(vec![1, 2, 3]), None),
            Vector::new(Data::Text(text), Some(vec![false, true, false])),
            Vector::new(
                Data::Numeric(vec![
                    Numeric::from_parts(150, 2),
                    Numeric::zero(),
                    Numeric::nan(),
                ]),
                None,
            ),
            Vector::new(Data::Bool(vec![true, false, true]), Some(vec![false, false, true])),
            Vector::new(Data::Int8(vec![-5, 6, 7]), None),
            Vector::new(
                Data::Interval(vec![Interval::new(1, 2, 3); 3]),
                None,
            ),
        ];
        let types = [
            DataType::Int4,
            DataType::Text,
            DataType::Numeric,
            DataType::Bool,
            DataType::Int8,
            DataType::Interval,
        ];
        let (mut out, mut offsets) = (Vec::new(), Vec::new());
        layout_tuples(&vectors, &types, 3, 42, 7, &mut out, &mut offsets);
        let mut tb = TupleBuilder::new();
        for r in 0..3 {
            tb.begin();
            for v in &vectors {
                if v.is_null(r) {
                    tb.push_null();
                    continue;
                }
                match &v.data {
                    Data::Int4(d) => tb.push_i32(d[r]),
                    Data::Int8(d) => tb.push_i64(d[r]),
                    Data::Bool(d) => tb.push_bool(d[r]),
                    Data::Text(s) => tb.push_text(s.get(r)),
                    Data::Numeric(d) => {
                        let (u, s) = d[r].to_storage_parts().unwrap();
                        tb.push_numeric(u, s)
                    }
                    Data::Interval(d) => tb.push_interval(d[r].micros, d[r].days, d[r].months),
                    _ => unreachable!(),
                }
            }
            assert_eq!(&out[offsets[r]..offsets[r + 1]], tb.finish_cid(42, 7), "row {r}");
        }
    }
}
