//! The error a client sees: `ERROR:  message`, with PostgreSQL's SQLSTATE,
//! optional DETAIL, HINT and CONTEXT lines, and a position for errors that
//! point into the statement text.

use std::fmt;
pub use tusk_exec::error::sqlstate;

#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    /// SQLSTATE.
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// Where the error happened, as PostgreSQL's CONTEXT line says it
    /// (`COPY t, line 3, column b: "x"`). Boxed: errors travel in every
    /// `Result` of the binder, which should stay small.
    pub context: Option<Box<str>>,
    /// 1-based character position in the statement text.
    pub position: Option<usize>,
}

impl SqlError {
    /// An error without a more specific SQLSTATE (`XX000`).
    pub fn new(message: impl Into<String>) -> SqlError {
        SqlError::coded(sqlstate::INTERNAL_ERROR, message)
    }

    pub fn coded(code: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            context: None,
            position: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> SqlError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> SqlError {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_context(mut self, context: impl Into<String>) -> SqlError {
        self.context = Some(context.into().into_boxed_str());
        self
    }

    pub fn at(mut self, position: usize) -> SqlError {
        self.position = Some(position);
        self
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SqlError {}

impl From<tusk_exec::ExecError> for SqlError {
    fn from(e: tusk_exec::ExecError) -> Self {
        SqlError {
            code: e.code,
            message: e.message,
            detail: e.detail,
            hint: e.hint,
            context: None,
            position: None,
        }
    }
}

impl From<tusk_storage::StorageError> for SqlError {
    fn from(e: tusk_storage::StorageError) -> Self {
        tusk_exec::ExecError::from(e).into()
    }
}
