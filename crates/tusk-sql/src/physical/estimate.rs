//! Row estimates from ANALYZE's statistics, as PostgreSQL's `selfuncs.c`
//! computes them: what fraction of a table's rows a restriction keeps, how
//! many distinct values a column has, and what fraction of the pairs of
//! two relations an equality joins.
//!
//! A column is traced back to the table attribute it comes from (its
//! *origin*: through scans, projections that pass it on, group keys and CTE
//! references). With statistics (see `tusk_storage::statistics`):
//!
//! - `col = const`: the constant's MCV frequency, else the rest of the
//!   non-NULL rows spread over the other distinct values (`var_eq_const`);
//! - `col < const` and the like: the MCVs that satisfy it plus the
//!   histogram's fraction below the constant (interpolating inside its
//!   bucket) over the rest (`scalarineqsel`); a lower and an upper bound
//!   on the same column in one AND are taken together as a range
//!   (`clauselist_selectivity`);
//! - `col IN (...)`: the sum over its constants; `IS NULL`: the NULL
//!   fraction; `LIKE`: the share of MCVs and histogram entries the pattern
//!   matches (`patternsel`), else the fixed prefix as a range and the rest
//!   of the pattern at PostgreSQL's per-character guesses;
//! - `a = b` between two relations: `(1 − nulls₁)(1 − nulls₂) /
//!   max(nd₁, nd₂)`, each distinct count clamped to its relation's
//!   estimated rows, or the matched MCV frequencies when both sides have an
//!   MCV list (`eqjoinsel_inner`); for semi and anti joins the fraction of
//!   outer rows that have a match (`eqjoinsel_semi`).
//!
//! Without statistics the defaults are PostgreSQL's: 0.005 for an equality
//! (one of 200 distinct values), one third for an inequality, 0.005 for a
//! range and for `IS UNKNOWN`, and a column with a unique single-column index is taken as
//! distinct in every row.

use super::cost::selectivity as default_selectivity;
use super::Planner;
use crate::logical::{ColumnId, JoinKind, Logical};
use std::collections::HashMap;
use std::sync::Arc;
use tusk_exec::expr::{CmpOp, LikePattern};
use tusk_exec::sortkey::{encode_value, key_to_f64, key_to_text, KeyOrder};
use tusk_exec::{Expr, Value, Vector};
use tusk_storage::statistics::{ColumnStatistics, RelStatistics};
use tusk_storage::DataType;

/// PostgreSQL's `DEFAULT_NUM_DISTINCT`.
const DEFAULT_NUM_DISTINCT: f64 = 200.0;
/// `DEFAULT_EQ_SEL`, `DEFAULT_INEQ_SEL`, `DEFAULT_RANGE_INEQ_SEL`.
const DEFAULT_EQ_SEL: f64 = 0.005;
const DEFAULT_INEQ_SEL: f64 = 0.3333;
const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
/// `DEFAULT_MATCH_SEL` and the per-character guesses of `like_selectivity`.
const DEFAULT_MATCH_SEL: f64 = 0.005;
const FIXED_CHAR_SEL: f64 = 0.20;
const ANY_CHAR_SEL: f64 = 0.9;
/// Histograms smaller than this are not trusted to estimate a pattern
/// (PostgreSQL's `histogram_selectivity` minimum).
const MIN_PATTERN_HISTOGRAM: usize = 100;

/// The table attribute a column comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    pub oid: u32,
    pub attno: usize,
}

/// A column's statistics, where ANALYZE has them.
struct ColStats {
    rel: Arc<RelStatistics>,
    attno: usize,
}

impl ColStats {
    fn get(&self) -> &ColumnStatistics {
        self.rel.column(self.attno).expect("checked when made")
    }
}

/// The column an expression reads as it is, if it is one: a column, or
/// a column under a conversion that keeps values and their order (a
/// string type relabelled as another, `character(n)` read as text).
fn as_column(e: &Expr) -> Option<ColumnId> {
    match e {
        Expr::Column { index, .. } => Some(*index),
        Expr::BpcharToText(arg) => as_column(arg),
        Expr::Cast { arg, to } if to.is_string() && arg.data_type().is_string() => as_column(arg),
        _ => None,
    }
}

fn as_const(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Const { value, .. } => Some(value),
        _ => None,
    }
}

