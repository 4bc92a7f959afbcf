//! Bound scalar expressions and their vectorised evaluation.
//!
//! The binder (in tusk-sql) resolves names, types and functions (see
//! [`crate::func::resolve()`]) and inserts casts, so every node here sees
//! operands of the types it expects. Evaluation takes a batch and returns one
//! vector; the type dispatch happens once per batch, then a tight loop runs.
//!
//! ## Errors only where PostgreSQL would raise them
//!
//! PostgreSQL evaluates `a AND b` row by row and skips `b` when `a` is false,
//! so `x <> 0 AND 10 / x > 1` never divides by zero. Evaluating a whole batch
//! at once would. Every evaluation therefore carries an *active* mask: rows
//! outside it must not raise errors (their result is arbitrary). NULL inputs
//! never raise errors either: a strict operator or function is not applied to
//! a row where an argument is NULL. The nodes that decide which rows reach a
//! sub-expression narrow the mask for it:
//! - `AND` evaluates each term only for rows no earlier term made false, `OR`
//!   for rows no earlier term made true;
//! - `CASE` evaluates a WHEN condition only for rows no earlier WHEN took, and
//!   a THEN result only for the rows its WHEN took (ELSE: the rest);
//! - `COALESCE` evaluates an argument only for rows still NULL.
//!
//! A column reference past the end of the batch is a deferred column (a
//! subquery's value, see `deferred`): it is computed for the active rows
//! only, so a subquery runs only where the expression reaches it.
//!
//! Everything else evaluates its arguments for all active rows, as
//! PostgreSQL evaluates all arguments of a function before calling it.
//!
//! ## Long chains and deep nesting
//!
//! Left-deep chains that users write long are n-ary nodes: `AND` and `OR`
//! hold their terms in a vector, `a + b - c` is one [`Expr::Arith`] chain
//! folded left to right, `a || b || c` one [`Expr::Concat`]. Build them with
//! the constructors ([`Expr::and`], [`Expr::or`], [`Expr::arith`],
//! [`Expr::concat`]), which append to an existing chain, so 100,000 terms
//! cost no recursion. Real nesting recurses through [`crate::stack::guarded`]:
//! past its limit evaluation fails with `stack depth limit exceeded`
//! instead of overflowing the stack. The walkers (`columns`,
//! `remap_columns`, `data_type`) use no recursion at all.
//!
//! ## `character(n)`
//!
//! Comparisons follow the operand types: when both sides of a comparison
//! (or of `IN`, `GREATEST`, `NULLIF`, `IS DISTINCT FROM`, a simple `CASE`)
//! are `bpchar`, trailing blanks do not count (`'a'::char(3) = 'a  '::char(5)`),
//! as PostgreSQL's `bpchareq` family does. A `bpchar` used as text goes
//! through [`Expr::BpcharToText`], which strips them.
//!
//! Families live in submodules: `arith` (arithmetic, negation), `compare`
//! (comparisons, `IS DISTINCT FROM`), `logic` (AND, OR, NOT, IS TRUE...),
//! `cond` (CASE, COALESCE, NULLIF, GREATEST/LEAST), `inlist` (`IN (...)`),
//! `pattern` (LIKE, regular expressions), `fold` (constant folding as
//! PostgreSQL plans it: [`Expr::fold`]); functions are in [`crate::func`].

mod arith;
mod arrays;
mod compare;
mod cond;
pub(crate) mod datetime_arith;
pub mod deferred;
mod fold;
mod inlist;
mod like;
mod logic;
mod pattern;
mod raises;
#[cfg(test)]
mod tests;

pub use arith::ArithOp;
pub(crate) use compare::strip_blanks;
pub use compare::CmpOp;
pub use compare::TextOrder;
pub use inlist::InSet;
pub use like::LikePattern;
pub use logic::BoolTest;

