//! Shared by the second-process tests: re-run this test binary as a child
//! that executes only test `entry`, handing it `desc` in environment
//! variable `env`; returns the child's stdout after checking it succeeded.

pub fn run_child(entry: &str, env: &str, desc: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([entry, "--exact", "--nocapture", "--test-threads=1"])
        .env(env, desc)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
