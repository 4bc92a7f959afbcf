//! psql's variables: `-v NAME=VALUE` on the command line, `\set` and
//! `\unset` in scripts and the interactive shell.
//!
//! A variable is a name and a string. Most are only stored (so that `\set`
//! lists them back), but some change how the shell behaves, and psql checks
//! their values as they are set. tusk honours one of those:
//!
//! * `ON_ERROR_STOP` (Boolean, default `off`): whether a script stops at its
//!   first error. Off, psql reports the error and goes on with the next
//!   statement; the script then counts as a success. On, the script ends
//!   there and psql exits with status 3.
//!
//! As in psql, a Boolean variable that is unset reads `off`, `\set NAME`
//! with no value sets the empty string (which a Boolean reads as `on`), and
//! a value that is not a Boolean is refused with psql's message, leaving
//! the old value in place.

use std::collections::BTreeMap;

use crate::report::parse_bool;

/// Name of the variable that makes scripts stop at their first error.
pub const ON_ERROR_STOP: &str = "ON_ERROR_STOP";

/// The variables psql checks as Booleans, among those tusk honours.
const BOOLEAN_VARIABLES: &[&str] = &[ON_ERROR_STOP];

/// The shell's variables.
#[derive(Debug, Clone)]
pub struct Variables {
    values: BTreeMap<String, String>,
}

impl Default for Variables {
    fn default() -> Self {
        let mut values = BTreeMap::new();
        for name in BOOLEAN_VARIABLES {
            values.insert((*name).to_string(), "off".to_string());
        }
        Variables { values }
    }
}

impl Variables {
    /// `\set NAME VALUE` (or `-v NAME=VALUE`). The error is psql's message
    /// for a bad name or a value its variable does not accept.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        if !valid_name(name) {
            return Err(format!("invalid variable name: \"{name}\""));
        }
        // A Boolean is stored as given, as psql stores it; only whether it
        // reads as one is checked (the empty string reads as on).
        if BOOLEAN_VARIABLES.contains(&name) && !value.is_empty() && parse_bool(value).is_none() {
            return Err(format!(
                "unrecognized value \"{value}\" for \"{name}\": Boolean expected"
            ));
        }
        self.values.insert(name.to_string(), value.to_string());
        Ok(())
    }

    /// `\unset NAME`: a Boolean goes back to `off`, anything else is gone.
    pub fn unset(&mut self, name: &str) -> Result<(), String> {
        if !valid_name(name) {
            return Err(format!("invalid variable name: \"{name}\""));
        }
        if BOOLEAN_VARIABLES.contains(&name) {
            self.values.insert(name.to_string(), "off".to_string());
        } else {
            self.values.remove(name);
        }
        Ok(())
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Whether scripts stop at their first error.
    pub fn on_error_stop(&self) -> bool {
        self.boolean(ON_ERROR_STOP)
    }

    fn boolean(&self, name: &str) -> bool {
        match self.get(name) {
            Some("") => true,
            Some(v) => parse_bool(v).unwrap_or(false),
            None => false,
        }
    }

    /// What `\set` without arguments prints: `NAME = 'value'` per line, in
    /// name order.
    pub fn listing(&self) -> String {
        let mut text = String::new();
        for (name, value) in &self.values {
            text.push_str(&format!("{name} = '{value}'\n"));
        }
        text
    }
}

/// psql accepts letters (any non-ASCII byte counts as one), digits and
/// underscores.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
}

/// Splits a command-line `-v` assignment: `NAME=VALUE` sets, a bare `NAME`
/// unsets (psql's rule).
pub fn parse_assignment(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (arg, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_error_stop_follows_psql() {
        let mut v = Variables::default();
        assert!(!v.on_error_stop());
        assert_eq!(v.get(ON_ERROR_STOP), Some("off"));
        v.set(ON_ERROR_STOP, "1").unwrap();
        assert!(v.on_error_stop());
        v.set(ON_ERROR_STOP, "o").unwrap_err();
        assert!(v.on_error_stop(), "a refused value keeps the old one");
        v.set(ON_ERROR_STOP, "off").unwrap();
        assert!(!v.on_error_stop());
        v.set(ON_ERROR_STOP, "").unwrap();
        assert!(v.on_error_stop(), "the empty string reads as on");
        v.unset(ON_ERROR_STOP).unwrap();
        assert!(!v.on_error_stop());
        assert_eq!(
            v.set(ON_ERROR_STOP, "bogus").unwrap_err(),
            "unrecognized value \"bogus\" for \"ON_ERROR_STOP\": Boolean expected"
        );
    }

    #[test]
    fn names_and_listing() {
        let mut v = Variables::default();
        v.set("x", "a b").unwrap();
        assert_eq!(v.listing(), "ON_ERROR_STOP = 'off'\nx = 'a b'\n");
        v.unset("x").unwrap();
        assert_eq!(v.get("x"), None);
        assert_eq!(
            v.set("a-b", "1").unwrap_err(),
            "invalid variable name: \"a-b\""
        );
        assert_eq!(parse_assignment("A=1=2"), ("A", Some("1=2")));
        assert_eq!(parse_assignment("A"), ("A", None));
    }
}
