//! Parsing: sqlparser's PostgreSQL dialect, with PostgreSQL's messages for
//! syntax errors and the few statements sqlparser does not know.

use crate::error::{sqlstate, SqlError};
use sqlparser::ast::{self as A, Visit, Visitor};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace};
use std::ops::ControlFlow;
use tusk_storage::RowLockMode;

mod between;
mod reserved;
mod sequence_options;
mod table_am;
pub(crate) use between::symmetric_low;
pub use sequence_options::{AlterSequence, AlterSequenceAction};
pub use table_am::access_method;

/// Nesting sqlparser may follow (parentheses, subqueries, operators of
/// rising precedence): PostgreSQL parses 5,000 nested parentheses. The
/// statement runs on a thread with a stack big enough for it (see
/// `session::STATEMENT_STACK`).
pub const PARSER_RECURSION_LIMIT: usize = 5000;

/// A statement as the session runs it.
#[derive(Debug, Clone)]
pub enum Parsed {
    /// A statement sqlparser parsed, with the strength of each of its
    /// row-locking clauses (`FOR UPDATE`, ...) in the order sqlparser's
    /// visitor meets them after their query's children (see
    /// [`row_lock_strengths`]).
    Sql(Box<A::Statement>, Vec<RowLockMode>),
    /// `VACUUM [VERBOSE] [ANALYZE] [table, ...]` / `VACUUM (VERBOSE,
    /// ANALYZE) [table, ...]`; no tables: all of them.
    Vacuum {
        verbose: bool,
        analyze: bool,
        tables: Vec<String>,
    },
    /// `ANALYZE [VERBOSE] [table [(column, ...)], ...]`; no tables: all
    /// of them.
    Analyze {
        verbose: bool,
        tables: Vec<(String, Vec<String>)>,
    },
    Checkpoint,
    /// `SELECT * FROM` one of the statistics views tusk computes from the
    /// engine's counters.
    StatView(StatView),
    /// A command string that is one COPY statement, read with PostgreSQL's
    /// grammar (`commands::copy::stmt`).
    Copy(Box<crate::commands::copy::CopyStatement>),
    /// `FETCH` or `MOVE`, read with PostgreSQL's grammar
    /// (`commands::cursor::grammar`).
    Fetch(crate::commands::cursor::FetchStatement),
    /// `ALTER SEQUENCE`, read here (`parse::sequence_options`).
    AlterSequence(Box<AlterSequence>),
}

/// Parses one or more statements separated by `;`.
pub fn parse(sql: &str) -> Result<Vec<Parsed>, SqlError> {
    if let Some(p) = special(sql) {
        return Ok(vec![p]);
    }
    if let Some(c) = crate::commands::copy::parse_statement(sql) {
        return Ok(vec![Parsed::Copy(Box::new(c?))]);
    }
    let tokens = lex(sql)?;
    // FETCH and MOVE are read here; the statements between them by
    // sqlparser.
    let mut out = Vec::new();
    let mut chunk: Vec<TokenWithSpan> = Vec::new();
    for t in tokens {
        let end = matches!(t.token, Token::SemiColon | Token::EOF);
        chunk.push(t);
        if end {
            statements(sql, std::mem::take(&mut chunk), &mut out)?;
        }
    }
    if !chunk.is_empty() {
        statements(sql, chunk, &mut out)?;
    }
    Ok(out)
}

