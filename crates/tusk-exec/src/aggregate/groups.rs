//! The group table: maps each row's group key to a dense group number.
//!
//! A single key held as an integer (`smallint`, `integer`, `bigint`,
//! `boolean`, `date`, times) is looked up as an `i64` in a hash map with a
//! cheap multiplicative hash; NULL is a group of its own. Any other key list
//! is encoded per row as a normalized key ([`crate::sortkey`], ascending), so
//! that grouping uses the same equality as sorting: `1.0` and `1.00` are one
//! group, as are `-0` and `0`, every NaN, `'1 mon'` and `'30 days'`, and
//! `character(n)` values that differ only in trailing blanks; NULLs group
//! together. The table keeps each group's key values for output.
//!
//! While a table of encoded keys has at most [`LINEAR_GROUPS`] groups (as
//! GROUP BY over a few flags or status columns has), a row's key is found
//! by comparing it with each group's in turn, without hashing: the keys
//! sit in one small array, and a row starts at the previous row's group.
//! The table that grows past that moves its keys into the hash map, once.
//!
//! Input often comes clustered by its key (a table loaded in key order, a
//! join's output of one build row's matches, a few status values in long
//! runs), so a row whose key is the previous row's, by its stored bytes,
//! takes that row's group and hash without a lookup or an encoding
//! ([`same_as_previous`]). Equal bytes mean equal keys under grouping's
//! equality; keys that are equal only after normalisation (`1.0` and
//! `1.00`) go the usual way and still meet in one group.
//!
//! A row that gets no group (the budget ran out) also gets a 64-bit hash
//! of its key, which a spilling operator uses to choose the row's
//! partition; rows that found or made a group may get 0 instead.

use crate::hashkey::{hash_bytes, hash_i64, int_key, is_int_key};
use crate::memory::vector_bytes;
use crate::sortkey::{encode_value, KeyOrder};
use crate::vector::{Data, Vector};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use tusk_storage::DataType;

/// A hasher for keys that are already well-mixed hashes.
#[derive(Default)]
pub struct PassHasher(u64);

impl Hasher for PassHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(bytes);
    }
    fn write_i64(&mut self, v: i64) {
        self.0 = hash_i64(v);
    }
}

type Map<K> = HashMap<K, u32, BuildHasherDefault<PassHasher>>;

/// Most groups of encoded keys found by comparison rather than hashing.
pub const LINEAR_GROUPS: usize = 8;

/// The hash of a NULL single integer key.
const NULL_HASH: u64 = 0x5bd1_e995_5bd1_e995;

enum Index {
    /// No group keys: every row is in group 0.
    Single,
    Int {
        map: Map<i64>,
        null: Option<u32>,
    },
    /// Encoded keys, group `g` at position `g`, while they are few; keys of
    /// up to 15 bytes are compared as one integer ([`packed`]).
    Linear {
        keys: Vec<Box<[u8]>>,
        packed: Vec<Option<u128>>,
        heap: usize,
    },
    Bytes {
        map: Map<Box<[u8]>>,
        heap: usize,
    },
}

pub struct GroupTable {
    key_types: Vec<DataType>,
    index: Option<Index>,
    /// Key values of each group, in group order.
    pub keys: Vec<Vector>,
    groups: usize,
}

impl GroupTable {
    pub fn new(key_types: &[DataType]) -> GroupTable {
        let (index, groups) = if key_types.is_empty() {
            (Some(Index::Single), 1)
        } else {
            (None, 0)
        };
        GroupTable {
            key_types: key_types.to_vec(),
            index,
            keys: key_types.iter().map(|&t| Vector::empty(t)).collect(),
            groups,
        }
    }

    pub fn len(&self) -> usize {
        self.groups
    }

    pub fn is_empty(&self) -> bool {
        self.groups == 0
    }

    /// Bytes held: the map (by capacity), encoded keys and key values.
    pub fn mem(&self) -> usize {
        let index = match &self.index {
            None | Some(Index::Single) => 0,
            Some(Index::Int { map, .. }) => map.capacity() * 17,
            Some(Index::Linear { keys, heap, .. }) => keys.capacity() * 32 + heap,
            Some(Index::Bytes { map, heap }) => map.capacity() * 25 + heap,
        };
        index + self.keys.iter().map(vector_bytes).sum::<usize>()
    }

