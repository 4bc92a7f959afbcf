//! Planner statistics: what ANALYZE learned about each table and column
//! (PostgreSQL's `pg_class.reltuples` / `relpages` and `pg_statistic`).
//!
//! ANALYZE (in the SQL layer) samples a table and hands a
//! [`RelStatistics`] to [`StatisticsStore::put`]; the planner reads them
//! back with [`StatisticsStore::get`]. Per column it keeps PostgreSQL's
//! slots: the fraction of NULLs, the average width, the number of distinct
//! values (positive: a count; negative: minus a fraction of the rows, for
//! columns whose distinct count grows with the table), the most common
//! values with their frequencies, a histogram of equal-count bounds over the
//! other values, and the correlation between physical and logical order.
//!
//! Values are kept as *normalized keys*: byte strings whose unsigned order
//! is the values' sort order and whose equality is SQL equality (tusk-exec's
//! `sortkey` writes them). This layer therefore needs no knowledge of types
//! to store them, and the planner compares a constant with the statistics
//! by encoding it the same way.
//!
//! ## Persistence
//!
//! Statistics are hints: a plan never depends on them for its correctness.
//! They live in memory and in one file, `statistics` in the data directory,
//! rewritten whole (temporary file, fsync, rename) by every ANALYZE; they are
//! not WAL-logged. After a crash the file holds the last ANALYZE that
//! finished writing it, or an older one. A file that cannot be read (a newer
//! format, damage) is ignored: the planner then falls back to its defaults
//! until the next ANALYZE. Entries are keyed by relation OID, which tusk
//! never reuses; a table rewritten by ALTER TABLE or TRUNCATE gets a new
//! OID and so starts without statistics, and entries of dropped relations
//! are pruned at the next write ([`StatisticsStore::put`]'s `live`).

use crate::StorageError;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// What ANALYZE found for one column.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnStatistics {
    /// Fraction of the rows where the column is NULL.
    pub null_frac: f64,
    /// Average stored width of the non-NULL values, in bytes.
    pub avg_width: f64,
    /// Distinct non-NULL values: `> 0` a count, `< 0` minus the fraction of
    /// the rows (`-1`: every row differs), `0` unknown.
    pub n_distinct: f64,
    /// The most common values (normalized keys), most common first, with
    /// the fraction of all rows each has.
    pub mcv: Vec<(Vec<u8>, f64)>,
    /// Ascending bounds of equal-count buckets over the values not in `mcv`
    /// (none when too few values remain).
    pub histogram: Vec<Vec<u8>>,
    /// Correlation between the physical order of the rows and the order of
    /// their values, from -1 to 1.
    pub correlation: f64,
}

/// What ANALYZE found for one table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RelStatistics {
    /// Estimated live rows.
    pub reltuples: f64,
    /// Pages when ANALYZE ran.
    pub relpages: u32,
    /// By attribute number; `None` for a column ANALYZE skipped.
    pub columns: Vec<Option<ColumnStatistics>>,
}

impl RelStatistics {
    pub fn column(&self, attno: usize) -> Option<&ColumnStatistics> {
        self.columns.get(attno).and_then(Option::as_ref)
    }
}

/// The statistics of every analyzed relation, in memory and in the
/// `statistics` file.
pub struct StatisticsStore {
    path: PathBuf,
    rels: RwLock<HashMap<u32, Arc<RelStatistics>>>,
    /// Serialises writers of the file.
    write: std::sync::Mutex<()>,
}

const MAGIC: &[u8] = b"tusk-statistics 1\n";

impl StatisticsStore {
    /// Loads `dir/statistics` (empty when absent or unreadable).
    pub fn open(dir: &Path) -> StatisticsStore {
        let path = dir.join("statistics");
        let rels = std::fs::read(&path)
            .ok()
            .and_then(|b| decode(&b))
            .unwrap_or_default();
        StatisticsStore {
            path,
            rels: RwLock::new(rels),
            write: std::sync::Mutex::new(()),
        }
    }

    /// The statistics of relation `oid`, if it was analyzed.
    pub fn get(&self, oid: u32) -> Option<Arc<RelStatistics>> {
        self.rels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&oid)
            .cloned()
    }

    /// Records the statistics of `oid` and rewrites the file, keeping only
    /// the relations `live` accepts (the others were dropped).
    pub fn put(
        &self,
        oid: u32,
        stats: RelStatistics,
        live: &dyn Fn(u32) -> bool,
    ) -> Result<(), StorageError> {
        let _w = self.write.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = {
            let mut rels = self.rels.write().unwrap_or_else(|e| e.into_inner());
            rels.insert(oid, Arc::new(stats));
            rels.retain(|&o, _| live(o));
            encode(&rels)
        };
        let tmp = self.path.with_extension("tmp");
        let io = |what: &str, p: &Path, e| {
            StorageError::io(format!("could not {what} file \"{}\"", p.display()), e)
        };
        let mut f = std::fs::File::create(&tmp).map_err(|e| io("create", &tmp, e))?;
        f.write_all(&bytes).map_err(|e| io("write", &tmp, e))?;
        f.sync_all().map_err(|e| io("fsync", &tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| io("rename", &tmp, e))?;
        Ok(())
    }
}

