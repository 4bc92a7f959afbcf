//! Node memory: the allocator abstraction and the arena behind both backends.
//!
//! Every node of the tree and every TidStore container is a run of 64-bit
//! words named by a [`RelPtr`]: a 64-bit *relative* pointer, never a Rust
//! reference or a heap address. The [`Arena`] interprets it as a word index
//! (page number << 12 | word) into its page table; the pages come from a
//! [`PageSource`] — the process heap ([`HeapPages`]) or a DSA area
//! (`shared::DsaPages`). Because nothing stored inside a node is an address,
//! a tree built in shared memory can be read by another process that maps
//! the same pages at different addresses and builds its own page table
//! (`shared::SharedPages`).
//!
//! The contract a backend must keep:
//!
//! * `alloc(words)` returns a non-null pointer to `words` contiguous words,
//!   all zero, that do not overlap any live allocation; `words` never exceeds
//!   [`MAX_ALLOC_WORDS`].
//! * `words(p)` / `words_mut(p)` return a slice that *starts* at `p` and is at
//!   least as long as the allocation (it may run on to the end of the page or
//!   segment). Callers index only within their allocation.
//! * `free(p, words)` takes back an allocation with its original size.
//! * Pointers fit in 55 bits: the TidStore packs a pointer with a 9-bit tag
//!   and length into one tree value. (Arena word indexes fit up to 256 PB.)
//! * Failure: `reserve()` is the one fallible call; after it succeeds, the
//!   allocations of one TidStore operation (at most [`OP_MAX_WORDS`]) do not
//!   fail. A source with a limit (DSA) reports a full area there.
//! * `memory_usage()` is the number of bytes the backend holds from the
//!   system for this structure — what a caller compares with
//!   `maintenance_work_mem`. It is deterministic: it depends only on the
//!   sequence of calls, never on timing or on the system allocator.

use std::ptr::NonNull;

/// A 64-bit relative pointer to an allocation; 0 is null.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPtr(pub u64);

impl RelPtr {
    pub const NULL: RelPtr = RelPtr(0);

    #[inline]
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
}

/// The largest allocation any caller makes, in words (a 256-way node is 261
/// words; a TidStore list container at most 1 + 128 * 48 / 64 = 97).
pub const MAX_ALLOC_WORDS: usize = 512;

/// Largest value a [`RelPtr`] may take (see the contract above).
pub const MAX_REL_PTR: u64 = (1 << 55) - 1;

/// The allocator could not get memory (the shared area is full).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("out of shared memory")]
pub struct OutOfMemory;

/// Reading nodes: all a finished tree needs. A read-only view of a shared
/// tree implements only this.
pub trait NodeRead {
    fn words(&self, p: RelPtr) -> &[u64];
    /// The page holding `p`, for reads of single words through
    /// [`NodeRef`]: the lookup path's cheaper [`words`](Self::words).
    fn node(&self, p: RelPtr) -> NodeRef<'_>;
    /// Bytes this structure holds (see the contract above).
    fn memory_usage(&self) -> usize;
    /// Hint that word `word` of allocation `p` will be read soon. A hint
    /// only: it may point past the allocation (a guessed position) and does
    /// nothing if the backend cannot tell an address.
    #[inline(always)]
    fn prefetch(&self, _p: RelPtr, _word: usize) {}
}

/// Where nodes live. The tree is generic over it so that each backend gets
/// its own monomorphised, fully inlined hot path.
pub trait NodeAlloc: NodeRead {
    /// Never fails once [`reserve`](Self::reserve) succeeded for the
    /// operation in progress (see [`Arena`]); a backend that cannot get
    /// memory without a reservation panics.
    fn alloc(&mut self, words: usize) -> RelPtr;
    fn free(&mut self, p: RelPtr, words: usize);
    fn words_mut(&mut self, p: RelPtr) -> &mut [u64];
    /// Make sure the allocations of one operation (at most
    /// [`OP_MAX_WORDS`] words in all) will succeed: the only point where
    /// a backend with a limit reports that it is full.
    fn reserve(&mut self) -> Result<(), OutOfMemory>;
}

