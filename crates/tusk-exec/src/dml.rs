//! INSERT, UPDATE and DELETE: sinks that write what a plan produces into a
//! heap and its indexes.
//!
//! [`RowWriter`] turns one row of a batch (columns in table order, already
//! of the table's types) into a heap tuple, checks NOT NULL and the string
//! length limits of `varchar(n)` / `char(n)` (padding `char(n)`), inserts
//! it and adds its index entries, in the order PostgreSQL does (the
//! indexes by creation, each unique one checked as its entry goes in: a
//! live row with an equal key is PostgreSQL's 23505, with the new row's key
//! in the DETAIL). INSERT writes every input row; UPDATE marks the old
//! version deleted and writes the new one, changing each target row once
//! even when a join reaches it twice; DELETE marks rows deleted. Each sink
//! can keep the rows it wrote, as stored, for RETURNING. INSERT ... ON
//! CONFLICT is in `conflict`, on the same writer.

use crate::error::{sqlstate, ExecError, Result};
use crate::expr::Expr;
use crate::operator::Operator;
use crate::scan::Deformer;
use crate::vector::{Batch, Data};
use std::collections::HashSet;
use tusk_storage::btree::{describe_key, EncodedKey, Index, InsertOutcome, StatementWriter};
use tusk_storage::heap::{self, HeapInserter, Tid};
use tusk_storage::tuple::TupleBuilder;
use tusk_storage::{Database, IndexDef, SqlType, TableDef, Xid};

/// Writes rows into one table and its indexes.
pub(crate) struct RowWriter<'a> {
    db: &'a Database,
    pub(crate) table: &'a TableDef,
    /// CHECK constraints over the row's columns, in evaluation order.
    checks: &'a [(String, Expr)],
    pub(crate) xid: Xid,
    ins: HeapInserter<'a>,
    /// The table's indexes in creation order.
    pub(crate) indexes: Vec<Index<'a>>,
    writer: StatementWriter<'a>,
    key: EncodedKey,
    tb: TupleBuilder,
    padded: String,
}

/// What inserting a formed row did.
pub(crate) enum Inserted {
    Row(Tid),
    /// An index of `arbiters` has a live row with an equal key (the row
    /// just inserted into the heap is deleted again).
    Conflict,
}

