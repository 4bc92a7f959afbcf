//! Time zones: the `TimeZone` setting, zone names and abbreviations in
//! input, and the offsets of `timestamptz` values.
//!
//! A [`Zone`] is an IANA zone from the tz database compiled into the binary
//! by `jiff` (feature `tzdb-bundle-always`, so no `/usr/share/zoneinfo` is
//! needed), or a fixed offset. Offsets are whole seconds east of UTC.
//!
//! PostgreSQL's rules kept here:
//! - A numeric `TimeZone` setting is POSIX: `SET TimeZone = '+05:30'` means
//!   five and a half hours *west* of Greenwich (prints `-05:30`); in a
//!   value (`'... 12:00+05:30'`) the sign is ISO's, east.
//! - A local time that a transition skips (02:30 on a spring-forward day)
//!   is read with the offset before the transition; a local time that
//!   occurs twice is read with the offset after it (`DetermineTimeZoneOffset`).
//! - Instants beyond the tz database's reach (jiff covers years -9999 to
//!   9999) take the offset of the nearest instant it covers.
//! - Input abbreviations (`PST`, `CEST`) come from a fixed table, a subset
//!   of PostgreSQL's `Default` `timezone_abbreviations` set.

use crate::error::{sqlstate, Result, TypeError};
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};

const MICROS_PER_SEC: i64 = 1_000_000;
/// Seconds from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_SECS: i64 = 946_684_800;

#[derive(Debug, Clone)]
pub struct Zone {
    name: String,
    tz: TimeZone,
}

/// Abbreviations accepted in input, with their offsets east of UTC.
const ABBREVIATIONS: &[(&str, i32)] = &[
    ("utc", 0),
    ("ut", 0),
    ("gmt", 0),
    ("z", 0),
    ("zulu", 0),
    ("est", -5 * 3600),
    ("edt", -4 * 3600),
    ("cst", -6 * 3600),
    ("cdt", -5 * 3600),
    ("mst", -7 * 3600),
    ("mdt", -6 * 3600),
    ("pst", -8 * 3600),
    ("pdt", -7 * 3600),
    ("akst", -9 * 3600),
    ("akdt", -8 * 3600),
    ("hst", -10 * 3600),
    ("ast", -4 * 3600),
    ("adt", -3 * 3600),
    ("nst", -(3 * 3600 + 1800)),
    ("ndt", -(2 * 3600 + 1800)),
    ("wet", 0),
    ("west", 3600),
    ("bst", 3600),
    ("cet", 3600),
    ("cest", 2 * 3600),
    ("met", 3600),
    ("mest", 2 * 3600),
    ("eet", 2 * 3600),
    ("eest", 3 * 3600),
    ("msk", 3 * 3600),
    ("ist", 2 * 3600),
    ("jst", 9 * 3600),
    ("kst", 9 * 3600),
    ("hkt", 8 * 3600),
    ("awst", 8 * 3600),
    ("acst", 9 * 3600 + 1800),
    ("acdt", 10 * 3600 + 1800),
    ("aest", 10 * 3600),
    ("aedt", 11 * 3600),
    ("nzst", 12 * 3600),
    ("nzdt", 13 * 3600),
];

/// The offset of an input abbreviation (`pst`), lower case.
pub fn abbreviation_offset(lower: &str) -> Option<i32> {
    ABBREVIATIONS
        .iter()
        .find(|(a, _)| *a == lower)
        .map(|&(_, o)| o)
}

/// Parses `[+-]hh[[:]mm[[:]ss]]` into seconds (with the sign as written).
pub fn parse_numeric_offset(s: &str) -> Option<i32> {
    let (neg, rest) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => return None,
    };
    let parts: Vec<&str> = if rest.contains(':') {
        rest.split(':').collect()
    } else if rest.len() > 2 && rest.bytes().all(|b| b.is_ascii_digit()) {
        // hhmm or hhmmss
        let (h, m) = rest.split_at(rest.len() - if rest.len() > 4 { 4 } else { 2 });
        if rest.len() > 4 {
            let (m, s) = m.split_at(2);
            vec![h, m, s]
        } else {
            vec![h, m]
        }
    } else {
        vec![rest]
    };
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut secs = 0i32;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 2 && i > 0 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let v: i32 = p.parse().ok()?;
        secs += v * [3600, 60, 1][i];
    }
    Some(if neg { -secs } else { secs })
}