use crate::cast;
use crate::error::{ExecError, Result};
use crate::func::Func;
use crate::stack;
use crate::value::Value;
use crate::vector::{Batch, Data, Strings, Vector};
use std::borrow::Cow;
use std::sync::Arc;
use tusk_storage::{DataType, SqlType};

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Column {
        index: usize,
        ty: DataType,
    },
    Const {
        value: Value,
        ty: DataType,
    },
    /// A parameter: `$n` of a prepared statement, or an outer row's value
    /// inside a SubPlan. It must be replaced by a constant before evaluation
    /// (exec-ops' SubPlans do, with [`Expr::substitute_params`]).
    Param {
        index: usize,
        ty: DataType,
    },
    /// A left-deep chain `first op₁ x₁ op₂ x₂ ...` folded left to right.
    /// Every `xᵢ` and every intermediate result has type `ty`; `first` too,
    /// except in a chain of one step (`timestamp - timestamp` is an
    /// `interval`). Build with [`Expr::arith`].
    Arith {
        first: Box<Expr>,
        rest: Vec<(ArithOp, Expr)>,
        ty: DataType,
    },
    Neg {
        arg: Box<Expr>,
        ty: DataType,
    },
    /// `left op right`; both sides of one type.
    Cmp {
        op: CmpOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `ROW(l₁, l₂, ...) op ROW(r₁, r₂, ...)` for an ordering `op` (`<`,
    /// `<=`, `>`, `>=`): PostgreSQL's lexicographic row comparison
    /// (`RowCompareExpr`). Pairs are compared left to right; the first pair
    /// with a NULL makes the result NULL, the first unequal pair decides,
    /// and the later pairs are not evaluated for that row. All pairs equal:
    /// true for `<=` and `>=`. Each pair's sides have one type. (Row `=`
    /// and `<>` are plain AND / OR of the pairs' comparisons, as in
    /// PostgreSQL, and never this node.)
    RowCompare {
        op: CmpOp,
        left: Vec<Expr>,
        right: Vec<Expr>,
    },
    /// `left IS [NOT] DISTINCT FROM right`; never NULL.
    IsDistinct {
        left: Box<Expr>,
        right: Box<Expr>,
        negated: bool,
    },
    /// Conjunction of two or more terms (build with [`Expr::and`]).
    And(Vec<Expr>),
    /// Disjunction of two or more terms (build with [`Expr::or`]).
    Or(Vec<Expr>),
    Not(Box<Expr>),
    IsNull {
        arg: Box<Expr>,
        negated: bool,
    },
    /// `ROW(f₁, f₂, ...) IS [NOT] NULL` as the binder builds it: true when
    /// every field is NULL (with `negated`, when no field is); `ROW() IS
    /// NULL` is true. Constant folding always replaces it by the AND of the
    /// fields' own tests, after folding every field, as PostgreSQL's
    /// `eval_const_expressions` splits a row's `NullTest`: so a constant
    /// field that fails raises its error even when another field decides
    /// the test (`(6, 1 % 0) IS NULL`), which the AND's own folding, stopping
    /// at its first false term, would not. Evaluated unfolded, it computes
    /// every field.
    RowIsNull {
        fields: Vec<Expr>,
        negated: bool,
    },
    /// `arg IS [NOT] TRUE | FALSE | UNKNOWN`; never NULL.
    BoolTest {
        arg: Box<Expr>,
        test: BoolTest,
    },
    Cast {
        arg: Box<Expr>,
        to: DataType,
    },
    /// Applies a type modifier to a value of the modifier's type: rounds to
    /// `numeric(p, s)` (or fails with `numeric field overflow`), fits
    /// `varchar(n)` / `char(n)`: explicit casts truncate, assignments fail
    /// unless only blanks are cut; `char(n)` pads.
    Typmod {
        arg: Box<Expr>,
        ty: SqlType,
        explicit: bool,
    },
    /// `a || b || ...` over text (build with [`Expr::concat`]); NULL if any
    /// part is NULL. Non-text operands are cast to text by the binder
    /// (PostgreSQL's `anynonarray || text`).
    Concat(Vec<Expr>),
    /// `arg [NOT] [I]LIKE pattern`, `\` escaping (PostgreSQL rewrites
    /// `ESCAPE e` with `like_escape(pattern, e)`: [`Func::LikeEscape`]).
    Like {
        arg: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        case_insensitive: bool,
    },
    /// `arg ~ pattern`, `~*`, `!~`, `!~*` (POSIX regular expressions).
    /// `SIMILAR TO` is `arg ~ similar_to_escape(pattern)`, as in PostgreSQL.
    Regex {
        arg: Box<Expr>,
        pattern: Box<Expr>,
        negated: bool,
        case_insensitive: bool,
    },
    /// A `character(n)` value used as text: trailing spaces do not count
    /// (PostgreSQL's bpchar-to-text conversion).
    BpcharToText(Box<Expr>),
    /// `CASE [operand] WHEN w THEN r ... [ELSE e] END`. With an operand (the
    /// simple form), each `w` is a value of the operand's type, compared with
    /// `=`; without, each `w` is a boolean condition. Every result has type
    /// `ty`; without ELSE, unmatched rows are NULL.
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
        ty: DataType,
    },
    /// `COALESCE(a, b, ...)`, all of one type.
    Coalesce(Vec<Expr>),
    /// `NULLIF(left, right)`, of `left`'s type: both of one type, or
    /// `left` a narrower integer (float) type than `right`, compared in
    /// `right`'s type (PostgreSQL's cross-type `=`, as `int4 = int8`).
    NullIf {
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `GREATEST(...)` / `LEAST(...)`, all of one type; NULLs are ignored
    /// (NULL only when every argument is).
    MinMax {
        args: Vec<Expr>,
        greatest: bool,
    },
    /// `arg [NOT] IN (list)`, all of one type. `set` holds the list's
    /// constants for a hashed / binary-searched probe (built by
    /// [`Expr::in_list`] when every item is a constant).
    InList {
        arg: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
        set: Option<Arc<InSet>>,
    },
    /// A built-in function call, resolved by [`crate::func::resolve()`]; the
    /// arguments already have the parameter types the resolution chose.
    Call {
        func: Func,
        args: Vec<Expr>,
        ty: DataType,
    },
    /// `ARRAY[elems]`: an array of type `ty` whose elements (of its element
    /// type) are the expressions' values.
    Array {
        elems: Vec<Expr>,
        ty: DataType,
    },
    /// `array[index]`: the element of type `ty` at an integer subscript,
    /// NULL outside the array.
    Subscript {
        array: Box<Expr>,
        index: Box<Expr>,
        ty: DataType,
    },
    /// `arg op ANY (array)`, or `ALL` with `all`; `arg` has the array's
    /// element type (see `arrays`).
    AnyArray {
        arg: Box<Expr>,
        array: Box<Expr>,
        op: CmpOp,
        all: bool,
    },
}

/// Whether row `i` is active under `active`.
#[inline]
pub(crate) fn live(active: Option<&[bool]>, i: usize) -> bool {
    active.is_none_or(|m| m[i])
}

/// PostgreSQL's name of the LIKE operator [`Expr::Like`] stands for:
/// `~~`, `!~~`, `~~*` or `!~~*`.
pub fn like_operator(negated: bool, case_insensitive: bool) -> &'static str {
    match (negated, case_insensitive) {
        (false, false) => "~~",
        (true, false) => "!~~",
        (false, true) => "~~*",
        (true, true) => "!~~*",
    }
}

