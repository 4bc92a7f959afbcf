//! The choice between a hash join and a merge join, and the merge join's
//! plan: a Merge Join over a Sort of each side on its keys.
//!
//! PostgreSQL weighs both methods for every equality join. Without
//! statistics its hash join pays for long bucket chains (each probe row is
//! compared with half of a bucket that holds a tenth of the build side,
//! `final_cost_hashjoin` with the default bucket fraction), while two
//! sorts cost `2 * cpu_operator_cost * n * log2(n)` each: on tables never
//! analyzed it picks a Merge Join for most joins of two scans. The method
//! decides which rows are evaluated and so which errors are raised: a merge
//! join sorts its whole outer side (every key computed), and reads its
//! inner side only when the outer one has a row that can match. So tusk
//! makes the same choice with the same formulas: [`hash_cost`] is
//! `final_cost_hashjoin`'s, [`merge_cost`] `final_cost_mergejoin`'s with
//! `cost_sort`'s sorts, and the cheaper wins (an exact tie keeps the hash
//! join, and of two merge join orders of equal cost the one PostgreSQL
//! generates first, as its `add_path` keeps the first of equal paths: a
//! left join's, the preserved side outer, where a right join is a left
//! join swapped; else the one with the written left side outer).
//!
//! A cursor's plan is costed for a tenth of its rows
//! (`cursor_tuple_fraction`), which favours the hash join's fast start, as
//! PostgreSQL's fractional path choice does.
//!
//! Neither cost counts spilling. PostgreSQL's does, but tusk's plan must
//! not change with `work_mem`: the differential suite runs every statement
//! at `work_mem = 64kB` as well, and both runs must raise the same errors;
//! a small `work_mem` makes the sorts spill, not the method change.
//!
//! Merge joins are planned for inner, left, right and full joins (a full
//! join only when every condition is a merge key, as PostgreSQL requires),
//! never below a Gather, and only on keys whose types
//! `mergejoin::compared_as` accepts. `enable_mergejoin = off` adds
//! PostgreSQL's disable cost, as `enable_hashjoin = off` does to the hash
//! join.

use super::cost::{
    bucket_compare_cost, eval_cost, CPU_OPERATOR_COST, CPU_TUPLE_COST, DISABLE_COST,
};
use super::{Phys, Planner};
use crate::logical::{ColumnId, JoinKind};
use tusk_exec::plan::SortKey;
use tusk_exec::{Estimate, Expr, NodeKind, Plan};
use tusk_storage::DataType;

/// One side of a join as the cost formulas see it.
#[derive(Clone, Copy)]
pub(crate) struct SideCost {
    pub rows: f64,
    pub total: f64,
}

impl SideCost {
    pub(crate) fn of(e: &Estimate) -> SideCost {
        SideCost {
            rows: e.rows.max(1.0),
            total: e.total_cost,
        }
    }
}

/// What both formulas share: the keys, the cost of comparing one pair of
/// rows on all of them, the rows matching on the keys alone
/// (`approx_tuple_count`), and the other conditions' cost per row.
pub(crate) struct JoinCostInput {
    pub keys: usize,
    pub key_compare_cost: f64,
    pub key_rows: f64,
    pub qual_cost: f64,
}

/// What PostgreSQL's `cost_qual_eval` charges for the join clauses
/// `outer_keys[i] = inner_keys[i]`: each `=` and the expressions on its
/// sides (`a.x % a.y = NULLIF(b.z, b.z)` costs three operators). A merge
/// join pays it per row merged, a hash join per row of a probed bucket;
/// hashing a row and sorting count one operator per key whatever it is.
pub(crate) fn key_compare_cost(outer_keys: &[Expr], inner_keys: &[Expr]) -> f64 {
    outer_keys
        .iter()
        .zip(inner_keys)
        .map(|(o, i)| (1.0 + eval_cost(o) + eval_cost(i)) * CPU_OPERATOR_COST)
        .sum()
}

/// `cost_sort` of `n` rows read at `input` (in memory): its startup and
/// total cost.
fn sort_cost(input: SideCost) -> (f64, f64) {
    let n = input.rows.max(2.0);
    let startup = input.total + 2.0 * CPU_OPERATOR_COST * n * n.log2();
    (startup, startup + CPU_OPERATOR_COST * input.rows)
}

