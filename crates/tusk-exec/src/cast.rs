//! Casts between tusk's types, as PostgreSQL 15 defines them.
//!
//! Four things live here:
//!
//! 1. **Which casts exist and where they apply** ([`cast_context`]): the
//!    rows of `pg_cast` among these types, each implicit (applied silently
//!    in expressions, `integer -> bigint`), assignment (also applied when
//!    storing into a column, `bigint -> integer`) or explicit (only with
//!    `CAST`/`::`, `integer -> boolean`). Casts through text I/O follow
//!    PostgreSQL's rule: to a string type they are assignment casts, from a
//!    string type explicit. [`type_category`] and [`is_preferred`] give
//!    `pg_type.typcategory` / `typispreferred`, which operator and function
//!    resolution uses.
//! 2. **The conversion of one value** ([`cast_value_in`]): numeric rounding
//!    and range errors, floats rounding to integers with `rint` (half to
//!    even), the text forms of tusk-types with the session's
//!    [`Settings`], date/time conversions in the session's time zone.
//!    `character(n)` converted to another string type loses its trailing
//!    blanks; `boolean` converts to text as `true`/`false`.
//! 3. **Typmod coercion** ([`apply_typmod`]), a separate step as in
//!    PostgreSQL: `numeric(p, s)` rounds and range-checks; `varchar(n)` and
//!    `char(n)` truncate to n characters in an explicit cast, and in an
//!    assignment accept only blanks beyond n (`value too long for type
//!    character varying(n)`, 22001); `char(n)` pads with blanks.
//! 4. **Vectorised kernels** ([`cast_vector`]) for the pairs that hot loops
//!    and COPY meet (integer widening and narrowing, integers to floats and
//!    numeric, numeric to float, date to timestamp, text to integers,
//!    numeric and date); every other pair goes value by value. Following
//!    the executor's `active` convention (see `expr.rs`), a kernel never
//!    raises an error for a row that is NULL or not active.

use crate::error::{ExecError, Result};
use crate::numeric::Numeric;
use crate::value::Value;
use crate::vector::{Data, Strings, Vector};
use tusk_storage::{DataType, SqlType};
use tusk_types::datetime::{arith as dt, format as dtf, parse as dtp};
use tusk_types::interval::format::format_interval_style;
use tusk_types::{float, scalar, Interval, Settings, TypeError};

/// PostgreSQL's cast contexts, weakest first: a cast usable implicitly is
/// also usable in assignments and explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CastContext {
    Implicit,
    Assignment,
    Explicit,
}

/// The context in which `from` may be cast to `to` (`pg_cast.castcontext`
/// plus the text I/O casts), or `None` if no cast exists.
pub fn cast_context(from: DataType, to: DataType) -> Option<CastContext> {
    use CastContext::*;
    use DataType::*;
    if from == to {
        return Some(Implicit);
    }
    // `"char"` and integers convert by character code, only explicitly.
    if matches!((from, to), (Int4, Char) | (Char, Int4)) {
        return Some(Explicit);
    }
    if from.is_string() && to.is_string() {
        return Some(Implicit);
    }
    if let (Some(f), Some(t)) = (from.element(), to.element()) {
        // Arrays convert element by element (the vector types are arrays
        // of their element type).
        return cast_context(f, t);
    }
    if to.is_string() {
        return Some(Assignment);
    }
    // `text_regclass`: `nextval('s'::text)` finds the relation by name.
    if matches!(from, Text | Varchar) && to == RegClass {
        return Some(Implicit);
    }
    if from.is_string() {
        return Some(Explicit);
    }
    Some(match (from, to) {
        (Json, Jsonb) | (Jsonb, Json) => Assignment,
        (Jsonb, Bool | Int2 | Int4 | Int8 | Float4 | Float8 | Numeric) => Explicit,
        (Int2, Int4 | Int8 | Float4 | Float8 | Numeric) => Implicit,
        (Int4, Int8 | Float4 | Float8 | Numeric) => Implicit,
        (Int8, Float4 | Float8 | Numeric) => Implicit,
        (Int4 | Int8, Int2) | (Int8, Int4) => Assignment,
        (Float4, Float8) => Implicit,
        (Float4, Int2 | Int4 | Int8 | Numeric) => Assignment,
        (Float8, Int2 | Int4 | Int8 | Float4 | Numeric) => Assignment,
        (Numeric, Float4 | Float8) => Implicit,
        (Numeric, Int2 | Int4 | Int8) => Assignment,
        (Bool, Int4) | (Int4, Bool) => Explicit,
        (Date, Timestamp | TimestampTz) => Implicit,
        (Timestamp, TimestampTz) => Implicit,
        (Timestamp, Date | Time) => Assignment,
        (TimestampTz, Date | Time | Timestamp) => Assignment,
        (Time, Interval) => Implicit,
        (Interval, Time) => Assignment,
        // Object identifiers: integers become oids implicitly, oids and
        // the reg types are one another's binary-coercible forms.
        (Int2 | Int4 | Int8, t) if t.is_oid() => Implicit,
        (f, Int8 | Int4) if f.is_oid() => Assignment,
        (Oid, t) | (t, Oid) if t.is_oid() => Implicit,
        _ => return None,
    })
}