/// `strtod` accepting the whole string: an optional sign, digits and an
/// optional fraction (`-7`, `+03`, `5.5`).
fn plain_number(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let ok = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && body.bytes().filter(|&b| b == b'.').count() <= 1
        && body.bytes().any(|b| b.is_ascii_digit());
    if !ok {
        return None;
    }
    s.parse::<f64>().ok()
}

/// The name of a fixed zone `secs_east` east of UTC (`<+05:30>-05:30`).
fn offset_zone_name(secs_east: i64) -> String {
    let a = secs_east.abs();
    let mut off = format!("{:02}", a / 3600);
    if a % 3600 != 0 {
        off.push_str(&format!(":{:02}", a % 3600 / 60));
        if a % 60 != 0 {
            off.push_str(&format!(":{:02}", a % 60));
        }
    }
    if secs_east < 0 {
        format!("<-{off}>+{off}")
    } else {
        format!("<+{off}>-{off}")
    }
}

impl Zone {
    pub fn utc() -> Zone {
        Zone {
            name: "UTC".into(),
            tz: TimeZone::UTC,
        }
    }

    /// A zone `secs` east of UTC.
    pub fn fixed(secs: i32, name: impl Into<String>) -> Zone {
        Zone {
            name: name.into(),
            tz: TimeZone::fixed(Offset::from_seconds(secs).unwrap_or(Offset::UTC)),
        }
    }

    /// An IANA zone by name, any case (`america/new_york`).
    pub fn named(name: &str) -> Option<Zone> {
        if name.eq_ignore_ascii_case("utc") {
            return Some(Zone::utc());
        }
        let tz = TimeZone::get(name).ok()?;
        let name = tz.iana_name().unwrap_or(name).to_string();
        Some(Zone { name, tz })
    }

