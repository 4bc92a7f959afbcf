//! Run-time settings (GUCs) with PostgreSQL's names, units and messages.
//!
//! Each session has its own values. Defaults come from PostgreSQL, then from
//! `tusk.conf`; `SET` changes the session value, `RESET` restores the default.
//! Settings fixed at startup (`shared_buffers`, `huge_pages`) can be shown but
//! not set.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq)]
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
    /// A duration in milliseconds, shown with the largest exact unit.
    TimeMs {
        min: i64,
        max: i64,
    },
    /// A startup setting shown as written in tusk.conf (the storage layer
    /// parses and checks it when the database opens).
    Startup,
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
        name: "lock_timeout",
        default: "0",
        kind: Kind::TimeMs {
            min: 0,
            max: 2147483647,
        },
        read_only: false,
        description: "longest wait for a lock, in ms (0: no limit)",
    },
    Def {
        name: "deadlock_timeout",
        default: "1s",
        kind: Kind::TimeMs {
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
        name: "default_transaction_read_only",
        default: "off",
        kind: Kind::Bool,
        read_only: false,
        description: "whether new transactions are read-only",
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
        description: "accepted for compatibility; hash join is the only join method",
    },
];

fn def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name == name)
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

/// Parses a duration as PostgreSQL does for a setting in milliseconds: a
/// number (fractions allowed) with an optional unit `us`, `ms`, `s`, `min`,
/// `h` or `d` (none: ms), rounded to whole milliseconds (half to even).
fn parse_ms(v: &str) -> Option<i64> {
    let v = v.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: f64 = num.parse().ok()?;
    let factor = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return None,
    };
    let ms = (n * factor).round_ties_even();
    (ms.abs() < 1e18).then_some(ms as i64)
}

/// Formats milliseconds as PostgreSQL shows them: the largest unit that
/// divides the amount.
pub fn format_ms(ms: i64) -> String {
    if ms <= 0 {
        return ms.to_string();
    }
    for (unit, div) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1000),
    ] {
        if ms % div == 0 {
            return format!("{}{unit}", ms / div);
        }
    }
    format!("{ms}ms")
}

/// A session's settings.
#[derive(Debug, Clone)]
pub struct Gucs {
    values: BTreeMap<&'static str, String>,
    defaults: BTreeMap<&'static str, String>,
}

impl Gucs {
    /// Settings with PostgreSQL's defaults overridden by `conf` (tusk.conf)
    /// and the startup facts in `fixed`.
    pub fn new(conf: &BTreeMap<String, String>, fixed: &[(&str, String)]) -> Result<Gucs, String> {
        let mut defaults = BTreeMap::new();
        for d in DEFS {
            defaults.insert(d.name, d.default.to_string());
        }
        let mut g = Gucs {
            values: defaults.clone(),
            defaults,
        };
        for (k, v) in conf {
            if let Some(d) = def(k) {
                let canon = g.validate(d, v)?;
                g.defaults.insert(d.name, canon);
            }
        }
        for (k, v) in fixed {
            if let Some(d) = def(k) {
                g.defaults.insert(d.name, v.clone());
            }
        }
        g.values = g.defaults.clone();
        Ok(g)
    }

