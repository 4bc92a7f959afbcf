//! Turning a column of COPY fields into a vector: each column's input
//! function, specialised by type.
//!
//! A [`ColumnParser`] is made once per column of the COPY and runs once
//! per batch over one column of the [`RawBatch`], in a loop that knows its
//! type: integers, `numeric(p, s)` (digits straight into the scaled
//! 128-bit form, rounded and checked against the typmod), dates (the
//! `YYYY-MM-DD` fast path of tusk-types), strings (the length limits of
//! `varchar(n)` and `char(n)`, and `char(n)`'s padding, as
//! `varchar_in`/`bpchar_in` apply them), and the type's text input
//! function for everything else. Fast paths accept only the plain forms;
//! anything else (blanks, exponents, `NaN`, overflow) goes to the general
//! input function, which also words the errors.
//!
//! A parser stops at its column's first bad field and says which row it
//! was: the caller compares columns to report PostgreSQL's first error.

use super::reader::{Field, RawBatch};
use crate::cast::{self, CastEnv};
use crate::error::{sqlstate, ExecError};
use crate::numeric::Numeric;
use crate::vector::{Data, Strings, Vector};
use tusk_storage::{DataType, SqlType};
use tusk_types::datetime::parse as dtp;
use tusk_types::{float, scalar};

/// Why a column stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnFailure {
    /// The value is not valid input: context `column c: "value"`.
    Value(ExecError),
    /// The row has no field for the column: `missing data for column`,
    /// context of the whole row.
    Missing,
}

/// A column's first bad row.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub row: usize,
    pub failure: ColumnFailure,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric(Option<(u16, i16)>),
    Text,
    Varchar(u32),
    Char(u32),
    Date,
    /// Any other type: through its input function (`cast::from_text`),
    /// then its typmod.
    Other(SqlType),
}

/// The input function of one column (see the module doc).
#[derive(Debug, Clone)]
pub struct ColumnParser {
    kind: Kind,
    ty: DataType,
}

/// A field's bytes as text (the reader checked them for UTF-8).
#[inline]
fn as_str(v: &[u8]) -> &str {
    std::str::from_utf8(v).unwrap_or("")
}

/// Plain decimal integers: an optional `-` and up to `max_digits` digits.
#[inline]
fn plain_int(v: &[u8], max_digits: usize) -> Option<i64> {
    let (neg, digits) = match v.first() {
        Some(b'-') => (true, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > max_digits {
        return None;
    }
    let mut x: i64 = 0;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        x = x * 10 + d as i64;
    }
    Some(if neg { -x } else { x })
}

const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// A plain decimal (`-12.340`, `.5`, `7.`) as an unscaled integer and its
/// scale, if it has at most 36 digits.
#[inline]
fn plain_decimal(v: &[u8]) -> Option<(i128, u32)> {
    let (neg, rest) = match v.first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    }; // Up to 18 digits accumulate in 64 bits, the rest in 128.
    let mut small: u64 = 0;
    let mut x: i128 = 0;
    let mut digits = 0u32;
    let mut scale = 0u32;
    let mut point = false;
    for &b in rest {
        if b == b'.' {
            if point {
                return None;
            }
            point = true;
            continue;
        }
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        if digits < 18 {
            small = small * 10 + d as u64;
        } else {
            if digits == 18 {
                x = small as i128;
            }
            x = x * 10 + d as i128;
        }
        digits += 1;
        if point {
            scale += 1;
        }
    }
    if digits == 0 || digits > 36 {
        return None;
    }
    if digits <= 18 {
        x = small as i128;
    }
    Some((if neg { -x } else { x }, scale))
}

/// `numeric(p, s)` coercion of a plain decimal with a non-negative scale
/// `s`: rounded half away from zero, then at most `p` digits.
#[inline]
fn fit_typmod(unscaled: i128, scale: u32, (p, s): (u16, i16)) -> Option<i128> {
    let s = u32::try_from(s).ok()?;
    let v = if scale > s {
        let div = POW10[(scale - s) as usize];
        let (q, r) = (unscaled / div, unscaled % div);
        if r.abs() * 2 >= div {
            q + unscaled.signum()
        } else {
            q
        }
    } else {
        unscaled.checked_mul(*POW10.get((s - scale) as usize)?)?
    };
    (v.abs() < *POW10.get(p as usize)?).then_some(v)
}

/// Characters in `s` (bytes when all are ASCII).
#[inline]
fn char_len(s: &[u8]) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        as_str(s).chars().count()
    }
}

