//! Relation files: `base/<relfilenode>` in the data directory, a sequence of
//! 8 kB blocks. The storage manager caches open files and each relation's
//! length in blocks; blocks are added with [`Smgr::extend`], one at a
//! time, and the file length always covers every block handed out.
//!
//! PostgreSQL writes a zero block to extend a file, so that running out of
//! disk space shows up there rather than when the page is written back.
//! tusk reserves the space instead, ahead of need (`fallocate` with
//! `KEEP_SIZE`: up to 1 MB past the end, an eighth of the relation's size,
//! see [`reserve_ahead`]), and extends the file's length by one block at a
//! time: the new block reads as zeroes and nothing is copied into the page
//! cache. A bulk load extends its table by every page it fills, so a write
//! of 8 kB of zeroes per page cost it as much as a second copy of its data.
//! Where the file system cannot reserve, the zero block is written.
//!
//! ## Forks
//!
//! A relation may have more than one file, as PostgreSQL's relations have
//! forks (`_fsm`, `_vm`): a columnar table keeps its row-wise delta in the
//! main file and its row groups in two more (see `columnar`). Every layer
//! below the catalog — buffer tags, WAL block references, this module —
//! names a file by one `u32`, so a fork is folded into that number: the
//! top two bits are the [`Fork`], the rest the relation's oid, which
//! therefore stays below [`MAX_OID`]. [`rel_of`] makes such a number and
//! [`oid_of`] takes the oid back. The main fork's number is the oid itself,
//! so heaps and indexes never see forks at all.
//!
//! What is done to a relation as a whole is done to all its forks: given a
//! main-fork number, [`Smgr::unlink`] and [`Smgr::sync`] (and the buffer
//! pool's `drop_relation`, `flush_relation` and `set_unlogged`) act on the
//! other forks too, so DROP, TRUNCATE, rollback and recovery, which know
//! relations by oid, need not know which forks exist.

use crate::fasthash::FastHashMap;
use crate::page::{self, PAGE_SIZE};
use crate::StorageError;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

struct RelFile {
    file: File,
    /// The same file opened with `O_DIRECT` for asynchronous reads, opened
    /// on first use; `None` inside when the file system refuses `O_DIRECT`.
    direct: OnceLock<Option<File>>,
    nblocks: AtomicU32,
    /// Blocks whose disk space is reserved (`fallocate` beyond the file's
    /// length; see [`Smgr::extend`]); changed under `extend_lock`.
    reserved: AtomicU32,
    /// Serialises extension so block numbers are handed out once.
    extend_lock: Mutex<()>,
}

/// A relation file held open for asynchronous reads (see [`Smgr::read_file`]).
pub struct ReadFile {
    file: Arc<RelFile>,
    direct: bool,
}

impl ReadFile {
    /// The descriptor to read from; valid while `self` lives.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        match self.file.direct.get() {
            Some(Some(d)) if self.direct => d.as_fd(),
            _ => self.file.file.as_fd(),
        }
    }

    /// Whether reads bypass the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct && matches!(self.file.direct.get(), Some(Some(_)))
    }
}

/// A file of a relation (see "Forks" in the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fork {
    /// The relation's own file: a heap, an index, a columnar table's
    /// row-wise delta.
    Main = 0,
    /// A columnar table's metadata heap: its row groups and deletions
    /// (`columnar::meta`).
    ColumnarMeta = 1,
    /// A columnar table's row group pages (`columnar::rowgroup`).
    ColumnarData = 2,
    /// A heap table's TOAST relation: the chunks of its values stored out
    /// of line (see `toast`), created by the first such value.
    Toast = 3,
}

/// Bits of a relation file number below the fork bits.
const FORK_SHIFT: u32 = 30;

/// Largest oid a relation may have (its file numbers keep the top two bits
/// for the fork).
pub const MAX_OID: u32 = (1 << FORK_SHIFT) - 1;

/// Every fork other than the main one.
const OTHER_FORKS: [Fork; 3] = [Fork::ColumnarMeta, Fork::ColumnarData, Fork::Toast];

/// The file number of fork `fork` of relation `oid`.
#[inline]
pub const fn rel_of(oid: u32, fork: Fork) -> u32 {
    oid | (fork as u32) << FORK_SHIFT
}

/// The oid of the relation that file number `rel` belongs to.
#[inline]
pub const fn oid_of(rel: u32) -> u32 {
    rel & MAX_OID
}

/// The fork of file number `rel`.
pub fn fork_of(rel: u32) -> Fork {
    match rel >> FORK_SHIFT {
        0 => Fork::Main,
        1 => Fork::ColumnarMeta,
        2 => Fork::ColumnarData,
        _ => Fork::Toast,
    }
}

/// The storage manager: block I/O on relation files.
pub struct Smgr {
    base: PathBuf,
    files: Mutex<FastHashMap<u32, Arc<RelFile>>>,
    /// Blocks written since `track_writes(true)`.
    written: Mutex<Option<HashSet<(u32, u32)>>>,
}

impl Smgr {
    pub fn new(base: PathBuf) -> Smgr {
        Smgr {
            base,
            files: Mutex::new(FastHashMap::default()),
            written: Mutex::new(None),
        }
    }

