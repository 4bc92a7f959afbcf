//! The buffer manager: a fixed pool of 8 kB page buffers in the main shared
//! region, found through the buffer mapping table and replaced by clock sweep.
//!
//! ## Shared state
//!
//! Each buffer has a descriptor in the main region (64 bytes, one cache line):
//!
//! * `tag_rel`, `tag_block`: which page the buffer holds (valid while
//!   `TAG_VALID` is set). Written only by the thread that holds the header
//!   lock and the only pin, read by anyone who holds a pin.
//! * `state`: one atomic word — reference (pin) count in bits 0..32, usage
//!   count for clock sweep in bits 32..36, flags above. `LOCKED` is the buffer
//!   header spinlock: while it is set only its holder changes `state`, and it
//!   releases the lock by storing the whole new word. Everyone else changes
//!   `state` with a CAS loop that waits for `LOCKED` to clear, so no update is
//!   lost.
//! * `content_lock`: a reader-writer lock on the page bytes (bit 31 = writer,
//!   low bits = readers). Readers of page contents hold it shared; a change to a
//!   page holds it exclusively and marks the buffer dirty.
//!
//! ## Finding a page ([`BufferPool::read_buffer`])
//!
//! 1. Look the tag up in the mapping table. The answer may be stale, so pin
//!    the buffer and re-check its tag; on a mismatch unpin and start over.
//!    If another thread is still reading the page in (`IO_IN_PROGRESS`), wait.
//! 2. On a miss, take a victim by clock sweep: the hand advances over the
//!    descriptors, decrementing usage counts of unpinned buffers, and takes the
//!    first unpinned buffer with usage 0 — pinned, with its header locked. A
//!    dirty victim is written out first, after the WAL up to its page LSN has
//!    been flushed (WAL-before-data, see `wal`).
//! 3. Insert the new tag into the mapping. If someone mapped it first, give
//!    the victim back and use theirs. Otherwise set the descriptor's tag (still
//!    under the header lock and with the only pin), release the header lock with
//!    `IO_IN_PROGRESS` set, then remove the victim's old tag from the mapping.
//!    The two mapping operations are separate, so no thread ever holds two
//!    mapping partitions at once.
//! 4. Read the block, set `VALID`, clear `IO_IN_PROGRESS`.
//!
//! Steps 1–3 (`lookup_or_claim`) and step 4 (`finish_io`) are separate so
//! that a read can be started and finished later: [`BufferPool::start_async_read`]
//! claims the buffer and hands back its page for an asynchronous read (the
//! recovery prefetcher's io_uring reads), and [`BufferPool::finish_async_read`]
//! verifies the page's checksum and ends the I/O. In between, the claimer's
//! pin keeps the buffer from being chosen as a victim and `IO_IN_PROGRESS`
//! makes every other reader of the block wait.
//!
//! ## Memory ordering
//!
//! Pinning is an acquire CAS on `state`; the tag store happens before the
//! release store that drops the header lock, so a thread that pins after that
//! release sees the new tag. Page bytes are published by the release that
//! clears `IO_IN_PROGRESS` (readers acquire it while waiting) and by the content
//! lock's release/acquire pair.

use crate::page::{self, PAGE_SIZE};
use crate::smgr::{fork_of, oid_of, rel_of, Fork, Smgr};
use crate::wal::Wal;
use crate::StorageError;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use tusk_chash::{BufferMapping, BufferTag};
use tusk_shmem::{Area, MainRegion, RegionLayout};

const REFCOUNT_MASK: u64 = 0xffff_ffff;
const USAGE_SHIFT: u32 = 32;
const USAGE_MASK: u64 = 0xf << USAGE_SHIFT;
const MAX_USAGE: u64 = 5;
const LOCKED: u64 = 1 << 40;
const DIRTY: u64 = 1 << 41;
const VALID: u64 = 1 << 42;
const TAG_VALID: u64 = 1 << 43;
const IO_IN_PROGRESS: u64 = 1 << 44;

const WRITER: u32 = 1 << 31;

/// A buffer descriptor, laid out in shared memory.
#[repr(C, align(64))]
struct BufferDesc {
    tag_rel: AtomicU32,
    tag_block: AtomicU32,
    state: AtomicU64,
    content_lock: AtomicU32,
}

/// Shared header of the pool: the clock hand.
#[repr(C, align(64))]
struct PoolHeader {
    clock_hand: AtomicU64,
}

