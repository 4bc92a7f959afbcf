//! ANALYZE: a random sample of a table's rows and the column statistics
//! computed from it, as PostgreSQL's `analyze.c` computes them.
//!
//! ## The sample ([`sample_table`])
//!
//! Two stages, as `acquire_sample_rows`: first up to `target` blocks chosen
//! uniformly at random (Knuth's selection sampling, in block order), then a
//! reservoir of `target` rows over the visible tuples of those blocks
//! (Vitter's algorithm R). Every visible row of the chosen blocks is equally
//! likely to end up in the sample, and the live rows of the whole table are
//! estimated from the density of the blocks read. The first stage reads the
//! pages only to count their visible tuples; the chosen rows are deformed
//! afterwards, block by block, so that a table of any size costs at most
//! `target` rows of memory. The generator is seeded from the table's OID, so
//! an unchanged table gets the same statistics (and plans) every time.
//!
//! ## The statistics ([`column_statistics`])
//!
//! Values are compared through their normalized keys (`sortkey`, ascending),
//! the form in which the statistics are stored. From the sorted keys:
//!
//! - `null_frac` and `avg_width`;
//! - `n_distinct`: every value seen once — a unique column, `-(1 - nulls)`;
//!   every value seen at least twice — the sample saw them all, their count;
//!   otherwise the Haas–Stokes estimator `n·d / (n − f1 + f1·n/N)` (`d`
//!   distinct, `f1` seen once, `n` sampled, `N` rows in the table), stored
//!   as a fraction of the rows (negative) when above a tenth of them;
//! - the most common values: all of them when the sample saw every value
//!   and they fit the list; otherwise those whose sample count exceeds what
//!   a value of average frequency would reach by chance
//!   (PostgreSQL 15's `analyze_mcv_list`);
//! - a histogram of up to `target + 1` equal-count bounds over the values
//!   not in that list;
//! - the correlation between the rows' physical order and their values'
//!   order.
//!
//! Keys longer than [`WIDTH_THRESHOLD`] bytes take part in the width and
//! the NULL fraction only, as in PostgreSQL.

use crate::deform::Deformer;
use crate::error::Result;
use crate::func::random::splitmix64;
use crate::sortkey::{encode_value, KeyOrder};
use crate::vector::{Batch, Data, Vector};
use std::sync::Arc;
use tusk_storage::heap::{self, Visibility, VisibleItem};
use tusk_storage::statistics::ColumnStatistics;
use tusk_storage::{DataType, Database, Snapshot};

/// PostgreSQL's `default_statistics_target`.
pub const DEFAULT_STATISTICS_TARGET: usize = 100;

/// Values wider than this (as keys) are left out of the MCV list and the
/// histogram (PostgreSQL's `WIDTH_THRESHOLD`).
pub const WIDTH_THRESHOLD: usize = 1024;

/// Rows sampled for a statistics target (PostgreSQL's `300 × target`).
pub fn sample_rows_for(target: usize) -> usize {
    300 * target.max(1)
}

/// A table's sample.
pub struct Sample {
    /// The sampled rows, with the requested columns, in physical order.
    pub rows: Batch,
    /// Estimated live rows of the whole table.
    pub total_rows: f64,
    /// Blocks of the table when it was sampled.
    pub pages: u32,
}

/// A small deterministic generator (splitmix64).
pub(crate) struct Rng(u64);

