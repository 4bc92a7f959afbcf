//! Tests' reference for joins: a row-at-a-time nested loop written from the
//! definitions in `plan::JoinKind`, the plans of the same join as a hash join,
//! a nested loop and a merge join, and random cases for property tests.

use crate::build::build;
use crate::expr::{CmpOp, Expr};
use crate::hashjoin::HashJoin;
use crate::mergejoin::MergeJoin;
use crate::nestloop::NestedLoop;
use crate::operator::{ExecContext, Operator};
use crate::plan::{JoinKind, NodeKind, Plan};
use crate::sort::compare_values;
use crate::testing::{batches, node, rows_of, TestDb};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use proptest::prelude::*;
use std::cmp::Ordering;
use tusk_storage::DataType;
use tusk_storage::{ColumnDef, SqlType};

pub type Row = Vec<Value>;

pub const KINDS: [JoinKind; 8] = [
    JoinKind::Inner,
    JoinKind::Left,
    JoinKind::Right,
    JoinKind::Full,
    JoinKind::Semi,
    JoinKind::Anti,
    JoinKind::Mark { null_aware: false },
    JoinKind::Mark { null_aware: true },
];

/// The kinds a hash join runs: [`KINDS`] and the two only it runs.
pub fn hash_kinds() -> Vec<JoinKind> {
    let only_hash = [JoinKind::RightSemi, JoinKind::RightAnti];
    KINDS.into_iter().chain(only_hash).collect()
}

/// The outer columns a test case of `kind` emits, of two: both, or none
/// for the kinds that emit no outer columns.
pub fn outer_out_of(kind: JoinKind) -> Vec<usize> {
    if kind.emits_outer_columns() {
        vec![0, 1]
    } else {
        vec![]
    }
}

/// A join to run: inputs, keys (column numbers of each side), filter over
/// (outer columns ++ inner columns), output columns.
#[derive(Debug, Clone)]
pub struct JoinCase {
    pub kind: JoinKind,
    pub outer_types: Vec<DataType>,
    pub inner_types: Vec<DataType>,
    pub outer: Vec<Row>,
    pub inner: Vec<Row>,
    pub outer_keys: Vec<usize>,
    pub inner_keys: Vec<usize>,
    pub filter: Option<Expr>,
    pub outer_out: Vec<usize>,
    pub inner_out: Vec<usize>,
}

/// SQL's `=`: NULL when either side is NULL.
fn sql_eq(a: &Value, b: &Value) -> Option<bool> {
    if a.is_null() || b.is_null() {
        return None;
    }
    Some(compare_values(a, b) == Ordering::Equal)
}

/// Three-valued AND.
fn and3(vals: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    let mut out = Some(true);
    for v in vals {
        match v {
            Some(false) => return Some(false),
            None => out = None,
            Some(true) => {}
        }
    }
    out
}

/// Evaluates a boolean expression over one row of values.
pub fn eval_row(e: &Expr, types: &[DataType], row: &[Value]) -> Option<bool> {
    let cols = types
        .iter()
        .zip(row)
        .map(|(&t, v)| {
            let mut c = Vector::empty(t);
            c.push_value(v);
            c
        })
        .collect();
    let v = e.eval(&Batch::new(cols, 1)).expect("filter evaluates");
    let Data::Bool(b) = &v.data else {
        panic!("filter is not boolean")
    };
    (!v.is_null(0)).then_some(b[0])
}

impl JoinCase {
    pub fn output_types(&self) -> Vec<DataType> {
        self.kind.output_types(
            &self.outer_types,
            &self.inner_types,
            &self.outer_out,
            &self.inner_out,
        )
    }

    fn both_types(&self) -> Vec<DataType> {
        let mut t = self.outer_types.clone();
        t.extend(&self.inner_types);
        t
    }

