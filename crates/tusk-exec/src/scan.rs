//! Leaf operators: heap sequential scan, `generate_series`, literal rows
//! (the index scan is in `indexscan`, on the tuple deforming here).

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::{apply_filter, ExecContext, Operator};
use crate::parallel::NodeShared;
use crate::plan::{NodeKind, Plan};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tusk_storage::heap::{self, Tid, Visibility, VisibleItem};
use tusk_storage::tuple::{self, Attr};
use tusk_storage::visible::attrs;
use tusk_storage::{DataType, Database, Snapshot};

/// Turns stored tuples into column vectors: the needed attributes and,
/// optionally, a last Int8 column with the TID (shared by the heap scans).
pub(crate) struct Deformer {
    table_types: Vec<DataType>,
    /// For each attribute up to the last needed one: its output column.
    out_of_att: Vec<Option<usize>>,
    /// When every attribute up to the last needed one has a fixed width:
    /// (byte offset, type, output column) of each needed one, read straight
    /// from tuples that have no NULLs (`tuple::is_dense`).
    fixed: Option<Vec<(usize, DataType, usize)>>,
    out_types: Vec<DataType>,
    with_tid: bool,
}

impl Deformer {
    pub(crate) fn new(table_types: &[DataType], columns: &[usize], with_tid: bool) -> Deformer {
        let last = columns.iter().copied().max();
        let mut out_of_att = vec![None; last.map_or(0, |l| l + 1)];
        for (out, &att) in columns.iter().enumerate() {
            out_of_att[att] = Some(out);
        }
        let mut out_types: Vec<DataType> = columns.iter().map(|&a| table_types[a]).collect();
        if with_tid {
            out_types.push(DataType::Int8);
        }
        let fixed = last
            .and_then(|l| tuple::fixed_offsets(table_types, l))
            .map(|offsets| {
                out_of_att
                    .iter()
                    .enumerate()
                    .filter_map(|(att, o)| o.map(|o| (offsets[att], table_types[att], o)))
                    .collect()
            });
        Deformer {
            table_types: table_types.to_vec(),
            out_of_att,
            fixed,
            out_types,
            with_tid,
        }
    }

    pub(crate) fn columns(&self, capacity: usize) -> Vec<Vector> {
        self.out_types
            .iter()
            .map(|&t| Vector::with_capacity(t, capacity))
            .collect()
    }

    /// Attributes a tuple must store, NULL-free, for the column-by-column
    /// path (see [`Deformer::push_page`]).
    fn dense_natts(&self) -> usize {
        self.out_of_att.len()
    }

    /// Appends the visible tuples `items` of page `page` (block `block`) to
    /// `cols`. When every needed attribute has a fixed width and every tuple
    /// stores them with no NULL (`dense`, as `scan_page_items` found for
    /// [`Deformer::dense_natts`] attributes; a bulk-loaded table), each
    /// column is filled by one loop over the items; otherwise tuple by tuple.
    fn push_page(
        &self,
        cols: &mut [Vector],
        page: &[u8],
        items: &[VisibleItem],
        dense: bool,
        block: u32,
    ) {
        let dense = match self.fixed.as_deref() {
            // No attribute needed (count(*)): nothing to deform.
            _ if self.out_of_att.is_empty() => Some(&[][..]),
            Some(fixed) if dense => Some(fixed),
            _ => None,
        };
        let Some(fixed) = dense else {
            for it in items {
                self.push(
                    cols,
                    it.tuple(page),
                    Tid {
                        block,
                        item: it.item(),
                    },
                );
            }
            return;
        };
        for &(off, ty, o) in fixed {
            let v = &mut cols[o];
            // A dense tuple holds its fixed-width attributes; a damaged one
            // too short for them reads as 0.
            match &mut v.data {
                Data::Int4(d) => {
                    d.extend(attrs(page, items, off).map(|b| b.map_or(0, i32::from_le_bytes)))
                }
                Data::Int8(d) => {
                    d.extend(attrs(page, items, off).map(|b| b.map_or(0, i64::from_le_bytes)))
                }
                Data::Bool(d) => d.extend(
                    attrs(page, items, off).map(|b: Option<[u8; 1]>| b.is_some_and(|b| b[0] != 0)),
                ),
                _ => {
                    for it in items {
                        push_attr(v, fixed_attr(it.tuple(page), off, ty));
                    }
                    continue;
                }
            }
            let n = v.len();
            if let Some(m) = &mut v.nulls {
                m.resize(n, false);
            }
        }
        if self.with_tid {
            if let Some(Data::Int8(d)) = cols.last_mut().map(|c| &mut c.data) {
                d.extend(items.iter().map(|it| {
                    Tid {
                        block,
                        item: it.item(),
                    }
                    .to_u64() as i64
                }));
            }
        }
    }

