//! Crash recovery: WAL replay from the last checkpoint's redo point, with
//! block prefetching.
//!
//! ## Invariants the rest of the engine keeps
//!
//! 1. *WAL-before-data.* A page reaches its relation file only after the WAL
//!    up to the page's LSN is durable (`BufferPool::flush`). So every change
//!    found in a data file is described by a record in the durable WAL.
//! 2. *Page LSN.* Each change is logged while the page is exclusively locked
//!    and the record's LSN is stamped into the page before the lock is
//!    released, so a page's LSN names the last change it contains.
//! 3. *Full-page images.* The first change to a page after a checkpoint's
//!    redo point logs the whole page (`full_page_writes = on`): a page torn by
//!    a crash in the middle of its write is rebuilt from the image, never read.
//!    Insertions into empty pages format the page in redo and need no image.
//! 4. *Checkpoints.* A checkpoint takes the current end of WAL as its redo
//!    point, writes and fsyncs every dirty page, the relation files and
//!    `pg_xact`, and then replaces `pg_control`. Everything before the redo
//!    point is then in the data files, so WAL segments before it are
//!    removed. Transactions run on during a checkpoint; two rules keep the
//!    outcomes of those that straddle the redo point: a commit record and
//!    the `pg_xact` status it stands for are never separated by the redo
//!    point (the commit gate, see `commit`), and the DDL records of running
//!    transactions are logged again after the redo point. A transaction
//!    that wrote records before the redo point and ends after it has its
//!    commit or abort record after it (or none, after a crash: aborted).
//! 5. *Commit.* A commit record is inserted (and flushed, with
//!    `synchronous_commit = on`) before `pg_xact` says committed and before
//!    success is reported. It lists the transaction's committed
//!    subtransactions; an abort record lists the sub-xids it aborts too.
//!
//! ## The algorithm
//!
//! Read `pg_control`, then decode records from its redo point until the first
//! record that does not check (torn tail). For each record:
//!
//! * page changes (heap, btree, VACUUM): create the relation file or extend it if the crash lost
//!   it, pin the block (without reading it when the record rebuilds the whole
//!   page) and, unless the page LSN shows the change is already there
//!   (`page LSN >= record LSN`), apply it and set the page LSN. This makes
//!   redo idempotent: replaying twice is the same as once.
//! * commit records: the xid and the sub-xids in the record committed.
//!   Abort records (a rolled-back transaction or savepoint, a statement that
//!   failed after writing records): the xid and its listed sub-xids aborted. Every xid that wrote
//!   records after the redo point but has no commit record is aborted too —
//!   a crash leaves no abort record, and neither does a lost unflushed one —
//!   including one whose `pg_xact` byte said committed with
//!   `synchronous_commit = off` but whose commit record did not reach the disk.
//! * DDL records: applied at the end, once outcomes are known (see below).
//!
//! Then the new WAL is opened at the end of the valid records (cutting off
//! the torn tail) and an end-of-recovery checkpoint makes the result durable.
//!
//! ## Catalog changes
//!
//! The catalog file is rewritten atomically on each change, but it is not
//! paged, so DDL follows this rule: *a table's catalog entry and file exist
//! after recovery iff the transaction that created it committed and no
//! committed transaction dropped it.* CREATE TABLE logs `CreateTable` (the
//! definition) before creating the file; DROP TABLE logs `DropTable` and
//! removes the entry and the file only after its commit record is durable.
//! At the end of replay each DDL record's outcome is enforced in WAL order:
//! a committed create restores a missing entry, an uncommitted one removes
//! the entry and file, a committed drop removes them. Heap records for a
//! relation whose file is gone recreate it, so replay never fails on a table
//! dropped later; the drop then removes it again. CREATE INDEX logs
//! `CreateIndex` the same way (a committed one is restored if its table
//! still exists); dropping a table removes its indexes' entries and files.
//! ALTER TABLE and ALTER INDEX log `AlterTable` / `AlterIndex` (the new
//! definition under the same oid): a committed one replaces the entry, an
//! uncommitted one is ignored (its change never reached the catalog file).
//! Replaying all of them in WAL order ends in the committed state even
//! when an earlier record briefly puts back an older definition.
//!
//! Row changes of transactions (`HeapDelete`, `HeapLock`, `HeapUpdate`)
//! carry the tuple's new xmax state (xmax, cmax, infomask, ctid) and, for
//! an update within one page, the new version. Btree records (`BtreeInsert`, `BtreePage`, `BtreeDelete`) and VACUUM's
//! heap records (`HeapPrune`, `HeapUnused`) are page changes like the heap's
//! and go through the same LSN check; their redo is in `btree::redo` and
//! `page::prune` / `page::set_unused`.
//!
//! ## Prefetching
//!
//! Records name the blocks they change, so recovery knows its future reads.
//! With `recovery_prefetch = on` (or `try`) the decoder runs ahead of redo by
//! up to `wal_decode_buffer_size` bytes of WAL; for each block reference it
//! meets it skips blocks that the record rebuilds anyway (`skip_fpw`,
//! `skip_init`), blocks past the end of their file or of a relation without a
//! file (`skip_new`), blocks it prefetched a moment ago (`skip_rep`) and
//! blocks already in the buffer pool (`hit`), and starts a read of the rest
//! (`prefetch`) so that it happens while redo works on earlier records. At
//! most `maintenance_io_concurrency` reads are in flight, and while the limit
//! is reached the decoder waits (redo still gets its next record; a record
//! decoded only for that is not prefetched). What counts as in flight
//! depends on what the method can know. io_uring and the I/O threads know
//! when a read is done, so a read counts until then, and the decoder may run
//! up to `DISTANCE_MULTIPLIER` (4) times the concurrency in prefetched
//! blocks ahead of redo (at most a quarter of the pool, where those blocks
//! wait): a block that arrived early, or was served from the page cache,
//! frees its slot for the next read instead of holding it until redo
//! catches up — on storage with a millisecond per read that keeps the
//! device's queue full. `posix_fadvise` cannot tell when the kernel's read
//! is done, so there a hint counts until redo reaches its record (as in
//! PostgreSQL 15). How a read is started is `tusk.recovery_prefetch_method`:
//!
//! * `io_uring` (the default where the kernel allows io_uring, decided at
//!   run time): a real asynchronous read into the buffer pool. The buffer
//!   manager claims a buffer for the block ([`BufferPool::start_async_read`]:
//!   pinned, mapped, `IO_IN_PROGRESS`), the read goes into the buffer's page
//!   through the ring ([`crate::uring`]), and when its completion is reaped
//!   [`BufferPool::finish_async_read`] verifies the checksum and makes the
//!   page valid; redo then finds a buffer hit. Only the redo thread reaps
//!   completions, so before redo touches a block whose read is still under
//!   way it waits for that read itself (`UringReads`) instead of in the
//!   buffer manager. With `tusk.recovery_direct_io = on` (default) reads use
//!   `O_DIRECT`: the device writes straight into the buffer, with no copy
//!   through the page cache — except for blocks written out during this
//!   replay, which are still dirty in the page cache and are read from there
//!   (an `O_DIRECT` read would first wait for their write-back). Reads are
//!   submitted in batches of a quarter of the depth, and reads into buffers
//!   never pin more than a quarter of the pool. The pool's pages are
//!   registered with the ring as one fixed buffer (pools up to
//!   `MAX_REGISTERED_POOL`, 16 MiB: registering faults in and pins every
//!   page, which costs seconds for a 1 GiB pool), so the kernel does not pin the destination
//!   page on every read, and the ring posts completions cooperatively (see
//!   [`crate::uring`]): a read costs the redo thread about 4 µs of CPU
//!   (submission, device notification, completion, checksum), which on a
//!   fast local disk is as much as the redo of a record.
//! * `fadvise`: `posix_fadvise(WILLNEED)`, so the kernel reads the block into
//!   its page cache and redo's synchronous `pread` finds it there (PostgreSQL
//!   15's method; the fallback where io_uring is refused).
//! * `threads`: `maintenance_io_concurrency` I/O threads read the blocks with
//!   the ordinary `read_buffer`; on a 2-core machine they compete with redo
//!   for the CPU.
//!
//! ## Per-record costs
//!
//! Redo is one thread, so its CPU per record bounds replay when reads are
//! fast or prefetched. The loop allocates nothing per record in the steady
//! state: the decoder reuses its scratch buffer, and each replayed record is
//! handed back to the reader ([`WalReader::recycle`]), whose payload buffer
//! carries the next record's payload. A record's xid is added to the set of
//! xids that wrote records only when it differs from the previous record's,
//! and the outcomes of all replayed transactions reach `pg_xact` in one
//! write at the end ([`TxnManager::recover_statuses`]). What remains per
//! block is the buffer manager (mapping lookup, a victim, a `pread` of 8 kB
//! and its checksum without prefetching), the change itself and the write
//! of the victim the block replaced.
//!
//! ## Background writer
//!
//! Redo dirties a page per record, and in a pool smaller than the working
//! set each new block needs a victim buffer, which is usually dirty: writing
//! it out on redo's thread costs a copy and a `pwrite` per record. During
//! replay a background writer thread writes dirty buffers just ahead of the
//! clock hand ([`BufferPool::clean_ahead`]), so redo mostly finds clean
//! victims. WAL-before-data holds trivially: every replayed record is
//! already durable.
//!
use crate::bufmgr::{AsyncRead, BufferPool};
use crate::catalog::{self, Catalog};
use crate::page;
use crate::smgr::{ReadFile, Smgr};
use crate::tuple;
use crate::txn::{TxnManager, Xid};
use crate::uring::{Completion, Ring};
use crate::wal::{BlockRef, Lsn, Record, RecordType, WalReader};
use crate::StorageError;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// How many prefetched blocks the prefetcher may run ahead of redo, as a
/// multiple of `maintenance_io_concurrency`, where it knows when reads
/// complete (PostgreSQL's `XLOGPREFETCHER_DISTANCE_MULTIPLIER`).
const DISTANCE_MULTIPLIER: usize = 4;

