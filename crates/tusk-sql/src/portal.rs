//! Statements one at a time, prepared once and run many times, with a
//! query's rows pulled batch by batch: what a wire-protocol server needs
//! beyond [`Session::execute`].
//!
//! * [`Session::split`] parses a query string into [`Statement`]s.
//! * [`Session::prepare`] makes a [`Prepared`] statement (the protocol's
//!   Parse). A query or data change is bound and planned now, once: the
//!   binder types each `$n` from the declared types or from the context it
//!   is used in (see `bind`), and the plan keeps the parameters as
//!   `Expr::Param` — PostgreSQL's generic plan. [`Prepared::param_types`]
//!   and [`Prepared::columns`] are what ParameterDescription and
//!   RowDescription report.
//! * [`Session::start`] runs a prepared statement with parameter values
//!   (Bind + Execute). The values are substituted as constants into a copy
//!   of the plan (`params`), which runs without being parsed, bound or
//!   planned again. A query (or a change with RETURNING) comes back as a
//!   [`RowStream`] whose [`RowStream::next_batch`] pulls the next batch from
//!   the executor, so a portal can stop after N rows and resume; other
//!   statements run to completion and return their tag or their rendered
//!   rows (SHOW, EXPLAIN).
//!
//! **Invalidation.** A prepared plan remembers the catalog it was planned
//! against. The catalog is copied on write (`tusk_storage::Database::
//! catalog_mut`), so a plan that still holds the old copy can tell, with one
//! pointer comparison, that DDL has happened since; it is then bound and
//! planned again with the same parameter types. If the result columns
//! changed, the execution fails as PostgreSQL's does (`cached plan must not
//! change result type`).
//!
//! The caller brackets each unit of work with [`Session::begin_statement`]
//! / [`Session::end_statement`] and runs on a statement-stack thread (see
//! `session`). A [`RowStream`] holds its snapshot and operator tree; it is
//! not `Send` and lives on the session's thread.
//!
//! **Transactions** are the session's (see `xact`): preparing and running
//! happen in the open transaction block, or outside one each in a
//! transaction of its own (a query's stream goes on reading with its
//! snapshot after that transaction has committed). In a failed block both
//! are refused (25P02) but for transaction control, and a failure of either
//! fails the block. A plan made earlier takes its locks again when it runs.
//! Transaction control statements run as utility statements;
//! [`Session::transaction_status`] tells ReadyForQuery where the session
//! stands. A string of several statements is one transaction when the
//! caller brackets it with [`Session::begin_implicit_block`] and
//! [`Session::end_implicit_block`], as PostgreSQL runs a simple query.

use crate::bind::BindSettings;
use crate::commands::dml::PlannedChange;
use crate::error::{sqlstate, SqlError};
use crate::params;
use crate::parse::{parse, Parsed};
use crate::session::{PlannedQuery, QueryResult, Result, Session};
use sqlparser::ast as A;
use std::sync::Arc;
use tusk_exec::{Batch, Operator, Value};
use tusk_storage::{Catalog, DataType, SqlType};

/// One statement of a query string.
#[derive(Debug, Clone)]
pub struct Statement {
    pub(crate) parsed: Arc<Parsed>,
    /// What the statement cache said about it (see `stmtcache`).
    pub(crate) cache: Option<Arc<crate::stmtcache::Lookup>>,
}

/// A result column: its name and type (with its typmod).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultColumn {
    pub name: String,
    pub ty: SqlType,
}

impl ResultColumn {
    fn text(name: &str) -> ResultColumn {
        ResultColumn {
            name: name.to_string(),
            ty: SqlType::Text,
        }
    }

    pub fn data_type(&self) -> DataType {
        self.ty.data_type()
    }
}

/// The transaction state a client is told about (ReadyForQuery).
pub use crate::xact::TransactionStatus;

/// A plan kept by a prepared statement.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    Query(Box<PlannedQuery>),
    Change(Box<PlannedChange>),
    /// `DECLARE ... CURSOR FOR query`: the query's plan (its parameters
    /// are the statement's).
    Declare(Box<PlannedQuery>, Box<A::Declare>),
}

