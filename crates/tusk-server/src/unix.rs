//! Unix-domain sockets, named and locked as PostgreSQL's are.
//!
//! In each of `unix_socket_directories` the server listens on
//! `.s.PGSQL.<port>` — the name libpq looks for (`psql -h /tmp -p 5432`) —
//! and holds a lock file beside it, `.s.PGSQL.<port>.lock`, holding its
//! process id:
//!
//! * the lock file is created exclusively, so two servers never take the
//!   same socket name; if it exists and names a live process, the second
//!   server refuses to start, naming the first;
//! * one left by a server that died (SIGKILL, a crash) names no live
//!   process: it and the socket file are removed and the name taken;
//! * a clean shutdown removes both ([`SocketFile`]'s `Drop`).
//!
//! A lock naming this very process is stale too (a crashed server's pid
//! given to its successor, as can happen in a container), unless this
//! process holds that socket itself: a process may run several servers.
//!
//! The socket file gets `unix_socket_permissions` as its mode, which is who
//! may connect: the kernel checks write access to the socket file.

use std::fs::{OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The socket files this process holds.
static HELD: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// A socket file and its lock file, removed when dropped.
#[derive(Debug)]
pub struct SocketFile {
    pub path: PathBuf,
    lock: PathBuf,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(&self.lock);
        held().retain(|p| *p != self.path);
    }
}

/// The socket's path for `port` in `dir`.
pub fn socket_path(dir: &Path, port: u16) -> PathBuf {
    dir.join(format!(".s.PGSQL.{port}"))
}

/// Whether process `pid` exists.
fn alive(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(p) => match rustix::process::test_kill_process(p) {
            Ok(()) => true,
            // It exists, but belongs to someone else.
            Err(e) => e == rustix::io::Errno::PERM,
        },
        None => false,
    }
}

/// Takes the lock file `lock`: created with our pid, or taken over from a
/// server that is gone (removing its socket file `path`).
fn take_lock(lock: &Path, path: &Path) -> Result<(), String> {
    let me = std::process::id();
    for _ in 0..2 {
        match OpenOptions::new().write(true).create_new(true).open(lock) {
            Ok(mut f) => {
                return writeln!(f, "{me}")
                    .and_then(|()| f.sync_all())
                    .map_err(|e| format!("could not write lock file \"{}\": {e}", lock.display()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(lock).unwrap_or_default();
                let owner = text
                    .lines()
                    .next()
                    .and_then(|l| l.trim().parse::<i32>().ok());
                let live = |p: i32| {
                    if p as u32 == me {
                        held().contains(&path.to_path_buf())
                    } else {
                        alive(p)
                    }
                };
                if let Some(pid) = owner.filter(|&p| live(p)) {
                    return Err(format!(
                        "lock file \"{}\" already exists\nHINT: Is another server (PID {pid}) using socket file \"{}\"?",
                        lock.display(),
                        path.display()
                    ));
                }
                // Left by a server that is gone.
                let _ = std::fs::remove_file(path);
                let _ = std::fs::remove_file(lock);
            }
            Err(e) => {
                return Err(format!(
                    "could not create lock file \"{}\": {e}",
                    lock.display()
                ))
            }
        }
    }
    Err(format!("could not create lock file \"{}\"", lock.display()))
}

/// Listens on `.s.PGSQL.<port>` in `dir` with access mode `mode`.
pub fn bind(dir: &Path, port: u16, mode: u32) -> Result<(UnixListener, SocketFile), String> {
    let path = socket_path(dir, port);
    let mut lock = path.clone().into_os_string();
    lock.push(".lock");
    let lock = PathBuf::from(lock);
    take_lock(&lock, &path)?;
    // From here on, dropping `file` gives the name back.
    held().push(path.clone());
    let file = SocketFile {
        path: path.clone(),
        lock,
    };
    let listener = UnixListener::bind(&path)
        .map_err(|e| format!("could not bind Unix socket \"{}\": {e}", path.display()))?;
    std::fs::set_permissions(&path, Permissions::from_mode(mode)).map_err(|e| {
        format!(
            "could not set permissions of file \"{}\": {e}",
            path.display()
        )
    })?;
    Ok((listener, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn lock_files_keep_a_second_server_out_and_are_taken_over_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let (l, file) = bind(dir.path(), 6543, 0o700).unwrap();
        let path = socket_path(dir.path(), 6543);
        assert_eq!(file.path, path);
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o700);
        let lock = dir.path().join(".s.PGSQL.6543.lock");
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap().trim(),
            std::process::id().to_string()
        );
        // Held by this process: refused.
        let e = bind(dir.path(), 6543, 0o700).unwrap_err();
        assert!(e.contains("already exists"), "{e}");
        // A lock naming a live process (pid 1) refuses the name ...
        drop((l, file));
        assert!(!path.exists() && !lock.exists());
        std::fs::write(&lock, "1\n").unwrap();
        let e = bind(dir.path(), 6543, 0o700).unwrap_err();
        assert!(
            e.contains("Is another server (PID 1) using socket file"),
            "{e}"
        );
        // ... one naming a process that is gone is taken over, socket and all,
        // as is one naming this process, which does not hold it.
        for stale in ["2147483646".to_string(), std::process::id().to_string()] {
            std::fs::write(&lock, format!("{stale}\n")).unwrap();
            std::fs::write(&path, "stale").unwrap();
            let (_l, _file) = bind(dir.path(), 6543, 0o777).unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o777);
        }
    }
}
