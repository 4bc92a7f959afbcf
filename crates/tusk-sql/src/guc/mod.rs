//! Run-time settings (GUCs) with PostgreSQL's names, units and messages.
//!
//! Each session has its own values. Defaults come from PostgreSQL, then from
//! `tusk.conf`; `SET` changes the session value, `RESET` restores the default.
//! Settings fixed at startup (`shared_buffers`, `huge_pages`) can be shown but
//! not set. Names are matched case-insensitively and shown with their
//! canonical spelling (`TimeZone`, `DateStyle`).
//!
//! The settings drivers send at connection start (`DateStyle`, `TimeZone`,
//! `search_path`, `client_encoding`, ...) are parsed in `client_settings`.
//! An error message may carry `\nDETAIL: ` and `\nHINT: ` lines, which
//! [`error`] splits off into the error's fields.

use crate::client_settings as cs;
use crate::error::{sqlstate, SqlError};
use std::collections::BTreeMap;
use typed::TypedSettings;

mod typed;

/// A settings error as the client sees it: the SQLSTATE PostgreSQL gives
/// it, and the `\nDETAIL: ` / `\nHINT: ` lines of the message as fields.
pub fn error(msg: String) -> SqlError {
    let (message, detail, hint) = cs::split_message(&msg);
    let code = if message.starts_with("unrecognized configuration parameter") {
        sqlstate::UNDEFINED_OBJECT
    } else if message.contains("cannot be changed") {
        sqlstate::CANT_CHANGE_RUNTIME_PARAM
    } else if message.starts_with("conversion between") {
        sqlstate::FEATURE_NOT_SUPPORTED
    } else if message.ends_with("is not of type TABLE") {
        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE
    } else {
        sqlstate::INVALID_PARAMETER_VALUE
    };
    let mut e = SqlError::coded(code, message);
    e.detail = detail;
    e.hint = hint;
    e
}

/// Checks a value and returns its canonical form; gets the current value.
type Validator = fn(&str, &str) -> Result<String, String>;

/// Index access methods: names that exist in `pg_am`, but not for tables.
const INDEX_ACCESS_METHODS: [&str; 6] = ["btree", "hash", "gist", "gin", "spgist", "brin"];

/// The table access method called `name`, with PostgreSQL's errors (the
/// `42704` of an unknown name is for CREATE TABLE; SET words it as an
/// invalid value, see [`table_access_method`]).
pub fn access_method_by_name(name: &str) -> Result<tusk_storage::AccessMethod, SqlError> {
    if let Some(am) = tusk_storage::AccessMethod::from_name(name) {
        return Ok(am);
    }
    if INDEX_ACCESS_METHODS.contains(&name) {
        return Err(SqlError::coded(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("access method \"{name}\" is not of type TABLE"),
        ));
    }
    Err(SqlError::coded(
        sqlstate::UNDEFINED_OBJECT,
        format!("access method \"{name}\" does not exist"),
    ))
}

/// `default_table_access_method`: an existing table access method.
fn table_access_method(raw: &str, _current: &str) -> Result<String, String> {
    let invalid = format!("invalid value for parameter \"default_table_access_method\": \"{raw}\"");
    if raw.is_empty() {
        return Err(format!(
            "{invalid}\nDETAIL: default_table_access_method cannot be empty."
        ));
    }
    match access_method_by_name(raw) {
        Ok(am) => Ok(am.name().to_string()),
        Err(e) if e.code == sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE => Err(e.message),
        Err(_) => Err(format!(
            "{invalid}\nDETAIL: Table access method \"{raw}\" does not exist."
        )),
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Memory in kB, shown with the largest exact unit.
    MemoryKb {
        min: i64,
        max: i64,
    },
    Int {
        min: i64,
        max: i64,
    },
    Real {
        min: f64,
        max: f64,
    },
    Enum(&'static [&'static str]),
    Bool,
    /// A startup setting shown as written in tusk.conf (the storage layer
    /// parses and checks it when the database opens).
    Startup,
    /// A time in milliseconds, shown with the largest exact unit.
    DurationMs {
        min: i64,
        max: i64,
    },
    /// Checked and canonicalised by a function of `client_settings`.
    Custom(Validator),
}

struct Def {
    name: &'static str,
    default: &'static str,
    kind: Kind,
    /// Fixed at startup.
    read_only: bool,
    description: &'static str,
}