/// `recovery_prefetch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryPrefetch {
    Off,
    On,
    Try,
}

impl RecoveryPrefetch {
    pub fn parse(v: &str) -> Option<RecoveryPrefetch> {
        match v.to_ascii_lowercase().as_str() {
            "off" | "false" | "0" => Some(RecoveryPrefetch::Off),
            "on" | "true" | "1" => Some(RecoveryPrefetch::On),
            "try" => Some(RecoveryPrefetch::Try),
            _ => None,
        }
    }
}

/// Settings of recovery.
#[derive(Debug, Clone, Copy)]
pub struct RecoveryOptions {
    pub prefetch: RecoveryPrefetch,
    pub maintenance_io_concurrency: usize,
    pub wal_decode_buffer_size: usize,
    pub method: PrefetchMethod,
    /// `tusk.recovery_direct_io`: io_uring reads bypass the kernel's page
    /// cache (`O_DIRECT`) where the file system allows it.
    pub direct_io: bool,
}

/// How a prefetch is started (`tusk.recovery_prefetch_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchMethod {
    /// Asynchronous reads straight into buffers through io_uring (the
    /// default where the kernel allows io_uring, else `Fadvise`).
    IoUring,
    /// `posix_fadvise(WILLNEED)`: the kernel reads into its page cache.
    Fadvise,
    /// I/O threads read the block into the buffer pool.
    Threads,
}

