//! The system catalog: tables and their columns.
//!
//! The catalog is small and changes only with DDL, so it is kept in memory and
//! rewritten whole to `catalog` in the data directory on every change
//! (written to a temporary file, fsynced, renamed over the old one).
//! Crash safety comes from the WAL: CREATE TABLE and DROP TABLE log their
//! change, and recovery enforces the outcome of the transaction on the
//! catalog and the relation files (see `recovery`, "Catalog changes").
//! The file format is line based text:
//!
//! ```text
//! tusk-catalog 3
//! next_oid 16390
//! table 16384 t
//! column int4 notnull a
//! column text null b
//! index 16385 16384 primary 0:asc:nullslast t_pkey
//! index 16386 16384 plain 1:desc:nullsfirst,0:asc:nullslast t_b_a_idx
//! ```
//!
//! The last line is `checksum XXXXXXXX`, the CRC-32C of everything before
//! it, so that a damaged file is refused with a clear error instead of
//! being read as a different schema (every single-bit flip is caught). A
//! file without that line is one written before it existed, and is read as
//! it is, unless it mentions `checksum` at all (a damaged last line).
//!
//! The version on the first line is that of the whole data directory's
//! format: version 2 brought the 28-byte tuple header of transactions
//! (`tuple`), version 3 the btree's typed multi-column keys (its page
//! layout and the `index` line below); a directory of an older version is
//! refused.
//!
//! ## Transactional DDL
//!
//! A transaction's DDL does not touch this catalog until the transaction
//! commits: it collects [`DdlChange`]s (see `xact`), sees the catalog with
//! them applied ([`Catalog::with_changes`]), and applies them here at
//! commit, in one rewrite of the file. Other transactions never see a
//! relation that is created but not committed; they wait for a relation
//! being dropped on its `AccessExclusiveLock`.
//!
//! A table's lines may include `am columnar` (a columnar table, see
//! `columnar`; heap tables have no `am` line).
//!
//! A `column` line is `column TYPE null|notnull NAME`. An `index` line is
//! `index OID TABLE_OID KIND COLUMNS NAME`: KIND is `plain`, `unique`
//! (CREATE UNIQUE INDEX), `constraint` (a UNIQUE constraint's index) or
//! `primary` (a PRIMARY KEY's, unique too), COLUMNS the key columns in key
//! order, comma separated, each `ATTNO:asc|desc:nullsfirst|nullslast`
//! (attribute numbers from 0). The same line is the payload of the WAL's
//! `CreateIndex` record. Tables and indexes share one name space, as
//! PostgreSQL's relations do; dropping a table drops its indexes.

pub use crate::datatype::{DataType, ElementType, IntervalMod, SqlType, STORABLE_TYPES};
use crate::sequence::SequenceDef;
use crate::StorageError;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
    /// The DEFAULT expression, as SQL text (bound again where it is used).
    pub default: Option<String>,
}

impl ColumnDef {
    /// A column without a default.
    pub fn new(name: impl Into<String>, ty: SqlType, not_null: bool) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            not_null,
            default: None,
        }
    }
}

/// A CHECK constraint: its name and its condition as SQL text over the
/// table's columns, and its oid (`pg_constraint.oid`; allocated from the
/// relations' counter, so no relation or other constraint has it).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckDef {
    pub name: String,
    pub expr: String,
    pub oid: u32,
}

/// How a table stores its rows (PostgreSQL's table access methods,
/// `pg_am` entries of type TABLE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccessMethod {
    /// Row versions in slotted pages (`heap`): the default, for OLTP.
    #[default]
    Heap,
    /// Row groups of compressed column segments plus a row-wise delta
    /// (`columnar`; see the `columnar` module).
    Columnar,
}

