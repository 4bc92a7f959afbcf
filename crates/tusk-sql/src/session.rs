//! A client session: parses statements, hands each to its command module,
//! and renders results as PostgreSQL would send them.
//!
//! Statements run in transactions as PostgreSQL's do: one of their own
//! outside a transaction block, the block's inside one, one for a whole
//! string of several statements (see `xact`, which also keeps the block's
//! state that psql's prompt and the wire protocol show).
//!
//! Statements run on a thread with a large stack ([`STATEMENT_STACK`]):
//! parsing, binding and evaluation recurse once per level of nesting, and
//! PostgreSQL accepts queries nested a thousand levels deep. A program that
//! runs many statements (the wire-protocol server) starts its session
//! threads with [`spawn_statement_thread`] so that no statement pays for a
//! thread of its own.
//!
//! Each statement is bracketed by [`Session::begin_statement`] and
//! [`Session::end_statement`]: they arm `statement_timeout` on the session's
//! [`Interrupt`] (which a cancel request from another thread also sets) and
//! fix the statement's start time. The session's [`SessionEnv`] — the
//! client settings `TimeZone`, `DateStyle`, `IntervalStyle` and
//! `extra_float_digits`, and that start time — is installed on the thread
//! while the statement binds and runs, so that casts and value output follow
//! the settings (see `tusk_exec::env`); `SET` rebuilds it.

use crate::bind::{BindSettings, Binder, BoundQuery};
use crate::error::SqlError;
use crate::guc;
use crate::parse::{parse, Parsed};
use crate::physical::{Planner, PlannerSettings};
use crate::xact::SessionXact;
use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;
use tusk_exec::env::SessionEnv;
use tusk_exec::exec::ExecContext;
use tusk_exec::plan::Statement;
use tusk_exec::vector::Data;
use tusk_exec::{Batch, Interrupt};
use tusk_storage::{DataType, Database, Snapshot, SqlType};
use tusk_types::Settings;

pub(crate) type Result<T> = std::result::Result<T, SqlError>;

/// Stack of the thread a statement runs on.
pub const STATEMENT_STACK: usize = 256 << 20;

thread_local! {
    static ON_STATEMENT_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Starts a thread with [`STATEMENT_STACK`] bytes of stack on which
/// statements run directly (a server's session thread).
pub fn spawn_statement_thread<F, T>(
    name: String,
    f: F,
) -> std::io::Result<std::thread::JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new()
        .name(name)
        .stack_size(STATEMENT_STACK)
        .spawn(move || {
            ON_STATEMENT_STACK.with(|s| s.set(true));
            f()
        })
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
    /// VACUUM VERBOSE's.
    Notice(Notice),
}

/// A NOTICE, INFO or WARNING sent ahead of a statement's result; psql
/// prints `LEVEL:  message` on stderr, then `DETAIL:  detail` if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub level: &'static str,
    pub message: String,
    /// PostgreSQL's errdetail, such as the list of objects that `DROP
    /// ... CASCADE` drops beside the one named.
    pub detail: Option<String>,
}

pub(crate) fn header(name: &str, ty: DataType) -> ColumnHeader {
    ColumnHeader {
        name: name.to_string(),
        numeric: ty.is_numeric(),
    }
}

/// Renders a batch as rows of text (PostgreSQL's output functions, in the
/// styles of `settings`).
pub fn render_rows(
    batch: &Batch,
    types: &[DataType],
    settings: &Settings,
) -> Vec<Vec<Option<String>>> {
    let mut rows: Vec<Vec<Option<String>>> = (0..batch.len)
        .map(|_| Vec::with_capacity(batch.columns.len()))
        .collect();
    for (col, &ty) in batch.columns.iter().zip(types) {
        for (i, row) in rows.iter_mut().enumerate() {
            row.push(match &col.data {
                _ if col.is_null(i) => None,
                Data::Text(d) => Some(d.get_str(i).to_string()),
                _ => tusk_exec::cast::output(&col.value_as(i, ty), settings),
            });
        }
    }
    rows
}

/// A query ready to run: its plan, output names and types.
#[derive(Debug, Clone)]
pub(crate) struct PlannedQuery {
    pub stmt: Statement,
    pub names: Vec<String>,
    pub types: Vec<DataType>,
    /// The output columns' types with their modifiers (`varchar(10)`),
    /// as RowDescription reports them.
    pub column_types: Vec<SqlType>,
    /// Types of the `$n` parameters: declared, or inferred from the
    /// context each is used in (`None`: not used and not declared).
    pub params: Vec<Option<DataType>>,
    /// The relations the plan reads (oid, name): a plan kept for later
    /// locks them again when it runs.
    pub relations: Vec<(u32, String)>,
}

