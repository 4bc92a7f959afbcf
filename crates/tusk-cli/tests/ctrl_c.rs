//! Ctrl-C in the interactive shell cancels the running statement and keeps
//! the shell, as in psql. The terminal is a pseudo-terminal driven by
//! `ctrl_c.py` (skipped with a message where python3 is missing).

use std::process::Command;

#[test]
fn ctrl_c_cancels_the_statement_and_keeps_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ctrl_c.py");
    let out = match Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_tusk"))
        .arg(dir.path())
        .env_remove("TUSKDATA")
        .env("HOME", dir.path())
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping: python3 not available: {e}");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "canceled alive",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
