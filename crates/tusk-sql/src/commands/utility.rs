//! SET, SHOW, RESET and VACUUM.

use crate::error::{sqlstate, SqlError};
use crate::names::ident;
use crate::session::{ColumnHeader, Notice, QueryResult, Result, Session};
use sqlparser::ast as A;
use tusk_storage::{LockMode, TableDef};

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
    pub(crate) fn set(
        &mut self,
        set: &A::Set,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let (name, values, scope) = match set {
            A::Set::SingleAssignment {
                variable,
                values,
                scope,
                ..
            } => (setting_name(variable)?, values.as_slice(), *scope),
            A::Set::SetTimeZone { value, local } => {
                // `SET TIME ZONE LOCAL` is DEFAULT; an interval is hours east.
                let as_value =
                    |s: String| A::Expr::Value(A::Value::SingleQuotedString(s).with_empty_span());
                let value = match value {
                    A::Expr::Identifier(i) if i.quote_style.is_none() && ident(i)? == "local" => {
                        A::Expr::Identifier(A::Ident::new("default"))
                    }
                    A::Expr::Interval(iv) => {
                        let b = crate::bind::interval_value(iv)?;
                        as_value(format!("{}", b.micros as f64 / 3_600_000_000.0))
                    }
                    other => other.clone(),
                };
                return self.set_values(
                    "TimeZone".to_string(),
                    &[value],
                    local.then_some(A::ContextModifier::Local),
                    sink,
                );
            }
            _ => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "this form of SET is not supported",
                ))
            }
        };
        self.set_values(name, values, scope, sink)
    }

    /// SET `name` to `values` (in `scope`).
    fn set_values(
        &mut self,
        name: String,
        values: &[A::Expr],
        scope: Option<A::ContextModifier>,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let local = matches!(scope, Some(A::ContextModifier::Local));
        if local && self.xact.block == crate::xact::Block::None {
            // Its transaction ends with the statement: nothing to change.
            sink(QueryResult::Notice(Notice {
                level: "WARNING",
                message: "SET LOCAL can only be used in transaction blocks".into(),
                detail: None,
            }));
            return Ok(QueryResult::Command { tag: "SET".into() });
        }
        if matches!(
            name.to_ascii_lowercase().as_str(),
            "transaction_isolation" | "transaction_read_only"
        ) {
            return self.set_transaction_setting(&name.to_ascii_lowercase(), values);
        }
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
                self.change_settings(local, &|g| g.reset(&name))
                    .map_err(guc_error)?;
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
        if name.eq_ignore_ascii_case("default_transaction_isolation")
            && value.trim().eq_ignore_ascii_case("serializable")
        {
            return Err(crate::xact::serializable_refused());
        }
        self.change_settings(local, &|g| g.set(&name, &value))
            .map_err(guc_error)?;
        self.sync_env()?;
        Ok(QueryResult::Command { tag: "SET".into() })
    }

    /// `SET transaction_isolation` / `SET transaction_read_only`: the same
    /// as SET TRANSACTION (silently nothing outside a block, as in
    /// PostgreSQL, whose statement is its own transaction then).
    fn set_transaction_setting(&mut self, name: &str, values: &[A::Expr]) -> Result<QueryResult> {
        let [v] = values else {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("SET {name} takes only one argument"),
            ));
        };
        let text = match v {
            A::Expr::Value(v) => match &v.value {
                A::Value::SingleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            A::Expr::Identifier(i) => ident(i)?,
            other => other.to_string(),
        };
        let mode = if name == "transaction_isolation" {
            let level = match text.to_ascii_lowercase().as_str() {
                "read uncommitted" => A::TransactionIsolationLevel::ReadUncommitted,
                "read committed" => A::TransactionIsolationLevel::ReadCommitted,
                "repeatable read" => A::TransactionIsolationLevel::RepeatableRead,
                "serializable" => A::TransactionIsolationLevel::Serializable,
                _ => {
                    return Err(SqlError::coded(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"{name}\": \"{text}\""),
                    )
                    .with_hint(
                        "Available values: serializable, repeatable read, read committed, read uncommitted.",
                    ))
                }
            };
            A::TransactionMode::IsolationLevel(level)
        } else {
            match tusk_exec::cast::parse_bool(&text) {
                Ok(true) => A::TransactionMode::AccessMode(A::TransactionAccessMode::ReadOnly),
                Ok(false) => A::TransactionMode::AccessMode(A::TransactionAccessMode::ReadWrite),
                Err(_) => {
                    return Err(SqlError::coded(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("parameter \"{name}\" requires a Boolean value"),
                    ))
                }
            }
        };
        if self.xact.block != crate::xact::Block::None {
            self.set_transaction_modes(&[mode])?;
        }
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
        let name = match name.as_str() {
            "transaction isolation level" => "transaction_isolation".to_string(),
            "time.zone" => "TimeZone".to_string(),
            _ => name,
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
        // The current transaction's characteristics are not settings.
        let (heading, v) = match name.to_ascii_lowercase().as_str() {
            "transaction_isolation" => (
                "transaction_isolation".to_string(),
                self.xact.isolation.name().to_string(),
            ),
            "transaction_read_only" => (
                "transaction_read_only".to_string(),
                if self.xact.read_only { "on" } else { "off" }.into(),
            ),
            _ => (
                crate::guc::Gucs::canonical_name(&name)
                    .map_err(guc_error)?
                    .to_string(),
                self.gucs.show(&name).map_err(guc_error)?,
            ),
        };
        Ok(QueryResult::Rows {
            title: None,
            columns: vec![ColumnHeader {
                name: heading,
                numeric: false,
            }],
            rows: vec![vec![Some(v)]],
        })
    }

    pub(crate) fn reset(&mut self, r: &A::ResetStatement) -> Result<QueryResult> {
        match &r.reset {
            A::Reset::ALL => self
                .change_settings(false, &|g| {
                    g.reset_all();
                    Ok(())
                })
                .map_err(guc_error)?,
            A::Reset::SessionAuthorization => {}
            A::Reset::ConfigurationParameter(n) => {
                let name = setting_name(n)?;
                self.change_settings(false, &|g| g.reset(&name))
                    .map_err(guc_error)?
            }
        }
        self.sync_env()?;
        Ok(QueryResult::Command {
            tag: "RESET".into(),
        })
    }

    /// `VACUUM [VERBOSE] [ANALYZE] [table, ...]`: every table when none is
    /// named, each in its own transaction. VERBOSE sends PostgreSQL's INFO
    /// messages. ANALYZE then samples each table (see `analyze`).
    pub(crate) fn vacuum(
        &mut self,
        verbose: bool,
        analyze: bool,
        names: Vec<String>,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        self.prevent_in_block("VACUUM")?;
        let tables: Vec<TableDef> = {
            let cat = self.db.catalog_snapshot();
            if names.is_empty() {
                cat.tables()
                    .filter(|t| t.is_plain_table())
                    .cloned()
                    .collect()
            } else {
                let mut found: Vec<TableDef> = Vec::new();
                for name in &names {
                    let t = cat.table(name).ok_or_else(|| {
                        SqlError::coded(
                            sqlstate::UNDEFINED_TABLE,
                            format!("relation \"{name}\" does not exist"),
                        )
                    })?;
                    if !found.iter().any(|f| f.oid == t.oid) {
                        found.push(t.clone());
                    }
                }
                found
            }
        };
        for table in tables {
            // Each table in a transaction of its own that keeps other
            // VACUUMs and DDL away (ShareUpdateExclusiveLock); VACUUM needs
            // no xid.
            let mut txn = self.db.begin(tusk_storage::TxnOptions {
                pid: self.pid(),
                ..Default::default()
            });
            *txn.wait_options_mut() = self.wait_options();
            txn.lock_relation(table.oid, LockMode::ShareUpdateExclusive)
                .map_err(|e| {
                    SqlError::from(tusk_storage::xact::lock_error(
                        e,
                        &format!("relation \"{}\"", table.name),
                    ))
                })?;
            // Dropped while we waited?
            let current = self.db.catalog_snapshot();
            let Some(table) = current.table_by_oid(table.oid) else {
                continue;
            };
            let indexes: Vec<tusk_storage::IndexDef> =
                current.indexes_of(table.oid).cloned().collect();
            let report = tusk_storage::vacuum::vacuum_table(
                &self.db,
                table,
                &indexes,
                tusk_storage::txn::INVALID_XID,
                self.gucs.maintenance_work_mem_bytes(),
            )?;
            // A columnar table's row groups are rewritten in the same
            // transaction (see `tusk_storage::columnar::vacuum`).
            let compacted = if table.is_columnar() {
                Some(tusk_storage::columnar::vacuum::compact(&mut txn, table)?)
            } else {
                None
            };
            txn.commit()?;
            if analyze {
                self.analyze_after_vacuum(table)?;
            }
            if verbose {
                let mut messages = report.verbose_messages("tusk");
                if let Some(c) = compacted {
                    messages.push(format!(
                        "tusk: columnar: {} row groups rewritten into {}, {} rows moved from the delta, {} deleted rows removed; {} row groups, {} free blocks before, {} row claims in memory",
                        c.groups_replaced,
                        c.groups_written,
                        c.delta_rows,
                        c.deleted_rows_removed,
                        c.groups_left,
                        c.free_blocks,
                        c.claims_left
                    ));
                }
                for message in messages {
                    sink(QueryResult::Notice(Notice {
                        level: "INFO",
                        message,
                        detail: None,
                    }));
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
        let cat = self.catalog_view();
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
