//! Unique relation names in EXPLAIN, as PostgreSQL's `set_rtable_names`
//! gives them.
//!
//! Two scans of one name in different query levels (`fip2` in the query
//! and in its InitPlan) print apart: the name's first holder keeps it, the
//! next gets `fip2_1`, then `fip2_2`. PostgreSQL names the top level's
//! relations first, then each subquery's in its plan's number order
//! (CTEs first: they are planned before the query's subqueries), so
//! [`unique_aliases`] walks the levels in that order, and each level's
//! scans in plan order.

use std::collections::{HashMap, HashSet};
use tusk_exec::plan::{NodeKind, Plan, Statement};

/// The new alias of each scan (by node id) whose name an earlier scan holds.
pub(super) fn unique_aliases(stmt: &Statement) -> HashMap<usize, String> {
    let mut subplans = Vec::new();
    for p in std::iter::once(&stmt.root).chain(&stmt.ctes) {
        collect_subplans(p, &mut subplans);
    }
    subplans.sort_by_key(|(number, _)| *number);
    let levels = std::iter::once(&stmt.root)
        .chain(&stmt.ctes)
        .chain(subplans.into_iter().map(|(_, p)| p));
    let mut used = HashSet::new();
    let mut renamed = HashMap::new();
    for level in levels {
        name_scans(level, &mut used, &mut renamed);
    }
    renamed
}

/// Every SubPlan's (and InitPlan's) plan below `p`, with its number.
fn collect_subplans<'p>(p: &'p Plan, out: &mut Vec<(usize, &'p Plan)>) {
    if let NodeKind::SubPlans { subplans } = &p.kind {
        for s in subplans {
            out.push((s.number, &s.plan));
            collect_subplans(&s.plan, out);
        }
    }
    for c in &p.children {
        collect_subplans(c, out);
    }
}

/// The name a scan node is printed under, if it is a scan of a relation.
fn scan_alias(p: &Plan) -> Option<&str> {
    match &p.kind {
        NodeKind::SeqScan { alias, .. }
        | NodeKind::IndexScan { alias, .. }
        | NodeKind::SystemScan { alias, .. } => Some(alias),
        _ => None,
    }
}

/// Names the scans of the level whose top is `p` (not its subplans').
fn name_scans(p: &Plan, used: &mut HashSet<String>, renamed: &mut HashMap<usize, String>) {
    if let Some(alias) = scan_alias(p) {
        if used.contains(alias) {
            let fresh = (1..)
                .map(|k| format!("{alias}_{k}"))
                .find(|n| !used.contains(n))
                .expect("an unused name");
            used.insert(fresh.clone());
            renamed.insert(p.id, fresh);
        } else {
            used.insert(alias.to_string());
        }
    }
    for c in &p.children {
        name_scans(c, used, renamed);
    }
}
