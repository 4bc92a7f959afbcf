//! A session's message loop: simple and extended query protocol, as
//! PostgreSQL's `PostgresMain` runs it.
//!
//! **Simple query.** A Query message may hold several statements; each gets
//! its RowDescription, DataRows and CommandComplete (or EmptyQueryResponse
//! for an empty string), the first error ends the message, and
//! ReadyForQuery follows. A simple query drops the unnamed statement and
//! portal.
//!
//! **Extended query.** Parse makes a prepared statement (named, or the
//! unnamed one that the next Parse replaces): bound and planned once, with
//! the types of its parameters. Bind makes a portal from it with parameter
//! values decoded for those types, Describe tells a statement's parameter
//! types and result columns or a portal's columns, Execute runs a portal
//! (the prepared plan with the portal's values) up to a row
//! count (0: all) and answers PortalSuspended when it stopped at the count,
//! so that the next Execute resumes where it stopped; Close drops a
//! statement or portal, Flush writes queued output, and Sync ends the
//! cycle with ReadyForQuery. After an error in any of these, messages are
//! skipped until the next Sync. Portals end with their transaction, that
//! is, at Sync while every statement is its own transaction; prepared
//! statements last until Close or the end of the session.
//!
//! **Rows** are written from the executor's batches into the output
//! buffer, which goes to the socket every 64 kB: a query's result is never
//! held whole in memory, and a portal keeps at most the rest of one batch
//! between Executes.
//!
//! **Ending.** The loop ends when the client sends Terminate or goes away
//! (its session is dropped: a statement in progress is abandoned and its
//! work rolled back), after a FATAL error (a framing violation), and at
//! shutdown, when the session's interrupt is terminated.

use crate::activity::Activity;
use crate::conn::{Conn, ReadError, Transport};
use crate::copy::WireCopy;
use crate::engine::{Engine, Outcome, Rows};
use crate::error::{codes, Failure};
use crate::frontend::{self, Message};
use crate::types;
use pgwire::messages::data::{NoData, ParameterDescription};
use pgwire::messages::extendedquery::{
    BindComplete, CloseComplete, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{EmptyQueryResponse, ReadyForQuery, TransactionStatus};
use pgwire::messages::startup::{BackendKeyData, ParameterStatus, SecretKey};
use std::sync::{Arc, Mutex, MutexGuard};
use tusk_exec::{Batch, Value};
use tusk_sql::portal::{ResultColumn, TransactionStatus as Txn};
use tusk_storage::fasthash::FastHashMap;

/// A prepared statement, shared by the portals made from it; `None` for an
/// empty query string. (`Arc` and `Mutex`, not `Rc` and `RefCell`, so that
/// an idle session can move to another thread: see `pool`.)
type Shared<P> = Option<Arc<Mutex<P>>>;

/// The prepared statement behind `m` (a panic while it was locked left it
/// as it was: a statement is never half-updated).
fn lock<P>(m: &Mutex<P>) -> MutexGuard<'_, P> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

enum PortalState<R> {
    /// Bound, not started.
    Ready,
    /// A query producing rows; `pending` is the rest of a batch cut short
    /// by a row limit.
    Streaming {
        rows: R,
        pending: Option<(Batch, usize)>,
    },
    /// Rows rendered by a non-query statement (SHOW, EXPLAIN).
    Buffered {
        columns: Vec<ResultColumn>,
        rows: std::vec::IntoIter<Vec<Option<String>>>,
        tag: String,
    },
    /// Finished with `tag`; `sent` once the client has it (executing the
    /// portal again then reports no rows).
    Done { tag: String, sent: bool },
}

struct Portal<P, R> {
    prepared: Shared<P>,
    /// The statement's text (`pg_stat_activity.query`).
    query: Arc<str>,
    params: Vec<Value>,
    result_formats: Vec<i16>,
    state: PortalState<R>,
}

/// How [`Backend::serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// The session is over: the client left or was told to.
    Ended,
    /// No message is waiting and the session may move (see `pool`).
    Idle,
}

