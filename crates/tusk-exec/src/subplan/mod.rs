//! SubPlans: correlated and uncorrelated subqueries the planner could not
//! turn into joins, computed per outer row (PostgreSQL's SubPlan and
//! InitPlan).
//!
//! The node appends one column per [`SubPlanSpec`] to each input batch.
//! For every outer row the spec's `params` are evaluated and their values
//! replace the `Param`s of the subplan ([`Plan::for_each_expr_mut`]); the
//! instantiated plan is built with the dispatcher handed in ([`BuildFn`])
//! and run only as far as the answer needs:
//!
//! | kind | value | reads |
//! |---|---|---|
//! | EXISTS | whether a row comes back | one row |
//! | scalar | the first column of the only row; NULL for none; error 21000 for two | two rows |
//! | ANY (`test`) | true if `test` is true for some row, else NULL if it was NULL for some, else false | until a true |
//! | ALL (`test`) | false if `test` is false for some row, else NULL if it was NULL for some, else true | until a false |
//! | row comparison (`test`) | `test` over the only row; NULL for none; error 21000 for two | two rows |
//!
//! The parameters are evaluated for a batch of outer rows before the
//! subplan runs, except for an uncorrelated ANY/ALL whose rows are
//! computed first: over no rows its answer needs no left side, which
//! PostgreSQL then never evaluates (`(1 / x, y) IN (SELECT ...)` raises
//! nothing).
//!
//! A row whose parameter values equal the previous row's reuses its answer.
//!
//! Directly below a Filter, Project or Aggregate, a chain of SubPlans nodes
//! is not an operator of its own: the node above computes each subplan
//! only for the rows where its expression reaches it (`deferred`), with
//! the same [`Runner`]s.
//!
//! **Uncorrelated subplans** (the plan reads none of the parameters) run
//! once. EXISTS and scalar keep their one value (an InitPlan). ANY/ALL keep
//! the rows in a [`TupleStore`] (spilling past `work_mem`) and evaluate the
//! test against them per outer row. When the test is `col = $p AND ...`
//! (`IN`), the null-free rows are also hashed on those columns — while
//! they fit in `work_mem × hash_mem_multiplier` — so a non-NULL outer value
//! is answered by one lookup; a miss is false unless some stored row has a
//! NULL in those columns, when the rows are scanned for the three-valued
//! answer (PostgreSQL's hashed SubPlan does the same).

use crate::error::{sqlstate, ExecError, Result};
use crate::expr::{CmpOp, Expr};
use crate::memory::WorkMem;
use crate::operator::{BuildFn, ExecContext, Operator};
use crate::plan::{NodeKind, Plan, SubPlanKind, SubPlanSpec};
use crate::sortkey::{encode_row, KeyOrder};
use crate::tuplestore::{Cursor, TupleStore};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use std::collections::HashSet;

mod deferred;
pub use deferred::{aggregate_input, DeferredSubPlans};
use tusk_storage::DataType;

/// A ANY/ALL accumulation over the test's values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Truth {
    True,
    False,
    Unknown,
}

/// Folds the test's results for some rows into the running answer;
/// returns true when the answer can no longer change.
fn fold(any: bool, acc: &mut Truth, v: &Vector) -> bool {
    let Data::Bool(b) = &v.data else {
        return false;
    };
    for (i, &x) in b.iter().enumerate() {
        if v.is_null(i) {
            *acc = match *acc {
                Truth::True if any => Truth::True,
                Truth::False if !any => Truth::False,
                _ => Truth::Unknown,
            };
        } else if x == any {
            // A decisive row: true for ANY, false for ALL.
            *acc = if any { Truth::True } else { Truth::False };
            return true;
        }
    }
    false
}