    /// Bytes of encoded keys and key values (the part of [`GroupTable::mem`]
    /// that grows with each group's key).
    pub fn key_bytes(&self) -> usize {
        let heap = match &self.index {
            Some(Index::Linear { heap, .. } | Index::Bytes { heap, .. }) => *heap,
            _ => 0,
        };
        heap + self.keys.iter().map(vector_bytes).sum::<usize>()
    }

    /// Finds each row's group. A row whose key is new gets a new group while
    /// `budget` covers its cost — `per_group` bytes, plus the map's growth
    /// when it is full — which is then taken from the budget; otherwise
    /// `None`. `hashes` receives each row's key hash.
    pub fn lookup(
        &mut self,
        keys: &[&Vector],
        n: usize,
        budget: &mut isize,
        per_group: usize,
        out: &mut Vec<Option<u32>>,
        hashes: &mut Vec<u64>,
    ) {
        out.clear();
        hashes.clear();
        let index = self.index.get_or_insert_with(|| {
            if is_int_key(keys) {
                Index::Int {
                    map: Map::default(),
                    null: None,
                }
            } else {
                Index::Linear {
                    keys: Vec::with_capacity(LINEAR_GROUPS),
                    packed: Vec::with_capacity(LINEAR_GROUPS),
                    heap: 0,
                }
            }
        });
        let groups = &mut self.groups;
        let key_out = &mut self.keys;
        let mut add_group = |row: usize| -> u32 {
            for (o, k) in key_out.iter_mut().zip(keys) {
                o.push_from(k, row);
            }
            *groups += 1;
            (*groups - 1) as u32
        };
        match index {
            Index::Single => {
                out.resize(n, Some(0));
                hashes.resize(n, 0);
            }
            Index::Int { map, null } => {
                let mut prev: Option<(i64, Option<u32>)> = None;
                for row in 0..n {
                    if let (Some(k), Some((p, g))) = (int_key(keys[0], row), prev) {
                        if k == p && g.is_some() {
                            out.push(g);
                            hashes.push(hash_i64(k));
                            continue;
                        }
                    }
                    let full = map.len() == map.capacity();
                    let cost =
                        (per_group + if full { map.capacity().max(3) * 17 } else { 0 }) as isize;
                    let mut may_insert = |_row: usize| {
                        if *budget < cost {
                            return false;
                        }
                        *budget -= cost;
                        true
                    };
                    let (gid, h) = match int_key(keys[0], row) {
                        Some(k) => {
                            let h = hash_i64(k);
                            let gid = match map.get(&k) {
                                Some(&g) => Some(g),
                                None if may_insert(row) => {
                                    let g = add_group(row);
                                    map.insert(k, g);
                                    Some(g)
                                }
                                None => None,
                            };
                            prev = Some((k, gid));
                            (gid, h)
                        }
                        None => {
                            let gid = match *null {
                                Some(g) => Some(g),
                                None if may_insert(row) => {
                                    let g = add_group(row);
                                    *null = Some(g);
                                    Some(g)
                                }
                                None => None,
                            };
                            (gid, NULL_HASH)
                        }
                    };
                    out.push(gid);
                    hashes.push(h);
                }
            }
            Index::Linear { .. } | Index::Bytes { .. } => {
                let mut buf = Vec::new();
                let mut scratch = String::new();
                let mut last = 0usize;
                for row in 0..n {
                    if row > 0 && out[row - 1].is_some() && same_as_previous(keys, row) {
                        out.push(out[row - 1]);
                        hashes.push(hashes[row - 1]);
                        continue;
                    }
                    buf.clear();
                    for (k, &t) in keys.iter().zip(&self.key_types) {
                        encode_value(k, row, KeyOrder::asc(t), &mut buf, &mut scratch);
                    }
                    if let Index::Linear {
                        keys: known,
                        packed: known_packed,
                        heap,
                    } = index
                    {
                        let p = packed(&buf);
                        let same = |g: usize| match p {
                            Some(p) => known_packed[g] == Some(p),
                            None => *known[g] == *buf,
                        };
                        // The previous row's group first, then the rest.
                        let found = (last < known.len() && same(last))
                            .then_some(last)
                            .or_else(|| (0..known.len()).find(|&g| same(g)));
                        if let Some(g) = found {
                            last = g;
                            out.push(Some(g as u32));
                            hashes.push(0);
                            continue;
                        }
                        if known.len() < LINEAR_GROUPS {
                            let cost = (per_group + 16) as isize;
                            if *budget < cost {
                                out.push(None);
                                hashes.push(hash_bytes(&buf));
                                continue;
                            }
                            *budget -= cost;
                            let g = add_group(row);
                            *heap += buf.len() + 16;
                            known.push(buf.clone().into_boxed_slice());
                            known_packed.push(p);
                            last = g as usize;
                            out.push(Some(g));
                            hashes.push(0);
                            continue;
                        }
                        // A group past the linear limit: hash the keys.
                        let heap = *heap;
                        let map: Map<Box<[u8]>> = std::mem::take(known)
                            .into_iter()
                            .enumerate()
                            .map(|(g, k)| (k, g as u32))
                            .collect();
                        *index = Index::Bytes { map, heap };
                    }
                    let Index::Bytes { map, heap } = index else {
                        unreachable!("the linear index moved to the map above")
                    };
                    let full = map.len() == map.capacity();
                    let cost =
                        (per_group + if full { map.capacity().max(3) * 25 } else { 0 }) as isize;
                    let h = hash_bytes(&buf);
                    hashes.push(h);
                    let gid = match map.get(buf.as_slice()) {
                        Some(&g) => Some(g),
                        None if *budget >= cost => {
                            *budget -= cost;
                            let g = add_group(row);
                            *heap += buf.len() + 16;
                            map.insert(buf.clone().into_boxed_slice(), g);
                            Some(g)
                        }
                        None => None,
                    };
                    out.push(gid);
                }
            }
        }
    }
}

