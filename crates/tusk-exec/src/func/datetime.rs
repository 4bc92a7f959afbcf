//! Date and time functions (PostgreSQL 15's `timestamp.c`, `date.c` and
//! `formatting.c` entry points): the clock (`now()`, `current_date`,
//! `statement_timestamp()`...), `extract` / `date_part`, `date_trunc`,
//! `age`, `make_*`, `to_char` / `to_date` / `to_timestamp` (and
//! `to_char`'s numeric templates, one name for both), `justify_*`,
//! `isfinite` and `timezone` (what `AT TIME ZONE` is). The calendar work is
//! tusk-types' `datetime` module; this file reads the arguments, the
//! session's time zone and the statement's clock, and builds the result.
//!
//! ## The clock
//!
//! `now()`, `transaction_timestamp()` and `current_timestamp` are the
//! transaction's start, `statement_timestamp()` the statement's, both read
//! from the session environment ([`crate::env`]) the session installs; so
//! they are *stable*: equal within a statement (and `now()` within a
//! transaction block), never folded into a plan that may outlive them
//! ([`Func::stable`]). `clock_timestamp()` reads the system clock on every
//! call and is volatile.
//!
//! Kernels work a row at a time over [`Value`]s: the calendar arithmetic
//! dominates their cost, not the dispatch. Every one is strict, and a row
//! that is NULL or outside the active mask is never computed (so raises
//! nothing).

use super::{Call, Func};
use crate::cast::CastEnv;
use crate::error::{sqlstate, ExecError, Result};
use crate::value::Value;
use crate::vector::Vector;
use tusk_storage::DataType;
use tusk_types::datetime::funcs::{self as dtf, Source};
use tusk_types::datetime::zone::{abbreviation_offset, Zone};
use tusk_types::datetime::{arith as dt, to_char as tc, USECS_PER_DAY, USECS_PER_SEC};
use tusk_types::{Interval, Numeric};

/// The current time as a `timestamptz` (microseconds since 2000-01-01 UTC).
pub fn clock_now() -> i64 {
    system_time_to_timestamptz(std::time::SystemTime::now())
}

/// A point in time as a `timestamptz` (microseconds since 2000-01-01 UTC).
pub fn system_time_to_timestamptz(t: std::time::SystemTime) -> i64 {
    const UNIX_TO_2000_MICROS: i64 = 946_684_800 * 1_000_000;
    let since_unix = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64);
    since_unix - UNIX_TO_2000_MICROS
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let (xact, stmt) = crate::env::start_times();
    crate::env::with(|env| {
        let mut out = Vector::with_capacity(c.ty, c.n);
        let mut vals = Vec::with_capacity(c.args.len());
        for i in 0..c.n {
            if !c.computes(i) {
                out.push_value(&Value::Null);
                continue;
            }
            vals.clear();
            vals.extend(c.args.iter().zip(c.types).map(|(a, t)| a.value_as(i, *t)));
            let clock = Clock { xact, stmt };
            out.push_value(&one(f, &vals, c.ty, env, clock)?);
        }
        Ok(out)
    })
}

/// The statement's view of the clock.
#[derive(Clone, Copy)]
struct Clock {
    xact: i64,
    stmt: i64,
}

fn bad_args(f: Func) -> ExecError {
    super::math::bad_args(f)
}

/// The time zone `AT TIME ZONE` / `timezone(zone, ...)` names: an input
/// abbreviation (`EST`), a zone name, or a POSIX offset (`UTC+3` is three
/// hours west), as `timestamp_zone` reads it.
pub fn zone_named(name: &str) -> Result<Zone> {
    if let Some(off) = abbreviation_offset(&name.to_ascii_lowercase()) {
        return Ok(Zone::fixed(off, name));
    }
    Zone::from_name(name).map_err(|_| {
        ExecError::coded(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("time zone \"{name}\" not recognized"),
        )
    })
}

/// The zone an interval names (`AT TIME ZONE INTERVAL '-08:00'`): its
/// time part as an offset east of UTC.
fn zone_of_interval(iv: Interval) -> Result<Zone> {
    if iv.months != 0 || iv.days != 0 {
        return Err(ExecError::coded(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "interval time zone \"{}\" must not include months or days",
                tusk_types::interval::format_interval(iv)
            ),
        ));
    }
    Ok(Zone::fixed((iv.micros / USECS_PER_SEC) as i32, "interval"))
}

