//! The join order of a region of inner joins by dynamic programming over
//! the subsets of its leaves, as PostgreSQL's `standard_join_search` (see
//! `join` for regions and the greedy order of larger ones).
//!
//! The best plan of each subset is the cheapest join of two of its parts'
//! best plans, bushy trees included, considering only splits that an
//! equality connects (a cross join only for a subset that no equality
//! connects). The equalities between plain columns are pooled into the
//! region's equivalence classes (`equivalence`), so a split is connected
//! when a class has members on both sides, whichever equalities were
//! written; the other conditions stay as written.
//!
//! The rows of a subset are the product of its leaves' rows and of the
//! selectivities of the conditions inside it, whatever the order: for the
//! classes, the keys of a spanning forest over the subset's leaves; keys
//! between the same two leaves are estimated together, as a composite key
//! (`keys_selectivity`). So plans differ only in cost: each hash join
//! costs its inputs, building the side that costs less, probing the other,
//! comparing each probe row with half its bucket (`bucket_cost`, as
//! PostgreSQL's `final_cost_hashjoin`) and producing its rows; where one
//! part is a single leaf whose table has an index the keys between the
//! parts can probe, an index nested loop costs the other part and one
//! probe per row (`index_join`), as PostgreSQL's search weighs a
//! parameterised index path beside the hash joins.

use super::cost::{CPU_OPERATOR_COST, CPU_TUPLE_COST};
use super::equivalence::EquivalenceClasses;
use super::join::{equality_leaves, hash_join_cost, key_types, HashMemory};
use super::{Phys, Planner, Result};
use crate::logical::{expr_columns, ColumnId, JoinKind};
use std::collections::{HashMap, HashSet};
use tusk_exec::Expr;

/// The best plan found for one subset of a region's leaves.
#[derive(Clone, Copy)]
struct Best {
    cost: f64,
    rows: f64,
    /// The two parts joined (`0` for a single leaf).
    split: (u32, u32),
}

/// An equality key between two parts of a split: the first part's side
/// and leaf, the second's.
#[derive(Clone)]
struct SplitKey {
    a: Expr,
    b: Expr,
    a_leaf: usize,
    b_leaf: usize,
}

impl SplitKey {
    /// The same key seen from the other part.
    fn swapped(&self) -> SplitKey {
        SplitKey {
            a: self.b.clone(),
            b: self.a.clone(),
            a_leaf: self.b_leaf,
            b_leaf: self.a_leaf,
        }
    }
}

/// The non-empty proper subsets of bit set `s`.
fn proper_subsets(s: u32) -> impl Iterator<Item = u32> {
    let next = move |&a: &u32| (a > 1).then(|| (a - 1) & s);
    std::iter::successors(Some((s - 1) & s), next).take_while(|&a| a > 0)
}

/// What identifies one key between two leaves for the estimate cache: a
/// written condition `(usize::MAX, k, 0)` or a class key's id.
type KeyId = (usize, usize, usize);

/// The keys between two leaves (smaller first): their ids and sides.
type LeafPairKeys = ((usize, usize), Vec<KeyId>, Vec<(Expr, Expr)>);

/// A region's leaves and conditions as the search sees them.
struct Region<'r> {
    conds: &'r [Expr],
    classes: &'r EquivalenceClasses,
    /// Each condition's leaves, a bit mask (0: no leaf column).
    masks: Vec<u32>,
    /// For each condition not in a class that equates an expression of
    /// one leaf with one of another: the two leaves (smaller first) and
    /// their sides.
    cond_keys: Vec<Option<(usize, usize, Expr, Expr)>>,
    /// The selectivity of each other condition over two or more leaves.
    sel: Vec<f64>,
    /// Each leaf's estimated rows and width.
    rows: Vec<f64>,
    widths: Vec<f64>,
}

