//! COPY TO's output: batches as lines of text or CSV, byte for byte as
//! PostgreSQL 15 writes them (`CopyAttributeOutText`, `CopyAttributeOutCSV`).
//!
//! * **Text.** Fields are separated by the delimiter, rows end with `\n`,
//!   NULL is the NULL string. In a value a backslash becomes `\\`, the
//!   delimiter `\` and itself, and backspace, form feed, newline, carriage
//!   return, tab and vertical tab `\b \f \n \r \t \v`; other bytes are
//!   written as they are.
//! * **CSV.** NULL is the NULL string, unquoted. A value is quoted when
//!   `FORCE_QUOTE` names its column, when it equals the NULL string, when it
//!   holds the delimiter, the quote, a newline or a carriage return, or when
//!   it is `\.` as the only column; inside quotes the quote and escape bytes
//!   are preceded by the escape byte.
//! * **Header.** The column names, written like values.
//!
//! Values are written with their type's output function: integers and
//! strings straight into the output buffer, everything else through
//! [`cast::output`](crate::cast::output) in the session's styles
//! (`DateStyle`, `IntervalStyle`, `extra_float_digits`).

use super::{CopyOptions, Format};
use crate::cast;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::DataType;
use tusk_types::datetime::date_to_ymd;
use tusk_types::scalar::{format_int, IntText};
use tusk_types::settings::DateStyle;
use tusk_types::Settings;

/// What a [`CopyWriter`] needs besides the format options.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    pub options: CopyOptions,
    /// The output columns' names (for the header) and types.
    pub columns: Vec<String>,
    pub types: Vec<DataType>,
    /// Per column: `FORCE_QUOTE` (CSV).
    pub force_quote: Vec<bool>,
    /// The styles values are written in.
    pub settings: Settings,
}

/// Writes rows in a COPY format (see the module doc).
pub struct CopyWriter {
    o: WriterOptions,
    /// Bytes that make a text-format value need escapes.
    text_special: [bool; 256],
    /// Bytes that make a CSV value need quotes.
    csv_special: [bool; 256],
    scratch: Vec<u8>,
}

impl CopyWriter {
    pub fn new(o: WriterOptions) -> CopyWriter {
        let opts = &o.options;
        let mut text_special = [false; 256];
        for b in [b'\\', opts.delimiter, 8, 12, b'\n', b'\r', b'\t', 11] {
            text_special[b as usize] = true;
        }
        let mut csv_special = [false; 256];
        for b in [opts.delimiter, opts.quote, b'\n', b'\r'] {
            csv_special[b as usize] = true;
        }
        CopyWriter {
            o,
            text_special,
            csv_special,
            scratch: Vec::new(),
        }
    }

