//! Parallel plans: which subtrees run under a Gather.
//!
//! A subtree is parallel-safe when it consists of sequential scans, hash
//! joins of any kind (whose build side is itself parallel-safe: all participants
//! build one shared table), filters and projections; a hash join whose
//! build side is not parallel-safe but small, stable and made of scans and
//! joins (`replicated_build`: two nation scans under a nested loop, say)
//! is parallel-safe too, as a Hash Join whose every participant builds the
//! whole table for its share of the probe side. When its biggest scan
//! is estimated at `min_parallel_table_scan_size` or more, its scans become
//! Parallel Seq Scans sharing the table's blocks, its joins Parallel Hash
//! Joins, and a Gather with `max_parallel_workers_per_gather` workers
//! collects its rows. An aggregation over such a subtree runs as a Partial
//! Aggregate in every participant and a Finalize Aggregate above the
//! Gather, when every call has a partial form
//! ([`AggCall::supports_partial`]): the Partial node emits the group keys
//! and each call's state columns, the Finalize node merges them.

use super::cost::CPU_TUPLE_COST;
use super::{Phys, Planner, Result};
use crate::logical::ColumnId;
use tusk_exec::plan::{AggCall, AggMode};
use tusk_exec::{Estimate, Expr, NodeKind, Plan};
use tusk_storage::DataType;

/// The biggest scan's estimated rows if `p` is parallel-safe.
fn safe(p: &Plan) -> Option<f64> {
    match &p.kind {
        NodeKind::SeqScan {
            with_tid: false, ..
        } => Some(p.est.rows.max(p.est.total_cost)),
        NodeKind::Filter { .. } | NodeKind::Project { .. } => safe(&p.children[0]),
        NodeKind::HashJoin { kind, .. } if kind.parallel_safe() => {
            let a = safe(&p.children[0])?;
            let build = &p.children[1].children[0];
            match safe(build) {
                Some(b) => Some(a.max(b)),
                None if replicated_build(p) => Some(a),
                None => None,
            }
        }
        _ => None,
    }
}

/// Whether hash join `p`, whose build side is not parallel-safe, may run
/// in every participant of a Gather with its build side whole in each (a
/// private table per participant, PostgreSQL's Hash Join below a Gather
/// that is not parallel-aware) and its probe side partial: the kind keeps
/// no build rows by their match bits (those need the one shared table of
/// a Parallel Hash Join), the build side is [`replicable`], and building
/// it in every participant costs less than the probe side's scan.
fn replicated_build(p: &Plan) -> bool {
    let NodeKind::HashJoin { kind, .. } = &p.kind else {
        return false;
    };
    let build = &p.children[1].children[0];
    !kind.marks_inner()
        && replicable(build)
        && build.est.total_cost * REPLICAS_PER_PROBE < p.children[0].est.total_cost
}

/// A build side replicated in every participant must cost less than
/// 1/REPLICAS_PER_PROBE of the probe side (participants are at most a few).
const REPLICAS_PER_PROBE: f64 = 4.0;

/// Whether `p` may run whole in every participant and give each the same
/// rows: scans, filters, projections, VALUES, and hash joins and nested
/// loops of those (of kinds that need no shared match bits), with nothing
/// volatile in them (a volatile call would give each participant other
/// rows).
fn replicable(p: &Plan) -> bool {
    let node = match &p.kind {
        NodeKind::SeqScan {
            with_tid: false, ..
        }
        | NodeKind::Filter { .. }
        | NodeKind::Project { .. }
        | NodeKind::Values { .. }
        | NodeKind::Hash => true,
        NodeKind::HashJoin { kind, .. } | NodeKind::NestedLoop { kind, .. } => !kind.marks_inner(),
        _ => false,
    };
    if !node || !p.children.iter().all(replicable) {
        return false;
    }
    let mut stable = true;
    p.clone().for_each_expr_mut(&mut |e| {
        e.visit(|n| {
            if let Expr::Call { func, .. } = n {
                stable &= !func.volatile();
            }
        })
    });
    stable
}