/// `final_cost_hashjoin` for an inner, left, right or full join building
/// `inner` (whose bucket holds `bucket` of its rows) and probing with
/// `outer`: its startup and total cost.
pub(crate) fn hash_cost(
    outer: SideCost,
    inner: SideCost,
    bucket: f64,
    j: &JoinCostInput,
) -> (f64, f64) {
    let keys = j.keys as f64;
    let startup = inner.total + (CPU_OPERATOR_COST * keys + CPU_TUPLE_COST) * inner.rows;
    let total = startup
        + outer.total
        + CPU_OPERATOR_COST * keys * outer.rows
        + bucket_compare_cost(outer.rows, inner.rows, bucket, j.key_compare_cost)
        + (CPU_TUPLE_COST + j.qual_cost) * j.key_rows;
    (startup, total)
}

/// `final_cost_mergejoin` over a Sort of each side: its startup and total
/// cost. The inner side is read again for every outer row after the first
/// of a run of equal keys (`rescanratio`).
pub(crate) fn merge_cost(outer: SideCost, inner: SideCost, j: &JoinCostInput) -> (f64, f64) {
    let (os, ot) = sort_cost(outer);
    let (is, it) = sort_cost(inner);
    let rescanned = (j.key_rows - inner.rows).max(0.0);
    let rescan_ratio = 1.0 + rescanned / inner.rows;
    let merge_qual = j.key_compare_cost;
    let startup = os + is;
    let run = (ot - os)
        + (it - is) * rescan_ratio
        + merge_qual * (outer.rows + inner.rows * rescan_ratio)
        + (CPU_TUPLE_COST + j.qual_cost) * j.key_rows;
    (startup, startup + run)
}

/// Whether a key of type `t` can be sorted and merged.
fn mergeable(t: DataType) -> bool {
    matches!(
        t,
        DataType::Bool
            | DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Float4
            | DataType::Float8
            | DataType::Numeric
            | DataType::Text
            | DataType::Varchar
            | DataType::Bpchar
            | DataType::Date
            | DataType::Time
            | DataType::Timestamp
            | DataType::TimestampTz
            | DataType::Interval
            | DataType::Bytea
            | DataType::Uuid
    )
}

/// A join as the choice sees it, oriented as the hash join would run it
/// (`kind` as it runs so: a left join whose sides it swapped is `Right`).
pub(crate) struct JoinChoice<'a> {
    pub kind: JoinKind,
    pub outer: &'a Phys,
    pub inner: &'a Phys,
    /// The keys over each side's own columns.
    pub outer_keys: &'a [Expr],
    pub inner_keys: &'a [Expr],
    pub join_filter: Option<&'a Expr>,
    pub rows: f64,
    /// The hash join's bucket fraction (of the inner side's rows).
    pub bucket: f64,
    pub key_rows: f64,
    /// Output columns.
    pub cols: &'a [ColumnId],
    pub outer_out: &'a [usize],
    pub inner_out: &'a [usize],
    /// Whether `outer` is the written right side.
    pub swapped: bool,
}

