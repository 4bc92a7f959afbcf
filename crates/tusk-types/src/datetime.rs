//! `date`, `time`, `timestamp` and `timestamptz`: representation and output.
//!
//! As in PostgreSQL, a date is a signed count of days and a timestamp a
//! signed count of microseconds, both from 2000-01-01 (00:00 UTC for
//! `timestamptz`); a time is microseconds since midnight. Calendar
//! conversion uses the proleptic Gregorian calendar for every date.
//! PostgreSQL prints years before 1 as `YYYY-MM-DD BC`, where year 0 is
//! 1 BC.

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

fn write_ymd(out: &mut String, year: i32, month: u32, day: u32) -> bool {
    use std::fmt::Write;
    let bc = year <= 0;
    let shown = if bc { 1 - year } else { year };
    let _ = write!(out, "{shown:04}-{month:02}-{day:02}");
    bc
}

/// `date` output in the ISO style.
pub fn format_date(days: i32) -> String {
    let (y, m, d) = date_to_ymd(days);
    let mut out = String::with_capacity(13);
    if write_ymd(&mut out, y, m, d) {
        out.push_str(" BC");
    }
    out
}

/// `HH:MM:SS[.ffffff]` with trailing fractional zeros removed.
fn write_time(out: &mut String, micros: i64) {
    use std::fmt::Write;
    let secs = micros / 1_000_000;
    let frac = micros % 1_000_000;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if frac != 0 {
        let f = format!("{frac:06}");
        out.push('.');
        out.push_str(f.trim_end_matches('0'));
    }
}

/// `time` output.
pub fn format_time(micros: i64) -> String {
    let mut out = String::with_capacity(15);
    write_time(&mut out, micros);
    out
}

/// `timestamp` output in the ISO style; with `offset_secs`, the
/// `timestamptz` form in a zone that is that many seconds east of UTC
/// (the value is shifted by the caller).
pub fn format_timestamp(micros: i64, offset_secs: Option<i32>) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let time = micros.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = date_to_ymd(days as i32);
    let mut out = String::with_capacity(32);
    let bc = write_ymd(&mut out, y, m, d);
    out.push(' ');
    write_time(&mut out, time);
    if let Some(off) = offset_secs {
        use std::fmt::Write;
        let sign = if off < 0 { '-' } else { '+' };
        let a = off.unsigned_abs();
        let _ = write!(out, "{sign}{:02}", a / 3600);
        if !a.is_multiple_of(3600) {
            let _ = write!(out, ":{:02}", a / 60 % 60);
        }
        if !a.is_multiple_of(60) {
            let _ = write!(out, ":{:02}", a % 60);
        }
    }
    if bc {
        out.push_str(" BC");
    }
    out
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