    /// The header line (column names).
    pub fn header(&mut self, out: &mut Vec<u8>) {
        let names = std::mem::take(&mut self.o.columns);
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                out.push(self.o.options.delimiter);
            }
            self.value(out, name.as_bytes(), false);
        }
        out.push(b'\n');
        self.o.columns = names;
    }

    /// Appends the rows of `b` to `out`.
    pub fn batch(&mut self, b: &Batch, out: &mut Vec<u8>) {
        let delimiter = self.o.options.delimiter;
        let mut num = IntText::default();
        let mut dec = [0u8; DECIMAL_BUF];
        let mut date = [0u8; 10];
        for r in 0..b.len {
            for (c, col) in b.columns.iter().enumerate() {
                if c > 0 {
                    out.push(delimiter);
                }
                if col.is_null(r) {
                    out.extend_from_slice(&self.o.options.null);
                    continue;
                }
                let force = self.o.force_quote.get(c).copied().unwrap_or(false);
                match &col.data {
                    Data::Int4(d) if self.o.types[c] == DataType::Int4 => {
                        self.plain(out, format_int(&mut num, d[r] as i64), force)
                    }
                    Data::Int8(d) if self.o.types[c] == DataType::Int8 => {
                        self.plain(out, format_int(&mut num, d[r]), force)
                    }
                    Data::Int2(d) => self.plain(out, format_int(&mut num, d[r] as i64), force),
                    Data::Bool(d) => self.plain(out, if d[r] { b"t" } else { b"f" }, force),
                    Data::Text(s) => self.value(out, s.get(r), force),
                    Data::Numeric(d) => match d[r]
                        .to_storage_parts()
                        .and_then(|(u, s)| format_decimal(&mut dec, u, s))
                    {
                        Some(text) => self.plain(out, text, force),
                        None => self.general(out, col, r, c, force),
                    },
                    Data::Int4(d)
                        if self.o.types[c] == DataType::Date
                            && self.o.settings.date_style == DateStyle::Iso =>
                    {
                        match format_iso_date(&mut date, d[r]) {
                            Some(text) => self.plain(out, text, force),
                            None => self.general(out, col, r, c, force),
                        }
                    }
                    _ => self.general(out, col, r, c, force),
                }
            }
            out.push(b'\n');
        }
    }

    /// A value through its type's output function.
    fn general(&mut self, out: &mut Vec<u8>, col: &Vector, r: usize, c: usize, force: bool) {
        let value = col.value_as(r, self.o.types[c]);
        let text = cast::output(&value, &self.o.settings).unwrap_or_default();
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.extend_from_slice(text.as_bytes());
        self.value(out, &scratch, force);
        self.scratch = scratch;
    }

    /// A value that never needs escapes in text format (digits, `t`/`f`),
    /// but may need quotes in CSV (a delimiter or NULL string of digits).
    #[inline]
    fn plain(&self, out: &mut Vec<u8>, v: &[u8], force: bool) {
        match self.o.options.format {
            Format::Text if !v.contains(&self.o.options.delimiter) => out.extend_from_slice(v),
            _ => self.value(out, v, force),
        }
    }

    /// One non-NULL value, escaped or quoted as the format demands.
    fn value(&self, out: &mut Vec<u8>, v: &[u8], force: bool) {
        let o = &self.o.options;
        match o.format {
            Format::Text => {
                let mut start = 0;
                for (i, &b) in v.iter().enumerate() {
                    if !self.text_special[b as usize] {
                        continue;
                    }
                    out.extend_from_slice(&v[start..i]);
                    out.push(b'\\');
                    out.push(match b {
                        8 => b'b',
                        12 => b'f',
                        b'\n' => b'n',
                        b'\r' => b'r',
                        b'\t' => b't',
                        11 => b'v',
                        other => other,
                    });
                    start = i + 1;
                }
                out.extend_from_slice(&v[start..]);
            }
            Format::Csv => {
                let quote = force
                    || v == o.null.as_slice()
                    || (self.o.types.len() == 1 && v == b"\\.")
                    || v.iter().any(|&b| self.csv_special[b as usize]);
                if !quote {
                    out.extend_from_slice(v);
                    return;
                }
                out.push(o.quote);
                let mut start = 0;
                for (i, &b) in v.iter().enumerate() {
                    if b == o.quote || b == o.escape {
                        out.extend_from_slice(&v[start..i]);
                        out.push(o.escape);
                        start = i;
                    }
                }
                out.extend_from_slice(&v[start..]);
                out.push(o.quote);
            }
        }
    }
}

/// Bytes of the longest decimal [`format_decimal`] writes: a sign, 39
/// digits, a point and a leading zero.
const DECIMAL_BUF: usize = 48;

/// `numeric` output of `unscaled / 10^scale` (PostgreSQL prints exactly
/// `scale` digits after the point), or `None` past 38 digits of scale.
#[inline]
fn format_decimal(buf: &mut [u8; DECIMAL_BUF], unscaled: i128, scale: u16) -> Option<&[u8]> {
    let scale = scale as usize;
    if scale > 38 {
        return None;
    }
    let mut x = unscaled.unsigned_abs();
    let mut i = buf.len();
    let mut written = 0;
    // At least one digit before the point.
    while x > 0 || written <= scale {
        if written == scale && scale > 0 {
            i -= 1;
            buf[i] = b'.';
        }
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
        written += 1;
    }
    if unscaled < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    Some(&buf[i..])
}

