//! Framing COPY input into rows and fields: PostgreSQL's `CopyReadLine`
//! and `CopyReadAttributesText` / `CopyReadAttributesCSV` in one pass.
//!
//! A [`CopyReader`] holds the input not consumed yet. [`CopyReader::read_batch`]
//! scans it record by record into a [`RawBatch`], which keeps a copy of the
//! batch's input (one copy per batch, not per field) and addresses each
//! field in it by offset and length; only a field that escapes or quotes
//! change (text format's backslashes, CSV's doubled quotes) is unescaped
//! into a side buffer. Two length markers stand for a NULL field and a
//! field the row lacks.
//! A record that the input does not hold whole yet is left for the next
//! call (after [`CopyReader::push`] added more, or [`CopyReader::finish`]
//! said there is no more).
//!
//! ## Rules, as PostgreSQL 15 applies them
//!
//! * **Line ends.** The first record's end decides: `\n`, `\r\n` or `\r`.
//!   Any other line end later is an error (`literal newline found in
//!   data`, or `unquoted ... ` in CSV). The last line needs no end.
//! * **Text format.** A backslash takes the next byte along, also a line
//!   end or the delimiter; when unescaping, `\b \f \n \r \t \v`, octal
//!   `\NNN` and hex `\xHH` become bytes and any other escaped byte stands
//!   for itself. The NULL string is compared with the field *before*
//!   unescaping. Bytes that escapes produce are checked for UTF-8.
//! * **CSV.** A quote starts a quoted part anywhere in a field; in it the
//!   delimiter and line ends are data, and the escape byte before a quote
//!   or escape byte stands for that byte (with the default escape, `""` is
//!   a quote). A field is NULL when it was never quoted and equals the NULL
//!   string; `FORCE_NOT_NULL` turns that into the NULL string's text,
//!   `FORCE_NULL` makes a quoted field equal to it NULL. Newlines inside
//!   quotes count as lines once the line end is known.
//! * **End of data.** `\.` followed by a line end: in text format anywhere
//!   (what precedes it on the line is a last field; a line that is only
//!   `\.` ends the data), in CSV only alone on a line.
//! * **Field count.** More fields than columns: `extra data after last
//!   expected column`. Fewer: the missing ones are marked and reported as
//!   `missing data for column "c"` when conversion reaches them, as
//!   PostgreSQL converts the columns before them first.
//!
//! A record that breaks a rule ends the batch before it; its error is
//! returned by the next call, so the rows before it are converted (and
//! report their own errors) first, in PostgreSQL's order.
//!
//! This module frames batches (and the header line); `scan` reads one
//! record in either format.

mod scan;
mod stops;

use super::{line_context, row_context, CopyError, CopyOptions, Format, Header};
use crate::text::check_utf8;
pub use scan::unescape_text;
use scan::{bad_format, scan_csv, scan_text, Eol, Failure, Scan, State};
use stops::Stops;

/// Field length marking a NULL field.
pub const NULL_FIELD: u32 = u32::MAX;
/// Field length marking a field the row does not have.
pub const MISSING_FIELD: u32 = u32::MAX - 1;

/// Rows a batch holds at most.
pub const BATCH_ROWS: usize = 4096;

/// Input bytes after which a batch takes no more rows (so that offsets
/// into it fit 32 bits, and a batch of wide rows stays small).
pub const BATCH_BYTES: usize = 64 << 20;

/// What the reader needs besides the format options.
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    pub options: CopyOptions,
    /// The relation's name, for context lines.
    pub table: String,
    /// The names of the columns the input holds, in input order.
    pub columns: Vec<String>,
    /// Per input column: `FORCE_NOT_NULL` (CSV).
    pub force_not_null: Vec<bool>,
    /// Per input column: `FORCE_NULL` (CSV).
    pub force_null: Vec<bool>,
}

/// One field of a [`RawBatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field<'a> {
    Value(&'a [u8]),
    Null,
    Missing,
}

/// Offsets with this bit address [`RawBatch`]'s side buffer of unescaped
/// fields; the others its copy of the input.
const SIDE: u32 = 1 << 31;

