use super::*;
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

fn all_kinds(capacity: usize) -> Vec<Box<dyn BufferMapping>> {
    MappingKind::ALL
        .iter()
        .map(|k| k.build_local(capacity))
        .collect()
}

#[test]
fn insert_lookup_remove() {
    for t in all_kinds(100) {
        let a = BufferTag::new(1, 7);
        assert_eq!(t.lookup(&a), None, "{}", t.name());
        assert_eq!(t.insert(&a, 3), Ok(()));
        assert_eq!(t.insert(&a, 4), Err(3));
        assert_eq!(t.lookup(&a), Some(3));
        assert!(!t.remove(&a, 4));
        assert!(t.remove(&a, 3));
        assert_eq!(t.lookup(&a), None);
        assert!(!t.remove(&a, 3));
    }
}

#[test]
fn kinds_parse_and_name() {
    for k in MappingKind::ALL {
        assert_eq!(MappingKind::parse(k.as_str()), Some(k));
        assert_eq!(k.build_local(10).name(), k.as_str());
    }
    assert_eq!(MappingKind::parse("CHash "), Some(MappingKind::Chash));
    assert_eq!(MappingKind::parse("dynahash"), None);
}

#[test]
fn chash_overflow_chains_and_counts() {
    // Fill far beyond one bucket per home so that entries spill over.
    let t = ChashTable::with_capacity(300);
    let n = 300u32;
    for b in 0..n {
        assert_eq!(t.insert(&BufferTag::new(9, b), b), Ok(()));
    }
    let (entries, overflow) = t.census();
    assert_eq!(entries, n as usize);
    assert!(
        overflow > 0,
        "300 entries in 100 buckets must overflow somewhere"
    );
    for b in 0..n {
        assert_eq!(t.lookup(&BufferTag::new(9, b)), Some(b));
        assert_eq!(t.insert(&BufferTag::new(9, b), 1000), Err(b));
    }
    for b in (0..n).step_by(2) {
        assert!(t.remove(&BufferTag::new(9, b), b));
    }
    for b in 0..n {
        let want = (b % 2 == 1).then_some(b);
        assert_eq!(t.lookup(&BufferTag::new(9, b)), want);
    }
    for b in (1..n).step_by(2) {
        assert!(t.remove(&BufferTag::new(9, b), b));
    }
    assert_eq!(
        t.census(),
        (0, 0),
        "counts return to zero when the table empties"
    );
}

#[test]
fn chash_forks_are_distinct_keys_and_large_ids_fit() {
    let t = ChashTable::with_capacity(10);
    let a = BufferTag::new(u32::MAX, u32::MAX);
    assert_eq!(t.insert(&a, MAX_BUFFER_ID), Ok(()));
    assert_eq!(t.lookup(&a), Some(MAX_BUFFER_ID));
    assert_eq!(t.lookup(&BufferTag::new(u32::MAX, u32::MAX - 1)), None);
    assert_eq!(t.insert(&BufferTag::new(0, 0), 0), Ok(()));
    assert_eq!(t.lookup(&BufferTag::new(0, 0)), Some(0));
}

#[test]
#[cfg(feature = "stats")]
fn stats_count_this_threads_operations() {
    std::thread::spawn(|| {
        reset_thread_stats();
        let t = ChashTable::with_capacity(10);
        let a = BufferTag::new(1, 1);
        t.lookup(&a);
        t.insert(&a, 1).unwrap();
        t.insert(&a, 2).unwrap_err();
        t.lookup(&a);
        t.remove(&a, 1);
        let s = thread_stats();
        assert_eq!(
            (s.lookups, s.hits, s.inserts, s.insert_conflicts, s.deletes),
            (2, 1, 2, 1, 1)
        );
        assert_eq!(s.probes, 2);
        assert_eq!(s.max_probe, 1);
    })
    .join()
    .unwrap();
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u32, u32),
    Remove(u32, u32),
    Lookup(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..60u32, 0..4u32).prop_map(|(k, v)| Op::Insert(k, v)),
        (0..60u32, 0..4u32).prop_map(|(k, v)| Op::Remove(k, v)),
        (0..60u32).prop_map(Op::Lookup),
    ]
}

