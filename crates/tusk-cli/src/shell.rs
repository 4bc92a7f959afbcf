//! Running statements and backslash commands, and reporting the outcome the
//! way psql does.
//!
//! A [`Shell`] owns an [`Engine`] (a `tusk_sql::Session`, or a stand-in in
//! tests), the output streams and the settings that the command line and
//! `\timing` change. Its three entry points follow psql's three input modes:
//!
//! * [`Shell::run_command_string`] for one `-c` string: sent whole to the
//!   engine (which runs its `;`-separated statements in order and prints
//!   every result), or run as a backslash command if it starts with `\`;
//! * [`Shell::run_script`] for `-f FILE`, `-f -` and piped standard input:
//!   split into statements client-side (see [`crate::scan`]), each sent on
//!   its own, going on after errors unless `ON_ERROR_STOP` is set (see
//!   [`crate::variables`]);
//! * [`Shell::run_item`] for one statement or command of the interactive
//!   loop, which goes on after errors.
//!
//! Errors go to standard error as `ERROR:  message` plus psql's `LINE n:`
//! excerpt and caret when the engine gives a position. While a named script
//! runs, every message is prefixed with `tusk:FILE:LINE: ` as psql does with
//! `psql:FILE:LINE: `. Standard output is flushed before anything is written
//! to standard error, so the two interleave in order on a terminal.
//!
//! A failed write to standard output (most often a closed pipe, as with
//! `tusk ... | head`) is remembered, silences all further output, and ends
//! the run with [`Flow::OutputClosed`] so that the caller can exit quietly.

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

use tusk_sql::sqlstate::CHARACTER_NOT_IN_REPERTOIRE;
use tusk_sql::{CopyClient, QueryResult, Session, SqlError, TransactionStatus};

use crate::copy::{parse_slash_copy, CopyInput, DataIn, DataOut, Progress, SharedOut, ShellCopy};
use crate::format::{print_table, PrintOptions, Table};
use crate::report::{error_position_lines, os_message, parse_bool, timing_line};
use crate::scan::{is_blank, parse_meta, Item, MetaCommand, Scanner};
use crate::variables::Variables;

/// What the shell needs from the database engine.
pub trait Engine {
    /// Runs `sql` (one or more statements), handing each result to `sink`;
    /// stops at the first error.
    fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(QueryResult)) -> Result<(), SqlError>;
    /// `\d` (no table) and `\d table`.
    fn describe(&mut self, table: Option<&str>) -> Result<QueryResult, SqlError>;
    /// Whether a transaction block is open or failed (psql's prompt shows
    /// it).
    fn transaction_status(&self) -> TransactionStatus {
        TransactionStatus::Idle
    }
    /// Like [`Engine::execute`], with `client` as the other end of COPY
    /// FROM STDIN and COPY TO STDOUT, and results handed to `sink` as each
    /// statement ends.
    fn execute_copy(
        &mut self,
        sql: &str,
        sink: &mut (dyn FnMut(QueryResult) + Send),
        client: &mut dyn CopyClient,
    ) -> Result<(), SqlError> {
        let _ = client;
        self.execute(sql, sink)
    }
}

impl Engine for Session {
    fn execute(&mut self, sql: &str, sink: &mut dyn FnMut(QueryResult)) -> Result<(), SqlError> {
        Session::execute(self, sql, sink)
    }

    fn execute_copy(
        &mut self,
        sql: &str,
        sink: &mut (dyn FnMut(QueryResult) + Send),
        client: &mut dyn CopyClient,
    ) -> Result<(), SqlError> {
        Session::execute_copy(self, sql, sink, client)
    }

    fn describe(&mut self, table: Option<&str>) -> Result<QueryResult, SqlError> {
        Session::describe(self, table)
    }

    fn transaction_status(&self) -> TransactionStatus {
        Session::transaction_status(self)
    }
}

/// Settings from the command line and backslash commands.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub print: PrintOptions,
    /// `-q`: no command tags or informational messages.
    pub quiet: bool,
    /// `\timing`: print `Time: ...` after each statement.
    pub timing: bool,
    /// psql's variables (`-v`, `\set`, `\unset`); `ON_ERROR_STOP` among them.
    pub variables: Variables,
}

/// What running a piece of input led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next input.
    Continue,
    /// An error was reported. A script goes on after it unless
    /// `ON_ERROR_STOP` is set; a script that stopped returns this.
    Error,
    /// `\q`: stop reading input.
    Quit,
    /// Writing to standard output failed (e.g. a closed pipe): stop quietly.
    OutputClosed,
}

/// Short help printed by `\?`.
pub const HELP: &str = "\
General
  \\q                     quit tusk
  \\?                     show this help

Query Buffer
  \\g                     execute the query buffer (or the previous query if it is empty)
  \\r                     reset (clear) the query buffer

