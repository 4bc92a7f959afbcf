//! COPY's options, checked as PostgreSQL 15's `ProcessCopyOptions` checks
//! them.
//!
//! Both spellings sqlparser reads arrive here: the parenthesised list of
//! PostgreSQL 9.0 and later (`WITH (FORMAT csv, HEADER, DELIMITER ';')`)
//! and the older keywords (`WITH CSV HEADER QUOTE AS '"' FORCE NOT NULL
//! a`), which map onto the same options. Each option may be given once
//! (`conflicting or redundant options`); then the defaults of the format
//! are filled in and the combinations PostgreSQL refuses are refused, with
//! its messages and SQLSTATEs, in its order of checks.
//!
//! Not offered: `FORMAT binary` and encodings other than UTF-8 (tusk
//! stores and exchanges UTF-8 only). sqlparser does not read some of
//! PostgreSQL's spellings (`HEADER MATCH`, `FREEZE on`, `FORCE_QUOTE *`,
//! `FORMAT 'csv'`, multi-character option strings): those are syntax
//! errors here.

use crate::error::{sqlstate, SqlError};
use crate::names::ident;
use crate::session::Result;
use sqlparser::ast as A;
use tusk_exec::copy::{CopyOptions, Format, Header};

/// A column list option (`FORCE_QUOTE`, `FORCE_NOT_NULL`, `FORCE_NULL`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ColumnList {
    #[default]
    None,
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

fn conflicting() -> SqlError {
    SqlError::coded(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

fn not_supported(message: &str) -> SqlError {
    SqlError::coded(sqlstate::FEATURE_NOT_SUPPORTED, message)
}

fn invalid(message: String) -> SqlError {
    SqlError::coded(sqlstate::INVALID_PARAMETER_VALUE, message)
}

/// Sets `slot` once; a second time is `conflicting or redundant options`.
fn once<T>(slot: &mut Option<T>, v: T) -> Result<()> {
    if slot.is_some() {
        return Err(conflicting());
    }
    *slot = Some(v);
    Ok(())
}

fn once_list(slot: &mut ColumnList, v: ColumnList) -> Result<()> {
    if slot.given() {
        return Err(conflicting());
    }
    *slot = v;
    Ok(())
}

fn columns(idents: &[A::Ident]) -> Result<ColumnList> {
    Ok(ColumnList::Columns(
        idents.iter().map(ident).collect::<Result<_>>()?,
    ))
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
    fn format(&mut self, name: &str) -> Result<()> {
        let f = match name.to_ascii_lowercase().as_str() {
            "text" => Format::Text,
            "csv" => Format::Csv,
            "binary" => {
                if self.format.is_some() {
                    return Err(conflicting());
                }
                return Err(not_supported("COPY format \"binary\" is not supported"));
            }
            _ => {
                return Err(invalid(format!("COPY format \"{name}\" not recognized")));
            }
        };
        once(&mut self.format, f)
    }

    fn option(&mut self, o: &A::CopyOption) -> Result<()> {
        use A::CopyOption as O;
        match o {
            O::Format(name) => self.format(&name.value),
            O::Freeze(b) => once(&mut self.freeze, *b),
            O::Delimiter(c) => once(&mut self.delimiter, c.to_string()),
            O::Null(s) => once(&mut self.null, s.clone()),
            O::Header(b) => once(
                &mut self.header,
                if *b { Header::Present } else { Header::Absent },
            ),
            O::Quote(c) => once(&mut self.quote, c.to_string()),
            O::Escape(c) => once(&mut self.escape, c.to_string()),
            O::ForceQuote(cols) => once_list(&mut self.force_quote, columns(cols)?),
            O::ForceNotNull(cols) => once_list(&mut self.force_not_null, columns(cols)?),
            O::ForceNull(cols) => once_list(&mut self.force_null, columns(cols)?),
            O::Encoding(name) => self.encoding(name),
        }
    }

    fn encoding(&mut self, name: &str) -> Result<()> {
        if self.encoding {
            return Err(conflicting());
        }
        self.encoding = true;
        if is_utf8(name) || name.eq_ignore_ascii_case("sql_ascii") {
            return Ok(());
        }
        Err(not_supported(&format!(
            "COPY encoding \"{name}\" is not supported: tusk reads and writes UTF8"
        )))
    }

    fn legacy(&mut self, o: &A::CopyLegacyOption) -> Result<()> {
        use A::CopyLegacyCsvOption as C;
        use A::CopyLegacyOption as L;
        match o {
            L::Binary => self.format("binary"),
            L::Delimiter(c) => once(&mut self.delimiter, c.to_string()),
            L::Null(s) => once(&mut self.null, s.clone()),
            L::Csv(items) => {
                self.format("csv")?;
                for item in items {
                    match item {
                        C::Header => once(&mut self.header, Header::Present)?,
                        C::Quote(c) => once(&mut self.quote, c.to_string())?,
                        C::Escape(c) => once(&mut self.escape, c.to_string())?,
                        C::ForceQuote(cols) => once_list(&mut self.force_quote, columns(cols)?)?,
                        C::ForceNotNull(cols) => {
                            once_list(&mut self.force_not_null, columns(cols)?)?
                        }
                    }
                }
                Ok(())
            }
            other => Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!(
                    "syntax error at or near \"{}\"",
                    other.to_string().split_whitespace().next().unwrap_or("")
                ),
            )),
        }
    }
}

/// Checks the options of a COPY FROM (`is_from`) or COPY TO.
pub fn process(
    options: &[A::CopyOption],
    legacy: &[A::CopyLegacyOption],
    is_from: bool,
) -> Result<StatementOptions> {
    let mut g = Given::default();
    for o in options {
        g.option(o)?;
    }
    for o in legacy {
        g.legacy(o)?;
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
    use super::*;
    use crate::parse::{parse, Parsed};

    /// The options of a COPY statement, or the error (SQLSTATE, message).
    fn opts(sql: &str) -> std::result::Result<StatementOptions, (&'static str, String)> {
        let mut stmts = parse(sql).map_err(|e| (e.code, e.message))?;
        let Parsed::Sql(s) = stmts.remove(0) else {
            panic!("not SQL")
        };
        let A::Statement::Copy {
            to,
            options,
            legacy_options,
            ..
        } = *s
        else {
            panic!("not COPY")
        };
        process(&options, &legacy_options, !to).map_err(|e| (e.code, e.message))
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
        let o = opts("copy t to stdout csv force quote a").unwrap();
        assert_eq!(o.force_quote, ColumnList::Columns(vec!["a".into()]));
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
                "copy t from stdin (format csv, force_quote (a))",
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
        ];
        for &(sql, code, message) in cases {
            assert_eq!(err(sql), (code, message.to_string()), "{sql}");
        }
        assert_eq!(err("copy t to stdout (format binary)").0, "0A000");
        assert!(opts("copy t to stdout (format csv, delimiter '\\')").is_ok());
        assert!(opts("copy t to stdout (encoding 'UTF-8')").is_ok());
    }
}
