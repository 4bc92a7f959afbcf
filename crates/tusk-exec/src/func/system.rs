//! System information and catalog functions (PostgreSQL 15 documentation,
//! chapter 9.26) and the configuration functions (9.27.1): their
//! overloads, and the kernels of those that need nothing but their
//! arguments (`format_type`, `pg_size_pretty`, `pg_encoding_to_char`).
//!
//! The others read the session or its catalog — `current_setting`,
//! `pg_get_indexdef`, `pg_table_is_visible`, ... — and are computed by the
//! session's [`crate::session::SessionState`] ([`Func::session`]).
//! Privilege tests (`has_table_privilege`, ...) answer true for objects
//! that exist: tusk has no privileges yet, every role may do everything.

use super::catalog::{p, Param, Proc};
use super::{eval_rows, Call, Func};
use crate::error::Result;
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::{DataType as D, SqlType, NAME_ARRAY};

const BOOL: Param = Param::T(D::Bool);
const I4: Param = Param::T(D::Int4);
const I8: Param = Param::T(D::Int8);
const TEXT: Param = Param::T(D::Text);
const NAME: Param = Param::T(D::Name);
const OID: Param = Param::T(D::Oid);
const REGCLASS: Param = Param::T(D::RegClass);
const NODE: Param = Param::T(D::NodeTree);

