//! INSERT and DELETE: sinks that write what a plan produces into a heap.

use crate::error::{ExecError, Result};
use crate::exec::Operator;
use crate::vector::Data;
use tusk_storage::btree::{EncodedKey, Index, InsertOutcome, StatementWriter};
use tusk_storage::heap::{self, HeapInserter, Tid};
use tusk_storage::tuple::TupleBuilder;
use tusk_storage::{Database, SqlType, TableDef, Xid};

/// Inserts every row of `input` (columns already of the table's types, in
/// table order) into `table` as transaction `xid`, and an entry for each
/// row into each of the table's indexes. Returns the row count.
pub fn insert(db: &Database, table: &TableDef, xid: Xid, input: &mut dyn Operator) -> Result<u64> {
    let mut ins = HeapInserter::new(&db.pool, table.oid);
    let defs: Vec<tusk_storage::IndexDef> = db.catalog().indexes_of(table.oid).cloned().collect();
    let indexes: Vec<Index<'_>> = defs.iter().map(|d| Index::open(db, d, table)).collect();
    let mut writer = StatementWriter::new(db, xid);
    let mut key = EncodedKey::default();
    let mut tb = TupleBuilder::new();
    let mut padded = String::new();
    while let Some(b) = input.next()? {
        for row in 0..b.len {
            tb.begin();
            for (col, def) in b.columns.iter().zip(&table.columns) {
                if col.is_null(row) {
                    if def.not_null {
                        return Err(ExecError::new(format!(
                            "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                            def.name, table.name
                        )));
                    }
                    tb.push_null();
                    continue;
                }
                match &col.data {
                    Data::Bool(d) => tb.push_bool(d[row]),
                    Data::Int4(d) => tb.push_i32(d[row]),
                    Data::Int8(d) => tb.push_i64(d[row]),
                    Data::Numeric(d) => tb.push_numeric(d[row].unscaled, d[row].scale),
                    Data::Text(d) => {
                        let s = d.get_str(row);
                        match def.ty {
                            SqlType::Varchar(Some(n)) => {
                                tb.push_text(check_length(s, n, "character varying")?.as_bytes())
                            }
                            SqlType::Char(n) => {
                                let s = check_length(s, n, "character")?;
                                padded.clear();
                                padded.push_str(s);
                                let len = s.chars().count();
                                padded.extend(std::iter::repeat_n(
                                    ' ',
                                    (n as usize).saturating_sub(len),
                                ));
                                tb.push_text(padded.as_bytes());
                            }
                            _ => tb.push_text(s.as_bytes()),
                        }
                    }
                }
            }
            let t = tb.finish(xid);
            let tid = ins.insert(t)?;
            for index in &indexes {
                index.key_of_tuple(t, &mut key)?;
                if let InsertOutcome::Conflict { .. } = index.insert(&key, tid, &mut writer)? {
                    return Err(ExecError::new(format!(
                        "duplicate key value violates unique constraint \"{}\"",
                        index.def().name
                    )));
                }
            }
        }
    }
    Ok(ins.inserted)
}

/// PostgreSQL truncates trailing spaces that do not fit; anything else is an error.
fn check_length<'a>(s: &'a str, n: u32, ty: &str) -> Result<&'a str> {
    let len = s.chars().count();
    if len <= n as usize {
        return Ok(s);
    }
    let cut: usize = s
        .char_indices()
        .nth(n as usize)
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    if s[cut..].chars().all(|c| c == ' ') {
        Ok(&s[..cut])
    } else {
        Err(ExecError::new(format!("value too long for type {ty}({n})")))
    }
}

/// Deletes the rows whose TIDs `input` produces in its last column.
pub fn delete(db: &Database, oid: u32, xid: Xid, input: &mut dyn Operator) -> Result<u64> {
    let mut n = 0;
    while let Some(b) = input.next()? {
        let Some(tids) = b.columns.last() else {
            continue;
        };
        let Data::Int8(tids) = &tids.data else {
            return Err(ExecError::new("DELETE input lacks row identifiers"));
        };
        for &t in tids {
            if heap::delete(&db.pool, oid, Tid::from_u64(t as u64), xid)? {
                n += 1;
            }
        }
    }
    Ok(n)
}
