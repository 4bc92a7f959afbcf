//! Joins: the order of each region of inner joins, and the operator for
//! every join.
//!
//! A *region* is a maximal tree of inner joins (cross joins included): its
//! leaves are planned on their own and its conditions pooled. The leaves
//! are then joined greedily, left-deep: start from the smallest leaf, and
//! at each step add the leaf that shares an equality condition with what
//! is joined so far and gives the fewest estimated rows (a leaf with no
//! connecting equality only when none has one: a cross join). Conditions
//! are placed at the first join where all their columns are present:
//! equalities between the two sides become hash keys, the rest a join
//! filter.
//!
//! A join with hash keys is a Hash Join that builds the smaller side (for
//! outer joins the side to build decides between Left and Right; semi, anti
//! and mark joins always build their right side, the subquery). A join
//! without keys is a Nested Loop with the smaller side as its materialised
//! inner input.

use super::cost::{CPU_OPERATOR_COST, CPU_TUPLE_COST};
use super::{Phys, Planner, Result};
use crate::logical::{conjuncts, expr_columns, ColumnId, JoinKind, Logical};
use std::collections::HashSet;
use tusk_exec::expr::CmpOp;
use tusk_exec::{Estimate, Expr, NodeKind, Plan};

impl Planner<'_> {
    /// Plans a region of inner joins rooted at `l`.
    pub(crate) fn inner_join_region(&mut self, l: &Logical) -> Result<Phys> {
        let mut leaves = Vec::new();
        let mut conds = Vec::new();
        collect_region(l, &mut leaves, &mut conds);
        let mut parts: Vec<Option<Phys>> = Vec::with_capacity(leaves.len());
        for leaf in &leaves {
            parts.push(Some(self.plan(leaf)?));
        }
        let mut used = vec![false; conds.len()];
        // Conditions over no column of any leaf (constants) stay for the top.
        let col_sets: Vec<HashSet<ColumnId>> = conds
            .iter()
            .map(|c| expr_columns(c).into_iter().collect())
            .collect();
        let start = (0..parts.len())
            .min_by(|&a, &b| {
                let ra = parts[a].as_ref().unwrap().plan.est.rows;
                let rb = parts[b].as_ref().unwrap().plan.est.rows;
                ra.partial_cmp(&rb).unwrap_or(std::cmp::Ordering::Equal)
            })
            .unwrap_or(0);
        let mut current = parts[start].take().expect("a leaf");
        let mut remaining: Vec<usize> = (0..parts.len()).filter(|&i| i != start).collect();
        while !remaining.is_empty() {
            let have: HashSet<ColumnId> = current.cols.iter().copied().collect();
            // Leaves connected to `current` by an unused equality.
            let connected = |i: usize| {
                let cols: HashSet<ColumnId> =
                    parts[i].as_ref().unwrap().cols.iter().copied().collect();
                conds
                    .iter()
                    .enumerate()
                    .any(|(k, c)| !used[k] && equi_sides(c, &have, &cols).is_some())
            };
            let candidates: Vec<usize> = remaining
                .iter()
                .copied()
                .filter(|&i| connected(i))
                .collect();
            let pool = if candidates.is_empty() {
                remaining.clone()
            } else {
                candidates
            };
            let pick = pool
                .into_iter()
                .min_by(|&a, &b| {
                    let ra = parts[a].as_ref().unwrap().plan.est.rows;
                    let rb = parts[b].as_ref().unwrap().plan.est.rows;
                    ra.partial_cmp(&rb).unwrap_or(std::cmp::Ordering::Equal)
                })
                .expect("remaining is not empty");
            remaining.retain(|&i| i != pick);
            let right = parts[pick].take().expect("not joined yet");
            let mut both: HashSet<ColumnId> = have.clone();
            both.extend(right.cols.iter().copied());
            let mut on = Vec::new();
            for (k, c) in conds.iter().enumerate() {
                if !used[k]
                    && !col_sets[k].is_empty()
                    && col_sets[k].iter().all(|x| both.contains(x))
                {
                    used[k] = true;
                    on.push(c.clone());
                }
            }
            current = self.join(JoinKind::Inner, current, right, on, None)?;
        }
        // Whatever is left (constant conditions, outer references) filters the top.
        let rest: Vec<Expr> = conds
            .into_iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(c, _)| c)
            .collect();
        if let Some(p) = crate::logical::and_all(rest) {
            current = self.filter(current, &p)?;
        }
        Ok(current)
    }

    /// One join of `left` and `right` on conjuncts `on`.
    pub(crate) fn join(
        &mut self,
        kind: JoinKind,
        left: Phys,
        right: Phys,
        on: Vec<Expr>,
        mark: Option<ColumnId>,
    ) -> Result<Phys> {
        let lcols: HashSet<ColumnId> = left.cols.iter().copied().collect();
        let rcols: HashSet<ColumnId> = right.cols.iter().copied().collect();
        let (mut lkeys, mut rkeys, mut residual) = (Vec::new(), Vec::new(), Vec::new());
        for c in on {
            match equi_sides(&c, &lcols, &rcols) {
                Some((l, r)) => {
                    lkeys.push(l);
                    rkeys.push(r);
                }
                None => residual.push(c),
            }
        }
        if kind == JoinKind::Full && lkeys.is_empty() {
            return Err(crate::error::SqlError::coded(
                crate::error::sqlstate::FEATURE_NOT_SUPPORTED,
                "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
            ));
        }
        // Which side is built (hashed / materialised): the smaller, where
        // the kind allows a choice.
        let right_smaller = right.plan.est.rows <= left.plan.est.rows;
        let (outer, inner, okeys, ikeys, kind) = match kind {
            JoinKind::Inner | JoinKind::Full if !right_smaller => (right, left, rkeys, lkeys, kind),
            JoinKind::Left if !right_smaller => (right, left, rkeys, lkeys, JoinKind::Right),
            JoinKind::Right if right_smaller => (left, right, lkeys, rkeys, JoinKind::Right),
            JoinKind::Right => (right, left, rkeys, lkeys, JoinKind::Left),
            _ => (left, right, lkeys, rkeys, kind),
        };
        let outer_out: Vec<usize> = (0..outer.cols.len()).collect();
        let inner_out: Vec<usize> = match kind {
            JoinKind::Semi | JoinKind::Anti | JoinKind::Mark { .. } => vec![],
            _ => (0..inner.cols.len()).collect(),
        };
        let mut cols: Vec<ColumnId> = outer.cols.clone();
        cols.extend(inner_out.iter().map(|&i| inner.cols[i]));
        if let JoinKind::Mark { .. } = kind {
            cols.push(mark.expect("a mark join has a mark column"));
        }
        let both: Vec<ColumnId> = outer.cols.iter().chain(&inner.cols).copied().collect();
        let join_filter = super::cost::ordered_and(residual)
            .map(|f| self.remap(&f, &both))
            .transpose()?;
        let (o, i) = (outer.plan.est, inner.plan.est);
        let rows = match kind {
            JoinKind::Semi | JoinKind::Anti | JoinKind::Mark { .. } => o.rows,
            _ if okeys.is_empty() => o.rows * i.rows,
            _ => o.rows.max(i.rows),
        };
        let rows = if join_filter.is_some() && !matches!(kind, JoinKind::Mark { .. }) {
            (rows * 0.3333).max(1.0)
        } else {
            rows
        }
        .round();
        if okeys.is_empty() {
            let total = o.total_cost + i.total_cost + o.rows * i.rows * CPU_OPERATOR_COST;
            return Ok(self.node(
                NodeKind::NestedLoop {
                    kind,
                    join_filter,
                    outer_out,
                    inner_out,
                },
                vec![outer.plan, inner.plan],
                cols,
                Estimate {
                    startup_cost: i.total_cost,
                    total_cost: total + rows * CPU_TUPLE_COST,
                    rows,
                    width: 0,
                },
            ));
        }
        let outer_keys = okeys
            .iter()
            .map(|k| self.remap(k, &outer.cols))
            .collect::<Result<Vec<_>>>()?;
        let inner_keys = ikeys
            .iter()
            .map(|k| self.remap(k, &inner.cols))
            .collect::<Result<Vec<_>>>()?;
        let hash_est = Estimate {
            startup_cost: i.total_cost,
            total_cost: i.total_cost,
            rows: i.rows,
            width: i.width,
        };
        let hash = Plan::new(
            NodeKind::Hash,
            vec![inner.plan.clone()],
            inner.plan.output.clone(),
            inner.plan.names.clone(),
            hash_est,
        );
        let startup = i.total_cost + i.rows * (CPU_OPERATOR_COST + CPU_TUPLE_COST);
        let total = startup + o.total_cost + o.rows * CPU_OPERATOR_COST + rows * CPU_TUPLE_COST;
        Ok(self.node(
            NodeKind::HashJoin {
                kind,
                outer_keys,
                inner_keys,
                outer_out,
                inner_out,
                join_filter,
                parallel: false,
            },
            vec![outer.plan, hash],
            cols,
            Estimate {
                startup_cost: startup,
                total_cost: total,
                rows,
                width: 0,
            },
        ))
    }
}

