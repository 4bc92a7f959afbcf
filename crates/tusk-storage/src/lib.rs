//! # tusk-storage: files, pages, buffers, heap, transactions, catalog
//!
//! A [`Database`] is an open data directory:
//!
//! ```text
//! DATADIR/
//!   tusk.conf     settings read at startup (shared_buffers, huge_pages, work_mem, ...)
//!   tusk.lock     held with flock() while a process has the directory open
//!   catalog       tables, columns and indexes (see `catalog`)
//!   pg_xact       commit status, one byte per transaction id (see `txn`)
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
//! dynamic shared memory segments (parallel query's DSA areas). Heap tuples carry `xmin`/`xmax` (`tuple`,
//! `heap`) and are filtered through snapshots (`txn`).
//!
//! Indexes are B+trees on one integer column (`btree`), whose entries are
//! (value, TID) pairs. DELETE only stamps `xmax`; VACUUM (`vacuum`) prunes
//! dead tuples, collects their TIDs in `tusk-radix`'s TidStore, removes the
//! matching index entries, frees the line pointers and records the pages'
//! room in the free-space map (`fsm`), where inserts look first.
//!
//! ## Durability
//!
//! Every page change is described by a WAL record (`wal`) before the page
//! may be written, and a commit writes a commit record and (with
//! `synchronous_commit = on`, the default) flushes the WAL before it reports
//! success; data pages are written later, by eviction, checkpoints
//! (`CHECKPOINT`, every `max_wal_size` of WAL or `checkpoint_timeout`) and
//! shutdown. After a crash, [`Database::open`] replays the WAL from the last
//! checkpoint (`recovery`, which states the invariants and the algorithm).

pub mod btree;
pub mod bufmgr;
pub mod buftable;
pub mod catalog;
pub mod fsm;
pub mod heap;
pub mod page;
pub mod recovery;
pub mod smgr;
pub mod tuple;
pub mod txn;
pub mod uring;
pub mod vacuum;
pub mod visible;
pub mod wal;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

pub use bufmgr::BufferPool;
pub use catalog::{Catalog, ColumnDef, DataType, IndexDef, SqlType, TableDef};
pub use heap::Tid;
pub use recovery::{RecoveryOptions, RecoveryPrefetch, RecoveryStats};
pub use tusk_shmem::HugePages;
pub use txn::{Snapshot, TxnManager, WriteTxn, Xid};
pub use wal::Wal;

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
}

impl StorageError {
    pub fn io(context: String, source: std::io::Error) -> StorageError {
        StorageError::Io { context, source }
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
    catalog: RwLock<Catalog>,
    settings: BTreeMap<String, String>,
    options: StartupOptions,
    pub wal: Arc<Wal>,
    /// Tables dropped by the running writer, removed once it commits.
    pending_drops: Mutex<Vec<(Xid, u32)>>,
    /// Relations created by the running writer: unlogged until it commits.
    new_relations: Mutex<Vec<(Xid, u32)>>,
    last_checkpoint: Mutex<Instant>,
    recovery_stats: RecoveryStats,
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
        let catalog = RwLock::new(Catalog::open(&dir.join("catalog"))?);
        let (wal, recovery_stats) = recover(dir, &pool, &smgr, &txn, &catalog, &options)?;
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
            pending_drops: Mutex::new(Vec::new()),
            new_relations: Mutex::new(Vec::new()),
            last_checkpoint: Mutex::new(Instant::now()),
            recovery_stats,
        };
        // End-of-recovery checkpoint (also writes pg_control the first time).
        db.checkpoint()?;
        Ok(Arc::new(db))
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

