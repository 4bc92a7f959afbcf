//! [`SessionInfo`]: what a session shows of itself to the executor — its
//! settings, user, database and catalog — for the session-dependent
//! functions and types (tusk-exec's `SessionState`) and the system
//! relations that describe the session (`pg_settings`, `pg_cursors`, ...).
//!
//! The session owns one and installs it in its executor environment; it
//! keeps copies up to date: the settings whenever they change (`SET`,
//! `set_config`, a rollback), the catalog whenever the session looks at
//! its transaction's catalog, the cursors as they are declared and closed.
//! A statement reads them while it runs, possibly on a worker thread, so
//! everything is behind locks (uncontended: one session writes).
//!
//! `set_config(name, value, is_local)` changes settings from inside a
//! query: the change is checked and applied to the copy at once (so the
//! rest of the statement sees it) and queued; the session applies the
//! queue to its real settings after the statement
//! ([`SessionInfo::take_setting_changes`]), with SET or SET LOCAL's rules.

use super::deparse;
use super::oids::*;
use super::procs;
use super::relations;
use super::session_rows;
use crate::commands::role::RoleStore;
use crate::guc::Gucs;
use std::sync::{Arc, Mutex, RwLock};
use tusk_exec::error::{sqlstate, ExecError};
use tusk_exec::func::Func;
use tusk_exec::session::SessionState;
use tusk_exec::{Result, Value};
use tusk_storage::{Catalog, DataType, Database, TableDef};

/// One session as `pg_stat_activity` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionActivity {
    pub pid: i32,
    pub user: String,
    pub application_name: String,
    pub client_addr: Option<String>,
    pub client_port: Option<i32>,
    /// `timestamptz` values (microseconds since 2000-01-01 UTC).
    pub backend_start: i64,
    pub xact_start: Option<i64>,
    pub query_start: Option<i64>,
    pub state_change: Option<i64>,
    /// `active`, `idle`, `idle in transaction`, `idle in transaction
    /// (aborted)`.
    pub state: String,
    /// The running (or last) query.
    pub query: String,
}

/// Where `pg_stat_activity` comes from: the server's session registry.
pub trait ActivitySource: Send + Sync {
    fn sessions(&self) -> Vec<SessionActivity>;
}

/// A cursor as `pg_cursors` shows it.
#[derive(Debug, Clone)]
pub(crate) struct CursorRow {
    pub name: String,
    pub statement: String,
    pub holdable: bool,
    pub binary: bool,
    pub scrollable: bool,
    pub created: i64,
}

/// A statement SQL's PREPARE made, as `pg_prepared_statements` shows it.
#[derive(Debug, Clone)]
pub(crate) struct PreparedRow {
    pub name: String,
    pub statement: String,
    pub prepared: i64,
    pub param_types: Vec<tusk_storage::DataType>,
    /// Times EXECUTE ran it (with tusk's one generic plan).
    pub executions: i64,
}

/// A `set_config` call waiting to be applied to the session's settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SettingChange {
    pub name: String,
    /// `None`: back to the default.
    pub value: Option<String>,
    pub local: bool,
}

/// The session's side of the executor's session questions (module doc).
pub struct SessionInfo {
    db: Arc<Database>,
    database: RwLock<String>,
    pid: std::sync::atomic::AtomicI32,
    settings: Mutex<Gucs>,
    catalog: Mutex<Arc<Catalog>>,
    roles: RwLock<Option<Arc<dyn RoleStore>>>,
    activity: RwLock<Option<Arc<dyn ActivitySource>>>,
    /// The query of the running statement (without a server's registry).
    query: Mutex<String>,
    cursors: Mutex<Vec<CursorRow>>,
    prepared: Mutex<Vec<PreparedRow>>,
    pending: Mutex<Vec<SettingChange>>,
    backend_start: i64,
    /// `currval` / `lastval` memory (see `sequence_calls`).
    sequences: Mutex<super::sequence_calls::SessionSequences>,
}

