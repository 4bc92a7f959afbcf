//! The hint for a column reference that names no column: PostgreSQL's
//! `errorMissingColumn` and its fuzzy search of the range tables
//! (`searchRangeTableForCol`, `updateFuzzyAttrMatchState`).
//!
//! Every relation of every query level, innermost first, is searched;
//! the merged columns of a `JOIN ... USING` are not (PostgreSQL skips join
//! range table entries, whose columns repeat their sides'). A column's
//! distance is the Levenshtein distance of its name from the one written,
//! plus, when the reference is qualified, the distance of the relation's
//! name from the qualifier. Names more than half the written name's bytes
//! away are never suggested, nor any over [`MAX_FUZZY_DISTANCE`]. One
//! closest column gives "Perhaps you meant to reference the column
//! "t.abc".", two equally close ones name both, three or more none. A
//! column of exactly the written name, in a relation of exactly the
//! written qualifier, that the reference cannot see (a JOIN's ON condition
//! sees only the join's sides) is named as such instead.

use super::QueryScope;

/// PostgreSQL's `MAX_FUZZY_DISTANCE`.
const MAX_FUZZY_DISTANCE: usize = 3;

/// PostgreSQL's `FuzzyAttrMatchState`: the best distance so far and the
/// (at most two) columns at it, as (relation name, column name).
struct Search<'a> {
    distance: usize,
    first_rel: Option<&'a str>,
    first: Option<&'a str>,
    second: Option<(&'a str, &'a str)>,
}

impl<'a> Search<'a> {
    /// `updateFuzzyAttrMatchState` for column `actual` of relation `rel`.
    fn consider(&mut self, rel_penalty: usize, rel: &'a str, actual: &'a str, written: &str) {
        if rel_penalty > self.distance || actual.is_empty() {
            return;
        }
        let column = levenshtein(actual, written);
        if column > written.len() / 2 {
            return;
        }
        let distance = column + rel_penalty;
        if distance < self.distance {
            self.distance = distance;
            self.first_rel = Some(rel);
            self.first = Some(actual);
            self.second = None;
        } else if distance == self.distance {
            if self.second.is_some() {
                // Three at the same distance: none is worth suggesting,
                // and neither is anything as far away.
                self.first_rel = None;
                self.first = None;
                self.second = None;
                self.distance = distance.saturating_sub(1);
            } else if self.first.is_some() {
                self.second = Some((rel, actual));
            } else if self.distance <= MAX_FUZZY_DISTANCE {
                self.first_rel = Some(rel);
                self.first = Some(actual);
            }
        }
    }
}

/// The HINT for a reference to column `name` (qualified by `qualifier`)
/// that resolved to nothing, searching `levels` innermost first.
pub(crate) fn missing_column_hint<'a>(
    levels: impl Iterator<Item = &'a QueryScope>,
    qualifier: Option<&str>,
    name: &str,
) -> Option<String> {
    let mut search = Search {
        distance: MAX_FUZZY_DISTANCE + 1,
        first_rel: None,
        first: None,
        second: None,
    };
    for scope in levels {
        for rel in &scope.rels {
            let Some(alias) = rel.alias.as_deref() else {
                continue;
            };
            let penalty = qualifier.map_or(0, |q| levenshtein(q, alias));
            let mut exact = false;
            for c in &rel.cols {
                exact |= c.name == name;
                search.consider(penalty, alias, &c.name, name);
            }
            if exact && penalty == 0 {
                return Some(format!(
                    "There is a column named \"{name}\" in table \"{alias}\", but it cannot be referenced from this part of the query."
                ));
            }
        }
    }
    match (search.first_rel, search.first, search.second) {
        (Some(r1), Some(c1), Some((r2, c2))) => Some(format!(
            "Perhaps you meant to reference the column \"{r1}.{c1}\" or the column \"{r2}.{c2}\"."
        )),
        (Some(r1), Some(c1), None) => Some(format!(
            "Perhaps you meant to reference the column \"{r1}.{c1}\"."
        )),
        _ => None,
    }
}

/// The Levenshtein distance between `a` and `b` in characters, each
/// insertion, deletion and substitution costing 1 (PostgreSQL's
/// `varstr_levenshtein` with unit costs).
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::{ScopeCol, ScopeRel};

    fn scope(rels: &[(&str, &[&str])]) -> QueryScope {
        let mut s = QueryScope::default();
        for (alias, cols) in rels {
            s.rels.push(ScopeRel {
                alias: Some(alias.to_string()),
                cols: cols
                    .iter()
                    .map(|c| ScopeCol {
                        name: c.to_string(),
                        id: 0,
                        hidden: false,
                    })
                    .collect(),
            });
        }
        s
    }

    #[test]
    fn distances() {
        assert_eq!(levenshtein("abc", "abd"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("ñx", "nx"), 1);
    }

    #[test]
    fn suggestions() {
        let one = scope(&[("t", &["abc", "xyz"])]);
        assert_eq!(
            missing_column_hint([&one].into_iter(), None, "abd").as_deref(),
            Some("Perhaps you meant to reference the column \"t.abc\".")
        );
        // Too far: more than half the written name.
        assert_eq!(missing_column_hint([&one].into_iter(), None, "q"), None);
        let two = scope(&[("a", &["abc"]), ("b", &["abc"])]);
        assert_eq!(
            missing_column_hint([&two].into_iter(), None, "abd").as_deref(),
            Some("Perhaps you meant to reference the column \"a.abc\" or the column \"b.abc\".")
        );
        // The qualifier's distance counts: a.abc is closer than b.abc.
        assert_eq!(
            missing_column_hint([&two].into_iter(), Some("a"), "abd").as_deref(),
            Some("Perhaps you meant to reference the column \"a.abc\".")
        );
        let three = scope(&[("a", &["abc"]), ("b", &["abc"]), ("c", &["abc"])]);
        assert_eq!(missing_column_hint([&three].into_iter(), None, "abd"), None);
    }
}
