//! The write-ahead log: records, segment files, insertion and flushing.
//!
//! ## The log
//!
//! The WAL is one byte stream cut into segment files of [`SEGMENT_SIZE`]
//! bytes, `pg_wal/%016X` named by segment number. A log sequence number
//! ([`Lsn`]) is a byte position in that stream, so a record's LSN says where
//! it starts, and records may straddle segment boundaries. Every record starts
//! at an 8-byte aligned position and looks like this:
//!
//! ```text
//!  0  total length u32   (header + payload, without alignment padding)
//!  4  CRC32C u32         (of bytes 8 .. total length)
//!  8  LSN u64            (the record's own position: stale bytes never pass)
//! 16  xid u32
//! 20  type u8            ([`RecordType`])
//! 21  flags u8           (HAS_BLOCK, HAS_FPI)
//! 22  reserved u16
//! 24  block reference: relation u32, block u32 (fork 0, the main fork)
//! 32  payload            (a full-page image when HAS_FPI, else the change)
//! ```
//!
//! A record changes at most one page, so one block reference is enough for
//! every record the heap and the btree write (a btree page split writes one
//! page-image record per page it changes; see `btree`). When `HAS_FPI` is set the payload is
//! the whole 8 kB page *after* the change and redo simply restores it.
//!
//! ## End of the log
//!
//! Reading stops at the first position where the header does not check: a
//! length too small or too large, an LSN field that differs from the
//! position, an unknown type, a CRC mismatch, or missing bytes. That is how a
//! torn tail (a record whose write was cut short by the crash) is found:
//! replay ends cleanly at the last whole record. After recovery the segment
//! holding the end is truncated there and later segments are removed, so the
//! bytes of a torn record can never be mistaken for new records.
//!
//! ## Writing
//!
//! Two locks, as in PostgreSQL (its insertion locks and `WALWriteLock`):
//!
//! * the *inserter* lock guards the WAL buffer (process local). [`Wal::insert`]
//!   serialises a record into it and returns its LSN. Page changes go
//!   through [`Wal::insert_page_change`], which decides under this lock
//!   whether the change must log a full-page image (the page's LSN is at or
//!   below the redo point); [`Wal::begin_checkpoint`] moves the redo point
//!   under the same lock, so no change can decide with a stale redo point.
//! * the *writer* lock guards the segment files. Whoever holds it takes the
//!   whole buffer (swapping in an empty one, so inserts go on meanwhile),
//!   writes it and, to flush, `fdatasync`s. `flushed_lsn` is published with
//!   release ordering after the sync returns, so a thread that reads a
//!   value `>= x` knows everything before `x` is durable.
//!
//! **Group commit** falls out of this: while one session syncs, the commit
//! records of others pile up in the buffer; when the sync is over, the next
//! session to get the writer lock writes and syncs all of them at once, and
//! the rest find their records durable without a sync of their own.
//! [`WalStats`] counts commits, syncs and the commits that rode along
//! (`commits_grouped`); `syncs / commits` is the flushes per commit.
//!
//! Writes of at least 256 kB bypass the page cache where the file system
//! allows it (`waldirect`).
//!
//! When the buffer passes `wal_buffers`, the WAL writer thread (see
//! `walwriter`) is woken to write it out without a sync, and the inserting
//! session keeps appending: a bulk load fills pages while the thread hands
//! the previous megabytes to the kernel. Without a WAL writer (or while it
//! has not caught up) the inserting session writes the buffer itself if
//! the writer lock is free; only at four times `wal_buffers` does it wait.
//!
//! ## Preallocation
//!
//! A commit's `fdatasync` should write the commit record and nothing else.
//! If the write made the segment file longer, the sync must also write the
//! file's new size and block allocation (on ext4 without a journal, the
//! inode's table block and bitmaps, each a synchronous write of its own,
//! and shared with whatever else changes files on that disk): commits
//! then take several times as long and, on a busy disk, a long tail. So,
//! as PostgreSQL's zero-filled segments do, WAL is written only into
//! blocks that already exist:
//!
//! * the WAL writer thread keeps at least half an [`ALLOCATE_STEP`] of
//!   zeros written and synced ahead of the end of the WAL
//!   ([`Wal::prepare_ahead`]), and once a segment is half used creates the
//!   next one whole (zero-filled under a temporary name, synced, linked
//!   into place);
//! * a checkpoint renames segments it no longer needs to future segment
//!   numbers (up to [`MAX_SPARE_SEGMENTS`]) instead of deleting them;
//! * a write that outruns all this allocates for itself, a step at a time;
//!   except a write of at least `waldirect::DIRECT_MIN` bytes (a bulk
//!   load's, written while it runs and synced once at its end), which
//!   extends the file itself instead of having every byte written twice.
//!
//! Zeros and old records read as the end of the log (a zero length; an
//! LSN field that is not the position). At startup the open segment is
//! zeroed from the end of valid WAL on, and later segments are removed, so
//! records a crashed run wrote beyond that end never follow new ones.
//!
//! The buffer manager calls [`Wal::flush`] with a page's LSN before writing
//! the page (WAL-before-data); a commit inserts a commit record and, with
//! `synchronous_commit = on`, flushes it before reporting success.

use crate::waldirect::{DirectWriter, DIRECT_MIN};
use crate::StorageError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// A position in the WAL.
pub type Lsn = u64;

pub const SEGMENT_SIZE: u64 = 16 << 20;
pub const HEADER_SIZE: usize = 32;
/// Largest payload a record may carry (a page image plus some slack).
pub const MAX_PAYLOAD: usize = 64 << 10;