impl Region<'_> {
    /// Whether condition `k`, not in a class, spans sets `a` and `b`:
    /// reads both and nothing else.
    fn spans(&self, k: usize, a: u32, b: u32) -> bool {
        let m = self.masks[k];
        !self.classes.absorbed[k] && m & !(a | b) == 0 && m & a != 0 && m & b != 0
    }

    /// Whether an equality joins sets `a` and `b`.
    fn connected(&self, a: u32, b: u32) -> bool {
        self.classes.joins(a, b)
            || (0..self.conds.len()).any(|k| self.cond_keys[k].is_some() && self.spans(k, a, b))
    }

    /// The equality keys between sets `a` and `b` (`a`'s sides first),
    /// and the number of other conditions between them.
    fn keys_between(&self, a: u32, b: u32) -> (Vec<SplitKey>, usize) {
        let mut keys = Vec::new();
        let mut residual = 0;
        for k in 0..self.conds.len() {
            if !self.spans(k, a, b) {
                continue;
            }
            match &self.cond_keys[k] {
                Some((la, lb, l, r)) => {
                    let key = SplitKey {
                        a: l.clone(),
                        b: r.clone(),
                        a_leaf: *la,
                        b_leaf: *lb,
                    };
                    keys.push(if a & 1 << la != 0 { key } else { key.swapped() });
                }
                None => residual += 1,
            }
        }
        for key in self.classes.pair_keys(a, b) {
            keys.push(SplitKey {
                a: key.left,
                b: key.right,
                a_leaf: key.left_leaf,
                b_leaf: key.right_leaf,
            });
        }
        (keys, residual)
    }

    fn width_of(&self, s: u32) -> f64 {
        (0..self.rows.len())
            .filter(|i| s & 1 << i != 0)
            .map(|i| self.widths[i])
            .sum()
    }
}

