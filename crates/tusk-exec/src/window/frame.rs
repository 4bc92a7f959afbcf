//! Positions in a buffered partition: peer groups and window frames.
//!
//! Rows are numbered from 0 in the partition's order. Two rows are *peers*
//! when their ORDER BY keys are equal (every row, without ORDER BY); the
//! stored normalized key of each row ([`Part::peer_col`]) decides that by
//! byte equality. [`Peers`] follows the current row's peer group.
//!
//! A frame is the half-open row range `[head, tail)` minus the rows its
//! EXCLUDE clause removes. For each row in order the head and the tail only
//! move forward, so each is found by scanning on from where it was for the
//! previous row, as PostgreSQL's `update_frameheadpos` does:
//!
//! * ROWS: offsets count rows.
//! * GROUPS: offsets count peer groups; a [`GroupPtr`] walks group starts.
//! * RANGE: offsets bound the ORDER BY value: the head is the first row not
//!   *before* `current ∓ offset`, the tail the first row *after* `current ±
//!   offset`, in the sort's direction. A NULL current row's frame is its NULL
//!   peers; a non-NULL row's offset bounds never reach NULLs.
//!
//! Nothing here is proportional to the partition: a window over a
//! partition larger than `work_mem` reads its rows back from the row store.

use crate::error::{sqlstate, ExecError, Result};
use crate::numeric::Numeric;
use crate::plan::{FrameBound, FrameExclude, FrameUnits, WindowFrame};
use crate::tuplestore::TupleStore;
use crate::value::Value;
use std::cmp::Ordering;
use tusk_types::float::float_cmp;

/// The partition being evaluated.
pub struct Part<'a> {
    pub store: &'a mut TupleStore,
    /// Rows in the partition.
    pub n: u64,
    /// Column of the stored peer keys.
    pub peer_col: usize,
}

impl Part<'_> {
    /// One past the last row of the peer group starting at `start`.
    pub fn group_end(&mut self, start: u64) -> Result<u64> {
        let mut e = start + 1;
        while e < self.n && self.store.same_key(start, e, self.peer_col)? {
            e += 1;
        }
        Ok(e)
    }
}

/// The current row's peer group: rows `start..end`, number `group` (from 0).
#[derive(Debug, Clone, Copy)]
pub struct Peers {
    pub start: u64,
    pub end: u64,
    pub group: i64,
}

impl Default for Peers {
    fn default() -> Peers {
        Peers {
            start: 0,
            end: 0,
            group: -1,
        }
    }
}

impl Peers {
    /// Moves to the group of row `r` (rows are visited in order).
    pub fn advance(&mut self, r: u64, part: &mut Part) -> Result<()> {
        while r >= self.end {
            self.start = self.end;
            self.end = part.group_end(self.start)?;
            self.group += 1;
        }
        Ok(())
    }
}

/// The start of peer group number `group` (or the partition's end).
#[derive(Debug, Clone, Copy)]
struct GroupPtr {
    pos: u64,
    group: i64,
}

impl GroupPtr {
    /// Moves forward to the start of group `k` (clamped to the end).
    fn seek(&mut self, k: i64, part: &mut Part) -> Result<u64> {
        while self.group < k && self.pos < part.n {
            self.pos = part.group_end(self.pos)?;
            self.group += 1;
        }
        Ok(self.pos)
    }
}

/// A RANGE key or offset, by kind of arithmetic.
#[derive(Debug, Clone)]
pub enum RangeVal {
    Null,
    Int(i128),
    Float(f64),
    Num(Numeric),
    /// A date (as the timestamp of its midnight), time, timestamp or
    /// timestamptz: microseconds, compared as integers; offsets are
    /// intervals added as `in_range_timestamp_interval` adds them.
    Stamp(i64, StampKind),
    Iv(tusk_types::Interval),
}

/// How an interval offset moves a [`RangeVal::Stamp`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StampKind {
    Timestamp,
    TimestampTz,
    /// No wrap at midnight (`in_range_time_interval`).
    Time,
}

