//! A minimal io_uring ring for asynchronous block reads.
//!
//! io_uring is two queues shared between the process and the kernel, both
//! mapped from the ring's file descriptor:
//!
//! * the *submission queue* (SQ): an array of 64-byte submission entries
//!   (SQEs) plus a ring of indexes into it. We fill an SQE (read `len` bytes
//!   at `offset` of file `fd` into `addr`, tagged with a `user_data` word),
//!   put its index at `tail & mask` and advance `tail` with a release store.
//!   The kernel consumes entries from `head` when we call `io_uring_enter`.
//! * the *completion queue* (CQ): a ring of 16-byte completion entries
//!   (CQEs) that the kernel appends to (advancing `tail`, which we read with
//!   acquire) and we consume (advancing `head` with a release store), each
//!   carrying the request's `user_data` and its result (bytes read, or a
//!   negative errno).
//!
//! This module is the only place that touches those mappings, and all of its
//! `unsafe` is here. It knows nothing about buffers: [`Ring::prepare_read`]
//! is `unsafe` because the caller promises that the destination memory stays
//! valid and untouched until the request's completion has been reaped. A
//! dropped ring first waits for every request it submitted, so a caller that
//! keeps its destinations alive as long as the ring never has memory written
//! behind its back.
//!
//! Two setup choices cut the CPU each read costs, which on a 2-core machine
//! is CPU taken from redo:
//!
//! * *Cooperative task running* (`IORING_SETUP_COOP_TASKRUN`, Linux 5.19):
//!   a read's completion is posted to the CQ by "task work" that runs in
//!   our thread. By default the kernel interrupts the thread to run it at
//!   once (an inter-processor interrupt when the device's interrupt arrived
//!   on the other CPU, which in a VM is a VM exit); cooperatively it runs
//!   at our next system call instead, and `IORING_SETUP_TASKRUN_FLAG` sets
//!   `IORING_SQ_TASKRUN` in the SQ flags while some is pending, so that
//!   [`Ring::pop`] enters the kernel to run it when it finds the CQ empty.
//!   Kernels without these flags get a ring without them.
//! * *Fixed buffers* ([`Ring::register_buffers`], `IORING_OP_READ_FIXED`):
//!   the destination memory is registered once, the kernel pins its pages
//!   then, and a read names the buffer by index instead of having the
//!   kernel look up and pin the destination pages on every `O_DIRECT` read
//!   (`get_user_pages`, a tenth of the redo thread's CPU in the recovery
//!   benchmark).
//!
//! Availability is decided at run time ([`Ring::new`] fails where the kernel
//! lacks io_uring or refuses it — seccomp, `kernel.io_uring_disabled`);
//! callers fall back to another method then.
//!
//! The ring is used by one thread (recovery's redo loop), so the queue
//! indexes we own (`sq tail`, `cq head`) are only ever written by us; the
//! acquire/release pairs order our SQE writes before the kernel sees the new
//! tail, and the kernel's CQE writes before we read them.

use rustix::io_uring::{
    io_uring_cqe, io_uring_enter, io_uring_params, io_uring_ptr, io_uring_register, io_uring_setup,
    io_uring_sqe, io_uring_user_data, iovec, IoringEnterFlags, IoringFeatureFlags, IoringOp,
    IoringRegisterOp, IoringSetupFlags, IoringSqFlags, IORING_OFF_CQ_RING, IORING_OFF_SQES,
    IORING_OFF_SQ_RING,
};
use rustix::mm::{MapFlags, ProtFlags};
use std::ffi::c_void;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// A finished request: its `user_data` and the kernel's result (bytes
/// transferred, or an error).
#[derive(Debug)]
pub struct Completion {
    pub user_data: u64,
    pub result: io::Result<usize>,
}

/// One `mmap` of the ring fd, unmapped on drop.
struct Mapping {
    ptr: *mut c_void,
    len: usize,
}

