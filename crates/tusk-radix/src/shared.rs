//! The shared TidStore: built by one participant in a DSA area, then read by
//! any number of parallel workers — threads of this process, or processes
//! that map the area's segments — without locks.
//!
//! ## Memory
//!
//! The builder is an ordinary [`TidStore`] whose [`Arena`] takes its 32 kB
//! pages from the area ([`DsaPages`]). Node pointers are arena word indexes
//! (page number and word), exactly as in the local store, so nothing stored
//! in a node is an address. Besides the pages, the area holds a `Header`,
//! allocated when the store is created so that its handle can be handed to
//! workers before the build ends, and, from publication, the *page table*:
//! the DSA pointer of every page in page-number order. A reader resolves the
//! page table once, when it opens the store, into addresses in its own
//! process; after that a lookup costs what it costs in a local store (one
//! index into a vector of page addresses per node).
//!
//! ## Publication
//!
//! [`TidStore::publish`] closes the open list, writes the page table and the
//! header's fields (root, height, counts), and then sets the header's
//! [`PublishFlag`] with a `Release` store. [`TidStore::open_shared`] loads the
//! flag with `Acquire` and refuses a store that is not published yet. The
//! release/acquire pair makes every write of the build visible to a reader
//! that saw the flag; the builder is consumed by `publish`, so nothing is
//! written afterwards, and readers use plain loads from then on. The
//! argument is modelled with loom in `publish.rs`. Another process maps the
//! same memory, so the same two atomic accesses order it there too.
//!
//! ## Failure and lifetime
//!
//! Every allocation from the area can fail ("out of shared memory"):
//! creation, [`try_add_block`](TidStore::try_add_block) and `publish` return
//! [`OutOfMemory`] then, and a failed `try_add_block` leaves the store as it
//! was. A store dropped before publication gives its memory back. A
//! published store lives until [`destroy_shared`] (after the last reader) or
//! until the area itself goes away.

use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use tusk_shmem::{DsaArea, DsaPointer, Segment};

use crate::alloc::{
    page_node, page_prefetch, page_words, Arena, NodeRead, NodeRef, OutOfMemory, PageSource,
    RelPtr, PAGE_BYTES,
};
use crate::publish::PublishFlag;
use crate::tidstore::TidStore;
use crate::tree::{RadixTree, TreeParts};

const MAGIC: u64 = 0x7475_736b_5449_4453; // "tuskTIDS"

/// The store's header in the area. Every field is an atomic so that shared
/// references to it are sound in any process; all but `flag` are written
/// and read `Relaxed`, ordered by the flag.
#[repr(C)]
struct Header {
    magic: AtomicU64,
    flag: PublishFlag,
    root: AtomicU64,
    root_shift: AtomicU64,
    keys: AtomicU64,
    nodes: [AtomicU64; 5],
    num_tids: AtomicU64,
    num_blocks: AtomicU64,
    npages: AtomicU64,
    /// DSA pointer to `npages` u64 DSA pointers, one per page.
    page_table: AtomicU64,
}

/// A published shared store: a DSA pointer to its header. Pass it to
/// workers (as a u64 to another process) and open it with
/// [`TidStore::open_shared`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedHandle(DsaPointer);

impl SharedHandle {
    pub fn to_u64(self) -> u64 {
        self.0.to_u64()
    }
    pub fn from_u64(v: u64) -> SharedHandle {
        SharedHandle(DsaPointer::from_u64(v))
    }
}

/// Why [`TidStore::open_shared`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("shared TidStore is not published yet")]
    NotPublished,
    #[error("not a shared TidStore handle")]
    BadHandle,
}

/// How a process reaches DSA memory: through the area, or through segments
/// it attached itself (another process).
pub trait DsaMap {
    /// The address of `p` in this process.
    fn resolve(&self, p: DsaPointer) -> *mut u8;
}

impl DsaMap for DsaArea {
    fn resolve(&self, p: DsaPointer) -> *mut u8 {
        self.get(p)
    }
}

/// The area's segments attached by another process, in segment order.
impl DsaMap for [Segment] {
    fn resolve(&self, p: DsaPointer) -> *mut u8 {
        self[p.segment()].as_ptr().wrapping_add(p.offset())
    }
}

/// Arena pages taken from a DSA area (see the module documentation).
pub struct DsaPages<'a> {
    area: &'a DsaArea,
    header: DsaPointer,
    pages: Vec<DsaPointer>,
    /// Set by `publish`: the pages now belong to the readers.
    published: bool,
}

/// The arena of a shared store under construction.
pub type DsaAlloc<'a> = Arena<DsaPages<'a>>;

