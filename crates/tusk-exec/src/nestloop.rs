//! Nested loop join: every outer row against every inner row, for any join
//! condition and every join kind.
//!
//! ## Blocks
//!
//! The inner input is read once, into a `RowStore` with a budget of
//! `work_mem`: in memory when it fits, else in a spill file. The outer input
//! is then taken a *block* at a time — one input batch when the inner rows
//! are in memory, else as many outer rows as fit in `work_mem` — and each
//! block is joined with a full pass over the inner rows (PostgreSQL's
//! Materialize, read once per block instead of once per row: with a spilled
//! inner side the file is read ⌈outer bytes / work_mem⌉ times). The join
//! thus holds at most `work_mem` of inner rows or one spill buffer, plus one
//! block, plus one output batch.
//!
//! ## Pairs
//!
//! Within a block, pairs (outer row, inner row) are formed outer row by
//! outer row, up to [`BATCH_SIZE`] at a time, and the join filter is
//! evaluated over them at once (`join::PairFilter`, which gathers only the
//! columns it reads). Each outer row of the block has a state — no match
//! yet, a NULL seen (for a null-aware mark), matched — and semi, anti and
//! mark joins stop forming pairs for a row once it has matched. Right and
//! full joins keep one bit per inner row, set when the row matches.
//!
//! Evaluated together, the pairs of a semi, anti or mark join include pairs
//! after an outer row's first match, which PostgreSQL never tests. When
//! the filter fails on a set of pairs, that set is tested again pair by
//! pair in order, skipping an outer row's pairs after its match
//! (`pair_by_pair`): only an error PostgreSQL meets is raised. Only the
//! failing path pays for it.
//!
//! ## Output
//!
//! Inner, left, right and full joins emit matching pairs as they are found.
//! When a block has met every inner row its per-row results are emitted:
//! unmatched rows NULL-extended (left, full), matched rows (semi), unmatched
//! rows (anti), every row with its mark (mark). After the last block a
//! right or full join reads the inner rows once more and emits those whose
//! bit is clear, NULL-extended on the outer side.
//!
//! The first outer batch is read before the inner side, as PostgreSQL's
//! nested loop reads its outer side first: an empty outer side ends an
//! inner, left, semi or anti join without reading the inner side, so a
//! filter below it never meets (and never fails on) a row PostgreSQL would
//! not evaluate. An empty inner side leaves an inner, right or semi join
//! nothing to emit, but the rest of the outer side is still read (and
//! discarded), as PostgreSQL reads every outer row: an error in a later
//! outer row is raised as in PostgreSQL.
//!
//! ## Parallel plans
//!
//! The nested loop is not parallel-aware: below a Gather every participant
//! runs its own, reading the whole inner input (which must therefore not
//! be a parallel scan) and its share of the outer one. That is correct for
//! every kind except right and full joins, whose unmatched inner rows each
//! participant would emit; those refuse to run below a Gather.

use crate::error::Result;
use crate::join::{JoinOutput, PairFilter};
use crate::memory::batch_bytes;
use crate::operator::{ExecContext, Operator};
use crate::plan::{JoinKind, NodeKind, Plan};
use crate::rowstore::{RowCursor, RowStore, StoredRows};
use crate::vector::{Batch, BATCH_SIZE};
use std::collections::VecDeque;
use std::sync::Arc;

/// An outer row of the current block has no match yet.
const NONE: u8 = 0;
/// The condition was NULL for some inner row (null-aware mark only).
const NULL_SEEN: u8 = 1;
const MATCHED: u8 = 2;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    ReadInner,
    NextBlock,
    Scan,
    UnmatchedInner,
    Done,
}

/// The outer rows being joined with a pass over the inner rows.
struct Block {
    rows: Batch,
    state: Vec<u8>,
    cursor: RowCursor,
    /// The inner batch being paired, and the inner row number of its first row.
    inner: Option<Arc<Batch>>,
    inner_base: usize,
    /// Next pair: outer row `i` of the block, row `j` of the inner batch.
    i: usize,
    j: usize,
}

