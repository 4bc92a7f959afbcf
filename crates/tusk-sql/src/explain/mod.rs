//! EXPLAIN in PostgreSQL's text format, and the expression deparser it uses.
//!
//! ```text
//! Aggregate  (cost=... rows=1 width=8) (actual time=0.010..0.011 rows=1 loops=1)
//!   ->  Hash Join  (...)
//!         Hash Cond: (t1.i = t2.i)
//!         ->  Seq Scan on t t1  (...)
//!         ->  Hash  (...)
//!               Buckets: 1024  Batches: 1  Memory Usage: 9kB
//!               ->  Seq Scan on t t2  (...)
//! ```
//!
//! A node at depth d > 0 is indented 2 + 6(d-1) spaces and starts with `->  `;
//! its detail lines are indented 6 more (2 for the root). Project nodes are
//! not shown, as PostgreSQL folds projections into the node below.

mod aliases;
mod referents;

use crate::names::quote_ident;
use std::collections::HashMap;
use tusk_exec::expr::Expr;
use tusk_exec::plan::{AggMode, JoinKind, NodeKind, Plan, SetOpCmd, Statement, SubPlanKind};
use tusk_exec::{NodeStats, Value};
use tusk_storage::DataType;

fn type_name(t: DataType) -> &'static str {
    t.display_name()
}

/// [`deparse`] with the parameters `params` names (an index nested loop's
/// outer values, which PostgreSQL prints as the outer columns).
pub fn deparse_with_params(
    e: &Expr,
    names: &[String],
    params: &std::collections::HashMap<usize, String>,
) -> String {
    let saved = OUTER_PARAMS.with(|m| {
        let mut m = m.borrow_mut();
        let saved = m.clone();
        m.extend(params.iter().map(|(k, v)| (*k, v.clone())));
        saved
    });
    let out = deparse(e, names);
    OUTER_PARAMS.with(|m| *m.borrow_mut() = saved);
    out
}

