//! Result: PostgreSQL's Result node with a `One-Time Filter`. The filter
//! has no column references; it is evaluated once, before anything else,
//! and unless it is true the node returns no rows and never pulls its
//! child (EXPLAIN ANALYZE shows the child as never executed). Without a
//! child the node returns one row of no columns (what `SELECT` without
//! `FROM` projects from).

use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::operator::Operator;
use crate::vector::{Batch, Data};

pub struct ResultNode {
    child: Option<Box<dyn Operator>>,
    filter: Option<Expr>,
    /// The filter has been evaluated (and was true).
    started: bool,
    done: bool,
}

impl ResultNode {
    pub fn new(child: Option<Box<dyn Operator>>, one_time_filter: Option<Expr>) -> ResultNode {
        ResultNode {
            child,
            filter: one_time_filter,
            started: false,
            done: false,
        }
    }

    /// Evaluates the one-time filter over a single row of no columns.
    fn passes(&self) -> Result<bool> {
        let Some(f) = &self.filter else {
            return Ok(true);
        };
        let v = f.eval(&Batch::new(Vec::new(), 1))?;
        let Data::Bool(b) = &v.data else {
            return Err(ExecError::new(
                "argument of One-Time Filter must be type boolean",
            ));
        };
        Ok(b[0] && !v.is_null(0))
    }
}

impl Operator for ResultNode {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            if !self.passes()? {
                self.done = true;
                self.child = None;
                return Ok(None);
            }
            if self.child.is_none() {
                self.done = true;
                return Ok(Some(Batch::new(Vec::new(), 1)));
            }
        }
        match self.child.as_mut() {
            Some(c) => c.next(),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, lit};
    use crate::value::Value;
    use tusk_storage::DataType;

    /// A child that fails if it is ever pulled.
    struct Untouchable;
    impl Operator for Untouchable {
        fn next(&mut self) -> Result<Option<Batch>> {
            Err(ExecError::new("pulled"))
        }
    }

    #[test]
    fn one_time_filter_decides_before_the_child_runs() {
        let t = |v: Value| Some(lit(v, DataType::Bool));
        for f in [t(Value::Bool(false)), t(Value::Null)] {
            let mut r = ResultNode::new(Some(Box::new(Untouchable)), f);
            assert!(r.next().unwrap().is_none());
            assert!(r.next().unwrap().is_none());
        }
        let rows = vec![vec![Value::Int4(1)], vec![Value::Int4(2)]];
        let child = batches(&[DataType::Int4], &rows, 10);
        let mut r = ResultNode::new(Some(Box::new(child)), t(Value::Bool(true)));
        assert_eq!(r.next().unwrap().unwrap().len, 2);
        assert!(r.next().unwrap().is_none());
        let mut r = ResultNode::new(None, None);
        assert_eq!(r.next().unwrap().unwrap().len, 1);
        assert!(r.next().unwrap().is_none());
    }
}