/// A finite date of years 1 to 9999 in ISO style (`YYYY-MM-DD`).
#[inline]
fn format_iso_date(buf: &mut [u8; 10], days: i32) -> Option<&[u8]> {
    if !tusk_types::datetime::date_is_finite(days) {
        return None;
    }
    let (y, m, d) = date_to_ymd(days);
    if !(1..=9999).contains(&y) {
        return None;
    }
    let y = y as u32;
    *buf = [
        b'0' + (y / 1000) as u8,
        b'0' + (y / 100 % 10) as u8,
        b'0' + (y / 10 % 10) as u8,
        b'0' + (y % 10) as u8,
        b'-',
        b'0' + (m / 10) as u8,
        b'0' + (m % 10) as u8,
        b'-',
        b'0' + (d / 10) as u8,
        b'0' + (d % 10) as u8,
    ];
    Some(&buf[..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::{Strings, Vector};

    fn writer(format: Format, types: Vec<DataType>) -> CopyWriter {
        let n = types.len();
        CopyWriter::new(WriterOptions {
            options: CopyOptions::new(format),
            columns: (0..n).map(|i| format!("c{i}")).collect(),
            types,
            force_quote: vec![false; n],
            settings: Settings::default(),
        })
    }

    fn texts(values: &[Option<&str>]) -> Vector {
        let mut s = Strings::new();
        for v in values {
            s.push(v.unwrap_or("").as_bytes());
        }
        Vector::new(
            Data::Text(s),
            Some(values.iter().map(|v| v.is_none()).collect()),
        )
    }

    // Expected bytes from PostgreSQL 15 (`COPY u TO STDOUT ...`).
    const VALUES: [Option<&str>; 7] = [
        Some("a\tb\nc\\d\u{1}A"),
        None,
        Some("\\N"),
        Some(""),
        Some("a\"b"),
        Some(" "),
        Some("\u{8}\u{c}\u{b}\r,x"),
    ];

    fn write(w: &mut CopyWriter, ints: Vec<i32>, values: &[Option<&str>]) -> String {
        let n = values.len();
        let b = Batch::new(vec![Vector::new(Data::Int4(ints), None), texts(values)], n);
        let mut out = Vec::new();
        w.batch(&b, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_escapes() {
        let mut w = writer(Format::Text, vec![DataType::Int4, DataType::Text]);
        assert_eq!(
            write(&mut w, (1..=7).collect(), &VALUES),
            "1\ta\\tb\\nc\\\\d\u{1}A\n2\t\\N\n3\t\\\\N\n4\t\n5\ta\"b\n6\t \n7\t\\b\\f\\v\\r,x\n"
        );
        let mut o = CopyOptions::new(Format::Text);
        o.delimiter = b'|';
        o.null = b"NULL".to_vec();
        let mut w = CopyWriter::new(WriterOptions {
            options: o,
            columns: vec!["a".into(), "b|c".into()],
            types: vec![DataType::Int4, DataType::Text],
            force_quote: vec![false; 2],
            settings: Settings::default(),
        });
        assert_eq!(
            write(&mut w, vec![-5, 6], &[Some("x|y"), None]),
            "-5|x\\|y\n6|NULL\n"
        );
        let mut h = Vec::new();
        w.header(&mut h);
        assert_eq!(h, b"a|b\\|c\n");
    }

    #[test]
    fn csv_quoting() {
        let mut w = writer(Format::Csv, vec![DataType::Int4, DataType::Text]);
        assert_eq!(
            write(&mut w, (1..=7).collect(), &VALUES),
            "1,\"a\tb\nc\\d\u{1}A\"\n2,\n3,\\N\n4,\"\"\n5,\"a\"\"b\"\n6, \n7,\"\u{8}\u{c}\u{b}\r,x\"\n"
        );
        let mut o = CopyOptions::new(Format::Csv);
        o.quote = b'\'';
        o.escape = b'\\';
        let mut w = CopyWriter::new(WriterOptions {
            options: o,
            columns: vec!["a".into(), "b".into()],
            types: vec![DataType::Int4, DataType::Text],
            force_quote: vec![true, true],
            settings: Settings::default(),
        });
        assert_eq!(
            write(&mut w, vec![1, 2, 3], &[Some("it's"), None, Some("a\\b")]),
            "'1','it\\'s'\n'2',\n'3','a\\\\b'\n"
        );
    }

    #[test]
    fn csv_end_marker_is_quoted_when_alone() {
        let mut w = writer(Format::Csv, vec![DataType::Text]);
        let b = Batch::new(vec![texts(&[Some("\\."), Some("x")])], 2);
        let mut out = Vec::new();
        w.batch(&b, &mut out);
        assert_eq!(out, b"\"\\.\"\nx\n");
    }

    #[test]
    fn decimals_and_dates() {
        let mut b = [0u8; DECIMAL_BUF];
        for (u, s, want) in [
            (150i128, 2u16, "1.50"),
            (-5, 2, "-0.05"),
            (0, 2, "0.00"),
            (0, 0, "0"),
            (-123456, 0, "-123456"),
            (7, 1, "0.7"),
            (i128::MAX, 38, "1.70141183460469231731687303715884105727"),
        ] {
            assert_eq!(format_decimal(&mut b, u, s).unwrap(), want.as_bytes());
        }
        assert!(format_decimal(&mut b, 1, 39).is_none());
        let mut d = [0u8; 10];
        let day = tusk_types::datetime::ymd_to_date(1992, 1, 2) as i32;
        assert_eq!(format_iso_date(&mut d, day).unwrap(), b"1992-01-02");
        assert_eq!(format_iso_date(&mut d, 0).unwrap(), b"2000-01-01");
        let bc = tusk_types::datetime::ymd_to_date(-43, 3, 15) as i32;
        assert!(format_iso_date(&mut d, bc).is_none());
        assert!(format_iso_date(&mut d, i32::MAX).is_none());
    }

    #[test]
    fn integers() {
        let mut buf = IntText::default();
        assert_eq!(format_int(&mut buf, 0), b"0");
        assert_eq!(format_int(&mut buf, i64::MIN), b"-9223372036854775808");
        assert_eq!(format_int(&mut buf, 1234), b"1234");
    }
}
