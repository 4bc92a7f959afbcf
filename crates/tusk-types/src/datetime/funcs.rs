//! `extract` / `date_part`, `date_trunc` and `isfinite` (PostgreSQL 15's
//! `timestamp_part_common`, `interval_part_common`, `date_trunc`).
//!
//! `extract` returns `numeric` in PostgreSQL 15, with a fixed scale for the
//! fractional fields (`second` 6, `milliseconds` 3, `epoch` 6, `julian` a
//! numeric division); `date_part` returns `double precision`, computed with
//! PostgreSQL's own float formulas so the last bits agree. Years before 1
//! count as negative (44 BC is -44), and decades, centuries and millennia
//! follow PostgreSQL's BC arithmetic. On an infinite value, `epoch`, the
//! year-like fields and `julian` give ±Infinity and the others NULL.
//! Fields a type does not have are `unit "hour" not supported for type
//! date` (0A000); unknown ones `unit "x" not recognized for type ...`
//! (22023).

use super::zone::Zone;
use super::{
    date_is_finite, date_to_ymd, day_of_week, split_timestamp, timestamp_is_finite, ymd_to_date,
    Fields, TS_NOBEGIN, USECS_PER_DAY, USECS_PER_SEC,
};
use crate::error::{sqlstate, Result, TypeError};
use crate::interval::Interval;
use crate::numeric::Numeric;

/// A value `extract` reads from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    Date(i32),
    Time(i64),
    Timestamp(i64),
    /// A `timestamptz` and the offset (seconds east) of the zone it is
    /// shown in.
    TimestampTz(i64),
    Interval(Interval),
}

/// The fields `extract`, `date_part` and `date_trunc` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Dow,
    Isodow,
    Doy,
    Isoyear,
    Julian,
    Epoch,
    Timezone,
    TimezoneHour,
    TimezoneMinute,
}

/// Reads a unit name with PostgreSQL's aliases (any case).
pub fn unit_of(name: &str) -> Option<Unit> {
    use Unit::*;
    Some(match name.to_ascii_lowercase().as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => Microseconds,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => Milliseconds,
        "second" | "seconds" | "s" | "sec" | "secs" => Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Hour,
        "day" | "days" | "d" => Day,
        "week" | "weeks" | "w" => Week,
        "month" | "months" | "mon" | "mons" => Month,
        "quarter" | "qtr" => Quarter,
        "year" | "years" | "y" | "yr" | "yrs" => Year,
        "decade" | "decades" | "dec" | "decs" => Decade,
        "century" | "centuries" | "c" | "cent" => Century,
        "millennium" | "millennia" | "mil" | "mils" => Millennium,
        "dow" => Dow,
        "isodow" => Isodow,
        "doy" => Doy,
        "isoyear" => Isoyear,
        "julian" | "j" => Julian,
        "epoch" => Epoch,
        "timezone" => Timezone,
        "timezone_h" | "timezone_hour" => TimezoneHour,
        "timezone_m" | "timezone_minute" => TimezoneMinute,
        _ => return None,
    })
}

fn type_name(src: &Source) -> &'static str {
    match src {
        Source::Date(_) => "date",
        Source::Time(_) => "time without time zone",
        Source::Timestamp(_) => "timestamp without time zone",
        Source::TimestampTz(_) => "timestamp with time zone",
        Source::Interval(_) => "interval",
    }
}

fn not_recognized(name: &str, ty: &str) -> TypeError {
    TypeError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("unit \"{name}\" not recognized for type {ty}"),
    )
}

fn not_supported(name: &str, ty: &str) -> TypeError {
    TypeError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("unit \"{name}\" not supported for type {ty}"),
    )
}

/// The ISO 8601 week number and week-year of a date.
pub fn iso_week(days: i32) -> (i32, u32) {
    let (y, _, _) = date_to_ymd(days);
    // ISO weeks start on Monday; week 1 contains January 4th.
    let week1 = |year: i32| {
        let jan4 = ymd_to_date(year, 1, 4) as i32;
        jan4 - ((day_of_week(jan4) + 6) % 7) as i32
    };
    let mut year = y;
    if days < week1(y) {
        year -= 1;
    } else if days >= week1(y + 1) {
        year += 1;
    }
    (year, ((days - week1(year)) / 7 + 1) as u32)
}

