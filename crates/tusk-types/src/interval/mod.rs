//! `interval`: PostgreSQL's three-field time span.
//!
//! An interval keeps months, days and microseconds apart because their
//! lengths are not fixed: a month has 28 to 31 days and a day 23 to 25 hours
//! across daylight-saving changes. Adding `1 month` to a date moves the month
//! field of the date; adding `30 days` moves the day.
//!
//! Comparison and hashing, however, treat an interval as one number, as
//! PostgreSQL's `interval_cmp_value` does: a month counts 30 days and a day
//! 24 hours, so `'1 month' = '30 days'` is true and both hash alike. The
//! combined value needs more than 64 bits (`i32::MAX` months is about 5.6e18
//! microseconds), so it is computed in 128 bits.
//!
//! Submodules: `parse` (input in the postgres, SQL-standard and ISO 8601
//! forms, and the `interval day to second`-style typmods), `format`
//! (output in the four IntervalStyles), `arith` (`+ - * /`, justify).

mod arith;
pub mod format;
pub mod parse;

pub(crate) use arith::interval_out_of_range as arith_out_of_range;
pub use parse::{parse_interval, IntervalTypmod};

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// Microseconds in a day, and in the 30-day month that comparisons use.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
pub const DAYS_PER_MONTH: i64 = 30;

#[derive(Debug, Clone, Copy, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl Interval {
    pub const fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    /// The span in microseconds with 30-day months and 24-hour days: the key
    /// that orders and hashes intervals.
    pub fn cmp_key(self) -> i128 {
        let days = self.months as i128 * DAYS_PER_MONTH as i128 + self.days as i128;
        days * MICROS_PER_DAY as i128 + self.micros as i128
    }
}

impl PartialEq for Interval {
    fn eq(&self, other: &Self) -> bool {
        self.cmp_key() == other.cmp_key()
    }
}

impl Eq for Interval {}

impl Ord for Interval {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_key().cmp(&other.cmp_key())
    }
}

impl PartialOrd for Interval {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for Interval {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.cmp_key().hash(state)
    }
}

pub use format::format_interval;

#[cfg(test)]
mod tests {
    #[test]
    fn output_matches_postgres() {
        let f = |m, d, us| format_interval(Interval::new(m, d, us));
        assert_eq!(f(0, 0, 0), "00:00:00");
        assert_eq!(f(14, 3, 14_706_500_000), "1 year 2 mons 3 days 04:05:06.5");
        assert_eq!(f(-1, 2, 0), "-1 mons +2 days");
        assert_eq!(f(0, 1, -3_600_000_000), "1 day -01:00:00");
        assert_eq!(f(0, -1, 3_600_000_000), "-1 days +01:00:00");
        assert_eq!(f(1, 0, 0), "1 mon");
        assert_eq!(f(0, 90, 0), "90 days");
    }

    use super::*;

    #[test]
    fn a_month_equals_thirty_days() {
        let month = Interval::new(1, 0, 0);
        let days = Interval::new(0, 30, 0);
        assert_eq!(month, days);
        assert!(Interval::new(0, 29, MICROS_PER_DAY) == month);
        assert!(Interval::new(0, 31, 0) > month);
        assert!(Interval::new(i32::MAX, i32::MAX, i64::MAX) > Interval::new(i32::MAX, 0, 0));
    }
}
