//! DSA: a dynamic shared memory allocator over DSM segments.
//!
//! An area is a growing set of DSM segments. Memory in it is named by a
//! [`DsaPointer`], 64 bits: segment index (high 24 bits) and byte offset in the
//! segment (low 40 bits). A pointer means the same thing to every participant
//! in every process; [`DsaArea::get`] turns it into an address in this one.
//! [`DsaPtr<T>`] is the typed wrapper. The null pointer is 0: segment 0 starts
//! with its page map, so no allocation ever has offset 0 there.
//!
//! ## Layout of a segment
//!
//! A segment is an array of 4 kB pages. The first pages hold the *page map*,
//! one `u32` per page: for the first page of a large allocation
//! `LARGE | npages`, for every page of a superblock `SUPERBLOCK | first page
//! of it`, and 0 elsewhere. [`DsaArea::free`] reads it to learn what a pointer
//! points into. The page map is zeroed when the segment is added (pool
//! segments are not zero) and written before the pointer is handed out.
//!
//! ## Allocating pages
//!
//! Each segment has two sources of pages: its never-used tail, handed out by a
//! lock-free compare-and-swap (`BumpPages` in `lockfree.rs`), and pages freed
//! since, in a per-segment [`FreePages`] (coalescing, best fit) under a
//! per-segment mutex. An allocation of whole pages (requests over 8 kB,
//! rounded up to pages; hash-join chunks of 32 kB or 128 kB are such) first
//! checks one area-wide counter of recycled pages (a relaxed load; zero during
//! a hash-join build, which frees nothing), then takes pages from the current
//! segment's tail with one CAS. **No lock is taken per chunk.**
//!
//! When the current segment's tail is too short, the thread takes the area's
//! grow mutex, checks that nobody grew the area meanwhile, retires the old
//! tail into the old segment's free pages, creates the next segment (from the
//! DSM pool, or fresh from the OS), zeroes its page map, publishes it in the
//! segment table and makes it current. Only threads that also need a new
//! segment wait for that mutex; every other participant keeps allocating from
//! the current segment (or from its superblocks) meanwhile, so creating a
//! segment never stalls them. Segment sizes grow geometrically (two segments
//! of each size, doubling from `initial_segment_size` up to
//! `max_segment_size`), so a 2 GB area needs about 20 segments; a request
//! larger than the next segment gets a segment of its own size.
//!
//! ## Small objects
//!
//! Requests up to 8 kB round up to one of a few size classes. Each class
//! keeps superblocks (64 kB runs of pages) holding objects of that size: a
//! header at the start, then the objects; free objects are chained through
//! their first word. A class has its own mutex (one per class, never one for
//! the area) and a list of its superblocks with free objects. The mutex is
//! dropped while a new superblock's pages are obtained, so a segment creation
//! never runs under a class lock. A superblock whose objects are all free is
//! given back to its segment's free pages.
//!
//! ## The limit
//!
//! The area's total size (sum of its segments) never exceeds
//! `max_total_size`: the last segment is cut to what remains, and a request
//! that cannot fit fails with [`ShmemError::OutOfSharedMemory`] ("out of
//! shared memory"). Freed memory is reused before the area grows only for
//! requests of whole pages if a free run is large enough.
//!
//! ## Memory ordering
//!
//! * Segment publication: the grower writes the page map and the segment's
//!   state, then stores the base in the segment table (`Release`) and the
//!   new current index (`Release`). An allocator loads `current` with
//!   `Acquire` and therefore sees the segment's state. A participant
//!   resolving a pointer got that pointer from an allocation that happened
//!   after publication, through some synchronising hand-over, so the base is
//!   visible to it too (the table loads are `Acquire` for good measure).
//! * The tail CAS is `Relaxed`: it only has to make reservations disjoint;
//!   the contents are ordered by the pointer hand-over, as in any allocator.
//! * Page-map entries are written with relaxed atomics by the allocating
//!   thread before the pointer exists and read by the freeing thread after it
//!   received the pointer; an entry is cleared before its pages go back to a
//!   mutex-protected free list, whose mutex orders it before any reuse.
//!
//! The two lock-free pieces are modelled with loom in `lockfree.rs`.