impl<'a> RowWriter<'a> {
    pub(crate) fn new(
        db: &'a Database,
        table: &'a TableDef,
        checks: &'a [(String, Expr)],
        xid: Xid,
    ) -> RowWriter<'a> {
        let mut defs: Vec<tusk_storage::IndexDef> =
            db.catalog().indexes_of(table.oid).cloned().collect();
        defs.sort_by_key(|d| d.oid);
        let indexes = defs.iter().map(|d| Index::open(db, d, table)).collect();
        RowWriter {
            db,
            table,
            checks,
            xid,
            ins: HeapInserter::new(&db.pool, table.oid),
            indexes,
            writer: StatementWriter::new(db, xid),
            key: EncodedKey::default(),
            tb: TupleBuilder::new(),
            padded: String::new(),
        }
    }

    /// Writes row `row` of `b` (its first columns in table order); returns
    /// the new tuple's TID.
    fn write(&mut self, b: &Batch, row: usize) -> Result<Tid> {
        self.form(b, row)?;
        match self.insert_formed(&[])? {
            Inserted::Row(tid) => Ok(tid),
            Inserted::Conflict => unreachable!("no arbiter indexes"),
        }
    }

    /// Forms the tuple of row `row` of `b`, checking NOT NULL and lengths.
    pub(crate) fn form(&mut self, b: &Batch, row: usize) -> Result<()> {
        self.tb.begin();
        for (col, def) in b.columns.iter().zip(&self.table.columns) {
            if col.is_null(row) {
                if def.not_null {
                    return Err(not_null_violation(self.table, &def.name, b, row));
                }
                self.tb.push_null();
                continue;
            }
            let tb = &mut self.tb;
            match &col.data {
                Data::Bool(d) => tb.push_bool(d[row]),
                Data::Int2(d) => tb.push_i16(d[row]),
                Data::Int4(d) => tb.push_i32(d[row]),
                Data::Int8(d) => tb.push_i64(d[row]),
                Data::Float4(d) => tb.push_f32(d[row]),
                Data::Float8(d) => tb.push_f64(d[row]),
                Data::Interval(d) => tb.push_interval(d[row].micros, d[row].days, d[row].months),
                Data::Numeric(d) => {
                    match d[row].to_storage_parts() {
                        Some((unscaled, scale)) => tb.push_numeric(unscaled, scale),
                        None => return Err(ExecError::coded(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "numeric values of more than 38 digits cannot be stored in a table yet",
                        )),
                    }
                }
                Data::Text(d) => {
                    let s = d.get_str(row);
                    match def.ty {
                        SqlType::Varchar(Some(n)) => {
                            tb.push_text(check_length(s, n, "character varying")?.as_bytes())
                        }
                        SqlType::Char(n) if n > 0 => {
                            let s = check_length(s, n, "character")?;
                            self.padded.clear();
                            self.padded.push_str(s);
                            let len = s.chars().count();
                            self.padded
                                .extend(std::iter::repeat_n(' ', (n as usize).saturating_sub(len)));
                            tb.push_text(self.padded.as_bytes());
                        }
                        _ => tb.push_text(s.as_bytes()),
                    }
                }
            }
        }
        Ok(())
    }

    /// The live row whose key equals the formed tuple's in one of the
    /// `arbiters` (index positions), checked in order, after waiting for
    /// writers still running (see `tusk_storage::btree`'s `unique`).
    pub(crate) fn find_conflict(&mut self, arbiters: &[usize]) -> Result<Option<Tid>> {
        let t = self.tb.finish(self.xid);
        for &i in arbiters {
            let index = &self.indexes[i];
            index.key_of_tuple(t, &mut self.key)?;
            if let Some(tid) = index.find_conflict(&self.key, &mut self.writer)? {
                return Ok(Some(tid));
            }
        }
        Ok(None)
    }

    /// Inserts the formed tuple and its index entries. A unique index with
    /// a live row of an equal key is an error, unless it is one of the
    /// `arbiters` (index positions): then the heap tuple is deleted again
    /// and the outcome is [`Inserted::Conflict`] (INSERT ... ON CONFLICT
    /// found no conflict before inserting, but a concurrent writer may have
    /// inserted the key since).
    pub(crate) fn insert_formed(&mut self, arbiters: &[usize]) -> Result<Inserted> {
        let t = self.tb.finish(self.xid);
        let tid = self.ins.insert(t)?;
        for (i, index) in self.indexes.iter().enumerate() {
            index.key_of_tuple(t, &mut self.key)?;
            if let InsertOutcome::Conflict { .. } =
                index.insert(&self.key, tid, &mut self.writer)?
            {
                if arbiters.contains(&i) {
                    heap::delete(&self.db.pool, self.table.oid, tid, self.xid)?;
                    return Ok(Inserted::Conflict);
                }
                return Err(unique_violation(self.table, index.def(), t));
            }
        }
        Ok(Inserted::Row(tid))
    }
}

