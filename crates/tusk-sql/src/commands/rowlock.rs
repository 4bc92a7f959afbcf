//! `SELECT ... FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE
//! [OF t, ...] [NOWAIT | SKIP LOCKED]`: rows locked as they are returned.
//!
//! The query is bound as usual, without its locking clause; then every
//! relation the clause names (all in the FROM list when there is no `OF`)
//! gets a TID column that the projections carry to the top. The statement
//! takes `RowShareLock` on those tables, runs the plan without its LIMIT,
//! and locks each result row's rows (`Transaction::lock_row`) before it
//! counts towards OFFSET and LIMIT — PostgreSQL's LockRows node sits below
//! the Limit, so that `FOR UPDATE SKIP LOCKED LIMIT 1` hands each client
//! its own row of a queue. Rows are pulled only until the limit is met.
//!
//! A row locked by a running transaction is waited for, or fails the
//! statement (`NOWAIT`: `could not obtain lock on row in relation "t"`,
//! 55P03), or is skipped (`SKIP LOCKED`). A row that a committed
//! transaction deleted is skipped; one it updated is followed to its newest
//! version, which is locked and re-checked against the query (see
//! `recheck`) and returned as it is now — or, under REPEATABLE READ, both
//! are `could not serialize access due to concurrent update` (40001).
//!
//! Locking clauses in subqueries are not supported (the binder refuses
//! them), nor on subqueries and CTEs named in `OF`.

use super::recheck::RecheckPlan;
use crate::bind::{BindSettings, Binder};
use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, JoinKind, Logical};
use crate::session::{header, render_rows, BoundStatement, QueryResult, Result, Session};
use sqlparser::ast as A;
use tusk_exec::{Batch, Vector};
use tusk_storage::heapam::serialization_failure;
use tusk_storage::{
    IsolationLevel, LatestOutcome, LockMode, RowLockMode, RowWait, SqlType, TableDef, Tid, TmResult,
};

/// How rows of one relation are locked.
struct LockTarget {
    alias: String,
    table: TableDef,
    /// The relation's TID column in the plan.
    tid: ColumnId,
    mode: RowLockMode,
    wait: RowWait,
    /// Position of the TID column in the statement's output.
    at: usize,
}

/// One locking clause: strength, waiting, and the relations it names.
struct Clause {
    mode: RowLockMode,
    wait: RowWait,
    of: Vec<String>,
}

/// `FOR UPDATE`, `FOR NO KEY UPDATE`, ... as messages name them.
fn strength_name(m: RowLockMode) -> &'static str {
    match m {
        RowLockMode::Update => "FOR UPDATE",
        RowLockMode::NoKeyUpdate => "FOR NO KEY UPDATE",
        RowLockMode::Share => "FOR SHARE",
        RowLockMode::KeyShare => "FOR KEY SHARE",
    }
}

fn not_allowed(m: RowLockMode, with: &str) -> SqlError {
    SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("{} is not allowed with {with}", strength_name(m)),
    )
}

/// The locking clauses of `q`, with the strengths the parser found.
fn clauses(q: &A::Query, strengths: &[RowLockMode]) -> Result<Vec<Clause>> {
    // The top query's clauses are the last ones (see `parse::Parsed`).
    if strengths.len() > q.locks.len() {
        return Err(SqlError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "SELECT ... FOR UPDATE/SHARE is not supported yet",
        ));
    }
    q.locks
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mode = match strengths.get(i) {
                Some(&m) if strengths.len() == q.locks.len() => m,
                _ => match l.lock_type {
                    A::LockType::Update => RowLockMode::Update,
                    A::LockType::Share => RowLockMode::Share,
                },
            };
            let wait = match l.nonblock {
                None => RowWait::Block,
                Some(A::NonBlock::Nowait) => RowWait::NoWait,
                Some(A::NonBlock::SkipLocked) => RowWait::Skip,
            };
            let of = match &l.of {
                None => Vec::new(),
                Some(n) => vec![crate::names::object_name(n)?.name],
            };
            Ok(Clause { mode, wait, of })
        })
        .collect()
}

