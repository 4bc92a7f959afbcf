//! COPY FROM's sink: converted batches into heap tuples, pages and index
//! entries.
//!
//! [`Loader::load`] takes one [`Converted`] batch (see `copy::convert`):
//!
//! 1. **Complete.** Columns the input does not hold get their DEFAULT (or
//!    NULL); the batch is cut before the first row that did not convert.
//! 2. **Check.** NOT NULL, then CHECK constraints. The error reported is
//!    the one PostgreSQL meets first working row by row: the earliest row;
//!    in a row, conversion errors before NOT NULL violations (the first
//!    such column in table order) before CHECK violations.
//! 3. **Lay out.** Tuples are built column by column into one buffer: a
//!    first pass sizes every row (header, null bitmap, attributes), a second
//!    writes the headers, then each column writes its values at every
//!    row's cursor — one tight loop per column and type, no per-row
//!    dispatch. The bytes are exactly what [`TupleBuilder`] makes.
//! 4. **Store.** [`BulkInserter`] appends the tuples a page at a time (one
//!    WAL record per page, none for a table the transaction created); a
//!    columnar table's [`ColumnarWriter`] takes them instead and makes row
//!    groups of them (see `tusk_storage::columnar`). A
//!    row's index entries wait until its page is in place (it is filled in
//!    private memory until then), so that unique checks find the rows of
//!    this load as they find any other: rows are indexed a page at a time,
//!    and a unique violation is reported with the row's line (as
//!    PostgreSQL's COPY indexes its buffered rows when it flushes them).
//!
//! [`TupleBuilder`]: tusk_storage::tuple::TupleBuilder

use super::columns::ColumnFailure;
use super::convert::{ConversionFailure, Converted};
use super::reader::{Field, RawBatch};
use super::{column_context, line_context, row_context, CopyError};
use crate::dml::{check_violation, not_null_violation, unique_violation};
use crate::error::{sqlstate, ExecError};
use crate::expr::Expr;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::btree::{EncodedKey, Index, IndexWriter, InsertOutcome};
use tusk_storage::bulk::BulkInserter;
use tusk_storage::columnar::ColumnarWriter;
use tusk_storage::heap::Tid;
use tusk_storage::tuple::{HAS_NULLS, TUPLE_HEADER_SIZE};
use tusk_storage::{DataType, Database, IndexDef, TableDef, Xid};

/// What a load applies besides the column types: the defaults of the
/// columns the input lacks and the table's CHECK constraints.
#[derive(Debug, Clone, Default)]
pub struct TableRules {
    /// Per table column: its DEFAULT (`None`: NULL).
    pub defaults: Vec<Option<Expr>>,
    /// CHECK constraints over the table's columns, in evaluation order.
    pub checks: Vec<(String, Expr)>,
    /// COPY FROM's `WHERE` condition over the table's columns: rows for
    /// which it is not true are skipped (after defaults, before checks).
    pub filter: Option<Expr>,
}

/// Loads batches into one table (see the module doc).
pub struct Loader<'a> {
    table: TableDef,
    types: Vec<DataType>,
    rules: TableRules,
    xid: Xid,
    cid: u32,
    store: Store<'a>,
    logged: bool,
    /// The table's indexes in creation order.
    indexes: Vec<Index<'a>>,
    /// Whom the index insertions work for (unique checks wait as it).
    writer: &'a mut dyn IndexWriter,
    key: EncodedKey,
    tuples: Vec<u8>,
    offsets: Vec<usize>,
    /// Rows whose page is not in place yet, waiting for their index
    /// entries: TID, line, and their tuple in `pending_tuples`.
    pending: Vec<(Tid, u64, u32, u32)>,
    pending_tuples: Vec<u8>,
    /// Rows stored so far.
    pub rows: u64,
}

