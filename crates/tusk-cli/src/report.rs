//! Messages that psql builds on the client side: the `LINE n:` excerpt with
//! a caret under an error position, `Time: ...` lines, and psql's Boolean
//! option values.

use crate::width::char_width;

/// psql never shows more than this many columns of a query line...
const DISPLAY_SIZE: usize = 60;
/// ...and keeps at least this many columns after the error position.
const MIN_RIGHT_CUT: usize = 10;

/// The two lines psql prints under an error that carries a position:
/// `LINE n: <the line of the query holding it>` and a caret under the
/// position. `position` is 1-based, in characters of `query`. Long lines are
/// cut to about 60 columns around the position, with `...` marking the cuts.
/// Returns `None` when the position lies outside the query.
pub fn error_position_lines(query: &str, position: usize) -> Option<String> {
    let loc = position.checked_sub(1)?;
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();

    // Find the line holding `loc`: its number, first char and end (exclusive);
    // `col[i]` is the screen column where char i starts.
    let mut col = Vec::with_capacity(chars.len() + 1);
    let mut screen = 0usize;
    let mut line_no = 1usize;
    let mut begin = 0usize;
    let mut end = None;
    for (i, &c) in chars.iter().enumerate() {
        col.push(screen);
        if c == '\n' || c == '\r' {
            if i < loc {
                // "\r\n" counts as one line end.
                if c == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line_no += 1;
                }
                begin = i + 1;
            } else {
                end = Some(i);
                break;
            }
        }
        screen += char_width(c).max(1);
    }
    let mut end = match end {
        Some(e) => e,
        None => {
            col.push(screen);
            chars.len()
        }
    };
    if loc > end {
        return None;
    }

    let mut cut_left = false;
    let mut cut_right = false;
    if col[end] - col[begin] > DISPLAY_SIZE {
        if col[begin] + DISPLAY_SIZE >= col[loc] + MIN_RIGHT_CUT {
            // Cutting the right end suffices.
            while col[end] - col[begin] > DISPLAY_SIZE {
                end -= 1;
            }
            cut_right = true;
        } else {
            // Cut the right end, but not too close to the position...
            while col[loc] + MIN_RIGHT_CUT < col[end] {
                end -= 1;
                cut_right = true;
            }
            // ...then the left end if still too long.
            while col[end] - col[begin] > DISPLAY_SIZE {
                begin += 1;
                cut_left = true;
            }
        }
    }

    let mut prefix = format!("LINE {line_no}: ");
    if cut_left {
        prefix.push_str("...");
    }
    let mut out = prefix.clone();
    out.extend(&chars[begin..end]);
    if cut_right {
        out.push_str("...");
    }
    out.push('\n');
    let caret_col = prefix.chars().count() + col[loc] - col[begin];
    out.extend(std::iter::repeat_n(' ', caret_col));
    out.push_str("^\n");
    Some(out)
}

/// psql's `\timing` line for a statement that took `ms` milliseconds:
/// `Time: 1.234 ms`, and from one second on also the time as
/// `(mm:ss.fff)`, `(hh:mm:ss.fff)` or `(N d hh:mm:ss.fff)`.
pub fn timing_line(ms: f64) -> String {
    if ms < 1000.0 {
        return format!("Time: {ms:.3} ms");
    }
    let mut seconds = ms / 1000.0;
    let mut minutes = (seconds / 60.0).floor();
    seconds -= 60.0 * minutes;
    if minutes < 60.0 {
        return format!("Time: {ms:.3} ms ({:02}:{seconds:06.3})", minutes as u64);
    }
    let mut hours = (minutes / 60.0).floor();
    minutes -= 60.0 * hours;
    if hours < 24.0 {
        return format!(
            "Time: {ms:.3} ms ({:02}:{:02}:{seconds:06.3})",
            hours as u64, minutes as u64
        );
    }
    let days = (hours / 24.0).floor();
    hours -= 24.0 * days;
    format!(
        "Time: {ms:.3} ms ({days:.0} d {:02}:{:02}:{seconds:06.3})",
        hours as u64, minutes as u64
    )
}