    /// Appends tuple `t` (at `tid`) to `cols`.
    #[inline]
    pub(crate) fn push(&self, cols: &mut [Vector], t: &[u8], tid: Tid) {
        if let Some(last) = self.out_of_att.len().checked_sub(1) {
            match self.fixed.as_deref() {
                Some(fixed) if tuple::is_dense(t, last) => {
                    for &(off, ty, o) in fixed {
                        push_attr(&mut cols[o], fixed_attr(t, off, ty));
                    }
                }
                _ => {
                    let out_of_att = &self.out_of_att;
                    tuple::walk(t, &self.table_types, last, |att, a| {
                        if let Some(o) = out_of_att[att] {
                            push_attr(&mut cols[o], a);
                        }
                    });
                }
            }
        }
        if self.with_tid {
            if let Some(Data::Int8(d)) = cols.last_mut().map(|c| &mut c.data) {
                d.push(tid.to_u64() as i64);
            }
        }
    }
}

/// Blocks a Parallel Seq Scan participant takes at a time: few enough that
/// participants finish together (16 pages are a few microseconds of work),
/// enough that the shared counter is not touched for every page.
pub const SCAN_CHUNK_BLOCKS: u32 = 16;

/// What the participants of a Parallel Seq Scan share: the next block to
/// hand out, so that each block is read by exactly one participant.
pub struct ScanShared {
    next: AtomicU32,
}

impl NodeShared for ScanShared {}

impl ScanShared {
    /// The next range of blocks to read: up to [`SCAN_CHUNK_BLOCKS`] blocks
    /// from the returned one (which may lie past the end of the relation:
    /// then the scan is done).
    pub fn next_blocks(&self) -> u32 {
        self.next.fetch_add(SCAN_CHUNK_BLOCKS, Ordering::Relaxed)
    }
}

/// Sequential scan: reads blocks in order, deforms the visible tuples'
/// needed attributes straight into column vectors.
pub struct SeqScan {
    db: Arc<Database>,
    oid: u32,
    deform: Deformer,
    snapshot: Snapshot,
    /// Blocks `next_block..end_block` are this scan's to read next (all of
    /// them for a serial scan, the range taken last for a parallel one).
    next_block: u32,
    end_block: u32,
    nblocks: u32,
    filter: Option<Expr>,
    ctx: ExecContext,
    id: usize,
    /// Shared block counter of a Parallel Seq Scan.
    parallel: Option<Arc<ScanShared>>,
    /// The visible tuples of the page being read (reused across pages).
    items: Vec<VisibleItem>,
}

impl SeqScan {
    /// The shared state of a Parallel Seq Scan (created before the
    /// participants start).
    pub fn init_shared() -> Arc<ScanShared> {
        Arc::new(ScanShared {
            next: AtomicU32::new(0),
        })
    }

    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<SeqScan> {
        let NodeKind::SeqScan { parallel, .. } = &plan.kind else {
            unreachable!()
        };
        let shared = if *parallel {
            Some(ctx.shared_state::<ScanShared>(plan.id, "Parallel Seq Scan")?)
        } else {
            None
        };
        SeqScan::with_shared(plan, ctx, shared)
    }

