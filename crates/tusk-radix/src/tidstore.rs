//! The TidStore: a set of heap tuple ids (block, offset) on the radix tree.
//! See the crate documentation for the value encodings and the memory bounds.

use crate::alloc::{HeapPages, LocalAlloc, NodeAlloc, NodeRead, OutOfMemory, RelPtr};
use crate::tree::{PathEnd, RadixTree, TreeStats};

/// Largest offset a TidStore accepts. tusk's pages are 8 kB, so a line
/// pointer number never exceeds 2048 (PostgreSQL's `MaxOffsetNumber`); 4095
/// leaves room for 32 kB pages and bounds a block's bitmap at 64 words.
pub const MAX_OFFSET: u16 = 4095;

/// A heap tuple id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tid {
    pub block: u32,
    pub offset: u16,
}

impl Tid {
    pub fn new(block: u32, offset: u16) -> Tid {
        Tid { block, offset }
    }
}

// Tags of a tree value. Bit 0 set: an inline bitmap of offsets 1..=63, offset
// `o` in bit `o` (line pointer numbers start at 1, so bit 0 is free for the
// tag). Otherwise the low two bits tell a bitmap chunk from a list container.
const TAG_INLINE: u64 = 0b1;
const TAG_BITMAP: u64 = 0b10;
const TAG_LIST: u64 = 0b00;
/// Offsets an inline bitmap can hold: 1..=63.
const INLINE_MAX_OFFSET: u16 = 63;
/// Entries per list container. Large enough that the tree's per-key cost
/// (8 to 40 bytes) spreads to a fraction of a byte per TID, small enough that
/// a lookup's binary search stays within a few cache lines (at most 7 steps).
pub const LIST_MAX: usize = 128;
/// A block's own key costs a slot and its share of a tree node: 16 bytes is
/// the estimate when it shares a leaf with the previous key (8.2 in a full
/// n256 leaf, more in sparser ones); 48 more per new kind-4 node otherwise.
const OWN_KEY_BASE: usize = 16;
/// Closing a list of fewer than `SHORT_LIST` entries early wastes part of its
/// container overhead (two words and a tree slot): a block that would do so
/// gets its own key only if that also saves `SHORT_LIST_PENALTY` bytes.
const SHORT_LIST: usize = 16;
const SHORT_LIST_PENALTY: usize = 16;
/// A block gets its own key when that costs at most this many bytes per
/// TID. A list entry costs 1.2 to 3 bytes in practice, so 4 lets own keys
/// cost somewhat more than the list would; what it buys is the lookup: an
/// own key is one exact walk and one cache miss at the leaf, a listed TID
/// a predecessor search and a second, dependent miss in the container. On
/// seed 003's load, 4 rather than 2 took shuffled lookups from 34 to 23 ns
/// and memory from 1.53 to 1.27 bytes per TID (the short lists it replaced
/// paid their header and tree slot for few TIDs); the bounds of
/// `tests/memory.rs` all still hold.
const OWN_KEY_BYTES_PER_TID: usize = 4;

