//! The buffer mapping table's place in the main region (PostgreSQL's
//! `buf_table.c`): how big it is and which implementation serves the pool.
//!
//! `tusk.buffer_mapping = chash | partitioned | global` (startup only,
//! default `chash`) picks the implementation. `chash` is built inside an area
//! of the main region, next to the buffer descriptors; the two lock-based
//! baselines are process-local (see `tusk-chash`) and exist for benchmarks.
//!
//! The table is sized for `nbuffers` plus slack: during an eviction the
//! victim buffer is mapped under its new tag before its old tag is removed,
//! so each evicting backend may hold one extra entry for a moment.

use std::sync::Arc;
use tusk_chash::{BufferMapping, ChashTable, MappingKind};
use tusk_shmem::{Area, MainRegion, RegionLayout};

/// Entries the mapping table must hold for `nbuffers` buffers.
pub fn capacity(nbuffers: usize) -> usize {
    nbuffers + nbuffers / 8 + 128
}

/// Where (and whether) the mapping table lives in the main region.
#[derive(Debug, Clone, Copy)]
pub struct BufTableLayout {
    kind: MappingKind,
    capacity: usize,
    area: Option<Area>,
}

impl BufTableLayout {
    /// Reserves the table's area in the main region's layout (chash only).
    pub fn reserve(
        layout: &mut RegionLayout,
        nbuffers: usize,
        kind: MappingKind,
    ) -> BufTableLayout {
        let capacity = capacity(nbuffers);
        let area = (kind == MappingKind::Chash).then(|| {
            layout.reserve(
                "buffer mapping table",
                ChashTable::layout_size(capacity),
                64,
            )
        });
        BufTableLayout {
            kind,
            capacity,
            area,
        }
    }

    /// Builds the table in the freshly created region.
    pub fn build(&self, region: &Arc<MainRegion>) -> Box<dyn BufferMapping> {
        match self.area {
            Some(area) => {
                let base = region.area_ptr(area);
                // SAFETY: the area was reserved for this table (64-byte
                // aligned, `layout_size(capacity)` bytes) in a region nobody
                // else uses yet, and the handle keeps the region alive.
                Box::new(unsafe { ChashTable::init(base, area.len, self.capacity, region.clone()) })
            }
            None => self.kind.build_local(self.capacity),
        }
    }
}
