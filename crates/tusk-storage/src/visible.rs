//! Visible tuples of a page, and reading their attributes in bulk.
//!
//! A sequential scan reads a page at a time: [`crate::heap::scan_page_items`]
//! decodes the line pointers once and lists the tuples the snapshot sees as
//! [`VisibleItem`]s; the executor then fills each needed column with one loop
//! over the list ([`attrs`]) instead of walking every tuple attribute by
//! attribute. That loop runs tens of millions of times per second, so it reads
//! without a bounds check per attribute; this module is where the argument
//! for that lives.
//!
//! Invariant: a `VisibleItem` is made only by `scan_page_items`, which
//! checked `off + len <= PAGE_SIZE` against the page it was found on, and its
//! fields cannot be changed from outside this crate. So for the page it came
//! from (`PAGE_SIZE` bytes, asserted), every byte `off..off + len` exists.

use crate::page::PAGE_SIZE;

/// Where a visible tuple lies on its page: item number, byte offset, length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VisibleItem {
    item: u16,
    off: u16,
    len: u16,
}

impl VisibleItem {
    /// An item whose tuple `off..off + len` lies within a page (checked).
    pub fn new(item: u16, off: usize, len: usize) -> Option<VisibleItem> {
        (off + len <= PAGE_SIZE).then_some(VisibleItem {
            item,
            off: off as u16,
            len: len as u16,
        })
    }

    /// The item (line pointer) number, 1-based.
    pub fn item(&self) -> u16 {
        self.item
    }

    /// The tuple's bytes on `page`, the page the item was found on.
    pub fn tuple<'p>(&self, page: &'p [u8]) -> &'p [u8] {
        &page[self.off as usize..][..self.len as usize]
    }
}

/// The `N` bytes at byte `at` of each of `items` (visible tuples of
/// `page`), or `None` for a tuple too short to hold them (a damaged tuple:
/// never for a tuple whose attributes up to there are present and
/// NULL-free). An exact-size iterator, so collecting it reserves once.
#[inline]
pub fn attrs<'p, const N: usize>(
    page: &'p [u8],
    items: &'p [VisibleItem],
    at: usize,
) -> impl Iterator<Item = Option<[u8; N]>> + 'p {
    assert_eq!(page.len(), PAGE_SIZE, "items come with their whole page");
    items.iter().map(move |it| {
        (at + N <= it.len as usize).then(|| {
            // SAFETY: `it.off + it.len <= PAGE_SIZE` (the module invariant:
            // checked when the item was made) and `at + N <= it.len`, so the
            // `N` bytes from `it.off + at` lie inside `page`, which has
            // `PAGE_SIZE` bytes; `[u8; N]` has alignment 1.
            unsafe {
                page.as_ptr()
                    .add(it.off as usize + at)
                    .cast::<[u8; N]>()
                    .read()
            }
        })
    })
}
