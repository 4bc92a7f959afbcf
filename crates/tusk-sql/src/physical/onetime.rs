//! One-time filters (`rewrite::onetime`): a Result node whose filter is
//! evaluated once, before its input runs.
//!
//! The filter's subqueries are planned as SubPlans over one row of no
//! columns, the Result's second (*init*) child: the filter reads their
//! values from the row it produces. A filter without subqueries needs no
//! init child, and a query without FROM needs no input either: the
//! Result's own row is the one row it filters.

use super::{Phys, Planner, Result};
use crate::logical::Logical;
use tusk_exec::{Expr, NodeKind};

impl Planner<'_> {
    pub(super) fn one_time_filter(
        &mut self,
        input: &Logical,
        init: &Logical,
        predicate: &Expr,
    ) -> Result<Phys> {
        // The filter's subqueries are numbered first: it is tested first.
        let init = self.plan(init)?;
        let child = self.plan(input)?;
        let ordered = super::cost::ordered_and(vec![predicate.clone()]).expect("a predicate");
        let filter = self.remap(&ordered, &init.cols)?;
        let unit =
            matches!(input, Logical::Values { rows, cols } if rows.len() == 1 && cols.is_empty());
        let est = child.plan.est;
        let children = match (unit, init.cols.is_empty()) {
            (true, true) => vec![],
            (false, true) => vec![child.plan],
            (_, false) => vec![child.plan, init.plan],
        };
        Ok(self.node(
            NodeKind::Result {
                one_time_filter: Some(filter),
            },
            children,
            child.cols,
            est,
        ))
    }
}