impl AccessMethod {
    /// The access method's name (`pg_am.amname`).
    pub fn name(self) -> &'static str {
        match self {
            AccessMethod::Heap => "heap",
            AccessMethod::Columnar => "columnar",
        }
    }

    /// The table access method called `name`.
    pub fn from_name(name: &str) -> Option<AccessMethod> {
        match name {
            "heap" => Some(AccessMethod::Heap),
            "columnar" => Some(AccessMethod::Columnar),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    /// Object id; also the relation file number.
    pub oid: u32,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub checks: Vec<CheckDef>,
    /// A view's defining query (SQL text). A view is a relation without a
    /// file: its columns are the query's, and a reference to it binds the
    /// query in its place.
    pub view: Option<String>,
    /// How the rows are stored.
    pub access_method: AccessMethod,
    /// A sequence's parameters: the relation is a sequence (one page of
    /// state, see `sequence`), with no columns of its own.
    pub sequence: Option<SequenceDef>,
}

impl TableDef {
    /// A plain (heap) table with these columns.
    pub fn new(oid: u32, name: impl Into<String>, columns: Vec<ColumnDef>) -> TableDef {
        TableDef {
            oid,
            name: name.into(),
            columns,
            checks: Vec::new(),
            view: None,
            access_method: AccessMethod::Heap,
            sequence: None,
        }
    }

    pub fn is_view(&self) -> bool {
        self.view.is_some()
    }

    pub fn is_sequence(&self) -> bool {
        self.sequence.is_some()
    }

    /// A table proper: rows in a file, neither a view nor a sequence.
    pub fn is_plain_table(&self) -> bool {
        !self.is_view() && !self.is_sequence()
    }

    /// Whether the table is stored column by column (see `columnar`).
    pub fn is_columnar(&self) -> bool {
        self.access_method == AccessMethod::Columnar
    }

    pub fn column_types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.ty.data_type()).collect()
    }
}

/// One column of an index: which table column, and its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexColumn {
    /// Attribute number (from 0) of the table column.
    pub attno: usize,
    /// `DESC` (default `ASC`).
    pub desc: bool,
    /// `NULLS FIRST` (the default for `DESC`) or `NULLS LAST` (for `ASC`).
    pub nulls_first: bool,
}

impl IndexColumn {
    /// Column `attno`, `ASC NULLS LAST`.
    pub fn asc(attno: usize) -> IndexColumn {
        IndexColumn {
            attno,
            desc: false,
            nulls_first: false,
        }
    }

    /// Column `attno`, `DESC NULLS FIRST`.
    pub fn desc(attno: usize) -> IndexColumn {
        IndexColumn {
            attno,
            desc: true,
            nulls_first: true,
        }
    }

    fn encode(&self) -> String {
        format!(
            "{}:{}:{}",
            self.attno,
            if self.desc { "desc" } else { "asc" },
            if self.nulls_first {
                "nullsfirst"
            } else {
                "nullslast"
            }
        )
    }

    fn decode(s: &str) -> Option<IndexColumn> {
        let mut parts = s.split(':');
        let attno = parts.next()?.parse().ok()?;
        let desc = match parts.next()? {
            "asc" => false,
            "desc" => true,
            _ => return None,
        };
        let nulls_first = match parts.next()? {
            "nullsfirst" => true,
            "nullslast" => false,
            _ => return None,
        };
        parts.next().is_none().then_some(IndexColumn {
            attno,
            desc,
            nulls_first,
        })
    }
}

/// What an index is for: a plain index, a unique index made by CREATE
/// UNIQUE INDEX, or the index behind a UNIQUE or PRIMARY KEY constraint
/// (PostgreSQL keeps the constraint in `pg_constraint`; here the index
/// stands for it and carries its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Plain,
    /// `CREATE UNIQUE INDEX`.
    Unique,
    /// A `UNIQUE` constraint.
    UniqueConstraint,
    /// The table's `PRIMARY KEY` (unique, and its columns are NOT NULL).
    PrimaryKey,
}

impl IndexKind {
    /// No two rows may have equal keys without NULLs.
    pub fn is_unique(self) -> bool {
        self != IndexKind::Plain
    }

