//! # tusk-shmem: shared memory for the engine
//!
//! Everything that several participants of a query share lives in memory that
//! could be mapped by another process at another address. This crate provides
//! that memory and the discipline for using it.
//!
//! ## Segments
//!
//! A [`Segment`] is an anonymous memory file (`memfd_create`) mapped
//! `MAP_SHARED`. Because it is a file descriptor, another process can map the
//! same bytes (through `/proc/PID/fd/N` or fd passing), at a different address.
//! With [`HugePages::Try`] or [`HugePages::On`] the memfd is created with
//! `MFD_HUGETLB | MFD_HUGE_2MB`, so the kernel backs it with 2 MB pages and the
//! TLB covers 512 times more memory per entry. Huge pages come from a pool the
//! administrator reserves (`/proc/sys/vm/nr_hugepages`); the pages a new segment
//! may take are `HugePages_Free - HugePages_Rsvd`. When there are not enough,
//! `Try` falls back to ordinary 4 kB pages and `On` fails with a clear error.
//!
//! ## The main region
//!
//! At startup the engine creates one [`MainRegion`]: a single segment laid out
//! by a [`RegionLayout`] into named, aligned areas (buffer descriptors, buffer
//! pages, the mapping table, ...). The layout records *offsets*, never
//! addresses, so the region is position independent: a structure inside it that
//! refers to another part of it stores an offset from the region's base. Code
//! that turns an offset into a reference does so through
//! [`MainRegion::area_ptr`], which checks bounds.
//!
//! ## Dynamic shared memory (`dsm`)
//!
//! Per-query shared memory (a parallel hash join's table, a shared TID store)
//! comes in *DSM segments*. `min_dynamic_shared_memory` bytes of the main
//! region are set aside as a pool ([`Dsm::reserve`]); [`Dsm::create`] carves a
//! segment from it with a coalescing free-page manager ([`freepage`]) and only
//! when the pool has no room creates a fresh memfd segment. A pool segment
//! costs no system call and no page fault, and sits on huge pages whenever
//! the main region does: that is the whole point (PostgreSQL 14's
//! `min_dynamic_shared_memory`, seed 000). Segments are named by
//! [`DsmHandle`]s `{slot, generation}`: lookups index a slot and compare a
//! generation, so stale handles are detected and nothing scans the slot
//! array under a lock. Another process maps a segment from its
//! [`AttachInfo`] (`/proc/PID/fd/N`, offset, length) with [`Segment::attach`].
//!
//! ## DSA areas (`dsa`)
//!
//! A [`DsaArea`] allocates objects of any size from a growing set of DSM
//! segments and names them by [`DsaPointer`] (segment index, offset), which
//! every participant resolves to its own address. Small requests use size
//! classes in 64 kB superblocks, each class under its own lock; whole-page
//! requests (hash-join chunks of 32 kB or 128 kB) take pages from the current
//! segment's tail with one compare-and-swap and no lock. Segments grow
//! geometrically, the next one is created ahead of need by whichever
//! participant crosses three quarters of the current one (the others keep
//! allocating meanwhile), and the area's total size is capped, failing with
//! "out of shared memory". The module documentation of [`dsa`] gives the
//! details and the memory-ordering argument; the lock-free steps are
//! modelled with loom (`src/lockfree.rs`, run by `.ci/loom`).
//!
//! ## Who locks what
//!
//! | structure | protected by | held during |
//! |---|---|---|
//! | DSM pool free pages | pool mutex | tree updates only, never a system call |
//! | DSM slot | that slot's mutex | reading/changing one generation |
//! | DSM free-slot stack | its mutex | one push or pop |
//! | DSA segment tail | nothing (CAS) | — |
//! | DSA segment table | nothing (release/acquire publication) | — |
//! | DSA growth | area grow mutex (`try_lock` when preparing ahead) | creating one segment |
//! | DSA freed pages of a segment | that segment's mutex | tree updates |
//! | DSA size class | that class's mutex | superblock free-list updates |
//!
//! No mutex is held while another is taken, except the grow mutex, under
//! which the DSM locks (creating the segment) and the old segment's
//! free-page mutex (retiring its tail) are taken; nothing takes the grow
//! mutex while holding another, so there is no cycle.
//!
//! ## Invariants
//!
//! * A segment's size is a multiple of its page size and never changes.
//! * The mapping lives as long as the [`Segment`]; references handed out by
//!   [`Segment::as_ptr`] must not outlive it (callers keep an `Arc`).
//! * Areas never overlap: [`RegionLayout::reserve`] only moves forward.
//! * A DSM handle names at most one segment ever; a pool page belongs to at
//!   most one live segment; a DSA page belongs to at most one live
//!   allocation, superblock or free run (asserted on every free).
//! * Shared structures store offsets or [`DsaPointer`]s, never addresses.
//!
//! ## Limits of this version
//!
//! The bookkeeping of the DSM registry and of DSA areas (free-page trees,
//! size-class lists) lives in this process's memory, because tusk's parallel
//! workers are threads; only the *data* is position independent and mappable
//! by another process. Pool segments are not zeroed on creation.

