//! What each aggregate function is, in PostgreSQL 15's terms: its result
//! type for an argument type, the columns its partial state travels in from a
//! Partial aggregate to its Finalize, and which of its arguments make a row
//! skip when NULL (PostgreSQL's strict transition functions).
//!
//! | function | argument | result |
//! |---|---|---|
//! | count | any | bigint |
//! | sum | smallint, integer | bigint |
//! | sum | bigint, numeric | numeric |
//! | sum | real / double precision / interval | the same |
//! | avg | smallint, integer, bigint, numeric | numeric |
//! | avg | real, double precision | double precision |
//! | avg | interval | interval |
//! | min, max | any ordered type (not boolean) | the same (`varchar` gives `text`) |
//! | bool_and, bool_or, every | boolean | boolean |
//! | stddev, variance and their `_samp`/`_pop` forms | smallint, integer, bigint, numeric | numeric |
//! | the same | real, double precision | double precision |
//! | string_agg | text, text | text |
//! | bit_and, bit_or | smallint, integer, bigint | the same |
//! | percentile_cont(double precision) WITHIN GROUP | double precision, interval | the same |
//! | percentile_disc(double precision), mode() WITHIN GROUP | any ordered type | the same |
//! | percentile_cont/disc(double precision[]) WITHIN GROUP | as above | an array of it |

use crate::plan::{AggCall, AggFunc};
use tusk_storage::DataType;

/// The result type of `func` over an argument of type `arg` (`None` for
/// `count(*)`). The binder rejects combinations PostgreSQL has no function
/// for; for those this returns the argument type.
pub fn result_type(func: AggFunc, arg: Option<DataType>) -> DataType {
    use DataType as T;
    let arg = arg.unwrap_or(T::Int8);
    match func {
        AggFunc::CountStar | AggFunc::Count => T::Int8,
        AggFunc::Sum => match arg {
            T::Int2 | T::Int4 => T::Int8,
            T::Int8 | T::Numeric => T::Numeric,
            t => t,
        },
        AggFunc::Avg => match arg {
            T::Float4 | T::Float8 => T::Float8,
            T::Interval => T::Interval,
            _ => T::Numeric,
        },
        AggFunc::Min | AggFunc::Max => match arg {
            T::Varchar => T::Text,
            t => t,
        },
        AggFunc::BoolAnd | AggFunc::BoolOr | AggFunc::Every => T::Bool,
        AggFunc::Stddev
        | AggFunc::StddevSamp
        | AggFunc::StddevPop
        | AggFunc::Variance
        | AggFunc::VarSamp
        | AggFunc::VarPop => match arg {
            T::Float4 | T::Float8 => T::Float8,
            _ => T::Numeric,
        },
        AggFunc::StringAgg if arg == T::Bytea => T::Bytea,
        AggFunc::StringAgg => T::Text,
        AggFunc::BitAnd | AggFunc::BitOr => arg,
        AggFunc::ArrayAgg => arg.array_of().unwrap_or(T::Text),
        AggFunc::JsonAgg | AggFunc::JsonObjectAgg => T::Json,
        AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg => T::Jsonb,
        // (The array forms' result is set by the binder.)
        AggFunc::PercentileCont | AggFunc::PercentileDisc | AggFunc::Mode => arg,
    }
}

/// Whether `func` is one of the variance/stddev family.
pub fn is_statistic(func: AggFunc) -> bool {
    matches!(
        func,
        AggFunc::Stddev
            | AggFunc::StddevSamp
            | AggFunc::StddevPop
            | AggFunc::Variance
            | AggFunc::VarSamp
            | AggFunc::VarPop
    )
}

fn is_float(t: DataType) -> bool {
    matches!(t, DataType::Float4 | DataType::Float8)
}

/// Columns of a call's partial state (see the table in `accum`).
pub fn partial_types(call: &AggCall) -> Vec<DataType> {
    use DataType as T;
    let arg = call.args.first().map(|a| a.data_type()).unwrap_or(T::Int8);
    match call.func {
        AggFunc::CountStar | AggFunc::Count => vec![T::Int8],
        AggFunc::Sum => match arg {
            T::Int2 | T::Int4 => vec![T::Int8],
            T::Int8 | T::Numeric => vec![T::Int8, T::Numeric],
            T::Interval => vec![T::Int8, T::Interval],
            t => vec![t],
        },
        AggFunc::Avg => match arg {
            T::Float4 | T::Float8 => vec![T::Float8, T::Float8, T::Float8],
            T::Interval => vec![T::Int8, T::Interval],
            _ => vec![T::Int8, T::Numeric],
        },
        f if is_statistic(f) && is_float(arg) => vec![T::Float8, T::Float8, T::Float8],
        // Count, Σx and Σx²; Σx² of bigints outgrows numeric's fast form,
        // so the sums travel as decimal text.
        f if is_statistic(f) => vec![T::Int8, T::Text, T::Text],
        AggFunc::Min | AggFunc::Max => vec![call.result],
        AggFunc::BoolAnd | AggFunc::BoolOr | AggFunc::Every => vec![T::Bool],
        AggFunc::BitAnd | AggFunc::BitOr => vec![arg],
        _ => vec![T::Text],
    }
}

/// Whether a Partial/Finalize pair can compute `call`. PostgreSQL 15 has no
/// combine function for `string_agg`, and never splits aggregates with
/// DISTINCT or ORDER BY inputs.
pub fn supports_partial(call: &AggCall) -> bool {
    !call.distinct
        && call.order_by.is_empty()
        && !matches!(call.func, AggFunc::StringAgg | AggFunc::ArrayAgg)
        && !super::json_agg::is_json_agg(call.func)
        && !call.func.is_ordered_set()
}

/// How many leading arguments make a row skip when NULL: all of them for
/// strict functions; `string_agg` skips on a NULL value but takes a NULL
/// delimiter as no delimiter, and an ordered-set aggregate skips NULL
/// values (its direct argument is read once per group, at the end).
pub fn strict_args(call: &AggCall) -> usize {
    match call.func {
        f if f == AggFunc::StringAgg || f.is_ordered_set() => 1,
        AggFunc::ArrayAgg => 0,
        f if super::json_agg::is_json_agg(f) => 0,
        _ => call.args.len(),
    }
}
