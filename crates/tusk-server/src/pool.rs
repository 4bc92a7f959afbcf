//! The session pool: idle sessions wait in one `epoll` set, and whichever
//! pool thread is free serves the next session that has a message.
//!
//! ## Why
//!
//! With a thread per session, as PostgreSQL has a process per backend,
//! every query puts the session's thread to sleep once it has answered and
//! wakes it when the next query arrives: a context switch in and out per
//! query, which on `pgbench -S` costs about as much kernel time as the
//! query's own system calls. When many sessions are busy, a thread that has
//! just answered one of them usually finds another one's query already
//! waiting; serving it on the same thread costs no switch at all.
//!
//! ## When it pays, and why it is off by default
//!
//! Measured with `pgbench -S -c 8 -j 2` against `tusk serve` on a 2-core
//! machine (10 s runs), the pool with 2 seats gave 60k-76k tps where a
//! thread per session gave 47k-62k while other jobs kept the machine busy
//! (load 7-11): fewer runnable threads, half the context switches per
//! query. On the same machine idle it gave 81k-85k against 92k-100k:
//! pgbench runs on the same two cores, and seated threads that never sleep
//! leave its threads waiting for the scheduler, where a session thread that
//! sleeps after each answer hands the core over at once. With 4 seats the
//! idle machine gave 97k, on par. So the pool is for servers whose clients
//! run elsewhere, or that are oversubscribed; it is off unless
//! `tusk.session_pool_seats` is set.
//!
//! ## How
//!
//! A session starts on its connection's own thread (TLS handshake,
//! startup, authentication). From then on, whenever no whole message is
//! waiting and the session is *movable* ([`Backend::movable`]: a plain
//! socket, no portal in the middle of its rows), it is *parked*: put in its
//! slot of the `parked` table (the slot number is its `epoll` token; a
//! session keeps its slot until it ends) and its socket armed in the `epoll` set with
//! `EPOLLONESHOT`, so that exactly one `epoll_wait` reports it and nothing
//! reports it again until it is parked again. The connection's thread then
//! joins the pool. A pool thread loop:
//!
//! 1. takes a *seat* (below), waiting on `standby` while none is free;
//! 2. waits in `epoll_wait` for one ready session and takes it out of
//!    `parked`;
//! 3. serves it ([`Backend::serve`]) until it is idle again (parks it) or
//!    over (unregisters and drops it);
//! 4. gives its seat back, and leaves the pool if the pool has more threads
//!    than sessions.
//!
//! A session's `random()` generator state travels with it (it is a
//! per-thread value in the executor). Everything else a parked session owns
//! is `Send` except the executor state of a portal in the middle of its
//! rows, which [`Backend::movable`] rules out (see [`Movable`]).
//!
//! ## Seats, stalls and why nothing waits forever
//!
//! At most `seats` threads (`tusk.session_pool_seats`) wait in `epoll_wait` or
//! serve a session at once; the others stand by. With more, every ready
//! session would wake a thread of its own and the switches would be back.
//! A thread serving a session may block for long. Where storage knows it
//! is about to wait (a heavyweight lock, the WAL flush at commit:
//! `tusk_storage::wait_event`), the thread gives its seat to a standby
//! thread at once. Other waits it cannot announce: a client that reads its
//! result slowly, a long query, a page read. For those, the *monitor* thread
//! counts ticks (every 2 ms while the pool is busy, every 100 ms
//! once it has been quiet for a second), and a thread that has held its seat
//! through two ticks is *stalled*: its seat is taken from it and given to a
//! standby thread. Since the pool keeps at least one thread per session
//! (`threads >= sessions`: a thread leaves only while there are more
//! threads than sessions), a standby thread exists whenever a session is
//! parked and every seated thread is stalled, so a ready session waits at
//! most a few ticks for a thread, even when other sessions wait on locks
//! that it holds.

