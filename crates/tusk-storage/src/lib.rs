//! # tusk-storage: files, pages, buffers, heap, transactions, catalog
//!
//! A [`Database`] is an open data directory:
//!
//! ```text
//! DATADIR/
//!   tusk.conf     settings read at startup (shared_buffers, huge_pages, work_mem, ...)
//!   tusk.lock     held with flock() while a process has the directory open
//!   catalog       tables, columns and indexes (see `catalog`)
//!   pg_xact       commit status, one byte per transaction id (see `clog`)
//!   pg_control    redo point of the last checkpoint (see `wal::control`)
//!   pg_wal/       write-ahead log segments (see `wal`)
//!   base/OID      relation files, 8 kB pages (see `page`, `smgr`)
//!   tmp/          spill files of running queries
//! ```
//!
//! Pages are cached in the shared buffer pool (`bufmgr`), which lives in the
//! main shared memory region (`tusk-shmem`) and finds pages through the buffer
//! mapping table (`tusk-chash`). The main region also holds the
//! `min_dynamic_shared_memory` pool from which [`Database::dsm`] carves
//! dynamic shared memory segments (parallel query's DSA areas).
//!
//! ## Transactions
//!
//! PostgreSQL's model, for any number of concurrent sessions; `xact` is the
//! guide to the API the SQL layer uses. The pieces:
//!
//! * `tuple`: the header every row version carries — `xmin`/`xmax`, their
//!   command ids, the `ctid` link to a newer version and the infomask that
//!   says whether `xmax` deleted, updated or only locked the row;
//! * `clog` (`pg_xact`) and `procarray`: transaction statuses, running
//!   transactions, xid assignment, VACUUM's horizon; `snapshot`: MVCC
//!   snapshots and the visibility rule; `txn`: the two tied together, and
//!   the single-statement write path of the time before transactions;
//! * `lock`: table, transaction and tuple locks with wait queues, timeouts
//!   and deadlock detection; `rowlock`: row lock modes and shared row locks;
//! * `xact`: a session's transaction — snapshots per statement, command ids,
//!   savepoints, locks, transactional DDL, commit and abort; `heapam`: row
//!   updates, deletes and locks that wait for concurrent writers and report
//!   what they found (READ COMMITTED's re-check and REPEATABLE READ's
//!   serialization failures are built on it); `commit`: commit records, the
//!   checkpoint's interplay with running transactions;
//! * `pgstat`, `autovacuum`, `walwriter`: activity counters, the autovacuum
//!   thread, the background WAL flush for asynchronous commits.
//!
//! Bulk loads (COPY FROM) fill whole pages privately and log each as one
//! page image (`bulk`), or nothing for a relation the running transaction
//! created.
//!
//! Indexes are B+trees on one or more columns of any indexable type
//! (`btree`), whose entries are (key, TID) pairs with keys encoded so that
//! their bytes sort as PostgreSQL sorts the values; unique indexes check
//! for live duplicates and wait for writers still running. DELETE only stamps `xmax`; VACUUM (`vacuum`) prunes
//! dead tuples, collects their TIDs in `tusk-radix`'s TidStore, removes the
//! matching index entries, frees the line pointers and records the pages'
//! room in the free-space map (`fsm`), where inserts look first.
//!
//! ## Durability
//!
//! Every page change is described by a WAL record (`wal`) before the page
//! may be written, and a commit writes a commit record and (with
//! `synchronous_commit = on`, the default) flushes the WAL before it reports
//! success — concurrent commits share flushes (group commit); data pages are written later, by eviction, checkpoints
//! (`CHECKPOINT`, every `max_wal_size` of WAL or `checkpoint_timeout`) and
//! shutdown. After a crash, [`Database::open`] replays the WAL from the last
//! checkpoint (`recovery`, which states the invariants and the algorithm).

pub mod autovacuum;
pub mod btree;
pub mod bufmgr;
pub mod buftable;
pub mod bulk;
pub mod catalog;
pub mod clog;
pub mod columnar;
mod commit;
pub mod datatype;
pub mod fasthash;
pub mod fsm;
pub mod heap;
pub mod heapam;
pub mod lock;
pub mod page;
mod pglz;
pub mod pgstat;
pub mod procarray;
pub mod prune;
pub mod recovery;
pub mod rowlock;
pub mod sequence;
pub mod smgr;
pub mod snapshot;
pub mod statistics;
pub mod toast;
pub mod tuple;
pub mod txn;
pub mod uring;
pub mod vacuum;
pub mod visible;
pub mod wait_event;
pub mod wal;
mod waldirect;
pub mod walwriter;
pub mod xact;
mod xidtree;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

