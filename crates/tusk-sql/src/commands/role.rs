//! `CREATE ROLE`, `ALTER ROLE` and `DROP ROLE`: who may log in to `tusk
//! serve`, and with which password.
//!
//! The SQL layer only interprets the statements; the roles themselves live
//! in a [`RoleStore`] that the embedding program hands to the session
//! ([`Session::set_role_store`]) — tusk-server's role file, which keeps
//! each password only as a SCRAM-SHA-256 verifier. A password arrives here
//! in clear text (or already as a verifier, as `\password` sends it) and is
//! passed straight to the store; nothing in this module keeps or prints it.
//!
//! Options PostgreSQL knows but tusk has no use for yet (SUPERUSER,
//! CREATEDB, INHERIT, CONNECTION LIMIT, ...) are accepted and ignored: every
//! role can do everything.

use crate::error::{sqlstate, SqlError};
use crate::session::{Notice, QueryResult, Result, Session};
use sqlparser::ast as A;
use std::sync::Arc;

/// A change to a role's attributes (`None`: unchanged).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoleChange {
    pub login: Option<bool>,
    /// `Some(None)` clears the password.
    pub password: Option<Option<String>>,
}

/// A role as the catalogs list it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleInfo {
    pub name: String,
    pub oid: u32,
    pub login: bool,
    pub password: bool,
}

/// Where roles live.
pub trait RoleStore: Send + Sync {
    /// Every role, in name order.
    fn list(&self) -> Vec<RoleInfo>;
    /// Creates role `name`; fails if it exists.
    fn create(&self, name: &str, change: &RoleChange) -> Result<()>;
    /// Changes role `name`; fails if it does not exist.
    fn alter(&self, name: &str, change: &RoleChange) -> Result<()>;
    /// Drops role `name`; `false` if there was none.
    fn drop_role(&self, name: &str) -> Result<bool>;
}

fn role_name(n: &A::ObjectName) -> Result<String> {
    let name = crate::names::object_name(n)?.name;
    if name.starts_with("pg_") {
        return Err(SqlError::coded(
            sqlstate::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        )
        .with_detail("Role names starting with \"pg_\" are reserved."));
    }
    if name.contains(['\t', '\n', '\r']) || name.is_empty() {
        return Err(SqlError::coded(
            sqlstate::INVALID_NAME,
            format!("invalid role name \"{name}\""),
        ));
    }
    Ok(name)
}

/// Sends a NOTICE to the client.
fn notice(sink: &mut dyn FnMut(QueryResult), message: impl Into<String>) {
    sink(QueryResult::Notice(Notice {
        level: "NOTICE",
        message: message.into(),
        detail: None,
    }));
}

fn password(p: &A::Password, sink: &mut dyn FnMut(QueryResult)) -> Result<Option<String>> {
    match p {
        A::Password::NullPassword => Ok(None),
        A::Password::Password(A::Expr::Value(v)) => match &v.value {
            A::Value::SingleQuotedString(s) | A::Value::EscapedStringLiteral(s) => {
                if s.is_empty() {
                    notice(
                        sink,
                        "empty string is not a valid password, clearing password",
                    );
                    Ok(None)
                } else {
                    Ok(Some(s.clone()))
                }
            }
            A::Value::Null => Ok(None),
            _ => Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "a password must be a string literal",
            )),
        },
        A::Password::Password(_) => Err(SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            "a password must be a string literal",
        )),
    }
}

impl Session {
    /// Gives the session the store that role statements change.
    pub fn set_role_store(&mut self, store: Arc<dyn RoleStore>) {
        self.info.set_role_store(store.clone());
        self.roles = Some(store);
    }

    fn role_store(&self) -> Result<Arc<dyn RoleStore>> {
        self.roles.clone().ok_or_else(|| {
            SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "roles are not available in this session",
            )
        })
    }

    pub(crate) fn create_role(
        &mut self,
        cr: &A::CreateRole,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let store = self.role_store()?;
        let mut change = RoleChange {
            login: Some(cr.login.unwrap_or(false)),
            password: None,
        };
        if let Some(p) = &cr.password {
            change.password = Some(password(p, sink)?);
        }
        for n in &cr.names {
            let name = role_name(n)?;
            match store.create(&name, &change) {
                Err(e) if cr.if_not_exists && e.code == sqlstate::DUPLICATE_OBJECT => {
                    notice(sink, format!("role \"{name}\" already exists, skipping"))
                }
                r => r?,
            }
        }
        Ok(QueryResult::Command {
            tag: "CREATE ROLE".into(),
        })
    }

    pub(crate) fn alter_role(
        &mut self,
        name: &A::Ident,
        op: &A::AlterRoleOperation,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let store = self.role_store()?;
        let name = role_name(&A::ObjectName::from(vec![name.clone()]))?;
        let A::AlterRoleOperation::WithOptions { options } = op else {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "this form of ALTER ROLE is not supported",
            ));
        };
        let mut change = RoleChange::default();
        for o in options {
            match o {
                A::RoleOption::Login(b) => change.login = Some(*b),
                A::RoleOption::Password(p) => change.password = Some(password(p, sink)?),
                _ => {}
            }
        }
        store.alter(&name, &change)?;
        Ok(QueryResult::Command {
            tag: "ALTER ROLE".into(),
        })
    }

    pub(crate) fn drop_roles(
        &mut self,
        names: &[A::ObjectName],
        if_exists: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let store = self.role_store()?;
        for n in names {
            let name = crate::names::object_name(n)?.name;
            if !store.drop_role(&name)? {
                if !if_exists {
                    return Err(SqlError::coded(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("role \"{name}\" does not exist"),
                    ));
                }
                notice(sink, format!("role \"{name}\" does not exist, skipping"));
            }
        }
        Ok(QueryResult::Command {
            tag: "DROP ROLE".into(),
        })
    }
}
