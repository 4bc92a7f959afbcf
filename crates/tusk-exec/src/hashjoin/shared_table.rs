//! The Parallel Hash Join's shared table: tuples in DSA chunks.
//!
//! ## Layout
//!
//! Every Parallel Hash node gets its own DSA area (`tusk_shmem::DsaArea`),
//! whose segments come from the `min_dynamic_shared_memory` pool when it has
//! room and from fresh OS segments otherwise (huge pages when available).
//! Each participant takes its own *chunks* of `tusk.hash_chunk_size` bytes
//! from the area (one lock-free CAS on the segment tail per chunk) and writes
//! its tuples into them one after the other, with no lock per tuple. A tuple
//! is
//!
//! ```text
//! next: u32 | len: u32 | key: i64                      (a single integer key)
//! next: u32 | len: u32 | hash: u64 | klen: u32 | key   (any other key)
//! ... then the build row in the spill encoding (`spill::encode_row`)
//! ```
//!
//! padded to 8 bytes; `len` is the unpadded length. A tuple larger than a
//! chunk gets an allocation of its own, which counts as one chunk. When the
//! build row is the key itself (one integer column joined on itself, as in
//! `count(*)` over a self-join or a join that keeps only the key of the
//! build side), the tuple is the 16-byte header and key alone, and the row
//! is rebuilt from the key when it is needed (gathering, spilling):
//! [`TableShape::key_only`].
//!
//! Tuples are named by 32-bit position-independent *refs*: the chunk's
//! number in the *chunk directory* (an array of `DsaPointer`s in the area)
//! and the tuple's offset in the chunk in 8-byte units. With chunks of 2^c
//! bytes the offset takes c − 3 bits and the chunk number the other 35 − c,
//! so a table can hold 32 GB whatever the chunk size (16 GB: a slot's entry
//! keeps its top bit for `MORE`). A chain link or slot stores ref + 1 (0 =
//! end of chain).
//!
//! The slot array (`slots`: one `AtomicU64` per slot, a power of two at
//! least 4/3 of the row count) is allocated in the same area once the row
//! count is known.
//!
//! ## Phases (the join drives them, a phaser between each)
//!
//! 1. *Load*: each participant writes the tuples of its share of the build
//!    input into its own chunks ([`ChunkWriter`]).
//! 2. The last participant to arrive allocates the slot array
//!    ([`SharedTable::publish`]) and resolves the chunk directory into this
//!    process's addresses.
//! 3. Each participant zeroes its slice of the slot array.
//! 4. Each participant inserts the tuples of its own chunks into the slots
//!    with compare-and-swaps (`SlotIndex::insert`), prefetching each home
//!    slot a fixed distance ahead of its insert. No serial merge of the
//!    participants' tuples happens anywhere.
//! 5. Probing, with relaxed loads: the phaser's mutex after phase 4 orders
//!    every push before every probe.
//!
//! A second process would attach the area's segments and resolve the same
//! directory into its own addresses; tusk's participants are threads, so the
//! resolution is done once and shared.

use crate::error::{ExecError, Result};
use crate::hashkey::hash_i64;
use crate::spill::decode_row;
use crate::vector::Vector;
// The chain links and slots are `slots`' atomics (loom's under `--cfg
// tusk_exec_loom`, where this module compiles but never runs).
use super::slots::{AtomicU32, AtomicU64, SlotIndex};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::OnceLock;
use tusk_shmem::{DsaArea, DsaConfig, DsaPointer, Dsm};
use tusk_storage::DataType;

/// Bytes of a tuple before its key (`next` and `len`).
const HEADER: usize = 8;
/// Bytes of a key-only tuple: the header and the key.
const KEY_ONLY_TUPLE: usize = HEADER + 8;
/// How many tuples ahead of its insert the build prefetches a home slot.
const INSERT_DISTANCE: usize = 32;

/// The key of a tuple being written.
pub(crate) enum TupleKey<'a> {
    Int(i64),
    Bytes(u64, &'a [u8]),
}

