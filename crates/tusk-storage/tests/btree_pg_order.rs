//! The key encoding orders values as PostgreSQL 15 does: `data/pg_order.tsv`
//! holds random values of every indexable type in the order PostgreSQL's
//! `ORDER BY` gave them, with `dense_rank()` marking equal ones (written by
//! `data/pg_order.py` against a C-collation cluster). Every pair of
//! neighbours must encode in the same order, equal exactly when PostgreSQL
//! ranks them equal; DESC must reverse it and NULL must sort last (ASC) or
//! first (DESC).

use std::cmp::Ordering;
use tusk_storage::btree::{ColumnOrder, Datum, Decimal, KeyEncoder, KeyType};

/// A parsed value that owns its bytes.
enum Owned {
    Datum(Datum<'static>),
    Bytes(Vec<u8>),
    Decimal(bool, Vec<u8>, i32),
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn float(s: &str) -> f64 {
    match s {
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        _ => s.parse().unwrap(),
    }
}

fn infinite_or<T: std::str::FromStr>(s: &str, min: T, max: T) -> T
where
    T::Err: std::fmt::Debug,
{
    match s {
        "inf" => max,
        "-inf" => min,
        _ => s.parse().unwrap(),
    }
}

fn parse(ty: &str, v: &str) -> (KeyType, Owned) {
    let d = |x| Owned::Datum(x);
    match ty {
        "bool" => (KeyType::Bool, d(Datum::Bool(v == "true"))),
        "int2" => (KeyType::Int2, d(Datum::Int2(v.parse().unwrap()))),
        "int4" => (KeyType::Int4, d(Datum::Int4(v.parse().unwrap()))),
        "int8" => (KeyType::Int8, d(Datum::Int8(v.parse().unwrap()))),
        "float4" => (KeyType::Float4, d(Datum::Float4(float(v) as f32))),
        "float8" => (KeyType::Float8, d(Datum::Float8(float(v)))),
        "numeric" => (
            KeyType::Numeric,
            match v {
                "NaN" => d(Datum::Decimal(Decimal::NaN)),
                "Infinity" => d(Datum::Decimal(Decimal::Infinity)),
                "-Infinity" => d(Datum::Decimal(Decimal::NegInfinity)),
                _ => {
                    let (neg, v) = match v.strip_prefix('-') {
                        Some(rest) => (true, rest),
                        None => (false, v),
                    };
                    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
                    let digits: Vec<u8> =
                        int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
                    Owned::Decimal(neg, digits, int.len() as i32)
                }
            },
        ),
        "text" => (KeyType::Text, Owned::Bytes(hex(v))),
        "bpchar" => (KeyType::Bpchar, Owned::Bytes(hex(v))),
        "date" => (
            KeyType::Date,
            d(Datum::Int4(infinite_or(v, i32::MIN, i32::MAX))),
        ),
        "time" => (KeyType::Time, d(Datum::Int8(v.parse().unwrap()))),
        "timestamp" | "timestamptz" => (
            if ty == "timestamp" {
                KeyType::Timestamp
            } else {
                KeyType::TimestampTz
            },
            d(Datum::Int8(infinite_or(v, i64::MIN, i64::MAX))),
        ),
        "interval" => {
            let f: Vec<i64> = v.split(' ').map(|x| x.parse().unwrap()).collect();
            (
                KeyType::Interval,
                d(Datum::Interval(f[0], f[1] as i32, f[2] as i32)),
            )
        }
        _ => panic!("unknown type {ty}"),
    }
}

fn encode(ty: KeyType, order: ColumnOrder, v: &Owned) -> Vec<u8> {
    let enc = KeyEncoder::new(vec![(ty, order)]);
    let datum = match v {
        Owned::Datum(d) => *d,
        Owned::Bytes(b) => Datum::Text(b),
        Owned::Decimal(neg, digits, exponent) => Datum::Decimal(Decimal::Finite {
            negative: *neg,
            digits,
            exponent: *exponent,
        }),
    };
    let key = enc.encode(&[datum]).unwrap().bytes;
    // tusk's 128-bit numeric form encodes alike.
    if let Owned::Decimal(neg, digits, exponent) = v {
        let s: String = digits.iter().map(|d| (b'0' + d) as char).collect();
        if let Ok(u) = s.parse::<i128>() {
            let scale = digits.len() as i32 - exponent;
            let u = if *neg { -u } else { u };
            let k128 = enc
                .encode(&[Datum::Numeric(u, scale as u16)])
                .unwrap()
                .bytes;
            assert_eq!(k128, key, "128-bit numeric {u} scale {scale}");
        }
    }
    key
}

#[test]
fn encoding_orders_as_postgres() {
    let text = include_str!("data/pg_order.tsv");
    let mut lines: Vec<(String, u32, Owned, KeyType)> = Vec::new();
    for line in text.lines() {
        let mut f = line.splitn(3, '\t');
        let (ty, rank, v) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap_or(""));
        let (kt, val) = parse(ty, v);
        lines.push((ty.to_string(), rank.parse().unwrap(), val, kt));
    }
    let mut types = 0;
    for group in lines.chunk_by(|a, b| a.0 == b.0) {
        types += 1;
        let kt = group[0].3;
        for order in [ColumnOrder::ASC, ColumnOrder::DESC] {
            let keys: Vec<Vec<u8>> = group.iter().map(|l| encode(kt, order, &l.2)).collect();
            for (i, w) in keys.windows(2).enumerate() {
                let want = group[i].1.cmp(&group[i + 1].1);
                let want = if order.desc { want.reverse() } else { want };
                assert_eq!(
                    w[0].cmp(&w[1]),
                    want,
                    "{} line {} vs {} ({:?})",
                    group[0].0,
                    i,
                    i + 1,
                    order
                );
            }
            let null = KeyEncoder::new(vec![(kt, order)])
                .encode(&[Datum::Null])
                .unwrap()
                .bytes;
            let ends = [keys.first().unwrap(), keys.last().unwrap()];
            for k in ends {
                let want = if order.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                assert_eq!(null.cmp(k), want, "NULL of {}", group[0].0);
            }
        }
    }
    assert_eq!(types, 14, "every type is covered");
}
