//! Cursors: `DECLARE`, `FETCH`, `MOVE`, `CLOSE`, as PostgreSQL has them
//! for SQL (the wire protocol's portals are the server's).
//!
//! `DECLARE name [BINARY] [NO SCROLL] CURSOR [WITH HOLD | WITHOUT HOLD]
//! FOR query` plans the query, takes the statement's snapshot and starts
//! it on a thread of its own (`stream`), which computes rows as they are
//! fetched. `FETCH` hands out the next rows (`FETCH 100 FROM c1`, `FETCH
//! ALL`, `FETCH ABSOLUTE 5`, ...) with the command tag `FETCH n`; `MOVE`
//! skips them (`MOVE n`); `CLOSE` drops one cursor or all of them.
//!
//! **Scrolling.** `DECLARE c SCROLL CURSOR` may go backward (`PRIOR`,
//! `BACKWARD n`, `FIRST`, `LAST`, `ABSOLUTE n`, `RELATIVE -n`, ...): its
//! rows go to a store within `work_mem` as they are read (`stream`). NO
//! SCROLL cursors only go forward. Without either, a cursor is scrollable
//! when its plan could run backward by PostgreSQL's rule
//! (`Plan::supports_backward_scan`: a scan or a sort, not a join or an
//! aggregate), as in PostgreSQL; such a cursor streams until it first goes
//! back. Going back on a cursor that is not scrollable fails with
//! PostgreSQL's `cursor can only scan forward` (55000). The positions and
//! counts of every direction are PostgreSQL's (`position`).
//!
//! **Lifetime.** A cursor belongs to the transaction that declares it:
//! without WITH HOLD it can only be declared in a transaction block
//! (25P01, as in PostgreSQL; the statements of one query string are a
//! block too) and is closed when the transaction ends. With WITH HOLD it
//! survives the commit: its remaining rows (all of them, if scrollable)
//! are computed into its store before the transaction commits (PostgreSQL
//! materializes them too), and it is
//! closed only by CLOSE or the end of the session; a rollback closes the
//! cursors its transaction declared, held or not. Other errors are
//! PostgreSQL's: `cursor "c" does not exist` (34000), `cursor "c" already
//! exists` (42P03).
//!
//! `pg_cursors` lists the open cursors (kept in the session's
//! `catalog::SessionInfo`).

pub(crate) mod grammar;
mod position;
mod stream;

use crate::error::{sqlstate, SqlError};
use crate::portal::ResultColumn;
use crate::session::{header, render_rows, PlannedQuery, QueryResult, Result, Session};
use position::{Outcome, Portal, RowSource, Select};
use sqlparser::ast as A;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use stream::{CursorThread, RunParts};
use tusk_exec::Batch;
use tusk_storage::DataType;

pub(crate) use grammar::{Direction, FetchStatement};

/// `cursor can only scan forward` (55000).
fn forward_only() -> SqlError {
    SqlError::coded("55000", "cursor can only scan forward")
        .with_hint("Declare it with SCROLL option to enable backward scan.")
}

fn missing(name: &str) -> SqlError {
    SqlError::coded(
        sqlstate::INVALID_CURSOR_NAME,
        format!("cursor \"{name}\" does not exist"),
    )
}

/// One open cursor.
pub(crate) struct Cursor {
    pub name: String,
    /// The DECLARE statement's text (`pg_cursors.statement`).
    pub statement: String,
    pub columns: Vec<ResultColumn>,
    pub types: Vec<DataType>,
    pub binary: bool,
    pub holdable: bool,
    /// It may go backward (`position`'s module doc).
    pub scrollable: bool,
    /// `timestamptz` of the declaration.
    pub created: i64,
    /// Declared by the open transaction (a rollback closes it).
    pub in_transaction: bool,
    rows: RowSource,
    portal: Portal,
}

impl Cursor {
    /// Computes the remaining rows into the cursor's store (a held cursor
    /// at commit).
    fn hold(&mut self) -> Result<()> {
        self.rows.hold(self.scrollable)?;
        self.in_transaction = false;
        Ok(())
    }
}

/// The session's open cursors, by name.
#[derive(Default)]
pub(crate) struct Cursors {
    open: BTreeMap<String, Arc<Mutex<Cursor>>>,
}

fn lock(c: &Mutex<Cursor>) -> std::sync::MutexGuard<'_, Cursor> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// A FETCH's rows as they are pulled (the wire protocol streams them).
pub(crate) struct Fetching {
    cursor: Arc<Mutex<Cursor>>,
    select: Option<Select>,
}