pub use bufmgr::BufferPool;
pub use catalog::{
    AccessMethod, Catalog, CheckDef, ColumnDef, DdlChange, IndexColumn, IndexDef, IndexKind,
    TableDef,
};
pub use datatype::{
    DataType, ElementType, IntervalMod, SqlType, CHAR_ARRAY, FLOAT4_ARRAY, INT2_ARRAY, NAME_ARRAY,
    OID_ARRAY, REGTYPE_ARRAY, TEXT_ARRAY,
};
pub use heap::Tid;
pub use heapam::{LatestOutcome, RowWait, TmResult, UpdateKind, UpdateOutcome};
pub use lock::{CancelCheck, LockError, LockMode, LockTag, WaitOptions};
pub use recovery::{RecoveryOptions, RecoveryPrefetch, RecoveryStats};
pub use rowlock::RowLockMode;
pub use snapshot::{CommandId, Snapshot};
pub use tusk_shmem::HugePages;
pub use txn::{TxnManager, WriteTxn, Xid};
pub use wal::Wal;
pub use xact::{IsolationLevel, Transaction, TxnOptions};

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Shmem(#[from] tusk_shmem::ShmemError),
    #[error("{0}")]
    Other(String),
    /// An error the client sees with its own SQLSTATE (serialization
    /// failures, deadlocks, lock timeouts, ...).
    #[error("{}", .0.message)]
    Report(Box<ErrorReport>),
}

/// An error as PostgreSQL reports it: SQLSTATE, message, DETAIL, HINT.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReport {
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl StorageError {
    pub fn io(context: String, source: std::io::Error) -> StorageError {
        StorageError::Io { context, source }
    }

    /// An error with SQLSTATE `code` and `message`.
    pub fn report(code: &'static str, message: impl Into<String>) -> StorageError {
        StorageError::Report(Box::new(ErrorReport {
            code,
            message: message.into(),
            detail: None,
            hint: None,
        }))
    }

    /// The SQLSTATE, for errors that carry one.
    pub fn sqlstate(&self) -> Option<&'static str> {
        match self {
            StorageError::Report(r) => Some(r.code),
            _ => None,
        }
    }

    /// The DETAIL and HINT lines, for errors that carry them.
    pub fn report_details(&self) -> Option<&ErrorReport> {
        match self {
            StorageError::Report(r) => Some(r),
            _ => None,
        }
    }
}

/// Settings read at startup from `tusk.conf` (and overridable by the caller).
#[derive(Debug, Clone)]
pub struct StartupOptions {
    /// Size of the buffer pool in bytes (`shared_buffers`).
    pub shared_buffers: usize,
    pub huge_pages: HugePages,
    /// Which buffer mapping table serves the pool (`tusk.buffer_mapping`).
    pub buffer_mapping: tusk_chash::MappingKind,
    /// Bytes of the main region set aside for DSM segments
    /// (`min_dynamic_shared_memory`, in MB when no unit is given).
    pub min_dynamic_shared_memory: usize,
    pub durability: DurabilityOptions,
}

/// WAL, checkpoint and recovery settings (`tusk.conf`).
#[derive(Debug, Clone, Copy)]
pub struct DurabilityOptions {
    pub synchronous_commit: bool,
    pub wal: wal::WalOptions,
    /// WAL written since the last checkpoint's redo point that triggers the
    /// next checkpoint (`max_wal_size`).
    pub max_wal_size: u64,
    pub checkpoint_timeout: Duration,
    pub recovery: RecoveryOptions,
}