/// PostgreSQL's `date2j`: the Julian day number.
fn julian_day(days: i32) -> i64 {
    days as i64 + 2_451_545
}

fn decade(year: i64) -> i64 {
    if year >= 0 {
        year / 10
    } else {
        -((8 - (year - 1)) / 10)
    }
}

fn century(year: i64) -> i64 {
    if year > 0 {
        (year + 99) / 100
    } else {
        -((99 - (year - 1)) / 100)
    }
}

fn millennium(year: i64) -> i64 {
    if year > 0 {
        (year + 999) / 1000
    } else {
        -((999 - (year - 1)) / 1000)
    }
}

/// What a field evaluates to before it becomes numeric or float.
enum Part {
    Int(i64),
    /// `value / 10^scale`, exactly.
    Scaled(i64, u16),
    /// The Julian day plus a fraction of a day, in microseconds.
    Julian(i64, i64),
    /// The field does not exist on an infinite value.
    Null,
    /// ±Infinity (`true`: negative).
    Inf(bool),
}

fn compute(unit: Unit, name: &str, src: Source, zone: &Zone) -> Result<Part> {
    use Unit::*;
    let ty = type_name(&src);
    let year_like = matches!(
        unit,
        Year | Decade | Century | Millennium | Isoyear | Julian | Epoch
    );
    // Infinite dates and timestamps.
    let infinite = match src {
        Source::Date(d) if !date_is_finite(d) => Some(d < 0),
        Source::Timestamp(t) | Source::TimestampTz(t) if !timestamp_is_finite(t) => {
            Some(t == TS_NOBEGIN)
        }
        _ => None,
    };
    match src {
        Source::Interval(iv) => return interval_part(unit, name, iv),
        Source::Time(t) => {
            let sec = t / USECS_PER_SEC % 60;
            let fsec = t % USECS_PER_SEC;
            return Ok(match unit {
                Microseconds => Part::Int(sec * USECS_PER_SEC + fsec),
                Milliseconds => Part::Scaled(sec * USECS_PER_SEC + fsec, 3),
                Second => Part::Scaled(sec * USECS_PER_SEC + fsec, 6),
                Minute => Part::Int(t / 60_000_000 % 60),
                Hour => Part::Int(t / 3_600_000_000),
                Epoch => Part::Scaled(t, 6),
                _ => return Err(not_supported(name, ty)),
            });
        }
        _ => {}
    }
    let date_only = matches!(src, Source::Date(_));
    if date_only
        && matches!(
            unit,
            Microseconds
                | Milliseconds
                | Second
                | Minute
                | Hour
                | Timezone
                | TimezoneHour
                | TimezoneMinute
        )
    {
        return Err(not_supported(name, ty));
    }
    if matches!(src, Source::Timestamp(_))
        && matches!(unit, Timezone | TimezoneHour | TimezoneMinute)
    {
        return Err(not_supported(name, ty));
    }
    if let Some(neg) = infinite {
        return Ok(if year_like {
            Part::Inf(neg)
        } else {
            Part::Null
        });
    }
    let (utc, local, offset) = match src {
        Source::Date(d) => {
            let t = d as i64 * USECS_PER_DAY;
            (t, t, 0)
        }
        Source::Timestamp(t) => (t, t, 0),
        Source::TimestampTz(t) => {
            let off = zone.offset_at(t);
            (t, t + off as i64 * USECS_PER_SEC, off)
        }
        _ => unreachable!(),
    };
    let f = Fields::of(local);
    let (days, tod) = split_timestamp(local);
    let year = f.year as i64;
    let micros_of_minute = f.second as i64 * USECS_PER_SEC + f.micros as i64;
    Ok(match unit {
        Microseconds => Part::Int(micros_of_minute),
        Milliseconds => Part::Scaled(micros_of_minute, 3),
        Second => Part::Scaled(micros_of_minute, 6),
        Minute => Part::Int(f.minute as i64),
        Hour => Part::Int(f.hour as i64),
        Day => Part::Int(f.day as i64),
        Month => Part::Int(f.month as i64),
        Quarter => Part::Int((f.month as i64 - 1) / 3 + 1),
        Week => Part::Int(iso_week(days).1 as i64),
        Year => Part::Int(if year > 0 { year } else { year - 1 }),
        Decade => Part::Int(decade(year)),
        Century => Part::Int(century(year)),
        Millennium => Part::Int(millennium(year)),
        Isoyear => {
            let y = iso_week(days).0 as i64;
            Part::Int(if y > 0 { y } else { y - 1 })
        }
        Dow => Part::Int(day_of_week(days) as i64),
        Isodow => Part::Int(match day_of_week(days) {
            0 => 7,
            d => d as i64,
        }),
        Doy => Part::Int(days as i64 - ymd_to_date(f.year, 1, 1) + 1),
        Julian if date_only => Part::Int(julian_day(days)),
        Julian => Part::Julian(julian_day(days), tod),
        Epoch if date_only => {
            Part::Int((utc - ymd_to_date(1970, 1, 1) * USECS_PER_DAY) / USECS_PER_SEC)
        }
        Epoch => Part::Scaled(utc - ymd_to_date(1970, 1, 1) * USECS_PER_DAY, 6),
        Timezone => Part::Int(offset as i64),
        TimezoneHour => Part::Int((offset / 3600) as i64),
        TimezoneMinute => Part::Int((offset / 60 % 60) as i64),
    })
}

