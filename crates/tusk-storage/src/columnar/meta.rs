//! The metadata heap: which row groups exist and which of their rows are
//! deleted, as versioned tuples.
//!
//! A columnar table's [`Fork::ColumnarMeta`] file is an ordinary heap
//! (slotted pages, tuple headers with `xmin`/`xmax`, WAL, VACUUM), so the
//! existence of a row group and the deletion of rows get their visibility
//! from the same rule as any row: a scan sees a row group whose entry its
//! snapshot sees, and a deletion whose entry it sees. Each tuple holds one
//! attribute, a byte string, whose first byte says what it is:
//!
//! ```text
//! group:     1, first block u32, blocks u32, rows u32, stream length u32
//! deletion:  2, group u32, window u32, then either
//!              0 and a bitmap of the window's 32768 rows (trailing zero bytes cut), or
//!              1, a count u32 and the rows' offsets in the window as an integer stream
//! ```
//!
//! A **group entry** is inserted by the transaction that wrote the row
//! group (its `xmin`), after the group's pages; a row group is identified
//! by its first block. VACUUM retires a group by deleting its entry (its
//! `xmax`), in the same transaction that inserts the entry of the group
//! that replaces it, so every snapshot sees exactly one of the two.
//!
//! A **deletion entry** lists rows of one group deleted by one command of
//! one transaction: its `xmin` and `cmin` are the deleter's xid and command
//! id. Rows are listed per window of [`WINDOW_ROWS`] rows, as a bitmap or
//! as a list, whichever is smaller, so an entry always fits a page.

use super::ints::{self, IntDecoder, Reader};
use crate::heap::{HeapInserter, Tid, Visibility};
use crate::page;
use crate::smgr::{rel_of, Fork};
use crate::tuple::{self, Attr, TupleBuilder};
use crate::txn::Xid;
use crate::{Database, StorageError};

/// Rows covered by one deletion entry.
pub const WINDOW_ROWS: u32 = 32768;

const GROUP: u8 = 1;
const DELETION: u8 = 2;

fn corrupt(what: &str) -> StorageError {
    StorageError::Other(format!("corrupt columnar metadata: {what}"))
}

/// A row group's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupEntry {
    /// The group's first block in the data fork (also its identity).
    pub first_block: u32,
    pub blocks: u32,
    pub rows: u32,
    pub stream_len: u32,
}

/// One entry of the metadata heap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaEntry {
    Group(GroupEntry),
    /// Rows of group `group` (row numbers within it, ascending).
    Deletion {
        group: u32,
        rows: Vec<u32>,
    },
}

impl MetaEntry {
    /// The entries' payloads: one for a group, one per window for a
    /// deletion.
    pub fn payloads(&self) -> Vec<Vec<u8>> {
        match self {
            MetaEntry::Group(g) => {
                let mut b = vec![GROUP];
                for v in [g.first_block, g.blocks, g.rows, g.stream_len] {
                    b.extend_from_slice(&v.to_le_bytes());
                }
                vec![b]
            }
            MetaEntry::Deletion { group, rows } => {
                let mut out = Vec::new();
                let mut i = 0;
                while i < rows.len() {
                    let window = rows[i] / WINDOW_ROWS;
                    let n = rows[i..]
                        .iter()
                        .take_while(|&&r| r / WINDOW_ROWS == window)
                        .count();
                    out.push(deletion_payload(*group, window, &rows[i..i + n]));
                    i += n;
                }
                out
            }
        }
    }

    /// Parses one payload (a deletion entry covers one window).
    pub fn decode(b: &[u8]) -> Result<MetaEntry, StorageError> {
        let u32_at = |o: usize| -> Result<u32, StorageError> {
            b.get(o..o + 4)
                .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
                .ok_or_else(|| corrupt("entry is truncated"))
        };
        match b.first() {
            Some(&GROUP) => Ok(MetaEntry::Group(GroupEntry {
                first_block: u32_at(1)?,
                blocks: u32_at(5)?,
                rows: u32_at(9)?,
                stream_len: u32_at(13)?,
            })),
            Some(&DELETION) => {
                let group = u32_at(1)?;
                let base = u32_at(5)?
                    .checked_mul(WINDOW_ROWS)
                    .ok_or_else(|| corrupt("deletion window"))?;
                let mut rows = Vec::new();
                match b.get(9) {
                    Some(0) => {
                        for (i, &byte) in b[10..].iter().enumerate() {
                            for bit in 0..8 {
                                if byte & (1 << bit) != 0 {
                                    rows.push(base + (i * 8 + bit) as u32);
                                }
                            }
                        }
                    }
                    Some(1) => {
                        let n = u32_at(10)? as usize;
                        if n > WINDOW_ROWS as usize {
                            return Err(corrupt("deletion count"));
                        }
                        let body = &b[14..];
                        let mut d = IntDecoder::new(&mut Reader::new(body), n)?;
                        let mut offsets: Vec<u32> = Vec::with_capacity(n);
                        d.next_into(body, n, &mut offsets);
                        rows.extend(offsets.into_iter().map(|o| base + o % WINDOW_ROWS));
                    }
                    _ => return Err(corrupt("deletion representation")),
                }
                Ok(MetaEntry::Deletion { group, rows })
            }
            _ => Err(corrupt("entry kind")),
        }
    }
}