const FLAG_HAS_BLOCK: u8 = 1;
const FLAG_HAS_FPI: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// Payload: item number u16, tuple bytes.
    HeapInsert = 1,
    /// As `HeapInsert`, into a page that was empty: redo formats the page first.
    HeapInsertInit = 2,
    /// Payload: item number u16, the tuple's new [`XmaxState`] (xmax,
    /// cmax, infomask, ctid): a delete.
    ///
    /// [`XmaxState`]: crate::tuple::XmaxState
    HeapDelete = 3,
    /// The record's xid committed, with the sub-xids in the payload (u32
    /// each): its committed subtransactions.
    Commit = 4,
    /// Payload: the table definition (catalog text). Logged before the
    /// relation file is created.
    CreateTable = 5,
    /// Payload: relation oid u32 (a table, which takes its indexes along,
    /// or an index). The drop takes effect if the xid commits.
    DropTable = 6,
    /// The record's xid aborted, with the sub-xids in the payload (u32
    /// each): a rolled-back transaction or subtransaction. Not flushed:
    /// recovery aborts an xid without a commit record anyway.
    Abort = 7,
    /// As `HeapDelete`: a row lock (`SELECT ... FOR UPDATE` / `FOR SHARE`)
    /// changed the tuple's xmax state.
    HeapLock = 8,
    /// As `HeapDelete`, for the old version of an updated tuple (its ctid
    /// names the new version); when the new version is on the same page
    /// the payload goes on with its item number u16 and its bytes.
    HeapUpdate = 9,
    /// Payload: a page prune that follows HOT chains (see `prune`): three
    /// lists, each a u16 count and its entries — redirects (root u16,
    /// target u16), items made dead, items made unused.
    HeapPruneChains = 10,
    /// Payload: position u16, TID (block u32, item u16), child block u32
    /// (0 on leaves), then the key bytes: one entry inserted into a btree
    /// page (see `btree`).
    BtreeInsert = 20,
    /// Always a page image (`HAS_FPI`): a btree page written whole (split
    /// halves, new root, metapage, pages of a logged build).
    BtreePage = 21,
    /// Payload: the positions of the entries VACUUM removed from a btree
    /// leaf, as an [item set](encode_item_set).
    BtreeDelete = 22,
    /// Payload: the item numbers of heap tuples VACUUM pruned, as an
    /// [item set](encode_item_set): their line pointers become dead and the
    /// page is compacted.
    HeapPrune = 23,
    /// Payload: the item numbers of dead line pointers VACUUM made unused
    /// (their index entries are gone; inserts may reuse them), as an
    /// [item set](encode_item_set).
    HeapUnused = 24,
    /// Payload: the index definition (catalog text). Logged before the
    /// index relation file is created.
    CreateIndex = 25,
    /// Always a page image (`HAS_FPI`): a heap page filled whole by a bulk
    /// load (COPY; see `bulk`), logged once when it is complete instead of
    /// one `HeapInsert` per tuple.
    HeapPage = 26,
    /// Always a page image (`HAS_FPI`): a page of a columnar table's row
    /// group, written whole (see `columnar::rowgroup`).
    ColumnarPage = 27,
    /// Payload: a table's or view's new definition (catalog text, same
    /// oid): ALTER TABLE changes that need no new relation file (renames,
    /// defaults, NOT NULL, CHECK constraints). Takes effect if the xid
    /// commits.
    AlterTable = 30,
    /// Payload: an index's new definition (catalog text, same oid): ALTER
    /// INDEX ... RENAME and constraint renames. Takes effect if the xid
    /// commits.
    AlterIndex = 31,
    /// Payload: a sequence's state (see `sequence`), block 0 of the
    /// sequence's relation. Not transactional (xid 0); redo rewrites the
    /// page whatever its LSN.
    Sequence = 32,
}

impl RecordType {
    fn from_u8(v: u8) -> Option<RecordType> {
        Some(match v {
            1 => RecordType::HeapInsert,
            2 => RecordType::HeapInsertInit,
            3 => RecordType::HeapDelete,
            4 => RecordType::Commit,
            5 => RecordType::CreateTable,
            6 => RecordType::DropTable,
            7 => RecordType::Abort,
            8 => RecordType::HeapLock,
            9 => RecordType::HeapUpdate,
            10 => RecordType::HeapPruneChains,
            20 => RecordType::BtreeInsert,
            21 => RecordType::BtreePage,
            22 => RecordType::BtreeDelete,
            23 => RecordType::HeapPrune,
            24 => RecordType::HeapUnused,
            25 => RecordType::CreateIndex,
            26 => RecordType::HeapPage,
            27 => RecordType::ColumnarPage,
            30 => RecordType::AlterTable,
            31 => RecordType::AlterIndex,
            32 => RecordType::Sequence,
            _ => return None,
        })
    }
}

/// A block a record changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockRef {
    pub rel: u32,
    pub block: u32,
}

/// A decoded record.
#[derive(Debug, Clone)]
pub struct Record {
    pub lsn: Lsn,
    /// Position just past the record (and its padding): the next record's LSN.
    pub end: Lsn,
    pub xid: u32,
    pub kind: RecordType,
    pub block: Option<BlockRef>,
    /// Whether `payload` is a full-page image.
    pub fpi: bool,
    pub payload: Vec<u8>,
}

impl Record {
    /// Whether redo rebuilds the page without looking at its old contents.
    pub fn will_init(&self) -> bool {
        self.fpi || matches!(self.kind, RecordType::HeapInsertInit | RecordType::Sequence)
    }

    /// The xids in the payload of a commit or abort record (its
    /// subtransactions).
    pub fn sub_xids(&self) -> impl Iterator<Item = u32> + '_ {
        self.payload
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
    }
}

fn align8(n: u64) -> u64 {
    (n + 7) & !7
}

fn segment_path(dir: &Path, seg: u64) -> PathBuf {
    dir.join(format!("{seg:016X}"))
}

/// Serialises a record at `lsn` into `out` (with its alignment padding).
fn encode(
    out: &mut Vec<u8>,
    lsn: Lsn,
    kind: RecordType,
    xid: u32,
    block: Option<BlockRef>,
    fpi: bool,
    payload: &[u8],
) {
    let start = out.len();
    let total = HEADER_SIZE + payload.len();
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&lsn.to_le_bytes());
    out.extend_from_slice(&xid.to_le_bytes());
    let mut flags = 0;
    if block.is_some() {
        flags |= FLAG_HAS_BLOCK;
    }
    if fpi {
        flags |= FLAG_HAS_FPI;
    }
    out.extend_from_slice(&[kind as u8, flags, 0, 0]);
    let b = block.unwrap_or(BlockRef { rel: 0, block: 0 });
    out.extend_from_slice(&b.rel.to_le_bytes());
    out.extend_from_slice(&b.block.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c(&out[start + 8..]);
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    let padded = align8(total as u64) as usize;
    out.resize(start + padded, 0);
}

/// Item-set payload forms (first byte).
const SET_LIST: u8 = 0;
const SET_BITMAP: u8 = 1;

/// Appends a strictly ascending set of item numbers (or btree entry
/// positions) to a record payload, in the smaller of two forms:
///
/// * list: `0`, then each number as u16;
/// * bitmap: `1`, the first number `f` as u16, then bytes in which bit `j`
///   of byte `k` says whether `f + 8k + j` is in the set.
///
/// VACUUM removes many entries of a page at once — half of them when every
/// second row was deleted — and the bitmap then takes a bit per line
/// pointer instead of 16 (a page of 408 tuples: 54 bytes instead of 409).
pub(crate) fn encode_item_set(set: &[u16], out: &mut Vec<u8>) {
    debug_assert!(set.windows(2).all(|w| w[0] < w[1]), "ascending set");
    let (Some(&first), Some(&last)) = (set.first(), set.last()) else {
        out.push(SET_LIST);
        return;
    };
    let bitmap_bytes = usize::from(last - first) / 8 + 1;
    if 2 + bitmap_bytes < 2 * set.len() {
        out.push(SET_BITMAP);
        out.extend_from_slice(&first.to_le_bytes());
        // Bits gather in a register word and are stored a word at a time:
        // or-ing them into the payload one by one chains every store to
        // the next load of the same byte.
        let start = out.len();
        let mut put = |w: usize, word: u64| {
            let at = start + 8 * w;
            let n = (start + bitmap_bytes - at).min(8);
            out.extend_from_slice(&word.to_le_bytes()[..n]);
        };
        let (mut w, mut word) = (0, 0u64);
        for &v in set {
            let d = usize::from(v - first);
            if d / 64 != w {
                put(w, word);
                for empty in w + 1..d / 64 {
                    put(empty, 0);
                }
                (w, word) = (d / 64, 0);
            }
            word |= 1 << (d % 64);
        }
        put(w, word);
    } else {
        out.push(SET_LIST);
        for &v in set {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Decodes an [item set](encode_item_set) into `out` (cleared first), in
/// ascending order.
pub(crate) fn decode_item_set(payload: &[u8], out: &mut Vec<u16>) -> Result<(), &'static str> {
    out.clear();
    match payload.split_first() {
        Some((&SET_LIST, rest)) if rest.len() % 2 == 0 => {
            out.extend(
                rest.chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]])),
            );
            Ok(())
        }
        Some((&SET_BITMAP, rest)) if rest.len() >= 3 => {
            let first = u32::from(u16::from_le_bytes([rest[0], rest[1]]));
            for (k, &byte) in rest[2..].iter().enumerate() {
                let mut b = byte;
                while b != 0 {
                    let v = first + 8 * k as u32 + b.trailing_zeros();
                    out.push(u16::try_from(v).map_err(|_| "item set out of range")?);
                    b &= b - 1;
                }
            }
            Ok(())
        }
        _ => Err("bad item set"),
    }
}