/// A tuple read back.
pub(crate) struct Tuple<'a> {
    pub next: &'a AtomicU32,
    pub bytes: &'a [u8],
}

/// Where the table's memory came from, for EXPLAIN.
pub(crate) struct MemoryReport {
    pub chunk_size: usize,
    pub chunks: usize,
    pub total: usize,
    pub pool_segments: usize,
    pub segments: usize,
    pub huge_pages: bool,
}

struct Published {
    /// One bit per possible ref (`chunks << offset_bits`): set when the
    /// tuple matched a probe row (the kinds whose `JoinKind::marks_inner`
    /// says so); empty otherwise.
    matched: *const std::sync::atomic::AtomicU64,
    matched_words: usize,
    /// Where the slot array lives in the area (for attaching processes).
    #[cfg_attr(not(test), allow(dead_code))]
    slots_ptr: DsaPointer,
    slots: *const AtomicU64,
    index: SlotIndex,
    rows: usize,
    /// Address of every chunk in this process, by directory index.
    bases: Vec<usize>,
}

/// How a table's keys and rows are stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TableShape {
    /// One integer or boolean key, stored as an `i64`; otherwise the key is
    /// stored encoded, with its hash.
    pub int_key: bool,
    /// Slot tags are the keys themselves (`integer` and `boolean` keys).
    pub exact: bool,
    /// The build row is one column of this type, and it is the key: tuples
    /// carry no payload, the row is rebuilt from the key.
    pub key_only: Option<DataType>,
}

/// The shared table of one Parallel Hash Join.
pub(crate) struct SharedTable {
    area: DsaArea,
    chunk_size: usize,
    offset_bits: u32,
    int_key: bool,
    /// Slot tags are the keys themselves (`integer` and `boolean` keys).
    exact: bool,
    key_only: Option<DataType>,
    directory: *const std::sync::atomic::AtomicU64,
    /// Where the directory lives in the area (what another process that
    /// attaches the area resolves; the second-process test does).
    #[cfg_attr(not(test), allow(dead_code))]
    dir_ptr: DsaPointer,
    capacity: usize,
    /// Directory slots taken so far.
    next_chunk: AtomicU32,
    /// Bytes of chunks (and oversized tuples) allocated.
    chunk_bytes: std::sync::atomic::AtomicUsize,
    published: OnceLock<Published>,
}

// SAFETY: the raw pointers point into `area`, which the table owns and which
// stays mapped as long as the table lives; everything reached through them
// that several threads touch concurrently is atomic (directory slots, hash
// table slots, `next` links, match bits). Tuple bytes are written by one participant before a
// phaser and only read after it.
unsafe impl Send for SharedTable {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedTable {}

fn shmem_error(e: tusk_shmem::ShmemError) -> ExecError {
    ExecError::new(e.to_string())
}

impl SharedTable {
    /// A table for at most `max_bytes` of chunks, in a new DSA area of
    /// `dsm` whose first segment is sized for the `expected_bytes` the
    /// planner's estimate comes to: a table of the expected size then lives
    /// in one segment instead of a geometric series of them (which, with the
    /// next segment prepared ahead, reserved three times the table).
    pub fn new(
        dsm: &Dsm,
        chunk_size: usize,
        shape: TableShape,
        max_bytes: usize,
        expected_bytes: usize,
    ) -> Result<Self> {
        assert!(shape.int_key || (!shape.exact && shape.key_only.is_none()));
        assert!(chunk_size.is_power_of_two() && chunk_size >= 1024);
        let offset_bits = chunk_size.trailing_zeros() - 3;
        // Refs take 31 bits: a slot's entry keeps its top bit for `MORE`.
        let max_by_bits = (1usize << (31 - offset_bits)) - 1;
        let capacity = (max_bytes / chunk_size + 64).min(max_by_bits);
        let defaults = DsaConfig::default();
        let config = DsaConfig {
            initial_segment_size: expected_bytes
                .min(max_bytes)
                .next_multiple_of(tusk_shmem::HUGE_PAGE_SIZE)
                .clamp(defaults.initial_segment_size, defaults.max_segment_size),
            ..defaults
        };
        let area = DsaArea::create(dsm, config).map_err(shmem_error)?;
        let dir = area.allocate(capacity * 8).map_err(shmem_error)?;
        let directory = area.get(dir).cast::<std::sync::atomic::AtomicU64>();
        Ok(SharedTable {
            area,
            chunk_size,
            offset_bits,
            int_key: shape.int_key,
            exact: shape.exact,
            key_only: shape.key_only,
            directory,
            dir_ptr: dir,
            capacity,
            next_chunk: AtomicU32::new(0),
            chunk_bytes: Default::default(),
            published: OnceLock::new(),
        })
    }

