//! The server's settings, from `tusk.conf` and the command line.
//!
//! | setting | default | |
//! |---|---|---|
//! | `listen_addresses` | `localhost` | comma-separated host names or addresses; `*` is every IPv4 and IPv6 address; empty: no TCP |
//! | `port` | 5432 | TCP port, and the number in the Unix socket's name |
//! | `unix_socket_directories` | `/tmp` | comma-separated directories for a Unix-domain socket `.s.PGSQL.<port>` each (relative ones in the data directory); empty: none |
//! | `unix_socket_permissions` | `0700` | access mode of the socket files (octal): by default only the server's own OS user (and root) may connect through them |
//! | `max_connections` | 100 | sessions at once; one more gets `sorry, too many clients already` (53300) |
//! | `auth_method` | `trust` | `trust` (no password) or `scram-sha-256` (a password, checked against the role's SCRAM verifier) |
//! | `tusk.session_pool_seats` | 0 | 0: each session keeps a thread of its own; n: idle sessions wait in the session pool and at most n threads serve their next messages at once (see `pool`) |
//! | `tusk.session_scheduling` | `batch` | the kernel scheduling policy of session threads: `batch` (`SCHED_BATCH`: no wakeup preemption) or `normal` (see `sched`) |
//! | `ssl` | `off` | `on`: TLS with `ssl_cert_file` and `ssl_key_file` (PEM; relative paths are in the data directory) |
//!
//! As in a fresh PostgreSQL cluster, the default listens on loopback and on
//! a Unix socket, and trusts both. tusk refuses to start when `trust` would
//! apply to an address other hosts can reach. Unlike PostgreSQL's (`0777`,
//! left to `pg_hba.conf`), the socket's default mode keeps other OS users
//! out: with `trust`, whoever can open the socket is in. To let them in, set
//! `unix_socket_permissions = 0777` (best with `auth_method =
//! scram-sha-256`, which applies to socket connections as to TCP ones).

use crate::sched::SessionScheduling;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    Trust,
    ScramSha256,
}

/// Certificate and key files for TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub listen_addresses: Vec<String>,
    pub port: u16,
    pub unix_socket_directories: Vec<PathBuf>,
    /// Mode of the socket files.
    pub unix_socket_permissions: u32,
    pub max_connections: usize,
    /// Seats of the session pool; 0: no pool.
    pub session_pool_seats: usize,
    /// The scheduling policy of session threads.
    pub session_scheduling: SessionScheduling,
    pub auth: AuthMethod,
    pub tls: Option<TlsFiles>,
}

/// Command-line settings, which win over `tusk.conf`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub port: Option<u16>,
    pub listen_addresses: Option<String>,
}

fn invalid(name: &str, v: &str) -> String {
    format!("invalid value for parameter \"{name}\": \"{v}\"")
}

