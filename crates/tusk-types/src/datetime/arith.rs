//! Date and time arithmetic (PostgreSQL 15's `date.c` and `timestamp.c`).
//!
//! - `date ± integer` moves by days; `date - date` is an integer;
//!   infinities stay infinite, and subtracting them is an error.
//! - `timestamp + interval` applies the months first (keeping the day of
//!   month, clamped to the month's length: Jan 31 + 1 month is Feb 28),
//!   then the days, then the microseconds. For `timestamptz` the months and
//!   days move the *local* time in the session's zone and the offset is
//!   recomputed afterwards, so `+ '1 day'` across a DST change keeps the
//!   wall-clock time while `+ '24 hours'` does not.
//! - `timestamp - timestamp` is an interval of microseconds, with whole
//!   days moved into the day field (`justify_hours`).
//! - `time ± interval` wraps around midnight; `time - time` is an interval.
//! - `age` subtracts field by field with borrows, as `timestamp_age` does.
//!
//! Results outside the types' ranges are `date out of range` /
//! `timestamp out of range` (22008).

use super::zone::Zone;
use super::{
    date_is_finite, date_to_ymd, days_in_month, timestamp_is_finite, valid_date, valid_timestamp,
    ymd_to_date, Fields, DATE_NOBEGIN, DATE_NOEND, TS_NOBEGIN, TS_NOEND, USECS_PER_DAY,
    USECS_PER_SEC,
};
use crate::error::{sqlstate, Result, TypeError};
use crate::interval::Interval;

pub fn date_out_of_range() -> TypeError {
    TypeError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range")
}

pub fn timestamp_out_of_range() -> TypeError {
    TypeError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// `date + integer` (`date - n` is `date + -n`).
pub fn date_plus_days(d: i32, n: i64) -> Result<i32> {
    if !date_is_finite(d) {
        return Ok(d);
    }
    let r = d as i64 + n;
    if !valid_date(r) {
        return Err(date_out_of_range());
    }
    Ok(r as i32)
}

/// `date - date`.
pub fn date_minus_date(a: i32, b: i32) -> Result<i32> {
    if !date_is_finite(a) || !date_is_finite(b) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite dates",
        ));
    }
    Ok(a - b)
}

/// `date::timestamp` (midnight).
pub fn date_to_timestamp(d: i32) -> Result<i64> {
    match d {
        DATE_NOBEGIN => Ok(TS_NOBEGIN),
        DATE_NOEND => Ok(TS_NOEND),
        _ => {
            let t = d as i64 * USECS_PER_DAY;
            if !valid_timestamp(t) {
                return Err(TypeError::new(
                    sqlstate::DATETIME_FIELD_OVERFLOW,
                    "date out of range for timestamp",
                ));
            }
            Ok(t)
        }
    }
}

/// `date::timestamptz`: midnight in `zone`.
pub fn date_to_timestamptz(d: i32, zone: &Zone) -> Result<i64> {
    let t = date_to_timestamp(d)?;
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let utc = zone.local_to_utc(t);
    if !valid_timestamp(utc) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "date out of range for timestamp",
        ));
    }
    Ok(utc)
}

/// `timestamp::date` (the day it falls on).
pub fn timestamp_to_date(t: i64) -> Result<i32> {
    match t {
        TS_NOBEGIN => Ok(DATE_NOBEGIN),
        TS_NOEND => Ok(DATE_NOEND),
        _ => Ok(t.div_euclid(USECS_PER_DAY) as i32),
    }
}

/// `timestamptz::timestamp`: the local time in `zone`.
pub fn timestamptz_to_timestamp(t: i64, zone: &Zone) -> Result<i64> {
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let local = t + zone.offset_at(t) as i64 * USECS_PER_SEC;
    if !valid_timestamp(local) {
        return Err(timestamp_out_of_range());
    }
    Ok(local)
}

/// `timestamp::timestamptz`: the local time read in `zone`.
pub fn timestamp_to_timestamptz(t: i64, zone: &Zone) -> Result<i64> {
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let utc = zone.local_to_utc(t);
    if !valid_timestamp(utc) {
        return Err(timestamp_out_of_range());
    }
    Ok(utc)
}

/// `timestamp::time`.
pub fn timestamp_to_time(t: i64) -> i64 {
    t.rem_euclid(USECS_PER_DAY)
}

