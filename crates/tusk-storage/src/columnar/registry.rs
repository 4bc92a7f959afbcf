//! What the database keeps in memory about each columnar table: its
//! [`Claims`] (who changed which row of a row group, see `claims`) and the
//! free blocks of its data fork.
//!
//! ## Free blocks
//!
//! Row groups are written once and retired whole by VACUUM (see
//! `vacuum`). A retired group's blocks become free when its metadata entry
//! is gone — removed by VACUUM once no snapshot can see it — and a later
//! row group may be written into them ([`TableState::take_free`]) instead of
//! extending the file. VACUUM rebuilds the list (while it holds the lock
//! that keeps writers out) from the group entries left in the metadata
//! heap: every block no entry names is free. The list is not durable; after
//! a restart the file only grows until the next VACUUM finds its holes.

use super::claims::Claims;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// What is kept about one columnar table (see the module doc).
#[derive(Default)]
pub struct TableState {
    claims: Mutex<Claims>,
    /// Free runs of blocks of the data fork: (first block, blocks).
    free: Mutex<Vec<(u32, u32)>>,
}

impl TableState {
    /// The table's claims, locked.
    pub fn claims(&self) -> MutexGuard<'_, Claims> {
        self.claims.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the list of free runs.
    pub fn set_free(&self, runs: Vec<(u32, u32)>) {
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) = runs;
    }

    /// Blocks listed free.
    pub fn free_blocks(&self) -> u64 {
        let free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.iter().map(|&(_, n)| u64::from(n)).sum()
    }

    /// Takes `n` consecutive free blocks (the first run long enough);
    /// returns the first, or `None` when no run is.
    pub fn take_free(&self, n: u32) -> Option<u32> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let i = free.iter().position(|&(_, len)| len >= n)?;
        let (first, len) = free[i];
        if len == n {
            free.remove(i);
        } else {
            free[i] = (first + n, len - n);
        }
        Some(first)
    }
}

/// Every columnar table's [`TableState`] (one registry per database).
#[derive(Default)]
pub struct Registry {
    tables: Mutex<HashMap<u32, Arc<TableState>>>,
}

impl Registry {
    /// The state of table `oid`.
    pub fn table(&self, oid: u32) -> Arc<TableState> {
        self.tables
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(oid)
            .or_default()
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_runs_are_taken_first_fit() {
        let t = TableState::default();
        t.set_free(vec![(3, 2), (10, 5)]);
        assert_eq!(t.free_blocks(), 7);
        assert_eq!(t.take_free(3), Some(10));
        assert_eq!(t.take_free(2), Some(3));
        assert_eq!(t.take_free(2), Some(13));
        assert_eq!(t.take_free(1), None);
    }
}
