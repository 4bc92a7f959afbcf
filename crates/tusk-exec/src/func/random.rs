//! `random()` and `setseed()`: PostgreSQL 15's generator, so that a seeded
//! sequence gives the same numbers as PostgreSQL's (`pg_prng.c`:
//! xoroshiro128** seeded through splitmix64; `random()` takes the top 52
//! bits).
//!
//! The state is per thread (PostgreSQL's is per backend). Unseeded, it
//! starts from the process's random hasher keys and the thread's identity;
//! `setseed(x)` makes the rest of the session's sequence reproducible. A
//! session that moves between threads (the server's session pool) takes its
//! state along: [`take_generator`] when it leaves a thread,
//! [`put_generator`] on the thread that resumes it.
//! Both are volatile, so the planner neither folds nor caches them.

use super::{Call, Func};
use crate::error::{sqlstate, ExecError, Result};
use crate::vector::{Data, Vector};
use std::cell::Cell;

thread_local! {
    static STATE: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
}

/// A session's generator state, carried between threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneratorState(Option<(u64, u64)>);

/// Removes the calling thread's generator state (a fresh thread's is unset).
pub fn take_generator() -> GeneratorState {
    GeneratorState(STATE.with(|st| st.take()))
}

/// Installs `state` as the calling thread's generator state.
pub fn put_generator(state: GeneratorState) {
    STATE.with(|st| st.set(state.0));
}

pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

fn seeded(mut seed: u64) -> (u64, u64) {
    let s0 = splitmix64(&mut seed);
    let s1 = splitmix64(&mut seed);
    if s0 == 0 && s1 == 0 {
        // pg_prng_seed_check: never the all-zero state.
        (1, 0)
    } else {
        (s0, s1)
    }
}

fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    std::thread::current().id().hash(&mut h);
    std::time::SystemTime::now().hash(&mut h);
    h.finish()
}

/// The next value in [0, 1).
fn next_double() -> f64 {
    STATE.with(|st| {
        let (s0, s1) = st.get().unwrap_or_else(|| seeded(fresh_seed()));
        let sx = s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        st.set(Some((
            s0.rotate_left(24) ^ sx ^ (sx << 16),
            sx.rotate_left(37),
        )));
        (val >> 12) as f64 * (2f64).powi(-52)
    })
}

/// `setseed(x)`: x in [-1, 1].
fn set_seed(x: f64) -> Result<()> {
    if !(-1.0..=1.0).contains(&x) {
        return Err(ExecError::coded(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("setseed parameter {x} is out of allowed range [-1,1]"),
        ));
    }
    let seed = (((1u64 << 52) - 1) as f64 * x) as i64;
    STATE.with(|st| st.set(Some(seeded(seed as u64))));
    Ok(())
}

pub(super) fn eval(f: Func, c: &Call) -> Result<Vector> {
    match f {
        Func::Random => {
            let v = (0..c.n)
                .map(|i| if c.computes(i) { next_double() } else { 0.0 })
                .collect();
            Ok(Vector::new(Data::Float8(v), None))
        }
        _ => super::void_per_row(f, c, set_seed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_sequence_matches_postgres() {
        // PostgreSQL 15: select setseed(0.5); select random(), random(), random();
        set_seed(0.5).unwrap();
        let got: Vec<String> = (0..3).map(|_| next_double().to_string()).collect();
        assert_eq!(
            got,
            [
                "0.9851677175347999",
                "0.825301858027981",
                "0.12974610012450416"
            ]
        );
        set_seed(-1.0).unwrap();
        // A state carried away and brought back continues the sequence.
        let carried = take_generator();
        set_seed(0.25).unwrap();
        put_generator(carried);
        assert_eq!(next_double().to_string(), "0.725656831544149");
        set_seed(0.0).unwrap();
        assert_eq!(next_double().to_string(), "0.8702553105818676");
        assert_eq!(
            set_seed(2.0).unwrap_err().message,
            "setseed parameter 2 is out of allowed range [-1,1]"
        );
    }
}
