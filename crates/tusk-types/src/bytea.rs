//! `bytea`: strings of bytes, their text forms and the `encode` / `decode`
//! formats, as PostgreSQL 15's `varlena.c` and `encode.c` define them.
//!
//! ## Text input (`byteain`)
//!
//! - **Hex**: `\x` then pairs of hex digits (either case). Blanks (space,
//!   tab, newline, carriage return) may stand between pairs, not inside one.
//! - **Escape**: any other text. Bytes are taken as they are, except a
//!   backslash, which must start `\\` (one backslash) or `\ooo`, three octal
//!   digits of which the first is 0 to 3 (one byte).
//!
//! ## Text output (`byteaout`)
//!
//! `bytea_output = hex`, PostgreSQL's default: `\x` and two lowercase hex
//! digits per byte. `bytea_output = escape` ([`format_bytea_escape`]):
//! printable ASCII as it is, a backslash doubled, every other byte `\ooo`.
//!
//! ## `encode` / `decode` formats
//!
//! `hex` (no `\x`, blanks allowed between pairs on decode), `base64` (RFC
//! 2045: lines of at most 76 characters on encode; blanks ignored and `=`
//! padding checked on decode) and `escape` (NUL bytes, bytes with the high
//! bit set and backslashes escaped; decoding is the escape input form).

use crate::error::{sqlstate, Result, TypeError};

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// PostgreSQL's `byteain`: the bytes that text `s` denotes.
pub fn parse_bytea(s: &str) -> Result<Vec<u8>> {
    match s.strip_prefix("\\x") {
        Some(hex) => decode_hex(hex),
        None => decode_escape(s.as_bytes()),
    }
}

/// PostgreSQL's `byteaout` in the hex format: `\x0aff`.
pub fn format_bytea(b: &[u8]) -> String {
    let mut out = String::with_capacity(2 + 2 * b.len());
    out.push_str("\\x");
    push_hex(b, &mut out);
    out
}

/// PostgreSQL's `byteaout` in the escape format.
pub fn format_bytea_escape(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for &x in b {
        if x == b'\\' {
            out.push_str("\\\\");
        } else if !(0x20..=0x7e).contains(&x) {
            push_octal(x, &mut out);
        } else {
            out.push(x as char);
        }
    }
    out
}

/// `\ooo`: a byte as a backslash and three octal digits.
fn push_octal(x: u8, out: &mut String) {
    out.push('\\');
    out.push((b'0' + (x >> 6)) as char);
    out.push((b'0' + ((x >> 3) & 7)) as char);
    out.push((b'0' + (x & 7)) as char);
}

fn push_hex(b: &[u8], out: &mut String) {
    for &x in b {
        out.push(HEX_DIGITS[(x >> 4) as usize] as char);
        out.push(HEX_DIGITS[(x & 15) as usize] as char);
    }
}

/// `encode(b, 'hex')`.
pub fn encode_hex(b: &[u8]) -> String {
    let mut out = String::with_capacity(2 * b.len());
    push_hex(b, &mut out);
    out
}

fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | b'\r')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// `invalid hexadecimal digit: "c"` for the character that starts `rest`.
fn bad_hex_digit(rest: &str) -> TypeError {
    let c = rest.chars().next().unwrap_or('\0');
    TypeError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("invalid hexadecimal digit: \"{c}\""),
    )
}

/// `decode(s, 'hex')`, and the hex input form after its `\x`.
pub fn decode_hex(s: &str) -> Result<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    let mut i = 0;
    while i < b.len() {
        if is_blank(b[i]) {
            i += 1;
            continue;
        }
        let hi = hex_value(b[i]).ok_or_else(|| bad_hex_digit(&s[i..]))?;
        i += 1;
        if i >= b.len() {
            return Err(TypeError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "invalid hexadecimal data: odd number of digits",
            ));
        }
        let lo = hex_value(b[i]).ok_or_else(|| bad_hex_digit(&s[i..]))?;
        i += 1;
        out.push(hi << 4 | lo);
    }
    Ok(out)
}

/// The escape input form (`byteain` without `\x`, `decode(s, 'escape')`).
pub fn decode_escape(b: &[u8]) -> Result<Vec<u8>> {
    let octal = |c: u8, hi: u8| (b'0'..=hi).contains(&c);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if i + 3 < b.len()
            && octal(b[i + 1], b'3')
            && octal(b[i + 2], b'7')
            && octal(b[i + 3], b'7')
        {
            out.push((b[i + 1] - b'0') << 6 | (b[i + 2] - b'0') << 3 | (b[i + 3] - b'0'));
            i += 4;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            return Err(TypeError::new(
                sqlstate::INVALID_TEXT_REPRESENTATION,
                "invalid input syntax for type bytea",
            ));
        }
    }
    Ok(out)
}

