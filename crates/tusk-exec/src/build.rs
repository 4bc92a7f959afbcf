//! The dispatcher: turns a [`Plan`] into a tree of operators.
//!
//! This module sits at the top of the executor: it is the one place that
//! knows every operator. [`build`] builds a node's children first and hands
//! them to the node's constructor, as PostgreSQL's `ExecInitNode` does, so
//! operators never build plans themselves (Gather, which must build its
//! child in every worker thread, is handed [`build`] as a function). With
//! EXPLAIN ANALYZE each operator is wrapped by `operator::instrument`.
//!
//! [`init_shared`] is the parallel counterpart of `build`: before a Gather
//! starts its participants, it creates the shared state of every
//! parallel-aware node of the subtree by calling that node's own
//! initialiser (see `parallel::state`).

use crate::error::{ExecError, Result};
use crate::operator::{instrument, ExecContext, Operator};
use crate::parallel::{Gather, ParallelState};
use crate::plan::{NodeKind, Plan, Statement};
use crate::{
    aggregate, append, columnar_scan, cte, filter, function_scan, hashjoin, index_nestloop,
    indexscan, lateral, limit, nestloop, project, recursive, result, scan, setop, sort, subplan,
    unique, window,
};

/// Builds the operator tree of a statement: each CTE plan is built and
/// registered for the statement's CTE scans (evaluated only when read), then
/// the root.
pub fn build_statement(stmt: &Statement, ctx: &ExecContext) -> Result<Box<dyn Operator>> {
    for (id, p) in stmt.ctes.iter().enumerate() {
        cte::register(ctx, id, &p.output, build(p, ctx)?);
    }
    build(&stmt.root, ctx)
}

/// Builds the operator tree for `plan`.
pub fn build(plan: &Plan, ctx: &ExecContext) -> Result<Box<dyn Operator>> {
    Ok(instrument(build_node(plan, ctx)?, plan.id, ctx, true))
}

/// Builds `plan`'s operator without the interrupt check and environment
/// around each batch: for the input of an operator that pulls exactly one
/// input batch per batch of its own (Project), whose own check covers it.
fn build_unguarded(plan: &Plan, ctx: &ExecContext) -> Result<Box<dyn Operator>> {
    Ok(instrument(build_node(plan, ctx)?, plan.id, ctx, false))
}