/// `pg_type.typcategory`: `B`oolean, `N`umeric (with `oid` and the reg
/// types), `S`tring (with `name`), `D`ate/time, `T`imespan, `A`rray, `U`ser
/// (`xid`), `Z` internal (`"char"`, `pg_node_tree`).
pub fn type_category(ty: DataType) -> char {
    use DataType::*;
    match ty {
        Bool => 'B',
        Int2 | Int4 | Int8 | Float4 | Float8 | Numeric => 'N',
        t if t.is_oid() => 'N',
        Text | Varchar | Bpchar | Name => 'S',
        Date | Time | Timestamp | TimestampTz => 'D',
        Interval => 'T',
        Xid | Bytea | Uuid | Json | Jsonb => 'U',
        Char | NodeTree => 'Z',
        _ => 'A',
    }
}

/// `pg_type.typispreferred`: the type a category's unknowns resolve to.
pub fn is_preferred(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Bool
            | DataType::Float8
            | DataType::Oid
            | DataType::Text
            | DataType::TimestampTz
            | DataType::Interval
    )
}

/// Whether `from` can be cast to `to` at all.
pub fn castable(from: DataType, to: DataType) -> bool {
    cast_context(from, to).is_some()
}

/// Whether PostgreSQL applies the cast implicitly.
pub fn implicit(from: DataType, to: DataType) -> bool {
    cast_context(from, to) == Some(CastContext::Implicit)
}

/// Whether a store into a column of type `to` may apply the cast.
pub fn assignment(from: DataType, to: DataType) -> bool {
    cast_context(from, to).is_some_and(|c| c <= CastContext::Assignment)
}

/// What a cast needs from the session: its settings (time zone, styles)
/// and the statement's start time (for `'now'`, `'today'`).
#[derive(Debug, Clone, Copy)]
pub struct CastEnv<'a> {
    pub settings: &'a Settings,
    /// The statement's start, as a `timestamptz`.
    pub now: i64,
}

fn default_settings() -> &'static Settings {
    static DEFAULT: std::sync::OnceLock<Settings> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(Settings::default)
}

impl Default for CastEnv<'static> {
    fn default() -> Self {
        CastEnv {
            settings: default_settings(),
            now: 0,
        }
    }
}

pub fn parse_int8(s: &str) -> Result<i64> {
    Ok(scalar::parse_int8(s)?)
}

pub fn parse_int4(s: &str) -> Result<i32> {
    Ok(scalar::parse_int4(s)?)
}

pub fn parse_bool(s: &str) -> Result<bool> {
    Ok(scalar::parse_bool(s)?)
}

pub fn parse_numeric(s: &str) -> Result<Numeric> {
    Ok(Numeric::from_text(s)?)
}

fn out_of_range(ty: &str) -> ExecError {
    TypeError::out_of_range(format!("{ty} out of range")).into()
}

const I16_MIN_F: f64 = i16::MIN as f64;
const I16_END_F: f64 = -(i16::MIN as f64);
const I32_MIN_F: f64 = i32::MIN as f64;
const I32_END_F: f64 = -(i32::MIN as f64);
const I64_MIN_F: f64 = i64::MIN as f64;
const I64_END_F: f64 = -(i64::MIN as f64);

