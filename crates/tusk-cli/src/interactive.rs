//! The interactive terminal: line editing, history and prompts around a
//! [`Shell`].
//!
//! The prompt is `tusk=> ` when no statement is pending and `tusk-> ` while
//! one continues; like psql's default PROMPT2 the `-` becomes `'`, `"`, `$`,
//! `*` or `(` inside a string, quoted identifier, dollar quote, comment or
//! parentheses. Inside a transaction block a `*` follows (`tusk=*> `), in
//! a failed one a `!` (`tusk=!> `), as psql's `%x` shows. A statement ends at `;` and may span lines. Each completed
//! statement (all the lines it took) becomes one history entry; history
//! lives in `~/.tusk_history`. Ctrl-C clears the pending statement while a
//! line is edited and cancels the running statement while one runs (the
//! shell goes on, as psql's does); Ctrl-D (end of input) leaves. Errors are reported and the loop goes on.

use std::io::Write;
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;

use crate::scan::Scanner;
use crate::shell::{Engine, Flow, Shell};

/// Greeting printed on start (unless `-q`).
fn banner() -> String {
    format!(
        "tusk ({})\nType \"help\" for help.\n\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What `help` prints, as psql's does.
const HELP_WORD: &str = "\
You are using tusk, the command-line interface to the tusk database engine.
Type:  \\? for help with tusk commands
       \\g or terminate with semicolon to execute query
       \\q to quit
";

fn history_path() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".tusk_history"))
}

/// The words psql accepts on an empty buffer: `help`, `quit`, `exit`
/// (alone on the line, optionally followed by `;`).
fn special_word(line: &str) -> Option<&'static str> {
    let word = line.trim().trim_end_matches(';').trim_end();
    ["help", "quit", "exit"]
        .into_iter()
        .find(|w| word.eq_ignore_ascii_case(w))
}

/// The prompt for scanner state `state` (`=`, `-`, `'`, ...) and
/// transaction marker `marker` (psql's `%R` and `%x`): `tusk=*> `.
pub fn prompt(state: char, marker: &str) -> String {
    format!("tusk{state}{marker}> ")
}

/// Runs the interactive loop until `\q`, Ctrl-D or a closed output.
/// `on_editor` runs once the line editor exists: rustyline installs its own
/// SIGINT handler then, and a handler that should see Ctrl-C while a
/// statement runs (cancel it) must be installed after it.
pub fn run<E: Engine, O: Write + Send, W: Write + Send>(
    shell: &mut Shell<E, O, W>,
    on_editor: impl FnOnce(),
) -> Flow {
    shell.interactive = true;
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            // No usable terminal after all: fall back to reading a script.
            let _ = writeln!(
                std::io::stderr(),
                "tusk: warning: line editing unavailable: {e}"
            );
            return shell.run_script(std::io::BufReader::new(std::io::stdin()), None);
        }
    };
    on_editor();
    let history = history_path();
    if let Some(path) = &history {
        // A missing history file is normal on first use.
        let _ = editor.load_history(path);
    }
    if !shell.settings.quiet {
        let _ = std::io::stdout().write_all(banner().as_bytes());
    }

    let mut scanner = Scanner::new();
    let mut entry = String::new(); // lines of the history entry being built
    let flow = loop {
        shell.flush();
        let prompt = prompt(scanner.prompt_char(), shell.transaction_marker());
        let input = match editor.readline(&prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                scanner.reset();
                entry.clear();
                continue;
            }
            Err(ReadlineError::Eof) => {
                let _ = std::io::stdout().write_all(b"\\q\n");
                break Flow::Quit;
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "tusk: error: {e}");
                break Flow::Error;
            }
        };

        if scanner.is_empty() {
            match special_word(&input) {
                Some("help") => {
                    let _ = editor.add_history_entry(input.as_str());
                    let _ = std::io::stdout().write_all(HELP_WORD.as_bytes());
                    continue;
                }
                Some(_) => {
                    let _ = editor.add_history_entry(input.as_str());
                    break Flow::Quit;
                }
                None => {}
            }
        }

        if !entry.is_empty() {
            entry.push('\n');
        }
        entry.push_str(&input);
        let mut quit = None;
        // A recalled history entry may hold several lines.
        'lines: for line in input.split('\n') {
            for item in scanner.feed_line(line) {
                match shell.run_item(&item, &mut scanner) {
                    Flow::Quit => {
                        quit = Some(Flow::Quit);
                        break 'lines;
                    }
                    Flow::OutputClosed => {
                        quit = Some(Flow::OutputClosed);
                        break 'lines;
                    }
                    Flow::Continue | Flow::Error => {}
                }
            }
        }
        // Once nothing is pending, the lines typed since the last entry
        // form the next one.
        if scanner.is_empty() {
            if !entry.trim().is_empty() {
                let _ = editor.add_history_entry(entry.as_str());
            }
            entry.clear();
        }
        if let Some(flow) = quit {
            break flow;
        }
    };
    shell.flush();
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    flow
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_words() {
        assert_eq!(special_word("help"), Some("help"));
        assert_eq!(special_word("  QUIT ; "), Some("quit"));
        assert_eq!(special_word("exit"), Some("exit"));
        assert_eq!(special_word("exit now"), None);
        assert_eq!(special_word("select 1;"), None);
    }
}