impl Fetching {
    pub(crate) fn next_batch(&mut self) -> Result<Option<Batch>> {
        match self.select.as_mut() {
            Some(s) => lock(&self.cursor).select_next(s),
            None => Ok(None),
        }
    }
}

impl Session {
    /// The cursor called `name`.
    fn cursor(&self, name: &str) -> Result<Arc<Mutex<Cursor>>> {
        self.cursors
            .open
            .get(name)
            .cloned()
            .ok_or_else(|| missing(name))
    }

    /// Tells `pg_cursors` what is open.
    fn publish_cursors(&self) {
        let rows = self
            .cursors
            .open
            .values()
            .map(|c| {
                let c = lock(c);
                crate::catalog::CursorRow {
                    name: c.name.clone(),
                    statement: c.statement.clone(),
                    holdable: c.holdable,
                    binary: c.binary,
                    scrollable: c.scrollable,
                    created: c.created,
                }
            })
            .collect();
        self.info.set_cursors(rows);
    }

    /// `DECLARE name ... CURSOR FOR query` (the query planned already:
    /// `plan_declared` for a statement the protocol prepares).
    pub(crate) fn declare(&mut self, d: &A::Declare) -> Result<QueryResult> {
        let (name, options) = declare_options(d)?;
        let Some(q) = &d.for_query else {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "syntax error at end of input",
            ));
        };
        let pq = self.plan_cursor_query(q, &Default::default())?;
        self.open_cursor(&name, options, &d.to_string(), pq)
    }

    /// Checks DECLARE's options and where it runs, then plans its query.
    pub(crate) fn plan_declared(
        &mut self,
        d: &A::Declare,
        settings: &crate::bind::BindSettings,
    ) -> Result<PlannedQuery> {
        declare_options(d)?;
        let Some(q) = &d.for_query else {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "syntax error at end of input",
            ));
        };
        self.plan_cursor_query(q, settings)
    }

    /// Opens cursor `name` over a planned query (parameters substituted).
    pub(crate) fn open_cursor(
        &mut self,
        name: &str,
        options: CursorOptions,
        statement: &str,
        pq: PlannedQuery,
    ) -> Result<QueryResult> {
        if !options.hold && self.xact.block == crate::xact::Block::None {
            return Err(SqlError::coded(
                crate::xact::NO_ACTIVE_SQL_TRANSACTION,
                "DECLARE CURSOR can only be used in transaction blocks",
            ));
        }
        if self.cursors.open.contains_key(name) {
            return Err(SqlError::coded(
                sqlstate::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already exists"),
            ));
        }
        let snapshot = self.snapshot()?;
        let parts = RunParts {
            db: self.db.clone(),
            gucs: self.gucs.clone(),
            interrupt: self.interrupt.clone(),
            env: self.env.clone(),
            snapshot,
        };
        // PostgreSQL's PerformCursorOpen: without SCROLL or NO SCROLL, a
        // cursor scrolls if its plan can run backward.
        let scrollable = options
            .scroll
            .unwrap_or_else(|| pq.stmt.root.supports_backward_scan());
        let stored = options.scroll == Some(true);
        let thread = CursorThread::start(name, pq.stmt.clone(), parts, stored)?;
        let columns = pq
            .names
            .iter()
            .zip(&pq.column_types)
            .map(|(n, t)| ResultColumn {
                name: n.clone(),
                ty: *t,
            })
            .collect();
        let cursor = Cursor {
            name: name.to_string(),
            statement: statement.to_string(),
            columns,
            types: pq.types.clone(),
            binary: options.binary,
            holdable: options.hold,
            scrollable,
            created: self.env.statement,
            in_transaction: true,
            rows: RowSource::new(thread, stored),
            portal: Portal::default(),
        };
        self.cursors
            .open
            .insert(name.to_string(), Arc::new(Mutex::new(cursor)));
        self.publish_cursors();
        Ok(QueryResult::Command {
            tag: "DECLARE CURSOR".into(),
        })
    }

    /// Positions a cursor for `f` and returns how its rows are pulled (a
    /// MOVE has moved already and returns the count).
    pub(crate) fn start_fetch(&mut self, f: &FetchStatement) -> Result<(Fetching, u64)> {
        let cursor = self.cursor(&f.cursor)?;
        let outcome = lock(&cursor).run_fetch(f.direction, f.is_move)?;
        Ok(match outcome {
            Outcome::Rows(s) => (
                Fetching {
                    cursor,
                    select: Some(s),
                },
                0,
            ),
            Outcome::Moved(n) => (
                Fetching {
                    cursor,
                    select: None,
                },
                n,
            ),
        })
    }

    /// `FETCH` / `MOVE` run to completion (the shell; the wire protocol
    /// streams a FETCH through `portal`).
    pub(crate) fn fetch(&mut self, f: &FetchStatement) -> Result<QueryResult> {
        let (mut fetching, moved) = self.start_fetch(f)?;
        if f.is_move {
            return Ok(QueryResult::Command {
                tag: format!("MOVE {moved}"),
            });
        }
        let (columns, types) = {
            let c = lock(&fetching.cursor);
            (c.columns.clone(), c.types.clone())
        };
        let mut rows = Vec::new();
        while let Some(b) = fetching.next_batch()? {
            rows.extend(render_rows(&b, &types, self.settings()));
        }
        Ok(QueryResult::Rows {
            title: None,
            columns: columns
                .iter()
                .map(|c| header(&c.name, c.data_type()))
                .collect(),
            rows,
        })
    }

    /// The columns a FETCH of cursor `name` returns (Describe).
    pub(crate) fn cursor_columns(&self, name: &str) -> Result<Vec<ResultColumn>> {
        let c = self.cursor(name)?;
        let columns = lock(&c).columns.clone();
        Ok(columns)
    }

    /// The columns of the open cursor called exactly `name`, and whether it
    /// is BINARY: the protocol's Describe of a portal finds SQL cursors
    /// too, as PostgreSQL's cursors are portals (psycopg describes its
    /// server-side cursors so). `None` if no such cursor is open.
    pub fn describe_cursor(&self, name: &str) -> Option<(Vec<ResultColumn>, bool)> {
        let c = self.cursors.open.get(name)?;
        let c = lock(c);
        Some((c.columns.clone(), c.binary))
    }

    /// The types and binary flag of cursor `name`'s rows.
    pub(crate) fn cursor_shape(&self, name: &str) -> Result<(Vec<DataType>, bool)> {
        let c = self.cursor(name)?;
        let c = lock(&c);
        Ok((c.types.clone(), c.binary))
    }

    /// `CLOSE name` / `CLOSE ALL`.
    pub(crate) fn close_cursor(&mut self, c: &A::CloseCursor) -> Result<QueryResult> {
        let tag = match c {
            A::CloseCursor::All => {
                self.cursors.open.clear();
                "CLOSE CURSOR ALL"
            }
            A::CloseCursor::Specific { name } => {
                let name = crate::names::ident(name)?;
                if self.cursors.open.remove(&name).is_none() {
                    return Err(missing(&name));
                }
                "CLOSE CURSOR"
            }
        };
        self.publish_cursors();
        Ok(QueryResult::Command { tag: tag.into() })
    }

    /// What the end of the transaction does to cursors (module doc): at a
    /// commit, held cursors declared by it compute their rows and the
    /// others close; at a rollback, every cursor it declared closes.
    pub(crate) fn cursors_at_transaction_end(&mut self, commit: bool) -> Result<()> {
        if self.cursors.open.is_empty() {
            return Ok(());
        }
        let mut failure = None;
        self.cursors.open.retain(|_, c| {
            let mut c = lock(c);
            if !c.in_transaction {
                return true;
            }
            if !(commit && c.holdable) {
                return false;
            }
            match c.hold() {
                Ok(()) => true,
                Err(e) => {
                    failure.get_or_insert(e);
                    false
                }
            }
        });
        self.publish_cursors();
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// DECLARE's options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CursorOptions {
    pub binary: bool,
    pub hold: bool,
    /// SCROLL (`Some(true)`), NO SCROLL (`Some(false)`) or neither.
    pub scroll: Option<bool>,
}

/// The cursor's name and options.
pub(crate) fn declare_options(d: &A::Declare) -> Result<(String, CursorOptions)> {
    if d.declare_type != Some(A::DeclareType::Cursor) || d.names.len() != 1 {
        return Err(SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            "syntax error at or near \"DECLARE\"",
        ));
    }
    Ok((
        crate::names::ident(&d.names[0])?,
        CursorOptions {
            binary: d.binary == Some(true),
            hold: d.hold == Some(true),
            scroll: d.scroll,
        },
    ))
}
