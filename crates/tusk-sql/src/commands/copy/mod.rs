//! COPY: tables to and from files and the client, in PostgreSQL's text
//! and CSV formats.
//!
//! `COPY t [(cols)] FROM 'file' | STDIN [WITH ...] [WHERE cond]` loads
//! rows; `COPY t [(cols)] | (query) TO 'file' | STDOUT [WITH ...]` writes
//! them. [`stmt`] reads the statement with PostgreSQL's grammar (all its
//! option spellings), [`options`] checks the options as PostgreSQL does,
//! and this module resolves the relation and its column list and drives
//! tusk-exec's COPY machinery (`tusk_exec::copy`): the reading pipeline,
//! the loader and the writer.
//!
//! ## COPY FROM
//!
//! Input is read in pieces of [`READ_CHUNK`] bytes (from the file, or from
//! the client's reader; see [`client`]) and framed into batches of rows;
//! each batch is converted column by column, checked (NOT NULL, CHECK) and
//! laid out straight into heap pages by the loader, whose `BulkInserter`
//! logs each full page once, or nothing at all when the running
//! transaction created the table (CREATE TABLE AS's rule). Columns the
//! input does not name get their DEFAULT; a `WHERE` condition then skips
//! rows (bound over the table's columns, like a CHECK constraint). The
//! load is one transaction: the first bad row aborts it with PostgreSQL's
//! error and CONTEXT line, and nothing it stored becomes visible, before
//! or after a crash (the rows carry its xid, which never commits). The load
//! is a command of the session's transaction (in a block: undone by its
//! ROLLBACK), holding `RowExclusiveLock` on the table; unique checks wait
//! for concurrent inserters as that transaction. Each batch checks the
//! statement's interrupt (cancel, `statement_timeout`).
//!
//! `FREEZE` is accepted, as in PostgreSQL, only for a table the running
//! transaction created; its rows are then already invisible to everyone
//! else until the commit, which is all freezing would change for readers.
//!
//! ## COPY TO
//!
//! `COPY t TO` scans the table in physical order, as PostgreSQL does (no
//! planner, no parallel workers); `COPY (query) TO` plans the query like a
//! SELECT. Batches are rendered by the writer and handed on every
//! [`WRITE_CHUNK`] bytes.
//!
//! Files are the process's (PostgreSQL's server-side files): a relative
//! path is refused for COPY TO and read from the data directory for COPY
//! FROM, as PostgreSQL's server reads it from its data directory. The shell's
//! `\copy` is the client-side variant.

mod client;
mod options;
mod stmt;

pub use client::{BufferCopyClient, CopyClient, CopyStream, NoCopyClient};
pub use stmt::{parse as parse_statement, CopyStatement};

use crate::bind::{BindSettings, Binder};
use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{QueryResult, Result, Session};
use options::{ColumnList, StatementOptions};
use sqlparser::ast as A;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use tusk_exec::copy::convert::Converter;
use tusk_exec::copy::load::Loader;
use tusk_exec::copy::pipeline::{self, CopySource};
use tusk_exec::copy::prepare::TableRules;
use tusk_exec::copy::reader::{CopyReader, ReaderOptions};
use tusk_exec::copy::writer::{CopyWriter, WriterOptions};
use tusk_exec::copy::{CopyError, Header};
use tusk_exec::plan::Statement;
use tusk_exec::ExecError;
use tusk_exec::{Estimate, NodeKind, Plan};
use tusk_storage::{DataType, TableDef};

/// Bytes of input read at a time.
pub const READ_CHUNK: usize = 1 << 20;
/// Bytes of output gathered before they are written.
pub const WRITE_CHUNK: usize = 64 << 10;

/// PostgreSQL's `undefined_file` (ENOENT).
const UNDEFINED_FILE: &str = "58P01";
/// PostgreSQL's `object_not_in_prerequisite_state`.
const NOT_IN_PREREQUISITE_STATE: &str = "55000";

