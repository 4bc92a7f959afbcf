//! Result tables printed the way psql 15 prints them.
//!
//! Two formats, chosen by `-A`:
//!
//! * **aligned** (psql's default, border 1): a centred header line, a rule of
//!   dashes, one line per row with cells padded to the column width, numeric
//!   columns right-aligned and all others left-aligned, then the footer
//!   (`(1 row)`, `(N rows)` or a command's own footers) and an empty line.
//!   Widths are display columns (see [`crate::width`]). A value containing
//!   newlines spans several lines, every line but its last marked with `+` in
//!   the gap after the column; tabs expand to the next multiple of 8 and other
//!   control characters print as `\r`, `\xHH` or `\uHHHH`. The last column is
//!   not padded on the right unless a `+` mark follows it, exactly like psql.
//! * **unaligned**: fields joined by the field separator (`|`), values printed
//!   raw, no trailing empty line.
//!
//! `-t` (tuples only) drops the title, header and footers in both formats.
//! SQL NULL prints as an empty field.

use std::borrow::Cow;
use std::io::{self, Write};

use tusk_sql::ColumnHeader;

use crate::width::{char_width, is_control};

/// How tables are printed (psql's `\pset format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Aligned,
    Unaligned,
}

/// Printing options that the command line sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintOptions {
    pub format: Format,
    /// `-t`: rows only, no title, header or footer.
    pub tuples_only: bool,
    /// `-F`: separator between fields in unaligned output.
    pub field_sep: String,
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions {
            format: Format::Aligned,
            tuples_only: false,
            field_sep: "|".to_string(),
        }
    }
}

/// One table to print.
#[derive(Debug, Clone, Copy)]
pub struct Table<'a> {
    /// Printed above the table (centred in aligned format).
    pub title: Option<&'a str>,
    pub columns: &'a [ColumnHeader],
    /// Cells already rendered as text; `None` is NULL. A row shorter than
    /// `columns` is padded with NULLs; extra cells are ignored.
    pub rows: &'a [Vec<Option<String>>],
    /// Footer lines printed below the rows (psql's `\d` "Indexes:" block).
    pub footers: &'a [String],
    /// Print `(N rows)` when there are no other footers.
    pub default_footer: bool,
}

/// `(1 row)` / `(N rows)`.
pub fn row_count_footer(n: usize) -> String {
    if n == 1 {
        "(1 row)".to_string()
    } else {
        format!("({n} rows)")
    }
}

/// Prints `table` to `out` in the format `opts` asks for.
pub fn print_table(out: &mut dyn Write, table: &Table<'_>, opts: &PrintOptions) -> io::Result<()> {
    let default;
    let footers: &[String] = if !table.footers.is_empty() {
        table.footers
    } else if table.default_footer {
        default = [row_count_footer(table.rows.len())];
        &default
    } else {
        &[]
    };
    match opts.format {
        Format::Aligned => print_aligned(out, table, footers, opts.tuples_only),
        Format::Unaligned => print_unaligned(out, table, footers, opts),
    }
}

/// The cell at `row[col]`, NULL (and a missing cell) printing as empty.
fn cell(row: &[Option<String>], col: usize) -> &str {
    row.get(col).and_then(|c| c.as_deref()).unwrap_or("")
}

/// Calls `f(line, width)` for each display line of `s`: split at newlines,
/// tabs expanded, control characters escaped.
fn for_each_line<'s>(s: &'s str, mut f: impl FnMut(Cow<'s, str>, usize)) {
    // Fast path: nothing to split, expand or escape.
    if s.bytes().all(|b| (0x20..0x7F).contains(&b)) {
        f(Cow::Borrowed(s), s.len());
        return;
    }
    let mut line = String::new();
    let mut width = 0usize;
    let mut plain = true; // `line` equals the source slice since `start`
    let mut start = 0usize;
    for (i, c) in s.char_indices() {
        if c == '\n' {
            if plain {
                f(Cow::Borrowed(&s[start..i]), width);
            } else {
                f(Cow::Owned(std::mem::take(&mut line)), width);
            }
            line.clear();
            width = 0;
            plain = true;
            start = i + 1;
            continue;
        }
        if is_control(c) {
            if plain {
                line.push_str(&s[start..i]);
                plain = false;
            }
            match c {
                '\t' => loop {
                    line.push(' ');
                    width += 1;
                    if width.is_multiple_of(8) {
                        break;
                    }
                },
                '\r' => {
                    line.push_str("\\r");
                    width += 2;
                }
                c if (c as u32) < 0x80 => {
                    line.push_str(&format!("\\x{:02X}", c as u32));
                    width += 4;
                }
                c => {
                    line.push_str(&format!("\\u{:04X}", c as u32));
                    width += 6;
                }
            }
            continue;
        }
        if !plain {
            line.push(c);
        }
        width += char_width(c);
    }
    if plain {
        f(Cow::Borrowed(&s[start..]), width);
    } else {
        f(Cow::Owned(line), width);
    }
}

