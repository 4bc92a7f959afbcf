//! Checking and rewriting a grouped query's expressions over its groups.
//!
//! After aggregation only the group keys and the aggregate results exist.
//! An expression of the select list, HAVING or ORDER BY is rewritten top
//! down: a subexpression equal to a GROUP BY expression becomes a reference
//! to that group's column; a reference to an aggregate result stays; a
//! reference to any other column of the query's FROM clause is the error
//! PostgreSQL reports as "must appear in the GROUP BY clause or be used in
//! an aggregate function". Columns of outer queries pass through: to this
//! query they are constants.
//!
//! A subquery of those clauses runs after aggregation, so its references
//! to this query's columns must be group columns too ([`regroup_apply`]).

use super::{Binder, PendingApply, Result};
use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, SubqueryKind};
use std::collections::{HashMap, HashSet};
use tusk_exec::Expr;

pub(crate) struct Grouping {
    /// Group columns and the expressions they hold.
    pub group: Vec<(ColumnId, Expr)>,
    /// Every column the query's FROM clause produces.
    pub from_cols: HashSet<ColumnId>,
    /// The aggregate result columns.
    pub agg_ids: HashSet<ColumnId>,
}

/// Rewrites a subquery applied after aggregation: its references to the
/// query's FROM columns become the group columns holding them (PostgreSQL:
/// "subquery uses ungrouped column ... from outer query" otherwise), and an
/// ANY/ALL test is rewritten like any expression.
pub(crate) fn regroup_apply(binder: &Binder, p: &mut PendingApply, g: &Grouping) -> Result<()> {
    let mut map: HashMap<ColumnId, Expr> = HashMap::new();
    for c in p.subquery.free_columns() {
        if !g.from_cols.contains(&c) || g.agg_ids.contains(&c) {
            continue;
        }
        let group_col = g
            .group
            .iter()
            .find(|(_, x)| matches!(x, Expr::Column { index, .. } if *index == c));
        match group_col {
            Some((id, _)) => map.insert(c, binder.col_expr(*id)),
            None => {
                let name = binder.cols.display(c).replace('"', "");
                return Err(SqlError::coded(
                    sqlstate::GROUPING_ERROR,
                    format!("subquery uses ungrouped column \"{name}\" from outer query"),
                ));
            }
        };
    }
    if !map.is_empty() {
        p.subquery.replace_columns(&|c| map.get(&c).cloned());
    }
    if let SubqueryKind::Any { test }
    | SubqueryKind::All { test }
    | SubqueryKind::RowCompare { test } = &mut p.kind
    {
        *test = regroup(binder, test.clone(), g)?;
    }
    Ok(())
}

/// `e` over the group and aggregate columns of `g`.
pub(crate) fn regroup(binder: &Binder, e: Expr, g: &Grouping) -> Result<Expr> {
    if let Some((id, _)) = g.group.iter().find(|(_, x)| *x == e) {
        return Ok(binder.col_expr(*id));
    }
    if let Expr::Column { index, .. } = &e {
        if g.from_cols.contains(index) && !g.agg_ids.contains(index) {
            let name = binder.cols.display(*index).replace('"', "");
            return Err(SqlError::coded(
                sqlstate::GROUPING_ERROR,
                format!("column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"),
            ));
        }
        return Ok(e);
    }
    crate::logical::exprs::try_map_children(e, &mut |c| regroup(binder, c, g))
}