impl From<CopyError> for SqlError {
    fn from(e: CopyError) -> Self {
        let s = SqlError::from(e.error);
        match e.context {
            Some(c) => s.with_context(c),
            None => s,
        }
    }
}

/// Where the data comes from or goes to.
enum Target {
    Client,
    File(PathBuf),
}

/// The input of a COPY FROM.
enum Input {
    Client,
    File(File),
}

/// COPY FROM's input as the load pipeline reads it.
struct Source<'c> {
    input: Input,
    client: &'c mut dyn CopyClient,
}

/// A failed read of the client's COPY data.
fn client_read_error(e: std::io::Error) -> CopyError {
    ExecError::coded(
        sqlstate::QUERY_CANCELED,
        format!("COPY from stdin failed: {e}"),
    )
    .into()
}

impl CopySource for Source<'_> {
    fn fill(&mut self, reader: &mut CopyReader) -> std::result::Result<usize, CopyError> {
        match &mut self.input {
            Input::File(f) => reader.fill_from(f, READ_CHUNK).map_err(|e| {
                ExecError::coded(
                    sqlstate::IO_ERROR,
                    format!("could not read from COPY file: {}", os_message(&e)),
                )
                .into()
            }),
            Input::Client => reader
                .fill_from(&mut ClientReader(&mut *self.client), READ_CHUNK)
                .map_err(client_read_error),
        }
    }

    /// The data ended at `\.`: the rest of the client's stream is read
    /// and dropped, as PostgreSQL drops CopyData after the end marker.
    fn drain(&mut self) -> std::result::Result<(), CopyError> {
        if let Input::Client = self.input {
            let mut sink = [0u8; 8192];
            while ClientReader(&mut *self.client)
                .read(&mut sink)
                .map_err(client_read_error)?
                > 0
            {}
        }
        Ok(())
    }

    fn progress(&mut self, rows: u64, bytes: u64) {
        self.client.progress(rows, bytes);
    }
}

/// A client's COPY FROM STDIN data as a reader.
struct ClientReader<'c>(&'c mut dyn CopyClient);

impl Read for ClientReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

/// The output of a COPY TO.
enum Output {
    Client,
    File(File),
}

impl Output {
    fn write(&mut self, data: &[u8], client: &mut dyn CopyClient) -> Result<()> {
        match self {
            Output::File(f) => f
                .write_all(data)
                .map_err(|e| io_error(format!("could not write to COPY file: {}", os_message(&e)))),
            Output::Client => client.write(data).map_err(|e| {
                io_error(format!("could not send data to client: {}", os_message(&e)))
            }),
        }
    }
}

fn io_error(message: String) -> SqlError {
    SqlError::coded(sqlstate::IO_ERROR, message)
}

/// An OS error as PostgreSQL's `%m` prints it (`No such file or directory`).
fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The SQLSTATE PostgreSQL's `errcode_for_file_access` gives an OS error.
fn file_access_code(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => UNDEFINED_FILE,
        std::io::ErrorKind::PermissionDenied => sqlstate::INSUFFICIENT_PRIVILEGE,
        _ => sqlstate::IO_ERROR,
    }
}

/// A failed open: PostgreSQL's SQLSTATE for the OS error, and `hint` when
/// the file is missing or not accessible.
fn file_error(e: &std::io::Error, message: String, hint: &str) -> SqlError {
    let err = SqlError::coded(file_access_code(e), message);
    match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => err.with_hint(hint),
        _ => err,
    }
}

fn undefined_column(name: &str, table: Option<&str>) -> SqlError {
    let message = match table {
        Some(t) => format!("column \"{name}\" of relation \"{t}\" does not exist"),
        None => format!("column \"{name}\" does not exist"),
    };
    SqlError::coded(sqlstate::UNDEFINED_COLUMN, message)
}

