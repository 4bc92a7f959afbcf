//! Probing: the software pipeline that looks a probe batch's keys up in a
//! table, and the sinks that receive the matching pairs.
//!
//! A probe batch may produce any number of matches, so the probe keeps a
//! cursor (row and chain position) and stops each output batch at a fixed
//! size; a join with no output columns only counts matches.

use super::slots::MORE;
use super::table::{prefetch_line, Chains, EMPTY};
use crate::hashkey::{encode_row, hash_bytes, hash_i64, int_key, is_int_key};
use crate::vector::{Batch, Data, Vector};

/// Keys of a probe batch, in the table's representation.
pub(super) enum ProbeKeys {
    Int(Vec<Option<i64>>),
    Bytes(Vec<Option<(u64, std::ops::Range<usize>)>>, Vec<u8>),
}

impl ProbeKeys {
    pub(super) fn of(kv: &[Vector], n: usize) -> ProbeKeys {
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

    pub(super) fn hash(&self, i: usize) -> Option<u64> {
        match self {
            ProbeKeys::Int(k) => k[i].map(hash_i64),
            ProbeKeys::Bytes(k, _) => k[i].as_ref().map(|(h, _)| *h),
        }
    }
}

/// Rows between the prefetch of a probe row's home slot and the search of
/// its slots, and again between that search (which prefetches the chain's
/// first tuple when the probe will need it) and the walk of its chain.
pub(super) const PROBE_DISTANCE: usize = 64;
/// `HeadPipeline::homes` entry of a row that cannot match (a NULL key).
pub(super) const NO_HOME: u32 = u32::MAX;

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
pub(super) struct ProbeState {
    pub(super) batch: Batch,
    pub(super) keys: ProbeKeys,
    pub(super) heads: HeadPipeline,
    pub(super) row: usize,
    /// Where to resume `row`'s chain when `started_row`.
    pub(super) chain: u32,
    pub(super) started_row: bool,
}

/// The chain heads of a probe batch, found [`PROBE_DISTANCE`] rows ahead
/// of the walk (see [`ProbeState`]).
#[derive(Default)]
pub(super) struct HeadPipeline {
    /// Home slot of each row ([`NO_HOME`] for a row that cannot match).
    pub(super) homes: Vec<u32>,
    /// Tag of each row's key.
    pub(super) tags: Vec<u32>,
    /// Chain head (with its `MORE` bit) of each row, for rows below `loaded`.
    pub(super) heads: Vec<u32>,
    pub(super) loaded: usize,
    pub(super) prefetch: bool,
}

impl HeadPipeline {
    #[inline(always)]
    pub(super) fn find<T: Chains>(&self, table: &T, row: usize) -> u32 {
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
    pub(super) fn head<T: Chains>(&mut self, table: &T, row: usize) -> u32 {
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
    pub(super) fn new<T: Chains>(
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

    pub(super) fn done(&self) -> bool {
        self.row >= self.batch.len
    }

    /// Hands matching (probe row, build entry − 1) pairs to `sink` until it
    /// is full or the batch is done.
    pub(super) fn pairs<T: Chains, S: PairSink>(&mut self, table: &T, sink: &mut S) {
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
                            if S::FIRST_ONLY {
                                break;
                            }
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
                            if S::FIRST_ONLY {
                                break;
                            }
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
pub(super) trait PairSink {
    /// Only the first match of each probe row is wanted (semi, anti and
    /// mark joins without a join filter): the walk of a chain stops there.
    const FIRST_ONLY: bool = false;
    fn full(&self) -> bool;
    fn push(&mut self, row: u32, entry: u32);
}

/// The pairs themselves, up to `limit`, for gathering output columns.
pub(super) struct Pairs<'a> {
    pub(super) outer: &'a mut Vec<u32>,
    pub(super) inner: &'a mut Vec<u32>,
    pub(super) limit: usize,
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

/// The first pair of each probe row only (see [`PairSink::FIRST_ONLY`]).
pub(super) struct FirstPairs<'a>(pub(super) Pairs<'a>);

impl PairSink for FirstPairs<'_> {
    const FIRST_ONLY: bool = true;

    #[inline(always)]
    fn full(&self) -> bool {
        self.0.full()
    }

    #[inline(always)]
    fn push(&mut self, row: u32, entry: u32) {
        self.0.push(row, entry)
    }
}

/// Only how many pairs there are (up to `limit`): a join whose output has
/// no columns (`count(*)` over a join) needs nothing else.
pub(super) struct PairCount {
    pub(super) n: usize,
    pub(super) limit: usize,
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

#[cfg(test)]
mod tests {
    use super::super::table::{JoinTable, TableBuilder};
    use super::*;
    use crate::value::Value;
    use tusk_storage::DataType;

    fn ints(v: &[Option<i64>]) -> Vector {
        let mut c = Vector::empty(DataType::Int8);
        for x in v {
            c.push_value(&x.map_or(Value::Null, Value::Int8));
        }
        c
    }

    fn table(keys: &[Option<i64>]) -> JoinTable {
        let kv = ints(keys);
        let mut b = TableBuilder::new(&[DataType::Int8]);
        b.add(&Batch::new(vec![kv.clone()], keys.len()), &[kv]);
        b.finish(true, false)
    }

    /// Drains a probe into pairs, `limit` at a time (so that the probe
    /// resumes inside chains), with or without the first-match-only walk.
    fn drain(
        t: &JoinTable,
        probe: &[Option<i64>],
        limit: usize,
        first: bool,
        prefetch: bool,
    ) -> Vec<(u32, u32)> {
        let kv = ints(probe);
        let batch = Batch::new(vec![kv.clone()], probe.len());
        let mut st = ProbeState::new(t, batch, ProbeKeys::of(&[kv], probe.len()), prefetch, None);
        let mut out = Vec::new();
        while !st.done() {
            let (mut o, mut i) = (Vec::new(), Vec::new());
            let sink = Pairs {
                outer: &mut o,
                inner: &mut i,
                limit,
            };
            if first {
                st.pairs(t, &mut FirstPairs(sink));
            } else {
                st.pairs(t, &mut { sink });
            }
            out.extend(o.into_iter().zip(i));
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn pairs_resume_and_first_match_only() {
        // Build rows: key 1 three times, key 2 once, a NULL, key 5 once.
        let t = table(&[Some(1), Some(2), Some(1), None, Some(1), Some(5)]);
        let probe = [Some(1), None, Some(2), Some(9), Some(1), Some(-(1 << 40))];
        let all = vec![(0, 0), (0, 2), (0, 4), (2, 1), (4, 0), (4, 2), (4, 4)];
        for prefetch in [false, true] {
            for limit in [1, 2, 3, 100] {
                assert_eq!(
                    drain(&t, &probe, limit, false, prefetch),
                    all,
                    "limit {limit}"
                );
                let first = drain(&t, &probe, limit, true, prefetch);
                let rows: Vec<u32> = first.iter().map(|p| p.0).collect();
                assert_eq!(rows, vec![0, 2, 4], "one pair per matching row");
            }
        }
    }

    #[test]
    fn count_only_sink_counts_pairs() {
        let t = table(&(0..5000).map(|i| Some(i % 10)).collect::<Vec<_>>());
        let probe: Vec<Option<i64>> = (0..100).map(|i| Some(i % 20)).collect();
        let kv = ints(&probe);
        let mut st = ProbeState::new(
            &t,
            Batch::new(vec![kv.clone()], 100),
            ProbeKeys::of(&[kv], 100),
            true,
            None,
        );
        let mut total = 0;
        while !st.done() {
            let mut c = PairCount { n: 0, limit: 1000 };
            st.pairs(&t, &mut c);
            total += c.n;
        }
        // 50 probe rows have a key below 10, each matching 500 build rows.
        assert_eq!(total, 50 * 500);
    }
}
