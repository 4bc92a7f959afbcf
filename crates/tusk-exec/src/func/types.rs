//! Type categories, preferred types and implicit casts: the facts function
//! and operator resolution weigh candidates with (PostgreSQL's
//! `pg_type.typcategory`, `typispreferred` and `pg_cast` rows with
//! `castcontext = 'i'`).
//!
//! REPLACE: the types helper's `cast.rs` is to provide `cast_context(from,
//! to)` and the categories for every type; until then this small table is
//! the source, kept in this one file so the switch is one `use`.

use tusk_storage::DataType;

/// PostgreSQL's `typcategory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `B`
    Boolean,
    /// `N`
    Numeric,
    /// `S`
    String,
    /// `D`
    DateTime,
    /// `T`
    Timespan,
    /// `P`: the `"any"` pseudo-type of variadic parameters.
    Pseudo,
}

pub fn category(t: DataType) -> Category {
    use DataType::*;
    match t {
        Bool => Category::Boolean,
        Int2 | Int4 | Int8 | Float4 | Float8 | Numeric => Category::Numeric,
        Text | Varchar | Bpchar => Category::String,
        Date | Time | Timestamp | TimestampTz => Category::DateTime,
        Interval => Category::Timespan,
    }
}

/// PostgreSQL's `typispreferred`.
pub fn is_preferred(t: DataType) -> bool {
    use DataType::*;
    matches!(t, Bool | Float8 | Text | TimestampTz | Interval)
}

/// Whether PostgreSQL casts `from` to `to` implicitly (in expressions).
pub fn implicit_cast(from: DataType, to: DataType) -> bool {
    use DataType::*;
    from == to
        || matches!(
            (from, to),
            (Int2, Int4 | Int8 | Float4 | Float8 | Numeric)
                | (Int4, Int8 | Float4 | Float8 | Numeric)
                | (Int8, Float4 | Float8 | Numeric)
                | (Float4, Float8)
                | (Numeric, Float4 | Float8)
                | (Text, Bpchar | Varchar)
                | (Varchar, Text | Bpchar)
                | (Bpchar, Text | Varchar)
                | (Date, Timestamp | TimestampTz)
                | (Timestamp, TimestampTz)
                | (Time, Interval)
        )
}
