//! A client session: parses statements, hands each to its command module,
//! and renders results as PostgreSQL would send them.
//!
//! Every statement is its own transaction: statements that write take the
//! single writer slot, run with a snapshot that excludes their own changes,
//! and commit at the end (or abort on the first error, leaving nothing
//! visible).
//!
//! Statements run on a thread with a large stack ([`STATEMENT_STACK`]):
//! parsing, binding and evaluation recurse once per level of nesting, and
//! PostgreSQL accepts queries nested a thousand levels deep.

use crate::bind::{BindSettings, Binder, BoundQuery};
use crate::error::SqlError;
use crate::guc;
use crate::logical::ColumnId;
use crate::parse::{parse, Parsed};
use crate::physical::{Planner, PlannerSettings};
use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;
use tusk_exec::exec::ExecContext;
use tusk_exec::plan::Statement;
use tusk_exec::vector::Data;
use tusk_exec::Batch;
use tusk_storage::{DataType, Database, Snapshot};

pub(crate) type Result<T> = std::result::Result<T, SqlError>;

/// Stack of the thread a statement runs on.
pub const STATEMENT_STACK: usize = 256 << 20;

thread_local! {
    static ON_STATEMENT_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on a thread with [`STATEMENT_STACK`] bytes of stack (this one,
/// if it already is such a thread).
pub fn on_statement_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if ON_STATEMENT_STACK.with(|s| s.get()) {
        return f();
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("tusk-statement".into())
            .stack_size(STATEMENT_STACK)
            .spawn_scoped(scope, || {
                ON_STATEMENT_STACK.with(|s| s.set(true));
                f()
            })
            .expect("spawning a statement thread")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// One column heading of a row result.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnHeader {
    pub name: String,
    /// psql right-aligns numeric columns and left-aligns everything else.
    pub numeric: bool,
}

/// What one statement returns to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryResult {
    /// Rows, already rendered as text; `None` is SQL NULL.
    Rows {
        /// psql prints a centred title above the table (used by `\d`).
        title: Option<String>,
        columns: Vec<ColumnHeader>,
        rows: Vec<Vec<Option<String>>>,
    },
    /// A command tag such as `CREATE TABLE`, `INSERT 0 5`, `DELETE 3`, `SET`.
    Command { tag: String },
    /// A message to the client before the statement's result, such as
    /// VACUUM VERBOSE's; psql prints `LEVEL:  message` on stderr.
    Notice {
        level: &'static str,
        message: String,
    },
}

pub(crate) fn header(name: &str, ty: DataType) -> ColumnHeader {
    ColumnHeader {
        name: name.to_string(),
        numeric: ty.is_numeric(),
    }
}

/// Renders a batch as rows of text (PostgreSQL's output functions).
pub fn render_rows(batch: &Batch, types: &[DataType]) -> Vec<Vec<Option<String>>> {
    let mut rows: Vec<Vec<Option<String>>> = (0..batch.len)
        .map(|_| Vec::with_capacity(batch.columns.len()))
        .collect();
    for (col, &ty) in batch.columns.iter().zip(types) {
        for (i, row) in rows.iter_mut().enumerate() {
            row.push(match &col.data {
                _ if col.is_null(i) => None,
                Data::Text(d) => Some(d.get_str(i).to_string()),
                _ => col.value_as(i, ty).to_text(),
            });
        }
    }
    rows
}

/// A query ready to run: its plan, output names and types.
pub(crate) struct PlannedQuery {
    pub stmt: Statement,
    pub names: Vec<String>,
    pub types: Vec<DataType>,
    /// The output columns' types with their modifiers (`varchar(10)`).
    pub column_types: Vec<tusk_storage::SqlType>,
}

/// A client session on an open data directory.
pub struct Session {
    pub(crate) db: Arc<Database>,
    pub(crate) gucs: guc::Gucs,
}

impl Session {
    /// Opens (creating on first use) the data directory and starts a session.
    pub fn open(data_dir: &Path) -> Result<Session> {
        let db = Database::open(data_dir, &[])?;
        Session::with_database(db)
    }

    /// A session on an already open database (several may share one).
    pub fn with_database(db: Arc<Database>) -> Result<Session> {
        let fixed = [
            (
                "shared_buffers",
                guc::format_kb((db.options().shared_buffers / 1024) as i64),
            ),
            ("huge_pages", db.options().huge_pages.as_str().to_string()),
            (
                "min_dynamic_shared_memory",
                guc::format_kb((db.options().min_dynamic_shared_memory / 1024) as i64),
            ),
            ("huge_pages_status", db.pool.huge_pages_status().to_string()),
        ];
        let gucs = guc::Gucs::new(db.settings(), &fixed).map_err(SqlError::new)?;
        Ok(Session { db, gucs })
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    /// Parses `sql` (one or more statements separated by `;`) and runs the
    /// statements in order, handing each result to `sink`. Stops at the
    /// first error (the results before it are delivered first).
    pub fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(QueryResult)) -> Result<()> {
        let (results, outcome) = on_statement_stack(|| {
            let mut results = Vec::new();
            let outcome = self.execute_collect(sql, &mut results);
            (results, outcome)
        });
        for r in results {
            sink(r);
        }
        outcome
    }

    fn execute_collect(&mut self, sql: &str, out: &mut Vec<QueryResult>) -> Result<()> {
        let stmts = parse(sql)?;
        for s in stmts {
            self.statement(s, &mut |r| out.push(r))?;
        }
        Ok(())
    }

    /// Runs `sql` and returns all results (convenience for tests and tools).
    pub fn query(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        let mut out = Vec::new();
        self.execute(sql, &mut |r| out.push(r))?;
        Ok(out)
    }

    /// Value of a GUC as `SHOW` prints it.
    pub fn show(&self, name: &str) -> Result<String> {
        self.gucs.show(name).map_err(SqlError::new)
    }

    pub(crate) fn statement(&mut self, s: Parsed, sink: &mut dyn FnMut(QueryResult)) -> Result<()> {
        match s {
            Parsed::Sql(stmt) => self.sql_statement(&stmt, sink),
            Parsed::Copy(c) => {
                let r = self.copy(&c, &mut crate::commands::copy::NoCopyClient)?;
                sink(r);
                Ok(())
            }
            Parsed::Vacuum { verbose, table } => self.vacuum(verbose, table, sink),
            Parsed::Checkpoint => {
                self.db.checkpoint()?;
                sink(QueryResult::Command {
                    tag: "CHECKPOINT".into(),
                });
                Ok(())
            }
            Parsed::RecoveryPrefetchStats => {
                let cols = self.db.recovery_stats().columns();
                sink(QueryResult::Rows {
                    title: None,
                    columns: cols
                        .iter()
                        .map(|(n, _)| ColumnHeader {
                            name: n.to_string(),
                            numeric: true,
                        })
                        .collect(),
                    rows: vec![cols.into_iter().map(|(_, v)| Some(v)).collect()],
                });
                Ok(())
            }
        }
    }

    pub(crate) fn exec_context(
        &self,
        snapshot: Snapshot,
        analyze: bool,
        nodes: usize,
    ) -> ExecContext {
        ExecContext {
            db: self.db.clone(),
            snapshot,
            work_mem: self.gucs.work_mem_bytes(),
            hash_mem_multiplier: self.gucs.hash_mem_multiplier(),
            stats: analyze.then(|| {
                std::rc::Rc::new(std::cell::RefCell::new(vec![Default::default(); nodes]))
            }),
            spill: tusk_exec::spill::SpillStats::new(self.gucs.temp_file_limit_bytes()),
            parallel: None,
            participant: 0,
            prefetch: self.gucs.hash_join_prefetch(),
            hash_chunk_size: self.gucs.hash_chunk_size(),
            ctes: Default::default(),
        }
    }

    pub(crate) fn planner_settings(&self) -> PlannerSettings {
        PlannerSettings {
            enable_indexscan: self.gucs.enable_indexscan(),
            enable_seqscan: self.gucs.enable_seqscan(),
            workers: self.gucs.max_parallel_workers(),
            min_parallel_rows: crate::physical::cost::MIN_PARALLEL_ROWS
                * self.gucs.min_parallel_table_scan_size() as f64
                / crate::physical::cost::DEFAULT_MIN_PARALLEL_SCAN,
        }
    }

    /// Binds, rewrites and plans a query.
    pub(crate) fn plan_query(&self, q: &sqlparser::ast::Query) -> Result<PlannedQuery> {
        let catalog = self.db.catalog();
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        let bq = binder.bind_query(q)?;
        self.plan_bound(binder, bq)
    }

    /// Rewrites and plans a bound query.
    pub(crate) fn plan_bound(&self, binder: Binder<'_>, bq: BoundQuery) -> Result<PlannedQuery> {
        let Binder {
            mut cols,
            ctes,
            cte_refs,
            ..
        } = binder;
        let plan = crate::rewrite::rewrite(bq.plan, &mut cols)?;
        let mut ctes = ctes;
        for c in &mut ctes {
            let p = std::mem::replace(&mut c.plan, crate::logical::Logical::unit());
            c.plan = crate::rewrite::rewrite(p, &mut cols)?;
        }
        let types: Vec<DataType> = bq.out.iter().map(|&c| cols.ty(c)).collect();
        let column_types = bq.out.iter().map(|&c| cols.get(c).ty).collect();
        let used = used_columns(&plan, &ctes, &bq.out);
        let mut planner = Planner::new(
            &self.db,
            &cols,
            &ctes,
            &cte_refs,
            self.planner_settings(),
            used,
        );
        let stmt = planner.plan_statement(&plan, &bq.out)?;
        Ok(PlannedQuery {
            stmt,
            names: bq.names,
            types,
            column_types,
        })
    }

    /// Runs a planned query to completion.
    pub(crate) fn run(&self, stmt: &Statement, ctx: &ExecContext) -> Result<Batch> {
        let mut op = tusk_exec::exec::build_statement(stmt, ctx)?;
        Ok(tusk_exec::exec::collect(op.as_mut(), &stmt.root.output)?)
    }
}

/// Every column id an expression of the plan (or its CTEs) reads, plus the
/// statement's outputs: what scans must produce.
fn used_columns(
    plan: &crate::logical::Logical,
    ctes: &[crate::logical::CteDef],
    out: &[ColumnId],
) -> std::collections::HashSet<ColumnId> {
    fn walk(p: &crate::logical::Logical, used: &mut std::collections::HashSet<ColumnId>) {
        p.for_each_expr(&mut |e| {
            let mut v = Vec::new();
            e.columns(&mut v);
            used.extend(v);
        });
        if let crate::logical::Logical::SetOp { left, right, .. }
        | crate::logical::Logical::RecursiveUnion {
            seed: left,
            step: right,
            ..
        } = p
        {
            used.extend(left.output());
            used.extend(right.output());
        }
        for c in p.children() {
            walk(c, used);
        }
    }
    let mut used: std::collections::HashSet<ColumnId> = out.iter().copied().collect();
    walk(plan, &mut used);
    for c in ctes {
        used.extend(c.cols.iter().copied());
        walk(&c.plan, &mut used);
    }
    used
}