    /// Bytes of chunks allocated so far.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes.load(Relaxed)
    }

    /// Bytes of the slot array for `rows` tuples.
    pub fn slot_bytes(rows: usize) -> usize {
        SlotIndex::slots_for(rows) * 8
    }

    /// Bytes of the chunk directory.
    pub fn directory_bytes(&self) -> usize {
        self.capacity * 8
    }

    fn directory(&self, i: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(i < self.capacity);
        // SAFETY: the directory holds `capacity` slots (allocated in `new`)
        // and lives as long as `self.area`, hence as long as `&self`.
        unsafe { &*self.directory.add(i) }
    }

    /// Takes a directory slot and `bytes` of memory for it. `None` when the
    /// directory is full.
    fn new_chunk(&self, bytes: usize) -> Result<Option<(u32, *mut u8)>> {
        let i = self.next_chunk.fetch_add(1, Relaxed) as usize;
        if i >= self.capacity {
            return Ok(None);
        }
        let p = self.area.allocate(bytes).map_err(shmem_error)?;
        // Relaxed: the slot is read after a phaser (phase 2).
        self.directory(i).store(p.to_u64(), Relaxed);
        self.chunk_bytes.fetch_add(bytes, Relaxed);
        Ok(Some((i as u32, self.area.get(p))))
    }

    /// Phase 2 (one participant, after every load): allocates the slot
    /// array for `rows` tuples and resolves the directory.
    pub fn publish(&self, rows: usize, match_bits: bool) -> Result<()> {
        let nslots = SlotIndex::slots_for(rows);
        let p = self.area.allocate(nslots * 8).map_err(shmem_error)?;
        let chunks = (self.next_chunk.load(Relaxed) as usize).min(self.capacity);
        let matched_words = if match_bits {
            self.match_bit_bytes() / 8
        } else {
            0
        };
        let matched = if matched_words > 0 {
            let m = self.area.allocate(matched_words * 8).map_err(shmem_error)?;
            self.area.get(m).cast::<std::sync::atomic::AtomicU64>() as *const _
        } else {
            std::ptr::null()
        };
        let bases = (0..chunks)
            .map(|i| {
                self.area
                    .get(DsaPointer::from_u64(self.directory(i).load(Relaxed)))
                    as usize
            })
            .collect();
        let _ = self.published.set(Published {
            matched,
            matched_words,
            slots_ptr: p,
            slots: self.area.get(p).cast::<AtomicU64>(),
            index: SlotIndex::new(nslots, self.exact),
            rows,
            bases,
        });
        Ok(())
    }

    fn published(&self) -> &Published {
        self.published.get().expect("table used before publish")
    }

    /// Bytes of the match bits a join that marks build rows needs: one bit per
    /// possible ref of the chunks taken so far.
    pub fn match_bit_bytes(&self) -> usize {
        let chunks = (self.next_chunk.load(Relaxed) as usize).min(self.capacity);
        (chunks << self.offset_bits).div_ceil(64) * 8
    }

