//! The adaptive radix tree: u64 keys, u64 values stored in the leaf slots.
//! See the crate documentation for the node layouts and invariants.

use crate::alloc::{LocalAlloc, NodeAlloc, NodeRead, RelPtr};
use crate::simd;

// Node kinds (byte 0 of the header word).
const KIND_4: u8 = 0;
const KIND_32: u8 = 1;
const KIND_48: u8 = 2;
const KIND_256: u8 = 3;

/// Size classes: (kind, fanout, words). Index = class number (byte 1 of the
/// header word).
const CLASSES: [(u8, usize, usize); 5] = [
    (KIND_4, 4, 5),
    (KIND_32, 16, 1 + 2 + 16),
    (KIND_32, 32, 1 + 4 + 32),
    (KIND_48, 48, 1 + 4 + 1 + 32 + 48),
    (KIND_256, 256, 1 + 4 + 256),
];
const CLASS_4: usize = 0;
const CLASS_16: usize = 1;
const CLASS_32: usize = 2;
const CLASS_48: usize = 3;
const CLASS_256: usize = 4;

/// Names of the size classes, for statistics.
pub const CLASS_NAMES: [&str; 5] = ["n4", "n16", "n32", "n48", "n256"];

// Word offsets inside nodes.
const ISSET: usize = 1; // kinds 48 and 256: 4-word bitmap of used chunks
const N48_USED: usize = 5; // kind 48: bitmap of used slots
const N48_INDEX: usize = 6; // kind 48: 256 bytes, slot number + 1 (0 = empty)
const N48_SLOTS: usize = 38;
const N256_SLOTS: usize = 5;

// Shrink thresholds after a delete (grow happens when full). The gap between
// growing at `fanout` and shrinking well below the smaller class's fanout
// keeps a key that is inserted and deleted repeatedly from rebuilding a node
// each time.
const SHRINK_256: usize = 36;
const SHRINK_48: usize = 24;
const SHRINK_32: usize = 12;
const SHRINK_16: usize = 3;

#[inline(always)]
fn hdr_kind(h: u64) -> u8 {
    h as u8
}
#[inline(always)]
fn hdr_class(h: u64) -> usize {
    (h >> 8) as u8 as usize
}
#[inline(always)]
fn hdr_count(h: u64) -> usize {
    (h >> 16) as u16 as usize
}
#[inline(always)]
fn header(class: usize, count: usize) -> u64 {
    CLASSES[class].0 as u64 | (class as u64) << 8 | (count as u64) << 16
}
#[inline(always)]
fn set_count(n: &mut [u64], count: usize) {
    n[0] = (n[0] & !(0xffff << 16)) | (count as u64) << 16;
}

// ---- kind 4: chunks in the header's upper four bytes -----------------------

#[inline(always)]
fn n4_chunk(h: u64, i: usize) -> u8 {
    (h >> (32 + 8 * i)) as u8
}

/// SWAR search of the four header chunks: the classic "has zero byte" trick
/// on `chunks ^ key`. A false positive can only appear above a true zero
/// byte, so the lowest flagged byte is exact. No branch besides the result.
#[inline(always)]
fn n4_find(h: u64, c: u8) -> Option<usize> {
    let x = ((h >> 32) as u32) ^ (u32::from(c) * 0x0101_0101);
    let z = x.wrapping_sub(0x0101_0101) & !x & 0x8080_8080;
    let valid = ((1u64 << (8 * hdr_count(h))) - 1) as u32;
    let z = z & valid;
    (z != 0).then(|| (z.trailing_zeros() / 8) as usize)
}

/// Number of valid header chunks `<= c`, branch-free.
#[inline(always)]
fn n4_count_le(h: u64, c: u8) -> usize {
    let count = hdr_count(h);
    (0..4)
        .map(|i| usize::from(n4_chunk(h, i) <= c) & usize::from(i < count))
        .sum()
}

// ---- kind 32 (classes 16 and 32): sorted chunk array, SIMD search ------------

/// The 32 chunk bytes: words 1..=4 of the node itself (no copy). For class 16
/// the last 16 bytes are the first slots; every search masks them by `count`.
#[inline(always)]
fn n32_chunks(n: &[u64]) -> &simd::Chunks {
    n[1..5].try_into().unwrap()
}

fn chunk_bytes(w: &simd::Chunks) -> [u8; 32] {
    let mut b = [0u8; 32];
    for i in 0..4 {
        b[8 * i..8 * i + 8].copy_from_slice(&w[i].to_le_bytes());
    }
    b
}
/// First slot word of a kind-32 node: `1 + fanout / 8`, which for classes
/// 1 (n16) and 2 (n32) is `1 + 2 * class` (no table lookup on the hot path).
#[inline(always)]
fn n32_slots(class: usize) -> usize {
    debug_assert!(class == CLASS_16 || class == CLASS_32);
    debug_assert_eq!(1 + 2 * class, 1 + CLASSES[class].1 / 8);
    1 + 2 * class
}

