//! Skipping row groups by their statistics.
//!
//! A scan's [`SkipKey`]s are conjuncts of its filter, so a row passes the
//! filter only if it passes every key. A row group may hold such a row only
//! if, for every key, the segment's NULL count and its smallest and largest
//! values leave room for one: `col = v` needs `min <= v <= max`, `col < v`
//! needs `min < v`, `col IN (...)` one list value within the range, `col IS
//! NULL` a NULL, and a comparison with NULL is never true. Bounds compare
//! with values as the column's type orders them (a string bound may be a
//! shortened or raised form of the real value, which keeps every test on
//! the safe side; see `tusk_storage::columnar::column`). When a bound is
//! unknown or cannot be compared, the group may match.

use crate::error::Result;
use crate::plan::{SkipKey, SkipOp};
use crate::scan::eval_constants;
use crate::value::Value;
use std::cmp::Ordering;
use tusk_storage::columnar::column::numeric_cmp;
use tusk_storage::columnar::{Bound, ColumnStats};

/// A [`SkipKey`] with its values computed.
#[derive(Debug)]
pub(super) struct Skip {
    /// Output position of the column.
    pub column: usize,
    op: SkipOp,
    values: Vec<Value>,
}

impl Skip {
    /// For `=` / `IN` with string values only: the values' bytes (a row
    /// whose value is none of them fails the key; NULL values match no
    /// row and are left out).
    pub(super) fn string_values(&self) -> Option<Vec<Vec<u8>>> {
        if !matches!(self.op, SkipOp::Eq | SkipOp::In) {
            return None;
        }
        self.values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| match v {
                Value::Text(s) => Some(s.as_bytes().to_vec()),
                _ => None,
            })
            .collect()
    }
}

/// The keys with their values evaluated (when the scan starts).
pub(super) fn prepare(keys: &[SkipKey]) -> Result<Vec<Skip>> {
    keys.iter()
        .map(|k| {
            Ok(Skip {
                column: k.column,
                op: k.op,
                values: eval_constants(&k.values)?,
            })
        })
        .collect()
}

/// PostgreSQL's float order: NaN above everything.
fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// How bound `b` compares with value `v`; `None` when they cannot be
/// compared.
fn compare(b: &Bound, v: &Value) -> Option<Ordering> {
    let int = match v {
        Value::Bool(x) => Some(i64::from(*x)),
        Value::Int2(x) => Some(i64::from(*x)),
        Value::Int4(x) | Value::Date(x) => Some(i64::from(*x)),
        Value::Int8(x) | Value::Time(x) | Value::Timestamp(x) | Value::TimestampTz(x) => Some(*x),
        _ => None,
    };
    match (b, v) {
        (Bound::Int(b), _) => Some(b.cmp(&int?)),
        (Bound::Float(b), Value::Float4(x)) => Some(float_cmp(*b, f64::from(*x))),
        (Bound::Float(b), Value::Float8(x)) => Some(float_cmp(*b, *x)),
        (Bound::Numeric(u, s), Value::Numeric(n)) => numeric_cmp((*u, *s), n.to_storage_parts()?),
        (Bound::Bytes(b), Value::Text(s)) => Some(b.as_slice().cmp(s.as_bytes())),
        _ => None,
    }
}