impl Planner<'_> {
    /// The merge join that replaces the hash join `c`, when PostgreSQL's
    /// costs make it the cheaper (see the module doc).
    pub(crate) fn merge_join_instead(&mut self, c: &JoinChoice<'_>) -> Option<Phys> {
        let full_ok = c.kind != JoinKind::Full || c.join_filter.is_none();
        let kind_ok = matches!(
            c.kind,
            JoinKind::Inner | JoinKind::Left | JoinKind::Right | JoinKind::Full
        );
        let types_ok = c.outer_keys.iter().zip(c.inner_keys).all(|(o, i)| {
            mergeable(o.data_type())
                && mergeable(i.data_type())
                && tusk_exec::mergejoin::compared_as(o.data_type(), i.data_type()).is_ok()
        });
        if !(kind_ok && full_ok && types_ok) || c.outer_keys.is_empty() {
            return None;
        }
        let j = JoinCostInput {
            keys: c.outer_keys.len(),
            key_compare_cost: key_compare_cost(c.outer_keys, c.inner_keys),
            key_rows: c.key_rows,
            qual_cost: c
                .join_filter
                .map_or(0.0, |f| eval_cost(f) * CPU_OPERATOR_COST),
        };
        let (o, i) = (
            SideCost::of(&c.outer.plan.est),
            SideCost::of(&c.inner.plan.est),
        );
        let disabled = |on: bool| if on { 0.0 } else { DISABLE_COST };
        // The cost of fetching the share of the rows the statement
        // expects to fetch (all, but a tenth for a cursor).
        let fraction = self.settings.tuple_fraction;
        let fetched = |(startup, total): (f64, f64)| startup + fraction * (total - startup);
        let hash = disabled(self.settings.enable_hashjoin) + fetched(hash_cost(o, i, c.bucket, &j));
        let merge_off = disabled(self.settings.enable_mergejoin);
        // The hash join's orientation, and the other one.
        let as_is = merge_cost(o, i, &j);
        let swapped = merge_cost(i, o, &j);
        // Of two equal costs PostgreSQL keeps the order it generated first:
        // a left join's (a right join is one with its sides swapped),
        // otherwise the one with the written left side outer.
        let as_is_first = match c.kind {
            JoinKind::Left => true,
            JoinKind::Right => false,
            _ => !c.swapped,
        };
        let (first, second, first_is_as_is) = if as_is_first {
            (as_is, swapped, true)
        } else {
            (swapped, as_is, false)
        };
        let (best, take_as_is) = if fetched(second) < fetched(first) {
            (second, !first_is_as_is)
        } else {
            (first, first_is_as_is)
        };
        if merge_off + fetched(best) >= hash {
            return None;
        }
        let est = Estimate {
            startup_cost: merge_off + best.0,
            total_cost: merge_off + best.1,
            rows: c.rows,
            width: 0,
        };
        Some(if take_as_is {
            self.merge_join_node(c, false, est)
        } else {
            self.merge_join_node(c, true, est)
        })
    }

    /// The Merge Join node for `c`, its sides swapped when `swap`.
    fn merge_join_node(&mut self, c: &JoinChoice<'_>, swap: bool, est: Estimate) -> Phys {
        let sorted = |p: &Phys, keys: &[Expr]| -> Plan {
            let (startup, total) = sort_cost(SideCost::of(&p.plan.est));
            Plan::new(
                NodeKind::Sort {
                    keys: keys
                        .iter()
                        .map(|k| SortKey {
                            expr: k.clone(),
                            desc: false,
                            nulls_first: false,
                        })
                        .collect(),
                    limit: None,
                },
                vec![p.plan.clone()],
                p.plan.output.clone(),
                p.plan.names.clone(),
                Estimate {
                    startup_cost: startup,
                    total_cost: total,
                    rows: p.plan.est.rows,
                    width: p.plan.est.width,
                },
            )
        };
        let outer_sorted = sorted(c.outer, c.outer_keys);
        let inner_sorted = sorted(c.inner, c.inner_keys);
        if !swap {
            return self.node(
                NodeKind::MergeJoin {
                    kind: c.kind,
                    outer_keys: c.outer_keys.to_vec(),
                    inner_keys: c.inner_keys.to_vec(),
                    outer_out: c.outer_out.to_vec(),
                    inner_out: c.inner_out.to_vec(),
                    join_filter: c.join_filter.cloned(),
                },
                vec![outer_sorted, inner_sorted],
                c.cols.to_vec(),
                est,
            );
        }
        // The other order: the inner side outer. Its output columns are the
        // new outer's then the new inner's, so a projection restores the
        // join's column order.
        let (no, ni) = (c.inner.cols.len(), c.outer.cols.len());
        let kind = match c.kind {
            JoinKind::Left => JoinKind::Right,
            JoinKind::Right => JoinKind::Left,
            k => k,
        };
        let join_filter = c.join_filter.map(|f| {
            let mut f = f.clone();
            f.remap_columns(&|x| if x < ni { x + no } else { x - ni });
            f
        });
        let mut cols: Vec<ColumnId> = c.inner.cols.clone();
        cols.extend(c.outer.cols.iter().copied());
        let join = self.node(
            NodeKind::MergeJoin {
                kind,
                outer_keys: c.inner_keys.to_vec(),
                inner_keys: c.outer_keys.to_vec(),
                outer_out: (0..no).collect(),
                inner_out: (0..ni).collect(),
                join_filter,
            },
            vec![inner_sorted, outer_sorted],
            cols.clone(),
            est,
        );
        self.project_to(join, c.cols)
            .expect("a join's own columns project")
    }
}
