//! Text entering the engine must be valid UTF-8 without NUL bytes, as
//! PostgreSQL requires of every string in a UTF-8 database. Literals, COPY
//! data and values received on the wire go through [`check_utf8`] where they
//! enter; everything past that point may assume valid strings (the vectors'
//! `get_str` does).
//!
//! The error is PostgreSQL's: `invalid byte sequence for encoding "UTF8":
//! 0xc3 0x28` (22021), naming the bytes of the offending character as far
//! as its first byte announces its length (at most what remains of the
//! input), as `report_invalid_encoding` does.

use crate::error::{sqlstate, ExecError, Result};

/// The length PostgreSQL's `pg_utf_mblen` gives a character starting with `b`.
fn mblen(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xe0 == 0xc0 {
        2
    } else if b & 0xf0 == 0xe0 {
        3
    } else if b & 0xf8 == 0xf0 {
        4
    } else {
        1
    }
}

/// `invalid byte sequence for encoding "UTF8": ...` for the character at
/// `bytes[at..]`.
pub fn invalid_utf8(bytes: &[u8], at: usize) -> ExecError {
    let len = mblen(bytes[at]).min(bytes.len() - at);
    let shown: Vec<String> = bytes[at..at + len]
        .iter()
        .map(|b| format!("0x{b:02x}"))
        .collect();
    ExecError::coded(
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
        format!(
            "invalid byte sequence for encoding \"UTF8\": {}",
            shown.join(" ")
        ),
    )
}

/// `bytes` as a string, or PostgreSQL's error for its first invalid
/// character (a NUL byte is invalid too).
pub fn check_utf8(bytes: &[u8]) -> Result<&str> {
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let prefix = &bytes[..e.valid_up_to()];
            if let Some(nul) = prefix.iter().position(|&b| b == 0) {
                return Err(invalid_utf8(bytes, nul));
            }
            return Err(invalid_utf8(bytes, e.valid_up_to()));
        }
    };
    match valid.bytes().position(|b| b == 0) {
        Some(nul) => Err(invalid_utf8(bytes, nul)),
        None => Ok(valid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(b: &[u8]) -> String {
        let e = check_utf8(b).unwrap_err();
        assert_eq!(e.code, "22021");
        e.message
    }

    #[test]
    fn messages_match_postgres() {
        // PostgreSQL 15: select convert_from('\x...'::bytea, 'UTF8');
        let m = |s: &str| format!("invalid byte sequence for encoding \"UTF8\": {s}");
        assert_eq!(msg(b"\xc3\x28"), m("0xc3 0x28"));
        assert_eq!(msg(b"\xe2\x82"), m("0xe2 0x82"));
        assert_eq!(msg(b"\xf0\x90\x8c"), m("0xf0 0x90 0x8c"));
        assert_eq!(msg(b"a\xffb"), m("0xff"));
        assert_eq!(msg(b"a\x00"), m("0x00"));
        assert_eq!(msg(b"\xed\xa0\x80"), m("0xed 0xa0 0x80"));
        assert_eq!(msg(b"\x00\xff"), m("0x00"));
        assert_eq!(
            check_utf8("ñandú \u{10348}".as_bytes()).unwrap(),
            "ñandú \u{10348}"
        );
        assert_eq!(check_utf8(b"\xed\x9f\xbf").unwrap(), "\u{d7ff}");
    }
}