impl PrefetchMethod {
    pub fn parse(v: &str) -> Option<PrefetchMethod> {
        match v.trim() {
            "io_uring" => Some(PrefetchMethod::IoUring),
            "fadvise" => Some(PrefetchMethod::Fadvise),
            "threads" => Some(PrefetchMethod::Threads),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PrefetchMethod::IoUring => "io_uring",
            PrefetchMethod::Fadvise => "fadvise",
            PrefetchMethod::Threads => "threads",
        }
    }

    /// The method used when none is configured.
    pub fn default_for_this_kernel() -> PrefetchMethod {
        if Ring::available() {
            PrefetchMethod::IoUring
        } else {
            PrefetchMethod::Fadvise
        }
    }
}

impl Default for RecoveryOptions {
    fn default() -> Self {
        RecoveryOptions {
            prefetch: RecoveryPrefetch::Try,
            maintenance_io_concurrency: 10,
            wal_decode_buffer_size: 512 << 10,
            method: PrefetchMethod::default_for_this_kernel(),
            direct_io: true,
        }
    }
}

/// What recovery did, with the counters of PostgreSQL's
/// `pg_stat_recovery_prefetch`. The distances and the I/O depth are
/// averages over replayed records (PostgreSQL shows the current value,
/// which is zero once recovery is over).
#[derive(Debug, Clone, Default)]
pub struct RecoveryStats {
    pub prefetch: u64,
    pub hit: u64,
    pub skip_init: u64,
    pub skip_new: u64,
    pub skip_fpw: u64,
    pub skip_rep: u64,
    pub wal_distance: f64,
    pub block_distance: f64,
    pub io_depth: f64,
    /// Records replayed and the WAL range.
    pub records: u64,
    pub redo_start: Lsn,
    pub redo_end: Lsn,
    /// Records whose change the page already had.
    pub already_applied: u64,
    /// Transactions with an abort record.
    pub aborted: u64,
    pub elapsed: Duration,
    /// How prefetches were started (`off` without prefetching).
    pub method: &'static str,
    /// io_uring reads that bypassed the page cache (`O_DIRECT`).
    pub direct_reads: u64,
}

impl RecoveryStats {
    /// Column names and values, in `pg_stat_recovery_prefetch` order.
    pub fn columns(&self) -> Vec<(&'static str, String)> {
        vec![
            ("prefetch", self.prefetch.to_string()),
            ("hit", self.hit.to_string()),
            ("skip_init", self.skip_init.to_string()),
            ("skip_new", self.skip_new.to_string()),
            ("skip_fpw", self.skip_fpw.to_string()),
            ("skip_rep", self.skip_rep.to_string()),
            ("wal_distance", format!("{:.0}", self.wal_distance)),
            ("block_distance", format!("{:.0}", self.block_distance)),
            ("io_depth", format!("{:.1}", self.io_depth)),
        ]
    }

    /// One line for the log at the end of recovery.
    pub fn summary(&self) -> String {
        let cols: Vec<String> = self
            .columns()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!(
            "redo done at {:X} ({} records from {:X}) in {:.3} s; recovery prefetch ({}): {}",
            self.redo_end,
            self.records,
            self.redo_start,
            self.elapsed.as_secs_f64(),
            self.method,
            cols.join(" ")
        )
    }
}

enum Ddl {
    Create(Xid, catalog::TableDef),
    Drop(Xid, u32),
    CreateIndex(Xid, catalog::IndexDef),
    Alter(Xid, catalog::TableDef),
    AlterIndex(Xid, catalog::IndexDef),
}

/// What replay found.
pub struct Outcome {
    /// End of valid WAL: new records go here.
    pub end: Lsn,
    pub stats: RecoveryStats,
}

