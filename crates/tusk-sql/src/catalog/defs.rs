//! The system relations' definitions: name, schema, oid and columns of
//! each, as PostgreSQL 15 has them (`pg_class` oid 1259, its columns in
//! order with their types). Generated from a PostgreSQL 15 cluster's own
//! catalog; the types PostgreSQL has and tusk does not are mapped to the
//! nearest one tusk has (`aclitem[]` to `text[]`, `inet`, `bytea`,
//! `pg_lsn` and `anyarray` to `text`, `regprocedure` to `regproc`), and
//! `information_schema`'s domains to their base types (`sql_identifier`
//! is `name`, `yes_or_no` is `varchar(3)`, ...).

use super::{Kind, RelationDef, Schema};
use tusk_storage::DataType as D;
use tusk_storage::{SqlType, CHAR_ARRAY, INT2_ARRAY, OID_ARRAY, TEXT_ARRAY};

/// A column of a catalog type.
const fn plain(t: D) -> SqlType {
    SqlType::Plain(t)
}

pub(crate) const IS_COLUMNS: RelationDef = RelationDef {
    oid: 13295,
    schema: Schema::InformationSchema,
    name: "columns",
    kind: Kind::View,
    columns: &[
        ("table_catalog", plain(D::Name)),
        ("table_schema", plain(D::Name)),
        ("table_name", plain(D::Name)),
        ("column_name", plain(D::Name)),
        ("ordinal_position", SqlType::Int4),
        ("column_default", SqlType::Varchar(None)),
        ("is_nullable", SqlType::Varchar(Some(3))),
        ("data_type", SqlType::Varchar(None)),
        ("character_maximum_length", SqlType::Int4),
        ("character_octet_length", SqlType::Int4),
        ("numeric_precision", SqlType::Int4),
        ("numeric_precision_radix", SqlType::Int4),
        ("numeric_scale", SqlType::Int4),
        ("datetime_precision", SqlType::Int4),
        ("interval_type", SqlType::Varchar(None)),
        ("interval_precision", SqlType::Int4),
        ("character_set_catalog", plain(D::Name)),
        ("character_set_schema", plain(D::Name)),
        ("character_set_name", plain(D::Name)),
        ("collation_catalog", plain(D::Name)),
        ("collation_schema", plain(D::Name)),
        ("collation_name", plain(D::Name)),
        ("domain_catalog", plain(D::Name)),
        ("domain_schema", plain(D::Name)),
        ("domain_name", plain(D::Name)),
        ("udt_catalog", plain(D::Name)),
        ("udt_schema", plain(D::Name)),
        ("udt_name", plain(D::Name)),
        ("scope_catalog", plain(D::Name)),
        ("scope_schema", plain(D::Name)),
        ("scope_name", plain(D::Name)),
        ("maximum_cardinality", SqlType::Int4),
        ("dtd_identifier", plain(D::Name)),
        ("is_self_referencing", SqlType::Varchar(Some(3))),
        ("is_identity", SqlType::Varchar(Some(3))),
        ("identity_generation", SqlType::Varchar(None)),
        ("identity_start", SqlType::Varchar(None)),
        ("identity_increment", SqlType::Varchar(None)),
        ("identity_maximum", SqlType::Varchar(None)),
        ("identity_minimum", SqlType::Varchar(None)),
        ("identity_cycle", SqlType::Varchar(Some(3))),
        ("is_generated", SqlType::Varchar(None)),
        ("generation_expression", SqlType::Varchar(None)),
        ("is_updatable", SqlType::Varchar(Some(3))),
    ],
};

pub(crate) const IS_KEY_COLUMN_USAGE: RelationDef = RelationDef {
    oid: 13329,
    schema: Schema::InformationSchema,
    name: "key_column_usage",
    kind: Kind::View,
    columns: &[
        ("constraint_catalog", plain(D::Name)),
        ("constraint_schema", plain(D::Name)),
        ("constraint_name", plain(D::Name)),
        ("table_catalog", plain(D::Name)),
        ("table_schema", plain(D::Name)),
        ("table_name", plain(D::Name)),
        ("column_name", plain(D::Name)),
        ("ordinal_position", SqlType::Int4),
        ("position_in_unique_constraint", SqlType::Int4),
    ],
};

pub(crate) const IS_SCHEMATA: RelationDef = RelationDef {
    oid: 13382,
    schema: Schema::InformationSchema,
    name: "schemata",
    kind: Kind::View,
    columns: &[
        ("catalog_name", plain(D::Name)),
        ("schema_name", plain(D::Name)),
        ("schema_owner", plain(D::Name)),
        ("default_character_set_catalog", plain(D::Name)),
        ("default_character_set_schema", plain(D::Name)),
        ("default_character_set_name", plain(D::Name)),
        ("sql_path", SqlType::Varchar(None)),
    ],
};

pub(crate) const IS_TABLE_CONSTRAINTS: RelationDef = RelationDef {
    oid: 13411,
    schema: Schema::InformationSchema,
    name: "table_constraints",
    kind: Kind::View,
    columns: &[
        ("constraint_catalog", plain(D::Name)),
        ("constraint_schema", plain(D::Name)),
        ("constraint_name", plain(D::Name)),
        ("table_catalog", plain(D::Name)),
        ("table_schema", plain(D::Name)),
        ("table_name", plain(D::Name)),
        ("constraint_type", SqlType::Varchar(None)),
        ("is_deferrable", SqlType::Varchar(Some(3))),
        ("initially_deferred", SqlType::Varchar(Some(3))),
        ("enforced", SqlType::Varchar(Some(3))),
        ("nulls_distinct", SqlType::Varchar(Some(3))),
    ],
};