pub struct NestedLoop {
    outer: Box<dyn Operator>,
    inner_input: Option<Box<dyn Operator>>,
    inner: Option<StoredRows>,
    out: JoinOutput,
    filter: Option<PairFilter>,
    phase: Phase,
    block: Option<Block>,
    /// One bit per inner row (right and full joins).
    inner_matched: Vec<u64>,
    /// Unmatched-inner pass of a right or full join.
    unmatched: Option<(RowCursor, usize)>,
    outer_done: bool,
    /// The outer batch read before the inner side ([`Self::read_inner`]).
    first_outer: Option<Batch>,
    ready: VecDeque<Batch>,
    /// Pair buffers, reused.
    oi: Vec<u32>,
    ii: Vec<u32>,
    blocks: u64,
    ctx: ExecContext,
    id: usize,
}

impl NestedLoop {
    /// The join of plan node `plan` over `outer` and `inner`, its children.
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        outer: Box<dyn Operator>,
        inner: Box<dyn Operator>,
    ) -> Result<NestedLoop> {
        let NodeKind::NestedLoop {
            kind,
            join_filter,
            outer_out,
            inner_out,
        } = &plan.kind
        else {
            unreachable!()
        };
        let out = JoinOutput::checked(
            *kind,
            outer_out,
            inner_out,
            &plan.children[0].output,
            &plan.children[1].output,
        )?;
        if kind.is_right_semi_or_anti() {
            return Err(crate::error::ExecError::new(
                "a right semi or right anti join runs only as a hash join",
            ));
        }
        if ctx.parallel.is_some() && kind.keeps_unmatched_inner() {
            // Each participant would emit the inner rows its own outer
            // rows did not match.
            return Err(crate::error::ExecError::new(
                "a right or full nested loop cannot run below a Gather",
            ));
        }
        let filter = join_filter
            .as_ref()
            .map(|f| PairFilter::new(f, out.outer_types.len()));
        Ok(NestedLoop {
            outer,
            inner_input: Some(inner),
            inner: None,
            out,
            filter,
            phase: Phase::ReadInner,
            block: None,
            inner_matched: Vec::new(),
            unmatched: None,
            outer_done: false,
            first_outer: None,
            ready: VecDeque::new(),
            oi: Vec::new(),
            ii: Vec::new(),
            blocks: 0,
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn kind(&self) -> JoinKind {
        self.out.kind
    }

    fn read_inner(&mut self) -> Result<()> {
        while !self.outer_done && self.first_outer.is_none() {
            match self.outer.next()? {
                Some(b) if b.len == 0 => continue,
                Some(b) => self.first_outer = Some(b),
                None => self.outer_done = true,
            }
        }
        if self.first_outer.is_none() && !self.kind().keeps_unmatched_inner() {
            self.phase = Phase::Done;
            return Ok(());
        }
        let mut input = self.inner_input.take().expect("inner side read once");
        let mut store = RowStore::new(&self.out.inner_types, self.ctx.work_mem, &self.ctx);
        while let Some(b) = input.next()? {
            store.push(b)?;
        }
        let rows = store.finish()?;
        if self.kind().keeps_unmatched_inner() {
            self.inner_matched = vec![0; (rows.rows() as usize).div_ceil(64)];
        }
        let skip_outer = rows.is_empty() && !self.kind().keeps_unmatched_outer();
        self.inner = Some(rows);
        self.phase = if skip_outer {
            // PostgreSQL still reads every outer row, scanning the empty
            // inner side for each: the outer side's errors are raised.
            self.first_outer = None;
            while !self.outer_done {
                self.outer_done = self.outer.next()?.is_none();
            }
            Phase::Done
        } else {
            Phase::NextBlock
        };
        Ok(())
    }

    /// Reads the next block of outer rows; false when the outer side is done.
    fn next_block(&mut self) -> Result<bool> {
        let inner = self.inner.as_ref().expect("inner side read");
        // With the inner rows in memory a block is one batch; else as many
        // batches as fit in work_mem.
        let budget = if inner.spilled() {
            self.ctx.work_mem
        } else {
            0
        };
        let mut rows: Option<Batch> = self.first_outer.take();
        while !self.outer_done && rows.as_ref().is_none_or(|r| batch_bytes(r) < budget) {
            match self.outer.next()? {
                Some(b) if b.len == 0 => continue,
                Some(b) => match &mut rows {
                    None => rows = Some(b),
                    Some(r) => r.append(&b),
                },
                None => self.outer_done = true,
            }
        }
        let Some(rows) = rows else {
            return Ok(false);
        };
        self.blocks += 1;
        let n = rows.len;
        self.block = Some(Block {
            rows,
            state: vec![NONE; n],
            cursor: inner.cursor(&self.ctx.spill),
            inner: None,
            inner_base: 0,
            i: 0,
            j: 0,
        });
        Ok(true)
    }

    /// Pairs the block with the next inner rows; false when the pass over
    /// the inner rows is complete.
    fn scan(&mut self) -> Result<bool> {
        let kind = self.kind();
        let inner_rows = self.inner.as_ref().expect("inner side read");
        let block = self.block.as_mut().expect("a block");
        // The inner batch to pair with: the current one until every outer
        // row has met it.
        let ib = loop {
            if let Some(ib) = &block.inner {
                if block.i < block.rows.len {
                    break ib.clone();
                }
                block.inner_base += ib.len;
            }
            match block.cursor.next_batch(inner_rows)? {
                Some(ib) => {
                    block.inner = Some(ib);
                    block.i = 0;
                    block.j = 0;
                }
                None => {
                    block.inner = None;
                    return Ok(false);
                }
            }
        };
        let (oi, ii) = (&mut self.oi, &mut self.ii);
        oi.clear();
        ii.clear();
        let (m, n) = (block.rows.len, ib.len);
        let first_only = kind.first_match_only();
        while oi.len() < BATCH_SIZE && block.i < m {
            if n == 0 || (first_only && block.state[block.i] == MATCHED) {
                block.i += 1;
                block.j = 0;
                continue;
            }
            let take = (n - block.j).min(BATCH_SIZE - oi.len());
            oi.extend(std::iter::repeat_n(block.i as u32, take));
            ii.extend(block.j as u32..(block.j + take) as u32);
            block.j += take;
            if block.j == n {
                block.i += 1;
                block.j = 0;
            }
        }
        if oi.is_empty() {
            return Ok(true);
        }
        let results = match &self.filter {
            None => vec![Some(true); oi.len()],
            Some(f) => {
                let test = |oi: &[u32], ii: &[u32]| {
                    let inner_cols = f
                        .inner_cols
                        .iter()
                        .map(|&c| ib.columns[c].gather(ii))
                        .collect();
                    // A null-aware mark needs the condition's NULLs; any
                    // other join tests it as PostgreSQL's qual list.
                    if matches!(kind, JoinKind::Mark { null_aware: true }) {
                        f.eval(&block.rows, oi, inner_cols)
                    } else {
                        f.eval_quals(&block.rows, oi, inner_cols)
                    }
                };
                match test(oi, ii) {
                    Err(e) if first_only && oi.len() > 1 && e.is_data_error() => {
                        pair_by_pair(oi, ii, &block.state, test)?
                    }
                    r => r?,
                }
            }
        };
        let removed = results.iter().filter(|r| **r != Some(true)).count();
        self.ctx.add_removed(self.id, removed as u64);
        let null_aware = matches!(kind, JoinKind::Mark { null_aware: true });
        let (mut eo, mut ei) = (Vec::new(), Vec::new());
        for ((&o, &i), r) in oi.iter().zip(ii.iter()).zip(&results) {
            let st = &mut block.state[o as usize];
            match r {
                Some(true) => {
                    if first_only && *st == MATCHED {
                        continue;
                    }
                    *st = MATCHED;
                    if kind.keeps_unmatched_inner() {
                        let g = block.inner_base + i as usize;
                        self.inner_matched[g / 64] |= 1 << (g % 64);
                    }
                    if kind.emits_inner_columns() {
                        eo.push(o);
                        ei.push(i);
                    }
                }
                None if null_aware && *st == NONE => *st = NULL_SEEN,
                _ => {}
            }
        }
        if !eo.is_empty() {
            let inner_cols = self
                .out
                .inner_out
                .iter()
                .map(|&c| ib.columns[c].gather(&ei))
                .collect();
            self.ready
                .push_back(self.out.pairs(&block.rows, &eo, inner_cols));
        }
        Ok(true)
    }

    /// The block has met every inner row: emits its per-row results.
    fn finish_block(&mut self) {
        let block = self.block.take().expect("a block");
        let kind = self.kind();
        let pick = |want: &dyn Fn(u8) -> bool| -> Vec<u32> {
            (0..block.rows.len as u32)
                .filter(|&r| want(block.state[r as usize]))
                .collect()
        };
        let rows = match kind {
            JoinKind::Left | JoinKind::Full | JoinKind::Anti => pick(&|s| s != MATCHED),
            JoinKind::Semi => pick(&|s| s == MATCHED),
            JoinKind::Mark { .. } => pick(&|_| true),
            // Right semi and right anti are refused in `new`.
            JoinKind::Inner | JoinKind::Right | JoinKind::RightSemi | JoinKind::RightAnti => return,
        };
        for chunk in rows.chunks(BATCH_SIZE) {
            let b = match kind {
                JoinKind::Left | JoinKind::Full => self.out.outer_unmatched(&block.rows, chunk),
                JoinKind::Mark { .. } => {
                    let marks: Vec<Option<bool>> = chunk
                        .iter()
                        .map(|&r| match block.state[r as usize] {
                            MATCHED => Some(true),
                            NULL_SEEN => None,
                            _ => Some(false),
                        })
                        .collect();
                    self.out.marked(&block.rows, chunk, &marks)
                }
                _ => self.out.outer_rows(&block.rows, chunk),
            };
            self.ready.push_back(b);
        }
    }

    /// The next batch of inner rows no outer row matched (right, full).
    fn unmatched_inner(&mut self) -> Result<Option<Batch>> {
        let inner = self.inner.as_ref().expect("inner side read");
        let (cursor, base) = self
            .unmatched
            .get_or_insert_with(|| (inner.cursor(&self.ctx.spill), 0));
        while let Some(ib) = cursor.next_batch(inner)? {
            let rows: Vec<u32> = (0..ib.len as u32)
                .filter(|&r| {
                    let g = *base + r as usize;
                    self.inner_matched[g / 64] & (1 << (g % 64)) == 0
                })
                .collect();
            *base += ib.len;
            if rows.is_empty() {
                continue;
            }
            let cols = self
                .out
                .inner_out
                .iter()
                .map(|&c| ib.columns[c].gather(&rows))
                .collect();
            return Ok(Some(self.out.inner_unmatched(cols, rows.len())));
        }
        Ok(None)
    }

    fn report(&self) {
        let inner = self.inner.as_ref().expect("inner side read");
        if inner.spilled() {
            self.ctx.note(
                self.id,
                format!(
                    "tusk: inner side spilled ({} rows), read once for each of {} outer blocks",
                    inner.rows(),
                    self.blocks
                ),
            );
        }
    }
}

impl Operator for NestedLoop {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = self.ready.pop_front() {
                return Ok(Some(b));
            }
            match self.phase {
                Phase::ReadInner => self.read_inner()?,
                Phase::NextBlock => {
                    self.phase = if self.next_block()? {
                        Phase::Scan
                    } else if self.kind().keeps_unmatched_inner() {
                        Phase::UnmatchedInner
                    } else {
                        self.report();
                        Phase::Done
                    };
                }
                Phase::Scan => {
                    // A filter that rejects every pair produces no batch for
                    // the wrapper to check at: check once per batch of pairs.
                    self.ctx.interrupt.check()?;
                    if !self.scan()? {
                        self.finish_block();
                        self.phase = Phase::NextBlock;
                    }
                }
                Phase::UnmatchedInner => match self.unmatched_inner()? {
                    Some(b) => return Ok(Some(b)),
                    None => {
                        self.report();
                        self.phase = Phase::Done;
                    }
                },
                Phase::Done => return Ok(None),
            }
        }
    }
}

