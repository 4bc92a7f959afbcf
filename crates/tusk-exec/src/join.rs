//! Inner hash join that stays within its memory limit.
//!
//! ## In memory
//!
//! The build side (the plan's Hash child) is read into a hash table; then the
//! probe side streams through it batch by batch. Build row *r* owns entry *r*.
//! The entries are indexed by a *slot array* (`slots`): open addressing over
//! key *tags* — the key itself for `integer` and `boolean` keys, else 32 bits
//! of its hash — where each slot names the first entry of the chain of all
//! entries with its tag, and each entry links to the next. For a single
//! integer key an entry is `{key: i64, next: u32}`; other keys keep their hash
//! and an encoded byte key per entry. The slot count is a power of two at
//! least 4/3 of the row count. Rows with a NULL key are stored (so payload
//! row numbers stay aligned) but never inserted: NULLs never join.
//!
//! Probing is a software pipeline over a probe batch: each row's home slot is
//! prefetched a fixed distance ahead of its search, and (when the chain's
//! tuples will be read) the chain's first entry is prefetched ahead of its
//! walk, so the cache misses of many rows overlap (see [`ProbeState`]). With
//! exact tags a slot whose chain is one entry answers the probe alone: one
//! cache miss per probe row. A probe batch may produce any number of matches,
//! so the probe keeps a cursor (row and chain position) and stops each output
//! batch at a fixed size; a join with no output columns only counts matches.
//!
//! ## Memory limit and spilling
//!
//! The limit is `work_mem × hash_mem_multiplier`, and it covers everything
//! the join holds: entries, payload, the slot array it will need, and the
//! buffer of every open spill file. Whatever the input, the join's peak stays
//! within the limit plus one input batch (at most 2048 rows read before the
//! check) and one output batch.
//!
//! When the build side outgrows its budget (the limit minus room for the spill
//! buffers), the join becomes a *recursive hash partitioning* join:
//!
//! 1. The rows built so far and the rest of the build input are written to
//!    `F` partition files by bits of the key hash; then the probe input is
//!    written to `F` partition files by the same bits. NULL keys are dropped
//!    (they cannot match in an inner join). Only one side's `F` files are open
//!    at a time, each with a buffer of `B` bytes, where `B` = limit/1024
//!    clamped to 4–32 kB (8 kB at the default 8 MB limit, PostgreSQL's BufFile
//!    size) and `F` = the largest power of two with F·B ≤ limit/2, at most 1024.
//! 2. Each pair of partitions is then joined on its own: if the build
//!    partition fits, it is loaded into a table and the probe partition is
//!    streamed through it. If not, both are partitioned again, `F` ways, with
//!    fresh hash bits (the hash is re-mixed with a per-level salt).
//! 3. A partition that repartitioning cannot split (every row went to the same
//!    child: one key, or too few distinct hashes) is not split further. It is
//!    joined in chunks: as many build rows as fit are loaded, the whole probe
//!    partition is streamed through them, and so on for the next chunk. For an
//!    inner join the union of the chunks' matches is the join.
//!
//! ## Parallel Hash Join
//!
//! Under a Gather, all participants build one shared table in DSA chunks
//! (`shared_table`; phases and memory ordering there) and probe it with the
//! same code as the serial table (both implement [`Chains`]). Its limit is
//! `work_mem × hash_mem_multiplier × participants`; when the build does not
//! fit, every participant partitions its share of both inputs into its own
//! partition files and the participants then join the partitions one at a
//! time with the code above (see [`SharedBuild`]).
//!
//! ### Why not slices with overflow files
//!
//! PostgreSQL doubles the batch count as the build side grows and, under the
//! seed's proposal, groups batches into slices with one overflow file per
//! slice, to bound the number of open files; that writes the data about 2.2
//! times. Partitioning with a fan-out fixed by the memory limit writes every
//! row once per level, and one level suffices while the build side is smaller
//! than about F × limit (512 × 8 MB = 4 GB at the defaults); each further level
//! multiplies that by F. So the data is written once or twice — write
//! amplification ≤ 2 for builds up to F² × limit — with at most F files open,
//! and there is never a moment when thousands of file buffers exist.

use crate::error::Result;
use crate::exec::{apply_filter, build, ExecContext, Operator};
use crate::expr::{eval_all, Expr};
use crate::hashkey::{encode_row, hash_bytes, hash_i64, int_key, is_int_key, rehash};
use crate::parallel::Phaser;
use crate::plan::{NodeKind, Plan};
use crate::shared_table::{
    ChunkWriter, MemoryReport, SharedTable, SharedView, TableShape, TupleKey,
};
use crate::slots::{AtomicU32, AtomicU64, SlotIndex, MORE};
use crate::spill::{
    self, bytes_of, rows_of, SpillFile, SpillReader, SpillStats, SpillWriter, SPILL_BUFFER_SIZE,
};
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};
use tusk_storage::DataType;

const EMPTY: u32 = 0;
/// Marks an entry whose key is NULL (never inserted into the slots).
const UNLINKED: u32 = u32::MAX;
/// Most partition files open at once.
const MAX_FANOUT: usize = 1024;

/// How far ahead the build's linking pass prefetches home slots.
const LINK_PREFETCH_DISTANCE: usize = 16;

/// Rows of an output batch with no columns (a count of matches).
const ZERO_WIDTH_BATCH: usize = 1 << 16;

/// Rows read from a spill file per batch while (re)loading a partition, small
/// so that the memory check overshoots by little.
const LOAD_BATCH_ROWS: usize = 256;

pub(crate) use tusk_shmem::prefetch_line;

#[repr(C)]
struct IntEntry {
    key: i64,
    /// Next entry of the chain; an atomic so that probing reads every table
    /// through [`Chains`] (relaxed loads compile to plain loads).
    next: AtomicU32,
}

enum Entries {
    Int(Vec<IntEntry>),
    Bytes {
        hashes: Vec<u64>,
        next: Vec<AtomicU32>,
        offsets: Vec<u32>,
        arena: Vec<u8>,
    },
}

/// Bytes a batch's column data occupies.
fn batch_bytes(b: &Batch) -> usize {
    b.columns
        .iter()
        .map(|c| {
            let nulls = if c.nulls.is_some() { c.len() } else { 0 };
            nulls + c.data.byte_size()
        })
        .sum()
}

/// Collects build rows; [`TableBuilder::finish`] links them into a table.
struct TableBuilder {
    entries: Option<Entries>,
    /// The key is an `integer` or `boolean`: slots hold the keys themselves.
    exact: bool,
    payload: Batch,
    payload_bytes: usize,
    linked: usize,
    key_buf: Vec<u8>,
}

impl TableBuilder {
    fn new(types: &[DataType]) -> TableBuilder {
        TableBuilder {
            entries: None,
            exact: false,
            payload: Batch::empty(types),
            payload_bytes: 0,
            linked: 0,
            key_buf: Vec::new(),
        }
    }