fn build_node(plan: &Plan, ctx: &ExecContext) -> Result<Box<dyn Operator>> {
    let child = |i: usize| build(&plan.children[i], ctx);
    let op: Box<dyn Operator> = match &plan.kind {
        NodeKind::SeqScan {
            columnar: Some(_), ..
        } => Box::new(columnar_scan::ColumnarScan::new(plan, ctx)?),
        NodeKind::SeqScan { .. } => Box::new(scan::SeqScan::new(plan, ctx)?),
        NodeKind::IndexScan { .. } => Box::new(indexscan::IndexScan::new(plan, ctx)?),
        NodeKind::FunctionScan { .. } => Box::new(function_scan::FunctionScan::new(plan, ctx)?),
        NodeKind::SystemScan { .. } => Box::new(crate::systemscan::SystemScan::new(plan, ctx)),
        NodeKind::Values { rows } => {
            Box::new(scan::ValuesScan::new(rows.clone(), plan.output.to_vec()))
        }
        // A Filter, Project or Aggregate computes the subplans of a
        // SubPlans chain directly below it on demand (see
        // `subplan::deferred`).
        NodeKind::Project { exprs } if below_subplans(plan) => {
            let (input, subplans) =
                subplan::DeferredSubPlans::chain(&plan.children[0], ctx, build)?;
            Box::new(project::Project::over_subplans(
                input,
                subplans,
                exprs.clone(),
            ))
        }
        NodeKind::Project { exprs } => Box::new(project::Project::new(
            build_unguarded(&plan.children[0], ctx)?,
            exprs.clone(),
        )),
        NodeKind::Filter { predicate } if below_subplans(plan) => {
            let (input, subplans) =
                subplan::DeferredSubPlans::chain(&plan.children[0], ctx, build)?;
            Box::new(filter::Filter::over_subplans(
                input,
                subplans,
                predicate.clone(),
                ctx,
                plan.id,
            ))
        }
        NodeKind::Filter { predicate } => Box::new(filter::Filter::new(
            child(0)?,
            predicate.clone(),
            ctx,
            plan.id,
        )),
        NodeKind::HashJoin { .. } => {
            // The Hash node is executed by the join: its child is the build input.
            let hash = &plan.children[1];
            if !matches!(hash.kind, NodeKind::Hash) {
                return Err(ExecError::new("hash join without a Hash node"));
            }
            let inner = build(&hash.children[0], ctx)?;
            Box::new(hashjoin::HashJoin::new(plan, ctx, child(0)?, inner)?)
        }
        NodeKind::Hash => return Err(ExecError::new("Hash node outside a hash join")),
        NodeKind::Aggregate { .. } if below_subplans(plan) => {
            match subplan::aggregate_input(plan, ctx, build)? {
                Some((p, input)) => Box::new(aggregate::Aggregate::new(&p, ctx, input)?),
                None => Box::new(aggregate::Aggregate::new(plan, ctx, child(0)?)?),
            }
        }
        NodeKind::Aggregate { .. } => Box::new(aggregate::Aggregate::new(plan, ctx, child(0)?)?),
        NodeKind::Gather { .. } => Box::new(Gather::new(plan, ctx, build, init_shared)?),
        NodeKind::Sort { keys, limit } => Box::new(sort::Sort::new(
            child(0)?,
            keys,
            *limit,
            &plan.output,
            ctx,
            plan.id,
        )),
        NodeKind::Limit { limit, offset } => {
            Box::new(limit::Limit::new(child(0)?, *limit, *offset))
        }
        NodeKind::MergeJoin { .. } => Box::new(crate::mergejoin::MergeJoin::new(
            plan,
            ctx,
            child(0)?,
            child(1)?,
        )?),
        NodeKind::NestedLoop { .. } => {
            Box::new(nestloop::NestedLoop::new(plan, ctx, child(0)?, child(1)?)?)
        }
        NodeKind::LateralLoop { .. } => {
            Box::new(lateral::LateralLoop::new(plan, ctx, child(0)?, build))
        }
        // The inner index scan is probed by the join itself, once per
        // outer row: it is never built as an operator.
        NodeKind::IndexNestLoop { .. } => {
            Box::new(index_nestloop::IndexNestLoop::new(plan, ctx, child(0)?)?)
        }
        NodeKind::Append => Box::new(append::Append::new(
            (0..plan.children.len()).map(child).collect::<Result<_>>()?,
        )),
        NodeKind::Result { one_time_filter } => {
            let input = match plan.children.len() {
                0 => None,
                _ => Some(child(0)?),
            };
            let init = match plan.children.len() {
                2 => Some(child(1)?),
                _ => None,
            };
            Box::new(result::ResultNode::new(
                input,
                one_time_filter.clone(),
                init,
            ))
        }
        NodeKind::Unique { keys } => Box::new(unique::Unique::new(child(0)?, *keys, &plan.output)),
        NodeKind::SetOp { .. } => Box::new(setop::SetOp::new(plan, ctx, child(0)?, child(1)?)?),
        NodeKind::WindowAgg { .. } => Box::new(window::WindowAgg::new(plan, ctx, child(0)?)?),
        NodeKind::CteScan { cte, .. } => Box::new(cte::CteScan::new(*cte, ctx)),
        NodeKind::RecursiveUnion { .. } => {
            // The recursive term is built anew for each iteration.
            Box::new(recursive::RecursiveUnion::new(plan, ctx, child(0)?, build))
        }
        NodeKind::WorkTableScan { work_table, .. } => {
            Box::new(recursive::WorkTableScan::new(*work_table, ctx))
        }
        NodeKind::SubPlans { .. } => {
            // Subplans are instantiated per outer row, so they get the builder.
            Box::new(subplan::SubPlans::new(plan, ctx, child(0)?, build))
        }
    };
    Ok(op)
}

/// Whether `plan`'s only child is a SubPlans node.
fn below_subplans(plan: &Plan) -> bool {
    matches!(&plan.children[..], [c] if matches!(c.kind, NodeKind::SubPlans { .. }))
}

/// Creates the shared state of every parallel-aware node of `plan` (down
/// to, not into, a nested Gather) in `state`, before a Gather's
/// participants start.
pub fn init_shared(plan: &Plan, state: &mut ParallelState) {
    match &plan.kind {
        NodeKind::SeqScan {
            parallel: true,
            columnar,
            ..
        } => match columnar {
            Some(_) => state.insert(
                plan.id,
                columnar_scan::ColumnarScan::init_shared(state.participants),
            ),
            None => state.insert(plan.id, scan::SeqScan::init_shared()),
        },
        NodeKind::HashJoin { parallel: true, .. } => {
            let shared = hashjoin::HashJoin::init_shared(plan, state.participants);
            state.insert(plan.id, shared);
        }
        NodeKind::Gather { .. } => return,
        _ => {}
    }
    for c in &plan.children {
        init_shared(c, state);
    }
}