Informational
  \\d                     list tables
  \\d NAME                describe table NAME

Input/Output
  \\copy ...              perform SQL COPY with data stream to the client host
  \\echo [-n] [STRING]    write string to standard output (-n for no newline)

Formatting
  \\timing [on|off]       toggle timing of commands

Variables
  \\set [NAME [VALUE]]    set internal variable, or list all if no parameters
  \\unset NAME            unset (delete) internal variable
";

/// A session with the engine, its output streams and settings.
pub struct Shell<E, O, W> {
    engine: E,
    out: O,
    err: W,
    pub settings: Settings,
    /// The first failed write to `out`; once set, output is dropped.
    out_error: Option<io::Error>,
    /// The last statement sent, for `\g` with an empty buffer.
    last_query: Option<String>,
    /// The script being run, for message prefixes, and the current line.
    script: Option<String>,
    line: usize,
    /// The encoding error of a script line that was not UTF-8, reported
    /// in place of the statement that line belongs to.
    encoding_error: Option<String>,
    /// Whether input comes from a person at a terminal (adds hints).
    pub interactive: bool,
    /// Where `COPY ... FROM STDIN` reads outside a script (`-c`, the
    /// interactive shell): standard input.
    pub stdin: Box<dyn BufRead + Send>,
    /// Show the progress of loads on `err` (standard error is a terminal).
    pub progress: bool,
}

impl<E: Engine, O: Write + Send, W: Write + Send> Shell<E, O, W> {
    pub fn new(engine: E, out: O, err: W, settings: Settings) -> Self {
        Shell {
            engine,
            out,
            err,
            settings,
            out_error: None,
            last_query: None,
            script: None,
            line: 0,
            encoding_error: None,
            interactive: false,
            stdin: Box::new(io::BufReader::new(io::stdin())),
            progress: false,
        }
    }