/// A bound on the words one TidStore operation allocates: `add_block` may
/// write a list container (at most 90 words) and a bitmap chunk (64) and do
/// two tree inserts, each rebuilding at most one node into the next class
/// (261) and adding at most six kind-4 nodes (5 each): 745 in all.
pub const OP_MAX_WORDS: usize = 1024;

const PAGE_SHIFT: u32 = 12;
/// Words per arena page: 4096 words = 32 kB. A page is large against the
/// largest allocation (261 words, so at most 6 % of a page is ever lost at a
/// page's tail, and that tail is recycled through the free lists) and small
/// against the memory budgets a caller checks (a page is the most a limit
/// check can be off by; [`HeapPages`] even charges its small pages in 4 kB
/// steps).
pub const PAGE_WORDS: usize = 1 << PAGE_SHIFT;
/// Bytes per arena page.
pub const PAGE_BYTES: usize = PAGE_WORDS * 8;

/// Where an [`Arena`] gets its pages.
///
/// # Safety
///
/// `grow` returns pointers to pages of [`PAGE_WORDS`] zeroed, 8-aligned
/// words that overlap nothing else, that no one else reads or writes, and
/// that stay valid until the source is dropped.
pub unsafe trait PageSource {
    /// Append at least one new page to `pages`.
    fn grow(&mut self, pages: &mut Vec<NonNull<u64>>) -> Result<(), OutOfMemory>;
    /// Bytes held from the system when the arena has used the first
    /// `in_use` pages, the last of them up to word `last_page_words` (the
    /// words past it, and the pages after it, have never been written).
    /// A source whose pages the kernel backs only where they are written
    /// counts just that; others count every page obtained.
    fn held_bytes(&self, in_use: usize, last_page_words: usize) -> usize;
}

/// Pages from the system: single 32 kB pages, or, for a store
/// created with a memory limit of at least [`HUGE_MIN_LIMIT`], 2 MB runs of
/// 64 pages mapped with transparent huge pages requested. VACUUM's index
/// pass probes the store at random; with 4 kB pages nearly every probe
/// also misses the TLB (in a virtual machine a two-dimensional page walk),
/// which costs about as much as the cache miss itself (measured here: a
/// dependent random load in 16 MB took 640 ns with 4 kB pages and 420 ns
/// with huge pages, on a loaded VM). A run counts in full in `held_bytes`
/// from the moment it is mapped — the kernel backs it with one 2 MB page —
/// so a run is used only when 2 MB is at most 1/16 of the caller's limit
/// (PostgreSQL 17 sizes its TidStore's memory blocks the same way). Small
/// stores, and stores with no limit given, take 32 kB pages, each its own
/// anonymous mapping: the kernel backs a 4 kB page of it when the arena
/// first writes there, and the arena writes a page front to back, so a
/// store that has used only part of its last page (or holds a spare page
/// from [`NodeAlloc::reserve`]) is charged only the 4 kB pages written. A
/// store of a few thousand TIDs then costs what it uses, not 32 or 64 kB.
#[derive(Default)]
pub struct HeapPages {
    huge_runs: bool,
    small: Vec<memmap2::MmapMut>,
    huge: Vec<memmap2::MmapMut>,
}

/// The kernel's page size for anonymous memory, the unit in which the
/// small pages of [`HeapPages`] are charged.
const OS_PAGE: usize = 4096;

/// The smallest memory limit for which [`HeapPages`] maps 2 MB runs.
pub const HUGE_MIN_LIMIT: usize = 16 * HUGE_RUN;
const HUGE_RUN: usize = 2 << 20;

impl HeapPages {
    /// Pages for a structure that will hold at most `limit` bytes.
    pub fn for_limit(limit: usize) -> HeapPages {
        HeapPages {
            huge_runs: limit >= HUGE_MIN_LIMIT,
            ..HeapPages::default()
        }
    }
}

