//! Errors of value input, conversion and arithmetic, worded as PostgreSQL
//! words them and carrying its SQLSTATE (tusk-exec turns them into its own
//! error type unchanged).

use std::fmt;

/// The SQLSTATE codes this crate raises (PostgreSQL's `errcodes.txt`).
pub mod sqlstate {
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    pub const DIVISION_BY_ZERO: &str = "22012";
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
    pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
    pub const INVALID_DATETIME_FORMAT: &str = "22007";
    pub const INVALID_ARGUMENT_FOR_LOG: &str = "2201E";
    pub const INVALID_ARGUMENT_FOR_POWER: &str = "2201F";
    pub const INVALID_TIME_ZONE_DISPLACEMENT: &str = "22009";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const CANNOT_COERCE: &str = "42846";
    pub const SYNTAX_ERROR: &str = "42601";
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// SQLSTATE.
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl TypeError {
    pub fn new(code: &'static str, message: impl Into<String>) -> TypeError {
        TypeError {
            code,
            message: message.into(),
            detail: None,
            hint: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> TypeError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> TypeError {
        self.hint = Some(hint.into());
        self
    }

    /// `invalid input syntax for type T: "s"` (22P02).
    pub fn invalid_input(type_name: &str, s: &str) -> TypeError {
        TypeError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type {type_name}: \"{s}\""),
        )
    }

    /// A 22003 error with the given message (`integer out of range`, ...).
    pub fn out_of_range(message: impl Into<String>) -> TypeError {
        TypeError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, message)
    }

    pub fn division_by_zero() -> TypeError {
        TypeError::new(sqlstate::DIVISION_BY_ZERO, "division by zero")
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TypeError {}

pub type Result<T> = std::result::Result<T, TypeError>;