    /// The index stands for a constraint (ON CONFLICT ON CONSTRAINT names
    /// it; DROP INDEX refuses it).
    pub fn is_constraint(self) -> bool {
        matches!(self, IndexKind::UniqueConstraint | IndexKind::PrimaryKey)
    }

    fn encode(self) -> &'static str {
        match self {
            IndexKind::Plain => "plain",
            IndexKind::Unique => "unique",
            IndexKind::UniqueConstraint => "constraint",
            IndexKind::PrimaryKey => "primary",
        }
    }

    fn decode(s: &str) -> Option<IndexKind> {
        Some(match s {
            "plain" => IndexKind::Plain,
            "unique" => IndexKind::Unique,
            "constraint" => IndexKind::UniqueConstraint,
            "primary" => IndexKind::PrimaryKey,
            _ => return None,
        })
    }
}

/// A btree index on one or more columns of a table (see `btree`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDef {
    /// Object id; also the relation file number.
    pub oid: u32,
    pub name: String,
    /// Oid of the indexed table.
    pub table: u32,
    /// The key columns, in key order (at least one).
    pub columns: Vec<IndexColumn>,
    pub kind: IndexKind,
}

impl IndexDef {
    /// The attribute number of the first key column.
    pub fn leading_column(&self) -> usize {
        self.columns[0].attno
    }

    /// A unique index (UNIQUE, PRIMARY KEY, CREATE UNIQUE INDEX): no two
    /// rows may have equal keys without NULLs.
    pub fn unique(&self) -> bool {
        self.kind.is_unique()
    }
}

/// The data directory format this build reads and writes.
const FORMAT_VERSION: &str = "3";

/// One catalog change made by a transaction's DDL.
#[derive(Debug, Clone, PartialEq)]
pub enum DdlChange {
    CreateTable(TableDef),
    CreateIndex(IndexDef),
    /// A table (with its indexes) or an index.
    Drop(u32),
    /// A table's or view's new definition (same oid, possibly a new name).
    AlterTable(TableDef),
    /// An index's new definition (same oid, possibly a new name).
    AlterIndex(IndexDef),
}

/// First oid handed out to user tables, as in PostgreSQL.
pub const FIRST_USER_OID: u32 = 16384;

/// The first word of the catalog file's last line.
const CHECKSUM_WORD: &str = "checksum";