    fn validate(&self, d: &Def, raw: &str) -> Result<String, String> {
        let invalid = || format!("invalid value for parameter \"{}\": \"{raw}\"", d.name);
        match d.kind {
            Kind::MemoryKb { min, max } => {
                let kb = parse_kb(raw).ok_or_else(invalid)?;
                if kb < min || kb > max {
                    return Err(format!(
                        "{kb} kB is outside the valid range for parameter \"{}\" ({min} .. {max})",
                        d.name
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
                        "{n} is outside the valid range for parameter \"{}\" ({min} .. {max})",
                        d.name
                    ));
                }
                Ok(n.to_string())
            }
            Kind::Real { min, max } => {
                let n: f64 = raw.trim().parse().map_err(|_| invalid())?;
                if !(min..=max).contains(&n) {
                    return Err(format!(
                        "{n} is outside the valid range for parameter \"{}\" ({min} .. {max})",
                        d.name
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
                    _ if options.iter().any(|o| o.contains(' ')) => Err(format!(
                        "{}\u{0}Available values: {}.",
                        invalid(),
                        options.join(", ")
                    )),
                    _ => Err(invalid()),
                }
            }
            Kind::TimeMs { min, max } => {
                let ms = parse_ms(raw).ok_or_else(invalid)?;
                if ms < min || ms > max {
                    return Err(format!(
                        "{ms} ms is outside the valid range for parameter \"{}\" ({min} .. {max})",
                        d.name
                    ));
                }
                Ok(format_ms(ms))
            }
            Kind::Bool => match tusk_exec::cast::parse_bool(raw) {
                Ok(true) => Ok("on".into()),
                Ok(false) => Ok("off".into()),
                Err(_) => Err(format!("parameter \"{}\" requires a Boolean value", d.name)),
            },
        }
    }

    fn lookup(name: &str) -> Result<&'static Def, String> {
        def(&name.to_ascii_lowercase())
            .ok_or_else(|| format!("unrecognized configuration parameter \"{name}\""))
    }

    pub fn set(&mut self, name: &str, raw: &str) -> Result<(), String> {
        let d = Self::lookup(name)?;
        if d.read_only {
            return Err(format!(
                "parameter \"{}\" cannot be changed without restarting the server",
                d.name
            ));
        }
        let v = self.validate(d, raw)?;
        self.values.insert(d.name, v);
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
        Ok(())
    }

    pub fn reset_all(&mut self) {
        for d in DEFS.iter().filter(|d| !d.read_only) {
            self.values.insert(d.name, self.defaults[d.name].clone());
        }
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

    fn kb(&self, name: &str) -> i64 {
        parse_kb(&self.values[name]).unwrap_or(4096)
    }

    pub fn work_mem_bytes(&self) -> usize {
        (self.kb("work_mem") as usize) * 1024
    }

    /// `maintenance_work_mem` in bytes (VACUUM's dead-TID memory).
    pub fn maintenance_work_mem_bytes(&self) -> usize {
        (self.kb("maintenance_work_mem") as usize) * 1024
    }

    pub fn enable_indexscan(&self) -> bool {
        self.values["enable_indexscan"] == "on"
    }

    pub fn enable_seqscan(&self) -> bool {
        self.values["enable_seqscan"] == "on"
    }

    pub fn hash_join_prefetch(&self) -> bool {
        self.values["tusk.hash_join_prefetch"] == "on"
    }

    /// `tusk.hash_chunk_size` in bytes.
    pub fn hash_chunk_size(&self) -> usize {
        (self.kb("tusk.hash_chunk_size") as usize) * 1024
    }

    /// `min_parallel_table_scan_size` in bytes.
    pub fn min_parallel_table_scan_size(&self) -> usize {
        (self.kb("min_parallel_table_scan_size").max(0) as usize) * 1024
    }

    /// `max_parallel_workers_per_gather`.
    pub fn max_parallel_workers(&self) -> usize {
        self.values["max_parallel_workers_per_gather"]
            .parse()
            .unwrap_or(0)
    }

    /// `temp_file_limit` in bytes, `None` when unlimited.
    pub fn temp_file_limit_bytes(&self) -> Option<u64> {
        let kb = self.kb("temp_file_limit");
        (kb >= 0).then(|| kb as u64 * 1024)
    }

    /// A setting in milliseconds as a duration (`None` for 0).
    fn duration(&self, name: &str) -> Option<std::time::Duration> {
        let ms = parse_ms(&self.values[name]).unwrap_or(0);
        (ms > 0).then(|| std::time::Duration::from_millis(ms as u64))
    }

    /// `lock_timeout` (`None`: wait forever).
    pub fn lock_timeout(&self) -> Option<std::time::Duration> {
        self.duration("lock_timeout")
    }

    /// `deadlock_timeout`.
    pub fn deadlock_timeout(&self) -> std::time::Duration {
        self.duration("deadlock_timeout")
            .unwrap_or(std::time::Duration::from_secs(1))
    }

    /// `synchronous_commit`: anything but `off` waits for the flush.
    pub fn synchronous_commit(&self) -> bool {
        self.values["synchronous_commit"] != "off"
    }

    /// `default_transaction_isolation` as SHOW prints it.
    pub fn default_transaction_isolation(&self) -> &str {
        &self.values["default_transaction_isolation"]
    }

    /// `default_transaction_read_only`.
    pub fn default_transaction_read_only(&self) -> bool {
        self.values["default_transaction_read_only"] == "on"
    }

    pub fn hash_mem_multiplier(&self) -> f64 {
        self.values["hash_mem_multiplier"].parse().unwrap_or(2.0)
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
        assert_eq!(format_kb(1536), "1536kB");
        assert_eq!(format_kb(1 << 20), "1GB");
    }
}
