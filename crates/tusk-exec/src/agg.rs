//! Aggregation: plain (one output row) and hashed by GROUP BY keys.
//!
//! Input batches are read to the end. For each batch the group keys are
//! evaluated and every row is mapped to a dense group number — through a
//! hash map keyed by `i64` for one integer key, by an encoded byte key
//! otherwise (NULL is a group of its own, as in PostgreSQL). Accumulators are
//! vectors indexed by group number, updated in one loop per aggregate.

use crate::error::{int8_out_of_range, ExecError, Result};
use crate::expr::{eval_all, Expr};
use crate::hashkey::is_int_key;
use crate::numeric::Numeric;
use crate::operator::{emit_chunk, ExecContext, Operator};
use crate::plan::{AggCall, AggFunc, NodeKind, Plan};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use tusk_storage::DataType;

/// A cheap hasher for keys that are already integers or encoded bytes.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = crate::hashkey::hash_bytes(bytes) ^ self.0.rotate_left(5);
    }
    fn write_i64(&mut self, v: i64) {
        self.0 = crate::hashkey::hash_i64(v) ^ self.0.rotate_left(5);
    }
}

type FastMap<K> = HashMap<K, u32, BuildHasherDefault<KeyHasher>>;

enum Acc {
    Count(Vec<i64>),
    SumInt {
        sum: Vec<i128>,
        seen: Vec<bool>,
    },
    SumNum {
        sum: Vec<Numeric>,
        seen: Vec<bool>,
    },
    AvgInt {
        sum: Vec<i128>,
        n: Vec<i64>,
    },
    AvgNum {
        sum: Vec<Numeric>,
        n: Vec<i64>,
    },
    MinMaxInt {
        val: Vec<i64>,
        seen: Vec<bool>,
        min: bool,
    },
    MinMax {
        val: Vec<Value>,
        min: bool,
    },
}

