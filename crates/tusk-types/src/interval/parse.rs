//! Interval input (PostgreSQL's `DecodeInterval` and
//! `DecodeISO8601Interval`) and interval typmods.
//!
//! Accepted forms, mixed freely where PostgreSQL mixes them:
//! - postgres: `1 year 2 mons -3 days 04:05:06.5`, `@ 1 minute ago`, with
//!   PostgreSQL's unit spellings (`y`, `yrs`, `mon`, `w`, `d`, `h`, `hr`,
//!   `m`, `min`, `s`, `sec`, `ms`, `us`, `decade`, `century`,
//!   `millennium`, ...) and fractions that cascade down (`1.5 months` is
//!   1 mon 15 days: a month counts 30 days, a day 24 hours);
//! - SQL standard: `1-2` (years-months), `3 4:05:06` (days and time);
//! - ISO 8601: `P1Y2M3DT4H5M6S`, `P1W`, `PT1.5S`, `P0001-02-03T04:05:06`.
//!
//! Fields are read right to left, as PostgreSQL does, so that a bare
//! number takes the unit of the field to its right (`3 4:05:06`: a number
//! left of a time is days), and the rightmost bare number takes the
//! smallest unit of the typmod (`interval '90' day` is 90 days; without a
//! typmod, seconds). A typmod then truncates what is below its smallest
//! field (`interval '1 day 2 hours' day` is 1 day) and rounds seconds to
//! its precision. A unit given twice is a syntax error; a field beyond
//! 32/64 bits is `interval field value out of range` (22015).

use super::Interval;
use crate::error::{sqlstate, Result, TypeError};

/// Field bits of an interval typmod (`INTERVAL_MASK`).
pub mod fields {
    pub const YEAR: u8 = 1;
    pub const MONTH: u8 = 2;
    pub const DAY: u8 = 4;
    pub const HOUR: u8 = 8;
    pub const MINUTE: u8 = 16;
    pub const SECOND: u8 = 32;
    pub const ALL: u8 = 63;
}

/// `interval [fields] [(precision)]`'s modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalTypmod {
    /// The fields from the largest to the smallest named (`fields::*`).
    pub fields: u8,
    /// Fractional digits of seconds kept (0..=6).
    pub precision: Option<u8>,
}

impl Default for IntervalTypmod {
    fn default() -> Self {
        IntervalTypmod {
            fields: fields::ALL,
            precision: None,
        }
    }
}

impl IntervalTypmod {
    /// Reads a qualifier: `day`, `year to month`, `second(2)`,
    /// `day to second (3)`.
    pub fn from_qualifier(q: &str) -> Option<IntervalTypmod> {
        let q = q.trim().to_ascii_lowercase();
        let (words, precision) = match q.split_once('(') {
            Some((w, p)) => (
                w.trim().to_string(),
                Some(p.trim_end_matches(')').trim().parse::<u8>().ok()?.min(6)),
            ),
            None => (q.clone(), None),
        };
        let bit = |w: &str| match w {
            "year" => Some(fields::YEAR),
            "month" => Some(fields::MONTH),
            "day" => Some(fields::DAY),
            "hour" => Some(fields::HOUR),
            "minute" => Some(fields::MINUTE),
            "second" => Some(fields::SECOND),
            _ => None,
        };
        let parts: Vec<&str> = words.split_whitespace().collect();
        let fields = match parts.as_slice() {
            [] => fields::ALL,
            [one] => bit(one)?,
            [from, "to", to] => {
                let (a, b) = (bit(from)?, bit(to)?);
                if a >= b {
                    return None;
                }
                // Every bit from `a` up to `b`.
                (a..=b)
                    .filter(|x| x.is_power_of_two())
                    .fold(0, |m, x| m | x)
            }
            _ => return None,
        };
        Some(IntervalTypmod { fields, precision })
    }

    /// The smallest field of the range: what a bare number counts.
    fn smallest(self) -> u8 {
        if self.fields == fields::ALL {
            return fields::SECOND;
        }
        1 << (7 - self.fields.leading_zeros() as u8)
    }

