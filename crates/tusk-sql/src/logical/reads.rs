//! The columns a logical plan reads: what scans must produce, and what a
//! subtree must hand to the rest of the plan.
//!
//! A column is read when an expression of some node reads it (a filter, a
//! join condition, a group key, an aggregate's argument, ...), when it is
//! one of the statement's outputs or a CTE's, or when a node compares or
//! returns whole rows of its input (DISTINCT, set operations, a scalar
//! subquery's value). A projection's expressions count only once the
//! projection's own output is read, so a column passed through projections
//! that nobody reads is never scanned.
//!
//! [`columns_read`] is that set for a whole statement; the physical planner
//! narrows scans to it. [`columns_read_outside`] leaves one subtree out:
//! the columns the rest of the statement reads, which is all that subtree's
//! output has to carry (a join's output columns beyond them are dropped, see
//! `physical::narrow`). The subtree is found by address, so it must be a
//! node of the statement's tree itself, not a copy: for a copy the answer
//! is `None` and nothing is dropped.

use super::{CteDef, Logical, SubqueryKind};
use crate::logical::ColumnId;
use std::collections::HashSet;

/// Every column the statement (`plan`, its CTEs `ctes`, its outputs `out`)
/// reads (see the module doc).
pub fn columns_read(plan: &Logical, ctes: &[CteDef], out: &[ColumnId]) -> HashSet<ColumnId> {
    let mut reads = Reads::new(None);
    reads.statement(plan, ctes, out);
    reads.finish()
}

/// The columns the statement reads outside `subtree` (see the module doc);
/// `None` when `subtree` is not a node of the statement's tree.
pub fn columns_read_outside(
    plan: &Logical,
    ctes: &[CteDef],
    out: &[ColumnId],
    subtree: &Logical,
) -> Option<HashSet<ColumnId>> {
    let mut reads = Reads::new(Some(subtree));
    reads.statement(plan, ctes, out);
    reads.found.then(|| reads.finish())
}

struct Reads<'s> {
    used: HashSet<ColumnId>,
    /// Projections' output ids and what each one's expression reads,
    /// counted once the output is read.
    projected: Vec<(ColumnId, Vec<ColumnId>)>,
    skip: Option<&'s Logical>,
    found: bool,
}

impl<'s> Reads<'s> {
    fn new(skip: Option<&'s Logical>) -> Self {
        Reads {
            used: HashSet::new(),
            projected: Vec::new(),
            skip,
            found: false,
        }
    }

    fn statement(&mut self, plan: &Logical, ctes: &[CteDef], out: &[ColumnId]) {
        self.used.extend(out.iter().copied());
        self.walk(plan);
        for c in ctes {
            self.used.extend(c.cols.iter().copied());
            self.walk(&c.plan);
        }
    }

    fn walk(&mut self, p: &Logical) {
        if self.skip.is_some_and(|s| std::ptr::eq(s, p)) {
            self.found = true;
            return;
        }
        match p {
            Logical::Project { exprs, .. } => {
                for (id, e) in exprs {
                    let mut v = Vec::new();
                    e.columns(&mut v);
                    if e.is_volatile() {
                        // Evaluated for every row whether read or not.
                        self.used.insert(*id);
                    }
                    self.projected.push((*id, v));
                }
            }
            _ => p.for_each_expr(&mut |e| {
                let mut v = Vec::new();
                e.columns(&mut v);
                self.used.extend(v);
            }),
        }
        match p {
            Logical::SetOp { left, right, .. }
            | Logical::RecursiveUnion {
                seed: left,
                step: right,
                ..
            } => {
                self.used.extend(left.output());
                self.used.extend(right.output());
            }
            // DISTINCT compares whole rows of its input.
            Logical::Distinct { input, .. } => self.used.extend(input.output()),
            // A scalar subquery's value is its first column.
            Logical::Apply {
                subquery,
                kind: SubqueryKind::Scalar,
                ..
            } => self.used.extend(subquery.output().first().copied()),
            _ => {}
        }
        for c in p.children() {
            self.walk(c);
        }
    }

    /// The read columns, with the projections' reads whose output is read.
    fn finish(mut self) -> HashSet<ColumnId> {
        loop {
            let before = self.used.len();
            for (id, reads) in &self.projected {
                if self.used.contains(id) {
                    self.used.extend(reads.iter().copied());
                }
            }
            if self.used.len() == before {
                return self.used;
            }
        }
    }
}
