//! Semi-join reduction of grouped leaves: an aggregation joined on its
//! group keys to a selective leaf of the same join region aggregates only
//! the rows whose keys that leaf has.
//!
//! A decorrelated scalar subquery (`l_quantity < (select avg(l_quantity)
//! from lineitem where l_partkey = p_partkey)`, TPC-H Q2, Q17, Q20) becomes
//! an aggregation grouped by the correlation columns, joined to the outer
//! query on them. Grouping the whole inner table builds a group for every
//! key, although the outer query, after its filters, may ask for a few
//! hundred of them. When the region's other leaf that holds the outer key
//! columns is estimated at fewer rows than half the keys' distinct values,
//! the aggregation's input is first semi-joined to a second plan of that
//! leaf on the keys (DuckDB's and Umbra's "magic set" rewrite):
//!
//! ```text
//! Aggregate(group g = c)(input)  ⋈_{x = g}  X
//!   becomes
//! Aggregate(group g = c)(input ⋉_{c = x} X)  ⋈_{x = g}  X
//! ```
//!
//! This keeps the result: a group whose key no row of `X` has would find
//! no partner in the join anyway, and the groups that remain see all of
//! their input rows (a semi join only removes rows whose key has no match).

use super::{Phys, Planner, Result};
use crate::logical::{ColumnId, JoinKind, Logical};
use std::collections::HashSet;
use tusk_exec::expr::CmpOp;
use tusk_exec::Expr;

/// A leaf that is an aggregation with group keys, possibly under a
/// projection: its input, and for each group output column the input
/// column it groups by (when the key is a plain column).
fn grouped(leaf: &Logical) -> Option<(&Logical, Vec<(ColumnId, ColumnId)>)> {
    let agg = match leaf {
        Logical::Project { input, .. } => input.as_ref(),
        l => l,
    };
    let Logical::Aggregate { input, group, .. } = agg else {
        return None;
    };
    if group.is_empty() {
        return None;
    }
    let keys = group
        .iter()
        .filter_map(|(g, e)| match e {
            Expr::Column { index, .. } => Some((*g, *index)),
            _ => None,
        })
        .collect();
    Some((input, keys))
}

impl Planner<'_> {
    /// `leaves[i]` of an inner-join region rewritten as described in the
    /// module doc, if one of the region's other leaves (planned in
    /// `parts`) is selective enough; `conds` are the region's conditions.
    pub(crate) fn reduce_grouped_leaf(
        &self,
        i: usize,
        leaves: &[&Logical],
        parts: &[Option<Phys>],
        conds: &[Expr],
    ) -> Option<Logical> {
        let rows = parts[i].as_ref()?.plan.est.rows;
        let partners: Vec<(&Logical, f64)> = (0..leaves.len())
            .filter(|&j| j != i)
            .filter_map(|j| Some((leaves[j], parts[j].as_ref()?.plan.est.rows)))
            .collect();
        self.reduce_grouped(leaves[i], rows, &partners, conds)
    }

    /// The right side of a left join (`right`, planned at `rows` rows)
    /// rewritten as described in the module doc when it is a grouped
    /// aggregation and a leaf of the left side (`left`) is selective
    /// enough: groups no left row asks for are not needed either.
    pub(crate) fn reduce_left_join_side(
        &mut self,
        left: &Logical,
        right: &Logical,
        rows: f64,
        on: &[Expr],
    ) -> Result<Option<Logical>> {
        if grouped(right).is_none() {
            return Ok(None);
        }
        let mut leaves = Vec::new();
        let mut conds = Vec::new();
        super::join::collect_region(left, &mut leaves, &mut conds);
        // The leaves are planned only for their estimates: the plans are
        // dropped, and so are the SubPlan and parameter numbers they took.
        let numbers = self.numbering();
        let mut partners = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            let est = self.plan(leaf).map(|p| p.plan.est.rows);
            match est {
                Ok(est) => partners.push((leaf, est)),
                Err(e) => {
                    self.restore_numbering(numbers);
                    return Err(e);
                }
            }
        }
        self.restore_numbering(numbers);
        Ok(self.reduce_grouped(right, rows, &partners, on))
    }

    /// The grouped leaf `leaf` (planned at `rows` rows) with its input
    /// semi-joined to the most selective of `partners` (each with its
    /// estimated rows) that equalities of `conds` connect to its group
    /// keys, if that partner has fewer than half as many rows.
    fn reduce_grouped(
        &self,
        leaf: &Logical,
        rows: f64,
        partners: &[(&Logical, f64)],
        conds: &[Expr],
    ) -> Option<Logical> {
        let (input, keys) = grouped(leaf)?;
        // Equalities between a group key and a column of a partner, by
        // partner: (group input column, partner column).
        let mut by_partner: Vec<(usize, Vec<(ColumnId, ColumnId)>)> = Vec::new();
        for c in conds {
            let Some((left, right)) = crate::logical::exprs::equality_sides(c) else {
                continue;
            };
            let (Some(a), Some(b)) = (column(left), column(right)) else {
                continue;
            };
            let (key, other) = match (
                keys.iter().find(|k| k.0 == a),
                keys.iter().find(|k| k.0 == b),
            ) {
                (Some(k), None) => (k.1, b),
                (None, Some(k)) => (k.1, a),
                _ => continue,
            };
            let Some(j) = partners.iter().position(|p| p.0.output().contains(&other)) else {
                continue;
            };
            match by_partner.iter_mut().find(|(l, _)| *l == j) {
                Some((_, pairs)) => pairs.push((key, other)),
                None => by_partner.push((j, vec![(key, other)])),
            }
        }
        let (j, pairs) = by_partner
            .into_iter()
            .min_by(|a, b| partners[a.0].1.total_cmp(&partners[b.0].1))?;
        let (partner, partner_rows) = partners[j];
        if partner_rows * 2.0 >= rows {
            return None;
        }
        // The partner's columns must not be produced by the aggregation's
        // input (a second plan of the same leaf reuses its column ids).
        let produced: HashSet<ColumnId> = input.output().into_iter().collect();
        if partner.output().iter().any(|c| produced.contains(c)) {
            return None;
        }
        let on = pairs
            .iter()
            .map(|&(key, other)| {
                Expr::cmp(
                    CmpOp::Eq,
                    Expr::Column {
                        index: key,
                        ty: self.cols.ty(key),
                    },
                    Expr::Column {
                        index: other,
                        ty: self.cols.ty(other),
                    },
                )
            })
            .collect();
        let semi = Logical::Join {
            kind: JoinKind::Semi,
            left: Box::new(input.clone()),
            right: Box::new(partner.clone()),
            on,
            mark: None,
        };
        Some(replace_input(leaf, semi))
    }
}

fn column(e: &Expr) -> Option<ColumnId> {
    match e {
        Expr::Column { index, .. } => Some(*index),
        _ => None,
    }
}

/// `leaf` (as [`grouped`] reads it) with its aggregation's input replaced.
fn replace_input(leaf: &Logical, new_input: Logical) -> Logical {
    match leaf {
        Logical::Project { input, exprs } => Logical::Project {
            input: Box::new(replace_input(input, new_input)),
            exprs: exprs.clone(),
        },
        Logical::Aggregate { group, aggs, .. } => Logical::Aggregate {
            input: Box::new(new_input),
            group: group.clone(),
            aggs: aggs.clone(),
        },
        other => {
            debug_assert!(false, "not a grouped leaf: {other:?}");
            other.clone()
        }
    }
}