#[derive(Debug, Clone)]
pub(crate) struct Generic {
    pub(crate) plan: Arc<Plan>,
    /// The catalog the plan was made against.
    pub(crate) catalog: Arc<Catalog>,
    /// Whether every parameter occurs in the plan.
    pub(crate) all_params_used: bool,
    /// Whether a query's parameters are all index keys, read at run time
    /// (`params::only_index_keys`): it runs without a copy of its plan.
    pub(crate) params_at_run_time: bool,
}

/// A statement ready to run with parameter values (cheap to clone: the
/// plan is shared).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) statement: Statement,
    param_types: Arc<[DataType]>,
    columns: Option<Arc<[ResultColumn]>>,
    pub(crate) generic: Option<Generic>,
    /// The values of a simple query's literals that the statement cache
    /// made parameters (see `autoparam`): the values [`Session::start`]
    /// runs it with.
    pub(crate) literals: Vec<Value>,
}

impl Prepared {
    /// The type of each `$n` a client gives a value for, in order: none
    /// when the statement has its values already (a simple query's
    /// literals, EXECUTE's arguments).
    pub fn param_types(&self) -> &[DataType] {
        if self.literals.is_empty() {
            &self.param_types
        } else {
            &[]
        }
    }

    /// The columns the statement returns, `None` if it returns no rows.
    pub fn columns(&self) -> Option<&[ResultColumn]> {
        self.columns.as_deref()
    }

    pub fn statement(&self) -> &Statement {
        &self.statement
    }
}

/// What [`Session::start`] returns.
pub enum Started {
    /// Rows, from a query or a data change's RETURNING list.
    Rows(RowStream),
    /// A statement whose rows were rendered as text (SHOW, EXPLAIN), with
    /// its command tag.
    Rendered {
        columns: Vec<ResultColumn>,
        rows: Vec<Vec<Option<String>>>,
        tag: String,
    },
    /// A statement without rows, with its command tag (`CREATE TABLE`).
    Command { tag: String },
}

enum Source {
    Executor(Box<dyn Operator>),
    /// Rows computed already (RETURNING), handed out once.
    Computed(Option<Batch>),
    /// A FETCH's rows, pulled from its cursor.
    Cursor(crate::commands::cursor::Fetching),
}

/// A running statement's rows, pulled batch by batch.
pub struct RowStream {
    source: Source,
    columns: Arc<[ResultColumn]>,
    types: Vec<DataType>,
    /// The command tag of a data change or FETCH; a query's is `SELECT
    /// n`.
    tag: Option<String>,
    /// Every column goes in binary format (a BINARY cursor's FETCH).
    binary: bool,
    done: bool,
}

impl RowStream {
    pub fn columns(&self) -> &[ResultColumn] {
        &self.columns
    }

    /// The type of each column, as the batches hold it.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// The command tag once `rows` rows have been sent: `SELECT rows` for a
    /// query, the change's own (`INSERT 0 3`) for RETURNING.
    pub fn command_tag(&self, rows: u64) -> String {
        match (&self.tag, &self.source) {
            (_, Source::Cursor(_)) => format!("FETCH {rows}"),
            (Some(t), _) => t.clone(),
            (None, _) => {
                let mut tag = String::with_capacity(16);
                tag.push_str("SELECT ");
                crate::autoparam::push_number(&mut tag, rows);
                tag
            }
        }
    }

    /// Whether the rows must go in binary format whatever the client asked
    /// (a BINARY cursor's FETCH in the simple query protocol).
    pub fn binary(&self) -> bool {
        self.binary
    }

    /// The next batch of rows, `None` once the statement is done. Fails
    /// with the statement's error (including a cancel or timeout).
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        let next = match &mut self.source {
            Source::Executor(op) => op.next().map_err(SqlError::from),
            Source::Computed(b) => Ok(b.take()),
            Source::Cursor(f) => f.next_batch(),
        };
        if !matches!(next, Ok(Some(_))) {
            self.done = true;
        }
        next
    }
}

impl Statement {
    fn sql(&self) -> Option<&A::Statement> {
        match self.parsed.as_ref() {
            Parsed::Sql(s, _) => Some(s),
            _ => None,
        }
    }

    /// The statement as a COPY, if it is one.
    fn copy_statement(&self) -> Result<Option<crate::commands::copy::CopyStatement>> {
        Ok(match self.parsed.as_ref() {
            Parsed::Copy(c) => Some((**c).clone()),
            Parsed::Sql(s, _) if matches!(**s, A::Statement::Copy { .. }) => {
                Some(crate::commands::copy::CopyStatement::from_sqlparser(s)?)
            }
            _ => None,
        })
    }

