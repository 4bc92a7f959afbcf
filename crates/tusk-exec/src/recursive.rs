//! WITH RECURSIVE: `RecursiveUnion` and `WorkTableScan`.
//!
//! PostgreSQL's iteration: the non-recursive term's rows are returned and
//! become the *working table*; then the recursive term runs, reading the
//! working table through its `WorkTableScan`, and each row it produces is
//! returned and added to an *intermediate table*; when the term is done,
//! the intermediate table becomes the working table and the term runs
//! again, until an iteration produces no rows. Rows are returned as they are
//! produced, breadth first, so a LIMIT above stops the recursion.
//!
//! With UNION (not UNION ALL) a row equal to any row returned before
//! (NULLs equal) is dropped — across all iterations, so the recursion ends
//! once nothing new appears. The rows seen are kept as normalized keys in
//! memory, as PostgreSQL keeps them in an in-memory hash table; the working
//! and intermediate tables are [`TupleStore`]s and spill past `work_mem`.
//!
//! The recursive term is built anew for each iteration (with the
//! dispatcher handed in as a [`BuildFn`]), so every operator in it starts
//! fresh; the working table is found through the query's registry
//! (`ExecContext::ctes`) under the node's `work_table` number.

use crate::error::Result;
use crate::memory::WorkMem;
use crate::operator::{BuildFn, ExecContext, Operator};
use crate::plan::Plan;
use crate::sortkey::{KeyBuf, KeyOrder};
use crate::tuplestore::{Cursor, TupleStore};
use crate::vector::{Batch, Vector};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use tusk_storage::DataType;

pub struct RecursiveUnion {
    distinct: bool,
    work_table: usize,
    types: Vec<DataType>,
    orders: Vec<KeyOrder>,
    /// The running term: first the non-recursive one, then each iteration.
    term: Option<Box<dyn Operator>>,
    recursive: Plan,
    build: BuildFn,
    ctx: ExecContext,
    intermediate: TupleStore,
    seen: HashSet<Vec<u8>>,
    done: bool,
}

impl RecursiveUnion {
    pub fn new(
        plan: &Plan,
        ctx: &ExecContext,
        non_recursive: Box<dyn Operator>,
        build: BuildFn,
    ) -> RecursiveUnion {
        let crate::plan::NodeKind::RecursiveUnion {
            distinct,
            work_table,
        } = plan.kind
        else {
            unreachable!("RecursiveUnion::new on another node")
        };
        let types = plan.output.to_vec();
        RecursiveUnion {
            distinct,
            work_table,
            orders: types.iter().map(|&t| KeyOrder::asc(t)).collect(),
            intermediate: TupleStore::new(&types, WorkMem::sort(ctx)),
            types,
            term: Some(non_recursive),
            recursive: plan.children[1].clone(),
            build,
            ctx: ctx.clone(),
            seen: HashSet::new(),
            done: false,
        }
    }

    /// Rows of `b` not returned before (UNION), remembered.
    fn new_rows(&mut self, b: Batch) -> Batch {
        if !self.distinct {
            return b;
        }
        let cols: Vec<&Vector> = b.columns.iter().collect();
        let mut keys = KeyBuf::new();
        keys.push_rows(&cols, &self.orders);
        let keep: Vec<u32> = (0..b.len)
            .filter(|&r| self.seen.insert(keys.get(r).to_vec()))
            .map(|r| r as u32)
            .collect();
        if keep.len() == b.len {
            b
        } else {
            b.gather(&keep)
        }
    }

    /// Makes the intermediate table the working table and starts the
    /// next iteration; false when the last one produced nothing.
    fn next_iteration(&mut self) -> Result<bool> {
        if self.intermediate.is_empty() {
            return Ok(false);
        }
        let fresh = TupleStore::new(&self.types, WorkMem::sort(&self.ctx));
        let working = std::mem::replace(&mut self.intermediate, fresh);
        self.ctx
            .ctes
            .set_work_table(self.work_table, Rc::new(RefCell::new(working)));
        self.term = Some((self.build)(&self.recursive, &self.ctx)?);
        Ok(true)
    }
}

