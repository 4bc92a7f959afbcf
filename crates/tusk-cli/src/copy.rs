//! COPY on the client side, as psql does it: the data of `COPY ... FROM
//! STDIN` and `COPY ... TO STDOUT`, the `\copy` command, and a progress
//! line for long loads.
//!
//! * **Where STDIN data comes from.** As in psql, from the current command
//!   source: the lines after the statement in a `-f` script or piped
//!   input, standard input for `-c` and the interactive shell (with psql's
//!   `>> ` prompt when it is a terminal). [`CopyInput`] hands the engine
//!   those lines up to and including one that is just `\.` (psql 15 sends
//!   that line too; the engine treats it as the end of the data), or to
//!   the end of the source. When the COPY fails early, the shell skips
//!   the rest of the data ([`CopyInput::skip_rest`]) so that the script
//!   goes on after `\.`, as psql does. Lines taken count as script lines
//!   for messages.
//! * **Where STDOUT data goes.** To the shell's output, like query results.
//! * **`\copy`.** [`parse_slash_copy`] splits the command as psql's
//!   `parse_slash_copy` does: what precedes `from`/`to` (a table with an
//!   optional column list, or a parenthesised query), the file (`'...'`
//!   or a bare word; `stdin`, `stdout`, `pstdin`, `pstdout`), and the rest
//!   (options). The shell runs `COPY <before> FROM STDIN <rest>` (or `TO
//!   STDOUT`) with the local file as the data; relative names are the
//!   shell's, not the data directory's.
//! * **The client.** [`ShellCopy`] is what the engine drives during a
//!   statement ([`CopyClient`]): it reads [`DataIn`], writes [`DataOut`]
//!   (sharing the shell's output with the result printer through
//!   [`SharedOut`]) and shows the progress.
//! * **Progress.** With standard error on a terminal, [`Progress`] keeps a
//!   line there with rows and bytes so far and their rates, at most five
//!   times a second (`$TUSK_PROGRESS_INTERVAL_MS` changes that), and clears
//!   it at the end.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tusk_sql::{CopyClient, CopyStream, SqlError};

use crate::report::os_message;

/// What `\copy` asks for (see [`parse_slash_copy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCopy {
    /// The table and column list, or `(query)`.
    pub before: String,
    pub from: bool,
    /// The local file; `None` for `stdin`/`stdout`, `pstdin`/`pstdout`.
    pub file: Option<String>,
    /// `pstdin` / `pstdout`: the shell's own standard input or output,
    /// not the command source.
    pub process_stdio: bool,
    /// The options after the file.
    pub after: String,
}

impl SlashCopy {
    /// The COPY statement the shell sends.
    pub fn sql(&self) -> String {
        let dir = if self.from { "FROM STDIN" } else { "TO STDOUT" };
        let mut sql = format!("COPY {} {dir}", self.before);
        if !self.after.is_empty() {
            sql.push(' ');
            sql.push_str(&self.after);
        }
        sql
    }
}