/// PostgreSQL's name of the regular-expression operator [`Expr::Regex`]
/// stands for: `~`, `!~`, `~*` or `!~*`.
pub fn regex_operator(negated: bool, case_insensitive: bool) -> &'static str {
    match (negated, case_insensitive) {
        (false, false) => "~",
        (true, false) => "!~",
        (false, true) => "~*",
        (true, true) => "!~*",
    }
}

impl Expr {
    /// A constant.
    pub fn constant(value: Value, ty: DataType) -> Expr {
        Expr::Const { value, ty }
    }

    /// `left op right` of result type `ty`, appended to `left`'s chain when
    /// `left` is a chain of the same type and `right` has that type too.
    pub fn arith(op: ArithOp, left: Expr, right: Expr, ty: DataType) -> Expr {
        match left {
            Expr::Arith {
                first,
                mut rest,
                ty: lty,
            } if lty == ty && first.data_type() == ty && right.data_type() == ty => {
                rest.push((op, right));
                Expr::Arith { first, rest, ty }
            }
            left => Expr::Arith {
                first: Box::new(left),
                rest: vec![(op, right)],
                ty,
            },
        }
    }

    /// `left op right` (a comparison).
    pub fn cmp(op: CmpOp, left: Expr, right: Expr) -> Expr {
        Expr::Cmp {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }

    /// `a AND b`, flattening nested conjunctions.
    pub fn and(a: Expr, b: Expr) -> Expr {
        Expr::and_all([a, b]).expect("two terms")
    }

    /// `a OR b`, flattening nested disjunctions.
    pub fn or(a: Expr, b: Expr) -> Expr {
        Expr::or_all([a, b]).expect("two terms")
    }

    /// The conjunction of `terms` (the term itself when there is one, `None`
    /// when there are none).
    pub fn and_all(terms: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        Self::nary(terms, true)
    }

    /// The disjunction of `terms`.
    pub fn or_all(terms: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        Self::nary(terms, false)
    }

    fn nary(terms: impl IntoIterator<Item = Expr>, is_and: bool) -> Option<Expr> {
        let mut out = Vec::new();
        for t in terms {
            let same = matches!((&t, is_and), (Expr::And(_), true) | (Expr::Or(_), false));
            match t {
                // Reuse the first term's vector, so that appending to a
                // chain is amortised O(1), not a copy of the chain.
                Expr::And(v) | Expr::Or(v) if same && out.is_empty() => out = v,
                Expr::And(v) | Expr::Or(v) if same => out.extend(v),
                t => out.push(t),
            }
        }
        match out.len() {
            0 => None,
            1 => out.pop(),
            _ if is_and => Some(Expr::And(out)),
            _ => Some(Expr::Or(out)),
        }
    }

    /// `a || b` over text, flattening nested concatenations.
    pub fn concat(a: Expr, b: Expr) -> Expr {
        let mut parts = match a {
            Expr::Concat(v) => v,
            a => vec![a],
        };
        match b {
            Expr::Concat(v) => parts.extend(v),
            b => parts.push(b),
        }
        Expr::Concat(parts)
    }

    /// `arg [NOT] IN (list)`; items must have `arg`'s type. Lists of
    /// constants are probed through a set.
    pub fn in_list(arg: Expr, list: Vec<Expr>, negated: bool) -> Expr {
        let set = InSet::build(arg.data_type(), &list).map(Arc::new);
        Expr::InList {
            arg: Box::new(arg),
            list,
            negated,
            set,
        }
    }

    /// A call of `func` (from [`crate::func::resolve()`]).
    pub fn call(func: Func, args: Vec<Expr>, ty: DataType) -> Expr {
        Expr::Call { func, args, ty }
    }

    pub fn data_type(&self) -> DataType {
        // A loop, not recursion: the type-preserving wrappers delegate to
        // their first argument.
        let mut e = self;
        loop {
            return match e {
                Expr::Column { ty, .. }
                | Expr::Param { ty, .. }
                | Expr::Const { ty, .. }
                | Expr::Arith { ty, .. }
                | Expr::Neg { ty, .. }
                | Expr::Case { ty, .. }
                | Expr::Call { ty, .. }
                | Expr::Array { ty, .. }
                | Expr::Subscript { ty, .. } => *ty,
                Expr::Cast { to, .. } => *to,
                Expr::Typmod { ty, .. } => ty.data_type(),
                Expr::Concat(_) | Expr::BpcharToText(_) => DataType::Text,
                Expr::Coalesce(args) | Expr::MinMax { args, .. } => {
                    e = &args[0];
                    continue;
                }
                Expr::NullIf { left, .. } => {
                    e = left;
                    continue;
                }
                Expr::Cmp { .. }
                | Expr::RowCompare { .. }
                | Expr::IsDistinct { .. }
                | Expr::And(..)
                | Expr::Or(..)
                | Expr::Not(_)
                | Expr::IsNull { .. }
                | Expr::RowIsNull { .. }
                | Expr::BoolTest { .. }
                | Expr::Like { .. }
                | Expr::Regex { .. }
                | Expr::InList { .. }
                | Expr::AnyArray { .. } => DataType::Bool,
            };
        }
    }

    /// Calls `f` on each direct sub-expression.
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match self {
            Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. } => {}
            Expr::Arith { first, rest, .. } => {
                f(first);
                rest.iter().for_each(|(_, e)| f(e));
            }
            Expr::Cmp { left, right, .. }
            | Expr::IsDistinct { left, right, .. }
            | Expr::NullIf { left, right }
            | Expr::Like {
                arg: left,
                pattern: right,
                ..
            }
            | Expr::Regex {
                arg: left,
                pattern: right,
                ..
            }
            | Expr::Subscript {
                array: left,
                index: right,
                ..
            }
            | Expr::AnyArray {
                arg: left,
                array: right,
                ..
            } => {
                f(left);
                f(right);
            }
            Expr::And(v)
            | Expr::Or(v)
            | Expr::Concat(v)
            | Expr::Coalesce(v)
            | Expr::MinMax { args: v, .. }
            | Expr::Call { args: v, .. }
            | Expr::RowIsNull { fields: v, .. }
            | Expr::Array { elems: v, .. } => v.iter().for_each(f),
            Expr::Neg { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull { arg, .. }
            | Expr::BoolTest { arg, .. }
            | Expr::Cast { arg, .. }
            | Expr::Typmod { arg, .. }
            | Expr::BpcharToText(arg) => f(arg),
            Expr::Case {
                operand,
                whens,
                otherwise,
                ..
            } => {
                if let Some(o) = operand {
                    f(o);
                }
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                if let Some(e) = otherwise {
                    f(e);
                }
            }
            Expr::InList { arg, list, .. } => {
                f(arg);
                list.iter().for_each(f);
            }
            Expr::RowCompare { left, right, .. } => left.iter().chain(right.iter()).for_each(f),
        }
    }