/// `rint` then a range check: float to integer (`dtoi4` and friends).
fn float_to_int(v: f64, ty: &str, min: f64, max_exclusive: f64) -> Result<i64> {
    let r = v.round_ties_even();
    if r.is_nan() || r < min || r >= max_exclusive {
        return Err(out_of_range(ty));
    }
    Ok(r as i64)
}

/// `float8 -> float4` (`float8_to_float4`).
fn f64_to_f32(v: f64) -> Result<f32> {
    let r = v as f32;
    if r.is_infinite() && !v.is_infinite() {
        return Err(crate::error::float_overflow());
    }
    if r == 0.0 && v != 0.0 {
        return Err(crate::error::float_underflow());
    }
    Ok(r)
}

/// A value's text form as `::text` gives it (booleans as `true`/`false`,
/// `character(n)` without trailing blanks).
pub fn to_text(v: &Value, from: DataType, s: &Settings) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        Value::Float4(x) => float::format_float4_digits(*x, s.extra_float_digits),
        Value::Float8(x) => float::format_float8_digits(*x, s.extra_float_digits),
        Value::Text(t) if from == DataType::Bpchar => t.trim_end_matches(' ').to_string(),
        other => output(other, s)?,
    })
}

/// A value's output form (what a client sees) in the session's styles.
pub fn output(v: &Value, s: &Settings) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => scalar::format_bool(*b).to_string(),
        Value::Int2(x) => x.to_string(),
        Value::Int4(x) => x.to_string(),
        Value::Int8(x) => x.to_string(),
        Value::Float4(x) => float::format_float4_digits(*x, s.extra_float_digits),
        Value::Float8(x) => float::format_float8_digits(*x, s.extra_float_digits),
        Value::Numeric(n) => n.to_string(),
        Value::Text(t) => t.clone(),
        Value::Date(d) => dtf::format_date_in(*d, s),
        Value::Time(t) => dtf::format_time(*t),
        Value::Timestamp(t) => dtf::format_timestamp_in(*t, s),
        Value::TimestampTz(t) => dtf::format_timestamptz_in(*t, s),
        Value::Interval(iv) => format_interval_style(*iv, s.interval_style),
        Value::Bytea(b) if s.bytea_escape => tusk_types::bytea::format_bytea_escape(b),
        Value::Bytea(b) => tusk_types::bytea::format_bytea(b),
        Value::Uuid(u) => tusk_types::uuid::format_uuid(*u),
        Value::Oid { ty, oid } if *ty == DataType::Oid || *ty == DataType::Xid => oid.to_string(),
        Value::Oid { ty, oid } => crate::session::reg_output(*ty, *oid),
        Value::Array(a) => crate::array::format_array(a, &mut |v| output(v, s).unwrap_or_default()),
    })
}

/// Reads an `oid` (or `xid`): an unsigned 32-bit number; like PostgreSQL's
/// `oidin`, a negative one wraps around (`-1` is 4294967295).
pub fn parse_oid(t: &str) -> Result<u32> {
    let s = t.trim();
    let bad = || {
        ExecError::coded(
            crate::error::sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type oid: \"{t}\""),
        )
    };
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| out_of_range_oid(t))?;
    if n > u32::MAX as u64 {
        return Err(out_of_range_oid(t));
    }
    Ok(if neg {
        (n as u32).wrapping_neg()
    } else {
        n as u32
    })
}

fn out_of_range_oid(t: &str) -> ExecError {
    ExecError::coded(
        crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value \"{t}\" is out of range for type oid"),
    )
}