use crate::dsm::{Dsm, DsmHandle, DsmSegment, DSM_PAGE_SIZE};
use crate::freepage::FreePages;
use crate::lockfree::{BumpPages, SegmentTable};
use crate::ShmemError;
use crossbeam_utils::CachePadded;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// DSA pages, in bytes.
pub const DSA_PAGE_SIZE: usize = DSM_PAGE_SIZE;
/// Largest request served from a size class; larger ones take whole pages.
pub const MAX_SMALL_SIZE: usize = 8192;
/// Most segments an area can have.
pub const MAX_SEGMENTS: usize = 1024;

const OFFSET_BITS: u32 = 40;
const SUPERBLOCK_PAGES: usize = 16;
const SUPERBLOCK_SIZE: usize = SUPERBLOCK_PAGES * DSA_PAGE_SIZE;
const SUPERBLOCK_HEADER: usize = 64;
const LARGE: u32 = 1 << 31;
const SUPERBLOCK: u32 = 1 << 30;
const ENTRY_MASK: u32 = SUPERBLOCK - 1;

const SIZE_CLASSES: [u32; 24] = [
    16, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048,
    2560, 3072, 4096, 6144, 8192,
];

/// A position-independent pointer into a DSA area: segment index and offset.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[repr(transparent)]
pub struct DsaPointer(u64);

impl DsaPointer {
    pub const NULL: DsaPointer = DsaPointer(0);

    pub fn new(segment: usize, offset: usize) -> DsaPointer {
        assert!(segment < MAX_SEGMENTS && offset < (1usize << OFFSET_BITS));
        DsaPointer(((segment as u64) << OFFSET_BITS) | offset as u64)
    }
    pub fn segment(self) -> usize {
        (self.0 >> OFFSET_BITS) as usize
    }
    pub fn offset(self) -> usize {
        (self.0 & ((1u64 << OFFSET_BITS) - 1)) as usize
    }
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
    /// The pointer `bytes` further on in the same segment.
    pub fn offset_by(self, bytes: usize) -> DsaPointer {
        DsaPointer::new(self.segment(), self.offset() + bytes)
    }
    pub fn to_u64(self) -> u64 {
        self.0
    }
    pub fn from_u64(v: u64) -> DsaPointer {
        DsaPointer(v)
    }
}

impl fmt::Debug for DsaPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DsaPointer({}:{:#x})", self.segment(), self.offset())
    }
}

/// A [`DsaPointer`] to a `T`.
#[repr(transparent)]
pub struct DsaPtr<T> {
    raw: DsaPointer,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for DsaPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DsaPtr<T> {}
impl<T> PartialEq for DsaPtr<T> {
    fn eq(&self, o: &Self) -> bool {
        self.raw == o.raw
    }
}
impl<T> Eq for DsaPtr<T> {}
impl<T> fmt::Debug for DsaPtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

impl<T> DsaPtr<T> {
    pub const NULL: DsaPtr<T> = DsaPtr {
        raw: DsaPointer::NULL,
        _t: PhantomData,
    };
    /// Types a raw pointer; the caller promises it points at a `T`.
    pub fn from_raw(raw: DsaPointer) -> DsaPtr<T> {
        DsaPtr {
            raw,
            _t: PhantomData,
        }
    }
    pub fn raw(self) -> DsaPointer {
        self.raw
    }
    pub fn is_null(self) -> bool {
        self.raw.is_null()
    }
    /// Address of the `T` in this process (see [`DsaArea::get`]).
    pub fn get(self, area: &DsaArea) -> *mut T {
        area.get(self.raw).cast()
    }
}

/// Settings of one area.
#[derive(Debug, Clone, Copy)]
pub struct DsaConfig {
    pub initial_segment_size: usize,
    pub max_segment_size: usize,
    /// Total size of all segments (`usize::MAX`: no limit).
    pub max_total_size: usize,
    /// Create the next segment when the current one is three-quarters used,
    /// so that the switch to it costs no system call.
    pub prepare_ahead: bool,
}

impl Default for DsaConfig {
    fn default() -> Self {
        DsaConfig {
            initial_segment_size: 1 << 20,
            max_segment_size: 1 << 30,
            max_total_size: usize::MAX,
            prepare_ahead: true,
        }
    }
}

/// What an area holds, for tests and monitoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DsaStats {
    pub segments: usize,
    pub total_size: usize,
    pub pool_segments: usize,
    /// Pages handed out at least once (including page maps).
    pub touched_pages: usize,
    /// Pages freed and not yet reused.
    pub recycled_pages: usize,
    /// Pages in use: `touched - recycled - page maps`.
    pub pages_in_use: usize,
}

