//! The SystemScan node: the rows of a system relation (`pg_class`,
//! `pg_settings`, ...), which are not stored but computed.
//!
//! Which relations exist and what their rows are is the SQL layer's
//! business (tusk-sql's `catalog`: they come from the catalog the statement
//! sees and from the session). The plan carries a [`SystemSource`] that
//! computes them; the node asks for the rows when it is first pulled (so a
//! kept plan shows the state at each execution), applies its filter and
//! hands them out in batches. System relations are small (a row per
//! relation, column or setting), so the rows are computed whole.

use crate::error::Result;
use crate::operator::{emit_chunk, ExecContext, Operator, RowOrderFilter};
use crate::plan::{NodeKind, Plan};
use crate::scan::scan_filter;
use crate::vector::Batch;
use std::sync::Arc;

/// What computes a system relation's rows.
pub trait SystemRows: Send + Sync + std::fmt::Debug {
    /// Every row, with every column of the relation in order.
    fn rows(&self) -> Result<Batch>;
}

/// A plan's handle on a [`SystemRows`]; plans compare equal when they share
/// the source.
#[derive(Debug, Clone)]
pub struct SystemSource(pub Arc<dyn SystemRows>);

impl PartialEq for SystemSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

pub struct SystemScan {
    source: SystemSource,
    filter: RowOrderFilter,
    ctx: ExecContext,
    id: usize,
    rows: Option<Batch>,
    pos: usize,
}

impl SystemScan {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> SystemScan {
        let NodeKind::SystemScan { source, filter, .. } = &plan.kind else {
            unreachable!("a SystemScan node")
        };
        SystemScan {
            source: source.clone(),
            filter: RowOrderFilter::new(filter.clone()),
            ctx: ctx.clone(),
            id: plan.id,
            rows: None,
            pos: 0,
        }
    }
}

impl Operator for SystemScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.filter.raise_held()?;
        if self.rows.is_none() {
            self.rows = Some(self.source.0.rows()?);
        }
        let all = self.rows.as_ref().expect("computed above");
        while let Some(b) = emit_chunk(all, &mut self.pos) {
            if let Some(b) = scan_filter(b, &mut self.filter, &self.ctx, self.id)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}