/// Reads text as a value of `to` (the type's input function).
pub fn from_text(t: &str, to: DataType, env: &CastEnv) -> Result<Value> {
    use DataType as T;
    let s = env.settings;
    Ok(match to {
        T::Bool => Value::Bool(scalar::parse_bool(t)?),
        T::Int2 => Value::Int2(scalar::parse_int2(t)?),
        T::Int4 => Value::Int4(scalar::parse_int4(t)?),
        T::Int8 => Value::Int8(scalar::parse_int8(t)?),
        T::Float4 => Value::Float4(float::parse_float4(t)?),
        T::Float8 => Value::Float8(float::parse_float8(t)?),
        T::Numeric => Value::Numeric(Numeric::from_text(t)?),
        T::Text | T::Varchar | T::Bpchar => Value::Text(t.to_string()),
        T::Date => Value::Date(dtp::parse_date(t, s, env.now)?),
        T::Time => Value::Time(dtp::parse_time(t, s, env.now)?),
        T::Timestamp => Value::Timestamp(dtp::parse_timestamp(t, s, env.now)?),
        T::TimestampTz => Value::TimestampTz(dtp::parse_timestamptz(t, s, env.now)?),
        T::Interval => {
            Value::Interval(tusk_types::interval::parse_interval(t, Default::default())?)
        }
        T::Bytea => Value::Bytea(tusk_types::bytea::parse_bytea(t)?),
        T::Uuid => Value::Uuid(tusk_types::uuid::parse_uuid(t)?),
        T::Json => {
            tusk_types::json::lex::validate(t)?;
            Value::Text(t.to_string())
        }
        T::Jsonb => Value::Text(tusk_types::json::Jsonb::parse(t)?.to_string()),
        T::Oid | T::Xid => Value::Oid {
            ty: to,
            oid: parse_oid(t)?,
        },
        T::RegClass | T::RegType | T::RegProc | T::RegNamespace | T::RegRole => Value::Oid {
            ty: to,
            oid: crate::session::reg_input(to, t)?,
        },
        T::Name => Value::Text(truncate_name(t)),
        T::Char => Value::Text(first_char(t)),
        T::NodeTree => Value::Text(t.to_string()),
        T::Int2Vector | T::OidVector | T::Array(_) => {
            let element = to.element().expect("an array type");
            Value::Array(Box::new(crate::array::parse_array(t, to, &mut |s| {
                from_text(s, element, env)
            })?))
        }
    })
}

/// A `name`: at most 63 bytes, cut at a character boundary.
pub fn truncate_name(t: &str) -> String {
    let mut end = t.len().min(63);
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    t[..end].to_string()
}

/// A `"char"`: the first character (PostgreSQL keeps the first byte; tusk's
/// strings are UTF-8, so a multibyte character stays whole).
fn first_char(t: &str) -> String {
    t.chars().next().map(String::from).unwrap_or_default()
}

/// Casts one value with the default settings (UTC, ISO), inferring the
/// source type from the value (strings count as `text`).
pub fn cast_value(v: &Value, to: DataType) -> Result<Value> {
    let from = match v.data_type() {
        Some(t) => t,
        None => return Ok(Value::Null),
    };
    cast_value_in(v, from, to, &CastEnv::default())
}

