//! COPY in the interactive shell on a terminal: typed COPY FROM STDIN data
//! gets psql's words and `>> ` prompts, and a long load shows its progress
//! line on standard error, cleared before the `COPY n` tag. The terminal is
//! a pseudo-terminal driven by `copy_terminal.py` (skipped with a message
//! where python3 is missing).

use std::process::Command;

#[test]
fn typed_data_prompts_and_long_loads_show_progress() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.txt");
    let rows: String = (0..400_000).map(|i| format!("{i}\trow {i}\n")).collect();
    std::fs::write(&file, rows).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/copy_terminal.py");
    let out = match Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_tusk"))
        .arg(dir.path().join("data"))
        .arg(&file)
        .env_remove("TUSKDATA")
        .env("HOME", dir.path())
        // A progress line at every batch, however fast the load.
        .env("TUSK_PROGRESS_INTERVAL_MS", "0")
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping: python3 not available: {e}");
            return;
        }
    };
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "typed progress",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