impl RowWriter<'_> {
    /// Checks every row of `b` against the CHECK constraints.
    pub(crate) fn check(&self, b: &Batch) -> Result<()> {
        match check_violation(self.table, self.checks, b)? {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

/// The first row of `b` (columns in table order) that violates a CHECK
/// constraint, and PostgreSQL's 23514 for it: the earliest row, and in it
/// the first failing constraint in `checks`' order, as PostgreSQL checks
/// a row at a time. A condition that is NULL passes.
pub(crate) fn check_violation(
    table: &TableDef,
    checks: &[(String, Expr)],
    b: &Batch,
) -> Result<Option<(usize, ExecError)>> {
    let mut first: Option<(usize, &str)> = None;
    for (name, e) in checks {
        let v = e.eval(b)?;
        let Data::Bool(ok) = &v.data else {
            return Err(ExecError::new("CHECK constraint is not boolean"));
        };
        let end = first.map_or(b.len, |(r, _)| r);
        if let Some(row) = (0..end).find(|&i| !ok[i] && !v.is_null(i)) {
            first = Some((row, name));
        }
    }
    Ok(first.map(|(row, name)| {
        let e = ExecError::coded(
            sqlstate::CHECK_VIOLATION,
            format!(
                "new row for relation \"{}\" violates check constraint \"{name}\"",
                table.name
            ),
        )
        .with_detail(failing_row(table, b, row));
        (row, e)
    }))
}

/// PostgreSQL's 23502 for a NULL in NOT NULL column `column` at row `row`
/// of `b` (columns in table order).
pub(crate) fn not_null_violation(
    table: &TableDef,
    column: &str,
    b: &Batch,
    row: usize,
) -> ExecError {
    ExecError::coded(
        sqlstate::NOT_NULL_VIOLATION,
        format!(
            "null value in column \"{column}\" of relation \"{}\" violates not-null constraint",
            table.name
        ),
    )
    .with_detail(failing_row(table, b, row))
}

/// Bytes of a value PostgreSQL shows in a failing row (the rest becomes
/// `...`; `ExecBuildSlotValueDescription`).
const FAILING_ROW_VALUE_BYTES: usize = 64;

/// `duplicate key value violates unique constraint "name"` (23505), with
/// the key of `t` (the new row) in the DETAIL.
pub(crate) fn unique_violation(table: &TableDef, def: &IndexDef, t: &[u8]) -> ExecError {
    ExecError::coded(
        sqlstate::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            def.name
        ),
    )
    .with_detail(format!("Key {} already exists.", tuple_key(table, def, t)))
}

/// `(a, b)=(1, x)`: the key of index `def` in heap tuple `t` of `table`,
/// as PostgreSQL's DETAIL lines print it (values as stored, through their
/// output functions; `null` for NULL).
pub fn tuple_key(table: &TableDef, def: &IndexDef, t: &[u8]) -> String {
    let all: Vec<usize> = (0..table.columns.len()).collect();
    let deform = Deformer::new(&table.column_types(), &all, false);
    let mut cols = deform.columns(1);
    deform.push(&mut cols, t, Tid { block: 0, item: 0 });
    let names: Vec<&str> = def
        .columns
        .iter()
        .map(|c| table.columns[c.attno].name.as_str())
        .collect();
    let values: Vec<String> = def
        .columns
        .iter()
        .map(|c| {
            cols[c.attno]
                .value_as(0, table.columns[c.attno].ty.data_type())
                .to_text()
                .unwrap_or_else(|| "null".into())
        })
        .collect();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    describe_key(&names, &values)
}

/// The key of index `def` in the row at `tid` of `table` (see
/// [`tuple_key`]), whatever the row's visibility.
pub fn row_key(db: &Database, table: &TableDef, def: &IndexDef, tid: Tid) -> Result<String> {
    heap::read_tuple(&db.pool, table.oid, tid, |t| tuple_key(table, def, t))?
        .ok_or_else(|| ExecError::new(format!("no row at ({},{})", tid.block, tid.item)))
}

/// PostgreSQL's DETAIL for a rejected row: `Failing row contains (1, null).`
fn failing_row(table: &TableDef, b: &Batch, row: usize) -> String {
    let vals: Vec<String> = table
        .columns
        .iter()
        .zip(&b.columns)
        .map(|(c, v)| match v.value_as(row, c.ty.data_type()).to_text() {
            None => "null".into(),
            Some(s) if s.len() <= FAILING_ROW_VALUE_BYTES => s,
            Some(s) => {
                let mut cut = FAILING_ROW_VALUE_BYTES;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}...", &s[..cut])
            }
        })
        .collect();
    format!("Failing row contains ({}).", vals.join(", "))
}

