//! Rows of the relations that describe relations: `pg_class`,
//! `pg_attribute`, `pg_index`, `pg_constraint`, `pg_attrdef`, `pg_type`,
//! `pg_namespace`, `pg_am`, `pg_opclass`, `pg_collation`, `pg_tables`,
//! `pg_views`, `pg_indexes` and `information_schema`'s tables, columns,
//! views, constraints and schemata, all from one catalog snapshot.
//!
//! Every relation — a table, a view, an index, a system relation — is first
//! described as a [`Class`], from which `pg_class`, `pg_attribute` and the
//! views over them are derived, so that they always agree.

use super::defs;
use super::oids::*;
use super::values::*;
use super::{deparse, Kind, RelationDef, Schema, SessionInfo};
use std::collections::HashMap;
use tusk_exec::{Result, Value};
use tusk_storage::sequence::{Identity, SequenceDef};
use tusk_storage::{AccessMethod, Catalog, DataType, IndexDef, IndexKind, SqlType, TableDef};

/// One attribute of a relation.
pub(super) struct Attribute {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
    /// The DEFAULT expression's SQL text (none for an identity column,
    /// whose sequence is implicit, as in PostgreSQL).
    pub default: Option<String>,
    /// An identity column's sequence (`GENERATED ... AS IDENTITY`).
    pub identity: Option<SequenceDef>,
}

/// Every identity column's sequence, by (table oid, column number), from
/// one pass over the catalog.
pub(crate) fn identity_columns(catalog: &Catalog) -> HashMap<(u32, usize), &SequenceDef> {
    catalog
        .tables()
        .filter_map(|t| {
            let s = t.sequence.as_ref()?;
            Some((s.owned_by?, s)).filter(|_| s.identity.is_some())
        })
        .collect()
}

/// A relation as `pg_class` lists it.
pub(super) struct Class<'c> {
    pub oid: u32,
    pub name: String,
    pub namespace: u32,
    /// `r` table, `v` view, `i` index, `S` sequence.
    pub kind: char,
    pub am: u32,
    pub attributes: Vec<Attribute>,
    pub table: Option<&'c TableDef>,
}

/// Every relation of `catalog`, then the system relations.
pub(super) fn classes(catalog: &Catalog) -> Vec<Class<'_>> {
    let mut out = Vec::new();
    let identities = identity_columns(catalog);
    for t in catalog.tables() {
        out.push(Class {
            oid: t.oid,
            name: t.name.clone(),
            namespace: PUBLIC_NAMESPACE,
            kind: if t.is_view() {
                'v'
            } else if t.is_sequence() {
                'S'
            } else {
                'r'
            },
            am: match t.access_method {
                _ if t.is_view() || t.is_sequence() => 0,
                AccessMethod::Heap => HEAP_AM,
                AccessMethod::Columnar => COLUMNAR_AM,
            },
            attributes: t
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let identity = identities.get(&(t.oid, i)).map(|s| (*s).clone());
                    Attribute {
                        name: c.name.clone(),
                        ty: c.ty,
                        not_null: c.not_null,
                        default: c.default.clone().filter(|_| identity.is_none()),
                        identity,
                    }
                })
                .collect(),
            table: Some(t),
        });
        for i in catalog.indexes_of(t.oid) {
            out.push(Class {
                oid: i.oid,
                name: i.name.clone(),
                namespace: PUBLIC_NAMESPACE,
                kind: 'i',
                am: BTREE_AM,
                attributes: i
                    .columns
                    .iter()
                    .map(|k| {
                        let c = &t.columns[k.attno];
                        Attribute {
                            name: c.name.clone(),
                            ty: c.ty,
                            not_null: false,
                            default: None,
                            identity: None,
                        }
                    })
                    .collect(),
                table: Some(t),
            });
        }
    }
    for d in defs::ALL {
        out.push(Class {
            oid: d.oid,
            name: d.name.to_string(),
            namespace: d.schema.oid(),
            kind: if d.kind == Kind::Table { 'r' } else { 'v' },
            am: if d.kind == Kind::Table { HEAP_AM } else { 0 },
            attributes: d
                .columns
                .iter()
                .map(|(n, t)| Attribute {
                    name: n.to_string(),
                    ty: *t,
                    not_null: false,
                    default: None,
                    identity: None,
                })
                .collect(),
            table: None,
        });
    }
    out
}