    /// What psql's `%x` prompt escape shows: nothing, `*` in a transaction
    /// block, `!` in a failed one.
    pub fn transaction_marker(&self) -> &'static str {
        self.engine.transaction_status().prompt_marker()
    }

    /// Gives back the engine and the streams.
    pub fn into_parts(self) -> (E, O, W) {
        (self.engine, self.out, self.err)
    }

    /// The write error that closed standard output, if any.
    pub fn output_error(&self) -> Option<&io::Error> {
        self.out_error.as_ref()
    }

    fn write_out(&mut self, bytes: &[u8]) {
        if self.out_error.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.out_error = Some(e);
            }
        }
    }

    /// Flushes standard output (after each statement and before messages).
    pub fn flush(&mut self) {
        if self.out_error.is_none() {
            if let Err(e) = self.out.flush() {
                self.out_error = Some(e);
            }
        }
    }

    fn write_err(&mut self, text: &str) {
        self.flush();
        // Nothing sensible is left to do if standard error fails too.
        let _ = self.err.write_all(text.as_bytes());
        let _ = self.err.flush();
    }

    /// psql's prefix for messages about a script: `tusk:FILE:LINE: `.
    fn locus(&self) -> String {
        match &self.script {
            Some(name) => format!("tusk:{name}:{}: ", self.line),
            None => String::new(),
        }
    }

    /// A client-side error, as psql's `pg_log_error` prints it.
    fn log_error(&mut self, message: &str) {
        let text = match &self.script {
            Some(_) => format!("{}error: {message}\n", self.locus()),
            None => format!("{message}\n"),
        };
        self.write_err(&text);
    }

    fn log_warning(&mut self, message: &str) {
        let text = match &self.script {
            Some(_) => format!("{}warning: {message}\n", self.locus()),
            None => format!("{message}\n"),
        };
        self.write_err(&text);
    }

    /// `ERROR:  message`, with a position the `LINE n:` excerpt of `query`
    /// with a caret, then the DETAIL, HINT and CONTEXT lines, as psql
    /// prints them.
    fn report_sql_error(&mut self, error: &SqlError, query: &str) {
        let mut text = format!("{}ERROR:  {}\n", self.locus(), error.message);
        if let Some(lines) = error
            .position
            .and_then(|p| error_position_lines(query, p as usize))
        {
            text.push_str(&lines);
        }
        for (label, value) in [
            ("DETAIL", error.detail.as_deref()),
            ("HINT", error.hint.as_deref()),
            ("CONTEXT", error.context.as_deref()),
        ] {
            if let Some(v) = value {
                text.push_str(&format!("{label}:  {v}\n"));
            }
        }
        self.write_err(&text);
    }

    fn info(&mut self, message: &str) {
        if !self.settings.quiet {
            self.write_out(message.as_bytes());
            self.write_out(b"\n");
        }
    }

    fn finish(&mut self, flow: Flow) -> Flow {
        self.flush();
        if self.out_error.is_some() {
            Flow::OutputClosed
        } else {
            flow
        }
    }

    /// Sends `sql` to the engine and prints every result, the error that
    /// stopped it, and the time it took if `\timing` is on. COPY FROM STDIN
    /// reads standard input.
    pub fn run_sql(&mut self, sql: &str) -> Flow {
        self.run_sql_data(sql, DataIn::Stdin, DataOut::Output)
    }

    /// [`Shell::run_sql`] with COPY data from `source` when given.
    fn run_sql_from(&mut self, sql: &str, source: Option<&mut (dyn BufRead + Send)>) -> Flow {
        let input = match source {
            Some(s) => DataIn::Source(s),
            None => DataIn::Stdin,
        };
        self.run_sql_data(sql, input, DataOut::Output)
    }

    fn run_sql_data(&mut self, sql: &str, input: DataIn<'_>, output: DataOut) -> Flow {
        let start = Instant::now();
        let prompt =
            self.interactive && matches!(input, DataIn::Stdin) && io::stdin().is_terminal();
        let quiet = self.settings.quiet;
        // Data lines of a script are lines of the script.
        let script_lines = matches!(input, DataIn::Source(_));
        // Server messages carry the script's position, as psql's do.
        let locus = self.locus();
        let Shell {
            engine,
            out,
            err,
            settings,
            out_error,
            stdin,
            progress,
            ..
        } = self;
        let mut file;
        let source: &mut (dyn BufRead + Send) = match input {
            DataIn::Stdin => &mut **stdin,
            DataIn::Source(s) => s,
            DataIn::File(f) => {
                file = f;
                &mut file
            }
        };
        let shared = Mutex::new(SharedOut {
            out,
            error: out_error,
            copied_out: false,
        });
        let mut client = ShellCopy {
            input: CopyInput::new(source, prompt),
            reading: false,
            intro: prompt && !quiet,
            output,
            shared: &shared,
            typed: prompt,
            progress: progress.then(|| (Progress::new(), err)),
        };
        let settings = &*settings;
        let result = engine.execute_copy(
            sql,
            &mut |r| {
                let mut o = shared.lock().unwrap_or_else(|e| e.into_inner());
                if std::mem::take(&mut o.copied_out) && matches!(r, QueryResult::Command { .. }) {
                    return;
                }
                if let QueryResult::Notice(n) = &r {
                    if o.error.is_none() {
                        if let Err(e) = o.out.flush() {
                            *o.error = Some(e);
                        }
                    }
                    eprint!("{locus}{}", notice_text(n));
                    return;
                }
                if o.error.is_none() {
                    if let Err(e) = print_result(&mut *o.out, &r, settings, true) {
                        *o.error = Some(e);
                    }
                }
            },
            &mut client,
        );
        // A COPY that stopped early leaves the rest of its data unread.
        if client.reading {
            client.input.skip_rest();
        }
        if let Some((p, err)) = &mut client.progress {
            p.clear(*err);
        }
        let lines = client.input.lines;
        let input_error = client.input.error.take();
        drop(client);
        let elapsed = start.elapsed();
        if script_lines {
            self.line += lines;
        }
        self.last_query = Some(sql.to_string());
        let flow = match result {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.report_sql_error(&e, sql);
                Flow::Error
            }
        };
        if let Some(e) = input_error {
            self.log_error(&format!("could not read COPY data: {}", os_message(&e)));
        }
        if self.settings.timing {
            let line = timing_line(elapsed.as_secs_f64() * 1000.0);
            self.write_out(line.as_bytes());
            self.write_out(b"\n");
        }
        self.finish(flow)
    }

    /// Runs one `-c` string.
    pub fn run_command_string(&mut self, command: &str) -> Flow {
        let trimmed = command.trim_start();
        if let Some(meta) = trimmed.strip_prefix('\\') {
            let cmd = parse_meta(&meta.replace(['\n', '\r'], " "));
            let mut scanner = Scanner::new();
            return self.run_meta(&cmd, &mut scanner);
        }
        if is_blank(command) {
            return self.finish(Flow::Continue);
        }
        self.run_sql(command)
    }

    /// Runs a statement or backslash command that `scanner` produced.
    pub fn run_item(&mut self, item: &Item, scanner: &mut Scanner) -> Flow {
        self.run_item_from(item, scanner, None)
    }

    /// [`Shell::run_item`] with COPY FROM STDIN data from `source` (the
    /// script the item came from).
    fn run_item_from(
        &mut self,
        item: &Item,
        scanner: &mut Scanner,
        source: Option<&mut (dyn BufRead + Send)>,
    ) -> Flow {
        match item {
            Item::Statement(sql) => self.run_sql_from(sql, source),
            Item::Meta(cmd) => self.run_meta_from(cmd, scanner, source),
        }
    }

    fn warn_extra_args(&mut self, cmd: &MetaCommand, allowed: usize) {
        for extra in cmd.args.iter().skip(allowed) {
            self.log_warning(&format!(
                "\\{}: extra argument \"{extra}\" ignored",
                cmd.name
            ));
        }
    }

    /// Runs a backslash command. `scanner` holds the pending query buffer
    /// (for `\g` and `\r`).
    pub fn run_meta(&mut self, cmd: &MetaCommand, scanner: &mut Scanner) -> Flow {
        self.run_meta_from(cmd, scanner, None)
    }

    fn run_meta_from(
        &mut self,
        cmd: &MetaCommand,
        scanner: &mut Scanner,
        source: Option<&mut (dyn BufRead + Send)>,
    ) -> Flow {
        let flow = match cmd.name.as_str() {
            "q" | "quit" => {
                self.warn_extra_args(cmd, 0);
                Flow::Quit
            }
            "?" => {
                self.warn_extra_args(cmd, 0);
                self.write_out(HELP.as_bytes());
                Flow::Continue
            }
            "timing" => {
                self.warn_extra_args(cmd, 1);
                let mut flow = Flow::Continue;
                match cmd.args.first() {
                    None => self.settings.timing = !self.settings.timing,
                    Some(v) => match parse_bool(v) {
                        Some(on) => self.settings.timing = on,
                        None => {
                            self.log_error(&format!(
                                "unrecognized value \"{v}\" for \"\\timing\": Boolean expected"
                            ));
                            flow = Flow::Error;
                        }
                    },
                }
                let state = if self.settings.timing {
                    "Timing is on."
                } else {
                    "Timing is off."
                };
                self.info(state);
                flow
            }
            "d" => {
                self.warn_extra_args(cmd, 1);
                let name = cmd.args.first().map(|a| normalize_name(a));
                self.describe(name.as_deref())
            }
            "g" => {
                self.warn_extra_args(cmd, 0);
                let query = scanner.take_pending().or_else(|| self.last_query.clone());
                match query {
                    Some(q) => return self.run_sql_from(&q, source),
                    None => Flow::Continue,
                }
            }
            "copy" => return self.slash_copy(&cmd.line, source),
            "set" => match cmd.args.split_first() {
                None => {
                    let listing = self.settings.variables.listing();
                    self.write_out(listing.as_bytes());
                    Flow::Continue
                }
                Some((name, words)) => {
                    let value = words.concat();
                    match self.settings.variables.set(name, &value) {
                        Ok(()) => Flow::Continue,
                        Err(message) => {
                            self.log_error(&format!("\\set: {message}"));
                            Flow::Error
                        }
                    }
                }
            },
            "unset" => match cmd.args.first() {
                None => {
                    self.log_error("\\unset: missing required argument");
                    Flow::Error
                }
                Some(name) => {
                    self.warn_extra_args(cmd, 1);
                    match self.settings.variables.unset(name) {
                        Ok(()) => Flow::Continue,
                        Err(message) => {
                            self.log_error(&format!("\\unset: {message}"));
                            Flow::Error
                        }
                    }
                }
            },
            "r" | "reset" => {
                self.warn_extra_args(cmd, 0);
                scanner.reset();
                self.info("Query buffer reset (cleared).");
                Flow::Continue
            }
            "echo" => {
                let (newline, words) = match cmd.args.first() {
                    Some(first) if first == "-n" => (false, &cmd.args[1..]),
                    _ => (true, &cmd.args[..]),
                };
                let mut text = words.join(" ");
                if newline {
                    text.push('\n');
                }
                self.write_out(text.as_bytes());
                Flow::Continue
            }
            other => {
                self.log_error(&format!("invalid command \\{other}"));
                if self.interactive {
                    self.log_error("Try \\? for help.");
                }
                Flow::Error
            }
        };
        self.finish(flow)
    }

    /// `\copy`: COPY with the data in a local file or the shell's streams.
    fn slash_copy(&mut self, args: &str, source: Option<&mut (dyn BufRead + Send)>) -> Flow {
        match parse_slash_copy(args).and_then(|c| c.open(source)) {
            Ok((sql, input, output)) => self.run_sql_data(&sql, input, output),
            Err(message) => {
                self.log_error(&message);
                self.finish(Flow::Error)
            }
        }
    }

    fn describe(&mut self, name: Option<&str>) -> Flow {
        match self.engine.describe(name) {
            Ok(QueryResult::Rows { rows, .. }) if name.is_none() && rows.is_empty() => {
                self.log_error("Did not find any relations.");
                Flow::Continue
            }
            Ok(result) => {
                if self.out_error.is_none() {
                    if let Err(e) =
                        print_result(&mut self.out, &result, &self.settings, name.is_none())
                    {
                        self.out_error = Some(e);
                    }
                }
                Flow::Continue
            }
            Err(e) => {
                self.log_error(&e.message);
                Flow::Error
            }
        }
    }

    /// Runs a script read from `input` line by line. After an error it goes
    /// on with the next statement, or, with `ON_ERROR_STOP` set, stops and
    /// returns [`Flow::Error`]. `name` (a file name, or `<stdin>` for `-f
    /// -`) turns on the `tusk:NAME:LINE: ` message prefix; piped standard
    /// input has none.
    pub fn run_script<R: BufRead + Send>(&mut self, mut input: R, name: Option<&str>) -> Flow {
        let saved = (self.script.take(), self.line);
        self.script = name.map(str::to_string);
        self.line = 0;
        let mut scanner = Scanner::new();
        let mut raw = Vec::new();
        let flow = 'lines: loop {
            raw.clear();
            match input.read_until(b'\n', &mut raw) {
                Ok(0) => break Flow::Continue,
                Ok(_) => {}
                Err(e) => {
                    let message = format!("could not read from input file: {}", os_message(&e));
                    let text = match &self.script {
                        Some(name) => format!("tusk:{name}: error: {message}\n"),
                        None => format!("tusk: error: {message}\n"),
                    };
                    self.write_err(&text);
                    break Flow::Error;
                }
            }
            self.line += 1;
            if raw.last() == Some(&b'\n') {
                raw.pop();
            }
            let line = match std::str::from_utf8(&raw) {
                Ok(text) => text.to_string(),
                Err(e) => {
                    self.encoding_error
                        .get_or_insert_with(|| invalid_utf8_message(&raw[e.valid_up_to()..]));
                    String::from_utf8_lossy(&raw).into_owned()
                }
            };
            for item in scanner.feed_line(&line) {
                let failed = match &item {
                    Item::Statement(sql) => self.fail_if_not_utf8(sql),
                    Item::Meta(_) => None,
                };
                let flow = match failed {
                    Some(flow) => flow,
                    None => self.run_item_from(&item, &mut scanner, Some(&mut input)),
                };
                match self.after_script_item(flow) {
                    Flow::Continue => {}
                    stop => break 'lines stop,
                }
            }
        };
        let flow = match flow {
            Flow::Continue => match scanner.take_pending() {
                Some(sql) => {
                    let flow = match self.fail_if_not_utf8(&sql) {
                        Some(flow) => flow,
                        None => self.run_sql_from(&sql, Some(&mut input)),
                    };
                    self.after_script_item(flow)
                }
                None => self.finish(Flow::Continue),
            },
            other => other,
        };
        (self.script, self.line) = saved;
        self.encoding_error = None;
        flow
    }

    /// What a script does after one of its statements or commands: an
    /// error ends it only under `ON_ERROR_STOP`.
    fn after_script_item(&self, flow: Flow) -> Flow {
        match flow {
            Flow::Error if !self.settings.variables.on_error_stop() => Flow::Continue,
            other => other,
        }
    }

    /// Fails `sql` as the server fails a statement whose bytes are not
    /// UTF-8, before it runs, if a line read into it was not.
    fn fail_if_not_utf8(&mut self, sql: &str) -> Option<Flow> {
        let message = self.encoding_error.take()?;
        let e = SqlError::coded(CHARACTER_NOT_IN_REPERTOIRE, message);
        self.report_sql_error(&e, sql);
        Some(self.finish(Flow::Error))
    }
}

