//! # tusk-sql: from SQL text to results
//!
//! A [`Session`] parses SQL with sqlparser's PostgreSQL dialect, binds it
//! against the catalog and plans it (`binder`), runs the plan with tusk-exec,
//! and renders results as text the way PostgreSQL would send them. Each
//! statement is its own transaction: statements that write take the single
//! writer slot, run with a snapshot that excludes their own changes, and
//! commit at the end (or abort on the first error, leaving nothing visible).
//!
//! Settings (`SET`, `SHOW`, `RESET`) live in `guc`; EXPLAIN's text format in
//! `explain`.

pub mod binder;
pub mod client_settings;
pub mod commands;
pub mod error;
pub mod explain;
pub mod guc;
pub mod portal;

use binder::{ident, object_name, sql_type, Binder, BoundQuery};
use sqlparser::ast as A;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tusk_exec::exec::{build, ExecContext};
use tusk_exec::vector::Data;
use tusk_exec::{Batch, Plan};
use tusk_storage::{ColumnDef, DataType, Database, Snapshot, SqlType, TableDef};

pub use error::SqlError;

type Result<T> = std::result::Result<T, SqlError>;

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

/// A client session on an open data directory.
pub struct Session {
    db: Arc<Database>,
    gucs: guc::Gucs,
    /// Checked by the executor once per batch: cancel requests,
    /// `statement_timeout`, shutdown (see `tusk_exec::interrupt`).
    interrupt: tusk_exec::Interrupt,
    /// NOTICEs raised by the running statement, sent before its result.
    notices: Vec<String>,
    /// Where CREATE/ALTER/DROP ROLE keep roles (`commands::role`).
    roles: Option<Arc<dyn commands::role::RoleStore>>,
}

fn header(name: &str, ty: DataType) -> ColumnHeader {
    ColumnHeader {
        name: name.to_string(),
        numeric: matches!(ty, DataType::Int4 | DataType::Int8 | DataType::Numeric),
    }
}

/// Renders a batch as rows of text (PostgreSQL's output functions).
pub fn render_rows(batch: &Batch) -> Vec<Vec<Option<String>>> {
    let mut rows: Vec<Vec<Option<String>>> = (0..batch.len)
        .map(|_| Vec::with_capacity(batch.columns.len()))
        .collect();
    for col in &batch.columns {
        for (i, row) in rows.iter_mut().enumerate() {
            if col.is_null(i) {
                row.push(None);
                continue;
            }
            row.push(Some(match &col.data {
                Data::Bool(d) => if d[i] { "t" } else { "f" }.to_string(),
                Data::Int4(d) => d[i].to_string(),
                Data::Int8(d) => d[i].to_string(),
                Data::Numeric(d) => d[i].to_string(),
                Data::Text(d) => d.get_str(i).to_string(),
            }));
        }
    }
    rows
}

/// What a `VACUUM` statement names.
struct VacuumTarget {
    verbose: bool,
    table: Option<String>,
}

/// Recognises `VACUUM [VERBOSE] [table]` and `VACUUM (VERBOSE) [table]`
/// (sqlparser knows only other dialects' VACUUM). Unquoted names fold to
/// lower case; `"..."` is taken verbatim.
fn vacuum_command(sql: &str) -> Option<VacuumTarget> {
    let text = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    text.get(..6).filter(|w| w.eq_ignore_ascii_case("vacuum"))?;
    let after = &text[6..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace) || after.starts_with('(')) {
        return None;
    }
    let mut rest = after.trim_start();
    let mut verbose = false;
    if let Some(r) = rest.strip_prefix('(') {
        let (opts, after) = r.split_once(')')?;
        for o in opts.split(',') {
            match o.trim().to_ascii_lowercase().as_str() {
                "verbose" | "verbose true" | "verbose on" => verbose = true,
                "verbose false" | "verbose off" => verbose = false,
                _ => return None,
            }
        }
        rest = after.trim_start();
    } else if rest.len() >= 7
        && rest[..7].eq_ignore_ascii_case("verbose")
        && rest[7..].chars().next().is_none_or(char::is_whitespace)
    {
        verbose = true;
        rest = rest[7..].trim_start();
    }
    let table = if rest.is_empty() {
        None
    } else if let Some(q) = rest.strip_prefix('"') {
        Some(q.strip_suffix('"')?.replace("\"\"", "\""))
    } else if rest.chars().all(|c| c.is_alphanumeric() || c == '_') {
        Some(rest.to_lowercase())
    } else {
        return None;
    };
    Some(VacuumTarget { verbose, table })
}

/// The statements [`Session::special_statement`] runs.
enum Special {
    Checkpoint,
    RecoveryPrefetch,
}

fn special_kind(sql: &str) -> Option<Special> {
    let words: Vec<String> = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace())
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let words: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
    match words.as_slice() {
        ["checkpoint"] => Some(Special::Checkpoint),
        ["select", "*", "from", "pg_stat_recovery_prefetch"] => Some(Special::RecoveryPrefetch),
        _ => None,
    }
}

