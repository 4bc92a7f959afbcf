//! Equivalence classes of an inner-join region, as PostgreSQL's
//! `EquivalenceClass`: the columns that the region's equalities make equal.
//!
//! Every condition of a region of inner joins filters the product of its
//! leaves, so `a.x = b.y` and `b.y = c.z` among them also imply `a.x =
//! c.z`: a row that passes the first two passes the third. The written
//! equalities between two plain columns of the same type (one whose `=` is
//! transitive, as a btree equality is) are pooled here into classes, and
//! the join-order search no longer works from the written conditions but
//! from the classes: two parts of the region are joinable on a class when
//! each holds one of its members, whichever equalities were written, so
//! `customer ⋈ nation` on `c_nationkey = n_nationkey` is found when the
//! query wrote `c_nationkey = s_nationkey and s_nationkey = n_nationkey`.
//!
//! Invariants, which make the derived plan compute the written conditions'
//! rows:
//! - each join of two parts takes one key per class with members on both
//!   sides ([`EquivalenceClasses::pair_keys`]), the written equality when
//!   there is one between them;
//! - a leaf holding two members of one class filters them equal
//!   ([`EquivalenceClasses::leaf_filters`]),
//!
//! so by induction the members inside any joined part are all equal, and
//! when the whole region is joined every written equality holds. A NULL
//! member passes no equality, written or derived, so NULLs change nothing.
//! Only conditions pooled in the region take part: the ON condition of an
//! outer join below it is not a region condition (the outer join is a
//! leaf), so no equality is derived across an outer join's nullable side.
//!
//! A class may also be equal to a constant (a literal or a parameter,
//! whose value is fixed while the region runs): `a.x = b.y and a.x = 5`
//! makes `{a.x, b.y}` equal to 5, as PostgreSQL's `generate_base_implied_
//! equalities_const` does. The constant equalities come from the leaves'
//! own filters (where push-down put them) and from the region's
//! conditions ([`EquivalenceClasses::add_constants`]). Then every member
//! is filtered `= constant` in its leaf (where that filter was not
//! written already), and the class supplies no join key: with each member
//! equal to the constant, the equalities between members hold already,
//! so joins on them would only repeat the filters (and multiply their
//! selectivity into the row estimates again).
//!
//! For row estimates the classes give, for a subset of the leaves, a
//! spanning forest of each class over the leaves the subset holds
//! ([`EquivalenceClasses::spanning_keys`]): the written equalities first,
//! so a subset that the written conditions connect keeps their estimate,
//! then derived ones. A class over `m` leaves thus counts `m - 1`
//! selectivities, whatever equalities were written, where multiplying all
//! written ones would count a cycle's equality twice.

use crate::logical::ColumnId;
use std::collections::HashMap;
use tusk_exec::expr::CmpOp;
use tusk_exec::Expr;
use tusk_storage::DataType;

/// One member of a class: a plain column of one leaf.
#[derive(Debug, Clone)]
struct Member {
    col: Expr,
    leaf: usize,
}

/// The columns one class makes equal.
#[derive(Debug, Clone)]
struct Class {
    members: Vec<Member>,
    /// The written equalities between members: the two members' positions
    /// in `members` and the condition's number in the region.
    written: Vec<(usize, usize, usize)>,
    /// The constant the members equal, if any (see the module doc).
    constant: Option<Constant>,
}

/// A constant of a class and the members already filtered equal to it.
#[derive(Debug, Clone)]
struct Constant {
    value: Expr,
    written_on: Vec<usize>,
}

/// An equality key between two parts that a class supplies.
#[derive(Debug, Clone)]
pub(crate) struct ClassKey {
    /// The member in the first part and in the second.
    pub left: Expr,
    pub right: Expr,
    /// Their leaves.
    pub left_leaf: usize,
    pub right_leaf: usize,
    /// The written condition equating these two members, if any.
    pub written: Option<usize>,
    /// Identifies the key for caching estimates: the class's number and
    /// the two members' positions, the smaller first.
    pub id: (usize, usize, usize),
}