/// Casts one value of type `from` to `to` (without `to`'s typmod: see
/// [`apply_typmod`]).
pub fn cast_value_in(v: &Value, from: DataType, to: DataType, env: &CastEnv) -> Result<Value> {
    use DataType as T;
    use Value as V;
    let zone = &env.settings.time_zone;
    if v.is_null() {
        return Ok(V::Null);
    }
    if to.is_string() && !(from == T::Int4 && to == T::Char) {
        let text = to_text(v, from, env.settings).expect("not NULL");
        return Ok(V::Text(match to {
            T::Char => first_char(&text),
            T::Name => truncate_name(&text),
            _ => text,
        }));
    }
    if let V::Text(t) = v {
        if from == T::Jsonb && to != T::Json {
            return crate::func::json::jsonb_to_scalar(t, to);
        }
        if from == T::Char && to == T::Int4 {
            return Ok(V::Int4(t.bytes().next().map_or(0, |b| b as i8 as i32)));
        }
        return from_text(t, to, env);
    }
    if let V::Array(a) = v {
        let element = to.element().ok_or_else(|| no_cast(from, to))?;
        let items = a
            .items
            .iter()
            .map(|x| cast_value_in(x, a.element(), element, env))
            .collect::<Result<Vec<_>>>()?;
        let lower = if to.array_of().is_none() { 0 } else { a.lower };
        return Ok(V::Array(Box::new(crate::array::ArrayValue {
            ty: to,
            lower,
            items,
        })));
    }
    if let V::Oid { oid, .. } = v {
        return Ok(match to {
            T::Int8 => V::Int8(*oid as i64),
            // Binary-coercible: an oid above 2^31 reads as a negative integer.
            T::Int4 => V::Int4(*oid as i32),
            t if t.is_oid() => V::Oid { ty: t, oid: *oid },
            _ => return Err(no_cast(from, to)),
        });
    }
    if to.is_oid() {
        let oid = match v {
            V::Int2(x) => *x as i32 as u32,
            V::Int4(x) => *x as u32,
            V::Int8(x) => u32::try_from(*x).map_err(|_| {
                ExecError::coded(
                    crate::error::sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "OID out of range",
                )
            })?,
            _ => return Err(no_cast(from, to)),
        };
        return Ok(V::Oid { ty: to, oid });
    }
    if let (V::Int4(x), T::Char) = (v, to) {
        return Ok(V::Text(char::from(*x as u8).to_string()));
    }
    let int = |x: i64| -> Result<Value> {
        Ok(match to {
            T::Int2 => V::Int2(i16::try_from(x).map_err(|_| out_of_range("smallint"))?),
            T::Int4 => V::Int4(i32::try_from(x).map_err(|_| out_of_range("integer"))?),
            T::Int8 => V::Int8(x),
            T::Float4 => V::Float4(x as f32),
            T::Float8 => V::Float8(x as f64),
            T::Numeric => V::Numeric(Numeric::from_i64(x)),
            T::Bool if from == T::Int4 => V::Bool(x != 0),
            _ => return Err(no_cast(from, to)),
        })
    };
    let float = |x: f64, is_f4: bool| -> Result<Value> {
        Ok(match to {
            T::Int2 => V::Int2(float_to_int(x, "smallint", I16_MIN_F, I16_END_F)? as i16),
            T::Int4 => V::Int4(float_to_int(x, "integer", I32_MIN_F, I32_END_F)? as i32),
            T::Int8 => V::Int8(float_to_int(x, "bigint", I64_MIN_F, I64_END_F)?),
            T::Float4 => V::Float4(f64_to_f32(x)?),
            T::Float8 => V::Float8(x),
            T::Numeric if is_f4 => V::Numeric(Numeric::from_f32(x as f32)),
            T::Numeric => V::Numeric(Numeric::from_f64(x)),
            _ => return Err(no_cast(from, to)),
        })
    };
    match (v, to) {
        (V::Bool(b), T::Bool) => Ok(V::Bool(*b)),
        (V::Bool(b), T::Int4) => Ok(V::Int4(*b as i32)),
        (V::Int2(x), _) => int(*x as i64),
        (V::Int4(x), _) => int(*x as i64),
        (V::Int8(x), _) => int(*x),
        (V::Float4(x), _) => float(*x as f64, true),
        (V::Float8(x), _) => float(*x, false),
        (V::Numeric(n), T::Int2) => Ok(V::Int2(n.to_i16()?)),
        (V::Numeric(n), T::Int4) => Ok(V::Int4(n.to_i32()?)),
        (V::Numeric(n), T::Int8) => Ok(V::Int8(n.to_i64()?)),
        (V::Numeric(n), T::Float4) => Ok(V::Float4(n.to_f32()?)),
        (V::Numeric(n), T::Float8) => Ok(V::Float8(n.to_f64()?)),
        (V::Numeric(n), T::Numeric) => Ok(V::Numeric(n.clone())),
        (V::Date(d), T::Date) => Ok(V::Date(*d)),
        (V::Date(d), T::Timestamp) => Ok(V::Timestamp(dt::date_to_timestamp(*d)?)),
        (V::Date(d), T::TimestampTz) => Ok(V::TimestampTz(dt::date_to_timestamptz(*d, zone)?)),
        (V::Timestamp(t), T::Timestamp) => Ok(V::Timestamp(*t)),
        (V::Timestamp(t), T::Date) => Ok(V::Date(dt::timestamp_to_date(*t)?)),
        (V::Timestamp(t), T::Time) => timestamp_time(*t),
        (V::Timestamp(t), T::TimestampTz) => {
            Ok(V::TimestampTz(dt::timestamp_to_timestamptz(*t, zone)?))
        }
        (V::TimestampTz(t), T::TimestampTz) => Ok(V::TimestampTz(*t)),
        (V::TimestampTz(t), T::Timestamp) => {
            Ok(V::Timestamp(dt::timestamptz_to_timestamp(*t, zone)?))
        }
        (V::TimestampTz(t), T::Date) => Ok(V::Date(dt::timestamp_to_date(
            dt::timestamptz_to_timestamp(*t, zone)?,
        )?)),
        (V::TimestampTz(t), T::Time) => timestamp_time(dt::timestamptz_to_timestamp(*t, zone)?),
        (V::Time(t), T::Time) => Ok(V::Time(*t)),
        (V::Time(t), T::Interval) => Ok(V::Interval(Interval::new(0, 0, *t))),
        (V::Interval(iv), T::Interval) => Ok(V::Interval(*iv)),
        (V::Bytea(b), T::Bytea) => Ok(V::Bytea(b.clone())),
        (V::Uuid(u), T::Uuid) => Ok(V::Uuid(*u)),
        (V::Interval(iv), T::Time) => {
            let day = tusk_types::datetime::USECS_PER_DAY;
            Ok(V::Time(iv.micros.rem_euclid(day)))
        }
        _ => Err(no_cast(from, to)),
    }
}

