//! The role file: who may log in, with SCRAM-SHA-256 verifiers instead of
//! passwords.
//!
//! `DATADIR/pg_authid` holds one line per role:
//!
//! ```text
//! name <TAB> login|nologin <TAB> SCRAM-SHA-256$4096:salt$StoredKey:ServerKey <TAB> oid
//! ```
//!
//! The third field is empty for a role without a password. The fourth is
//! the role's oid (`pg_roles.oid`), from 16384 up; a file written before
//! roles had oids gets them at load, in name order. The verifier is
//! PostgreSQL's own format (`pg_authid.rolpassword`), base64 fields, 4096
//! iterations, 16 random bytes of salt: from it the server can check a
//! client's SCRAM proof, but nobody can recover the password, and the file
//! can be copied between tusk and PostgreSQL. A clear-text password given to
//! CREATE/ALTER ROLE is turned into a verifier at once and never stored; a
//! password that already is a verifier (what psql's `\password` sends) is
//! stored as given.
//!
//! Changes rewrite the whole file: a temporary file, fsync, rename, fsync of
//! the directory, so a crash leaves the old or the new file, never a torn
//! one. The file is not WAL-logged (roles are not part of transactions
//! yet) and is created with mode 0600. Role statements change it through
//! [`RoleStore`], which the server and the shell give every session.

use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramSecret};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use tusk_sql::SqlError;
use tusk_sql::{RoleChange, RoleStore};

/// Iterations of new verifiers (PostgreSQL's `scram_iterations` default).
pub const SCRAM_ITERATIONS: usize = 4096;
const FILE_NAME: &str = "pg_authid";
const PREFIX: &str = "SCRAM-SHA-256$";

/// A role as the authenticator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub login: bool,
    /// PostgreSQL's SCRAM-SHA-256 verifier, if the role has a password.
    pub verifier: Option<String>,
    /// `pg_roles.oid`.
    pub oid: u32,
}

/// The first oid a role gets (PostgreSQL's first user object oid).
const FIRST_ROLE_OID: u32 = 16384;

/// The roles of a data directory.
#[derive(Debug)]
pub struct RoleFile {
    path: PathBuf,
    roles: RwLock<BTreeMap<String, Role>>,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> SqlError {
    SqlError::coded(
        "58030",
        format!("could not {what} file \"{}\": {e}", path.display()),
    )
}

impl RoleFile {
    /// Loads `DATADIR/pg_authid` (no file: no roles).
    pub fn open(data_dir: &Path) -> Result<RoleFile, SqlError> {
        let path = data_dir.join(FILE_NAME);
        let mut roles = BTreeMap::new();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                for (i, line) in text.lines().enumerate() {
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let mut f = line.split('\t');
                    let invalid = || {
                        SqlError::new(format!(
                            "invalid line {} in role file \"{}\"",
                            i + 1,
                            path.display()
                        ))
                    };
                    let (Some(name), Some(login), Some(verifier), oid, None) =
                        (f.next(), f.next(), f.next(), f.next(), f.next())
                    else {
                        return Err(invalid());
                    };
                    let oid = match oid {
                        Some(o) => o.parse().map_err(|_| invalid())?,
                        None => 0,
                    };
                    roles.insert(
                        name.to_string(),
                        Role {
                            login: login == "login",
                            verifier: (!verifier.is_empty()).then(|| verifier.to_string()),
                            oid,
                        },
                    );
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("read", &path, e)),
        }
        let first = next_oid(&roles);
        for (oid, r) in (first..).zip(roles.values_mut().filter(|r| r.oid == 0)) {
            r.oid = oid;
        }
        Ok(RoleFile {
            path,
            roles: RwLock::new(roles),
        })
    }

    pub fn get(&self, name: &str) -> Option<Role> {
        self.roles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    fn save(&self, roles: &BTreeMap<String, Role>) -> Result<(), SqlError> {
        let mut text = String::from(
            "# tusk roles: name, login|nologin, SCRAM-SHA-256 verifier (never a password)\n",
        );
        for (name, r) in roles {
            text.push_str(&format!(
                "{name}\t{}\t{}\t{}\n",
                if r.login { "login" } else { "nologin" },
                r.verifier.as_deref().unwrap_or(""),
                r.oid
            ));
        }
        let tmp = self.path.with_extension("tmp");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| io_error("create", &tmp, e))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| io_error("write", &tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| io_error("rename", &tmp, e))?;
        if let Some(dir) = self.path.parent() {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io_error("fsync", dir, e))?;
        }
        Ok(())
    }

    /// Applies `f` to the roles and writes the file; nothing changes if
    /// `f` or the write fails.
    fn update<T>(
        &self,
        f: impl FnOnce(&mut BTreeMap<String, Role>) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let mut roles = self.roles.write().unwrap_or_else(|e| e.into_inner());
        let mut next = roles.clone();
        let r = f(&mut next)?;
        self.save(&next)?;
        *roles = next;
        Ok(r)
    }
}

