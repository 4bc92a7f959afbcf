//! Unique: the first row of each run of equal keys in sorted input.
//!
//! The input arrives sorted on its first `keys` columns, so equal keys
//! are adjacent. Each row's keys are encoded as a normalized key
//! ([`crate::sortkey`], ascending), which makes NULLs equal to each other
//! and `1.0` equal to `1.00`, as DISTINCT requires; a row is kept when its key
//! differs from the previous row's, which is carried from batch to batch.

use crate::error::Result;
use crate::operator::Operator;
use crate::sortkey::{KeyBuf, KeyOrder};
use crate::vector::{Batch, Vector};
use tusk_storage::DataType;

pub struct Unique {
    input: Box<dyn Operator>,
    orders: Vec<KeyOrder>,
    last: Option<Vec<u8>>,
}

impl Unique {
    /// Unique over `input`, whose first `keys` columns have `types`.
    pub fn new(input: Box<dyn Operator>, keys: usize, types: &[DataType]) -> Unique {
        Unique {
            input,
            orders: types[..keys].iter().map(|&t| KeyOrder::asc(t)).collect(),
            last: None,
        }
    }
}

impl Operator for Unique {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.input.next()? {
            let cols: Vec<&Vector> = b.columns[..self.orders.len()].iter().collect();
            let mut keys = KeyBuf::new();
            keys.push_rows(&cols, &self.orders);
            let mut keep = Vec::new();
            for r in 0..b.len {
                let k = keys.get(r);
                if self.last.as_deref() != Some(k) {
                    keep.push(r as u32);
                    self.last = Some(k.to_vec());
                }
            }
            if keep.len() == b.len {
                return Ok(Some(b));
            }
            if !keep.is_empty() {
                return Ok(Some(b.gather(&keep)));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, rows_of};
    use crate::value::Value;
    use tusk_storage::DataType::{Int4, Numeric, Text};

    #[test]
    fn keeps_the_first_row_of_each_run_across_batches() {
        let n = |s: &str| Value::Numeric(crate::numeric::Numeric::parse(s).unwrap());
        let t = |s: &str| Value::Text(s.into());
        let rows = vec![
            vec![Value::Int4(1), n("1.0"), t("a")],
            vec![Value::Int4(1), n("1.00"), t("b")],
            vec![Value::Int4(1), n("2"), t("c")],
            vec![Value::Int4(2), n("2"), t("d")],
            vec![Value::Int4(2), n("2"), t("e")],
            vec![Value::Null, Value::Null, t("f")],
            vec![Value::Null, Value::Null, t("g")],
        ];
        let types = [Int4, Numeric, Text];
        // Batches of two rows: runs cross batch boundaries.
        let mut u = Unique::new(Box::new(batches(&types, &rows, 2)), 2, &types);
        let got: Vec<String> = rows_of(&mut u, &types)
            .unwrap()
            .iter()
            .map(|r| r[2].to_text().unwrap())
            .collect();
        assert_eq!(got, ["a", "c", "d", "f"]);
        let mut u = Unique::new(Box::new(batches(&types, &[], 2)), 2, &types);
        assert!(rows_of(&mut u, &types).unwrap().is_empty());
        // DISTINCT over every column keeps all rows that differ anywhere.
        let mut u = Unique::new(Box::new(batches(&types, &rows, 3)), 3, &types);
        assert_eq!(rows_of(&mut u, &types).unwrap().len(), 7);
    }
}
