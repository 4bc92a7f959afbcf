//! What the protocol needs from the SQL layer, and its implementation over
//! [`tusk_sql::Session`].
//!
//! The protocol code ([`crate::session`]) is written against [`Engine`]
//! only. Each method maps onto one concept of the wire protocol:
//!
//! | protocol | engine |
//! |---|---|
//! | Query (several statements) | [`Engine::split_simple`], then [`Engine::prepare`] and [`Engine::start`] for each |
//! | Parse | [`Engine::split_for_parse`] (exactly one statement), [`Engine::prepare`]: bound and planned once, `$n` typed |
//! | Describe | [`Engine::param_types`], [`Engine::columns`] |
//! | Bind | [`Engine::parameter_value`] for each value in text format |
//! | Execute | [`Engine::start`] with the values, then [`Rows::next_batch`] until the row limit |
//! | COPY FROM STDIN / TO STDOUT | [`Engine::start`] with the connection as its [`CopyClient`] |
//! | DataRow | the values of a batch in the session's [`Engine::settings`] |
//! | ReadyForQuery | [`Engine::transaction_status`] |
//! | Query of several statements: one transaction | [`Engine::begin_implicit_block`], [`Engine::end_implicit_block`] |
//! | an error while rows are pulled | [`Engine::statement_failed`] |
//! | ParameterStatus | [`Engine::reported_settings`] |
//! | CancelRequest, `statement_timeout` | [`Engine::interrupt`], [`Engine::begin_statement`] |

use tusk_exec::{Batch, Interrupt, Value};
use tusk_sql::portal::{Prepared, ResultColumn, RowStream, Started, Statement, TransactionStatus};
use tusk_sql::{CopyClient, Session, SqlError};
use tusk_storage::DataType;
use tusk_types::Settings;

/// A statement's rows, batch by batch.
pub trait Rows {
    fn columns(&self) -> &[ResultColumn];
    /// The type of each column as the batches hold it.
    fn types(&self) -> &[DataType];
    fn next_batch(&mut self) -> Result<Option<Batch>, SqlError>;
    /// The CommandComplete tag after `rows` rows.
    fn command_tag(&self, rows: u64) -> String;
    /// Whether every column goes in binary format unless the client chose
    /// formats (a BINARY cursor's FETCH).
    fn binary(&self) -> bool {
        false
    }
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

/// One client session of the SQL layer.
pub trait Engine {
    type Statement: Clone;
    type Prepared;
    type Rows: Rows;

    /// The statements of a query string, in order (none when empty).
    fn split(&mut self, sql: &str) -> Result<Vec<Self::Statement>, SqlError>;
    /// [`Engine::split`] for a Query message, whose statements the engine
    /// may find planned already (a cache of simple queries' plans).
    fn split_simple(&mut self, sql: &str) -> Result<Vec<Self::Statement>, SqlError> {
        self.split(sql)
    }
    /// [`Engine::split`] for a Parse message with the parameter types the
    /// client declared (the engine may find the statement planned already).
    fn split_for_parse(
        &mut self,
        sql: &str,
        _declared: &[Option<DataType>],
    ) -> Result<Vec<Self::Statement>, SqlError> {
        self.split(sql)
    }
    /// Binds and plans `st`; `declared` are the parameter types the client
    /// gave (`None`: to be inferred, which `infer` allows).
    fn prepare(
        &mut self,
        st: Self::Statement,
        declared: &[Option<DataType>],
        infer: bool,
    ) -> Result<Self::Prepared, SqlError>;
    fn param_types(&self, p: &Self::Prepared) -> Vec<DataType>;
    /// Result columns; `None` when the statement returns no rows.
    fn columns(&self, p: &Self::Prepared) -> Option<Vec<ResultColumn>>;
    /// The columns of the SQL cursor (DECLARE) called `name` and whether it
    /// is BINARY; `None` if there is none. Cursors and the protocol's
    /// portals share one namespace, as in PostgreSQL.
    fn cursor_columns(&self, _name: &str) -> Option<(Vec<ResultColumn>, bool)> {
        None
    }
    /// A parameter value of type `ty` from its text form.
    fn parameter_value(&self, ty: DataType, text: &str) -> Result<Value, SqlError>;
    /// For DEALLOCATE, which the protocol layer runs itself: `Some(None)`
    /// for ALL, `Some(Some(name))` for one prepared statement.
    fn deallocate_target(&self, p: &Self::Prepared) -> Option<Option<String>>;
    /// Runs `p` with `params` (a query only starts); NOTICE/INFO messages go
    /// to `notice`; a COPY exchanges its data with `copy`.
    fn start(
        &mut self,
        p: &mut Self::Prepared,
        params: &[Value],
        notice: &mut dyn FnMut(tusk_sql::Notice),
        copy: &mut dyn CopyClient,
    ) -> Result<Outcome<Self::Rows>, SqlError>;
    /// Brackets work for `statement_timeout` and cancels; `now` is when
    /// the statement's message arrived (`statement_timestamp()`).
    fn begin_statement(&mut self, now: i64);
    fn end_statement(&mut self);
    fn interrupt(&self) -> Interrupt;
    /// The client settings values are printed with.
    fn settings(&self) -> &Settings;
    fn set_config(&mut self, name: &str, value: &str) -> Result<(), SqlError>;
    fn set_fixed_config(&mut self, name: &str, value: &str) -> Result<(), SqlError>;
    /// The settings reported with ParameterStatus, with their values.
    fn reported_settings(&self) -> Vec<(&'static str, String)>;
    fn transaction_status(&self) -> TransactionStatus;
    /// Brackets the statements of one Query message: outside a
    /// transaction block they commit together or not at all.
    fn begin_implicit_block(&mut self) {}
    fn end_implicit_block(&mut self, _ok: bool) -> Result<(), SqlError> {
        Ok(())
    }
    /// A statement failed while its rows were pulled: an open transaction
    /// block becomes failed.
    fn statement_failed(&mut self) {}
}

impl Rows for RowStream {
    fn columns(&self) -> &[ResultColumn] {
        RowStream::columns(self)
    }