// ---- kinds 48 and 256: the isset bitmap --------------------------------------

#[inline(always)]
fn isset(n: &[u64], c: u8) -> bool {
    n[ISSET + (c as usize >> 6)] >> (c & 63) & 1 != 0
}
/// Highest set chunk `<= c` in the isset bitmap.
#[inline]
fn isset_le(n: &[u64], c: u8) -> Option<u8> {
    let mut w = c as usize >> 6;
    let mut bits = n[ISSET + w] & (u64::MAX >> (63 - (c & 63)));
    loop {
        if bits != 0 {
            return Some((w * 64 + 63 - bits.leading_zeros() as usize) as u8);
        }
        if w == 0 {
            return None;
        }
        w -= 1;
        bits = n[ISSET + w];
    }
}
/// Lowest set chunk `>= c` in the isset bitmap.
#[inline]
fn isset_ge(n: &[u64], c: usize) -> Option<u8> {
    if c > 255 {
        return None;
    }
    let mut w = c >> 6;
    let mut bits = n[ISSET + w] & (u64::MAX << (c & 63));
    loop {
        if bits != 0 {
            return Some((w * 64 + bits.trailing_zeros() as usize) as u8);
        }
        w += 1;
        if w == 4 {
            return None;
        }
        bits = n[ISSET + w];
    }
}
#[inline(always)]
fn n48_index(n: &[u64], c: u8) -> usize {
    (n[N48_INDEX + (c as usize >> 3)] >> ((c & 7) * 8)) as u8 as usize
}
#[inline(always)]
fn n48_set_index(n: &mut [u64], c: u8, v: usize) {
    let w = &mut n[N48_INDEX + (c as usize >> 3)];
    let sh = (c & 7) * 8;
    *w = (*w & !(0xff << sh)) | (v as u64) << sh;
}

/// Most keys [`RadixTree::get_le_batch`] walks side by side: enough lookups in
/// flight to cover a memory latency with the others' work.
pub const BATCH: usize = 16;

/// Per-class node counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeStats {
    pub nodes: [usize; 5],
    pub height: usize,
    pub keys: usize,
}

/// The root of a tree and its counters: with the nodes, the whole tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeParts {
    pub root: RelPtr,
    pub root_shift: u32,
    pub len: usize,
    pub nodes: [usize; 5],
}

/// An adaptive radix tree mapping u64 keys to u64 values.
#[derive(Debug)]
pub struct RadixTree<A: NodeRead = LocalAlloc> {
    alloc: A,
    root: RelPtr,
    /// Shift of the root node's chunk: keys up to 2^(root_shift + 8) - 1 fit.
    root_shift: u32,
    len: usize,
    nodes: [usize; 5],
}

impl Default for RadixTree<LocalAlloc> {
    fn default() -> Self {
        Self::new()
    }
}

impl RadixTree<LocalAlloc> {
    pub fn new() -> Self {
        Self::with_alloc(LocalAlloc::new())
    }
}

/// Where a node's pointer is stored: the root, or word `1` of node `0`.
#[derive(Clone, Copy)]
enum Parent {
    Root,
    Slot(RelPtr, usize),
}

/// Where an exact descent ended without finding its key: the last node
/// read and its level (`node` is null when the key is above the tree's
/// range or the tree is empty).
#[derive(Clone, Copy)]
pub(crate) struct PathEnd {
    node: RelPtr,
    shift: u32,
}

/// Entries of one node gathered for a rebuild (grow or shrink; cold path).
struct Entries {
    chunks: [u8; 256],
    slots: [u64; 256],
    len: usize,
}

impl<A: NodeRead> RadixTree<A> {
    pub fn with_alloc(alloc: A) -> Self {
        RadixTree {
            alloc,
            root: RelPtr::NULL,
            root_shift: 0,
            len: 0,
            nodes: [0; 5],
        }
    }

    /// A tree over nodes that already exist in `alloc` (a shared tree
    /// opened by a reader): the parts [`parts`](Self::parts) returned.
    pub fn from_parts(alloc: A, parts: TreeParts) -> Self {
        RadixTree {
            alloc,
            root: parts.root,
            root_shift: parts.root_shift,
            len: parts.len,
            nodes: parts.nodes,
        }
    }

