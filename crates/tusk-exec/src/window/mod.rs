//! WindowAgg: window functions over sorted input.
//!
//! The input arrives sorted by the PARTITION BY keys, then the ORDER BY
//! keys (the planner puts a Sort below). The node reads one partition at a
//! time into a [`TupleStore`] — which spills to a temp file past `work_mem`,
//! so a partition may be any size — and then returns the partition's rows,
//! each with one more column per window call.
//!
//! Each stored row holds the input columns and what the calls will need
//! from any row: the row's ORDER BY key, normalized ([`crate::sortkey`];
//! equal keys mean peers), the first ORDER BY value when some frame is RANGE
//! with an offset, and each call's evaluated arguments and FILTER. Rows are
//! then evaluated in order with state that only moves forward
//! ([`frame`]): the current peer group, and for each call its frame's head
//! and tail.
//!
//! | function | value for row `r` of `n` |
//! |---|---|
//! | row_number | `r + 1` |
//! | rank | 1 + rows before `r`'s peer group |
//! | dense_rank | 1 + peer groups before `r`'s |
//! | percent_rank | `(rank − 1) / (n − 1)`, 0 when `n = 1` |
//! | cume_dist | rows up to `r`'s last peer, over `n` |
//! | ntile(k) | PostgreSQL's bucket walk (`window_ntile`): `k` read at the first row where it is not NULL |
//! | lag/lead(v, o, d) | `v` at `r ∓ o`, else `d` (NULL when `o` is NULL) |
//! | first_value, last_value, nth_value | the frame's first, last, k-th row after EXCLUDE |
//! | any aggregate | over the frame's rows after EXCLUDE and FILTER |
//!
//! An aggregate whose frame starts at UNBOUNDED PRECEDING with no EXCLUDE
//! runs incrementally: each row adds the rows between the previous tail
//! and its own. Any other frame is aggregated afresh for each row whose
//! frame differs from the previous row's, as PostgreSQL does for
//! aggregates without an inverse transition.

pub mod frame;

use crate::aggregate::accum::Acc;
use crate::error::{sqlstate, ExecError, Result};
use crate::expr::Expr;
use crate::memory::{MemUse, WorkMem};
use crate::operator::{ExecContext, Operator};
use crate::plan::{
    AggCall, FrameBound, FrameExclude, FrameUnits, NodeKind, Plan, SortKey, WindowCallSpec,
    WindowFunc,
};
use crate::sortkey::{encode_value, KeyOrder};
use crate::tuplestore::TupleStore;
use crate::value::Value;
use crate::vector::{Batch, Data, Strings, Vector, BATCH_SIZE};
use frame::{frame_segments, nth_row, Excluded, FrameState, Part, Peers, RangeKey};
use tusk_storage::DataType;

/// Where each call's inputs sit in a stored row.
struct Layout {
    /// Input columns (the output's first columns).
    n_in: usize,
    peer: usize,
    range: Option<usize>,
    args: Vec<Vec<usize>>,
    filter: Vec<Option<usize>>,
}

/// Per-call evaluation state within a partition.
enum CallState {
    Plain,
    Ntile {
        bucket: i32,
        rows: i64,
        boundary: i64,
        remainder: i64,
    },
    Frame {
        frame: Box<FrameState>,
        agg: Option<Box<(AggCall, Acc)>>,
        /// Rows added so far (incremental aggregation).
        done: u64,
        /// The last frame aggregated afresh and its value.
        last: Option<((u64, u64, Excluded), Value)>,
    },
}

struct Eval {
    n: u64,
    next: u64,
    peers: Peers,
    calls: Vec<CallState>,
}

pub struct WindowAgg {
    input: Box<dyn Operator>,
    partition: Vec<Expr>,
    order: Vec<SortKey>,
    funcs: Vec<WindowCallSpec>,
    out_types: Vec<DataType>,
    layout: Layout,
    store: TupleStore,
    part_key: Option<Vec<u8>>,
    pending: Option<Batch>,
    input_done: bool,
    eval: Option<Eval>,
    mem: MemUse,
}