struct SegState {
    seg: Arc<DsmSegment>,
    map_pages: usize,
    map: *const AtomicU32,
    npages: usize,
    tail: BumpPages,
    free: Mutex<FreePages>,
    recycled: AtomicUsize,
}

// SAFETY: `map` points into `seg`, which this state keeps alive; the page
// map entries are atomics, so sharing the pointer between threads is sound.
unsafe impl Send for SegState {}
// SAFETY: as for `Send`.
unsafe impl Sync for SegState {}

impl SegState {
    fn entry(&self, page: usize) -> &AtomicU32 {
        assert!(page < self.npages);
        // SAFETY: the page map has `npages` entries (sized in `grow`) and lives
        // as long as `self.seg`, which outlives `&self`.
        unsafe { &*self.map.add(page) }
    }

    fn retire_tail(&self, area: &DsaArea) {
        let hw = self.tail.high_water();
        let rest = self.npages.saturating_sub(hw);
        if rest > 0 {
            if let Some(first) = self.tail.take(rest) {
                area.give_back(self, first, rest);
            }
        }
    }
}

#[derive(Default)]
struct ClassState {
    /// Superblocks of this class with at least one free object.
    partial: Vec<DsaPointer>,
}

/// Header at the start of a superblock (in shared memory). Its fields are
/// changed only under the class's mutex; atomics make the shared references
/// sound without `unsafe` at every use.
#[repr(C)]
struct SuperblockHeader {
    class: AtomicU32,
    capacity: AtomicU32,
    nfree: AtomicU32,
    /// Objects never handed out start here.
    next_unused: AtomicU32,
    /// Index + 1 of the first free object, 0 if none.
    free_head: AtomicU32,
    on_partial: AtomicU32,
}

/// A DSA area. Share it between threads with an `Arc`.
pub struct DsaArea {
    dsm: Dsm,
    config: DsaConfig,
    table: SegmentTable,
    segs: Box<[OnceLock<SegState>]>,
    current: CachePadded<AtomicUsize>,
    recycled_total: CachePadded<AtomicUsize>,
    grow: Mutex<()>,
    total: AtomicUsize,
    classes: Box<[CachePadded<Mutex<ClassState>>]>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl fmt::Debug for DsaArea {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DsaArea")
            .field("stats", &self.stats())
            .finish()
    }
}