/// Per input column (`columns[i]` is an index into `names`): whether the
/// option `list` names it. A name must be a column of the relation
/// (`names`) and in the COPY's list.
fn column_flags(
    list: &ColumnList,
    option: &str,
    names: &[String],
    columns: &[usize],
    table: Option<&str>,
) -> Result<Vec<bool>> {
    let given = match list {
        ColumnList::None => return Ok(vec![false; columns.len()]),
        ColumnList::All => return Ok(vec![true; columns.len()]),
        ColumnList::Columns(given) => given,
    };
    let mut flags = vec![false; columns.len()];
    for name in given {
        let Some(i) = names.iter().position(|n| n == name) else {
            return Err(undefined_column(name, table));
        };
        let Some(p) = columns.iter().position(|&c| c == i) else {
            return Err(SqlError::coded(
                sqlstate::INVALID_COLUMN_REFERENCE,
                format!("{option} column \"{name}\" not referenced by COPY"),
            ));
        };
        flags[p] = true;
    }
    Ok(flags)
}

/// A plain scan of `columns` of `table`, in physical order.
fn scan_plan(table: &TableDef, columns: &[usize]) -> Statement {
    let types = table.column_types();
    Statement {
        root: Plan::new(
            NodeKind::SeqScan {
                table: table.name.clone(),
                alias: table.name.clone(),
                oid: table.oid,
                table_types: types.clone(),
                columns: columns.to_vec(),
                with_tid: false,
                filter: None,
                parallel: false,
                columnar: table
                    .is_columnar()
                    .then(|| Box::new(tusk_exec::plan::ColumnarSpec::default())),
            },
            Vec::new(),
            columns.iter().map(|&c| types[c]).collect::<Vec<_>>(),
            columns
                .iter()
                .map(|&c| table.columns[c].name.clone())
                .collect::<Vec<_>>(),
            Estimate::default(),
        ),
        ctes: Vec::new(),
    }
}