/// Areas of the main region used by the pool.
#[derive(Debug, Clone, Copy)]
pub struct PoolLayout {
    header: Area,
    descs: Area,
    pages: Area,
    nbuffers: usize,
}

impl PoolLayout {
    /// Reserves room for `nbuffers` buffers in the main region's layout.
    pub fn reserve(layout: &mut RegionLayout, nbuffers: usize) -> PoolLayout {
        let header = layout.reserve("buffer pool header", std::mem::size_of::<PoolHeader>(), 64);
        let descs = layout.reserve(
            "buffer descriptors",
            nbuffers * std::mem::size_of::<BufferDesc>(),
            64,
        );
        let pages = layout.reserve("buffer pages", nbuffers * PAGE_SIZE, 4096);
        PoolLayout {
            header,
            descs,
            pages,
            nbuffers,
        }
    }
}

/// Counters for EXPLAIN (BUFFERS) and benchmarks.
#[derive(Debug, Default)]
pub struct PoolStats {
    pub hits: AtomicU64,
    pub reads: AtomicU64,
    pub writes: AtomicU64,
}

/// The shared buffer pool.
pub struct BufferPool {
    region: Arc<MainRegion>,
    header: *const PoolHeader,
    descs: *const BufferDesc,
    pages: *mut u8,
    nbuffers: usize,
    mapping: Box<dyn BufferMapping>,
    smgr: Arc<Smgr>,
    /// The WAL that dirty pages must respect (set once the database has
    /// finished recovery; during redo every record is already durable).
    wal: OnceLock<Arc<Wal>>,
    /// Relations created by the running transaction, whose changes are not
    /// logged: their pages are written and fsynced at commit instead.
    unlogged: RwLock<HashSet<u32>>,
    /// Heap pages with room (filled by VACUUM, used by inserts).
    pub fsm: crate::fsm::FreeSpaceMap,
    /// See [`BufferPool::relation_mutex`].
    rel_mutexes: std::sync::Mutex<std::collections::HashMap<u32, Arc<std::sync::Mutex<()>>>>,
    pub stats: PoolStats,
    /// Each btree's root as scans last read it (see `btree::rootcache`).
    pub(crate) btree_roots: crate::btree::rootcache::RootCache,
}

// SAFETY: the raw pointers point into the main region, which `region` keeps
// alive; all shared state behind them is atomics or page bytes guarded by the
// content lock protocol described in the module doc.
unsafe impl Send for BufferPool {}
// SAFETY: as for `Send`.
unsafe impl Sync for BufferPool {}

impl BufferPool {
    /// Attaches the pool to its areas of a freshly created (zeroed) region.
    pub fn new(
        region: Arc<MainRegion>,
        layout: PoolLayout,
        mapping: Box<dyn BufferMapping>,
        smgr: Arc<Smgr>,
    ) -> BufferPool {
        assert!(layout.nbuffers > 0 && layout.nbuffers < u32::MAX as usize);
        let header = region.area_ptr(layout.header) as *const PoolHeader;
        let descs = region.area_ptr(layout.descs) as *const BufferDesc;
        let pages = region.area_ptr(layout.pages);
        assert_eq!(descs as usize % std::mem::align_of::<BufferDesc>(), 0);
        // A zeroed descriptor is a free buffer: no tag, no pins, no flags.
        BufferPool {
            region,
            header,
            descs,
            pages,
            nbuffers: layout.nbuffers,
            mapping,
            smgr,
            wal: OnceLock::new(),
            unlogged: RwLock::new(HashSet::new()),
            fsm: Default::default(),
            rel_mutexes: Default::default(),
            stats: PoolStats::default(),
            btree_roots: Default::default(),
        }
    }

    /// Attaches the WAL: from now on a page is written only after the WAL up
    /// to its LSN is durable, and page changes are logged.
    pub fn set_wal(&self, wal: Arc<Wal>) {
        let _ = self.wal.set(wal);
    }

    /// The WAL page changes are logged to (none during recovery and in
    /// pools built without one).
    #[inline]
    pub fn wal(&self) -> Option<&Wal> {
        self.wal.get().map(|w| &**w)
    }