/// `timestamp::time`; infinite timestamps have no time of day.
fn timestamp_time(t: i64) -> Result<Value> {
    if !tusk_types::datetime::timestamp_is_finite(t) {
        return Ok(Value::Null);
    }
    Ok(Value::Time(dt::timestamp_to_time(t)))
}

fn no_cast(from: DataType, to: DataType) -> ExecError {
    ExecError::coded(
        crate::error::sqlstate::CANNOT_COERCE,
        format!(
            "cannot cast type {} to {}",
            from.display_name(),
            to.display_name()
        ),
    )
}

/// Coerces a value to its column's modifier (`numeric(p, s)`,
/// `varchar(n)`, `char(n)`, the precision of `time(p)`/`timestamp(p)`,
/// `interval` fields and precision); `explicit` for a `CAST`, false for an
/// assignment. Other types pass through.
pub fn apply_typmod(v: Value, ty: SqlType, explicit: bool) -> Result<Value> {
    Ok(match (v, ty) {
        (Value::Numeric(n), SqlType::Numeric(Some(tm))) => Value::Numeric(n.apply_typmod(tm)?),
        (Value::Text(s), SqlType::Varchar(Some(n))) => {
            Value::Text(fit_length(s, n, explicit, "character varying")?)
        }
        (Value::Text(s), SqlType::Char(n)) if n > 0 => {
            let mut s = fit_length(s, n, explicit, "character")?;
            let len = s.chars().count();
            s.extend(std::iter::repeat_n(' ', n as usize - len));
            Value::Text(s)
        }
        (Value::Timestamp(t), SqlType::Timestamp(Some(p))) => {
            Value::Timestamp(crate::func::datetime::round_micros(t, p as i32))
        }
        (Value::TimestampTz(t), SqlType::TimestampTz(Some(p))) => {
            Value::TimestampTz(crate::func::datetime::round_micros(t, p as i32))
        }
        (Value::Time(t), SqlType::Time(Some(p))) => {
            Value::Time(crate::func::datetime::round_micros(t, p as i32))
        }
        (Value::Interval(iv), SqlType::Interval(Some(m))) => {
            let tm = tusk_types::interval::IntervalTypmod {
                fields: m.fields,
                precision: m.precision,
            };
            Value::Interval(tm.apply(iv))
        }
        (v, _) => v,
    })
}

/// Truncates `s` to `n` characters: always in an explicit cast, and in an
/// assignment only when what is cut is blanks.
fn fit_length(s: String, n: u32, explicit: bool, ty: &str) -> Result<String> {
    let Some((cut, _)) = s.char_indices().nth(n as usize) else {
        return Ok(s);
    };
    if !explicit && s[cut..].bytes().any(|b| b != b' ') {
        return Err(TypeError::new(
            tusk_types::error::sqlstate::STRING_DATA_RIGHT_TRUNCATION,
            format!("value too long for type {ty}({n})"),
        )
        .into());
    }
    let mut s = s;
    s.truncate(cut);
    Ok(s)
}