#[inline(always)]
fn bits(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Read entry `i` of a packed list whose entries are `w` bits wide. `word`
/// reads the container: word 0 the header, then the entries, then one pad
/// word so that the two-word read never leaves the allocation. (A lookup
/// reads through a [`NodeRef`](crate::alloc::NodeRef), without bounds
/// checks; iteration through a slice.)
#[inline(always)]
fn list_entry(word: impl Fn(usize) -> u64, i: usize, w: u32) -> u64 {
    let pos = i * w as usize;
    let wi = 1 + (pos >> 6);
    let two = u128::from(word(wi)) | u128::from(word(wi + 1)) << 64;
    ((two >> (pos & 63)) as u64) & ((1u64 << w) - 1)
}

/// Is `offset` set in the inline bitmap `value`? Branch-free. Offsets
/// 1..=63 live in bits 1..=63; offset 0 would read the tag bit and offsets
/// above 63 are not in an inline bitmap, so both answer false.
#[inline(always)]
fn inline_contains(value: u64, offset: u16) -> bool {
    let bit = value >> (offset & 63) & 1;
    bit & u64::from(offset.wrapping_sub(1) < INLINE_MAX_OFFSET) != 0
}

#[inline(always)]
fn list_header(h: u64) -> (usize, u32, u32) {
    (
        (h & 0xffff) as usize,
        (h >> 16) as u8 as u32,
        (h >> 24) as u8 as u32,
    )
}

fn list_words(count: usize, w: u32) -> usize {
    2 + (count * w as usize).div_ceil(64)
}

/// Dead tuple ids, filled block by block in ascending block order.
#[derive(Debug)]
pub struct TidStore<A: NodeRead = LocalAlloc> {
    tree: RadixTree<A>,
    /// The list container being filled: (block, offset) in ascending order,
    /// at most `LIST_MAX` entries. Written to the tree when it is full or
    /// when a block that gets its own key arrives.
    open: Vec<(u32, u16)>,
    last_block: Option<u32>,
    /// The last key written to the tree.
    last_key: Option<u32>,
    num_tids: usize,
    num_blocks: usize,
}

impl Default for TidStore<LocalAlloc> {
    fn default() -> Self {
        Self::new()
    }
}

impl TidStore<LocalAlloc> {
    pub fn new() -> Self {
        Self::with_alloc(LocalAlloc::new())
    }

    /// A store its owner will keep under `limit` bytes (VACUUM: the
    /// `maintenance_work_mem` budget). With a limit of 32 MB or more its
    /// memory comes in 2 MB huge-page runs (see [`HeapPages`]), which makes
    /// random lookups faster; `memory_usage` counts whole runs.
    pub fn with_limit(limit: usize) -> Self {
        Self::with_alloc(LocalAlloc::with_source(HeapPages::for_limit(limit)))
    }

    /// Add the dead `offsets` of `block`. Blocks must come in strictly
    /// ascending order; offsets must be strictly ascending, non-empty and at
    /// most [`MAX_OFFSET`]. (The local store cannot run out of memory short
    /// of the process; a shared store uses
    /// [`try_add_block`](Self::try_add_block).)
    pub fn add_block(&mut self, block: u32, offsets: &[u16]) {
        self.try_add_block(block, offsets)
            .expect("the heap arena does not fail");
    }
}

impl<A: NodeRead> TidStore<A> {
    /// A store over a tree that is already complete (a shared store
    /// opened by a reader).
    // Used by the shared store, which the loom build leaves out.
    #[cfg_attr(tusk_radix_loom, allow(dead_code))]
    pub(crate) fn from_tree(tree: RadixTree<A>, num_tids: usize, num_blocks: usize) -> Self {
        TidStore {
            tree,
            open: Vec::new(),
            last_block: None,
            last_key: None,
            num_tids,
            num_blocks,
        }
    }

    // Used by the shared store, which the loom build leaves out.
    #[cfg_attr(tusk_radix_loom, allow(dead_code))]
    pub(crate) fn tree(&self) -> &RadixTree<A> {
        &self.tree
    }

    // Used by the shared store, which the loom build leaves out.
    #[cfg_attr(tusk_radix_loom, allow(dead_code))]
    pub(crate) fn tree_mut(&mut self) -> &mut RadixTree<A> {
        &mut self.tree
    }

    /// Number of TIDs stored.
    pub fn len(&self) -> usize {
        self.num_tids
    }

    pub fn is_empty(&self) -> bool {
        self.num_tids == 0
    }

    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    /// Bytes held: the allocator's pages (tree nodes and containers) plus the
    /// open container's buffer. Compare it with `maintenance_work_mem`.
    pub fn memory_usage(&self) -> usize {
        self.tree.memory_usage()
            + self.open.capacity() * std::mem::size_of::<(u32, u16)>()
            + std::mem::size_of::<Self>()
    }

    pub fn tree_stats(&self) -> TreeStats {
        self.tree.stats()
    }

    /// Is `tid` in the set?
    ///
    /// One exact descent of the tree, which a predecessor search continues
    /// from where it ended when the block has no key of its own. A block
    /// with its own key and an inline bitmap (nearly all probes of seed
    /// 003's load) is then answered by a branch-free bit test. Everything
    /// else — a block in a list container or the open buffer, a bitmap
    /// chunk, a block with no entry — is decoded by `contains_slow`, kept
    /// out of line so that the common path stays short: a shuffled probe
    /// sequence overlaps the cache misses of consecutive lookups only when
    /// each lookup takes few enough instructions for the next one to start
    /// inside the out-of-order window.
    #[inline]
    pub fn contains(&self, tid: Tid) -> bool {
        // A key in the tree is never in the open buffer (the buffer holds
        // blocks above every key), so an inline value found here is the
        // whole answer.
        let descent = self.tree.descend(u64::from(tid.block));
        match descent {
            Ok(v) if v & TAG_INLINE != 0 => inline_contains(v, tid.offset),
            _ => self.contains_slow(tid, descent),
        }
    }

    /// [`contains`](Self::contains) for every case, given where the exact
    /// descent ended: the open buffer, or the predecessor entry's decoding.
    #[inline(never)]
    fn contains_slow(&self, tid: Tid, descent: Result<u64, PathEnd>) -> bool {
        let block = u64::from(tid.block);
        let found = match descent {
            Ok(v) => Some((block, v)),
            Err(end) => self.tree.get_le_after(block, end),
        };
        let mut out = [false];
        self.answer_run(tid.block, found, &[tid], &mut out);
        out[0]
    }

    /// Membership of many TIDs at once: `out[i] = self.contains(tids[i])`.
    ///
    /// The probes are cut into *runs* of consecutive probes of one block
    /// (an index whose order follows the heap's asks about a few hundred
    /// TIDs of each block in a row; a shuffled one makes runs of one). Up to
    /// [`BATCH`](crate::tree::BATCH) runs walk the tree side by side
    /// ([`RadixTree::get_le_batch`]), one level at a time, and each step
    /// prefetches the node the walk visits next; by the time the walk comes
    /// back to that key the line is usually in cache. Containers are
    /// prefetched before any is searched, so a shuffled probe sequence
    /// (VACUUM's index pass) pays its cache misses in parallel instead of
    /// one after another. Each run then decodes its block's value once and
    /// tests its offsets against it (`answer_run`).
    pub fn contains_batch(&self, tids: &[Tid], out: &mut [bool]) {
        assert_eq!(tids.len(), out.len(), "one answer per probe");
        const B: usize = crate::tree::BATCH;
        let mut keys = [0u64; B];
        let mut vals = [None; B];
        // ends[r]: one past the last probe of run r.
        let mut ends = [0usize; B];
        let mut next = 0;
        while next < tids.len() {
            let first = next;
            let mut m = 0;
            while m < B && next < tids.len() {
                let block = tids[next].block;
                next += 1 + tids[next + 1..]
                    .iter()
                    .take_while(|t| t.block == block)
                    .count();
                keys[m] = u64::from(block);
                ends[m] = next;
                m += 1;
            }
            self.tree.get_le_batch(&keys[..m], &mut vals[..m]);
            // Values that point at a container: prefetch it now, test later.
            let mut s = first;
            for (&v, &e) in vals[..m].iter().zip(&ends[..m]) {
                if let Some((_, v)) = v {
                    if v & TAG_INLINE == 0 {
                        let (p, w) = if v & 3 == TAG_BITMAP {
                            (v >> 9, tids[s].offset as usize >> 6)
                        } else {
                            (v >> 2, 0)
                        };
                        self.tree.alloc().prefetch(RelPtr(p), w);
                    }
                }
                s = e;
            }
            let mut s = first;
            for r in 0..m {
                let e = ends[r];
                self.answer_run(keys[r] as u32, vals[r], &tids[s..e], &mut out[s..e]);
                s = e;
            }
        }
    }

    /// Answers the probes `tids` (all of `block`) given what the tree holds
    /// for it: `found` is the entry with the greatest key `<=` the block.
    #[inline(always)]
    fn answer_run(&self, block: u32, found: Option<(u64, u64)>, tids: &[Tid], out: &mut [bool]) {
        if self.in_open(block) {
            for (t, o) in tids.iter().zip(out) {
                *o = self.open.binary_search(&(block, t.offset)).is_ok();
            }
            return;
        }
        let Some((key, value)) = found else {
            out.fill(false);
            return;
        };
        let own = key == u64::from(block);
        if value & TAG_INLINE != 0 {
            for (t, o) in tids.iter().zip(out) {
                *o = own && inline_contains(value, t.offset);
            }
        } else if value & 3 == TAG_BITMAP {
            if !own {
                out.fill(false);
                return;
            }
            let words = (value >> 2 & 0x7f) as usize;
            let chunk = &self.tree.alloc().words(RelPtr(value >> 9))[..words];
            for (t, o) in tids.iter().zip(out) {
                *o = chunk
                    .get(t.offset as usize >> 6)
                    .is_some_and(|w| w >> (t.offset & 63) & 1 != 0);
            }
        } else {
            for (t, o) in tids.iter().zip(out) {
                *o = self.list_contains(key, value, t.offset, block);
            }
        }
    }

    /// Does `block` fall in the open (not yet written) list container?
    #[inline(always)]
    fn in_open(&self, block: u32) -> bool {
        self.open.first().is_some_and(|&(first, _)| block >= first)
    }

    /// Is (`block`, `offset`) in the list container `value` stored under
    /// `key` (the greatest key `<=` the block)?
    #[inline(always)]
    fn list_contains(&self, key: u64, value: u64, offset: u16, block: u32) -> bool {
        let n = self.tree.alloc().node(RelPtr(value >> 2));
        let (count, db, ob) = list_header(n.get(0));
        let delta = u64::from(block) - key;
        if bits(delta) > db || bits(u64::from(offset)) > ob {
            return false;
        }
        let target = delta << ob | u64::from(offset);
        let w = db + ob;
        // Branch-light binary search over the packed entries.
        let mut base = 0;
        let mut len = count;
        while len > 1 {
            let half = len / 2;
            // Arithmetic, not `if`: the outcome is a coin toss for the
            // branch predictor.
            base += half * usize::from(list_entry(|j| n.get(j), base + half, w) <= target);
            len -= half;
        }
        list_entry(|j| n.get(j), base, w) == target
    }

    /// Blocks in ascending order with their offsets.
    pub fn iter(&self) -> TidIter<'_, A> {
        TidIter {
            store: self,
            tree: self.tree.iter(),
            buf: Vec::new(),
            pos: 0,
            open_done: false,
            offsets: Vec::new(),
        }
    }

    /// Check internal invariants (tests).
    pub fn check_invariants(&self) {
        self.tree.check_invariants();
        assert!(self.open.len() <= LIST_MAX);
    }
}

