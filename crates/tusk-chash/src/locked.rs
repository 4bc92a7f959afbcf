//! The lock-based baselines: PostgreSQL's partitioned table and one global lock.
//!
//! Both are one type, [`PartitionedTable`], with 128 partitions or one. They
//! live in process-local heap memory (std `HashMap`s behind `RwLock`s): they
//! exist to be measured against, and a heap table is the most favourable
//! version of them (no shared-memory indirection), so the comparison is fair
//! to the baseline.

use crate::{stats, BufferMapping, BufferTag};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

/// Number of partitions, as in PostgreSQL (`NUM_BUFFER_PARTITIONS`).
pub const NUM_PARTITIONS: usize = 128;

/// A hasher that passes the precomputed [`BufferTag::hash`] through.
#[derive(Default)]
pub struct TagHasher(u64);

impl Hasher for TagHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = crate::mix64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A key whose `Hash` feeds the tag's hash straight to a [`TagHasher`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HashedTag(pub BufferTag);

impl std::hash::Hash for HashedTag {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash());
    }
}

type Partition = RwLock<HashMap<HashedTag, u32, BuildHasherDefault<TagHasher>>>;

/// A hash table split into partitions by hash, one reader-writer lock each:
/// PostgreSQL's buffer table with 128 partitions ([`PartitionedTable::new`]),
/// or a single global lock ([`PartitionedTable::global`]).
pub struct PartitionedTable {
    partitions: Box<[Partition]>,
    name: &'static str,
}

impl PartitionedTable {
    /// PostgreSQL's design: 128 partitions, sized for `capacity` entries in total.
    pub fn new(capacity: usize) -> PartitionedTable {
        Self::with_partitions(capacity, NUM_PARTITIONS, "partitioned")
    }

    /// One partition: every operation takes the same lock.
    pub fn global(capacity: usize) -> PartitionedTable {
        Self::with_partitions(capacity, 1, "global")
    }

    fn with_partitions(capacity: usize, n: usize, name: &'static str) -> PartitionedTable {
        let per_partition = capacity.div_ceil(n);
        let partitions = (0..n)
            .map(|_| {
                RwLock::new(HashMap::with_capacity_and_hasher(
                    per_partition,
                    BuildHasherDefault::default(),
                ))
            })
            .collect();
        PartitionedTable { partitions, name }
    }

    #[inline]
    fn partition(&self, hash: u64) -> &Partition {
        // Low bits pick the partition, as PostgreSQL's BufTableHashPartition does.
        &self.partitions[(hash as usize) % self.partitions.len()]
    }
}

impl BufferMapping for PartitionedTable {
    #[inline]
    fn lookup(&self, tag: &BufferTag) -> Option<u32> {
        let part = self
            .partition(tag.hash())
            .read()
            .unwrap_or_else(|e| e.into_inner());
        let found = part.get(&HashedTag(*tag)).copied();
        stats::lookup(found.is_some(), 1);
        found
    }

    fn insert(&self, tag: &BufferTag, buffer: u32) -> Result<(), u32> {
        let mut part = self
            .partition(tag.hash())
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let r = match part.entry(HashedTag(*tag)) {
            std::collections::hash_map::Entry::Occupied(e) => Err(*e.get()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(buffer);
                Ok(())
            }
        };
        stats::insert(r.is_err());
        r
    }

    fn remove(&self, tag: &BufferTag, buffer: u32) -> bool {
        let mut part = self
            .partition(tag.hash())
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let key = HashedTag(*tag);
        if part.get(&key) == Some(&buffer) {
            part.remove(&key);
            stats::delete();
            true
        } else {
            false
        }
    }

    fn name(&self) -> &'static str {
        self.name
    }
}