/// The ascending normalized key of a value of type `ty`.
fn key_of(v: &Value, ty: DataType) -> Vec<u8> {
    let mut vec = Vector::with_capacity(ty, 1);
    vec.push_value(v);
    let mut out = Vec::new();
    encode_value(&vec, 0, KeyOrder::asc(ty), &mut out, &mut String::new());
    out
}

impl Planner<'_> {
    /// Records the origin of every column of `l` that comes from a table
    /// attribute (run before planning, over the statement and its CTEs).
    pub(crate) fn collect_origins(&mut self, l: &Logical) {
        for c in l.children() {
            self.collect_origins(c);
        }
        let link = |to: ColumnId, from: &Expr, origins: &mut HashMap<ColumnId, Origin>| {
            if let Some(o) = as_column(from).and_then(|f| origins.get(&f).copied()) {
                origins.insert(to, o);
            }
        };
        match l {
            Logical::Get { table, cols, .. } => {
                for (attno, &c) in cols.iter().enumerate() {
                    self.origins.insert(
                        c,
                        Origin {
                            oid: table.oid,
                            attno,
                        },
                    );
                }
            }
            Logical::Project { exprs, .. } => {
                for (to, e) in exprs {
                    link(*to, e, &mut self.origins);
                }
            }
            Logical::Aggregate { group, .. } => {
                for (to, e) in group {
                    link(*to, e, &mut self.origins);
                }
            }
            Logical::CteRef { id, cols } => {
                let cte_cols = self.ctes[*id].cols.clone();
                if !self.ctes_walked.contains(id) {
                    self.ctes_walked.insert(*id);
                    let plan = self.ctes[*id].plan.clone();
                    self.collect_origins(&plan);
                }
                for (to, from) in cols.iter().zip(cte_cols) {
                    if let Some(o) = self.origins.get(&from).copied() {
                        self.origins.insert(*to, o);
                    }
                }
            }
            _ => {}
        }
    }

    fn col_stats(&self, c: ColumnId) -> Option<ColStats> {
        let o = self.origins.get(&c)?;
        let rel = self.db.statistics.get(o.oid)?;
        rel.column(o.attno)?;
        Some(ColStats {
            rel,
            attno: o.attno,
        })
    }

    /// Live rows of the table a column comes from.
    fn origin_rows(&self, c: ColumnId) -> Option<f64> {
        let o = self.origins.get(&c)?;
        let table = self.catalog.table_by_oid(o.oid)?;
        self.table_size(table).ok().map(|(_, t)| t)
    }

    /// Whether a unique index has exactly this column as its key.
    fn unique_column(&self, c: ColumnId) -> bool {
        let Some(o) = self.origins.get(&c) else {
            return false;
        };
        self.catalog
            .indexes_of(o.oid)
            .any(|i| i.unique() && i.columns.len() == 1 && i.columns[0].attno == o.attno)
    }

    /// Distinct values of expression `e` over a relation of `rows` rows,
    /// and whether that is only a default guess (`get_variable_numdistinct`).
    pub(crate) fn ndistinct(&self, e: &Expr, rows: f64) -> (f64, bool) {
        let rows = rows.max(1.0);
        if e.data_type() == DataType::Bool {
            return (2.0f64.min(rows), false);
        }
        let Some(c) = as_column(e) else {
            return (DEFAULT_NUM_DISTINCT.min(rows), true);
        };
        let table_rows = self.origin_rows(c).unwrap_or(rows).max(1.0);
        let nd = match self.col_stats(c) {
            Some(s) => {
                let st = s.get();
                if st.n_distinct > 0.0 {
                    (st.n_distinct, false)
                } else if st.n_distinct < 0.0 {
                    (-st.n_distinct * table_rows, false)
                } else {
                    (DEFAULT_NUM_DISTINCT, true)
                }
            }
            None if self.unique_column(c) => (table_rows, false),
            None => (DEFAULT_NUM_DISTINCT, true),
        };
        (nd.0.min(rows).max(1.0), nd.1)
    }

    /// The fraction of a hash table's `build_rows` rows that a probe row's
    /// bucket holds, as PostgreSQL's `estimate_hash_bucket_stats` guesses
    /// it: one over the key's distinct values, scaled down by the share of
    /// its table the build side keeps (restrictions remove values), or one
    /// over the buckets when there are more values than buckets; raised by
    /// the skew of the most common value; 0.1 when the distinct count is
    /// only a default. Over several keys, the smallest (`final_cost_hashjoin`).
    pub(crate) fn hash_bucket_fraction(&self, keys: &[Expr], build_rows: f64) -> f64 {
        let buckets = (build_rows.max(1.0).ceil() as u64)
            .max(1024)
            .next_power_of_two() as f64;
        let one = |k: &Expr| -> f64 {
            let (nd, default) = self.ndistinct(k, f64::MAX);
            if default {
                return (1.0 / buckets).max(0.1);
            }
            let col = as_column(k);
            let stats = col.and_then(|c| self.col_stats(c));
            let avg_freq = (1.0 - stats.as_ref().map_or(0.0, |s| s.get().null_frac)) / nd;
            let share = col
                .and_then(|c| self.origin_rows(c))
                .map_or(1.0, |t| (build_rows / t.max(1.0)).min(1.0));
            let nd = (nd * share).round().max(1.0);
            let mut f = if nd > buckets {
                1.0 / buckets
            } else {
                1.0 / nd
            };
            let max_mcv = stats.and_then(|s| s.get().mcv.iter().map(|m| m.1).reduce(f64::max));
            if let Some(mcv) = max_mcv.filter(|&m| avg_freq > 0.0 && m > avg_freq) {
                f *= mcv / avg_freq;
            }
            f.clamp(1.0e-6, 1.0)
        };
        keys.iter().map(one).fold(1.0, f64::min)
    }

    /// The fraction of rows restriction `e` keeps.
    pub(crate) fn selectivity(&self, e: &Expr) -> f64 {
        let s = match e {
            Expr::And(terms) => self.and_selectivity(terms),
            Expr::Or(terms) => {
                1.0 - terms
                    .iter()
                    .map(|t| 1.0 - self.selectivity(t))
                    .product::<f64>()
            }
            Expr::Not(a) => 1.0 - self.selectivity(a),
            Expr::Column { index, .. } if self.mark_fractions.contains_key(index) => {
                self.mark_fractions[index]
            }
            Expr::Cmp { op, left, right } => self.cmp_selectivity(*op, left, right),
            // PostgreSQL expands a row `=` into an AND of the pairs and a
            // row `<>` into an OR; an ordering comparison is a
            // RowCompareExpr, estimated by its first pair (`rowcomparesel`),
            // so `(x, y) < (NULL, 1)` keeps no row.
            Expr::RowCompare { op, left, right } => {
                let pairs = left.iter().zip(right);
                match op {
                    CmpOp::Eq => pairs
                        .map(|(l, r)| self.cmp_selectivity(*op, l, r))
                        .product(),
                    CmpOp::Ne => {
                        1.0 - pairs
                            .map(|(l, r)| 1.0 - self.cmp_selectivity(*op, l, r))
                            .product::<f64>()
                    }
                    _ => match (left.first(), right.first()) {
                        (Some(l), Some(r)) => self.cmp_selectivity(*op, l, r),
                        _ => default_selectivity(e),
                    },
                }
            }
            Expr::InList {
                arg, list, negated, ..
            } => {
                let s: f64 = list
                    .iter()
                    .map(|item| self.cmp_selectivity(CmpOp::Eq, arg, item))
                    .sum::<f64>()
                    .min(1.0);
                let holds_null = list.iter().any(|i| as_const(i).is_some_and(Value::is_null));
                if *negated && holds_null {
                    // `x <> ALL (..., NULL, ...)` is never true
                    // (`scalararraysel`'s product has a zero factor).
                    0.0
                } else if *negated {
                    (1.0 - s - self.null_frac(arg)).max(0.0)
                } else {
                    s
                }
            }
            Expr::IsNull { arg, negated } => match as_column(arg).and_then(|c| self.col_stats(c)) {
                Some(s) if *negated => 1.0 - s.get().null_frac,
                Some(s) => s.get().null_frac,
                None => default_selectivity(e),
            },
            Expr::BoolTest { arg, test } => {
                let nulls = as_column(arg)
                    .and_then(|c| self.col_stats(c))
                    .map_or(0.005, |s| s.get().null_frac);
                super::cost::bool_test_selectivity(*test, self.selectivity(arg), nulls)
            }
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let s = self.like_selectivity(arg, pattern, *case_insensitive);
                if *negated {
                    (1.0 - s - self.null_frac(arg)).max(0.0)
                } else {
                    s
                }
            }
            _ => default_selectivity(e),
        };
        s.clamp(0.0, 1.0)
    }

    /// The fraction of rows that pass every one of `conjuncts`.
    pub(crate) fn conjunct_selectivity(&self, conjuncts: &[Expr]) -> f64 {
        match conjuncts {
            [] => 1.0,
            [one] => self.selectivity(one),
            many => self.and_selectivity(many),
        }
    }

    fn null_frac(&self, e: &Expr) -> f64 {
        as_column(e)
            .and_then(|c| self.col_stats(c))
            .map_or(0.0, |s| s.get().null_frac)
    }

    /// A conjunction: the product of its terms, except that a lower and an
    /// upper bound on one column count as one range.
    fn and_selectivity(&self, terms: &[Expr]) -> f64 {
        // (column, lower bound selectivity, upper bound selectivity, all from stats)
        let mut ranges: Vec<(ColumnId, Option<f64>, Option<f64>, bool)> = Vec::new();
        let mut s = 1.0;
        for t in terms {
            let bound = match t {
                Expr::Cmp { op, left, right } if *op != CmpOp::Eq && *op != CmpOp::Ne => {
                    match (
                        as_column(left),
                        as_const(right),
                        as_column(right),
                        as_const(left),
                    ) {
                        (Some(c), Some(_), _, _) => Some((c, *op)),
                        (_, _, Some(c), Some(_)) => Some((c, op.commuted())),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some((c, op)) = bound else {
                s *= self.selectivity(t);
                continue;
            };
            let sel = self.selectivity(t);
            let stats = self.col_stats(c).is_some();
            let i = match ranges.iter().position(|r| r.0 == c) {
                Some(i) => i,
                None => {
                    ranges.push((c, None, None, true));
                    ranges.len() - 1
                }
            };
            let r = &mut ranges[i];
            r.3 &= stats;
            let slot = if matches!(op, CmpOp::Gt | CmpOp::Ge) {
                &mut r.1
            } else {
                &mut r.2
            };
            // Two bounds on the same side: keep the tighter one.
            *slot = Some(slot.map_or(sel, |x: f64| x.min(sel)));
        }
        for (c, lo, hi, stats) in ranges {
            s *= match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    if !stats {
                        DEFAULT_RANGE_INEQ_SEL
                    } else {
                        // Both bounds excluded the NULLs: add them back once.
                        let nulls = self.null_frac(&Expr::Column {
                            index: c,
                            ty: self.cols.ty(c),
                        });
                        let r = lo + hi - 1.0 + nulls;
                        if r < -0.01 {
                            // The bounds exclude each other.
                            1.0e-10
                        } else {
                            r.max(1.0e-10)
                        }
                    }
                }
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => 1.0,
            };
        }
        s
    }

    /// `left op right`, with statistics when one side is a column and the
    /// other a constant.
    ///
    /// A NULL constant on either side keeps no row, whatever the other side
    /// is and whatever the operator, `<>` included: the operators are
    /// strict (`var_eq_const` and `scalarineqsel` return zero for it). So a
    /// `NOT IN` list holding a NULL keeps none either.
    fn cmp_selectivity(&self, op: CmpOp, left: &Expr, right: &Expr) -> f64 {
        // `x = x` only rejects NULLs: PostgreSQL's equivalence classes
        // turn it into `x IS NOT NULL` and estimate that.
        if op == CmpOp::Eq && left == right && !crate::logical::expr_columns(left).is_empty() {
            return self.selectivity(&Expr::IsNull {
                arg: Box::new(left.clone()),
                negated: true,
            });
        }
        if as_const(left)
            .or(as_const(right))
            .is_some_and(Value::is_null)
        {
            return 0.0;
        }
        let (col, value, op) = match (as_column(left), as_const(right)) {
            (Some(c), Some(v)) => (c, v, op),
            _ => match (as_const(left), as_column(right)) {
                (Some(v), Some(c)) => (c, v, op.commuted()),
                _ => {
                    return match op {
                        CmpOp::Eq => self.unknown_eq(left, right),
                        CmpOp::Ne => 1.0 - self.unknown_eq(left, right),
                        _ => DEFAULT_INEQ_SEL,
                    }
                }
            },
        };
        let ty = self.cols.ty(col);
        let stats = self.col_stats(col);
        match op {
            CmpOp::Eq => self.eq_const(col, stats.as_ref(), &key_of(value, ty)),
            CmpOp::Ne => {
                let nulls = stats.as_ref().map_or(0.0, |s| s.get().null_frac);
                1.0 - self.eq_const(col, stats.as_ref(), &key_of(value, ty)) - nulls
            }
            _ => match stats {
                Some(s) => ineq_const(s.get(), op, &key_of(value, ty), ty),
                None => DEFAULT_INEQ_SEL,
            },
        }
    }

    /// An equality whose sides are not a column and a constant: one over
    /// the larger distinct count (`eqsel` on a non-constant).
    fn unknown_eq(&self, left: &Expr, right: &Expr) -> f64 {
        let nd = |e: &Expr| self.ndistinct(e, f64::MAX).0;
        let n = nd(left).max(nd(right));
        if n <= 1.0 {
            DEFAULT_EQ_SEL
        } else {
            1.0 / n
        }
    }

    /// The fraction of a table's rows that `e = value` keeps for a value
    /// not known when planning, such as a parameter an index nested loop
    /// sets from each outer row (`var_eq_non_const`): one row of a unique
    /// column, else the non-NULL rows over the distinct values, at most the
    /// most common value's share.
    pub(crate) fn eq_unknown_value(&self, e: &Expr) -> f64 {
        let col = as_column(e);
        if col.is_some_and(|c| self.unique_column(c)) {
            return 1.0
                / col
                    .and_then(|c| self.origin_rows(c))
                    .unwrap_or(1.0)
                    .max(1.0);
        }
        let stats = col.and_then(|c| self.col_stats(c));
        let mut sel = 1.0 - stats.as_ref().map_or(0.0, |s| s.get().null_frac);
        let (nd, _) = self.ndistinct(e, f64::MAX);
        if nd > 1.0 {
            sel /= nd;
        }
        if let Some(most) = stats.and_then(|s| s.get().mcv.first().map(|m| m.1)) {
            sel = sel.min(most);
        }
        sel.clamp(0.0, 1.0)
    }

    /// `col = value` (`var_eq_const`).
    fn eq_const(&self, col: ColumnId, stats: Option<&ColStats>, key: &[u8]) -> f64 {
        let Some(s) = stats else {
            return if self.unique_column(col) {
                1.0 / self.origin_rows(col).unwrap_or(1.0).max(1.0)
            } else {
                DEFAULT_EQ_SEL
            };
        };
        let st = s.get();
        if let Some((_, f)) = st.mcv.iter().find(|(k, _)| k == key) {
            return *f;
        }
        let mcv_total: f64 = st.mcv.iter().map(|(_, f)| f).sum();
        let (nd, _) = self.ndistinct(
            &Expr::Column {
                index: col,
                ty: self.cols.ty(col),
            },
            f64::MAX,
        );
        let others = nd - st.mcv.len() as f64;
        let mut sel = if others >= 1.0 {
            (1.0 - mcv_total - st.null_frac).max(0.0) / others
        } else {
            // Every value is an MCV and this one is not among them.
            0.0
        };
        if let Some((_, least)) = st.mcv.last() {
            sel = sel.min(*least);
        }
        sel
    }

    /// `arg LIKE pattern` (`patternsel`).
    fn like_selectivity(&self, arg: &Expr, pattern: &Expr, ci: bool) -> f64 {
        let Some(Value::Text(p)) = as_const(pattern) else {
            return DEFAULT_MATCH_SEL;
        };
        let stats = as_column(arg).and_then(|c| self.col_stats(c));
        let compiled = LikePattern::compile(p, ci).ok();
        if let (Some(s), Some(pat)) = (&stats, &compiled) {
            let st = s.get();
            let hits = |key: &[u8]| {
                key_to_text(key)
                    .and_then(|t| String::from_utf8(t).ok())
                    .is_some_and(|t| pat.matches(&t).unwrap_or(false))
            };
            let mcv_total: f64 = st.mcv.iter().map(|(_, f)| f).sum();
            let mcv_sel: f64 = st.mcv.iter().filter(|(k, _)| hits(k)).map(|(_, f)| f).sum();
            let rest = (1.0 - mcv_total - st.null_frac).max(0.0);
            if st.histogram.len() >= MIN_PATTERN_HISTOGRAM {
                let n = st.histogram.len() as f64;
                let matched = st.histogram.iter().filter(|k| hits(k)).count() as f64;
                // Never quite 0 or 1 from a finite sample.
                let frac = matched.clamp(1.0 / n, n - 1.0) / n;
                return mcv_sel + rest * frac;
            }
            if rest < 1.0e-9 {
                return mcv_sel;
            }
            return mcv_sel + rest * pattern_guess(p, ci);
        }
        pattern_guess(p, ci)
    }

    /// The fraction of the pairs of two relations (of `lrows` and `rrows`
    /// estimated rows) that satisfy `l = r` (`eqjoinsel_inner`). As there,
    /// each side's distinct values are its table's, not clamped to the
    /// rows its restrictions keep: a restriction is assumed to keep rows,
    /// not to remove values, so each remaining row still matches the other
    /// side's rows of one value (PostgreSQL clamps only for semi joins).
    pub(crate) fn join_selectivity(&self, l: &Expr, r: &Expr, lrows: f64, rrows: f64) -> f64 {
        let table_rows = |e: &Expr, rows: f64| {
            as_column(e)
                .and_then(|c| self.origin_rows(c))
                .map_or(rows, |t| t.max(rows))
        };
        let (nd1, _) = self.ndistinct(l, table_rows(l, lrows));
        let (nd2, _) = self.ndistinct(r, table_rows(r, rrows));
        let s1 = as_column(l).and_then(|c| self.col_stats(c));
        let s2 = as_column(r).and_then(|c| self.col_stats(c));
        let nf1 = s1.as_ref().map_or(0.0, |s| s.get().null_frac);
        let nf2 = s2.as_ref().map_or(0.0, |s| s.get().null_frac);
        if let (Some(a), Some(b)) = (&s1, &s2) {
            let (a, b) = (a.get(), b.get());
            if !a.mcv.is_empty() && !b.mcv.is_empty() {
                return mcv_join(a, b, nd1, nd2).clamp(0.0, 1.0);
            }
        }
        ((1.0 - nf1) * (1.0 - nf2) / nd1.max(nd2)).clamp(0.0, 1.0)
    }

    /// The fraction of the pairs of two relations (of `lrows` and `rrows`
    /// rows) that satisfy every equality of `keys` (left side, right side).
    /// Independent equalities multiply, except that equalities whose
    /// columns on one side make up a unique index of that side's table
    /// match at most one row of it per row of the other side: together
    /// they are one equality on a key with a distinct value per row.
    pub(crate) fn keys_selectivity(&self, keys: &[(Expr, Expr)], lrows: f64, rrows: f64) -> f64 {
        if keys.len() >= 2 {
            for (unique_side, rows, other_rows) in [(1, rrows, lrows), (0, lrows, rrows)] {
                let cols: Vec<ColumnId> = keys
                    .iter()
                    .filter_map(|k| as_column(if unique_side == 1 { &k.1 } else { &k.0 }))
                    .collect();
                if cols.len() == keys.len() && self.unique_key(&cols) {
                    let table_rows = self.origin_rows(cols[0]).unwrap_or(rows).max(1.0);
                    let other_nd: f64 = keys
                        .iter()
                        .map(|k| {
                            self.ndistinct(if unique_side == 1 { &k.0 } else { &k.1 }, other_rows)
                                .0
                        })
                        .product::<f64>()
                        .min(other_rows.max(1.0));
                    return 1.0 / table_rows.min(rows.max(1.0)).max(other_nd).max(1.0);
                }
            }
        }
        keys.iter()
            .map(|(l, r)| self.join_selectivity(l, r, lrows, rrows))
            .product()
    }

    /// Whether columns `cols` all come from one table and contain the key
    /// columns of one of its unique indexes.
    fn unique_key(&self, cols: &[ColumnId]) -> bool {
        let origins: Vec<Origin> = cols
            .iter()
            .filter_map(|c| self.origins.get(c).copied())
            .collect();
        if origins.len() != cols.len() || origins.iter().any(|o| o.oid != origins[0].oid) {
            return false;
        }
        self.catalog.indexes_of(origins[0].oid).any(|i| {
            i.unique()
                && i.columns
                    .iter()
                    .all(|c| origins.iter().any(|o| o.attno == c.attno))
        })
    }

    /// The fraction of outer rows (of `orows` rows, key `o`) that have a
    /// match among the inner rows (`irows`, key `i`) (`eqjoinsel_semi`).
    pub(crate) fn semi_selectivity(&self, o: &Expr, i: &Expr, orows: f64, irows: f64) -> f64 {
        let (nd1, d1) = self.ndistinct(o, orows);
        let (nd2, d2) = self.ndistinct(i, irows);
        let nf1 = self.null_frac(o);
        if d1 || d2 {
            // Without real distinct counts PostgreSQL assumes half match.
            return 0.5 * (1.0 - nf1);
        }
        let frac = if nd2 >= nd1 { 1.0 } else { nd2 / nd1 };
        (frac * (1.0 - nf1)).clamp(0.0, 1.0)
    }

    /// Estimated groups of `group` over `rows` input rows
    /// (`estimate_num_groups`): the product of the keys' distinct counts,
    /// at most the input rows.
    pub(crate) fn num_groups(&self, group: &[Expr], rows: f64) -> f64 {
        if group.is_empty() {
            return 1.0;
        }
        let mut n = 1.0;
        for g in group {
            let cols = crate::logical::expr_columns(g);
            if cols.is_empty() {
                continue;
            }
            // An expression has at most as many values as its columns.
            let nd: f64 = if as_column(g).is_some() {
                self.ndistinct(g, rows).0
            } else {
                cols.iter()
                    .map(|&c| {
                        self.ndistinct(
                            &Expr::Column {
                                index: c,
                                ty: self.cols.ty(c),
                            },
                            rows,
                        )
                        .0
                    })
                    .product()
            };
            n *= nd;
        }
        n.min(rows).max(1.0).round()
    }

    /// Rows of a join of `kind` between relations of `orows` and `irows`
    /// rows on equality keys `keys` (outer expression, inner expression)
    /// and other conditions `rest`.
    pub(crate) fn join_rows(
        &self,
        kind: JoinKind,
        orows: f64,
        irows: f64,
        keys: &[(Expr, Expr)],
        rest: &[Expr],
    ) -> f64 {
        let other: f64 = rest.iter().map(|e| self.selectivity(e)).product();
        let rows = match kind {
            JoinKind::Semi | JoinKind::Anti => {
                // The residual conditions are taken not to change which
                // outer rows find a match.
                let _ = other;
                let sel = keys
                    .iter()
                    .map(|(o, i)| self.semi_selectivity(o, i, orows, irows))
                    .fold(1.0, f64::min);
                if kind == JoinKind::Anti {
                    orows * (1.0 - sel).max(0.0)
                } else {
                    orows * sel
                }
            }
            JoinKind::Mark { .. } => orows,
            _ => {
                let sel = self.keys_selectivity(keys, orows, irows);
                let inner = orows * irows * sel * other;
                match kind {
                    JoinKind::Left => inner.max(orows),
                    JoinKind::Right => inner.max(irows),
                    JoinKind::Full => inner.max(orows).max(irows),
                    _ => inner,
                }
            }
        };
        rows.max(1.0).round()
    }
}

