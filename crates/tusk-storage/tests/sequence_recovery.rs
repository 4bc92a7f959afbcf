//! Sequences after a crash: every value `nextval` handed out before the
//! crash stays behind the sequence, whether the page was written out in
//! between, a checkpoint came, or neither (see `sequence`'s module doc).

use std::path::Path;
use std::sync::Arc;
use tusk_storage::sequence::{self, SequenceDef};
use tusk_storage::{DataType, Database, TableDef, TxnOptions};

fn open(dir: &Path) -> Arc<Database> {
    let settings: Vec<(String, String)> = vec![
        ("shared_buffers".into(), "256kB".into()),
        ("huge_pages".into(), "off".into()),
    ];
    Database::open(dir, &settings).unwrap()
}

/// Creates sequence `s` (ascending by `increment` from 1) and commits.
fn create_sequence(db: &Arc<Database>, increment: i64) -> (u32, SequenceDef) {
    let seq = SequenceDef {
        ty: DataType::Int8,
        start: 1,
        increment,
        min: 1,
        max: i64::MAX,
        cache: 1,
        cycle: false,
        owned_by: None,
        identity: None,
    };
    let mut def = TableDef::new(0, "s", Vec::new());
    def.sequence = Some(seq.clone());
    let mut txn = db.begin(TxnOptions::default());
    let def = txn.create_relation(def).unwrap();
    txn.commit().unwrap();
    (def.oid, seq)
}

fn next(db: &Database, oid: u32, seq: &SequenceDef) -> i64 {
    let v = sequence::next_value(&db.pool, oid, "s", seq).unwrap();
    db.wal.flush(v.lsn).unwrap();
    v.value
}

/// Leaves `db` as a crash would and opens a copy of its directory (the
/// crashed process still holds the lock).
fn crash_and_restart(db: Arc<Database>, crashed: &Path, run: &Path) -> Arc<Database> {
    db.wal.flush_all().unwrap();
    std::mem::forget(db);
    copy_dir(crashed, run);
    open(run)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if e.file_name() != "postmaster.pid" {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn values_are_never_handed_out_twice_across_crashes() {
    let dir = tempfile::tempdir().unwrap();
    // Three scenarios, each ended by a crash: values only; values, the page
    // written out, more values; values, a checkpoint, more values.
    for scenario in 0..3 {
        let crashed = dir.path().join(format!("crashed-{scenario}"));
        let db = open(&crashed);
        let (oid, seq) = create_sequence(&db, 3);
        let mut handed = Vec::new();
        for _ in 0..10 {
            handed.push(next(&db, oid, &seq));
        }
        match scenario {
            1 => db.pool.flush_all().unwrap(),
            2 => db.checkpoint().unwrap(),
            _ => {}
        }
        for _ in 0..5 {
            handed.push(next(&db, oid, &seq));
        }
        let expected: Vec<i64> = (0..15).map(|i| 1 + 3 * i).collect();
        assert_eq!(handed, expected, "scenario {scenario}");
        let db = crash_and_restart(db, &crashed, &dir.path().join(format!("run-{scenario}")));
        let after = next(&db, oid, &seq);
        let last = *handed.last().unwrap();
        assert!(after > last, "scenario {scenario}: {after} after {last}");
        // At most one logged run of values is skipped.
        assert!(
            after <= last + 3 * (sequence::LOG_AHEAD + 1),
            "scenario {scenario}: {after} after {last}"
        );
        assert_eq!((after - 1) % 3, 0);
    }
}

#[test]
fn a_clean_restart_continues_without_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let (oid, seq) = {
        let db = open(&path);
        let (oid, seq) = create_sequence(&db, 1);
        for want in 1..=7 {
            assert_eq!(next(&db, oid, &seq), want);
        }
        (oid, seq)
    };
    let db = open(&path);
    assert_eq!(next(&db, oid, &seq), 8);
    let lsn = sequence::set_value(&db.pool, oid, "s", &seq, 100, false).unwrap();
    db.wal.flush(lsn).unwrap();
    assert_eq!(next(&db, oid, &seq), 100);
    assert_eq!(next(&db, oid, &seq), 101);
}