fn encode(rels: &HashMap<u32, Arc<RelStatistics>>) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    let u32_ = |out: &mut Vec<u8>, v: usize| out.extend_from_slice(&(v as u32).to_le_bytes());
    let f64_ = |out: &mut Vec<u8>, v: f64| out.extend_from_slice(&v.to_le_bytes());
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        u32_(out, b.len());
        out.extend_from_slice(b);
    };
    let mut oids: Vec<&u32> = rels.keys().collect();
    oids.sort();
    u32_(&mut out, oids.len());
    for oid in oids {
        let r = &rels[oid];
        u32_(&mut out, *oid as usize);
        f64_(&mut out, r.reltuples);
        u32_(&mut out, r.relpages as usize);
        u32_(&mut out, r.columns.len());
        for c in &r.columns {
            let Some(c) = c else {
                out.push(0);
                continue;
            };
            out.push(1);
            for v in [c.null_frac, c.avg_width, c.n_distinct, c.correlation] {
                f64_(&mut out, v);
            }
            u32_(&mut out, c.mcv.len());
            for (k, f) in &c.mcv {
                bytes(&mut out, k);
                f64_(&mut out, *f);
            }
            u32_(&mut out, c.histogram.len());
            for k in &c.histogram {
                bytes(&mut out, k);
            }
        }
    }
    out
}

/// Reads what [`encode`] wrote; `None` for anything else.
fn decode(b: &[u8]) -> Option<HashMap<u32, Arc<RelStatistics>>> {
    struct Reader<'a>(&'a [u8]);
    impl Reader<'_> {
        fn take(&mut self, n: usize) -> Option<&[u8]> {
            let (a, b) = (self.0.get(..n)?, self.0.get(n..)?);
            self.0 = b;
            Some(a)
        }
        fn u8(&mut self) -> Option<u8> {
            Some(self.take(1)?[0])
        }
        fn u32(&mut self) -> Option<u32> {
            Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
        }
        fn f64(&mut self) -> Option<f64> {
            Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
        }
        fn bytes(&mut self) -> Option<Vec<u8>> {
            let n = self.u32()? as usize;
            Some(self.take(n)?.to_vec())
        }
    }
    let mut r = Reader(b.strip_prefix(MAGIC)?);
    let mut rels = HashMap::new();
    for _ in 0..r.u32()? {
        let oid = r.u32()?;
        let reltuples = r.f64()?;
        let relpages = r.u32()?;
        let ncols = r.u32()? as usize;
        let mut columns = Vec::with_capacity(ncols.min(1600));
        for _ in 0..ncols {
            if r.u8()? == 0 {
                columns.push(None);
                continue;
            }
            let (null_frac, avg_width, n_distinct, correlation) =
                (r.f64()?, r.f64()?, r.f64()?, r.f64()?);
            let nmcv = r.u32()? as usize;
            let mut mcv = Vec::with_capacity(nmcv.min(10_000));
            for _ in 0..nmcv {
                mcv.push((r.bytes()?, r.f64()?));
            }
            let nhist = r.u32()? as usize;
            let mut histogram = Vec::with_capacity(nhist.min(10_000));
            for _ in 0..nhist {
                histogram.push(r.bytes()?);
            }
            columns.push(Some(ColumnStatistics {
                null_frac,
                avg_width,
                n_distinct,
                mcv,
                histogram,
                correlation,
            }));
        }
        rels.insert(
            oid,
            Arc::new(RelStatistics {
                reltuples,
                relpages,
                columns,
            }),
        );
    }
    r.0.is_empty().then_some(rels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RelStatistics {
        RelStatistics {
            reltuples: 1234.0,
            relpages: 17,
            columns: vec![
                Some(ColumnStatistics {
                    null_frac: 0.25,
                    avg_width: 4.0,
                    n_distinct: -1.0,
                    mcv: vec![(vec![1, 2, 3], 0.5), (vec![], 0.125)],
                    histogram: vec![vec![0], vec![9, 9]],
                    correlation: -0.5,
                }),
                None,
            ],
        }
    }

    /// What `put` writes, `open` reads back; dropped relations are pruned.
    #[test]
    fn round_trip_and_prune() {
        let dir = tempfile::tempdir().unwrap();
        let store = StatisticsStore::open(dir.path());
        assert!(store.get(7).is_none());
        store.put(7, sample(), &|_| true).unwrap();
        store.put(8, RelStatistics::default(), &|_| true).unwrap();
        let again = StatisticsStore::open(dir.path());
        assert_eq!(*again.get(7).unwrap(), sample());
        assert_eq!(*again.get(8).unwrap(), RelStatistics::default());
        again.put(9, sample(), &|oid| oid != 7).unwrap();
        let third = StatisticsStore::open(dir.path());
        assert!(third.get(7).is_none());
        assert!(third.get(8).is_some() && third.get(9).is_some());
    }

    /// A damaged or foreign file is ignored, never an error.
    #[test]
    fn unreadable_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let store = StatisticsStore::open(dir.path());
        store.put(7, sample(), &|_| true).unwrap();
        let path = dir.path().join("statistics");
        let mut b = std::fs::read(&path).unwrap();
        b.truncate(b.len() - 3);
        std::fs::write(&path, &b).unwrap();
        assert!(StatisticsStore::open(dir.path()).get(7).is_none());
        std::fs::write(&path, b"tusk-statistics 99\n").unwrap();
        assert!(StatisticsStore::open(dir.path()).get(7).is_none());
    }
}
