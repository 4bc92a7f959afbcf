//! Dynamic shared memory segments: carved from the preallocated pool in the
//! main region when it has room, fresh memfd segments when it does not.
//!
//! ## Creating
//!
//! [`Dsm::create`] first asks the pool's free-page manager ([`FreePages`],
//! 4 kB pages, best fit, coalescing) for a run. That is a few tree operations
//! under the pool's mutex: no system call, no page fault (the pool was faulted
//! in when the main region was created, on huge pages if the region got
//! them). Only when the pool has no run that large does it create a fresh
//! [`Segment`], and it makes the system calls (`memfd_create`, `ftruncate`,
//! `mmap`) holding no lock at all. Pool segments are not zeroed: their
//! contents are whatever the last user left (as with PostgreSQL's DSM); fresh
//! ones happen to be zero.
//!
//! ## Handles
//!
//! A [`DsmHandle`] is `{slot, generation}` packed in a `u64`. The registry is
//! a fixed array of slots, each with its own small mutex and a generation
//! counter; free slots sit on a stack. Creating pops a slot (O(1)), looking a
//! handle up indexes the array and compares generations (O(1)), and releasing
//! a segment bumps its slot's generation before the slot is reused, so an old
//! handle can never name a newer segment: lookups report
//! [`ShmemError::StaleHandle`]. No operation scans the slot array.
//!
//! ## Lifetime
//!
//! A segment lives while an `Arc<DsmSegment>` to it does; the registry keeps
//! only a weak reference. Dropping the last reference unregisters the handle
//! and returns pool pages to the pool (or unmaps and closes the memfd).
//!
//! ## Other processes
//!
//! [`DsmSegment::attach_info`] describes the backing memfd, offset and length;
//! another process maps it with [`Segment::attach`] (`/proc/PID/fd/N`) and sees
//! the same bytes at its own address. Everything stored inside a segment is
//! therefore position independent: offsets, never addresses.
//!
//! ## Huge pages
//!
//! Fresh segments use huge pages when the setting is `try` or `on` and enough
//! are usable, and 4 kB pages otherwise: a query should not fail because the
//! huge page pool ran dry, so `on` only governs the main region. Pool segments
//! are on huge pages exactly when the main region is.

use crate::freepage::FreePages;
use crate::segment::{AttachInfo, Segment, HUGE_PAGE_SIZE, SMALL_PAGE_SIZE};
use crate::{Area, HugePages, MainRegion, RegionLayout, ShmemError};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Pages of the pool, in bytes.
pub const DSM_PAGE_SIZE: usize = SMALL_PAGE_SIZE;

/// Names a segment: `{slot, generation}`. Copyable and meaningful to every
/// participant; never reused for another segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DsmHandle(u64);

impl DsmHandle {
    fn new(slot: u32, generation: u32) -> DsmHandle {
        DsmHandle(((generation as u64) << 32) | slot as u64)
    }
    pub fn slot(self) -> u32 {
        self.0 as u32
    }
    pub fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
    pub fn to_u64(self) -> u64 {
        self.0
    }
    pub fn from_u64(v: u64) -> DsmHandle {
        DsmHandle(v)
    }
}

impl fmt::Display for DsmHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.slot(), self.generation())
    }
}

/// Settings of the DSM machinery.
#[derive(Debug, Clone, Copy)]
pub struct DsmConfig {
    /// Slots in the registry: the most segments alive at once.
    pub max_segments: u32,
    /// Whether fresh segments try huge pages (`on` is treated as `try`).
    pub huge_pages: HugePages,
}

impl Default for DsmConfig {
    fn default() -> Self {
        DsmConfig {
            max_segments: 4096,
            huge_pages: HugePages::Try,
        }
    }
}

/// Counters for the engine and benchmarks. Counts are totals since start;
/// bytes and pages are what live segments hold now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DsmStats {
    pub pool_size: usize,
    pub pool_huge_pages: bool,
    pub pool_segments_created: u64,
    pub fresh_segments_created: u64,
    pub pool_bytes: usize,
    pub fresh_bytes: usize,
    /// Huge pages held by live fresh segments.
    pub fresh_huge_pages: usize,
    /// Huge pages under the pool's live segments (whole huge pages touched by
    /// them) plus `fresh_huge_pages`.
    pub huge_pages_in_use: usize,
}

/// The DSM machinery: pool, registry and counters. Cheap to clone.
#[derive(Clone)]
pub struct Dsm {
    inner: Arc<DsmInner>,
}

struct Pool {
    region: Arc<MainRegion>,
    area: Area,
    pages: Mutex<FreePages>,
}

struct SlotState {
    generation: u32,
    segment: Weak<DsmSegment>,
}

