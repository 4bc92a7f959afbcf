//! INSERT, UPDATE and DELETE: sinks that write what a plan produces into a
//! heap and its indexes, as one command of a [`Transaction`].
//!
//! [`RowWriter`] turns one row of a batch (columns in table order, already
//! of the table's types) into a heap tuple, checks NOT NULL and the string
//! length limits of `varchar(n)` / `char(n)` (padding `char(n)`), and adds
//! its index entries, in the order PostgreSQL does (the indexes by
//! creation, each unique one checked as its entry goes in: a live row with
//! an equal key is PostgreSQL's 23505, with the new row's key in the
//! DETAIL; the check waits for writers of such rows still running). INSERT
//! writes every input row, stamped with the transaction's xid and the
//! current command id; UPDATE writes a new version of each target row
//! through `heapam` (HOT when it may: then the new version needs no index
//! entries), changing each row once even when a join reaches it twice;
//! DELETE stamps the rows' `xmax`. Each sink can keep the rows it wrote, as
//! stored, for RETURNING. INSERT ... ON CONFLICT is in `conflict`, on the
//! same writer.
//!
//! ## Rows changed by others
//!
//! UPDATE and DELETE find their rows with the statement's snapshot, so a
//! row may have been changed by a transaction that committed since, or be
//! changed by one still running. `heapam` waits for a running one and says
//! what became of the row:
//!
//! * under READ COMMITTED a deleted row is skipped; an updated one is
//!   followed to its newest version, which is locked
//!   (`Transaction::lock_latest`) and handed to the statement's
//!   [`Recheck`] — PostgreSQL's EvalPlanQual: it evaluates the statement's
//!   conditions on that version and computes the row again, or says that
//!   the row no longer qualifies. The change is then made to the newest
//!   version;
//! * under REPEATABLE READ either is `could not serialize access due to
//!   concurrent update` (40001).

use crate::deform::Deformer;
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::Expr;
use crate::operator::Operator;
use crate::vector::{Batch, Data};
use std::collections::HashSet;
use tusk_storage::btree::{describe_key, EncodedKey, Index, InsertOutcome};
use tusk_storage::columnar::ColumnarWriter;
use tusk_storage::heap::{self, HeapInserter, Tid};
use tusk_storage::heapam::serialization_failure;
use tusk_storage::toast::{self, Toaster};
use tusk_storage::tuple::TupleBuilder;
use tusk_storage::{
    Database, IndexDef, IsolationLevel, LatestOutcome, RowLockMode, RowWait, SqlType, TableDef,
    TmResult, Transaction, UpdateKind, Xid,
};

/// The table a statement changes, as its transaction sees it.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub table: &'a TableDef,
    /// The table's indexes (the transaction's catalog view: an index
    /// created earlier in the transaction counts).
    pub indexes: &'a [IndexDef],
    /// CHECK constraints over the row's columns, in evaluation order.
    pub checks: &'a [(String, Expr)],
}

/// READ COMMITTED's re-check of a target row that a concurrent
/// transaction updated (see the module doc).
pub trait Recheck {
    /// `row` is the newest version of a target row, locked by this
    /// transaction: every column in table order, then its TID (see
    /// [`tuple_batch`]). Returns the statement's row for it (UPDATE: the
    /// new values and the TID; DELETE: the values and the TID), or `None`
    /// if the row no longer qualifies.
    fn recheck(&mut self, row: Batch) -> Result<Option<Batch>>;
}

/// Writes rows into one table and its indexes.
pub(crate) struct RowWriter<'a> {
    db: &'a Database,
    pub(crate) table: &'a TableDef,
    /// CHECK constraints over the row's columns, in evaluation order.
    checks: &'a [(String, Expr)],
    ins: HeapInserter<'a>,
    /// The table's indexes in creation order.
    pub(crate) indexes: Vec<Index<'a>>,
    key: EncodedKey,
    tb: TupleBuilder,
    /// Toasts formed tuples before they are stored (see tusk-storage's
    /// `toast`).
    toaster: Toaster<'a>,
    padded: String,
}

/// What inserting a formed row did.
pub(crate) enum Inserted {
    Row,
    /// An index of `arbiters` has a live row with an equal key (the row
    /// just inserted into the heap is deleted again).
    Conflict,
}