/// `col op value` for an inequality, from the MCVs and the histogram
/// (`scalarineqsel`).
fn ineq_const(st: &ColumnStatistics, op: CmpOp, key: &[u8], ty: DataType) -> f64 {
    let below = matches!(op, CmpOp::Lt | CmpOp::Le);
    let holds = |k: &[u8]| match op {
        CmpOp::Lt => k < key,
        CmpOp::Le => k <= key,
        CmpOp::Gt => k > key,
        _ => k >= key,
    };
    let mcv_total: f64 = st.mcv.iter().map(|(_, f)| f).sum();
    let mcv_sel: f64 = st
        .mcv
        .iter()
        .filter(|(k, _)| holds(k))
        .map(|(_, f)| f)
        .sum();
    let rest = (1.0 - mcv_total - st.null_frac).max(0.0);
    let hist = &st.histogram;
    let frac = if hist.len() >= 2 {
        // The fraction of histogram values below `key`.
        let n = hist.len();
        let pos = hist.partition_point(|b| b.as_slice() < key);
        let below_frac = if pos == 0 {
            0.0
        } else if pos >= n {
            1.0
        } else {
            let (lo, hi) = (&hist[pos - 1], &hist[pos]);
            let within = match (key_to_f64(lo, ty), key_to_f64(hi, ty), key_to_f64(key, ty)) {
                (Some(a), Some(b), Some(x)) if b > a => ((x - a) / (b - a)).clamp(0.0, 1.0),
                _ => 0.5,
            };
            ((pos - 1) as f64 + within) / (n - 1) as f64
        };
        if below {
            below_frac
        } else {
            1.0 - below_frac
        }
    } else {
        0.5
    };
    (mcv_sel + rest * frac).clamp(0.0, 1.0)
}

