//! COPY's options, checked as PostgreSQL 15's `ProcessCopyOptions` checks
//! them.
//!
//! The options arrive as [`DefElem`]s (see `stmt`), whichever spelling the
//! statement used. Each may be given once (`conflicting or redundant
//! options`); values are read as PostgreSQL's `defGetString`,
//! `defGetBoolean` and `defGetCopyHeaderChoice` read them; then the
//! defaults of the format are filled in and the combinations PostgreSQL
//! refuses are refused, with its messages and SQLSTATEs, in its order of
//! checks. Errors about one option point at it (the statement's caret).
//!
//! Not offered: `FORMAT binary` and encodings other than UTF-8 (tusk
//! stores and exchanges UTF-8 only).

use super::stmt::{Arg, DefElem};
use crate::error::{sqlstate, SqlError};
use crate::session::Result;
use tusk_exec::copy::{CopyOptions, Format, Header};

/// A column list option (`FORCE_QUOTE`, `FORCE_NOT_NULL`, `FORCE_NULL`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ColumnList {
    #[default]
    None,
    /// `*` (`FORCE_QUOTE` only).
    All,
    Columns(Vec<String>),
}

impl ColumnList {
    fn given(&self) -> bool {
        *self != ColumnList::None
    }
}

/// The checked options of one COPY statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementOptions {
    pub copy: CopyOptions,
    pub freeze: bool,
    pub force_quote: ColumnList,
    pub force_not_null: ColumnList,
    pub force_null: ColumnList,
}

/// Options as given, before defaults (PostgreSQL's NULL pointers).
#[derive(Default)]
struct Given {
    format: Option<Format>,
    freeze: Option<bool>,
    delimiter: Option<String>,
    null: Option<String>,
    header: Option<Header>,
    quote: Option<String>,
    escape: Option<String>,
    force_quote: ColumnList,
    force_not_null: ColumnList,
    force_null: ColumnList,
    encoding: bool,
}

fn not_supported(message: &str) -> SqlError {
    SqlError::coded(sqlstate::FEATURE_NOT_SUPPORTED, message)
}

fn invalid(message: String) -> SqlError {
    SqlError::coded(sqlstate::INVALID_PARAMETER_VALUE, message)
}

/// `e` with the option's position, when it has one.
fn at(e: SqlError, d: &DefElem) -> SqlError {
    match d.position {
        Some(p) => e.at(p),
        None => e,
    }
}

/// `errorConflictingDefElem`.
fn conflicting(d: &DefElem) -> SqlError {
    at(
        SqlError::coded(sqlstate::SYNTAX_ERROR, "conflicting or redundant options"),
        d,
    )
}

/// Sets `slot` once.
fn once<T>(slot: &mut Option<T>, v: T, d: &DefElem) -> Result<()> {
    if slot.is_some() {
        return Err(conflicting(d));
    }
    *slot = Some(v);
    Ok(())
}

/// `defGetString`.
fn get_string(d: &DefElem) -> Result<String> {
    match &d.arg {
        None => Err(SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("{} requires a parameter", d.name),
        )),
        Some(Arg::Str(s)) => Ok(s.clone()),
        Some(Arg::Int(i)) => Ok(i.to_string()),
        Some(Arg::Star) => Ok("*".into()),
        Some(Arg::List(items)) => Ok(items.join(".")),
    }
}

/// The Boolean words `defGetBoolean` accepts.
fn boolean_word(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "on" => Some(true),
        "false" | "off" => Some(false),
        _ => None,
    }
}

/// `defGetBoolean`.
fn get_boolean(d: &DefElem) -> Result<bool> {
    let v = match &d.arg {
        None => Some(true),
        Some(Arg::Int(0)) => Some(false),
        Some(Arg::Int(1)) => Some(true),
        Some(Arg::Int(_)) => None,
        Some(_) => boolean_word(&get_string(d)?),
    };
    v.ok_or_else(|| {
        SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("{} requires a Boolean value", d.name),
        )
    })
}

/// `defGetCopyHeaderChoice`.
fn get_header(d: &DefElem, is_from: bool) -> Result<Header> {
    let choice = |b: bool| if b { Header::Present } else { Header::Absent };
    let v = match &d.arg {
        None => Some(Header::Present),
        Some(Arg::Int(0)) => Some(Header::Absent),
        Some(Arg::Int(1)) => Some(Header::Present),
        Some(Arg::Int(_)) => None,
        Some(_) => {
            let s = get_string(d)?;
            if s.eq_ignore_ascii_case("match") {
                if !is_from {
                    return Err(not_supported(&format!(
                        "cannot use \"{s}\" with HEADER in COPY TO"
                    )));
                }
                Some(Header::Match)
            } else {
                boolean_word(&s).map(choice)
            }
        }
    };
    v.ok_or_else(|| {
        SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("{} requires a Boolean value or \"match\"", d.name),
        )
    })
}

