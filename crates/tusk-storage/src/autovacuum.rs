//! Autovacuum: a background thread that vacuums (and asks for ANALYZE of)
//! tables whose activity passes PostgreSQL's thresholds.
//!
//! Every `autovacuum_naptime` (1 min) the thread wakes up and looks at each
//! table's counters (`pgstat`), with `reltuples` taken as the table's live
//! tuple count:
//!
//! * vacuum when `n_dead_tup > autovacuum_vacuum_threshold (50) +
//!   autovacuum_vacuum_scale_factor (0.2) × reltuples`, or when the rows
//!   inserted since the last vacuum pass `autovacuum_vacuum_insert_threshold
//!   (1000) + autovacuum_vacuum_insert_scale_factor (0.2) × reltuples`
//!   (PostgreSQL 13's insert-driven vacuum; -1 turns it off);
//! * analyze when `n_mod_since_analyze > autovacuum_analyze_threshold (50) +
//!   autovacuum_analyze_scale_factor (0.1) × reltuples`. ANALYZE belongs to
//!   the SQL layer: it registers a hook ([`Launcher::set_analyze_hook`],
//!   through [`crate::Database::set_analyze_hook`]); without one, tables are
//!   not analyzed.
//!
//! A table is vacuumed under `ShareUpdateExclusiveLock`, taken without
//! waiting as PostgreSQL's autovacuum does: a table locked by DDL, LOCK TABLE
//! or a manual VACUUM is skipped until the next round. The thread holds
//! only a weak reference to the database between rounds, and dropping the
//! database stops it ([`Launcher::stop`]). Settings come from `tusk.conf`
//! (`autovacuum = off` disables the thread).

use crate::catalog::TableDef;
use crate::lock::{LockMode, LockTag};
use crate::txn::INVALID_XID;
use crate::xact::TxnOptions;
use crate::{parse_bool, parse_duration, parse_memory, Database, StorageError};
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// Autovacuum's settings (`tusk.conf`).
#[derive(Debug, Clone)]
pub struct AutovacuumOptions {
    pub enabled: bool,
    pub naptime: Duration,
    pub vacuum_threshold: f64,
    pub vacuum_scale_factor: f64,
    /// -1: no insert-driven vacuum.
    pub vacuum_insert_threshold: f64,
    pub vacuum_insert_scale_factor: f64,
    pub analyze_threshold: f64,
    pub analyze_scale_factor: f64,
    /// Memory for dead TIDs (`autovacuum_work_mem`, or
    /// `maintenance_work_mem` when that is -1).
    pub work_mem: usize,
}

impl Default for AutovacuumOptions {
    fn default() -> Self {
        AutovacuumOptions {
            enabled: true,
            naptime: Duration::from_secs(60),
            vacuum_threshold: 50.0,
            vacuum_scale_factor: 0.2,
            vacuum_insert_threshold: 1000.0,
            vacuum_insert_scale_factor: 0.2,
            analyze_threshold: 50.0,
            analyze_scale_factor: 0.1,
            work_mem: 64 << 20,
        }
    }
}

impl AutovacuumOptions {
    pub fn from_settings(settings: &BTreeMap<String, String>) -> Result<Self, StorageError> {
        let mut o = AutovacuumOptions::default();
        let mut autovacuum_work_mem: Option<i64> = None;
        for (k, v) in settings {
            let bad =
                || StorageError::Other(format!("invalid value for parameter \"{k}\": \"{v}\""));
            let num = || v.trim().parse::<f64>().ok().filter(|n| n.is_finite());
            match k.as_str() {
                "autovacuum" => o.enabled = parse_bool(v).ok_or_else(bad)?,
                "autovacuum_naptime" => {
                    o.naptime = parse_duration(v)
                        .filter(|d| *d >= Duration::from_secs(1))
                        .ok_or_else(bad)?
                }
                "autovacuum_vacuum_threshold" => {
                    o.vacuum_threshold = num().filter(|&n| n >= 0.0).ok_or_else(bad)?
                }
                "autovacuum_vacuum_scale_factor" => {
                    o.vacuum_scale_factor = num().filter(|&n| n >= 0.0).ok_or_else(bad)?
                }
                "autovacuum_vacuum_insert_threshold" => {
                    o.vacuum_insert_threshold = num().filter(|&n| n >= -1.0).ok_or_else(bad)?
                }
                "autovacuum_vacuum_insert_scale_factor" => {
                    o.vacuum_insert_scale_factor = num().filter(|&n| n >= 0.0).ok_or_else(bad)?
                }
                "autovacuum_analyze_threshold" => {
                    o.analyze_threshold = num().filter(|&n| n >= 0.0).ok_or_else(bad)?
                }
                "autovacuum_analyze_scale_factor" => {
                    o.analyze_scale_factor = num().filter(|&n| n >= 0.0).ok_or_else(bad)?
                }
                "maintenance_work_mem" => {
                    o.work_mem = parse_memory(v, 1024).ok_or_else(bad)? as usize
                }
                "autovacuum_work_mem" => {
                    autovacuum_work_mem = Some(if v.trim() == "-1" {
                        -1
                    } else {
                        parse_memory(v, 1024).ok_or_else(bad)? as i64
                    })
                }
                _ => {}
            }
        }
        if let Some(m) = autovacuum_work_mem.filter(|&m| m > 0) {
            o.work_mem = m as usize;
        }
        Ok(o)
    }

