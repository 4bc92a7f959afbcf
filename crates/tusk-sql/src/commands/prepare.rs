//! SQL-level `PREPARE`, `EXECUTE` and `DEALLOCATE`: named prepared
//! statements of the session, as PostgreSQL's `prepare.c` keeps them.
//!
//! `PREPARE name [(type, ...)] AS statement` prepares the statement as the
//! protocol's Parse does ([`Session::prepare`]): bound and planned once,
//! each `$n` of the declared type or, beyond those, of the type its
//! context gives it; the [`Prepared`] statement is kept under its name
//! until `DEALLOCATE` or the end of the session. Only queries and data
//! changes can be prepared.
//!
//! `EXECUTE name [(value, ...)]` evaluates the values — each bound like an
//! assignment to its parameter's type, without column references or
//! subqueries — and runs the kept plan with them, as Bind and Execute run
//! a protocol statement: the values become the [`Prepared`] statement's
//! literals, which [`Session::start`] substitutes for the parameters. A
//! plan made before DDL is planned again ([`Session::start`]'s check).
//!
//! `DEALLOCATE [PREPARE] name | ALL` drops them. (The wire protocol's
//! named statements are the server's; its DEALLOCATE drops those too.)
//! `pg_prepared_statements` lists them, with the query string each came in
//! and how often EXECUTE ran it (`generic_plans`: tusk plans once).

use crate::bind::{BindSettings, Binder, ExprCtx};
use crate::catalog::PreparedRow;
use crate::error::{sqlstate, SqlError};
use crate::parse::Parsed;
use crate::portal::{Prepared, Statement};
use crate::session::{QueryResult, Result, Session};
use sqlparser::ast as A;
use std::sync::Arc;
use tusk_exec::Value;
use tusk_storage::DataType;

/// A named prepared statement and what `pg_prepared_statements` shows of it.
#[derive(Debug, Clone)]
pub(crate) struct NamedStatement {
    prepared: Prepared,
    row: PreparedRow,
}

/// The session's named prepared statements.
pub(crate) type Named = std::collections::HashMap<String, NamedStatement>;

fn does_not_exist(name: &str) -> SqlError {
    SqlError::coded(
        sqlstate::UNDEFINED_PSTATEMENT,
        format!("prepared statement \"{name}\" does not exist"),
    )
}

/// The name of `EXECUTE`'s statement.
fn execute_name(name: Option<&A::ObjectName>) -> Result<String> {
    let n = name
        .ok_or_else(|| SqlError::coded(sqlstate::SYNTAX_ERROR, "syntax error at end of input"))?;
    Ok(crate::names::object_name(n)?.name)
}

impl Session {
    /// `PREPARE name [(types)] AS statement`.
    pub(crate) fn prepare_named(
        &mut self,
        name: &A::Ident,
        data_types: &[A::DataType],
        statement: &A::Statement,
        row_locks: &[tusk_storage::RowLockMode],
    ) -> Result<QueryResult> {
        let name = crate::names::ident(name)?;
        if self.named.contains_key(&name) {
            return Err(SqlError::coded(
                sqlstate::DUPLICATE_PSTATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        if !matches!(
            statement,
            A::Statement::Query(_)
                | A::Statement::Insert(_)
                | A::Statement::Update(_)
                | A::Statement::Delete(_)
        ) {
            let word = statement.to_string();
            let word = word
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_lowercase();
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{word}\""),
            ));
        }
        let declared = data_types
            .iter()
            .map(|t| crate::types::sql_type(t).map(|t| Some(t.data_type())))
            .collect::<Result<Vec<_>>>()?;
        let st = Statement {
            parsed: Arc::new(Parsed::Sql(Box::new(statement.clone()), row_locks.to_vec())),
            cache: None,
        };
        let prepared = self.prepare_in_transaction(&st, &declared, true)?;
        let row = PreparedRow {
            name: name.clone(),
            statement: self.info.query(),
            prepared: self.env.statement,
            param_types: prepared.param_types().to_vec(),
            executions: 0,
        };
        self.named.insert(name, NamedStatement { prepared, row });
        self.publish_named();
        Ok(QueryResult::Command {
            tag: "PREPARE".into(),
        })
    }

    /// `EXECUTE name [(values)]`: the named statement with the values as
    /// its parameters, ready for [`Session::start`].
    pub(crate) fn execute_named(
        &mut self,
        name: Option<&A::ObjectName>,
        parameters: &[A::Expr],
    ) -> Result<Prepared> {
        let name = execute_name(name)?;
        let mut p = self
            .named
            .get(&name)
            .map(|n| n.prepared.clone())
            .ok_or_else(|| does_not_exist(&name))?;
        let types = p.param_types().to_vec();
        if types.len() != parameters.len() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("wrong number of parameters for prepared statement \"{name}\""),
            )
            .with_detail(format!(
                "Expected {} parameters but got {}.",
                types.len(),
                parameters.len()
            )));
        }
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        p.literals = parameters
            .iter()
            .zip(&types)
            .enumerate()
            .map(|(i, (e, &ty))| parameter_value(&mut binder, e, ty, i))
            .collect::<Result<_>>()?;
        if let Some(n) = self.named.get_mut(&name) {
            n.row.executions += 1;
            self.publish_named();
        }
        Ok(p)
    }

    /// Tells `pg_prepared_statements` what is prepared.
    fn publish_named(&self) {
        let mut rows: Vec<PreparedRow> = self.named.values().map(|n| n.row.clone()).collect();
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        self.info.set_prepared(rows);
    }

    /// `DEALLOCATE [PREPARE] name | ALL`.
    pub(crate) fn deallocate_named(&mut self, name: &A::Ident) -> Result<QueryResult> {
        if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
            self.named.clear();
            self.publish_named();
            return Ok(QueryResult::Command {
                tag: "DEALLOCATE ALL".into(),
            });
        }
        let name = crate::names::ident(name)?;
        match self.named.remove(&name) {
            Some(_) => {
                self.publish_named();
                Ok(QueryResult::Command {
                    tag: "DEALLOCATE".into(),
                })
            }
            None => Err(does_not_exist(&name)),
        }
    }
}

/// The value of `EXECUTE`'s argument `e` for parameter `$(i + 1)` of type
/// `ty`: bound as an assignment to that type, and evaluated.
fn parameter_value(binder: &mut Binder<'_>, e: &A::Expr, ty: DataType, i: usize) -> Result<Value> {
    let mut ctx = ExprCtx::new("EXECUTE parameter");
    let b = binder.expr(e, &mut ctx)?;
    if !ctx.applies.is_empty() {
        return Err(SqlError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "cannot use subquery in EXECUTE parameter",
        ));
    }
    let (from, unknown) = (b.ty(), b.unknown);
    let e = binder.assign(b, ty, "").map_err(|e| {
        if unknown || e.code != sqlstate::DATATYPE_MISMATCH {
            return e;
        }
        SqlError::coded(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "parameter ${} of type {} cannot be coerced to the expected type {}",
                i + 1,
                from.display_name(),
                ty.display_name()
            ),
        )
        .with_hint("You will need to rewrite or cast the expression.")
    })?;
    crate::rewrite::fold::eval_constant(&e)
}