/// Where the tuples go.
enum Store<'a> {
    Heap(BulkInserter<'a>),
    /// A columnar table (`None` once finished).
    Columnar(Option<ColumnarWriter<'a>>),
}

/// The first thing wrong in a batch, in PostgreSQL's row-at-a-time order.
enum Fault {
    Conversion(ConversionFailure),
    /// A constraint (already worded) failed at `row`.
    Constraint(usize, ExecError),
}

impl<'a> Loader<'a> {
    /// A loader into `table`, whose indexes are `indexes` (as the writing
    /// transaction sees them), for transaction `xid`, command `cid`; index
    /// insertions work for `writer` (the transaction).
    pub fn new(
        db: &'a Database,
        table: TableDef,
        indexes: &[IndexDef],
        rules: TableRules,
        (xid, cid): (Xid, u32),
        writer: &'a mut dyn IndexWriter,
    ) -> Loader<'a> {
        let mut defs: Vec<&IndexDef> = indexes.iter().collect();
        defs.sort_by_key(|d| d.oid);
        let indexes = defs.iter().map(|d| Index::open(db, d, &table)).collect();
        Loader {
            types: table.column_types(),
            logged: db.pool.wal_for(table.oid).is_some(),
            store: if table.is_columnar() {
                Store::Columnar(Some(ColumnarWriter::new(db, &table, xid, cid)))
            } else {
                Store::Heap(BulkInserter::new(&db.pool, table.oid, xid))
            },
            table,
            rules,
            xid,
            cid,
            indexes,
            writer,
            key: EncodedKey::default(),
            tuples: Vec::new(),
            offsets: Vec::new(),
            pending: Vec::new(),
            pending_tuples: Vec::new(),
            rows: 0,
        }
    }

    /// Whether the table's pages are WAL-logged (not when the running
    /// transaction created the table).
    pub fn logged(&self) -> bool {
        self.logged
    }

    /// Checks and stores one converted batch (its vectors are used up).
    pub fn load(&mut self, c: &mut Converted) -> Result<(), CopyError> {
        let n = c.batch.rows();
        if n == 0 {
            return Ok(());
        }
        // The rows every input column converted.
        let good = c.failure.as_ref().map_or(n, |f| f.row);
        let mut rows = self.complete(std::mem::take(&mut c.vectors), good)?;
        // The batch rows that `rows` holds (all, unless WHERE skips some).
        let mut kept: Option<Vec<u32>> = None;
        if let Some(filter) = &self.rules.filter {
            let v = filter.eval(&rows)?;
            let Data::Bool(pass) = &v.data else {
                return Err(ExecError::new("COPY's WHERE condition is not boolean").into());
            };
            let keep: Vec<u32> = (0..rows.len)
                .filter(|&r| pass[r] && !v.is_null(r))
                .map(|r| r as u32)
                .collect();
            if keep.len() < rows.len {
                rows = rows.gather(&keep);
                kept = Some(keep);
            }
        }
        let original = |r: usize| kept.as_ref().map_or(r, |k| k[r] as usize);
        let fault = match self.constraint_fault(&rows)? {
            Some((row, e)) => Some(Fault::Constraint(original(row), e)),
            None => c.failure.take().map(Fault::Conversion),
        };
        if let Some(fault) = fault {
            return Err(self.fault_error(&c.batch, fault));
        }
        let lines: Vec<u64> = if self.indexes.is_empty() {
            Vec::new()
        } else {
            (0..rows.len).map(|r| c.batch.line(original(r))).collect()
        };
        self.store(&rows.columns, rows.len, &lines)?;
        self.rows += rows.len as u64;
        Ok(())
    }

    /// The batch's first `good` rows with every table column: converted
    /// input columns, defaults (or NULLs) for the rest.
    fn complete(&self, vectors: Vec<Option<Vector>>, good: usize) -> Result<Batch, CopyError> {
        let none = Batch::new(Vec::new(), good);
        let mut columns = Vec::with_capacity(vectors.len());
        for (c, v) in vectors.into_iter().enumerate() {
            let v = match v {
                Some(v) if v.len() == good => v,
                Some(v) => v.gather(&(0..good as u32).collect::<Vec<_>>()),
                None => match self.rules.defaults.get(c).and_then(Option::as_ref) {
                    Some(e) => e.eval(&none)?,
                    None => Vector::nulls(self.types[c], good),
                },
            };
            columns.push(v);
        }
        Ok(Batch::new(columns, good))
    }

    /// The earliest row of `b` that breaks NOT NULL or a CHECK constraint
    /// (NOT NULL first within a row, as PostgreSQL's `ExecConstraints`).
    fn constraint_fault(&self, b: &Batch) -> Result<Option<(usize, ExecError)>, CopyError> {
        let mut null: Option<(usize, usize)> = None;
        for (c, def) in self.table.columns.iter().enumerate() {
            if !def.not_null || b.columns[c].nulls.is_none() {
                continue;
            }
            let end = null.map_or(b.len, |(r, _)| r);
            if let Some(row) = (0..end).find(|&r| b.columns[c].is_null(r)) {
                null = Some((row, c));
            }
        }
        let end = null.map_or(b.len, |(r, _)| r + 1);
        let check = if self.rules.checks.is_empty() {
            None
        } else {
            let head = if end < b.len {
                b.gather(&(0..end as u32).collect::<Vec<_>>())
            } else {
                b.clone()
            };
            check_violation(&self.table, &self.rules.checks, &head)?
        };
        Ok(match (null, check) {
            (Some((nr, _)), Some((cr, e))) if cr < nr => Some((cr, e)),
            (Some((row, c)), _) => Some((
                row,
                not_null_violation(&self.table, &self.table.columns[c].name, b, row),
            )),
            (None, check) => check,
        })
    }

    /// The error for `fault`, with its context line.
    fn fault_error(&self, batch: &RawBatch, fault: Fault) -> CopyError {
        let table = &self.table.name;
        match fault {
            Fault::Constraint(row, e) => CopyError::new(
                e,
                Some(row_context(table, batch.line(row), batch.raw_row(row))),
            ),
            Fault::Conversion(ConversionFailure {
                row,
                input_column: i,
                table_column,
                failure,
            }) => {
                let line = batch.line(row);
                let name = &self.table.columns[table_column].name;
                match failure {
                    ColumnFailure::Value(e) => {
                        let value = match batch.field(row, i) {
                            Field::Value(v) => Some(v),
                            _ => None,
                        };
                        CopyError::new(e, Some(column_context(table, line, name, value)))
                    }
                    ColumnFailure::Missing => CopyError::new(
                        ExecError::coded(
                            sqlstate::BAD_COPY_FILE_FORMAT,
                            format!("missing data for column \"{name}\""),
                        ),
                        Some(row_context(table, line, batch.raw_row(row))),
                    ),
                }
            }
        }
    }

    /// Lays out and stores `n` checked rows that ended on `lines`.
    fn store(&mut self, vectors: &[Vector], n: usize, lines: &[u64]) -> Result<(), CopyError> {
        layout_tuples(
            vectors,
            &self.types,
            n,
            self.xid,
            self.cid,
            &mut self.tuples,
            &mut self.offsets,
        );
        if let Store::Columnar(w) = &mut self.store {
            let w = w.as_mut().expect("a loader is not used after finish");
            for r in 0..n {
                w.push_tuple(&self.tuples[self.offsets[r]..self.offsets[r + 1]])?;
            }
            return Ok(());
        }
        for r in 0..n {
            let t = &self.tuples[self.offsets[r]..self.offsets[r + 1]];
            let Store::Heap(bulk) = &mut self.store else {
                unreachable!("a heap table's loader")
            };
            let pages = bulk.pages;
            let tid = bulk.insert(t)?;
            if self.indexes.is_empty() {
                continue;
            }
            if bulk.pages != pages {
                // The page of the rows waiting for their index entries
                // is in place: their keys can be checked against it.
                self.index_pending()?;
            }
            let start = self.pending_tuples.len() as u32;
            self.pending_tuples
                .extend_from_slice(&self.tuples[self.offsets[r]..self.offsets[r + 1]]);
            let line = lines.get(r).copied().unwrap_or_default();
            self.pending
                .push((tid, line, start, self.pending_tuples.len() as u32));
        }
        Ok(())
    }

    /// Inserts the index entries of the rows waiting for them (each index
    /// in creation order, rows in input order, as PostgreSQL inserts them).
    /// A unique violation names the row's line.
    fn index_pending(&mut self) -> Result<(), CopyError> {
        let pending = std::mem::take(&mut self.pending);
        for index in &self.indexes {
            for &(tid, line, start, end) in &pending {
                let t = &self.pending_tuples[start as usize..end as usize];
                let context = || Some(line_context(&self.table.name, line));
                let fail = |e: tusk_storage::StorageError| CopyError::new(e.into(), context());
                index.key_of_tuple(t, &mut self.key).map_err(fail)?;
                let outcome = index.insert(&self.key, tid, self.writer).map_err(fail)?;
                if let InsertOutcome::Conflict { .. } = outcome {
                    let e = unique_violation(&self.table, index.def(), t);
                    return Err(CopyError::new(e, context()));
                }
            }
        }
        self.pending_tuples.clear();
        Ok(())
    }

    /// Installs the last page and adds the index entries still waiting;
    /// returns the rows stored.
    pub fn finish(&mut self) -> Result<u64, CopyError> {
        match &mut self.store {
            Store::Heap(bulk) => bulk.finish()?,
            Store::Columnar(w) => {
                if let Some(w) = w.take() {
                    w.finish()?;
                }
            }
        }
        self.index_pending()?;
        Ok(self.rows)
    }
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
            Data::Array(_) => unreachable!("COPY loads only the types tables store"),
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
            Vector::new(
                Data::Bool(vec![true, false, true]),
                Some(vec![false, false, true]),
            ),
            Vector::new(Data::Int8(vec![-5, 6, 7]), None),
            Vector::new(Data::Interval(vec![Interval::new(1, 2, 3); 3]), None),
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
            assert_eq!(
                &out[offsets[r]..offsets[r + 1]],
                tb.finish_cid(42, 7),
                "row {r}"
            );
        }
    }
}
