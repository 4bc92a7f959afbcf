//! The serial hash join's table: entries, the slot array over them, and
//! the builder that collects build rows.
//!
//! Build row *r* owns entry *r*. The entries are indexed by a *slot array*
//! (`slots`): open addressing over key *tags* — the key itself for `integer`
//! and `boolean` keys, else 32 bits of its hash — where each slot names the
//! first entry of the chain of all entries with its tag, and each entry links
//! to the next. For a single integer key an entry is `{key: i64, next: u32}`;
//! other keys keep their hash and an encoded byte key per entry. The slot
//! count is a power of two at least 4/3 of the row count. The join hands
//! the builder no row with a NULL key (those go to its side stores); one
//! that comes anyway is stored, so that payload row numbers stay aligned,
//! but never inserted into the slots.
//!
//! Probing reads a table through [`Chains`], which both this table and the
//! Parallel Hash Join's shared table (`shared_table`) implement.

use super::shared_table::{SharedTable, SharedView};
use super::slots::{AtomicU32, AtomicU64, SlotIndex};
use crate::hashkey::{encode_row, hash_bytes, hash_i64, int_key, is_int_key};
use crate::memory::batch_bytes;
use crate::vector::{Batch, Data, Vector};
use std::sync::atomic::AtomicU64 as StdAtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use tusk_storage::DataType;

pub(super) use tusk_shmem::prefetch_line;

/// The end of a chain.
pub(super) const EMPTY: u32 = 0;
/// Marks an entry whose key is NULL (never inserted into the slots).
const UNLINKED: u32 = u32::MAX;

/// How far ahead the build's linking pass prefetches home slots.
const LINK_PREFETCH_DISTANCE: usize = 16;

#[repr(C)]
pub(super) struct IntEntry {
    pub(super) key: i64,
    /// Next entry of the chain; an atomic so that probing reads every table
    /// through [`Chains`] (relaxed loads compile to plain loads).
    pub(super) next: AtomicU32,
}

pub(super) enum Entries {
    Int(Vec<IntEntry>),
    Bytes {
        hashes: Vec<u64>,
        next: Vec<AtomicU32>,
        offsets: Vec<u32>,
        arena: Vec<u8>,
    },
}

/// Bytes an encoded variable-width key (text, array) is taken to have in a
/// planner's estimate: its length word and PostgreSQL's default width of a
/// variable-width value, 32.
const VARIABLE_KEY_BYTES: f64 = 4.0 + 32.0;

/// What a table of `rows` build rows of `payload_width` bytes each (the
/// values as `batch_bytes` counts them), keyed on keys of `key_types`,
/// will take by [`TableBuilder::memory`]: entries, payload and slot array.
/// The planner uses it to foresee whether a join fits its
/// [`build_budget`](super::build_budget); an entry's key is encoded as
/// `hashkey::encode_row` encodes it, a variable-width one taken as
/// [`VARIABLE_KEY_BYTES`].
pub fn estimated_table_bytes(rows: f64, payload_width: f64, key_types: &[DataType]) -> f64 {
    let keys: Vec<Vector> = key_types.iter().map(|&t| Vector::empty(t)).collect();
    let entry = if is_int_key(&keys) {
        std::mem::size_of::<IntEntry>() as f64
    } else {
        // The hash, the chain link, the arena offset and the encoded key.
        let encoded: f64 = keys
            .iter()
            .map(|k| match k.data {
                Data::Numeric(_) => 19.0,
                Data::Interval(_) | Data::Uuid(_) => 16.0,
                Data::Text(_) | Data::Bytea(_) | Data::Array(_) => VARIABLE_KEY_BYTES,
                _ => 8.0,
            })
            .sum();
        16.0 + encoded
    };
    let rows = rows.max(0.0);
    let slots = SlotIndex::slots_for(rows as usize) * std::mem::size_of::<AtomicU64>();
    // Encoded keys' offsets start with the arena's start.
    let first_offset = if is_int_key(&keys) { 0.0 } else { 4.0 };
    rows * (entry + payload_width) + slots as f64 + first_offset
}

