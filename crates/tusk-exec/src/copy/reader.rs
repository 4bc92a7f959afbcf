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

use super::{line_context, row_context, CopyError, CopyOptions, Format, Header};
use crate::error::{sqlstate, ExecError};
use crate::text::check_utf8;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eol {
    Unknown,
    Nl,
    Cr,
    CrNl,
}

/// Scanner state that survives between records.
#[derive(Debug)]
struct State {
    pos: usize,
    eol: Eol,
    /// The last line consumed.
    line: u64,
    /// No more input will come.
    eof: bool,
}

/// A record that broke a rule: its error and where it is.
enum Failure {
    /// `COPY t, line N` (the line is not shown).
    Line(ExecError, u64),
    /// `COPY t, line N: "text"`.
    Row(ExecError, u64, (usize, usize)),
}

enum Scan {
    /// A whole record; its raw text, the position after it, the lines it
    /// took and whether fields beyond the columns were found.
    Row {
        raw: (usize, usize),
        next: usize,
        lines: u64,
        nfields: usize,
    },
    NeedMore,
    /// The end of the data: `\.` or the end of the input, and where the
    /// reader stops.
    End(usize),
    Fail(Failure),
}

fn bad_format(message: &str) -> ExecError {
    ExecError::coded(sqlstate::BAD_COPY_FILE_FORMAT, message)
}