    /// Phase 3: zeroes part `me` of `parts` of the slot array (and of the
    /// match bits).
    pub fn zero_slots(&self, me: usize, parts: usize) {
        let v = self.view();
        let n = v.slots.len();
        for s in &v.slots[n * me / parts..n * (me + 1) / parts] {
            s.store(0, Relaxed);
        }
        let m = v.matched.len();
        for w in &v.matched[m * me / parts..m * (me + 1) / parts] {
            w.store(0, Relaxed);
        }
    }

    /// Calls `f(entry, tuple)` for every tuple of the chunks `extents`
    /// (directory index, bytes used) that the participants published after
    /// loading: the whole table, read by any participant.
    pub fn for_each_tuple(
        &self,
        extents: &[(u32, usize)],
        mut f: impl FnMut(u32, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let bases = &self.published().bases;
        for &(i, used) in extents {
            // SAFETY: a participant wrote whole tuples up to `used` in chunk
            // `i` before the phaser that preceded publishing, and `bases`
            // holds the chunk's address in this process. Nothing writes
            // tuple bytes after loading (match bits live apart).
            unsafe { walk_chunk(i, bases[i as usize], used, self.offset_bits, &mut f)? };
        }
        Ok(())
    }

    /// A cheap view for probing and linking (after [`SharedTable::publish`]).
    pub fn view(&self) -> SharedView<'_> {
        let p = self.published();
        SharedView {
            // SAFETY: the array has `index.len()` slots, allocated in
            // `publish` in `self.area`, which lives as long as `&self`; zeroed
            // in phase 3 before anyone reads it.
            slots: unsafe { std::slice::from_raw_parts(p.slots, p.index.len()) },
            index: p.index,
            bases: &p.bases,
            matched: if p.matched_words == 0 {
                &[]
            } else {
                // SAFETY: `matched_words` words allocated in `publish` in
                // `self.area`, which lives as long as `&self`; zeroed in
                // phase 3 before any use, and only touched atomically.
                unsafe { std::slice::from_raw_parts(p.matched, p.matched_words) }
            },
            offset_bits: self.offset_bits,
            int_key: self.int_key,
        }
    }

    /// Tuples in the table (after publish).
    pub fn rows(&self) -> usize {
        self.published().rows
    }

    /// The build row (spill encoding) of a tuple.
    pub fn payload(&self, entry: u32) -> &[u8] {
        let b = self.view().tuple(entry).bytes;
        if self.int_key {
            &b[16..]
        } else {
            let klen = u32::from_le_bytes(b[16..20].try_into().unwrap()) as usize;
            &b[20 + klen..]
        }
    }

    /// Columns `cols` of the build rows named by `refs`.
    pub fn gather(&self, types: &[DataType], cols: &[usize], refs: &[u32]) -> Vec<Vector> {
        if cols.is_empty() {
            return Vec::new();
        }
        let mut all: Vec<Vector> = types
            .iter()
            .map(|&t| Vector::with_capacity(t, refs.len()))
            .collect();
        if self.key_only.is_some() {
            let view = self.view();
            for &r in refs {
                push_int(&mut all[0], view.int_entry(r + 1).0);
            }
        } else {
            for &r in refs {
                decode_row(self.payload(r + 1), &mut all);
            }
        }
        let mut all: Vec<Option<Vector>> = all.into_iter().map(Some).collect();
        // Each column is moved out at its last mention and cloned before.
        cols.iter()
            .enumerate()
            .map(|(j, &c)| {
                if cols[j + 1..].contains(&c) {
                    all[c].clone().expect("column not yet moved")
                } else {
                    all[c]
                        .take()
                        .expect("column mentioned again after its last mention")
                }
            })
            .collect()
    }

    pub fn memory_report(&self) -> MemoryReport {
        let s = self.area.stats();
        MemoryReport {
            chunk_size: self.chunk_size,
            chunks: (self.next_chunk.load(Relaxed) as usize).min(self.capacity),
            total: s.total_size,
            pool_segments: s.pool_segments,
            segments: s.segments,
            huge_pages: (0..s.segments)
                .all(|i| self.area.segment(i).is_some_and(|g| g.huge_pages())),
        }
    }
}