/// Gives the lockable `Get`s under `p` TID columns and carries them up
/// through the projections; returns the TID columns `p` now outputs.
/// `nullable`: `p` is on the nullable side of an outer join.
fn add_tids(
    p: &mut Logical,
    binder: &mut Binder<'_>,
    clauses: &[Clause],
    nullable: bool,
    targets: &mut Vec<LockTarget>,
) -> Result<Vec<ColumnId>> {
    let first = clauses.first().map_or(RowLockMode::Update, |c| c.mode);
    match p {
        Logical::Get {
            table, alias, tid, ..
        } => {
            let clause = clauses
                .iter()
                .filter(|c| c.of.is_empty() || c.of.contains(alias))
                .max_by_key(|c| c.mode);
            let Some(clause) = clause else {
                return Ok(vec![]);
            };
            if nullable {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "{} cannot be applied to the nullable side of an outer join",
                        strength_name(clause.mode)
                    ),
                ));
            }
            let id = binder.cols.add("ctid", SqlType::Int8, Some(alias.clone()));
            *tid = Some(id);
            targets.push(LockTarget {
                alias: alias.clone(),
                table: table.clone(),
                tid: id,
                mode: clause.mode,
                wait: clause.wait,
                at: 0,
            });
            Ok(vec![id])
        }
        Logical::Project { input, exprs } => {
            let tids = add_tids(input, binder, clauses, nullable, targets)?;
            for &t in &tids {
                exprs.push((t, binder.cols.expr(t)));
            }
            Ok(tids)
        }
        Logical::Filter { input, .. }
        | Logical::OneTimeFilter { input, .. }
        | Logical::Sort { input, .. }
        | Logical::Limit { input, .. }
        | Logical::Apply { input, .. } => add_tids(input, binder, clauses, nullable, targets),
        Logical::Join {
            kind, left, right, ..
        } => {
            let (ln, rn) = match kind {
                JoinKind::Inner => (false, false),
                JoinKind::Left => (false, true),
                JoinKind::Right => (true, false),
                JoinKind::Full => (true, true),
                _ => {
                    return Err(SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("{} is not supported with this join", strength_name(first)),
                    ))
                }
            };
            let mut tids = add_tids(left, binder, clauses, nullable || ln, targets)?;
            tids.extend(add_tids(right, binder, clauses, nullable || rn, targets)?);
            Ok(tids)
        }
        Logical::DependentJoin { .. } => Err(SqlError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("{} is not supported with LATERAL", strength_name(first)),
        )),
        Logical::Aggregate { group, .. } if !group.is_empty() => {
            Err(not_allowed(first, "GROUP BY clause"))
        }
        Logical::Aggregate { .. } => Err(not_allowed(first, "aggregate functions")),
        Logical::Distinct { .. } => Err(not_allowed(first, "DISTINCT clause")),
        Logical::SetOp { .. } => Err(not_allowed(first, "UNION/INTERSECT/EXCEPT")),
        Logical::Window { .. } => Err(not_allowed(first, "window functions")),
        Logical::TableFunc { .. }
        | Logical::Values { .. }
        | Logical::CteRef { .. }
        | Logical::RecursiveUnion { .. }
        | Logical::WorkTable { .. } => Ok(vec![]),
    }
}

/// What locking one relation's row of a result row came to.
enum Locked {
    Yes,
    /// The row was updated: this is the re-checked result row.
    Replaced(Batch),
    Skip,
}