/// Collects build rows; [`TableBuilder::finish`] links them into a table.
pub(super) struct TableBuilder {
    pub(super) entries: Option<Entries>,
    /// The key is an `integer` or `boolean`: slots hold the keys themselves.
    pub(super) exact: bool,
    pub(super) payload: Batch,
    pub(super) payload_bytes: usize,
    pub(super) linked: usize,
    pub(super) key_buf: Vec<u8>,
}

impl TableBuilder {
    pub(super) fn new(types: &[DataType]) -> TableBuilder {
        TableBuilder {
            entries: None,
            exact: false,
            payload: Batch::empty(types),
            payload_bytes: 0,
            linked: 0,
            key_buf: Vec::new(),
        }
    }

    pub(super) fn rows(&self) -> usize {
        self.payload.len
    }

    /// Adds a batch whose key columns are `kv`.
    pub(super) fn add(&mut self, b: &Batch, kv: &[Vector]) {
        if self.entries.is_none() {
            self.exact = matches!(kv[0].data, Data::Int4(_) | Data::Bool(_)) && kv.len() == 1;
        }
        let e = self.entries.get_or_insert_with(|| {
            if is_int_key(kv) {
                Entries::Int(Vec::new())
            } else {
                Entries::Bytes {
                    hashes: vec![],
                    next: vec![],
                    offsets: vec![0],
                    arena: vec![],
                }
            }
        });
        match e {
            Entries::Int(v) => {
                v.reserve(b.len);
                for i in 0..b.len {
                    match int_key(&kv[0], i) {
                        Some(k) => {
                            self.linked += 1;
                            v.push(IntEntry {
                                key: k,
                                next: AtomicU32::new(EMPTY),
                            })
                        }
                        None => v.push(IntEntry {
                            key: 0,
                            next: AtomicU32::new(UNLINKED),
                        }),
                    }
                }
            }
            Entries::Bytes {
                hashes,
                next,
                offsets,
                arena,
            } => {
                for i in 0..b.len {
                    self.key_buf.clear();
                    if encode_row(kv, i, &mut self.key_buf) {
                        self.linked += 1;
                        hashes.push(hash_bytes(&self.key_buf));
                        next.push(AtomicU32::new(EMPTY));
                        arena.extend_from_slice(&self.key_buf);
                    } else {
                        hashes.push(0);
                        next.push(AtomicU32::new(UNLINKED));
                    }
                    offsets.push(arena.len() as u32);
                }
            }
        }
        self.payload.append(b);
        self.payload_bytes += batch_bytes(b);
    }

    /// Slots the finished table needs for the rows inserted so far.
    pub(super) fn slot_count(&self) -> usize {
        SlotIndex::slots_for(self.linked)
    }

    /// Memory of the finished table: entries, payload and slot array.
    pub(super) fn memory(&self) -> usize {
        let entries = match &self.entries {
            None => 0,
            Some(Entries::Int(e)) => e.len() * std::mem::size_of::<IntEntry>(),
            Some(Entries::Bytes {
                hashes,
                next,
                offsets,
                arena,
            }) => hashes.len() * 8 + next.len() * 4 + offsets.len() * 4 + arena.len(),
        };
        entries + self.payload_bytes + self.slot_count() * 8
    }

    /// Memory the table would need after adding `b` (before adding it).
    pub(super) fn memory_after(&self, b: &Batch) -> usize {
        let per_entry = match &self.entries {
            Some(Entries::Bytes { .. }) => 24,
            _ => std::mem::size_of::<IntEntry>(),
        };
        let slots = SlotIndex::slots_for(self.linked + b.len) * 8;
        self.memory() - self.slot_count() * 8 + batch_bytes(b) + b.len * per_entry + slots
    }

    /// The key hash of build row `i`, or `None` if its key is NULL.
    pub(super) fn hash_of(&self, i: usize) -> Option<u64> {
        match self.entries.as_ref()? {
            Entries::Int(e) => (e[i].next.load(Relaxed) != UNLINKED).then(|| hash_i64(e[i].key)),
            Entries::Bytes { hashes, next, .. } => {
                (next[i].load(Relaxed) != UNLINKED).then_some(hashes[i])
            }
        }
    }