    /// Calls `f` on each direct sub-expression, mutably. (An `IN` list's
    /// constant set is not touched: rewriting constants in place must go
    /// through [`Expr::in_list`] again.)
    pub fn for_each_child_mut<'a>(&'a mut self, mut f: impl FnMut(&'a mut Expr)) {
        match self {
            Expr::Column { .. } | Expr::Const { .. } | Expr::Param { .. } => {}
            Expr::Arith { first, rest, .. } => {
                f(first);
                rest.iter_mut().for_each(|(_, e)| f(e));
            }
            Expr::Cmp { left, right, .. }
            | Expr::IsDistinct { left, right, .. }
            | Expr::NullIf { left, right }
            | Expr::Like {
                arg: left,
                pattern: right,
                ..
            }
            | Expr::Regex {
                arg: left,
                pattern: right,
                ..
            }
            | Expr::Subscript {
                array: left,
                index: right,
                ..
            }
            | Expr::AnyArray {
                arg: left,
                array: right,
                ..
            } => {
                f(left);
                f(right);
            }
            Expr::And(v)
            | Expr::Or(v)
            | Expr::Concat(v)
            | Expr::Coalesce(v)
            | Expr::MinMax { args: v, .. }
            | Expr::Call { args: v, .. }
            | Expr::RowIsNull { fields: v, .. }
            | Expr::Array { elems: v, .. } => v.iter_mut().for_each(f),
            Expr::Neg { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull { arg, .. }
            | Expr::BoolTest { arg, .. }
            | Expr::Cast { arg, .. }
            | Expr::Typmod { arg, .. }
            | Expr::BpcharToText(arg) => f(arg),
            Expr::Case {
                operand,
                whens,
                otherwise,
                ..
            } => {
                if let Some(o) = operand {
                    f(o);
                }
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                if let Some(e) = otherwise {
                    f(e);
                }
            }
            Expr::InList { arg, list, .. } => {
                f(arg);
                list.iter_mut().for_each(f);
            }
            Expr::RowCompare { left, right, .. } => {
                left.iter_mut().chain(right.iter_mut()).for_each(f)
            }
        }
    }

    /// Calls `f` on this node and every node below it, parents first (an
    /// explicit work list: no recursion).
    pub fn visit<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        let mut work = vec![self];
        while let Some(e) = work.pop() {
            f(e);
            let at = work.len();
            e.for_each_child(|c| work.push(c));
            work[at..].reverse();
        }
    }

