//! Result: PostgreSQL's Result node with a `One-Time Filter`. The filter
//! reads no column of the child's rows; it is evaluated once, before
//! anything else, and unless it is true the node returns no rows and never
//! pulls its child (EXPLAIN ANALYZE shows the child as never executed).
//! Without a child the node returns one row of no columns (what `SELECT`
//! without `FROM` projects from).
//!
//! A filter over uncorrelated subqueries (PostgreSQL's InitPlans and
//! SubPlans in a gating qual, `WHERE 1 > (SELECT max(x) FROM t)`) reads
//! their values from the one row of the *init* operator, which computes
//! them; it runs first, and only once.

use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::operator::Operator;
use crate::vector::{Batch, Data};

pub struct ResultNode {
    child: Option<Box<dyn Operator>>,
    filter: Option<Expr>,
    /// Produces the one row the filter reads (the subqueries' values).
    init: Option<Box<dyn Operator>>,
    /// The filter has been evaluated (and was true).
    started: bool,
    done: bool,
}

impl ResultNode {
    pub fn new(
        child: Option<Box<dyn Operator>>,
        one_time_filter: Option<Expr>,
        init: Option<Box<dyn Operator>>,
    ) -> ResultNode {
        ResultNode {
            child,
            filter: one_time_filter,
            init,
            started: false,
            done: false,
        }
    }

    /// The row the filter is evaluated over: the init operator's one row,
    /// or a row of no columns.
    fn filter_row(&mut self) -> Result<Batch> {
        let Some(init) = self.init.as_mut() else {
            return Ok(Batch::new(Vec::new(), 1));
        };
        while let Some(b) = init.next()? {
            if b.len > 0 {
                self.init = None;
                return Ok(b);
            }
        }
        Err(ExecError::new(
            "internal error: the One-Time Filter's subqueries produced no row",
        ))
    }

    /// Evaluates the one-time filter.
    fn passes(&mut self) -> Result<bool> {
        let Some(f) = self.filter.take() else {
            return Ok(true);
        };
        let row = self.filter_row()?;
        let v = f.eval(&row)?;
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
    use crate::testing::{batches, col, lit};
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
            let mut r = ResultNode::new(Some(Box::new(Untouchable)), f, None);
            assert!(r.next().unwrap().is_none());
            assert!(r.next().unwrap().is_none());
        }
        let rows = vec![vec![Value::Int4(1)], vec![Value::Int4(2)]];
        let child = batches(&[DataType::Int4], &rows, 10);
        let mut r = ResultNode::new(Some(Box::new(child)), t(Value::Bool(true)), None);
        assert_eq!(r.next().unwrap().unwrap().len, 2);
        assert!(r.next().unwrap().is_none());
        let mut r = ResultNode::new(None, None, None);
        assert_eq!(r.next().unwrap().unwrap().len, 1);
        assert!(r.next().unwrap().is_none());
    }

    /// With an init operator the filter reads its one row (the values of
    /// the subqueries it tests), computed before the child runs.
    #[test]
    fn one_time_filter_reads_the_init_row() {
        let filter = || Some(col(0, DataType::Bool));
        for v in [Value::Bool(false), Value::Null] {
            let init = batches(&[DataType::Bool], &[vec![v]], 10);
            let mut r =
                ResultNode::new(Some(Box::new(Untouchable)), filter(), Some(Box::new(init)));
            assert!(r.next().unwrap().is_none());
        }
        let init = batches(&[DataType::Bool], &[vec![Value::Bool(true)]], 10);
        let rows = vec![vec![Value::Int4(7)]];
        let child = batches(&[DataType::Int4], &rows, 10);
        let mut r = ResultNode::new(Some(Box::new(child)), filter(), Some(Box::new(init)));
        assert_eq!(r.next().unwrap().unwrap().len, 1);
        assert!(r.next().unwrap().is_none());
    }
}