const DEFS: &[Def] = &[
    Def {
        name: "work_mem",
        default: "4MB",
        kind: Kind::MemoryKb {
            min: 64,
            max: 2147483647,
        },
        read_only: false,
        description: "memory for each hash table or sort, in kB",
    },
    Def {
        name: "hash_mem_multiplier",
        default: "2",
        kind: Kind::Real {
            min: 1.0,
            max: 1000.0,
        },
        read_only: false,
        description: "multiple of work_mem a hash table may use",
    },
    Def {
        name: "temp_file_limit",
        default: "-1",
        kind: Kind::MemoryKb {
            min: -1,
            max: 2147483647,
        },
        read_only: false,
        description: "largest total size of a statement's temporary files, in kB (-1: no limit)",
    },
    Def {
        name: "maintenance_work_mem",
        default: "64MB",
        kind: Kind::MemoryKb {
            min: 1024,
            max: 2147483647,
        },
        read_only: false,
        description: "memory for maintenance operations such as VACUUM",
    },
    Def {
        name: "max_parallel_workers_per_gather",
        default: "2",
        kind: Kind::Int { min: 0, max: 1024 },
        read_only: false,
        description: "worker threads per Gather (plus the leader)",
    },
    Def {
        name: "min_parallel_table_scan_size",
        default: "8MB",
        kind: Kind::MemoryKb {
            min: 0,
            max: 2147483647,
        },
        read_only: false,
        description: "smallest table scan worth a parallel plan",
    },
    Def {
        name: "shared_buffers",
        default: "128MB",
        kind: Kind::MemoryKb {
            min: 128,
            max: i64::MAX,
        },
        read_only: true,
        description: "size of the shared buffer pool (set in tusk.conf)",
    },
    Def {
        name: "huge_pages",
        default: "try",
        kind: Kind::Enum(&["off", "on", "try"]),
        read_only: true,
        description: "use huge pages for the main shared memory region (set in tusk.conf)",
    },
    Def {
        name: "min_dynamic_shared_memory",
        default: "0",
        kind: Kind::MemoryKb {
            min: 0,
            max: i64::MAX,
        },
        read_only: true,
        description:
            "main-region memory reserved for dynamic shared memory segments (set in tusk.conf)",
    },
    Def {
        name: "huge_pages_status",
        default: "off",
        kind: Kind::Enum(&["off", "on", "unknown"]),
        read_only: true,
        description: "whether the main region got huge pages",
    },
    Def {
        name: "tusk.hash_join_prefetch",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description: "prefetch bucket heads and chain entries in hash join build and probe",
    },
    Def {
        name: "tusk.statement_cache",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description: "keep the plans of simple queries by shape, numeric literals as parameters",
    },
    Def {
        name: "tusk.hash_chunk_size",
        default: "32kB",
        kind: Kind::MemoryKb { min: 16, max: 1024 },
        read_only: false,
        description: "size of each chunk of a Parallel Hash Join's shared table (a power of two)",
    },
    Def {
        name: "synchronous_commit",
        default: "on",
        kind: Kind::Enum(&["local", "remote_write", "remote_apply", "on", "off"]),
        read_only: false,
        description: "wait for the commit record to reach disk (off: report success before)",
    },
    Def {
        name: "full_page_writes",
        default: "on",
        kind: Kind::Startup,
        read_only: true,
        description:
            "log a full page image at the first change after a checkpoint (set in tusk.conf)",
    },
    Def {
        name: "wal_buffers",
        default: "4MB",
        kind: Kind::Startup,
        read_only: true,
        description: "WAL buffer size (set in tusk.conf)",
    },
    Def {
        name: "max_wal_size",
        default: "1GB",
        kind: Kind::Startup,
        read_only: true,
        description: "WAL written between automatic checkpoints (set in tusk.conf)",
    },
    Def {
        name: "checkpoint_timeout",
        default: "5min",
        kind: Kind::Startup,
        read_only: true,
        description: "time between automatic checkpoints (set in tusk.conf)",
    },
    Def {
        name: "recovery_prefetch",
        default: "try",
        kind: Kind::Startup,
        read_only: true,
        description: "prefetch referenced blocks during recovery (set in tusk.conf)",
    },
    Def {
        name: "maintenance_io_concurrency",
        default: "10",
        kind: Kind::Startup,
        read_only: true,
        description: "reads in flight during recovery prefetching (set in tusk.conf)",
    },
    Def {
        name: "wal_decode_buffer_size",
        default: "512kB",
        kind: Kind::Startup,
        read_only: true,
        description: "how far ahead recovery decodes WAL (set in tusk.conf)",
    },
    Def {
        name: "tusk.recovery_prefetch_method",
        default: "io_uring",
        kind: Kind::Startup,
        read_only: true,
        description:
            "io_uring (fadvise where the kernel refuses it), fadvise or threads (set in tusk.conf)",
    },
    Def {
        name: "tusk.recovery_direct_io",
        default: "on",
        kind: Kind::Startup,
        read_only: true,
        description: "io_uring recovery reads bypass the page cache (set in tusk.conf)",
    },
    Def {
        name: "tusk.buffer_mapping",
        default: "chash",
        kind: Kind::Startup,
        read_only: true,
        description: "buffer mapping table: chash, partitioned or global (set in tusk.conf)",
    },
    Def {
        name: "enable_indexscan",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description: "lets the planner use index scans",
    },
    Def {
        name: "enable_seqscan",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description:
            "lets the planner use sequential scans (when off, only where nothing else can run)",
    },
    Def {
        name: "enable_hashjoin",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description: "lets the planner use hash joins (when off, only where nothing else can run)",
    },
    Def {
        name: "enable_nestloop",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description:
            "lets the planner use nested loop joins (when off, only where nothing else can run)",
    },
    Def {
        name: "enable_mergejoin",
        default: "on",
        kind: Kind::Bool,
        read_only: false,
        description: "lets the planner use merge joins (when off, only where nothing else can run)",
    },
    Def {
        name: "statement_timeout",
        default: "0",
        kind: Kind::DurationMs {
            min: 0,
            max: 2147483647,
        },
        read_only: false,
        description: "cancels statements running longer than this, in ms (0: no limit)",
    },
    Def {
        name: "lock_timeout",
        default: "0",
        kind: Kind::DurationMs {
            min: 0,
            max: 2147483647,
        },
        read_only: false,
        description: "longest wait for a lock, in ms (0: no limit)",
    },
    Def {
        name: "deadlock_timeout",
        default: "1s",
        kind: Kind::DurationMs {
            min: 1,
            max: 2147483647,
        },
        read_only: false,
        description: "wait for a lock before checking for a deadlock, in ms",
    },
    Def {
        name: "default_transaction_isolation",
        default: "read committed",
        kind: Kind::Enum(&[
            "serializable",
            "repeatable read",
            "read committed",
            "read uncommitted",
        ]),
        read_only: false,
        description: "isolation level of new transactions (SERIALIZABLE is refused)",
    },
    Def {
        name: "search_path",
        default: "\"$user\", public",
        kind: Kind::Custom(cs::search_path),
        read_only: false,
        description: "schema search order (tusk has the one schema public)",
    },
    Def {
        name: "default_table_access_method",
        default: "heap",
        kind: Kind::Custom(table_access_method),
        read_only: false,
        description: "the access method of tables created without USING: heap or columnar",
    },
    Def {
        name: "TimeZone",
        default: "UTC",
        kind: Kind::Custom(cs::timezone),
        read_only: false,
        description: "time zone for displaying and interpreting time stamps",
    },
    Def {
        name: "DateStyle",
        default: "ISO, MDY",
        kind: Kind::Custom(cs::datestyle),
        read_only: false,
        description: "display format for date and time values",
    },
    Def {
        name: "IntervalStyle",
        default: "postgres",
        kind: Kind::Enum(&["postgres", "postgres_verbose", "sql_standard", "iso_8601"]),
        read_only: false,
        description: "display format for interval values",
    },
    Def {
        name: "bytea_output",
        default: "hex",
        kind: Kind::Enum(&["escape", "hex"]),
        read_only: false,
        description: "the output format for bytea",
    },
    Def {
        name: "extra_float_digits",
        default: "1",
        kind: Kind::Int { min: -15, max: 3 },
        read_only: false,
        description: "extra digits displayed for floating-point values",
    },
    Def {
        name: "client_encoding",
        default: "UTF8",
        kind: Kind::Custom(cs::client_encoding),
        read_only: false,
        description: "the client's character set encoding (UTF8 only)",
    },
    Def {
        name: "application_name",
        default: "",
        kind: Kind::Custom(cs::application_name),
        read_only: false,
        description: "name of the application, as the client reports it",
    },
    Def {
        name: "standard_conforming_strings",
        default: "on",
        kind: Kind::Enum(&["on"]),
        read_only: false,
        description: "'...' strings treat backslashes literally (always on)",
    },
    Def {
        name: "default_transaction_read_only",
        default: "off",
        kind: Kind::Bool,
        read_only: false,
        description: "whether new transactions are read-only",
    },
    Def {
        name: "server_version",
        default: SERVER_VERSION,
        kind: Kind::Startup,
        read_only: true,
        description: "the PostgreSQL version tusk answers as",
    },
    Def {
        name: "server_version_num",
        default: "150000",
        kind: Kind::Startup,
        read_only: true,
        description: "server_version as a number",
    },
    Def {
        name: "server_encoding",
        default: "UTF8",
        kind: Kind::Startup,
        read_only: true,
        description: "the database's character set encoding",
    },
    Def {
        name: "integer_datetimes",
        default: "on",
        kind: Kind::Startup,
        read_only: true,
        description: "date and time values are 64-bit integers",
    },
    Def {
        name: "in_hot_standby",
        default: "off",
        kind: Kind::Startup,
        read_only: true,
        description: "whether this is a standby (never)",
    },
    Def {
        name: "is_superuser",
        default: "on",
        kind: Kind::Startup,
        read_only: true,
        description: "whether the session's user is a superuser",
    },
    Def {
        name: "session_authorization",
        default: "tusk",
        kind: Kind::Startup,
        read_only: true,
        description: "the session's user name",
    },
    Def {
        name: "listen_addresses",
        default: "localhost",
        kind: Kind::Startup,
        read_only: true,
        description: "addresses tusk serve listens on (set in tusk.conf)",
    },
    Def {
        name: "port",
        default: "5432",
        kind: Kind::Startup,
        read_only: true,
        description: "TCP port tusk serve listens on (set in tusk.conf)",
    },
    Def {
        name: "max_connections",
        default: "100",
        kind: Kind::Startup,
        read_only: true,
        description: "most concurrent connections to tusk serve (set in tusk.conf)",
    },
    Def {
        name: "auth_method",
        default: "trust",
        kind: Kind::Startup,
        read_only: true,
        description: "trust or scram-sha-256 (set in tusk.conf)",
    },
    Def {
        name: "ssl",
        default: "off",
        kind: Kind::Startup,
        read_only: true,
        description: "TLS connections (set in tusk.conf with ssl_cert_file, ssl_key_file)",
    },
];

