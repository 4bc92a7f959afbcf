//! What becomes of the probe (outer) rows, by join kind.
//!
//! While a probe batch is probed, each of its rows has a state: [`NONE`]
//! (no match yet), [`NULL_SEEN`] (a null-aware mark only: the condition was
//! NULL for some pair) or [`MATCHED`]. When the batch has been probed to its
//! end, [`HashJoin::finish_probe_batch`] emits its rows by kind: left and
//! full joins the unmatched rows with NULL inner columns, semi joins the
//! matched rows, anti joins the unmatched rows, mark joins every row with
//! its mark (the NULL rules of a null-aware mark are in `nullaware`). Inner
//! and right joins emit nothing here (their pairs went out as found), nor
//! do right semi and right anti joins (they emit build rows, see
//! `unmatched`).
//!
//! A chunked partition (see the module doc) streams its probe partition once
//! per chunk of build rows, so a row's state is only known after the last
//! chunk: [`ChunkStates`] keeps every row's state across the passes, by the
//! row's position in the partition (every pass reads the partition in the
//! same order), and only the last pass emits.
//!
//! Probe rows with a NULL key cannot match. In memory they are probed like
//! any other row (their state stays [`NONE`]); a spilling join sets them
//! aside instead of partitioning them, in a side store, and a null-aware
//! mark join whose NULL rules need every build row sets its NULL-key rows
//! aside too; [`HashJoin::finish_step`] emits the side stores at the end:
//! the right, full and right anti joins' NULL-key build rows (NULL-extended
//! where there are outer columns), then the
//! probe rows set aside.

use super::{HashJoin, Phase};
use crate::error::Result;
use crate::plan::JoinKind;
use crate::rowstore::{RowCursor, StoredRows};
use crate::vector::{Batch, Vector, BATCH_SIZE};
use std::sync::Arc;

/// An outer row has no match (yet).
pub(super) const NONE: u8 = 0;
/// The condition was NULL for some pair (null-aware mark joins only).
pub(super) const NULL_SEEN: u8 = 1;
pub(super) const MATCHED: u8 = 2;

/// The rows of a batch whose key (`kv`, one vector per key) is NULL, and
/// the others; `None` when no key is NULL (nothing to split).
pub(super) fn split_null_keys(b: &Batch, kv: &[Vector]) -> Option<(Vec<u32>, Vec<u32>)> {
    if kv.iter().all(|v| v.nulls.is_none()) {
        return None;
    }
    let (mut nulls, mut rest) = (Vec::new(), Vec::new());
    for r in 0..b.len {
        if kv.iter().any(|v| v.is_null(r)) {
            nulls.push(r as u32);
        } else {
            rest.push(r as u32);
        }
    }
    (!nulls.is_empty()).then_some((nulls, rest))
}

/// The states of a chunked partition's probe rows across its passes.
pub(super) struct ChunkStates {
    /// Two bits per row: bit 0 NULL_SEEN, bit 1 MATCHED (as the states).
    bits: Vec<u64>,
    /// Position in the partition of the current probe batch's first row.
    base: usize,
}

impl ChunkStates {
    pub(super) fn new(rows: usize) -> ChunkStates {
        ChunkStates {
            bits: vec![0; (rows * 2).div_ceil(64)],
            base: 0,
        }
    }

    /// Bytes held.
    pub(super) fn memory(&self) -> usize {
        self.bits.len() * 8
    }

    /// A new pass over the partition begins.
    pub(super) fn start_pass(&mut self) {
        self.base = 0;
    }

    /// Folds the states of the next probe batch of this pass into the
    /// rows' states so far, and (on the last pass) the other way round.
    pub(super) fn merge(&mut self, states: &mut [u8], last: bool) {
        for (i, s) in states.iter_mut().enumerate() {
            let at = (self.base + i) * 2;
            let (w, shift) = (at / 64, at % 64);
            let old = ((self.bits[w] >> shift) & 3) as u8;
            let new = old.max(*s);
            self.bits[w] = (self.bits[w] & !(3 << shift)) | (new as u64) << shift;
            if last {
                *s = new;
            }
        }
        self.base += states.len();
    }
}