/// The insertion side: records not yet handed to the files.
struct Inserter {
    /// Bytes from `buf_start` on.
    buf: Vec<u8>,
    buf_start: Lsn,
}

/// The writing side, under its own lock so that inserts go on while a
/// flush writes and syncs.
struct Writer {
    /// The open segment: number and file.
    file: Option<(u64, File)>,
    /// Length of the open segment's file: bytes already allocated (zeros,
    /// WAL, or a recycled segment's old WAL), which WAL overwrites without
    /// changing the file's size (see "Preallocation" in the module doc).
    allocated: u64,
    /// End of the WAL handed to the files.
    end: Lsn,
    /// Whether the open segment has writes not yet synced.
    unsynced: bool,
    /// An empty buffer to swap with the inserter's.
    spare: Vec<u8>,
    /// Large writes bypass the page cache (see `waldirect`).
    direct: DirectWriter,
}

/// Settings of the WAL writer.
#[derive(Debug, Clone, Copy)]
pub struct WalOptions {
    pub full_page_writes: bool,
    /// Size of the WAL buffer in bytes (`wal_buffers`).
    pub buffer_size: usize,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            full_page_writes: true,
            buffer_size: 4 << 20,
        }
    }
}

/// The WAL writer.
pub struct Wal {
    dir: PathBuf,
    inserter: Mutex<Inserter>,
    writer: Mutex<Writer>,
    /// End of the last inserted record.
    insert_lsn: AtomicU64,
    /// Everything before this is durable.
    flushed_lsn: AtomicU64,
    /// Redo point of the last checkpoint: a page whose LSN is at or below it
    /// gets a full-page image with its next change. Changed only under the
    /// inserter lock, where page changes decide about their image.
    redo_lsn: AtomicU64,
    options: WalOptions,
    /// Wakes the WAL writer thread (see [`Wal::wait_for_work`]).
    signal: Mutex<Signal>,
    wake: Condvar,
    /// The end of the WAL when it was opened: `wal_bytes` counts from here.
    opened_at: Lsn,
    pub stats: WalStats,
}

/// What the WAL writer thread is asked to do.
#[derive(Debug, Default)]
struct Signal {
    /// A thread waits in [`Wal::wait_for_work`].
    writer_running: bool,
    /// The buffer passed `wal_buffers`.
    write_behind: bool,
    stop: bool,
}

/// Why [`Wal::wait_for_work`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// The buffer passed `wal_buffers`: write it out.
    WriteBehind,
    /// The delay passed: flush what is there.
    Timeout,
    /// [`Wal::stop_writer`] was called.
    Stop,
}

/// Counters for benchmarks and tests.
#[derive(Debug, Default)]
pub struct WalStats {
    pub records: AtomicU64,
    pub fpis: AtomicU64,
    /// fsyncs of the WAL (by commits, page writes, checkpoints).
    pub syncs: AtomicU64,
    /// Commits that asked for a flush ([`Wal::flush_commit`]).
    pub commits: AtomicU64,
    /// Of those, the ones whose record a flush by another session had
    /// already made durable (the group commit's passengers).
    pub commits_grouped: AtomicU64,
    /// Writes of the WAL buffer to the files.
    pub writes: AtomicU64,
    /// Of those, the ones an inserting session made because the buffer
    /// had passed `wal_buffers`.
    pub buffers_full: AtomicU64,
    /// Preallocation steps ([`ALLOCATE_STEP`] of zeros written).
    pub allocations: AtomicU64,
    /// Segments created ahead, zero-filled, by the WAL writer.
    pub segments_created: AtomicU64,
    /// Old segments renamed to serve as future ones.
    pub segments_recycled: AtomicU64,
}

impl WalStats {
    /// fsyncs per flushed commit so far (group commit makes it < 1 under load).
    pub fn syncs_per_commit(&self) -> f64 {
        let c = self.commits.load(Ordering::Relaxed);
        if c == 0 {
            return 0.0;
        }
        self.syncs.load(Ordering::Relaxed) as f64 / c as f64
    }
}

impl Wal {
    /// Opens the WAL in `dir` for appending at `end` (the end of valid WAL
    /// found by recovery) with `redo` as the last checkpoint's redo point.
    /// Anything at or past `end` is removed so that it cannot be read again.
    pub fn open(dir: &Path, end: Lsn, redo: Lsn, options: WalOptions) -> Result<Wal, StorageError> {
        assert!(end.is_multiple_of(8));
        std::fs::create_dir_all(dir).map_err(|e| {
            StorageError::io(
                format!("could not create directory \"{}\"", dir.display()),
                e,
            )
        })?;
        let end_seg = end / SEGMENT_SIZE;
        for (seg, path) in list_segments(dir)? {
            if seg > end_seg {
                remove(&path)?;
            }
        }
        remove_temp_segments(dir)?;
        let path = segment_path(dir, end_seg);
        let file = open_segment(&path)?;
        let len = file_len(&file, &path)?;
        let off = end % SEGMENT_SIZE;
        // Whatever follows the end (a torn record, records of the crashed
        // run that lie beyond it, a recycled segment's old WAL) is zeroed,
        // keeping the file's blocks: none of it may ever be read as WAL
        // written after this point.
        let allocated = len.min(SEGMENT_SIZE);
        if len > allocated {
            file.set_len(allocated).map_err(|e| {
                StorageError::io(format!("could not truncate \"{}\"", path.display()), e)
            })?;
        }
        if allocated > off {
            write_zeros(&file, &path, off, allocated)?;
            file.sync_data().map_err(|e| {
                StorageError::io(format!("could not fsync \"{}\"", path.display()), e)
            })?;
        }
        sync_dir(dir);
        Ok(Wal {
            dir: dir.to_path_buf(),
            inserter: Mutex::new(Inserter {
                buf: Vec::with_capacity(options.buffer_size + MAX_PAYLOAD + HEADER_SIZE),
                buf_start: end,
            }),
            writer: Mutex::new(Writer {
                file: Some((end_seg, file)),
                allocated,
                end,
                unsynced: false,
                spare: Vec::with_capacity(options.buffer_size + MAX_PAYLOAD + HEADER_SIZE),
                direct: DirectWriter::new(),
            }),
            insert_lsn: AtomicU64::new(end),
            flushed_lsn: AtomicU64::new(end),
            redo_lsn: AtomicU64::new(redo),
            opened_at: end,
            options,
            signal: Mutex::new(Signal::default()),
            wake: Condvar::new(),
            stats: WalStats::default(),
        })
    }

