//! Merge join: two inputs sorted on the join keys, walked side by side
//! (PostgreSQL's `nodeMergejoin.c`), for inner, left, right, full, semi and
//! anti joins.
//!
//! ## Inputs and keys
//!
//! Both children deliver their rows in ascending key order, NULLs last (the
//! planner puts a Sort on the keys below each side, which keeps to
//! `work_mem` by spilling). The join evaluates its key expressions again on
//! each batch it reads and encodes them as normalized sort keys
//! (`sortkey`), so "less", "equal" and "greater" are byte comparisons
//! consistent with the order the Sort produced; `smallint` and `integer`
//! keys are widened to `bigint` first, so a key pair of two integer types
//! compares as PostgreSQL's integer operator family does.
//!
//! A row with a NULL key matches nothing. As in PostgreSQL's
//! `MJEvalOuterValues`, a NULL in the *first* key means every later row of
//! that side has one too (NULLs sort last): a side that does not keep its
//! unmatched rows ends there; otherwise the row is unmatched and emitted as
//! such.
//!
//! ## Walking
//!
//! The outer side is read first, and the inner side only once the outer
//! one has a row that can match (or the join must emit unmatched inner
//! rows): an empty outer side ends an inner, left, semi or anti join
//! without reading the inner side, so a Sort below it never evaluates (and
//! never fails on) a row PostgreSQL would not evaluate. When the two
//! current keys differ, the smaller row has no match and its side moves
//! on. When they are equal, every inner row with that key is gathered into
//! a *group* (a `RowStore`: in memory within `work_mem`, else a spill file,
//! as PostgreSQL's mark and restore re-read its inner Sort), and each outer
//! row with the key is paired with every row of the group; the join filter
//! (the conditions that are not merge keys) decides which pairs match,
//! evaluated as PostgreSQL's qual list. When either side runs out, the
//! rest of the other is unmatched: emitted where the kind keeps such rows,
//! else never read.
//!
//! ## Output
//!
//! Matching pairs are emitted as they are found; the outer rows a left,
//! full or anti join emits alone and the matched rows of a semi join are
//! listed per outer batch and emitted when the join moves past it;
//! unmatched inner rows (right and full joins) likewise per inner batch,
//! and per group. Small batches are gathered into batches of up to
//! [`BATCH_SIZE`] rows.
//!
//! The merge join is not parallel-aware: below a Gather each participant
//! would need the whole of both sides, so the planner keeps it out of
//! parallel plans.

use crate::error::{ExecError, Result};
use crate::expr::Expr;
use crate::join::{JoinOutput, PairFilter};
use crate::operator::{ExecContext, Operator};
use crate::plan::{JoinKind, NodeKind, Plan};
use crate::rowstore::{RowStore, StoredRows};
use crate::sortkey::{KeyBuf, KeyOrder};
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};
use std::cmp::Ordering;
use std::collections::VecDeque;
use tusk_storage::DataType;

/// What a row's keys allow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyState {
    /// No key is NULL.
    Matchable,
    /// A key after the first is NULL: this row matches nothing.
    Unmatchable,
    /// The first key is NULL: so is every later row's.
    NullFirst,
}

/// One input of the join: its current batch, the encoded keys of the
/// batch's rows and the position reached, and the rows of the batch to
/// emit on their own when the join moves past it.
struct Side {
    input: Box<dyn Operator>,
    keys: Vec<Expr>,
    /// The type each key is compared as (integers widened).
    orders: Vec<KeyOrder>,
    batch: Option<Batch>,
    encoded: KeyBuf,
    states: Vec<KeyState>,
    pos: usize,
    done: bool,
    /// Rows of `batch` to emit alone (unmatched rows; a semi join's matched
    /// outer rows).
    pending: Vec<u32>,
}

impl Side {
    fn new(input: Box<dyn Operator>, keys: Vec<Expr>, orders: Vec<KeyOrder>) -> Side {
        Side {
            input,
            keys,
            orders,
            batch: None,
            encoded: KeyBuf::new(),
            states: Vec::new(),
            pos: 0,
            done: false,
            pending: Vec::new(),
        }
    }