fn interval_part(unit: Unit, name: &str, iv: Interval) -> Result<Part> {
    use Unit::*;
    let t = iv.micros;
    let year = (iv.months / 12) as i64;
    Ok(match unit {
        Microseconds => Part::Int(t % 60_000_000),
        Milliseconds => Part::Scaled(t % 60_000_000, 3),
        Second => Part::Scaled(t % 60_000_000, 6),
        Minute => Part::Int(t / 60_000_000 % 60),
        Hour => Part::Int(t / 3_600_000_000),
        Day => Part::Int(iv.days as i64),
        Month => Part::Int((iv.months % 12) as i64),
        Quarter => Part::Int(((iv.months % 12) / 3 + 1) as i64),
        Year => Part::Int(year),
        Decade => Part::Int(year / 10),
        Century => Part::Int(year / 100),
        Millennium => Part::Int(year / 1000),
        Epoch => {
            let secs = (365.25 * 86400.0) as i64 * year
                + 30 * 86400 * (iv.months % 12) as i64
                + 86400 * iv.days as i64;
            Part::Scaled(secs * USECS_PER_SEC + t, 6)
        }
        _ => return Err(not_supported(name, "interval")),
    })
}

fn resolve(name: &str, src: &Source) -> Result<Unit> {
    unit_of(name).ok_or_else(|| not_recognized(name, type_name(src)))
}

/// `extract(field from value)`: numeric, or NULL.
pub fn extract(name: &str, src: Source, zone: &Zone) -> Result<Option<Numeric>> {
    let unit = resolve(name, &src)?;
    Ok(match compute(unit, name, src, zone)? {
        Part::Int(v) => Some(Numeric::from_i64(v)),
        Part::Scaled(v, s) => Some(Numeric::from_parts(v as i128, s)),
        Part::Julian(j, tod) => {
            let frac = Numeric::from_i64(tod).checked_div(&Numeric::from_i64(USECS_PER_DAY))?;
            Some(Numeric::from_i64(j).checked_add(&frac)?)
        }
        Part::Inf(neg) => Some(if neg {
            Numeric::neg_infinity()
        } else {
            Numeric::infinity()
        }),
        Part::Null => None,
    })
}

