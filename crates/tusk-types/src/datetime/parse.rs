//! Text input of `date`, `time`, `timestamp` and `timestamptz`
//! (PostgreSQL's `ParseDateTime` + `DecodeDateTime`, the forms users write).
//!
//! The input is split into fields: numbers (`1999`, `19990108`), dates with
//! a delimiter (`1999-01-08`, `1/8/1999`, `08-Jan-1999`, `1999.008`), times
//! (`04:05:06.789`), signed offsets (`+05:30`, `-0800`), and words (month
//! and day names, `BC`, `AM`/`PM`, zone abbreviations and IANA names,
//! `epoch`, `infinity`, `now`, `today`, `tomorrow`, `yesterday`,
//! `allballs`, `J2451187`). `T` between a date and a time and commas are
//! separators. Fields are then assigned to year, month, day, time and zone
//! as PostgreSQL does: a field of three or more digits (or above 31) is a
//! year; otherwise the `DateStyle` order (MDY, DMY, YMD) decides; a month
//! name frees the remaining numbers to be day and year; two-digit years
//! map to 1970-2069; `BC` negates the year (1 BC is year 0).
//!
//! Errors, with PostgreSQL's SQLSTATEs: a field that cannot be read is
//! `invalid input syntax for type date: "..."` (22007); a field outside its
//! range is `date/time field value out of range: "..."` (22008, with a
//! `DateStyle` hint when a numeric month exceeds 12); a valid date outside
//! the type's range is `date out of range: "..."` / `timestamp out of
//! range: "..."` (22008); an unknown zone is `time zone "..." not
//! recognized` (22023).
//!
//! The relative words take the statement's start time (`now`, passed in
//! as a `timestamptz`) and the session's zone.

use super::zone::{abbreviation_offset, parse_numeric_offset, Zone};
use super::{
    date_to_ymd, days_in_month, split_timestamp, valid_date, valid_timestamp, ymd_to_date,
    DATE_NOBEGIN, DATE_NOEND, TS_NOBEGIN, TS_NOEND, USECS_PER_DAY, USECS_PER_SEC,
};
use crate::error::{sqlstate, Result, TypeError};
use crate::settings::{DateOrder, Settings};

pub const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const DAY_NAMES: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];

/// What the words `epoch`, `now`, ... stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    Epoch,
    Infinity,
    NegInfinity,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    Allballs,
}

#[derive(Debug, Clone, PartialEq)]
enum Field {
    /// Digits, possibly with a fraction (`12.5`); `len` counts the digits
    /// before any point.
    Number(String),
    /// Parts of a delimited date and the delimiter.
    Date(Vec<String>),
    Time(String),
    /// A signed offset such as `+05:30`.
    Offset(String),
    Word(String),
}

/// A decoded date/time, before it becomes a value of some type.
#[derive(Debug, Default)]
struct Decoded {
    special: Option<Special>,
    year: Option<i32>,
    year_2digits: bool,
    month: Option<u32>,
    day: Option<u32>,
    bc: bool,
    julian: Option<i64>,
    /// Microseconds since midnight.
    time: Option<i64>,
    ampm: Option<bool>,
    offset: Option<i32>,
    zone: Option<Zone>,
    text_month: bool,
    /// A delimited all-numeric date (`18/1/1999`) was read.
    numeric_date_field: bool,
    /// Whether a type without a date is being read (`time`).
    time_only: bool,
}

struct Ctx<'a> {
    input: &'a str,
    type_name: &'a str,
}

impl Ctx<'_> {
    fn syntax(&self) -> TypeError {
        TypeError::new(
            sqlstate::INVALID_DATETIME_FORMAT,
            format!(
                "invalid input syntax for type {}: \"{}\"",
                self.type_name, self.input
            ),
        )
    }

    fn field_overflow(&self) -> TypeError {
        TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date/time field value out of range: \"{}\"", self.input),
        )
    }

    fn out_of_range(&self, what: &str) -> TypeError {
        TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("{what} out of range: \"{}\"", self.input),
        )
    }
}

