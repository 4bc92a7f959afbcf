//! PostgreSQL's reserved key words are never bare identifiers.
//!
//! sqlparser's PostgreSQL dialect takes a key word it cannot place as an
//! identifier: `select case` reads a column `case`, `select from where` a
//! table `where`. PostgreSQL's grammar has no such fallback: a column
//! reference or a relation name starts with a `ColId`, which excludes the
//! reserved key words (Appendix C of its manual, "reserved" and not
//! "requires AS" or "can be function or type"), so these are syntax
//! errors. After sqlparser has parsed a statement, [`check`] looks for an
//! unquoted reserved word where a column reference or the first part of a
//! relation name stands and reports PostgreSQL's error: `syntax error at
//! or near "where"` at the word — or, for the words that begin an
//! expression of their own (`CASE`, `ARRAY`, `CAST`, `NOT`), at the token
//! after it, where PostgreSQL's grammar fails (`at end of input` when
//! there is none).
//!
//! Only queries and DML are checked. Words after a dot (`t.select`,
//! `public.table`) are labels, which
//! PostgreSQL allows, and are not checked. `DEFAULT` and the words that
//! name functions (`CURRENT_DATE`, `USER`, ...) are left out: sqlparser
//! reads them as identifiers where they are valid.

use crate::error::{char_position, sqlstate, SqlError};
use sqlparser::ast::{self as A, Visit, Visitor};
use sqlparser::tokenizer::Token;
use std::ops::ControlFlow;

/// The reserved key words sqlparser reads as identifiers where they are
/// valid: `DEFAULT` and those that name functions (see the module doc).
const READ_AS_IDENTIFIERS: &[&str] = &[
    "current_catalog",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "localtime",
    "localtimestamp",
    "session_user",
    "user",
];

/// Reserved words that begin an expression: PostgreSQL fails at the next
/// token.
const EXPRESSION_STARTERS: &[&str] = &["array", "case", "cast", "not"];

fn is_reserved(i: &A::Ident) -> bool {
    let word = i.value.to_ascii_lowercase();
    i.quote_style.is_none()
        && crate::names::is_reserved(&word)
        && !READ_AS_IDENTIFIERS.contains(&word.as_str())
}

/// The first reserved word standing as a column reference or relation name.
struct FindReserved;

impl Visitor for FindReserved {
    type Break = A::Ident;

    fn pre_visit_expr(&mut self, e: &A::Expr) -> ControlFlow<A::Ident> {
        let first = match e {
            A::Expr::Identifier(i) => Some(i),
            A::Expr::CompoundIdentifier(parts) => parts.first(),
            _ => None,
        };
        match first {
            Some(i) if is_reserved(i) => ControlFlow::Break(i.clone()),
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_relation(&mut self, name: &A::ObjectName) -> ControlFlow<A::Ident> {
        match name.0.first().and_then(A::ObjectNamePart::as_ident) {
            Some(i) if is_reserved(i) => ControlFlow::Break(i.clone()),
            _ => ControlFlow::Continue(()),
        }
    }
}

/// PostgreSQL's syntax error for a reserved word that `stmts` (parsed from
/// `sql`) use as an identifier, if any.
pub(super) fn check(sql: &str, stmts: &[A::Statement]) -> Result<(), SqlError> {
    // Queries and DML only: a utility's arguments (`SET x = on`) are
    // read by other rules.
    let checked = stmts.iter().filter(|s| {
        matches!(
            s,
            A::Statement::Query(_)
                | A::Statement::Insert(_)
                | A::Statement::Update { .. }
                | A::Statement::Delete(_)
        )
    });
    for s in checked {
        let ControlFlow::Break(word) = s.visit(&mut FindReserved) else {
            continue;
        };
        // Rare: the tokens are read again only to name the culprit.
        let tokens = super::lex(sql)?;
        let starter = EXPRESSION_STARTERS.contains(&word.value.to_ascii_lowercase().as_str());
        let culprit = if starter {
            tokens.iter().find(|t| {
                t.span.start > word.span.start
                    && !matches!(t.token, Token::Whitespace(_) | Token::EOF)
            })
        } else {
            tokens.iter().find(|t| t.span.start == word.span.start)
        };
        return Err(match culprit {
            None => SqlError::coded(sqlstate::SYNTAX_ERROR, "syntax error at end of input").at(sql
                .trim_end()
                .chars()
                .count()
                + 1),
            Some(t) => {
                let e = SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{}\"", t.token),
                );
                match char_position(sql, t.span.start) {
                    Some(p) => e.at(p),
                    None => e,
                }
            }
        });
    }
    Ok(())
}