/// The published table as probing sees it: slots and chunk addresses.
pub(crate) struct SharedView<'a> {
    pub slots: &'a [AtomicU64],
    /// Match bits by ref (see `Published::matched`).
    pub matched: &'a [std::sync::atomic::AtomicU64],
    pub index: SlotIndex,
    bases: &'a [usize],
    offset_bits: u32,
    pub int_key: bool,
}

impl<'a> SharedView<'a> {
    /// A view from parts resolved elsewhere: how a process that attached the
    /// area's segments at its own addresses sees the table.
    #[cfg(all(test, not(tusk_exec_loom)))]
    fn from_parts(
        slots: &'a [AtomicU64],
        exact: bool,
        bases: &'a [usize],
        offset_bits: u32,
        int_key: bool,
    ) -> SharedView<'a> {
        SharedView {
            slots,
            matched: &[],
            index: SlotIndex::new(slots.len(), exact),
            bases,
            offset_bits,
            int_key,
        }
    }

    /// Records that tuple `entry` (ref + 1) matched a probe row. Every
    /// participant may set bits at once; the bits are read after every
    /// participant has finished probing (`hashjoin::shared`).
    #[inline]
    pub fn set_matched(&self, entry: u32) {
        let r = (entry - 1) as usize;
        let (w, bit) = (&self.matched[r / 64], 1u64 << (r % 64));
        if w.load(Relaxed) & bit == 0 {
            w.fetch_or(bit, Relaxed);
        }
    }

    /// Whether tuple `entry` (ref + 1) matched a probe row.
    #[inline]
    pub fn is_matched(&self, entry: u32) -> bool {
        let r = (entry - 1) as usize;
        self.matched[r / 64].load(Relaxed) & (1 << (r % 64)) != 0
    }

    /// Address of the tuple a chain entry (ref + 1) names.
    #[inline]
    pub fn tuple_ptr(&self, entry: u32) -> *const u8 {
        let r = entry - 1;
        let base = self.bases[(r >> self.offset_bits) as usize];
        (base + (((r & ((1 << self.offset_bits) - 1)) as usize) << 3)) as *const u8
    }

    /// The tuple a chain entry (ref + 1) names.
    #[inline]
    pub fn tuple(&self, entry: u32) -> Tuple<'a> {
        let t = self.tuple_ptr(entry);
        // SAFETY: refs come from `ChunkWriter::link`, which only links tuples
        // written completely in a chunk of this area before the phaser that
        // precedes probing; the tuple starts 8-aligned with its `next` link
        // and its `len` field, and `len` bytes of it are inside the chunk.
        unsafe {
            let len = (t.add(4) as *const u32).read() as usize;
            Tuple {
                next: &*(t as *const AtomicU32),
                bytes: std::slice::from_raw_parts(t, len),
            }
        }
    }

    /// The entry after `entry` in its chain.
    #[inline]
    pub fn next_of(&self, entry: u32) -> u32 {
        // SAFETY: as in `tuple`; every tuple starts with its `next` link.
        unsafe { (*(self.tuple_ptr(entry) as *const AtomicU32)).load(Relaxed) }
    }

    /// Integer key and next entry of a tuple (single-integer-key tables).
    #[inline]
    pub fn int_entry(&self, entry: u32) -> (i64, u32) {
        let t = self.tuple_ptr(entry);
        // SAFETY: as in `tuple`; integer-key tuples hold their key at 8.
        unsafe {
            (
                (t.add(HEADER) as *const i64).read(),
                (*(t as *const AtomicU32)).load(Relaxed),
            )
        }
    }

    /// Hash, encoded key and next entry of a tuple (byte-key tables).
    #[inline]
    pub fn bytes_entry(&self, entry: u32) -> (u64, &'a [u8], u32) {
        let t = self.tuple(entry);
        let b = t.bytes;
        let hash = u64::from_le_bytes(b[8..16].try_into().unwrap());
        let klen = u32::from_le_bytes(b[16..20].try_into().unwrap()) as usize;
        (hash, &b[20..20 + klen], t.next.load(Relaxed))
    }
}

