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
//!
//! Under concurrency (PostgreSQL's `ExecOnConflictUpdate`): the conflicting
//! version is locked `FOR UPDATE` before its new version is computed; if a
//! transaction that committed meanwhile updated or deleted it, the row
//! starts over at 1 under READ COMMITTED, and is a serialization failure
//! (40001) under REPEATABLE READ, as is a conflicting version the
//! transaction's snapshot does not see.

use crate::deform::Deformer;
use crate::dml::{delete_out_of_line, Inserted, RowWriter, Target, Written};
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::Expr;
use crate::operator::Operator;
use crate::vector::{Batch, Data};
use tusk_storage::btree::EncodedKey;
use tusk_storage::heap::{self, Tid};
use tusk_storage::heapam::serialization_failure;
use tusk_storage::toast;
use tusk_storage::{
    IsolationLevel, RowLockMode, RowWait, TableDef, TmResult, Transaction, UpdateKind,
};

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
/// conflict handling of `on_conflict`, as the current command of `txn`;
/// returns the rows inserted or updated.
pub fn insert_on_conflict(
    txn: &mut Transaction,
    target: Target<'_>,
    input: &mut dyn Operator,
    on_conflict: &OnConflict,
    mut returned: Option<&mut Written>,
) -> Result<u64> {
    let db = txn.database().clone();
    let table = target.table;
    let mut w = RowWriter::new(&db, target);
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
            loop {
                w.form(&b, row)?;
                let Some(existing) = w.find_conflict(txn, &arbiters)? else {
                    match w.insert_formed(txn, &arbiters)? {
                        Inserted::Row => {
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
                if !lock_existing(txn, table, existing)? {
                    // Changed by a transaction that committed: start over.
                    continue;
                }
                let Some((old, new)) =
                    updated_row(&db, table, &deform, existing, &b, row, set, filter)?
                else {
                    break;
                };
                w.check(&new)?;
                w.form(&new, 0)?;
                let kind = update_kind(&mut w, &old)?;
                let new_t = w.formed_toasted(txn)?;
                let out = txn.update(table.oid, existing, new_t, kind, RowWait::Block)?;
                if out.result != TmResult::Ok {
                    return Err(ExecError::new(format!(
                        "a row locked for ON CONFLICT DO UPDATE could not be updated: {:?}",
                        out.result
                    )));
                }
                delete_out_of_line(txn, table, existing)?;
                if !out.hot {
                    let new_tid = out
                        .new_tid
                        .ok_or_else(|| ExecError::new("update without a new version"))?;
                    w.index_formed(txn, new_tid)?;
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

/// `ON CONFLICT DO UPDATE command cannot affect row a second time` (21000).
fn affected_twice() -> ExecError {
    ExecError::coded(
        sqlstate::CARDINALITY_VIOLATION,
        "ON CONFLICT DO UPDATE command cannot affect row a second time",
    )
    .with_hint(
        "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
    )
}

/// Locks the conflicting version at `existing` `FOR UPDATE`, waiting for a
/// running writer. False: a transaction that committed meanwhile changed
/// it, and the row must start over (READ COMMITTED).
fn lock_existing(txn: &mut Transaction, table: &TableDef, existing: Tid) -> Result<bool> {
    let rr = txn.isolation() == IsolationLevel::RepeatableRead;
    match txn.lock_row(table.oid, existing, RowLockMode::Update, RowWait::Block)? {
        TmResult::Ok => {}
        TmResult::Updated { .. } | TmResult::Deleted if rr => {
            return Err(serialization_failure(false).into())
        }
        TmResult::Updated { .. } | TmResult::Deleted => return Ok(false),
        // Written by this very command: a second proposed row with the key.
        TmResult::SelfModified { .. } | TmResult::Invisible => return Err(affected_twice()),
        TmResult::WouldBlock => return Ok(false),
    }
    // REPEATABLE READ: the version must be one the snapshot sees
    // (PostgreSQL's ExecCheckTupleVisible).
    if rr {
        let snapshot = txn.snapshot();
        let db = txn.database().clone();
        let mut vis = heap::Visibility::new(&db.txn, snapshot);
        let seen = heap::read_tuple(&db.pool, table.oid, existing, |t| vis.sees(t))?;
        if seen != Some(true) {
            return Err(serialization_failure(false).into());
        }
    }
    Ok(true)
}

/// HOT and key updates for an ON CONFLICT update of `old` (the existing
/// row) to the formed tuple: HOT if no index key changes, a key update if
/// a unique index's key does.
fn update_kind(w: &mut RowWriter<'_>, old: &[u8]) -> Result<UpdateKind> {
    let new = w.formed(0, 0).to_vec();
    let mut kind = UpdateKind {
        key_update: false,
        hot_allowed: true,
    };
    let (mut a, mut b) = (EncodedKey::default(), EncodedKey::default());
    for index in &w.indexes {
        index.key_of_tuple(old, &mut a)?;
        index.key_of_tuple(&new, &mut b)?;
        if a.bytes != b.bytes {
            kind.hot_allowed = false;
            kind.key_update |= index.def().unique();
        }
    }
    Ok(kind)
}

/// The existing row at `existing` (its tuple) and the new version DO
/// UPDATE makes of it for proposed row `row` of `b`; `None` when `filter`
/// does not take it.
#[allow(clippy::too_many_arguments)]
fn updated_row(
    db: &tusk_storage::Database,
    table: &TableDef,
    deform: &Deformer,
    existing: Tid,
    b: &Batch,
    row: usize,
    set: &[Expr],
    filter: &Option<Expr>,
) -> Result<Option<(Vec<u8>, Batch)>> {
    let mut cols = deform.columns(1);
    let old = heap::read_tuple(&db.pool, table.oid, existing, |t| t.to_vec())?
        .ok_or_else(|| ExecError::new("the conflicting row vanished"))?;
    let plain = toast::detoast_tuple(db, &old, &table.column_types())?;
    deform.push(&mut cols, &plain, existing);
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
    Ok(Some((old, Batch::new(new, 1))))
}
