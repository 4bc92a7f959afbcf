//! Index scan: TIDs from a btree, tuples from the heap.
//!
//! The plan gives the scan's conditions as [`IndexKey`]s whose values are
//! expressions, evaluated once when the scan starts (PostgreSQL's *runtime
//! keys*: a SubPlan re-executes the scan with its parameters substituted).
//! The values then become encoded bounds (`tusk_storage::btree::ScanBounds`):
//! the equalities of the leading key columns form a prefix, the ranges on
//! the next column narrow it, and when a column has several conditions the
//! tightest bound of each side wins. A value converts to the key column's
//! type exactly: an integer of a wider type that lies outside the column's
//! range makes its condition always true or always false (`int4col <
//! 10000000000`), a NULL value makes every comparison false. A scan whose
//! conditions cannot all hold reads nothing.
//!
//! The heap tuples are checked against the snapshot (the index has entries
//! for every version; dead and uncommitted rows are never returned), and
//! the rest of the WHERE clause runs as the scan's filter.

use crate::deform::{Deformer, Layout};
use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::operator::{ExecContext, Operator, RowOrderFilter};
use crate::plan::{IndexKey, IndexKeyOp, NodeKind, Plan};
use crate::scan::scan_filter;
use crate::value::Value;
use crate::vector::{Batch, BATCH_SIZE};
use std::cmp::Ordering;
use std::ops::Bound;
use tusk_storage::btree::{Cursor, Datum, Decimal, Direction, Index, KeyType, ScanBounds};
use tusk_storage::heap::{self, Tid, Visibility};
use tusk_storage::DataType;

/// The database and the snapshot are the context's (`ctx.db`,
/// `ctx.snapshot`): the operator takes no references of its own on the
/// `Arc<Database>` that every session's queries share.
pub struct IndexScan {
    oid: u32,
    deform: Deformer,
    /// `None`: the conditions cannot all hold.
    cursor: Option<Cursor>,
    tids: Vec<Tid>,
    filter: RowOrderFilter,
    ctx: ExecContext,
    id: usize,
}