/// Why the loop stopped processing a message.
enum Stop {
    /// The client is gone or the session must end.
    Disconnect,
}

type Step<T> = Result<T, Stop>;

/// The session state of one connection.
pub struct Backend<E: Engine> {
    conn: Conn,
    engine: E,
    statements: FastHashMap<String, Shared<E::Prepared>>,
    /// The text of each prepared statement.
    queries: FastHashMap<String, Arc<str>>,
    portals: FastHashMap<String, Portal<E::Prepared, E::Rows>>,
    /// What `pg_stat_activity` shows of this session.
    activity: Option<Arc<Activity>>,
    ignore_till_sync: bool,
    /// ParameterStatus values the client has.
    reported: Vec<(&'static str, String)>,
}

/// Checks result format codes: each 0 or 1, and as many as the columns
/// (`ncols`, once known) unless one applies to all.
fn check_formats(formats: &[i16], ncols: Option<usize>) -> Result<(), Failure> {
    if let Some(f) = formats.iter().find(|f| !matches!(f, 0 | 1)) {
        return Err(Failure::error(
            codes::INVALID_PARAMETER_VALUE,
            format!("unsupported format code: {f}"),
        ));
    }
    let Some(ncols) = ncols else {
        return Ok(());
    };
    if formats.len() > 1 && formats.len() != ncols {
        return Err(Failure::error(
            codes::PROTOCOL_VIOLATION,
            format!(
                "bind message has {} result formats but query has {ncols} columns",
                formats.len()
            ),
        ));
    }
    Ok(())
}

fn txn_status(t: Txn) -> TransactionStatus {
    match t {
        Txn::Idle => TransactionStatus::Idle,
        Txn::InBlock => TransactionStatus::Transaction,
        Txn::Failed => TransactionStatus::Error,
    }
}

impl<E: Engine> Backend<E> {
    pub fn new(conn: Conn, engine: E) -> Backend<E> {
        let reported = engine.reported_settings();
        Backend {
            conn,
            engine,
            statements: FastHashMap::default(),
            queries: FastHashMap::default(),
            portals: FastHashMap::default(),
            activity: None,
            ignore_till_sync: false,
            reported,
        }
    }

    /// Keeps `activity` up to date with what the session does.
    pub fn with_activity(mut self, activity: Arc<Activity>) -> Backend<E> {
        activity.set_identity(
            &self.reported_value("session_authorization"),
            &self.reported_value("application_name"),
        );
        self.activity = Some(activity);
        self
    }

