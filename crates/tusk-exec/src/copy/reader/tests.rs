//! Reader tests. Expected outcomes come from PostgreSQL 15 (`COPY u (a int,
//! b text) FROM 'file'` with the same bytes).

use super::*;

fn opts(format: Format, ncols: usize) -> ReaderOptions {
    ReaderOptions {
        options: CopyOptions::new(format),
        table: "u".into(),
        columns: ["a", "b", "c", "d"][..ncols]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        force_not_null: vec![false; ncols],
        force_null: vec![false; ncols],
    }
}

/// Rows as strings (`NULL` / `MISSING` for the markers), and the error.
fn read_with(
    o: ReaderOptions,
    chunks: &[&[u8]],
) -> (Vec<Vec<String>>, Vec<u64>, Option<CopyError>) {
    let mut r = CopyReader::new(o);
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    let mut b = RawBatch::default();
    let mut drain = |r: &mut CopyReader, rows: &mut Vec<Vec<String>>| -> Option<CopyError> {
        loop {
            if let Err(e) = r.read_batch(&mut b) {
                return Some(e);
            }
            if b.rows() == 0 {
                return None;
            }
            for i in 0..b.rows() {
                lines.push(b.line(i));
                rows.push(
                    (0..b.ncols())
                        .map(|c| match b.field(i, c) {
                            Field::Value(v) => String::from_utf8_lossy(v).into_owned(),
                            Field::Null => "NULL".into(),
                            Field::Missing => "MISSING".into(),
                        })
                        .collect(),
                );
            }
        }
    };
    for c in chunks {
        r.push(c);
        if let Some(e) = drain(&mut r, &mut rows) {
            return (rows, lines, Some(e));
        }
    }
    r.finish();
    let e = drain(&mut r, &mut rows);
    (rows, lines, e)
}

fn read(format: Format, ncols: usize, input: &[u8]) -> (Vec<Vec<String>>, Option<CopyError>) {
    let (rows, _, e) = read_with(opts(format, ncols), &[input]);
    // Byte-at-a-time input must give the same answer.
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    let (rows1, _, e1) = read_with(opts(format, ncols), &chunks);
    assert_eq!(rows, rows1, "byte-wise input differs");
    assert_eq!(e, e1, "byte-wise input differs");
    (rows, e)
}

fn row(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn err(e: Option<CopyError>) -> (String, Option<String>, Option<String>) {
    let e = e.expect("an error");
    (e.error.message, e.error.hint, e.context)
}

#[test]
fn text_escapes_and_nulls() {
    let input = b"1\t\\x41\\x\\xg\\18\\1234\\101x\\b\\f\\v\\q\\\\\\.\n2\t\\N\n3\t\\\\N\n4\t\n";
    let (rows, e) = read(Format::Text, 2, input);
    assert!(e.is_none());
    assert_eq!(
        rows,
        vec![
            row(&["1", "Axxg\u{1}8S4Ax\u{8}\u{c}\u{b}q\\"]),
            row(&["2", "NULL"]),
            row(&["3", "\\N"]),
            row(&["4", ""]),
        ]
    );
}

#[test]
fn text_end_marker() {
    // Alone on a line: the end; what follows is ignored.
    let (rows, e) = read(Format::Text, 2, b"1\tabc\n\\.\n2\tz\n");
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["1", "abc"])]);
    // After data on a line: the line ends there and reading goes on.
    let (rows, _) = read(Format::Text, 2, b"1\tabc\\.\n2\tz\n");
    assert_eq!(rows, vec![row(&["1", "abc"]), row(&["2", "z"])]);
    // Not followed by a line end.
    let (rows, e) = read(Format::Text, 2, b"1\tx\n\\.");
    assert_eq!(rows, vec![row(&["1", "x"])]);
    assert_eq!(
        err(e),
        (
            "end-of-copy marker corrupt".into(),
            None,
            Some("COPY u, line 2".into())
        )
    );
    let (_, e) = read(Format::Text, 2, b"1\tx\n\\.x\n");
    assert_eq!(err(e).0, "end-of-copy marker corrupt");
    let (rows, e) = read(Format::Text, 2, b"1\ta\r\n2\tb\r\n\\.\n");
    assert_eq!(rows.len(), 2);
    assert_eq!(
        err(e),
        (
            "end-of-copy marker does not match previous newline style".into(),
            None,
            Some("COPY u, line 3".into())
        )
    );
}