    /// The table with every entry in place but nothing in the slots yet.
    /// The table, linked; with one match bit per row when `match_bits`
    /// (right, full, right semi and right anti joins).
    pub(super) fn finish(self, prefetch: bool, match_bits: bool) -> JoinTable {
        let nslots = self.slot_count();
        let words = if match_bits {
            self.rows().div_ceil(64)
        } else {
            0
        };
        let mut t = JoinTable {
            memory: self.memory() + words * 8,
            entries: self.entries.unwrap_or(Entries::Int(Vec::new())),
            slots: (0..nslots).map(|_| AtomicU64::new(0)).collect(),
            index: SlotIndex::new(nslots, self.exact),
            payload: self.payload,
            linked: self.linked,
            matched: (0..words).map(|_| StdAtomicU64::new(0)).collect(),
        };
        t.link(prefetch);
        t
    }
}

/// The build side: entries, slots (see `slots`) and payload columns.
pub(super) struct JoinTable {
    pub(super) entries: Entries,
    pub(super) slots: Vec<AtomicU64>,
    pub(super) index: SlotIndex,
    pub(super) payload: Batch,
    /// Rows with a non-NULL key (inserted into the slots).
    pub(super) linked: usize,
    pub(super) memory: usize,
    /// One bit per build row, set when it matched (the kinds whose
    /// `JoinKind::marks_inner` says so).
    pub(super) matched: Vec<StdAtomicU64>,
}

impl JoinTable {
    /// Inserts every non-NULL entry into the slots (single-threaded; the
    /// home slot of the entry [`LINK_PREFETCH_DISTANCE`] ahead is prefetched).
    pub(super) fn link(&mut self, prefetch: bool) {
        let (slots, index) = (&self.slots, self.index);
        let ahead = |hash: u64| {
            if prefetch {
                prefetch_line(&slots[index.home(hash)]);
            }
        };
        match &self.entries {
            Entries::Int(v) => {
                for i in 0..v.len() {
                    if let Some(a) = v.get(i + LINK_PREFETCH_DISTANCE) {
                        ahead(hash_i64(a.key));
                    }
                    let e = &v[i];
                    if e.next.load(Relaxed) == UNLINKED {
                        continue;
                    }
                    let hash = hash_i64(e.key);
                    let tag = index
                        .int_tag(hash, e.key)
                        .expect("a build key fits its own table's tags");
                    index.insert(slots, index.home(hash), tag, i as u32 + 1, &e.next);
                }
            }
            Entries::Bytes { hashes, next, .. } => {
                for i in 0..hashes.len() {
                    if let Some(&h) = hashes.get(i + LINK_PREFETCH_DISTANCE) {
                        ahead(h);
                    }
                    if next[i].load(Relaxed) == UNLINKED {
                        continue;
                    }
                    let h = hashes[i];
                    index.insert(
                        slots,
                        index.home(h),
                        index.hash_tag(h),
                        i as u32 + 1,
                        &next[i],
                    );
                }
            }
        }
    }
}

/// What probing needs from a table. Two tables implement it: the serial
/// join's [`JoinTable`] (entries in vectors, entry *e* − 1 = build row) and the
/// Parallel Hash Join's shared table in DSA chunks ([`SharedView`], entry
/// *e* − 1 = tuple ref). An entry is 1 + its index; 0 ends a chain.
pub(super) trait Chains {
    /// `Some(true)` for single-integer keys, `Some(false)` for encoded keys.
    fn int_keys(&self) -> Option<bool>;
    fn slots(&self) -> &[AtomicU64];
    fn index(&self) -> SlotIndex;
    /// Where an entry's key and link live (for prefetching).
    fn entry_ptr(&self, e: u32) -> *const u8;
    /// The entry after `e` in its chain.
    fn next_of(&self, e: u32) -> u32;
    /// Key and next entry (integer keys).
    fn int_entry(&self, e: u32) -> (i64, u32);
    /// Hash, encoded key and next entry (encoded keys).
    fn bytes_entry(&self, e: u32) -> (u64, &[u8], u32);
}

