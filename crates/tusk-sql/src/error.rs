//! The error a client sees: `ERROR:  message`, with PostgreSQL's SQLSTATE,
//! optional DETAIL, HINT and CONTEXT lines, and a position for errors that
//! point into the statement text.

use sqlparser::tokenizer::{Location, Span};
use std::fmt;
use std::num::NonZeroU64;
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
    /// 1-based character position in the statement text (32 bits, as
    /// the protocol's field: errors travel in every `Result` of the
    /// binder, which should stay small).
    pub position: Option<u32>,
    /// Where in the query string the error points, as sqlparser's line
    /// and column (packed: line in the high 32 bits), until the session
    /// turns it into `position` with the text at hand
    /// ([`SqlError::locate`]). The binder knows the spans of the names it
    /// resolves, not the text they came from.
    location: Option<NonZeroU64>,
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
            location: None,
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
        self.position = Some(u32::try_from(position).unwrap_or(u32::MAX));
        self
    }

    /// Points the error at the start of `span` (a name in the query
    /// string), unless it already points somewhere or the span is unknown.
    pub fn at_span(mut self, span: Span) -> SqlError {
        let Location { line, column } = span.start;
        if self.position.is_none() && self.location.is_none() {
            let (Ok(line), Ok(column)) = (u32::try_from(line), u32::try_from(column)) else {
                return self;
            };
            self.location =
                NonZeroU64::new(u64::from(line) << 32 | u64::from(column)).filter(|_| line > 0);
        }
        self
    }

    /// Forgets a location noted by [`SqlError::at_span`]: it was in a text
    /// other than the query string's (a view's stored definition).
    pub fn without_location(mut self) -> SqlError {
        self.location = None;
        self
    }

    /// Turns a noted location into the position in `sql`, the query
    /// string the statement came from.
    pub fn locate(mut self, sql: &str) -> SqlError {
        if let Some(packed) = self.location.take() {
            let loc = Location {
                line: packed.get() >> 32,
                column: packed.get() & u64::from(u32::MAX),
            };
            if let Some(p) = char_position(sql, loc).filter(|_| self.position.is_none()) {
                self = self.at(p);
            }
        }
        self
    }

    /// Whether the error points into the query string but has no position
    /// yet (see [`SqlError::locate`]).
    pub fn has_location(&self) -> bool {
        self.location.is_some()
    }
}

/// 1-based character position in `sql` of sqlparser's `loc` (1-based line
/// and character column); `None` when `loc` is unknown (line 0) or lies
/// past the text's lines.
pub fn char_position(sql: &str, loc: Location) -> Option<usize> {
    if loc.line == 0 {
        return None;
    }
    let mut pos = 0;
    for (i, line) in sql.split('\n').enumerate() {
        if i + 1 == loc.line as usize {
            return Some(pos + loc.column as usize);
        }
        pos += line.chars().count() + 1;
    }
    None
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
            location: None,
        }
    }
}

impl From<tusk_storage::StorageError> for SqlError {
    fn from(e: tusk_storage::StorageError) -> Self {
        tusk_exec::ExecError::from(e).into()
    }
}
