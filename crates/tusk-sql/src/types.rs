//! SQL type names as written in statements (`varchar(10)`, `double
//! precision`, `numeric(15,2)`, `timestamp with time zone`) mapped to
//! [`SqlType`], with PostgreSQL's checks on the modifiers.

use crate::error::{sqlstate, SqlError};
use crate::names::object_name;
use sqlparser::ast as A;
use tusk_storage::{DataType, SqlType};

type Result<T> = std::result::Result<T, SqlError>;

fn invalid(msg: String) -> SqlError {
    SqlError::coded(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn char_length(l: &Option<A::CharacterLength>, ty: &str) -> Result<Option<u32>> {
    match l {
        None => Ok(None),
        Some(A::CharacterLength::IntegerLength { length, .. }) => {
            if *length < 1 {
                return Err(invalid(format!("length for type {ty} must be at least 1")));
            }
            if *length > 10_485_760 {
                return Err(invalid(format!(
                    "length for type {ty} cannot exceed 10485760"
                )));
            }
            Ok(Some(*length as u32))
        }
        Some(A::CharacterLength::Max) => Err(SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            "syntax error at or near \"max\"",
        )),
    }
}

fn numeric(info: &A::ExactNumberInfo) -> Result<SqlType> {
    let (p, s) = match info {
        A::ExactNumberInfo::None => return Ok(SqlType::Numeric(None)),
        A::ExactNumberInfo::Precision(p) => (*p, 0),
        A::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
    };
    if !(1..=1000).contains(&p) {
        return Err(invalid(format!(
            "NUMERIC precision {p} must be between 1 and 1000"
        )));
    }
    if !(-1000..=1000).contains(&s) {
        return Err(invalid(format!(
            "NUMERIC scale {s} must be between -1000 and 1000"
        )));
    }
    Ok(SqlType::Numeric(Some((p as u16, s as i16))))
}

/// A date/time type's precision: fractional digits of seconds, at most 6
/// (PostgreSQL warns and keeps 6 beyond that).
fn precision(p: Option<u64>) -> Option<u8> {
    p.map(|p| p.min(6) as u8)
}

/// `interval [fields] [(p)]`.
fn interval(fields: Option<&A::IntervalFields>, p: Option<u64>) -> Result<SqlType> {
    if fields.is_none() && p.is_none() {
        return Ok(SqlType::Interval(None));
    }
    let mut q = fields.map(|f| f.to_string()).unwrap_or_default();
    if let Some(p) = p {
        q.push_str(&format!("({})", p.min(6)));
    }
    let tm = tusk_types::interval::IntervalTypmod::from_qualifier(&q).ok_or_else(|| {
        SqlError::coded(
            sqlstate::SYNTAX_ERROR,
            format!("syntax error at or near \"{q}\""),
        )
    })?;
    Ok(SqlType::Interval(Some(tusk_storage::IntervalMod {
        fields: tm.fields,
        precision: tm.precision,
    })))
}

/// Maps a type as written to the column type it means.
pub fn sql_type(t: &A::DataType) -> Result<SqlType> {
    use A::DataType as D;
    Ok(match t {
        D::SmallInt(_) | D::Int2(_) => SqlType::Int2,
        D::Int(_) | D::Integer(_) | D::Int4(_) => SqlType::Int4,
        D::BigInt(_) | D::Int8(_) => SqlType::Int8,
        D::Real | D::Float4 => SqlType::Float4,
        D::DoublePrecision | D::Float8 | D::Double(A::ExactNumberInfo::None) => SqlType::Float8,
        D::Float(info) => match info {
            A::ExactNumberInfo::None => SqlType::Float8,
            A::ExactNumberInfo::Precision(p) if *p < 1 => {
                return Err(invalid(
                    "precision for type float must be at least 1 bit".into(),
                ))
            }
            A::ExactNumberInfo::Precision(p) if *p <= 24 => SqlType::Float4,
            A::ExactNumberInfo::Precision(p) if *p <= 53 => SqlType::Float8,
            _ => {
                return Err(invalid(
                    "precision for type float must be less than 54 bits".into(),
                ))
            }
        },
        D::Numeric(info) | D::Decimal(info) | D::Dec(info) => numeric(info)?,
        D::Bool | D::Boolean => SqlType::Bool,
        D::Text => SqlType::Text,
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) => {
            SqlType::Varchar(char_length(l, "varchar")?)
        }
        D::Char(l) | D::Character(l) => SqlType::Char(char_length(l, "char")?.unwrap_or(1)),
        D::Date => SqlType::Date,
        D::Time(p, A::TimezoneInfo::None | A::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Time(precision(*p))
        }
        D::Timestamp(p, A::TimezoneInfo::None | A::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp(precision(*p))
        }
        D::Timestamp(p, A::TimezoneInfo::WithTimeZone | A::TimezoneInfo::Tz) => {
            SqlType::TimestampTz(precision(*p))
        }
        D::Interval {
            fields,
            precision: p,
        } => interval(fields.as_ref(), *p)?,
        D::Regclass => SqlType::Plain(DataType::RegClass),
        D::Bytea => SqlType::Plain(DataType::Bytea),
        D::Uuid => SqlType::Plain(DataType::Uuid),
        D::JSON => SqlType::Plain(DataType::Json),
        D::JSONB => SqlType::Plain(DataType::Jsonb),
        // `t[]`, `t[n]`, `t ARRAY`: one-dimensional arrays of `t` (the
        // size is not enforced, as in PostgreSQL).
        D::Array(
            A::ArrayElemTypeDef::SquareBracket(inner, _) | A::ArrayElemTypeDef::Qualified(inner, _),
        ) => {
            let element = sql_type(inner)?.data_type();
            SqlType::Plain(element.array_of().ok_or_else(|| {
                SqlError::coded(
                    sqlstate::UNDEFINED_OBJECT,
                    format!(
                        "could not find array type for data type {}",
                        element.display_name()
                    ),
                )
            })?)
        }
        D::Custom(name, mods) => {
            let q = object_name(name)?;
            if q.schema.as_deref().is_some_and(|s| s != "pg_catalog") {
                return Err(undefined(&q.name));
            }
            if let (Some(kind), [m]) = (
                ["time", "timestamp", "timestamptz"]
                    .iter()
                    .position(|n| *n == q.name),
                mods.as_slice(),
            ) {
                let p = m
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| invalid(format!("invalid type modifier for {}", q.name)))?;
                let p = precision(Some(p));
                return Ok(match kind {
                    0 => SqlType::Time(p),
                    1 => SqlType::Timestamp(p),
                    _ => SqlType::TimestampTz(p),
                });
            }
            let ty = match q.name.as_str() {
                "bpchar" if mods.is_empty() => return Ok(SqlType::Char(0)),
                "varchar" | "bpchar" | "numeric" | "decimal" => {
                    let nums: Vec<u64> = mods
                        .iter()
                        .map(|m| m.trim().parse::<u64>())
                        .collect::<std::result::Result<_, _>>()
                        .map_err(|_| invalid(format!("invalid type modifier for {}", q.name)))?;
                    return match (q.name.as_str(), nums.as_slice()) {
                        ("varchar", [n]) => Ok(SqlType::Varchar(Some(*n as u32))),
                        ("varchar", []) => Ok(SqlType::Varchar(None)),
                        ("bpchar", [n]) => Ok(SqlType::Char(*n as u32)),
                        (_, []) => Ok(SqlType::Numeric(None)),
                        (_, [p]) => numeric(&A::ExactNumberInfo::Precision(*p)),
                        (_, [p, s]) => {
                            numeric(&A::ExactNumberInfo::PrecisionAndScale(*p, *s as i64))
                        }
                        _ => Err(invalid(format!("invalid type modifier for {}", q.name))),
                    };
                }
                "int" | "integer" => DataType::Int4,
                "smallint" => DataType::Int2,
                "bigint" => DataType::Int8,
                "real" => DataType::Float4,
                "float" => DataType::Float8,
                "bool" | "boolean" => DataType::Bool,
                "timestamptz" => DataType::TimestampTz,
                "string" => return Err(undefined("string")),
                name => DataType::from_type_name(name).ok_or_else(|| undefined(name))?,
            };
            if !mods.is_empty() {
                return Err(SqlError::coded(
                    sqlstate::SYNTAX_ERROR,
                    format!("type modifier is not allowed for type \"{}\"", q.name),
                ));
            }
            SqlType::of(ty)
        }
        other => {
            let name = other.to_string().to_lowercase();
            return Err(undefined(&name));
        }
    })
}

/// The type a name reads as (`regtype` input): `integer`, `int4`,
/// `character varying(10)`, `text[]`, `pg_catalog.name`.
pub fn type_by_name(text: &str) -> Result<SqlType> {
    let parsed = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| {
            let t = p.parse_data_type()?;
            p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
            Ok(t)
        });
    match parsed {
        Ok(t) => sql_type(&t),
        Err(_) => Err(undefined(text.trim())),
    }
}

/// Refuses a table column of a type tuples do not store (the catalog
/// types and arrays: they appear in queries only).
pub fn check_storable(ty: SqlType, column: &str) -> Result<()> {
    if ty.data_type().is_storable() {
        return Ok(());
    }
    Err(SqlError::coded(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!(
            "column \"{column}\" has type {}, which tables cannot store yet",
            ty.display_name()
        ),
    ))
}

fn undefined(name: &str) -> SqlError {
    SqlError::coded(
        sqlstate::UNDEFINED_OBJECT,
        format!("type \"{name}\" does not exist"),
    )
}
