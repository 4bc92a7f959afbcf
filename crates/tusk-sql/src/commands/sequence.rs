//! `CREATE SEQUENCE` and the sequences behind `serial` columns
//! (PostgreSQL 15's `sequence.c` `init_params` and `parse_utilcmd.c`'s
//! serial handling).
//!
//! A sequence's parameters default from its type and the sign of its
//! increment: ascending sequences run from 1 to the type's maximum,
//! descending ones from -1 down to the type's minimum, and start at the
//! bound they move away from. The checks and their messages are
//! PostgreSQL's (all 22023).
//!
//! A `serial` column (`smallserial`, `serial`, `bigserial` and their
//! `serial2/4/8` spellings) is rewritten before the table is bound, as
//! PostgreSQL does: a sequence `table_column_seq` of the column's integer
//! type is created, the column becomes that integer type, `NOT NULL`,
//! with `DEFAULT nextval('table_column_seq'::regclass)`, and once the
//! table exists the sequence is marked `OWNED BY` the column, so dropping
//! the table drops it.

use crate::bind::is_default_keyword;
use crate::error::{sqlstate, SqlError};
use crate::names::{ident, user_relation_name};
use crate::parse::{AlterSequence, AlterSequenceAction};
use crate::session::{Notice, QueryResult, Result, Session};
use crate::types::sql_type;
use sqlparser::ast as A;
use tusk_storage::sequence::{Identity, SequenceDef};
use tusk_storage::{Catalog, DataType, LockMode, TableDef};

/// SQLSTATE 428C9 (`generated_always`).
const GENERATED_ALWAYS: &str = "428C9";

/// A sequence CREATE TABLE made for a serial column: its oid and the
/// column's number.
pub(super) type SerialSequence = (u32, usize);

fn invalid(message: String) -> SqlError {
    SqlError::coded(sqlstate::INVALID_PARAMETER_VALUE, message)
}