/// psql's reading of a Boolean option value: any prefix of `true`, `false`,
/// `yes`, `no`; `on`, `of`/`off`; `1`, `0`; case-insensitive.
pub fn parse_bool(value: &str) -> Option<bool> {
    let v = value.to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| v.len() >= min && word.starts_with(v.as_str());
    if prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || v == "1" {
        Some(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || v == "0" {
        Some(false)
    } else {
        None
    }
}

/// An I/O error's text without Rust's ` (os error N)` suffix, the way a C
/// program such as psql prints `strerror`.
pub fn os_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings come from psql 15 against PostgreSQL 15.

    #[test]
    fn caret_on_first_line() {
        assert_eq!(
            error_position_lines("selec 1", 1).unwrap(),
            "LINE 1: selec 1\n        ^\n"
        );
    }

    #[test]
    fn caret_on_later_line() {
        assert_eq!(
            error_position_lines("select\n  *\nfrom nope;", 17).unwrap(),
            "LINE 3: from nope;\n             ^\n"
        );
        assert_eq!(
            error_position_lines("select 1;\nselect * from nope", 25).unwrap(),
            "LINE 2: select * from nope\n                      ^\n"
        );
        // "\r\n" is one line end, a lone "\r" another.
        assert_eq!(
            error_position_lines("a\r\nb\rc x", 8).unwrap(),
            "LINE 3: c x\n          ^\n"
        );
    }

    #[test]
    fn caret_at_end_of_input() {
        // "syntax error at end of input" points just past the text.
        assert_eq!(
            error_position_lines("select 1 +", 11).unwrap(),
            "LINE 1: select 1 +\n                  ^\n"
        );
        assert_eq!(error_position_lines("select 1 +", 12), None);
        assert_eq!(error_position_lines("select", 0), None);
    }

    #[test]
    fn tabs_become_spaces_and_wide_chars_count_twice() {
        assert_eq!(
            error_position_lines("select\t'日本' +", 14).unwrap(),
            "LINE 1: select '日本' +\n                       ^\n"
        );
    }

    fn list(letter: char, n: usize) -> String {
        (1..=n)
            .map(|i| format!("{letter}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn long_lines_are_cut() {
        // An error near the end of a long line: the left end is cut.
        let q = format!("select {} from nope", list('c', 30));
        let pos = q.find("nope").unwrap() + 1;
        assert_eq!(
            error_position_lines(&q, pos).unwrap(),
            format!(
                "LINE 1: ..., c21, c22, c23, c24, c25, c26, c27, c28, c29, c30 from nope\n{}^\n",
                " ".repeat(67)
            )
        );
        // An error near the start: only the right end is cut.
        let q = format!("selec {}", list('c', 30));
        assert_eq!(
            error_position_lines(&q, 1).unwrap(),
            "LINE 1: selec c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13...\n        ^\n"
        );
        // An error in the middle: both ends are cut.
        let q = format!("select {} fro nope, {}", list('c', 20), list('d', 20));
        let pos = q.find("nope").unwrap() + 1;
        assert_eq!(
            error_position_lines(&q, pos).unwrap(),
            format!(
                "LINE 1: ..., c12, c13, c14, c15, c16, c17, c18, c19, c20 fro nope, d1, ...\n{}^\n",
                " ".repeat(61)
            )
        );
    }

    #[test]
    fn timing() {
        assert_eq!(timing_line(0.2641), "Time: 0.264 ms");
        assert_eq!(timing_line(999.9994), "Time: 999.999 ms");
        assert_eq!(timing_line(1234.5678), "Time: 1234.568 ms (00:01.235)");
        assert_eq!(timing_line(61_000.0), "Time: 61000.000 ms (01:01.000)");
        assert_eq!(
            timing_line(3_723_004.0),
            "Time: 3723004.000 ms (01:02:03.004)"
        );
        assert_eq!(
            timing_line(90_061_001.0),
            "Time: 90061001.000 ms (1 d 01:01:01.001)"
        );
    }

    #[test]
    fn os_messages() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(os_message(&e), "No such file or directory");
        let e = std::io::Error::other("custom");
        assert_eq!(os_message(&e), "custom");
    }

    #[test]
    fn booleans() {
        for v in ["on", "ON", "t", "tr", "true", "y", "yes", "1"] {
            assert_eq!(parse_bool(v), Some(true), "{v}");
        }
        for v in ["off", "of", "f", "false", "n", "no", "0", "FALSE"] {
            assert_eq!(parse_bool(v), Some(false), "{v}");
        }
        for v in ["", "o", "bogus", "onn", "2", "truex"] {
            assert_eq!(parse_bool(v), None, "{v}");
        }
    }
}