    /// `AdjustIntervalForTypmod`: truncates below the smallest field and
    /// rounds seconds to the precision.
    pub fn apply(self, iv: Interval) -> Interval {
        let mut iv = iv;
        const HOUR: i64 = 3_600_000_000;
        const MINUTE: i64 = 60_000_000;
        if self.fields != fields::ALL {
            match self.smallest() {
                fields::YEAR => {
                    iv.months = iv.months / 12 * 12;
                    iv.days = 0;
                    iv.micros = 0;
                }
                fields::MONTH => {
                    iv.days = 0;
                    iv.micros = 0;
                }
                fields::DAY => iv.micros = 0,
                fields::HOUR => iv.micros = iv.micros / HOUR * HOUR,
                fields::MINUTE => iv.micros = iv.micros / MINUTE * MINUTE,
                _ => {}
            }
        }
        if let Some(p) = self.precision {
            let scale = 10i64.pow(6 - p.min(6) as u32);
            let half = scale / 2;
            iv.micros = if iv.micros >= 0 {
                (iv.micros + half) / scale * scale
            } else {
                -((-iv.micros + half) / scale * scale)
            };
        }
        iv
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
}

fn unit_of(w: &str) -> Option<Unit> {
    use Unit::*;
    Some(match w {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => Microsecond,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => Millisecond,
        "second" | "seconds" | "s" | "sec" | "secs" => Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Hour,
        "day" | "days" | "d" => Day,
        "week" | "weeks" | "w" => Week,
        "month" | "months" | "mon" | "mons" => Month,
        "year" | "years" | "y" | "yr" | "yrs" => Year,
        "decade" | "decades" | "dec" | "decs" => Decade,
        "century" | "centuries" | "c" | "cent" => Century,
        "millennium" | "millennia" | "mil" | "mils" => Millennium,
        _ => return None,
    })
}

/// The interval being accumulated, in wide integers so that overflow is
/// detected once at the end.
#[derive(Default)]
struct Acc {
    months: i64,
    days: i64,
    micros: i128,
    seen: u16,
}

impl Acc {
    fn fract_seconds(&mut self, frac: f64, scale: f64) {
        if frac == 0.0 {
            return;
        }
        let sec = frac * scale;
        let whole = sec.trunc();
        self.micros += whole as i128 * 1_000_000 + ((sec - whole) * 1e6).round() as i128;
    }

    fn fract_days(&mut self, frac: f64, scale: f64) {
        if frac == 0.0 {
            return;
        }
        let days = frac * scale;
        let whole = days.trunc();
        self.days += whole as i64;
        self.fract_seconds(days - whole, 86_400.0);
    }

    /// Adds `int + frac` of `unit` (both carrying the number's sign).
    fn add(&mut self, unit: Unit, int: i64, frac: f64) -> Option<()> {
        use Unit::*;
        let months = |n: i64, per: i64| -> Option<i64> {
            n.checked_mul(per)?
                .checked_add((frac * per as f64).round() as i64)
        };
        match unit {
            Year => self.months = self.months.checked_add(months(int, 12)?)?,
            Decade => self.months = self.months.checked_add(months(int, 120)?)?,
            Century => self.months = self.months.checked_add(months(int, 1200)?)?,
            Millennium => self.months = self.months.checked_add(months(int, 12000)?)?,
            Month => {
                self.months = self.months.checked_add(int)?;
                self.fract_days(frac, 30.0);
            }
            Week => {
                self.days = self.days.checked_add(int.checked_mul(7)?)?;
                self.fract_days(frac, 7.0);
            }
            Day => {
                self.days = self.days.checked_add(int)?;
                self.fract_seconds(frac, 86_400.0);
            }
            Hour => {
                self.micros += int as i128 * 3_600_000_000;
                self.fract_seconds(frac, 3600.0);
            }
            Minute => {
                self.micros += int as i128 * 60_000_000;
                self.fract_seconds(frac, 60.0);
            }
            Second => {
                self.micros += int as i128 * 1_000_000;
                self.fract_seconds(frac, 1.0);
            }
            Millisecond => {
                self.micros += int as i128 * 1000 + (frac * 1000.0).round() as i128;
            }
            Microsecond => self.micros += int as i128 + frac.round() as i128,
        }
        Some(())
    }
}

/// A signed decimal number: integer part and fraction, both signed.
fn number(s: &str) -> Option<(i64, f64)> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let i: i64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let f: f64 = if frac.is_empty() {
        0.0
    } else {
        format!("0.{frac}").parse().ok()?
    };
    Some(if neg { (-i, -f) } else { (i, f) })
}

/// `interval_in` with a typmod (use `IntervalTypmod::default()` for none).
pub fn parse_interval(s: &str, typmod: IntervalTypmod) -> Result<Interval> {
    let syntax = || {
        TypeError::new(
            sqlstate::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type interval: \"{s}\""),
        )
    };
    let overflow = || {
        TypeError::new(
            "22015",
            format!("interval field value out of range: \"{s}\""),
        )
    };
    let lower = s.trim().to_ascii_lowercase();
    let mut acc = Acc::default();
    if let Some(body) = lower.strip_prefix('p') {
        iso8601(body, &mut acc).ok_or_else(syntax)?;
    } else {
        postgres_form(&lower, typmod, &mut acc, s)?;
    }
    let months = i32::try_from(acc.months).map_err(|_| overflow())?;
    let days = i32::try_from(acc.days).map_err(|_| overflow())?;
    let micros = i64::try_from(acc.micros).map_err(|_| overflow())?;
    Ok(typmod.apply(Interval::new(months, days, micros)))
}