impl Operator for RecursiveUnion {
    fn next(&mut self) -> Result<Option<Batch>> {
        while !self.done {
            let Some(term) = self.term.as_mut() else {
                if !self.next_iteration()? {
                    self.done = true;
                }
                continue;
            };
            match term.next()? {
                Some(b) => {
                    let b = self.new_rows(b);
                    if b.len > 0 {
                        self.intermediate.append(&b)?;
                        return Ok(Some(b));
                    }
                }
                None => self.term = None,
            }
        }
        Ok(None)
    }
}

/// The recursive term's view of the working table.
pub struct WorkTableScan {
    work_table: usize,
    ctx: ExecContext,
    rows: Option<Rc<RefCell<TupleStore>>>,
    cursor: Cursor,
}

impl WorkTableScan {
    pub fn new(work_table: usize, ctx: &ExecContext) -> WorkTableScan {
        WorkTableScan {
            work_table,
            ctx: ctx.clone(),
            rows: None,
            cursor: Cursor::default(),
        }
    }
}

impl Operator for WorkTableScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.rows.is_none() {
            self.rows = Some(self.ctx.ctes.work_table(self.work_table)?);
        }
        let rows = self.rows.as_ref().unwrap();
        let b = self.cursor.next(&mut rows.borrow_mut())?;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use crate::build::build_statement;
    use crate::expr::{ArithOp, CmpOp, Expr};
    use crate::plan::{NodeKind, Plan, SetOpCmd, Statement};
    use crate::testing::{col, lit, node, rows_of, series, TestDb};
    use crate::value::Value;
    use tusk_storage::DataType::Int8;

    fn n() -> Expr {
        col(0, Int8)
    }

    fn arith(op: ArithOp, l: Expr, r: Expr) -> Expr {
        Expr::arith(op, l, r, Int8)
    }

    fn one_row(v: i64) -> Plan {
        node(
            NodeKind::Values {
                rows: vec![vec![lit(Value::Int8(v), Int8)]],
            },
            vec![],
            vec![Int8],
        )
    }

    /// `WITH RECURSIVE t(n) AS (SELECT start UNION [ALL] SELECT step FROM t
    /// [WHERE cond]) SELECT n FROM t [LIMIT limit]`.
    fn recursive(distinct: bool, step: Expr, cond: Option<Expr>, limit: Option<u64>) -> Statement {
        let mut term = node(
            NodeKind::WorkTableScan {
                work_table: 0,
                alias: "t".into(),
            },
            vec![],
            vec![Int8],
        );
        if let Some(c) = cond {
            term = node(NodeKind::Filter { predicate: c }, vec![term], vec![Int8]);
        }
        term = node(
            NodeKind::Project { exprs: vec![step] },
            vec![term],
            vec![Int8],
        );
        let ru = node(
            NodeKind::RecursiveUnion {
                distinct,
                work_table: 0,
            },
            vec![one_row(1), term],
            vec![Int8],
        );
        let mut body = node(
            NodeKind::CteScan {
                cte: 0,
                name: "t".into(),
                alias: "t".into(),
            },
            vec![],
            vec![Int8],
        );
        if let Some(l) = limit {
            body = node(
                NodeKind::Limit {
                    limit: Some(l),
                    offset: 0,
                },
                vec![body],
                vec![Int8],
            );
        }
        let mut s = Statement {
            root: body,
            ctes: vec![ru],
        };
        s.assign_ids();
        s
    }

    fn ints(s: &Statement, work_mem: usize) -> Vec<i64> {
        let db = TestDb::new();
        let nodes = s.clone().assign_ids();
        let ctx = db.ctx(work_mem, nodes);
        let mut op = build_statement(s, &ctx).unwrap();
        rows_of(op.as_mut(), &[Int8])
            .unwrap()
            .iter()
            .map(|r| match r[0] {
                Value::Int8(v) => v,
                _ => panic!("not bigint"),
            })
            .collect()
    }

    #[test]
    fn union_all_counts_up_breadth_first() {
        let lt = Expr::Cmp {
            op: CmpOp::Lt,
            left: Box::new(n()),
            right: Box::new(lit(Value::Int8(100), Int8)),
        };
        let p = recursive(
            false,
            arith(ArithOp::Add, n(), lit(Value::Int8(1), Int8)),
            Some(lt),
            None,
        );
        assert_eq!(ints(&p, 4 << 20), (1..=100).collect::<Vec<_>>());
    }

    #[test]
    fn union_ends_when_nothing_new_appears() {
        // SELECT 1 UNION SELECT n % 5 + 1 FROM t  →  1, 2, 3, 4, 5
        let step = arith(
            ArithOp::Add,
            arith(ArithOp::Mod, n(), lit(Value::Int8(5), Int8)),
            lit(Value::Int8(1), Int8),
        );
        let p = recursive(true, step, None, None);
        assert_eq!(ints(&p, 4 << 20), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn limit_stops_an_endless_recursion() {
        let p = recursive(
            false,
            arith(ArithOp::Add, n(), lit(Value::Int8(1), Int8)),
            None,
            Some(10),
        );
        assert_eq!(ints(&p, 4 << 20), (1..=10).collect::<Vec<_>>());
    }

    /// A CTE read by two scans is evaluated once, only as far as needed,
    /// and spills under a small `work_mem`.
    #[test]
    fn cte_is_shared_lazy_and_spills() {
        let scan = || {
            node(
                NodeKind::CteScan {
                    cte: 0,
                    name: "c".into(),
                    alias: "c".into(),
                },
                vec![],
                vec![Int8],
            )
        };
        let with = |cte: Plan, body: Plan| {
            let mut s = Statement {
                root: body,
                ctes: vec![cte],
            };
            s.assign_ids();
            s
        };
        // c INTERSECT ALL c over 50,000 rows.
        let both = node(
            NodeKind::SetOp {
                op: SetOpCmd::Intersect,
                all: true,
            },
            vec![scan(), scan()],
            vec![Int8],
        );
        let s = with(series(1, 50_000), both);
        let db = TestDb::new();
        let ctx = db.ctx(64 << 10, s.clone().assign_ids());
        let mut op = build_statement(&s, &ctx).unwrap();
        let mut got: Vec<i64> = rows_of(op.as_mut(), &[Int8])
            .unwrap()
            .iter()
            .map(|r| match r[0] {
                Value::Int8(v) => v,
                _ => 0,
            })
            .collect();
        got.sort();
        assert_eq!(got, (1..=50_000).collect::<Vec<_>>());
        // The CTE's plan (node 3, after the root's three) produced its rows once.
        assert_eq!(ctx.stats.as_ref().unwrap().borrow()[3].rows, 50_000);
        assert!(ctx.spill.written.get() > 0, "the CTE's rows spilled");
        // Lazy: the CTE fails on its row 5000, but LIMIT 10 never gets there.
        let failing = node(
            NodeKind::Project {
                exprs: vec![arith(
                    ArithOp::Div,
                    lit(Value::Int8(1), Int8),
                    arith(ArithOp::Sub, n(), lit(Value::Int8(5000), Int8)),
                )],
            },
            vec![series(1, 10_000)],
            vec![Int8],
        );
        let limited = node(
            NodeKind::Limit {
                limit: Some(10),
                offset: 0,
            },
            vec![scan()],
            vec![Int8],
        );
        assert_eq!(ints(&with(failing.clone(), limited), 4 << 20).len(), 10);
        let e = {
            let s = with(failing, scan());
            let db = TestDb::new();
            let ctx = db.ctx(4 << 20, s.clone().assign_ids());
            let mut op = build_statement(&s, &ctx).unwrap();
            rows_of(op.as_mut(), &[Int8]).unwrap_err()
        };
        assert_eq!(e.message, "division by zero");
    }
}