impl Acc {
    fn new(call: &AggCall) -> Acc {
        let arg = call.arg().map(|a| a.data_type());
        let int = matches!(arg, Some(DataType::Int4 | DataType::Int8));
        match call.func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(vec![]),
            AggFunc::Sum | AggFunc::SumInt8 if int => Acc::SumInt {
                sum: vec![],
                seen: vec![],
            },
            AggFunc::Sum | AggFunc::SumInt8 => Acc::SumNum {
                sum: vec![],
                seen: vec![],
            },
            AggFunc::Avg if int => Acc::AvgInt {
                sum: vec![],
                n: vec![],
            },
            AggFunc::Avg => Acc::AvgNum {
                sum: vec![],
                n: vec![],
            },
            AggFunc::Min | AggFunc::Max if int => Acc::MinMaxInt {
                val: vec![],
                seen: vec![],
                min: call.func == AggFunc::Min,
            },
            AggFunc::Min | AggFunc::Max => Acc::MinMax {
                val: vec![],
                min: call.func == AggFunc::Min,
            },
            _ => unreachable!("Aggregate::new refuses other aggregates"),
        }
    }

    fn grow(&mut self, groups: usize) {
        match self {
            Acc::Count(c) => c.resize(groups, 0),
            Acc::SumInt { sum, seen } => {
                sum.resize(groups, 0);
                seen.resize(groups, false)
            }
            Acc::SumNum { sum, seen } => {
                sum.resize(groups, Numeric::from_i64(0));
                seen.resize(groups, false)
            }
            Acc::AvgInt { sum, n } => {
                sum.resize(groups, 0);
                n.resize(groups, 0)
            }
            Acc::AvgNum { sum, n } => {
                sum.resize(groups, Numeric::from_i64(0));
                n.resize(groups, 0)
            }
            Acc::MinMaxInt { val, seen, .. } => {
                val.resize(groups, 0);
                seen.resize(groups, false)
            }
            Acc::MinMax { val, .. } => val.resize(groups, Value::Null),
        }
    }

    /// Adds `n` rows; `arg` is the evaluated argument (None for count(*)),
    /// `groups` the group of each row (None: all rows in group 0).
    fn update(&mut self, n: usize, arg: Option<&Vector>, groups: Option<&[u32]>) -> Result<()> {
        let g = |i: usize| groups.map_or(0, |g| g[i] as usize);
        let live = |i: usize| arg.is_none_or(|a| !a.is_null(i));
        match self {
            Acc::Count(c) => {
                if groups.is_none() && arg.is_none_or(|a| a.nulls.is_none()) {
                    c[0] += n as i64;
                } else {
                    for i in 0..n {
                        if live(i) {
                            c[g(i)] += 1;
                        }
                    }
                }
            }
            Acc::SumInt { sum, seen } => {
                let a = arg.unwrap();
                for i in 0..n {
                    if live(i) {
                        sum[g(i)] += int_at(a, i) as i128;
                        seen[g(i)] = true;
                    }
                }
            }
            Acc::AvgInt { sum, n: cnt } => {
                let a = arg.unwrap();
                for i in 0..n {
                    if live(i) {
                        sum[g(i)] += int_at(a, i) as i128;
                        cnt[g(i)] += 1;
                    }
                }
            }
            Acc::SumNum { sum, seen } => {
                let a = arg.unwrap();
                for i in 0..n {
                    if live(i) {
                        sum[g(i)] = sum[g(i)]
                            .checked_add(&num_at(a, i))
                            .map_err(ExecError::from)?;
                        seen[g(i)] = true;
                    }
                }
            }
            Acc::AvgNum { sum, n: cnt } => {
                let a = arg.unwrap();
                for i in 0..n {
                    if live(i) {
                        sum[g(i)] = sum[g(i)]
                            .checked_add(&num_at(a, i))
                            .map_err(ExecError::from)?;
                        cnt[g(i)] += 1;
                    }
                }
            }
            Acc::MinMaxInt { val, seen, min } => {
                let a = arg.unwrap();
                for i in 0..n {
                    if live(i) {
                        let (x, k) = (int_at(a, i), g(i));
                        if !seen[k] || (*min && x < val[k]) || (!*min && x > val[k]) {
                            val[k] = x;
                            seen[k] = true;
                        }
                    }
                }
            }
            Acc::MinMax { val, min } => {
                let a = arg.unwrap();
                for i in 0..n {
                    if live(i) {
                        let v = a.value(i);
                        let k = g(i);
                        let better = match (&val[k], &v) {
                            (Value::Null, _) => true,
                            (cur, new) => {
                                let o = crate::sort::compare_values(new, cur);
                                if *min {
                                    o.is_lt()
                                } else {
                                    o.is_gt()
                                }
                            }
                        };
                        if better {
                            val[k] = v;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(&self, ty: DataType, groups: usize) -> Result<Vector> {
        let mut out = Vector::with_capacity(ty, groups);
        for k in 0..groups {
            let v = match self {
                Acc::Count(c) => Value::Int8(c[k]),
                Acc::SumInt { sum, seen } => {
                    if !seen[k] {
                        Value::Null
                    } else if ty == DataType::Int8 {
                        Value::Int8(i64::try_from(sum[k]).map_err(|_| int8_out_of_range())?)
                    } else {
                        Value::Numeric(Numeric::from_i128(sum[k]))
                    }
                }
                Acc::SumNum { sum, seen } => {
                    if seen[k] {
                        Value::Numeric(sum[k].clone())
                    } else {
                        Value::Null
                    }
                }
                Acc::AvgInt { sum, n } => {
                    if n[k] == 0 {
                        Value::Null
                    } else {
                        Value::Numeric(
                            Numeric::from_i128(sum[k])
                                .checked_div(&Numeric::from_i64(n[k]))
                                .map_err(ExecError::from)?,
                        )
                    }
                }
                Acc::AvgNum { sum, n } => {
                    if n[k] == 0 {
                        Value::Null
                    } else {
                        Value::Numeric(
                            sum[k]
                                .checked_div(&Numeric::from_i64(n[k]))
                                .map_err(ExecError::from)?,
                        )
                    }
                }
                Acc::MinMaxInt { val, seen, .. } => match (seen[k], ty) {
                    (false, _) => Value::Null,
                    (true, DataType::Int4) => Value::Int4(val[k] as i32),
                    (true, _) => Value::Int8(val[k]),
                },
                Acc::MinMax { val, .. } => val[k].clone(),
            };
            out.push_value(&v);
        }
        Ok(out)
    }
}

#[inline]
fn int_at(v: &Vector, i: usize) -> i64 {
    match &v.data {
        Data::Int4(d) => d[i] as i64,
        Data::Int8(d) => d[i],
        _ => 0,
    }
}

#[inline]
fn num_at(v: &Vector, i: usize) -> Numeric {
    match &v.data {
        Data::Numeric(d) => d[i].clone(),
        Data::Int4(d) => Numeric::from_i64(d[i] as i64),
        Data::Int8(d) => Numeric::from_i64(d[i]),
        _ => Numeric::from_i64(0),
    }
}

/// Maps group keys to dense group numbers.
enum GroupMap {
    Int {
        map: FastMap<i64>,
        null_group: Option<u32>,
    },
    Bytes(HashMap<Box<[u8]>, u32, BuildHasherDefault<KeyHasher>>),
}

pub struct Aggregate {
    input: Box<dyn Operator>,
    group: Vec<Expr>,
    aggs: Vec<AggCall>,
    out_types: Vec<DataType>,
    result: Option<Batch>,
    pos: usize,
    ctx: ExecContext,
    id: usize,
}

impl Aggregate {
    /// The aggregate of plan node `plan` over `input` (its child).
    pub fn new(plan: &Plan, ctx: &ExecContext, input: Box<dyn Operator>) -> Result<Aggregate> {
        let NodeKind::Aggregate { group, aggs, .. } = &plan.kind else {
            unreachable!()
        };
        for a in aggs {
            let basic = matches!(
                a.func,
                AggFunc::CountStar
                    | AggFunc::Count
                    | AggFunc::Sum
                    | AggFunc::SumInt8
                    | AggFunc::Avg
                    | AggFunc::Min
                    | AggFunc::Max
            );
            if !basic || a.distinct || a.filter.is_some() || !a.order_by.is_empty() {
                return Err(ExecError::coded(
                    crate::error::sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "aggregate {}() in this form is not implemented yet",
                        a.func.name()
                    ),
                ));
            }
        }
        Ok(Aggregate {
            input,
            group: group.clone(),
            aggs: aggs.clone(),
            out_types: plan.output.clone(),
            result: None,
            pos: 0,
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn run(&mut self) -> Result<Batch> {
        let mut accs: Vec<Acc> = self.aggs.iter().map(Acc::new).collect();
        let mut ngroups = if self.group.is_empty() { 1 } else { 0 };
        for a in &mut accs {
            a.grow(ngroups);
        }
        let mut keys_out: Vec<Vector> = self
            .group
            .iter()
            .map(|e| Vector::empty(e.data_type()))
            .collect();
        let mut map: Option<GroupMap> = None;
        let mut gids: Vec<u32> = Vec::new();
        let mut buf = Vec::new();
        while let Some(b) = self.input.next()? {
            let groups = if self.group.is_empty() {
                None
            } else {
                let kv = eval_all(&self.group, &b)?;
                let m = map.get_or_insert_with(|| {
                    if is_int_key(&kv) {
                        GroupMap::Int {
                            map: FastMap::default(),
                            null_group: None,
                        }
                    } else {
                        GroupMap::Bytes(HashMap::default())
                    }
                });
                gids.clear();
                for i in 0..b.len {
                    let before = ngroups;
                    let gid = match m {
                        GroupMap::Int { map, null_group } => {
                            match crate::hashkey::int_key(&kv[0], i) {
                                Some(k) => *map.entry(k).or_insert_with(|| {
                                    ngroups += 1;
                                    before as u32
                                }),
                                None => *null_group.get_or_insert_with(|| {
                                    ngroups += 1;
                                    before as u32
                                }),
                            }
                        }
                        GroupMap::Bytes(map) => {
                            buf.clear();
                            encode_group_row(&kv, i, &mut buf);
                            match map.get(buf.as_slice()) {
                                Some(&g) => g,
                                None => {
                                    map.insert(buf.clone().into_boxed_slice(), before as u32);
                                    ngroups += 1;
                                    before as u32
                                }
                            }
                        }
                    };
                    if ngroups > before {
                        for (out, k) in keys_out.iter_mut().zip(&kv) {
                            out.push_from(k, i);
                        }
                    }
                    gids.push(gid);
                }
                for a in &mut accs {
                    a.grow(ngroups);
                }
                Some(gids.as_slice())
            };
            for (acc, call) in accs.iter_mut().zip(&self.aggs) {
                let arg = call.arg().map(|e| e.eval(&b)).transpose()?;
                acc.update(b.len, arg.as_ref(), groups)?;
            }
        }
        let mut cols = keys_out;
        for (acc, call) in accs.iter().zip(&self.aggs) {
            cols.push(acc.finish(call.result, ngroups)?);
        }
        debug_assert_eq!(cols.len(), self.out_types.len());
        if !self.group.is_empty() {
            self.ctx
                .note(self.id, format!("Batches: 1  Groups: {ngroups}"));
        }
        Ok(Batch::new(cols, ngroups))
    }
}

/// Encodes a group key row, NULLs included (a tag byte per key).
fn encode_group_row(keys: &[Vector], i: usize, out: &mut Vec<u8>) {
    for k in keys {
        if k.is_null(i) {
            out.push(0);
        } else {
            out.push(1);
            crate::hashkey::encode_row(std::slice::from_ref(k), i, out);
        }
    }
}

impl Operator for Aggregate {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.result.is_none() {
            self.result = Some(self.run()?);
        }
        Ok(emit_chunk(self.result.as_ref().unwrap(), &mut self.pos))
    }
}
