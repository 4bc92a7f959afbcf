//! Sequence options in any order, which sqlparser does not read.
//!
//! PostgreSQL takes the options of `CREATE SEQUENCE` and of an identity
//! column (`GENERATED ... AS IDENTITY (options)`) in any order: pg_dump
//! writes `START WITH 1 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1`.
//! sqlparser reads them only in one order (`AS`, then INCREMENT, MINVALUE,
//! MAXVALUE, START, CACHE, CYCLE, then OWNED BY) and each once. Before
//! sqlparser reads the tokens, [`reorder`] cuts the option list into its
//! clauses (each starts at its key word) and puts them in sqlparser's
//! order. An option given twice is PostgreSQL's `conflicting or redundant
//! options` (42601), reported here, as sqlparser would only call it a
//! syntax error.

use crate::error::{sqlstate, SqlError};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

fn is_word(t: &Token, k: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == k && w.quote_style.is_none())
}

/// The next token after `i` that is not whitespace.
fn next_token(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

/// sqlparser's position for the option clause starting at token `i`
/// (`None`: no option starts there).
fn rank(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    let t = &tokens[i].token;
    let after = next_token(tokens, i).map(|j| &tokens[j].token);
    Some(if is_word(t, Keyword::AS) {
        0
    } else if is_word(t, Keyword::INCREMENT) {
        1
    } else if is_word(t, Keyword::MINVALUE) {
        2
    } else if is_word(t, Keyword::MAXVALUE) {
        3
    } else if is_word(t, Keyword::NO) {
        match after {
            Some(a) if is_word(a, Keyword::MINVALUE) => 2,
            Some(a) if is_word(a, Keyword::MAXVALUE) => 3,
            Some(a) if is_word(a, Keyword::CYCLE) => 6,
            _ => return None,
        }
    } else if is_word(t, Keyword::START) {
        4
    } else if is_word(t, Keyword::CACHE) {
        5
    } else if is_word(t, Keyword::CYCLE) {
        6
    } else if is_word(t, Keyword::OWNED) && after.is_some_and(|a| is_word(a, Keyword::BY)) {
        7
    } else {
        return None;
    })
}

/// Puts the option clauses in `tokens[from..to]` in sqlparser's order.
/// Returns false (and changes nothing) when the range holds something
/// that is no option clause, for sqlparser to report.
fn reorder_range(
    tokens: &mut Vec<TokenWithSpan>,
    from: usize,
    to: usize,
) -> Result<bool, SqlError> {
    let mut clauses: Vec<(usize, Vec<TokenWithSpan>)> = Vec::new();
    let mut i = from;
    while i < to {
        if matches!(tokens[i].token, Token::Whitespace(_)) {
            i += 1;
            continue;
        }
        let Some(r) = rank(tokens, i) else {
            return Ok(false);
        };
        if clauses.iter().any(|(q, _)| *q == r) {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "conflicting or redundant options",
            ));
        }
        // The clause runs to the next token that starts another one (a
        // key word no option value can be).
        let mut j = i + 1;
        // `NO x`, `OWNED BY`: the second word belongs to the clause.
        if r == 7 || is_word(&tokens[i].token, Keyword::NO) {
            j = next_token(tokens, i).map_or(to, |k| k + 1);
        }
        while j < to
            && (matches!(tokens[j].token, Token::Whitespace(_)) || rank(tokens, j).is_none())
        {
            j += 1;
        }
        clauses.push((r, tokens[i..j].to_vec()));
        i = j;
    }
    clauses.sort_by_key(|(r, _)| *r);
    let space = TokenWithSpan::wrap(Token::Whitespace(Whitespace::Space));
    let mut out = Vec::new();
    for (_, c) in clauses {
        out.push(space.clone());
        out.extend(c);
    }
    out.push(space);
    tokens.splice(from..to, out);
    Ok(true)
}