impl Default for DurabilityOptions {
    fn default() -> Self {
        DurabilityOptions {
            synchronous_commit: true,
            wal: wal::WalOptions::default(),
            max_wal_size: 1 << 30,
            checkpoint_timeout: Duration::from_secs(300),
            recovery: RecoveryOptions::default(),
        }
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Parses a duration as PostgreSQL does (`300`, `30s`, `5min`, `1h`; a bare
/// number is in seconds).
fn parse_duration(v: &str) -> Option<Duration> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "ms" => return Some(Duration::from_millis(n)),
        "min" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        _ => return None,
    };
    Some(Duration::from_secs(secs))
}

impl DurabilityOptions {
    fn from_settings(settings: &BTreeMap<String, String>) -> Result<Self, StorageError> {
        let mut o = DurabilityOptions::default();
        let invalid = |k: &str, v: &str| {
            StorageError::Other(format!("invalid value for parameter \"{k}\": \"{v}\""))
        };
        for (k, v) in settings {
            let bad = || invalid(k, v);
            match k.as_str() {
                "synchronous_commit" => {
                    o.synchronous_commit = match v.trim() {
                        "local" | "remote_write" | "remote_apply" => true,
                        _ => parse_bool(v).ok_or_else(bad)?,
                    }
                }
                "full_page_writes" => o.wal.full_page_writes = parse_bool(v).ok_or_else(bad)?,
                "wal_buffers" => {
                    o.wal.buffer_size = parse_memory(v, 8192)
                        .filter(|&b| b >= 64 << 10)
                        .ok_or_else(bad)? as usize
                }
                "max_wal_size" => {
                    o.max_wal_size = parse_memory(v, 1 << 20)
                        .filter(|&b| b >= 2 << 20)
                        .ok_or_else(bad)?
                }
                "checkpoint_timeout" => {
                    o.checkpoint_timeout = parse_duration(v)
                        .filter(|d| *d >= Duration::from_secs(1))
                        .ok_or_else(bad)?
                }
                "recovery_prefetch" => {
                    o.recovery.prefetch = RecoveryPrefetch::parse(v).ok_or_else(bad)?
                }
                "maintenance_io_concurrency" => {
                    o.recovery.maintenance_io_concurrency = v
                        .trim()
                        .parse()
                        .ok()
                        .filter(|&n: &usize| n <= 1000)
                        .ok_or_else(bad)?
                }
                "tusk.recovery_prefetch_method" => {
                    o.recovery.method = recovery::PrefetchMethod::parse(v).ok_or_else(bad)?
                }
                "tusk.recovery_direct_io" => {
                    o.recovery.direct_io = parse_bool(v).ok_or_else(bad)?
                }
                "wal_decode_buffer_size" => {
                    o.recovery.wal_decode_buffer_size = parse_memory(v, 1)
                        .filter(|&b| b >= 64 << 10)
                        .ok_or_else(bad)?
                        as usize
                }
                _ => {}
            }
        }
        Ok(o)
    }
}

impl Default for StartupOptions {
    fn default() -> Self {
        StartupOptions {
            shared_buffers: 128 << 20,
            huge_pages: HugePages::Try,
            buffer_mapping: tusk_chash::MappingKind::default(),
            min_dynamic_shared_memory: 0,
            durability: DurabilityOptions::default(),
        }
    }
}

const DEFAULT_CONF: &str = "\
# tusk configuration file: `name = value` lines, read at startup.
# Settings that can also be changed with SET (work_mem, ...) take effect as
# session defaults.
#shared_buffers = 128MB
#huge_pages = try
#tusk.buffer_mapping = chash		# chash, partitioned or global
#min_dynamic_shared_memory = 0MB
#work_mem = 4MB
#synchronous_commit = on
#full_page_writes = on
#wal_buffers = 4MB
#max_wal_size = 1GB
#checkpoint_timeout = 5min
#wal_writer_delay = 200ms
#autovacuum = on
#autovacuum_naptime = 1min
#autovacuum_vacuum_threshold = 50
#autovacuum_vacuum_scale_factor = 0.2
#autovacuum_vacuum_insert_threshold = 1000
#autovacuum_vacuum_insert_scale_factor = 0.2
#autovacuum_analyze_threshold = 50
#autovacuum_analyze_scale_factor = 0.1
#recovery_prefetch = try
#maintenance_io_concurrency = 10
#wal_decode_buffer_size = 512kB
#tusk.recovery_prefetch_method = io_uring	# io_uring (fadvise if unavailable), fadvise or threads
#tusk.recovery_direct_io = on		# io_uring reads bypass the page cache (O_DIRECT)
";

/// Parses a memory size as PostgreSQL does (`8kB`, `128MB`, `1GB`; a bare
/// number is in `unit_bytes`).
pub fn parse_memory(value: &str, unit_bytes: u64) -> Option<u64> {
    let v = value.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" => unit_bytes,
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// An open data directory.
pub struct Database {
    dir: PathBuf,
    _lock: File,
    pub pool: BufferPool,
    pub smgr: Arc<smgr::Smgr>,
    pub txn: TxnManager,
    /// Dynamic shared memory: segments from the `min_dynamic_shared_memory`
    /// pool, fresh ones beyond it. Parallel query builds its DSA areas on it
    /// (`tusk_shmem::DsaArea::create(&db.dsm, ...)`).
    pub dsm: tusk_shmem::Dsm,
    /// The committed catalog; transactions see copies of it with their own
    /// DDL applied (see `xact`).
    catalog: RwLock<Arc<Catalog>>,
    settings: BTreeMap<String, String>,
    options: StartupOptions,
    pub wal: Arc<Wal>,
    /// Table, transaction and tuple locks (see `lock`).
    pub locks: lock::LockManager,
    /// Holders of shared row locks (see `rowlock`).
    pub share_locks: rowlock::ShareLocks,
    /// `pg_stat_user_tables` counters (see `pgstat`).
    pub stats: pgstat::Stats,
    /// Who deleted, updated or locked rows of columnar row groups (see
    /// `columnar::claims`).
    pub columnar: columnar::registry::Registry,
    /// What ANALYZE learned, for the planner (see `statistics`).
    pub statistics: statistics::StatisticsStore,
    /// Tables dropped by the running single-statement writer, removed once
    /// it commits.
    pending_drops: Mutex<Vec<(Xid, u32)>>,
    /// Relations created by the running single-statement writer: unlogged
    /// until it commits.
    new_relations: Mutex<Vec<(Xid, u32)>>,
    /// DDL records of running transactions (see `commit`).
    pending_ddl: Mutex<Vec<commit::PendingDdl>>,
    /// Held shared by committers from their commit record to their final
    /// status, exclusively by a checkpoint choosing its redo point (see
    /// `commit`).
    commit_gate: RwLock<()>,
    checkpoint_lock: Mutex<()>,
    last_checkpoint: Mutex<Instant>,
    recovery_stats: RecoveryStats,
    autovacuum: Mutex<Option<autovacuum::Launcher>>,
    walwriter: Mutex<Option<walwriter::WalWriter>>,
}

/// Read access to the committed catalog (derefs to [`Catalog`]).
pub struct CatalogRead<'a>(RwLockReadGuard<'a, Arc<Catalog>>);

impl std::ops::Deref for CatalogRead<'_> {
    type Target = Catalog;
    fn deref(&self) -> &Catalog {
        &self.0
    }
}