/// Where the end of the join stands (see [`HashJoin::finish_step`]).
pub(super) enum Finish {
    /// Right, full and right anti joins: the NULL-key build rows of side
    /// store `store`.
    NullInner { store: usize, cursor: RowCursor },
    /// The probe rows set aside.
    NullOuter {
        rows: Arc<StoredRows>,
        cursor: RowCursor,
    },
}

impl HashJoin {
    /// The current probe batch has been probed to its end: emits its rows
    /// by kind (or keeps their states, in a chunked partition's passes
    /// before the last).
    pub(super) fn finish_probe_batch(&mut self) -> Result<()> {
        let kind = self.kind();
        if !kind.decides_outer_rows() {
            return Ok(());
        }
        if let Some(cs) = &mut self.chunk_states {
            let last = self
                .current
                .as_ref()
                .is_some_and(|(_, rest)| rest.is_none());
            cs.merge(&mut self.row_state, last);
            if !last {
                return Ok(());
            }
        }
        let st = self.probe.take().expect("a probe batch");
        let state = std::mem::take(&mut self.row_state);
        let key_null: Vec<bool> = (0..st.batch.len)
            .map(|r| st.keys.hash(r).is_none())
            .collect();
        let r = self.emit_outer_rows(&st.batch, &state, &key_null);
        self.row_state = state;
        self.probe = Some(st);
        r
    }

    /// Emits outer rows `batch` with states `state` by kind, into `ready`;
    /// `key_null` tells the rows whose key is NULL.
    pub(super) fn emit_outer_rows(
        &mut self,
        batch: &Batch,
        state: &[u8],
        key_null: &[bool],
    ) -> Result<()> {
        let kind = self.kind();
        let pick = |want: &dyn Fn(u8) -> bool| -> Vec<u32> {
            (0..batch.len as u32)
                .filter(|&r| want(state[r as usize]))
                .collect()
        };
        match kind {
            JoinKind::Inner | JoinKind::Right | JoinKind::RightSemi | JoinKind::RightAnti => {}
            JoinKind::Left | JoinKind::Full => {
                for rows in pick(&|s| s != MATCHED).chunks(BATCH_SIZE) {
                    self.ready.push_back(self.out.outer_unmatched(batch, rows));
                }
            }
            JoinKind::Semi | JoinKind::Anti => {
                let want = kind == JoinKind::Semi;
                for rows in pick(&|s| (s == MATCHED) == want).chunks(BATCH_SIZE) {
                    self.ready.push_back(self.out.outer_rows(batch, rows));
                }
            }
            JoinKind::Mark { null_aware: false } => {
                let marks: Vec<Option<bool>> = state.iter().map(|&s| Some(s == MATCHED)).collect();
                self.push_marked(batch, &pick(&|_| true), &marks);
            }
            JoinKind::Mark { null_aware: true } => {
                let (rows, marks) = self.null_aware_marks(batch, state, key_null)?;
                self.push_marked(batch, &rows, &marks);
            }
        }
        Ok(())
    }

    /// Emits rows `rows` of `batch` with marks `marks` (one per row of
    /// `rows`), in output batches of at most [`BATCH_SIZE`] rows.
    fn push_marked(&mut self, batch: &Batch, rows: &[u32], marks: &[Option<bool>]) {
        let marks_of = |chunk_start: usize, len: usize| &marks[chunk_start..chunk_start + len];
        for (c, chunk) in rows.chunks(BATCH_SIZE).enumerate() {
            let m = marks_of(c * BATCH_SIZE, chunk.len());
            self.ready.push_back(self.out.marked(batch, chunk, m));
        }
    }