    /// The WAL writer thread's wait: returns when the buffer passed
    /// `wal_buffers` since the last call, after `delay`, or when
    /// [`Wal::stop_writer`] is called. While a thread waits here, inserting
    /// sessions leave full buffers to it (see the module doc).
    pub fn wait_for_work(&self, delay: std::time::Duration) -> Work {
        let mut sig = self.signal.lock().unwrap_or_else(|e| e.into_inner());
        sig.writer_running = true;
        if !sig.write_behind && !sig.stop {
            sig = self
                .wake
                .wait_timeout_while(sig, delay, |s| !s.write_behind && !s.stop)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if sig.stop {
            sig.writer_running = false;
            return Work::Stop;
        }
        if std::mem::take(&mut sig.write_behind) {
            Work::WriteBehind
        } else {
            Work::Timeout
        }
    }

    /// Ends the WAL writer thread's [`Wal::wait_for_work`].
    pub fn stop_writer(&self) {
        self.signal.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.wake.notify_all();
    }

    /// Writes the buffer out (without a sync) if it holds at least
    /// `wal_buffers`: the WAL writer's answer to [`Work::WriteBehind`].
    pub fn write_behind(&self) -> Result<(), StorageError> {
        let len = self
            .inserter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .buf
            .len();
        if len < self.options.buffer_size {
            return Ok(());
        }
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        self.write_buffered(w, false)
    }

    /// Asks the WAL writer thread to write the buffer out; false when no
    /// such thread runs.
    fn kick_writer(&self) -> bool {
        let mut sig = self.signal.lock().unwrap_or_else(|e| e.into_inner());
        if !sig.writer_running || sig.stop {
            return false;
        }
        if !sig.write_behind {
            sig.write_behind = true;
            self.wake.notify_one();
        }
        true
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn options(&self) -> WalOptions {
        self.options
    }

    /// End of the inserted WAL.
    /// `pg_stat_wal`'s columns and values, counted since the WAL was
    /// opened (server start; the counters are not kept across restarts,
    /// and there is no `stats_reset`). tusk does not time its writes and
    /// syncs (PostgreSQL's `track_wal_io_timing = off`): the times are 0.
    pub fn stat_columns(&self) -> Vec<(&'static str, String)> {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed).to_string();
        let s = &self.stats;
        vec![
            ("wal_records", n(&s.records)),
            ("wal_fpi", n(&s.fpis)),
            (
                "wal_bytes",
                (self.insert_lsn() - self.opened_at).to_string(),
            ),
            ("wal_buffers_full", n(&s.buffers_full)),
            ("wal_write", n(&s.writes)),
            ("wal_sync", n(&s.syncs)),
            ("wal_write_time", "0".into()),
            ("wal_sync_time", "0".into()),
        ]
    }

    pub fn insert_lsn(&self) -> Lsn {
        self.insert_lsn.load(Ordering::Acquire)
    }

    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed_lsn.load(Ordering::Acquire)
    }

    pub fn redo_lsn(&self) -> Lsn {
        self.redo_lsn.load(Ordering::Acquire)
    }

    /// Sets the redo point of a starting checkpoint to the current end of
    /// the WAL and returns it. Atomic with respect to page changes deciding
    /// about full-page images ([`Wal::insert_page_change`]): a change logged
    /// after the redo point always saw it.
    pub fn begin_checkpoint(&self) -> Lsn {
        let ins = self.inserter.lock().unwrap_or_else(|e| e.into_inner());
        let redo = ins.buf_start + ins.buf.len() as u64;
        self.redo_lsn.store(redo, Ordering::Release);
        redo
    }

    /// Whether a change to a page whose LSN is `page_lsn` must log the whole page.
    #[inline]
    pub fn needs_fpi(&self, page_lsn: Lsn) -> bool {
        self.options.full_page_writes && page_lsn <= self.redo_lsn()
    }

    /// Appends a record and returns its LSN. The caller holds the exclusive
    /// content lock of the page it changed (if any) and stamps the LSN into it.
    pub fn insert(
        &self,
        kind: RecordType,
        xid: u32,
        block: Option<BlockRef>,
        fpi: bool,
        payload: &[u8],
    ) -> Result<Lsn, StorageError> {
        assert!(payload.len() <= MAX_PAYLOAD);
        let mut ins = self.inserter.lock().unwrap_or_else(|e| e.into_inner());
        let lsn = self.append(&mut ins, kind, xid, block, fpi, payload);
        self.after_insert(ins)?;
        Ok(lsn)
    }

    /// Logs a change just made to `page` (block `block`, exclusively locked
    /// by the caller): `payload` describes it, unless the page's first
    /// change since the redo point is due a full-page image, which is then
    /// logged instead (the record keeps its kind, with `HAS_FPI`). The
    /// decision is taken under the insertion lock, so a checkpoint starting
    /// concurrently cannot slip its redo point between the decision and the
    /// record. `HeapInsertInit` never needs an image. Returns the LSN.
    pub fn insert_page_change(
        &self,
        kind: RecordType,
        xid: u32,
        block: BlockRef,
        page: &[u8],
        payload: &[u8],
    ) -> Result<Lsn, StorageError> {
        let mut ins = self.inserter.lock().unwrap_or_else(|e| e.into_inner());
        let image = kind != RecordType::HeapInsertInit && self.needs_fpi(crate::page::lsn(page));
        let lsn = if image {
            self.append(
                &mut ins,
                kind,
                xid,
                Some(block),
                true,
                &page[..crate::page::PAGE_SIZE],
            )
        } else {
            assert!(payload.len() <= MAX_PAYLOAD);
            self.append(&mut ins, kind, xid, Some(block), false, payload)
        };
        self.after_insert(ins)?;
        Ok(lsn)
    }

    fn append(
        &self,
        ins: &mut Inserter,
        kind: RecordType,
        xid: u32,
        block: Option<BlockRef>,
        fpi: bool,
        payload: &[u8],
    ) -> Lsn {
        let lsn = ins.buf_start + ins.buf.len() as u64;
        encode(&mut ins.buf, lsn, kind, xid, block, fpi, payload);
        let end = ins.buf_start + ins.buf.len() as u64;
        self.insert_lsn.store(end, Ordering::Release);
        self.stats.records.fetch_add(1, Ordering::Relaxed);
        if fpi {
            self.stats.fpis.fetch_add(1, Ordering::Relaxed);
        }
        lsn
    }

    /// Hands a full buffer to the files: to the WAL writer thread if one
    /// runs, else without waiting when a flush is under way (it or the
    /// next one takes the bytes along); waiting once the buffer has grown
    /// to four times `wal_buffers`.
    fn after_insert(&self, ins: MutexGuard<'_, Inserter>) -> Result<(), StorageError> {
        let len = ins.buf.len();
        drop(ins);
        if len < self.options.buffer_size {
            return Ok(());
        }
        let w = if len >= 4 * self.options.buffer_size {
            self.writer.lock().unwrap_or_else(|e| e.into_inner())
        } else if self.kick_writer() {
            return Ok(());
        } else {
            match self.writer.try_lock() {
                Ok(w) => w,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => return Ok(()),
            }
        };
        self.stats.buffers_full.fetch_add(1, Ordering::Relaxed);
        self.write_buffered(w, false).map(|_| ())
    }

    /// Makes the WAL durable at least up to `lsn` (a record's start is
    /// enough: the whole record containing it is flushed).
    ///
    /// This is where group commit happens: one flusher at a time takes
    /// *everything* inserted so far, writes and syncs it; sessions that
    /// wanted to flush meanwhile wait for the writer lock and then usually
    /// find their record already durable.
    pub fn flush(&self, lsn: Lsn) -> Result<(), StorageError> {
        self.flush_counted(lsn).map(|_| ())
    }

    /// [`Wal::flush`]; true if this call synced (false: nothing to do, or
    /// another session's flush covered `lsn`).
    fn flush_counted(&self, lsn: Lsn) -> Result<bool, StorageError> {
        if self.flushed_lsn.load(Ordering::Acquire) > lsn {
            return Ok(false);
        }
        // A write and an fsync, or a wait for another session's.
        crate::wait_event::blocking();
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if self.flushed_lsn.load(Ordering::Acquire) > lsn {
            return Ok(false);
        }
        self.write_buffered(w, true)?;
        Ok(true)
    }

    /// [`Wal::flush`] for a commit record at `lsn`, counted in the
    /// group-commit statistics.
    pub fn flush_commit(&self, lsn: Lsn) -> Result<(), StorageError> {
        self.stats.commits.fetch_add(1, Ordering::Relaxed);
        if !self.flush_counted(lsn)? {
            self.stats.commits_grouped.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Flushes everything inserted so far.
    pub fn flush_all(&self) -> Result<(), StorageError> {
        let end = self.insert_lsn();
        if end == 0 {
            return Ok(());
        }
        self.flush(end - 1)
    }

    /// Takes the inserter's buffer, writes it to the segment files and,
    /// with `sync`, fsyncs them and publishes the new flushed position.
    fn write_buffered(
        &self,
        mut w: MutexGuard<'_, Writer>,
        sync: bool,
    ) -> Result<(), StorageError> {
        let (start, data) = {
            let mut ins = self.inserter.lock().unwrap_or_else(|e| e.into_inner());
            let mut data = std::mem::take(&mut w.spare);
            data.clear();
            std::mem::swap(&mut ins.buf, &mut data);
            let start = ins.buf_start;
            ins.buf_start += data.len() as u64;
            (start, data)
        };
        let res = self.write_out(&mut w, start, &data);
        w.spare = data;
        res?;
        if sync && w.unsynced {
            if let Some((seg, f)) = &w.file {
                f.sync_data().map_err(|e| {
                    StorageError::io(
                        format!(
                            "could not fsync \"{}\"",
                            segment_path(&self.dir, *seg).display()
                        ),
                        e,
                    )
                })?;
            }
            w.unsynced = false;
            self.stats.syncs.fetch_add(1, Ordering::Relaxed);
        }
        if sync {
            let end = start + w.spare.len() as u64;
            self.flushed_lsn.fetch_max(end, Ordering::AcqRel);
        }
        Ok(())
    }

    /// Writes `data`, the WAL from `start`, to the segment files (no sync,
    /// except of a segment that is left behind).
    fn write_out(&self, w: &mut Writer, start: Lsn, data: &[u8]) -> Result<(), StorageError> {
        let mut pos = start;
        let mut done = 0usize;
        if !data.is_empty() {
            self.stats.writes.fetch_add(1, Ordering::Relaxed);
        }
        while done < data.len() {
            let seg = pos / SEGMENT_SIZE;
            let off = pos % SEGMENT_SIZE;
            let n = ((SEGMENT_SIZE - off) as usize).min(data.len() - done);
            if w.file.as_ref().map(|(s, _)| *s) != Some(seg) {
                if let Some((old, f)) = w.file.take() {
                    if w.unsynced {
                        f.sync_data().map_err(|e| {
                            StorageError::io(
                                format!(
                                    "could not fsync \"{}\"",
                                    segment_path(&self.dir, old).display()
                                ),
                                e,
                            )
                        })?;
                    }
                }
                let path = segment_path(&self.dir, seg);
                let file = open_segment(&path)?;
                w.allocated = file_len(&file, &path)?.min(SEGMENT_SIZE);
                w.file = Some((seg, file));
                sync_dir(&self.dir);
            }
            if w.allocated < off + n as u64 && n < DIRECT_MIN {
                // Normally the WAL writer has allocated ahead (see
                // `prepare_ahead`); a burst of WAL outran it. A write as
                // long as a direct one is a bulk load's, synced once at
                // its end: it extends the file itself rather than writing
                // every byte twice (zeros first).
                self.allocate(w, off + n as u64)?;
            }
            let (_, f) = w.file.as_ref().expect("segment open");
            let path = segment_path(&self.dir, seg);
            w.direct
                .write(f, seg, &path, &data[done..done + n], off)
                .map_err(|e| {
                    StorageError::io(
                        format!(
                            "could not write to \"{}\"",
                            segment_path(&self.dir, seg).display()
                        ),
                        e,
                    )
                })?;
            w.unsynced = true;
            w.allocated = w.allocated.max(off + n as u64);
            done += n;
            pos += n as u64;
            w.end = pos;
        }
        Ok(())
    }

    /// Allocates the open segment's file up to at least `need` bytes: zeros
    /// up to the next multiple of [`ALLOCATE_STEP`] (at most the segment's
    /// size). The caller syncs them (the WAL writer does at once, a write
    /// with its next flush).
    fn allocate(&self, w: &mut Writer, need: u64) -> Result<(), StorageError> {
        let Some((seg, f)) = &w.file else {
            return Ok(());
        };
        let target = need.next_multiple_of(ALLOCATE_STEP).min(SEGMENT_SIZE);
        if target <= w.allocated {
            return Ok(());
        }
        write_zeros(f, &segment_path(&self.dir, *seg), w.allocated, target)?;
        w.allocated = target;
        w.unsynced = true;
        self.stats.allocations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// The WAL writer's share of preallocation (see the module doc): keeps
    /// at least half an [`ALLOCATE_STEP`] allocated and synced ahead of
    /// the end of the WAL in the open segment, and, once the open segment
    /// is half used, makes sure the next one exists at its full size.
    pub fn prepare_ahead(&self) -> Result<(), StorageError> {
        let (sync, next) = {
            let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            let Some(seg) = w.file.as_ref().map(|(s, _)| *s) else {
                return Ok(());
            };
            let off = w.end.saturating_sub(seg * SEGMENT_SIZE).min(SEGMENT_SIZE);
            let mut sync = None;
            if w.allocated < SEGMENT_SIZE && w.allocated - off.min(w.allocated) < ALLOCATE_STEP / 2
            {
                self.allocate(&mut w, off + ALLOCATE_STEP)?;
                let (_, f) = w.file.as_ref().expect("segment open");
                // A second descriptor: the sync runs without the lock.
                sync = f.try_clone().ok();
            }
            (sync, (off >= SEGMENT_SIZE / 2).then_some(seg + 1))
        };
        if let Some(f) = sync {
            f.sync_data().map_err(|e| {
                StorageError::io(format!("could not fsync \"{}\"", self.dir.display()), e)
            })?;
        }
        if let Some(next) = next {
            self.create_segment(next)?;
        }
        Ok(())
    }

    /// Creates segment `seg` at its full size, zero-filled and synced,
    /// unless it exists: written under a temporary name and linked into
    /// place, so that a segment file is never seen half made, and never
    /// replaces one that a writer created meanwhile.
    fn create_segment(&self, seg: u64) -> Result<(), StorageError> {
        let path = segment_path(&self.dir, seg);
        if path.exists() {
            return Ok(());
        }
        let tmp = self.dir.join(format!("{TEMP_PREFIX}{seg:016X}"));
        let io = |e| StorageError::io(format!("could not create \"{}\"", tmp.display()), e);
        {
            let f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)
                .map_err(io)?;
            write_zeros(&f, &tmp, 0, SEGMENT_SIZE)?;
            f.sync_data().map_err(io)?;
        }
        // link(2) fails if the segment exists by now: a writer got there first.
        let linked = std::fs::hard_link(&tmp, &path);
        remove(&tmp)?;
        if linked.is_ok() {
            self.stats.segments_created.fetch_add(1, Ordering::Relaxed);
            sync_dir(&self.dir);
        }
        Ok(())
    }

    /// Removes segments that hold only WAL before `lsn`, recycling up to
    /// [`MAX_SPARE_SEGMENTS`] of them as future segments (renamed past the
    /// last one, their old contents left: no record in them has the LSN of
    /// its new position, so the reader stops there).
    pub fn remove_old_segments(&self, lsn: Lsn) -> Result<(), StorageError> {
        let keep_from = lsn / SEGMENT_SIZE;
        let segments = list_segments(&self.dir)?;
        let current = self.insert_lsn() / SEGMENT_SIZE;
        let mut spare = segments.iter().filter(|(s, _)| *s > current).count();
        let mut next = segments.last().map_or(0, |(s, _)| s + 1).max(current + 1);
        for (seg, path) in &segments {
            if *seg >= keep_from {
                continue;
            }
            // link(2) never replaces a segment a writer has just created.
            if spare < MAX_SPARE_SEGMENTS
                && std::fs::hard_link(path, segment_path(&self.dir, next)).is_ok()
            {
                spare += 1;
                next += 1;
                self.stats.segments_recycled.fetch_add(1, Ordering::Relaxed);
            }
            remove(path)?;
        }
        sync_dir(&self.dir);
        Ok(())
    }
}

/// Preallocation writes zeros in steps of this many bytes.
pub const ALLOCATE_STEP: u64 = 1 << 20;
/// At most this many segments wait beyond the current one (recycled or
/// created ahead).
pub const MAX_SPARE_SEGMENTS: usize = 4;
/// Name prefix of a segment being created.
const TEMP_PREFIX: &str = "xlogtemp.";

fn file_len(file: &File, path: &Path) -> Result<u64, StorageError> {
    Ok(file
        .metadata()
        .map_err(|e| StorageError::io(format!("could not stat \"{}\"", path.display()), e))?
        .len())
}

/// Writes zeros into `file` from `from` up to `to`.
fn write_zeros(file: &File, path: &Path, from: u64, to: u64) -> Result<(), StorageError> {
    const CHUNK: usize = 256 << 10;
    static ZEROS: [u8; CHUNK] = [0; CHUNK];
    let mut pos = from;
    while pos < to {
        let n = ((to - pos) as usize).min(CHUNK);
        file.write_all_at(&ZEROS[..n], pos).map_err(|e| {
            StorageError::io(format!("could not write to \"{}\"", path.display()), e)
        })?;
        pos += n as u64;
    }
    Ok(())
}

/// Removes segments left half made by a crash during [`Wal::create_segment`].
fn remove_temp_segments(dir: &Path) -> Result<(), StorageError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(TEMP_PREFIX))
        {
            remove(&e.path())?;
        }
    }
    Ok(())
}