fn tokenize(s: &str, ctx: &Ctx) -> Result<Vec<Field>> {
    let b: Vec<char> = s.to_lowercase().chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let take = |i: &mut usize, ok: &dyn Fn(char) -> bool| {
        let start = *i;
        while *i < b.len() && ok(b[*i]) {
            *i += 1;
        }
        b[start..*i].iter().collect::<String>()
    };
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() || c == ',' {
            i += 1;
        } else if c.is_ascii_digit() {
            let digits = take(&mut i, &|c| c.is_ascii_digit());
            match b.get(i) {
                Some(':') => {
                    let rest = take(&mut i, &|c| c.is_ascii_digit() || c == ':' || c == '.');
                    out.push(Field::Time(digits + &rest));
                }
                Some(&d @ ('-' | '/' | '.')) => {
                    // Segments after each delimiter: all digits or all letters.
                    let mut parts = vec![digits.clone()];
                    while b.get(i) == Some(&d) && b.get(i + 1).is_some_and(|c| c.is_alphanumeric())
                    {
                        i += 1;
                        let seg = if b[i].is_ascii_digit() {
                            take(&mut i, &|c| c.is_ascii_digit())
                        } else {
                            take(&mut i, &|c| c.is_alphabetic())
                        };
                        parts.push(seg);
                    }
                    if d == '.'
                        && parts.len() == 2
                        && parts[1].bytes().all(|x| x.is_ascii_digit())
                        && digits.len() != 4
                    {
                        out.push(Field::Number(format!("{digits}.{}", parts[1])));
                    } else {
                        out.push(Field::Date(parts));
                    }
                }
                Some('t') if b.get(i + 1).is_some_and(|c| c.is_ascii_digit()) => {
                    out.push(Field::Number(digits));
                    i += 1;
                }
                _ => out.push(Field::Number(digits)),
            }
        } else if c == '+' || c == '-' {
            i += 1;
            if b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                let rest = take(&mut i, &|c| c.is_ascii_digit() || c == ':');
                out.push(Field::Offset(format!("{c}{rest}")));
            } else if b.get(i).is_some_and(|c| c.is_alphabetic()) {
                let w = take(&mut i, &|c| c.is_alphanumeric());
                out.push(Field::Word(format!("{c}{w}")));
            } else {
                return Err(ctx.syntax());
            }
        } else if c.is_alphabetic() {
            let mut w = take(&mut i, &|c| c.is_alphabetic());
            if b.get(i) == Some(&'/') || b.get(i) == Some(&'_') {
                w += &take(&mut i, &|c| c.is_alphanumeric() || "/_+-".contains(c));
            } else if w == "j" && b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                w += &take(&mut i, &|c| c.is_ascii_digit());
            }
            // `Jan-08-1999`: a date field that starts with its month.
            if let Some(&d) = b.get(i).filter(|c| "-/.".contains(**c)) {
                if month_of(&w).is_some() && b.get(i + 1).is_some_and(|c| c.is_alphanumeric()) {
                    let mut parts = vec![w];
                    while b.get(i) == Some(&d) && b.get(i + 1).is_some_and(|c| c.is_alphanumeric())
                    {
                        i += 1;
                        let seg = if b[i].is_ascii_digit() {
                            take(&mut i, &|c| c.is_ascii_digit())
                        } else {
                            take(&mut i, &|c| c.is_alphabetic())
                        };
                        parts.push(seg);
                    }
                    out.push(Field::Date(parts));
                    continue;
                }
            }
            // `T` joined to a time: `t04:05`.
            if w == "t" && b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                continue;
            }
            out.push(Field::Word(w));
        } else if c == '.' && b.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
            let d = take(&mut i, &|c| c.is_ascii_digit());
            out.push(Field::Number(format!("0.{d}")));
        } else {
            return Err(ctx.syntax());
        }
    }
    Ok(out)
}

