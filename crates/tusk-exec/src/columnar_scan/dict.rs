//! Filter terms tested once per dictionary entry.
//!
//! A term of the scan's filter (a conjunct of its top-level AND, or the
//! whole filter) that reads a single `text`, `varchar` or `char(n)`
//! column — `p_type LIKE '%BRASS'`, `kind NOT ILIKE 'x%' OR kind IS NULL`
//! — has the same value for every row holding the same string. When that
//! column's segment in a row group is dictionary-encoded, the term is
//! evaluated once over the dictionary's entries (and once for NULL), and
//! each row is kept or dropped by its code; the term is left out of the
//! filter the group's other rows still go through, so its strings are
//! never made for it.
//!
//! ## When a term qualifies
//!
//! Evaluating a term over every entry evaluates it on strings the batch's
//! rows may not hold (rows of other batches, deleted rows), and before the
//! terms ahead of it. That changes no outcome only when no input can make
//! it raise an error ([`Expr::cannot_raise`]), when it gives the same
//! value every time (not volatile), and when no term ahead of it can raise
//! an error either: those terms then run, for the rows the term keeps, as
//! they would have, and the terms after it see the same rows as before.

use super::EarlyFilter;
use crate::error::Result;
use crate::expr::Expr;
use crate::vector::{Batch, Data, Strings, Vector};
use tusk_storage::DataType;

/// A filter term that can be tested on a dictionary's entries.
pub(super) struct DictTerm {
    /// Position among the filter's terms.
    term: usize,
    /// Output position of the column it reads.
    pub column: usize,
    /// The term over a batch of that column alone.
    expr: Expr,
}

/// A term's outcome per dictionary entry of one row group's segment.
pub(super) struct DictTest {
    pub column: usize,
    /// Whether a row with code `i` passes.
    pub pass: Vec<bool>,
    /// Whether a NULL row passes.
    pub null_pass: bool,
}

/// How a row group's rows are filtered: the terms tested on dictionaries,
/// and the rest of the filter (`None`: nothing left).
pub(super) struct GroupFilter {
    pub tests: Vec<DictTest>,
    pub rest: Option<EarlyFilter>,
}

/// The terms of `filter` (over output positions, `types` their types)
/// that qualify (see the module doc).
pub(super) fn dict_terms(filter: &Expr, types: &[DataType]) -> Vec<DictTerm> {
    let mut out = Vec::new();
    for (k, term) in terms(filter).iter().enumerate() {
        let mut cols = Vec::new();
        term.columns(&mut cols);
        cols.sort_unstable();
        cols.dedup();
        let string = |c: usize| {
            matches!(
                types.get(c),
                Some(DataType::Text | DataType::Varchar | DataType::Bpchar)
            )
        };
        if let [c] = cols[..] {
            if string(c) && term.cannot_raise() && !term.is_volatile() {
                let mut expr = term.clone();
                expr.remap_columns(&|_| 0);
                out.push(DictTerm {
                    term: k,
                    column: c,
                    expr,
                });
            }
        }
        if !term.cannot_raise() {
            // No later term may go ahead of this one.
            break;
        }
    }
    out
}

/// The filter's terms: its top-level AND's, or itself.
fn terms(filter: &Expr) -> &[Expr] {
    match filter {
        Expr::And(ts) => ts,
        e => std::slice::from_ref(e),
    }
}

/// `term`'s outcome for each of `entries` and for NULL.
pub(super) fn test_entries(term: &DictTerm, entries: &[&[u8]]) -> Result<DictTest> {
    let mut s = Strings::with_capacity(entries.len() + 1, 0);
    for e in entries {
        s.push(e);
    }
    s.push(b"");
    let mut nulls = vec![false; entries.len() + 1];
    nulls[entries.len()] = true;
    let batch = Batch::new(
        vec![Vector::new(Data::Text(s), Some(nulls))],
        entries.len() + 1,
    );
    let mut pass = term.expr.eval_qual(&batch)?;
    let null_pass = pass.pop().expect("the NULL row");
    Ok(DictTest {
        column: term.column,
        pass,
        null_pass,
    })
}

/// The filter left once the terms at positions `handled` are tested on
/// dictionaries: the other terms, over the columns they read.
pub(super) fn rest_of(filter: &Expr, handled: &[usize]) -> Option<EarlyFilter> {
    let left: Vec<Expr> = terms(filter)
        .iter()
        .enumerate()
        .filter(|(k, _)| !handled.contains(k))
        .map(|(_, t)| t.clone())
        .collect();
    let expr = match left.len() {
        0 => return None,
        1 => left.into_iter().next().expect("one term"),
        _ => Expr::And(left),
    };
    Some(EarlyFilter::over_read_columns(expr))
}

impl DictTerm {
    pub fn term(&self) -> usize {
        self.term
    }
}