impl Rng {
    /// The generator of table `oid`'s sample.
    pub(crate) fn seeded(oid: u32) -> Rng {
        Rng(0x5eed_0000_0000_0000 ^ u64::from(oid))
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (splitmix64(&mut self.0) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        ((splitmix64(&mut self.0) as u128 * n as u128) >> 64) as u64
    }
}

/// Up to `k` of the positions `0..n`, in order, each equally likely
/// (Knuth's algorithm S).
pub(crate) fn choose_positions(n: u64, k: usize, rng: &mut Rng) -> Vec<u64> {
    let mut needed = (k as u64).min(n);
    let mut out = Vec::with_capacity(needed as usize);
    for b in 0..n {
        if needed == 0 {
            break;
        }
        let left = (n - b) as f64;
        if rng.unit() * left < needed as f64 {
            out.push(b);
            needed -= 1;
        }
    }
    out
}

/// Up to `k` of the blocks `0..n`, in order, each equally likely.
fn choose_blocks(n: u32, k: usize, rng: &mut Rng) -> Vec<u32> {
    choose_positions(u64::from(n), k, rng)
        .into_iter()
        .map(|b| b as u32)
        .collect()
}

/// Samples up to `target_rows` rows of table `oid` (column types
/// `table_types`) as `snapshot` sees them, keeping attributes `columns`.
pub fn sample_table(
    db: &Arc<Database>,
    snapshot: &Snapshot,
    oid: u32,
    table_types: &[DataType],
    columns: &[usize],
    target_rows: usize,
) -> Result<Sample> {
    let pages = db.nblocks(oid)?;
    let mut rng = Rng::seeded(oid);
    let blocks = choose_blocks(pages, target_rows, &mut rng);
    let mut vis = Visibility::new(&db.txn, snapshot.clone());
    let mut items: Vec<VisibleItem> = Vec::new();
    // Stage two: a reservoir of (block index, visible tuple index).
    let mut reservoir: Vec<(u32, u32)> = Vec::with_capacity(target_rows);
    let mut seen = 0u64;
    for (bi, &block) in blocks.iter().enumerate() {
        let n =
            heap::scan_page_items(&db.pool, oid, block, &mut vis, &mut items, 0, |_, it, _| {
                it.len()
            })?;
        for i in 0..n as u32 {
            if reservoir.len() < target_rows {
                reservoir.push((bi as u32, i));
            } else {
                let j = rng.below(seen + 1);
                if (j as usize) < target_rows {
                    reservoir[j as usize] = (bi as u32, i);
                }
            }
            seen += 1;
        }
    }
    reservoir.sort_unstable();
    let deform = Deformer::new(table_types, columns, false).detoasting(db.clone());
    let mut cols = deform.columns(reservoir.len());
    let mut chosen: Vec<VisibleItem> = Vec::new();
    let mut at = 0;
    while at < reservoir.len() {
        let bi = reservoir[at].0;
        let run = reservoir[at..].iter().take_while(|r| r.0 == bi).count();
        let want = &reservoir[at..at + run];
        let block = blocks[bi as usize];
        heap::scan_page_items(
            &db.pool,
            oid,
            block,
            &mut vis,
            &mut items,
            deform.dense_natts(),
            |page, visible, dense| {
                chosen.clear();
                chosen.extend(
                    want.iter()
                        .filter_map(|&(_, i)| visible.get(i as usize).copied()),
                );
                deform.push_page(&mut cols, page, &chosen, dense, block);
            },
        )?;
        at += run;
    }
    if let Some(e) = deform.take_error() {
        return Err(e.into());
    }
    let len = cols.first().map_or(0, Vector::len);
    let total_rows = if blocks.is_empty() {
        0.0
    } else {
        (seen as f64 / blocks.len() as f64 * f64::from(pages)).round()
    };
    Ok(Sample {
        rows: Batch::new(cols, len),
        total_rows,
        pages,
    })
}

/// The statistics of one sampled column of type `ty` (see the module doc);
/// `total_rows` is the table's estimated row count, `target` the statistics
/// target (the MCV list and histogram size).
pub fn column_statistics(
    v: &Vector,
    ty: DataType,
    total_rows: f64,
    target: usize,
) -> ColumnStatistics {
    let n = v.len();
    if n == 0 {
        return ColumnStatistics::default();
    }
    let order = KeyOrder::asc(ty);
    let mut scratch = String::new();
    let mut key = Vec::new();
    // (key, sample position) of each non-NULL value narrow enough to count.
    let mut keys: Vec<(Vec<u8>, u32)> = Vec::with_capacity(n);
    let (mut nulls, mut width, mut too_wide) = (0usize, 0f64, 0usize);
    for row in 0..n {
        if v.is_null(row) {
            nulls += 1;
            continue;
        }
        width += value_width(v, row, ty);
        key.clear();
        encode_value(v, row, order, &mut key, &mut scratch);
        if key.len() > WIDTH_THRESHOLD {
            too_wide += 1;
            continue;
        }
        keys.push((key.clone(), row as u32));
    }
    let nonnull = n - nulls;
    let null_frac = nulls as f64 / n as f64;
    let mut stats = ColumnStatistics {
        null_frac,
        avg_width: if nonnull > 0 {
            width / nonnull as f64
        } else {
            0.0
        },
        ..ColumnStatistics::default()
    };
    if keys.is_empty() {
        return stats;
    }
    keys.sort_unstable();
    // Runs of equal keys: (first index in `keys`, count).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, (k, _)) in keys.iter().enumerate() {
        match runs.last_mut() {
            Some((start, count)) if keys[*start].0 == *k => *count += 1,
            _ => runs.push((i, 1)),
        }
    }
    let d = runs.len() as f64;
    let f1 = runs.iter().filter(|r| r.1 == 1).count() as f64;
    let sampled = (keys.len() + too_wide) as f64;
    let total_rows = total_rows.max(n as f64);
    let all_seen = f1 == 0.0 && too_wide == 0;
    stats.n_distinct = if f1 == d && too_wide == 0 {
        // Every value once: a unique column, as far as the sample tells.
        -(1.0 - null_frac)
    } else if all_seen {
        d
    } else {
        let numer = sampled * d;
        let denom = (sampled - f1) + f1 * sampled / total_rows;
        let nonnull_rows = total_rows * (1.0 - null_frac);
        (numer / denom).max(d).min(nonnull_rows).floor()
    };
    if stats.n_distinct > 0.1 * total_rows {
        stats.n_distinct = -(stats.n_distinct / total_rows).min(1.0);
    }
    // The most common values.
    let mut by_count: Vec<(usize, usize)> = runs.iter().copied().filter(|r| r.1 > 1).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let keep = if all_seen && runs.len() <= target {
        runs.len()
    } else {
        by_count.truncate(target);
        let ndistinct = if stats.n_distinct < 0.0 {
            -stats.n_distinct * total_rows
        } else {
            stats.n_distinct
        };
        mcv_count(&by_count, ndistinct, null_frac, n as f64, total_rows)
    };
    let mcv_runs: Vec<(usize, usize)> = if all_seen && runs.len() <= target {
        let mut r = runs.clone();
        r.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        r
    } else {
        by_count[..keep].to_vec()
    };
    stats.mcv = mcv_runs
        .iter()
        .map(|&(start, count)| (keys[start].0.clone(), count as f64 / n as f64))
        .collect();
    // The histogram over the values left out of the MCV list.
    let in_mcv: std::collections::HashSet<usize> = mcv_runs.iter().map(|r| r.0).collect();
    let rest: Vec<&(usize, usize)> = runs.iter().filter(|r| !in_mcv.contains(&r.0)).collect();
    if rest.len() >= 2 {
        let values: usize = rest.iter().map(|r| r.1).sum();
        let bounds = (target + 1).min(rest.len());
        // Walk the remaining values in order; bound j sits at value
        // position j·(values−1)/(bounds−1).
        let mut hist = Vec::with_capacity(bounds);
        let (mut pos, mut ri) = (0usize, 0usize);
        for j in 0..bounds {
            let want = j * (values - 1) / (bounds - 1);
            while pos + rest[ri].1 <= want {
                pos += rest[ri].1;
                ri += 1;
            }
            let k = &keys[rest[ri].0].0;
            if hist.last() != Some(k) {
                hist.push(k.clone());
            }
        }
        if hist.len() >= 2 {
            stats.histogram = hist;
        }
    }
    stats.correlation = correlation(&keys);
    stats
}