impl std::fmt::Debug for SessionInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionInfo")
            .field("database", &self.database_name())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// When this process started (`pg_postmaster_start_time`).
fn process_start() -> i64 {
    static START: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *START.get_or_init(tusk_exec::func::datetime::clock_now)
}

impl SessionInfo {
    pub(crate) fn new(db: Arc<Database>, settings: Gucs, pid: i32) -> SessionInfo {
        process_start();
        let catalog = db.catalog_snapshot();
        SessionInfo {
            db,
            database: RwLock::new("tusk".into()),
            pid: pid.into(),
            settings: Mutex::new(settings),
            catalog: Mutex::new(catalog),
            roles: RwLock::new(None),
            activity: RwLock::new(None),
            query: Mutex::new(String::new()),
            cursors: Mutex::new(Vec::new()),
            prepared: Mutex::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
            backend_start: tusk_exec::func::datetime::clock_now(),
            sequences: Mutex::default(),
        }
    }

    pub(super) fn sequence_memory(
        &self,
    ) -> std::sync::MutexGuard<'_, super::sequence_calls::SessionSequences> {
        lock(&self.sequences)
    }

    /// The session info of the running statement, if any.
    pub fn current() -> Option<Arc<SessionInfo>> {
        tusk_exec::session::current()?
            .as_any()
            .downcast::<SessionInfo>()
            .ok()
    }

    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    pub fn database_name(&self) -> String {
        self.database
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn set_database_name(&self, name: &str) {
        *self.database.write().unwrap_or_else(|e| e.into_inner()) = name.to_string();
    }

    pub(crate) fn set_pid(&self, pid: i32) {
        self.pid.store(pid, std::sync::atomic::Ordering::Relaxed);
    }

    fn pid(&self) -> i32 {
        self.pid.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A copy of the session's settings.
    pub(crate) fn settings(&self) -> Gucs {
        lock(&self.settings).clone()
    }

    pub(crate) fn set_settings(&self, g: &Gucs) {
        *lock(&self.settings) = g.clone();
    }

    fn setting(&self, name: &str) -> String {
        lock(&self.settings).show(name).unwrap_or_default()
    }

    pub(crate) fn set_catalog(&self, c: &Arc<Catalog>) {
        let mut cur = lock(&self.catalog);
        if !Arc::ptr_eq(&cur, c) {
            *cur = c.clone();
        }
    }

    pub(super) fn catalog(&self) -> Arc<Catalog> {
        lock(&self.catalog).clone()
    }

    pub(crate) fn role_store(&self) -> Option<Arc<dyn RoleStore>> {
        self.roles.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_role_store(&self, r: Arc<dyn RoleStore>) {
        *self.roles.write().unwrap_or_else(|e| e.into_inner()) = Some(r);
    }

    pub(crate) fn set_activity_source(&self, a: Arc<dyn ActivitySource>) {
        *self.activity.write().unwrap_or_else(|e| e.into_inner()) = Some(a);
    }

    /// The query string the running statement came in.
    pub(crate) fn query(&self) -> String {
        lock(&self.query).clone()
    }

    pub(crate) fn set_query(&self, q: &str) {
        let mut cur = lock(&self.query);
        cur.clear();
        cur.push_str(q);
    }

    /// `e` with its noted location turned into a position in the query
    /// string being run (see `SqlError::locate`).
    pub(crate) fn locate(&self, e: crate::error::SqlError) -> crate::error::SqlError {
        if !e.has_location() {
            return e;
        }
        e.locate(&lock(&self.query))
    }

    /// The sessions `pg_stat_activity` lists: the server's, or this one.
    pub(crate) fn activity(&self) -> Vec<SessionActivity> {
        let source = self
            .activity
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match source {
            Some(s) => s.sessions(),
            None => vec![SessionActivity {
                pid: self.pid(),
                user: self.setting("session_authorization"),
                application_name: self.setting("application_name"),
                client_addr: None,
                client_port: None,
                backend_start: self.backend_start,
                xact_start: None,
                query_start: None,
                state_change: None,
                state: "active".into(),
                query: lock(&self.query).clone(),
            }],
        }
    }

    pub(crate) fn cursors(&self) -> Vec<CursorRow> {
        lock(&self.cursors).clone()
    }

    pub(crate) fn set_cursors(&self, rows: Vec<CursorRow>) {
        *lock(&self.cursors) = rows;
    }

    pub(crate) fn prepared(&self) -> Vec<PreparedRow> {
        lock(&self.prepared).clone()
    }

    pub(crate) fn set_prepared(&self, rows: Vec<PreparedRow>) {
        *lock(&self.prepared) = rows;
    }

    /// The `set_config` calls since the last look, to apply.
    pub(crate) fn take_setting_changes(&self) -> Vec<SettingChange> {
        std::mem::take(&mut *lock(&self.pending))
    }

    /// The schemas of `search_path` that exist, in order, and whether the
    /// path names `pg_catalog` itself (else it is searched first).
    fn search_path(&self) -> (Vec<&'static str>, bool) {
        let path = self.setting("search_path");
        let user = self.setting("session_authorization");
        let mut out = Vec::new();
        let mut explicit_catalog = false;
        for item in path.split(',') {
            let item = item.trim();
            let name = match item.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                Some(q) => q.replace("\"\"", "\""),
                None => item.to_ascii_lowercase(),
            };
            let name = if name == "$user" { user.clone() } else { name };
            if let Some(&(_, n, _)) = NAMESPACES.iter().find(|ns| ns.1 == name) {
                explicit_catalog |= n == "pg_catalog";
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        (out, explicit_catalog)
    }

    /// Whether relations of namespace `ns` are found without qualification.
    fn namespace_visible(&self, ns: u32) -> bool {
        let (path, _) = self.search_path();
        ns == PG_CATALOG_NAMESPACE || path.iter().any(|n| namespace_oid(n) == Some(ns))
    }

    /// A relation by oid: its name and namespace.
    fn relation(&self, catalog: &Catalog, oid: u32) -> Option<(String, u32)> {
        if let Some(t) = catalog.table_by_oid(oid) {
            return Some((t.name.clone(), PUBLIC_NAMESPACE));
        }
        if let Some(i) = catalog.index_by_oid(oid) {
            return Some((i.name.clone(), PUBLIC_NAMESPACE));
        }
        super::all_relations()
            .iter()
            .find(|d| d.oid == oid)
            .map(|d| (d.name.to_string(), d.schema.oid()))
    }

    /// The oid of relation `name` (possibly qualified), as `regclass`
    /// reads it.
    fn relation_oid(&self, catalog: &Catalog, text: &str) -> Result<u32> {
        let parts = qualified_name(text)?;
        let missing = || {
            ExecError::coded(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{text}\" does not exist"),
            )
        };
        let (schema, name) = match parts.as_slice() {
            [n] => (None, n.as_str()),
            [s, n] => (Some(s.as_str()), n.as_str()),
            [_, s, n] => (Some(s.as_str()), n.as_str()),
            _ => return Err(missing()),
        };
        let user = |n: &str| {
            catalog
                .table(n)
                .map(|t| t.oid)
                .or_else(|| catalog.index(n).map(|i| i.oid))
        };
        let system = |s: Option<&str>, n: &str| super::lookup(s, n).map(|d| d.oid);
        let found = match schema {
            Some("public") => user(name),
            Some(s) if super::is_system_schema(s) => system(Some(s), name),
            Some(_) => None,
            None => {
                let (path, explicit) = self.search_path();
                let mut found = if explicit { None } else { system(None, name) };
                for s in path {
                    if found.is_some() {
                        break;
                    }
                    found = match s {
                        "public" => user(name),
                        s => system(Some(s), name),
                    };
                }
                found
            }
        };
        found.ok_or_else(missing)
    }

    /// A table or view by oid.
    fn table(catalog: &Catalog, oid: u32) -> Option<&TableDef> {
        catalog.table_by_oid(oid)
    }

    /// `pg_get_constraintdef`.
    fn constraint_definition(&self, catalog: &Catalog, oid: u32, pretty: bool) -> Option<String> {
        let c = relations::constraints(catalog)
            .into_iter()
            .find(|c| c.oid == oid)?;
        Some(match (c.check, c.index) {
            (Some(expr), _) => deparse::check_definition(catalog, c.table, expr, pretty),
            (None, Some(i)) => deparse::key_definition(c.table, i),
            (None, None) => return None,
        })
    }
}

/// A possibly qualified name as PostgreSQL's `stringToQualifiedNameList`
/// reads it: dot-separated, double quotes keep case and dots, unquoted
/// parts fold to lower case.
fn qualified_name(text: &str) -> Result<Vec<String>> {
    let invalid = || ExecError::coded(sqlstate::INVALID_NAME, "invalid name syntax".to_string());
    let mut parts = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    Some('"') => break,
                    Some(c) => part.push(c),
                    None => return Err(invalid()),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c.is_whitespace() {
                    break;
                }
                part.push(c.to_ascii_lowercase());
                chars.next();
            }
        }
        if part.is_empty() {
            return Err(invalid());
        }
        parts.push(crate::names::truncate(&part));
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Ok(parts),
            Some('.') => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            Some(_) => return Err(invalid()),
        }
    }
}