#[test]
fn text_backslash_continues_lines() {
    let (rows, e) = read(Format::Text, 2, b"1\ta\\\nb\n");
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["1", "a\nb"])]);
    // A backslash at the very end is dropped.
    let (rows, _) = read(Format::Text, 2, b"1\tx\\");
    assert_eq!(rows, vec![row(&["1", "x"])]);
    let (rows, _) = read(Format::Text, 2, b"1\tx");
    assert_eq!(rows, vec![row(&["1", "x"])]);
}

#[test]
fn line_ends_must_agree() {
    let (rows, e) = read(Format::Text, 2, b"1\tx\r\n2\ty\n");
    assert_eq!(rows, vec![row(&["1", "x"])]);
    assert_eq!(
        err(e),
        (
            "literal newline found in data".into(),
            Some("Use \"\\n\" to represent newline.".into()),
            Some("COPY u, line 2".into())
        )
    );
    let (_, e) = read(Format::Text, 2, b"1\tx\n2\ty\r\n");
    assert_eq!(
        err(e),
        (
            "literal carriage return found in data".into(),
            Some("Use \"\\r\" to represent carriage return.".into()),
            Some("COPY u, line 2".into())
        )
    );
    let (rows, e) = read(Format::Text, 2, b"1\tx\r2\ty\r");
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["1", "x"]), row(&["2", "y"])]);
    let (_, e) = read(Format::Csv, 2, b"1,x\n2,y\r\n");
    assert_eq!(err(e).0, "unquoted carriage return found in data");
}

#[test]
fn field_counts() {
    let (rows, e) = read(Format::Text, 2, b"1\tx\n1\tx\textra\n");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        err(e),
        (
            "extra data after last expected column".into(),
            None,
            Some("COPY u, line 2: \"1\tx\textra\"".into())
        )
    );
    let (rows, e) = read(Format::Text, 3, b"1\tx\n\n");
    assert!(e.is_none());
    assert_eq!(
        rows,
        vec![
            row(&["1", "x", "MISSING"]),
            row(&["", "MISSING", "MISSING"])
        ]
    );
}

#[test]
fn csv_quotes() {
    let input = b"1,\"a\"\"b\"\n2,\"a\\\"b\"\n3,a\"b\"c\n4,\"\"\n5,\n6, \n7,\"\\\\\"\n";
    let (rows, e) = read(Format::Csv, 2, input);
    // The default escape is the quote: "a\" ends at the second quote and
    // the rest of the input is one unterminated field.
    assert_eq!(rows, vec![row(&["1", "a\"b"])]);
    assert_eq!(
        err(e),
        (
            "unterminated CSV quoted field".into(),
            None,
            Some(
                "COPY u, line 8: \"2,\"a\\\"b\"\n3,a\"b\"c\n4,\"\"\n5,\n6, \n7,\"\\\\\"\n\"".into()
            )
        )
    );
    let mut o = opts(Format::Csv, 2);
    o.options.escape = b'\\';
    let (rows, _, e) = read_with(o, &[input]);
    assert!(e.is_none());
    assert_eq!(
        rows,
        vec![
            row(&["1", "ab"]),
            row(&["2", "a\"b"]),
            row(&["3", "abc"]),
            row(&["4", ""]),
            row(&["5", "NULL"]),
            row(&["6", " "]),
            row(&["7", "\\"]),
        ]
    );
}

#[test]
fn csv_lines_count_embedded_newlines_once_the_line_end_is_known() {
    let (rows, lines, e) = read_with(
        opts(Format::Csv, 2),
        &[b"1,\"x\ny\"\n2,\"p\nq\nr\"\nbad,z\n"],
    );
    assert!(e.is_none());
    assert_eq!(rows[1], row(&["2", "p\nq\nr"]));
    assert_eq!(lines, vec![1, 4, 5]);
    let (_, e) = read(Format::Csv, 2, b"a,\"unterminated\n");
    assert_eq!(err(e).2.unwrap(), "COPY u, line 1: \"a,\"unterminated\n\"");
}