impl Chains for JoinTable {
    fn int_keys(&self) -> Option<bool> {
        Some(matches!(self.entries, Entries::Int(_)))
    }

    #[inline]
    fn slots(&self) -> &[AtomicU64] {
        &self.slots
    }

    #[inline]
    fn index(&self) -> SlotIndex {
        self.index
    }

    #[inline]
    fn entry_ptr(&self, e: u32) -> *const u8 {
        match &self.entries {
            Entries::Int(v) => (&v[e as usize - 1] as *const IntEntry).cast(),
            Entries::Bytes { hashes, .. } => (&hashes[e as usize - 1] as *const u64).cast(),
        }
    }

    #[inline]
    fn next_of(&self, e: u32) -> u32 {
        match &self.entries {
            Entries::Int(v) => v[e as usize - 1].next.load(Relaxed),
            Entries::Bytes { next, .. } => next[e as usize - 1].load(Relaxed),
        }
    }

    #[inline]
    fn int_entry(&self, e: u32) -> (i64, u32) {
        let Entries::Int(v) = &self.entries else {
            unreachable!("integer probe of an encoded-key table")
        };
        let ent = &v[e as usize - 1];
        (ent.key, ent.next.load(Relaxed))
    }

    #[inline]
    fn bytes_entry(&self, e: u32) -> (u64, &[u8], u32) {
        let Entries::Bytes {
            hashes,
            next,
            offsets,
            arena,
        } = &self.entries
        else {
            unreachable!("encoded probe of an integer-key table")
        };
        let i = e as usize - 1;
        (
            hashes[i],
            &arena[offsets[i] as usize..offsets[i + 1] as usize],
            next[i].load(Relaxed),
        )
    }
}

impl Chains for SharedView<'_> {
    fn int_keys(&self) -> Option<bool> {
        Some(self.int_key)
    }

    #[inline]
    fn slots(&self) -> &[AtomicU64] {
        self.slots
    }

    #[inline]
    fn index(&self) -> SlotIndex {
        self.index
    }

    #[inline]
    fn entry_ptr(&self, e: u32) -> *const u8 {
        self.tuple_ptr(e)
    }

    #[inline]
    fn next_of(&self, e: u32) -> u32 {
        SharedView::next_of(self, e)
    }

    #[inline]
    fn int_entry(&self, e: u32) -> (i64, u32) {
        SharedView::int_entry(self, e)
    }

    #[inline]
    fn bytes_entry(&self, e: u32) -> (u64, &[u8], u32) {
        SharedView::bytes_entry(self, e)
    }
}

/// A built table: the serial join's own, or the Parallel Hash Join's shared one.
#[derive(Clone)]
pub(super) enum Table {
    Local(Arc<JoinTable>),
    Shared(Arc<SharedTable>),
}

impl Table {
    /// Rows that can match (non-NULL keys).
    pub(super) fn linked(&self) -> usize {
        match self {
            Table::Local(t) => t.linked,
            Table::Shared(t) => t.rows(),
        }
    }

    /// Records that build rows `rows` (entry − 1 each) matched probe rows.
    pub(super) fn set_matched(&self, rows: &[u32]) {
        match self {
            Table::Local(t) => {
                for &row in rows {
                    let w = &t.matched[row as usize / 64];
                    w.store(w.load(Relaxed) | 1 << (row % 64), Relaxed);
                }
            }
            Table::Shared(t) => {
                let view = t.view();
                for &row in rows {
                    view.set_matched(row + 1);
                }
            }
        }
    }