/// A client session on an open data directory. Dropping it inside a
/// transaction block rolls the block back.
pub struct Session {
    pub(crate) db: Arc<Database>,
    pub(crate) gucs: guc::Gucs,
    /// The transaction block and the open transaction (see `xact`).
    pub(crate) xact: SessionXact,
    /// Checked by the executor once per batch: cancel requests,
    /// `statement_timeout`, shutdown (see `tusk_exec::interrupt`).
    pub(crate) interrupt: Interrupt,
    /// Lock waits' test of [`Session::interrupt`], made once (every
    /// transaction's wait options carry it).
    pub(crate) cancel_check: tusk_storage::CancelCheck,
    /// The client settings and the running statement's start time, as
    /// casts and value output read them.
    pub(crate) env: Arc<SessionEnv>,
    /// Where CREATE/ALTER/DROP ROLE keep roles (`commands::role`).
    pub(crate) roles: Option<Arc<dyn crate::commands::role::RoleStore>>,
    /// What the executor asks of the session (settings, catalog, user:
    /// see `catalog::info`), installed in `env`.
    pub(crate) info: Arc<crate::catalog::SessionInfo>,
    /// Open cursors (`commands::cursor`).
    pub(crate) cursors: crate::commands::cursor::Cursors,
    /// Plans of simple queries, by shape (`stmtcache`).
    pub(crate) stmt_cache: crate::stmtcache::StmtCache,
    /// Statements prepared with SQL's PREPARE (`commands::prepare`).
    pub(crate) named: crate::commands::prepare::Named,
}