/// Renders an expression the way EXPLAIN shows it (`(t1.i = t2.i)`).
pub fn deparse(e: &Expr, names: &[String]) -> String {
    match e {
        Expr::Column { index, .. } => names
            .get(*index)
            .cloned()
            .unwrap_or_else(|| format!("${index}")),
        Expr::Param { index, .. } => OUTER_PARAMS
            .with(|m| m.borrow().get(index).cloned())
            .unwrap_or_else(|| format!("${}", index + 1)),
        Expr::Const { value, ty } => match value {
            Value::Null => format!("NULL::{}", type_name(*ty)),
            Value::Bool(b) => b.to_string(),
            Value::Int4(v) if *v >= 0 => v.to_string(),
            Value::Int8(v) if *v >= 0 => v.to_string(),
            // A numeric that reads as an integer carries its type, as in
            // PostgreSQL's get_const_expr.
            Value::Numeric(n) if n.signum() >= 0 && !n.is_nan() => {
                let text = n.to_string();
                if text.contains(['.', 'e', 'E']) {
                    text
                } else {
                    format!("'{text}'::numeric")
                }
            }
            Value::Text(s) => format!("'{}'::text", s.replace('\'', "''")),
            other => format!(
                "'{}'::{}",
                other.to_text().unwrap_or_default(),
                type_name(*ty)
            ),
        },
        Expr::Arith { first, rest, .. } => {
            // A left-deep chain prints nested, as PostgreSQL prints it.
            let mut out = deparse(first, names);
            for (op, e) in rest {
                out = format!("({out} {} {})", op.symbol(), deparse(e, names));
            }
            out
        }
        Expr::Neg { arg, .. } => format!("(- {})", deparse(arg, names)),
        Expr::Cmp { op, left, right } => {
            format!(
                "({} {} {})",
                deparse(left, names),
                op.symbol(),
                deparse(right, names)
            )
        }
        Expr::RowCompare { op, left, right } => format!(
            "(ROW({}) {} ROW({}))",
            deparse_list(left, names),
            op.symbol(),
            deparse_list(right, names)
        ),
        Expr::And(terms) | Expr::Or(terms) => {
            let is_and = matches!(e, Expr::And(..));
            let inner: Vec<String> = terms.iter().map(|p| deparse(p, names)).collect();
            format!("({})", inner.join(if is_and { " AND " } else { " OR " }))
        }
        Expr::Not(a) => format!("(NOT {})", deparse(a, names)),
        Expr::IsNull { arg, negated } => {
            format!(
                "({} IS {}NULL)",
                deparse(arg, names),
                if *negated { "NOT " } else { "" }
            )
        }
        Expr::RowIsNull { fields, negated } => format!(
            "(ROW({}) IS {}NULL)",
            deparse_list(fields, names),
            if *negated { "NOT " } else { "" }
        ),
        Expr::Cast { arg, to } => format!("({})::{}", deparse(arg, names), type_name(*to)),
        Expr::Typmod { arg, ty, .. } => format!("({})::{}", deparse(arg, names), ty.display_name()),
        Expr::BpcharToText(arg) => format!("({})::text", deparse(arg, names)),
        Expr::Concat(parts) => {
            let mut out = deparse(&parts[0], names);
            for p in &parts[1..] {
                out = format!("({out} || {})", deparse(p, names));
            }
            out
        }
        Expr::IsDistinct {
            left,
            right,
            negated,
        } => format!(
            "({} IS {}DISTINCT FROM {})",
            deparse(left, names),
            if *negated { "NOT " } else { "" },
            deparse(right, names)
        ),
        Expr::BoolTest { arg, test } => format!("({} {})", deparse(arg, names), test.sql()),
        Expr::Regex {
            arg,
            pattern,
            negated,
            case_insensitive,
        } => {
            let op = tusk_exec::expr::regex_operator(*negated, *case_insensitive);
            format!("({} {op} {})", deparse(arg, names), deparse(pattern, names))
        }
        Expr::Case {
            operand,
            whens,
            otherwise,
            ..
        } => {
            let mut out = String::from("CASE");
            if let Some(o) = operand {
                out += &format!(" {}", deparse(o, names));
            }
            for (w, t) in whens {
                out += &format!(" WHEN {} THEN {}", deparse(w, names), deparse(t, names));
            }
            if let Some(e) = otherwise {
                out += &format!(" ELSE {}", deparse(e, names));
            }
            out + " END"
        }
        Expr::Coalesce(args) => format!("COALESCE({})", deparse_list(args, names)),
        Expr::MinMax { args, greatest } => format!(
            "{}({})",
            if *greatest { "GREATEST" } else { "LEAST" },
            deparse_list(args, names)
        ),
        Expr::NullIf { left, right } => {
            format!(
                "NULLIF({}, {})",
                deparse(left, names),
                deparse(right, names)
            )
        }
        Expr::InList {
            arg, list, negated, ..
        } => format!(
            "({} {} (ARRAY[{}]))",
            deparse(arg, names),
            if *negated { "<> ALL" } else { "= ANY" },
            deparse_list(list, names)
        ),
        Expr::Call { func, args, .. } => {
            format!("{}({})", func.name(), deparse_list(args, names))
        }
        Expr::Like {
            arg,
            pattern,
            negated,
            case_insensitive,
        } => {
            let op = tusk_exec::expr::like_operator(*negated, *case_insensitive);
            format!("({} {op} {})", deparse(arg, names), deparse(pattern, names))
        }
        Expr::Array { elems, .. } => format!("ARRAY[{}]", deparse_list(elems, names)),
        Expr::Subscript { array, index, .. } => {
            format!("({})[{}]", deparse(array, names), deparse(index, names))
        }
        Expr::AnyArray {
            arg,
            array,
            op,
            all,
        } => format!(
            "({} {} {} ({}))",
            deparse(arg, names),
            op.symbol(),
            if *all { "ALL" } else { "ANY" },
            deparse(array, names)
        ),
    }
}

