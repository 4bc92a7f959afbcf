use super::*;

fn sql_type(name: &str) -> SqlType {
    if let Some((base, args)) = name.split_once('(') {
        let args = args.trim_end_matches(')');
        return match base {
            "bpchar" => SqlType::Char(args.parse().unwrap()),
            "varchar" => SqlType::Varchar(Some(args.parse().unwrap())),
            "numeric" => {
                let (p, s) = args.split_once(',').unwrap();
                SqlType::Numeric(Some((p.parse().unwrap(), s.parse().unwrap())))
            }
            _ => panic!("type {name}"),
        };
    }
    SqlType::of(DataType::from_type_name(name).unwrap())
}

fn show(r: Result<Option<String>>) -> String {
    match r {
        Ok(Some(s)) => format!("[{s}]"),
        Ok(None) => "NULL".into(),
        Err(e) => format!("ERROR {}: {}", e.code, e.message),
    }
}

/// `'lit'::from::to::text`, as PostgreSQL evaluates it.
fn run(from: &str, lit: &str, to: &str, env: &CastEnv) -> Result<Option<String>> {
    let (ft, tt) = (sql_type(from), sql_type(to));
    let v = apply_typmod(from_text(lit, ft.data_type(), env)?, ft, true)?;
    let c = cast_value_in(&v, ft.data_type(), tt.data_type(), env)?;
    let c = apply_typmod(c, tt, true)?;
    Ok(to_text(&c, tt.data_type(), env.settings))
}

/// Every case of `testdata/casts_pg15.tsv`, recorded from PostgreSQL 15
/// with TimeZone America/New_York by `testdata/gen_casts.py`.
#[test]
fn matches_postgres_on_the_recorded_cases() {
    let mut settings = Settings::default();
    settings.set_time_zone("America/New_York").unwrap();
    let env = CastEnv {
        settings: &settings,
        now: 0,
    };
    let data = include_str!("../../testdata/casts_pg15.tsv");
    assert!(data.lines().count() > 1000);
    let mut failures = Vec::new();
    for line in data.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let got = show(run(f[0], f[1], f[2], &env));
        if got != f[3] {
            failures.push(format!(
                "'{}'::{}::{}: got {got}, want {}",
                f[1], f[0], f[2], f[3]
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
fn contexts_follow_pg_cast() {
    use CastContext::*;
    use DataType as T;
    assert_eq!(cast_context(T::Int4, T::Int8), Some(Implicit));
    assert_eq!(cast_context(T::Int8, T::Int4), Some(Assignment));
    assert_eq!(cast_context(T::Bool, T::Int4), Some(Explicit));
    assert_eq!(cast_context(T::Bool, T::Int8), None);
    assert_eq!(cast_context(T::Int4, T::Text), Some(Assignment));
    assert_eq!(cast_context(T::Text, T::Int4), Some(Explicit));
    assert_eq!(cast_context(T::Date, T::TimestampTz), Some(Implicit));
    assert_eq!(cast_context(T::TimestampTz, T::Date), Some(Assignment));
    assert_eq!(cast_context(T::Interval, T::Time), Some(Assignment));
    assert_eq!(cast_context(T::Float8, T::Date), None);
    assert_eq!(type_category(T::Interval), 'T');
    assert!(is_preferred(T::Float8) && !is_preferred(T::Numeric));
}

#[test]
fn assignment_to_varchar_and_char() {
    // PostgreSQL 15: insert into t(v varchar(3), c char(3)).
    let v = |s: &str| Value::Text(s.to_string());
    let err = |r: Result<Value>| r.unwrap_err();
    let e = err(apply_typmod(v("abcd"), SqlType::Varchar(Some(3)), false));
    assert_eq!(
        (e.code, e.message.as_str()),
        ("22001", "value too long for type character varying(3)")
    );
    assert_eq!(
        apply_typmod(v("abc  "), SqlType::Varchar(Some(3)), false).unwrap(),
        v("abc")
    );
    assert_eq!(
        apply_typmod(v("ñañaña"), SqlType::Varchar(Some(2)), true).unwrap(),
        v("ña")
    );
    let e = err(apply_typmod(v("abcd"), SqlType::Char(3), false));
    assert_eq!(e.message, "value too long for type character(3)");
    assert_eq!(
        apply_typmod(v("a"), SqlType::Char(3), false).unwrap(),
        v("a  ")
    );
}

#[test]
fn kernels_skip_null_and_inactive_rows() {
    let env = CastEnv::default();
    let v = Vector::new(
        Data::Int8(vec![1, 5_000_000_000, 7, 5_000_000_000]),
        Some(vec![false, true, false, false]),
    );
    // Row 1 is NULL and row 3 inactive: neither may raise.
    let active = [true, true, true, false];
    let out = cast_vector(&v, DataType::Int8, SqlType::Int4, true, &env, Some(&active)).unwrap();
    assert_eq!(out.value(0), Value::Int4(1));
    assert!(out.is_null(1));
    assert_eq!(out.value(2), Value::Int4(7));
    let e = cast_vector(&v, DataType::Int8, SqlType::Int4, true, &env, None).unwrap_err();
    assert_eq!(e.message, "integer out of range");
    let mut s = Strings::new();
    for x in [" 12 ", "x", "3"] {
        s.push(x.as_bytes());
    }
    let t = Vector::new(Data::Text(s), None);
    let out = cast_vector(
        &t,
        DataType::Text,
        SqlType::Int4,
        true,
        &env,
        Some(&[true, false, true]),
    )
    .unwrap();
    assert_eq!(out.value(0), Value::Int4(12));
    assert_eq!(out.value(2), Value::Int4(3));
    let out = cast_vector(
        &t,
        DataType::Text,
        SqlType::Numeric(Some((4, 1))),
        false,
        &env,
        Some(&[true, false, true]),
    )
    .unwrap();
    assert_eq!(out.value(0).to_text().unwrap(), "12.0");
}
