//! Scans: a table's rows by a sequential scan or an index scan, and table
//! functions, with the filters placed directly on them.
//!
//! A scan reads only the attributes some expression of the statement uses
//! (column ids are unique per table reference, so "used anywhere" is exact
//! enough). An index scan is chosen when conjuncts `column op value` (a
//! constant or a parameter) or `column IS NULL` bound a prefix of an
//! index's key columns — equalities on the leading ones, a range on the
//! next — and its estimated cost beats the sequential scan's, as in
//! PostgreSQL's `btcostestimate` with default selectivities; the remaining
//! conjuncts stay a filter on the scan. Scans that feed UPDATE and DELETE
//! (with TIDs) use indexes too.

use super::cost::{
    flat, CPU_INDEX_TUPLE_COST, CPU_OPERATOR_COST, CPU_TUPLE_COST, DISABLE_COST, RANDOM_PAGE_COST,
    SEQ_PAGE_COST,
};
use super::{cost, Phys, Planner, Result};
use crate::logical::{and_all, ColumnId, Logical};
use tusk_exec::expr::CmpOp;
use tusk_exec::plan::{IndexKey, IndexKeyOp};
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
        if let Some(tid) = tid {
            // Rows to change or lock: the scan also yields their TIDs.
            out.push(*tid);
        }
        if table.is_columnar() {
            return self.columnar_scan(table, alias, attrs, out, filters, tid.is_some());
        }
        let (pages, tuples) = self.table_size(table)?;
        let sel = self.conjunct_selectivity(&filters);
        let rows = (tuples * sel).max(1.0).round();
        // Each filter's operators (`cost_qual_eval`), at least one each.
        let ops: f64 = filters.iter().map(|f| cost::eval_cost(f).max(1.0)).sum();
        let qual_cost = ops * CPU_OPERATOR_COST * tuples;
        let seq_cost = pages * SEQ_PAGE_COST + tuples * CPU_TUPLE_COST + qual_cost;
        if let Some(p) = self.index_scan(
            table,
            alias,
            cols,
            &attrs,
            &out,
            &filters,
            tid.is_some(),
            tuples,
            pages,
            seq_cost,
        )? {
            return Ok(p);
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
                columnar: None,
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
        with_tid: bool,
        tuples: f64,
        pages: f64,
        seq_cost: f64,
    ) -> Result<Option<Phys>> {
        let catalog = self.catalog.clone();
        let mut best: Option<(f64, Phys)> = None;
        for index in catalog.indexes_of(table.oid) {
            let key_ids: Vec<ColumnId> = index.columns.iter().map(|c| cols[c.attno]).collect();
            let outer = |c: ColumnId| self.params.iter().any(|m| m.contains_key(&c));
            let Some(mut access) = index_access(&key_ids, filters, |c| self.cols.ty(c), &outer)
            else {
                continue;
            };
            // Outer references (of a SubPlan) become its parameters.
            for (k, shown) in access.keys.iter_mut().zip(&mut access.shown) {
                k.value = self.remap(&k.value, &[])?;
                if let Expr::Cmp { right, .. } = shown {
                    **right = k.value.clone();
                }
            }
            // PostgreSQL's default selectivities; an equality on every
            // column of a unique index finds at most one row.
            let all_equal = access.equal_columns == key_ids.len();
            let sel = if all_equal && index.unique() {
                1.0 / tuples.max(1.0)
            } else {
                let chosen: Vec<Expr> = filters
                    .iter()
                    .filter(|f| !access.rest.contains(f))
                    .cloned()
                    .collect();
                self.conjunct_selectivity(&chosen)
            };
            let disabled = if self.settings.enable_indexscan {
                0.0
            } else {
                DISABLE_COST
            };
            let (startup, total) = index_scan_cost(
                tuples,
                pages,
                sel,
                access.keys.len(),
                access.rest.len(),
                1.0,
            );
            let (startup, total) = (startup + disabled, total + disabled);
            if best.as_ref().is_some_and(|(c, _)| *c <= total) {
                continue;
            }
            let cond_names: Vec<String> = index
                .columns
                .iter()
                .map(|c| table.columns[c.attno].name.clone())
                .collect();
            let cond = and_all(access.shown).expect("at least one condition");
            let out_rows = (tuples * sel * self.conjunct_selectivity(&access.rest))
                .max(1.0)
                .round();
            let filter = cost::ordered_and(access.rest)
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
                    with_tid,
                    keys: access.keys,
                    backward: false,
                    index_cond: crate::explain::deparse(&cond, &cond_names),
                    filter,
                    defs: std::sync::Arc::new((index.clone(), table.clone())),
                    deform: Default::default(),
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

/// PostgreSQL's `effective_cache_size` default (4 GB), in pages: what
/// repeated index scans may assume stays cached between them.
const EFFECTIVE_CACHE_PAGES: f64 = 524_288.0;

/// The (startup, total) cost of one scan of a btree over a table of
/// `tuples` rows in `pages` pages that fetches the fraction `sel` of them,
/// with `keys` index conditions and `rest` filter conjuncts, when the scan
/// is repeated `loops` times with different key values (the inner side of
/// an index nested loop): as PostgreSQL's `cost_index` and
/// `btcostestimate`, a descent of the tree, the leaf pages and heap pages
/// read at random (over repeated scans, the distinct pages the
/// Mackert–Lohman formula expects them to touch, shared among the loops),
/// and the per-tuple CPU costs.
pub(super) fn index_scan_cost(
    tuples: f64,
    pages: f64,
    sel: f64,
    keys: usize,
    rest: usize,
    loops: f64,
) -> (f64, f64) {
    let tuples = tuples.max(1.0);
    let rows = (tuples * sel).max(1.0);
    let leaf_pages = (tuples / tusk_storage::btree::LEAF_CAPACITY as f64 / 0.9).ceil();
    let (mut level_pages, mut height) = (leaf_pages, 0.0);
    while level_pages > 1.0 {
        level_pages = (level_pages / (tusk_storage::btree::INTERNAL_CAPACITY as f64 * 0.7)).ceil();
        height += 1.0;
    }
    let startup =
        tuples.log2().ceil() * CPU_OPERATOR_COST + (height + 1.0) * 50.0 * CPU_OPERATOR_COST;
    let (leaf_reads, heap_reads) = if loops > 1.0 {
        let per_scan = |n: f64, of: f64| pages_fetched(n * loops, of) / loops;
        (
            per_scan((sel * leaf_pages).ceil(), leaf_pages),
            per_scan(rows, pages),
        )
    } else {
        ((sel * leaf_pages).ceil(), (sel * pages).ceil().max(1.0))
    };
    let total = startup
        + RANDOM_PAGE_COST * (leaf_reads + heap_reads)
        + rows * (CPU_INDEX_TUPLE_COST + CPU_OPERATOR_COST * keys as f64)
        + rows * CPU_TUPLE_COST
        + rows * CPU_OPERATOR_COST * rest as f64;
    (startup, total)
}

/// The distinct pages `fetches` random fetches touch in a relation of
/// `pages` pages, with [`EFFECTIVE_CACHE_PAGES`] of cache (PostgreSQL's
/// `index_pages_fetched`, the Mackert–Lohman formula).
fn pages_fetched(fetches: f64, pages: f64) -> f64 {
    let t = pages.max(1.0);
    let b = EFFECTIVE_CACHE_PAGES;
    let n = fetches;
    let fetched = if t <= b {
        (2.0 * t * n / (2.0 * t + n)).min(t)
    } else {
        let lim = 2.0 * t * b / (2.0 * t - b);
        if n <= lim {
            2.0 * t * n / (2.0 * t + n)
        } else {
            b + (n - lim) * (t - b) / t
        }
    };
    fetched.ceil()
}

/// How an index on the columns `key_ids` (in key order) serves a scan with
/// conjuncts `filters`.
pub(super) struct IndexAccess {
    /// The scan's key conditions (see [`IndexKey`]).
    pub(super) keys: Vec<IndexKey>,
    /// The same conditions as EXPLAIN shows them (`Index Cond:`), over the
    /// key columns by position, in key column order.
    pub(super) shown: Vec<Expr>,
    /// The conjuncts left for the scan's filter.
    pub(super) rest: Vec<Expr>,
    /// Leading key columns with an equality (or IS NULL).
    pub(super) equal_columns: usize,
}

/// PostgreSQL's choice of index conditions (`match_clauses_to_index`,
/// restricted to what a btree descent can use): equalities or IS NULL on
/// the leading key columns, then comparisons on the next one; `None` when
/// no conjunct bounds the leading column.
pub(super) fn index_access(
    key_ids: &[ColumnId],
    filters: &[Expr],
    ty_of: impl Fn(ColumnId) -> DataType,
    outer: &impl Fn(ColumnId) -> bool,
) -> Option<IndexAccess> {
    let found: Vec<Option<(IndexKey, Expr)>> = filters
        .iter()
        .map(|f| index_condition(f, key_ids, &ty_of, outer))
        .collect();
    let is_eq = |k: &IndexKey| matches!(k.op, IndexKeyOp::Eq | IndexKeyOp::IsNull);
    let mut equal_columns = 0;
    while equal_columns < key_ids.len()
        && found
            .iter()
            .flatten()
            .any(|(k, _)| k.column == equal_columns && is_eq(k))
    {
        equal_columns += 1;
    }
    let used = |k: &IndexKey| {
        if is_eq(k) {
            k.column < equal_columns
        } else {
            k.column == equal_columns
        }
    };
    let mut chosen: Vec<(IndexKey, Expr)> = Vec::new();
    let mut rest = Vec::new();
    for (f, c) in filters.iter().zip(found) {
        match c {
            Some((k, shown)) if used(&k) => chosen.push((k, shown)),
            _ => rest.push(f.clone()),
        }
    }
    if chosen.is_empty() {
        return None;
    }
    // Key column order, the conditions of one column as written.
    chosen.sort_by_key(|(k, _)| k.column);
    let (keys, shown) = chosen.into_iter().unzip();
    Some(IndexAccess {
        keys,
        shown,
        rest,
        equal_columns,
    })
}

/// `key column op value` (either way round) or `key column IS NULL` for one
/// of the index's key columns, with the condition as EXPLAIN shows it (the
/// column by key position, on the left); `None` for anything else. The
/// value must be known when the scan starts (constants and the outer row's
/// columns `outer` recognises, no volatile function) and
/// of a type whose order the key's encoding follows: the column's own, or a
/// wider integer.
fn index_condition(
    f: &Expr,
    key_ids: &[ColumnId],
    ty_of: &impl Fn(ColumnId) -> DataType,
    outer: &impl Fn(ColumnId) -> bool,
) -> Option<(IndexKey, Expr)> {
    // The key position of a column-side operand, and the column's type.
    let key_column = |e: &Expr| -> Option<(usize, DataType)> {
        let (col, ty) = column_operand(e, ty_of)?;
        Some((key_ids.iter().position(|&k| k == col)?, ty))
    };
    let runtime_value = |e: &Expr| known_at_start(e, outer);
    let column_expr = |pos: usize, ty: DataType| Expr::Column { index: pos, ty };
    match f {
        Expr::IsNull {
            arg,
            negated: false,
        } => {
            let (pos, ty) = match arg.as_ref() {
                Expr::Column { .. } => key_column(arg)?,
                _ => return None,
            };
            let key = IndexKey {
                column: pos,
                op: IndexKeyOp::IsNull,
                value: Expr::Const {
                    value: Value::Null,
                    ty,
                },
            };
            let shown = Expr::IsNull {
                arg: Box::new(column_expr(pos, ty)),
                negated: false,
            };
            Some((key, shown))
        }
        Expr::Cmp { op, left, right } => {
            let (op, (pos, ty), value) = if let Some(k) = key_column(left) {
                (*op, k, right.as_ref())
            } else {
                let flipped = op.commuted();
                (flipped, key_column(right)?, left.as_ref())
            };
            if !runtime_value(value) {
                return None;
            }
            let key_op = match op {
                CmpOp::Eq => IndexKeyOp::Eq,
                CmpOp::Lt => IndexKeyOp::Lt,
                CmpOp::Le => IndexKeyOp::Le,
                CmpOp::Gt => IndexKeyOp::Gt,
                CmpOp::Ge => IndexKeyOp::Ge,
                _ => return None,
            };
            let key = IndexKey {
                column: pos,
                op: key_op,
                value: value.clone(),
            };
            let shown = Expr::Cmp {
                op,
                left: Box::new(column_expr(pos, ty)),
                right: Box::new(value.clone()),
            };
            Some((key, shown))
        }
        _ => None,
    }
}

/// The column a comparison operand reads and its type: the column itself,
/// or the column cast to a type whose order its values keep (a wider
/// integer, `varchar` as `text`) — what an index key or a row group's
/// bounds can be compared with.
pub(super) fn column_operand(
    e: &Expr,
    ty_of: &impl Fn(ColumnId) -> DataType,
) -> Option<(ColumnId, DataType)> {
    let (col, ty, as_ty) = match e {
        Expr::Column { index, ty } => (*index, *ty, *ty),
        Expr::Cast { arg, to } => match arg.as_ref() {
            Expr::Column { index, ty } => (*index, *ty, *to),
            _ => return None,
        },
        _ => return None,
    };
    let ok = ty == ty_of(col)
        && (ty == as_ty
            || matches!(
                (ty, as_ty),
                (DataType::Int2, DataType::Int4 | DataType::Int8)
                    | (DataType::Int4, DataType::Int8)
                    | (DataType::Varchar, DataType::Text)
            ));
    ok.then_some((col, ty))
}

/// Whether `e` is known when a scan starts: no column of the scanned row
/// (outer references of a SubPlan, which `outer` recognises, are its
/// parameters), nothing volatile.
pub(super) fn known_at_start(e: &Expr, outer: &impl Fn(ColumnId) -> bool) -> bool {
    let mut ok = true;
    e.visit(|n| match n {
        Expr::Column { index, .. } if !outer(*index) => ok = false,
        Expr::Call { func, .. } if func.volatile() => ok = false,
        _ => {}
    });
    ok
}

/// The rows a set-returning call is expected to give: PostgreSQL's
/// `prorows` (1000, 100 for `unnest`, 10 for `regexp_matches`), or the
/// count of a `generate_series` over integer constants.
pub(crate) fn function_rows(call: &tusk_exec::srf::SetCall) -> f64 {
    use tusk_exec::func::Func;
    match call.func {
        Func::GenerateSeries => series_rows(&call.args).unwrap_or(1000.0),
        Func::Unnest => 100.0,
        Func::RegexpMatches => 10.0,
        _ => 1000.0,
    }
}

/// `generate_series`'s row count when its arguments are integer constants.
fn series_rows(args: &[Expr]) -> Option<f64> {
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

/// Pages that PostgreSQL assumes, at least, for a table it has never
/// vacuumed or analyzed.
const UNVACUUMED_MIN_PAGES: f64 = 10.0;

impl Planner<'_> {
    /// The pages and live tuples the planner assumes for `table`. After
    /// ANALYZE, the density it found times the pages the table has now
    /// (PostgreSQL's `estimate_rel_size` with `reltuples`). Otherwise, like
    /// PostgreSQL for a table never vacuumed or analyzed, a table of fewer
    /// than 10 pages is planned as 10 pages filled at the density its
    /// column types imply: a table that was just created, and may be filled
    /// by the time the plan runs, is not trusted to stay empty. Planning
    /// small tables as PostgreSQL does also makes the same side of a join
    /// run first, which decides which errors a query raises. A columnar
    /// table's size is what its metadata counts (`columnar::estimate_size`).
    pub(crate) fn table_size(&self, table: &TableDef) -> Result<(f64, f64)> {
        if let Some(&size) = self.table_sizes.borrow().get(&table.oid) {
            return Ok(size);
        }
        if table.is_columnar() {
            // The row groups' rows less their deletions, and the delta's.
            let size = tusk_storage::columnar::estimate_size(self.db, table.oid)?;
            self.table_sizes.borrow_mut().insert(table.oid, size);
            return Ok(size);
        }
        let pages = self.db.nblocks(table.oid)? as f64;
        let size = match self.db.statistics.get(table.oid) {
            Some(st) if st.relpages > 0 => (
                pages,
                (st.reltuples / f64::from(st.relpages) * pages).round(),
            ),
            Some(st) if pages == 0.0 || st.reltuples == 0.0 => (pages.max(1.0), 0.0),
            _ if pages < UNVACUUMED_MIN_PAGES => {
                // PostgreSQL's tuple width: the columns' average widths, the
                // aligned tuple header (24 bytes) and the line pointer (4).
                let width = f64::from(cost::width_of(&table.column_types())) + 28.0;
                let density = ((8192.0 - 24.0) / width).floor();
                (UNVACUUMED_MIN_PAGES, UNVACUUMED_MIN_PAGES * density)
            }
            _ => (
                pages,
                tusk_storage::heap::estimate_tuples(&self.db.pool, table.oid, pages as u32)?,
            ),
        };
        self.table_sizes.borrow_mut().insert(table.oid, size);
        Ok(size)
    }
}