    /// Column indexes this expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        self.visit(|e| {
            if let Expr::Column { index, .. } = e {
                out.push(*index);
            }
        });
    }

    /// Rewrites column references through `map` (old index -> new index).
    pub fn remap_columns(&mut self, map: &dyn Fn(usize) -> usize) {
        let mut work: Vec<&mut Expr> = vec![self];
        while let Some(e) = work.pop() {
            match e {
                Expr::Column { index, .. } => *index = map(*index),
                e => e.for_each_child_mut(|c| work.push(c)),
            }
        }
    }

    /// Replaces each `Param` whose index `values` maps by that constant.
    pub fn substitute_params(&mut self, values: &dyn Fn(usize) -> Option<Value>) {
        let mut work: Vec<&mut Expr> = vec![self];
        while let Some(e) = work.pop() {
            match e {
                Expr::Param { index, ty } => {
                    if let Some(value) = values(*index) {
                        *e = Expr::Const { value, ty: *ty };
                    }
                }
                e => e.for_each_child_mut(|c| work.push(c)),
            }
        }
    }

    /// Whether any `Param` with an index `wanted` accepts occurs.
    pub fn uses_params(&self, wanted: &dyn Fn(usize) -> bool) -> bool {
        let mut found = false;
        self.visit(|e| {
            if let Expr::Param { index, .. } = e {
                found = found || wanted(*index);
            }
        });
        found
    }

    /// Whether the expression reads no column and calls no volatile or
    /// stable function: the constant-folding pass may evaluate it once, with
    /// [`Expr::eval_const`].
    pub fn is_constant(&self) -> bool {
        let mut constant = true;
        self.visit(|e| match e {
            Expr::Column { .. } | Expr::Param { .. } => constant = false,
            Expr::Call { func, .. } if func.volatile() || func.stable() => constant = false,
            Expr::Cast { arg, to } if cast_reads_catalog(arg.data_type(), *to) => constant = false,
            _ => {}
        });
        constant
    }

    /// Whether it calls a volatile function (`random()`): its value may
    /// differ between two evaluations over the same row.
    pub fn is_volatile(&self) -> bool {
        let mut volatile = false;
        self.visit(|e| {
            if let Expr::Call { func, .. } = e {
                volatile |= func.volatile();
            }
        });
        volatile
    }

    /// Whether the node returns NULL whenever one of its direct arguments is
    /// NULL (without evaluating anything else): the constant-folding pass may
    /// replace it by a NULL constant when an argument folds to NULL, as
    /// PostgreSQL's `simplify_function` does for strict functions.
    pub fn is_strict(&self) -> bool {
        match self {
            Expr::Arith { .. }
            | Expr::Neg { .. }
            | Expr::Cmp { .. }
            | Expr::Not(_)
            | Expr::Cast { .. }
            | Expr::Typmod { .. }
            | Expr::Concat(_)
            | Expr::Like { .. }
            | Expr::Regex { .. }
            | Expr::BpcharToText(_) => true,
            Expr::Call { func, .. } => func.strict(),
            _ => false,
        }
    }

    /// Evaluates an expression without column references once (for constant
    /// folding and for constants the binder must check, such as LIMIT).
    pub fn eval_const(&self) -> Result<Value> {
        let v = self.eval(&Batch::new(Vec::new(), 1))?;
        Ok(v.value_as(0, self.data_type()))
    }

    /// Evaluates over every row of `batch`.
    pub fn eval(&self, batch: &Batch) -> Result<Vector> {
        self.eval_active(batch, None)
    }

    /// Evaluates as a qualification (a WHERE clause): true for the rows
    /// where the expression is true. A top-level AND is PostgreSQL's
    /// implicit-AND qual list: a row leaves at its first term that is false
    /// *or NULL*, so later terms never raise errors for it. (As an ordinary
    /// expression, `NULL AND x` must still evaluate `x`, which could be
    /// false.)
    pub fn eval_qual(&self, batch: &Batch) -> Result<Vec<bool>> {
        stack::guarded(|| match self {
            Expr::And(terms) => logic::eval_qual_list(terms, batch),
            e => {
                let v = e.eval(batch)?;
                logic::true_rows(v)
            }
        })
    }

    /// Evaluates; rows where `active` is false raise no errors.
    pub fn eval_active(&self, batch: &Batch, active: Option<&[bool]>) -> Result<Vector> {
        Ok(self.eval_ref(batch, active)?.into_owned())
    }

    /// Evaluates like [`Expr::eval_active`], but a column reference is the
    /// batch's own vector, not a copy of it.
    pub fn eval_ref<'b>(
        &self,
        batch: &'b Batch,
        active: Option<&[bool]>,
    ) -> Result<Cow<'b, Vector>> {
        match self {
            Expr::Column { index, .. } => match batch.columns.get(*index) {
                Some(v) => Ok(Cow::Borrowed(v)),
                None => deferred::compute(*index, batch, active).map(Cow::Owned),
            },
            // `varchar` to `text` and the like change no byte: the
            // argument's vector is the result.
            Expr::Cast { arg, to } if cast::keeps_strings(arg.data_type(), *to) => {
                stack::guarded(|| {
                    let v = arg.eval_ref(batch, active)?;
                    if matches!(v.data, Data::Text(_)) {
                        return Ok(v);
                    }
                    cast_plain(&v, arg.data_type(), *to, active).map(Cow::Owned)
                })
            }
            _ => stack::guarded(|| self.eval_node(batch, active)).map(Cow::Owned),
        }
    }

    fn eval_node(&self, batch: &Batch, active: Option<&[bool]>) -> Result<Vector> {
        let n = batch.len;
        match self {
            Expr::Column { index, .. } => match batch.columns.get(*index) {
                Some(v) => Ok(v.clone()),
                None => deferred::compute(*index, batch, active),
            },
            Expr::Const { value, ty } => Ok(Vector::constant(value, *ty, n)),
            Expr::Param { index, .. } => Err(ExecError::new(format!(
                "there is no parameter ${}",
                index + 1
            ))),
            Expr::Arith { first, rest, ty } => arith::eval_chain(first, rest, *ty, batch, active),
            Expr::Neg { arg, .. } => {
                let v = arg.eval_ref(batch, active)?;
                arith::negate(&v, active)
            }
            Expr::Cmp { op, left, right } => compare::eval_cmp(*op, left, right, batch, active),
            Expr::RowCompare { op, left, right } => {
                compare::eval_row_compare(*op, left, right, batch, active)
            }
            Expr::IsDistinct {
                left,
                right,
                negated,
            } => compare::eval_distinct(left, right, *negated, batch, active),
            Expr::And(terms) => logic::eval_nary(terms, true, batch, active),
            Expr::Or(terms) => logic::eval_nary(terms, false, batch, active),
            Expr::Not(a) => {
                let v = a.eval_active(batch, active)?;
                let (b, nulls) = bools(&v)?;
                Ok(Vector::new(
                    Data::Bool(b.iter().map(|x| !x).collect()),
                    nulls.cloned(),
                ))
            }
            Expr::IsNull { arg, negated } => {
                let v = arg.eval_ref(batch, active)?;
                let out = (0..n).map(|i| v.is_null(i) != *negated).collect();
                Ok(Vector::new(Data::Bool(out), None))
            }
            Expr::RowIsNull { fields, negated } => {
                let mut out = vec![true; n];
                for f in fields {
                    let v = f.eval_ref(batch, active)?;
                    for (i, o) in out.iter_mut().enumerate() {
                        *o &= v.is_null(i) != *negated;
                    }
                }
                Ok(Vector::new(Data::Bool(out), None))
            }
            Expr::BoolTest { arg, test } => {
                let v = arg.eval_active(batch, active)?;
                logic::bool_test(&v, *test)
            }
            Expr::Cast { arg, to } => {
                let v = arg.eval_ref(batch, active)?;
                cast_plain(&v, arg.data_type(), *to, active)
            }
            Expr::Typmod { arg, ty, explicit } => {
                let v = arg.eval_ref(batch, active)?;
                crate::env::with(|env| {
                    cast::cast_vector(&v, ty.data_type(), *ty, *explicit, env, active)
                })
            }
            Expr::BpcharToText(arg) => bpchar_to_text(&*arg.eval_ref(batch, active)?),
            Expr::Concat(parts) => {
                let vs = parts
                    .iter()
                    .map(|p| p.eval_active(batch, active))
                    .collect::<Result<Vec<_>>>()?;
                concat_vectors(&vs, n)
            }
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => pattern::eval_like(arg, pattern, *negated, *case_insensitive, batch, active),
            Expr::Regex {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => pattern::eval_regex(arg, pattern, *negated, *case_insensitive, batch, active),
            Expr::Case {
                operand,
                whens,
                otherwise,
                ty,
            } => cond::eval_case(
                operand.as_deref(),
                whens,
                otherwise.as_deref(),
                *ty,
                batch,
                active,
            ),
            Expr::Coalesce(args) => cond::eval_coalesce(args, batch, active),
            Expr::NullIf { left, right } => cond::eval_nullif(left, right, batch, active),
            Expr::MinMax { args, greatest } => cond::eval_minmax(args, *greatest, batch, active),
            Expr::InList {
                arg,
                list,
                negated,
                set,
            } => inlist::eval_in(arg, list, *negated, set.as_deref(), batch, active),
            Expr::Call { func, args, ty } => {
                let vs = args
                    .iter()
                    .map(|a| a.eval_active(batch, active))
                    .collect::<Result<Vec<_>>>()?;
                let types: Vec<DataType> = args.iter().map(Expr::data_type).collect();
                func.eval(&vs, &types, *ty, n, active)
            }
            Expr::Array { elems, ty } => arrays::eval_constructor(elems, *ty, batch, active),
            Expr::Subscript { array, index, ty } => {
                arrays::eval_subscript(array, index, *ty, batch, active)
            }
            Expr::AnyArray {
                arg,
                array,
                op,
                all,
            } => arrays::eval_any(arg, array, *op, *all, batch, active),
        }
    }
}