/// `server_version` as clients see it: psql, libpq and pgbench read the
/// number before the first space.
pub const SERVER_VERSION: &str = "15.0 (tusk)";

/// Settings PostgreSQL reports to the client in a ParameterStatus message at
/// connection start and whenever they change (`GUC_REPORT`).
pub const REPORTED: &[&str] = &[
    "application_name",
    "client_encoding",
    "DateStyle",
    "default_transaction_read_only",
    "in_hot_standby",
    "integer_datetimes",
    "IntervalStyle",
    "is_superuser",
    "server_encoding",
    "server_version",
    "session_authorization",
    "standard_conforming_strings",
    "TimeZone",
];

fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// Formats a kB amount as PostgreSQL does: the largest unit that divides it.
pub fn format_kb(kb: i64) -> String {
    if kb <= 0 {
        return kb.to_string();
    }
    for (unit, div) in [("TB", 1i64 << 30), ("GB", 1 << 20), ("MB", 1 << 10)] {
        if kb % div == 0 {
            return format!("{}{unit}", kb / div);
        }
    }
    format!("{kb}kB")
}

fn parse_kb(v: &str) -> Option<i64> {
    if v.trim() == "-1" {
        return Some(-1);
    }
    let bytes = tusk_storage::parse_memory(v, 1024)?;
    if bytes % 1024 != 0 && bytes < 1024 {
        return None;
    }
    i64::try_from(bytes / 1024).ok()
}