    /// The join condition for a pair: the keys' equalities AND the filter.
    fn condition(&self, o: &Row, i: &Row) -> Option<bool> {
        let keys = self
            .outer_keys
            .iter()
            .zip(&self.inner_keys)
            .map(|(&a, &b)| sql_eq(&o[a], &i[b]));
        let filter = self.filter.as_ref().map(|f| {
            let mut row = o.clone();
            row.extend(i.iter().cloned());
            eval_row(f, &self.both_types(), &row)
        });
        and3(keys.chain(filter))
    }

    /// The join's rows, by definition.
    pub fn expected(&self) -> Vec<Row> {
        let kind = self.kind;
        let pick = |r: &Row, cols: &[usize]| cols.iter().map(|&c| r[c].clone()).collect::<Row>();
        let null_inner: Row = self.inner_out.iter().map(|_| Value::Null).collect();
        let null_outer: Row = self.outer_out.iter().map(|_| Value::Null).collect();
        let mut out = Vec::new();
        let mut inner_matched = vec![false; self.inner.len()];
        for o in &self.outer {
            let (mut matched, mut null_seen) = (false, false);
            for (k, i) in self.inner.iter().enumerate() {
                match self.condition(o, i) {
                    Some(true) => {
                        matched = true;
                        inner_matched[k] = true;
                        if kind.emits_pairs() {
                            let mut r = pick(o, &self.outer_out);
                            r.extend(pick(i, &self.inner_out));
                            out.push(r);
                        }
                    }
                    None => null_seen = true,
                    Some(false) => {}
                }
            }
            let mut r = pick(o, &self.outer_out);
            match kind {
                JoinKind::Left | JoinKind::Full if !matched => {
                    r.extend(null_inner.iter().cloned());
                    out.push(r);
                }
                JoinKind::Semi if matched => out.push(r),
                JoinKind::Anti if !matched => out.push(r),
                JoinKind::Mark { null_aware } => {
                    r.push(if matched {
                        Value::Bool(true)
                    } else if null_aware && null_seen {
                        Value::Null
                    } else {
                        Value::Bool(false)
                    });
                    out.push(r);
                }
                _ => {}
            }
        }
        if kind.marks_inner() {
            let want = kind == JoinKind::RightSemi;
            for (k, i) in self.inner.iter().enumerate() {
                if inner_matched[k] == want {
                    let mut r = null_outer.clone();
                    r.extend(pick(i, &self.inner_out));
                    out.push(r);
                }
            }
        }
        out
    }

    fn leaf(types: &[DataType]) -> Plan {
        node(NodeKind::Values { rows: vec![] }, vec![], types.to_vec())
    }

    /// The key columns of each side as expressions.
    fn key_exprs(&self) -> (Vec<Expr>, Vec<Expr>) {
        let cols = |keys: &[usize], types: &[DataType]| -> Vec<Expr> {
            keys.iter()
                .map(|&c| Expr::Column {
                    index: c,
                    ty: types[c],
                })
                .collect()
        };
        (
            cols(&self.outer_keys, &self.outer_types),
            cols(&self.inner_keys, &self.inner_types),
        )
    }

    /// The join as a hash join over two leaves of the inputs' types.
    pub fn hash_plan(&self, outer: Plan, inner: Plan, parallel: bool) -> Plan {
        let hash = node(NodeKind::Hash, vec![inner], self.inner_types.clone());
        let (outer_keys, inner_keys) = self.key_exprs();
        let mut p = node(
            NodeKind::HashJoin {
                kind: self.kind,
                outer_keys,
                inner_keys,
                outer_out: self.outer_out.clone(),
                inner_out: self.inner_out.clone(),
                join_filter: self.filter.clone(),
                parallel,
            },
            vec![outer, hash],
            self.output_types(),
        );
        p.assign_ids();
        p
    }

