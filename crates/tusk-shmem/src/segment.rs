//! memfd-backed shared mappings. All `unsafe` of this crate lives here.

use crate::ShmemError;
use rustix::fs::{ftruncate, memfd_create, MemfdFlags};
use rustix::mm::{mmap, munmap, MapFlags, ProtFlags};
use std::os::fd::{AsRawFd, OwnedFd};

/// Size of a huge page on this platform (x86-64 default hugetlb size).
pub const HUGE_PAGE_SIZE: usize = 2 * 1024 * 1024;
pub const SMALL_PAGE_SIZE: usize = 4096;

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
    /// The whole mapping (page aligned), for `munmap`.
    map: *mut u8,
    map_len: usize,
    /// The segment's bytes: `map` plus the sub-page part of the file offset.
    ptr: *mut u8,
    len: usize,
    huge_pages: bool,
}

/// What another process needs to map a segment (or a part of one):
/// `/proc/{pid}/fd/{fd}` from `offset`, `len` bytes, whose file uses pages of
/// `page_size` bytes (mapping offsets must be multiples of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttachInfo {
    pub pid: u32,
    pub fd: i32,
    pub offset: usize,
    pub len: usize,
    pub page_size: usize,
}

impl AttachInfo {
    /// The path through which another process opens the memfd.
    pub fn proc_path(&self) -> std::path::PathBuf {
        format!("/proc/{}/fd/{}", self.pid, self.fd).into()
    }

    /// A single-line text form (`pid:fd:offset:len:page_size`), handy for
    /// passing through an environment variable or a pipe.
    pub fn encode(&self) -> String {
        format!(
            "{}:{}:{}:{}:{}",
            self.pid, self.fd, self.offset, self.len, self.page_size
        )
    }

    pub fn decode(s: &str) -> Option<AttachInfo> {
        let mut it = s.split(':').map(|x| x.parse::<u64>().ok());
        let mut next = || it.next().flatten();
        Some(AttachInfo {
            pid: next()? as u32,
            fd: next()? as i32,
            offset: next()? as usize,
            len: next()? as usize,
            page_size: next()? as usize,
        })
    }
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
            map: ptr.cast(),
            map_len: len,
            ptr: ptr.cast(),
            len,
            huge_pages: huge,
        })
    }

    /// Maps a segment that another process (or this one) created, from the
    /// description it published. The bytes are the same; the address is new.
    pub fn attach(info: &AttachInfo) -> Result<Segment, ShmemError> {
        let map_err = |e: std::io::Error| ShmemError::Map {
            size: info.len,
            source: e,
        };
        if !info.page_size.is_power_of_two() || info.len == 0 {
            return Err(map_err(std::io::ErrorKind::InvalidInput.into()));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(info.proc_path())
            .map_err(map_err)?;
        let fd = OwnedFd::from(file);
        let start = info.offset & !(info.page_size - 1);
        let skip = info.offset - start;
        let map_len = (skip + info.len).div_ceil(info.page_size) * info.page_size;
        // SAFETY: a fresh shared mapping of an existing file; no memory of
        // this process is affected, and the kernel checks the range.
        let map = unsafe {
            mmap(
                std::ptr::null_mut(),
                map_len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                &fd,
                start as u64,
            )
        }
        .map_err(|e| map_err(e.into()))?;
        let map: *mut u8 = map.cast();
        Ok(Segment {
            fd,
            map,
            map_len,
            // `skip < page_size <= map_len`, so this stays inside the mapping.
            ptr: map.wrapping_add(skip),
            len: info.len,
            huge_pages: info.page_size == HUGE_PAGE_SIZE,
        })
    }

    /// How another process maps `len` bytes of this segment from `offset`.
    pub fn attach_info(&self, offset: usize, len: usize) -> AttachInfo {
        assert!(offset + len <= self.len);
        AttachInfo {
            pid: std::process::id(),
            fd: self.raw_fd(),
            offset,
            len,
            page_size: self.page_size(),
        }
    }

    /// Size of the pages backing the segment.
    pub fn page_size(&self) -> usize {
        if self.huge_pages {
            HUGE_PAGE_SIZE
        } else {
            SMALL_PAGE_SIZE
        }
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
        // SAFETY: `map`/`map_len` describe the mapping created in
        // `create_with` or `attach`, and every reference into it is tied to
        // the lifetime of `self`.
        unsafe {
            let _ = munmap(self.map.cast(), self.map_len);
        }
    }
}