fn text(v: &Value) -> &str {
    match v {
        Value::Text(s) => s,
        _ => "",
    }
}

/// Rounds microseconds to `precision` fractional digits of a second
/// (`AdjustTimestampForTypmod`); infinities stay.
pub fn round_micros(t: i64, precision: i32) -> i64 {
    if !(0..6).contains(&precision) || t == i64::MIN || t == i64::MAX {
        return t;
    }
    let scale = 10i64.pow(6 - precision as u32);
    let half = scale / 2;
    if t >= 0 {
        (t + half) / scale * scale
    } else {
        -((-t + half) / scale * scale)
    }
}

fn source(v: &Value) -> Option<Source> {
    Some(match v {
        Value::Date(d) => Source::Date(*d),
        Value::Time(t) => Source::Time(*t),
        Value::Timestamp(t) => Source::Timestamp(*t),
        Value::TimestampTz(t) => Source::TimestampTz(*t),
        Value::Interval(iv) => Source::Interval(*iv),
        _ => return None,
    })
}

fn int(v: &Value) -> i32 {
    match v {
        Value::Int4(x) => *x,
        _ => 0,
    }
}

fn float(v: &Value) -> f64 {
    match v {
        Value::Float8(x) => *x,
        _ => 0.0,
    }
}

/// A `timestamptz`'s local time in `zone`.
fn local(t: i64, zone: &Zone) -> Result<i64> {
    Ok(dt::timestamptz_to_timestamp(t, zone)?)
}

