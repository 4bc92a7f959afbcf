//! SET, SHOW, RESET and VACUUM.

use crate::error::{sqlstate, SqlError};
use crate::names::ident;
use crate::session::{ColumnHeader, QueryResult, Result, Session};
use sqlparser::ast as A;
use tusk_storage::TableDef;

/// A setting's name: dotted custom names (`tusk.hash_join_prefetch`) kept whole.
fn setting_name(n: &A::ObjectName) -> Result<String> {
    Ok(n.0
        .iter()
        .map(|p| match p {
            A::ObjectNamePart::Identifier(i) => ident(i),
            other => Ok(other.to_string()),
        })
        .collect::<Result<Vec<_>>>()?
        .join("."))
}

use crate::guc::error as guc_error;

impl Session {
    pub(crate) fn set(&mut self, set: &A::Set) -> Result<QueryResult> {
        let (name, values) = match set {
            A::Set::SingleAssignment {
                variable, values, ..
            } => (setting_name(variable)?, values.as_slice()),
            A::Set::SetTimeZone { value, .. } => {
                ("TimeZone".to_string(), std::slice::from_ref(value))
            }
            _ => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "this form of SET is not supported",
                ))
            }
        };
        // search_path is a list of names; DateStyle takes a list of words.
        let list = name.eq_ignore_ascii_case("search_path");
        let value = match values {
            [A::Expr::Value(v)] if !list => match &v.value {
                A::Value::SingleQuotedString(s) => s.clone(),
                A::Value::Number(n, _) => n.clone(),
                A::Value::Boolean(b) => b.to_string(),
                other => other.to_string(),
            },
            [A::Expr::Identifier(i)] if i.quote_style.is_none() && ident(i)? == "default" => {
                self.gucs.reset(&name).map_err(guc_error)?;
                self.sync_env()?;
                return Ok(QueryResult::Command { tag: "SET".into() });
            }
            [A::Expr::Identifier(i)] if !list => ident(i)?,
            [A::Expr::UnaryOp {
                op: A::UnaryOperator::Minus,
                expr,
            }] => format!("-{expr}"),
            // A list (`search_path = a, "B"`, `datestyle = iso, mdy`):
            // quoted names keep their quotes for the setting's own parser.
            _ => {
                let mut items = Vec::new();
                for v in values {
                    items.push(match v {
                        A::Expr::Identifier(i) if i.quote_style.is_some() => {
                            crate::names::quote_ident(&i.value)
                        }
                        A::Expr::Identifier(i) => ident(i)?,
                        A::Expr::Value(v) => match &v.value {
                            A::Value::SingleQuotedString(s) if list => crate::names::quote_ident(s),
                            A::Value::SingleQuotedString(s) => s.clone(),
                            other => other.to_string(),
                        },
                        _ => {
                            return Err(SqlError::coded(
                                sqlstate::SYNTAX_ERROR,
                                format!("SET {name} takes only one argument"),
                            ))
                        }
                    });
                }
                if items.len() > 1 && !list && !name.eq_ignore_ascii_case("datestyle") {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        format!("SET {name} takes only one argument"),
                    ));
                }
                items.join(", ")
            }
        };
        self.gucs.set(&name, &value).map_err(guc_error)?;
        self.sync_env()?;
        Ok(QueryResult::Command { tag: "SET".into() })
    }

    /// Sets a setting as `SET name = value` does (the options a client
    /// sends at connection start).
    pub fn set_config(&mut self, name: &str, value: &str) -> Result<()> {
        self.gucs.set(name, value).map_err(guc_error)?;
        self.sync_env()
    }

    /// Sets a startup fact SET cannot change (`session_authorization`).
    pub fn set_fixed_config(&mut self, name: &str, value: &str) -> Result<()> {
        self.gucs.set_fixed(name, value).map_err(guc_error)
    }

    /// The settings PostgreSQL reports to clients (ParameterStatus), with
    /// their current values.
    pub fn reported_settings(&self) -> Vec<(&'static str, String)> {
        self.gucs.reported()
    }

    pub(crate) fn show_variable(&mut self, variable: &[A::Ident]) -> Result<QueryResult> {
        let name: Vec<String> = variable.iter().map(ident).collect::<Result<_>>()?;
        // `SHOW tusk.x` arrives as two identifiers.
        let name = if name.len() == 2 {
            name.join(".")
        } else {
            name.join(" ")
        };
        if name == "all" {
            return Ok(QueryResult::Rows {
                title: None,
                columns: ["name", "setting", "description"]
                    .iter()
                    .map(|n| ColumnHeader {
                        name: n.to_string(),
                        numeric: false,
                    })
                    .collect(),
                rows: self
                    .gucs
                    .all()
                    .into_iter()
                    .map(|(a, b, c)| vec![Some(a), Some(b), Some(c)])
                    .collect(),
            });
        }
        let v = self.gucs.show(&name).map_err(guc_error)?;
        Ok(QueryResult::Rows {
            title: None,
            columns: vec![ColumnHeader {
                name: crate::guc::Gucs::canonical_name(&name)
                    .map_err(guc_error)?
                    .to_string(),
                numeric: false,
            }],
            rows: vec![vec![Some(v)]],
        })
    }

    pub(crate) fn reset(&mut self, r: &A::ResetStatement) -> Result<QueryResult> {
        match &r.reset {
            A::Reset::ALL => self.gucs.reset_all(),
            A::Reset::SessionAuthorization => {}
            A::Reset::ConfigurationParameter(n) => {
                self.gucs.reset(&setting_name(n)?).map_err(guc_error)?
            }
        }
        self.sync_env()?;
        Ok(QueryResult::Command {
            tag: "RESET".into(),
        })
    }

    /// `VACUUM [VERBOSE] [table]`: every table when none is named, each in
    /// its own transaction. VERBOSE sends PostgreSQL's INFO messages.
    pub(crate) fn vacuum(
        &mut self,
        verbose: bool,
        table: Option<String>,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let tables: Vec<TableDef> = {
            let cat = self.db.catalog();
            match &table {
                Some(name) => vec![cat
                    .table(name)
                    .ok_or_else(|| {
                        SqlError::coded(
                            sqlstate::UNDEFINED_TABLE,
                            format!("relation \"{name}\" does not exist"),
                        )
                    })?
                    .clone()],
                None => cat.tables().cloned().collect(),
            }
        };
        for table in tables {
            let indexes: Vec<tusk_storage::IndexDef> =
                self.db.catalog().indexes_of(table.oid).cloned().collect();
            let txn = self.db.txn.begin_write()?;
            let report = tusk_storage::vacuum::vacuum_table(
                &self.db,
                &table,
                &indexes,
                txn.xid(),
                self.gucs.maintenance_work_mem_bytes(),
            )?;
            self.db.commit(txn)?;
            if verbose {
                for message in report.verbose_messages("tusk") {
                    sink(QueryResult::Notice {
                        level: "INFO",
                        message,
                    });
                }
            }
        }
        sink(QueryResult::Command {
            tag: "VACUUM".into(),
        });
        Ok(())
    }
}

