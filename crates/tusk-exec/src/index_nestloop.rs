//! Index nested loop join: for each outer row, the inner table's btree is
//! probed with the row's join key values (PostgreSQL's Nested Loop whose
//! inner side is an Index Scan with `Index Cond: (l_partkey =
//! p.p_partkey)`).
//!
//! ## Probes
//!
//! The inner child is an `IndexScan` plan whose key values read the outer
//! row through parameters. The join never builds it as an operator: it
//! keeps the scan's parts — the key template, the index and table
//! definitions, the deformer and the scan's filter — and runs a probe per
//! outer row itself. A probe substitutes the row's parameter values into
//! the key template and turns them into btree bounds exactly as the index
//! scan does (`indexscan::scan_bounds`: a NULL key value, or one outside
//! the key column's type, finds nothing). Probes of consecutive outer rows
//! fill one list of up to [`BATCH_SIZE`] TIDs, each remembered with its
//! outer row; a probe that finds more than fits keeps its btree cursor and
//! continues in the next list. Each list is fetched from the heap in one
//! pass (`heap::fetch_each`), under the statement's snapshot with HOT
//! chains followed, exactly as the index scan fetches: dead, uncommitted
//! and invisible versions are never returned. The scan's filter then runs
//! over the fetched rows, and the join filter over the (outer row, inner
//! row) pairs (`join::PairFilter`).
//!
//! ## Output and memory
//!
//! Inner and left joins emit the matching pairs of each TID list as one
//! batch. Once every row of an outer batch has been probed, the batch's
//! per-row results follow: unmatched rows NULL-extended (left), matched
//! rows (semi), unmatched rows (anti). Semi and anti joins stop probing a
//! row once it has matched. The join holds one outer batch, one TID list
//! and its fetched rows, and at most two output batches: its memory does
//! not depend on how many rows the inner table has or a key matches.
//!
//! The statement's interrupt is checked before each TID list, so a long
//! run of outer rows without matches can still be cancelled.
//!
//! With EXPLAIN ANALYZE the inner Index Scan node is credited with one
//! loop per probe and the rows its probes returned.

use crate::deform::Deformer;
use crate::error::Result;
use crate::expr::Expr;
use crate::indexscan::scan_bounds;
use crate::join::{JoinOutput, PairFilter};
use crate::operator::{ExecContext, Operator};
use crate::plan::{IndexKey, JoinKind, NodeKind, Plan};
use crate::value::Value;
use crate::vector::{Batch, Vector, BATCH_SIZE};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use tusk_storage::btree::{Cursor, Direction, Index};
use tusk_storage::heap::{self, Tid, Visibility};
use tusk_storage::{Database, IndexDef, Snapshot, TableDef};

/// The outer batch being probed.
struct Block {
    rows: Batch,
    /// The parameter values of every row, one vector per parameter.
    params: Vec<Vector>,
    /// The next row to probe.
    next: usize,
    matched: Vec<bool>,
}

pub struct IndexNestLoop {
    outer: Box<dyn Operator>,
    output: JoinOutput,
    filter: Option<PairFilter>,
    params: Vec<Expr>,
    param_ids: Vec<usize>,
    /// The inner scan's key conditions, values reading the parameters.
    keys: Vec<IndexKey>,
    defs: Arc<(IndexDef, TableDef)>,
    oid: u32,
    deform: Deformer,
    scan_filter: Option<Expr>,
    inner_id: usize,
    /// The join node's id (for `Rows Removed by Join Filter`).
    join_id: usize,
    db: Arc<Database>,
    snapshot: Snapshot,
    ctx: ExecContext,
    block: Option<Block>,
    /// The probe in progress: its outer row and btree cursor.
    probe: Option<(usize, Cursor)>,
    tids: Vec<Tid>,
    /// The outer row of each of `tids`.
    owners: Vec<u32>,
    pending: VecDeque<Batch>,
    done: bool,
}

