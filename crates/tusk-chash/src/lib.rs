//! # tusk-chash: the buffer mapping table
//!
//! The buffer manager must answer "which buffer holds page (relation, fork,
//! block), if any?" on every page access. This crate owns that table. It has
//! three implementations behind one trait, [`BufferMapping`]:
//!
//! * [`ChashTable`] ("chash", the default): lookups take no lock and do no
//!   read-modify-write atomic; it lives in caller-provided memory (an area of
//!   the engine's main shared region) and is position independent.
//! * [`PartitionedTable::new`] ("partitioned"): PostgreSQL's design, 128 hash
//!   partitions with a reader-writer lock each.
//! * [`PartitionedTable::global`] ("global"): one reader-writer lock.
//!
//! The two lock-based baselines stay in process-local heap memory (see
//! `locked.rs`); they exist to be measured against.
//!
//! ## Contract
//!
//! * [`BufferMapping::lookup`] may return an answer that is already stale when
//!   the caller uses it: another thread can evict the page right after the
//!   lookup, or the lookup may run concurrently with the insert that maps the
//!   page and miss it. Callers therefore pin the buffer and then re-check the
//!   tag stored in the buffer descriptor; on a mismatch they unpin and retry.
//!   A miss is resolved by inserting, which is exact (next point).
//! * [`BufferMapping::insert`] of a tag that is present returns the buffer id
//!   already mapped (`Err(existing)`), so two backends that miss on the same
//!   page at once agree on one buffer.
//! * [`BufferMapping::remove`] removes a tag only if it maps to the given id.
//! * A tag may be mapped to at most one buffer; a buffer may be mapped by two
//!   tags for a moment (the eviction path inserts the new tag before it removes
//!   the old one), so the table is sized for `nbuffers` plus slack.
//!
//! ## Why this design
//!
//! The 2014 chash patch (seed 002) made lookups lock-free with chained buckets,
//! hazard pointers and full memory barriers. It doubled read-only throughput at
//! high client counts but lost 0.5–4 % at one client: a chain walk costs a
//! cache miss per element, and the barriers cost on every lookup. The thread
//! then proposed open addressing and a bucketized cuckoo table with a seqlock
//! per bucket. We take the cheapest read path we know of:
//!
//! * **One cache line per lookup.** A bucket is one 64-byte line holding a
//!   4-byte header and five (key, value) pairs: the key word is `rel << 32 |
//!   block` (8 bytes), the value word is `buffer id + 1` in 29 bits with the fork
//!   in the top 3 (4 bytes, 0 = empty). The full tag is in the table, so a
//!   lookup never reads a second line to confirm a match (a fingerprint-only
//!   table would read the buffer descriptor or a key array to confirm, and
//!   `insert` must be exact). With `capacity / 3` home buckets the table is at
//!   most 60 % full, and fewer than one lookup in ten goes on to the next,
//!   adjacent line (which the hardware's adjacent-line prefetcher often has).
//! * **No writes by readers.** A reader loads the bucket header, the slots and
//!   the header again (a seqlock). On x86 those are plain loads; the fences are
//!   compiler barriers. PostgreSQL's partition lock costs two atomic
//!   read-modify-writes on a line every backend shares.
//! * **No moves.** Cuckoo hashing needs relocation, and relocation makes a
//!   reader that looks in two buckets able to miss a key that moves between
//!   them. We use linear probing over buckets instead, so an entry stays in
//!   the slot where it was inserted until it is removed; no tombstones either
//!   (see overflow counts below).
//!
//! ## Layout
//!
//! ```text
//! [Meta: magic, capacity, home, total]           64 bytes
//! [bucket 0][bucket 1] ... [bucket home-1]        keys hash to these
//! [tail: 8 + home/64 buckets]                     overflow only, no wrap-around
//! bucket = hdr:u32 | val[5]:u32 | key[5]:u64      64 bytes, one cache line
//! hdr    = locked:1 | seq:23 | overflow:8
//! ```
//!
//! The memory contains no pointers, only integers; a [`ChashTable`] is a
//! process-local handle (base address plus geometry). [`ChashTable::init`]
//! builds a table in memory the caller provides, [`ChashTable::attach`] opens
//! one that another process built. Nothing is allocated after `init`.
//!
//! A tag's *home bucket* is `(hash >> 32) * home >> 32`. An entry lives in its
//! home bucket or, if that was full when it was inserted, in the first bucket
//! after it with a free slot. The probe never wraps: past the last home bucket
//! there is a tail of spare buckets, and an insert that runs off the end panics
//! ("table is full"), which at 60 % load needs far more entries than capacity.
//!
//! ## Overflow counts
//!
//! The header's overflow count of bucket `b` is (at least) the number of
//! entries stored after `b` whose probe passed over `b`, i.e. whose home is at
//! or before `b`. An insert that finds `b` full increments `b`'s count before
//! it moves on; a remove clears the entry first and decrements the counts of
//! the buckets from its home up to the entry afterwards. So while an entry is
//! present, every bucket between its home and its slot has a non-zero count,
//! and a lookup stops at the first bucket with count zero. Counts saturate at
//! 255 and then stay there (a lookup just probes further), so they never
//! underflow.
//!
//! ## Locking
//!
//! Writers lock buckets: bit 0 of the header, taken with a CAS. An insert or
//! remove of tag `t` holds the lock of `t`'s home bucket for its whole
//! duration, which serialises all writers of keys with that home; so once it
//! holds the home lock, `t`'s entry can neither appear, vanish nor move under
//! it, and "is `t` already present?" has a stable answer (found with the
//! lock-free read in buckets past the home). Other buckets are locked one at a
//! time while they are changed (hand over hand, never two besides the home).
//! Locks are only ever taken in increasing bucket order while holding a lower
//! one (the home), and the probe never wraps, so there is no deadlock.
//!
//! ## Memory ordering (the seqlock)
//!
//! Reader (`Bucket::read`):
//!
//! ```text
//! s1 = hdr.load(Acquire)           ; retry if locked
//! slots: val[i].load(Relaxed), key[i].load(Relaxed)
//! fence(Acquire)
//! s2 = hdr.load(Relaxed)           ; accept the snapshot iff s1 == s2
//! ```
//!
//! Writer: `hdr` CAS even→odd (Acquire), `fence(Release)`, slot stores
//! (Relaxed), `hdr.store(seq + 2 | overflow, Release)`.
//!
//! * A reader that accepts a snapshot read no slot value written by a writer
//!   whose critical section overlapped it. Suppose it read a slot store of
//!   writer W. W's `fence(Release)` precedes that store and the reader's
//!   `fence(Acquire)` follows its load, so the fences synchronise: W's odd
//!   header store happens before the reader's `s2` load, which therefore sees
//!   the odd header or a later one, never the even `s1` (the sequence only
//!   grows), so the reader retries.
//! * Conversely the `s1` acquire load synchronises with the release unlock of
//!   the last writer before it, so every slot store of finished writers is
//!   visible. The snapshot is exactly the bucket between two critical sections.
//! * All slot accesses are atomics (`Relaxed`), never plain memory, so a racing
//!   read is not undefined behaviour; it is just discarded.
//! * The overflow count is in the same word as the sequence, so it is read in
//!   the same snapshot as the slots.
//! * A writer that changed nothing restores the old header (`unlock_unchanged`);
//!   readers that straddled it see the same data and need not retry.
//! * Lookups across buckets: while an entry is present every bucket between
//!   its home and its slot has a non-zero count in every snapshot (counts go up
//!   before the entry appears and down after it is gone), so a lookup that
//!   starts after the insert finished and ends before the remove started finds
//!   it. A lookup concurrent with either may or may not; that is the stale
//!   answer the contract allows. Inserts are linearisable: the home lock is held
//!   from before the entry appears until the home count that leads to it is
//!   published, and readers of the home bucket wait while it is locked.
//! * The sequence has 23 bits: a reader would accept a torn snapshot only if
//!   2^23 writes to one bucket happened between its two header loads.
//!
//! On x86 every load is already an acquire and the fences compile to nothing,
//! so a lookup costs the hash, one cache line and a handful of compares.
//!
//! The loom models in `tests/loom.rs` check the read side against a writer
//! (torn entries, spilled entries, publication) on tiny tables; `.ci/loom`
//! runs them. Races between writers are mutual exclusion on the bucket
//! locks and are exercised by the multi-thread stress test instead (loom
//! cannot explore a spinning test-and-set lock).
//!
//! ## Statistics
//!
//! Every table counts lookups (and hits), inserts (and conflicts), deletes,
//! seqlock retries and probe lengths in per-thread counters (see [`stats`]);
//! the `stats` feature (default on) turns them off when disabled.

