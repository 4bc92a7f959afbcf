//! Common table expressions: `With`, `CteScan`, and the per-query registry
//! through which scans find their CTE.
//!
//! A statement's CTE plans live beside its root (`plan::Statement`);
//! `build::build_statement` builds each and registers the operator,
//! unevaluated, in the statement's [`Registry`] (the [`ExecContext`]'s
//! `ctes`) under its number, then builds the root.
//!
//! A CTE is evaluated at most once per query and only as far as its
//! readers need it, as in PostgreSQL: the first `CteScan` that wants a row
//! the store does not have yet pulls the next batch from the CTE's operator
//! and appends it to the CTE's [`TupleStore`] (spilling past `work_mem`);
//! every scan reads the store with its own position. So a CTE never
//! referenced is never run, and `WITH RECURSIVE t AS (...) SELECT ... FROM t
//! LIMIT 10` stops an endless recursion after ten rows. Scans inside a
//! subplan rebuilt for each outer row find the same materialised rows.
//!
//! CTE scans are parallel-restricted: the registry belongs to the leader's
//! context (workers get an empty one), so the planner must keep CteScan
//! (and WorkTableScan) out of any Gather.

use crate::error::{ExecError, Result};
use crate::memory::WorkMem;
use crate::operator::{ExecContext, Operator};
use crate::tuplestore::{Cursor, TupleStore};
use crate::vector::Batch;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// One CTE: its operator (until exhausted) and the rows it produced.
pub struct CteState {
    producer: Option<Box<dyn Operator>>,
    pub store: TupleStore,
}

pub type SharedCte = Rc<RefCell<CteState>>;

/// The CTEs and recursive working tables of one query, by number.
#[derive(Default)]
pub struct Registry {
    ctes: RefCell<HashMap<usize, SharedCte>>,
    work_tables: RefCell<HashMap<usize, Rc<RefCell<TupleStore>>>>,
}

impl Registry {
    pub fn register(&self, id: usize, cte: SharedCte) {
        self.ctes.borrow_mut().insert(id, cte);
    }

    pub fn cte(&self, id: usize) -> Result<SharedCte> {
        self.ctes
            .borrow()
            .get(&id)
            .cloned()
            .ok_or_else(|| ExecError::new(format!("CTE {id} is not available here")))
    }

    /// The current working table of recursive union `id`.
    pub fn work_table(&self, id: usize) -> Result<Rc<RefCell<TupleStore>>> {
        self.work_tables
            .borrow()
            .get(&id)
            .cloned()
            .ok_or_else(|| ExecError::new(format!("work table {id} is not available here")))
    }

    pub fn set_work_table(&self, id: usize, rows: Rc<RefCell<TupleStore>>) {
        self.work_tables.borrow_mut().insert(id, rows);
    }
}

/// Registers CTE number `id`, whose rows (of `types`) `producer` yields.
pub fn register(
    ctx: &ExecContext,
    id: usize,
    types: &[tusk_storage::DataType],
    producer: Box<dyn Operator>,
) {
    let state = CteState {
        producer: Some(producer),
        store: TupleStore::new(types, WorkMem::sort(ctx)),
    };
    ctx.ctes.register(id, Rc::new(RefCell::new(state)));
}

/// Reads a CTE's rows, evaluating it further when it reaches the end of
/// what is stored.
pub struct CteScan {
    cte: usize,
    ctx: ExecContext,
    state: Option<SharedCte>,
    cursor: Cursor,
}

impl CteScan {
    pub fn new(cte: usize, ctx: &ExecContext) -> CteScan {
        CteScan {
            cte,
            ctx: ctx.clone(),
            state: None,
            cursor: Cursor::default(),
        }
    }
}

impl Operator for CteScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.state.is_none() {
            self.state = Some(self.ctx.ctes.cte(self.cte)?);
        }
        let shared = self.state.as_ref().unwrap().clone();
        loop {
            let mut st = shared.borrow_mut();
            if let Some(b) = self.cursor.next(&mut st.store)? {
                return Ok(Some(b));
            }
            let Some(producer) = st.producer.as_mut() else {
                return Ok(None);
            };
            // Pull with the state released: the producer may read other CTEs.
            let mut producer = std::mem::replace(producer, Box::new(Done));
            drop(st);
            let got = producer.next();
            let mut st = shared.borrow_mut();
            match got? {
                Some(b) => {
                    st.producer = Some(producer);
                    st.store.append(&b)?;
                }
                None => st.producer = None,
            }
        }
    }
}

/// A placeholder operator while a CTE's producer is being pulled.
struct Done;

impl Operator for Done {
    fn next(&mut self) -> Result<Option<Batch>> {
        Err(ExecError::new("CTE evaluated while it is being evaluated"))
    }
}
