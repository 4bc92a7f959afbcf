//! Keeping a view's stored text true to what it meant when it was made.
//!
//! A view is stored as the text of its query (see `commands::view`) and
//! bound again wherever it is used, so the text must keep naming what it
//! named at CREATE VIEW, as PostgreSQL's stored query tree does:
//!
//! * **`*` is expanded once.** At CREATE VIEW every `*` and `t.*` of the
//!   query becomes the list of columns it stood for then, so a column added
//!   to the table later does not appear in the view (and does not change
//!   its shape).
//! * **Renames follow.** Before a table, view or column is renamed, every
//!   view whose text names it is rewritten: a relation name becomes the new
//!   name, kept as the old one's alias where it had none (its columns may
//!   be qualified by it); a column name becomes the new name, with the old
//!   one as the alias of an output column named after it.
//! * **Dependencies are known.** A view depends on each relation its text
//!   names; DROP refuses to drop a relation that views depend on
//!   (2BP01), or drops them too with CASCADE.
//!
//! All three read the positions the binder notes while binding the view's
//! text against the catalog as it is before the change
//! (`bind::references`); a rewrite replaces exactly those spans, so the
//! rest of the text, comments and spelling included, stays as written.
//!
//! Not followed: a column named in `JOIN ... USING (c)` or matched by a
//! NATURAL join. The name there stands for a column of each side, so
//! renaming one side's column cannot be written in place; PostgreSQL's
//! deparser gives the relation a column alias list instead. Such a view
//! fails when used after the rename.

use sqlparser::ast as A;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Span};
use tusk_storage::{Catalog, TableDef};

use crate::bind::{BindSettings, Binder, References};
use crate::error::{sqlstate, SqlError};
use crate::names::quote_ident;
use crate::session::Result;

/// What is being renamed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rename<'a> {
    /// Relation `oid` (a table or view) gets the name `to`.
    Relation {
        oid: u32,
        from: &'a str,
        to: &'a str,
    },
    /// Column `from` of relation `oid` becomes `to`.
    Column {
        oid: u32,
        from: &'a str,
        to: &'a str,
    },
}

/// Binds a view's query text against `catalog`, noting where it refers to
/// relations and columns.
fn references_of(catalog: &Catalog, sql: &str) -> Result<References> {
    let stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql)
        .map_err(|e| crate::parse::syntax_error(sql, &e))?;
    let Some(A::Statement::Query(q)) = stmts.into_iter().next() else {
        return Err(SqlError::coded(
            sqlstate::DATA_CORRUPTED,
            "a view's definition is not a query",
        ));
    };
    let mut binder = Binder::new(catalog, &BindSettings::default());
    binder.note_references();
    binder.bind_query(&q)?;
    Ok(binder.take_references().unwrap_or_default())
}

/// The text to store for a new view whose query is `sql`: every `*`
/// replaced by the columns it expands to now.
pub(crate) fn expand_stars(catalog: &Catalog, sql: &str) -> Result<String> {
    let refs = references_of(catalog, sql)?;
    let patches = refs
        .stars
        .iter()
        .map(|s| (s.span, s.expansion.clone()))
        .collect();
    patch(sql, patches)
}

/// The text of view `sql` after `rename`, or `None` if it does not name
/// what is renamed. `catalog` is the catalog before the rename.
pub(crate) fn renamed(catalog: &Catalog, sql: &str, rename: Rename<'_>) -> Result<Option<String>> {
    let refs = references_of(catalog, sql)?;
    let mut patches = Vec::new();
    match rename {
        Rename::Relation { oid, from, to } => {
            for r in refs.relations.iter().filter(|r| r.oid == oid) {
                let text = if r.aliased {
                    quote_ident(to)
                } else {
                    format!("{} AS {}", quote_ident(to), quote_ident(from))
                };
                patches.push((r.span, text));
            }
        }
        Rename::Column { oid, from, to } => {
            for c in refs
                .columns
                .iter()
                .filter(|c| c.oid == oid && c.column == from)
            {
                let text = match &c.output_name {
                    Some(out) => format!("{} AS {}", quote_ident(to), quote_ident(out)),
                    None => quote_ident(to),
                };
                patches.push((c.span, text));
            }
        }
    }
    if patches.is_empty() {
        return Ok(None);
    }
    patch(sql, patches).map(Some)
}