/// One setting as `pg_settings` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingDescription {
    pub name: String,
    /// The value in the setting's base unit (`4096` for `work_mem = 4MB`).
    pub setting: String,
    pub unit: Option<String>,
    pub category: &'static str,
    pub description: String,
    /// `user` (SET changes it) or `postmaster` (fixed at startup).
    pub context: &'static str,
    pub vartype: &'static str,
    /// `default`, `configuration file` (tusk.conf) or `session`.
    pub source: &'static str,
    pub min: Option<String>,
    pub max: Option<String>,
    pub enumvals: Option<Vec<&'static str>>,
    pub boot: String,
    pub reset: String,
}

/// PostgreSQL's category of a setting (`pg_settings.category`).
fn category(name: &str) -> &'static str {
    match name {
        "work_mem"
        | "hash_mem_multiplier"
        | "maintenance_work_mem"
        | "shared_buffers"
        | "huge_pages"
        | "min_dynamic_shared_memory"
        | "huge_pages_status" => "Resource Usage / Memory",
        "temp_file_limit" => "Resource Usage / Disk",
        "max_parallel_workers_per_gather" | "maintenance_io_concurrency" => {
            "Resource Usage / Asynchronous Behavior"
        }
        "min_parallel_table_scan_size" => "Query Tuning / Planner Cost Constants",
        "enable_indexscan" | "enable_seqscan" | "enable_hashjoin" | "enable_nestloop"
        | "enable_mergejoin" => "Query Tuning / Planner Method Configuration",
        "synchronous_commit" | "full_page_writes" | "wal_buffers" => "Write-Ahead Log / Settings",
        "max_wal_size" | "checkpoint_timeout" => "Write-Ahead Log / Checkpoints",
        "recovery_prefetch" | "wal_decode_buffer_size" => "Write-Ahead Log / Recovery",
        "deadlock_timeout" => "Lock Management",
        "statement_timeout"
        | "lock_timeout"
        | "default_transaction_isolation"
        | "search_path"
        | "default_transaction_read_only"
        | "bytea_output" => "Client Connection Defaults / Statement Behavior",
        "TimeZone" | "DateStyle" | "IntervalStyle" | "extra_float_digits" | "client_encoding" => {
            "Client Connection Defaults / Locale and Formatting"
        }
        "application_name" => "Reporting and Logging / What to Log",
        "standard_conforming_strings" => {
            "Version and Platform Compatibility / Previous PostgreSQL Versions"
        }
        "listen_addresses" | "port" | "max_connections" => {
            "Connections and Authentication / Connection Settings"
        }
        "auth_method" => "Connections and Authentication / Authentication",
        "ssl" => "Connections and Authentication / SSL",
        n if n.starts_with("tusk.") => "Customized Options",
        _ => "Preset Options",
    }
}

