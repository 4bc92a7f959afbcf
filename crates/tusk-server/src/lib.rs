//! # tusk-server: PostgreSQL's wire protocol for tusk
//!
//! `tusk serve -D DIR` opens one database and lets PostgreSQL's clients —
//! psql, libpq, psycopg, pgbench, drivers — talk to it over TCP or a
//! Unix-domain socket, with protocol 3.0 as PostgreSQL 15 speaks it.
//!
//! ## A connection's life
//!
//! ```text
//!  accept (tokio reactor) ──> connection thread
//!      startup.rs   SSLRequest -> TLS (rustls) | CancelRequest -> registry
//!                   startup packet, max_connections, SCRAM (pgwire), settings
//!      session.rs   Query / Parse / Bind / Describe / Execute / Sync ... loop
//!          engine.rs  -> tusk_sql::Session (one per connection)
//!          types.rs   batches -> DataRow, parameter bytes -> values
//!      conn.rs      framed reads (frontend.rs), buffered writes
//!      pool.rs      idle session -> epoll; the next free pool thread serves
//!                   whichever session has a message
//! ```
//!
//! The reactor only accepts connections and waits for the shutdown signal.
//! Each connection then gets a thread that runs its startup and blocks on
//! its socket the way a PostgreSQL backend process does: reading a query,
//! running it and writing the result take no hop between threads, and a
//! long query never holds up anyone else's I/O. With
//! `tusk.session_pool_seats` set, a session waits between queries in the
//! session pool instead, so that a thread that has just answered one
//! session can go on with another's query without sleeping (see `pool` for
//! when that pays). The `pgwire` crate provides the backend
//! message encodings and the SCRAM-SHA-256 exchange; framing and decoding
//! of client messages are our own (`frontend`), checked so that malformed
//! input ends only its connection.
//!
//! ## Modules
//!
//! | module | what |
//! |---|---|
//! | `server` | open the data directory, bind, accept, fast shutdown |
//! | `unix` | Unix-domain sockets `.s.PGSQL.<port>` and their lock files |
//! | `config` | `listen_addresses`, `port`, `max_connections`, `auth_method`, `ssl` |
//! | `startup` | SSL negotiation, startup packet, authentication, cancel requests |
//! | `session` | simple and extended query protocol, portals |
//! | `copy` | COPY FROM STDIN / TO STDOUT over the connection |
//! | `engine` | the narrow interface to the SQL layer, implemented over `tusk_sql::Session` |
//! | `frontend` | framing and decoding of client messages |
//! | `conn` | the socket (TCP, Unix or TLS), input and output buffers |
//! | `pool` | the session pool: idle sessions in one `epoll` set, a few seated threads, stall detection |
//! | `types` | type OIDs, DataRow encoding, parameter decoding |
//! | `error` | ErrorResponse fields |
//! | `registry` | sessions, cancel keys, the connection limit, shutdown |
//! | `roles` | the role file with SCRAM verifiers |
//! | `tls` | certificate and key loading |
//! | `random` | random bytes for keys and salts |
//! | `sched` | the scheduling policy of session threads (`SCHED_BATCH`) |
//!
//! ## Statements and plans
//!
//! Parse binds and plans a statement once (`tusk_sql::portal`): the binder
//! types each `$n` from the client's declared type or from the context it
//! is used in, and the plan keeps the parameters as placeholders. Bind
//! decodes the values for those types; Execute substitutes them into a
//! copy of the plan and runs it — no parsing, binding or planning per
//! execution, and no value ever spliced into SQL text. DDL since the
//! Parse makes the plan be made again. RowDescription reports each
//! column's type OID and typmod (`varchar(10)`, `numeric(8,2)`).
//!
pub mod activity;
pub mod config;
pub mod conn;
pub mod copy;
pub mod engine;
pub mod error;
pub mod frontend;
pub mod pool;
pub mod random;
pub mod registry;
pub mod roles;
pub mod sched;
pub mod server;
pub mod session;
pub mod startup;
pub mod tls;
pub mod types;
pub mod unix;

pub use config::{Overrides, ServerConfig};
pub use server::Server;