/// `date_part(field, value)`: double precision, or NULL.
pub fn date_part(name: &str, src: Source, zone: &Zone) -> Result<Option<f64>> {
    let unit = resolve(name, &src)?;
    if let (Source::Interval(iv), Unit::Epoch) = (src, unit) {
        // interval_part's float formula, years at 365.25 days.
        let v = iv.micros as f64 / 1e6
            + (365.25 * 86400.0) * (iv.months / 12) as f64
            + (30.0 * 86400.0) * (iv.months % 12) as f64
            + 86400.0 * iv.days as f64;
        return Ok(Some(v));
    }
    Ok(match compute(unit, name, src, zone)? {
        Part::Int(v) => Some(v as f64),
        // The float forms PostgreSQL computes: sec + fsec / 1e6 and so on.
        Part::Scaled(v, 6) if unit == Unit::Second => {
            Some((v / USECS_PER_SEC) as f64 + (v % USECS_PER_SEC) as f64 / 1e6)
        }
        Part::Scaled(v, 3) => {
            Some((v / USECS_PER_SEC) as f64 * 1000.0 + (v % USECS_PER_SEC) as f64 / 1000.0)
        }
        Part::Scaled(v, _) => Some(v as f64 / 1e6),
        Part::Julian(j, tod) => {
            let secs = (tod / USECS_PER_SEC) as f64 + (tod % USECS_PER_SEC) as f64 / 1e6;
            Some(j as f64 + secs / 86400.0)
        }
        Part::Inf(neg) => Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        Part::Null => None,
    })
}

/// Truncates broken-down local fields to `unit` (`date_trunc`'s core).
fn trunc_fields(mut f: Fields, unit: Unit, days: i32) -> Option<Fields> {
    use Unit::*;
    let y = f.year;
    match unit {
        Millennium => {
            f.year = if y > 0 {
                (y + 999) / 1000 * 1000 - 999
            } else {
                -((999 - (y - 1)) / 1000) * 1000 + 1
            };
            f.month = 1;
            f.day = 1;
        }
        Century => {
            f.year = if y > 0 {
                (y + 99) / 100 * 100 - 99
            } else {
                -((99 - (y - 1)) / 100) * 100 + 1
            };
            f.month = 1;
            f.day = 1;
        }
        Decade => {
            f.year = if y > 0 {
                y / 10 * 10
            } else {
                -((8 - (y - 1)) / 10) * 10
            };
            f.month = 1;
            f.day = 1;
        }
        Year => {
            f.month = 1;
            f.day = 1;
        }
        Quarter => {
            f.month = (f.month - 1) / 3 * 3 + 1;
            f.day = 1;
        }
        Month => f.day = 1,
        Week => {
            let monday = days - ((day_of_week(days) + 6) % 7) as i32;
            let (yy, mm, dd) = date_to_ymd(monday);
            f.year = yy;
            f.month = mm;
            f.day = dd;
        }
        Day | Hour | Minute | Second | Milliseconds | Microseconds => {}
        _ => return None,
    }
    match unit {
        Millennium | Century | Decade | Year | Quarter | Month | Week | Day => {
            f.hour = 0;
            f.minute = 0;
            f.second = 0;
            f.micros = 0;
        }
        Hour => {
            f.minute = 0;
            f.second = 0;
            f.micros = 0;
        }
        Minute => {
            f.second = 0;
            f.micros = 0;
        }
        Second => f.micros = 0,
        Milliseconds => f.micros = f.micros / 1000 * 1000,
        _ => {}
    }
    Some(f)
}

/// `date_trunc(field, timestamp)`.
pub fn date_trunc_timestamp(name: &str, t: i64) -> Result<i64> {
    let unit = unit_of(name).ok_or_else(|| not_recognized(name, "timestamp without time zone"))?;
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let (days, _) = split_timestamp(t);
    trunc_fields(Fields::of(t), unit, days)
        .map(|f| f.to_timestamp())
        .ok_or_else(|| not_supported(name, "timestamp without time zone"))
}

/// `date_trunc(field, timestamptz [, zone])`: truncated in local time of `zone`.
pub fn date_trunc_timestamptz(name: &str, t: i64, zone: &Zone) -> Result<i64> {
    let unit = unit_of(name).ok_or_else(|| not_recognized(name, "timestamp with time zone"))?;
    if !timestamp_is_finite(t) {
        return Ok(t);
    }
    let local = t + zone.offset_at(t) as i64 * USECS_PER_SEC;
    let (days, _) = split_timestamp(local);
    let f = trunc_fields(Fields::of(local), unit, days)
        .ok_or_else(|| not_supported(name, "timestamp with time zone"))?;
    // Units below an hour keep the instant's own offset.
    if matches!(
        unit,
        Unit::Minute | Unit::Second | Unit::Milliseconds | Unit::Microseconds
    ) {
        return Ok(f.to_timestamp() - zone.offset_at(t) as i64 * USECS_PER_SEC);
    }
    Ok(zone.local_to_utc(f.to_timestamp()))
}

