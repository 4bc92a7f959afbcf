//! Project: computes new columns from each input row, a batch at a time.
//!
//! A projection of bare column references (the common one over a scan)
//! moves the input's vectors into its output instead of copying them: the
//! last reference to a column takes it, earlier ones copy it.
//!
//! Over a chain of SubPlans nodes the projection reads the chain's input
//! and computes the subqueries only for the rows its expressions reach them
//! (`subplan::deferred`).

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::Operator;
use crate::subplan::DeferredSubPlans;
use crate::vector::{Batch, Vector};
use std::rc::Rc;
use tusk_storage::DataType;

pub struct Project {
    input: Box<dyn Operator>,
    exprs: Vec<Expr>,
    /// The subplans below, computed on demand.
    subplans: Option<Rc<DeferredSubPlans>>,
}

impl Project {
    pub fn new(input: Box<dyn Operator>, exprs: Vec<Expr>) -> Project {
        Project {
            input,
            exprs,
            subplans: None,
        }
    }

    /// A projection whose `input` is the input of the SubPlans chain
    /// `subplans` it evaluates on demand.
    pub fn over_subplans(
        input: Box<dyn Operator>,
        subplans: Rc<DeferredSubPlans>,
        exprs: Vec<Expr>,
    ) -> Project {
        Project {
            input,
            exprs,
            subplans: Some(subplans),
        }
    }
}

impl Operator for Project {
    fn next(&mut self) -> Result<Option<Batch>> {
        let Some(mut b) = self.input.next()? else {
            return Ok(None);
        };
        let width = b.columns.len();
        if self
            .exprs
            .iter()
            .all(|e| matches!(e, Expr::Column { index, .. } if *index < width))
        {
            return Ok(Some(take_columns(&self.exprs, b)));
        }
        let eval = || {
            self.exprs
                .iter()
                .map(|e| e.eval(&b))
                .collect::<Result<Vec<Vector>>>()
        };
        let cols = match &self.subplans {
            Some(s) => s.evaluate(eval)?,
            None => eval()?,
        };
        b.columns = cols;
        Ok(Some(b))
    }
}

/// The output of a projection of bare column references `exprs` over `b`
/// (see the module doc).
fn take_columns(exprs: &[Expr], mut b: Batch) -> Batch {
    let index = |e: &Expr| match e {
        Expr::Column { index, .. } => *index,
        _ => unreachable!("only column references"),
    };
    let mut cols = Vec::with_capacity(exprs.len());
    for (k, e) in exprs.iter().enumerate() {
        let i = index(e);
        let used_again = exprs[k + 1..].iter().any(|later| index(later) == i);
        cols.push(if used_again {
            b.columns[i].clone()
        } else {
            // An empty vector allocates nothing.
            std::mem::replace(&mut b.columns[i], Vector::empty(DataType::Bool))
        });
    }
    Batch::new(cols, b.len)
}