/// The fields of a batch of rows, row by row.
#[derive(Debug, Default, Clone)]
pub struct RawBatch {
    ncols: usize,
    rows: usize,
    /// The batch's input, from its first record to the end of its last.
    input: Vec<u8>,
    /// Fields that unescaping changed.
    bytes: Vec<u8>,
    /// `rows * ncols` entries: offset (into `input`, or `bytes` with
    /// [`SIDE`]) and length (or a marker).
    fields: Vec<(u32, u32)>,
    /// Per row: the line number it ended on.
    lines: Vec<u64>,
    /// Per row: its text in `input`.
    raw: Vec<(u32, u32)>,
}

impl RawBatch {
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn ncols(&self) -> usize {
        self.ncols
    }

    #[inline]
    pub fn field(&self, row: usize, col: usize) -> Field<'_> {
        let (off, len) = self.fields[row * self.ncols + col];
        match len {
            NULL_FIELD => Field::Null,
            MISSING_FIELD => Field::Missing,
            _ if off & SIDE != 0 => {
                let off = (off & !SIDE) as usize;
                Field::Value(&self.bytes[off..off + len as usize])
            }
            _ => Field::Value(&self.input[off as usize..off as usize + len as usize]),
        }
    }

    /// The line row `row` ended on.
    pub fn line(&self, row: usize) -> u64 {
        self.lines[row]
    }

    /// The text of row `row` (for context lines).
    pub fn raw_row(&self, row: usize) -> &[u8] {
        let (s, e) = self.raw[row];
        &self.input[s as usize..e as usize]
    }

    /// Bytes of field data in the batch.
    pub fn data_len(&self) -> usize {
        self.input.len() + self.bytes.len()
    }

    fn clear(&mut self, ncols: usize) {
        self.ncols = ncols;
        self.rows = 0;
        self.input.clear();
        self.bytes.clear();
        self.fields.clear();
        self.lines.clear();
        self.raw.clear();
    }

    fn truncate(&mut self, rows: usize) {
        self.rows = rows;
        self.fields.truncate(rows * self.ncols);
        self.lines.truncate(rows);
        self.raw.truncate(rows);
        // `input` and `bytes` may keep unreferenced tails: harmless.
    }

    /// A field at `at..at + len` of the input (relative to the batch start).
    #[inline]
    fn push_input(&mut self, at: usize, len: usize) {
        self.fields.push((at as u32, len as u32));
    }

    /// Starts a field in the side buffer; [`RawBatch::end_side`] ends it.
    #[inline]
    fn begin_side(&mut self) -> usize {
        self.bytes.len()
    }

    #[inline]
    fn end_side(&mut self, start: usize) {
        self.fields
            .push((start as u32 | SIDE, (self.bytes.len() - start) as u32));
    }
}

/// Reads COPY input into batches (see the module doc).
pub struct CopyReader {
    o: ReaderOptions,
    ncols: usize,
    /// Input bytes at `st.pos..end`; the rest of the vector is room for
    /// reads (kept initialised, so that refills need no zeroing).
    buf: Vec<u8>,
    end: usize,
    st: State,
    /// `\.` was seen or the input ended: no more rows.
    done: bool,
    /// The header line is still to be handled.
    header: bool,
    /// The error of the record that ended the last batch.
    pending: Option<CopyError>,
    /// Bytes that stop the fast scan outside quotes (and in text format).
    plain: Stops,
    /// Bytes that stop the fast scan inside CSV quotes.
    quoted: Stops,
    /// Input bytes received so far.
    pub bytes_in: u64,
}

impl CopyReader {
    pub fn new(o: ReaderOptions) -> CopyReader {
        let opts = &o.options;
        let (plain, quoted) = match opts.format {
            Format::Text => (
                Stops::new(&[b'\n', b'\r', 0, opts.delimiter, b'\\']),
                // Text format has no quotes.
                Stops::new(&[b'\n', b'\r', 0]),
            ),
            Format::Csv => (
                Stops::new(&[b'\n', b'\r', 0, opts.delimiter, opts.quote]),
                Stops::new(&[b'\n', b'\r', 0, opts.quote, opts.escape]),
            ),
        };
        CopyReader {
            ncols: o.columns.len(),
            header: opts.header != Header::Absent,
            o,
            buf: Vec::new(),
            end: 0,
            st: State {
                pos: 0,
                eol: Eol::Unknown,
                line: 0,
                eof: false,
            },
            done: false,
            pending: None,
            plain,
            quoted,
            bytes_in: 0,
        }
    }

    /// Appends input.
    pub fn push(&mut self, chunk: &[u8]) {
        self.compact();
        self.reserve(chunk.len());
        self.buf[self.end..self.end + chunk.len()].copy_from_slice(chunk);
        self.end += chunk.len();
        self.bytes_in += chunk.len() as u64;
    }

