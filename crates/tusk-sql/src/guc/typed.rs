//! The settings the executor and the transaction manager read for every
//! statement, parsed once per change of the session's settings.
//!
//! [`super::Gucs`] keeps each value as the text SHOW prints, which is what
//! SET, RESET and `pg_settings` work with. Reading `work_mem` or
//! `lock_timeout` from that text means a map lookup and a parse, and a
//! short statement (pgbench's select) asks for a dozen of them: a measurable
//! share of its time. So every change of the values (the moments
//! [`super::Gucs`] takes a fresh generation) rebuilds this struct from the
//! text, and the accessors read its fields.
//!
//! Invariant: `TypedSettings::from_values(&gucs.values)` equals
//! `gucs.typed` whenever a `Gucs` method returns.

use super::parse_kb;
use crate::client_settings as cs;
use std::collections::BTreeMap;
use std::time::Duration;

/// The typed form of the hot settings; see the module doc.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TypedSettings {
    pub work_mem_bytes: usize,
    pub maintenance_work_mem_bytes: usize,
    pub hash_mem_multiplier: f64,
    pub temp_file_limit_bytes: Option<u64>,
    pub hash_chunk_size: usize,
    pub min_parallel_table_scan_size: usize,
    pub max_parallel_workers: usize,
    pub enable_indexscan: bool,
    pub enable_seqscan: bool,
    pub enable_hashjoin: bool,
    pub enable_nestloop: bool,
    pub enable_mergejoin: bool,
    pub hash_join_prefetch: bool,
    pub statement_cache: bool,
    pub synchronous_commit: bool,
    pub default_transaction_read_only: bool,
    pub default_transaction_isolation: crate::xact::Isolation,
    pub lock_timeout: Option<Duration>,
    pub deadlock_timeout: Duration,
    pub statement_timeout: Option<Duration>,
}

impl TypedSettings {
    pub fn from_values(values: &BTreeMap<&'static str, String>) -> TypedSettings {
        let text = |name: &str| values.get(name).map_or("", String::as_str);
        let kb = |name: &str| parse_kb(text(name)).unwrap_or(4096);
        let on = |name: &str| text(name) == "on";
        // A duration in milliseconds, `None` for 0 (no limit).
        let duration = |name: &str| {
            let ms = cs::parse_ms(text(name)).unwrap_or(0);
            (ms > 0).then(|| Duration::from_millis(ms as u64))
        };
        let temp_file_limit = kb("temp_file_limit");
        TypedSettings {
            work_mem_bytes: kb("work_mem") as usize * 1024,
            maintenance_work_mem_bytes: kb("maintenance_work_mem") as usize * 1024,
            hash_mem_multiplier: text("hash_mem_multiplier").parse().unwrap_or(2.0),
            temp_file_limit_bytes: (temp_file_limit >= 0).then(|| temp_file_limit as u64 * 1024),
            hash_chunk_size: kb("tusk.hash_chunk_size") as usize * 1024,
            min_parallel_table_scan_size: kb("min_parallel_table_scan_size").max(0) as usize * 1024,
            max_parallel_workers: text("max_parallel_workers_per_gather").parse().unwrap_or(0),
            enable_indexscan: on("enable_indexscan"),
            enable_seqscan: on("enable_seqscan"),
            enable_hashjoin: on("enable_hashjoin"),
            enable_nestloop: on("enable_nestloop"),
            enable_mergejoin: on("enable_mergejoin"),
            hash_join_prefetch: on("tusk.hash_join_prefetch"),
            statement_cache: on("tusk.statement_cache"),
            synchronous_commit: text("synchronous_commit") != "off",
            default_transaction_read_only: on("default_transaction_read_only"),
            default_transaction_isolation: crate::xact::Isolation::parse(text(
                "default_transaction_isolation",
            ))
            .unwrap_or(crate::xact::Isolation::ReadCommitted),
            lock_timeout: duration("lock_timeout"),
            deadlock_timeout: duration("deadlock_timeout").unwrap_or(Duration::from_secs(1)),
            statement_timeout: duration("statement_timeout"),
        }
    }
}
