//! The session settings that change how values read and print:
//! `TimeZone`, `DateStyle`, `IntervalStyle` and `extra_float_digits`.
//!
//! The binder and executor pass a [`Settings`] to every input, output and
//! time-zone-dependent function instead of this crate reading globals, so
//! that a parallel worker formats exactly as its leader and tests can use
//! any zone without touching process state. `Settings::default()` is
//! PostgreSQL's out-of-the-box configuration with `TimeZone = UTC`.

use crate::datetime::zone::Zone;
use crate::error::{sqlstate, Result, TypeError};

/// `DateStyle`'s output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DateStyle {
    #[default]
    Iso,
    Sql,
    Postgres,
    German,
}

/// `DateStyle`'s field order, for reading `1/2/2003` and for the SQL and
/// Postgres output styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DateOrder {
    #[default]
    Mdy,
    Dmy,
    Ymd,
}

/// `IntervalStyle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntervalStyle {
    #[default]
    Postgres,
    PostgresVerbose,
    SqlStandard,
    Iso8601,
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub time_zone: Zone,
    pub date_style: DateStyle,
    pub date_order: DateOrder,
    pub interval_style: IntervalStyle,
    /// -15..=3; 1 and above prints floats shortest-exact.
    pub extra_float_digits: i32,
    /// `bytea_output = escape` (else `hex`, the default).
    pub bytea_escape: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            time_zone: Zone::utc(),
            date_style: DateStyle::Iso,
            date_order: DateOrder::Mdy,
            interval_style: IntervalStyle::Postgres,
            extra_float_digits: 1,
            bytea_escape: false,
        }
    }
}

fn invalid_value(name: &str, v: &str) -> TypeError {
    TypeError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"{name}\": \"{v}\""),
    )
}

impl Settings {
    /// Applies `SET DateStyle = '...'`: a comma- or space-separated list of
    /// a style (`ISO`, `SQL`, `Postgres`, `German`) and/or an order (`MDY`,
    /// `DMY`, `YMD`, `US`, `European`, `NonEuropean`); what is not given
    /// keeps its value, except that `German` alone implies `DMY`.
    pub fn set_date_style(&mut self, v: &str) -> Result<()> {
        let (mut style, mut order) = (None, None);
        for word in v.split([',', ' ']).filter(|w| !w.is_empty()) {
            match word.to_ascii_lowercase().as_str() {
                "iso" => style = Some(DateStyle::Iso),
                "sql" => style = Some(DateStyle::Sql),
                "postgres" => style = Some(DateStyle::Postgres),
                "german" => style = Some(DateStyle::German),
                "mdy" | "us" | "noneuropean" => order = Some(DateOrder::Mdy),
                "dmy" | "euro" | "european" => order = Some(DateOrder::Dmy),
                "ymd" => order = Some(DateOrder::Ymd),
                "default" => {}
                _ => return Err(invalid_value("DateStyle", v)),
            }
        }
        if style == Some(DateStyle::German) && order.is_none() {
            order = Some(DateOrder::Dmy);
        }
        if let Some(s) = style {
            self.date_style = s;
        }
        if let Some(o) = order {
            self.date_order = o;
        }
        Ok(())
    }

    /// `SHOW DateStyle`: `ISO, MDY`.
    pub fn date_style_name(&self) -> String {
        let style = match self.date_style {
            DateStyle::Iso => "ISO",
            DateStyle::Sql => "SQL",
            DateStyle::Postgres => "Postgres",
            DateStyle::German => "German",
        };
        let order = match self.date_order {
            DateOrder::Mdy => "MDY",
            DateOrder::Dmy => "DMY",
            DateOrder::Ymd => "YMD",
        };
        format!("{style}, {order}")
    }

    /// Applies `SET IntervalStyle = '...'`.
    pub fn set_interval_style(&mut self, v: &str) -> Result<()> {
        self.interval_style = match v.trim().to_ascii_lowercase().as_str() {
            "postgres" => IntervalStyle::Postgres,
            "postgres_verbose" => IntervalStyle::PostgresVerbose,
            "sql_standard" => IntervalStyle::SqlStandard,
            "iso_8601" => IntervalStyle::Iso8601,
            _ => return Err(invalid_value("IntervalStyle", v)),
        };
        Ok(())
    }

    /// `SHOW IntervalStyle`.
    pub fn interval_style_name(&self) -> &'static str {
        match self.interval_style {
            IntervalStyle::Postgres => "postgres",
            IntervalStyle::PostgresVerbose => "postgres_verbose",
            IntervalStyle::SqlStandard => "sql_standard",
            IntervalStyle::Iso8601 => "iso_8601",
        }
    }

    /// Applies `SET TimeZone = '...'` (see [`Zone::from_setting`]).
    pub fn set_time_zone(&mut self, v: &str) -> Result<()> {
        self.time_zone = Zone::from_setting(v)?;
        Ok(())
    }
}