impl RangeVal {
    pub fn of(v: &Value) -> Option<RangeVal> {
        Some(match v {
            Value::Null => RangeVal::Null,
            Value::Int2(x) => RangeVal::Int(*x as i128),
            Value::Int4(x) => RangeVal::Int(*x as i128),
            Value::Int8(x) => RangeVal::Int(*x as i128),
            Value::Float4(x) => RangeVal::Float(*x as f64),
            Value::Float8(x) => RangeVal::Float(*x),
            Value::Numeric(x) => RangeVal::Num(x.clone()),
            Value::Date(d) => RangeVal::Stamp(
                tusk_types::datetime::arith::date_to_timestamp(*d).ok()?,
                StampKind::Timestamp,
            ),
            Value::Timestamp(t) => RangeVal::Stamp(*t, StampKind::Timestamp),
            Value::TimestampTz(t) => RangeVal::Stamp(*t, StampKind::TimestampTz),
            Value::Time(t) => RangeVal::Stamp(*t, StampKind::Time),
            Value::Interval(iv) => RangeVal::Iv(*iv),
            _ => return None,
        })
    }

    fn is_negative(&self) -> bool {
        match self {
            RangeVal::Int(x) => *x < 0,
            RangeVal::Float(x) => *x < 0.0,
            RangeVal::Num(x) => x.signum() < 0,
            RangeVal::Iv(iv) => iv.cmp_key() < 0,
            RangeVal::Null | RangeVal::Stamp(..) => false,
        }
    }

    /// `self + sign · off`.
    fn shifted(&self, off: &RangeVal, sign: i32) -> Result<RangeVal> {
        Ok(match (self, off) {
            (RangeVal::Int(a), RangeVal::Int(b)) => RangeVal::Int(a + sign as i128 * b),
            (RangeVal::Float(a), RangeVal::Float(b)) => RangeVal::Float(a + sign as f64 * b),
            (RangeVal::Num(a), RangeVal::Num(b)) => {
                let r = if sign > 0 {
                    a.checked_add(b)
                } else {
                    a.checked_sub(b)
                };
                RangeVal::Num(r?)
            }
            (RangeVal::Stamp(t, kind), RangeVal::Iv(iv)) => {
                use tusk_types::datetime::arith as dt;
                let iv = if sign > 0 { *iv } else { iv.checked_neg()? };
                let moved = match kind {
                    StampKind::Timestamp => dt::timestamp_plus_interval(*t, iv)?,
                    StampKind::TimestampTz => crate::env::with(|env| {
                        dt::timestamptz_plus_interval(*t, iv, &env.settings.time_zone)
                    })?,
                    StampKind::Time => t.saturating_add(iv.micros),
                };
                RangeVal::Stamp(moved, *kind)
            }
            _ => {
                return Err(ExecError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "RANGE with offset PRECEDING/FOLLOWING is not supported for this column type",
                ))
            }
        })
    }

    fn cmp(&self, o: &RangeVal) -> Ordering {
        match (self, o) {
            (RangeVal::Int(a), RangeVal::Int(b)) => a.cmp(b),
            (RangeVal::Float(a), RangeVal::Float(b)) => float_cmp(*a, *b),
            (RangeVal::Num(a), RangeVal::Num(b)) => a.cmp(b),
            (RangeVal::Stamp(a, _), RangeVal::Stamp(b, _)) => a.cmp(b),
            _ => Ordering::Equal,
        }
    }
}

/// The RANGE key: a stored column and the ORDER BY key's direction.
#[derive(Debug, Clone, Copy)]
pub struct RangeKey {
    pub col: usize,
    pub desc: bool,
    pub nulls_first: bool,
}

/// Row ranges an EXCLUDE clause removes (up to two).
pub type Excluded = [(u64, u64); 2];

/// A frame bound with its offset evaluated (once per partition).
#[derive(Debug, Clone)]
enum Bound {
    UnboundedPreceding,
    Preceding(RangeVal),
    CurrentRow,
    Following(RangeVal),
    UnboundedFollowing,
}

/// The frame of one window call as rows advance.
pub struct FrameState {
    mode: FrameUnits,
    start: Bound,
    end: Bound,
    pub exclude: FrameExclude,
    range: Option<RangeKey>,
    head: u64,
    tail: u64,
    head_g: GroupPtr,
    tail_g: GroupPtr,
}

fn bound(b: &FrameBound, starting: bool) -> Result<Bound> {
    let which = if starting { "starting" } else { "ending" };
    let off = |e: &crate::expr::Expr| -> Result<RangeVal> {
        let v = crate::scan::eval_constants(std::slice::from_ref(e))?.remove(0);
        let r = RangeVal::of(&v).ok_or_else(|| {
            ExecError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "frame offset of this type is not supported",
            )
        })?;
        if matches!(r, RangeVal::Null) {
            return Err(ExecError::coded(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!("frame {which} offset must not be null"),
            ));
        }
        Ok(r)
    };
    Ok(match b {
        FrameBound::UnboundedPreceding => Bound::UnboundedPreceding,
        FrameBound::Preceding(e) => Bound::Preceding(off(e)?),
        FrameBound::CurrentRow => Bound::CurrentRow,
        FrameBound::Following(e) => Bound::Following(off(e)?),
        FrameBound::UnboundedFollowing => Bound::UnboundedFollowing,
    })
}

