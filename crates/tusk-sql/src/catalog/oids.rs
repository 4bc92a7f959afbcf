//! The oids PostgreSQL fixes, and per-type facts of `pg_type` that tusk's
//! types do not carry themselves.

use tusk_storage::DataType;

pub(crate) const PG_CATALOG_NAMESPACE: u32 = 11;
pub(crate) const PG_TOAST_NAMESPACE: u32 = 99;
pub(crate) const PUBLIC_NAMESPACE: u32 = 2200;
pub(crate) const INFORMATION_SCHEMA_NAMESPACE: u32 = 13207;

/// The bootstrap superuser, owner of every object.
pub(crate) const BOOTSTRAP_SUPERUSER: u32 = 10;
/// The name tusk gives it (PostgreSQL names it after initdb's user).
pub(crate) const BOOTSTRAP_SUPERUSER_NAME: &str = "tusk";
/// `pg_database_owner`, owner of the `public` schema.
pub(crate) const PG_DATABASE_OWNER: u32 = 6171;

/// The database's oid (PostgreSQL's `postgres` database has 5).
pub(crate) const DATABASE_OID: u32 = 5;
pub(crate) const DEFAULT_TABLESPACE: u32 = 1663;
pub(crate) const GLOBAL_TABLESPACE: u32 = 1664;

pub(crate) const HEAP_AM: u32 = 2;
pub(crate) const BTREE_AM: u32 = 403;
/// tusk's `columnar` table access method, which PostgreSQL does not have:
/// an oid from the range PostgreSQL leaves to work in development
/// (8000-9999), below the functions' (`procs::FIRST_PROC_OID`).
pub(crate) const COLUMNAR_AM: u32 = 8000;

pub(crate) const DEFAULT_COLLATION: u32 = 100;
pub(crate) const C_COLLATION: u32 = 950;
pub(crate) const POSIX_COLLATION: u32 = 951;

pub(crate) const INTERNAL_LANGUAGE: u32 = 12;

/// PostgreSQL 15's predefined roles (members of nothing, logging in never).
pub(crate) const PREDEFINED_ROLES: &[(u32, &str)] = &[
    (3373, "pg_monitor"),
    (3374, "pg_read_all_settings"),
    (3375, "pg_read_all_stats"),
    (3377, "pg_stat_scan_tables"),
    (4200, "pg_signal_backend"),
    (4544, "pg_checkpoint"),
    (4569, "pg_read_server_files"),
    (4570, "pg_write_server_files"),
    (4571, "pg_execute_server_program"),
    (6171, "pg_database_owner"),
    (6181, "pg_read_all_data"),
    (6182, "pg_write_all_data"),
];

/// The namespaces: (oid, name, owner).
pub(crate) const NAMESPACES: &[(u32, &str, u32)] = &[
    (PG_TOAST_NAMESPACE, "pg_toast", BOOTSTRAP_SUPERUSER),
    (PG_CATALOG_NAMESPACE, "pg_catalog", BOOTSTRAP_SUPERUSER),
    (PUBLIC_NAMESPACE, "public", PG_DATABASE_OWNER),
    (
        INFORMATION_SCHEMA_NAMESPACE,
        "information_schema",
        BOOTSTRAP_SUPERUSER,
    ),
];

/// The namespace called `name`.
pub(crate) fn namespace_oid(name: &str) -> Option<u32> {
    NAMESPACES.iter().find(|n| n.1 == name).map(|n| n.0)
}

/// The name of namespace `oid`.
pub(crate) fn namespace_name(oid: u32) -> Option<&'static str> {
    NAMESPACES.iter().find(|n| n.0 == oid).map(|n| n.1)
}

/// The collation of values of `ty` (`pg_type.typcollation`): `default`
/// for the string types, `C` for `name`, none (0) for the others.
pub(crate) fn type_collation(ty: DataType) -> u32 {
    match ty.element().unwrap_or(ty) {
        DataType::Name => C_COLLATION,
        DataType::Text | DataType::Varchar | DataType::Bpchar | DataType::NodeTree => {
            DEFAULT_COLLATION
        }
        _ => 0,
    }
}