impl std::fmt::Debug for HeapPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HeapPages({} small, {} huge runs)",
            self.small.len(),
            self.huge.len()
        )
    }
}

// SAFETY: small pages and runs are fresh anonymous mappings (zero, page
// aligned), owned by `small` and `huge` and never moved or unmapped before
// the source is dropped (a mapping stays put when the vector grows); each
// page handed out is a whole small mapping or lies inside one run. Nothing
// else holds these buffers.
unsafe impl PageSource for HeapPages {
    fn grow(&mut self, pages: &mut Vec<NonNull<u64>>) -> Result<(), OutOfMemory> {
        if !self.huge_runs {
            let mut m = memmap2::MmapMut::map_anon(PAGE_BYTES).map_err(|_| OutOfMemory)?;
            let p = NonNull::new(m.as_mut_ptr().cast::<u64>()).expect("mapping is not null");
            pages.push(p);
            self.small.push(m);
            return Ok(());
        }
        // Twice the run, so that a 2 MB-aligned run lies inside; the rest
        // of the mapping is never touched and so never resident.
        let mut m = memmap2::MmapMut::map_anon(2 * HUGE_RUN).map_err(|_| OutOfMemory)?;
        let _ = m.advise(memmap2::Advice::HugePage); // a request, not a promise
        let skip = m.as_ptr().align_offset(HUGE_RUN);
        let run = &mut m[skip..skip + HUGE_RUN];
        for page in run.chunks_exact_mut(PAGE_BYTES) {
            let p = NonNull::new(page.as_mut_ptr().cast::<u64>()).expect("mapping is not null");
            pages.push(p);
        }
        self.huge.push(m);
        Ok(())
    }

    fn held_bytes(&self, in_use: usize, last_page_words: usize) -> usize {
        let written = match in_use {
            0 => 0,
            n => (n - 1) * PAGE_BYTES + (last_page_words * 8).next_multiple_of(OS_PAGE),
        };
        // A run is one 2 MB page the moment it is touched: count it whole.
        written.min(self.small.len() * PAGE_BYTES) + self.huge.len() * HUGE_RUN
    }
}

/// A page arena on any [`PageSource`], with one exact-size free list per
/// allocation size. Pointers are word indexes (page << 12 | word) into the
/// arena's page table; word 0 of page 0 is never handed out, so 0 can mean
/// null. Allocations never straddle pages.
///
/// Failure: a source with a limit (DSA) can fail. [`NodeAlloc::reserve`]
/// makes sure a spare page is at hand, and `alloc` takes a new page only
/// from the spares — one operation allocates at most [`OP_MAX_WORDS`]
/// words, so it crosses at most one page boundary — which is how the tree's
/// insert, which cannot fail half-way, never meets a full area.
pub struct Arena<S: PageSource> {
    source: S,
    /// The page table: page `i` starts at `pages[i]`.
    pages: Vec<NonNull<u64>>,
    /// Pages obtained from the source and not yet used (the last ones).
    in_use: usize,
    /// Next free word in the last page in use.
    bump: usize,
    /// Head of the free list for each size (grown to the largest size freed);
    /// a free chunk's first word holds the next chunk's pointer.
    free_heads: Vec<u64>,
    live_words: usize,
}

/// The local backend: an arena on the process heap.
pub type LocalAlloc = Arena<HeapPages>;

// SAFETY: the arena owns its pages exclusively (the `PageSource` contract):
// moving it to another thread moves that ownership, and shared references
// only read.
unsafe impl<S: PageSource + Send> Send for Arena<S> {}
// SAFETY: as above; `&Arena` allows reads only.
unsafe impl<S: PageSource + Sync> Sync for Arena<S> {}

impl<S: PageSource> std::fmt::Debug for Arena<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("pages", &self.pages.len())
            .field("live_words", &self.live_words)
            .finish()
    }
}

impl Default for Arena<HeapPages> {
    fn default() -> Self {
        Self::new()
    }
}

impl Arena<HeapPages> {
    pub fn new() -> Self {
        Self::with_source(HeapPages::default())
    }
}