/// PostgreSQL's default `cursor_tuple_fraction`: the share of a cursor's
/// rows its plan is costed to fetch.
const CURSOR_TUPLE_FRACTION: f64 = 0.1;

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
        let gucs = guc::Gucs::new(db.settings(), &fixed).map_err(guc::error)?;
        let xact = SessionXact::new();
        let info = Arc::new(crate::catalog::SessionInfo::new(
            db.clone(),
            gucs.clone(),
            xact.pid,
        ));
        let interrupt = Interrupt::new();
        let cancel_check = {
            let interrupt = interrupt.clone();
            tusk_storage::CancelCheck(Arc::new(move || interrupt.check().is_err()))
        };
        let mut session = Session {
            db,
            gucs,
            interrupt,
            cancel_check,
            env: Arc::default(),
            roles: None,
            xact,
            info,
            cursors: Default::default(),
            stmt_cache: Default::default(),
            named: Default::default(),
        };
        session.sync_env()?;
        session
            .db
            .set_analyze_hook(Arc::new(crate::commands::autoanalyze));
        Ok(session)
    }

    /// Rebuilds the session environment from the settings (after SET).
    pub(crate) fn sync_env(&mut self) -> Result<()> {
        let mut settings = Settings::default();
        let value = |name: &str| self.gucs.show(name).unwrap_or_default();
        let fail = |e: tusk_types::TypeError| SqlError::from(tusk_exec::ExecError::from(e));
        settings.set_time_zone(&value("TimeZone")).map_err(fail)?;
        settings.set_date_style(&value("DateStyle")).map_err(fail)?;
        settings
            .set_interval_style(&value("IntervalStyle"))
            .map_err(fail)?;
        settings.extra_float_digits = value("extra_float_digits").parse().unwrap_or(1);
        settings.bytea_escape = value("bytea_output") == "escape";
        self.info.set_settings(&self.gucs);
        let info: Arc<dyn tusk_exec::session::SessionState> = self.info.clone();
        self.env = Arc::new(SessionEnv {
            settings,
            now: self.env.now,
            statement: self.env.statement,
            session: Some(info),
            interrupt: self.interrupt.clone(),
        });
        Ok(())
    }

    /// Names the database the client connected to (`current_database()`,
    /// `pg_database`): a data directory is one database, which answers to
    /// any name.
    pub fn set_database_name(&mut self, name: &str) {
        self.info.set_database_name(name);
    }

    /// Where `pg_stat_activity` finds the server's sessions.
    pub fn set_activity_source(&mut self, source: Arc<dyn crate::catalog::ActivitySource>) {
        self.info.set_activity_source(source);
    }

    /// Applies the `set_config` calls of the statement that just ended
    /// (see `catalog::info`): as SET or SET LOCAL would, unless the
    /// statement failed; either way the executor's copy of the settings is
    /// the session's again.
    fn apply_setting_changes(&mut self) {
        let changes = self.info.take_setting_changes();
        if changes.is_empty() {
            return;
        }
        if !self.xact.statement_failed {
            for c in changes {
                let local = c.local && self.xact.block != crate::xact::Block::None;
                let _ = self.change_settings(local, &|g| match &c.value {
                    Some(v) => g.set(&c.name, v),
                    None => g.reset(&c.name),
                });
            }
        }
        let _ = self.sync_env();
    }

    /// The client settings values are read and printed with.
    pub fn settings(&self) -> &Settings {
        &self.env.settings
    }

    /// The session's interrupt flag: [`Interrupt::cancel`] on it (from
    /// another thread, or a signal handler) stops the running statement
    /// with `canceling statement due to user request`.
    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// Starts a statement: arms `statement_timeout`, forgets a cancel meant
    /// for an earlier statement and fixes the statement's start time, and
    /// the transaction's when the statement starts one (outside a block, or
    /// the first of a string's implicit block): what `now()` and `'now'`
    /// mean for the whole transaction.
    pub fn begin_statement(&mut self) {
        self.begin_statement_at(tusk_exec::func::datetime::clock_now());
    }

    /// [`Session::begin_statement`] for a statement whose message arrived
    /// at `now` (a `timestamptz`): `statement_timestamp()`, and
    /// `transaction_timestamp()` if it starts a transaction. A server reads
    /// the clock once per message, as PostgreSQL does, and shares the
    /// reading with `pg_stat_activity`'s `query_start`.
    pub fn begin_statement_at(&mut self, now: i64) {
        self.xact.statement_failed = false;
        self.interrupt
            .start_statement(self.gucs.statement_timeout());
        let starts_transaction = self.xact.block == crate::xact::Block::None
            || std::mem::take(&mut self.xact.block_fresh);
        let env = Arc::make_mut(&mut self.env);
        env.statement = now;
        if starts_transaction {
            env.now = now;
        }
    }

    /// Ends a statement: disarms `statement_timeout` and applies its
    /// `set_config` calls.
    pub fn end_statement(&mut self) {
        self.interrupt.end_statement();
        self.apply_setting_changes();
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
        self.info.set_query(sql);
        let stmts = match parse(sql) {
            Ok(s) => s,
            Err(e) => {
                // A syntax error fails an open block too.
                self.fail_statement();
                return Err(e);
            }
        };
        // Several statements outside a block commit together or not at all.
        if stmts.len() > 1 {
            self.begin_implicit_block();
        }
        for s in stmts {
            self.begin_statement();
            let env = self.env.clone();
            let _env = tusk_exec::env::enter(&env);
            let r = self.statement(&s, &mut |r| out.push(r));
            self.end_statement();
            if let Err(e) = r {
                let _ = self.end_implicit_block(false);
                return Err(e.locate(sql));
            }
        }
        self.end_implicit_block(true)?;
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
        self.gucs.show(name).map_err(guc::error)
    }

    pub(crate) fn statement(
        &mut self,
        s: &Parsed,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        match s {
            Parsed::Sql(stmt, locks) => {
                if crate::commands::is_transaction_control(stmt) {
                    return self.transaction_control(stmt, sink);
                }
                if let sqlparser::ast::Statement::Execute { .. } = stmt.as_ref() {
                    return self.execute_to_sink(s, sink);
                }
                let needs_txn = crate::commands::needs_transaction(stmt);
                self.transactional(needs_txn, &mut |s| s.sql_statement(stmt, locks, sink))
            }
            Parsed::Copy(c) => self.transactional(true, &mut |s| {
                let r = s.copy(c, &mut crate::commands::copy::NoCopyClient)?;
                sink(r);
                Ok(())
            }),
            Parsed::Vacuum {
                verbose,
                analyze,
                tables,
            } => self.transactional(false, &mut |s| {
                s.vacuum(*verbose, *analyze, tables.clone(), sink)
            }),
            Parsed::Fetch(f) => self.transactional(true, &mut |s| {
                let r = s.fetch(f)?;
                sink(r);
                Ok(())
            }),
            Parsed::Analyze { verbose, tables } => {
                self.transactional(true, &mut |s| s.analyze(*verbose, tables, sink))
            }
            Parsed::AlterSequence(a) => self.transactional(true, &mut |s| {
                let r = s.alter_sequence(a, sink)?;
                sink(r);
                Ok(())
            }),
            Parsed::Checkpoint => self.transactional(false, &mut |s| {
                s.db.checkpoint()?;
                sink(QueryResult::Command {
                    tag: "CHECKPOINT".into(),
                });
                Ok(())
            }),
            Parsed::StatView(view) => self.transactional(false, &mut |s| {
                let cols = s.stat_view(*view);
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
            }),
        }
    }

    /// A statistics view's columns with their values, in PostgreSQL's order.
    pub(crate) fn stat_view(&self, view: crate::parse::StatView) -> Vec<(&'static str, String)> {
        match view {
            crate::parse::StatView::RecoveryPrefetch => self.db.recovery_stats().columns(),
            crate::parse::StatView::Wal => self.db.wal.stat_columns(),
        }
    }

    pub(crate) fn exec_context(
        &self,
        snapshot: Snapshot,
        analyze: bool,
        nodes: usize,
    ) -> ExecContext {
        exec_context(
            &self.db,
            &self.gucs,
            &self.interrupt,
            &self.env,
            snapshot,
            analyze,
            nodes,
        )
    }

    pub(crate) fn planner_settings(&self) -> PlannerSettings {
        PlannerSettings {
            enable_indexscan: self.gucs.enable_indexscan(),
            enable_seqscan: self.gucs.enable_seqscan(),
            enable_hashjoin: self.gucs.enable_hashjoin(),
            enable_nestloop: self.gucs.enable_nestloop(),
            enable_mergejoin: self.gucs.enable_mergejoin(),
            tuple_fraction: 1.0,
            workers: self.gucs.max_parallel_workers(),
            min_parallel_rows: crate::physical::cost::MIN_PARALLEL_ROWS
                * self.gucs.min_parallel_table_scan_size() as f64
                / crate::physical::cost::DEFAULT_MIN_PARALLEL_SCAN,
            hash_mem: self.gucs.work_mem_bytes() as f64 * self.gucs.hash_mem_multiplier(),
        }
    }

    /// Binds, rewrites and plans a query (locking what it reads).
    pub(crate) fn plan_query(&mut self, q: &sqlparser::ast::Query) -> Result<PlannedQuery> {
        self.plan_query_with(q, &BindSettings::default())
    }

    /// Binds (with `settings`' parameter types), rewrites and plans a query
    /// (locking what it reads).
    pub(crate) fn plan_query_with(
        &mut self,
        q: &sqlparser::ast::Query,
        settings: &BindSettings,
    ) -> Result<PlannedQuery> {
        let planner = self.planner_settings();
        self.bind_and_plan(q, settings, planner)
    }

    /// Binds `q`, then plans it with `planner`'s settings.
    fn bind_and_plan(
        &mut self,
        q: &sqlparser::ast::Query,
        settings: &BindSettings,
        planner: PlannerSettings,
    ) -> Result<PlannedQuery> {
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, settings);
        let bq = binder.bind_query(q)?;
        self.plan_bound_with(binder, bq, planner)
    }

    /// Takes `AccessShareLock` on every relation a bound query reads (see
    /// `xact`: a relation dropped meanwhile makes the statement bind again).
    pub(crate) fn lock_reads(
        &mut self,
        plan: &crate::logical::Logical,
        ctes: &[crate::logical::CteDef],
    ) -> Result<()> {
        for (oid, name) in relations_of(plan, ctes) {
            self.lock_relation(oid, tusk_storage::LockMode::AccessShare, &name)?;
        }
        Ok(())
    }

    /// Takes the locks of a planned query again (a plan kept for later).
    pub(crate) fn lock_planned(&mut self, q: &PlannedQuery) -> Result<()> {
        for (oid, name) in &q.relations {
            self.lock_relation(*oid, tusk_storage::LockMode::AccessShare, name)?;
        }
        Ok(())
    }

    /// Locks what a bound query reads, then rewrites and plans it.
    pub(crate) fn plan_bound(
        &mut self,
        binder: Binder<'_>,
        bq: BoundQuery,
    ) -> Result<PlannedQuery> {
        let settings = self.planner_settings();
        self.plan_bound_with(binder, bq, settings)
    }

    /// Plans a cursor's query: without parallel workers, as PostgreSQL
    /// plans DECLARE CURSOR (its rows are fetched a few at a time, and a
    /// parallel plan could not go backward), and for a tenth of its rows
    /// (`cursor_tuple_fraction`).
    pub(crate) fn plan_cursor_query(
        &mut self,
        q: &sqlparser::ast::Query,
        settings: &BindSettings,
    ) -> Result<PlannedQuery> {
        let planner = PlannerSettings {
            workers: 0,
            tuple_fraction: CURSOR_TUPLE_FRACTION,
            ..self.planner_settings()
        };
        self.bind_and_plan(q, settings, planner)
    }

    fn plan_bound_with(
        &mut self,
        binder: Binder<'_>,
        bq: BoundQuery,
        planner: PlannerSettings,
    ) -> Result<PlannedQuery> {
        self.lock_reads(&bq.plan, &binder.ctes)?;
        let catalog = self.catalog()?;
        let Binder {
            cols,
            ctes,
            cte_refs,
            params,
            ..
        } = binder;
        let bound = BoundStatement {
            query: bq,
            cols,
            ctes,
            cte_refs,
            params: params.into_inner(),
        };
        plan_logical(&self.db, catalog, planner, bound)
    }

    /// Runs a planned query to completion.
    pub(crate) fn run(&self, stmt: &Statement, ctx: &ExecContext) -> Result<Batch> {
        let mut op = tusk_exec::exec::build_statement(stmt, ctx)?;
        Ok(tusk_exec::exec::collect(op.as_mut(), &stmt.root.output)?)
    }
}