/// How many of the most common candidates (`(first, count)`, by count
/// descending) to keep: PostgreSQL 15's `analyze_mcv_list`. The least
/// common candidate stays (and with it all the others) when its sample
/// count is more than two standard errors above what it would show at the
/// frequency the values outside the list are given (the rest of the
/// non-NULL rows spread over the rest of the distinct values); otherwise
/// it is dropped and the next one is tested. The standard error is the
/// hypergeometric one of a value whose population count is what its
/// sample count suggests (a sample without replacement), so a value seen
/// only two or three times in a large table's sample is not significant.
/// A sample of the whole table keeps every candidate.
fn mcv_count(
    candidates: &[(usize, usize)],
    ndistinct: f64,
    null_frac: f64,
    sample_rows: f64,
    total_rows: f64,
) -> usize {
    let mut keep = candidates.len();
    if sample_rows >= total_rows || total_rows <= 1.0 {
        return keep;
    }
    // The counts of the candidates more common than the one tested.
    let mut above: f64 = candidates
        .iter()
        .take(keep.saturating_sub(1))
        .map(|c| c.1 as f64)
        .sum();
    while keep > 0 {
        let mut selec = (1.0 - above / sample_rows - null_frac).clamp(0.0, 1.0);
        let other = ndistinct - (keep - 1) as f64;
        if other > 1.0 {
            selec /= other;
        }
        let count = candidates[keep - 1].1 as f64;
        let (n, big_n) = (sample_rows, total_rows);
        let k = big_n * count / n;
        let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
        let stddev = variance.max(0.0).sqrt();
        if count > selec * n + 2.0 * stddev + 0.5 {
            break;
        }
        keep -= 1;
        if keep == 0 {
            break;
        }
        above -= candidates[keep - 1].1 as f64;
    }
    keep
}