    /// Whether this is a query (SELECT, VALUES, ...).
    pub fn is_query(&self) -> bool {
        matches!(self.sql(), Some(A::Statement::Query(_)))
    }

    /// For `DEALLOCATE [PREPARE] name | ALL`, which drops prepared
    /// statements of the protocol (the caller keeps them): `Some(None)` for
    /// ALL, `Some(Some(name))` for one.
    pub fn deallocate_target(&self) -> Option<Option<String>> {
        match self.sql()? {
            A::Statement::Deallocate { name, .. } => {
                if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
                    Some(None)
                } else {
                    crate::names::ident(name).ok().map(Some)
                }
            }
            _ => None,
        }
    }
}

impl Session {
    /// Splits `sql` into its statements (none for an empty string).
    pub fn split(&self, sql: &str) -> Result<Vec<Statement>> {
        self.info.set_query(sql);
        Ok(parse(sql)?
            .into_iter()
            .map(|p| Statement {
                parsed: Arc::new(p),
                cache: None,
            })
            .collect())
    }

    /// [`Session::prepare`] for a statement the caller is done with: a
    /// cached plan is moved out of it instead of copied.
    pub fn prepare_owned(
        &mut self,
        mut st: Statement,
        declared: &[Option<DataType>],
        infer: bool,
    ) -> Result<Prepared> {
        if let Some(cache) = st.cache.take() {
            match Arc::try_unwrap(cache) {
                Ok(crate::stmtcache::Lookup::Hit(p)) => return self.cached_plan(p),
                Ok(lookup) => st.cache = Some(Arc::new(lookup)),
                Err(shared) => st.cache = Some(shared),
            }
        }
        self.prepare(&st, declared, infer)
    }

    /// A statement cache hit's plan, refused as `transactional` would have
    /// refused the statement (a cached plan is never transaction control).
    fn cached_plan(&self, p: Prepared) -> Result<Prepared> {
        if self.xact.block == crate::xact::Block::Failed {
            return Err(crate::xact::aborted());
        }
        Ok(p)
    }

    /// Prepares `st`. `declared` holds the types the client gave `$1`,
    /// `$2`, ... (`None`: to be inferred). With `infer`, parameters beyond
    /// `declared` are allowed and typed from their context (Parse);
    /// without, using one is an error (a simple query).
    pub fn prepare(
        &mut self,
        st: &Statement,
        declared: &[Option<DataType>],
        infer: bool,
    ) -> Result<Prepared> {
        if let Some(crate::stmtcache::Lookup::Hit(p)) = st.cache.as_deref() {
            return self.cached_plan(p.clone());
        }
        // Literals are read with the session's settings and catalog (the
        // reg types) while binding.
        let env = self.env.clone();
        let _env = tusk_exec::env::enter(&env);
        // EXECUTE runs a statement PREPARE made, with its values.
        if let Some(A::Statement::Execute {
            name, parameters, ..
        }) = st.sql()
        {
            let mut prepared = None;
            self.transactional(true, &mut |s| {
                prepared = Some(s.execute_named(name.as_ref(), parameters)?);
                Ok(())
            })
            .map_err(|e| self.info.locate(e))?;
            return Ok(prepared.expect("prepared above"));
        }
        // Transaction control needs no plan and runs in a failed block too.
        if st
            .sql()
            .is_some_and(crate::commands::is_transaction_control)
        {
            return self.prepare_in_transaction(st, declared, infer);
        }
        let mut prepared = None;
        self.transactional(true, &mut |s| {
            let p = s.prepare_in_transaction(st, declared, infer)?;
            if let Some(crate::stmtcache::Lookup::Miss { key, shape }) = st.cache.as_deref() {
                s.remember(key, shape.as_ref(), &p);
            }
            prepared = Some(p);
            Ok(())
        })
        .map_err(|e| self.info.locate(e))?;
        Ok(prepared.expect("prepared above"))
    }

