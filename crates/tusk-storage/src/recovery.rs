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
//! 4. *Checkpoints.* A checkpoint holds the writer lock, takes the current end
//!    of WAL as its redo point, writes and fsyncs every dirty page, the
//!    relation files and `pg_xact`, and then replaces `pg_control`. Everything
//!    before the redo point is then in the data files, so WAL segments before
//!    it are removed. Because no transaction runs during a checkpoint, a
//!    transaction that wrote records before the redo point had also written
//!    its `pg_xact` status before it.
//! 5. *Commit.* A commit record is inserted (and flushed, with
//!    `synchronous_commit = on`) before `pg_xact` says committed and before
//!    success is reported.
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
//! * commit records: the xid committed. Every xid that wrote records after
//!   the redo point but has no commit record is aborted — including one whose
//!   `pg_xact` byte said committed with `synchronous_commit = off` but whose
//!   commit record did not reach the disk.
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
//!
//! Btree records (`BtreeInsert`, `BtreePage`, `BtreeDelete`) and VACUUM's
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
//! blocks already in the buffer pool (`hit`), and calls
//! `posix_fadvise(WILLNEED)` for the rest (`prefetch`), so the kernel reads
//! them while redo works on earlier records; redo's synchronous `pread` then
//! finds them in the page cache. At most `maintenance_io_concurrency` such
//! reads are in flight: a prefetch counts until redo reaches its record, and
//! while the limit is reached the decoder waits.
//!
//! `tusk.recovery_prefetch_method = threads` replaces the kernel hint by
//! real asynchronous reads into the buffer pool: `maintenance_io_concurrency`
//! I/O threads read the requested blocks with the buffer manager's ordinary
//! `read_buffer` (whose `IO_IN_PROGRESS` protocol lets redo wait for a read
//! a thread started), so redo finds them as buffer hits. io_uring is not
//! used: no io_uring crate is approved, and raw ring management would need
//! a large `unsafe` module. On the 2-core VM where this was measured the
//! threads lost to `fadvise` (they compete with redo for the CPU), so
//! `fadvise` is the default.
//!
use crate::bufmgr::BufferPool;
use crate::catalog::{self, Catalog};
use crate::page;
use crate::smgr::Smgr;
use crate::tuple;
use crate::txn::{TxnManager, Xid};
use crate::wal::{BlockRef, Lsn, Record, RecordType, WalReader};
use crate::StorageError;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::RwLock;
use std::time::{Duration, Instant};

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
}

/// How a prefetch is started (`tusk.recovery_prefetch_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchMethod {
    /// `posix_fadvise(WILLNEED)`: the kernel reads into its page cache.
    Fadvise,
    /// I/O threads read the block into the buffer pool.
    Threads,
}

impl PrefetchMethod {
    pub fn parse(v: &str) -> Option<PrefetchMethod> {
        match v.trim() {
            "fadvise" => Some(PrefetchMethod::Fadvise),
            "threads" => Some(PrefetchMethod::Threads),
            _ => None,
        }
    }
}

impl Default for RecoveryOptions {
    fn default() -> Self {
        RecoveryOptions {
            prefetch: RecoveryPrefetch::Try,
            maintenance_io_concurrency: 10,
            wal_decode_buffer_size: 512 << 10,
            method: PrefetchMethod::Fadvise,
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
    pub elapsed: Duration,
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
            "redo done at {:X} ({} records from {:X}) in {:.3} s; recovery prefetch: {}",
            self.redo_end,
            self.records,
            self.redo_start,
            self.elapsed.as_secs_f64(),
            cols.join(" ")
        )
    }
}

enum Ddl {
    Create(Xid, catalog::TableDef),
    Drop(Xid, u32),
    CreateIndex(Xid, catalog::IndexDef),
}

/// What replay found.
pub struct Outcome {
    /// End of valid WAL: new records go here.
    pub end: Lsn,
    pub stats: RecoveryStats,
}

