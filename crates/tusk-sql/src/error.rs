//! The error a client sees: `ERROR:  message`, with a position for syntax
//! errors and, where PostgreSQL gives them, a SQLSTATE code, a DETAIL and a
//! HINT (the wire protocol's ErrorResponse fields `C`, `D` and `H`).
//!
//! Most errors do not set `code` yet; the server then classifies them by
//! their message (`tusk_server::sqlstate`) until the SQL layer names a code
//! for each.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SqlError {
    pub message: String,
    /// 1-based character position in the statement text, for syntax errors.
    pub position: Option<usize>,
    /// The SQLSTATE, when the code that raised the error knows it.
    pub code: Option<&'static str>,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl SqlError {
    pub fn new(message: impl Into<String>) -> SqlError {
        SqlError {
            message: message.into(),
            ..Default::default()
        }
    }

    /// An error with its SQLSTATE.
    pub fn with_code(mut self, code: &'static str) -> SqlError {
        self.code = Some(code);
        self
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> SqlError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> SqlError {
        self.hint = Some(hint.into());
        self
    }

    /// A settings error (`guc`), whose text may carry `\nDETAIL: ` and
    /// `\nHINT: ` lines.
    pub fn from_setting(e: String) -> SqlError {
        let (message, detail, hint) = crate::client_settings::split_message(&e);
        SqlError {
            message,
            detail,
            hint,
            ..Default::default()
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
