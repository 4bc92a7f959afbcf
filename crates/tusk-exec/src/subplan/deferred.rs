//! SubPlans computed on demand by the Filter or Project above them.
//!
//! A chain of SubPlans nodes directly below a Filter or Project is not run
//! as operators: the consumer reads the chain's input and evaluates its
//! expressions with the chain's subplans installed as deferred columns
//! (`expr::deferred`), so each subplan runs only for the rows its
//! expression reaches, as PostgreSQL runs a SubPlan inside an expression.
//! Column `width + k` is the chain's `k`-th subplan, counting from the
//! bottom node's first spec, which is the layout the SubPlans nodes would
//! have produced.
//!
//! A Filter outputs the subplans' columns too (its output is its input's).
//! For the passing rows it computes the ones the plan reads above it
//! ([`crate::plan::SubPlanSpec::needed_above`]); the others are read by
//! nobody and are NULL.
//!
//! An Aggregate directly above the chain gets a projection in between
//! ([`aggregate_input`]) that computes its group keys and arguments on
//! demand, as PostgreSQL computes them for each input row; the aggregate
//! reads them as plain columns. Calls with `FILTER` compute their
//! arguments only for the rows the filter keeps, which a projection would
//! not: such an aggregate reads the chain's columns as they are.

use super::Runner;
use crate::error::Result;
use crate::expr::deferred::{install, DeferredColumns};
use crate::expr::Expr;
use crate::operator::{BuildFn, ExecContext, Operator};
use crate::plan::{AggCall, NodeKind, Plan, SortKey};
use crate::project::Project;
use crate::vector::{Batch, Vector};
use std::cell::RefCell;
use std::rc::Rc;

/// The subplans of a chain of SubPlans nodes, as deferred columns.
pub struct DeferredSubPlans {
    width: usize,
    runners: Vec<RefCell<Runner>>,
    ctx: ExecContext,
    build: BuildFn,
}

impl DeferredSubPlans {
    /// For the chain of SubPlans nodes starting at `plan` (which must be
    /// one): the operator of the chain's input and the chain's subplans.
    pub fn chain(
        plan: &Plan,
        ctx: &ExecContext,
        build: BuildFn,
    ) -> Result<(Box<dyn Operator>, Rc<DeferredSubPlans>)> {
        let mut nodes = Vec::new();
        let mut p = plan;
        while let NodeKind::SubPlans { subplans } = &p.kind {
            nodes.push(subplans);
            p = &p.children[0];
        }
        let runners = nodes
            .iter()
            .rev()
            .flat_map(|specs| specs.iter().cloned())
            .map(|s| RefCell::new(Runner::new(s)))
            .collect();
        let input = build(p, ctx)?;
        let deferred = DeferredSubPlans {
            width: p.output.len(),
            runners,
            ctx: ctx.clone(),
            build,
        };
        Ok((input, Rc::new(deferred)))
    }

    /// Runs `f` with these subplans installed as deferred columns.
    pub fn evaluate<R>(self: &Rc<Self>, f: impl FnOnce() -> R) -> R {
        let columns: Rc<dyn DeferredColumns> = self.clone();
        let _installed = install(&columns);
        f()
    }

    /// `batch` (the chain's input rows that passed a Filter) with the
    /// subplans' columns appended: computed where the plan reads them above
    /// the Filter, NULL where nothing does.
    pub fn append_columns(self: &Rc<Self>, mut batch: Batch) -> Result<Batch> {
        let mut cols = Vec::with_capacity(self.runners.len());
        self.evaluate(|| {
            for k in 0..self.runners.len() {
                let needed = self.runners[k].borrow().spec.needed_above;
                cols.push(if needed {
                    self.compute(self.width + k, &batch, None)?
                } else {
                    let ty = self.runners[k].borrow().spec.result_type();
                    Vector::nulls(ty, batch.len)
                });
            }
            Ok::<(), crate::error::ExecError>(())
        })?;
        batch.columns.extend(cols);
        Ok(batch)
    }
}

/// For Aggregate `plan` over a chain of SubPlans nodes, without FILTER
/// clauses: the aggregate with its group keys, arguments and ORDER BY keys
/// turned into the columns of a projection, and that projection, which
/// computes the subplans on demand. `None` when a call has a FILTER.
pub fn aggregate_input(
    plan: &Plan,
    ctx: &ExecContext,
    build: BuildFn,
) -> Result<Option<(Plan, Box<dyn Operator>)>> {
    let NodeKind::Aggregate { group, aggs, mode } = &plan.kind else {
        return Ok(None);
    };
    if aggs.iter().any(|c| c.filter.is_some()) {
        return Ok(None);
    }
    let mut exprs: Vec<Expr> = Vec::new();
    let mut column = |e: &Expr| {
        exprs.push(e.clone());
        Expr::Column {
            index: exprs.len() - 1,
            ty: e.data_type(),
        }
    };
    let group: Vec<Expr> = group.iter().map(&mut column).collect();
    let aggs: Vec<AggCall> = aggs
        .iter()
        .map(|c| AggCall {
            args: c.args.iter().map(&mut column).collect(),
            order_by: c
                .order_by
                .iter()
                .map(|k| SortKey {
                    expr: column(&k.expr),
                    ..k.clone()
                })
                .collect(),
            ..c.clone()
        })
        .collect();
    let (input, subplans) = DeferredSubPlans::chain(&plan.children[0], ctx, build)?;
    // The aggregate learns its input's types from its child plan: here the
    // projection's, which is built as an operator directly.
    let types: Vec<_> = exprs.iter().map(Expr::data_type).collect();
    let names: Vec<String> = types.iter().map(|_| String::new()).collect();
    let projected = Plan::new(
        NodeKind::Project {
            exprs: exprs.clone(),
        },
        vec![],
        types,
        names,
        plan.children[0].est,
    );
    let aggregate = Plan {
        kind: NodeKind::Aggregate {
            group,
            aggs,
            mode: *mode,
        },
        children: vec![projected],
        ..plan.clone()
    };
    let project = Project::over_subplans(input, subplans, exprs);
    Ok(Some((aggregate, Box::new(project))))
}

impl DeferredColumns for DeferredSubPlans {
    fn width(&self) -> usize {
        self.width
    }

    fn compute(&self, index: usize, batch: &Batch, active: Option<&[bool]>) -> Result<Vector> {
        let Some(runner) = self.runners.get(index - self.width) else {
            return Err(crate::error::ExecError::new(format!(
                "column {index} is outside a batch of {} columns",
                self.width
            )));
        };
        // The parameters may read an earlier subplan's column, another
        // runner; a runner never reads its own.
        runner
            .borrow_mut()
            .column(batch, active, &self.ctx, self.build)
    }
}