impl ClassKey {
    /// The equality itself: the written condition, or one made for it.
    pub fn condition(&self, conds: &[Expr]) -> Expr {
        match self.written {
            Some(k) => conds[k].clone(),
            None => equality(&self.left, &self.right),
        }
    }
}

/// The classes of one region (see the module doc).
#[derive(Debug, Clone, Default)]
pub(crate) struct EquivalenceClasses {
    classes: Vec<Class>,
    /// Whether each of the region's conditions is one of the written
    /// equalities pooled into a class (and so placed by the classes).
    pub absorbed: Vec<bool>,
}

/// Types whose `=` is an equivalence relation over non-NULL values, as a
/// btree operator class's equality is.
fn transitive_eq(ty: DataType) -> bool {
    use DataType::*;
    matches!(
        ty,
        Bool | Int2
            | Int4
            | Int8
            | Float4
            | Float8
            | Numeric
            | Text
            | Varchar
            | Bpchar
            | Date
            | Time
            | Timestamp
            | TimestampTz
            | Interval
            | Oid
            | Name
    )
}

/// `left = right`.
fn equality(left: &Expr, right: &Expr) -> Expr {
    Expr::Cmp {
        op: CmpOp::Eq,
        left: Box::new(left.clone()),
        right: Box::new(right.clone()),
    }
}

/// Whether `e` is a constant for a class: a literal, or a parameter (its
/// value fixed while the region runs).
fn is_constant(e: &Expr) -> bool {
    matches!(e, Expr::Const { .. } | Expr::Param { .. })
}

/// For `x = y` over two plain columns of the same such type, both of the
/// region's leaves, the two columns.
fn member_equality(
    c: &Expr,
    leaf_of: &HashMap<ColumnId, usize>,
) -> Option<((ColumnId, Expr), (ColumnId, Expr))> {
    let (left, right) = crate::logical::exprs::equality_sides(c)?;
    match (left, right) {
        (Expr::Column { index: a, ty: ta }, Expr::Column { index: b, ty: tb })
            if ta == tb
                && transitive_eq(*ta)
                && leaf_of.contains_key(a)
                && leaf_of.contains_key(b) =>
        {
            Some(((*a, left.clone()), (*b, right.clone())))
        }
        _ => None,
    }
}

/// Union-find over a region's leaves (at most 32).
struct Forest([u8; 32]);

impl Forest {
    fn new() -> Self {
        Forest(std::array::from_fn(|i| i as u8))
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.0[i] as usize != i {
            self.0[i] = self.0[self.0[i] as usize];
            i = self.0[i] as usize;
        }
        i
    }

    /// Joins the trees of `a` and `b`; false if they were one already.
    fn union(&mut self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.root(a), self.root(b));
        self.0[ra] = rb as u8;
        ra != rb
    }
}

