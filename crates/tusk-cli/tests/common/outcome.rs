//! The outcome of one statement on one system, and how outcomes compare.

use super::process::RunOutput;
use std::fmt::Write as _;
use std::time::Duration;

/// Upper bound for one statement on either side; a hang becomes a mismatch.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Output lines shown per side in a mismatch report.
pub const REPORT_LINES: usize = 20;

// ---------------------------------------------------------------------------
// Outcomes
// ---------------------------------------------------------------------------

/// The result of one statement on one system.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Rows as printed by `-A -t` (fields separated by `|`, NULL empty).
    Rows(Vec<String>),
    /// The first `ERROR:` line, or a description of an abnormal end.
    Error(String),
}

impl Outcome {
    pub fn from_run(run: std::io::Result<RunOutput>) -> Outcome {
        let run = match run {
            Ok(run) => run,
            Err(e) => return Outcome::Error(format!("[could not start: {e}]")),
        };
        if run.timed_out {
            return Outcome::Error(format!(
                "[timed out after {} s]",
                STATEMENT_TIMEOUT.as_secs()
            ));
        }
        let error_line = run
            .stderr
            .lines()
            .find(|l| l.starts_with("ERROR:"))
            .map(|l| l.trim_end().to_string());
        match (run.success, error_line) {
            (true, None) => Outcome::Rows(output_rows(&run.stdout)),
            (false, Some(line)) => Outcome::Error(line),
            (true, Some(line)) => Outcome::Error(format!("{line} [but exit status 0]")),
            (false, None) => {
                // A panic message is two lines; the backtrace after it is noise here.
                let head: Vec<&str> = run
                    .stderr
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .take_while(|l| !l.starts_with("stack backtrace:") && !l.starts_with("note:"))
                    .take(4)
                    .collect();
                Outcome::Error(format!(
                    "[exit {:?} without an ERROR: line] {}",
                    run.code,
                    head.join(" / ")
                ))
            }
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }

    pub fn render(&self) -> String {
        match self {
            Outcome::Error(line) => format!("    {line}\n"),
            Outcome::Rows(rows) if rows.is_empty() => "    (no rows)\n".to_string(),
            Outcome::Rows(rows) => {
                let mut s = String::new();
                for row in rows.iter().take(REPORT_LINES) {
                    // Quote rows whose blanks would be invisible (NULL-only
                    // rows print as empty lines, char(n) pads with blanks).
                    if row.is_empty() || row.trim() != row {
                        let _ = writeln!(s, "    {row:?}");
                    } else {
                        let _ = writeln!(s, "    {row}");
                    }
                }
                if rows.len() > REPORT_LINES {
                    let _ = writeln!(s, "    ... ({} rows in all)", rows.len());
                }
                s
            }
        }
    }
}

/// Splits `-A -t` output into rows. Zero rows print nothing; a row whose only
/// field is NULL prints an empty line, so `""` and `"\n"` differ.
pub fn output_rows(stdout: &str) -> Vec<String> {
    if stdout.is_empty() {
        return Vec::new();
    }
    let body = stdout.strip_suffix('\n').unwrap_or(stdout);
    body.split('\n').map(str::to_string).collect()
}

/// Whether two outcomes agree, given whether row order is defined.
pub fn outcomes_agree(pg: &Outcome, tusk: &Outcome, ordered: bool) -> bool {
    match (pg, tusk) {
        (Outcome::Rows(a), Outcome::Rows(b)) if !ordered => {
            let mut a = a.clone();
            let mut b = b.clone();
            a.sort();
            b.sort();
            a == b
        }
        _ => pg == tusk,
    }
}