/// The oid after every role's.
fn next_oid(roles: &BTreeMap<String, Role>) -> u32 {
    roles
        .values()
        .map(|r| r.oid + 1)
        .max()
        .unwrap_or(FIRST_ROLE_OID)
        .max(FIRST_ROLE_OID)
}

fn apply(role: &mut Role, change: &RoleChange) -> Result<(), SqlError> {
    if let Some(login) = change.login {
        role.login = login;
    }
    if let Some(p) = &change.password {
        role.verifier = p.as_deref().map(verifier_for).transpose()?;
    }
    Ok(())
}

impl RoleStore for RoleFile {
    fn list(&self) -> Vec<tusk_sql::RoleInfo> {
        self.roles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(name, r)| tusk_sql::RoleInfo {
                name: name.clone(),
                oid: r.oid,
                login: r.login,
                password: r.verifier.is_some(),
            })
            .collect()
    }

    fn create(&self, name: &str, change: &RoleChange) -> Result<(), SqlError> {
        self.update(|roles| {
            if roles.contains_key(name) {
                return Err(SqlError::coded(
                    "42710",
                    format!("role \"{name}\" already exists"),
                ));
            }
            let mut role = Role {
                login: false,
                verifier: None,
                oid: next_oid(roles),
            };
            apply(&mut role, change)?;
            roles.insert(name.to_string(), role);
            Ok(())
        })
    }

    fn alter(&self, name: &str, change: &RoleChange) -> Result<(), SqlError> {
        self.update(|roles| {
            let role = roles.get_mut(name).ok_or_else(|| {
                SqlError::coded("42704", format!("role \"{name}\" does not exist"))
            })?;
            apply(role, change)
        })
    }

    fn drop_role(&self, name: &str) -> Result<bool, SqlError> {
        if self.get(name).is_none() {
            return Ok(false);
        }
        self.update(|roles| Ok(roles.remove(name).is_some()))
    }
}

/// The verifier to store for `password`: a new one for a clear-text
/// password, the password itself when it already is a verifier.
fn verifier_for(password: &str) -> Result<String, SqlError> {
    if password.starts_with(PREFIX) {
        parse_verifier(password)
            .ok_or_else(|| SqlError::coded("22023", "invalid SCRAM-SHA-256 verifier"))?;
        return Ok(password.to_string());
    }
    if password.len() == 35 && password.starts_with("md5") {
        return Err(
            SqlError::coded("0A000", "MD5 password hashes are not supported")
                .with_hint("Give the password in clear text or as a SCRAM-SHA-256 verifier."),
        );
    }
    let salt = crate::random::bytes::<16>();
    Ok(make_verifier(password, &salt, SCRAM_ITERATIONS))
}

/// PostgreSQL's verifier for `password` with `salt`.
pub fn make_verifier(password: &str, salt: &[u8], iterations: usize) -> String {
    let salted = gen_salted_password(password, salt, iterations);
    let ScramSecret::Verifier {
        stored_key,
        server_key,
        ..
    } = ScramSecret::verifier_from_salted_password(salt.to_vec(), salted, iterations)
    else {
        unreachable!("verifier_from_salted_password returns a verifier")
    };
    format!(
        "{PREFIX}{iterations}:{}${}:{}",
        base64::encode(salt),
        base64::encode(&stored_key),
        base64::encode(&server_key)
    )
}