fn arg_oid(v: &Value) -> Option<u32> {
    match v {
        Value::Oid { oid, .. } => Some(*oid),
        _ => None,
    }
}

fn arg_text(v: &Value) -> Option<&str> {
    match v {
        Value::Text(s) => Some(s),
        _ => None,
    }
}

fn arg_bool(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(true)))
}

fn text(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

fn opt_text(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::Text)
}

/// Checks a privilege list (`has_table_privilege(t, 'SELECT, INSERT')`).
fn check_privileges(list: &str, known: &[&str]) -> Result<()> {
    for p in list.split(',') {
        let p = p.trim().to_ascii_lowercase();
        let p = p.strip_suffix(" with grant option").unwrap_or(&p).trim();
        if !known.contains(&p) {
            return Err(ExecError::coded(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("unrecognized privilege type: \"{p}\""),
            ));
        }
    }
    Ok(())
}

const TABLE_PRIVILEGES: &[&str] = &[
    "select",
    "insert",
    "update",
    "delete",
    "truncate",
    "references",
    "trigger",
];

impl SessionState for SessionInfo {
    fn as_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }

    fn call(&self, func: Func, args: &[Value], ty: DataType) -> Result<Value> {
        let catalog = self.catalog();
        let info = Some(self);
        Ok(match func {
            Func::Version => text(format!(
                "PostgreSQL {} on {}-unknown-linux-gnu, compiled by rustc, 64-bit",
                crate::guc::SERVER_VERSION,
                std::env::consts::ARCH
            )),
            Func::CurrentDatabase => text(self.database_name()),
            Func::CurrentSchema => {
                let (path, _) = self.search_path();
                path.first().map_or(Value::Null, |s| text(*s))
            }
            Func::CurrentSchemas => {
                let (path, explicit) = self.search_path();
                let mut names: Vec<&str> = Vec::new();
                if arg_bool(args.first()) && !explicit {
                    names.push("pg_catalog");
                }
                names.extend(path);
                Value::Array(Box::new(tusk_exec::array::ArrayValue::new(
                    ty,
                    names.into_iter().map(text).collect(),
                )))
            }
            Func::CurrentUser | Func::SessionUser => text(self.setting("session_authorization")),
            Func::PgBackendPid => Value::Int4(self.pid()),
            Func::PgPostmasterStartTime => Value::TimestampTz(process_start()),
            Func::PgIsInRecovery => Value::Bool(false),
            Func::CurrentSetting => {
                let name = arg_text(&args[0]).unwrap_or_default();
                match lock(&self.settings).show(name) {
                    Ok(v) => text(v),
                    Err(_) if arg_bool(args.get(1)) => Value::Null,
                    Err(e) => return Err(setting_error(e)),
                }
            }
            Func::SetConfig => {
                let Some(name) = arg_text(&args[0]) else {
                    return Err(ExecError::coded(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        "SET requires parameter name",
                    ));
                };
                let value = arg_text(&args[1]).map(str::to_string);
                let local = arg_bool(args.get(2));
                let shown = {
                    let mut g = lock(&self.settings);
                    match &value {
                        Some(v) => g.set(name, v),
                        None => g.reset(name),
                    }
                    .map_err(setting_error)?;
                    g.show(name).map_err(setting_error)?
                };
                lock(&self.pending).push(SettingChange {
                    name: name.to_string(),
                    value,
                    local,
                });
                text(shown)
            }
            Func::HasTablePrivilege => {
                let (object, privilege) = match args {
                    [o, p] | [_, o, p] => (o, p),
                    _ => return Ok(Value::Null),
                };
                check_privileges(arg_text(privilege).unwrap_or_default(), TABLE_PRIVILEGES)?;
                match object {
                    Value::Text(name) => {
                        self.relation_oid(&catalog, name)?;
                        Value::Bool(true)
                    }
                    v => match arg_oid(v) {
                        Some(o) if self.relation(&catalog, o).is_some() => Value::Bool(true),
                        _ => Value::Null,
                    },
                }
            }
            Func::HasSchemaPrivilege => {
                let (schema, privilege) = match args {
                    [s, p] | [_, s, p] => (s, p),
                    _ => return Ok(Value::Null),
                };
                check_privileges(
                    arg_text(privilege).unwrap_or_default(),
                    &["create", "usage"],
                )?;
                let s = arg_text(schema).unwrap_or_default();
                if namespace_oid(s).is_none() {
                    return Err(ExecError::coded(
                        "3F000",
                        format!("schema \"{s}\" does not exist"),
                    ));
                }
                Value::Bool(true)
            }
            Func::HasDatabasePrivilege => {
                let (db, privilege) = match args {
                    [d, p] | [_, d, p] => (d, p),
                    _ => return Ok(Value::Null),
                };
                check_privileges(
                    arg_text(privilege).unwrap_or_default(),
                    &["create", "connect", "temporary", "temp"],
                )?;
                let d = arg_text(db).unwrap_or_default();
                if d != self.database_name() {
                    return Err(ExecError::coded(
                        "3D000",
                        format!("database \"{d}\" does not exist"),
                    ));
                }
                Value::Bool(true)
            }
            Func::PgHasRole => Value::Bool(true),
            Func::PgTableIsVisible => {
                match arg_oid(&args[0]).and_then(|o| self.relation(&catalog, o)) {
                    Some((_, ns)) => Value::Bool(self.namespace_visible(ns)),
                    None => Value::Null,
                }
            }
            Func::PgTypeIsVisible => match arg_oid(&args[0]).and_then(DataType::from_oid) {
                Some(_) => Value::Bool(true),
                None => Value::Null,
            },
            Func::PgFunctionIsVisible => match arg_oid(&args[0]).and_then(procs::proc_name) {
                Some(_) => Value::Bool(true),
                None => Value::Null,
            },
            Func::PgGetUserById => text(session_rows::role_name(
                info,
                arg_oid(&args[0]).unwrap_or(0),
            )),
            Func::PgGetIndexdef => {
                let Some(index) = arg_oid(&args[0]).and_then(|o| catalog.index_by_oid(o)) else {
                    return Ok(Value::Null);
                };
                let Some(table) = catalog.table_by_oid(index.table) else {
                    return Ok(Value::Null);
                };
                let column = match args.get(1) {
                    Some(Value::Int4(c)) if *c > 0 => Some(*c as usize),
                    _ => None,
                };
                text(deparse::index_definition(table, index, column))
            }
            Func::PgGetConstraintdef => opt_text(
                arg_oid(&args[0])
                    .and_then(|o| self.constraint_definition(&catalog, o, arg_bool(args.get(1)))),
            ),
            Func::PgGetExpr => {
                let Some(sql) = arg_text(&args[0]) else {
                    return Ok(Value::Null);
                };
                let table = arg_oid(&args[1]).and_then(|o| Self::table(&catalog, o));
                text(deparse::stored_expression(
                    &catalog,
                    table,
                    sql,
                    arg_bool(args.get(2)),
                ))
            }
            Func::PgGetViewdef => {
                let view = match &args[0] {
                    Value::Text(name) => {
                        let oid = self.relation_oid(&catalog, name)?;
                        catalog.table_by_oid(oid)
                    }
                    v => arg_oid(v).and_then(|o| catalog.table_by_oid(o)),
                };
                match view.filter(|v| v.is_view()) {
                    Some(v) => text(deparse::view_definition(v)),
                    None => Value::Null,
                }
            }
            Func::PgGetStatisticsobjdefColumns => Value::Null,
            Func::NextVal | Func::CurrVal | Func::SetVal | Func::LastVal => {
                return self.sequence_call(func, args)
            }
            Func::PgGetSerialSequence => {
                let table = arg_text(&args[0]).unwrap_or_default();
                let column = arg_text(&args[1]).unwrap_or_default();
                let oid = self.relation_oid(&catalog, table)?;
                let attno = catalog
                    .table_by_oid(oid)
                    .and_then(|t| t.columns.iter().position(|c| c.name == column));
                let Some(attno) = attno else {
                    return Err(ExecError::coded(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{column}\" of relation \"{table}\" does not exist"),
                    ));
                };
                // The sequence owned by the column (a serial's).
                catalog
                    .tables()
                    .find(|t| {
                        t.sequence
                            .as_ref()
                            .is_some_and(|s| s.owned_by == Some((oid, attno)))
                    })
                    .map_or(Value::Null, |t| {
                        text(format!("public.{}", crate::names::quote_ident(&t.name)))
                    })
            }
            Func::PgRelationIsPublishable => Value::Bool(
                arg_oid(&args[0])
                    .and_then(|o| catalog.table_by_oid(o))
                    .is_some_and(|t| !t.is_view()),
            ),
            Func::ObjDescription => Value::Null,
            Func::PgRelationSize
            | Func::PgTableSize
            | Func::PgIndexesSize
            | Func::PgTotalRelationSize => {
                let Some(oid) = arg_oid(&args[0]) else {
                    return Ok(Value::Null);
                };
                if let Some(fork) = args.get(1).and_then(arg_text) {
                    match fork {
                        "main" => {}
                        "fsm" | "vm" | "init" => return Ok(Value::Int8(0)),
                        other => {
                            return Err(ExecError::coded(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                "invalid fork name".to_string(),
                            )
                            .with_hint(format!(
                                "Valid fork names are \"main\", \"fsm\", \"vm\", and \"init\"; not \"{other}\"."
                            )))
                        }
                    }
                }
                self.relation_size(&catalog, func, oid)?
            }
            other => {
                return Err(ExecError::coded(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("function {}() is not supported", other.name()),
                ))
            }
        })
    }

    fn object_name(&self, ty: DataType, oid: u32) -> Option<String> {
        let info = Some(self);
        match ty {
            DataType::RegClass => {
                let catalog = self.catalog();
                let (name, ns) = self.relation(&catalog, oid)?;
                let quoted = crate::names::quote_ident(&name);
                Some(if self.namespace_visible(ns) {
                    quoted
                } else {
                    format!("{}.{quoted}", namespace_name(ns).unwrap_or("public"))
                })
            }
            DataType::RegType => DataType::from_oid(oid).map(|t| t.display_name().to_string()),
            DataType::RegProc => procs::proc_name(oid).map(str::to_string),
            DataType::RegNamespace => namespace_name(oid).map(str::to_string),
            DataType::RegRole => session_rows::roles(info)
                .into_iter()
                .find(|r| r.oid == oid)
                .map(|r| r.name),
            _ => None,
        }
    }

    fn object_oid(&self, ty: DataType, name: &str) -> Result<u32> {
        let info = Some(self);
        match ty {
            DataType::RegClass => self.relation_oid(&self.catalog(), name),
            DataType::RegType => crate::types::type_by_name(name)
                .map(|t| t.data_type().oid())
                .map_err(|e| ExecError::coded(e.code, e.message)),
            DataType::RegProc => {
                let parts = qualified_name(name)?;
                let base = parts.last().cloned().unwrap_or_default();
                match procs::proc_oids(&base).as_slice() {
                    [o] => Ok(*o),
                    [] => Err(ExecError::coded(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("function \"{name}\" does not exist"),
                    )),
                    _ => Err(ExecError::coded(
                        sqlstate::AMBIGUOUS_FUNCTION,
                        format!("more than one function named \"{name}\""),
                    )),
                }
            }
            DataType::RegNamespace => {
                let parts = qualified_name(name)?;
                parts
                    .first()
                    .and_then(|n| namespace_oid(n))
                    .filter(|_| parts.len() == 1)
                    .ok_or_else(|| {
                        ExecError::coded("3F000", format!("schema \"{name}\" does not exist"))
                    })
            }
            DataType::RegRole => {
                let parts = qualified_name(name)?;
                parts
                    .first()
                    .and_then(|n| session_rows::role_oid(info, n))
                    .filter(|_| parts.len() == 1)
                    .ok_or_else(|| {
                        ExecError::coded(
                            sqlstate::UNDEFINED_OBJECT,
                            format!("role \"{name}\" does not exist"),
                        )
                    })
            }
            other => Err(ExecError::new(format!(
                "{} is not a reg type",
                other.display_name()
            ))),
        }
    }
}