impl<A: NodeAlloc> TidStore<A> {
    /// An empty store whose nodes live in `alloc`.
    pub fn with_alloc(alloc: A) -> Self {
        TidStore {
            tree: RadixTree::with_alloc(alloc),
            open: Vec::with_capacity(LIST_MAX),
            last_block: None,
            last_key: None,
            num_tids: 0,
            num_blocks: 0,
        }
    }

    /// [`add_block`](TidStore::add_block) for any allocator: fails, with
    /// the store unchanged, when the allocator is out of memory (a shared
    /// store's DSA area at its limit). The argument rules are the same, and
    /// breaking them panics (a caller bug, not bad data).
    pub fn try_add_block(&mut self, block: u32, offsets: &[u16]) -> Result<(), OutOfMemory> {
        assert!(
            self.last_block.is_none_or(|b| b < block),
            "blocks must be added in ascending order"
        );
        assert!(!offsets.is_empty(), "a block needs at least one offset");
        assert!(
            offsets.windows(2).all(|w| w[0] < w[1]),
            "offsets must be strictly ascending"
        );
        let max = *offsets.last().unwrap();
        assert!(max <= MAX_OFFSET, "offset {max} above MAX_OFFSET");
        // The only fallible step, before anything changes: afterwards the
        // allocations of this call (at most two tree inserts and two
        // containers, well under `OP_MAX_WORDS`) cannot fail.
        self.tree.alloc_mut().reserve()?;
        self.last_block = Some(block);
        self.num_tids += offsets.len();
        self.num_blocks += 1;

        let n = offsets.len();
        let inline = offsets[0] >= 1 && max <= INLINE_MAX_OFFSET;
        let own_extra = if inline {
            0
        } else {
            8 * (max as usize / 64 + 1)
        };
        // What a new key costs in the tree depends on how far it is from the
        // previous one: a slot in the same leaf, or new kind-4 nodes.
        let prev_key = self.open.first().map(|e| e.0).or(self.last_key);
        let own_base = match prev_key {
            Some(k) if k >> 8 == block >> 8 => OWN_KEY_BASE,
            Some(k) if k >> 16 == block >> 16 => OWN_KEY_BASE + 48,
            _ => OWN_KEY_BASE + 96,
        };
        let penalty = if (1..SHORT_LIST).contains(&self.open.len()) {
            SHORT_LIST_PENALTY
        } else {
            0
        };
        // A block gets its own key (inline or bitmap) when that, plus the
        // penalty, costs at most OWN_KEY_BYTES_PER_TID per TID: the rule
        // leans towards own keys, which are faster to look up, as far as the
        // memory bounds allow (`tests/memory.rs` has the adversarial mixes
        // that keep it honest).
        if n > LIST_MAX || own_base + own_extra + penalty <= OWN_KEY_BYTES_PER_TID * n {
            self.close_list();
            let value = if inline {
                offsets.iter().fold(TAG_INLINE, |m, &o| m | 1 << o)
            } else {
                let words = max as usize / 64 + 1;
                let p = self.tree.alloc_mut().alloc(words);
                let chunk = self.tree.alloc_mut().words_mut(p);
                // Gather a word's bits in a register: or-ing them into the
                // chunk one by one chains each store to the next load.
                let (mut w, mut word) = (0, 0u64);
                for &o in offsets {
                    if o as usize >> 6 != w {
                        chunk[w] = word;
                        (w, word) = (o as usize >> 6, 0);
                    }
                    word |= 1 << (o & 63);
                }
                chunk[w] = word;
                p.0 << 9 | (words as u64) << 2 | TAG_BITMAP
            };
            self.tree.insert(u64::from(block), value);
            self.last_key = Some(block);
        } else {
            if self.open.len() + n > LIST_MAX {
                self.close_list();
            }
            self.open.extend(offsets.iter().map(|&o| (block, o)));
        }
        Ok(())
    }