proptest! {
    /// Every implementation behaves like a map with insert-if-absent and
    /// remove-if-equal; chash's overflow counts return to zero.
    #[test]
    fn behaves_like_a_map(ops in proptest::collection::vec(op(), 1..400)) {
        for t in all_kinds(21) {
            let mut model: HashMap<u32, u32> = HashMap::new();
            for op in &ops {
                match *op {
                    Op::Insert(k, v) => {
                        let want = match model.get(&k) {
                            Some(&e) => Err(e),
                            None if model.len() < 21 => { model.insert(k, v); Ok(()) }
                            None => continue,
                        };
                        prop_assert_eq!(t.insert(&BufferTag::new(k % 3, k), v), want);
                    }
                    Op::Remove(k, v) => {
                        let want = model.get(&k) == Some(&v);
                        if want { model.remove(&k); }
                        prop_assert_eq!(t.remove(&BufferTag::new(k % 3, k), v), want);
                    }
                    Op::Lookup(k) => {
                        prop_assert_eq!(t.lookup(&BufferTag::new(k % 3, k)), model.get(&k).copied());
                    }
                }
            }
            for (&k, &v) in &model {
                prop_assert!(t.remove(&BufferTag::new(k % 3, k), v));
            }
        }
        let t = ChashTable::with_capacity(21);
        for op in &ops {
            if let Op::Insert(k, v) = *op {
                let _ = t.insert(&BufferTag::new(k % 3, k), v);
            }
        }
        for k in 0..60 {
            for v in 0..4 {
                t.remove(&BufferTag::new(k % 3, k), v);
            }
        }
        prop_assert_eq!(t.census(), (0, 0));
    }
}

/// Small xorshift generator for tests and benchmarks.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Several threads change their own keys (checked exactly against a shadow
/// map each), fight over shared keys (answers must agree), and read stable
/// keys (must always be found), in a small table full of overflow chains.
#[test]
fn stress_against_shadow() {
    const THREADS: u32 = 4;
    const OWN: u32 = 48;
    const STABLE: u32 = 120;
    const CONTESTED: u32 = 12;
    const OPS: u32 = 30_000;
    for kind in MappingKind::ALL {
        let t: Arc<dyn BufferMapping> =
            Arc::from(kind.build_local((STABLE + THREADS * OWN + CONTESTED) as usize));
        for b in 0..STABLE {
            t.insert(&BufferTag::new(0, b), b).unwrap();
        }
        let handles: Vec<_> = (0..THREADS)
            .map(|w| {
                let t = t.clone();
                std::thread::spawn(move || {
                    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((w as u64 + 1) * 0x1234_5678));
                    let mut shadow: HashMap<u32, u32> = HashMap::new();
                    let mut mine: Vec<u32> = vec![];
                    for i in 0..OPS {
                        let r = rng.next();
                        let k = (r >> 8) as u32;
                        match r % 8 {
                            0 | 1 => {
                                let b = k % OWN;
                                let v = i % 1000;
                                let want = match shadow.get(&b) {
                                    Some(&e) => Err(e),
                                    None => Ok(()),
                                };
                                assert_eq!(t.insert(&BufferTag::new(1 + w, b), v), want);
                                shadow.entry(b).or_insert(v);
                            }
                            2 => {
                                let b = k % OWN;
                                let v = shadow.get(&b).copied().unwrap_or(7);
                                let want = shadow.get(&b) == Some(&v);
                                assert_eq!(t.remove(&BufferTag::new(1 + w, b), v), want);
                                shadow.remove(&b);
                            }
                            3 => {
                                let b = k % OWN;
                                assert_eq!(
                                    t.lookup(&BufferTag::new(1 + w, b)),
                                    shadow.get(&b).copied()
                                );
                            }
                            4 => {
                                let b = k % STABLE;
                                assert_eq!(t.lookup(&BufferTag::new(0, b)), Some(b));
                            }
                            5 => {
                                let b = k % CONTESTED;
                                match t.insert(&BufferTag::new(100, b), w) {
                                    Ok(()) => mine.push(b),
                                    Err(e) => assert!(e < THREADS && e != w || mine.contains(&b)),
                                }
                            }
                            6 => {
                                if let Some(b) = mine.pop() {
                                    assert!(t.remove(&BufferTag::new(100, b), w));
                                }
                            }
                            _ => {
                                let b = k % CONTESTED;
                                if let Some(e) = t.lookup(&BufferTag::new(100, b)) {
                                    assert!(e < THREADS);
                                }
                            }
                        }
                    }
                    (shadow, mine)
                })
            })
            .collect();
        let mut contested = HashMap::new();
        for (w, h) in handles.into_iter().enumerate() {
            let (shadow, mine) = h.join().unwrap();
            for b in 0..OWN {
                assert_eq!(
                    t.lookup(&BufferTag::new(1 + w as u32, b)),
                    shadow.get(&b).copied()
                );
            }
            for b in mine {
                assert!(
                    contested.insert(b, w as u32).is_none(),
                    "two owners of one key"
                );
            }
        }
        for b in 0..CONTESTED {
            assert_eq!(
                t.lookup(&BufferTag::new(100, b)),
                contested.get(&b).copied(),
                "{}",
                kind.as_str()
            );
        }
        for b in 0..STABLE {
            assert_eq!(t.lookup(&BufferTag::new(0, b)), Some(b));
        }
    }
}

