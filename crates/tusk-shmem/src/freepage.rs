//! A free-page manager with coalescing: which runs of pages in `[0, npages)`
//! are free.
//!
//! Free runs are kept twice: by first page (to find neighbours when a run is
//! returned, so that adjacent free runs always merge into one) and by
//! (length, first page) (to find the smallest run that fits, best fit, which
//! keeps large runs intact for large requests). Both operations are
//! O(log runs). The manager only does bookkeeping; it never touches the pages.
//!
//! Invariants, asserted as they are relied on:
//! * free runs never overlap and never touch (touching runs are merged);
//! * a run is freed only if no part of it is free already.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default, Clone)]
pub struct FreePages {
    by_start: BTreeMap<usize, usize>,
    by_size: BTreeSet<(usize, usize)>,
    free: usize,
}

impl FreePages {
    /// A manager with no free pages.
    pub fn new() -> FreePages {
        FreePages::default()
    }

    /// A manager whose pages `[first, first + n)` are free.
    pub fn with_free(first: usize, n: usize) -> FreePages {
        let mut f = FreePages::new();
        if n > 0 {
            f.free(first, n);
        }
        f
    }

    /// Total free pages.
    pub fn free_pages(&self) -> usize {
        self.free
    }

    /// Number of separate free runs.
    pub fn runs(&self) -> usize {
        self.by_start.len()
    }

    /// Length of the largest free run.
    pub fn largest(&self) -> usize {
        self.by_size.last().map_or(0, |&(n, _)| n)
    }

    /// Free runs in page order, `(first, len)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.by_start.iter().map(|(&s, &n)| (s, n))
    }

    /// Takes `n > 0` pages from the smallest run that holds them.
    pub fn allocate(&mut self, n: usize) -> Option<usize> {
        assert!(n > 0);
        let &(len, start) = self.by_size.range((n, 0)..).next()?;
        self.remove(start, len);
        if len > n {
            self.insert(start + n, len - n);
        }
        self.free -= n;
        Some(start)
    }

    /// Returns `[start, start + n)`, merging it with free neighbours.
    pub fn free(&mut self, start: usize, n: usize) {
        assert!(n > 0);
        let mut first = start;
        let mut len = n;
        if let Some((&ps, &pn)) = self.by_start.range(..start).next_back() {
            assert!(
                ps + pn <= start,
                "double free of pages {start}..{}",
                start + n
            );
            if ps + pn == start {
                self.remove(ps, pn);
                first = ps;
                len += pn;
            }
        }
        if let Some((&ns, &nn)) = self.by_start.range(start..).next() {
            assert!(
                start + n <= ns,
                "double free of pages {start}..{}",
                start + n
            );
            if start + n == ns {
                self.remove(ns, nn);
                len += nn;
            }
        }
        self.insert(first, len);
        self.free += n;
    }

    fn insert(&mut self, start: usize, len: usize) {
        self.by_start.insert(start, len);
        self.by_size.insert((len, start));
    }

    fn remove(&mut self, start: usize, len: usize) {
        self.by_start.remove(&start);
        self.by_size.remove(&(len, start));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn best_fit_and_coalescing() {
        let mut f = FreePages::with_free(0, 100);
        let a = f.allocate(10).unwrap();
        let b = f.allocate(20).unwrap();
        let c = f.allocate(30).unwrap();
        assert_eq!((a, b, c), (0, 10, 30));
        f.free(a, 10);
        f.free(c, 30);
        assert_eq!(f.runs(), 2);
        // Best fit: the 10-page hole, not the 70-page tail.
        assert_eq!(f.allocate(5), Some(0));
        f.free(0, 5);
        f.free(b, 20);
        assert_eq!(f.runs(), 1);
        assert_eq!(f.largest(), 100);
        assert_eq!(f.allocate(101), None);
    }

    #[test]
    #[should_panic(expected = "double free")]
    fn double_free_is_caught() {
        let mut f = FreePages::with_free(0, 10);
        f.free(5, 1);
    }

    proptest! {
        /// Random allocate/free sequences: allocated runs never overlap each
        /// other or a free run, and freeing everything leaves one run.
        #[test]
        fn no_overlap_and_everything_coalesces(
            ops in proptest::collection::vec((1usize..40, any::<bool>(), any::<prop::sample::Index>()), 1..200)
        ) {
            const N: usize = 1000;
            let mut f = FreePages::with_free(0, N);
            let mut live: Vec<(usize, usize)> = Vec::new();
            for (n, alloc, pick) in ops {
                if alloc || live.is_empty() {
                    if let Some(s) = f.allocate(n) {
                        prop_assert!(s + n <= N);
                        live.push((s, n));
                    } else {
                        prop_assert!(f.largest() < n);
                    }
                } else {
                    let (s, n) = live.swap_remove(pick.index(live.len()));
                    f.free(s, n);
                }
                let mut all: Vec<(usize, usize)> = live.clone();
                all.extend(f.iter());
                all.sort();
                for w in all.windows(2) {
                    prop_assert!(w[0].0 + w[0].1 <= w[1].0);
                }
                let used: usize = live.iter().map(|r| r.1).sum();
                prop_assert_eq!(used + f.free_pages(), N);
                for w in f.iter().collect::<Vec<_>>().windows(2) {
                    prop_assert!(w[0].0 + w[0].1 < w[1].0, "touching free runs not merged");
                }
            }
            for (s, n) in live.drain(..) {
                f.free(s, n);
            }
            prop_assert_eq!(f.runs(), 1);
            prop_assert_eq!(f.largest(), N);
        }
    }
}