/// One participant's chunks and its position in the current one.
#[derive(Default)]
pub(crate) struct ChunkWriter {
    /// (directory index, address, bytes used) of every chunk this participant filled.
    chunks: Vec<(u32, usize, usize)>,
}

impl ChunkWriter {
    pub fn new() -> ChunkWriter {
        ChunkWriter { chunks: Vec::new() }
    }

    /// Writes a tuple with `key` and the encoded build row `row` (spill
    /// encoding) straight into this participant's current chunk.
    /// `may_allocate(bytes)` is asked before a new chunk is taken; when it
    /// (or the chunk directory) says no, nothing is written and `false` is
    /// returned: the join must spill.
    pub fn insert(
        &mut self,
        table: &SharedTable,
        key: TupleKey<'_>,
        row: &[u8],
        may_allocate: &mut dyn FnMut(usize) -> bool,
    ) -> Result<bool> {
        let key_len = match key {
            TupleKey::Int(_) => 8,
            TupleKey::Bytes(_, k) => 12 + k.len(),
        };
        let len = HEADER + key_len + row.len();
        let padded = len.next_multiple_of(8);
        let fits = self
            .chunks
            .last()
            .is_some_and(|&(_, _, used)| used + padded <= table.chunk_size);
        if !fits {
            let bytes = if padded > table.chunk_size {
                padded.next_multiple_of(4096)
            } else {
                table.chunk_size
            };
            if !may_allocate(bytes) {
                return Ok(false);
            }
            let Some((i, addr)) = table.new_chunk(bytes)? else {
                return Ok(false);
            };
            // An oversized tuple fills its own allocation; the next tuple
            // starts a fresh chunk because `used` then exceeds the chunk size.
            self.chunks.push((i, addr as usize, 0));
        }
        let (_, addr, used) = self.chunks.last_mut().unwrap();
        // SAFETY: `used + padded` is within the chunk (or the oversized
        // allocation, sized for this tuple), so the `len` bytes written lie
        // inside this participant's own chunk, which no one else writes or
        // reads before the next phaser; the tuple starts 8-aligned.
        unsafe {
            let t = (*addr as *mut u8).add(*used);
            (t as *mut u32).write(0);
            (t.add(4) as *mut u32).write(len as u32);
            let mut p = t.add(HEADER);
            match key {
                TupleKey::Int(k) => {
                    (p as *mut i64).write(k);
                    p = p.add(8);
                }
                TupleKey::Bytes(h, k) => {
                    (p as *mut u64).write(h);
                    (p.add(8) as *mut u32).write_unaligned(k.len() as u32);
                    std::ptr::copy_nonoverlapping(k.as_ptr(), p.add(12), k.len());
                    p = p.add(12 + k.len());
                }
            }
            std::ptr::copy_nonoverlapping(row.as_ptr(), p, row.len());
        }
        *used += padded;
        Ok(true)
    }