/// The bounds of a sequence type.
fn type_range(ty: DataType) -> (i64, i64) {
    match ty {
        DataType::Int2 => (i16::MIN.into(), i16::MAX.into()),
        DataType::Int4 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

fn type_sql_name(ty: DataType) -> &'static str {
    match ty {
        DataType::Int2 => "smallint",
        DataType::Int4 => "integer",
        _ => "bigint",
    }
}

/// The integer value of an option (`INCREMENT BY -2`, `START 10`).
fn option_value(what: &str, e: &A::Expr) -> Result<i64> {
    let (negative, e) = match e {
        A::Expr::UnaryOp {
            op: A::UnaryOperator::Minus,
            expr,
        } => (true, expr.as_ref()),
        A::Expr::UnaryOp {
            op: A::UnaryOperator::Plus,
            expr,
        } => (false, expr.as_ref()),
        e => (false, e),
    };
    let text = match e {
        A::Expr::Value(v) => match &v.value {
            A::Value::Number(n, _) => n.clone(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    let text = if negative { format!("-{text}") } else { text };
    text.parse::<i64>().map_err(|_| {
        SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("{what} requires an integer value"),
        )
    })
}

/// The sequence type of `AS type` (bigint without one).
fn sequence_type(ty: Option<&A::DataType>) -> Result<DataType> {
    let Some(ty) = ty else {
        return Ok(DataType::Int8);
    };
    match sql_type(ty)?.data_type() {
        t @ (DataType::Int2 | DataType::Int4 | DataType::Int8) => Ok(t),
        _ => Err(invalid(
            "sequence type must be smallint, integer, or bigint".into(),
        )),
    }
}

/// A sequence definition from CREATE SEQUENCE's type and options, checked
/// as PostgreSQL's `init_params` checks it.
pub(super) fn sequence_def(
    ty: Option<&A::DataType>,
    options: &[A::SequenceOptions],
) -> Result<SequenceDef> {
    apply_options(None, ty, options)
}

/// The options of CREATE SEQUENCE (`base` None: every option not given
/// takes its default) or ALTER SEQUENCE (`base`: the definition they
/// change; a bound at the old type's limit follows a new `AS` type), checked.
fn apply_options(
    base: Option<&SequenceDef>,
    ty: Option<&A::DataType>,
    options: &[A::SequenceOptions],
) -> Result<SequenceDef> {
    let old_ty = base.map(|b| b.ty);
    let ty = match (ty, old_ty) {
        (None, Some(t)) => t,
        (ty, _) => sequence_type(ty)?,
    };
    let (mut increment, mut min, mut max, mut start, mut cache, mut cycle) =
        (None, None, None, None, None, None);
    let conflicting =
        || SqlError::coded(sqlstate::SYNTAX_ERROR, "conflicting or redundant options");
    fn set<T>(slot: &mut Option<T>, v: T, err: impl Fn() -> SqlError) -> Result<()> {
        if slot.replace(v).is_some() {
            return Err(err());
        }
        Ok(())
    }
    for o in options {
        match o {
            A::SequenceOptions::IncrementBy(e, _) => {
                set(&mut increment, option_value("INCREMENT", e)?, conflicting)?
            }
            A::SequenceOptions::MinValue(e) => set(
                &mut min,
                e.as_ref()
                    .map(|e| option_value("MINVALUE", e))
                    .transpose()?,
                conflicting,
            )?,
            A::SequenceOptions::MaxValue(e) => set(
                &mut max,
                e.as_ref()
                    .map(|e| option_value("MAXVALUE", e))
                    .transpose()?,
                conflicting,
            )?,
            A::SequenceOptions::StartWith(e, _) => {
                set(&mut start, option_value("START", e)?, conflicting)?
            }
            A::SequenceOptions::Cache(e) => {
                set(&mut cache, option_value("CACHE", e)?, conflicting)?
            }
            A::SequenceOptions::Cycle(no) => set(&mut cycle, !no, conflicting)?,
        }
    }
    let increment = increment.or(base.map(|b| b.increment)).unwrap_or(1);
    if increment == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let (lo, hi) = type_range(ty);
    // A bound left at the old type's limit moves with the type.
    let (old_lo, old_hi) = old_ty.map_or((lo, hi), type_range);
    let max = match max {
        Some(Some(m)) => m,
        Some(None) => default_max(increment, hi),
        None => match base {
            Some(b) if b.max != old_hi => b.max,
            _ => default_max(increment, hi),
        },
    };
    let min = match min {
        Some(Some(m)) => m,
        Some(None) => default_min(increment, lo),
        None => match base {
            Some(b) if b.min != old_lo => b.min,
            _ => default_min(increment, lo),
        },
    };
    let name = type_sql_name(ty);
    if !(lo..=hi).contains(&max) {
        return Err(invalid(format!(
            "MAXVALUE ({max}) is out of range for sequence data type {name}"
        )));
    }
    if !(lo..=hi).contains(&min) {
        return Err(invalid(format!(
            "MINVALUE ({min}) is out of range for sequence data type {name}"
        )));
    }
    if min >= max {
        return Err(invalid(format!(
            "MINVALUE ({min}) must be less than MAXVALUE ({max})"
        )));
    }
    let start = start
        .or(base.map(|b| b.start))
        .unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(invalid(format!(
            "START value ({start}) cannot be less than MINVALUE ({min})"
        )));
    }
    if start > max {
        return Err(invalid(format!(
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        )));
    }
    let cache = cache.or(base.map(|b| b.cache)).unwrap_or(1);
    if cache <= 0 {
        return Err(invalid(format!(
            "CACHE ({cache}) must be greater than zero"
        )));
    }
    Ok(SequenceDef {
        ty,
        start,
        increment,
        min,
        max,
        cache,
        cycle: cycle.or(base.map(|b| b.cycle)).unwrap_or(false),
        owned_by: base.and_then(|b| b.owned_by),
        identity: base.and_then(|b| b.identity),
    })
}

fn default_max(increment: i64, type_max: i64) -> i64 {
    if increment > 0 {
        type_max
    } else {
        -1
    }
}

fn default_min(increment: i64, type_min: i64) -> i64 {
    if increment > 0 {
        1
    } else {
        type_min
    }
}

/// The integer type of a `serial` type name, if it is one.
pub(super) fn serial_type(ty: &A::DataType) -> Option<A::DataType> {
    let A::DataType::Custom(name, mods) = ty else {
        return None;
    };
    if !mods.is_empty() || name.0.len() != 1 {
        return None;
    }
    let n = name.0[0].as_ident()?.value.to_ascii_lowercase();
    Some(match n.as_str() {
        "smallserial" | "serial2" => A::DataType::SmallInt(None),
        "serial" | "serial4" => A::DataType::Integer(None),
        "bigserial" | "serial8" => A::DataType::BigInt(None),
        _ => return None,
    })
}

/// A column's `GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY [(options)]`,
/// checked: its kind and sequence options.
fn identity_option(
    c: &A::ColumnDef,
    table: &str,
    column: &str,
) -> Result<Option<(Identity, Vec<A::SequenceOptions>)>> {
    let mut found = None;
    for o in &c.options {
        let A::ColumnOption::Generated {
            generated_as,
            sequence_options,
            generation_expr: None,
            ..
        } = &o.option
        else {
            continue;
        };
        let identity = match generated_as {
            A::GeneratedAs::Always => Identity::Always,
            A::GeneratedAs::ByDefault => Identity::ByDefault,
            A::GeneratedAs::ExpStored => continue,
        };
        if found.is_some() {
            return Err(SqlError::coded(
                sqlstate::SYNTAX_ERROR,
                format!(
                    "multiple identity specifications for column \"{column}\" of table \"{table}\""
                ),
            ));
        }
        found = Some((identity, sequence_options.clone().unwrap_or_default()));
    }
    if found.is_some()
        && !matches!(
            sql_type(&c.data_type)?.data_type(),
            DataType::Int2 | DataType::Int4 | DataType::Int8
        )
    {
        return Err(invalid(
            "identity column type must be smallint, integer, or bigint".into(),
        ));
    }
    Ok(found)
}

impl Session {
    /// `CREATE SEQUENCE [IF NOT EXISTS] name [AS type] [options] [OWNED BY
    /// table.column | NONE]`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create_sequence(
        &mut self,
        temporary: bool,
        if_not_exists: bool,
        name: &A::ObjectName,
        data_type: Option<&A::DataType>,
        options: &[A::SequenceOptions],
        owned_by: Option<&A::ObjectName>,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        if temporary {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "only permanent sequences are supported",
            ));
        }
        self.check_writable("CREATE SEQUENCE")?;
        let name = user_relation_name(name)?;
        super::ddl::check_name(&name, "sequence")?;
        let mut seq = sequence_def(data_type, options)?;
        if self.catalog()?.relation_exists(&name) {
            if if_not_exists {
                sink(QueryResult::Notice(Notice {
                    level: "NOTICE",
                    message: format!("relation \"{name}\" already exists, skipping"),
                    detail: None,
                }));
                return Ok(command("CREATE SEQUENCE"));
            }
            return Err(SqlError::coded(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        if let Some(owner) = owned_by {
            seq.owned_by = self.sequence_owner(owner)?;
        }
        let mut def = TableDef::new(0, name, Vec::new());
        def.sequence = Some(seq);
        self.txn()?.create_relation(def)?;
        Ok(command("CREATE SEQUENCE"))
    }

    /// `ALTER SEQUENCE [IF EXISTS] s RENAME TO new | options [RESTART
    /// [[WITH] n]] [OWNED BY t.c | NONE]`. The definition changes with the
    /// transaction; a RESTART takes effect at once (PostgreSQL 15 makes it
    /// transactional too).
    pub(crate) fn alter_sequence(
        &mut self,
        a: &AlterSequence,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<QueryResult> {
        self.check_writable("ALTER SEQUENCE")?;
        let name = user_relation_name(&a.name)?;
        let Some(table) = self.catalog()?.table(&name).cloned() else {
            if a.if_exists {
                sink(QueryResult::Notice(Notice {
                    level: "NOTICE",
                    message: format!("relation \"{name}\" does not exist, skipping"),
                    detail: None,
                }));
                return Ok(command("ALTER SEQUENCE"));
            }
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            ));
        };
        let Some(seq) = table.sequence.clone() else {
            return Err(SqlError::coded(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{name}\" is not a sequence"),
            ));
        };
        self.lock_relation(table.oid, LockMode::AccessExclusive, &name)?;
        let mut def = table.clone();
        match &a.action {
            AlterSequenceAction::Rename(new) => {
                let new = ident(new)?;
                super::ddl::check_name(&new, "sequence")?;
                if self.catalog()?.relation_exists(&new) {
                    return Err(SqlError::coded(
                        sqlstate::DUPLICATE_TABLE,
                        format!("relation \"{new}\" already exists"),
                    ));
                }
                def.name = new;
                self.txn()?.alter_relation(def)?;
            }
            AlterSequenceAction::Options {
                data_type,
                options,
                restart,
                owned_by,
            } => {
                let mut new = apply_options(Some(&seq), data_type.as_ref(), options)?;
                if let Some(owner) = owned_by {
                    new.owned_by = self.sequence_owner(owner)?;
                }
                // The value the sequence goes on from must fit the bounds.
                let state = tusk_storage::sequence::read_state(&self.db.pool, table.oid)?;
                let value = match restart {
                    Some(v) => v.unwrap_or(new.start),
                    None => state.last_value,
                };
                if value < new.min {
                    return Err(invalid(format!(
                        "RESTART value ({value}) cannot be less than MINVALUE ({})",
                        new.min
                    )));
                }
                if value > new.max {
                    return Err(invalid(format!(
                        "RESTART value ({value}) cannot be greater than MAXVALUE ({})",
                        new.max
                    )));
                }
                if new != seq {
                    def.sequence = Some(new.clone());
                    self.txn()?.alter_relation(def)?;
                }
                if restart.is_some() {
                    let lsn = tusk_storage::sequence::set_value(
                        &self.db.pool,
                        table.oid,
                        &name,
                        &new,
                        value,
                        false,
                    )?;
                    self.db.wal.flush(lsn)?;
                }
            }
        }
        Ok(command("ALTER SEQUENCE"))
    }

    /// The column `OWNED BY table.column` names (`None` for `OWNED BY
    /// NONE`).
    fn sequence_owner(&mut self, owner: &A::ObjectName) -> Result<Option<(u32, usize)>> {
        let parts: Vec<String> = owner
            .0
            .iter()
            .map(|p| p.as_ident().map(ident).unwrap_or_else(|| Ok(p.to_string())))
            .collect::<Result<_>>()?;
        if parts.len() == 1 && parts[0] == "none" {
            return Ok(None);
        }
        let [table, column] = parts.as_slice() else {
            return Err(SqlError::coded(
                sqlstate::INVALID_PARAMETER_VALUE,
                "invalid OWNED BY option",
            )
            .with_hint("Specify OWNED BY table.column or OWNED BY NONE."));
        };
        let catalog = self.catalog()?;
        let Some(t) = catalog.table(table).filter(|t| !t.is_sequence()) else {
            return Err(SqlError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{table}\" does not exist"),
            ));
        };
        match t.columns.iter().position(|c| &c.name == column) {
            Some(attno) => Ok(Some((t.oid, attno))),
            None => Err(SqlError::coded(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{column}\" of relation \"{table}\" does not exist"),
            )),
        }
    }

    /// CREATE TABLE's serial and identity columns: creates each one's
    /// sequence and rewrites the column (see the module doc). Returns the
    /// columns and, for each sequence made, its oid and the column's
    /// number.
    pub(super) fn expand_serial_columns(
        &mut self,
        table: &str,
        columns: &[A::ColumnDef],
    ) -> Result<(Vec<A::ColumnDef>, Vec<SerialSequence>)> {
        let mut out = columns.to_vec();
        let mut made = Vec::new();
        for (attno, c) in out.iter_mut().enumerate() {
            let column = ident(&c.name)?;
            let (int_type, identity, options) = match serial_type(&c.data_type) {
                Some(int_type) => (int_type, None, Vec::new()),
                None => match identity_option(c, table, &column)? {
                    Some((identity, options)) => (c.data_type.clone(), Some(identity), options),
                    None => continue,
                },
            };
            let has_default = c
                .options
                .iter()
                .any(|o| matches!(o.option, A::ColumnOption::Default(_)));
            if has_default {
                let message = match identity {
                    None => format!(
                        "multiple default values specified for column \"{column}\" of table \"{table}\""
                    ),
                    Some(_) => format!(
                        "both default and identity specified for column \"{column}\" of table \"{table}\""
                    ),
                };
                return Err(SqlError::coded(sqlstate::SYNTAX_ERROR, message));
            }
            let mut seq = sequence_def(Some(&int_type), &options)?;
            seq.identity = identity;
            let catalog = self.catalog()?;
            let seq_name = super::index::choose_name(
                |n| catalog.relation_exists(n),
                table,
                Some(&column),
                "seq",
            );
            let mut def = TableDef::new(0, seq_name.clone(), Vec::new());
            def.sequence = Some(seq);
            let created = self.txn()?.create_relation(def)?;
            made.push((created.oid, attno));
            let default = format!("nextval('{}'::regclass)", seq_name.replace('\'', "''"));
            let expr = crate::bind::parse_expr(&default)?;
            c.data_type = int_type;
            c.options
                .retain(|o| !matches!(o.option, A::ColumnOption::Generated { .. }));
            c.options.push(A::ColumnOptionDef {
                name: None,
                option: A::ColumnOption::NotNull,
            });
            c.options.push(A::ColumnOptionDef {
                name: None,
                option: A::ColumnOption::Default(expr),
            });
        }
        Ok((out, made))
    }

    /// Marks the sequences [`expand_serial_columns`](Self::expand_serial_columns)
    /// made as owned by their columns of `table`.
    pub(super) fn own_serial_sequences(
        &mut self,
        table: u32,
        made: &[SerialSequence],
    ) -> Result<()> {
        for &(oid, attno) in made {
            let catalog = self.catalog()?;
            let mut def = catalog
                .table_by_oid(oid)
                .cloned()
                .expect("the sequence made above");
            if let Some(s) = def.sequence.as_mut() {
                s.owned_by = Some((table, attno));
            }
            self.txn()?.alter_relation(def)?;
        }
        Ok(())
    }

    /// After a table rewrite gave table `old` the oid `new` and moved its
    /// column `a` to `moved[a]`: the sequences its columns owned follow
    /// their columns, and those of dropped columns are dropped.
    pub(super) fn move_owned_sequences(
        &mut self,
        old: u32,
        new: u32,
        moved: &[Option<usize>],
    ) -> Result<()> {
        let owned: Vec<TableDef> = self
            .catalog()?
            .tables()
            .filter(|t| {
                t.sequence
                    .as_ref()
                    .is_some_and(|s| s.owned_by.is_some_and(|(o, _)| o == old))
            })
            .cloned()
            .collect();
        for mut def in owned {
            let seq = def.sequence.as_mut().expect("filtered");
            let (_, attno) = seq.owned_by.expect("filtered");
            match moved.get(attno).copied().flatten() {
                Some(to) => {
                    seq.owned_by = Some((new, to));
                    self.txn()?.alter_relation(def)?;
                }
                None => self.txn()?.drop_relation(def.oid, &def.name)?,
            }
        }
        Ok(())
    }

    /// DROP SEQUENCE: the column defaults that use a sequence among
    /// `victims` depend on it (2BP01), or with CASCADE are dropped.
    pub(super) fn drop_sequence_defaults(
        &mut self,
        victims: &[(u32, String)],
        cascade: bool,
        sink: &mut dyn FnMut(QueryResult),
    ) -> Result<()> {
        let mut dropped = Vec::new();
        for (oid, name) in victims {
            let catalog = self.catalog()?;
            let identity_of = catalog
                .table_by_oid(*oid)
                .and_then(|t| t.sequence.as_ref())
                .filter(|s| s.identity.is_some())
                .and_then(|s| s.owned_by)
                .and_then(|(t, c)| Some((catalog.table_by_oid(t)?, c)));
            if let Some((t, c)) = identity_of {
                let column = &t.columns[c].name;
                return Err(SqlError::coded(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop sequence {name} because column {column} of table {} requires it",
                        t.name
                    ),
                )
                .with_hint(format!(
                    "You can drop column {column} of table {} instead.",
                    t.name
                )));
            }
            let users = self.defaults_using_sequence(name)?;
            let lines: Vec<String> = users
                .iter()
                .map(|(t, c)| {
                    format!(
                        "default value for column {} of table {}",
                        t.columns[*c].name, t.name
                    )
                })
                .collect();
            if lines.is_empty() {
                continue;
            }
            if !cascade {
                let detail: Vec<String> = lines
                    .iter()
                    .map(|l| format!("{l} depends on sequence {name}"))
                    .collect();
                return Err(SqlError::coded(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop sequence {name} because other objects depend on it"),
                )
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            for (t, c) in users {
                let mut def = self
                    .catalog()?
                    .table_by_oid(t.oid)
                    .cloned()
                    .expect("listed");
                def.columns[c].default = None;
                self.txn()?.alter_relation(def)?;
            }
            dropped.extend(lines);
        }
        if let Some(n) = super::ddl::cascade_notice(&dropped) {
            sink(QueryResult::Notice(n));
        }
        Ok(())
    }

    /// The columns whose DEFAULT calls a sequence function on sequence
    /// `name` (PostgreSQL records that dependency for the `regclass`
    /// constant): `(table, column)` pairs.
    fn defaults_using_sequence(&mut self, name: &str) -> Result<Vec<(TableDef, usize)>> {
        let catalog = self.catalog()?;
        let mut out = Vec::new();
        for t in catalog.tables() {
            for (i, c) in t.columns.iter().enumerate() {
                let Some(text) = &c.default else { continue };
                let Ok(e) = crate::bind::parse_expr(text) else {
                    continue;
                };
                if names_sequence(&e, name) {
                    out.push((t.clone(), i));
                }
            }
        }
        Ok(out)
    }
}