#[test]
fn csv_end_marker_only_alone_on_a_line() {
    let (rows, e) = read(Format::Csv, 2, b"1,a\n\\.\n2,z\n");
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["1", "a"])]);
    let (rows, _) = read(Format::Csv, 2, b"1,\"\\.\"\n\"\\.\"\n");
    assert_eq!(rows, vec![row(&["1", "\\."]), row(&["\\.", "MISSING"])]);
    let (rows, _) = read(Format::Csv, 2, b"1,x\n\\.");
    assert_eq!(rows[1], row(&["\\.", "MISSING"]));
    let (rows, _) = read(Format::Csv, 2, b"1,x\n\\.x\n");
    assert_eq!(rows[1], row(&["\\.x", "MISSING"]));
}

#[test]
fn csv_force_null_and_not_null() {
    let mut o = opts(Format::Csv, 2);
    o.force_not_null = vec![true, false];
    o.force_null = vec![false, true];
    let (rows, _, e) = read_with(o, &[b",\"\"\n\"\",x\n"]);
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["", "NULL"]), row(&["", "x"])]);
}

#[test]
fn bad_encoding() {
    let (rows, e) = read(Format::Text, 2, b"1\tok\n2\tx\xff\n");
    assert_eq!(rows, vec![row(&["1", "ok"])]);
    assert_eq!(
        err(e),
        (
            "invalid byte sequence for encoding \"UTF8\": 0xff".into(),
            None,
            Some("COPY u, line 2".into())
        )
    );
    let (_, e) = read(Format::Text, 2, b"1\t\\xc3\\x28\n");
    assert_eq!(
        err(e),
        (
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28".into(),
            None,
            Some("COPY u, line 1: \"1\t\\xc3\\x28\"".into())
        )
    );
    let (_, e) = read(Format::Csv, 2, b"1,a\0b\n");
    assert_eq!(
        err(e).0,
        "invalid byte sequence for encoding \"UTF8\": 0x00"
    );
    // A bad byte beats the record's other faults.
    let (_, e) = read(Format::Text, 1, b"1\t\xff\n");
    assert_eq!(
        err(e).0,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
}

#[test]
fn headers() {
    let mut o = opts(Format::Csv, 2);
    o.options.header = Header::Present;
    let (rows, lines, e) = read_with(o.clone(), &[b"x,y,z\n1,2\n"]);
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["1", "2"])]);
    assert_eq!(lines, vec![2]);
    o.options.header = Header::Match;
    let (rows, _, e) = read_with(o.clone(), &[b"a,b\n1,2\n"]);
    assert!(e.is_none());
    assert_eq!(rows.len(), 1);
    let (_, _, e) = read_with(o.clone(), &[b"a\n1,2\n"]);
    assert_eq!(
        err(e),
        (
            "wrong number of fields in header line: got 1, expected 2".into(),
            None,
            Some("COPY u, line 1: \"a\"".into())
        )
    );
    let (_, _, e) = read_with(o.clone(), &[b"a,c\n"]);
    assert_eq!(
        err(e).0,
        "column name mismatch in header line field 2: got \"c\", expected \"b\""
    );
    let (_, _, e) = read_with(o, &[b"a,\n"]);
    assert_eq!(
        err(e).0,
        "column name mismatch in header line field 2: got null value (\"\"), expected \"b\""
    );
}

#[test]
fn other_delimiters_and_null_strings() {
    let mut o = opts(Format::Text, 3);
    o.options.delimiter = b'|';
    o.options.null = b"NULL".to_vec();
    let (rows, _, e) = read_with(o, &[b"1|NULL|a\\|b\n"]);
    assert!(e.is_none());
    assert_eq!(rows, vec![row(&["1", "NULL", "a|b"])]);
}
