//! Three-valued logic: n-ary AND / OR with short-circuit masks, and
//! `IS [NOT] TRUE | FALSE | UNKNOWN`; and qual lists, the two-valued AND of
//! a WHERE clause.
//!
//! An AND keeps, per row, the state so far: true, NULL, or false (decided).
//! Each term is evaluated only for active rows not yet decided, so a later
//! term never raises an error for a row an earlier term rejected, as in
//! PostgreSQL's left-to-right evaluation. OR is the mirror image, with true
//! decisive. Terms are a vector (see `Expr::and`), so 100,000 of them cost
//! one loop, not a recursion.

use super::{bools, Expr};
use crate::error::Result;
use crate::vector::{Batch, Data, Vector};

/// The tests of `IS [NOT] TRUE | FALSE | UNKNOWN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolTest {
    IsTrue,
    IsNotTrue,
    IsFalse,
    IsNotFalse,
    IsUnknown,
    IsNotUnknown,
}

impl BoolTest {
    /// The SQL words after the argument (`IS NOT TRUE`).
    pub fn sql(self) -> &'static str {
        match self {
            BoolTest::IsTrue => "IS TRUE",
            BoolTest::IsNotTrue => "IS NOT TRUE",
            BoolTest::IsFalse => "IS FALSE",
            BoolTest::IsNotFalse => "IS NOT FALSE",
            BoolTest::IsUnknown => "IS UNKNOWN",
            BoolTest::IsNotUnknown => "IS NOT UNKNOWN",
        }
    }

    /// The test applied to one value (`None` = NULL).
    pub fn apply(self, v: Option<bool>) -> bool {
        match self {
            BoolTest::IsTrue => v == Some(true),
            BoolTest::IsNotTrue => v != Some(true),
            BoolTest::IsFalse => v == Some(false),
            BoolTest::IsNotFalse => v != Some(false),
            BoolTest::IsUnknown => v.is_none(),
            BoolTest::IsNotUnknown => v.is_some(),
        }
    }
}

pub(super) fn bool_test(v: &Vector, test: BoolTest) -> Result<Vector> {
    let (b, nulls) = bools(v)?;
    let out = (0..b.len())
        .map(|i| {
            let x = if nulls.is_some_and(|m| m[i]) {
                None
            } else {
                Some(b[i])
            };
            test.apply(x)
        })
        .collect();
    Ok(Vector::new(Data::Bool(out), None))
}

/// Per-row state of an n-ary AND / OR.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// No term decided the row and none was NULL.
    Open,
    /// No term decided the row; one was NULL.
    Null,
    /// A term decided the row (false for AND, true for OR).
    Decided,
}

pub(super) fn eval_nary(
    terms: &[Expr],
    is_and: bool,
    batch: &Batch,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let n = batch.len;
    let decisive = !is_and;
    let mut state = vec![State::Open; n];
    // Rows the next term must be evaluated for.
    let mut mask: Vec<bool> = (0..n).map(|i| super::live(active, i)).collect();
    for (k, term) in terms.iter().enumerate() {
        let v = if k == 0 {
            term.eval_active(batch, active)?
        } else {
            if !mask.contains(&true) {
                break;
            }
            term.eval_active(batch, Some(&mask))?
        };
        let (b, nulls) = bools(&v)?;
        for i in 0..n {
            if !mask[i] {
                continue;
            }
            if nulls.is_some_and(|m| m[i]) {
                state[i] = State::Null;
            } else if b[i] == decisive {
                state[i] = State::Decided;
                mask[i] = false;
            }
        }
    }
    let out = state
        .iter()
        .map(|s| match s {
            State::Decided => decisive,
            _ => !decisive,
        })
        .collect();
    let nulls = state.iter().map(|s| *s == State::Null).collect();
    Ok(Vector::new(Data::Bool(out), Some(nulls)))
}

/// Per row, whether `v` (a boolean vector) is true: neither false nor NULL.
/// The vector's own flags are the answer when it has no NULLs.
pub(super) fn true_rows(v: Vector) -> Result<Vec<bool>> {
    match v {
        Vector {
            data: Data::Bool(b),
            nulls: None,
        } => Ok(b),
        v => {
            let (b, nulls) = bools(&v)?;
            Ok(match nulls {
                Some(m) => b.iter().zip(m).map(|(&t, &null)| t && !null).collect(),
                None => b.to_vec(),
            })
        }
    }
}

/// The rows for which every term is true, as PostgreSQL's ExecQual reads
/// a qual list: each term is evaluated only for the rows every earlier term
/// kept, and false and NULL both reject.
///
/// Once fewer than a quarter of the rows are left, the batch is narrowed to
/// them (the columns the remaining terms read are gathered, the others left
/// empty) and the remaining terms are evaluated on that: most kernels
/// compute every row and only mask the result, so without it a selective
/// first term would spare the later ones no work.
pub(super) fn eval_qual_list(terms: &[Expr], batch: &Batch) -> Result<Vec<bool>> {
    let mut keep = vec![true; batch.len];
    let mut left = batch.len;
    for (k, term) in terms.iter().enumerate() {
        if left == 0 {
            break;
        }
        if k > 0 && left * 4 < batch.len {
            let idx: Vec<u32> = (0..batch.len as u32)
                .filter(|&i| keep[i as usize])
                .collect();
            let narrow = gather_read(&terms[k..], batch, &idx);
            let passed = eval_qual_list(&terms[k..], &narrow)?;
            keep.iter_mut().for_each(|x| *x = false);
            for (&i, p) in idx.iter().zip(passed) {
                keep[i as usize] = p;
            }
            return Ok(keep);
        }
        let v = term.eval_active(batch, (k > 0).then_some(keep.as_slice()))?;
        let t = true_rows(v)?;
        if k == 0 {
            left = t.iter().filter(|&&p| p).count();
            keep = t;
            continue;
        }
        left = 0;
        for (kept, passed) in keep.iter_mut().zip(t) {
            *kept &= passed;
            left += *kept as usize;
        }
    }
    Ok(keep)
}

/// The rows `idx` of the columns of `batch` that `terms` read; the other
/// columns are left empty (nothing reads them), unless a term reads a
/// deferred column.
fn gather_read(terms: &[Expr], batch: &Batch, idx: &[u32]) -> Batch {
    let mut read = Vec::new();
    for t in terms {
        t.columns(&mut read);
    }
    let mut wanted = vec![false; batch.columns.len()];
    let mut deferred = false;
    for c in read {
        match wanted.get_mut(c) {
            Some(w) => *w = true,
            None => deferred = true,
        }
    }
    // A column past the end is a deferred one (see `deferred`), computed
    // from whichever of the batch's columns its subquery's parameters
    // read: then every column is gathered.
    if deferred {
        wanted.fill(true);
    }
    let columns = batch
        .columns
        .iter()
        .zip(wanted)
        .map(|(c, w)| if w { c.gather(idx) } else { c.gather(&[]) })
        .collect();
    Batch {
        columns,
        len: idx.len(),
    }
}
