//! Scans: a table's rows by a sequential scan or an index scan, and table
//! functions, with the filters placed directly on them.
//!
//! A scan reads only the attributes some expression of the statement uses
//! (column ids are unique per table reference, so "used anywhere" is exact
//! enough). An index scan is chosen when conjuncts `column op constant`
//! bound an indexed integer column and its estimated cost beats the
//! sequential scan's, as in PostgreSQL's `btcostestimate` with default
//! selectivities; the remaining conjuncts stay a filter on the scan.

use super::cost::{
    flat, selectivity, CPU_INDEX_TUPLE_COST, CPU_OPERATOR_COST, CPU_TUPLE_COST, DISABLE_COST,
    RANDOM_PAGE_COST, SEQ_PAGE_COST,
};
use super::{cost, Phys, Planner, Result};
use crate::logical::{and_all, ColumnId, Logical};
use std::ops::Bound;
use tusk_exec::expr::CmpOp;
use tusk_exec::{Estimate, Expr, NodeKind, Value};
use tusk_storage::{DataType, TableDef};

impl Planner<'_> {
    /// Plans a Get or TableFunc with conjuncts `filters` over its columns.
    pub(crate) fn scan(&mut self, l: &Logical, filters: Vec<Expr>) -> Result<Phys> {
        let Logical::Get {
            table,
            alias,
            cols,
            tid,
        } = l
        else {
            let layout = l.output();
            let f = cost::ordered_and(filters)
                .map(|p| self.remap(&p, &layout))
                .transpose()?;
            return self.function_scan(l, f);
        };
        // Attributes to read: those used anywhere (and at least none).
        let attrs: Vec<usize> = (0..cols.len())
            .filter(|&i| self.used.contains(&cols[i]))
            .collect();
        let mut out: Vec<ColumnId> = attrs.iter().map(|&i| cols[i]).collect();
        if tid.is_some() {
            // Rows to change: a plain sequential scan that also yields TIDs.
            out.push(tid.unwrap());
        }
        let pages = self.db.nblocks(table.oid)? as f64;
        let tuples = tusk_storage::heap::estimate_tuples(&self.db.pool, table.oid, pages as u32)?;
        let sel: f64 = filters.iter().map(selectivity).product();
        let rows = (tuples * sel).max(1.0).round();
        let qual_cost = filters.len() as f64 * CPU_OPERATOR_COST * tuples;
        let seq_cost = pages * SEQ_PAGE_COST + tuples * CPU_TUPLE_COST + qual_cost;
        if tid.is_none() {
            if let Some(p) = self.index_scan(
                table, alias, cols, &attrs, &out, &filters, tuples, pages, seq_cost,
            )? {
                return Ok(p);
            }
        }
        let filter = cost::ordered_and(filters)
            .map(|p| self.remap(&p, &out))
            .transpose()?;
        let disabled = if self.settings.enable_seqscan {
            0.0
        } else {
            DISABLE_COST
        };
        Ok(self.node(
            NodeKind::SeqScan {
                table: table.name.clone(),
                alias: alias.clone(),
                oid: table.oid,
                table_types: table.column_types(),
                columns: attrs,
                with_tid: tid.is_some(),
                filter,
                parallel: false,
            },
            vec![],
            out,
            Estimate {
                startup_cost: disabled,
                total_cost: disabled + seq_cost,
                rows,
                width: 0,
            },
        ))
    }

    /// The cheapest index scan for `filters`, if one beats `seq_cost` (or
    /// sequential scans are disabled).
    #[allow(clippy::too_many_arguments)]
    fn index_scan(
        &self,
        table: &TableDef,
        alias: &str,
        cols: &[ColumnId],
        attrs: &[usize],
        out: &[ColumnId],
        filters: &[Expr],
        tuples: f64,
        pages: f64,
        seq_cost: f64,
    ) -> Result<Option<Phys>> {
        let catalog = self.db.catalog();
        let mut best: Option<(f64, Phys)> = None;
        for index in catalog.indexes_of(table.oid) {
            let key_id = cols[index.column];
            let key_ty = self.cols.ty(key_id);
            let (mut lo, mut hi) = (i64::MIN as i128, i64::MAX as i128);
            let (mut used, mut rest) = (Vec::new(), Vec::new());
            let (mut eq, mut lower, mut upper) = (false, false, false);
            for f in filters {
                match index_condition(f, key_id) {
                    Some((op, v)) => {
                        let v = v as i128;
                        match op {
                            CmpOp::Eq => {
                                lo = lo.max(v);
                                hi = hi.min(v);
                                eq = true;
                            }
                            CmpOp::Lt => (hi, upper) = (hi.min(v - 1), true),
                            CmpOp::Le => (hi, upper) = (hi.min(v), true),
                            CmpOp::Gt => (lo, lower) = (lo.max(v + 1), true),
                            CmpOp::Ge => (lo, lower) = (lo.max(v), true),
                            CmpOp::Ne => unreachable!("not an index condition"),
                        }
                        used.push(Expr::Cmp {
                            op,
                            left: Box::new(Expr::Column {
                                index: 0,
                                ty: key_ty,
                            }),
                            right: Box::new(Expr::Const {
                                value: Value::Int8(v as i64),
                                ty: DataType::Int8,
                            }),
                        });
                    }
                    None => rest.push(f.clone()),
                }
            }
            if used.is_empty() {
                continue;
            }
            let sel = if eq || (lower && upper) {
                0.005
            } else {
                0.3333
            };
            let tuples = tuples.max(1.0);
            let rows = (tuples * sel).max(1.0);
            let leaf_pages = (tuples / tusk_storage::btree::LEAF_CAPACITY as f64 / 0.9).ceil();
            let (mut level_pages, mut height) = (leaf_pages, 0.0);
            while level_pages > 1.0 {
                level_pages =
                    (level_pages / (tusk_storage::btree::INTERNAL_CAPACITY as f64 * 0.7)).ceil();
                height += 1.0;
            }
            let disabled = if self.settings.enable_indexscan {
                0.0
            } else {
                DISABLE_COST
            };
            let startup = disabled
                + tuples.log2().ceil() * CPU_OPERATOR_COST
                + (height + 1.0) * 50.0 * CPU_OPERATOR_COST;
            let total = startup
                + RANDOM_PAGE_COST * (sel * leaf_pages).ceil()
                + rows * (CPU_INDEX_TUPLE_COST + CPU_OPERATOR_COST * used.len() as f64)
                + RANDOM_PAGE_COST * (sel * pages).ceil().max(1.0)
                + rows * CPU_TUPLE_COST
                + rows * CPU_OPERATOR_COST * rest.len() as f64;
            if best.as_ref().is_some_and(|(c, _)| *c <= total) {
                continue;
            }
            let cond_names = [table.columns[index.column].name.clone()];
            let cond = and_all(used).expect("at least one condition");
            let bound =
                |v: i128| Bound::Included(v.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            let (lo, hi) = if lo > hi {
                (Bound::Included(1), Bound::Included(0))
            } else {
                (bound(lo), bound(hi))
            };
            let out_rows = (tuples * sel * rest.iter().map(selectivity).product::<f64>())
                .max(1.0)
                .round();
            let filter = cost::ordered_and(rest)
                .map(|p| self.remap(&p, out))
                .transpose()?;
            let p = self.node(
                NodeKind::IndexScan {
                    table: table.name.clone(),
                    alias: alias.to_string(),
                    oid: table.oid,
                    index: index.name.clone(),
                    index_oid: index.oid,
                    table_types: table.column_types(),
                    columns: attrs.to_vec(),
                    with_tid: false,
                    lo,
                    hi,
                    index_cond: crate::explain::deparse(&cond, &cond_names),
                    filter,
                },
                vec![],
                out.to_vec(),
                Estimate {
                    startup_cost: startup,
                    total_cost: total,
                    rows: out_rows,
                    width: 0,
                },
            );
            best = Some((total, p));
        }
        let Some((cost, plan)) = best else {
            return Ok(None);
        };
        let seq_cost = seq_cost
            + if self.settings.enable_seqscan {
                0.0
            } else {
                DISABLE_COST
            };
        Ok((cost < seq_cost).then_some(plan))
    }
}

