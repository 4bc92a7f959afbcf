//! # tusk-storage: files, pages, buffers, heap, transactions, catalog
//!
//! A [`Database`] is an open data directory:
//!
//! ```text
//! DATADIR/
//!   tusk.conf     settings read at startup (shared_buffers, huge_pages, work_mem, ...)
//!   tusk.lock     held with flock() while a process has the directory open
//!   catalog       tables and columns (see `catalog`)
//!   pg_xact       commit status, one byte per transaction id (see `txn`)
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
//! ## Durability (until WAL exists)
//!
//! A writing statement writes every dirty buffer to the relation files before
//! it marks its transaction committed in `pg_xact`, and `pg_xact` records a
//! transaction as in progress before any of its tuples can reach disk. So after
//! a crash of the *process* every committed statement is on disk and every
//! unfinished one is invisible. Nothing is fsynced before a clean shutdown,
//! though: an operating-system crash or power loss can lose recent commits.
//! The WAL issue replaces this force-at-commit policy.

pub mod bufmgr;
pub mod buftable;
pub mod catalog;
pub mod heap;
pub mod page;
pub mod smgr;
pub mod tuple;
pub mod txn;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use bufmgr::BufferPool;
pub use catalog::{Catalog, ColumnDef, DataType, SqlType, TableDef};
pub use heap::Tid;
pub use tusk_shmem::HugePages;
pub use txn::{Snapshot, TxnManager, WriteTxn, Xid};

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
}

impl Default for StartupOptions {
    fn default() -> Self {
        StartupOptions {
            shared_buffers: 128 << 20,
            huge_pages: HugePages::Try,
            buffer_mapping: tusk_chash::MappingKind::default(),
            min_dynamic_shared_memory: 0,
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
}

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

        let lock_path = dir.join("tusk.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io("open", &lock_path, e))?;
        if rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
            return Err(StorageError::Other(format!(
                "data directory \"{}\" is in use by another tusk process",
                dir.display()
            )));
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
        let catalog = Catalog::open(&dir.join("catalog"))?;
        Ok(Arc::new(Database {
            dir: dir.to_path_buf(),
            _lock: lock,
            pool,
            smgr,
            txn,
            dsm,
            catalog: RwLock::new(catalog),
            settings,
            options,
        }))
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

    /// Makes a writing transaction's changes durable and visible.
    pub fn commit(&self, txn: WriteTxn<'_>) -> Result<(), StorageError> {
        self.pool.flush_all()?;
        txn.commit()
    }

    /// Writes everything out and fsyncs (clean shutdown, CHECKPOINT).
    pub fn checkpoint(&self) -> Result<(), StorageError> {
        self.pool.flush_all()?;
        self.smgr.sync_all()?;
        self.txn.sync()
    }

    /// Number of blocks of a relation.
    pub fn nblocks(&self, rel: u32) -> Result<u32, StorageError> {
        self.smgr.nblocks(rel)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = self.checkpoint();
    }
}