/// The catalog file's text without its checksum line, once the checksum
/// matches (see the module doc).
fn verified_text<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b str, StorageError> {
    let corrupt = |why: String| {
        StorageError::Other(format!(
            "catalog file \"{}\" is corrupt: {why}",
            path.display()
        ))
    };
    let body_end = bytes[..bytes.len().saturating_sub(1)]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let (body, last) = bytes.split_at(body_end);
    let claimed = std::str::from_utf8(last)
        .ok()
        .and_then(|l| l.strip_suffix('\n'))
        .and_then(|l| l.strip_prefix(CHECKSUM_WORD))
        .and_then(|l| l.strip_prefix(' '))
        // Lowercase only: a flipped case bit must not read as the same.
        .filter(|hex| hex.len() == 8 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .and_then(|hex| u32::from_str_radix(hex, 16).ok());
    let body = match claimed {
        Some(claimed) => {
            let actual = crc32c::crc32c(body);
            if actual != claimed {
                return Err(corrupt(format!(
                    "checksum mismatch (stored {claimed:08x}, computed {actual:08x})"
                )));
            }
            body
        }
        None if memmem(bytes, CHECKSUM_WORD.as_bytes()) => {
            return Err(corrupt("its checksum line is damaged".into()));
        }
        // Written before catalogs had checksums.
        None => bytes,
    };
    std::str::from_utf8(body).map_err(|_| corrupt("it is not valid UTF-8".into()))
}

/// Whether `needle` occurs in `haystack`.
fn memmem(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Parses catalog text into `next_oid` and `tables`.
fn parse(
    text: &str,
    next_oid: &mut u32,
    tables: &mut BTreeMap<String, TableDef>,
    indexes: &mut BTreeMap<String, IndexDef>,
) -> Result<(), StorageError> {
    let corrupt = |line: &str| StorageError::Other(format!("corrupt catalog line: {line:?}"));
    let mut current: Option<TableDef> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        match parts.next() {
            Some("tusk-catalog") => {
                if parts.next() != Some(FORMAT_VERSION) {
                    return Err(StorageError::Other(format!(
                        "the data directory has format {:?}, this tusk needs {FORMAT_VERSION}: \
                         it was created by an older tusk; create a new one",
                        line.trim_start_matches("tusk-catalog ")
                    )));
                }
            }
            Some("next_oid") => {
                *next_oid = parts
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| corrupt(line))?
            }
            Some("table") => {
                if let Some(t) = current.take() {
                    tables.insert(t.name.clone(), t);
                }
                let oid = parts
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| corrupt(line))?;
                let name = parts.next().ok_or_else(|| corrupt(line))?.to_string();
                current = Some(TableDef::new(oid, name, vec![]));
            }
            Some("column") => {
                let rest: Vec<&str> = line.splitn(4, ' ').collect();
                if rest.len() != 4 {
                    return Err(corrupt(line));
                }
                let ty = SqlType::decode(rest[1]).ok_or_else(|| corrupt(line))?;
                let not_null = rest[2] == "notnull";
                let t = current.as_mut().ok_or_else(|| corrupt(line))?;
                t.columns.push(ColumnDef::new(rest[3], ty, not_null));
            }
            Some("default") => {
                let (attno, text) = parts
                    .next()
                    .zip(parts.next())
                    .ok_or_else(|| corrupt(line))?;
                let t = current.as_mut().ok_or_else(|| corrupt(line))?;
                let c = attno
                    .parse::<usize>()
                    .ok()
                    .and_then(|a| t.columns.get_mut(a))
                    .ok_or_else(|| corrupt(line))?;
                c.default = Some(unescape(text).ok_or_else(|| corrupt(line))?);
            }
            Some("check") => {
                let rest = line["check ".len().min(line.len())..].to_string();
                let mut fields = rest.split('\t');
                let (Some(name), Some(expr)) = (fields.next(), fields.next()) else {
                    return Err(corrupt(line));
                };
                // Catalogs written before constraints had oids get one at
                // load (`Catalog::open`).
                let oid = match fields.next() {
                    Some(o) => o.parse().map_err(|_| corrupt(line))?,
                    None => 0,
                };
                let t = current.as_mut().ok_or_else(|| corrupt(line))?;
                t.checks.push(CheckDef {
                    name: unescape(name).ok_or_else(|| corrupt(line))?,
                    expr: unescape(expr).ok_or_else(|| corrupt(line))?,
                    oid,
                });
            }
            Some("am") => {
                let am = parts
                    .next()
                    .and_then(AccessMethod::from_name)
                    .ok_or_else(|| corrupt(line))?;
                current.as_mut().ok_or_else(|| corrupt(line))?.access_method = am;
            }
            Some("view") => {
                let text = &line["view ".len().min(line.len())..];
                let t = current.as_mut().ok_or_else(|| corrupt(line))?;
                t.view = Some(unescape(text).ok_or_else(|| corrupt(line))?);
            }
            Some("sequence") => {
                let text = &line["sequence ".len().min(line.len())..];
                let t = current.as_mut().ok_or_else(|| corrupt(line))?;
                t.sequence = Some(SequenceDef::decode(text).ok_or_else(|| corrupt(line))?);
            }
            Some("index") => {
                let rest: Vec<&str> = line.splitn(6, ' ').collect();
                let num = |i: usize| rest.get(i).and_then(|n| n.parse::<u32>().ok());
                let (Some(oid), Some(table), Some(kind), Some(cols), Some(name)) =
                    (num(1), num(2), rest.get(3), rest.get(4), rest.get(5))
                else {
                    return Err(corrupt(line));
                };
                let kind = IndexKind::decode(kind).ok_or_else(|| corrupt(line))?;
                let columns = cols
                    .split(',')
                    .map(IndexColumn::decode)
                    .collect::<Option<Vec<_>>>()
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| corrupt(line))?;
                indexes.insert(
                    name.to_string(),
                    IndexDef {
                        oid,
                        name: name.to_string(),
                        table,
                        columns,
                        kind,
                    },
                );
            }
            Some("") | None => {}
            Some(_) => return Err(corrupt(line)),
        }
    }
    if let Some(t) = current.take() {
        tables.insert(t.name.clone(), t);
    }
    Ok(())
}

