//! The FunctionScan node: the rows of one or more set-returning calls (see
//! [`crate::srf`]), read side by side.
//!
//! With one call this is `SELECT * FROM f(...)`. With several it is
//! PostgreSQL's `ROWS FROM (f(...), g(...))`, and what the binder makes of
//! a select list with several set-returning calls (PostgreSQL's
//! ProjectSet): row `i` holds the `i`-th value of every call, the node runs
//! until the longest call ends, and a call that has ended gives NULLs.
//! `WITH ORDINALITY` adds a last `bigint` column numbering the rows from 1.
//!
//! The arguments are evaluated once, when the node starts (a lateral
//! reference to an outer row is a parameter substituted before that, see
//! `lateral`), and every call is started then, so an argument error is
//! raised whether or not a row is pulled. A pushed-down filter applies in
//! row order (see [`RowOrderFilter`]).

use crate::error::Result;
use crate::expr::Expr;
use crate::operator::{ExecContext, Operator, RowOrderFilter};
use crate::plan::{NodeKind, Plan};
use crate::scan::scan_filter;
use crate::srf::{self, SetRows};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector, BATCH_SIZE};

/// The values of argument expressions that read no column, each as a value
/// of its own type (a timestamp as a timestamp, not as its microseconds).
fn arguments(args: &[Expr]) -> Result<Vec<Value>> {
    let one = Batch::new(vec![], 1);
    args.iter()
        .map(|e| Ok(e.eval(&one)?.value_as(0, e.data_type())))
        .collect()
}

/// One call as the scan runs it.
struct Running {
    rows: Box<dyn SetRows>,
    ended: bool,
    ty: tusk_storage::DataType,
}

pub struct FunctionScan {
    calls: Vec<Running>,
    /// The next row's number, when the scan numbers its rows.
    ordinal: Option<i64>,
    filter: RowOrderFilter,
    ctx: ExecContext,
    id: usize,
}

impl FunctionScan {
    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<FunctionScan> {
        let NodeKind::FunctionScan {
            calls,
            ordinality,
            filter,
            ..
        } = &plan.kind
        else {
            unreachable!("a FunctionScan node")
        };
        let mut running = Vec::with_capacity(calls.len());
        for call in calls {
            running.push(Running {
                rows: srf::start(call, arguments(&call.args)?)?,
                ended: false,
                ty: call.ty,
            });
        }
        Ok(FunctionScan {
            calls: running,
            ordinal: ordinality.then_some(1),
            filter: RowOrderFilter::new(filter.clone()),
            ctx: ctx.clone(),
            id: plan.id,
        })
    }

    /// The next rows of every call side by side, NULL-padded.
    fn produce(&mut self) -> Result<Option<Batch>> {
        let mut columns = Vec::with_capacity(self.calls.len() + 1);
        let mut n = 0;
        for call in &mut self.calls {
            let v = if call.ended {
                Vector::empty(call.ty)
            } else {
                call.rows.fill(BATCH_SIZE)?
            };
            call.ended |= v.len() < BATCH_SIZE;
            n = n.max(v.len());
            columns.push(v);
        }
        if n == 0 {
            return Ok(None);
        }
        for v in &mut columns {
            while v.len() < n {
                v.push_value(&Value::Null);
            }
        }
        if let Some(first) = &mut self.ordinal {
            let start = *first;
            *first += n as i64;
            columns.push(Vector::new(
                Data::Int8((start..start + n as i64).collect()),
                None,
            ));
        }
        Ok(Some(Batch::new(columns, n)))
    }
}

impl Operator for FunctionScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.filter.raise_held()?;
        while let Some(b) = self.produce()? {
            if let Some(b) = scan_filter(b, &mut self.filter, &self.ctx, self.id)? {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }
}
