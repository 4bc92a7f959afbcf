//! Interval output in the four `IntervalStyle`s (PostgreSQL's
//! `EncodeInterval`).
//!
//! The interval is first broken into years and months (from the month
//! field, truncating toward zero), days, and hours, minutes, seconds and
//! microseconds (from the time field, each with the time's sign). Then:
//!
//! - `postgres`: `1 year 2 mons 3 days 04:05:06.5`; once a negative field
//!   has been printed a positive one gets a `+`, so the text reads back as
//!   the same interval; the time is printed when non-zero or when all is 0.
//! - `postgres_verbose`: `@ 1 year 2 mons -3 days 4 hours 5 mins 6.5 secs`;
//!   the first non-zero field decides the sign, printed as a trailing
//!   `ago`, and later fields of the other sign print negative.
//! - `sql_standard`: `1-2` (year-month), `3 4:05:06.5` (day-time), one
//!   leading `-` for an all-negative value; mixed signs or both kinds of
//!   field print every part with its sign, `+1-2 +3 +4:05:06`.
//! - `iso_8601`: `P1Y2M3DT4H5M6.5S`, each part with its own sign, `PT0S`
//!   for zero.

use super::Interval;
use crate::datetime::format::write_fraction;
use crate::settings::IntervalStyle;
use std::fmt::Write;

struct Parts {
    year: i64,
    mon: i64,
    mday: i64,
    hour: i64,
    min: i64,
    sec: i64,
    fsec: i64,
}

fn parts(iv: Interval) -> Parts {
    let t = iv.micros;
    Parts {
        year: (iv.months / 12) as i64,
        mon: (iv.months % 12) as i64,
        mday: iv.days as i64,
        hour: t / 3_600_000_000,
        min: t / 60_000_000 % 60,
        sec: t / 1_000_000 % 60,
        fsec: t % 1_000_000,
    }
}

/// `sec[.ffffff]` of the absolute values, two-digit seconds if `fill`.
fn write_seconds(out: &mut String, sec: i64, fsec: i64, fill: bool) {
    if fill {
        let _ = write!(out, "{:02}", sec.abs());
    } else {
        let _ = write!(out, "{}", sec.abs());
    }
    write_fraction(out, fsec.abs());
}

/// Output in the `postgres` IntervalStyle.
pub fn format_interval(iv: Interval) -> String {
    format_interval_style(iv, IntervalStyle::Postgres)
}

pub fn format_interval_style(iv: Interval, style: IntervalStyle) -> String {
    let p = parts(iv);
    match style {
        IntervalStyle::Postgres => postgres(iv, &p),
        IntervalStyle::PostgresVerbose => verbose(&p),
        IntervalStyle::SqlStandard => sql_standard(&p),
        IntervalStyle::Iso8601 => iso(&p),
    }
}