impl Session {
    /// Runs a COPY statement with `client` as the other end of STDIN and
    /// STDOUT.
    pub(crate) fn copy(
        &mut self,
        stmt: &CopyStatement,
        client: &mut dyn CopyClient,
    ) -> Result<QueryResult> {
        let to = stmt.to;
        let target = match &stmt.target {
            stmt::CopyTarget::Client => Target::Client,
            stmt::CopyTarget::File(name) => Target::File(PathBuf::from(name)),
            stmt::CopyTarget::Program(_) => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "COPY {} PROGRAM is not supported",
                        if to { "TO" } else { "FROM" }
                    ),
                ))
            }
        };
        if let (true, Some((_, at))) = (to, &stmt.where_clause) {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "WHERE clause not allowed with COPY TO",
            )
            .at(*at));
        }
        let opts = options::process(&stmt.options, !to)?;
        let n = match &stmt.source {
            stmt::CopySource::Table { name, columns } if !to => self.copy_from(
                name,
                columns,
                stmt.where_clause.as_ref().map(|(e, _)| e),
                &opts,
                target,
                client,
            )?,
            stmt::CopySource::Table {
                name: table_name,
                columns,
            } => {
                let (table, cols) = self.copy_relation(table_name, columns, true)?;
                let out = CopyOut {
                    names: table.columns.iter().map(|c| c.name.clone()).collect(),
                    stmt: scan_plan(&table, &cols),
                    columns: cols,
                    table: Some(table.name.clone()),
                };
                self.copy_to(out, &opts, target, client)?
            }
            stmt::CopySource::Query(q) => {
                let pq = self.plan_query(q)?;
                let out = CopyOut {
                    columns: (0..pq.names.len()).collect(),
                    names: pq.names,
                    table: None,
                    stmt: pq.stmt,
                };
                self.copy_to(out, &opts, target, client)?
            }
        };
        Ok(QueryResult::Command {
            tag: format!("COPY {n}"),
        })
    }

    /// The table of a COPY and the columns its list names (all, in order,
    /// without a list).
    fn copy_relation(
        &mut self,
        name: &A::ObjectName,
        columns: &[A::Ident],
        to: bool,
    ) -> Result<(TableDef, Vec<usize>)> {
        let n = user_relation_name(name)?;
        let table = self.catalog()?.table(&n).cloned().ok_or_else(|| {
            SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{n}\" does not exist"),
            )
        })?;
        if table.is_sequence() {
            let message = if to {
                format!("cannot copy from sequence \"{n}\"")
            } else {
                format!("cannot copy to sequence \"{n}\"")
            };
            return Err(SqlError::coded(sqlstate::WRONG_OBJECT_TYPE, message));
        }
        if table.is_view() {
            let (message, hint) = if to {
                (
                    format!("cannot copy from view \"{n}\""),
                    "Try the COPY (SELECT ...) TO variant.",
                )
            } else {
                (
                    format!("cannot copy to view \"{n}\""),
                    "To enable copying to a view, provide an INSTEAD OF INSERT trigger.",
                )
            };
            return Err(SqlError::coded(sqlstate::WRONG_OBJECT_TYPE, message).with_hint(hint));
        }
        let mode = if to {
            tusk_storage::LockMode::AccessShare
        } else {
            tusk_storage::LockMode::RowExclusive
        };
        self.lock_relation(table.oid, mode, &table.name)?;
        if columns.is_empty() {
            let all = (0..table.columns.len()).collect();
            return Ok((table, all));
        }
        let mut cols = Vec::with_capacity(columns.len());
        for c in columns {
            let name = ident(c)?;
            let i = table
                .columns
                .iter()
                .position(|d| d.name == name)
                .ok_or_else(|| undefined_column(&name, Some(&table.name)))?;
            if cols.contains(&i) {
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{name}\" specified more than once"),
                ));
            }
            cols.push(i);
        }
        Ok((table, cols))
    }

    /// A relative COPY FROM file is read from the data directory, as
    /// PostgreSQL's server reads it from its working directory.
    fn input_path(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.db.dir().join(path)
        }
    }

    /// COPY FROM: loads the rows; returns how many.
    fn copy_from(
        &mut self,
        name: &A::ObjectName,
        columns: &[A::Ident],
        filter: Option<&A::Expr>,
        opts: &StatementOptions,
        target: Target,
        client: &mut dyn CopyClient,
    ) -> Result<u64> {
        self.check_writable("COPY FROM")?;
        let (table, targets) = self.copy_relation(name, columns, false)?;
        let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        let t = Some(table.name.as_str());
        let force_not_null =
            column_flags(&opts.force_not_null, "FORCE_NOT_NULL", &names, &targets, t)?;
        let force_null = column_flags(&opts.force_null, "FORCE_NULL", &names, &targets, t)?;
        let catalog = self.catalog()?;
        let indexes: Vec<tusk_storage::IndexDef> = catalog.indexes_of(table.oid).cloned().collect();
        let rules = {
            let mut binder = Binder::new(&catalog, &BindSettings::default());
            let mut defaults = Vec::with_capacity(table.columns.len());
            for (i, c) in table.columns.iter().enumerate() {
                defaults.push(match &c.default {
                    Some(_) if !targets.contains(&i) => Some(binder.column_default(c)?),
                    _ => None,
                });
            }
            let filter = match filter {
                Some(e) => Some(binder.bind_check(&table.name, &table.columns, e)?),
                None => None,
            };
            TableRules {
                defaults,
                checks: binder.table_checks(&table)?,
                filter,
            }
        };
        let input = match target {
            Target::File(path) => Input::File(open_input(&self.input_path(&path))?),
            Target::Client => {
                client.copy_in(&CopyStream {
                    columns: targets.len(),
                })?;
                Input::Client
            }
        };
        let reader = CopyReader::new(ReaderOptions {
            options: opts.copy.clone(),
            table: table.name.clone(),
            columns: targets.iter().map(|&c| names[c].clone()).collect(),
            force_not_null,
            force_null,
        });
        // The relation is unlogged while the transaction that created it
        // runs (see tusk_storage::bulk).
        let created_here =
            self.db.pool.wal().is_some() && self.db.pool.wal_for(table.oid).is_none();
        if opts.freeze && !created_here {
            return Err(SqlError::coded(
                NOT_IN_PREREQUISITE_STATE,
                "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
            ));
        }
        let converter = Converter::new(&table, targets, self.env.settings.clone(), self.env.now);
        let (db, interrupt) = (self.db.clone(), self.interrupt.clone());
        let txn = self.txn()?;
        let stamp = (txn.xid()?, txn.command_id_for_write());
        let oid = table.oid;
        let mut loader = Loader::new(&db, table, &indexes, rules, stamp, txn);
        let mut source = Source { input, client };
        pipeline::run(&mut source, reader, &converter, &mut loader, &interrupt)?;
        let n = loader.finish()?;
        drop(loader);
        self.txn()?.count_inserts(oid, n);
        Ok(n)
    }

    /// COPY TO: writes the rows of `out`; returns how many.
    fn copy_to(
        &mut self,
        out: CopyOut,
        opts: &StatementOptions,
        target: Target,
        client: &mut dyn CopyClient,
    ) -> Result<u64> {
        let types: Vec<DataType> = out.stmt.root.output.to_vec();
        let force_quote = column_flags(
            &opts.force_quote,
            "FORCE_QUOTE",
            &out.names,
            &out.columns,
            out.table.as_deref(),
        )?;
        let mut output = match target {
            Target::File(path) => Output::File(open_output(&path)?),
            Target::Client => {
                client.copy_out(&CopyStream {
                    columns: types.len(),
                })?;
                Output::Client
            }
        };
        let mut writer = CopyWriter::new(WriterOptions {
            options: opts.copy.clone(),
            columns: out.columns.iter().map(|&c| out.names[c].clone()).collect(),
            types,
            force_quote,
            settings: self.env.settings.clone(),
        });
        let mut buf = Vec::with_capacity(WRITE_CHUNK * 2);
        if opts.copy.header != Header::Absent {
            writer.header(&mut buf);
        }
        let snapshot = self.snapshot()?;
        let ctx = self.exec_context(snapshot, false, 0);
        let mut op = tusk_exec::exec::build_statement(&out.stmt, &ctx)?;
        let mut rows = 0u64;
        while let Some(b) = op.next()? {
            writer.batch(&b, &mut buf);
            rows += b.len as u64;
            if buf.len() >= WRITE_CHUNK {
                output.write(&buf, client)?;
                buf.clear();
            }
        }
        if !buf.is_empty() {
            output.write(&buf, client)?;
        }
        if let Output::File(f) = &mut output {
            f.flush().map_err(|e| {
                io_error(format!("could not write to COPY file: {}", os_message(&e)))
            })?;
        }
        Ok(rows)
    }
}

