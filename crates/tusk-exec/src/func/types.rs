//! Type categories, preferred types and implicit casts, as function and
//! operator resolution weighs them: PostgreSQL's `pg_type.typcategory`,
//! `typispreferred` and the `pg_cast` rows with `castcontext = 'i'`. The
//! facts themselves live in [`crate::cast`] (the types helper's table of
//! every cast); this module gives them the shape resolution uses.

use crate::cast;
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
    match cast::type_category(t) {
        'B' => Category::Boolean,
        'N' => Category::Numeric,
        'S' => Category::String,
        'D' => Category::DateTime,
        'T' => Category::Timespan,
        _ => Category::Pseudo,
    }
}

/// PostgreSQL's `typispreferred`.
pub fn is_preferred(t: DataType) -> bool {
    cast::is_preferred(t)
}

/// Whether PostgreSQL casts `from` to `to` implicitly (in expressions).
pub fn implicit_cast(from: DataType, to: DataType) -> bool {
    from == to || cast::implicit(from, to)
}
