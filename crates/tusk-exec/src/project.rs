//! Project: computes new columns from each input row, a batch at a time.

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::Operator;
use crate::vector::{Batch, Vector};

pub struct Project {
    input: Box<dyn Operator>,
    exprs: Vec<Expr>,
}

impl Project {
    pub fn new(input: Box<dyn Operator>, exprs: Vec<Expr>) -> Project {
        Project { input, exprs }
    }
}

impl Operator for Project {
    fn next(&mut self) -> Result<Option<Batch>> {
        let Some(b) = self.input.next()? else {
            return Ok(None);
        };
        let cols = self
            .exprs
            .iter()
            .map(|e| e.eval(&b))
            .collect::<Result<Vec<Vector>>>()?;
        Ok(Some(Batch::new(cols, b.len)))
    }
}
