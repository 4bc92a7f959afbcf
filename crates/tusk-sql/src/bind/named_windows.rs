//! The WINDOW clause: named window definitions, copied into the OVER
//! clauses that name them before the select list is bound (PostgreSQL's
//! `transformWindowDefinitions`).
//!
//! `OVER w` takes `w` as it is. `OVER (w ORDER BY ... frame)` copies `w`'s
//! PARTITION BY, and its ORDER BY unless the new clause gives one; it may
//! not give its own PARTITION BY, nor an ORDER BY when `w` has one, nor
//! copy a `w` that has a frame clause. A definition may build on an
//! earlier one the same way (`WINDOW a AS (PARTITION BY x), b AS (a ORDER
//! BY y)`). The errors are PostgreSQL's, with SQLSTATE 42P20 (an unknown
//! name: 42704).
//!
//! Names belong to one query level: the copy skips subqueries, which
//! resolve their own WINDOW clauses when they are bound.

use super::{err, Result};
use crate::error::sqlstate;
use sqlparser::ast as A;
use std::ops::ControlFlow;

/// Replaces every named window reference in `items` by its definition
/// from `defs`.
pub(super) fn resolve(
    defs: &[A::NamedWindowDefinition],
    items: &mut [A::SelectItem],
) -> Result<()> {
    let mut known: Vec<(String, A::WindowSpec)> = Vec::new();
    for A::NamedWindowDefinition(name, expr) in defs {
        let name = name.value.to_lowercase();
        if known.iter().any(|(n, _)| *n == name) {
            return err(
                sqlstate::WINDOWING_ERROR,
                format!("window \"{name}\" is already defined"),
            );
        }
        let A::NamedWindowExpr::WindowSpec(spec) = expr else {
            return err(sqlstate::SYNTAX_ERROR, "syntax error in WINDOW clause");
        };
        let spec = copied(&known, spec)?;
        known.push((name, spec));
    }
    let mut copier = Copier {
        known: &known,
        depth: 0,
    };
    for item in items.iter_mut() {
        if let ControlFlow::Break(e) = A::VisitMut::visit(item, &mut copier) {
            return Err(e);
        }
    }
    Ok(())
}

/// Copies definitions into the calls of one query level.
struct Copier<'k> {
    known: &'k [(String, A::WindowSpec)],
    /// How many subqueries deep the walk is (0: this level).
    depth: usize,
}

impl A::VisitorMut for Copier<'_> {
    type Break = crate::error::SqlError;

    fn pre_visit_query(&mut self, _: &mut A::Query) -> ControlFlow<Self::Break> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut A::Query) -> ControlFlow<Self::Break> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut A::Expr) -> ControlFlow<Self::Break> {
        let A::Expr::Function(f) = e else {
            return ControlFlow::Continue(());
        };
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let resolved = match &f.over {
            Some(A::WindowType::NamedWindow(name)) => lookup(self.known, &name.value).cloned(),
            Some(A::WindowType::WindowSpec(spec)) if spec.window_name.is_some() => {
                copied(self.known, spec)
            }
            _ => return ControlFlow::Continue(()),
        };
        match resolved {
            Ok(spec) => {
                f.over = Some(A::WindowType::WindowSpec(spec));
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(e),
        }
    }
}

fn lookup<'k>(known: &'k [(String, A::WindowSpec)], name: &str) -> Result<&'k A::WindowSpec> {
    let name = name.to_lowercase();
    match known.iter().find(|(n, _)| *n == name) {
        Some((_, spec)) => Ok(spec),
        None => err(
            sqlstate::UNDEFINED_OBJECT,
            format!("window \"{name}\" does not exist"),
        ),
    }
}

/// `spec` with the window it names (if any) copied in.
fn copied(known: &[(String, A::WindowSpec)], spec: &A::WindowSpec) -> Result<A::WindowSpec> {
    let Some(base_name) = &spec.window_name else {
        return Ok(spec.clone());
    };
    let base = lookup(known, &base_name.value)?;
    let name = base_name.value.to_lowercase();
    if !spec.partition_by.is_empty() {
        return err(
            sqlstate::WINDOWING_ERROR,
            format!("cannot override PARTITION BY clause of window \"{name}\""),
        );
    }
    if !base.order_by.is_empty() && !spec.order_by.is_empty() {
        return err(
            sqlstate::WINDOWING_ERROR,
            format!("cannot override ORDER BY clause of window \"{name}\""),
        );
    }
    if base.window_frame.is_some() {
        return err(
            sqlstate::WINDOWING_ERROR,
            format!("cannot copy window \"{name}\" because it has a frame clause"),
        );
    }
    Ok(A::WindowSpec {
        window_name: None,
        partition_by: base.partition_by.clone(),
        order_by: if spec.order_by.is_empty() {
            base.order_by.clone()
        } else {
            spec.order_by.clone()
        },
        window_frame: spec.window_frame.clone(),
    })
}
