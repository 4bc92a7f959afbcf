//! `min_dynamic_shared_memory`: the DSM pool lives in the main region.

use tusk_shmem::{DsaArea, DsaConfig};
use tusk_storage::Database;

fn open(dir: &std::path::Path, min_dsm: &str) -> std::sync::Arc<Database> {
    Database::open(
        dir,
        &[
            ("shared_buffers".into(), "128kB".into()),
            ("huge_pages".into(), "off".into()),
            ("min_dynamic_shared_memory".into(), min_dsm.into()),
        ],
    )
    .unwrap()
}

#[test]
fn pool_is_reserved_and_used_by_dsa_areas() {
    let dir = tempfile::tempdir().unwrap();
    // A bare number is in MB, as in PostgreSQL.
    let db = open(dir.path(), "4");
    assert_eq!(db.options().min_dynamic_shared_memory, 4 << 20);
    assert_eq!(db.dsm.stats().pool_size, 4 << 20);
    let area = DsaArea::create(&db.dsm, DsaConfig::default()).unwrap();
    let p = area.allocate(32 << 10).unwrap();
    assert!(area.segment(0).unwrap().from_pool());
    area.free(p);
    drop(area);
    assert_eq!(db.dsm.stats().pool_segments_created, 1);
    assert_eq!(db.dsm.stats().pool_bytes, 0);
}

#[test]
fn default_is_no_pool() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), &[("huge_pages".into(), "off".into())]).unwrap();
    assert_eq!(db.dsm.stats().pool_size, 0);
    let seg = db.dsm.create(1 << 20).unwrap();
    assert!(!seg.from_pool());
}

#[test]
fn bad_values_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let err = Database::open(
        dir.path(),
        &[("min_dynamic_shared_memory".into(), "lots".into())],
    )
    .err()
    .unwrap();
    assert!(
        err.to_string().contains("min_dynamic_shared_memory"),
        "{err}"
    );
}
