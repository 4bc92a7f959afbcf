//! `to_char(timestamp, text)`, `to_date(text, text)` and
//! `to_timestamp(text, text)` (PostgreSQL's `formatting.c`, the template
//! patterns of the documentation's "Template Patterns for Date/Time
//! Formatting" table).
//!
//! A template is scanned left to right for the longest keyword at each
//! position (`YYYY` before `YY`, `HH24` before `HH`); the case of a name
//! pattern picks the case of the output (`Month`, `MONTH`, `month`);
//! `FM` before a keyword drops its padding, `TH`/`th` after a numeric one
//! appends the ordinal suffix; `"text"` is copied literally and `\` escapes
//! one character; everything else is copied as is. Names are padded to 9
//! characters (`Month`, `Day`) unless `FM` is given, as in PostgreSQL.
//!
//! `to_date`/`to_timestamp` read the same keywords from the input: numbers
//! take as many digits as the keyword allows (or up to the next non-digit),
//! names match case-insensitively, separators in the template skip one
//! input character, and white space is skipped where the template has it.
//! The assembled date is validated like date input (`date/time field value
//! out of range: "..."`, 22008), and a field that is not a number is
//! `invalid value "abcd" for "YYYY"` (22007) with PostgreSQL's DETAIL.

use super::format::{DAY_ABBREVS, MONTH_ABBREVS};
use super::funcs::iso_week;
use super::parse::MONTH_NAMES;
use super::{
    date_to_ymd, day_of_week, days_in_month, split_timestamp, valid_timestamp, ymd_to_date, Fields,
    USECS_PER_DAY, USECS_PER_SEC,
};
use crate::error::{sqlstate, Result, TypeError};

const DAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

/// Keywords, longest first where one is a prefix of another.
const KEYWORDS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
    "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW",
    "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.",
    "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY",
    "YYY", "YY", "Y", "a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy",
    "d", "ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw",
    "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm",
    "sssss", "ssss", "ss", "tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
];

#[derive(Debug, PartialEq)]
enum Item {
    Literal(String),
    Key {
        key: &'static str,
        fill: bool,
        th: Option<bool>,
    },
}

fn parse_template(fmt: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lit = String::new();
    let mut rest = fmt;
    let flush = |lit: &mut String, items: &mut Vec<Item>| {
        if !lit.is_empty() {
            items.push(Item::Literal(std::mem::take(lit)));
        }
    };
    while !rest.is_empty() {
        let mut fill = false;
        let mut probe = rest;
        if probe.len() >= 2 && probe[..2].eq_ignore_ascii_case("fm") {
            fill = true;
            probe = &probe[2..];
        }
        if let Some(key) = KEYWORDS.iter().find(|k| probe.starts_with(**k)) {
            flush(&mut lit, &mut items);
            probe = &probe[key.len()..];
            let th = if probe.starts_with("TH") {
                probe = &probe[2..];
                Some(true)
            } else if probe.starts_with("th") {
                probe = &probe[2..];
                Some(false)
            } else {
                None
            };
            items.push(Item::Key { key, fill, th });
            rest = probe;
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        if c == '"' {
            let end = rest[1..].find('"').map_or(rest.len(), |e| e + 2);
            lit.push_str(&rest[1..end.min(rest.len()).saturating_sub(1).max(1)]);
            rest = &rest[end.min(rest.len())..];
            continue;
        }
        if c == '\\' && rest.len() > 1 {
            let n = rest[1..].chars().next().expect("escaped char");
            lit.push(n);
            rest = &rest[1 + n.len_utf8()..];
            continue;
        }
        lit.push(c);
        rest = &rest[c.len_utf8()..];
    }
    flush(&mut lit, &mut items);
    items
}

fn ordinal(n: i64, upper: bool) -> &'static str {
    let s = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    match (upper, s) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        (true, _) => "TH",
    }
}

fn cased(name: &str, key: &str) -> String {
    let letters = || key.chars().filter(|c| c.is_ascii_alphabetic());
    if letters().all(|c| c.is_ascii_uppercase()) {
        name.to_ascii_uppercase()
    } else if letters().all(|c| c.is_ascii_lowercase()) {
        name.to_ascii_lowercase()
    } else {
        name.to_string()
    }
}

