//! Generic rewriting of expression trees.

use tusk_exec::{Expr, Value};
use tusk_storage::DataType;

/// The two sides of an equality `left = right`, if `e` is one.
pub fn equality_sides(e: &Expr) -> Option<(&Expr, &Expr)> {
    match e {
        // `jsonb` equality is not equality of the stored text (`1.0` equals
        // `1`), which hash and merge joins compare: such a condition stays
        // a filter.
        Expr::Cmp {
            op: tusk_exec::expr::CmpOp::Eq,
            left,
            right,
        } if left.data_type() != DataType::Jsonb => Some((left, right)),
        _ => None,
    }
}

/// A placeholder left in a child's slot while the child is rewritten.
fn hole() -> Expr {
    Expr::Const {
        value: Value::Null,
        ty: DataType::Bool,
    }
}

/// Rebuilds `e` with `f` applied to each direct child.
pub fn try_map_children<E>(
    mut e: Expr,
    f: &mut dyn FnMut(Expr) -> Result<Expr, E>,
) -> Result<Expr, E> {
    let mut failure = None;
    e.for_each_child_mut(|c| {
        if failure.is_some() {
            return;
        }
        let child = std::mem::replace(c, hole());
        match f(child) {
            Ok(n) => *c = n,
            Err(x) => failure = Some(x),
        }
    });
    match failure {
        Some(x) => Err(x),
        None => Ok(e),
    }
}

/// Rebuilds `e` bottom up, replacing every node by `f(node)`.
pub fn transform_up(e: Expr, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
    let e = try_map_children::<()>(e, &mut |c| Ok(transform_up(c, f))).expect("infallible");
    f(e)
}

/// Replaces column references through `map` (columns not in it stay).
pub fn replace_columns(e: Expr, map: &dyn Fn(usize) -> Option<Expr>) -> Expr {
    transform_up(e, &mut |n| match &n {
        Expr::Column { index, .. } => map(*index).unwrap_or(n),
        _ => n,
    })
}