/// The default btree operator class of `ty` (`pg_opclass.oid`), as a
/// `pg_index.indclass` entry names it.
pub(crate) fn btree_opclass(ty: DataType) -> u32 {
    match ty {
        DataType::Bool => 10003,
        DataType::Char => 10007,
        DataType::Name => 10028,
        DataType::Int8 => 3124,
        DataType::Int2 => 1979,
        DataType::Int4 => 1978,
        DataType::Text | DataType::Varchar => 3126,
        DataType::Oid => 1981,
        DataType::OidVector => 10032,
        DataType::Float4 => 10012,
        DataType::Float8 => 3123,
        DataType::Bpchar => 10004,
        DataType::Date => 3122,
        DataType::Time => 10038,
        DataType::Timestamp => 3128,
        DataType::TimestampTz => 3127,
        DataType::Interval => 10022,
        DataType::Numeric => 3125,
        DataType::Bytea => 10006,
        DataType::Uuid => 10065,
        _ => 10000,
    }
}

/// The default btree operator classes tusk's types have: (oid, name,
/// family, input type).
pub(crate) const BTREE_OPCLASSES: &[(u32, &str, u32, DataType)] = &[
    (10003, "bool_ops", 424, DataType::Bool),
    (10007, "char_ops", 429, DataType::Char),
    (10028, "name_ops", 1994, DataType::Name),
    (3124, "int8_ops", 1976, DataType::Int8),
    (1979, "int2_ops", 1976, DataType::Int2),
    (1978, "int4_ops", 1976, DataType::Int4),
    (3126, "text_ops", 1994, DataType::Text),
    (1981, "oid_ops", 1989, DataType::Oid),
    (10032, "oidvector_ops", 1991, DataType::OidVector),
    (10012, "float4_ops", 1970, DataType::Float4),
    (3123, "float8_ops", 1970, DataType::Float8),
    (10004, "bpchar_ops", 426, DataType::Bpchar),
    (3122, "date_ops", 434, DataType::Date),
    (10038, "time_ops", 1996, DataType::Time),
    (3128, "timestamp_ops", 434, DataType::Timestamp),
    (3127, "timestamptz_ops", 434, DataType::TimestampTz),
    (10022, "interval_ops", 1982, DataType::Interval),
    (3125, "numeric_ops", 1988, DataType::Numeric),
    (10006, "bytea_ops", 428, DataType::Bytea),
    (10065, "uuid_ops", 2968, DataType::Uuid),
];

/// `pg_type`'s storage facts of `ty`: (typbyval, typalign, typstorage).
pub(crate) fn type_storage(ty: DataType) -> (bool, char, char) {
    use DataType as T;
    match ty {
        T::Bool | T::Char => (true, 'c', 'p'),
        T::Uuid => (false, 'c', 'p'),
        T::Name => (false, 'c', 'p'),
        T::Int2 => (true, 's', 'p'),
        T::Int4 | T::Float4 | T::Date | T::Xid => (true, 'i', 'p'),
        t if t.is_oid() => (true, 'i', 'p'),
        T::Int8 | T::Float8 | T::Time | T::Timestamp | T::TimestampTz => (true, 'd', 'p'),
        T::Interval => (false, 'd', 'p'),
        T::Numeric => (false, 'i', 'm'),
        T::Int2Vector | T::OidVector => (false, 'i', 'p'),
        T::Array(e)
            if matches!(
                e.get(),
                T::Int8 | T::Float8 | T::Time | T::Timestamp | T::TimestampTz | T::Interval
            ) =>
        {
            (false, 'd', 'x')
        }
        _ => (false, 'i', 'x'),
    }
}

/// `pg_type.typinput` / `typoutput` / `typreceive` / `typsend` of `ty`.
pub(crate) fn type_functions(ty: DataType) -> [String; 4] {
    if matches!(ty, DataType::Array(_)) {
        return ["array_in", "array_out", "array_recv", "array_send"].map(String::from);
    }
    let base = ty.type_name();
    // The types whose functions PostgreSQL names with an underscore.
    let sep = match ty {
        DataType::Numeric
        | DataType::Date
        | DataType::Time
        | DataType::Timestamp
        | DataType::TimestampTz
        | DataType::Interval
        | DataType::Uuid
        | DataType::Json
        | DataType::Jsonb
        | DataType::NodeTree => "_",
        _ => "",
    };
    ["in", "out", "recv", "send"].map(|f| format!("{base}{sep}{f}"))
}