struct DsmInner {
    pool: Option<Pool>,
    slots: Box<[Mutex<SlotState>]>,
    free_slots: Mutex<Vec<u32>>,
    config: DsmConfig,
    pool_created: AtomicU64,
    fresh_created: AtomicU64,
    pool_bytes: AtomicUsize,
    fresh_bytes: AtomicUsize,
    fresh_huge_pages: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

enum Backing {
    Pool { first_page: usize, npages: usize },
    Fresh(Segment),
}

/// One dynamic shared memory segment, mapped in this process.
pub struct DsmSegment {
    handle: DsmHandle,
    ptr: *mut u8,
    len: usize,
    backing: Backing,
    dsm: Arc<DsmInner>,
}

// SAFETY: like `Segment`, a `DsmSegment` only carries the address of shared
// memory; synchronising access to the bytes is up to the structures placed
// there. The pool pages it owns are its own until it is dropped.
unsafe impl Send for DsmSegment {}
// SAFETY: see `Send`; `&DsmSegment` exposes only the address and metadata.
unsafe impl Sync for DsmSegment {}

impl fmt::Debug for DsmSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DsmSegment")
            .field("handle", &self.handle)
            .field("len", &self.len)
            .field("from_pool", &self.from_pool())
            .finish()
    }
}

impl Dsm {
    /// Reserves a pool of `bytes` (rounded up to whole 2 MB pages so that on
    /// a huge-page region no pool page shares a huge page with another area)
    /// in the main region's layout. Returns `None` for 0.
    pub fn reserve(layout: &mut RegionLayout, bytes: usize) -> Option<Area> {
        if bytes == 0 {
            return None;
        }
        let len = bytes.div_ceil(HUGE_PAGE_SIZE) * HUGE_PAGE_SIZE;
        Some(layout.reserve("min_dynamic_shared_memory", len, HUGE_PAGE_SIZE))
    }

    /// The DSM machinery over `pool` (an area of `region` from
    /// [`Dsm::reserve`]), or with no pool at all.
    pub fn new(pool: Option<(Arc<MainRegion>, Area)>, config: DsmConfig) -> Dsm {
        let pool = pool.map(|(region, area)| {
            assert!(area.offset + area.len <= region.segment().len());
            assert_eq!(area.offset % DSM_PAGE_SIZE, 0);
            Pool {
                pages: Mutex::new(FreePages::with_free(0, area.len / DSM_PAGE_SIZE)),
                region,
                area,
            }
        });
        let n = config.max_segments;
        assert!(n > 0);
        Dsm {
            inner: Arc::new(DsmInner {
                pool,
                slots: (0..n)
                    .map(|_| {
                        Mutex::new(SlotState {
                            generation: 1,
                            segment: Weak::new(),
                        })
                    })
                    .collect(),
                // Pop from the end: slot 0 first.
                free_slots: Mutex::new((0..n).rev().collect()),
                config,
                pool_created: AtomicU64::new(0),
                fresh_created: AtomicU64::new(0),
                pool_bytes: AtomicUsize::new(0),
                fresh_bytes: AtomicUsize::new(0),
                fresh_huge_pages: AtomicUsize::new(0),
            }),
        }
    }

    /// Creates a segment of at least `size` bytes (rounded up to 4 kB pages).
    pub fn create(&self, size: usize) -> Result<Arc<DsmSegment>, ShmemError> {
        let size = size.max(1).div_ceil(DSM_PAGE_SIZE) * DSM_PAGE_SIZE;
        let inner = &self.inner;
        // Take a slot first, so that running out of slots fails before any
        // memory is committed.
        let slot = lock(&inner.free_slots)
            .pop()
            .ok_or(ShmemError::TooManySegments {
                max: inner.config.max_segments,
            })?;
        let from_pool = inner.pool.as_ref().and_then(|pool| {
            let npages = size / DSM_PAGE_SIZE;
            let first_page = lock(&pool.pages).allocate(npages)?;
            let offset = pool.area.offset + first_page * DSM_PAGE_SIZE;
            let ptr = pool.region.segment().as_ptr().wrapping_add(offset);
            Some((ptr, Backing::Pool { first_page, npages }))
        });
        let (ptr, backing) = match from_pool {
            Some(x) => {
                inner.pool_created.fetch_add(1, Ordering::Relaxed);
                inner.pool_bytes.fetch_add(size, Ordering::Relaxed);
                x
            }
            None => {
                let hp = match inner.config.huge_pages {
                    HugePages::Off => HugePages::Off,
                    HugePages::Try | HugePages::On => HugePages::Try,
                };
                let seg = match Segment::create("tusk dsm", size, hp) {
                    Ok(s) => s,
                    Err(e) => {
                        lock(&inner.free_slots).push(slot);
                        return Err(e);
                    }
                };
                inner.fresh_created.fetch_add(1, Ordering::Relaxed);
                inner.fresh_bytes.fetch_add(size, Ordering::Relaxed);
                if seg.huge_pages() {
                    inner
                        .fresh_huge_pages
                        .fetch_add(seg.len() / HUGE_PAGE_SIZE, Ordering::Relaxed);
                }
                (seg.as_ptr(), Backing::Fresh(seg))
            }
        };
        // One visit to the slot: read its generation and register the
        // segment. The slot is ours (popped from the free stack), so nobody
        // else changes it meanwhile; lookups of older handles fail on the
        // generation, and a lookup of this handle cannot happen before we
        // return it.
        let mut st = lock(&inner.slots[slot as usize]);
        let seg = Arc::new_cyclic(|weak| {
            st.segment = weak.clone();
            DsmSegment {
                handle: DsmHandle::new(slot, st.generation),
                ptr,
                len: size,
                backing,
                dsm: inner.clone(),
            }
        });
        drop(st);
        Ok(seg)
    }