/// Block reads started through io_uring and not yet finished.
///
/// Each read owns a claimed buffer ([`AsyncRead`]: pinned, `IO_IN_PROGRESS`)
/// and the open file it reads from; its slot number is the request's
/// `user_data`. Redo must never wait for such a buffer through the buffer
/// manager — only this thread can reap the completion that ends the wait —
/// so before redo touches a block, [`UringReads::wait_for`] finishes the
/// block's read. Field order matters: the ring drops first and waits for
/// every request still in the kernel, and only then are unfinished reads
/// dropped (which releases their buffers).
struct UringReads<'a> {
    ring: Ring,
    slots: Vec<Option<(AsyncRead<'a>, ReadFile)>>,
    free: Vec<usize>,
    by_block: BlockMap<usize>,
    pool: &'a BufferPool,
    smgr: &'a Smgr,
    direct: bool,
    direct_reads: u64,
}

/// Largest buffer pool whose pages recovery registers with its ring.
/// Registering pins every page of the pool, faulting in those never used
/// yet, and that is paid before the first read: on this project's 2-core VM
/// registering a 1 GB pool took about 4 s and a 128 MB one about 0.25 s,
/// while replaying a 60 s pgbench TPC-B crash at scale 1 took 0.1 s without
/// prefetching (`bench/run.py recovery-tpcb`). What it saves is the
/// kernel's pin of one destination page per read, well under the 4 µs a read
/// costs, so only a small pool, which replay fills anyway, is worth
/// registering; larger ones read into unregistered memory.
const MAX_REGISTERED_POOL: usize = 16 << 20;

impl<'a> UringReads<'a> {
    fn new(mut ring: Ring, pool: &'a BufferPool, smgr: &'a Smgr, direct: bool) -> Self {
        let (pages, len) = pool.page_memory();
        if len <= MAX_REGISTERED_POOL {
            // SAFETY: the pool's pages are mapped as long as `pool`, which
            // outlives this ring (`UringReads` borrows it). A refusal (e.g.
            // `RLIMIT_MEMLOCK`) leaves plain reads, so it is not an error.
            let _ = unsafe { ring.register_buffers(&[(pages, len)]) };
        }
        UringReads {
            ring,
            slots: Vec::new(),
            free: Vec::new(),
            by_block: BlockMap::default(),
            pool,
            smgr,
            direct,
            direct_reads: 0,
        }
    }

    /// Starts reading `b` into a buffer; false if it is in the pool already.
    fn start(&mut self, b: BlockRef) -> Result<bool, StorageError> {
        if self.by_block.contains_key(&b) {
            // Already on its way (the decoder's `pending` map normally
            // catches this first); claiming it again would wait on ourselves.
            return Ok(false);
        }
        while self.ring.room() == 0 {
            self.complete_next()?;
        }
        let Some(read) = self.pool.start_async_read(b.rel, b.block)? else {
            return Ok(false);
        };
        // A block written during replay is in the page cache (see
        // `Smgr::track_writes`): read it from there.
        let direct = self.direct && !self.smgr.was_written(b.rel, b.block);
        let file = self.smgr.read_file(b.rel, direct)?;
        self.direct_reads += file.is_direct() as u64;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        // SAFETY: the destination is the claimed buffer's page (8 kB): its
        // pin and IO_IN_PROGRESS, held by `read` in `slots[slot]` until the
        // completion is reaped (or the ring, dropped first, has waited for
        // it), keep every other thread away from it; the slot also keeps
        // the file open.
        let placed = unsafe {
            self.ring.prepare_read(
                file.fd(),
                read.page_ptr(),
                page::PAGE_SIZE as u32,
                b.block as u64 * page::PAGE_SIZE as u64,
                slot as u64,
            )
        };
        assert!(placed, "ring had room");
        self.slots[slot] = Some((read, file));
        self.by_block.insert(b, slot);
        Ok(true)
    }

    /// Hands the placed reads to the kernel once at least `batch` have
    /// gathered. Each submission costs a system call and, for direct reads
    /// on a virtual disk, a notification of the device (a VM exit), so
    /// reads go in batches; a read redo waits for is submitted by the wait.
    fn submit(&mut self, batch: u32) -> Result<(), StorageError> {
        if self.ring.unsubmitted() < batch.max(1) {
            return Ok(());
        }
        self.ring
            .submit()
            .map_err(|e| StorageError::io("could not submit reads".into(), e))
    }

    /// Makes a finished read's buffer valid. A failed read leaves the block
    /// unread; redo then reads it itself and reports the error.
    fn complete(&mut self, c: Completion) {
        let slot = c.user_data as usize;
        let Some((read, _file)) = self.slots.get_mut(slot).and_then(Option::take) else {
            return;
        };
        self.by_block.remove(&BlockRef {
            rel: read.rel(),
            block: read.block(),
        });
        self.free.push(slot);
        let _ = self.pool.finish_async_read(read, c.result);
    }

