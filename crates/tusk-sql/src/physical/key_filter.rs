//! Join key filters: which hash joins hand their build keys down to the
//! columnar scan of their probe side (the mechanism is in
//! `tusk_exec::keyfilter`).
//!
//! Once the plan is made, [`add_key_filters`] walks it (CTEs and SubPlans
//! included) and gives a columnar scan its join's probe keys
//! (`ColumnarSpec::join_keys`) where
//!
//! - the scan is the hash join's probe side itself (its first child, or
//!   the child of a Project of plain columns there, through which the keys
//!   are renumbered), so the scan runs in the join's participant; a Parallel Hash Join's probe scan must be parallel, as
//!   the participants' filter lives in its shared state;
//! - the join kind drops probe rows that find no match (inner, right,
//!   semi, right semi, right anti — not left, full, anti or mark, which
//!   emit them), so removing them below the join changes nothing;
//! - every key is a column, or a column under a cast that cannot fail (an
//!   integer widened), so computing it in the scan costs little and raises
//!   nothing: the join computes the same keys of the same rows anyway.
//!
//! No estimate decides it: a scan whose filter keeps nearly every row
//! stops testing (see `tusk_exec::keyfilter`).

use tusk_exec::expr::Expr;
use tusk_exec::plan::{NodeKind, Plan};
use tusk_storage::DataType;

/// Gives the columnar probe scans of eligible hash joins in `p` their
/// join's keys (see the module doc).
pub(super) fn add_key_filters(p: &mut Plan) {
    let keys = match &p.kind {
        NodeKind::HashJoin {
            kind,
            outer_keys,
            parallel,
            ..
        } if !kind.keeps_unmatched_outer() && outer_keys.iter().all(cheap_key) => {
            Some((outer_keys.clone(), *parallel))
        }
        _ => None,
    };
    if let Some((mut keys, join_parallel)) = keys {
        let mut probe = p.children.first_mut();
        // Through a Project of plain columns, with the keys renumbered to
        // its input.
        if let Some(Plan {
            kind: NodeKind::Project { exprs },
            children,
            ..
        }) = probe
        {
            let input: Option<Vec<usize>> = exprs
                .iter()
                .map(|e| match e {
                    Expr::Column { index, .. } => Some(*index),
                    _ => None,
                })
                .collect();
            probe = match input {
                Some(input) => {
                    keys.iter_mut().for_each(|k| k.remap_columns(&|c| input[c]));
                    children.first_mut()
                }
                None => None,
            };
        }
        if let Some(NodeKind::SeqScan {
            columnar: Some(spec),
            parallel,
            ..
        }) = probe.map(|c| &mut c.kind)
        {
            if *parallel || !join_parallel {
                spec.join_keys = keys;
            }
        }
    }
    for c in &mut p.children {
        add_key_filters(c);
    }
    if let NodeKind::SubPlans { subplans } = &mut p.kind {
        for s in subplans {
            add_key_filters(&mut s.plan);
        }
    }
}

/// A column, or a column widened to a larger integer type.
fn cheap_key(e: &Expr) -> bool {
    match e {
        Expr::Column { .. } => true,
        Expr::Cast { arg, to } => match arg.as_ref() {
            Expr::Column { ty, .. } => matches!(
                (ty, to),
                (DataType::Int2, DataType::Int4 | DataType::Int8)
                    | (DataType::Int4, DataType::Int8)
            ),
            _ => false,
        },
        _ => false,
    }
}
