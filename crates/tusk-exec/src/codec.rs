//! Fixed-width binary encoding of the values a vector holds.
//!
//! Spill files (and anything else that writes vectors' values as bytes)
//! encode each fixed-width element type the same way: little endian,
//! unaligned, `WIDTH` bytes. One trait serves every element type, so the
//! row encoders are written once, generically, instead of once per type.
//! `numeric` and arrays have no fixed width: [`VarCodec`] encodes them
//! with a length of their own (`Numeric::encode`, the array module).

use tusk_types::Interval;

pub trait FixedCodec: Copy + Default {
    const WIDTH: usize;
    /// Writes the value into `out[..WIDTH]`.
    fn put(self, out: &mut [u8]);
    /// Reads a value from `b[..WIDTH]`.
    fn get(b: &[u8]) -> Self;
}

macro_rules! le_codec {
    ($($t:ty),*) => {$(
        impl FixedCodec for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn put(self, out: &mut [u8]) {
                out[..Self::WIDTH].copy_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b[..Self::WIDTH].try_into().unwrap())
            }
        }
    )*};
}
le_codec!(i16, i32, i64, f32, f64, u128);

impl FixedCodec for bool {
    const WIDTH: usize = 1;
    #[inline(always)]
    fn put(self, out: &mut [u8]) {
        out[0] = self as u8;
    }
    #[inline(always)]
    fn get(b: &[u8]) -> Self {
        b[0] != 0
    }
}

impl FixedCodec for Interval {
    const WIDTH: usize = 16;
    #[inline(always)]
    fn put(self, out: &mut [u8]) {
        out[..8].copy_from_slice(&self.micros.to_le_bytes());
        out[8..12].copy_from_slice(&self.days.to_le_bytes());
        out[12..16].copy_from_slice(&self.months.to_le_bytes());
    }
    #[inline(always)]
    fn get(b: &[u8]) -> Self {
        Interval::new(
            i32::from_le_bytes(b[12..16].try_into().unwrap()),
            i32::from_le_bytes(b[8..12].try_into().unwrap()),
            i64::from_le_bytes(b[..8].try_into().unwrap()),
        )
    }
}

/// A value type without a fixed width: it writes its own length.
pub trait VarCodec: Sized {
    /// Appends the value's encoding to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads a value from the start of `b`; returns it and the bytes used.
    fn decode(b: &[u8]) -> (Self, usize);
    /// A value for a NULL slot.
    fn placeholder() -> Self;
}

impl VarCodec for tusk_types::Numeric {
    fn encode(&self, out: &mut Vec<u8>) {
        tusk_types::Numeric::encode(self, out)
    }
    fn decode(b: &[u8]) -> (Self, usize) {
        tusk_types::Numeric::decode(b)
    }
    fn placeholder() -> Self {
        tusk_types::Numeric::zero()
    }
}

/// Appends `v`'s encoding to `buf`.
#[inline(always)]
pub fn push<T: FixedCodec>(buf: &mut Vec<u8>, v: T) {
    let at = buf.len();
    buf.resize(at + T::WIDTH, 0);
    v.put(&mut buf[at..]);
}

/// Width of each element of a fixed-width slice, from a reference to it
/// (lets macros over `Data` variants ask for `T::WIDTH` without naming `T`).
#[inline(always)]
pub fn width_of<T: FixedCodec>(_: &[T]) -> usize {
    T::WIDTH
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: FixedCodec + PartialEq + std::fmt::Debug>(v: T) {
        let mut b = Vec::new();
        push(&mut b, v);
        assert_eq!(b.len(), T::WIDTH);
        assert_eq!(T::get(&b), v);
    }

    #[test]
    fn every_type_round_trips() {
        round_trip(true);
        round_trip(-7i16);
        round_trip(i32::MIN);
        round_trip(i64::MAX);
        round_trip(-1.5f32);
        round_trip(f64::MIN_POSITIVE);
        let iv = Interval::new(-3, 4, -5);
        let mut b = Vec::new();
        push(&mut b, iv);
        let back = Interval::get(&b);
        assert_eq!((back.months, back.days, back.micros), (-3, 4, -5));
    }
}