fn deparse_list(es: &[Expr], names: &[String]) -> String {
    es.iter()
        .map(|e| deparse(e, names))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Column names without their relation: a scan's own conditions print
/// so, as PostgreSQL's `show_scan_qual` prints them. A name is a quoted or
/// plain identifier, then `.` and the column's, as the planner writes it.
fn unqualified(names: &[String]) -> Vec<String> {
    names
        .iter()
        .map(|n| {
            let column_start = if let Some(rest) = n.strip_prefix('"') {
                // Past the closing quote (doubled quotes are escaped ones).
                let mut i = 0;
                let b = rest.as_bytes();
                loop {
                    match b.get(i) {
                        Some(b'"') if b.get(i + 1) == Some(&b'"') => i += 2,
                        Some(b'"') => break Some(i + 3),
                        Some(_) => i += 1,
                        None => break None,
                    }
                }
            } else {
                n.find('.').map(|i| i + 1)
            };
            match column_start {
                Some(k) if n.as_bytes().get(k - 1) == Some(&b'.') && k < n.len() => {
                    n[k..].to_string()
                }
                _ => n.clone(),
            }
        })
        .collect()
}

/// EXPLAIN options.
#[derive(Debug, Clone, Copy)]
pub struct ExplainOptions {
    pub analyze: bool,
    pub costs: bool,
    pub timing: bool,
}

/// The visible node under a chain of projections.
fn visible(p: &Plan) -> &Plan {
    match p.kind {
        NodeKind::Project { .. } => visible(&p.children[0]),
        _ => p,
    }
}

/// PostgreSQL prints the average rows per loop (a parallel node runs once
/// per participant).
/// Whether `p` runs the select list's set-returning calls (see
/// `bind::srf`): a lateral loop over their function scan, shown as
/// PostgreSQL's ProjectSet over the loop's input.
fn is_project_set(p: &Plan) -> bool {
    matches!(
        p.kind,
        NodeKind::LateralLoop {
            join_filter: None,
            ..
        }
    ) && matches!(&visible(&p.children[1]).kind,
            NodeKind::FunctionScan { alias, .. } if crate::bind::is_sets_alias(alias))
}

fn rows_per_loop(s: &NodeStats) -> u64 {
    (s.rows as f64 / s.loops.max(1) as f64).round() as u64
}

/// Renders a statement as EXPLAIN lines: its CTEs appear as `CTE name`
/// sections of the top node, as PostgreSQL prints them.
pub fn explain(stmt: &Statement, opts: ExplainOptions, stats: Option<&[NodeStats]>) -> Vec<String> {
    // Nothing is outer to a whole plan (and a rendering that panicked on
    // this thread, which may now serve another session, left nothing).
    OUTER_PARAMS.with(|m| m.borrow_mut().clear());
    let mut out = Vec::new();
    let mut names = vec![String::new(); stmt.ctes.len()];
    cte_names(&stmt.root, &mut names);
    for c in &stmt.ctes {
        cte_names(c, &mut names);
    }
    let mut sections: Vec<Section> = stmt
        .ctes
        .iter()
        .zip(&names)
        .map(|(plan, name)| Section {
            title: format!("CTE {name}"),
            plan,
            params: Vec::new(),
        })
        .collect();
    sections.extend(level_init_plans(&stmt.root));
    let r = Renderer {
        opts,
        stats,
        aliases: aliases::unique_aliases(stmt),
    };
    r.node(
        visible(&stmt.root),
        0,
        0,
        false,
        Inherited {
            filter: Vec::new(),
            sections,
        },
        &mut out,
    );
    out
}

/// The names of the CTEs the plan scans, by CTE number.
fn cte_names(p: &Plan, names: &mut [String]) {
    if let NodeKind::CteScan { cte, name, .. } = &p.kind {
        if let Some(slot) = names.get_mut(*cte) {
            slot.clone_from(name);
        }
    }
    if let NodeKind::SubPlans { subplans } = &p.kind {
        for s in subplans {
            cte_names(&s.plan, names);
        }
    }
    for c in &p.children {
        cte_names(c, names);
    }
}

fn reads_columns(e: &Expr) -> bool {
    let mut cols = Vec::new();
    e.columns(&mut cols);
    !cols.is_empty()
}

thread_local! {
    /// While a SubPlan's plan is rendered: its parameters' names, the
    /// outer expressions they stand for (PostgreSQL prints `a.y`, not `$1`).
    static OUTER_PARAMS: std::cell::RefCell<std::collections::HashMap<usize, String>> =
        Default::default();
}

/// A plan printed under a node's details: a CTE, an InitPlan or a SubPlan
/// (with the names of the parameters it reads).
struct Section<'p> {
    title: String,
    plan: &'p Plan,
    params: Vec<(usize, String)>,
}

/// What a node folded into the one below it hands down: PostgreSQL prints
/// a filter over computed subqueries, and the subqueries themselves, as
/// part of the node that produces the rows.
#[derive(Default)]
struct Inherited<'p> {
    /// The filters' conjuncts, deparsed, in the order they run.
    filter: Vec<String>,
    sections: Vec<Section<'p>>,
}

struct Renderer<'s> {
    opts: ExplainOptions,
    stats: Option<&'s [NodeStats]>,
    /// New names of scans whose names other levels hold (see `aliases`).
    aliases: HashMap<usize, String>,
}