    /// The WAL page changes of `rel` must be logged to: none for a relation
    /// created by the running transaction (see [`BufferPool::set_unlogged`]).
    #[inline]
    pub fn wal_for(&self, rel: u32) -> Option<&Wal> {
        let wal = self.wal()?;
        let unlogged = self.unlogged.read().unwrap_or_else(|e| e.into_inner());
        (unlogged.is_empty() || !unlogged.contains(&oid_of(rel))).then_some(wal)
    }

    /// Stops (or resumes) logging changes to `rel`. Only for a relation
    /// created by the running transaction, whose commit then writes and
    /// fsyncs the relation (see `Database::commit`) before its commit record.
    /// Covers all the relation's forks.
    pub fn set_unlogged(&self, rel: u32, unlogged: bool) {
        let mut set = self.unlogged.write().unwrap_or_else(|e| e.into_inner());
        if unlogged {
            set.insert(rel);
        } else {
            set.remove(&rel);
        }
    }

    /// Writes out every dirty buffer of relation `rel` (of all its forks,
    /// for a main fork).
    pub fn flush_relation(&self, rel: u32) -> Result<(), StorageError> {
        self.flush_matching(|d| of_relation(d.tag_rel.load(Ordering::Relaxed), rel))
    }

    /// Whether block `block` of `rel` is in the pool (a hint: it may be
    /// evicted right after the answer).
    pub fn is_cached(&self, rel: u32, block: u32) -> bool {
        self.mapping.lookup(&BufferTag::new(rel, block)).is_some()
    }

