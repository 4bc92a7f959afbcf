//! # tusk-server: PostgreSQL's wire protocol for tusk
//!
//! `tusk serve -D DIR` opens one database and lets PostgreSQL's clients —
//! psql, libpq, psycopg, pgbench, drivers — talk to it over TCP, with
//! protocol 3.0 as PostgreSQL 15 speaks it.
//!
//! ## A connection's life
//!
//! ```text
//!  accept (tokio reactor) ──> connection thread
//!      startup.rs   SSLRequest -> TLS (rustls) | CancelRequest -> registry
//!                   startup packet, max_connections, SCRAM (pgwire), settings
//!      session.rs   Query / Parse / Bind / Describe / Execute / Sync ... loop
//!          engine.rs  -> tusk_sql::Session (one per connection)
//!          types.rs   batches -> DataRow, parameters -> literals
//!      conn.rs      framed reads (frontend.rs), buffered writes
//! ```
//!
//! The reactor only accepts connections and waits for the shutdown signal.
//! Each connection then gets a thread that blocks on its socket the way a
//! PostgreSQL backend process does: reading a query, running it and
//! writing the result take no hop between threads, and a long query never
//! holds up anyone else's I/O. The `pgwire` crate provides the backend
//! message encodings and the SCRAM-SHA-256 exchange; framing and decoding
//! of client messages are our own (`frontend`), checked so that malformed
//! input ends only its connection.
//!
//! ## Modules
//!
//! | module | what |
//! |---|---|
//! | `server` | open the data directory, bind, accept, fast shutdown |
//! | `config` | `listen_addresses`, `port`, `max_connections`, `auth_method`, `ssl` |
//! | `startup` | SSL negotiation, startup packet, authentication, cancel requests |
//! | `session` | simple and extended query protocol, portals |
//! | `engine` | the narrow interface to the SQL layer, implemented over `tusk_sql::Session` |
//! | `frontend` | framing and decoding of client messages |
//! | `conn` | the socket (plain or TLS), input and output buffers |
//! | `types` | type OIDs, DataRow encoding, parameter decoding |
//! | `error`, `sqlstate` | ErrorResponse fields, SQLSTATEs |
//! | `registry` | sessions, cancel keys, the connection limit, shutdown |
//! | `roles` | the role file with SCRAM verifiers |
//! | `tls` | certificate and key loading |
//! | `random` | random bytes for keys and salts |
//!
//! ## What is interim
//!
//! Until the SQL layer types `$n` parameters and keeps prepared plans, a
//! bound parameter becomes a literal of its type in a copy of the parsed
//! statement (see `tusk_sql::portal`), and a statement is bound and planned
//! at each Bind. Errors whose SQLSTATE the SQL layer does not name are
//! classified by message (`sqlstate`). Result columns of `char(n)` and
//! `varchar(n)` are described as `text` until plans carry column types with
//! typmods.

pub mod config;
pub mod conn;
pub mod engine;
pub mod error;
pub mod frontend;
pub mod random;
pub mod registry;
pub mod roles;
pub mod server;
pub mod session;
pub mod sqlstate;
pub mod startup;
pub mod tls;
pub mod types;

pub use config::{Overrides, ServerConfig};
pub use server::Server;