/// The names a chain of SubPlans nodes' parent sees, the sections of its
/// subplans (outermost node's first, as they are numbered) and the node
/// below the chain: that node's columns, then for each subplan `$n` for
/// an InitPlan's value or `(SubPlan n)` (`(hashed SubPlan n)` for an
/// uncorrelated `IN`) for a SubPlan.
fn subplan_chain(p: &Plan) -> (Vec<String>, Vec<Section<'_>>, &Plan) {
    let NodeKind::SubPlans { subplans } = &p.kind else {
        return (p.names.to_vec(), Vec::new(), p);
    };
    let (mut names, inner_sections, below) = subplan_chain(visible(&p.children[0]));
    let outer = names.clone();
    let mut sections = Vec::new();
    for s in subplans {
        let params = s
            .param_ids
            .iter()
            .zip(&s.params)
            .map(|(&id, e)| (id, deparse(e, &outer)))
            .collect();
        if let Some(param) = init_plan_param(s) {
            // Printed at the level's top node (see `level_init_plans`).
            names.push(param);
            continue;
        }
        let correlated = s.plan.uses_params(&|k| s.param_ids.contains(&k));
        let (name, title) = match &s.kind {
            SubPlanKind::Any { test } if !correlated && hashable(test) => (
                format!("(hashed SubPlan {})", s.number),
                format!("SubPlan {}", s.number),
            ),
            _ => (
                format!("(SubPlan {})", s.number),
                format!("SubPlan {}", s.number),
            ),
        };
        names.push(name);
        sections.push(Section {
            title,
            plan: &s.plan,
            params,
        });
    }
    sections.extend(inner_sections);
    (names, sections, below)
}

/// The node that filters and SubPlans nodes from `p` down fold into.
fn fold_target(p: &Plan) -> &Plan {
    match &p.kind {
        NodeKind::Filter { predicate } if reads_columns(predicate) => {
            fold_target(visible(&p.children[0]))
        }
        NodeKind::SubPlans { .. } => fold_target(visible(&p.children[0])),
        _ => p,
    }
}

/// The conjuncts of `e` deparsed, each as it prints inside an AND.
fn filter_terms(e: &Expr, names: &[String]) -> Vec<String> {
    match e {
        Expr::And(terms) => terms.iter().map(|t| deparse(t, names)).collect(),
        other => vec![deparse(other, names)],
    }
}

/// Conjuncts printed as one condition.
fn conjunction(terms: &[String]) -> String {
    match terms {
        [one] => one.clone(),
        _ => format!("({})", terms.join(" AND ")),
    }
}

/// Adds the conjuncts of filters folded into node `p` (`inherited`, in the
/// order they run) to its details, as PostgreSQL prints them: after a
/// scan's own filter in one `Filter:` line, after an inner join's own
/// conditions in its `Join Filter:` (PostgreSQL tests every qual of an
/// inner join there), and elsewhere as a `Filter:` line of their own.
/// `child_names` are the names of `p`'s children's columns.
fn merge_filter(
    p: &Plan,
    child_names: &[Vec<String>],
    inherited: Vec<String>,
    details: &mut Vec<String>,
) {
    let (own, names, label) = match &p.kind {
        NodeKind::SeqScan { filter, .. }
        | NodeKind::IndexScan { filter, .. }
        | NodeKind::FunctionScan { filter, .. }
        | NodeKind::SystemScan { filter, .. } => {
            (filter.as_ref(), unqualified(&p.names), "Filter: ")
        }
        NodeKind::HashJoin {
            kind: JoinKind::Inner,
            join_filter,
            ..
        }
        | NodeKind::MergeJoin {
            kind: JoinKind::Inner,
            join_filter,
            ..
        }
        | NodeKind::NestedLoop {
            kind: JoinKind::Inner,
            join_filter,
            ..
        }
        | NodeKind::IndexNestLoop {
            kind: JoinKind::Inner,
            join_filter,
            ..
        } => (join_filter.as_ref(), child_names.concat(), "Join Filter: "),
        _ => {
            details.push(format!("Filter: {}", conjunction(&inherited)));
            return;
        }
    };
    let mut terms = own.map_or_else(Vec::new, |f| filter_terms(f, &names));
    terms.extend(inherited);
    let line = format!("{label}{}", conjunction(&terms));
    match details.iter().position(|d| d.starts_with(label)) {
        Some(i) if own.is_some() => details[i] = line,
        _ => {
            // After the index or join conditions, before what follows.
            let at = details
                .iter()
                .rposition(|d| d.contains("Cond: "))
                .map_or(0, |i| i + 1);
            details.insert(at, line);
        }
    }
}

