//! Parsing and canonical forms of the settings clients send: `DateStyle`,
//! `TimeZone`, `search_path`, `client_encoding`, `application_name` and the
//! time-valued `statement_timeout` / `lock_timeout`.
//!
//! Drivers send these at connection start (psycopg and postgres_fdw set
//! `DateStyle`, `TimeZone`, `search_path`, `extra_float_digits`, ...) and
//! read them back with `SHOW`, so each is validated and printed the way
//! PostgreSQL 15 does: `SET datestyle = german` shows `German, DMY`, `SET
//! statement_timeout = 1500` shows `1500ms`, `SET search_path = a, "B"`
//! shows `a, "B"`. Each function takes the raw value and the current one
//! (some settings keep parts of it) and returns the canonical value or the
//! error message, with a `\n`-separated DETAIL or HINT where PostgreSQL
//! gives one (see [`split_message`]).

/// A validation error: `message`, then optional `DETAIL:` / `HINT:` lines.
pub fn split_message(e: &str) -> (String, Option<String>, Option<String>) {
    let mut lines = e.split('\n');
    let message = lines.next().unwrap_or_default().to_string();
    let (mut detail, mut hint) = (None, None);
    for l in lines {
        if let Some(d) = l.strip_prefix("DETAIL: ") {
            detail = Some(d.to_string());
        } else if let Some(h) = l.strip_prefix("HINT: ") {
            hint = Some(h.to_string());
        }
    }
    (message, detail, hint)
}

fn invalid(name: &str, raw: &str) -> String {
    format!("invalid value for parameter \"{name}\": \"{raw}\"")
}

/// `DateStyle`: an output format (ISO, Postgres, SQL, German) and a field
/// order (MDY, DMY, YMD), either of which may be given alone.
pub fn datestyle(raw: &str, current: &str) -> Result<String, String> {
    let (cur_fmt, cur_ord) = current.split_once(", ").unwrap_or(("ISO", "MDY"));
    let (mut fmt, mut ord): (Option<&str>, Option<&str>) = (None, None);
    let conflict = || {
        format!(
            "{}\nDETAIL: Conflicting \"datestyle\" specifications.",
            invalid("DateStyle", raw)
        )
    };
    for tok in raw
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        let (f, o) = match tok.to_ascii_lowercase().as_str() {
            "iso" => (Some("ISO"), None),
            "sql" => (Some("SQL"), None),
            "postgres" => (Some("Postgres"), None),
            "german" => (Some("German"), None),
            "ymd" => (None, Some("YMD")),
            "dmy" | "euro" | "european" => (None, Some("DMY")),
            "mdy" | "us" | "noneuro" | "noneuropean" => (None, Some("MDY")),
            "default" => (Some("ISO"), Some("MDY")),
            _ => return Err(invalid("DateStyle", raw)),
        };
        if let Some(f) = f {
            if fmt.is_some_and(|x| x != f) {
                return Err(conflict());
            }
            fmt = Some(f);
        }
        if let Some(o) = o {
            if ord.is_some_and(|x| x != o) {
                return Err(conflict());
            }
            ord = Some(o);
        }
    }
    if fmt.is_none() && ord.is_none() {
        return Err(invalid("DateStyle", raw));
    }
    // German implies day-month-year unless an order is given.
    let ord = ord.unwrap_or(if fmt == Some("German") {
        "DMY"
    } else {
        cur_ord
    });
    Ok(format!("{}, {ord}", fmt.unwrap_or(cur_fmt)))
}

/// `TimeZone`: a zone of the tz database (any case, shown with the
/// database's spelling), `UTC`, or a POSIX-style offset (`+05:30`), as
/// tusk-types reads it for the session's [`tusk_types::Settings`].
pub fn timezone(raw: &str, _current: &str) -> Result<String, String> {
    tusk_types::datetime::zone::Zone::from_setting(raw)
        .map(|z| z.name().to_string())
        .map_err(|e| e.message)
}

/// `search_path`: a comma-separated list of schema names, unquoted names
/// folded to lower case (PostgreSQL's `SplitIdentifierString`), shown with
/// the names quoted where needed.
pub fn search_path(raw: &str, _current: &str) -> Result<String, String> {
    let bad = || invalid("search_path", raw);
    let mut names = Vec::new();
    let mut rest = raw.trim_start();
    if rest.is_empty() {
        return Ok(String::new());
    }
    loop {
        let name;
        if let Some(r) = rest.strip_prefix('"') {
            let mut s = String::new();
            let mut chars = r.char_indices();
            let end = loop {
                match chars.next() {
                    Some((i, '"')) => {
                        if r[i + 1..].starts_with('"') {
                            s.push('"');
                            chars.next();
                        } else {
                            break i + 1;
                        }
                    }
                    Some((_, c)) => s.push(c),
                    None => return Err(bad()),
                }
            };
            name = s;
            rest = r[end..].trim_start();
        } else {
            let end = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            if end == 0 {
                return Err(bad());
            }
            name = rest[..end].to_lowercase();
            rest = rest[end..].trim_start();
        }
        names.push(crate::names::quote_ident(&name));
        if rest.is_empty() {
            break;
        }
        rest = rest.strip_prefix(',').ok_or_else(bad)?.trim_start();
    }
    Ok(names.join(", "))
}

