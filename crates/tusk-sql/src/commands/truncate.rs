//! `TRUNCATE [TABLE] [ONLY] name [*] [, ...] [RESTART IDENTITY | CONTINUE
//! IDENTITY] [CASCADE | RESTRICT]`.
//!
//! PostgreSQL empties a table by giving it a new, empty relation file (a
//! new relfilenode) in the truncating transaction and dropping the old file
//! when that transaction commits; a rollback drops the new file instead and
//! the old rows are back. tusk names relation files by the relation's OID,
//! so the same swap is a transactional DROP of the table (with its indexes)
//! and a CREATE of a table of the same definition, and of its indexes under
//! their names, in one statement: the table gets a new OID, nothing else a
//! user sees changes. Everything else follows from the DDL machinery of
//! `tusk_storage::xact`:
//!
//! * `AccessExclusiveLock` on every table named, all taken before any is
//!   emptied (a table dropped meanwhile makes the statement bind again);
//!   concurrent readers and writers wait, then find the new, empty table.
//! * The new table is unlogged until commit, which writes and fsyncs its
//!   file before the commit record: rows COPYed or inserted into a table
//!   truncated in the same transaction are not logged, as after CREATE
//!   TABLE AS (and `COPY ... FREEZE` is allowed, as in PostgreSQL).
//! * The indexes are built again, empty, under their names.
//! * The old files go after the commit; a rollback (or a crash before the
//!   commit record) leaves the old table as it was.
//!
//! tusk has no identity columns, sequences or foreign keys, so `RESTART
//! IDENTITY` and `CASCADE` have nothing to act on; tusk has no
//! inheritance, so `ONLY` and `*` change nothing.

use crate::error::{sqlstate, SqlError};
use crate::names::user_relation_name;
use crate::session::{QueryResult, Result, Session};
use sqlparser::ast as A;
use tusk_storage::{IndexDef, LockMode, TableDef};

impl Session {
    /// Runs TRUNCATE (see the module doc).
    pub(crate) fn truncate(&mut self, t: &A::Truncate) -> Result<QueryResult> {
        // PostgreSQL's grammar has neither.
        let word = if t.if_exists {
            Some("exists")
        } else if t.partitions.is_some() {
            Some("partition")
        } else {
            t.on_cluster.as_ref().map(|_| "on")
        };
        if let Some(word) = word {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!("syntax error at or near \"{word}\""),
            ));
        }
        self.check_writable("TRUNCATE TABLE")?;
        let mut victims: Vec<TableDef> = Vec::new();
        {
            let cat = self.catalog()?;
            for target in &t.table_names {
                let name = user_relation_name(&target.name)?;
                let Some(table) = cat.table(&name) else {
                    let message = if cat.index(&name).is_some() {
                        return Err(not_a_table(&name));
                    } else {
                        format!("relation \"{name}\" does not exist")
                    };
                    return Err(SqlError::coded(sqlstate::UNDEFINED_TABLE, message));
                };
                if table.is_view() || table.is_sequence() {
                    return Err(not_a_table(&name));
                }
                if !victims.iter().any(|v| v.oid == table.oid) {
                    victims.push(table.clone());
                }
            }
        }
        // All locked before any is emptied, as PostgreSQL does.
        for table in &victims {
            self.lock_relation(table.oid, LockMode::AccessExclusive, &table.name)?;
        }
        for table in victims {
            let indexes: Vec<IndexDef> = self.catalog()?.indexes_of(table.oid).cloned().collect();
            self.txn()?.drop_relation(table.oid, &table.name)?;
            let mut def = table.clone();
            def.oid = 0;
            let fresh = self.txn()?.create_relation(def)?;
            for index in indexes {
                self.build_index(&fresh, &index.name, index.columns, index.kind)?;
            }
        }
        Ok(QueryResult::Command {
            tag: "TRUNCATE TABLE".into(),
        })
    }
}

/// `"v" is not a table` (42809), for a view or an index.
fn not_a_table(name: &str) -> SqlError {
    SqlError::coded(
        sqlstate::WRONG_OBJECT_TYPE,
        format!("\"{name}\" is not a table"),
    )
}
