//! Storage parameters of CREATE TABLE: `WITH (fillfactor = 100, ...)`.
//!
//! PostgreSQL checks each parameter against its table of heap options
//! (`reloptions.c`): the name must be known, given once, and its value of
//! the option's type and within its bounds. tusk checks them the same way,
//! with PostgreSQL's messages, so that scripts written for PostgreSQL
//! (pgbench's `with (fillfactor=100)`) run unchanged, and mistakes fail as
//! they would there. The values are not kept: tusk's heap always fills its
//! pages (fillfactor 100, PostgreSQL's default for tables), and autovacuum
//! uses its server-wide settings.

use crate::error::{sqlstate, SqlError};
use crate::session::Result;
use sqlparser::ast as A;

/// The kind and bounds of a heap option.
#[derive(Clone, Copy)]
enum Kind {
    Int(i64, i64),
    Real(f64, f64),
    Bool,
    /// `vacuum_index_cleanup`: auto, on or off.
    Ternary,
}

const INT_MAX: i64 = i32::MAX as i64;

/// PostgreSQL 15's heap options (`boolRelOpts`, `intRelOpts`,
/// `realRelOpts`, `enumRelOpts` of kind `RELOPT_KIND_HEAP`).
const HEAP_OPTIONS: &[(&str, Kind)] = &[
    ("fillfactor", Kind::Int(10, 100)),
    ("autovacuum_enabled", Kind::Bool),
    ("autovacuum_vacuum_threshold", Kind::Int(0, INT_MAX)),
    ("autovacuum_vacuum_insert_threshold", Kind::Int(-1, INT_MAX)),
    ("autovacuum_analyze_threshold", Kind::Int(0, INT_MAX)),
    ("autovacuum_vacuum_cost_limit", Kind::Int(1, 10000)),
    ("autovacuum_freeze_min_age", Kind::Int(0, 1_000_000_000)),
    (
        "autovacuum_freeze_max_age",
        Kind::Int(100_000, 2_000_000_000),
    ),
    ("autovacuum_freeze_table_age", Kind::Int(0, 2_000_000_000)),
    (
        "autovacuum_multixact_freeze_min_age",
        Kind::Int(0, 1_000_000_000),
    ),
    (
        "autovacuum_multixact_freeze_max_age",
        Kind::Int(10_000, 2_000_000_000),
    ),
    (
        "autovacuum_multixact_freeze_table_age",
        Kind::Int(0, 2_000_000_000),
    ),
    ("log_autovacuum_min_duration", Kind::Int(-1, INT_MAX)),
    ("toast_tuple_target", Kind::Int(128, 8160)),
    ("parallel_workers", Kind::Int(0, 1024)),
    ("autovacuum_vacuum_cost_delay", Kind::Real(0.0, 100.0)),
    ("autovacuum_vacuum_scale_factor", Kind::Real(0.0, 100.0)),
    (
        "autovacuum_vacuum_insert_scale_factor",
        Kind::Real(0.0, 100.0),
    ),
    ("autovacuum_analyze_scale_factor", Kind::Real(0.0, 100.0)),
    ("user_catalog_table", Kind::Bool),
    ("vacuum_truncate", Kind::Bool),
    ("vacuum_index_cleanup", Kind::Ternary),
];

fn invalid(message: String) -> SqlError {
    SqlError::coded(sqlstate::INVALID_PARAMETER_VALUE, message)
}

/// An option's value as PostgreSQL's reloptions see it: the text of a
/// literal or word (`true` for a bare name).
fn value_text(value: Option<&A::Expr>) -> String {
    match value {
        None => "true".into(),
        Some(A::Expr::Value(v)) => match &v.value {
            A::Value::SingleQuotedString(s) => s.clone(),
            A::Value::Number(n, _) => n.clone(),
            A::Value::Boolean(b) => b.to_string(),
            other => other.to_string(),
        },
        Some(A::Expr::Identifier(i)) => i.value.clone(),
        Some(A::Expr::UnaryOp {
            op: A::UnaryOperator::Minus,
            expr,
        }) => format!("-{}", value_text(Some(expr))),
        Some(other) => other.to_string(),
    }
}

