//! `CREATE TABLE ... USING method`: PostgreSQL's table access method
//! clause, which sqlparser's PostgreSQL dialect does not parse.
//!
//! The clause is taken out of the tokens before sqlparser sees them and put
//! back into the parsed statement where sqlparser keeps the same words for
//! dialects that have them (`hive_formats.storage` as
//! [`A::HiveIOFormat::Using`]), so the CREATE TABLE command reads it from
//! the AST like any other clause.
//!
//! The clause is recognised as PostgreSQL's grammar places it: in a
//! statement that starts `CREATE [GLOBAL | LOCAL] [TEMP | TEMPORARY |
//! UNLOGGED] TABLE`, the keyword `USING` followed by a name, outside
//! parentheses (so not inside the column list) and before a top-level `AS`
//! (so not a join's `USING` in CREATE TABLE AS's query). Statements are
//! counted as sqlparser counts them: separated by `;`, empty ones skipped.

use sqlparser::ast as A;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// A `USING method` clause found in the tokens: the statement's index
/// among the string's statements and the method's name.
pub(super) struct Clause {
    statement: usize,
    method: A::Ident,
}

fn word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn is_blank(t: &Token) -> bool {
    matches!(t, Token::Whitespace(_))
}

/// Removes every `USING method` clause of a CREATE TABLE from `tokens` and
/// returns them.
pub(super) fn take_clauses(tokens: &mut Vec<TokenWithSpan>) -> Vec<Clause> {
    let mut clauses = Vec::new();
    let mut statement = 0;
    let mut start = 0;
    while start < tokens.len() {
        // The statement's tokens: up to the next top-level `;`.
        let mut depth = 0i32;
        let mut end = start;
        while end < tokens.len() {
            match tokens[end].token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                Token::SemiColon if depth <= 0 => break,
                _ => {}
            }
            end += 1;
        }
        let empty = tokens[start..end].iter().all(|t| is_blank(&t.token));
        if !empty {
            if let Some((at, to, method)) = find_clause(&tokens[start..end]) {
                tokens.drain(start + at..start + to);
                end -= to - at;
                clauses.push(Clause { statement, method });
            }
            statement += 1;
        }
        start = end + 1;
    }
    clauses
}

/// The clause in one statement's tokens: the range to remove and the name.
fn find_clause(tokens: &[TokenWithSpan]) -> Option<(usize, usize, A::Ident)> {
    let words: Vec<(usize, String)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !is_blank(&t.token))
        .take(4)
        .filter_map(|(i, t)| word(&t.token).map(|w| (i, w)))
        .collect();
    let mut w = words.iter().map(|(_, w)| w.as_str());
    if w.next() != Some("CREATE") {
        return None;
    }
    let mut next = w.next();
    if matches!(next, Some("GLOBAL" | "LOCAL")) {
        next = w.next();
    }
    if matches!(next, Some("TEMP" | "TEMPORARY" | "UNLOGGED")) {
        next = w.next();
    }
    if next != Some("TABLE") {
        return None;
    }
    let mut depth = 0;
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            tok if depth == 0 => match word(tok).as_deref() {
                Some("AS") => return None,
                Some("USING") => {
                    let j = (i + 1..tokens.len()).find(|&j| !is_blank(&tokens[j].token))?;
                    let Token::Word(name) = &tokens[j].token else {
                        return None;
                    };
                    let method = A::Ident {
                        value: name.value.clone(),
                        quote_style: name.quote_style,
                        span: tokens[j].span,
                    };
                    return Some((i, j + 1, method));
                }
                _ => {}
            },
            _ => {}
        }
    }
    None
}

/// Puts the clauses back into the parsed statements (see the module doc).
pub(super) fn restore(statements: &mut [A::Statement], clauses: Vec<Clause>) {
    for c in clauses {
        if let Some(A::Statement::CreateTable(ct)) = statements.get_mut(c.statement) {
            ct.hive_formats.get_or_insert_with(Default::default).storage =
                Some(A::HiveIOFormat::Using { format: c.method });
        }
    }
}

/// The access method a CREATE TABLE names, if any.
pub fn access_method(ct: &A::CreateTable) -> Option<&A::Ident> {
    match ct.hive_formats.as_ref()?.storage.as_ref()? {
        A::HiveIOFormat::Using { format } => Some(format),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{parse, Parsed};

    fn method_of(sql: &str) -> Vec<Option<String>> {
        parse(sql)
            .unwrap()
            .into_iter()
            .map(|p| match p {
                Parsed::Sql(s, _) => match *s {
                    sqlparser::ast::Statement::CreateTable(ct) => {
                        super::access_method(&ct).map(|i| i.value.clone())
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    #[test]
    fn finds_the_clause_where_postgresql_allows_it() {
        assert_eq!(
            method_of("create table t (a int, b text) using columnar"),
            [Some("columnar".into())]
        );
        assert_eq!(
            method_of("CREATE TABLE t (a int) USING heap WITH (fillfactor = 90)"),
            [Some("heap".into())]
        );
        assert_eq!(
            method_of("create table t using columnar as select 1 a"),
            [Some("columnar".into())]
        );
        assert_eq!(
            method_of("create table t as select * from a join b using (x)"),
            [None]
        );
        assert_eq!(
            method_of("select 1;; create unlogged table t (a int) using \"Col\"; select 2"),
            [None, Some("Col".into()), None]
        );
        assert_eq!(method_of("create table t (a int)"), [None]);
    }
}
