//! Identifiers as PostgreSQL treats them: unquoted names fold to lower case,
//! names longer than 63 bytes are truncated (NAMEDATALEN - 1), and EXPLAIN
//! quotes names that would not read back as written.

use crate::error::{sqlstate, SqlError};
use sqlparser::ast as A;

/// PostgreSQL's longest identifier, in bytes.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

type Result<T> = std::result::Result<T, SqlError>;

/// PostgreSQL quotes identifiers that are not plain lower-case words.
pub fn quote_ident(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$')
        && !is_reserved(s);
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// PostgreSQL 15's fully reserved key words (lower case): the words it
/// quotes in EXPLAIN and `\d` output, and that are never bare identifiers.
pub(crate) fn is_reserved(s: &str) -> bool {
    matches!(
        s,
        "all"
            | "analyse"
            | "analyze"
            | "and"
            | "any"
            | "array"
            | "as"
            | "asc"
            | "asymmetric"
            | "both"
            | "case"
            | "cast"
            | "check"
            | "collate"
            | "column"
            | "constraint"
            | "create"
            | "current_catalog"
            | "current_date"
            | "current_role"
            | "current_time"
            | "current_timestamp"
            | "current_user"
            | "default"
            | "deferrable"
            | "desc"
            | "distinct"
            | "do"
            | "else"
            | "end"
            | "except"
            | "false"
            | "fetch"
            | "for"
            | "foreign"
            | "from"
            | "grant"
            | "group"
            | "having"
            | "in"
            | "initially"
            | "intersect"
            | "into"
            | "lateral"
            | "leading"
            | "limit"
            | "localtime"
            | "localtimestamp"
            | "not"
            | "null"
            | "offset"
            | "on"
            | "only"
            | "or"
            | "order"
            | "placing"
            | "primary"
            | "references"
            | "returning"
            | "select"
            | "session_user"
            | "some"
            | "symmetric"
            | "table"
            | "then"
            | "to"
            | "trailing"
            | "true"
            | "union"
            | "unique"
            | "user"
            | "using"
            | "variadic"
            | "when"
            | "where"
            | "window"
            | "with"
    )
}

/// Truncates an identifier to 63 bytes at a character boundary, as
/// PostgreSQL's `truncate_identifier` does.
pub fn truncate(name: &str) -> String {
    if name.len() <= MAX_IDENTIFIER_BYTES {
        return name.to_string();
    }
    let mut end = MAX_IDENTIFIER_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// An identifier as PostgreSQL sees it: unquoted folds to lower case (ASCII
/// only, as in PostgreSQL's `downcase_identifier` with a UTF-8 database),
/// then both are truncated to 63 bytes. A zero-length quoted identifier is
/// an error.
pub fn ident(i: &A::Ident) -> Result<String> {
    let folded = if i.quote_style.is_some() {
        if i.value.is_empty() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                "zero-length delimited identifier at or near \"\"\"\"",
            ));
        }
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    };
    Ok(truncate(&folded))
}

/// A possibly schema-qualified relation name, checked against the one schema
/// tusk has (`public`; `pg_catalog` and `information_schema` name the
/// system views).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QualifiedName {
    pub schema: Option<String>,
    pub name: String,
}

pub fn object_name(n: &A::ObjectName) -> Result<QualifiedName> {
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| match p {
                A::ObjectNamePart::Identifier(i) => ident(i),
                other => Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{other}\""),
                )),
            })
            .collect::<Result<_>>()?;
    match parts.as_slice() {
        [name] => Ok(QualifiedName {
            schema: None,
            name: name.clone(),
        }),
        [schema, name] => Ok(QualifiedName {
            schema: Some(schema.clone()),
            name: name.clone(),
        }),
        [db, schema, name] => {
            if db != "tusk" && db != "postgres" {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("cross-database references are not implemented: {n}"),
                ));
            }
            Ok(QualifiedName {
                schema: Some(schema.clone()),
                name: name.clone(),
            })
        }
        _ => Err(SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("improper qualified name (too many dotted names): {n}"),
        )),
    }
}

/// The name of a user relation: unqualified or in `public`.
pub fn user_relation_name(n: &A::ObjectName) -> Result<String> {
    let q = object_name(n)?;
    match q.schema.as_deref() {
        None | Some("public") => Ok(q.name),
        Some(s) => Err(SqlError::coded(
            sqlstate::INVALID_NAME,
            format!("schema \"{s}\" does not exist"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_truncation() {
        assert_eq!(quote_ident("abc_1"), "abc_1");
        assert_eq!(quote_ident("Abc"), "\"Abc\"");
        assert_eq!(quote_ident("select"), "\"select\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        let long = "x".repeat(100);
        assert_eq!(truncate(&long).len(), 63);
        let multi = "é".repeat(40);
        assert_eq!(truncate(&multi).len(), 62);
    }
}
