//! Tests of the shared table: threads loading and linking one table, and a
//! second process finding every tuple through position-independent refs.

use super::*;
use tusk_shmem::DsmConfig;

const INT_KEY: TableShape = TableShape {
    int_key: true,
    exact: false,
    key_only: None,
};
const EXACT_KEY: TableShape = TableShape {
    exact: true,
    ..INT_KEY
};

/// Four threads load tuples (some larger than a chunk) into their own
/// chunks at once, then insert them into the slots: every tuple is on
/// the chain of its key's slot exactly once, with its payload intact.
#[test]
fn threads_load_and_link_one_table() {
    const THREADS: u32 = 4;
    const PER_THREAD: u32 = 20_000;
    let dsm = Dsm::new(None, DsmConfig::default());
    let table = SharedTable::new(&dsm, 16 * 1024, INT_KEY, 64 << 20, 0).unwrap();
    let writers: Vec<ChunkWriter> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let table = &table;
                s.spawn(move || {
                    let mut w = ChunkWriter::new();
                    for i in 0..PER_THREAD {
                        let key = (i * THREADS + t) as i64;
                        // Every 5000th row is wider than a chunk.
                        let len = if i % 5000 == 0 { 20_000 } else { 4 };
                        let mut row = key.to_le_bytes().to_vec();
                        row.resize(8 + len, key as u8);
                        assert!(w
                            .insert(table, TupleKey::Int(key % 1000), &row, &mut |_| true)
                            .unwrap());
                    }
                    w
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let rows = (THREADS * PER_THREAD) as usize;
    table.publish(rows, false).unwrap();
    std::thread::scope(|s| {
        for me in 0..THREADS as usize {
            let table = &table;
            s.spawn(move || table.zero_slots(me, THREADS as usize));
        }
    });
    std::thread::scope(|s| {
        for w in &writers {
            let table = &table;
            s.spawn(move || w.link(table, true));
        }
    });
    let view = table.view();
    let mut seen = vec![false; rows];
    for slot in view.slots.iter() {
        let slot = slot.load(Relaxed);
        let mut e = super::super::slots::entry_of(slot) & !super::super::slots::MORE;
        while e != 0 {
            let (k, next) = view.int_entry(e);
            let tag = view.index.int_tag(hash_i64(k), k);
            assert_eq!(
                tag,
                Some(super::super::slots::tag_of(slot)),
                "tuple on the wrong chain"
            );
            let payload = table.payload(e);
            let key = i64::from_le_bytes(payload[..8].try_into().unwrap());
            assert_eq!(key % 1000, k);
            assert!(!seen[key as usize], "tuple linked twice");
            seen[key as usize] = true;
            e = next;
        }
    }
    assert!(seen.iter().all(|&s| s), "a tuple was lost");
    assert!(table.memory_report().chunks > 0);
}

const CHILD_ENV: &str = "TUSK_EXEC_SHARED_TABLE_CHILD";

/// The table is position independent: a second process maps the area's
/// segments at addresses of its own, resolves the chunk directory and the
/// slot array from their `DsaPointer`s, and finds every tuple through
/// the same refs.
#[test]
fn a_second_process_finds_every_tuple() {
    let dsm = Dsm::new(None, DsmConfig::default());
    let table = SharedTable::new(&dsm, 32 * 1024, EXACT_KEY, 64 << 20, 0).unwrap();
    let mut w = ChunkWriter::new();
    for k in 0..50_000i64 {
        let row = (k * 3).to_le_bytes();
        assert!(w
            .insert(&table, TupleKey::Int(k), &row, &mut |_| true)
            .unwrap());
    }
    table.publish(50_000, false).unwrap();
    table.zero_slots(0, 1);
    w.link(&table, true);
    let p = table.published();
    let segments = table.area.stats().segments;
    let mut desc = vec![
        table.dir_ptr.to_u64().to_string(),
        p.slots_ptr.to_u64().to_string(),
        p.index.len().to_string(),
        p.bases.len().to_string(),
        table.offset_bits.to_string(),
    ];
    for i in 0..segments {
        desc.push(table.area.segment(i).unwrap().attach_info().encode());
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "hashjoin::shared_table::tests::second_process_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, desc.join(";"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("found 50000 tuples"), "{stdout}");
}

/// The second process of `a_second_process_finds_every_tuple` (does
/// nothing when run on its own).
#[test]
fn second_process_entry() {
    let Ok(desc) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = desc.split(';').collect();
    let num = |i: usize| parts[i].parse::<u64>().unwrap();
    let segments: Vec<tusk_shmem::Segment> = parts[5..]
        .iter()
        .map(|p| tusk_shmem::Segment::attach(&tusk_shmem::AttachInfo::decode(p).unwrap()).unwrap())
        .collect();
    let addr = |p: DsaPointer| segments[p.segment()].as_ptr() as usize + p.offset();
    let (dir, nslots, nchunks) = (
        addr(DsaPointer::from_u64(num(0))),
        num(2) as usize,
        num(3) as usize,
    );
    // SAFETY: the parent wrote `nchunks` directory slots and a slot
    // array of `nslots` slots at these offsets of the segments this
    // process has just mapped, and keeps them alive while it waits.
    let (bases, slots) = unsafe {
        let bases: Vec<usize> = (0..nchunks)
            .map(|i| addr(DsaPointer::from_u64((dir as *const u64).add(i).read())))
            .collect();
        let slots = std::slice::from_raw_parts(
            addr(DsaPointer::from_u64(num(1))) as *const AtomicU64,
            nslots,
        );
        (bases, slots)
    };
    let view = SharedView::from_parts(slots, true, &bases, num(4) as u32, true);
    let mut found = 0;
    for k in 0..50_000i64 {
        // Every key is found from its home slot, alone in its chain.
        let hash = hash_i64(k);
        let head = view.index.find(view.slots, view.index.home(hash), k as u32);
        assert_eq!(head & super::super::slots::MORE, 0);
        let mut e = head;
        while e != 0 {
            let (key, next) = view.int_entry(e);
            assert_eq!(key, k);
            let payload = &view.tuple(e).bytes[16..];
            assert_eq!(i64::from_le_bytes(payload.try_into().unwrap()), k * 3);
            found += 1;
            e = next;
        }
    }
    println!("found {found} tuples");
}
