//! What expressions ask of the session they run in: settings, the user,
//! and the system catalogs.
//!
//! Some values are not functions of their arguments alone. `regclass`
//! prints a relation's name, so its output reads the catalog;
//! `current_setting('work_mem')` reads the session's settings and
//! `set_config(...)` changes them; `pg_get_indexdef(oid)` deparses an index
//! from the catalog the statement sees. PostgreSQL answers these from
//! backend-global state. Here the executor asks the session through the
//! [`SessionState`] the session installs in its [`crate::env::SessionEnv`]
//! (tusk-sql implements it over its settings and the statement's catalog),
//! so the executor knows nothing of catalogs or settings itself.
//!
//! The functions answered this way are the [`Func`]s for which
//! [`Func::session`] is true: they evaluate row by row, handing each row's
//! arguments to [`SessionState::call`]. The reg types' input and output
//! use [`SessionState::object_name`] and [`SessionState::object_oid`].
//! Without a session (unit tests, a plan evaluated on its own) such calls
//! fail, and reg types read and print as plain oids.

use crate::error::{sqlstate, ExecError, Result};
use crate::func::{Call, Func};
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::DataType;

/// The session's side of the session-dependent functions and types.
pub trait SessionState: Send + Sync + std::fmt::Debug {
    /// The state as `Any` (the SQL layer's system relations read more of
    /// it than this trait says).
    fn as_any(self: std::sync::Arc<Self>) -> std::sync::Arc<dyn std::any::Any + Send + Sync>;

    /// Computes `func(args)` (a function with [`Func::session`]) whose
    /// result has type `ty`; arguments are NULL only for non-strict
    /// functions.
    fn call(&self, func: Func, args: &[Value], ty: DataType) -> Result<Value>;

    /// The name a reg type (`ty`) prints for `oid` (qualified when the
    /// search path does not find it), `None` when no object has that oid.
    fn object_name(&self, ty: DataType, oid: u32) -> Option<String>;

    /// The oid a reg type reads for `name` (`relation "x" does not exist`
    /// and the like when there is none).
    fn object_oid(&self, ty: DataType, name: &str) -> Result<u32>;
}

/// The session state installed on this thread, if any.
pub fn current() -> Option<std::sync::Arc<dyn SessionState>> {
    crate::env::session_state()
}

fn no_session(func: Func) -> ExecError {
    ExecError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("function {}() needs a session", func.name()),
    )
}

/// Evaluates a session function over a batch, row by row.
pub(crate) fn eval(func: Func, call: &Call) -> Result<Vector> {
    let state = current().ok_or_else(|| no_session(func))?;
    crate::func::eval_rows(call, |args| state.call(func, args, call.ty))
}

/// The text form of a reg type's value: the object's name, or the oid in
/// digits when no object has it (or no session is installed).
pub fn reg_output(ty: DataType, oid: u32) -> String {
    if oid == 0 {
        return "-".into();
    }
    current()
        .and_then(|s| s.object_name(ty, oid))
        .unwrap_or_else(|| oid.to_string())
}

/// A reg type's value from text: digits are the oid itself, `-` is 0,
/// anything else a name the session looks up.
pub fn reg_input(ty: DataType, text: &str) -> Result<u32> {
    let t = text.trim();
    if t == "-" {
        return Ok(0);
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return crate::cast::parse_oid(t);
    }
    match current() {
        Some(s) => s.object_oid(ty, t),
        None => Err(ExecError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("{} names cannot be read without a session", ty.type_name()),
        )),
    }
}