/// `date + time`.
pub fn date_plus_time(d: i32, time: i64) -> Result<i64> {
    let t = date_to_timestamp(d)?;
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let r = t + time;
    if !valid_timestamp(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// Adds `months` to a local timestamp, clamping the day of month.
fn add_months(t: i64, months: i32) -> Result<i64> {
    if months == 0 {
        return Ok(t);
    }
    let mut f = Fields::of(t);
    let total = f.year as i64 * 12 + (f.month as i64 - 1) + months as i64;
    let year = total.div_euclid(12);
    if year.abs() > 300_000 {
        return Err(timestamp_out_of_range());
    }
    f.year = year as i32;
    f.month = (total.rem_euclid(12) + 1) as u32;
    f.day = f.day.min(days_in_month(f.year, f.month));
    Ok(f.to_timestamp())
}

/// `timestamp + interval`.
pub fn timestamp_plus_interval(t: i64, iv: Interval) -> Result<i64> {
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let mut r = add_months(t, iv.months)?;
    r = r
        .checked_add(iv.days as i64 * USECS_PER_DAY)
        .and_then(|r| r.checked_add(iv.micros))
        .ok_or_else(timestamp_out_of_range)?;
    if !valid_timestamp(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `timestamp - interval`.
pub fn timestamp_minus_interval(t: i64, iv: Interval) -> Result<i64> {
    timestamp_plus_interval(t, iv.checked_neg()?)
}

/// `timestamptz + interval` in `zone` (months and days in local time).
pub fn timestamptz_plus_interval(t: i64, iv: Interval, zone: &Zone) -> Result<i64> {
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let mut r = t;
    if iv.months != 0 || iv.days != 0 {
        let local = r + zone.offset_at(r) as i64 * USECS_PER_SEC;
        let moved = add_months(local, iv.months)?
            .checked_add(iv.days as i64 * USECS_PER_DAY)
            .ok_or_else(timestamp_out_of_range)?;
        if !valid_timestamp(moved) {
            return Err(timestamp_out_of_range());
        }
        r = zone.local_to_utc(moved);
    }
    r = r
        .checked_add(iv.micros)
        .ok_or_else(timestamp_out_of_range)?;
    if !valid_timestamp(r) {
        return Err(timestamp_out_of_range());
    }
    Ok(r)
}

/// `timestamptz - interval` in `zone`.
pub fn timestamptz_minus_interval(t: i64, iv: Interval, zone: &Zone) -> Result<i64> {
    timestamptz_plus_interval(t, iv.checked_neg()?, zone)
}

/// `timestamp - timestamp` (also for two `timestamptz`).
pub fn timestamp_minus_timestamp(a: i64, b: i64) -> Result<Interval> {
    if !timestamp_is_finite(a) || !timestamp_is_finite(b) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let diff = a
        .checked_sub(b)
        .ok_or_else(crate::interval::arith_out_of_range)?;
    Interval::new(0, 0, diff).justify_hours()
}

/// `time + interval` (wraps at midnight).
pub fn time_plus_interval(t: i64, iv: Interval) -> i64 {
    (t + iv.micros % USECS_PER_DAY).rem_euclid(USECS_PER_DAY)
}

/// `time - interval`.
pub fn time_minus_interval(t: i64, iv: Interval) -> i64 {
    (t - iv.micros % USECS_PER_DAY).rem_euclid(USECS_PER_DAY)
}

/// `time - time`.
pub fn time_minus_time(a: i64, b: i64) -> Interval {
    Interval::new(0, 0, a - b)
}

/// `age(a, b)` over broken-down local times (`timestamp_age`).
pub fn age(a: i64, b: i64) -> Result<Interval> {
    if !timestamp_is_finite(a) || !timestamp_is_finite(b) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let (f1, f2) = (Fields::of(a), Fields::of(b));
    let neg = a < b;
    let s = |x: i64| if neg { -x } else { x };
    let mut fsec = s(f1.micros as i64 - f2.micros as i64);
    let mut sec = s(f1.second as i64 - f2.second as i64);
    let mut min = s(f1.minute as i64 - f2.minute as i64);
    let mut hour = s(f1.hour as i64 - f2.hour as i64);
    let mut mday = s(f1.day as i64 - f2.day as i64);
    let mut mon = s(f1.month as i64 - f2.month as i64);
    let mut year = s(f1.year as i64 - f2.year as i64);
    while fsec < 0 {
        fsec += USECS_PER_SEC;
        sec -= 1;
    }
    while sec < 0 {
        sec += 60;
        min -= 1;
    }
    while min < 0 {
        min += 60;
        hour -= 1;
    }
    while hour < 0 {
        hour += 24;
        mday -= 1;
    }
    while mday < 0 {
        let f = if neg { f1 } else { f2 };
        mday += days_in_month(f.year, f.month) as i64;
        mon -= 1;
    }
    while mon < 0 {
        mon += 12;
        year -= 1;
    }
    let months = s(year * 12 + mon);
    let days = s(mday);
    let micros = s(((hour * 60 + min) * 60 + sec) * USECS_PER_SEC + fsec);
    Ok(Interval::new(
        i32::try_from(months).map_err(|_| crate::interval::arith_out_of_range())?,
        i32::try_from(days).map_err(|_| crate::interval::arith_out_of_range())?,
        micros,
    ))
}

/// `make_date(year, month, day)`: negative years are BC.
pub fn make_date(year: i32, month: i32, day: i32) -> Result<i32> {
    let bad = || {
        TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {year}-{month:02}-{day:02}"),
        )
    };
    if year == 0 {
        return Err(bad());
    }
    let y = if year < 0 { year + 1 } else { year };
    if !(1..=12).contains(&month) || day < 1 || day as u32 > days_in_month(y, month as u32) {
        return Err(bad());
    }
    let d = ymd_to_date(y, month as u32, day as u32);
    if !valid_date(d) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date out of range: {year}-{month:02}-{day:02}"),
        ));
    }
    Ok(d as i32)
}