/// The condition's results for pairs `(oi[k], ii[k])` tested one at a time,
/// in order, as PostgreSQL's nested loop tests them when an outer row
/// stops at its first match (semi, anti, mark): a pair after its outer
/// row's match is not tested (false here), so only an error of a pair
/// tested before that is raised. For a set of pairs whose test together
/// failed, which may have failed on a pair PostgreSQL never tests.
fn pair_by_pair(
    oi: &[u32],
    ii: &[u32],
    state: &[u8],
    test: impl Fn(&[u32], &[u32]) -> Result<Vec<Option<bool>>>,
) -> Result<Vec<Option<bool>>> {
    let mut matched = vec![false; state.len()];
    let mut out = Vec::with_capacity(oi.len());
    for k in 0..oi.len() {
        let o = oi[k];
        if state[o as usize] == MATCHED || matched[o as usize] {
            out.push(Some(false));
            continue;
        }
        let r = test(&oi[k..k + 1], &ii[k..k + 1])?[0];
        if r == Some(true) {
            matched[o as usize] = true;
        }
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::build::build;
    use crate::expr::{CmpOp, Expr};
    use crate::join_reference::{canonical, int_case, JoinCase, KINDS};
    use crate::plan::{JoinKind, NodeKind};
    use crate::testing::{lit, node, rows_of, series, TestDb};
    use crate::value::Value;
    use proptest::prelude::*;
    use tusk_storage::DataType;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(160))]

        /// Every kind equals the reference, with the inner rows in memory
        /// and spilled (1 kB of work_mem: many blocks, the file re-read).
        #[test]
        fn every_kind_matches_the_reference(case in int_case(), per_batch in 1usize..50) {
            let db = TestDb::new();
            for work_mem in [4 << 20, 1 << 10] {
                let got = case.run_nestloop(&db.ctx(work_mem, 8), per_batch).unwrap();
                prop_assert_eq!(canonical(&got), canonical(&case.expected()));
            }
        }
    }

    /// A join with no equality at all — CROSS JOIN, `ON true`, `ON a < b`
    /// — runs for every kind, over plan nodes built by the dispatcher.
    #[test]
    fn joins_without_keys_run_for_every_kind() {
        let db = TestDb::new();
        let a_lt_b = Expr::Cmp {
            op: CmpOp::Lt,
            left: Box::new(Expr::Column {
                index: 0,
                ty: DataType::Int8,
            }),
            right: Box::new(Expr::Column {
                index: 1,
                ty: DataType::Int8,
            }),
        };
        for kind in KINDS {
            for filter in [
                None,
                Some(lit(Value::Bool(true), DataType::Bool)),
                Some(a_lt_b.clone()),
            ] {
                let inner_out = if kind.emits_inner_columns() {
                    vec![0]
                } else {
                    vec![]
                };
                let out = kind.output_types(&[DataType::Int8], &[DataType::Int8], &[0], &inner_out);
                let mut p = node(
                    NodeKind::NestedLoop {
                        kind,
                        join_filter: filter.clone(),
                        outer_out: vec![0],
                        inner_out,
                    },
                    vec![series(1, 4), series(2, 3)],
                    out.clone(),
                );
                let n = p.assign_ids();
                let mut op = build(&p, &db.ctx(4 << 20, n)).unwrap();
                let got = rows_of(op.as_mut(), &out).unwrap();
                let expected = match (
                    kind,
                    filter.is_some() && filter != Some(lit(Value::Bool(true), DataType::Bool)),
                ) {
                    // a in 1..4, b in 2..3.
                    (JoinKind::Inner, false) => 8,
                    (JoinKind::Inner, true) => 3, // (1,2) (1,3) (2,3)
                    (JoinKind::Left | JoinKind::Full, true) => 5,
                    (JoinKind::Right, true) => 3,
                    (JoinKind::Semi, true) => 2,
                    (JoinKind::Anti, true) => 2,
                    (JoinKind::Semi, false) => 4,
                    (JoinKind::Anti, false) => 0,
                    (JoinKind::Left | JoinKind::Right | JoinKind::Full, false) => 8,
                    (JoinKind::Mark { .. }, _) => 4,
                    (JoinKind::RightSemi | JoinKind::RightAnti, _) => unreachable!("not in KINDS"),
                };
                assert_eq!(got.len(), expected, "{kind:?} {filter:?}");
            }
        }
    }

    /// A semi or anti join tests an outer row's inner rows in order and
    /// stops at its first match: `ROW(a, 1 / (b - a)) < ROW(b, 0)` over
    /// a in 1..3, b in 4, 1..3 matches every a on b = 4 first, before the
    /// pair a = b whose division fails. With the matching row last, the
    /// division is reached and fails.
    #[test]
    fn semi_and_anti_joins_stop_testing_a_row_at_its_match() {
        use crate::expr::ArithOp;
        let db = TestDb::new();
        let int = |index| Expr::Column {
            index,
            ty: DataType::Int8,
        };
        let one_over = Expr::arith(
            ArithOp::Div,
            lit(Value::Int8(1), DataType::Int8),
            Expr::arith(ArithOp::Sub, int(1), int(0), DataType::Int8),
            DataType::Int8,
        );
        let filter = Expr::RowCompare {
            op: CmpOp::Lt,
            left: vec![int(0), one_over],
            right: vec![int(1), lit(Value::Int8(0), DataType::Int8)],
        };
        let values = |xs: &[i64]| {
            node(
                NodeKind::Values {
                    rows: xs
                        .iter()
                        .map(|&x| vec![lit(Value::Int8(x), DataType::Int8)])
                        .collect(),
                },
                vec![],
                vec![DataType::Int8],
            )
        };
        for (kind, inner, rows) in [
            (JoinKind::Semi, [4, 1, 2, 3], Some(3)),
            (JoinKind::Anti, [4, 1, 2, 3], Some(0)),
            (JoinKind::Semi, [1, 2, 3, 4], None),
        ] {
            let mut p = node(
                NodeKind::NestedLoop {
                    kind,
                    join_filter: Some(filter.clone()),
                    outer_out: vec![0],
                    inner_out: vec![],
                },
                vec![values(&[1, 2, 3]), values(&inner)],
                vec![DataType::Int8],
            );
            let n = p.assign_ids();
            let mut op = build(&p, &db.ctx(4 << 20, n)).unwrap();
            match (rows_of(op.as_mut(), &[DataType::Int8]), rows) {
                (Ok(got), Some(rows)) => assert_eq!(got.len(), rows, "{kind:?} {inner:?}"),
                (Err(e), None) => assert_eq!(e.message, "division by zero"),
                (got, _) => panic!("{kind:?} {inner:?}: {got:?}"),
            }
        }
    }

    /// Below a Gather each participant joins its share of the outer rows
    /// with all inner rows: right for every kind but right and full, which
    /// refuse to run there.
    #[test]
    fn below_a_gather() {
        use crate::join_reference::{rows, run, scan, table};
        let db = TestDb::new();
        let (o, ot) = table(&db, "o", &rows(20_000, 500, 0));
        let (i, it) = table(&db, "i", &rows(300, 400, 1));
        for kind in KINDS {
            let case = JoinCase {
                kind,
                outer_types: ot.clone(),
                inner_types: it.clone(),
                outer: vec![],
                inner: vec![],
                outer_keys: vec![0],
                inner_keys: vec![0],
                filter: None,
                outer_out: vec![0, 1],
                inner_out: if kind.emits_inner_columns() {
                    vec![1]
                } else {
                    vec![]
                },
            };
            let serial = case.nestloop_plan(scan(o, "o", &ot, false), scan(i, "i", &it, false));
            let expected = canonical(&run(&serial, &db.ctx(4 << 20, 8)));
            let join = case.nestloop_plan(scan(o, "o", &ot, true), scan(i, "i", &it, false));
            let out = join.output.to_vec();
            let mut gather = node(NodeKind::Gather { workers: 2 }, vec![join], out);
            gather.assign_ids();
            let ctx = db.ctx(4 << 20, 8);
            if kind.keeps_unmatched_inner() {
                let mut op = build(&gather, &ctx).unwrap();
                let err = rows_of(op.as_mut(), &gather.output).unwrap_err();
                assert!(err.message.contains("below a Gather"), "{}", err.message);
            } else {
                assert!(canonical(&run(&gather, &ctx)) == expected, "{kind:?}");
            }
        }
    }

    /// Right and full joins emit unmatched inner rows once, also when the
    /// inner side spilled and the outer side came in several blocks; the
    /// report says how often the file was read.
    #[test]
    fn spilled_inner_side_is_read_once_per_block() {
        let db = TestDb::new();
        let ints = |n: i32, m: i32| -> Vec<Vec<Value>> {
            (0..n)
                .map(|i| vec![Value::Int4(i % m), Value::Int4(i)])
                .collect()
        };
        for kind in [JoinKind::Full, JoinKind::Right, JoinKind::Anti] {
            let case = JoinCase {
                kind,
                outer_types: vec![DataType::Int4, DataType::Int4],
                inner_types: vec![DataType::Int4, DataType::Int4],
                outer: ints(500, 40),
                inner: ints(400, 60),
                outer_keys: vec![0],
                inner_keys: vec![0],
                filter: None,
                outer_out: vec![1],
                inner_out: if kind.emits_inner_columns() {
                    vec![1]
                } else {
                    vec![]
                },
            };
            let ctx = db.ctx(1 << 10, 8);
            let got = case.run_nestloop(&ctx, 64).unwrap();
            assert_eq!(canonical(&got), canonical(&case.expected()));
            let stats = ctx.stats.as_ref().unwrap().borrow();
            let note = stats
                .iter()
                .flat_map(|s| s.extra.iter())
                .find(|l| l.contains("spilled"));
            let note = note.expect("the inner side spilled");
            assert!(note.contains("(400 rows)"), "{note}");
            let blocks: u64 = note
                .split("each of ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(blocks > 1, "{note}");
        }
    }
}
