//! Running statements on tusk in-process, rendered as `tusk -A -t -q` (and
//! psql) print them: one line per row, fields separated by `|`, NULL as an
//! empty field, COPY TO STDOUT data as it is written, command tags and
//! notices not printed.

use super::outcome::Outcome;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Mutex;
use tusk_sql::{BufferCopyClient, QueryResult, Session};

/// A session on a data directory (created, with `conf` as its tusk.conf).
pub fn open(data_dir: &Path, conf: Option<&str>) -> Session {
    std::fs::create_dir_all(data_dir).expect("tusk data directory");
    if let Some(c) = conf {
        std::fs::write(data_dir.join("tusk.conf"), c).expect("tusk.conf");
    }
    Session::open(data_dir).unwrap_or_else(|e| panic!("cannot open {}: {e}", data_dir.display()))
}

/// Runs one statement; a panic becomes an outcome (and is a mismatch).
pub fn run(session: &mut Session, sql: &str) -> Outcome {
    // Results and COPY output interleave as the shell prints them.
    let lines = Mutex::new(String::new());
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut client = BufferCopyClient::new(Vec::new());
        let r = session.execute_copy(
            sql,
            &mut |r| {
                let mut out = lines.lock().unwrap();
                if let QueryResult::Rows { rows: rs, .. } = r {
                    for row in rs {
                        let fields: Vec<&str> =
                            row.iter().map(|v| v.as_deref().unwrap_or("")).collect();
                        out.push_str(&fields.join("|"));
                        out.push('\n');
                    }
                }
            },
            &mut client,
        );
        lines
            .lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(&client.output));
        r
    }));
    match result {
        Ok(Ok(())) => Outcome::Rows(super::outcome::output_rows(&lines.into_inner().unwrap())),
        Ok(Err(e)) => Outcome::Error(format!(
            "ERROR:  {}",
            e.message.lines().next().unwrap_or_default()
        )),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Outcome::Error(format!("[panic] {msg}"))
        }
    }
}

/// Runs statements in order on a fresh session over `data_dir`.
pub fn run_all(data_dir: &Path, conf: Option<&str>, statements: &[String]) -> Vec<Outcome> {
    let mut s = open(data_dir, conf);
    statements.iter().map(|sql| run(&mut s, sql)).collect()
}