impl IndexNestLoop {
    pub fn new(plan: &Plan, ctx: &ExecContext, outer: Box<dyn Operator>) -> Result<IndexNestLoop> {
        let NodeKind::IndexNestLoop {
            kind,
            join_filter,
            params,
            param_ids,
            outer_out,
            inner_out,
        } = &plan.kind
        else {
            unreachable!("IndexNestLoop::new on another node")
        };
        let inner = &plan.children[1];
        let NodeKind::IndexScan {
            oid,
            table_types,
            columns,
            keys,
            filter,
            defs,
            ..
        } = &inner.kind
        else {
            return Err(crate::error::ExecError::new(
                "an index nested loop's inner side must be an index scan",
            ));
        };
        let outer_types = plan.children[0].output.clone();
        let output = JoinOutput::checked(*kind, outer_out, inner_out, &outer_types, &inner.output)?;
        if !matches!(
            kind,
            JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
        ) {
            return Err(crate::error::ExecError::new(format!(
                "an index nested loop cannot run a {kind:?} join"
            )));
        }
        Ok(IndexNestLoop {
            outer,
            output,
            filter: join_filter
                .as_ref()
                .map(|f| PairFilter::new(f, outer_types.len())),
            params: params.clone(),
            param_ids: param_ids.clone(),
            keys: keys.clone(),
            defs: defs.clone(),
            oid: *oid,
            deform: Deformer::new(table_types, columns, false).detoasting(ctx.db.clone()),
            scan_filter: filter.clone(),
            inner_id: inner.id,
            join_id: plan.id,
            db: ctx.db.clone(),
            snapshot: ctx.snapshot.clone(),
            ctx: ctx.clone(),
            block: None,
            probe: None,
            tids: Vec::with_capacity(BATCH_SIZE),
            owners: Vec::with_capacity(BATCH_SIZE),
            pending: VecDeque::new(),
            done: false,
        })
    }

    /// Whether a semi or anti join can skip the rest of row `row`'s probe.
    fn settled(&self, block: &Block, row: usize) -> bool {
        matches!(self.output.kind, JoinKind::Semi | JoinKind::Anti) && block.matched[row]
    }

    /// Probes rows of the current block until `tids` holds a full list or
    /// the block is exhausted; returns the number of probes started.
    fn fill(&mut self) -> Result<u64> {
        self.tids.clear();
        self.owners.clear();
        let (def, table) = &*self.defs;
        let index = Index::open(&self.db, def, table);
        let block = self.block.as_mut().expect("a block to probe");
        let mut probes = 0;
        while self.tids.len() < BATCH_SIZE {
            if self.probe.is_none() {
                if block.next == block.rows.len {
                    break;
                }
                let row = block.next;
                block.next += 1;
                probes += 1;
                let vals: Vec<Value> = block
                    .params
                    .iter()
                    .zip(&self.params)
                    .map(|(v, e)| v.value_as(row, e.data_type()))
                    .collect();
                let ids = &self.param_ids;
                let lookup = |i: usize| ids.iter().position(|&x| x == i).map(|k| vals[k].clone());
                let mut keys = self.keys.clone();
                for k in &mut keys {
                    k.value.substitute_params(&lookup);
                }
                if let Some(bounds) = scan_bounds(&index, &keys, &self.ctx.params)? {
                    self.probe = Some((row, index.scan(bounds, Direction::Forward)?));
                }
                continue;
            }
            let (row, cursor) = self.probe.as_mut().expect("a probe");
            let before = self.tids.len();
            let more = cursor.next_batch(&self.db.pool, &mut self.tids, BATCH_SIZE - before)?;
            self.owners
                .extend(std::iter::repeat_n(*row as u32, self.tids.len() - before));
            if !more {
                self.probe = None;
            }
        }
        Ok(probes)
    }

