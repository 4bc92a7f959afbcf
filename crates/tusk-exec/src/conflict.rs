//! INSERT ... ON CONFLICT: PostgreSQL's speculative insertion.
//!
//! Each proposed row is formed (NOT NULL, CHECK and lengths are checked
//! first, as PostgreSQL's `ExecConstraints` runs before the conflict
//! check), then:
//!
//! 1. the *arbiter* indexes are asked, in order, for a live row with an
//!    equal key (`RowWriter::find_conflict`, which waits for writers still
//!    running, as a unique check does);
//! 2. none: the row is inserted with its index entries. Should an arbiter
//!    report a conflict after all (a writer that inserted the key between
//!    the check and the insertion), the new heap tuple is deleted again and
//!    the row starts over at 1;
//! 3. one: `DO NOTHING` skips the proposed row. `DO UPDATE` reads the
//!    conflicting version; if this command wrote it (inserted or updated
//!    it), that is PostgreSQL's 21000 — two proposed rows with one key.
//!    Otherwise the SET list and the WHERE condition are evaluated over
//!    that row followed by the proposed one (`EXCLUDED`); a row the
//!    condition does not take stays as it is, any other is replaced by the
//!    SET list's values, which are written (with their own unique checks:
//!    an update may collide with a third row) as an UPDATE writes them.
//!
//! The command counts inserted and updated rows, and RETURNING sees both.

use crate::dml::{Inserted, RowWriter, Written};
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::Expr;
use crate::operator::Operator;
use crate::scan::Deformer;
use crate::vector::{Batch, Data};
use tusk_storage::heap::{self, Tid};
use tusk_storage::tuple;
use tusk_storage::{Database, TableDef, Xid};

/// What ON CONFLICT does with a proposed row that has a conflict.
#[derive(Debug, Clone)]
pub enum ConflictAction {
    Nothing,
    /// `set`: the new value of every column, in table order (unassigned
    /// columns keep the existing row's value), over a row of the existing
    /// row's columns followed by the proposed row's (`EXCLUDED`), both in
    /// table order; `filter`, over the same row, chooses the rows to update.
    Update {
        set: Vec<Expr>,
        filter: Option<Expr>,
    },
}

/// An ON CONFLICT clause: the arbiter indexes (by OID, in the order to
/// check them) and the action.
#[derive(Debug, Clone)]
pub struct OnConflict {
    pub arbiters: Vec<u32>,
    pub action: ConflictAction,
}

/// Inserts every row of `input` (as [`crate::dml::insert`]) with the
/// conflict handling of `on_conflict`; returns the rows inserted or
/// updated.
pub fn insert_on_conflict(
    db: &Database,
    table: &TableDef,
    checks: &[(String, Expr)],
    xid: Xid,
    input: &mut dyn Operator,
    on_conflict: &OnConflict,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let mut w = RowWriter::new(db, table, checks, xid);
    let arbiters: Vec<usize> = on_conflict
        .arbiters
        .iter()
        .map(|oid| {
            w.indexes
                .iter()
                .position(|i| i.def().oid == *oid)
                .ok_or_else(|| ExecError::new(format!("index with OID {oid} does not exist")))
        })
        .collect::<Result<_>>()?;
    let ncols = table.columns.len();
    let all: Vec<usize> = (0..ncols).collect();
    let deform = Deformer::new(&table.column_types(), &all, false);
    let mut n = 0;
    while let Some(b) = input.next()? {
        w.check(&b)?;
        for row in 0..b.len {
            w.form(&b, row)?;
            loop {
                let Some(existing) = w.find_conflict(&arbiters)? else {
                    match w.insert_formed(&arbiters)? {
                        Inserted::Row(_) => {
                            if let Some(r) = returned.as_deref_mut() {
                                r.push(&b, row);
                            }
                            n += 1;
                            break;
                        }
                        Inserted::Conflict => continue,
                    }
                };
                let ConflictAction::Update { set, filter } = &on_conflict.action else {
                    break;
                };
                let Some(new) =
                    updated_row(db, table, xid, &deform, existing, &b, row, set, filter)?
                else {
                    break;
                };
                w.check(&new)?;
                heap::delete(&db.pool, table.oid, existing, xid)?;
                w.form(&new, 0)?;
                match w.insert_formed(&[])? {
                    Inserted::Row(_) => {}
                    Inserted::Conflict => unreachable!("no arbiters for the new version"),
                }
                if let Some(r) = returned.as_deref_mut() {
                    r.push(&new, 0);
                }
                n += 1;
                break;
            }
        }
    }
    Ok(n)
}

/// The new version DO UPDATE makes of the row at `existing` for proposed
/// row `row` of `b`; `None` when `filter` does not take it.
#[allow(clippy::too_many_arguments)]
fn updated_row(
    db: &Database,
    table: &TableDef,
    xid: Xid,
    deform: &Deformer,
    existing: Tid,
    b: &Batch,
    row: usize,
    set: &[Expr],
    filter: &Option<Expr>,
) -> Result<Option<Batch>> {
    let mut cols = deform.columns(1);
    let xmin = heap::read_tuple(&db.pool, table.oid, existing, |t| {
        deform.push(&mut cols, t, existing);
        tuple::xmin(t)
    })?
    .ok_or_else(|| ExecError::new("the conflicting row vanished"))?;
    if xmin == xid {
        return Err(ExecError::coded(
            sqlstate::CARDINALITY_VIOLATION,
            "ON CONFLICT DO UPDATE command cannot affect row a second time",
        )
        .with_hint(
            "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
        ));
    }
    let mut excluded = deform.columns(1);
    for (dst, src) in excluded.iter_mut().zip(&b.columns) {
        dst.push_from(src, row);
    }
    cols.extend(excluded);
    let pair = Batch::new(cols, 1);
    if let Some(f) = filter {
        let v = f.eval(&pair)?;
        let Data::Bool(ok) = &v.data else {
            return Err(ExecError::new("ON CONFLICT WHERE is not boolean"));
        };
        if v.is_null(0) || !ok[0] {
            return Ok(None);
        }
    }
    let new = set
        .iter()
        .map(|e| e.eval(&pair))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Batch::new(new, 1)))
}
