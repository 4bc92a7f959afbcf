//! `BETWEEN SYMMETRIC` and `BETWEEN ASYMMETRIC`, which sqlparser does not
//! know.
//!
//! PostgreSQL reads `a [NOT] BETWEEN [ASYMMETRIC | SYMMETRIC] b AND c`,
//! where the low bound `b` is a `b_expr`: no `AND`, `OR`, `NOT` or `IS` at
//! its top level, so the first `AND` outside parentheses, brackets and
//! `CASE ... END` ends it. Before sqlparser reads the tokens,
//! [`mark_symmetric`] drops an `ASYMMETRIC` (the default) and puts the low
//! bound after `SYMMETRIC` in parentheses, which sqlparser then reads as a
//! call `SYMMETRIC(b)`. The binder takes a BETWEEN whose low bound is a
//! call of the unquoted name `symmetric` ([`symmetric_low`]) for the key
//! word: PostgreSQL reserves it, so `BETWEEN symmetric(b)` is never a
//! function call there either, but `BETWEEN SYMMETRIC (b)`.

use sqlparser::ast as A;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

fn is_word(t: &Token, k: Keyword) -> bool {
    matches!(t, Token::Word(w) if w.keyword == k && w.quote_style.is_none())
}

/// The index of the next token after `i` that is not whitespace.
fn next_token(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

/// The index of the token that ends a low bound starting at `from`: the
/// `AND` after it, or where a statement or an enclosing parenthesis ends
/// without one (which sqlparser then reports as PostgreSQL does, at that
/// token).
fn low_bound_end(tokens: &[TokenWithSpan], from: usize) -> usize {
    let (mut depth, mut cases) = (0usize, 0usize);
    for (k, t) in tokens.iter().enumerate().skip(from) {
        match &t.token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket if depth == 0 => return k,
            Token::RParen | Token::RBracket => depth -= 1,
            Token::SemiColon | Token::EOF => return k,
            w if is_word(w, Keyword::CASE) => cases += 1,
            w if is_word(w, Keyword::END) => cases = cases.saturating_sub(1),
            w if is_word(w, Keyword::AND) && depth == 0 && cases == 0 => return k,
            _ => {}
        }
    }
    tokens.len()
}

/// Rewrites the tokens of `BETWEEN [A]SYMMETRIC` as the module doc says.
pub(super) fn mark_symmetric(tokens: &mut Vec<TokenWithSpan>) {
    let mut i = 0;
    while i < tokens.len() {
        if !is_word(&tokens[i].token, Keyword::BETWEEN) {
            i += 1;
            continue;
        }
        let Some(j) = next_token(tokens, i) else {
            return;
        };
        if is_word(&tokens[j].token, Keyword::ASYMMETRIC) {
            tokens.remove(j);
        } else if is_word(&tokens[j].token, Keyword::SYMMETRIC) {
            let end = low_bound_end(tokens, j + 1);
            let span = tokens.get(end).map_or(tokens[j].span, |t| t.span);
            tokens.insert(end, TokenWithSpan::new(Token::RParen, span));
            let open = TokenWithSpan::new(Token::LParen, tokens[j].span);
            tokens.insert(j + 1, open);
        }
        i = j;
    }
}

/// The low bound `b` of `BETWEEN SYMMETRIC b AND c`, when `low` is the
/// call [`mark_symmetric`] made of it.
pub(crate) fn symmetric_low(low: &A::Expr) -> Option<&A::Expr> {
    let A::Expr::Function(f) = low else {
        return None;
    };
    let [A::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return None;
    };
    if name.quote_style.is_some() || !name.value.eq_ignore_ascii_case("symmetric") {
        return None;
    }
    if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
        return None;
    }
    let A::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    match (
        list.duplicate_treatment,
        list.clauses.as_slice(),
        list.args.as_slice(),
    ) {
        (None, [], [A::FunctionArg::Unnamed(A::FunctionArgExpr::Expr(e))]) => Some(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    /// The tokens after the rewrite, without whitespace.
    fn rewritten(sql: &str) -> String {
        let mut tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .unwrap();
        mark_symmetric(&mut tokens);
        tokens
            .iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|t| t.token.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_low_bound_is_wrapped_and_asymmetric_dropped() {
        assert_eq!(
            rewritten("x between symmetric a + 1 and b"),
            "x between symmetric ( a + 1 ) and b"
        );
        assert_eq!(
            rewritten("x not between symmetric case when p and q then 1 end and (y and z)"),
            "x not between symmetric ( case when p and q then 1 end ) and ( y and z )"
        );
        assert_eq!(
            rewritten("x between asymmetric 1 and 2"),
            "x between 1 and 2"
        );
        assert_eq!(
            rewritten("x between \"symmetric\" and 2"),
            "x between \"symmetric\" and 2"
        );
    }
}