    /// Whether `stats` call for a vacuum and for an analyze.
    pub fn due(&self, stats: &crate::pgstat::TableStats) -> (bool, bool) {
        let reltuples = stats.n_live_tup as f64;
        let vacuum = stats.n_dead_tup as f64
            > self.vacuum_threshold + self.vacuum_scale_factor * reltuples
            || (self.vacuum_insert_threshold >= 0.0
                && stats.n_ins_since_vacuum as f64
                    > self.vacuum_insert_threshold + self.vacuum_insert_scale_factor * reltuples);
        let analyze = stats.n_mod_since_analyze as f64
            > self.analyze_threshold + self.analyze_scale_factor * reltuples;
        (vacuum, analyze)
    }
}

/// ANALYZE of one table, provided by the SQL layer.
pub type AnalyzeHook =
    Arc<dyn Fn(&Arc<Database>, &TableDef) -> Result<(), StorageError> + Send + Sync>;

/// What one round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RoundReport {
    pub vacuumed: Vec<String>,
    pub analyzed: Vec<String>,
    /// Tables due but locked by someone else.
    pub skipped: Vec<String>,
}

struct Shared {
    stop: Mutex<bool>,
    wake: Condvar,
    hook: RwLock<Option<AnalyzeHook>>,
}

/// The running autovacuum thread.
pub struct Launcher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Launcher {
    pub fn start(db: &Arc<Database>, opts: AutovacuumOptions) -> Result<Launcher, StorageError> {
        let shared = Arc::new(Shared {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            hook: RwLock::new(None),
        });
        let weak: Weak<Database> = Arc::downgrade(db);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("tusk autovacuum".into())
            .spawn(move || run(weak, opts, s))
            .map_err(|e| StorageError::io("could not start the autovacuum launcher".into(), e))?;
        Ok(Launcher {
            shared,
            thread: Some(thread),
        })
    }

    pub fn set_analyze_hook(&self, hook: AnalyzeHook) {
        *self.shared.hook.write().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    }

    /// Stops the thread (waits for it, unless called from it).
    pub fn stop(mut self) {
        *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

fn run(db: Weak<Database>, opts: AutovacuumOptions, shared: Arc<Shared>) {
    loop {
        {
            let stop = shared.stop.lock().unwrap_or_else(|e| e.into_inner());
            let (stop, _) = shared
                .wake
                .wait_timeout_while(stop, opts.naptime, |s| !*s)
                .unwrap_or_else(|e| e.into_inner());
            if *stop {
                return;
            }
        }
        let Some(db) = db.upgrade() else {
            return;
        };
        let hook = shared
            .hook
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Err(e) = run_round(&db, &opts, hook.as_ref()) {
            eprintln!("LOG:  autovacuum: {e}");
        }
    }
}

/// One round over every table (see the module doc).
pub fn run_round(
    db: &Arc<Database>,
    opts: &AutovacuumOptions,
    analyze: Option<&AnalyzeHook>,
) -> Result<RoundReport, StorageError> {
    let mut report = RoundReport::default();
    let catalog = db.catalog_snapshot();
    for table in catalog.tables() {
        let (vacuum, analyze_due) = opts.due(&db.stats.table(table.oid));
        let analyze_due = analyze_due && analyze.is_some();
        if !vacuum && !analyze_due {
            continue;
        }
        let mut txn = db.begin(TxnOptions::default());
        if txn
            .lock(
                LockTag::Relation(table.oid),
                LockMode::ShareUpdateExclusive,
                true,
            )
            .is_err()
        {
            report.skipped.push(table.name.clone());
            continue;
        }
        // Dropped since the catalog was read?
        let current = db.catalog_snapshot();
        let Some(table) = current.table_by_oid(table.oid) else {
            continue;
        };
        if vacuum {
            let indexes: Vec<_> = current.indexes_of(table.oid).cloned().collect();
            crate::vacuum::vacuum_table_as(db, table, &indexes, INVALID_XID, opts.work_mem, true)?;
            report.vacuumed.push(table.name.clone());
        }
        if let (true, Some(hook)) = (analyze_due, analyze) {
            hook(db, table)?;
            db.stats.analyzed(table.oid, true);
            report.analyzed.push(table.name.clone());
        }
        txn.commit()?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgstat::TableStats;

    #[test]
    fn thresholds_are_postgres() {
        let o = AutovacuumOptions::default();
        let s = |live, dead, ins, modified| TableStats {
            n_live_tup: live,
            n_dead_tup: dead,
            n_ins_since_vacuum: ins,
            n_mod_since_analyze: modified,
            ..TableStats::default()
        };
        assert_eq!(o.due(&s(1000, 250, 0, 0)), (false, false));
        assert_eq!(o.due(&s(1000, 251, 0, 0)), (true, false));
        assert_eq!(o.due(&s(1000, 0, 1200, 0)), (false, false));
        assert_eq!(o.due(&s(1000, 0, 1201, 150)), (true, false));
        assert_eq!(o.due(&s(1000, 0, 0, 151)), (false, true));
        let settings = BTreeMap::from([
            (
                "autovacuum_vacuum_scale_factor".to_string(),
                "0".to_string(),
            ),
            ("autovacuum_naptime".to_string(), "5s".to_string()),
            (
                "autovacuum_vacuum_insert_threshold".to_string(),
                "-1".to_string(),
            ),
        ]);
        let o = AutovacuumOptions::from_settings(&settings).unwrap();
        assert_eq!(o.naptime, Duration::from_secs(5));
        assert_eq!(o.due(&s(1000, 51, 1_000_000, 0)), (true, false));
        assert_eq!(o.due(&s(1000, 50, 1_000_000, 0)), (false, false));
    }
}