    /// The join as a nested loop whose filter is the keys' equalities AND
    /// the filter (keys of equal types only).
    pub fn nestloop_plan(&self, outer: Plan, inner: Plan) -> Plan {
        let n = self.outer_types.len();
        let mut conds: Vec<Expr> = self
            .outer_keys
            .iter()
            .zip(&self.inner_keys)
            .map(|(&a, &b)| Expr::Cmp {
                op: CmpOp::Eq,
                left: Box::new(Expr::Column {
                    index: a,
                    ty: self.outer_types[a],
                }),
                right: Box::new(Expr::Column {
                    index: n + b,
                    ty: self.inner_types[b],
                }),
            })
            .collect();
        conds.extend(self.filter.clone());
        let join_filter = conds.into_iter().reduce(Expr::and);
        let mut p = node(
            NodeKind::NestedLoop {
                kind: self.kind,
                join_filter,
                outer_out: self.outer_out.clone(),
                inner_out: self.inner_out.clone(),
            },
            vec![outer, inner],
            self.output_types(),
        );
        p.assign_ids();
        p
    }

    /// The join as a merge join over two leaves that deliver their rows
    /// sorted on the keys.
    pub fn merge_plan(&self, outer: Plan, inner: Plan) -> Plan {
        let (outer_keys, inner_keys) = self.key_exprs();
        let mut p = node(
            NodeKind::MergeJoin {
                kind: self.kind,
                outer_keys,
                inner_keys,
                outer_out: self.outer_out.clone(),
                inner_out: self.inner_out.clone(),
                join_filter: self.filter.clone(),
            },
            vec![outer, inner],
            self.output_types(),
        );
        p.assign_ids();
        p
    }

    /// Runs the merge join over the inputs sorted on their keys (ascending,
    /// NULLs last, as a Sort below it would deliver them) in batches of
    /// `per_batch` rows.
    pub fn run_merge(&self, ctx: &ExecContext, per_batch: usize) -> crate::Result<Vec<Row>> {
        let sorted = |rows: &[Row], keys: &[usize]| {
            let mut rows = rows.to_vec();
            rows.sort_by(|a, b| {
                keys.iter()
                    .map(|&k| compare_values(&a[k], &b[k]))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            });
            rows
        };
        let p = self.merge_plan(Self::leaf(&self.outer_types), Self::leaf(&self.inner_types));
        let o = batches(
            &self.outer_types,
            &sorted(&self.outer, &self.outer_keys),
            per_batch,
        );
        let i = batches(
            &self.inner_types,
            &sorted(&self.inner, &self.inner_keys),
            per_batch,
        );
        let mut op = MergeJoin::new(&p, ctx, Box::new(o), Box::new(i))?;
        rows_of(&mut op, &self.output_types())
    }

    fn inputs(&self, per_batch: usize) -> (Box<dyn Operator>, Box<dyn Operator>) {
        (
            Box::new(batches(&self.outer_types, &self.outer, per_batch)),
            Box::new(batches(&self.inner_types, &self.inner, per_batch)),
        )
    }

    /// Runs the hash join over the inputs in batches of `per_batch` rows.
    pub fn run_hash(&self, ctx: &ExecContext, per_batch: usize) -> crate::Result<Vec<Row>> {
        let p = self.hash_plan(
            Self::leaf(&self.outer_types),
            Self::leaf(&self.inner_types),
            false,
        );
        let (o, i) = self.inputs(per_batch);
        let mut op = HashJoin::new(&p, ctx, o, i)?;
        rows_of(&mut op, &self.output_types())
    }

    /// Runs the nested loop over the inputs in batches of `per_batch` rows.
    pub fn run_nestloop(&self, ctx: &ExecContext, per_batch: usize) -> crate::Result<Vec<Row>> {
        let p = self.nestloop_plan(Self::leaf(&self.outer_types), Self::leaf(&self.inner_types));
        let (o, i) = self.inputs(per_batch);
        let mut op = NestedLoop::new(&p, ctx, o, i)?;
        rows_of(&mut op, &self.output_types())
    }
}

/// Rows in a canonical order, as text, for comparing results as multisets.
pub fn canonical(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    v.sort();
    v
}