    /// A scan of the heap of `plan`'s table whose blocks come from
    /// `parallel` when given (a columnar table's scan reads its delta so).
    pub(crate) fn with_shared(
        plan: &Plan,
        ctx: &ExecContext,
        parallel: Option<Arc<ScanShared>>,
    ) -> Result<SeqScan> {
        let NodeKind::SeqScan {
            oid,
            table_types,
            columns,
            with_tid,
            filter,
            ..
        } = &plan.kind
        else {
            unreachable!()
        };
        let nblocks = ctx.db.nblocks(*oid)?;
        Ok(SeqScan {
            db: ctx.db.clone(),
            oid: *oid,
            deform: Deformer::new(table_types, columns, *with_tid),
            snapshot: ctx.snapshot.clone(),
            items: Vec::new(),
            next_block: 0,
            end_block: if parallel.is_some() { 0 } else { nblocks },
            parallel,
            nblocks,
            filter: filter.clone(),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    /// The next block to read, or `None` at the end. A Parallel Seq Scan
    /// takes ranges of blocks from the counter all participants share.
    fn next_block(&mut self) -> Option<u32> {
        if self.next_block >= self.end_block {
            let p = self.parallel.as_ref()?;
            let start = p.next_blocks();
            self.next_block = start.min(self.nblocks);
            self.end_block = start.saturating_add(SCAN_CHUNK_BLOCKS).min(self.nblocks);
            if self.next_block >= self.end_block {
                return None;
            }
        }
        self.next_block += 1;
        Some(self.next_block - 1)
    }

    fn read_batch(&mut self) -> Result<Option<Batch>> {
        let mut cols = self.deform.columns(BATCH_SIZE + 512);
        let mut rows = 0usize;
        let db = self.db.clone();
        let mut vis = Visibility::new(&db.txn, self.snapshot.clone());
        let mut any = false;
        while rows < BATCH_SIZE {
            let Some(block) = self.next_block() else {
                break;
            };
            any = true;
            let deform = &self.deform;
            heap::scan_page_items(
                &db.pool,
                self.oid,
                block,
                &mut vis,
                &mut self.items,
                deform.dense_natts(),
                |page, items, dense| {
                    rows += items.len();
                    deform.push_page(&mut cols, page, items, dense, block);
                },
            )?;
        }
        Ok(any.then(|| Batch::new(cols, rows)))
    }
}

/// The fixed-width attribute of type `ty` at byte `off` of a tuple.
#[inline]
fn fixed_attr(t: &[u8], off: usize, ty: DataType) -> Attr<'_> {
    tusk_storage::tuple::fixed_attr(&t[off..], ty)
}

/// Appends one stored attribute to a column vector. The null mask is only
/// materialised once the first NULL arrives.
#[inline(always)]
fn push_attr(v: &mut Vector, a: Attr<'_>) {
    let before = v.len();
    match (&mut v.data, a) {
        (Data::Int4(d), Attr::Int4(x)) => d.push(x),
        (Data::Int8(d), Attr::Int8(x)) => d.push(x),
        (Data::Bool(d), Attr::Bool(x)) => d.push(x),
        (Data::Text(d), Attr::Text(x)) => d.push(x),
        (Data::Int2(d), Attr::Int2(x)) => d.push(x),
        (Data::Float4(d), Attr::Float4(x)) => d.push(x),
        (Data::Float8(d), Attr::Float8(x)) => d.push(x),
        (Data::Interval(d), Attr::Interval(us, days, months)) => {
            d.push(tusk_types::Interval::new(months, days, us))
        }
        (Data::Numeric(d), Attr::Numeric(u, s)) => {
            d.push(crate::numeric::Numeric::from_storage_parts(u, s))
        }
        (data, _) => data.push_default(),
    }
    v.push_null_flag(before, matches!(a, Attr::Null));
}

impl Operator for SeqScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.read_batch()? {
            if let Some(b) = scan_filter(b, &self.filter, &self.ctx, self.id)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}

/// Applies a scan's filter (counting removed rows for EXPLAIN ANALYZE);
/// `None` when no row is left.
pub(crate) fn scan_filter(
    b: Batch,
    filter: &Option<Expr>,
    ctx: &ExecContext,
    id: usize,
) -> Result<Option<Batch>> {
    let b = match filter {
        Some(f) => {
            let (b, removed) = apply_filter(b, f)?;
            ctx.add_removed(id, removed);
            b
        }
        None => b,
    };
    Ok((b.len > 0).then_some(b))
}

/// Evaluates constant expressions (no column references) to values.
pub fn eval_constants(exprs: &[Expr]) -> Result<Vec<Value>> {
    let one = Batch::new(vec![], 1);
    exprs.iter().map(|e| Ok(e.eval(&one)?.value(0))).collect()
}

/// Literal rows, evaluated when first pulled.
pub struct ValuesScan {
    rows: Option<Vec<Vec<Expr>>>,
    types: Vec<DataType>,
}

impl ValuesScan {
    pub fn new(rows: Vec<Vec<Expr>>, types: Vec<DataType>) -> Self {
        ValuesScan {
            rows: Some(rows),
            types,
        }
    }
}

impl Operator for ValuesScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        let Some(rows) = self.rows.take() else {
            return Ok(None);
        };
        let mut cols: Vec<Vector> = self
            .types
            .iter()
            .map(|&t| Vector::with_capacity(t, rows.len()))
            .collect();
        for row in &rows {
            for (c, v) in cols.iter_mut().zip(eval_constants(row)?) {
                c.push_value(&v);
            }
        }
        Ok(Some(Batch::new(cols, rows.len())))
    }
}