/// What COPY TO writes: a plan whose output is `columns` of the relation
/// (or query) whose columns are `names`; the table's name words errors
/// about FORCE_QUOTE columns.
struct CopyOut {
    stmt: Statement,
    names: Vec<String>,
    columns: Vec<usize>,
    table: Option<String>,
}

/// Opens a COPY FROM file, with PostgreSQL's errors.
fn open_input(path: &Path) -> Result<File> {
    let shown = path.display();
    let f = File::open(path).map_err(|e| {
        file_error(
            &e,
            format!("could not open file \"{shown}\" for reading: {}", os_message(&e)),
            "COPY FROM instructs the PostgreSQL server process to read a file. You may want a client-side facility such as psql's \\copy.",
        )
    })?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(SqlError::coded(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("\"{shown}\" is a directory"),
        ));
    }
    Ok(f)
}

/// Creates (or truncates) a COPY TO file, with PostgreSQL's errors.
fn open_output(path: &Path) -> Result<File> {
    if !path.is_absolute() {
        return Err(SqlError::coded(
            sqlstate::INVALID_NAME,
            "relative path not allowed for COPY to file",
        ));
    }
    File::create(path).map_err(|e| {
        file_error(
            &e,
            format!(
                "could not open file \"{}\" for writing: {}",
                path.display(),
                os_message(&e)
            ),
            "COPY TO instructs the PostgreSQL server process to write a file. You may want a client-side facility such as psql's \\copy.",
        )
    })
}
