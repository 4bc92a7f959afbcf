//! The lock-free-lookup table ([`ChashTable`]). All `unsafe` of the crate is in
//! this module; the design and the ordering argument are in the crate doc.

use crate::stats;
use crate::sync::{fence, spin, AtomicU32, AtomicU64, Ordering};
use crate::{BufferMapping, BufferTag};
use std::any::Any;
use std::sync::Arc;

/// Entries per bucket: five 12-byte (key, value) pairs and a 4-byte header
/// fill one 64-byte cache line.
pub const SLOTS: usize = 5;
/// Home buckets per entry of capacity: `capacity / 3` buckets of five slots
/// keep the table at most 60 % full, so fewer than one bucket in ten
/// overflows into its neighbour.
const ENTRIES_PER_BUCKET: usize = 3;

/// Header word: bit 0 = locked, bits 1..24 = sequence, bits 24..32 = overflow count.
const LOCKED: u32 = 1;
const SEQ_MASK: u32 = 0x00ff_ffff;
const OVF_SHIFT: u32 = 24;
const OVF_STICKY: u32 = 0xff;

/// Value word: bits 0..29 = buffer id + 1 (0 = empty slot), bits 29..32 = fork.
const ID_BITS: u32 = 29;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// Largest buffer id the table can hold.
pub const MAX_BUFFER_ID: u32 = ID_MASK - 1;

#[cfg_attr(loom, allow(dead_code))]
const MAGIC: u64 = 0x7475_736b_6368_3031; // "tuskch01"

/// One cache line of the table.
#[repr(C, align(64))]
struct Bucket {
    hdr: AtomicU32,
    vals: [AtomicU32; SLOTS],
    keys: [AtomicU64; SLOTS],
}

#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Bucket>() == 64);

/// Table geometry, stored at the start of the table's memory so that another
/// process can attach to it.
#[repr(C, align(64))]
struct Meta {
    magic: u64,
    capacity: u64,
    /// Buckets a key can hash to.
    home: u64,
    /// `home` plus the overflow tail past the last home bucket.
    total: u64,
}

fn geometry(capacity: usize) -> (usize, usize) {
    let home = capacity.div_ceil(ENTRIES_PER_BUCKET).max(1);
    (home, home + tail_len(home))
}

fn tail_len(home: usize) -> usize {
    // Loom models use tiny tables; fewer buckets keep them fast.
    if cfg!(loom) {
        2
    } else {
        8 + home / 64
    }
}

#[inline]
fn ovf(hdr: u32) -> u32 {
    hdr >> OVF_SHIFT
}

#[inline]
fn ovf_inc(o: u32) -> u32 {
    if o == OVF_STICKY {
        o
    } else {
        o + 1
    }
}

#[inline]
fn ovf_dec(o: u32) -> u32 {
    debug_assert!(o > 0, "overflow count underflow");
    if o == OVF_STICKY {
        o
    } else {
        o - 1
    }
}

/// (key word, fork bits of the value word) of a tag.
#[inline]
fn encode(tag: &BufferTag) -> (u64, u32) {
    (
        (tag.rel as u64) << 32 | tag.block as u64,
        (tag.fork as u32) << ID_BITS,
    )
}

