//! Where a cursor is, and how FETCH and MOVE move it: PostgreSQL's portal
//! logic (`DoPortalRunFetch`, `PortalRunSelect`, `DoPortalRewind` in
//! pquery.c), so that every direction returns PostgreSQL's rows and counts.
//!
//! Two positions are kept, as PostgreSQL keeps them:
//!
//! - the **executor's** ([`RowSource::at`]): 0 before the first row, `k`
//!   on row `k`, `N + 1` after the last of `N` rows. Reading forward
//!   returns the rows after it, reading backward the rows before it; a
//!   read that runs out leaves it past the end (or before the start).
//! - the **portal's** ([`Portal`]): `at_start`, `at_end` and `pos` (rows
//!   from the start), which decide what a direction means — `ABSOLUTE n`
//!   rewinds or steps from `pos`, `FETCH 0` refetches the current row only
//!   if `!at_start && !at_end`, a forward read at the end and a backward
//!   one at the start move nothing.
//!
//! A cursor that is not scrollable (NO SCROLL, or a plan PostgreSQL would
//! not scroll) fails any backward read, and any rewind once it has moved,
//! with `cursor can only scan forward` (55000); it may still use any
//! direction that ends up moving forward (`ABSOLUTE 5` from row 2).
//!
//! Rows come from the cursor's thread (`stream`): streamed while the cursor
//! only goes forward, read by number from its store otherwise. `pending`
//! holds the rest of a streamed batch larger than a fetch wanted.

use super::stream::CursorThread;
use super::{forward_only, Direction};
use crate::session::Result;
use tusk_exec::Batch;

/// Rows a read hands out at a time.
const READ_ROWS: u64 = 1024;

/// The portal's bookkeeping (PostgreSQL's `atStart`, `atEnd`,
/// `portalPos`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Portal {
    pub at_start: bool,
    pub at_end: bool,
    pub pos: u64,
}

impl Default for Portal {
    fn default() -> Portal {
        Portal {
            at_start: true,
            at_end: false,
            pos: 0,
        }
    }
}

/// The rows of a cursor and the executor's position in them.
pub(crate) struct RowSource {
    /// `None` once the rows failed: no more rows.
    thread: Option<CursorThread>,
    /// Rows are read by number from the thread's store.
    stored: bool,
    /// The row whose successor is the store's first row (0 unless a
    /// forward-only cursor was held after some rows were read).
    base: u64,
    /// Rows received by streaming (pending ones included).
    received: u64,
    /// The streamed batch being handed out, from this row on.
    pending: Option<(Batch, usize)>,
    /// The executor's position (module doc).
    at: u64,
    /// The stream has ended.
    ended: bool,
}

/// What a finished FETCH direction leaves to do: stream rows to the
/// client, or (a MOVE) report how many rows it moved over.
pub(crate) enum Outcome {
    Rows(Select),
    Moved(u64),
}

/// One `PortalRunSelect`: up to `remaining` rows (`None`: all) in one
/// direction, handed out as they are read.
pub(crate) struct Select {
    forward: bool,
    remaining: Option<u64>,
    /// False when PostgreSQL would not run the executor (count 0, or
    /// reading past where the portal already is).
    moving: bool,
    finished: bool,
}

impl RowSource {
    pub(crate) fn new(thread: CursorThread, stored: bool) -> RowSource {
        RowSource {
            thread: Some(thread),
            stored,
            base: 0,
            received: 0,
            pending: None,
            at: 0,
            ended: false,
        }
    }