/// Whether every key of row `row` has the stored bytes of row `row - 1`
/// (both NULL counts as equal: NULLs group together). Only
/// representations whose equal bytes are equal values are compared;
/// floats, numerics, intervals and arrays answer false.
#[inline]
fn same_as_previous(keys: &[&Vector], row: usize) -> bool {
    keys.iter().all(|k| {
        let (a, b) = (row - 1, row);
        if let Some(m) = &k.nulls {
            if m[a] || m[b] {
                return m[a] && m[b];
            }
        }
        match &k.data {
            Data::Text(s) | Data::Bytea(s) => s.get(a) == s.get(b),
            Data::Int4(d) => d[a] == d[b],
            Data::Int8(d) => d[a] == d[b],
            Data::Int2(d) => d[a] == d[b],
            Data::Bool(d) => d[a] == d[b],
            Data::Uuid(d) => d[a] == d[b],
            Data::Float4(_)
            | Data::Float8(_)
            | Data::Numeric(_)
            | Data::Interval(_)
            | Data::Array(_) => false,
        }
    })
}

/// An encoded key of at most 15 bytes as one integer: the bytes and, in
/// the top byte, the length, so keys of different lengths differ.
#[inline]
fn packed(key: &[u8]) -> Option<u128> {
    if key.len() > 15 {
        return None;
    }
    let mut b = [0u8; 16];
    b[..key.len()].copy_from_slice(key);
    b[15] = key.len() as u8;
    Some(u128::from_le_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn text_keys(vals: &[Option<&str>]) -> Vector {
        let mut v = Vector::with_capacity(DataType::Bpchar, vals.len());
        for x in vals {
            v.push_value(&x.map_or(Value::Null, |s| Value::Text(s.into())));
        }
        v
    }

    fn lookup(t: &mut GroupTable, keys: &[&Vector], budget: isize) -> (Vec<Option<u32>>, Vec<u64>) {
        let (mut out, mut hashes) = (Vec::new(), Vec::new());
        let mut budget = budget;
        t.lookup(keys, keys[0].len(), &mut budget, 10, &mut out, &mut hashes);
        (out, hashes)
    }

    #[test]
    fn few_groups_by_comparison_then_hashed_with_the_same_numbers() {
        let mut t = GroupTable::new(&[DataType::Bpchar, DataType::Bpchar]);
        let a = text_keys(&[Some("A"), Some("N"), Some("A "), None, Some("N"), None]);
        let b = text_keys(&[Some("F"), Some("O"), Some("F"), None, Some("O"), Some("x")]);
        let (g, _) = lookup(&mut t, &[&a, &b], isize::MAX);
        // Trailing blanks of char(n) do not count; NULL keys group together.
        assert_eq!(g, [Some(0), Some(1), Some(0), Some(2), Some(1), Some(3)]);
        assert!(matches!(t.index, Some(Index::Linear { .. })));
        // Twelve more keys: past LINEAR_GROUPS the table hashes, and the
        // groups it had keep their numbers.
        let names: Vec<String> = (0..12).map(|i| format!("k{i}")).collect();
        let mut a_vals: Vec<Option<&str>> = names.iter().map(|s| Some(s.as_str())).collect();
        a_vals.extend([Some("A"), Some("N"), None]);
        let mut b_vals = vec![Some("z"); 12];
        b_vals.extend([Some("F"), Some("O"), Some("x")]);
        let (g, _) = lookup(
            &mut t,
            &[&text_keys(&a_vals), &text_keys(&b_vals)],
            isize::MAX,
        );
        let want: Vec<Option<u32>> = (4..16)
            .map(Some)
            .chain([Some(0), Some(1), Some(3)])
            .collect();
        assert_eq!(g, want);
        assert!(matches!(t.index, Some(Index::Bytes { .. })));
        assert_eq!(t.len(), 16);
        assert_eq!(t.keys[0].len(), 16);
    }

    #[test]
    fn a_row_without_a_group_gets_its_hash() {
        let mut t = GroupTable::new(&[DataType::Bpchar]);
        let (g, h) = lookup(
            &mut t,
            &[&text_keys(&[Some("a"), Some("b"), Some("a")])],
            30,
        );
        // The budget pays for one group (10 + 16 bytes), not for two.
        assert_eq!(g, [Some(0), None, Some(0)]);
        let (g2, h2) = lookup(&mut t, &[&text_keys(&[Some("b")])], 0);
        assert_eq!(g2, [None]);
        assert_ne!(h[1], 0);
        assert_eq!(h[1], h2[0], "one key, one hash");
    }

    /// Runs of one key (clustered input) take the previous row's group
    /// without a lookup: the groups are the ones row-by-row lookups give,
    /// NULL runs and rows that found no group included.
    #[test]
    fn runs_of_a_key_get_the_groups_single_rows_get() {
        let ints: Vec<Option<i64>> = [1, 1, 1, 2, 2, -1, -1, 1, 3, 3, 4, 4]
            .iter()
            .map(|&x| (x >= 0).then_some(x))
            .collect();
        let mut v = Vector::with_capacity(DataType::Int8, ints.len());
        for x in &ints {
            v.push_value(&x.map_or(Value::Null, Value::Int8));
        }
        let texts = text_keys(&[
            Some("a"),
            Some("a"),
            Some("a "),
            None,
            None,
            Some("b"),
            Some("b"),
            Some("a"),
            Some("c"),
            Some("c"),
            Some("d"),
            Some("d"),
        ]);
        for keys in [vec![&v], vec![&texts], vec![&v, &texts]] {
            let types: Vec<DataType> = keys
                .iter()
                .map(|k| match k.data {
                    Data::Int8(_) => DataType::Int8,
                    _ => DataType::Bpchar,
                })
                .collect();
            // A budget for four groups (10 bytes each, plus map growth
            // of up to 4 × 25 bytes): later keys find no group.
            for budget in [isize::MAX, 140] {
                let mut whole = GroupTable::new(&types);
                let (g, h) = lookup(&mut whole, &keys, budget);
                let mut single = GroupTable::new(&types);
                let mut left = budget;
                let (mut g1, mut h1) = (Vec::new(), Vec::new());
                for row in 0..keys[0].len() {
                    let one: Vec<Vector> = keys.iter().map(|k| k.gather(&[row as u32])).collect();
                    let one: Vec<&Vector> = one.iter().collect();
                    let (mut o, mut hs) = (Vec::new(), Vec::new());
                    single.lookup(&one, 1, &mut left, 10, &mut o, &mut hs);
                    g1.extend(o);
                    h1.extend(hs);
                }
                assert_eq!(g, g1, "{types:?} budget {budget}");
                for (row, gid) in g.iter().enumerate() {
                    if gid.is_none() {
                        assert_eq!(h[row], h1[row], "row {row} without a group keeps its hash");
                    }
                }
                assert_eq!(whole.len(), single.len());
            }
        }
    }
}
