//! Errors raised while executing a plan, worded as PostgreSQL words them.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ExecError(pub String);

impl ExecError {
    pub fn new(msg: impl Into<String>) -> ExecError {
        ExecError(msg.into())
    }
}

impl From<tusk_storage::StorageError> for ExecError {
    fn from(e: tusk_storage::StorageError) -> Self {
        ExecError(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, ExecError>;

pub fn int4_out_of_range() -> ExecError {
    ExecError::new("integer out of range")
}

pub fn int8_out_of_range() -> ExecError {
    ExecError::new("bigint out of range")
}

pub fn division_by_zero() -> ExecError {
    ExecError::new("division by zero")
}