impl DsaArea {
    /// Creates an area with its first segment.
    pub fn create(dsm: &Dsm, config: DsaConfig) -> Result<DsaArea, ShmemError> {
        assert!(config.initial_segment_size >= 4 * SUPERBLOCK_SIZE);
        assert!(config.max_segment_size >= config.initial_segment_size);
        assert!(config.max_segment_size < 1 << OFFSET_BITS);
        let area = DsaArea {
            dsm: dsm.clone(),
            config,
            table: SegmentTable::new(MAX_SEGMENTS),
            segs: (0..MAX_SEGMENTS).map(|_| OnceLock::new()).collect(),
            current: CachePadded::new(AtomicUsize::new(0)),
            recycled_total: CachePadded::new(AtomicUsize::new(0)),
            grow: Mutex::new(()),
            total: AtomicUsize::new(0),
            classes: SIZE_CLASSES
                .iter()
                .map(|_| CachePadded::new(Mutex::new(ClassState::default())))
                .collect(),
        };
        let _g = lock(&area.grow);
        area.add_segment(1, 1, true)?;
        drop(_g);
        Ok(area)
    }

    fn seg(&self, index: usize) -> &SegState {
        self.segs[index]
            .get()
            .expect("DSA pointer to a segment that does not exist")
    }

    /// Address in this process of the memory `p` points at.
    pub fn get(&self, p: DsaPointer) -> *mut u8 {
        let base = self.table.base(p.segment());
        assert!(!base.is_null(), "{p:?} names no segment of this area");
        // Offsets come from this area's allocations, inside the segment; a
        // forged pointer yields a wild address but dereferencing it is the
        // caller's (unsafe) business.
        base.wrapping_add(p.offset())
    }

    /// Allocates `size` bytes aligned to 16 (whole pages aligned to 4 kB for
    /// requests over [`MAX_SMALL_SIZE`]). The contents are unspecified.
    pub fn allocate(&self, size: usize) -> Result<DsaPointer, ShmemError> {
        let size = size.max(1);
        if size <= MAX_SMALL_SIZE {
            let class = SIZE_CLASSES.partition_point(|&c| (c as usize) < size);
            return self.allocate_small(class, size);
        }
        let npages = size.div_ceil(DSA_PAGE_SIZE);
        if npages as u64 >= ENTRY_MASK as u64 {
            return Err(ShmemError::OutOfSharedMemory { request: size });
        }
        let (seg, first) = self.allocate_pages(npages, size)?;
        self.seg(seg)
            .entry(first)
            .store(LARGE | npages as u32, Ordering::Relaxed);
        Ok(DsaPointer::new(seg, first * DSA_PAGE_SIZE))
    }

    /// A typed allocation of one `T` (uninitialised).
    pub fn allocate_typed<T>(&self) -> Result<DsaPtr<T>, ShmemError> {
        assert!(std::mem::align_of::<T>() <= 16);
        Ok(DsaPtr::from_raw(self.allocate(std::mem::size_of::<T>())?))
    }

    /// Returns memory from [`DsaArea::allocate`].
    pub fn free(&self, p: DsaPointer) {
        let st = self.seg(p.segment());
        let page = p.offset() / DSA_PAGE_SIZE;
        let e = st.entry(page).load(Ordering::Relaxed);
        if e & LARGE != 0 {
            assert_eq!(
                p.offset() % DSA_PAGE_SIZE,
                0,
                "free of {p:?}: not an allocation"
            );
            let n = (e & ENTRY_MASK) as usize;
            st.entry(page).store(0, Ordering::Relaxed);
            self.give_back(st, page, n);
        } else if e & SUPERBLOCK != 0 {
            let first = (e & ENTRY_MASK) as usize;
            self.free_small(p.segment(), first, p.offset() - first * DSA_PAGE_SIZE);
        } else {
            panic!("free of {p:?}: not an allocation");
        }
    }

    pub fn stats(&self) -> DsaStats {
        let mut s = DsaStats::default();
        for i in 0..self.table.count() {
            let st = self.seg(i);
            s.segments += 1;
            s.total_size += st.seg.len();
            s.pool_segments += st.seg.from_pool() as usize;
            let hw = st.tail.high_water().min(st.npages);
            let rec = lock(&st.free).free_pages();
            s.touched_pages += hw;
            s.recycled_pages += rec;
            s.pages_in_use += hw - rec - st.map_pages;
        }
        s
    }