    /// Runs `f` on the thread; an error ends the rows.
    fn with<T>(&mut self, f: impl FnOnce(&CursorThread) -> Result<T>) -> Result<Option<T>> {
        let Some(t) = self.thread.as_ref() else {
            return Ok(None);
        };
        match f(t) {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                self.thread = None;
                Err(e)
            }
        }
    }

    /// Reads from the store from now on, holding every row from the first.
    fn materialize(&mut self) -> Result<()> {
        if !self.stored {
            self.with(|t| t.materialize())?;
            self.stored = true;
            self.base = 0;
            self.pending = None;
        }
        Ok(())
    }

    /// Up to `max` (≥ 1) rows after the position; `None` when there are
    /// none (the position is then past the end).
    fn forward(&mut self, max: u64) -> Result<Option<Batch>> {
        let (batch, from) = match self.pending.take() {
            Some(p) => p,
            None if self.stored => return self.forward_stored(max),
            None => {
                let next = if self.ended {
                    None
                } else {
                    self.with(|t| t.next())?.flatten()
                };
                match next {
                    Some(b) => {
                        self.received += b.len as u64;
                        (b, 0)
                    }
                    None => {
                        if !self.ended {
                            self.ended = true;
                            self.at = self.received + 1;
                        }
                        return Ok(None);
                    }
                }
            }
        };
        let take = (batch.len - from).min(max as usize);
        if take == 0 {
            return self.forward(max);
        }
        let out = if from == 0 && take == batch.len {
            batch
        } else {
            let part = batch.gather(&(from as u32..(from + take) as u32).collect::<Vec<_>>());
            if from + take < batch.len {
                self.pending = Some((batch, from + take));
            }
            part
        };
        self.at += take as u64;
        Ok(Some(out))
    }

    fn forward_stored(&mut self, max: u64) -> Result<Option<Batch>> {
        let idx = self.at.saturating_sub(self.base);
        let Some((len, _)) = self.with(|t| t.fill(idx + max))? else {
            return Ok(None);
        };
        if len <= idx {
            self.at = self.base + len + 1;
            return Ok(None);
        }
        let to = (idx + max).min(len);
        let b = self.with(|t| t.range(idx, to))?;
        self.at = self.base + to;
        Ok(b)
    }

    /// Up to `max` (≥ 1) rows before the position, nearest first; `None`
    /// when there are none (the position is then before the start).
    fn backward(&mut self, max: u64) -> Result<Option<Batch>> {
        self.materialize()?;
        if self.at <= 1 {
            self.at = 0;
            return Ok(None);
        }
        let hi = self.at - 1;
        let lo = hi.saturating_sub(max - 1).max(1);
        let Some((len, _)) = self.with(|t| t.fill(hi))? else {
            return Ok(None);
        };
        let hi = hi.min(len);
        if hi < lo {
            self.at = 0;
            return Ok(None);
        }
        let Some(b) = self.with(|t| t.range(lo - 1, hi))? else {
            return Ok(None);
        };
        self.at = lo;
        let reversed: Vec<u32> = (0..b.len as u32).rev().collect();
        Ok(Some(b.gather(&reversed)))
    }

    /// Moves over up to `count` rows (`None`: all) in one direction without
    /// handing them out; returns how many.
    fn skip(&mut self, forward: bool, count: Option<u64>) -> Result<u64> {
        let want = count.unwrap_or(u64::MAX);
        if !forward {
            self.materialize()?;
            let n = want.min(self.at.saturating_sub(1));
            self.at = if n < want { 0 } else { self.at - n };
            return Ok(n);
        }
        if self.stored && self.pending.is_none() {
            let idx = self.at.saturating_sub(self.base);
            let Some((len, _)) = self.with(|t| t.fill(idx.saturating_add(want)))? else {
                return Ok(0);
            };
            let n = want.min(len.saturating_sub(idx));
            self.at = if n < want {
                self.base + len + 1
            } else {
                self.at + n
            };
            return Ok(n);
        }
        let mut n = 0;
        while n < want {
            match self.forward((want - n).min(READ_ROWS))? {
                Some(b) => n += b.len as u64,
                None => break,
            }
        }
        Ok(n)
    }

    /// Back to before the first row (a scrollable cursor).
    fn rewind(&mut self) -> Result<()> {
        self.materialize()?;
        self.at = 0;
        Ok(())
    }

    /// The commit of a WITH HOLD cursor's transaction: every remaining row
    /// goes to the store (every row, for a scrollable cursor).
    pub(crate) fn hold(&mut self, scrollable: bool) -> Result<()> {
        let from_start = scrollable;
        if self.with(|t| t.hold(from_start))?.is_some() && !self.stored {
            self.stored = true;
            if scrollable {
                self.pending = None;
                self.base = 0;
            } else {
                self.base = self.received;
            }
        }
        Ok(())
    }
}

impl super::Cursor {
    /// PostgreSQL's `PortalRunSelect`, started: the NO SCROLL check and
    /// whether the executor moves at all.
    fn select(&self, forward: bool, count: Option<u64>) -> Result<Select> {
        if !forward && !self.scrollable {
            return Err(forward_only());
        }
        let blocked = if forward {
            self.portal.at_end
        } else {
            self.portal.at_start
        };
        Ok(Select {
            forward,
            remaining: count,
            moving: !blocked && count != Some(0),
            finished: false,
        })
    }

    /// The next rows of a running select (`None` when it is done), with
    /// the portal's bookkeeping.
    pub(crate) fn select_next(&mut self, s: &mut Select) -> Result<Option<Batch>> {
        if !s.moving || s.finished {
            return Ok(None);
        }
        let want = s.remaining.unwrap_or(u64::MAX).min(READ_ROWS);
        if want == 0 {
            s.finished = true;
            return Ok(None);
        }
        let got = if s.forward {
            self.rows.forward(want)?
        } else {
            self.rows.backward(want)?
        };
        match got {
            Some(b) => {
                self.account(s, b.len as u64);
                Ok(Some(b))
            }
            None => {
                self.finish(s, true);
                Ok(None)
            }
        }
    }