    /// What, besides the nodes, describes the tree.
    pub fn parts(&self) -> TreeParts {
        TreeParts {
            root: self.root,
            root_shift: self.root_shift,
            len: self.len,
            nodes: self.nodes,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn alloc(&self) -> &A {
        &self.alloc
    }

    pub fn alloc_mut(&mut self) -> &mut A {
        &mut self.alloc
    }

    /// Bytes held by the allocator (nodes and anything else the caller
    /// allocated through [`alloc_mut`](Self::alloc_mut)).
    pub fn memory_usage(&self) -> usize {
        self.alloc.memory_usage()
    }

    pub fn stats(&self) -> TreeStats {
        TreeStats {
            nodes: self.nodes,
            height: if self.root.is_null() {
                0
            } else {
                self.root_shift as usize / 8 + 1
            },
            keys: self.len,
        }
    }

    #[inline(always)]
    fn max_key(&self) -> u64 {
        // root_shift is at most 56: 2^(root_shift + 8) - 1 without a branch.
        u64::MAX >> (56 - self.root_shift)
    }

    // ---- lookup -------------------------------------------------------------

    /// The slot of chunk `c` in node `p`, if present. Reads the header
    /// once and does the kind's work inline: no call through a
    /// kind-generic accessor (seed 003's main cost in the first patch).
    ///
    /// Words are read through [`NodeRef`](crate::alloc::NodeRef): no
    /// bounds check per word (a lone lookup is bounded by its instruction
    /// count; see [`TidStore::contains`](crate::TidStore::contains)).
    #[inline(always)]
    fn step(&self, p: RelPtr, c: u8) -> Option<u64> {
        let n = self.alloc.node(p);
        let h = n.get(0);
        match hdr_kind(h) {
            KIND_4 => n4_find(h, c).map(|i| n.get(1 + i)),
            KIND_32 => simd::find_eq(n.array(1), hdr_count(h), c)
                .map(|i| n.get(n32_slots(hdr_class(h)) + i)),
            KIND_48 => match (n.get(N48_INDEX + (c as usize >> 3)) >> ((c & 7) * 8)) as u8 {
                0 => None,
                i => Some(n.get(N48_SLOTS + i as usize - 1)),
            },
            _ => {
                let set = n.get(ISSET + (c as usize >> 6)) >> (c & 63) & 1 != 0;
                set.then(|| n.get(N256_SLOTS + c as usize))
            }
        }
    }

    /// The value stored under `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u64> {
        self.descend(key).ok()
    }

    /// The exact descent shared by [`get`](Self::get) and
    /// [`get_le`](Self::get_le): the value under `key`, or where the path
    /// ended, from which [`get_le_after`](Self::get_le_after) finishes a
    /// predecessor search without walking down again.
    #[inline(always)]
    pub(crate) fn descend(&self, key: u64) -> Result<u64, PathEnd> {
        if self.root.is_null() || key > self.max_key() {
            return Err(PathEnd {
                node: RelPtr::NULL,
                shift: 0,
            });
        }
        let mut p = self.root;
        let mut shift = self.root_shift;
        loop {
            let Some(slot) = self.step(p, (key >> shift) as u8) else {
                return Err(PathEnd { node: p, shift });
            };
            if shift == 0 {
                return Ok(slot);
            }
            p = RelPtr(slot);
            shift -= 8;
        }
    }

    /// [`get_le`](Self::get_le) of `key` once [`descend`](Self::descend)
    /// found no entry under it and ended at `end`. The nearest smaller
    /// entry is most often under a smaller chunk of that last node, which
    /// the descent just read; only when there is none does the search start
    /// over and walk back up ([`get_le_walk`](Self::get_le_walk)).
    #[inline]
    pub(crate) fn get_le_after(&self, key: u64, end: PathEnd) -> Option<(u64, u64)> {
        if end.node.is_null() {
            return self.get_le_walk(key);
        }
        let c = (key >> end.shift) as u8;
        match c.checked_sub(1).and_then(|c| self.chunk_le(end.node, c)) {
            Some((ch, slot)) => Some(self.below(key, end.shift, ch, slot)),
            None => self.get_le_walk(key),
        }
    }

    /// [`get_le`](Self::get_le) for up to [`BATCH`] keys at once:
    /// `out[i] = self.get_le(keys[i])`.
    ///
    /// The keys walk their exact paths side by side, one level per round.
    /// After a key steps to a child, the child's header line and the line
    /// its slot would occupy if the child is a 256-way node are prefetched;
    /// the other keys' steps of that round hide the latency. So a batch pays
    /// about one memory latency per level rather than one per key and
    /// level. A key whose path ends early finishes at once, as
    /// [`get_le`](Self::get_le) does, from the node where it ended (in
    /// cache: the walk just read it).
    pub fn get_le_batch(&self, keys: &[u64], out: &mut [Option<(u64, u64)>]) {
        assert!(keys.len() == out.len() && keys.len() <= BATCH);
        out.fill(None);
        if self.root.is_null() {
            return;
        }
        let max = self.max_key();
        let mut node = [RelPtr::NULL; BATCH];
        let mut live = 0u32;
        for (i, &k) in keys.iter().enumerate() {
            if k <= max {
                node[i] = self.root;
                live |= 1 << i;
            } else {
                out[i] = self.get_le_walk(k);
            }
        }
        let mut shift = self.root_shift;
        loop {
            let mut m = live;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let c = (keys[i] >> shift) as u8;
                match self.step(node[i], c) {
                    None => {
                        live &= !(1 << i);
                        let end = PathEnd {
                            node: node[i],
                            shift,
                        };
                        out[i] = self.get_le_after(keys[i], end);
                    }
                    Some(slot) if shift == 0 => out[i] = Some((keys[i], slot)),
                    Some(slot) => {
                        let child = RelPtr(slot);
                        let next = (keys[i] >> (shift - 8)) as u8;
                        self.alloc.prefetch(child, 0);
                        self.alloc.prefetch(child, N256_SLOTS + next as usize);
                        node[i] = child;
                    }
                }
            }
            if shift == 0 || live == 0 {
                break;
            }
            shift -= 8;
        }
    }

