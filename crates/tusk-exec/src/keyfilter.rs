//! Join key filters: a hash join's build keys, handed down to the
//! columnar scan that feeds its probe side.
//!
//! A hash join whose probe rows without a match produce nothing (inner,
//! right, semi, right semi, right anti: `JoinKind::keeps_unmatched_outer`
//! is false) may drop such rows anywhere below it. When its probe side is
//! a columnar scan, the planner gives the scan the join's probe keys
//! (`ColumnarSpec::join_keys`), and the join, as it reads its build side,
//! sets the bits of every build key's hash in a [`KeyFilter`]. Once the
//! whole build side has been read the join publishes the filter; from then
//! on the scan computes the keys of the rows its own filter kept, and a row
//! whose bits are not all set cannot match and is dropped before the scan
//! decodes its other columns (the join never sees it). A row whose bits are
//! set may still not match (a false positive), and the join decides it as
//! before: the filter only ever removes rows that could not match, so the
//! join's result is unchanged. A NULL key matches nothing and is dropped.
//!
//! The filter is a *blocked Bloom filter*: a power of two of 64-bit words,
//! about 16 bits per expected build row but at most an eighth of the
//! join's memory limit (and 8 MB); a key's (re-mixed) hash picks one
//! word and two bits in it, so a test costs one cache line. At 16 bits per
//! key, two bits give about 1.5% false positives; a build side larger than
//! the planner expected fills the filter further, which costs only
//! selectivity. The hash is the one the join's table uses
//! (`hashjoin::key_hashes`), except that several integer keys combine
//! their values' hashes without encoding rows (see `key_hashes`); equal
//! keys of the two sides, with their types as the join compares them, set
//! and test the same bits.
//!
//! ## Who builds, who reads
//!
//! The scan runs in the same participant as the join (it is the join's
//! probe child). A serial join registers a fresh filter under the scan's
//! plan id in its participant's [`LocalFilters`] when it is built (a join
//! built again, in a subplan's next run, replaces it); the scan looks the
//! filter up when it reads its first batch, after the join exists. A
//! Parallel Hash Join's participants share one filter, which lives in the
//! parallel scan's shared state (`ColumnarShared`); each participant sets
//! the bits of its share of the build rows, and the participant that ends
//! the build (the last at the build barrier) publishes it.
//!
//! ## Memory ordering
//!
//! Bits are set with relaxed `fetch_or`s. Publishing is a release store of
//! `ready`, reading an acquire load: every bit set before the publish (by
//! this thread, or by another one that passed the build barrier, whose lock
//! orders its stores before the publisher's) is seen by a reader that sees
//! `ready`. Before `ready` the scan does not test at all, so it never acts
//! on a half-built filter. Bits only ever go from 0 to 1.
//!
//! ## When it does not pay
//!
//! The scan counts the rows it tests and keeps; once a participant has
//! tested [`ADAPT_ROWS`] rows and more than [`KEEP_RATE_LIMIT`] of them
//! passed, it stops testing (the join would have matched nearly all of them
//! anyway).

use crate::hashkey::{hash_i64, int_key, is_int_key};
use crate::vector::Vector;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Bits per expected build row.
const BITS_PER_ROW: f64 = 16.0;
/// Smallest and largest filter, in 64-bit words (512 bytes, 8 MB).
const MIN_WORDS: usize = 64;
const MAX_WORDS: usize = 1 << 20;
/// Rows a scan tests before it may decide the filter does not pay.
pub const ADAPT_ROWS: u64 = 64 * 1024;
/// Share of tested rows kept above which a scan stops testing.
pub const KEEP_RATE_LIMIT: f64 = 0.9;

/// The filters of serial joins in one participant, by the plan id of the
/// scan each filters.
pub type LocalFilters = Rc<RefCell<HashMap<usize, Arc<KeyFilter>>>>;

/// A blocked Bloom filter of a hash join's build keys (see the module doc).
pub struct KeyFilter {
    words: Box<[AtomicU64]>,
    /// `64 - log2(words.len())`: the shift that takes a word index from the
    /// top bits of a mixed hash.
    shift: u32,
    ready: AtomicBool,
}

impl std::fmt::Debug for KeyFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyFilter")
            .field("words", &self.words.len())
            .field("ready", &self.is_ready())
            .finish()
    }
}

impl KeyFilter {
    /// An empty, unpublished filter sized for `rows` expected build rows,
    /// of at most `max_bytes` (at least [`MIN_WORDS`] words).
    pub fn for_rows(rows: f64, max_bytes: usize) -> KeyFilter {
        let most = (max_bytes / 8).clamp(MIN_WORDS, MAX_WORDS);
        // The largest power of two within `most`.
        let most = 1usize << (usize::BITS - 1 - most.leading_zeros());
        let bits = (rows.max(1.0) * BITS_PER_ROW).min((most * 64) as f64);
        let words = ((bits / 64.0).ceil() as usize)
            .next_power_of_two()
            .clamp(MIN_WORDS, most);
        KeyFilter {
            words: (0..words).map(|_| AtomicU64::new(0)).collect(),
            shift: 64 - words.trailing_zeros(),
            ready: AtomicBool::new(false),
        }
    }

    /// The word and the two bits of hash `h`.
    #[inline]
    fn place(&self, h: u64) -> (usize, u64) {
        let m = tusk_chash::mix64(h);
        let word = (m >> self.shift) as usize;
        let bits = (1u64 << (m & 63)) | (1u64 << ((m >> 6) & 63));
        (word, bits)
    }

    /// Sets the bits of each non-NULL key of `hashes`.
    fn insert(&self, hashes: &[Option<u64>]) {
        for h in hashes.iter().flatten() {
            let (w, bits) = self.place(*h);
            self.words[w].fetch_or(bits, Ordering::Relaxed);
        }
    }

