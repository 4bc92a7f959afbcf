//! Right, full and right anti joins: the build rows no probe row matched;
//! right semi joins: the build rows some probe row matched.
//!
//! Probing sets a match bit per build row (`Table::set_matched`: a bit per
//! row of the serial table; a bit per tuple ref of the shared table, in its
//! DSA area). When the probe source of a table is done, the join scans the
//! table and emits the rows whose bit is clear (or, for a right semi join,
//! set), with NULL outer columns where the kind has any — for each
//! partition (and each chunk of a chunked partition) of a spilling join,
//! whose tables are each a participant's own. A build row lives in exactly
//! one partition and one chunk, and the whole probe partition streams
//! through every chunk, so its bit is complete when its table is scanned.
//!
//! The shared table of a Parallel Hash Join is probed by every participant,
//! so its bits are complete only when all have finished. Each participant
//! counts itself done on a shared counter; the last one to arrive scans the
//! whole table (every participant's chunks) and the others emit nothing
//! here. No one waits: the others may already have sent rows to the leader,
//! and a wait there could deadlock with a leader that waits for them.
//! The counter's acquire-release increments order every participant's bits
//! before the last one's scan.
//!
//! Build rows with a NULL key are not in the table; they match nothing, so
//! the kinds that keep unmatched build rows emit them from their side
//! store at the end (see `outer`) and a right semi join drops them.

use super::shared_table::SharedTable;
use super::table::{JoinTable, Table};
use super::HashJoin;
use super::Phase;
use crate::error::Result;
use crate::join::row_range;
use crate::plan::JoinKind;
use crate::vector::{Batch, BATCH_SIZE};
use std::sync::atomic::Ordering::{AcqRel, Relaxed};
use std::sync::Arc;

/// A scan of a table for unmatched build rows.
pub(super) enum UnmatchedScan {
    Local {
        table: Arc<JoinTable>,
        next: usize,
    },
    Shared {
        table: Arc<SharedTable>,
        extents: Vec<(u32, usize)>,
        next: usize,
    },
    /// Nothing to scan (another participant scans the shared table), or done.
    Done,
}

impl HashJoin {
    /// The probe source of the current table is done: scans it for
    /// unmatched build rows (right, full and right anti joins) or matched
    /// ones (right semi), then goes on.
    pub(super) fn probe_source_done(&mut self) -> Result<()> {
        if self.kind().marks_inner() && self.unmatched.is_none() {
            if let Some(t) = &self.table {
                self.unmatched = Some(match t {
                    Table::Local(t) => UnmatchedScan::Local {
                        table: t.clone(),
                        next: 0,
                    },
                    Table::Shared(t) => {
                        let shared = self.shared.as_ref().expect("a shared table");
                        let done = shared.probed.fetch_add(1, AcqRel) + 1;
                        if done == shared.participants {
                            UnmatchedScan::Shared {
                                table: t.clone(),
                                extents: shared.all_extents(),
                                next: 0,
                            }
                        } else {
                            UnmatchedScan::Done
                        }
                    }
                });
                self.phase = Phase::UnmatchedInner;
                return Ok(());
            }
        }
        self.after_probe_source()
    }

    /// The next batch of unmatched (right semi: matched) build rows of the
    /// current table; `None` (having moved on) when there are no more.
    pub(super) fn unmatched_step(&mut self) -> Result<Option<Batch>> {
        let types = &self.out.inner_types;
        let want = u64::from(self.kind() == JoinKind::RightSemi);
        let batch = match self.unmatched.as_mut().expect("an unmatched scan") {
            UnmatchedScan::Local { table, next } => {
                let mut rows = Vec::new();
                while *next < table.payload.len && rows.len() < BATCH_SIZE {
                    let end = (*next + BATCH_SIZE).min(table.payload.len);
                    rows.extend(row_range(*next, end).into_iter().filter(|&r| {
                        table.matched[r as usize / 64].load(Relaxed) >> (r % 64) & 1 == want
                    }));
                    *next = end;
                }
                (!rows.is_empty()).then(|| {
                    let cols = self
                        .out
                        .inner_out
                        .iter()
                        .map(|&c| table.payload.columns[c].gather(&rows))
                        .collect();
                    self.out.inner_unmatched(cols, rows.len())
                })
            }
            UnmatchedScan::Shared {
                table,
                extents,
                next,
            } => {
                let view = table.view();
                let mut refs = Vec::new();
                while *next < extents.len() && refs.len() < BATCH_SIZE {
                    table.for_each_tuple(&extents[*next..*next + 1], |entry, _| {
                        if view.is_matched(entry) == (want == 1) {
                            refs.push(entry - 1);
                        }
                        Ok(())
                    })?;
                    *next += 1;
                }
                (!refs.is_empty()).then(|| {
                    let cols = table.gather(types, &self.out.inner_out, &refs);
                    self.out.inner_unmatched(cols, refs.len())
                })
            }
            UnmatchedScan::Done => None,
        };
        if batch.is_none() {
            self.unmatched = Some(UnmatchedScan::Done);
            self.after_probe_source()?;
        }
        Ok(batch)
    }
}
