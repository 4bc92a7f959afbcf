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
//! unnamed one that the next Parse replaces), Bind a portal from it with
//! parameter values, Describe tells a statement's parameter types and
//! result columns or a portal's columns, Execute runs a portal up to a row
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

use crate::conn::{Conn, ReadError};
use crate::engine::{Engine, Outcome, Rows};
use crate::error::{codes, Failure};
use crate::frontend::{self, Message};
use crate::types;
use pgwire::messages::data::{FieldDescription, NoData, ParameterDescription, RowDescription};
use pgwire::messages::extendedquery::{
    BindComplete, CloseComplete, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ReadyForQuery, TransactionStatus,
};
use pgwire::messages::startup::{BackendKeyData, ParameterStatus, SecretKey};
use std::collections::HashMap;
use tusk_exec::Batch;
use tusk_sql::portal::{Parameter, ResultColumn};

/// A prepared statement: `None` for an empty query string.
struct Prepared<S> {
    statement: Option<S>,
    /// One OID per parameter (0: left to the server).
    param_types: Vec<u32>,
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

struct Portal<S, R> {
    statement: Option<S>,
    result_formats: Vec<i16>,
    state: PortalState<R>,
}

/// Why the loop stopped processing a message.
enum Stop {
    /// The client is gone or the session must end.
    Disconnect,
}

type Step<T> = Result<T, Stop>;

/// The session state of one connection.
pub struct Backend<'a, E: Engine> {
    conn: &'a mut Conn,
    engine: &'a mut E,
    statements: HashMap<String, Prepared<E::Statement>>,
    portals: HashMap<String, Portal<E::Statement, E::Rows>>,
    ignore_till_sync: bool,
    /// ParameterStatus values the client has.
    reported: Vec<(&'static str, String)>,
}

fn row_description(columns: &[ResultColumn], formats: &[i16]) -> RowDescription {
    RowDescription::new(
        columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (oid, len) = types::oid_of(c.ty);
                FieldDescription::new(c.name.clone(), 0, 0, oid, len, -1, format_of(formats, i))
            })
            .collect(),
    )
}

