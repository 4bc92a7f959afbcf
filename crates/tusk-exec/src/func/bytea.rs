//! Functions over `bytea` and `uuid` (PostgreSQL 15's `varlena.c`,
//! `encode.c` and `uuid.c`).
//!
//! Positions and lengths count bytes. `octet_length`, `bit_length` and
//! `md5` share their kernels with text (see [`super::string`]), since they
//! read bytes either way; the rest are here:
//!
//! - `length(bytea)`, `b1 || b2` (`byteacat`), `substring` / `substr`,
//!   `position(b1 IN b2)`;
//! - `get_byte`, `set_byte` (`index N out of valid range, 0..M`, 2202E);
//! - `encode(bytea, format)`, `decode(text, format)` with the formats
//!   `hex`, `base64` and `escape` (tusk-types' `bytea` module);
//! - `convert_to(text, encoding)` and `convert_from(bytea, encoding)` for
//!   UTF-8, the only encoding tusk stores text in (a byte sequence that is
//!   not UTF-8 is rejected as PostgreSQL rejects it);
//! - `sha224`, `sha256`, `sha384`, `sha512` (the `sha2` module);
//! - `gen_random_uuid()`: a version 4 uuid from the kernel's random source.

use super::string::{
    bytes_arg, int_arg, int_result, strings_result, substring_span, text_arg, text_result,
};
use super::{Call, Func};
use crate::error::{sqlstate, ExecError, Result};
use crate::vector::{Data, Vector};
use tusk_types::bytea as fmt;

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    let b = |k: usize, i: usize| bytes_arg(c, k, i);
    let int = |k: usize, i: usize| int_arg(c, k, i);
    match f {
        Func::ByteaLength => int_result(c, |i| Ok(b(0, i).len() as i32)),
        Func::ByteaCat => bytea_result(c, |i, o| {
            o.extend_from_slice(b(0, i));
            o.extend_from_slice(b(1, i));
            Ok(())
        }),
        Func::ByteaSubstr => bytea_result(c, |i, o| {
            let count = (c.args.len() == 3).then(|| int(2, i));
            let s = b(0, i);
            if let Some((skip, take)) = substring_span(int(1, i), count)? {
                let rest = s.get(skip..).unwrap_or_default();
                o.extend_from_slice(&rest[..take.map_or(rest.len(), |t| t.min(rest.len()))]);
            }
            Ok(())
        }),
        Func::BytePosition => int_result(c, |i| Ok(position(b(0, i), b(1, i)))),
        Func::GetByte => int_result(c, |i| {
            let s = b(0, i);
            Ok(s[byte_index(int(1, i), s.len())?] as i32)
        }),
        Func::SetByte => bytea_result(c, |i, o| {
            let s = b(0, i);
            let at = byte_index(int(1, i), s.len())?;
            o.extend_from_slice(s);
            o[at] = int(2, i) as u8;
            Ok(())
        }),
        Func::Encode => text_result(c, |i, o| {
            let s = b(0, i);
            o.push_str(&match format_of(text_arg(c, 1, i))? {
                Format::Hex => fmt::encode_hex(s),
                Format::Base64 => fmt::encode_base64(s),
                Format::Escape => fmt::encode_escape(s),
            });
            Ok(())
        }),
        Func::Decode => bytea_result(c, |i, o| {
            let s = text_arg(c, 0, i);
            o.extend(match format_of(text_arg(c, 1, i))? {
                Format::Hex => fmt::decode_hex(s)?,
                Format::Base64 => fmt::decode_base64(s)?,
                Format::Escape => fmt::decode_escape(s.as_bytes())?,
            });
            Ok(())
        }),
        Func::ConvertTo => bytea_result(c, |i, o| {
            utf8_encoding(text_arg(c, 1, i), "destination")?;
            o.extend_from_slice(b(0, i));
            Ok(())
        }),
        Func::ConvertFrom => text_result(c, |i, o| {
            utf8_encoding(text_arg(c, 1, i), "source")?;
            o.push_str(valid_utf8(b(0, i))?);
            Ok(())
        }),
        Func::Sha224 | Func::Sha256 | Func::Sha384 | Func::Sha512 => {
            let bits = match f {
                Func::Sha224 => 224,
                Func::Sha256 => 256,
                Func::Sha384 => 384,
                _ => 512,
            };
            bytea_result(c, |i, o| {
                o.extend(super::sha2::digest(bits, b(0, i)));
                Ok(())
            })
        }
        Func::GenRandomUuid => {
            let mut out = Vec::with_capacity(c.n);
            let mut bits = [0u8; 16];
            for i in 0..c.n {
                if c.computes(i) {
                    fill_random(&mut bits)?;
                }
                out.push(tusk_types::uuid::random_v4(u128::from_be_bytes(bits)));
            }
            Ok(Vector::new(Data::Uuid(out), None))
        }
        _ => Err(super::math::bad_args(f)),
    }
}

