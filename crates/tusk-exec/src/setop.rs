//! INTERSECT and EXCEPT [ALL]: PostgreSQL's HashSetOp.
//!
//! Each distinct row (all columns the key, NULLs equal) gets two counts: how
//! often it occurs on the left and on the right. The output repeats each row
//! as the operation says:
//!
//! | operation | copies of a row counted `l` left, `r` right |
//! |---|---|
//! | INTERSECT | 1 if `l > 0` and `r > 0` |
//! | INTERSECT ALL | `min(l, r)` |
//! | EXCEPT | 1 if `l > 0` and `r = 0` |
//! | EXCEPT ALL | `max(l − r, 0)` |
//!
//! The counting is a hash aggregation — the left rows tagged 0, then the
//! right rows tagged 1, grouped by every column with `count(*) FILTER (WHERE
//! tag = 0)` and `count(*) FILTER (WHERE tag = 1)` — so it spills within
//! `work_mem × hash_mem_multiplier` exactly as aggregation does (EXPLAIN
//! ANALYZE prints no figures for it, as PostgreSQL prints none for
//! HashSetOp).

use crate::aggregate::Aggregate;
use crate::error::Result;
use crate::expr::{CmpOp, Expr};
use crate::operator::{ExecContext, Operator};
use crate::plan::{AggCall, AggFunc, AggMode, Estimate, NodeKind, Plan, SetOpCmd};
use crate::value::Value;
use crate::vector::{Batch, Data, Vector};
use tusk_storage::DataType;

/// Left rows, then right rows, each with a last column: 0 or 1.
struct Tagged {
    sides: [Option<Box<dyn Operator>>; 2],
}

impl Operator for Tagged {
    fn next(&mut self) -> Result<Option<Batch>> {
        for (tag, side) in self.sides.iter_mut().enumerate() {
            if let Some(op) = side {
                match op.next()? {
                    Some(mut b) => {
                        b.columns
                            .push(Vector::new(Data::Int4(vec![tag as i32; b.len]), None));
                        return Ok(Some(b));
                    }
                    None => *side = None,
                }
            }
        }
        Ok(None)
    }
}

pub struct SetOp {
    counts: Aggregate,
    op: SetOpCmd,
    all: bool,
    width: usize,
}

impl SetOp {
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        left: Box<dyn Operator>,
        right: Box<dyn Operator>,
    ) -> Result<SetOp> {
        let NodeKind::SetOp { op, all } = plan.kind else {
            unreachable!("SetOp::new on another node")
        };
        let types = plan.output.to_vec();
        let width = types.len();
        let tag = Expr::Column {
            index: width,
            ty: DataType::Int4,
        };
        let counted = |side: i32| {
            let mut c = AggCall::new(AggFunc::CountStar, vec![]);
            c.filter = Some(Expr::Cmp {
                op: CmpOp::Eq,
                left: Box::new(tag.clone()),
                right: Box::new(Expr::Const {
                    value: Value::Int4(side),
                    ty: DataType::Int4,
                }),
            });
            c
        };
        let mut input_types = types.clone();
        input_types.push(DataType::Int4);
        let mut out = types.clone();
        out.extend([DataType::Int8, DataType::Int8]);
        let names = |n: usize| vec![String::new(); n];
        let input = Plan::new(
            NodeKind::Values { rows: vec![] },
            vec![],
            input_types.clone(),
            names(input_types.len()),
            Estimate::default(),
        );
        let mut agg = Plan::new(
            NodeKind::Aggregate {
                group: types
                    .iter()
                    .enumerate()
                    .map(|(index, &ty)| Expr::Column { index, ty })
                    .collect(),
                aggs: vec![counted(0), counted(1)],
                mode: AggMode::Simple,
            },
            vec![input],
            out.clone(),
            names(out.len()),
            Estimate::default(),
        );
        agg.id = plan.id;
        let tagged = Box::new(Tagged {
            sides: [Some(left), Some(right)],
        });
        // PostgreSQL's HashSetOp prints no hash table figures: the counting
        // keeps its report (`SetOp::report`) out of EXPLAIN.
        let quiet = ExecContext {
            stats: None,
            ..ctx.clone()
        };
        Ok(SetOp {
            counts: Aggregate::new(&agg, &quiet, tagged)?,
            op,
            all,
            width,
        })
    }

    /// How the counting went (batches, memory, disk).
    pub fn report(&self) -> crate::aggregate::AggReport {
        self.counts.report()
    }

    /// Copies of a row counted `l` times on the left and `r` on the right.
    fn copies(&self, l: i64, r: i64) -> i64 {
        match (self.op, self.all) {
            (SetOpCmd::Intersect, false) => (l > 0 && r > 0) as i64,
            (SetOpCmd::Intersect, true) => l.min(r),
            (SetOpCmd::Except, false) => (l > 0 && r == 0) as i64,
            (SetOpCmd::Except, true) => (l - r).max(0),
        }
    }
}