/// The statements of `tokens` (up to and including a semicolon).
fn statements(
    sql: &str,
    mut tokens: Vec<TokenWithSpan>,
    out: &mut Vec<Parsed>,
) -> Result<(), SqlError> {
    let body: Vec<TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::SemiColon | Token::EOF))
        .cloned()
        .collect();
    if let Some(f) = crate::commands::cursor::grammar::parse(&body) {
        out.push(Parsed::Fetch(f?));
        return Ok(());
    }
    if body.iter().all(|t| matches!(t.token, Token::Whitespace(_))) {
        return Ok(());
    }
    if let Some(a) = sequence_options::alter_sequence(sql, &body) {
        out.push(Parsed::AlterSequence(Box::new(a?)));
        return Ok(());
    }
    between::mark_symmetric(&mut tokens);
    sequence_options::reorder(&mut tokens)?;
    let strengths = row_lock_strengths(&mut tokens);
    let access_methods = table_am::take_clauses(&mut tokens);
    let mut stmts = Parser::new(&PostgreSqlDialect {})
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(|e| syntax_error(sql, &e))?;
    reserved::check(sql, &stmts)?;
    table_am::restore(&mut stmts, access_methods);
    // Hand each statement the strengths of its clauses, in order; if the
    // count differs (a `FOR SHARE` that was no locking clause), the
    // clauses keep the strengths sqlparser gave them.
    let counts: Vec<usize> = stmts.iter().map(lock_clause_count).collect();
    let matched = counts.iter().sum::<usize>() == strengths.len();
    let mut next = strengths.into_iter();
    out.extend(stmts.into_iter().zip(counts).map(|(s, n)| {
        let mine = if matched {
            next.by_ref().take(n).collect()
        } else {
            Vec::new()
        };
        Parsed::Sql(Box::new(s), mine)
    }));
    Ok(())
}

/// The row-locking clauses of a statement, in the order sqlparser's
/// visitor finishes their queries (text order: a nested query's clause is
/// written before its parent's).
fn lock_clause_count(s: &A::Statement) -> usize {
    struct Count(usize);
    impl Visitor for Count {
        type Break = ();
        fn post_visit_query(&mut self, q: &A::Query) -> ControlFlow<()> {
            self.0 += q.locks.len();
            ControlFlow::Continue(())
        }
    }
    let mut c = Count(0);
    let _ = s.visit(&mut c);
    c.0
}

/// `FOR NO KEY UPDATE` and `FOR KEY SHARE`, which sqlparser does not know:
/// their `NO KEY` / `KEY` words are taken out of the tokens (leaving `FOR
/// UPDATE` / `FOR SHARE`), and the strength of every row-locking clause is
/// returned in text order.
fn row_lock_strengths(tokens: &mut Vec<TokenWithSpan>) -> Vec<RowLockMode> {
    let word = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if word(&tokens[i]).as_deref() != Some("FOR") {
            i += 1;
            continue;
        }
        // The next three words after FOR, with their token positions.
        let mut next: Vec<(usize, String)> = Vec::new();
        let mut j = i + 1;
        while j < tokens.len() && next.len() < 3 {
            match &tokens[j].token {
                Token::Whitespace(_) => {}
                _ => match word(&tokens[j]) {
                    Some(w) => next.push((j, w)),
                    None => break,
                },
            }
            j += 1;
        }
        let words: Vec<&str> = next.iter().map(|(_, w)| w.as_str()).collect();
        // The position of the strength word when words before it go.
        let (mode, strength_at) = match words.as_slice() {
            ["NO", "KEY", "UPDATE", ..] => (RowLockMode::NoKeyUpdate, Some(next[2].0)),
            ["KEY", "SHARE", ..] => (RowLockMode::KeyShare, Some(next[1].0)),
            ["UPDATE", ..] => (RowLockMode::Update, None),
            ["SHARE", ..] => (RowLockMode::Share, None),
            _ => {
                i += 1;
                continue;
            }
        };
        if let Some(to) = strength_at {
            tokens.drain(next[0].0..to);
        }
        out.push(mode);
        i += 1;
    }
    out
}