/// The index kinds that stand for constraints, and their `contype`.
fn constraint_type(kind: IndexKind) -> Option<char> {
    match kind {
        IndexKind::PrimaryKey => Some('p'),
        IndexKind::UniqueConstraint => Some('u'),
        IndexKind::Plain | IndexKind::Unique => None,
    }
}

/// A DEFAULT as `pg_attrdef.adbin` holds it: its SQL text with the
/// coercion to the column's type, which PostgreSQL's stored tree has (and
/// `pg_get_expr` does not show at the top).
pub(super) fn stored_default(sql: &str, ty: SqlType) -> String {
    format!("({sql})::{}", ty.display_name())
}

/// The oid of column `attnum`'s default in `pg_attrdef` (tusk keeps no oid
/// for a default: this one is derived from the relation and the column,
/// in a range above the oids tusk allocates).
pub(super) fn attrdef_oid(relid: u32, attnum: usize) -> u32 {
    0x8000_0000 | relid.wrapping_mul(1600).wrapping_add(attnum as u32)
}

fn relation_size(info: Option<&SessionInfo>, oid: u32) -> i32 {
    info.and_then(|i| i.database().nblocks(oid).ok())
        .map_or(0, |n| n as i32)
}

/// `pg_class.reltuples`: for a table, the rows its last ANALYZE counted
/// (-1 before the first, as in PostgreSQL); 0 for an index, whose count
/// tusk does not keep.
fn reltuples(info: Option<&SessionInfo>, c: &Class) -> f32 {
    match c.kind {
        'i' => 0.0,
        'r' => info
            .and_then(|i| i.database().statistics.get(c.oid))
            .map_or(-1.0, |st| st.reltuples as f32),
        _ => -1.0,
    }
}