// SAFETY: each page is a fresh allocation of PAGE_BYTES bytes from the area
// (4 kB aligned: requests above 8 kB get whole pages), zeroed here, owned by
// this source alone until it is published or dropped; the area outlives
// `'a`, so the pages stay mapped.
unsafe impl PageSource for DsaPages<'_> {
    fn grow(&mut self, pages: &mut Vec<NonNull<u64>>) -> Result<(), OutOfMemory> {
        let p = self.area.allocate(PAGE_BYTES).map_err(|_| OutOfMemory)?;
        let addr = self.area.get(p);
        // SAFETY: a fresh allocation of PAGE_BYTES bytes that nobody else
        // can name yet.
        unsafe { std::ptr::write_bytes(addr, 0, PAGE_BYTES) };
        pages.push(NonNull::new(addr.cast::<u64>()).expect("DSA address is not null"));
        self.pages.push(p);
        Ok(())
    }

    fn held_bytes(&self, _in_use: usize, _last_page_words: usize) -> usize {
        // Every page is zeroed when it is obtained: all of it is touched.
        self.pages.len() * PAGE_BYTES
    }
}

impl Drop for DsaPages<'_> {
    fn drop(&mut self) {
        if !self.published {
            for &p in &self.pages {
                self.area.free(p);
            }
            self.area.free(self.header);
        }
    }
}

impl DsaPages<'_> {
    fn header(&self) -> &Header {
        // SAFETY: `header` was allocated with Header's size (16-aligned) and
        // initialised in `new_shared`; it lives as long as the area.
        unsafe { &*self.area.get(self.header).cast::<Header>() }
    }
}

impl<'a> TidStore<DsaAlloc<'a>> {
    /// An empty store whose memory comes from `area`. Its
    /// [`handle`](Self::handle) is valid at once; readers can open it after
    /// [`publish`](Self::publish).
    pub fn new_shared(area: &'a DsaArea) -> Result<Self, OutOfMemory> {
        let header = area
            .allocate(std::mem::size_of::<Header>())
            .map_err(|_| OutOfMemory)?;
        // SAFETY: a fresh allocation of Header's size, 16-aligned (DSA
        // alignment), that nobody else can name yet. All-zero bytes are a
        // valid Header (atomics); the flag is not PUBLISHED.
        unsafe {
            let h = area.get(header);
            std::ptr::write_bytes(h, 0, std::mem::size_of::<Header>());
            (*h.cast::<Header>()).magic.store(MAGIC, Relaxed);
        }
        let source = DsaPages {
            area,
            header,
            pages: Vec::new(),
            published: false,
        };
        Ok(TidStore::with_alloc(Arena::with_source(source)))
    }

    /// The handle readers will open.
    pub fn handle(&self) -> SharedHandle {
        SharedHandle(self.tree().alloc().source().header)
    }

    /// Finish the store and make it readable (see the module documentation
    /// for the ordering argument). On failure (the area is full) the store
    /// is dropped and its memory returned.
    pub fn publish(mut self) -> Result<SharedHandle, OutOfMemory> {
        self.finish_lists()?;
        let parts = self.tree().parts();
        let (num_tids, num_blocks) = (self.len(), self.num_blocks());
        let source = self.tree_mut().alloc_mut().source_mut();
        let area = source.area;
        let table = if source.pages.is_empty() {
            DsaPointer::NULL
        } else {
            let t = area
                .allocate(source.pages.len() * 8)
                .map_err(|_| OutOfMemory)?;
            // SAFETY: a fresh allocation of one u64 per page, 16-aligned.
            let entries = unsafe {
                std::slice::from_raw_parts_mut(area.get(t).cast::<u64>(), source.pages.len())
            };
            for (e, p) in entries.iter_mut().zip(&source.pages) {
                *e = p.to_u64();
            }
            t
        };
        let h = source.header();
        h.root.store(parts.root.0, Relaxed);
        h.root_shift.store(u64::from(parts.root_shift), Relaxed);
        h.keys.store(parts.len as u64, Relaxed);
        for (a, &n) in h.nodes.iter().zip(&parts.nodes) {
            a.store(n as u64, Relaxed);
        }
        h.num_tids.store(num_tids as u64, Relaxed);
        h.num_blocks.store(num_blocks as u64, Relaxed);
        h.npages.store(source.pages.len() as u64, Relaxed);
        h.page_table.store(table.to_u64(), Relaxed);
        h.flag.publish();
        source.published = true;
        Ok(SharedHandle(source.header))
    }
}