    /// The entry with the greatest key `<= key` (predecessor search).
    ///
    /// One pass down the exact path, as [`get`](Self::get) walks it: a key
    /// that is present costs no more than `get`. Where the path ends, the
    /// largest smaller chunk of that node (in cache: the walk just read it)
    /// leads to the answer, which is that child's subtree maximum. Only
    /// when the node has no smaller chunk does the search start over from
    /// the root, keeping the path this time, and walk back up it. The
    /// TidStore's lookups mostly end on the exact path or in the node where
    /// it ends.
    #[inline]
    pub fn get_le(&self, key: u64) -> Option<(u64, u64)> {
        match self.descend(key) {
            Ok(v) => Some((key, v)),
            Err(end) => self.get_le_after(key, end),
        }
    }

    /// The greatest entry under chunk `ch` of the node at level `shift` on
    /// `key`'s path (whose slot is `slot`): `key`'s bits above the level,
    /// `ch`, then the subtree's maximum.
    #[inline]
    fn below(&self, key: u64, shift: u32, ch: u8, slot: u64) -> (u64, u64) {
        let above = if shift >= 56 {
            0
        } else {
            key & !((1u64 << (shift + 8)) - 1)
        };
        let prefix = above | u64::from(ch) << shift;
        if shift == 0 {
            (prefix, slot)
        } else {
            self.max_rec(RelPtr(slot), shift - 8, prefix)
        }
    }

    /// [`get_le`](Self::get_le) for any key: one pass down the exact path,
    /// remembering the nodes passed, then from the deepest node up, the
    /// largest chunk below the key's chunk and the maximum of its subtree.
    #[inline(never)]
    fn get_le_walk(&self, key: u64) -> Option<(u64, u64)> {
        if self.root.is_null() {
            return None;
        }
        let key = key.min(self.max_key());
        let mut path = [RelPtr::NULL; 8];
        let mut depth = 0;
        let mut p = self.root;
        let mut shift = self.root_shift;
        loop {
            path[depth] = p;
            depth += 1;
            match self.step(p, (key >> shift) as u8) {
                Some(v) if shift == 0 => return Some((key, v)),
                Some(v) => {
                    p = RelPtr(v);
                    shift -= 8;
                }
                None => break,
            }
        }
        // Walk back up for the nearest smaller sibling.
        while depth > 0 {
            depth -= 1;
            let c = (key >> shift) as u8;
            if c > 0 {
                if let Some((ch, slot)) = self.chunk_le(path[depth], c - 1) {
                    return Some(self.below(key, shift, ch, slot));
                }
            }
            shift += 8;
        }
        None
    }

    /// The largest chunk of node `p` (never empty) and its slot: for the
    /// sorted kinds the entry at `count - 1`, no search.
    #[inline]
    fn last_entry(&self, p: RelPtr) -> (u8, u64) {
        let n = self.alloc.node(p);
        let h = n.get(0);
        let last = hdr_count(h) - 1;
        match hdr_kind(h) {
            KIND_4 => (n4_chunk(h, last), n.get(1 + last)),
            KIND_32 => (
                simd::chunk(n.array(1), last),
                n.get(n32_slots(hdr_class(h)) + last),
            ),
            _ => self.chunk_le(p, 255).expect("inner nodes are never empty"),
        }
    }

    /// Largest chunk `<= c` in node `p` and its slot.
    #[inline]
    fn chunk_le(&self, p: RelPtr, c: u8) -> Option<(u8, u64)> {
        let n = self.alloc.words(p);
        let h = n[0];
        match hdr_kind(h) {
            KIND_4 => {
                let k = n4_count_le(h, c);
                (k > 0).then(|| (n4_chunk(h, k - 1), n[k]))
            }
            KIND_32 => {
                let ch = n32_chunks(n);
                let k = simd::count_le(ch, hdr_count(h), c);
                (k > 0).then(|| (simd::chunk(ch, k - 1), n[n32_slots(hdr_class(h)) + k - 1]))
            }
            KIND_48 => {
                let ch = isset_le(n, c)?;
                Some((ch, n[N48_SLOTS + n48_index(n, ch) - 1]))
            }
            _ => {
                let ch = isset_le(n, c)?;
                Some((ch, n[N256_SLOTS + ch as usize]))
            }
        }
    }

