//! Inner hash join.
//!
//! The build side (the plan's Hash child) is read completely into a chained
//! hash table; then the probe side streams through it batch by batch.
//!
//! ## Table layout
//!
//! Build row *r* owns entry *r*; `buckets[b]` holds 1 + the index of the first
//! entry of bucket *b* (0 = empty) and each entry links to the next one of its
//! bucket. For a single integer key an entry is `{key: i64, next: u32}` — one
//! cache line visit per chain step. Other keys keep their hash and an encoded
//! byte key per entry. The bucket count is the next power of two at or above
//! the number of rows, and the bucket is taken from the hash's high bits.
//!
//! Rows with a NULL key are stored (their payload keeps row numbers aligned)
//! but never linked, so they never match: NULLs never join.
//!
//! ## Probing
//!
//! A probe batch may produce any number of matches (one key repeated a million
//! times on both sides). The probe therefore keeps a cursor — current probe row
//! and position in its chain — and stops each output batch at a fixed size.

use crate::error::Result;
use crate::exec::{apply_filter, build, ExecContext, Operator};
use crate::expr::Expr;
use crate::hashkey::{encode_row, hash_bytes, hash_i64, int_key, is_int_key};
use crate::plan::{NodeKind, Plan};
use crate::vector::{Batch, Vector, BATCH_SIZE};

const EMPTY: u32 = 0;

/// How far ahead the build's linking pass prefetches bucket heads.
const LINK_PREFETCH_DISTANCE: usize = 16;

/// Hints the CPU to bring the cache line holding `*p` closer. Never faults,
/// whatever `p` points at; a no-op on targets without a prefetch instruction.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE is part of the x86-64 baseline, so the instruction exists
        // on every CPU this code runs on; a prefetch is only a hint and cannot
        // fault or change memory, whatever address it is given.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[derive(Clone, Copy)]
#[repr(C)]
struct IntEntry {
    key: i64,
    next: u32,
}

enum Entries {
    Int(Vec<IntEntry>),
    Bytes {
        hashes: Vec<u64>,
        next: Vec<u32>,
        offsets: Vec<u32>,
        arena: Vec<u8>,
    },
}

/// The build side: entries, buckets and payload columns.
struct JoinTable {
    entries: Entries,
    buckets: Vec<u32>,
    shift: u32,
    payload: Batch,
    /// Rows with a non-NULL key (linked into buckets).
    linked: usize,
}

impl JoinTable {
    fn bucket_of(&self, hash: u64) -> usize {
        (hash >> self.shift) as usize
    }

    fn memory_bytes(&self) -> usize {
        let entries = match &self.entries {
            Entries::Int(e) => e.len() * std::mem::size_of::<IntEntry>(),
            Entries::Bytes {
                hashes,
                next,
                offsets,
                arena,
            } => hashes.len() * 8 + next.len() * 4 + offsets.len() * 4 + arena.len(),
        };
        let payload: usize = self
            .payload
            .columns
            .iter()
            .map(|c| match &c.data {
                crate::vector::Data::Bool(v) => v.len(),
                crate::vector::Data::Int4(v) => v.len() * 4,
                crate::vector::Data::Int8(v) => v.len() * 8,
                crate::vector::Data::Numeric(v) => v.len() * 32,
                crate::vector::Data::Text(v) => {
                    v.len() * 4 + v.iter().map(|s| s.len()).sum::<usize>()
                }
            })
            .sum();
        entries + payload + self.buckets.len() * 4
    }