/// A table definition as catalog text (the payload of WAL `CreateTable`).
pub fn encode_table(t: &TableDef) -> String {
    let mut text = format!("table {} {}\n", t.oid, t.name);
    if t.access_method != AccessMethod::Heap {
        text.push_str(&format!("am {}\n", t.access_method.name()));
    }
    for c in &t.columns {
        text.push_str(&format!(
            "column {} {} {}\n",
            c.ty.encode(),
            if c.not_null { "notnull" } else { "null" },
            c.name
        ));
    }
    for (i, c) in t.columns.iter().enumerate() {
        if let Some(d) = &c.default {
            text.push_str(&format!("default {i} {}\n", escape(d)));
        }
    }
    for c in &t.checks {
        text.push_str(&format!(
            "check {}\t{}\t{}\n",
            escape(&c.name),
            escape(&c.expr),
            c.oid
        ));
    }
    if let Some(v) = &t.view {
        text.push_str(&format!("view {}\n", escape(v)));
    }
    if let Some(s) = &t.sequence {
        text.push_str(&format!("sequence {}\n", s.encode()));
    }
    text
}

/// SQL text on one catalog line: backslash, newline, carriage return and
/// tab escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

/// Inverse of [`escape`]; `None` for a malformed escape.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match it.next()? {
            '\\' => '\\',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            _ => return None,
        });
    }
    Some(out)
}

/// An index definition as catalog text (the payload of WAL `CreateIndex`).
pub fn encode_index(i: &IndexDef) -> String {
    let cols: Vec<String> = i.columns.iter().map(IndexColumn::encode).collect();
    format!(
        "index {} {} {} {} {}\n",
        i.oid,
        i.table,
        i.kind.encode(),
        cols.join(","),
        i.name
    )
}

/// Inverse of [`encode_index`].
pub fn decode_index(text: &str) -> Result<IndexDef, StorageError> {
    let (mut tables, mut indexes) = (BTreeMap::new(), BTreeMap::new());
    parse(text, &mut 0, &mut tables, &mut indexes)?;
    let mut it = indexes.into_values();
    match (it.next(), it.next(), tables.is_empty()) {
        (Some(i), None, true) => Ok(i),
        _ => Err(StorageError::Other(format!(
            "invalid index definition in WAL: {text:?}"
        ))),
    }
}

/// Inverse of [`encode_table`].
pub fn decode_table(text: &str) -> Result<TableDef, StorageError> {
    let mut tables = BTreeMap::new();
    let mut next_oid = 0;
    parse(text, &mut next_oid, &mut tables, &mut BTreeMap::new())?;
    let mut it = tables.into_values();
    match (it.next(), it.next()) {
        (Some(t), None) => Ok(t),
        _ => Err(StorageError::Other(format!(
            "invalid table definition in WAL: {text:?}"
        ))),
    }
}

#[derive(Debug, Clone)]
pub struct Catalog {
    path: PathBuf,
    next_oid: u32,
    tables: BTreeMap<String, TableDef>,
    indexes: BTreeMap<String, IndexDef>,
}