    pub fn path(&self, rel: u32) -> PathBuf {
        let oid = oid_of(rel);
        self.base.join(match fork_of(rel) {
            Fork::Main => oid.to_string(),
            Fork::ColumnarMeta => format!("{oid}_colmeta"),
            Fork::ColumnarData => format!("{oid}_coldata"),
            Fork::Toast => format!("{oid}_toast"),
        })
    }

    fn open(&self, rel: u32) -> Result<Arc<RelFile>, StorageError> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = files.get(&rel) {
            return Ok(f.clone());
        }
        let path = self.path(rel);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                StorageError::io(format!("could not open file \"{}\"", path.display()), e)
            })?;
        let len = file
            .metadata()
            .map_err(|e| {
                StorageError::io(format!("could not stat file \"{}\"", path.display()), e)
            })?
            .len();
        let rf = Arc::new(RelFile {
            file,
            direct: OnceLock::new(),
            nblocks: AtomicU32::new((len / PAGE_SIZE as u64) as u32),
            reserved: AtomicU32::new((len / PAGE_SIZE as u64) as u32),
            extend_lock: Mutex::new(()),
        });
        files.insert(rel, rf.clone());
        Ok(rf)
    }

    /// Creates an empty relation file.
    pub fn create(&self, rel: u32) -> Result<(), StorageError> {
        let path = self.path(rel);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                StorageError::io(format!("could not create file \"{}\"", path.display()), e)
            })?;
        Ok(())
    }

    /// Creates an empty relation file unless it exists (WAL redo, and a
    /// table's TOAST fork, which its first out-of-line value creates; two
    /// sessions may race to do so).
    pub fn create_if_missing(&self, rel: u32) -> Result<(), StorageError> {
        if self.exists(rel) {
            return Ok(());
        }
        let path = self.path(rel);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(StorageError::io(
                format!("could not create file \"{}\"", path.display()),
                e,
            )),
        }
    }

    /// Whether the relation file exists.
    pub fn exists(&self, rel: u32) -> bool {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&rel)
            || self.path(rel).exists()
    }

    /// Asks the kernel to start reading block `block` of `rel` into its page
    /// cache (`posix_fadvise(WILLNEED)`); the later `read` then finds it there.
    pub fn prefetch(&self, rel: u32, block: u32) -> Result<(), StorageError> {
        let f = self.open(rel)?;
        rustix::fs::fadvise(
            &f.file,
            block as u64 * PAGE_SIZE as u64,
            std::num::NonZeroU64::new(PAGE_SIZE as u64),
            rustix::fs::Advice::WillNeed,
        )
        .map_err(|e| StorageError::io("could not prefetch block".to_string(), e.into()))
    }

    /// An open file of `rel` to read blocks from asynchronously (io_uring).
    /// With `direct` it bypasses the kernel's page cache (`O_DIRECT`: the
    /// device writes straight into the destination, which must be 4096-byte
    /// aligned) where the file system allows it, else it is the ordinary file.
    pub fn read_file(&self, rel: u32, direct: bool) -> Result<ReadFile, StorageError> {
        let f = self.open(rel)?;
        if direct {
            f.direct.get_or_init(|| {
                use std::os::unix::fs::OpenOptionsExt;
                OpenOptions::new()
                    .read(true)
                    .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
                    .open(self.path(rel))
                    .ok()
            });
        }
        Ok(ReadFile { file: f, direct })
    }

    /// Writes back and drops the cached pages of every relation file from
    /// the kernel's page cache (benchmarks: a cold start).
    pub fn evict_os_cache(&self) -> Result<(), StorageError> {
        let entries = std::fs::read_dir(&self.base)
            .map_err(|e| StorageError::io("could not read base directory".to_string(), e))?;
        for e in entries.flatten() {
            if let Ok(f) = File::open(e.path()) {
                let _ = f.sync_all();
                let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
            }
        }
        Ok(())
    }

    /// Removes a relation file and forgets it; for a main fork, the
    /// relation's other forks too.
    pub fn unlink(&self, rel: u32) -> Result<(), StorageError> {
        if fork_of(rel) == Fork::Main {
            for fork in OTHER_FORKS {
                self.unlink(rel_of(rel, fork))?;
            }
        }
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&rel);
        let path = self.path(rel);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(
                format!("could not remove file \"{}\"", path.display()),
                e,
            )),
        }
    }

    pub fn nblocks(&self, rel: u32) -> Result<u32, StorageError> {
        Ok(self.open(rel)?.nblocks.load(Ordering::Acquire))
    }

    /// Appends a zero block and returns its number.
    pub fn extend(&self, rel: u32) -> Result<u32, StorageError> {
        let f = self.open(rel)?;
        let _guard = f.extend_lock.lock().unwrap_or_else(|e| e.into_inner());
        let block = f.nblocks.load(Ordering::Acquire);
        if block == u32::MAX {
            return Err(StorageError::Other(
                "cannot extend relation beyond 2^32 blocks".into(),
            ));
        }
        let offset = block as u64 * PAGE_SIZE as u64;
        let fail = |e| {
            StorageError::io(
                format!("could not extend file \"{}\"", self.path(rel).display()),
                e,
            )
        };
        if self.reserve(&f, block) {
            // The block's space is reserved: growing the file by it only
            // changes its length (the new block reads as zeroes).
            f.file.set_len(offset + PAGE_SIZE as u64).map_err(fail)?;
        } else {
            static ZERO: [u8; PAGE_SIZE] = [0; PAGE_SIZE];
            f.file.write_all_at(&ZERO, offset).map_err(fail)?;
        }
        f.nblocks.store(block + 1, Ordering::Release);
        Ok(block)
    }

    /// Makes sure the disk space of block `block` (the next one) is
    /// reserved, reserving [`reserve_ahead`] blocks from it when it is not;
    /// false where the file system cannot reserve (no `fallocate`). The
    /// caller holds the extension lock.
    fn reserve(&self, f: &RelFile, block: u32) -> bool {
        let reserved = f.reserved.load(Ordering::Relaxed);
        if block < reserved {
            return true;
        }
        let n = reserve_ahead(block);
        let reserved = rustix::fs::fallocate(
            &f.file,
            rustix::fs::FallocateFlags::KEEP_SIZE,
            block as u64 * PAGE_SIZE as u64,
            n as u64 * PAGE_SIZE as u64,
        );
        if reserved.is_err() {
            return false;
        }
        f.reserved.store(block + n, Ordering::Relaxed);
        true
    }

    /// Reads block `block` into `buf`, verifying its checksum.
    pub fn read(&self, rel: u32, block: u32, buf: &mut [u8]) -> Result<(), StorageError> {
        let f = self.open(rel)?;
        f.file
            .read_exact_at(&mut buf[..PAGE_SIZE], block as u64 * PAGE_SIZE as u64)
            .map_err(|e| {
                StorageError::io(
                    format!(
                        "could not read block {block} in file \"{}\"",
                        self.path(rel).display()
                    ),
                    e,
                )
            })?;
        self.verify_page(rel, block, buf)
    }

    /// Checks the checksum of a page just read as block `block` of `rel`.
    pub fn verify_page(&self, rel: u32, block: u32, page: &[u8]) -> Result<(), StorageError> {
        if !page::verify_checksum(page, block) {
            return Err(StorageError::Other(format!(
                "invalid page in block {block} of relation \"{}\"",
                self.path(rel).display()
            )));
        }
        Ok(())
    }

    /// Writes `page` (already checksummed) as block `block`.
    pub fn write(&self, rel: u32, block: u32, page: &[u8]) -> Result<(), StorageError> {
        let f = self.open(rel)?;
        if let Some(w) = self
            .written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            w.insert((rel, block));
        }
        f.file
            .write_all_at(&page[..PAGE_SIZE], block as u64 * PAGE_SIZE as u64)
            .map_err(|e| {
                StorageError::io(
                    format!(
                        "could not write block {block} in file \"{}\"",
                        self.path(rel).display()
                    ),
                    e,
                )
            })
    }

    /// Starts (or stops) remembering which blocks are written. Recovery
    /// does this while it reads with `O_DIRECT`: a block written during
    /// replay sits dirty in the page cache, where an `O_DIRECT` read would
    /// first have to wait for the kernel to write it back — reading it
    /// through the page cache instead is a copy and no I/O at all.
    pub fn track_writes(&self, on: bool) {
        *self.written.lock().unwrap_or_else(|e| e.into_inner()) = on.then(HashSet::new);
    }

    /// Whether block `block` of `rel` was written since [`Smgr::track_writes`].
    pub fn was_written(&self, rel: u32, block: u32) -> bool {
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|w| w.contains(&(rel, block)))
    }

    /// fsyncs one relation file; for a main fork, the relation's other
    /// forks too (those that exist).
    pub fn sync(&self, rel: u32) -> Result<(), StorageError> {
        if fork_of(rel) == Fork::Main {
            for fork in OTHER_FORKS {
                let other = rel_of(rel, fork);
                if self.exists(other) {
                    self.sync(other)?;
                }
            }
        }
        let f = self.open(rel)?;
        f.file.sync_data().map_err(|e| {
            StorageError::io(
                format!("could not fsync file \"{}\"", self.path(rel).display()),
                e,
            )
        })
    }

    /// fsyncs every open relation file.
    pub fn sync_all(&self) -> Result<(), StorageError> {
        let files: Vec<(u32, Arc<RelFile>)> = self
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        for (rel, f) in files {
            f.file.sync_data().map_err(|e| {
                StorageError::io(
                    format!("could not fsync file \"{}\"", self.path(rel).display()),
                    e,
                )
            })?;
        }
        crate::wal::sync_dir(&self.base);
        Ok(())
    }

    pub fn base(&self) -> &Path {
        &self.base
    }
}

/// Blocks reserved at once from block `block` on: an eighth of the
/// relation's length, at least one block and at most 128 (1 MB), so that
/// small relations take no more disk than they use.
fn reserve_ahead(block: u32) -> u32 {
    (block / 8).clamp(1, 128)
}
