//! The free-space map: which heap pages have room, so that inserts reuse
//! the space VACUUM frees instead of growing the relation.
//!
//! PostgreSQL keeps a free-space map fork on disk; tusk keeps a small map in
//! memory, per relation: block number → free bytes at the time it was
//! recorded. VACUUM records every page it frees space on; [`HeapInserter`]
//! asks for the lowest block that had enough room, and forgets a block when
//! the tuple did not fit after all (the recorded figure is only a hint: the
//! page may have filled since). The map is not persistent: after a restart
//! inserts go to the end of the relation until the next VACUUM rebuilds the
//! map, which costs space, never correctness.
//!
//! [`HeapInserter`]: crate::heap::HeapInserter

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// Pages with less free space than this are not worth recording.
const MIN_USEFUL: usize = 64;

#[derive(Default)]
pub struct FreeSpaceMap {
    rels: Mutex<HashMap<u32, BTreeMap<u32, u16>>>,
}

impl FreeSpaceMap {
    /// Records that block `block` of `rel` has `free` bytes of room.
    pub fn record(&self, rel: u32, block: u32, free: usize) {
        let mut rels = self.rels.lock().unwrap_or_else(|e| e.into_inner());
        let map = rels.entry(rel).or_default();
        if free >= MIN_USEFUL {
            map.insert(block, free.min(u16::MAX as usize) as u16);
        } else {
            map.remove(&block);
        }
    }

    /// The lowest block of `rel` recorded with at least `need` bytes free.
    pub fn find(&self, rel: u32, need: usize) -> Option<u32> {
        let rels = self.rels.lock().unwrap_or_else(|e| e.into_inner());
        rels.get(&rel)?
            .iter()
            .find(|(_, &free)| free as usize >= need)
            .map(|(&b, _)| b)
    }

    /// Forgets block `block` of `rel` (it turned out to be full).
    pub fn forget(&self, rel: u32, block: u32) {
        let mut rels = self.rels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(map) = rels.get_mut(&rel) {
            map.remove(&block);
        }
    }

    /// Forgets relation `rel` (dropped).
    pub fn drop_relation(&self, rel: u32) {
        self.rels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&rel);
    }

    /// Number of pages recorded for `rel`.
    pub fn pages(&self, rel: u32) -> usize {
        self.rels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&rel)
            .map_or(0, |m| m.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lowest_block_with_room() {
        let fsm = FreeSpaceMap::default();
        assert_eq!(fsm.find(1, 10), None);
        fsm.record(1, 7, 500);
        fsm.record(1, 3, 100);
        fsm.record(1, 9, 10);
        assert_eq!(fsm.pages(1), 2);
        assert_eq!(fsm.find(1, 50), Some(3));
        assert_eq!(fsm.find(1, 200), Some(7));
        fsm.forget(1, 3);
        assert_eq!(fsm.find(1, 50), Some(7));
        fsm.drop_relation(1);
        assert_eq!(fsm.find(1, 50), None);
    }
}