    fn rows(&self) -> usize {
        self.payload.len
    }

    /// Adds a batch whose key columns are `kv`.
    fn add(&mut self, b: &Batch, kv: &[Vector]) {
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
    fn slot_count(&self) -> usize {
        SlotIndex::slots_for(self.linked)
    }

    /// Memory of the finished table: entries, payload and slot array.
    fn memory(&self) -> usize {
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
    fn memory_after(&self, b: &Batch) -> usize {
        let per_entry = match &self.entries {
            Some(Entries::Bytes { .. }) => 24,
            _ => std::mem::size_of::<IntEntry>(),
        };
        let slots = SlotIndex::slots_for(self.linked + b.len) * 8;
        self.memory() - self.slot_count() * 8 + batch_bytes(b) + b.len * per_entry + slots
    }

    /// The key hash of build row `i`, or `None` if its key is NULL.
    fn hash_of(&self, i: usize) -> Option<u64> {
        match self.entries.as_ref()? {
            Entries::Int(e) => (e[i].next.load(Relaxed) != UNLINKED).then(|| hash_i64(e[i].key)),
            Entries::Bytes { hashes, next, .. } => {
                (next[i].load(Relaxed) != UNLINKED).then_some(hashes[i])
            }
        }
    }

    /// The table with every entry in place but nothing in the slots yet.
    fn finish_unlinked(self) -> JoinTable {
        let memory = self.memory();
        let nslots = self.slot_count();
        JoinTable {
            entries: self.entries.unwrap_or(Entries::Int(Vec::new())),
            slots: (0..nslots).map(|_| AtomicU64::new(0)).collect(),
            index: SlotIndex::new(nslots, self.exact),
            payload: self.payload,
            linked: self.linked,
            memory,
        }
    }

    fn finish(self, prefetch: bool) -> JoinTable {
        let mut t = self.finish_unlinked();
        t.link(prefetch);
        t
    }
}

/// The build side: entries, slots (see `slots`) and payload columns.
struct JoinTable {
    entries: Entries,
    slots: Vec<AtomicU64>,
    index: SlotIndex,
    payload: Batch,
    /// Rows with a non-NULL key (inserted into the slots).
    linked: usize,
    memory: usize,
}

impl JoinTable {
    /// Inserts every non-NULL entry into the slots (single-threaded; the
    /// home slot of the entry [`LINK_PREFETCH_DISTANCE`] ahead is prefetched).
    fn link(&mut self, prefetch: bool) {
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

/// Keys of a probe batch, in the table's representation.
enum ProbeKeys {
    Int(Vec<Option<i64>>),
    Bytes(Vec<Option<(u64, std::ops::Range<usize>)>>, Vec<u8>),
}

impl ProbeKeys {
    fn of(kv: &[Vector], n: usize) -> ProbeKeys {
        if is_int_key(kv) {
            // The common case, a NULL-free integer column, in one tight loop.
            return ProbeKeys::Int(match (&kv[0].data, &kv[0].nulls) {
                (Data::Int4(d), None) => d[..n].iter().map(|&k| Some(k as i64)).collect(),
                (Data::Int8(d), None) => d[..n].iter().map(|&k| Some(k)).collect(),
                _ => (0..n).map(|i| int_key(&kv[0], i)).collect(),
            });
        }
        let mut arena = Vec::new();
        let mut ks = Vec::with_capacity(n);
        for i in 0..n {
            let start = arena.len();
            if encode_row(kv, i, &mut arena) {
                ks.push(Some((hash_bytes(&arena[start..]), start..arena.len())));
            } else {
                arena.truncate(start);
                ks.push(None);
            }
        }
        ProbeKeys::Bytes(ks, arena)
    }

    fn hash(&self, i: usize) -> Option<u64> {
        match self {
            ProbeKeys::Int(k) => k[i].map(hash_i64),
            ProbeKeys::Bytes(k, _) => k[i].as_ref().map(|(h, _)| *h),
        }
    }
}

/// What probing needs from a table. Two tables implement it: the serial
/// join's [`JoinTable`] (entries in vectors, entry *e* − 1 = build row) and the
/// Parallel Hash Join's shared table in DSA chunks ([`SharedView`], entry
/// *e* − 1 = tuple ref). An entry is 1 + its index; 0 ends a chain.
trait Chains {
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
enum Table {
    Local(Arc<JoinTable>),
    Shared(Arc<SharedTable>),
}

impl Table {
    /// Rows that can match (non-NULL keys).
    fn linked(&self) -> usize {
        match self {
            Table::Local(t) => t.linked,
            Table::Shared(t) => t.rows(),
        }
    }

    /// Columns `cols` of the build rows `rows` (entry − 1 each).
    fn gather(&self, types: &[DataType], cols: &[usize], rows: &[u32]) -> Vec<Vector> {
        match self {
            Table::Local(t) => cols
                .iter()
                .map(|&c| t.payload.columns[c].gather(rows))
                .collect(),
            Table::Shared(t) => t.gather(types, cols, rows),
        }
    }
}

/// Rows between the prefetch of a probe row's home slot and the search of
/// its slots, and again between that search (which prefetches the chain's
/// first tuple when the probe will need it) and the walk of its chain.
const PROBE_DISTANCE: usize = 64;
/// `HeadPipeline::homes` entry of a row that cannot match (a NULL key).
const NO_HOME: u32 = u32::MAX;

/// A probe batch and where its walk stands.
///
/// Probing is a software pipeline over the batch's rows: while row *i*'s
/// chain is walked, row *i* + D's slots are searched for its tag (and, when
/// the walk will read tuples, the chain's first tuple is prefetched), and row
/// *i* + 2D's home slot is prefetched (D = [`PROBE_DISTANCE`]). Each row's
/// cache misses are thus started D or 2D rows before they are needed, and
/// about 2D misses are in flight at any time — enough to overlap memory
/// latency, few enough not to overflow the core's miss buffers or evict
/// lines before their use (prefetching a whole 2048-row batch first did
/// both). With exact tags a chain of one tuple is walked without reading the
/// tuple (see `slots`). Without prefetching (`tusk.hash_join_prefetch =
/// off`) each row searches its slots when its turn comes.
struct ProbeState {
    batch: Batch,
    keys: ProbeKeys,
    heads: HeadPipeline,
    row: usize,
    /// Where to resume `row`'s chain when `started_row`.
    chain: u32,
    started_row: bool,
}

/// The chain heads of a probe batch, found [`PROBE_DISTANCE`] rows ahead
/// of the walk (see [`ProbeState`]).
#[derive(Default)]
struct HeadPipeline {
    /// Home slot of each row ([`NO_HOME`] for a row that cannot match).
    homes: Vec<u32>,
    /// Tag of each row's key.
    tags: Vec<u32>,
    /// Chain head (with its `MORE` bit) of each row, for rows below `loaded`.
    heads: Vec<u32>,
    loaded: usize,
    prefetch: bool,
}

impl HeadPipeline {
    #[inline(always)]
    fn find<T: Chains>(&self, table: &T, row: usize) -> u32 {
        let home = self.homes[row];
        if home == NO_HOME {
            return EMPTY;
        }
        table
            .index()
            .find(table.slots(), home as usize, self.tags[row])
    }

    /// Chain head (with its `MORE` bit) of `row`, advancing the pipeline.
    #[inline(always)]
    fn head<T: Chains>(&mut self, table: &T, row: usize) -> u32 {
        if !self.prefetch {
            return self.find(table, row);
        }
        let exact = table.index().exact;
        if exact {
            // One stage: an exact-tag probe reads the slot first and a tuple
            // only for chains of two or more, so only the slot is prefetched,
            // 2D rows ahead.
            if let Some(&home) = self.homes.get(row + 2 * PROBE_DISTANCE) {
                if home != NO_HOME {
                    prefetch_line(&table.slots()[home as usize]);
                }
            }
            return self.find(table, row);
        }
        let upto = (row + PROBE_DISTANCE + 1).min(self.homes.len());
        while self.loaded < upto {
            let j = self.loaded;
            if let Some(&home) = self.homes.get(j + PROBE_DISTANCE) {
                if home != NO_HOME {
                    prefetch_line(&table.slots()[home as usize]);
                }
            }
            let h = self.find(table, j);
            if h != EMPTY && (!exact || h & MORE != 0) {
                prefetch_line(table.entry_ptr(h & !MORE));
            }
            self.heads[j] = h;
            self.loaded = j + 1;
        }
        self.heads[row]
    }
}

impl ProbeState {
    /// Starts probing `batch` (keys `keys`); reuses `old`'s buffers.
    fn new<T: Chains>(
        table: &T,
        batch: Batch,
        keys: ProbeKeys,
        prefetch: bool,
        old: Option<ProbeState>,
    ) -> ProbeState {
        let mut p = old.map(|o| o.heads).unwrap_or_default();
        let n = batch.len;
        let index = table.index();
        p.homes.clear();
        p.tags.clear();
        match &keys {
            ProbeKeys::Int(k) => {
                for k in &k[..n] {
                    let slot = k.and_then(|k| {
                        let h = hash_i64(k);
                        index.int_tag(h, k).map(|tag| (index.home(h) as u32, tag))
                    });
                    let (home, tag) = slot.unwrap_or((NO_HOME, 0));
                    p.homes.push(home);
                    p.tags.push(tag);
                }
            }
            _ => {
                for i in 0..n {
                    let (home, tag) = keys
                        .hash(i)
                        .map_or((NO_HOME, 0), |h| (index.home(h) as u32, index.hash_tag(h)));
                    p.homes.push(home);
                    p.tags.push(tag);
                }
            }
        }
        p.heads.clear();
        p.heads.resize(n, EMPTY);
        p.loaded = 0;
        p.prefetch = prefetch;
        if prefetch {
            let first = if index.exact { 2 } else { 1 } * PROBE_DISTANCE;
            for &home in p.homes.iter().take(first) {
                if home != NO_HOME {
                    prefetch_line(&table.slots()[home as usize]);
                }
            }
        }
        ProbeState {
            batch,
            keys,
            heads: p,
            row: 0,
            chain: EMPTY,
            started_row: false,
        }
    }

    fn done(&self) -> bool {
        self.row >= self.batch.len
    }

    /// Hands matching (probe row, build entry − 1) pairs to `sink` until it
    /// is full or the batch is done.
    fn pairs<T: Chains, S: PairSink>(&mut self, table: &T, sink: &mut S) {
        let n = self.batch.len;
        match (table.int_keys(), &self.keys) {
            (Some(true), ProbeKeys::Int(keys)) => {
                let exact = table.index().exact;
                while self.row < n {
                    let Some(k) = keys[self.row] else {
                        self.row += 1;
                        continue;
                    };
                    let mut e = if self.started_row {
                        self.chain
                    } else {
                        let h = self.heads.head(table, self.row);
                        if exact && h != EMPTY && h & MORE == 0 {
                            // The slot alone answers: one tuple, with this key.
                            if sink.full() {
                                self.started_row = true;
                                self.chain = h;
                                return;
                            }
                            sink.push(self.row as u32, h - 1);
                            self.row += 1;
                            continue;
                        }
                        h & !MORE
                    };
                    while e != EMPTY {
                        // Exact tags: every tuple of the chain has the key.
                        let (key, next) = if exact {
                            (k, table.next_of(e))
                        } else {
                            table.int_entry(e)
                        };
                        if key == k {
                            if sink.full() {
                                self.started_row = true;
                                self.chain = e;
                                return;
                            }
                            sink.push(self.row as u32, e - 1);
                        }
                        e = next;
                    }
                    self.started_row = false;
                    self.row += 1;
                }
            }
            (Some(false), ProbeKeys::Bytes(keys, parena)) => {
                while self.row < n {
                    let Some((h, range)) = keys[self.row].clone() else {
                        self.row += 1;
                        continue;
                    };
                    let probe_key = &parena[range.clone()];
                    let mut e = if self.started_row {
                        self.chain
                    } else {
                        self.heads.head(table, self.row) & !MORE
                    };
                    while e != EMPTY {
                        let (hash, key, next) = table.bytes_entry(e);
                        if hash == h && key == probe_key {
                            if sink.full() {
                                self.started_row = true;
                                self.chain = e;
                                return;
                            }
                            sink.push(self.row as u32, e - 1);
                        }
                        e = next;
                    }
                    self.started_row = false;
                    self.row += 1;
                }
            }
            // A table with no rows never fixed its key representation.
            _ => self.row = n,
        }
    }
}

/// Where a probe puts the (probe row, build entry − 1) pairs it finds.
trait PairSink {
    fn full(&self) -> bool;
    fn push(&mut self, row: u32, entry: u32);
}

/// The pairs themselves, up to `limit`, for gathering output columns.
struct Pairs<'a> {
    outer: &'a mut Vec<u32>,
    inner: &'a mut Vec<u32>,
    limit: usize,
}

impl PairSink for Pairs<'_> {
    #[inline(always)]
    fn full(&self) -> bool {
        self.outer.len() == self.limit
    }

    #[inline(always)]
    fn push(&mut self, row: u32, entry: u32) {
        self.outer.push(row);
        self.inner.push(entry);
    }
}

/// Only how many pairs there are (up to `limit`): a join whose output has
/// no columns (`count(*)` over a join) needs nothing else.
struct PairCount {
    n: usize,
    limit: usize,
}

impl PairSink for PairCount {
    #[inline(always)]
    fn full(&self) -> bool {
        self.n == self.limit
    }

    #[inline(always)]
    fn push(&mut self, _row: u32, _entry: u32) {
        self.n += 1;
    }
}

/// Writes rows into `fanout` partition files by bits of their re-mixed hash.
struct Partitioner {
    writers: Vec<SpillWriter>,
    level: u32,
}

impl Partitioner {
    fn new(fanout: usize, level: u32, ctx: &ExecContext, buf: usize) -> Result<Partitioner> {
        let dir = ctx.db.temp_dir();
        let writers = (0..fanout)
            .map(|_| SpillWriter::new(&dir, buf, ctx.spill.clone()))
            .collect::<Result<Vec<_>>>()?;
        Ok(Partitioner { writers, level })
    }

    #[inline]
    fn partition(&self, hash: u64) -> usize {
        (rehash(hash, self.level) as usize) & (self.writers.len() - 1)
    }

    #[inline]
    fn write(&mut self, hash: u64, b: &Batch, row: usize) -> Result<()> {
        let p = self.partition(hash);
        self.writers[p].write_row(hash, b, row)
    }

    /// Writes a row already in the spill encoding.
    fn write_encoded(&mut self, hash: u64, row: &[u8]) -> Result<()> {
        let p = self.partition(hash);
        self.writers[p].write_encoded(hash, row)
    }

    /// Writes every row of `b` with a non-NULL key (hashes in `keys`), from row `from`.
    fn write_batch(&mut self, b: &Batch, keys: &ProbeKeys, from: usize) -> Result<()> {
        for i in from..b.len {
            if let Some(h) = keys.hash(i) {
                self.write(h, b, i)?;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<Arc<SpillFile>>> {
        self.writers.into_iter().map(|w| w.finish()).collect()
    }
}

/// The build rows of a partition not loaded yet.
struct BuildSource {
    reader: SpillReader,
    /// A batch read but not loaded because the table was full.
    pending: Option<Batch>,
}

/// A pair of partition files still to be joined.
struct Task {
    /// One file per participant that wrote this partition.
    inner: Vec<Arc<SpillFile>>,
    outer: Vec<Arc<SpillFile>>,
    level: u32,
    /// Repartitioning could not split it: join it chunk by chunk.
    chunked: bool,
}

/// Where probe batches come from.
enum ProbeSource {
    Outer,
    File(SpillReader),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Build,
    Probe,
    NextPartition,
    /// All output produced; EXPLAIN lines not yet written.
    Done,
    Reported,
}

/// What EXPLAIN ANALYZE reports.
#[derive(Default, Clone)]
struct Report {
    buckets: usize,
    original_buckets: usize,
    batches: usize,
    table_peak: usize,
    peak: usize,
    levels: u32,
    chunked: usize,
    fanout: usize,
    inner_rows: u64,
}

pub struct HashJoin {
    outer: Box<dyn Operator>,
    inner: Option<Box<dyn Operator>>,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    outer_out: Vec<usize>,
    inner_out: Vec<usize>,
    outer_types: Vec<DataType>,
    inner_types: Vec<DataType>,
    join_filter: Option<Expr>,
    limit: usize,
    /// Spill file buffer size and partition fan-out for this limit.
    buf: usize,
    fanout: usize,
    phase: Phase,
    table: Option<Table>,
    probe: Option<ProbeState>,
    /// (probe row, build entry) pairs of the current output batch.
    pairs: (Vec<u32>, Vec<u32>),
    source: ProbeSource,
    tasks: Vec<Task>,
    /// The task being joined, with the rest of its build side when chunked.
    current: Option<(Task, Option<BuildSource>)>,
    report: Report,
    ctx: ExecContext,
    id: usize,
    hash_id: usize,
    /// The planner's estimate of the build side: rows and bytes per row.
    build_estimate: (usize, usize),
    /// Set for a Parallel Hash Join: the build all participants share.
    shared: Option<Arc<SharedBuild>>,
}

/// One participant's partition files of one input, by partition number.
type Partitions = Vec<Arc<SpillFile>>;

/// The shared state of a Parallel Hash Join (see `shared_table` for the
/// table and its phases).
///
/// **Memory.** The join's limit is `work_mem × hash_mem_multiplier ×
/// participants` (PostgreSQL's rule for a Parallel Hash). It covers every
/// participant's chunks, the slot array, the chunk directory and, should
/// the build not fit, every participant's spill-file buffers: room for those
/// (`participants × F × B`, as in the serial join) is kept free from the
/// start. A participant asks before taking each chunk; the asks of different
/// participants may race, so the peak stays within the limit plus one chunk
/// per participant.
///
/// **Spilling.** When a chunk would not fit (or the final slot array
/// would not), the spill flag is raised. Every participant then writes the
/// tuples of its chunks, and the rest of its share of the build input, to
/// its own `F` partition files (hash bits of level 0, as the serial join),
/// then its share of the probe input to `F` more. After a phaser the table's
/// DSA area is dropped, and participants take partitions one at a time from
/// a shared counter: partition *p* is the *p*-th file of every participant,
/// joined by the serial join's partition code (`start_task`), which may
/// repartition it or join it in chunks within each participant's own
/// `work_mem × hash_mem_multiplier`.
pub struct SharedBuild {
    pub(crate) phaser: Phaser,
    participants: usize,
    table: Mutex<Option<Arc<SharedTable>>>,
    /// Tuples written so far (published once per input batch).
    rows: AtomicUsize,
    spill: AtomicBool,
    /// Spill buffers all participants hold during the build.
    buffers: AtomicUsize,
    /// Peak of chunks + slots + directory + spill buffers.
    peak: AtomicUsize,
    /// (inner, outer) partition files of each participant that spilled.
    files: Mutex<Vec<(Partitions, Partitions)>>,
    next_partition: AtomicUsize,
    memory: Mutex<Option<MemoryReport>>,
    /// Participants' reports, combined by the last one to finish.
    report: Mutex<(Report, usize, u64, u64)>,
}

impl SharedBuild {
    pub fn new(participants: usize) -> SharedBuild {
        SharedBuild {
            phaser: Phaser::new(participants),
            participants,
            table: Mutex::new(None),
            rows: AtomicUsize::new(0),
            spill: AtomicBool::new(false),
            buffers: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            files: Mutex::new(Vec::new()),
            next_partition: AtomicUsize::new(0),
            memory: Mutex::new(None),
            report: Mutex::new((Report::default(), 0, 0, 0)),
        }
    }

    /// The shared table, created by the first participant to ask.
    /// The shared table, created by the first participant to ask; the
    /// planner expects `estimate` rows of about `width` bytes.
    fn table(
        &self,
        ctx: &ExecContext,
        shape: TableShape,
        limit: usize,
        (estimate, width): (usize, usize),
    ) -> Result<Arc<SharedTable>> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = &*t {
            return Ok(t.clone());
        }
        // Tuples: header, key, and (unless key-only) the row.
        let tuple = if shape.key_only.is_some() {
            16
        } else {
            24 + width
        };
        let expected = SharedTable::slot_bytes(estimate) + estimate * tuple + (2 << 20);
        let table = Arc::new(SharedTable::new(
            &ctx.db.dsm,
            ctx.hash_chunk_size,
            shape,
            limit,
            expected,
        )?);
        *t = Some(table.clone());
        Ok(table)
    }

    fn note_peak(&self, bytes: usize) {
        self.peak.fetch_max(bytes, Relaxed);
    }

    /// Whether `bytes` more of chunks fit: chunks, the slot array the rows
    /// so far need, the directory and the room kept for spill buffers.
    fn may_allocate(
        &self,
        table: &SharedTable,
        bytes: usize,
        reserve: usize,
        limit: usize,
    ) -> bool {
        let rows = self.rows.load(Relaxed);
        let used =
            table.chunk_bytes() + bytes + SharedTable::slot_bytes(rows) + table.directory_bytes();
        if used + reserve > limit || self.spill.load(Relaxed) {
            return false;
        }
        self.note_peak(used + self.buffers.load(Relaxed));
        true
    }
}

impl HashJoin {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<HashJoin> {
        let NodeKind::HashJoin {
            kind,
            outer_keys,
            inner_keys,
            outer_out,
            inner_out,
            join_filter,
            parallel,
        } = &plan.kind
        else {
            unreachable!()
        };
        if *kind != crate::plan::JoinKind::Inner || outer_keys.is_empty() {
            return Err(crate::error::ExecError::coded(
                crate::error::sqlstate::FEATURE_NOT_SUPPORTED,
                "this hash join kind is not implemented yet",
            ));
        }
        let hash = &plan.children[1];
        let shared = if *parallel {
            let state = ctx.parallel.as_ref().ok_or_else(|| {
                crate::error::ExecError::new("Parallel Hash Join outside a Gather")
            })?;
            Some(state.join(plan.id))
        } else {
            None
        };
        let limit = ((ctx.work_mem as f64) * ctx.hash_mem_multiplier) as usize;
        // Spill buffers of 8 kB (PostgreSQL's BufFile size) at the default
        // limit, so that half the limit buys a fan-out of 512 and one level
        // of partitioning covers build sides of up to ~512 × the limit.
        let buf = (limit / 1024).clamp(4096, SPILL_BUFFER_SIZE);
        let fanout = ((limit / 2) / buf).max(2);
        let fanout = if fanout.is_power_of_two() {
            fanout
        } else {
            fanout.next_power_of_two() / 2
        }
        .min(MAX_FANOUT);
        Ok(HashJoin {
            outer: build(&plan.children[0], ctx)?,
            inner: Some(build(&hash.children[0], ctx)?),
            outer_keys: outer_keys.clone(),
            inner_keys: inner_keys.clone(),
            outer_out: outer_out.clone(),
            inner_out: inner_out.clone(),
            outer_types: plan.children[0].output.clone(),
            inner_types: hash.children[0].output.clone(),
            join_filter: join_filter.clone(),
            limit,
            buf,
            fanout,
            phase: Phase::Build,
            table: None,
            probe: None,
            pairs: (Vec::new(), Vec::new()),
            source: ProbeSource::Outer,
            tasks: Vec::new(),
            current: None,
            report: Report {
                batches: 1,
                ..Default::default()
            },
            ctx: ctx.clone(),
            id: plan.id,
            hash_id: hash.id,
            build_estimate: (hash.est.rows.max(0.0) as usize, hash.est.width as usize),
            shared,
        })
    }

    fn note_memory(&mut self, extra: usize) {
        let table = match &self.table {
            Some(Table::Local(t)) => t.memory,
            _ => 0,
        };
        self.report.peak = self.report.peak.max(table + extra);
    }

    fn set_table(&mut self, t: JoinTable) {
        if self.report.original_buckets == 0 {
            self.report.original_buckets = t.index.len();
        }
        self.report.buckets = self.report.buckets.max(t.index.len());
        self.report.table_peak = self.report.table_peak.max(t.memory);
        self.table = Some(Table::Local(Arc::new(t)));
    }

    /// Parallel Hash Join: loads this participant's share of the build input
    /// into its chunks of the shared table, then fills the slots with the
    /// others — or, if the table does not fit, partitions (see [`SharedBuild`]).
    fn parallel_build(&mut self, shared: Arc<SharedBuild>) -> Result<()> {
        let mut input = self.inner.take().expect("build side consumed once");
        let (me, all) = (self.ctx.participant, shared.participants);
        let limit = self.limit * all;
        // Room for every participant's partition files, should they be needed.
        let reserve = all * self.fanout * self.buf;
        let int_key = self.inner_keys.len() == 1
            && matches!(
                self.inner_keys[0].data_type(),
                DataType::Int4 | DataType::Int8 | DataType::Bool
            );
        let shape = TableShape {
            int_key,
            // `integer` and `boolean` keys are their own slot tags (see `slots`).
            exact: int_key
                && matches!(
                    self.inner_keys[0].data_type(),
                    DataType::Int4 | DataType::Bool
                ),
            // A build row that is just its key needs no payload.
            key_only: (int_key
                && self.inner_types.len() == 1
                && matches!(self.inner_keys[0], Expr::Column { index: 0, .. }))
            .then(|| self.inner_types[0]),
        };
        let table = shared.table(&self.ctx, shape, limit, self.build_estimate)?;
        let mut writer = ChunkWriter::new();
        let mut parts: Option<Partitioner> = None;
        // The build rows of a batch in the spill encoding, row i ending at
        // ends[i]; for key-only tuples the batch's non-NULL keys.
        let (mut rows, mut ends, mut nonnull) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            let kv = eval_all(&self.inner_keys, &b)?;
            let keys = ProbeKeys::of(&kv, b.len);
            let mut from = 0;
            if parts.is_none() && shape.key_only.is_some() {
                let ProbeKeys::Int(k) = &keys else {
                    unreachable!("key-only tables have integer keys")
                };
                nonnull.clear();
                nonnull.extend(k.iter().flatten());
                let mut may = |bytes| shared.may_allocate(&table, bytes, reserve, limit);
                let added = writer.insert_keys(&table, &nonnull, &mut may)?;
                shared.rows.fetch_add(added, Relaxed);
                if added == nonnull.len() {
                    continue;
                }
                shared.spill.store(true, Relaxed);
                // The rest of the batch goes to the partitions: from the
                // row of the first key not written.
                let mut seen = 0;
                from = k
                    .iter()
                    .position(|k| {
                        seen += k.is_some() as usize;
                        seen > added
                    })
                    .unwrap_or(b.len);
            } else if parts.is_none() {
                spill::encode_rows(&b, &mut rows, &mut ends);
                let mut added = 0;
                let mut may = |bytes| shared.may_allocate(&table, bytes, reserve, limit);
                while from < b.len {
                    let key = match &keys {
                        ProbeKeys::Int(k) => k[from].map(TupleKey::Int),
                        ProbeKeys::Bytes(k, arena) => k[from]
                            .as_ref()
                            .map(|(h, r)| TupleKey::Bytes(*h, &arena[r.clone()])),
                    };
                    if let Some(key) = key {
                        let row = &rows[if from == 0 { 0 } else { ends[from - 1] }..ends[from]];
                        if !writer.insert(&table, key, row, &mut may)? {
                            shared.spill.store(true, Relaxed);
                            break;
                        }
                        added += 1;
                    }
                    from += 1;
                }
                shared.rows.fetch_add(added, Relaxed);
                if from == b.len {
                    continue;
                }
            }
            let p = match &mut parts {
                Some(p) => p,
                None => parts.insert(self.spill_tuples(&shared, &table, &writer)?),
            };
            p.write_batch(&b, &keys, from)?;
        }
        if shared.phaser.wait()? {
            // Last to finish loading: does the whole table fit?
            let rows = shared.rows.load(Relaxed);
            let need =
                table.chunk_bytes() + SharedTable::slot_bytes(rows) + table.directory_bytes();
            if !shared.spill.load(Relaxed) && need <= limit {
                table.publish(rows)?;
                shared.note_peak(need);
            } else {
                shared.spill.store(true, Relaxed);
            }
            *shared.memory.lock().unwrap_or_else(|e| e.into_inner()) = Some(table.memory_report());
        }
        shared.phaser.wait()?;
        if shared.spill.load(Relaxed) {
            let parts = match parts {
                Some(p) => p,
                None => self.spill_tuples(&shared, &table, &writer)?,
            };
            drop(writer);
            drop(table);
            return self.parallel_partition(&shared, parts);
        }
        table.zero_slots(me, all);
        shared.phaser.wait()?;
        writer.link(&table, self.ctx.prefetch);
        shared.phaser.wait()?;
        self.report.buckets = table.view().index.len();
        self.report.table_peak = table.chunk_bytes() + table.view().index.len() * 8;
        self.table = Some(Table::Shared(table));
        self.phase = Phase::Probe;
        self.source = ProbeSource::Outer;
        Ok(())
    }

    /// Starts this participant's build partitions and writes the tuples it
    /// has put into the shared table so far to them.
    fn spill_tuples(
        &mut self,
        shared: &SharedBuild,
        table: &SharedTable,
        writer: &ChunkWriter,
    ) -> Result<Partitioner> {
        let mut parts = Partitioner::new(self.fanout, 0, &self.ctx, self.buf)?;
        let held =
            shared.buffers.fetch_add(self.fanout * self.buf, Relaxed) + self.fanout * self.buf;
        shared.note_peak(
            table.chunk_bytes()
                + SharedTable::slot_bytes(shared.rows.load(Relaxed))
                + table.directory_bytes()
                + held,
        );
        let mut scratch = Vec::new();
        writer.for_each(table, |_, tuple| {
            let (hash, row) = ChunkWriter::hash_and_row(table, tuple, &mut scratch);
            parts.write_encoded(hash, row)
        })?;
        Ok(parts)
    }

    /// The parallel build did not fit: finishes this participant's build
    /// partitions, partitions its share of the probe input, and hands both
    /// to the others; then partitions are joined one by one (`next_task`).
    fn parallel_partition(&mut self, shared: &SharedBuild, parts: Partitioner) -> Result<()> {
        let inner_files = parts.finish()?;
        let mut parts = Partitioner::new(self.fanout, 0, &self.ctx, self.buf)?;
        while let Some(b) = self.outer.next()? {
            let kv = eval_all(&self.outer_keys, &b)?;
            parts.write_batch(&b, &ProbeKeys::of(&kv, b.len), 0)?;
        }
        let outer_files = parts.finish()?;
        shared
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((inner_files, outer_files));
        if shared.phaser.wait()? {
            // Every participant has written its tuples out: the area can go.
            shared
                .table
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
        }
        self.report.levels = 1;
        self.report.fanout = self.fanout;
        self.report.batches = 0;
        self.report.peak = 0;
        self.phase = Phase::NextPartition;
        Ok(())
    }

    /// The next pair of partitions to join: this participant's own (from
    /// repartitioning) first, then the next shared one of a parallel join.
    fn next_task(&mut self) -> Option<Task> {
        if let Some(t) = self.tasks.pop() {
            return Some(t);
        }
        let shared = self.shared.as_ref()?;
        let p = shared.next_partition.fetch_add(1, Relaxed);
        let files = shared.files.lock().unwrap_or_else(|e| e.into_inner());
        if p >= files.first()?.0.len() {
            return None;
        }
        Some(Task {
            inner: files.iter().map(|(i, _)| i[p].clone()).collect(),
            outer: files.iter().map(|(_, o)| o[p].clone()).collect(),
            level: 0,
            chunked: false,
        })
    }

    /// Reads the build side; joins in memory if it fits, else partitions both sides.
    fn build_phase(&mut self) -> Result<()> {
        if let Some(shared) = self.shared.clone() {
            return self.parallel_build(shared);
        }
        let mut input = self.inner.take().expect("build side consumed once");
        let budget = self.limit.saturating_sub(self.fanout * self.buf);
        let mut builder = TableBuilder::new(&self.inner_types);
        let mut overflow: Option<Batch> = None;
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            if builder.memory_after(&b) > budget {
                overflow = Some(b);
                break;
            }
            let kv = eval_all(&self.inner_keys, &b)?;
            builder.add(&b, &kv);
            self.report.peak = self.report.peak.max(builder.memory());
        }
        let Some(first_unbuilt) = overflow else {
            let t = builder.finish(self.ctx.prefetch);
            self.set_table(t);
            self.note_memory(0);
            self.phase = Phase::Probe;
            self.source = ProbeSource::Outer;
            return Ok(());
        };
        // Spill: what was built, then the rest of the build input, then the probe input.
        self.report.levels = 1;
        self.report.fanout = self.fanout;
        self.report.original_buckets = builder.slot_count();
        let mut parts = Partitioner::new(self.fanout, 0, &self.ctx, self.buf)?;
        self.report.peak = self
            .report
            .peak
            .max(builder.memory() + self.fanout * self.buf);
        for i in 0..builder.rows() {
            if let Some(h) = builder.hash_of(i) {
                parts.write(h, &builder.payload, i)?;
            }
        }
        drop(builder);
        let write_batch = |parts: &mut Partitioner, b: &Batch, keys: &[Expr]| -> Result<()> {
            let kv = eval_all(keys, b)?;
            parts.write_batch(b, &ProbeKeys::of(&kv, b.len), 0)
        };
        let inner_keys = self.inner_keys.clone();
        write_batch(&mut parts, &first_unbuilt, &inner_keys)?;
        while let Some(b) = input.next()? {
            self.report.inner_rows += b.len as u64;
            write_batch(&mut parts, &b, &inner_keys)?;
        }
        let inner_files = parts.finish()?;
        let mut parts = Partitioner::new(self.fanout, 0, &self.ctx, self.buf)?;
        let outer_keys = self.outer_keys.clone();
        while let Some(b) = self.outer.next()? {
            write_batch(&mut parts, &b, &outer_keys)?;
        }
        let outer_files = parts.finish()?;
        self.report.batches = 0;
        for (inner, outer) in inner_files.into_iter().zip(outer_files).rev() {
            self.tasks.push(Task {
                inner: vec![inner],
                outer: vec![outer],
                level: 0,
                chunked: false,
            });
        }
        self.phase = Phase::NextPartition;
        Ok(())
    }

    /// Loads build rows from `src` while the table stays within `budget` (at
    /// least one batch, so that progress is made). Returns whether rows remain.
    fn load(&mut self, src: &mut BuildSource, budget: usize) -> Result<bool> {
        let mut builder = TableBuilder::new(&self.inner_types);
        loop {
            let b = match src.pending.take() {
                Some(b) => b,
                None => match src.reader.next_batch(LOAD_BATCH_ROWS)? {
                    Some((b, _)) => b,
                    None => break,
                },
            };
            if builder.rows() > 0 && builder.memory_after(&b) > budget {
                src.pending = Some(b);
                break;
            }
            let kv = eval_all(&self.inner_keys, &b)?;
            builder.add(&b, &kv);
        }
        let t = builder.finish(self.ctx.prefetch);
        self.set_table(t);
        Ok(src.pending.is_some() || !src.reader.at_end())
    }

    /// Starts joining the next pair of partitions (or repartitions it).
    fn start_task(&mut self, task: Task) -> Result<()> {
        if rows_of(&task.inner) == 0 || rows_of(&task.outer) == 0 {
            self.report.batches += 1;
            return Ok(());
        }
        // Table memory for the partition: entries (16 bytes a row) and slots
        // (8 bytes, at most 8/3 of them a row) plus the payload (≈ its
        // spilled bytes); two file buffers stay open.
        let estimate = bytes_of(&task.inner) as usize + rows_of(&task.inner) as usize * 38;
        let budget = self.limit.saturating_sub(2 * self.buf);
        if estimate <= budget || task.chunked {
            let mut src = BuildSource {
                reader: SpillReader::new(
                    &task.inner,
                    self.inner_types.clone(),
                    self.buf,
                    self.ctx.spill.clone(),
                ),
                pending: None,
            };
            let more = self.load(&mut src, budget)?;
            self.report.batches += 1;
            if task.chunked {
                self.report.chunked += 1;
            }
            self.probe_partition(task, more.then_some(src));
            self.phase = Phase::Probe;
            return Ok(());
        }
        // Too big: partition both sides again with the next level's hash bits.
        let level = task.level + 1;
        self.report.levels = self.report.levels.max(level + 1);
        self.table = None;
        // Only as many sub-partitions as the estimate needs (with room for
        // skew): a partition just over the budget splits in 2 or 4, not 512.
        let fanout = (estimate.div_ceil(budget.max(1)) * 2)
            .next_power_of_two()
            .clamp(2, self.fanout);
        let split = |this: &mut Self,
                     files: &[Arc<SpillFile>],
                     types: &[DataType]|
         -> Result<Vec<Arc<SpillFile>>> {
            let mut parts = Partitioner::new(fanout, level, &this.ctx, this.buf)?;
            this.report.peak = this.report.peak.max((fanout + 1) * this.buf);
            let mut reader =
                SpillReader::new(files, types.to_vec(), this.buf, this.ctx.spill.clone());
            while let Some((b, hashes)) = reader.next_batch(BATCH_SIZE)? {
                for (i, &h) in hashes.iter().enumerate() {
                    parts.write(h, &b, i)?;
                }
            }
            parts.finish()
        };
        let inner_types = self.inner_types.clone();
        let outer_types = self.outer_types.clone();
        let inner_parts = split(self, &task.inner, &inner_types)?;
        let outer_parts = split(self, &task.outer, &outer_types)?;
        let rows = rows_of(&task.inner);
        drop(task);
        for (inner, outer) in inner_parts.into_iter().zip(outer_parts).rev() {
            let chunked = inner.rows == rows;
            self.tasks.push(Task {
                inner: vec![inner],
                outer: vec![outer],
                level,
                chunked,
            });
        }
        Ok(())
    }

    /// Streams `task`'s probe partition through the table just loaded;
    /// `rest` holds the build rows of a chunked partition not loaded yet.
    fn probe_partition(&mut self, task: Task, rest: Option<BuildSource>) {
        self.note_memory(2 * self.buf);
        self.source = ProbeSource::File(SpillReader::new(
            &task.outer,
            self.outer_types.clone(),
            self.buf,
            self.ctx.spill.clone(),
        ));
        self.current = Some((task, rest));
    }

    /// The next batch to probe with, or `None` when the current source is done.
    fn next_probe_batch(&mut self) -> Result<Option<Batch>> {
        match &mut self.source {
            ProbeSource::Outer => self.outer.next(),
            ProbeSource::File(r) => Ok(r.next_batch(BATCH_SIZE)?.map(|(b, _)| b)),
        }
    }

    /// Called when the probe source is exhausted: the next chunk of a chunked
    /// partition, the next partition, or the end.
    fn probe_source_done(&mut self) -> Result<()> {
        self.table = None;
        let Some((task, rest)) = self.current.take() else {
            self.phase = if matches!(self.source, ProbeSource::Outer) {
                Phase::Done
            } else {
                Phase::NextPartition
            };
            return Ok(());
        };
        match rest {
            Some(mut src) => {
                let budget = self.limit.saturating_sub(2 * self.buf);
                let more = self.load(&mut src, budget)?;
                self.probe_partition(task, more.then_some(src));
            }
            None => self.phase = Phase::NextPartition,
        }
        Ok(())
    }

    /// Writes the Hash node's EXPLAIN ANALYZE lines. In a Parallel Hash Join
    /// every participant adds its figures to the shared report and the last
    /// one to finish writes the lines (Gather merges them into the leader's).
    fn finish_report(&mut self) {
        let Some(stats) = &self.ctx.stats else {
            return;
        };
        let spill = &self.ctx.spill;
        let (r, written, read, participants, memory) = match &self.shared {
            None => (
                self.report.clone(),
                spill.written.get(),
                spill.read.get(),
                1,
                None,
            ),
            Some(shared) => {
                let mut g = shared.report.lock().unwrap_or_else(|e| e.into_inner());
                let (c, finished, w, rd) = &mut *g;
                let me = &self.report;
                c.buckets = c.buckets.max(me.buckets);
                c.original_buckets = c.original_buckets.max(me.original_buckets);
                c.batches += me.batches;
                c.table_peak = c.table_peak.max(me.table_peak);
                // Partition-phase peaks of different participants may
                // coincide, so they add up.
                c.peak += me.peak;
                c.levels = c.levels.max(me.levels);
                c.chunked += me.chunked;
                c.fanout = c.fanout.max(me.fanout);
                *w += spill.written.get();
                *rd += spill.read.get();
                *finished += 1;
                if *finished < shared.participants {
                    return;
                }
                let mut c = c.clone();
                c.peak = c.peak.max(shared.peak.load(Relaxed));
                if c.levels == 0 {
                    c.batches = 1;
                }
                let memory = shared
                    .memory
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                (c, *w, *rd, shared.participants, memory)
            }
        };
        let mut s = stats.borrow_mut();
        let h = &mut s[self.hash_id];
        h.loops = 1;
        let buckets = if r.original_buckets != 0 && r.original_buckets != r.buckets {
            format!("{} (originally {})", r.buckets, r.original_buckets)
        } else {
            r.buckets.to_string()
        };
        let batches = if r.levels > 0 {
            format!("{} (originally 1)", r.batches)
        } else {
            "1".into()
        };
        h.extra.push(format!(
            "Buckets: {buckets}  Batches: {batches}  Memory Usage: {}kB",
            r.table_peak.div_ceil(1024)
        ));
        if let Some(m) = memory {
            let source = match (m.pool_segments, m.segments) {
                (0, _) => "fresh segments",
                (p, n) if p == n => "pool",
                _ => "pool and fresh segments",
            };
            h.extra.push(format!(
                "Chunk Size: {}kB  Chunks: {}  Shared Memory: {}kB from {source}  Huge Pages: {}",
                m.chunk_size / 1024,
                m.chunks,
                m.total.div_ceil(1024),
                if m.huge_pages { "yes" } else { "no" }
            ));
        }
        let limit = if participants > 1 {
            format!(
                "limit {}kB × {participants} participants",
                self.limit.div_ceil(1024)
            )
        } else {
            format!("limit {}kB", self.limit.div_ceil(1024))
        };
        let mut line = format!(
            "Prefetch: {}  Peak Memory: {}kB ({limit})",
            if self.ctx.prefetch { "on" } else { "off" },
            r.peak.div_ceil(1024),
        );
        if r.levels > 0 {
            line.push_str(&format!(
                "  Partitions: {} per level, {} level(s), {} chunked  Temp Written: {}kB  Temp Read: {}kB",
                r.fanout,
                r.levels,
                r.chunked,
                written.div_ceil(1024),
                read.div_ceil(1024)
            ));
        }
        h.extra.push(line);
    }
}

impl Operator for HashJoin {
    fn next(&mut self) -> Result<Option<Batch>> {
        // Zero-width output (count(*) over a join) needs only the number of
        // matches: no pairs, no gathering, and much larger batches.
        let zero_width =
            self.outer_out.is_empty() && self.inner_out.is_empty() && self.join_filter.is_none();
        loop {
            match self.phase {
                Phase::Build => {
                    let start = std::time::Instant::now();
                    self.build_phase()?;
                    if let Some(stats) = &self.ctx.stats {
                        let mut s = stats.borrow_mut();
                        let h = &mut s[self.hash_id];
                        h.loops = 1;
                        h.total = start.elapsed();
                        h.first_row = Some(h.total);
                        h.rows = self.report.inner_rows;
                    }
                }
                Phase::NextPartition => match self.next_task() {
                    Some(t) => self.start_task(t)?,
                    None => self.phase = Phase::Done,
                },
                Phase::Done => {
                    self.finish_report();
                    self.phase = Phase::Reported;
                    return Ok(None);
                }
                Phase::Reported => return Ok(None),
                Phase::Probe => {
                    if self.probe.as_ref().is_none_or(|p| p.done()) {
                        let table = self.table.as_ref().unwrap();
                        if table.linked() == 0 {
                            self.probe = None;
                            self.probe_source_done()?;
                            continue;
                        }
                        match self.next_probe_batch()? {
                            Some(b) => {
                                let kv = eval_all(&self.outer_keys, &b)?;
                                let keys = ProbeKeys::of(&kv, b.len);
                                let table = self.table.as_ref().unwrap();
                                let prefetch = self.ctx.prefetch;
                                let old = self.probe.take();
                                self.probe = Some(match table {
                                    Table::Local(t) => {
                                        ProbeState::new(&**t, b, keys, prefetch, old)
                                    }
                                    Table::Shared(t) => {
                                        ProbeState::new(&t.view(), b, keys, prefetch, old)
                                    }
                                });
                            }
                            None => {
                                self.probe = None;
                                self.probe_source_done()?;
                                continue;
                            }
                        }
                    }
                    let table = self.table.as_ref().unwrap();
                    let st = self.probe.as_mut().unwrap();
                    if zero_width {
                        let mut count = PairCount {
                            n: 0,
                            limit: ZERO_WIDTH_BATCH,
                        };
                        match table {
                            Table::Local(t) => st.pairs(&**t, &mut count),
                            Table::Shared(t) => st.pairs(&t.view(), &mut count),
                        }
                        if count.n == 0 {
                            continue;
                        }
                        return Ok(Some(Batch::new(Vec::new(), count.n)));
                    }
                    // The pair buffers live across calls.
                    let (oi, ii) = &mut self.pairs;
                    oi.clear();
                    ii.clear();
                    let mut sink = Pairs {
                        outer: oi,
                        inner: ii,
                        limit: BATCH_SIZE,
                    };
                    match table {
                        Table::Local(t) => st.pairs(&**t, &mut sink),
                        Table::Shared(t) => st.pairs(&t.view(), &mut sink),
                    }
                    if oi.is_empty() {
                        continue;
                    }
                    let out = match &self.join_filter {
                        None => {
                            let mut cols: Vec<Vector> = self
                                .outer_out
                                .iter()
                                .map(|&c| st.batch.columns[c].gather(oi))
                                .collect();
                            cols.extend(table.gather(&self.inner_types, &self.inner_out, ii));
                            Batch::new(cols, oi.len())
                        }
                        Some(f) => {
                            let nouter = st.batch.columns.len();
                            let mut cols: Vec<Vector> =
                                st.batch.columns.iter().map(|c| c.gather(oi)).collect();
                            let all: Vec<usize> = (0..self.inner_types.len()).collect();
                            cols.extend(table.gather(&self.inner_types, &all, ii));
                            let (full, removed) = apply_filter(Batch::new(cols, oi.len()), f)?;
                            self.ctx.add_removed(self.id, removed);
                            let mut keep: Vec<Vector> = self
                                .outer_out
                                .iter()
                                .map(|&c| full.columns[c].clone())
                                .collect();
                            keep.extend(
                                self.inner_out
                                    .iter()
                                    .map(|&c| full.columns[nouter + c].clone()),
                            );
                            Batch::new(keep, full.len)
                        }
                    };
                    if out.len > 0 {
                        return Ok(Some(out));
                    }
                }
            }
        }
    }
}

/// Statistics for tests and benchmarks: the spill traffic of a context.
pub fn spill_stats(ctx: &ExecContext) -> &SpillStats {
    &ctx.spill
}
