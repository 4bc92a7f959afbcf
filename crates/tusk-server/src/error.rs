//! What goes wrong, as the client sees it: an ErrorResponse with severity
//! (ERROR, or FATAL when the connection ends), SQLSTATE, message, DETAIL,
//! HINT, position and CONTEXT.
//!
//! Errors from the SQL layer arrive as [`SqlError`]s, which carry the
//! SQLSTATE the code that raised them gave.

use tusk_sql::SqlError;

/// The SQLSTATEs (PostgreSQL's `errcodes.txt`), shared with the SQL layer.
pub use tusk_sql::sqlstate as codes;

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
    pub position: Option<u32>,
    /// Where it happened (`COPY t, line 3, column b: "x"`).
    pub context: Option<Box<str>>,
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
            context: None,
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
        if let Some(c) = &self.context {
            f.push((b'W', c.to_string()));
        }
        f
    }
}

impl From<SqlError> for Failure {
    fn from(e: SqlError) -> Failure {
        let code = e.code;
        Failure {
            // A shutdown ends the session.
            fatal: code == codes::ADMIN_SHUTDOWN,
            code,
            message: e.message,
            detail: e.detail,
            hint: e.hint,
            position: e.position,
            context: e.context,
        }
    }
}