/// The secret SCRAM authentication checks against.
pub fn parse_verifier(v: &str) -> Option<ScramSecret> {
    let rest = v.strip_prefix(PREFIX)?;
    let (iter_salt, keys) = rest.split_once('$')?;
    let (iterations, salt) = iter_salt.split_once(':')?;
    let (stored, server) = keys.split_once(':')?;
    let iterations: usize = iterations.parse().ok().filter(|&n| n > 0)?;
    let (salt, stored_key, server_key) = (
        base64::decode(salt)?,
        base64::decode(stored)?,
        base64::decode(server)?,
    );
    (stored_key.len() == 32 && server_key.len() == 32).then_some(ScramSecret::Verifier {
        salt,
        iterations,
        stored_key,
        server_key,
    })
}

/// Standard base64 with padding (RFC 4648), as in PostgreSQL's verifiers.
mod base64 {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn encode(b: &[u8]) -> String {
        let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
        for chunk in b.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |a, (i, &x)| a | (x as u32) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    pub fn decode(s: &str) -> Option<Vec<u8>> {
        let s = s.as_bytes();
        if !s.len().is_multiple_of(4) {
            return None;
        }
        let mut out = Vec::with_capacity(s.len() / 4 * 3);
        for (ci, chunk) in s.chunks(4).enumerate() {
            let last = ci == s.len() / 4 - 1;
            let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
            if pad > 2 || (pad > 0 && !last) {
                return None;
            }
            let mut n = 0u32;
            for &c in &chunk[..4 - pad] {
                let v = ALPHABET.iter().position(|&a| a == c)? as u32;
                n = n << 6 | v;
            }
            n <<= 6 * pad as u32;
            for i in 0..3 - pad {
                out.push((n >> (16 - 8 * i)) as u8);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for v in [&b""[..], b"f", b"fo", b"foo", b"foob", b"fooba", b"foobar"] {
            let e = base64::encode(v);
            assert_eq!(base64::decode(&e).unwrap(), v);
        }
        assert_eq!(base64::encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64::encode(b"fo"), "Zm8=");
        assert!(base64::decode("Zm8").is_none());
        assert!(base64::decode("Zm=8").is_none());
    }

    #[test]
    fn postgres_verifier() {
        // What PostgreSQL 15 stored for `CREATE ROLE vtest PASSWORD 'secret'`
        // (pg_authid.rolpassword); the same salt must give the same keys.
        let pg = "SCRAM-SHA-256$4096:O27y8wXFLqRCegly/ZmQog==$4XuRj8Su+2kQr19YYwH2Uafv5yO4Q+YNTyQRK5601qI=:agZKD/F5fF5LS2jEyDtGHxtPOpKEkWwz3uhBZ+ohPNo=";
        let salt = base64::decode("O27y8wXFLqRCegly/ZmQog==").unwrap();
        assert_eq!(make_verifier("secret", &salt, 4096), pg);
        assert!(parse_verifier(pg).is_some());
        assert_eq!(verifier_for(pg).unwrap(), pg);
        assert!(parse_verifier("SCRAM-SHA-256$4096:abc$x:y").is_none());
        assert!(verifier_for("SCRAM-SHA-256$junk").is_err());
        assert!(verifier_for("md5aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").is_err());
    }

    #[test]
    fn the_file_keeps_verifiers_only() {
        let dir = tempfile::tempdir().unwrap();
        let f = RoleFile::open(dir.path()).unwrap();
        let with = |login, password: Option<&str>| RoleChange {
            login,
            password: Some(password.map(String::from)),
        };
        f.create("alice", &with(Some(true), Some("wonderland")))
            .unwrap();
        assert_eq!(
            f.create("alice", &with(None, None)).unwrap_err().code,
            "42710"
        );
        f.create("bob", &RoleChange::default()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("pg_authid")).unwrap();
        assert!(!text.contains("wonderland"));
        assert!(text.contains("alice\tlogin\tSCRAM-SHA-256$4096:"));
        assert!(text.contains("bob\tnologin\t\t16385\n"), "{text}");
        assert_eq!(f.get("alice").unwrap().oid, 16384);
        let again = RoleFile::open(dir.path()).unwrap();
        assert_eq!(again.get("alice"), f.get("alice"));
        f.alter("bob", &with(Some(true), Some("x"))).unwrap();
        assert!(f.get("bob").unwrap().verifier.is_some());
        assert_eq!(
            f.alter("carol", &RoleChange::default()).unwrap_err().code,
            "42704"
        );
        assert!(f.drop_role("bob").unwrap());
        assert!(!f.drop_role("bob").unwrap());
        assert!(RoleFile::open(dir.path()).unwrap().get("bob").is_none());
    }
}
