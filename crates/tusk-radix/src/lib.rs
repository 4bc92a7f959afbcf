//! # tusk-radix: an adaptive radix tree and the TidStore built on it
//!
//! VACUUM collects the tuple ids (TIDs) of dead tuples while it scans a heap,
//! then removes every index entry that points at one of them. The second step
//! probes the set once per index entry, in index order — that is, at random
//! heap positions. PostgreSQL up to 16 kept the set as a sorted array of
//! 6-byte ItemPointers searched with `bsearch`: 6 bytes per TID however dense
//! the dead tuples are, a 1 GB cap, and ~20 cache-missing steps per probe.
//! PostgreSQL 17 replaced it with a radix tree keyed by block number whose
//! values are per-block offset bitmaps (the "TidStore", reviewed in seed 003).
//! This crate does the same, with two changes to the value encoding so that
//! sparse dead tuples cost less than the array did instead of more.
//!
//! ## The tree ([`RadixTree`])
//!
//! Keys are u64, consumed 8 bits (one *chunk*) per level from the most
//! significant non-zero byte down: the root's shift is the smallest multiple
//! of 8 that covers the largest key, so a TidStore keyed by 32-bit block
//! numbers is at most 4 levels deep, and 3 for tables under 16 M blocks. The
//! tree grows upwards when a larger key arrives (the old root becomes child 0
//! of a new kind-4 root). There is no path compression: with short, dense
//! keys it would only add a branch to every level.
//!
//! Values are u64 stored directly in the slots of the nodes at shift 0 — no
//! separate leaf allocation. Slots above shift 0 hold child pointers. A node
//! does not record whether it is a leaf: the level tells, and every walk
//! knows its level.
//!
//! ### Node kinds and size classes
//!
//! Seed 003 argues for exactly four node *kinds* (one search algorithm each)
//! and for size classes decoupled from kinds, so that memory can be tuned
//! without adding code paths. Ours (sizes in 8-byte words, as allocated):
//!
//! | class | kind | fanout | layout (words) | bytes | bytes/slot |
//! |---|---|---|---|---|---|
//! | n4   | 4   | 4   | header with 4 chunks in its top half, 4 slots | 40 | 10.0 |
//! | n16  | 32  | 16  | header, 16 chunks (2 words), 16 slots | 152 | 9.5 |
//! | n32  | 32  | 32  | header, 32 chunks (4 words), 32 slots | 296 | 9.25 |
//! | n48  | 48  | 48  | header, 256-bit isset map, 48-bit used-slot map, 256-byte index, 48 slots | 688 | 14.3 |
//! | n256 | 256 | 256 | header, 256-bit isset map, 256 slots | 2088 | 8.2 |
//!
//! The header word is `kind | class << 8 | count << 16` (kind 4 keeps its
//! chunks in bits 32..63). Why these classes:
//!
//! * Seed 003's loads (half the blocks, item ids below 64) produce leaves with
//!   anywhere from 1 to 32 children; with one class per kind they were split
//!   between node16 and node32 *kinds*, two code paths that mispredicted each
//!   other. Here 16 and 32 are two classes of one kind: the same code, the
//!   slot array found at `1 + fanout / 8`, and a half-full leaf costs 152 bytes
//!   rather than 296. Growth is 4 → 16 → 32 → 48 → 256, so a node is copied
//!   at most four times on its way to full.
//! * Kind 4 covers the long thin paths of sparse keys (the TidStore's list
//!   containers are keyed 128 TIDs apart), at 40 bytes.
//! * Kind 48 bridges 32 and 256: its index byte array makes lookup O(1) for
//!   nodes that a linear search of 48 would slow, at a third of n256's size.
//! * n256 is the densest per slot (8.2 B): a TidStore over every block of a
//!   table pays 8.2 bytes per block in the tree.
//!
//! Deletion shrinks a node when its count falls to 36 (n256 → n48), 24
//! (n48 → n32), 12 (n32 → n16) or 3 (n16 → n4); the gap between these and the
//! growth points means one key inserted and deleted repeatedly never makes a
//! node rebuild each time. An empty node is freed and removed from its parent;
//! an empty tree frees its root.
//!
//! ### Search without branches or generic calls
//!
//! Kind 32's chunks are sorted. Lookup compares all 32 chunk bytes with the
//! key at once (AVX2, or two SSE2 compares; see [`simd`]), masks off entries
//! at or beyond `count`, and takes `trailing_zeros` of the mask; insertion
//! finds its position, and predecessor search its answer, by counting the
//! chunks `<= key` the same way. For class n16 the 32 bytes read run into the
//! first slots, which is safe (same allocation) and masked. Kind 4 does the
//! same on its four header bytes with a SWAR zero-byte test. Kinds 48 and 256
//! need no search.
//!
//! Every walk (lookup, insert, delete, predecessor) reads the header once,
//! `match`es on the kind and then does that kind's work inline: there is no
//! `get_children`-style accessor that forgets the kind and asks again, which
//! seed 003 measured as the main cost of the first patch. Rebuilding a node
//! to another class (the cold path) does gather its entries generically.
//!
//! ### Memory: relative pointers and the allocator
//!
//! Nodes are runs of u64 words obtained from a [`NodeAlloc`] and named by a
//! 64-bit [`RelPtr`], never by a Rust reference: a slot holding a child holds
//! the child's RelPtr. The allocator is an [`Arena`] of 32 kB pages with
//! exact-size free lists, where a RelPtr is a word index (page number and
//! word) into the arena's page table. Where the pages come from is a
//! [`PageSource`]: the process heap ([`HeapPages`]; 2 MB huge-page runs for a
//! store created with a limit of 32 MB or more) or a DSA area
//! ([`DsaPages`]). Because nothing stored inside a node is an address, a
//! tree built in shared memory is read by another process that maps the
//! pages elsewhere, through its own page table. Reading needs only
//! [`NodeRead`] (a read-only view implements nothing else); the tree is
//! generic over it, so each backend gets a monomorphised hot path with no
//! indirect call.
//!
//! Invariants (checked by `check_invariants` in the tests): every node's
//! count is between 1 and its fanout; chunks of the linear kinds are sorted
//! and unique; the isset map of kinds 48 and 256 has exactly `count` bits and
//! kind 48's index names distinct used slots; all leaves sit at shift 0.
//!
//! ## The TidStore ([`TidStore`])
//!
//! A set of (block, offset) filled one block at a time in ascending block
//! order, as VACUUM's heap scan produces it. The tree's key is a block number
//! (so at most 4 levels, 3 below 16 M blocks) and its value is a tagged word:
//!
//! * bit 0 set — **inline bitmap**: offsets 1..=63 of the key's block, offset
//!   `o` in bit `o` (line pointers start at 1, which frees bit 0 for the
//!   tag). A page whose dead line pointers are all below 64 costs one slot,
//!   and a lookup ends in the leaf.
//! * low bits `10` — **bitmap chunk**: a pointer (bits 9..) and a word count
//!   (bits 2..8) to a per-block bitmap of `max_offset / 64 + 1` words.
//! * low bits `00` — **list container**: a pointer (bits 2..) to up to 128
//!   TIDs of one or more consecutive-in-the-store blocks, keyed by the first
//!   block. Each entry is `(block - key) << ob | offset`, bit-packed at
//!   `db + ob` bits, where `db` and `ob` are the bit widths of the largest
//!   block delta and offset in the container (stored in its header word). At
//!   one dead tuple per page a container spans 128 blocks and entries are
//!   7 + 9 = 16 bits; at one in 100 pages, 14 + 9 = 23 bits; at worst
//!   32 + 12 = 44 bits.
//!
//! A block gets its own key (inline or bitmap) when that costs at most 4
//! bytes per TID, `base + 8 * bitmap_words + penalty <= 4 * n` (no bitmap
//! words for inline), or when it has more than 128 TIDs. A list entry costs
//! less (1.2 to 3 bytes), but an own key is looked up with one walk and one
//! cache miss, a listed TID with a predecessor search and a second miss.
//! `base` prices the tree: 16 bytes when the key shares a leaf with the
//! previous key, 64 when it needs a new leaf, 112 when it needs two new
//! nodes. `penalty` is 16 bytes when the block would close an open list of
//! fewer than 16 entries early (that list's header and slot are then spread
//! over few TIDs). So a page with 4 or more dead tuples among the first 63
//! next to another such page gets an inline key — the fast lookup — and
//! sparser pages go to lists, which keep the memory bounds.
//! `tests/memory.rs` holds the adversarial mixes (a one-TID list closed by
//! every other page, dense pages alone in their part of the block space)
//! that keep the rule under 6 bytes per TID. List entries are gathered in a
//! small open buffer until 128 are reached or an own-key block arrives;
//! lookups check that buffer too.
//!
//! A lookup ([`TidStore::contains`]) first walks the exact path of its
//! block; when that ends on an inline bitmap (most probes of a typical
//! store) a branch-free bit test is the answer. Otherwise the walk becomes
//! a predecessor search (the greatest key `<=` block) from the node where
//! it ended: that node's largest smaller chunk, or, rarely, a step back up
//! to the nearest smaller sibling. Then a bit test or a branch-light binary
//! search of at most 7 steps over the packed entries. The short first path
//! matters more than it looks: with shuffled probes each lookup waits for
//! about one cache miss, and the misses of consecutive lookups overlap only
//! if a lookup takes few enough instructions for the next one to start
//! inside the processor's out-of-order window
//! (`bench/results/tidstore-lookup-floor.md`).
//!
//! [`TidStore::contains_batch`] answers many probes at once — what VACUUM's
//! index pass wants for the TIDs of one index page. Sixteen probes walk the
//! tree side by side ([`RadixTree::get_le_batch`]), one level per round; each
//! step prefetches the child's header line and the line its slot occupies
//! if the child is a 256-way node, and containers are prefetched before
//! they are searched. With shuffled probes a lone lookup waits for one
//! cache miss after another; the batch overlaps sixteen of them.
//!
//! Memory per TID ([`TidStore::memory_usage`] counts the memory the arena
//! holds, so it is what the caller compares with `maintenance_work_mem`; the
//! test `tests/memory.rs` asserts these):
//!
//! | pattern | bound (issue 7) | measured |
//! |---|---|---|
//! | whole pages dead (291/page) | 0.2 | 0.17 (40 B bitmap + 8.2 B tree per page) |
//! | 30 dead of a 60-tuple page | 0.8 | 0.30 (inline bitmap) |
//! | 1, 2, 3 dead per page | 3 | 2.3, 2.1, 2.3 (lists of 16-bit entries) |
//! | 1 dead in 5 % / 1 % of pages | 5 | 3.2 / 3.8 |
//! | 1 dead per 65 536 pages, offsets to 2048 | 6 | 5.3 (34-bit entries) |
//! | 1-2 dead on 5 % of 100 000 pages (7 561 TIDs) | 6 | 3.5 |
//! | adversarial mixes (see the test) | 6 | 1.7 to 5.3 |
//!
//! PostgreSQL 17, for comparison, spends a tree slot plus a bitmap header per
//! block, about 8 bytes per TID at one dead tuple per page.
//!
//! The store's fixed cost (the open list's 1 kB buffer, the arena's
//! bookkeeping) is included. Small stores are charged by the 4 kB pages the
//! arena has written, not by whole 32 kB arena pages (see [`HeapPages`]),
//! so the bounds hold from a few thousand TIDs up; a store of a few hundred
//! TIDs costs more per TID than the array would. A store created
//! with [`TidStore::with_limit`] of 32 MB or more takes its memory in 2 MB
//! huge-page runs and counts each run whole, so it is up to 2 MB (at most
//! 1/16 of its limit) above these figures; in exchange its random lookups
//! rarely miss the TLB.
//!
//! ## The shared variant ([`shared`])
//!
//! [`TidStore::new_shared`] builds the same store with its pages in a
//! `tusk-shmem` DSA area; [`TidStore::try_add_block`] reports a full area as
//! [`OutOfMemory`] and leaves the store unchanged. [`TidStore::publish`]
//! completes it and returns a [`SharedHandle`] (a DSA pointer to its header);
//! [`TidStore::open_shared`] gives any thread, or another process that
//! attached the area's segments, a read-only view that reads without locks.
//! Publication is one `Release` store of the header's flag after every node,
//! the page table and the header fields are written; opening is the
//! matching `Acquire` load, and the builder is consumed by `publish`, so
//! nothing changes afterwards (`publish.rs` has the loom model). The module
//! documentation of [`shared`] has the details.
//!
//! ## Speed (`cargo bench -p tusk-radix`)
//!
//! The bench binary loads the same TIDs into the store, PostgreSQL 15's
//! sorted array of 6-byte ItemPointers (searched as `lazy_tid_reaped` does),
//! `roaring::RoaringTreemap` and a hash map of per-block bitmaps, and probes
//! them with the same sequence in alternating rounds, timing the probing
//! thread's CPU time; `bench/results/tidstore-latest.md` holds the last full
//! run. On seed 003's load (1 M blocks, half of them with 1 to 32 dead among
//! the first 63; 8.25 M TIDs, every one probed, shuffled), on a shared
//! 2-core VM (three full runs, load average 4 to 9): the array 555 to 660
//! ns per lookup, the store 93 to 146 ns with `contains` (4.5x to 6.4x) and
//! 38 ns with `contains_batch` in the last run (14.5x; 11x to 14x before
//! `get_le_batch` finished predecessor searches in the leaf), at 1.3 bytes
//! per TID (1.5 counting whole huge-page runs) against 6. A lone lookup
//! costs about one cache miss (the leaf); the array costs several, but not
//! ten. Since `contains` answers inline bitmaps after an exact descent of
//! ~170 instructions (250 before), consecutive lone lookups overlap their
//! misses better: on a quieter machine 34 to 37 ns against 38 to 53 ns
//! before, 10.5x to 11.4x the array (`tidstore-lookup-floor.md`). Dense
//! pages (30 to 291 dead) give 4x to 16x single and up to 27x batched.
//! With sparse dead tuples (1 to 8 per page) on a table small enough for
//! the array to stay in cache, the array is about as fast as the store.

pub mod alloc;
pub mod publish;
#[cfg(not(tusk_radix_loom))]
pub mod shared;
pub mod simd;
pub mod tidstore;
pub mod tree;

pub use alloc::{
    Arena, HeapPages, LocalAlloc, NodeAlloc, NodeRead, NodeRef, OutOfMemory, PageSource, RelPtr,
    HUGE_MIN_LIMIT,
};
#[cfg(not(tusk_radix_loom))]
pub use shared::{
    destroy_shared, DsaAlloc, DsaMap, DsaPages, OpenError, SharedHandle, SharedPages,
    SharedTidStore,
};
pub use tidstore::{Tid, TidIter, TidStore, MAX_OFFSET};
pub use tree::{RadixTree, TreeParts, TreeStats, BATCH};