/// A bound query with everything the planner needs: the binder's column
/// registry and CTEs.
#[derive(Debug, Clone)]
pub(crate) struct BoundStatement {
    pub query: BoundQuery,
    pub cols: crate::logical::Columns,
    pub ctes: Vec<crate::logical::CteDef>,
    pub cte_refs: Vec<usize>,
    /// Types of the `$n` parameters (see [`PlannedQuery::params`]).
    pub params: Vec<Option<DataType>>,
}

/// Rewrites and plans a bound statement against `catalog`.
pub(crate) fn plan_logical(
    db: &Database,
    catalog: Arc<tusk_storage::Catalog>,
    settings: PlannerSettings,
    bound: BoundStatement,
) -> Result<PlannedQuery> {
    let BoundStatement {
        query: bq,
        mut cols,
        mut ctes,
        cte_refs,
        params,
    } = bound;
    let relations = relations_of(&bq.plan, &ctes);
    let plan = crate::rewrite::rewrite(bq.plan, &mut cols)?;
    for c in &mut ctes {
        let p = std::mem::replace(&mut c.plan, crate::logical::Logical::unit());
        c.plan = crate::rewrite::rewrite(p, &mut cols)?;
    }
    let types: Vec<DataType> = bq.out.iter().map(|&c| cols.ty(c)).collect();
    let column_types = bq.out.iter().map(|&c| cols.get(c).ty).collect();
    let used = crate::logical::reads::columns_read(&plan, &ctes, &bq.out);
    let mut planner =
        Planner::new(db, &cols, &ctes, &cte_refs, settings, used).with_catalog(catalog);
    let stmt = planner.plan_statement(&plan, &bq.out)?;
    Ok(PlannedQuery {
        stmt,
        names: bq.names,
        types,
        column_types,
        params,
        relations,
    })
}

