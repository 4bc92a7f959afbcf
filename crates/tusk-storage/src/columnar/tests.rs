//! End-to-end tests of the columnar storage: rows written through a
//! transaction, read back through a snapshot.

use super::*;
use crate::catalog::{AccessMethod, ColumnDef, DataType, SqlType};
use crate::heap::Visibility;
use crate::tuple::TupleBuilder;
use crate::{Transaction, TxnOptions};
use std::sync::Arc;

fn columnar_table(db: &Arc<Database>, txn: &mut Transaction) -> TableDef {
    let mut def = TableDef::new(
        0,
        "c",
        vec![
            ColumnDef::new("id", SqlType::Int8, false),
            ColumnDef::new("name", SqlType::Text, false),
        ],
    );
    def.access_method = AccessMethod::Columnar;
    let def = txn.create_relation(def).unwrap();
    assert!(db.smgr.exists(rel_of(def.oid, Fork::ColumnarMeta)));
    def
}

fn row(tb: &mut TupleBuilder, i: i64) -> Vec<u8> {
    tb.begin();
    tb.push_i64(i);
    if i % 10 == 0 {
        tb.push_null();
    } else {
        tb.push_text(format!("name {}", i % 7).as_bytes());
    }
    tb.finish(0).to_vec()
}

/// Reads every visible row group of `def` back as (id, name) pairs.
fn read_groups(
    db: &Arc<Database>,
    def: &TableDef,
    txn: &mut Transaction,
) -> Vec<(i64, Option<String>)> {
    let snap = txn.snapshot();
    let mut vis = Visibility::new(&db.txn, snap);
    let dir = Directory::read(db, def.oid, &mut vis).unwrap();
    let mut out = Vec::new();
    for g in &dir.groups {
        let r = GroupReader::new(&db.pool, def.oid, g.first_block, g.stream_len as usize);
        let h = r.header().unwrap();
        assert_eq!(h.rows, g.rows);
        let mut seg = Vec::new();
        r.segment(&h.columns[0], &mut seg).unwrap();
        let mut ids: Vec<i64> = Vec::new();
        ColumnDecoder::new(seg.clone(), DataType::Int8, g.rows as usize)
            .unwrap()
            .next_ints(g.rows as usize, &mut ids);
        r.segment(&h.columns[1], &mut seg).unwrap();
        let mut d = ColumnDecoder::new(seg.clone(), DataType::Text, g.rows as usize).unwrap();
        let mut nulls = Vec::new();
        d.next_nulls(g.rows as usize, &mut nulls);
        let mut names = Vec::new();
        d.next_strings(g.rows as usize, |s| {
            names.push(String::from_utf8(s.to_vec()).unwrap())
        });
        for i in 0..g.rows as usize {
            out.push((ids[i], (!nulls[i]).then(|| names[i].clone())));
        }
    }
    out
}

#[test]
fn rows_round_trip_through_row_groups_and_the_delta() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), &[]).unwrap();
    let mut txn = db.begin(TxnOptions::default());
    let def = columnar_table(&db, &mut txn);
    txn.commit().unwrap();

    let n = ROW_GROUP_ROWS as i64 + 5;
    let mut txn = db.begin(TxnOptions::default());
    let xid = txn.xid().unwrap();
    let cid = txn.command_id_for_write();
    let mut w = ColumnarWriter::new(&db, &def, xid, cid);
    let mut tb = TupleBuilder::new();
    for i in 0..n {
        w.push_tuple(&row(&mut tb, i)).unwrap();
    }
    let w = w.finish().unwrap();
    assert_eq!((w.groups, w.delta_rows), (1, 5));

    // Not visible to another transaction before the commit.
    let mut other = db.begin(TxnOptions::default());
    assert!(read_groups(&db, &def, &mut other).is_empty());
    txn.commit().unwrap();
    let rows = read_groups(&db, &def, &mut other);
    assert_eq!(rows.len(), ROW_GROUP_ROWS);
    for (i, (id, name)) in rows.iter().enumerate() {
        assert_eq!(*id, i as i64);
        let want = (i % 10 != 0).then(|| format!("name {}", i % 7));
        assert_eq!(*name, want);
    }
    let (pages, est) = estimate_size(&db, def.oid).unwrap();
    assert!(pages >= 1.0);
    assert_eq!(est, (ROW_GROUP_ROWS + 5) as f64);
}

#[test]
fn an_aborted_load_leaves_no_visible_group() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), &[]).unwrap();
    let mut txn = db.begin(TxnOptions::default());
    let def = columnar_table(&db, &mut txn);
    txn.commit().unwrap();
    let mut txn = db.begin(TxnOptions::default());
    let xid = txn.xid().unwrap();
    let mut w = ColumnarWriter::new(&db, &def, xid, 0);
    let mut tb = TupleBuilder::new();
    for i in 0..MIN_GROUP_ROWS as i64 {
        w.push_tuple(&row(&mut tb, i)).unwrap();
    }
    assert_eq!(w.finish().unwrap().groups, 1);
    txn.rollback();
    let mut r = db.begin(TxnOptions::default());
    assert!(read_groups(&db, &def, &mut r).is_empty());
}

#[test]
fn row_ids_map_to_tids_beyond_heap_blocks() {
    for (group, row) in [
        (0, 0),
        (1, 65535),
        (5, 65536),
        ((1 << 30) - 1, ROW_GROUP_ROWS as u32 - 1),
    ] {
        let id = RowId { group, row };
        let tid = id.to_tid();
        assert!(tid.block >= 1 << 31);
        assert_eq!(RowId::from_tid(tid), Some(id));
    }
    assert_eq!(RowId::from_tid(Tid { block: 7, item: 1 }), None);
}