/// Parses `H[:M[:S[.frac]]]` into microseconds.
fn parse_time_field(t: &str, ctx: &Ctx) -> Result<i64> {
    let parts: Vec<&str> = t.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(ctx.syntax());
    }
    let int = |p: &str| p.parse::<i64>().map_err(|_| ctx.syntax());
    let hour = int(parts[0])?;
    let (minute, sec_str) = if parts.len() == 3 {
        (int(parts[1])?, parts[2])
    } else if let Some((m, f)) = parts[1].split_once('.') {
        // `HH:MM.ss` is minutes and seconds in PostgreSQL? No: MM.frac of a minute.
        let m = int(m)?;
        return finish_time(hour, m, 0, frac_micros(f, ctx)? * 60, ctx);
    } else {
        (int(parts[1])?, "0")
    };
    let (sec, micros) = match sec_str.split_once('.') {
        Some((s, f)) => (
            int(if s.is_empty() { "0" } else { s })?,
            frac_micros(f, ctx)?,
        ),
        None => (int(sec_str)?, 0),
    };
    finish_time(hour, minute, sec, micros, ctx)
}

/// Microseconds of a decimal fraction of a second, rounded (PostgreSQL
/// keeps 6 digits, rounding half up).
fn frac_micros(f: &str, ctx: &Ctx) -> Result<i64> {
    if !f.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ctx.syntax());
    }
    let v: f64 = format!("0.{f}").parse().map_err(|_| ctx.syntax())?;
    Ok((v * 1e6).round() as i64)
}

fn finish_time(hour: i64, minute: i64, sec: i64, micros: i64, ctx: &Ctx) -> Result<i64> {
    let total = ((hour * 60 + minute) * 60 + sec) * USECS_PER_SEC + micros;
    if !(0..60).contains(&minute)
        || !(0..=60).contains(&sec)
        || hour < 0
        || total > 24 * 3600 * USECS_PER_SEC
    {
        return Err(ctx.field_overflow());
    }
    Ok(total)
}

fn month_of(word: &str) -> Option<u32> {
    if word.len() < 3 {
        return None;
    }
    if word == "sept" {
        return Some(9);
    }
    MONTH_NAMES
        .iter()
        .position(|m| m.starts_with(word) && (word.len() == 3 || m == &word))
        .map(|i| i as u32 + 1)
}

fn is_day_name(word: &str) -> bool {
    word.len() >= 3
        && DAY_NAMES.iter().any(|d| {
            d.starts_with(word)
                && (word.len() == 3
                    || *d == word
                    || matches!(word, "tues" | "wednes" | "thur" | "thurs"))
        })
}

fn decode(s: &str, settings: &Settings, ctx: &Ctx) -> Result<Decoded> {
    let mut d = Decoded {
        time_only: ctx.type_name == "time",
        ..Decoded::default()
    };
    let fields = tokenize(s, ctx)?;
    if fields.is_empty() {
        return Err(ctx.syntax());
    }
    for f in fields {
        match f {
            Field::Time(t) => {
                if d.time.is_some() {
                    return Err(ctx.syntax());
                }
                d.time = Some(parse_time_field(&t, ctx)?);
            }
            Field::Offset(o) => {
                if d.time.is_none() && d.year.is_none() {
                    return Err(ctx.syntax());
                }
                let off = parse_numeric_offset(&o).ok_or_else(|| ctx.syntax())?;
                if off.abs() > 15 * 3600 + 59 * 60 + 59 {
                    return Err(TypeError::new(
                        sqlstate::INVALID_TIME_ZONE_DISPLACEMENT,
                        format!("time zone displacement out of range: \"{}\"", ctx.input),
                    ));
                }
                d.offset = Some(off);
            }
            Field::Date(parts) => decode_date_field(&parts, settings, &mut d, ctx)?,
            Field::Number(n) => {
                if n.contains('.') {
                    // A fraction belongs to seconds only in forms we do not take.
                    return Err(ctx.syntax());
                }
                let have_date = d.year.is_some() && d.month.is_some() && d.day.is_some();
                if n.len() >= 6 && !have_date && !d.time_only {
                    // YYYYMMDD or YYMMDD: day and month from the end.
                    let l = n.len();
                    d.day = Some(n[l - 2..].parse().map_err(|_| ctx.syntax())?);
                    d.month = Some(n[l - 4..l - 2].parse().map_err(|_| ctx.syntax())?);
                    d.year = Some(n[..l - 4].parse().map_err(|_| ctx.syntax())?);
                    d.year_2digits = l - 4 == 2;
                } else if (n.len() == 6 || n.len() == 4)
                    && d.time.is_none()
                    && (have_date || d.time_only)
                {
                    // HHMMSS or HHMM
                    let v = |r: std::ops::Range<usize>| n[r].parse::<i64>().unwrap();
                    let sec = if n.len() == 6 { v(4..6) } else { 0 };
                    d.time = Some(finish_time(v(0..2), v(2..4), sec, 0, ctx)?);
                } else {
                    place_number(&n, settings, &mut d, ctx)?;
                }
            }
            Field::Word(w) => decode_word(&w, &mut d, ctx)?,
        }
    }
    Ok(d)
}