/// The relations (oid, name) a bound query and its CTEs read.
fn relations_of(
    plan: &crate::logical::Logical,
    ctes: &[crate::logical::CteDef],
) -> Vec<(u32, String)> {
    fn walk(p: &crate::logical::Logical, rels: &mut Vec<(u32, String)>) {
        if let crate::logical::Logical::Get { table, .. } = p {
            if !rels.iter().any(|(o, _)| *o == table.oid) {
                rels.push((table.oid, table.name.clone()));
            }
        }
        for c in p.children() {
            walk(c, rels);
        }
    }
    let mut rels = Vec::new();
    walk(plan, &mut rels);
    for c in ctes {
        walk(&c.plan, &mut rels);
    }
    rels
}

/// The execution context of a statement of a session with settings
/// `gucs`, interrupt flag `interrupt` and environment `env`.
pub(crate) fn exec_context(
    db: &Arc<Database>,
    gucs: &guc::Gucs,
    interrupt: &Interrupt,
    env: &Arc<SessionEnv>,
    snapshot: Snapshot,
    analyze: bool,
    nodes: usize,
) -> ExecContext {
    ExecContext {
        db: db.clone(),
        snapshot,
        work_mem: gucs.work_mem_bytes(),
        hash_mem_multiplier: gucs.hash_mem_multiplier(),
        stats: analyze
            .then(|| std::rc::Rc::new(std::cell::RefCell::new(vec![Default::default(); nodes]))),
        spill: tusk_exec::spill::SpillStats::new(gucs.temp_file_limit_bytes()),
        parallel: None,
        participant: 0,
        prefetch: gucs.hash_join_prefetch(),
        hash_chunk_size: gucs.hash_chunk_size(),
        interrupt: interrupt.clone(),
        env: env.clone(),
        ctes: Default::default(),
        key_filters: Default::default(),
        params: Arc::default(),
    }
}
