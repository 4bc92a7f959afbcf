//! `pg_sleep(seconds)`: waits, as PostgreSQL's does, in short steps that
//! check the statement's interrupt (cancel, `statement_timeout`, shutdown),
//! so a sleeping statement stops within one step. A negative or NaN
//! duration returns at once; `'infinity'` sleeps until interrupted. The
//! wait is announced to storage's wait hooks (`tusk_storage::wait_event`),
//! so a server thread that sleeps gives its seat in the session pool away.
//! Each computed row sleeps its own argument, in row order.

use super::Call;
use crate::error::Result;
use crate::vector::Vector;
use std::time::{Duration, Instant};

/// The longest single wait between interrupt checks.
const STEP: Duration = Duration::from_millis(10);

fn sleep(seconds: f64) -> Result<()> {
    let interrupt = crate::env::interrupt();
    interrupt.check()?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Ok(());
    }
    // Beyond a year is as good as forever (and `Duration` would overflow
    // on `'infinity'`).
    let end = Instant::now().checked_add(Duration::from_secs_f64(seconds.min(3.2e7)));
    tusk_storage::wait_event::blocking();
    loop {
        interrupt.check()?;
        let left = match end {
            Some(end) => end.saturating_duration_since(Instant::now()),
            None => STEP,
        };
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(STEP));
    }
}

pub(super) fn eval(c: &Call) -> Result<Vector> {
    super::void_per_row(super::Func::PgSleep, c, sleep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{enter, SessionEnv};
    use std::sync::Arc;

    #[test]
    fn sleeps_and_stops_when_cancelled() {
        let t = Instant::now();
        sleep(0.05).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(50));
        sleep(-1.0).unwrap();
        sleep(f64::NAN).unwrap();
        let env = Arc::new(SessionEnv::default());
        let _installed = enter(&env);
        let interrupt = env.interrupt.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            interrupt.cancel();
        });
        let t = Instant::now();
        let err = sleep(f64::INFINITY).unwrap_err();
        canceller.join().unwrap();
        assert_eq!(err.message, "canceling statement due to user request");
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
