//! `SHOW min_dynamic_shared_memory` reports the startup setting.

use tusk_sql::{QueryResult, Session};

fn show(s: &mut Session, name: &str) -> String {
    match s.query(&format!("show {name}")).unwrap().pop().unwrap() {
        QueryResult::Rows { rows, .. } => rows[0][0].clone().unwrap_or_default(),
        QueryResult::Command { tag } => tag,
        QueryResult::Notice(n) => n.message,
    }
}

#[test]
fn show_min_dynamic_shared_memory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tusk.conf"),
        "shared_buffers = 256kB\nhuge_pages = off\nmin_dynamic_shared_memory = 8MB\n",
    )
    .unwrap();
    let mut s = Session::open(dir.path()).unwrap();
    assert_eq!(show(&mut s, "min_dynamic_shared_memory"), "8MB");
    assert!(s.query("set min_dynamic_shared_memory = '16MB'").is_err());
    assert_eq!(s.database().dsm.stats().pool_size, 8 << 20);
}

#[test]
fn min_dynamic_shared_memory_defaults_to_zero() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tusk.conf"),
        "shared_buffers = 256kB\nhuge_pages = off\n",
    )
    .unwrap();
    let mut s = Session::open(dir.path()).unwrap();
    assert_eq!(show(&mut s, "min_dynamic_shared_memory"), "0");
}