fn postgres_form(lower: &str, typmod: IntervalTypmod, acc: &mut Acc, s: &str) -> Result<()> {
    let syntax = || {
        TypeError::new(
            sqlstate::INVALID_DATETIME_FORMAT,
            format!("invalid input syntax for type interval: \"{s}\""),
        )
    };
    let overflow = || {
        TypeError::new(
            "22015",
            format!("interval field value out of range: \"{s}\""),
        )
    };
    // Split into tokens, separating a number from a unit glued to it (`10s`).
    let mut tokens: Vec<String> = Vec::new();
    for (i, t) in lower.split_whitespace().enumerate() {
        if i == 0 && t == "@" {
            continue;
        }
        let t = t.strip_prefix('@').unwrap_or(t);
        let split = t
            .char_indices()
            .find(|&(_, c)| c.is_ascii_alphabetic())
            .map(|(k, _)| k)
            .filter(|&k| k > 0 && !t.contains(':'));
        match split {
            Some(k) => {
                tokens.push(t[..k].to_string());
                tokens.push(t[k..].to_string());
            }
            None => tokens.push(t.to_string()),
        }
    }
    if tokens.is_empty() {
        return Err(syntax());
    }
    let mut ago = false;
    let mut unit: Option<Unit> = None;
    // A bare number left of a time field counts days.
    let mut implied: Option<Unit> = None;
    let default_unit = match typmod.smallest() {
        fields::YEAR => Unit::Year,
        fields::MONTH => Unit::Month,
        fields::DAY => Unit::Day,
        fields::HOUR => Unit::Hour,
        fields::MINUTE => Unit::Minute,
        _ => Unit::Second,
    };
    let mark = |acc: &mut Acc, bits: u16| -> Result<()> {
        if acc.seen & bits != 0 {
            return Err(syntax());
        }
        acc.seen |= bits;
        Ok(())
    };
    for t in tokens.iter().rev() {
        let first = t.as_bytes()[0];
        if t == "ago" {
            if unit.is_some() || ago {
                return Err(syntax());
            }
            ago = true;
        } else if first.is_ascii_alphabetic() {
            if unit.is_some() {
                return Err(syntax());
            }
            unit = Some(unit_of(t).ok_or_else(syntax)?);
        } else if t.contains(':') {
            if unit.is_some() {
                return Err(syntax());
            }
            mark(acc, 1 << 12)?;
            let (neg, body) = match first {
                b'-' => (true, &t[1..]),
                b'+' => (false, &t[1..]),
                _ => (false, &t[..]),
            };
            let parts: Vec<&str> = body.split(':').collect();
            let int = |p: &str| p.parse::<i64>().map_err(|_| syntax());
            let (h, m, sec) = match parts.as_slice() {
                [a, b] if typmod.fields == fields::MINUTE | fields::SECOND => (0, int(a)?, *b),
                [a, b] => (int(a)?, int(b)?, "0"),
                [a, b, c] => (int(a)?, int(b)?, *c),
                _ => return Err(syntax()),
            };
            let (si, sf) = number(sec).ok_or_else(syntax)?;
            if !(0..60).contains(&m) || !(0..60).contains(&si) {
                return Err(TypeError::new(
                    sqlstate::DATETIME_FIELD_OVERFLOW,
                    format!("interval field value out of range: \"{s}\""),
                ));
            }
            let micros = (h as i128 * 3600 + m as i128 * 60 + si as i128) * 1_000_000
                + (sf * 1e6).round() as i128;
            acc.micros += if neg { -micros } else { micros };
            implied = Some(Unit::Day);
        } else if let Some((y, mo)) = year_month(t) {
            if unit.is_some() {
                return Err(syntax());
            }
            mark(acc, 1 << (Unit::Year as u16) | 1 << (Unit::Month as u16))?;
            acc.months = acc
                .months
                .checked_add(
                    y.checked_mul(12)
                        .and_then(|v| v.checked_add(mo))
                        .ok_or_else(overflow)?,
                )
                .ok_or_else(overflow)?;
            implied = None;
        } else {
            let (i, f) = number(t).ok_or_else(syntax)?;
            let u = unit.take().or(implied.take()).unwrap_or(default_unit);
            mark(acc, 1 << (u as u16))?;
            acc.add(u, i, f).ok_or_else(overflow)?;
            // As in `DecodeInterval`, a bare number left of an hours field
            // counts days (`'1 2 hours'`, `'1 2' day to hour`), except
            // under a plain `hour` qualifier.
            if u == Unit::Hour && typmod.fields != fields::HOUR {
                implied = Some(Unit::Day);
            }
        }
    }
    if unit.is_some() {
        return Err(syntax());
    }
    if ago {
        acc.months = -acc.months;
        acc.days = -acc.days;
        acc.micros = -acc.micros;
    }
    Ok(())
}