/// Write access to the committed catalog (the single-statement path).
pub struct CatalogWrite<'a>(RwLockWriteGuard<'a, Arc<Catalog>>);

impl std::ops::Deref for CatalogWrite<'_> {
    type Target = Catalog;
    fn deref(&self) -> &Catalog {
        &self.0
    }
}

impl std::ops::DerefMut for CatalogWrite<'_> {
    fn deref_mut(&mut self) -> &mut Catalog {
        Arc::make_mut(&mut self.0)
    }
}

/// The process's limit on open files, raised once to the hard limit.
///
/// A spilling hash join keeps one file per partition open (512 per side at
/// the default `work_mem`, per participant in a Parallel Hash Join), more
/// than the 1024 descriptors many systems allow by default; PostgreSQL caps
/// its own use with `max_files_per_process` and a descriptor cache instead.
pub fn open_file_limit() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        use rustix::process::{getrlimit, setrlimit, Resource};
        let mut l = getrlimit(Resource::Nofile);
        if l.current < l.maximum {
            l.current = l.maximum;
            let _ = setrlimit(Resource::Nofile, l);
        }
        getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
    })
}

/// How long `Database::open` waits for a busy data directory lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// How often it retries meanwhile.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(20);

impl Database {
    /// Opens `dir`, creating it on first use. Settings in `tusk.conf` apply
    /// unless `overrides` names them.
    pub fn open(dir: &Path, overrides: &[(String, String)]) -> Result<Arc<Database>, StorageError> {
        let io = |what: &str, p: &Path, e| {
            StorageError::io(format!("could not {what} \"{}\"", p.display()), e)
        };
        std::fs::create_dir_all(dir).map_err(|e| io("create directory", dir, e))?;
        let base = dir.join("base");
        std::fs::create_dir_all(&base).map_err(|e| io("create directory", &base, e))?;
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| io("create directory", &tmp, e))?;
        let conf = dir.join("tusk.conf");
        if !conf.exists() {
            std::fs::write(&conf, DEFAULT_CONF).map_err(|e| io("write", &conf, e))?;
        }

