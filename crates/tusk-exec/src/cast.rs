//! Conversions between types, with PostgreSQL's rules and messages.

use crate::error::{int4_out_of_range, int8_out_of_range, ExecError, Result};
use crate::numeric::Numeric;
use crate::value::Value;
use tusk_storage::DataType;

/// Whether `from` can be cast to `to` at all.
pub fn castable(from: DataType, to: DataType) -> bool {
    use DataType::*;
    !matches!(
        (from, to),
        (Bool, Int8) | (Bool, Numeric) | (Int8, Bool) | (Numeric, Bool)
    )
}

/// Whether PostgreSQL would apply the cast implicitly (in expressions and
/// assignments), e.g. integer to bigint, but not text to integer.
pub fn implicit(from: DataType, to: DataType) -> bool {
    use DataType::*;
    from == to
        || (from.is_string() && to.is_string())
        || matches!((from, to), (Int4, Int8) | (Int4, Numeric) | (Int8, Numeric))
}

/// Whether a store into a column of type `to` may apply the cast
/// (PostgreSQL's assignment casts: also bigint -> integer, numeric -> integer,
/// anything -> text).
pub fn assignment(from: DataType, to: DataType) -> bool {
    use DataType::*;
    implicit(from, to)
        || matches!((from, to), (Int8, Int4) | (Numeric, Int4) | (Numeric, Int8))
        || (to.is_string() && !from.is_string())
}

fn syntax(ty: &str, s: &str) -> ExecError {
    ExecError::new(format!("invalid input syntax for type {ty}: \"{s}\""))
}

pub fn parse_int8(s: &str) -> Result<i64> {
    let t = s.trim();
    let ok = !t.is_empty()
        && t.trim_start_matches(['+', '-'])
            .bytes()
            .all(|b| b.is_ascii_digit())
        && t.len() - t.trim_start_matches(['+', '-']).len() <= 1
        && !t.trim_start_matches(['+', '-']).is_empty();
    if !ok {
        return Err(syntax("bigint", s));
    }
    t.parse::<i64>()
        .map_err(|_| ExecError::new(format!("value \"{s}\" is out of range for type bigint")))
}

pub fn parse_int4(s: &str) -> Result<i32> {
    let v = parse_int8(s).map_err(|e| {
        if e.message.starts_with("invalid") {
            syntax("integer", s)
        } else {
            ExecError::new(format!("value \"{s}\" is out of range for type integer"))
        }
    })?;
    i32::try_from(v)
        .map_err(|_| ExecError::new(format!("value \"{s}\" is out of range for type integer")))
}

pub fn parse_bool(s: &str) -> Result<bool> {
    let t = s.trim().to_ascii_lowercase();
    let matches_prefix = |word: &str| !t.is_empty() && word.starts_with(t.as_str());
    if t == "1" || matches_prefix("true") || matches_prefix("yes") || t == "on" {
        Ok(true)
    } else if t == "0"
        || matches_prefix("false")
        || (t.len() >= 2 && "off".starts_with(t.as_str()))
        || matches_prefix("no")
    {
        Ok(false)
    } else {
        Err(syntax("boolean", s))
    }
}

pub fn parse_numeric(s: &str) -> Result<Numeric> {
    Numeric::parse(s).ok_or_else(|| syntax("numeric", s))
}

fn numeric_to_i64(n: Numeric) -> Result<i64> {
    i64::try_from(n.round_to_i128()).map_err(|_| int8_out_of_range())
}

/// Casts one value.
pub fn cast_value(v: &Value, to: DataType) -> Result<Value> {
    use Value as V;
    Ok(match (v, to) {
        (V::Null, _) => V::Null,
        (V::Bool(b), DataType::Bool) => V::Bool(*b),
        (V::Bool(b), DataType::Int4) => V::Int4(*b as i32),
        (V::Bool(b), DataType::Text) => V::Text(if *b { "true" } else { "false" }.into()),
        (V::Int4(x), DataType::Bool) => V::Bool(*x != 0),
        (V::Int4(x), DataType::Int4) => V::Int4(*x),
        (V::Int4(x), DataType::Int8) => V::Int8(*x as i64),
        (V::Int4(x), DataType::Numeric) => V::Numeric(Numeric::from_i64(*x as i64)),
        (V::Int4(x), DataType::Text) => V::Text(x.to_string()),
        (V::Int8(x), DataType::Int4) => {
            V::Int4(i32::try_from(*x).map_err(|_| int4_out_of_range())?)
        }
        (V::Int8(x), DataType::Int8) => V::Int8(*x),
        (V::Int8(x), DataType::Numeric) => V::Numeric(Numeric::from_i64(*x)),
        (V::Int8(x), DataType::Text) => V::Text(x.to_string()),
        (V::Numeric(n), DataType::Int4) => {
            V::Int4(i32::try_from(n.round_to_i128()).map_err(|_| int4_out_of_range())?)
        }
        (V::Numeric(n), DataType::Int8) => V::Int8(numeric_to_i64(*n)?),
        (V::Numeric(n), DataType::Numeric) => V::Numeric(*n),
        (V::Numeric(n), DataType::Text) => V::Text(n.to_string()),
        (V::Text(s), DataType::Bool) => V::Bool(parse_bool(s)?),
        (V::Text(s), DataType::Int4) => V::Int4(parse_int4(s)?),
        (V::Text(s), DataType::Int8) => V::Int8(parse_int8(s)?),
        (V::Text(s), DataType::Numeric) => V::Numeric(parse_numeric(s)?),
        (V::Text(s), DataType::Text | DataType::Varchar | DataType::Bpchar) => V::Text(s.clone()),
        (v, to) => {
            return Err(ExecError::new(format!(
                "cannot cast type {} to {}",
                v.data_type().map(|t| t.display_name()).unwrap_or("unknown"),
                to.display_name()
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_parsing() {
        assert_eq!(parse_int4(" 42 ").unwrap(), 42);
        assert_eq!(parse_int4("-7").unwrap(), -7);
        assert_eq!(
            parse_int4("abc").unwrap_err().message,
            "invalid input syntax for type integer: \"abc\""
        );
        assert_eq!(
            parse_int4("3000000000").unwrap_err().message,
            "value \"3000000000\" is out of range for type integer"
        );
        assert!(parse_int4("").is_err());
        assert!(parse_int4("1.5").is_err());
        assert!(parse_int4("--1").is_err());
        assert!(parse_bool("yes").unwrap());
        assert!(!parse_bool("f").unwrap());
        assert!(parse_bool("maybe").is_err());
    }
}