    /// The end of the join: emits the side stores (see the module doc);
    /// moves on to `Done` when they are empty.
    pub(super) fn finish_step(&mut self) -> Result<Option<Batch>> {
        loop {
            match &mut self.finish {
                None => {
                    self.finish = if self.kind().keeps_unmatched_inner() {
                        Some(self.null_inner_cursor(0))
                    } else {
                        self.null_outer_cursor()?
                    };
                    if self.finish.is_none() {
                        self.phase = Phase::Done;
                        return Ok(None);
                    }
                }
                Some(Finish::NullInner { store, cursor }) => {
                    let Some(rows) = self.null_inner.get(*store).cloned() else {
                        self.finish = self.null_outer_cursor()?;
                        if self.finish.is_none() {
                            self.phase = Phase::Done;
                        }
                        return Ok(None);
                    };
                    match cursor.next_batch(&rows)? {
                        Some(b) => {
                            let cols = self
                                .out
                                .inner_out
                                .iter()
                                .map(|&c| b.columns[c].clone())
                                .collect();
                            return Ok(Some(self.out.inner_unmatched(cols, b.len)));
                        }
                        None => {
                            let next = *store + 1;
                            self.finish = Some(self.null_inner_cursor(next));
                        }
                    }
                }
                Some(Finish::NullOuter { rows, cursor }) => {
                    let rows = rows.clone();
                    // A null-aware mark compares every row set aside with
                    // every build row: as many at once as fit.
                    let block_bytes = if self.all_inner.is_some() {
                        self.limit / 4
                    } else {
                        0
                    };
                    let mut block: Option<Batch> = None;
                    while let Some(b) = cursor.next_batch(&rows)? {
                        match &mut block {
                            None => block = Some((*b).clone()),
                            Some(x) => x.append(&b),
                        }
                        if block
                            .as_ref()
                            .is_some_and(|x| crate::memory::batch_bytes(x) >= block_bytes)
                        {
                            break;
                        }
                    }
                    let Some(block) = block else {
                        self.finish = None;
                        self.phase = Phase::Done;
                        return Ok(None);
                    };
                    let state = vec![NONE; block.len];
                    let key_null = vec![true; block.len];
                    self.emit_outer_rows(&block, &state, &key_null)?;
                    if let Some(b) = self.ready.pop_front() {
                        return Ok(Some(b));
                    }
                }
            }
        }
    }

    fn null_inner_cursor(&self, store: usize) -> Finish {
        let cursor = match self.null_inner.get(store) {
            Some(rows) => rows.cursor(&self.ctx.spill),
            None => StoredRows::empty(&[]).cursor(&self.ctx.spill),
        };
        Finish::NullInner { store, cursor }
    }

    /// Finishes the store of probe rows set aside and starts reading it.
    fn null_outer_cursor(&mut self) -> Result<Option<Finish>> {
        let Some(store) = self.null_outer.take() else {
            return Ok(None);
        };
        let rows = Arc::new(store.finish()?);
        let cursor = rows.cursor(&self.ctx.spill);
        Ok(Some(Finish::NullOuter { rows, cursor }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use tusk_storage::DataType;

    #[test]
    fn null_keys_split_from_the_rest() {
        let mut k1 = Vector::empty(DataType::Int4);
        let mut k2 = Vector::empty(DataType::Int4);
        for (a, b) in [(Some(1), Some(1)), (None, Some(2)), (Some(3), None)] {
            k1.push_value(&a.map_or(Value::Null, Value::Int4));
            k2.push_value(&b.map_or(Value::Null, Value::Int4));
        }
        let b = Batch::new(vec![k1.clone()], 3);
        assert_eq!(
            split_null_keys(&b, &[k1.clone(), k2.clone()]),
            Some((vec![1, 2], vec![0]))
        );
        let one = Batch::new(vec![k1.gather(&[0, 2])], 2);
        assert_eq!(split_null_keys(&one, &[k1.gather(&[0, 2])]), None);
    }

    /// A row's state is the most it reached in any pass; only the last
    /// pass learns it.
    #[test]
    fn chunk_states_merge_across_passes() {
        let mut cs = ChunkStates::new(5);
        cs.start_pass();
        let mut a = [MATCHED, NONE, NULL_SEEN];
        cs.merge(&mut a, false);
        let mut b = [NONE, NONE];
        cs.merge(&mut b, false);
        assert_eq!(a, [MATCHED, NONE, NULL_SEEN], "not the last pass");
        cs.start_pass();
        let mut a = [NONE, NULL_SEEN, MATCHED];
        cs.merge(&mut a, true);
        let mut b = [NONE, MATCHED];
        cs.merge(&mut b, true);
        assert_eq!(a, [MATCHED, NULL_SEEN, MATCHED]);
        assert_eq!(b, [NONE, MATCHED]);
    }
}
