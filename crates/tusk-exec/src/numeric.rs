//! `numeric` lives in tusk-types (exact decimals of any size with
//! PostgreSQL's scale rules); this module keeps the executor's old path to it.

pub use tusk_types::numeric::*;

#[cfg(test)]
mod tests {
    use super::*;

    fn avg(sum: i64, n: i64) -> String {
        Numeric::from_i64(sum)
            .checked_div(&Numeric::from_i64(n))
            .unwrap()
            .to_string()
    }

    #[test]
    fn avg_matches_postgres() {
        // Values checked against PostgreSQL 15.
        assert_eq!(avg(3, 2), "1.5000000000000000");
        assert_eq!(avg(10, 1), "10.0000000000000000");
        assert_eq!(avg(50000005000000, 10000000), "5000000.500000000000");
        assert_eq!(avg(50000005000000, 2), "25000002500000.0000");
        assert_eq!(avg(1, 3), "0.33333333333333333333");
        assert_eq!(avg(2, 3), "0.66666666666666666667");
        assert_eq!(avg(-7, 2), "-3.5000000000000000");
        assert_eq!(avg(1, 10000000), "0.000000100000000000000000");
        assert_eq!(avg(0, 5), "0.00000000000000000000");
    }
}
