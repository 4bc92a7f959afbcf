//! SQL types: [`DataType`] (a type without its modifier) and [`SqlType`]
//! (with it), PostgreSQL's names and type oids for each.
//!
//! Beside the types tables store, there are the types of PostgreSQL's
//! system catalogs, which `pg_catalog` relations and the functions over
//! them use (see tusk-sql's `catalog` module):
//!
//! - `oid` and the *reg* types (`regclass`, `regtype`, `regproc`,
//!   `regnamespace`, `regrole`): object identifiers, unsigned 32-bit. A reg
//!   type is an oid that reads and prints as the object's name
//!   (`'t'::regclass`, `c.oid::regclass`); the name lookup is the session's
//!   (tusk-exec's `session` module). `xid` is a transaction id.
//! - `name` (an identifier of at most 63 bytes), `"char"` (one byte) and
//!   `pg_node_tree` (an expression as a catalog stores it: tusk keeps the
//!   expression's SQL text) are strings.
//! - Arrays ([`DataType::Array`]): one-dimensional arrays of any scalar type,
//!   each with PostgreSQL's array type oid (`integer[]` is `_int4`, 1007),
//!   and `int2vector` / `oidvector`, PostgreSQL's zero-based arrays that
//!   print space-separated (`pg_index.indkey`).
//!
//! Tables store only the types of [`STORABLE_TYPES`]; the catalog types
//! appear in query results, expressions and parameters.

/// The type of a column or value: one of PostgreSQL's built-in types, without
/// its modifier (see [`SqlType`] for that).
///
/// Several types share one in-memory representation (`physical` in
/// tusk-exec's vectors): `date` is a 32-bit day number, `time`, `timestamp`
/// and `timestamptz` are 64-bit microsecond counts, `varchar` and `bpchar`
/// are strings like `text`; `oid`, the reg types and `xid` are 64-bit
/// integers holding an unsigned 32-bit value. Dates and timestamps count
/// from 2000-01-01, as PostgreSQL's do, so that the binary wire format is
/// the stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    /// `character varying`: text with an optional length limit.
    Varchar,
    /// `character(n)`: blank-padded; trailing blanks do not count in comparisons.
    Bpchar,
    Date,
    Time,
    Timestamp,
    TimestampTz,
    Interval,
    /// `bytea`: a string of bytes.
    Bytea,
    /// `uuid`: a 128-bit identifier; held as a `u128` read big-endian, so
    /// that integer order is PostgreSQL's byte-wise order.
    Uuid,
    /// `oid`: an object identifier.
    Oid,
    /// `regclass`: a relation's oid, read and printed as its name.
    RegClass,
    /// `regtype`: a type's oid, read and printed as its name.
    RegType,
    /// `regproc`: a function's oid, read and printed as its name.
    RegProc,
    /// `regnamespace`: a schema's oid, read and printed as its name.
    RegNamespace,
    /// `regrole`: a role's oid, read and printed as its name.
    RegRole,
    /// `xid`: a transaction id.
    Xid,
    /// `name`: an identifier (at most 63 bytes).
    Name,
    /// `"char"`: a single byte (`pg_class.relkind`).
    Char,
    /// `pg_node_tree`: a stored expression (tusk: its SQL text).
    NodeTree,
    /// `int2vector`: a zero-based array of `smallint`, printed space-separated.
    Int2Vector,
    /// `oidvector`: a zero-based array of `oid`, printed space-separated.
    OidVector,
    /// `json`: a JSON document kept as its input text.
    Json,
    /// `jsonb`: a JSON document in PostgreSQL's normal form; held as that
    /// form's text (tusk-types' `json::Jsonb` reads and writes it).
    Jsonb,
    /// A one-dimensional array of the element type.
    Array(ElementType),
}

/// The element type of an array type: one of [`ELEMENT_TYPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ElementType(u8);

