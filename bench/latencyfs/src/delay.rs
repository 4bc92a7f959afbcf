//! The delay line: reads wait here until their latency has passed.
//!
//! Every read is answered `latency` after the kernel handed it over, however
//! many others are waiting: the device has latency but no queue limit of its
//! own (cloud block storage serves many requests at once). Because the
//! latency is the same for every read, deadlines come in arrival order, so a
//! FIFO is a priority queue here. A few worker threads take reads whose
//! deadline has passed, read the data from the backing file and reply; the
//! dispatch threads only enqueue, so they never sleep for a read.
//!
//! The backing read happens after the delay, so a read's service time is the
//! latency plus the backing file's own read time (microseconds when the
//! backing file is in the host's page cache, as it is in the benchmark).

use fuser::{Errno, ReplyData};
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Counters printed when the file system is unmounted.
#[derive(Default)]
pub struct Stats {
    pub reads: AtomicU64,
    pub read_bytes: AtomicU64,
    pub writes: AtomicU64,
    pub write_bytes: AtomicU64,
    /// Most reads waiting in the delay line at once.
    pub max_waiting: AtomicU64,
}

struct Pending {
    due: Instant,
    file: Arc<File>,
    offset: u64,
    size: u32,
    reply: ReplyData,
}

struct Queue {
    waiting: VecDeque<Pending>,
    stop: bool,
}

pub struct DelayLine {
    latency: Duration,
    queue: Mutex<Queue>,
    ready: Condvar,
    stats: Arc<Stats>,
}

impl DelayLine {
    /// Starts `workers` threads that answer reads once they are due.
    pub fn start(latency: Duration, workers: usize, stats: Arc<Stats>) -> Arc<DelayLine> {
        let line = Arc::new(DelayLine {
            latency,
            queue: Mutex::new(Queue {
                waiting: VecDeque::new(),
                stop: false,
            }),
            ready: Condvar::new(),
            stats,
        });
        for i in 0..workers.max(1) {
            let l = line.clone();
            std::thread::Builder::new()
                .name(format!("delay-{i}"))
                .spawn(move || l.work())
                .expect("could not start a delay worker");
        }
        line
    }

    /// Queues a read of `size` bytes at `offset` of `file`, answered after
    /// the latency.
    pub fn read(&self, file: Arc<File>, offset: u64, size: u32, reply: ReplyData) {
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        let due = Instant::now() + self.latency;
        let mut q = crate::lock(&self.queue);
        let was_empty = q.waiting.is_empty();
        q.waiting.push_back(Pending {
            due,
            file,
            offset,
            size,
            reply,
        });
        self.stats
            .max_waiting
            .fetch_max(q.waiting.len() as u64, Ordering::Relaxed);
        drop(q);
        // Workers sleep until the head's deadline; only a new head changes
        // what they wait for.
        if was_empty {
            self.ready.notify_one();
        }
    }

    /// Stops the workers; reads still waiting are answered with EIO when
    /// their replies are dropped.
    pub fn stop(&self) {
        let mut q = crate::lock(&self.queue);
        q.stop = true;
        q.waiting.clear();
        drop(q);
        self.ready.notify_all();
    }

    fn work(&self) {
        let mut buf = Vec::new();
        loop {
            let p = {
                let mut q = crate::lock(&self.queue);
                loop {
                    if q.stop {
                        return;
                    }
                    let now = Instant::now();
                    match q.waiting.front() {
                        None => q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner()),
                        Some(p) if p.due <= now => {
                            let p = q.waiting.pop_front().expect("front exists");
                            // Others may be due too: let another worker look.
                            if !q.waiting.is_empty() {
                                self.ready.notify_one();
                            }
                            break p;
                        }
                        Some(p) => {
                            let wait = p.due - now;
                            q = self
                                .ready
                                .wait_timeout(q, wait)
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                    }
                }
            };
            self.serve(p, &mut buf);
        }
    }

    fn serve(&self, p: Pending, buf: &mut Vec<u8>) {
        buf.resize(p.size as usize, 0);
        let mut done = 0;
        // Read what the file has (a short read at its end is not an error).
        while done < buf.len() {
            match p.file.read_at(&mut buf[done..], p.offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    p.reply.error(Errno::from(e));
                    return;
                }
            }
        }
        self.stats
            .read_bytes
            .fetch_add(done as u64, Ordering::Relaxed);
        p.reply.data(&buf[..done]);
    }
}
