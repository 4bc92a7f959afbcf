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
//! Each row also gets a 64-bit hash of its key, which a spilling operator
//! uses to choose the row's partition.

use crate::hashkey::{hash_bytes, hash_i64, int_key, is_int_key};
use crate::memory::vector_bytes;
use crate::sortkey::{encode_value, KeyOrder};
use crate::vector::Vector;
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

/// The hash of a NULL single integer key.
const NULL_HASH: u64 = 0x5bd1_e995_5bd1_e995;

enum Index {
    /// No group keys: every row is in group 0.
    Single,
    Int {
        map: Map<i64>,
        null: Option<u32>,
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
            Some(Index::Bytes { map, heap }) => map.capacity() * 25 + heap,
        };
        index + self.keys.iter().map(vector_bytes).sum::<usize>()
    }

    /// Bytes of encoded keys and key values (the part of [`GroupTable::mem`]
    /// that grows with each group's key).
    pub fn key_bytes(&self) -> usize {
        let heap = match &self.index {
            Some(Index::Bytes { heap, .. }) => *heap,
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
        keys: &[Vector],
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
                Index::Bytes {
                    map: Map::default(),
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
                for row in 0..n {
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
                    let (gid, h) = match int_key(&keys[0], row) {
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
            Index::Bytes { map, heap } => {
                let mut buf = Vec::new();
                let mut scratch = String::new();
                for row in 0..n {
                    let full = map.len() == map.capacity();
                    let cost =
                        (per_group + if full { map.capacity().max(3) * 25 } else { 0 }) as isize;
                    let mut may_insert = |_row: usize| {
                        if *budget < cost {
                            return false;
                        }
                        *budget -= cost;
                        true
                    };
                    buf.clear();
                    for (k, &t) in keys.iter().zip(&self.key_types) {
                        encode_value(k, row, KeyOrder::asc(t), &mut buf, &mut scratch);
                    }
                    hashes.push(hash_bytes(&buf));
                    let gid = match map.get(buf.as_slice()) {
                        Some(&g) => Some(g),
                        None if may_insert(row) => {
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