    fn types(&self) -> &[DataType] {
        RowStream::types(self)
    }

    fn next_batch(&mut self) -> Result<Option<Batch>, SqlError> {
        RowStream::next_batch(self)
    }

    fn command_tag(&self, rows: u64) -> String {
        RowStream::command_tag(self, rows)
    }

    fn binary(&self) -> bool {
        RowStream::binary(self)
    }
}

impl Engine for Session {
    type Statement = Statement;
    type Prepared = Prepared;
    type Rows = RowStream;

    fn split(&mut self, sql: &str) -> Result<Vec<Statement>, SqlError> {
        Session::split(self, sql)
    }

    fn split_simple(&mut self, sql: &str) -> Result<Vec<Statement>, SqlError> {
        Session::split_simple(self, sql)
    }

    fn split_for_parse(
        &mut self,
        sql: &str,
        declared: &[Option<DataType>],
    ) -> Result<Vec<Statement>, SqlError> {
        Session::split_for_parse(self, sql, declared)
    }

    fn prepare(
        &mut self,
        st: Statement,
        declared: &[Option<DataType>],
        infer: bool,
    ) -> Result<Prepared, SqlError> {
        Session::prepare_owned(self, st, declared, infer)
    }

    fn param_types(&self, p: &Prepared) -> Vec<DataType> {
        p.param_types().to_vec()
    }

    fn columns(&self, p: &Prepared) -> Option<Vec<ResultColumn>> {
        p.columns().map(<[ResultColumn]>::to_vec)
    }

    fn cursor_columns(&self, name: &str) -> Option<(Vec<ResultColumn>, bool)> {
        Session::describe_cursor(self, name)
    }

    fn parameter_value(&self, ty: DataType, text: &str) -> Result<Value, SqlError> {
        Session::parameter_value(self, ty, text)
    }

    fn deallocate_target(&self, p: &Prepared) -> Option<Option<String>> {
        p.statement().deallocate_target()
    }

    fn start(
        &mut self,
        p: &mut Prepared,
        params: &[Value],
        notice: &mut dyn FnMut(tusk_sql::Notice),
        copy: &mut dyn CopyClient,
    ) -> Result<Outcome<RowStream>, SqlError> {
        Ok(
            match Session::start_with_copy(self, p, params, notice, copy)? {
                Started::Rows(r) => Outcome::Rows(r),
                Started::Rendered { columns, rows, tag } => {
                    Outcome::Rendered { columns, rows, tag }
                }
                Started::Command { tag } => Outcome::Command { tag },
            },
        )
    }

    fn begin_statement(&mut self, now: i64) {
        Session::begin_statement_at(self, now)
    }

    fn end_statement(&mut self) {
        Session::end_statement(self)
    }

    fn interrupt(&self) -> Interrupt {
        Session::interrupt(self).clone()
    }

    fn settings(&self) -> &Settings {
        Session::settings(self)
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

    fn transaction_status(&self) -> TransactionStatus {
        Session::transaction_status(self)
    }

    fn begin_implicit_block(&mut self) {
        Session::begin_implicit_block(self)
    }

    fn end_implicit_block(&mut self, ok: bool) -> Result<(), SqlError> {
        Session::end_implicit_block(self, ok)
    }

    fn statement_failed(&mut self) {
        Session::statement_failed(self)
    }
}
