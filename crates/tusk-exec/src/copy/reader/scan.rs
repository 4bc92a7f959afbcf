//! The scanners: one record of text or CSV input at a time, its field
//! boundaries found in one pass and the fields recorded in a
//! [`RawBatch`] (see the parent module for the rules they follow).
//!
//! A scanner never consumes input itself: it returns where the record ends
//! ([`Scan::Row`]), that it needs more input, that the data ended, or how
//! the record broke a rule. Line ends and the end marker `\.` are checked
//! here too, against the line end the first record chose ([`State`]).

use super::stops::Stops;
use super::{RawBatch, ReaderOptions, NULL_FIELD};
use crate::error::{sqlstate, ExecError};
use crate::text::check_utf8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Eol {
    Unknown,
    Nl,
    Cr,
    CrNl,
}

/// Scanner state that survives between records.
#[derive(Debug)]
pub(super) struct State {
    pub(super) pos: usize,
    pub(super) eol: Eol,
    /// The last line consumed.
    pub(super) line: u64,
    /// No more input will come.
    pub(super) eof: bool,
}

/// A record that broke a rule: its error and where it is.
pub(super) enum Failure {
    /// `COPY t, line N` (the line is not shown).
    Line(ExecError, u64),
    /// `COPY t, line N: "text"`.
    Row(ExecError, u64, (usize, usize)),
}

pub(super) enum Scan {
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

pub(super) fn bad_format(message: &str) -> ExecError {
    ExecError::coded(sqlstate::BAD_COPY_FILE_FORMAT, message)
}

pub(super) fn eol_error(csv: bool, newline: bool) -> ExecError {
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

/// The line end at `buf[p]` (`\n` or `\r`): `Ok(Some(next))`, `Ok(None)`
/// if the next byte is needed and not there yet, or the error.
pub(super) fn line_end(
    buf: &[u8],
    p: usize,
    st: &mut State,
    csv: bool,
) -> Result<Option<usize>, ExecError> {
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
pub(super) enum Marker {
    NeedMore,
    /// The end-of-data marker; the position after its line end.
    End(usize),
    /// Data (CSV only).
    Data,
    Fail(ExecError),
}

/// Checks the end-of-data marker `\.` at `buf[p]` against the line end
/// that must follow it (PostgreSQL's checks; CSV treats a mismatch as data).
pub(super) fn end_marker(buf: &[u8], p: usize, st: &State, csv: bool) -> Marker {
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
pub(super) fn push_text_field(
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
pub(super) fn unescape_csv(raw: &[u8], quote: u8, escape: u8, out: &mut Vec<u8>) {
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

pub(super) fn scan_text(
    buf: &[u8],
    st: &mut State,
    o: &ReaderOptions,
    special: &Stops,
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
        p = special.find(buf, p);
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

pub(super) fn scan_csv(
    buf: &[u8],
    st: &mut State,
    o: &ReaderOptions,
    (plain, quoted): (&Stops, &Stops),
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
                p = plain.find(buf, p);
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
                p = quoted.find(buf, p);
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