/// A type that arrays can hold, with its array type's names and oid.
struct ArrayInfo {
    element: DataType,
    /// `format_type` of the array type (`integer[]`).
    display: &'static str,
    /// `pg_type.typname` of the array type (`_int4`).
    typname: &'static str,
    oid: u32,
}

macro_rules! array_types {
    ($($t:ident $display:literal $typname:literal $oid:literal,)*) => {
        const ARRAYS: &[ArrayInfo] = &[
            $(ArrayInfo { element: DataType::$t, display: $display, typname: $typname, oid: $oid },)*
        ];
        /// The types arrays can hold.
        pub const ELEMENT_TYPES: &[DataType] = &[$(DataType::$t,)*];
    };
}

array_types! {
    Bool "boolean[]" "_bool" 1000,
    Int2 "smallint[]" "_int2" 1005,
    Int4 "integer[]" "_int4" 1007,
    Int8 "bigint[]" "_int8" 1016,
    Float4 "real[]" "_float4" 1021,
    Float8 "double precision[]" "_float8" 1022,
    Numeric "numeric[]" "_numeric" 1231,
    Text "text[]" "_text" 1009,
    Varchar "character varying[]" "_varchar" 1015,
    Bpchar "character[]" "_bpchar" 1014,
    Date "date[]" "_date" 1182,
    Time "time without time zone[]" "_time" 1183,
    Timestamp "timestamp without time zone[]" "_timestamp" 1115,
    TimestampTz "timestamp with time zone[]" "_timestamptz" 1185,
    Interval "interval[]" "_interval" 1187,
    Oid "oid[]" "_oid" 1028,
    RegClass "regclass[]" "_regclass" 2210,
    RegType "regtype[]" "_regtype" 2211,
    RegProc "regproc[]" "_regproc" 1008,
    RegNamespace "regnamespace[]" "_regnamespace" 4090,
    RegRole "regrole[]" "_regrole" 4097,
    Xid "xid[]" "_xid" 1011,
    Name "name[]" "_name" 1003,
    Char "\"char\"[]" "_char" 1002,
    Int2Vector "int2vector[]" "_int2vector" 1006,
    OidVector "oidvector[]" "_oidvector" 1013,
    Bytea "bytea[]" "_bytea" 1001,
    Uuid "uuid[]" "_uuid" 2951,
    Json "json[]" "_json" 199,
    Jsonb "jsonb[]" "_jsonb" 3807,
}

/// Array types built-in functions return (`ElementType`'s index follows
/// [`ELEMENT_TYPES`]; a test checks each).
pub const TEXT_ARRAY: DataType = DataType::Array(ElementType(7));
pub const OID_ARRAY: DataType = DataType::Array(ElementType(15));
pub const NAME_ARRAY: DataType = DataType::Array(ElementType(22));
pub const CHAR_ARRAY: DataType = DataType::Array(ElementType(23));
pub const INT2_ARRAY: DataType = DataType::Array(ElementType(1));
pub const FLOAT4_ARRAY: DataType = DataType::Array(ElementType(4));
pub const REGTYPE_ARRAY: DataType = DataType::Array(ElementType(17));

impl ElementType {
    /// The element type.
    pub fn get(self) -> DataType {
        ARRAYS[self.0 as usize].element
    }

    fn info(self) -> &'static ArrayInfo {
        &ARRAYS[self.0 as usize]
    }
}

/// A column's SQL type: the type plus its modifier (length, precision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    /// `numeric` or `numeric(precision, scale)`.
    Numeric(Option<(u16, i16)>),
    Text,
    Varchar(Option<u32>),
    Char(u32),
    Date,
    /// `time[(p)]`: fractional digits of seconds kept (0..=6).
    Time(Option<u8>),
    /// `timestamp[(p)]`.
    Timestamp(Option<u8>),
    /// `timestamptz[(p)]`.
    TimestampTz(Option<u8>),
    /// `interval [fields] [(p)]`.
    Interval(Option<IntervalMod>),
    /// A type without a modifier outside the ones above: `bytea` and `uuid`
    /// (which columns may have), the catalog types and arrays (which they
    /// may not).
    Plain(DataType),
}