fn eol_error(csv: bool, newline: bool) -> ExecError {
    match (csv, newline) {
        (false, true) => bad_format("literal newline found in data")
            .with_hint("Use \"\\n\" to represent newline."),
        (false, false) => bad_format("literal carriage return found in data")
            .with_hint("Use \"\\r\" to represent carriage return."),
        (true, true) => bad_format("unquoted newline found in data")
            .with_hint("Use quoted CSV field to represent newline."),
        (true, false) => bad_format("unquoted carriage return found in data")
            .with_hint("Use quoted CSV field to represent carriage return."),
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
    plain: [bool; 256],
    /// Bytes that stop the fast scan inside CSV quotes.
    quoted: [bool; 256],
    /// Input bytes received so far.
    pub bytes_in: u64,
}

impl CopyReader {
    pub fn new(o: ReaderOptions) -> CopyReader {
        let opts = &o.options;
        let mut plain = [false; 256];
        let mut quoted = [false; 256];
        for b in [b'\n', b'\r', 0, opts.delimiter] {
            plain[b as usize] = true;
        }
        match opts.format {
            Format::Text => plain[b'\\' as usize] = true,
            Format::Csv => {
                plain[opts.quote as usize] = true;
                for b in [b'\n', b'\r', 0, opts.quote, opts.escape] {
                    quoted[b as usize] = true;
                }
            }
        }
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

/// The line end at `buf[p]` (`\n` or `\r`): `Ok(Some(next))`, `Ok(None)`
/// if the next byte is needed and not there yet, or the error.
fn line_end(buf: &[u8], p: usize, st: &mut State, csv: bool) -> Result<Option<usize>, ExecError> {
    if buf[p] == b'\n' {
        if matches!(st.eol, Eol::Cr | Eol::CrNl) {
            return Err(eol_error(csv, true));
        }
        st.eol = Eol::Nl;
        return Ok(Some(p + 1));
    }
    match st.eol {
        Eol::Nl => Err(eol_error(csv, false)),
        Eol::Cr => Ok(Some(p + 1)),
        Eol::Unknown | Eol::CrNl => {
            if p + 1 >= buf.len() && !st.eof {
                return Ok(None);
            }
            if buf.get(p + 1) == Some(&b'\n') {
                st.eol = Eol::CrNl;
                return Ok(Some(p + 2));
            }
            if st.eol == Eol::CrNl {
                return Err(eol_error(csv, false));
            }
            st.eol = Eol::Cr;
            Ok(Some(p + 1))
        }
    }
}

/// What `\.` at `buf[p]` turns out to be.
enum Marker {
    NeedMore,
    /// The end-of-data marker; the position after its line end.
    End(usize),
    /// Data (CSV only).
    Data,
    Fail(ExecError),
}

/// Checks the end-of-data marker `\.` at `buf[p]` against the line end
/// that must follow it (PostgreSQL's checks; CSV treats a mismatch as data).
fn end_marker(buf: &[u8], p: usize, st: &State, csv: bool) -> Marker {
    let corrupt = || {
        if csv {
            Marker::Data
        } else {
            Marker::Fail(bad_format("end-of-copy marker corrupt"))
        }
    };
    let mut q = p + 2;
    let at = |q: usize| buf.get(q).copied();
    if st.eol == Eol::CrNl {
        match at(q) {
            None if !st.eof => return Marker::NeedMore,
            Some(b'\n') if !csv => {
                return Marker::Fail(bad_format(
                    "end-of-copy marker does not match previous newline style",
                ))
            }
            Some(b'\r') => q += 1,
            _ => return corrupt(),
        }
    }
    let c = match at(q) {
        None if !st.eof => return Marker::NeedMore,
        None => return corrupt(),
        Some(c) => c,
    };
    if c != b'\r' && c != b'\n' {
        return corrupt();
    }
    let expected = match st.eol {
        Eol::Cr => b'\r',
        Eol::Nl | Eol::CrNl => b'\n',
        Eol::Unknown => c,
    };
    if c != expected {
        return Marker::Fail(bad_format(
            "end-of-copy marker does not match previous newline style",
        ));
    }
    Marker::End(q + 1)
}

/// Appends a text-format field `raw`, at `at` in the batch's input, to
/// `out`: NULL if it equals the NULL string, else unescaped (into the side
/// buffer only if it has escapes).
#[inline]
fn push_text_field(
    out: &mut RawBatch,
    raw: &[u8],
    at: usize,
    escaped: bool,
    null: &[u8],
) -> Result<(), ExecError> {
    if raw == null {
        out.fields.push((0, NULL_FIELD));
        return Ok(());
    }
    if !escaped {
        out.push_input(at, raw.len());
        return Ok(());
    }
    let off = out.begin_side();
    let made_bytes = unescape_text(raw, &mut out.bytes);
    if made_bytes {
        check_utf8(&out.bytes[off..])?;
    }
    out.end_side(off);
    Ok(())
}

/// A CSV field with quotes, as its value: quotes dropped, and inside them
/// the escape byte before a quote or escape byte dropped.
fn unescape_csv(raw: &[u8], quote: u8, escape: u8, out: &mut Vec<u8>) {
    let mut quoted = false;
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        if !quoted {
            if c == quote {
                quoted = true;
            } else {
                out.push(c);
            }
            continue;
        }
        if c == escape {
            if let Some(&next) = raw.get(i) {
                if next == quote || next == escape {
                    out.push(next);
                    i += 1;
                    continue;
                }
            }
        }
        if c == quote {
            quoted = false;
        } else {
            out.push(c);
        }
    }
}

fn octal(b: u8) -> Option<u8> {
    (b'0'..=b'7').contains(&b).then(|| b - b'0')
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Text format's backslash escapes; returns whether an escape produced a
/// byte that is not ASCII or is NUL (the field must be checked for UTF-8).
pub fn unescape_text(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let mut made = false;
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&c2) = raw.get(i) else {
            // A backslash at the very end of the input is dropped.
            break;
        };
        i += 1;
        let b = match c2 {
            b'0'..=b'7' => {
                let mut v = c2 - b'0';
                for _ in 0..2 {
                    match raw.get(i).and_then(|&d| octal(d)) {
                        Some(d) => {
                            v = v.wrapping_mul(8).wrapping_add(d);
                            i += 1;
                        }
                        None => break,
                    }
                }
                made |= v == 0 || v >= 0x80;
                v
            }
            b'x' => match raw.get(i).and_then(|&d| hex(d)) {
                Some(d) => {
                    i += 1;
                    let mut v = d;
                    if let Some(d2) = raw.get(i).and_then(|&d| hex(d)) {
                        v = v * 16 + d2;
                        i += 1;
                    }
                    made |= v == 0 || v >= 0x80;
                    v
                }
                None => b'x',
            },
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 11,
            other => other,
        };
        out.push(b);
    }
    made
}

fn scan_text(
    buf: &[u8],
    st: &mut State,
    o: &ReaderOptions,
    special: &[bool; 256],
    (out, base): (&mut RawBatch, usize),
    cap: usize,
) -> Scan {
    let start = st.pos;
    let n = buf.len();
    let delim = o.options.delimiter;
    let null = &o.options.null[..];
    let line = st.line + 1;
    let mut p = start;
    let mut fstart = p;
    let mut escaped = false;
    let mut nfields = 0usize;
    let mut marker = false;
    let (end, next) = loop {
        while p < n && !special[buf[p] as usize] {
            p += 1;
        }
        if p >= n {
            if !st.eof {
                return Scan::NeedMore;
            }
            if p == start {
                return Scan::End(p);
            }
            break (p, p);
        }
        let b = buf[p];
        if b == delim {
            if nfields < cap {
                if let Err(e) = push_text_field(out, &buf[fstart..p], fstart - base, escaped, null)
                {
                    return Scan::Fail(Failure::Row(e, line, (start, p)));
                }
            }
            nfields += 1;
            p += 1;
            fstart = p;
            escaped = false;
            continue;
        }
        match b {
            b'\n' | b'\r' => match line_end(buf, p, st, false) {
                Ok(Some(next)) => break (p, next),
                Ok(None) => return Scan::NeedMore,
                Err(e) => return Scan::Fail(Failure::Line(e, line)),
            },
            b'\\' => {
                if p + 1 >= n {
                    if !st.eof {
                        return Scan::NeedMore;
                    }
                    escaped = true;
                    p += 1;
                    continue;
                }
                if buf[p + 1] == b'.' {
                    match end_marker(buf, p, st, false) {
                        Marker::NeedMore => return Scan::NeedMore,
                        Marker::End(after) => {
                            marker = true;
                            break (p, after);
                        }
                        Marker::Fail(e) => return Scan::Fail(Failure::Line(e, line)),
                        Marker::Data => unreachable!("text format has no data markers"),
                    }
                }
                escaped = true;
                p += 2;
            }
            _ => {
                // NUL: not a character of UTF-8.
                return Scan::Fail(Failure::Line(crate::text::invalid_utf8(buf, p), line));
            }
        }
    };
    if marker && end == start {
        return Scan::End(next);
    }
    if nfields < cap {
        if let Err(e) = push_text_field(out, &buf[fstart..end], fstart - base, escaped, null) {
            return Scan::Fail(Failure::Row(e, line, (start, end)));
        }
    }
    Scan::Row {
        raw: (start, end),
        next,
        lines: 1,
        nfields: nfields + 1,
    }
}

fn scan_csv(
    buf: &[u8],
    st: &mut State,
    o: &ReaderOptions,
    (plain, quoted): (&[bool; 256], &[bool; 256]),
    (out, base): (&mut RawBatch, usize),
    cap: usize,
) -> Scan {
    let start = st.pos;
    let n = buf.len();
    let opts = &o.options;
    let (delim, quote, escape) = (opts.delimiter, opts.quote, opts.escape);
    let null = &opts.null[..];
    let mut p = start;
    if p >= n {
        return if st.eof { Scan::End(p) } else { Scan::NeedMore };
    }
    if buf[p] == b'\\' {
        if p + 1 >= n && !st.eof {
            return Scan::NeedMore;
        }
        if buf.get(p + 1) == Some(&b'.') {
            match end_marker(buf, p, st, true) {
                Marker::NeedMore => return Scan::NeedMore,
                Marker::End(after) => return Scan::End(after),
                Marker::Fail(e) => return Scan::Fail(Failure::Line(e, st.line + 1)),
                Marker::Data => {}
            }
        }
    }
    // Newlines inside quotes count as lines once the line end is known.
    let counted = match st.eol {
        Eol::Unknown => None,
        Eol::Cr => Some(b'\r'),
        _ => Some(b'\n'),
    };
    let mut embedded = 0u64;
    let mut nfields = 0usize;
    loop {
        let fstart = p;
        let mut saw_quote = false;
        // How the field ended: at a delimiter (`Some(p after it)`) or at
        // the record's end (`None`, with `end`/`next` set).
        let mut record_end = None;
        let fend;
        'field: loop {
            // Outside quotes.
            'outside: {
                while p < n && !plain[buf[p] as usize] {
                    p += 1;
                }
                if p >= n {
                    if !st.eof {
                        return Scan::NeedMore;
                    }
                    fend = p;
                    record_end = Some((p, p));
                    break 'field;
                }
                let b = buf[p];
                if b == delim {
                    fend = p;
                    p += 1;
                    break 'field;
                }
                if b == quote {
                    saw_quote = true;
                    p += 1;
                    break 'outside;
                }
                if b == b'\n' || b == b'\r' {
                    match line_end(buf, p, st, true) {
                        Ok(Some(next)) => {
                            fend = p;
                            record_end = Some((p, next));
                            break 'field;
                        }
                        Ok(None) => return Scan::NeedMore,
                        Err(e) => return Scan::Fail(Failure::Line(e, st.line + 1 + embedded)),
                    }
                }
                return Scan::Fail(Failure::Line(
                    crate::text::invalid_utf8(buf, p),
                    st.line + 1 + embedded,
                ));
            }
            // Inside quotes.
            loop {
                while p < n && !quoted[buf[p] as usize] {
                    p += 1;
                }
                if p >= n {
                    if !st.eof {
                        return Scan::NeedMore;
                    }
                    return Scan::Fail(Failure::Row(
                        bad_format("unterminated CSV quoted field"),
                        st.line + 1 + embedded,
                        (start, n),
                    ));
                }
                let b = buf[p];
                if b == escape {
                    if p + 1 >= n && !st.eof {
                        return Scan::NeedMore;
                    }
                    if let Some(&c) = buf.get(p + 1) {
                        if c == escape || c == quote {
                            p += 2;
                            continue;
                        }
                    }
                }
                if b == quote {
                    p += 1;
                    break;
                }
                if b == 0 {
                    return Scan::Fail(Failure::Line(
                        crate::text::invalid_utf8(buf, p),
                        st.line + 1 + embedded,
                    ));
                }
                if Some(b) == counted {
                    embedded += 1;
                }
                p += 1;
            }
        }
        if nfields < cap {
            let raw = &buf[fstart..fend];
            let i = nfields;
            if !saw_quote {
                if raw == null && !o.force_not_null.get(i).copied().unwrap_or(false) {
                    out.fields.push((0, NULL_FIELD));
                } else {
                    out.push_input(fstart - base, raw.len());
                }
            } else {
                let off = out.begin_side();
                unescape_csv(raw, quote, escape, &mut out.bytes);
                if o.force_null.get(i).copied().unwrap_or(false) && &out.bytes[off..] == null {
                    out.bytes.truncate(off);
                    out.fields.push((0, NULL_FIELD));
                } else {
                    out.end_side(off);
                }
            }
        }
        nfields += 1;
        if let Some((end, next)) = record_end {
            return Scan::Row {
                raw: (start, end),
                next,
                lines: 1 + embedded,
                nfields,
            };
        }
    }
}

#[cfg(test)]
mod tests;
