//! # tusk-chash: the buffer mapping table
//!
//! The buffer manager must answer "which buffer holds page (relation, fork,
//! block), if any?" on every page access. This crate owns that table.
//!
//! ## Contract
//!
//! * [`BufferMapping::lookup`] may return an answer that is already stale when
//!   the caller uses it: another thread can evict the page right after the
//!   lookup. Callers therefore pin the buffer and then re-check the tag stored
//!   in the buffer descriptor; on a mismatch they unpin and retry.
//! * [`BufferMapping::insert`] of a tag that is present returns the buffer id
//!   already mapped (`Err(existing)`), so two backends that miss on the same page
//!   at once agree on one buffer.
//! * [`BufferMapping::remove`] removes a tag only if it maps to the given id.
//!
//! ## Implementations
//!
//! [`PartitionedTable`] is PostgreSQL's design: the key space is split into 128
//! partitions by hash, each a hash map behind a reader-writer lock. It is the
//! baseline that the lock-free table is measured against.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

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
}

/// Number of partitions, as in PostgreSQL (`NUM_BUFFER_PARTITIONS`).
pub const NUM_PARTITIONS: usize = 128;

#[derive(Default)]
struct TagHasher(u64);

impl Hasher for TagHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A key whose `Hash` feeds the precomputed tag hash straight to the map.
#[derive(PartialEq, Eq)]
struct HashedTag(BufferTag);

impl std::hash::Hash for HashedTag {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash());
    }
}

type Partition = RwLock<HashMap<HashedTag, u32, BuildHasherDefault<TagHasher>>>;

/// PostgreSQL's buffer table: 128 hash partitions, one reader-writer lock each.
pub struct PartitionedTable {
    partitions: Box<[Partition]>,
}

impl PartitionedTable {
    /// A table sized for `capacity` entries in total.
    pub fn new(capacity: usize) -> PartitionedTable {
        let per_partition = capacity.div_ceil(NUM_PARTITIONS);
        let partitions = (0..NUM_PARTITIONS)
            .map(|_| {
                RwLock::new(HashMap::with_capacity_and_hasher(
                    per_partition,
                    BuildHasherDefault::default(),
                ))
            })
            .collect();
        PartitionedTable { partitions }
    }

    fn partition(&self, tag: &BufferTag) -> &Partition {
        // Low bits pick the partition, as PostgreSQL's BufTableHashPartition does.
        &self.partitions[(tag.hash() as usize) % NUM_PARTITIONS]
    }
}

impl BufferMapping for PartitionedTable {
    fn lookup(&self, tag: &BufferTag) -> Option<u32> {
        let part = self
            .partition(tag)
            .read()
            .unwrap_or_else(|e| e.into_inner());
        part.get(&HashedTag(*tag)).copied()
    }

    fn insert(&self, tag: &BufferTag, buffer: u32) -> Result<(), u32> {
        let mut part = self
            .partition(tag)
            .write()
            .unwrap_or_else(|e| e.into_inner());
        match part.entry(HashedTag(*tag)) {
            std::collections::hash_map::Entry::Occupied(e) => Err(*e.get()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(buffer);
                Ok(())
            }
        }
    }

    fn remove(&self, tag: &BufferTag, buffer: u32) -> bool {
        let mut part = self
            .partition(tag)
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let key = HashedTag(*tag);
        if part.get(&key) == Some(&buffer) {
            part.remove(&key);
            true
        } else {
            false
        }
    }

    fn name(&self) -> &'static str {
        "partitioned"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_lookup_remove() {
        let t = PartitionedTable::new(100);
        let a = BufferTag::new(1, 7);
        assert_eq!(t.lookup(&a), None);
        assert_eq!(t.insert(&a, 3), Ok(()));
        assert_eq!(t.insert(&a, 4), Err(3));
        assert_eq!(t.lookup(&a), Some(3));
        assert!(!t.remove(&a, 4));
        assert!(t.remove(&a, 3));
        assert_eq!(t.lookup(&a), None);
    }

    #[test]
    fn concurrent_inserts_agree() {
        let t = std::sync::Arc::new(PartitionedTable::new(10_000));
        let handles: Vec<_> = (0..2u32)
            .map(|w| {
                let t = t.clone();
                std::thread::spawn(move || {
                    (0..5000u32)
                        .map(|b| match t.insert(&BufferTag::new(1, b), w) {
                            Ok(()) => w,
                            Err(e) => e,
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<Vec<u32>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for (b, (x, y)) in results[0].iter().zip(&results[1]).enumerate() {
            assert_eq!(x, y);
            assert_eq!(t.lookup(&BufferTag::new(1, b as u32)), Some(*x));
        }
    }
}