/// The rows of a `pg_catalog` relation described here (`None`: not one of
/// these).
pub(super) fn rows(
    def: &RelationDef,
    catalog: &Catalog,
    info: Option<&SessionInfo>,
) -> Result<Option<Vec<Vec<Value>>>> {
    let rows = match def.name {
        "pg_class" => classes(catalog)
            .iter()
            .map(|c| {
                let checks = c
                    .table
                    .filter(|_| c.kind == 'r')
                    .map_or(0, |t| t.checks.len());
                let has_index = c.kind == 'r'
                    && c.table
                        .is_some_and(|t| catalog.indexes_of(t.oid).next().is_some());
                let pages = if c.kind == 'v' || c.table.is_none() {
                    0
                } else {
                    relation_size(info, c.oid)
                };
                vec![
                    oid(c.oid),
                    name(&c.name),
                    oid(c.namespace),
                    oid(0),
                    oid(0),
                    oid(BOOTSTRAP_SUPERUSER),
                    oid(c.am),
                    oid(if c.kind == 'v' { 0 } else { c.oid }),
                    oid(0),
                    i4(pages),
                    f4(reltuples(info, c)),
                    i4(0),
                    oid(0),
                    boolean(has_index),
                    boolean(false),
                    ch('p'),
                    ch(c.kind),
                    i2(c.attributes.len() as i16),
                    i2(checks as i16),
                    boolean(c.kind == 'v'),
                    boolean(false),
                    boolean(false),
                    boolean(false),
                    boolean(false),
                    boolean(true),
                    ch(if c.kind == 'r' { 'd' } else { 'n' }),
                    boolean(false),
                    oid(0),
                    xid(if c.kind == 'r' { 716 } else { 0 }),
                    xid(if c.kind == 'r' { 1 } else { 0 }),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]
            })
            .collect(),
        "pg_attribute" => {
            let mut out = Vec::new();
            for c in classes(catalog) {
                if c.kind == 'r' {
                    out.extend(system_attributes(c.oid));
                }
                for (i, a) in c.attributes.iter().enumerate() {
                    let ty = a.ty.data_type();
                    let (byval, align, storage) = type_storage(ty);
                    out.push(vec![
                        oid(c.oid),
                        name(&a.name),
                        oid(ty.oid()),
                        i4(-1),
                        i2(ty.pg_typlen()),
                        i2(i as i16 + 1),
                        i4(i32::from(
                            ty.is_array()
                                && !matches!(ty, DataType::Int2Vector | DataType::OidVector),
                        )),
                        i4(-1),
                        i4(a.ty.typmod()),
                        boolean(byval),
                        ch(align),
                        ch(storage),
                        text(""),
                        boolean(a.not_null),
                        boolean(a.default.is_some()),
                        boolean(false),
                        a.identity
                            .as_ref()
                            .and_then(|s| s.identity)
                            .map_or(text(""), |k| ch(k.code())),
                        text(""),
                        boolean(false),
                        boolean(true),
                        i4(0),
                        oid(type_collation(ty)),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                    ]);
                }
            }
            out
        }
        "pg_attrdef" => {
            let mut out = Vec::new();
            let identities = identity_columns(catalog);
            for t in catalog.tables() {
                for (i, c) in t.columns.iter().enumerate() {
                    let Some(d) = &c.default else { continue };
                    if !identities.contains_key(&(t.oid, i)) {
                        out.push(vec![
                            oid(attrdef_oid(t.oid, i + 1)),
                            oid(t.oid),
                            i2(i as i16 + 1),
                            text(&stored_default(d, c.ty)),
                        ]);
                    }
                }
            }
            out
        }
        "pg_index" => {
            let mut out = Vec::new();
            for t in catalog.tables() {
                for i in catalog.indexes_of(t.oid) {
                    let n = i.columns.len() as i16;
                    let types: Vec<DataType> = i
                        .columns
                        .iter()
                        .map(|k| t.columns[k.attno].ty.data_type())
                        .collect();
                    let vector = |ty: DataType, items: Vec<Value>| array(ty, items);
                    out.push(vec![
                        oid(i.oid),
                        oid(t.oid),
                        i2(n),
                        i2(n),
                        boolean(i.unique()),
                        boolean(false),
                        boolean(i.kind == IndexKind::PrimaryKey),
                        boolean(false),
                        boolean(true),
                        boolean(false),
                        boolean(true),
                        boolean(false),
                        boolean(true),
                        boolean(true),
                        boolean(false),
                        vector(
                            DataType::Int2Vector,
                            i.columns.iter().map(|k| i2(k.attno as i16 + 1)).collect(),
                        ),
                        vector(
                            DataType::OidVector,
                            types.iter().map(|&t| oid(type_collation(t))).collect(),
                        ),
                        vector(
                            DataType::OidVector,
                            types.iter().map(|&t| oid(btree_opclass(t))).collect(),
                        ),
                        vector(
                            DataType::Int2Vector,
                            i.columns
                                .iter()
                                .map(|k| i2(i16::from(k.desc) | (i16::from(k.nulls_first) << 1)))
                                .collect(),
                        ),
                        Value::Null,
                        Value::Null,
                    ]);
                }
            }
            out
        }
        "pg_constraint" => constraints(catalog)
            .into_iter()
            .map(|c| {
                vec![
                    oid(c.oid),
                    name(c.name),
                    oid(PUBLIC_NAMESPACE),
                    ch(c.contype),
                    boolean(false),
                    boolean(false),
                    boolean(true),
                    oid(c.table.oid),
                    oid(0),
                    oid(c.index.map_or(0, |i| i.oid)),
                    oid(0),
                    oid(0),
                    ch(' '),
                    ch(' '),
                    ch(' '),
                    boolean(true),
                    i4(0),
                    boolean(c.contype != 'c'),
                    array(
                        tusk_storage::INT2_ARRAY,
                        c.columns.iter().map(|&a| i2(a as i16 + 1)).collect(),
                    ),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    c.check.map_or(Value::Null, text),
                ]
            })
            .collect(),
        "pg_namespace" => NAMESPACES
            .iter()
            .map(|&(o, n, owner)| vec![oid(o), name(n), oid(owner), Value::Null])
            .collect(),
        "pg_am" => vec![
            vec![
                oid(HEAP_AM),
                name("heap"),
                reg(DataType::RegProc, 3),
                ch('t'),
            ],
            vec![
                oid(BTREE_AM),
                name("btree"),
                reg(DataType::RegProc, 330),
                ch('i'),
            ],
            // No handler function: tusk's access methods are built in.
            vec![
                oid(COLUMNAR_AM),
                name(AccessMethod::Columnar.name()),
                reg(DataType::RegProc, 0),
                ch('t'),
            ],
        ],
        "pg_type" => types(),
        "pg_opclass" => BTREE_OPCLASSES
            .iter()
            .map(|&(o, n, family, ty)| {
                vec![
                    oid(o),
                    oid(BTREE_AM),
                    name(n),
                    oid(PG_CATALOG_NAMESPACE),
                    oid(BOOTSTRAP_SUPERUSER),
                    oid(family),
                    oid(ty.oid()),
                    boolean(true),
                    oid(0),
                ]
            })
            .collect(),
        "pg_collation" => [
            (DEFAULT_COLLATION, "default", 'd', -1, None),
            (C_COLLATION, "C", 'c', -1, Some("C")),
            (POSIX_COLLATION, "POSIX", 'c', -1, Some("POSIX")),
        ]
        .into_iter()
        .map(|(o, n, provider, encoding, locale)| {
            let locale = || locale.map_or(Value::Null, text);
            vec![
                oid(o),
                name(n),
                oid(PG_CATALOG_NAMESPACE),
                oid(BOOTSTRAP_SUPERUSER),
                ch(provider),
                boolean(true),
                i4(encoding),
                locale(),
                locale(),
                Value::Null,
                Value::Null,
            ]
        })
        .collect(),
        "pg_language" => [(INTERNAL_LANGUAGE, "internal"), (13, "c"), (14, "sql")]
            .into_iter()
            .map(|(o, n)| {
                vec![
                    oid(o),
                    name(n),
                    oid(BOOTSTRAP_SUPERUSER),
                    boolean(false),
                    boolean(o == 14),
                    oid(0),
                    oid(0),
                    oid(0),
                    Value::Null,
                ]
            })
            .collect(),
        "pg_tablespace" => [
            (DEFAULT_TABLESPACE, "pg_default"),
            (GLOBAL_TABLESPACE, "pg_global"),
        ]
        .into_iter()
        .map(|(o, n)| {
            vec![
                oid(o),
                name(n),
                oid(BOOTSTRAP_SUPERUSER),
                Value::Null,
                Value::Null,
            ]
        })
        .collect(),
        "pg_tables" => catalog
            .tables()
            .filter(|t| t.is_plain_table())
            .map(|t| {
                vec![
                    name("public"),
                    name(&t.name),
                    name(BOOTSTRAP_SUPERUSER_NAME),
                    Value::Null,
                    boolean(catalog.indexes_of(t.oid).next().is_some()),
                    boolean(false),
                    boolean(false),
                    boolean(false),
                ]
            })
            .collect(),
        "pg_sequence" => catalog
            .tables()
            .filter_map(|t| Some((t, t.sequence.as_ref()?)))
            .map(|(t, s)| {
                vec![
                    oid(t.oid),
                    oid(s.ty.oid()),
                    i8(s.start),
                    i8(s.increment),
                    i8(s.max),
                    i8(s.min),
                    i8(s.cache),
                    boolean(s.cycle),
                ]
            })
            .collect(),
        "pg_sequences" => catalog
            .tables()
            .filter_map(|t| Some((t, t.sequence.as_ref()?)))
            .map(|(t, s)| {
                // NULL until the first nextval, as in PostgreSQL.
                let last = info
                    .and_then(|i| {
                        tusk_storage::sequence::read_state(&i.database().pool, t.oid).ok()
                    })
                    .filter(|st| st.is_called)
                    .map_or(Value::Null, |st| i8(st.last_value));
                vec![
                    name("public"),
                    name(&t.name),
                    name(BOOTSTRAP_SUPERUSER_NAME),
                    reg(DataType::RegType, s.ty.oid()),
                    i8(s.start),
                    i8(s.min),
                    i8(s.max),
                    i8(s.increment),
                    boolean(s.cycle),
                    i8(s.cache),
                    last,
                ]
            })
            .collect(),
        "pg_views" => catalog
            .tables()
            .filter(|t| t.is_view())
            .map(|t| {
                vec![
                    name("public"),
                    name(&t.name),
                    name(BOOTSTRAP_SUPERUSER_NAME),
                    text(&deparse::view_definition(t)),
                ]
            })
            .collect(),
        "pg_indexes" => {
            let mut out = Vec::new();
            for t in catalog.tables() {
                for i in catalog.indexes_of(t.oid) {
                    out.push(vec![
                        name("public"),
                        name(&t.name),
                        name(&i.name),
                        Value::Null,
                        text(&deparse::index_definition(t, i, None)),
                    ]);
                }
            }
            out
        }
        _ => return Ok(None),
    };
    Ok(Some(rows))
}