/// The parameter an InitPlan returns (`$n`); `None` for a SubPlan.
fn init_plan_param(s: &tusk_exec::plan::SubPlanSpec) -> Option<String> {
    match &s.kind {
        SubPlanKind::Exists | SubPlanKind::Scalar if s.params.is_empty() => {
            Some(format!("${}", s.number - 1))
        }
        _ => None,
    }
}

/// The InitPlans of the query level whose top node is `p` (not those of
/// the SubPlans, InitPlans and CTEs it runs, which are levels of their
/// own), in number order: PostgreSQL attaches every InitPlan of a level to
/// its top node (`SS_attach_initplans`), wherever its value is read.
fn level_init_plans(p: &Plan) -> Vec<Section<'_>> {
    fn collect<'p>(p: &'p Plan, out: &mut Vec<(usize, Section<'p>)>) {
        if let NodeKind::SubPlans { subplans } = &p.kind {
            for s in subplans {
                if let Some(param) = init_plan_param(s) {
                    let section = Section {
                        title: format!("InitPlan {} (returns {param})", s.number),
                        plan: &s.plan,
                        params: Vec::new(),
                    };
                    out.push((s.number, section));
                }
            }
        }
        for c in &p.children {
            collect(c, out);
        }
    }
    let mut found = Vec::new();
    collect(p, &mut found);
    found.sort_by_key(|(number, _)| *number);
    found.into_iter().map(|(_, s)| s).collect()
}

/// Whether an ANY test is a conjunction of equalities, which PostgreSQL
/// answers from a hash table of the subquery's rows.
fn hashable(test: &Expr) -> bool {
    match test {
        Expr::And(terms) => terms.iter().all(hashable),
        Expr::Cmp {
            op: tusk_exec::expr::CmpOp::Eq,
            ..
        } => true,
        _ => false,
    }
}

