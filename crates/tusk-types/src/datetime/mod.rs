//! `date`, `time`, `timestamp` and `timestamptz`: representation, calendar,
//! limits.
//!
//! As in PostgreSQL, a date is a signed count of days and a timestamp a
//! signed count of microseconds, both from 2000-01-01 (00:00 UTC for
//! `timestamptz`); a time is microseconds since midnight (0 to 24:00:00
//! inclusive). Calendar conversion uses the proleptic Gregorian calendar
//! for every date; year 0 is 1 BC. `infinity` and `-infinity` are the
//! largest and smallest values of the representation
//! ([`DATE_NOEND`], [`TS_NOEND`], ...), so they order correctly with plain
//! integer comparison.
//!
//! Limits (PostgreSQL's `IS_VALID_DATE` / `IS_VALID_TIMESTAMP`): dates from
//! 4714-11-24 BC to 5874897-12-31, timestamps from 4714-11-24 00:00 BC to
//! 294276-12-31 23:59:59.999999.
//!
//! | module | what |
//! |---|---|
//! | `zone` | time zones (jiff's tz database), abbreviations, DST rules |
//! | `format` | output in each `DateStyle` |
//! | `parse` | input (`DecodeDateTime`'s forms) |
//! | `arith` | `+`, `-` between dates, timestamps and intervals |
//! | `funcs` | `extract`, `date_trunc`, `age`, `make_*`, `justify_*` |
//! | `to_char` | `to_char`, `to_date`, `to_timestamp` patterns |

pub mod arith;
pub mod format;
pub mod funcs;
pub mod parse;
pub mod to_char;
pub mod zone;

pub use format::{format_date, format_time, format_timestamp};

use crate::interval::MICROS_PER_DAY;

/// Days from 0000-03-01 (the start of the computational era) to 2000-01-01.
const DAYS_TO_PG_EPOCH: i64 = 730_425;

/// (year, month, day) of a day number counted from 2000-01-01; year 0 is 1 BC.
pub fn date_to_ymd(days: i32) -> (i32, u32, u32) {
    // Count from 0000-03-01 so that leap days fall at the end of each year,
    // then split into 400-year eras of 146,097 days.
    let z = days as i64 + DAYS_TO_PG_EPOCH;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
}

/// Inverse of [`date_to_ymd`]; the caller has checked that the date exists.
pub fn ymd_to_date(year: i32, month: u32, day: u32) -> i64 {
    let y = year as i64 - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = month as i64;
    let doy = (153 * if m > 2 { m - 3 } else { m + 9 } + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - DAYS_TO_PG_EPOCH
}

pub const USECS_PER_SEC: i64 = 1_000_000;
pub const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
pub const USECS_PER_HOUR: i64 = 3600 * USECS_PER_SEC;
pub const USECS_PER_DAY: i64 = MICROS_PER_DAY;

/// `-infinity` and `infinity` as dates.
pub const DATE_NOBEGIN: i32 = i32::MIN;
pub const DATE_NOEND: i32 = i32::MAX;
/// `-infinity` and `infinity` as timestamps.
pub const TS_NOBEGIN: i64 = i64::MIN;
pub const TS_NOEND: i64 = i64::MAX;

/// First valid date, 4714-11-24 BC (Julian day 0).
pub const MIN_DATE: i32 = -2_451_545;
/// First date past the range, 5874898-01-01.
pub const END_DATE: i32 = 2_145_031_949;
/// First valid timestamp, 4714-11-24 00:00 BC.
pub const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// First timestamp past the range, 294277-01-01 00:00.
pub const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

pub fn date_is_finite(d: i32) -> bool {
    d != DATE_NOBEGIN && d != DATE_NOEND
}

pub fn timestamp_is_finite(t: i64) -> bool {
    t != TS_NOBEGIN && t != TS_NOEND
}

pub fn valid_date(d: i64) -> bool {
    (MIN_DATE as i64..END_DATE as i64).contains(&d)
}

pub fn valid_timestamp(t: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t)
}

pub fn is_leap(y: i32) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

pub fn days_in_month(y: i32, m: u32) -> u32 {
    const D: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if m == 2 && is_leap(y) {
        29
    } else {
        D[(m - 1) as usize]
    }
}

/// Day of the week, 0 = Sunday.
pub fn day_of_week(days: i32) -> u32 {
    // 2000-01-01 was a Saturday.
    ((days as i64 + 6).rem_euclid(7)) as u32
}

/// A timestamp's date (days) and time of day (microseconds).
pub fn split_timestamp(t: i64) -> (i32, i64) {
    (
        t.div_euclid(USECS_PER_DAY) as i32,
        t.rem_euclid(USECS_PER_DAY),
    )
}

/// Broken-down fields of a timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micros: u32,
}

impl Fields {
    pub fn of(t: i64) -> Fields {
        let (d, tod) = split_timestamp(t);
        let (year, month, day) = date_to_ymd(d);
        let secs = tod / USECS_PER_SEC;
        Fields {
            year,
            month,
            day,
            hour: (secs / 3600) as u32,
            minute: (secs / 60 % 60) as u32,
            second: (secs % 60) as u32,
            micros: (tod % USECS_PER_SEC) as u32,
        }
    }

    /// The timestamp, unchecked (the caller validates the fields).
    pub fn to_timestamp(&self) -> i64 {
        ymd_to_date(self.year, self.month, self.day) * USECS_PER_DAY
            + ((self.hour as i64 * 60 + self.minute as i64) * 60 + self.second as i64)
                * USECS_PER_SEC
            + self.micros as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = date_to_ymd(days);
            assert_eq!(ymd_to_date(y, m, d), days as i64);
        }
        assert_eq!(date_to_ymd(0), (2000, 1, 1));
        assert_eq!(ymd_to_date(1970, 1, 1), -10957);
    }

    #[test]
    fn limits_are_postgres_limits() {
        assert_eq!(ymd_to_date(-4713, 11, 24), MIN_DATE as i64);
        assert_eq!(ymd_to_date(5874898, 1, 1), END_DATE as i64);
        assert_eq!(ymd_to_date(-4713, 11, 24) * USECS_PER_DAY, MIN_TIMESTAMP);
        assert_eq!(ymd_to_date(294277, 1, 1) * USECS_PER_DAY, END_TIMESTAMP);
        assert_eq!(day_of_week(0), 6);
    }

    #[test]
    fn output_matches_postgres() {
        assert_eq!(format_date(0), "2000-01-01");
        assert_eq!(format_date(ymd_to_date(1998, 12, 1) as i32), "1998-12-01");
        assert_eq!(format_date(ymd_to_date(0, 1, 1) as i32), "0001-01-01 BC");
        assert_eq!(format_time(45_296_500_000), "12:34:56.5");
        let ts = ymd_to_date(2024, 2, 29) * MICROS_PER_DAY + 3_600_000_000;
        assert_eq!(format_timestamp(ts, None), "2024-02-29 01:00:00");
        assert_eq!(format_timestamp(ts, Some(0)), "2024-02-29 01:00:00+00");
        assert_eq!(
            format_timestamp(ts, Some(-5 * 3600 - 1800)),
            "2024-02-29 01:00:00-05:30"
        );
    }
}