/// Whether a cast from `from` to `to` looks names up in the catalog (a
/// reg type read from or printed as text): a stable operation, never
/// folded into a plan.
pub fn cast_reads_catalog(from: DataType, to: DataType) -> bool {
    let reg = |t: DataType| {
        let t = t.element().unwrap_or(t);
        t.is_oid() && t != DataType::Oid
    };
    (reg(from) && to.is_string()) || (reg(to) && from.is_string())
}

/// Evaluates each expression over `batch`.
pub fn eval_all(exprs: &[Expr], batch: &Batch) -> Result<Vec<Vector>> {
    exprs.iter().map(|e| e.eval(batch)).collect()
}

/// The values and null mask of a boolean vector.
pub(crate) fn bools(v: &Vector) -> Result<(&[bool], Option<&Vec<bool>>)> {
    match &v.data {
        Data::Bool(b) => Ok((b, v.nulls.as_ref())),
        _ => Err(ExecError::new(
            "boolean expression produced a non-boolean vector",
        )),
    }
}

/// `character(n)` values as text: without their trailing blanks.
fn bpchar_to_text(v: &Vector) -> Result<Vector> {
    let Data::Text(s) = &v.data else {
        return Err(ExecError::new("character(n) value is not text"));
    };
    let mut out = Strings::with_capacity(s.len(), s.bytes_len());
    for x in s.iter() {
        out.push(compare::strip_blanks(x));
    }
    Ok(Vector::new(Data::Text(out), v.nulls.clone()))
}