impl Operator for SetOp {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(mut b) = self.counts.next()? {
            let (Data::Int8(l), Data::Int8(r)) =
                (&b.columns[self.width].data, &b.columns[self.width + 1].data)
            else {
                unreachable!("counts are bigint")
            };
            let mut idx = Vec::new();
            for row in 0..b.len {
                for _ in 0..self.copies(l[row], r[row]) {
                    idx.push(row as u32);
                }
            }
            b.columns.truncate(self.width);
            if !idx.is_empty() {
                return Ok(Some(b.gather(&idx)));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{batches, node, rows_of, TestDb};

    fn run(
        op: SetOpCmd,
        all: bool,
        work_mem: usize,
        l: &[Vec<Value>],
        r: &[Vec<Value>],
    ) -> Vec<String> {
        run_with_report(op, all, work_mem, l, r).0
    }

    fn run_with_report(
        op: SetOpCmd,
        all: bool,
        work_mem: usize,
        l: &[Vec<Value>],
        r: &[Vec<Value>],
    ) -> (Vec<String>, crate::aggregate::AggReport) {
        let db = TestDb::new();
        let ctx = db.ctx(work_mem, 1);
        let types = [DataType::Int4, DataType::Text];
        let plan = node(NodeKind::SetOp { op, all }, vec![], types.to_vec());
        let mut s = SetOp::new(
            &plan,
            &ctx,
            Box::new(batches(&types, l, 300)),
            Box::new(batches(&types, r, 300)),
        )
        .unwrap();
        let mut out: Vec<String> = rows_of(&mut s, &types)
            .unwrap()
            .iter()
            .map(|r| format!("{:?}|{:?}", r[0], r[1]))
            .collect();
        out.sort();
        (out, s.report())
    }

    fn row(i: i32, s: Option<&str>) -> Vec<Value> {
        vec![
            Value::Int4(i),
            s.map_or(Value::Null, |s| Value::Text(s.into())),
        ]
    }

    #[test]
    fn intersect_and_except_with_and_without_all() {
        // left: (1,a) x3, (2,NULL) x2, (3,c); right: (1,a) x2, (2,NULL), (4,d)
        let l = vec![
            row(1, Some("a")),
            row(1, Some("a")),
            row(2, None),
            row(1, Some("a")),
            row(3, Some("c")),
            row(2, None),
        ];
        let r = vec![
            row(1, Some("a")),
            row(2, None),
            row(4, Some("d")),
            row(1, Some("a")),
        ];
        let f = |v: Vec<Vec<Value>>| {
            let mut o: Vec<String> = v.iter().map(|r| format!("{:?}|{:?}", r[0], r[1])).collect();
            o.sort();
            o
        };
        for wm in [4 << 20, 64 << 10] {
            use SetOpCmd::*;
            assert_eq!(
                run(Intersect, false, wm, &l, &r),
                f(vec![row(1, Some("a")), row(2, None)])
            );
            assert_eq!(
                run(Intersect, true, wm, &l, &r),
                f(vec![row(1, Some("a")), row(1, Some("a")), row(2, None)])
            );
            assert_eq!(run(Except, false, wm, &l, &r), f(vec![row(3, Some("c"))]));
            assert_eq!(
                run(Except, true, wm, &l, &r),
                f(vec![row(1, Some("a")), row(2, None), row(3, Some("c"))])
            );
            assert!(run(Except, false, wm, &[], &r).is_empty());
            assert_eq!(run(Except, true, wm, &l, &[]).len(), 6);
            assert!(run(Intersect, true, wm, &l, &[]).is_empty());
        }
    }

    #[test]
    fn spills_many_rows_within_work_mem() {
        // left 0..30000, right the even numbers: EXCEPT leaves the odd ones.
        let l: Vec<Vec<Value>> = (0..30_000).map(|i| row(i, Some("x"))).collect();
        let r: Vec<Vec<Value>> = (0..30_000).step_by(2).map(|i| row(i, Some("x"))).collect();
        let (got, rep) = run_with_report(SetOpCmd::Except, false, 64 << 10, &l, &r);
        assert_eq!(got.len(), 15_000);
        assert!(rep.batches > 1, "{rep:?}");
        assert!(rep.mem.peak <= (128 << 10) + 1024, "{rep:?}");
        assert!(got.iter().all(|s| {
            let n: i32 = s
                .trim_start_matches("Int4(")
                .split(')')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            n % 2 == 1
        }));
    }
}
