//! Narrowing joins: a join outputs only the columns that something above
//! it reads, as PostgreSQL's planner gives each join relation only the
//! target list its upper relations need.
//!
//! Scans produce the columns the statement reads anywhere
//! (`logical::reads::columns_read`). Without narrowing, every join passed
//! all of both sides' columns up, so a key read only by one join's
//! condition, or a column read only by a leaf's filter, went on into every
//! hash table and spill file above it. Now each join built for a logical
//! join node or an inner-join region keeps what the rest of the statement
//! reads outside that node (`logical::reads::columns_read_outside`), plus,
//! inside a region, what the conditions and equivalence classes of the
//! joins still to come read. A join above it then hashes and spills
//! narrower rows, and the planner costs it with the narrower width.
//!
//! A join's own `outer_out` / `inner_out` lists change: the join still
//! reads every column of its inputs for its keys and filter. A join node
//! whose output lists cannot drop the column (a mark join's mark) is left
//! as it is. The leaves of a region and the inputs of other joins are
//! narrowed too when they are scans of columnar tables (which decode their
//! filters' columns anyway): a projection of column references, which
//! moves the kept vectors, drops the columns only their own filter read
//! before they reach a hash table. Heap scans stay as they are, since an
//! index nested loop (`index_join`) needs its inner side to be the plain
//! scan; columnar tables have no indexes.

use super::cost::width_of;
use super::{Phys, Planner};
use crate::logical::{ColumnId, Logical};
use std::collections::HashSet;
use tusk_exec::{Expr, NodeKind, Plan};

/// Whether `plan` is a scan of a columnar table, possibly under filters.
fn columnar_scan(plan: &Plan) -> bool {
    match &plan.kind {
        NodeKind::SeqScan { columnar, .. } => columnar.is_some(),
        NodeKind::Filter { .. } => columnar_scan(&plan.children[0]),
        _ => false,
    }
}

impl Planner<'_> {
    /// The columns the statement reads outside `l`, if `l` is a node of
    /// the statement's own tree (see `logical::reads`).
    pub(crate) fn needed_above(&self, l: &Logical) -> Option<HashSet<ColumnId>> {
        let (root, out) = self.root?;
        crate::logical::reads::columns_read_outside(root, self.ctes, out, l)
    }

    /// `p` with its output narrowed to the columns in `keep` (at least one
    /// column stays): a join through its output lists, a columnar scan
    /// under a projection (see the module doc). Other plans are returned
    /// unchanged.
    pub(crate) fn narrow(&self, p: Phys, keep: &HashSet<ColumnId>) -> Phys {
        let mut positions: Vec<usize> = (0..p.cols.len())
            .filter(|&i| keep.contains(&p.cols[i]))
            .collect();
        if positions.len() == p.cols.len() {
            return p;
        }
        if positions.is_empty() {
            positions.push(0);
        }
        if columnar_scan(&p.plan) {
            return self.project_positions(p, &positions);
        }
        let Phys { mut plan, cols } = p;
        let (outer_out, inner_out, kind) = match &mut plan.kind {
            NodeKind::HashJoin {
                kind,
                outer_out,
                inner_out,
                ..
            }
            | NodeKind::MergeJoin {
                kind,
                outer_out,
                inner_out,
                ..
            }
            | NodeKind::NestedLoop {
                kind,
                outer_out,
                inner_out,
                ..
            }
            | NodeKind::IndexNestLoop {
                kind,
                outer_out,
                inner_out,
                ..
            } => (outer_out, inner_out, *kind),
            _ => return Phys { plan, cols },
        };
        // A mark join's last output column is its mark, in neither list.
        let listed = outer_out.len()
            + if kind.emits_inner_columns() {
                inner_out.len()
            } else {
                0
            };
        if listed != cols.len() {
            return Phys { plan, cols };
        }
        let outer_len = outer_out.len();
        let (new_outer, new_inner): (Vec<usize>, Vec<usize>) =
            positions.iter().partition(|&&i| i < outer_len);
        *outer_out = new_outer.iter().map(|&i| outer_out[i]).collect();
        *inner_out = new_inner
            .iter()
            .map(|&i| inner_out[i - outer_len])
            .collect();
        let types: Vec<_> = positions.iter().map(|&i| plan.output[i]).collect();
        let names: Vec<String> = positions.iter().map(|&i| plan.names[i].clone()).collect();
        let mut est = plan.est;
        est.width = width_of(&types);
        let Plan { kind, children, .. } = plan;
        Phys {
            plan: Plan::new(kind, children, types, names, est),
            cols: positions.iter().map(|&i| cols[i]).collect(),
        }
    }

    /// A projection of `p`'s columns at `positions`.
    fn project_positions(&self, p: Phys, positions: &[usize]) -> Phys {
        let exprs = positions
            .iter()
            .map(|&i| Expr::Column {
                index: i,
                ty: p.plan.output[i],
            })
            .collect();
        let cols = positions.iter().map(|&i| p.cols[i]).collect();
        let est = p.plan.est;
        self.node(NodeKind::Project { exprs }, vec![p.plan], cols, est)
    }
}
