//! Range scans: TIDs in key order between two encoded bounds, forward or
//! backward.
//!
//! A bound is the encoding of a prefix of the key's columns (see `keyenc`:
//! equality on the leading columns plus a range on the next one becomes a
//! lower and an upper bound that share the equality columns), inclusive or
//! exclusive. A key is within an inclusive upper bound when its leading
//! columns are at most the bound's, so `Included(enc(1))` as the upper bound
//! of a two-column index takes every key whose first column is 1.
//! [`ScanBounds::build`] makes the bounds from values, for columns in any
//! order (DESC and NULLS FIRST/LAST), with `IS NULL` as a NULL value.
//!
//! A [`Cursor`] hands out TIDs in batches and holds no lock or pin between
//! them. Forward, it remembers the last entry it returned and resumes on the
//! same leaf, moving right if the leaf split meanwhile. Backward, each leaf
//! is found by a descent from the root for the last entry it returned
//! (there are no left links): the entries before it on that leaf come next,
//! and when there are none the descent for the leaf's lower bound finds
//! the leaf before.

use super::keyenc::{cmp_prefix, Datum, KeyEncoder, TypeMismatch};
use super::node::{self, NO_BLOCK};
use super::search::{LowBound, Target};
use super::{corrupt, Btree};
use crate::bufmgr::BufferPool;
use crate::heap::Tid;
use crate::StorageError;
use std::cmp::Ordering;
use std::ops::Bound;

/// The direction of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    #[default]
    Forward,
    Backward,
}

/// Encoded lower and upper bounds of a scan, in index order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanBounds {
    pub lo: Bound<Vec<u8>>,
    pub hi: Bound<Vec<u8>>,
}

impl ScanBounds {
    /// Every entry.
    pub fn all() -> ScanBounds {
        ScanBounds {
            lo: Bound::Unbounded,
            hi: Bound::Unbounded,
        }
    }

    /// The bounds for "the leading columns equal `eq` (a NULL meaning IS
    /// NULL), and the next column lies between `lo` and `hi`" — in value
    /// order, as a WHERE clause says it: `lo` is the smaller value whatever
    /// the column's DESC option. Unbounded range ends never take NULLs;
    /// `range: None` puts no condition on the next column (and takes its
    /// NULLs). The result is in index order; scan it forward for the
    /// index's order, backward for the reverse.
    pub fn build(
        enc: &KeyEncoder,
        eq: &[Datum<'_>],
        range: Option<(Bound<Datum<'_>>, Bound<Datum<'_>>)>,
    ) -> Result<ScanBounds, TypeMismatch> {
        let prefix = enc.encode_prefix(eq)?;
        let Some((lo, hi)) = range else {
            return Ok(ScanBounds {
                lo: Bound::Included(prefix.clone()),
                hi: Bound::Included(prefix),
            });
        };
        let col = eq.len();
        let (_, order) = enc.columns()[col];
        let with = |v: &Datum<'_>| -> Result<Vec<u8>, TypeMismatch> {
            let mut vals = eq.to_vec();
            vals.push(*v);
            enc.encode_prefix(&vals)
        };
        let null = with(&Datum::Null)?;
        // An open end in value order: all values on that side, no NULLs.
        // NULLs sit before the values (NULLS FIRST) or after them.
        let open_low = |nulls_on_this_side: bool| {
            if nulls_on_this_side {
                Bound::Excluded(null.clone())
            } else {
                Bound::Included(prefix.clone())
            }
        };
        let map = |b: &Bound<Datum<'_>>| -> Result<Option<Bound<Vec<u8>>>, TypeMismatch> {
            Ok(match b {
                Bound::Unbounded => None,
                Bound::Included(v) => Some(Bound::Included(with(v)?)),
                Bound::Excluded(v) => Some(Bound::Excluded(with(v)?)),
            })
        };
        let (vlo, vhi) = (map(&lo)?, map(&hi)?);
        // In index order a DESC column's values run from high to low.
        let (ilo, ihi) = if order.desc { (vhi, vlo) } else { (vlo, vhi) };
        Ok(ScanBounds {
            lo: ilo.unwrap_or_else(|| open_low(order.nulls_first)),
            hi: ihi.unwrap_or_else(|| {
                if order.nulls_first {
                    Bound::Included(prefix.clone())
                } else {
                    Bound::Excluded(null.clone())
                }
            }),
        })
    }
}