/// Casts a vector of type `from` to `to`, then applies `to`'s typmod.
/// Rows that are NULL or outside `active` never raise errors.
pub fn cast_vector(
    v: &Vector,
    from: DataType,
    to: SqlType,
    explicit: bool,
    env: &CastEnv,
    active: Option<&[bool]>,
) -> Result<Vector> {
    let to_ty = to.data_type();
    let skip = |i: usize| v.is_null(i) || active.is_some_and(|m| !m[i]);
    let plain = to.typmod() == -1;
    if let Some(data) = kernel(v, from, to_ty, env, &skip)? {
        let out = Vector::new(data, v.nulls.clone());
        if plain {
            return Ok(out);
        }
        return apply_typmod_vector(out, to_ty, to, explicit, &skip);
    }
    let mut out = Vector::with_capacity(to_ty, v.len());
    for i in 0..v.len() {
        if skip(i) {
            out.push_value(&Value::Null);
            continue;
        }
        let c = cast_value_in(&v.value_as(i, from), from, to_ty, env)?;
        out.push_value(&apply_typmod(c, to, explicit)?);
    }
    // NULL exactly where the input is (inactive rows hold placeholders).
    if let Some(m) = &mut out.nulls {
        for (i, n) in m.iter_mut().enumerate() {
            *n = v.is_null(i);
        }
    }
    Ok(Vector::new(out.data, out.nulls))
}

fn apply_typmod_vector(
    v: Vector,
    ty: DataType,
    to: SqlType,
    explicit: bool,
    skip: &dyn Fn(usize) -> bool,
) -> Result<Vector> {
    let mut out = Vector::with_capacity(ty, v.len());
    for i in 0..v.len() {
        if skip(i) {
            out.data.push_default();
            out.push_null_flag(i, v.is_null(i));
            continue;
        }
        out.push_value(&apply_typmod(v.value_as(i, ty), to, explicit)?);
    }
    Ok(out)
}

/// Runs `f` on every row, writing `default` for rows that `skip` (so a
/// bad value in such a row raises nothing).
fn map_rows<T, U: Copy>(
    a: &[T],
    default: U,
    skip: &dyn Fn(usize) -> bool,
    f: impl Fn(&T) -> Result<U>,
) -> Result<Vec<U>> {
    let mut out = Vec::with_capacity(a.len());
    for (i, x) in a.iter().enumerate() {
        out.push(if skip(i) { default } else { f(x)? });
    }
    Ok(out)
}

/// Whether a cast (without a typmod) from string type `from` to string
/// type `to` leaves every string as it is: not from `bpchar` (which drops
/// trailing blanks), not to `"char"` or `name` (which cut). `json` and
/// `jsonb` are their own text forms, and a `jsonb` text is valid `json`.
pub fn keeps_strings(from: DataType, to: DataType) -> bool {
    let json = matches!(from, DataType::Json | DataType::Jsonb);
    ((from.is_string() && from != DataType::Bpchar) || json)
        && ((to.is_string() && !matches!(to, DataType::Char | DataType::Name))
            || (from == DataType::Jsonb && to == DataType::Json))
}