    /// Write the open list container to the tree (before publication).
    // Used by the shared store, which the loom build leaves out.
    #[cfg_attr(tusk_radix_loom, allow(dead_code))]
    pub(crate) fn finish_lists(&mut self) -> Result<(), OutOfMemory> {
        self.tree.alloc_mut().reserve()?;
        self.close_list();
        Ok(())
    }

    /// Write the open list container to the tree, keyed by its first block.
    fn close_list(&mut self) {
        let Some(&(first, _)) = self.open.first() else {
            return;
        };
        let last = self.open.last().unwrap().0;
        let max_off = self.open.iter().map(|&(_, o)| o).max().unwrap();
        let db = bits(u64::from(last - first));
        let ob = bits(u64::from(max_off));
        let w = db + ob;
        let count = self.open.len();
        let words = list_words(count, w);
        let p = self.tree.alloc_mut().alloc(words);
        let n = self.tree.alloc_mut().words_mut(p);
        n[0] = count as u64 | u64::from(db) << 16 | u64::from(ob) << 24;
        for (i, &(b, o)) in self.open.iter().enumerate() {
            let e = u64::from(b - first) << ob | u64::from(o);
            let pos = i * w as usize;
            let wi = 1 + (pos >> 6);
            let sh = pos & 63;
            n[wi] |= e << sh;
            if sh != 0 && sh + w as usize > 64 {
                n[wi + 1] |= e >> (64 - sh);
            }
        }
        self.tree.insert(u64::from(first), p.0 << 2 | TAG_LIST);
        debug_assert!(p.0 != 0, "a list value is never 0");
        self.last_key = Some(first);
        self.open.clear();
    }
}

