//! SQLSTATEs for errors whose code the SQL layer did not name, derived from
//! their message.
//!
//! Interim: the messages follow PostgreSQL's wording, so the classes below
//! are the ones PostgreSQL raises with the same messages. Once every error of
//! the SQL layer carries its code (`SqlError::code`), this table goes away.
//! Rules are tried in order; the first whose pattern matches wins. A
//! message nothing matches is an internal error (XX000), as PostgreSQL's
//! `elog(ERROR)` without a code is.

/// How a rule matches a message.
enum Pattern {
    Prefix(&'static str),
    Contains(&'static str),
    /// `prefix ... suffix`
    Around(&'static str, &'static str),
}

use Pattern::{Around, Contains, Prefix};

const RULES: &[(Pattern, &str)] = &[
    (Prefix("canceling statement due to"), "57014"),
    (
        Prefix("terminating connection due to administrator"),
        "57P01",
    ),
    (Prefix("syntax error"), "42601"),
    (Prefix("unterminated"), "42601"),
    (Around("relation \"", "\" does not exist"), "42P01"),
    (Around("table \"", "\" does not exist"), "42P01"),
    (Prefix("missing FROM-clause entry"), "42P01"),
    (Around("relation \"", "\" already exists"), "42P07"),
    (Around("role \"", "\" already exists"), "42710"),
    (Around("column reference \"", "\" is ambiguous"), "42702"),
    (Around("common column name \"", "\""), "42702"),
    (Around("column \"", "specified more than once"), "42701"),
    (Around("column ", " does not exist"), "42703"),
    (Prefix("unrecognized configuration parameter"), "42704"),
    (Around("type \"", "\" does not exist"), "42704"),
    (Around("index \"", "\" does not exist"), "42704"),
    (Around("role \"", "\" does not exist"), "42704"),
    (Prefix("operator does not exist"), "42883"),
    (Prefix("function "), "42883"),
    (Prefix("operator is not unique"), "42725"),
    (Contains("is not unique"), "42725"),
    (Contains("must appear in the GROUP BY clause"), "42803"),
    (Prefix("aggregate functions are not allowed"), "42803"),
    (Prefix("aggregate function calls cannot be nested"), "42803"),
    (Prefix("argument of "), "42804"),
    (Around("column \"", "is of type"), "42804"),
    (Contains("is not an index"), "42809"),
    (Prefix("INSERT has more"), "42601"),
    (Prefix("VALUES lists must all be the same length"), "42601"),
    (Prefix("there is no parameter"), "42P02"),
    (Prefix("division by zero"), "22012"),
    (Contains("out of range"), "22003"),
    (Prefix("numeric field overflow"), "22003"),
    (Prefix("invalid input syntax"), "22P02"),
    (Prefix("value too long for type"), "22001"),
    (Prefix("step size cannot equal zero"), "22023"),
    (Prefix("invalid byte sequence"), "22021"),
    (Contains("violates not-null constraint"), "23502"),
    (Prefix("invalid value for parameter"), "22023"),
    (
        Contains("is outside the valid range for parameter"),
        "22023",
    ),
    (Contains("requires a Boolean value"), "22023"),
    (
        Contains("cannot be changed without restarting the server"),
        "55P02",
    ),
    (Prefix("temporary file size exceeds"), "53400"),
    (Prefix("conversion between"), "0A000"),
    (Contains("not supported"), "0A000"),
    (Prefix("unsupported"), "0A000"),
    (Prefix("could not "), "58030"),
    (
        Prefix("database is not accepting commands to avoid wraparound"),
        "54000",
    ),
];

/// The SQLSTATE of an error with message `message`.
pub fn classify(message: &str) -> &'static str {
    for (pattern, code) in RULES {
        let hit = match pattern {
            Prefix(p) => message.starts_with(p),
            Contains(c) => message.contains(c),
            Around(a, b) => message.strip_prefix(a).is_some_and(|rest| rest.contains(b)),
        };
        if hit {
            return code;
        }
    }
    "XX000"
}

#[cfg(test)]
mod tests {
    use super::classify;

    #[test]
    fn postgres_codes_for_postgres_messages() {
        for (m, code) in [
            ("syntax error at or near \"selec\"", "42601"),
            ("relation \"nope\" does not exist", "42P01"),
            ("column \"x\" does not exist", "42703"),
            ("column t.x does not exist", "42703"),
            ("division by zero", "22012"),
            ("integer out of range", "22003"),
            ("invalid input syntax for type integer: \"x\"", "22P02"),
            ("canceling statement due to user request", "57014"),
            ("canceling statement due to statement timeout", "57014"),
            ("unrecognized configuration parameter \"nope\"", "42704"),
            ("relation \"t\" already exists", "42P07"),
            ("HAVING is not supported", "0A000"),
            ("something nobody expected", "XX000"),
        ] {
            assert_eq!(classify(m), code, "{m}");
        }
    }
}
