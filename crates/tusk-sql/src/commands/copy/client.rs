//! The client's side of `COPY ... FROM STDIN` and `COPY ... TO STDOUT`.
//!
//! PostgreSQL streams COPY data between the statement and the client: the
//! server announces the stream (CopyInResponse / CopyOutResponse, with the
//! number of columns), then the data flows in CopyData messages until
//! CopyDone. In tusk the session drives the stream through a
//! [`CopyClient`] the caller hands to [`Session::execute_copy`]:
//!
//! * **COPY FROM STDIN** announces itself with [`CopyClient::copy_in`]
//!   and reads with [`CopyClient::read`] until it returns 0, whatever the
//!   data says (after `\.` it reads on and discards, as PostgreSQL discards
//!   CopyData after the end marker). A read error aborts the COPY (`COPY
//!   from stdin failed: ...`). When the COPY fails before the end (a bad
//!   row), the rest is not read: the client skips what is left of its
//!   data, as a server skips CopyData until CopyDone.
//! * **COPY TO STDOUT** announces itself with [`CopyClient::copy_out`] and
//!   writes the rows with [`CopyClient::write`] in pieces of about 64 kB;
//!   the statement's end is the end of the stream.
//! * After each batch of a load (from STDIN or a file),
//!   [`CopyClient::progress`] hears the rows and bytes so far (the shell
//!   shows them on a terminal).
//!
//! Results of the statements of the same command string reach the sink as
//! each statement ends, so a client sees them in order with the COPY data.
//! Statements run on a thread with a large stack (see
//! `session::on_statement_stack`), so the client and the sink are `Send`.

use crate::error::{sqlstate, SqlError};
use crate::parse::{parse, Parsed};
use crate::session::{on_statement_stack, QueryResult, Result, Session};
use sqlparser::ast as A;
use std::io::Read;

/// What a client learns when COPY data starts to flow (PostgreSQL's
/// CopyInResponse and CopyOutResponse; the format is always text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyStream {
    /// Columns per row.
    pub columns: usize,
}

/// The other end of COPY FROM STDIN and COPY TO STDOUT (see the module
/// doc).
pub trait CopyClient: Send {
    /// COPY FROM STDIN starts (or the client refuses it).
    fn copy_in(&mut self, stream: &CopyStream) -> Result<()>;
    /// The next piece of COPY FROM STDIN data; 0 at its end.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
    /// COPY TO STDOUT starts (or the client refuses it).
    fn copy_out(&mut self, stream: &CopyStream) -> Result<()>;
    /// The next piece of COPY TO STDOUT data.
    fn write(&mut self, data: &[u8]) -> std::io::Result<()>;
    /// A load has stored `rows` rows from `bytes` bytes of input so far.
    fn progress(&mut self, rows: u64, bytes: u64) {
        let _ = (rows, bytes);
    }
}

/// The client of [`Session::execute`]: it has no COPY stream to offer.
pub struct NoCopyClient;

impl CopyClient for NoCopyClient {
    fn copy_in(&mut self, _: &CopyStream) -> Result<()> {
        Err(SqlError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "COPY FROM STDIN is not supported by this client",
        ))
    }

    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Ok(0)
    }

    fn copy_out(&mut self, _: &CopyStream) -> Result<()> {
        Err(SqlError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "COPY TO STDOUT is not supported by this client",
        ))
    }

    fn write(&mut self, _: &[u8]) -> std::io::Result<()> {
        Ok(())
    }
}

/// A client with the COPY FROM STDIN data in memory that collects the COPY
/// TO STDOUT output (tests and tools).
#[derive(Debug, Default)]
pub struct BufferCopyClient {
    pub input: std::io::Cursor<Vec<u8>>,
    pub output: Vec<u8>,
}

impl BufferCopyClient {
    pub fn new(input: impl Into<Vec<u8>>) -> BufferCopyClient {
        BufferCopyClient {
            input: std::io::Cursor::new(input.into()),
            output: Vec::new(),
        }
    }
}

impl CopyClient for BufferCopyClient {
    fn copy_in(&mut self, _: &CopyStream) -> Result<()> {
        Ok(())
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }

    fn copy_out(&mut self, _: &CopyStream) -> Result<()> {
        Ok(())
    }

    fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.output.extend_from_slice(data);
        Ok(())
    }
}

impl Session {
    /// Runs `sql` like [`Session::execute`], with `client` as the other end
    /// of COPY FROM STDIN and COPY TO STDOUT, handing each statement's
    /// result to `sink` as the statement ends.
    pub fn execute_copy(
        &mut self,
        sql: &str,
        sink: &mut (dyn FnMut(QueryResult) + Send),
        client: &mut dyn CopyClient,
    ) -> Result<()> {
        self.info.set_query(sql);
        on_statement_stack(|| {
            // As `Session::execute` runs a string: one transaction for
            // several statements, each statement bracketed.
            let stmts = match parse(sql) {
                Ok(s) => s,
                Err(e) => {
                    self.statement_failed();
                    return Err(e);
                }
            };
            if stmts.len() > 1 {
                self.begin_implicit_block();
            }
            for s in stmts {
                self.begin_statement();
                let env = self.env.clone();
                let _env = tusk_exec::env::enter(&env);
                let r = self.copy_or_statement(&s, sink, client);
                self.end_statement();
                if let Err(e) = r {
                    let _ = self.end_implicit_block(false);
                    return Err(e.locate(sql));
                }
            }
            self.end_implicit_block(true)
        })
    }

    /// Runs one statement, COPY with `client`.
    fn copy_or_statement(
        &mut self,
        s: &Parsed,
        sink: &mut (dyn FnMut(QueryResult) + Send),
        client: &mut dyn CopyClient,
    ) -> Result<()> {
        let copy = match s {
            Parsed::Copy(c) => (**c).clone(),
            Parsed::Sql(stmt, _) if matches!(**stmt, A::Statement::Copy { .. }) => {
                super::CopyStatement::from_sqlparser(stmt)?
            }
            _ => return self.statement(s, sink),
        };
        self.transactional(true, &mut |s| {
            let r = s.copy(&copy, client)?;
            sink(r);
            Ok(())
        })
    }
}
