//! CREATE [UNIQUE] INDEX, and the indexes behind PRIMARY KEY and UNIQUE
//! constraints.
//!
//! An index is a btree on one or more columns of any type, each `ASC` or
//! `DESC` with `NULLS FIRST` or `LAST` (see `tusk_storage::btree`). It is
//! registered in the session's transaction (`Transaction::create_index`,
//! which takes `ShareLock` on the table: writers wait until the transaction
//! ends), built from the rows its snapshot sees (sorting within
//! `maintenance_work_mem`) and enters the catalog when the transaction
//! commits; a rollback removes it. A unique build that meets two equal keys
//! fails with PostgreSQL's `could not create unique index`.
//!
//! A constraint's index stands for the constraint: it carries the
//! constraint's name and kind ([`IndexKind::PrimaryKey`],
//! [`IndexKind::UniqueConstraint`]). Unnamed indexes get PostgreSQL's names
//! (`ChooseRelationName`): `table_pkey`, `table_a_b_key`, `table_a_idx`,
//! with a number after the label when the name is taken (`t_a_key1`), each
//! part shortened, the longer first, so that the whole fits 63 bytes.
//! CREATE TABLE's constraints are checked as PostgreSQL's
//! `transformIndexConstraints` does: one primary key, existing columns,
//! none twice; a UNIQUE constraint equal to the primary key or to an
//! earlier one adds no index; the primary key's index comes first, and its
//! columns become NOT NULL.

use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name, MAX_IDENTIFIER_BYTES};
use crate::session::{Notice, QueryResult, Result, Session};
use sqlparser::ast as A;
use tusk_storage::btree::{BuildOutcome, Index};
use tusk_storage::{DataType, IndexColumn, IndexDef, IndexKind, LockMode, TableDef};

/// A PRIMARY KEY or UNIQUE constraint of CREATE TABLE, before its index
/// exists.
#[derive(Debug, Clone)]
pub(crate) struct ConstraintSpec {
    /// The name the statement gave (`CONSTRAINT name`).
    pub name: Option<String>,
    /// Attribute numbers of the key columns, in key order.
    pub columns: Vec<usize>,
    pub primary: bool,
}

impl ConstraintSpec {
    /// Collects the constraint on `columns` (names as written) of a table
    /// whose columns are `table_columns`, checking them as PostgreSQL does.
    pub(crate) fn new(
        name: Option<String>,
        columns: &[String],
        primary: bool,
        table_columns: &[String],
    ) -> Result<ConstraintSpec> {
        let mut attnos = Vec::with_capacity(columns.len());
        for c in columns {
            let attno = table_columns.iter().position(|n| n == c).ok_or_else(|| {
                SqlError::coded(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{c}\" named in key does not exist"),
                )
            })?;
            if attnos.contains(&attno) {
                let what = if primary {
                    "primary key constraint"
                } else {
                    "unique constraint"
                };
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{c}\" appears twice in {what}"),
                ));
            }
            attnos.push(attno);
        }
        Ok(ConstraintSpec {
            name,
            columns: attnos,
            primary,
        })
    }

    /// The column names of a constraint's `(col, ...)` list.
    pub(crate) fn column_names(cols: &[A::IndexColumn]) -> Result<Vec<String>> {
        cols.iter()
            .map(|c| match &c.column.expr {
                A::Expr::Identifier(i)
                    if c.operator_class.is_none()
                        && c.column.options.sort.is_none()
                        && c.column.options.nulls_first.is_none() =>
                {
                    ident(i)
                }
                other => Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{other}\""),
                )),
            })
            .collect()
    }
}

/// The constraints of one CREATE TABLE, in the order their indexes are
/// made: the primary key first, then the rest as written, without those
/// equal to an earlier one. Fails on a second primary key.
pub(crate) fn constraint_order(
    table: &str,
    specs: Vec<ConstraintSpec>,
) -> Result<Vec<ConstraintSpec>> {
    if specs.iter().filter(|s| s.primary).count() > 1 {
        return Err(SqlError::coded(
            sqlstate::INVALID_TABLE_DEFINITION,
            format!("multiple primary keys for table \"{table}\" are not allowed"),
        ));
    }
    let mut out: Vec<ConstraintSpec> = specs.iter().filter(|s| s.primary).cloned().collect();
    for s in specs.into_iter().filter(|s| !s.primary) {
        match out.iter_mut().find(|p| p.columns == s.columns) {
            // PostgreSQL keeps the earlier index and, if it has no name
            // yet, gives it this one's.
            Some(prior) => {
                if prior.name.is_none() {
                    prior.name = s.name;
                }
            }
            None => out.push(s),
        }
    }
    Ok(out)
}

