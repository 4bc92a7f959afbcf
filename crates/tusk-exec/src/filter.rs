//! Filter: keeps the input rows where a predicate is true (neither false
//! nor NULL), counting the others as EXPLAIN's `Rows Removed by Filter`.
//! Its data errors are raised in row order (`RowOrderFilter`).

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::{ExecContext, Operator, RowOrderFilter};
use crate::vector::Batch;

pub struct Filter {
    input: Box<dyn Operator>,
    predicate: RowOrderFilter,
    ctx: ExecContext,
    id: usize,
}

impl Filter {
    /// A filter for plan node `id`.
    pub fn new(input: Box<dyn Operator>, predicate: Expr, ctx: &ExecContext, id: usize) -> Filter {
        Filter {
            input,
            predicate: RowOrderFilter::new(Some(predicate)),
            ctx: ctx.clone(),
            id,
        }
    }
}

impl Operator for Filter {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.predicate.raise_held()?;
        while let Some(b) = self.input.next()? {
            let (b, removed) = self.predicate.apply(b)?;
            self.ctx.add_removed(self.id, removed);
            if b.len > 0 {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}
