//! Column segments into vectors: the one place that knows both the
//! storage's segment decoders and the executor's vector types.

use crate::numeric::Numeric;
use crate::vector::{Data, Strings, Vector};
use tusk_storage::columnar::ColumnDecoder;
use tusk_storage::DataType;
use tusk_types::Interval;

/// The next `n` rows of a column of type `ty` from `dec`, as a vector.
pub(super) fn decode(dec: &mut ColumnDecoder, n: usize, ty: DataType) -> Vector {
    let nulls = if dec.has_nulls() {
        let mut flags = Vec::with_capacity(n);
        dec.next_nulls(n, &mut flags);
        flags.contains(&true).then_some(flags)
    } else {
        None
    };
    let mut v = Vector::with_capacity(ty, n);
    match &mut v.data {
        Data::Bool(d) => dec.next_ints(n, d),
        Data::Int2(d) => dec.next_ints(n, d),
        Data::Int4(d) => dec.next_ints(n, d),
        Data::Int8(d) => dec.next_ints(n, d),
        Data::Float4(d) => dec.next_f32(n, d),
        Data::Float8(d) => dec.next_f64(n, d),
        Data::Numeric(d) => dec.next_numeric(n, |u, s| d.push(Numeric::from_storage_parts(u, s))),
        Data::Interval(d) => dec.next_interval(n, |us, days, months| {
            d.push(Interval::new(months, days, us))
        }),
        Data::Text(d) | Data::Bytea(d) => {
            let mut s = Strings::with_capacity(n, n * 8);
            dec.next_strings(n, |b| s.push(b));
            *d = s;
        }
        Data::Uuid(d) => {
            dec.next_strings(n, |b| d.push(b.try_into().map_or(0, u128::from_be_bytes)))
        }
        // Tables store only tusk_storage's STORABLE_TYPES, never arrays.
        Data::Array(_) => unreachable!("a table column of type {ty:?}"),
    }
    v.nulls = nulls;
    v
}
