//! Date/time input checked against PostgreSQL 15.

use super::*;
use crate::datetime::format::{
    format_date_in, format_time, format_timestamp_in, format_timestamptz_in,
};

fn settings(spec: &str) -> Settings {
    let (tz, ds) = spec.split_once('|').unwrap();
    let mut s = Settings::default();
    s.set_time_zone(tz).unwrap();
    s.set_date_style(ds).unwrap();
    s
}

fn round_trip(ty: &str, input: &str, s: &Settings) -> String {
    let now = 0;
    let r = match ty {
        "date" => parse_date(input, s, now).map(|d| format_date_in(d, s)),
        "time" => parse_time(input, s, now).map(format_time),
        "timestamp" => parse_timestamp(input, s, now).map(|t| format_timestamp_in(t, s)),
        "timestamptz" => parse_timestamptz(input, s, now).map(|t| format_timestamptz_in(t, s)),
        _ => panic!("type {ty}"),
    };
    match r {
        Ok(v) => v,
        Err(e) => format!("ERROR {}: {}", e.code, e.message),
    }
}

/// Every case of `testdata/datetime_pg15.tsv` (input, settings and what
/// PostgreSQL 15 printed, recorded by `testdata/gen_datetime.py`).
#[test]
fn matches_postgres_on_the_recorded_cases() {
    let data = include_str!("../../testdata/datetime_pg15.tsv");
    assert!(data.lines().count() > 200);
    let mut failures = Vec::new();
    for line in data.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let got = round_trip(f[0], f[1], &settings(f[2]));
        if got != f[3] {
            failures.push(format!(
                "{} {:?} [{}]: got {got}, want {}",
                f[0], f[1], f[2], f[3]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn relative_words_use_the_statement_time() {
    // 2021-07-01 02:00 UTC is still June 30 in New York.
    let now = (ymd_to_date(2021, 7, 1) * 24 + 2) * 3_600_000_000;
    let mut s = Settings::default();
    assert_eq!(
        format_date_in(parse_date("today", &s, now).unwrap(), &s),
        "2021-07-01"
    );
    s.set_time_zone("America/New_York").unwrap();
    assert_eq!(
        format_date_in(parse_date("today", &s, now).unwrap(), &s),
        "2021-06-30"
    );
    assert_eq!(
        format_date_in(parse_date("tomorrow", &s, now).unwrap(), &s),
        "2021-07-01"
    );
    assert_eq!(parse_timestamptz("now", &s, now).unwrap(), now);
    assert_eq!(
        format_timestamp_in(parse_timestamp("yesterday", &s, now).unwrap(), &s),
        "2021-06-29 00:00:00"
    );
}
