//! Leaf operators: heap sequential scan, `generate_series`, literal rows
//! (the index scan is in `indexscan`; both deform tuples with `deform`).

use crate::deform::Deformer;
use crate::error::Result;
use crate::expr::Expr;
use crate::operator::{ExecContext, Operator, RowOrderFilter};
use crate::parallel::NodeShared;
use crate::plan::{NodeKind, Plan};
use crate::value::Value;
use crate::vector::{Batch, Vector, BATCH_SIZE};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tusk_storage::heap::{self, Visibility, VisibleItem};
use tusk_storage::{DataType, Database, Snapshot};

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
    filter: RowOrderFilter,
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
            deform: Deformer::new(table_types, columns, *with_tid).detoasting(ctx.db.clone()),
            snapshot: ctx.snapshot.clone(),
            items: Vec::new(),
            next_block: 0,
            end_block: if parallel.is_some() { 0 } else { nblocks },
            parallel,
            nblocks,
            filter: RowOrderFilter::new(filter.clone()),
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
        if let Some(e) = self.deform.take_error() {
            return Err(e.into());
        }
        Ok(any.then(|| Batch::new(cols, rows)))
    }
}

impl Operator for SeqScan {
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

/// Applies a scan's filter (counting removed rows for EXPLAIN ANALYZE);
/// `None` when no row is left.
pub(crate) fn scan_filter(
    b: Batch,
    filter: &mut RowOrderFilter,
    ctx: &ExecContext,
    id: usize,
) -> Result<Option<Batch>> {
    let (b, removed) = filter.apply(b)?;
    ctx.add_removed(id, removed);
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
