//! Statements one at a time and query results batch by batch: what a
//! wire-protocol server needs beyond [`Session::execute`].
//!
//! [`Session::execute`] runs a whole query string and hands back rows already
//! rendered as text. A server needs more: the statements of a string one by
//! one (each gets its own CommandComplete), a statement's result columns and
//! their types before it runs (Describe), `$n` parameters (Parse/Bind), and
//! a query's rows as they are produced, so that a 100-million-row SELECT
//! never sits in server memory and a portal can stop after N rows and
//! resume (Execute with a row limit).
//!
//! * [`Session::split`] parses a query string into [`Statement`]s.
//! * [`Statement::parameter_count`] and [`Statement::with_parameters`]:
//!   `$n` placeholders, and a copy of the statement with each replaced by a
//!   literal of the given value and type. *Interim*: until the binder types
//!   parameters itself, a bound value becomes a literal (`'42'::int4`, or an
//!   untyped `'42'` when the client left the type open, which the binder
//!   resolves from context as it does for any literal).
//! * [`Session::describe_statement`] gives the result columns without
//!   running anything (a query is bound and planned; placeholders not yet
//!   bound count as NULL).
//! * [`Session::start`] runs a statement. A query comes back as a
//!   [`RowStream`] whose [`RowStream::next_batch`] pulls the next batch from
//!   the executor; other statements run to completion and return their tag
//!   or their rendered rows (SHOW, EXPLAIN).
//!
//! The caller brackets each unit of work with [`Session::begin_statement`] /
//! [`Session::end_statement`], which arm `statement_timeout` and forget a
//! cancel aimed at an earlier statement. A [`RowStream`] holds its snapshot
//! and operator tree; it is not `Send` and lives on the session's thread.

use crate::binder::BoundQuery;
use crate::{vacuum_command, Result, Session, SqlError};
use sqlparser::ast as A;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;
use tusk_exec::exec::build;
use tusk_exec::{Batch, Operator};
use tusk_storage::DataType;

/// One statement of a query string.
#[derive(Debug, Clone)]
pub struct Statement {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// A statement sqlparser does not know (VACUUM VERBOSE, CHECKPOINT, the
    /// recovery prefetch view), run by [`Session::execute`] as a whole.
    Whole(String),
    Parsed(Box<A::Statement>),
}

/// A result column: its name and type.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultColumn {
    pub name: String,
    pub ty: DataType,
}

/// A bound parameter value (text format) and the type the client gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// The value in PostgreSQL's text format; `None` is NULL.
    pub value: Option<String>,
    /// The type, when the client or the statement named one.
    pub ty: Option<ParamType>,
}

/// Parameter types a bound value can be cast to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Bool,
    Int4,
    Int8,
    Numeric,
    Text,
}

/// What [`Session::start`] returns.
pub enum Started {
    /// A query; its rows come from the stream.
    Rows(RowStream),
    /// A statement whose rows were rendered as text (SHOW, EXPLAIN), with
    /// its command tag.
    Rendered {
        columns: Vec<ResultColumn>,
        rows: Vec<Vec<Option<String>>>,
        tag: String,
    },
    /// A statement without rows, with its command tag (`INSERT 0 5`).
    Command { tag: String },
}

/// A running query's rows, pulled batch by batch.
pub struct RowStream {
    op: Box<dyn Operator>,
    columns: Vec<ResultColumn>,
    done: bool,
}

impl RowStream {
    pub fn columns(&self) -> &[ResultColumn] {
        &self.columns
    }

    /// The next batch of rows, `None` once the query is done. Fails with
    /// the statement's error (including a cancel or timeout).
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        match self.op.next() {
            Ok(Some(b)) => Ok(Some(b)),
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(e.into())
            }
        }
    }
}