/// Where a cursor is.
#[derive(Debug, Clone)]
enum Position {
    /// Not started.
    Start,
    /// Forward: on `block` (or a right sibling of it, after a split), after
    /// the entry `after`, or from the lower bound if `None`.
    Forward {
        block: u32,
        after: Option<(Vec<u8>, Tid)>,
    },
    /// Backward: before the entry (key, TID), which need not exist (it may
    /// be a leaf's lower bound).
    Before(Vec<u8>, Tid),
    Done,
}

/// Walks the entries between two bounds, handing out TIDs in batches (see
/// the module doc).
pub struct Cursor {
    rel: u32,
    bounds: ScanBounds,
    dir: Direction,
    pos: Position,
}

/// Whether `key` is above the lower bound.
fn above_lo(key: &[u8], lo: &Bound<Vec<u8>>) -> bool {
    match lo {
        Bound::Unbounded => true,
        Bound::Included(b) => cmp_prefix(key, b) != Ordering::Less,
        Bound::Excluded(b) => cmp_prefix(key, b) == Ordering::Greater,
    }
}

/// Whether `key` is below the upper bound.
fn below_hi(key: &[u8], hi: &Bound<Vec<u8>>) -> bool {
    match hi {
        Bound::Unbounded => true,
        Bound::Included(b) => cmp_prefix(key, b) != Ordering::Greater,
        Bound::Excluded(b) => cmp_prefix(key, b) == Ordering::Less,
    }
}

impl Btree<'_> {
    /// A cursor over the entries within `bounds`, in `dir`.
    /// The tree is first read by the cursor's first batch.
    pub fn scan(&self, bounds: ScanBounds, dir: Direction) -> Result<Cursor, StorageError> {
        Ok(Cursor {
            rel: self.rel,
            bounds,
            dir,
            pos: Position::Start,
        })
    }
}

impl Cursor {
    /// Appends up to `max` TIDs of the index (in `pool`) to `out`; returns
    /// false once the range is exhausted.
    pub fn next_batch(
        &mut self,
        pool: &BufferPool,
        out: &mut Vec<Tid>,
        max: usize,
    ) -> Result<bool, StorageError> {
        let target = out.len() + max;
        while out.len() < target && !matches!(self.pos, Position::Done) {
            match self.dir {
                Direction::Forward => self.forward(pool, out, target)?,
                Direction::Backward => self.backward(pool, out, target)?,
            }
        }
        Ok(!matches!(self.pos, Position::Done))
    }