fn decode_word(w: &str, d: &mut Decoded, ctx: &Ctx) -> Result<()> {
    let special = match w {
        "epoch" => Some(Special::Epoch),
        "infinity" => Some(Special::Infinity),
        "-infinity" => Some(Special::NegInfinity),
        "now" => Some(Special::Now),
        "today" => Some(Special::Today),
        "tomorrow" => Some(Special::Tomorrow),
        "yesterday" => Some(Special::Yesterday),
        "allballs" => Some(Special::Allballs),
        _ => None,
    };
    if let Some(sp) = special {
        if d.special.is_some() {
            return Err(ctx.syntax());
        }
        d.special = Some(sp);
        return Ok(());
    }
    match w {
        "bc" => d.bc = true,
        "ad" | "t" | "on" | "at" => {}
        "am" | "a.m." => d.ampm = Some(false),
        "pm" | "p.m." => d.ampm = Some(true),
        _ if w.starts_with('j') && w.len() > 1 && w[1..].bytes().all(|b| b.is_ascii_digit()) => {
            d.julian = Some(w[1..].parse().map_err(|_| ctx.syntax())?)
        }
        _ => {
            if let Some(m) = month_of(w) {
                match d.month {
                    // A numeric month before a textual one was the day.
                    Some(prev) if !d.text_month && d.day.is_none() && (1..=31).contains(&prev) => {
                        d.day = Some(prev)
                    }
                    Some(_) => return Err(ctx.syntax()),
                    None => {}
                }
                d.month = Some(m);
                d.text_month = true;
            } else if is_day_name(w) {
            } else if let Some(off) = abbreviation_offset(w) {
                d.offset = Some(off);
            } else if w.contains('/') || w.len() > 3 {
                match Zone::named(w) {
                    Some(z) => d.zone = Some(z),
                    None if w.contains('/') => {
                        return Err(TypeError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("time zone \"{w}\" not recognized"),
                        ))
                    }
                    None => return Err(ctx.syntax()),
                }
            } else {
                return Err(ctx.syntax());
            }
        }
    }
    Ok(())
}

fn num(p: &str, ctx: &Ctx) -> Result<i64> {
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || p.len() > 9 {
        return Err(ctx.syntax());
    }
    Ok(p.parse().unwrap())
}

