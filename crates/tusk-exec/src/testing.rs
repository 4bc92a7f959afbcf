//! Helpers for operator-level tests: a real database for the context (spill
//! files go to its temp directory), batches of given rows as an input, and
//! output as rows of values.

use crate::expr::Expr;
use crate::operator::{ExecContext, NodeStats, Operator};
use crate::plan::{Estimate, NodeKind, Plan};
use crate::spill::SpillStats;
use crate::value::Value;
use crate::vector::{Batch, Vector};
use std::collections::VecDeque;
use std::sync::Arc;
use tusk_storage::{DataType, Database};

/// A database in a temporary directory (dropped with the guard).
pub struct TestDb {
    pub _dir: tempfile::TempDir,
    pub db: Arc<Database>,
}

impl TestDb {
    pub fn new() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(
            dir.path(),
            &[
                ("shared_buffers".into(), "1MB".into()),
                ("min_dynamic_shared_memory".into(), "0".into()),
            ],
        )
        .unwrap();
        TestDb { _dir: dir, db }
    }

    /// A context with `work_mem` bytes, collecting per-node statistics for
    /// `nodes` plan nodes.
    pub fn ctx(&self, work_mem: usize, nodes: usize) -> ExecContext {
        ExecContext {
            db: self.db.clone(),
            snapshot: self.db.txn.snapshot(),
            work_mem,
            hash_mem_multiplier: 2.0,
            stats: Some(std::rc::Rc::new(std::cell::RefCell::new(vec![
                NodeStats::default();
                nodes.max(1)
            ]))),
            spill: SpillStats::new(None),
            parallel: None,
            participant: 0,
            prefetch: true,
            hash_chunk_size: 1 << 16,
            interrupt: crate::interrupt::Interrupt::new(),
            env: Default::default(),
            ctes: Default::default(),
            key_filters: Default::default(),
            params: Default::default(),
        }
    }
}

/// An operator returning the given batches.
pub struct Batches(pub VecDeque<Batch>);

impl Operator for Batches {
    fn next(&mut self) -> crate::Result<Option<Batch>> {
        Ok(self.0.pop_front())
    }
}

/// Rows as batches of `per_batch` rows (columns of types `types`).
pub fn batches(types: &[DataType], rows: &[Vec<Value>], per_batch: usize) -> Batches {
    let mut out = VecDeque::new();
    for chunk in rows.chunks(per_batch.max(1)) {
        let mut cols: Vec<Vector> = types.iter().map(|&t| Vector::empty(t)).collect();
        for r in chunk {
            for (c, v) in cols.iter_mut().zip(r) {
                c.push_value(v);
            }
        }
        out.push_back(Batch::new(cols, chunk.len()));
    }
    Batches(out)
}

/// Every row an operator returns; values typed by `types`.
pub fn rows_of(op: &mut dyn Operator, types: &[DataType]) -> crate::Result<Vec<Vec<Value>>> {
    let mut out = Vec::new();
    while let Some(b) = op.next()? {
        for r in 0..b.len {
            out.push(
                b.columns
                    .iter()
                    .zip(types)
                    .map(|(c, &t)| c.value_as(r, t))
                    .collect(),
            );
        }
    }
    Ok(out)
}

/// Rows in PostgreSQL's text form (NULL as `NULL`), one string per row with
/// `|` between columns, for comparing with psql's `-A` output.
#[allow(dead_code)]
pub fn text_rows(rows: &[Vec<Value>]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_text().unwrap_or_else(|| "NULL".into()))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

pub fn col(index: usize, ty: DataType) -> Expr {
    Expr::Column { index, ty }
}

pub fn lit(value: Value, ty: DataType) -> Expr {
    Expr::Const { value, ty }
}

/// A plan node for tests (estimates zero, names empty).
pub fn node(kind: NodeKind, children: Vec<Plan>, output: Vec<DataType>) -> Plan {
    let names: Vec<String> = output.iter().map(|_| String::new()).collect();
    Plan::new(kind, children, output, names, Estimate::default())
}

/// `generate_series(start, stop)` as bigint.
pub fn series(start: i64, stop: i64) -> Plan {
    node(
        NodeKind::FunctionScan {
            alias: "g".into(),
            calls: vec![crate::srf::SetCall {
                func: crate::func::Func::GenerateSeries,
                args: vec![
                    lit(Value::Int8(start), DataType::Int8),
                    lit(Value::Int8(stop), DataType::Int8),
                ],
                ty: DataType::Int8,
            }],
            ordinality: false,
            filter: None,
        },
        vec![],
        vec![DataType::Int8],
    )
}
