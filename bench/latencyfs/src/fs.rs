//! The pass-through file system: every operation goes to the same path
//! under the backing directory; reads go through the delay line.
//!
//! Inode numbers are the backing files' own (the backing directory must be
//! one file system), except that the backing root is FUSE's inode 1 and
//! whatever had number 1 takes the root's number. The table maps each inode
//! the kernel has looked up to its current backing path; rename rewrites
//! the paths under a moved name. Inodes are never forgotten (a benchmark
//! mount lives for minutes).
//!
//! Files are opened with `FOPEN_KEEP_CACHE`: the kernel is the only writer,
//! so its page cache stays valid across opens, as a block device's does (by
//! default FUSE drops a file's cache at every open, which would evict blocks
//! behind the benchmark's back). `--direct-io` opens them with
//! `FOPEN_DIRECT_IO` instead: no page cache at all, every read reaches the
//! daemon.

use crate::delay::{DelayLine, Stats};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenAccMode, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may cache names and attributes: nobody else changes
/// the backing directory while it is mounted.
const TTL: Duration = Duration::from_secs(60);

/// Settings the kernel receives at INIT.
#[derive(Clone, Copy, Debug)]
pub struct KernelSettings {
    /// Most asynchronous requests (readahead, fadvise, async direct I/O)
    /// the kernel hands the daemon at once; also the congestion threshold,
    /// above which the kernel drops readahead it was only hinted to do.
    pub max_background: u16,
    /// Largest readahead, in bytes.
    pub max_readahead: u32,
    /// Every open bypasses the page cache (`FOPEN_DIRECT_IO`).
    pub direct_io: bool,
    /// Writes stay in the kernel's page cache and are written back later
    /// (`FUSE_WRITEBACK_CACHE`), as on a block device; without it every
    /// `write` waits for the daemon.
    pub writeback_cache: bool,
}

pub struct LatencyFs {
    backing: PathBuf,
    root_ino: u64,
    paths: Mutex<HashMap<u64, PathBuf>>,
    files: Mutex<HashMap<u64, Arc<File>>>,
    next_fh: AtomicU64,
    delay: Arc<DelayLine>,
    stats: Arc<Stats>,
    settings: KernelSettings,
}

fn errno(e: std::io::Error) -> Errno {
    if e.raw_os_error().is_some() {
        Errno::from(e)
    } else {
        Errno::EIO
    }
}

/// Answers a request that returns nothing: success or the error.
fn reply_empty(reply: ReplyEmpty, result: Result<(), Errno>) {
    match result {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(e),
    }
}

fn time(secs: i64, nsecs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs as u32)
    } else {
        UNIX_EPOCH
    }
}

fn kind(t: std::fs::FileType) -> FileType {
    FileType::from_std(t).unwrap_or(FileType::RegularFile)
}

impl LatencyFs {
    pub fn new(
        backing: PathBuf,
        delay: Arc<DelayLine>,
        stats: Arc<Stats>,
        settings: KernelSettings,
    ) -> std::io::Result<LatencyFs> {
        let root_ino = std::fs::metadata(&backing)?.ino();
        let mut paths = HashMap::new();
        paths.insert(1, backing.clone());
        Ok(LatencyFs {
            backing,
            root_ino,
            paths: Mutex::new(paths),
            files: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            delay,
            stats,
            settings,
        })
    }

    /// The FUSE inode number of a backing inode number (swaps the root's
    /// number with 1).
    fn fuse_ino(&self, backing_ino: u64) -> u64 {
        if backing_ino == self.root_ino {
            1
        } else if backing_ino == 1 {
            self.root_ino
        } else {
            backing_ino
        }
    }

    fn attr(&self, m: &Metadata) -> FileAttr {
        let ctime = time(m.ctime(), m.ctime_nsec());
        FileAttr {
            ino: INodeNo(self.fuse_ino(m.ino())),
            size: m.size(),
            blocks: m.blocks(),
            atime: time(m.atime(), m.atime_nsec()),
            mtime: time(m.mtime(), m.mtime_nsec()),
            ctime,
            crtime: ctime,
            kind: kind(m.file_type()),
            perm: (m.mode() & 0o7777) as u16,
            nlink: m.nlink() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: m.rdev() as u32,
            blksize: m.blksize() as u32,
            flags: 0,
        }
    }