/// The vectorised pairs; `None` sends the cast to the per-value path.
fn kernel(
    v: &Vector,
    from: DataType,
    to: DataType,
    env: &CastEnv,
    skip: &dyn Fn(usize) -> bool,
) -> Result<Option<Data>> {
    use DataType as T;
    let i16r = |x: i64| i16::try_from(x).map_err(|_| out_of_range("smallint"));
    let i32r = |x: i64| i32::try_from(x).map_err(|_| out_of_range("integer"));
    Ok(Some(match (&v.data, from, to) {
        (_, f, t) if f == t => v.data.clone(),
        (Data::Text(_), f, t) if keeps_strings(f, t) => v.data.clone(),
        // Binary-coercible: the same 64-bit integers.
        (Data::Int8(_), f, t) if f.is_oid() && t.is_oid() => v.data.clone(),
        (Data::Int8(_), f, T::Int8) if f.is_oid() => v.data.clone(),
        (Data::Int2(a), T::Int2, T::Int4) => Data::Int4(a.iter().map(|&x| x as i32).collect()),
        (Data::Int2(a), T::Int2, T::Int8) => Data::Int8(a.iter().map(|&x| x as i64).collect()),
        (Data::Int4(a), T::Int4, T::Int8) => Data::Int8(a.iter().map(|&x| x as i64).collect()),
        (Data::Int4(a), T::Int4, T::Int2) => Data::Int2(map_rows(a, 0, skip, |&x| i16r(x as i64))?),
        (Data::Int8(a), T::Int8, T::Int4) => Data::Int4(map_rows(a, 0, skip, |&x| i32r(x))?),
        (Data::Int8(a), T::Int8, T::Int2) => Data::Int2(map_rows(a, 0, skip, |&x| i16r(x))?),
        (Data::Int4(a), T::Int4, T::Float8) => Data::Float8(a.iter().map(|&x| x as f64).collect()),
        (Data::Int8(a), T::Int8, T::Float8) => Data::Float8(a.iter().map(|&x| x as f64).collect()),
        (Data::Int4(a), T::Int4, T::Float4) => Data::Float4(a.iter().map(|&x| x as f32).collect()),
        (Data::Int8(a), T::Int8, T::Float4) => Data::Float4(a.iter().map(|&x| x as f32).collect()),
        (Data::Float8(a), T::Float8, T::Int4) => Data::Int4(map_rows(a, 0, skip, |&x| {
            Ok(float_to_int(x, "integer", I32_MIN_F, I32_END_F)? as i32)
        })?),
        (Data::Float8(a), T::Float8, T::Int8) => Data::Int8(map_rows(a, 0, skip, |&x| {
            float_to_int(x, "bigint", I64_MIN_F, I64_END_F)
        })?),
        (Data::Float4(a), T::Float4, T::Float8) => {
            Data::Float8(a.iter().map(|&x| x as f64).collect())
        }
        (Data::Int2(a), T::Int2, T::Numeric) => {
            Data::Numeric(a.iter().map(|&x| Numeric::from_i64(x as i64)).collect())
        }
        (Data::Int4(a), T::Int4, T::Numeric) => {
            Data::Numeric(a.iter().map(|&x| Numeric::from_i64(x as i64)).collect())
        }
        (Data::Int8(a), T::Int8, T::Numeric) => {
            Data::Numeric(a.iter().map(|&x| Numeric::from_i64(x)).collect())
        }
        (Data::Numeric(a), T::Numeric, T::Float8) => {
            let mut out = Vec::with_capacity(a.len());
            for (i, x) in a.iter().enumerate() {
                out.push(if skip(i) { 0.0 } else { x.to_f64()? });
            }
            Data::Float8(out)
        }
        (Data::Int4(a), T::Date, T::Timestamp) => {
            Data::Int8(map_rows(a, 0, skip, |&d| Ok(dt::date_to_timestamp(d)?))?)
        }
        (Data::Text(s), f, T::Int4) if f.is_string() => {
            Data::Int4(map_strings(s, 0, skip, |t| Ok(scalar::parse_int4(t)?))?)
        }
        (Data::Text(s), f, T::Int8) if f.is_string() => {
            Data::Int8(map_strings(s, 0, skip, |t| Ok(scalar::parse_int8(t)?))?)
        }
        (Data::Text(s), f, T::Date) if f.is_string() => Data::Int4(map_strings(s, 0, skip, |t| {
            Ok(dtp::parse_date(t, env.settings, env.now)?)
        })?),
        (Data::Text(s), f, T::Numeric) if f.is_string() => {
            let mut out = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                out.push(if skip(i) {
                    Numeric::zero()
                } else {
                    Numeric::from_text(s.get_str(i))?
                });
            }
            Data::Numeric(out)
        }
        (Data::Int4(a), T::Int4, T::Text) => {
            let mut s = Strings::with_capacity(a.len(), a.len() * 8);
            for x in a {
                s.push(x.to_string().as_bytes());
            }
            Data::Text(s)
        }
        _ => return Ok(None),
    }))
}

fn map_strings<U: Copy>(
    s: &Strings,
    default: U,
    skip: &dyn Fn(usize) -> bool,
    f: impl Fn(&str) -> Result<U>,
) -> Result<Vec<U>> {
    let mut out = Vec::with_capacity(s.len());
    for i in 0..s.len() {
        out.push(if skip(i) { default } else { f(s.get_str(i))? });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