    fn complete_next(&mut self) -> Result<bool, StorageError> {
        match self.ring.wait() {
            Ok(Some(c)) => {
                self.complete(c);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(StorageError::io("could not wait for reads".into(), e)),
        }
    }

    /// Finishes the reads that are done, without waiting.
    fn reap_ready(&mut self) {
        while let Some(c) = self.ring.pop() {
            self.complete(c);
        }
    }

    /// Waits until the read of `b`, if one is under way, has finished.
    fn wait_for(&mut self, b: BlockRef) -> Result<(), StorageError> {
        while self.by_block.contains_key(&b) {
            if !self.complete_next()? {
                break;
            }
        }
        Ok(())
    }
}

/// Hashes a block reference with one multiply-mix instead of SipHash: the
/// keys are not chosen by an adversary, and these maps sit on redo's path.
#[derive(Default, Clone, Copy)]
struct BlockHasher(u64);

impl std::hash::Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        tusk_chash::mix64(self.0)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.0 = (self.0 << 32) ^ v as u64;
    }
}

type BlockMap<V> = HashMap<BlockRef, V, std::hash::BuildHasherDefault<BlockHasher>>;

struct Replayer<'a> {
    pool: &'a BufferPool,
    smgr: &'a Smgr,
    committed: HashSet<Xid>,
    /// Xids with an abort record.
    aborted: HashSet<Xid>,
    seen: HashSet<Xid>,
    /// The xid last added to `seen`: a transaction's records follow each
    /// other, so most records need no set insertion.
    last_seen: Xid,
    ddl: Vec<Ddl>,
}

