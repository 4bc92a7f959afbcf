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
//! tusk-catalog 1
//! next_oid 16390
//! table 16384 t
//! column i int4 -1 null
//! ```

use crate::StorageError;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Physical type of a column or value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Int4,
    Int8,
    Numeric,
    Text,
}

/// A column's SQL type: the physical type plus the text length modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    Bool,
    Int4,
    Int8,
    Numeric,
    Text,
    Varchar(Option<u32>),
    Char(u32),
}

impl SqlType {
    pub fn data_type(self) -> DataType {
        match self {
            SqlType::Bool => DataType::Bool,
            SqlType::Int4 => DataType::Int4,
            SqlType::Int8 => DataType::Int8,
            SqlType::Numeric => DataType::Numeric,
            SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) => DataType::Text,
        }
    }

    /// The name PostgreSQL prints (`format_type`).
    pub fn display_name(self) -> String {
        match self {
            SqlType::Bool => "boolean".into(),
            SqlType::Int4 => "integer".into(),
            SqlType::Int8 => "bigint".into(),
            SqlType::Numeric => "numeric".into(),
            SqlType::Text => "text".into(),
            SqlType::Varchar(None) => "character varying".into(),
            SqlType::Varchar(Some(n)) => format!("character varying({n})"),
            SqlType::Char(n) => format!("character({n})"),
        }
    }

    fn encode(self) -> String {
        match self {
            SqlType::Bool => "bool".into(),
            SqlType::Int4 => "int4".into(),
            SqlType::Int8 => "int8".into(),
            SqlType::Numeric => "numeric".into(),
            SqlType::Text => "text".into(),
            SqlType::Varchar(None) => "varchar".into(),
            SqlType::Varchar(Some(n)) => format!("varchar:{n}"),
            SqlType::Char(n) => format!("char:{n}"),
        }
    }

    fn decode(s: &str) -> Option<SqlType> {
        Some(match s {
            "bool" => SqlType::Bool,
            "int4" => SqlType::Int4,
            "int8" => SqlType::Int8,
            "numeric" => SqlType::Numeric,
            "text" => SqlType::Text,
            "varchar" => SqlType::Varchar(None),
            _ => {
                let (k, n) = s.split_once(':')?;
                let n = n.parse().ok()?;
                match k {
                    "varchar" => SqlType::Varchar(Some(n)),
                    "char" => SqlType::Char(n),
                    _ => return None,
                }
            }
        })
    }
}

impl DataType {
    pub fn display_name(self) -> &'static str {
        match self {
            DataType::Bool => "boolean",
            DataType::Int4 => "integer",
            DataType::Int8 => "bigint",
            DataType::Numeric => "numeric",
            DataType::Text => "text",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    /// Object id; also the relation file number.
    pub oid: u32,
    pub name: String,
    pub columns: Vec<ColumnDef>,
}

impl TableDef {
    pub fn column_types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.ty.data_type()).collect()
    }
}

/// First oid handed out to user tables, as in PostgreSQL.
pub const FIRST_USER_OID: u32 = 16384;

/// Parses catalog text into `next_oid` and `tables`.
fn parse(
    text: &str,
    next_oid: &mut u32,
    tables: &mut BTreeMap<String, TableDef>,
) -> Result<(), StorageError> {
    let corrupt = |line: &str| StorageError::Other(format!("corrupt catalog line: {line:?}"));
    let mut current: Option<TableDef> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        match parts.next() {
            Some("tusk-catalog") => {}
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
                current = Some(TableDef {
                    oid,
                    name,
                    columns: vec![],
                });
            }
            Some("column") => {
                let rest: Vec<&str> = line.splitn(4, ' ').collect();
                if rest.len() != 4 {
                    return Err(corrupt(line));
                }
                let ty = SqlType::decode(rest[1]).ok_or_else(|| corrupt(line))?;
                let not_null = rest[2] == "notnull";
                let t = current.as_mut().ok_or_else(|| corrupt(line))?;
                t.columns.push(ColumnDef {
                    name: rest[3].to_string(),
                    ty,
                    not_null,
                });
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
    for c in &t.columns {
        text.push_str(&format!(
            "column {} {} {}\n",
            c.ty.encode(),
            if c.not_null { "notnull" } else { "null" },
            c.name
        ));
    }
    text
}

/// Inverse of [`encode_table`].
pub fn decode_table(text: &str) -> Result<TableDef, StorageError> {
    let mut tables = BTreeMap::new();
    let mut next_oid = 0;
    parse(text, &mut next_oid, &mut tables)?;
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
}

impl Catalog {
    pub fn open(path: &Path) -> Result<Catalog, StorageError> {
        let mut cat = Catalog {
            path: path.to_path_buf(),
            next_oid: FIRST_USER_OID,
            tables: BTreeMap::new(),
        };
        let text = match std::fs::read_to_string(path) {
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
        parse(&text, &mut cat.next_oid, &mut cat.tables)?;
        Ok(cat)
    }

    fn save(&self) -> Result<(), StorageError> {
        let mut text = String::from("tusk-catalog 1\n");
        text.push_str(&format!("next_oid {}\n", self.next_oid));
        for t in self.tables.values() {
            text.push_str(&encode_table(t));
        }
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

    /// Removes the table with relation `oid`, if there is one.
    pub fn remove_oid(&mut self, oid: u32) -> Result<Option<TableDef>, StorageError> {
        match self.table_by_oid(oid).map(|t| t.name.clone()) {
            Some(name) => self.remove_table(&name),
            None => Ok(None),
        }
    }

    pub fn remove_table(&mut self, name: &str) -> Result<Option<TableDef>, StorageError> {
        let t = self.tables.remove(name);
        if t.is_some() {
            self.save()?;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                },
                ColumnDef {
                    name: "c".into(),
                    ty: SqlType::Int8,
                    not_null: false,
                },
            ],
        })
        .unwrap();
        let c2 = Catalog::open(&p).unwrap();
        assert_eq!(c2.table("my table"), c.table("my table"));
        let t = c.table("my table").unwrap();
        assert_eq!(&decode_table(&encode_table(t)).unwrap(), t);
        let mut c3 = c2.clone();
        assert!(c3.allocate_oid().unwrap() > oid);
    }
}