    /// Returns the buffer for block `block` of `rel`, pinned, for WAL redo.
    /// With `will_init` the block is not read from disk when it is not
    /// cached (redo is about to overwrite the whole page); its bytes are
    /// then zero.
    pub fn read_buffer_for_redo(
        &self,
        rel: u32,
        block: u32,
        will_init: bool,
    ) -> Result<PinnedBuffer<'_>, StorageError> {
        self.get_buffer(BufferTag::new(rel, block), will_init)
    }

    /// Returns the buffer for block `block` of `rel`, pinned, for a caller
    /// about to overwrite the whole page (a columnar row group written into
    /// free blocks): an uncached block is not read, its bytes are zero.
    pub fn buffer_to_overwrite(
        &self,
        rel: u32,
        block: u32,
    ) -> Result<PinnedBuffer<'_>, StorageError> {
        self.get_buffer(BufferTag::new(rel, block), true)
    }

    pub fn nbuffers(&self) -> usize {
        self.nbuffers
    }

    /// The memory holding every buffer's page (address and length), for
    /// registering it with an I/O interface once (io_uring fixed buffers)
    /// instead of per read. Its bytes belong to the buffer protocol: a
    /// page may only be written through a claimed read ([`AsyncRead`]).
    pub fn page_memory(&self) -> (*mut u8, usize) {
        (self.pages, self.nbuffers * PAGE_SIZE)
    }

    pub fn mapping_name(&self) -> &'static str {
        self.mapping.name()
    }

    pub fn huge_pages_status(&self) -> &'static str {
        self.region.huge_pages_status()
    }

    /// Length of relation `rel` in blocks.
    pub fn nblocks(&self, rel: u32) -> Result<u32, StorageError> {
        self.smgr.nblocks(rel)
    }

    #[inline]
    fn desc(&self, id: u32) -> &BufferDesc {
        debug_assert!((id as usize) < self.nbuffers);
        // SAFETY: `id < nbuffers`, the descriptor array holds `nbuffers`
        // aligned descriptors inside the live region, and all fields are atomics.
        unsafe { &*self.descs.add(id as usize) }
    }

    #[inline]
    fn page_ptr(&self, id: u32) -> *mut u8 {
        // SAFETY: `id < nbuffers`, so the page lies inside the pages area.
        unsafe { self.pages.add(id as usize * PAGE_SIZE) }
    }

    fn header(&self) -> &PoolHeader {
        // SAFETY: the header area is sized and aligned for `PoolHeader`, all atomics.
        unsafe { &*self.header }
    }

    /// Applies `f` to the state word with a CAS loop that waits while the
    /// header is locked. `f` returns `None` to give up without a change.
    fn update_state(&self, id: u32, mut f: impl FnMut(u64) -> Option<u64>) -> Option<u64> {
        let st = &self.desc(id).state;
        let mut cur = st.load(Ordering::Relaxed);
        loop {
            if cur & LOCKED != 0 {
                std::hint::spin_loop();
                cur = st.load(Ordering::Relaxed);
                continue;
            }
            let new = f(cur)?;
            match st.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(new),
                Err(actual) => cur = actual,
            }
        }
    }

    fn pin(&self, id: u32) -> u64 {
        self.update_state(id, |s| {
            let usage = ((s & USAGE_MASK) >> USAGE_SHIFT).min(MAX_USAGE - 1) + 1;
            Some(((s + 1) & !USAGE_MASK) | (usage << USAGE_SHIFT))
        })
        .expect("pin never gives up")
    }

    fn unpin(&self, id: u32) {
        self.update_state(id, |s| {
            debug_assert!(s & REFCOUNT_MASK > 0, "unpin of an unpinned buffer");
            Some(s - 1)
        });
    }

    /// Locks the header of a buffer; returns the state word as it was.
    fn lock_header(&self, id: u32) -> u64 {
        let st = &self.desc(id).state;
        loop {
            let old = st.fetch_or(LOCKED, Ordering::Acquire);
            if old & LOCKED == 0 {
                return old;
            }
            while st.load(Ordering::Relaxed) & LOCKED != 0 {
                std::hint::spin_loop();
            }
        }
    }

    fn unlock_header(&self, id: u32, new_state: u64) {
        self.desc(id)
            .state
            .store(new_state & !LOCKED, Ordering::Release);
    }

    fn tag_of(&self, id: u32) -> BufferTag {
        let d = self.desc(id);
        BufferTag::new(
            d.tag_rel.load(Ordering::Relaxed),
            d.tag_block.load(Ordering::Relaxed),
        )
    }

    /// Clock sweep: returns an unpinned, usage-0 buffer, pinned once, header locked,
    /// together with its state word.
    fn clock_sweep(&self) -> Result<(u32, u64), StorageError> {
        let n = self.nbuffers as u64;
        let mut tries = 0u64;
        loop {
            let id = (self.header().clock_hand.fetch_add(1, Ordering::Relaxed) % n) as u32;
            let st = &self.desc(id).state;
            let s = st.load(Ordering::Relaxed);
            if s & (LOCKED | REFCOUNT_MASK) == 0 {
                if s & USAGE_MASK != 0 {
                    let _ = st.compare_exchange(
                        s,
                        s - (1 << USAGE_SHIFT),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                } else if st
                    .compare_exchange(s, (s | LOCKED) + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    return Ok((id, s + 1));
                }
            }
            tries += 1;
            if tries > n * (MAX_USAGE + 2) {
                return Err(StorageError::Other("no unpinned buffers available".into()));
            }
        }
    }

    /// A hint that block `block` of `rel` will be read soon: starts loading
    /// the buffer mapping table's entry for it into the CPU cache (see
    /// `BufferMapping::prefetch`), so that a caller who knows its next block
    /// (VACUUM walking a heap or a btree's leaf level) does not wait for that
    /// cache miss in `read_buffer`.
    pub fn prefetch_mapping(&self, rel: u32, block: u32) {
        self.mapping.prefetch(&BufferTag::new(rel, block));
    }

    /// Returns the buffer holding block `block` of relation `rel`, pinned.
    pub fn read_buffer(&self, rel: u32, block: u32) -> Result<PinnedBuffer<'_>, StorageError> {
        self.get_buffer(BufferTag::new(rel, block), false)
    }

    /// Extends relation `rel` by one block and returns it pinned, formatted as
    /// an empty page and marked dirty. Another session may have found the
    /// new block as the relation's last one and used it already (it reads
    /// as zeroes from the file): then it is left as it is.
    pub fn new_page(&self, rel: u32) -> Result<PinnedBuffer<'_>, StorageError> {
        let block = self.smgr.extend(rel)?;
        let buf = self.get_buffer(BufferTag::new(rel, block), true)?;
        {
            let mut g = buf.lock_exclusive();
            if page::is_new(g.page()) {
                page::init(g.page_mut());
            }
        }
        Ok(buf)
    }

    /// A mutex for relation `rel` (btree insertions into one index take it;
    /// see `btree`).
    pub fn relation_mutex(&self, rel: u32) -> Arc<std::sync::Mutex<()>> {
        self.rel_mutexes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(rel)
            .or_default()
            .clone()
    }

    fn get_buffer(
        &self,
        tag: BufferTag,
        new_block: bool,
    ) -> Result<PinnedBuffer<'_>, StorageError> {
        let id = match self.lookup_or_claim(tag)? {
            Lookup::Cached(buf) => return Ok(buf),
            Lookup::Claimed(id) => id,
        };
        // SAFETY: we hold the only pin and IO_IN_PROGRESS, so no one else
        // reads or writes the page bytes until we clear it.
        let page = unsafe { std::slice::from_raw_parts_mut(self.page_ptr(id), PAGE_SIZE) };
        let res = if new_block {
            page.fill(0);
            Ok(())
        } else {
            self.stats.reads.fetch_add(1, Ordering::Relaxed);
            self.smgr.read(tag.rel, tag.block, page)
        };
        self.finish_io(id, tag, res)?;
        Ok(PinnedBuffer {
            pool: self,
            id,
            block: tag.block,
        })
    }

    /// Finds the buffer of `tag` (pinned, its page valid) or claims one for
    /// it: a victim, pinned once, mapped to `tag`, with `IO_IN_PROGRESS` set.
    /// The claimer must fill the page and call [`BufferPool::finish_io`];
    /// until then everyone else who looks the tag up waits.
    fn lookup_or_claim(&self, tag: BufferTag) -> Result<Lookup<'_>, StorageError> {
        loop {
            if let Some(id) = self.mapping.lookup(&tag) {
                self.pin(id);
                let s = self.desc(id).state.load(Ordering::Acquire);
                if s & TAG_VALID != 0 && self.tag_of(id) == tag && self.wait_io(id) {
                    self.stats.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Lookup::Cached(PinnedBuffer {
                        pool: self,
                        id,
                        block: tag.block,
                    }));
                }
                // Stale answer or failed read: let go and look again.
                self.unpin(id);
                std::thread::yield_now();
                continue;
            }
            let (victim, mut s) = self.clock_sweep()?;
            if s & DIRTY != 0 {
                // Write the old page out with the header unlocked but pinned.
                self.unlock_header(victim, s);
                let res = self.flush(victim);
                if let Err(e) = res {
                    self.unpin(victim);
                    return Err(e);
                }
                s = self.lock_header(victim);
                if s & DIRTY != 0 || s & REFCOUNT_MASK != 1 {
                    self.unlock_header(victim, s - 1);
                    continue;
                }
            }
            if s & REFCOUNT_MASK != 1 {
                // Someone pinned it through a stale lookup; choose another.
                self.unlock_header(victim, s - 1);
                continue;
            }
            if let Err(_existing) = self.mapping.insert(&tag, victim) {
                self.unlock_header(victim, s - 1);
                continue;
            }
            let old_tag = (s & TAG_VALID != 0).then(|| self.tag_of(victim));
            let d = self.desc(victim);
            d.tag_rel.store(tag.rel, Ordering::Relaxed);
            d.tag_block.store(tag.block, Ordering::Relaxed);
            let new_state = (s & REFCOUNT_MASK) | (1 << USAGE_SHIFT) | TAG_VALID | IO_IN_PROGRESS;
            self.unlock_header(victim, new_state);
            if let Some(old) = old_tag {
                self.mapping.remove(&old, victim);
            }
            return Ok(Lookup::Claimed(victim));
        }
    }

    /// Ends the I/O on a buffer claimed by [`BufferPool::lookup_or_claim`]:
    /// on success the page becomes valid and the claimer keeps its pin; on
    /// failure the tag is forgotten (the next reader tries again) and the
    /// pin is dropped.
    fn finish_io(
        &self,
        id: u32,
        tag: BufferTag,
        res: Result<(), StorageError>,
    ) -> Result<(), StorageError> {
        match res {
            Ok(()) => {
                self.update_state(id, |s| Some((s & !IO_IN_PROGRESS) | VALID));
                Ok(())
            }
            Err(e) => {
                self.mapping.remove(&tag, id);
                self.update_state(id, |s| {
                    Some((s & !(IO_IN_PROGRESS | TAG_VALID | VALID | USAGE_MASK)) - 1)
                });
                Err(e)
            }
        }
    }

    /// Starts reading block `block` of `rel` into a buffer without waiting:
    /// claims a buffer for it (`IO_IN_PROGRESS`, so anyone else who wants
    /// the block waits for this read) and returns it for the caller to fill
    /// (e.g. through io_uring) and pass to [`BufferPool::finish_async_read`].
    /// `None` when the block is already in the pool.
    pub fn start_async_read(
        &self,
        rel: u32,
        block: u32,
    ) -> Result<Option<AsyncRead<'_>>, StorageError> {
        let tag = BufferTag::new(rel, block);
        match self.lookup_or_claim(tag)? {
            Lookup::Cached(_) => Ok(None),
            Lookup::Claimed(id) => {
                self.stats.reads.fetch_add(1, Ordering::Relaxed);
                Ok(Some(AsyncRead {
                    pool: self,
                    id,
                    tag,
                }))
            }
        }
    }

    /// Completes a read started with [`BufferPool::start_async_read`], given
    /// the number of bytes that arrived in its page (or the I/O error). The
    /// page's checksum is verified here; a short read or a bad checksum is
    /// an error and leaves the block unread, for the next reader to retry.
    pub fn finish_async_read(
        &self,
        read: AsyncRead<'_>,
        result: std::io::Result<usize>,
    ) -> Result<(), StorageError> {
        let (id, tag) = (read.id, read.tag);
        std::mem::forget(read);
        let res = match result {
            Ok(PAGE_SIZE) => {
                // SAFETY: the read is over and we hold IO_IN_PROGRESS and the
                // only pin, so no one else touches the page.
                let page = unsafe { std::slice::from_raw_parts(self.page_ptr(id), PAGE_SIZE) };
                self.smgr.verify_page(tag.rel, tag.block, page)
            }
            Ok(n) => Err(StorageError::Other(format!(
                "could not read block {} in file \"{}\": read only {n} of {PAGE_SIZE} bytes",
                tag.block,
                self.smgr.path(tag.rel).display()
            ))),
            Err(e) => Err(StorageError::io(
                format!(
                    "could not read block {} in file \"{}\"",
                    tag.block,
                    self.smgr.path(tag.rel).display()
                ),
                e,
            )),
        };
        self.finish_io(id, tag, res)?;
        self.unpin(id);
        Ok(())
    }

    /// Waits until no read is in progress; returns whether the page is valid.
    fn wait_io(&self, id: u32) -> bool {
        let st = &self.desc(id).state;
        let mut spins = 0u32;
        loop {
            let s = st.load(Ordering::Acquire);
            if s & IO_IN_PROGRESS == 0 {
                return s & VALID != 0;
            }
            spins += 1;
            if spins < 100 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    fn lock_content_shared(&self, id: u32) {
        let l = &self.desc(id).content_lock;
        let mut cur = l.load(Ordering::Relaxed);
        loop {
            if cur & WRITER != 0 {
                std::thread::yield_now();
                cur = l.load(Ordering::Relaxed);
                continue;
            }
            match l.compare_exchange_weak(cur, cur + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return,
                Err(a) => cur = a,
            }
        }
    }

    fn unlock_content_shared(&self, id: u32) {
        self.desc(id).content_lock.fetch_sub(1, Ordering::Release);
    }

    fn lock_content_exclusive(&self, id: u32) {
        let l = &self.desc(id).content_lock;
        while l
            .compare_exchange_weak(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
    }

    fn unlock_content_exclusive(&self, id: u32) {
        self.desc(id).content_lock.store(0, Ordering::Release);
    }

    /// Writes a pinned buffer's page out if it is dirty.
    fn flush(&self, id: u32) -> Result<(), StorageError> {
        self.lock_content_shared(id);
        let was_dirty = self
            .update_state(id, |s| (s & DIRTY != 0).then_some(s & !DIRTY))
            .is_some();
        let mut res = Ok(());
        if was_dirty {
            let tag = self.tag_of(id);
            let mut copy = [0u8; PAGE_SIZE];
            let copy = &mut copy;
            // SAFETY: we hold the content lock shared, so no one modifies the page.
            copy.copy_from_slice(unsafe {
                std::slice::from_raw_parts(self.page_ptr(id), PAGE_SIZE)
            });
            // WAL-before-data: the record that made the page look like this
            // must be durable before the page can reach the file.
            let lsn = page::lsn(copy);
            if let (Some(wal), true) = (self.wal(), lsn != 0) {
                res = wal.flush(lsn);
            }
            if res.is_ok() {
                page::set_checksum(copy, tag.block);
                res = self.smgr.write(tag.rel, tag.block, copy);
            }
            if res.is_err() {
                self.update_state(id, |s| Some(s | DIRTY));
            } else {
                self.stats.writes.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.unlock_content_shared(id);
        res
    }

    /// Writes out dirty buffers that clock sweep is about to reach, so that
    /// the thread that needs a free buffer finds a clean one and does not
    /// have to write (PostgreSQL's background writer does this). Looks at up
    /// to `scan` buffers ahead of the clock hand and writes those that are
    /// dirty, unpinned and used at most once since the hand last passed (the
    /// ones the next sweep will take). Returns how many it wrote.
    pub fn clean_ahead(&self, scan: usize) -> Result<usize, StorageError> {
        let n = self.nbuffers as u64;
        let hand = self.header().clock_hand.load(Ordering::Relaxed);
        let mut written = 0;
        for i in 0..(scan as u64).min(n) {
            let id = ((hand + i) % n) as u32;
            let s = self.desc(id).state.load(Ordering::Relaxed);
            let soon = (s & USAGE_MASK) >> USAGE_SHIFT <= 1;
            if s & (DIRTY | VALID) != DIRTY | VALID || s & REFCOUNT_MASK != 0 || !soon {
                continue;
            }
            // Pin without counting a use: the buffer should stay a victim.
            self.update_state(id, |s| Some(s + 1));
            let s = self.desc(id).state.load(Ordering::Acquire);
            let res = if s & VALID != 0 && s & DIRTY != 0 {
                written += 1;
                self.flush(id)
            } else {
                Ok(())
            };
            self.unpin(id);
            res?;
        }
        Ok(written)
    }

    /// Writes out every dirty buffer (at checkpoint and shutdown).
    pub fn flush_all(&self) -> Result<(), StorageError> {
        self.flush_matching(|_| true)
    }

    fn flush_matching(&self, wanted: impl Fn(&BufferDesc) -> bool) -> Result<(), StorageError> {
        for id in 0..self.nbuffers as u32 {
            let s = self.desc(id).state.load(Ordering::Relaxed);
            if s & DIRTY == 0 || s & VALID == 0 || !wanted(self.desc(id)) {
                continue;
            }
            self.pin(id);
            let s = self.desc(id).state.load(Ordering::Acquire);
            let res = if s & VALID != 0 && wanted(self.desc(id)) {
                self.flush(id)
            } else {
                Ok(())
            };
            self.unpin(id);
            res?;
        }
        Ok(())
    }

    /// Forgets every buffer of relation `rel` without writing it (DROP TABLE;
    /// all forks of a main fork). The caller guarantees no one uses the
    /// relation any more.
    pub fn drop_relation(&self, rel: u32) {
        self.fsm.drop_relation(rel);
        self.btree_roots.forget(rel);
        if fork_of(rel) == Fork::Main {
            self.fsm.drop_relation(rel_of(rel, Fork::ColumnarMeta));
        }
        for id in 0..self.nbuffers as u32 {
            let s = self.desc(id).state.load(Ordering::Relaxed);
            if s & TAG_VALID == 0
                || !of_relation(self.desc(id).tag_rel.load(Ordering::Relaxed), rel)
            {
                continue;
            }
            let s = self.lock_header(id);
            if s & TAG_VALID != 0 && of_relation(self.tag_of(id).rel, rel) && s & REFCOUNT_MASK == 0
            {
                let tag = self.tag_of(id);
                self.mapping.remove(&tag, id);
                self.unlock_header(id, 0);
            } else {
                self.unlock_header(id, s);
            }
        }
    }
}

/// Whether a buffer of file `tag_rel` belongs to `rel`: the same file, or
/// any fork of the relation when `rel` is a main fork.
#[inline]
fn of_relation(tag_rel: u32, rel: u32) -> bool {
    tag_rel == rel || (fork_of(rel) == Fork::Main && oid_of(tag_rel) == rel)
}

/// What [`BufferPool::lookup_or_claim`] found.
enum Lookup<'a> {
    Cached(PinnedBuffer<'a>),
    Claimed(u32),
}

/// A buffer claimed for a block whose read is under way (see
/// [`BufferPool::start_async_read`]). It holds the claimer's pin and the
/// buffer's `IO_IN_PROGRESS`; [`BufferPool::finish_async_read`] ends it.
/// Dropped unfinished, the read counts as failed — so whoever issued the read
/// must make sure the I/O is over before that (the recovery prefetcher
/// drops its ring, which waits for every request, before its reads).
pub struct AsyncRead<'a> {
    pool: &'a BufferPool,
    id: u32,
    tag: BufferTag,
}

impl AsyncRead<'_> {
    pub fn rel(&self) -> u32 {
        self.tag.rel
    }

    pub fn block(&self) -> u32 {
        self.tag.block
    }

    /// Where the block's 8 kB go: the buffer's page, aligned to 4096 bytes
    /// (so `O_DIRECT` can read straight into it).
    pub fn page_ptr(&self) -> *mut u8 {
        self.pool.page_ptr(self.id)
    }
}

impl Drop for AsyncRead<'_> {
    fn drop(&mut self) {
        let err = StorageError::Other("read abandoned".into());
        let _ = self.pool.finish_io(self.id, self.tag, Err(err));
    }
}

/// A pinned buffer; unpinned on drop. Lock it to see the page.
pub struct PinnedBuffer<'a> {
    pool: &'a BufferPool,
    id: u32,
    block: u32,
}