/// Replays the WAL in `wal_dir` from `redo` into the buffer pool, then
/// settles transaction outcomes in `txn` and DDL outcomes in `catalog`.
/// The pool must not have a WAL attached yet.
pub fn replay(
    wal_dir: &Path,
    redo: Lsn,
    pool: &BufferPool,
    smgr: &Smgr,
    txn: &TxnManager,
    catalog: &RwLock<std::sync::Arc<Catalog>>,
    options: RecoveryOptions,
) -> Result<Outcome, StorageError> {
    assert!(pool.wal().is_none(), "redo must not log");
    let start = Instant::now();
    let mut stats = RecoveryStats {
        redo_start: redo,
        ..Default::default()
    };
    let prefetching = options.prefetch != RecoveryPrefetch::Off;
    let mut max_io = options.maintenance_io_concurrency.max(1);
    if prefetching && options.method != PrefetchMethod::Fadvise {
        // Reads into buffers pin them until they complete: leave most of
        // the pool to redo.
        max_io = max_io.min((pool.nbuffers() / 4).max(1));
    }
    let threads = if prefetching && options.method == PrefetchMethod::Threads {
        max_io
    } else {
        0
    };
    // io_uring where asked for and the kernel allows it, else fadvise.
    let ring = if prefetching && options.method == PrefetchMethod::IoUring {
        Ring::new((max_io as u32).next_power_of_two()).ok()
    } else {
        None
    };
    // How far ahead of redo the prefetcher may run, in prefetched blocks.
    // io_uring and the I/O threads know when a read is done, so only reads
    // under way count against `maintenance_io_concurrency`, and blocks read
    // (or found in the page cache) before redo needs them stop holding an
    // I/O slot; the look-ahead is then DISTANCE_MULTIPLIER times the
    // concurrency, like PostgreSQL's, and at most a quarter of the pool,
    // where the blocks read wait unpinned. `posix_fadvise` cannot tell when
    // the kernel's read is done: a hint counts as in flight until redo
    // reaches its record, so there the look-ahead is the concurrency.
    let tracks_completion = ring.is_some() || threads > 0;
    let max_ahead = if tracks_completion {
        (max_io * DISTANCE_MULTIPLIER)
            .min(pool.nbuffers() / 4)
            .max(max_io)
    } else {
        max_io
    };
    stats.method = match (prefetching, &ring, options.method) {
        (false, _, _) => "off",
        (true, None, PrefetchMethod::IoUring) => PrefetchMethod::Fadvise.name(),
        (true, _, m) => m.name(),
    };
    let (mut sum_wal, mut sum_blocks, mut sum_io) = (0u64, 0u64, 0u64);
    let redo_done = AtomicBool::new(false);
    // Blocks handed to the I/O threads and not yet read.
    let thread_reads = AtomicUsize::new(0);
    let (r, end) = std::thread::scope(|scope| -> Result<_, StorageError> {
        // I/O threads: each reads requested blocks into the buffer pool, so
        // up to `threads` reads are in flight while redo works.
        let (requests, workers) = if threads > 0 {
            let (tx, rx) = std::sync::mpsc::channel::<BlockRef>();
            let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let rx = rx.clone();
                    let busy = &thread_reads;
                    scope.spawn(move || loop {
                        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok(b) = next else { break };
                        // A failed read is reported when redo reads the block.
                        let _ = pool.read_buffer(b.rel, b.block);
                        busy.fetch_sub(1, Ordering::Release);
                    })
                })
                .collect();
            (Some(tx), workers)
        } else {
            (None, Vec::new())
        };
        // The background writer: cleans buffers ahead of the clock hand so
        // that redo seldom has to write a victim itself.
        let bgwriter = std::thread::Builder::new()
            .name("tusk bgwriter".into())
            .spawn_scoped(scope, || -> Result<(), StorageError> {
                while !redo_done.load(Ordering::Acquire) {
                    if pool.clean_ahead(128)? == 0 {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                }
                Ok(())
            })
            .map_err(|e| StorageError::io("could not start the background writer".into(), e))?;
        // Stops the writer however redo ends (an error returns early).
        struct Stop<'f>(&'f AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let stop = Stop(&redo_done);
        let direct_io = ring.is_some() && options.direct_io;
        smgr.track_writes(direct_io);
        let mut uring = ring.map(|ring| UringReads::new(ring, pool, smgr, direct_io));
        let mut reader = WalReader::new(wal_dir, redo);
        let mut r = Replayer {
            pool,
            smgr,
            committed: HashSet::new(),
            aborted: HashSet::new(),
            seen: HashSet::new(),
            last_seen: crate::txn::INVALID_XID,
            ddl: Vec::new(),
        };
        let submit_batch = (max_io / 4).max(1) as u32;
        // Decoded records not yet replayed, and how many of them name a block.
        let mut queue: VecDeque<Record> = VecDeque::new();
        let mut queued_blocks = 0usize;
        let mut eof = false;
        // LSNs of records whose block was prefetched and not yet replayed.
        let mut ahead: VecDeque<Lsn> = VecDeque::new();
        // Blocks prefetched and not yet replayed: a block needed again is skip_rep.
        let mut pending: BlockMap<Lsn> = BlockMap::default();
        // Reads under way: started and not known to be done.
        let reads_in_flight = |ahead: &VecDeque<Lsn>, uring: &Option<UringReads>| match uring {
            Some(u) => u.ring.pending() as usize,
            None if threads > 0 => thread_reads.load(Ordering::Acquire),
            None => ahead.len(),
        };
        loop {
            if let Some(u) = &mut uring {
                u.reap_ready();
            }
            // Decode ahead.
            while !eof {
                let may_prefetch = prefetching && {
                    let bytes = match (queue.front(), queue.back()) {
                        (Some(f), Some(b)) => (b.end - f.lsn) as usize,
                        _ => 0,
                    };
                    bytes < options.wal_decode_buffer_size
                        && ahead.len() < max_ahead
                        && reads_in_flight(&ahead, &uring) < max_io
                };
                // Redo always gets its next record, limits or not (reads in
                // flight need not belong to queued records: an I/O thread
                // may still be finishing a block redo has read itself); a
                // record decoded only for that is not prefetched, as redo
                // reads its block at once.
                if !may_prefetch && !queue.is_empty() {
                    break;
                }
                let Some(rec) = reader.next_record()? else {
                    eof = true;
                    break;
                };
                if let Some(b) = rec.block {
                    queued_blocks += 1;
                    if may_prefetch {
                        if rec.fpi {
                            stats.skip_fpw += 1;
                        } else if rec.will_init() {
                            stats.skip_init += 1;
                        } else if !smgr.exists(b.rel) || b.block >= smgr.nblocks(b.rel)? {
                            stats.skip_new += 1;
                        } else {
                            match pending.entry(b) {
                                Entry::Occupied(_) => stats.skip_rep += 1,
                                Entry::Vacant(slot) => {
                                    let started = if pool.is_cached(b.rel, b.block) {
                                        false
                                    } else if let Some(tx) = &requests {
                                        thread_reads.fetch_add(1, Ordering::Relaxed);
                                        if tx.send(b).is_err() {
                                            thread_reads.fetch_sub(1, Ordering::Relaxed);
                                        }
                                        true
                                    } else if let Some(u) = &mut uring {
                                        u.start(b)?
                                    } else {
                                        smgr.prefetch(b.rel, b.block)?;
                                        true
                                    };
                                    if started {
                                        stats.prefetch += 1;
                                        ahead.push_back(rec.lsn);
                                        slot.insert(rec.lsn);
                                    } else {
                                        stats.hit += 1;
                                    }
                                }
                            }
                        }
                    }
                }
                queue.push_back(rec);
            }
            if let Some(u) = &mut uring {
                u.submit(if eof { 1 } else { submit_batch })?;
            }
            let Some(rec) = queue.pop_front() else {
                assert!(eof, "the decoder stopped before the end of the WAL");
                break;
            };
            while ahead.front().is_some_and(|&l| l <= rec.lsn) {
                ahead.pop_front();
            }
            if let Some(b) = rec.block {
                queued_blocks -= 1;
                if pending.get(&b) == Some(&rec.lsn) {
                    pending.remove(&b);
                }
                if let Some(u) = &mut uring {
                    u.reap_ready();
                    u.wait_for(b)?;
                }
            }
            sum_wal += queue.back().map_or(rec.end, |b| b.end) - rec.lsn;
            sum_blocks += queued_blocks as u64;
            sum_io += reads_in_flight(&ahead, &uring) as u64;
            stats.records += 1;
            if !r.apply(&rec)? {
                stats.already_applied += 1;
            }
            reader.recycle(rec);
        }

        let end = reader.pos();
        if let Some(u) = uring {
            stats.direct_reads = u.direct_reads;
        }
        drop(stop);
        let bgwriter_result = bgwriter.join();
        smgr.track_writes(false);
        match bgwriter_result {
            Ok(res) => res?,
            Err(p) => std::panic::resume_unwind(p),
        }
        drop(requests);
        for w in workers {
            let _ = w.join();
        }
        Ok((r, end))
    })?;
    stats.redo_end = end;
    if stats.records > 0 {
        let n = stats.records as f64;
        stats.wal_distance = sum_wal as f64 / n;
        stats.block_distance = sum_blocks as f64 / n;
        stats.io_depth = sum_io as f64 / n;
    }

    // Transaction outcomes.
    txn.recover_statuses(
        r.committed.iter().map(|&x| (x, true)).chain(
            r.seen
                .union(&r.aborted)
                .filter(|x| !r.committed.contains(x))
                .map(|&x| (x, false)),
        ),
    )?;
    stats.aborted = r.aborted.len() as u64;
    // DDL outcomes, in WAL order.
    let mut guard = catalog.write().unwrap_or_else(|e| e.into_inner());
    let cat = std::sync::Arc::make_mut(&mut guard);
    for d in r.ddl {
        match d {
            Ddl::Create(xid, def) => {
                if r.committed.contains(&xid) {
                    crate::columnar::create_files(smgr, &def, true)?;
                    if cat.table_by_oid(def.oid) != Some(&def) {
                        cat.restore_table(def)?;
                    }
                } else {
                    let gone = cat.remove_oid(def.oid)?;
                    drop_files(pool, smgr, gone.into_iter().chain([def.oid]))?;
                }
            }
            Ddl::CreateIndex(xid, def) => {
                if r.committed.contains(&xid) && cat.table_by_oid(def.table).is_some() {
                    smgr.create_if_missing(def.oid)?;
                    if cat.index_by_oid(def.oid) != Some(&def) {
                        cat.restore_index(def)?;
                    }
                } else {
                    let gone = cat.remove_oid(def.oid)?;
                    drop_files(pool, smgr, gone.into_iter().chain([def.oid]))?;
                }
            }
            // An uncommitted ALTER never reached the catalog file.
            Ddl::Alter(xid, def) => {
                if r.committed.contains(&xid)
                    && cat.table_by_oid(def.oid).is_some_and(|t| *t != def)
                {
                    cat.restore_table(def)?;
                }
            }
            Ddl::AlterIndex(xid, def) => {
                if r.committed.contains(&xid)
                    && cat.index_by_oid(def.oid).is_some_and(|i| *i != def)
                {
                    cat.restore_index(def)?;
                }
            }
            Ddl::Drop(xid, oid) => {
                if r.committed.contains(&xid) {
                    let gone = cat.remove_oid(oid)?;
                    drop_files(pool, smgr, gone.into_iter().chain([oid]))?;
                }
            }
        }
    }
    stats.elapsed = start.elapsed();
    Ok(Outcome { end, stats })
}

