//! VACUUM: removes dead tuples from a heap and their entries from its
//! indexes, and hands the space to later inserts.
//!
//! ## Phases (PostgreSQL's lazy vacuum)
//!
//! 1. **Scan and prune.** The heap is read block by block under the
//!    exclusive page lock. A tuple is dead when its inserter aborted, or
//!    when its deleter (or updater; a mere row locker does not count)
//!    committed below the *horizon*: the oldest xid that a running
//!    transaction or a live snapshot may still consider running
//!    (`procarray`), computed when the VACUUM starts. A tuple deleted by a
//!    transaction that committed later is "dead but not yet removable":
//!    some snapshot may still see it. Dead tuples are *pruned*: their line pointers
//!    become dead and the page is compacted, so the space of the tuple bodies
//!    is free at once (WAL `HeapPrune`). Every dead line pointer — pruned now
//!    or left dead by an interrupted earlier VACUUM — goes into a
//!    [`TidStore`], one block at a time in ascending order.
//! 2. **Index pass.** When the store's `memory_usage()` reaches
//!    `maintenance_work_mem`, or the heap is done, every index is walked
//!    once ([`Btree::bulk_delete`]) and each entry whose TID the store
//!    contains is removed. This is the pass that PostgreSQL ≤ 16 repeats
//!    once per 1 GB/6 bytes of dead TIDs (its sorted array, searched with
//!    bsearch); the radix tree holds about ten million dead TIDs of a
//!    half-deleted table in well under 16 MB, so one pass usually suffices.
//! 3. **Heap pass.** For each block in the store its dead line pointers
//!    become unused (WAL `HeapUnused`) — only now, because before phase 2 an
//!    index entry could still point at them — and the page's free space is
//!    recorded in the free-space map (`fsm`).
//!
//! A page with HOT chains (heap-only versions, redirects) is pruned chain
//! by chain instead (`prune`): dead heap-only versions become unused at
//! once and chain roots become redirects, so only the roots of dead
//! chains and plain dead tuples go through phases 2 and 3.
//!
//! Phases 2 and 3 run after each time the store fills, then the scan goes
//! on with an empty store; `index_scans` in the report counts the rounds.
//! A table without indexes needs no index pass (PostgreSQL's one-pass
//! strategy) and reports zero index scans.
//!
//! ## Crash safety
//!
//! Each page change is logged like any other heap or btree change. A crash
//! between the phases leaves dead line pointers whose index entries may
//! still exist; the next VACUUM collects those line pointers again in phase
//! 1 and finishes the job, so no TID is ever reused while an index points at
//! it.

use crate::btree::{Btree, BulkDeleteStats};
use crate::catalog::{IndexDef, TableDef};
use crate::heap::log_page_change;
use crate::page::{self, ItemState, LINE_POINTER_SIZE, PAGE_HEADER_SIZE};
use crate::prune::{self, Verdict};
use crate::tuple;
use crate::txn::Xid;
use crate::wal::{encode_item_set, BlockRef, RecordType};
use crate::{Database, StorageError};
use std::time::{Duration, Instant};
use tusk_radix::TidStore;

/// What a VACUUM of one table did (VERBOSE prints it).
#[derive(Debug, Clone, Default)]
pub struct VacuumReport {
    pub table: String,
    /// Heap pages (all are scanned).
    pub pages: u32,
    /// Pages that had dead tuples.
    pub pages_with_dead: u32,
    /// Tuples removed (pruned) by this VACUUM.
    pub tuples_removed: u64,
    /// Dead line pointers made unused (includes those of earlier runs).
    pub dead_items: u64,
    /// Live tuples left.
    pub tuples_remaining: u64,
    /// Deleted by a transaction that committed after the horizon (dead,
    /// but a snapshot may still see it).
    pub dead_not_removable: u64,
    /// Rounds of index passes.
    pub index_scans: u32,
    /// Per index: name and the totals of its bulk deletions.
    pub indexes: Vec<(String, BulkDeleteStats)>,
    /// Largest `memory_usage()` the dead-TID store reached.
    pub store_peak_bytes: usize,
    /// Most TIDs the store held at once.
    pub store_peak_tids: usize,
    /// Time in phase 1 (heap scan and prune), phase 2 (index passes) and
    /// phase 3 (heap passes).
    pub phase_time: [Duration; 3],
    /// WAL written: records, full-page images, bytes.
    pub wal: (u64, u64, u64),
    pub elapsed: Duration,
}

