//! `FETCH` and `MOVE`, read with PostgreSQL's grammar (sqlparser knows
//! only some of their forms, and not MOVE):
//!
//! ```text
//! FETCH | MOVE [ direction ] [ FROM | IN ] cursor_name
//! direction: NEXT | PRIOR | FIRST | LAST | ABSOLUTE n | RELATIVE n | n | ALL
//!          | FORWARD [ n | ALL ] | BACKWARD [ n | ALL ]
//! ```
//!
//! `n` is a signed integer. The directions become forward, backward,
//! absolute and relative moves as PostgreSQL's `FetchStmt` has them:
//! `NEXT` is `FORWARD 1`, `PRIOR` `BACKWARD 1`, `FIRST` `ABSOLUTE 1`, `LAST`
//! `ABSOLUTE -1`, a bare negative count a backward one.

use crate::error::{sqlstate, SqlError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// Where a FETCH or MOVE goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The next `n` rows (`None`: all of them).
    Forward(Option<u64>),
    /// The previous `n` rows (`None`: all of them).
    Backward(Option<u64>),
    /// The row at position `n` (negative: from the end).
    Absolute(i64),
    /// The row `n` after the current one (0: the current one again).
    Relative(i64),
}

/// A FETCH or MOVE statement.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchStatement {
    pub direction: Direction,
    pub cursor: String,
    /// MOVE: position the cursor, return no rows.
    pub is_move: bool,
}

impl FetchStatement {
    /// The command tag's word.
    pub fn verb(&self) -> &'static str {
        if self.is_move {
            "MOVE"
        } else {
            "FETCH"
        }
    }
}

/// The statement in `tokens` (one statement, no semicolon) if it is a
/// FETCH or MOVE; `None` for any other statement.
pub(crate) fn parse(tokens: &[TokenWithSpan]) -> Option<Result<FetchStatement, SqlError>> {
    let mut words = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .peekable();
    let is_move = match words.peek().map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => {
            match w.value.to_ascii_lowercase().as_str() {
                "fetch" => false,
                "move" => true,
                _ => return None,
            }
        }
        _ => return None,
    };
    words.next();
    let rest: Vec<&Token> = words.map(|t| &t.token).collect();
    Some(parse_rest(&rest, is_move))
}

fn syntax_error(at: Option<&Token>) -> SqlError {
    match at {
        Some(t) => SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("syntax error at or near \"{t}\""),
        ),
        None => SqlError::coded(sqlstate::SYNTAX_ERROR, "syntax error at end of input"),
    }
}

/// An unquoted keyword, lower case.
fn keyword(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    }
}

