//! Node memory: the allocator abstraction and the local (arena) backend.
//!
//! Every node of the tree and every TidStore container is a run of 64-bit
//! words named by a [`RelPtr`]: a 64-bit *relative* pointer, never a Rust
//! reference or a heap address. The local backend below interprets it as a
//! word index into an arena of fixed-size pages; the shared backend that the
//! lead will add on top of `tusk-shmem`'s DSA interprets it as a DSA pointer
//! (segment number and offset). Because nothing stored inside a node is an
//! address, a tree built in shared memory can be read by another process
//! that maps the same segments at different addresses.
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
//!   and length into one tree value. (A DSA pointer of 10 segment bits and a
//!   40-bit offset fits; the local arena's word indexes fit up to 256 PB.)
//! * `memory_usage()` is the number of bytes the backend holds from the
//!   system for this structure — what a caller compares with
//!   `maintenance_work_mem`. It is deterministic: it depends only on the
//!   sequence of calls, never on timing or on the system allocator.

/// A 64-bit relative pointer to an allocation; 0 is null.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// Where nodes live. Implemented by [`LocalAlloc`] now and by a DSA-backed
/// allocator later; the tree is generic over it so that each backend gets its
/// own monomorphised, fully inlined hot path.
pub trait NodeAlloc {
    fn alloc(&mut self, words: usize) -> RelPtr;
    fn free(&mut self, p: RelPtr, words: usize);
    fn words(&self, p: RelPtr) -> &[u64];
    fn words_mut(&mut self, p: RelPtr) -> &mut [u64];
    fn memory_usage(&self) -> usize;
}

const PAGE_SHIFT: u32 = 12;
/// Words per arena page: 4096 words = 32 kB. A page is large against the
/// largest allocation (261 words, so at most 6 % of a page is ever lost at a
/// page's tail, and that tail is recycled through the free lists) and small
/// against the memory budgets a caller checks (so usage is exact to 32 kB).
pub const PAGE_WORDS: usize = 1 << PAGE_SHIFT;
const PAGE_BYTES: usize = PAGE_WORDS * 8;

/// The local backend: an arena of 32 kB pages with one exact-size free list
/// per allocation size. Pointers are word indexes (page << 12 | word); word 0
/// of page 0 is never handed out, so 0 can mean null. Allocations never
/// straddle pages. Entirely safe code: a page is a boxed array and every
/// access is an ordinary (bounds-checked) index.
#[derive(Debug)]
pub struct LocalAlloc {
    pages: Vec<Box<[u64; PAGE_WORDS]>>,
    /// Next free word in the last page.
    bump: usize,
    /// Head of the free list for each size (grown to the largest size freed);
    /// a free chunk's first word holds the next chunk's pointer.
    free_heads: Vec<u64>,
    live_words: usize,
}

impl Default for LocalAlloc {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalAlloc {
    pub fn new() -> LocalAlloc {
        LocalAlloc {
            pages: Vec::new(),
            bump: PAGE_WORDS,
            free_heads: Vec::new(),
            live_words: 0,
        }
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

impl NodeAlloc for LocalAlloc {
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
            if tail > 0 && !self.pages.is_empty() {
                let p = ((self.pages.len() - 1) << PAGE_SHIFT | self.bump) as u64;
                self.push_free(p, tail.min(MAX_ALLOC_WORDS));
            }
            self.pages.push(Box::new([0; PAGE_WORDS]));
            // Word 0 of page 0 stays unused so that no pointer is 0.
            self.bump = usize::from(self.pages.len() == 1);
        }
        let p = ((self.pages.len() - 1) << PAGE_SHIFT | self.bump) as u64;
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
    fn words(&self, p: RelPtr) -> &[u64] {
        let i = p.0 as usize;
        &self.pages[i >> PAGE_SHIFT][i & (PAGE_WORDS - 1)..]
    }

    #[inline(always)]
    fn words_mut(&mut self, p: RelPtr) -> &mut [u64] {
        let i = p.0 as usize;
        &mut self.pages[i >> PAGE_SHIFT][i & (PAGE_WORDS - 1)..]
    }

    fn memory_usage(&self) -> usize {
        self.pages.len() * PAGE_BYTES
            + self.pages.capacity() * std::mem::size_of::<usize>()
            + self.free_heads.capacity() * 8
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
