//! Output of `date`, `time`, `timestamp` and `timestamptz` in each
//! `DateStyle` (PostgreSQL's `EncodeDateOnly` / `EncodeDateTime`).
//!
//! | style | date | timestamptz |
//! |---|---|---|
//! | ISO | `1999-01-08` | `1999-01-08 04:05:06-05` |
//! | SQL, MDY | `01/08/1999` | `01/08/1999 04:05:06 EST` |
//! | SQL, DMY | `08/01/1999` | `08/01/1999 04:05:06 EST` |
//! | Postgres, MDY | `01-08-1999` | `Fri Jan 08 04:05:06 1999 EST` |
//! | Postgres, DMY | `08-01-1999` | `Fri 08 Jan 04:05:06 1999 EST` |
//! | German | `08.01.1999` | `08.01.1999 04:05:06 EST` |
//!
//! Years print with at least four digits; years before 1 print as
//! `1 - year` with ` BC` at the end. Seconds keep their fractional digits
//! without trailing zeros. ISO prints a zone as its offset (`+05:30`); the
//! other styles print the zone's abbreviation. `timestamp` is the same
//! without the zone; `infinity` and `-infinity` print as such in every
//! style.

use super::zone::Zone;
use super::{date_is_finite, date_to_ymd, day_of_week, split_timestamp, DATE_NOBEGIN, TS_NOBEGIN};
use crate::settings::{DateOrder, DateStyle, Settings};
use std::fmt::Write;

pub const MONTH_ABBREVS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
pub const DAY_ABBREVS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

fn shown_year(year: i32) -> (i32, bool) {
    if year <= 0 {
        (1 - year, true)
    } else {
        (year, false)
    }
}

/// `HH:MM:SS[.ffffff]` with trailing fractional zeros removed.
pub fn write_time(out: &mut String, micros: i64) {
    let secs = micros / 1_000_000;
    let frac = micros % 1_000_000;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    write_fraction(out, frac);
}

/// `.ffffff` without trailing zeros (nothing for 0).
pub fn write_fraction(out: &mut String, frac: i64) {
    if frac != 0 {
        let f = format!("{frac:06}");
        out.push('.');
        out.push_str(f.trim_end_matches('0'));
    }
}