    /// The live segment `handle` names, in this process.
    pub fn lookup(&self, handle: DsmHandle) -> Result<Arc<DsmSegment>, ShmemError> {
        let stale = ShmemError::StaleHandle {
            handle: handle.to_u64(),
        };
        let Some(slot) = self.inner.slots.get(handle.slot() as usize) else {
            return Err(stale);
        };
        let st = lock(slot);
        if st.generation != handle.generation() {
            return Err(stale);
        }
        st.segment.upgrade().ok_or(stale)
    }

    pub fn stats(&self) -> DsmStats {
        let i = &self.inner;
        let fresh_huge_pages = i.fresh_huge_pages.load(Ordering::Relaxed);
        let pool_bytes = i.pool_bytes.load(Ordering::Relaxed);
        let pool_huge_pages = i
            .pool
            .as_ref()
            .is_some_and(|p| p.region.segment().huge_pages());
        let pool_huge_in_use = if pool_huge_pages {
            i.pool.as_ref().map_or(0, |p| {
                // Huge pages that hold at least one page of a live segment.
                let free = lock(&p.pages);
                let mut busy = 0;
                let mut next = 0;
                let total = p.area.len / DSM_PAGE_SIZE;
                let per_huge = HUGE_PAGE_SIZE / DSM_PAGE_SIZE;
                let mut count_busy = |from: usize, to: usize| {
                    if from < to {
                        let first = from / per_huge;
                        let last = (to - 1) / per_huge;
                        busy += last - first + 1;
                    }
                };
                for (s, n) in free.iter() {
                    count_busy(next, s);
                    next = s + n;
                }
                count_busy(next, total);
                busy.min(p.area.len / HUGE_PAGE_SIZE)
            })
        } else {
            0
        };
        DsmStats {
            pool_size: i.pool.as_ref().map_or(0, |p| p.area.len),
            pool_huge_pages,
            pool_segments_created: i.pool_created.load(Ordering::Relaxed),
            fresh_segments_created: i.fresh_created.load(Ordering::Relaxed),
            pool_bytes,
            fresh_bytes: i.fresh_bytes.load(Ordering::Relaxed),
            fresh_huge_pages,
            huge_pages_in_use: fresh_huge_pages + pool_huge_in_use,
        }
    }

    /// Free pages of the pool and the number of free runs (tests, monitoring).
    pub fn pool_free(&self) -> (usize, usize) {
        self.inner.pool.as_ref().map_or((0, 0), |p| {
            let f = lock(&p.pages);
            (f.free_pages() * DSM_PAGE_SIZE, f.runs())
        })
    }
}

impl fmt::Debug for Dsm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dsm").field("stats", &self.stats()).finish()
    }
}

impl DsmSegment {
    pub fn handle(&self) -> DsmHandle {
        self.handle
    }

    /// Base address in this process.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn from_pool(&self) -> bool {
        matches!(self.backing, Backing::Pool { .. })
    }

    /// Whether the segment's memory is on huge pages.
    pub fn huge_pages(&self) -> bool {
        match &self.backing {
            Backing::Fresh(s) => s.huge_pages(),
            Backing::Pool { .. } => self
                .dsm
                .pool
                .as_ref()
                .is_some_and(|p| p.region.segment().huge_pages()),
        }
    }

    /// How another process maps this segment ([`Segment::attach`]).
    pub fn attach_info(&self) -> AttachInfo {
        match &self.backing {
            Backing::Fresh(s) => s.attach_info(0, self.len),
            Backing::Pool { first_page, .. } => {
                let pool = self.dsm.pool.as_ref().expect("pool segment without pool");
                pool.region
                    .segment()
                    .attach_info(pool.area.offset + first_page * DSM_PAGE_SIZE, self.len)
            }
        }
    }
}

impl Drop for DsmSegment {
    fn drop(&mut self) {
        let inner = &self.dsm;
        let slot = self.handle.slot();
        {
            let mut st = lock(&inner.slots[slot as usize]);
            // Wrapping: after 2^32 reuses a handle could alias again; at one
            // segment per microsecond per slot that is over an hour of reuse of
            // one slot while an old handle is still held.
            st.generation = st.generation.wrapping_add(1).max(1);
            st.segment = Weak::new();
        }
        match &self.backing {
            Backing::Pool { first_page, npages } => {
                let pool = inner.pool.as_ref().expect("pool segment without pool");
                lock(&pool.pages).free(*first_page, *npages);
                inner.pool_bytes.fetch_sub(self.len, Ordering::Relaxed);
            }
            Backing::Fresh(seg) => {
                inner.fresh_bytes.fetch_sub(self.len, Ordering::Relaxed);
                if seg.huge_pages() {
                    inner
                        .fresh_huge_pages
                        .fetch_sub(seg.len() / HUGE_PAGE_SIZE, Ordering::Relaxed);
                }
            }
        }
        lock(&inner.free_slots).push(slot);
    }
}