/// Vacuums `table` (whose indexes are `indexes`) as the writing
/// transaction `xid` (`INVALID_XID` for none: VACUUM needs no xid of its
/// own; its WAL records only carry one), keeping at most about
/// `maintenance_work_mem` bytes of dead TIDs between index passes. The
/// caller holds a lock on the table that keeps DDL and other VACUUMs away
/// (`ShareUpdateExclusiveLock`), or runs alone.
pub fn vacuum_table(
    db: &Database,
    table: &TableDef,
    indexes: &[IndexDef],
    xid: Xid,
    maintenance_work_mem: usize,
) -> Result<VacuumReport, StorageError> {
    vacuum_table_as(db, table, indexes, xid, maintenance_work_mem, false)
}

/// [`vacuum_table`], for autovacuum when `auto` (it stamps
/// `last_autovacuum` rather than `last_vacuum`). A table's TOAST relation
/// is vacuumed with it, as PostgreSQL does; a columnar table's
/// metadata heap is vacuumed too (its row groups are rewritten by
/// `columnar::vacuum::compact`, which VACUUM runs on top of this).
pub fn vacuum_table_as(
    db: &Database,
    table: &TableDef,
    indexes: &[IndexDef],
    xid: Xid,
    maintenance_work_mem: usize,
    auto: bool,
) -> Result<VacuumReport, StorageError> {
    let report = vacuum_heap(db, table, indexes, xid, maintenance_work_mem)?;
    if table.is_columnar() {
        let meta = TableDef::new(
            crate::smgr::rel_of(table.oid, crate::smgr::Fork::ColumnarMeta),
            format!("{}_colmeta", table.name),
            Vec::new(),
        );
        vacuum_heap(db, &meta, &[], xid, maintenance_work_mem)?;
    }
    // The TOAST relation's chunks die with their rows (see `toast`); it
    // has no index, so its dead chunks go in one pass.
    let toast = crate::toast::toast_rel(table.oid);
    if !table.is_columnar() && db.smgr.exists(toast) {
        let chunks = TableDef::new(toast, format!("pg_toast_{}", table.oid), Vec::new());
        vacuum_heap(db, &chunks, &[], xid, maintenance_work_mem)?;
    }
    db.stats.vacuumed(
        table.oid,
        report.tuples_remaining,
        report.dead_not_removable,
        auto,
    );
    Ok(report)
}