/// Joins two MCV lists (`eqjoinsel_inner` with statistics on both sides).
fn mcv_join(a: &ColumnStatistics, b: &ColumnStatistics, nd1: f64, nd2: f64) -> f64 {
    let mut matched_b = vec![false; b.mcv.len()];
    let (mut match_prod, mut match1, mut matches) = (0.0, 0.0, 0.0);
    for (ka, fa) in &a.mcv {
        if let Some(j) = b.mcv.iter().position(|(kb, _)| kb == ka) {
            matched_b[j] = true;
            match_prod += fa * b.mcv[j].1;
            match1 += fa;
            matches += 1.0;
        }
    }
    let match2: f64 = b
        .mcv
        .iter()
        .zip(&matched_b)
        .filter(|(_, m)| **m)
        .map(|((_, f), _)| f)
        .sum();
    let total1: f64 = a.mcv.iter().map(|(_, f)| f).sum();
    let total2: f64 = b.mcv.iter().map(|(_, f)| f).sum();
    let unmatch1 = total1 - match1;
    let unmatch2 = total2 - match2;
    let other1 = (1.0 - a.null_frac - total1).max(0.0);
    let other2 = (1.0 - b.null_frac - total2).max(0.0);
    let mut sel = match_prod;
    let n2 = b.mcv.len() as f64;
    let n1 = a.mcv.len() as f64;
    if nd2 > n2 {
        sel += unmatch1 * other2 / (nd2 - n2);
    }
    if nd2 > matches {
        sel += other1 * (other2 + unmatch2) / (nd2 - matches);
    }
    let mut sel2 = match_prod;
    if nd1 > n1 {
        sel2 += unmatch2 * other1 / (nd1 - n1);
    }
    if nd1 > matches {
        sel2 += other2 * (other1 + unmatch1) / (nd1 - matches);
    }
    sel.min(sel2)
}