    fn path(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        crate::lock(&self.paths)
            .get(&ino.0)
            .cloned()
            .ok_or(Errno::ENOENT)
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        Ok(self.path(parent)?.join(name))
    }

    /// Looks `path` up and remembers it under its inode number.
    fn remember(&self, path: PathBuf) -> Result<FileAttr, Errno> {
        let m = std::fs::symlink_metadata(&path).map_err(errno)?;
        let attr = self.attr(&m);
        crate::lock(&self.paths).insert(attr.ino.0, path);
        Ok(attr)
    }

    fn file(&self, fh: FileHandle) -> Result<Arc<File>, Errno> {
        crate::lock(&self.files)
            .get(&fh.0)
            .cloned()
            .ok_or(Errno::EBADF)
    }

    fn add_file(&self, f: File) -> FileHandle {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        crate::lock(&self.files).insert(fh, Arc::new(f));
        FileHandle(fh)
    }

    fn open_flags(&self) -> FopenFlags {
        if self.settings.direct_io {
            FopenFlags::FOPEN_DIRECT_IO
        } else {
            FopenFlags::FOPEN_KEEP_CACHE
        }
    }

    /// Backing open options for the access mode of `flags`. Only the access
    /// mode is passed on: the kernel sends explicit offsets (so no
    /// `O_APPEND`), truncation comes as `setattr`, and `O_DIRECT` concerns
    /// the kernel's cache, not the daemon's reads. With the writeback cache
    /// the kernel may read through a write-only handle (to fill a page it
    /// writes part of), so such handles are opened for reading too.
    fn options(&self, flags: OpenFlags) -> OpenOptions {
        let mut o = OpenOptions::new();
        match flags.acc_mode() {
            OpenAccMode::O_RDONLY => o.read(true),
            OpenAccMode::O_WRONLY => o.write(true).read(self.settings.writeback_cache),
            OpenAccMode::O_RDWR => o.read(true).write(true),
        };
        o
    }
}