impl IndexScan {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<IndexScan> {
        let NodeKind::IndexScan {
            oid,
            table_types,
            columns,
            with_tid,
            keys,
            backward,
            filter,
            defs,
            deform,
            ..
        } = &plan.kind
        else {
            unreachable!()
        };
        let cursor = {
            let (def, table) = &**defs;
            let index = Index::open(&ctx.db, def, table);
            let dir = if *backward {
                Direction::Backward
            } else {
                Direction::Forward
            };
            match scan_bounds(&index, keys, &ctx.params)? {
                Some(bounds) => Some(index.scan(bounds, dir)?),
                None => None,
            }
        };
        Ok(IndexScan {
            oid: *oid,
            deform: Deformer::with_layout(
                deform.get(|| Layout::new(table_types, columns, *with_tid)),
            )
            .detoasting(ctx.db.clone()),
            cursor,
            // Grows to a batch in a range scan; a lookup needs one.
            tids: Vec::new(),
            filter: RowOrderFilter::new(filter.clone()),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn read_batch(&mut self) -> Result<Option<Batch>> {
        let Some(cursor) = &mut self.cursor else {
            return Ok(None);
        };
        self.tids.clear();
        let db = &self.ctx.db;
        if !cursor.next_batch(&db.pool, &mut self.tids, BATCH_SIZE)? {
            self.cursor = None;
        }
        let mut cols = self.deform.columns(self.tids.len());
        let mut rows = 0usize;
        let mut vis = Visibility::new(&db.txn, self.ctx.snapshot.clone());
        let deform = &self.deform;
        heap::fetch(&db.pool, self.oid, &self.tids, &mut vis, |tid, t| {
            rows += 1;
            deform.push(&mut cols, t, tid);
        })?;
        if let Some(e) = self.deform.take_error() {
            return Err(e.into());
        }
        Ok(Some(Batch::new(cols, rows)))
    }
}

impl Operator for IndexScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.filter.raise_held()?;
        while let Some(b) = self.read_batch()? {
            if let Some(b) = scan_filter(b, &mut self.filter, &self.ctx, self.id)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}

/// A value converted to a key column's type.
enum KeyValue<'a> {
    Value(Datum<'a>),
    /// Greater than every value of the column's type.
    AboveAll,
    /// Less than every value of the column's type.
    BelowAll,
    /// SQL NULL: no comparison with it holds.
    Null,
}

/// A key's value when it needs no evaluation: an integer constant (what a
/// literal becomes) or a parameter (`params`), whose type was checked when
/// it was bound.
fn direct_value<'v>(e: &'v Expr, params: &'v [Value]) -> Option<&'v Value> {
    match e {
        Expr::Const { value, ty }
            if matches!(
                (value, ty),
                (Value::Int2(_), DataType::Int2)
                    | (Value::Int4(_), DataType::Int4)
                    | (Value::Int8(_), DataType::Int8)
            ) =>
        {
            Some(value)
        }
        Expr::Param { index, .. } => params.get(*index),
        _ => None,
    }
}

/// The bounds of the entries that satisfy `keys`; `None` when none can.
/// A key's `$n` is `params[n - 1]` (`ExecContext::params`).
pub fn scan_bounds(
    index: &Index<'_>,
    keys: &[IndexKey],
    params: &[Value],
) -> Result<Option<ScanBounds>> {
    let enc = index.encoder();
    // A lookup by an integer on the leading column (pgbench's): its one
    // value is the prefix.
    if let [key] = keys {
        if let (IndexKeyOp::Eq, 0, Some(v @ (Value::Int2(_) | Value::Int4(_) | Value::Int8(_)))) =
            (key.op, key.column, direct_value(&key.value, params))
        {
            return Ok(match to_key(enc.columns()[0].0, v, &[])? {
                KeyValue::Value(d) => Some(
                    ScanBounds::build(enc, &[d], None)
                        .map_err(|e| ExecError::new(e.to_string()))?,
                ),
                // Out of the column's range: no key equals it.
                _ => None,
            });
        }
    }
    let values: Vec<Value> = keys
        .iter()
        .map(|k| match (k.op, &k.value) {
            (IndexKeyOp::IsNull, _) => Ok(Value::Null),
            (_, e) => match direct_value(e, params) {
                Some(v) => Ok(v.clone()),
                None => {
                    let e = if params.is_empty() {
                        std::borrow::Cow::Borrowed(e)
                    } else {
                        let mut e = e.clone();
                        e.substitute_params(&|i| params.get(i).cloned());
                        std::borrow::Cow::Owned(e)
                    };
                    let v = e.eval(&Batch::new(vec![], 1))?;
                    Ok(v.value_as(0, e.data_type()))
                }
            },
        })
        .collect::<Result<_>>()?;
    let mut digits: Vec<Vec<u8>> = values.iter().map(|_| Vec::new()).collect();
    for (v, d) in values.iter().zip(&mut digits) {
        if let Value::Numeric(n) = v {
            if n.to_storage_parts().is_none() {
                *d = decimal_digits(&n.to_string());
            }
        }
    }
    let converted: Vec<KeyValue<'_>> = keys
        .iter()
        .zip(values.iter().zip(&digits))
        .map(|(k, (v, d))| {
            let ty = enc.columns()[k.column].0;
            if k.op == IndexKeyOp::IsNull {
                Ok(KeyValue::Value(Datum::Null))
            } else {
                to_key(ty, v, d)
            }
        })
        .collect::<Result<_>>()?;

    // Equalities on the leading columns: each must have one value.
    let mut eq: Vec<Datum<'_>> = Vec::new();
    loop {
        let col = eq.len();
        let mut value: Option<Datum<'_>> = None;
        let mut any = false;
        for (k, v) in keys.iter().zip(&converted) {
            if k.column != col || !matches!(k.op, IndexKeyOp::Eq | IndexKeyOp::IsNull) {
                continue;
            }
            any = true;
            let KeyValue::Value(d) = v else {
                return Ok(None);
            };
            match value {
                None => value = Some(*d),
                Some(prev) => {
                    let (a, b) = (encode_one(index, &eq, prev)?, encode_one(index, &eq, *d)?);
                    if a != b {
                        return Ok(None);
                    }
                }
            }
        }
        if !any {
            break;
        }
        eq.push(value.expect("a value for an equality"));
    }

    // Ranges on the next column.
    let range_col = eq.len();
    let mut lo: Bound<Vec<u8>> = Bound::Unbounded;
    let mut hi: Bound<Vec<u8>> = Bound::Unbounded;
    let mut ranged = false;
    for (k, v) in keys.iter().zip(&converted) {
        if matches!(k.op, IndexKeyOp::Eq | IndexKeyOp::IsNull) {
            if k.column >= range_col {
                return Err(ExecError::new("index key out of order"));
            }
            continue;
        }
        if k.column != range_col {
            return Err(ExecError::new(
                "an index range condition must follow the equalities",
            ));
        }
        let upper = matches!(k.op, IndexKeyOp::Lt | IndexKeyOp::Le);
        let range = match v {
            KeyValue::Null => return Ok(None),
            // `col < huge`: every non-NULL value; `col > huge`: none.
            KeyValue::AboveAll if upper => (Bound::Unbounded, Bound::Unbounded),
            KeyValue::BelowAll if !upper => (Bound::Unbounded, Bound::Unbounded),
            KeyValue::AboveAll | KeyValue::BelowAll => return Ok(None),
            KeyValue::Value(d) => match k.op {
                IndexKeyOp::Lt => (Bound::Unbounded, Bound::Excluded(*d)),
                IndexKeyOp::Le => (Bound::Unbounded, Bound::Included(*d)),
                IndexKeyOp::Gt => (Bound::Excluded(*d), Bound::Unbounded),
                _ => (Bound::Included(*d), Bound::Unbounded),
            },
        };
        let b =
            ScanBounds::build(enc, &eq, Some(range)).map_err(|e| ExecError::new(e.to_string()))?;
        if !ranged || lower_cmp(&b.lo, &lo) == Ordering::Greater {
            lo = b.lo;
        }
        if !ranged || upper_cmp(&b.hi, &hi) == Ordering::Less {
            hi = b.hi;
        }
        ranged = true;
    }
    if !ranged {
        return Ok(Some(
            ScanBounds::build(enc, &eq, None).map_err(|e| ExecError::new(e.to_string()))?,
        ));
    }
    Ok(Some(ScanBounds { lo, hi }))
}

/// The encoding of the prefix `eq` followed by `d` (to compare values).
fn encode_one(index: &Index<'_>, eq: &[Datum<'_>], d: Datum<'_>) -> Result<Vec<u8>> {
    let mut v = eq.to_vec();
    v.push(d);
    index
        .encoder()
        .encode_prefix(&v)
        .map_err(|e| ExecError::new(e.to_string()))
}

/// A bound as a position between keys: the prefix, and whether the
/// position lies before every key that starts with it (-1) or after (+1).
/// `None` for an unbounded end.
fn position(b: &Bound<Vec<u8>>, upper: bool) -> Option<(&[u8], i8)> {
    match b {
        Bound::Unbounded => None,
        // A lower bound takes keys from the prefix on; an exclusive one
        // skips every key that starts with it.
        Bound::Included(p) if !upper => Some((p, -1)),
        Bound::Excluded(p) if !upper => Some((p, 1)),
        // An upper bound takes keys up to those that start with the prefix
        // (inclusive) or up to the prefix (exclusive).
        Bound::Included(p) => Some((p, 1)),
        Bound::Excluded(p) => Some((p, -1)),
    }
}

fn cmp_positions(a: (&[u8], i8), b: (&[u8], i8)) -> Ordering {
    let n = a.0.len().min(b.0.len());
    match a.0[..n].cmp(&b.0[..n]) {
        Ordering::Equal => {}
        o => return o,
    }
    // One is a prefix of the other: the longer one's keys lie within the
    // shorter one's, before its +1 position and after its -1 position.
    match a.0.len().cmp(&b.0.len()) {
        Ordering::Equal => a.1.cmp(&b.1),
        Ordering::Less => {
            if a.1 < 0 {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        Ordering::Greater => {
            if b.1 < 0 {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
    }
}

/// Orders lower bounds by how much they exclude (unbounded is least).
fn lower_cmp(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> Ordering {
    match (position(a, false), position(b, false)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => cmp_positions(x, y),
    }
}

/// Orders upper bounds by position (unbounded is greatest).
fn upper_cmp(a: &Bound<Vec<u8>>, b: &Bound<Vec<u8>>) -> Ordering {
    match (position(a, true), position(b, true)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => cmp_positions(x, y),
    }
}

/// The decimal digits of a numeric's text form (`-12.5e3` has none: the
/// text form of a finite numeric is plain), for [`Decimal::Finite`]: the
/// digits without sign and point.
fn decimal_digits(text: &str) -> Vec<u8> {
    text.bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect()
}

/// `v` as a value of key type `ty`; `digits` holds the digits of a numeric
/// too large for the 128-bit form.
fn to_key<'a>(ty: KeyType, v: &'a Value, digits: &'a [u8]) -> Result<KeyValue<'a>> {
    let int = |x: i64, min: i64, max: i64, make: fn(i64) -> Datum<'a>| {
        if x < min {
            KeyValue::BelowAll
        } else if x > max {
            KeyValue::AboveAll
        } else {
            KeyValue::Value(make(x))
        }
    };
    let integer = match v {
        Value::Int2(x) => Some(*x as i64),
        Value::Int4(x) => Some(*x as i64),
        Value::Int8(x) => Some(*x),
        _ => None,
    };
    Ok(match (ty, v) {
        (_, Value::Null) => KeyValue::Null,
        (KeyType::Int2, _) if integer.is_some() => {
            int(integer.unwrap(), i16::MIN as i64, i16::MAX as i64, |x| {
                Datum::Int2(x as i16)
            })
        }
        (KeyType::Int4, _) if integer.is_some() => {
            int(integer.unwrap(), i32::MIN as i64, i32::MAX as i64, |x| {
                Datum::Int4(x as i32)
            })
        }
        (KeyType::Int8, _) if integer.is_some() => KeyValue::Value(Datum::Int8(integer.unwrap())),
        (KeyType::Bool, Value::Bool(b)) => KeyValue::Value(Datum::Bool(*b)),
        (KeyType::Float4, Value::Float4(x)) => KeyValue::Value(Datum::Float4(*x)),
        (KeyType::Float8, Value::Float8(x)) => KeyValue::Value(Datum::Float8(*x)),
        (KeyType::Float8, Value::Float4(x)) => KeyValue::Value(Datum::Float8(*x as f64)),
        (KeyType::Numeric, Value::Numeric(n)) => KeyValue::Value(match n.to_storage_parts() {
            Some((_, u16::MAX)) => Datum::Decimal(Decimal::NaN),
            Some((_, s)) if s == u16::MAX - 1 => Datum::Decimal(Decimal::Infinity),
            Some((_, s)) if s == u16::MAX - 2 => Datum::Decimal(Decimal::NegInfinity),
            Some((u, s)) => Datum::Numeric(u, s),
            None => {
                let text = n.to_string();
                let point = text.find('.').unwrap_or(text.len());
                let int_digits = text[..point].bytes().filter(u8::is_ascii_digit).count();
                Datum::Decimal(Decimal::Finite {
                    negative: text.starts_with('-'),
                    digits,
                    exponent: int_digits as i32,
                })
            }
        }),
        (KeyType::Text | KeyType::Bpchar, Value::Text(s)) => {
            KeyValue::Value(Datum::Text(s.as_bytes()))
        }
        (KeyType::Date, Value::Date(d)) => KeyValue::Value(Datum::Int4(*d)),
        (KeyType::Time, Value::Time(t))
        | (KeyType::Timestamp, Value::Timestamp(t))
        | (KeyType::TimestampTz, Value::TimestampTz(t)) => KeyValue::Value(Datum::Int8(*t)),
        (KeyType::Interval, Value::Interval(iv)) => {
            KeyValue::Value(Datum::Interval(iv.micros, iv.days, iv.months))
        }
        (KeyType::Bytea, Value::Bytea(b)) => KeyValue::Value(Datum::Text(b)),
        (KeyType::Uuid, Value::Uuid(u)) => KeyValue::Value(Datum::Uuid(*u)),
        (ty, v) => {
            return Err(ExecError::new(format!(
                "an index key of type {ty:?} cannot be compared with {v:?}"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(v: &[u8], inclusive: bool) -> Bound<Vec<u8>> {
        if inclusive {
            Bound::Included(v.to_vec())
        } else {
            Bound::Excluded(v.to_vec())
        }
    }

    #[test]
    fn bounds_order_by_position() {
        // Lower bounds: excluding a prefix skips past all its keys.
        assert_eq!(
            lower_cmp(&pos(b"ab", false), &pos(b"abc", true)),
            Ordering::Greater
        );
        assert_eq!(
            lower_cmp(&pos(b"ab", true), &pos(b"abc", true)),
            Ordering::Less
        );
        assert_eq!(
            lower_cmp(&pos(b"ab", true), &pos(b"ab", false)),
            Ordering::Less
        );
        assert_eq!(
            lower_cmp(&Bound::Unbounded, &pos(b"", true)),
            Ordering::Less
        );
        // Upper bounds: an inclusive prefix reaches past its longer keys.
        assert_eq!(
            upper_cmp(&pos(b"ab", true), &pos(b"abc", false)),
            Ordering::Greater
        );
        assert_eq!(
            upper_cmp(&pos(b"ab", false), &pos(b"abc", true)),
            Ordering::Less
        );
        assert_eq!(
            upper_cmp(&pos(b"b", false), &pos(b"abc", true)),
            Ordering::Greater
        );
        assert_eq!(
            upper_cmp(&Bound::Unbounded, &pos(b"zz", true)),
            Ordering::Greater
        );
    }

    #[test]
    fn numeric_digits_of_text() {
        assert_eq!(decimal_digits("-12.50"), vec![1, 2, 5, 0]);
    }
}