/// The views that depend on relation `oid`, directly or through other
/// views, each with the relation it depends on directly: depth first, in
/// the order the views were made, as PostgreSQL lists them.
pub(crate) fn dependent_views(catalog: &Catalog, oid: u32) -> Vec<(TableDef, u32)> {
    let mut views: Vec<(TableDef, Vec<u32>)> = catalog
        .tables()
        .filter(|t| t.is_view())
        .map(|v| {
            // A view whose text no longer binds names nothing we can see.
            let named = v
                .view
                .as_deref()
                .and_then(|sql| references_of(catalog, sql).ok())
                .map(|r| r.relations.iter().map(|r| r.oid).collect())
                .unwrap_or_default();
            (v.clone(), named)
        })
        .collect();
    views.sort_by_key(|(v, _)| v.oid);
    let mut found: Vec<(TableDef, u32)> = Vec::new();
    fn visit(views: &[(TableDef, Vec<u32>)], target: u32, found: &mut Vec<(TableDef, u32)>) {
        for (view, named) in views {
            if named.contains(&target) && !found.iter().any(|(f, _)| f.oid == view.oid) {
                found.push((view.clone(), target));
                visit(views, view.oid, found);
            }
        }
    }
    visit(&views, oid, &mut found);
    found
}

/// Every view's text rewritten for `rename` (only those that change).
pub(crate) fn views_after_rename(catalog: &Catalog, rename: Rename<'_>) -> Result<Vec<TableDef>> {
    let mut changed = Vec::new();
    for v in catalog.tables().filter(|t| t.is_view()) {
        let Some(sql) = v.view.as_deref() else {
            continue;
        };
        // A view that no longer binds is left as it is: it fails when used.
        if let Ok(Some(text)) = renamed(catalog, sql, rename) {
            let mut def = v.clone();
            def.view = Some(text);
            changed.push(def);
        }
    }
    Ok(changed)
}

/// Byte offset in `text` of a 1-based line and character column.
fn offset(text: &str, at: Location) -> Option<usize> {
    let mut line_start = 0;
    for _ in 1..at.line {
        line_start += text[line_start..].find('\n')? + 1;
    }
    let line = &text[line_start..];
    let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
    match line.char_indices().nth(column) {
        Some((i, _)) => Some(line_start + i),
        None if line.chars().count() == column => Some(line_start + line.len()),
        None => None,
    }
}

/// `text` with each span replaced (spans are end-exclusive, as sqlparser's
/// token spans are); overlapping or repeated spans keep the first.
fn patch(text: &str, mut patches: Vec<(Span, String)>) -> Result<String> {
    let corrupt = || {
        SqlError::coded(
            sqlstate::INTERNAL_ERROR,
            "could not locate a reference in a view's definition",
        )
    };
    let mut ranges = Vec::with_capacity(patches.len());
    for (span, replacement) in patches.drain(..) {
        let start = offset(text, span.start).ok_or_else(corrupt)?;
        let end = offset(text, span.end).ok_or_else(corrupt)?;
        if end < start {
            return Err(corrupt());
        }
        ranges.push((start, end, replacement));
    }
    ranges.sort_by_key(|r| r.0);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, replacement) in ranges {
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(&replacement);
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(line: u64, column: u64) -> Location {
        Location { line, column }
    }

    #[test]
    fn offsets_count_characters_per_line() {
        let text = "ab\ncdé f";
        assert_eq!(offset(text, loc(1, 1)), Some(0));
        assert_eq!(offset(text, loc(2, 1)), Some(3));
        assert_eq!(offset(text, loc(2, 4)), Some(7));
        assert_eq!(offset(text, loc(2, 6)), Some(text.len()));
        assert_eq!(offset(text, loc(2, 7)), None);
        assert_eq!(offset(text, loc(3, 1)), None);
    }

    #[test]
    fn token_spans_end_after_the_token() {
        let sql = "SELECT \"A\", b FROM t";
        let stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap();
        let A::Statement::Query(q) = &stmts[0] else {
            panic!()
        };
        let A::SetExpr::Select(s) = q.body.as_ref() else {
            panic!()
        };
        let A::SelectItem::UnnamedExpr(A::Expr::Identifier(i)) = &s.projection[0] else {
            panic!()
        };
        let patched = patch(sql, vec![(i.span, "x".into())]).unwrap();
        assert_eq!(patched, "SELECT x, b FROM t");
    }
}