impl<'a> PinnedBuffer<'a> {
    pub fn block(&self) -> u32 {
        self.block
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// Asks the CPU to start loading bytes `bytes` of the page into its
    /// caches, so that a caller which pins the next page it will work on
    /// before it finishes the current one finds the next one in cache. A
    /// hint only: it takes no lock and reads nothing (a prefetch has no
    /// architectural effect), so a concurrent writer is not disturbed.
    pub fn prefetch(&self, bytes: std::ops::Range<usize>) {
        let base = self.pool.page_ptr(self.id);
        let end = bytes.end.min(PAGE_SIZE);
        for line in (bytes.start & !63..end).step_by(64) {
            prefetch(base.wrapping_add(line));
        }
    }

    /// Locks the page for reading.
    pub fn lock_shared(&self) -> PageReadGuard<'_> {
        self.pool.lock_content_shared(self.id);
        PageReadGuard { buf: self }
    }

    /// Locks the page for changing; the buffer is marked dirty when the guard drops.
    pub fn lock_exclusive(&self) -> PageWriteGuard<'_> {
        self.pool.lock_content_exclusive(self.id);
        PageWriteGuard { buf: self }
    }
}

impl Drop for PinnedBuffer<'_> {
    fn drop(&mut self) {
        self.pool.unpin(self.id);
    }
}

