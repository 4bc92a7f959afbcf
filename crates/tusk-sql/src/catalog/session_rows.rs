//! Rows of the relations that describe the server and the session rather
//! than relations: `pg_database`, the roles (`pg_authid`, `pg_roles`,
//! `pg_user`), `pg_settings`, `pg_stat_activity`, `pg_cursors`,
//! `pg_prepared_statements` (SQL's PREPARE; the protocol's statements are
//! the server's),
//! `pg_stat_user_tables` and `pg_proc`; and the relations tusk has no
//! objects for, which are empty.
//!
//! Roles: the bootstrap superuser `tusk` (oid 10), PostgreSQL's predefined
//! `pg_*` roles, and the roles of the server's role file (CREATE ROLE),
//! each with the attributes tusk gives every role (it can do everything).
//! `pg_stat_user_tables` has no scan counters (tusk does not count scans):
//! `seq_scan`, `seq_tup_read`, `idx_scan` and `idx_tup_fetch` are NULL.

use super::info::SessionInfo;
use super::oids::*;
use super::values::*;
use super::RelationDef;
use tusk_exec::{Result, Value};
use tusk_storage::Catalog;

/// A role as the role catalogs list it.
pub(crate) struct RoleRow {
    pub oid: u32,
    pub name: String,
    pub superuser: bool,
    pub login: bool,
}

/// Every role: the bootstrap superuser, the predefined ones, the file's.
pub(crate) fn roles(info: Option<&SessionInfo>) -> Vec<RoleRow> {
    let mut out = vec![RoleRow {
        oid: BOOTSTRAP_SUPERUSER,
        name: BOOTSTRAP_SUPERUSER_NAME.to_string(),
        superuser: true,
        login: true,
    }];
    out.extend(PREDEFINED_ROLES.iter().map(|&(oid, name)| RoleRow {
        oid,
        name: name.to_string(),
        superuser: false,
        login: false,
    }));
    if let Some(store) = info.and_then(|i| i.role_store()) {
        for r in store.list() {
            if r.name == BOOTSTRAP_SUPERUSER_NAME {
                continue;
            }
            out.push(RoleRow {
                oid: r.oid,
                name: r.name,
                superuser: false,
                login: r.login,
            });
        }
    }
    out
}

fn timestamptz(micros: Option<i64>) -> Value {
    micros.map_or(Value::Null, Value::TimestampTz)
}

fn system_time(t: Option<std::time::SystemTime>) -> Value {
    timestamptz(t.map(tusk_exec::func::datetime::system_time_to_timestamptz))
}