impl Session {
    /// psql's `\d` (no table: list of relations) and `\d table`.
    pub fn describe(&mut self, table: Option<&str>) -> Result<QueryResult> {
        let cat = self.db.catalog();
        let text = |s: &str| Some(s.to_string());
        let headers = |names: &[&str]| -> Vec<ColumnHeader> {
            names
                .iter()
                .map(|n| ColumnHeader {
                    name: n.to_string(),
                    numeric: false,
                })
                .collect()
        };
        match table {
            None => Ok(QueryResult::Rows {
                title: Some("List of relations".into()),
                columns: headers(&["Schema", "Name", "Type", "Owner"]),
                rows: cat
                    .tables()
                    .map(|t| {
                        let kind = if t.is_view() { "view" } else { "table" };
                        vec![text("public"), text(&t.name), text(kind), text("tusk")]
                    })
                    .collect(),
            }),
            Some(name) => {
                let name = name.strip_prefix("public.").unwrap_or(name);
                let t = cat.table(name).ok_or_else(|| {
                    SqlError::new(format!("Did not find any relation named \"{name}\"."))
                })?;
                Ok(QueryResult::Rows {
                    title: Some(format!("Table \"public.{}\"", t.name)),
                    columns: headers(&["Column", "Type", "Collation", "Nullable", "Default"]),
                    rows: t
                        .columns
                        .iter()
                        .map(|c| {
                            vec![
                                text(&c.name),
                                text(&c.ty.display_name()),
                                text(""),
                                text(if c.not_null { "not null" } else { "" }),
                                text(""),
                            ]
                        })
                        .collect(),
                })
            }
        }
    }
}