/// `v` (of type `from`) cast to `to` without a typmod, where explicit or
/// not makes no difference; the session's settings (time zone, styles)
/// come from `env`.
fn cast_plain(v: &Vector, from: DataType, to: DataType, active: Option<&[bool]>) -> Result<Vector> {
    crate::env::with(|env| cast::cast_vector(v, from, SqlType::of(to), true, env, active))
}

/// The union of two null masks.
pub(crate) fn or_nulls(a: &Vector, b: &Vector) -> Option<Vec<bool>> {
    match (&a.nulls, &b.nulls) {
        (None, None) => None,
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (Some(x), Some(y)) => Some(x.iter().zip(y).map(|(p, q)| *p || *q).collect()),
    }
}

/// The union of the null masks of `vs` (rows of `n`).
pub(crate) fn any_null(vs: &[Vector], n: usize) -> Option<Vec<bool>> {
    let mut out: Option<Vec<bool>> = None;
    for v in vs {
        if let Some(m) = &v.nulls {
            let o = out.get_or_insert_with(|| vec![false; n]);
            o.iter_mut().zip(m).for_each(|(a, b)| *a |= *b);
        }
    }
    out
}

fn concat_vectors(vs: &[Vector], n: usize) -> Result<Vector> {
    let parts = vs
        .iter()
        .map(|v| match &v.data {
            Data::Text(s) => Ok(s),
            _ => Err(ExecError::new("operator || expects text operands")),
        })
        .collect::<Result<Vec<_>>>()?;
    let bytes = parts.iter().map(|s| s.bytes_len()).sum();
    let nulls = any_null(vs, n);
    let mut out = Strings::with_capacity(n, bytes);
    let mut buf = Vec::new();
    for i in 0..n {
        buf.clear();
        if !nulls.as_ref().is_some_and(|m| m[i]) {
            for s in &parts {
                buf.extend_from_slice(s.get(i));
            }
        }
        out.push(&buf);
    }
    Ok(Vector::new(Data::Text(out), nulls))
}