    /// Fetches the TID list's visible rows and joins them with their outer
    /// rows: the matching pairs (for inner and left joins, else empty).
    fn join_list(&mut self) -> Result<Option<Batch>> {
        let mut cols = self.deform.columns(self.tids.len());
        let mut owners: Vec<u32> = Vec::with_capacity(self.tids.len());
        let mut vis = Visibility::new(&self.db.txn, self.snapshot.clone());
        let deform = &self.deform;
        let list_owners = &self.owners;
        heap::fetch_each(
            &self.db.pool,
            self.oid,
            &self.tids,
            &mut vis,
            |pos, tid, t| {
                owners.push(list_owners[pos]);
                deform.push(&mut cols, t, tid);
            },
        )?;
        if let Some(e) = self.deform.take_error() {
            return Err(e.into());
        }
        let mut inner = Batch::new(cols, owners.len());
        if let Some(f) = &self.scan_filter {
            let passed = f.eval_qual(&inner)?;
            let keep: Vec<u32> = (0..inner.len)
                .filter(|&i| passed[i])
                .map(|i| i as u32)
                .collect();
            self.ctx
                .add_removed(self.inner_id, (inner.len - keep.len()) as u64);
            if keep.len() != inner.len {
                inner = inner.gather(&keep);
                owners = keep.iter().map(|&i| owners[i as usize]).collect();
            }
        }
        if let Some(s) = &self.ctx.stats {
            s.borrow_mut()[self.inner_id].rows += inner.len as u64;
        }
        let block = self.block.as_mut().expect("a block being probed");
        if let Some(pf) = &self.filter {
            let inner_cols: Vec<Vector> = pf
                .inner_cols
                .iter()
                .map(|&c| inner.columns[c].clone())
                .collect();
            let ok = pf.eval_quals(&block.rows, &owners, inner_cols)?;
            let keep: Vec<u32> = (0..owners.len())
                .filter(|&i| ok[i] == Some(true))
                .map(|i| i as u32)
                .collect();
            self.ctx
                .add_removed(self.join_id, (owners.len() - keep.len()) as u64);
            if keep.len() != owners.len() {
                inner = inner.gather(&keep);
                owners = keep.iter().map(|&i| owners[i as usize]).collect();
            }
        }
        for &o in &owners {
            block.matched[o as usize] = true;
        }
        if owners.is_empty() || !self.output.kind.emits_inner_columns() {
            return Ok(None);
        }
        let inner_cols = self
            .output
            .inner_out
            .iter()
            .map(|&c| inner.columns[c].clone())
            .collect();
        Ok(Some(self.output.pairs(&block.rows, &owners, inner_cols)))
    }

    /// The per-row results of a fully probed block.
    fn finish_block(&mut self) -> Option<Batch> {
        let block = self.block.take().expect("a block");
        let rows = |want: bool| -> Vec<u32> {
            (0..block.rows.len)
                .filter(|&i| block.matched[i] == want)
                .map(|i| i as u32)
                .collect()
        };
        let out = match self.output.kind {
            JoinKind::Left => self.output.outer_unmatched(&block.rows, &rows(false)),
            JoinKind::Semi => self.output.outer_rows(&block.rows, &rows(true)),
            JoinKind::Anti => self.output.outer_rows(&block.rows, &rows(false)),
            _ => return None,
        };
        (out.len > 0).then_some(out)
    }
}

impl Operator for IndexNestLoop {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = self.pending.pop_front() {
                return Ok(Some(b));
            }
            if self.done {
                return Ok(None);
            }
            let Some(block) = &self.block else {
                match self.outer.next()? {
                    None => self.done = true,
                    Some(rows) if rows.len == 0 => {}
                    Some(rows) => {
                        let params = self
                            .params
                            .iter()
                            .map(|e| e.eval(&rows))
                            .collect::<Result<Vec<Vector>>>()?;
                        let n = rows.len;
                        self.block = Some(Block {
                            rows,
                            params,
                            next: 0,
                            matched: vec![false; n],
                        });
                    }
                }
                continue;
            };
            // A semi or anti join drops the probe of a row that matched.
            if let Some((row, _)) = &self.probe {
                if self.settled(block, *row) {
                    self.probe = None;
                }
            }
            self.ctx.interrupt.check()?;
            let start = self.ctx.stats.is_some().then(Instant::now);
            let probes = self.fill()?;
            if !self.tids.is_empty() {
                if let Some(b) = self.join_list()? {
                    self.pending.push_back(b);
                }
            }
            if let (Some(s), Some(start)) = (&self.ctx.stats, start) {
                let mut s = s.borrow_mut();
                let st = &mut s[self.inner_id];
                st.loops += probes;
                st.total += start.elapsed();
                if st.first_row.is_none() {
                    st.first_row = Some(st.total);
                }
            }
            let block = self.block.as_ref().expect("the block probed");
            if block.next == block.rows.len && self.probe.is_none() {
                if let Some(b) = self.finish_block() {
                    self.pending.push_back(b);
                }
            }
        }
    }
}
