//! VACUUM of a columnar table: row groups rewritten, the delta compressed,
//! space reused.
//!
//! A plain VACUUM first treats the table's two heaps as heaps (`vacuum`):
//! the delta, and the metadata heap, whose dead entries — of retired row
//! groups, of deletions by aborted transactions, of deletions that a
//! retired group took along — are removed once no snapshot can see them.
//! Then [`compact`], in the VACUUM's own transaction:
//!
//! 1. takes `ExclusiveLock` on the table (on top of VACUUM's
//!    `ShareUpdateExclusiveLock`): readers go on, writers wait, and every
//!    writer that came before has ended, so every row's fate is settled
//!    and a fresh snapshot sees all of it;
//! 2. lists the data fork's free blocks: every block no remaining group
//!    entry names (see `registry`);
//! 3. picks the rows to rewrite: the live rows of the delta, and of every
//!    row group that has lost [`REWRITE_DELETED_SHARE`] of its rows or is
//!    under half full (only together with other rows, so that a lone small
//!    group is not rewritten over and over);
//! 4. writes them as new row groups (free blocks first) with the VACUUM's
//!    xid, and deletes — with the same xid — the entries of the groups it
//!    replaced, their deletion entries and the delta rows it moved. A
//!    snapshot taken before the VACUUM commits sees the old rows, a later
//!    one the new; nobody sees both. The replaced groups are *retired* in
//!    the table's claims, so a writer whose snapshot still sees one gets
//!    "concurrently updated" for its rows (REPEATABLE READ's 40001);
//! 5. drops the claims that no snapshot can need any more.
//!
//! The old groups' blocks become free for the VACUUM after the one that
//! removes their entries.

use super::column::{ColumnBuffer, ColumnDecoder};
use super::meta::{self, MetaEntry};
use super::rowgroup::GroupReader;
use super::writer::{ColumnarWriter, ROW_GROUP_ROWS};
use super::GroupEntry;
use crate::catalog::TableDef;
use crate::clog::XidStatus;
use crate::heap::{self, Tid, Visibility};
use crate::heapam::{RowWait, TmResult};
use crate::lock::LockMode;
use crate::smgr::{rel_of, Fork};
use crate::xact::{lock_error, Transaction};
use crate::StorageError;

/// Share of a row group's rows that, deleted, gets it rewritten.
pub const REWRITE_DELETED_SHARE: f64 = 0.2;

/// What [`compact`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactReport {
    /// Row groups replaced, and written.
    pub groups_replaced: u64,
    pub groups_written: u64,
    /// Live rows moved out of the delta.
    pub delta_rows: u64,
    /// Deleted rows left behind by the rewritten groups.
    pub deleted_rows_removed: u64,
    /// Free blocks of the data fork before the rewrite.
    pub free_blocks: u64,
    /// Row groups and claims left.
    pub groups_left: u64,
    pub claims_left: u64,
}