fn deletion_payload(group: u32, window: u32, rows: &[u32]) -> Vec<u8> {
    let mut head = vec![DELETION];
    head.extend_from_slice(&group.to_le_bytes());
    head.extend_from_slice(&window.to_le_bytes());
    let base = window * WINDOW_ROWS;
    let mut list = head.clone();
    list.push(1);
    list.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    let offsets: Vec<i64> = rows.iter().map(|&r| i64::from(r - base)).collect();
    ints::encode(&offsets, &mut list);
    let last = rows.last().map_or(0, |&r| (r - base) as usize);
    let mut bitmap = head;
    bitmap.push(0);
    let start = bitmap.len();
    bitmap.resize(start + last / 8 + 1, 0);
    for &r in rows {
        let o = (r - base) as usize;
        bitmap[start + o / 8] |= 1 << (o % 8);
    }
    if bitmap.len() <= list.len() {
        bitmap
    } else {
        list
    }
}

/// Inserts `entry` into table `oid`'s metadata heap as command `cid` of
/// `xid`.
pub fn insert(
    db: &Database,
    oid: u32,
    xid: Xid,
    cid: u32,
    entry: &MetaEntry,
) -> Result<Vec<Tid>, StorageError> {
    let mut ins = HeapInserter::new(&db.pool, rel_of(oid, Fork::ColumnarMeta));
    let mut tb = TupleBuilder::new();
    let mut tids = Vec::new();
    for p in entry.payloads() {
        tb.begin();
        tb.push_text(&p);
        tids.push(ins.insert(tb.finish_cid(xid, cid))?);
    }
    Ok(tids)
}

/// The bytes of a metadata tuple's one attribute.
fn payload(t: &[u8]) -> Option<&[u8]> {
    let mut out = None;
    tuple::walk(t, &[crate::catalog::DataType::Text], 0, |_, a| {
        if let Attr::Text(b) = a {
            out = Some(b);
        }
    });
    out
}

/// Calls `f(tid, tuple, entry)` for every entry of table `oid`'s metadata
/// heap that `vis` sees; with `vis` `None`, for every entry whatever its
/// state (the tuple header tells).
pub fn scan(
    db: &Database,
    oid: u32,
    mut vis: Option<&mut Visibility<'_>>,
    mut f: impl FnMut(Tid, &[u8], MetaEntry) -> Result<(), StorageError>,
) -> Result<(), StorageError> {
    let rel = rel_of(oid, Fork::ColumnarMeta);
    let nblocks = db.pool.nblocks(rel)?;
    for block in 0..nblocks {
        let buf = db.pool.read_buffer(rel, block)?;
        let g = buf.lock_shared();
        let p = g.page();
        if page::is_new(p) {
            continue;
        }
        for (item, (state, off, len)) in page::line_pointers(p) {
            if state != page::ItemState::Normal || len < tuple::TUPLE_HEADER_SIZE {
                continue;
            }
            let Some(t) = p.get(off..off + len) else {
                continue;
            };
            if let Some(v) = vis.as_deref_mut() {
                if !v.sees(t) {
                    continue;
                }
            }
            let entry = MetaEntry::decode(payload(t).ok_or_else(|| corrupt("no payload"))?)?;
            f(Tid { block, item }, t, entry)?;
        }
    }
    Ok(())
}

/// What a snapshot sees of a columnar table's row groups.
#[derive(Debug, Default, Clone)]
pub struct Directory {
    /// The visible row groups, by first block.
    pub groups: Vec<GroupEntry>,
    /// For each of `groups` (same order), its rows the snapshot sees
    /// deleted, ascending and distinct.
    pub deleted: Vec<Vec<u32>>,
}

impl Directory {
    /// The row groups and deletions of table `oid` that `vis` sees.
    pub fn read(
        db: &Database,
        oid: u32,
        vis: &mut Visibility<'_>,
    ) -> Result<Directory, StorageError> {
        let mut groups = Vec::new();
        let mut deletions: Vec<(u32, Vec<u32>)> = Vec::new();
        scan(db, oid, Some(vis), |_, _, e| {
            match e {
                MetaEntry::Group(g) => groups.push(g),
                MetaEntry::Deletion { group, rows } => deletions.push((group, rows)),
            }
            Ok(())
        })?;
        groups.sort_by_key(|g| g.first_block);
        let mut deleted = vec![Vec::new(); groups.len()];
        for (group, rows) in deletions {
            if let Ok(i) = groups.binary_search_by_key(&group, |g| g.first_block) {
                deleted[i].extend(rows);
            }
        }
        for d in &mut deleted {
            d.sort_unstable();
            d.dedup();
        }
        Ok(Directory { groups, deleted })
    }

    /// Rows the snapshot sees in the row groups.
    pub fn live_rows(&self) -> u64 {
        self.groups
            .iter()
            .zip(&self.deleted)
            .map(|(g, d)| u64::from(g.rows) - d.len() as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip() {
        let g = MetaEntry::Group(GroupEntry {
            first_block: 7,
            blocks: 3,
            rows: 102_400,
            stream_len: 20_000,
        });
        assert_eq!(MetaEntry::decode(&g.payloads()[0]).unwrap(), g);
        let dense: Vec<u32> = (0..40_000).filter(|r| r % 3 != 0).collect();
        let sparse: Vec<u32> = vec![5, 70_000, 70_001, 100_000];
        for rows in [dense, sparse, vec![0], vec![WINDOW_ROWS - 1, WINDOW_ROWS]] {
            let e = MetaEntry::Deletion {
                group: 9,
                rows: rows.clone(),
            };
            let mut back = Vec::new();
            for p in e.payloads() {
                assert!(p.len() < 4200, "{} bytes", p.len());
                match MetaEntry::decode(&p).unwrap() {
                    MetaEntry::Deletion { group: 9, rows } => back.extend(rows),
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(back, rows);
        }
    }
}