/// PostgreSQL's `parse_bool`: prefixes of true/false/yes/no, on/off, 1/0.
fn parse_bool(s: &str) -> Option<bool> {
    let l = s.trim().to_ascii_lowercase();
    let prefix = |word: &str| !l.is_empty() && word.starts_with(l.as_str());
    match l.as_str() {
        "on" | "1" => Some(true),
        "off" | "of" | "0" => Some(false),
        _ if prefix("true") || prefix("yes") => Some(true),
        _ if prefix("false") || prefix("no") => Some(false),
        _ => None,
    }
}

/// Checks one option's value.
fn check_value(name: &str, kind: Kind, text: &str) -> Result<()> {
    match kind {
        Kind::Int(min, max) => {
            // PostgreSQL's parse_int takes a fraction and rounds it.
            let v = text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    invalid(format!(
                        "invalid value for integer option \"{name}\": {text}"
                    ))
                })?
                .round() as i64;
            if v < min || v > max {
                return Err(
                    invalid(format!("value {text} out of bounds for option \"{name}\""))
                        .with_detail(format!("Valid values are between \"{min}\" and \"{max}\".")),
                );
            }
        }
        Kind::Real(min, max) => {
            let v = text.trim().parse::<f64>().map_err(|_| {
                invalid(format!(
                    "invalid value for floating point option \"{name}\": {text}"
                ))
            })?;
            if v < min || v > max {
                return Err(
                    invalid(format!("value {text} out of bounds for option \"{name}\""))
                        .with_detail(format!(
                            "Valid values are between \"{min:.6}\" and \"{max:.6}\"."
                        )),
                );
            }
        }
        Kind::Bool => {
            parse_bool(text).ok_or_else(|| {
                invalid(format!(
                    "invalid value for boolean option \"{name}\": {text}"
                ))
            })?;
        }
        Kind::Ternary => {
            if parse_bool(text).is_none() && !text.eq_ignore_ascii_case("auto") {
                return Err(
                    invalid(format!("invalid value for enum option \"{name}\": {text}"))
                        .with_detail("Valid values are \"on\", \"off\", and \"auto\"."),
                );
            }
        }
    }
    Ok(())
}

/// Checks CREATE TABLE's `WITH (...)` storage parameters as PostgreSQL 15
/// does (see the module doc).
pub(crate) fn check_table_options(options: &A::CreateTableOptions) -> Result<()> {
    let list = match options {
        A::CreateTableOptions::None => return Ok(()),
        A::CreateTableOptions::With(list) => list,
        _ => {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "only WITH (storage_parameter = value, ...) table options are supported",
            ))
        }
    };
    let mut seen: Vec<String> = Vec::new();
    for o in list {
        let (key, value) = match o {
            A::SqlOption::KeyValue { key, value } => (key, Some(value)),
            A::SqlOption::Ident(key) => (key, None),
            other => {
                return Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{other}\""),
                ))
            }
        };
        let name = crate::names::ident(key)?;
        let text = value_text(value);
        // WITH (oids = false) is still accepted, as in PostgreSQL.
        if name == "oids" {
            if parse_bool(&text) == Some(false) {
                continue;
            }
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "tables declared WITH OIDS are not supported",
            ));
        }
        let Some(&(_, kind)) = HEAP_OPTIONS.iter().find(|(n, _)| *n == name) else {
            return Err(invalid(format!("unrecognized parameter \"{name}\"")));
        };
        if seen.contains(&name) {
            return Err(invalid(format!(
                "parameter \"{name}\" specified more than once"
            )));
        }
        check_value(&name, kind, &text)?;
        seen.push(name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_bool;

    #[test]
    fn booleans_as_postgres_reads_them() {
        assert_eq!(parse_bool("t"), Some(true));
        assert_eq!(parse_bool("off"), Some(false));
        assert_eq!(parse_bool("o"), None);
        assert_eq!(parse_bool("maybe"), None);
    }
}