/// PostgreSQL's message for input that is not UTF-8: the first bad byte
/// and the rest of the sequence its lead byte announces, as far as the
/// input goes.
fn invalid_utf8_message(bad: &[u8]) -> String {
    let lead = bad[0];
    let len = match lead {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    let bytes: Vec<String> = bad.iter().take(len).map(|b| format!("0x{b:02x}")).collect();
    format!(
        "invalid byte sequence for encoding \"UTF8\": {}",
        bytes.join(" ")
    )
}

/// A notice as psql prints it: `LEVEL:  message`, then `DETAIL:  detail`.
fn notice_text(n: &tusk_sql::Notice) -> String {
    let mut text = format!("{}:  {}\n", n.level, n.message);
    if let Some(detail) = &n.detail {
        text.push_str(&format!("DETAIL:  {detail}\n"));
    }
    text
}

/// Prints one result: a table (with `(N rows)` if `row_count` is set and
/// the table has no footers of its own) or a command tag (unless quiet).
pub fn print_result(
    out: &mut dyn Write,
    result: &QueryResult,
    settings: &Settings,
    row_count: bool,
) -> io::Result<()> {
    match result {
        QueryResult::Rows {
            title,
            columns,
            rows,
        } => {
            let table = Table {
                title: title.as_deref(),
                columns,
                rows,
                footers: &[],
                default_footer: row_count,
            };
            print_table(out, &table, &settings.print)
        }
        QueryResult::Notice(n) => {
            // psql prints server messages on stderr, whatever the output.
            eprint!("{}", notice_text(n));
            Ok(())
        }
        QueryResult::Command { tag } => {
            if settings.quiet {
                Ok(())
            } else {
                out.write_all(tag.as_bytes())?;
                out.write_all(b"\n")
            }
        }
    }
}

/// A `\d` argument as psql reads a name: unquoted letters fold to lower
/// case, `"..."` parts are taken verbatim (`""` is a quote) without their
/// quotes. `Public."My Table"` becomes `public.My Table`.
pub fn normalize_name(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut chars = arg.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if c == '"' {
            if quoted && chars.next_if_eq(&'"').is_some() {
                out.push('"');
            } else {
                quoted = !quoted;
            }
        } else if quoted {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;
    use tusk_sql::ColumnHeader;

    /// A stand-in engine: a few canned statements, and a log of what ran.
    #[derive(Default)]
    struct Fake {
        log: Vec<String>,
        described: Vec<Option<String>>,
        no_tables: bool,
    }

    fn one(name: &str, numeric: bool, values: &[Option<&str>]) -> QueryResult {
        QueryResult::Rows {
            title: None,
            columns: vec![ColumnHeader {
                name: name.to_string(),
                numeric,
            }],
            rows: values.iter().map(|v| vec![v.map(str::to_string)]).collect(),
        }
    }

    impl Engine for Fake {
        fn execute(
            &mut self,
            sql: &str,
            sink: &mut dyn FnMut(QueryResult),
        ) -> Result<(), SqlError> {
            self.log.push(sql.to_string());
            // Statements separated by ';' are run in order, like the engine.
            let mut offset = 0;
            for part in sql.split_inclusive(';') {
                let words: Vec<&str> = part.trim_end_matches(';').split_whitespace().collect();
                let stmt = words.join(" ");
                let start = offset + part.find(|c: char| !c.is_whitespace()).unwrap_or(0);
                offset += part.chars().count();
                match stmt.as_str() {
                    "" => {}
                    "select 1" => sink(one("?column?", true, &[Some("1")])),
                    "select 2" => sink(one("?column?", true, &[Some("2")])),
                    "select null" => sink(one("x", false, &[None])),
                    "create table t (a int)" => sink(QueryResult::Command {
                        tag: "CREATE TABLE".into(),
                    }),
                    s if s.starts_with("selec ") => {
                        return Err(SqlError::new("syntax error at or near \"selec\"").at(start + 1))
                    }
                    s => return Err(SqlError::new(format!("cannot run {s}"))),
                }
            }
            Ok(())
        }

        fn describe(&mut self, table: Option<&str>) -> Result<QueryResult, SqlError> {
            self.described.push(table.map(str::to_string));
            match table {
                None if self.no_tables => Ok(QueryResult::Rows {
                    title: Some("List of relations".into()),
                    columns: vec![],
                    rows: vec![],
                }),
                None => Ok(QueryResult::Rows {
                    title: Some("List of relations".into()),
                    columns: ["Schema", "Name", "Type", "Owner"]
                        .iter()
                        .map(|n| ColumnHeader {
                            name: n.to_string(),
                            numeric: false,
                        })
                        .collect(),
                    rows: vec![["public", "t", "table", "tusk"]
                        .iter()
                        .map(|v| Some(v.to_string()))
                        .collect()],
                }),
                Some("t") => Ok(QueryResult::Rows {
                    title: Some("Table \"public.t\"".into()),
                    columns: ["Column", "Type"]
                        .iter()
                        .map(|n| ColumnHeader {
                            name: n.to_string(),
                            numeric: false,
                        })
                        .collect(),
                    rows: vec![vec![Some("a".into()), Some("integer".into())]],
                }),
                Some(other) => Err(SqlError::new(format!(
                    "Did not find any relation named \"{other}\"."
                ))),
            }
        }
    }

    type TestShell = Shell<Fake, Vec<u8>, Vec<u8>>;

    fn shell() -> TestShell {
        Shell::new(Fake::default(), Vec::new(), Vec::new(), Settings::default())
    }

    fn outputs(shell: TestShell) -> (String, String, Fake) {
        let (engine, out, err) = shell.into_parts();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
            engine,
        )
    }

    const ONE: &str = " ?column? \n----------\n        1\n(1 row)\n\n";
    const TWO: &str = " ?column? \n----------\n        2\n(1 row)\n\n";

    #[test]
    fn command_string_prints_every_result() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string("select 1; select 2"), Flow::Continue);
        assert_eq!(
            sh.run_command_string("create table t (a int)"),
            Flow::Continue
        );
        let (out, err, engine) = outputs(sh);
        assert_eq!(out, format!("{ONE}{TWO}CREATE TABLE\n"));
        assert_eq!(err, "");
        assert_eq!(
            engine.log,
            vec!["select 1; select 2", "create table t (a int)"]
        );
    }

    #[test]
    fn command_string_error_after_results() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string("select 1;\nselec 2"), Flow::Error);
        let (out, err, _) = outputs(sh);
        assert_eq!(out, ONE);
        assert_eq!(
            err,
            "ERROR:  syntax error at or near \"selec\"\nLINE 2: selec 2\n        ^\n"
        );
    }

    #[test]
    fn blank_command_string_runs_nothing() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string(""), Flow::Continue);
        assert_eq!(sh.run_command_string(" ; -- x"), Flow::Continue);
        let (out, err, engine) = outputs(sh);
        assert_eq!((out.as_str(), err.as_str()), ("", ""));
        assert!(engine.log.is_empty());
    }

    #[test]
    fn quiet_hides_tags_and_messages() {
        let mut sh = shell();
        sh.settings.quiet = true;
        sh.run_command_string("create table t (a int)");
        sh.run_command_string("\\timing on");
        let (out, _, _) = outputs(sh);
        assert_eq!(out, "");
    }

    #[test]
    fn unaligned_tuples_only_null() {
        let mut sh = shell();
        sh.settings.print.format = Format::Unaligned;
        sh.settings.print.tuples_only = true;
        sh.run_command_string("select null; select 1");
        let (out, _, _) = outputs(sh);
        assert_eq!(out, "\n1\n");
    }

    #[test]
    fn timing_toggles_and_prints() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string("\\timing"), Flow::Continue);
        sh.run_command_string("select 1");
        assert_eq!(sh.run_command_string("\\timing off"), Flow::Continue);
        assert_eq!(sh.run_command_string("\\timing bogus"), Flow::Error);
        let (out, err, _) = outputs(sh);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "Timing is on.");
        assert!(
            lines[6].starts_with("Time: ") && lines[6].ends_with(" ms"),
            "{out}"
        );
        assert_eq!(&lines[7..], &["Timing is off.", "Timing is off."]);
        assert_eq!(
            err,
            "unrecognized value \"bogus\" for \"\\timing\": Boolean expected\n"
        );
    }

    #[test]
    fn script_goes_on_after_errors() {
        let mut sh = shell();
        let script = "-- leading comment\nselect 1;\n\nselect\n  2; selec 3;\nselect 1;\n";
        assert_eq!(
            sh.run_script(script.as_bytes(), Some("x.sql")),
            Flow::Continue
        );
        let (out, err, engine) = outputs(sh);
        assert_eq!(
            engine.log,
            vec!["select 1;", "select\n  2;", "selec 3;", "select 1;"]
        );
        assert_eq!(out, format!("{ONE}{TWO}{ONE}"));
        assert_eq!(
            err,
            "tusk:x.sql:5: ERROR:  syntax error at or near \"selec\"\nLINE 1: selec 3;\n        ^\n"
        );
    }

    #[test]
    fn on_error_stop_ends_the_script() {
        let mut sh = shell();
        let script = "select 1;\n\\set ON_ERROR_STOP\nselec 2;\nselect 1;\n";
        assert_eq!(sh.run_script(script.as_bytes(), Some("x.sql")), Flow::Error);
        let (out, err, engine) = outputs(sh);
        assert_eq!(engine.log, vec!["select 1;", "selec 2;"]);
        assert_eq!(out, ONE);
        assert!(
            err.starts_with("tusk:x.sql:3: ERROR:  syntax error"),
            "{err}"
        );

        // A refused value is an error of its own, and leaves the old one.
        let mut sh = shell();
        let script = "\\set ON_ERROR_STOP bogus\nselec 2;\n\\unset ON_ERROR_STOP\n\\set\n";
        assert_eq!(
            sh.run_script(script.as_bytes(), Some("y.sql")),
            Flow::Continue
        );
        let (out, err, _) = outputs(sh);
        assert_eq!(out, "ON_ERROR_STOP = 'off'\n");
        assert!(
            err.starts_with(
                "tusk:y.sql:1: error: \\set: unrecognized value \"bogus\" for \"ON_ERROR_STOP\": \
                 Boolean expected\ntusk:y.sql:2: ERROR:  syntax error"
            ),
            "{err}"
        );
    }

    #[test]
    fn piped_stdin_has_no_prefix_and_runs_last_statement() {
        let mut sh = shell();
        assert_eq!(
            sh.run_script("select 1;\nselect 2".as_bytes(), None),
            Flow::Continue
        );
        assert_eq!(sh.run_script("selec 1;".as_bytes(), None), Flow::Continue);
        let (out, err, _) = outputs(sh);
        assert_eq!(out, format!("{ONE}{TWO}"));
        assert!(err.starts_with("ERROR:  syntax error"), "{err}");
    }

    #[test]
    fn script_quit_stops() {
        let mut sh = shell();
        assert_eq!(
            sh.run_script("select 1;\n\\q\nselect 2;\n".as_bytes(), Some("f")),
            Flow::Quit
        );
        let (out, _, engine) = outputs(sh);
        assert_eq!(out, ONE);
        assert_eq!(engine.log.len(), 1);
    }

    #[test]
    fn invalid_command() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string("\\foo"), Flow::Error);
        assert_eq!(
            sh.run_script("\n\\foo\n".as_bytes(), Some("<stdin>")),
            Flow::Continue
        );
        sh.interactive = true;
        sh.run_command_string("\\bar");
        let (_, err, _) = outputs(sh);
        assert_eq!(
            err,
            "invalid command \\foo\ntusk:<stdin>:2: error: invalid command \\foo\n\
             invalid command \\bar\nTry \\? for help.\n"
        );
    }

    #[test]
    fn describe_list_and_table() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string("\\d"), Flow::Continue);
        assert_eq!(sh.run_command_string("\\d T"), Flow::Continue);
        let (out, err, engine) = outputs(sh);
        assert_eq!(
            out,
            "       List of relations\n \
             Schema | Name | Type  | Owner \n\
             --------+------+-------+-------\n \
             public | t    | table | tusk\n\
             (1 row)\n\n\
             \x20Table \"public.t\"\n \
             Column |  Type   \n\
             --------+---------\n \
             a      | integer\n\n"
        );
        assert_eq!(err, "");
        assert_eq!(engine.described, vec![None, Some("t".to_string())]);
    }

    #[test]
    fn describe_errors_and_warnings() {
        let mut sh = shell();
        assert_eq!(sh.run_command_string("\\d nope"), Flow::Error);
        assert_eq!(
            sh.run_script("\\d t u\n".as_bytes(), Some("s.sql")),
            Flow::Continue
        );
        sh.engine.no_tables = true;
        assert_eq!(sh.run_command_string("\\d"), Flow::Continue);
        let (_, err, _) = outputs(sh);
        assert_eq!(
            err,
            "Did not find any relation named \"nope\".\n\
             tusk:s.sql:1: warning: \\d: extra argument \"u\" ignored\n\
             Did not find any relations.\n"
        );
    }

    #[test]
    fn go_and_reset() {
        let mut sh = shell();
        let script = "select 1 \\g\n\\g\nselect 2 \\r\n\\echo done 'a b' \"c\"\n";
        assert_eq!(sh.run_script(script.as_bytes(), None), Flow::Continue);
        let (out, _, engine) = outputs(sh);
        assert_eq!(engine.log, vec!["select 1 ", "select 1 "]);
        assert_eq!(
            out,
            format!("{ONE}{ONE}Query buffer reset (cleared).\ndone a b \"c\"\n")
        );
    }

    #[test]
    fn names_fold_like_psql() {
        assert_eq!(normalize_name("T"), "t");
        assert_eq!(normalize_name("Public.\"My Table\""), "public.My Table");
        assert_eq!(normalize_name("\"a\"\"b\""), "a\"b");
        assert_eq!(normalize_name("\"open"), "open");
    }

    /// Input that cannot be read (like `-f /tmp`, a directory).
    struct Unreadable;

    impl io::Read for Unreadable {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(21))
        }
    }

    #[test]
    fn script_lines_that_are_not_utf8_fail_their_statement() {
        let mut sh = shell();
        let script: &[u8] = b"select 1;\nselect 'caf\xe9\xa9';\n";
        assert_eq!(sh.run_script(script, Some("x.sql")), Flow::Continue);
        let (out, err, engine) = outputs(sh);
        assert_eq!(engine.log, vec!["select 1;"]);
        assert_eq!(out, ONE);
        assert_eq!(
            err,
            "tusk:x.sql:2: ERROR:  invalid byte sequence for encoding \"UTF8\": 0xe9 0xa9 0x27\n"
        );
    }

    #[test]
    fn unreadable_script() {
        let mut sh = shell();
        let input = io::BufReader::new(Unreadable);
        assert_eq!(sh.run_script(input, Some("/tmp")), Flow::Error);
        let input = io::BufReader::new(Unreadable);
        assert_eq!(sh.run_script(input, None), Flow::Error);
        let (_, err, _) = outputs(sh);
        assert_eq!(
            err,
            "tusk:/tmp: error: could not read from input file: Is a directory\n\
             tusk: error: could not read from input file: Is a directory\n"
        );
    }

    /// A writer whose reader went away.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn closed_output_stops_quietly() {
        let mut sh = Shell::new(Fake::default(), Closed, Vec::new(), Settings::default());
        assert_eq!(
            sh.run_script("select 1;\nselect 2;\n".as_bytes(), Some("f")),
            Flow::OutputClosed
        );
        assert_eq!(sh.output_error().unwrap().kind(), io::ErrorKind::BrokenPipe);
        let (engine, _, err) = sh.into_parts();
        assert_eq!(engine.log.len(), 1);
        assert!(err.is_empty());
    }
}