impl<'a> RowWriter<'a> {
    pub(crate) fn new(db: &'a Database, target: Target<'a>) -> RowWriter<'a> {
        let mut defs: Vec<&IndexDef> = target.indexes.iter().collect();
        defs.sort_by_key(|d| d.oid);
        let indexes = defs
            .into_iter()
            .map(|d| Index::open(db, d, target.table))
            .collect();
        RowWriter {
            db,
            table: target.table,
            checks: target.checks,
            ins: HeapInserter::new(&db.pool, target.table.oid),
            indexes,
            key: EncodedKey::default(),
            tb: TupleBuilder::new(),
            toaster: Toaster::new(db, target.table.oid, target.table.column_types()),
            padded: String::new(),
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
                Data::Uuid(d) => tb.push_uuid(d[row]),
                Data::Bytea(d) => tb.push_text(d.get(row)),
                // The binder refuses array columns (`DataType::is_storable`).
                Data::Array(_) => {
                    return Err(ExecError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "arrays cannot be stored in a table",
                    ))
                }
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

    /// The tuple [`RowWriter::form`] made, as command `cid` of `xid` wrote
    /// it.
    pub(crate) fn formed(&mut self, xid: Xid, cid: u32) -> &[u8] {
        self.tb.finish_cid(xid, cid)
    }

    /// The formed tuple as it is to be stored by `txn`: toasted if it must
    /// be, its out-of-line values written (see tusk-storage's `toast`).
    pub(crate) fn formed_toasted(&mut self, txn: &mut Transaction) -> Result<&[u8]> {
        let (xid, cid) = (txn.xid()?, txn.command_id_for_write());
        Ok(self.toaster.toast(self.tb.finish_cid(0, 0), xid, cid)?)
    }

    /// The live row whose key equals the formed tuple's in one of the
    /// `arbiters` (index positions), checked in order, after waiting for
    /// writers still running (see `tusk_storage::btree`'s `unique`).
    pub(crate) fn find_conflict(
        &mut self,
        txn: &mut Transaction,
        arbiters: &[usize],
    ) -> Result<Option<Tid>> {
        let t = self.tb.finish_cid(0, 0);
        for &i in arbiters {
            let index = &self.indexes[i];
            index.key_of_tuple(t, &mut self.key)?;
            if let Some(tid) = index.find_conflict(&self.key, txn)? {
                return Ok(Some(tid));
            }
        }
        Ok(None)
    }

    /// Inserts the formed tuple, as the current command of `txn`, and its
    /// index entries. A unique index with a live row of an equal key is an
    /// error, unless it is one of the `arbiters` (index positions): then the
    /// heap tuple is deleted again and the outcome is
    /// [`Inserted::Conflict`] (INSERT ... ON CONFLICT found no conflict
    /// before inserting, but a concurrent writer may have inserted the key
    /// since).
    pub(crate) fn insert_formed(
        &mut self,
        txn: &mut Transaction,
        arbiters: &[usize],
    ) -> Result<Inserted> {
        let (xid, cid) = (txn.xid()?, txn.command_id_for_write());
        let t = self.toaster.toast(self.tb.finish_cid(xid, cid), xid, cid)?;
        let tid = self.ins.insert(t)?;
        txn.count_inserts(self.table.oid, 1);
        for (i, index) in self.indexes.iter().enumerate() {
            index.key_of_tuple(t, &mut self.key)?;
            if let InsertOutcome::Conflict { .. } = index.insert(&self.key, tid, txn)? {
                if arbiters.contains(&i) {
                    // Nobody else can see the tuple: a plain delete by its
                    // own transaction takes it back (PostgreSQL's
                    // speculative insertion aborts it the same way).
                    heap::delete(&self.db.pool, self.table.oid, tid, xid)?;
                    // Its out-of-line values die with it.
                    let types = self.table.column_types();
                    toast::delete_external(self.db, t, &types, xid)?;
                    return Ok(Inserted::Conflict);
                }
                return Err(unique_violation(self.db, self.table, index.def(), t));
            }
        }
        Ok(Inserted::Row)
    }

