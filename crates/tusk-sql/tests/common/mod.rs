//! Helpers shared by the SQL integration tests: open a session on a data
//! directory with a given `tusk.conf`, run statements and see their results
//! as text lines.
#![allow(dead_code)] // each test binary uses its own subset

use tusk_sql::{BufferCopyClient, QueryResult, Session, SqlError};

/// A session on `dir` (created if needed) whose `tusk.conf` is `conf`.
pub fn session_with(dir: &std::path::Path, conf: &str) -> Session {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("tusk.conf"), conf).unwrap();
    Session::open(dir).unwrap()
}

/// One result as lines: rows `|`-joined (NULL as empty), a command tag, or
/// a notice as `LEVEL:  message`.
pub fn lines(r: QueryResult) -> Vec<String> {
    match r {
        QueryResult::Rows { rows, .. } => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| v.clone().unwrap_or_default())
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect(),
        QueryResult::Command { tag } => vec![tag],
        QueryResult::Notice(n) => {
            let mut lines = vec![format!("{}:  {}", n.level, n.message)];
            lines.extend(n.detail.map(|d| format!("DETAIL:  {d}")));
            lines
        }
    }
}

/// Runs `sql` and returns all its results' lines.
pub fn run(s: &mut Session, sql: &str) -> Vec<String> {
    let res = s.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    res.into_iter().flat_map(lines).collect()
}

/// Runs `sql` and returns the lines of its last result.
pub fn rows(s: &mut Session, sql: &str) -> Vec<String> {
    let res = s.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    lines(res.into_iter().last().unwrap())
}

/// Runs `sql`, which must fail, and returns the error message.
pub fn error(s: &mut Session, sql: &str) -> String {
    match s.query(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e.message,
    }
}

/// Runs `sql` with `input` as its COPY FROM STDIN data; the last command
/// tag and what COPY TO STDOUT wrote.
pub fn copy(s: &mut Session, sql: &str, input: &[u8]) -> Result<(String, Vec<u8>), SqlError> {
    let mut client = BufferCopyClient::new(input);
    let mut tag = String::new();
    s.execute_copy(
        sql,
        &mut |r| {
            if let QueryResult::Command { tag: t } = r {
                tag = t;
            }
        },
        &mut client,
    )?;
    Ok((tag, client.output))
}