/// The system functions' overloads.
pub static SYSTEM_PROCS: &[Proc] = &[
    // Session information (table 9.63).
    p("version", &[], D::Text, Func::Version),
    p("current_database", &[], D::Name, Func::CurrentDatabase),
    p("current_catalog", &[], D::Name, Func::CurrentDatabase),
    p("current_schema", &[], D::Name, Func::CurrentSchema),
    p("current_schemas", &[BOOL], NAME_ARRAY, Func::CurrentSchemas),
    p("current_user", &[], D::Name, Func::CurrentUser),
    p("current_role", &[], D::Name, Func::CurrentUser),
    p("user", &[], D::Name, Func::CurrentUser),
    p("session_user", &[], D::Name, Func::SessionUser),
    p("pg_backend_pid", &[], D::Int4, Func::PgBackendPid),
    p(
        "pg_postmaster_start_time",
        &[],
        D::TimestampTz,
        Func::PgPostmasterStartTime,
    ),
    p("pg_is_in_recovery", &[], D::Bool, Func::PgIsInRecovery),
    p("txid_current", &[], D::Int8, Func::TxidCurrent),
    // Sequence manipulation (table 9.52).
    p("nextval", &[REGCLASS], D::Int8, Func::NextVal),
    p("currval", &[REGCLASS], D::Int8, Func::CurrVal),
    p("setval", &[REGCLASS, I8], D::Int8, Func::SetVal),
    p("setval", &[REGCLASS, I8, BOOL], D::Int8, Func::SetVal),
    p("lastval", &[], D::Int8, Func::LastVal),
    // Configuration settings (table 9.85).
    p("current_setting", &[TEXT], D::Text, Func::CurrentSetting),
    p(
        "current_setting",
        &[TEXT, BOOL],
        D::Text,
        Func::CurrentSetting,
    ),
    p("set_config", &[TEXT, TEXT, BOOL], D::Text, Func::SetConfig),
    // Access privilege inquiry (table 9.66): see the module doc.
    p(
        "has_table_privilege",
        &[TEXT, TEXT],
        D::Bool,
        Func::HasTablePrivilege,
    ),
    p(
        "has_table_privilege",
        &[OID, TEXT],
        D::Bool,
        Func::HasTablePrivilege,
    ),
    p(
        "has_table_privilege",
        &[NAME, TEXT, TEXT],
        D::Bool,
        Func::HasTablePrivilege,
    ),
    p(
        "has_table_privilege",
        &[NAME, OID, TEXT],
        D::Bool,
        Func::HasTablePrivilege,
    ),
    p(
        "has_schema_privilege",
        &[TEXT, TEXT],
        D::Bool,
        Func::HasSchemaPrivilege,
    ),
    p(
        "has_schema_privilege",
        &[NAME, TEXT, TEXT],
        D::Bool,
        Func::HasSchemaPrivilege,
    ),
    p(
        "has_database_privilege",
        &[TEXT, TEXT],
        D::Bool,
        Func::HasDatabasePrivilege,
    ),
    p(
        "has_database_privilege",
        &[NAME, TEXT, TEXT],
        D::Bool,
        Func::HasDatabasePrivilege,
    ),
    p("pg_has_role", &[NAME, TEXT], D::Bool, Func::PgHasRole),
    p("pg_has_role", &[NAME, NAME, TEXT], D::Bool, Func::PgHasRole),
    // Schema visibility (table 9.67).
    p(
        "pg_table_is_visible",
        &[OID],
        D::Bool,
        Func::PgTableIsVisible,
    ),
    p("pg_type_is_visible", &[OID], D::Bool, Func::PgTypeIsVisible),
    p(
        "pg_function_is_visible",
        &[OID],
        D::Bool,
        Func::PgFunctionIsVisible,
    ),
    // System catalog information (table 9.68).
    p("format_type", &[OID, I4], D::Text, Func::FormatType),
    p("pg_get_userbyid", &[OID], D::Name, Func::PgGetUserById),
    p("pg_get_indexdef", &[OID], D::Text, Func::PgGetIndexdef),
    p(
        "pg_get_indexdef",
        &[OID, I4, BOOL],
        D::Text,
        Func::PgGetIndexdef,
    ),
    p(
        "pg_get_constraintdef",
        &[OID],
        D::Text,
        Func::PgGetConstraintdef,
    ),
    p(
        "pg_get_constraintdef",
        &[OID, BOOL],
        D::Text,
        Func::PgGetConstraintdef,
    ),
    p("pg_get_expr", &[NODE, OID], D::Text, Func::PgGetExpr),
    p("pg_get_expr", &[NODE, OID, BOOL], D::Text, Func::PgGetExpr),
    p("pg_get_viewdef", &[OID], D::Text, Func::PgGetViewdef),
    p("pg_get_viewdef", &[OID, BOOL], D::Text, Func::PgGetViewdef),
    p("pg_get_viewdef", &[TEXT], D::Text, Func::PgGetViewdef),
    p("pg_get_viewdef", &[TEXT, BOOL], D::Text, Func::PgGetViewdef),
    p(
        "pg_get_statisticsobjdef_columns",
        &[OID],
        D::Text,
        Func::PgGetStatisticsobjdefColumns,
    ),
    p(
        "pg_get_serial_sequence",
        &[TEXT, TEXT],
        D::Text,
        Func::PgGetSerialSequence,
    ),
    p(
        "pg_relation_is_publishable",
        &[REGCLASS],
        D::Bool,
        Func::PgRelationIsPublishable,
    ),
    p(
        "pg_encoding_to_char",
        &[I4],
        D::Name,
        Func::PgEncodingToChar,
    ),
    // Comments (table 9.74): tusk keeps none.
    p(
        "obj_description",
        &[OID, NAME],
        D::Text,
        Func::ObjDescription,
    ),
    p("obj_description", &[OID], D::Text, Func::ObjDescription),
    p("col_description", &[OID, I4], D::Text, Func::ObjDescription),
    p(
        "shobj_description",
        &[OID, NAME],
        D::Text,
        Func::ObjDescription,
    ),
    // Database object size (table 9.93).
    p(
        "pg_relation_size",
        &[REGCLASS],
        D::Int8,
        Func::PgRelationSize,
    ),
    p(
        "pg_relation_size",
        &[REGCLASS, TEXT],
        D::Int8,
        Func::PgRelationSize,
    ),
    p("pg_table_size", &[REGCLASS], D::Int8, Func::PgTableSize),
    p("pg_indexes_size", &[REGCLASS], D::Int8, Func::PgIndexesSize),
    p(
        "pg_total_relation_size",
        &[REGCLASS],
        D::Int8,
        Func::PgTotalRelationSize,
    ),
    p("pg_size_pretty", &[I8], D::Text, Func::PgSizePretty),
    p(
        "pg_size_pretty",
        &[Param::T(D::Numeric)],
        D::Text,
        Func::PgSizePretty,
    ),
    p("pg_typeof", &[Param::Any], D::RegType, Func::PgTypeof),
];