/// An `interval` column's modifier: the fields it keeps, as bits from
/// `YEAR` (1) to `SECOND` (32) with 63 for all of them (tusk-types'
/// `interval::parse::fields`), and the fractional digits of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntervalMod {
    pub fields: u8,
    pub precision: Option<u8>,
}

impl IntervalMod {
    const ALL: u8 = 63;

    /// The fields' qualifier as PostgreSQL prints it (` day to second`),
    /// empty for all fields.
    pub fn qualifier(self) -> &'static str {
        match self.fields {
            1 => " year",
            2 => " month",
            4 => " day",
            8 => " hour",
            16 => " minute",
            32 => " second",
            3 => " year to month",
            12 => " day to hour",
            28 => " day to minute",
            60 => " day to second",
            24 => " hour to minute",
            56 => " hour to second",
            48 => " minute to second",
            _ => "",
        }
    }

    /// PostgreSQL's `INTERVAL_TYPMOD(precision, range)`.
    pub(crate) fn pg_typmod(self) -> i32 {
        const PG_BITS: [i32; 6] = [1 << 2, 1 << 1, 1 << 3, 1 << 10, 1 << 11, 1 << 12];
        let range = if self.fields == Self::ALL {
            0x7fff
        } else {
            (0..6)
                .filter(|b| self.fields & (1 << b) != 0)
                .map(|b| PG_BITS[b])
                .sum()
        };
        (range << 16) | self.precision.map_or(0xffff, i32::from)
    }
}

impl SqlType {
    pub fn data_type(self) -> DataType {
        match self {
            SqlType::Bool => DataType::Bool,
            SqlType::Int2 => DataType::Int2,
            SqlType::Int4 => DataType::Int4,
            SqlType::Int8 => DataType::Int8,
            SqlType::Float4 => DataType::Float4,
            SqlType::Float8 => DataType::Float8,
            SqlType::Numeric(_) => DataType::Numeric,
            SqlType::Text => DataType::Text,
            SqlType::Varchar(_) => DataType::Varchar,
            SqlType::Char(_) => DataType::Bpchar,
            SqlType::Date => DataType::Date,
            SqlType::Time(_) => DataType::Time,
            SqlType::Timestamp(_) => DataType::Timestamp,
            SqlType::TimestampTz(_) => DataType::TimestampTz,
            SqlType::Interval(_) => DataType::Interval,
            SqlType::Plain(t) => t,
        }
    }

    /// The type without a modifier.
    pub fn of(ty: DataType) -> SqlType {
        match ty {
            DataType::Bool => SqlType::Bool,
            DataType::Int2 => SqlType::Int2,
            DataType::Int4 => SqlType::Int4,
            DataType::Int8 => SqlType::Int8,
            DataType::Float4 => SqlType::Float4,
            DataType::Float8 => SqlType::Float8,
            DataType::Numeric => SqlType::Numeric(None),
            DataType::Text => SqlType::Text,
            DataType::Varchar => SqlType::Varchar(None),
            // `bpchar` without a length: PostgreSQL's typmod -1.
            DataType::Bpchar => SqlType::Char(0),
            DataType::Date => SqlType::Date,
            DataType::Time => SqlType::Time(None),
            DataType::Timestamp => SqlType::Timestamp(None),
            DataType::TimestampTz => SqlType::TimestampTz(None),
            DataType::Interval => SqlType::Interval(None),
            t => SqlType::Plain(t),
        }
    }