/// Tokenizes `sql` with PostgreSQL's lexical rules that sqlparser lacks:
/// string constants separated only by whitespace containing a newline are
/// one constant (`'a'` newline `'b'` is `'ab'`), and a number followed
/// directly by letters is an error (`trailing junk after numeric literal`).
pub(crate) fn lex(sql: &str) -> Result<Vec<TokenWithSpan>, SqlError> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| SqlError::coded(sqlstate::SYNTAX_ERROR, tokenizer_message(&e.to_string())))?;
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    // Index in `out` of a string constant that later ones may continue,
    // and whether a newline has been seen since it.
    let mut open_string: Option<(usize, bool)> = None;
    for t in tokens {
        match &t.token {
            Token::Whitespace(w) => {
                if let Some((_, newline)) = &mut open_string {
                    *newline |= matches!(w, Whitespace::Newline)
                        || matches!(w, Whitespace::SingleLineComment { .. });
                }
                out.push(t);
                continue;
            }
            Token::SingleQuotedString(more) => {
                if let Some((at, true)) = open_string {
                    if let Token::SingleQuotedString(first) = &mut out[at].token {
                        first.push_str(more);
                        out.truncate(at + 1);
                        open_string = Some((at, false));
                        continue;
                    }
                }
                open_string = Some((out.len(), false));
                out.push(t);
                continue;
            }
            Token::Word(w) if w.quote_style.is_none() => {
                if let Some(prev) = out.last() {
                    if let Token::Number(n, _) = &prev.token {
                        if prev.span.end == t.span.start {
                            return Err(SqlError::coded(
                                sqlstate::SYNTAX_ERROR,
                                format!(
                                    "trailing junk after numeric literal at or near \"{n}{}\"",
                                    w.value
                                ),
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
        open_string = None;
        out.push(t);
    }
    Ok(out)
}

/// PostgreSQL's wording for a tokenizer error.
fn tokenizer_message(msg: &str) -> String {
    if msg.contains("Unterminated string literal") {
        "unterminated quoted string at or near \"'\"".into()
    } else if msg.contains("Unterminated delimited identifier") {
        "unterminated quoted identifier at or near \"\"\"".into()
    } else if msg.contains("Unterminated dollar-quoted") {
        "unterminated dollar-quoted string".into()
    } else if msg.contains("Unterminated multi-line comment") {
        "unterminated /* comment".into()
    } else {
        format!("syntax error: {msg}")
    }
}

/// A statistics view read whole (`SELECT * FROM name`): one row of
/// counters, each shown as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatView {
    /// `pg_stat_recovery_prefetch`: the last recovery's prefetching.
    RecoveryPrefetch,
    /// `pg_stat_wal`: WAL records, writes and syncs since the server
    /// started (see `tusk_storage::wal::WalStats`).
    Wal,
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
            return Some(Parsed::StatView(StatView::RecoveryPrefetch))
        }
        ["select", "*", "from", "pg_stat_wal"] => return Some(Parsed::StatView(StatView::Wal)),
        _ => {}
    }
    analyze(text).or_else(|| vacuum(text))
}

/// A parenthesised option list of VACUUM or ANALYZE, `name [boolean], ...`
/// (names lower-cased; no value means true); `None` for anything else.
fn option_list(opts: &str) -> Option<Vec<(String, bool)>> {
    opts.split(',')
        .map(|o| {
            let words: Vec<String> = o
                .split_whitespace()
                .map(|w| w.to_ascii_lowercase())
                .collect();
            let on = match words.get(1).map(String::as_str) {
                None => true,
                Some("true" | "on" | "1") => true,
                Some("false" | "off" | "0") => false,
                Some(_) => return None,
            };
            (words.len() <= 2).then(|| (words.first().cloned().unwrap_or_default(), on))
        })
        .collect()
}

/// An identifier as PostgreSQL reads it: a quoted one as written, an
/// unquoted one folded to lower case; `None` for anything else.
fn plain_ident(name: &str) -> Option<String> {
    let name = name.trim();
    if let Some(q) = name.strip_prefix('"') {
        Some(q.strip_suffix('"')?.replace("\"\"", "\""))
    } else if !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
    {
        Some(crate::names::truncate(&name.to_ascii_lowercase()))
    } else {
        None
    }
}

/// `ANALYZE [VERBOSE] [table [(column [, ...])] [, ...]]` and `ANALYZE
/// (VERBOSE) ...` (also spelled ANALYSE). Anything else is left to
/// sqlparser, which refuses it.
fn analyze(text: &str) -> Option<Parsed> {
    let word = text.get(..7)?;
    if !(word.eq_ignore_ascii_case("analyze") || word.eq_ignore_ascii_case("analyse")) {
        return None;
    }
    let after = &text[7..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace) || after.starts_with('(')) {
        return None;
    }
    let mut rest = after.trim_start();
    let mut verbose = false;
    if let Some(r) = rest.strip_prefix('(') {
        let (opts, after) = r.split_once(')')?;
        for (name, on) in option_list(opts)? {
            match name.as_str() {
                "verbose" => verbose = on,
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
    let mut tables = Vec::new();
    while !rest.is_empty() {
        let end = rest.find([',', '(']).unwrap_or(rest.len());
        let name = plain_ident(&rest[..end])?;
        rest = &rest[end..];
        let mut cols = Vec::new();
        if let Some(r) = rest.strip_prefix('(') {
            let (list, after) = r.split_once(')')?;
            for c in list.split(',') {
                cols.push(plain_ident(c)?);
            }
            rest = after.trim_start();
        }
        tables.push((name, cols));
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => {}
            None => return None,
        }
        if rest.is_empty() && text.trim_end().ends_with(',') {
            return None;
        }
    }
    Some(Parsed::Analyze { verbose, tables })
}

/// `VACUUM [FREEZE] [VERBOSE] [ANALYZE] [table [, ...]]` and `VACUUM
/// (option [, ...]) [table [, ...]]` with the options VERBOSE, ANALYZE,
/// FREEZE (each optionally followed by a boolean). Anything else (FULL,
/// column lists) is left to sqlparser, which refuses it.
fn vacuum(text: &str) -> Option<Parsed> {
    text.get(..6).filter(|w| w.eq_ignore_ascii_case("vacuum"))?;
    let after = &text[6..];
    if !(after.is_empty() || after.starts_with(char::is_whitespace) || after.starts_with('(')) {
        return None;
    }
    let mut rest = after.trim_start();
    let (mut verbose, mut analyze) = (false, false);
    if let Some(r) = rest.strip_prefix('(') {
        let (opts, after) = r.split_once(')')?;
        for (name, on) in option_list(opts)? {
            match name.as_str() {
                "verbose" => verbose = on,
                "analyze" | "analyse" => analyze = on,
                "freeze" => {}
                _ => return None,
            }
        }
        rest = after.trim_start();
    } else {
        // The keywords in the order PostgreSQL's grammar has them.
        for (word, flag) in [
            ("freeze", None),
            ("verbose", Some(&mut verbose)),
            ("analyze", Some(&mut analyze)),
        ] {
            let matches = |r: &str, w: &str| {
                r.len() >= w.len()
                    && r[..w.len()].eq_ignore_ascii_case(w)
                    && r[w.len()..].chars().next().is_none_or(char::is_whitespace)
            };
            // "analyse" is as long as "analyze".
            if !(matches(rest, word) || (word == "analyze" && matches(rest, "analyse"))) {
                continue;
            }
            let len = word.len();
            if let Some(f) = flag {
                *f = true;
            }
            rest = rest[len..].trim_start();
        }
    }
    let mut tables = Vec::new();
    if !rest.is_empty() {
        for name in rest.split(',') {
            tables.push(plain_ident(name)?);
        }
    }
    Some(Parsed::Vacuum {
        verbose,
        analyze,
        tables,
    })
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
            let at = sqlparser::tokenizer::Location {
                line: line as u64,
                column: col as u64,
            };
            let pos = crate::error::char_position(sql, at).unwrap_or(0);
            SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{token}\""),
            )
            .at(pos)
        }
        _ => SqlError::coded(sqlstate::SYNTAX_ERROR, format!("syntax error: {msg}")),
    }
}