/// Evaluates the functions that need only their arguments.
pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    eval_rows(c, |args| {
        Ok(match f {
            Func::FormatType => format_type(&args[0], &args[1]),
            Func::PgSizePretty => match &args[0] {
                Value::Int8(n) => Value::Text(size_pretty(*n as i128)),
                Value::Numeric(n) => Value::Text(numeric_size_pretty(n)?),
                _ => Value::Null,
            },
            Func::PgEncodingToChar => match &args[0] {
                Value::Int4(6) => Value::Text("UTF8".into()),
                Value::Int4(0) => Value::Text("SQL_ASCII".into()),
                _ => Value::Text(String::new()),
            },
            Func::PgTypeof => Value::Oid {
                ty: D::RegType,
                oid: c.types[0].oid(),
            },
            other => unreachable!("{other:?} is not a system function"),
        })
    })
}

/// `format_type(type_oid, typemod)`: the type's SQL name with its
/// modifier (`character varying(10)`); NULL for a NULL oid, `???` for an
/// unknown one. A NULL typemod prints the name SQL uses (`character`),
/// -1 the internal one where they differ (`bpchar`), as PostgreSQL does.
fn format_type(oid: &Value, typmod: &Value) -> Value {
    let Value::Oid { oid, .. } = oid else {
        return Value::Null;
    };
    let Some(ty) = D::from_oid(*oid) else {
        return Value::Text("???".into());
    };
    Value::Text(match typmod {
        Value::Int4(m) => SqlType::from_typmod(ty, *m).display_name(),
        _ => ty.display_name().to_string(),
    })
}

/// `pg_size_pretty(numeric)`: as for bigint, on the value truncated to an
/// integer (sizes below 10 kB print as given).
fn numeric_size_pretty(n: &crate::numeric::Numeric) -> Result<String> {
    let text = n.to_string();
    let whole = text.split('.').next().unwrap_or("0");
    let size: i128 = whole.parse().map_err(|_| {
        crate::error::ExecError::coded(
            crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "numeric value out of range for pg_size_pretty",
        )
    })?;
    if size.unsigned_abs() < 10 * 1024 {
        return Ok(format!("{text} bytes"));
    }
    Ok(size_pretty(size))
}

/// `pg_size_pretty(bigint)`: bytes below 10 kB, then kB, MB, GB, TB and
/// PB below 20 units, each half-rounded from one extra bit (PostgreSQL
/// 15's `size_pretty_units`).
pub fn size_pretty(mut size: i128) -> String {
    const UNITS: [(&str, i64, bool, u32); 6] = [
        ("bytes", 10 * 1024, false, 0),
        ("kB", 20 * 1024 - 1, true, 10),
        ("MB", 20 * 1024 - 1, true, 20),
        ("GB", 20 * 1024 - 1, true, 30),
        ("TB", 20 * 1024 - 1, true, 40),
        ("PB", 20 * 1024 - 1, true, 50),
    ];
    let half_rounded = |x: i128| (x + if x < 0 { -1 } else { 1 }) / 2;
    for (i, &(name, limit, round, bits)) in UNITS.iter().enumerate() {
        let last = i + 1 == UNITS.len();
        if last || size.unsigned_abs() < limit as u128 {
            if round {
                size = half_rounded(size);
            }
            return format!("{size} {name}");
        }
        let (_, _, next_round, next_bits) = UNITS[i + 1];
        let shift = next_bits - bits - next_round as u32 + round as u32;
        size /= 1i128 << shift;
    }
    unreachable!("the last unit always matches")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_as_postgresql_prints_them() {
        for (n, s) in [
            (0, "0 bytes"),
            (10239, "10239 bytes"),
            (10240, "10 kB"),
            (8192 * 1000, "8000 kB"),
            (20 * 1024 * 1024, "20 MB"),
            (-10240, "-10 kB"),
            (1 << 50, "1024 TB"),
            (i64::MAX as i128, "8192 PB"),
        ] {
            assert_eq!(size_pretty(n), s, "{n}");
        }
    }
}