    /// [`Session::prepare`] in the session's transaction.
    pub(crate) fn prepare_in_transaction(
        &mut self,
        st: &Statement,
        declared: &[Option<DataType>],
        infer: bool,
    ) -> Result<Prepared> {
        let settings = BindSettings {
            param_types: declared.to_vec(),
        };
        // Taken before planning: DDL during planning makes the plan stale.
        let catalog = self.db.catalog_snapshot();
        let plan = match st.sql() {
            // SELECT ... FOR UPDATE locks rows as it runs: a utility.
            Some(A::Statement::Query(q)) if !q.locks.is_empty() => None,
            Some(A::Statement::Query(q)) => {
                Some(Plan::Query(Box::new(self.plan_query_with(q, &settings)?)))
            }
            Some(A::Statement::Insert(i)) => {
                Some(Plan::Change(Box::new(self.plan_insert(i, &settings)?)))
            }
            Some(A::Statement::Update(u)) => {
                Some(Plan::Change(Box::new(self.plan_update(u, &settings)?)))
            }
            Some(A::Statement::Delete(d)) => {
                Some(Plan::Change(Box::new(self.plan_delete(d, &settings)?)))
            }
            Some(A::Statement::Declare { stmts }) if stmts.len() == 1 => Some(Plan::Declare(
                Box::new(self.plan_declared(&stmts[0], &settings)?),
                Box::new(stmts[0].clone()),
            )),
            _ => None,
        };
        let Some(mut plan) = plan else {
            return Ok(Prepared {
                statement: st.clone(),
                param_types: declared
                    .iter()
                    .map(|t| t.unwrap_or(DataType::Text))
                    .collect(),
                columns: self.utility_columns(st)?.map(Into::into),
                generic: None,
                literals: Vec::new(),
            });
        };
        let (bound, used) = plan.parameters();
        if !infer && bound.len() > declared.len() {
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_PARAMETER,
                format!("there is no parameter ${}", declared.len() + 1),
            ));
        }
        let param_types: Arc<[DataType]> = params::resolve_types(&bound, &used)?.into();
        let all_params_used = (0..param_types.len()).all(|i| used.iter().any(|(u, _)| *u == i));
        let params_at_run_time = match &plan {
            Plan::Query(q) => params::only_index_keys(&q.stmt),
            _ => false,
        };
        Ok(Prepared {
            statement: st.clone(),
            param_types,
            columns: plan.columns().map(Into::into),
            generic: Some(Generic {
                plan: Arc::new(plan),
                catalog,
                all_params_used,
                params_at_run_time,
            }),
            literals: Vec::new(),
        })
    }

    /// Result columns of a statement that is not planned ahead.
    fn utility_columns(&self, st: &Statement) -> Result<Option<Vec<ResultColumn>>> {
        Ok(match st.parsed.as_ref() {
            Parsed::Fetch(f) if !f.is_move => Some(self.cursor_columns(&f.cursor)?),
            Parsed::StatView(view) => Some(
                self.stat_view(*view)
                    .iter()
                    .map(|(n, _)| ResultColumn::text(n))
                    .collect(),
            ),
            Parsed::Sql(s, _) => match s.as_ref() {
                A::Statement::Explain { .. } => Some(vec![ResultColumn::text("QUERY PLAN")]),
                A::Statement::ShowVariable { variable } => {
                    let name: Vec<String> = variable
                        .iter()
                        .map(crate::names::ident)
                        .collect::<Result<_>>()?;
                    if name == ["all"] {
                        Some(
                            ["name", "setting", "description"]
                                .map(ResultColumn::text)
                                .into(),
                        )
                    } else {
                        let name = if name.len() == 2 {
                            name.join(".")
                        } else {
                            name.join(" ")
                        };
                        let canonical = match name.to_ascii_lowercase().as_str() {
                            "transaction_isolation" | "transaction isolation level" => {
                                "transaction_isolation"
                            }
                            "transaction_read_only" => "transaction_read_only",
                            _ => crate::guc::Gucs::canonical_name(&name)
                                .map_err(crate::guc::error)?,
                        };
                        Some(vec![ResultColumn::text(canonical)])
                    }
                }
                _ => None,
            },
            _ => None,
        })
    }

    /// Plans `p` again if DDL has changed the catalog since it was planned.
    fn revalidate(&mut self, p: &mut Prepared) -> Result<()> {
        let Some(g) = &p.generic else {
            return Ok(());
        };
        if Arc::ptr_eq(&g.catalog, &self.db.catalog_snapshot()) {
            return Ok(());
        }
        let declared: Vec<Option<DataType>> = p.param_types.iter().map(|&t| Some(t)).collect();
        let fresh = self.prepare_in_transaction(&p.statement, &declared, false)?;
        if fresh.columns != p.columns {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "cached plan must not change result type",
            ));
        }
        p.generic = fresh.generic;
        Ok(())
    }

    /// Runs `p` with parameter values `values` (one per parameter, of its
    /// type). A query starts and hands back its stream; anything else runs
    /// to completion. NOTICE and INFO messages go to `notice` before the
    /// result.
    pub fn start(
        &mut self,
        p: &mut Prepared,
        values: &[Value],
        notice: &mut dyn FnMut(crate::Notice),
    ) -> Result<Started> {
        self.start_with_copy(p, values, notice, &mut crate::NoCopyClient)
    }

    /// [`Session::start`] with `copy` as the other end of a COPY FROM
    /// STDIN or COPY TO STDOUT (the wire protocol's CopyIn / CopyOut).
    pub fn start_with_copy(
        &mut self,
        p: &mut Prepared,
        values: &[Value],
        notice: &mut dyn FnMut(crate::Notice),
        copy: &mut dyn crate::CopyClient,
    ) -> Result<Started> {
        // A simple query's literals, made parameters by the statement
        // cache, or EXECUTE's arguments: kept for the next run (an EXECUTE
        // prepared by Parse runs again).
        let literals = std::mem::take(&mut p.literals);
        let started = if literals.is_empty() {
            self.start_with_values(p, values, notice, copy)
        } else {
            self.start_with_values(p, &literals, notice, copy)
        };
        p.literals = literals;
        started
    }

    /// [`Session::start_with_copy`] with the values `$n` take.
    fn start_with_values(
        &mut self,
        p: &mut Prepared,
        values: &[Value],
        notice: &mut dyn FnMut(crate::Notice),
        copy: &mut dyn crate::CopyClient,
    ) -> Result<Started> {
        if values.len() != p.param_types.len() {
            return Err(SqlError::coded(
                sqlstate::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {} parameters, but prepared statement requires {}",
                    values.len(),
                    p.param_types.len()
                ),
            ));
        }
        for (i, (v, &ty)) in values.iter().zip(p.param_types.iter()).enumerate() {
            // Values of the string types (and of `json` and `jsonb`, held
            // as text) are all `Value::Text`.
            let string = |t: DataType| {
                matches!(
                    t,
                    DataType::Text
                        | DataType::Varchar
                        | DataType::Bpchar
                        | DataType::Json
                        | DataType::Jsonb
                )
            };
            if v.data_type()
                .is_some_and(|t| t != ty && !(string(t) && string(ty)))
            {
                return Err(SqlError::coded(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "parameter ${} is of type {}, not {}",
                        i + 1,
                        ty.display_name(),
                        v.data_type().map_or("unknown", |t| t.display_name())
                    ),
                ));
            }
        }
        let env = self.env.clone();
        let _env = tusk_exec::env::enter(&env);
        if let Parsed::Fetch(f) = p.statement.parsed.as_ref() {
            if !f.is_move {
                return self.start_fetch_rows(f);
            }
        }
        if p.generic.is_none() {
            return self.run_utility(&p.statement, notice, copy);
        }
        let mut started = None;
        self.transactional(true, &mut |s| {
            s.revalidate(p)?;
            started = Some(s.start_planned(p, values)?);
            Ok(())
        })?;
        Ok(started.expect("started above"))
    }

    /// A FETCH: its rows stream from the cursor as they are pulled.
    fn start_fetch_rows(&mut self, f: &crate::commands::cursor::FetchStatement) -> Result<Started> {
        let mut started = None;
        self.transactional(true, &mut |s| {
            let (columns, binary) = (s.cursor_columns(&f.cursor)?, s.cursor_shape(&f.cursor)?);
            let (fetching, _) = s.start_fetch(f)?;
            started = Some(Started::Rows(RowStream {
                source: Source::Cursor(fetching),
                columns: columns.into(),
                types: binary.0,
                tag: None,
                binary: binary.1,
                done: false,
            }));
            Ok(())
        })?;
        Ok(started.expect("started above"))
    }

    /// Runs a planned statement in the session's transaction.
    fn start_planned(&mut self, p: &Prepared, values: &[Value]) -> Result<Started> {
        let at_run_time = p.generic.as_ref().is_some_and(|g| g.params_at_run_time);
        match p.generic.as_ref().map(|g| &*g.plan) {
            Some(Plan::Declare(q, d)) => {
                let mut q = (**q).clone();
                if !values.is_empty() {
                    params::for_each_statement_expr(&mut q.stmt, &mut |e| {
                        params::substitute(e, values)
                    });
                }
                self.lock_planned(&q)?;
                let (name, options) = crate::commands::cursor::declare_options(d)?;
                let tag = match self.open_cursor(&name, options, &d.to_string(), q)? {
                    QueryResult::Command { tag } => tag,
                    _ => String::new(),
                };
                Ok(Started::Command { tag })
            }
            Some(Plan::Query(q)) => {
                // The plan as it is, unless parameters must be put into a
                // copy of it (see `params`).
                let copy = (!values.is_empty() && !at_run_time).then(|| {
                    let mut stmt = q.stmt.clone();
                    params::for_each_statement_expr(&mut stmt, &mut |e| {
                        params::substitute(e, values)
                    });
                    stmt
                });
                self.lock_planned(q)?;
                let snapshot = self.snapshot()?;
                let mut ctx = self.exec_context(snapshot, false, 0);
                if copy.is_none() && !values.is_empty() {
                    ctx.params = values.into();
                }
                let op = tusk_exec::build::build_statement(copy.as_ref().unwrap_or(&q.stmt), &ctx)?;
                Ok(Started::Rows(RowStream {
                    source: Source::Executor(op),
                    columns: p.columns.clone().unwrap_or_default(),
                    types: q.types.clone(),
                    tag: None,
                    binary: false,
                    done: false,
                }))
            }
            Some(Plan::Change(c)) => {
                let mut c = c.clone();
                if !values.is_empty() {
                    params::for_each_statement_expr(&mut c.rows.stmt, &mut |e| {
                        params::substitute(e, values)
                    });
                    for e in c.returning.iter_mut().flat_map(|r| r.exprs.iter_mut()) {
                        params::substitute(e, values);
                    }
                    // The statement a re-check plans again, and ON CONFLICT's
                    // assignments, hold the parameters too.
                    if let Some(b) = &mut c.bound {
                        let b = Arc::make_mut(b);
                        params::substitute_logical(&mut b.query.plan, values);
                        for cte in &mut b.ctes {
                            params::substitute_logical(&mut cte.plan, values);
                        }
                    }
                    if let Some(tusk_exec::conflict::ConflictAction::Update { set, filter }) =
                        c.on_conflict.as_mut().map(|o| &mut o.action)
                    {
                        for e in set.iter_mut().chain(filter.iter_mut()) {
                            params::substitute(e, values);
                        }
                    }
                }
                let (tag, returned) = self.run_change_rows(&c)?;
                Ok(match (returned, c.returning) {
                    (Some(batch), Some(r)) => Started::Rows(RowStream {
                        source: Source::Computed(Some(batch)),
                        columns: p.columns.clone().unwrap_or_default(),
                        types: r.types,
                        tag: Some(tag),
                        binary: false,
                        done: false,
                    }),
                    _ => Started::Command { tag },
                })
            }
            None => Err(SqlError::new("a utility statement has no plan")),
        }
    }

    /// A parameter value of type `ty` from its text form, read as the
    /// type's input function reads it in this session (`DateStyle`,
    /// `TimeZone`).
    pub fn parameter_value(&self, ty: DataType, text: &str) -> Result<Value> {
        let env = self.env.clone();
        Ok(tusk_exec::cast::from_text(text, ty, &env.cast_env())?)
    }

    /// Runs a statement that is not planned ahead.
    /// EXECUTE run as a whole (`Session::execute`): its rows rendered.
    pub(crate) fn execute_to_sink(
        &mut self,
        parsed: &Parsed,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let st = Statement {
            parsed: Arc::new(parsed.clone()),
            cache: None,
        };
        let mut p = self.prepare(&st, &[], false)?;
        let started = self.start(&mut p, &[], &mut |n| sink(QueryResult::Notice(n)))?;
        let last = match started {
            Started::Rows(mut stream) => {
                let mut rows = Vec::new();
                while let Some(b) = stream.next_batch()? {
                    rows.extend(crate::session::render_rows(
                        &b,
                        stream.types(),
                        self.settings(),
                    ));
                }
                // A change's RETURNING rows, then its own tag.
                let tag = stream.command_tag(rows.len() as u64);
                sink(QueryResult::Rows {
                    title: None,
                    columns: stream
                        .columns()
                        .iter()
                        .map(|c| crate::session::header(&c.name, c.data_type()))
                        .collect(),
                    rows,
                });
                if tag.starts_with("SELECT") {
                    return Ok(());
                }
                QueryResult::Command { tag }
            }
            Started::Rendered { columns, rows, .. } => QueryResult::Rows {
                title: None,
                columns: columns
                    .iter()
                    .map(|c| crate::session::header(&c.name, c.data_type()))
                    .collect(),
                rows,
            },
            Started::Command { tag } => QueryResult::Command { tag },
        };
        sink(last);
        Ok(())
    }

    fn run_utility(
        &mut self,
        st: &Statement,
        notice: &mut dyn FnMut(crate::Notice),
        copy: &mut dyn crate::CopyClient,
    ) -> Result<Started> {
        let mut rows = None;
        let mut tag = None;
        let mut sink = |r| match r {
            QueryResult::Notice(n) => notice(n),
            QueryResult::Rows {
                columns, rows: r, ..
            } => rows = Some((columns, r)),
            QueryResult::Command { tag: t } => tag = Some(t),
        };
        match st.copy_statement()? {
            Some(c) => self.transactional(true, &mut |s| {
                sink(s.copy(&c, copy)?);
                Ok(())
            })?,
            None => self.statement(&st.parsed, &mut sink)?,
        }
        let word = match st.sql() {
            Some(A::Statement::ShowVariable { .. }) => "SHOW",
            Some(A::Statement::Explain { .. }) => "EXPLAIN",
            _ => "SELECT",
        };
        Ok(match (rows, tag) {
            (Some((columns, rows)), tag) => Started::Rendered {
                tag: tag.unwrap_or_else(|| {
                    if word == "SELECT" {
                        format!("SELECT {}", rows.len())
                    } else {
                        word.to_string()
                    }
                }),
                columns: columns
                    .into_iter()
                    .map(|c| ResultColumn::text(&c.name))
                    .collect(),
                rows,
            },
            (None, tag) => Started::Command {
                tag: tag.unwrap_or_default(),
            },
        })
    }
}

