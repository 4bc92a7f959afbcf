//! InitPlan numbers in PostgreSQL's order.
//!
//! PostgreSQL numbers a query level's subqueries in the order it
//! preprocesses its expressions: the select list's, then the WHERE
//! clause's in the written order, then HAVING's (a subquery's own before
//! it). The binder binds them in that order too, so the value column each
//! InitPlan computes (its Apply's `out`) is numbered in that order. The
//! planner numbers SubPlans as it meets them, top-down, which puts a
//! clause's InitPlans in reverse (the binder stacks them first-innermost)
//! and InitPlans that push-down moved into different relations in join
//! order. So the planner records each InitPlan's number and value column
//! ([`Planner::record_init_plan`]), and once the plan is made
//! [`renumber_init_plans`] hands the InitPlans' numbers out again in the
//! order of their value columns. SubPlans keep their numbers; an
//! InitPlan's `$n` follows its number (see `explain`).

use super::Planner;
use crate::logical::ColumnId;
use std::collections::HashMap;
use tusk_exec::plan::{NodeKind, Plan, Statement};

impl Planner<'_> {
    /// Notes that the InitPlan numbered `number` computes column `out`.
    pub(super) fn record_init_plan(&mut self, number: usize, out: ColumnId) {
        self.init_plans.push((number, out));
    }
}

/// Renumbers the InitPlans of `stmt` (recorded as `(number, out)`) in the
/// order of their value columns, among the numbers they hold.
pub(super) fn renumber_init_plans(stmt: &mut Statement, recorded: &[(usize, ColumnId)]) {
    let mut numbers: Vec<usize> = recorded.iter().map(|(n, _)| *n).collect();
    numbers.sort_unstable();
    let mut by_column = recorded.to_vec();
    by_column.sort_unstable_by_key(|(_, out)| *out);
    let new: HashMap<usize, usize> = by_column
        .iter()
        .zip(numbers)
        .map(|((old, _), new)| (*old, new))
        .collect();
    if new.iter().all(|(old, new)| old == new) {
        return;
    }
    renumber(&mut stmt.root, &new);
    for c in &mut stmt.ctes {
        renumber(c, &new);
    }
}

fn renumber(p: &mut Plan, new: &HashMap<usize, usize>) {
    if let NodeKind::SubPlans { subplans } = &mut p.kind {
        for s in subplans {
            if let Some(&n) = new.get(&s.number) {
                s.number = n;
            }
            renumber(&mut s.plan, new);
        }
    }
    for c in &mut p.children {
        renumber(c, new);
    }
}
