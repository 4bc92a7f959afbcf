//! Operator and type resolution: which casts PostgreSQL applies silently,
//! which type two operands meet at, and what `a + b` means for each pair
//! of types.
//!
//! The cast tables reproduce `pg_cast` for tusk's types: an *implicit*
//! cast may happen anywhere (integer to bigint), an *assignment* cast only
//! when storing into a column (bigint to integer, anything to text), every
//! other cast only when written (`'1'::integer`). Numeric types meet at the
//! one later in PostgreSQL's order smallint < integer < bigint < numeric <
//! real < double precision, which is what `func_select_candidate` picks for
//! the built-in operators (it prefers the candidate with the most exact
//! argument matches, and every type converts implicitly to the later ones).

use super::{cast, err, Result, B};
use crate::error::{sqlstate, SqlError};
use tusk_storage::DataType;
use DataType::*;

/// Position in PostgreSQL's numeric promotion order.
pub fn numeric_rank(t: DataType) -> Option<u8> {
    Some(match t {
        Int2 => 0,
        Int4 => 1,
        Int8 => 2,
        Numeric => 3,
        Float4 => 4,
        Float8 => 5,
        _ => return None,
    })
}

/// Whether PostgreSQL casts `from` to `to` implicitly.
pub fn implicit(from: DataType, to: DataType) -> bool {
    if from == to {
        return true;
    }
    if let (Some(a), Some(b)) = (numeric_rank(from), numeric_rank(to)) {
        return a < b;
    }
    matches!(
        (from, to),
        (Text | Varchar | Bpchar, Text | Varchar | Bpchar)
            | (Date, Timestamp | TimestampTz)
            | (Timestamp, TimestampTz)
            | (Time, Interval)
    )
}

/// Whether PostgreSQL casts `from` to `to` when storing into a column.
pub fn assignment(from: DataType, to: DataType) -> bool {
    implicit(from, to)
        || (numeric_rank(from).is_some() && numeric_rank(to).is_some())
        || to.is_string()
        || matches!(
            (from, to),
            (Timestamp | TimestampTz, Date | Time) | (TimestampTz, Timestamp) | (Interval, Time)
        )
}

/// Whether any cast from `from` to `to` exists (explicit included).
pub fn castable(from: DataType, to: DataType) -> bool {
    assignment(from, to) || from.is_string() || matches!((from, to), (Int4, Bool) | (Bool, Int4))
}

/// The type two values meet at (for comparisons, CASE, UNION, IN lists):
/// the one the other converts to implicitly.
pub fn common_type(a: DataType, b: DataType) -> Option<DataType> {
    if a == b {
        return Some(a);
    }
    if a.is_string() && b.is_string() {
        // bpchar meets varchar/text at text (PostgreSQL's preferred string type).
        return Some(Text);
    }
    if implicit(a, b) {
        Some(b)
    } else if implicit(b, a) {
        Some(a)
    } else {
        None
    }
}

/// Brings two operands of operator `op` to one type: an untyped literal
/// takes the other side's type; two literals are text.
pub fn unify(
    l: B,
    r: B,
    op: &str,
    binder: &super::Binder,
) -> Result<(super::Expr, super::Expr, DataType)> {
    let no_op = |a: &str, b: &str| {
        SqlError::coded(
            sqlstate::UNDEFINED_FUNCTION,
            format!("operator does not exist: {a} {op} {b}"),
        )
        .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
    };
    match (l.unknown, r.unknown) {
        (true, true) => Ok((
            binder.convert_unknown(l.e, Text)?,
            binder.convert_unknown(r.e, Text)?,
            Text,
        )),
        (true, false) if r.ty() == Bpchar => {
            Ok((binder.convert_unknown(l.e, Text)?, cast(r.e, Text), Text))
        }
        (false, true) if l.ty() == Bpchar => {
            Ok((cast(l.e, Text), binder.convert_unknown(r.e, Text)?, Text))
        }
        (true, false) => {
            let t = r.ty();
            Ok((binder.convert_unknown(l.e, t)?, r.e, t))
        }
        (false, true) => {
            let t = l.ty();
            Ok((l.e, binder.convert_unknown(r.e, t)?, t))
        }
        (false, false) => {
            let (lt, rt) = (l.ty(), r.ty());
            match common_type(lt, rt) {
                // Two character(n) values compare without trailing blanks.
                Some(DataType::Bpchar) => Ok((cast(l.e, Text), cast(r.e, Text), Text)),
                Some(t) => Ok((cast(l.e, t), cast(r.e, t), t)),
                None => Err(no_op(lt.display_name(), rt.display_name())),
            }
        }
    }
}

/// The result type of arithmetic operator `sym` on operands already
/// unified to `t`, or the error PostgreSQL gives.
pub fn arith_type(sym: &str, t: DataType) -> Result<DataType> {
    let ok = match sym {
        "%" => matches!(t, Int2 | Int4 | Int8 | Numeric),
        _ => numeric_rank(t).is_some() || (t == Interval && matches!(sym, "+" | "-")),
    };
    if ok {
        Ok(t)
    } else {
        let n = t.display_name();
        err(
            sqlstate::UNDEFINED_FUNCTION,
            format!("operator does not exist: {n} {sym} {n}"),
        )
        .map_err(|e: SqlError| e.with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."))
    }
}
