//! Table rewrites (ADD COLUMN, DROP COLUMN, ALTER COLUMN TYPE) and the
//! scans that check existing rows against new constraints.
//!
//! A rewrite makes the table of the new shape as a new relation under a
//! temporary name (`pg_temp_OLDOID`, as PostgreSQL's `make_new_heap`
//! names its transient table), fills it with `INSERT INTO new (...)
//! SELECT ... FROM old` — so assignment casts, `USING` expressions and
//! column defaults (volatile ones evaluated per row) are the INSERT's —
//! drops the old table, gives the new one the old name, and rebuilds the
//! indexes whose key columns survive under their old names. All of it is
//! ordinary transactional DDL (CREATE, DROP, `AlterTable`): a rollback or
//! a crash leaves the old table as it was. NOT NULL and CHECK constraints
//! are left off the new relation while it is filled and then checked by
//! [`Session::validate`], which reports PostgreSQL's ALTER TABLE errors
//! rather than INSERT's.

use crate::error::{sqlstate, SqlError};
use crate::names::quote_ident;
use crate::session::{QueryResult, Result, Session};
use tusk_storage::{CheckDef, TableDef};

/// Where a column of the rewritten table comes from.
#[derive(Debug, Clone)]
pub(super) enum Source {
    /// The old column with this attribute number, unchanged.
    Column(usize),
    /// The old column, assignment-cast to the new type.
    Converted(usize),
    /// `ALTER COLUMN ... TYPE ... USING expr` (SQL text over the old row).
    Using(String),
    /// The new column's default (NULL without one).
    Default,
}

impl Session {
    /// Runs SQL text made here as part of the current statement.
    fn run_internal(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        let mut out = Vec::new();
        for p in crate::parse::parse(sql)? {
            let crate::parse::Parsed::Sql(stmt, locks) = p else {
                return Err(SqlError::coded(
                    sqlstate::INTERNAL_ERROR,
                    "unexpected internal statement",
                ));
            };
            self.sql_statement(&stmt, &locks, &mut |r| out.push(r))?;
        }
        Ok(out)
    }

    /// Rewrites `old` into a table shaped `new` (column `i` computed as
    /// `sources[i]` says); returns the new table's oid. See the module doc.
    pub(super) fn rewrite_table(
        &mut self,
        old: &TableDef,
        new: TableDef,
        sources: &[Source],
    ) -> Result<u32> {
        assert_eq!(new.columns.len(), sources.len());
        let mut indexes: Vec<_> = self.catalog()?.indexes_of(old.oid).cloned().collect();
        indexes.sort_by_key(|i| i.oid);
        let mut moved: Vec<Option<usize>> = vec![None; old.columns.len()];
        for (i, s) in sources.iter().enumerate() {
            if let Source::Column(a) | Source::Converted(a) = s {
                moved[*a] = Some(i);
            }
        }
        let mut transient = new.clone();
        transient.name = format!("pg_temp_{}", old.oid);
        transient.checks.clear();
        for c in &mut transient.columns {
            c.not_null = false;
        }
        let transient = self.txn()?.create_relation(transient)?;
        let mut targets = Vec::new();
        let mut values = Vec::new();
        for (c, s) in new.columns.iter().zip(sources) {
            let value = match s {
                Source::Column(a) | Source::Converted(a) => quote_ident(&old.columns[*a].name),
                Source::Using(e) => format!("({e})"),
                Source::Default => continue,
            };
            targets.push(quote_ident(&c.name));
            values.push(value);
        }
        let sql = format!(
            "INSERT INTO public.{} ({}) SELECT {} FROM public.{}",
            quote_ident(&transient.name),
            targets.join(", "),
            values.join(", "),
            quote_ident(&old.name)
        );
        if let Err(e) = self.run_internal(&sql) {
            return Err(cast_error(e, &new, sources));
        }
        self.txn()?.next_command()?;
        self.txn()?.drop_relation(old.oid, &old.name)?;
        let mut def = new;
        def.oid = transient.oid;
        self.txn()?.alter_relation(def.clone())?;
        for index in &indexes {
            if let Some(columns) = super::remap_index(index, &moved) {
                self.build_index(&def, &index.name, columns, index.kind)?;
            }
        }
        self.move_owned_sequences(old.oid, def.oid, &moved)?;
        let not_null: Vec<usize> = (0..def.columns.len())
            .filter(|&i| def.columns[i].not_null)
            .collect();
        self.validate(&def, &not_null, &def.checks)?;
        Ok(def.oid)
    }

    /// Checks the rows of `table` against NOT NULL on columns `not_null`
    /// and against `checks`, with PostgreSQL's ALTER TABLE errors.
    pub(super) fn validate(
        &mut self,
        table: &TableDef,
        not_null: &[usize],
        checks: &[CheckDef],
    ) -> Result<()> {
        self.txn()?.next_command()?;
        let from = format!("public.{}", quote_ident(&table.name));
        for &a in not_null {
            let column = &table.columns[a].name;
            let sql = format!(
                "SELECT 1 FROM {from} WHERE {} IS NULL LIMIT 1",
                quote_ident(column)
            );
            if found_rows(self.run_internal(&sql)?) {
                return Err(SqlError::coded(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!(
                        "column \"{column}\" of relation \"{}\" contains null values",
                        table.name
                    ),
                ));
            }
        }
        for c in checks {
            let sql = format!("SELECT 1 FROM {from} WHERE NOT ({}) LIMIT 1", c.expr);
            if found_rows(self.run_internal(&sql)?) {
                return Err(SqlError::coded(
                    sqlstate::CHECK_VIOLATION,
                    format!(
                        "check constraint \"{}\" of relation \"{}\" is violated by some row",
                        c.name, table.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn found_rows(results: Vec<QueryResult>) -> bool {
    results
        .iter()
        .any(|r| matches!(r, QueryResult::Rows { rows, .. } if !rows.is_empty()))
}

/// INSERT's type mismatch (`column "a" is of type integer but expression
/// is of type text`) as ALTER COLUMN TYPE words it.
fn cast_error(e: SqlError, new: &TableDef, sources: &[Source]) -> SqlError {
    if e.code != sqlstate::DATATYPE_MISMATCH {
        return e;
    }
    let Some((c, s)) = new.columns.iter().zip(sources).find(|(c, _)| {
        e.message
            .starts_with(&format!("column \"{}\" is of type", c.name))
    }) else {
        return e;
    };
    let ty = c.ty.display_name();
    match s {
        Source::Using(_) => SqlError::coded(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "result of USING clause for column \"{}\" cannot be cast automatically to type {ty}",
                c.name
            ),
        )
        .with_hint("You might need to add an explicit cast."),
        _ => SqlError::coded(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "column \"{}\" cannot be cast automatically to type {ty}",
                c.name
            ),
        )
        .with_hint(format!(
            "You might need to specify \"USING {}::{ty}\".",
            quote_ident(&c.name)
        )),
    }
}