/// A setting's name: dotted custom names (`tusk.hash_join_prefetch`) kept whole.
fn setting_name(n: &A::ObjectName) -> String {
    n.0.iter()
        .map(|p| match p {
            A::ObjectNamePart::Identifier(i) => ident(i),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Turns a sqlparser error into PostgreSQL's `syntax error at or near "x"`.
fn syntax_error(sql: &str, e: &sqlparser::parser::ParserError) -> SqlError {
    let msg = e.to_string();
    let found = msg.split("found: ").nth(1);
    let loc = msg.rsplit_once(" at Line: ").and_then(|(_, rest)| {
        let (l, c) = rest.split_once(", Column: ")?;
        Some((
            l.trim().parse::<usize>().ok()?,
            c.trim().parse::<usize>().ok()?,
        ))
    });
    match (found, loc) {
        (Some(f), _) if f.starts_with("EOF") => SqlError {
            message: "syntax error at end of input".into(),
            position: Some(sql.trim_end().chars().count() + 1),
            ..Default::default()
        },
        (Some(f), Some((line, col))) => {
            let token = f.rsplit_once(" at Line: ").map(|(t, _)| t).unwrap_or(f);
            let mut pos = 0;
            for (i, l) in sql.split('\n').enumerate() {
                if i + 1 == line {
                    pos += col;
                    break;
                }
                pos += l.chars().count() + 1;
            }
            SqlError {
                message: format!("syntax error at or near \"{token}\""),
                position: Some(pos),
                ..Default::default()
            }
        }
        _ => SqlError::new(format!("syntax error: {msg}")),
    }
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
        let gucs = guc::Gucs::new(db.settings(), &fixed).map_err(SqlError::from_setting)?;
        Ok(Session {
            db,
            gucs,
            interrupt: tusk_exec::Interrupt::new(),
            notices: Vec::new(),
            roles: None,
        })
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    /// Parses `sql` (one or more statements separated by `;`) and runs the
    /// statements in order, handing each result to `sink` as soon as it is
    /// complete. Stops at the first error.
    pub fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(QueryResult)) -> Result<()> {
        if let Some(target) = vacuum_command(sql) {
            return self.vacuum(target, sink);
        }
        if let Some(r) = self.special_statement(sql)? {
            sink(r);
            return Ok(());
        }
        let stmts =
            Parser::parse_sql(&PostgreSqlDialect {}, sql).map_err(|e| syntax_error(sql, &e))?;
        for s in &stmts {
            self.interrupt
                .start_statement(self.gucs.statement_timeout());
            let r = self.statement(s);
            self.interrupt.end_statement();
            self.drain_notices(sink);
            sink(r?);
        }
        Ok(())
    }

    /// Hands the NOTICEs the last statement raised to `sink`.
    fn drain_notices(&mut self, sink: &mut dyn FnMut(QueryResult)) {
        for message in self.notices.drain(..) {
            sink(QueryResult::Notice {
                level: "NOTICE",
                message,
            });
        }
    }

    /// The session's interrupt flag: [`tusk_exec::Interrupt::cancel`] on it
    /// (from another thread, or a signal handler) stops the running
    /// statement with `canceling statement due to user request`.
    pub fn interrupt(&self) -> &tusk_exec::Interrupt {
        &self.interrupt
    }

    /// Statements sqlparser does not know: `CHECKPOINT` and the view
    /// `pg_stat_recovery_prefetch` (what the recovery at startup did).
    fn special_statement(&mut self, sql: &str) -> Result<Option<QueryResult>> {
        match special_kind(sql) {
            Some(Special::Checkpoint) => {
                self.db.checkpoint()?;
                Ok(Some(QueryResult::Command {
                    tag: "CHECKPOINT".into(),
                }))
            }
            Some(Special::RecoveryPrefetch) => {
                let cols = self.db.recovery_stats().columns();
                Ok(Some(QueryResult::Rows {
                    title: None,
                    columns: cols
                        .iter()
                        .map(|(n, _)| ColumnHeader {
                            name: n.to_string(),
                            numeric: true,
                        })
                        .collect(),
                    rows: vec![cols.into_iter().map(|(_, v)| Some(v)).collect()],
                }))
            }
            None => Ok(None),
        }
    }

    /// Runs `sql` and returns all results (convenience for tests and tools).
    pub fn query(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        let mut out = Vec::new();
        self.execute(sql, &mut |r| out.push(r))?;
        Ok(out)
    }

    /// psql's `\d` (no table: list of relations) and `\d table`.
    pub fn describe(&mut self, table: Option<&str>) -> Result<QueryResult> {
        let cat = self.db.catalog();
        let text = |s: &str| Some(s.to_string());
        match table {
            None => Ok(QueryResult::Rows {
                title: Some("List of relations".into()),
                columns: ["Schema", "Name", "Type", "Owner"]
                    .iter()
                    .map(|n| ColumnHeader {
                        name: n.to_string(),
                        numeric: false,
                    })
                    .collect(),
                rows: cat
                    .tables()
                    .map(|t| vec![text("public"), text(&t.name), text("table"), text("tusk")])
                    .collect(),
            }),
            Some(name) => {
                let name = name.strip_prefix("public.").unwrap_or(name);
                let t = cat.table(name).ok_or_else(|| {
                    SqlError::new(format!("Did not find any relation named \"{name}\"."))
                })?;
                Ok(QueryResult::Rows {
                    title: Some(format!("Table \"public.{}\"", t.name)),
                    columns: ["Column", "Type", "Collation", "Nullable", "Default"]
                        .iter()
                        .map(|n| ColumnHeader {
                            name: n.to_string(),
                            numeric: false,
                        })
                        .collect(),
                    rows: t
                        .columns
                        .iter()
                        .map(|c| {
                            vec![
                                text(&c.name),
                                text(&c.ty.display_name()),
                                text(""),
                                text(if c.not_null { "not null" } else { "" }),
                                text(""),
                            ]
                        })
                        .collect(),
                })
            }
        }
    }

    /// Value of a GUC as `SHOW` prints it.
    pub fn show(&self, name: &str) -> Result<String> {
        self.gucs.show(name).map_err(SqlError::from_setting)
    }

    fn exec_context(&self, snapshot: Snapshot, analyze: bool, nodes: usize) -> ExecContext {
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
            interrupt: self.interrupt.clone(),
        }
    }

    fn bind_query(&self, q: &A::Query) -> Result<BoundQuery> {
        let cat = self.db.catalog();
        let mut bq = self
            .binder(&cat)
            .with_parallelism(
                self.gucs.max_parallel_workers(),
                self.gucs.min_parallel_table_scan_size(),
            )
            .bind_query(q)?;
        bq.plan.assign_ids();
        Ok(bq)
    }

    /// A binder with the session's planner settings.
    fn binder<'c>(&'c self, cat: &'c tusk_storage::Catalog) -> Binder<'c> {
        Binder::new(&self.db, cat)
            .with_scan_methods(self.gucs.enable_indexscan(), self.gucs.enable_seqscan())
    }

    fn run_plan(&self, plan: &Plan, ctx: &ExecContext) -> Result<Batch> {
        let mut op = build(plan, ctx)?;
        Ok(tusk_exec::exec::collect(op.as_mut(), &plan.output)?)
    }

    fn statement(&mut self, s: &A::Statement) -> Result<QueryResult> {
        match s {
            A::Statement::Query(q) => {
                let bq = self.bind_query(q)?;
                let ctx = self.exec_context(self.db.txn.snapshot(), false, 0);
                let out = self.run_plan(&bq.plan, &ctx)?;
                Ok(QueryResult::Rows {
                    title: None,
                    columns: bq
                        .names
                        .iter()
                        .zip(&bq.plan.output)
                        .map(|(n, t)| header(n, *t))
                        .collect(),
                    rows: render_rows(&out),
                })
            }
            A::Statement::Explain {
                analyze,
                statement,
                format,
                options,
                ..
            } => {
                let mut opts = explain::ExplainOptions {
                    analyze: *analyze,
                    costs: true,
                    timing: true,
                };
                if format.is_some() {
                    return Err(SqlError::new(
                        "EXPLAIN formats other than TEXT are not supported",
                    ));
                }
                for o in options.iter().flatten() {
                    let on = match &o.arg {
                        None => true,
                        Some(A::Expr::Identifier(i)) => {
                            !matches!(ident(i).as_str(), "off" | "false" | "0")
                        }
                        Some(A::Expr::Value(v)) => {
                            !matches!(v.value.to_string().as_str(), "false" | "0")
                        }
                        Some(_) => true,
                    };
                    match ident(&o.name).as_str() {
                        "analyze" => opts.analyze = on,
                        "costs" => opts.costs = on,
                        "timing" => opts.timing = on,
                        "verbose" | "buffers" | "summary" | "settings" | "wal" => {}
                        "format" => {
                            if !matches!(&o.arg, Some(A::Expr::Identifier(i)) if ident(i) == "text")
                            {
                                return Err(SqlError::new(
                                    "EXPLAIN formats other than TEXT are not supported",
                                ));
                            }
                        }
                        other => {
                            return Err(SqlError::new(format!(
                                "unrecognized EXPLAIN option \"{other}\""
                            )))
                        }
                    }
                }
                let A::Statement::Query(q) = statement.as_ref() else {
                    return Err(SqlError::new("EXPLAIN is only supported for SELECT"));
                };
                let planning = Instant::now();
                let bq = self.bind_query(q)?;
                let planning = planning.elapsed();
                let mut lines;
                if opts.analyze {
                    let nodes = bq.plan.assign_ids_count();
                    let ctx = self.exec_context(self.db.txn.snapshot(), true, nodes);
                    let start = Instant::now();
                    self.run_plan(&bq.plan, &ctx)?;
                    let exec_time = start.elapsed();
                    let stats = ctx.stats.as_ref().unwrap().borrow();
                    lines = explain::explain(&bq.plan, opts, Some(&stats));
                    lines.push(format!(
                        "Planning Time: {:.3} ms",
                        planning.as_secs_f64() * 1000.0
                    ));
                    lines.push(format!(
                        "Execution Time: {:.3} ms",
                        exec_time.as_secs_f64() * 1000.0
                    ));
                    lines.push(format!(
                        "tusk: shared_buffers {} ({} buffers, {} mapping table, huge pages {})",
                        self.gucs.show("shared_buffers").unwrap_or_default(),
                        self.db.pool.nbuffers(),
                        self.db.pool.mapping_name(),
                        self.db.pool.huge_pages_status()
                    ));
                } else {
                    lines = explain::explain(&bq.plan, opts, None);
                }
                Ok(QueryResult::Rows {
                    title: None,
                    columns: vec![ColumnHeader {
                        name: "QUERY PLAN".into(),
                        numeric: false,
                    }],
                    rows: lines.into_iter().map(|l| vec![Some(l)]).collect(),
                })
            }
            A::Statement::CreateTable(ct) => self.create_table(ct),
            A::Statement::CreateIndex(ci) => self.create_index(ci),
            // `VACUUM [t]` inside a multi-statement string reaches the
            // parser (alone it is recognised before, with VERBOSE).
            A::Statement::Vacuum(v)
                if !(v.full || v.sort_only || v.delete_only || v.reindex || v.recluster)
                    && v.threshold.is_none()
                    && !v.boost =>
            {
                let table = v.table_name.as_ref().map(object_name).transpose()?;
                let mut result = None;
                self.vacuum(
                    VacuumTarget {
                        verbose: false,
                        table,
                    },
                    &mut |r| result = Some(r),
                )?;
                Ok(result.expect("VACUUM reports a command tag"))
            }
            A::Statement::Drop {
                object_type,
                if_exists,
                names,
                ..
            } => {
                if *object_type == A::ObjectType::Index {
                    return self.drop_index(names, *if_exists);
                }
                if *object_type == A::ObjectType::Role {
                    return self.drop_roles(names, *if_exists);
                }
                if *object_type != A::ObjectType::Table {
                    return Err(SqlError::new(format!(
                        "DROP {object_type} is not supported"
                    )));
                }
                let txn = self.db.txn.begin_write()?;
                let mut victims = Vec::new();
                {
                    let cat = self.db.catalog();
                    for n in names {
                        let name = object_name(n)?;
                        match cat.table(&name) {
                            Some(t) => victims.push(t.clone()),
                            None if *if_exists => self
                                .notices
                                .push(format!("table \"{name}\" does not exist, skipping")),
                            None => {
                                return Err(SqlError::new(format!(
                                    "table \"{name}\" does not exist"
                                )))
                            }
                        }
                    }
                }
                for t in &victims {
                    // Takes effect at commit, once the commit record is durable.
                    self.db.drop_table(&txn, t)?;
                }
                self.db.commit(txn)?;
                Ok(QueryResult::Command {
                    tag: "DROP TABLE".into(),
                })
            }
            A::Statement::Insert(ins) => self.insert(ins),
            A::Statement::CreateRole(cr) => self.create_role(cr),
            A::Statement::AlterRole { name, operation } => self.alter_role(name, operation),
            A::Statement::Delete(d) => {
                let tables = match &d.from {
                    A::FromTable::WithFromKeyword(t) | A::FromTable::WithoutKeyword(t) => t,
                };
                if tables.len() != 1
                    || !tables[0].joins.is_empty()
                    || d.using.is_some()
                    || d.returning.is_some()
                {
                    return Err(SqlError::new(
                        "DELETE supports one table, without USING or RETURNING",
                    ));
                }
                let (table, mut plan) = {
                    let cat = self.db.catalog();
                    self.binder(&cat)
                        .bind_delete(&tables[0].relation, d.selection.as_ref())?
                };
                plan.assign_ids();
                let txn = self.db.txn.begin_write()?;
                let ctx = self.exec_context(txn.snapshot(), false, 0);
                let mut op = build(&plan, &ctx)?;
                let n = tusk_exec::dml::delete(&self.db, table.oid, txn.xid(), op.as_mut())?;
                drop(op);
                self.db.commit(txn)?;
                Ok(QueryResult::Command {
                    tag: format!("DELETE {n}"),
                })
            }
            A::Statement::Set(set) => self.set(set),
            A::Statement::ShowVariable { variable } => {
                let name: Vec<String> = variable.iter().map(ident).collect();
                // `SHOW tusk.x` arrives as two identifiers.
                let name = if name.len() == 2 {
                    name.join(".")
                } else {
                    name.join(" ")
                };
                if name == "all" {
                    return Ok(QueryResult::Rows {
                        title: None,
                        columns: ["name", "setting", "description"]
                            .iter()
                            .map(|n| ColumnHeader {
                                name: n.to_string(),
                                numeric: false,
                            })
                            .collect(),
                        rows: self
                            .gucs
                            .all()
                            .into_iter()
                            .map(|(a, b, c)| vec![Some(a), Some(b), Some(c)])
                            .collect(),
                    });
                }
                let v = self.gucs.show(&name).map_err(SqlError::from_setting)?;
                Ok(QueryResult::Rows {
                    title: None,
                    columns: vec![ColumnHeader {
                        name: guc::Gucs::canonical_name(&name)
                            .unwrap_or_default()
                            .to_string(),
                        numeric: false,
                    }],
                    rows: vec![vec![Some(v)]],
                })
            }
            A::Statement::Reset(r) => {
                match &r.reset {
                    A::Reset::ALL => self.gucs.reset_all(),
                    A::Reset::ConfigurationParameter(n) => self
                        .gucs
                        .reset(&setting_name(n))
                        .map_err(SqlError::from_setting)?,
                    _ => return Err(SqlError::new("RESET of this kind is not supported")),
                }
                Ok(QueryResult::Command {
                    tag: "RESET".into(),
                })
            }
            A::Statement::StartTransaction { .. }
            | A::Statement::Commit { .. }
            | A::Statement::Rollback { .. } => Err(SqlError::new(
                "transaction blocks are not supported: each statement runs in its own transaction",
            )),
            other => Err(SqlError::new(format!(
                "statement is not supported: {}",
                other
                    .to_string()
                    .split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        }
    }

    fn set(&mut self, set: &A::Set) -> Result<QueryResult> {
        let (name, values) = match set {
            A::Set::SingleAssignment {
                variable, values, ..
            } => (setting_name(variable), values.as_slice()),
            A::Set::SetTimeZone { value, .. } => {
                ("TimeZone".to_string(), std::slice::from_ref(value))
            }
            _ => return Err(SqlError::new("this form of SET is not supported")),
        };
        let list = name.eq_ignore_ascii_case("search_path");
        let value = match values {
            [A::Expr::Value(v)] if !list => match &v.value {
                A::Value::SingleQuotedString(s) => s.clone(),
                A::Value::Number(n, _) => n.clone(),
                A::Value::Boolean(b) => b.to_string(),
                other => other.to_string(),
            },
            [A::Expr::Identifier(i)] if ident(i) == "default" => {
                self.gucs.reset(&name).map_err(SqlError::from_setting)?;
                return Ok(QueryResult::Command { tag: "SET".into() });
            }
            [A::Expr::Identifier(i)] if !list => ident(i),
            [A::Expr::UnaryOp {
                op: A::UnaryOperator::Minus,
                expr,
            }] => format!("-{expr}"),
            // A list (`search_path = a, "B"`, `datestyle = iso, mdy`):
            // quoted names keep their quotes for the setting's own parser.
            _ => {
                let mut items = Vec::new();
                for v in values {
                    items.push(match v {
                        A::Expr::Identifier(i) if i.quote_style.is_some() => {
                            client_settings::quote_ident(&i.value)
                        }
                        A::Expr::Identifier(i) => ident(i),
                        A::Expr::Value(v) => match &v.value {
                            A::Value::SingleQuotedString(s) if list => {
                                client_settings::quote_ident(s)
                            }
                            A::Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        _ => {
                            return Err(SqlError::new(format!(
                                "SET {name} takes only one argument"
                            )))
                        }
                    });
                }
                if items.len() > 1 && !list && !name.eq_ignore_ascii_case("datestyle") {
                    return Err(SqlError::new(format!("SET {name} takes only one argument")));
                }
                items.join(", ")
            }
        };
        self.gucs
            .set(&name, &value)
            .map_err(SqlError::from_setting)?;
        Ok(QueryResult::Command { tag: "SET".into() })
    }

    fn create_table(&mut self, ct: &A::CreateTable) -> Result<QueryResult> {
        if ct.temporary || ct.external {
            return Err(SqlError::new("only permanent tables are supported"));
        }
        let name = object_name(&ct.name)?;
        if name.contains('\n') {
            return Err(SqlError::new("table names must not contain newlines"));
        }
        if self.db.catalog().relation_exists(&name) {
            if ct.if_not_exists {
                return Ok(QueryResult::Command {
                    tag: "CREATE TABLE".into(),
                });
            }
            return Err(SqlError::new(format!("relation \"{name}\" already exists")));
        }
        if !ct.constraints.is_empty() {
            return Err(SqlError::new("table constraints are not supported yet"));
        }
        let (columns, query) = match &ct.query {
            Some(q) => {
                if !ct.columns.is_empty() {
                    return Err(SqlError::new(
                        "column definitions with AS are not supported",
                    ));
                }
                let bq = self.bind_query(q)?;
                let cols: Vec<ColumnDef> = bq
                    .names
                    .iter()
                    .zip(&bq.plan.output)
                    .map(|(n, t)| ColumnDef {
                        name: n.clone(),
                        ty: match t {
                            DataType::Bool => SqlType::Bool,
                            DataType::Int4 => SqlType::Int4,
                            DataType::Int8 => SqlType::Int8,
                            DataType::Numeric => SqlType::Numeric,
                            DataType::Text => SqlType::Text,
                        },
                        not_null: false,
                    })
                    .collect();
                (cols, Some(bq))
            }
            None => {
                let mut cols = Vec::new();
                for c in &ct.columns {
                    let mut not_null = false;
                    for o in &c.options {
                        match o.option {
                            A::ColumnOption::NotNull => not_null = true,
                            A::ColumnOption::Null => not_null = false,
                            _ => {
                                return Err(SqlError::new(format!(
                                    "column constraint \"{}\" is not supported yet",
                                    o.option
                                )))
                            }
                        }
                    }
                    cols.push(ColumnDef {
                        name: ident(&c.name),
                        ty: sql_type(&c.data_type)?,
                        not_null,
                    });
                }
                (cols, None)
            }
        };
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].iter().any(|d| d.name == c.name) {
                return Err(SqlError::new(format!(
                    "column \"{}\" specified more than once",
                    c.name
                )));
            }
            if c.name.contains('\n') {
                return Err(SqlError::new("column names must not contain newlines"));
            }
        }
        let txn = self.db.txn.begin_write()?;
        let oid = self.db.catalog_mut().allocate_oid()?;
        let table = TableDef {
            oid,
            name: name.clone(),
            columns,
        };
        self.db.log_create_table(&txn, &table)?;
        self.db.smgr.create(oid)?;
        let result = (|| -> Result<u64> {
            match &query {
                Some(bq) => {
                    let ctx = self.exec_context(txn.snapshot(), false, 0);
                    let mut op = build(&bq.plan, &ctx)?;
                    Ok(tusk_exec::dml::insert(
                        &self.db,
                        &table,
                        txn.xid(),
                        op.as_mut(),
                    )?)
                }
                None => Ok(0),
            }
        })();
        match result {
            Ok(n) => {
                self.db.catalog_mut().add_table(table)?;
                self.db.commit(txn)?;
                Ok(QueryResult::Command {
                    tag: if query.is_some() {
                        format!("SELECT {n}")
                    } else {
                        "CREATE TABLE".into()
                    },
                })
            }
            Err(e) => {
                drop(txn);
                self.db.pool.drop_relation(oid);
                let _ = self.db.smgr.unlink(oid);
                Err(e)
            }
        }
    }

    /// `CREATE INDEX [name] ON table [USING btree] (column)`: a btree built
    /// from a scan of the table's visible rows, in one transaction.
    fn create_index(&mut self, ci: &A::CreateIndex) -> Result<QueryResult> {
        let tag = || QueryResult::Command {
            tag: "CREATE INDEX".into(),
        };
        if ci.unique
            || ci.concurrently
            || !ci.include.is_empty()
            || ci.predicate.is_some()
            || !ci.with.is_empty()
        {
            return Err(SqlError::new(
                "only plain CREATE INDEX [name] ON table (column) is supported",
            ));
        }
        if let Some(u) = &ci.using {
            if !matches!(u, A::IndexType::BTree) {
                return Err(SqlError::new(format!(
                    "access method \"{}\" does not exist",
                    u.to_string().to_lowercase()
                )));
            }
        }
        let (table, column) = {
            let cat = self.db.catalog();
            let binder = self.binder(&cat);
            let table = binder.table(&ci.table_name)?.clone();
            if ci.columns.len() != 1 {
                return Err(SqlError::new(
                    "btree indexes on more than one column are not supported",
                ));
            }
            let A::Expr::Identifier(id) = &ci.columns[0].column.expr else {
                return Err(SqlError::new("indexes on expressions are not supported"));
            };
            let cname = ident(id);
            let column = table
                .columns
                .iter()
                .position(|c| c.name == cname)
                .ok_or_else(|| SqlError::new(format!("column \"{cname}\" does not exist")))?;
            if !matches!(
                table.columns[column].ty.data_type(),
                DataType::Int4 | DataType::Int8
            ) {
                return Err(SqlError::new(format!(
                    "btree indexes on type {} are not supported (integer and bigint are)",
                    table.columns[column].ty.display_name()
                )));
            }
            (table, column)
        };
        let name = match &ci.name {
            Some(n) => {
                let n = object_name(n)?;
                if self.db.catalog().relation_exists(&n) {
                    if ci.if_not_exists {
                        return Ok(tag());
                    }
                    return Err(SqlError::new(format!("relation \"{n}\" already exists")));
                }
                n
            }
            None => {
                // PostgreSQL's choice: table_column_idx, then ...idx1, idx2, ...
                let cat = self.db.catalog();
                let base = format!("{}_{}_idx", table.name, table.columns[column].name);
                let mut n = base.clone();
                let mut k = 0;
                while cat.relation_exists(&n) {
                    k += 1;
                    n = format!("{base}{k}");
                }
                n
            }
        };
        if name.contains('\n') {
            return Err(SqlError::new("index names must not contain newlines"));
        }
        let txn = self.db.txn.begin_write()?;
        let oid = self.db.catalog_mut().allocate_oid()?;
        let index = tusk_storage::IndexDef {
            oid,
            name,
            table: table.oid,
            column,
        };
        self.db.log_create_index(&txn, &index)?;
        self.db.smgr.create(oid)?;
        let built = (|| -> Result<()> {
            // The keys of the visible rows, with their TIDs.
            let plan = Plan::new(
                tusk_exec::NodeKind::SeqScan {
                    table: table.name.clone(),
                    alias: table.name.clone(),
                    oid: table.oid,
                    table_types: table.column_types(),
                    columns: vec![column],
                    with_tid: true,
                    filter: None,
                    parallel: false,
                },
                vec![],
                vec![table.columns[column].ty.data_type(), DataType::Int8],
                vec![],
                Default::default(),
            );
            let ctx = self.exec_context(txn.snapshot(), false, 0);
            let mut op = build(&plan, &ctx)?;
            let mut keys: Vec<(i64, u64)> = Vec::new();
            while let Some(b) = op.next()? {
                let Data::Int8(tids) = &b.columns[1].data else {
                    unreachable!("TID column")
                };
                let col = &b.columns[0];
                for (row, &tid) in tids.iter().enumerate().take(b.len) {
                    if col.is_null(row) {
                        continue;
                    }
                    let v = match &col.data {
                        Data::Int4(d) => d[row] as i64,
                        Data::Int8(d) => d[row],
                        _ => unreachable!("integer column"),
                    };
                    keys.push((v, tid as u64));
                }
            }
            tusk_storage::btree::Btree::new(&self.db.pool, oid).build(&mut keys, txn.xid())?;
            Ok(())
        })();
        match built {
            Ok(()) => {
                self.db.catalog_mut().add_index(index)?;
                self.db.commit(txn)?;
                Ok(tag())
            }
            Err(e) => {
                drop(txn);
                self.db.pool.drop_relation(oid);
                let _ = self.db.smgr.unlink(oid);
                Err(e)
            }
        }
    }

    /// `DROP INDEX [IF EXISTS] name, ...`.
    fn drop_index(&mut self, names: &[A::ObjectName], if_exists: bool) -> Result<QueryResult> {
        let txn = self.db.txn.begin_write()?;
        let mut victims = Vec::new();
        {
            let cat = self.db.catalog();
            for n in names {
                let name = object_name(n)?;
                match cat.index(&name) {
                    Some(i) => victims.push(i.oid),
                    None if if_exists => self
                        .notices
                        .push(format!("index \"{name}\" does not exist, skipping")),
                    None if cat.table(&name).is_some() => {
                        return Err(SqlError::new(format!("\"{name}\" is not an index")))
                    }
                    None => return Err(SqlError::new(format!("index \"{name}\" does not exist"))),
                }
            }
        }
        for oid in victims {
            self.db.drop_relation(&txn, oid)?;
        }
        self.db.commit(txn)?;
        Ok(QueryResult::Command {
            tag: "DROP INDEX".into(),
        })
    }

    /// `VACUUM [VERBOSE] [table]`: every table when none is named, each in
    /// its own transaction. VERBOSE sends PostgreSQL's INFO messages.
    fn vacuum(&mut self, target: VacuumTarget, sink: &mut dyn FnMut(QueryResult)) -> Result<()> {
        let tables: Vec<TableDef> = {
            let cat = self.db.catalog();
            match &target.table {
                Some(name) => vec![cat
                    .table(name)
                    .ok_or_else(|| SqlError::new(format!("relation \"{name}\" does not exist")))?
                    .clone()],
                None => cat.tables().cloned().collect(),
            }
        };
        for table in tables {
            let indexes: Vec<tusk_storage::IndexDef> =
                self.db.catalog().indexes_of(table.oid).cloned().collect();
            let txn = self.db.txn.begin_write()?;
            let report = tusk_storage::vacuum::vacuum_table(
                &self.db,
                &table,
                &indexes,
                txn.xid(),
                self.gucs.maintenance_work_mem_bytes(),
            )?;
            self.db.commit(txn)?;
            if target.verbose {
                for message in report.verbose_messages("tusk") {
                    sink(QueryResult::Notice {
                        level: "INFO",
                        message,
                    });
                }
            }
        }
        sink(QueryResult::Command {
            tag: "VACUUM".into(),
        });
        Ok(())
    }

    fn insert(&mut self, ins: &A::Insert) -> Result<QueryResult> {
        let A::TableObject::TableName(tname) = &ins.table else {
            return Err(SqlError::new(
                "INSERT into a table function is not supported",
            ));
        };
        if ins.returning.is_some() || ins.on.is_some() {
            return Err(SqlError::new(
                "INSERT ... RETURNING / ON CONFLICT is not supported",
            ));
        }
        let Some(source) = &ins.source else {
            return Err(SqlError::new("INSERT needs VALUES or a query"));
        };
        let mut plan = {
            let cat = self.db.catalog();
            let binder = self.binder(&cat);
            let table = binder.table(tname)?.clone();
            // Target columns in the order the statement names them.
            let targets: Vec<usize> = if ins.columns.is_empty() {
                (0..table.columns.len()).collect()
            } else {
                let mut v = Vec::new();
                for c in &ins.columns {
                    let n = object_name(c)?;
                    let i = table
                        .columns
                        .iter()
                        .position(|d| d.name == n)
                        .ok_or_else(|| {
                            SqlError::new(format!(
                                "column \"{n}\" of relation \"{}\" does not exist",
                                table.name
                            ))
                        })?;
                    if v.contains(&i) {
                        return Err(SqlError::new(format!(
                            "column \"{n}\" specified more than once"
                        )));
                    }
                    v.push(i);
                }
                v
            };
            let target_types: Vec<(String, DataType)> = targets
                .iter()
                .map(|&i| {
                    (
                        table.columns[i].name.clone(),
                        table.columns[i].ty.data_type(),
                    )
                })
                .collect();
            let bq = match source.body.as_ref() {
                A::SetExpr::Values(v)
                    if source.order_by.is_none() && source.limit_clause.is_none() =>
                {
                    if v.rows.iter().any(|r| r.len() > targets.len()) {
                        return Err(SqlError::new(
                            "INSERT has more expressions than target columns",
                        ));
                    }
                    if v.rows.iter().any(|r| r.len() < targets.len()) && !ins.columns.is_empty() {
                        return Err(SqlError::new(
                            "INSERT has more target columns than expressions",
                        ));
                    }
                    binder.bind_values(v, Some(&target_types))?
                }
                _ => binder.bind_query(source)?,
            };
            let ncols = bq.plan.output.len();
            if ncols > targets.len() {
                return Err(SqlError::new(
                    "INSERT has more expressions than target columns",
                ));
            }
            if ncols < targets.len() && !ins.columns.is_empty() {
                return Err(SqlError::new(
                    "INSERT has more target columns than expressions",
                ));
            }
            // Project the source into table column order, with assignment casts.
            let mut exprs = Vec::new();
            for (ci, col) in table.columns.iter().enumerate() {
                let ty = col.ty.data_type();
                match targets.iter().position(|&t| t == ci).filter(|&p| p < ncols) {
                    Some(p) => {
                        let src = tusk_exec::Expr::Column {
                            index: p,
                            ty: bq.plan.output[p],
                        };
                        if bq.unknown.get(p).copied().unwrap_or(false) && bq.plan.output[p] != ty {
                            // An untyped literal of the query: convert it now (may fail
                            // with PostgreSQL's input-syntax error, as there).
                            exprs.push(tusk_exec::Expr::Cast {
                                arg: Box::new(src),
                                to: ty,
                            });
                        } else {
                            exprs.push(binder.assign(
                                binder::B {
                                    e: src,
                                    unknown: false,
                                },
                                ty,
                                Some(&col.name),
                            )?);
                        }
                    }
                    None => exprs.push(tusk_exec::Expr::Const {
                        value: tusk_exec::Value::Null,
                        ty,
                    }),
                }
            }
            let types: Vec<DataType> = exprs.iter().map(|e| e.data_type()).collect();
            let names = table.columns.iter().map(|c| c.name.clone()).collect();
            let est = bq.plan.est;
            let plan = Plan::new(
                tusk_exec::NodeKind::Project { exprs },
                vec![bq.plan],
                types,
                names,
                est,
            );
            (table, plan)
        };
        plan.1.assign_ids();
        let (table, plan) = plan;
        let txn = self.db.txn.begin_write()?;
        let ctx = self.exec_context(txn.snapshot(), false, 0);
        let mut op = build(&plan, &ctx)?;
        let n = tusk_exec::dml::insert(&self.db, &table, txn.xid(), op.as_mut())?;
        drop(op);
        self.db.commit(txn)?;
        Ok(QueryResult::Command {
            tag: format!("INSERT 0 {n}"),
        })
    }
}
