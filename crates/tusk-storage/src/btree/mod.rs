//! B+tree indexes on one or more columns of any indexable type, in 8 kB
//! pages through the buffer manager.
//!
//! ## Keys
//!
//! The tree knows bytes, not types: an index key is a tuple of column
//! values encoded so that comparing the bytes compares the tuples in
//! PostgreSQL's order, with each column's ASC/DESC and NULLS FIRST/LAST
//! (`keyenc`). An index entry is the pair *(key bytes, heap TID)* and
//! entries are ordered by that pair, so every entry is unique even when
//! keys repeat: duplicates need no special pages, and VACUUM can find the
//! exact entry of a dead tuple. NULLs are indexed (they sort first or last
//! per column), so `IS NULL` and ORDER BY can use the index. An entry must
//! fit a third of a page, PostgreSQL's limit (`index`).
//!
//! ## Pages and the tree
//!
//! Block 0 is the *metapage*: it names the root block and the tree's
//! height. Every other page is a node with variable-length entries in
//! slotted form (`node`). Each page has a *high key*, an exclusive upper
//! bound of the entries it may hold (the rightmost page of a level has
//! none: +infinity), and a right link to its sibling. An internal entry
//! `(k, child)` says that `child` holds the entries from `k` up to the next
//! entry's key; the first entry of an internal page stands for the page's
//! lower bound and is never compared.
//!
//! ## Lehman–Yao
//!
//! Each level is a linked list through the right links. When a page splits,
//! its upper half moves to a new right sibling and the page's high key
//! becomes the first entry of that sibling *before* the separator reaches
//! the parent. A descent that lands on a page whose high key is not above
//! what it looks for just moves right (`search`). This is what makes the
//! tree correct for readers that run while a writer splits (they hold one
//! page lock at a time) and, as important here, what makes a split
//! crash-safe with one WAL record per page (`insert`).
//!
//! ## The parts
//!
//! * `keyenc`: the order-preserving encoding of typed values;
//! * `node`: the page layout;
//! * `search`: search targets and the descent;
//! * `rootcache`: each tree's root as scans last read it, so that a scan
//!   skips the metapage;
//! * `insert`: insertion, page splits, new roots;
//! * `batch`: sorted batches of insertions (bulk loads), one descent per
//!   leaf;
//! * `scan`: range scans forward and backward ([`Cursor`]);
//! * `sort`, `build`: bulk build (CREATE INDEX): the sort within
//!   `maintenance_work_mem`, then the levels bottom up;
//! * `vacuum`: VACUUM's bulk deletion through the dead-TID store;
//! * `unique`: unique checks that wait for in-progress writers, and the
//!   conflict lookup of INSERT ... ON CONFLICT;
//! * `index`: an index as the SQL layer uses it — definition, key
//!   encoding from rows, PostgreSQL's size limit and error messages.
//!
//! ## WAL
//!
//! `BtreeInsert` (position, TID, child, key bytes) for an insertion without
//! split, `BtreePage` (a whole page image) for each page a split, a new
//! root or a metapage update writes, `BtreeDelete` (positions, as a list
//! or a bitmap, whichever is smaller) for the entries VACUUM removes from
//! a leaf. The first change of a page after a checkpoint logs the page
//! instead (as heap changes do). The bulk build logs each page it writes
//! as an image. Records name entries by position, never by byte offset:
//! redo may place the bodies elsewhere on the page ([`redo`]).
//!
//! ## Locking
//!
//! Insertions into one index run one at a time: an insertion holds the
//! index's relation mutex ([`BufferPool::relation_mutex`]) for the descent,
//! any splits and, in a unique index, the uniqueness check before it, so
//! that the check and the insertion are one step for other inserters of
//! the same key (PostgreSQL gets the same from the leaf's exclusive lock).
//! The mutex is never held while waiting for another transaction. Readers
//! take page locks shared, one page at a time, and the inserter takes them
//! exclusive. VACUUM's bulk deletion takes the same mutex for each leaf it
//! cleans; it never removes pages. Lock order: index mutex, then index
//! pages, then heap pages (a unique check reads the heap).

mod batch;
mod build;
mod index;
mod insert;
pub mod keyenc;
mod node;
pub(crate) mod rootcache;
mod scan;
mod search;
mod sort;
mod unique;
mod vacuum;

pub use batch::BatchEntry;
pub use build::{BuildOutcome, IndexBuild};
pub use index::{describe_key, duplicate_key_error, unique_violation, Index, TupleKeys};
pub use keyenc::{ColumnOrder, Datum, Decimal, EncodedKey, KeyEncoder, KeyType};
pub use node::{MAX_KEY, NO_BLOCK};
pub use scan::{Cursor, Direction, ScanBounds};
pub use unique::{IndexWriter, InsertOutcome, StatementWriter};
pub use vacuum::BulkDeleteStats;

use crate::bufmgr::BufferPool;
use crate::wal::{BlockRef, RecordType};
use crate::StorageError;

/// The metapage's block number.
pub const META_BLOCK: u32 = 0;

/// Entries of a 4-byte key a leaf page holds (for cost estimates).
pub const LEAF_CAPACITY: usize = node::USABLE / node::entry_size(0, 5);
/// Entries of a 4-byte key an internal page holds (for cost estimates).
pub const INTERNAL_CAPACITY: usize = node::USABLE / node::entry_size(1, 5);

fn corrupt(rel: u32, block: u32) -> StorageError {
    StorageError::Other(format!(
        "index relation {rel} block {block} is not a btree page"
    ))
}

/// The tree of an index relation: entries of (key bytes, TID).
pub struct Btree<'p> {
    pool: &'p BufferPool,
    rel: u32,
}

impl<'p> Btree<'p> {
    pub fn new(pool: &'p BufferPool, rel: u32) -> Self {
        Btree { pool, rel }
    }

    pub fn rel(&self) -> u32 {
        self.rel
    }

    fn block_ref(&self, block: u32) -> BlockRef {
        BlockRef {
            rel: self.rel,
            block,
        }
    }
}

/// Redo of the btree record kinds other than page images (the page is
/// exclusively locked, its LSN is older than the record).
pub(crate) fn redo(kind: RecordType, p: &mut [u8], payload: &[u8]) -> Result<(), &'static str> {
    if !node::is_node(p) {
        return Err("not a btree page");
    }
    match kind {
        RecordType::BtreeInsert => insert::redo_insert(p, payload),
        RecordType::BtreeDelete => vacuum::redo_delete(p, payload),
        _ => Err("not a btree record"),
    }
}