impl SessionInfo {
    /// `pg_relation_size` and friends, in bytes; NULL for no relation.
    fn relation_size(&self, catalog: &Catalog, func: Func, oid: u32) -> Result<Value> {
        let bytes = |rel: u32| -> Result<i64> {
            Ok(self
                .db
                .nblocks(rel)
                .map_err(|e| ExecError::new(e.to_string()))? as i64
                * 8192)
        };
        let table = catalog.table_by_oid(oid);
        let index = catalog.index_by_oid(oid);
        if table.is_none() && index.is_none() {
            return Ok(if super::all_relations().iter().any(|d| d.oid == oid) {
                Value::Int8(0)
            } else {
                Value::Null
            });
        }
        if table.is_some_and(|t| t.is_view()) {
            return Ok(Value::Int8(0));
        }
        let indexes = |t: u32| -> Result<i64> { catalog.indexes_of(t).map(|i| bytes(i.oid)).sum() };
        Ok(Value::Int8(match (func, table) {
            (Func::PgIndexesSize, Some(t)) => indexes(t.oid)?,
            (Func::PgIndexesSize, None) => 0,
            (Func::PgTotalRelationSize, Some(t)) => bytes(t.oid)? + indexes(t.oid)?,
            _ => bytes(oid)?,
        }))
    }
}

/// A settings error from the executor (current_setting, set_config).
fn setting_error(msg: String) -> ExecError {
    let e = crate::guc::error(msg);
    let mut x = ExecError::coded(e.code, e.message);
    if let Some(d) = e.detail {
        x = x.with_detail(d);
    }
    x
}