/// The byte index after a token of `s` starting at `i`: a `'...'` or
/// `"..."` quoted part (doubled quotes inside) or a run up to whitespace
/// or one of `stops`.
fn token_end(s: &[u8], mut i: usize, stops: &[u8]) -> usize {
    while i < s.len() && !s[i].is_ascii_whitespace() && !stops.contains(&s[i]) {
        if s[i] == b'"' || s[i] == b'\'' {
            let q = s[i];
            i += 1;
            while i < s.len() {
                if s[i] == q {
                    if s.get(i + 1) == Some(&q) {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
        }
        i += 1;
    }
    i.min(s.len())
}

/// The index after the parenthesised group that opens at `s[i]`.
fn group_end(s: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < s.len() {
        match s[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' | b'\'' => {
                i = token_end(s, i, b"()") - 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_space(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// psql's `\copy: parse error at ...` message for the text at `i`.
fn parse_error(text: &str, i: usize) -> String {
    let s = text.as_bytes();
    let i = skip_space(s, i);
    if i >= s.len() {
        return "\\copy: parse error at end of line".into();
    }
    let end = token_end(s, i, b".,()").max(i + 1);
    format!("\\copy: parse error at \"{}\"", &text[i..end])
}

/// Splits the arguments of `\copy` (the rest of its line) as psql does.
pub fn parse_slash_copy(text: &str) -> Result<SlashCopy, String> {
    let s = text.as_bytes();
    let mut i = skip_space(s, 0);
    if i >= s.len() {
        return Err("\\copy: arguments required".into());
    }
    let start = i;
    if s[i] == b'(' {
        i = group_end(s, i).ok_or_else(|| parse_error(text, s.len()))?;
    } else {
        // A possibly qualified table name, then an optional column list.
        i = token_end(s, i, b"(");
        let j = skip_space(s, i);
        if s.get(j) == Some(&b'(') {
            i = group_end(s, j).ok_or_else(|| parse_error(text, s.len()))?;
        }
    }
    let before = text[start..i].trim().to_string();
    let k = skip_space(s, i);
    let word_end = token_end(s, k, b"");
    let from = match text[k..word_end].to_ascii_lowercase().as_str() {
        "from" => true,
        "to" => false,
        _ => return Err(parse_error(text, k)),
    };
    let k = skip_space(s, word_end);
    if k >= s.len() {
        return Err(parse_error(text, k));
    }
    let file_end = token_end(s, k, b";");
    let word = &text[k..file_end];
    let (file, process_stdio) = match word.to_ascii_lowercase().as_str() {
        "stdin" | "stdout" => (None, false),
        "pstdin" | "pstdout" => (None, true),
        "program" => return Err("\\copy: PROGRAM is not supported by tusk".into()),
        _ => {
            let name = match word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
                Some(inner) => inner.replace("''", "'"),
                None => word.to_string(),
            };
            (Some(expand_tilde(&name)), false)
        }
    };
    Ok(SlashCopy {
        before,
        from,
        file,
        process_stdio,
        after: text[file_end..].trim().to_string(),
    })
}

impl SlashCopy {
    /// The statement to run and where its data comes from and goes to:
    /// the local file opened (psql's `%s: %m` if it cannot be), or the
    /// command source (`source`, else standard input) and the output.
    pub(crate) fn open<'a>(
        &self,
        source: Option<&'a mut (dyn BufRead + Send)>,
    ) -> Result<(String, DataIn<'a>, DataOut), String> {
        let file = match &self.file {
            Some(name) => {
                let f = if self.from {
                    File::open(name)
                } else {
                    File::create(name)
                };
                match f {
                    Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => {
                        return Err(format!("{name}: cannot copy from/to a directory"))
                    }
                    Ok(f) => Some(f),
                    Err(e) => return Err(format!("{name}: {}", os_message(&e))),
                }
            }
            None => None,
        };
        let (input, output) = match (file, self.from) {
            (Some(f), true) => (
                DataIn::File(io::BufReader::with_capacity(1 << 20, f)),
                DataOut::Output,
            ),
            (Some(f), false) => (DataIn::Stdin, DataOut::File(f)),
            (None, true) if self.process_stdio => (DataIn::Stdin, DataOut::Output),
            (None, true) => (
                source.map_or(DataIn::Stdin, DataIn::Source),
                DataOut::Output,
            ),
            (None, false) if self.process_stdio => (DataIn::Stdin, DataOut::Stdout),
            (None, false) => (DataIn::Stdin, DataOut::Output),
        };
        Ok((self.sql(), input, output))
    }
}

/// `~/x` as `$HOME/x`, as psql expands file names.
fn expand_tilde(name: &str) -> String {
    match (name.strip_prefix('~'), std::env::var("HOME")) {
        (Some(rest), Ok(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => name.to_string(),
    }
}

/// Whether `line` (with its line end) is the end-of-data line `\.`.
fn is_end_line(line: &[u8]) -> bool {
    line == b"\\.\n" || line == b"\\.\r\n"
}

/// psql's words before interactive COPY data.
pub const COPY_PROMPT_INTRO: &str = "Enter data to be copied followed by a newline.\n\
End with a backslash and a period on a line by itself, or an EOF signal.";

/// The lines of COPY FROM STDIN data from a command source (see the module
/// doc).
pub struct CopyInput<'a> {
    source: &'a mut (dyn BufRead + Send),
    /// Lines taken from the source.
    pub lines: usize,
    /// `\.` or the source's end was reached.
    pub ended: bool,
    /// Show `>> ` before each line (a person at a terminal).
    prompt: bool,
    line: Vec<u8>,
    at: usize,
    /// A read error of the source, reported as the shell's own.
    pub error: Option<io::Error>,
}

impl<'a> CopyInput<'a> {
    pub fn new(source: &'a mut (dyn BufRead + Send), prompt: bool) -> CopyInput<'a> {
        CopyInput {
            source,
            lines: 0,
            ended: false,
            prompt,
            line: Vec::new(),
            at: 0,
            error: None,
        }
    }

    /// Takes the next line into `self.line`; false at the end.
    fn next_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        self.at = 0;
        if self.ended {
            return Ok(false);
        }
        if self.prompt {
            let mut out = io::stdout();
            let _ = out.write_all(b">> ");
            let _ = out.flush();
        }
        if self.source.read_until(b'\n', &mut self.line)? == 0 {
            self.ended = true;
            return Ok(false);
        }
        self.lines += 1;
        if is_end_line(&self.line) {
            self.ended = true;
        }
        Ok(true)
    }

    /// Reads what is left of the data and drops it.
    pub fn skip_rest(&mut self) {
        while !self.ended {
            match self.next_line() {
                Ok(_) => {}
                Err(e) => {
                    self.error = Some(e);
                    self.ended = true;
                }
            }
        }
    }

    /// Fills `buf` with the next lines of data (as many as fit, so that
    /// the engine gets big pieces); 0 at the end.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            if self.at == self.line.len() && !self.next_line()? {
                break;
            }
            let k = (buf.len() - n).min(self.line.len() - self.at);
            buf[n..n + k].copy_from_slice(&self.line[self.at..self.at + k]);
            self.at += k;
            n += k;
        }
        Ok(n)
    }
}

/// Where the data of a COPY FROM STDIN comes from.
pub(crate) enum DataIn<'a> {
    /// The shell's standard input (`Shell::stdin`).
    Stdin,
    /// The command source: the lines after the statement.
    Source(&'a mut (dyn BufRead + Send)),
    /// A local file (`\copy ... from 'file'`).
    File(io::BufReader<File>),
}

/// Where the data of a COPY TO STDOUT goes.
pub(crate) enum DataOut {
    /// With the query results.
    Output,
    /// The process's standard output (`\copy ... to pstdout`).
    Stdout,
    /// A local file (`\copy ... to 'file'`).
    File(File),
}

/// The shell's output and its first write error, shared by the result
/// sink and the COPY client while a statement runs.
pub(crate) struct SharedOut<'a, O> {
    pub(crate) out: &'a mut O,
    pub(crate) error: &'a mut Option<io::Error>,
    /// A COPY TO STDOUT wrote its rows where results go: like psql, the
    /// shell then does not print its `COPY n`.
    pub(crate) copied_out: bool,
}

impl<O: Write> SharedOut<'_, O> {
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<()> {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(data) {
                *self.error = Some(e);
            }
        }
        Ok(())
    }
}

/// The shell's side of a COPY: the data source and sink the engine drives.
pub(crate) struct ShellCopy<'a, O, W> {
    pub(crate) input: CopyInput<'a>,
    /// COPY FROM STDIN started: its data must be read to the end.
    pub(crate) reading: bool,
    /// psql's words before interactive data.
    pub(crate) intro: bool,
    /// COPY FROM STDIN data would come from a person at a terminal.
    pub(crate) typed: bool,
    pub(crate) output: DataOut,
    pub(crate) shared: &'a Mutex<SharedOut<'a, O>>,
    pub(crate) progress: Option<(Progress, &'a mut W)>,
}

impl<O: Write + Send, W: Write + Send> CopyClient for ShellCopy<'_, O, W> {
    fn copy_in(&mut self, _: &CopyStream) -> Result<(), SqlError> {
        self.reading = true;
        if self.intro {
            let mut out = io::stdout();
            let _ = writeln!(out, "{COPY_PROMPT_INTRO}");
            let _ = out.flush();
        }
        Ok(())
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }

    fn copy_out(&mut self, _: &CopyStream) -> Result<(), SqlError> {
        if !matches!(self.output, DataOut::File(_)) {
            self.shared
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .copied_out = true;
        }
        Ok(())
    }

    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        match &mut self.output {
            DataOut::Output => self
                .shared
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write(data),
            DataOut::Stdout => io::stdout().write_all(data),
            DataOut::File(f) => f.write_all(data),
        }
    }

    fn progress(&mut self, rows: u64, bytes: u64) {
        // Not while a person types the data.
        if self.reading && self.typed {
            return;
        }
        if let Some((p, err)) = &mut self.progress {
            p.update(*err, rows, bytes);
        }
    }
}