    fn reported_value(&self, name: &str) -> String {
        self.reported
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// A statement whose message arrived now starts (`pg_stat_activity`);
    /// returns the time, for [`Engine::begin_statement`].
    fn activity_start(&self, query: &str) -> i64 {
        let now = tusk_exec::func::datetime::clock_now();
        if let Some(a) = &self.activity {
            a.start(query, self.engine.transaction_status() != Txn::Idle, now);
        }
        now
    }

    /// Ends the startup: the reported settings (ParameterStatus), the
    /// cancel key (BackendKeyData) and the first ReadyForQuery. `false` if
    /// the client is gone.
    pub fn greet(&mut self, pid: i32, secret: i32) -> bool {
        for (name, value) in &self.reported {
            self.conn
                .send(ParameterStatus::new(name.to_string(), value.clone()));
        }
        self.conn
            .send(BackendKeyData::new(pid, SecretKey::I32(secret)));
        self.ready_for_query().is_ok()
    }

    /// Sends ParameterStatus for reported settings that changed.
    fn report_changes(&mut self) {
        let now = self.engine.reported_settings();
        for (name, value) in &now {
            if !self.reported.iter().any(|(n, v)| n == name && v == value) {
                self.conn
                    .send(ParameterStatus::new(name.to_string(), value.clone()));
            }
        }
        self.reported = now;
        if let Some(a) = &self.activity {
            a.set_identity(
                &self.reported_value("session_authorization"),
                &self.reported_value("application_name"),
            );
        }
    }

    fn ready_for_query(&mut self) -> Step<()> {
        let status = self.engine.transaction_status();
        if let Some(a) = &self.activity {
            a.idle(match status {
                Txn::Idle => "idle",
                Txn::InBlock => "idle in transaction",
                Txn::Failed => "idle in transaction (aborted)",
            });
        }
        self.conn.send(ReadyForQuery::new(txn_status(status)));
        self.flush()
    }

    fn flush(&mut self) -> Step<()> {
        self.conn.flush().map_err(|_| Stop::Disconnect)
    }

    fn flush_if_full(&mut self) -> Step<()> {
        self.conn.flush_if_full().map_err(|_| Stop::Disconnect)
    }

    /// Reports `f`; a FATAL one ends the session.
    fn fail(&mut self, f: &Failure) -> Step<()> {
        self.conn.send_failure(f);
        if f.fatal {
            let _ = self.conn.flush();
            return Err(Stop::Disconnect);
        }
        Ok(())
    }

    /// Runs the loop until the session ends.
    pub fn run(&mut self) {
        let _ = self.serve(false, false);
    }

    /// Whether the session may continue on another thread: a plain socket
    /// (rustls may hold decrypted input that the socket does not show) and
    /// no portal in the middle of its rows (an executor's state belongs to
    /// the thread that runs it).
    pub fn movable(&self) -> bool {
        matches!(self.conn.io, Transport::Plain(_))
            && self
                .portals
                .values()
                .all(|p| !matches!(p.state, PortalState::Streaming { .. }))
    }

    /// The session's socket.
    pub fn socket(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.conn.io.socket()
    }

    /// Runs messages until the session ends ([`Served::Ended`]), or, with
    /// `yield_when_idle`, until no whole message is waiting and the session
    /// is [`movable`](Backend::movable) ([`Served::Idle`]). `readable`: the
    /// socket was just seen readable, so the first read need not wait.
    pub fn serve(&mut self, readable: bool, yield_when_idle: bool) -> Served {
        if readable {
            self.conn.skip_next_wait();
        }
        match self.run_inner(yield_when_idle) {
            Ok(true) => Served::Idle,
            Ok(false) | Err(Stop::Disconnect) => Served::Ended,
        }
    }

    /// `Ok(true)` when idle (see [`Backend::serve`]), `Ok(false)` when
    /// ended.
    fn run_inner(&mut self, yield_when_idle: bool) -> Step<bool> {
        let interrupt = self.engine.interrupt();
        loop {
            if yield_when_idle && !self.conn.known_readable() && !self.conn.has_buffered_message() {
                if self.movable() {
                    return Ok(true);
                }
                // The read below waits for the client, as a lock wait
                // waits for another session: announce it (the session
                // pool gives this thread's seat away meanwhile).
                tusk_storage::wait_event::blocking();
            }
            let (tag, body) = match self.conn.read_message(false) {
                Ok(m) => m,
                Err(ReadError::Closed) => {
                    if interrupt.is_terminated() {
                        self.fail(&Failure::fatal(
                            codes::ADMIN_SHUTDOWN,
                            tusk_exec::interrupt::TERMINATED_MESSAGE,
                        ))?;
                    }
                    return Err(Stop::Disconnect);
                }
                Err(ReadError::Protocol(f)) => {
                    self.fail(&f)?;
                    return Ok(false);
                }
            };
            if tag == b'S' {
                self.ignore_till_sync = false;
            }
            let msg = match frontend::decode(tag, body) {
                Ok(m) => m,
                Err(f) => {
                    if self.ignore_till_sync {
                        continue;
                    }
                    self.fail(&f)?;
                    let extended = matches!(tag, b'P' | b'B' | b'D' | b'E' | b'C' | b'H');
                    if extended {
                        self.ignore_till_sync = true;
                    } else {
                        self.ready_for_query()?;
                    }
                    continue;
                }
            };
            if self.ignore_till_sync {
                continue;
            }
            let extended = msg.is_extended();
            let result = match msg {
                Message::Query(sql) => {
                    self.simple_query(&sql)?;
                    continue;
                }
                Message::Parse { name, query, types } => self.parse(name, &query, types),
                Message::Bind {
                    portal,
                    statement,
                    param_formats,
                    params,
                    result_formats,
                } => self.bind(portal, &statement, &param_formats, params, result_formats),
                Message::Describe { kind, name } => self.describe(kind, &name),
                Message::Execute { portal, max_rows } => self.execute(&portal, max_rows),
                Message::Close { kind, name } => {
                    if kind == b'S' {
                        self.statements.remove(&name);
                        self.queries.remove(&name);
                    } else {
                        self.portals.remove(&name);
                    }
                    self.conn.send(CloseComplete::new());
                    Ok(Ok(()))
                }
                Message::Flush => {
                    self.flush()?;
                    continue;
                }
                Message::Sync => {
                    // Portals end with their transaction.
                    if self.engine.transaction_status() == Txn::Idle {
                        self.portals.clear();
                    }
                    self.ready_for_query()?;
                    continue;
                }
                Message::Terminate => return Ok(false),
                // Stray COPY messages are ignored, as PostgreSQL does.
                Message::CopyData(_) | Message::CopyDone | Message::CopyFail(_) => continue,
                Message::Password(_) => Ok(Err(Failure::fatal(
                    codes::PROTOCOL_VIOLATION,
                    "invalid frontend message type 112",
                ))),
            };
            if let Err(f) = result? {
                self.fail(&f)?;
                if extended {
                    self.ignore_till_sync = true;
                }
            }
        }
    }

    /// A Query message: every statement, then ReadyForQuery.
    fn simple_query(&mut self, sql: &str) -> Step<()> {
        // (Most sessions never have unnamed ones: skip hashing "" then.)
        if !self.statements.is_empty() {
            self.statements.remove("");
            self.queries.remove("");
        }
        let arrived = self.activity_start(sql);
        if !self.portals.is_empty() {
            self.portals.remove("");
        }
        let statements = match self.engine.split_simple(sql) {
            Ok(s) => s,
            Err(e) => {
                self.fail(&e.into())?;
                return self.ready_for_query();
            }
        };
        if statements.is_empty() {
            self.conn.send(EmptyQueryResponse::new());
        }
        // Several statements are one transaction (PostgreSQL's implicit
        // transaction block), unless they open a block of their own.
        let several = statements.len() > 1;
        if several {
            self.engine.begin_implicit_block();
        }
        let mut ok = true;
        for st in statements {
            self.engine.begin_statement(arrived);
            let r = self.simple_statement(st);
            self.engine.end_statement();
            if let Err(f) = r? {
                ok = false;
                self.fail(&f)?;
                break;
            }
        }
        if several {
            if let Err(e) = self.engine.end_implicit_block(ok) {
                self.fail(&e.into())?;
            }
        }
        self.ready_for_query()
    }

    /// One statement of a simple query: prepared without parameters and
    /// run to the end, with its RowDescription.
    fn simple_statement(&mut self, st: E::Statement) -> Step<Result<(), Failure>> {
        let prepared = match self.engine.prepare(st, &[], false) {
            Ok(p) => p,
            Err(e) => return Ok(Err(e.into())),
        };
        let mut portal = Portal {
            prepared: Some(Arc::new(Mutex::new(prepared))),
            query: Arc::from(""),
            params: Vec::new(),
            result_formats: Vec::new(),
            state: PortalState::Ready,
        };
        self.run_portal(&mut portal, 0, true)
    }

    fn parse(&mut self, name: String, query: &str, types: Vec<u32>) -> Step<Result<(), Failure>> {
        Ok(self
            .parse_inner(name, query, types)
            .map(|()| self.conn.send(ParseComplete::new())))
    }

    fn parse_inner(&mut self, name: String, query: &str, types: Vec<u32>) -> Result<(), Failure> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(Failure::error(
                codes::DUPLICATE_PSTATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        // A declared type tusk does not know fails after the text parsed.
        let declared = types
            .iter()
            .map(|&oid| types::declared_type(oid))
            .collect::<Result<Vec<_>, _>>();
        let mut statements = match &declared {
            Ok(d) => self.engine.split_for_parse(query, d)?,
            Err(_) => self.engine.split(query)?,
        };
        if statements.len() > 1 {
            return Err(Failure::error(
                codes::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let declared = declared?;
        let prepared = match statements.pop() {
            Some(st) => {
                self.engine
                    .begin_statement(tusk_exec::func::datetime::clock_now());
                let p = self.engine.prepare(st, &declared, true);
                self.engine.end_statement();
                Some(Arc::new(Mutex::new(p?)))
            }
            None => None,
        };
        self.queries.insert(name.clone(), Arc::from(query));
        self.statements.insert(name, prepared);
        Ok(())
    }

    fn bind(
        &mut self,
        portal: String,
        statement: &str,
        formats: &[i16],
        params: Vec<Option<Vec<u8>>>,
        result_formats: Vec<i16>,
    ) -> Step<Result<(), Failure>> {
        Ok(self
            .bind_inner(portal, statement, formats, params, result_formats)
            .map(|()| self.conn.send(BindComplete::new())))
    }

    fn bind_inner(
        &mut self,
        portal: String,
        statement: &str,
        formats: &[i16],
        params: Vec<Option<Vec<u8>>>,
        result_formats: Vec<i16>,
    ) -> Result<(), Failure> {
        let prepared = self.statements.get(statement).ok_or_else(|| {
            Failure::error(
                codes::UNDEFINED_PSTATEMENT,
                if statement.is_empty() {
                    "unnamed prepared statement does not exist".to_string()
                } else {
                    format!("prepared statement \"{statement}\" does not exist")
                },
            )
        })?;
        if !portal.is_empty() && self.portals.contains_key(&portal) {
            return Err(Failure::error(
                codes::DUPLICATE_CURSOR,
                format!("portal \"{portal}\" already exists"),
            ));
        }
        let prepared = prepared.clone();
        let param_types = match &prepared {
            Some(p) => self.engine.param_types(&lock(p)),
            None => Vec::new(),
        };
        let n = param_types.len();
        if formats.len() > 1 && formats.len() != params.len() {
            return Err(Failure::error(
                codes::PROTOCOL_VIOLATION,
                format!(
                    "bind message has {} parameter formats but {} parameters",
                    formats.len(),
                    params.len()
                ),
            ));
        }
        if params.len() != n {
            return Err(Failure::error(
                codes::PROTOCOL_VIOLATION,
                format!(
                    "bind message supplies {} parameters, but prepared statement \"{statement}\" requires {n}",
                    params.len()
                ),
            ));
        }
        check_formats(&result_formats, None)?;
        let mut values = Vec::with_capacity(n);
        for (i, (p, &ty)) in params.iter().zip(&param_types).enumerate() {
            values.push(match p {
                None => Value::Null,
                Some(bytes) => types::param_value(
                    &self.engine,
                    ty,
                    types::format_of(formats, i),
                    bytes,
                    i + 1,
                )?,
            });
        }
        self.portals.insert(
            portal,
            Portal {
                prepared,
                query: self
                    .queries
                    .get(statement)
                    .cloned()
                    .unwrap_or_else(|| Arc::from("")),
                params: values,
                result_formats,
                state: PortalState::Ready,
            },
        );
        Ok(())
    }

    fn describe(&mut self, kind: u8, name: &str) -> Step<Result<(), Failure>> {
        if kind == b'S' {
            let Some(p) = self.statements.get(name) else {
                return Ok(Err(Failure::error(
                    codes::UNDEFINED_PSTATEMENT,
                    format!("prepared statement \"{name}\" does not exist"),
                )));
            };
            let (oids, columns) = match p {
                Some(p) => {
                    let p = lock(p);
                    let oids = self
                        .engine
                        .param_types(&p)
                        .iter()
                        .map(|t| t.oid())
                        .collect();
                    (oids, self.engine.columns(&p))
                }
                None => (Vec::new(), None),
            };
            self.conn.send(ParameterDescription::new(oids));
            match columns {
                Some(c) => types::put_row_description(&mut self.conn.out, &c, &[]),
                None => self.conn.send(NoData::new()),
            }
            return Ok(Ok(()));
        }
        let Some(portal) = self.portals.get(name) else {
            // A SQL cursor is a portal too.
            if let Some((columns, binary)) = self.engine.cursor_columns(name) {
                let formats: &[i16] = if binary { &[1] } else { &[] };
                types::put_row_description(&mut self.conn.out, &columns, formats);
                return Ok(Ok(()));
            }
            return Ok(Err(Failure::error(
                codes::INVALID_CURSOR_NAME,
                format!("portal \"{name}\" does not exist"),
            )));
        };
        let columns = match &portal.state {
            PortalState::Streaming { rows, .. } => Some(rows.columns().to_vec()),
            PortalState::Buffered { columns, .. } => Some(columns.clone()),
            _ => portal
                .prepared
                .as_ref()
                .and_then(|p| self.engine.columns(&lock(p))),
        };
        let formats = portal.result_formats.clone();
        match columns {
            Some(c) => {
                if let Err(f) = check_formats(&formats, Some(c.len())) {
                    return Ok(Err(f));
                }
                types::put_row_description(&mut self.conn.out, &c, &formats);
            }
            None => self.conn.send(NoData::new()),
        }
        Ok(Ok(()))
    }

    fn execute(&mut self, name: &str, max_rows: i32) -> Step<Result<(), Failure>> {
        let Some(mut portal) = self.portals.remove(name) else {
            return Ok(Err(Failure::error(
                codes::INVALID_CURSOR_NAME,
                format!("portal \"{name}\" does not exist"),
            )));
        };
        let arrived = self.activity_start(&portal.query);
        self.engine.begin_statement(arrived);
        let limit = if max_rows <= 0 { 0 } else { max_rows as u64 };
        let r = self.run_portal(&mut portal, limit, false);
        self.engine.end_statement();
        let r = r?;
        // A failed portal is gone; a finished one stays until Sync/Close.
        if r.is_ok() {
            self.portals.insert(name.to_string(), portal);
        }
        Ok(r)
    }

    /// DEALLOCATE: drops the protocol's prepared statements it names (all
    /// of them for ALL). `true` when that was all there was to do; else
    /// the SQL layer runs it for the statements its PREPARE made.
    fn deallocate(&mut self, target: Option<String>) -> bool {
        match target {
            None => {
                self.statements.clear();
                self.queries.clear();
                false
            }
            Some(name) => {
                self.queries.remove(&name);
                self.statements.remove(&name).is_some()
            }
        }
    }

    /// Starts a portal's statement: a query gets its stream, anything else
    /// runs now.
    fn start(&mut self, portal: &mut Portal<E::Prepared, E::Rows>) -> Result<(), Failure> {
        let prepared = portal
            .prepared
            .clone()
            .expect("started portals have a statement");
        let target = self.engine.deallocate_target(&lock(&prepared));
        if let Some(target) = target {
            if self.deallocate(target) {
                portal.state = PortalState::Done {
                    tag: "DEALLOCATE".into(),
                    sent: false,
                };
                return Ok(());
            }
        }
        let mut notices = Vec::new();
        let mut copy = WireCopy::new(&mut self.conn);
        let outcome = self.engine.start(
            &mut lock(&prepared),
            &portal.params,
            &mut |n| notices.push(n),
            &mut copy,
        );
        if outcome.is_ok() {
            copy.finish();
        }
        for n in &notices {
            self.conn.send_notice(n);
        }
        if !notices.is_empty() {
            let _ = self.conn.flush();
        }
        portal.state = match outcome? {
            Outcome::Rows(rows) => PortalState::Streaming {
                rows,
                pending: None,
            },
            Outcome::Rendered { columns, rows, tag } => PortalState::Buffered {
                columns,
                rows: rows.into_iter(),
                tag,
            },
            Outcome::Command { tag } => {
                if tag == "SET" || tag == "RESET" {
                    self.report_changes();
                }
                PortalState::Done { tag, sent: false }
            }
        };
        Ok(())
    }

    /// Runs a portal for up to `limit` rows (0: all); `describe` sends the
    /// RowDescription first (simple query).
    fn run_portal(
        &mut self,
        portal: &mut Portal<E::Prepared, E::Rows>,
        limit: u64,
        describe: bool,
    ) -> Step<Result<(), Failure>> {
        if portal.prepared.is_none() {
            self.conn.send(EmptyQueryResponse::new());
            return Ok(Ok(()));
        }
        if matches!(portal.state, PortalState::Ready) {
            if let Err(f) = self.start(portal) {
                return Ok(Err(f));
            }
            if describe {
                match &portal.state {
                    PortalState::Streaming { rows, .. } => {
                        let formats: &[i16] = if rows.binary() { &[1] } else { &[] };
                        types::put_row_description(&mut self.conn.out, rows.columns(), formats)
                    }
                    PortalState::Buffered { columns, .. } => {
                        types::put_row_description(&mut self.conn.out, columns, &[])
                    }
                    _ => {}
                }
            }
        }
        let formats = portal.result_formats.clone();
        match &mut portal.state {
            PortalState::Ready => unreachable!("started above"),
            PortalState::Done { tag, sent } => {
                let tag = if *sent && tag.starts_with("SELECT") {
                    "SELECT 0".to_string()
                } else {
                    tag.clone()
                };
                *sent = true;
                types::put_command_complete(&mut self.conn.out, &tag);
                Ok(Ok(()))
            }
            PortalState::Buffered { columns, rows, tag } => {
                if let Err(f) = check_formats(&formats, Some(columns.len())) {
                    return Ok(Err(f));
                }
                let mut sent = 0u64;
                for row in rows.by_ref() {
                    types::put_text_row(&mut self.conn.out, &row);
                    sent += 1;
                    self.flush_if_full()?;
                    if sent == limit {
                        break;
                    }
                }
                if sent == limit && limit > 0 {
                    self.conn.send(PortalSuspended::new());
                    return Ok(Ok(()));
                }
                let tag = if tag.starts_with("SELECT") {
                    format!("SELECT {sent}")
                } else {
                    tag.clone()
                };
                types::put_command_complete(&mut self.conn.out, &tag);
                portal.state = PortalState::Done { tag, sent: true };
                Ok(Ok(()))
            }
            PortalState::Streaming { rows, pending } => {
                let ncols = rows.columns().len();
                if let Err(f) = check_formats(&formats, Some(ncols)) {
                    return Ok(Err(f));
                }
                let forced = formats.is_empty() && rows.binary();
                // Empty when every column is text (no allocation then).
                let binary: Vec<bool> = if forced || formats.contains(&1) {
                    (0..ncols)
                        .map(|i| forced || types::format_of(&formats, i) == 1)
                        .collect()
                } else {
                    Vec::new()
                };
                let mut sent = 0u64;
                loop {
                    let (batch, from) = match pending.take() {
                        Some(p) => p,
                        None => match rows.next_batch() {
                            Ok(Some(b)) => (b, 0),
                            Ok(None) => break,
                            Err(e) => {
                                self.engine.statement_failed();
                                return Ok(Err(e.into()));
                            }
                        },
                    };
                    let room = if limit == 0 {
                        usize::MAX
                    } else {
                        (limit - sent) as usize
                    };
                    let to = batch.len.min(from.saturating_add(room));
                    types::put_data_rows(
                        &mut self.conn.out,
                        &batch,
                        rows.types(),
                        from,
                        to,
                        &binary,
                        self.engine.settings(),
                    );
                    sent += (to - from) as u64;
                    if to < batch.len {
                        *pending = Some((batch, to));
                    }
                    self.flush_if_full()?;
                    if limit > 0 && sent == limit {
                        self.conn.send(PortalSuspended::new());
                        return Ok(Ok(()));
                    }
                }
                let tag = rows.command_tag(sent);
                types::put_command_complete(&mut self.conn.out, &tag);
                portal.state = PortalState::Done { tag, sent: true };
                Ok(Ok(()))
            }
        }
    }
}