/// A LIKE pattern's selectivity without usable statistics, as
/// PostgreSQL's `patternsel` guesses it. A pattern without wildcards is an
/// equality. Otherwise its fixed prefix (the characters before the first
/// wildcard; for ILIKE also before the first letter, whose case varies)
/// keeps `DEFAULT_MATCH_SEL` of the rows when there is one (what
/// `prefix_selectivity` answers without a histogram), and the rest, after
/// its leading wildcards, a fifth per fixed character and nine tenths per
/// `_` (`like_selectivity`).
fn pattern_guess(p: &str, case_insensitive: bool) -> f64 {
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    let mut prefix = 0;
    while i < chars.len() {
        if chars[i] == '%' || chars[i] == '_' {
            break;
        }
        if chars[i] == '\\' {
            i += 1;
            if i >= chars.len() {
                break;
            }
        }
        if case_insensitive && chars[i].is_alphabetic() {
            break;
        }
        prefix += 1;
        i += 1;
    }
    if i >= chars.len() {
        // No wildcard run: an equality in effect.
        return DEFAULT_EQ_SEL;
    }
    let rest = &chars[i..];
    let first = rest
        .iter()
        .position(|&c| c != '%' && c != '_')
        .unwrap_or(rest.len());
    let mut sel = 1.0;
    let mut j = first;
    while j < rest.len() {
        match rest[j] {
            '%' => {}
            '_' => sel *= ANY_CHAR_SEL,
            '\\' => {
                j += 1;
                if j >= rest.len() {
                    break;
                }
                sel *= FIXED_CHAR_SEL;
            }
            _ => sel *= FIXED_CHAR_SEL,
        }
        j += 1;
    }
    let prefix_sel = if prefix > 0 { DEFAULT_MATCH_SEL } else { 1.0 };
    (prefix_sel * f64::min(sel, 1.0)).clamp(1.0e-7, 1.0)
}
