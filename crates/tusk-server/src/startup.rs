//! A connection from accept to its first ReadyForQuery: SSL negotiation,
//! the startup packet, cancel requests, the connection limit,
//! authentication and the session's initial settings.
//!
//! The sequence, as PostgreSQL's `ProcessStartupPacket` and
//! `ClientAuthentication` run it:
//!
//! 1. The first packet may be an SSLRequest (answered `S` and followed by
//!    the TLS handshake when `ssl = on`, else `N`), a GSSENCRequest
//!    (always `N`), a CancelRequest (acted on, then the connection closes
//!    without a reply), or the startup packet.
//! 2. The startup packet names the user (required), the database (any name
//!    is accepted: a data directory is one database) and settings, which
//!    are applied as SET would (`options=-c name=value` too); a bad one is
//!    FATAL. Protocol 3.x with a minor version above 0, or `_pq_.` options,
//!    get a NegotiateProtocolVersion for 3.0.
//! 3. Beyond `max_connections` sessions: FATAL 53300 `sorry, too many
//!    clients already`. During shutdown: FATAL 57P03.
//! 4. Authentication: with `trust`, none; with `scram-sha-256`, a SCRAM
//!    exchange (pgwire's `ScramServerAuth`) against the role's verifier
//!    from the role file. A role that does not exist or has no password
//!    goes through the same exchange against a made-up verifier, so that
//!    the answer does not tell which roles exist; every failure is FATAL
//!    28P01 `password authentication failed for user "..."`. A role without
//!    LOGIN then gets FATAL 28000.
//! 5. AuthenticationOk, ParameterStatus for the reported settings,
//!    BackendKeyData with the session's cancel key, ReadyForQuery.
//!
//! Until authentication completes the socket has a 60-second read timeout
//! (PostgreSQL's `authentication_timeout`).

use crate::config::{AuthMethod, ServerConfig};
use crate::conn::{Conn, ReadError, Stream, Transport};
use crate::engine::Engine;
use crate::error::{codes, Failure};
use crate::frontend::{self, FirstPacket, Reader};
use crate::pool::{SessionPool, Started};
use crate::registry::{ConnectionGuard, Registry};
use crate::roles::{parse_verifier, RoleFile};
use crate::session::Backend;
use bytes::Bytes;
use pgwire::api::auth::sasl::scram::{gen_salted_password, ScramSecret, ScramServerAuth};
use pgwire::messages::startup::{Authentication, NegotiateProtocolVersion};
use pgwire::tokio::tokio_rustls::rustls;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tusk_storage::Database;

const AUTHENTICATION_TIMEOUT: Duration = Duration::from_secs(60);
const SCRAM: &str = "SCRAM-SHA-256";

/// What every connection shares.
pub struct Shared {
    pub db: Arc<Database>,
    pub config: ServerConfig,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub roles: Arc<RoleFile>,
    pub registry: Arc<Registry>,
    /// Where idle sessions wait for their next message.
    pub pool: Arc<SessionPool>,
    /// Salt material for made-up verifiers of unknown roles.
    pub mock_nonce: [u8; 16],
}

/// Serves one accepted connection to its end.
pub fn serve_connection(shared: Arc<Shared>, connection: ConnectionGuard, stream: Stream) {
    crate::sched::apply(shared.config.session_scheduling);
    if let Stream::Tcp(tcp) = &stream {
        let _ = tcp.set_nodelay(true);
    }
    let _ = stream.set_read_timeout(Some(AUTHENTICATION_TIMEOUT));
    let conn = Conn::new(Transport::Plain(stream));
    let Some((conn, params)) = negotiate(&shared, conn) else {
        return;
    };
    if let Some(session) = start_session(&shared, conn, params) {
        shared.pool.serve(connection, session);
    }
}

/// Sends a FATAL error and gives up the connection.
fn refuse<T>(conn: &mut Conn, f: Failure) -> Option<T> {
    conn.send_failure(&f);
    let _ = conn.flush();
    None
}