/// `to_char` of a local timestamp; `zone` is `(offset, abbreviation)` for
/// a `timestamptz` shown in a zone.
pub fn to_char(local: i64, zone: Option<(i32, &str)>, fmt: &str) -> Option<String> {
    if !super::timestamp_is_finite(local) {
        return None;
    }
    let f = Fields::of(local);
    let (days, tod) = split_timestamp(local);
    let year = f.year as i64;
    let shown_year = if year <= 0 { 1 - year } else { year };
    let doy = days as i64 - ymd_to_date(f.year, 1, 1) + 1;
    let (iso_year, iso_wk) = iso_week(days);
    let mut out = String::new();
    for item in parse_template(fmt) {
        let (key, fill, th) = match item {
            Item::Literal(s) => {
                out.push_str(&s);
                continue;
            }
            Item::Key { key, fill, th } => (key, fill, th),
        };
        let num = |out: &mut String, v: i64, width: usize| {
            if fill {
                out.push_str(&v.to_string());
            } else {
                out.push_str(&format!("{v:0width$}"));
            }
            if let Some(upper) = th {
                out.push_str(ordinal(v, upper));
            }
        };
        let name = |out: &mut String, n: &str| {
            let s = cased(n, key);
            if fill {
                out.push_str(&s);
            } else {
                out.push_str(&format!("{s:<9}"));
            }
        };
        let hour12 = match f.hour % 12 {
            0 => 12,
            h => h,
        } as i64;
        let pm = f.hour >= 12;
        let bc = year <= 0;
        match key.to_ascii_uppercase().as_str() {
            "YYYY" => num(&mut out, shown_year, 4),
            "Y,YYY" => {
                let s = format!("{},{:03}", shown_year / 1000, shown_year % 1000);
                out.push_str(&s);
            }
            "YYY" => num(&mut out, shown_year % 1000, 3),
            "YY" => num(&mut out, shown_year % 100, 2),
            "Y" => num(&mut out, shown_year % 10, 1),
            "IYYY" => num(&mut out, iso_year as i64, 4),
            "IYY" => num(&mut out, iso_year as i64 % 1000, 3),
            "IY" => num(&mut out, iso_year as i64 % 100, 2),
            "I" => num(&mut out, iso_year as i64 % 10, 1),
            "MM" => num(&mut out, f.month as i64, 2),
            "DD" => num(&mut out, f.day as i64, 2),
            "DDD" => num(&mut out, doy, 3),
            "IDDD" => {
                let jan4 = ymd_to_date(iso_year, 1, 4) as i32;
                let start = jan4 - ((day_of_week(jan4) + 6) % 7) as i32;
                num(&mut out, (days - start + 1) as i64, 3)
            }
            "D" => num(&mut out, day_of_week(days) as i64 + 1, 1),
            "ID" => num(&mut out, ((day_of_week(days) + 6) % 7 + 1) as i64, 1),
            "HH" | "HH12" => num(&mut out, hour12, 2),
            "HH24" => num(&mut out, f.hour as i64, 2),
            "MI" => num(&mut out, f.minute as i64, 2),
            "SS" => num(&mut out, f.second as i64, 2),
            "SSSS" | "SSSSS" => num(&mut out, tod / USECS_PER_SEC, 1),
            "MS" => num(&mut out, f.micros as i64 / 1000, 3),
            "US" => num(&mut out, f.micros as i64, 6),
            k if k.starts_with("FF") => {
                let n: u32 = k[2..].parse().unwrap_or(6);
                num(&mut out, f.micros as i64 / 10i64.pow(6 - n), n as usize)
            }
            "Q" => num(&mut out, (f.month as i64 - 1) / 3 + 1, 1),
            "WW" => num(&mut out, (doy - 1) / 7 + 1, 2),
            "W" => num(&mut out, (f.day as i64 - 1) / 7 + 1, 1),
            "IW" => num(&mut out, iso_wk as i64, 2),
            "J" => num(&mut out, days as i64 + 2_451_545, 1),
            "CC" => {
                let cc = if year > 0 {
                    (year + 99) / 100
                } else {
                    -((99 - (year - 1)) / 100)
                };
                num(&mut out, cc, 2)
            }
            "MONTH" => name(&mut out, &capitalize(MONTH_NAMES[f.month as usize - 1])),
            "MON" => out.push_str(&cased(MONTH_ABBREVS[f.month as usize - 1], key)),
            "DAY" => name(&mut out, DAY_NAMES[day_of_week(days) as usize]),
            "DY" => out.push_str(&cased(DAY_ABBREVS[day_of_week(days) as usize], key)),
            "RM" => {
                let r = cased(ROMAN[f.month as usize - 1], key);
                if fill {
                    out.push_str(&r);
                } else {
                    out.push_str(&format!("{r:<4}"));
                }
            }
            "AM" | "PM" => out.push_str(&cased(if pm { "PM" } else { "AM" }, key)),
            "A.M." | "P.M." => out.push_str(&cased(if pm { "P.M." } else { "A.M." }, key)),
            "AD" | "BC" => out.push_str(&cased(if bc { "BC" } else { "AD" }, key)),
            "A.D." | "B.C." => out.push_str(&cased(if bc { "B.C." } else { "A.D." }, key)),
            "TZ" => {
                if let Some((_, abbrev)) = zone {
                    out.push_str(&cased(abbrev, key));
                }
            }
            "OF" | "TZH" | "TZM" => {
                let off = zone.map_or(0, |z| z.0);
                let sign = if off < 0 { '-' } else { '+' };
                let a = off.unsigned_abs();
                match key.to_ascii_uppercase().as_str() {
                    "TZH" => out.push_str(&format!("{sign}{:02}", a / 3600)),
                    "TZM" => out.push_str(&format!("{:02}", a / 60 % 60)),
                    _ => {
                        out.push_str(&format!("{sign}{:02}", a / 3600));
                        if !a.is_multiple_of(3600) {
                            out.push_str(&format!(":{:02}", a / 60 % 60));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(out)
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

fn field_overflow(input: &str) -> TypeError {
    TypeError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{input}\""),
    )
}

/// Reads `input` with template `fmt`: the local timestamp it denotes
/// (`to_timestamp`'s core; `to_date` keeps the day).
pub fn parse_with_template(input: &str, fmt: &str) -> Result<i64> {
    let items = parse_template(fmt);
    let b = input.as_bytes();
    let mut pos = 0;
    let (mut year, mut month, mut day) = (None::<i64>, None::<u32>, None::<u32>);
    let (mut hour, mut minute, mut second, mut micros) = (0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut bc = false;
    let mut julian = None;
    let mut doy = None;
    let mut year2 = false;
    for item in &items {
        match item {
            Item::Literal(s) => {
                for c in s.chars() {
                    if c == ' ' {
                        while pos < b.len() && b[pos] == b' ' {
                            pos += 1;
                        }
                    } else if pos < b.len()
                        && (!b[pos].is_ascii_alphanumeric() || b[pos] as char == c)
                    {
                        pos += 1;
                    }
                }
            }
            Item::Key { key, .. } => {
                while pos < b.len() && b[pos] == b' ' {
                    pos += 1;
                }
                let upper = key.to_ascii_uppercase();
                let max_digits = match upper.as_str() {
                    "YYYY" | "IYYY" => 4,
                    "YYY" | "DDD" | "MS" | "IYY" => 3,
                    "YY" | "MM" | "DD" | "HH" | "HH12" | "HH24" | "MI" | "SS" | "WW" | "IW"
                    | "CC" | "IY" => 2,
                    "Y" | "D" | "ID" | "Q" | "W" | "I" => 1,
                    "US" => 6,
                    k if k.starts_with("FF") => k[2..].parse().unwrap_or(6),
                    _ => usize::MAX,
                };
                let is_name = matches!(
                    upper.as_str(),
                    "MONTH"
                        | "MON"
                        | "DAY"
                        | "DY"
                        | "AM"
                        | "PM"
                        | "A.M."
                        | "P.M."
                        | "AD"
                        | "BC"
                        | "A.D."
                        | "B.C."
                        | "RM"
                        | "TZ"
                );
                if is_name {
                    let rest = input[pos..].to_ascii_lowercase();
                    let take = |names: &[&str]| {
                        names
                            .iter()
                            .enumerate()
                            .find(|(_, n)| rest.starts_with(&n.to_ascii_lowercase()))
                            .map(|(i, n)| (i, n.len()))
                    };
                    let found = match upper.as_str() {
                        "MONTH" => take(&MONTH_NAMES),
                        "MON" => take(&MONTH_ABBREVS),
                        "DAY" => take(&DAY_NAMES),
                        "DY" => take(&DAY_ABBREVS),
                        "RM" => {
                            let r: Vec<&str> = ROMAN.iter().rev().copied().collect();
                            take(&r).map(|(i, l)| (11 - i, l))
                        }
                        "AM" | "PM" => take(&["am", "pm"]),
                        "A.M." | "P.M." => take(&["a.m.", "p.m."]),
                        "AD" | "BC" => take(&["ad", "bc"]),
                        "A.D." | "B.C." => take(&["a.d.", "b.c."]),
                        _ => Some((0, 0)),
                    };
                    let Some((i, len)) = found else {
                        return Err(TypeError::new(
                            sqlstate::INVALID_DATETIME_FORMAT,
                            format!("invalid value \"{}\" for \"{key}\"", &input[pos..]),
                        )
                        .with_detail("The given value did not match any of the allowed values for this field."));
                    };
                    pos += len;
                    match upper.as_str() {
                        "MONTH" | "MON" | "RM" => month = Some(i as u32 + 1),
                        "AM" | "PM" | "A.M." | "P.M." => pm = Some(i == 1),
                        "AD" | "BC" | "A.D." | "B.C." => bc = i == 1,
                        _ => {}
                    }
                    continue;
                }
                let start = pos;
                if pos < b.len() && (b[pos] == b'-' || b[pos] == b'+') && max_digits == usize::MAX {
                    pos += 1;
                }
                while pos < b.len() && b[pos].is_ascii_digit() && pos - start < max_digits {
                    pos += 1;
                }
                let text = &input[start..pos];
                let v: i64 = text.parse().map_err(|_| {
                    let shown: String = input[start..]
                        .chars()
                        .take(if max_digits == usize::MAX {
                            1
                        } else {
                            max_digits
                        })
                        .collect();
                    TypeError::new(
                        sqlstate::INVALID_DATETIME_FORMAT,
                        format!("invalid value \"{shown}\" for \"{key}\""),
                    )
                    .with_detail("Value must be an integer.")
                })?;
                match upper.as_str() {
                    "YYYY" | "IYYY" | "Y,YYY" => year = Some(v),
                    "YYY" | "YY" | "Y" | "IYY" | "IY" | "I" => {
                        year = Some(v);
                        year2 = text.len() <= 2;
                    }
                    "MM" => month = Some(v as u32),
                    "DD" => day = Some(v as u32),
                    "DDD" => doy = Some(v),
                    "HH" | "HH12" | "HH24" => hour = v,
                    "MI" => minute = v,
                    "SS" => second = v,
                    "MS" => micros = v * 10i64.pow(3 - text.len().min(3) as u32) * 1000,
                    "US" => micros = v * 10i64.pow(6 - text.len().min(6) as u32),
                    k if k.starts_with("FF") => {
                        micros = v * 10i64.pow(6 - text.len().min(6) as u32)
                    }
                    "J" => julian = Some(v),
                    "SSSS" | "SSSSS" => {
                        hour = v / 3600;
                        minute = v / 60 % 60;
                        second = v % 60;
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some(p) = pm {
        if !(1..=12).contains(&hour) {
            return Err(TypeError::new(
                sqlstate::INVALID_DATETIME_FORMAT,
                format!("hour \"{hour}\" is invalid for the 12-hour clock"),
            )
            .with_hint("Use the 24-hour clock, or give an hour between 1 and 12."));
        }
        hour = hour % 12 + if p { 12 } else { 0 };
    }
    let days = if let Some(j) = julian {
        j - 2_451_545
    } else {
        let mut y = year.unwrap_or(1);
        if year2 {
            y += if y < 70 { 2000 } else { 1900 };
        }
        if bc {
            y = 1 - y;
        }
        let y = y as i32;
        match (doy, month, day) {
            (Some(n), None, None) => ymd_to_date(y, 1, 1) + n - 1,
            _ => {
                let (m, d) = (month.unwrap_or(1), day.unwrap_or(1));
                if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
                    return Err(field_overflow(input));
                }
                ymd_to_date(y, m, d)
            }
        }
    };
    if !(0..=24).contains(&hour) || !(0..60).contains(&minute) || !(0..=60).contains(&second) {
        return Err(field_overflow(input));
    }
    let t = days * USECS_PER_DAY + ((hour * 60 + minute) * 60 + second) * USECS_PER_SEC + micros;
    if !valid_timestamp(t) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "timestamp out of range",
        ));
    }
    Ok(t)
}

/// `to_date(text, text)`.
pub fn to_date(input: &str, fmt: &str) -> Result<i32> {
    let t = parse_with_template(input, fmt)?;
    Ok(split_timestamp(t).0)
}

/// `to_timestamp(text, text)`: the local time read in `zone`.
pub fn to_timestamp(input: &str, fmt: &str, zone: &super::zone::Zone) -> Result<i64> {
    let t = parse_with_template(input, fmt)?;
    Ok(zone.local_to_utc(t))
}

/// `to_timestamp(double precision)`: seconds since 1970-01-01 UTC.
pub fn to_timestamp_epoch(secs: f64) -> Result<i64> {
    if secs.is_nan() {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "timestamp cannot be NaN",
        ));
    }
    if secs.is_infinite() {
        return Ok(if secs > 0.0 {
            super::TS_NOEND
        } else {
            super::TS_NOBEGIN
        });
    }
    let epoch = ymd_to_date(1970, 1, 1) * USECS_PER_DAY;
    let t = (secs * 1e6).round_ties_even() + epoch as f64;
    if !(super::MIN_TIMESTAMP as f64..super::END_TIMESTAMP as f64).contains(&t) {
        return Err(TypeError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!(
                "timestamp out of range: \"{}\"",
                crate::float::format_float8(secs)
            ),
        ));
    }
    Ok(t as i64)
}

/// The date of a day number (for callers formatting `to_date` results).
pub fn ymd(days: i32) -> (i32, u32, u32) {
    date_to_ymd(days)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::format::{format_date, format_timestamp};
    use crate::datetime::zone::Zone;

    #[test]
    fn to_char_matches_postgres() {
        // Checked against PostgreSQL 15: timestamp '2021-02-03 14:05:06.789123'
        // and timestamptz '2021-02-03 04:05:06+00' in UTC.
        let a = ymd_to_date(2021, 2, 3) * USECS_PER_DAY
            + (14 * 3600 + 5 * 60 + 6) * USECS_PER_SEC
            + 789_123;
        let b = ymd_to_date(2021, 2, 3) * USECS_PER_DAY + (4 * 3600 + 5 * 60 + 6) * USECS_PER_SEC;
        let cases = [
            (
                "YYYY-MM-DD HH24:MI:SS",
                "2021-02-03 14:05:06",
                "2021-02-03 04:05:06",
            ),
            (
                "YYYY-MM-DD HH12:MI:SS AM",
                "2021-02-03 02:05:06 PM",
                "2021-02-03 04:05:06 AM",
            ),
            ("Mon DD, YYYY", "Feb 03, 2021", "Feb 03, 2021"),
            ("Month DD YYYY", "February  03 2021", "February  03 2021"),
            ("FMMonth FMDD YYYY", "February 3 2021", "February 3 2021"),
            ("Day, DD", "Wednesday, 03", "Wednesday, 03"),
            ("FMDay", "Wednesday", "Wednesday"),
            ("Dy dy DY", "Wed wed WED", "Wed wed WED"),
            ("MS US", "789 789123", "000 000000"),
            ("Q WW IW J", "1 05 05 2459249", "1 05 05 2459249"),
            ("DDD D ID", "034 4 3", "034 4 3"),
            ("YY YYY Y", "21 021 1", "21 021 1"),
            ("DDth DDTH FMDDth", "03rd 03RD 3rd", "03rd 03RD 3rd"),
            ("HH HH12 hh24", "02 02 14", "04 04 04"),
            (
                "am pm AM PM a.m. P.M.",
                "pm pm PM PM p.m. P.M.",
                "am am AM AM a.m. A.M.",
            ),
            ("IYYY-IW", "2021-05", "2021-05"),
            ("CC", "21", "21"),
            ("TZ tz OF", "  +00", "UTC utc +00"),
            ("SSSS", "50706", "14706"),
            ("\"literal\" YYYY", "literal 2021", "literal 2021"),
            ("YYYY\\\"x\\\"", "2021\"x\"", "2021\"x\""),
            (
                "mon MON month MONTH",
                "feb FEB february  FEBRUARY ",
                "feb FEB february  FEBRUARY ",
            ),
            ("RM rm", "II   ii  ", "II   ii  "),
            ("FF1 FF3 FF6", "7 789 789123", "0 000 000000"),
            ("W", "1", "1"),
            ("BC AD b.c.", "AD AD a.d.", "AD AD a.d."),
        ];
        for (fmt, want_a, want_b) in cases {
            assert_eq!(to_char(a, None, fmt).unwrap(), want_a, "{fmt}");
            assert_eq!(to_char(b, Some((0, "UTC")), fmt).unwrap(), want_b, "{fmt}");
        }
    }

    #[test]
    fn to_date_and_to_timestamp_match_postgres() {
        let d = |i: &str, f: &str| format_date(to_date(i, f).unwrap());
        assert_eq!(d("2021-02-03", "YYYY-MM-DD"), "2021-02-03");
        assert_eq!(d("03 Feb 2021", "DD Mon YYYY"), "2021-02-03");
        assert_eq!(d("20210203", "YYYYMMDD"), "2021-02-03");
        assert_eq!(d("February 3, 2021", "FMMonth DD, YYYY"), "2021-02-03");
        assert_eq!(d("03/02/21", "DD/MM/YY"), "2021-02-03");
        assert_eq!(d("2459249", "J"), "2021-02-03");
        assert_eq!(d("2021  02 03", "YYYY MM DD"), "2021-02-03");
        let z = Zone::utc();
        let t = |i: &str, f: &str| format_timestamp(to_timestamp(i, f, &z).unwrap(), Some(0));
        assert_eq!(
            t("2021-02-03 14:05:06", "YYYY-MM-DD HH24:MI:SS"),
            "2021-02-03 14:05:06+00"
        );
        assert_eq!(
            t("2021-02-03 02:05 PM", "YYYY-MM-DD HH12:MI AM"),
            "2021-02-03 14:05:00+00"
        );
        assert_eq!(
            t("2021-02-03 14:05:06.789", "YYYY-MM-DD HH24:MI:SS.MS"),
            "2021-02-03 14:05:06.789+00"
        );
        assert_eq!(
            format_timestamp(to_timestamp_epoch(1612325106.5).unwrap(), Some(0)),
            "2021-02-03 04:05:06.5+00"
        );
        let e = to_date("2021-13-03", "YYYY-MM-DD").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "22008",
                "date/time field value out of range: \"2021-13-03\""
            )
        );
        let e = to_date("abcd-02-03", "YYYY-MM-DD").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22007", "invalid value \"abcd\" for \"YYYY\"")
        );
        assert_eq!(e.detail.as_deref(), Some("Value must be an integer."));
        assert_eq!(
            to_timestamp_epoch(f64::NAN).unwrap_err().message,
            "timestamp cannot be NaN"
        );
    }
}
