//! The security points of `tusk serve`: SCRAM passwords (and only
//! verifiers on disk), wrong passwords, roles without LOGIN, the connection
//! limit, TLS, and the refusal to trust non-loopback addresses.

mod common;

use common::wire::Client;
use common::{psql, text, write_conf, TestServer};
use std::process::Command;
use tusk_sql::{RoleChange, RoleStore};

fn role(login: bool, password: &str) -> RoleChange {
    RoleChange {
        login: Some(login),
        password: Some(Some(password.to_string())),
    }
}

/// A server with `auth_method = scram-sha-256` and roles alice (LOGIN,
/// password "wonderland") and bob (NOLOGIN, password "builder").
fn scram_server() -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    write_conf(dir.path(), &[("auth_method", "scram-sha-256")]);
    let roles = tusk_server::roles::RoleFile::open(dir.path()).unwrap();
    roles.create("alice", &role(true, "wonderland")).unwrap();
    roles.create("bob", &role(false, "builder")).unwrap();
    TestServer::start_in(dir)
}

#[test]
fn passwords_are_checked_with_scram() {
    let server = scram_server();
    let ok = |user: &str, pw: &str| {
        psql(
            &server,
            user,
            &[("PGPASSWORD", pw)],
            &["-Atc", "select 41 + 1"],
        )
    };
    let Some(out) = ok("alice", "wonderland") else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "42\n");
    for (user, pw, message) in [
        (
            "alice",
            "wrong",
            "password authentication failed for user \"alice\"",
        ),
        (
            "nobody",
            "x",
            "password authentication failed for user \"nobody\"",
        ),
        ("bob", "builder", "role \"bob\" is not permitted to log in"),
    ] {
        let out = ok(user, pw).unwrap();
        assert!(!out.status.success());
        assert!(
            text(&out.stderr).contains(message),
            "{user}: {}",
            text(&out.stderr)
        );
    }
    // The SQLSTATE of a wrong password.
    let e = Client::connect(server.addr, "alice", Some("wrong"))
        .err()
        .unwrap();
    assert_eq!(e.code(), "28P01");
    assert_eq!(e.fields()[&b'S'], "FATAL");
    // Passwords set through SQL are stored as verifiers only.
    let out = psql(
        &server,
        "alice",
        &[("PGPASSWORD", "wonderland")],
        &[
            "-c",
            "create role carol login password 'sEcReT-42'",
            "-c",
            "alter role bob login",
        ],
    )
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = std::fs::read_to_string(server.dir.path().join("pg_authid")).unwrap();
    assert!(!file.contains("sEcReT-42") && !file.contains("wonderland"));
    assert!(file.contains("carol\tlogin\tSCRAM-SHA-256$4096:"));
    let out = ok("carol", "sEcReT-42").unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = ok("bob", "builder").unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = psql(
        &server,
        "carol",
        &[("PGPASSWORD", "sEcReT-42")],
        &[
            "-c",
            "drop role bob",
            "-c",
            "drop role if exists bob",
            "-c",
            "create role carol",
        ],
    )
    .unwrap();
    let err = text(&out.stderr);
    assert!(
        err.contains("NOTICE:  role \"bob\" does not exist, skipping"),
        "{err}"
    );
    assert!(
        err.contains("ERROR:  role \"carol\" already exists"),
        "{err}"
    );
    assert!(ok("bob", "builder").is_none_or(|o| !o.status.success()));
    // ALTER ROLE ... PASSWORD replaces the verifier: the new password
    // logs in, the old one gets 28P01, and neither is on disk.
    let out = psql(
        &server,
        "carol",
        &[("PGPASSWORD", "sEcReT-42")],
        &["-c", "alter role carol password 'n3w-Pa55'"],
    )
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = ok("carol", "n3w-Pa55").unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = ok("carol", "sEcReT-42").unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("password authentication failed"));
    let file = std::fs::read_to_string(server.dir.path().join("pg_authid")).unwrap();
    assert!(!file.contains("n3w-Pa55") && !file.contains("sEcReT-42"));
    assert!(file.contains("carol\tlogin\tSCRAM-SHA-256$4096:"));
    server.stop().unwrap();
}

#[test]
fn connections_beyond_the_limit_are_refused() {
    let server = TestServer::start(&[("max_connections", "2")]);
    let a = server.connect();
    let _b = server.connect();
    let e = Client::connect(server.addr, "tusk", None).err().unwrap();
    assert_eq!(e.code(), "53300");
    assert_eq!(e.fields()[&b'M'], "sorry, too many clients already");
    // A slot frees when a session ends.
    drop(a);
    let mut c = loop {
        match Client::connect(server.addr, "tusk", None) {
            Ok(c) => break c,
            Err(e) => assert_eq!(e.code(), "53300"),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(c.rows("select 1"), [[Some("1".to_string())]]);
    server.stop().unwrap();
}

#[test]
fn trust_is_refused_on_addresses_others_can_reach() {
    let dir = tempfile::tempdir().unwrap();
    write_conf(dir.path(), &[]);
    let e = tusk_server::Server::bind(
        dir.path(),
        &tusk_server::Overrides {
            port: Some(0),
            listen_addresses: Some("*".into()),
        },
    )
    .err()
    .unwrap();
    assert!(
        e.starts_with("refusing to listen on 0.0.0.0 with auth_method = trust"),
        "{e}"
    );
}

/// A self-signed certificate and key in `dir`, if openssl is installed.
fn make_certificate(dir: &std::path::Path) -> bool {
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-keyout",
        ])
        .arg(dir.join("server.key"))
        .arg("-out")
        .arg(dir.join("server.crt"))
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        _ => {
            eprintln!("skipping: openssl could not make a certificate");
            false
        }
    }
}

fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn tls_with_ssl_on() {
    let dir = tempfile::tempdir().unwrap();
    if !make_certificate(dir.path()) {
        return;
    }
    write_conf(dir.path(), &[("ssl", "on")]);
    // A key others can read is refused.
    chmod(&dir.path().join("server.key"), 0o644);
    let overrides = tusk_server::Overrides {
        port: Some(0),
        listen_addresses: Some("127.0.0.1".into()),
    };
    let e = tusk_server::Server::bind(dir.path(), &overrides)
        .err()
        .unwrap();
    assert!(e.contains("has group or world access"), "{e}");
    chmod(&dir.path().join("server.key"), 0o600);
    let server = TestServer::start_in(dir);
    let Some(out) = psql(
        &server,
        "tusk",
        &[("PGSSLMODE", "require")],
        &["-c", "\\conninfo", "-Atc", "select 'over tls'"],
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("SSL connection (protocol: TLSv1.3"),
        "{stdout}"
    );
    assert!(stdout.contains("over tls"), "{stdout}");
    // Without TLS the same server answers too (ssl = on allows it).
    let out = psql(
        &server,
        "tusk",
        &[("PGSSLMODE", "disable")],
        &["-Atc", "select 1"],
    )
    .unwrap();
    assert!(out.status.success());
    server.stop().unwrap();
}
