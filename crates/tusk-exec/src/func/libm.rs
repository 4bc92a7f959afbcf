//! Math routines whose rounding PostgreSQL inherits from the C library and
//! Rust's standard library does differently. PostgreSQL's `cbrt(27)` is
//! `3.0000000000000004` because glibc's cube root is a polynomial estimate
//! and one Halley step (glibc's `sysdeps/ieee754/dbl-64/s_cbrt.c`); Rust's is
//! correctly rounded (`3`). This is that computation, written out.

/// 2^(1/3) and 2^(2/3).
const CBRT2: f64 = 1.259_921_049_894_873_2;
const SQR_CBRT2: f64 = 1.587_401_051_968_199_5;

/// `x = m * 2^e` with `m` in [0.5, 1); `(x, 0)` for zero, infinities and NaN.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: scale into the normal range first.
        let (m, e) = frexp(x * 2f64.powi(54));
        return (m, e - 54);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exp - 1022)
}

/// The cube root as glibc computes it.
pub fn cbrt(x: f64) -> f64 {
    let (xm, xe) = frexp(x.abs());
    if xe == 0 {
        // Zero, infinity or NaN.
        return x + x;
    }
    let u = 0.354_895_765_043_919_86
        + (1.508_191_937_815_849
            + (-2.114_994_941_673_713
                + (2.446_931_225_635_344_3
                    + (-1.834_692_774_836_130_9
                        + (0.784_932_344_976_639_3 - 0.145_263_899_385_486_38 * xm) * xm)
                        * xm)
                    * xm)
                * xm)
            * xm;
    let t2 = u * u * u;
    let factor = [1.0 / SQR_CBRT2, 1.0 / CBRT2, 1.0, CBRT2, SQR_CBRT2];
    let ym = u * (t2 + 2.0 * xm) / (2.0 * t2 + xm) * factor[(2 + xe % 3) as usize];
    let y = if x > 0.0 { ym } else { -ym };
    y * 2f64.powi(xe / 3)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cbrt_matches_postgres() {
        // PostgreSQL 15 on glibc: select cbrt(x::float8).
        let got: Vec<String> = [27.0, 8.0, 1000.0, 64.0, -27.0, 2.0, 1e-310, 0.001, 0.0]
            .iter()
            .map(|&x| tusk_types::float::format_float8(super::cbrt(x)))
            .collect();
        assert_eq!(
            got,
            [
                "3.0000000000000004",
                "2",
                "10",
                "4",
                "-3.0000000000000004",
                "1.2599210498948734",
                "4.641588833612775e-104",
                "0.1",
                "0"
            ]
        );
    }
}