/// Whether `e` calls `nextval`, `currval` or `setval` with the literal
/// name `name` (possibly cast to regclass).
fn names_sequence(e: &A::Expr, name: &str) -> bool {
    use std::ops::ControlFlow;
    let found = sqlparser::ast::visit_expressions(e, |x| {
        let A::Expr::Function(f) = x else {
            return ControlFlow::Continue(());
        };
        let fname = f.name.to_string().to_ascii_lowercase();
        if !matches!(fname.as_str(), "nextval" | "currval" | "setval") {
            return ControlFlow::Continue(());
        }
        let A::FunctionArguments::List(list) = &f.args else {
            return ControlFlow::Continue(());
        };
        let first = list.args.first().and_then(|a| match a {
            A::FunctionArg::Unnamed(A::FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        });
        let literal = match first {
            Some(A::Expr::Cast { expr, .. }) => expr.as_ref(),
            Some(e) => e,
            None => return ControlFlow::Continue(()),
        };
        match literal {
            A::Expr::Value(v) => match &v.value {
                A::Value::SingleQuotedString(s) if s == name => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            },
            _ => ControlFlow::Continue(()),
        }
    });
    found.is_break()
}

/// The columns of `table` that are `GENERATED ALWAYS AS IDENTITY`.
fn always_identity_columns(catalog: &Catalog, table: &TableDef) -> Vec<usize> {
    crate::catalog::identity_columns(catalog)
        .into_iter()
        .filter(|((owner, _), s)| *owner == table.oid && s.identity == Some(Identity::Always))
        .map(|((_, attno), _)| attno)
        .collect()
}

fn generated_always(message: String, column: &str) -> SqlError {
    SqlError::coded(GENERATED_ALWAYS, message).with_detail(format!(
        "Column \"{column}\" is an identity column defined as GENERATED ALWAYS."
    ))
}

/// INSERT into `targets` of `table` from `source`: a GENERATED ALWAYS
/// identity column takes no value but DEFAULT (428C9; tusk has no
/// `OVERRIDING SYSTEM VALUE` yet).
pub(super) fn check_identity_insert(
    catalog: &Catalog,
    table: &TableDef,
    targets: &[usize],
    source: &A::Query,
) -> Result<()> {
    let always = always_identity_columns(catalog, table);
    for (pos, &attno) in targets.iter().enumerate() {
        if !always.contains(&attno) {
            continue;
        }
        let all_default = match source.body.as_ref() {
            A::SetExpr::Values(v) => v
                .rows
                .iter()
                .all(|r| r.get(pos).is_none_or(is_default_keyword)),
            _ => false,
        };
        if !all_default {
            let column = &table.columns[attno].name;
            return Err(generated_always(
                format!("cannot insert a non-DEFAULT value into column \"{column}\""),
                column,
            )
            .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
        }
    }
    Ok(())
}

/// UPDATE's SET list: a GENERATED ALWAYS identity column may only be set
/// to DEFAULT (428C9).
pub(super) fn check_identity_update(
    catalog: &Catalog,
    table: &TableDef,
    assignments: &[A::Assignment],
) -> Result<()> {
    let always = always_identity_columns(catalog, table);
    if always.is_empty() {
        return Ok(());
    }
    for a in assignments {
        let names: Vec<&A::ObjectName> = match &a.target {
            A::AssignmentTarget::ColumnName(n) => vec![n],
            A::AssignmentTarget::Tuple(ns) => ns.iter().collect(),
        };
        let values: Vec<&A::Expr> = match (&a.value, names.len()) {
            (A::Expr::Tuple(vs), n) if n > 1 => vs.iter().collect(),
            (v, _) => vec![v; names.len()],
        };
        for (n, v) in names.iter().zip(values) {
            let Ok(q) = crate::names::object_name(n) else {
                continue;
            };
            let hit = table
                .columns
                .iter()
                .position(|c| c.name == q.name)
                .is_some_and(|i| always.contains(&i));
            if hit && !is_default_keyword(v) {
                return Err(generated_always(
                    format!("column \"{}\" can only be updated to DEFAULT", q.name),
                    &q.name,
                ));
            }
        }
    }
    Ok(())
}

fn command(tag: &str) -> QueryResult {
    QueryResult::Command { tag: tag.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(sql: &str) -> Result<SequenceDef> {
        let stmts = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::PostgreSqlDialect {},
            &format!("CREATE SEQUENCE s {sql}"),
        )
        .unwrap();
        let A::Statement::CreateSequence {
            data_type,
            sequence_options,
            ..
        } = &stmts[0]
        else {
            panic!("not a sequence")
        };
        sequence_def(data_type.as_ref(), sequence_options)
    }

    #[test]
    fn defaults_follow_the_type_and_direction() {
        let s = options("").unwrap();
        assert_eq!((s.min, s.max, s.start, s.increment), (1, i64::MAX, 1, 1));
        let s = options("AS integer INCREMENT BY -2").unwrap();
        assert_eq!((s.min, s.max, s.start), (i32::MIN.into(), -1, -1));
        let s = options("AS smallint START 5 CYCLE").unwrap();
        assert_eq!((s.max, s.start, s.cycle), (32767, 5, true));
    }

    #[test]
    fn bad_parameters_are_refused_with_postgres_messages() {
        let err = |sql: &str| options(sql).unwrap_err().to_string();
        assert_eq!(err("INCREMENT 0"), "INCREMENT must not be zero");
        assert_eq!(
            err("AS smallint MAXVALUE 40000"),
            "MAXVALUE (40000) is out of range for sequence data type smallint"
        );
        assert_eq!(
            err("MINVALUE 10 MAXVALUE 5"),
            "MINVALUE (10) must be less than MAXVALUE (5)"
        );
        assert_eq!(
            err("START 0"),
            "START value (0) cannot be less than MINVALUE (1)"
        );
        assert_eq!(err("CACHE 0"), "CACHE (0) must be greater than zero");
        assert_eq!(
            err("AS text"),
            "sequence type must be smallint, integer, or bigint"
        );
    }
}
