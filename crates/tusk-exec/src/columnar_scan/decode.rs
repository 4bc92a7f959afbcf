//! Column segments into vectors: the one place that knows both the
//! storage's segment decoders and the executor's vector types.
//!
//! A column is decoded for all the rows of a batch ([`decode`]), or, when
//! earlier steps left few of them selected, for those rows only
//! ([`decode_rows`]): the runs of selected rows are decoded and the gaps
//! passed over, which for most encodings costs nothing per row skipped.

use crate::numeric::Numeric;
use crate::vector::{Data, Vector};
use tusk_storage::columnar::ColumnDecoder;
use tusk_storage::DataType;
use tusk_types::Interval;

/// The next `n` rows of a column of type `ty` from `dec`, as a vector.
pub(super) fn decode(dec: &mut ColumnDecoder, n: usize, ty: DataType) -> Vector {
    let mut v = Vector::with_capacity(ty, n);
    let mut nulls = Vec::new();
    append(dec, n, &mut v, &mut nulls);
    finish(v, nulls)
}

/// Rows `sel` (ascending positions below `n`) of the next `n` rows of a
/// column of type `ty` from `dec`, as a vector; `dec` is left after the
/// `n` rows.
pub(super) fn decode_rows(dec: &mut ColumnDecoder, n: usize, ty: DataType, sel: &[u32]) -> Vector {
    let mut v = Vector::with_capacity(ty, sel.len());
    let mut nulls = Vec::new();
    let mut pos = 0;
    let mut i = 0;
    while i < sel.len() {
        let start = sel[i] as usize;
        let mut end = start + 1;
        i += 1;
        while i < sel.len() && sel[i] as usize == end {
            end += 1;
            i += 1;
        }
        dec.skip(start - pos);
        append(dec, end - start, &mut v, &mut nulls);
        pos = end;
    }
    dec.skip(n - pos);
    finish(v, nulls)
}

/// Appends the next `n` rows of `dec` to `v`, and their NULL flags to
/// `nulls` when the segment has NULLs.
fn append(dec: &mut ColumnDecoder, n: usize, v: &mut Vector, nulls: &mut Vec<bool>) {
    if dec.has_nulls() {
        dec.next_nulls(n, nulls);
    }
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
        Data::Text(s) | Data::Bytea(s) => dec.next_strings(n, |b| s.push(b)),
        Data::Uuid(d) => {
            dec.next_strings(n, |b| d.push(b.try_into().map_or(0, u128::from_be_bytes)))
        }
        // Tables store only tusk_storage's STORABLE_TYPES, never arrays.
        Data::Array(_) => unreachable!("a table column of array type"),
    }
}

/// `v` with its NULL flags, kept only when some row is NULL.
fn finish(mut v: Vector, nulls: Vec<bool>) -> Vector {
    v.nulls = nulls.contains(&true).then_some(nulls);
    v
}
