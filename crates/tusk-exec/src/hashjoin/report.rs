//! What a hash join reports to EXPLAIN ANALYZE: PostgreSQL's `Buckets:
//! Batches: Memory Usage:` line on the Hash node, then tusk's own lines
//! (shared memory, prefetching, peak memory and partitioning).

use super::HashJoin;
use std::sync::atomic::Ordering::Relaxed;

/// What EXPLAIN ANALYZE reports.
#[derive(Default, Clone)]
pub(super) struct Report {
    pub(super) buckets: usize,
    pub(super) original_buckets: usize,
    pub(super) batches: usize,
    pub(super) table_peak: usize,
    pub(super) peak: usize,
    pub(super) levels: u32,
    pub(super) chunked: usize,
    pub(super) fanout: usize,
    pub(super) inner_rows: u64,
}

impl HashJoin {
    /// Writes the Hash node's EXPLAIN ANALYZE lines. In a Parallel Hash Join
    /// every participant adds its figures to the shared report and the last
    /// one to finish writes the lines (Gather merges them into the leader's).
    pub(super) fn finish_report(&mut self) {
        let Some(stats) = &self.ctx.stats else {
            return;
        };
        // A join whose probe side was empty never ran its Hash node (see
        // `read_first_outer`; in a parallel join no participant ran it):
        // EXPLAIN shows it `(never executed)`.
        if self.inner.is_some() {
            return;
        }
        let spill = &self.ctx.spill;
        let (r, written, read, participants, memory) = match &self.shared {
            None => (
                self.report.clone(),
                spill.written.get(),
                spill.read.get(),
                1,
                None,
            ),
            Some(shared) => {
                let mut g = shared.report.lock().unwrap_or_else(|e| e.into_inner());
                let (c, finished, w, rd) = &mut *g;
                let me = &self.report;
                c.buckets = c.buckets.max(me.buckets);
                c.original_buckets = c.original_buckets.max(me.original_buckets);
                c.batches += me.batches;
                c.table_peak = c.table_peak.max(me.table_peak);
                // Partition-phase peaks of different participants may
                // coincide, so they add up.
                c.peak += me.peak;
                c.levels = c.levels.max(me.levels);
                c.chunked += me.chunked;
                c.fanout = c.fanout.max(me.fanout);
                *w += spill.written.get();
                *rd += spill.read.get();
                *finished += 1;
                if *finished < shared.participants {
                    return;
                }
                let mut c = c.clone();
                c.peak = c.peak.max(shared.peak.load(Relaxed));
                if c.levels == 0 {
                    c.batches = 1;
                }
                let memory = shared
                    .memory
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                (c, *w, *rd, shared.participants, memory)
            }
        };
        let mut s = stats.borrow_mut();
        let h = &mut s[self.hash_id];
        h.loops = 1;
        let buckets = if r.original_buckets != 0 && r.original_buckets != r.buckets {
            format!("{} (originally {})", r.buckets, r.original_buckets)
        } else {
            r.buckets.to_string()
        };
        let batches = if r.levels > 0 {
            format!("{} (originally 1)", r.batches)
        } else {
            "1".into()
        };
        h.extra.push(format!(
            "Buckets: {buckets}  Batches: {batches}  Memory Usage: {}kB",
            r.table_peak.div_ceil(1024)
        ));
        if let Some(m) = memory {
            let source = match (m.pool_segments, m.segments) {
                (0, _) => "fresh segments",
                (p, n) if p == n => "pool",
                _ => "pool and fresh segments",
            };
            h.extra.push(format!(
                "Chunk Size: {}kB  Chunks: {}  Shared Memory: {}kB from {source}  Huge Pages: {}",
                m.chunk_size / 1024,
                m.chunks,
                m.total.div_ceil(1024),
                if m.huge_pages { "yes" } else { "no" }
            ));
        }
        let limit = if participants > 1 {
            format!(
                "limit {}kB × {participants} participants",
                self.limit.div_ceil(1024)
            )
        } else {
            format!("limit {}kB", self.limit.div_ceil(1024))
        };
        let mut line = format!(
            "Prefetch: {}  Peak Memory: {}kB ({limit})",
            if self.ctx.prefetch { "on" } else { "off" },
            r.peak.div_ceil(1024),
        );
        if r.levels > 0 {
            line.push_str(&format!(
                "  Partitions: {} per level, {} level(s), {} chunked  Temp Written: {}kB  Temp Read: {}kB",
                r.fanout,
                r.levels,
                r.chunked,
                written.div_ceil(1024),
                read.div_ceil(1024)
            ));
        }
        h.extra.push(line);
    }
}

#[cfg(test)]
mod tests {
    use crate::join_reference::JoinCase;
    use crate::plan::JoinKind;
    use crate::testing::TestDb;
    use crate::value::Value;
    use tusk_storage::DataType;

    /// The Hash node's lines (plan node 2 of a join over two leaves).
    fn hash_lines(case: &JoinCase, work_mem: usize) -> Vec<String> {
        let db = TestDb::new();
        let ctx = db.ctx(work_mem, 4);
        case.run_hash(&ctx, 256).unwrap();
        let stats = ctx.stats.as_ref().unwrap().borrow();
        stats[2].extra.clone()
    }

    fn case(inner_distinct: i32) -> JoinCase {
        let rows = |n: i32, m: i32| -> Vec<Vec<Value>> {
            (0..n).map(|i| vec![Value::Int4(i % m)]).collect()
        };
        JoinCase {
            kind: JoinKind::Left,
            outer_types: vec![DataType::Int4],
            inner_types: vec![DataType::Int4],
            outer: rows(2000, 500),
            inner: rows(3000, inner_distinct),
            outer_keys: vec![0],
            inner_keys: vec![0],
            filter: None,
            outer_out: vec![0],
            inner_out: vec![0],
        }
    }

    #[test]
    fn in_memory_one_batch() {
        let lines = hash_lines(&case(500), 4 << 20);
        assert!(
            lines[0].starts_with("Buckets: 4096  Batches: 1  Memory Usage: "),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("Prefetch: on  Peak Memory: "),
            "{lines:?}"
        );
        assert!(!lines[1].contains("Partitions"), "{lines:?}");
    }

    /// One build key cannot be split: the partitioning goes down a level
    /// and then joins the partition in chunks, and says so.
    #[test]
    fn spilled_partitions_levels_and_chunks() {
        let lines = hash_lines(&case(1), 8 << 10);
        assert!(lines[0].contains("(originally 1)"), "{lines:?}");
        let p = &lines[1];
        assert!(p.contains("Partitions: 2 per level"), "{p}");
        let levels: u32 = p
            .split(" level(s)")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let chunked: u32 = p
            .split(" chunked")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(levels >= 2 && chunked >= 1, "{p}");
        assert!(
            p.contains("Temp Written: ") && p.contains("Temp Read: "),
            "{p}"
        );
    }
}