    /// Reads input straight into the buffer (up to `max` bytes); returns the
    /// count (0 at the end of `r`).
    pub fn fill_from(&mut self, r: &mut dyn std::io::Read, max: usize) -> std::io::Result<usize> {
        self.compact();
        self.reserve(max);
        let got = loop {
            match r.read(&mut self.buf[self.end..self.end + max]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        self.end += got;
        self.bytes_in += got as u64;
        Ok(got)
    }

    /// Room for `n` more bytes after `end`.
    fn reserve(&mut self, n: usize) {
        if self.buf.len() < self.end + n {
            self.buf.resize(self.end + n, 0);
        }
    }

    /// Moves the unconsumed input to the front.
    fn compact(&mut self) {
        if self.st.pos > 0 {
            self.buf.copy_within(self.st.pos..self.end, 0);
            self.end -= self.st.pos;
            self.st.pos = 0;
        }
    }

    /// No more input will come: the last record needs no line end.
    pub fn finish(&mut self) {
        self.st.eof = true;
    }

    /// Whether the data ended (`\.`, or the input after [`CopyReader::finish`]).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The line the reader is at (the last one consumed).
    pub fn line(&self) -> u64 {
        self.st.line
    }

    /// Fills `out` with the whole records the input holds (up to
    /// [`BATCH_ROWS`]). No rows means more input is needed, or the data
    /// ended ([`CopyReader::is_done`]).
    pub fn read_batch(&mut self, out: &mut RawBatch) -> Result<(), CopyError> {
        out.clear(self.ncols);
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.done {
            return Ok(());
        }
        if self.header {
            match self.read_header()? {
                true => self.header = false,
                false => return Ok(()),
            }
        }
        let batch_start = self.st.pos;
        while out.rows < BATCH_ROWS && !self.done && self.st.pos - batch_start < BATCH_BYTES {
            let fields0 = out.fields.len();
            let bytes0 = out.bytes.len();
            let scan = self.scan(out, self.ncols, batch_start);
            match scan {
                Scan::Row {
                    raw,
                    next,
                    lines,
                    nfields,
                } => {
                    let line = self.st.line + lines;
                    if nfields > self.ncols {
                        self.fail(
                            out,
                            fields0,
                            Failure::Row(
                                bad_format("extra data after last expected column"),
                                line,
                                raw,
                            ),
                        );
                        break;
                    }
                    for _ in nfields..self.ncols {
                        out.fields.push((0, MISSING_FIELD));
                    }
                    out.rows += 1;
                    out.lines.push(line);
                    out.raw
                        .push(((raw.0 - batch_start) as u32, (raw.1 - batch_start) as u32));
                    self.st.line = line;
                    self.st.pos = next;
                }
                Scan::NeedMore => {
                    out.fields.truncate(fields0);
                    out.bytes.truncate(bytes0);
                    break;
                }
                Scan::End(at) => {
                    out.fields.truncate(fields0);
                    self.st.pos = at;
                    self.done = true;
                }
                Scan::Fail(f) => {
                    self.fail(out, fields0, f);
                    break;
                }
            }
        }
        self.check_encoding(out, batch_start);
        if let Some(&(_, end)) = out.raw.last() {
            out.input
                .extend_from_slice(&self.buf[batch_start..batch_start + end as usize]);
        }
        if out.rows == 0 {
            if let Some(e) = self.pending.take() {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Records the error of the record after the batch's rows.
    fn fail(&mut self, out: &mut RawBatch, fields0: usize, f: Failure) {
        out.fields.truncate(fields0);
        let table = &self.o.table;
        // A bad byte in the record is reported before anything else about
        // it: PostgreSQL checks the encoding before parsing.
        let e = match f {
            Failure::Row(e, line, (s, end)) => match check_utf8(&self.buf[s..end]) {
                Ok(_) => CopyError::new(e, Some(row_context(table, line, &self.buf[s..end]))),
                Err(bad) => CopyError::new(bad, Some(line_context(table, line))),
            },
            Failure::Line(e, line) => CopyError::new(e, Some(line_context(table, line))),
        };
        self.pending = Some(e);
        self.done = true;
    }

    /// Checks the batch's input for UTF-8; cuts it before the first row
    /// with a bad byte, which becomes the pending error.
    fn check_encoding(&mut self, out: &mut RawBatch, batch_start: usize) {
        if out.rows == 0 {
            return;
        }
        let end = batch_start + out.raw[out.rows - 1].1 as usize;
        let Err(e) = std::str::from_utf8(&self.buf[batch_start..end]) else {
            return;
        };
        let bad = e.valid_up_to();
        let row = out.raw.partition_point(|&(_, e)| e as usize <= bad);
        let err = crate::text::invalid_utf8(&self.buf[..self.end], batch_start + bad);
        let line = out.lines[row];
        out.truncate(row);
        self.pending = Some(CopyError::new(err, Some(line_context(&self.o.table, line))));
        self.done = true;
    }

    /// Handles the header line: skipped, or checked against the column
    /// names (`HEADER MATCH`). False if more input is needed.
    fn read_header(&mut self) -> Result<bool, CopyError> {
        let mut fields = RawBatch::default();
        fields.clear(usize::MAX);
        let start = self.st.pos;
        let scan = self.scan(&mut fields, usize::MAX, start);
        let (raw, next, lines, nfields) = match scan {
            Scan::Row {
                raw,
                next,
                lines,
                nfields,
            } => (raw, next, lines, nfields),
            Scan::NeedMore => return Ok(false),
            Scan::End(at) => {
                if self.o.options.header == Header::Match {
                    // PostgreSQL checks an empty line at the end of the input.
                    fields.ncols = 1;
                    if self.o.options.null.is_empty() {
                        fields.fields.push((0, NULL_FIELD));
                    } else {
                        fields.push_input(0, 0);
                    }
                    self.check_header(&fields, 1, b"", self.st.line + 1)?;
                }
                self.st.pos = at;
                self.done = true;
                return Ok(true);
            }
            Scan::Fail(f) => {
                let mut dummy = RawBatch::default();
                self.fail(&mut dummy, 0, f);
                return Err(self.pending.take().expect("just failed"));
            }
        };
        let line = self.st.line + lines;
        let table = &self.o.table;
        let text = &self.buf[raw.0..raw.1];
        fields.input.extend_from_slice(&self.buf[start..raw.1]);
        if let Err(bad) = check_utf8(text) {
            return Err(CopyError::new(bad, Some(line_context(table, line))));
        }
        if self.o.options.header == Header::Match {
            fields.ncols = nfields;
            let text = text.to_vec();
            self.check_header(&fields, nfields, &text, line)?;
        }
        self.st.line = line;
        self.st.pos = next;
        Ok(true)
    }

    /// `HEADER MATCH`: the header line (`text`, `nfields` fields in
    /// `fields`, ending on line `line`) must name the columns in order.
    fn check_header(
        &self,
        fields: &RawBatch,
        nfields: usize,
        text: &[u8],
        line: u64,
    ) -> Result<(), CopyError> {
        let table = &self.o.table;
        let context = || Some(row_context(table, line, text));
        if nfields != self.ncols {
            return Err(CopyError::new(
                bad_format(&format!(
                    "wrong number of fields in header line: got {nfields}, expected {}",
                    self.ncols
                )),
                context(),
            ));
        }
        for (i, name) in self.o.columns.iter().enumerate() {
            let message = match fields.field(0, i) {
                Field::Value(v) if v == name.as_bytes() => continue,
                Field::Value(v) => format!(
                    "column name mismatch in header line field {}: got \"{}\", expected \"{name}\"",
                    i + 1,
                    String::from_utf8_lossy(v)
                ),
                _ => format!(
                    "column name mismatch in header line field {}: got null value (\"{}\"), expected \"{name}\"",
                    i + 1,
                    String::from_utf8_lossy(&self.o.options.null)
                ),
            };
            return Err(CopyError::new(bad_format(&message), context()));
        }
        Ok(())
    }
    /// Scans the next record into `out`, whose input starts at `base`.
    fn scan(&mut self, out: &mut RawBatch, cap: usize, base: usize) -> Scan {
        let buf = &self.buf[..self.end];
        match self.o.options.format {
            Format::Text => scan_text(buf, &mut self.st, &self.o, &self.plain, (out, base), cap),
            Format::Csv => scan_csv(
                buf,
                &mut self.st,
                &self.o,
                (&self.plain, &self.quoted),
                (out, base),
                cap,
            ),
        }
    }
}

#[cfg(test)]
mod tests;