impl Catalog {
    pub fn open(path: &Path) -> Result<Catalog, StorageError> {
        let mut cat = Catalog {
            path: path.to_path_buf(),
            next_oid: FIRST_USER_OID,
            tables: BTreeMap::new(),
            indexes: BTreeMap::new(),
        };
        let bytes = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                cat.save()?;
                return Ok(cat);
            }
            Err(e) => {
                return Err(StorageError::io(
                    format!("could not read \"{}\"", path.display()),
                    e,
                ))
            }
        };
        let text = verified_text(path, &bytes)?;
        parse(text, &mut cat.next_oid, &mut cat.tables, &mut cat.indexes)?;
        // CHECK constraints of an older catalog have no oid yet: they get
        // the next ones, the same at every load until the next save keeps
        // them.
        for t in cat.tables.values_mut() {
            for c in t.checks.iter_mut().filter(|c| c.oid == 0) {
                c.oid = cat.next_oid;
                cat.next_oid += 1;
            }
        }
        Ok(cat)
    }

    pub(crate) fn save(&self) -> Result<(), StorageError> {
        let mut text = format!("tusk-catalog {FORMAT_VERSION}\n");
        text.push_str(&format!("next_oid {}\n", self.next_oid));
        for t in self.tables.values() {
            text.push_str(&encode_table(t));
        }
        for i in self.indexes.values() {
            text.push_str(&encode_index(i));
        }
        let checksum = crc32c::crc32c(text.as_bytes());
        text.push_str(&format!("{CHECKSUM_WORD} {checksum:08x}\n"));
        let tmp = self.path.with_extension("tmp");
        let io = |e| StorageError::io(format!("could not write \"{}\"", tmp.display()), e);
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent() {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    pub fn table(&self, name: &str) -> Option<&TableDef> {
        self.tables.get(name)
    }

    pub fn tables(&self) -> impl Iterator<Item = &TableDef> {
        self.tables.values()
    }

    /// Reserves an oid for a new relation.
    pub fn allocate_oid(&mut self) -> Result<u32, StorageError> {
        let oid = self.next_oid;
        if oid > crate::smgr::MAX_OID {
            return Err(StorageError::Other("out of object ids".into()));
        }
        self.next_oid += 1;
        self.save()?;
        Ok(oid)
    }

    pub fn add_table(&mut self, table: TableDef) -> Result<(), StorageError> {
        self.tables.insert(table.name.clone(), table);
        self.save()
    }

    pub fn table_by_oid(&self, oid: u32) -> Option<&TableDef> {
        self.tables.values().find(|t| t.oid == oid)
    }

    /// Puts a table recovered from the WAL back (replacing any table of the
    /// same name or oid) and keeps `next_oid` past it.
    pub fn restore_table(&mut self, table: TableDef) -> Result<(), StorageError> {
        self.tables.retain(|_, t| t.oid != table.oid);
        self.next_oid = self.next_oid.max(table.oid + 1);
        self.add_table(table)
    }

    /// Applies `change` in memory only (no save); returns the oids of the
    /// relations a drop removed.
    pub fn apply_unsaved(&mut self, change: &DdlChange) -> Vec<u32> {
        match change {
            DdlChange::CreateTable(t) | DdlChange::AlterTable(t) => {
                self.tables.retain(|_, x| x.oid != t.oid);
                self.next_oid = self.next_oid.max(t.oid + 1);
                self.tables.insert(t.name.clone(), t.clone());
                Vec::new()
            }
            DdlChange::CreateIndex(i) | DdlChange::AlterIndex(i) => {
                self.indexes.retain(|_, x| x.oid != i.oid);
                self.next_oid = self.next_oid.max(i.oid + 1);
                self.indexes.insert(i.name.clone(), i.clone());
                Vec::new()
            }
            DdlChange::Drop(oid) => self.remove_unsaved(*oid),
        }
    }

    /// This catalog as a transaction with `changes` sees it.
    pub fn with_changes<'c>(&self, changes: impl IntoIterator<Item = &'c DdlChange>) -> Catalog {
        let mut c = self.clone();
        for ch in changes {
            c.apply_unsaved(ch);
        }
        c
    }

    /// Removes relation `oid`: a table with its indexes, or an index.
    /// Returns the oids of the relations removed (their files must go too).
    pub fn remove_oid(&mut self, oid: u32) -> Result<Vec<u32>, StorageError> {
        let gone = self.remove_unsaved(oid);
        if !gone.is_empty() {
            self.save()?;
        }
        Ok(gone)
    }

    fn remove_unsaved(&mut self, oid: u32) -> Vec<u32> {
        let mut gone = Vec::new();
        if let Some(name) = self.table_by_oid(oid).map(|t| t.name.clone()) {
            self.tables.remove(&name);
            gone.push(oid);
        }
        self.indexes.retain(|_, i| {
            let drop = i.oid == oid || i.table == oid;
            if drop {
                gone.push(i.oid);
            }
            !drop
        });
        gone
    }

    /// Whether a table or an index is called `name`.
    pub fn relation_exists(&self, name: &str) -> bool {
        self.tables.contains_key(name) || self.indexes.contains_key(name)
    }

    pub fn index(&self, name: &str) -> Option<&IndexDef> {
        self.indexes.get(name)
    }

    pub fn index_by_oid(&self, oid: u32) -> Option<&IndexDef> {
        self.indexes.values().find(|i| i.oid == oid)
    }

    /// The indexes of table `table` (by oid), in name order.
    pub fn indexes_of(&self, table: u32) -> impl Iterator<Item = &IndexDef> {
        self.indexes.values().filter(move |i| i.table == table)
    }

    pub fn add_index(&mut self, index: IndexDef) -> Result<(), StorageError> {
        self.indexes.insert(index.name.clone(), index);
        self.save()
    }

    /// Puts an index recovered from the WAL back (replacing any of the same
    /// name or oid) and keeps `next_oid` past it.
    pub fn restore_index(&mut self, index: IndexDef) -> Result<(), StorageError> {
        self.indexes.retain(|_, i| i.oid != index.oid);
        self.next_oid = self.next_oid.max(index.oid + 1);
        self.add_index(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_time_typmods_round_trip_and_print_as_postgres() {
        let day_to_second = IntervalMod {
            fields: 60,
            precision: Some(2),
        };
        for t in [
            SqlType::Timestamp(Some(3)),
            SqlType::TimestampTz(Some(0)),
            SqlType::Time(Some(6)),
            SqlType::Interval(Some(day_to_second)),
            SqlType::Interval(Some(IntervalMod {
                fields: 63,
                precision: Some(1),
            })),
            SqlType::Interval(None),
        ] {
            assert_eq!(SqlType::decode(&t.encode()), Some(t));
        }
        // psql's \d and format_type().
        assert_eq!(
            SqlType::Timestamp(Some(3)).display_name(),
            "timestamp(3) without time zone"
        );
        assert_eq!(
            SqlType::Interval(Some(day_to_second)).display_name(),
            "interval day to second(2)"
        );
        // pg_attribute.atttypmod, as PostgreSQL 15 records them.
        assert_eq!(SqlType::Interval(Some(day_to_second)).typmod(), 470_286_338);
        let year = IntervalMod {
            fields: 1,
            precision: None,
        };
        assert_eq!(SqlType::Interval(Some(year)).typmod(), 327_679);
        assert_eq!(SqlType::TimestampTz(Some(0)).typmod(), 0);
    }

    #[test]
    fn persists() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("catalog");
        let mut c = Catalog::open(&p).unwrap();
        let oid = c.allocate_oid().unwrap();
        c.add_table(TableDef {
            oid,
            name: "my table".into(),
            columns: vec![
                ColumnDef {
                    name: "a b".into(),
                    ty: SqlType::Varchar(Some(5)),
                    not_null: true,
                    default: None,
                },
                ColumnDef {
                    name: "c".into(),
                    ty: SqlType::Int8,
                    not_null: false,
                    default: None,
                },
            ],
            checks: Vec::new(),
            view: None,
            access_method: AccessMethod::Columnar,
            sequence: None,
        })
        .unwrap();
        let c2 = Catalog::open(&p).unwrap();
        assert_eq!(c2.table("my table"), c.table("my table"));
        let t = c.table("my table").unwrap();
        assert_eq!(&decode_table(&encode_table(t)).unwrap(), t);
        let idx = IndexDef {
            oid: c.allocate_oid().unwrap(),
            name: "my index".into(),
            table: oid,
            columns: vec![IndexColumn::asc(1), IndexColumn::desc(0)],
            kind: IndexKind::UniqueConstraint,
        };
        assert_eq!(decode_index(&encode_index(&idx)).unwrap(), idx);
        c.add_index(idx.clone()).unwrap();
        let c2 = Catalog::open(&p).unwrap();
        assert_eq!(c2.index("my index"), Some(&idx));
        assert!(c2.relation_exists("my index") && c2.relation_exists("my table"));
        let mut c3 = c2.clone();
        assert_eq!(c3.remove_oid(oid).unwrap(), vec![oid, idx.oid]);
        assert!(c3.indexes_of(oid).next().is_none());
        let mut c3 = c2.clone();
        assert!(c3.allocate_oid().unwrap() > oid);
    }
}

#[cfg(test)]
mod damage_tests {
    use super::*;

    /// A catalog with a table, a default, a check, a view and an index.
    fn sample(dir: &Path) -> PathBuf {
        let path = dir.join("catalog");
        let mut cat = Catalog::open(&path).unwrap();
        let mut t = TableDef::new(
            FIRST_USER_OID,
            "t",
            vec![
                ColumnDef::new("a", SqlType::Int4, true),
                ColumnDef::new("b", SqlType::Text, false),
            ],
        );
        t.columns[1].default = Some("'x'".into());
        t.checks.push(CheckDef {
            name: "t_a_check".into(),
            expr: "a > 0".into(),
            oid: FIRST_USER_OID + 3,
        });
        cat.add_table(t).unwrap();
        let mut v = TableDef::new(
            FIRST_USER_OID + 1,
            "v",
            vec![ColumnDef::new("a", SqlType::Int4, false)],
        );
        v.view = Some("SELECT a FROM t".into());
        cat.add_table(v).unwrap();
        cat.add_index(IndexDef {
            oid: FIRST_USER_OID + 2,
            name: "t_pkey".into(),
            table: FIRST_USER_OID,
            columns: vec![IndexColumn::decode("0:asc:nullslast").unwrap()],
            kind: IndexKind::PrimaryKey,
        })
        .unwrap();
        path
    }

    /// Every single-bit flip anywhere in the file is refused with an
    /// error that names the file; none is read as another schema.
    #[test]
    fn every_bit_flip_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = sample(dir.path());
        let good = std::fs::read(&path).unwrap();
        let reopened = Catalog::open(&path).unwrap();
        assert_eq!(reopened.tables().count(), 2);
        for bit in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            std::fs::write(&path, &bad).unwrap();
            match Catalog::open(&path) {
                Err(StorageError::Other(m)) => {
                    assert!(m.contains("corrupt"), "bit {bit}: {m}")
                }
                Err(other) => panic!("bit {bit}: {other:?}"),
                Ok(_) => panic!("bit {bit} flipped was read as a catalog"),
            }
        }
    }

    /// A file written before checksums existed is still read.
    #[test]
    fn a_file_without_checksum_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = sample(dir.path());
        let text = std::fs::read_to_string(&path).unwrap();
        let (body, _) = text.trim_end().rsplit_once('\n').unwrap();
        std::fs::write(&path, format!("{body}\n")).unwrap();
        let cat = Catalog::open(&path).unwrap();
        assert_eq!(cat.tables().count(), 2);
        assert!(cat.index("t_pkey").is_some());
    }
}