/// Rewrites `table`'s row groups and delta as the module doc says, in
/// `txn` (the VACUUM's transaction).
pub fn compact(txn: &mut Transaction, table: &TableDef) -> Result<CompactReport, StorageError> {
    let oid = table.oid;
    txn.lock_relation(oid, LockMode::Exclusive)
        .map_err(|e| lock_error(e, &format!("relation \"{}\"", table.name)))?;
    let db = txn.database().clone();
    let state = db.columnar.table(oid);
    let mut report = CompactReport::default();

    // The data fork's free blocks: those no entry names.
    let data_blocks = db.pool.nblocks(rel_of(oid, Fork::ColumnarData))?;
    let mut used = vec![false; data_blocks as usize];
    meta::scan(&db, oid, None, |_, _, e| {
        if let MetaEntry::Group(g) = e {
            let end = (g.first_block + g.blocks).min(data_blocks);
            for b in g.first_block.min(end)..end {
                used[b as usize] = true;
            }
        }
        Ok(())
    })?;
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for (b, &u) in used.iter().enumerate() {
        match runs.last_mut() {
            _ if u => {}
            Some((first, n)) if *first + *n == b as u32 => *n += 1,
            _ => runs.push((b as u32, 1)),
        }
    }
    state.set_free(runs);
    report.free_blocks = state.free_blocks();

    // What a snapshot now sees: everything settled (see the module doc).
    let snapshot = txn.snapshot();
    let mut vis = Visibility::new(&db.txn, snapshot.clone());
    let mut groups: Vec<(Tid, GroupEntry)> = Vec::new();
    let mut deletions: Vec<(Tid, u32, Vec<u32>)> = Vec::new();
    meta::scan(&db, oid, Some(&mut vis), |tid, _, e| {
        match e {
            MetaEntry::Group(g) => groups.push((tid, g)),
            MetaEntry::Deletion { group, rows } => deletions.push((tid, group, rows)),
        }
        Ok(())
    })?;
    groups.sort_by_key(|(_, g)| g.first_block);
    let deleted_of = |group: u32| -> Vec<u32> {
        let mut rows: Vec<u32> = deletions
            .iter()
            .filter(|(_, g, _)| *g == group)
            .flat_map(|(_, _, r)| r.iter().copied())
            .collect();
        rows.sort_unstable();
        rows.dedup();
        rows
    };
    let mut delta: Vec<(Tid, Vec<u8>)> = Vec::new();
    let mut vis = Visibility::new(&db.txn, snapshot);
    for block in 0..db.nblocks(oid)? {
        heap::scan_page(&db.pool, oid, block, &mut vis, |item, t| {
            delta.push((Tid { block, item }, t.to_vec()))
        })?;
    }

    let worn = |g: &GroupEntry| {
        let deleted = deleted_of(g.first_block).len() as f64;
        deleted >= f64::from(g.rows) * REWRITE_DELETED_SHARE
    };
    let small = |g: &GroupEntry| (g.rows as usize) < ROW_GROUP_ROWS / 2;
    let mut chosen: Vec<(Tid, GroupEntry)> =
        groups.iter().filter(|(_, g)| worn(g)).copied().collect();
    let smalls: Vec<(Tid, GroupEntry)> = groups
        .iter()
        .filter(|(_, g)| small(g) && !worn(g))
        .copied()
        .collect();
    if !delta.is_empty() || !chosen.is_empty() || smalls.len() > 1 {
        chosen.extend(smalls);
    }
    if chosen.is_empty() && delta.is_empty() {
        report.groups_left = groups.len() as u64;
        report.claims_left = prune_claims(txn, table)?;
        return Ok(report);
    }

    let xid = txn.xid()?;
    let cid = txn.command_id_for_write();
    let mut writer = ColumnarWriter::for_rewrite(&db, table, xid, cid);
    let types = table.column_types();
    for (_, g) in &chosen {
        let deleted = deleted_of(g.first_block);
        report.deleted_rows_removed += deleted.len() as u64;
        if deleted.len() >= g.rows as usize {
            continue;
        }
        let reader = GroupReader::new(&db.pool, oid, g.first_block, g.stream_len as usize);
        let header = reader.header()?;
        let mut columns = Vec::with_capacity(types.len());
        let mut seg = Vec::new();
        for (info, &ty) in header.columns.iter().zip(&types) {
            reader.segment(info, &mut seg)?;
            let mut d = ColumnDecoder::new(std::mem::take(&mut seg), ty, g.rows as usize)?;
            columns.push(ColumnBuffer::decode(&mut d, ty, g.rows as usize));
        }
        let mut next_deleted = deleted.iter().peekable();
        for row in 0..g.rows {
            if next_deleted.next_if_eq(&&row).is_some() {
                continue;
            }
            writer.push_row_from(&columns, row as usize)?;
        }
    }
    for (_, t) in &delta {
        writer.push_tuple(t)?;
    }
    let writer = writer.finish()?;
    report.groups_written = writer.groups;
    report.delta_rows = delta.len() as u64;
    report.groups_replaced = chosen.len() as u64;

    // Retire what was rewritten, with the same xid.
    let meta_rel = rel_of(oid, Fork::ColumnarMeta);
    for (tid, g) in &chosen {
        state.claims().retire(g.first_block, xid);
        expect_ok(txn.delete(meta_rel, *tid, RowWait::Block)?)?;
        for (dtid, group, _) in &deletions {
            if *group == g.first_block {
                expect_ok(txn.delete(meta_rel, *dtid, RowWait::Block)?)?;
            }
        }
    }
    for (tid, _) in &delta {
        expect_ok(txn.delete(oid, *tid, RowWait::Block)?)?;
    }
    report.groups_left = (groups.len() - chosen.len()) as u64 + writer.groups;
    report.claims_left = prune_claims(txn, table)?;
    Ok(report)
}

/// A change of a row VACUUM holds the table for must go through.
fn expect_ok(r: TmResult) -> Result<(), StorageError> {
    match r {
        TmResult::Ok => Ok(()),
        other => Err(StorageError::Other(format!(
            "VACUUM of a columnar table found a row it could not change ({other:?})"
        ))),
    }
}

/// Drops the claims no snapshot can need (see `claims`); returns how many
/// are left.
fn prune_claims(txn: &Transaction, table: &TableDef) -> Result<u64, StorageError> {
    let db = txn.database();
    let horizon = db.txn.horizon();
    let settled = |x, lock_only: bool| match db.txn.clog.status(x) {
        XidStatus::Aborted => true,
        XidStatus::Committed => lock_only || x < horizon,
        XidStatus::InProgress | XidStatus::SubCommitted => false,
    };
    let state = db.columnar.table(table.oid);
    let left = state.claims().prune(settled);
    Ok(left as u64)
}