/// Reorders the options of every `CREATE SEQUENCE` and every `AS IDENTITY
/// (...)` in `tokens` (one statement's, up to its semicolon).
pub(super) fn reorder(tokens: &mut Vec<TokenWithSpan>) -> Result<(), SqlError> {
    // CREATE [TEMP | TEMPORARY | UNLOGGED] SEQUENCE [IF NOT EXISTS] name
    let words: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let kw = |n: usize, k: Keyword| words.get(n).is_some_and(|&i| is_word(&tokens[i].token, k));
    if kw(0, Keyword::CREATE) {
        let mut n = 1;
        if kw(n, Keyword::TEMP) || kw(n, Keyword::TEMPORARY) || kw(n, Keyword::UNLOGGED) {
            n += 1;
        }
        if kw(n, Keyword::SEQUENCE) {
            n += 1;
            if kw(n, Keyword::IF) && kw(n + 1, Keyword::NOT) && kw(n + 2, Keyword::EXISTS) {
                n += 3;
            }
            // The name: words joined by periods.
            n += 1;
            while words
                .get(n)
                .is_some_and(|&i| tokens[i].token == Token::Period)
            {
                n += 2;
            }
            if let Some(&from) = words.get(n) {
                let to = tokens
                    .iter()
                    .position(|t| matches!(t.token, Token::SemiColon | Token::EOF))
                    .unwrap_or(tokens.len());
                if from < to {
                    reorder_range(tokens, from, to)?;
                }
            }
            return Ok(());
        }
    }
    // ... AS IDENTITY ( options )
    let mut i = 0;
    while i < tokens.len() {
        if is_word(&tokens[i].token, Keyword::IDENTITY) {
            if let Some(open) = next_token(tokens, i).filter(|&o| tokens[o].token == Token::LParen)
            {
                let close = (open + 1..tokens.len()).find(|&k| tokens[k].token == Token::RParen);
                if let Some(close) = close {
                    reorder_range(tokens, open + 1, close)?;
                }
            }
        }
        i += 1;
    }
    Ok(())
}

/// `ALTER SEQUENCE [IF EXISTS] name ...`, which sqlparser does not know.
#[derive(Debug, Clone)]
pub struct AlterSequence {
    pub if_exists: bool,
    pub name: sqlparser::ast::ObjectName,
    pub action: AlterSequenceAction,
}

#[derive(Debug, Clone)]
pub enum AlterSequenceAction {
    /// `RENAME TO new`.
    Rename(sqlparser::ast::Ident),
    /// Options, as CREATE SEQUENCE takes them, plus `RESTART [[WITH] n]`
    /// (`Some(None)`: restart at the start value) and `OWNED BY`.
    Options {
        data_type: Option<sqlparser::ast::DataType>,
        options: Vec<sqlparser::ast::SequenceOptions>,
        restart: Option<Option<i64>>,
        owned_by: Option<sqlparser::ast::ObjectName>,
    },
}

/// Reads `tokens` (one statement's, without its semicolon) as ALTER
/// SEQUENCE; `None` when it is another statement.
pub(super) fn alter_sequence(
    sql: &str,
    tokens: &[TokenWithSpan],
) -> Option<Result<AlterSequence, SqlError>> {
    let sig: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let kw = |n: usize, k: Keyword| sig.get(n).is_some_and(|t| is_word(&t.token, k));
    if !(kw(0, Keyword::ALTER) && kw(1, Keyword::SEQUENCE)) {
        return None;
    }
    Some(read_alter(sql, &sig))
}