    fn max_rec(&self, mut p: RelPtr, mut shift: u32, mut prefix: u64) -> (u64, u64) {
        loop {
            let (ch, slot) = self.last_entry(p);
            prefix |= u64::from(ch) << shift;
            if shift == 0 {
                return (prefix, slot);
            }
            p = RelPtr(slot);
            shift -= 8;
        }
    }

    /// All entries of a node in chunk order (rebuilds and checks).
    fn entries(&self, p: RelPtr) -> Entries {
        let n = self.alloc.words(p);
        let h = n[0];
        let mut e = Entries {
            chunks: [0; 256],
            slots: [0; 256],
            len: 0,
        };
        let count = hdr_count(h);
        match hdr_kind(h) {
            KIND_4 => {
                for i in 0..count {
                    e.chunks[i] = n4_chunk(h, i);
                    e.slots[i] = n[1 + i];
                }
                e.len = count;
            }
            KIND_32 => {
                let ch = chunk_bytes(n32_chunks(n));
                let base = n32_slots(hdr_class(h));
                e.chunks[..count].copy_from_slice(&ch[..count]);
                e.slots[..count].copy_from_slice(&n[base..base + count]);
                e.len = count;
            }
            kind => {
                let mut c = 0;
                while let Some(ch) = isset_ge(n, c) {
                    e.chunks[e.len] = ch;
                    e.slots[e.len] = if kind == KIND_48 {
                        n[N48_SLOTS + n48_index(n, ch) - 1]
                    } else {
                        n[N256_SLOTS + ch as usize]
                    };
                    e.len += 1;
                    c = ch as usize + 1;
                }
            }
        }
        e
    }

    // ---- iteration ----------------------------------------------------------

    /// All entries in key order.
    pub fn iter(&self) -> Iter<'_, A> {
        let mut it = Iter {
            tree: self,
            stack: [(RelPtr::NULL, 0); 8],
            depth: 0,
            key: 0,
        };
        if !self.root.is_null() {
            it.stack[0] = (self.root, 0);
            it.depth = 1;
        }
        it
    }

    /// Next entry of node `p` at or after position `pos` (an index for the
    /// linear kinds, a chunk for the others): (next position, chunk, slot).
    fn next_entry(&self, p: RelPtr, pos: usize) -> Option<(usize, u8, u64)> {
        let n = self.alloc.words(p);
        let h = n[0];
        let count = hdr_count(h);
        match hdr_kind(h) {
            KIND_4 => (pos < count).then(|| (pos + 1, n4_chunk(h, pos), n[1 + pos])),
            KIND_32 => (pos < count).then(|| {
                (
                    pos + 1,
                    simd::chunk(n32_chunks(n), pos),
                    n[n32_slots(hdr_class(h)) + pos],
                )
            }),
            KIND_48 => {
                let c = isset_ge(n, pos)?;
                Some((c as usize + 1, c, n[N48_SLOTS + n48_index(n, c) - 1]))
            }
            _ => {
                let c = isset_ge(n, pos)?;
                Some((c as usize + 1, c, n[N256_SLOTS + c as usize]))
            }
        }
    }

    /// Check the structural invariants (tests).
    pub fn check_invariants(&self) {
        let mut count = 0;
        let mut nodes = [0; 5];
        if !self.root.is_null() {
            self.check_node(self.root, self.root_shift, &mut count, &mut nodes);
        }
        assert_eq!(count, self.len);
        assert_eq!(nodes, self.nodes);
    }

    fn check_node(&self, p: RelPtr, shift: u32, keys: &mut usize, nodes: &mut [usize; 5]) {
        let h = self.alloc.words(p)[0];
        let class = hdr_class(h);
        nodes[class] += 1;
        assert_eq!(hdr_kind(h), CLASSES[class].0);
        let count = hdr_count(h);
        assert!(
            count >= 1 && count <= CLASSES[class].1,
            "count {count} class {class}"
        );
        let e = self.entries(p);
        assert_eq!(e.len, count);
        assert!(e.chunks[..e.len].windows(2).all(|w| w[0] < w[1]));
        for i in 0..e.len {
            if shift == 0 {
                *keys += 1;
            } else {
                self.check_node(RelPtr(e.slots[i]), shift - 8, keys, nodes);
            }
        }
    }
}

impl<A: NodeAlloc> RadixTree<A> {
    fn new_node(&mut self, class: usize) -> RelPtr {
        let p = self.alloc.alloc(CLASSES[class].2);
        self.alloc.words_mut(p)[0] = header(class, 0);
        self.nodes[class] += 1;
        p
    }

    fn free_node(&mut self, p: RelPtr) {
        let class = hdr_class(self.alloc.words(p)[0]);
        self.nodes[class] -= 1;
        self.alloc.free(p, CLASSES[class].2);
    }