    /// Reads the whole build input.
    fn build(
        input: &mut dyn Operator,
        keys: &[Expr],
        payload_types: &[tusk_storage::DataType],
    ) -> Result<JoinTable> {
        let mut payload = Batch::empty(payload_types);
        let mut entries: Option<Entries> = None;
        let mut key_buf = Vec::new();
        let mut linked = 0usize;
        while let Some(b) = input.next()? {
            let kv = keys
                .iter()
                .map(|k| k.eval(&b))
                .collect::<Result<Vec<Vector>>>()?;
            let e = entries.get_or_insert_with(|| {
                if is_int_key(&kv) {
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
                                linked += 1;
                                v.push(IntEntry {
                                    key: k,
                                    next: EMPTY,
                                })
                            }
                            None => v.push(IntEntry {
                                key: 0,
                                next: u32::MAX,
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
                        key_buf.clear();
                        if encode_row(&kv, i, &mut key_buf) {
                            linked += 1;
                            hashes.push(hash_bytes(&key_buf));
                            next.push(EMPTY);
                            arena.extend_from_slice(&key_buf);
                        } else {
                            hashes.push(0);
                            next.push(u32::MAX);
                        }
                        offsets.push(arena.len() as u32);
                    }
                }
            }
            payload.append(&b);
        }
        let entries = entries.unwrap_or(Entries::Int(Vec::new()));
        let nbuckets = linked.next_power_of_two().max(1024);
        let shift = 64 - nbuckets.trailing_zeros();
        let mut t = JoinTable {
            entries,
            buckets: vec![EMPTY; nbuckets],
            shift,
            payload,
            linked,
        };
        t.link();
        Ok(t)
    }

    /// Pushes every non-NULL entry onto its bucket's chain.
    fn link(&mut self) {
        let shift = self.shift;
        let buckets = &mut self.buckets;
        match &mut self.entries {
            Entries::Int(v) => {
                // Bucket heads are random writes: prefetch a few entries ahead.
                for i in 0..v.len() {
                    if let Some(ahead) = v.get(i + LINK_PREFETCH_DISTANCE) {
                        prefetch(&buckets[(hash_i64(ahead.key) >> shift) as usize]);
                    }
                    let e = &mut v[i];
                    if e.next == u32::MAX {
                        continue;
                    }
                    let b = (hash_i64(e.key) >> shift) as usize;
                    e.next = buckets[b];
                    buckets[b] = i as u32 + 1;
                }
            }
            Entries::Bytes { hashes, next, .. } => {
                for i in 0..hashes.len() {
                    if let Some(h) = hashes.get(i + LINK_PREFETCH_DISTANCE) {
                        prefetch(&buckets[(h >> shift) as usize]);
                    }
                    if next[i] == u32::MAX {
                        continue;
                    }
                    let b = (hashes[i] >> shift) as usize;
                    next[i] = buckets[b];
                    buckets[b] = i as u32 + 1;
                }
            }
        }
    }
}

/// Keys of the current probe batch, in the table's representation.
enum ProbeKeys {
    Int(Vec<Option<i64>>),
    Bytes(Vec<Option<(u64, std::ops::Range<usize>)>>, Vec<u8>),
}

struct ProbeState {
    batch: Batch,
    keys: ProbeKeys,
    /// Head of each row's bucket chain, loaded up front (see `load_heads`).
    heads: Vec<u32>,
    row: usize,
    /// 1 + next entry to examine for `row`, or EMPTY to start the row afresh.
    chain: u32,
    started_row: bool,
}

/// Loads the bucket head of every probe row of a batch in two passes, so
/// that the cache misses of many rows overlap instead of following each other:
/// first the bucket of each row is computed and its slot prefetched, then the
/// heads are read and the first entry of each chain is prefetched. Walking the
/// chains afterwards mostly hits the cache.
fn load_heads(t: &JoinTable, keys: &ProbeKeys) -> Vec<u32> {
    let buckets: Vec<usize> = match keys {
        ProbeKeys::Int(ks) => ks
            .iter()
            .map(|k| k.map_or(usize::MAX, |k| t.bucket_of(hash_i64(k))))
            .collect(),
        ProbeKeys::Bytes(ks, _) => ks
            .iter()
            .map(|k| k.as_ref().map_or(usize::MAX, |(h, _)| t.bucket_of(*h)))
            .collect(),
    };
    for &b in &buckets {
        if b != usize::MAX {
            prefetch(&t.buckets[b]);
        }
    }
    let heads: Vec<u32> = buckets
        .iter()
        .map(|&b| if b == usize::MAX { EMPTY } else { t.buckets[b] })
        .collect();
    if let Entries::Int(entries) = &t.entries {
        for &h in &heads {
            if h != EMPTY {
                prefetch(&entries[h as usize - 1]);
            }
        }
    }
    heads
}

pub struct HashJoin {
    outer: Box<dyn Operator>,
    inner: Option<Box<dyn Operator>>,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    outer_out: Vec<usize>,
    inner_out: Vec<usize>,
    inner_types: Vec<tusk_storage::DataType>,
    join_filter: Option<Expr>,
    table: Option<JoinTable>,
    probe: Option<ProbeState>,
    ctx: ExecContext,
    id: usize,
    hash_id: usize,
}

impl HashJoin {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<HashJoin> {
        let NodeKind::HashJoin {
            outer_keys,
            inner_keys,
            outer_out,
            inner_out,
            join_filter,
        } = &plan.kind
        else {
            unreachable!()
        };
        let hash = &plan.children[1];
        Ok(HashJoin {
            outer: build(&plan.children[0], ctx)?,
            inner: Some(build(&hash.children[0], ctx)?),
            outer_keys: outer_keys.clone(),
            inner_keys: inner_keys.clone(),
            outer_out: outer_out.clone(),
            inner_out: inner_out.clone(),
            inner_types: hash.children[0].output.clone(),
            join_filter: join_filter.clone(),
            table: None,
            probe: None,
            ctx: ctx.clone(),
            id: plan.id,
            hash_id: hash.id,
        })
    }

    fn build_table(&mut self) -> Result<()> {
        let mut input = self.inner.take().expect("build side consumed once");
        let start = std::time::Instant::now();
        let t = JoinTable::build(input.as_mut(), &self.inner_keys, &self.inner_types)?;
        if let Some(stats) = &self.ctx.stats {
            let mut s = stats.borrow_mut();
            let h = &mut s[self.hash_id];
            h.loops = 1;
            h.rows = t.payload.len as u64;
            h.total = start.elapsed();
            h.first_row = Some(h.total);
            h.extra.push(format!(
                "Buckets: {}  Batches: 1  Memory Usage: {}kB",
                t.buckets.len(),
                t.memory_bytes().div_ceil(1024)
            ));
        }
        self.table = Some(t);
        Ok(())
    }

