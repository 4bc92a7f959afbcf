//! VACUUM's index pass (PostgreSQL's `ambulkdelete`): remove every entry
//! whose heap TID is dead.
//!
//! The leaf level is walked left to right once, along the right links.
//! For each leaf the TIDs are read under a shared lock and handed to the
//! dead-TID store together, so that it can overlap its cache misses (the
//! TIDs of a leaf are in key order, i.e. in random heap order); only a
//! leaf that loses entries is locked exclusively and logged
//! (`BtreeDelete`, the positions as an item set). Removal only drops slots
//! (`node::remove`), so it costs no copying of entry bodies.
//!
//! The index's relation mutex is held per leaf, between the look and the
//! removal, so no insertion (and so no split) changes the leaf in between.
//! Pages are never removed; empty leaves stay in the chain.

use super::node::{self, NO_BLOCK};
use super::search::Target;
use super::{corrupt, Btree};
use crate::heap::{log_page_change, Tid};
use crate::txn::Xid;
use crate::wal::{decode_item_set, encode_item_set, RecordType};
use crate::StorageError;

/// What [`Btree::bulk_delete`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkDeleteStats {
    /// Entries removed.
    pub removed: u64,
    /// Entries left.
    pub remaining: u64,
    /// Pages of the index (including the metapage).
    pub pages: u32,
}

impl Btree<'_> {
    /// Removes every entry whose TID is dead (see the module doc).
    /// `are_dead(probes, dead)` answers for all the TIDs of one leaf page
    /// at a time; `probe` turns each TID into what `are_dead` takes (the
    /// store's own TID type), as the entries are read.
    pub fn bulk_delete<P>(
        &self,
        probe: impl Fn(Tid) -> P,
        mut are_dead: impl FnMut(&[P], &mut [bool]),
        xid: Xid,
    ) -> Result<BulkDeleteStats, StorageError> {
        let mut stats = BulkDeleteStats {
            pages: self.pool.nblocks(self.rel)?,
            ..Default::default()
        };
        let mut block = self.descend(&Target::Leftmost, false)?.leaf;
        let mut gone: Vec<u16> = Vec::new();
        let mut payload: Vec<u8> = Vec::new();
        let mut probes: Vec<P> = Vec::new();
        let mut dead: Vec<bool> = Vec::new();
        let mutex = self.pool.relation_mutex(self.rel);
        while block != NO_BLOCK {
            let _no_inserts = mutex.lock().unwrap_or_else(|e| e.into_inner());
            let buf = self.pool.read_buffer(self.rel, block)?;
            // Look under a shared lock first: most pages of a sparse delete
            // keep everything and need no exclusive lock nor WAL.
            probes.clear();
            let next = {
                let g = buf.lock_shared();
                let p = g.page();
                if !node::is_node(p) || !node::is_leaf(p) {
                    return Err(corrupt(self.rel, block));
                }
                probes.extend((0..node::count(p)).map(|i| probe(node::leaf_tid(p, i))));
                node::right(p)
            };
            if next != NO_BLOCK {
                self.pool.prefetch_mapping(self.rel, next);
            }
            dead.clear();
            dead.resize(probes.len(), false);
            are_dead(&probes, &mut dead);
            gone.clear();
            gone.extend((0..dead.len()).filter(|&i| dead[i]).map(|i| i as u16));
            stats.remaining += (dead.len() - gone.len()) as u64;
            if !gone.is_empty() {
                // Inserters wait on the index's mutex: nothing changed
                // the page since the look.
                let mut g = buf.lock_exclusive();
                let p = g.page_mut();
                node::remove(p, &gone);
                payload.clear();
                encode_item_set(&gone, &mut payload);
                log_page_change(
                    self.pool,
                    p,
                    RecordType::BtreeDelete,
                    xid,
                    self.block_ref(block),
                    &payload,
                )?;
                stats.removed += gone.len() as u64;
            }
            block = next;
        }
        Ok(stats)
    }
}

/// Redo of `BtreeDelete`.
pub(super) fn redo_delete(p: &mut [u8], payload: &[u8]) -> Result<(), &'static str> {
    let mut gone = Vec::new();
    decode_item_set(payload, &mut gone)?;
    if gone.iter().any(|&g| g as usize >= node::count(p)) || gone.windows(2).any(|w| w[0] >= w[1]) {
        return Err("delete positions out of range");
    }
    node::remove(p, &gone);
    Ok(())
}