    /// Adds the index entries of the formed tuple, stored at `tid` by an
    /// update that was not HOT (unique indexes are checked).
    pub(crate) fn index_formed(&mut self, txn: &mut Transaction, tid: Tid) -> Result<()> {
        let t = self.tb.finish_cid(0, 0);
        for index in &self.indexes {
            index.key_of_tuple(t, &mut self.key)?;
            if let InsertOutcome::Conflict { .. } = index.insert(&self.key, tid, txn)? {
                return Err(unique_violation(self.db, self.table, index.def(), t));
            }
        }
        Ok(())
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
pub(crate) fn unique_violation(
    db: &Database,
    table: &TableDef,
    def: &IndexDef,
    t: &[u8],
) -> ExecError {
    ExecError::coded(
        sqlstate::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            def.name
        ),
    )
    .with_detail(format!(
        "Key {} already exists.",
        tuple_key(db, table, def, t)
    ))
}

/// `(a, b)=(1, x)`: the key of index `def` in heap tuple `t` of `table`,
/// as PostgreSQL's DETAIL lines print it (values as stored, through their
/// output functions, toasted ones read back through `db`; `null` for NULL).
pub fn tuple_key(db: &Database, table: &TableDef, def: &IndexDef, t: &[u8]) -> String {
    let all: Vec<usize> = (0..table.columns.len()).collect();
    let types = table.column_types();
    // A value that cannot be read back prints as empty: this is a message.
    let t = toast::detoast_tuple(db, t, &types).unwrap_or(std::borrow::Cow::Borrowed(t));
    let deform = Deformer::new(&types, &all, false);
    let mut cols = deform.columns(1);
    deform.push(&mut cols, &t, Tid { block: 0, item: 0 });
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
    heap::read_tuple(&db.pool, table.oid, tid, |t| tuple_key(db, table, def, t))?
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

/// A heap tuple as a one-row batch: every column of `table` in order,
/// then the TID (Int8) — the shape of a target row for [`Recheck`].
/// Toasted values are read back through `db`.
pub fn tuple_batch(db: &Database, table: &TableDef, t: &[u8], tid: Tid) -> Result<Batch> {
    let types = table.column_types();
    let t = toast::detoast_tuple(db, t, &types)?;
    let all: Vec<usize> = (0..types.len()).collect();
    let deform = Deformer::new(&types, &all, true);
    let mut cols = deform.columns(1);
    deform.push(&mut cols, &t, tid);
    Ok(Batch::new(cols, 1))
}

/// Inserts every row of `input` (columns already of the table's types, in
/// table order) into the target table as the current command of `txn`,
/// and an entry for each row into each of its indexes. Returns the row
/// count.
pub fn insert(
    txn: &mut Transaction,
    target: Target<'_>,
    input: &mut dyn Operator,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let db = txn.database().clone();
    let mut w = RowWriter::new(&db, target);
    // A columnar table takes the rows through its writer, which makes
    // row groups of them (or puts a few into its delta).
    let mut columnar = if target.table.is_columnar() {
        let (xid, cid) = (txn.xid()?, txn.command_id_for_write());
        Some(ColumnarWriter::new(&db, target.table, xid, cid))
    } else {
        None
    };
    let mut n = 0;
    while let Some(b) = input.next()? {
        w.check(&b)?;
        for row in 0..b.len {
            w.form(&b, row)?;
            match &mut columnar {
                Some(c) => c.push_tuple(w.formed(0, 0))?,
                None => match w.insert_formed(txn, &[])? {
                    Inserted::Row => {}
                    Inserted::Conflict => unreachable!("no arbiter indexes"),
                },
            }
            if let Some(r) = returned.as_deref_mut() {
                r.push(&b, row);
            }
            n += 1;
        }
    }
    if let Some(c) = columnar {
        c.finish()?;
        txn.count_inserts(target.table.oid, n);
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

/// What became of one target row.
enum RowOutcome {
    /// Changed; the row the statement produced for it (`None`: the input
    /// row as it was, otherwise the re-checked one).
    Changed(Option<Batch>),
    Skipped,
}

/// What to do after a change of a target row did not go through: skip it,
/// fail (REPEATABLE READ), or try again on the newest version (READ
/// COMMITTED; the re-checked row and its TID).
fn after_conflict(
    txn: &mut Transaction,
    rel: u32,
    tid: Tid,
    result: TmResult,
    mode: RowLockMode,
    recheck: &mut dyn Recheck,
    table: &TableDef,
) -> Result<Option<(Tid, Batch)>> {
    let rr = txn.isolation() == IsolationLevel::RepeatableRead;
    match result {
        TmResult::Deleted if rr => Err(serialization_failure(true).into()),
        TmResult::Updated { .. } if rr => Err(serialization_failure(false).into()),
        TmResult::Updated { .. } => match txn.lock_latest(rel, tid, mode, RowWait::Block)? {
            LatestOutcome::Locked { tid, tuple } => Ok(recheck
                .recheck(tuple_batch(txn.database(), table, &tuple, tid)?)?
                .map(|row| (tid, row))),
            _ => Ok(None),
        },
        // Deleted under READ COMMITTED, or changed by this very command.
        TmResult::Deleted | TmResult::SelfModified { .. } | TmResult::Invisible => Ok(None),
        TmResult::Ok | TmResult::WouldBlock => Err(ExecError::new(format!(
            "unexpected row change result {result:?}"
        ))),
    }
}

/// Replaces each row whose TID `input` yields in its last column by the
/// new version in its first columns (table order), as the current command
/// of `txn`; `kind` says whether a key column changes and whether HOT
/// updates are allowed. Returns the row count.
pub fn update(
    txn: &mut Transaction,
    target: Target<'_>,
    kind: UpdateKind,
    input: &mut dyn Operator,
    recheck: &mut dyn Recheck,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let db = txn.database().clone();
    let rel = target.table.oid;
    let mode = if kind.key_update {
        RowLockMode::Update
    } else {
        RowLockMode::NoKeyUpdate
    };
    let mut w = RowWriter::new(&db, target);
    let mut done: HashSet<i64> = HashSet::new();
    let mut n = 0;
    while let Some(b) = input.next()? {
        w.check(&b)?;
        let tids = tids(&b)?.to_vec();
        for (row, &t) in tids.iter().enumerate().take(b.len) {
            if !done.insert(t) {
                continue;
            }
            let mut tid = Tid::from_u64(t as u64);
            let mut again: Option<Batch> = None;
            let outcome = loop {
                let (src, r) = match &again {
                    Some(a) => (a, 0),
                    None => (&b, row),
                };
                w.form(src, r)?;
                // heapam stamps the xid and command id.
                let new_t = w.formed_toasted(txn)?;
                let out = txn.update(rel, tid, new_t, kind, RowWait::Block)?;
                if out.result == TmResult::Ok {
                    delete_out_of_line(txn, target.table, tid)?;
                    let new = out
                        .new_tid
                        .ok_or_else(|| ExecError::new("update without a new version"))?;
                    if !out.hot {
                        w.index_formed(txn, new)?;
                    }
                    break RowOutcome::Changed(again);
                }
                // The version was not written: the values it moved out of
                // line would outlive every row (see tusk-storage's `toast`).
                let (db, xid) = (txn.database().clone(), txn.xid()?);
                toast::delete_external(&db, new_t, &target.table.column_types(), xid)?;
                match after_conflict(txn, rel, tid, out.result, mode, recheck, target.table)? {
                    Some((newest, row)) => {
                        w.check(&row)?;
                        tid = newest;
                        again = Some(row);
                    }
                    None => break RowOutcome::Skipped,
                }
            };
            if let RowOutcome::Changed(again) = outcome {
                if let Some(r) = returned.as_deref_mut() {
                    match &again {
                        Some(a) => r.push(a, 0),
                        None => r.push(&b, row),
                    }
                }
                n += 1;
            }
        }
    }
    Ok(n)
}

/// Deletes the rows whose TIDs `input` produces in its last column (its
/// first columns, the old values, go to `returned`), as the current
/// command of `txn`.
pub fn delete(
    txn: &mut Transaction,
    table: &TableDef,
    input: &mut dyn Operator,
    recheck: &mut dyn Recheck,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let rel = table.oid;
    let mut done: HashSet<i64> = HashSet::new();
    let mut n = 0;
    while let Some(b) = input.next()? {
        let tids = tids(&b)?.to_vec();
        for (row, &t) in tids.iter().enumerate().take(b.len) {
            if !done.insert(t) {
                continue;
            }
            let mut tid = Tid::from_u64(t as u64);
            let mut again: Option<Batch> = None;
            let outcome = loop {
                let result = txn.delete(rel, tid, RowWait::Block)?;
                if result == TmResult::Ok {
                    delete_out_of_line(txn, table, tid)?;
                    break RowOutcome::Changed(again);
                }
                let mode = RowLockMode::Update;
                match after_conflict(txn, rel, tid, result, mode, recheck, table)? {
                    Some((newest, row)) => {
                        tid = newest;
                        again = Some(row);
                    }
                    None => break RowOutcome::Skipped,
                }
            };
            if let RowOutcome::Changed(again) = outcome {
                if let Some(r) = returned.as_deref_mut() {
                    match &again {
                        Some(a) => r.push(a, 0),
                        None => r.push(&b, row),
                    }
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

/// Deletes, with `txn`, the out-of-line values' chunks of the row version
/// at `tid` of `table`, which `txn` has just deleted or updated away (see
/// tusk-storage's `toast`): they die, or come back on rollback, with it.
pub(crate) fn delete_out_of_line(txn: &mut Transaction, table: &TableDef, tid: Tid) -> Result<()> {
    if table.is_columnar() {
        // Columnar rows are not toasted; their TIDs name no heap item.
        return Ok(());
    }
    let db = txn.database().clone();
    let old = heap::read_tuple(&db.pool, table.oid, tid, |t| {
        (tusk_storage::tuple::infomask(t) & tusk_storage::tuple::HAS_EXTERNAL != 0)
            .then(|| t.to_vec())
    })?
    .flatten();
    if let Some(t) = old {
        let xid = txn.xid()?;
        toast::delete_external(&db, &t, &table.column_types(), xid)?;
    }
    Ok(())
}