    fn set_parent(&mut self, parent: Parent, p: RelPtr) {
        match parent {
            Parent::Root => self.root = p,
            Parent::Slot(q, w) => self.alloc.words_mut(q)[w] = p.0,
        }
    }

    // ---- insert -------------------------------------------------------------

    /// Insert or replace; returns the previous value.
    pub fn insert(&mut self, key: u64, value: u64) -> Option<u64> {
        if self.root.is_null() {
            self.root_shift = 0;
            while key > self.max_key() {
                self.root_shift += 8;
            }
            self.root = self.new_node(CLASS_4);
        }
        while key > self.max_key() {
            // Grow the tree upwards: the old root becomes child 0.
            let old = self.root;
            let p = self.new_node(CLASS_4);
            let n = self.alloc.words_mut(p);
            n[0] = header(CLASS_4, 1);
            n[1] = old.0;
            self.root = p;
            self.root_shift += 8;
        }
        let mut p = self.root;
        let mut shift = self.root_shift;
        let mut parent = Parent::Root;
        loop {
            let c = (key >> shift) as u8;
            let n = self.alloc.words(p);
            let h = n[0];
            let word = match hdr_kind(h) {
                KIND_4 => n4_find(h, c).map(|i| 1 + i),
                KIND_32 => simd::find_eq(n32_chunks(n), hdr_count(h), c)
                    .map(|i| n32_slots(hdr_class(h)) + i),
                KIND_48 => match n48_index(n, c) {
                    0 => None,
                    i => Some(N48_SLOTS + i - 1),
                },
                _ => isset(n, c).then_some(N256_SLOTS + c as usize),
            };
            match word {
                Some(w) if shift == 0 => {
                    let n = self.alloc.words_mut(p);
                    let old = n[w];
                    n[w] = value;
                    return Some(old);
                }
                Some(w) => {
                    parent = Parent::Slot(p, w);
                    p = RelPtr(n[w]);
                    shift -= 8;
                }
                None => {
                    let child = self.chain(key, shift, value);
                    self.add_child(p, parent, c, child);
                    self.len += 1;
                    return None;
                }
            }
        }
    }

    /// A chain of one-entry kind-4 nodes holding `value` below level `shift`;
    /// returns what goes into the slot at level `shift`.
    fn chain(&mut self, key: u64, shift: u32, value: u64) -> u64 {
        let mut v = value;
        let mut s = 0;
        while s < shift {
            let p = self.new_node(CLASS_4);
            let n = self.alloc.words_mut(p);
            n[0] = header(CLASS_4, 1) | u64::from((key >> s) as u8) << 32;
            n[1] = v;
            v = p.0;
            s += 8;
        }
        v
    }

    /// Add chunk `c` (absent) with slot `v` to node `p`, growing it into the
    /// next size class when it is full.
    fn add_child(&mut self, p: RelPtr, parent: Parent, c: u8, v: u64) {
        let n = self.alloc.words_mut(p);
        let h = n[0];
        let count = hdr_count(h);
        let class = hdr_class(h);
        match hdr_kind(h) {
            KIND_4 if count < 4 => {
                let pos = n4_count_le(h, c);
                let mut chunks = ((h >> 32) as u32).to_le_bytes();
                chunks.copy_within(pos..3, pos + 1);
                chunks[pos] = c;
                n.copy_within(1 + pos..4, 2 + pos);
                n[1 + pos] = v;
                n[0] = header(CLASS_4, count + 1) | u64::from(u32::from_le_bytes(chunks)) << 32;
            }
            KIND_32 if count < CLASSES[class].1 => {
                let pos = simd::count_le(n32_chunks(n), count, c);
                let mut chunks = chunk_bytes(n32_chunks(n));
                let fanout = CLASSES[class].1;
                chunks.copy_within(pos..fanout - 1, pos + 1);
                chunks[pos] = c;
                for i in 0..fanout / 8 {
                    n[1 + i] = u64::from_le_bytes(chunks[8 * i..8 * i + 8].try_into().unwrap());
                }
                let base = n32_slots(class);
                n.copy_within(base + pos..base + count, base + pos + 1);
                n[base + pos] = v;
                set_count(n, count + 1);
            }
            KIND_48 if count < 48 => {
                let i = (!n[N48_USED]).trailing_zeros() as usize;
                n[N48_USED] |= 1 << i;
                n48_set_index(n, c, i + 1);
                n[ISSET + (c as usize >> 6)] |= 1 << (c & 63);
                n[N48_SLOTS + i] = v;
                set_count(n, count + 1);
            }
            KIND_256 => {
                n[ISSET + (c as usize >> 6)] |= 1 << (c & 63);
                n[N256_SLOTS + c as usize] = v;
                set_count(n, count + 1);
            }
            _ => {
                // Full: rebuild into the next class with the new entry.
                let mut e = self.entries(p);
                let pos = e.chunks[..e.len].partition_point(|&x| x < c);
                e.chunks.copy_within(pos..e.len, pos + 1);
                e.slots.copy_within(pos..e.len, pos + 1);
                e.chunks[pos] = c;
                e.slots[pos] = v;
                e.len += 1;
                let q = self.build(class + 1, &e);
                self.free_node(p);
                self.set_parent(parent, q);
            }
        }
    }

