//! The system catalogs: `pg_catalog` and `information_schema` relations
//! computed from tusk's catalog, the way drivers and psql introspect a
//! PostgreSQL database.
//!
//! tusk's own catalog (tusk-storage's `Catalog`) holds tables, views,
//! columns, CHECK constraints and indexes. PostgreSQL spreads the same
//! facts over `pg_class`, `pg_attribute`, `pg_index`, `pg_constraint`,
//! `pg_attrdef`, ... and clients query those. Here each such relation is a
//! [`RelationDef`] (its name, schema, oid and PostgreSQL 15's columns, in
//! `defs`) whose rows are computed when a query scans it:
//!
//! 1. The binder resolves `pg_catalog.pg_class` (or unqualified `pg_class`:
//!    `pg_catalog` is searched before `public`, as in PostgreSQL) to a
//!    system relation and binds a `TableFunction::System` scan of it.
//! 2. The planner turns it into tusk-exec's SystemScan node with a
//!    [`SystemScanSource`] holding the definition and the catalog the
//!    statement planned against (its transaction's view, with its own
//!    uncommitted DDL).
//! 3. When the scan starts, the source computes every row (`rows`) from
//!    that catalog and from the session ([`SessionInfo`], found in the
//!    executor's session environment): settings for `pg_settings`, the
//!    server's sessions for `pg_stat_activity`, roles for `pg_roles`.
//!
//! Oids follow PostgreSQL where it fixes them (namespaces `pg_catalog` 11
//! and `public` 2200, the catalogs' own oids, type oids, the bootstrap
//! superuser 10, access methods `heap` 2 and `btree` 403); tusk's relations
//! keep their own oids (also their file numbers), CHECK constraints have
//! oids of their own, and a PRIMARY KEY or UNIQUE constraint shares the oid
//! of its index. Everything is owned by the bootstrap superuser, `tusk`
//! (`pg_authid` oid 10).
//!
//! What tusk does not have is present and empty (`pg_inherits`,
//! `pg_policy`, `pg_trigger`, publications, ...), so the queries that read
//! them run and find nothing, as on a PostgreSQL database without such
//! objects. A table's system columns (`ctid`, `xmin`, ...) are listed in
//! `pg_attribute` with PostgreSQL's negative attribute numbers, though
//! queries cannot select them.
//!
//! The catalog functions psql uses (`pg_get_indexdef`, `format_type`,
//! `pg_table_is_visible`, ...) are computed by [`SessionInfo`] too (see
//! tusk-exec's `session` module for how the executor reaches it); the
//! deparsing of expressions and definitions is in `deparse`.

mod defs;
pub(crate) mod deparse;
mod info;
mod oids;
mod procs;
mod relations;
pub(crate) use relations::identity_columns;
mod sequence_calls;
mod session_rows;
mod values;

pub use info::{ActivitySource, SessionActivity, SessionInfo};
pub(crate) use info::{CursorRow, PreparedRow};
pub(crate) use oids::*;

use std::sync::Arc;
use tusk_exec::systemscan::SystemRows;
use tusk_exec::{Batch, Value, Vector};
use tusk_storage::{Catalog, SqlType};

/// The schema a system relation is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    PgCatalog,
    InformationSchema,
}

impl Schema {
    pub fn name(self) -> &'static str {
        match self {
            Schema::PgCatalog => "pg_catalog",
            Schema::InformationSchema => "information_schema",
        }
    }

    pub fn oid(self) -> u32 {
        match self {
            Schema::PgCatalog => PG_CATALOG_NAMESPACE,
            Schema::InformationSchema => INFORMATION_SCHEMA_NAMESPACE,
        }
    }
}

/// Whether PostgreSQL has the relation as a table or as a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Table,
    View,
}

/// A system relation: where it is and what its columns are.
#[derive(Debug, PartialEq)]
pub struct RelationDef {
    pub oid: u32,
    pub schema: Schema,
    pub name: &'static str,
    pub kind: Kind,
    pub columns: &'static [(&'static str, SqlType)],
}

/// Every system relation, for `pg_class` and `pg_attribute`.
pub fn all_relations() -> &'static [RelationDef] {
    defs::ALL
}

/// The system relation `schema.name` (`schema` `None`: an unqualified
/// name, found in `pg_catalog` only, as the search path finds it).
pub fn lookup(schema: Option<&str>, name: &str) -> Option<&'static RelationDef> {
    let schema = match schema {
        None | Some("pg_catalog") => Schema::PgCatalog,
        Some("information_schema") => Schema::InformationSchema,
        Some(_) => return None,
    };
    defs::ALL
        .iter()
        .find(|d| d.schema == schema && d.name == name)
}

/// Whether `schema` names one of the system schemas.
pub fn is_system_schema(schema: &str) -> bool {
    matches!(schema, "pg_catalog" | "information_schema")
}

/// Computes a system relation's rows when its scan starts (see the module
/// doc), from the catalog its statement was planned against.
#[derive(Debug)]
pub struct SystemScanSource {
    pub def: &'static RelationDef,
    pub catalog: Arc<Catalog>,
}

impl SystemRows for SystemScanSource {
    fn rows(&self) -> tusk_exec::Result<Batch> {
        let info = SessionInfo::current();
        let rows = match self.def.schema {
            Schema::InformationSchema => {
                relations::information_schema(self.def, &self.catalog, info.as_deref())
            }
            Schema::PgCatalog => match relations::rows(self.def, &self.catalog, info.as_deref())? {
                Some(rows) => rows,
                None => session_rows::rows(self.def, &self.catalog, info.as_deref())?,
            },
        };
        Ok(to_batch(self.def, rows))
    }
}

/// Rows of values as a batch of the relation's column types.
fn to_batch(def: &RelationDef, rows: Vec<Vec<Value>>) -> Batch {
    let mut cols: Vec<Vector> = def
        .columns
        .iter()
        .map(|(_, t)| Vector::with_capacity(t.data_type(), rows.len()))
        .collect();
    for r in &rows {
        debug_assert_eq!(r.len(), cols.len(), "a row of {}", def.name);
        for (c, v) in cols.iter_mut().zip(r) {
            c.push_value(v);
        }
    }
    Batch::new(cols, rows.len())
}

/// An estimate of a system relation's rows, for the planner.
pub fn estimated_rows(def: &RelationDef, catalog: &Catalog) -> f64 {
    let relations = catalog.tables().count() + defs::ALL.len();
    match def.name {
        "pg_class" | "tables" => {
            (relations
                + catalog
                    .tables()
                    .map(|t| catalog.indexes_of(t.oid).count())
                    .sum::<usize>()) as f64
        }
        "pg_attribute" | "columns" => (relations * 8) as f64,
        "pg_type" => 60.0,
        "pg_proc" => 400.0,
        "pg_settings" => 60.0,
        _ => 10.0,
    }
}