/// The leaves and pooled conditions of the inner-join region at `l`.
fn collect_region<'l>(l: &'l Logical, leaves: &mut Vec<&'l Logical>, conds: &mut Vec<Expr>) {
    match l {
        Logical::Join {
            kind: JoinKind::Inner,
            left,
            right,
            on,
            ..
        } => {
            collect_region(left, leaves, conds);
            collect_region(right, leaves, conds);
            for c in on {
                conjuncts(c.clone(), conds);
            }
        }
        Logical::Filter { input, predicate }
            if matches!(
                input.as_ref(),
                Logical::Join {
                    kind: JoinKind::Inner,
                    ..
                }
            ) =>
        {
            collect_region(input, leaves, conds);
            conjuncts(predicate.clone(), conds);
        }
        other => leaves.push(other),
    }
}

/// For an equality whose sides read only `l` columns and only `r` columns
/// (in either order), the (left key, right key) pair.
fn equi_sides(c: &Expr, l: &HashSet<ColumnId>, r: &HashSet<ColumnId>) -> Option<(Expr, Expr)> {
    let Expr::Cmp {
        op: CmpOp::Eq,
        left,
        right,
    } = c
    else {
        return None;
    };
    let a = expr_columns(left);
    let b = expr_columns(right);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let within = |cols: &[ColumnId], set: &HashSet<ColumnId>| cols.iter().all(|x| set.contains(x));
    if within(&a, l) && within(&b, r) {
        Some(((**left).clone(), (**right).clone()))
    } else if within(&a, r) && within(&b, l) {
        Some(((**right).clone(), (**left).clone()))
    } else {
        None
    }
}
