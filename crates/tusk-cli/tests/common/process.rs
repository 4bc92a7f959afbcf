//! Running a command with a timeout.

use std::io::{Read, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------

/// What one process run produced.
pub struct RunOutput {
    pub success: bool,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs `cmd` with stdin closed, killing it after `timeout`.
///
/// Two threads drain stdout and stderr and report when they reach end of
/// file, which happens when the process exits; waiting on them (rather than
/// polling the process) returns as soon as the command is done.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<RunOutput> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let (tx, rx) = mpsc::channel::<(bool, Vec<u8>)>();
    let pipes: [(bool, Box<dyn Read + Send>); 2] = [
        (true, Box::new(child.stdout.take().expect("piped stdout"))),
        (false, Box::new(child.stderr.take().expect("piped stderr"))),
    ];
    for (is_stdout, mut pipe) in pipes {
        let tx = tx.clone();
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            let _ = tx.send((is_stdout, buf));
        });
    }
    drop(tx);
    let deadline = Instant::now() + timeout;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut timed_out = false;
    for _ in 0..2 {
        let wait = deadline.saturating_duration_since(Instant::now());
        let got = match rx.recv_timeout(wait) {
            Ok(got) => Some(got),
            Err(_) if !timed_out => {
                timed_out = true;
                let _ = child.kill();
                // The pipes close with the process; give the readers a moment.
                rx.recv_timeout(Duration::from_secs(5)).ok()
            }
            Err(_) => None,
        };
        match got {
            Some((true, buf)) => stdout = buf,
            Some((false, buf)) => stderr = buf,
            None => break,
        }
    }
    let status = child.wait()?;
    Ok(RunOutput {
        success: status.success() && !timed_out,
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        timed_out,
    })
}

/// Quotes `s` for `/bin/sh`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Output of a command that must succeed, or a description of its failure.
pub fn run_checked(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = run_with_timeout(cmd, Duration::from_secs(120))
        .map_err(|e| format!("{what}: cannot run: {e}"))?;
    if out.success {
        Ok(out.stdout)
    } else {
        Err(format!(
            "{what} failed (exit {:?}):\n{}{}",
            out.code, out.stdout, out.stderr
        ))
    }
}

/// Writes to the real stderr, past the test harness's output capture, so that a
/// skip is visible in a plain `cargo test`.
pub fn say(msg: &str) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}