/// `client_encoding`: tusk speaks UTF8 only. SQL_ASCII is accepted too:
/// PostgreSQL converts nothing for it, which is what tusk does.
pub fn client_encoding(raw: &str, _current: &str) -> Result<String, String> {
    let norm: String = raw
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    match norm.as_str() {
        "utf8" | "unicode" => Ok("UTF8".into()),
        "sqlascii" => Ok("SQL_ASCII".into()),
        _ if KNOWN_ENCODINGS.contains(&norm.as_str()) => Err(format!(
            "conversion between {} and UTF8 is not supported\nDETAIL: tusk speaks UTF8 only.",
            raw.trim().to_uppercase()
        )),
        _ => Err(invalid("client_encoding", raw)),
    }
}

/// PostgreSQL's other encoding names (normalised: alphanumerics, lower
/// case), so that a real but unsupported encoding gets a clear message.
const KNOWN_ENCODINGS: &[&str] = &[
    "latin1",
    "latin2",
    "latin3",
    "latin4",
    "latin5",
    "latin6",
    "latin7",
    "latin8",
    "latin9",
    "latin10",
    "win1250",
    "win1251",
    "win1252",
    "win1253",
    "win1254",
    "win1255",
    "win1256",
    "win1257",
    "win1258",
    "win866",
    "win874",
    "koi8r",
    "koi8u",
    "eucjp",
    "euccn",
    "euckr",
    "euctw",
    "eucjis2004",
    "sjis",
    "big5",
    "gbk",
    "uhc",
    "gb18030",
    "johab",
    "mulecinternal",
    "iso88595",
    "iso88596",
    "iso88597",
    "iso88598",
    "shiftjis2004",
    "windows1252",
    "cp1252",
];

/// `application_name`: printable ASCII, others replaced by `?` (as
/// PostgreSQL's `pg_clean_ascii`), at most 63 bytes.
pub fn application_name(raw: &str, _current: &str) -> Result<String, String> {
    let mut s: String = raw
        .chars()
        .flat_map(|c| {
            if (' '..='~').contains(&c) {
                vec![c]
            } else {
                vec!['?'; c.len_utf8()]
            }
        })
        .collect();
    s.truncate(63);
    Ok(s)
}

/// Parses a time in milliseconds as PostgreSQL does for `statement_timeout`:
/// a number (possibly fractional, rounded) with an optional unit `us`, `ms`,
/// `s`, `min`, `h`, `d`; a bare number is in ms.
pub fn parse_ms(raw: &str) -> Option<i64> {
    let v = raw.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().ok()?;
    let ms = n * match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    let r = ms.round();
    (r.is_finite() && r.abs() < 9.0e15).then_some(r as i64)
}

/// Formats milliseconds with the largest unit that divides them (`1500ms`,
/// `2s`, `1min`, `1h`, `1d`; `0` for zero).
pub fn format_ms(ms: i64) -> String {
    if ms == 0 {
        return "0".into();
    }
    for (unit, div) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1000),
    ] {
        if ms % div == 0 {
            return format!("{}{unit}", ms / div);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datestyles() {
        assert_eq!(datestyle("iso, dmy", "ISO, MDY").unwrap(), "ISO, DMY");
        assert_eq!(datestyle("german", "ISO, MDY").unwrap(), "German, DMY");
        assert_eq!(datestyle("ymd", "ISO, MDY").unwrap(), "ISO, YMD");
        assert_eq!(datestyle("sql", "ISO, YMD").unwrap(), "SQL, YMD");
        assert_eq!(datestyle("ISO", "ISO, MDY").unwrap(), "ISO, MDY");
        let e = datestyle("iso,german", "ISO, MDY").unwrap_err();
        assert_eq!(
            split_message(&e),
            (
                "invalid value for parameter \"DateStyle\": \"iso,german\"".into(),
                Some("Conflicting \"datestyle\" specifications.".into()),
                None
            )
        );
        assert!(datestyle("nope", "ISO, MDY").is_err());
    }

    #[test]
    fn search_paths() {
        assert_eq!(
            search_path("\"$user\", public", "").unwrap(),
            "\"$user\", public"
        );
        assert_eq!(search_path("a,B , \"C\"", "").unwrap(), "a, b, \"C\"");
        assert_eq!(search_path("pg_catalog", "").unwrap(), "pg_catalog");
        assert!(search_path("a,,b", "").is_err());
        assert!(search_path("\"a", "").is_err());
    }

    #[test]
    fn timezones_and_encodings() {
        assert_eq!(timezone("utc", "").unwrap(), "UTC");
        assert!(timezone("Foo/Bar", "").is_err());
        assert!(timezone("../etc/passwd", "").is_err());
        assert_eq!(timezone("europe/paris", "").unwrap(), "Europe/Paris");
        assert_eq!(client_encoding("utf-8", "").unwrap(), "UTF8");
        assert_eq!(client_encoding("UNICODE", "").unwrap(), "UTF8");
        assert!(client_encoding("LATIN1", "")
            .unwrap_err()
            .starts_with("conversion between LATIN1 and UTF8 is not supported"));
        assert!(client_encoding("foo", "")
            .unwrap_err()
            .starts_with("invalid value for parameter"));
        assert_eq!(application_name("héllo", "").unwrap(), "h??llo");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_ms("1500"), Some(1500));
        assert_eq!(parse_ms("1.5"), Some(2));
        assert_eq!(parse_ms("2s"), Some(2000));
        assert_eq!(parse_ms("100us"), Some(0));
        assert_eq!(parse_ms("abc"), None);
        assert_eq!(format_ms(1500), "1500ms");
        assert_eq!(format_ms(60_000), "1min");
        assert_eq!(format_ms(86_400_000), "1d");
        assert_eq!(format_ms(0), "0");
    }
}