/// A session's settings.
#[derive(Debug, Clone)]
pub struct Gucs {
    values: BTreeMap<&'static str, String>,
    defaults: BTreeMap<&'static str, String>,
    /// Names these values: a fresh number from [`NEXT_GENERATION`] at
    /// every change, so equal generations mean equal settings, also
    /// across copies (a transaction's saved settings put back).
    generation: u64,
    /// The hot settings parsed (see [`typed`]), rebuilt with every new
    /// generation.
    typed: TypedSettings,
}

/// The next [`Gucs::generation`] to hand out (process-wide, so that two
/// sessions' numbers never meet either).
static NEXT_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn fresh_generation() -> u64 {
    NEXT_GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Gucs {
    /// Settings with PostgreSQL's defaults overridden by `conf` (tusk.conf)
    /// and the startup facts in `fixed`.
    pub fn new(conf: &BTreeMap<String, String>, fixed: &[(&str, String)]) -> Result<Gucs, String> {
        let mut defaults = BTreeMap::new();
        for d in DEFS {
            defaults.insert(d.name, d.default.to_string());
        }
        let typed = TypedSettings::from_values(&defaults);
        let mut g = Gucs {
            values: defaults.clone(),
            defaults,
            generation: fresh_generation(),
            typed,
        };
        for (k, v) in conf {
            if let Some(d) = def(k) {
                let canon = g.validate(d, k, v)?;
                g.defaults.insert(d.name, canon);
            }
        }
        for (k, v) in fixed {
            if let Some(d) = def(k) {
                g.defaults.insert(d.name, v.clone());
            }
        }
        g.values = g.defaults.clone();
        g.changed();
        Ok(g)
    }

    /// Checks `raw` for setting `d`, which the user called `given` (built-in
    /// checks name the setting as given, as PostgreSQL's do).
    fn validate(&self, d: &Def, given: &str, raw: &str) -> Result<String, String> {
        let invalid = || format!("invalid value for parameter \"{given}\": \"{raw}\"");
        match d.kind {
            Kind::MemoryKb { min, max } => {
                let kb = parse_kb(raw).ok_or_else(invalid)?;
                if kb < min || kb > max {
                    return Err(format!(
                        "{kb} kB is outside the valid range for parameter \"{given}\" ({min} .. {max})"
                    ));
                }
                if d.name == "tusk.hash_chunk_size" && !(kb as u64).is_power_of_two() {
                    return Err(invalid());
                }
                Ok(format_kb(kb))
            }
            Kind::Int { min, max } => {
                let n: i64 = raw.trim().parse().map_err(|_| invalid())?;
                if n < min || n > max {
                    return Err(format!(
                        "{n} is outside the valid range for parameter \"{given}\" ({min} .. {max})"
                    ));
                }
                Ok(n.to_string())
            }
            Kind::Real { min, max } => {
                let n: f64 = raw.trim().parse().map_err(|_| invalid())?;
                if !(min..=max).contains(&n) {
                    return Err(format!(
                        "{n} is outside the valid range for parameter \"{given}\" ({min} .. {max})"
                    ));
                }
                Ok(format!("{n}"))
            }
            Kind::Startup => Ok(raw.trim().to_string()),
            Kind::Enum(options) => {
                let v = raw.trim().to_ascii_lowercase();
                if options.contains(&v.as_str()) {
                    return Ok(v);
                }
                // Enums with on/off take every Boolean spelling for them.
                match tusk_exec::cast::parse_bool(&v) {
                    Ok(true) if options.contains(&"on") => Ok("on".into()),
                    Ok(false) if options.contains(&"off") => Ok("off".into()),
                    _ => Err(format!(
                        "{}\nHINT: Available values: {}.",
                        invalid(),
                        options.join(", ")
                    )),
                }
            }
            Kind::DurationMs { min, max } => {
                let ms = cs::parse_ms(raw).ok_or_else(invalid)?;
                if ms < min || ms > max {
                    return Err(format!(
                        "{ms} ms is outside the valid range for parameter \"{given}\" ({min} .. {max})"
                    ));
                }
                Ok(cs::format_ms(ms))
            }
            Kind::Custom(check) => check(raw, &self.values[d.name]),
            Kind::Bool => match tusk_exec::cast::parse_bool(raw) {
                Ok(true) => Ok("on".into()),
                Ok(false) => Ok("off".into()),
                Err(_) => Err(format!("parameter \"{given}\" requires a Boolean value")),
            },
        }
    }

    fn lookup(name: &str) -> Result<&'static Def, String> {
        def(name).ok_or_else(|| format!("unrecognized configuration parameter \"{name}\""))
    }

    pub fn set(&mut self, name: &str, raw: &str) -> Result<(), String> {
        let d = Self::lookup(name)?;
        if d.read_only {
            return Err(format!(
                "parameter \"{}\" cannot be changed without restarting the server",
                d.name
            ));
        }
        let v = self.validate(d, name, raw)?;
        self.values.insert(d.name, v);
        self.changed();
        Ok(())
    }

    pub fn reset(&mut self, name: &str) -> Result<(), String> {
        let d = Self::lookup(name)?;
        if d.read_only {
            return Err(format!(
                "parameter \"{}\" cannot be changed without restarting the server",
                d.name
            ));
        }
        self.values.insert(d.name, self.defaults[d.name].clone());
        self.changed();
        Ok(())
    }

    pub fn reset_all(&mut self) {
        for d in DEFS.iter().filter(|d| !d.read_only) {
            self.values.insert(d.name, self.defaults[d.name].clone());
        }
        self.changed();
    }

    /// Marks the values changed: a new generation, the typed settings
    /// parsed again.
    fn changed(&mut self) {
        self.generation = fresh_generation();
        self.typed = TypedSettings::from_values(&self.values);
    }

    /// The settings' generation: equal generations, equal settings (a plan
    /// made under one is good under the other).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn show(&self, name: &str) -> Result<String, String> {
        let d = Self::lookup(name)?;
        Ok(self.values[d.name].clone())
    }

    /// All settings: (name, value, description).
    pub fn all(&self) -> Vec<(String, String, String)> {
        DEFS.iter()
            .map(|d| {
                (
                    d.name.to_string(),
                    self.values[d.name].clone(),
                    d.description.to_string(),
                )
            })
            .collect()
    }

    /// Every setting as `pg_settings` describes it.
    pub fn describe(&self) -> Vec<SettingDescription> {
        DEFS.iter()
            .map(|d| {
                let value = &self.values[d.name];
                let default = &self.defaults[d.name];
                let base = |v: &str| match d.kind {
                    Kind::MemoryKb { .. } => {
                        parse_kb(v).map_or_else(|| v.to_string(), |k| k.to_string())
                    }
                    Kind::DurationMs { .. } => {
                        cs::parse_ms(v).map_or_else(|| v.to_string(), |m| m.to_string())
                    }
                    _ => v.to_string(),
                };
                let (vartype, unit, min, max, enumvals) = match d.kind {
                    Kind::MemoryKb { min, max } => (
                        "integer",
                        Some("kB"),
                        Some(min.to_string()),
                        Some(max.to_string()),
                        None,
                    ),
                    Kind::DurationMs { min, max } => (
                        "integer",
                        Some("ms"),
                        Some(min.to_string()),
                        Some(max.to_string()),
                        None,
                    ),
                    Kind::Int { min, max } => (
                        "integer",
                        None,
                        Some(min.to_string()),
                        Some(max.to_string()),
                        None,
                    ),
                    Kind::Real { min, max } => (
                        "real",
                        None,
                        Some(format!("{min}")),
                        Some(format!("{max}")),
                        None,
                    ),
                    Kind::Enum(options) => ("enum", None, None, None, Some(options.to_vec())),
                    Kind::Bool => ("bool", None, None, None, None),
                    Kind::Startup | Kind::Custom(_) => ("string", None, None, None, None),
                };
                SettingDescription {
                    name: d.name.to_string(),
                    setting: base(value),
                    unit: unit.map(str::to_string),
                    category: category(d.name),
                    description: d.description.to_string(),
                    context: if d.read_only { "postmaster" } else { "user" },
                    vartype,
                    source: if value != default {
                        "session"
                    } else if default != d.default {
                        "configuration file"
                    } else {
                        "default"
                    },
                    min,
                    max,
                    enumvals,
                    boot: base(d.default),
                    reset: base(default),
                }
            })
            .collect()
    }

    pub fn work_mem_bytes(&self) -> usize {
        self.typed.work_mem_bytes
    }

    /// `maintenance_work_mem` in bytes (VACUUM's dead-TID memory).
    pub fn maintenance_work_mem_bytes(&self) -> usize {
        self.typed.maintenance_work_mem_bytes
    }

    pub fn enable_indexscan(&self) -> bool {
        self.typed.enable_indexscan
    }

    /// `default_table_access_method`.
    pub fn default_table_access_method(&self) -> tusk_storage::AccessMethod {
        tusk_storage::AccessMethod::from_name(&self.values["default_table_access_method"])
            .unwrap_or_default()
    }

    pub fn enable_seqscan(&self) -> bool {
        self.typed.enable_seqscan
    }

    pub fn enable_hashjoin(&self) -> bool {
        self.typed.enable_hashjoin
    }

    pub fn enable_nestloop(&self) -> bool {
        self.typed.enable_nestloop
    }

    pub fn enable_mergejoin(&self) -> bool {
        self.typed.enable_mergejoin
    }

    pub fn hash_join_prefetch(&self) -> bool {
        self.typed.hash_join_prefetch
    }

    pub fn statement_cache(&self) -> bool {
        self.typed.statement_cache
    }

    /// `tusk.hash_chunk_size` in bytes.
    pub fn hash_chunk_size(&self) -> usize {
        self.typed.hash_chunk_size
    }

    /// `min_parallel_table_scan_size` in bytes.
    pub fn min_parallel_table_scan_size(&self) -> usize {
        self.typed.min_parallel_table_scan_size
    }

    /// `max_parallel_workers_per_gather`.
    pub fn max_parallel_workers(&self) -> usize {
        self.typed.max_parallel_workers
    }

    /// `temp_file_limit` in bytes, `None` when unlimited.
    pub fn temp_file_limit_bytes(&self) -> Option<u64> {
        self.typed.temp_file_limit_bytes
    }

    /// The canonical spelling of a setting's name (`timezone` ->
    /// `TimeZone`), as SHOW's column heading.
    pub fn canonical_name(name: &str) -> Result<&'static str, String> {
        Self::lookup(name).map(|d| d.name)
    }

    /// Sets a startup fact that SET cannot change (`session_authorization`
    /// from the connection's user name); it is also its default.
    pub fn set_fixed(&mut self, name: &str, value: &str) -> Result<(), String> {
        let d = Self::lookup(name)?;
        self.values.insert(d.name, value.to_string());
        self.defaults.insert(d.name, value.to_string());
        self.changed();
        Ok(())
    }

    /// The settings reported to clients ([`REPORTED`]) with their values.
    pub fn reported(&self) -> Vec<(&'static str, String)> {
        REPORTED
            .iter()
            .map(|n| {
                let d = def(n).expect("reported settings are defined");
                (d.name, self.values[d.name].clone())
            })
            .collect()
    }

    /// `lock_timeout` (`None`: wait forever).
    pub fn lock_timeout(&self) -> Option<std::time::Duration> {
        self.typed.lock_timeout
    }

    /// `deadlock_timeout`.
    pub fn deadlock_timeout(&self) -> std::time::Duration {
        self.typed.deadlock_timeout
    }

    /// `synchronous_commit`: anything but `off` waits for the flush.
    pub fn synchronous_commit(&self) -> bool {
        self.typed.synchronous_commit
    }

    /// `default_transaction_isolation` as SHOW prints it.
    pub fn default_transaction_isolation(&self) -> &str {
        &self.values["default_transaction_isolation"]
    }

    /// `default_transaction_isolation` as the level it names (READ
    /// COMMITTED for a value that names none).
    pub(crate) fn default_isolation(&self) -> crate::xact::Isolation {
        self.typed.default_transaction_isolation
    }

    /// `default_transaction_read_only`.
    pub fn default_transaction_read_only(&self) -> bool {
        self.typed.default_transaction_read_only
    }

    /// `statement_timeout`, `None` when 0 (no limit).
    pub fn statement_timeout(&self) -> Option<std::time::Duration> {
        self.typed.statement_timeout
    }

    pub fn hash_mem_multiplier(&self) -> f64 {
        self.typed.hash_mem_multiplier
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_show_reset() {
        let mut g = Gucs::new(&BTreeMap::new(), &[]).unwrap();
        assert_eq!(g.show("work_mem").unwrap(), "4MB");
        g.set("work_mem", "64kB").unwrap();
        assert_eq!(g.show("WORK_MEM").unwrap(), "64kB");
        g.set("work_mem", "2048").unwrap();
        assert_eq!(g.show("work_mem").unwrap(), "2MB");
        assert_eq!(g.work_mem_bytes(), 2 << 20);
        assert_eq!(g.typed, TypedSettings::from_values(&g.values));
        assert!(g
            .set("work_mem", "abc")
            .unwrap_err()
            .contains("invalid value for parameter \"work_mem\""));
        assert!(g
            .set("work_mem", "1kB")
            .unwrap_err()
            .contains("outside the valid range"));
        assert_eq!(
            g.set("nope", "1").unwrap_err(),
            "unrecognized configuration parameter \"nope\""
        );
        assert!(g
            .set("shared_buffers", "1GB")
            .unwrap_err()
            .contains("without restarting"));
        g.reset("work_mem").unwrap();
        assert_eq!(g.show("work_mem").unwrap(), "4MB");
        assert_eq!(g.work_mem_bytes(), 4 << 20);
        g.set("timezone", "utc").unwrap();
        assert_eq!(g.show("TIMEZONE").unwrap(), "UTC");
        assert_eq!(Gucs::canonical_name("datestyle").unwrap(), "DateStyle");
        g.set("statement_timeout", "1500").unwrap();
        assert_eq!(g.show("statement_timeout").unwrap(), "1500ms");
        assert_eq!(
            g.statement_timeout(),
            Some(std::time::Duration::from_millis(1500))
        );
        assert_eq!(
            g.set("intervalstyle", "x").unwrap_err(),
            "invalid value for parameter \"intervalstyle\": \"x\"\nHINT: Available values: postgres, postgres_verbose, sql_standard, iso_8601."
        );
        assert_eq!(format_kb(1536), "1536kB");
        assert_eq!(format_kb(1 << 20), "1GB");
    }
}