    /// Runs a select without handing its rows out; returns their count.
    fn select_skip(&mut self, mut s: Select) -> Result<u64> {
        if !s.moving {
            return Ok(0);
        }
        let n = self.rows.skip(s.forward, s.remaining)?;
        let short = s.remaining.is_none_or(|r| n < r);
        self.account(&mut s, n);
        if short {
            self.finish(&mut s, true);
        }
        Ok(n)
    }

    fn account(&mut self, s: &mut Select, n: u64) {
        if n > 0 {
            let p = &mut self.portal;
            if s.forward {
                p.at_start = false;
                p.pos += n;
            } else {
                if p.at_end {
                    p.at_end = false;
                    p.pos += 1;
                }
                p.pos = p.pos.saturating_sub(n);
            }
        }
        if let Some(r) = s.remaining.as_mut() {
            *r = r.saturating_sub(n);
            if *r == 0 {
                s.finished = true;
            }
        }
    }

    /// A select that ran out of rows leaves the portal at the end (or the
    /// start).
    fn finish(&mut self, s: &mut Select, short: bool) {
        s.finished = true;
        if short {
            if s.forward {
                self.portal.at_end = true;
            } else {
                self.portal.at_start = true;
                self.portal.pos = 0;
            }
        }
    }

    /// PostgreSQL's `DoPortalRewind`.
    fn rewind(&mut self) -> Result<()> {
        if self.portal.at_start && !self.portal.at_end {
            return Ok(());
        }
        if !self.scrollable {
            return Err(forward_only());
        }
        self.rows.rewind()?;
        self.portal = Portal::default();
        Ok(())
    }

    /// Moves over rows (a select whose rows nobody receives).
    fn moved(&mut self, forward: bool, count: Option<u64>) -> Result<u64> {
        let s = self.select(forward, count)?;
        self.select_skip(s)
    }

    /// PostgreSQL's `DoPortalRunFetch`: positions the cursor for
    /// `direction` and returns the select whose rows the FETCH returns, or
    /// a MOVE's count.
    pub(crate) fn run_fetch(&mut self, direction: Direction, is_move: bool) -> Result<Outcome> {
        let (forward, count) = match direction {
            Direction::Absolute(n) if n > 0 => {
                let n = n as u64;
                let p = &self.portal;
                if n - 1 <= p.pos / 2 {
                    self.rewind()?;
                    if n > 1 {
                        self.moved(true, Some(n - 1))?;
                    }
                } else {
                    let pos = p.pos + u64::from(p.at_end);
                    if n <= pos {
                        self.moved(false, Some(pos - n + 1))?;
                    } else if n > pos + 1 {
                        self.moved(true, Some(n - pos - 1))?;
                    }
                }
                (true, Some(1))
            }
            Direction::Absolute(n) if n < 0 => {
                self.moved(true, None)?;
                if n < -1 {
                    self.moved(false, Some(n.unsigned_abs() - 1))?;
                }
                (false, Some(1))
            }
            Direction::Absolute(_) => {
                self.rewind()?;
                (true, Some(0))
            }
            Direction::Relative(n) if n > 0 => {
                if n > 1 {
                    self.moved(true, Some(n as u64 - 1))?;
                }
                (true, Some(1))
            }
            Direction::Relative(n) if n < 0 => {
                if n < -1 {
                    self.moved(false, Some(n.unsigned_abs() - 1))?;
                }
                (false, Some(1))
            }
            Direction::Relative(_) => (true, Some(0)),
            Direction::Forward(c) => (true, c),
            Direction::Backward(c) => (false, c),
        };
        let (mut forward, mut count) = (forward, count);
        // Count 0 refetches the current row, if the cursor is on one.
        let plain = matches!(
            direction,
            Direction::Forward(_) | Direction::Backward(_) | Direction::Relative(0)
        );
        if plain && count == Some(0) {
            let on_row = !self.portal.at_start && !self.portal.at_end;
            if is_move {
                return Ok(Outcome::Moved(u64::from(on_row)));
            }
            if on_row {
                self.moved(false, Some(1))?;
                forward = true;
                count = Some(1);
            }
        }
        // MOVE BACKWARD ALL rewinds.
        if !forward && count.is_none() && is_move {
            let p = self.portal;
            let moved = if p.pos > 0 && !p.at_end {
                p.pos - 1
            } else {
                p.pos
            };
            self.rewind()?;
            return Ok(Outcome::Moved(moved));
        }
        let s = self.select(forward, count)?;
        if is_move {
            return Ok(Outcome::Moved(self.select_skip(s)?));
        }
        Ok(Outcome::Rows(s))
    }
}
