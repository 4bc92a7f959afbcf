//! Finding a position in the tree: search targets and the descent.
//!
//! Every search looks for the boundary of a monotone predicate over
//! entries: a [`Target`] says of an entry whether it lies *after* the
//! position sought (false for every entry before it, true from it on).
//! Insertion looks for the first entry above the new (key, TID), a scan
//! for the first entry whose leading columns reach its lower bound, a
//! backward scan for the first entry at or after the last one it returned.
//!
//! On a page the position is found by binary search over the slots. On an
//! internal page the child to follow is that of the last entry not after
//! the target (entry 0, the page's lower bound, never is). The descent
//! moves right whenever the page's high key is not after the target
//! (Lehman–Yao: the page split since its parent was read, and what is
//! sought moved to the right sibling). It takes one shared page lock at a
//! time and returns the leaf with the *lower bound* of its key range as the
//! descent found it, which backward scans use to step to the leaf before.

use super::keyenc::cmp_prefix;
use super::node::{self, Entry, NO_BLOCK};
use super::{corrupt, Btree};
use crate::bufmgr::PinnedBuffer;
use crate::heap::Tid;
use crate::StorageError;
use std::cmp::Ordering;

/// What a search looks for (see the module doc).
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The first entry strictly above (key, TID).
    After(&'a [u8], Tid),
    /// The first entry at or above (key, TID).
    AtOrAfter(&'a [u8], Tid),
    /// The first entry whose leading columns (the bytes of `prefix`) are at
    /// least `prefix`, or above it if `strict`.
    Prefix { prefix: &'a [u8], strict: bool },
    /// The first entry of the tree.
    Leftmost,
    /// Past the last entry of the tree.
    Rightmost,
}

impl Target<'_> {
    /// Whether entry `e` lies at or after the position sought.
    #[inline]
    pub fn after(&self, e: &Entry<'_>) -> bool {
        match *self {
            Target::After(k, t) => e.cmp_to(k, t) == Ordering::Greater,
            Target::AtOrAfter(k, t) => e.cmp_to(k, t) != Ordering::Less,
            Target::Prefix { prefix, strict } => prefix_after(e.key, prefix, strict),
            Target::Leftmost => true,
            Target::Rightmost => false,
        }
    }

    /// Whether the position lies to the right of page `p` (its high key is
    /// not after the target).
    #[inline]
    pub fn beyond(&self, p: &[u8]) -> bool {
        node::high_key(p).is_some_and(|h| !self.after(&h))
    }

    /// The position on page `p`: the first entry after the target.
    #[inline]
    pub fn position(&self, p: &[u8]) -> usize {
        self.first_after(p, 0, node::count(p))
    }

    /// The child of internal page `p` to follow, and its position.
    #[inline]
    pub fn child(&self, p: &[u8]) -> (u32, usize) {
        let i = self.first_after(p, 1, node::count(p)) - 1;
        (node::entry(p, i).child, i)
    }

    /// The first of entries `lo..hi` of page `p` that lies after the
    /// target (`hi` if none does), by binary search. Whether the page is a
    /// leaf is read once, and a prefix search (a scan's) reads only each
    /// entry's key, under a kind matched once, not at every step.
    #[inline]
    fn first_after(&self, p: &[u8], lo: usize, hi: usize) -> usize {
        let internal = !node::is_leaf(p);
        match *self {
            Target::Prefix { prefix, strict } => partition(lo, hi, |i| {
                prefix_after(node::key_of(p, i, internal), prefix, strict)
            }),
            Target::Leftmost => lo,
            Target::Rightmost => hi,
            _ => partition(lo, hi, |i| self.after(&node::entry_of(p, i, internal))),
        }
    }
}

/// Whether `key` lies after a prefix target: its leading columns above
/// `prefix`, or equal to it unless `strict`.
#[inline]
fn prefix_after(key: &[u8], prefix: &[u8], strict: bool) -> bool {
    match cmp_prefix(key, prefix) {
        Ordering::Less => false,
        Ordering::Equal => !strict,
        Ordering::Greater => true,
    }
}

/// The first index of `lo..hi` at which the monotone predicate `after`
/// holds (`hi` if it holds nowhere).
#[inline(always)]
fn partition(mut lo: usize, mut hi: usize, after: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = (lo + hi) / 2;
        if after(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// A lower bound of a leaf's keys as the descent saw it: `None` for minus
/// infinity (the leftmost leaf).
pub type LowBound = Option<(Vec<u8>, Tid)>;

/// Where a descent ended.
pub struct Descent {
    pub leaf: u32,
    /// The internal pages passed, root first (the last one is the leaf's
    /// parent, or a left sibling of it).
    pub stack: Vec<u32>,
    pub low: LowBound,
}

impl<'p> Btree<'p> {
    /// Root block and height from the metapage.
    pub(super) fn root(&self) -> Result<(u32, u16), StorageError> {
        let buf = self.pool.read_buffer(self.rel, super::META_BLOCK)?;
        let g = buf.lock_shared();
        node::meta_read(g.page()).ok_or_else(|| corrupt(self.rel, super::META_BLOCK))
    }

    /// Descends to the leaf where `target`'s position is (see the module
    /// doc).
    pub(super) fn descend(
        &self,
        target: &Target<'_>,
        want_low: bool,
    ) -> Result<Descent, StorageError> {
        let (root, _) = self.root()?;
        self.descend_from(root, target, want_low, true)
            .map(|(d, _)| d)
    }

    /// A scan's descent: [`Btree::descend`] from the root as last read
    /// (`rootcache`: a scan may start at a root that has since split), and
    /// returning the leaf still pinned (not locked): the scan reads it
    /// next, without looking it up again. Its [`Descent::stack`] is left
    /// empty: only an insert climbs back up.
    pub(super) fn descend_for_scan(
        &self,
        target: &Target<'_>,
    ) -> Result<(Descent, PinnedBuffer<'p>), StorageError> {
        let root = match self.pool.btree_roots.get(self.rel) {
            Some(root) => root,
            None => {
                let (root, _) = self.root()?;
                self.pool.btree_roots.set(self.rel, root);
                root
            }
        };
        self.descend_from(root, target, false, false)
    }

    /// The descent from page `block`, returning the leaf pinned; with
    /// `want_stack`, the internal pages passed.
    fn descend_from(
        &self,
        mut block: u32,
        target: &Target<'_>,
        want_low: bool,
        want_stack: bool,
    ) -> Result<(Descent, PinnedBuffer<'p>), StorageError> {
        let mut stack = Vec::new();
        let mut low: LowBound = None;
        loop {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if !node::is_node(p) {
                return Err(corrupt(self.rel, block));
            }
            if target.beyond(p) {
                let next = node::right(p);
                if next == NO_BLOCK {
                    return Err(corrupt(self.rel, block));
                }
                if want_low {
                    let h = node::high_key(p).expect("beyond implies a high key");
                    low = Some((h.key.to_vec(), h.tid));
                }
                block = next;
                continue;
            }
            if node::is_leaf(p) {
                drop(g);
                let descent = Descent {
                    leaf: block,
                    stack,
                    low,
                };
                return Ok((descent, buf));
            }
            if node::count(p) == 0 {
                return Err(corrupt(self.rel, block));
            }
            if want_stack {
                stack.push(block);
            }
            let (child, i) = target.child(p);
            if want_low && i > 0 {
                let e = node::entry(p, i);
                low = Some((e.key.to_vec(), e.tid));
            }
            block = child;
        }
    }
}