    /// Every build key is in: readers may test from now on.
    pub fn publish(&self) {
        self.ready.store(true, Ordering::Release);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Whether a key of hash `h` (`None`: NULL) may be among the build keys.
    #[inline]
    pub fn may_contain(&self, h: Option<u64>) -> bool {
        let Some(h) = h else {
            return false;
        };
        let (w, bits) = self.place(h);
        self.words[w].load(Ordering::Relaxed) & bits == bits
    }

    /// Per row of the key vectors `kv` (`n` rows), whether it may match.
    pub fn test(&self, kv: &[Vector], n: usize) -> Vec<bool> {
        key_hashes(kv, n)
            .into_iter()
            .map(|h| self.may_contain(h))
            .collect()
    }

    /// Sets the bits of the rows of key vectors `kv` (`n` rows).
    pub fn insert_keys(&self, kv: &[Vector], n: usize) {
        self.insert(&key_hashes(kv, n));
    }
}

/// The filter's hash of each of the `n` rows of key vectors `kv` (`None`:
/// a NULL key). Several integer keys (`integer`, `bigint`, `smallint`,
/// `date`, ...) combine their values' hashes, column by column, without
/// encoding rows; other keys take the join table's hash
/// (`hashjoin::key_hashes`). Both sides of a join have keys of the same
/// types, so equal keys get equal hashes.
fn key_hashes(kv: &[Vector], n: usize) -> Vec<Option<u64>> {
    if kv.len() < 2 || !kv.iter().all(|k| is_int_key(std::slice::from_ref(k))) {
        return crate::hashjoin::key_hashes(kv, n);
    }
    let mut out = vec![Some(0u64); n];
    for k in kv {
        for (i, h) in out.iter_mut().enumerate() {
            *h = match (*h, int_key(k, i)) {
                (Some(h), Some(v)) => Some(h.rotate_left(29) ^ hash_i64(v)),
                _ => None,
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::Data;

    fn ints(v: &[i32]) -> Vec<Vector> {
        vec![Vector::new(Data::Int4(v.to_vec()), None)]
    }

    #[test]
    fn build_keys_always_pass_and_most_others_do_not() {
        let f = KeyFilter::for_rows(1000.0, 1 << 20);
        let keys: Vec<i32> = (0..1000).map(|i| i * 7).collect();
        f.insert_keys(&ints(&keys), keys.len());
        f.publish();
        assert!(f.is_ready());
        assert!(f.test(&ints(&keys), keys.len()).iter().all(|&p| p));
        let others: Vec<i32> = (0..100_000).map(|i| i * 7 + 3).collect();
        let passed = f
            .test(&ints(&others), others.len())
            .iter()
            .filter(|&&p| p)
            .count();
        // About 1.5% false positives at 16 bits per key.
        assert!(passed < 5_000, "{passed} false positives");
    }

    #[test]
    fn null_keys_never_pass_and_int_widths_agree() {
        let f = KeyFilter::for_rows(10.0, 1 << 20);
        f.insert_keys(&ints(&[5, 6]), 2);
        f.publish();
        let with_null = vec![Vector::new(Data::Int4(vec![5, 0]), Some(vec![false, true]))];
        assert_eq!(f.test(&with_null, 2), vec![true, false]);
        // A bigint probe key finds an integer build key, as the join does.
        let wide = vec![Vector::new(Data::Int8(vec![6]), None)];
        assert_eq!(f.test(&wide, 1), vec![true]);
    }

    #[test]
    fn several_keys_pass_only_together() {
        let f = KeyFilter::for_rows(100.0, 1 << 20);
        let build = |a: Vec<i32>, b: Vec<i64>| {
            vec![
                Vector::new(Data::Int4(a), None),
                Vector::new(Data::Int8(b), None),
            ]
        };
        f.insert_keys(&build(vec![1, 2], vec![10, 20]), 2);
        f.publish();
        assert_eq!(
            f.test(&build(vec![1, 2, 1, 2], vec![10, 20, 20, 10]), 4)[..2],
            [true, true]
        );
        // Text keys beside integers take the row encoding's hash.
        let mixed = |a: Vec<i32>, t: &[&str]| {
            let mut s = crate::vector::Strings::with_capacity(t.len(), 8);
            t.iter().for_each(|x| s.push(x.as_bytes()));
            vec![
                Vector::new(Data::Int4(a), None),
                Vector::new(Data::Text(s), None),
            ]
        };
        let g = KeyFilter::for_rows(100.0, 1 << 20);
        g.insert_keys(&mixed(vec![1], &["x"]), 1);
        g.publish();
        assert_eq!(g.test(&mixed(vec![1], &["x"]), 1), [true]);
        let nulls = vec![
            Vector::new(Data::Int4(vec![1]), Some(vec![true])),
            Vector::new(Data::Int8(vec![10]), None),
        ];
        assert_eq!(f.test(&nulls, 1), [false]);
    }

    #[test]
    fn an_empty_build_side_passes_nothing() {
        let f = KeyFilter::for_rows(0.0, 1 << 20);
        f.publish();
        assert_eq!(f.test(&ints(&[1, 2, 3]), 3), vec![false; 3]);
    }

    #[test]
    fn unpublished_filters_are_not_ready() {
        let f = KeyFilter::for_rows(1e12, usize::MAX);
        assert!(!f.is_ready());
        assert_eq!(f.words.len(), MAX_WORDS);
        // The memory cap wins over the estimate.
        assert_eq!(KeyFilter::for_rows(1e12, 100_000).words.len(), 8192);
        assert_eq!(KeyFilter::for_rows(1e12, 0).words.len(), MIN_WORDS);
    }
}
