//! Aggregate calls with DISTINCT or ORDER BY inputs
//! (`count(DISTINCT x)`, `string_agg(x, ',' ORDER BY y)`).
//!
//! Such a call cannot fold rows into its state as they arrive. Its input
//! rows — group number, arguments and ORDER BY values — go into a
//! [`Sorter`] ordered by group, then the ORDER BY keys, then (for DISTINCT)
//! the arguments, so it stays within its share of `work_mem` by spilling
//! like any sort. When the group table is finished, the sorted rows are fed
//! to the accumulator group by group, in order; under DISTINCT a row whose
//! arguments equal the previous row's in the same group is dropped
//! (equality of normalized keys: NULLs equal, `1.0` = `1.00`).
//!
//! Rows that fail the FILTER or have a NULL in a strict argument are never
//! stored: they would not be aggregated anyway. PostgreSQL does the same
//! work with one sort per group.

use super::accum::Acc;
use super::funcs::strict_args;
use crate::error::Result;
use crate::memory::WorkMem;
use crate::plan::AggCall;
use crate::sort::sorter::{SortSpec, Sorter};
use crate::sortkey::{encode_row, KeyOrder};
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};
use tusk_storage::DataType;

pub struct OrderedInput {
    sorter: Sorter,
    nargs: usize,
    distinct: bool,
    arg_orders: Vec<KeyOrder>,
}

impl OrderedInput {
    pub fn new(call: &AggCall, wm: WorkMem) -> OrderedInput {
        let nargs = call.args.len();
        let mut types = vec![DataType::Int8];
        types.extend(call.args.iter().map(|a| a.data_type()));
        types.extend(call.order_by.iter().map(|k| k.expr.data_type()));
        let mut keys = vec![(0, KeyOrder::asc(DataType::Int8))];
        for (i, k) in call.order_by.iter().enumerate() {
            keys.push((
                1 + nargs + i,
                KeyOrder {
                    ty: k.expr.data_type(),
                    desc: k.desc,
                    nulls_first: k.nulls_first,
                },
            ));
        }
        let arg_orders: Vec<KeyOrder> = call
            .args
            .iter()
            .map(|a| KeyOrder::asc(a.data_type()))
            .collect();
        if call.distinct {
            keys.extend(arg_orders.iter().enumerate().map(|(i, o)| (1 + i, *o)));
        }
        let spec = SortSpec {
            out_cols: types.len(),
            types,
            keys,
            limit: None,
        };
        OrderedInput {
            sorter: Sorter::new(spec, wm),
            nargs,
            distinct: call.distinct,
            arg_orders,
        }
    }

    /// Bytes the sorter holds.
    pub fn mem(&self) -> usize {
        self.sorter.memory().current
    }

    pub fn peak(&self) -> usize {
        self.sorter.memory().peak
    }

    /// Stores the rows of a batch that reach the call: `take` marks rows
    /// that have a group and pass the FILTER; `gids` are their groups.
    pub fn push(
        &mut self,
        call: &AggCall,
        args: Vec<Vector>,
        order: Vec<Vector>,
        take: &[bool],
        gids: &[u32],
    ) -> Result<()> {
        let strict = strict_args(call).min(args.len());
        let keep: Vec<u32> = (0..take.len())
            .filter(|&i| take[i] && args[..strict].iter().all(|a| !a.is_null(i)))
            .map(|i| i as u32)
            .collect();
        if keep.is_empty() {
            return Ok(());
        }
        let mut cols = vec![Vector::new(
            Data::Int8(keep.iter().map(|&i| gids[i as usize] as i64).collect()),
            None,
        )];
        cols.extend(args.iter().chain(&order).map(|v| v.gather(&keep)));
        self.sorter.push(Batch::new(cols, keep.len()))
    }

    /// Feeds the stored rows, sorted and (under DISTINCT) deduplicated, to
    /// the accumulator; returns the most the sorter held.
    pub fn feed(self, call: &AggCall, acc: &mut Acc) -> Result<usize> {
        let mut stream = self.sorter.finish()?;
        let mut prev: Option<(i64, Vec<u8>)> = None;
        let mut key = Vec::new();
        while let Some(b) = stream.next_batch(BATCH_SIZE)? {
            let Data::Int8(g) = &b.columns[0].data else {
                unreachable!("group numbers are bigint")
            };
            let groups: Vec<u32> = g.iter().map(|&x| x as u32).collect();
            let args = &b.columns[1..1 + self.nargs];
            let take: Option<Vec<bool>> = self.distinct.then(|| {
                let refs: Vec<&Vector> = args.iter().collect();
                (0..b.len)
                    .map(|i| {
                        key.clear();
                        encode_row(&refs, &self.arg_orders, i, &mut key);
                        let dup = prev
                            .as_ref()
                            .is_some_and(|(pg, pk)| *pg == g[i] && *pk == key);
                        if !dup {
                            prev = Some((g[i], key.clone()));
                        }
                        !dup
                    })
                    .collect()
            });
            let args: Vec<&Vector> = args.iter().collect();
            acc.update(call, &args, b.len, take.as_deref(), Some(&groups))?;
        }
        Ok(stream.report().peak)
    }
}