fn decode_date_field(
    parts: &[String],
    settings: &Settings,
    d: &mut Decoded,
    ctx: &Ctx,
) -> Result<()> {
    if d.year.is_some() || d.month.is_some() {
        return Err(ctx.syntax());
    }
    // `1999.008`: year and day of year.
    if parts.len() == 2 && parts[0].len() == 4 && parts[1].len() == 3 {
        let y = num(&parts[0], ctx)? as i32;
        let doy = num(&parts[1], ctx)?;
        let (yy, mm, dd) = date_to_ymd((ymd_to_date(y, 1, 1) + doy - 1) as i32);
        d.year = Some(yy);
        d.month = Some(mm);
        d.day = Some(dd);
        return Ok(());
    }
    if parts.len() != 3 {
        return Err(ctx.syntax());
    }
    for p in parts {
        if p.bytes().any(|b| b.is_ascii_alphabetic()) {
            if d.month.is_some() {
                return Err(ctx.syntax());
            }
            d.month = Some(month_of(p).ok_or_else(|| ctx.syntax())?);
            d.text_month = true;
        }
    }
    d.numeric_date_field = !d.text_month;
    let numeric: Vec<String> = parts
        .iter()
        .filter(|p| !p.bytes().any(|b| b.is_ascii_alphabetic()))
        .cloned()
        .collect();
    place_numbers(&numeric, settings, d, ctx)?;
    Ok(())
}

/// PostgreSQL's `DecodeNumber`: places one numeric date field by what is
/// already known (the field order of `DateStyle`, a textual month, a
/// three-digit field being a year).
fn place_number(n: &str, settings: &Settings, d: &mut Decoded, ctx: &Ctx) -> Result<()> {
    let v = num(n, ctx)?;
    let flen = n.len();
    let ymd = settings.date_order == DateOrder::Ymd;
    let set_year = |d: &mut Decoded, y: i64| {
        d.year = Some(y as i32);
        d.year_2digits = flen <= 2;
    };
    match (d.year.is_some(), d.month.is_some(), d.day.is_some()) {
        (false, false, false) => {
            if flen >= 3 || ymd {
                set_year(d, v)
            } else if settings.date_order == DateOrder::Dmy {
                d.day = Some(v as u32)
            } else {
                d.month = Some(v as u32)
            }
        }
        (true, false, false) => d.month = Some(v as u32),
        (false, true, false) => {
            if d.text_month && (flen >= 3 || ymd) {
                set_year(d, v)
            } else {
                d.day = Some(v as u32)
            }
        }
        (true, true, false) => {
            if d.text_month && flen >= 3 && d.year_2digits {
                d.day = d.year.map(|y| y as u32);
                d.year = Some(v as i32);
                d.year_2digits = false;
            } else {
                d.day = Some(v as u32)
            }
        }
        (false, false, true) => d.month = Some(v as u32),
        (false, true, true) => set_year(d, v),
        _ => return Err(ctx.syntax()),
    }
    Ok(())
}

fn place_numbers(nums: &[String], settings: &Settings, d: &mut Decoded, ctx: &Ctx) -> Result<()> {
    for n in nums {
        place_number(n, settings, d, ctx)?;
    }
    Ok(())
}

/// The validated date (days) of a decoded value, if it has one.
fn date_of(d: &Decoded, ctx: &Ctx, what: &str) -> Result<Option<i64>> {
    if let Some(j) = d.julian {
        let days = j - 2_451_545;
        if !valid_date(days) {
            return Err(ctx.out_of_range(what));
        }
        return Ok(Some(days));
    }
    // Fields out of their own range are reported before missing ones.
    if d.month.is_some_and(|m| !(1..=12).contains(&m)) {
        let e = ctx.field_overflow();
        return Err(if d.numeric_date_field {
            e.with_hint("Perhaps you need a different \"datestyle\" setting.")
        } else {
            e
        });
    }
    if d.day.is_some_and(|x| !(1..=31).contains(&x)) {
        return Err(ctx.field_overflow());
    }
    let (Some(mut y), Some(m), Some(day)) = (d.year, d.month, d.day) else {
        if d.year.is_none() && d.month.is_none() && d.day.is_none() {
            return Ok(None);
        }
        return Err(ctx.syntax());
    };
    if d.bc {
        if y <= 0 {
            return Err(ctx.field_overflow());
        }
        y = 1 - y;
    } else if d.year_2digits && y < 100 {
        y += if y < 70 { 2000 } else { 1900 };
    } else if y == 0 {
        return Err(ctx.field_overflow());
    }
    if day > days_in_month(y, m) {
        return Err(ctx.field_overflow());
    }
    let days = ymd_to_date(y, m, day);
    if !valid_date(days) {
        return Err(ctx.out_of_range(what));
    }
    Ok(Some(days))
}