fn read_alter(sql: &str, sig: &[&TokenWithSpan]) -> Result<AlterSequence, SqlError> {
    use sqlparser::ast as A;
    let syntax = |at: Option<&&TokenWithSpan>| {
        let near = at.map_or("end of input".to_string(), |t| format!("\"{}\"", t.token));
        SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("syntax error at or near {near}"),
        )
    };
    let kw = |n: usize, k: Keyword| sig.get(n).is_some_and(|t| is_word(&t.token, k));
    let mut n = 2;
    let if_exists = kw(n, Keyword::IF) && kw(n + 1, Keyword::EXISTS);
    if if_exists {
        n += 2;
    }
    // The name and the rest, read again by sqlparser.
    let text = |from: usize| -> String {
        sig[from.min(sig.len())..]
            .iter()
            .map(|t| t.token.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut p = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(&text(n))
        .map_err(|e| super::syntax_error(sql, &e))?;
    let name = p
        .parse_object_name(false)
        .map_err(|e| super::syntax_error(sql, &e))?;
    n += 2 * name.0.len() - 1;
    if kw(n, Keyword::RENAME) {
        if !kw(n + 1, Keyword::TO) {
            return Err(syntax(sig.get(n + 1)));
        }
        let Some(Token::Word(w)) = sig.get(n + 2).map(|t| &t.token) else {
            return Err(syntax(sig.get(n + 2)));
        };
        if sig.len() > n + 3 {
            return Err(syntax(sig.get(n + 3)));
        }
        return Ok(AlterSequence {
            if_exists,
            name,
            action: AlterSequenceAction::Rename(w.to_ident(sig[n + 2].span)),
        });
    }
    // RESTART [[WITH] n] and OWNED BY come out; the rest are CREATE
    // SEQUENCE's options.
    let mut rest: Vec<&TokenWithSpan> = Vec::new();
    let (mut restart, mut owned_by) = (None, None);
    let mut i = n;
    while i < sig.len() {
        if is_word(&sig[i].token, Keyword::RESTART) {
            if restart.is_some() {
                return Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    "conflicting or redundant options",
                ));
            }
            i += 1;
            if kw(i, Keyword::WITH) {
                i += 1;
            }
            let negative = sig.get(i).is_some_and(|t| t.token == Token::Minus);
            let at = if negative { i + 1 } else { i };
            match sig.get(at).map(|t| &t.token) {
                Some(Token::Number(v, _)) => {
                    let v: i64 = v.parse().map_err(|_| syntax(sig.get(at)))?;
                    restart = Some(Some(if negative { -v } else { v }));
                    i = at + 1;
                }
                _ => restart = Some(None),
            }
            continue;
        }
        if is_word(&sig[i].token, Keyword::OWNED) && kw(i + 1, Keyword::BY) {
            let mut p = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
                .try_with_sql(&text(i + 2))
                .map_err(|e| super::syntax_error(sql, &e))?;
            let owner = p
                .parse_object_name(false)
                .map_err(|e| super::syntax_error(sql, &e))?;
            i += 2 + 2 * owner.0.len() - 1;
            owned_by = Some(owner);
            continue;
        }
        rest.push(sig[i]);
        i += 1;
    }
    let create = format!(
        "CREATE SEQUENCE alter_target {}",
        rest.iter()
            .map(|t| t.token.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut tokens =
        sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::PostgreSqlDialect {}, &create)
            .tokenize_with_location()
            .map_err(|e| SqlError::coded(sqlstate::SYNTAX_ERROR, e.to_string()))?;
    reorder(&mut tokens)?;
    let statement = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .with_tokens_with_locations(tokens)
        .parse_statement()
        .map_err(|e| super::syntax_error(&create, &e))?;
    let A::Statement::CreateSequence {
        data_type,
        sequence_options,
        owned_by: None,
        ..
    } = statement
    else {
        return Err(syntax(rest.first()));
    };
    Ok(AlterSequence {
        if_exists,
        name,
        action: AlterSequenceAction::Options {
            data_type,
            options: sequence_options,
            restart,
            owned_by,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn reordered(sql: &str) -> Result<String, SqlError> {
        let mut tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        reorder(&mut tokens)?;
        let text: String = tokens.iter().map(|t| t.token.to_string()).collect();
        Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn options_take_sqlparsers_order() {
        assert_eq!(
            reordered("CREATE SEQUENCE public.s START WITH 1 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1").unwrap(),
            "CREATE SEQUENCE public.s INCREMENT BY 1 NO MINVALUE NO MAXVALUE START WITH 1 CACHE 1"
        );
        assert_eq!(
            reordered("create sequence s owned by t.a cycle as integer increment -2").unwrap(),
            "create sequence s as integer increment -2 cycle owned by t.a"
        );
        assert_eq!(
            reordered("create table t (id int generated always as identity (start 10 increment 5 no cycle), v int)").unwrap(),
            "create table t (id int generated always as identity ( increment 5 start 10 no cycle ), v int)"
        );
        assert_eq!(reordered("create sequence s").unwrap(), "create sequence s");
    }

    #[test]
    fn repeated_options_conflict_and_strangers_are_left_alone() {
        assert_eq!(
            reordered("create sequence s start 1 start 2")
                .unwrap_err()
                .to_string(),
            "conflicting or redundant options"
        );
        assert!(reordered("create sequence s no maxvalue maxvalue 3").is_err());
        assert_eq!(
            reordered("create sequence s start 1 bogus 2").unwrap(),
            "create sequence s start 1 bogus 2"
        );
    }
}