impl Renderer<'_> {
    /// `table alias` as a scan's title names it (`table` alone when the
    /// alias is the table's name), with the alias made unique.
    fn relation_name(&self, p: &Plan, table: &str, alias: &str) -> String {
        let alias = self.aliases.get(&p.id).map_or(alias, String::as_str);
        if alias == table {
            quote_ident(table)
        } else {
            format!("{} {}", quote_ident(table), quote_ident(alias))
        }
    }

    /// Prints sections (InitPlans, SubPlans, CTEs) at a node's detail
    /// indentation `detail`.
    fn sections(&self, sections: Vec<Section<'_>>, detail: &str, out: &mut Vec<String>) {
        for s in sections {
            out.push(format!("{detail}{}", s.title));
            OUTER_PARAMS.with(|m| m.borrow_mut().extend(s.params.iter().cloned()));
            let level = Inherited {
                filter: Vec::new(),
                sections: level_init_plans(s.plan),
            };
            self.node(visible(s.plan), 1, detail.len(), false, level, out);
            OUTER_PARAMS.with(|m| {
                let mut m = m.borrow_mut();
                for (id, _) in &s.params {
                    m.remove(id);
                }
            });
        }
    }

    /// Renders `p` at `depth` (its `->` `shift` columns further right, for a
    /// section's plan), with what a folded parent handed down.
    fn node(
        &self,
        p: &Plan,
        depth: usize,
        shift: usize,
        parallel_parent: bool,
        inherited: Inherited<'_>,
        out: &mut Vec<String>,
    ) {
        let (opts, stats) = (self.opts, self.stats);
        // A filter that reads columns, and a SubPlans node, fold into the node
        // below them.
        match &p.kind {
            NodeKind::Filter { predicate } if reads_columns(predicate) => {
                let (names, mut sections, target) = subplan_chain(visible(&p.children[0]));
                let mut all = inherited.sections;
                all.append(&mut sections);
                let scan = matches!(
                    fold_target(target).kind,
                    NodeKind::SeqScan { .. }
                        | NodeKind::IndexScan { .. }
                        | NodeKind::FunctionScan { .. }
                );
                let names = if scan { unqualified(&names) } else { names };
                // This filter runs before the ones above it.
                let mut filter = filter_terms(predicate, &names);
                filter.extend(inherited.filter);
                let next = Inherited {
                    filter,
                    sections: all,
                };
                return self.node(target, depth, shift, parallel_parent, next, out);
            }
            NodeKind::SubPlans { .. } => {
                let (_, mut sections, target) = subplan_chain(p);
                let mut all = inherited.sections;
                all.append(&mut sections);
                let next = Inherited {
                    filter: inherited.filter,
                    sections: all,
                };
                return self.node(target, depth, shift, parallel_parent, next, out);
            }
            _ => {}
        }
        let indent = shift + if depth == 0 { 0 } else { 2 + 6 * (depth - 1) };
        let detail = " ".repeat(if depth == 0 { shift + 2 } else { indent + 6 });
        // References to the children's columns, followed through hidden
        // projections (see `referents`); below a chain of SubPlans nodes,
        // the chain's names: an InitPlan's value as `$n` (see
        // `subplan_chain`).
        let child_refs: Vec<Vec<referents::Referent>> =
            p.children.iter().map(referents::referents).collect();
        let chained: Vec<bool> = p
            .children
            .iter()
            .map(|c| matches!(visible(c).kind, NodeKind::SubPlans { .. }))
            .collect();
        let child_name_lists: Vec<Vec<String>> = p
            .children
            .iter()
            .zip(&child_refs)
            .zip(&chained)
            .map(|((c, refs), &chained)| {
                if chained {
                    subplan_chain(visible(c)).0
                } else {
                    refs.iter().map(referents::Referent::as_reference).collect()
                }
            })
            .collect();
        let child_names = |i: usize| -> &[String] { &child_name_lists[i] };
        let mut own_sections = Vec::new();
        let (title, mut details): (String, Vec<String>) = match &p.kind {
            NodeKind::SystemScan {
                relation,
                alias,
                filter,
                ..
            } => {
                let name = self.relation_name(p, relation, alias);
                let mut d = vec![];
                if let Some(f) = filter {
                    d.push(format!("Filter: {}", deparse(f, &unqualified(&p.names))));
                }
                (format!("Seq Scan on {name}"), d)
            }
            NodeKind::SeqScan {
                table,
                alias,
                filter,
                parallel,
                ..
            } => {
                let name = self.relation_name(p, table, alias);
                let mut d = vec![];
                if let Some(f) = filter {
                    d.push(format!("Filter: {}", deparse(f, &unqualified(&p.names))));
                }
                d.extend(p.kind.explain_notes());
                let kind = if *parallel {
                    "Parallel Seq Scan"
                } else {
                    "Seq Scan"
                };
                (format!("{kind} on {name}"), d)
            }
            NodeKind::IndexScan {
                table,
                alias,
                index,
                index_cond,
                filter,
                ..
            } => {
                let name = self.relation_name(p, table, alias);
                let mut d = vec![format!("Index Cond: {index_cond}")];
                if let Some(f) = filter {
                    d.push(format!("Filter: {}", deparse(f, &unqualified(&p.names))));
                }
                (format!("Index Scan using {index} on {name}"), d)
            }
            NodeKind::FunctionScan {
                alias,
                calls,
                filter,
                ..
            } => {
                let mut d = vec![];
                if let Some(f) = filter {
                    d.push(format!("Filter: {}", deparse(f, &unqualified(&p.names))));
                }
                let func = calls.first().map_or("", |c| c.func.name());
                let name = if alias.is_empty() || alias == func || crate::bind::is_sets_alias(alias)
                {
                    func.to_string()
                } else {
                    format!("{func} {alias}")
                };
                (format!("Function Scan on {name}"), d)
            }
            NodeKind::Values { rows } => {
                if rows.len() == 1 {
                    ("Result".into(), vec![])
                } else {
                    ("Values Scan on \"*VALUES*\"".into(), vec![])
                }
            }
            NodeKind::Filter { predicate } => (
                "Result".into(),
                vec![format!(
                    "One-Time Filter: {}",
                    deparse(predicate, child_names(0))
                )],
            ),
            NodeKind::Project { .. } => unreachable!("projections are skipped"),
            NodeKind::HashJoin {
                outer_keys,
                inner_keys,
                join_filter,
                ..
            }
            | NodeKind::MergeJoin {
                outer_keys,
                inner_keys,
                join_filter,
                ..
            } => {
                let method = if matches!(p.kind, NodeKind::MergeJoin { .. }) {
                    "Merge"
                } else {
                    "Hash"
                };
                let on = child_names(0);
                let inn = child_names(1);
                let conds: Vec<String> = outer_keys
                    .iter()
                    .zip(inner_keys)
                    .map(|(o, i)| format!("({} = {})", deparse(o, on), deparse(i, inn)))
                    .collect();
                let mut d = vec![];
                if !conds.is_empty() {
                    let c = if conds.len() == 1 {
                        conds[0].clone()
                    } else {
                        format!("({})", conds.join(" AND "))
                    };
                    d.push(format!("{method} Cond: {c}"));
                }
                if let Some(f) = join_filter {
                    let mut both: Vec<String> = on.to_vec();
                    both.extend(inn.iter().cloned());
                    d.push(format!("Join Filter: {}", deparse(f, &both)));
                }
                d.extend(p.kind.explain_notes());
                (p.kind.explain_name().unwrap_or_default(), d)
            }
            _ if is_project_set(p) => ("ProjectSet".into(), vec![]),
            NodeKind::NestedLoop { join_filter, .. }
            | NodeKind::LateralLoop { join_filter, .. }
            | NodeKind::IndexNestLoop { join_filter, .. } => {
                let mut d = vec![];
                if let Some(f) = join_filter {
                    let mut both: Vec<String> = child_names(0).to_vec();
                    both.extend_from_slice(child_names(1));
                    d.push(format!("Join Filter: {}", deparse(f, &both)));
                }
                d.extend(p.kind.explain_notes());
                (p.kind.explain_name().unwrap_or_default(), d)
            }
            NodeKind::Append => ("Append".into(), vec![]),
            NodeKind::Result { one_time_filter } => {
                // With an init child the filter reads its subqueries.
                let names = match p.children.get(1) {
                    Some(init) => {
                        let (names, sections, _) = subplan_chain(visible(init));
                        own_sections = sections;
                        names
                    }
                    None => Vec::new(),
                };
                (
                    "Result".into(),
                    one_time_filter
                        .iter()
                        .map(|f| format!("One-Time Filter: {}", deparse(f, &names)))
                        .collect(),
                )
            }
            NodeKind::SetOp { op, all } => {
                let o = match op {
                    SetOpCmd::Intersect => "Intersect",
                    SetOpCmd::Except => "Except",
                };
                (
                    format!("HashSetOp {o}{}", if *all { " All" } else { "" }),
                    vec![],
                )
            }
            NodeKind::Unique { .. } => ("Unique".into(), vec![]),
            NodeKind::WindowAgg { .. } => ("WindowAgg".into(), vec![]),
            NodeKind::CteScan { name, alias, .. } => (
                if name == alias {
                    format!("CTE Scan on {name}")
                } else {
                    format!("CTE Scan on {name} {alias}")
                },
                vec![],
            ),
            NodeKind::RecursiveUnion { .. } => ("Recursive Union".into(), vec![]),
            NodeKind::WorkTableScan { alias, .. } => (format!("WorkTable Scan on {alias}"), vec![]),
            NodeKind::SubPlans { .. } => unreachable!("SubPlans fold into their child"),
            NodeKind::Hash if parallel_parent => ("Parallel Hash".into(), vec![]),
            NodeKind::Hash => ("Hash".into(), vec![]),
            NodeKind::Gather { workers } => {
                ("Gather".into(), vec![format!("Workers Planned: {workers}")])
            }
            NodeKind::Aggregate { group, mode, .. } => {
                let prefix = match mode {
                    AggMode::Simple => "",
                    AggMode::Partial => "Partial ",
                    AggMode::Finalize => "Finalize ",
                };
                if group.is_empty() {
                    (format!("{prefix}Aggregate"), vec![])
                } else {
                    // PostgreSQL prints the expression that computes a
                    // key column, unparenthesised.
                    let keys: Vec<String> = group
                        .iter()
                        .map(|g| match g {
                            Expr::Column { index, .. }
                                if !chained[0] && *index < child_refs[0].len() =>
                            {
                                child_refs[0][*index].text.clone()
                            }
                            _ => deparse(g, child_names(0)),
                        })
                        .collect();
                    (
                        format!("{prefix}HashAggregate"),
                        vec![format!("Group Key: {}", keys.join(", "))],
                    )
                }
            }
            NodeKind::Sort { keys, .. } => {
                let ks: Vec<String> = keys
                    .iter()
                    .map(|k| {
                        let mut s = deparse(&k.expr, child_names(0));
                        if k.desc {
                            s.push_str(" DESC");
                        }
                        if k.nulls_first != k.desc {
                            s.push_str(if k.nulls_first {
                                " NULLS FIRST"
                            } else {
                                " NULLS LAST"
                            });
                        }
                        s
                    })
                    .collect();
                ("Sort".into(), vec![format!("Sort Key: {}", ks.join(", "))])
            }
            NodeKind::Limit { .. } => ("Limit".into(), vec![]),
        };
        let mut line = String::new();
        line.push_str(&" ".repeat(indent));
        if depth > 0 {
            line.push_str("->  ");
        }
        line.push_str(&title);
        if opts.costs {
            line.push_str(&format!(
                "  (cost={:.2}..{:.2} rows={} width={})",
                p.est.startup_cost,
                p.est.total_cost,
                p.est.rows.max(1.0) as u64,
                p.est.width
            ));
        }
        if let Some(st) = stats {
            let s = &st[p.id];
            if s.loops == 0 {
                line.push_str(" (never executed)");
            } else if opts.timing {
                let first = s.first_row.unwrap_or(s.total).as_secs_f64() * 1000.0;
                let total = s.total.as_secs_f64() * 1000.0;
                line.push_str(&format!(
                    " (actual time={first:.3}..{total:.3} rows={} loops={})",
                    rows_per_loop(s),
                    s.loops
                ));
            } else {
                line.push_str(&format!(
                    " (actual rows={} loops={})",
                    rows_per_loop(s),
                    s.loops
                ));
            }
            let has_filter = matches!(
                &p.kind,
                NodeKind::SeqScan {
                    filter: Some(_),
                    ..
                } | NodeKind::IndexScan {
                    filter: Some(_),
                    ..
                } | NodeKind::FunctionScan {
                    filter: Some(_),
                    ..
                }
            );
            if has_filter {
                details.push(format!(
                    "Rows Removed by Filter: {}",
                    s.rows_removed_by_filter
                ));
            }
            if matches!(
                &p.kind,
                NodeKind::HashJoin {
                    join_filter: Some(_),
                    ..
                } | NodeKind::MergeJoin {
                    join_filter: Some(_),
                    ..
                } | NodeKind::NestedLoop {
                    join_filter: Some(_),
                    ..
                } | NodeKind::IndexNestLoop {
                    join_filter: Some(_),
                    ..
                }
            ) {
                details.push(format!(
                    "Rows Removed by Join Filter: {}",
                    s.rows_removed_by_filter
                ));
            }
            details.extend(s.extra.iter().cloned());
        }
        if !inherited.filter.is_empty() {
            merge_filter(p, &child_name_lists, inherited.filter, &mut details);
        }
        out.push(line);
        for d in details {
            out.push(format!("{detail}{d}"));
        }
        // InitPlans (and CTEs) print before the children, SubPlans after
        // them, as PostgreSQL prints them.
        let (after, before): (Vec<Section>, Vec<Section>) = inherited
            .sections
            .into_iter()
            .chain(own_sections)
            .partition(|s| s.title.starts_with("SubPlan"));
        self.sections(before, &detail, out);
        // A lateral loop's inner side shows the outer columns it reads by
        // their names.
        let lateral: Vec<(usize, String)> = match &p.kind {
            NodeKind::LateralLoop {
                params, param_ids, ..
            } => {
                let outer = &visible(&p.children[0]).names;
                param_ids
                    .iter()
                    .zip(params)
                    .map(|(&id, e)| (id, deparse(e, outer)))
                    .collect()
            }
            _ => Vec::new(),
        };
        // A Result's init child is shown as its subplans, and its input
        // when that is the one row of a query without FROM (PostgreSQL's
        // Result is that row).
        let shown = match &p.kind {
            NodeKind::Result { .. } => match p.children.first() {
                Some(c) if matches!(&c.kind, NodeKind::Values { rows } if rows.len() == 1 && c.output.is_empty()) => {
                    0
                }
                Some(_) => 1,
                None => 0,
            },
            _ if is_project_set(p) => 1,
            _ => p.children.len(),
        };
        for (i, c) in p.children.iter().take(shown).enumerate() {
            let parallel = matches!(p.kind, NodeKind::HashJoin { parallel: true, .. });
            if i == 1 {
                OUTER_PARAMS.with(|m| m.borrow_mut().extend(lateral.iter().cloned()));
            }
            self.node(
                visible(c),
                depth + 1,
                shift,
                parallel,
                Inherited::default(),
                out,
            );
        }
        OUTER_PARAMS.with(|m| {
            let mut m = m.borrow_mut();
            for (id, _) in &lateral {
                m.remove(id);
            }
        });
        self.sections(after, &detail, out);
    }
}