        open_file_limit();
        let lock_path = dir.join("tusk.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io("open", &lock_path, e))?;
        // A process killed a moment ago may still hold the lock while the
        // kernel tears it down (its io_uring workers share its file table and
        // exit after it is reaped), so a busy lock is retried briefly before
        // the directory is declared in use.
        let mut waited = std::time::Duration::ZERO;
        while rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .is_err()
        {
            if waited >= LOCK_WAIT {
                return Err(StorageError::Other(format!(
                    "data directory \"{}\" is in use by another tusk process",
                    dir.display()
                )));
            }
            std::thread::sleep(LOCK_POLL);
            waited += LOCK_POLL;
        }
        // Spill files of a crashed run are garbage now.
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }

        let mut settings = BTreeMap::new();
        let text = std::fs::read_to_string(&conf).map_err(|e| io("read", &conf, e))?;
        for (lineno, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(StorageError::Other(format!(
                    "syntax error in file \"{}\" line {}",
                    conf.display(),
                    lineno + 1
                )));
            };
            let v = v.trim().trim_matches('\'').to_string();
            settings.insert(k.trim().to_ascii_lowercase(), v);
        }
        for (k, v) in overrides {
            settings.insert(k.to_ascii_lowercase(), v.clone());
        }
        let mut options = StartupOptions::default();
        if let Some(v) = settings.get("shared_buffers") {
            options.shared_buffers = parse_memory(v, 8192)
                .filter(|&b| b >= 16 * 8192)
                .ok_or_else(|| {
                    StorageError::Other(format!(
                        "invalid value for parameter \"shared_buffers\": \"{v}\""
                    ))
                })? as usize;
        }
        if let Some(v) = settings.get("huge_pages") {
            options.huge_pages = HugePages::parse(v).ok_or_else(|| {
                StorageError::Other(format!(
                    "invalid value for parameter \"huge_pages\": \"{v}\""
                ))
            })?;
        }
        if let Some(v) = settings.get("tusk.buffer_mapping") {
            options.buffer_mapping = tusk_chash::MappingKind::parse(v).ok_or_else(|| {
                StorageError::Other(format!(
                    "invalid value for parameter \"tusk.buffer_mapping\": \"{v}\""
                ))
            })?;
        }
        if let Some(v) = settings.get("min_dynamic_shared_memory") {
            options.min_dynamic_shared_memory = parse_memory(v, 1 << 20)
                .and_then(|b| usize::try_from(b).ok())
                .ok_or_else(|| {
                    StorageError::Other(format!(
                        "invalid value for parameter \"min_dynamic_shared_memory\": \"{v}\""
                    ))
                })?;
        }

        options.durability = DurabilityOptions::from_settings(&settings)?;

        let nbuffers = options.shared_buffers / page::PAGE_SIZE;
        let mut layout = tusk_shmem::RegionLayout::new();
        let pool_layout = bufmgr::PoolLayout::reserve(&mut layout, nbuffers);
        let table_layout =
            buftable::BufTableLayout::reserve(&mut layout, nbuffers, options.buffer_mapping);
        let dsm_area = tusk_shmem::Dsm::reserve(&mut layout, options.min_dynamic_shared_memory);
        let region = Arc::new(tusk_shmem::MainRegion::create(layout, options.huge_pages)?);
        let dsm = tusk_shmem::Dsm::new(
            dsm_area.map(|area| (region.clone(), area)),
            tusk_shmem::DsmConfig {
                huge_pages: options.huge_pages,
                ..tusk_shmem::DsmConfig::default()
            },
        );
        let smgr = Arc::new(smgr::Smgr::new(base));
        let mapping = table_layout.build(&region);
        let pool = BufferPool::new(region, pool_layout, mapping, smgr.clone());
        let txn = TxnManager::open(&dir.join("pg_xact"))?;
        let catalog = RwLock::new(Arc::new(Catalog::open(&dir.join("catalog"))?));
        let (wal, recovery_stats) = recover(dir, &pool, &smgr, &txn, &catalog, &options)?;
        let autovacuum_options = autovacuum::AutovacuumOptions::from_settings(&settings)?;
        let db = Database {
            dir: dir.to_path_buf(),
            _lock: lock,
            pool,
            smgr,
            txn,
            dsm,
            catalog,
            settings,
            options,
            wal,
            locks: lock::LockManager::default(),
            share_locks: rowlock::ShareLocks::default(),
            stats: pgstat::Stats::default(),
            columnar: Default::default(),
            statistics: statistics::StatisticsStore::open(dir),
            pending_drops: Mutex::new(Vec::new()),
            new_relations: Mutex::new(Vec::new()),
            pending_ddl: Mutex::new(Vec::new()),
            commit_gate: RwLock::new(()),
            checkpoint_lock: Mutex::new(()),
            last_checkpoint: Mutex::new(Instant::now()),
            recovery_stats,
            autovacuum: Mutex::new(None),
            walwriter: Mutex::new(None),
        };
        // End-of-recovery checkpoint (also writes pg_control the first time).
        db.checkpoint()?;
        let delay = match db.settings.get("wal_writer_delay") {
            // A bare number is in milliseconds for this one, as in PostgreSQL.
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .map(Duration::from_millis)
                .or_else(|| parse_duration(v))
                .filter(|d| (Duration::from_millis(1)..=Duration::from_secs(10)).contains(d))
                .ok_or_else(|| {
                    StorageError::Other(format!(
                        "invalid value for parameter \"wal_writer_delay\": \"{v}\""
                    ))
                })?,
            None => Duration::from_millis(200),
        };
        *db.walwriter.lock().unwrap_or_else(|e| e.into_inner()) = Some(
            walwriter::WalWriter::start(db.wal.clone(), delay)
                .map_err(|e| StorageError::io("could not start the WAL writer".into(), e))?,
        );
        let db = Arc::new(db);
        if autovacuum_options.enabled {
            *db.autovacuum.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(autovacuum::Launcher::start(&db, autovacuum_options)?);
        }
        Ok(db)
    }

    /// What the recovery at open did (all zero after a clean shutdown).
    pub fn recovery_stats(&self) -> &RecoveryStats {
        &self.recovery_stats
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Directory for spill files.
    pub fn temp_dir(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// Settings from `tusk.conf` (lower-case names).
    pub fn settings(&self) -> &BTreeMap<String, String> {
        &self.settings
    }

    pub fn options(&self) -> &StartupOptions {
        &self.options
    }

    /// The committed catalog, locked for reading (short uses only: a
    /// statement keeps [`Database::catalog_snapshot`] instead).
    pub fn catalog(&self) -> CatalogRead<'_> {
        CatalogRead(self.catalog.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The committed catalog, locked for changing (the single-statement
    /// path and oid allocation; transactions change it at commit).
    pub fn catalog_mut(&self) -> CatalogWrite<'_> {
        CatalogWrite(self.catalog.write().unwrap_or_else(|e| e.into_inner()))
    }

    /// The committed catalog as of now, without holding a lock.
    pub fn catalog_snapshot(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Registers ANALYZE for autovacuum to run on tables whose changes pass
    /// the analyze threshold (see `autovacuum`).
    pub fn set_analyze_hook(&self, hook: autovacuum::AnalyzeHook) {
        if let Some(l) = self
            .autovacuum
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            l.set_analyze_hook(hook);
        }
    }

    /// Starts a transaction (see `xact`).
    pub fn begin(self: &Arc<Self>, opts: TxnOptions) -> Transaction {
        Transaction::begin(self, opts)
    }

    /// Number of blocks of a relation.
    pub fn nblocks(&self, rel: u32) -> Result<u32, StorageError> {
        self.smgr.nblocks(rel)
    }
}

/// Replays the WAL from the last checkpoint (see `recovery`) and opens it
/// for appending.
fn recover(
    dir: &Path,
    pool: &BufferPool,
    smgr: &smgr::Smgr,
    txn: &TxnManager,
    catalog: &RwLock<Arc<Catalog>>,
    options: &StartupOptions,
) -> Result<(Arc<Wal>, RecoveryStats), StorageError> {
    let wal_dir = dir.join("pg_wal");
    let redo = wal::control::read(&dir.join("pg_control"))?.unwrap_or(0);
    let d = &options.durability;
    let outcome = recovery::replay(&wal_dir, redo, pool, smgr, txn, catalog, d.recovery)?;
    if outcome.stats.records > 0 {
        eprintln!("LOG:  {}", outcome.stats.summary());
    }
    let wal = Arc::new(Wal::open(&wal_dir, outcome.end, redo, d.wal)?);
    pool.set_wal(wal.clone());
    txn.set_wal(wal.clone());
    Ok((wal, outcome.stats))
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Some(l) = self
            .autovacuum
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            l.stop();
        }
        drop(
            self.walwriter
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let _ = self.checkpoint();
    }
}