fn time_of(d: &Decoded, ctx: &Ctx) -> Result<i64> {
    let mut t = d.time.unwrap_or(0);
    if let Some(pm) = d.ampm {
        let hour = t / (3600 * USECS_PER_SEC);
        if hour > 12 {
            return Err(ctx.field_overflow());
        }
        if hour == 12 {
            t -= 12 * 3600 * USECS_PER_SEC;
        }
        if pm {
            t += 12 * 3600 * USECS_PER_SEC;
        }
    }
    Ok(t)
}

/// Midnight (local) of the statement's day in the session's zone.
fn today(now_utc: i64, s: &Settings) -> i64 {
    let local = now_utc + s.time_zone.offset_at(now_utc) as i64 * USECS_PER_SEC;
    split_timestamp(local).0 as i64
}

/// `YYYY-MM-DD` exactly, the form COPY meets millions of times: read
/// without tokenizing. `None` for anything else (or an invalid day, so
/// that the general path reports it).
fn iso_date_fast(s: &str) -> Option<i32> {
    parse_iso_date(s.as_bytes())
}

/// A date written `YYYY-MM-DD` (year 1 to 9999) as days since 2000-01-01,
/// or `None` for anything else (which `date_in` may still accept): the
/// allocation-free path of bulk loads, on bytes already checked for UTF-8.
#[inline]
pub fn parse_iso_date(b: &[u8]) -> Option<i32> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |v, &c| {
            c.is_ascii_digit().then(|| v * 10 + (c - b'0') as u32)
        })
    };
    let (y, m, d) = (num(0..4)? as i32, num(5..7)?, num(8..10)?);
    if y == 0 || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(ymd_to_date(y, m, d) as i32)
}

/// `date_in`. `now` is the statement's start (`timestamptz`).
pub fn parse_date(s: &str, settings: &Settings, now: i64) -> Result<i32> {
    if let Some(d) = iso_date_fast(s) {
        return Ok(d);
    }
    let ctx = Ctx {
        input: s,
        type_name: "date",
    };
    let d = decode(s, settings, &ctx)?;
    let base = match d.special {
        Some(Special::Infinity) => return Ok(DATE_NOEND),
        Some(Special::NegInfinity) => return Ok(DATE_NOBEGIN),
        Some(Special::Epoch) => Some(ymd_to_date(1970, 1, 1)),
        Some(Special::Now | Special::Today) => Some(today(now, settings)),
        Some(Special::Tomorrow) => Some(today(now, settings) + 1),
        Some(Special::Yesterday) => Some(today(now, settings) - 1),
        Some(Special::Allballs) => return Err(ctx.syntax()),
        None => None,
    };
    time_of(&d, &ctx)?;
    match (base, date_of(&d, &ctx, "date")?) {
        (Some(b), None) => Ok(b as i32),
        (None, Some(days)) => Ok(days as i32),
        _ => Err(ctx.syntax()),
    }
}

/// `time_in` (a date or zone in the input is read and ignored, as in PostgreSQL).
pub fn parse_time(s: &str, settings: &Settings, now: i64) -> Result<i64> {
    let ctx = Ctx {
        input: s,
        type_name: "time",
    };
    let d = decode(s, settings, &ctx)?;
    match d.special {
        Some(Special::Allballs) => return Ok(0),
        Some(Special::Now) => {
            let local = now + settings.time_zone.offset_at(now) as i64 * USECS_PER_SEC;
            return Ok(split_timestamp(local).1);
        }
        Some(_) => return Err(ctx.syntax()),
        None => {}
    }
    let parts = [d.year.is_some(), d.month.is_some(), d.day.is_some()];
    if d.time.is_none() || parts.contains(&true) && parts.contains(&false) {
        return Err(ctx.syntax());
    }
    date_of(&d, &ctx, "date")?;
    time_of(&d, &ctx)
}