/// Collects the rows a sink wrote, for RETURNING.
pub struct Written {
    pub rows: Batch,
}

impl Written {
    pub fn new(types: &[tusk_storage::DataType]) -> Written {
        Written {
            rows: Batch::empty(types),
        }
    }

    /// Appends row `row` of `b`'s first `n` columns.
    pub(crate) fn push(&mut self, b: &Batch, row: usize) {
        let n = self.rows.columns.len();
        for (dst, src) in self.rows.columns.iter_mut().zip(&b.columns[..n]) {
            dst.push_from(src, row);
        }
        self.rows.len += 1;
    }
}

/// Inserts every row of `input` (columns already of the table's types, in
/// table order) into `table` as transaction `xid`, and an entry for each
/// row into each of the table's indexes. Returns the row count.
pub fn insert(
    db: &Database,
    table: &TableDef,
    checks: &[(String, Expr)],
    xid: Xid,
    input: &mut dyn Operator,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let mut w = RowWriter::new(db, table, checks, xid);
    let mut n = 0;
    while let Some(b) = input.next()? {
        w.check(&b)?;
        for row in 0..b.len {
            w.write(&b, row)?;
            if let Some(r) = returned.as_deref_mut() {
                r.push(&b, row);
            }
            n += 1;
        }
    }
    Ok(n)
}

/// The TIDs in the last column of `b`.
fn tids(b: &Batch) -> Result<&[i64]> {
    match b.columns.last().map(|c| &c.data) {
        Some(Data::Int8(t)) => Ok(t),
        _ => Err(ExecError::new("row changes need row identifiers")),
    }
}

/// Replaces each row whose TID `input` yields in its last column by the
/// new version in its first columns (table order). Returns the row count.
pub fn update(
    db: &Database,
    table: &TableDef,
    checks: &[(String, Expr)],
    xid: Xid,
    input: &mut dyn Operator,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let mut w = RowWriter::new(db, table, checks, xid);
    let mut done: HashSet<i64> = HashSet::new();
    let mut n = 0;
    while let Some(b) = input.next()? {
        w.check(&b)?;
        let tids = tids(&b)?.to_vec();
        for (row, &t) in tids.iter().enumerate().take(b.len) {
            if !done.insert(t) {
                continue;
            }
            if !heap::delete(&db.pool, table.oid, Tid::from_u64(t as u64), xid)? {
                continue;
            }
            w.write(&b, row)?;
            if let Some(r) = returned.as_deref_mut() {
                r.push(&b, row);
            }
            n += 1;
        }
    }
    Ok(n)
}

/// Deletes the rows whose TIDs `input` produces in its last column (its
/// first columns, the old values, go to `returned`).
pub fn delete(
    db: &Database,
    oid: u32,
    xid: Xid,
    input: &mut dyn Operator,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let mut done: HashSet<i64> = HashSet::new();
    let mut n = 0;
    while let Some(b) = input.next()? {
        let tids = tids(&b)?.to_vec();
        for (row, &t) in tids.iter().enumerate().take(b.len) {
            if !done.insert(t) {
                continue;
            }
            if heap::delete(&db.pool, oid, Tid::from_u64(t as u64), xid)? {
                if let Some(r) = returned.as_deref_mut() {
                    r.push(&b, row);
                }
                n += 1;
            }
        }
    }
    Ok(n)
}

/// PostgreSQL truncates trailing spaces that do not fit; anything else is an error.
fn check_length<'a>(s: &'a str, n: u32, ty: &str) -> Result<&'a str> {
    let len = s.chars().count();
    if len <= n as usize {
        return Ok(s);
    }
    let cut: usize = s
        .char_indices()
        .nth(n as usize)
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if s[cut..].chars().all(|c| c == ' ') {
        Ok(&s[..cut])
    } else {
        Err(ExecError::coded(
            sqlstate::STRING_DATA_RIGHT_TRUNCATION,
            format!("value too long for type {ty}({n})"),
        ))
    }
}