impl EquivalenceClasses {
    /// The classes of region conditions `conds` over leaves whose columns
    /// `leaf_of` maps to their leaf.
    pub fn build(conds: &[Expr], leaf_of: &HashMap<ColumnId, usize>) -> Self {
        let mut absorbed = vec![false; conds.len()];
        // Each column's class, and each class's columns in order.
        let mut class_of: HashMap<ColumnId, usize> = HashMap::new();
        let mut columns: Vec<Vec<(ColumnId, Expr)>> = Vec::new();
        let mut edges = Vec::new();
        for (k, c) in conds.iter().enumerate() {
            // `x = x` only filters out NULLs: it stays as written.
            let Some((a, b)) = member_equality(c, leaf_of).filter(|(a, b)| a.0 != b.0) else {
                continue;
            };
            absorbed[k] = true;
            edges.push((k, a.0, b.0));
            match (class_of.get(&a.0).copied(), class_of.get(&b.0).copied()) {
                (Some(x), Some(y)) if x == y => {}
                (Some(x), Some(y)) => {
                    let (keep, gone) = (x.min(y), x.max(y));
                    let moved = std::mem::take(&mut columns[gone]);
                    for (col, _) in &moved {
                        class_of.insert(*col, keep);
                    }
                    columns[keep].extend(moved);
                }
                (Some(x), None) => {
                    class_of.insert(b.0, x);
                    columns[x].push(b);
                }
                (None, Some(y)) => {
                    class_of.insert(a.0, y);
                    columns[y].push(a);
                }
                (None, None) => {
                    let x = columns.len();
                    class_of.insert(a.0, x);
                    class_of.insert(b.0, x);
                    columns.push(vec![a, b]);
                }
            }
        }
        let mut classes: Vec<Class> = Vec::new();
        let mut renumber: HashMap<usize, usize> = HashMap::new();
        for (old, cols) in columns.into_iter().enumerate() {
            if cols.is_empty() {
                continue;
            }
            renumber.insert(old, classes.len());
            classes.push(Class {
                members: cols
                    .into_iter()
                    .map(|(c, col)| Member {
                        col,
                        leaf: leaf_of[&c],
                    })
                    .collect(),
                written: Vec::new(),
                constant: None,
            });
        }
        for (k, a, b) in edges {
            let class = &mut classes[renumber[&class_of[&a]]];
            let pos = |c: ColumnId| {
                class
                    .members
                    .iter()
                    .position(|m| matches!(m.col, Expr::Column { index, .. } if index == c))
                    .expect("a member of its class")
            };
            let (i, j) = (pos(a), pos(b));
            class.written.push((i.min(j), i.max(j), k));
        }
        EquivalenceClasses { classes, absorbed }
    }

    /// Records the constants among `equalities` (conditions that filter a
    /// leaf or the region): `member = constant` or `constant = member`,
    /// the constant a literal or parameter of the member's type. A class
    /// takes the first constant it meets; another constant equality on
    /// its members stays as written (it then filters its leaf alone).
    pub fn add_constants(&mut self, equalities: &[Expr]) {
        for e in equalities {
            let Some((left, right)) = crate::logical::exprs::equality_sides(e) else {
                continue;
            };
            let (col, value) = if is_constant(right) {
                (left, right)
            } else if is_constant(left) {
                (right, left)
            } else {
                continue;
            };
            let Expr::Column { index, ty } = col else {
                continue;
            };
            if value.data_type() != *ty {
                continue;
            }
            for class in &mut self.classes {
                let Some(pos) = class
                    .members
                    .iter()
                    .position(|m| matches!(m.col, Expr::Column { index: i, .. } if i == *index))
                else {
                    continue;
                };
                let k = class.constant.get_or_insert_with(|| Constant {
                    value: value.clone(),
                    written_on: Vec::new(),
                });
                if k.value == *value {
                    k.written_on.push(pos);
                }
            }
        }
    }

    /// The filters each leaf takes from the classes: `(leaf, filter)`. A
    /// class with a constant filters each member `= constant` where that
    /// was not written; another makes the members a single leaf holds
    /// equal: `first member = other member`.
    pub fn leaf_filters(&self) -> Vec<(usize, Expr)> {
        let mut out = Vec::new();
        for class in &self.classes {
            if let Some(k) = &class.constant {
                for (i, m) in class.members.iter().enumerate() {
                    if !k.written_on.contains(&i) {
                        out.push((m.leaf, equality(&m.col, &k.value)));
                    }
                }
                continue;
            }
            for (i, m) in class.members.iter().enumerate() {
                if let Some(first) = class.members[..i].iter().find(|f| f.leaf == m.leaf) {
                    out.push((m.leaf, equality(&first.col, &m.col)));
                }
            }
        }
        out
    }

    /// The key of class `c` between members `i` (of the first part) and
    /// `j` (of the second).
    fn key(&self, c: usize, i: usize, j: usize) -> ClassKey {
        let class = &self.classes[c];
        let (lo, hi) = (i.min(j), i.max(j));
        ClassKey {
            left: class.members[i].col.clone(),
            right: class.members[j].col.clone(),
            left_leaf: class.members[i].leaf,
            right_leaf: class.members[j].leaf,
            written: class
                .written
                .iter()
                .find(|w| (w.0, w.1) == (lo, hi))
                .map(|w| w.2),
            id: (c, lo, hi),
        }
    }

