//! `uuid`: 128-bit identifiers, held as a `u128` whose big-endian bytes are
//! the value's 16 bytes, so that integer order is PostgreSQL's byte order.
//!
//! ## Text input (`uuid_in`)
//!
//! 32 hex digits (either case), optionally inside `{` `}`, with an optional
//! hyphen after any group of four digits except the last. Nothing else is
//! accepted, not even blanks: `invalid input syntax for type uuid`.
//!
//! ## Text output (`uuid_out`)
//!
//! Lowercase, grouped 8-4-4-4-12.

use crate::error::{Result, TypeError};

/// PostgreSQL's `uuid_in`.
pub fn parse_uuid(s: &str) -> Result<u128> {
    let bad = || TypeError::invalid_input("uuid", s);
    let b = s.as_bytes();
    let braces = b.first() == Some(&b'{');
    let mut i = usize::from(braces);
    let mut v: u128 = 0;
    for byte in 0..16 {
        for _ in 0..2 {
            let d = b
                .get(i)
                .and_then(|&c| (c as char).to_digit(16))
                .ok_or_else(bad)?;
            v = v << 4 | d as u128;
            i += 1;
        }
        if byte % 2 == 1 && byte < 15 && b.get(i) == Some(&b'-') {
            i += 1;
        }
    }
    if braces {
        if b.get(i) != Some(&b'}') {
            return Err(bad());
        }
        i += 1;
    }
    if i != b.len() {
        return Err(bad());
    }
    Ok(v)
}

/// PostgreSQL's `uuid_out`.
pub fn format_uuid(v: u128) -> String {
    let hex = format!("{v:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A version 4 (random) uuid from 128 random bits, as `gen_random_uuid`
/// makes it: the version nibble 4 and the RFC 4122 variant bits `10`.
pub fn random_v4(bits: u128) -> u128 {
    let version_mask: u128 = 0xf << 76;
    let variant_mask: u128 = 0x3 << 62;
    (bits & !version_mask & !variant_mask) | 0x4 << 76 | 0x2 << 62
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_forms() {
        let want = 0xa0eebc999c0b4ef8bb6d6bb9bd380a11u128;
        for s in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(parse_uuid(s).unwrap(), want, "{s}");
        }
        for s in [
            "",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "a0e-ebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ] {
            assert!(parse_uuid(s).is_err(), "{s}");
        }
        assert_eq!(format_uuid(want), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    }

    #[test]
    fn version_4_bits() {
        let u = format_uuid(random_v4(u128::MAX));
        assert_eq!(&u[14..15], "4");
        assert_eq!(&u[19..20], "b");
        let u = format_uuid(random_v4(0));
        assert_eq!(u, "00000000-0000-4000-8000-000000000000");
    }
}