impl<S: PageSource> Arena<S> {
    pub fn with_source(source: S) -> Self {
        Arena {
            source,
            pages: Vec::new(),
            in_use: 0,
            bump: PAGE_WORDS,
            free_heads: Vec::new(),
            live_words: 0,
        }
    }

    pub fn source(&self) -> &S {
        &self.source
    }

    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// Pages in use, in page-table order.
    pub fn pages_in_use(&self) -> usize {
        self.in_use
    }

    /// Bytes in live allocations (for statistics; `memory_usage` is the
    /// figure to check against a limit).
    pub fn live_bytes(&self) -> usize {
        self.live_words * 8
    }

    fn push_free(&mut self, p: u64, words: usize) {
        if self.free_heads.len() <= words {
            self.free_heads.resize(words + 1, 0);
        }
        let head = self.free_heads[words];
        self.words_mut(RelPtr(p))[0] = head;
        self.free_heads[words] = p;
    }
}

/// Word-by-word reads of one allocation, for the lookup path.
///
/// [`NodeRead::words`] returns a slice that runs to the end of the page, so
/// every index into it is checked against a length computed per node. A
/// `NodeRef` holds the whole page as a fixed-size array and the word's
/// offset in it, and reads word `i` at `(offset + i) mod PAGE_WORDS`: an
/// index the compiler knows is in bounds, so there is no check and no
/// unsafe code. Since an allocation never straddles a page, for every `i`
/// inside the allocation the reduction changes nothing; an index past it
/// reads some other word of the same page instead of panicking, which a
/// caller indexing within its allocation never sees.
#[derive(Clone, Copy)]
pub struct NodeRef<'a> {
    page: &'a [u64; PAGE_WORDS],
    off: usize,
}

impl<'a> NodeRef<'a> {
    /// Word `i` of the allocation.
    #[inline(always)]
    pub fn get(self, i: usize) -> u64 {
        self.page[(self.off + i) & (PAGE_WORDS - 1)]
    }

    /// Words `i..i + N` of the allocation, as an array reference (for the
    /// SIMD chunk search); these bounds are checked.
    #[inline(always)]
    pub fn array<const N: usize>(self, i: usize) -> &'a [u64; N] {
        self.page[self.off + i..self.off + i + N]
            .try_into()
            .expect("inside the page")
    }
}

/// The page of `p` in a page table, as a [`NodeRef`].
///
/// # Safety
///
/// As for [`page_words`].
#[inline(always)]
pub(crate) unsafe fn page_node(pages: &[NonNull<u64>], p: RelPtr) -> NodeRef<'_> {
    let i = p.0 as usize;
    let base = pages[i >> PAGE_SHIFT];
    NodeRef {
        // SAFETY: the caller's promise: the page is PAGE_WORDS readable,
        // 8-aligned words that nothing writes while the borrow lives.
        page: unsafe { &*base.as_ptr().cast::<[u64; PAGE_WORDS]>() },
        off: i & (PAGE_WORDS - 1),
    }
}

/// The words from `p` to the end of its page, in a page table.
///
/// # Safety
///
/// Every page in `pages` is valid for reads of [`PAGE_WORDS`] words for
/// `'a`, and nothing writes them while the returned slice lives.
#[inline(always)]
pub(crate) unsafe fn page_words(pages: &[NonNull<u64>], p: RelPtr) -> &[u64] {
    let i = p.0 as usize;
    let off = i & (PAGE_WORDS - 1);
    let base = pages[i >> PAGE_SHIFT];
    // SAFETY: the caller's promise, and `off < PAGE_WORDS`.
    unsafe { std::slice::from_raw_parts(base.as_ptr().add(off), PAGE_WORDS - off) }
}