    /// Writes a key-only tuple ([`TableShape::key_only`]) for each of
    /// `keys`, the tight loop of the common case: as many as fit are written
    /// into the current chunk at a time. Returns how many were written: all
    /// of them, or fewer when `may_allocate` (or the chunk directory) refuses
    /// a chunk and the join must spill.
    pub fn insert_keys(
        &mut self,
        table: &SharedTable,
        keys: &[i64],
        may_allocate: &mut dyn FnMut(usize) -> bool,
    ) -> Result<usize> {
        debug_assert!(table.key_only.is_some());
        const LEN: usize = KEY_ONLY_TUPLE;
        let mut done = 0;
        while done < keys.len() {
            let room = self.chunks.last().map_or(0, |&(_, _, used)| {
                table.chunk_size.saturating_sub(used) / LEN
            });
            if room == 0 {
                if !may_allocate(table.chunk_size) {
                    return Ok(done);
                }
                let Some((i, addr)) = table.new_chunk(table.chunk_size)? else {
                    return Ok(done);
                };
                self.chunks.push((i, addr as usize, 0));
                continue;
            }
            let n = room.min(keys.len() - done);
            let (_, addr, used) = self.chunks.last_mut().unwrap();
            // SAFETY: `n` tuples of `LEN` bytes fit between `used` and the
            // end of this participant's own chunk (`room` says so), which no
            // one else writes or reads before the next phaser; `used` is a
            // multiple of 8, so every tuple starts 8-aligned.
            unsafe {
                let mut t = (*addr as *mut u8).add(*used);
                for &k in &keys[done..done + n] {
                    (t as *mut u32).write(0);
                    (t.add(4) as *mut u32).write(LEN as u32);
                    (t.add(HEADER) as *mut i64).write(k);
                    t = t.add(LEN);
                }
            }
            *used += n * LEN;
            done += n;
        }
        Ok(done)
    }

    /// Calls `f(entry, tuple)` for every tuple this participant wrote
    /// (entry = ref + 1).
    pub fn for_each(
        &self,
        table: &SharedTable,
        mut f: impl FnMut(u32, &[u8]) -> Result<()>,
    ) -> Result<()> {
        for &(i, addr, used) in &self.chunks {
            // SAFETY: this participant wrote whole tuples up to `used` in
            // its chunk `i` at `addr`.
            unsafe { walk_chunk(i, addr, used, table.offset_bits, &mut f)? };
        }
        Ok(())
    }

    /// The chunks this participant filled: (directory index, bytes used),
    /// what [`SharedTable::for_each_tuple`] reads.
    pub fn extents(&self) -> Vec<(u32, usize)> {
        self.chunks.iter().map(|&(i, _, used)| (i, used)).collect()
    }

    /// Phase 4: inserts every tuple of this participant into the shared
    /// slots as a software pipeline: while one tuple is inserted, the home
    /// slot of the tuple [`INSERT_DISTANCE`] behind it is prefetched (when
    /// `prefetch`), so that about that many cache misses are in flight.
    pub fn link(&self, table: &SharedTable, prefetch: bool) {
        let view = table.view();
        let index = view.index;
        // (home, tag, entry, tuple address) of the tuples hashed but not
        // inserted yet, a ring of INSERT_DISTANCE.
        let mut ring = [(0usize, 0u32, 0u32, 0usize); INSERT_DISTANCE];
        let mut n = 0usize;
        let insert = |(home, tag, entry, addr): (usize, u32, u32, usize)| {
            // SAFETY: `addr` is the start of one of this participant's
            // tuples, whose first 4 bytes are its `next` link.
            let next = unsafe { &*(addr as *const AtomicU32) };
            index.insert(view.slots, home, tag, entry, next);
        };
        // Hashes tuple `entry` at `addr` (its key field: an integer key, or
        // the hash of an encoded one), prefetches its home slot and inserts
        // the tuple INSERT_DISTANCE tuples back.
        let mut visit = |entry: u32, addr: usize, key_field: u64| {
            let (hash, tag) = if table.int_key {
                let (key, hash) = (key_field as i64, hash_i64(key_field as i64));
                let tag = index
                    .int_tag(hash, key)
                    .expect("a build key fits its own table's tags");
                (hash, tag)
            } else {
                (key_field, index.hash_tag(key_field))
            };
            let home = index.home(hash);
            if prefetch {
                super::table::prefetch_line(&view.slots[home]);
            }
            let slot = &mut ring[n % INSERT_DISTANCE];
            if n >= INSERT_DISTANCE {
                insert(*slot);
            }
            *slot = (home, tag, entry, addr);
            n += 1;
        };
        if table.key_only.is_some() {
            // Key-only tuples have one size: walk them with a fixed stride.
            for &(i, addr, used) in &self.chunks {
                let first = (i << table.offset_bits) + 1;
                for off in (0..used).step_by(KEY_ONLY_TUPLE) {
                    // SAFETY: this participant wrote key-only tuples of
                    // KEY_ONLY_TUPLE bytes, 8-aligned, up to `used` in this
                    // chunk (`insert_keys`), each with its key at HEADER.
                    let key = unsafe { ((addr + off + HEADER) as *const i64).read() };
                    visit(first + (off >> 3) as u32, addr + off, key as u64);
                }
            }
        } else {
            self.for_each(table, |entry, bytes| {
                visit(
                    entry,
                    bytes.as_ptr() as usize,
                    u64::from_le_bytes(bytes[8..16].try_into().unwrap()),
                );
                Ok(())
            })
            .expect("linking cannot fail");
        }
        for k in n.saturating_sub(INSERT_DISTANCE)..n {
            insert(ring[k % INSERT_DISTANCE]);
        }
    }