use crate::registry::{Admission, ConnectionGuard};
use crate::session::{Backend, Served};
use rustix::event::epoll;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tusk_exec::func::{put_generator, take_generator, GeneratorState};
use tusk_storage::wait_event;

/// Monitor tick while sessions are being served.
const BUSY_TICK: Duration = Duration::from_millis(2);
/// Monitor tick once the pool has been quiet for [`QUIET_AFTER`] ticks.
const QUIET_TICK: Duration = Duration::from_millis(100);
const QUIET_AFTER: u64 = 500;

/// A session past its startup: protocol state and its place in the
/// registry.
pub struct Started {
    pub backend: Backend<tusk_sql::Session>,
    pub admission: Admission,
}

/// A session and what goes with it between threads.
struct Parked {
    started: Started,
    /// Counts the connection in the registry until the session is dropped.
    _connection: ConnectionGuard,
    generator: GeneratorState,
    /// A descriptor of the session's socket, as registered in the `epoll`
    /// set (shared so that arming it needs no borrow of the session).
    socket: Arc<OwnedFd>,
    /// Whether `socket` is in the `epoll` set yet.
    registered: bool,
    /// Its slot in [`SessionPool::parked`], and its `epoll` token.
    slot: usize,
}

/// Parked sessions by slot, and the free slots.
#[derive(Default)]
struct Slots {
    parked: Vec<Option<Movable>>,
    free: Vec<usize>,
}

/// A parked session on its way to another thread.
struct Movable(Box<Parked>);

// SAFETY: a `Movable` is made only by `SessionPool::park` from a session
// that `Backend::movable` accepted. Of what a `Parked` holds, the
// compiler proves `tusk_sql::Session`, `Conn`, the registry handles and
// the prepared statements `Send`; what it cannot is the backend's portal
// table, whose type mentions the executor's row streams (`Rc`-shared
// operator state confined to the thread that runs it). `movable` has
// checked that no portal holds one: the remaining portals are bound but
// unstarted, finished, or hold rendered text rows, all plain owned data and
// `Arc`s. So moving the whole value to another thread moves no
// thread-confined state.
unsafe impl Send for Movable {}

#[derive(Default)]
struct Seats {
    /// Threads in the pool.
    threads: usize,
    /// Sessions in the pool: parked or being served by a pool thread.
    sessions: usize,
    /// Threads seated in `epoll_wait`.
    waiting: usize,
    /// Threads seated while serving a session: (pool thread id, the tick at
    /// which it took the session); at most `seat_count` entries.
    serving: Vec<(u64, u64)>,
    next_thread: u64,
    tick: u64,
    monitor_running: bool,
}

impl Seats {
    fn taken(&self) -> usize {
        self.waiting + self.serving.len()
    }

    /// Thread `me` gives up its seat; `false` if it had none (the monitor
    /// took it).
    fn unseat(&mut self, me: u64) -> bool {
        match self.serving.iter().position(|&(t, _)| t == me) {
            Some(i) => {
                self.serving.swap_remove(i);
                true
            }
            None => false,
        }
    }
}

impl Slots {
    /// A slot for a session joining the pool.
    fn claim(&mut self) -> usize {
        self.free.pop().unwrap_or_else(|| {
            self.parked.push(None);
            self.parked.len() - 1
        })
    }
}

/// Idle sessions and the threads that serve them (see the module doc).
pub struct SessionPool {
    epoll: OwnedFd,
    parked: Mutex<Slots>,
    seats: Mutex<Seats>,
    standby: Condvar,
    seat_count: usize,
    /// Sessions taken up so far (the monitor's measure of activity).
    served: AtomicU64,
}

impl SessionPool {
    /// A pool with `seats` seats (0: no pool, every session keeps its
    /// connection's thread).
    pub fn new(seat_count: usize) -> std::io::Result<Arc<SessionPool>> {
        Ok(Arc::new(SessionPool {
            epoll: epoll::create(epoll::CreateFlags::CLOEXEC)?,
            parked: Mutex::new(Slots::default()),
            seats: Mutex::new(Seats::default()),
            standby: Condvar::new(),
            seat_count,
            served: AtomicU64::new(0),
        }))
    }