/// Reads a timestamp as local wall-clock microseconds plus the zone it
/// named, if any (`Err` carries the caller's type name).
fn decode_timestamp(
    s: &str,
    settings: &Settings,
    now: i64,
    type_name: &str,
) -> Result<(i64, Option<i32>, Option<Zone>, bool)> {
    let ctx = Ctx {
        input: s,
        type_name,
    };
    let d = decode(s, settings, &ctx)?;
    let time = time_of(&d, &ctx)?;
    let local_now = now + settings.time_zone.offset_at(now) as i64 * USECS_PER_SEC;
    let day_only = |days: i64| -> Result<(i64, Option<i32>, Option<Zone>, bool)> {
        if d.time.is_some() || d.year.is_some() {
            return Err(ctx.syntax());
        }
        Ok((days * USECS_PER_DAY + time, None, None, false))
    };
    let value = match d.special {
        Some(Special::Infinity) => return Ok((TS_NOEND, None, None, true)),
        Some(Special::NegInfinity) => return Ok((TS_NOBEGIN, None, None, true)),
        Some(Special::Epoch) => {
            return Ok((ymd_to_date(1970, 1, 1) * USECS_PER_DAY, Some(0), None, true))
        }
        Some(Special::Now) => return Ok((now, Some(0), None, true)),
        Some(Special::Today) => day_only(today(now, settings))?,
        Some(Special::Tomorrow) => day_only(today(now, settings) + 1)?,
        Some(Special::Yesterday) => day_only(today(now, settings) - 1)?,
        Some(Special::Allballs) => return Err(ctx.syntax()),
        None => {
            let _ = local_now;
            let days =
                date_of(&d, &ctx, type_name_short(type_name))?.ok_or_else(|| ctx.syntax())?;
            (days * USECS_PER_DAY + time, None, None, false)
        }
    };
    Ok((value.0, d.offset, d.zone, false))
}

fn type_name_short(t: &str) -> &str {
    if t.starts_with("timestamp") {
        "timestamp"
    } else {
        t
    }
}

/// `timestamp_in`: a zone in the input is ignored.
pub fn parse_timestamp(s: &str, settings: &Settings, now: i64) -> Result<i64> {
    let ctx = Ctx {
        input: s,
        type_name: "timestamp",
    };
    let (t, off, _, special) = decode_timestamp(s, settings, now, "timestamp")?;
    if special && super::timestamp_is_finite(t) {
        // `now` and `epoch` are instants; show them in the session's zone
        // (`epoch` is exactly 1970-01-01 00:00).
        let off = if off == Some(0) && t != ymd_to_date(1970, 1, 1) * USECS_PER_DAY {
            settings.time_zone.offset_at(t)
        } else {
            0
        };
        return Ok(t + off as i64 * USECS_PER_SEC);
    }
    if special {
        return Ok(t);
    }
    if !valid_timestamp(t) {
        return Err(ctx.out_of_range("timestamp"));
    }
    Ok(t)
}

/// `timestamptz_in`: a local time in the named zone, or the session's.
pub fn parse_timestamptz(s: &str, settings: &Settings, now: i64) -> Result<i64> {
    let ctx = Ctx {
        input: s,
        type_name: "timestamp with time zone",
    };
    let (t, off, zone, special) = decode_timestamp(s, settings, now, "timestamp with time zone")?;
    if special
        && (t == ymd_to_date(1970, 1, 1) * USECS_PER_DAY
            || t == now
            || !super::timestamp_is_finite(t))
    {
        return Ok(t);
    }
    let utc = match (off, zone) {
        (Some(o), _) => t - o as i64 * USECS_PER_SEC,
        (None, Some(z)) => z.local_to_utc(t),
        (None, None) => settings.time_zone.local_to_utc(t),
    };
    if !valid_timestamp(utc) || !valid_timestamp(t) {
        return Err(ctx.out_of_range("timestamp"));
    }
    Ok(utc)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
