//! CREATE TABLE [AS] (with its constraints' indexes, see `index`) and DROP.

use super::index::{constraint_order, ConstraintSpec};
use crate::bind::{BindSettings, Binder};
use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::session::{Notice, QueryResult, Result, Session};
use crate::types::sql_type;
use sqlparser::ast as A;
use tusk_storage::{AccessMethod, CheckDef, ColumnDef, LockMode, SqlType, TableDef};

pub(super) fn foreign_keys_refused() -> SqlError {
    SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "FOREIGN KEY constraints are not supported: tusk would not enforce them",
    )
}

/// Refuses the UNIQUE options tusk does not implement.
pub(super) fn unique_options(k: &A::UniqueConstraint) -> Result<()> {
    if matches!(k.nulls_distinct, A::NullsDistinctOption::NotDistinct) {
        return Err(SqlError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "UNIQUE NULLS NOT DISTINCT is not supported",
        ));
    }
    Ok(())
}

/// `constraint "name" for relation "table" already exists` (42710).
pub(super) fn constraint_exists(name: &str, table: &str) -> SqlError {
    SqlError::coded(
        sqlstate::DUPLICATE_OBJECT,
        format!("constraint \"{name}\" for relation \"{table}\" already exists"),
    )
}

/// The name PostgreSQL gives an unnamed CHECK constraint `bound` of
/// `table` (columns `cols`): `table_column_check` for a condition on one
/// column, `table_check` otherwise, numbered while `taken` says the name is
/// used.
pub(super) fn check_name_for(
    table: &str,
    cols: &[ColumnDef],
    bound: &tusk_exec::Expr,
    taken: impl Fn(&str) -> bool,
) -> String {
    let mut used = Vec::new();
    bound.columns(&mut used);
    used.sort_unstable();
    used.dedup();
    let base = match used.as_slice() {
        [one] => format!("{table}_{}_check", cols[*one].name),
        _ => format!("{table}_check"),
    };
    let base = crate::names::truncate(&base);
    let mut n = base.clone();
    let mut k = 0;
    while taken(&n) {
        k += 1;
        n = format!("{base}{k}");
    }
    n
}

/// One column of CREATE TABLE or ALTER TABLE ADD COLUMN with what its
/// options declare.
pub(super) struct ColumnElement {
    /// The column with its type, NOT NULL and DEFAULT.
    pub column: ColumnDef,
    /// CHECK options: (constraint name, condition).
    pub checks: Vec<(Option<String>, A::Expr)>,
    /// PRIMARY KEY and UNIQUE options: (constraint name, primary).
    pub keys: Vec<(Option<String>, bool)>,
}

/// Reads a column definition and its options.
pub(super) fn column_element(c: &A::ColumnDef) -> Result<ColumnElement> {
    let name = ident(&c.name)?;
    let ty = sql_type(&c.data_type)?;
    crate::types::check_storable(ty, &name)?;
    let mut el = ColumnElement {
        column: ColumnDef::new(name, ty, false),
        checks: Vec::new(),
        keys: Vec::new(),
    };
    for o in &c.options {
        match &o.option {
            A::ColumnOption::NotNull => el.column.not_null = true,
            A::ColumnOption::Null => el.column.not_null = false,
            A::ColumnOption::Default(e) => el.column.default = Some(e.to_string()),
            A::ColumnOption::Check(ck) => el.checks.push((
                o.name
                    .as_ref()
                    .or(ck.name.as_ref())
                    .map(ident)
                    .transpose()?,
                (*ck.expr).clone(),
            )),
            A::ColumnOption::ForeignKey(_) => return Err(foreign_keys_refused()),
            A::ColumnOption::PrimaryKey(k) => el.keys.push((
                o.name.as_ref().or(k.name.as_ref()).map(ident).transpose()?,
                true,
            )),
            A::ColumnOption::Unique(k) => {
                unique_options(k)?;
                el.keys.push((
                    o.name.as_ref().or(k.name.as_ref()).map(ident).transpose()?,
                    false,
                ))
            }
            other => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("column constraint \"{other}\" is not supported"),
                ))
            }
        }
    }
    Ok(el)
}

/// Indexes (and the UNIQUE and PRIMARY KEY constraints made of them) on
/// columnar tables: not supported.
pub(super) fn columnar_indexes_refused() -> SqlError {
    SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "indexes on columnar tables are not supported",
    )
}

fn command(tag: &str) -> QueryResult {
    QueryResult::Command { tag: tag.into() }
}

/// Names stored in the line-based catalog file cannot hold a newline.
pub(super) fn check_name(name: &str, what: &str) -> Result<()> {
    if name.contains('\n') || name.contains('\0') {
        return Err(SqlError::coded(
            sqlstate::INVALID_NAME,
            format!("{what} names must not contain newlines or NUL characters"),
        ));
    }
    Ok(())
}