impl ServerConfig {
    /// Reads the settings from `tusk.conf`'s values (`settings`, names in
    /// lower case), with relative file names taken in `data_dir`.
    pub fn from_settings(
        settings: &BTreeMap<String, String>,
        data_dir: &Path,
        overrides: &Overrides,
    ) -> Result<ServerConfig, String> {
        let get = |k: &str| settings.get(k).map(|v| v.trim().to_string());
        let listen = overrides
            .listen_addresses
            .clone()
            .or_else(|| get("listen_addresses"))
            .unwrap_or_else(|| "localhost".into());
        let listen_addresses: Vec<String> = listen
            .split(',')
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .collect();
        let in_data_dir = |f: &str| {
            let f = PathBuf::from(f);
            if f.is_relative() {
                data_dir.join(f)
            } else {
                f
            }
        };
        let unix_socket_directories: Vec<PathBuf> = get("unix_socket_directories")
            .unwrap_or_else(|| "/tmp".into())
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(in_data_dir)
            .collect();
        if listen_addresses.is_empty() && unix_socket_directories.is_empty() {
            return Err(
                "listen_addresses and unix_socket_directories are empty: tusk serve has nowhere to listen"
                    .to_string(),
            );
        }
        let unix_socket_permissions = match get("unix_socket_permissions") {
            Some(v) => u32::from_str_radix(&v, 8)
                .ok()
                .filter(|&m| m <= 0o777)
                .ok_or_else(|| invalid("unix_socket_permissions", &v))?,
            None => 0o700,
        };
        let port = match overrides.port {
            Some(p) => p,
            None => match get("port") {
                Some(v) => v
                    .parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| invalid("port", &v))?,
                None => 5432,
            },
        };
        let max_connections = match get("max_connections") {
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|&n| (1..=262_143).contains(&n))
                .ok_or_else(|| invalid("max_connections", &v))?,
            None => 100,
        };
        let session_pool_seats = match get("tusk.session_pool_seats") {
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|&n| n <= 1024)
                .ok_or_else(|| invalid("tusk.session_pool_seats", &v))?,
            None => 0,
        };
        let session_scheduling = match get("tusk.session_scheduling") {
            Some(v) => SessionScheduling::parse(&v).ok_or_else(|| {
                format!(
                    "{}\nHINT: Available values: batch, normal.",
                    invalid("tusk.session_scheduling", &v)
                )
            })?,
            None => SessionScheduling::Batch,
        };
        let auth = match get("auth_method").as_deref() {
            None | Some("trust") => AuthMethod::Trust,
            Some("scram-sha-256") => AuthMethod::ScramSha256,
            Some(v) => {
                return Err(format!(
                    "{}\nHINT: Available values: trust, scram-sha-256.",
                    invalid("auth_method", v)
                ))
            }
        };
        let ssl = match get("ssl")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("off" | "false" | "no" | "0") => false,
            Some("on" | "true" | "yes" | "1") => true,
            Some(_) => return Err(invalid("ssl", &get("ssl").unwrap_or_default())),
        };
        let file =
            |k: &str, default: &str| in_data_dir(&get(k).unwrap_or_else(|| default.to_string()));
        let tls = ssl.then(|| TlsFiles {
            cert: file("ssl_cert_file", "server.crt"),
            key: file("ssl_key_file", "server.key"),
        });
        Ok(ServerConfig {
            listen_addresses,
            port,
            unix_socket_directories,
            unix_socket_permissions,
            max_connections,
            session_pool_seats,
            session_scheduling,
            auth,
            tls,
        })
    }

    /// The socket addresses to listen on.
    pub fn addresses(&self) -> Result<Vec<SocketAddr>, String> {
        let mut out: Vec<SocketAddr> = Vec::new();
        for a in &self.listen_addresses {
            let resolved: Vec<SocketAddr> = if a == "*" {
                vec![
                    SocketAddr::new(IpAddr::from([0u8; 4]), self.port),
                    SocketAddr::new(IpAddr::from([0u16; 8]), self.port),
                ]
            } else if let Ok(ip) = a.parse::<IpAddr>() {
                vec![SocketAddr::new(ip, self.port)]
            } else {
                (a.as_str(), self.port)
                    .to_socket_addrs()
                    .map_err(|e| format!("could not translate host name \"{a}\" to address: {e}"))?
                    .collect()
            };
            for r in resolved {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        Ok(out)
    }

    /// Refuses `trust` on an address other hosts can reach.
    pub fn check_security(&self, addrs: &[SocketAddr]) -> Result<(), String> {
        if self.auth != AuthMethod::Trust {
            return Ok(());
        }
        if let Some(a) = addrs.iter().find(|a| !a.ip().is_loopback()) {
            return Err(format!(
                "refusing to listen on {} with auth_method = trust: anyone who can reach it could connect without a password\n\
                 HINT: Set auth_method = scram-sha-256 in tusk.conf and give roles passwords (CREATE ROLE name LOGIN PASSWORD '...'), or listen on localhost only.",
                a.ip()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_listen_on_loopback_with_trust() {
        let c = ServerConfig::from_settings(&conf(&[]), Path::new("/d"), &Overrides::default())
            .unwrap();
        assert_eq!(c.port, 5432);
        assert_eq!(c.max_connections, 100);
        assert_eq!(c.auth, AuthMethod::Trust);
        assert_eq!(c.unix_socket_directories, [PathBuf::from("/tmp")]);
        assert_eq!(c.unix_socket_permissions, 0o700);
        let addrs = c.addresses().unwrap();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()));
        c.check_security(&addrs).unwrap();
    }

    #[test]
    fn trust_on_a_public_address_is_refused() {
        let c = ServerConfig::from_settings(
            &conf(&[("listen_addresses", "*"), ("port", "6000")]),
            Path::new("/d"),
            &Overrides::default(),
        )
        .unwrap();
        let addrs = c.addresses().unwrap();
        assert!(c
            .check_security(&addrs)
            .unwrap_err()
            .starts_with("refusing to listen on 0.0.0.0 with auth_method = trust"));
        let c = ServerConfig::from_settings(
            &conf(&[("listen_addresses", "*"), ("auth_method", "scram-sha-256")]),
            Path::new("/d"),
            &Overrides::default(),
        )
        .unwrap();
        c.check_security(&c.addresses().unwrap()).unwrap();
    }

    #[test]
    fn overrides_and_files() {
        let c = ServerConfig::from_settings(
            &conf(&[("port", "6000"), ("ssl", "on"), ("ssl_key_file", "/k.pem")]),
            Path::new("/d"),
            &Overrides {
                port: Some(7000),
                listen_addresses: Some("127.0.0.1".into()),
            },
        )
        .unwrap();
        assert_eq!(c.port, 7000);
        assert_eq!(c.listen_addresses, ["127.0.0.1"]);
        assert_eq!(
            c.tls,
            Some(TlsFiles {
                cert: "/d/server.crt".into(),
                key: "/k.pem".into()
            })
        );
        assert!(ServerConfig::from_settings(
            &conf(&[("auth_method", "md5")]),
            Path::new("/d"),
            &Overrides::default()
        )
        .is_err());
        assert!(ServerConfig::from_settings(
            &conf(&[("port", "x")]),
            Path::new("/d"),
            &Overrides::default()
        )
        .is_err());
    }

    #[test]
    fn unix_sockets() {
        let c = ServerConfig::from_settings(
            &conf(&[
                ("listen_addresses", ""),
                ("unix_socket_directories", "sock, /run/t"),
                ("unix_socket_permissions", "0770"),
            ]),
            Path::new("/d"),
            &Overrides::default(),
        )
        .unwrap();
        assert!(c.listen_addresses.is_empty());
        assert_eq!(
            c.unix_socket_directories,
            [PathBuf::from("/d/sock"), PathBuf::from("/run/t")]
        );
        assert_eq!(c.unix_socket_permissions, 0o770);
        for bad in [
            ("unix_socket_permissions", "0800"),
            ("unix_socket_permissions", "rw"),
        ] {
            assert!(ServerConfig::from_settings(
                &conf(&[bad]),
                Path::new("/d"),
                &Overrides::default()
            )
            .is_err());
        }
        assert!(ServerConfig::from_settings(
            &conf(&[("listen_addresses", ""), ("unix_socket_directories", "")]),
            Path::new("/d"),
            &Overrides::default()
        )
        .unwrap_err()
        .contains("nowhere to listen"));
    }
}