fn placeholder_number(e: &A::Expr) -> Option<usize> {
    match e {
        A::Expr::Value(v) => match &v.value {
            A::Value::Placeholder(p) => p.strip_prefix('$')?.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

fn string_literal(s: String) -> A::Expr {
    A::Expr::value(A::Value::SingleQuotedString(s))
}

/// The literal a bound parameter becomes.
fn parameter_literal(p: &Parameter) -> A::Expr {
    let base = match &p.value {
        None => A::Expr::value(A::Value::Null),
        Some(v) => string_literal(v.clone()),
    };
    let Some(ty) = p.ty else {
        return base;
    };
    let data_type = match ty {
        ParamType::Bool => A::DataType::Boolean,
        ParamType::Int4 => A::DataType::Int4(None),
        ParamType::Int8 => A::DataType::Int8(None),
        ParamType::Numeric => A::DataType::Numeric(A::ExactNumberInfo::None),
        ParamType::Text => A::DataType::Text,
    };
    A::Expr::Cast {
        kind: A::CastKind::DoubleColon,
        expr: Box::new(base),
        data_type,
        format: None,
    }
}

impl Statement {
    /// The highest `$n` the statement uses (0 without parameters).
    pub fn parameter_count(&self) -> usize {
        let Kind::Parsed(s) = &self.kind else {
            return 0;
        };
        let mut n = 0;
        let _ = A::visit_expressions(s.as_ref(), |e| {
            if let Some(k) = placeholder_number(e) {
                n = n.max(k);
            }
            ControlFlow::<()>::Continue(())
        });
        n
    }

    /// A copy with `$n` replaced by a literal of `params[n - 1]`.
    pub fn with_parameters(&self, params: &[Parameter]) -> Result<Statement> {
        let Kind::Parsed(s) = &self.kind else {
            return Ok(self.clone());
        };
        let mut s = s.clone();
        let mut missing = None;
        let _ = A::visit_expressions_mut(s.as_mut(), |e| {
            if let Some(k) = placeholder_number(e) {
                match params.get(k.wrapping_sub(1)) {
                    Some(p) => *e = parameter_literal(p),
                    None => missing = Some(k),
                }
            }
            ControlFlow::<()>::Continue(())
        });
        if let Some(k) = missing {
            return Err(SqlError::new(format!("there is no parameter ${k}")).with_code("42P02"));
        }
        Ok(Statement {
            kind: Kind::Parsed(s),
        })
    }

    /// Whether this is a query (its rows come as a [`RowStream`]).
    pub fn is_query(&self) -> bool {
        matches!(&self.kind, Kind::Parsed(s) if matches!(s.as_ref(), A::Statement::Query(_)))
    }

    /// For `DEALLOCATE [PREPARE] name | ALL`, which drops prepared
    /// statements of the protocol (the caller keeps them): `Some(None)` for
    /// ALL, `Some(Some(name))` for one.
    pub fn deallocate_target(&self) -> Option<Option<String>> {
        let Kind::Parsed(s) = &self.kind else {
            return None;
        };
        match s.as_ref() {
            A::Statement::Deallocate { name, .. } => {
                if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
                    Some(None)
                } else {
                    Some(Some(crate::binder::ident(name)))
                }
            }
            _ => None,
        }
    }

    /// The statement's command word(s) as PostgreSQL's command tags start
    /// (`SELECT`, `INSERT`, `SET`, ...), for messages and statistics.
    pub fn command_word(&self) -> String {
        match &self.kind {
            Kind::Whole(sql) => sql
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase(),
            Kind::Parsed(s) => s
                .to_string()
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase(),
        }
    }
}

fn text_columns(names: &[&str]) -> Vec<ResultColumn> {
    names
        .iter()
        .map(|n| ResultColumn {
            name: n.to_string(),
            ty: DataType::Text,
        })
        .collect()
}

impl Session {
    /// Splits `sql` into its statements (none for an empty string).
    pub fn split(&self, sql: &str) -> Result<Vec<Statement>> {
        if vacuum_command(sql).is_some() || crate::special_kind(sql).is_some() {
            return Ok(vec![Statement {
                kind: Kind::Whole(sql.to_string()),
            }]);
        }
        let stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql)
            .map_err(|e| crate::syntax_error(sql, &e))?;
        Ok(stmts
            .into_iter()
            .map(|s| Statement {
                kind: Kind::Parsed(Box::new(s)),
            })
            .collect())
    }

    /// Arms `statement_timeout` for the work that follows and forgets a
    /// cancel meant for an earlier statement.
    pub fn begin_statement(&self) {
        self.interrupt
            .start_statement(self.gucs.statement_timeout());
    }

    /// Disarms `statement_timeout`.
    pub fn end_statement(&self) {
        self.interrupt.end_statement();
    }

    /// Sets a setting as `SET name = value` does (used for the options a
    /// client sends at connection start).
    pub fn set_config(&mut self, name: &str, value: &str) -> Result<()> {
        self.gucs.set(name, value).map_err(SqlError::from_setting)
    }

    /// Sets a startup fact SET cannot change (`session_authorization`).
    pub fn set_fixed_config(&mut self, name: &str, value: &str) -> Result<()> {
        self.gucs
            .set_fixed(name, value)
            .map_err(SqlError::from_setting)
    }

    /// The settings PostgreSQL reports to clients (ParameterStatus), with
    /// their current values.
    pub fn reported_settings(&self) -> Vec<(&'static str, String)> {
        self.gucs.reported()
    }

    /// The columns `st` returns, or `None` for a statement without rows.
    /// Runs nothing; `$n` not yet bound count as NULL.
    pub fn describe_statement(&mut self, st: &Statement) -> Result<Option<Vec<ResultColumn>>> {
        let s = match &st.kind {
            Kind::Whole(sql) => {
                return Ok(match crate::special_kind(sql) {
                    Some(crate::Special::RecoveryPrefetch) => Some(
                        self.db
                            .recovery_stats()
                            .columns()
                            .iter()
                            .map(|(n, _)| ResultColumn {
                                name: n.to_string(),
                                ty: DataType::Text,
                            })
                            .collect(),
                    ),
                    _ => None,
                })
            }
            Kind::Parsed(s) => s,
        };
        match s.as_ref() {
            A::Statement::Query(_) => {
                let nulls = vec![
                    Parameter {
                        value: None,
                        ty: None,
                    };
                    st.parameter_count()
                ];
                let bound = st.with_parameters(&nulls)?;
                let Kind::Parsed(s) = &bound.kind else {
                    unreachable!("a parsed statement stays parsed")
                };
                let A::Statement::Query(q) = s.as_ref() else {
                    unreachable!("a query stays a query")
                };
                Ok(Some(columns_of(&self.bind_query(q)?)))
            }
            A::Statement::Explain { .. } => Ok(Some(text_columns(&["QUERY PLAN"]))),
            A::Statement::ShowVariable { variable } => {
                let name: Vec<String> = variable.iter().map(crate::binder::ident).collect();
                if name == ["all"] {
                    return Ok(Some(text_columns(&["name", "setting", "description"])));
                }
                let name = name.join(".");
                let canonical =
                    crate::guc::Gucs::canonical_name(&name).map_err(SqlError::from_setting)?;
                Ok(Some(text_columns(&[canonical])))
            }
            _ => Ok(None),
        }
    }

    /// Runs `st`: a query starts and hands back its stream; anything else
    /// runs to completion. NOTICE and INFO messages go to `notice` (level,
    /// message) before the result.
    pub fn start(
        &mut self,
        st: &Statement,
        notice: &mut dyn FnMut(&'static str, String),
    ) -> Result<Started> {
        let s = match &st.kind {
            Kind::Whole(sql) => {
                let mut last = None;
                self.execute(sql, &mut |r| match r {
                    crate::QueryResult::Notice { level, message } => notice(level, message),
                    other => last = Some(other),
                })?;
                return Ok(rendered(last, "SELECT"));
            }
            Kind::Parsed(s) => s,
        };
        if let A::Statement::Query(q) = s.as_ref() {
            let bq = self.bind_query(q)?;
            let ctx = self.exec_context(self.db.txn.snapshot(), false, 0);
            let op = build(&bq.plan, &ctx)?;
            return Ok(Started::Rows(RowStream {
                op,
                columns: columns_of(&bq),
                done: false,
            }));
        }
        let r = self.statement(s);
        for message in self.notices.drain(..) {
            notice("NOTICE", message);
        }
        let word = match s.as_ref() {
            A::Statement::ShowVariable { .. } => "SHOW",
            A::Statement::Explain { .. } => "EXPLAIN",
            _ => "SELECT",
        };
        Ok(rendered(Some(r?), word))
    }
}

fn columns_of(bq: &BoundQuery) -> Vec<ResultColumn> {
    bq.names
        .iter()
        .zip(&bq.plan.output)
        .map(|(n, t)| ResultColumn {
            name: n.clone(),
            ty: *t,
        })
        .collect()
}

/// A finished statement's result as [`Started`]; rows get the tag `word`
/// (`SELECT n` for a query-like result).
fn rendered(r: Option<crate::QueryResult>, word: &str) -> Started {
    match r {
        Some(crate::QueryResult::Rows { columns, rows, .. }) => Started::Rendered {
            tag: if word == "SELECT" {
                format!("SELECT {}", rows.len())
            } else {
                word.to_string()
            },
            columns: columns
                .into_iter()
                .map(|c| ResultColumn {
                    name: c.name,
                    ty: DataType::Text,
                })
                .collect(),
            rows,
        },
        Some(crate::QueryResult::Command { tag }) => Started::Command { tag },
        Some(crate::QueryResult::Notice { .. }) | None => Started::Command { tag: String::new() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> (tempfile::TempDir, Session) {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::open(dir.path()).unwrap();
        (dir, s)
    }

    fn drain(st: Started) -> (Vec<String>, Vec<i64>) {
        let Started::Rows(mut rows) = st else {
            panic!("expected rows")
        };
        let names = rows.columns().iter().map(|c| c.name.clone()).collect();
        let mut out = Vec::new();
        while let Some(b) = rows.next_batch().unwrap() {
            for r in crate::render_rows(&b) {
                out.push(r[0].as_ref().unwrap().parse().unwrap());
            }
        }
        (names, out)
    }

    #[test]
    fn statements_parameters_and_streams() {
        let (_d, mut s) = session();
        let stmts = s
            .split("create table t (a int, b text); insert into t select g, 'x' from generate_series(1, 5000) g")
            .unwrap();
        assert_eq!(stmts.len(), 2);
        for st in &stmts {
            let Started::Command { tag } = s.start(st, &mut |_, _| {}).unwrap() else {
                panic!("expected a command")
            };
            assert!(tag == "CREATE TABLE" || tag == "INSERT 0 5000", "{tag}");
        }
        let q = s
            .split("select a from t where a > $1 and b = $2")
            .unwrap()
            .remove(0);
        assert_eq!(q.parameter_count(), 2);
        assert!(q.is_query());
        let cols = s.describe_statement(&q).unwrap().unwrap();
        assert_eq!(
            cols,
            vec![ResultColumn {
                name: "a".into(),
                ty: DataType::Int4
            }]
        );
        let bound = q
            .with_parameters(&[
                Parameter {
                    value: Some("10".into()),
                    ty: Some(ParamType::Int4),
                },
                Parameter {
                    value: Some("x".into()),
                    ty: None,
                },
            ])
            .unwrap();
        let (names, values) = drain(s.start(&bound, &mut |_, _| {}).unwrap());
        assert_eq!(names, ["a"]);
        assert_eq!(values.len(), 4990);
        assert_eq!(values.iter().sum::<i64>(), (11..=5000).sum::<i64>());
        assert!(q.with_parameters(&[]).is_err());
    }

    #[test]
    fn notices_and_rendered_results() {
        let (_d, mut s) = session();
        let mut notices = Vec::new();
        let st = s.split("drop table if exists nope").unwrap().remove(0);
        let Started::Command { tag } = s
            .start(&st, &mut |l, m| notices.push(format!("{l}: {m}")))
            .unwrap()
        else {
            panic!("expected a command")
        };
        assert_eq!(tag, "DROP TABLE");
        assert_eq!(notices, ["NOTICE: table \"nope\" does not exist, skipping"]);
        let st = s.split("show timezone").unwrap().remove(0);
        assert_eq!(
            s.describe_statement(&st).unwrap().unwrap()[0].name,
            "TimeZone"
        );
        let Started::Rendered { rows, tag, .. } = s.start(&st, &mut |_, _| {}).unwrap() else {
            panic!("expected rows")
        };
        assert_eq!(tag, "SHOW");
        assert_eq!(rows, vec![vec![Some("UTC".to_string())]]);
        assert!(s.split("").unwrap().is_empty());
    }

    #[test]
    fn interrupt_stops_a_stream() {
        let (_d, mut s) = session();
        let st = s
            .split("select count(*) from generate_series(1, 100000000) g")
            .unwrap()
            .remove(0);
        s.begin_statement();
        let Started::Rows(mut rows) = s.start(&st, &mut |_, _| {}).unwrap() else {
            panic!("expected rows")
        };
        s.interrupt().cancel();
        let e = rows.next_batch().unwrap_err();
        assert_eq!(e.message, "canceling statement due to user request");
        s.end_statement();
    }
}

#[cfg(test)]
mod cancel_tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_cancel_from_another_thread_stops_execute() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::open(dir.path()).unwrap();
        let interrupt = s.interrupt().clone();
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        // Cancels until the statement has stopped (a cancel that lands
        // before the statement starts is forgotten when it starts).
        let canceller = std::thread::spawn(move || {
            while !d.load(Ordering::Relaxed) {
                interrupt.cancel();
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        let e = s
            .query("select count(*) from generate_series(1, 10000000000) g")
            .unwrap_err();
        done.store(true, Ordering::Relaxed);
        canceller.join().unwrap();
        assert_eq!(e.message, "canceling statement due to user request");
    }
}