    /// PostgreSQL's `atttypmod`: -1 without a modifier, the length plus 4
    /// for `varchar(n)`/`char(n)`, `((p << 16) | s) + 4` for `numeric(p, s)`,
    /// the precision for `time(p)` and `timestamp(p)`, `(range << 16) | p`
    /// for intervals.
    pub fn typmod(self) -> i32 {
        match self {
            SqlType::Varchar(Some(n)) => n as i32 + 4,
            SqlType::Char(n) if n > 0 => n as i32 + 4,
            SqlType::Numeric(Some((p, s))) => (((p as i32) << 16) | (s as i32 & 0xffff)) + 4,
            SqlType::Time(Some(p))
            | SqlType::Timestamp(Some(p))
            | SqlType::TimestampTz(Some(p)) => p as i32,
            SqlType::Interval(Some(m)) => m.pg_typmod(),
            _ => -1,
        }
    }

    /// The type `ty` with PostgreSQL's `atttypmod` `typmod` (the inverse of
    /// [`SqlType::typmod`]; a modifier the type cannot have is ignored).
    pub fn from_typmod(ty: DataType, typmod: i32) -> SqlType {
        let t = SqlType::of(ty);
        if typmod < 0 {
            return t;
        }
        let precision = u8::try_from(typmod).ok().filter(|p| *p <= 6);
        match ty {
            DataType::Varchar if typmod >= 4 => SqlType::Varchar(Some((typmod - 4) as u32)),
            DataType::Bpchar if typmod >= 4 => SqlType::Char((typmod - 4) as u32),
            DataType::Numeric if typmod >= 4 => {
                let m = typmod - 4;
                SqlType::Numeric(Some(((m >> 16) as u16, (m & 0xffff) as u16 as i16)))
            }
            DataType::Time => SqlType::Time(precision),
            DataType::Timestamp => SqlType::Timestamp(precision),
            DataType::TimestampTz => SqlType::TimestampTz(precision),
            DataType::Interval => {
                let range = typmod >> 16;
                let p = typmod & 0xffff;
                const PG_BITS: [i32; 6] = [1 << 2, 1 << 1, 1 << 3, 1 << 10, 1 << 11, 1 << 12];
                let fields = if range == 0x7fff {
                    IntervalMod::ALL
                } else {
                    (0..6)
                        .filter(|&b| range & PG_BITS[b] != 0)
                        .fold(0u8, |f, b| f | (1 << b))
                };
                SqlType::Interval(Some(IntervalMod {
                    fields,
                    precision: (p != 0xffff).then_some(p as u8),
                }))
            }
            _ => t,
        }
    }

    /// The name PostgreSQL prints (`format_type`).
    pub fn display_name(self) -> String {
        match self {
            SqlType::Varchar(Some(n)) => format!("character varying({n})"),
            SqlType::Char(0) => "bpchar".into(),
            SqlType::Char(n) => format!("character({n})"),
            SqlType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
            SqlType::Time(Some(p)) => format!("time({p}) without time zone"),
            SqlType::Timestamp(Some(p)) => format!("timestamp({p}) without time zone"),
            SqlType::TimestampTz(Some(p)) => format!("timestamp({p}) with time zone"),
            SqlType::Interval(Some(m)) => match m.precision {
                Some(p) => format!("interval{}({p})", m.qualifier()),
                None => format!("interval{}", m.qualifier()),
            },
            other => other.data_type().display_name().into(),
        }
    }

    pub(crate) fn encode(self) -> String {
        match self {
            SqlType::Varchar(Some(n)) => format!("varchar:{n}"),
            SqlType::Char(n) => format!("char:{n}"),
            SqlType::Numeric(Some((p, s))) => format!("numeric:{p}:{s}"),
            SqlType::Time(Some(p)) => format!("time:{p}"),
            SqlType::Timestamp(Some(p)) => format!("timestamp:{p}"),
            SqlType::TimestampTz(Some(p)) => format!("timestamptz:{p}"),
            SqlType::Interval(Some(m)) => {
                format!(
                    "interval:{}:{}",
                    m.fields,
                    m.precision.map_or(-1, i32::from)
                )
            }
            other => other.data_type().type_name().into(),
        }
    }

