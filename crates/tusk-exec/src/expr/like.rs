//! LIKE patterns: compiled once, matched over UTF-8 bytes.
//!
//! `%` matches any run of characters, `_` exactly one character, `\` makes
//! the next character literal. ILIKE folds ASCII letters only, as
//! PostgreSQL does under the C collation (`'ñ' ILIKE 'Ñ'` is false).
//!
//! ## Two matchers
//!
//! A pattern made of literals and `%` only — `abc`, `abc%`, `%abc`,
//! `%special%requests%` — is a sequence of literal pieces, and the text
//! matches when the first piece starts it, the last piece ends it, and the
//! pieces between are found in order, without overlapping, in what lies
//! between. Taking each middle piece at its leftmost occurrence after the
//! previous one is never wrong: a later occurrence leaves less text for the
//! rest. So matching is one prefix test, one suffix test and a substring
//! search per middle piece ([`memchr::memmem`], no backtracking). Byte
//! search is character search here: a valid UTF-8 piece occurs in valid
//! UTF-8 text only at character boundaries.
//!
//! Every other pattern (one with `_`, or ending in a lone `\`) goes
//! through the general matcher: greedy, backtracking to the last `%`. A
//! pattern ending in `\` raises PostgreSQL's error only when matching
//! reaches it with text left (`'a' LIKE 'a\'` is false, `'ab' LIKE 'a\'` an
//! error), so the general matcher keeps it as a token.
//!
//! Neither matcher allocates per row; ILIKE folds the text into a buffer
//! the caller keeps across rows.

use crate::error::{sqlstate, ExecError, Result};
use memchr::memmem::Finder;

/// A compiled LIKE pattern.
#[derive(Debug, Clone)]
pub struct LikePattern {
    tokens: Vec<LikeToken>,
    case_insensitive: bool,
    /// The pattern as literal pieces, when it has only literals and `%`.
    pieces: Option<Pieces>,
}

#[derive(Debug, Clone, PartialEq)]
enum LikeToken {
    /// `%`.
    Any,
    /// `_`.
    One,
    /// A literal byte (ASCII-lowercased for ILIKE).
    Lit(u8),
    /// A `\` ending the pattern: an error if matching reaches it with text
    /// left, as in PostgreSQL (where `'a' LIKE 'a\'` is simply false).
    TrailingEscape,
}

/// A pattern of literals and `%`: `head % middle₁ % ... % tail`.
#[derive(Debug, Clone)]
struct Pieces {
    /// The literal before the first `%`: the text starts with it.
    head: Vec<u8>,
    /// The literals between `%`s (never empty), found left to right.
    middle: Vec<Finder<'static>>,
    /// The literal after the last `%`: the text ends with it. `None` when
    /// the pattern has no `%`: the text is `head` exactly.
    tail: Option<Vec<u8>>,
}

impl Pieces {
    /// The pieces of `tokens`, if they are literals and `%` only.
    fn of(tokens: &[LikeToken]) -> Option<Pieces> {
        let mut literals: Vec<Vec<u8>> = vec![Vec::new()];
        for t in tokens {
            match t {
                LikeToken::Lit(b) => literals.last_mut().expect("one at least").push(*b),
                LikeToken::Any => literals.push(Vec::new()),
                LikeToken::One | LikeToken::TrailingEscape => return None,
            }
        }
        let head = literals.remove(0);
        let tail = literals.pop();
        // Runs of `%` are one token, so a middle literal is never empty.
        let middle = literals
            .iter()
            .map(|l| Finder::new(l).into_owned())
            .collect();
        Some(Pieces { head, middle, tail })
    }

    fn matches(&self, text: &[u8]) -> bool {
        let Some(tail) = &self.tail else {
            return text == self.head.as_slice();
        };
        // (Empty pieces are skipped: a slice comparison calls `memcmp`
        // even for no bytes, which cost more than the search itself.)
        if text.len() < self.head.len() + tail.len()
            || (!self.head.is_empty() && !text.starts_with(&self.head))
            || (!tail.is_empty() && !text.ends_with(tail))
        {
            return false;
        }
        let mut rest = &text[self.head.len()..text.len() - tail.len()];
        for piece in &self.middle {
            match piece.find(rest) {
                Some(at) => rest = &rest[at + piece.needle().len()..],
                None => return false,
            }
        }
        true
    }
}

