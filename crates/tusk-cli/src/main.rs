//! `tusk`: a psql-like terminal for the tusk engine.
//!
//! ```text
//! tusk [-D DIR] [-c SQL]... [-f FILE]... [-A] [-t] [-q] [-F SEP]
//! tusk serve [-D DIR] [--port PORT] [--listen ADDRESSES]
//! ```
//!
//! `tusk serve` runs the PostgreSQL wire-protocol server (`tusk-server`)
//! until SIGTERM or SIGINT.
//!
//! `-c` and `-f` run in the order given. As in psql, an error does not stop
//! them unless `ON_ERROR_STOP` is set (`-v ON_ERROR_STOP=1`, or `\set` in a
//! script): a script goes on with its next statement, and the next `-c` or
//! `-f` runs. Without them, a terminal on standard input gets the
//! interactive shell, anything else is read as a script (like `-f -`).
//!
//! Exit status, psql's: 0 when the last `-c` succeeded or the last script
//! ran to its end (and after `\q`), 1 when the last `-c` failed, 3 when
//! `ON_ERROR_STOP` stopped a script, 2 for a usage error or a data directory
//! that cannot be opened, 141 when standard output was closed early (what a
//! shell reports for psql, which dies of SIGPIPE there).

/// The process's heap allocator (see `tusk_cli::allocator`).
#[global_allocator]
static ALLOCATOR: tusk_cli::allocator::MiMalloc = tusk_cli::allocator::MiMalloc;

use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};

use tusk_cli::format::{Format, PrintOptions};
use tusk_cli::report::os_message;
use tusk_cli::shell::{Flow, Settings, Shell};
use tusk_cli::variables::{parse_assignment, Variables};
use tusk_cli::{interactive, shell};

/// tusk is the interactive terminal for the tusk database engine.
#[derive(Debug, Parser)]
#[command(name = "tusk", version)]
struct Cli {
    /// Data directory (created on first use)
    #[arg(
        short = 'D',
        long = "pgdata",
        value_name = "DIR",
        env = "TUSKDATA",
        default_value = "./tusk-data"
    )]
    data_dir: PathBuf,

    /// Run one command (SQL or a backslash command); may be repeated
    #[arg(
        short = 'c',
        long = "command",
        value_name = "COMMAND",
        allow_hyphen_values = true
    )]
    command: Vec<String>,

    /// Run commands from FILE ("-" for standard input); may be repeated
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Vec<String>,

    /// Unaligned output: fields separated by "|" (see -F)
    #[arg(short = 'A', long = "no-align")]
    no_align: bool,

    /// Print rows only: no header, no row count footer
    #[arg(short = 't', long = "tuples-only")]
    tuples_only: bool,

    /// Quiet: no command tags or informational messages
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,

    /// Field separator for unaligned output
    #[arg(
        short = 'F',
        long = "field-separator",
        value_name = "STRING",
        default_value = "|"
    )]
    field_separator: String,

    /// Set variable NAME to VALUE (NAME alone unsets it), as `\set` does
    #[arg(
        short = 'v',
        long = "set",
        visible_alias = "variable",
        value_name = "NAME=VALUE"
    )]
    variables: Vec<String>,

    /// Accepted for psql compatibility (tusk reads no startup file)
    #[arg(short = 'X', long = "no-psqlrc", hide = true)]
    no_psqlrc: bool,
}

/// tusk serve: PostgreSQL's wire protocol on a data directory.
#[derive(Debug, Parser)]
#[command(name = "tusk serve", version)]
struct ServeCli {
    /// Data directory (created on first use)
    #[arg(
        short = 'D',
        long = "pgdata",
        value_name = "DIR",
        env = "TUSKDATA",
        default_value = "./tusk-data"
    )]
    data_dir: PathBuf,

    /// TCP port (default: `port` in tusk.conf, else 5432)
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    port: Option<u16>,

    /// Addresses to listen on, comma-separated; `*` for all (default:
    /// `listen_addresses` in tusk.conf, else localhost)
    #[arg(short = 'l', long = "listen", value_name = "ADDRESSES")]
    listen: Option<String>,
}