/// `encode(b, 'escape')`: NUL and high-bit bytes as `\ooo`, a backslash
/// doubled.
pub fn encode_escape(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for &x in b {
        if x == 0 || x >= 0x80 {
            push_octal(x, &mut out);
        } else if x == b'\\' {
            out.push_str("\\\\");
        } else {
            out.push(x as char);
        }
    }
    out
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// Characters per line of `encode(b, 'base64')`.
const BASE64_LINE: usize = 76;

/// `encode(b, 'base64')`: a newline after every 76 characters.
pub fn encode_base64(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4 + b.len() / 57);
    let mut line = 0;
    for chunk in b.chunks(3) {
        let w = (chunk[0] as u32) << 16
            | (chunk.get(1).copied().unwrap_or(0) as u32) << 8
            | chunk.get(2).copied().unwrap_or(0) as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(BASE64[(w >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
        line += 4;
        // As PostgreSQL does, a full line ends as soon as it is written,
        // even after the last group.
        if line == BASE64_LINE && chunk.len() == 3 {
            out.push('\n');
            line = 0;
        }
    }
    out
}

/// `decode(s, 'base64')`, following PostgreSQL's `pg_base64_decode`:
/// blanks are skipped, the first `=` decides how many bytes the groups
/// from there on give, and the characters must make whole groups of four.
pub fn decode_base64(s: &str) -> Result<Vec<u8>> {
    let bad = |msg: String| TypeError::new(sqlstate::INVALID_PARAMETER_VALUE, msg);
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut pos = 0;
    // Bytes to drop from the last group, set by its padding.
    let mut end = 0;
    for (i, c) in s.char_indices() {
        if c.is_ascii() && is_blank(c as u8) {
            continue;
        }
        let v = if c == '=' {
            if end == 0 {
                if pos == 2 {
                    end = 1;
                } else if pos == 3 {
                    end = 2;
                } else {
                    return Err(bad("unexpected \"=\" while decoding base64 sequence".into()));
                }
            }
            0
        } else {
            let v = BASE64.iter().position(|&x| x as char == c);
            match v {
                Some(v) => v as u32,
                None => {
                    let what = &s[i..i + c.len_utf8()];
                    return Err(bad(format!(
                        "invalid symbol \"{what}\" found while decoding base64 sequence"
                    )));
                }
            }
        };
        acc = acc << 6 | v;
        pos += 1;
        if pos == 4 {
            out.push((acc >> 16) as u8);
            if end == 0 || end > 1 {
                out.push((acc >> 8) as u8);
            }
            if end == 0 {
                out.push(acc as u8);
            }
            acc = 0;
            pos = 0;
        }
    }
    if pos != 0 {
        return Err(bad("invalid base64 end sequence".into())
            .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_escape_input() {
        assert_eq!(parse_bytea("\\x0A ff").unwrap(), vec![10, 255]);
        assert_eq!(parse_bytea("a\\\\b\\101").unwrap(), b"a\\bA".to_vec());
        assert_eq!(parse_bytea("").unwrap(), Vec::<u8>::new());
        let odd = parse_bytea("\\x0").unwrap_err();
        assert_eq!(
            odd.message,
            "invalid hexadecimal data: odd number of digits"
        );
        assert_eq!(
            parse_bytea("\\xzz").unwrap_err().message,
            "invalid hexadecimal digit: \"z\""
        );
        assert_eq!(
            parse_bytea("\\q").unwrap_err().message,
            "invalid input syntax for type bytea"
        );
        // The first octal digit is at most 3.
        assert!(parse_bytea("\\400").is_err());
        assert_eq!(format_bytea(&[0, 1, 0xab]), "\\x0001ab");
        assert_eq!(format_bytea_escape(b"a\\\n~\x7f"), "a\\\\\\012~\\177");
    }

    #[test]
    fn base64_round_trip_and_errors() {
        for n in 0..100usize {
            let b: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let e = encode_base64(&b);
            assert!(e.lines().all(|l| l.len() <= BASE64_LINE));
            assert_eq!(decode_base64(&e).unwrap(), b, "{n} bytes");
        }
        assert_eq!(encode_base64(b"ab"), "YWI=");
        assert_eq!(decode_base64("YW\nI=").unwrap(), b"ab");
        assert!(decode_base64("YWI").is_err());
        assert!(decode_base64("Y===").is_err());
        // PostgreSQL's quirk: after padding, groups keep its byte count.
        assert_eq!(decode_base64("YWI=YWI=").unwrap(), b"abab");
        assert_eq!(encode_base64(&[b'a'; 57]).len(), 77);
        assert_eq!(encode_base64(&[b'a'; 58]).len(), 81);
    }

    #[test]
    fn escape_encoding() {
        assert_eq!(encode_escape(b"a\\\0\xff"), "a\\\\\\000\\377");
        assert_eq!(decode_escape(b"a\\\\\\000\\377").unwrap(), b"a\\\0\xff");
    }
}