/// Shared access to a pinned page.
pub struct PageReadGuard<'b> {
    buf: &'b PinnedBuffer<'b>,
}

impl PageReadGuard<'_> {
    pub fn page(&self) -> &[u8] {
        // SAFETY: the buffer is pinned (so it keeps its page) and we hold the
        // content lock shared (so no one writes it) for the guard's lifetime.
        unsafe { std::slice::from_raw_parts(self.buf.pool.page_ptr(self.buf.id), PAGE_SIZE) }
    }
}

impl Drop for PageReadGuard<'_> {
    fn drop(&mut self) {
        self.buf.pool.unlock_content_shared(self.buf.id);
    }
}

/// Exclusive access to a pinned page.
pub struct PageWriteGuard<'b> {
    buf: &'b PinnedBuffer<'b>,
}

impl PageWriteGuard<'_> {
    pub fn page(&self) -> &[u8] {
        // SAFETY: pinned and exclusively locked for the guard's lifetime.
        unsafe { std::slice::from_raw_parts(self.buf.pool.page_ptr(self.buf.id), PAGE_SIZE) }
    }

    pub fn page_mut(&mut self) -> &mut [u8] {
        // SAFETY: pinned and exclusively locked; `&mut self` prevents aliasing
        // through this guard.
        unsafe { std::slice::from_raw_parts_mut(self.buf.pool.page_ptr(self.buf.id), PAGE_SIZE) }
    }
}

impl Drop for PageWriteGuard<'_> {
    fn drop(&mut self) {
        let pool = self.buf.pool;
        pool.update_state(self.buf.id, |s| Some(s | DIRTY));
        pool.unlock_content_exclusive(self.buf.id);
    }
}

/// Ask the CPU to bring the cache line holding `addr` into its caches.
#[inline(always)]
fn prefetch(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is an SSE instruction (part of the x86-64 baseline);
    // it does not access memory architecturally and cannot fault, whatever
    // the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}