/// `tusk serve`: exit 0 after a clean shutdown, 1 on a startup error.
fn serve(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let cli = ServeCli::parse_from(args);
    let overrides = tusk_server::Overrides {
        port: cli.port,
        listen_addresses: cli.listen,
    };
    let server = match tusk_server::Server::bind(&cli.data_dir, &overrides) {
        Ok(s) => s,
        Err(e) => {
            let (first, rest) = e.split_once('\n').unwrap_or((&e, ""));
            complain(first);
            for line in rest.lines() {
                let _ = writeln!(io::stderr(), "{line}");
            }
            return ExitCode::FAILURE;
        }
    };
    match server.run_until_signal() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            complain(&e);
            ExitCode::FAILURE
        }
    }
}

/// One `-c` or `-f`, in command-line order.
enum Action {
    Command(String),
    File(String),
}

/// Exit status when standard output was closed under us; what a shell
/// reports for psql, which dies of SIGPIPE there.
const EXIT_OUTPUT_CLOSED: u8 = 141;

/// psql's exit status when `ON_ERROR_STOP` ended a script.
const EXIT_SCRIPT_STOPPED: u8 = 3;

/// How the run ended, which decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The last action succeeded (or `\q`).
    Success,
    /// The last action was a `-c` that failed, or a script that could not
    /// be read.
    Failed,
    /// `ON_ERROR_STOP` ended a script.
    ScriptStopped,
    /// Standard output was closed.
    OutputClosed,
}

/// What a script's [`Flow`] means for the exit status: it returns
/// [`Flow::Error`] only when `ON_ERROR_STOP` stopped it.
fn script_outcome(flow: Flow) -> Outcome {
    match flow {
        Flow::Continue | Flow::Quit => Outcome::Success,
        Flow::Error => Outcome::ScriptStopped,
        Flow::OutputClosed => Outcome::OutputClosed,
    }
}