// Under `--cfg loom` only the lock-free core is built, for its models.
#[cfg(not(loom))]
pub mod dsa;
#[cfg(not(loom))]
pub mod dsm;
#[cfg(not(loom))]
pub mod freepage;
mod lockfree;
pub mod prefetch;
#[cfg(not(loom))]
mod segment;

#[cfg(not(loom))]
pub use dsa::{DsaArea, DsaConfig, DsaPointer, DsaPtr, DsaStats};
#[cfg(not(loom))]
pub use dsm::{Dsm, DsmConfig, DsmHandle, DsmSegment, DsmStats};
#[cfg(not(loom))]
pub use segment::{
    huge_pages_usable, AttachInfo, HugePages, Segment, HUGE_PAGE_SIZE, SMALL_PAGE_SIZE,
};

pub use prefetch::prefetch_line;
#[cfg(not(loom))]
pub use region::*;

#[cfg(not(loom))]
mod region {
    use crate::segment::{HugePages, Segment};

    use std::fmt;

    /// Errors from creating or mapping shared memory.
    #[derive(Debug, thiserror::Error)]
    pub enum ShmemError {
        #[error("could not create shared memory segment of {size} bytes: {source}")]
        Create { size: usize, source: std::io::Error },
        #[error("could not map shared memory segment of {size} bytes: {source}")]
        Map { size: usize, source: std::io::Error },
        #[error(
            "could not allocate {needed} huge pages for a shared memory segment of {size} bytes: \
         only {usable} are free (huge_pages = on; reserve more in /proc/sys/vm/nr_hugepages)"
        )]
        NotEnoughHugePages {
            size: usize,
            needed: usize,
            usable: usize,
        },
        #[error("shared memory region layout needs {needed} bytes but the region has {size}")]
        LayoutTooLarge { needed: usize, size: usize },
        #[error("out of shared memory: failed on DSA request of size {request}")]
        OutOfSharedMemory { request: usize },
        #[error("invalid or stale dynamic shared memory handle {handle:#x}")]
        StaleHandle { handle: u64 },
        #[error("too many dynamic shared memory segments (max {max})")]
        TooManySegments { max: u32 },
    }

    /// A named area of the main region: an offset and a length in bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Area {
        pub offset: usize,
        pub len: usize,
    }

    /// Plans the main region: hands out non-overlapping, aligned areas in order.
    ///
    /// The engine first asks every subsystem for its size (`reserve`), then creates
    /// the region with [`RegionLayout::total_size`] bytes, then lets each subsystem
    /// initialise its area.
    #[derive(Debug, Default)]
    pub struct RegionLayout {
        areas: Vec<(&'static str, Area)>,
        next: usize,
    }

    impl RegionLayout {
        pub fn new() -> Self {
            Self::default()
        }

        /// Reserves `len` bytes aligned to `align` (a power of two) and returns the area.
        pub fn reserve(&mut self, name: &'static str, len: usize, align: usize) -> Area {
            assert!(align.is_power_of_two(), "alignment must be a power of two");
            let offset = self.next.div_ceil(align) * align;
            self.next = offset + len;
            let area = Area { offset, len };
            self.areas.push((name, area));
            area
        }

        /// Bytes the region needs to hold every reserved area.
        pub fn total_size(&self) -> usize {
            self.next
        }

        pub fn areas(&self) -> &[(&'static str, Area)] {
            &self.areas
        }
    }

    /// The engine's main shared memory region: one segment holding every fixed-size
    /// shared structure, laid out by a [`RegionLayout`].
    pub struct MainRegion {
        segment: Segment,
        layout: RegionLayout,
    }

    impl fmt::Debug for MainRegion {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("MainRegion")
                .field("size", &self.segment.len())
                .field("huge_pages", &self.segment.huge_pages())
                .field("areas", &self.layout.areas())
                .finish()
        }
    }

    impl MainRegion {
        /// Creates the region for `layout`, zero-filled.
        pub fn create(
            layout: RegionLayout,
            huge_pages: HugePages,
        ) -> Result<MainRegion, ShmemError> {
            let segment =
                Segment::create("tusk main region", layout.total_size().max(1), huge_pages)?;
            Ok(MainRegion { segment, layout })
        }

        pub fn segment(&self) -> &Segment {
            &self.segment
        }

        /// Whether the region is backed by huge pages (`SHOW huge_pages_status`).
        pub fn huge_pages_status(&self) -> &'static str {
            if self.segment.huge_pages() {
                "on"
            } else {
                "off"
            }
        }

        /// Base address of `area` in this process.
        ///
        /// The returned pointer is valid for `area.len` bytes for as long as the
        /// region lives; the area lies inside the segment because the layout
        /// sized the segment.
        pub fn area_ptr(&self, area: Area) -> *mut u8 {
            assert!(area.offset + area.len <= self.segment.len());
            // The bounds were checked above, so the offset stays inside the mapping.
            self.segment.as_ptr().wrapping_add(area.offset)
        }

        pub fn layout(&self) -> &RegionLayout {
            &self.layout
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn layout_aligns_and_never_overlaps() {
        let mut layout = RegionLayout::new();
        let a = layout.reserve("a", 10, 8);
        let b = layout.reserve("b", 100, 64);
        let c = layout.reserve("c", 1, 4096);
        assert_eq!(a.offset, 0);
        assert_eq!(b.offset, 64);
        assert_eq!(c.offset, 4096);
        assert!(a.offset + a.len <= b.offset && b.offset + b.len <= c.offset);
        assert_eq!(layout.total_size(), 4097);
    }

    #[test]
    fn region_is_zeroed_and_writable() {
        let mut layout = RegionLayout::new();
        let area = layout.reserve("x", 1 << 20, 64);
        let region = MainRegion::create(layout, HugePages::Off).unwrap();
        let p = region.area_ptr(area);
        // SAFETY: the area lies inside the live mapping and nothing else uses it.
        let bytes = unsafe { std::slice::from_raw_parts_mut(p, area.len) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[12345] = 7;
        assert_eq!(bytes[12345], 7);
        assert_eq!(region.huge_pages_status(), "off");
    }

    #[test]
    fn huge_pages_try_falls_back_when_none_are_free() {
        let size = 4 * HUGE_PAGE_SIZE;
        let seg = Segment::create("try", size, HugePages::Try).unwrap();
        let usable = huge_pages_usable();
        if usable < 4 {
            assert!(!seg.huge_pages());
        }
        assert!(seg.len() >= size);
    }
}