fn rows_offset(v: &RangeVal, starting: bool) -> Result<u64> {
    let which = if starting { "starting" } else { "ending" };
    let n = match v {
        RangeVal::Int(x) => *x,
        RangeVal::Num(x) => x.round_to(0)?.to_i64()? as i128,
        RangeVal::Float(x) => *x as i128,
        RangeVal::Null | RangeVal::Stamp(..) | RangeVal::Iv(_) => 0,
    };
    if n < 0 {
        return Err(ExecError::coded(
            sqlstate::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
            format!("frame {which} offset must not be negative"),
        ));
    }
    Ok(n.min(u64::MAX as i128) as u64)
}

impl FrameState {
    /// The frame of `f` for a new partition (offsets evaluated and checked).
    pub fn new(f: &WindowFrame, range: Option<RangeKey>) -> Result<FrameState> {
        let (start, end) = (bound(&f.start, true)?, bound(&f.end, false)?);
        for (b, starting) in [(&start, true), (&end, false)] {
            if let Bound::Preceding(v) | Bound::Following(v) = b {
                if f.units == FrameUnits::Range {
                    if v.is_negative() {
                        return Err(ExecError::coded(
                            sqlstate::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                            "invalid preceding or following size in window function",
                        ));
                    }
                } else {
                    rows_offset(v, starting)?;
                }
            }
        }
        Ok(FrameState {
            mode: f.units,
            start,
            end,
            exclude: f.exclude,
            range,
            head: 0,
            tail: 0,
            head_g: GroupPtr { pos: 0, group: 0 },
            tail_g: GroupPtr { pos: 0, group: 0 },
        })
    }

    /// Whether the frame always starts at the partition's first row.
    pub fn from_start(&self) -> bool {
        matches!(self.start, Bound::UnboundedPreceding)
    }

    /// The frame `[head, tail)` of row `r` (rows are visited in order).
    pub fn bounds(&mut self, r: u64, peers: &Peers, part: &mut Part) -> Result<(u64, u64)> {
        let n = part.n;
        let head = match (&self.start, self.mode) {
            (Bound::UnboundedPreceding, _) => 0,
            (Bound::UnboundedFollowing, _) => n,
            (Bound::CurrentRow, FrameUnits::Rows) => r,
            (Bound::CurrentRow, _) => peers.start,
            (Bound::Preceding(v), FrameUnits::Rows) => r.saturating_sub(rows_offset(v, true)?),
            (Bound::Following(v), FrameUnits::Rows) => {
                r.saturating_add(rows_offset(v, true)?).min(n)
            }
            (Bound::Preceding(v), FrameUnits::Groups) => {
                let k = peers.group - rows_offset(v, true)?.min(i64::MAX as u64) as i64;
                self.head_g.seek(k.max(0), part)?
            }
            (Bound::Following(v), FrameUnits::Groups) => {
                let k = peers
                    .group
                    .saturating_add(rows_offset(v, true)?.min(i64::MAX as u64) as i64);
                self.head_g.seek(k, part)?
            }
            (Bound::Preceding(v) | Bound::Following(v), FrameUnits::Range) => {
                let sign = if matches!(self.start, Bound::Preceding(_)) {
                    -1
                } else {
                    1
                };
                let bound = self.range_bound(r, v, sign, part)?;
                let key = self.range.expect("RANGE offsets have a key");
                while self.head < n {
                    let row = RangeVal::of(&part.store.value(self.head, key.col)?)
                        .unwrap_or(RangeVal::Null);
                    if !before_start(&row, &bound, key) {
                        break;
                    }
                    self.head += 1;
                }
                self.head
            }
        };
        let tail = match (&self.end, self.mode) {
            (Bound::UnboundedPreceding, _) => 0,
            (Bound::UnboundedFollowing, _) => n,
            (Bound::CurrentRow, FrameUnits::Rows) => r + 1,
            (Bound::CurrentRow, _) => peers.end,
            (Bound::Preceding(v), FrameUnits::Rows) => {
                (r + 1).saturating_sub(rows_offset(v, false)?)
            }
            (Bound::Following(v), FrameUnits::Rows) => r
                .saturating_add(rows_offset(v, false)?)
                .saturating_add(1)
                .min(n),
            (Bound::Preceding(v), FrameUnits::Groups) => {
                let k = peers.group - rows_offset(v, false)?.min(i64::MAX as u64) as i64;
                if k < 0 {
                    0
                } else {
                    self.tail_g.seek(k + 1, part)?
                }
            }
            (Bound::Following(v), FrameUnits::Groups) => {
                let k = peers
                    .group
                    .saturating_add(rows_offset(v, false)?.min(i64::MAX as u64) as i64);
                self.tail_g.seek(k.saturating_add(1), part)?
            }
            (Bound::Preceding(v) | Bound::Following(v), FrameUnits::Range) => {
                let sign = if matches!(self.end, Bound::Preceding(_)) {
                    -1
                } else {
                    1
                };
                let bound = self.range_bound(r, v, sign, part)?;
                let key = self.range.expect("RANGE offsets have a key");
                while self.tail < n {
                    let row = RangeVal::of(&part.store.value(self.tail, key.col)?)
                        .unwrap_or(RangeVal::Null);
                    if !within_end(&row, &bound, key) {
                        break;
                    }
                    self.tail += 1;
                }
                self.tail
            }
        };
        Ok((head, tail.max(head)))
    }