/// C's `%02g` of a seconds value.
fn sec_g(sec: f64) -> String {
    let g = crate::float::format_float8(sec);
    if g.len() < 2 {
        format!("0{g}")
    } else {
        g
    }
}

/// `make_time(hour, min, sec)`.
pub fn make_time(hour: i32, min: i32, sec: f64) -> Result<i64> {
    let micros = (sec * 1e6).round_ties_even() as i64;
    let t = (hour as i64 * 60 + min as i64) * 60 * USECS_PER_SEC + micros;
    if !((0..24).contains(&hour) || hour == 24 && min == 0 && micros == 0)
        || !(0..60).contains(&min)
        || !(0.0..=60.0).contains(&sec)
        || t > USECS_PER_DAY
    {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!(
                "time field value out of range: {hour}:{min:02}:{}",
                sec_g(sec)
            ),
        ));
    }
    Ok(t)
}

/// `make_timestamp(year, month, mday, hour, min, sec)`.
pub fn make_timestamp(
    year: i32,
    month: i32,
    day: i32,
    hour: i32,
    min: i32,
    sec: f64,
) -> Result<i64> {
    let d = make_date(year, month, day)?;
    let t = make_time(hour, min, sec)?;
    let r = d as i64 * USECS_PER_DAY + t;
    if !valid_timestamp(r) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!(
                "timestamp out of range: {year}-{month:02}-{day:02} {hour}:{min:02}:{}",
                sec_g(sec)
            ),
        ));
    }
    Ok(r)
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)`.
pub fn make_interval(
    years: i32,
    months: i32,
    weeks: i32,
    days: i32,
    hours: i32,
    mins: i32,
    secs: f64,
) -> Result<Interval> {
    let m = (years as i64 * 12 + months as i64).try_into();
    let d = (weeks as i64 * 7 + days as i64).try_into();
    let t = (hours as f64 * 3600.0 + mins as f64 * 60.0 + secs) * 1e6;
    match (m, d) {
        (Ok(m), Ok(d)) if t.is_finite() && t.abs() < 9.2e18 => {
            Ok(Interval::new(m, d, t.round_ties_even() as i64))
        }
        _ => Err(crate::interval::arith_out_of_range()),
    }
}

/// The broken-down date of a date value (for callers that format).
pub fn date_fields(d: i32) -> (i32, u32, u32) {
    date_to_ymd(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::format::{format_date, format_timestamp, format_timestamptz_in};
    use crate::interval::{format_interval, parse_interval};
    use crate::settings::Settings;

    fn ts(y: i32, m: u32, d: u32, h: i64) -> i64 {
        ymd_to_date(y, m, d) * USECS_PER_DAY + h * 3_600_000_000
    }
    fn iv(s: &str) -> Interval {
        parse_interval(s, Default::default()).unwrap()
    }
    fn err<T: std::fmt::Debug>(r: Result<T>) -> String {
        let e = r.unwrap_err();
        format!("{}: {}", e.code, e.message)
    }

    #[test]
    fn matches_postgres() {
        // Checked against PostgreSQL 15.
        assert_eq!(
            err(date_plus_days(ymd_to_date(5874897, 12, 31) as i32, 1)),
            "22008: date out of range"
        );
        assert_eq!(
            err(date_minus_date(DATE_NOEND, 0)),
            "22008: cannot subtract infinite dates"
        );
        assert_eq!(date_plus_days(DATE_NOEND, 1).unwrap(), DATE_NOEND);
        let jan31 = date_to_timestamp(ymd_to_date(2021, 1, 31) as i32).unwrap();
        assert_eq!(
            format_timestamp(timestamp_plus_interval(jan31, iv("1 month")).unwrap(), None),
            "2021-02-28 00:00:00"
        );
        assert_eq!(
            format_timestamp(
                timestamp_plus_interval(ts(2021, 1, 31, 10), iv("1 month 1 day 1 hour")).unwrap(),
                None
            ),
            "2021-03-01 11:00:00"
        );
        assert_eq!(
            err(timestamp_minus_timestamp(TS_NOEND, 0)),
            "22008: cannot subtract infinite timestamps"
        );
        assert_eq!(
            format_interval(
                timestamp_minus_timestamp(ts(2021, 3, 1, 0), ts(2020, 1, 1, 12)).unwrap()
            ),
            "424 days 12:00:00"
        );
        assert_eq!(
            format_interval(
                timestamp_minus_timestamp(ts(2020, 1, 1, 0), ts(2021, 3, 1, 12)).unwrap()
            ),
            "-425 days -12:00:00"
        );
        let h = 3_600_000_000;
        assert_eq!(time_plus_interval(23 * h, iv("2 hours")), h);
        assert_eq!(format_interval(time_minus_time(h, 3 * h)), "-02:00:00");
        assert_eq!(time_minus_interval(h, iv("3 hours")), 22 * h);
        let mut s = Settings::default();
        s.set_time_zone("America/New_York").unwrap();
        let t = s.time_zone.local_to_utc(ts(2021, 3, 13, 12));
        assert_eq!(
            format_timestamptz_in(
                timestamptz_plus_interval(t, iv("1 day"), &s.time_zone).unwrap(),
                &s
            ),
            "2021-03-14 12:00:00-04"
        );
        assert_eq!(
            format_timestamptz_in(
                timestamptz_plus_interval(t, iv("24 hours"), &s.time_zone).unwrap(),
                &s
            ),
            "2021-03-14 13:00:00-04"
        );
        assert_eq!(
            format_interval(age(ts(2021, 3, 1, 0), ts(2020, 1, 31, 12)).unwrap()),
            "1 year 1 mon 12:00:00"
        );
        assert_eq!(
            format_interval(age(ts(2020, 1, 31, 0), ts(2021, 3, 1, 12)).unwrap()),
            "-1 years -1 mons -1 days -12:00:00"
        );
        assert_eq!(
            err(timestamp_plus_interval(ts(294276, 12, 31, 0), iv("1 day"))),
            "22008: timestamp out of range"
        );
        assert_eq!(
            timestamp_plus_interval(TS_NOEND, iv("1 day")).unwrap(),
            TS_NOEND
        );
        let d = ymd_to_date(2021, 1, 1) as i32;
        assert_eq!(
            format_timestamp(
                timestamp_minus_interval(date_to_timestamp(d).unwrap(), iv("1 day")).unwrap(),
                None
            ),
            "2020-12-31 00:00:00"
        );
        assert_eq!(
            format_timestamp(date_plus_time(d, 4 * h + 300_000_000).unwrap(), None),
            "2021-01-01 04:05:00"
        );
        assert_eq!(format_date(make_date(-44, 3, 15).unwrap()), "0044-03-15 BC");
        assert_eq!(
            err(make_date(2021, 2, 30)),
            "22008: date field value out of range: 2021-02-30"
        );
        assert_eq!(
            err(make_date(0, 1, 1)),
            "22008: date field value out of range: 0-01-01"
        );
        assert_eq!(
            err(make_time(25, 0, 0.0)),
            "22008: time field value out of range: 25:00:00"
        );
        assert_eq!(make_time(24, 0, 0.0).unwrap(), USECS_PER_DAY);
        assert_eq!(
            format_interval(make_interval(1, 2, 3, 4, 5, 6, 7.5).unwrap()),
            "1 year 2 mons 25 days 05:06:07.5"
        );
    }
}