    /// Free page runs per segment (after freeing everything, each segment
    /// should have at most one: frees coalesce).
    pub fn free_runs(&self) -> Vec<usize> {
        (0..self.table.count())
            .map(|i| lock(&self.seg(i).free).runs())
            .collect()
    }

    /// The DSM handle of segment `index` (for another participant to attach).
    pub fn segment_handle(&self, index: usize) -> Option<DsmHandle> {
        self.segs.get(index)?.get().map(|s| s.seg.handle())
    }

    pub fn segment(&self, index: usize) -> Option<&Arc<DsmSegment>> {
        self.segs.get(index)?.get().map(|s| &s.seg)
    }

    /// Returns pages to their segment. The counters (hints that let the hot
    /// path skip the free lists) change under the same lock as the list, so
    /// they never count pages that are not there.
    fn give_back(&self, st: &SegState, first: usize, n: usize) {
        let mut free = lock(&st.free);
        free.free(first, n);
        st.recycled.fetch_add(n, Ordering::Relaxed);
        self.recycled_total.fetch_add(n, Ordering::Relaxed);
    }

    fn allocate_pages(&self, n: usize, request: usize) -> Result<(usize, usize), ShmemError> {
        if self.recycled_total.load(Ordering::Relaxed) >= n {
            for i in 0..self.table.count() {
                let st = self.seg(i);
                if st.recycled.load(Ordering::Relaxed) < n {
                    continue;
                }
                let mut free = lock(&st.free);
                if let Some(first) = free.allocate(n) {
                    st.recycled.fetch_sub(n, Ordering::Relaxed);
                    self.recycled_total.fetch_sub(n, Ordering::Relaxed);
                    return Ok((i, first));
                }
            }
        }
        loop {
            let cur = self.current.load(Ordering::Acquire);
            let st = self.seg(cur);
            if let Some(first) = st.tail.take(n) {
                // Exactly one run contains the three-quarter mark: its taker
                // prepares the next segment while the others go on.
                let mark = st.npages * 3 / 4;
                if self.config.prepare_ahead && first <= mark && mark < first + n {
                    self.prepare_next(cur);
                }
                return Ok((cur, first));
            }
            let _g = lock(&self.grow);
            if self.current.load(Ordering::Acquire) != cur {
                continue; // somebody switched segments meanwhile
            }
            if self.table.count() > cur + 1 {
                self.switch_to(cur + 1); // prepared ahead: no system call
            } else {
                self.add_segment(n, request, true)?;
            }
        }
    }

    /// Creates the segment after `cur` ahead of need, unless someone is
    /// already growing the area or it exists. Failure (the limit) is left for
    /// the allocation that really needs the room to report.
    fn prepare_next(&self, cur: usize) {
        let Ok(_g) = self.grow.try_lock() else {
            return;
        };
        if self.table.count() == cur + 1 && self.current.load(Ordering::Acquire) == cur {
            let _ = self.add_segment(1, 0, false);
        }
    }

    /// Makes segment `next` current and retires the old one's tail. Called
    /// with the grow mutex held.
    fn switch_to(&self, next: usize) {
        let old = self.current.load(Ordering::Relaxed);
        self.current.store(next, Ordering::Release);
        // Nobody takes from the old segment's tail once it is not current
        // (a thread that loaded it earlier still may; retiring takes what is
        // left with the same CAS, so both cannot get the same pages).
        self.seg(old).retire_tail(self);
    }