fn postgres(iv: Interval, p: &Parts) -> String {
    let mut out = String::new();
    let mut seen_negative = false;
    let mut field = |out: &mut String, n: i64, unit: &str| {
        if n == 0 {
            return;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        let plus = if seen_negative && n > 0 { "+" } else { "" };
        let plural = if n == 1 { "" } else { "s" };
        let _ = write!(out, "{plus}{n} {unit}{plural}");
        seen_negative |= n < 0;
    };
    field(&mut out, p.year, "year");
    field(&mut out, p.mon, "mon");
    field(&mut out, p.mday, "day");
    if iv.micros != 0 || out.is_empty() {
        if !out.is_empty() {
            out.push(' ');
        }
        let neg = iv.micros < 0;
        let sign = if neg {
            "-"
        } else if seen_negative {
            "+"
        } else {
            ""
        };
        let _ = write!(out, "{sign}{:02}:{:02}:", p.hour.abs(), p.min.abs());
        write_seconds(&mut out, p.sec, p.fsec, true);
    }
    out
}

fn verbose(p: &Parts) -> String {
    let mut out = String::from("@");
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |out: &mut String, v: i64, unit: &str| {
        if v == 0 {
            return;
        }
        let mut v = v;
        if is_zero {
            is_before = v < 0;
            v = v.abs();
        } else if is_before {
            v = -v;
        }
        let plural = if v == 1 { "" } else { "s" };
        let _ = write!(out, " {v} {unit}{plural}");
        is_zero = false;
    };
    part(&mut out, p.year, "year");
    part(&mut out, p.mon, "mon");
    part(&mut out, p.mday, "day");
    part(&mut out, p.hour, "hour");
    part(&mut out, p.min, "min");
    if p.sec != 0 || p.fsec != 0 {
        out.push(' ');
        if p.sec < 0 || (p.sec == 0 && p.fsec < 0) {
            if is_zero {
                is_before = true;
            } else if !is_before {
                out.push('-');
            }
        } else if is_before {
            out.push('-');
        }
        write_seconds(&mut out, p.sec, p.fsec, false);
        let plural = if p.sec.abs() != 1 || p.fsec != 0 {
            "s"
        } else {
            ""
        };
        let _ = write!(out, " sec{plural}");
        is_zero = false;
    }
    if is_zero {
        out.push_str(" 0");
    }
    if is_before {
        out.push_str(" ago");
    }
    out
}

fn sql_standard(p: &Parts) -> String {
    let fields = [p.year, p.mon, p.mday, p.hour, p.min, p.sec, p.fsec];
    let has_negative = fields.iter().any(|&v| v < 0);
    let has_positive = fields.iter().any(|&v| v > 0);
    let has_year_month = p.year != 0 || p.mon != 0;
    let has_day_time = fields[2..].iter().any(|&v| v != 0);
    let standard = !(has_negative && has_positive || has_year_month && has_day_time);
    let mut out = String::new();
    if !has_negative && !has_positive {
        return "0".into();
    }
    if !standard {
        let ys = if p.year < 0 || p.mon < 0 { '-' } else { '+' };
        let ds = if p.mday < 0 { '-' } else { '+' };
        let ts = if p.hour < 0 || p.min < 0 || p.sec < 0 || p.fsec < 0 {
            '-'
        } else {
            '+'
        };
        let _ = write!(
            out,
            "{ys}{}-{} {ds}{} {ts}{}:{:02}:",
            p.year.abs(),
            p.mon.abs(),
            p.mday.abs(),
            p.hour.abs(),
            p.min.abs()
        );
        write_seconds(&mut out, p.sec, p.fsec, true);
        return out;
    }
    if has_negative {
        out.push('-');
    }
    if has_year_month {
        let _ = write!(out, "{}-{}", p.year.abs(), p.mon.abs());
    } else if p.mday != 0 {
        let _ = write!(out, "{} {}:{:02}:", p.mday.abs(), p.hour.abs(), p.min.abs());
        write_seconds(&mut out, p.sec, p.fsec, true);
    } else {
        let _ = write!(out, "{}:{:02}:", p.hour.abs(), p.min.abs());
        write_seconds(&mut out, p.sec, p.fsec, true);
    }
    out
}

fn iso(p: &Parts) -> String {
    let fields = [p.year, p.mon, p.mday, p.hour, p.min, p.sec, p.fsec];
    if fields.iter().all(|&v| v == 0) {
        return "PT0S".into();
    }
    let mut out = String::from("P");
    let part = |out: &mut String, v: i64, c: char| {
        if v != 0 {
            let _ = write!(out, "{v}{c}");
        }
    };
    part(&mut out, p.year, 'Y');
    part(&mut out, p.mon, 'M');
    part(&mut out, p.mday, 'D');
    if p.hour != 0 || p.min != 0 || p.sec != 0 || p.fsec != 0 {
        out.push('T');
    }
    part(&mut out, p.hour, 'H');
    part(&mut out, p.min, 'M');
    if p.sec != 0 || p.fsec != 0 {
        if p.sec < 0 || p.fsec < 0 {
            out.push('-');
        }
        write_seconds(&mut out, p.sec, p.fsec, false);
        out.push('S');
    }
    out
}