/// Forgets the buffers and removes the files of relations `rels`.
fn drop_files(
    pool: &BufferPool,
    smgr: &Smgr,
    rels: impl Iterator<Item = u32>,
) -> Result<(), StorageError> {
    for rel in rels {
        pool.drop_relation(rel);
        smgr.unlink(rel)?;
    }
    Ok(())
}

fn corrupt(rec: &Record, what: &str) -> StorageError {
    StorageError::Other(format!(
        "invalid WAL record at {:X} ({:?}): {what}",
        rec.lsn, rec.kind
    ))
}

impl Replayer<'_> {
    /// Notes that `xid` wrote records (its outcome is settled at the end).
    fn saw(&mut self, xid: Xid) {
        if xid != self.last_seen {
            self.seen.insert(xid);
            self.last_seen = xid;
        }
    }

    /// Replays one record; false if its change was already on the page.
    fn apply(&mut self, rec: &Record) -> Result<bool, StorageError> {
        match rec.kind {
            RecordType::Commit => {
                self.committed.insert(rec.xid);
                self.committed.extend(rec.sub_xids());
                Ok(true)
            }
            RecordType::Abort => {
                self.aborted.insert(rec.xid);
                self.aborted.extend(rec.sub_xids());
                Ok(true)
            }
            RecordType::CreateTable => {
                self.saw(rec.xid);
                let text = std::str::from_utf8(&rec.payload).map_err(|_| corrupt(rec, "utf8"))?;
                self.ddl
                    .push(Ddl::Create(rec.xid, catalog::decode_table(text)?));
                Ok(true)
            }
            RecordType::DropTable => {
                self.saw(rec.xid);
                let oid = rec
                    .payload
                    .get(..4)
                    .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                    .ok_or_else(|| corrupt(rec, "short payload"))?;
                self.ddl.push(Ddl::Drop(rec.xid, oid));
                Ok(true)
            }
            RecordType::CreateIndex => {
                self.saw(rec.xid);
                let text = std::str::from_utf8(&rec.payload).map_err(|_| corrupt(rec, "utf8"))?;
                self.ddl
                    .push(Ddl::CreateIndex(rec.xid, catalog::decode_index(text)?));
                Ok(true)
            }
            RecordType::AlterTable => {
                self.saw(rec.xid);
                let text = std::str::from_utf8(&rec.payload).map_err(|_| corrupt(rec, "utf8"))?;
                self.ddl
                    .push(Ddl::Alter(rec.xid, catalog::decode_table(text)?));
                Ok(true)
            }
            RecordType::AlterIndex => {
                self.saw(rec.xid);
                let text = std::str::from_utf8(&rec.payload).map_err(|_| corrupt(rec, "utf8"))?;
                self.ddl
                    .push(Ddl::AlterIndex(rec.xid, catalog::decode_index(text)?));
                Ok(true)
            }
            RecordType::HeapInsert
            | RecordType::HeapInsertInit
            | RecordType::HeapDelete
            | RecordType::HeapLock
            | RecordType::HeapUpdate
            | RecordType::HeapPruneChains
            | RecordType::HeapPrune
            | RecordType::HeapUnused
            | RecordType::BtreeInsert
            | RecordType::BtreePage
            | RecordType::BtreeDelete
            | RecordType::HeapPage
            | RecordType::ColumnarPage => {
                self.saw(rec.xid);
                self.redo_page(rec)
            }
            // Not transactional: no xid to settle.
            RecordType::Sequence => self.redo_page(rec),
        }
    }

    /// Redo of a record that changes one page (heap and btree records).
    fn redo_page(&mut self, rec: &Record) -> Result<bool, StorageError> {
        let b = rec.block.ok_or_else(|| corrupt(rec, "no block"))?;
        self.smgr.create_if_missing(b.rel)?;
        while self.smgr.nblocks(b.rel)? <= b.block {
            self.smgr.extend(b.rel)?;
        }
        let buf = self
            .pool
            .read_buffer_for_redo(b.rel, b.block, rec.will_init())?;
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        if rec.fpi {
            if rec.payload.len() != page::PAGE_SIZE {
                return Err(corrupt(rec, "bad page image"));
            }
            p.copy_from_slice(&rec.payload);
            page::set_lsn(p, rec.lsn);
            return Ok(true);
        }
        if !rec.will_init() && page::lsn(p) >= rec.lsn {
            return Ok(false);
        }
        if rec.kind == RecordType::Sequence {
            crate::sequence::redo(p, &rec.payload).map_err(|e| corrupt(rec, e))?;
            page::set_lsn(p, rec.lsn);
            return Ok(true);
        }
        if matches!(rec.kind, RecordType::BtreeInsert | RecordType::BtreeDelete) {
            crate::btree::redo(rec.kind, p, &rec.payload).map_err(|e| corrupt(rec, e))?;
            page::set_lsn(p, rec.lsn);
            return Ok(true);
        }
        if rec.kind == RecordType::HeapPruneChains {
            crate::prune::redo(p, &rec.payload).map_err(|e| corrupt(rec, e))?;
            page::set_lsn(p, rec.lsn);
            return Ok(true);
        }
        if matches!(rec.kind, RecordType::HeapPrune | RecordType::HeapUnused) {
            let mut items = Vec::new();
            crate::wal::decode_item_set(&rec.payload, &mut items).map_err(|e| corrupt(rec, e))?;
            let ok = if rec.kind == RecordType::HeapPrune {
                page::prune(p, &items)
            } else {
                page::set_unused(p, &items)
            };
            if !ok {
                return Err(corrupt(rec, "item state does not match"));
            }
            page::set_lsn(p, rec.lsn);
            return Ok(true);
        }
        let item = rec
            .payload
            .get(..2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or_else(|| corrupt(rec, "short payload"))?;
        match rec.kind {
            RecordType::HeapInsertInit | RecordType::HeapInsert => {
                if rec.kind == RecordType::HeapInsertInit {
                    page::init(p);
                } else if page::is_new(p) {
                    return Err(corrupt(rec, "insert into an uninitialised page"));
                }
                if page::add_item(p, &rec.payload[2..]) != Some(item) {
                    return Err(corrupt(rec, "item number does not match"));
                }
            }
            RecordType::HeapDelete | RecordType::HeapLock | RecordType::HeapUpdate => {
                let state = tuple::XmaxState::decode(&rec.payload[2..])
                    .ok_or_else(|| corrupt(rec, "short payload"))?;
                let t = page::item_bytes_mut(p, item)
                    .ok_or_else(|| corrupt(rec, "changed item missing"))?;
                state.apply(t);
                // An update whose new version is on the same page.
                let rest = &rec.payload[2 + tuple::XMAX_STATE_SIZE..];
                if rec.kind == RecordType::HeapUpdate && rest.len() > 2 {
                    let new_item = u16::from_le_bytes([rest[0], rest[1]]);
                    if page::add_item(p, &rest[2..]) != Some(new_item) {
                        return Err(corrupt(rec, "item number does not match"));
                    }
                }
            }
            _ => unreachable!(),
        }
        page::set_lsn(p, rec.lsn);
        Ok(true)
    }
}
