//! Errors raised while executing a plan, worded as PostgreSQL words them and
//! carrying PostgreSQL's SQLSTATE, so that clients can tell a unique
//! violation (23505) from a division by zero (22012) without reading text.

use std::fmt;

/// SQLSTATE codes tusk raises (PostgreSQL's `errcodes.txt`).
pub mod sqlstate {
    pub const INTERNAL_ERROR: &str = "XX000";
    pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
    pub const NUMERIC_VALUE_OUT_OF_RANGE: &str = "22003";
    pub const DIVISION_BY_ZERO: &str = "22012";
    pub const SUBSTRING_ERROR: &str = "22011";
    pub const INVALID_TEXT_REPRESENTATION: &str = "22P02";
    pub const INVALID_PARAMETER_VALUE: &str = "22023";
    pub const STRING_DATA_RIGHT_TRUNCATION: &str = "22001";
    pub const DATETIME_FIELD_OVERFLOW: &str = "22008";
    pub const INVALID_DATETIME_FORMAT: &str = "22007";
    pub const INVALID_REGULAR_EXPRESSION: &str = "2201B";
    pub const INVALID_ESCAPE_SEQUENCE: &str = "22025";
    pub const CARDINALITY_VIOLATION: &str = "21000";
    pub const NOT_NULL_VIOLATION: &str = "23502";
    pub const UNIQUE_VIOLATION: &str = "23505";
    pub const CHECK_VIOLATION: &str = "23514";
    pub const FOREIGN_KEY_VIOLATION: &str = "23503";
    pub const QUERY_CANCELED: &str = "57014";
    pub const ADMIN_SHUTDOWN: &str = "57P01";
    pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
    pub const CONFIGURATION_LIMIT_EXCEEDED: &str = "53400";
    pub const OUT_OF_MEMORY: &str = "53200";
    pub const DISK_FULL: &str = "53100";
    pub const IO_ERROR: &str = "58030";
    pub const DATA_CORRUPTED: &str = "XX001";
    pub const SYNTAX_ERROR: &str = "42601";
    pub const PROTOCOL_VIOLATION: &str = "08P01";
    pub const INVALID_AUTHORIZATION: &str = "28000";
    pub const INVALID_BINARY_REPRESENTATION: &str = "22P03";
    pub const DUPLICATE_PSTATEMENT: &str = "42P05";
    pub const UNDEFINED_PSTATEMENT: &str = "26000";
    pub const UNDEFINED_TABLE: &str = "42P01";
    pub const UNDEFINED_COLUMN: &str = "42703";
    pub const UNDEFINED_FUNCTION: &str = "42883";
    pub const UNDEFINED_OBJECT: &str = "42704";
    pub const DUPLICATE_TABLE: &str = "42P07";
    pub const DUPLICATE_COLUMN: &str = "42701";
    pub const DUPLICATE_OBJECT: &str = "42710";
    pub const AMBIGUOUS_COLUMN: &str = "42702";
    pub const DATATYPE_MISMATCH: &str = "42804";
    pub const CANNOT_COERCE: &str = "42846";
    pub const GROUPING_ERROR: &str = "42803";
    pub const WINDOWING_ERROR: &str = "42P20";
    pub const INVALID_COLUMN_REFERENCE: &str = "42P10";
    pub const INVALID_TABLE_DEFINITION: &str = "42P16";
    pub const WRONG_OBJECT_TYPE: &str = "42809";
    pub const INVALID_NAME: &str = "42602";
    pub const RESERVED_NAME: &str = "42939";
    pub const NAME_TOO_LONG: &str = "42622";
    pub const AMBIGUOUS_FUNCTION: &str = "42725";
    pub const INDETERMINATE_DATATYPE: &str = "42P18";
    pub const INVALID_RECURSION: &str = "42P19";
    pub const UNDEFINED_PARAMETER: &str = "42P02";
    pub const AMBIGUOUS_PARAMETER: &str = "42P08";
    pub const OBJECT_IN_USE: &str = "55006";
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: &str = "55000";
    pub const DEPENDENT_OBJECTS_STILL_EXIST: &str = "2BP01";
    pub const CANT_CHANGE_RUNTIME_PARAM: &str = "55P02";
    pub const STATEMENT_TOO_COMPLEX: &str = "54001";
    pub const INVALID_TRANSACTION_STATE: &str = "25000";
    pub const IN_FAILED_SQL_TRANSACTION: &str = "25P02";
    pub const READ_ONLY_SQL_TRANSACTION: &str = "25006";
    pub const SERIALIZATION_FAILURE: &str = "40001";
    pub const DEADLOCK_DETECTED: &str = "40P01";
    pub const LOCK_NOT_AVAILABLE: &str = "55P03";
    pub const INVALID_CURSOR_NAME: &str = "34000";
    pub const DUPLICATE_CURSOR: &str = "42P03";
    pub const INVALID_CURSOR_STATE: &str = "24000";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    pub const ARRAY_SUBSCRIPT_ERROR: &str = "2202E";
    pub const INVALID_ARGUMENT_FOR_LOG: &str = "2201E";
    pub const INVALID_ARGUMENT_FOR_POWER: &str = "2201F";
    pub const INVALID_ROW_COUNT_IN_LIMIT: &str = "2201W";
    pub const INVALID_ROW_COUNT_IN_RESULT_OFFSET: &str = "2201X";
    pub const NULL_VALUE_NOT_ALLOWED: &str = "22004";
    pub const INVALID_PRECEDING_OR_FOLLOWING_SIZE: &str = "22013";
    pub const INVALID_ARGUMENT_FOR_NTILE: &str = "22014";
    pub const INVALID_ARGUMENT_FOR_NTH_VALUE: &str = "22016";
    pub const ZERO_LENGTH_CHARACTER_STRING: &str = "2200F";
    pub const INVALID_PASSWORD: &str = "28P01";
    pub const TOO_MANY_CONNECTIONS: &str = "53300";
    pub const INSUFFICIENT_PRIVILEGE: &str = "42501";
    pub const BAD_COPY_FILE_FORMAT: &str = "22P04";
    pub const UNTRANSLATABLE_CHARACTER: &str = "22P05";
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExecError {
    /// SQLSTATE.
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl ExecError {
    /// An error without a more specific SQLSTATE (`XX000`).
    pub fn new(msg: impl Into<String>) -> ExecError {
        ExecError::coded(sqlstate::INTERNAL_ERROR, msg)
    }

    pub fn coded(code: &'static str, msg: impl Into<String>) -> ExecError {
        ExecError {
            code,
            message: msg.into(),
            detail: None,
            hint: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> ExecError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ExecError {
        self.hint = Some(hint.into());
        self
    }

    /// Whether the error is about the values an expression met (a data
    /// exception, or a scalar subquery's second row), so that a row the
    /// expression was not evaluated for would not have raised it: what the
    /// operators that evaluate many rows at once, where PostgreSQL stops at
    /// one, retry row by row.
    pub fn is_data_error(&self) -> bool {
        self.code.starts_with("22") || self.code == sqlstate::CARDINALITY_VIOLATION
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExecError {}

impl From<tusk_storage::StorageError> for ExecError {
    fn from(e: tusk_storage::StorageError) -> Self {
        let code = match &e {
            tusk_storage::StorageError::Io { .. } => sqlstate::IO_ERROR,
            tusk_storage::StorageError::Report(r) => {
                let r = *r.clone();
                return ExecError {
                    code: r.code,
                    message: r.message,
                    detail: r.detail,
                    hint: r.hint,
                };
            }
            _ => sqlstate::INTERNAL_ERROR,
        };
        ExecError::coded(code, e.to_string())
    }
}

impl From<tusk_types::TypeError> for ExecError {
    fn from(e: tusk_types::TypeError) -> Self {
        ExecError {
            code: e.code,
            message: e.message,
            detail: e.detail,
            hint: e.hint,
        }
    }
}

pub type Result<T> = std::result::Result<T, ExecError>;

pub fn int2_out_of_range() -> ExecError {
    ExecError::coded(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "smallint out of range",
    )
}

pub fn int4_out_of_range() -> ExecError {
    ExecError::coded(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range")
}

pub fn int8_out_of_range() -> ExecError {
    ExecError::coded(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range")
}

pub fn division_by_zero() -> ExecError {
    ExecError::coded(sqlstate::DIVISION_BY_ZERO, "division by zero")
}

pub fn float_overflow() -> ExecError {
    ExecError::coded(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: overflow",
    )
}

pub fn float_underflow() -> ExecError {
    ExecError::coded(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value out of range: underflow",
    )
}

/// `invalid input syntax for type T: "s"` (22P02).
pub fn invalid_input(type_name: &str, s: &str) -> ExecError {
    ExecError::coded(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {type_name}: \"{s}\""),
    )
}