/// `[-]Y-M`: SQL-standard years and months, as signed months parts.
fn year_month(t: &str) -> Option<(i64, i64)> {
    let (neg, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (y, m) = body.split_once('-')?;
    if y.is_empty() || m.is_empty() || !y.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (y, m): (i64, i64) = (y.parse().ok()?, m.parse().ok()?);
    Some(if neg { (-y, -m) } else { (y, m) })
}

/// ISO 8601 after the `P`: designators, or the alternative format.
fn iso8601(body: &str, acc: &mut Acc) -> Option<()> {
    if body.is_empty() {
        return None;
    }
    let (date, time) = match body.split_once('t') {
        Some((d, t)) => (d, Some(t)),
        None => (body, None),
    };
    // Alternative format: YYYY-MM-DD and hh:mm:ss.
    if date.contains('-') && !date.starts_with('-') || time.is_some_and(|t| t.contains(':')) {
        if !date.is_empty() {
            let p: Vec<&str> = date.split('-').collect();
            let [y, m, d] = p.as_slice() else { return None };
            acc.add(Unit::Year, y.parse().ok()?, 0.0)?;
            acc.add(Unit::Month, m.parse().ok()?, 0.0)?;
            acc.add(Unit::Day, d.parse().ok()?, 0.0)?;
        }
        if let Some(t) = time {
            let p: Vec<&str> = t.split(':').collect();
            let [h, mi, s] = p.as_slice() else {
                return None;
            };
            acc.add(Unit::Hour, h.parse().ok()?, 0.0)?;
            acc.add(Unit::Minute, mi.parse().ok()?, 0.0)?;
            let (si, sf) = number(s)?;
            acc.add(Unit::Second, si, sf)?;
        }
        return Some(());
    }
    let mut designators = |text: &str, in_time: bool| -> Option<()> {
        let mut rest = text;
        while !rest.is_empty() {
            let end = rest.find(|c: char| c.is_ascii_alphabetic())?;
            let (i, f) = number(&rest[..end])?;
            let unit = match (rest.as_bytes()[end], in_time) {
                (b'y', false) => Unit::Year,
                (b'm', false) => Unit::Month,
                (b'w', false) => Unit::Week,
                (b'd', false) => Unit::Day,
                (b'h', true) => Unit::Hour,
                (b'm', true) => Unit::Minute,
                (b's', true) => Unit::Second,
                _ => return None,
            };
            acc.add(unit, i, f)?;
            rest = &rest[end + 1..];
        }
        Some(())
    };
    designators(date, false)?;
    if let Some(t) = time {
        if t.is_empty() {
            return None;
        }
        designators(t, true)?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::format::format_interval_style;
    use crate::settings::IntervalStyle;

    /// Every case of `testdata/interval_pg15.tsv`: input, qualifier and the
    /// output in each IntervalStyle (recorded by `testdata/gen_interval.py`).
    #[test]
    fn matches_postgres_on_the_recorded_cases() {
        let data = include_str!("../../testdata/interval_pg15.tsv");
        assert!(data.lines().count() > 70);
        let styles = [
            IntervalStyle::Postgres,
            IntervalStyle::PostgresVerbose,
            IntervalStyle::SqlStandard,
            IntervalStyle::Iso8601,
        ];
        let mut failures = Vec::new();
        for line in data.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f[1].contains('(') && !f[1].starts_with("second") {
                continue; // `day (3)` is a grammar error, not ours to raise here
            }
            let typmod = IntervalTypmod::from_qualifier(f[1]).unwrap();
            for (k, style) in styles.iter().enumerate() {
                let got = match parse_interval(f[0], typmod) {
                    Ok(iv) => format_interval_style(iv, *style),
                    Err(e) => format!("ERROR {}: {}", e.code, e.message),
                };
                if got != f[2 + k] {
                    failures.push(format!(
                        "{:?} {:?} {style:?}: got {got}, want {}",
                        f[0],
                        f[1],
                        f[2 + k]
                    ));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} mismatches:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