/// Marks every scan and join of a parallel-safe tree as parallel, except
/// the build sides that every participant builds whole
/// ([`replicated_build`]), which stay as they are.
fn make_parallel(p: &mut Plan) {
    let replicated =
        matches!(p.kind, NodeKind::HashJoin { .. }) && safe(&p.children[1].children[0]).is_none();
    match &mut p.kind {
        NodeKind::SeqScan { parallel, .. } => *parallel = true,
        NodeKind::HashJoin { parallel, .. } => *parallel = !replicated,
        _ => {}
    }
    for (i, c) in p.children.iter_mut().enumerate() {
        if i == 0 || !replicated {
            make_parallel(c);
        }
    }
}

impl Planner<'_> {
    fn worth_parallel(&self, p: &Plan) -> bool {
        self.settings.workers > 0
            && safe(p).is_some_and(|rows| rows >= self.settings.min_parallel_rows)
    }

    fn gather(&self, child: Plan) -> Plan {
        let est = child.est;
        let out = child.output.clone();
        let names = child.names.clone();
        Plan::new(
            NodeKind::Gather {
                workers: self.settings.workers,
            },
            vec![child],
            out,
            names,
            est,
        )
    }

    /// Wraps the maximal parallel-safe subtrees of `p` worth it in Gathers.
    pub(crate) fn parallelize(&self, mut p: Plan) -> Plan {
        if matches!(p.kind, NodeKind::Gather { .. }) {
            return p;
        }
        if self.worth_parallel(&p) {
            make_parallel(&mut p);
            return self.gather(p);
        }
        // A lateral loop's inner plan runs once per outer row: never
        // under a Gather of its own.
        let lateral = matches!(p.kind, NodeKind::LateralLoop { .. });
        let children = std::mem::take(&mut p.children);
        p.children = children
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                if lateral && i == 1 {
                    c
                } else {
                    self.parallelize(c)
                }
            })
            .collect();
        p
    }

    /// Partial and Finalize Aggregate around a Gather, when the input is
    /// worth running in parallel and every aggregate combines. `groups` is
    /// the serial estimate of the groups (`num_groups`, from the keys'
    /// distinct counts): the Finalize node's rows, and each participant's
    /// Partial node may emit every group.
    pub(crate) fn parallel_aggregate(
        &self,
        child: &Phys,
        group: &[Expr],
        aggs: &[AggCall],
        cols: &[ColumnId],
        groups: f64,
    ) -> Result<Option<Phys>> {
        if !aggs.iter().all(AggCall::supports_partial) || !self.worth_parallel(&child.plan) {
            return Ok(None);
        }
        let mut tree = child.plan.clone();
        make_parallel(&mut tree);
        let ng = group.len();
        let final_group: Vec<Expr> = group
            .iter()
            .enumerate()
            .map(|(i, g)| Expr::Column {
                index: i,
                ty: g.data_type(),
            })
            .collect();
        // Each participant may meet every group.
        let participants = (self.settings.workers + 1) as f64;
        let partial_rows = if group.is_empty() {
            participants
        } else {
            (groups * participants).min(tree.est.rows).max(1.0)
        };
        let pest = Estimate {
            startup_cost: tree.est.total_cost,
            total_cost: tree.est.total_cost + partial_rows * CPU_TUPLE_COST,
            rows: partial_rows.round(),
            width: 0,
        };
        // The Partial node emits the group keys and each call's state.
        let mut types: Vec<DataType> = group.iter().map(Expr::data_type).collect();
        let mut names: Vec<String> = cols[..ng].iter().map(|&c| self.display(c)).collect();
        for (call, &c) in aggs.iter().zip(&cols[ng..]) {
            for t in call.partial_types() {
                types.push(t);
                names.push(format!("PARTIAL {}", self.display(c)));
            }
        }
        let partial = Plan::new(
            NodeKind::Aggregate {
                group: group.to_vec(),
                aggs: aggs.to_vec(),
                mode: AggMode::Partial,
            },
            vec![tree],
            types,
            names,
            pest,
        );
        let gathered = self.gather(partial);
        let fest = Estimate {
            rows: groups.round(),
            ..pest
        };
        Ok(Some(self.node(
            NodeKind::Aggregate {
                group: final_group,
                aggs: aggs.to_vec(),
                mode: AggMode::Finalize,
            },
            vec![gathered],
            cols.to_vec(),
            fest,
        )))
    }
}