impl Session {
    pub(crate) fn create_table(&mut self, ct: &A::CreateTable) -> Result<QueryResult> {
        if ct.temporary || ct.external {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "only permanent tables are supported",
            ));
        }
        self.check_writable(if ct.query.is_some() {
            "CREATE TABLE AS"
        } else {
            "CREATE TABLE"
        })?;
        super::reloptions::check_table_options(&ct.table_options)?;
        let access_method = match crate::parse::access_method(ct) {
            Some(m) => crate::guc::access_method_by_name(&ident(m)?)?,
            None => self.gucs.default_table_access_method(),
        };
        let name = user_relation_name(&ct.name)?;
        check_name(&name, "table")?;
        if self.catalog()?.relation_exists(&name) {
            if ct.if_not_exists {
                return Ok(command("CREATE TABLE"));
            }
            return Err(SqlError::coded(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let mut serial_sequences = Vec::new();
        let (columns, checks, constraints, query) = match &ct.query {
            Some(q) => {
                if !ct.constraints.is_empty() {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "syntax error at or near \"AS\"",
                    ));
                }
                let pq = self.plan_query(q)?;
                let mut names = pq.names.clone();
                if ct.columns.len() > names.len() {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        "too many column names were specified",
                    ));
                }
                for (n, c) in names.iter_mut().zip(&ct.columns) {
                    *n = ident(&c.name)?;
                }
                let cols: Vec<ColumnDef> = names
                    .iter()
                    .zip(&pq.types)
                    .map(|(n, t)| ColumnDef::new(n.clone(), SqlType::of(*t), false))
                    .collect();
                for c in &cols {
                    crate::types::check_storable(c.ty, &c.name)?;
                }
                (cols, Vec::new(), Vec::new(), Some(pq))
            }
            None => {
                let (columns, serials) = self.expand_serial_columns(&name, &ct.columns)?;
                serial_sequences = serials;
                let (cols, checks, constraints) =
                    self.table_elements(&name, &columns, &ct.constraints)?;
                (cols, checks, constraints, None)
            }
        };
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].iter().any(|d| d.name == c.name) {
                return Err(SqlError::coded(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{}\" specified more than once", c.name),
                ));
            }
            check_name(&c.name, "column")?;
        }
        if access_method == AccessMethod::Columnar && !constraints.is_empty() {
            return Err(columnar_indexes_refused());
        }
        let mut def = TableDef::new(0, name, columns);
        def.checks = checks;
        def.access_method = access_method;
        // Visible to this transaction only until it commits; a failure
        // below rolls the creation back with the statement.
        let table = self.txn()?.create_relation(def)?;
        self.own_serial_sequences(table.oid, &serial_sequences)?;
        self.constraint_indexes(&table, &constraints)?;
        match &query {
            Some(pq) => {
                let snapshot = self.snapshot()?;
                let ctx = self.exec_context(snapshot, false, 0);
                let mut op = tusk_exec::exec::build_statement(&pq.stmt, &ctx)?;
                let target = tusk_exec::dml::Target {
                    table: &table,
                    indexes: &[],
                    checks: &[],
                };
                let n = tusk_exec::dml::insert(self.txn()?, target, op.as_mut(), None)?;
                Ok(command(&format!("SELECT {n}")))
            }
            None => Ok(command("CREATE TABLE")),
        }
    }

    /// Columns (with NOT NULL, DEFAULT and CHECK options), PRIMARY KEY and
    /// UNIQUE constraints (in the order their indexes are made) and table
    /// constraints of CREATE TABLE; every DEFAULT and CHECK is bound once
    /// here, so a bad one fails the CREATE as in PostgreSQL.
    fn table_elements(
        &mut self,
        table: &str,
        columns: &[A::ColumnDef],
        constraints: &[A::TableConstraint],
    ) -> Result<(Vec<ColumnDef>, Vec<CheckDef>, Vec<ConstraintSpec>)> {
        let mut cols = Vec::new();
        let names: Vec<String> = columns
            .iter()
            .map(|c| ident(&c.name))
            .collect::<Result<_>>()?;
        let mut keys: Vec<ConstraintSpec> = Vec::new();
        // (constraint name, expression)
        let mut written_checks: Vec<(Option<String>, A::Expr)> = Vec::new();
        for c in columns {
            let el = column_element(c)?;
            for (name, primary) in el.keys {
                keys.push(ConstraintSpec::new(
                    name,
                    std::slice::from_ref(&el.column.name),
                    primary,
                    &names,
                )?);
            }
            written_checks.extend(el.checks);
            cols.push(el.column);
        }
        for tc in constraints {
            match tc {
                A::TableConstraint::Check(ck) => written_checks
                    .push((ck.name.as_ref().map(ident).transpose()?, (*ck.expr).clone())),
                A::TableConstraint::ForeignKey(_) => return Err(foreign_keys_refused()),
                A::TableConstraint::PrimaryKey(k) => keys.push(ConstraintSpec::new(
                    k.name.as_ref().map(ident).transpose()?,
                    &ConstraintSpec::column_names(&k.columns)?,
                    true,
                    &names,
                )?),
                A::TableConstraint::Unique(k) => {
                    unique_options(k)?;
                    keys.push(ConstraintSpec::new(
                        k.name.as_ref().map(ident).transpose()?,
                        &ConstraintSpec::column_names(&k.columns)?,
                        false,
                        &names,
                    )?)
                }
                other => {
                    return Err(SqlError::coded(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("table constraint \"{other}\" is not supported"),
                    ))
                }
            }
        }
        let keys = constraint_order(table, keys)?;
        // A primary key's columns are NOT NULL.
        for k in keys.iter().filter(|k| k.primary) {
            for &a in &k.columns {
                cols[a].not_null = true;
            }
        }
        let catalog = self.catalog()?;
        let mut binder = Binder::new(&catalog, &BindSettings::default());
        for c in &cols {
            if c.default.is_some() {
                binder.column_default(c)?;
            }
        }
        let mut checks: Vec<CheckDef> = Vec::new();
        for (name, e) in written_checks {
            let bound = binder.bind_check(table, &cols, &e)?;
            let name = match name {
                Some(n) => n,
                None => {
                    check_name_for(table, &cols, &bound, |n| checks.iter().any(|c| c.name == n))
                }
            };
            if checks.iter().any(|c| c.name == name) {
                return Err(constraint_exists(&name, table));
            }
            checks.push(CheckDef {
                name,
                expr: e.to_string(),
                oid: self.txn()?.allocate_oid()?,
            });
        }
        Ok((cols, checks, keys))
    }

    /// `DROP TABLE | VIEW | INDEX [IF EXISTS] name, ... [CASCADE |
    /// RESTRICT]`.
    pub(crate) fn drop(
        &mut self,
        object_type: A::ObjectType,
        if_exists: bool,
        names: &[A::ObjectName],
        cascade: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        let (what, tag) = match object_type {
            A::ObjectType::Table => ("table", "DROP TABLE"),
            A::ObjectType::Index => ("index", "DROP INDEX"),
            A::ObjectType::View => ("view", "DROP VIEW"),
            A::ObjectType::Sequence => ("sequence", "DROP SEQUENCE"),
            other => {
                return Err(SqlError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("DROP {other} is not supported"),
                ))
            }
        };
        self.check_writable(tag)?;
        let mut victims = Vec::new();
        {
            let cat = self.catalog()?;
            for n in names {
                let name = user_relation_name(n)?;
                let found = match object_type {
                    A::ObjectType::Table => cat
                        .table(&name)
                        .filter(|t| !t.is_view() && !t.is_sequence())
                        .map(|t| t.oid),
                    A::ObjectType::View => cat.table(&name).filter(|t| t.is_view()).map(|t| t.oid),
                    A::ObjectType::Sequence => {
                        cat.table(&name).filter(|t| t.is_sequence()).map(|t| t.oid)
                    }
                    _ => cat.index(&name).map(|i| i.oid),
                };
                let view = cat.table(&name).is_some_and(|t| t.is_view());
                match found {
                    Some(_) if object_type == A::ObjectType::Index => {
                        let i = cat.index(&name).expect("found above");
                        if i.kind.is_constraint() {
                            let t = cat.table_by_oid(i.table).map_or("", |t| t.name.as_str());
                            return Err(SqlError::coded(
                                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                                format!(
                                    "cannot drop index {name} because constraint {name} on table {t} requires it"
                                ),
                            )
                            .with_hint(format!(
                                "You can drop constraint {name} on table {t} instead."
                            )));
                        }
                        victims.push((i.oid, name))
                    }
                    Some(oid) => victims.push((oid, name)),
                    None if cat.table(&name).is_some_and(|t| t.is_sequence())
                        && object_type != A::ObjectType::Index =>
                    {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a {what}"),
                        )
                        .with_hint("Use DROP SEQUENCE to remove a sequence."))
                    }
                    None if object_type == A::ObjectType::Sequence
                        && cat.table(&name).is_some() =>
                    {
                        let t = cat.table(&name).expect("checked");
                        let (kind, tag) = if t.is_view() {
                            ("view", "VIEW")
                        } else {
                            ("table", "TABLE")
                        };
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a sequence"),
                        )
                        .with_hint(format!("Use DROP {tag} to remove a {kind}.")));
                    }
                    None if object_type == A::ObjectType::Table && view => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a table"),
                        )
                        .with_hint("Use DROP VIEW to remove a view."))
                    }
                    None if object_type == A::ObjectType::View && cat.table(&name).is_some() => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a view"),
                        )
                        .with_hint("Use DROP TABLE to remove a table."))
                    }
                    None if object_type == A::ObjectType::Index && cat.table(&name).is_some() => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not an index"),
                        )
                        .with_hint("Use DROP TABLE to remove a table."))
                    }
                    None if object_type == A::ObjectType::Table && cat.index(&name).is_some() => {
                        return Err(SqlError::coded(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a table"),
                        )
                        .with_hint("Use DROP INDEX to remove an index."))
                    }
                    None if if_exists => sink(QueryResult::Notice(Notice {
                        level: "NOTICE",
                        message: format!("{what} \"{name}\" does not exist, skipping"),
                        detail: None,
                    })),
                    None => {
                        return Err(SqlError::coded(
                            sqlstate::UNDEFINED_TABLE,
                            format!("{what} \"{name}\" does not exist"),
                        ))
                    }
                }
            }
        }
        if object_type == A::ObjectType::Sequence {
            self.drop_sequence_defaults(&victims, cascade, sink)?;
        }
        if object_type != A::ObjectType::Index {
            let dependents = self.views_depending_on(what, &victims, cascade, sink)?;
            victims.extend(dependents);
        }
        // Sequences owned by a dropped table's columns go with it.
        let owned: Vec<(u32, String)> = {
            let cat = self.catalog()?;
            cat.tables()
                .filter(|t| {
                    t.sequence.as_ref().is_some_and(|s| {
                        s.owned_by
                            .is_some_and(|(owner, _)| victims.iter().any(|(v, _)| *v == owner))
                    }) && !victims.iter().any(|(v, _)| *v == t.oid)
                })
                .map(|t| (t.oid, t.name.clone()))
                .collect()
        };
        victims.extend(owned);
        // All locked before any goes: a relation dropped by someone else
        // meanwhile makes the statement start over with nothing done.
        for (oid, name) in &victims {
            self.lock_relation(*oid, LockMode::AccessExclusive, name)?;
        }
        for (oid, name) in victims {
            // Gone for this transaction now, for everybody at commit.
            self.txn()?.drop_relation(oid, &name)?;
        }
        Ok(command(tag))
    }

    /// The views that depend on the relations in `victims` (of kind
    /// `what`) and are not among them. Without `cascade` any is
    /// PostgreSQL's 2BP01; with it they go too, after a NOTICE.
    fn views_depending_on(
        &mut self,
        what: &str,
        victims: &[(u32, String)],
        cascade: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<Vec<(u32, String)>> {
        let catalog = self.catalog()?;
        let mut lines = Vec::new();
        let mut more = Vec::new();
        for (oid, name) in victims {
            for (view, on) in super::view_text::dependent_views(&catalog, *oid) {
                if victims.iter().any(|(v, _)| *v == view.oid)
                    || more.iter().any(|(v, _)| *v == view.oid)
                {
                    continue;
                }
                let target = if on == *oid {
                    format!("{what} {name}")
                } else {
                    let on_name = catalog.table_by_oid(on).map_or("", |t| t.name.as_str());
                    format!("view {on_name}")
                };
                lines.push((view.name.clone(), target));
                more.push((view.oid, view.name.clone()));
            }
            if !cascade && !lines.is_empty() {
                let detail: Vec<String> = lines
                    .iter()
                    .map(|(v, target)| format!("view {v} depends on {target}"))
                    .collect();
                return Err(SqlError::coded(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop {what} {name} because other objects depend on it"),
                )
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
        }
        let dropped: Vec<String> = lines.iter().map(|(v, _)| format!("view {v}")).collect();
        if let Some(n) = cascade_notice(&dropped) {
            sink(QueryResult::Notice(n));
        }
        Ok(more)
    }
}

/// PostgreSQL's NOTICE for the objects a `DROP ... CASCADE` drops beside
/// the object named (each described as `view v`, `default value for column
/// c of table t`): the one object, or a count with every one in DETAIL.
pub(crate) fn cascade_notice(objects: &[String]) -> Option<Notice> {
    let (message, detail) = match objects {
        [] => return None,
        [o] => (format!("drop cascades to {o}"), None),
        many => (
            format!("drop cascades to {} other objects", many.len()),
            Some(
                many.iter()
                    .map(|o| format!("drop cascades to {o}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        ),
    };
    Some(Notice {
        level: "NOTICE",
        message,
        detail,
    })
}