/// Pearson correlation between sample position and rank of the sorted
/// keys (`keys` sorted, each with its sample position).
fn correlation(keys: &[(Vec<u8>, u32)]) -> f64 {
    let n = keys.len() as f64;
    if keys.len() < 2 {
        return 0.0;
    }
    // Ranks and positions of the kept values, both renumbered 0..n.
    let mut pos: Vec<u32> = keys.iter().map(|k| k.1).collect();
    pos.sort_unstable();
    let (mut sxy, mut sx) = (0f64, 0f64);
    let mut sxx = 0f64;
    for (rank, (_, p)) in keys.iter().enumerate() {
        let y = pos.binary_search(p).unwrap_or(0) as f64;
        let x = rank as f64;
        sxy += x * y;
        sx += x;
        sxx += x * x;
    }
    let num = n * sxy - sx * sx;
    let den = n * sxx - sx * sx;
    if den == 0.0 {
        0.0
    } else {
        (num / den).clamp(-1.0, 1.0)
    }
}

/// Bytes a value takes in storage (strings: their bytes plus the length).
fn value_width(v: &Vector, row: usize, ty: DataType) -> f64 {
    match &v.data {
        Data::Text(s) | Data::Bytea(s) => (s.get(row).len() + 2) as f64,
        _ => ty.fixed_width().unwrap_or(8) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn ints(vals: &[Option<i32>]) -> Vector {
        let mut v = Vector::with_capacity(DataType::Int4, vals.len());
        for x in vals {
            v.push_value(&x.map_or(Value::Null, Value::Int4));
        }
        v
    }

    /// A unique column: n_distinct -1 (less the NULLs), no MCVs, a histogram.
    #[test]
    fn unique_column() {
        let mut vals: Vec<Option<i32>> = (0..1000).map(Some).collect();
        vals.extend([None; 250]);
        let s = column_statistics(&ints(&vals), DataType::Int4, 1250.0, 100);
        assert_eq!(s.null_frac, 0.2);
        assert_eq!(s.n_distinct, -0.8);
        assert!(s.mcv.is_empty());
        assert_eq!(s.histogram.len(), 101);
        assert!(s.histogram.windows(2).all(|w| w[0] < w[1]));
        assert!(s.correlation > 0.99);
    }

    /// Few values all seen several times: all of them are MCVs, with their
    /// frequencies, and there is no histogram.
    #[test]
    fn few_values() {
        let vals: Vec<Option<i32>> = (0..1000).map(|i| Some(i % 4)).collect();
        let s = column_statistics(&ints(&vals), DataType::Int4, 1000.0, 100);
        assert_eq!(s.n_distinct, 4.0);
        assert_eq!(s.mcv.len(), 4);
        assert!(s.mcv.iter().all(|(_, f)| (*f - 0.25).abs() < 1e-9));
        assert!(s.histogram.is_empty());
    }

    /// A large table's key seen once or twice per value in the sample
    /// (TPC-H's `l_orderkey`): a value seen twice is not significantly
    /// more common than the rest, so there are no MCVs; one seen 40 times
    /// is.
    #[test]
    fn repeated_keys_are_not_common_values() {
        let mut vals: Vec<Option<i32>> = (0..1000).flat_map(|i| [Some(i), Some(i)]).collect();
        vals.extend((1000..29_000).map(Some));
        let s = column_statistics(&ints(&vals), DataType::Int4, 6_000_000.0, 100);
        assert!(s.mcv.is_empty(), "{:?}", s.mcv);
        vals.extend([Some(-1); 40]);
        let s = column_statistics(&ints(&vals), DataType::Int4, 6_000_000.0, 100);
        assert_eq!(s.mcv.len(), 1);
    }

    /// A skewed column: the frequent value is an MCV, the long tail goes
    /// into the histogram, and n_distinct is estimated above what was seen.
    #[test]
    fn skewed_column() {
        let mut vals: Vec<Option<i32>> = vec![Some(-1); 3000];
        vals.extend((0..7000).map(Some));
        let s = column_statistics(&ints(&vals), DataType::Int4, 1_000_000.0, 100);
        assert_eq!(s.mcv.len(), 1);
        assert!((s.mcv[0].1 - 0.3).abs() < 1e-9);
        assert!(!s.histogram.is_empty());
        assert!(s.n_distinct < 0.0 || s.n_distinct > 7000.0);
    }

    #[test]
    fn block_choice_is_uniform_and_ordered() {
        let mut rng = Rng(1);
        let b = choose_blocks(1000, 100, &mut rng);
        assert_eq!(b.len(), 100);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(choose_blocks(5, 100, &mut rng), vec![0, 1, 2, 3, 4]);
        assert!(choose_blocks(0, 100, &mut rng).is_empty());
    }
}