/// Step 1: reads first packets until the startup packet.
fn negotiate(shared: &Shared, mut conn: Conn) -> Option<(Conn, Vec<(String, String)>)> {
    let mut tls_done = false;
    loop {
        let (_, body) = match conn.read_message(true) {
            Ok(m) => m,
            Err(ReadError::Closed) => return None,
            Err(ReadError::Protocol(f)) => {
                refuse::<()>(&mut conn, f);
                return None;
            }
        };
        let packet = match frontend::decode_first(&body) {
            Ok(p) => p,
            Err(f) => {
                refuse::<()>(&mut conn, f);
                return None;
            }
        };
        match packet {
            FirstPacket::SslRequest if !tls_done => {
                // No TLS on a Unix socket, as in PostgreSQL.
                let tcp = matches!(conn.io, Transport::Plain(Stream::Tcp(_)));
                let Some(tls) = shared.tls.clone().filter(|_| tcp) else {
                    conn.io.write_all(b"N").ok()?;
                    continue;
                };
                if conn.has_buffered_input() {
                    refuse::<()>(
                        &mut conn,
                        Failure::fatal(
                            codes::PROTOCOL_VIOLATION,
                            "received unencrypted data after SSL request",
                        ),
                    );
                    return None;
                }
                conn.io.write_all(b"S").ok()?;
                conn = conn
                    .upgrade(|io| {
                        let Transport::Plain(Stream::Tcp(mut tcp)) = io else {
                            unreachable!("TLS is negotiated once, over TCP")
                        };
                        let mut server =
                            rustls::ServerConnection::new(tls).map_err(std::io::Error::other)?;
                        while server.is_handshaking() {
                            server.complete_io(&mut tcp)?;
                        }
                        Ok(Transport::Tls(Box::new(rustls::StreamOwned::new(
                            server, tcp,
                        ))))
                    })
                    .ok()?;
                tls_done = true;
            }
            FirstPacket::SslRequest | FirstPacket::GssEncRequest => {
                conn.io.write_all(b"N").ok()?;
            }
            FirstPacket::Cancel { pid, secret } => {
                shared.registry.cancel(pid, secret);
                return None;
            }
            FirstPacket::Startup { minor, params, .. } => {
                let unknown: Vec<String> = params
                    .iter()
                    .filter(|(k, _)| k.starts_with("_pq_."))
                    .map(|(k, _)| k.clone())
                    .collect();
                if minor > 0 || !unknown.is_empty() {
                    conn.send(NegotiateProtocolVersion::new(0, unknown));
                }
                let params = params
                    .into_iter()
                    .filter(|(k, _)| !k.starts_with("_pq_."))
                    .collect();
                return Some((conn, params));
            }
        }
    }
}

/// The `-c name=value` / `--name=value` settings in a startup `options`
/// string (words split at unescaped spaces, `\` escaping the next byte).
fn option_settings(options: &str) -> Result<Vec<(String, String)>, Failure> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_ascii_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = Vec::new();
    let mut it = words.into_iter();
    let bad = |w: &str| {
        Failure::fatal(
            "42601",
            format!("invalid command-line argument for server process: {w}"),
        )
        .with_detail("Only -c name=value and --name=value are accepted.")
    };
    while let Some(w) = it.next() {
        let setting = if w == "-c" {
            it.next().ok_or_else(|| bad(&w))?
        } else if let Some(s) = w.strip_prefix("-c") {
            s.to_string()
        } else if let Some(s) = w.strip_prefix("--") {
            s.to_string()
        } else {
            return Err(bad(&w));
        };
        let (k, v) = setting.split_once('=').ok_or_else(|| bad(&setting))?;
        out.push((k.replace('-', "_"), v.to_string()));
    }
    Ok(out)
}

/// Steps 2 to 5, then the session.
fn start_session(
    shared: &Shared,
    mut conn: Conn,
    params: Vec<(String, String)>,
) -> Option<Started> {
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let Some(user) = get("user").filter(|u| !u.is_empty()) else {
        return refuse(
            &mut conn,
            Failure::fatal(
                codes::INVALID_AUTHORIZATION,
                "no PostgreSQL user name specified in startup packet",
            ),
        );
    };
    if shared.registry.is_shutting_down() {
        return refuse(
            &mut conn,
            Failure::fatal("57P03", "the database system is shutting down"),
        );
    }
    let mut session = match tusk_sql::Session::with_database(shared.db.clone()) {
        Ok(s) => s,
        Err(e) => {
            return refuse(
                &mut conn,
                Failure {
                    fatal: true,
                    ..e.into()
                },
            )
        }
    };
    session.set_role_store(shared.roles.clone());
    session.set_activity_source(shared.registry.clone());
    session.set_database_name(
        &get("database")
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| user.clone()),
    );
    let Some(admission) = shared.registry.admit(Engine::interrupt(&session)) else {
        return refuse(
            &mut conn,
            Failure::fatal(
                codes::TOO_MANY_CONNECTIONS,
                "sorry, too many clients already",
            ),
        );
    };
    // Deadlock reports name the pid the client got in BackendKeyData.
    session.set_pid(admission.pid);
    if shared.config.auth == AuthMethod::ScramSha256 {
        authenticate(shared, &mut conn, &user)?;
    }
    conn.send(Authentication::Ok);
    conn.clear_read_timeout();

    let mut settings = vec![("session_authorization".to_string(), user.clone())];
    for (k, v) in &params {
        match k.as_str() {
            "user" | "database" | "replication" => {}
            "options" => match option_settings(v) {
                Ok(s) => settings.extend(s),
                Err(f) => return refuse(&mut conn, f),
            },
            _ => settings.push((k.clone(), v.clone())),
        }
    }
    for (k, v) in &settings {
        let r = if k == "session_authorization" {
            session.set_fixed_config(k, v)
        } else {
            Engine::set_config(&mut session, k, v)
        };
        if let Err(e) = r {
            return refuse(
                &mut conn,
                Failure {
                    fatal: true,
                    ..e.into()
                },
            );
        }
    }
    admission.activity.set_client(conn.io.peer_addr());
    let mut backend = Backend::new(conn, session).with_activity(admission.activity.clone());
    if !backend.greet(admission.pid, admission.secret) {
        return None;
    }
    Some(Started { backend, admission })
}

