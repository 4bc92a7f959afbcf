//! Leaf operators: heap sequential scan, btree index scan,
//! `generate_series`, literal rows.

use crate::error::{ExecError, Result};
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
struct Deformer {
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
    fn new(table_types: &[DataType], columns: &[usize], with_tid: bool) -> Deformer {
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

    fn columns(&self, capacity: usize) -> Vec<Vector> {
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
    fn push(&self, cols: &mut [Vector], t: &[u8], tid: Tid) {
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
        let NodeKind::SeqScan {
            oid,
            table_types,
            columns,
            with_tid,
            filter,
            parallel,
            ..
        } = &plan.kind
        else {
            unreachable!()
        };
        let nblocks = ctx.db.nblocks(*oid)?;
        let parallel = if *parallel {
            Some(ctx.shared_state::<ScanShared>(plan.id, "Parallel Seq Scan")?)
        } else {
            None
        };
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

/// Index scan: TIDs from a btree range, tuples from the heap, checked
/// against the snapshot there (dead and uncommitted rows are never
/// returned: the index has entries for every version).
pub struct IndexScan {
    db: Arc<Database>,
    oid: u32,
    deform: Deformer,
    snapshot: Snapshot,
    cursor: tusk_storage::btree::Cursor,
    more: bool,
    tids: Vec<Tid>,
    filter: Option<Expr>,
    ctx: ExecContext,
    id: usize,
}

impl IndexScan {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<IndexScan> {
        let NodeKind::IndexScan {
            oid,
            index_oid,
            table_types,
            columns,
            with_tid,
            lo,
            hi,
            runtime_keys,
            filter,
            ..
        } = &plan.kind
        else {
            unreachable!()
        };
        let (lo, hi) = runtime_bounds(*lo, *hi, runtime_keys)?;
        let cursor = tusk_storage::btree::Btree::new(&ctx.db.pool, *index_oid).scan(lo, hi)?;
        Ok(IndexScan {
            db: ctx.db.clone(),
            oid: *oid,
            deform: Deformer::new(table_types, columns, *with_tid),
            snapshot: ctx.snapshot.clone(),
            cursor,
            more: true,
            tids: Vec::with_capacity(BATCH_SIZE),
            filter: filter.clone(),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn read_batch(&mut self) -> Result<Option<Batch>> {
        if !self.more {
            return Ok(None);
        }
        self.tids.clear();
        self.more = self
            .cursor
            .next_batch(&self.db.pool, &mut self.tids, BATCH_SIZE)?;
        let mut cols = self.deform.columns(self.tids.len());
        let mut rows = 0usize;
        let mut vis = Visibility::new(&self.db.txn, self.snapshot.clone());
        let deform = &self.deform;
        heap::fetch(&self.db.pool, self.oid, &self.tids, &mut vis, |tid, t| {
            rows += 1;
            deform.push(&mut cols, t, tid);
        })?;
        Ok(Some(Batch::new(cols, rows)))
    }
}

/// `lo..hi` narrowed by runtime keys `key op value`, whose values are
/// computed now (PostgreSQL's `ExecIndexEvalRuntimeKeys`); a NULL value
/// matches no key. An empty range comes back as `1..=0`.
fn runtime_bounds(
    lo: std::ops::Bound<i64>,
    hi: std::ops::Bound<i64>,
    keys: &[(crate::expr::CmpOp, Expr)],
) -> Result<(std::ops::Bound<i64>, std::ops::Bound<i64>)> {
    use crate::expr::CmpOp;
    use std::ops::Bound;
    if keys.is_empty() {
        return Ok((lo, hi));
    }
    let mut l = match lo {
        Bound::Included(v) => v as i128,
        Bound::Excluded(v) => v as i128 + 1,
        Bound::Unbounded => i64::MIN as i128,
    };
    let mut h = match hi {
        Bound::Included(v) => v as i128,
        Bound::Excluded(v) => v as i128 - 1,
        Bound::Unbounded => i64::MAX as i128,
    };
    let values = eval_constants(&keys.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>())?;
    for ((op, _), v) in keys.iter().zip(values) {
        let v = match v {
            Value::Int2(x) => x as i128,
            Value::Int4(x) => x as i128,
            Value::Int8(x) => x as i128,
            Value::Null => {
                (l, h) = (1, 0);
                continue;
            }
            other => {
                return Err(ExecError::new(format!(
                    "index key of type {:?} is not an integer",
                    other.data_type()
                )))
            }
        };
        match op {
            CmpOp::Eq => (l, h) = (l.max(v), h.min(v)),
            CmpOp::Lt => h = h.min(v - 1),
            CmpOp::Le => h = h.min(v),
            CmpOp::Gt => l = l.max(v + 1),
            CmpOp::Ge => l = l.max(v),
            CmpOp::Ne => return Err(ExecError::new("<> is not an index condition")),
        }
    }
    if l > h {
        return Ok((Bound::Included(1), Bound::Included(0)));
    }
    let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    Ok((Bound::Included(clamp(l)), Bound::Included(clamp(h))))
}

impl Operator for IndexScan {
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
fn scan_filter(
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

/// `generate_series(start, stop [, step])` over integers.
pub struct FunctionScan {
    next: i128,
    stop: i128,
    step: i128,
    ty: DataType,
    done: bool,
    filter: Option<Expr>,
    ctx: ExecContext,
    id: usize,
}

impl FunctionScan {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<FunctionScan> {
        let NodeKind::FunctionScan {
            args, ty, filter, ..
        } = &plan.kind
        else {
            unreachable!()
        };
        let vals = eval_constants(args)?;
        let as_int = |v: &Value| -> Option<i128> {
            match v {
                Value::Int4(x) => Some(*x as i128),
                Value::Int8(x) => Some(*x as i128),
                _ => None,
            }
        };
        let ints: Vec<Option<i128>> = vals.iter().map(as_int).collect();
        let step = ints.get(2).copied().unwrap_or(Some(1));
        if step == Some(0) {
            return Err(ExecError::new("step size cannot equal zero"));
        }
        let done = ints.iter().any(|v| v.is_none()) || step.is_none();
        Ok(FunctionScan {
            next: ints[0].unwrap_or(0),
            stop: ints[1].unwrap_or(0),
            step: step.unwrap_or(1),
            ty: *ty,
            done,
            filter: filter.clone(),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn produce(&mut self) -> Option<Batch> {
        if self.done {
            return None;
        }
        let remaining = if self.step > 0 {
            if self.next > self.stop {
                0
            } else {
                (self.stop - self.next) / self.step + 1
            }
        } else if self.next < self.stop {
            0
        } else {
            (self.next - self.stop) / (-self.step) + 1
        };
        if remaining == 0 {
            self.done = true;
            return None;
        }
        let n = remaining.min(BATCH_SIZE as i128) as usize;
        let start = self.next;
        let step = self.step;
        let data = match self.ty {
            DataType::Int4 => {
                Data::Int4((0..n).map(|i| (start + step * i as i128) as i32).collect())
            }
            _ => Data::Int8((0..n).map(|i| (start + step * i as i128) as i64).collect()),
        };
        self.next = start + step * n as i128;
        Some(Batch::new(vec![Vector::new(data, None)], n))
    }
}

impl Operator for FunctionScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.produce() {
            if let Some(b) = scan_filter(b, &self.filter, &self.ctx, self.id)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
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