/// The variable that tells a re-executed test binary it is the second process.
const CHILD_ENV: &str = "TUSK_CHASH_CHILD";

/// A second process maps the same memfd at another address, attaches to the
/// table, finds the parent's entries and adds its own, which the parent sees.
#[test]
fn second_process_uses_the_table() {
    use tusk_shmem::{HugePages, Segment};
    let capacity = 2000;
    let seg = Arc::new(
        Segment::create(
            "chash test",
            ChashTable::layout_size(capacity),
            HugePages::Off,
        )
        .unwrap(),
    );
    // SAFETY: the segment is fresh, page aligned, large enough and kept
    // alive by the owner we pass.
    let t = unsafe { ChashTable::init(seg.as_ptr(), seg.len(), capacity, seg.clone()) };
    for b in 0..1000 {
        t.insert(&BufferTag::new(5, b), b * 3).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let status = std::process::Command::new(exe)
        .args([
            "tests::second_process_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            CHILD_ENV,
            format!("{} {} {}", std::process::id(), seg.raw_fd(), seg.len()),
        )
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "child failed: {status}");
    for b in 0..1000 {
        assert_eq!(
            t.lookup(&BufferTag::new(5, b)),
            (b % 2 == 1).then_some(b * 3)
        );
        assert_eq!(t.lookup(&BufferTag::new(6, b)), Some(b + 7));
    }
}

/// The child half of `second_process_uses_the_table`; does nothing when run
/// on its own.
#[test]
fn second_process_child() {
    let Ok(arg) = std::env::var(CHILD_ENV) else {
        return;
    };
    let mut it = arg.split(' ').map(|s| s.parse::<usize>().unwrap());
    let (pid, fd, len) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/fd/{fd}"))
        .unwrap();
    // SAFETY: the parent keeps the memfd alive and does not resize it while
    // we run; all access to it goes through the table's atomics.
    let mut map = unsafe { memmap2::MmapOptions::new().len(len).map_mut(&file) }.unwrap();
    let base = map.as_mut_ptr();
    let owner = Arc::new(map);
    // SAFETY: the mapping holds the parent's initialised table and `owner`
    // keeps it mapped for the handle's life.
    let t = unsafe { ChashTable::attach(base, len, owner) };
    for b in 0..1000u32 {
        assert_eq!(t.lookup(&BufferTag::new(5, b)), Some(b * 3));
        assert_eq!(t.insert(&BufferTag::new(5, b), 1), Err(b * 3));
        if b % 2 == 0 {
            assert!(t.remove(&BufferTag::new(5, b), b * 3));
        }
        t.insert(&BufferTag::new(6, b), b + 7).unwrap();
    }
}