impl Bucket {
    fn new() -> Bucket {
        Bucket {
            hdr: AtomicU32::new(0),
            vals: std::array::from_fn(|_| AtomicU32::new(0)),
            keys: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Slot scan shared by readers and writers; loads are relaxed, the caller
    /// provides the ordering (seqlock validation or the bucket lock).
    #[inline(always)]
    fn scan(&self, kw: u64, fv: u32) -> Option<(usize, u32)> {
        let mut found = None;
        for i in 0..SLOTS {
            let v = self.vals[i].load(Ordering::Relaxed);
            let k = self.keys[i].load(Ordering::Relaxed);
            if k == kw && v & !ID_MASK == fv && v & ID_MASK != 0 {
                found = Some((i, (v & ID_MASK) - 1));
            }
        }
        found
    }

    /// Lock-free read: a consistent snapshot's answer for the key, and the
    /// header word (with the overflow count) it was taken under.
    #[inline]
    fn read(&self, kw: u64, fv: u32) -> (Option<u32>, u32) {
        loop {
            let s1 = self.hdr.load(Ordering::Acquire);
            if s1 & LOCKED != 0 {
                stats::retry();
                spin();
                continue;
            }
            let found = self.scan(kw, fv);
            // Orders the slot loads above before the re-check below.
            fence(Ordering::Acquire);
            let s2 = self.hdr.load(Ordering::Relaxed);
            if s1 == s2 {
                return (found.map(|(_, id)| id), s1);
            }
            stats::retry();
            spin();
        }
    }

    /// Takes the bucket's writer lock; returns the header as it was.
    fn lock(&self) -> u32 {
        loop {
            let s = self.hdr.fetch_or(LOCKED, Ordering::Acquire);
            if s & LOCKED == 0 {
                // Orders the odd header before our slot stores: a reader that
                // sees any of them will see the header changed.
                fence(Ordering::Release);
                return s;
            }
            // Writers of one bucket rarely meet, so plain test-and-set with a
            // pause is enough (and an RMW always sees the latest header,
            // which keeps the loom models' paths short).
            spin();
        }
    }

    /// Releases the lock after changing the bucket: a new sequence number
    /// and overflow count `o`.
    fn unlock_changed(&self, old: u32, o: u32) {
        let seq = (old & SEQ_MASK).wrapping_add(2) & SEQ_MASK;
        self.hdr.store(seq | (o << OVF_SHIFT), Ordering::Release);
    }

    /// Releases the lock without having changed anything: the old header
    /// comes back, so concurrent readers need not retry.
    fn unlock_unchanged(&self, old: u32) {
        self.hdr.store(old, Ordering::Release);
    }

    /// A free slot; only under the lock.
    fn free_slot(&self) -> Option<usize> {
        (0..SLOTS).find(|&i| self.vals[i].load(Ordering::Relaxed) & ID_MASK == 0)
    }
}

/// The lock-free-lookup buffer mapping table; see the crate doc.
///
/// A `ChashTable` is a process-local handle on table memory that may be
/// shared with other handles and processes. It keeps that memory alive
/// through `owner`.
pub struct ChashTable {
    buckets: *const Bucket,
    home: u64,
    total: usize,
    capacity: usize,
    _owner: Arc<dyn Any + Send + Sync>,
}

// SAFETY: the handle points at memory kept alive by `_owner`; everything
// shared behind the pointer is atomics, accessed by the protocol in the crate
// doc, so handles may move to and be used from any thread.
unsafe impl Send for ChashTable {}
// SAFETY: as for `Send`.
unsafe impl Sync for ChashTable {}

/// Heap memory for a table outside shared memory (tests, benchmarks).
#[cfg(not(loom))]
struct HeapMem {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

// SAFETY: the block is only accessed through the table's atomics.
#[cfg(not(loom))]
unsafe impl Send for HeapMem {}
// SAFETY: as for `Send`.
#[cfg(not(loom))]
unsafe impl Sync for HeapMem {}

#[cfg(not(loom))]
impl Drop for HeapMem {
    fn drop(&mut self) {
        // SAFETY: allocated in `ChashTable::with_heap` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

impl ChashTable {
    /// Bytes of memory (aligned to 64) a table for `capacity` entries needs.
    pub fn layout_size(capacity: usize) -> usize {
        let (_, total) = geometry(capacity);
        std::mem::size_of::<Meta>() + total * std::mem::size_of::<Bucket>()
    }

    /// Initialises a table for `capacity` entries in `len` bytes at `base`
    /// and returns a handle on it.
    ///
    /// # Safety
    ///
    /// `base` must be 64-byte aligned and valid for reads and writes of `len`
    /// bytes for as long as `owner` lives, `len >= layout_size(capacity)`,
    /// and nothing else may use the memory during initialisation.
    #[cfg(not(loom))]
    pub unsafe fn init(
        base: *mut u8,
        len: usize,
        capacity: usize,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> ChashTable {
        assert!(len >= Self::layout_size(capacity), "table memory too small");
        assert_eq!(
            base as usize % 64,
            0,
            "table memory must be 64-byte aligned"
        );
        let (home, total) = geometry(capacity);
        // SAFETY: the caller guarantees the memory is ours, aligned and large
        // enough for the Meta block followed by `total` buckets.
        unsafe {
            base.cast::<Meta>().write(Meta {
                magic: MAGIC,
                capacity: capacity as u64,
                home: home as u64,
                total: total as u64,
            });
            let buckets = base.add(std::mem::size_of::<Meta>()).cast::<Bucket>();
            for i in 0..total {
                buckets.add(i).write(Bucket::new());
            }
        }
        // SAFETY: initialised just above; the caller's guarantee carries over.
        unsafe { Self::attach(base, len, owner) }
    }

    /// A handle on a table that [`ChashTable::init`] built at `base`,
    /// possibly in another process and at another address.
    ///
    /// # Safety
    ///
    /// `base` must be valid for `len` bytes for as long as `owner` lives and
    /// hold a table initialised by `init` (which this checks loosely).
    #[cfg(not(loom))]
    pub unsafe fn attach(
        base: *mut u8,
        len: usize,
        owner: Arc<dyn Any + Send + Sync>,
    ) -> ChashTable {
        assert_eq!(
            base as usize % 64,
            0,
            "table memory must be 64-byte aligned"
        );
        assert!(len >= std::mem::size_of::<Meta>());
        // SAFETY: the caller guarantees an initialised table at `base`; Meta
        // is plain integers written once before any handle exists.
        let meta = unsafe { &*base.cast::<Meta>() };
        assert_eq!(meta.magic, MAGIC, "no buffer mapping table at this address");
        let total = meta.total as usize;
        assert!(len >= std::mem::size_of::<Meta>() + total * std::mem::size_of::<Bucket>());
        ChashTable {
            // SAFETY: inside the `len` bytes checked above.
            buckets: unsafe { base.add(std::mem::size_of::<Meta>()) }.cast(),
            home: meta.home,
            total,
            capacity: meta.capacity as usize,
            _owner: owner,
        }
    }

    /// A table for `capacity` entries in process-local heap memory.
    pub fn with_capacity(capacity: usize) -> ChashTable {
        Self::with_heap(capacity)
    }

    #[cfg(not(loom))]
    fn with_heap(capacity: usize) -> ChashTable {
        let len = Self::layout_size(capacity);
        let layout = std::alloc::Layout::from_size_align(len, 64).expect("table layout");
        // SAFETY: `layout` has a non-zero size (the Meta block).
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let owner = Arc::new(HeapMem { ptr, layout });
        // SAFETY: a fresh, aligned allocation of `len` bytes owned by `owner`.
        unsafe { Self::init(ptr, len, capacity, owner) }
    }

    /// Under loom the buckets are loom objects and live in a `Vec`.
    #[cfg(loom)]
    fn with_heap(capacity: usize) -> ChashTable {
        let (home, total) = geometry(capacity);
        let v: Arc<Vec<Bucket>> = Arc::new((0..total).map(|_| Bucket::new()).collect());
        ChashTable {
            buckets: v.as_ptr(),
            home: home as u64,
            total,
            capacity,
            _owner: v,
        }
    }

    /// Entries the table was sized for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Buckets a key can hash to (the rest are the overflow tail).
    pub fn home_buckets(&self) -> usize {
        self.home as usize
    }

    #[inline(always)]
    fn bucket(&self, i: usize) -> &Bucket {
        debug_assert!(i < self.total);
        // SAFETY: `i < total` (every caller checks it or derives `i` from
        // `home_of`), the bucket array holds `total` initialised buckets kept
        // alive by `_owner`, and a bucket is all atomics.
        unsafe { &*self.buckets.add(i) }
    }

    #[inline(always)]
    fn home_of(&self, hash: u64) -> usize {
        // Multiply-shift maps the high 32 bits onto [0, home) without a division.
        (((hash >> 32) * self.home) >> 32) as usize
    }

    /// Where `tag` lives, found with the lock-free read, from bucket `from`
    /// on; returns (bucket, buffer id). Only for a writer that holds the home
    /// bucket's lock, which keeps the answer valid; `from` is past the home.
    fn find_beyond(&self, from: usize, kw: u64, fv: u32) -> Option<(usize, u32)> {
        let mut b = from;
        while b < self.total {
            let (found, hdr) = self.bucket(b).read(kw, fv);
            if let Some(id) = found {
                return Some((b, id));
            }
            if ovf(hdr) == 0 {
                return None;
            }
            b += 1;
        }
        None
    }

    /// Counts of each overflow value and of used slots, for tests: (entries,
    /// sum of overflow counts). Not safe against concurrent writers' answers.
    pub fn census(&self) -> (usize, u64) {
        let mut entries = 0;
        let mut overflow = 0;
        for b in 0..self.total {
            let bk = self.bucket(b);
            overflow += ovf(bk.hdr.load(Ordering::Acquire)) as u64;
            entries += (0..SLOTS)
                .filter(|&i| bk.vals[i].load(Ordering::Relaxed) & ID_MASK != 0)
                .count();
        }
        (entries, overflow)
    }
}

impl BufferMapping for ChashTable {
    #[inline]
    fn lookup(&self, tag: &BufferTag) -> Option<u32> {
        let (kw, fv) = encode(tag);
        let mut b = self.home_of(tag.hash());
        let mut probes = 1;
        loop {
            let (found, hdr) = self.bucket(b).read(kw, fv);
            if found.is_some() || ovf(hdr) == 0 || b + 1 == self.total {
                stats::lookup(found.is_some(), probes);
                return found;
            }
            b += 1;
            probes += 1;
        }
    }

    /// Prefetches the tag's home bucket: one line, where nine lookups in
    /// ten end.
    #[inline]
    fn prefetch(&self, tag: &BufferTag) {
        let b = self.home_of(tag.hash());
        #[cfg(target_arch = "x86_64")]
        // SAFETY: PREFETCHT0 (SSE, part of the x86-64 baseline) does not
        // access memory architecturally and cannot fault; the address is
        // that of a bucket inside the table (`home_of` < `total`).
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                self.buckets.wrapping_add(b).cast(),
            )
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = b;
    }

    fn insert(&self, tag: &BufferTag, buffer: u32) -> Result<(), u32> {
        assert!(buffer <= MAX_BUFFER_ID, "buffer id {buffer} too large");
        let (kw, fv) = encode(tag);
        let h = self.home_of(tag.hash());
        let home = self.bucket(h);
        // The home lock serialises every writer of keys that hash here, so
        // from now on `tag` cannot appear, vanish or move under us.
        let home_hdr = home.lock();
        let mut home_ovf = ovf(home_hdr);
        let existing = match home.scan(kw, fv) {
            Some((_, id)) => Some(id),
            None if home_ovf > 0 => self.find_beyond(h + 1, kw, fv).map(|(_, id)| id),
            None => None,
        };
        if let Some(id) = existing {
            home.unlock_unchanged(home_hdr);
            stats::insert(true);
            return Err(id);
        }
        let value = fv | (buffer + 1);
        let mut b = h;
        loop {
            let bk = self.bucket(b);
            let hdr = if b == h { home_hdr } else { bk.lock() };
            if let Some(i) = bk.free_slot() {
                bk.keys[i].store(kw, Ordering::Relaxed);
                bk.vals[i].store(value, Ordering::Relaxed);
                if b == h {
                    home.unlock_changed(home_hdr, home_ovf);
                } else {
                    bk.unlock_changed(hdr, ovf(hdr));
                    home.unlock_changed(home_hdr, home_ovf);
                }
                stats::insert(false);
                return Ok(());
            }
            // Full: the entry will live past `b`, so lookups must go on.
            if b == h {
                home_ovf = ovf_inc(home_ovf);
            } else {
                bk.unlock_changed(hdr, ovf_inc(ovf(hdr)));
            }
            b += 1;
            assert!(
                b < self.total,
                "buffer mapping table is full (capacity {})",
                self.capacity
            );
        }
    }

    fn remove(&self, tag: &BufferTag, buffer: u32) -> bool {
        let (kw, fv) = encode(tag);
        let h = self.home_of(tag.hash());
        let home = self.bucket(h);
        let home_hdr = home.lock();
        let at = match home.scan(kw, fv) {
            Some((_, id)) => Some((h, id)),
            None if ovf(home_hdr) > 0 => self.find_beyond(h + 1, kw, fv),
            None => None,
        };
        let Some((p, _)) = at.filter(|&(_, id)| id == buffer) else {
            home.unlock_unchanged(home_hdr);
            return false;
        };
        if p == h {
            let (i, _) = home.scan(kw, fv).expect("entry under the home lock");
            home.vals[i].store(0, Ordering::Relaxed);
            home.unlock_changed(home_hdr, ovf(home_hdr));
        } else {
            // Clear the entry first, then lower the overflow counts of the
            // buckets it had passed: a count is never below the number of
            // entries that depend on it.
            let bk = self.bucket(p);
            let hdr = bk.lock();
            let (i, _) = bk.scan(kw, fv).expect("entry under the home lock");
            bk.vals[i].store(0, Ordering::Relaxed);
            bk.unlock_changed(hdr, ovf(hdr));
            for c in h + 1..p {
                let bc = self.bucket(c);
                let hdr = bc.lock();
                bc.unlock_changed(hdr, ovf_dec(ovf(hdr)));
            }
            home.unlock_changed(home_hdr, ovf_dec(ovf(home_hdr)));
        }
        stats::delete();
        true
    }

    fn name(&self) -> &'static str {
        "chash"
    }
}