/// PostgreSQL's `makeObjectName`: `name1[_name2][_label]`, shortening the
/// longer of the two names first so that the result fits 63 bytes.
fn make_object_name(name1: &str, name2: Option<&str>, label: &str) -> String {
    let overhead = label.len() + 1 + usize::from(name2.is_some());
    let avail = MAX_IDENTIFIER_BYTES - overhead;
    let (mut n1, mut n2) = (name1.len(), name2.map_or(0, str::len));
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let clip = |s: &str, mut n: usize| {
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s[..n].to_string()
    };
    let mut name = clip(name1, n1);
    if let Some(n2s) = name2 {
        name.push('_');
        name.push_str(&clip(n2s, n2));
    }
    name.push('_');
    name.push_str(label);
    name
}

/// PostgreSQL's `ChooseIndexNameAddition`: the column names joined by `_`,
/// cut once past 63 bytes.
fn name_addition(columns: &[&str]) -> String {
    let mut s = String::new();
    for c in columns {
        if !s.is_empty() {
            s.push('_');
        }
        s.push_str(c);
        // NAMEDATALEN bytes or more.
        if s.len() > MAX_IDENTIFIER_BYTES {
            break;
        }
    }
    s
}

/// PostgreSQL's `ChooseRelationName`: the first of `label`, `label1`,
/// `label2`, ... whose name `taken` does not know.
pub(super) fn choose_name(
    taken: impl Fn(&str) -> bool,
    name1: &str,
    name2: Option<&str>,
    label: &str,
) -> String {
    let mut pass = 0;
    loop {
        let modlabel = if pass == 0 {
            label.to_string()
        } else {
            format!("{label}{pass}")
        };
        let name = make_object_name(name1, name2, &modlabel);
        if !taken(&name) {
            return name;
        }
        pass += 1;
    }
}

/// The name of a new index of `kind` on `columns` of `table` that has none.
fn default_index_name(
    taken: impl Fn(&str) -> bool,
    table: &TableDef,
    columns: &[IndexColumn],
    kind: IndexKind,
) -> String {
    let names: Vec<&str> = columns
        .iter()
        .map(|c| table.columns[c.attno].name.as_str())
        .collect();
    let addition = name_addition(&names);
    match kind {
        IndexKind::PrimaryKey => choose_name(taken, &table.name, None, "pkey"),
        IndexKind::UniqueConstraint => choose_name(taken, &table.name, Some(&addition), "key"),
        IndexKind::Plain | IndexKind::Unique => {
            choose_name(taken, &table.name, Some(&addition), "idx")
        }
    }
}

fn relation_exists(name: &str) -> SqlError {
    SqlError::coded(
        sqlstate::DUPLICATE_TABLE,
        format!("relation \"{name}\" already exists"),
    )
}

/// The key columns of CREATE INDEX with their ASC/DESC and NULLS options.
fn index_columns(table: &TableDef, cols: &[A::IndexColumn]) -> Result<Vec<IndexColumn>> {
    let mut out = Vec::with_capacity(cols.len());
    for c in cols {
        let A::Expr::Identifier(id) = &c.column.expr else {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "indexes on expressions are not supported",
            ));
        };
        if let Some(op) = &c.operator_class {
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_OBJECT,
                format!("operator class \"{op}\" does not exist for access method \"btree\""),
            ));
        }
        let name = ident(id)?;
        let attno = table
            .columns
            .iter()
            .position(|d| d.name == name)
            .ok_or_else(|| {
                SqlError::coded(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{name}\" does not exist"),
                )
            })?;
        let desc = match &c.column.options.sort {
            None | Some(A::OrderBySort::Asc) => false,
            Some(A::OrderBySort::Desc) => true,
            Some(A::OrderBySort::Using(_)) => {
                return Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    "syntax error at or near \"USING\"",
                ))
            }
        };
        out.push(IndexColumn {
            attno,
            desc,
            // NULLS FIRST is the default for DESC, as in ORDER BY.
            nulls_first: c.column.options.nulls_first.unwrap_or(desc),
        });
    }
    Ok(out)
}