/// 1-based position of `needle` in `hay`, 0 when absent (an empty needle
/// is at 1).
fn position(hay: &[u8], needle: &[u8]) -> i32 {
    if needle.is_empty() {
        return 1;
    }
    hay.windows(needle.len())
        .position(|w| w == needle)
        .map_or(0, |p| p as i32 + 1)
}

/// Checks a `get_byte` / `set_byte` index against a value of `len` bytes.
fn byte_index(n: i64, len: usize) -> Result<usize> {
    usize::try_from(n).ok().filter(|&n| n < len).ok_or_else(|| {
        ExecError::coded(
            sqlstate::ARRAY_SUBSCRIPT_ERROR,
            format!("index {n} out of valid range, 0..{}", len as i64 - 1),
        )
    })
}

enum Format {
    Hex,
    Base64,
    Escape,
}

/// An `encode` / `decode` format name (case-insensitive, as PostgreSQL's
/// `pg_strcasecmp`).
fn format_of(name: &str) -> Result<Format> {
    match name.to_ascii_lowercase().as_str() {
        "hex" => Ok(Format::Hex),
        "base64" => Ok(Format::Base64),
        "escape" => Ok(Format::Escape),
        _ => Err(ExecError::coded(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("unrecognized encoding: \"{name}\""),
        )),
    }
}

/// Checks that an encoding name means UTF-8: PostgreSQL's
/// `pg_char_to_encoding` ignores case and non-alphanumeric characters.
fn utf8_encoding(name: &str, which: &str) -> Result<()> {
    let key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|ch| ch.to_ascii_lowercase())
        .collect();
    if key == "utf8" || key == "unicode" {
        return Ok(());
    }
    Err(ExecError::coded(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("invalid {which} encoding name \"{name}\""),
    ))
}

/// `b` as UTF-8 text, or PostgreSQL's `invalid byte sequence` error. As
/// `report_invalid_encoding` does, it shows the bytes of the bad character
/// as long as its first byte says it is.
fn valid_utf8(b: &[u8]) -> Result<&str> {
    let bad_at = match std::str::from_utf8(b) {
        Ok(s) => match s.find('\0') {
            None => return Ok(s),
            Some(at) => at,
        },
        Err(e) => e.valid_up_to(),
    };
    let len = match b[bad_at] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    let shown: Vec<String> = b[bad_at..(bad_at + len).min(b.len())]
        .iter()
        .map(|x| format!("0x{x:02x}"))
        .collect();
    Err(ExecError::coded(
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
        format!(
            "invalid byte sequence for encoding \"UTF8\": {}",
            shown.join(" ")
        ),
    ))
}

fn fill_random(buf: &mut [u8]) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                return Err(ExecError::new(format!(
                    "could not generate random values: {e}"
                )))
            }
        }
    }
    Ok(())
}

/// Builds a `bytea` result: `f` writes row `i`'s bytes into the buffer.
fn bytea_result(c: &Call, f: impl FnMut(usize, &mut Vec<u8>) -> Result<()>) -> Result<Vector> {
    strings_result(c, Data::Bytea, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_indexes() {
        assert_eq!(position(b"abcabc", b"ca"), 3);
        assert_eq!(position(b"abc", b""), 1);
        assert_eq!(position(b"", b"a"), 0);
        assert_eq!(byte_index(2, 3).unwrap(), 2);
        assert_eq!(
            byte_index(3, 3).unwrap_err().to_string(),
            "index 3 out of valid range, 0..2"
        );
        assert_eq!(
            byte_index(0, 0).unwrap_err().to_string(),
            "index 0 out of valid range, 0..-1"
        );
    }

    #[test]
    fn utf8_checks() {
        assert!(utf8_encoding("UTF-8", "source").is_ok());
        assert!(utf8_encoding("latin1", "source").is_err());
        assert_eq!(valid_utf8(b"caf\xc3\xa9").unwrap(), "caf\u{e9}");
        assert_eq!(
            valid_utf8(b"a\xffb").unwrap_err().to_string(),
            "invalid byte sequence for encoding \"UTF8\": 0xff"
        );
        assert_eq!(
            valid_utf8(b"\xc3(").unwrap_err().to_string(),
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
        );
        assert_eq!(
            valid_utf8(b"a\0").unwrap_err().to_string(),
            "invalid byte sequence for encoding \"UTF8\": 0x00"
        );
    }
}