/// Block-by-block iterator over a [`TidStore`]. As an [`Iterator`] it
/// hands out each block's offsets in a new `Vec`;
/// [`next_block`](Self::next_block) lends them from a buffer the iterator
/// reuses (VACUUM's heap pass: no allocation per block).
pub struct TidIter<'a, A: NodeRead> {
    store: &'a TidStore<A>,
    tree: crate::tree::Iter<'a, A>,
    /// Decoded entries of the current list container.
    buf: Vec<(u32, u16)>,
    pos: usize,
    open_done: bool,
    /// The offsets of the block last returned by `next_block`.
    offsets: Vec<u16>,
}

impl<A: NodeRead> TidIter<'_, A> {
    /// The next block and its offsets (ascending), or `None` at the end.
    pub fn next_block(&mut self) -> Option<(u32, &[u16])> {
        loop {
            if self.pos < self.buf.len() {
                let b = self.buf[self.pos].0;
                self.offsets.clear();
                for &(eb, o) in &self.buf[self.pos..] {
                    if eb != b {
                        break;
                    }
                    self.offsets.push(o);
                }
                self.pos += self.offsets.len();
                return Some((b, &self.offsets));
            }
            match self.tree.next() {
                Some((key, value)) => {
                    let block = key as u32;
                    match value & 3 {
                        _ if value & TAG_INLINE != 0 => {
                            self.offsets.clear();
                            self.offsets
                                .extend((1..=INLINE_MAX_OFFSET).filter(|&o| value >> o & 1 != 0));
                            return Some((block, &self.offsets));
                        }
                        TAG_BITMAP => {
                            let words = (value >> 2 & 0x7f) as usize;
                            let n = self.store.tree.alloc().words(RelPtr(value >> 9));
                            self.offsets.clear();
                            for (w, &word) in n[..words].iter().enumerate() {
                                let mut x = word;
                                while x != 0 {
                                    self.offsets
                                        .push((w * 64 + x.trailing_zeros() as usize) as u16);
                                    x &= x - 1;
                                }
                            }
                            return Some((block, &self.offsets));
                        }
                        _ => {
                            let n = self.store.tree.alloc().words(RelPtr(value >> 2));
                            let (count, db, ob) = list_header(n[0]);
                            let w = db + ob;
                            self.buf.clear();
                            for i in 0..count {
                                let e = list_entry(|j| n[j], i, w);
                                let b = block + (e >> ob) as u32;
                                self.buf.push((b, (e & ((1u64 << ob) - 1)) as u16));
                            }
                            self.pos = 0;
                        }
                    }
                }
                None if !self.open_done => {
                    self.open_done = true;
                    self.buf.clear();
                    self.buf.extend_from_slice(&self.store.open);
                    self.pos = 0;
                }
                None => return None,
            }
        }
    }
}