pub(crate) const IS_TABLES: RelationDef = RelationDef {
    oid: 13425,
    schema: Schema::InformationSchema,
    name: "tables",
    kind: Kind::View,
    columns: &[
        ("table_catalog", plain(D::Name)),
        ("table_schema", plain(D::Name)),
        ("table_name", plain(D::Name)),
        ("table_type", SqlType::Varchar(None)),
        ("self_referencing_column_name", plain(D::Name)),
        ("reference_generation", SqlType::Varchar(None)),
        ("user_defined_type_catalog", plain(D::Name)),
        ("user_defined_type_schema", plain(D::Name)),
        ("user_defined_type_name", plain(D::Name)),
        ("is_insertable_into", SqlType::Varchar(Some(3))),
        ("is_typed", SqlType::Varchar(Some(3))),
        ("commit_action", SqlType::Varchar(None)),
    ],
};

pub(crate) const IS_VIEWS: RelationDef = RelationDef {
    oid: 13483,
    schema: Schema::InformationSchema,
    name: "views",
    kind: Kind::View,
    columns: &[
        ("table_catalog", plain(D::Name)),
        ("table_schema", plain(D::Name)),
        ("table_name", plain(D::Name)),
        ("view_definition", SqlType::Varchar(None)),
        ("check_option", SqlType::Varchar(None)),
        ("is_updatable", SqlType::Varchar(Some(3))),
        ("is_insertable_into", SqlType::Varchar(Some(3))),
        ("is_trigger_updatable", SqlType::Varchar(Some(3))),
        ("is_trigger_deletable", SqlType::Varchar(Some(3))),
        ("is_trigger_insertable_into", SqlType::Varchar(Some(3))),
    ],
};

pub(crate) const PG_AM: RelationDef = RelationDef {
    oid: 2601,
    schema: Schema::PgCatalog,
    name: "pg_am",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("amname", plain(D::Name)),
        ("amhandler", plain(D::RegProc)),
        ("amtype", plain(D::Char)),
    ],
};