impl Plan {
    /// The relations the plan reads or changes.
    pub(crate) fn relations(&self) -> Vec<u32> {
        let (q, target) = match self {
            Plan::Query(q) | Plan::Declare(q, _) => (&**q, None),
            Plan::Change(c) => (&c.rows, Some(c.table.oid)),
        };
        target
            .into_iter()
            .chain(q.relations.iter().map(|(oid, _)| *oid))
            .collect()
    }

    /// The parameter types the binder left (declared or inferred) and
    /// every occurrence of a parameter in the plan.
    fn parameters(&mut self) -> (Vec<Option<DataType>>, Vec<(usize, DataType)>) {
        let mut used = Vec::new();
        let (q, returning) = match self {
            Plan::Query(q) | Plan::Declare(q, _) => (&mut **q, None),
            Plan::Change(c) => (&mut c.rows, c.returning.as_ref()),
        };
        params::for_each_statement_expr(&mut q.stmt, &mut |e| params::occurrences(e, &mut used));
        for e in returning.iter().flat_map(|r| r.exprs.iter()) {
            params::occurrences(e, &mut used);
        }
        (q.params.clone(), used)
    }

    fn columns(&self) -> Option<Vec<ResultColumn>> {
        match self {
            Plan::Declare(..) => None,
            Plan::Query(q) => Some(
                q.names
                    .iter()
                    .zip(&q.column_types)
                    .map(|(n, t)| ResultColumn {
                        name: n.clone(),
                        ty: *t,
                    })
                    .collect(),
            ),
            Plan::Change(c) => c.returning.as_ref().map(|r| {
                r.names
                    .iter()
                    .zip(&r.types)
                    .map(|(n, t)| ResultColumn {
                        name: n.clone(),
                        ty: SqlType::of(*t),
                    })
                    .collect()
            }),
        }
    }
}

#[cfg(test)]
mod tests;
