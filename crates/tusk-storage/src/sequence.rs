//! Sequences: `CREATE SEQUENCE`, `nextval`, `setval`, and the `serial`
//! columns built on them, as PostgreSQL 15's `sequence.c` keeps them.
//!
//! ## Definition and state
//!
//! A sequence is a relation: a catalog entry (a [`TableDef`] whose
//! `sequence` holds its [`SequenceDef`]: type, start, increment, bounds,
//! cache, cycle, owner) and a relation file of one page. The page holds the
//! state after the page header: `last_value` (i64), `log_cnt` (i64) and
//! `is_called` (one byte). `is_called = false` means `last_value` has not
//! been handed out yet: the next `nextval` returns it (a new sequence, or
//! `setval(s, v, false)`).
//!
//! ## Not transactional
//!
//! `nextval` changes the page in place under its exclusive lock, whatever
//! becomes of the calling transaction: a rolled-back transaction's values
//! are gone, and two sessions never get the same value.
//!
//! ## Logging ahead
//!
//! Logging every call would cost a WAL record per value, so `nextval`
//! logs, as PostgreSQL does, a state [`LOG_AHEAD`] values ahead of the
//! one it returns (`Sequence` record: the whole state, with `log_cnt` 0)
//! and then hands out that many values without logging, counting them
//! down in `log_cnt`. After a crash, redo installs the logged state, so
//! the sequence resumes after every value it may have handed out: values
//! are skipped, never repeated. Two more rules make that hold:
//!
//! * redo of a `Sequence` record always rewrites the page, whatever its
//!   LSN: a page written out between two logged states holds a smaller
//!   `last_value` than the record, with the record's LSN;
//! * the first `nextval` after a checkpoint's redo point logs again, even
//!   with `log_cnt` left: otherwise a crash would restart from the page
//!   the checkpoint wrote, behind values handed out since.
//!
//! A value is only as durable as the WAL holding its logged state: the
//! caller flushes the WAL up to the returned LSN before it reports a
//! commit ([`NextValue::lsn`]), as PostgreSQL's commit record does.
//!
//! `CACHE` is kept in the definition (and shown), but every call goes to
//! the page: each session sees the values in order, as with `CACHE 1`.

use crate::bufmgr::BufferPool;
use crate::catalog::TableDef;
use crate::datatype::DataType;
use crate::page;
use crate::wal::{BlockRef, Lsn, RecordType};
use crate::StorageError;

/// Values handed out per logged state (PostgreSQL's `SEQ_LOG_VALS`).
pub const LOG_AHEAD: i64 = 32;

/// SQLSTATE 2200H: a sequence ran past its bound.
const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: &str = "2200H";
/// SQLSTATE 22003.
const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";

/// A sequence's parameters (PostgreSQL's `pg_sequence` row).
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceDef {
    /// `smallint`, `integer` or `bigint` (`AS type`; bigint by default).
    pub ty: DataType,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
    /// `OWNED BY table.column` (the table's oid, the column's number from
    /// 0): dropping the table or the column drops the sequence.
    pub owned_by: Option<(u32, usize)>,
}

impl SequenceDef {
    /// The catalog line's fields after `sequence`.
    pub fn encode(&self) -> String {
        let owner = match self.owned_by {
            Some((t, c)) => format!("{t}:{c}"),
            None => "-".into(),
        };
        format!(
            "{} {} {} {} {} {} {} {owner}",
            type_name(self.ty),
            self.start,
            self.increment,
            self.min,
            self.max,
            self.cache,
            if self.cycle { "cycle" } else { "nocycle" },
        )
    }

    /// Inverse of [`encode`](Self::encode).
    pub fn decode(text: &str) -> Option<SequenceDef> {
        let f: Vec<&str> = text.split(' ').collect();
        let [ty, start, inc, min, max, cache, cycle, owner] = f.as_slice() else {
            return None;
        };
        let owned_by = match *owner {
            "-" => None,
            o => {
                let (t, c) = o.split_once(':')?;
                Some((t.parse().ok()?, c.parse().ok()?))
            }
        };
        Some(SequenceDef {
            ty: match *ty {
                "int2" => DataType::Int2,
                "int4" => DataType::Int4,
                "int8" => DataType::Int8,
                _ => return None,
            },
            start: start.parse().ok()?,
            increment: inc.parse().ok()?,
            min: min.parse().ok()?,
            max: max.parse().ok()?,
            cache: cache.parse().ok()?,
            cycle: match *cycle {
                "cycle" => true,
                "nocycle" => false,
                _ => return None,
            },
            owned_by,
        })
    }
}

fn type_name(ty: DataType) -> &'static str {
    match ty {
        DataType::Int2 => "int2",
        DataType::Int4 => "int4",
        _ => "int8",
    }
}

