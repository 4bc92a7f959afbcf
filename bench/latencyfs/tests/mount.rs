//! Mounts the latency file system over a temporary directory and checks that
//! it passes data through both ways, that `posix_fadvise(DONTNEED)` empties
//! the kernel's cache of a file on it (the next reads reach the daemon), and
//! that `O_DIRECT` reads work. Skipped where FUSE cannot be mounted (no
//! /dev/fuse, not allowed to mount).
//!
//! Ignored by default, so the workspace's test command (and CI) never mounts
//! anything: mounting needs /dev/fuse and root or `fusermount3`, which only
//! the FUSE benchmark (`bench/recovery_fuse.sh`) sets up. Run it with
//! `cargo test -p tusk-latencyfs -- --ignored`.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn mounted(mnt: &Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mnt = mnt.to_string_lossy();
    info.lines()
        .any(|l| l.split(' ').nth(4) == Some(mnt.as_ref()) && l.contains("tusk-latencyfs"))
}

/// The daemon; unmounts (and so ends it) when dropped, also on failure.
struct Mount {
    mnt: PathBuf,
    daemon: Option<Child>,
}

impl Mount {
    /// Starts the daemon; `None` if the mount did not appear.
    fn start(backing: &Path, mnt: &Path) -> Option<Mount> {
        let daemon = Command::new(env!("CARGO_BIN_EXE_tusk-latencyfs"))
            .arg("--backing")
            .arg(backing)
            .arg("--mount")
            .arg(mnt)
            .args(["--read-latency-ms", "2"])
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let mut m = Mount {
            mnt: mnt.to_path_buf(),
            daemon: Some(daemon),
        };
        let t0 = Instant::now();
        while !mounted(mnt) {
            let exited = m.daemon.as_mut()?.try_wait().ok()?.is_some();
            if exited || t0.elapsed() > Duration::from_secs(20) {
                let mut err = String::new();
                let mut d = m.daemon.take()?;
                let _ = d.kill();
                let _ = d.wait();
                let _ = d.stderr.take()?.read_to_string(&mut err);
                eprintln!("could not mount FUSE here; skipping ({})", err.trim());
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(m)
    }

    /// Unmounts and returns what the daemon printed.
    fn stop(mut self) -> String {
        self.unmount();
        let mut d = self.daemon.take().unwrap();
        let mut err = String::new();
        d.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(d.wait().unwrap().success(), "{err}");
        err
    }

    fn unmount(&self) {
        if mounted(&self.mnt) {
            let ok = Command::new("umount")
                .arg(&self.mnt)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            self.unmount();
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

#[test]
#[ignore = "mounts FUSE (needs /dev/fuse and root or fusermount3); cargo test -p tusk-latencyfs -- --ignored"]
fn passes_data_through_and_evicts() {
    if !Path::new("/dev/fuse").exists() {
        eprintln!("no /dev/fuse; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (backing, mnt) = (dir.path().join("backing"), dir.path().join("mnt"));
    std::fs::create_dir_all(&backing).unwrap();
    let Some(m) = Mount::start(&backing, &mnt) else {
        return;
    };

    // Write through the mount: the backing file gets the bytes.
    let data: Vec<u8> = (0..64 * 8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::create_dir(mnt.join("base")).unwrap();
    let path = mnt.join("base/rel");
    let mut f = File::create(&path).unwrap();
    f.write_all(&data).unwrap();
    f.sync_all().unwrap();
    drop(f);
    assert_eq!(std::fs::read(backing.join("base/rel")).unwrap(), data);

    // Rename and list, as the catalog's atomic rewrite does.
    std::fs::write(mnt.join("base/tmp"), b"catalog").unwrap();
    std::fs::rename(mnt.join("base/tmp"), mnt.join("catalog")).unwrap();
    assert_eq!(std::fs::read(backing.join("catalog")).unwrap(), b"catalog");
    let mut names: Vec<String> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["base", "catalog"]);
    std::fs::remove_file(mnt.join("catalog")).unwrap();
    assert!(!backing.join("catalog").exists());

    // Evict, then read blocks back through the page cache.
    let f = File::open(&path).unwrap();
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
    let mut block = vec![0u8; 8192];
    for b in [5u64, 40, 17] {
        f.read_exact_at(&mut block, b * 8192).unwrap();
        assert_eq!(block, data[b as usize * 8192..][..8192]);
    }

    // O_DIRECT: into 4 kB-aligned memory.
    let direct = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(&path)
        .unwrap();
    let mut space = vec![0u8; 3 * 8192];
    let at = space.as_ptr().align_offset(4096);
    let aligned = &mut space[at..at + 8192];
    direct.read_exact_at(aligned, 9 * 8192).unwrap();
    assert_eq!(aligned, &data[9 * 8192..10 * 8192]);
    drop((f, direct));

    let report = m.stop();
    // Counters: "unmounted; N reads ...". The three cached reads after the
    // eviction and the direct one had to reach the daemon.
    let reads: u64 = report
        .split("unmounted; ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no counters in {report:?}"));
    assert!(reads >= 4, "{report}");
}