    /// A new node of `class` holding `e`.
    fn build(&mut self, class: usize, e: &Entries) -> RelPtr {
        let p = self.new_node(class);
        let n = self.alloc.words_mut(p);
        let len = e.len;
        debug_assert!(len <= CLASSES[class].1);
        match CLASSES[class].0 {
            KIND_4 => {
                let mut ch = [0u8; 4];
                ch[..len].copy_from_slice(&e.chunks[..len]);
                n[0] = header(class, len) | u64::from(u32::from_le_bytes(ch)) << 32;
                n[1..1 + len].copy_from_slice(&e.slots[..len]);
            }
            KIND_32 => {
                let fanout = CLASSES[class].1;
                for i in 0..fanout / 8 {
                    n[1 + i] = u64::from_le_bytes(e.chunks[8 * i..8 * i + 8].try_into().unwrap());
                }
                // Bytes past `len` are zero or stale: searches mask them.
                let base = n32_slots(class);
                n[base..base + len].copy_from_slice(&e.slots[..len]);
                n[0] = header(class, len);
            }
            KIND_48 => {
                for i in 0..len {
                    let c = e.chunks[i];
                    n[ISSET + (c as usize >> 6)] |= 1 << (c & 63);
                    n48_set_index(n, c, i + 1);
                    n[N48_SLOTS + i] = e.slots[i];
                }
                n[N48_USED] = if len == 64 {
                    u64::MAX
                } else {
                    (1u64 << len) - 1
                };
                n[0] = header(class, len);
            }
            _ => {
                for i in 0..len {
                    let c = e.chunks[i];
                    n[ISSET + (c as usize >> 6)] |= 1 << (c & 63);
                    n[N256_SLOTS + c as usize] = e.slots[i];
                }
                n[0] = header(class, len);
            }
        }
        p
    }

    // ---- delete -------------------------------------------------------------

    /// Remove `key`; returns its value.
    pub fn remove(&mut self, key: u64) -> Option<u64> {
        if self.root.is_null() || key > self.max_key() {
            return None;
        }
        // Path from the root: (node, where its pointer lives).
        let mut path: [(RelPtr, Parent); 8] = [(RelPtr::NULL, Parent::Root); 8];
        let mut depth = 0;
        let mut p = self.root;
        let mut shift = self.root_shift;
        let mut parent = Parent::Root;
        let value = loop {
            path[depth] = (p, parent);
            depth += 1;
            let n = self.alloc.words(p);
            let h = n[0];
            let c = (key >> shift) as u8;
            let w = match hdr_kind(h) {
                KIND_4 => 1 + n4_find(h, c)?,
                KIND_32 => n32_slots(hdr_class(h)) + simd::find_eq(n32_chunks(n), hdr_count(h), c)?,
                KIND_48 => match n48_index(n, c) {
                    0 => return None,
                    i => N48_SLOTS + i - 1,
                },
                _ => {
                    if !isset(n, c) {
                        return None;
                    }
                    N256_SLOTS + c as usize
                }
            };
            if shift == 0 {
                break n[w];
            }
            parent = Parent::Slot(p, w);
            p = RelPtr(n[w]);
            shift -= 8;
        };
        self.len -= 1;
        // Remove the entry bottom-up: a node that becomes empty is freed and
        // its entry removed from its parent; otherwise it may shrink.
        let mut level_shift = 0;
        while depth > 0 {
            depth -= 1;
            let (p, parent) = path[depth];
            let c = (key >> level_shift) as u8;
            let remaining = self.remove_chunk(p, c);
            if remaining > 0 {
                self.maybe_shrink(p, parent, remaining);
                return Some(value);
            }
            self.free_node(p);
            level_shift += 8;
        }
        self.root = RelPtr::NULL;
        self.root_shift = 0;
        Some(value)
    }