/// The rows of a `pg_catalog` relation not described in `relations`.
pub(super) fn rows(
    def: &RelationDef,
    catalog: &Catalog,
    info: Option<&SessionInfo>,
) -> Result<Vec<Vec<Value>>> {
    Ok(match def.name {
        "pg_database" => {
            let db = info.map_or_else(|| "tusk".to_string(), |i| i.database_name());
            vec![vec![
                oid(DATABASE_OID),
                name(&db),
                oid(BOOTSTRAP_SUPERUSER),
                i4(6),
                ch('c'),
                boolean(false),
                boolean(true),
                i4(-1),
                xid(716),
                xid(1),
                oid(DEFAULT_TABLESPACE),
                text("C"),
                text("C"),
                Value::Null,
                Value::Null,
                Value::Null,
            ]]
        }
        "pg_authid" => roles(info)
            .into_iter()
            .map(|r| {
                vec![
                    oid(r.oid),
                    name(&r.name),
                    boolean(r.superuser),
                    boolean(true),
                    boolean(r.superuser),
                    boolean(r.superuser),
                    boolean(r.login),
                    boolean(r.superuser),
                    boolean(r.superuser),
                    i4(-1),
                    Value::Null,
                    Value::Null,
                ]
            })
            .collect(),
        "pg_roles" => roles(info)
            .into_iter()
            .map(|r| {
                vec![
                    name(&r.name),
                    boolean(r.superuser),
                    boolean(true),
                    boolean(r.superuser),
                    boolean(r.superuser),
                    boolean(r.login),
                    boolean(r.superuser),
                    i4(-1),
                    text("********"),
                    Value::Null,
                    boolean(r.superuser),
                    Value::Null,
                    oid(r.oid),
                ]
            })
            .collect(),
        "pg_user" => roles(info)
            .into_iter()
            .filter(|r| r.login)
            .map(|r| {
                vec![
                    name(&r.name),
                    oid(r.oid),
                    boolean(r.superuser),
                    boolean(r.superuser),
                    boolean(r.superuser),
                    boolean(r.superuser),
                    text("********"),
                    Value::Null,
                    Value::Null,
                ]
            })
            .collect(),
        "pg_settings" => match info {
            None => Vec::new(),
            Some(i) => i
                .settings()
                .describe()
                .into_iter()
                .map(|s| {
                    let opt = |v: Option<String>| v.map_or(Value::Null, |v| text(&v));
                    vec![
                        text(&s.name),
                        text(&s.setting),
                        opt(s.unit),
                        text(s.category),
                        text(&s.description),
                        Value::Null,
                        text(s.context),
                        text(s.vartype),
                        text(s.source),
                        opt(s.min),
                        opt(s.max),
                        match s.enumvals {
                            Some(v) => text_array(&v[..]),
                            None => Value::Null,
                        },
                        text(&s.boot),
                        text(&s.reset),
                        Value::Null,
                        Value::Null,
                        boolean(false),
                    ]
                })
                .collect(),
        },
        "pg_stat_activity" => match info {
            None => Vec::new(),
            Some(i) => {
                let db = i.database_name();
                let users = roles(Some(i));
                i.activity()
                    .into_iter()
                    .map(|a| {
                        let user = users.iter().find(|r| r.name == a.user);
                        let opt_text = |v: Option<String>| v.map_or(Value::Null, |v| text(&v));
                        vec![
                            oid(DATABASE_OID),
                            name(&db),
                            i4(a.pid),
                            Value::Null,
                            user.map_or(Value::Null, |u| oid(u.oid)),
                            name(&a.user),
                            text(&a.application_name),
                            opt_text(a.client_addr.clone()),
                            Value::Null,
                            a.client_port.map_or(Value::Null, i4),
                            timestamptz(Some(a.backend_start)),
                            timestamptz(a.xact_start),
                            timestamptz(a.query_start),
                            timestamptz(a.state_change),
                            Value::Null,
                            Value::Null,
                            text(&a.state),
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            text(&a.query),
                            text("client backend"),
                        ]
                    })
                    .collect()
            }
        },
        "pg_cursors" => info.map_or_else(Vec::new, |i| {
            i.cursors()
                .into_iter()
                .map(|c| {
                    vec![
                        text(&c.name),
                        text(&c.statement),
                        boolean(c.holdable),
                        boolean(c.binary),
                        boolean(c.scrollable),
                        Value::TimestampTz(c.created),
                    ]
                })
                .collect()
        }),
        "pg_prepared_statements" => info.map_or_else(Vec::new, |i| {
            i.prepared()
                .into_iter()
                .map(|p| {
                    let types = p
                        .param_types
                        .iter()
                        .map(|t| reg(tusk_storage::DataType::RegType, t.oid()))
                        .collect();
                    vec![
                        text(&p.name),
                        text(&p.statement),
                        Value::TimestampTz(p.prepared),
                        array(tusk_storage::REGTYPE_ARRAY, types),
                        boolean(true),
                        Value::Int8(p.executions),
                        Value::Int8(0),
                    ]
                })
                .collect()
        }),
        "pg_stat_user_tables" => catalog
            .tables()
            .filter(|t| t.is_plain_table())
            .map(|t| {
                let s = info
                    .map(|i| i.database().stats.table(t.oid))
                    .unwrap_or_default();
                let n = |v: u64| i8(v as i64);
                vec![
                    oid(t.oid),
                    name("public"),
                    name(&t.name),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    n(s.n_tup_ins),
                    n(s.n_tup_upd),
                    n(s.n_tup_del),
                    n(s.n_tup_hot_upd),
                    n(s.n_live_tup),
                    n(s.n_dead_tup),
                    n(s.n_mod_since_analyze),
                    n(s.n_ins_since_vacuum),
                    system_time(s.last_vacuum),
                    system_time(s.last_autovacuum),
                    system_time(s.last_analyze),
                    system_time(s.last_autoanalyze),
                    n(s.vacuum_count),
                    n(s.autovacuum_count),
                    n(s.analyze_count),
                    n(s.autoanalyze_count),
                ]
            })
            .collect(),
        "pg_proc" => super::procs::rows(),
        // Objects tusk does not have: none of them.
        _ => Vec::new(),
    })
}

/// The name of role `oid` (`pg_get_userbyid`; PostgreSQL prints
/// `unknown (OID=n)` for a role that does not exist).
pub(crate) fn role_name(info: Option<&SessionInfo>, oid: u32) -> String {
    roles(info)
        .into_iter()
        .find(|r| r.oid == oid)
        .map_or_else(|| format!("unknown (OID={oid})"), |r| r.name)
}

/// The oid of role `name`.
pub(crate) fn role_oid(info: Option<&SessionInfo>, name: &str) -> Option<u32> {
    roles(info)
        .into_iter()
        .find(|r| r.name == name)
        .map(|r| r.oid)
}