pub(crate) const PG_ATTRDEF: RelationDef = RelationDef {
    oid: 2604,
    schema: Schema::PgCatalog,
    name: "pg_attrdef",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("adrelid", plain(D::Oid)),
        ("adnum", SqlType::Int2),
        ("adbin", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_ATTRIBUTE: RelationDef = RelationDef {
    oid: 1249,
    schema: Schema::PgCatalog,
    name: "pg_attribute",
    kind: Kind::Table,
    columns: &[
        ("attrelid", plain(D::Oid)),
        ("attname", plain(D::Name)),
        ("atttypid", plain(D::Oid)),
        ("attstattarget", SqlType::Int4),
        ("attlen", SqlType::Int2),
        ("attnum", SqlType::Int2),
        ("attndims", SqlType::Int4),
        ("attcacheoff", SqlType::Int4),
        ("atttypmod", SqlType::Int4),
        ("attbyval", SqlType::Bool),
        ("attalign", plain(D::Char)),
        ("attstorage", plain(D::Char)),
        ("attcompression", plain(D::Char)),
        ("attnotnull", SqlType::Bool),
        ("atthasdef", SqlType::Bool),
        ("atthasmissing", SqlType::Bool),
        ("attidentity", plain(D::Char)),
        ("attgenerated", plain(D::Char)),
        ("attisdropped", SqlType::Bool),
        ("attislocal", SqlType::Bool),
        ("attinhcount", SqlType::Int4),
        ("attcollation", plain(D::Oid)),
        ("attacl", plain(TEXT_ARRAY)),
        ("attoptions", plain(TEXT_ARRAY)),
        ("attfdwoptions", plain(TEXT_ARRAY)),
        ("attmissingval", SqlType::Text),
    ],
};

pub(crate) const PG_AUTH_MEMBERS: RelationDef = RelationDef {
    oid: 1261,
    schema: Schema::PgCatalog,
    name: "pg_auth_members",
    kind: Kind::Table,
    columns: &[
        ("roleid", plain(D::Oid)),
        ("member", plain(D::Oid)),
        ("grantor", plain(D::Oid)),
        ("admin_option", SqlType::Bool),
    ],
};

pub(crate) const PG_AUTHID: RelationDef = RelationDef {
    oid: 1260,
    schema: Schema::PgCatalog,
    name: "pg_authid",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("rolname", plain(D::Name)),
        ("rolsuper", SqlType::Bool),
        ("rolinherit", SqlType::Bool),
        ("rolcreaterole", SqlType::Bool),
        ("rolcreatedb", SqlType::Bool),
        ("rolcanlogin", SqlType::Bool),
        ("rolreplication", SqlType::Bool),
        ("rolbypassrls", SqlType::Bool),
        ("rolconnlimit", SqlType::Int4),
        ("rolpassword", SqlType::Text),
        ("rolvaliduntil", SqlType::TimestampTz(None)),
    ],
};

pub(crate) const PG_CLASS: RelationDef = RelationDef {
    oid: 1259,
    schema: Schema::PgCatalog,
    name: "pg_class",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("relname", plain(D::Name)),
        ("relnamespace", plain(D::Oid)),
        ("reltype", plain(D::Oid)),
        ("reloftype", plain(D::Oid)),
        ("relowner", plain(D::Oid)),
        ("relam", plain(D::Oid)),
        ("relfilenode", plain(D::Oid)),
        ("reltablespace", plain(D::Oid)),
        ("relpages", SqlType::Int4),
        ("reltuples", SqlType::Float4),
        ("relallvisible", SqlType::Int4),
        ("reltoastrelid", plain(D::Oid)),
        ("relhasindex", SqlType::Bool),
        ("relisshared", SqlType::Bool),
        ("relpersistence", plain(D::Char)),
        ("relkind", plain(D::Char)),
        ("relnatts", SqlType::Int2),
        ("relchecks", SqlType::Int2),
        ("relhasrules", SqlType::Bool),
        ("relhastriggers", SqlType::Bool),
        ("relhassubclass", SqlType::Bool),
        ("relrowsecurity", SqlType::Bool),
        ("relforcerowsecurity", SqlType::Bool),
        ("relispopulated", SqlType::Bool),
        ("relreplident", plain(D::Char)),
        ("relispartition", SqlType::Bool),
        ("relrewrite", plain(D::Oid)),
        ("relfrozenxid", plain(D::Xid)),
        ("relminmxid", plain(D::Xid)),
        ("relacl", plain(TEXT_ARRAY)),
        ("reloptions", plain(TEXT_ARRAY)),
        ("relpartbound", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_COLLATION: RelationDef = RelationDef {
    oid: 3456,
    schema: Schema::PgCatalog,
    name: "pg_collation",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("collname", plain(D::Name)),
        ("collnamespace", plain(D::Oid)),
        ("collowner", plain(D::Oid)),
        ("collprovider", plain(D::Char)),
        ("collisdeterministic", SqlType::Bool),
        ("collencoding", SqlType::Int4),
        ("collcollate", SqlType::Text),
        ("collctype", SqlType::Text),
        ("colliculocale", SqlType::Text),
        ("collversion", SqlType::Text),
    ],
};

pub(crate) const PG_CONSTRAINT: RelationDef = RelationDef {
    oid: 2606,
    schema: Schema::PgCatalog,
    name: "pg_constraint",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("conname", plain(D::Name)),
        ("connamespace", plain(D::Oid)),
        ("contype", plain(D::Char)),
        ("condeferrable", SqlType::Bool),
        ("condeferred", SqlType::Bool),
        ("convalidated", SqlType::Bool),
        ("conrelid", plain(D::Oid)),
        ("contypid", plain(D::Oid)),
        ("conindid", plain(D::Oid)),
        ("conparentid", plain(D::Oid)),
        ("confrelid", plain(D::Oid)),
        ("confupdtype", plain(D::Char)),
        ("confdeltype", plain(D::Char)),
        ("confmatchtype", plain(D::Char)),
        ("conislocal", SqlType::Bool),
        ("coninhcount", SqlType::Int4),
        ("connoinherit", SqlType::Bool),
        ("conkey", plain(INT2_ARRAY)),
        ("confkey", plain(INT2_ARRAY)),
        ("conpfeqop", plain(OID_ARRAY)),
        ("conppeqop", plain(OID_ARRAY)),
        ("conffeqop", plain(OID_ARRAY)),
        ("confdelsetcols", plain(INT2_ARRAY)),
        ("conexclop", plain(OID_ARRAY)),
        ("conbin", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_CURSORS: RelationDef = RelationDef {
    oid: 12077,
    schema: Schema::PgCatalog,
    name: "pg_cursors",
    kind: Kind::View,
    columns: &[
        ("name", SqlType::Text),
        ("statement", SqlType::Text),
        ("is_holdable", SqlType::Bool),
        ("is_binary", SqlType::Bool),
        ("is_scrollable", SqlType::Bool),
        ("creation_time", SqlType::TimestampTz(None)),
    ],
};

pub(crate) const PG_PREPARED_STATEMENTS: RelationDef = RelationDef {
    oid: 12095,
    schema: Schema::PgCatalog,
    name: "pg_prepared_statements",
    kind: Kind::View,
    columns: &[
        ("name", SqlType::Text),
        ("statement", SqlType::Text),
        ("prepare_time", SqlType::TimestampTz(None)),
        ("parameter_types", plain(tusk_storage::REGTYPE_ARRAY)),
        ("from_sql", SqlType::Bool),
        ("generic_plans", SqlType::Int8),
        ("custom_plans", SqlType::Int8),
    ],
};

pub(crate) const PG_DATABASE: RelationDef = RelationDef {
    oid: 1262,
    schema: Schema::PgCatalog,
    name: "pg_database",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("datname", plain(D::Name)),
        ("datdba", plain(D::Oid)),
        ("encoding", SqlType::Int4),
        ("datlocprovider", plain(D::Char)),
        ("datistemplate", SqlType::Bool),
        ("datallowconn", SqlType::Bool),
        ("datconnlimit", SqlType::Int4),
        ("datfrozenxid", plain(D::Xid)),
        ("datminmxid", plain(D::Xid)),
        ("dattablespace", plain(D::Oid)),
        ("datcollate", SqlType::Text),
        ("datctype", SqlType::Text),
        ("daticulocale", SqlType::Text),
        ("datcollversion", SqlType::Text),
        ("datacl", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_DEPEND: RelationDef = RelationDef {
    oid: 2608,
    schema: Schema::PgCatalog,
    name: "pg_depend",
    kind: Kind::Table,
    columns: &[
        ("classid", plain(D::Oid)),
        ("objid", plain(D::Oid)),
        ("objsubid", SqlType::Int4),
        ("refclassid", plain(D::Oid)),
        ("refobjid", plain(D::Oid)),
        ("refobjsubid", SqlType::Int4),
        ("deptype", plain(D::Char)),
    ],
};

pub(crate) const PG_DESCRIPTION: RelationDef = RelationDef {
    oid: 2609,
    schema: Schema::PgCatalog,
    name: "pg_description",
    kind: Kind::Table,
    columns: &[
        ("objoid", plain(D::Oid)),
        ("classoid", plain(D::Oid)),
        ("objsubid", SqlType::Int4),
        ("description", SqlType::Text),
    ],
};

pub(crate) const PG_ENUM: RelationDef = RelationDef {
    oid: 3501,
    schema: Schema::PgCatalog,
    name: "pg_enum",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("enumtypid", plain(D::Oid)),
        ("enumsortorder", SqlType::Float4),
        ("enumlabel", plain(D::Name)),
    ],
};

pub(crate) const PG_EVENT_TRIGGER: RelationDef = RelationDef {
    oid: 3466,
    schema: Schema::PgCatalog,
    name: "pg_event_trigger",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("evtname", plain(D::Name)),
        ("evtevent", plain(D::Name)),
        ("evtowner", plain(D::Oid)),
        ("evtfoid", plain(D::Oid)),
        ("evtenabled", plain(D::Char)),
        ("evttags", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_EXTENSION: RelationDef = RelationDef {
    oid: 3079,
    schema: Schema::PgCatalog,
    name: "pg_extension",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("extname", plain(D::Name)),
        ("extowner", plain(D::Oid)),
        ("extnamespace", plain(D::Oid)),
        ("extrelocatable", SqlType::Bool),
        ("extversion", SqlType::Text),
        ("extconfig", plain(OID_ARRAY)),
        ("extcondition", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_FOREIGN_DATA_WRAPPER: RelationDef = RelationDef {
    oid: 2328,
    schema: Schema::PgCatalog,
    name: "pg_foreign_data_wrapper",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("fdwname", plain(D::Name)),
        ("fdwowner", plain(D::Oid)),
        ("fdwhandler", plain(D::Oid)),
        ("fdwvalidator", plain(D::Oid)),
        ("fdwacl", plain(TEXT_ARRAY)),
        ("fdwoptions", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_FOREIGN_SERVER: RelationDef = RelationDef {
    oid: 1417,
    schema: Schema::PgCatalog,
    name: "pg_foreign_server",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("srvname", plain(D::Name)),
        ("srvowner", plain(D::Oid)),
        ("srvfdw", plain(D::Oid)),
        ("srvtype", SqlType::Text),
        ("srvversion", SqlType::Text),
        ("srvacl", plain(TEXT_ARRAY)),
        ("srvoptions", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_FOREIGN_TABLE: RelationDef = RelationDef {
    oid: 3118,
    schema: Schema::PgCatalog,
    name: "pg_foreign_table",
    kind: Kind::Table,
    columns: &[
        ("ftrelid", plain(D::Oid)),
        ("ftserver", plain(D::Oid)),
        ("ftoptions", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_INDEX: RelationDef = RelationDef {
    oid: 2610,
    schema: Schema::PgCatalog,
    name: "pg_index",
    kind: Kind::Table,
    columns: &[
        ("indexrelid", plain(D::Oid)),
        ("indrelid", plain(D::Oid)),
        ("indnatts", SqlType::Int2),
        ("indnkeyatts", SqlType::Int2),
        ("indisunique", SqlType::Bool),
        ("indnullsnotdistinct", SqlType::Bool),
        ("indisprimary", SqlType::Bool),
        ("indisexclusion", SqlType::Bool),
        ("indimmediate", SqlType::Bool),
        ("indisclustered", SqlType::Bool),
        ("indisvalid", SqlType::Bool),
        ("indcheckxmin", SqlType::Bool),
        ("indisready", SqlType::Bool),
        ("indislive", SqlType::Bool),
        ("indisreplident", SqlType::Bool),
        ("indkey", plain(D::Int2Vector)),
        ("indcollation", plain(D::OidVector)),
        ("indclass", plain(D::OidVector)),
        ("indoption", plain(D::Int2Vector)),
        ("indexprs", plain(D::NodeTree)),
        ("indpred", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_INDEXES: RelationDef = RelationDef {
    oid: 12043,
    schema: Schema::PgCatalog,
    name: "pg_indexes",
    kind: Kind::View,
    columns: &[
        ("schemaname", plain(D::Name)),
        ("tablename", plain(D::Name)),
        ("indexname", plain(D::Name)),
        ("tablespace", plain(D::Name)),
        ("indexdef", SqlType::Text),
    ],
};

pub(crate) const PG_INHERITS: RelationDef = RelationDef {
    oid: 2611,
    schema: Schema::PgCatalog,
    name: "pg_inherits",
    kind: Kind::Table,
    columns: &[
        ("inhrelid", plain(D::Oid)),
        ("inhparent", plain(D::Oid)),
        ("inhseqno", SqlType::Int4),
        ("inhdetachpending", SqlType::Bool),
    ],
};

pub(crate) const PG_LANGUAGE: RelationDef = RelationDef {
    oid: 2612,
    schema: Schema::PgCatalog,
    name: "pg_language",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("lanname", plain(D::Name)),
        ("lanowner", plain(D::Oid)),
        ("lanispl", SqlType::Bool),
        ("lanpltrusted", SqlType::Bool),
        ("lanplcallfoid", plain(D::Oid)),
        ("laninline", plain(D::Oid)),
        ("lanvalidator", plain(D::Oid)),
        ("lanacl", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_MATVIEWS: RelationDef = RelationDef {
    oid: 12038,
    schema: Schema::PgCatalog,
    name: "pg_matviews",
    kind: Kind::View,
    columns: &[
        ("schemaname", plain(D::Name)),
        ("matviewname", plain(D::Name)),
        ("matviewowner", plain(D::Name)),
        ("tablespace", plain(D::Name)),
        ("hasindexes", SqlType::Bool),
        ("ispopulated", SqlType::Bool),
        ("definition", SqlType::Text),
    ],
};

pub(crate) const PG_NAMESPACE: RelationDef = RelationDef {
    oid: 2615,
    schema: Schema::PgCatalog,
    name: "pg_namespace",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("nspname", plain(D::Name)),
        ("nspowner", plain(D::Oid)),
        ("nspacl", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_OPCLASS: RelationDef = RelationDef {
    oid: 2616,
    schema: Schema::PgCatalog,
    name: "pg_opclass",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("opcmethod", plain(D::Oid)),
        ("opcname", plain(D::Name)),
        ("opcnamespace", plain(D::Oid)),
        ("opcowner", plain(D::Oid)),
        ("opcfamily", plain(D::Oid)),
        ("opcintype", plain(D::Oid)),
        ("opcdefault", SqlType::Bool),
        ("opckeytype", plain(D::Oid)),
    ],
};

pub(crate) const PG_PARTITIONED_TABLE: RelationDef = RelationDef {
    oid: 3350,
    schema: Schema::PgCatalog,
    name: "pg_partitioned_table",
    kind: Kind::Table,
    columns: &[
        ("partrelid", plain(D::Oid)),
        ("partstrat", plain(D::Char)),
        ("partnatts", SqlType::Int2),
        ("partdefid", plain(D::Oid)),
        ("partattrs", plain(D::Int2Vector)),
        ("partclass", plain(D::OidVector)),
        ("partcollation", plain(D::OidVector)),
        ("partexprs", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_POLICY: RelationDef = RelationDef {
    oid: 3256,
    schema: Schema::PgCatalog,
    name: "pg_policy",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("polname", plain(D::Name)),
        ("polrelid", plain(D::Oid)),
        ("polcmd", plain(D::Char)),
        ("polpermissive", SqlType::Bool),
        ("polroles", plain(OID_ARRAY)),
        ("polqual", plain(D::NodeTree)),
        ("polwithcheck", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_PROC: RelationDef = RelationDef {
    oid: 1255,
    schema: Schema::PgCatalog,
    name: "pg_proc",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("proname", plain(D::Name)),
        ("pronamespace", plain(D::Oid)),
        ("proowner", plain(D::Oid)),
        ("prolang", plain(D::Oid)),
        ("procost", SqlType::Float4),
        ("prorows", SqlType::Float4),
        ("provariadic", plain(D::Oid)),
        ("prosupport", plain(D::RegProc)),
        ("prokind", plain(D::Char)),
        ("prosecdef", SqlType::Bool),
        ("proleakproof", SqlType::Bool),
        ("proisstrict", SqlType::Bool),
        ("proretset", SqlType::Bool),
        ("provolatile", plain(D::Char)),
        ("proparallel", plain(D::Char)),
        ("pronargs", SqlType::Int2),
        ("pronargdefaults", SqlType::Int2),
        ("prorettype", plain(D::Oid)),
        ("proargtypes", plain(D::OidVector)),
        ("proallargtypes", plain(OID_ARRAY)),
        ("proargmodes", plain(CHAR_ARRAY)),
        ("proargnames", plain(TEXT_ARRAY)),
        ("proargdefaults", plain(D::NodeTree)),
        ("protrftypes", plain(OID_ARRAY)),
        ("prosrc", SqlType::Text),
        ("probin", SqlType::Text),
        ("prosqlbody", plain(D::NodeTree)),
        ("proconfig", plain(TEXT_ARRAY)),
        ("proacl", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_PUBLICATION: RelationDef = RelationDef {
    oid: 6104,
    schema: Schema::PgCatalog,
    name: "pg_publication",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("pubname", plain(D::Name)),
        ("pubowner", plain(D::Oid)),
        ("puballtables", SqlType::Bool),
        ("pubinsert", SqlType::Bool),
        ("pubupdate", SqlType::Bool),
        ("pubdelete", SqlType::Bool),
        ("pubtruncate", SqlType::Bool),
        ("pubviaroot", SqlType::Bool),
    ],
};

pub(crate) const PG_PUBLICATION_NAMESPACE: RelationDef = RelationDef {
    oid: 6237,
    schema: Schema::PgCatalog,
    name: "pg_publication_namespace",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("pnpubid", plain(D::Oid)),
        ("pnnspid", plain(D::Oid)),
    ],
};

pub(crate) const PG_PUBLICATION_REL: RelationDef = RelationDef {
    oid: 6106,
    schema: Schema::PgCatalog,
    name: "pg_publication_rel",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("prpubid", plain(D::Oid)),
        ("prrelid", plain(D::Oid)),
        ("prqual", plain(D::NodeTree)),
        ("prattrs", plain(D::Int2Vector)),
    ],
};

pub(crate) const PG_RANGE: RelationDef = RelationDef {
    oid: 3541,
    schema: Schema::PgCatalog,
    name: "pg_range",
    kind: Kind::Table,
    columns: &[
        ("rngtypid", plain(D::Oid)),
        ("rngsubtype", plain(D::Oid)),
        ("rngmultitypid", plain(D::Oid)),
        ("rngcollation", plain(D::Oid)),
        ("rngsubopc", plain(D::Oid)),
        ("rngcanonical", plain(D::RegProc)),
        ("rngsubdiff", plain(D::RegProc)),
    ],
};

pub(crate) const PG_REWRITE: RelationDef = RelationDef {
    oid: 2618,
    schema: Schema::PgCatalog,
    name: "pg_rewrite",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("rulename", plain(D::Name)),
        ("ev_class", plain(D::Oid)),
        ("ev_type", plain(D::Char)),
        ("ev_enabled", plain(D::Char)),
        ("is_instead", SqlType::Bool),
        ("ev_qual", plain(D::NodeTree)),
        ("ev_action", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_ROLES: RelationDef = RelationDef {
    oid: 12000,
    schema: Schema::PgCatalog,
    name: "pg_roles",
    kind: Kind::View,
    columns: &[
        ("rolname", plain(D::Name)),
        ("rolsuper", SqlType::Bool),
        ("rolinherit", SqlType::Bool),
        ("rolcreaterole", SqlType::Bool),
        ("rolcreatedb", SqlType::Bool),
        ("rolcanlogin", SqlType::Bool),
        ("rolreplication", SqlType::Bool),
        ("rolconnlimit", SqlType::Int4),
        ("rolpassword", SqlType::Text),
        ("rolvaliduntil", SqlType::TimestampTz(None)),
        ("rolbypassrls", SqlType::Bool),
        ("rolconfig", plain(TEXT_ARRAY)),
        ("oid", plain(D::Oid)),
    ],
};

pub(crate) const PG_SEQUENCE: RelationDef = RelationDef {
    oid: 2224,
    schema: Schema::PgCatalog,
    name: "pg_sequence",
    kind: Kind::Table,
    columns: &[
        ("seqrelid", plain(D::Oid)),
        ("seqtypid", plain(D::Oid)),
        ("seqstart", SqlType::Int8),
        ("seqincrement", SqlType::Int8),
        ("seqmax", SqlType::Int8),
        ("seqmin", SqlType::Int8),
        ("seqcache", SqlType::Int8),
        ("seqcycle", SqlType::Bool),
    ],
};

pub(crate) const PG_SEQUENCES: RelationDef = RelationDef {
    oid: 12048,
    schema: Schema::PgCatalog,
    name: "pg_sequences",
    kind: Kind::View,
    columns: &[
        ("schemaname", plain(D::Name)),
        ("sequencename", plain(D::Name)),
        ("sequenceowner", plain(D::Name)),
        ("data_type", plain(D::RegType)),
        ("start_value", SqlType::Int8),
        ("min_value", SqlType::Int8),
        ("max_value", SqlType::Int8),
        ("increment_by", SqlType::Int8),
        ("cycle", SqlType::Bool),
        ("cache_size", SqlType::Int8),
        ("last_value", SqlType::Int8),
    ],
};

pub(crate) const PG_SETTINGS: RelationDef = RelationDef {
    oid: 12104,
    schema: Schema::PgCatalog,
    name: "pg_settings",
    kind: Kind::View,
    columns: &[
        ("name", SqlType::Text),
        ("setting", SqlType::Text),
        ("unit", SqlType::Text),
        ("category", SqlType::Text),
        ("short_desc", SqlType::Text),
        ("extra_desc", SqlType::Text),
        ("context", SqlType::Text),
        ("vartype", SqlType::Text),
        ("source", SqlType::Text),
        ("min_val", SqlType::Text),
        ("max_val", SqlType::Text),
        ("enumvals", plain(TEXT_ARRAY)),
        ("boot_val", SqlType::Text),
        ("reset_val", SqlType::Text),
        ("sourcefile", SqlType::Text),
        ("sourceline", SqlType::Int4),
        ("pending_restart", SqlType::Bool),
    ],
};

pub(crate) const PG_SHDESCRIPTION: RelationDef = RelationDef {
    oid: 2396,
    schema: Schema::PgCatalog,
    name: "pg_shdescription",
    kind: Kind::Table,
    columns: &[
        ("objoid", plain(D::Oid)),
        ("classoid", plain(D::Oid)),
        ("description", SqlType::Text),
    ],
};

pub(crate) const PG_STAT_ACTIVITY: RelationDef = RelationDef {
    oid: 12222,
    schema: Schema::PgCatalog,
    name: "pg_stat_activity",
    kind: Kind::View,
    columns: &[
        ("datid", plain(D::Oid)),
        ("datname", plain(D::Name)),
        ("pid", SqlType::Int4),
        ("leader_pid", SqlType::Int4),
        ("usesysid", plain(D::Oid)),
        ("usename", plain(D::Name)),
        ("application_name", SqlType::Text),
        ("client_addr", SqlType::Text),
        ("client_hostname", SqlType::Text),
        ("client_port", SqlType::Int4),
        ("backend_start", SqlType::TimestampTz(None)),
        ("xact_start", SqlType::TimestampTz(None)),
        ("query_start", SqlType::TimestampTz(None)),
        ("state_change", SqlType::TimestampTz(None)),
        ("wait_event_type", SqlType::Text),
        ("wait_event", SqlType::Text),
        ("state", SqlType::Text),
        ("backend_xid", plain(D::Xid)),
        ("backend_xmin", plain(D::Xid)),
        ("query_id", SqlType::Int8),
        ("query", SqlType::Text),
        ("backend_type", SqlType::Text),
    ],
};

pub(crate) const PG_STAT_USER_TABLES: RelationDef = RelationDef {
    oid: 12161,
    schema: Schema::PgCatalog,
    name: "pg_stat_user_tables",
    kind: Kind::View,
    columns: &[
        ("relid", plain(D::Oid)),
        ("schemaname", plain(D::Name)),
        ("relname", plain(D::Name)),
        ("seq_scan", SqlType::Int8),
        ("seq_tup_read", SqlType::Int8),
        ("idx_scan", SqlType::Int8),
        ("idx_tup_fetch", SqlType::Int8),
        ("n_tup_ins", SqlType::Int8),
        ("n_tup_upd", SqlType::Int8),
        ("n_tup_del", SqlType::Int8),
        ("n_tup_hot_upd", SqlType::Int8),
        ("n_live_tup", SqlType::Int8),
        ("n_dead_tup", SqlType::Int8),
        ("n_mod_since_analyze", SqlType::Int8),
        ("n_ins_since_vacuum", SqlType::Int8),
        ("last_vacuum", SqlType::TimestampTz(None)),
        ("last_autovacuum", SqlType::TimestampTz(None)),
        ("last_analyze", SqlType::TimestampTz(None)),
        ("last_autoanalyze", SqlType::TimestampTz(None)),
        ("vacuum_count", SqlType::Int8),
        ("autovacuum_count", SqlType::Int8),
        ("analyze_count", SqlType::Int8),
        ("autoanalyze_count", SqlType::Int8),
    ],
};

pub(crate) const PG_STATISTIC_EXT: RelationDef = RelationDef {
    oid: 3381,
    schema: Schema::PgCatalog,
    name: "pg_statistic_ext",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("stxrelid", plain(D::Oid)),
        ("stxname", plain(D::Name)),
        ("stxnamespace", plain(D::Oid)),
        ("stxowner", plain(D::Oid)),
        ("stxstattarget", SqlType::Int4),
        ("stxkeys", plain(D::Int2Vector)),
        ("stxkind", plain(CHAR_ARRAY)),
        ("stxexprs", plain(D::NodeTree)),
    ],
};

pub(crate) const PG_TABLES: RelationDef = RelationDef {
    oid: 12033,
    schema: Schema::PgCatalog,
    name: "pg_tables",
    kind: Kind::View,
    columns: &[
        ("schemaname", plain(D::Name)),
        ("tablename", plain(D::Name)),
        ("tableowner", plain(D::Name)),
        ("tablespace", plain(D::Name)),
        ("hasindexes", SqlType::Bool),
        ("hasrules", SqlType::Bool),
        ("hastriggers", SqlType::Bool),
        ("rowsecurity", SqlType::Bool),
    ],
};

pub(crate) const PG_TABLESPACE: RelationDef = RelationDef {
    oid: 1213,
    schema: Schema::PgCatalog,
    name: "pg_tablespace",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("spcname", plain(D::Name)),
        ("spcowner", plain(D::Oid)),
        ("spcacl", plain(TEXT_ARRAY)),
        ("spcoptions", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_TRIGGER: RelationDef = RelationDef {
    oid: 2620,
    schema: Schema::PgCatalog,
    name: "pg_trigger",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("tgrelid", plain(D::Oid)),
        ("tgparentid", plain(D::Oid)),
        ("tgname", plain(D::Name)),
        ("tgfoid", plain(D::Oid)),
        ("tgtype", SqlType::Int2),
        ("tgenabled", plain(D::Char)),
        ("tgisinternal", SqlType::Bool),
        ("tgconstrrelid", plain(D::Oid)),
        ("tgconstrindid", plain(D::Oid)),
        ("tgconstraint", plain(D::Oid)),
        ("tgdeferrable", SqlType::Bool),
        ("tginitdeferred", SqlType::Bool),
        ("tgnargs", SqlType::Int2),
        ("tgattr", plain(D::Int2Vector)),
        ("tgargs", SqlType::Text),
        ("tgqual", plain(D::NodeTree)),
        ("tgoldtable", plain(D::Name)),
        ("tgnewtable", plain(D::Name)),
    ],
};

pub(crate) const PG_TYPE: RelationDef = RelationDef {
    oid: 1247,
    schema: Schema::PgCatalog,
    name: "pg_type",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("typname", plain(D::Name)),
        ("typnamespace", plain(D::Oid)),
        ("typowner", plain(D::Oid)),
        ("typlen", SqlType::Int2),
        ("typbyval", SqlType::Bool),
        ("typtype", plain(D::Char)),
        ("typcategory", plain(D::Char)),
        ("typispreferred", SqlType::Bool),
        ("typisdefined", SqlType::Bool),
        ("typdelim", plain(D::Char)),
        ("typrelid", plain(D::Oid)),
        ("typsubscript", plain(D::RegProc)),
        ("typelem", plain(D::Oid)),
        ("typarray", plain(D::Oid)),
        ("typinput", plain(D::RegProc)),
        ("typoutput", plain(D::RegProc)),
        ("typreceive", plain(D::RegProc)),
        ("typsend", plain(D::RegProc)),
        ("typmodin", plain(D::RegProc)),
        ("typmodout", plain(D::RegProc)),
        ("typanalyze", plain(D::RegProc)),
        ("typalign", plain(D::Char)),
        ("typstorage", plain(D::Char)),
        ("typnotnull", SqlType::Bool),
        ("typbasetype", plain(D::Oid)),
        ("typtypmod", SqlType::Int4),
        ("typndims", SqlType::Int4),
        ("typcollation", plain(D::Oid)),
        ("typdefaultbin", plain(D::NodeTree)),
        ("typdefault", SqlType::Text),
        ("typacl", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_USER: RelationDef = RelationDef {
    oid: 12014,
    schema: Schema::PgCatalog,
    name: "pg_user",
    kind: Kind::View,
    columns: &[
        ("usename", plain(D::Name)),
        ("usesysid", plain(D::Oid)),
        ("usecreatedb", SqlType::Bool),
        ("usesuper", SqlType::Bool),
        ("userepl", SqlType::Bool),
        ("usebypassrls", SqlType::Bool),
        ("passwd", SqlType::Text),
        ("valuntil", SqlType::TimestampTz(None)),
        ("useconfig", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_USER_MAPPING: RelationDef = RelationDef {
    oid: 1418,
    schema: Schema::PgCatalog,
    name: "pg_user_mapping",
    kind: Kind::Table,
    columns: &[
        ("oid", plain(D::Oid)),
        ("umuser", plain(D::Oid)),
        ("umserver", plain(D::Oid)),
        ("umoptions", plain(TEXT_ARRAY)),
    ],
};

pub(crate) const PG_VIEWS: RelationDef = RelationDef {
    oid: 12028,
    schema: Schema::PgCatalog,
    name: "pg_views",
    kind: Kind::View,
    columns: &[
        ("schemaname", plain(D::Name)),
        ("viewname", plain(D::Name)),
        ("viewowner", plain(D::Name)),
        ("definition", SqlType::Text),
    ],
};

/// Every system relation.
pub(crate) const ALL: &[RelationDef] = &[
    IS_COLUMNS,
    IS_KEY_COLUMN_USAGE,
    IS_SCHEMATA,
    IS_TABLE_CONSTRAINTS,
    IS_TABLES,
    IS_VIEWS,
    PG_AM,
    PG_ATTRDEF,
    PG_ATTRIBUTE,
    PG_AUTH_MEMBERS,
    PG_AUTHID,
    PG_CLASS,
    PG_COLLATION,
    PG_CONSTRAINT,
    PG_CURSORS,
    PG_PREPARED_STATEMENTS,
    PG_DATABASE,
    PG_DEPEND,
    PG_DESCRIPTION,
    PG_ENUM,
    PG_EVENT_TRIGGER,
    PG_EXTENSION,
    PG_FOREIGN_DATA_WRAPPER,
    PG_FOREIGN_SERVER,
    PG_FOREIGN_TABLE,
    PG_INDEX,
    PG_INDEXES,
    PG_INHERITS,
    PG_LANGUAGE,
    PG_MATVIEWS,
    PG_NAMESPACE,
    PG_OPCLASS,
    PG_PARTITIONED_TABLE,
    PG_POLICY,
    PG_PROC,
    PG_PUBLICATION,
    PG_PUBLICATION_NAMESPACE,
    PG_PUBLICATION_REL,
    PG_RANGE,
    PG_REWRITE,
    PG_ROLES,
    PG_SEQUENCE,
    PG_SEQUENCES,
    PG_SETTINGS,
    PG_SHDESCRIPTION,
    PG_STAT_ACTIVITY,
    PG_STAT_USER_TABLES,
    PG_STATISTIC_EXT,
    PG_TABLES,
    PG_TABLESPACE,
    PG_TRIGGER,
    PG_TYPE,
    PG_USER,
    PG_USER_MAPPING,
    PG_VIEWS,
];