/// Time between two updates of the progress line (and before the first):
/// 200 ms, or `$TUSK_PROGRESS_INTERVAL_MS` (tests set 0: every batch).
fn progress_every() -> Duration {
    let ms = std::env::var("TUSK_PROGRESS_INTERVAL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    Duration::from_millis(ms)
}

/// The progress line of a load on a terminal (see the module doc).
pub struct Progress {
    start: Instant,
    last: Option<Instant>,
    every: Duration,
    shown: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

/// `n` with thousands separators.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The progress line's text.
pub fn progress_text(rows: u64, bytes: u64, seconds: f64) -> String {
    let secs = seconds.max(1e-3);
    format!(
        "COPY: {} rows, {:.1} MB ({} rows/s, {:.1} MB/s)",
        grouped(rows),
        bytes as f64 / 1e6,
        grouped((rows as f64 / secs) as u64),
        bytes as f64 / 1e6 / secs
    )
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            start: Instant::now(),
            last: None,
            every: progress_every(),
            shown: false,
        }
    }

    /// Rewrites the line on `err` if it is time to.
    pub fn update(&mut self, err: &mut dyn Write, rows: u64, bytes: u64) {
        let now = Instant::now();
        if now.duration_since(self.start) < self.every
            || self
                .last
                .is_some_and(|t| now.duration_since(t) < self.every)
        {
            return;
        }
        self.last = Some(now);
        self.shown = true;
        let text = progress_text(rows, bytes, now.duration_since(self.start).as_secs_f64());
        let _ = write!(err, "\r{text}\x1b[K");
        let _ = err.flush();
    }

    /// Clears the line, if one was shown.
    pub fn clear(&mut self, err: &mut dyn Write) {
        if self.shown {
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> SlashCopy {
        parse_slash_copy(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn slash_copy_forms() {
        let c = parsed("t from 'my file.csv' with (format csv, header)");
        assert_eq!(
            c,
            SlashCopy {
                before: "t".into(),
                from: true,
                file: Some("my file.csv".into()),
                process_stdio: false,
                after: "with (format csv, header)".into(),
            }
        );
        assert_eq!(c.sql(), "COPY t FROM STDIN with (format csv, header)");
        let c = parsed("public.\"My T\" (a, \"b c\") TO data.txt csv");
        assert_eq!(c.before, "public.\"My T\" (a, \"b c\")");
        assert_eq!((c.from, c.file.as_deref()), (false, Some("data.txt")));
        assert_eq!(c.sql(), "COPY public.\"My T\" (a, \"b c\") TO STDOUT csv");
        let c = parsed("(select ')' as x, (1)) to stdout");
        assert_eq!(c.before, "(select ')' as x, (1))");
        assert_eq!((c.file, c.process_stdio), (None, false));
        let c = parsed("t from pstdin");
        assert_eq!((c.file, c.process_stdio), (None, true));
        assert_eq!(parsed("t from 'it''s'").file.as_deref(), Some("it's"));
    }

    #[test]
    fn slash_copy_errors() {
        assert_eq!(
            parse_slash_copy("  ").unwrap_err(),
            "\\copy: arguments required"
        );
        assert_eq!(
            parse_slash_copy("t into x").unwrap_err(),
            "\\copy: parse error at \"into\""
        );
        assert_eq!(
            parse_slash_copy("t from").unwrap_err(),
            "\\copy: parse error at end of line"
        );
        assert_eq!(
            parse_slash_copy("(select 1 to x").unwrap_err(),
            "\\copy: parse error at end of line"
        );
    }

    #[test]
    fn input_stops_after_the_end_line() {
        let mut src: &[u8] = b"1\ta\n2\tb\r\n\\.\nselect 1;\n";
        let mut input = CopyInput::new(&mut src, false);
        let mut out = Vec::new();
        let mut buf = [0u8; 3];
        loop {
            let n = input.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, b"1\ta\n2\tb\r\n\\.\n");
        assert_eq!(input.lines, 3);
        assert_eq!(src, b"select 1;\n");
        // Skipping the rest of the data stops at the end line too.
        let mut src: &[u8] = b"1\n2\n\\.\nnext\n";
        let mut input = CopyInput::new(&mut src, false);
        input.read(&mut buf).unwrap();
        input.skip_rest();
        assert_eq!((input.lines, src), (3, &b"next\n"[..]));
        // `\.` inside a line is data.
        let mut src: &[u8] = b"a\\.\n\\.x\n";
        let mut input = CopyInput::new(&mut src, false);
        input.skip_rest();
        assert_eq!(input.lines, 2);
        // Reads take as many lines as fit.
        let mut src: &[u8] = b"1\n2\n3\n\\.\n";
        let mut input = CopyInput::new(&mut src, false);
        let mut big = [0u8; 64];
        assert_eq!(input.read(&mut big).unwrap(), 9);
        assert_eq!(input.read(&mut big).unwrap(), 0);
    }

    #[test]
    fn progress_lines() {
        assert_eq!(
            progress_text(1234567, 98_700_000, 2.0),
            "COPY: 1,234,567 rows, 98.7 MB (617,283 rows/s, 49.4 MB/s)"
        );
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(100), "100");
        assert_eq!(grouped(1000), "1,000");
    }
}
