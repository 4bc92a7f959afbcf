//! `x [NOT] IN (a, b, ...)` as one node.
//!
//! Three-valued, as PostgreSQL's `x = ANY (ARRAY[...])`: true when an item
//! equals `x`; otherwise NULL when `x` or some item is NULL; otherwise false.
//! `NOT IN` negates that (NULL stays NULL).
//!
//! A list of constants (PostgreSQL accepts a million) becomes an [`InSet`]
//! when the node is built: a hash set for integer types, else the distinct
//! values sorted once and binary-searched with the comparison the `=`
//! operator uses (so `bpchar` ignores trailing blanks and NaN equals NaN).
//! Short or non-constant lists compare `x` with every item; all items are
//! evaluated for every active row, as PostgreSQL builds the whole array.

use super::compare::{cmp_rows, compare, CmpOp, TextOrder};
use super::{bools, live, Expr};
use crate::error::Result;
use crate::vector::{physical, Batch, Data, Physical, Vector};
use std::cmp::Ordering;
use std::collections::HashSet;
use tusk_storage::DataType;

/// Lists shorter than this are compared item by item.
const SET_MIN_ITEMS: usize = 8;

/// The constants of an IN list, ready to probe.
#[derive(Debug, PartialEq)]
pub struct InSet {
    /// Integer lists: the values widened to i64.
    ints: Option<HashSet<i64>>,
    /// Other lists: the distinct non-NULL values, sorted.
    sorted: Vector,
    /// Whether the list holds a NULL.
    has_null: bool,
    order: TextOrder,
}

impl InSet {
    /// The set of `list` when every item is a constant of type `ty` and the
    /// list is long enough to be worth it.
    pub fn build(ty: DataType, list: &[Expr]) -> Option<InSet> {
        if list.len() < SET_MIN_ITEMS {
            return None;
        }
        let p = physical(ty);
        let mut values = Vector::with_capacity(ty, list.len());
        let mut has_null = false;
        for e in list {
            let Expr::Const { value, .. } = e else {
                return None;
            };
            match value.data_type() {
                None => has_null = true,
                Some(vt) if physical(vt) == p => values.push_value(value),
                Some(_) => return None,
            }
        }
        let order = TextOrder::of(ty);
        let ints = match &values.data {
            Data::Int2(v) => Some(v.iter().map(|&x| x as i64).collect()),
            Data::Int4(v) => Some(v.iter().map(|&x| x as i64).collect()),
            Data::Int8(v) => Some(v.iter().copied().collect()),
            _ => None,
        };
        let sorted = if ints.is_some() {
            Vector::empty(ty)
        } else {
            let mut idx: Vec<u32> = (0..values.len() as u32).collect();
            idx.sort_by(|&a, &b| cmp_rows(&values, a as usize, &values, b as usize, order));
            idx.dedup_by(|a, b| {
                cmp_rows(&values, *a as usize, &values, *b as usize, order) == Ordering::Equal
            });
            values.gather(&idx)
        };
        Some(InSet {
            ints,
            sorted,
            has_null,
            order,
        })
    }

    /// Whether row `i` of `v` (not NULL) is in the set.
    fn contains(&self, v: &Vector, i: usize) -> bool {
        if let Some(ints) = &self.ints {
            let x = match &v.data {
                Data::Int2(a) => a[i] as i64,
                Data::Int4(a) => a[i] as i64,
                Data::Int8(a) => a[i],
                _ => return false,
            };
            return ints.contains(&x);
        }
        if self.sorted.physical() != v.physical() {
            return false;
        }
        let (mut lo, mut hi) = (0, self.sorted.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match cmp_rows(&self.sorted, mid, v, i, self.order) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return true,
            }
        }
        false
    }
}

pub(super) fn eval_in(
    arg: &Expr,
    list: &[Expr],
    negated: bool,
    set: Option<&InSet>,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let v = arg.eval_active(batch, active)?;
    let mut found = vec![false; n];
    let mut unknown = vec![false; n];
    match set {
        Some(s) => {
            let int_ok = s.ints.is_none()
                || matches!(
                    v.physical(),
                    Physical::Int2 | Physical::Int4 | Physical::Int8
                );
            debug_assert!(int_ok);
            for i in 0..n {
                if v.is_null(i) {
                    unknown[i] = true;
                } else if live(active, i) && s.contains(&v, i) {
                    found[i] = true;
                } else {
                    unknown[i] = s.has_null;
                }
            }
        }
        None => {
            let aty = arg.data_type();
            for item in list {
                let iv = item.eval_active(batch, active)?;
                let eq = compare(
                    CmpOp::Eq,
                    &v,
                    &iv,
                    TextOrder::between(aty, item.data_type()),
                )?;
                let (b, nulls) = bools(&eq)?;
                for i in 0..n {
                    if nulls.is_some_and(|m| m[i]) {
                        unknown[i] = true;
                    } else if b[i] {
                        found[i] = true;
                    }
                }
            }
        }
    }
    let out: Vec<bool> = found.iter().map(|&f| f != negated).collect();
    let nulls: Vec<bool> = (0..n).map(|i| !found[i] && unknown[i]).collect();
    Ok(Vector::new(Data::Bool(out), Some(nulls)))
}