/// `date_trunc(field, interval)`.
pub fn date_trunc_interval(name: &str, iv: Interval) -> Result<Interval> {
    use Unit::*;
    let unit = unit_of(name).ok_or_else(|| not_recognized(name, "interval"))?;
    let (mut m, mut d, mut t) = (iv.months, iv.days, iv.micros);
    let year = m / 12;
    match unit {
        Millennium => (m, d, t) = (year / 1000 * 1000 * 12, 0, 0),
        Century => (m, d, t) = (year / 100 * 100 * 12, 0, 0),
        Decade => (m, d, t) = (year / 10 * 10 * 12, 0, 0),
        Year => (m, d, t) = (year * 12, 0, 0),
        Quarter => (m, d, t) = (year * 12 + (m % 12) / 3 * 3, 0, 0),
        Month => (d, t) = (0, 0),
        Day => t = 0,
        Hour => t = t / 3_600_000_000 * 3_600_000_000,
        Minute => t = t / 60_000_000 * 60_000_000,
        Second => t = t / 1_000_000 * 1_000_000,
        Milliseconds => t = t / 1000 * 1000,
        Microseconds => {}
        Week => {
            return Err(TypeError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("unit \"{name}\" not supported for type interval"),
            )
            .with_detail("Months usually have fractional weeks."))
        }
        _ => return Err(not_supported(name, "interval")),
    }
    Ok(Interval::new(m, d, t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::format::{format_timestamp, format_timestamptz_in};
    use crate::interval::{format_interval, parse_interval};
    use crate::settings::Settings;

    fn ts(s: &str) -> i64 {
        crate::datetime::parse::parse_timestamp(s, &Settings::default(), 0).unwrap()
    }

    fn show(r: Result<Option<Numeric>>) -> String {
        match r {
            Ok(Some(n)) => n.to_string(),
            Ok(None) => "NULL".into(),
            Err(e) => format!("ERROR {}: {}", e.code, e.message),
        }
    }

    #[test]
    fn extract_matches_postgres() {
        // Checked against PostgreSQL 15: (field, extract, date_part) on
        // timestamp '2021-02-03 04:05:06.5', and extract on timestamptz
        // '0044-03-15 12:00:01.123457 BC' in UTC.
        let cases = [
            ("microseconds", "6500000", 6500000.0, "1123457"),
            ("milliseconds", "6500.000", 6500.0, "1123.457"),
            ("second", "6.500000", 6.5, "1.123457"),
            ("minute", "5", 5.0, "0"),
            ("hour", "4", 4.0, "12"),
            ("day", "3", 3.0, "15"),
            ("month", "2", 2.0, "3"),
            ("quarter", "1", 1.0, "1"),
            ("week", "5", 5.0, "11"),
            ("year", "2021", 2021.0, "-44"),
            ("decade", "202", 202.0, "-5"),
            ("century", "21", 21.0, "-1"),
            ("millennium", "3", 3.0, "-1"),
            ("isoyear", "2021", 2021.0, "-44"),
            ("dow", "3", 3.0, "5"),
            ("isodow", "3", 3.0, "5"),
            ("doy", "34", 34.0, "74"),
            (
                "julian",
                "2459249.17021412037037037037",
                2459249.1702141203,
                "1705428.50001300297453703704",
            ),
            (
                "epoch",
                "1612325106.500000",
                1612325106.5,
                "-63517780798.876543",
            ),
        ];
        let z = Zone::utc();
        let a = ts("2021-02-03 04:05:06.5");
        let b = ts("0044-03-15 12:00:01.123457 BC");
        for (field, want, want_f, want_bc) in cases {
            assert_eq!(
                show(extract(field, Source::Timestamp(a), &z)),
                want,
                "{field}"
            );
            assert_eq!(
                date_part(field, Source::Timestamp(a), &z).unwrap(),
                Some(want_f),
                "{field}"
            );
            assert_eq!(
                show(extract(field, Source::TimestampTz(b), &z)),
                want_bc,
                "{field} BC"
            );
        }
        assert_eq!(
            show(extract("timezone", Source::Timestamp(a), &z)),
            "ERROR 0A000: unit \"timezone\" not supported for type timestamp without time zone"
        );
        assert_eq!(
            show(extract("foo", Source::Timestamp(a), &z)),
            "ERROR 22023: unit \"foo\" not recognized for type timestamp without time zone"
        );
        let d = ymd_to_date(2021, 2, 3) as i32;
        assert_eq!(show(extract("epoch", Source::Date(d), &z)), "1612310400");
        assert_eq!(show(extract("julian", Source::Date(d), &z)), "2459249");
        assert_eq!(
            show(extract("hour", Source::Date(d), &z)),
            "ERROR 0A000: unit \"hour\" not supported for type date"
        );
        let iv = parse_interval("-1 year 14 mons 3 days 04:05:06.789", Default::default()).unwrap();
        assert_eq!(
            show(extract("epoch", Source::Interval(iv), &z)),
            "5457906.789000"
        );
        assert_eq!(
            show(extract("second", Source::Interval(iv), &z)),
            "6.789000"
        );
        let iv2 = parse_interval("1 year 14 mons 3 days 04:05:06.789", Default::default()).unwrap();
        assert_eq!(
            date_part("epoch", Source::Interval(iv2), &z).unwrap(),
            Some(68573106.789)
        );
        assert_eq!(
            date_part("year", Source::Interval(iv2), &z).unwrap(),
            Some(2.0)
        );
        assert_eq!(
            show(extract("epoch", Source::Time(14_706_500_000), &z)),
            "14706.500000"
        );
        assert_eq!(
            show(extract(
                "year",
                Source::Timestamp(super::super::TS_NOEND),
                &z
            )),
            "Infinity"
        );
        assert_eq!(
            show(extract(
                "hour",
                Source::Timestamp(super::super::TS_NOEND),
                &z
            )),
            "NULL"
        );
        assert_eq!(
            show(extract(
                "week",
                Source::Date(ymd_to_date(2021, 1, 1) as i32),
                &z
            )),
            "53"
        );
        assert_eq!(
            show(extract(
                "isoyear",
                Source::Date(ymd_to_date(2021, 1, 1) as i32),
                &z
            )),
            "2020"
        );
    }

    #[test]
    fn date_trunc_matches_postgres() {
        let t = ts("2021-02-03 04:05:06.5");
        let f = |u: &str, t: i64| format_timestamp(date_trunc_timestamp(u, t).unwrap(), None);
        assert_eq!(f("week", t), "2021-02-01 00:00:00");
        assert_eq!(f("quarter", ts("2021-05-03")), "2021-04-01 00:00:00");
        assert_eq!(f("decade", ts("2021-05-03")), "2020-01-01 00:00:00");
        assert_eq!(f("century", ts("2021-05-03")), "2001-01-01 00:00:00");
        assert_eq!(f("millennium", ts("2021-05-03")), "2001-01-01 00:00:00");
        assert_eq!(
            f("milliseconds", ts("2021-02-03 04:05:06.123456")),
            "2021-02-03 04:05:06.123"
        );
        assert_eq!(f("century", ts("0044-03-15 BC")), "0100-01-01 00:00:00 BC");
        let mut s = Settings::default();
        s.set_time_zone("America/New_York").unwrap();
        let tz = crate::datetime::parse::parse_timestamptz("2021-03-14 12:00", &s, 0).unwrap();
        assert_eq!(
            format_timestamptz_in(date_trunc_timestamptz("day", tz, &s.time_zone).unwrap(), &s),
            "2021-03-14 00:00:00-05"
        );
        let tokyo = Zone::named("Asia/Tokyo").unwrap();
        assert_eq!(
            format_timestamptz_in(date_trunc_timestamptz("day", tz, &tokyo).unwrap(), &s),
            "2021-03-14 11:00:00-04"
        );
        let iv = |x: &str| parse_interval(x, Default::default()).unwrap();
        assert_eq!(
            format_interval(date_trunc_interval("hour", iv("1 day 04:05:06")).unwrap()),
            "1 day 04:00:00"
        );
        assert_eq!(
            format_interval(date_trunc_interval("year", iv("1 year 14 mons 3 days")).unwrap()),
            "2 years"
        );
    }
}