    fn start_probe(&self, batch: Batch) -> Result<ProbeState> {
        let kv = self
            .outer_keys
            .iter()
            .map(|k| k.eval(&batch))
            .collect::<Result<Vec<Vector>>>()?;
        let t = self.table.as_ref().unwrap();
        let keys = match &t.entries {
            Entries::Int(_) => ProbeKeys::Int((0..batch.len).map(|i| int_key(&kv[0], i)).collect()),
            Entries::Bytes { .. } => {
                let mut arena = Vec::new();
                let mut ks = Vec::with_capacity(batch.len);
                for i in 0..batch.len {
                    let start = arena.len();
                    if encode_row(&kv, i, &mut arena) {
                        let h = hash_bytes(&arena[start..]);
                        ks.push(Some((h, start..arena.len())));
                    } else {
                        arena.truncate(start);
                        ks.push(None);
                    }
                }
                ProbeKeys::Bytes(ks, arena)
            }
        };
        let heads = load_heads(t, &keys);
        Ok(ProbeState {
            batch,
            keys,
            heads,
            row: 0,
            chain: EMPTY,
            started_row: false,
        })
    }

    /// Collects up to `limit` matching (outer row, inner row) pairs.
    fn probe_pairs(
        table: &JoinTable,
        st: &mut ProbeState,
        limit: usize,
        outer_idx: &mut Vec<u32>,
        inner_idx: &mut Vec<u32>,
    ) {
        let n = st.batch.len;
        match (&table.entries, &st.keys) {
            (Entries::Int(entries), ProbeKeys::Int(keys)) => {
                while st.row < n {
                    let Some(k) = keys[st.row] else {
                        st.row += 1;
                        continue;
                    };
                    let mut e = if st.started_row {
                        st.chain
                    } else {
                        st.heads[st.row]
                    };
                    while e != EMPTY {
                        let ent = &entries[e as usize - 1];
                        if ent.key == k {
                            if outer_idx.len() == limit {
                                st.started_row = true;
                                st.chain = e;
                                return;
                            }
                            outer_idx.push(st.row as u32);
                            inner_idx.push(e - 1);
                        }
                        e = ent.next;
                    }
                    st.started_row = false;
                    st.row += 1;
                }
            }
            (
                Entries::Bytes {
                    hashes,
                    next,
                    offsets,
                    arena,
                },
                ProbeKeys::Bytes(keys, parena),
            ) => {
                while st.row < n {
                    let Some((h, range)) = &keys[st.row] else {
                        st.row += 1;
                        continue;
                    };
                    let probe_key = &parena[range.clone()];
                    let mut e = if st.started_row {
                        st.chain
                    } else {
                        st.heads[st.row]
                    };
                    while e != EMPTY {
                        let i = e as usize - 1;
                        if hashes[i] == *h
                            && &arena[offsets[i] as usize..offsets[i + 1] as usize] == probe_key
                        {
                            if outer_idx.len() == limit {
                                st.started_row = true;
                                st.chain = e;
                                return;
                            }
                            outer_idx.push(st.row as u32);
                            inner_idx.push(i as u32);
                        }
                        e = next[i];
                    }
                    st.started_row = false;
                    st.row += 1;
                }
            }
            _ => unreachable!("probe keys match the table's representation"),
        }
    }
}

impl Operator for HashJoin {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.table.is_none() {
            self.build_table()?;
        }
        // Zero-width output (count(*) over a join) needs no gathering, so it
        // can use much larger batches.
        let limit =
            if self.outer_out.is_empty() && self.inner_out.is_empty() && self.join_filter.is_none()
            {
                1 << 16
            } else {
                BATCH_SIZE
            };
        loop {
            if self.probe.as_ref().is_none_or(|p| p.row >= p.batch.len) {
                if self.table.as_ref().unwrap().linked == 0 {
                    return Ok(None);
                }
                match self.outer.next()? {
                    Some(b) => self.probe = Some(self.start_probe(b)?),
                    None => return Ok(None),
                }
            }
            let table = self.table.as_ref().unwrap();
            let st = self.probe.as_mut().unwrap();
            let mut oi = Vec::with_capacity(limit.min(BATCH_SIZE));
            let mut ii = Vec::with_capacity(limit.min(BATCH_SIZE));
            Self::probe_pairs(table, st, limit, &mut oi, &mut ii);
            if oi.is_empty() {
                continue;
            }
            let out = match &self.join_filter {
                None => {
                    let mut cols: Vec<Vector> = self
                        .outer_out
                        .iter()
                        .map(|&c| st.batch.columns[c].gather(&oi))
                        .collect();
                    cols.extend(
                        self.inner_out
                            .iter()
                            .map(|&c| table.payload.columns[c].gather(&ii)),
                    );
                    Batch::new(cols, oi.len())
                }
                Some(f) => {
                    let nouter = st.batch.columns.len();
                    let mut cols: Vec<Vector> =
                        st.batch.columns.iter().map(|c| c.gather(&oi)).collect();
                    cols.extend(table.payload.columns.iter().map(|c| c.gather(&ii)));
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