fn one(f: Func, a: &[Value], ty: DataType, env: &CastEnv, clock: Clock) -> Result<Value> {
    use Value as V;
    let zone = &env.settings.time_zone;
    Ok(match (f, a) {
        (Func::Now | Func::CurrentTimestamp, []) => V::TimestampTz(clock.xact),
        (Func::StatementTimestamp, []) => V::TimestampTz(clock.stmt),
        (Func::ClockTimestamp, []) => V::TimestampTz(clock_now()),
        (Func::CurrentDate, []) => V::Date(dt::timestamp_to_date(local(clock.xact, zone)?)?),
        (Func::LocalTimestamp, []) => V::Timestamp(local(clock.xact, zone)?),
        (Func::LocalTime, []) => V::Time(local(clock.xact, zone)?.rem_euclid(USECS_PER_DAY)),
        (Func::RoundTime, [v, p]) => match v {
            V::Timestamp(t) => V::Timestamp(round_micros(*t, int(p))),
            V::TimestampTz(t) => V::TimestampTz(round_micros(*t, int(p))),
            V::Time(t) => V::Time(round_micros(*t, int(p))),
            _ => return Err(bad_args(f)),
        },
        (Func::Extract | Func::DatePart, [field, v]) => {
            let src = source(v).ok_or_else(|| bad_args(f))?;
            let r = if f == Func::Extract {
                dtf::extract(text(field), src, zone)?.map(V::Numeric)
            } else {
                dtf::date_part(text(field), src, zone)?.map(V::Float8)
            };
            r.unwrap_or(V::Null)
        }
        (Func::DateTrunc, [field, v]) => match v {
            V::Timestamp(t) => V::Timestamp(dtf::date_trunc_timestamp(text(field), *t)?),
            V::TimestampTz(t) => {
                V::TimestampTz(dtf::date_trunc_timestamptz(text(field), *t, zone)?)
            }
            V::Interval(iv) => V::Interval(dtf::date_trunc_interval(text(field), *iv)?),
            _ => return Err(bad_args(f)),
        },
        (Func::DateTrunc, [field, V::TimestampTz(t), z]) => {
            let z = zone_named(text(z))?;
            V::TimestampTz(dtf::date_trunc_timestamptz(text(field), *t, &z)?)
        }
        (Func::Age, [x]) => {
            // age(x) is age(current_date at midnight, x).
            let today = dt::timestamp_to_date(local(clock.xact, zone)?)?;
            let midnight = dt::date_to_timestamp(today)?;
            match x {
                V::Timestamp(t) => V::Interval(dt::age(midnight, *t)?),
                V::TimestampTz(t) => V::Interval(dt::age(midnight, local(*t, zone)?)?),
                _ => return Err(bad_args(f)),
            }
        }
        (Func::Age, [x, y]) => match (x, y) {
            (V::Timestamp(p), V::Timestamp(q)) => V::Interval(dt::age(*p, *q)?),
            (V::TimestampTz(p), V::TimestampTz(q)) => {
                V::Interval(dt::age(local(*p, zone)?, local(*q, zone)?)?)
            }
            _ => return Err(bad_args(f)),
        },
        (Func::MakeDate, [y, m, d]) => V::Date(dt::make_date(int(y), int(m), int(d))?),
        (Func::MakeTime, [h, m, s]) => V::Time(dt::make_time(int(h), int(m), float(s))?),
        (Func::MakeTimestamp, [y, mo, d, h, mi, s]) => V::Timestamp(dt::make_timestamp(
            int(y),
            int(mo),
            int(d),
            int(h),
            int(mi),
            float(s),
        )?),
        (Func::MakeTimestampTz, [y, mo, d, h, mi, s, rest @ ..]) => {
            let t = dt::make_timestamp(int(y), int(mo), int(d), int(h), int(mi), float(s))?;
            let z = match rest {
                [z] => zone_named(text(z))?,
                _ => zone.clone(),
            };
            V::TimestampTz(z.local_to_utc(t))
        }
        (Func::MakeInterval, [y, mo, w, d, h, mi, s]) => V::Interval(dt::make_interval(
            int(y),
            int(mo),
            int(w),
            int(d),
            int(h),
            int(mi),
            float(s),
        )?),
        (Func::ToChar, [v, fmt]) => {
            let out = match v {
                V::Timestamp(t) => tc::to_char(*t, None, text(fmt)),
                V::TimestampTz(t) => {
                    let off = zone.offset_at(*t);
                    let abbrev = zone.abbreviation_at(*t);
                    let l = t.saturating_add(off as i64 * USECS_PER_SEC);
                    let l = if tusk_types::datetime::timestamp_is_finite(*t) {
                        l
                    } else {
                        *t
                    };
                    tc::to_char(l, Some((off, &abbrev)), text(fmt))
                }
                // The numeric templates (`formatting.c`'s NUM_processor).
                V::Int4(x) => Some(Numeric::from_i64(*x as i64).to_char(text(fmt))?),
                V::Int8(x) => Some(Numeric::from_i64(*x).to_char(text(fmt))?),
                V::Numeric(n) => Some(n.to_char(text(fmt))?),
                _ => return Err(bad_args(f)),
            };
            out.map_or(V::Null, V::Text)
        }
        (Func::ToDate, [s, fmt]) => V::Date(tc::to_date(text(s), text(fmt))?),
        (Func::ToTimestamp, [s, fmt]) => {
            V::TimestampTz(tc::to_timestamp(text(s), text(fmt), zone)?)
        }
        (Func::ToTimestamp, [secs]) => V::TimestampTz(tc::to_timestamp_epoch(float(secs))?),
        (Func::JustifyDays | Func::JustifyHours | Func::JustifyInterval, [V::Interval(iv)]) => {
            V::Interval(match f {
                Func::JustifyDays => iv.justify_days()?,
                Func::JustifyHours => iv.justify_hours()?,
                _ => iv.justify_interval()?,
            })
        }
        (Func::IsFinite, [v]) => V::Bool(match v {
            V::Date(d) => tusk_types::datetime::date_is_finite(*d),
            V::Timestamp(t) | V::TimestampTz(t) => tusk_types::datetime::timestamp_is_finite(*t),
            V::Interval(_) => true,
            _ => return Err(bad_args(f)),
        }),
        (Func::Overlaps, [s1, e1, s2, e2]) => overlaps(s1, e1, s2, e2),
        (Func::Timezone, [z, v]) => {
            let z = match z {
                V::Interval(iv) => zone_of_interval(*iv)?,
                _ => zone_named(text(z))?,
            };
            match (v, ty) {
                // timestamp AT TIME ZONE z: the local time in z, as an instant.
                (V::Timestamp(t), _) => V::TimestampTz(dt::timestamp_to_timestamptz(*t, &z)?),
                // timestamptz AT TIME ZONE z: the wall-clock time in z.
                (V::TimestampTz(t), _) => V::Timestamp(dt::timestamptz_to_timestamp(*t, &z)?),
                _ => return Err(bad_args(f)),
            }
        }
        _ => return Err(bad_args(f)),
    })
}