/// Folds the test's results over the rows of `b` into the running answer;
/// returns true when the answer can no longer change. The test is evaluated
/// over the whole batch at once; when that fails, again row by row, in
/// order, up to the decisive row, as PostgreSQL tests a SubPlan's rows one
/// at a time and stops there: only an error of a row before it is raised
/// (`(a, 10 / b) >= ALL (...)` never divides for the rows after a false).
fn fold_batch(any: bool, acc: &mut Truth, test: &Expr, b: &Batch) -> Result<bool> {
    match test.eval(b) {
        Ok(v) => Ok(fold(any, acc, &v)),
        Err(e) if b.len > 1 && e.is_data_error() => {
            for i in 0..b.len {
                if fold(any, acc, &test.eval(&b.gather(&[i as u32]))?) {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

fn answer(acc: Truth) -> Value {
    match acc {
        Truth::True => Value::Bool(true),
        Truth::False => Value::Bool(false),
        Truth::Unknown => Value::Null,
    }
}

fn more_than_one_row() -> ExecError {
    ExecError::coded(
        sqlstate::CARDINALITY_VIOLATION,
        "more than one row returned by a subquery used as an expression",
    )
}

/// The only row a subplan returns (`None` for no row; error 21000 when
/// there is a second), as a batch of one row.
fn only_row(op: &mut dyn Operator) -> Result<Option<Batch>> {
    let mut found: Option<Batch> = None;
    while let Some(b) = op.next()? {
        if b.len == 0 {
            continue;
        }
        if found.is_some() || b.len > 1 {
            return Err(more_than_one_row());
        }
        found = Some(b);
    }
    Ok(found)
}

/// The rows of an uncorrelated ANY/ALL subplan.
struct Materialized {
    rows: TupleStore,
    /// `IN`: the columns compared with parameters, and the parameter (its
    /// position in `params`) each is compared with.
    hashed: Option<Hashed>,
}

struct Hashed {
    cols: Vec<usize>,
    params: Vec<usize>,
    orders: Vec<KeyOrder>,
    keys: HashSet<Vec<u8>>,
    /// Some stored row has a NULL in `cols`.
    null_rows: bool,
}

/// The (column, parameter) pairs of a test that is a conjunction of
/// equalities between subplan columns and parameters.
fn equalities(test: &Expr, param_ids: &[usize], out: &mut Vec<(usize, usize)>) -> bool {
    match test {
        Expr::And(terms) => terms.iter().all(|t| equalities(t, param_ids, out)),
        Expr::Cmp {
            op: CmpOp::Eq,
            left,
            right,
        } => match (&**left, &**right) {
            (Expr::Column { index, ty: a }, Expr::Param { index: p, ty: b })
            | (Expr::Param { index: p, ty: b }, Expr::Column { index, ty: a })
                if a == b =>
            {
                match param_ids.iter().position(|x| x == p) {
                    Some(k) => {
                        out.push((*index, k));
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        },
        _ => false,
    }
}

struct Runner {
    spec: SubPlanSpec,
    param_types: Vec<DataType>,
    correlated: bool,
    /// Uncorrelated EXISTS / scalar: the value.
    once: Option<Value>,
    /// Uncorrelated ANY / ALL: the rows.
    rows: Option<Materialized>,
    /// Uncorrelated row comparison: the subquery's only row, if any.
    once_row: Option<Option<Batch>>,
    /// The previous row's parameter values and answer.
    last: Option<(Vec<Value>, Value)>,
}

impl Runner {
    fn new(spec: SubPlanSpec) -> Runner {
        let ids = spec.param_ids.clone();
        let correlated = spec.plan.uses_params(&|i| ids.contains(&i));
        Runner {
            param_types: spec.params.iter().map(|e| e.data_type()).collect(),
            spec,
            correlated,
            once: None,
            rows: None,
            once_row: None,
            last: None,
        }
    }

    /// The plan with the parameters of one outer row substituted.
    fn instantiate(&self, vals: &[Value]) -> Plan {
        let mut p = self.spec.plan.clone();
        let ids = &self.spec.param_ids;
        let lookup = |i: usize| ids.iter().position(|&x| x == i).map(|k| vals[k].clone());
        p.for_each_expr_mut(&mut |e| e.substitute_params(&lookup));
        p
    }

    fn test_for(&self, vals: &[Value]) -> Option<(Expr, bool)> {
        let (test, any) = match &self.spec.kind {
            SubPlanKind::Any { test } => (test, true),
            SubPlanKind::All { test } => (test, false),
            SubPlanKind::RowCompare { test } => (test, false),
            _ => return None,
        };
        let mut t = test.clone();
        let ids = &self.spec.param_ids;
        t.substitute_params(&|i| ids.iter().position(|&x| x == i).map(|k| vals[k].clone()));
        Some((t, any))
    }

    /// A row comparison's answer: `test` over the subquery's only row
    /// (`None`: it returned none, and the answer is NULL).
    fn compare_row(&self, row: Option<&Batch>, vals: &[Value]) -> Result<Value> {
        let Some(row) = row else {
            return Ok(Value::Null);
        };
        let (test, _) = self.test_for(vals).expect("a row comparison has a test");
        Ok(test.eval(row)?.value_as(0, DataType::Bool))
    }

    /// The answer for one outer row with parameter values `vals`.
    fn value(&mut self, vals: &[Value], ctx: &ExecContext, build: BuildFn) -> Result<Value> {
        if let Some((prev, v)) = &self.last {
            if prev == vals {
                return Ok(v.clone());
            }
        }
        let v = if self.correlated {
            let plan = self.instantiate(vals);
            let mut op = build(&plan, ctx)?;
            self.run(op.as_mut(), vals)?
        } else {
            match self.spec.kind {
                SubPlanKind::Exists | SubPlanKind::Scalar => {
                    if self.once.is_none() {
                        let mut op = build(&self.spec.plan, ctx)?;
                        self.once = Some(self.run(op.as_mut(), vals)?);
                    }
                    self.once.clone().unwrap()
                }
                SubPlanKind::RowCompare { .. } => {
                    if self.once_row.is_none() {
                        let mut op = build(&self.spec.plan, ctx)?;
                        self.once_row = Some(only_row(op.as_mut())?);
                    }
                    let row = self.once_row.as_ref().unwrap().as_ref();
                    self.compare_row(row, vals)?
                }
                _ => self.against_rows(vals, ctx, build)?,
            }
        };
        self.last = Some((vals.to_vec(), v.clone()));
        Ok(v)
    }

    /// Runs an instantiated subplan as far as the answer needs.
    fn run(&self, op: &mut dyn Operator, vals: &[Value]) -> Result<Value> {
        match &self.spec.kind {
            SubPlanKind::Exists => {
                while let Some(b) = op.next()? {
                    if b.len > 0 {
                        return Ok(Value::Bool(true));
                    }
                }
                Ok(Value::Bool(false))
            }
            SubPlanKind::Scalar => {
                let ty = self.spec.result_type();
                Ok(only_row(op)?.map_or(Value::Null, |b| b.columns[0].value_as(0, ty)))
            }
            SubPlanKind::RowCompare { .. } => {
                let row = only_row(op)?;
                self.compare_row(row.as_ref(), vals)
            }
            _ => {
                let (test, any) = self.test_for(vals).expect("ANY/ALL has a test");
                let mut acc = if any { Truth::False } else { Truth::True };
                while let Some(b) = op.next()? {
                    if b.len > 0 && fold_batch(any, &mut acc, &test, &b)? {
                        break;
                    }
                }
                Ok(answer(acc))
            }
        }
    }

    /// The answer of an uncorrelated ANY/ALL whose subquery returns no
    /// rows: false (ANY) or true (ALL) for every outer row, with the left
    /// side never evaluated, as in PostgreSQL, which evaluates it only
    /// against a row of the subquery (or, hashed, not at all when the
    /// table is empty). `None` for any other subplan; the rows are
    /// computed here on first use.
    fn answer_for_no_rows(&mut self, ctx: &ExecContext, build: BuildFn) -> Result<Option<Value>> {
        let any = match self.spec.kind {
            SubPlanKind::Any { .. } => true,
            SubPlanKind::All { .. } => false,
            _ => return Ok(None),
        };
        if self.correlated {
            return Ok(None);
        }
        if self.rows.is_none() {
            self.rows = Some(self.materialize(ctx, build)?);
        }
        let empty = self.rows.as_ref().is_some_and(|m| m.rows.is_empty());
        Ok(empty.then_some(Value::Bool(!any)))
    }

    /// ANY/ALL of an uncorrelated subplan: rows computed once.
    fn against_rows(&mut self, vals: &[Value], ctx: &ExecContext, build: BuildFn) -> Result<Value> {
        if self.rows.is_none() {
            self.rows = Some(self.materialize(ctx, build)?);
        }
        let (test, any) = self.test_for(vals).expect("ANY/ALL has a test");
        let m = self.rows.as_mut().unwrap();
        if let Some(h) = &m.hashed {
            if h.params.iter().all(|&k| !vals[k].is_null()) {
                let mut key = Vec::new();
                let mut cols = Vec::new();
                for (&k, o) in h.params.iter().zip(&h.orders) {
                    let mut v = Vector::with_capacity(o.ty, 1);
                    v.push_value(&vals[k]);
                    cols.push(v);
                }
                let refs: Vec<&Vector> = cols.iter().collect();
                encode_row(&refs, &h.orders, 0, &mut key);
                if h.keys.contains(&key) {
                    return Ok(Value::Bool(true));
                }
                if !h.null_rows {
                    return Ok(Value::Bool(false));
                }
            }
        }
        let mut acc = if any { Truth::False } else { Truth::True };
        let mut cursor = Cursor::default();
        while let Some(b) = cursor.next(&mut m.rows)? {
            if fold_batch(any, &mut acc, &test, &b)? {
                break;
            }
        }
        Ok(answer(acc))
    }

    /// The subplan's column over `batch`: its answer for each row `active`
    /// marks (all rows when `None`), NULL elsewhere. The parameters are
    /// evaluated for those rows only.
    fn column(
        &mut self,
        batch: &Batch,
        active: Option<&[bool]>,
        ctx: &ExecContext,
        build: BuildFn,
    ) -> Result<Vector> {
        let ty = self.spec.result_type();
        let any_active = (0..batch.len).any(|i| crate::expr::live(active, i));
        if !any_active {
            return Ok(Vector::nulls(ty, batch.len));
        }
        if let Some(v) = self.answer_for_no_rows(ctx, build)? {
            return Ok(Vector::constant(&v, ty, batch.len));
        }
        let params = self
            .spec
            .params
            .iter()
            .map(|e| e.eval_active(batch, active))
            .collect::<Result<Vec<Vector>>>()?;
        let mut out = Vector::with_capacity(ty, batch.len);
        for row in 0..batch.len {
            if !crate::expr::live(active, row) {
                out.push_value(&Value::Null);
                continue;
            }
            let vals: Vec<Value> = params
                .iter()
                .zip(&self.param_types)
                .map(|(v, &t)| v.value_as(row, t))
                .collect();
            out.push_value(&self.value(&vals, ctx, build)?);
        }
        Ok(out)
    }

    fn materialize(&self, ctx: &ExecContext, build: BuildFn) -> Result<Materialized> {
        let mut op = build(&self.spec.plan, ctx)?;
        let mut rows = TupleStore::new(&self.spec.plan.output, WorkMem::sort(ctx));
        let mut pairs = Vec::new();
        let hashable = matches!(&self.spec.kind, SubPlanKind::Any { test }
            if equalities(test, &self.spec.param_ids, &mut pairs));
        let mut hashed = hashable.then(|| Hashed {
            cols: pairs.iter().map(|p| p.0).collect(),
            params: pairs.iter().map(|p| p.1).collect(),
            orders: pairs
                .iter()
                .map(|p| KeyOrder::asc(self.spec.plan.output[p.0]))
                .collect(),
            keys: HashSet::new(),
            null_rows: false,
        });
        let limit = WorkMem::hash(ctx).limit;
        let mut bytes = 0;
        while let Some(b) = op.next()? {
            if let Some(h) = &mut hashed {
                let cols: Vec<&Vector> = h.cols.iter().map(|&c| &b.columns[c]).collect();
                let mut key = Vec::new();
                for r in 0..b.len {
                    if cols.iter().any(|c| c.is_null(r)) {
                        h.null_rows = true;
                        continue;
                    }
                    key.clear();
                    encode_row(&cols, &h.orders, r, &mut key);
                    bytes += key.len() + 32;
                    h.keys.insert(key.clone());
                }
            }
            if bytes > limit {
                // Too big to hash: the rows are scanned instead.
                hashed = None;
            }
            rows.append(&b)?;
        }
        Ok(Materialized { rows, hashed })
    }
}

pub struct SubPlans {
    input: Box<dyn Operator>,
    runners: Vec<Runner>,
    ctx: ExecContext,
    build: BuildFn,
}

impl SubPlans {
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        input: Box<dyn Operator>,
        build: BuildFn,
    ) -> SubPlans {
        let NodeKind::SubPlans { subplans } = &plan.kind else {
            unreachable!("SubPlans::new on another node")
        };
        SubPlans {
            input,
            runners: subplans.iter().cloned().map(Runner::new).collect(),
            ctx: ctx.clone(),
            build,
        }
    }
}

impl Operator for SubPlans {
    fn next(&mut self) -> Result<Option<Batch>> {
        let Some(mut b) = self.input.next()? else {
            return Ok(None);
        };
        for r in &mut self.runners {
            let v = r.column(&b, None, &self.ctx, self.build)?;
            b.columns.push(v);
        }
        Ok(Some(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::build;
    use crate::testing::{col, lit, node, rows_of, text_rows, TestDb};
    use tusk_storage::DataType::{Bool, Int8};

    const X: usize = 100;

    fn values(xs: &[Option<i64>]) -> Plan {
        node(
            NodeKind::Values {
                rows: xs
                    .iter()
                    .map(|x| vec![lit(x.map_or(Value::Null, Value::Int8), Int8)])
                    .collect(),
            },
            vec![],
            vec![Int8],
        )
    }

    fn u() -> Plan {
        values(&[Some(1), Some(2), Some(2), None, Some(5)])
    }

    fn cmp(op: CmpOp, l: Expr, r: Expr) -> Expr {
        Expr::Cmp {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }
    }

    fn param(index: usize) -> Expr {
        Expr::Param { index, ty: Int8 }
    }

    fn filter(p: Plan, predicate: Expr) -> Plan {
        let out = p.output.to_vec();
        node(NodeKind::Filter { predicate }, vec![p], out)
    }

    fn spec(plan: Plan, kind: SubPlanKind, number: usize) -> SubPlanSpec {
        SubPlanSpec {
            plan,
            kind,
            params: vec![col(0, Int8)],
            param_ids: vec![X],
            number,
            needed_above: true,
        }
    }

    /// Runs SubPlans over outer rows x = 1, 2, 3, NULL, 5.
    fn run(specs: Vec<SubPlanSpec>) -> Result<Vec<String>> {
        run_over(|p| p, specs)
    }

    /// Each column checked against PostgreSQL 15:
    /// ```sql
    /// with u(y) as (values (1),(2),(2),(null),(5)), t(x) as (values (1),(2),(3),(null),(5))
    /// select x, x in (select y from u), x not in (select y from u),
    ///   x in (select y from u where y is not null), exists (select 1 from u where y = x),
    ///   x > any (select y from u), x < all (select y from u where y is not null),
    ///   (select y from u where y = x and x <> 2) from t;
    /// ```
    #[test]
    fn three_valued_answers_match_postgres() {
        let y = || col(0, Int8);
        let not_null = || Expr::IsNull {
            arg: Box::new(y()),
            negated: true,
        };
        let got = run(vec![
            // x IN (u): hashed.
            spec(
                u(),
                SubPlanKind::Any {
                    test: cmp(CmpOp::Eq, y(), param(X)),
                },
                1,
            ),
            // x NOT IN (u) = x <> ALL (u).
            spec(
                u(),
                SubPlanKind::All {
                    test: cmp(CmpOp::Ne, param(X), y()),
                },
                2,
            ),
            spec(
                filter(u(), not_null()),
                SubPlanKind::Any {
                    test: cmp(CmpOp::Eq, param(X), y()),
                },
                3,
            ),
            // Correlated EXISTS.
            spec(
                filter(u(), cmp(CmpOp::Eq, y(), param(X))),
                SubPlanKind::Exists,
                4,
            ),
            spec(
                u(),
                SubPlanKind::Any {
                    test: cmp(CmpOp::Gt, param(X), y()),
                },
                5,
            ),
            spec(
                filter(u(), not_null()),
                SubPlanKind::All {
                    test: cmp(CmpOp::Lt, param(X), y()),
                },
                6,
            ),
            // Correlated scalar.
            spec(
                filter(
                    u(),
                    Expr::and(
                        cmp(CmpOp::Eq, y(), param(X)),
                        cmp(CmpOp::Ne, param(X), lit(Value::Int8(2), Int8)),
                    ),
                ),
                SubPlanKind::Scalar,
                7,
            ),
        ])
        .unwrap();
        assert_eq!(
            got,
            [
                "1|t|f|t|t|NULL|f|1",
                "2|t|f|t|t|t|f|NULL",
                "3|NULL|NULL|f|f|t|f|NULL",
                "NULL|NULL|NULL|NULL|f|NULL|NULL|NULL",
                "5|t|f|t|t|t|f|5",
            ]
        );
    }

    #[test]
    fn a_scalar_subquery_of_two_rows_is_an_error() {
        let y = col(0, Int8);
        let e = run(vec![spec(
            filter(u(), cmp(CmpOp::Eq, y, param(X))),
            SubPlanKind::Scalar,
            1,
        )])
        .unwrap_err();
        assert_eq!(e.code, "21000");
        assert_eq!(
            e.message,
            "more than one row returned by a subquery used as an expression"
        );
    }

    /// An uncorrelated subplan runs once (an InitPlan); a correlated one
    /// inside another sees the outermost row's value through its own
    /// parameter.
    #[test]
    fn uncorrelated_runs_once_and_nesting_passes_parameters() {
        let db = TestDb::new();
        // (select count(*) from u), uncorrelated.
        let count = node(
            NodeKind::Aggregate {
                group: vec![],
                aggs: vec![crate::plan::AggCall::new(
                    crate::plan::AggFunc::CountStar,
                    vec![],
                )],
                mode: crate::plan::AggMode::Simple,
            },
            vec![u()],
            vec![Int8],
        );
        let once = SubPlanSpec {
            plan: count,
            kind: SubPlanKind::Scalar,
            params: vec![],
            param_ids: vec![],
            number: 1,
            needed_above: true,
        };
        // exists (select 1 from u where y = x and exists (select 1 from u u2 where u2.y = $x + 3))
        // The innermost subplan reads its own parameter X + 1, which the
        // middle level feeds from its parameter X (the outermost row's x).
        let mut inner = spec(
            filter(
                u(),
                cmp(
                    CmpOp::Eq,
                    col(0, Int8),
                    Expr::arith(
                        crate::expr::ArithOp::Add,
                        param(X + 1),
                        lit(Value::Int8(3), Int8),
                        Int8,
                    ),
                ),
            ),
            SubPlanKind::Exists,
            3,
        );
        inner.params = vec![param(X)];
        inner.param_ids = vec![X + 1];
        let middle_input = filter(u(), cmp(CmpOp::Eq, col(0, Int8), param(X)));
        let middle = node(
            NodeKind::SubPlans {
                subplans: vec![inner],
            },
            vec![middle_input],
            vec![Int8, Bool],
        );
        let middle = filter(middle, col(1, Bool));
        let outer_spec = spec(middle, SubPlanKind::Exists, 2);
        let mut p = node(
            NodeKind::SubPlans {
                subplans: vec![once, outer_spec],
            },
            vec![values(&[Some(1), Some(2), Some(3), None, Some(5)])],
            vec![Int8, Int8, Bool],
        );
        let n = p.assign_ids();
        let ctx = db.ctx(1 << 20, n);
        let mut op = build(&p, &ctx).unwrap();
        let got = text_rows(&rows_of(op.as_mut(), &[Int8, Int8, Bool]).unwrap());
        // x in u and x + 3 in u: only x = 2 (2 + 3 = 5).
        assert_eq!(got, ["1|5|f", "2|5|t", "3|5|f", "NULL|5|f", "5|5|f"]);
        // The uncorrelated count's input (node 2: SubPlans 0, Values 1,
        // then the subplan Aggregate 2 and its Values 3) ran once: 5 rows.
        assert_eq!(ctx.stats.as_ref().unwrap().borrow()[3].rows, 5);
    }

    /// `(x / 0) IN (SELECT y FROM u WHERE false)` and `<> ALL`: false and
    /// true for every row, without evaluating the left side, as in
    /// PostgreSQL; over rows the division is evaluated and fails.
    #[test]
    fn an_empty_uncorrelated_any_never_evaluates_its_left_side() {
        let failing = || {
            vec![Expr::arith(
                crate::expr::ArithOp::Div,
                col(0, Int8),
                lit(Value::Int8(0), Int8),
                Int8,
            )]
        };
        let with_left = |plan: Plan, kind: SubPlanKind, number: usize| SubPlanSpec {
            params: failing(),
            ..spec(plan, kind, number)
        };
        let got = run(vec![
            with_left(
                values(&[]),
                SubPlanKind::Any {
                    test: cmp(CmpOp::Eq, param(X), col(0, Int8)),
                },
                1,
            ),
            with_left(
                values(&[]),
                SubPlanKind::All {
                    test: cmp(CmpOp::Ne, param(X), col(0, Int8)),
                },
                2,
            ),
        ])
        .unwrap();
        assert_eq!(got, ["1|f|t", "2|f|t", "3|f|t", "NULL|f|t", "5|f|t"]);
        let e = run(vec![with_left(
            u(),
            SubPlanKind::Any {
                test: cmp(CmpOp::Eq, param(X), col(0, Int8)),
            },
            1,
        )])
        .unwrap_err();
        assert_eq!(e.message, "division by zero");
    }

    /// A Filter or Project over SubPlans `specs` over outer rows x = 1, 2,
    /// 3, NULL, 5.
    fn run_over(top: impl FnOnce(Plan) -> Plan, specs: Vec<SubPlanSpec>) -> Result<Vec<String>> {
        let db = TestDb::new();
        let mut out = vec![Int8];
        out.extend(specs.iter().map(|s| s.result_type()));
        let sub = node(
            NodeKind::SubPlans { subplans: specs },
            vec![values(&[Some(1), Some(2), Some(3), None, Some(5)])],
            out,
        );
        let mut p = top(sub);
        let types = p.output.to_vec();
        let n = p.assign_ids();
        let ctx = db.ctx(64 << 10, n);
        let mut op = build(&p, &ctx)?;
        Ok(text_rows(&rows_of(op.as_mut(), &types)?))
    }

    /// `(SELECT y FROM u WHERE y = x)`: two rows for x = 2, an error there.
    fn y_equal_to_x() -> SubPlanSpec {
        spec(
            filter(u(), cmp(CmpOp::Eq, col(0, Int8), param(X))),
            SubPlanKind::Scalar,
            1,
        )
    }

    fn two() -> Expr {
        lit(Value::Int8(2), Int8)
    }

    /// The subquery is computed only where the expression above reaches
    /// it: after an AND term that is not false, in the CASE branch taken.
    #[test]
    fn a_subplan_below_a_filter_or_projection_runs_only_where_reached() {
        let not_null = Expr::IsNull {
            arg: Box::new(col(1, Int8)),
            negated: true,
        };
        let predicate = Expr::and(cmp(CmpOp::Ne, col(0, Int8), two()), not_null);
        let got = run_over(|p| filter(p, predicate.clone()), vec![y_equal_to_x()]).unwrap();
        assert_eq!(got, ["1|1", "5|5"]);
        // Read by nothing above the filter: NULL in its place.
        let unread = SubPlanSpec {
            needed_above: false,
            ..y_equal_to_x()
        };
        let got = run_over(|p| filter(p, predicate.clone()), vec![unread]).unwrap();
        assert_eq!(got, ["1|NULL", "5|NULL"]);
        // CASE WHEN x = 2 THEN -1 ELSE (subquery) END.
        let case = Expr::Case {
            operand: None,
            whens: vec![(
                cmp(CmpOp::Eq, col(0, Int8), two()),
                lit(Value::Int8(-1), Int8),
            )],
            otherwise: Some(Box::new(col(1, Int8))),
            ty: Int8,
        };
        let project = |p: Plan| node(NodeKind::Project { exprs: vec![case] }, vec![p], vec![Int8]);
        let got = run_over(project, vec![y_equal_to_x()]).unwrap();
        assert_eq!(got, ["1", "-1", "NULL", "NULL", "5"]);
        // Reached for x = 2: the error.
        let bare = |p: Plan| {
            node(
                NodeKind::Project {
                    exprs: vec![col(1, Int8)],
                },
                vec![p],
                vec![Int8],
            )
        };
        let e = run_over(bare, vec![y_equal_to_x()]).unwrap_err();
        assert_eq!(e.code, "21000");
    }

    /// A subplan whose parameter is an earlier subplan's value, both on
    /// demand: `x <> 2 AND (SELECT y FROM u WHERE y = (subquery 1)) = 5`.
    #[test]
    fn a_deferred_subplan_may_read_an_earlier_one() {
        let mut second = spec(
            filter(u(), cmp(CmpOp::Eq, col(0, Int8), param(X + 1))),
            SubPlanKind::Scalar,
            2,
        );
        second.params = vec![col(1, Int8)];
        second.param_ids = vec![X + 1];
        let predicate = Expr::and(
            cmp(CmpOp::Ne, col(0, Int8), two()),
            cmp(CmpOp::Eq, col(2, Int8), lit(Value::Int8(5), Int8)),
        );
        let got = run_over(|p| filter(p, predicate), vec![y_equal_to_x(), second]).unwrap();
        assert_eq!(got, ["5|5|5"]);
    }

    /// `(x, 10 / (y - 2)) < ANY (rows)`: the rows are tested in order and
    /// the test stops at the first true one, so the division by zero of
    /// y = 2 is raised only when no earlier row decided.
    #[test]
    fn any_stops_testing_rows_at_the_decisive_one() {
        let y = || col(0, Int8);
        let ten_over = Expr::arith(
            crate::expr::ArithOp::Div,
            lit(Value::Int8(10), Int8),
            Expr::arith(crate::expr::ArithOp::Sub, y(), two(), Int8),
            Int8,
        );
        let test = Expr::RowCompare {
            op: CmpOp::Lt,
            left: vec![param(X), ten_over],
            right: vec![y(), lit(Value::Int8(0), Int8)],
        };
        let any =
            |rows: &[Option<i64>]| spec(values(rows), SubPlanKind::Any { test: test.clone() }, 1);
        let got = run(vec![any(&[Some(9), Some(2)])]).unwrap();
        assert_eq!(got, ["1|t", "2|t", "3|t", "NULL|NULL", "5|t"]);
        let e = run(vec![any(&[Some(2), Some(9)])]).unwrap_err();
        assert_eq!(e.message, "division by zero");
    }
}