/// `col op constant` (either way round) on column id `col`, as an integer
/// bound; `None` for anything else.
fn index_condition(f: &Expr, col: ColumnId) -> Option<(CmpOp, i64)> {
    let Expr::Cmp { op, left, right } = f else {
        return None;
    };
    let constant = |e: &Expr| -> Option<i64> {
        let e = match e {
            Expr::Cast {
                arg,
                to: DataType::Int4 | DataType::Int8,
            } => arg.as_ref(),
            e => e,
        };
        match e {
            Expr::Const {
                value: Value::Int4(v),
                ..
            } => Some(*v as i64),
            Expr::Const {
                value: Value::Int8(v),
                ..
            } => Some(*v),
            Expr::Const {
                value: Value::Int2(v),
                ..
            } => Some(*v as i64),
            _ => None,
        }
    };
    let is_col = |e: &Expr| {
        let e = match e {
            Expr::Cast {
                arg,
                to: DataType::Int8,
            } => arg.as_ref(),
            e => e,
        };
        matches!(e, Expr::Column { index, ty: DataType::Int4 | DataType::Int8 } if *index == col)
    };
    let (op, v) = if is_col(left) {
        (*op, constant(right)?)
    } else if is_col(right) {
        let flipped = match op {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => *o,
        };
        (flipped, constant(left)?)
    } else {
        return None;
    };
    (op != CmpOp::Ne).then_some((op, v))
}

/// Rows `generate_series(start, stop[, step])` yields, for constant integers.
pub(crate) fn series_rows(args: &[Expr]) -> Option<f64> {
    let v = |e: &Expr| match e {
        Expr::Const {
            value: Value::Int4(x),
            ..
        } => Some(*x as f64),
        Expr::Const {
            value: Value::Int8(x),
            ..
        } => Some(*x as f64),
        _ => None,
    };
    let start = v(args.first()?)?;
    let stop = v(args.get(1)?)?;
    let step = match args.get(2) {
        Some(s) => v(s)?,
        None => 1.0,
    };
    if step == 0.0 {
        return None;
    }
    Some((((stop - start) / step).floor() + 1.0).max(0.0))
}

#[allow(dead_code)]
fn unused(_: Estimate) -> Estimate {
    flat(1.0, 1.0, 0)
}