/// What the page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SequenceState {
    pub last_value: i64,
    /// Values that may still be handed out before the next logged state.
    pub log_cnt: i64,
    pub is_called: bool,
}

const STATE_AT: usize = page::PAGE_HEADER_SIZE;
const STATE_SIZE: usize = 17;

impl SequenceState {
    fn read(p: &[u8]) -> SequenceState {
        let i64_at = |o: usize| i64::from_le_bytes(p[o..o + 8].try_into().expect("8 bytes"));
        SequenceState {
            last_value: i64_at(STATE_AT),
            log_cnt: i64_at(STATE_AT + 8),
            is_called: p[STATE_AT + 16] != 0,
        }
    }

    fn encode(&self) -> [u8; STATE_SIZE] {
        let mut b = [0u8; STATE_SIZE];
        b[..8].copy_from_slice(&self.last_value.to_le_bytes());
        b[8..16].copy_from_slice(&self.log_cnt.to_le_bytes());
        b[16] = self.is_called as u8;
        b
    }

    fn decode(b: &[u8]) -> Option<SequenceState> {
        (b.len() == STATE_SIZE).then(|| {
            let mut p = vec![0u8; STATE_AT];
            p.extend_from_slice(b);
            SequenceState::read(&p)
        })
    }

    /// Formats `p` as a sequence page holding this state.
    fn write(&self, p: &mut [u8]) {
        page::init(p);
        p[STATE_AT..STATE_AT + STATE_SIZE].copy_from_slice(&self.encode());
    }
}

/// Redo of a `Sequence` record: the page becomes the logged state (see the
/// module doc: always, whatever the page's LSN).
pub(crate) fn redo(p: &mut [u8], payload: &[u8]) -> Result<(), &'static str> {
    let state = SequenceState::decode(payload).ok_or("bad sequence state")?;
    state.write(p);
    Ok(())
}

/// Writes the first page of a new sequence's (empty) relation file: the
/// start value, not yet called. The creating transaction's commit makes
/// the file durable (new relations are not logged until then).
pub fn init_relation(pool: &BufferPool, def: &TableDef) -> Result<(), StorageError> {
    let seq = def.sequence.as_ref().expect("a sequence");
    let buf = pool.new_page(def.oid)?;
    let mut g = buf.lock_exclusive();
    SequenceState {
        last_value: seq.start,
        log_cnt: 0,
        is_called: false,
    }
    .write(g.page_mut());
    Ok(())
}

/// The state on the page (for `SELECT * FROM seq` and `currval` checks).
pub fn read_state(pool: &BufferPool, rel: u32) -> Result<SequenceState, StorageError> {
    let buf = pool.read_buffer(rel, 0)?;
    let g = buf.lock_shared();
    Ok(SequenceState::read(g.page()))
}

/// A value `nextval` handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextValue {
    pub value: i64,
    /// The end of the WAL record that makes the value safe after a crash,
    /// or 0 when an earlier record does (or the relation is not logged).
    pub lsn: Lsn,
}

/// `value + steps × increment` while it stays within the bounds: the
/// value after `steps` calls, or `None` past a bound.
fn advance(seq: &SequenceDef, value: i64, steps: i64) -> Option<i64> {
    let v = value.checked_add(seq.increment.checked_mul(steps)?)?;
    (seq.min..=seq.max).contains(&v).then_some(v)
}

/// `nextval` of the sequence `name` (relation `rel`, definition `seq`).
pub fn next_value(
    pool: &BufferPool,
    rel: u32,
    name: &str,
    seq: &SequenceDef,
) -> Result<NextValue, StorageError> {
    let buf = pool.read_buffer(rel, 0)?;
    let mut g = buf.lock_exclusive();
    let p = g.page_mut();
    let old = SequenceState::read(p);
    let value = if !old.is_called {
        old.last_value
    } else {
        match advance(seq, old.last_value, 1) {
            Some(v) => v,
            None if seq.cycle => {
                if seq.increment > 0 {
                    seq.min
                } else {
                    seq.max
                }
            }
            None => {
                let (which, bound) = if seq.increment > 0 {
                    ("maximum", seq.max)
                } else {
                    ("minimum", seq.min)
                };
                return Err(StorageError::report(
                    SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                    format!("nextval: reached {which} value of sequence \"{name}\" ({bound})"),
                ));
            }
        }
    };
    let wal = pool.wal_for(rel);
    let must_log = old.log_cnt <= 0 || wal.is_some_and(|w| w.needs_fpi(page::lsn(p)));
    if !must_log {
        SequenceState {
            last_value: value,
            log_cnt: old.log_cnt - 1,
            is_called: true,
        }
        .write(p);
        return Ok(NextValue { value, lsn: 0 });
    }
    // Log a state up to LOG_AHEAD values on, stopping short of a bound
    // (a cycle starts a new logged state when it wraps).
    let mut ahead = LOG_AHEAD;
    let logged = loop {
        if let Some(v) = advance(seq, value, ahead) {
            break v;
        }
        ahead -= 1;
    };
    let logged_state = SequenceState {
        last_value: logged,
        log_cnt: 0,
        is_called: true,
    };
    let lsn = log_state(pool, rel, p, &logged_state)?;
    let stamp = page::lsn(p);
    SequenceState {
        last_value: value,
        log_cnt: ahead,
        is_called: true,
    }
    .write(p);
    page::set_lsn(p, stamp);
    Ok(NextValue { value, lsn })
}