/// `+HH[:MM[:SS]]` for an offset east of UTC.
pub fn write_offset(out: &mut String, off: i32) {
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

/// `date` output in ISO style.
pub fn format_date(days: i32) -> String {
    format_date_in(days, &Settings::default())
}

/// `date` output in the session's `DateStyle`.
pub fn format_date_in(days: i32, s: &Settings) -> String {
    if !date_is_finite(days) {
        return if days == DATE_NOBEGIN {
            "-infinity"
        } else {
            "infinity"
        }
        .into();
    }
    let (y, m, d) = date_to_ymd(days);
    let (year, bc) = shown_year(y);
    let mut out = String::with_capacity(16);
    let dmy = s.date_order == DateOrder::Dmy;
    let _ = match s.date_style {
        DateStyle::Iso => write!(out, "{year:04}-{m:02}-{d:02}"),
        DateStyle::Sql if dmy => write!(out, "{d:02}/{m:02}/{year:04}"),
        DateStyle::Sql => write!(out, "{m:02}/{d:02}/{year:04}"),
        DateStyle::German => write!(out, "{d:02}.{m:02}.{year:04}"),
        DateStyle::Postgres if dmy => write!(out, "{d:02}-{m:02}-{year:04}"),
        DateStyle::Postgres => write!(out, "{m:02}-{d:02}-{year:04}"),
    };
    if bc {
        out.push_str(" BC");
    }
    out
}

/// `time` output (the same in every style).
pub fn format_time(micros: i64) -> String {
    let mut out = String::with_capacity(15);
    write_time(&mut out, micros);
    out
}

/// `timestamp` output in ISO style; with `offset_secs`, the `timestamptz`
/// form in a zone that many seconds east of UTC (the caller has shifted
/// the value to local time).
pub fn format_timestamp(micros: i64, offset_secs: Option<i32>) -> String {
    let zone = offset_secs.map(|o| (o, String::new()));
    encode(micros, zone, &Settings::default())
}

/// `timestamp` output in the session's `DateStyle`.
pub fn format_timestamp_in(micros: i64, s: &Settings) -> String {
    encode(micros, None, s)
}

/// `timestamptz` output: the instant shown in the session's time zone.
pub fn format_timestamptz_in(utc_micros: i64, s: &Settings) -> String {
    format_timestamptz_zone(utc_micros, &s.time_zone, s)
}

/// `timestamptz` output in a given zone.
pub fn format_timestamptz_zone(utc_micros: i64, zone: &Zone, s: &Settings) -> String {
    if !super::timestamp_is_finite(utc_micros) {
        return encode(utc_micros, None, s);
    }
    let off = zone.offset_at(utc_micros);
    let local = utc_micros + off as i64 * 1_000_000;
    let abbrev = if s.date_style == DateStyle::Iso {
        String::new()
    } else {
        zone.abbreviation_at(utc_micros)
    };
    encode(local, Some((off, abbrev)), s)
}

/// `EncodeDateTime`: `zone` is the offset and abbreviation for timestamptz.
fn encode(micros: i64, zone: Option<(i32, String)>, s: &Settings) -> String {
    if !super::timestamp_is_finite(micros) {
        return if micros == TS_NOBEGIN {
            "-infinity"
        } else {
            "infinity"
        }
        .into();
    }
    let (days, time) = split_timestamp(micros);
    let (y, m, d) = date_to_ymd(days);
    let (year, bc) = shown_year(y);
    let mut out = String::with_capacity(32);
    let dmy = s.date_order == DateOrder::Dmy;
    // The zone as non-ISO styles print it: the abbreviation, or the offset
    // when the zone has only a numeric one.
    let write_zone_name = |out: &mut String, off: i32, abbrev: &str| {
        out.push(' ');
        if abbrev.is_empty() {
            write_offset(out, off);
        } else {
            out.push_str(abbrev);
        }
    };
    match s.date_style {
        DateStyle::Iso => {
            let _ = write!(out, "{year:04}-{m:02}-{d:02} ");
            write_time(&mut out, time);
            if let Some((off, _)) = zone {
                write_offset(&mut out, off);
            }
        }
        DateStyle::Sql | DateStyle::German => {
            let _ = match (s.date_style, dmy) {
                (DateStyle::German, _) => write!(out, "{d:02}.{m:02}.{year:04} "),
                (_, true) => write!(out, "{d:02}/{m:02}/{year:04} "),
                _ => write!(out, "{m:02}/{d:02}/{year:04} "),
            };
            write_time(&mut out, time);
            if let Some((off, abbrev)) = &zone {
                write_zone_name(&mut out, *off, abbrev);
            }
        }
        DateStyle::Postgres => {
            let dow = DAY_ABBREVS[day_of_week(days) as usize];
            let mon = MONTH_ABBREVS[(m - 1) as usize];
            let _ = if dmy {
                write!(out, "{dow} {d:02} {mon} ")
            } else {
                write!(out, "{dow} {mon} {d:02} ")
            };
            write_time(&mut out, time);
            let _ = write!(out, " {year:04}");
            if let Some((off, abbrev)) = &zone {
                write_zone_name(&mut out, *off, abbrev);
            }
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
    use crate::datetime::{ymd_to_date, USECS_PER_DAY};

    fn settings(style: &str, zone: &str) -> Settings {
        let mut s = Settings::default();
        s.set_date_style(style).unwrap();
        s.set_time_zone(zone).unwrap();
        s
    }

    #[test]
    fn styles_match_postgres() {
        // Checked against PostgreSQL 15 with these settings.
        let day = ymd_to_date(2021, 7, 1) as i32;
        let noon = day as i64 * USECS_PER_DAY + 12 * 3_600_000_000;
        let cases = [
            (
                "SQL, MDY",
                "Asia/Kolkata",
                "07/01/2021 12:00:00 IST",
                "07/01/2021",
            ),
            (
                "Postgres, MDY",
                "UTC",
                "Thu Jul 01 12:00:00 2021 UTC",
                "07-01-2021",
            ),
            (
                "Postgres, DMY",
                "UTC",
                "Thu 01 Jul 12:00:00 2021 UTC",
                "01-07-2021",
            ),
            ("German", "UTC", "01.07.2021 12:00:00 UTC", "01.07.2021"),
            ("SQL, DMY", "UTC", "01/07/2021 12:00:00 UTC", "01/07/2021"),
            ("ISO", "+05:30", "2021-07-01 12:00:00-05:30", "2021-07-01"),
            (
                "ISO",
                "America/New_York",
                "2021-07-01 12:00:00-04",
                "2021-07-01",
            ),
            (
                "Postgres",
                "Australia/Adelaide",
                "Thu Jul 01 12:00:00 2021 ACST",
                "07-01-2021",
            ),
            (
                "SQL",
                "America/Sao_Paulo",
                "07/01/2021 12:00:00 -03",
                "07/01/2021",
            ),
        ];
        for (style, zone, want_ts, want_date) in cases {
            let s = settings(style, zone);
            let utc = s.time_zone.local_to_utc(noon);
            assert_eq!(format_timestamptz_in(utc, &s), want_ts, "{style} {zone}");
            assert_eq!(format_date_in(day, &s), want_date, "{style}");
        }
        let s = settings("Postgres, MDY", "UTC");
        assert_eq!(
            format_timestamp_in(noon + 1_500_000, &s),
            "Thu Jul 01 12:00:01.5 2021"
        );
        let s = settings("German", "UTC");
        let bc = ymd_to_date(-43, 3, 15) * USECS_PER_DAY;
        assert_eq!(format_timestamp_in(bc, &s), "15.03.0044 00:00:00 BC");
    }
}
