//! Deferred columns: values an expression computes only for the rows that
//! reach them.
//!
//! PostgreSQL evaluates a SubPlan as a node of the expression that holds
//! it, so a scalar subquery in a CASE branch runs only for the rows that
//! take the branch, one in a COALESCE argument only where the arguments
//! before it are NULL, one after an AND term only where that term is not
//! false, one in a later pair of a row comparison only where the earlier
//! pairs are equal. Its errors (`more than one row returned by a subquery
//! used as an expression`, a division by zero in its parameters) come only
//! from those rows.
//!
//! tusk computes subqueries in a SubPlans node that appends their values as
//! columns below the expression that reads them. The Filter or Project
//! directly above such a node evaluates its expressions over the node's
//! *input* instead, with the subqueries installed here ([`install`]): a
//! column reference past the end of the batch is a deferred column, and
//! [`compute`] asks the installed [`DeferredColumns`] for its values on the
//! rows active at that reference (the evaluator's active mask, see
//! `expr`). Rows outside the mask get no value that anyone reads and raise
//! no error.
//!
//! Installations nest as a stack per thread: a subquery computed on demand
//! runs its own plan, whose Filters and Projects install their own deferred
//! columns on top and remove them before returning. A deferred column's own
//! inputs may be deferred columns of the same installation (a subquery's
//! parameters may read an earlier subquery's value), so [`compute`] does not
//! hold the stack while the installation works.

use crate::error::{ExecError, Result};
use crate::vector::{Batch, Vector};
use std::cell::RefCell;
use std::rc::Rc;

/// Columns `width..` of batches `width` columns wide, computed on demand.
pub trait DeferredColumns {
    /// The width of the batches whose columns past the end these are.
    fn width(&self) -> usize;

    /// Column `index` (at least [`DeferredColumns::width`]) of `batch`,
    /// valued on the rows `active` marks (all when `None`).
    fn compute(&self, index: usize, batch: &Batch, active: Option<&[bool]>) -> Result<Vector>;
}

thread_local! {
    static INSTALLED: RefCell<Vec<Rc<dyn DeferredColumns>>> = const { RefCell::new(Vec::new()) };
}

/// Removes an installation when dropped (also on an early return or
/// unwinding).
#[must_use = "the deferred columns are removed when the guard drops"]
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        INSTALLED.with(|s| s.borrow_mut().pop());
    }
}

/// Makes `columns` the deferred columns of the expressions evaluated on
/// this thread until the guard drops.
pub fn install(columns: &Rc<dyn DeferredColumns>) -> Installed {
    INSTALLED.with(|s| s.borrow_mut().push(columns.clone()));
    Installed(())
}

/// The deferred column `index` of `batch` on the `active` rows, from the
/// innermost installation; an error when none covers a batch this wide.
pub(crate) fn compute(index: usize, batch: &Batch, active: Option<&[bool]>) -> Result<Vector> {
    let top = INSTALLED.with(|s| s.borrow().last().cloned());
    match top {
        Some(cols) if cols.width() == batch.columns.len() && index >= cols.width() => {
            cols.compute(index, batch, active)
        }
        _ => Err(ExecError::new(format!(
            "column {index} is outside a batch of {} columns",
            batch.columns.len()
        ))),
    }
}