    /// Remove present chunk `c` from node `p`; returns the new count.
    fn remove_chunk(&mut self, p: RelPtr, c: u8) -> usize {
        let n = self.alloc.words_mut(p);
        let h = n[0];
        let count = hdr_count(h) - 1;
        match hdr_kind(h) {
            KIND_4 => {
                let pos = n4_find(h, c).expect("present");
                let mut chunks = ((h >> 32) as u32).to_le_bytes();
                chunks.copy_within(pos + 1..4, pos);
                n.copy_within(2 + pos..5, 1 + pos);
                n[0] = header(CLASS_4, count) | u64::from(u32::from_le_bytes(chunks)) << 32;
            }
            KIND_32 => {
                let class = hdr_class(h);
                let pos = simd::find_eq(n32_chunks(n), count + 1, c).expect("present");
                let mut chunks = chunk_bytes(n32_chunks(n));
                let fanout = CLASSES[class].1;
                chunks.copy_within(pos + 1..fanout, pos);
                for i in 0..fanout / 8 {
                    n[1 + i] = u64::from_le_bytes(chunks[8 * i..8 * i + 8].try_into().unwrap());
                }
                let base = n32_slots(class);
                n.copy_within(base + pos + 1..base + count + 1, base + pos);
                set_count(n, count);
            }
            KIND_48 => {
                let i = n48_index(n, c) - 1;
                n[N48_USED] &= !(1 << i);
                n48_set_index(n, c, 0);
                n[ISSET + (c as usize >> 6)] &= !(1 << (c & 63));
                set_count(n, count);
            }
            _ => {
                n[ISSET + (c as usize >> 6)] &= !(1 << (c & 63));
                n[N256_SLOTS + c as usize] = 0;
                set_count(n, count);
            }
        }
        count
    }

    fn maybe_shrink(&mut self, p: RelPtr, parent: Parent, count: usize) {
        let class = hdr_class(self.alloc.words(p)[0]);
        let to = match class {
            CLASS_256 if count <= SHRINK_256 => CLASS_48,
            CLASS_48 if count <= SHRINK_48 => CLASS_32,
            CLASS_32 if count <= SHRINK_32 => CLASS_16,
            CLASS_16 if count <= SHRINK_16 => CLASS_4,
            _ => return,
        };
        let e = self.entries(p);
        let q = self.build(to, &e);
        self.free_node(p);
        self.set_parent(parent, q);
    }
}

impl<A: NodeRead> Drop for RadixTree<A> {
    fn drop(&mut self) {
        // Nodes live in the allocator, which the tree owns and drops; a
        // shared backend would free them here by walking the tree.
    }
}

/// Ordered iterator over a [`RadixTree`].
pub struct Iter<'a, A: NodeRead> {
    tree: &'a RadixTree<A>,
    /// (node, next position) per level, root first.
    stack: [(RelPtr, usize); 8],
    depth: usize,
    key: u64,
}

impl<A: NodeRead> Iterator for Iter<'_, A> {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        while self.depth > 0 {
            let level = self.depth - 1;
            let (p, pos) = self.stack[level];
            let shift = self.tree.root_shift - 8 * level as u32;
            match self.tree.next_entry(p, pos) {
                None => self.depth -= 1,
                Some((next, c, slot)) => {
                    self.stack[level].1 = next;
                    self.key = (self.key & !(0xff << shift)) | u64::from(c) << shift;
                    if shift == 0 {
                        return Some((self.key, slot));
                    }
                    self.stack[self.depth] = (RelPtr(slot), 0);
                    self.depth += 1;
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One node grows through every class and shrinks back through them.
    #[test]
    fn grow_and_shrink_through_every_class() {
        let mut t = RadixTree::new();
        let mut seen = Vec::new();
        for k in 0..256u64 {
            // Spread the order so that inserts land in the middle too.
            let key = (k * 167) % 256;
            assert_eq!(t.insert(key, key + 1), None);
            t.check_invariants();
            let class = t.stats().nodes.iter().position(|&c| c == 1).unwrap();
            if seen.last() != Some(&class) {
                seen.push(class);
            }
        }
        assert_eq!(seen, vec![CLASS_4, CLASS_16, CLASS_32, CLASS_48, CLASS_256]);
        for k in 0..256u64 {
            assert_eq!(t.get(k), Some(k + 1));
            assert_eq!(t.get_le(k), Some((k, k + 1)));
        }
        let mut seen = Vec::new();
        for k in (0..256u64).rev() {
            assert_eq!(t.remove(k), Some(k + 1));
            t.check_invariants();
            if let Some(class) = t.stats().nodes.iter().position(|&c| c == 1) {
                if seen.last() != Some(&class) {
                    seen.push(class);
                }
            }
        }
        assert_eq!(seen, vec![CLASS_256, CLASS_48, CLASS_32, CLASS_16, CLASS_4]);
        assert!(t.is_empty());
        assert_eq!(t.stats().nodes, [0; 5]);
    }

    #[test]
    fn height_grows_for_large_keys_and_predecessor_crosses_subtrees() {
        let mut t = RadixTree::new();
        t.insert(5, 50);
        t.insert(u64::MAX, 1);
        t.insert(1 << 40, 2);
        assert_eq!(t.stats().height, 8);
        assert_eq!(t.get(5), Some(50));
        assert_eq!(t.get_le(u64::MAX - 1), Some((1 << 40, 2)));
        assert_eq!(t.get_le((1 << 40) - 1), Some((5, 50)));
        assert_eq!(t.get_le(4), None);
        let all: Vec<_> = t.iter().collect();
        assert_eq!(all, vec![(5, 50), (1 << 40, 2), (u64::MAX, 1)]);
    }
}
