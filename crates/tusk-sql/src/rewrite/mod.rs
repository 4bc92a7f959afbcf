//! Rewrite passes over the logical plan, one per module, run in this order:
//!
//! 0. `decorrelate::simplify_exists`: EXISTS subqueries lose their select
//!    lists, which PostgreSQL never evaluates;
//! 1. `pullup::substitute_flattened_constants`: the constant select-list
//!    entries of an `IN` subquery PostgreSQL flattens into a semi join go
//!    into its test, which folding then sees as PostgreSQL does;
//! 2. `fold`: constant folding with PostgreSQL's evaluation order (which
//!    also decides which errors a statement raises at plan time), then
//!    the subqueries whose value folding left unread go;
//! 3. `orfactor`: conjuncts common to every arm of an OR move out of it,
//!    so that a join condition written in each arm becomes a join key;
//! 4. `orsplit`: an OR over several relations of an inner join implies an
//!    OR over each relation's own conjuncts, added for the scans;
//! 5. `decorrelate`: subqueries in expressions become joins where they can;
//! 6. `onetime`: conjuncts that read no column of the rows they filter
//!    (over uncorrelated subqueries, or none) gate their join tree;
//! 7. `pushdown`: filters move toward the scans, and outer joins that a
//!    filter makes inner become inner.
//!
//! Each pass takes a valid plan and returns one that computes the same
//! result: the same rows (as a multiset, or in order under a Sort) and the
//! same error, if PostgreSQL raises one.

pub mod decorrelate;
pub mod fold;
pub mod onetime;
pub mod orfactor;
pub mod orsplit;
pub mod pullup;
pub mod pushdown;

use crate::error::SqlError;
use crate::logical::{Columns, Logical};

/// Runs every pass.
pub fn rewrite(mut plan: Logical, cols: &mut Columns) -> Result<Logical, SqlError> {
    decorrelate::simplify_exists(&mut plan);
    pullup::substitute_flattened_constants(&mut plan);
    fold::fold_plan(&mut plan)?;
    fold::drop_unread_subqueries(&mut plan);
    orfactor::factor_ors(&mut plan);
    orsplit::derive_restrictions(&mut plan);
    let plan = decorrelate::decorrelate(plan, cols);
    let plan = onetime::one_time_filters(plan);
    Ok(pushdown::push_down(plan))
}