impl Session {
    /// `SELECT ... FOR UPDATE` and its kin (see the module doc).
    pub(crate) fn select_for_update(
        &mut self,
        q: &A::Query,
        strengths: &[RowLockMode],
    ) -> Result<QueryResult> {
        let clauses = clauses(q, strengths)?;
        let first = clauses[0].mode;
        self.check_writable(&format!("SELECT {}", strength_name(first)))?;
        let mut plain = q.clone();
        plain.locks.clear();
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        let mut bq = binder.bind_query(&plain)?;
        // LIMIT and OFFSET count locked rows: they are applied here.
        let (limit, offset) = match bq.plan {
            Logical::Limit {
                input,
                limit,
                offset,
            } => {
                bq.plan = *input;
                (limit, offset)
            }
            _ => (None, 0),
        };
        let mut targets = Vec::new();
        let tids = add_tids(&mut bq.plan, &mut binder, &clauses, false, &mut targets)?;
        for c in &clauses {
            if let Some(name) =
                c.of.iter()
                    .find(|n| !targets.iter().any(|t| &t.alias == *n))
            {
                return Err(SqlError::coded(
                    sqlstate::UNDEFINED_TABLE,
                    format!(
                        "relation \"{name}\" in {} clause not found in FROM clause",
                        strength_name(c.mode)
                    ),
                ));
            }
        }
        let visible = bq.out.len();
        let mut types: Vec<_> = bq.out.iter().map(|&c| binder.cols.ty(c)).collect();
        for (i, t) in tids.iter().enumerate() {
            bq.out.push(*t);
            bq.names.push("ctid".into());
            bq.unknown.push(false);
            if let Some(target) = targets.iter_mut().find(|x| x.tid == *t) {
                target.at = visible + i;
            }
        }
        for t in &targets {
            self.lock_relation(t.table.oid, LockMode::RowShare, &t.table.name)?;
        }
        let bound = std::sync::Arc::new(BoundStatement {
            query: bq.clone(),
            cols: binder.cols.clone(),
            ctes: binder.ctes.clone(),
            cte_refs: binder.cte_refs.clone(),
            params: binder.params.borrow().clone(),
        });
        let names = bq.names[..visible].to_vec();
        let pq = self.plan_bound(binder, bq)?;
        let snapshot = self.snapshot()?;
        let recheck = RecheckPlan {
            db: self.db.clone(),
            catalog: self.catalog()?,
            gucs: self.gucs.clone(),
            planner: self.planner_settings(),
            snapshot: snapshot.clone(),
            interrupt: self.interrupt.clone(),
            env: self.env.clone(),
            bound,
        };
        let ctx = self.exec_context(snapshot, false, 0);
        let mut op = tusk_exec::exec::build_statement(&pq.stmt, &ctx)?;
        let mut out: Vec<Vector> = pq.types.iter().map(|&t| Vector::empty(t)).collect();
        let mut produced = 0u64;
        let mut skipped = 0u64;
        'rows: while limit.is_none_or(|l| produced < l) {
            let Some(b) = op.next()? else { break };
            'row: for row in 0..b.len {
                let mut current: Option<Batch> = None;
                for t in &targets {
                    let src = current.as_ref().unwrap_or(&b);
                    let r = if current.is_some() { 0 } else { row };
                    match self.lock_result_row(t, &targets, src, r, &recheck)? {
                        Locked::Yes => {}
                        Locked::Replaced(nb) => current = Some(nb),
                        Locked::Skip => continue 'row,
                    }
                }
                if skipped < offset {
                    skipped += 1;
                    continue;
                }
                let (src, r) = match &current {
                    Some(c) => (c, 0),
                    None => (&b, row),
                };
                for (dst, s) in out.iter_mut().zip(&src.columns) {
                    dst.push_from(s, r);
                }
                produced += 1;
                if limit.is_some_and(|l| produced >= l) {
                    break 'rows;
                }
            }
        }
        let batch = Batch::new(out, produced as usize);
        let cols = batch.columns[..visible].to_vec();
        let shown = Batch::new(cols, batch.len);
        types.truncate(visible);
        Ok(QueryResult::Rows {
            title: None,
            columns: names
                .iter()
                .zip(&types)
                .map(|(n, t)| header(n, *t))
                .collect(),
            rows: render_rows(&shown, &types, self.settings()),
        })
    }

    /// Locks target `t`'s row of result row `row` of `b` (see the module
    /// doc).
    fn lock_result_row(
        &mut self,
        t: &LockTarget,
        all: &[LockTarget],
        b: &Batch,
        row: usize,
        recheck: &RecheckPlan,
    ) -> Result<Locked> {
        let tid = match &b.columns[t.at].data {
            tusk_exec::vector::Data::Int8(d) => Tid::from_u64(d[row] as u64),
            _ => return Err(SqlError::new("row locks need row identifiers")),
        };
        let rel = t.table.oid;
        let txn = self.txn()?;
        let rr = txn.isolation() == IsolationLevel::RepeatableRead;
        let would_block = |t: &LockTarget| -> Result<Locked> {
            match t.wait {
                RowWait::Skip => Ok(Locked::Skip),
                _ => Err(SqlError::coded(
                    sqlstate::LOCK_NOT_AVAILABLE,
                    format!(
                        "could not obtain lock on row in relation \"{}\"",
                        t.table.name
                    ),
                )),
            }
        };
        match txn.lock_row(rel, tid, t.mode, t.wait)? {
            TmResult::Ok => Ok(Locked::Yes),
            TmResult::WouldBlock => would_block(t),
            TmResult::Updated { .. } | TmResult::Deleted if rr => {
                Err(serialization_failure(false).into())
            }
            TmResult::Deleted | TmResult::SelfModified { .. } => Ok(Locked::Skip),
            TmResult::Invisible => Err(SqlError::new("attempted to lock invisible tuple")),
            TmResult::Updated { .. } => match txn.lock_latest(rel, tid, t.mode, t.wait)? {
                LatestOutcome::Locked { tid, tuple } => {
                    let newest =
                        tusk_exec::dml::tuple_batch(txn.database(), &t.table, &tuple, tid)?;
                    let rows = recheck.run(t.tid, &t.table, &newest)?;
                    // The result row for the new version that joins the
                    // same rows of the other relations.
                    let same = |i: usize| {
                        all.iter().filter(|o| o.tid != t.tid).all(|o| {
                            rows.columns[o.at].value_as(i, tusk_storage::DataType::Int8)
                                == b.columns[o.at].value_as(row, tusk_storage::DataType::Int8)
                        })
                    };
                    match (0..rows.len).find(|&i| same(i)) {
                        Some(i) => Ok(Locked::Replaced(rows.gather(&[i as u32]))),
                        None => Ok(Locked::Skip),
                    }
                }
                LatestOutcome::WouldBlock => would_block(t),
                _ => Ok(Locked::Skip),
            },
        }
    }
}
