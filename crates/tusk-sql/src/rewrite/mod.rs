//! Rewrite passes over the logical plan, one per module, run in this order:
//!
//! 1. `fold`: constant folding with PostgreSQL's evaluation order (which
//!    also decides which errors a statement raises at plan time);
//! 2. `decorrelate`: subqueries in expressions become joins where they can;
//! 3. `pushdown`: filters move toward the scans, and outer joins that a
//!    filter makes inner become inner.
//!
//! Each pass takes a valid plan and returns one that computes the same
//! result: the same rows (as a multiset, or in order under a Sort) and the
//! same error, if PostgreSQL raises one.

pub mod decorrelate;
pub mod fold;
pub mod pushdown;

use crate::error::SqlError;
use crate::logical::{Columns, Logical};

/// Runs every pass.
pub fn rewrite(mut plan: Logical, cols: &mut Columns) -> Result<Logical, SqlError> {
    fold::fold_plan(&mut plan)?;
    let plan = decorrelate::decorrelate(plan, cols);
    Ok(pushdown::push_down(plan))
}