    fn seats(&self) -> MutexGuard<'_, Seats> {
        self.seats.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Serves a session that has just started, on its connection's thread.
    /// When it first goes idle, the thread hands it to the pool and works
    /// as a pool thread for as long as the pool needs it.
    ///
    /// (`connection` comes first so that on the early returns, where the
    /// arguments are dropped in reverse order, the session is gone before
    /// the registry stops counting its connection: shutdown's checkpoint
    /// waits for that.)
    pub fn serve(self: &Arc<Self>, connection: ConnectionGuard, mut started: Started) {
        if self.seat_count == 0 {
            started.backend.run();
            return;
        }
        if started.backend.serve(false, true) == Served::Ended {
            return;
        }
        // `serve` goes idle only on a plain socket. Without a descriptor
        // for `epoll` (out of descriptors), the session stays here.
        let Some(Ok(socket)) = started.backend.socket().map(|fd| fd.try_clone_to_owned()) else {
            started.backend.run();
            return;
        };
        let parked = Box::new(Parked {
            started,
            _connection: connection,
            generator: take_generator(),
            socket: Arc::new(socket),
            registered: false,
            slot: self.parked().claim(),
        });
        let me = {
            let mut s = self.seats();
            s.threads += 1;
            s.sessions += 1;
            s.next_thread += 1;
            if !s.monitor_running {
                s.monitor_running = true;
                let pool = self.clone();
                if std::thread::Builder::new()
                    .name("tusk session pool monitor".into())
                    .spawn(move || pool.monitor())
                    .is_err()
                {
                    // Without a monitor a stall is never relieved: give
                    // every thread a seat instead.
                    s.monitor_running = false;
                }
            }
            s.next_thread
        };
        if let Err(p) = self.park(parked) {
            self.serve_here(p);
            self.leave_after_end();
            return;
        }
        self.work(me);
    }

    /// A session that could not be parked ends on the thread that has it,
    /// which holds no seat meanwhile.
    fn serve_here(&self, mut p: Box<Parked>) {
        put_generator(p.generator);
        p.started.backend.run();
        self.retire(p);
    }

    /// Parks an idle session; gives it back if its socket could not be
    /// armed (`epoll_ctl` failed: out of memory, say).
    fn park(&self, mut p: Box<Parked>) -> Result<(), Box<Parked>> {
        let token = p.slot;
        let flags = epoll::EventFlags::IN | epoll::EventFlags::RDHUP | epoll::EventFlags::ONESHOT;
        let data = epoll::EventData::new_u64(token as u64);
        let registered = std::mem::replace(&mut p.registered, true);
        let socket = p.socket.clone();
        // Parked before it is armed: the thread that `epoll_wait` hands the
        // token to must find it.
        {
            let mut slots = self.parked();
            debug_assert!(slots.parked[token].is_none(), "slot {token} is taken");
            slots.parked[token] = Some(Movable(p));
        }
        let armed = if registered {
            epoll::modify(&self.epoll, &*socket, data, flags)
        } else {
            epoll::add(&self.epoll, &*socket, data, flags)
        };
        if armed.is_err() {
            let p = self.parked().parked[token].take();
            if let Some(Movable(p)) = p {
                return Err(p);
            }
        }
        Ok(())
    }

