//! What EXPLAIN prints for a reference to a node's output column.
//!
//! A plan node's keys and conditions read its children's outputs by
//! position. PostgreSQL prints such a reference as the expression that
//! computes it (`get_variable` on an `OUTER_VAR`): the column itself for a
//! column that passes through, and for a computed value — an expression a
//! projection evaluates, or an aggregate — that expression in parentheses,
//! `(sum((l_extendedprice * (1 - l_discount))))`. tusk's projections are
//! nodes of their own that EXPLAIN does not show (see the parent module),
//! so a reference is followed down through them, and through the nodes
//! that pass their input's columns on (filters, sorts, limits, gathers,
//! hashes and joins), to the node that computes it.
//!
//! The invariant: [`referents`] returns one entry per output column of
//! the node, falling back to the node's own column names wherever the
//! layout is not understood, so a caller can always index it as it
//! indexes `Plan::names`.

use super::deparse;
use tusk_exec::expr::Expr;
use tusk_exec::plan::{AggCall, AggMode, NodeKind, Plan};

/// One output column as a reference to it prints.
#[derive(Clone, Debug)]
pub(super) struct Referent {
    /// The column's name, or the expression that computes it.
    pub text: String,
    /// Whether `text` is a computed expression, which a reference prints
    /// in parentheses.
    pub computed: bool,
}

impl Referent {
    /// The text of a reference to the column.
    pub(super) fn as_reference(&self) -> String {
        if self.computed {
            format!("({})", self.text)
        } else {
            self.text.clone()
        }
    }
}

/// Each output column of `p` as its referent.
pub(super) fn referents(p: &Plan) -> Vec<Referent> {
    let own = || -> Vec<Referent> {
        p.names
            .iter()
            .map(|n| Referent {
                text: n.clone(),
                computed: false,
            })
            .collect()
    };
    let found = match &p.kind {
        NodeKind::Project { exprs } => {
            let below = referents(&p.children[0]);
            Some(exprs.iter().map(|e| referent_of(e, &below)).collect())
        }
        NodeKind::Aggregate { group, aggs, mode } => aggregate_referents(p, group, aggs, *mode),
        NodeKind::Filter { .. }
        | NodeKind::Sort { .. }
        | NodeKind::Limit { .. }
        | NodeKind::Gather { .. }
        | NodeKind::Hash
        | NodeKind::Unique { .. } => Some(referents(&p.children[0])),
        NodeKind::HashJoin {
            outer_out,
            inner_out,
            ..
        }
        | NodeKind::MergeJoin {
            outer_out,
            inner_out,
            ..
        }
        | NodeKind::NestedLoop {
            outer_out,
            inner_out,
            ..
        }
        | NodeKind::IndexNestLoop {
            outer_out,
            inner_out,
            ..
        } => {
            let outer = referents(&p.children[0]);
            let inner = referents(&p.children[1]);
            outer_out
                .iter()
                .map(|&i| outer.get(i).cloned())
                .chain(inner_out.iter().map(|&i| inner.get(i).cloned()))
                .collect::<Option<Vec<_>>>()
                // A mark join's mark column is its own.
                .map(|mut v| {
                    v.extend(own().into_iter().skip(v.len()));
                    v
                })
        }
        _ => None,
    };
    match found {
        Some(v) if v.len() == p.names.len() => v,
        _ => own(),
    }
}

/// The referent of expression `e` over columns `below`: a column passes
/// its referent through; anything else is computed.
fn referent_of(e: &Expr, below: &[Referent]) -> Referent {
    if let Expr::Column { index, .. } = e {
        if let Some(r) = below.get(*index) {
            return r.clone();
        }
    }
    let names: Vec<String> = below.iter().map(Referent::as_reference).collect();
    Referent {
        text: deparse(e, &names),
        computed: true,
    }
}

/// The outputs of an Aggregate: its group keys, then its calls. A
/// Finalize Aggregate's calls read the input of the Partial Aggregate
/// below it; a Partial Aggregate's state columns keep their names.
fn aggregate_referents(
    p: &Plan,
    group: &[Expr],
    aggs: &[AggCall],
    mode: AggMode,
) -> Option<Vec<Referent>> {
    let (input, group) = match mode {
        AggMode::Simple => (&p.children[0], group),
        AggMode::Finalize => {
            let partial = partial_below(&p.children[0])?;
            let NodeKind::Aggregate { group, .. } = &partial.kind else {
                return None;
            };
            (&partial.children[0], &group[..])
        }
        AggMode::Partial => return None,
    };
    let below = referents(input);
    let names: Vec<String> = below.iter().map(Referent::as_reference).collect();
    let mut out: Vec<Referent> = group.iter().map(|g| referent_of(g, &below)).collect();
    out.extend(aggs.iter().map(|a| Referent {
        text: agg_call(a, &names),
        computed: true,
    }));
    Some(out)
}

/// The Partial Aggregate under a Finalize Aggregate's Gather.
fn partial_below(p: &Plan) -> Option<&Plan> {
    match &p.kind {
        NodeKind::Aggregate {
            mode: AggMode::Partial,
            ..
        } => Some(p),
        NodeKind::Gather { .. } | NodeKind::Project { .. } | NodeKind::Sort { .. } => {
            partial_below(p.children.first()?)
        }
        _ => None,
    }
}

/// An aggregate call as PostgreSQL deparses it: `count(*)`,
/// `sum((a * b))`, `count(DISTINCT a)`,
/// `string_agg(a, ','::text ORDER BY b)`, `count(a) FILTER (WHERE (a > 1))`.
fn agg_call(a: &AggCall, names: &[String]) -> String {
    let args: Vec<String> = a.args.iter().map(|x| deparse(x, names)).collect();
    let mut s = format!("{}(", a.func.name());
    if args.is_empty() {
        s.push('*');
    } else {
        if a.distinct {
            s.push_str("DISTINCT ");
        }
        s.push_str(&args.join(", "));
    }
    if !a.order_by.is_empty() {
        let keys: Vec<String> = a
            .order_by
            .iter()
            .map(|k| {
                let mut t = deparse(&k.expr, names);
                if k.desc {
                    t.push_str(" DESC");
                }
                t
            })
            .collect();
        s.push_str(" ORDER BY ");
        s.push_str(&keys.join(", "));
    }
    s.push(')');
    if let Some(f) = &a.filter {
        s.push_str(&format!(" FILTER (WHERE {})", deparse(f, names)));
    }
    s
}
