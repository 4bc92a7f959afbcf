//! SELECT and EXPLAIN.

use crate::error::{sqlstate, SqlError};
use crate::explain::{self, ExplainOptions};
use crate::names::ident;
use crate::session::{header, render_rows, ColumnHeader, QueryResult, Result, Session};
use sqlparser::ast as A;
use std::time::Instant;

impl Session {
    pub(crate) fn select(&mut self, q: &A::Query) -> Result<QueryResult> {
        let pq = self.plan_query(q)?;
        let ctx = self.exec_context(self.db.txn.snapshot(), false, 0);
        let out = self.run(&pq.stmt, &ctx)?;
        Ok(QueryResult::Rows {
            title: None,
            columns: pq
                .names
                .iter()
                .zip(&pq.types)
                .map(|(n, t)| header(n, *t))
                .collect(),
            rows: render_rows(&out, &pq.types, self.settings()),
        })
    }

    pub(crate) fn explain(
        &mut self,
        analyze: bool,
        statement: &A::Statement,
        format: Option<&A::AnalyzeFormatKind>,
        options: Option<&[A::UtilityOption]>,
    ) -> Result<QueryResult> {
        let mut opts = ExplainOptions {
            analyze,
            costs: true,
            timing: true,
        };
        if format.is_some() {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "EXPLAIN formats other than TEXT are not supported",
            ));
        }
        for o in options.into_iter().flatten() {
            let on = match &o.arg {
                None => true,
                Some(A::Expr::Identifier(i)) => {
                    !matches!(ident(i)?.as_str(), "off" | "false" | "0")
                }
                Some(A::Expr::Value(v)) => !matches!(v.value.to_string().as_str(), "false" | "0"),
                Some(_) => true,
            };
            match ident(&o.name)?.as_str() {
                "analyze" => opts.analyze = on,
                "costs" => opts.costs = on,
                "timing" => opts.timing = on,
                "verbose" | "buffers" | "summary" | "settings" | "wal" => {}
                "format" => {
                    let text = matches!(&o.arg, Some(A::Expr::Identifier(i)) if ident(i).is_ok_and(|s| s == "text"));
                    if !text {
                        return Err(SqlError::coded(
                            sqlstate::FEATURE_NOT_SUPPORTED,
                            "EXPLAIN formats other than TEXT are not supported",
                        ));
                    }
                }
                other => {
                    return Err(SqlError::coded(
                        sqlstate::SYNTAX_ERROR,
                        format!("unrecognized EXPLAIN option \"{other}\""),
                    ))
                }
            }
        }
        let A::Statement::Query(q) = statement else {
            return Err(SqlError::coded(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "EXPLAIN is only supported for SELECT",
            ));
        };
        let planning = Instant::now();
        let pq = self.plan_query(q)?;
        let planning = planning.elapsed();
        let mut lines;
        if opts.analyze {
            let nodes = pq.stmt.node_count();
            let ctx = self.exec_context(self.db.txn.snapshot(), true, nodes);
            let start = Instant::now();
            self.run(&pq.stmt, &ctx)?;
            let exec_time = start.elapsed();
            let stats = ctx.stats.as_ref().unwrap().borrow();
            lines = explain::explain(&pq.stmt, opts, Some(&stats));
            lines.push(format!(
                "Planning Time: {:.3} ms",
                planning.as_secs_f64() * 1000.0
            ));
            lines.push(format!(
                "Execution Time: {:.3} ms",
                exec_time.as_secs_f64() * 1000.0
            ));
            lines.push(format!(
                "tusk: shared_buffers {} ({} buffers, {} mapping table, huge pages {})",
                self.gucs.show("shared_buffers").unwrap_or_default(),
                self.db.pool.nbuffers(),
                self.db.pool.mapping_name(),
                self.db.pool.huge_pages_status()
            ));
        } else {
            lines = explain::explain(&pq.stmt, opts, None);
        }
        Ok(QueryResult::Rows {
            title: None,
            columns: vec![ColumnHeader {
                name: "QUERY PLAN".into(),
                numeric: false,
            }],
            rows: lines.into_iter().map(|l| vec![Some(l)]).collect(),
        })
    }
}