impl Filesystem for LatencyFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Asynchronous direct I/O: an O_DIRECT read from io_uring is sent
        // as a background request instead of blocking an io-wq worker.
        let _ = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO);
        if self.settings.writeback_cache && !self.settings.direct_io {
            config
                .add_capabilities(InitFlags::FUSE_WRITEBACK_CACHE)
                .map_err(|_| std::io::Error::other("the kernel has no FUSE writeback cache"))?;
        }
        let _ = config.set_max_background(self.settings.max_background);
        let _ = config.set_congestion_threshold(self.settings.max_background);
        if let Err(max) = config.set_max_readahead(self.settings.max_readahead) {
            let _ = config.set_max_readahead(max);
        }
        Ok(())
    }

    fn destroy(&mut self) {
        self.delay.stop();
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.child(parent, name).and_then(|p| self.remember(p)) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let m = match fh.and_then(|fh| self.file(fh).ok()) {
            Some(f) => f.metadata(),
            None => match self.path(ino) {
                Ok(p) => std::fs::symlink_metadata(p),
                Err(e) => return reply.error(e),
            },
        };
        match m {
            Ok(m) => reply.attr(&TTL, &self.attr(&m)),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let run = || -> Result<FileAttr, Errno> {
            let path = self.path(ino)?;
            if let Some(size) = size {
                match fh.and_then(|fh| self.file(fh).ok()) {
                    Some(f) => f.set_len(size),
                    None => OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .and_then(|f| f.set_len(size)),
                }
                .map_err(errno)?;
            }
            if let Some(mode) = mode {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                    .map_err(errno)?;
            }
            let m = std::fs::symlink_metadata(&path).map_err(errno)?;
            Ok(self.attr(&m))
        };
        match run() {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let run = || -> Result<FileAttr, Errno> {
            let path = self.child(parent, name)?;
            std::fs::DirBuilder::new()
                .mode(mode & !umask)
                .create(&path)
                .map_err(errno)?;
            self.remember(path)
        };
        match run() {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(
            reply,
            self.child(parent, name)
                .and_then(|p| std::fs::remove_file(p).map_err(errno)),
        )
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(
            reply,
            self.child(parent, name)
                .and_then(|p| std::fs::remove_dir(p).map_err(errno)),
        )
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if !flags.is_empty() {
            return reply.error(Errno::EINVAL);
        }
        let run = || -> Result<(), Errno> {
            let from = self.child(parent, name)?;
            let to = self.child(newparent, newname)?;
            std::fs::rename(&from, &to).map_err(errno)?;
            let mut paths = crate::lock(&self.paths);
            for p in paths.values_mut() {
                if let Ok(rest) = p.strip_prefix(&from) {
                    *p = if rest.as_os_str().is_empty() {
                        to.clone()
                    } else {
                        to.join(rest)
                    };
                }
            }
            Ok(())
        };
        reply_empty(reply, run())
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self
            .path(ino)
            .and_then(|p| self.options(flags).open(p).map_err(errno))
        {
            Ok(f) => reply.opened(self.add_file(f), self.open_flags()),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let run = || -> Result<(FileAttr, FileHandle), Errno> {
            let path = self.child(parent, name)?;
            let mut o = self.options(OpenFlags(flags));
            o.mode(mode & !umask);
            if flags & rustix::fs::OFlags::EXCL.bits() as i32 != 0 {
                o.create_new(true);
            } else {
                o.create(true);
            }
            if flags & rustix::fs::OFlags::TRUNC.bits() as i32 != 0 {
                o.truncate(true);
            }
            // O_CREAT needs write access on the backing side even for an
            // O_RDONLY|O_CREAT open.
            if OpenFlags(flags).acc_mode() == OpenAccMode::O_RDONLY {
                o.write(true);
            }
            let f = o.open(&path).map_err(errno)?;
            let attr = self.remember(path)?;
            Ok((attr, self.add_file(f)))
        };
        match run() {
            Ok((attr, fh)) => reply.created(&TTL, &attr, Generation(0), fh, self.open_flags()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.file(fh) {
            Ok(f) => self.delay.read(f, offset, size, reply),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self
            .file(fh)
            .and_then(|f| f.write_all_at(data, offset).map_err(errno))
        {
            Ok(()) => {
                self.stats.writes.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .write_bytes
                    .fetch_add(data.len() as u64, Ordering::Relaxed);
                reply.written(data.len() as u32)
            }
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        crate::lock(&self.files).remove(&fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let r = self.file(fh).and_then(|f| {
            if datasync {
                f.sync_data()
            } else {
                f.sync_all()
            }
            .map_err(errno)
        });
        reply_empty(reply, r)
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let entries = match self
            .path(ino)
            .and_then(|p| std::fs::read_dir(p).map_err(errno))
        {
            Ok(d) => d,
            Err(e) => return reply.error(e),
        };
        // Offsets are positions in the listing; the backing directory does
        // not change while the kernel lists it.
        let mut names: Vec<_> = entries
            .flatten()
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((e.file_name(), m.ino(), m.file_type()))
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, (name, backing_ino, t)) in names.into_iter().enumerate().skip(offset as usize) {
            if reply.add(
                INodeNo(self.fuse_ino(backing_ino)),
                i as u64 + 1,
                kind(t),
                name,
            ) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(
            reply,
            self.path(ino)
                .and_then(|p| File::open(p).and_then(|d| d.sync_all()).map_err(errno)),
        )
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match rustix::fs::statvfs(&self.backing) {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                s.f_namemax as u32,
                s.f_frsize as u32,
            ),
            Err(e) => reply.error(Errno::from_i32(e.raw_os_error())),
        }
    }
}
