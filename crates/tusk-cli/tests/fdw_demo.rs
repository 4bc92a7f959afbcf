//! The README's postgres_fdw demonstration, run small: `examples/fdw_demo.sh`
//! starts two `tusk serve` nodes and a PostgreSQL 15 coordinator whose
//! partitioned table has a foreign partition on each node, checks every
//! answer against a plain PostgreSQL table and checks that the grouped
//! aggregate is pushed down to the nodes. The script exits 0 only when all
//! of that holds; exit status 77 means PostgreSQL 15 is not installed, and
//! the test is skipped with the script's message.

use std::process::Command;

#[test]
fn postgres_fdw_coordinator_over_two_tusk_nodes() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/fdw_demo.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script)
        .env("TUSK_BIN", env!("CARGO_BIN_EXE_tusk"))
        .env("ROWS", "4000")
        .env("QUIET", "1")
        .env_remove("TUSKDATA");
    if let Ok(bin) = std::env::var("TUSK_PG_BIN") {
        cmd.env("PG_BIN", bin);
    }
    let out = cmd.output().expect("run examples/fdw_demo.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(77) {
        eprintln!("skipped: {stderr}");
        return;
    }
    assert!(
        out.status.success(),
        "fdw demo failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        stderr
    );
}