/// The three phases over the heap whose file is `table.oid` (a table, or a
/// columnar table's metadata fork).
fn vacuum_heap(
    db: &Database,
    table: &TableDef,
    indexes: &[IndexDef],
    xid: Xid,
    maintenance_work_mem: usize,
) -> Result<VacuumReport, StorageError> {
    let start = Instant::now();
    let wal_start = wal_position(db);
    let pool = &db.pool;
    let rel = table.oid;
    let nblocks = db.nblocks(rel)?;
    let mut report = VacuumReport {
        table: table.name.clone(),
        pages: nblocks,
        indexes: indexes
            .iter()
            .map(|i| (i.name.clone(), BulkDeleteStats::default()))
            .collect(),
        ..Default::default()
    };
    let mut store = TidStore::new();
    let mut scan = PageScan::default();
    let mut payload: Vec<u8> = Vec::new();
    let mut verdicts = Verdicts::new(db, db.txn.horizon());
    for block in 0..nblocks {
        let buf = pool.read_buffer(rel, block)?;
        pool.prefetch_mapping(rel, block + 1);
        {
            let mut g = buf.lock_exclusive();
            let p = g.page_mut();
            if page::is_new(p) {
                continue;
            }
            scan.scan(p, &mut verdicts);
            if scan.hot {
                // HOT chains: prune chain by chain (see `prune`).
                let db_status = |x| db.txn.clog.status(x);
                let plan = prune::prune(pool, rel, block, p, verdicts.horizon, db_status)?;
                report.tuples_remaining += u64::from(plan.live);
                report.dead_not_removable += u64::from(plan.recently_dead);
                scan.pruned.clear();
                scan.removed = plan.removed;
                scan.dead.clear();
                scan.dead.extend(
                    page::line_pointers(p)
                        .filter(|(_, lp)| lp.0 == ItemState::Dead)
                        .map(|(i, _)| i),
                );
            } else {
                scan.removed = scan.pruned.len() as u32;
                report.tuples_remaining += u64::from(scan.live);
                report.dead_not_removable += u64::from(scan.recently_dead);
            }
            let pruned = &scan.pruned;
            if !pruned.is_empty() {
                if !page::prune(p, pruned) {
                    unreachable!("pruned items are normal");
                }
                payload.clear();
                encode_item_set(pruned, &mut payload);
                log_page_change(
                    pool,
                    p,
                    RecordType::HeapPrune,
                    xid,
                    BlockRef { rel, block },
                    &payload,
                )?;
            }
        }
        report.tuples_removed += u64::from(scan.removed);
        if scan.dead.is_empty() {
            continue;
        }
        report.pages_with_dead += 1;
        store.add_block(block, &scan.dead);
        report.store_peak_bytes = report.store_peak_bytes.max(store.memory_usage());
        report.store_peak_tids = report.store_peak_tids.max(store.len());
        if store.memory_usage() >= maintenance_work_mem {
            clean(db, table, indexes, xid, &store, &mut report)?;
            store = TidStore::new();
        }
    }
    if !store.is_empty() {
        clean(db, table, indexes, xid, &store, &mut report)?;
    }
    report.phase_time[0] = start.elapsed() - report.phase_time[1] - report.phase_time[2];
    let wal_end = wal_position(db);
    report.wal = (
        wal_end.0 - wal_start.0,
        wal_end.1 - wal_start.1,
        wal_end.2 - wal_start.2,
    );
    for (i, index) in indexes.iter().enumerate() {
        report.indexes[i].1.pages = db.nblocks(index.oid)?;
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Phase 1's look at one heap page: which line pointers are dead (left so
/// by an earlier VACUUM, or about to be pruned) and which tuples to prune.
#[derive(Default)]
struct PageScan {
    /// Every dead line pointer after pruning, ascending (for the store).
    dead: Vec<u16>,
    /// The tuples to prune, ascending.
    pruned: Vec<u16>,
    live: u32,
    recently_dead: u32,
    /// The page has HOT chains: prune it with `prune` instead.
    hot: bool,
    /// Tuples removed from the page.
    removed: u32,
}

impl PageScan {
    /// Classifies the line pointers of page `p`. Kept out of line, with the
    /// counters and the verdict cache in locals and the lists written by
    /// index: inlined into the VACUUM loop, all of them lived in memory.
    #[inline(never)]
    fn scan(&mut self, p: &[u8], verdicts: &mut Verdicts<'_>) {
        let n = usize::from(page::item_count(p));
        self.dead.resize(n, 0);
        self.pruned.resize(n, 0);
        let (dead, pruned) = (&mut self.dead[..n], &mut self.pruned[..n]);
        let (mut nd, mut np) = (0, 0);
        let (mut live, mut recently_dead) = (0, 0);
        let mut hot = false;
        let mut cache = verdicts.cache;
        for (item, lp) in page::line_pointers(p) {
            match lp {
                (ItemState::Dead, _, _) => {
                    dead[nd] = item;
                    nd += 1;
                }
                (ItemState::Unused, _, _) => {}
                (ItemState::Redirect, _, _) => hot = true,
                (ItemState::Normal, off, len) => {
                    let t = &p[off..off + len];
                    hot |= tuple::infomask(t) & (tuple::HEAP_ONLY | tuple::HOT_UPDATED) != 0;
                    // A row locker's xmax deletes nothing.
                    let xids = if tuple::infomask(t) & tuple::XMAX_LOCK_ONLY != 0 {
                        u64::from(tuple::xmin(t))
                    } else {
                        tuple::xids(t)
                    };
                    let v = match cache {
                        (k, v, _, _) if k == xids => v,
                        (_, _, k, v) if k == xids => v,
                        _ => {
                            verdicts.cache = cache;
                            let v = verdicts.miss(xids);
                            cache = verdicts.cache;
                            v
                        }
                    };
                    match v {
                        Verdict::Gone => {
                            pruned[np] = item;
                            dead[nd] = item;
                            (np, nd) = (np + 1, nd + 1);
                        }
                        Verdict::Live => live += 1,
                        Verdict::RecentlyDead => recently_dead += 1,
                    }
                }
            }
        }
        self.dead.truncate(nd);
        self.pruned.truncate(np);
        (self.live, self.recently_dead, self.hot) = (live, recently_dead, hot);
    }
}

/// The verdicts of the last two `(xmin, xmax)` pairs met (`xmax` zero for a
/// row locker). A page's tuples share a few pairs — after a `DELETE` of
/// every second row, exactly two, alternating — so nearly every tuple costs
/// one or two compares of its 8-byte xid pair ([`PageScan::scan`] keeps the
/// pairs in registers); only a new pair looks up commit status. A cached
/// verdict may only be too cautious: `Gone` never changes (aborted stays
/// aborted, a commit below the horizon stays below it), while a `Live` or
/// `RecentlyDead` pair that becomes removable during the VACUUM is simply
/// left for the next one.
struct Verdicts<'a> {
    /// (pair, verdict) of the last pair met, then of the one before.
    cache: (u64, Verdict, u64, Verdict),
    db: &'a Database,
    pub horizon: Xid,
}

impl<'a> Verdicts<'a> {
    fn new(db: &'a Database, horizon: Xid) -> Self {
        let mut v = Verdicts {
            cache: (u64::MAX, Verdict::Live, u64::MAX, Verdict::Live),
            db,
            horizon,
        };
        // Start with a real entry (for a pair no tuple is likely to have),
        // so that the lookup needs no "empty" test.
        let first = v.judge(u64::MAX);
        v.cache = (u64::MAX, first, u64::MAX, first);
        v
    }

    /// The verdict for a pair not in the cache; it becomes the newest entry.
    #[inline(never)]
    fn miss(&mut self, xids: u64) -> Verdict {
        let v = self.judge(xids);
        self.cache = (xids, v, self.cache.0, self.cache.1);
        v
    }

    fn judge(&mut self, xids: u64) -> Verdict {
        let (xmin, xmax) = (xids as Xid, (xids >> 32) as Xid);
        prune::verdict(xmin, xmax, self.horizon, |x| self.db.txn.clog.status(x))
    }
}

/// WAL records and full-page images inserted so far, and the insert position.
fn wal_position(db: &Database) -> (u64, u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    let s = &db.wal.stats;
    (
        s.records.load(Relaxed),
        s.fpis.load(Relaxed),
        db.wal.insert_lsn(),
    )
}

/// Phases 2 and 3 for the dead TIDs in `store`.
fn clean(
    db: &Database,
    table: &TableDef,
    indexes: &[IndexDef],
    xid: Xid,
    store: &TidStore,
    report: &mut VacuumReport,
) -> Result<(), StorageError> {
    let pool = &db.pool;
    let start = Instant::now();
    if !indexes.is_empty() {
        report.index_scans += 1;
    }
    for (i, index) in indexes.iter().enumerate() {
        let s = Btree::new(pool, index.oid).bulk_delete(
            |t| tusk_radix::Tid::new(t.block, t.item),
            |probes, dead| store.contains_batch(probes, dead),
            xid,
        )?;
        let total = &mut report.indexes[i].1;
        total.removed += s.removed;
        total.remaining = s.remaining;
        total.pages = s.pages;
    }
    report.phase_time[1] += start.elapsed();
    let start = Instant::now();
    let rel = table.oid;
    let mut payload: Vec<u8> = Vec::new();
    // The next block in the store is pinned, and its line pointers
    // prefetched into the CPU cache, while the current one is changed.
    let mut blocks = store.iter();
    let (mut items, mut next_items) = (Vec::new(), Vec::new());
    let mut pin_next = |next_items: &mut Vec<u16>| -> Result<_, StorageError> {
        let Some((block, offsets)) = blocks.next_block() else {
            return Ok(None);
        };
        next_items.clear();
        next_items.extend_from_slice(offsets);
        let buf = pool.read_buffer(rel, block)?;
        buf.prefetch(
            0..PAGE_HEADER_SIZE + usize::from(offsets[offsets.len() - 1]) * LINE_POINTER_SIZE,
        );
        Ok(Some(buf))
    };
    let mut next = pin_next(&mut next_items)?;
    while let Some(buf) = next.take() {
        std::mem::swap(&mut items, &mut next_items);
        next = pin_next(&mut next_items)?;
        let block = buf.block();
        let mut g = buf.lock_exclusive();
        let p = g.page_mut();
        if !page::set_unused(p, &items) {
            return Err(StorageError::Other(format!(
                "VACUUM: line pointers of block {block} of \"{}\" changed under it",
                table.name
            )));
        }
        payload.clear();
        encode_item_set(&items, &mut payload);
        log_page_change(
            pool,
            p,
            RecordType::HeapUnused,
            xid,
            BlockRef { rel, block },
            &payload,
        )?;
        report.dead_items += items.len() as u64;
        pool.fsm.record(rel, block, page::free_space(p));
    }
    report.phase_time[2] += start.elapsed();
    Ok(())
}

impl VacuumReport {
    /// PostgreSQL 15's `VACUUM VERBOSE` messages (INFO level) for database
    /// `dbname`, then tusk's line about the dead-TID store. Each element is
    /// one message; continuation lines are part of it, as in PostgreSQL.
    pub fn verbose_messages(&self, dbname: &str) -> Vec<String> {
        let name = format!("\"{dbname}.public.{}\"", self.table);
        let pct = |n: u32| {
            if self.pages == 0 {
                100.0
            } else {
                n as f64 * 100.0 / self.pages as f64
            }
        };
        let mut m = format!(
            "finished vacuuming {name}: index scans: {}\n\
             pages: 0 removed, {} remain, {} scanned ({:.2}% of total)\n\
             tuples: {} removed, {} remain, {} are dead but not yet removable\n",
            self.index_scans,
            self.pages,
            self.pages,
            pct(self.pages),
            self.tuples_removed,
            // PostgreSQL's "remain" counts the not yet removable ones too.
            self.tuples_remaining + self.dead_not_removable,
            self.dead_not_removable,
        );
        m.push_str(&format!(
            "index scan {}needed: {} pages from table ({:.2}% of total) had {} dead item identifiers removed\n",
            if self.index_scans > 0 { "" } else { "not " },
            self.pages_with_dead,
            pct(self.pages_with_dead),
            self.dead_items,
        ));
        for (iname, s) in &self.indexes {
            m.push_str(&format!(
                "index \"{iname}\": pages: {} in total, 0 newly deleted, 0 currently deleted, 0 reusable\n",
                s.pages
            ));
        }
        m.push_str(&format!(
            "tusk: dead item storage: TidStore (radix tree), peak memory {} bytes for {} TIDs ({:.2} bytes/TID)\n",
            self.store_peak_bytes,
            self.store_peak_tids,
            if self.store_peak_tids == 0 {
                0.0
            } else {
                self.store_peak_bytes as f64 / self.store_peak_tids as f64
            },
        ));
        let [scan, index, heap] = self.phase_time.map(|d| d.as_secs_f64());
        m.push_str(&format!(
            "tusk: phases: heap scan and prune {scan:.3} s, index vacuuming {index:.3} s, heap vacuuming {heap:.3} s\n"
        ));
        m.push_str(&format!(
            "WAL usage: {} records, {} full page images, {} bytes\n",
            self.wal.0, self.wal.1, self.wal.2
        ));
        m.push_str(&format!(
            "system usage: elapsed: {:.2} s",
            self.elapsed.as_secs_f64()
        ));
        vec![format!("vacuuming {name}"), m]
    }
}