    /// `current ± offset` in sort order (`sign` -1 for PRECEDING), or
    /// NULL for a NULL current row.
    fn range_bound(&self, r: u64, off: &RangeVal, sign: i32, part: &mut Part) -> Result<RangeVal> {
        let key = self.range.expect("RANGE offsets have a key");
        let cur = RangeVal::of(&part.store.value(r, key.col)?).unwrap_or(RangeVal::Null);
        if matches!(cur, RangeVal::Null) {
            return Ok(RangeVal::Null);
        }
        cur.shifted(off, if key.desc { -sign } else { sign })
    }

    /// The rows the EXCLUDE clause removes for row `r`: up to two ranges.
    pub fn excluded(&self, r: u64, peers: &Peers) -> Excluded {
        match self.exclude {
            FrameExclude::NoOthers => [(0, 0), (0, 0)],
            FrameExclude::CurrentRow => [(r, r + 1), (0, 0)],
            FrameExclude::Group => [(peers.start, peers.end), (0, 0)],
            FrameExclude::Ties => [(peers.start, r), (r + 1, peers.end)],
        }
    }
}

/// Whether a row with RANGE key `row` lies before the frame start `bound`.
fn before_start(row: &RangeVal, bound: &RangeVal, key: RangeKey) -> bool {
    match (row, bound) {
        // A NULL current row: its frame is the NULL peers.
        (RangeVal::Null, RangeVal::Null) => false,
        (_, RangeVal::Null) => !key.nulls_first,
        (RangeVal::Null, _) => key.nulls_first,
        (row, bound) => {
            let o = row.cmp(bound);
            if key.desc {
                o.is_gt()
            } else {
                o.is_lt()
            }
        }
    }
}

/// Whether a row with RANGE key `row` lies at or before the frame end `bound`.
fn within_end(row: &RangeVal, bound: &RangeVal, key: RangeKey) -> bool {
    match (row, bound) {
        (RangeVal::Null, RangeVal::Null) => true,
        (_, RangeVal::Null) => !key.nulls_first,
        (RangeVal::Null, _) => key.nulls_first,
        (row, bound) => {
            let o = row.cmp(bound);
            if key.desc {
                o.is_ge()
            } else {
                o.is_le()
            }
        }
    }
}

/// The rows of `[head, tail)` not in `excl`, as up to three ranges in order.
pub fn frame_segments(head: u64, tail: u64, excl: Excluded) -> Vec<(u64, u64)> {
    let mut segs = vec![(head, tail)];
    for (a, b) in excl {
        if a >= b {
            continue;
        }
        segs = segs
            .into_iter()
            .flat_map(|(s, e)| {
                let mut out = Vec::new();
                if s < a.min(e) {
                    out.push((s, a.min(e)));
                }
                if b.max(s) < e {
                    out.push((b.max(s), e));
                }
                out
            })
            .collect();
    }
    segs
}

/// The `k`-th row (from 1) of the segments, if there are that many.
pub fn nth_row(segs: &[(u64, u64)], mut k: u64) -> Option<u64> {
    for &(s, e) in segs {
        if k <= e - s {
            return Some(s + k - 1);
        }
        k -= e - s;
    }
    None
}