    /// The key hash and encoded build row of a tuple written by this
    /// writer; `scratch` holds a row rebuilt from a key-only tuple.
    pub fn hash_and_row<'t>(
        table: &SharedTable,
        bytes: &'t [u8],
        scratch: &'t mut Vec<u8>,
    ) -> (u64, &'t [u8]) {
        if table.int_key {
            let key = i64::from_le_bytes(bytes[8..16].try_into().unwrap());
            let row = match table.key_only {
                Some(ty) => {
                    let mut v = Vector::with_capacity(ty, 1);
                    push_int(&mut v, key);
                    scratch.clear();
                    crate::spill::encode_row(scratch, &crate::vector::Batch::new(vec![v], 1), 0);
                    &scratch[..]
                }
                None => &bytes[16..],
            };
            (hash_i64(key), row)
        } else {
            let klen = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
            (
                u64::from_le_bytes(bytes[8..16].try_into().unwrap()),
                &bytes[20 + klen..],
            )
        }
    }
}

/// Calls `f(entry, tuple)` for each tuple of chunk `chunk` at `addr`, up
/// to `used` bytes.
///
/// # Safety
///
/// The chunk must hold whole tuples up to `used`, each starting 8-aligned
/// with its `len` field, written before this call and not written during it.
unsafe fn walk_chunk(
    chunk: u32,
    addr: usize,
    used: usize,
    offset_bits: u32,
    f: &mut impl FnMut(u32, &[u8]) -> Result<()>,
) -> Result<()> {
    let mut off = 0;
    while off < used {
        // SAFETY: the caller's promise: a whole tuple starts at `off`.
        let bytes = unsafe {
            let t = (addr as *const u8).add(off);
            let len = (t.add(4) as *const u32).read() as usize;
            std::slice::from_raw_parts(t, len)
        };
        let entry = ((chunk << offset_bits) | (off >> 3) as u32) + 1;
        f(entry, bytes)?;
        off += bytes.len().next_multiple_of(8);
    }
    Ok(())
}

/// Appends integer key `k` to `v` as `v`'s type (a key-only row's column).
fn push_int(v: &mut Vector, k: i64) {
    match &mut v.data {
        crate::vector::Data::Int2(d) => d.push(k as i16),
        crate::vector::Data::Int4(d) => d.push(k as i32),
        crate::vector::Data::Int8(d) => d.push(k),
        crate::vector::Data::Bool(d) => d.push(k != 0),
        _ => unreachable!("a key-only row is one integer or boolean column"),
    }
}

impl std::fmt::Debug for SharedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTable")
            .field("chunk_size", &self.chunk_size)
            .field("chunks", &self.next_chunk.load(Relaxed))
            .finish()
    }
}

#[cfg(all(test, not(tusk_exec_loom)))]
mod tests;