    /// A value of the `TimeZone` setting: a zone name, a number of hours
    /// east (`-7`), or a POSIX offset (`+05:30` is five and a half hours
    /// west).
    pub fn from_setting(v: &str) -> Result<Zone> {
        let t = v.trim();
        if let Some(z) = Zone::named(t) {
            return Ok(z);
        }
        // A plain number is hours east of UTC (`SET TimeZone = -7`), named as
        // PostgreSQL's `pg_tzset_offset` names it: `<-07>+07`.
        if let Some(hours) = plain_number(t) {
            let secs = (hours * 3600.0).round() as i64;
            if secs.abs() < 15 * 3600 + 60 * 60 {
                return Ok(Zone::fixed(secs as i32, offset_zone_name(secs)));
            }
        }
        Zone::from_name(v).map_err(|_| {
            TypeError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"TimeZone\": \"{v}\""),
            )
        })
    }

    /// A zone as a time zone *name* (the text of `AT TIME ZONE`): a tz
    /// database name, or a POSIX specification (`UTC+3`, `+05`, `<+03>-03`:
    /// west of Greenwich for a positive number).
    pub fn from_name(v: &str) -> Result<Zone> {
        let t = v.trim();
        if let Some(z) = Zone::named(t) {
            return Ok(z);
        }
        // `<+03>-03`: a POSIX zone with a bracketed name (what SHOW prints
        // for a numeric setting), west-positive after the bracket.
        if let Some((_, rest)) = t.strip_prefix('<').and_then(|r| r.split_once('>')) {
            if let Some(secs) = parse_numeric_offset(rest) {
                if secs.abs() <= 15 * 3600 + 59 * 60 {
                    return Ok(Zone::fixed(-secs, t));
                }
            }
        }
        let posix = t
            .strip_prefix("UTC")
            .or_else(|| t.strip_prefix("GMT"))
            .unwrap_or(t);
        let signed = if posix.starts_with(['+', '-']) {
            posix.to_string()
        } else {
            format!("+{posix}")
        };
        if let Some(secs) = parse_numeric_offset(&signed) {
            if secs.abs() <= 15 * 3600 + 59 * 60 {
                return Ok(Zone::fixed(-secs, t));
            }
        }
        Err(TypeError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"TimeZone\": \"{v}\""),
        ))
    }

    /// The name `SHOW TimeZone` prints.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn instant(utc_micros: i64) -> jiff::Timestamp {
        let secs = utc_micros.div_euclid(MICROS_PER_SEC) + UNIX_TO_PG_SECS;
        let secs = secs.clamp(
            jiff::Timestamp::MIN.as_second(),
            jiff::Timestamp::MAX.as_second(),
        );
        jiff::Timestamp::from_second(secs).expect("clamped into range")
    }

    /// Offset east of UTC, in seconds, at a `timestamptz` value
    /// (microseconds since 2000-01-01 00:00 UTC).
    pub fn offset_at(&self, utc_micros: i64) -> i32 {
        self.tz.to_offset(Zone::instant(utc_micros)).seconds()
    }

    /// The abbreviation in force at `utc_micros` (`EST`, `IST`, `-03`).
    pub fn abbreviation_at(&self, utc_micros: i64) -> String {
        let info = self.tz.to_offset_info(Zone::instant(utc_micros));
        info.abbreviation().to_string()
    }

    /// The UTC instant of a local wall-clock time (microseconds since
    /// 2000-01-01 00:00 local), with PostgreSQL's choice in gaps and folds.
    pub fn local_to_utc(&self, local_micros: i64) -> i64 {
        local_micros - self.local_offset(local_micros) as i64 * MICROS_PER_SEC
    }

    /// The offset that applies to a local wall-clock time.
    pub fn local_offset(&self, local_micros: i64) -> i32 {
        let secs = local_micros.div_euclid(MICROS_PER_SEC) + UNIX_TO_PG_SECS;
        // Read the wall time as if it were UTC to get a civil date-time.
        let ts = jiff::Timestamp::from_second(secs.clamp(
            jiff::Timestamp::MIN.as_second() + 86_400,
            jiff::Timestamp::MAX.as_second() - 86_400,
        ))
        .expect("clamped into range");
        let civil = ts.to_zoned(TimeZone::UTC).datetime();
        match self.tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
            AmbiguousOffset::Gap { before, .. } => before.seconds(),
            AmbiguousOffset::Fold { after, .. } => after.seconds(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datetime::ymd_to_date;

    fn local(y: i32, m: u32, d: u32, h: i64, mi: i64) -> i64 {
        ymd_to_date(y, m, d) * 86_400_000_000 + (h * 3600 + mi * 60) * 1_000_000
    }

    #[test]
    fn gaps_and_folds_follow_postgres() {
        // PostgreSQL 15, TimeZone America/New_York:
        // '2021-03-14 02:30' -> 03:30-04, '2021-11-07 01:30' -> 01:30-05.
        let ny = Zone::named("america/new_york").unwrap();
        assert_eq!(ny.name(), "America/New_York");
        assert_eq!(ny.local_offset(local(2021, 3, 14, 2, 30)), -5 * 3600);
        assert_eq!(ny.local_offset(local(2021, 11, 7, 1, 30)), -5 * 3600);
        assert_eq!(ny.local_offset(local(2021, 7, 1, 12, 0)), -4 * 3600);
        let utc = ny.local_to_utc(local(2021, 7, 1, 12, 0));
        assert_eq!(ny.offset_at(utc), -4 * 3600);
        assert_eq!(ny.abbreviation_at(utc), "EDT");
        let kolkata = Zone::named("Asia/Kolkata").unwrap();
        assert_eq!(kolkata.abbreviation_at(utc), "IST");
    }

    #[test]
    fn posix_offsets_point_west() {
        // SET timezone = '+05:30' prints '2021-07-01 12:00:00-05:30'.
        let z = Zone::from_setting("+05:30").unwrap();
        assert_eq!(z.offset_at(0), -(5 * 3600 + 1800));
        assert!(Zone::from_setting("Mars/Olympus").is_err());
    }

    #[test]
    fn plain_numbers_point_east() {
        // SET timezone = '+03' shows <+03>-03 and prints +03; -7 is <-07>+07.
        let z = Zone::from_setting("+03").unwrap();
        assert_eq!((z.name(), z.offset_at(0)), ("<+03>-03", 3 * 3600));
        let z = Zone::from_setting("-7").unwrap();
        assert_eq!((z.name(), z.offset_at(0)), ("<-07>+07", -7 * 3600));
        assert_eq!(Zone::from_setting("5.5").unwrap().name(), "<+05:30>-05:30");
        let again = Zone::from_setting("<+03>-03").unwrap();
        assert_eq!(again.offset_at(0), 3 * 3600);
    }
}