fn parse_rest(t: &[&Token], is_move: bool) -> Result<FetchStatement, SqlError> {
    let mut i = 0;
    // A signed integer at `t[i..]`: its value and the tokens it took.
    let count = |i: usize| -> Option<(i64, usize)> {
        match (t.get(i), t.get(i + 1)) {
            (Some(Token::Number(n, _)), _) => n.parse().ok().map(|v| (v, 1)),
            (Some(Token::Minus), Some(Token::Number(n, _))) => {
                n.parse::<i64>().ok().map(|v| (-v, 2))
            }
            (Some(Token::Plus), Some(Token::Number(n, _))) => n.parse().ok().map(|v| (v, 2)),
            _ => None,
        }
    };
    let signed = |v: i64| {
        if v < 0 {
            Direction::Backward(Some(v.unsigned_abs()))
        } else {
            Direction::Forward(Some(v as u64))
        }
    };
    let mut direction = Direction::Forward(Some(1));
    if let Some((v, used)) = count(i) {
        direction = signed(v);
        i += used;
    } else if let Some(k) = t.get(i).and_then(|x| keyword(x)) {
        let next_is_name = |j: usize| {
            // `FETCH next` names a cursor called next only when nothing
            // follows; `FETCH NEXT FROM c` / `FETCH NEXT c` is a direction.
            t.get(j).is_some()
        };
        match k.as_str() {
            "next" if next_is_name(i + 1) => i += 1,
            "prior" if next_is_name(i + 1) => {
                direction = Direction::Backward(Some(1));
                i += 1;
            }
            "first" if next_is_name(i + 1) => {
                direction = Direction::Absolute(1);
                i += 1;
            }
            "last" if next_is_name(i + 1) => {
                direction = Direction::Absolute(-1);
                i += 1;
            }
            "all" if next_is_name(i + 1) => {
                direction = Direction::Forward(None);
                i += 1;
            }
            "absolute" | "relative" => {
                let (v, used) = count(i + 1).ok_or_else(|| syntax_error(t.get(i + 1).copied()))?;
                direction = if k == "absolute" {
                    Direction::Absolute(v)
                } else {
                    Direction::Relative(v)
                };
                i += 1 + used;
            }
            "forward" | "backward" if next_is_name(i + 1) => {
                let backward = k == "backward";
                i += 1;
                let n = if let Some((v, used)) = count(i) {
                    i += used;
                    Some(v)
                } else if t.get(i).and_then(|x| keyword(x)).as_deref() == Some("all")
                    && t.get(i + 1).is_some()
                {
                    i += 1;
                    None
                } else {
                    Some(1)
                };
                direction = match (backward, n) {
                    (false, None) => Direction::Forward(None),
                    (true, None) => Direction::Backward(None),
                    (false, Some(v)) => signed(v),
                    (true, Some(v)) => signed(-v),
                };
            }
            _ => {}
        }
    }
    if t.get(i)
        .and_then(|x| keyword(x))
        .is_some_and(|k| k == "from" || k == "in")
    {
        i += 1;
    }
    let cursor = match t.get(i) {
        Some(Token::Word(w)) => crate::names::ident(&sqlparser::ast::Ident {
            value: w.value.clone(),
            quote_style: w.quote_style,
            span: sqlparser::tokenizer::Span::empty(),
        })?,
        other => return Err(syntax_error(other.copied())),
    };
    if let Some(extra) = t.get(i + 1) {
        return Err(syntax_error(Some(extra)));
    }
    Ok(FetchStatement {
        direction,
        cursor,
        is_move,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetch(sql: &str) -> Result<FetchStatement, SqlError> {
        let tokens = crate::parse::lex(sql).unwrap();
        parse(&tokens).expect("a FETCH or MOVE")
    }

    #[test]
    fn directions() {
        let d = |sql: &str| fetch(sql).unwrap().direction;
        assert_eq!(d("FETCH 100 FROM c1"), Direction::Forward(Some(100)));
        assert_eq!(d("fetch c1"), Direction::Forward(Some(1)));
        assert_eq!(d("FETCH NEXT FROM c1"), Direction::Forward(Some(1)));
        assert_eq!(d("FETCH ALL c1"), Direction::Forward(None));
        assert_eq!(d("FETCH FORWARD 5 IN c1"), Direction::Forward(Some(5)));
        assert_eq!(d("FETCH FORWARD ALL FROM c1"), Direction::Forward(None));
        assert_eq!(d("FETCH FORWARD c1"), Direction::Forward(Some(1)));
        assert_eq!(d("FETCH BACKWARD 2 FROM c1"), Direction::Backward(Some(2)));
        assert_eq!(d("FETCH -1 FROM c1"), Direction::Backward(Some(1)));
        assert_eq!(d("FETCH PRIOR c1"), Direction::Backward(Some(1)));
        assert_eq!(d("FETCH ABSOLUTE -3 c1"), Direction::Absolute(-3));
        assert_eq!(d("FETCH RELATIVE 0 c1"), Direction::Relative(0));
        assert_eq!(d("FETCH LAST c1"), Direction::Absolute(-1));
        assert_eq!(d("FETCH next"), Direction::Forward(Some(1)));
        let m = fetch("MOVE 5 IN \"Cur\"").unwrap();
        assert!(m.is_move);
        assert_eq!(m.cursor, "Cur");
        assert!(fetch("FETCH 1 FROM").is_err());
        assert!(fetch("FETCH 1 FROM c extra").is_err());
        assert!(parse(&crate::parse::lex("SELECT 1").unwrap()).is_none());
    }
}