/// A column list option's value.
fn get_columns(d: &DefElem, star: bool) -> Result<ColumnList> {
    match &d.arg {
        Some(Arg::Star) if star => Ok(ColumnList::All),
        Some(Arg::List(cols)) => Ok(ColumnList::Columns(cols.clone())),
        _ => Err(at(
            invalid(format!(
                "argument to option \"{}\" must be a list of column names",
                d.name
            )),
            d,
        )),
    }
}

/// Names PostgreSQL accepts for UTF-8 (`pg_char_to_encoding` ignores case
/// and punctuation).
fn is_utf8(name: &str) -> bool {
    let squashed: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    matches!(squashed.as_str(), "utf8" | "unicode")
}

impl Given {
    fn option(&mut self, d: &DefElem, is_from: bool) -> Result<()> {
        match d.name.as_str() {
            "format" => {
                if self.format.is_some() {
                    return Err(conflicting(d));
                }
                let name = get_string(d)?;
                self.format = Some(match name.as_str() {
                    "text" => Format::Text,
                    "csv" => Format::Csv,
                    "binary" => return Err(at(not_supported("COPY BINARY is not supported"), d)),
                    _ => {
                        return Err(at(
                            invalid(format!("COPY format \"{name}\" not recognized")),
                            d,
                        ))
                    }
                });
                Ok(())
            }
            "freeze" => {
                if self.freeze.is_some() {
                    return Err(conflicting(d));
                }
                self.freeze = Some(get_boolean(d)?);
                Ok(())
            }
            "delimiter" => once(&mut self.delimiter, get_string(d)?, d),
            "null" => once(&mut self.null, get_string(d)?, d),
            "header" => {
                if self.header.is_some() {
                    return Err(conflicting(d));
                }
                self.header = Some(get_header(d, is_from)?);
                Ok(())
            }
            "quote" => once(&mut self.quote, get_string(d)?, d),
            "escape" => once(&mut self.escape, get_string(d)?, d),
            "force_quote" => {
                if self.force_quote.given() {
                    return Err(conflicting(d));
                }
                self.force_quote = get_columns(d, true)?;
                Ok(())
            }
            "force_not_null" => {
                if self.force_not_null.given() {
                    return Err(conflicting(d));
                }
                self.force_not_null = get_columns(d, false)?;
                Ok(())
            }
            "force_null" => {
                if self.force_null.given() {
                    return Err(conflicting(d));
                }
                self.force_null = get_columns(d, false)?;
                Ok(())
            }
            "encoding" => {
                if self.encoding {
                    return Err(conflicting(d));
                }
                self.encoding = true;
                let name = get_string(d)?;
                if is_utf8(&name) || name.eq_ignore_ascii_case("sql_ascii") {
                    return Ok(());
                }
                Err(at(
                    not_supported(&format!(
                        "COPY encoding \"{name}\" is not supported: tusk reads and writes UTF8"
                    )),
                    d,
                ))
            }
            other => Err(at(
                SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("option \"{other}\" not recognized"),
                ),
                d,
            )),
        }
    }
}

