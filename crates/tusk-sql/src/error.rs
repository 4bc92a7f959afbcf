//! The error a client sees: `ERROR:  message`, with a position for syntax errors.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    pub message: String,
    /// 1-based character position in the statement text, for syntax errors.
    pub position: Option<usize>,
}

impl SqlError {
    pub fn new(message: impl Into<String>) -> SqlError {
        SqlError {
            message: message.into(),
            position: None,
        }
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
        SqlError::new(e.0)
    }
}

impl From<tusk_storage::StorageError> for SqlError {
    fn from(e: tusk_storage::StorageError) -> Self {
        SqlError::new(e.to_string())
    }
}
