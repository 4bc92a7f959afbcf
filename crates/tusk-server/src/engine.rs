//! What the protocol needs from the SQL layer, and its implementation over
//! today's [`tusk_sql::Session`].
//!
//! The protocol code ([`crate::session`]) is written against [`Engine`]
//! only. Each method maps onto one concept of the wire protocol:
//!
//! | protocol | engine |
//! |---|---|
//! | Query (several statements) | [`Engine::split`], then each statement |
//! | Parse | [`Engine::split`] (exactly one statement), [`Engine::parameter_count`] |
//! | Bind | [`Engine::bind`]: `$n` replaced by values |
//! | Describe | [`Engine::describe`] (statement), or the started portal's columns |
//! | Execute | [`Engine::start`], then [`Rows::next_batch`] until the row limit |
//! | ReadyForQuery | [`Engine::transaction_status`] |
//! | ParameterStatus | [`Engine::reported_settings`] |
//! | CancelRequest, `statement_timeout` | [`Engine::interrupt`], [`Engine::begin_statement`] |
//!
//! When the SQL layer is rewritten (binder-typed parameters, a plan cache,
//! transaction blocks), only the implementation below changes.

use tusk_exec::{Batch, Interrupt};
use tusk_sql::portal::{Parameter, ResultColumn, RowStream, Started, Statement};
use tusk_sql::{Session, SqlError};

/// A query's rows, batch by batch.
pub trait Rows {
    fn columns(&self) -> &[ResultColumn];
    fn next_batch(&mut self) -> Result<Option<Batch>, SqlError>;
}

/// The result of starting a statement.
pub enum Outcome<R> {
    Rows(R),
    /// Rows already rendered as text (SHOW, EXPLAIN) and the tag.
    Rendered {
        columns: Vec<ResultColumn>,
        rows: Vec<Vec<Option<String>>>,
        tag: String,
    },
    Command {
        tag: String,
    },
}

/// The transaction state ReadyForQuery reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnStatus {
    Idle,
    InBlock,
    Failed,
}

impl TxnStatus {
    pub fn byte(self) -> u8 {
        match self {
            TxnStatus::Idle => b'I',
            TxnStatus::InBlock => b'T',
            TxnStatus::Failed => b'E',
        }
    }
}

/// One client session of the SQL layer.
pub trait Engine {
    type Statement: Clone;
    type Rows: Rows;

    /// The statements of a query string, in order (none when empty).
    fn split(&mut self, sql: &str) -> Result<Vec<Self::Statement>, SqlError>;
    /// The highest `$n` a statement uses.
    fn parameter_count(&self, st: &Self::Statement) -> usize;
    /// `st` with its parameters bound.
    fn bind(&self, st: &Self::Statement, params: &[Parameter])
        -> Result<Self::Statement, SqlError>;
    /// For DEALLOCATE, which the protocol layer runs itself: `Some(None)`
    /// for ALL, `Some(Some(name))` for one prepared statement.
    fn deallocate_target(&self, st: &Self::Statement) -> Option<Option<String>>;
    /// Whether `st` is a query (its rows come as [`Engine::Rows`]).
    fn is_query(&self, st: &Self::Statement) -> bool;
    /// Result columns without running `st`; `None` when it returns no rows.
    fn describe(&mut self, st: &Self::Statement) -> Result<Option<Vec<ResultColumn>>, SqlError>;
    /// Runs `st` (a query only starts); NOTICE/INFO messages go to `notice`.
    fn start(
        &mut self,
        st: &Self::Statement,
        notice: &mut dyn FnMut(&'static str, String),
    ) -> Result<Outcome<Self::Rows>, SqlError>;
    /// Brackets work for `statement_timeout` and cancels.
    fn begin_statement(&self);
    fn end_statement(&self);
    fn interrupt(&self) -> Interrupt;
    fn set_config(&mut self, name: &str, value: &str) -> Result<(), SqlError>;
    fn set_fixed_config(&mut self, name: &str, value: &str) -> Result<(), SqlError>;
    /// The settings reported with ParameterStatus, with their values.
    fn reported_settings(&self) -> Vec<(&'static str, String)>;
    fn transaction_status(&self) -> TxnStatus;
}

impl Rows for RowStream {
    fn columns(&self) -> &[ResultColumn] {
        RowStream::columns(self)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, SqlError> {
        RowStream::next_batch(self)
    }
}

impl Engine for Session {
    type Statement = Statement;
    type Rows = RowStream;

    fn split(&mut self, sql: &str) -> Result<Vec<Statement>, SqlError> {
        Session::split(self, sql)
    }

    fn parameter_count(&self, st: &Statement) -> usize {
        st.parameter_count()
    }

    fn bind(&self, st: &Statement, params: &[Parameter]) -> Result<Statement, SqlError> {
        st.with_parameters(params)
    }

    fn deallocate_target(&self, st: &Statement) -> Option<Option<String>> {
        st.deallocate_target()
    }

    fn is_query(&self, st: &Statement) -> bool {
        st.is_query()
    }

    fn describe(&mut self, st: &Statement) -> Result<Option<Vec<ResultColumn>>, SqlError> {
        self.describe_statement(st)
    }

    fn start(
        &mut self,
        st: &Statement,
        notice: &mut dyn FnMut(&'static str, String),
    ) -> Result<Outcome<RowStream>, SqlError> {
        Ok(match Session::start(self, st, notice)? {
            Started::Rows(r) => Outcome::Rows(r),
            Started::Rendered { columns, rows, tag } => Outcome::Rendered { columns, rows, tag },
            Started::Command { tag } => Outcome::Command { tag },
        })
    }

    fn begin_statement(&self) {
        Session::begin_statement(self)
    }

    fn end_statement(&self) {
        Session::end_statement(self)
    }

    fn interrupt(&self) -> Interrupt {
        Session::interrupt(self).clone()
    }

    fn set_config(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        Session::set_config(self, name, value)
    }

    fn set_fixed_config(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        Session::set_fixed_config(self, name, value)
    }

    fn reported_settings(&self) -> Vec<(&'static str, String)> {
        Session::reported_settings(self)
    }

    fn transaction_status(&self) -> TxnStatus {
        // Every statement is its own transaction today.
        TxnStatus::Idle
    }
}
