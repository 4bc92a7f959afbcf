//! Single SQL values (constants, rows of small results) and their text form.

use crate::array::ArrayValue;
use crate::numeric::Numeric;
use tusk_storage::DataType;
use tusk_types::{datetime, float, interval, Interval};

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(Numeric),
    Text(String),
    /// Days since 2000-01-01.
    Date(i32),
    /// Microseconds since midnight.
    Time(i64),
    /// Microseconds since 2000-01-01 00:00.
    Timestamp(i64),
    /// Microseconds since 2000-01-01 00:00 UTC.
    TimestampTz(i64),
    Interval(Interval),
    /// A `bytea` value.
    Bytea(Vec<u8>),
    /// A `uuid` (see `DataType::Uuid`).
    Uuid(u128),
    /// An `oid`, reg type (`regclass`, ...) or `xid` value: `ty` says which.
    Oid {
        ty: DataType,
        oid: u32,
    },
    /// An array (its type is in the value).
    Array(Box<ArrayValue>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value's type; strings report `text` (the plan knows whether a
    /// column is `varchar` or `character(n)`).
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int2(_) => DataType::Int2,
            Value::Int4(_) => DataType::Int4,
            Value::Int8(_) => DataType::Int8,
            Value::Float4(_) => DataType::Float4,
            Value::Float8(_) => DataType::Float8,
            Value::Numeric(_) => DataType::Numeric,
            Value::Text(_) => DataType::Text,
            Value::Date(_) => DataType::Date,
            Value::Time(_) => DataType::Time,
            Value::Timestamp(_) => DataType::Timestamp,
            Value::TimestampTz(_) => DataType::TimestampTz,
            Value::Interval(_) => DataType::Interval,
            Value::Bytea(_) => DataType::Bytea,
            Value::Uuid(_) => DataType::Uuid,
            Value::Oid { ty, .. } => *ty,
            Value::Array(a) => a.ty,
        })
    }

    /// PostgreSQL's output form (`t`/`f` for booleans); `None` for NULL.
    /// `timestamptz` prints in UTC; reg types print their oid (their
    /// names are the session's: see `cast::output`).
    pub fn to_text(&self) -> Option<String> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => if *b { "t" } else { "f" }.to_string(),
            Value::Int2(v) => v.to_string(),
            Value::Int4(v) => v.to_string(),
            Value::Int8(v) => v.to_string(),
            Value::Float4(v) => float::format_float4(*v),
            Value::Float8(v) => float::format_float8(*v),
            Value::Numeric(v) => v.to_string(),
            Value::Text(s) => s.clone(),
            Value::Date(d) => datetime::format_date(*d),
            Value::Time(t) => datetime::format_time(*t),
            Value::Timestamp(t) => datetime::format_timestamp(*t, None),
            Value::TimestampTz(t) => datetime::format_timestamp(*t, Some(0)),
            Value::Interval(iv) => interval::format_interval(*iv),
            Value::Bytea(b) => tusk_types::bytea::format_bytea(b),
            Value::Uuid(u) => tusk_types::uuid::format_uuid(*u),
            Value::Oid { oid, .. } => oid.to_string(),
            Value::Array(a) => {
                crate::array::format_array(a, &mut |v| v.to_text().unwrap_or_default())
            }
        })
    }
}