    /// Whether there is a current row, reading the next batch if needed.
    /// The batch left behind and its pending rows are handed to `flush`.
    fn fill(&mut self, flush: &mut impl FnMut(&Batch, &[u32])) -> Result<bool> {
        loop {
            if let Some(b) = &self.batch {
                if self.pos < b.len {
                    return Ok(true);
                }
                if !self.pending.is_empty() {
                    flush(b, &self.pending);
                    self.pending.clear();
                }
                self.batch = None;
            }
            if self.done {
                return Ok(false);
            }
            match self.input.next()? {
                Some(b) if b.len == 0 => continue,
                Some(b) => {
                    self.encode(&b)?;
                    self.batch = Some(b);
                    self.pos = 0;
                }
                None => self.done = true,
            }
        }
    }

    /// Evaluates and encodes the keys of every row of `b`.
    fn encode(&mut self, b: &Batch) -> Result<()> {
        let cols = self
            .keys
            .iter()
            .zip(&self.orders)
            .map(|(k, o)| Ok(widen(k.eval(b)?, o.ty)))
            .collect::<Result<Vec<Vector>>>()?;
        self.encoded.clear();
        let refs: Vec<&Vector> = cols.iter().collect();
        self.encoded.push_rows(&refs, &self.orders);
        self.states = (0..b.len)
            .map(|r| {
                if cols.first().is_some_and(|c| c.is_null(r)) {
                    KeyState::NullFirst
                } else if cols.iter().any(|c| c.is_null(r)) {
                    KeyState::Unmatchable
                } else {
                    KeyState::Matchable
                }
            })
            .collect();
        Ok(())
    }

    fn state(&self) -> KeyState {
        self.states[self.pos]
    }

    fn key(&self) -> &[u8] {
        self.encoded.get(self.pos)
    }

    fn batch(&self) -> &Batch {
        self.batch.as_ref().expect("a current row")
    }
}

/// `v` as type `to`: integer keys widened to `bigint` (never fails).
fn widen(v: Vector, to: DataType) -> Vector {
    if to != DataType::Int8 {
        return v;
    }
    let data = match v.data {
        Data::Int2(x) => Data::Int8(x.into_iter().map(i64::from).collect()),
        Data::Int4(x) => Data::Int8(x.into_iter().map(i64::from).collect()),
        d => d,
    };
    Vector { data, ..v }
}

/// Which side of the join.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    Outer,
    Inner,
}