    /// The search target of the lower bound.
    fn lo_target(&self) -> Target<'_> {
        match &self.bounds.lo {
            Bound::Unbounded => Target::Leftmost,
            Bound::Included(b) => Target::Prefix {
                prefix: b,
                strict: false,
            },
            Bound::Excluded(b) => Target::Prefix {
                prefix: b,
                strict: true,
            },
        }
    }

    /// Reads forward from the current position on one leaf.
    fn forward(
        &mut self,
        pool: &BufferPool,
        out: &mut Vec<Tid>,
        target: usize,
    ) -> Result<(), StorageError> {
        let (block, after, pinned) = match std::mem::replace(&mut self.pos, Position::Done) {
            Position::Start => {
                let (d, leaf) = Btree::new(pool, self.rel).descend_for_scan(&self.lo_target())?;
                (d.leaf, None, Some(leaf))
            }
            Position::Forward { block, after } => (block, after, None),
            _ => unreachable!("a forward cursor"),
        };
        let buf = match pinned {
            Some(leaf) => leaf,
            None => pool.read_buffer(self.rel, block)?,
        };
        let g = buf.lock_shared();
        let p = g.page();
        if !node::is_node(p) || !node::is_leaf(p) {
            return Err(corrupt(self.rel, block));
        }
        let t = match &after {
            Some((k, tid)) => Target::After(k, *tid),
            None => self.lo_target(),
        };
        if t.beyond(p) {
            // Split since the last batch: our place moved right.
            let right = node::right(p);
            if right == NO_BLOCK {
                return Err(corrupt(self.rel, block));
            }
            self.pos = Position::Forward {
                block: right,
                after,
            };
            return Ok(());
        }
        let n = node::count(p);
        let mut i = t.position(p);
        while i < n && out.len() < target {
            let e = node::entry(p, i);
            if !below_hi(e.key, &self.bounds.hi) {
                return Ok(());
            }
            out.push(e.tid);
            i += 1;
        }
        self.pos = if i < n {
            let e = node::entry(p, i - 1);
            Position::Forward {
                block,
                after: Some((e.key.to_vec(), e.tid)),
            }
        } else {
            match node::right(p) {
                NO_BLOCK => Position::Done,
                // Every entry of the right sibling is above this page's
                // and, as the high key was after the target, after it.
                right => Position::Forward {
                    block: right,
                    after: n.checked_sub(1).map(|j| {
                        let e = node::entry(p, j);
                        (e.key.to_vec(), e.tid)
                    }),
                },
            }
        };
        Ok(())
    }

    /// Reads backward: one descent, then the leaf's entries before the
    /// position.
    fn backward(
        &mut self,
        pool: &BufferPool,
        out: &mut Vec<Tid>,
        target: usize,
    ) -> Result<(), StorageError> {
        let pos = std::mem::replace(&mut self.pos, Position::Done);
        let t = match &pos {
            Position::Start => match &self.bounds.hi {
                Bound::Unbounded => Target::Rightmost,
                Bound::Included(b) => Target::Prefix {
                    prefix: b,
                    strict: true,
                },
                Bound::Excluded(b) => Target::Prefix {
                    prefix: b,
                    strict: false,
                },
            },
            Position::Before(k, t) => Target::AtOrAfter(k, *t),
            _ => unreachable!("a backward cursor"),
        };
        let d = Btree::new(pool, self.rel).descend(&t, true)?;
        let (mut block, mut low) = (d.leaf, d.low);
        loop {
            let buf = pool.read_buffer(self.rel, block)?;
            let g = buf.lock_shared();
            let p = g.page();
            if !node::is_node(p) || !node::is_leaf(p) {
                return Err(corrupt(self.rel, block));
            }
            if t.beyond(p) {
                // The leaf split since the descent let go of it.
                let h = node::high_key(p).expect("beyond implies a high key");
                low = Some((h.key.to_vec(), h.tid));
                block = node::right(p);
                if block == NO_BLOCK {
                    return Err(corrupt(self.rel, block));
                }
                continue;
            }
            let mut i = t.position(p);
            while i > 0 && out.len() < target {
                let e = node::entry(p, i - 1);
                if !above_lo(e.key, &self.bounds.lo) {
                    return Ok(());
                }
                out.push(e.tid);
                i -= 1;
            }
            self.pos = if i > 0 {
                // Entry `i` was the last one taken.
                let e = node::entry(p, i);
                Position::Before(e.key.to_vec(), e.tid)
            } else {
                step_left(low, &self.bounds.lo)
            };
            return Ok(());
        }
    }
}

/// After the first entry of a leaf whose lower bound is `low`: continue
/// before that bound, unless the leaf is the leftmost or the bound is
/// already below the scan's lower bound.
fn step_left(low: LowBound, lo: &Bound<Vec<u8>>) -> Position {
    match low {
        None => Position::Done,
        Some((k, t)) => {
            // Entries before `low` are below it; if even `low` is not above
            // the lower bound, none of them is.
            if matches!(lo, Bound::Unbounded) || above_lo(&k, lo) {
                Position::Before(k, t)
            } else {
                Position::Done
            }
        }
    }
}