    /// Columns `cols` of the build rows `rows` (entry − 1 each).
    pub(super) fn gather(&self, types: &[DataType], cols: &[usize], rows: &[u32]) -> Vec<Vector> {
        match self {
            Table::Local(t) => cols
                .iter()
                .map(|&c| t.payload.columns[c].gather(rows))
                .collect(),
            Table::Shared(t) => t.gather(types, cols, rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn column(ty: DataType, v: &[Value]) -> Vector {
        let mut c = Vector::empty(ty);
        for x in v {
            c.push_value(x);
        }
        c
    }

    /// Walks the chain of `hash`/`tag` and returns the build rows on it
    /// whose key `matches`.
    fn chain_rows(t: &JoinTable, hash: u64, tag: u32, matches: &dyn Fn(u32) -> bool) -> Vec<u32> {
        let mut e = t.index.find(&t.slots, t.index.home(hash), tag) & !super::super::slots::MORE;
        let mut out = Vec::new();
        while e != EMPTY {
            if matches(e) {
                out.push(e - 1);
            }
            e = t.next_of(e);
        }
        out.sort_unstable();
        out
    }

    /// Integer keys with duplicates: every row is on its key's chain, a
    /// NULL key on none; the memory estimate before adding a batch is what
    /// the table holds after.
    #[test]
    fn integer_keys_chain_every_row() {
        let keys: Vec<Value> = (0..3000)
            .map(|i| {
                if i % 100 == 7 {
                    Value::Null
                } else {
                    Value::Int4(i % 300)
                }
            })
            .collect();
        let kv = column(DataType::Int4, &keys);
        let b = Batch::new(vec![kv.clone()], keys.len());
        let mut builder = TableBuilder::new(&[DataType::Int4]);
        let predicted = builder.memory_after(&b);
        builder.add(&b, std::slice::from_ref(&kv));
        assert_eq!(builder.memory(), predicted);
        assert_eq!(builder.hash_of(7), None);
        let t = builder.finish(true, true);
        assert_eq!(t.linked, 3000 - 30);
        assert!(t.index.exact, "integer keys are their own tags");
        for k in [0i64, 7, 299] {
            let h = hash_i64(k);
            let tag = t.index.int_tag(h, k).unwrap();
            let rows = chain_rows(&t, h, tag, &|e| t.int_entry(e).0 == k);
            let expected: Vec<u32> = (0..3000u32)
                .filter(|&i| i % 300 == k as u32 && i % 100 != 7)
                .collect();
            assert_eq!(rows, expected, "key {k}");
        }
        assert_eq!(t.matched.len(), 3000usize.div_ceil(64), "match bits");
    }

    /// The planner's estimate of a table is what the builder counts, for
    /// an integer key and for an encoded two-column key of fixed width.
    #[test]
    fn estimated_bytes_match_the_builder() {
        let n = 5000;
        let ints: Vec<Value> = (0..n).map(Value::Int4).collect();
        let bigs: Vec<Value> = (0..n).map(|i| Value::Int8(i64::from(i) * 7)).collect();
        let a = column(DataType::Int4, &ints);
        let b = column(DataType::Int8, &bigs);
        let batch = Batch::new(vec![a.clone(), b.clone()], n as usize);
        let types = [DataType::Int4, DataType::Int8];
        for keys in [vec![a.clone()], vec![a, b]] {
            let mut builder = TableBuilder::new(&types);
            builder.add(&batch, &keys);
            let estimate = estimated_table_bytes(f64::from(n), 12.0, &types[..keys.len()]);
            assert_eq!(estimate, builder.memory() as f64, "{} keys", keys.len());
        }
    }

    /// Text keys are encoded: equal strings share a chain, and the rows are
    /// told apart from hash collisions by their bytes.
    #[test]
    fn encoded_keys_chain_every_row() {
        let keys: Vec<Value> = (0..500)
            .map(|i| Value::Text(format!("k{}", i % 50)))
            .collect();
        let kv = column(DataType::Text, &keys);
        let b = Batch::new(vec![kv.clone()], keys.len());
        let mut builder = TableBuilder::new(&[DataType::Text]);
        builder.add(&b, std::slice::from_ref(&kv));
        let t = builder.finish(false, false);
        assert!(t.matched.is_empty());
        let mut probe = Vec::new();
        assert!(encode_row(
            &[column(DataType::Text, &[Value::Text("k7".into())])],
            0,
            &mut probe
        ));
        let h = hash_bytes(&probe);
        let rows = chain_rows(&t, h, t.index.hash_tag(h), &|e| {
            t.bytes_entry(e).1 == probe.as_slice()
        });
        assert_eq!(rows, (0..10).map(|i| 7 + 50 * i).collect::<Vec<u32>>());
    }
}
