//! READ COMMITTED's re-check of a row that a concurrent transaction
//! updated (PostgreSQL's EvalPlanQual).
//!
//! UPDATE, DELETE and SELECT ... FOR UPDATE find their rows with the
//! statement's snapshot. When a row they are about to change or lock turns
//! out to have been updated by a transaction that committed meanwhile, the
//! storage layer locks the row's newest version (see `tusk_exec::dml`) and
//! the statement must decide whether that version still qualifies, and
//! what it makes of it. PostgreSQL runs the statement's plan again with the
//! target relation's scan replaced by that one row. So does tusk: the bound
//! statement is kept, before rewriting ([`RecheckPlan`]); a re-check
//! replaces the `Get` of the target (found by its TID column) with a
//! one-row `Values` of the newest version's columns and TID, plans that and
//! runs it with the statement's snapshot. The other relations are read as
//! the statement read them; what comes out is the statement's row for the
//! new version (UPDATE: the new values), or nothing if it no longer
//! qualifies. Re-checks are rare (only rows changed under a running
//! statement need one), so planning each is cheap enough.

use crate::error::SqlError;
use crate::guc::Gucs;
use crate::logical::{ColumnId, Logical};
use crate::physical::PlannerSettings;
use crate::session::{exec_context, plan_logical, BoundStatement, Result};
use std::sync::Arc;
use tusk_exec::{Batch, Expr};
use tusk_storage::{Catalog, Database, Snapshot, TableDef};

/// A statement kept for re-checks, with what running it needs.
pub(crate) struct RecheckPlan {
    pub db: Arc<Database>,
    pub catalog: Arc<Catalog>,
    pub gucs: Gucs,
    pub planner: PlannerSettings,
    pub snapshot: Snapshot,
    pub interrupt: tusk_exec::Interrupt,
    pub env: Arc<tusk_exec::env::SessionEnv>,
    pub bound: Arc<BoundStatement>,
}

impl RecheckPlan {
    /// Runs the statement with the `Get` whose TID column is `tid` replaced
    /// by the one row `row` (the relation's columns, then the TID; see
    /// `tusk_exec::dml::tuple_batch`). Returns the statement's rows.
    pub(crate) fn run(&self, tid: ColumnId, table: &TableDef, row: &Batch) -> Result<Batch> {
        let mut bound = (*self.bound).clone();
        if !replace_get(&mut bound.query.plan, tid, table, row) {
            return Err(SqlError::new(
                "re-check: the target relation is not in the plan",
            ));
        }
        let pq = plan_logical(&self.db, self.catalog.clone(), self.planner.clone(), bound)?;
        let ctx = exec_context(
            &self.db,
            &self.gucs,
            &self.interrupt,
            &self.env,
            self.snapshot.clone(),
            false,
            0,
        );
        let mut op = tusk_exec::exec::build_statement(&pq.stmt, &ctx)?;
        Ok(tusk_exec::exec::collect(op.as_mut(), &pq.stmt.root.output)?)
    }
}

/// Replaces the `Get` with TID column `tid` by a `Values` of `row`.
fn replace_get(plan: &mut Logical, tid: ColumnId, table: &TableDef, row: &Batch) -> bool {
    if let Logical::Get { tid: Some(t), .. } = plan {
        if *t == tid {
            let cols = plan.output();
            let mut types = table.column_types();
            types.push(tusk_storage::DataType::Int8);
            let values = row
                .columns
                .iter()
                .zip(&types)
                .map(|(c, &ty)| Expr::Const {
                    value: c.value_as(0, ty),
                    ty,
                })
                .collect();
            *plan = Logical::Values {
                rows: vec![values],
                cols,
            };
            return true;
        }
    }
    plan.children_mut()
        .into_iter()
        .any(|c| replace_get(c, tid, table, row))
}

/// The re-check of an UPDATE or DELETE (see `tusk_exec::dml::Recheck`):
/// the first row the statement makes of the new version.
pub(crate) struct DmlRecheck {
    pub plan: RecheckPlan,
    /// The target's TID column.
    pub tid: ColumnId,
    pub table: TableDef,
}

impl tusk_exec::dml::Recheck for DmlRecheck {
    fn recheck(&mut self, row: Batch) -> tusk_exec::Result<Option<Batch>> {
        let out = self
            .plan
            .run(self.tid, &self.table, &row)
            .map_err(exec_error)?;
        Ok(first_row(out))
    }
}

/// The first row of `b`, if any.
pub(crate) fn first_row(b: Batch) -> Option<Batch> {
    match b.len {
        0 => None,
        1 => Some(b),
        _ => Some(b.gather(&[0])),
    }
}

/// A session error as the executor carries it.
pub(crate) fn exec_error(e: SqlError) -> tusk_exec::ExecError {
    tusk_exec::ExecError {
        code: e.code,
        message: e.message,
        detail: e.detail,
        hint: e.hint,
    }
}

/// The TID column of the `Get` of a DML statement's target.
pub(crate) fn target_tid(plan: &Logical) -> Option<ColumnId> {
    if let Logical::Get { tid: Some(t), .. } = plan {
        return Some(*t);
    }
    plan.children().into_iter().find_map(target_tid)
}