    /// The classes that supply join keys: those without a constant.
    fn joining(&self) -> impl Iterator<Item = (usize, &Class)> {
        self.classes
            .iter()
            .enumerate()
            .filter(|(_, class)| class.constant.is_none())
    }

    /// Whether some class has members in both leaf sets `a` and `b`.
    pub fn joins(&self, a: u32, b: u32) -> bool {
        self.joining().any(|(_, class)| {
            let has = |s: u32| class.members.iter().any(|m| s & 1 << m.leaf != 0);
            has(a) && has(b)
        })
    }

    /// The columns that a part holding leaf set `s` must keep for the
    /// joins still to come: every member in `s` of each class that has a
    /// member outside `s` (any of them may be the key [`Self::pair_keys`]
    /// picks).
    pub fn members_still_joining(&self, s: u32) -> Vec<ColumnId> {
        let mut out = Vec::new();
        for (_, class) in self.joining() {
            if class.members.iter().all(|m| s & 1 << m.leaf != 0) {
                continue;
            }
            for m in class.members.iter().filter(|m| s & 1 << m.leaf != 0) {
                m.col.columns(&mut out);
            }
        }
        out
    }

    /// One key per class with members in both of the disjoint leaf sets
    /// `a` and `b`, oriented `a` first: a written equality between them
    /// where there is one, else their first members.
    pub fn pair_keys(&self, a: u32, b: u32) -> Vec<ClassKey> {
        let mut out = Vec::new();
        for (c, class) in self.joining() {
            let in_set = |i: usize, s: u32| s & 1 << class.members[i].leaf != 0;
            let written = class.written.iter().find_map(|&(i, j, _)| {
                if in_set(i, a) && in_set(j, b) {
                    Some((i, j))
                } else if in_set(j, a) && in_set(i, b) {
                    Some((j, i))
                } else {
                    None
                }
            });
            let first = |s: u32| (0..class.members.len()).find(|&i| in_set(i, s));
            let pair = written.or_else(|| Some((first(a)?, first(b)?)));
            if let Some((i, j)) = pair {
                out.push(self.key(c, i, j));
            }
        }
        out
    }