/// Checks the options of a COPY FROM (`is_from`) or COPY TO.
pub fn process(options: &[DefElem], is_from: bool) -> Result<StatementOptions> {
    let mut g = Given::default();
    for d in options {
        g.option(d, is_from)?;
    }
    let format = g.format.unwrap_or(Format::Text);
    let csv = format == Format::Csv;
    let mut copy = CopyOptions::new(format);
    let delimiter = g
        .delimiter
        .clone()
        .unwrap_or_else(|| (copy.delimiter as char).to_string());
    let null = g
        .null
        .clone()
        .unwrap_or_else(|| String::from_utf8_lossy(&copy.null).into_owned());
    let quote = g.quote.clone().unwrap_or_else(|| "\"".into());
    let escape = g.escape.clone().unwrap_or_else(|| quote.clone());

    if delimiter.len() != 1 {
        return Err(not_supported(
            "COPY delimiter must be a single one-byte character",
        ));
    }
    if delimiter.contains(['\r', '\n']) {
        return Err(invalid(
            "COPY delimiter cannot be newline or carriage return".into(),
        ));
    }
    if null.contains(['\r', '\n']) {
        return Err(invalid(
            "COPY null representation cannot use newline or carriage return".into(),
        ));
    }
    if !csv && "\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(delimiter.as_str()) {
        return Err(invalid(format!("COPY delimiter cannot be \"{delimiter}\"")));
    }
    if !csv && g.quote.is_some() {
        return Err(not_supported("COPY quote available only in CSV mode"));
    }
    if csv && quote.len() != 1 {
        return Err(not_supported(
            "COPY quote must be a single one-byte character",
        ));
    }
    if csv && delimiter == quote {
        return Err(invalid("COPY delimiter and quote must be different".into()));
    }
    if !csv && g.escape.is_some() {
        return Err(not_supported("COPY escape available only in CSV mode"));
    }
    if csv && escape.len() != 1 {
        return Err(not_supported(
            "COPY escape must be a single one-byte character",
        ));
    }
    if !csv && g.force_quote.given() {
        return Err(not_supported("COPY force quote available only in CSV mode"));
    }
    if g.force_quote.given() && is_from {
        return Err(not_supported(
            "COPY force quote only available using COPY TO",
        ));
    }
    if !csv && g.force_not_null.given() {
        return Err(not_supported(
            "COPY force not null available only in CSV mode",
        ));
    }
    if g.force_not_null.given() && !is_from {
        return Err(not_supported(
            "COPY force not null only available using COPY FROM",
        ));
    }
    if !csv && g.force_null.given() {
        return Err(not_supported("COPY force null available only in CSV mode"));
    }
    if g.force_null.given() && !is_from {
        return Err(not_supported(
            "COPY force null only available using COPY FROM",
        ));
    }
    if null.contains(delimiter.as_str()) {
        return Err(not_supported(
            "COPY delimiter must not appear in the NULL specification",
        ));
    }
    if csv && null.contains(quote.as_str()) {
        return Err(not_supported(
            "CSV quote character must not appear in the NULL specification",
        ));
    }
    copy.delimiter = delimiter.as_bytes()[0];
    copy.null = null.into_bytes();
    if csv {
        copy.quote = quote.as_bytes()[0];
        copy.escape = escape.as_bytes()[0];
    }
    copy.header = g.header.unwrap_or_default();
    Ok(StatementOptions {
        copy,
        freeze: g.freeze.unwrap_or(false),
        force_quote: g.force_quote,
        force_not_null: g.force_not_null,
        force_null: g.force_null,
    })
}

#[cfg(test)]
mod tests {
    use super::super::stmt::parse;
    use super::*;

    /// The options of a COPY statement, or the error (SQLSTATE, message).
    fn opts(sql: &str) -> std::result::Result<StatementOptions, (&'static str, String)> {
        let st = parse(sql)
            .expect("a COPY statement")
            .map_err(|e| (e.code, e.message))?;
        process(&st.options, !st.to).map_err(|e| (e.code, e.message))
    }

    fn err(sql: &str) -> (&'static str, String) {
        opts(sql).expect_err(sql)
    }

    #[test]
    fn defaults_per_format() {
        let o = opts("copy t to stdout").unwrap();
        assert_eq!(o.copy, CopyOptions::new(Format::Text));
        let o = opts("copy t from stdin with (format csv, header)").unwrap();
        assert_eq!(o.copy.format, Format::Csv);
        assert_eq!(o.copy.header, Header::Present);
        assert_eq!(
            (o.copy.delimiter, o.copy.quote, o.copy.escape),
            (b',', b'"', b'"')
        );
        let o = opts("copy t to stdout with (format csv, quote '''')").unwrap();
        assert_eq!((o.copy.quote, o.copy.escape), (b'\'', b'\''));
        let o = opts("copy t from stdin (format 'csv', header match, freeze off)").unwrap();
        assert_eq!((o.copy.header, o.freeze), (Header::Match, false));
        let o = opts("copy t to stdout (header 0, format csv, force_quote *)").unwrap();
        assert_eq!(
            (o.copy.header, o.force_quote),
            (Header::Absent, ColumnList::All)
        );
    }

    #[test]
    fn legacy_forms() {
        let o =
            opts("copy t from stdin with csv header quote as '''' force not null a, b").unwrap();
        assert_eq!(o.copy.format, Format::Csv);
        assert_eq!(o.copy.header, Header::Present);
        assert_eq!(o.copy.quote, b'\'');
        assert_eq!(
            o.force_not_null,
            ColumnList::Columns(vec!["a".into(), "b".into()])
        );
        let o = opts("copy t to stdout delimiter as '|' null as 'NULL'").unwrap();
        assert_eq!(
            (o.copy.delimiter, o.copy.null.as_slice()),
            (b'|', &b"NULL"[..])
        );
        let o = opts("copy t to stdout csv force quote *").unwrap();
        assert_eq!(o.force_quote, ColumnList::All);
    }