    pub fn catalog(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn catalog_mut(&self) -> RwLockWriteGuard<'_, Catalog> {
        self.catalog.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes a writing transaction's changes durable (a flushed commit
    /// record, unless `synchronous_commit = off`) and visible. Tables it
    /// dropped disappear here, after the commit record is durable.
    pub fn commit(&self, txn: WriteTxn<'_>) -> Result<(), StorageError> {
        let xid = txn.xid();
        // Relations this transaction created were not logged: make them
        // durable before the commit record can be.
        let created: Vec<(Xid, u32)> =
            std::mem::take(&mut *self.new_relations.lock().unwrap_or_else(|e| e.into_inner()));
        for &(x, oid) in &created {
            if x == xid && self.smgr.exists(oid) {
                self.pool.flush_relation(oid)?;
                self.smgr.sync(oid)?;
            }
            self.pool.set_unlogged(oid, false);
        }
        let lsn = self
            .wal
            .insert(wal::RecordType::Commit, xid, None, false, &[])?;
        let drops: Vec<u32> = {
            let mut p = self.pending_drops.lock().unwrap_or_else(|e| e.into_inner());
            let mine = p
                .iter()
                .filter(|(x, _)| *x == xid)
                .map(|&(_, o)| o)
                .collect();
            p.clear();
            mine
        };
        if self.options.durability.synchronous_commit || !drops.is_empty() {
            self.wal.flush(lsn)?;
        }
        for oid in drops {
            let gone = self.catalog_mut().remove_oid(oid)?;
            for rel in gone.into_iter().chain([oid]) {
                self.pool.drop_relation(rel);
                self.smgr.unlink(rel)?;
            }
        }
        txn.commit()?;
        self.maybe_checkpoint()
    }

    /// Logs the creation of `table` by `txn`; call before creating its file.
    /// Until `txn` commits, changes to the new relation are not logged (an
    /// abort or crash discards the whole relation anyway); the commit writes
    /// and fsyncs it instead.
    pub fn log_create_table(
        &self,
        txn: &WriteTxn<'_>,
        table: &TableDef,
    ) -> Result<(), StorageError> {
        self.new_relations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((txn.xid(), table.oid));
        self.pool.set_unlogged(table.oid, true);
        self.log_ddl(
            wal::RecordType::CreateTable,
            txn,
            &catalog::encode_table(table),
        )
    }

    /// Inserts and flushes a DDL record (catalog text as payload). The record
    /// must be durable before the catalog entry or the file can exist, or
    /// recovery could not tell that they must go.
    fn log_ddl(
        &self,
        kind: wal::RecordType,
        txn: &WriteTxn<'_>,
        text: &str,
    ) -> Result<(), StorageError> {
        let lsn = self
            .wal
            .insert(kind, txn.xid(), None, false, text.as_bytes())?;
        self.wal.flush(lsn)
    }

    /// Logs the creation of index `index` by `txn`; call before creating
    /// its file. Unlike a table created by CREATE TABLE AS, the index is
    /// logged from its first page: the bulk build writes every page as an
    /// image (PostgreSQL's `log_newpage` with `wal_level = replica`), so the
    /// index's later changes need no full-page image until the next
    /// checkpoint, and recovery rebuilds it from the WAL alone.
    pub fn log_create_index(
        &self,
        txn: &WriteTxn<'_>,
        index: &IndexDef,
    ) -> Result<(), StorageError> {
        self.log_ddl(
            wal::RecordType::CreateIndex,
            txn,
            &catalog::encode_index(index),
        )
    }

    /// Drops `table` (with its indexes) when `txn` commits (and not at all
    /// if it aborts).
    pub fn drop_table(&self, txn: &WriteTxn<'_>, table: &TableDef) -> Result<(), StorageError> {
        self.drop_relation(txn, table.oid)
    }

    /// Drops relation `oid` (a table with its indexes, or an index) when
    /// `txn` commits.
    pub fn drop_relation(&self, txn: &WriteTxn<'_>, oid: u32) -> Result<(), StorageError> {
        self.wal.insert(
            wal::RecordType::DropTable,
            txn.xid(),
            None,
            false,
            &oid.to_le_bytes(),
        )?;
        self.pending_drops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((txn.xid(), oid));
        Ok(())
    }

    /// Checkpoints if `max_wal_size` of WAL or `checkpoint_timeout` passed
    /// since the last one.
    fn maybe_checkpoint(&self) -> Result<(), StorageError> {
        let d = &self.options.durability;
        let wal_since = self.wal.insert_lsn() - self.wal.redo_lsn();
        let due = wal_since >= d.max_wal_size
            || self
                .last_checkpoint
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                >= d.checkpoint_timeout;
        if due {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// A checkpoint (`CHECKPOINT`, periodic, end of recovery, shutdown):
    /// under the writer lock, take the end of WAL as the redo point, write
    /// and fsync every dirty page, the relation files and `pg_xact`, record
    /// the redo point in `pg_control` and remove WAL segments before it.
    pub fn checkpoint(&self) -> Result<(), StorageError> {
        let _writer = self.txn.lock_writer();
        let redo = self.wal.insert_lsn();
        self.wal.set_redo_lsn(redo);
        self.pool.flush_all()?;
        self.smgr.sync_all()?;
        self.txn.sync()?;
        self.wal.flush_all()?;
        wal::control::write(&self.dir.join("pg_control"), redo)?;
        self.wal.remove_old_segments(redo)?;
        *self
            .last_checkpoint
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
        Ok(())
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
    catalog: &RwLock<Catalog>,
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
        let _ = self.checkpoint();
    }
}
