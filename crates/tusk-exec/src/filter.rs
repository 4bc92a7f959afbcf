//! Filter: keeps the input rows where a predicate is true (neither false
//! nor NULL), counting the others as EXPLAIN's `Rows Removed by Filter`.
//! Its data errors are raised in row order (`RowOrderFilter`).
//!
//! Over a chain of SubPlans nodes the filter reads the chain's input and
//! computes the subqueries only for the rows its predicate reaches them
//! (`subplan::deferred`).

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::{ExecContext, Operator, RowOrderFilter};
use crate::subplan::DeferredSubPlans;
use crate::vector::Batch;
use std::rc::Rc;

pub struct Filter {
    input: Box<dyn Operator>,
    predicate: RowOrderFilter,
    ctx: ExecContext,
    id: usize,
    /// The subplans below, computed on demand.
    subplans: Option<Rc<DeferredSubPlans>>,
}

impl Filter {
    /// A filter for plan node `id`.
    pub fn new(input: Box<dyn Operator>, predicate: Expr, ctx: &ExecContext, id: usize) -> Filter {
        Filter {
            input,
            predicate: RowOrderFilter::new(Some(predicate)),
            ctx: ctx.clone(),
            id,
            subplans: None,
        }
    }

    /// A filter whose `input` is the input of the SubPlans chain
    /// `subplans` it evaluates on demand.
    pub fn over_subplans(
        input: Box<dyn Operator>,
        subplans: Rc<DeferredSubPlans>,
        predicate: Expr,
        ctx: &ExecContext,
        id: usize,
    ) -> Filter {
        Filter {
            subplans: Some(subplans),
            ..Filter::new(input, predicate, ctx, id)
        }
    }
}

impl Operator for Filter {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.predicate.raise_held()?;
        while let Some(b) = self.input.next()? {
            let (b, removed) = match &self.subplans {
                Some(s) => {
                    let (b, removed) = s.evaluate(|| self.predicate.apply(b))?;
                    (s.append_columns(b)?, removed)
                }
                None => self.predicate.apply(b)?,
            };
            self.ctx.add_removed(self.id, removed);
            if b.len > 0 {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}