    // Expected messages and SQLSTATEs from PostgreSQL 15.
    #[test]
    fn refusals() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "copy t to stdout (format binaryx)",
                "22023",
                "COPY format \"binaryx\" not recognized",
            ),
            (
                "copy t to stdout (format csv, format csv)",
                "42601",
                "conflicting or redundant options",
            ),
            (
                "copy t to stdout (delimiter 'ab')",
                "0A000",
                "COPY delimiter must be a single one-byte character",
            ),
            (
                "copy t to stdout (delimiter 'é')",
                "0A000",
                "COPY delimiter must be a single one-byte character",
            ),
            (
                "copy t to stdout (delimiter E'\\n')",
                "22023",
                "COPY delimiter cannot be newline or carriage return",
            ),
            (
                "copy t to stdout (delimiter 'a')",
                "22023",
                "COPY delimiter cannot be \"a\"",
            ),
            (
                "copy t to stdout (delimiter '\\')",
                "22023",
                "COPY delimiter cannot be \"\\\"",
            ),
            (
                "copy t to stdout (null E'a\\rb')",
                "22023",
                "COPY null representation cannot use newline or carriage return",
            ),
            (
                "copy t to stdout (quote '\"')",
                "0A000",
                "COPY quote available only in CSV mode",
            ),
            (
                "copy t to stdout (format csv, quote 'ab')",
                "0A000",
                "COPY quote must be a single one-byte character",
            ),
            (
                "copy t to stdout (format csv, quote ',')",
                "22023",
                "COPY delimiter and quote must be different",
            ),
            (
                "copy t to stdout (escape '\"')",
                "0A000",
                "COPY escape available only in CSV mode",
            ),
            (
                "copy t to stdout (format csv, escape '')",
                "0A000",
                "COPY escape must be a single one-byte character",
            ),
            (
                "copy t from stdin (format csv, force_quote (a))",
                "0A000",
                "COPY force quote only available using COPY TO",
            ),
            (
                "copy t from stdin (format csv, force_quote *)",
                "0A000",
                "COPY force quote only available using COPY TO",
            ),
            (
                "copy t to stdout (force_quote (a))",
                "0A000",
                "COPY force quote available only in CSV mode",
            ),
            (
                "copy t to stdout (format csv, force_not_null (a))",
                "0A000",
                "COPY force not null only available using COPY FROM",
            ),
            (
                "copy t from stdin (format csv, force_not_null *)",
                "22023",
                "argument to option \"force_not_null\" must be a list of column names",
            ),
            (
                "copy t to stdout (format csv, force_null (a))",
                "0A000",
                "COPY force null only available using COPY FROM",
            ),
            (
                "copy t from stdin (force_null (a))",
                "0A000",
                "COPY force null available only in CSV mode",
            ),
            (
                "copy t to stdout (null 'a,b', format csv)",
                "0A000",
                "COPY delimiter must not appear in the NULL specification",
            ),
            (
                "copy t to stdout (null 'a\"b', format csv)",
                "0A000",
                "CSV quote character must not appear in the NULL specification",
            ),
            (
                "copy t to stdout (format csv, force_quote (b), force_quote (a))",
                "42601",
                "conflicting or redundant options",
            ),
            (
                "copy t to stdout (header match, format csv)",
                "0A000",
                "cannot use \"match\" with HEADER in COPY TO",
            ),
            (
                "copy t to stdout (header 2)",
                "42601",
                "header requires a Boolean value or \"match\"",
            ),
            (
                "copy t to stdout (freeze maybe)",
                "42601",
                "freeze requires a Boolean value",
            ),
            (
                "copy t to stdout (null)",
                "42601",
                "null requires a parameter",
            ),
            (
                "copy t to stdout (foo 1)",
                "42601",
                "option \"foo\" not recognized",
            ),
        ];
        for &(sql, code, message) in cases {
            assert_eq!(err(sql), (code, message.to_string()), "{sql}");
        }
        assert_eq!(err("copy t to stdout (format binary)").0, "0A000");
        assert!(opts("copy t to stdout (format csv, delimiter '\\')").is_ok());
        assert!(opts("copy t to stdout (encoding 'UTF-8')").is_ok());
    }
}