    fn parked(&self) -> MutexGuard<'_, Slots> {
        self.parked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends a session: its socket leaves the `epoll` set (the registry
    /// holds another descriptor of the socket, so closing ours would not
    /// remove it), then its slot is freed and the session dropped.
    fn retire(&self, p: Box<Parked>) {
        if p.registered {
            let _ = epoll::delete(&self.epoll, &*p.socket);
        }
        self.parked().free.push(p.slot);
    }

    /// The seated thread `me` is about to block (a lock wait, a WAL flush:
    /// `tusk_storage::wait_event`): its seat goes to a standby thread now
    /// rather than when the monitor would see it stalled.
    fn release_seat(&self, me: u64) {
        let mut s = self.seats();
        if s.unseat(me) {
            drop(s);
            self.standby.notify_one();
        }
    }

    /// The pool thread loop (see the module doc).
    fn work(self: &Arc<Self>, me: u64) {
        let pool = Arc::downgrade(self);
        wait_event::set_hook(Some(Box::new(move || {
            if let Some(pool) = pool.upgrade() {
                pool.release_seat(me);
            }
        })));
        loop {
            {
                let mut s = self.seats();
                while s.monitor_running && s.taken() >= self.seat_count {
                    s = self.standby.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                s.waiting += 1;
            }
            let token = self.wait_for_session();
            let taken = self.parked().parked.get_mut(token).and_then(Option::take);
            {
                let mut s = self.seats();
                s.waiting -= 1;
                let tick = s.tick;
                s.serving.push((me, tick));
            }
            let ended = match taken {
                Some(Movable(mut p)) => {
                    self.served.fetch_add(1, Ordering::Relaxed);
                    put_generator(p.generator);
                    // A panic in a statement ends its session, as it ended
                    // the session's own thread before the pool; this thread
                    // and the pool's counts carry on.
                    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        p.started.backend.serve(true, true)
                    }));
                    p.generator = take_generator();
                    match served {
                        Ok(Served::Idle) => match self.park(p) {
                            Ok(()) => false,
                            Err(p) => {
                                self.release_seat(me);
                                self.serve_here(p);
                                true
                            }
                        },
                        Ok(Served::Ended) | Err(_) => {
                            self.retire(p);
                            true
                        }
                    }
                }
                // Armed only once parked, and reported once per arming.
                None => false,
            };
            let mut s = self.seats();
            s.unseat(me);
            if ended {
                s.sessions -= 1;
            }
            if s.threads > s.sessions {
                s.threads -= 1;
                drop(s);
                self.standby.notify_one();
                wait_event::set_hook(None);
                return;
            }
        }
    }

    /// A thread whose session ended before it could be parked leaves.
    fn leave_after_end(&self) {
        let mut s = self.seats();
        s.sessions -= 1;
        s.threads -= 1;
    }

    /// The token of one ready parked session.
    fn wait_for_session(&self) -> usize {
        let mut events = [epoll::Event {
            flags: epoll::EventFlags::empty(),
            data: epoll::EventData::new_u64(0),
        }];
        loop {
            match epoll::wait(&self.epoll, &mut events, None) {
                Ok(1) => return events[0].data.u64() as usize,
                Ok(_) | Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    // Only a broken epoll descriptor gets here; wait a
                    // little instead of spinning.
                    eprintln!("LOG:  session pool: epoll_wait failed: {e}");
                    std::thread::sleep(QUIET_TICK);
                }
            }
        }
    }

    /// Counts ticks and takes seats from stalled threads (see the module
    /// doc). Ends when the pool has no thread left.
    fn monitor(&self) {
        let mut last_served = self.served.load(Ordering::Relaxed);
        let mut quiet_ticks = 0u64;
        loop {
            std::thread::sleep(if quiet_ticks >= QUIET_AFTER {
                QUIET_TICK
            } else {
                BUSY_TICK
            });
            let served = self.served.load(Ordering::Relaxed);
            if served == last_served {
                quiet_ticks += 1;
            } else {
                quiet_ticks = 0;
                last_served = served;
            }
            let mut s = self.seats();
            if s.threads == 0 {
                s.monitor_running = false;
                return;
            }
            s.tick += 1;
            let now = s.tick;
            let before = s.serving.len();
            s.serving.retain(|&(_, since)| now < since + 2);
            let freed = before - s.serving.len();
            drop(s);
            for _ in 0..freed {
                self.standby.notify_one();
            }
        }
    }
}