    /// Adds a segment with room for at least `need_pages` pages, and makes it
    /// current if `make_current`. Called with the grow mutex held.
    fn add_segment(
        &self,
        need_pages: usize,
        request: usize,
        make_current: bool,
    ) -> Result<(), ShmemError> {
        let index = self.table.count();
        if index >= self.table.capacity() {
            return Err(ShmemError::OutOfSharedMemory { request });
        }
        let geometric = self
            .config
            .initial_segment_size
            .checked_shl((index / 2).min(40) as u32)
            .unwrap_or(usize::MAX)
            .min(self.config.max_segment_size);
        // Room for the page map too: 4 bytes per page, so need * 4100 / 4096.
        let need_bytes = need_pages * DSA_PAGE_SIZE;
        let with_map = |bytes: usize| {
            let pages = bytes.div_ceil(DSA_PAGE_SIZE);
            let map = (pages * 4).div_ceil(DSA_PAGE_SIZE);
            (pages + map) * DSA_PAGE_SIZE
        };
        let mut size = geometric.max(with_map(need_bytes));
        let total = self.total.load(Ordering::Relaxed);
        let remaining = self.config.max_total_size.saturating_sub(total);
        if size > remaining {
            size = remaining / DSA_PAGE_SIZE * DSA_PAGE_SIZE;
            if size < with_map(need_bytes) || size < 2 * DSA_PAGE_SIZE {
                return Err(ShmemError::OutOfSharedMemory { request });
            }
        }
        let seg = self.dsm.create(size)?;
        let npages = seg.len() / DSA_PAGE_SIZE;
        let map_pages = (npages * 4).div_ceil(DSA_PAGE_SIZE);
        let base = seg.as_ptr();
        raw::zero(base, map_pages * DSA_PAGE_SIZE, seg.len());
        let state = SegState {
            map: base.cast::<AtomicU32>(),
            map_pages,
            npages,
            tail: BumpPages::new(map_pages, npages),
            free: Mutex::new(FreePages::new()),
            recycled: AtomicUsize::new(0),
            seg,
        };
        assert!(self.segs[index].set(state).is_ok());
        self.total.fetch_add(size, Ordering::Relaxed);
        self.table.publish(index, base);
        if make_current && index > 0 {
            self.switch_to(index);
        }
        Ok(())
    }

    fn superblock(&self, sb: DsaPointer) -> &SuperblockHeader {
        raw::header(self.get(sb))
    }

    fn allocate_small(&self, class: usize, request: usize) -> Result<DsaPointer, ShmemError> {
        let size = SIZE_CLASSES[class] as usize;
        loop {
            {
                let mut cs = lock(&self.classes[class]);
                if let Some(&sb) = cs.partial.last() {
                    let h = self.superblock(sb);
                    let idx = match h.free_head.load(Ordering::Relaxed) {
                        0 => {
                            let i = h.next_unused.load(Ordering::Relaxed);
                            h.next_unused.store(i + 1, Ordering::Relaxed);
                            i
                        }
                        head => {
                            let obj = self.get(sb.offset_by(object_offset(head - 1, size)));
                            h.free_head
                                .store(raw::word(obj).load(Ordering::Relaxed), Ordering::Relaxed);
                            head - 1
                        }
                    };
                    let nfree = h.nfree.load(Ordering::Relaxed) - 1;
                    h.nfree.store(nfree, Ordering::Relaxed);
                    if nfree == 0 {
                        cs.partial.pop();
                        h.on_partial.store(0, Ordering::Relaxed);
                    }
                    return Ok(sb.offset_by(object_offset(idx, size)));
                }
            }
            // No superblock with room: get one without holding the class lock.
            let (seg, first) = self.allocate_pages(SUPERBLOCK_PAGES, request)?;
            let st = self.seg(seg);
            for p in first..first + SUPERBLOCK_PAGES {
                st.entry(p)
                    .store(SUPERBLOCK | first as u32, Ordering::Relaxed);
            }
            let sb = DsaPointer::new(seg, first * DSA_PAGE_SIZE);
            let h = self.superblock(sb);
            let capacity = ((SUPERBLOCK_SIZE - SUPERBLOCK_HEADER) / size) as u32;
            h.class.store(class as u32, Ordering::Relaxed);
            h.capacity.store(capacity, Ordering::Relaxed);
            h.nfree.store(capacity, Ordering::Relaxed);
            h.next_unused.store(0, Ordering::Relaxed);
            h.free_head.store(0, Ordering::Relaxed);
            h.on_partial.store(1, Ordering::Relaxed);
            lock(&self.classes[class]).partial.push(sb);
        }
    }