fn main() -> ExitCode {
    // An empty $TUSKDATA means "not set" (clap would reject it as a value).
    // Still single-threaded here, so changing the environment is sound.
    if std::env::var_os("TUSKDATA").is_some_and(|v| v.is_empty()) {
        std::env::remove_var("TUSKDATA");
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "serve") {
        return serve(std::env::args_os().skip(1));
    }
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };

    // Interleave -c and -f by their position on the command line.
    let mut actions: Vec<(usize, Action)> = Vec::new();
    if let Some(idx) = matches.indices_of("command") {
        actions.extend(
            idx.zip(cli.command.iter())
                .map(|(i, c)| (i, Action::Command(c.clone()))),
        );
    }
    if let Some(idx) = matches.indices_of("file") {
        actions.extend(
            idx.zip(cli.file.iter())
                .map(|(i, f)| (i, Action::File(f.clone()))),
        );
    }
    actions.sort_by_key(|(i, _)| *i);

    let settings = Settings {
        print: PrintOptions {
            format: if cli.no_align {
                Format::Unaligned
            } else {
                Format::Aligned
            },
            tuples_only: cli.tuples_only,
            field_sep: cli.field_separator.clone(),
        },
        quiet: cli.quiet,
        timing: false,
        variables: Variables::default(),
    };
    let mut settings = settings;
    for assignment in &cli.variables {
        let result = match parse_assignment(assignment) {
            (name, Some(value)) => settings.variables.set(name, value),
            (name, None) => settings.variables.unset(name),
        };
        if let Err(message) = result {
            complain(&message);
            return ExitCode::from(1);
        }
    }

    let mut session = match tusk_sql::Session::open(&cli.data_dir) {
        Ok(s) => s,
        Err(e) => {
            complain(&format!(
                "could not open data directory \"{}\": {}",
                cli.data_dir.display(),
                e.message
            ));
            return ExitCode::from(2);
        }
    };

    // CREATE/ALTER/DROP ROLE change the role file `tusk serve` reads.
    match tusk_server::roles::RoleFile::open(&cli.data_dir) {
        Ok(roles) => session.set_role_store(std::sync::Arc::new(roles)),
        Err(e) => complain(&e.message),
    }
    let interrupt = session.interrupt().clone();

    let stdout = BufWriter::new(io::stdout());
    let mut sh = Shell::new(session, stdout, io::stderr(), settings);
    sh.progress = io::stderr().is_terminal();
    let flow = if actions.is_empty() {
        if io::stdin().is_terminal() {
            // Ctrl-C while a statement runs cancels it and keeps the shell
            // (while a line is edited, rustyline reads Ctrl-C as a key).
            let flow = interactive::run(&mut sh, move || {
                if let Ok(mut signals) =
                    signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT])
                {
                    std::thread::spawn(move || {
                        for _ in signals.forever() {
                            interrupt.cancel();
                        }
                    });
                }
            });
            match flow {
                Flow::Continue | Flow::Quit => Outcome::Success,
                // The terminal itself failed.
                Flow::Error => Outcome::Failed,
                Flow::OutputClosed => Outcome::OutputClosed,
            }
        } else {
            script_outcome(sh.run_script(BufReader::new(io::stdin()), None))
        }
    } else {
        run_actions(&mut sh, actions.into_iter().map(|(_, a)| a))
    };
    sh.flush();
    let flow = if sh.output_error().is_some() {
        Outcome::OutputClosed
    } else {
        flow
    };

    let code = match flow {
        Outcome::Success => ExitCode::SUCCESS,
        Outcome::Failed => ExitCode::FAILURE,
        Outcome::ScriptStopped => ExitCode::from(EXIT_SCRIPT_STOPPED),
        Outcome::OutputClosed => match sh.output_error() {
            Some(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                complain(&format!("could not write to standard output: {e}"));
                ExitCode::FAILURE
            }
            _ => ExitCode::from(EXIT_OUTPUT_CLOSED),
        },
    };
    // Close the session (and its data directory) before exiting.
    drop(sh);
    code
}

fn run_actions<E: shell::Engine, O: Write + Send, W: Write + Send>(
    sh: &mut Shell<E, O, W>,
    actions: impl Iterator<Item = Action>,
) -> Outcome {
    let mut outcome = Outcome::Success;
    for action in actions {
        let (flow, failed) = match action {
            Action::Command(c) => {
                let flow = sh.run_command_string(&c);
                (flow, Outcome::Failed)
            }
            Action::File(name) if name == "-" => (
                sh.run_script(BufReader::new(io::stdin()), Some("<stdin>")),
                Outcome::ScriptStopped,
            ),
            Action::File(name) => match File::open(&name) {
                Ok(f) => (
                    sh.run_script(BufReader::new(f), Some(&name)),
                    Outcome::ScriptStopped,
                ),
                Err(e) => {
                    sh.flush();
                    // psql's words, without its program-name prefix.
                    let _ = writeln!(io::stderr(), "{name}: {}", os_message(&e));
                    (Flow::Error, Outcome::Failed)
                }
            },
        };
        outcome = match flow {
            Flow::Continue => Outcome::Success,
            Flow::Quit => return Outcome::Success,
            Flow::OutputClosed => return Outcome::OutputClosed,
            Flow::Error => failed,
        };
        if flow == Flow::Error && sh.settings.variables.on_error_stop() {
            return outcome;
        }
    }
    outcome
}

/// `tusk: error: MESSAGE` on standard error (ignoring a failure to write it).
fn complain(message: &str) {
    let _ = writeln!(io::stderr(), "tusk: error: {message}");
}