impl<A: NodeRead> Iterator for TidIter<'_, A> {
    type Item = (u32, Vec<u16>);

    fn next(&mut self) -> Option<(u32, Vec<u16>)> {
        self.next_block().map(|(b, offsets)| (b, offsets.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline fast path of `contains` never answers for an offset an
    /// inline bitmap cannot hold, even where `offset mod 64` is set.
    #[test]
    fn inline_lookup_rejects_offsets_outside_1_to_63() {
        let mut s = TidStore::new();
        let all: Vec<u16> = (1..=63).collect();
        s.add_block(7, &all);
        s.add_block(9, &[1, 2, 3, 4, 5, 7, 9, 63]);
        s.add_block(12, &[1, 5, 63]); // a list, in the open buffer
        assert_eq!(s.tree_stats().keys, 2, "blocks 7 and 9 are inline keys");
        for o in 1..=63 {
            assert!(s.contains(Tid::new(7, o)));
        }
        for o in [0, 64, 65, 127, 128, 4095, u16::MAX] {
            assert!(!s.contains(Tid::new(7, o)), "offset {o}");
            assert!(!s.contains(Tid::new(9, o)), "offset {o}");
        }
        assert!(s.contains(Tid::new(9, 5)) && !s.contains(Tid::new(9, 6)));
        assert!(!s.contains(Tid::new(8, 5)) && !s.contains(Tid::new(10, 5)));
        assert!(s.contains(Tid::new(12, 63)) && !s.contains(Tid::new(12, 127)));
    }
}
