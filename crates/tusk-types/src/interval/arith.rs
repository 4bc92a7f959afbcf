//! Interval arithmetic: `+`, `-`, unary minus, `* float8`, `/ float8`,
//! and `justify_hours` / `justify_days` / `justify_interval`, as
//! PostgreSQL 15's `timestamp.c` computes them.
//!
//! Addition is field by field. Multiplication and division keep the whole
//! part of each field and cascade fractions *down* only (a fractional month
//! becomes days at 30 per month, a fractional day seconds at 86,400 per
//! day, with PostgreSQL's rounding to the microsecond); cascading up is
//! what the `justify_*` functions are for. Any field leaving its 32- or
//! 64-bit range is `interval out of range` (22008).

use super::{Interval, DAYS_PER_MONTH, MICROS_PER_DAY};
use crate::error::{sqlstate, Result, TypeError};

pub(crate) fn interval_out_of_range() -> TypeError {
    TypeError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

/// PostgreSQL's `TSROUND`: round to a microsecond's worth of digits.
fn tsround(x: f64) -> f64 {
    (x * 1e6).round_ties_even() / 1e6
}

/// C's `(int) x` for a double in range.
fn c_int(x: f64) -> i32 {
    x.trunc() as i32
}

fn fits_i32(x: f64) -> bool {
    !x.is_nan() && x <= i32::MAX as f64 && x >= i32::MIN as f64
}

impl Interval {
    pub fn checked_add(self, o: Interval) -> Result<Interval> {
        Ok(Interval::new(
            self.months
                .checked_add(o.months)
                .ok_or_else(interval_out_of_range)?,
            self.days
                .checked_add(o.days)
                .ok_or_else(interval_out_of_range)?,
            self.micros
                .checked_add(o.micros)
                .ok_or_else(interval_out_of_range)?,
        ))
    }

    pub fn checked_sub(self, o: Interval) -> Result<Interval> {
        self.checked_add(o.checked_neg()?)
    }

    pub fn checked_neg(self) -> Result<Interval> {
        Ok(Interval::new(
            self.months
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
            self.days.checked_neg().ok_or_else(interval_out_of_range)?,
            self.micros
                .checked_neg()
                .ok_or_else(interval_out_of_range)?,
        ))
    }

    /// `interval * float8` (`interval_mul`).
    pub fn mul_f64(self, factor: f64) -> Result<Interval> {
        let m = self.months as f64 * factor;
        let d = self.days as f64 * factor;
        if !fits_i32(m) || !fits_i32(d) {
            return Err(interval_out_of_range());
        }
        self.scale_parts(m, d, self.micros as f64 * factor)
    }

    /// `interval / float8` (`interval_div`).
    pub fn div_f64(self, factor: f64) -> Result<Interval> {
        if factor == 0.0 {
            return Err(TypeError::division_by_zero());
        }
        let m = self.months as f64 / factor;
        let d = self.days as f64 / factor;
        if !fits_i32(m) || !fits_i32(d) {
            return Err(interval_out_of_range());
        }
        self.scale_parts(m, d, self.micros as f64 / factor)
    }

    /// The common tail of `interval_mul` and `interval_div`: `m` and `d`
    /// are the scaled month and day fields, `t` the scaled time.
    fn scale_parts(self, m: f64, d: f64, t: f64) -> Result<Interval> {
        let months = c_int(m);
        let mut days = c_int(d);
        let month_remainder_days = tsround((m - months as f64) * DAYS_PER_MONTH as f64);
        let mut sec_remainder = tsround(
            (d - days as f64 + month_remainder_days - c_int(month_remainder_days) as f64)
                * 86_400.0,
        );
        if sec_remainder.abs() >= 86_400.0 {
            days += c_int(sec_remainder / 86_400.0);
            sec_remainder -= c_int(sec_remainder / 86_400.0) as f64 * 86_400.0;
        }
        days = days
            .checked_add(c_int(month_remainder_days))
            .ok_or_else(interval_out_of_range)?;
        let micros = (t + sec_remainder * 1e6).round_ties_even();
        if micros.is_nan()
            || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&micros)
        {
            return Err(interval_out_of_range());
        }
        Ok(Interval::new(months, days, micros as i64))
    }

    /// `justify_hours`: whole days out of the time field.
    pub fn justify_hours(self) -> Result<Interval> {
        let mut days = self.days as i64 + self.micros / MICROS_PER_DAY;
        let mut time = self.micros % MICROS_PER_DAY;
        if days > 0 && time < 0 {
            time += MICROS_PER_DAY;
            days -= 1;
        } else if days < 0 && time > 0 {
            time -= MICROS_PER_DAY;
            days += 1;
        }
        let days = i32::try_from(days).map_err(|_| interval_out_of_range())?;
        Ok(Interval::new(self.months, days, time))
    }

    /// `justify_days`: whole 30-day months out of the day field.
    pub fn justify_days(self) -> Result<Interval> {
        let mut months = self.months as i64 + (self.days / DAYS_PER_MONTH as i32) as i64;
        let mut days = self.days % DAYS_PER_MONTH as i32;
        if months > 0 && days < 0 {
            days += DAYS_PER_MONTH as i32;
            months -= 1;
        } else if months < 0 && days > 0 {
            days -= DAYS_PER_MONTH as i32;
            months += 1;
        }
        let months = i32::try_from(months).map_err(|_| interval_out_of_range())?;
        Ok(Interval::new(months, days, self.micros))
    }

    /// `justify_interval`: both, with one sign throughout.
    pub fn justify_interval(self) -> Result<Interval> {
        let dpm = DAYS_PER_MONTH;
        let (mut month, mut day, mut time) = (self.months as i64, self.days as i64, self.micros);
        if (day > 0 && time > 0) || (day < 0 && time < 0) {
            let whole = day / dpm;
            day -= whole * dpm;
            month += whole;
        }
        day += time / MICROS_PER_DAY;
        time %= MICROS_PER_DAY;
        let whole = day / dpm;
        day -= whole * dpm;
        month += whole;
        if month > 0 && (day < 0 || (day == 0 && time < 0)) {
            day += dpm;
            month -= 1;
        } else if month < 0 && (day > 0 || (day == 0 && time > 0)) {
            day -= dpm;
            month += 1;
        }
        if day > 0 && time < 0 {
            time += MICROS_PER_DAY;
            day -= 1;
        } else if day < 0 && time > 0 {
            time -= MICROS_PER_DAY;
            day += 1;
        }
        Ok(Interval::new(
            i32::try_from(month).map_err(|_| interval_out_of_range())?,
            i32::try_from(day).map_err(|_| interval_out_of_range())?,
            time,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::format_interval;

    fn iv(s: &str) -> Interval {
        crate::interval::parse_interval(s, Default::default()).unwrap()
    }

    #[test]
    fn matches_postgres() {
        // Checked against PostgreSQL 15.
        let f = |r: Result<Interval>| match r {
            Ok(v) => format_interval(v),
            Err(e) => format!("ERROR {}: {}", e.code, e.message),
        };
        assert_eq!(f(iv("1 month").mul_f64(1.5)), "1 mon 15 days");
        assert_eq!(f(iv("1 day").mul_f64(0.3)), "07:12:00");
        assert_eq!(f(iv("1 mon 1 day").div_f64(3.0)), "10 days 08:00:00");
        assert_eq!(f(iv("10 days 3 hours").mul_f64(-2.5)), "-25 days -07:30:00");
        assert_eq!(f(iv("1 day").div_f64(0.0)), "ERROR 22012: division by zero");
        assert_eq!(
            f(iv("-2147483648 days").checked_neg()),
            "ERROR 22008: interval out of range"
        );
        assert_eq!(
            f(iv("2147483647 days").checked_add(iv("1 day"))),
            "ERROR 22008: interval out of range"
        );
        assert_eq!(f(iv("50 hours -10 min").justify_hours()), "2 days 01:50:00");
        assert_eq!(f(iv("65 days").justify_days()), "2 mons 5 days");
        assert_eq!(f(iv("-65 days").justify_days()), "-2 mons -5 days");
        assert_eq!(
            f(iv("1 mon -1 hour").justify_interval()),
            "29 days 23:00:00"
        );
    }
}
