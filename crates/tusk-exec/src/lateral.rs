//! Lateral nested loop: a join whose inner side depends on the outer row
//! (PostgreSQL's Nested Loop with parameters, for `LATERAL` subqueries and
//! functions in FROM that read earlier FROM items).
//!
//! For each outer row the node evaluates `params` on it, substitutes the
//! values for the `Param`s of the inner plan (as a correlated SubPlan is
//! instantiated, see `subplan`), builds the instantiated plan with the
//! dispatcher handed in, and pairs the outer row with every row the inner
//! plan returns. `join_filter`, over (outer columns ++ inner columns),
//! keeps the matching pairs; a LEFT join emits an outer row that matched
//! nothing once, NULL-extended. Output: every outer column, then every
//! inner column. Only inner and left joins take a lateral inner side (the
//! binder refuses the others, as PostgreSQL does).
//!
//! An outer row whose parameter values equal the previous row's reuses the
//! inner rows of that row instead of running the inner plan again.

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::{BuildFn, ExecContext, Operator};
use crate::plan::{JoinKind, NodeKind, Plan};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use std::collections::VecDeque;

pub struct LateralLoop {
    outer: Box<dyn Operator>,
    inner: Plan,
    kind: JoinKind,
    join_filter: Option<Expr>,
    params: Vec<Expr>,
    param_ids: Vec<usize>,
    ctx: ExecContext,
    build: BuildFn,
    pending: VecDeque<Batch>,
    /// The previous outer row's parameter values and inner rows.
    last: Option<(Vec<Value>, Vec<Batch>)>,
}

impl LateralLoop {
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        outer: Box<dyn Operator>,
        build: BuildFn,
    ) -> LateralLoop {
        let NodeKind::LateralLoop {
            kind,
            join_filter,
            params,
            param_ids,
        } = &plan.kind
        else {
            unreachable!("LateralLoop::new on another node")
        };
        LateralLoop {
            outer,
            inner: plan.children[1].clone(),
            kind: *kind,
            join_filter: join_filter.clone(),
            params: params.clone(),
            param_ids: param_ids.clone(),
            ctx: ctx.clone(),
            build,
            pending: VecDeque::new(),
            last: None,
        }
    }

    /// The inner rows for parameter values `vals`.
    fn inner_rows(&mut self, vals: Vec<Value>) -> Result<Vec<Batch>> {
        if let Some((prev, rows)) = &self.last {
            if *prev == vals {
                return Ok(rows.clone());
            }
        }
        let mut plan = self.inner.clone();
        let ids = &self.param_ids;
        let lookup = |i: usize| ids.iter().position(|&x| x == i).map(|k| vals[k].clone());
        plan.for_each_expr_mut(&mut |e| e.substitute_params(&lookup));
        let mut op = (self.build)(&plan, &self.ctx)?;
        let mut rows = Vec::new();
        while let Some(b) = op.next()? {
            if b.len > 0 {
                rows.push(b);
            }
        }
        self.last = Some((vals, rows.clone()));
        Ok(rows)
    }

    /// Joins row `row` of outer batch `ob` with its inner rows.
    fn join_row(&mut self, ob: &Batch, row: usize, params: &[Vector]) -> Result<()> {
        let vals: Vec<Value> = params
            .iter()
            .zip(&self.params)
            .map(|(v, e)| v.value_as(row, e.data_type()))
            .collect();
        let inner = self.inner_rows(vals)?;
        let mut matched = false;
        for ib in &inner {
            let idx = vec![row as u32; ib.len];
            let mut columns = ob.gather(&idx).columns;
            columns.extend(ib.columns.iter().cloned());
            let mut pairs = Batch::new(columns, ib.len);
            if let Some(f) = &self.join_filter {
                let keep = f.eval(&pairs)?;
                let sel: Vec<u32> = match &keep.data {
                    Data::Bool(b) => (0..pairs.len)
                        .filter(|&i| b[i] && !keep.is_null(i))
                        .map(|i| i as u32)
                        .collect(),
                    _ => Vec::new(),
                };
                if sel.len() != pairs.len {
                    pairs = pairs.gather(&sel);
                }
            }
            if pairs.len > 0 {
                matched = true;
                self.pending.push_back(pairs);
            }
        }
        if !matched && self.kind == JoinKind::Left {
            let mut columns = ob.gather(&[row as u32]).columns;
            columns.extend(self.inner.output.iter().map(|&t| Vector::nulls(t, 1)));
            self.pending.push_back(Batch::new(columns, 1));
        }
        Ok(())
    }
}

impl Operator for LateralLoop {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                return Ok(Some(b));
            }
            let Some(ob) = self.outer.next()? else {
                return Ok(None);
            };
            let params = self
                .params
                .iter()
                .map(|e| e.eval(&ob))
                .collect::<Result<Vec<Vector>>>()?;
            for row in 0..ob.len {
                self.join_row(&ob, row, &params)?;
            }
        }
    }
}