/// Whether a row group whose segment for `skip`'s column has `stats` (of
/// `rows` rows) may hold a row that passes `skip`.
pub(super) fn may_match(skip: &Skip, stats: &ColumnStats, rows: u32) -> bool {
    let nulls = stats.null_count;
    match skip.op {
        SkipOp::IsNull => return nulls > 0,
        SkipOp::IsNotNull => return nulls < rows,
        _ => {}
    }
    if nulls >= rows {
        // Every value is NULL: no comparison is true.
        return false;
    }
    let (Some(min), Some(max)) = (&stats.min, &stats.max) else {
        return true;
    };
    let within = |v: &Value| -> bool {
        if v.is_null() {
            return false;
        }
        let lo = compare(min, v);
        let hi = compare(max, v);
        match skip.op {
            SkipOp::Eq | SkipOp::In => lo != Some(Ordering::Greater) && hi != Some(Ordering::Less),
            SkipOp::Lt => lo != Some(Ordering::Greater) && lo != Some(Ordering::Equal),
            SkipOp::Le => lo != Some(Ordering::Greater),
            SkipOp::Gt => hi != Some(Ordering::Less) && hi != Some(Ordering::Equal),
            SkipOp::Ge => hi != Some(Ordering::Less),
            SkipOp::IsNull | SkipOp::IsNotNull => unreachable!(),
        }
    };
    skip.values.iter().any(within)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(min: i64, max: i64, nulls: u32) -> ColumnStats {
        ColumnStats {
            null_count: nulls,
            min: Some(Bound::Int(min)),
            max: Some(Bound::Int(max)),
        }
    }

    fn key(op: SkipOp, values: &[Value]) -> Skip {
        Skip {
            column: 0,
            op,
            values: values.to_vec(),
        }
    }

    #[test]
    fn ranges_rule_out_groups() {
        let s = stats(10, 20, 0);
        let v = |x: i32| Value::Int4(x);
        assert!(may_match(&key(SkipOp::Eq, &[v(10)]), &s, 100));
        assert!(!may_match(&key(SkipOp::Eq, &[v(21)]), &s, 100));
        assert!(!may_match(&key(SkipOp::Lt, &[v(10)]), &s, 100));
        assert!(may_match(&key(SkipOp::Le, &[v(10)]), &s, 100));
        assert!(!may_match(&key(SkipOp::Gt, &[v(20)]), &s, 100));
        assert!(may_match(&key(SkipOp::Ge, &[v(20)]), &s, 100));
        assert!(!may_match(&key(SkipOp::In, &[v(1), v(30)]), &s, 100));
        assert!(may_match(&key(SkipOp::In, &[v(1), v(15)]), &s, 100));
        assert!(!may_match(&key(SkipOp::Eq, &[Value::Null]), &s, 100));
        assert!(!may_match(&key(SkipOp::IsNull, &[]), &s, 100));
        assert!(may_match(&key(SkipOp::IsNull, &[]), &stats(10, 20, 1), 100));
        assert!(!may_match(
            &key(SkipOp::IsNotNull, &[]),
            &stats(10, 20, 100),
            100
        ));
        assert!(!may_match(
            &key(SkipOp::Gt, &[v(0)]),
            &stats(10, 20, 100),
            100
        ));
        // Incomparable values never rule a group out.
        assert!(may_match(
            &key(SkipOp::Eq, &[Value::Text("x".into())]),
            &s,
            100
        ));
    }

    #[test]
    fn floats_and_strings_compare_as_postgresql_orders_them() {
        let s = ColumnStats {
            null_count: 0,
            min: Some(Bound::Float(1.0)),
            max: Some(Bound::Float(f64::NAN)),
        };
        assert!(may_match(&key(SkipOp::Gt, &[Value::Float8(1e300)]), &s, 5));
        assert!(may_match(
            &key(SkipOp::Eq, &[Value::Float8(f64::NAN)]),
            &s,
            5
        ));
        assert!(!may_match(&key(SkipOp::Lt, &[Value::Float8(1.0)]), &s, 5));
        let t = ColumnStats {
            null_count: 0,
            min: Some(Bound::Bytes(b"b".to_vec())),
            max: Some(Bound::Bytes(b"d".to_vec())),
        };
        assert!(!may_match(
            &key(SkipOp::Eq, &[Value::Text("a".into())]),
            &t,
            5
        ));
        assert!(may_match(
            &key(SkipOp::Eq, &[Value::Text("c".into())]),
            &t,
            5
        ));
        assert!(!may_match(
            &key(SkipOp::Gt, &[Value::Text("d".into())]),
            &t,
            5
        ));
    }
}
