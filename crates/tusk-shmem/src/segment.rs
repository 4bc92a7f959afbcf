//! memfd-backed shared mappings. All `unsafe` of this crate lives here.

use crate::ShmemError;
use rustix::fs::{ftruncate, memfd_create, MemfdFlags};
use rustix::mm::{mmap, munmap, MapFlags, ProtFlags};
use std::os::fd::{AsRawFd, OwnedFd};

/// Size of a huge page on this platform (x86-64 default hugetlb size).
pub const HUGE_PAGE_SIZE: usize = 2 * 1024 * 1024;
const SMALL_PAGE_SIZE: usize = 4096;

/// The `huge_pages` setting, as in PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HugePages {
    Off,
    Try,
    On,
}

impl HugePages {
    pub fn parse(s: &str) -> Option<HugePages> {
        match s.to_ascii_lowercase().as_str() {
            "off" | "false" | "0" => Some(HugePages::Off),
            "try" => Some(HugePages::Try),
            "on" | "true" | "1" => Some(HugePages::On),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            HugePages::Off => "off",
            HugePages::Try => "try",
            HugePages::On => "on",
        }
    }
}

/// Huge pages a new segment could take now: `HugePages_Free - HugePages_Rsvd`
/// from `/proc/meminfo` (0 when the file cannot be read).
pub fn huge_pages_usable() -> usize {
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
        return 0;
    };
    let field = |name: &str| -> usize {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    field("HugePages_Free:").saturating_sub(field("HugePages_Rsvd:"))
}

/// A shared memory segment: a memfd and its `MAP_SHARED` mapping in this process.
pub struct Segment {
    fd: OwnedFd,
    ptr: *mut u8,
    len: usize,
    huge_pages: bool,
}

// SAFETY: the mapping is plain shared memory; all concurrent access to its
// contents goes through atomics or is otherwise synchronised by the structures
// placed in it, so the handle itself may move and be shared between threads.
unsafe impl Send for Segment {}
// SAFETY: see `Send`; `&Segment` only exposes the address and metadata.
unsafe impl Sync for Segment {}

impl Segment {
    /// Creates a zero-filled segment of at least `size` bytes.
    pub fn create(name: &str, size: usize, huge_pages: HugePages) -> Result<Segment, ShmemError> {
        if huge_pages != HugePages::Off {
            let len = size.div_ceil(HUGE_PAGE_SIZE) * HUGE_PAGE_SIZE;
            let needed = len / HUGE_PAGE_SIZE;
            let usable = huge_pages_usable();
            if usable >= needed {
                match Self::create_with(name, len, true) {
                    Ok(seg) => return Ok(seg),
                    Err(e) if huge_pages == HugePages::On => return Err(e),
                    Err(_) => {}
                }
            } else if huge_pages == HugePages::On {
                return Err(ShmemError::NotEnoughHugePages {
                    size,
                    needed,
                    usable,
                });
            }
        }
        let len = size.div_ceil(SMALL_PAGE_SIZE) * SMALL_PAGE_SIZE;
        Self::create_with(name, len, false)
    }

    fn create_with(name: &str, len: usize, huge: bool) -> Result<Segment, ShmemError> {
        let mut flags = MemfdFlags::CLOEXEC;
        if huge {
            flags |= MemfdFlags::HUGETLB | MemfdFlags::HUGE_2MB;
        }
        let create_err = |e: rustix::io::Errno| ShmemError::Create {
            size: len,
            source: e.into(),
        };
        let fd = memfd_create(name, flags).map_err(create_err)?;
        ftruncate(&fd, len as u64).map_err(create_err)?;
        let mut map_flags = MapFlags::SHARED;
        if huge {
            // Take the huge pages now, so that a short pool fails here rather
            // than with SIGBUS on first touch.
            map_flags |= MapFlags::POPULATE;
        }
        // SAFETY: a fresh shared mapping of a file we just sized to `len`;
        // no existing memory is affected.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                map_flags,
                &fd,
                0,
            )
        }
        .map_err(|e| ShmemError::Map {
            size: len,
            source: e.into(),
        })?;
        Ok(Segment {
            fd,
            ptr: ptr.cast(),
            len,
            huge_pages: huge,
        })
    }

    /// Base address of the mapping in this process.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the segment is backed by huge pages.
    pub fn huge_pages(&self) -> bool {
        self.huge_pages
    }

    /// The memfd, for another process to map (`/proc/PID/fd/N`).
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` describe the mapping created in `create_with`,
        // and every reference into it is tied to the lifetime of `self`.
        unsafe {
            let _ = munmap(self.ptr.cast(), self.len);
        }
    }
}