    fn free_small(&self, seg: usize, first: usize, within: usize) {
        let sb = DsaPointer::new(seg, first * DSA_PAGE_SIZE);
        let h = self.superblock(sb);
        let class = h.class.load(Ordering::Relaxed) as usize;
        let size = SIZE_CLASSES[class] as usize;
        assert!(
            within >= SUPERBLOCK_HEADER && (within - SUPERBLOCK_HEADER).is_multiple_of(size),
            "free of {:?}: not an allocation",
            sb.offset_by(within)
        );
        let idx = ((within - SUPERBLOCK_HEADER) / size) as u32;
        let mut cs = lock(&self.classes[class]);
        let obj = self.get(sb.offset_by(within));
        raw::word(obj).store(h.free_head.load(Ordering::Relaxed), Ordering::Relaxed);
        h.free_head.store(idx + 1, Ordering::Relaxed);
        let nfree = h.nfree.load(Ordering::Relaxed) + 1;
        h.nfree.store(nfree, Ordering::Relaxed);
        if nfree == h.capacity.load(Ordering::Relaxed) {
            // Empty: give its pages back to the segment.
            if h.on_partial.load(Ordering::Relaxed) != 0 {
                let pos = cs.partial.iter().rposition(|&x| x == sb).expect("on list");
                cs.partial.swap_remove(pos);
            }
            drop(cs);
            let st = self.seg(seg);
            for p in first..first + SUPERBLOCK_PAGES {
                st.entry(p).store(0, Ordering::Relaxed);
            }
            self.give_back(st, first, SUPERBLOCK_PAGES);
        } else if h.on_partial.load(Ordering::Relaxed) == 0 {
            h.on_partial.store(1, Ordering::Relaxed);
            cs.partial.push(sb);
        }
    }
}

fn object_offset(index: u32, size: usize) -> usize {
    SUPERBLOCK_HEADER + index as usize * size
}

/// The few raw-memory steps of the allocator.
mod raw {
    use super::SuperblockHeader;
    use std::sync::atomic::AtomicU32;

    /// Zeroes `len` bytes at `base` (the page map of a new segment).
    pub(super) fn zero(base: *mut u8, len: usize, seg_len: usize) {
        assert!(len <= seg_len);
        // SAFETY: `base..base+len` lies in a segment of `seg_len` bytes that
        // the caller just created and has not published, so no one else
        // accesses it.
        unsafe { std::ptr::write_bytes(base, 0, len) }
    }

    /// The header of the superblock at `p`.
    pub(super) fn header<'a>(p: *mut u8) -> &'a SuperblockHeader {
        assert_eq!(p as usize % std::mem::align_of::<SuperblockHeader>(), 0);
        // SAFETY: `p` is the start of a superblock of a live segment of the
        // area (found through the page map or just allocated), 64 bytes of
        // which are reserved for the header; the header consists of atomics,
        // so shared references from several threads are sound. The lifetime
        // is bounded by the area borrow at every call site.
        unsafe { &*p.cast::<SuperblockHeader>() }
    }

    /// The first word of a free small object (the free-list link).
    pub(super) fn word<'a>(p: *mut u8) -> &'a AtomicU32 {
        assert_eq!(p as usize % 4, 0);
        // SAFETY: `p` is a 16-aligned object of at least 16 bytes inside a
        // live superblock; while it is free (or being freed/allocated under
        // the class mutex) nobody else uses it.
        unsafe { &*p.cast::<AtomicU32>() }
    }
}