/// A read-only view of a published shared store (see
/// [`TidStore::open_shared`]).
pub struct SharedPages<'a> {
    pages: Vec<NonNull<u64>>,
    _map: PhantomData<&'a ()>,
}

// SAFETY: the pages are read-only after publication and stay mapped for
// `'a` (the map they were resolved through is borrowed for `'a`).
unsafe impl Send for SharedPages<'_> {}
// SAFETY: as above; the view only reads.
unsafe impl Sync for SharedPages<'_> {}

impl NodeRead for SharedPages<'_> {
    #[inline(always)]
    fn words(&self, p: RelPtr) -> &[u64] {
        // SAFETY: published pages are valid for PAGE_WORDS words while the
        // map lives, and nothing writes them after publication.
        unsafe { page_words(&self.pages, p) }
    }

    #[inline(always)]
    fn node(&self, p: RelPtr) -> NodeRef<'_> {
        // SAFETY: as in `words`.
        unsafe { page_node(&self.pages, p) }
    }

    #[inline(always)]
    fn prefetch(&self, p: RelPtr, word: usize) {
        page_prefetch(&self.pages, p, word);
    }

    fn memory_usage(&self) -> usize {
        self.pages.len() * PAGE_BYTES
    }
}

/// A shared store opened for reading.
pub type SharedTidStore<'a> = TidStore<SharedPages<'a>>;

impl<'a> TidStore<SharedPages<'a>> {
    /// Open a published store for reading, without locks: through the
    /// area in this process, or through the area's segments attached by
    /// another process (`[Segment]`, in segment order).
    ///
    /// # Safety
    ///
    /// `handle` came from [`publish`](TidStore::publish) of a store in the
    /// area `map` reaches, and that store has not been destroyed
    /// ([`destroy_shared`]) nor will be while the view lives. (A handle that
    /// names no header is refused when its magic number does not match,
    /// but one pointing at arbitrary memory could be read anyway.)
    pub unsafe fn open_shared<M: DsaMap + ?Sized>(
        map: &'a M,
        handle: SharedHandle,
    ) -> Result<Self, OpenError> {
        if handle.0.is_null() {
            return Err(OpenError::BadHandle);
        }
        // SAFETY: the caller's promise: the handle names a live Header.
        let h = unsafe { &*map.resolve(handle.0).cast::<Header>() };
        if h.magic.load(Relaxed) != MAGIC {
            return Err(OpenError::BadHandle);
        }
        if !h.flag.is_published() {
            return Err(OpenError::NotPublished);
        }
        let npages = h.npages.load(Relaxed) as usize;
        let table = DsaPointer::from_u64(h.page_table.load(Relaxed));
        let entries: &[u64] = if npages == 0 {
            &[]
        } else {
            // SAFETY: published page table of `npages` entries.
            unsafe { std::slice::from_raw_parts(map.resolve(table).cast::<u64>(), npages) }
        };
        let pages = entries
            .iter()
            .map(|&e| {
                NonNull::new(map.resolve(DsaPointer::from_u64(e)).cast::<u64>())
                    .expect("mapped page is not null")
            })
            .collect();
        let parts = TreeParts {
            root: RelPtr(h.root.load(Relaxed)),
            root_shift: h.root_shift.load(Relaxed) as u32,
            len: h.keys.load(Relaxed) as usize,
            nodes: std::array::from_fn(|i| h.nodes[i].load(Relaxed) as usize),
        };
        let view = SharedPages {
            pages,
            _map: PhantomData,
        };
        Ok(TidStore::from_tree(
            RadixTree::from_parts(view, parts),
            h.num_tids.load(Relaxed) as usize,
            h.num_blocks.load(Relaxed) as usize,
        ))
    }
}

/// Give a published store's memory back to its area.
///
/// # Safety
///
/// `handle` came from [`TidStore::publish`] in `area`, no view of it is
/// open, and none will be opened.
pub unsafe fn destroy_shared(area: &DsaArea, handle: SharedHandle) {
    // SAFETY: the caller's promise: a live, published header.
    let h = unsafe { &*area.get(handle.0).cast::<Header>() };
    let npages = h.npages.load(Relaxed) as usize;
    let table = DsaPointer::from_u64(h.page_table.load(Relaxed));
    if npages > 0 {
        // SAFETY: the published page table of `npages` entries.
        let entries = unsafe { std::slice::from_raw_parts(area.get(table).cast::<u64>(), npages) };
        for &e in entries {
            area.free(DsaPointer::from_u64(e));
        }
        area.free(table);
    }
    h.magic.store(0, Relaxed);
    area.free(handle.0);
}