struct Replayer<'a> {
    pool: &'a BufferPool,
    smgr: &'a Smgr,
    committed: HashSet<Xid>,
    seen: HashSet<Xid>,
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
    catalog: &RwLock<Catalog>,
    options: RecoveryOptions,
) -> Result<Outcome, StorageError> {
    assert!(pool.wal().is_none(), "redo must not log");
    let start = Instant::now();
    let mut stats = RecoveryStats {
        redo_start: redo,
        ..Default::default()
    };
    let prefetching = options.prefetch != RecoveryPrefetch::Off;
    let threads = if prefetching && options.method == PrefetchMethod::Threads {
        options.maintenance_io_concurrency.max(1)
    } else {
        0
    };
    let (mut sum_wal, mut sum_blocks, mut sum_io) = (0u64, 0u64, 0u64);
    let (r, end) = std::thread::scope(|scope| -> Result<_, StorageError> {
        // I/O threads: each reads requested blocks into the buffer pool, so
        // up to `threads` reads are in flight while redo works.
        let (requests, workers) = if threads > 0 {
            let (tx, rx) = std::sync::mpsc::channel::<BlockRef>();
            let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let rx = rx.clone();
                    scope.spawn(move || loop {
                        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok(b) = next else { break };
                        // A failed read is reported when redo reads the block.
                        let _ = pool.read_buffer(b.rel, b.block);
                    })
                })
                .collect();
            (Some(tx), workers)
        } else {
            (None, Vec::new())
        };
        let mut reader = WalReader::new(wal_dir, redo);
        let mut r = Replayer {
            pool,
            smgr,
            committed: HashSet::new(),
            seen: HashSet::new(),
            ddl: Vec::new(),
        };
        let max_io = options.maintenance_io_concurrency.max(1);
        // Decoded records not yet replayed, and how many of them name a block.
        let mut queue: VecDeque<Record> = VecDeque::new();
        let mut queued_blocks = 0usize;
        let mut eof = false;
        // LSNs of records whose block was prefetched and not yet replayed.
        let mut in_flight: VecDeque<Lsn> = VecDeque::new();
        // Blocks prefetched and not yet replayed: a block needed again is skip_rep.
        let mut pending: HashMap<BlockRef, Lsn> = HashMap::new();
        loop {
            // Decode ahead.
            while !eof {
                let room = if prefetching {
                    let bytes = match (queue.front(), queue.back()) {
                        (Some(f), Some(b)) => (b.end - f.lsn) as usize,
                        _ => 0,
                    };
                    bytes < options.wal_decode_buffer_size && in_flight.len() < max_io
                } else {
                    queue.is_empty()
                };
                if !room {
                    break;
                }
                let Some(rec) = reader.next_record()? else {
                    eof = true;
                    break;
                };
                if let Some(b) = rec.block {
                    queued_blocks += 1;
                    if prefetching {
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
                                    if pool.is_cached(b.rel, b.block) {
                                        stats.hit += 1;
                                    } else {
                                        match &requests {
                                            Some(tx) => {
                                                let _ = tx.send(b);
                                            }
                                            None => smgr.prefetch(b.rel, b.block)?,
                                        }
                                        stats.prefetch += 1;
                                        in_flight.push_back(rec.lsn);
                                        slot.insert(rec.lsn);
                                    }
                                }
                            }
                        }
                    }
                }
                queue.push_back(rec);
            }
            let Some(rec) = queue.pop_front() else {
                break;
            };
            while in_flight.front().is_some_and(|&l| l <= rec.lsn) {
                in_flight.pop_front();
            }
            if let Some(b) = rec.block {
                queued_blocks -= 1;
                if pending.get(&b) == Some(&rec.lsn) {
                    pending.remove(&b);
                }
            }
            sum_wal += queue.back().map_or(rec.end, |b| b.end) - rec.lsn;
            sum_blocks += queued_blocks as u64;
            sum_io += in_flight.len() as u64;
            stats.records += 1;
            if !r.apply(&rec)? {
                stats.already_applied += 1;
            }
        }

        let end = reader.pos();
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
    for &x in &r.committed {
        txn.recover_status(x, true)?;
    }
    for &x in r.seen.difference(&r.committed) {
        txn.recover_status(x, false)?;
    }
    // DDL outcomes, in WAL order.
    let mut cat = catalog.write().unwrap_or_else(|e| e.into_inner());
    for d in r.ddl {
        match d {
            Ddl::Create(xid, def) => {
                if r.committed.contains(&xid) {
                    smgr.create_if_missing(def.oid)?;
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
    /// Replays one record; false if its change was already on the page.
    fn apply(&mut self, rec: &Record) -> Result<bool, StorageError> {
        match rec.kind {
            RecordType::Commit => {
                self.committed.insert(rec.xid);
                Ok(true)
            }
            RecordType::CreateTable => {
                self.seen.insert(rec.xid);
                let text = std::str::from_utf8(&rec.payload).map_err(|_| corrupt(rec, "utf8"))?;
                self.ddl
                    .push(Ddl::Create(rec.xid, catalog::decode_table(text)?));
                Ok(true)
            }
            RecordType::DropTable => {
                self.seen.insert(rec.xid);
                let oid = rec
                    .payload
                    .get(..4)
                    .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                    .ok_or_else(|| corrupt(rec, "short payload"))?;
                self.ddl.push(Ddl::Drop(rec.xid, oid));
                Ok(true)
            }
            RecordType::CreateIndex => {
                self.seen.insert(rec.xid);
                let text = std::str::from_utf8(&rec.payload).map_err(|_| corrupt(rec, "utf8"))?;
                self.ddl
                    .push(Ddl::CreateIndex(rec.xid, catalog::decode_index(text)?));
                Ok(true)
            }
            RecordType::HeapInsert
            | RecordType::HeapInsertInit
            | RecordType::HeapDelete
            | RecordType::HeapPrune
            | RecordType::HeapUnused
            | RecordType::BtreeInsert
            | RecordType::BtreePage
            | RecordType::BtreeDelete => {
                self.seen.insert(rec.xid);
                self.redo_page(rec)
            }
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
        if matches!(rec.kind, RecordType::BtreeInsert | RecordType::BtreeDelete) {
            crate::btree::redo(rec.kind, p, &rec.payload).map_err(|e| corrupt(rec, e))?;
            page::set_lsn(p, rec.lsn);
            return Ok(true);
        }
        if matches!(rec.kind, RecordType::HeapPrune | RecordType::HeapUnused) {
            let items: Vec<u16> = rec
                .payload
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
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
            RecordType::HeapDelete => {
                let t = page::item_bytes_mut(p, item)
                    .ok_or_else(|| corrupt(rec, "deleted item missing"))?;
                tuple::set_xmax(t, rec.xid);
            }
            _ => unreachable!(),
        }
        page::set_lsn(p, rec.lsn);
        Ok(true)
    }
}
