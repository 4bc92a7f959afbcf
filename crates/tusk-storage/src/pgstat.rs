//! Per-table activity counters: what `pg_stat_user_tables` shows and what
//! autovacuum decides by.
//!
//! Transactions count their inserts, updates (HOT ones too) and deletes per
//! table and savepoint level (`xact::TableDelta`) and hand them over when
//! they end, as PostgreSQL's `pgstat_relation.c` does:
//!
//! * the `n_tup_*` totals count every row written, committed or not;
//! * on commit, `n_live_tup` grows by inserts minus deletes and
//!   `n_dead_tup` by updates plus deletes (each leaves a dead version);
//! * on abort (of the transaction or of a savepoint), the inserted and the
//!   new updated versions are dead: `n_dead_tup` grows by inserts plus
//!   updates.
//!
//! VACUUM replaces `n_live_tup` and `n_dead_tup` with what it counted and
//! stamps `last_vacuum` / `last_autovacuum`. The counters live in memory
//! and start from zero when the data directory is opened (PostgreSQL keeps
//! them across a clean shutdown); the first autovacuum round after a
//! restart therefore only sees the activity since.

use crate::xact::TableDelta;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

/// One table's counters (the columns of `pg_stat_user_tables`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableStats {
    pub n_tup_ins: u64,
    pub n_tup_upd: u64,
    pub n_tup_del: u64,
    pub n_tup_hot_upd: u64,
    pub n_live_tup: u64,
    pub n_dead_tup: u64,
    pub n_mod_since_analyze: u64,
    pub n_ins_since_vacuum: u64,
    pub last_vacuum: Option<SystemTime>,
    pub last_autovacuum: Option<SystemTime>,
    pub last_analyze: Option<SystemTime>,
    pub last_autoanalyze: Option<SystemTime>,
    pub vacuum_count: u64,
    pub autovacuum_count: u64,
    pub analyze_count: u64,
    pub autoanalyze_count: u64,
}

#[derive(Default)]
pub struct Stats {
    tables: Mutex<HashMap<u32, TableStats>>,
}

impl Stats {
    fn tables(&self) -> std::sync::MutexGuard<'_, HashMap<u32, TableStats>> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn totals(t: &mut TableStats, d: &TableDelta) {
        t.n_tup_ins += d.inserted;
        t.n_tup_upd += d.updated;
        t.n_tup_del += d.deleted;
        t.n_tup_hot_upd += d.hot_updated;
    }

    /// A committed transaction's counts.
    pub fn committed(&self, deltas: &HashMap<u32, TableDelta>) {
        if deltas.is_empty() {
            return;
        }
        let mut tables = self.tables();
        for (rel, d) in deltas {
            let t = tables.entry(*rel).or_default();
            Self::totals(t, d);
            t.n_live_tup = (t.n_live_tup + d.inserted).saturating_sub(d.deleted);
            t.n_dead_tup += d.updated + d.deleted;
            t.n_mod_since_analyze += d.inserted + d.updated + d.deleted;
            t.n_ins_since_vacuum += d.inserted;
        }
    }

    /// A rolled-back transaction's or savepoint's counts.
    pub fn aborted(&self, deltas: &HashMap<u32, TableDelta>) {
        if deltas.is_empty() {
            return;
        }
        let mut tables = self.tables();
        for (rel, d) in deltas {
            let t = tables.entry(*rel).or_default();
            Self::totals(t, d);
            t.n_dead_tup += d.inserted + d.updated;
        }
    }

    /// A VACUUM of `rel` found `live` live and `dead` dead-but-not-removable
    /// tuples.
    pub fn vacuumed(&self, rel: u32, live: u64, dead: u64, auto: bool) {
        let mut tables = self.tables();
        let t = tables.entry(rel).or_default();
        t.n_live_tup = live;
        t.n_dead_tup = dead;
        t.n_ins_since_vacuum = 0;
        let now = Some(SystemTime::now());
        if auto {
            t.last_autovacuum = now;
            t.autovacuum_count += 1;
        } else {
            t.last_vacuum = now;
            t.vacuum_count += 1;
        }
    }

    /// An ANALYZE of `rel` happened (the hook in `autovacuum`, or the SQL
    /// command once it exists).
    pub fn analyzed(&self, rel: u32, auto: bool) {
        let mut tables = self.tables();
        let t = tables.entry(rel).or_default();
        t.n_mod_since_analyze = 0;
        let now = Some(SystemTime::now());
        if auto {
            t.last_autoanalyze = now;
            t.autoanalyze_count += 1;
        } else {
            t.last_analyze = now;
            t.analyze_count += 1;
        }
    }

    /// The counters of `rel` (zero for a table without activity).
    pub fn table(&self, rel: u32) -> TableStats {
        self.tables().get(&rel).cloned().unwrap_or_default()
    }

    /// Forgets a dropped relation.
    pub fn forget(&self, rel: u32) {
        self.tables().remove(&rel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_and_abort_rules() {
        let s = Stats::default();
        let d = |i, u, del| {
            HashMap::from([(
                7u32,
                TableDelta {
                    inserted: i,
                    updated: u,
                    hot_updated: 0,
                    deleted: del,
                },
            )])
        };
        s.committed(&d(10, 0, 0));
        s.committed(&d(0, 3, 2));
        s.aborted(&d(4, 1, 0));
        let t = s.table(7);
        assert_eq!((t.n_tup_ins, t.n_tup_upd, t.n_tup_del), (14, 4, 2));
        assert_eq!((t.n_live_tup, t.n_dead_tup), (8, 5 + 5));
        s.vacuumed(7, 8, 0, true);
        let t = s.table(7);
        assert_eq!((t.n_dead_tup, t.autovacuum_count), (0, 1));
        assert!(t.last_autovacuum.is_some() && t.last_vacuum.is_none());
    }
}