/// Widest display line of `s`.
fn max_line_width(s: &str) -> usize {
    let mut w = 0;
    for_each_line(s, |_, lw| w = w.max(lw));
    w
}

/// Display width of the widest line of `s` (used for titles).
pub fn display_width(s: &str) -> usize {
    max_line_width(s)
}

const SPACES: &[u8; 64] = &[b' '; 64];

fn pad(out: &mut dyn Write, mut n: usize) -> io::Result<()> {
    while n > 0 {
        let k = n.min(SPACES.len());
        out.write_all(&SPACES[..k])?;
        n -= k;
    }
    Ok(())
}

fn print_aligned(
    out: &mut dyn Write,
    table: &Table<'_>,
    footers: &[String],
    tuples_only: bool,
) -> io::Result<()> {
    let ncols = table.columns.len();

    // Header lines, and the column widths over headers and all cells.
    let mut headers: Vec<Vec<(Cow<'_, str>, usize)>> = Vec::with_capacity(ncols);
    let mut widths: Vec<usize> = Vec::with_capacity(ncols);
    for col in table.columns {
        let mut lines = Vec::new();
        for_each_line(&col.name, |l, w| lines.push((l, w)));
        widths.push(lines.iter().map(|l| l.1).max().unwrap_or(0));
        headers.push(lines);
    }
    for row in table.rows {
        for (j, w) in widths.iter_mut().enumerate() {
            *w = (*w).max(max_line_width(cell(row, j)));
        }
    }

    if !tuples_only {
        if let Some(title) = table.title {
            let total: usize = widths.iter().sum::<usize>() + (3 * ncols).saturating_sub(1);
            let tw = display_width(title);
            if tw < total {
                pad(out, (total - tw) / 2)?;
            }
            out.write_all(title.as_bytes())?;
            out.write_all(b"\n")?;
        }

        let nlines = headers.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..nlines {
            for (j, lines) in headers.iter().enumerate() {
                if j > 0 {
                    out.write_all(b"|")?;
                }
                out.write_all(b" ")?;
                match lines.get(k) {
                    Some((text, w)) => {
                        let spare = widths[j] - w;
                        pad(out, spare / 2)?;
                        out.write_all(text.as_bytes())?;
                        pad(out, spare - spare / 2)?;
                        out.write_all(if k + 1 < lines.len() { b"+" } else { b" " })?;
                    }
                    None => {
                        pad(out, widths[j])?;
                        out.write_all(b" ")?;
                    }
                }
            }
            out.write_all(b"\n")?;
        }

        let mut rule = String::from("-");
        for (j, w) in widths.iter().enumerate() {
            if j > 0 {
                rule.push_str("-+-");
            }
            rule.extend(std::iter::repeat_n('-', *w));
        }
        rule.push_str("-\n");
        out.write_all(rule.as_bytes())?;
    }

    // Rows. `lines[j]` holds the display lines of cell j of the current row;
    // the vectors are reused from row to row.
    let mut lines: Vec<Vec<(Cow<'_, str>, usize)>> = vec![Vec::new(); ncols];
    for row in table.rows {
        for (j, l) in lines.iter_mut().enumerate() {
            l.clear();
            for_each_line(cell(row, j), |text, w| l.push((text, w)));
        }
        let nlines = lines.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..nlines {
            for (j, cell_lines) in lines.iter().enumerate() {
                let last = j + 1 == ncols;
                if j > 0 {
                    out.write_all(b"|")?;
                }
                out.write_all(b" ")?;
                match cell_lines.get(k) {
                    Some((text, w)) => {
                        let more = k + 1 < cell_lines.len();
                        let spare = widths[j] - w;
                        if table.columns[j].numeric {
                            pad(out, spare)?;
                            out.write_all(text.as_bytes())?;
                        } else {
                            out.write_all(text.as_bytes())?;
                            if more || !last {
                                pad(out, spare)?;
                            }
                        }
                        if more {
                            out.write_all(b"+")?;
                        } else if !last {
                            out.write_all(b" ")?;
                        }
                    }
                    None => {
                        if !last {
                            pad(out, widths[j] + 1)?;
                        }
                    }
                }
            }
            out.write_all(b"\n")?;
        }
    }

    if !tuples_only {
        for f in footers {
            out.write_all(f.as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    out.write_all(b"\n")
}

fn print_unaligned(
    out: &mut dyn Write,
    table: &Table<'_>,
    footers: &[String],
    opts: &PrintOptions,
) -> io::Result<()> {
    let sep = opts.field_sep.as_bytes();
    // A record separator is owed before the next record, and after the last.
    let mut owed = false;
    if !opts.tuples_only {
        if let Some(title) = table.title {
            out.write_all(title.as_bytes())?;
            out.write_all(b"\n")?;
        }
        for (j, col) in table.columns.iter().enumerate() {
            if j > 0 {
                out.write_all(sep)?;
            }
            out.write_all(col.name.as_bytes())?;
        }
        owed = true;
    }
    let ncols = table.columns.len();
    for row in table.rows {
        if ncols == 0 {
            continue;
        }
        if owed {
            out.write_all(b"\n")?;
        }
        for j in 0..ncols {
            if j > 0 {
                out.write_all(sep)?;
            }
            out.write_all(cell(row, j).as_bytes())?;
        }
        owed = true;
    }
    if !opts.tuples_only {
        for f in footers {
            if owed {
                out.write_all(b"\n")?;
            }
            out.write_all(f.as_bytes())?;
            owed = true;
        }
    }
    if owed {
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, numeric: bool) -> ColumnHeader {
        ColumnHeader {
            name: name.to_string(),
            numeric,
        }
    }

    fn row(cells: &[Option<&str>]) -> Vec<Option<String>> {
        cells.iter().map(|c| c.map(str::to_string)).collect()
    }

    fn render(
        title: Option<&str>,
        columns: &[ColumnHeader],
        rows: &[Vec<Option<String>>],
        default_footer: bool,
        opts: &PrintOptions,
    ) -> String {
        let mut out = Vec::new();
        let table = Table {
            title,
            columns,
            rows,
            footers: &[],
            default_footer,
        };
        print_table(&mut out, &table, opts).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn aligned() -> PrintOptions {
        PrintOptions::default()
    }

    fn unaligned() -> PrintOptions {
        PrintOptions {
            format: Format::Unaligned,
            ..PrintOptions::default()
        }
    }

    fn tuples(mut o: PrintOptions) -> PrintOptions {
        o.tuples_only = true;
        o
    }

    fn sample() -> (Vec<ColumnHeader>, Vec<Vec<Option<String>>>) {
        (
            vec![col("a", true), col("b", false), col("c", true)],
            vec![
                row(&[Some("1"), Some("x"), Some("1.5")]),
                row(&[Some("22"), None, Some("-3")]),
                row(&[Some("333"), Some("héllo wörld"), None]),
            ],
        )
    }

    // Every expected string below was produced by psql 15 against PostgreSQL 15.

    #[test]
    fn aligned_basic_with_nulls_and_numeric_alignment() {
        let (cols, rows) = sample();
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            "  a  |      b      |  c  \n\
             -----+-------------+-----\n   \
             1 | x           | 1.5\n  \
             22 |             |  -3\n \
             333 | héllo wörld |    \n\
             (3 rows)\n\n"
        );
    }

    #[test]
    fn aligned_one_row_and_zero_rows() {
        let cols = vec![col("?column?", true)];
        assert_eq!(
            render(None, &cols, &[row(&[Some("1")])], true, &aligned()),
            " ?column? \n----------\n        1\n(1 row)\n\n"
        );
        let cols = vec![col("a", true), col("b", false), col("c", true)];
        assert_eq!(
            render(None, &cols, &[], true, &aligned()),
            " a | b | c \n---+---+---\n(0 rows)\n\n"
        );
    }

    #[test]
    fn aligned_wide_header_and_narrow_data() {
        let cols = vec![col("verylongcolumnname", true), col("s", false)];
        let rows = vec![row(&[Some("1"), Some("ab")])];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            " verylongcolumnname | s  \n\
             --------------------+----\n                  \
             1 | ab\n\
             (1 row)\n\n"
        );
    }

    #[test]
    fn aligned_null_and_empty_in_last_column() {
        let cols = vec![col("n", true), col("e", false)];
        let rows = vec![row(&[None, Some("")])];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            " n | e \n---+---\n   | \n(1 row)\n\n"
        );
    }

    #[test]
    fn aligned_multiline_values() {
        let cols = vec![col("x", false), col("y", true), col("z", false)];
        let rows = vec![row(&[Some("a\nbb\nc"), Some("2"), Some("p\nq")])];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            " x  | y | z \n\
             ----+---+---\n \
             a +| 2 | p+\n \
             bb+|   | q\n \
             c  |   | \n\
             (1 row)\n\n"
        );
    }

    #[test]
    fn aligned_multiline_header() {
        let cols = vec![col("multi\nhead", false), col("w", false)];
        let rows = vec![row(&[Some("a\nbb\nc"), Some("v")])];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            " multi+| w \n \
             head  |   \n\
             -------+---\n \
             a    +| v\n \
             bb   +| \n \
             c     | \n\
             (1 row)\n\n"
        );
    }

    #[test]
    fn aligned_control_chars_and_wide_chars() {
        let cols = vec![
            col("t", false),
            col("c", false),
            col("r", false),
            col("j", false),
            col("comb", false),
        ];
        let rows = vec![row(&[
            Some("a\tb"),
            Some("x\u{1}y"),
            Some("r\rs"),
            Some("日本語"),
            Some("e\u{301}"),
        ])];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            "     t     |   c    |  r   |   j    | comb \n\
             -----------+--------+------+--------+------\n \
             a       b | x\\x01y | r\\rs | 日本語 | e\u{301}\n\
             (1 row)\n\n"
        );
    }

    #[test]
    fn aligned_zero_columns() {
        let rows = vec![Vec::new()];
        assert_eq!(
            render(None, &[], &rows, true, &aligned()),
            "--\n(1 row)\n\n"
        );
        assert_eq!(render(None, &[], &rows, true, &tuples(aligned())), "\n");
        assert_eq!(render(None, &[], &rows, true, &unaligned()), "\n(1 row)\n");
    }

    #[test]
    fn aligned_query_plan() {
        let cols = vec![col("QUERY PLAN", false)];
        let rows = vec![row(&[Some(
            "Seq Scan on t  (cost=0.00..18.50 rows=850 width=68)",
        )])];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            "                     QUERY PLAN                      \n\
             -----------------------------------------------------\n \
             Seq Scan on t  (cost=0.00..18.50 rows=850 width=68)\n\
             (1 row)\n\n"
        );
    }

    fn describe_t() -> (Vec<ColumnHeader>, Vec<Vec<Option<String>>>) {
        let cols = ["Column", "Type", "Collation", "Nullable", "Default"]
            .iter()
            .map(|n| col(n, false))
            .collect();
        let rows = vec![
            row(&[Some("a"), Some("integer"), Some(""), Some(""), Some("")]),
            row(&[Some("b"), Some("text"), Some(""), Some(""), Some("")]),
            row(&[Some("c"), Some("numeric"), Some(""), Some(""), Some("")]),
        ];
        (cols, rows)
    }

    #[test]
    fn aligned_title_without_footer() {
        let (cols, rows) = describe_t();
        assert_eq!(
            render(Some("Table \"public.t\""), &cols, &rows, false, &aligned()),
            "                 Table \"public.t\"\n \
             Column |  Type   | Collation | Nullable | Default \n\
             --------+---------+-----------+----------+---------\n \
             a      | integer |           |          | \n \
             b      | text    |           |          | \n \
             c      | numeric |           |          | \n\n"
        );
    }

    #[test]
    fn aligned_title_with_footer_and_footers() {
        let cols = ["Schema", "Name", "Type", "Owner"]
            .iter()
            .map(|n| col(n, false))
            .collect::<Vec<_>>();
        let rows = vec![
            row(&[Some("public"), Some("t"), Some("table"), Some("postgres")]),
            row(&[Some("public"), Some("u"), Some("table"), Some("postgres")]),
        ];
        assert_eq!(
            render(Some("List of relations"), &cols, &rows, true, &aligned()),
            "        List of relations\n \
             Schema | Name | Type  |  Owner   \n\
             --------+------+-------+----------\n \
             public | t    | table | postgres\n \
             public | u    | table | postgres\n\
             (2 rows)\n\n"
        );
        let footers = vec![
            "Indexes:".to_string(),
            "    \"u_pkey\" PRIMARY KEY, btree (id)".to_string(),
        ];
        let table = Table {
            title: None,
            columns: &cols,
            rows: &rows[..1],
            footers: &footers,
            default_footer: true,
        };
        let mut out = Vec::new();
        print_table(&mut out, &table, &aligned()).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .ends_with(" public | t    | table | postgres\nIndexes:\n    \"u_pkey\" PRIMARY KEY, btree (id)\n\n"));
    }

    #[test]
    fn title_wider_than_table_is_not_centred() {
        let cols = vec![col("a", false)];
        let rows = vec![row(&[Some("x")])];
        assert_eq!(
            render(Some("A long title"), &cols, &rows, false, &aligned()),
            "A long title\n a \n---\n x\n\n"
        );
    }

    #[test]
    fn aligned_tuples_only() {
        let (cols, rows) = sample();
        assert_eq!(
            render(None, &cols, &rows, true, &tuples(aligned())),
            "   1 | x           | 1.5\n  \
             22 |             |  -3\n \
             333 | héllo wörld |    \n\n"
        );
        assert_eq!(render(None, &cols, &[], true, &tuples(aligned())), "\n");
        let (cols, rows) = describe_t();
        assert_eq!(
            render(
                Some("Table \"public.t\""),
                &cols,
                &rows,
                false,
                &tuples(aligned())
            ),
            " a      | integer |           |          | \n \
             b      | text    |           |          | \n \
             c      | numeric |           |          | \n\n"
        );
    }

    #[test]
    fn unaligned_format() {
        let (cols, rows) = sample();
        assert_eq!(
            render(None, &cols, &rows, true, &unaligned()),
            "a|b|c\n1|x|1.5\n22||-3\n333|héllo wörld|\n(3 rows)\n"
        );
        assert_eq!(
            render(None, &cols, &[], true, &unaligned()),
            "a|b|c\n(0 rows)\n"
        );
        assert_eq!(
            render(None, &cols, &rows, true, &tuples(unaligned())),
            "1|x|1.5\n22||-3\n333|héllo wörld|\n"
        );
        assert_eq!(render(None, &cols, &[], true, &tuples(unaligned())), "");
        let (cols, rows) = describe_t();
        assert_eq!(
            render(Some("Table \"public.t\""), &cols, &rows, false, &unaligned()),
            "Table \"public.t\"\nColumn|Type|Collation|Nullable|Default\na|integer|||\nb|text|||\nc|numeric|||\n"
        );
    }

    #[test]
    fn unaligned_field_separator_and_multiline() {
        let opts = PrintOptions {
            field_sep: ",".to_string(),
            ..unaligned()
        };
        let cols = vec![col("?column?", true), col("?column?", true)];
        let rows = vec![row(&[Some("1"), Some("2")])];
        assert_eq!(
            render(None, &cols, &rows, true, &opts),
            "?column?,?column?\n1,2\n(1 row)\n"
        );
        let cols = vec![col("a", false), col("b", false)];
        let rows = vec![row(&[Some("a\nb"), Some("c")])];
        assert_eq!(
            render(None, &cols, &rows, true, &tuples(unaligned())),
            "a\nb|c\n"
        );
    }

    #[test]
    fn short_rows_do_not_panic() {
        let cols = vec![col("a", true), col("b", false)];
        let rows = vec![
            row(&[Some("1")]),
            row(&[Some("2"), Some("x"), Some("extra")]),
        ];
        assert_eq!(
            render(None, &cols, &rows, true, &aligned()),
            " a | b \n---+---\n 1 | \n 2 | x\n(2 rows)\n\n"
        );
    }

    #[test]
    fn escapes() {
        let cols = vec![col("v", false)];
        let rows = vec![row(&[Some("a\u{7f}b\u{85}c")])];
        assert_eq!(
            render(None, &cols, &rows, false, &tuples(aligned())),
            " a\\x7Fb\\u0085c\n\n"
        );
    }

    #[test]
    fn footer_words() {
        assert_eq!(row_count_footer(0), "(0 rows)");
        assert_eq!(row_count_footer(1), "(1 row)");
        assert_eq!(row_count_footer(2), "(2 rows)");
    }
}
