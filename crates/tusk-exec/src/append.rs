//! Append: the rows of each child in turn, child after child (PostgreSQL's
//! Append, as in `UNION ALL`).

use crate::error::Result;
use crate::operator::Operator;
use crate::vector::Batch;
use std::collections::VecDeque;

pub struct Append {
    children: VecDeque<Box<dyn Operator>>,
}

impl Append {
    pub fn new(children: Vec<Box<dyn Operator>>) -> Append {
        Append {
            children: children.into(),
        }
    }
}

impl Operator for Append {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(c) = self.children.front_mut() {
            if let Some(b) = c.next()? {
                return Ok(Some(b));
            }
            // Done: dropped now, so that its memory and files go early.
            self.children.pop_front();
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, rows_of};
    use crate::value::Value;
    use tusk_storage::DataType;

    #[test]
    fn children_in_order() {
        let t = [DataType::Int4];
        let rows =
            |v: &[i32]| -> Vec<Vec<Value>> { v.iter().map(|&x| vec![Value::Int4(x)]).collect() };
        let mut a = Append::new(vec![
            Box::new(batches(&t, &rows(&[1, 2, 3]), 2)),
            Box::new(batches(&t, &[], 2)),
            Box::new(batches(&t, &rows(&[4]), 2)),
        ]);
        assert_eq!(rows_of(&mut a, &t).unwrap(), rows(&[1, 2, 3, 4]));
        assert!(a.next().unwrap().is_none());
    }
}