impl Which {
    /// This side's rows `rows` of `b` emitted without a partner.
    fn alone(self, out: &JoinOutput, b: &Batch, rows: &[u32]) -> Batch {
        match self {
            Which::Outer => outer_alone(out, b, rows),
            Which::Inner => inner_alone(out, b, rows),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Merge,
    /// The inner side ran out: the rest of the outer side is unmatched.
    DrainOuter,
    /// The outer side ran out: the rest of the inner side is unmatched.
    DrainInner,
    Done,
}

pub struct MergeJoin {
    outer: Side,
    inner: Side,
    out: JoinOutput,
    filter: Option<PairFilter>,
    phase: Phase,
    /// Output gathered into one batch until it is big enough.
    gathering: Option<Batch>,
    ready: VecDeque<Batch>,
    ctx: ExecContext,
    id: usize,
}

impl MergeJoin {
    /// The join of plan node `plan` over `outer` and `inner`, its sorted
    /// children.
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        outer: Box<dyn Operator>,
        inner: Box<dyn Operator>,
    ) -> Result<MergeJoin> {
        let NodeKind::MergeJoin {
            kind,
            outer_keys,
            inner_keys,
            outer_out,
            inner_out,
            join_filter,
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
        if matches!(kind, JoinKind::Mark { .. }) {
            return Err(ExecError::new("a mark join cannot run as a merge join"));
        }
        if kind.is_right_semi_or_anti() {
            return Err(ExecError::new(
                "a right semi or right anti join runs only as a hash join",
            ));
        }
        if ctx.parallel.is_some() {
            return Err(ExecError::new("a merge join cannot run below a Gather"));
        }
        if outer_keys.len() != inner_keys.len() || outer_keys.is_empty() {
            return Err(ExecError::new("a merge join needs pairs of keys"));
        }
        let mut orders = Vec::new();
        for (o, i) in outer_keys.iter().zip(inner_keys) {
            orders.push(KeyOrder::asc(compared_as(o.data_type(), i.data_type())?));
        }
        let filter = join_filter
            .as_ref()
            .map(|f| PairFilter::new(f, out.outer_types.len()));
        Ok(MergeJoin {
            outer: Side::new(outer, outer_keys.clone(), orders.clone()),
            inner: Side::new(inner, inner_keys.clone(), orders),
            out,
            filter,
            phase: Phase::Start,
            gathering: None,
            ready: VecDeque::new(),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    fn kind(&self) -> JoinKind {
        self.out.kind
    }

    /// Whether the outer rows without a match are emitted (left, full, anti).
    fn fill_outer(&self) -> bool {
        self.kind().keeps_unmatched_outer() || self.kind() == JoinKind::Anti
    }

    fn fill_inner(&self) -> bool {
        self.kind().keeps_unmatched_inner()
    }

    fn emit(&mut self, b: Batch) {
        if b.len == 0 {
            return;
        }
        match &mut self.gathering {
            Some(g) => g.append(&b),
            None => self.gathering = Some(b),
        }
        if self.gathering.as_ref().is_some_and(|g| g.len >= BATCH_SIZE) {
            self.ready.extend(self.gathering.take());
        }
    }

    /// Moves the outer side to its next matchable row, emitting (or
    /// skipping) the rows before it; false when none is left.
    fn outer_to_matchable(&mut self) -> Result<bool> {
        self.advance_to_matchable(Which::Outer)
    }

    fn inner_to_matchable(&mut self) -> Result<bool> {
        self.advance_to_matchable(Which::Inner)
    }

    /// One side, the join's output, and whether the side's unmatched rows
    /// are emitted.
    fn side(&mut self, which: Which) -> (&mut Side, &JoinOutput, bool) {
        let fill = match which {
            Which::Outer => self.fill_outer(),
            Which::Inner => self.fill_inner(),
        };
        let side = match which {
            Which::Outer => &mut self.outer,
            Which::Inner => &mut self.inner,
        };
        (side, &self.out, fill)
    }

    /// See [`Self::outer_to_matchable`].
    fn advance_to_matchable(&mut self, which: Which) -> Result<bool> {
        let (side, out, fill) = self.side(which);
        let mut flushed = Vec::new();
        let found = loop {
            let mut flush = |b: &Batch, rows: &[u32]| flushed.push(which.alone(out, b, rows));
            if !side.fill(&mut flush)? {
                break false;
            }
            match side.state() {
                KeyState::Matchable => break true,
                KeyState::NullFirst if !fill => break false,
                _ => {
                    if fill {
                        side.pending.push(side.pos as u32);
                    }
                    side.pos += 1;
                }
            }
        };
        flushed.into_iter().for_each(|b| self.emit(b));
        Ok(found)
    }

    /// Lists the rest of one side's rows as unmatched, a batch per call;
    /// false when the side is done.
    fn drain(&mut self, which: Which) -> Result<bool> {
        let (side, out, _) = self.side(which);
        let mut flushed = Vec::new();
        let mut flush = |b: &Batch, rows: &[u32]| flushed.push(which.alone(out, b, rows));
        let more = side.fill(&mut flush)?;
        if more {
            let n = side.batch().len;
            side.pending.extend(side.pos as u32..n as u32);
            side.pos = n;
        }
        flushed.into_iter().for_each(|b| self.emit(b));
        Ok(more)
    }

    /// The phase after one side has run out.
    fn after_outer_end(&self) -> Phase {
        if self.fill_inner() {
            Phase::DrainInner
        } else {
            Phase::Done
        }
    }

    fn after_inner_end(&self) -> Phase {
        if self.fill_outer() {
            Phase::DrainOuter
        } else {
            Phase::Done
        }
    }

    /// One step of the walk (see the module doc).
    fn step(&mut self) -> Result<()> {
        match self.phase {
            Phase::Start => {
                self.phase = if !self.outer_to_matchable()? {
                    self.after_outer_end()
                } else if !self.inner_to_matchable()? {
                    self.after_inner_end()
                } else {
                    Phase::Merge
                };
            }
            Phase::Merge => self.merge_step()?,
            Phase::DrainOuter => {
                if !self.drain(Which::Outer)? {
                    self.phase = Phase::Done;
                }
            }
            Phase::DrainInner => {
                if !self.drain(Which::Inner)? {
                    self.phase = Phase::Done;
                }
            }
            Phase::Done => {}
        }
        if self.phase == Phase::Done {
            // Rows still listed on either side.
            for (side, which) in [
                (&mut self.outer, Which::Outer),
                (&mut self.inner, Which::Inner),
            ] {
                if let Some(b) = &side.batch {
                    if !side.pending.is_empty() {
                        let out = which.alone(&self.out, b, &side.pending);
                        side.pending.clear();
                        match &mut self.gathering {
                            Some(g) => g.append(&out),
                            None => self.gathering = Some(out),
                        }
                    }
                }
            }
            self.ready
                .extend(self.gathering.take().filter(|g| g.len > 0));
        }
        Ok(())
    }

    /// Both sides are at a matchable row: compare their keys.
    fn merge_step(&mut self) -> Result<()> {
        match self.outer.key().cmp(self.inner.key()) {
            Ordering::Less => {
                if self.fill_outer() {
                    self.outer.pending.push(self.outer.pos as u32);
                }
                self.outer.pos += 1;
                if !self.outer_to_matchable()? {
                    self.phase = self.after_outer_end();
                }
            }
            Ordering::Greater => {
                if self.fill_inner() {
                    self.inner.pending.push(self.inner.pos as u32);
                }
                self.inner.pos += 1;
                if !self.inner_to_matchable()? {
                    self.phase = self.after_inner_end();
                }
            }
            Ordering::Equal => self.join_group()?,
        }
        Ok(())
    }

    /// Joins every outer row with the current key to every inner row with
    /// it, then moves both sides past the key.
    fn join_group(&mut self) -> Result<()> {
        let key = self.outer.key().to_vec();
        // The inner group.
        let mut store = RowStore::new(&self.out.inner_types, self.ctx.work_mem, &self.ctx);
        let inner_more = loop {
            let b = self.inner.batch();
            let start = self.inner.pos;
            let mut end = start;
            while end < b.len
                && self.inner.states[end] == KeyState::Matchable
                && self.inner.encoded.get(end) == key.as_slice()
            {
                end += 1;
            }
            let idx: Vec<u32> = (start as u32..end as u32).collect();
            let rest = end < b.len;
            store.push(b.gather(&idx))?;
            self.inner.pos = end;
            if rest {
                break self.inner_to_matchable()?;
            }
            if !self.inner_to_matchable()? {
                break false;
            }
            if self.inner.key() != key.as_slice() {
                break true;
            }
        };
        let group = store.finish()?;
        let mut matched = vec![false; group.rows() as usize];
        // The outer rows with the key.
        let outer_more = loop {
            let end = {
                let b = self.outer.batch();
                let mut end = self.outer.pos;
                while end < b.len
                    && self.outer.states[end] == KeyState::Matchable
                    && self.outer.encoded.get(end) == key.as_slice()
                {
                    end += 1;
                }
                end
            };
            for row in self.outer.pos..end {
                self.join_row(row, &group, &mut matched)?;
            }
            self.outer.pos = end;
            if end < self.outer.batch().len {
                break self.outer_to_matchable()?;
            }
            if !self.outer_to_matchable()? {
                break false;
            }
            if self.outer.key() != key.as_slice() {
                break true;
            }
        };
        if self.fill_inner() && matched.iter().any(|m| !m) {
            let mut cursor = group.cursor(&self.ctx.spill);
            let mut base = 0;
            while let Some(gb) = cursor.next_batch(&group)? {
                let rows: Vec<u32> = (0..gb.len as u32)
                    .filter(|&r| !matched[base + r as usize])
                    .collect();
                base += gb.len;
                let b = inner_alone(&self.out, &gb, &rows);
                self.emit(b);
            }
        }
        self.phase = match (outer_more, inner_more) {
            (false, _) => self.after_outer_end(),
            (true, false) => self.after_inner_end(),
            (true, true) => Phase::Merge,
        };
        Ok(())
    }

    /// Pairs outer row `row` of the current outer batch with every row of
    /// `group`.
    fn join_row(&mut self, row: usize, group: &StoredRows, matched: &mut [bool]) -> Result<()> {
        let kind = self.kind();
        let first_only = kind.first_match_only();
        let mut found = false;
        let mut cursor = group.cursor(&self.ctx.spill);
        let mut base = 0;
        while let Some(gb) = cursor.next_batch(group)? {
            if first_only && found {
                break;
            }
            let n = gb.len;
            let mut from = 0;
            while from < n && !(first_only && found) {
                let to = (from + BATCH_SIZE).min(n);
                let ii: Vec<u32> = (from as u32..to as u32).collect();
                let oi = vec![row as u32; ii.len()];
                let ob = self.outer.batch();
                let results = match &self.filter {
                    None => vec![Some(true); ii.len()],
                    Some(f) => {
                        let cols = f
                            .inner_cols
                            .iter()
                            .map(|&c| gb.columns[c].gather(&ii))
                            .collect();
                        f.eval_quals(ob, &oi, cols)?
                    }
                };
                let removed = results.iter().filter(|r| **r != Some(true)).count();
                self.ctx.add_removed(self.id, removed as u64);
                let hits: Vec<u32> = ii
                    .iter()
                    .zip(&results)
                    .filter(|(_, r)| **r == Some(true))
                    .map(|(&i, _)| i)
                    .collect();
                if !hits.is_empty() {
                    found = true;
                    for &i in &hits {
                        matched[base + i as usize] = true;
                    }
                    if kind.emits_inner_columns() {
                        let inner = self
                            .out
                            .inner_out
                            .iter()
                            .map(|&c| gb.columns[c].gather(&hits))
                            .collect();
                        let b = self.out.pairs(ob, &vec![row as u32; hits.len()], inner);
                        self.emit(b);
                    }
                }
                from = to;
            }
            base += n;
        }
        let alone = match kind {
            JoinKind::Semi => found,
            JoinKind::Left | JoinKind::Full | JoinKind::Anti => !found,
            _ => false,
        };
        if alone {
            self.outer.pending.push(row as u32);
        }
        Ok(())
    }
}

/// The type a key pair is compared as: the same type, or two integer types
/// as `bigint`.
pub fn compared_as(a: DataType, b: DataType) -> Result<DataType> {
    let int = |t| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8);
    if a == b && !int(a) {
        Ok(a)
    } else if int(a) && int(b) {
        Ok(DataType::Int8)
    } else {
        Err(ExecError::new(format!(
            "a merge join cannot compare {a:?} with {b:?}"
        )))
    }
}

/// Outer rows emitted without a partner: NULL-extended (left, full) or
/// alone (semi, anti).
fn outer_alone(out: &JoinOutput, b: &Batch, rows: &[u32]) -> Batch {
    match out.kind {
        JoinKind::Semi | JoinKind::Anti => out.outer_rows(b, rows),
        _ => out.outer_unmatched(b, rows),
    }
}

/// Inner rows emitted without a partner (right and full joins).
fn inner_alone(out: &JoinOutput, b: &Batch, rows: &[u32]) -> Batch {
    let cols = out
        .inner_out
        .iter()
        .map(|&c| b.columns[c].gather(rows))
        .collect();
    out.inner_unmatched(cols, rows.len())
}

impl Operator for MergeJoin {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = self.ready.pop_front() {
                return Ok(Some(b));
            }
            if self.phase == Phase::Done {
                return Ok(None);
            }
            self.step()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::join_reference::{canonical, int_case, rows, JoinCase, KINDS};
    use crate::plan::JoinKind;
    use crate::testing::TestDb;
    use proptest::prelude::*;
    use tusk_storage::DataType;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Every kind a merge join runs equals the reference, with the
        /// groups of equal inner keys in memory and spilled (1 kB of
        /// work_mem), over inputs in batches of any size.
        #[test]
        fn every_kind_matches_the_reference(case in int_case(), per_batch in 1usize..50) {
            prop_assume!(!matches!(case.kind, JoinKind::Mark { .. }));
            let db = TestDb::new();
            for work_mem in [4 << 20, 1 << 10] {
                let got = case.run_merge(&db.ctx(work_mem, 8), per_batch).unwrap();
                prop_assert_eq!(canonical(&got), canonical(&case.expected()));
            }
        }
    }

    /// Large groups of equal keys on both sides (spilled at 1 kB), NULL
    /// keys on both, and every kind.
    #[test]
    fn large_groups_and_null_keys() {
        let db = TestDb::new();
        let kinds = KINDS.into_iter();
        for kind in kinds.filter(|k| !matches!(k, JoinKind::Mark { .. })) {
            let t = vec![DataType::Int4, DataType::Int4];
            let case = JoinCase {
                kind,
                outer_types: t.clone(),
                inner_types: t,
                outer: rows(600, 4, 0),
                inner: rows(500, 6, 1),
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
            let want = canonical(&case.expected());
            for (work_mem, per_batch) in [(4 << 20, 1024), (1 << 10, 7)] {
                let got = case.run_merge(&db.ctx(work_mem, 8), per_batch).unwrap();
                assert_eq!(canonical(&got), want, "{kind:?} at {work_mem} bytes");
            }
        }
    }

    /// An empty outer side ends an inner, left, semi or anti join without
    /// reading the inner side (whose first batch here is an error).
    #[test]
    fn empty_outer_side_reads_no_inner_row() {
        use crate::error::ExecError;
        use crate::operator::Operator;
        use crate::vector::Batch;
        struct Failing;
        impl Operator for Failing {
            fn next(&mut self) -> crate::Result<Option<Batch>> {
                Err(ExecError::new("inner side read"))
            }
        }
        let db = TestDb::new();
        let t = vec![DataType::Int4];
        for (kind, reads) in [
            (JoinKind::Inner, false),
            (JoinKind::Left, false),
            (JoinKind::Semi, false),
            (JoinKind::Anti, false),
            (JoinKind::Right, true),
            (JoinKind::Full, true),
        ] {
            let case = JoinCase {
                kind,
                outer_types: t.clone(),
                inner_types: t.clone(),
                outer: vec![],
                inner: vec![],
                outer_keys: vec![0],
                inner_keys: vec![0],
                filter: None,
                outer_out: vec![0],
                inner_out: if kind.emits_inner_columns() {
                    vec![0]
                } else {
                    vec![]
                },
            };
            let p = case.merge_plan(
                crate::testing::node(
                    crate::plan::NodeKind::Values { rows: vec![] },
                    vec![],
                    t.clone(),
                ),
                crate::testing::node(
                    crate::plan::NodeKind::Values { rows: vec![] },
                    vec![],
                    t.clone(),
                ),
            );
            let outer = crate::testing::batches(&t, &[], 8);
            let mut op =
                super::MergeJoin::new(&p, &db.ctx(4 << 20, 8), Box::new(outer), Box::new(Failing))
                    .unwrap();
            let got = crate::testing::rows_of(&mut op, &case.output_types());
            assert_eq!(got.is_err(), reads, "{kind:?}");
        }
    }
}