    pub(crate) fn decode(s: &str) -> Option<SqlType> {
        if let Some(ty) = DataType::from_type_name(s).filter(|t| t.is_storable()) {
            return Some(SqlType::of(ty));
        }
        let mut parts = s.split(':');
        let kind = parts.next()?;
        let n: u32 = parts.next()?.parse().ok()?;
        let t = match kind {
            "varchar" => SqlType::Varchar(Some(n)),
            "char" => SqlType::Char(n),
            "numeric" => {
                SqlType::Numeric(Some((u16::try_from(n).ok()?, parts.next()?.parse().ok()?)))
            }
            "time" => SqlType::Time(Some(u8::try_from(n).ok()?)),
            "timestamp" => SqlType::Timestamp(Some(u8::try_from(n).ok()?)),
            "timestamptz" => SqlType::TimestampTz(Some(u8::try_from(n).ok()?)),
            "interval" => {
                let p: i32 = parts.next()?.parse().ok()?;
                SqlType::Interval(Some(IntervalMod {
                    fields: u8::try_from(n).ok()?,
                    precision: u8::try_from(p).ok(),
                }))
            }
            _ => return None,
        };
        parts.next().is_none().then_some(t)
    }
}

/// The types a table column may have (tuples store them; see `tuple`).
pub const STORABLE_TYPES: [DataType; 19] = [
    DataType::Bool,
    DataType::Int2,
    DataType::Int4,
    DataType::Int8,
    DataType::Float4,
    DataType::Float8,
    DataType::Numeric,
    DataType::Text,
    DataType::Varchar,
    DataType::Bpchar,
    DataType::Date,
    DataType::Time,
    DataType::Timestamp,
    DataType::TimestampTz,
    DataType::Interval,
    DataType::Bytea,
    DataType::Uuid,
    DataType::Json,
    DataType::Jsonb,
];

/// Every scalar type (all but arrays), for tables that map names and
/// numbers onto them.
pub const SCALAR_TYPES: [DataType; 31] = [
    DataType::Bool,
    DataType::Int2,
    DataType::Int4,
    DataType::Int8,
    DataType::Float4,
    DataType::Float8,
    DataType::Numeric,
    DataType::Text,
    DataType::Varchar,
    DataType::Bpchar,
    DataType::Date,
    DataType::Time,
    DataType::Timestamp,
    DataType::TimestampTz,
    DataType::Interval,
    DataType::Bytea,
    DataType::Uuid,
    DataType::Json,
    DataType::Jsonb,
    DataType::Oid,
    DataType::RegClass,
    DataType::RegType,
    DataType::RegProc,
    DataType::RegNamespace,
    DataType::RegRole,
    DataType::Xid,
    DataType::Name,
    DataType::Char,
    DataType::NodeTree,
    DataType::Int2Vector,
    DataType::OidVector,
];