mod chash;
mod locked;
pub mod stats;
mod sync;

pub use chash::{ChashTable, MAX_BUFFER_ID, SLOTS};
pub use locked::{HashedTag, PartitionedTable, TagHasher, NUM_PARTITIONS};
pub use stats::{reset_thread_stats, thread_stats, Stats};

/// Which file of a relation a block belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Fork {
    Main = 0,
}

/// Identity of a disk page: relation file number, fork and block number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferTag {
    pub rel: u32,
    pub fork: Fork,
    pub block: u32,
}

impl BufferTag {
    pub fn new(rel: u32, block: u32) -> BufferTag {
        BufferTag {
            rel,
            fork: Fork::Main,
            block,
        }
    }

    /// A well-mixed 64-bit hash of the tag; every implementation uses this one.
    #[inline]
    pub fn hash(&self) -> u64 {
        let k = ((self.rel as u64) << 32 | self.block as u64) ^ ((self.fork as u64) << 61);
        mix64(k)
    }
}

/// A 64-bit finaliser (from the MurmurHash3/SplitMix family of mixers).
#[inline]
pub fn mix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// The narrow interface the buffer manager uses.
pub trait BufferMapping: Send + Sync {
    /// The buffer currently mapped for `tag`, if any (see the stale-answer contract).
    fn lookup(&self, tag: &BufferTag) -> Option<u32>;
    /// Maps `tag` to `buffer`; if `tag` is already mapped, returns `Err(existing)`.
    fn insert(&self, tag: &BufferTag, buffer: u32) -> Result<(), u32>;
    /// Removes the mapping `tag -> buffer`; returns whether it was there.
    fn remove(&self, tag: &BufferTag, buffer: u32) -> bool;
    /// Short name for EXPLAIN and benchmarks.
    fn name(&self) -> &'static str;
    /// A hint that `tag` will be looked up soon: the table may start
    /// bringing the memory that lookup reads into the CPU cache, so that a
    /// caller walking blocks in a known order (VACUUM) does not wait for it.
    /// No effect on any answer; the default does nothing.
    fn prefetch(&self, _tag: &BufferTag) {}
}

/// The implementations, as named by the `tusk.buffer_mapping` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MappingKind {
    #[default]
    Chash,
    Partitioned,
    Global,
}

impl MappingKind {
    pub const ALL: [MappingKind; 3] = [
        MappingKind::Chash,
        MappingKind::Partitioned,
        MappingKind::Global,
    ];

    pub fn parse(s: &str) -> Option<MappingKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "chash" => Some(MappingKind::Chash),
            "partitioned" => Some(MappingKind::Partitioned),
            "global" => Some(MappingKind::Global),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MappingKind::Chash => "chash",
            MappingKind::Partitioned => "partitioned",
            MappingKind::Global => "global",
        }
    }

    /// A table of this kind for `capacity` entries in process-local memory
    /// (the engine puts chash in its shared region instead; see `ChashTable::init`).
    pub fn build_local(self, capacity: usize) -> Box<dyn BufferMapping> {
        match self {
            MappingKind::Chash => Box::new(ChashTable::with_capacity(capacity)),
            MappingKind::Partitioned => Box::new(PartitionedTable::new(capacity)),
            MappingKind::Global => Box::new(PartitionedTable::global(capacity)),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
