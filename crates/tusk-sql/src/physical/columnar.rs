//! Scans of columnar tables.
//!
//! A columnar table is read by a sequential scan (EXPLAIN shows `Seq Scan`,
//! or `Parallel Seq Scan`, and under ANALYZE a `Columnar:` line with the row
//! groups read and skipped) that carries a [`ColumnarSpec`]: the conjuncts
//! of its filter that row group statistics can decide, as [`SkipKey`]s —
//! `column op value` for `=`, `<`, `<=`, `>`, `>=` (BETWEEN is two of
//! them), `column IN (values)` and `column IS [NOT] NULL`, where the value
//! is known when the scan starts and compares in the column's own order
//! (see `scan::column_operand`). The whole filter still runs on every row
//! of the groups that are read.
//!
//! Costs follow the heap's formula over the pages the scan reads: the row
//! group pages scaled by the share of the row width its columns make up
//! (a column it does not read is never fetched), plus the delta's pages.
//! The filter's selectivity comes from the table's statistics, as a heap
//! scan's does (ANALYZE samples columnar tables: `analyze_columnar`).

use super::cost::{width_of, CPU_OPERATOR_COST, CPU_TUPLE_COST, SEQ_PAGE_COST};
use super::scan::{column_operand, known_at_start};
use super::{cost, Phys, Planner, Result};
use crate::logical::ColumnId;
use tusk_exec::expr::CmpOp;
use tusk_exec::plan::{ColumnarSpec, SkipKey, SkipOp};
use tusk_exec::{Estimate, Expr, NodeKind};
use tusk_storage::TableDef;

impl Planner<'_> {
    /// The scan of columnar `table` producing `out` (its attributes `attrs`
    /// and, when `with_tid`, row ids) under conjuncts `filters`.
    pub(super) fn columnar_scan(
        &mut self,
        table: &TableDef,
        alias: &str,
        attrs: Vec<usize>,
        out: Vec<ColumnId>,
        filters: Vec<Expr>,
        with_tid: bool,
    ) -> Result<Phys> {
        let (pages, tuples) = self.table_size(table)?;
        let types = table.column_types();
        let all_width = f64::from(width_of(&types)).max(1.0);
        let read: Vec<_> = attrs.iter().map(|&a| types[a]).collect();
        let share = (f64::from(width_of(&read)) / all_width).clamp(0.05, 1.0);
        let pages = (pages * share).max(1.0);
        let sel = self.conjunct_selectivity(&filters);
        let rows = (tuples * sel).max(1.0).round();
        let total = pages * SEQ_PAGE_COST
            + tuples * CPU_TUPLE_COST
            + filters.len() as f64 * CPU_OPERATOR_COST * tuples;
        let mut skip = Vec::new();
        for f in &filters {
            self.skip_keys(f, &out, &mut skip)?;
        }
        let filter = cost::ordered_and(filters)
            .map(|p| self.remap(&p, &out))
            .transpose()?;
        Ok(self.node(
            NodeKind::SeqScan {
                table: table.name.clone(),
                alias: alias.to_string(),
                oid: table.oid,
                table_types: types,
                columns: attrs,
                with_tid,
                filter,
                parallel: false,
                columnar: Some(Box::new(ColumnarSpec {
                    skip,
                    join_keys: Vec::new(),
                })),
            },
            vec![],
            out,
            Estimate {
                startup_cost: 0.0,
                total_cost: total,
                rows,
                width: 0,
            },
        ))
    }

    /// Adds the skip keys conjunct `f` (over column ids) gives, with
    /// columns as positions of `out`.
    fn skip_keys(&self, f: &Expr, out: &[ColumnId], keys: &mut Vec<SkipKey>) -> Result<()> {
        let ty_of = |c: ColumnId| self.cols.ty(c);
        let outer = |c: ColumnId| self.params.iter().any(|m| m.contains_key(&c));
        let position = |e: &Expr| -> Option<usize> {
            let (col, _) = column_operand(e, &ty_of)?;
            out.iter().position(|&c| c == col)
        };
        let mut add = |column: usize, op: SkipOp, values: Vec<&Expr>| -> Result<()> {
            let values = values
                .into_iter()
                .map(|v| self.remap(v, &[]))
                .collect::<Result<_>>()?;
            keys.push(SkipKey { column, op, values });
            Ok(())
        };
        match f {
            Expr::And(terms) => {
                for t in terms {
                    self.skip_keys(t, out, keys)?;
                }
            }
            Expr::Cmp { op, left, right } => {
                let (op, column, value) = match (position(left), position(right)) {
                    (Some(c), _) => (*op, c, right.as_ref()),
                    (None, Some(c)) => (op.commuted(), c, left.as_ref()),
                    _ => return Ok(()),
                };
                let op = match op {
                    CmpOp::Eq => SkipOp::Eq,
                    CmpOp::Lt => SkipOp::Lt,
                    CmpOp::Le => SkipOp::Le,
                    CmpOp::Gt => SkipOp::Gt,
                    CmpOp::Ge => SkipOp::Ge,
                    _ => return Ok(()),
                };
                if known_at_start(value, &outer) {
                    add(column, op, vec![value])?;
                }
            }
            Expr::InList {
                arg,
                list,
                negated: false,
                ..
            } => {
                if let Some(column) = position(arg) {
                    if list.iter().all(|v| known_at_start(v, &outer)) {
                        add(column, SkipOp::In, list.iter().collect())?;
                    }
                }
            }
            Expr::IsNull { arg, negated } => {
                if let Some(column) = position(arg) {
                    let op = if *negated {
                        SkipOp::IsNotNull
                    } else {
                        SkipOp::IsNull
                    };
                    add(column, op, Vec::new())?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}
