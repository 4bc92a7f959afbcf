//! The process's heap allocator: mimalloc, entered the way its own
//! `malloc` is.
//!
//! A short statement (pgbench's select) makes and frees a few dozen
//! objects. With glibc's allocator, whose per-thread cache holds seven
//! blocks of a size, most of those went through its locked arenas and
//! `malloc`/`free` took a quarter of the server's instructions; mimalloc's
//! per-thread free lists serve them without locks (about 13 % more
//! `pgbench -S` transactions).
//!
//! The `mimalloc` crate's allocator passes every request to
//! `mi_malloc_aligned`, whatever the alignment. That entry point takes a
//! fast path only for blocks up to 1 kB that happen to be aligned already;
//! a larger request over-allocates by the alignment and marks the page as
//! holding interior pointers, which slows its `mi_free` too. A Rust
//! request of alignment at most a machine word asks for nothing `mi_malloc`
//! does not give: every mimalloc block is word-aligned (block sizes are
//! whole words, and a page's first block starts 16-byte aligned,
//! `MI_PAGE_MIN_START_BLOCK_ALIGN`). So those requests, nearly all of them,
//! go to `mi_malloc`, `mi_zalloc` and `mi_realloc`, and only the rest to the
//! aligned entry points. (The standard library's `System` allocator makes
//! the same choice over libc's `malloc`.) Measured with callgrind over
//! pgbench's select: about 700 fewer instructions per statement.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment every mimalloc block has (see the module doc).
const WORD: usize = std::mem::size_of::<usize>();

/// mimalloc, entered through its plain `malloc` for word-aligned requests.
pub struct MiMalloc;

// SAFETY: each method returns memory from mimalloc, which is thread-safe,
// of at least `layout.size()` bytes and aligned to `layout.align()`:
// `mi_malloc`, `mi_zalloc` and `mi_realloc` only for alignments a mimalloc
// block always has (the module doc), the `_aligned` variants otherwise.
// Null on exhaustion, as `GlobalAlloc` wants. `dealloc` and `realloc` get
// only pointers this allocator returned, which `mi_free`/`mi_realloc*`
// accept whichever entry point made them.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's argument.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's argument.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: see the impl's argument.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl's argument; the block keeps its alignment.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size class up to 64 kB and every alignment up to a
    /// page come back aligned, writable and intact through `realloc`.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let a = MiMalloc;
        for align in [1, 2, 4, 8, 16, 64, 4096] {
            for size in [1usize, 3, 8, 24, 40, 100, 1000, 1025, 5000, 65536] {
                let size = size.next_multiple_of(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero-size layout; the block is used within
                // its size and freed once with its layout.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    std::ptr::write_bytes(p, 0xab, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc {size} align {align}");
                    assert!((0..size).all(|i| *q.add(i) == 0xab));
                    a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