/// `(s1, e1) OVERLAPS (s2, e2)` with PostgreSQL's NULL rules
/// (`timestamp_overlaps`): each period's ends are put in order, a period
/// with one NULL end is a point at the other, and the result is NULL
/// where the known ends cannot decide.
fn overlaps(s1: &Value, e1: &Value, s2: &Value, e2: &Value) -> Value {
    fn key(v: &Value) -> Option<i64> {
        match v {
            Value::Date(d) => Some(*d as i64),
            Value::Time(t) | Value::Timestamp(t) | Value::TimestampTz(t) => Some(*t),
            _ => None,
        }
    }
    fn period(s: Option<i64>, e: Option<i64>) -> Option<(i64, Option<i64>)> {
        match (s, e) {
            (None, None) => None,
            (None, Some(e)) => Some((e, None)),
            (Some(s), None) => Some((s, None)),
            (Some(s), Some(e)) => Some((s.min(e), Some(s.max(e)))),
        }
    }
    let (Some((ts1, te1)), Some((ts2, te2))) = (period(key(s1), key(e1)), period(key(s2), key(e2)))
    else {
        return Value::Null;
    };
    let b = Value::Bool;
    match ts1.cmp(&ts2) {
        std::cmp::Ordering::Greater => match (te2, te1) {
            (None, _) => Value::Null,
            (Some(te2), _) if ts1 < te2 => b(true),
            (_, None) => Value::Null,
            _ => b(false),
        },
        std::cmp::Ordering::Less => match (te1, te2) {
            (None, _) => Value::Null,
            (Some(te1), _) if ts2 < te1 => b(true),
            (_, None) => Value::Null,
            _ => b(false),
        },
        std::cmp::Ordering::Equal if te1.is_none() || te2.is_none() => Value::Null,
        std::cmp::Ordering::Equal => b(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaps_follows_timestamp_overlaps() {
        let t = Value::Timestamp;
        assert_eq!(overlaps(&t(1), &t(5), &t(4), &t(9)), Value::Bool(true));
        assert_eq!(overlaps(&t(5), &t(1), &t(5), &t(9)), Value::Bool(false));
        assert_eq!(
            overlaps(&t(1), &Value::Null, &t(0), &t(3)),
            Value::Bool(true)
        );
        assert_eq!(overlaps(&t(1), &Value::Null, &t(1), &t(3)), Value::Null);
        assert_eq!(
            overlaps(&Value::Null, &Value::Null, &t(1), &t(3)),
            Value::Null
        );
    }

    #[test]
    fn rounding_follows_adjust_timestamp_for_typmod() {
        assert_eq!(round_micros(1_234_567, 2), 1_230_000);
        assert_eq!(round_micros(1_235_000, 2), 1_240_000);
        assert_eq!(round_micros(-1_235_000, 2), -1_240_000);
        assert_eq!(round_micros(1_234_567, 6), 1_234_567);
        assert_eq!(round_micros(i64::MAX, 0), i64::MAX);
    }

    #[test]
    fn zones_by_abbreviation_name_or_posix_offset() {
        assert_eq!(zone_named("EST").unwrap().offset_at(0), -5 * 3600);
        assert_eq!(zone_named("UTC+3").unwrap().offset_at(0), -3 * 3600);
        assert!(zone_named("America/New_York").is_ok());
        let e = zone_named("Mars/Base").unwrap_err();
        assert_eq!(e.message, "time zone \"Mars/Base\" not recognized");
        let e = zone_of_interval(Interval::new(0, 1, 0)).unwrap_err();
        assert_eq!(e.code, sqlstate::INVALID_PARAMETER_VALUE);
    }
}