/// Byte length of the UTF-8 character starting with `b`.
#[inline]
pub(crate) fn utf8_len(b: u8) -> usize {
    match b {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

impl LikePattern {
    pub fn compile(p: &str, case_insensitive: bool) -> Result<LikePattern> {
        let fold = |b: u8| {
            if case_insensitive {
                b.to_ascii_lowercase()
            } else {
                b
            }
        };
        let mut tokens = Vec::new();
        let mut chars = p.chars();
        let mut buf = [0u8; 4];
        while let Some(c) = chars.next() {
            let lit = match c {
                '%' => {
                    // Runs of `%` are one `%`.
                    if tokens.last() != Some(&LikeToken::Any) {
                        tokens.push(LikeToken::Any);
                    }
                    continue;
                }
                '_' => {
                    tokens.push(LikeToken::One);
                    continue;
                }
                '\\' => match chars.next() {
                    Some(e) => e,
                    None => {
                        tokens.push(LikeToken::TrailingEscape);
                        continue;
                    }
                },
                c => c,
            };
            for &b in lit.encode_utf8(&mut buf).as_bytes() {
                tokens.push(LikeToken::Lit(fold(b)));
            }
        }
        let pieces = Pieces::of(&tokens);
        Ok(LikePattern {
            tokens,
            case_insensitive,
            pieces,
        })
    }

    /// Whether `s` matches.
    pub fn matches(&self, s: &str) -> Result<bool> {
        self.matches_bytes(s.as_bytes(), &mut Vec::new())
    }

    /// Whether `text` (valid UTF-8) matches; ILIKE folds it into `folded`,
    /// which the caller keeps from row to row.
    pub fn matches_bytes(&self, text: &[u8], folded: &mut Vec<u8>) -> Result<bool> {
        let text = if self.case_insensitive {
            folded.clear();
            folded.extend(text.iter().map(u8::to_ascii_lowercase));
            folded.as_slice()
        } else {
            text
        };
        match &self.pieces {
            Some(p) => Ok(p.matches(text)),
            None => self.matches_general(text),
        }
    }

    /// The general matcher over `text` (already folded for ILIKE): greedy,
    /// backtracking to the last `%` (linear for the usual patterns).
    /// Positions in `text` stay on character boundaries.
    fn matches_general(&self, text: &[u8]) -> Result<bool> {
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.tokens.get(p) {
                Some(LikeToken::Any) => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(LikeToken::One) => {
                    t += utf8_len(text[t]);
                    p += 1;
                }
                Some(LikeToken::Lit(c)) if *c == text[t] => {
                    t += 1;
                    p += 1;
                }
                Some(LikeToken::TrailingEscape) => {
                    return Err(ExecError::coded(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "LIKE pattern must not end with escape character",
                    ))
                }
                _ => match star {
                    Some((sp, st)) => {
                        let next = st + utf8_len(text[st]);
                        p = sp + 1;
                        t = next;
                        star = Some((sp, next));
                    }
                    None => return Ok(false),
                },
            }
        }
        Ok(self.tokens[p..].iter().all(|t| *t == LikeToken::Any))
    }

    /// Whether matching can raise an error (the pattern ends in a lone
    /// `\`); otherwise it is a pure function of the text.
    pub fn can_raise(&self) -> bool {
        self.tokens.last() == Some(&LikeToken::TrailingEscape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The general matcher's answer, whatever the pattern's shape.
    fn general(p: &LikePattern, s: &str) -> Result<bool> {
        if p.case_insensitive {
            p.matches_general(s.to_ascii_lowercase().as_bytes())
        } else {
            p.matches_general(s.as_bytes())
        }
    }

    #[test]
    fn pieces_anchor_and_search() {
        let m = |p: &str, s: &str| {
            let c = LikePattern::compile(p, false).unwrap();
            assert!(c.pieces.is_some(), "{p}");
            c.matches(s).unwrap()
        };
        assert!(m("%special%requests%", "a special, quiet requests x"));
        assert!(!m("%special%requests%", "requests special"));
        assert!(!m("%special%requests%", "specialrequest"));
        assert!(m("%special%requests%", "specialrequests"));
        // Head and tail may not overlap.
        assert!(!m("ab%ba", "aba"));
        assert!(m("ab%ba", "abba"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("%", ""));
        assert!(m("abc", "abc"));
        assert!(!m("abc", "abcd"));
        assert!(m("a\\%b%", "a%bc"));
        assert!(m("%é%", "caféine"));
        assert!(LikePattern::compile("a_b", false).unwrap().pieces.is_none());
        assert!(LikePattern::compile("a\\", false).unwrap().pieces.is_none());
    }

    proptest! {
        /// Both matchers agree on every pattern of literals and `%`,
        /// LIKE and ILIKE, over ASCII and multibyte text.
        #[test]
        fn pieces_agree_with_general(
            p in "[abAé%\\\\]{0,8}",
            s in "[abAé%]{0,12}",
            ci in any::<bool>(),
        ) {
            let c = LikePattern::compile(&p, ci).unwrap();
            if c.pieces.is_some() {
                prop_assert_eq!(c.matches(&s).unwrap(), general(&c, &s).unwrap());
            }
        }
    }
}