fn auth_failed(user: &str) -> Failure {
    Failure::fatal(
        codes::INVALID_PASSWORD,
        format!("password authentication failed for user \"{user}\""),
    )
}

fn malformed(detail: impl std::fmt::Display) -> Failure {
    Failure::fatal(codes::PROTOCOL_VIOLATION, "malformed SCRAM message")
        .with_detail(detail.to_string())
}

/// Reads the next password-family message of the SCRAM exchange.
fn read_password_message(conn: &mut Conn) -> Result<Vec<u8>, Option<Failure>> {
    match conn.read_message(false) {
        Ok((b'p', body)) => Ok(body),
        Ok((tag, _)) => Err(Some(Failure::fatal(
            codes::PROTOCOL_VIOLATION,
            format!("expected SASL response, got message type {tag}"),
        ))),
        Err(ReadError::Protocol(f)) => Err(Some(f)),
        Err(ReadError::Closed) => Err(None),
    }
}

/// Step 4 with `scram-sha-256`.
fn authenticate(shared: &Shared, conn: &mut Conn, user: &str) -> Option<()> {
    let role = shared.roles.get(user);
    let real = role
        .as_ref()
        .and_then(|r| r.verifier.as_deref())
        .and_then(parse_verifier);
    let known = real.is_some();
    let secret = real.unwrap_or_else(|| {
        // Same salt for the same name, so repeated tries look like a real role's.
        let salt = gen_salted_password(user, &shared.mock_nonce, 1)[..16].to_vec();
        let salted = gen_salted_password(
            &String::from_utf8_lossy(&crate::random::bytes::<16>()),
            &salt,
            1,
        );
        ScramSecret::verifier_from_salted_password(salt, salted, crate::roles::SCRAM_ITERATIONS)
    });
    conn.send(Authentication::SASL(vec![SCRAM.to_string()]));
    conn.flush().ok()?;
    let fail = |conn: &mut Conn, f: Option<Failure>| -> Option<()> {
        match f {
            Some(f) => refuse(conn, f),
            None => None,
        }
    };
    let first = match read_password_message(conn) {
        Ok(b) => b,
        Err(f) => return fail(conn, f),
    };
    let mut r = Reader::new(&first);
    let mechanism = match r.cstr() {
        Ok(m) => m,
        Err(_) => return refuse(conn, malformed("invalid SASLInitialResponse")),
    };
    if mechanism != SCRAM {
        return refuse(
            conn,
            Failure::fatal(
                codes::PROTOCOL_VIOLATION,
                "client selected an invalid SASL authentication mechanism",
            ),
        );
    }
    let data = match r.i32().and_then(|n| r.bytes(n.max(0) as usize)) {
        Ok(d) => d.to_vec(),
        Err(_) => return refuse(conn, malformed("invalid SASLInitialResponse")),
    };
    let (server_first, waiting) =
        match ScramServerAuth::new().on_client_first_message_with_secret(&data, secret) {
            Ok(x) => x,
            Err(e) => return refuse(conn, malformed(e)),
        };
    conn.send(Authentication::SASLContinue(Bytes::from(server_first)));
    conn.flush().ok()?;
    let last = match read_password_message(conn) {
        Ok(b) => b,
        Err(f) => return fail(conn, f),
    };
    match waiting.on_client_final_message(&last) {
        Ok(server_final) if known => {
            conn.send(Authentication::SASLFinal(Bytes::from(server_final)));
        }
        Ok(_) | Err(pgwire::error::PgWireError::InvalidPassword(_)) => {
            return refuse(conn, auth_failed(user))
        }
        Err(e) => return refuse(conn, malformed(e)),
    }
    if !role.is_some_and(|r| r.login) {
        return refuse(
            conn,
            Failure::fatal(
                codes::INVALID_AUTHORIZATION,
                format!("role \"{user}\" is not permitted to log in"),
            ),
        );
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::option_settings;

    #[test]
    fn startup_options() {
        assert_eq!(
            option_settings("-c search_path=a -c statement_timeout=5 --work-mem=1MB").unwrap(),
            vec![
                ("search_path".to_string(), "a".to_string()),
                ("statement_timeout".to_string(), "5".to_string()),
                ("work_mem".to_string(), "1MB".to_string()),
            ]
        );
        assert_eq!(
            option_settings("-capplication_name=a\\ b").unwrap(),
            vec![("application_name".to_string(), "a b".to_string())]
        );
        assert!(option_settings("-x").is_err());
    }
}