impl Planner<'_> {
    /// The cost of comparing each of `probe_rows` probe rows with half
    /// its bucket of a hash table of `build_rows` rows on `build_keys`, as
    /// PostgreSQL's `final_cost_hashjoin`: a key of few distinct values
    /// on the build side makes building it dearer.
    pub(super) fn bucket_cost(&self, build_rows: f64, probe_rows: f64, build_keys: &[Expr]) -> f64 {
        let keys = build_keys.len().max(1) as f64;
        let fraction = self.hash_bucket_fraction(build_keys, build_rows);
        super::cost::bucket_compare_cost(probe_rows, build_rows, fraction, CPU_OPERATOR_COST * keys)
    }

    /// The rows of leaf subset `s` (see the module doc); `cache` keeps
    /// the selectivity of each group of keys between two leaves.
    fn subset_rows(
        &self,
        region: &Region<'_>,
        s: u32,
        cache: &mut HashMap<Vec<KeyId>, f64>,
    ) -> f64 {
        let n = region.rows.len();
        let mut r: f64 = (0..n)
            .filter(|i| s & 1 << i != 0)
            .map(|i| region.rows[i])
            .product();
        // Keys grouped by their two leaves.
        let mut groups: Vec<LeafPairKeys> = Vec::new();
        let mut add = |leaves: (usize, usize), id: KeyId, key: (Expr, Expr)| match groups
            .iter_mut()
            .find(|g| g.0 == leaves)
        {
            Some(g) => {
                g.1.push(id);
                g.2.push(key);
            }
            None => groups.push((leaves, vec![id], vec![key])),
        };
        for k in 0..region.conds.len() {
            let m = region.masks[k];
            if region.classes.absorbed[k] || m & !s != 0 || m.count_ones() < 2 {
                continue;
            }
            match &region.cond_keys[k] {
                Some((a, b, l, rt)) => add((*a, *b), (usize::MAX, k, 0), (l.clone(), rt.clone())),
                None => r *= region.sel[k],
            }
        }
        for key in region.classes.spanning_keys(s) {
            add(
                (key.left_leaf, key.right_leaf),
                key.id,
                (key.left, key.right),
            );
        }
        for ((a, b), mut ids, keys) in groups {
            ids.push((a, b, usize::MAX - 1));
            let sel = *cache
                .entry(ids)
                .or_insert_with(|| self.keys_selectivity(&keys, region.rows[a], region.rows[b]));
            r *= sel;
        }
        r.max(1.0)
    }

    /// The cost, beyond its outer side's, of joining leaf subset `outer`
    /// (best plan `o`) to single leaf `inner` as an index nested loop on
    /// `keys` (outer sides first) and `residual` other conditions, giving
    /// `out_rows` rows, if an index of the leaf's table serves the keys.
    /// The loop count is the rows of the leaves that supply the outer
    /// keys, when more than the outer side's (see `index_join`).
    fn probe_leaf_cost(
        &self,
        parts: &[Option<Phys>],
        region: &Region<'_>,
        inner: u32,
        (keys, residual): (&[SplitKey], usize),
        o: Best,
        out_rows: f64,
    ) -> Result<Option<f64>> {
        if inner.count_ones() != 1 {
            return Ok(None);
        }
        let leaf = inner.trailing_zeros() as usize;
        let loops = keys
            .iter()
            .map(|k| region.rows[k.a_leaf])
            .fold(o.rows, f64::max);
        let keys: Vec<(Expr, Expr)> = keys.iter().map(|k| (k.b.clone(), k.a.clone())).collect();
        self.index_probe_cost(&super::index_join::ProbeSide {
            kind: JoinKind::Inner,
            inner: parts[leaf].as_ref().expect("leaves are planned"),
            keys: &keys,
            residual,
            rows: out_rows,
            outer_rows: o.rows,
            loops,
        })
    }

    /// Dynamic programming over the subsets of `parts` (see the module
    /// doc); returns the joined plan and which of `conds` it placed.
    /// `leaf_conds` are the conditions the leaves filter themselves by,
    /// where the classes find their constants (with `conds`). With
    /// `above`, the columns read above the region, each join keeps only
    /// those and what the joins after it read (`narrow`).
    pub(super) fn join_by_subsets(
        &mut self,
        parts: &mut [Option<Phys>],
        conds: &[Expr],
        leaf_conds: &[Expr],
        above: Option<&HashSet<ColumnId>>,
    ) -> Result<(Phys, Vec<bool>)> {
        let n = parts.len();
        let leaf_of: HashMap<ColumnId, usize> = parts
            .iter()
            .enumerate()
            .flat_map(|(i, p)| p.as_ref().unwrap().cols.iter().map(move |&c| (c, i)))
            .collect();
        let mut classes = EquivalenceClasses::build(conds, &leaf_of);
        classes.add_constants(leaf_conds);
        classes.add_constants(conds);
        for (leaf, f) in classes.leaf_filters() {
            let p = parts[leaf].take().expect("a leaf");
            parts[leaf] = Some(self.filter(p, &f)?);
        }
        self.narrow_leaves(parts, conds, above);
        let masks: Vec<u32> = conds
            .iter()
            .map(|c| {
                expr_columns(c)
                    .iter()
                    .filter_map(|x| leaf_of.get(x))
                    .fold(0u32, |m, &i| m | 1 << i)
            })
            .collect();
        let mut cond_keys = vec![None; conds.len()];
        let mut sel = vec![1.0f64; conds.len()];
        for (k, c) in conds.iter().enumerate() {
            if classes.absorbed[k]
                || masks[k] == 0
                || expr_columns(c).iter().any(|x| !leaf_of.contains_key(x))
            {
                continue;
            }
            match equality_leaves(c, &leaf_of) {
                Some((a, b, l, r)) if a < b => cond_keys[k] = Some((a, b, l, r)),
                Some((a, b, l, r)) if a > b => cond_keys[k] = Some((b, a, r, l)),
                _ => sel[k] = self.selectivity(c),
            }
        }
        let region = Region {
            conds,
            classes: &classes,
            masks,
            cond_keys,
            sel,
            rows: parts
                .iter()
                .map(|p| p.as_ref().unwrap().plan.est.rows.max(1.0))
                .collect(),
            widths: parts
                .iter()
                .map(|p| f64::from(p.as_ref().unwrap().plan.est.width))
                .collect(),
        };
        let hash_mem = self.settings.hash_mem;
        let full: u32 = (1u32 << n) - 1;
        let mut best: Vec<Option<Best>> = vec![None; 1 << n];
        for i in 0..n {
            best[1 << i] = Some(Best {
                cost: parts[i].as_ref().unwrap().plan.est.total_cost,
                rows: region.rows[i],
                split: (0, 0),
            });
        }
        let mut cache = HashMap::new();
        for s in 1..=full {
            if s.count_ones() < 2 {
                continue;
            }
            let out_rows = self.subset_rows(&region, s, &mut cache);
            let mut found: Option<Best> = None;
            for pass in 0..2 {
                // Pass 0: splits an equality connects; pass 1 (only when
                // there is none): any split, a cross join.
                for a in proper_subsets(s) {
                    let b = s & !a;
                    if a >= b {
                        continue;
                    }
                    let (Some(x), Some(y)) = (best[a as usize], best[b as usize]) else {
                        continue;
                    };
                    if pass == 0 && !region.connected(a, b) {
                        continue;
                    }
                    let cost = x.cost + y.cost;
                    let (keys, residual) = region.keys_between(a, b);
                    let cost = if keys.is_empty() {
                        cost + x.rows * y.rows * CPU_OPERATOR_COST + out_rows * CPU_TUPLE_COST
                    } else {
                        let (wx, wy) = (region.width_of(a), region.width_of(b));
                        let a_keys: Vec<Expr> = keys.iter().map(|k| k.a.clone()).collect();
                        let b_keys: Vec<Expr> = keys.iter().map(|k| k.b.clone()).collect();
                        let hash = |build: (f64, f64, &[Expr]), probe: (f64, f64)| {
                            let types = key_types(build.2);
                            let memory =
                                HashMemory::new((build.0, build.1, &types), probe, hash_mem);
                            hash_join_cost(build.0, probe.0, keys.len(), out_rows, memory)
                                + self.bucket_cost(build.0, probe.0, build.2)
                        };
                        let mut join = hash((x.rows, wx, &a_keys), (y.rows, wy))
                            .min(hash((y.rows, wy, &b_keys), (x.rows, wx)));
                        join += cost;
                        // An index nested loop probing a leaf costs its
                        // outer side and the probes.
                        let swapped: Vec<SplitKey> = keys.iter().map(SplitKey::swapped).collect();
                        for (inner, o, ks) in [(b, x, &keys), (a, y, &swapped)] {
                            if let Some(c) = self.probe_leaf_cost(
                                parts,
                                &region,
                                inner,
                                (ks, residual),
                                o,
                                out_rows,
                            )? {
                                join = join.min(o.cost + c);
                            }
                        }
                        join
                    };
                    if found.is_none_or(|f| cost < f.cost) {
                        found = Some(Best {
                            cost,
                            rows: out_rows,
                            split: (a, b),
                        });
                    }
                }
                if found.is_some() {
                    break;
                }
            }
            best[s as usize] = found;
        }
        let mut used = classes.absorbed.clone();
        let plan = self.build_subset(full, &best, parts, &region, &mut used, above)?;
        Ok((plan, used))
    }

    /// The plan of subset `s` as `best` chose it, narrowed to `above` and
    /// what the joins after it read, when `above` is known.
    fn build_subset(
        &mut self,
        s: u32,
        best: &[Option<Best>],
        parts: &mut [Option<Phys>],
        region: &Region<'_>,
        used: &mut [bool],
        above: Option<&HashSet<ColumnId>>,
    ) -> Result<Phys> {
        if s.count_ones() == 1 {
            return Ok(parts[s.trailing_zeros() as usize]
                .take()
                .expect("each leaf is built once"));
        }
        let (a, b) = best[s as usize].expect("every subset has a plan").split;
        let left = self.build_subset(a, best, parts, region, used, above)?;
        let right = self.build_subset(b, best, parts, region, used, above)?;
        let mut on = Vec::new();
        for (k, c) in region.conds.iter().enumerate() {
            if !used[k] && region.masks[k] != 0 && region.masks[k] & !s == 0 {
                used[k] = true;
                on.push(c.clone());
            }
        }
        for key in region.classes.pair_keys(a, b) {
            on.push(key.condition(region.conds));
        }
        let joined = self.join(JoinKind::Inner, left, right, on, None)?;
        let Some(above) = above else {
            return Ok(joined);
        };
        // What the joins after this one read: the conditions not placed
        // yet (a class's equalities through its members).
        let mut keep = above.clone();
        for (k, c) in region.conds.iter().enumerate() {
            if !region.classes.absorbed[k] && region.masks[k] & !s != 0 {
                keep.extend(expr_columns(c));
            }
        }
        keep.extend(region.classes.members_still_joining(s));
        Ok(self.narrow(joined, &keep))
    }
}