/// Logs `state` as a `Sequence` record of block 0 of `rel` and stamps the
/// page with its LSN, which it returns for the caller's flush (0, and
/// nothing logged, for a relation not yet logged). Never a page image:
/// redo rebuilds the page from the state alone.
fn log_state(
    pool: &BufferPool,
    rel: u32,
    p: &mut [u8],
    state: &SequenceState,
) -> Result<Lsn, StorageError> {
    let Some(wal) = pool.wal_for(rel) else {
        return Ok(0);
    };
    let block = BlockRef { rel, block: 0 };
    let lsn = wal.insert(RecordType::Sequence, 0, Some(block), false, &state.encode())?;
    page::set_lsn(p, lsn);
    Ok(lsn)
}

/// `setval(seq, value, is_called)`: the sequence continues after `value`
/// (or at it, when not `is_called`). Logged at once.
pub fn set_value(
    pool: &BufferPool,
    rel: u32,
    name: &str,
    seq: &SequenceDef,
    value: i64,
    is_called: bool,
) -> Result<Lsn, StorageError> {
    if !(seq.min..=seq.max).contains(&value) {
        return Err(StorageError::report(
            NUMERIC_VALUE_OUT_OF_RANGE,
            format!(
                "setval: value {value} is out of bounds for sequence \"{name}\" ({}..{})",
                seq.min, seq.max
            ),
        ));
    }
    let buf = pool.read_buffer(rel, 0)?;
    let mut g = buf.lock_exclusive();
    let p = g.page_mut();
    let state = SequenceState {
        last_value: value,
        log_cnt: 0,
        is_called,
    };
    state.write(p);
    log_state(pool, rel, p, &state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(inc: i64, min: i64, max: i64, cycle: bool) -> SequenceDef {
        SequenceDef {
            ty: DataType::Int8,
            start: if inc > 0 { min } else { max },
            increment: inc,
            min,
            max,
            cache: 1,
            cycle,
            owned_by: Some((16384, 2)),
        }
    }

    #[test]
    fn definitions_round_trip() {
        for d in [def(1, 1, i64::MAX, false), def(-3, -100, -1, true)] {
            assert_eq!(SequenceDef::decode(&d.encode()), Some(d.clone()));
        }
        let mut d = def(1, 1, 10, false);
        d.owned_by = None;
        d.ty = DataType::Int2;
        assert_eq!(SequenceDef::decode(&d.encode()), Some(d));
        assert_eq!(SequenceDef::decode("int8 1 1 1 10 1 nocycle"), None);
        assert_eq!(SequenceDef::decode("int9 1 1 1 10 1 nocycle -"), None);
    }

    #[test]
    fn states_round_trip_through_pages_and_records() {
        let s = SequenceState {
            last_value: -42,
            log_cnt: 7,
            is_called: true,
        };
        let mut p = vec![0u8; page::PAGE_SIZE];
        s.write(&mut p);
        assert_eq!(SequenceState::read(&p), s);
        assert_eq!(SequenceState::decode(&s.encode()), Some(s));
        let mut q = vec![0xffu8; page::PAGE_SIZE];
        redo(&mut q, &s.encode()).unwrap();
        assert_eq!(SequenceState::read(&q), s);
        assert!(redo(&mut q, &[1, 2]).is_err());
    }

    #[test]
    fn advancing_stops_at_the_bounds() {
        let up = def(5, 1, 20, false);
        assert_eq!(advance(&up, 1, 3), Some(16));
        assert_eq!(advance(&up, 16, 1), None);
        let down = def(-1, i64::MIN, -1, false);
        assert_eq!(advance(&down, i64::MIN + 1, 1), Some(i64::MIN));
        assert_eq!(advance(&down, i64::MIN, 1), None);
        assert_eq!(advance(&def(i64::MAX, 1, i64::MAX, false), 2, 1), None);
    }
}