impl WindowAgg {
    pub fn new(plan: &Plan, ctx: &ExecContext, input: Box<dyn Operator>) -> Result<WindowAgg> {
        let NodeKind::WindowAgg {
            partition,
            order,
            calls: funcs,
        } = &plan.kind
        else {
            unreachable!("WindowAgg::new on another node")
        };
        let in_types = plan.children[0].output.to_vec();
        let mut types = in_types.clone();
        types.push(DataType::Text);
        let peer = types.len() - 1;
        let needs_range = funcs.iter().any(|f| {
            f.frame.units == FrameUnits::Range
                && [&f.frame.start, &f.frame.end]
                    .iter()
                    .any(|b| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_)))
        });
        let range = if needs_range {
            let key = order.first().ok_or_else(|| {
                ExecError::coded(
                    sqlstate::WINDOWING_ERROR,
                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                )
            })?;
            types.push(key.expr.data_type());
            Some(types.len() - 1)
        } else {
            None
        };
        let mut args = Vec::new();
        let mut filter = Vec::new();
        for f in funcs {
            let mut a = Vec::new();
            for e in &f.args {
                types.push(e.data_type());
                a.push(types.len() - 1);
            }
            args.push(a);
            filter.push(f.filter.as_ref().map(|_| {
                types.push(DataType::Bool);
                types.len() - 1
            }));
        }
        let layout = Layout {
            n_in: in_types.len(),
            peer,
            range,
            args,
            filter,
        };
        Ok(WindowAgg {
            input,
            partition: partition.clone(),
            order: order.clone(),
            funcs: funcs.clone(),
            out_types: plan.output.to_vec(),
            store: TupleStore::new(&types, WorkMem::sort(ctx)),
            layout,
            part_key: None,
            pending: None,
            input_done: false,
            eval: None,
            mem: MemUse::default(),
        })
    }

    /// Most bytes the partition buffer held.
    pub fn memory(&self) -> MemUse {
        let mut m = self.mem;
        m.absorb_peak(self.store.memory().peak);
        m
    }

    /// The stored form of an input batch.
    fn extend(&self, b: Batch) -> Result<Batch> {
        let n = b.len;
        let mut cols = b.columns.clone();
        let keys: Vec<Vector> = self
            .order
            .iter()
            .map(|k| k.expr.eval(&b))
            .collect::<Result<_>>()?;
        let mut peer = Strings::with_capacity(n, n * 9);
        let (mut buf, mut scratch) = (Vec::new(), String::new());
        for r in 0..n {
            buf.clear();
            for (v, k) in keys.iter().zip(&self.order) {
                let o = KeyOrder::asc(k.expr.data_type());
                encode_value(v, r, o, &mut buf, &mut scratch);
            }
            peer.push(&buf);
        }
        cols.push(Vector::new(Data::Text(peer), None));
        if self.layout.range.is_some() {
            cols.push(keys[0].clone());
        }
        for f in &self.funcs {
            // The FILTER first: arguments are computed only for the rows it
            // keeps, as PostgreSQL computes them.
            let take = match &f.filter {
                Some(e) => {
                    let v = e.eval(&b)?;
                    let Data::Bool(t) = &v.data else {
                        return Err(ExecError::new("argument of FILTER must be type boolean"));
                    };
                    Some((0..n).map(|i| t[i] && !v.is_null(i)).collect::<Vec<bool>>())
                }
                None => None,
            };
            for e in &f.args {
                cols.push(e.eval_active(&b, take.as_deref())?);
            }
            if let Some(take) = take {
                cols.push(Vector::new(Data::Bool(take), None));
            }
        }
        Ok(Batch::new(cols, n))
    }

    /// Partition key of each row of an input batch.
    fn partition_keys(&self, b: &Batch) -> Result<Vec<Vec<u8>>> {
        let vals: Vec<Vector> = self
            .partition
            .iter()
            .map(|e| e.eval(b))
            .collect::<Result<_>>()?;
        let mut scratch = String::new();
        Ok((0..b.len)
            .map(|r| {
                let mut k = Vec::new();
                for (v, e) in vals.iter().zip(&self.partition) {
                    encode_value(v, r, KeyOrder::asc(e.data_type()), &mut k, &mut scratch);
                }
                k
            })
            .collect())
    }

    /// Reads input until the current partition is complete; false when there
    /// is no partition left.
    fn fill(&mut self) -> Result<bool> {
        loop {
            let b = match self.pending.take() {
                Some(b) => b,
                None if self.input_done => return Ok(!self.store.is_empty()),
                None => match self.input.next()? {
                    Some(b) => b,
                    None => {
                        self.input_done = true;
                        return Ok(!self.store.is_empty());
                    }
                },
            };
            if b.len == 0 {
                continue;
            }
            let keys = self.partition_keys(&b)?;
            let current = self.part_key.get_or_insert_with(|| keys[0].clone()).clone();
            let split = keys.iter().position(|k| *k != current).unwrap_or(b.len);
            if split > 0 {
                let part = if split == b.len {
                    b.clone()
                } else {
                    b.gather(&(0..split as u32).collect::<Vec<_>>())
                };
                let ext = self.extend(part)?;
                self.store.append(&ext)?;
            }
            if split < b.len {
                self.pending = Some(b.gather(&(split as u32..b.len as u32).collect::<Vec<_>>()));
                self.part_key = Some(keys[split].clone());
                return Ok(true);
            }
        }
    }

    fn start_eval(&self) -> Result<Eval> {
        let range = self.layout.range.map(|col| RangeKey {
            col,
            desc: self.order[0].desc,
            nulls_first: self.order[0].nulls_first,
        });
        let calls = self
            .funcs
            .iter()
            .map(|f| {
                Ok(match f.func {
                    WindowFunc::Ntile => CallState::Ntile {
                        bucket: 0,
                        rows: 0,
                        boundary: 0,
                        remainder: 0,
                    },
                    WindowFunc::FirstValue
                    | WindowFunc::LastValue
                    | WindowFunc::NthValue
                    | WindowFunc::Aggregate(_) => {
                        let agg = match f.func {
                            WindowFunc::Aggregate(func) => {
                                let call = AggCall {
                                    func,
                                    args: f.args.clone(),
                                    distinct: false,
                                    filter: None,
                                    order_by: vec![],
                                    result: f.result,
                                };
                                let mut acc = Acc::new(&call);
                                acc.grow(1);
                                Some(Box::new((call, acc)))
                            }
                            _ => None,
                        };
                        CallState::Frame {
                            frame: Box::new(FrameState::new(&f.frame, range)?),
                            agg,
                            done: 0,
                            last: None,
                        }
                    }
                    _ => CallState::Plain,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Eval {
            n: self.store.len(),
            next: 0,
            peers: Peers::default(),
            calls,
        })
    }

    /// Output rows `from..to` of the partition.
    fn emit(&mut self, eval: &mut Eval, from: u64, to: u64) -> Result<Batch> {
        let mut input = self.store.range(from, to)?;
        input.columns.truncate(self.layout.n_in);
        let mut outs: Vec<Vector> = self.out_types[self.layout.n_in..]
            .iter()
            .map(|&t| Vector::with_capacity(t, (to - from) as usize))
            .collect();
        for r in from..to {
            let mut part = Part {
                store: &mut self.store,
                n: eval.n,
                peer_col: self.layout.peer,
            };
            eval.peers.advance(r, &mut part)?;
            for (i, f) in self.funcs.iter().enumerate() {
                let v = value(
                    f,
                    i,
                    &self.layout,
                    &mut eval.calls[i],
                    r,
                    eval.n,
                    &eval.peers,
                    &mut part,
                )?;
                outs[i].push_value(&v);
            }
        }
        input.columns.extend(outs);
        Ok(input)
    }
}

/// A value of the stored argument `arg` of call `i` at row `row`.
fn arg(part: &mut Part, layout: &Layout, i: usize, a: usize, row: u64) -> Result<Value> {
    part.store.value(row, layout.args[i][a])
}

fn int_arg(v: &Value) -> Option<i64> {
    match v {
        Value::Int2(x) => Some(*x as i64),
        Value::Int4(x) => Some(*x as i64),
        Value::Int8(x) => Some(*x),
        _ => None,
    }
}

/// The value of window call `f` (number `i`) at row `r` of `n`.
#[allow(clippy::too_many_arguments)]
fn value(
    f: &WindowCallSpec,
    i: usize,
    layout: &Layout,
    state: &mut CallState,
    r: u64,
    n: u64,
    peers: &Peers,
    part: &mut Part,
) -> Result<Value> {
    Ok(match (f.func, state) {
        (WindowFunc::RowNumber, _) => Value::Int8(r as i64 + 1),
        (WindowFunc::Rank, _) => Value::Int8(peers.start as i64 + 1),
        (WindowFunc::DenseRank, _) => Value::Int8(peers.group + 1),
        (WindowFunc::PercentRank, _) => Value::Float8(if n > 1 {
            peers.start as f64 / (n - 1) as f64
        } else {
            0.0
        }),
        (WindowFunc::CumeDist, _) => Value::Float8(peers.end as f64 / n as f64),
        (
            WindowFunc::Ntile,
            CallState::Ntile {
                bucket,
                rows,
                boundary,
                remainder,
            },
        ) => {
            if *bucket == 0 {
                let Some(k) = int_arg(&arg(part, layout, i, 0, r)?) else {
                    return Ok(Value::Null);
                };
                if k <= 0 {
                    return Err(ExecError::coded(
                        sqlstate::INVALID_ARGUMENT_FOR_NTILE,
                        "argument of ntile must be greater than zero",
                    ));
                }
                *bucket = 1;
                *rows = 0;
                *boundary = n as i64 / k;
                if *boundary <= 0 {
                    *boundary = 1;
                } else {
                    *remainder = n as i64 % k;
                    if *remainder != 0 {
                        *boundary += 1;
                    }
                }
            }
            *rows += 1;
            if *boundary < *rows {
                if *remainder != 0 && *bucket as i64 == *remainder {
                    *remainder = 0;
                    *boundary -= 1;
                }
                *bucket += 1;
                *rows = 1;
            }
            Value::Int4(*bucket)
        }
        (WindowFunc::Lag | WindowFunc::Lead, _) => {
            let off = if f.args.len() > 1 {
                match int_arg(&arg(part, layout, i, 1, r)?) {
                    Some(o) => o,
                    None => return Ok(Value::Null),
                }
            } else {
                1
            };
            let target = if f.func == WindowFunc::Lag {
                r as i128 - off as i128
            } else {
                r as i128 + off as i128
            };
            if (0..n as i128).contains(&target) {
                arg(part, layout, i, 0, target as u64)?
            } else if f.args.len() > 2 {
                arg(part, layout, i, 2, r)?
            } else {
                Value::Null
            }
        }
        (
            _,
            CallState::Frame {
                frame,
                agg,
                done,
                last,
            },
        ) => {
            let (head, tail) = frame.bounds(r, peers, part)?;
            let excl = frame.excluded(r, peers);
            let segs = frame_segments(head, tail, excl);
            match f.func {
                WindowFunc::FirstValue => match nth_row(&segs, 1) {
                    Some(row) => arg(part, layout, i, 0, row)?,
                    None => Value::Null,
                },
                WindowFunc::LastValue => match segs.last() {
                    Some(&(_, e)) => arg(part, layout, i, 0, e - 1)?,
                    None => Value::Null,
                },
                WindowFunc::NthValue => {
                    let Some(k) = int_arg(&arg(part, layout, i, 1, r)?) else {
                        return Ok(Value::Null);
                    };
                    if k <= 0 {
                        return Err(ExecError::coded(
                            sqlstate::INVALID_ARGUMENT_FOR_NTH_VALUE,
                            "argument of nth_value must be greater than zero",
                        ));
                    }
                    match nth_row(&segs, k as u64) {
                        Some(row) => arg(part, layout, i, 0, row)?,
                        None => Value::Null,
                    }
                }
                _ => {
                    let (call, acc) = &mut **agg.as_mut().expect("aggregate state");
                    let running = frame.from_start()
                        && frame.exclude == FrameExclude::NoOthers
                        && tail >= *done;
                    if running {
                        if tail > *done {
                            add_rows(part, layout, i, call, acc, *done, tail)?;
                            *done = tail;
                        }
                        acc.finish(0, f.result)?
                    } else {
                        let key = (head, tail, excl);
                        if let Some((k, v)) = last {
                            if *k == key {
                                return Ok(v.clone());
                            }
                        }
                        acc.reset();
                        for &(s, e) in &segs {
                            add_rows(part, layout, i, call, acc, s, e)?;
                        }
                        *done = u64::MAX;
                        let v = acc.finish(0, f.result)?;
                        *last = Some((key, v.clone()));
                        v
                    }
                }
            }
        }
        (_, _) => Value::Null,
    })
}

/// Adds rows `from..to` to call `i`'s accumulator, chunk by chunk of the
/// store, without copying them.
fn add_rows(
    part: &mut Part,
    layout: &Layout,
    i: usize,
    call: &AggCall,
    acc: &mut Acc,
    from: u64,
    to: u64,
) -> Result<()> {
    let mut at = from;
    let mut rows = Vec::new();
    while at < to {
        let (c, start) = part.store.locate(at);
        let chunk = part.store.chunk(c)?;
        let end = (start + (to - at) as usize).min(chunk.len);
        rows.clear();
        match layout.filter[i].map(|f| &chunk.columns[f].data) {
            Some(Data::Bool(t)) => rows.extend((start..end).filter(|&r| t[r]).map(|r| r as u32)),
            _ => rows.extend(start as u32..end as u32),
        }
        let args: Vec<&Vector> = layout.args[i].iter().map(|&c| &chunk.columns[c]).collect();
        acc.update_rows(call, &args, &rows, None)?;
        at += (end - start) as u64;
    }
    Ok(())
}

impl Operator for WindowAgg {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(mut eval) = self.eval.take() {
                if eval.next < eval.n {
                    let to = (eval.next + BATCH_SIZE as u64).min(eval.n);
                    let from = eval.next;
                    let b = self.emit(&mut eval, from, to)?;
                    eval.next = to;
                    self.eval = Some(eval);
                    return Ok(Some(b));
                }
                self.mem.absorb_peak(self.store.memory().peak);
                self.store.clear();
            }
            if !self.fill()? {
                return Ok(None);
            }
            self.eval = Some(self.start_eval()?);
        }
    }
}

#[cfg(test)]
mod tests;
