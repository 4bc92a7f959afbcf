//! COPY FROM's middle stage: converted batches completed, checked and
//! laid out as heap tuples, with their index keys.
//!
//! [`Preparer::prepare`] takes one [`Converted`] batch (see
//! `copy::convert`) and fills a [`Prepared`] batch that the loader (see
//! `copy::load`) only has to store. It needs nothing of the database, so
//! it runs on a thread of its own in the pipeline (see `copy::pipeline`):
//!
//! 1. **Complete.** Columns the input does not hold get their DEFAULT (or
//!    NULL); the batch is cut before the first row that did not convert;
//!    COPY's `WHERE` condition drops the rows it does not pass.
//! 2. **Check.** NOT NULL, then CHECK constraints. The error reported is
//!    the one PostgreSQL meets first working row by row: the earliest row;
//!    in a row, conversion errors before NOT NULL violations (the first
//!    such column in table order) before CHECK violations.
//! 3. **Lay out.** Tuples are built column by column into one buffer: a
//!    first pass sizes every row (header, null bitmap, attributes), a second
//!    writes the headers, then each column writes its values at every
//!    row's cursor — one tight loop per column and type, no per-row
//!    dispatch. The bytes are exactly what [`TupleBuilder`] makes, a long
//!    text value in its wide form: the sink toasts such tuples (see
//!    `copy::load`).
//! 4. **Keys.** Each index's key of every row, encoded from its tuple
//!    (tusk-storage's [`TupleKeys`]).
//!
//! [`TupleBuilder`]: tusk_storage::tuple::TupleBuilder

use super::columns::ColumnFailure;
use super::convert::{ConversionFailure, Converted};
use super::reader::{Field, RawBatch};
use super::{column_context, line_context, row_context, CopyError};
use crate::dml::{check_violation, not_null_violation};
use crate::error::{sqlstate, ExecError};
use crate::expr::Expr;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::btree::{EncodedKey, TupleKeys};
use tusk_storage::tuple::{HAS_NULLS, TEXT_TOASTED, TEXT_WIDE, TUPLE_HEADER_SIZE};
use tusk_storage::{DataType, TableDef, Xid};

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

/// Prepares batches for one table (see the module doc).
pub struct Preparer {
    pub(super) table: TableDef,
    types: Vec<DataType>,
    rules: TableRules,
    xid: Xid,
    cid: u32,
    /// The key encoders of the table's indexes, in creation order.
    keys: Vec<TupleKeys>,
}

/// A batch ready to store: `rows` tuples, and per index their keys.
#[derive(Debug, Default)]
pub struct Prepared {
    pub rows: usize,
    /// Row `r` is `tuples[offsets[r]..offsets[r + 1]]`.
    pub tuples: Vec<u8>,
    pub offsets: Vec<usize>,
    /// Each row's input line (kept only when the table has indexes: a
    /// unique violation names it).
    pub lines: Vec<u64>,
    /// Per index, per row: the key (entries past `rows` are left over
    /// from earlier batches, kept for their buffers).
    pub keys: Vec<Vec<EncodedKey>>,
}

impl Prepared {
    /// Row `r`'s tuple.
    pub fn tuple(&self, r: usize) -> &[u8] {
        &self.tuples[self.offsets[r]..self.offsets[r + 1]]
    }
}

/// The first thing wrong in a batch, in PostgreSQL's row-at-a-time order.
enum Fault {
    Conversion(ConversionFailure),
    /// A constraint (already worded) failed at `row`.
    Constraint(usize, ExecError),
}

impl Preparer {
    /// A preparer for `table` under `rules`, whose rows are inserted by
    /// transaction `xid`, command `cid`, with the indexes whose key
    /// encoders are `keys` (in creation order).
    pub fn new(
        table: TableDef,
        rules: TableRules,
        (xid, cid): (Xid, u32),
        keys: Vec<TupleKeys>,
    ) -> Preparer {
        Preparer {
            types: table.column_types(),
            table,
            rules,
            xid,
            cid,
            keys,
        }
    }

    /// Completes, checks and lays out one converted batch (its vectors are
    /// used up) into `out`; the first fault in row order is the error.
    pub fn prepare(&self, c: &mut Converted, out: &mut Prepared) -> Result<(), CopyError> {
        out.rows = 0;
        out.lines.clear();
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
        layout_tuples(
            &rows.columns,
            &self.types,
            rows.len,
            self.xid,
            self.cid,
            &mut out.tuples,
            &mut out.offsets,
        );
        out.rows = rows.len;
        if self.keys.is_empty() {
            return Ok(());
        }
        out.lines
            .extend((0..rows.len).map(|r| c.batch.line(original(r))));
        out.keys.resize_with(self.keys.len(), Vec::new);
        for (encoder, keys) in self.keys.iter().zip(&mut out.keys) {
            if keys.len() < rows.len {
                keys.resize_with(rows.len, EncodedKey::default);
            }
            for (r, key) in keys.iter_mut().enumerate().take(rows.len) {
                let t = &out.tuples[out.offsets[r]..out.offsets[r + 1]];
                encoder.encode(None, t, key).map_err(|e| {
                    CopyError::new(e.into(), Some(line_context(&self.table.name, out.lines[r])))
                })?;
            }
        }
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
            (Data::Text(s) | Data::Bytea(s), _) => {
                for (r, sz) in size.iter_mut().enumerate() {
                    if !null(r) {
                        *sz += text_size(s.get(r).len());
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
            (_, None) => unreachable!("strings are Text or Bytea vectors"),
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
            Data::Uuid(d) => fixed!(d, |x| x.to_be_bytes()),
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
            Data::Text(s) | Data::Bytea(s) => {
                for r in 0..n {
                    if m.is_some_and(|m| m[r]) {
                        continue;
                    }
                    let v = s.get(r);
                    let mut at = cursor[r];
                    if v.len() < TEXT_TOASTED as usize {
                        out[at..at + 2].copy_from_slice(&(v.len() as u16).to_le_bytes());
                        at += 2;
                    } else {
                        // The wide form: the sink toasts the tuple.
                        out[at..at + 2].copy_from_slice(&TEXT_WIDE.to_le_bytes());
                        out[at + 2..at + 6].copy_from_slice(&(v.len() as u32).to_le_bytes());
                        at += 6;
                    }
                    out[at..at + v.len()].copy_from_slice(v);
                    cursor[r] = at + v.len();
                }
            }
            Data::Array(_) => unreachable!("COPY loads only the types tables store"),
        }
    }
}

/// Bytes a text value of `len` bytes takes in a tuple being built: the
/// short form's 2-byte header, or the wide form's 6 (see tusk-storage's
/// `tuple`).
fn text_size(len: usize) -> usize {
    if len < TEXT_TOASTED as usize {
        2 + len
    } else {
        6 + len
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
        let long = "x".repeat(40_000);
        for s in ["abc", "", &long] {
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
