//! `ANALYZE [VERBOSE] [table [(column, ...)], ...]`, the analyze half of
//! `VACUUM ANALYZE`, and autovacuum's ANALYZE: each table is sampled and
//! its per-column statistics stored for the planner (see
//! `tusk_exec::analyze` for the sample and the statistics,
//! `tusk_storage::statistics` for where they are kept).
//!
//! A table is analyzed under `ShareUpdateExclusiveLock`, through the
//! snapshot of the statement. ANALYZE of named columns keeps the other
//! columns' earlier statistics. Views are skipped when no table is named,
//! and refused (as PostgreSQL's `WARNING ... skipping`) when named.

use crate::error::{sqlstate, SqlError};
use crate::session::{Notice, QueryResult, Result, Session};
use std::sync::Arc;
use tusk_exec::analyze::{
    column_statistics, sample_rows_for, sample_table, DEFAULT_STATISTICS_TARGET,
};
use tusk_storage::statistics::RelStatistics;
use tusk_storage::{Database, LockMode, Snapshot, StorageError, TableDef};

/// Samples `table` as `snapshot` sees it and computes the statistics of
/// attributes `columns` (all when `None`); columns not analyzed keep their
/// statistics from `previous`.
pub(crate) fn analyze_table(
    db: &Arc<Database>,
    snapshot: &Snapshot,
    table: &TableDef,
    columns: Option<&[usize]>,
    target: usize,
) -> std::result::Result<RelStatistics, tusk_exec::ExecError> {
    let all: Vec<usize> = (0..table.columns.len()).collect();
    let attrs = columns.unwrap_or(&all);
    let types = table.column_types();
    let sample_fn = if table.is_columnar() {
        tusk_exec::analyze_columnar::sample_columnar
    } else {
        sample_table
    };
    let sample = sample_fn(
        db,
        snapshot,
        table.oid,
        &types,
        attrs,
        sample_rows_for(target),
    )?;
    let previous = db.statistics.get(table.oid);
    let mut stats = RelStatistics {
        reltuples: sample.total_rows,
        relpages: sample.pages,
        columns: (0..table.columns.len())
            .map(|a| previous.as_ref().and_then(|p| p.column(a).cloned()))
            .collect(),
    };
    for (i, &a) in attrs.iter().enumerate() {
        stats.columns[a] = Some(column_statistics(
            &sample.rows.columns[i],
            types[a],
            sample.total_rows,
            target,
        ));
    }
    Ok(stats)
}

/// Analyzes `table` and stores its statistics (live relations are those of
/// `db`'s committed catalog, plus the table itself).
fn analyze_and_store(
    db: &Arc<Database>,
    snapshot: &Snapshot,
    table: &TableDef,
    columns: Option<&[usize]>,
) -> Result<()> {
    let stats = analyze_table(db, snapshot, table, columns, DEFAULT_STATISTICS_TARGET)
        .map_err(SqlError::from)?;
    let catalog = db.catalog_snapshot();
    let oid = table.oid;
    db.statistics.put(oid, stats, &|o| {
        o == oid || catalog.table_by_oid(o).is_some()
    })?;
    Ok(())
}

/// Autovacuum's ANALYZE (registered as the database's analyze hook).
pub(crate) fn autoanalyze(
    db: &Arc<Database>,
    table: &TableDef,
) -> std::result::Result<(), StorageError> {
    let mut txn = db.begin(tusk_storage::TxnOptions::default());
    let snapshot = txn.snapshot();
    analyze_and_store(db, &snapshot, table, None)
        .map_err(|e| StorageError::Other(e.message.clone()))?;
    drop(txn);
    db.stats.analyzed(table.oid, true);
    Ok(())
}

impl Session {
    /// `ANALYZE [VERBOSE] [table [(column, ...)], ...]`: every table when
    /// none is named.
    pub(crate) fn analyze(
        &mut self,
        verbose: bool,
        targets: &[(String, Vec<String>)],
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let catalog = self.catalog()?;
        let mut work: Vec<(TableDef, Option<Vec<usize>>)> = Vec::new();
        if targets.is_empty() {
            work.extend(
                catalog
                    .tables()
                    .filter(|t| t.is_plain_table())
                    .map(|t| (t.clone(), None)),
            );
        }
        for (name, cols) in targets {
            let t = catalog.table(name).ok_or_else(|| {
                SqlError::coded(
                    sqlstate::UNDEFINED_TABLE,
                    format!("relation \"{name}\" does not exist"),
                )
            })?;
            if !t.is_plain_table() {
                sink(QueryResult::Notice(Notice {
                    level: "WARNING",
                    message: format!(
                        "skipping \"{name}\" --- cannot analyze non-tables or special system tables"
                    ),
                    detail: None,
                }));
                continue;
            }
            let mut attrs = Vec::new();
            for c in cols {
                let a = t.columns.iter().position(|d| &d.name == c).ok_or_else(|| {
                    SqlError::coded(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{c}\" of relation \"{name}\" does not exist"),
                    )
                })?;
                if attrs.contains(&a) {
                    return Err(SqlError::coded(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("column \"{c}\" of relation \"{name}\" appears more than once"),
                    ));
                }
                attrs.push(a);
            }
            work.push((t.clone(), (!cols.is_empty()).then_some(attrs)));
        }
        for (table, cols) in work {
            self.lock_relation(table.oid, LockMode::ShareUpdateExclusive, &table.name)?;
            let snapshot = self.snapshot()?;
            if verbose {
                sink(QueryResult::Notice(Notice {
                    level: "INFO",
                    message: format!("analyzing \"public.{}\"", table.name),
                    detail: None,
                }));
            }
            analyze_and_store(&self.db, &snapshot, &table, cols.as_deref())?;
            self.db.stats.analyzed(table.oid, false);
        }
        sink(QueryResult::Command {
            tag: "ANALYZE".into(),
        });
        Ok(())
    }

    /// The analyze half of `VACUUM ANALYZE` on one table, after its vacuum.
    pub(crate) fn analyze_after_vacuum(&mut self, table: &TableDef) -> Result<()> {
        let mut txn = self.db.begin(tusk_storage::TxnOptions {
            pid: self.pid(),
            ..Default::default()
        });
        let snapshot = txn.snapshot();
        analyze_and_store(&self.db, &snapshot, table, None)?;
        drop(txn);
        self.db.stats.analyzed(table.oid, false);
        Ok(())
    }
}