fn open_segment(path: &Path) -> Result<File, StorageError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| StorageError::io(format!("could not open \"{}\"", path.display()), e))
}

fn remove(path: &Path) -> Result<(), StorageError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(
            format!("could not remove \"{}\"", path.display()),
            e,
        )),
    }
}

/// fsyncs a directory so that file creations and renames in it persist.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

fn list_segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>, StorageError> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => {
            return Err(StorageError::io(
                format!("could not read directory \"{}\"", dir.display()),
                e,
            ))
        }
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.len() == 16 {
            if let Ok(seg) = u64::from_str_radix(name, 16) {
                out.push((seg, e.path()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads records sequentially from a position.
pub struct WalReader {
    dir: PathBuf,
    /// Contents of the segment `cur_seg` (as long as the file is).
    seg_data: Vec<u8>,
    cur_seg: Option<u64>,
    pos: Lsn,
    /// The record being decoded (reused).
    scratch: Vec<u8>,
    /// Payload buffers of records handed back with [`WalReader::recycle`],
    /// reused for the next records' payloads: a reader whose records come
    /// back allocates only while its look-ahead grows.
    spare: Vec<Vec<u8>>,
}

/// How many payload buffers a reader keeps for reuse (a look-ahead of
/// `wal_decode_buffer_size` holds at most this many small records).
const MAX_SPARE_PAYLOADS: usize = 16 << 10;

impl WalReader {
    pub fn new(dir: &Path, start: Lsn) -> WalReader {
        WalReader {
            dir: dir.to_path_buf(),
            seg_data: Vec::new(),
            cur_seg: None,
            pos: start,
            scratch: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Position of the next record to read (after the last one returned;
    /// once `next` returned `None`, the end of valid WAL).
    pub fn pos(&self) -> Lsn {
        self.pos
    }

    /// Takes back a record this reader returned, to reuse its payload's
    /// memory for a later record.
    pub fn recycle(&mut self, rec: Record) {
        if self.spare.len() < MAX_SPARE_PAYLOADS && rec.payload.capacity() > 0 {
            self.spare.push(rec.payload);
        }
    }

    /// Copies bytes at `lsn` into `out`; false if the WAL ends first.
    fn read_bytes(&mut self, mut lsn: Lsn, out: &mut [u8]) -> Result<bool, StorageError> {
        let mut done = 0;
        while done < out.len() {
            let seg = lsn / SEGMENT_SIZE;
            if self.cur_seg != Some(seg) {
                let path = segment_path(&self.dir, seg);
                self.seg_data = match std::fs::read(&path) {
                    Ok(d) => d,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                    Err(e) => {
                        return Err(StorageError::io(
                            format!("could not read \"{}\"", path.display()),
                            e,
                        ))
                    }
                };
                self.cur_seg = Some(seg);
            }
            let off = (lsn % SEGMENT_SIZE) as usize;
            if off >= self.seg_data.len() {
                return Ok(false);
            }
            let n = (self.seg_data.len() - off).min(out.len() - done);
            out[done..done + n].copy_from_slice(&self.seg_data[off..off + n]);
            done += n;
            lsn += n as u64;
            if done < out.len() && !lsn.is_multiple_of(SEGMENT_SIZE) {
                // Short segment file: the WAL ends inside it.
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The next valid record, or `None` at the end of valid WAL.
    pub fn next_record(&mut self) -> Result<Option<Record>, StorageError> {
        let lsn = self.pos;
        let mut h = [0u8; HEADER_SIZE];
        if !self.read_bytes(lsn, &mut h)? {
            return Ok(None);
        }
        let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let total = u32_at(&h, 0) as usize;
        if !(HEADER_SIZE..=HEADER_SIZE + MAX_PAYLOAD).contains(&total) {
            return Ok(None);
        }
        if u64::from_le_bytes(h[8..16].try_into().unwrap()) != lsn {
            return Ok(None);
        }
        let Some(kind) = RecordType::from_u8(h[20]) else {
            return Ok(None);
        };
        let mut rec = std::mem::take(&mut self.scratch);
        rec.resize(total, 0);
        let res = self.read_record(lsn, kind, &mut rec);
        self.scratch = rec;
        res
    }

    /// Reads the whole record at `lsn` into `rec` (sized to its length),
    /// checks its CRC and decodes it.
    fn read_record(
        &mut self,
        lsn: Lsn,
        kind: RecordType,
        rec: &mut [u8],
    ) -> Result<Option<Record>, StorageError> {
        if !self.read_bytes(lsn, rec)? {
            return Ok(None);
        }
        let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        if crc32c::crc32c(&rec[8..]) != u32_at(rec, 4) {
            return Ok(None);
        }
        let flags = rec[21];
        let block = (flags & FLAG_HAS_BLOCK != 0).then(|| BlockRef {
            rel: u32_at(rec, 24),
            block: u32_at(rec, 28),
        });
        let end = lsn + align8(rec.len() as u64);
        self.pos = end;
        let mut payload = self.spare.pop().unwrap_or_default();
        payload.clear();
        payload.extend_from_slice(&rec[HEADER_SIZE..]);
        Ok(Some(Record {
            lsn,
            end,
            xid: u32_at(rec, 16),
            kind,
            block,
            fpi: flags & FLAG_HAS_FPI != 0,
            payload,
        }))
    }
}

/// The control file `pg_control`: where recovery starts.
pub mod control {
    use super::*;

    const MAGIC: u32 = 0x7475_736b; // "tusk"
    const VERSION: u32 = 1;

    /// Reads the redo point of the last checkpoint, or `None` if there is no
    /// control file yet.
    pub fn read(path: &Path) -> Result<Option<Lsn>, StorageError> {
        let data = match std::fs::read(path) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(StorageError::io(
                    format!("could not read \"{}\"", path.display()),
                    e,
                ))
            }
        };
        let bad = || StorageError::Other(format!("control file \"{}\" is corrupt", path.display()));
        if data.len() != 20 {
            return Err(bad());
        }
        let magic = u32::from_le_bytes(data[0..4].try_into().unwrap());
        let version = u32::from_le_bytes(data[4..8].try_into().unwrap());
        let redo = u64::from_le_bytes(data[8..16].try_into().unwrap());
        let crc = u32::from_le_bytes(data[16..20].try_into().unwrap());
        if magic != MAGIC || version != VERSION || crc != crc32c::crc32c(&data[..16]) {
            return Err(bad());
        }
        Ok(Some(redo))
    }

    /// Atomically replaces the control file (write, fsync, rename, fsync dir).
    pub fn write(path: &Path, redo: Lsn) -> Result<(), StorageError> {
        let mut data = Vec::with_capacity(20);
        data.extend_from_slice(&MAGIC.to_le_bytes());
        data.extend_from_slice(&VERSION.to_le_bytes());
        data.extend_from_slice(&redo.to_le_bytes());
        let crc = crc32c::crc32c(&data);
        data.extend_from_slice(&crc.to_le_bytes());
        let tmp = path.with_extension("tmp");
        let io = |e| StorageError::io(format!("could not write \"{}\"", tmp.display()), e);
        {
            let f = File::create(&tmp).map_err(io)?;
            f.write_all_at(&data, 0).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        std::fs::rename(&tmp, path).map_err(io)?;
        if let Some(d) = path.parent() {
            sync_dir(d);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_some(dir: &Path, n: usize) -> Vec<Lsn> {
        let wal = Wal::open(dir, 0, 0, WalOptions::default()).unwrap();
        let mut lsns = vec![];
        for i in 0..n {
            let payload = vec![i as u8; i % 50];
            let b = BlockRef {
                rel: 1,
                block: i as u32,
            };
            lsns.push(
                wal.insert(RecordType::HeapInsert, i as u32, Some(b), false, &payload)
                    .unwrap(),
            );
        }
        wal.flush_all().unwrap();
        lsns.push(wal.insert_lsn());
        lsns
    }

    fn read_all(dir: &Path) -> (Vec<Record>, Lsn) {
        let mut r = WalReader::new(dir, 0);
        let mut out = vec![];
        while let Some(rec) = r.next_record().unwrap() {
            out.push(rec);
        }
        (out, r.pos())
    }

    #[test]
    fn roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let lsns = write_some(dir.path(), 100);
        let (recs, end) = read_all(dir.path());
        assert_eq!(recs.len(), 100);
        assert_eq!(end, *lsns.last().unwrap());
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(r.lsn, lsns[i]);
            assert_eq!(r.xid, i as u32);
            assert_eq!(r.payload, vec![i as u8; i % 50]);
            assert_eq!(r.block.unwrap().block, i as u32);
        }
    }

    #[test]
    fn recycled_payloads_hold_the_next_records() {
        let dir = tempfile::tempdir().unwrap();
        write_some(dir.path(), 100);
        let (expect, _) = read_all(dir.path());
        let mut r = WalReader::new(dir.path(), 0);
        let mut got = vec![];
        while let Some(rec) = r.next_record().unwrap() {
            got.push((rec.lsn, rec.payload.clone()));
            r.recycle(rec);
        }
        assert_eq!(r.spare.len(), 1, "one buffer went round");
        let expect: Vec<_> = expect.into_iter().map(|e| (e.lsn, e.payload)).collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn torn_and_corrupt_tails_stop_replay_at_last_valid_record() {
        for damage in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let lsns = write_some(dir.path(), 20);
            let seg = segment_path(dir.path(), 0);
            let last = lsns[19];
            let f = OpenOptions::new().write(true).open(&seg).unwrap();
            match damage {
                // Cut the last record in the middle.
                0 => f.set_len(last + 20).unwrap(),
                // Flip a payload byte of the last record.
                1 => f
                    .write_all_at(&[0xff], last + HEADER_SIZE as u64 + 3)
                    .unwrap(),
                // Garbage that is not a record after the end.
                _ => f.write_all_at(&[0x55; 100], lsns[20]).unwrap(),
            }
            let (recs, end) = read_all(dir.path());
            let expect = if damage == 2 { 20 } else { 19 };
            assert_eq!(recs.len(), expect, "damage {damage}");
            assert_eq!(end, lsns[expect]);
            // Reopening for writing cuts the damaged tail off and appends after it.
            let wal = Wal::open(dir.path(), end, 0, WalOptions::default()).unwrap();
            wal.insert(RecordType::Commit, 99, None, false, &[])
                .unwrap();
            wal.flush_all().unwrap();
            let (recs, _) = read_all(dir.path());
            assert_eq!(recs.len(), expect + 1);
            assert_eq!(recs.last().unwrap().kind, RecordType::Commit);
        }
    }

    #[test]
    fn records_span_segments() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::open(dir.path(), 0, 0, WalOptions::default()).unwrap();
        let page = vec![7u8; 8192];
        let n = (SEGMENT_SIZE as usize * 2) / 8200 + 3;
        for i in 0..n {
            wal.insert(RecordType::HeapDelete, i as u32, None, true, &page)
                .unwrap();
        }
        wal.flush_all().unwrap();
        let (recs, _) = read_all(dir.path());
        assert_eq!(recs.len(), n);
        assert!(recs.iter().all(|r| r.payload == page && r.fpi));
        wal.remove_old_segments(SEGMENT_SIZE + 5).unwrap();
        assert_eq!(list_segments(dir.path()).unwrap()[0].0, 1);
    }

    fn seg_len(dir: &Path, seg: u64) -> u64 {
        std::fs::metadata(segment_path(dir, seg)).unwrap().len()
    }

    #[test]
    fn writes_land_in_allocated_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::open(dir.path(), 0, 0, WalOptions::default()).unwrap();
        wal.insert(RecordType::Commit, 3, None, false, &[1, 2, 3])
            .unwrap();
        wal.flush_all().unwrap();
        // The write allocated a whole step of zeros behind the record.
        assert_eq!(seg_len(dir.path(), 0), ALLOCATE_STEP);
        assert_eq!(wal.stats.allocations.load(Ordering::Relaxed), 1);
        // The WAL writer keeps half a step ahead of the end.
        let page = vec![9u8; 8192];
        while wal.insert_lsn() < ALLOCATE_STEP * 3 / 4 {
            wal.insert(RecordType::HeapDelete, 4, None, true, &page)
                .unwrap();
        }
        wal.flush_all().unwrap();
        wal.prepare_ahead().unwrap();
        assert_eq!(seg_len(dir.path(), 0), 2 * ALLOCATE_STEP);
        assert!(!segment_path(dir.path(), 1).exists());
        // Past the middle of the segment, the next one is made whole.
        while wal.insert_lsn() < SEGMENT_SIZE / 2 + 1 {
            wal.insert(RecordType::HeapDelete, 4, None, true, &page)
                .unwrap();
        }
        wal.flush_all().unwrap();
        wal.prepare_ahead().unwrap();
        assert_eq!(seg_len(dir.path(), 1), SEGMENT_SIZE);
        assert_eq!(wal.stats.segments_created.load(Ordering::Relaxed), 1);
        let (recs, end) = read_all(dir.path());
        assert_eq!(end, wal.insert_lsn());
        assert_eq!(recs.len() as u64, wal.stats.records.load(Ordering::Relaxed));
    }

    #[test]
    fn bulk_writes_extend_the_segment_without_zeros_first() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::open(dir.path(), 0, 0, WalOptions::default()).unwrap();
        let page = vec![5u8; 8192];
        // A bulk load's WAL, written in one large (direct) write.
        while wal.insert_lsn() < 3 * ALLOCATE_STEP + 100 {
            wal.insert(RecordType::HeapPage, 4, None, true, &page)
                .unwrap();
        }
        wal.flush_all().unwrap();
        assert_eq!(wal.stats.allocations.load(Ordering::Relaxed), 0);
        assert_eq!(seg_len(dir.path(), 0), wal.insert_lsn());
        // A commit after it lands in allocated blocks again.
        wal.insert(RecordType::Commit, 4, None, false, &[1])
            .unwrap();
        wal.flush_all().unwrap();
        assert_eq!(wal.stats.allocations.load(Ordering::Relaxed), 1);
        assert_eq!(seg_len(dir.path(), 0), 4 * ALLOCATE_STEP);
        let (recs, end) = read_all(dir.path());
        assert_eq!(end, wal.insert_lsn());
        assert_eq!(recs.len() as u64, wal.stats.records.load(Ordering::Relaxed));
    }

    #[test]
    fn recycled_segments_end_the_log_where_new_wal_ends() {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::open(dir.path(), 0, 0, WalOptions::default()).unwrap();
        let page = vec![7u8; 8192];
        let fill = |wal: &Wal, upto: Lsn| {
            let mut n = 0;
            while wal.insert_lsn() < upto {
                wal.insert(RecordType::HeapDelete, 1, None, true, &page)
                    .unwrap();
                n += 1;
            }
            wal.flush_all().unwrap();
            n
        };
        fill(&wal, 2 * SEGMENT_SIZE + 100);
        // Segments 0 and 1 become 3 and 4, old records and all.
        let redo = wal.insert_lsn();
        wal.remove_old_segments(redo).unwrap();
        let segs: Vec<u64> = list_segments(dir.path())
            .unwrap()
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(segs, vec![2, 3, 4]);
        assert_eq!(seg_len(dir.path(), 3), SEGMENT_SIZE);
        assert_eq!(wal.stats.segments_recycled.load(Ordering::Relaxed), 2);
        // New WAL runs into recycled segment 3 and stops in its middle.
        let n = fill(&wal, 3 * SEGMENT_SIZE + SEGMENT_SIZE / 3);
        let mut r = WalReader::new(dir.path(), redo);
        let mut got = 0;
        while let Some(rec) = r.next_record().unwrap() {
            assert!(rec.lsn >= redo);
            got += 1;
        }
        assert_eq!(got, n);
        assert_eq!(r.pos(), wal.insert_lsn());
        // Reopening at that end zeroes the recycled segment's rest, and
        // removes the segment beyond.
        drop(wal);
        let end = r.pos();
        let wal = Wal::open(dir.path(), end, redo, WalOptions::default()).unwrap();
        assert!(!segment_path(dir.path(), 4).exists());
        let data = std::fs::read(segment_path(dir.path(), 3)).unwrap();
        assert_eq!(data.len() as u64, SEGMENT_SIZE);
        assert!(data[(end % SEGMENT_SIZE) as usize..]
            .iter()
            .all(|&b| b == 0));
        drop(wal);
    }

    proptest::proptest! {
        #[test]
        fn item_sets_roundtrip_never_larger_than_a_list(
            set in proptest::collection::btree_set(proptest::prelude::any::<u16>(), 0..300),
            start in 0u16..3000,
            step in 1u16..40,
            len in 0u16..300,
        ) {
            // Arbitrary sets, and arithmetic ones (every second item, ...)
            // where the bitmap form wins.
            let arith: Vec<u16> = (0..len).map_while(|k| start.checked_add(k * step)).collect();
            for set in [set.into_iter().collect::<Vec<u16>>(), arith] {
                let mut enc = Vec::new();
                encode_item_set(&set, &mut enc);
                proptest::prop_assert!(enc.len() <= 1 + 2 * set.len());
                let mut out = Vec::new();
                decode_item_set(&enc, &mut out).unwrap();
                proptest::prop_assert_eq!(out, set);
            }
        }
    }

    #[test]
    fn item_set_forms() {
        let mut enc = Vec::new();
        encode_item_set(&(1..=408).step_by(2).collect::<Vec<u16>>(), &mut enc);
        assert_eq!(enc.len(), 1 + 2 + 51, "every second line pointer of a page");
        let mut out = Vec::new();
        for set in [vec![], vec![0], vec![u16::MAX], vec![0, u16::MAX]] {
            enc.clear();
            encode_item_set(&set, &mut enc);
            decode_item_set(&enc, &mut out).unwrap();
            assert_eq!(out, set);
        }
        assert!(decode_item_set(&[], &mut out).is_err());
        assert!(decode_item_set(&[SET_LIST, 1], &mut out).is_err());
        assert!(decode_item_set(&[SET_BITMAP, 0], &mut out).is_err());
        assert!(decode_item_set(&[7, 0, 0], &mut out).is_err());
        // A bitmap reaching past the largest item number is refused.
        assert!(decode_item_set(&[SET_BITMAP, 0xff, 0xff, 0b10], &mut out).is_err());
    }

    #[test]
    fn control_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pg_control");
        assert_eq!(control::read(&p).unwrap(), None);
        control::write(&p, 12345).unwrap();
        assert_eq!(control::read(&p).unwrap(), Some(12345));
    }
}
