//! COPY's data formats and its load path: PostgreSQL's `text` and `csv`
//! formats read into column vectors and heap pages, and written from
//! batches.
//!
//! ## Reading (COPY FROM)
//!
//! Input arrives as byte chunks of any size (a file read, a client's
//! CopyData message, lines of a psql script). The pipeline, batch by batch:
//!
//! 1. [`reader::CopyReader`] frames records and splits them into fields in
//!    one pass over the bytes: line ends (`\n`, `\r`, `\r\n`, consistent
//!    through the input as PostgreSQL demands), text format's backslash
//!    escapes, CSV's quotes (records may span lines), the `\.` end marker,
//!    the NULL string, the header line (skipped or matched against the
//!    column names). Field bytes land in one buffer per batch; nothing is
//!    allocated per row or per field. UTF-8 is checked once per batch.
//! 2. [`columns::ColumnParser`]s, one per column and specialised by type
//!    (integers, `numeric(p, s)`, dates, strings with their length limits,
//!    and the type's input function for the rest), turn a column of fields
//!    into a [`Vector`](crate::vector::Vector).
//! 3. [`prepare::Preparer`] completes the batch (defaults, COPY's WHERE),
//!    checks its constraints and lays it out as heap tuples column by
//!    column, with each index's keys.
//! 4. [`load::Loader`] appends the tuples with tusk-storage's
//!    `BulkInserter`, which installs each full page with one WAL record (or
//!    none for a table created by the running transaction); index entries
//!    are added some pages at a time, in sorted batches.
//!
//! [`pipeline::run`] runs the steps on three threads: framing, converting
//! and preparing, storing.
//!
//! ## Errors
//!
//! The first bad row aborts the whole COPY, as in PostgreSQL, and the
//! error is PostgreSQL's, with its context line ([`CopyError`]):
//! `COPY t, line 3, column b: "x"` for a value, `COPY t, line 3: "..."`
//! for the row, `COPY t, line 3` for bad encoding. PostgreSQL works a row
//! at a time, so its first error is the first in row order and, within a
//! row, column order: reading stops a batch before a row whose framing
//! fails (reporting it when the next batch is asked for), and conversion
//! tracks each column's first failing row and reports the earliest.
//!
//! ## Writing (COPY TO)
//!
//! [`writer::CopyWriter`] renders batches as text or CSV lines into a byte
//! buffer, with PostgreSQL's escapes and quoting rules and every type's
//! output function (fast paths for integers, numerics, dates and strings).

pub mod columns;
pub mod convert;
pub mod load;
pub mod pipeline;
pub mod prepare;
pub mod reader;
pub mod writer;

use crate::error::ExecError;

/// `FORMAT text` or `FORMAT csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Csv => "csv",
        }
    }
}

/// The `HEADER` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Header {
    #[default]
    Absent,
    /// COPY TO writes the column names; COPY FROM skips the first line.
    Present,
    /// COPY FROM checks the first line against the column names.
    Match,
}

/// The validated options of a COPY (the SQL layer checks them as
/// PostgreSQL's `ProcessCopyOptions` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyOptions {
    pub format: Format,
    pub delimiter: u8,
    /// The NULL string (`\N` in text format, empty in CSV by default).
    pub null: Vec<u8>,
    /// CSV only.
    pub quote: u8,
    /// CSV only.
    pub escape: u8,
    pub header: Header,
}

impl CopyOptions {
    /// PostgreSQL's defaults for `format`.
    pub fn new(format: Format) -> CopyOptions {
        match format {
            Format::Text => CopyOptions {
                format,
                delimiter: b'\t',
                null: b"\\N".to_vec(),
                quote: b'"',
                escape: b'"',
                header: Header::Absent,
            },
            Format::Csv => CopyOptions {
                format,
                delimiter: b',',
                null: Vec::new(),
                quote: b'"',
                escape: b'"',
                header: Header::Absent,
            },
        }
    }

    pub fn csv(&self) -> bool {
        self.format == Format::Csv
    }
}

/// An error of a COPY with PostgreSQL's CONTEXT line (`COPY t, line 3,
/// column b: "x"`), when it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyError {
    pub error: ExecError,
    pub context: Option<String>,
}

impl CopyError {
    pub fn new(error: ExecError, context: Option<String>) -> CopyError {
        CopyError { error, context }
    }
}

impl From<ExecError> for CopyError {
    fn from(error: ExecError) -> Self {
        CopyError {
            error,
            context: None,
        }
    }
}

impl From<tusk_storage::StorageError> for CopyError {
    fn from(e: tusk_storage::StorageError) -> Self {
        ExecError::from(e).into()
    }
}

/// Bytes of data PostgreSQL shows of a line or value in a context line
/// (`MAX_COPY_DATA_DISPLAY`).
const MAX_DISPLAY: usize = 100;

/// A line or value as a context line shows it: at most 100 bytes, cut at
/// a character boundary and followed by `...` when longer
/// (`limit_printout_length`).
pub fn limit_printout(s: &[u8]) -> String {
    let text = String::from_utf8_lossy(s);
    if text.len() <= MAX_DISPLAY {
        return text.into_owned();
    }
    let mut cut = MAX_DISPLAY;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &text[..cut])
}

/// `COPY t, line N` (the context of an encoding error).
pub fn line_context(table: &str, line: u64) -> String {
    format!("COPY {table}, line {line}")
}

/// `COPY t, line N: "text"` (the context of a row error).
pub fn row_context(table: &str, line: u64, raw: &[u8]) -> String {
    format!("COPY {table}, line {line}: \"{}\"", limit_printout(raw))
}

/// `COPY t, line N, column c: "value"` or `...: null input`.
pub fn column_context(table: &str, line: u64, column: &str, value: Option<&[u8]>) -> String {
    match value {
        Some(v) => format!(
            "COPY {table}, line {line}, column {column}: \"{}\"",
            limit_printout(v)
        ),
        None => format!("COPY {table}, line {line}, column {column}: null input"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printout_is_cut_at_100_bytes_on_a_character_boundary() {
        assert_eq!(limit_printout(b"abc"), "abc");
        let long = "y".repeat(150);
        assert_eq!(
            limit_printout(long.as_bytes()),
            format!("{}...", "y".repeat(100))
        );
        let wide = format!("{}é", "x".repeat(98));
        assert_eq!(limit_printout(wide.as_bytes()), wide);
        let wide = format!("{}é", "x".repeat(99));
        assert_eq!(
            limit_printout(wide.as_bytes()),
            format!("{}...", "x".repeat(99))
        );
    }

    #[test]
    fn contexts() {
        assert_eq!(
            column_context("t", 3, "b", Some(b"x")),
            "COPY t, line 3, column b: \"x\""
        );
        assert_eq!(
            column_context("t", 3, "b", None),
            "COPY t, line 3, column b: null input"
        );
        assert_eq!(row_context("t", 1, b"1\t2"), "COPY t, line 1: \"1\t2\"");
        assert_eq!(line_context("t", 9), "COPY t, line 9");
    }
}
