//! Parsing: sqlparser's PostgreSQL dialect, with PostgreSQL's messages for
//! syntax errors and the few statements sqlparser does not know.

use crate::error::{sqlstate, SqlError};
use sqlparser::ast as A;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

/// Nesting sqlparser may follow (parentheses, subqueries, operators of
/// rising precedence), as PostgreSQL accepts about a thousand levels. The
/// statement runs on a thread with a stack big enough for it (see
/// `session::STATEMENT_STACK`).
pub const PARSER_RECURSION_LIMIT: usize = 1200;

/// A statement as the session runs it.
#[derive(Debug)]
pub enum Parsed {
    Sql(Box<A::Statement>),
    /// `VACUUM [VERBOSE] [table]` / `VACUUM (VERBOSE) [table]`.
    Vacuum {
        verbose: bool,
        table: Option<String>,
    },
    Checkpoint,
    /// `SELECT * FROM pg_stat_recovery_prefetch`.
    RecoveryPrefetchStats,
}

/// Parses one or more statements separated by `;`.
pub fn parse(sql: &str) -> Result<Vec<Parsed>, SqlError> {
    if let Some(p) = special(sql) {
        return Ok(vec![p]);
    }
    let stmts = Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| syntax_error(sql, &e))?;
    Ok(stmts
        .into_iter()
        .map(|s| Parsed::Sql(Box::new(s)))
        .collect())
}

/// Statements sqlparser does not know, recognised from the whole text.
fn special(sql: &str) -> Option<Parsed> {
    let text = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let words: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
    match words.as_slice() {
        ["checkpoint"] => return Some(Parsed::Checkpoint),
        ["select", "*", "from", "pg_stat_recovery_prefetch"] => {
            return Some(Parsed::RecoveryPrefetchStats)
        }
        _ => {}
    }
    vacuum(text)
}

fn vacuum(text: &str) -> Option<Parsed> {
    text.get(..6).filter(|w| w.eq_ignore_ascii_case("vacuum"))?;
    let after = &text[6..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace) || after.starts_with('(')) {
        return None;
    }
    let mut rest = after.trim_start();
    let mut verbose = false;
    if let Some(r) = rest.strip_prefix('(') {
        let (opts, after) = r.split_once(')')?;
        for o in opts.split(',') {
            match o.trim().to_ascii_lowercase().as_str() {
                "verbose" | "verbose true" | "verbose on" => verbose = true,
                "verbose false" | "verbose off" => verbose = false,
                _ => return None,
            }
        }
        rest = after.trim_start();
    } else if rest.len() >= 7
        && rest[..7].eq_ignore_ascii_case("verbose")
        && rest[7..].chars().next().is_none_or(char::is_whitespace)
    {
        verbose = true;
        rest = rest[7..].trim_start();
    }
    let table = if rest.is_empty() {
        None
    } else if let Some(q) = rest.strip_prefix('"') {
        Some(q.strip_suffix('"')?.replace("\"\"", "\""))
    } else if rest.chars().all(|c| c.is_alphanumeric() || c == '_') {
        Some(crate::names::truncate(&rest.to_ascii_lowercase()))
    } else {
        return None;
    };
    Some(Parsed::Vacuum { verbose, table })
}

/// Turns a sqlparser error into PostgreSQL's `syntax error at or near "x"`
/// with the position of the offending token.
pub fn syntax_error(sql: &str, e: &sqlparser::parser::ParserError) -> SqlError {
    let msg = e.to_string();
    if msg.contains("recursion limit exceeded") {
        return SqlError::coded(sqlstate::STATEMENT_TOO_COMPLEX, "stack depth limit exceeded")
            .with_hint("Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.");
    }
    let found = msg.split("found: ").nth(1);
    let loc = msg.rsplit_once(" at Line: ").and_then(|(_, rest)| {
        let (l, c) = rest.split_once(", Column: ")?;
        Some((
            l.trim().parse::<usize>().ok()?,
            c.trim().parse::<usize>().ok()?,
        ))
    });
    match (found, loc) {
        (Some(f), _) if f.starts_with("EOF") => {
            SqlError::coded(sqlstate::SYNTAX_ERROR, "syntax error at end of input").at(sql
                .trim_end()
                .chars()
                .count()
                + 1)
        }
        (Some(f), Some((line, col))) => {
            let token = f.rsplit_once(" at Line: ").map(|(t, _)| t).unwrap_or(f);
            let mut pos = 0;
            for (i, l) in sql.split('\n').enumerate() {
                if i + 1 == line {
                    pos += col;
                    break;
                }
                pos += l.chars().count() + 1;
            }
            SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{token}\""),
            )
            .at(pos)
        }
        _ => SqlError::coded(sqlstate::SYNTAX_ERROR, format!("syntax error: {msg}")),
    }
}
