//! What goes wrong, as the client sees it: an ErrorResponse with severity
//! (ERROR, or FATAL when the connection ends), SQLSTATE, message, DETAIL,
//! HINT and position.
//!
//! Errors from the SQL layer arrive as [`SqlError`]s. Where the code that
//! raised one named its SQLSTATE, that is used; otherwise the code is
//! derived from the message (`sqlstate::classify`) — an interim measure
//! until every error of the SQL layer carries its code.

use tusk_sql::SqlError;

/// The SQLSTATEs the server itself raises (PostgreSQL's `errcodes.txt`).
pub mod codes {
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    pub const INVALID_AUTHORIZATION: &str = "28000";
    pub const INVALID_PASSWORD: &str = "28P01";
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    pub const QUERY_CANCELED: &str = "57014";
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    pub const DUPLICATE_PSTATEMENT: &str = "42P05";
    pub const DUPLICATE_CURSOR: &str = "42P03";
    pub const UNDEFINED_PSTATEMENT: &str = "26000";
    pub const UNDEFINED_CURSOR: &str = "34000";
    pub const SYNTAX_ERROR: &str = "42601";
    pub const UNDEFINED_FUNCTION: &str = "42883";
    pub const INTERNAL_ERROR: &str = "XX000";
}

/// An error to report to the client.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// FATAL: the connection ends after the report.
    pub fatal: bool,
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the query string.
    pub position: Option<usize>,
}

impl Failure {
    pub fn error(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            fatal: false,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
        }
    }

    pub fn fatal(code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            fatal: true,
            ..Failure::error(code, message)
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Failure {
        self.detail = Some(detail.into());
        self
    }

    /// The ErrorResponse fields: severity (twice: localized and not), code,
    /// message and the optional ones.
    pub fn fields(&self) -> Vec<(u8, String)> {
        let severity = if self.fatal { "FATAL" } else { "ERROR" };
        let mut f = vec![
            (b'S', severity.to_string()),
            (b'V', severity.to_string()),
            (b'C', self.code.to_string()),
            (b'M', self.message.clone()),
        ];
        if let Some(d) = &self.detail {
            f.push((b'D', d.clone()));
        }
        if let Some(h) = &self.hint {
            f.push((b'H', h.clone()));
        }
        if let Some(p) = self.position {
            f.push((b'P', p.to_string()));
        }
        f
    }
}

impl From<SqlError> for Failure {
    fn from(e: SqlError) -> Failure {
        let code = e
            .code
            .unwrap_or_else(|| crate::sqlstate::classify(&e.message));
        Failure {
            // A shutdown ends the session.
            fatal: code == codes::ADMIN_SHUTDOWN,
            code,
            message: e.message,
            detail: e.detail,
            hint: e.hint,
            position: e.position,
        }
    }
}