impl Mapping {
    fn new(fd: &OwnedFd, len: usize, offset: u64) -> io::Result<Mapping> {
        // SAFETY: a fresh shared mapping chosen by the kernel (null hint),
        // of the size the kernel told us for this ring region; it aliases no
        // Rust object.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::POPULATE,
                fd,
                offset,
            )
        }?;
        Ok(Mapping { ptr, len })
    }

    /// The address `offset` bytes into the mapping.
    fn at<T>(&self, offset: u32) -> *mut T {
        assert!(offset as usize + std::mem::size_of::<T>() <= self.len);
        // SAFETY: checked above to stay inside the mapping.
        unsafe { self.ptr.cast::<u8>().add(offset as usize).cast::<T>() }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr/len` is a mapping we made and nobody uses any more
        // (the ring that holds the pointers into it is being dropped).
        let _ = unsafe { rustix::mm::munmap(self.ptr, self.len) };
    }
}

/// An io_uring instance with its queues mapped.
pub struct Ring {
    // The mappings are only held to keep the pointers below valid. Field
    // order matters for drop: they are unmapped before the fd is closed.
    _sq_map: Mapping,
    _cq_map: Option<Mapping>,
    _sqe_map: Mapping,
    fd: OwnedFd,
    sq_tail: *const AtomicU32,
    sq_mask: u32,
    sq_entries: u32,
    sq_array: *mut u32,
    sqes: *mut io_uring_sqe,
    cq_head: *const AtomicU32,
    cq_tail: *const AtomicU32,
    cq_mask: u32,
    cq_entries: u32,
    cqes: *const io_uring_cqe,
    /// The SQ flags word (`IORING_SQ_TASKRUN`), written by the kernel.
    sq_flags: *const AtomicU32,
    /// Whether completions are posted cooperatively (see the module doc).
    coop: bool,
    /// Base and length of each registered buffer, by index.
    fixed: Vec<(usize, usize)>,
    /// Entries placed in the SQ but not yet handed to the kernel.
    unsubmitted: u32,
    /// Requests handed to the kernel whose completion was not reaped.
    in_flight: u32,
}

impl Ring {
    /// Sets up a ring with room for `entries` requests (rounded up to a
    /// power of two by the kernel). Fails if the kernel has no io_uring or
    /// refuses it.
    pub fn new(entries: u32) -> io::Result<Ring> {
        let setup = |flags: IoringSetupFlags| {
            let mut params = io_uring_params::default();
            params.flags = flags;
            // SAFETY: `params` is a valid parameter block; none of these
            // flags asks the kernel to read anything else.
            unsafe { io_uring_setup(entries.max(1), &mut params) }.map(|fd| (fd, params))
        };
        let coop_flags = IoringSetupFlags::COOP_TASKRUN | IoringSetupFlags::TASKRUN_FLAG;
        let (fd, params, coop) = match setup(coop_flags) {
            Ok((fd, params)) => (fd, params, true),
            // Kernels before 5.19 refuse the flags: a plain ring then.
            Err(rustix::io::Errno::INVAL) => {
                let (fd, params) = setup(IoringSetupFlags::empty())?;
                (fd, params, false)
            }
            Err(e) => return Err(e.into()),
        };
        let sq = params.sq_off;
        let cq = params.cq_off;
        let sq_len = sq.array as usize + params.sq_entries as usize * 4;
        let cq_len =
            cq.cqes as usize + params.cq_entries as usize * std::mem::size_of::<io_uring_cqe>();
        let single = params.features.contains(IoringFeatureFlags::SINGLE_MMAP);
        let sq_map = Mapping::new(
            &fd,
            if single { sq_len.max(cq_len) } else { sq_len },
            IORING_OFF_SQ_RING,
        )?;
        let cq_map = if single {
            None
        } else {
            Some(Mapping::new(&fd, cq_len, IORING_OFF_CQ_RING)?)
        };
        let sqe_map = Mapping::new(
            &fd,
            params.sq_entries as usize * std::mem::size_of::<io_uring_sqe>(),
            IORING_OFF_SQES,
        )?;
        let cqm = cq_map.as_ref().unwrap_or(&sq_map);
        // SAFETY: the kernel wrote `ring_mask` and `ring_entries` at these
        // offsets before `io_uring_setup` returned; `at` checked the bounds.
        let (sq_mask, cq_mask) = unsafe {
            (
                *sq_map.at::<u32>(sq.ring_mask),
                *cqm.at::<u32>(cq.ring_mask),
            )
        };
        assert!(sq_mask + 1 == params.sq_entries && cq_mask + 1 == params.cq_entries);
        Ok(Ring {
            sq_tail: sq_map.at(sq.tail),
            sq_array: sq_map.at(sq.array),
            sq_mask,
            sq_entries: params.sq_entries,
            sqes: sqe_map.at(0),
            cq_head: cqm.at(cq.head),
            cq_tail: cqm.at(cq.tail),
            cqes: cqm.at(cq.cqes),
            cq_mask,
            cq_entries: params.cq_entries,
            sq_flags: sq_map.at(sq.flags),
            coop,
            fixed: Vec::new(),
            _sq_map: sq_map,
            _cq_map: cq_map,
            _sqe_map: sqe_map,
            fd,
            unsubmitted: 0,
            in_flight: 0,
        })
    }

    /// Whether this kernel lets us use io_uring (asked once per process).
    pub fn available() -> bool {
        static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVAILABLE.get_or_init(|| Ring::new(2).is_ok())
    }

    /// Requests placed or in flight whose completion has not been reaped.
    pub fn pending(&self) -> u32 {
        self.unsubmitted + self.in_flight
    }

    /// Requests placed but not yet handed to the kernel.
    pub fn unsubmitted(&self) -> u32 {
        self.unsubmitted
    }

    /// How many more requests can be placed now.
    pub fn room(&self) -> u32 {
        // Never more outstanding than the CQ holds, so no completion is dropped.
        (self.sq_entries - self.unsubmitted).min(self.cq_entries - self.pending())
    }

    fn atomic(&self, p: *const AtomicU32) -> &AtomicU32 {
        // SAFETY: `p` points at an aligned u32 ring index inside a mapping
        // that lives as long as `self`; the kernel accesses it atomically.
        unsafe { &*p }
    }

    /// Registers `regions` (address, length) as the ring's fixed buffers,
    /// numbered in order; [`Ring::fixed_buffer`] then finds the one that
    /// holds a destination. The kernel pins their pages until the ring is
    /// dropped. Fails (registering nothing) where the kernel refuses, e.g.
    /// beyond `RLIMIT_MEMLOCK`, or if buffers are registered already;
    /// plain reads keep working then.
    ///
    /// # Safety
    ///
    /// Each region must be mapped, writable memory that stays mapped as
    /// long as the ring lives.
    pub unsafe fn register_buffers(&mut self, regions: &[(*mut u8, usize)]) -> io::Result<()> {
        if !self.fixed.is_empty() {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        let iovecs: Vec<iovec> = regions
            .iter()
            .map(|&(base, len)| iovec {
                iov_base: base.cast(),
                iov_len: len,
            })
            .collect();
        // SAFETY: `iovecs` is a live array of `regions.len()` iovecs, which
        // the kernel copies during the call; the caller vouches that the
        // memory they describe stays mapped while the ring lives.
        unsafe {
            io_uring_register(
                &self.fd,
                IoringRegisterOp::RegisterBuffers,
                iovecs.as_ptr().cast(),
                iovecs.len() as u32,
            )
        }?;
        self.fixed = regions.iter().map(|&(b, l)| (b as usize, l)).collect();
        Ok(())
    }

    /// The index of the registered buffer that holds `len` bytes at `buf`.
    pub fn fixed_buffer(&self, buf: *const u8, len: usize) -> Option<u16> {
        let a = buf as usize;
        self.fixed
            .iter()
            .position(|&(base, l)| a >= base && a + len <= base + l)
            .and_then(|i| u16::try_from(i).ok())
    }

    /// Places a read of `len` bytes at `offset` of `fd` into `buf`, tagged
    /// `user_data`; it starts at the next [`Ring::submit`]. When `buf` lies
    /// in a registered buffer the read names it (`READ_FIXED`) and the
    /// kernel skips pinning the destination. Returns false (placing
    /// nothing) when the ring is full.
    ///
    /// # Safety
    ///
    /// `buf` must be valid for writes of `len` bytes, and neither read nor
    /// written by anyone else, until this request's completion has been
    /// returned by [`Ring::pop`] / [`Ring::wait`] or the ring is dropped
    /// (drop waits for it). `fd` must stay open until then.
    pub unsafe fn prepare_read(
        &mut self,
        fd: BorrowedFd<'_>,
        buf: *mut u8,
        len: u32,
        offset: u64,
        user_data: u64,
    ) -> bool {
        use std::os::fd::AsRawFd;
        if self.room() == 0 {
            return false;
        }
        let fixed = self.fixed_buffer(buf, len as usize);
        let tail = self.atomic(self.sq_tail).load(Ordering::Relaxed);
        let idx = tail & self.sq_mask;
        // SAFETY: `idx <= sq_mask`, so the SQE and the array slot lie inside
        // their mappings; the kernel does not read slots between its head and
        // our tail until we publish the new tail below. An all-zero SQE is a
        // valid NOP (opcode 0, no flags) that we then fill in. A fixed read's
        // destination lies inside its registered buffer (`fixed_buffer`).
        unsafe {
            let sqe = self.sqes.add(idx as usize);
            std::ptr::write_bytes(sqe, 0, 1);
            (*sqe).opcode = if fixed.is_some() {
                IoringOp::ReadFixed
            } else {
                IoringOp::Read
            };
            (*sqe).fd = fd.as_raw_fd();
            (*sqe).off_or_addr2.off = offset;
            (*sqe).addr_or_splice_off_in.addr = io_uring_ptr::new(buf.cast());
            (*sqe).len.len = len;
            (*sqe).user_data = io_uring_user_data::from_u64(user_data);
            (*sqe).buf.buf_index = fixed.unwrap_or(0);
            *self.sq_array.add(idx as usize) = idx;
        }
        self.atomic(self.sq_tail)
            .store(tail.wrapping_add(1), Ordering::Release);
        self.unsubmitted += 1;
        true
    }

    /// `io_uring_enter`: submits up to `to_submit` placed entries and, with
    /// `getevents`, runs pending completion work and waits for
    /// `min_complete` completions.
    fn enter(&mut self, to_submit: u32, min_complete: u32, getevents: bool) -> io::Result<()> {
        let flags = if getevents {
            IoringEnterFlags::GETEVENTS
        } else {
            IoringEnterFlags::empty()
        };
        loop {
            // SAFETY: no extended argument; the SQEs we submit point at
            // memory our callers vouched for in `prepare_read`.
            match unsafe { io_uring_enter(&self.fd, to_submit, min_complete, flags) } {
                Ok(n) => {
                    self.unsubmitted -= n.min(self.unsubmitted);
                    self.in_flight += n;
                    return Ok(());
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Hands every placed request to the kernel.
    pub fn submit(&mut self) -> io::Result<()> {
        if self.unsubmitted == 0 {
            return Ok(());
        }
        self.enter(self.unsubmitted, 0, false)
    }

    /// Takes the next completion if one is ready.
    pub fn pop(&mut self) -> Option<Completion> {
        let head = self.atomic(self.cq_head).load(Ordering::Relaxed);
        let mut tail = self.atomic(self.cq_tail).load(Ordering::Acquire);
        if head == tail && self.coop && self.in_flight > 0 {
            // Completions may be waiting for us to run their task work.
            let pending = self.atomic(self.sq_flags).load(Ordering::Acquire);
            if pending & IoringSqFlags::TASKRUN.bits() != 0 && self.enter(0, 0, true).is_ok() {
                tail = self.atomic(self.cq_tail).load(Ordering::Acquire);
            }
        }
        if head == tail {
            return None;
        }
        // SAFETY: entries between head and tail were written by the kernel
        // before it published `tail` (acquire above); the index is masked
        // into the CQE array.
        let (user_data, res) = unsafe {
            let cqe = self.cqes.add((head & self.cq_mask) as usize);
            ((*cqe).user_data.u64_(), (*cqe).res)
        };
        self.atomic(self.cq_head)
            .store(head.wrapping_add(1), Ordering::Release);
        self.in_flight -= 1;
        let result = if res < 0 {
            Err(io::Error::from_raw_os_error(-res))
        } else {
            Ok(res as usize)
        };
        Some(Completion { user_data, result })
    }

    /// Submits what is placed and waits for the next completion. `None`
    /// when nothing is outstanding.
    pub fn wait(&mut self) -> io::Result<Option<Completion>> {
        loop {
            if let Some(c) = self.pop() {
                return Ok(Some(c));
            }
            if self.pending() == 0 {
                return Ok(None);
            }
            self.enter(self.unsubmitted, 1, true)?;
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // The kernel may still write into the destinations of requests in
        // flight: wait for all of them before the memory can be reused.
        while self.pending() > 0 {
            match self.wait() {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }
}

// The ring is owned and driven by one thread at a time; moving it to another
// thread is fine (nothing in it is tied to the creating thread).
// SAFETY: the raw pointers point into mappings owned by the ring itself.
unsafe impl Send for Ring {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn reads_blocks_of_a_file() {
        let Ok(mut ring) = Ring::new(8) else {
            eprintln!("io_uring not available here; skipping");
            return;
        };
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..4 * 8192)
            .map(|i| (i / 8192 * 7 + i % 251) as u8)
            .collect();
        f.write_all(&data).unwrap();
        let mut bufs = vec![vec![0u8; 8192]; 4];
        for (i, b) in bufs.iter_mut().enumerate().rev() {
            // SAFETY: each buffer outlives the ring's use of it: we reap
            // every completion below before reading or dropping `bufs`.
            let placed = unsafe {
                ring.prepare_read(f.as_fd(), b.as_mut_ptr(), 8192, i as u64 * 8192, i as u64)
            };
            assert!(placed);
        }
        ring.submit().unwrap();
        let mut seen = [false; 4];
        while let Some(c) = ring.wait().unwrap() {
            assert_eq!(c.result.unwrap(), 8192);
            seen[c.user_data as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
        for (i, b) in bufs.iter().enumerate() {
            assert_eq!(&b[..], &data[i * 8192..(i + 1) * 8192]);
        }
        // A read past the end of the file completes with 0 bytes.
        let mut b = vec![0u8; 8192];
        // SAFETY: `b` lives until the completion is reaped below.
        unsafe { ring.prepare_read(f.as_fd(), b.as_mut_ptr(), 8192, 1 << 20, 9) };
        let c = ring.wait().unwrap().unwrap();
        assert_eq!((c.user_data, c.result.unwrap()), (9, 0));
    }

    #[test]
    fn reads_into_registered_buffers() {
        let Ok(mut ring) = Ring::new(4) else {
            return;
        };
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..3 * 4096).map(|i| (i % 253) as u8).collect();
        f.write_all(&data).unwrap();
        let mut mem = vec![0u8; 4 * 4096];
        let base = mem.as_mut_ptr();
        // SAFETY: `mem` outlives the ring (dropped below, before `mem`).
        if unsafe { ring.register_buffers(&[(base, 2 * 4096)]) }.is_err() {
            eprintln!("fixed buffers refused here (RLIMIT_MEMLOCK?); skipping");
            return;
        }
        // SAFETY: as above; each read has its own 4 kB of `mem`.
        let second = unsafe { ring.register_buffers(&[(base, 4096)]) };
        assert!(second.is_err(), "buffers are registered once");
        assert_eq!(ring.fixed_buffer(base, 4096), Some(0));
        // SAFETY: `base + 4096 .. base + 8192` lies inside `mem`.
        assert_eq!(ring.fixed_buffer(unsafe { base.add(4096) }, 4097), None);
        for i in 0..3 {
            // SAFETY: reads into disjoint 4 kB of `mem`, reaped below; the
            // third lies outside the registered buffer (a plain read).
            let placed = unsafe {
                ring.prepare_read(
                    f.as_fd(),
                    base.add(i * 4096),
                    4096,
                    i as u64 * 4096,
                    i as u64,
                )
            };
            assert!(placed);
        }
        ring.submit().unwrap();
        while let Some(c) = ring.wait().unwrap() {
            assert_eq!(c.result.unwrap(), 4096, "read {}", c.user_data);
        }
        drop(ring);
        assert_eq!(&mem[..3 * 4096], &data[..]);
    }

    #[test]
    fn ring_reports_full() {
        let Ok(mut ring) = Ring::new(2) else {
            return;
        };
        let f = tempfile::tempfile().unwrap();
        let mut b = vec![0u8; 64];
        let mut placed = 0;
        // SAFETY: zero-length reads into `b`, which outlives the ring.
        while unsafe { ring.prepare_read(f.as_fd(), b.as_mut_ptr(), 0, 0, placed) } {
            placed += 1;
            assert!(placed <= 64, "ring never reports full");
        }
        assert!(placed >= 2);
        drop(ring);
        b[0] = 1;
    }
}