impl Session {
    /// `CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON table [USING btree]
    /// (column [ASC | DESC] [NULLS FIRST | LAST], ...)`.
    pub(crate) fn create_index(
        &mut self,
        ci: &A::CreateIndex,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        if ci.concurrently
            || !ci.include.is_empty()
            || ci.predicate.is_some()
            || !ci.with.is_empty()
            || ci.nulls_distinct == Some(false)
        {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "CONCURRENTLY, INCLUDE, WITH, NULLS NOT DISTINCT and partial indexes are not supported",
            ));
        }
        if let Some(u) = &ci.using {
            if !matches!(u, A::IndexType::BTree) {
                return Err(SqlError::coded(
                    sqlstate::UNDEFINED_OBJECT,
                    format!(
                        "access method \"{}\" does not exist",
                        u.to_string().to_lowercase()
                    ),
                ));
            }
        }
        self.check_writable("CREATE INDEX")?;
        let tname = user_relation_name(&ci.table_name)?;
        let table = self.catalog()?.table(&tname).cloned().ok_or_else(|| {
            SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{tname}\" does not exist"),
            )
        })?;
        if table.is_view() || table.is_sequence() {
            let kind = if table.is_view() {
                "views"
            } else {
                "sequences"
            };
            return Err(SqlError::coded(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("cannot create index on relation \"{tname}\""),
            )
            .with_detail(format!("This operation is not supported for {kind}.")));
        }
        let columns = index_columns(&table, &ci.columns)?;
        let kind = if ci.unique {
            IndexKind::Unique
        } else {
            IndexKind::Plain
        };
        let name = match &ci.name {
            Some(n) => {
                let n = user_relation_name(n)?;
                if self.catalog()?.relation_exists(&n) {
                    if ci.if_not_exists {
                        sink(QueryResult::Notice(Notice {
                            level: "NOTICE",
                            message: format!("relation \"{n}\" already exists, skipping"),
                            detail: None,
                        }));
                        return Ok(QueryResult::Command {
                            tag: "CREATE INDEX".into(),
                        });
                    }
                    return Err(relation_exists(&n));
                }
                n
            }
            None => {
                let cat = self.catalog()?;
                default_index_name(|n| cat.relation_exists(n), &table, &columns, kind)
            }
        };
        super::ddl::check_name(&name, "index")?;
        // Writers wait until this transaction ends (and a concurrent DROP
        // that committed meanwhile makes the statement bind again).
        self.lock_relation(table.oid, LockMode::Share, &table.name)?;
        self.build_index(&table, &name, columns, kind)?;
        Ok(QueryResult::Command {
            tag: "CREATE INDEX".into(),
        })
    }

    /// Registers index `name` of `kind` on `columns` of `table` in the
    /// session's transaction and builds it from the rows of `table` that
    /// the statement's snapshot sees.
    pub(crate) fn build_index(
        &mut self,
        table: &TableDef,
        name: &str,
        columns: Vec<IndexColumn>,
        kind: IndexKind,
    ) -> Result<IndexDef> {
        if table.is_columnar() {
            return Err(super::ddl::columnar_indexes_refused());
        }
        for c in &columns {
            match table.columns[c.attno].ty.data_type() {
                DataType::Json => {
                    return Err(SqlError::coded(
                        sqlstate::UNDEFINED_OBJECT,
                        "data type json has no default operator class for access method \"btree\"",
                    )
                    .with_hint(
                        "You must specify an operator class for the index or define a default operator class for the data type.",
                    ))
                }
                DataType::Jsonb => {
                    return Err(SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "indexes on jsonb columns are not supported",
                    ))
                }
                _ => {}
            }
        }
        let index = self.txn()?.create_index(table, name, columns, kind)?;
        let snapshot = self.snapshot()?;
        let xid = self.txn()?.xid()?;
        let built = Index::open(&self.db, &index, table).build(
            snapshot,
            xid,
            self.gucs.maintenance_work_mem_bytes(),
        )?;
        if let BuildOutcome::Duplicate { second, .. } = built {
            let key = tusk_exec::dml::row_key(&self.db, table, &index, second)?;
            return Err(SqlError::coded(
                sqlstate::UNIQUE_VIOLATION,
                format!("could not create unique index \"{}\"", index.name),
            )
            .with_detail(format!("Key {key} is duplicated.")));
        }
        Ok(index)
    }

    /// Creates the indexes of CREATE TABLE's constraints `specs` (see
    /// [`constraint_order`]) on the new `table` in the session's
    /// transaction.
    pub(crate) fn constraint_indexes(
        &mut self,
        table: &TableDef,
        specs: &[ConstraintSpec],
    ) -> Result<Vec<IndexDef>> {
        let mut out: Vec<IndexDef> = Vec::new();
        for s in specs {
            let kind = if s.primary {
                IndexKind::PrimaryKey
            } else {
                IndexKind::UniqueConstraint
            };
            let columns: Vec<IndexColumn> =
                s.columns.iter().map(|&a| IndexColumn::asc(a)).collect();
            let cat = self.catalog()?;
            let taken = |n: &str| {
                n == table.name || out.iter().any(|i| i.name == n) || cat.relation_exists(n)
            };
            let name = match &s.name {
                Some(n) if taken(n) => return Err(relation_exists(n)),
                Some(n) => n.clone(),
                None => default_index_name(taken, table, &columns, kind),
            };
            super::ddl::check_name(&name, "index")?;
            let index = self.build_index(table, &name, columns, kind)?;
            out.push(index);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_postgres_makes_them() {
        assert_eq!(make_object_name("t", None, "pkey"), "t_pkey");
        assert_eq!(make_object_name("t", Some("a_b"), "key"), "t_a_b_key");
        // Checked against PostgreSQL 15: the longer part is cut first.
        let long = "x".repeat(60);
        assert_eq!(
            make_object_name(&long, Some("abc"), "key"),
            format!("{}_abc_key", "x".repeat(55))
        );
        assert_eq!(
            make_object_name(&long, None, "pkey"),
            format!("{}_pkey", "x".repeat(58))
        );
        let taken = |n: &str| n == "t_a_key" || n == "t_a_key1";
        assert_eq!(choose_name(taken, "t", Some("a"), "key"), "t_a_key2");
        assert_eq!(name_addition(&["a", "b", "c"]), "a_b_c");
    }

    #[test]
    fn constraints_in_postgres_order() {
        let cols: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let spec = |name: Option<&str>, c: &[&str], primary| {
            let c: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            ConstraintSpec::new(name.map(str::to_string), &c, primary, &cols).unwrap()
        };
        let order = constraint_order(
            "t",
            vec![
                spec(None, &["a"], false),
                spec(None, &["b"], true),
                spec(Some("named"), &["a"], false),
                spec(None, &["b"], false),
                spec(None, &["b", "a"], false),
            ],
        )
        .unwrap();
        let got: Vec<(Option<&str>, &[usize], bool)> = order
            .iter()
            .map(|s| (s.name.as_deref(), s.columns.as_slice(), s.primary))
            .collect();
        assert_eq!(
            got,
            vec![
                (None, &[1][..], true),
                (Some("named"), &[0][..], false),
                (None, &[1, 0][..], false),
            ]
        );
        let e = constraint_order(
            "t",
            vec![spec(None, &["a"], true), spec(None, &["b"], true)],
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "multiple primary keys for table \"t\" are not allowed"
        );
        let c: Vec<String> = vec!["a".into(), "a".into()];
        assert_eq!(
            ConstraintSpec::new(None, &c, true, &cols)
                .unwrap_err()
                .message,
            "column \"a\" appears twice in primary key constraint"
        );
        let c: Vec<String> = vec!["z".into()];
        assert_eq!(
            ConstraintSpec::new(None, &c, false, &cols)
                .unwrap_err()
                .message,
            "column \"z\" named in key does not exist"
        );
    }
}