    /// For the leaves of set `s`, a spanning forest of each class over the
    /// leaves of `s` that hold its members: written equalities first, then
    /// derived ones (see the module doc). Each key is oriented with its
    /// smaller leaf first.
    pub fn spanning_keys(&self, s: u32) -> Vec<ClassKey> {
        let mut out = Vec::new();
        for (c, class) in self.joining() {
            let inside: Vec<usize> = (0..class.members.len())
                .filter(|&i| s & 1 << class.members[i].leaf != 0)
                .collect();
            if inside.len() < 2 {
                continue;
            }
            let mut forest = Forest::new();
            let written = class.written.iter().map(|w| (w.0, w.1));
            let derived = inside
                .iter()
                .enumerate()
                .flat_map(|(n, &i)| inside[n + 1..].iter().map(move |&j| (i, j)));
            for (i, j) in written.chain(derived) {
                let (li, lj) = (class.members[i].leaf, class.members[j].leaf);
                if s & 1 << li == 0 || s & 1 << lj == 0 || li == lj {
                    continue;
                }
                if forest.union(li, lj) {
                    out.push(if li < lj {
                        self.key(c, i, j)
                    } else {
                        self.key(c, j, i)
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(i: usize) -> Expr {
        Expr::Column {
            index: i,
            ty: DataType::Int4,
        }
    }

    fn eq(a: usize, b: usize) -> Expr {
        Expr::Cmp {
            op: CmpOp::Eq,
            left: Box::new(col(a)),
            right: Box::new(col(b)),
        }
    }

    fn leaves(pairs: &[(usize, usize)]) -> HashMap<ColumnId, usize> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn a_chain_of_equalities_joins_its_ends() {
        // Columns 1, 2, 3 of leaves 0, 1, 2: 1 = 2 and 2 = 3.
        let leaf_of = leaves(&[(1, 0), (2, 1), (3, 2)]);
        let conds = vec![eq(1, 2), eq(2, 3)];
        let ec = EquivalenceClasses::build(&conds, &leaf_of);
        assert_eq!(ec.absorbed, vec![true, true]);
        assert!(ec.joins(0b001, 0b100));
        let keys = ec.pair_keys(0b001, 0b100);
        assert_eq!(keys.len(), 1);
        assert_eq!((keys[0].left_leaf, keys[0].right_leaf), (0, 2));
        assert!(keys[0].written.is_none());
        // Joining leaf 1 to {0, 2} takes one written key, not two.
        let keys = ec.pair_keys(0b010, 0b101);
        assert_eq!(keys.len(), 1);
        assert!(keys[0].written.is_some());
        // All three leaves: two keys, the written ones.
        let span = ec.spanning_keys(0b111);
        assert_eq!(span.len(), 2);
        assert!(span.iter().all(|k| k.written.is_some()));
        assert!(ec.leaf_filters().is_empty());
    }

    #[test]
    fn two_members_of_one_leaf_are_filtered_equal() {
        // Columns 1 and 2 of leaf 0, both equal to column 3 of leaf 1.
        let leaf_of = leaves(&[(1, 0), (2, 0), (3, 1)]);
        let ec = EquivalenceClasses::build(&[eq(1, 3), eq(2, 3)], &leaf_of);
        let filters = ec.leaf_filters();
        assert_eq!(filters.len(), 1);
        assert_eq!(filters[0].0, 0);
        assert_eq!(ec.pair_keys(0b01, 0b10).len(), 1);
        assert_eq!(ec.spanning_keys(0b11).len(), 1);
    }

    fn eq_const(a: usize, value: tusk_exec::Value, ty: DataType) -> Expr {
        Expr::Cmp {
            op: CmpOp::Eq,
            left: Box::new(Expr::Const { value, ty }),
            right: Box::new(col(a)),
        }
    }

    #[test]
    fn a_constant_filters_every_member_and_joins_none() {
        let leaf_of = leaves(&[(1, 0), (2, 1), (3, 2)]);
        let mut ec = EquivalenceClasses::build(&[eq(1, 2), eq(2, 3)], &leaf_of);
        let seven = eq_const(1, tusk_exec::Value::Int4(7), DataType::Int4);
        // A constant of another type is not the class's.
        ec.add_constants(&[eq_const(2, tusk_exec::Value::Int8(7), DataType::Int8)]);
        assert!(ec.joins(0b001, 0b010));
        ec.add_constants(std::slice::from_ref(&seven));
        assert!(!ec.joins(0b001, 0b110));
        assert!(ec.pair_keys(0b011, 0b100).is_empty());
        assert!(ec.spanning_keys(0b111).is_empty());
        // Leaf 0 wrote its filter; leaves 1 and 2 get theirs.
        let filters = ec.leaf_filters();
        let leaves: Vec<usize> = filters.iter().map(|f| f.0).collect();
        assert_eq!(leaves, vec![1, 2]);
    }

    #[test]
    fn other_conditions_are_not_absorbed() {
        let leaf_of = leaves(&[(1, 0), (2, 1)]);
        let cross_type = Expr::Cmp {
            op: CmpOp::Eq,
            left: Box::new(col(1)),
            right: Box::new(Expr::Column {
                index: 2,
                ty: DataType::Int8,
            }),
        };
        let outside = eq(1, 9);
        let ec = EquivalenceClasses::build(&[cross_type, outside], &leaf_of);
        assert_eq!(ec.absorbed, vec![false, false]);
        assert!(!ec.joins(0b01, 0b10));
    }
}