/// The bytes of the first `n` characters of `s`.
fn char_prefix(s: &[u8], n: usize) -> usize {
    as_str(s)
        .char_indices()
        .nth(n)
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

/// `varchar(n)` / `char(n)` input: at most `n` characters, or more that
/// are blanks beyond `n` (cut off). Returns the bytes to keep.
#[inline]
fn fit_length(v: &[u8], n: u32, ty: &str) -> Result<usize, ExecError> {
    if v.len() <= n as usize || char_len(v) <= n as usize {
        return Ok(v.len());
    }
    let cut = char_prefix(v, n as usize);
    if v[cut..].iter().all(|&b| b == b' ') {
        Ok(cut)
    } else {
        Err(ExecError::coded(
            sqlstate::STRING_DATA_RIGHT_TRUNCATION,
            format!("value too long for type {ty}({n})"),
        ))
    }
}

impl ColumnParser {
    pub fn new(ty: SqlType) -> ColumnParser {
        let kind = match ty {
            SqlType::Bool => Kind::Bool,
            SqlType::Int2 => Kind::Int2,
            SqlType::Int4 => Kind::Int4,
            SqlType::Int8 => Kind::Int8,
            SqlType::Float4 => Kind::Float4,
            SqlType::Float8 => Kind::Float8,
            SqlType::Numeric(tm) => Kind::Numeric(tm),
            SqlType::Text | SqlType::Varchar(None) | SqlType::Char(0) => Kind::Text,
            SqlType::Varchar(Some(n)) => Kind::Varchar(n),
            SqlType::Char(n) => Kind::Char(n),
            SqlType::Date => Kind::Date,
            other => Kind::Other(other),
        };
        ColumnParser {
            kind,
            ty: ty.data_type(),
        }
    }

    /// Converts column `col` of the first `rows` rows of `batch`. Stops at
    /// the first bad field: the vector then holds the rows before it.
    pub fn parse(
        &self,
        batch: &RawBatch,
        col: usize,
        rows: usize,
        env: &CastEnv,
    ) -> (Vector, Option<Failed>) {
        let mut nulls: Option<Vec<bool>> = None;
        let mut failed = None;
        // Runs `$body` for each row with `$v` bound to the field's bytes,
        // pushing `$default` for NULLs; `$body` yields the value or an error.
        macro_rules! each {
            ($out:ident, $default:expr, |$v:ident| $body:expr) => {
                for row in 0..rows {
                    match batch.field(row, col) {
                        Field::Value($v) => match $body {
                            Ok(x) => $out.push(x),
                            Err(e) => {
                                failed = Some(Failed {
                                    row,
                                    failure: ColumnFailure::Value(e),
                                });
                                break;
                            }
                        },
                        Field::Null => {
                            nulls.get_or_insert_with(|| vec![false; rows])[row] = true;
                            $out.push_null($default);
                        }
                        Field::Missing => {
                            failed = Some(Failed {
                                row,
                                failure: ColumnFailure::Missing,
                            });
                            break;
                        }
                    }
                }
            };
        }
        let data = match self.kind {
            Kind::Int4 => {
                let mut out = Vec::with_capacity(rows);
                each!(out, 0, |v| match plain_int(v, 9) {
                    Some(x) => Ok(x as i32),
                    None => cast::parse_int4(as_str(v)),
                });
                Data::Int4(out)
            }
            Kind::Int8 => {
                let mut out = Vec::with_capacity(rows);
                each!(out, 0, |v| match plain_int(v, 18) {
                    Some(x) => Ok(x),
                    None => cast::parse_int8(as_str(v)),
                });
                Data::Int8(out)
            }
            Kind::Int2 => {
                let mut out = Vec::with_capacity(rows);
                each!(out, 0, |v| scalar::parse_int2(as_str(v))
                    .map_err(ExecError::from));
                Data::Int2(out)
            }
            Kind::Bool => {
                let mut out = Vec::with_capacity(rows);
                each!(out, false, |v| match v {
                    b"t" => Ok(true),
                    b"f" => Ok(false),
                    _ => cast::parse_bool(as_str(v)),
                });
                Data::Bool(out)
            }
            Kind::Float4 => {
                let mut out = Vec::with_capacity(rows);
                each!(out, 0.0, |v| float::parse_float4(as_str(v))
                    .map_err(ExecError::from));
                Data::Float4(out)
            }
            Kind::Float8 => {
                let mut out = Vec::with_capacity(rows);
                each!(out, 0.0, |v| float::parse_float8(as_str(v))
                    .map_err(ExecError::from));
                Data::Float8(out)
            }
            Kind::Numeric(tm) => {
                let mut out = Vec::with_capacity(rows);
                each!(out, Numeric::zero(), |v| parse_numeric(v, tm));
                Data::Numeric(out)
            }
            Kind::Date => {
                let mut out = Vec::with_capacity(rows);
                each!(out, 0, |v| match dtp::parse_iso_date(v) {
                    Some(d) => Ok(d),
                    None => dtp::parse_date(as_str(v), env.settings, env.now),
                }
                .map_err(ExecError::from));
                Data::Int4(out)
            }
            Kind::Text | Kind::Varchar(_) | Kind::Char(_) => {
                let mut out = Strings::with_capacity(rows, batch.data_len() / batch.ncols().max(1));
                // `char(n)` values are stored padded to n characters.
                let pad = match self.kind {
                    Kind::Char(n) => n as usize,
                    _ => 0,
                };
                let mut s = StringsPush {
                    out: &mut out,
                    pad,
                    padded: Vec::new(),
                };
                each!(s, &[][..], |v| self.string(v));
                Data::Text(out)
            }
            Kind::Other(sql_ty) => {
                let ty = sql_ty.data_type();
                let mut out = Vector::with_capacity(ty, rows);
                for row in 0..rows {
                    match batch.field(row, col) {
                        Field::Value(v) => match cast::from_text(as_str(v), ty, env)
                            .and_then(|x| cast::apply_typmod(x, sql_ty, false))
                        {
                            Ok(x) => out.push_value(&x),
                            Err(e) => {
                                failed = Some(Failed {
                                    row,
                                    failure: ColumnFailure::Value(e),
                                });
                                break;
                            }
                        },
                        Field::Null => out.push_value(&crate::Value::Null),
                        Field::Missing => {
                            failed = Some(Failed {
                                row,
                                failure: ColumnFailure::Missing,
                            });
                            break;
                        }
                    }
                }
                return (out, failed);
            }
        };
        if let (Some(n), Some(f)) = (&mut nulls, &failed) {
            n.truncate(f.row);
        }
        (Vector::new(data, nulls), failed)
    }

    /// A string field, cut to its type's length (the bytes to keep).
    #[inline]
    fn string<'v>(&self, v: &'v [u8]) -> Result<&'v [u8], ExecError> {
        match self.kind {
            Kind::Varchar(n) => Ok(&v[..fit_length(v, n, "character varying")?]),
            Kind::Char(n) => Ok(&v[..fit_length(v, n, "character")?]),
            _ => Ok(v),
        }
    }

    pub fn data_type(&self) -> DataType {
        self.ty
    }
}