/// The system columns PostgreSQL lists for a table: (name, type oid,
/// length, attribute number).
const SYSTEM_ATTRIBUTES: [(&str, u32, i16, i16); 6] = [
    ("tableoid", 26, 4, -6),
    ("cmax", 29, 4, -5),
    ("xmax", 28, 4, -4),
    ("cmin", 29, 4, -3),
    ("xmin", 28, 4, -2),
    ("ctid", 27, 6, -1),
];

/// `pg_attribute`'s rows of a table's system columns.
fn system_attributes(relid: u32) -> impl Iterator<Item = Vec<Value>> {
    SYSTEM_ATTRIBUTES.into_iter().map(move |(n, ty, len, num)| {
        vec![
            oid(relid),
            name(n),
            oid(ty),
            i4(0),
            i2(len),
            i2(num),
            i4(0),
            i4(-1),
            i4(-1),
            boolean(ty != 27),
            ch(if ty == 27 { 's' } else { 'i' }),
            ch('p'),
            text(""),
            boolean(true),
            boolean(false),
            boolean(false),
            text(""),
            text(""),
            boolean(false),
            boolean(true),
            i4(0),
            oid(0),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ]
    })
}

/// A constraint as `pg_constraint` lists it.
pub(super) struct Constraint<'c> {
    pub oid: u32,
    pub name: &'c str,
    pub contype: char,
    pub table: &'c TableDef,
    pub index: Option<&'c IndexDef>,
    /// Attribute numbers (from 0) of the key columns.
    pub columns: Vec<usize>,
    /// A CHECK's condition (SQL text).
    pub check: Option<&'c str>,
}