/// The format of column `i` under a Bind's result format codes.
fn format_of(formats: &[i16], i: usize) -> i16 {
    match formats {
        [] => 0,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(0),
    }
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

fn txn_status(b: u8) -> TransactionStatus {
    match b {
        b'T' => TransactionStatus::Transaction,
        b'E' => TransactionStatus::Error,
        _ => TransactionStatus::Idle,
    }
}

impl<'a, E: Engine> Backend<'a, E> {
    pub fn new(conn: &'a mut Conn, engine: &'a mut E) -> Backend<'a, E> {
        let reported = engine.reported_settings();
        Backend {
            conn,
            engine,
            statements: HashMap::new(),
            portals: HashMap::new(),
            ignore_till_sync: false,
            reported,
        }
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
    }

    fn ready_for_query(&mut self) -> Step<()> {
        let status = self.engine.transaction_status().byte();
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
        let _ = self.run_inner();
    }

    fn run_inner(&mut self) -> Step<()> {
        let interrupt = self.engine.interrupt();
        loop {
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
                Err(ReadError::Protocol(f)) => return self.fail(&f),
            };
            if tag == b'S' {
                self.ignore_till_sync = false;
            }
            let msg = match frontend::decode(tag, &body) {
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
                    if self.engine.transaction_status() == crate::engine::TxnStatus::Idle {
                        self.portals.clear();
                    }
                    self.ready_for_query()?;
                    continue;
                }
                Message::Terminate => return Ok(()),
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
        self.statements.remove("");
        self.portals.remove("");
        let statements = match self.engine.split(sql) {
            Ok(s) => s,
            Err(e) => {
                self.fail(&e.into())?;
                return self.ready_for_query();
            }
        };
        if statements.is_empty() {
            self.conn.send(EmptyQueryResponse::new());
        }
        for st in statements {
            let mut portal = Portal {
                statement: Some(st),
                result_formats: Vec::new(),
                state: PortalState::Ready,
            };
            self.engine.begin_statement();
            let r = self.run_portal(&mut portal, 0, true);
            self.engine.end_statement();
            if let Err(f) = r? {
                self.fail(&f)?;
                break;
            }
        }
        self.ready_for_query()
    }

    fn parse(&mut self, name: String, query: &str, types: Vec<u32>) -> Step<Result<(), Failure>> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Ok(Err(Failure::error(
                codes::DUPLICATE_PSTATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            )));
        }
        let mut statements = match self.engine.split(query) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e.into())),
        };
        if statements.len() > 1 {
            return Ok(Err(Failure::error(
                codes::SYNTAX_ERROR,
                "cannot insert multiple commands into a prepared statement",
            )));
        }
        let statement = statements.pop();
        let n = statement
            .as_ref()
            .map_or(0, |s| self.engine.parameter_count(s))
            .max(types.len());
        let mut param_types = types;
        param_types.resize(n, 0);
        self.statements.insert(
            name,
            Prepared {
                statement,
                param_types,
            },
        );
        self.conn.send(ParseComplete::new());
        Ok(Ok(()))
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
        let n = prepared.param_types.len();
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
        for (i, (p, &oid)) in params.iter().zip(&prepared.param_types).enumerate() {
            let value = match p {
                None => None,
                Some(bytes) => Some(types::param_text(oid, format_of(formats, i), bytes)?),
            };
            values.push(Parameter {
                value,
                ty: types::param_type(oid),
            });
        }
        let statement = match &prepared.statement {
            Some(s) => Some(self.engine.bind(s, &values)?),
            None => None,
        };
        self.portals.insert(
            portal,
            Portal {
                statement,
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
            let oids = p
                .param_types
                .iter()
                .map(|&t| types::described_param_oid(t))
                .collect();
            let statement = p.statement.clone();
            self.conn.send(ParameterDescription::new(oids));
            let columns = match &statement {
                Some(s) => match self.engine.describe(s) {
                    Ok(c) => c,
                    Err(e) => return Ok(Err(e.into())),
                },
                None => None,
            };
            match columns {
                Some(c) => self.conn.send(row_description(&c, &[])),
                None => self.conn.send(NoData::new()),
            }
            return Ok(Ok(()));
        }
        let Some(mut portal) = self.portals.remove(name) else {
            return Ok(Err(Failure::error(
                codes::UNDEFINED_CURSOR,
                format!("portal \"{name}\" does not exist"),
            )));
        };
        let r = self.describe_portal(&mut portal);
        self.portals.insert(name.to_string(), portal);
        Ok(r)
    }

    fn describe_portal(
        &mut self,
        portal: &mut Portal<E::Statement, E::Rows>,
    ) -> Result<(), Failure> {
        let Some(st) = portal.statement.clone() else {
            self.conn.send(NoData::new());
            return Ok(());
        };
        if matches!(portal.state, PortalState::Ready) && self.engine.is_query(&st) {
            // Start the query now: binding and planning it is what tells
            // its columns, and Execute goes on from here.
            self.start(portal)?;
        }
        let columns = match &portal.state {
            PortalState::Streaming { rows, .. } => Some(rows.columns().to_vec()),
            PortalState::Buffered { columns, .. } => Some(columns.clone()),
            _ => self.engine.describe(&st)?,
        };
        match columns {
            Some(c) => {
                check_formats(&portal.result_formats, Some(c.len()))?;
                self.conn.send(row_description(&c, &portal.result_formats));
            }
            None => self.conn.send(NoData::new()),
        }
        Ok(())
    }

    fn execute(&mut self, name: &str, max_rows: i32) -> Step<Result<(), Failure>> {
        let Some(mut portal) = self.portals.remove(name) else {
            return Ok(Err(Failure::error(
                codes::UNDEFINED_CURSOR,
                format!("portal \"{name}\" does not exist"),
            )));
        };
        self.engine.begin_statement();
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

    /// DEALLOCATE: drops prepared statements of this session.
    fn deallocate(&mut self, target: Option<String>) -> Result<String, Failure> {
        match target {
            None => {
                self.statements.clear();
                Ok("DEALLOCATE ALL".into())
            }
            Some(name) => match self.statements.remove(&name) {
                Some(_) => Ok("DEALLOCATE".into()),
                None => Err(Failure::error(
                    codes::UNDEFINED_PSTATEMENT,
                    format!("prepared statement \"{name}\" does not exist"),
                )),
            },
        }
    }

    /// Starts a portal's statement: a query gets its stream, anything else
    /// runs now.
    fn start(&mut self, portal: &mut Portal<E::Statement, E::Rows>) -> Result<(), Failure> {
        let st = portal
            .statement
            .as_ref()
            .expect("started portals have a statement");
        if let Some(target) = self.engine.deallocate_target(st) {
            let tag = self.deallocate(target)?;
            portal.state = PortalState::Done { tag, sent: false };
            return Ok(());
        }
        let mut notices = Vec::new();
        let outcome = self
            .engine
            .start(st, &mut |level, message| notices.push((level, message)));
        for (level, message) in &notices {
            self.conn.send_notice(level, message);
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
        portal: &mut Portal<E::Statement, E::Rows>,
        limit: u64,
        describe: bool,
    ) -> Step<Result<(), Failure>> {
        if portal.statement.is_none() {
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
                        let d = row_description(rows.columns(), &[]);
                        self.conn.send(d)
                    }
                    PortalState::Buffered { columns, .. } => {
                        let d = row_description(columns, &[]);
                        self.conn.send(d)
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
                self.conn.send(CommandComplete::new(tag));
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
                self.conn.send(CommandComplete::new(tag.clone()));
                portal.state = PortalState::Done { tag, sent: true };
                Ok(Ok(()))
            }
            PortalState::Streaming { rows, pending } => {
                let ncols = rows.columns().len();
                if let Err(f) = check_formats(&formats, Some(ncols)) {
                    return Ok(Err(f));
                }
                let binary: Vec<bool> = (0..ncols).map(|i| format_of(&formats, i) == 1).collect();
                let mut sent = 0u64;
                loop {
                    let (batch, from) = match pending.take() {
                        Some(p) => p,
                        None => match rows.next_batch() {
                            Ok(Some(b)) => (b, 0),
                            Ok(None) => break,
                            Err(e) => return Ok(Err(e.into())),
                        },
                    };
                    let room = if limit == 0 {
                        usize::MAX
                    } else {
                        (limit - sent) as usize
                    };
                    let to = batch.len.min(from.saturating_add(room));
                    types::put_data_rows(&mut self.conn.out, &batch, from, to, &binary);
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
                let tag = format!("SELECT {sent}");
                self.conn.send(CommandComplete::new(tag.clone()));
                portal.state = PortalState::Done { tag, sent: true };
                Ok(Ok(()))
            }
        }
    }
}