/// Where the loops of [`ColumnParser::parse`] put values.
trait Sink<T> {
    fn push(&mut self, v: T);
    /// The placeholder of a NULL.
    fn push_null(&mut self, v: T) {
        self.push(v);
    }
}

impl<T> Sink<T> for Vec<T> {
    #[inline]
    fn push(&mut self, v: T) {
        Vec::push(self, v);
    }
}

/// The string loop's sink: values padded with blanks to `pad` characters
/// (`char(n)`; 0 for the other string types).
struct StringsPush<'a> {
    out: &'a mut Strings,
    pad: usize,
    padded: Vec<u8>,
}

impl Sink<&[u8]> for StringsPush<'_> {
    #[inline]
    fn push(&mut self, v: &[u8]) {
        if self.pad == 0 {
            self.out.push(v);
            return;
        }
        let len = char_len(v);
        if len >= self.pad {
            self.out.push(v);
            return;
        }
        self.padded.clear();
        self.padded.extend_from_slice(v);
        self.padded.resize(v.len() + self.pad - len, b' ');
        self.out.push(&self.padded);
    }

    fn push_null(&mut self, _: &[u8]) {
        self.out.push(b"");
    }
}

/// `numeric_in` with the column's typmod: the plain form straight into a
/// scaled integer, the rest through the general path.
#[inline]
fn parse_numeric(v: &[u8], tm: Option<(u16, i16)>) -> Result<Numeric, ExecError> {
    if let Some((unscaled, scale)) = plain_decimal(v) {
        match tm {
            None => return Ok(Numeric::from_parts(unscaled, scale as u16)),
            Some(tm) => {
                if let Some(x) = fit_typmod(unscaled, scale, tm) {
                    return Ok(Numeric::from_parts(x, tm.1 as u16));
                }
            }
        }
    }
    let n = Numeric::from_text(as_str(v))?;
    let n = match tm {
        Some(tm) => n.apply_typmod(tm)?,
        None => n,
    };
    if n.to_storage_parts().is_none() {
        return Err(ExecError::coded(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "numeric values of more than 38 digits cannot be stored in a table yet",
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::reader::{CopyReader, ReaderOptions};
    use crate::copy::{CopyOptions, Format};

    fn batch(lines: &str) -> (CopyReader, RawBatch) {
        let mut r = CopyReader::new(ReaderOptions {
            options: CopyOptions::new(Format::Text),
            table: "t".into(),
            columns: vec!["a".into()],
            force_not_null: vec![false],
            force_null: vec![false],
        });
        r.push(lines.as_bytes());
        r.finish();
        let mut b = RawBatch::default();
        r.read_batch(&mut b).unwrap();
        (r, b)
    }

    fn parse(ty: SqlType, lines: &str) -> (Vec<Option<String>>, Option<(usize, String)>) {
        let (_, b) = batch(lines);
        let (v, failed) = ColumnParser::new(ty).parse(&b, 0, b.rows(), &CastEnv::default());
        let values = (0..v.len())
            .map(|i| v.value_as(i, ty.data_type()).to_text())
            .collect();
        let failed = failed.map(|f| match f.failure {
            ColumnFailure::Value(e) => (f.row, e.message),
            ColumnFailure::Missing => (f.row, "missing".into()),
        });
        (values, failed)
    }

    fn some(v: &[&str]) -> Vec<Option<String>> {
        v.iter().map(|s| Some(s.to_string())).collect()
    }

    #[test]
    fn integers() {
        assert_eq!(
            parse(SqlType::Int4, "1\n-22\n  +7 \n2147483647\n\\N\n"),
            (
                vec![
                    Some("1".into()),
                    Some("-22".into()),
                    Some("7".into()),
                    Some("2147483647".into()),
                    None
                ],
                None
            )
        );
        let (v, f) = parse(SqlType::Int4, "1\n2147483648\n3\n");
        assert_eq!(v, some(&["1"]));
        assert_eq!(
            f,
            Some((
                1,
                "value \"2147483648\" is out of range for type integer".into()
            ))
        );
        let (_, f) = parse(SqlType::Int8, "x\n");
        assert_eq!(
            f,
            Some((0, "invalid input syntax for type bigint: \"x\"".into()))
        );
        let (_, f) = parse(SqlType::Int4, "-\n");
        assert_eq!(
            f,
            Some((0, "invalid input syntax for type integer: \"-\"".into()))
        );
    }

    #[test]
    fn numerics_round_and_check_their_typmod() {
        let tm = SqlType::Numeric(Some((5, 2)));
        let (v, f) = parse(tm, "1.5\n-1.005\n999.994\n.5\n7.\n 2 \n1e2\n");
        assert_eq!(
            v,
            some(&["1.50", "-1.01", "999.99", "0.50", "7.00", "2.00", "100.00"])
        );
        assert_eq!(f, None);
        let (_, f) = parse(tm, "999.995\n");
        assert_eq!(f, Some((0, "numeric field overflow".into())));
        let (v, _) = parse(SqlType::Numeric(None), "1.50\n-0\n12345678901234567890.5\n");
        assert_eq!(v, some(&["1.50", "0", "12345678901234567890.5"]));
        let (_, f) = parse(tm, "1.2.3\n");
        assert_eq!(
            f,
            Some((0, "invalid input syntax for type numeric: \"1.2.3\"".into()))
        );
    }

    #[test]
    fn strings_and_their_lengths() {
        let (v, f) = parse(SqlType::Char(3), "a\nabc\nab  \n\\N\nabcd\n");
        assert_eq!(
            v,
            vec![
                Some("a  ".into()),
                Some("abc".into()),
                Some("ab ".into()),
                None
            ]
        );
        assert_eq!(f, Some((4, "value too long for type character(3)".into())));
        let (v, f) = parse(SqlType::Varchar(Some(2)), "ñé \nxyz\n");
        assert_eq!(v, some(&["ñé"]));
        assert_eq!(
            f,
            Some((1, "value too long for type character varying(2)".into()))
        );
    }

    #[test]
    fn dates_and_the_rest() {
        let (v, f) = parse(SqlType::Date, "2020-01-31\nJan 2, 1999\n2020-02-30\n");
        assert_eq!(v, some(&["2020-01-31", "1999-01-02"]));
        assert_eq!(
            f,
            Some((
                2,
                "date/time field value out of range: \"2020-02-30\"".into()
            ))
        );
        let (v, _) = parse(SqlType::Timestamp(None), "2020-01-31 10:00\n");
        assert_eq!(v, some(&["2020-01-31 10:00:00"]));
        let (v, _) = parse(SqlType::Bool, "t\nyes\n0\n");
        assert_eq!(v, some(&["t", "t", "f"]));
    }

    #[test]
    fn missing_fields_stop_the_column() {
        let mut r = CopyReader::new(ReaderOptions {
            options: CopyOptions::new(Format::Text),
            table: "t".into(),
            columns: vec!["a".into(), "b".into()],
            force_not_null: vec![false; 2],
            force_null: vec![false; 2],
        });
        r.push(b"1\t2\n3\n");
        r.finish();
        let mut b = RawBatch::default();
        r.read_batch(&mut b).unwrap();
        let p = ColumnParser::new(SqlType::Int4);
        let (v, f) = p.parse(&b, 1, b.rows(), &CastEnv::default());
        assert_eq!(v.len(), 1);
        assert_eq!(
            f,
            Some(Failed {
                row: 1,
                failure: ColumnFailure::Missing
            })
        );
    }
}