/// Every table's constraints: its PRIMARY KEY and UNIQUE constraints (their
/// indexes), then its CHECKs.
pub(super) fn constraints(catalog: &Catalog) -> Vec<Constraint<'_>> {
    let mut out = Vec::new();
    for t in catalog.tables() {
        for i in catalog.indexes_of(t.oid) {
            if let Some(contype) = constraint_type(i.kind) {
                out.push(Constraint {
                    oid: i.oid,
                    name: &i.name,
                    contype,
                    table: t,
                    index: Some(i),
                    columns: i.columns.iter().map(|k| k.attno).collect(),
                    check: None,
                });
            }
        }
        for c in &t.checks {
            out.push(Constraint {
                oid: c.oid,
                name: &c.name,
                contype: 'c',
                table: t,
                index: None,
                columns: check_columns(t, &c.expr),
                check: Some(&c.expr),
            });
        }
    }
    out
}

/// The columns a CHECK condition mentions, in table order (`conkey`).
fn check_columns(t: &TableDef, expr: &str) -> Vec<usize> {
    let words: Vec<String> = crate::parse::lex(expr)
        .map(|tokens| {
            tokens
                .into_iter()
                .filter_map(|t| match t.token {
                    sqlparser::tokenizer::Token::Word(w) => Some(match w.quote_style {
                        Some(_) => w.value,
                        None => w.value.to_ascii_lowercase(),
                    }),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    (0..t.columns.len())
        .filter(|&i| words.contains(&t.columns[i].name))
        .collect()
}

/// `pg_type`: every scalar type, then every array type.
fn types() -> Vec<Vec<Value>> {
    let all = tusk_storage::datatype::SCALAR_TYPES.into_iter().chain(
        tusk_storage::datatype::ELEMENT_TYPES
            .iter()
            .filter_map(|t| t.array_of()),
    );
    all.map(|ty| {
        let (byval, align, storage) = type_storage(ty);
        let [input, output, receive, send] = type_functions(ty);
        // `name` is subscriptable as an array of "char", as in PostgreSQL.
        let element = match ty {
            DataType::Name => DataType::Char.oid(),
            t => t.element().map_or(0, |e| e.oid()),
        };
        let category = tusk_exec::cast::type_category(ty);
        vec![
            oid(ty.oid()),
            name(ty.type_name()),
            oid(PG_CATALOG_NAMESPACE),
            oid(BOOTSTRAP_SUPERUSER),
            i2(ty.pg_typlen()),
            boolean(byval),
            ch('b'),
            ch(category),
            boolean(tusk_exec::cast::is_preferred(ty)),
            boolean(true),
            ch(','),
            oid(0),
            regproc_named(match ty {
                DataType::Name => "raw_array_subscript_handler",
                t if t.is_array() => "array_subscript_handler",
                _ => "-",
            }),
            oid(element),
            oid(ty.array_of().map_or(0, |a| a.oid())),
            regproc_named(&input),
            regproc_named(&output),
            regproc_named(&receive),
            regproc_named(&send),
            regproc_named("-"),
            regproc_named("-"),
            regproc_named("-"),
            ch(align),
            ch(storage),
            boolean(false),
            oid(0),
            i4(-1),
            i4(0),
            oid(type_collation(ty)),
            Value::Null,
            Value::Null,
            Value::Null,
        ]
    })
    .collect()
}

/// `information_schema`'s relations.
pub(super) fn information_schema(
    def: &RelationDef,
    catalog: &Catalog,
    info: Option<&SessionInfo>,
) -> Vec<Vec<Value>> {
    debug_assert_eq!(def.schema, Schema::InformationSchema);
    let db = info.map_or_else(|| "tusk".to_string(), |i| i.database_name());
    let yes_no = |b: bool| text(if b { "YES" } else { "NO" });
    let user_relations = || {
        classes(catalog)
            .into_iter()
            .filter(|c| c.kind != 'i')
            .collect::<Vec<_>>()
    };
    match def.name {
        "tables" => user_relations()
            .iter()
            .map(|c| {
                let ns = namespace_name(c.namespace).unwrap_or("public");
                vec![
                    name(&db),
                    name(ns),
                    name(&c.name),
                    text(if c.kind == 'v' { "VIEW" } else { "BASE TABLE" }),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    yes_no(c.kind == 'r' && c.namespace == PUBLIC_NAMESPACE),
                    yes_no(false),
                    Value::Null,
                ]
            })
            .collect(),
        "columns" => {
            let mut out = Vec::new();
            for c in user_relations() {
                let ns = namespace_name(c.namespace).unwrap_or("public");
                for (i, a) in c.attributes.iter().enumerate() {
                    out.push(column_row(catalog, &db, ns, &c, i, a));
                }
            }
            out
        }
        "views" => catalog
            .tables()
            .filter(|t| t.is_view())
            .map(|t| {
                vec![
                    name(&db),
                    name("public"),
                    name(&t.name),
                    text(&deparse::view_definition(t)),
                    text("NONE"),
                    yes_no(false),
                    yes_no(false),
                    yes_no(false),
                    yes_no(false),
                    yes_no(false),
                ]
            })
            .collect(),
        "schemata" => NAMESPACES
            .iter()
            .map(|&(_, n, owner)| {
                let owner = if owner == PG_DATABASE_OWNER {
                    "pg_database_owner"
                } else {
                    BOOTSTRAP_SUPERUSER_NAME
                };
                vec![
                    name(&db),
                    name(n),
                    name(owner),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]
            })
            .collect(),
        "table_constraints" => {
            let mut out = Vec::new();
            for c in constraints(catalog) {
                let kind = match c.contype {
                    'p' => "PRIMARY KEY",
                    'u' => "UNIQUE",
                    _ => "CHECK",
                };
                out.push(vec![
                    name(&db),
                    name("public"),
                    name(c.name),
                    name(&db),
                    name("public"),
                    name(&c.table.name),
                    text(kind),
                    yes_no(false),
                    yes_no(false),
                    yes_no(true),
                    if c.contype == 'c' {
                        Value::Null
                    } else {
                        yes_no(true)
                    },
                ]);
            }
            // NOT NULL columns are CHECK constraints here, as in PostgreSQL.
            for t in catalog.tables().filter(|t| !t.is_view()) {
                for (i, col) in t.columns.iter().enumerate() {
                    if col.not_null {
                        out.push(vec![
                            name(&db),
                            name("public"),
                            name(&format!(
                                "{}_{}_{}_not_null",
                                PUBLIC_NAMESPACE,
                                t.oid,
                                i + 1
                            )),
                            name(&db),
                            name("public"),
                            name(&t.name),
                            text("CHECK"),
                            yes_no(false),
                            yes_no(false),
                            yes_no(true),
                            Value::Null,
                        ]);
                    }
                }
            }
            out
        }
        "key_column_usage" => {
            let mut out = Vec::new();
            for c in constraints(catalog)
                .into_iter()
                .filter(|c| c.contype != 'c')
            {
                for (pos, &attno) in c.columns.iter().enumerate() {
                    out.push(vec![
                        name(&db),
                        name("public"),
                        name(c.name),
                        name(&db),
                        name("public"),
                        name(&c.table.name),
                        name(&c.table.columns[attno].name),
                        i4(pos as i32 + 1),
                        Value::Null,
                    ]);
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// One row of `information_schema.columns`.
fn column_row(
    catalog: &Catalog,
    db: &str,
    ns: &str,
    c: &Class,
    i: usize,
    a: &Attribute,
) -> Vec<Value> {
    let ty = a.ty.data_type();
    let yes_no = |b: bool| text(if b { "YES" } else { "NO" });
    let int = |v: Option<i64>| v.map_or(Value::Null, |v| i4(v as i32));
    // The standard's name for the type (`data_type`).
    let data_type = match ty {
        DataType::Array(_) | DataType::Int2Vector | DataType::OidVector => "ARRAY".to_string(),
        DataType::Name | DataType::Char | DataType::NodeTree | DataType::Xid => {
            "USER-DEFINED".to_string()
        }
        t if t.is_oid() => t.type_name().to_string(),
        t => t.display_name().to_string(),
    };
    let (char_len, octet_len) = match a.ty {
        SqlType::Varchar(Some(n)) | SqlType::Char(n) if n > 0 => {
            (Some(n as i64), Some(n as i64 * 4))
        }
        SqlType::Varchar(None) | SqlType::Text => (None, Some(1_073_741_824)),
        _ => (None, None),
    };
    let (precision, radix, scale) = match a.ty {
        SqlType::Int2 => (Some(16), Some(2), Some(0)),
        SqlType::Int4 => (Some(32), Some(2), Some(0)),
        SqlType::Int8 => (Some(64), Some(2), Some(0)),
        SqlType::Float4 => (Some(24), Some(2), None),
        SqlType::Float8 => (Some(53), Some(2), None),
        SqlType::Numeric(Some((p, s))) => (Some(p as i64), Some(10), Some(s as i64)),
        SqlType::Numeric(None) => (None, Some(10), None),
        _ => (None, None, None),
    };
    let datetime_precision = match a.ty {
        SqlType::Date => Some(0),
        SqlType::Time(p) | SqlType::Timestamp(p) | SqlType::TimestampTz(p) => {
            Some(p.map_or(6, i64::from))
        }
        SqlType::Interval(m) => Some(m.and_then(|m| m.precision).map_or(6, i64::from)),
        _ => None,
    };
    let collatable = type_collation(ty) != 0;
    let udt = ty.type_name();
    let nullable = !a.not_null;
    vec![
        name(db),
        name(ns),
        name(&c.name),
        name(&a.name),
        i4(i as i32 + 1),
        a.default.as_deref().map_or(Value::Null, |d| {
            text(&deparse::stored_expression_text(
                catalog,
                c.table,
                &stored_default(d, a.ty),
            ))
        }),
        yes_no(nullable),
        text(&data_type),
        int(char_len),
        int(octet_len),
        int(precision),
        int(radix),
        int(scale),
        int(datetime_precision),
        match a.ty {
            SqlType::Interval(Some(m)) if !m.qualifier().is_empty() => {
                text(&m.qualifier().trim().to_uppercase())
            }
            _ => Value::Null,
        },
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        if collatable { name(db) } else { Value::Null },
        if collatable {
            name("pg_catalog")
        } else {
            Value::Null
        },
        if collatable {
            name(if ty == DataType::Name { "C" } else { "default" })
        } else {
            Value::Null
        },
        Value::Null,
        Value::Null,
        Value::Null,
        name(db),
        name("pg_catalog"),
        name(udt),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        name(&(i + 1).to_string()),
        yes_no(false),
        yes_no(a.identity.is_some()),
        identity_text(a, |s| {
            match s.identity {
                Some(Identity::Always) => "ALWAYS",
                _ => "BY DEFAULT",
            }
            .to_string()
        }),
        identity_text(a, |s| s.start.to_string()),
        identity_text(a, |s| s.increment.to_string()),
        identity_text(a, |s| s.max.to_string()),
        identity_text(a, |s| s.min.to_string()),
        yes_no(a.identity.as_ref().is_some_and(|s| s.cycle)),
        text("NEVER"),
        Value::Null,
        yes_no(c.kind == 'r' && c.namespace == PUBLIC_NAMESPACE),
    ]
}

/// An identity column's parameter for `information_schema.columns`
/// (NULL for other columns).
fn identity_text(a: &Attribute, f: impl Fn(&SequenceDef) -> String) -> Value {
    a.identity.as_ref().map_or(Value::Null, |s| text(&f(s)))
}