/// Values of a small integer domain with NULLs, so that keys collide.
fn small_int() -> impl Strategy<Value = Value> {
    prop_oneof![1 => Just(Value::Null), 6 => (0i32..6).prop_map(Value::Int4)]
}

/// A random join of two tables of two integer columns: any kind of
/// [`KINDS`], one or two keys, with or without a filter that may be NULL.
pub fn int_case() -> impl Strategy<Value = JoinCase> {
    int_case_of(&KINDS)
}

/// [`int_case`] of any kind of `kinds`.
pub fn int_case_of(kinds: &[JoinKind]) -> impl Strategy<Value = JoinCase> {
    let rows = |max| proptest::collection::vec(proptest::collection::vec(small_int(), 2), 0..max);
    (
        proptest::sample::select(kinds.to_vec()),
        rows(40),
        rows(40),
        1usize..=2,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(kind, outer, inner, keys, filter, swap)| {
            let t = vec![DataType::Int4, DataType::Int4];
            // outer.1 < inner.1: NULL when either is NULL.
            let filter = filter.then(|| Expr::Cmp {
                op: CmpOp::Lt,
                left: Box::new(Expr::Column {
                    index: 1,
                    ty: DataType::Int4,
                }),
                right: Box::new(Expr::Column {
                    index: 3,
                    ty: DataType::Int4,
                }),
            });
            let (ok, ik) = match (keys, swap) {
                (1, false) => (vec![0], vec![0]),
                (1, true) => (vec![1], vec![0]),
                _ => (vec![0, 1], vec![0, 1]),
            };
            JoinCase {
                kind,
                outer_types: t.clone(),
                inner_types: t,
                outer,
                inner,
                outer_keys: ok,
                inner_keys: ik,
                filter,
                outer_out: outer_out_of(kind),
                inner_out: if kind.emits_inner_columns() {
                    vec![1, 0]
                } else {
                    vec![]
                },
            }
        })
}

/// `n` rows (k, v): k = i % `distinct` (NULL every 13th row), v = i % 7
/// (NULL every 11th).
pub fn rows(n: usize, distinct: usize, offset: usize) -> Vec<Row> {
    (0..n)
        .map(|i| {
            let j = i + offset;
            vec![
                if j.is_multiple_of(13) {
                    Value::Null
                } else {
                    Value::Int4((j % distinct) as i32)
                },
                if j.is_multiple_of(11) {
                    Value::Null
                } else {
                    Value::Int4((j % 7) as i32)
                },
            ]
        })
        .collect()
}

/// Creates a table of two integer columns holding `rows`.
pub fn table(db: &TestDb, name: &str, rows: &[Row]) -> (u32, Vec<DataType>) {
    let mut txn = db.db.begin(tusk_storage::TxnOptions::default());
    let columns = ["k", "v"]
        .iter()
        .map(|n| ColumnDef {
            name: n.to_string(),
            ty: SqlType::Int4,
            not_null: false,
            default: None,
        })
        .collect();
    let def = txn.create_table(name, columns).unwrap();
    let types = def.column_types();
    let mut input = batches(&types, rows, 1000);
    let target = crate::dml::Target {
        table: &def,
        indexes: &[],
        checks: &[],
    };
    crate::dml::insert(&mut txn, target, &mut input, None).unwrap();
    txn.commit().unwrap();
    (def.oid, types)
}

pub fn scan(oid: u32, name: &str, types: &[DataType], parallel: bool) -> Plan {
    node(
        NodeKind::SeqScan {
            table: name.into(),
            alias: name.into(),
            oid,
            table_types: types.to_vec(),
            columns: (0..types.len()).collect(),
            with_tid: false,
            filter: None,
            parallel,
            columnar: None,
        },
        vec![],
        types.to_vec(),
    )
}

/// Runs `plan` to the end.
pub fn run(plan: &Plan, ctx: &ExecContext) -> Vec<Row> {
    let mut op = build(plan, ctx).unwrap();
    rows_of(op.as_mut(), &plan.output).unwrap()
}
