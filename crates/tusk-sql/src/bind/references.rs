//! What a query's text refers to, by position in that text.
//!
//! tusk keeps a view as the SQL text of its query and binds it again
//! wherever the view is used. PostgreSQL keeps the parsed query instead,
//! whose references point at relations and columns by number, so a view
//! there survives a renamed table or column and does not grow when its
//! table gains a column. To give views the same behaviour over text, the
//! binder can note, while it binds, where in the text each of these is:
//!
//! * every relation a FROM clause names ([`RelationRef`]): the span of the
//!   name, the relation it resolved to, and whether it has an alias (without
//!   one, the name also qualifies the relation's columns);
//! * every identifier that resolved to a column of a table or view in a FROM
//!   clause under that column's own name ([`ColumnRef`]; a column renamed
//!   by an alias list, `AS x(p, q)`, is reached by the alias's name and is
//!   not noted), and whether it stands alone as a select-list item (so that
//!   its output column is named after it);
//! * every `*` and `t.*` of a select list, with the columns it expanded to,
//!   each written so that it resolves the same way in that place
//!   ([`StarRef`]).
//!
//! The view commands (`commands::view_text`) rewrite a view's text from
//! these: at CREATE VIEW every `*` becomes its column list, and before a
//! rename every reference to the renamed relation or column is written
//! anew. Only the text of the query being bound is noted: a view used
//! inside it is bound from its own text, whose positions mean nothing
//! here, so noting stops while it is bound.

use std::collections::HashMap;

use sqlparser::ast::{self as A, Spanned};
use sqlparser::tokenizer::Span;

use super::Binder;
use crate::logical::ColumnId;
use crate::names::quote_ident;

/// A relation named in a FROM clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationRef {
    /// The span of the (possibly qualified) name.
    pub span: Span,
    /// The relation (table or view) it resolved to.
    pub oid: u32,
    /// Whether an alias follows it (then the name qualifies nothing).
    pub aliased: bool,
}

/// An identifier that resolved to a column of a relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRef {
    /// The span of the column's identifier (the last part of a qualified
    /// name).
    pub span: Span,
    /// The relation whose column it is.
    pub oid: u32,
    /// The column's name.
    pub column: String,
    /// Set when the reference is a whole select-list item without an
    /// alias: the name of the output column it gives.
    pub output_name: Option<String>,
}

/// A `*` or `t.*` in a select list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarRef {
    /// From the qualifier (if any) to the `*`, inclusive.
    pub span: Span,
    /// The select-list text it expands to: `"t"."a", "t"."b"`.
    pub expansion: String,
}

/// The references noted while binding one query.
#[derive(Debug, Default)]
pub struct References {
    pub relations: Vec<RelationRef>,
    pub columns: Vec<ColumnRef>,
    pub stars: Vec<StarRef>,
    /// The relation column behind each column id of a FROM item.
    sources: HashMap<ColumnId, (u32, String)>,
    /// Nesting of views being bound from their own text (noting is off
    /// while it is above zero).
    paused: usize,
}

impl References {
    /// Whether positions are being noted (not inside a view's own text).
    fn active(&self) -> bool {
        self.paused == 0
    }
}

impl Binder<'_> {
    /// Turns on noting of references for the query about to be bound.
    pub fn note_references(&mut self) {
        self.references = Some(References::default());
    }

    /// The references noted since [`Binder::note_references`].
    pub fn take_references(&mut self) -> Option<References> {
        self.references.take()
    }

    /// Notes a relation named at `name` and, for each of its columns still
    /// reachable under their own names, the column id it was given.
    pub(super) fn note_relation(
        &mut self,
        name: &A::ObjectName,
        oid: u32,
        aliased: bool,
        columns: impl IntoIterator<Item = (ColumnId, String)>,
    ) {
        let Some(refs) = self.references.as_mut().filter(|r| r.active()) else {
            return;
        };
        refs.relations.push(RelationRef {
            span: name.span(),
            oid,
            aliased,
        });
        for (id, column) in columns {
            refs.sources.insert(id, (oid, column));
        }
    }

    /// Pauses noting while a view's own text is bound.
    pub(super) fn pause_references(&mut self, pause: bool) {
        if let Some(refs) = self.references.as_mut() {
            if pause {
                refs.paused += 1;
            } else {
                refs.paused -= 1;
            }
        }
    }

    /// Notes that the identifier `ident`, read as `name`, resolved to
    /// column `id`.
    pub(super) fn note_column(&mut self, ident: &A::Ident, name: &str, id: ColumnId) {
        let Some(refs) = self.references.as_mut().filter(|r| r.active()) else {
            return;
        };
        if let Some((oid, column)) = refs.sources.get(&id) {
            // Only a reference by the column's own name (an alias list may
            // have renamed it in this scope).
            if name == column {
                let r = ColumnRef {
                    span: ident.span,
                    oid: *oid,
                    column: column.clone(),
                    output_name: None,
                };
                if !refs.columns.contains(&r) {
                    refs.columns.push(r);
                }
            }
        }
    }

    /// Marks the reference at `ident` as a whole select-list item naming
    /// its output column `name`.
    pub(super) fn note_output_name(&mut self, ident: &A::Ident, name: &str) {
        if let Some(refs) = self.references.as_mut().filter(|r| r.active()) {
            for r in refs.columns.iter_mut().filter(|r| r.span == ident.span) {
                r.output_name = Some(name.to_string());
            }
        }
    }

    /// Notes a `*` spanning `span` that expanded to `columns` (each a
    /// qualifier, if it needs one, and a name).
    pub(super) fn note_star(&mut self, span: Span, columns: &[(Option<String>, String)]) {
        let Some(refs) = self.references.as_mut().filter(|r| r.active()) else {
            return;
        };
        let expansion: Vec<String> = columns
            .iter()
            .map(|(q, n)| match q {
                Some(q) => format!("{}.{}", quote_ident(q), quote_ident(n)),
                None => quote_ident(n),
            })
            .collect();
        let r = StarRef {
            span,
            expansion: expansion.join(", "),
        };
        if !refs.stars.contains(&r) {
            refs.stars.push(r);
        }
    }
}