impl DataType {
    /// The name PostgreSQL prints for the type (`format_type` without a modifier).
    pub fn display_name(self) -> &'static str {
        match self {
            DataType::Bool => "boolean",
            DataType::Int2 => "smallint",
            DataType::Int4 => "integer",
            DataType::Int8 => "bigint",
            DataType::Float4 => "real",
            DataType::Float8 => "double precision",
            DataType::Numeric => "numeric",
            DataType::Text => "text",
            DataType::Varchar => "character varying",
            DataType::Bpchar => "character",
            DataType::Date => "date",
            DataType::Time => "time without time zone",
            DataType::Timestamp => "timestamp without time zone",
            DataType::TimestampTz => "timestamp with time zone",
            DataType::Interval => "interval",
            DataType::Char => "\"char\"",
            DataType::Array(e) => e.info().display,
            other => other.type_name(),
        }
    }

    /// The internal name (`pg_type.typname`), also the catalog file's spelling.
    pub fn type_name(self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Int2 => "int2",
            DataType::Int4 => "int4",
            DataType::Int8 => "int8",
            DataType::Float4 => "float4",
            DataType::Float8 => "float8",
            DataType::Numeric => "numeric",
            DataType::Text => "text",
            DataType::Varchar => "varchar",
            DataType::Bpchar => "bpchar",
            DataType::Date => "date",
            DataType::Time => "time",
            DataType::Timestamp => "timestamp",
            DataType::TimestampTz => "timestamptz",
            DataType::Interval => "interval",
            DataType::Bytea => "bytea",
            DataType::Uuid => "uuid",
            DataType::Json => "json",
            DataType::Jsonb => "jsonb",
            DataType::Oid => "oid",
            DataType::RegClass => "regclass",
            DataType::RegType => "regtype",
            DataType::RegProc => "regproc",
            DataType::RegNamespace => "regnamespace",
            DataType::RegRole => "regrole",
            DataType::Xid => "xid",
            DataType::Name => "name",
            DataType::Char => "char",
            DataType::NodeTree => "pg_node_tree",
            DataType::Int2Vector => "int2vector",
            DataType::OidVector => "oidvector",
            DataType::Array(e) => e.info().typname,
        }
    }

    /// Inverse of [`DataType::type_name`] (array types by their `_elem` name).
    pub fn from_type_name(name: &str) -> Option<DataType> {
        SCALAR_TYPES
            .into_iter()
            .find(|t| t.type_name() == name)
            .or_else(|| {
                ARRAYS
                    .iter()
                    .position(|a| a.typname == name)
                    .map(|i| DataType::Array(ElementType(i as u8)))
            })
    }

    /// PostgreSQL's type oid (`pg_type.oid`), as the wire protocol sends it.
    pub fn oid(self) -> u32 {
        match self {
            DataType::Bool => 16,
            DataType::Int2 => 21,
            DataType::Int4 => 23,
            DataType::Int8 => 20,
            DataType::Float4 => 700,
            DataType::Float8 => 701,
            DataType::Numeric => 1700,
            DataType::Text => 25,
            DataType::Varchar => 1043,
            DataType::Bpchar => 1042,
            DataType::Date => 1082,
            DataType::Time => 1083,
            DataType::Timestamp => 1114,
            DataType::TimestampTz => 1184,
            DataType::Interval => 1186,
            DataType::Bytea => 17,
            DataType::Uuid => 2950,
            DataType::Json => 114,
            DataType::Jsonb => 3802,
            DataType::Oid => 26,
            DataType::RegClass => 2205,
            DataType::RegType => 2206,
            DataType::RegProc => 24,
            DataType::RegNamespace => 4089,
            DataType::RegRole => 4096,
            DataType::Xid => 28,
            DataType::Name => 19,
            DataType::Char => 18,
            DataType::NodeTree => 194,
            DataType::Int2Vector => 22,
            DataType::OidVector => 30,
            DataType::Array(e) => e.info().oid,
        }
    }

    /// Inverse of [`DataType::oid`].
    pub fn from_oid(oid: u32) -> Option<DataType> {
        SCALAR_TYPES
            .into_iter()
            .find(|t| t.oid() == oid)
            .or_else(|| {
                ARRAYS
                    .iter()
                    .position(|a| a.oid == oid)
                    .map(|i| DataType::Array(ElementType(i as u8)))
            })
    }

    /// The array type of this element type (`None` for arrays and
    /// `pg_node_tree`, which have none).
    pub fn array_of(self) -> Option<DataType> {
        ARRAYS
            .iter()
            .position(|a| a.element == self)
            .map(|i| DataType::Array(ElementType(i as u8)))
    }

    /// The element type of an array type, `int2vector` (`smallint`) or
    /// `oidvector` (`oid`).
    pub fn element(self) -> Option<DataType> {
        match self {
            DataType::Array(e) => Some(e.get()),
            DataType::Int2Vector => Some(DataType::Int2),
            DataType::OidVector => Some(DataType::Oid),
            _ => None,
        }
    }

    /// Whether values are arrays (including `int2vector` and `oidvector`).
    pub fn is_array(self) -> bool {
        self.element().is_some()
    }

    /// Whether values are object identifiers (`oid`, the reg types).
    pub fn is_oid(self) -> bool {
        matches!(
            self,
            DataType::Oid
                | DataType::RegClass
                | DataType::RegType
                | DataType::RegProc
                | DataType::RegNamespace
                | DataType::RegRole
        )
    }

    /// Whether a table column may have this type.
    pub fn is_storable(self) -> bool {
        STORABLE_TYPES.contains(&self)
    }

    /// Bytes a value of the type takes in a tuple; `None` when variable
    /// (and for the types tables do not store).
    pub fn fixed_width(self) -> Option<usize> {
        Some(match self {
            DataType::Bool => 1,
            DataType::Int2 => 2,
            DataType::Int4 | DataType::Float4 | DataType::Date => 4,
            DataType::Int8
            | DataType::Float8
            | DataType::Time
            | DataType::Timestamp
            | DataType::TimestampTz => 8,
            DataType::Interval | DataType::Uuid => 16,
            DataType::Numeric => 18,
            _ => return None,
        })
    }

    /// PostgreSQL's `pg_type.typlen`: bytes of a value, -1 for variable
    /// length (what RowDescription reports).
    pub fn pg_typlen(self) -> i16 {
        match self {
            DataType::Bool | DataType::Char => 1,
            DataType::Int2 => 2,
            DataType::Int4 | DataType::Float4 | DataType::Date | DataType::Xid => 4,
            t if t.is_oid() => 4,
            DataType::Int8
            | DataType::Float8
            | DataType::Time
            | DataType::Timestamp
            | DataType::TimestampTz => 8,
            DataType::Interval | DataType::Uuid => 16,
            DataType::Name => 64,
            _ => -1,
        }
    }

    /// Whether values are strings (`text`, `varchar`, `bpchar`, `name`,
    /// `"char"`, `pg_node_tree`): held as text, cast among each other
    /// implicitly.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            DataType::Text
                | DataType::Varchar
                | DataType::Bpchar
                | DataType::Name
                | DataType::Char
                | DataType::NodeTree
        )
    }

    /// Whether psql right-aligns the type's values (its
    /// `column_type_alignment`: the numbers, `oid` and `xid`).
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            DataType::Int2
                | DataType::Int4
                | DataType::Int8
                | DataType::Float4
                | DataType::Float8
                | DataType::Numeric
                | DataType::Oid
                | DataType::Xid
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_constants_name_their_types() {
        assert_eq!(TEXT_ARRAY.element(), Some(DataType::Text));
        assert_eq!(OID_ARRAY.element(), Some(DataType::Oid));
        assert_eq!(NAME_ARRAY.element(), Some(DataType::Name));
        assert_eq!(CHAR_ARRAY.element(), Some(DataType::Char));
        assert_eq!(INT2_ARRAY.element(), Some(DataType::Int2));
        assert_eq!(FLOAT4_ARRAY.element(), Some(DataType::Float4));
        assert_eq!(REGTYPE_ARRAY.element(), Some(DataType::RegType));
        assert_eq!(TEXT_ARRAY.display_name(), "text[]");
        assert_eq!(DataType::from_oid(1007), DataType::Int4.array_of());
        assert_eq!(DataType::from_type_name("_name"), Some(NAME_ARRAY));
        for t in SCALAR_TYPES {
            assert_eq!(DataType::from_oid(t.oid()), Some(t));
            assert_eq!(DataType::from_type_name(t.type_name()), Some(t));
        }
    }
}