/// Prefetch word `word` of `p` in a page table (a hint; see
/// [`NodeRead::prefetch`]).
#[inline(always)]
pub(crate) fn page_prefetch(pages: &[NonNull<u64>], p: RelPtr, word: usize) {
    let i = p.0 as usize;
    if let Some(base) = pages.get(i >> PAGE_SHIFT) {
        // `wrapping_add`: a guessed position may lie past the page; the
        // address is only a hint and is never dereferenced.
        crate::simd::prefetch(
            base.as_ptr()
                .wrapping_add((i & (PAGE_WORDS - 1)) + word)
                .cast_const(),
        );
    }
}

impl<S: PageSource> NodeRead for Arena<S> {
    #[inline(always)]
    fn words(&self, p: RelPtr) -> &[u64] {
        // SAFETY: the source's pages stay valid while it (owned by self)
        // lives; writers need `&mut self`, so no mutable slice of a page
        // exists while this borrow lives.
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
        self.source.held_bytes(self.in_use, self.bump)
            + self.pages.capacity() * std::mem::size_of::<usize>()
            + self.free_heads.capacity() * 8
    }
}

impl<S: PageSource> NodeAlloc for Arena<S> {
    fn alloc(&mut self, words: usize) -> RelPtr {
        assert!(
            words > 0 && words <= MAX_ALLOC_WORDS,
            "bad allocation size {words}"
        );
        self.live_words += words;
        let head = self.free_heads.get(words).copied().unwrap_or(0);
        if head != 0 {
            let slice = self.words_mut(RelPtr(head));
            let next = slice[0];
            slice[..words].fill(0);
            self.free_heads[words] = next;
            return RelPtr(head);
        }
        if self.bump + words > PAGE_WORDS {
            // Recycle the tail of the full page, then start a new one.
            let tail = PAGE_WORDS - self.bump;
            if tail > 0 && self.in_use > 0 {
                let p = ((self.in_use - 1) << PAGE_SHIFT | self.bump) as u64;
                self.push_free(p, tail.min(MAX_ALLOC_WORDS));
            }
            if self.in_use == self.pages.len() {
                self.source
                    .grow(&mut self.pages)
                    .expect("arena page source failed without a reservation");
            }
            self.in_use += 1;
            // Word 0 of page 0 stays unused so that no pointer is 0.
            self.bump = usize::from(self.in_use == 1);
        }
        let p = ((self.in_use - 1) << PAGE_SHIFT | self.bump) as u64;
        self.bump += words;
        assert!(p <= MAX_REL_PTR, "arena exhausted");
        RelPtr(p)
    }

    fn free(&mut self, p: RelPtr, words: usize) {
        debug_assert!(!p.is_null());
        self.live_words -= words;
        self.push_free(p.0, words);
    }

    #[inline(always)]
    fn words_mut(&mut self, p: RelPtr) -> &mut [u64] {
        let i = p.0 as usize;
        let off = i & (PAGE_WORDS - 1);
        let base = self.pages[i >> PAGE_SHIFT];
        // SAFETY: as in `words`; `&mut self` makes this the only live slice.
        unsafe { std::slice::from_raw_parts_mut(base.as_ptr().add(off), PAGE_WORDS - off) }
    }

    fn reserve(&mut self) -> Result<(), OutOfMemory> {
        if self.in_use == self.pages.len() && self.bump + OP_MAX_WORDS > PAGE_WORDS {
            self.source.grow(&mut self.pages)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_reuse_and_zeroing() {
        let mut a = LocalAlloc::new();
        let p = a.alloc(5);
        assert!(!p.is_null());
        a.words_mut(p)[..5].copy_from_slice(&[1, 2, 3, 4, 5]);
        let q = a.alloc(5);
        assert_ne!(p, q);
        a.free(p, 5);
        let r = a.alloc(5);
        assert_eq!(r, p);
        assert_eq!(&a.words(r)[..5], &[0; 5]);
        // Fill several pages; no allocation straddles a page.
        for _ in 0..100 {
            let p = a.alloc(261);
            let off = p.0 as usize & (PAGE_WORDS - 1);
            assert!(off + 261 <= PAGE_WORDS);
        }
        assert!(a.memory_usage() >= 100 * 261 * 8);
    }
}
