//! Binding and planning: from sqlparser's AST to an executable [`Plan`].
//!
//! Binding resolves names against the catalog and types every expression,
//! inserting casts the way PostgreSQL does (an untyped string literal takes the
//! type of the other operand; `integer` widens to `bigint` and `numeric`).
//!
//! Planning a `SELECT`:
//!
//! 1. Every relation in `FROM` gets a contiguous range of *global* column
//!    numbers. `ON`, `USING` and `WHERE` conditions are split at `AND` into
//!    one list of predicates over global columns (all joins are inner, so
//!    their conditions are interchangeable).
//! 2. The select list, GROUP BY, aggregates and ORDER BY are bound over global
//!    columns; together with the predicates they decide which columns each
//!    scan must produce.
//! 3. Predicates over one relation become that scan's filter. Relations are
//!    then joined left to right, each time with a relation that shares an
//!    equality predicate with what is already joined if there is one; the
//!    smaller side (by estimate) is hashed. Other predicates run as join
//!    filters where their columns meet.
//! 4. Aggregation, projection, sort and limit go on top.

use crate::error::SqlError;
use sqlparser::ast as A;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use tusk_exec::cast::{assignment, cast_value, implicit};
use tusk_exec::expr::{ArithOp, CmpOp};
use tusk_exec::plan::{AggCall, AggFunc, AggMode, SortKey};
use tusk_exec::{Estimate, Expr, NodeKind, Plan, Value};
use tusk_storage::{Catalog, DataType, Database, SqlType, TableDef};

type Result<T> = std::result::Result<T, SqlError>;

fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(SqlError::new(msg))
}

/// A bound expression; `unknown` marks an untyped literal (string or NULL)
/// whose type is still to be decided by context.
#[derive(Debug, Clone)]
pub struct B {
    pub e: Expr,
    pub unknown: bool,
}

impl B {
    fn known(e: Expr) -> B {
        B { e, unknown: false }
    }
    fn ty(&self) -> DataType {
        self.e.data_type()
    }
}

/// A bound query: its plan and output column names.
pub struct BoundQuery {
    pub plan: Plan,
    pub names: Vec<String>,
    /// Output columns that are untyped literals (`NULL`, `'abc'`), typed as
    /// text for display but converted to the target type by INSERT, as
    /// PostgreSQL resolves unknown-type literals from context.
    pub unknown: Vec<bool>,
}

impl BoundQuery {
    pub fn types(&self) -> &[DataType] {
        &self.plan.output
    }
}

enum RelSource {
    Table(TableDef),
    Series { args: Vec<Expr>, ty: DataType },
}

struct Rel {
    /// The name columns are qualified with (alias, or the table name).
    alias: String,
    /// The relation's own name (table or function) for EXPLAIN.
    relname: String,
    source: RelSource,
    cols: Vec<(String, DataType)>,
    /// Columns of type `character(n)` (compared without trailing spaces).
    bpchar: Vec<bool>,
    base: usize,
    est_rows: f64,
    pages: f64,
}

#[derive(Default)]
struct Scope {
    rels: Vec<Rel>,
    /// Global columns that unqualified names and `*` skip (right side of USING).
    hidden: HashSet<usize>,
    /// Global columns in `*` order.
    star: Vec<usize>,
}

impl Scope {
    fn ncols(&self) -> usize {
        self.rels.last().map_or(0, |r| r.base + r.cols.len())
    }

    fn rel_of(&self, g: usize) -> usize {
        self.rels
            .iter()
            .position(|r| g >= r.base && g < r.base + r.cols.len())
            .unwrap()
    }

    fn col(&self, g: usize) -> (&Rel, &(String, DataType)) {
        let r = &self.rels[self.rel_of(g)];
        (r, &r.cols[g - r.base])
    }

    /// A reference to global column `g`; `character(n)` columns read as text.
    fn column_expr(&self, g: usize) -> Expr {
        let r = &self.rels[self.rel_of(g)];
        let col = Expr::Column {
            index: g,
            ty: r.cols[g - r.base].1,
        };
        if r.bpchar[g - r.base] {
            Expr::BpcharToText(Box::new(col))
        } else {
            col
        }
    }

    fn qualified_name(&self, g: usize) -> String {
        let (r, c) = self.col(g);
        if self.rels.len() > 1 {
            format!("{}.{}", quote_ident(&r.alias), quote_ident(&c.0))
        } else {
            quote_ident(&c.0)
        }
    }

    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<usize> {
        match qualifier {
            Some(q) => {
                let rel = self.rels.iter().find(|r| r.alias == q).ok_or_else(|| {
                    SqlError::new(format!("missing FROM-clause entry for table \"{q}\""))
                })?;
                match rel.cols.iter().position(|c| c.0 == name) {
                    Some(i) => Ok(rel.base + i),
                    None => err(format!("column {q}.{name} does not exist")),
                }
            }
            None => {
                let mut found = None;
                for r in &self.rels {
                    for (i, c) in r.cols.iter().enumerate() {
                        let g = r.base + i;
                        if c.0 == name && !self.hidden.contains(&g) {
                            if found.is_some() {
                                return err(format!("column reference \"{name}\" is ambiguous"));
                            }
                            found = Some(g);
                        }
                    }
                }
                found.ok_or_else(|| SqlError::new(format!("column \"{name}\" does not exist")))
            }
        }
    }
}

/// PostgreSQL quotes identifiers that are not plain lower-case words.
pub fn quote_ident(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// Identifiers fold to lower case unless quoted.
pub fn ident(i: &A::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

pub fn object_name(n: &A::ObjectName) -> Result<String> {
    let parts: Vec<String> =
        n.0.iter()
            .map(|p| match p {
                A::ObjectNamePart::Identifier(i) => Ok(ident(i)),
                _ => err("unsupported object name"),
            })
            .collect::<Result<_>>()?;
    match parts.as_slice() {
        [name] => Ok(name.clone()),
        [schema, name] if schema == "public" => Ok(name.clone()),
        [schema, _] => err(format!("schema \"{schema}\" does not exist")),
        _ => err(format!(
            "improper qualified name (too many dotted names): {n}"
        )),
    }
}

/// Maps a SQL type name to a column type.
pub fn sql_type(t: &A::DataType) -> Result<SqlType> {
    let len = |l: &Option<A::CharacterLength>| -> Option<u32> {
        match l {
            Some(A::CharacterLength::IntegerLength { length, .. }) => Some(*length as u32),
            _ => None,
        }
    };
    Ok(match t {
        A::DataType::Int(_) | A::DataType::Integer(_) | A::DataType::Int4(_) => SqlType::Int4,
        A::DataType::BigInt(_) | A::DataType::Int8(_) => SqlType::Int8,
        A::DataType::Bool | A::DataType::Boolean => SqlType::Bool,
        A::DataType::Text => SqlType::Text,
        A::DataType::Varchar(l) | A::DataType::CharacterVarying(l) => SqlType::Varchar(len(l)),
        A::DataType::Char(l) | A::DataType::Character(l) => SqlType::Char(len(l).unwrap_or(1)),
        A::DataType::Numeric(_) | A::DataType::Decimal(_) => SqlType::Numeric,
        A::DataType::Custom(name, _) => match object_name(name)?.as_str() {
            "int4" | "integer" | "int" => SqlType::Int4,
            "int8" | "bigint" => SqlType::Int8,
            "bool" | "boolean" => SqlType::Bool,
            "text" => SqlType::Text,
            "varchar" => SqlType::Varchar(None),
            "numeric" | "decimal" => SqlType::Numeric,
            other => return err(format!("type \"{other}\" does not exist")),
        },
        other => {
            return err(format!(
                "type \"{}\" is not supported",
                other.to_string().to_lowercase()
            ))
        }
    })
}

/// PostgreSQL's internal type name, used for the column name of a cast literal.
fn type_colname(t: DataType) -> &'static str {
    match t {
        DataType::Bool => "bool",
        DataType::Int4 => "int4",
        DataType::Int8 => "int8",
        DataType::Numeric => "numeric",
        DataType::Text => "text",
    }
}

/// How aggregates may appear where an expression is being bound.
enum AggScope {
    /// No aggregation in this query (yet): finding one is an error with this context.
    Forbidden(&'static str),
    /// Select list and ORDER BY of an aggregating query.
    Collect(AggState),
    /// Inside an aggregate's argument.
    Nested,
}

#[derive(Default)]
struct AggState {
    group: Vec<Expr>,
    calls: Vec<AggCall>,
}

fn is_aggregate_name(name: &str) -> bool {
    matches!(name, "count" | "sum" | "min" | "max" | "avg")
}

fn contains_aggregate(e: &A::Expr) -> bool {
    let mut found = false;
    let _ = sqlparser::ast::visit_expressions(e, |x| {
        if let A::Expr::Function(f) = x {
            if f.name.0.len() == 1 && is_aggregate_name(&f.name.to_string().to_lowercase()) {
                found = true;
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

pub struct Binder<'a> {
    db: &'a Database,
    catalog: &'a Catalog,
    /// `max_parallel_workers_per_gather` (0: never plan parallel).
    workers: usize,
    /// `enable_indexscan` and `enable_seqscan`.
    enable_indexscan: bool,
    enable_seqscan: bool,
    /// Smallest estimated scan (rows) worth a parallel plan.
    min_parallel_rows: f64,
}

/// Rows of a scan worth a parallel plan at PostgreSQL's default
/// `min_parallel_table_scan_size` of 8 MB (about that many narrow rows); the
/// setting scales it linearly, and 0 makes every scan/join tree eligible.
const MIN_PARALLEL_ROWS: f64 = 100_000.0;
const DEFAULT_MIN_PARALLEL_SCAN: f64 = (8 << 20) as f64;

/// Width in bytes PostgreSQL would estimate for a type.
fn type_width(t: DataType) -> u32 {
    match t {
        DataType::Bool => 1,
        DataType::Int4 => 4,
        DataType::Int8 => 8,
        DataType::Numeric => 32,
        DataType::Text => 32,
    }
}

fn width_of(types: &[DataType]) -> u32 {
    types.iter().map(|&t| type_width(t)).sum()
}

const CPU_TUPLE_COST: f64 = 0.01;
const CPU_INDEX_TUPLE_COST: f64 = 0.005;
const RANDOM_PAGE_COST: f64 = 4.0;
/// PostgreSQL's cost penalty for a disabled plan method.
const DISABLE_COST: f64 = 1.0e10;
const CPU_OPERATOR_COST: f64 = 0.0025;

/// Splits an expression at top-level ANDs.
fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        e => out.push(e),
    }
}

fn and_all(mut es: Vec<Expr>) -> Option<Expr> {
    let first = if es.is_empty() {
        return None;
    } else {
        es.remove(0)
    };
    Some(
        es.into_iter()
            .fold(first, |a, b| Expr::And(Box::new(a), Box::new(b))),
    )
}

fn cols_of(e: &Expr) -> Vec<usize> {
    let mut v = Vec::new();
    e.columns(&mut v);
    v
}

fn remap(e: &Expr, pos: &HashMap<usize, usize>) -> Expr {
    let mut e = e.clone();
    e.remap_columns(&|g| pos[&g]);
    e
}

/// Selectivity guess for a filter, as PostgreSQL's defaults.
fn selectivity(e: &Expr) -> f64 {
    match e {
        Expr::Cmp { op: CmpOp::Eq, .. } => 0.005,
        Expr::Cmp { op: CmpOp::Ne, .. } => 0.995,
        Expr::Cmp { .. } => 0.3333,
        Expr::And(a, b) => selectivity(a) * selectivity(b),
        Expr::Or(a, b) => (selectivity(a) + selectivity(b)).min(1.0),
        Expr::IsNull { negated: false, .. } => 0.005,
        _ => 0.5,
    }
}

/// A plan under construction with the global columns it outputs.
struct Part {
    plan: Plan,
    cols: Vec<usize>,
    rels: HashSet<usize>,
}

impl Part {
    fn pos(&self) -> HashMap<usize, usize> {
        self.cols.iter().enumerate().map(|(i, &g)| (g, i)).collect()
    }
}

impl<'a> Binder<'a> {
    pub fn new(db: &'a Database, catalog: &'a Catalog) -> Self {
        Binder {
            db,
            catalog,
            workers: 0,
            enable_indexscan: true,
            enable_seqscan: true,
            min_parallel_rows: MIN_PARALLEL_ROWS,
        }
    }

    /// Applies `enable_indexscan` and `enable_seqscan`: a disabled method
    /// is still used when nothing else can run, at a cost raised by
    /// PostgreSQL's `disable_cost` (so EXPLAIN shows it as there).
    pub fn with_scan_methods(mut self, indexscan: bool, seqscan: bool) -> Self {
        self.enable_indexscan = indexscan;
        self.enable_seqscan = seqscan;
        self
    }

    /// Allows parallel plans with up to `workers` workers per Gather for
    /// scans of at least `min_scan_bytes` (`min_parallel_table_scan_size`).
    pub fn with_parallelism(mut self, workers: usize, min_scan_bytes: usize) -> Self {
        self.workers = workers;
        self.min_parallel_rows =
            MIN_PARALLEL_ROWS * min_scan_bytes as f64 / DEFAULT_MIN_PARALLEL_SCAN;
        self
    }

    /// Whether the scan/join tree `p` can run under a Gather: only heap scans
    /// and hash joins whose build side is a scan, big enough to be worth it.
    /// A build side that will not fit in memory is no reason to stay serial:
    /// the Parallel Hash Join spills within `work_mem × hash_mem_multiplier ×
    /// participants`.
    fn parallel_safe(&self, p: &Plan, aggs: Option<&AggState>) -> bool {
        fn walk(p: &Plan, biggest: &mut f64) -> bool {
            match &p.kind {
                NodeKind::SeqScan {
                    with_tid: false, ..
                } => {
                    *biggest = biggest.max(p.est.rows);
                    true
                }
                NodeKind::HashJoin { .. } => {
                    let inner = &p.children[1].children[0];
                    matches!(inner.kind, NodeKind::SeqScan { .. })
                        && walk(&p.children[0], biggest)
                        && walk(inner, biggest)
                }
                _ => false,
            }
        }
        if self.workers == 0 {
            return false;
        }
        if aggs.is_some_and(|a| a.calls.iter().any(|c| c.func == AggFunc::Avg)) {
            return false;
        }
        let mut biggest = 0.0;
        walk(p, &mut biggest) && biggest >= self.min_parallel_rows
    }

    /// Marks every scan and join of a parallel-safe tree as parallel.
    fn make_parallel(p: &mut Plan) {
        match &mut p.kind {
            NodeKind::SeqScan { parallel, .. } | NodeKind::HashJoin { parallel, .. } => {
                *parallel = true
            }
            _ => {}
        }
        for c in &mut p.children {
            Self::make_parallel(c);
        }
    }

    fn gather(&self, child: Plan) -> Plan {
        let out = child.output.clone();
        let names = child.names.clone();
        let est = child.est;
        Plan::new(
            NodeKind::Gather {
                workers: self.workers,
            },
            vec![child],
            out,
            names,
            est,
        )
    }

    pub fn table(&self, name: &A::ObjectName) -> Result<&'a TableDef> {
        let n = object_name(name)?;
        self.catalog
            .table(&n)
            .ok_or_else(|| SqlError::new(format!("relation \"{n}\" does not exist")))
    }

    // ----- expressions -----

    fn literal(&self, v: &A::Value) -> Result<B> {
        Ok(match v {
            A::Value::Number(s, _) => {
                if let Ok(i) = s.parse::<i32>() {
                    B::known(Expr::Const {
                        value: Value::Int4(i),
                        ty: DataType::Int4,
                    })
                } else if let Ok(i) = s.parse::<i64>() {
                    B::known(Expr::Const {
                        value: Value::Int8(i),
                        ty: DataType::Int8,
                    })
                } else {
                    let n = tusk_exec::Numeric::parse(s).ok_or_else(|| {
                        SqlError::new(format!("invalid input syntax for type numeric: \"{s}\""))
                    })?;
                    B::known(Expr::Const {
                        value: Value::Numeric(n),
                        ty: DataType::Numeric,
                    })
                }
            }
            A::Value::SingleQuotedString(s) | A::Value::EscapedStringLiteral(s) => B {
                e: Expr::Const {
                    value: Value::Text(s.clone()),
                    ty: DataType::Text,
                },
                unknown: true,
            },
            A::Value::DollarQuotedString(d) => B {
                e: Expr::Const {
                    value: Value::Text(d.value.clone()),
                    ty: DataType::Text,
                },
                unknown: true,
            },
            A::Value::Boolean(b) => B::known(Expr::Const {
                value: Value::Bool(*b),
                ty: DataType::Bool,
            }),
            A::Value::Null => B {
                e: Expr::Const {
                    value: Value::Null,
                    ty: DataType::Text,
                },
                unknown: true,
            },
            other => return err(format!("unsupported literal: {other}")),
        })
    }

    /// Gives an expression type `to`: untyped literals are converted now,
    /// others get an implicit cast if PostgreSQL has one.
    fn coerce(&self, b: B, to: DataType, context: impl Fn(DataType) -> String) -> Result<Expr> {
        if b.unknown {
            if let Expr::Const { value, .. } = &b.e {
                let v = cast_value(value, to).map_err(|e| SqlError::new(e.0))?;
                return Ok(Expr::Const { value: v, ty: to });
            }
        }
        let from = b.ty();
        if from == to {
            Ok(b.e)
        } else if implicit(from, to) {
            Ok(Expr::Cast {
                arg: Box::new(b.e),
                to,
            })
        } else {
            err(context(from))
        }
    }

    /// Brings two operands to one type for operator `op`.
    fn unify(&self, l: B, r: B, op: &str) -> Result<(Expr, Expr, DataType)> {
        let opname = |a: &str, b: &str| format!("operator does not exist: {a} {op} {b}");
        match (l.unknown, r.unknown) {
            (true, true) => {
                let t = DataType::Text;
                Ok((
                    self.coerce(l, t, |_| String::new())?,
                    self.coerce(r, t, |_| String::new())?,
                    t,
                ))
            }
            (true, false) => {
                let t = r.ty();
                Ok((self.coerce(l, t, |_| String::new())?, r.e, t))
            }
            (false, true) => {
                let t = l.ty();
                Ok((l.e, self.coerce(r, t, |_| String::new())?, t))
            }
            (false, false) => {
                let (lt, rt) = (l.ty(), r.ty());
                if lt == rt {
                    Ok((l.e, r.e, lt))
                } else if implicit(lt, rt) {
                    Ok((
                        Expr::Cast {
                            arg: Box::new(l.e),
                            to: rt,
                        },
                        r.e,
                        rt,
                    ))
                } else if implicit(rt, lt) {
                    Ok((
                        l.e,
                        Expr::Cast {
                            arg: Box::new(r.e),
                            to: lt,
                        },
                        lt,
                    ))
                } else {
                    err(opname(lt.display_name(), rt.display_name()))
                }
            }
        }
    }

    fn bool_operand(&self, b: B, what: &str) -> Result<Expr> {
        self.coerce(b, DataType::Bool, |t| {
            format!(
                "argument of {what} must be type boolean, not type {}",
                t.display_name()
            )
        })
    }

    fn bind(&self, e: &A::Expr, scope: &Scope, mode: &mut AggScope) -> Result<B> {
        if let AggScope::Collect(state) = mode {
            if !contains_aggregate(e) && !matches!(e, A::Expr::Value(_)) {
                let b = self.bind(e, scope, &mut AggScope::Forbidden("GROUP BY"))?;
                if let Some(i) = state.group.iter().position(|g| *g == b.e) {
                    return Ok(B::known(Expr::Column {
                        index: i,
                        ty: b.ty(),
                    }));
                }
                let cols = cols_of(&b.e);
                if cols.is_empty() {
                    return Ok(b);
                }
                if matches!(e, A::Expr::Identifier(_) | A::Expr::CompoundIdentifier(_)) {
                    let g = cols[0];
                    return err(format!(
                        "column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                        scope.qualified_name(g).replace('"', "")
                    ));
                }
            }
        }
        match e {
            A::Expr::Identifier(i) => {
                let g = scope.resolve(None, &ident(i))?;
                Ok(B::known(scope.column_expr(g)))
            }
            A::Expr::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident).collect();
                let (q, n) = match names.as_slice() {
                    [q, n] => (q.as_str(), n.as_str()),
                    [_schema, q, n] => (q.as_str(), n.as_str()),
                    _ => return err(format!("improper qualified name: {e}")),
                };
                let g = scope.resolve(Some(q), n)?;
                Ok(B::known(scope.column_expr(g)))
            }
            A::Expr::Value(v) => self.literal(&v.value),
            A::Expr::Nested(inner) => self.bind(inner, scope, mode),
            A::Expr::UnaryOp { op, expr } => match op {
                A::UnaryOperator::Minus => {
                    if let A::Expr::Value(v) = expr.as_ref() {
                        if let A::Value::Number(s, l) = &v.value {
                            return self.literal(&A::Value::Number(format!("-{s}"), *l));
                        }
                    }
                    let b = self.bind(expr, scope, mode)?;
                    let t = if b.unknown { DataType::Numeric } else { b.ty() };
                    if !matches!(t, DataType::Int4 | DataType::Int8 | DataType::Numeric) {
                        return err(format!("operator does not exist: - {}", t.display_name()));
                    }
                    let arg = self.coerce(b, t, |_| String::new())?;
                    Ok(B::known(Expr::Neg {
                        arg: Box::new(arg),
                        ty: t,
                    }))
                }
                A::UnaryOperator::Plus => self.bind(expr, scope, mode),
                A::UnaryOperator::Not => {
                    let b = self.bind(expr, scope, mode)?;
                    Ok(B::known(Expr::Not(Box::new(self.bool_operand(b, "NOT")?))))
                }
                other => err(format!("operator is not supported: {other}")),
            },
            A::Expr::BinaryOp { left, op, right } => {
                let l = self.bind(left, scope, mode)?;
                let r = self.bind(right, scope, mode)?;
                self.binary(l, op, r)
            }
            A::Expr::IsNull(x) | A::Expr::IsNotNull(x) => {
                let b = self.bind(x, scope, mode)?;
                Ok(B::known(Expr::IsNull {
                    arg: Box::new(b.e),
                    negated: matches!(e, A::Expr::IsNotNull(_)),
                }))
            }
            A::Expr::IsTrue(x)
            | A::Expr::IsNotTrue(x)
            | A::Expr::IsFalse(x)
            | A::Expr::IsNotFalse(x) => {
                let b = self.bind(x, scope, mode)?;
                let arg = self.bool_operand(b, "IS TRUE")?;
                let want = matches!(e, A::Expr::IsTrue(_) | A::Expr::IsNotFalse(_));
                let negate = matches!(e, A::Expr::IsNotTrue(_) | A::Expr::IsNotFalse(_));
                // x IS TRUE  ==  (x = true) AND x IS NOT NULL, never NULL.
                let eq = Expr::Cmp {
                    op: CmpOp::Eq,
                    left: Box::new(arg.clone()),
                    right: Box::new(Expr::Const {
                        value: Value::Bool(negate != want || negate && !want),
                        ty: DataType::Bool,
                    }),
                };
                let _ = eq;
                let is = Expr::And(
                    Box::new(Expr::IsNull {
                        arg: Box::new(arg.clone()),
                        negated: true,
                    }),
                    Box::new(if want { arg } else { Expr::Not(Box::new(arg)) }),
                );
                let v = Expr::And(
                    Box::new(Expr::IsNull {
                        arg: Box::new(is.clone()),
                        negated: true,
                    }),
                    Box::new(is),
                );
                Ok(B::known(if negate { Expr::Not(Box::new(v)) } else { v }))
            }
            A::Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind(expr, scope, mode)?;
                let lo = self.bind(low, scope, mode)?;
                let hi = self.bind(high, scope, mode)?;
                let ge = self.binary(x.clone(), &A::BinaryOperator::GtEq, lo)?;
                let le = self.binary(x, &A::BinaryOperator::LtEq, hi)?;
                let both = Expr::And(Box::new(ge.e), Box::new(le.e));
                Ok(B::known(negate_if(both, *negated)))
            }
            A::Expr::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.bind(expr, scope, mode)?;
                let mut acc: Option<Expr> = None;
                for item in list {
                    let it = self.bind(item, scope, mode)?;
                    let eq = self.binary(x.clone(), &A::BinaryOperator::Eq, it)?.e;
                    acc = Some(match acc {
                        None => eq,
                        Some(a) => Expr::Or(Box::new(a), Box::new(eq)),
                    });
                }
                let any = acc.ok_or_else(|| SqlError::new("syntax error at or near \")\""))?;
                Ok(B::known(negate_if(any, *negated)))
            }
            A::Expr::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any,
                ..
            }
            | A::Expr::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any,
                ..
            } => {
                if escape_char.is_some() || *any {
                    return err("LIKE with ESCAPE or ANY is not supported");
                }
                let x = self.bind(expr, scope, mode)?;
                let p = self.bind(pattern, scope, mode)?;
                let text = |b: B, this: &Self| -> Result<Expr> {
                    this.coerce(b, DataType::Text, |t| {
                        format!("operator does not exist: {} ~~ unknown", t.display_name())
                    })
                };
                Ok(B::known(Expr::Like {
                    arg: Box::new(text(x, self)?),
                    pattern: Box::new(text(p, self)?),
                    negated: *negated,
                    case_insensitive: matches!(e, A::Expr::ILike { .. }),
                }))
            }
            A::Expr::Cast {
                expr, data_type, ..
            } => {
                let to = sql_type(data_type)?.data_type();
                let b = self.bind(expr, scope, mode)?;
                if b.unknown {
                    return Ok(B::known(self.coerce(b, to, |_| String::new())?));
                }
                let from = b.ty();
                if from == to {
                    return Ok(B::known(b.e));
                }
                if !tusk_exec::cast::castable(from, to) {
                    return err(format!(
                        "cannot cast type {} to {}",
                        from.display_name(),
                        to.display_name()
                    ));
                }
                Ok(B::known(Expr::Cast {
                    arg: Box::new(b.e),
                    to,
                }))
            }
            A::Expr::Function(f) => self.function(f, scope, mode),
            A::Expr::Subquery(_) | A::Expr::InSubquery { .. } | A::Expr::Exists { .. } => {
                err("subqueries are not supported")
            }
            other => err(format!("expression is not supported: {other}")),
        }
    }

    fn binary(&self, l: B, op: &A::BinaryOperator, r: B) -> Result<B> {
        use A::BinaryOperator as O;
        let arith = |o: ArithOp| -> Result<B> {
            let sym = o.symbol();
            let (le, re, t) = if l.unknown && r.unknown {
                return err(format!("operator is not unique: unknown {sym} unknown"));
            } else {
                self.unify(l.clone(), r.clone(), sym)?
            };
            if !matches!(t, DataType::Int4 | DataType::Int8 | DataType::Numeric) {
                return err(format!(
                    "operator does not exist: {} {sym} {}",
                    t.display_name(),
                    t.display_name()
                ));
            }
            Ok(B::known(Expr::Arith {
                op: o,
                left: Box::new(le),
                right: Box::new(re),
                ty: t,
            }))
        };
        let cmp = |o: CmpOp| -> Result<B> {
            let (le, re, _) = self.unify(l.clone(), r.clone(), o.symbol())?;
            Ok(B::known(Expr::Cmp {
                op: o,
                left: Box::new(le),
                right: Box::new(re),
            }))
        };
        match op {
            O::Plus => arith(ArithOp::Add),
            O::Minus => arith(ArithOp::Sub),
            O::Multiply => arith(ArithOp::Mul),
            O::Divide => arith(ArithOp::Div),
            O::Modulo => arith(ArithOp::Mod),
            O::Eq => cmp(CmpOp::Eq),
            O::NotEq => cmp(CmpOp::Ne),
            O::Lt => cmp(CmpOp::Lt),
            O::LtEq => cmp(CmpOp::Le),
            O::Gt => cmp(CmpOp::Gt),
            O::GtEq => cmp(CmpOp::Ge),
            O::And | O::Or => {
                let what = if matches!(op, O::And) { "AND" } else { "OR" };
                let a = self.bool_operand(l, what)?;
                let b = self.bool_operand(r, what)?;
                Ok(B::known(if matches!(op, O::And) {
                    Expr::And(Box::new(a), Box::new(b))
                } else {
                    Expr::Or(Box::new(a), Box::new(b))
                }))
            }
            O::StringConcat => {
                let is_text = |b: &B| b.unknown || b.ty() == DataType::Text;
                if !is_text(&l) && !is_text(&r) {
                    return err(format!(
                        "operator does not exist: {} || {}",
                        l.ty().display_name(),
                        r.ty().display_name()
                    ));
                }
                let to_text = |b: B| -> Result<Expr> {
                    if b.unknown {
                        return self.coerce(b, DataType::Text, |_| String::new());
                    }
                    Ok(if b.ty() == DataType::Text {
                        b.e
                    } else {
                        Expr::Cast {
                            arg: Box::new(b.e),
                            to: DataType::Text,
                        }
                    })
                };
                Ok(B::known(Expr::Concat {
                    left: Box::new(to_text(l)?),
                    right: Box::new(to_text(r)?),
                }))
            }
            other => err(format!("operator is not supported: {other}")),
        }
    }

    fn function_args<'f>(&self, f: &'f A::Function) -> Result<(Vec<&'f A::FunctionArgExpr>, bool)> {
        match &f.args {
            A::FunctionArguments::None => Ok((vec![], false)),
            A::FunctionArguments::List(list) => {
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(A::DuplicateTreatment::Distinct)
                );
                if !list.clauses.is_empty() {
                    return err(format!("function call clauses are not supported: {f}"));
                }
                let args = list
                    .args
                    .iter()
                    .map(|a| match a {
                        A::FunctionArg::Unnamed(x) => Ok(x),
                        _ => err("named function arguments are not supported"),
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok((args, distinct))
            }
            A::FunctionArguments::Subquery(_) => err("subqueries are not supported"),
        }
    }

    fn function(&self, f: &A::Function, scope: &Scope, mode: &mut AggScope) -> Result<B> {
        let name = object_name(&f.name)?;
        if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
            return err(format!(
                "window functions and aggregate FILTER are not supported: {f}"
            ));
        }
        let (args, distinct) = self.function_args(f)?;
        if is_aggregate_name(&name) {
            let state = match mode {
                AggScope::Forbidden(ctx) => {
                    return err(format!("aggregate functions are not allowed in {ctx}"))
                }
                AggScope::Nested => return err("aggregate function calls cannot be nested"),
                AggScope::Collect(s) => s,
            };
            if distinct {
                return err(format!("{name}(DISTINCT ...) is not supported"));
            }
            let call = match (name.as_str(), args.as_slice()) {
                ("count", [A::FunctionArgExpr::Wildcard]) | ("count", []) => AggCall {
                    func: AggFunc::CountStar,
                    arg: None,
                    result: DataType::Int8,
                },
                (_, [A::FunctionArgExpr::Expr(x)]) => {
                    let b = self.bind(x, scope, &mut AggScope::Nested)?;
                    let func = match name.as_str() {
                        "count" => AggFunc::Count,
                        "sum" => AggFunc::Sum,
                        "min" => AggFunc::Min,
                        "max" => AggFunc::Max,
                        _ => AggFunc::Avg,
                    };
                    let arg = if b.unknown {
                        if matches!(func, AggFunc::Sum | AggFunc::Avg) {
                            return err(format!("function {name}(unknown) is not unique"));
                        }
                        self.coerce(b, DataType::Text, |_| String::new())?
                    } else {
                        b.e
                    };
                    let t = arg.data_type();
                    if matches!(func, AggFunc::Sum | AggFunc::Avg)
                        && !matches!(t, DataType::Int4 | DataType::Int8 | DataType::Numeric)
                    {
                        return err(format!(
                            "function {name}({}) does not exist",
                            t.display_name()
                        ));
                    }
                    AggCall {
                        func,
                        arg: Some(arg),
                        result: func.result_type(Some(t)),
                    }
                }
                _ => {
                    return err(format!(
                        "function {name} with {} arguments does not exist",
                        args.len()
                    ))
                }
            };
            let ngroup = state.group.len();
            let idx = match state.calls.iter().position(|c| *c == call) {
                Some(i) => i,
                None => {
                    state.calls.push(call.clone());
                    state.calls.len() - 1
                }
            };
            return Ok(B::known(Expr::Column {
                index: ngroup + idx,
                ty: call.result,
            }));
        }
        if name == "generate_series" {
            return err("set-returning functions are only supported in FROM, or alone in a select list without FROM");
        }
        let mut types = Vec::new();
        for a in &args {
            if let A::FunctionArgExpr::Expr(x) = a {
                let b = self.bind(x, scope, mode)?;
                types.push(if b.unknown {
                    "unknown"
                } else {
                    b.ty().display_name()
                });
            }
        }
        err(format!(
            "function {name}({}) does not exist",
            types.join(", ")
        ))
    }

    // ----- FROM -----

    fn series_args(&self, args: &[A::FunctionArg]) -> Result<(Vec<Expr>, DataType)> {
        let empty = Scope::default();
        let mut bound = Vec::new();
        for a in args {
            let A::FunctionArg::Unnamed(A::FunctionArgExpr::Expr(x)) = a else {
                return err("generate_series takes plain arguments");
            };
            let b = self.bind(x, &empty, &mut AggScope::Forbidden("functions in FROM"))?;
            bound.push(b);
        }
        if !(2..=3).contains(&bound.len()) {
            let types: Vec<&str> = bound
                .iter()
                .map(|b| {
                    if b.unknown {
                        "unknown"
                    } else {
                        b.ty().display_name()
                    }
                })
                .collect();
            return err(format!(
                "function generate_series({}) does not exist",
                types.join(", ")
            ));
        }
        let ty = if bound.iter().any(|b| !b.unknown && b.ty() == DataType::Int8) {
            DataType::Int8
        } else if bound.iter().all(|b| b.unknown || b.ty() == DataType::Int4) {
            DataType::Int4
        } else {
            let types: Vec<&str> = bound.iter().map(|b| b.ty().display_name()).collect();
            return err(format!(
                "function generate_series({}) does not exist",
                types.join(", ")
            ));
        };
        let exprs = bound
            .into_iter()
            .map(|b| {
                self.coerce(b, ty, |t| {
                    format!(
                        "function generate_series({}) does not exist",
                        t.display_name()
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((exprs, ty))
    }

    fn add_relation(&self, tf: &A::TableFactor, scope: &mut Scope) -> Result<Vec<usize>> {
        let base = scope.ncols();
        let rel = match tf {
            A::TableFactor::Table {
                name, alias, args, ..
            } => {
                let relname = object_name(name)?;
                let alias_cols: Vec<String> = alias
                    .as_ref()
                    .map(|a| a.columns.iter().map(|c| ident(&c.name)).collect())
                    .unwrap_or_default();
                let alias_name = alias.as_ref().map(|a| ident(&a.name));
                match args {
                    Some(fargs) => {
                        if relname != "generate_series" {
                            return err(format!("function {relname} does not exist"));
                        }
                        let (exprs, ty) = self.series_args(&fargs.args)?;
                        let alias_s = alias_name.unwrap_or_else(|| "generate_series".into());
                        if alias_cols.len() > 1 {
                            return err(format!(
                                "table \"{alias_s}\" has 1 columns available but {} columns specified",
                                alias_cols.len()
                            ));
                        }
                        // An aliased one-column function names its column after the alias.
                        let col = alias_cols
                            .first()
                            .cloned()
                            .unwrap_or_else(|| alias_s.clone());
                        let rows = series_rows(&exprs).unwrap_or(1000.0);
                        Rel {
                            alias: alias_s,
                            relname,
                            source: RelSource::Series { args: exprs, ty },
                            cols: vec![(col, ty)],
                            bpchar: vec![false],
                            base,
                            est_rows: rows,
                            pages: 0.0,
                        }
                    }
                    None => {
                        let t = self.table(name)?;
                        let mut cols: Vec<(String, DataType)> = t
                            .columns
                            .iter()
                            .map(|c| (c.name.clone(), c.ty.data_type()))
                            .collect();
                        if alias_cols.len() > cols.len() {
                            return err(format!(
                                "table \"{}\" has {} columns available but {} columns specified",
                                alias_name.as_deref().unwrap_or(&relname),
                                cols.len(),
                                alias_cols.len()
                            ));
                        }
                        for (c, a) in cols.iter_mut().zip(&alias_cols) {
                            c.0 = a.clone();
                        }
                        let pages = self
                            .db
                            .nblocks(t.oid)
                            .map_err(|e| SqlError::new(e.to_string()))?
                            as f64;
                        let est_rows =
                            tusk_storage::heap::estimate_tuples(&self.db.pool, t.oid, pages as u32)
                                .map_err(|e| SqlError::new(e.to_string()))?;
                        Rel {
                            alias: alias_name.unwrap_or_else(|| relname.clone()),
                            relname,
                            source: RelSource::Table(t.clone()),
                            bpchar: t
                                .columns
                                .iter()
                                .map(|c| matches!(c.ty, SqlType::Char(_)))
                                .collect(),
                            cols,
                            base,
                            est_rows,
                            pages,
                        }
                    }
                }
            }
            A::TableFactor::Derived { .. } => return err("subqueries in FROM are not supported"),
            A::TableFactor::NestedJoin { .. } => {
                return err("parenthesized joins are not supported")
            }
            other => return err(format!("unsupported FROM item: {other}")),
        };
        if scope.rels.iter().any(|r| r.alias == rel.alias) {
            return err(format!(
                "table name \"{}\" specified more than once",
                rel.alias
            ));
        }
        let cols: Vec<usize> = (base..base + rel.cols.len()).collect();
        scope.rels.push(rel);
        Ok(cols)
    }

    /// Binds a FROM list; returns the scope and the predicates from ON / USING.
    fn bind_from(
        &self,
        from: &[A::TableWithJoins],
        scope: &mut Scope,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
        for twj in from {
            let mut star = self.add_relation(&twj.relation, scope)?;
            for j in &twj.joins {
                let constraint = match &j.join_operator {
                    A::JoinOperator::Join(c) | A::JoinOperator::Inner(c) => Some(c),
                    A::JoinOperator::CrossJoin(_) => None,
                    A::JoinOperator::Left(_)
                    | A::JoinOperator::LeftOuter(_)
                    | A::JoinOperator::Right(_)
                    | A::JoinOperator::RightOuter(_)
                    | A::JoinOperator::FullOuter(_) => {
                        return err("outer joins are not supported yet")
                    }
                    _ => return err("this join type is not supported"),
                };
                let left_rels = scope.rels.len();
                let right = self.add_relation(&j.relation, scope)?;
                match constraint {
                    Some(A::JoinConstraint::On(e)) => {
                        let b = self.bind(e, scope, &mut AggScope::Forbidden("JOIN conditions"))?;
                        let p = self.coerce(b, DataType::Bool, |t| {
                            format!(
                                "argument of JOIN/ON must be type boolean, not type {}",
                                t.display_name()
                            )
                        })?;
                        conjuncts(p, preds);
                        star.extend(right);
                    }
                    Some(A::JoinConstraint::Using(names)) => {
                        let mut using_left = Vec::new();
                        let mut using_right = HashSet::new();
                        for n in names {
                            let name = object_name(n)?;
                            // Left side: the visible column of that name among earlier relations.
                            let left_scope_hit = star
                                .iter()
                                .copied()
                                .filter(|&g| {
                                    scope.rel_of(g) < left_rels
                                        && scope.col(g).1 .0 == name
                                        && !scope.hidden.contains(&g)
                                })
                                .collect::<Vec<_>>();
                            let l = match left_scope_hit.as_slice() {
                                [g] => *g,
                                [] => return err(format!("column \"{name}\" specified in USING clause does not exist in left table")),
                                _ => return err(format!("common column name \"{name}\" appears more than once in left table")),
                            };
                            let rhits: Vec<usize> = right
                                .iter()
                                .copied()
                                .filter(|&g| scope.col(g).1 .0 == name)
                                .collect();
                            let r = match rhits.as_slice() {
                                [g] => *g,
                                [] => return err(format!("column \"{name}\" specified in USING clause does not exist in right table")),
                                _ => return err(format!("common column name \"{name}\" appears more than once in right table")),
                            };
                            let lb = B::known(Expr::Column {
                                index: l,
                                ty: scope.col(l).1 .1,
                            });
                            let rb = B::known(Expr::Column {
                                index: r,
                                ty: scope.col(r).1 .1,
                            });
                            let eq = self.binary(lb, &A::BinaryOperator::Eq, rb)?;
                            preds.push(eq.e);
                            using_left.push(l);
                            using_right.insert(r);
                        }
                        for &r in &using_right {
                            scope.hidden.insert(r);
                        }
                        let mut new_star = using_left.clone();
                        new_star.extend(star.iter().copied().filter(|g| !using_left.contains(g)));
                        new_star.extend(right.iter().copied().filter(|g| !using_right.contains(g)));
                        star = new_star;
                    }
                    Some(A::JoinConstraint::Natural) => {
                        return err("NATURAL joins are not supported")
                    }
                    Some(A::JoinConstraint::None) | None => star.extend(right),
                }
            }
            scope.star.extend(star);
        }
        Ok(())
    }

    // ----- SELECT -----

    pub fn bind_query(&self, q: &A::Query) -> Result<BoundQuery> {
        if q.with.is_some() {
            return err("WITH queries are not supported");
        }
        if q.fetch.is_some() || !q.locks.is_empty() {
            return err("FETCH and locking clauses are not supported");
        }
        let (limit, offset) = match &q.limit_clause {
            None => (None, 0),
            Some(A::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return err("LIMIT BY is not supported");
                }
                let l = limit
                    .as_ref()
                    .map(|e| self.const_count(e, "LIMIT"))
                    .transpose()?
                    .flatten();
                let o = offset
                    .as_ref()
                    .map(|o| self.const_count(&o.value, "OFFSET"))
                    .transpose()?
                    .flatten();
                (l, o.unwrap_or(0))
            }
            Some(_) => return err("this LIMIT syntax is not supported"),
        };
        let order: Vec<&A::OrderByExpr> = match &q.order_by {
            None => vec![],
            Some(ob) => match &ob.kind {
                A::OrderByKind::Expressions(v) => v.iter().collect(),
                A::OrderByKind::All(_) => return err("ORDER BY ALL is not supported"),
            },
        };
        match q.body.as_ref() {
            A::SetExpr::Select(s) => self.bind_select(s, &order, limit, offset),
            A::SetExpr::Values(v) => {
                if !order.is_empty() {
                    return err("ORDER BY on VALUES is not supported");
                }
                let bq = self.bind_values(v, None)?;
                Ok(self.wrap_limit(bq, limit, offset))
            }
            A::SetExpr::Query(inner) => {
                if !order.is_empty() || limit.is_some() || offset > 0 {
                    return err("ORDER BY / LIMIT around a parenthesized query is not supported");
                }
                self.bind_query(inner)
            }
            A::SetExpr::SetOperation { .. } => err("UNION, INTERSECT and EXCEPT are not supported"),
            _ => err("this kind of query is not supported"),
        }
    }

    fn const_count(&self, e: &A::Expr, what: &'static str) -> Result<Option<u64>> {
        let b = self.bind(e, &Scope::default(), &mut AggScope::Forbidden(what))?;
        let e = self.coerce(b, DataType::Int8, |t| {
            format!(
                "argument of {what} must be type bigint, not type {}",
                t.display_name()
            )
        })?;
        let v = tusk_exec::scan::eval_constants(std::slice::from_ref(&e))
            .map_err(|x| SqlError::new(x.0))?;
        match v[0] {
            Value::Null => Ok(None),
            Value::Int8(n) if n < 0 => err(format!("{what} must not be negative")),
            Value::Int8(n) => Ok(Some(n as u64)),
            _ => Ok(None),
        }
    }

    fn wrap_limit(&self, mut bq: BoundQuery, limit: Option<u64>, offset: u64) -> BoundQuery {
        if limit.is_some() || offset > 0 {
            let mut est = bq.plan.est;
            if let Some(l) = limit {
                est.rows = est.rows.min(l as f64);
            }
            let out = bq.plan.output.clone();
            let names = bq.plan.names.clone();
            bq.plan = Plan::new(
                NodeKind::Limit { limit, offset },
                vec![bq.plan],
                out,
                names,
                est,
            );
        }
        bq
    }

    /// `VALUES (...), (...)`; with `target`, each column is coerced to that type.
    pub fn bind_values(
        &self,
        v: &A::Values,
        target: Option<&[(String, DataType)]>,
    ) -> Result<BoundQuery> {
        let empty = Scope::default();
        let mut rows: Vec<Vec<B>> = Vec::new();
        for row in &v.rows {
            let r = row
                .iter()
                .map(|e| self.bind(e, &empty, &mut AggScope::Forbidden("VALUES")))
                .collect::<Result<Vec<_>>>()?;
            if let Some(first) = rows.first() {
                if first.len() != r.len() {
                    return err("VALUES lists must all be the same length");
                }
            }
            rows.push(r);
        }
        let ncols = rows.first().map_or(0, |r| r.len());
        let mut types = Vec::with_capacity(ncols);
        for c in 0..ncols {
            let t = match target.and_then(|t| t.get(c)) {
                Some((_, t)) => *t,
                None => {
                    // Resolve like a UNION: the first typed value decides, integers widen.
                    let mut t: Option<DataType> = None;
                    for r in &rows {
                        if !r[c].unknown {
                            let rt = r[c].ty();
                            t = Some(match t {
                                None => rt,
                                Some(x) if x == rt || implicit(rt, x) => x,
                                Some(x) if implicit(x, rt) => rt,
                                Some(x) => {
                                    return err(format!(
                                        "VALUES types {} and {} cannot be matched",
                                        x.display_name(),
                                        rt.display_name()
                                    ))
                                }
                            });
                        }
                    }
                    t.unwrap_or(DataType::Text)
                }
            };
            types.push(t);
        }
        let mut out_rows = Vec::with_capacity(rows.len());
        for r in rows {
            let mut out = Vec::with_capacity(ncols);
            for (c, b) in r.into_iter().enumerate() {
                let t = types[c];
                let name = target.and_then(|tg| tg.get(c)).map(|x| x.0.clone());
                out.push(self.assign(b, t, name.as_deref())?);
            }
            out_rows.push(out);
        }
        let names: Vec<String> = (1..=ncols).map(|i| format!("column{i}")).collect();
        let n = out_rows.len() as f64;
        let plan = Plan::new(
            NodeKind::Values { rows: out_rows },
            vec![],
            types.clone(),
            names.clone(),
            Estimate {
                startup_cost: 0.0,
                total_cost: n * CPU_OPERATOR_COST,
                rows: n,
                width: width_of(&types),
            },
        );
        Ok(BoundQuery {
            plan,
            names,
            unknown: vec![],
        })
    }

    /// Coerces a value for storing into a column of type `to` (assignment rules).
    pub fn assign(&self, b: B, to: DataType, column: Option<&str>) -> Result<Expr> {
        if b.unknown {
            return self.coerce(b, to, |_| String::new());
        }
        let from = b.ty();
        if from == to {
            return Ok(b.e);
        }
        if assignment(from, to) {
            return Ok(Expr::Cast {
                arg: Box::new(b.e),
                to,
            });
        }
        match column {
            Some(c) => err(format!(
                "column \"{c}\" is of type {} but expression is of type {}",
                to.display_name(),
                from.display_name()
            )),
            None => err(format!(
                "VALUES types {} and {} cannot be matched",
                to.display_name(),
                from.display_name()
            )),
        }
    }

    fn bind_select(
        &self,
        s: &A::Select,
        order: &[&A::OrderByExpr],
        limit: Option<u64>,
        offset: u64,
    ) -> Result<BoundQuery> {
        if s.distinct.is_some() {
            return err("SELECT DISTINCT is not supported");
        }
        if s.having.is_some() {
            return err("HAVING is not supported");
        }
        if s.into.is_some() {
            return err("SELECT INTO is not supported; use CREATE TABLE AS");
        }
        let mut scope = Scope::default();
        let mut preds = Vec::new();
        let mut from = s.from.clone();

        // A set-returning function alone in the select list of a FROM-less query
        // (`select generate_series(1, 10)::int i`) is planned as a FROM item.
        let mut projection = s.projection.clone();
        if from.is_empty() {
            if let Some((item_idx, call)) = find_srf(&projection) {
                let A::Expr::Function(f) = &call else {
                    unreachable!()
                };
                let args = match &f.args {
                    A::FunctionArguments::List(l) => l.args.clone(),
                    _ => vec![],
                };
                from.push(A::TableWithJoins {
                    relation: A::TableFactor::Table {
                        name: f.name.clone(),
                        alias: Some(A::TableAlias {
                            explicit: true,
                            name: A::Ident::with_quote('"', "*srf*"),
                            columns: vec![A::TableAliasColumnDef::from_name("generate_series")],
                            at: None,
                        }),
                        args: Some(A::TableFunctionArgs {
                            args,
                            settings: None,
                        }),
                        with_hints: vec![],
                        version: None,
                        with_ordinality: false,
                        partitions: vec![],
                        json_path: None,
                        sample: None,
                        index_hints: vec![],
                    },
                    joins: vec![],
                });
                let colref = A::Expr::CompoundIdentifier(vec![
                    A::Ident::with_quote('"', "*srf*"),
                    A::Ident::with_quote('"', "generate_series"),
                ]);
                replace_srf(&mut projection[item_idx], &colref);
            }
        }
        self.bind_from(&from, &mut scope, &mut preds)?;
        if let Some(w) = &s.selection {
            let b = self.bind(w, &scope, &mut AggScope::Forbidden("WHERE"))?;
            let p = self.coerce(b, DataType::Bool, |t| {
                format!(
                    "argument of WHERE must be type boolean, not type {}",
                    t.display_name()
                )
            })?;
            conjuncts(p, &mut preds);
        }

        // Expand the select list.
        let mut items: Vec<(A::Expr, String)> = Vec::new();
        for item in &projection {
            match item {
                A::SelectItem::UnnamedExpr(e) => items.push((e.clone(), figure_colname(e))),
                A::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((expr.clone(), ident(alias)))
                }
                A::SelectItem::Wildcard(_) => {
                    if scope.rels.is_empty() {
                        return err("SELECT * with no tables specified is not valid");
                    }
                    for &g in &scope.star {
                        let (r, c) = scope.col(g);
                        items.push((column_ref(&r.alias, &c.0), c.0.clone()));
                    }
                }
                A::SelectItem::QualifiedWildcard(kind, _) => {
                    let A::SelectItemQualifiedWildcardKind::ObjectName(n) = kind else {
                        return err("unsupported wildcard");
                    };
                    let q = object_name(n)?;
                    let r = scope.rels.iter().find(|r| r.alias == q).ok_or_else(|| {
                        SqlError::new(format!("missing FROM-clause entry for table \"{q}\""))
                    })?;
                    for c in &r.cols {
                        items.push((column_ref(&r.alias, &c.0), c.0.clone()));
                    }
                }
                _ => return err("unsupported select item"),
            }
        }

        let group_exprs: Vec<A::Expr> = match &s.group_by {
            A::GroupByExpr::Expressions(v, mods) => {
                if !mods.is_empty() {
                    return err("GROUP BY modifiers are not supported");
                }
                v.clone()
            }
            A::GroupByExpr::All(_) => return err("GROUP BY ALL is not supported"),
        };
        let aggregating = !group_exprs.is_empty()
            || items.iter().any(|(e, _)| contains_aggregate(e))
            || order.iter().any(|o| contains_aggregate(&o.expr));

        // Bind GROUP BY (output-column names and positions allowed, as in PostgreSQL).
        let mut state = AggState::default();
        for g in &group_exprs {
            let e = match self.output_ref(g, &items)? {
                Some(i) => &items[i].0,
                None => g,
            };
            let b = self.bind(e, &scope, &mut AggScope::Forbidden("GROUP BY"))?;
            let ge = if b.unknown {
                self.coerce(b, DataType::Text, |_| String::new())?
            } else {
                b.e
            };
            if !state.group.contains(&ge) {
                state.group.push(ge);
            }
        }
        let mut mode = if aggregating {
            AggScope::Collect(state)
        } else {
            AggScope::Forbidden("this context")
        };

        // Select list.
        let mut out_exprs = Vec::new();
        let mut names = Vec::new();
        let mut unknown = Vec::new();
        for (e, name) in &items {
            let b = self.bind(e, &scope, &mut mode)?;
            unknown.push(b.unknown);
            let mut bound = if b.unknown {
                self.coerce(b, DataType::Text, |_| String::new())?
            } else {
                b.e
            };
            // A bare character(n) column is output with its padding.
            if matches!(e, A::Expr::Identifier(_) | A::Expr::CompoundIdentifier(_)) {
                if let Expr::BpcharToText(inner) = bound {
                    bound = *inner;
                }
            }
            out_exprs.push(bound);
            names.push(name.clone());
        }
        let visible = out_exprs.len();

        // ORDER BY: output position, output name, or an expression (added as a hidden column).
        let mut sort_keys = Vec::new();
        for o in order {
            let idx = match self.output_ref(&o.expr, &items)? {
                Some(i) => i,
                None => {
                    let b = self.bind(&o.expr, &scope, &mut mode)?;
                    let e = if b.unknown {
                        self.coerce(b, DataType::Text, |_| String::new())?
                    } else {
                        b.e
                    };
                    match out_exprs.iter().position(|x| *x == e) {
                        Some(i) => i,
                        None => {
                            out_exprs.push(e);
                            names.push(o.expr.to_string());
                            out_exprs.len() - 1
                        }
                    }
                }
            };
            let desc = matches!(o.options.sort, Some(A::OrderBySort::Desc));
            let nulls_first = o.options.nulls_first.unwrap_or(desc);
            let ty = out_exprs[idx].data_type();
            sort_keys.push(SortKey {
                expr: Expr::Column { index: idx, ty },
                desc,
                nulls_first,
            });
        }

        // Which global columns are needed above the scans.
        let agg_state = match mode {
            AggScope::Collect(s) => Some(s),
            _ => None,
        };
        let mut needed: Vec<usize> = Vec::new();
        match &agg_state {
            Some(st) => {
                for g in &st.group {
                    g.columns(&mut needed);
                }
                for c in &st.calls {
                    if let Some(a) = &c.arg {
                        a.columns(&mut needed);
                    }
                }
            }
            None => {
                for e in &out_exprs {
                    e.columns(&mut needed);
                }
            }
        }
        let mut needed_set: HashSet<usize> = needed.into_iter().collect();

        let mut plan_part = self.plan_from(&scope, preds, &needed_set)?;
        needed_set.clear();

        // Aggregation.
        let mut input_names = plan_part.plan.names.clone();
        if let Some(st) = agg_state {
            let pos = plan_part.pos();
            let group: Vec<Expr> = st.group.iter().map(|g| remap(g, &pos)).collect();
            let calls: Vec<AggCall> = st
                .calls
                .iter()
                .map(|c| AggCall {
                    func: c.func,
                    arg: c.arg.as_ref().map(|a| remap(a, &pos)),
                    result: c.result,
                })
                .collect();
            let mut types: Vec<DataType> = group.iter().map(|g| g.data_type()).collect();
            types.extend(calls.iter().map(|c| c.result));
            let mut agg_names: Vec<String> = group
                .iter()
                .map(|g| crate::explain::deparse(g, &input_names))
                .collect();
            agg_names.extend(calls.iter().map(|c| {
                let arg = c
                    .arg
                    .as_ref()
                    .map(|a| crate::explain::deparse(a, &input_names))
                    .unwrap_or_else(|| "*".into());
                format!("{}({arg})", c.func.name())
            }));
            let child = &plan_part.plan.est;
            let ngroups = if group.is_empty() {
                1.0
            } else {
                (child.rows / 10.0).clamp(1.0, 200.0)
            };
            let cost = child.total_cost
                + child.rows * CPU_OPERATOR_COST * (calls.len().max(1) + group.len()) as f64;
            let est = Estimate {
                startup_cost: cost,
                total_cost: cost + ngroups * CPU_TUPLE_COST,
                rows: ngroups,
                width: width_of(&types),
            };
            let plan = if self.parallel_safe(&plan_part.plan, Some(&st)) {
                // Partial Aggregate under a Gather, Finalize Aggregate above it.
                let mut tree = plan_part.plan;
                Self::make_parallel(&mut tree);
                let ng = group.len();
                let final_aggs: Vec<AggCall> = calls
                    .iter()
                    .enumerate()
                    .map(|(j, c)| {
                        let partial = Expr::Column {
                            index: ng + j,
                            ty: c.result,
                        };
                        let func = match c.func {
                            AggFunc::CountStar | AggFunc::Count | AggFunc::SumInt8 => {
                                AggFunc::SumInt8
                            }
                            AggFunc::Sum if c.result == DataType::Int8 => AggFunc::SumInt8,
                            f => f,
                        };
                        AggCall {
                            func,
                            arg: Some(partial),
                            result: c.result,
                        }
                    })
                    .collect();
                let final_group: Vec<Expr> = group
                    .iter()
                    .enumerate()
                    .map(|(i, g)| Expr::Column {
                        index: i,
                        ty: g.data_type(),
                    })
                    .collect();
                let partial = Plan::new(
                    NodeKind::Aggregate {
                        group,
                        aggs: calls,
                        mode: AggMode::Partial,
                    },
                    vec![tree],
                    types.clone(),
                    agg_names.clone(),
                    est,
                );
                let gathered = self.gather(partial);
                Plan::new(
                    NodeKind::Aggregate {
                        group: final_group,
                        aggs: final_aggs,
                        mode: AggMode::Finalize,
                    },
                    vec![gathered],
                    types,
                    agg_names.clone(),
                    est,
                )
            } else {
                Plan::new(
                    NodeKind::Aggregate {
                        group,
                        aggs: calls,
                        mode: AggMode::Simple,
                    },
                    vec![plan_part.plan],
                    types,
                    agg_names.clone(),
                    est,
                )
            };
            input_names = agg_names;
            plan_part = Part {
                plan,
                cols: vec![],
                rels: HashSet::new(),
            };
            // Post-aggregate expressions already index the aggregate's output.
            plan_part.cols.clear();
        }
        let pos = (!plan_part.cols.is_empty()).then(|| plan_part.pos());
        if !plan_part.cols.is_empty() && self.parallel_safe(&plan_part.plan, None) {
            let mut tree = plan_part.plan;
            Self::make_parallel(&mut tree);
            plan_part.plan = self.gather(tree);
        }
        let mut bq = self.finish_select(
            plan_part.plan,
            out_exprs,
            names,
            visible,
            sort_keys,
            input_names,
            limit,
            offset,
            pos.as_ref(),
        )?;
        bq.unknown = unknown;
        Ok(bq)
    }

    /// ORDER BY / GROUP BY item that names an output column (by position or alias).
    fn output_ref(&self, e: &A::Expr, items: &[(A::Expr, String)]) -> Result<Option<usize>> {
        match e {
            A::Expr::Value(v) => {
                if let A::Value::Number(n, _) = &v.value {
                    let i: usize = n.parse().unwrap_or(0);
                    if i == 0 || i > items.len() {
                        return err(format!("ORDER BY position {n} is not in select list"));
                    }
                    return Ok(Some(i - 1));
                }
                Ok(None)
            }
            A::Expr::Identifier(id) => {
                let name = ident(id);
                let hits: Vec<usize> = items
                    .iter()
                    .enumerate()
                    .filter(|(_, (x, n))| {
                        *n == name
                            && !matches!(x, A::Expr::Identifier(_) | A::Expr::CompoundIdentifier(_))
                    })
                    .map(|(i, _)| i)
                    .collect();
                Ok(hits.first().copied())
            }
            _ => Ok(None),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_select(
        &self,
        input: Plan,
        mut out_exprs: Vec<Expr>,
        mut names: Vec<String>,
        visible: usize,
        sort_keys: Vec<SortKey>,
        input_names: Vec<String>,
        limit: Option<u64>,
        offset: u64,
        pos: Option<&HashMap<usize, usize>>,
    ) -> Result<BoundQuery> {
        if let Some(pos) = pos {
            out_exprs = out_exprs.iter().map(|e| remap(e, pos)).collect();
        }
        let types: Vec<DataType> = out_exprs.iter().map(|e| e.data_type()).collect();
        let identity = out_exprs.len() == input.output.len()
            && out_exprs
                .iter()
                .enumerate()
                .all(|(i, e)| matches!(e, Expr::Column { index, .. } if *index == i));
        let display: Vec<String> = out_exprs
            .iter()
            .map(|e| crate::explain::deparse(e, &input_names))
            .collect();
        let mut plan = if identity {
            let mut p = input;
            p.names = display;
            p
        } else {
            let est = Estimate {
                total_cost: input.est.total_cost
                    + input.est.rows * CPU_OPERATOR_COST * out_exprs.len() as f64 * 0.0,
                width: width_of(&types),
                ..input.est
            };
            Plan::new(
                NodeKind::Project { exprs: out_exprs },
                vec![input],
                types.clone(),
                display,
                est,
            )
        };
        if !sort_keys.is_empty() {
            let n = plan.est.rows.max(1.0);
            let cost = plan.est.total_cost + 2.0 * CPU_OPERATOR_COST * n * n.log2().max(1.0);
            let est = Estimate {
                startup_cost: cost,
                total_cost: cost + n * CPU_OPERATOR_COST,
                ..plan.est
            };
            let out = plan.output.clone();
            let nm = plan.names.clone();
            plan = Plan::new(NodeKind::Sort { keys: sort_keys }, vec![plan], out, nm, est);
        }
        let mut bq = BoundQuery {
            unknown: vec![],
            plan,
            names: vec![],
        };
        bq = self.wrap_limit(bq, limit, offset);
        if bq.plan.output.len() > visible {
            let keep: Vec<Expr> = (0..visible)
                .map(|i| Expr::Column {
                    index: i,
                    ty: bq.plan.output[i],
                })
                .collect();
            let out = bq.plan.output[..visible].to_vec();
            let nm = bq.plan.names[..visible].to_vec();
            let est = bq.plan.est;
            bq.plan = Plan::new(
                NodeKind::Project { exprs: keep },
                vec![bq.plan],
                out,
                nm,
                est,
            );
        }
        names.truncate(visible);
        bq.names = names;
        Ok(bq)
    }

    /// Plans scans and joins for the FROM clause with the given predicates.
    fn plan_from(
        &self,
        scope: &Scope,
        preds: Vec<Expr>,
        needed_above: &HashSet<usize>,
    ) -> Result<Part> {
        if scope.rels.is_empty() {
            // SELECT without FROM: one empty row, filtered by any WHERE.
            let mut plan = Plan::new(
                NodeKind::Values { rows: vec![vec![]] },
                vec![],
                vec![],
                vec![],
                Estimate {
                    startup_cost: 0.0,
                    total_cost: 0.01,
                    rows: 1.0,
                    width: 0,
                },
            );
            if let Some(p) = and_all(preds) {
                plan = Plan::new(
                    NodeKind::Filter { predicate: p },
                    vec![plan],
                    vec![],
                    vec![],
                    Estimate {
                        startup_cost: 0.0,
                        total_cost: 0.01,
                        rows: 1.0,
                        width: 0,
                    },
                );
            }
            return Ok(Part {
                plan,
                cols: vec![],
                rels: HashSet::new(),
            });
        }
        // Columns each relation must produce: needed above, or by a predicate
        // that spans relations (join keys and join filters).
        let mut pred_rels: Vec<HashSet<usize>> = Vec::new();
        for p in &preds {
            pred_rels.push(cols_of(p).iter().map(|&g| scope.rel_of(g)).collect());
        }
        let mut needed: HashSet<usize> = needed_above.clone();
        for (p, rels) in preds.iter().zip(&pred_rels) {
            if rels.len() != 1 {
                needed.extend(cols_of(p));
            }
        }
        // Scans with their single-relation predicates.
        let mut parts: Vec<Option<Part>> = Vec::new();
        let mut used = vec![false; preds.len()];
        for (ri, rel) in scope.rels.iter().enumerate() {
            let mut mine = Vec::new();
            for (pi, rels) in pred_rels.iter().enumerate() {
                if rels.len() == 1 && rels.contains(&ri) {
                    mine.push(preds[pi].clone());
                    used[pi] = true;
                }
            }
            // Filter columns must be scanned too.
            let mut cols: Vec<usize> = (rel.base..rel.base + rel.cols.len())
                .filter(|g| needed.contains(g) || mine.iter().any(|p| cols_of(p).contains(g)))
                .collect();
            if let RelSource::Series { .. } = rel.source {
                cols = vec![rel.base];
            }
            parts.push(Some(self.scan(scope, ri, cols, mine)?));
        }
        // Predicates over no relation (constants) filter the first scan.
        for (pi, rels) in pred_rels.iter().enumerate() {
            if rels.is_empty() {
                used[pi] = true;
                let p = parts[0].take().unwrap();
                let pos = p.pos();
                let pred = remap(&preds[pi], &pos);
                let est = p.plan.est;
                let out = p.plan.output.clone();
                let nm = p.plan.names.clone();
                parts[0] = Some(Part {
                    plan: Plan::new(
                        NodeKind::Filter { predicate: pred },
                        vec![p.plan],
                        out,
                        nm,
                        est,
                    ),
                    cols: p.cols,
                    rels: p.rels,
                });
            }
        }
        // Join left to right, preferring relations connected by an equality.
        let mut current = parts[0].take().unwrap();
        let mut remaining: Vec<usize> = (1..parts.len()).collect();
        while !remaining.is_empty() {
            let pick = remaining
                .iter()
                .position(|&ri| {
                    preds
                        .iter()
                        .zip(&pred_rels)
                        .zip(&used)
                        .any(|((p, rels), u)| {
                            !u && rels.contains(&ri)
                                && rels.iter().all(|r| *r == ri || current.rels.contains(r))
                                && is_equi(p)
                        })
                })
                .unwrap_or(0);
            let ri = remaining.remove(pick);
            let right = parts[ri].take().unwrap();
            // Predicates that become evaluable at this join.
            let mut joined_rels = current.rels.clone();
            joined_rels.extend(right.rels.iter().copied());
            let mut keys_l = Vec::new();
            let mut keys_r = Vec::new();
            let mut residual = Vec::new();
            for (pi, p) in preds.iter().enumerate() {
                if used[pi] || !pred_rels[pi].iter().all(|r| joined_rels.contains(r)) {
                    continue;
                }
                used[pi] = true;
                if let Expr::Cmp {
                    op: CmpOp::Eq,
                    left,
                    right: r,
                } = p
                {
                    let lrels: HashSet<usize> =
                        cols_of(left).iter().map(|&g| scope.rel_of(g)).collect();
                    let rrels: HashSet<usize> =
                        cols_of(r).iter().map(|&g| scope.rel_of(g)).collect();
                    if !lrels.is_empty() && !rrels.is_empty() {
                        if lrels.is_subset(&current.rels) && rrels.is_subset(&right.rels) {
                            keys_l.push((**left).clone());
                            keys_r.push((**r).clone());
                            continue;
                        }
                        if rrels.is_subset(&current.rels) && lrels.is_subset(&right.rels) {
                            keys_l.push((**r).clone());
                            keys_r.push((**left).clone());
                            continue;
                        }
                    }
                }
                residual.push(p.clone());
            }
            // Columns the join must output: those needed above or by later predicates.
            let later: HashSet<usize> = preds
                .iter()
                .enumerate()
                .filter(|(pi, _)| !used[*pi])
                .flat_map(|(_, p)| cols_of(p))
                .collect();
            let keep = |g: &usize| needed_above.contains(g) || later.contains(g);
            current = self.hash_join(current, right, keys_l, keys_r, residual, &keep)?;
        }
        Ok(current)
    }

    fn scan(&self, scope: &Scope, ri: usize, cols: Vec<usize>, filters: Vec<Expr>) -> Result<Part> {
        let rel = &scope.rels[ri];
        let pos: HashMap<usize, usize> = cols.iter().enumerate().map(|(i, &g)| (g, i)).collect();
        let names: Vec<String> = cols.iter().map(|&g| scope.qualified_name(g)).collect();
        let types: Vec<DataType> = cols.iter().map(|&g| scope.col(g).1 .1).collect();
        let filter = and_all(filters.iter().map(|f| remap(f, &pos)).collect());
        let sel: f64 = filters.iter().map(selectivity).product();
        let rows = (rel.est_rows * sel).max(1.0).round();
        let qual_cost = filters.len() as f64 * CPU_OPERATOR_COST * rel.est_rows;
        if let RelSource::Table(t) = &rel.source {
            let seq_cost = rel.pages + rel.est_rows * CPU_TUPLE_COST + qual_cost;
            if let Some(plan) = self.index_scan(scope, ri, t, &cols, &filters, seq_cost) {
                return Ok(Part {
                    plan,
                    cols,
                    rels: std::iter::once(ri).collect(),
                });
            }
        }
        let disabled = if self.enable_seqscan {
            0.0
        } else {
            DISABLE_COST
        };
        let (kind, est) = match &rel.source {
            RelSource::Table(t) => (
                NodeKind::SeqScan {
                    table: t.name.clone(),
                    alias: rel.alias.clone(),
                    oid: t.oid,
                    table_types: t.column_types(),
                    columns: cols.iter().map(|g| g - rel.base).collect(),
                    with_tid: false,
                    filter,
                    parallel: false,
                },
                Estimate {
                    startup_cost: disabled,
                    total_cost: disabled + rel.pages + rel.est_rows * CPU_TUPLE_COST + qual_cost,
                    rows,
                    width: width_of(&types),
                },
            ),
            RelSource::Series { args, ty } => (
                NodeKind::FunctionScan {
                    alias: if rel.alias.starts_with('*') {
                        String::new()
                    } else {
                        rel.alias.clone()
                    },
                    args: args.clone(),
                    ty: *ty,
                    filter,
                },
                Estimate {
                    startup_cost: 0.0,
                    total_cost: rel.est_rows * CPU_TUPLE_COST + qual_cost,
                    rows,
                    width: width_of(&types),
                },
            ),
        };
        let _ = &rel.relname;
        Ok(Part {
            plan: Plan::new(kind, vec![], types, names, est),
            cols,
            rels: std::iter::once(ri).collect(),
        })
    }

    /// The cheapest index scan of table `t` (relation `ri` of `scope`) for
    /// `filters`, if one beats a sequential scan costing `seq_cost` (or
    /// sequential scans are disabled). Index conditions are conjuncts
    /// `column op constant` (`=`, `<`, `<=`, `>`, `>=`; BETWEEN arrives as
    /// two of them) on an indexed integer column; the rest stays a filter.
    fn index_scan(
        &self,
        scope: &Scope,
        ri: usize,
        t: &TableDef,
        cols: &[usize],
        filters: &[Expr],
        seq_cost: f64,
    ) -> Option<Plan> {
        let rel = &scope.rels[ri];
        let mut best: Option<(f64, Plan)> = None;
        for index in self.catalog.indexes_of(t.oid) {
            let g = rel.base + index.leading_column();
            let (mut lo, mut hi) = (i64::MIN as i128, i64::MAX as i128);
            let key_ty = scope.col(g).1 .1;
            // Index conditions as EXPLAIN shows them: column first, the
            // constant as a plain literal (PostgreSQL's cross-type operators).
            let (mut used, mut rest) = (Vec::new(), Vec::new());
            let (mut eq, mut lower, mut upper) = (false, false, false);
            for f in filters {
                match index_condition(f, g) {
                    Some((op, v)) => {
                        let v = v as i128;
                        match op {
                            CmpOp::Eq => {
                                lo = lo.max(v);
                                hi = hi.min(v);
                                eq = true;
                            }
                            CmpOp::Lt => (hi, upper) = (hi.min(v - 1), true),
                            CmpOp::Le => (hi, upper) = (hi.min(v), true),
                            CmpOp::Gt => (lo, lower) = (lo.max(v + 1), true),
                            CmpOp::Ge => (lo, lower) = (lo.max(v), true),
                            CmpOp::Ne => unreachable!("not an index condition"),
                        }
                        used.push(Expr::Cmp {
                            op,
                            left: Box::new(Expr::Column {
                                index: 0,
                                ty: key_ty,
                            }),
                            right: Box::new(Expr::Const {
                                value: Value::Int8(v as i64),
                                ty: DataType::Int8,
                            }),
                        });
                    }
                    None => rest.push(f.clone()),
                }
            }
            if used.is_empty() {
                continue;
            }
            // PostgreSQL's default selectivities: equality 0.005, a range
            // closed on both sides 0.005, an open range a third.
            let sel = if eq || (lower && upper) {
                0.005
            } else {
                0.3333
            };
            let tuples = rel.est_rows.max(1.0);
            let rows = (tuples * sel).max(1.0);
            // Pages per level as a bulk build leaves them (90 % full leaves,
            // 70 % full internal pages); `height` counts the levels above.
            let leaf_pages = (tuples / tusk_storage::btree::LEAF_CAPACITY as f64 / 0.9).ceil();
            let (mut level_pages, mut height) = (leaf_pages, 0.0);
            while level_pages > 1.0 {
                level_pages =
                    (level_pages / (tusk_storage::btree::INTERNAL_CAPACITY as f64 * 0.7)).ceil();
                height += 1.0;
            }
            let disabled = if self.enable_indexscan {
                0.0
            } else {
                DISABLE_COST
            };
            // Descent (as PostgreSQL's btcostestimate), leaf pages, heap
            // pages. Without statistics the heap is assumed to be in key
            // order (as a table loaded in order is: PostgreSQL's
            // correlation 1), so the rows of a range share pages.
            let startup = disabled
                + tuples.log2().ceil() * CPU_OPERATOR_COST
                + (height + 1.0) * 50.0 * CPU_OPERATOR_COST;
            let total = startup
                + RANDOM_PAGE_COST * (sel * leaf_pages).ceil()
                + rows * (CPU_INDEX_TUPLE_COST + CPU_OPERATOR_COST * used.len() as f64)
                + RANDOM_PAGE_COST * (sel * rel.pages).ceil().max(1.0)
                + rows * CPU_TUPLE_COST
                + rows * CPU_OPERATOR_COST * rest.len() as f64;
            if best.as_ref().is_some_and(|(c, _)| *c <= total) {
                continue;
            }
            let pos: HashMap<usize, usize> =
                cols.iter().enumerate().map(|(i, &g)| (g, i)).collect();
            let names: Vec<String> = cols.iter().map(|&g| scope.qualified_name(g)).collect();
            let types: Vec<DataType> = cols.iter().map(|&g| scope.col(g).1 .1).collect();
            let cond_names = [scope.col(g).1 .0.clone()];
            let cond = and_all(used.clone()).expect("at least one condition");
            let bound =
                |v: i128| Bound::Included(v.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
            let (lo, hi) = if lo > hi {
                // Contradictory conditions: an empty range.
                (Bound::Included(1), Bound::Included(0))
            } else {
                (bound(lo), bound(hi))
            };
            let out_rows = (tuples * sel * rest.iter().map(selectivity).product::<f64>())
                .max(1.0)
                .round();
            let plan = Plan::new(
                NodeKind::IndexScan {
                    table: t.name.clone(),
                    alias: rel.alias.clone(),
                    oid: t.oid,
                    index: index.name.clone(),
                    index_oid: index.oid,
                    table_types: t.column_types(),
                    columns: cols.iter().map(|g| g - rel.base).collect(),
                    with_tid: false,
                    lo,
                    hi,
                    index_cond: crate::explain::deparse(&cond, &cond_names),
                    filter: and_all(rest.iter().map(|f| remap(f, &pos)).collect()),
                },
                vec![],
                types.clone(),
                names,
                Estimate {
                    startup_cost: startup,
                    total_cost: total,
                    rows: out_rows,
                    width: width_of(&types),
                },
            );
            best = Some((total, plan));
        }
        let (cost, plan) = best?;
        let seq_cost = seq_cost
            + if self.enable_seqscan {
                0.0
            } else {
                DISABLE_COST
            };
        (cost < seq_cost).then_some(plan)
    }

    fn hash_join(
        &self,
        left: Part,
        right: Part,
        keys_l: Vec<Expr>,
        keys_r: Vec<Expr>,
        residual: Vec<Expr>,
        keep: &dyn Fn(&usize) -> bool,
    ) -> Result<Part> {
        // Hash the smaller side, as PostgreSQL does (ties: hash the right one).
        let (outer, inner, okeys, ikeys) = if right.plan.est.rows <= left.plan.est.rows {
            (left, right, keys_l, keys_r)
        } else {
            (right, left, keys_r, keys_l)
        };
        let opos = outer.pos();
        let ipos = inner.pos();
        let outer_keys: Vec<Expr> = okeys.iter().map(|k| remap(k, &opos)).collect();
        let inner_keys: Vec<Expr> = ikeys.iter().map(|k| remap(k, &ipos)).collect();
        // Residual filter over (outer columns ++ inner columns).
        let mut both = opos.clone();
        for (g, i) in &ipos {
            both.insert(*g, outer.cols.len() + i);
        }
        let join_filter = and_all(residual.iter().map(|r| remap(r, &both)).collect());
        let outer_out: Vec<usize> = (0..outer.cols.len())
            .filter(|&i| keep(&outer.cols[i]))
            .collect();
        let inner_out: Vec<usize> = (0..inner.cols.len())
            .filter(|&i| keep(&inner.cols[i]))
            .collect();
        let mut cols: Vec<usize> = outer_out.iter().map(|&i| outer.cols[i]).collect();
        cols.extend(inner_out.iter().map(|&i| inner.cols[i]));
        let mut types: Vec<DataType> = outer_out.iter().map(|&i| outer.plan.output[i]).collect();
        types.extend(inner_out.iter().map(|&i| inner.plan.output[i]));
        let mut names: Vec<String> = outer_out
            .iter()
            .map(|&i| outer.plan.names[i].clone())
            .collect();
        names.extend(inner_out.iter().map(|&i| inner.plan.names[i].clone()));
        let (o, i) = (outer.plan.est, inner.plan.est);
        let rows = if outer_keys.is_empty() {
            o.rows * i.rows
        } else {
            o.rows.max(i.rows)
        };
        let rows = if join_filter.is_some() {
            (rows * 0.3333).max(1.0)
        } else {
            rows
        }
        .round();
        let hash_est = Estimate {
            startup_cost: i.total_cost,
            total_cost: i.total_cost,
            rows: i.rows,
            width: i.width,
        };
        let startup = i.total_cost + i.rows * (CPU_OPERATOR_COST + CPU_TUPLE_COST);
        let total = startup + o.total_cost + o.rows * CPU_OPERATOR_COST + rows * CPU_TUPLE_COST;
        let inner_types = inner.plan.output.clone();
        let inner_names = inner.plan.names.clone();
        let hash = Plan::new(
            NodeKind::Hash,
            vec![inner.plan],
            inner_types,
            inner_names,
            hash_est,
        );
        let mut rels = outer.rels.clone();
        rels.extend(inner.rels.iter().copied());
        let plan = Plan::new(
            NodeKind::HashJoin {
                outer_keys,
                inner_keys,
                outer_out,
                inner_out,
                join_filter,
                parallel: false,
            },
            vec![outer.plan, hash],
            types.clone(),
            names,
            Estimate {
                startup_cost: startup,
                total_cost: total,
                rows,
                width: width_of(&types),
            },
        );
        Ok(Part { plan, cols, rels })
    }

    /// Plan for `DELETE FROM table [WHERE ...]`: a scan that also emits TIDs.
    pub fn bind_delete(
        &self,
        table: &A::TableFactor,
        selection: Option<&A::Expr>,
    ) -> Result<(TableDef, Plan)> {
        let mut scope = Scope::default();
        self.add_relation(table, &mut scope)?;
        let RelSource::Table(t) = &scope.rels[0].source else {
            return err("cannot delete from a function");
        };
        let t = t.clone();
        let mut preds = Vec::new();
        if let Some(w) = selection {
            let b = self.bind(w, &scope, &mut AggScope::Forbidden("WHERE"))?;
            let p = self.coerce(b, DataType::Bool, |ty| {
                format!(
                    "argument of WHERE must be type boolean, not type {}",
                    ty.display_name()
                )
            })?;
            conjuncts(p, &mut preds);
        }
        let mut needed = Vec::new();
        for p in &preds {
            p.columns(&mut needed);
        }
        needed.sort_unstable();
        needed.dedup();
        let part = self.scan(&scope, 0, needed, preds)?;
        let mut plan = part.plan;
        if let NodeKind::SeqScan { with_tid, .. } | NodeKind::IndexScan { with_tid, .. } =
            &mut plan.kind
        {
            *with_tid = true;
        }
        plan.output.push(DataType::Int8);
        plan.names.push("ctid".into());
        Ok((t, plan))
    }
}

/// `(op, value)` if `f` compares global column `g` (an integer column)
/// with an integer constant: `g op v` or `v op g` (turned around).
fn index_condition(f: &Expr, g: usize) -> Option<(CmpOp, i64)> {
    let Expr::Cmp { op, left, right } = f else {
        return None;
    };
    let constant = |e: &Expr| -> Option<i64> {
        let e = match e {
            Expr::Cast {
                arg,
                to: DataType::Int4 | DataType::Int8,
            } => arg.as_ref(),
            e => e,
        };
        match e {
            Expr::Const {
                value: Value::Int4(v),
                ..
            } => Some(*v as i64),
            Expr::Const {
                value: Value::Int8(v),
                ..
            } => Some(*v),
            _ => None,
        }
    };
    let is_col = |e: &Expr| matches!(e, Expr::Column { index, ty: DataType::Int4 | DataType::Int8 } if *index == g);
    let (op, v) = if is_col(left) {
        (*op, constant(right)?)
    } else if is_col(right) {
        let flipped = match op {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => *o,
        };
        (flipped, constant(left)?)
    } else {
        return None;
    };
    (op != CmpOp::Ne).then_some((op, v))
}

fn negate_if(e: Expr, negated: bool) -> Expr {
    if negated {
        Expr::Not(Box::new(e))
    } else {
        e
    }
}

fn is_equi(p: &Expr) -> bool {
    matches!(p, Expr::Cmp { op: CmpOp::Eq, .. })
}

fn series_rows(args: &[Expr]) -> Option<f64> {
    let v = tusk_exec::scan::eval_constants(args).ok()?;
    let n = |x: &Value| match x {
        Value::Int4(i) => Some(*i as f64),
        Value::Int8(i) => Some(*i as f64),
        _ => None,
    };
    let (a, b) = (n(&v[0])?, n(&v[1])?);
    let step = v.get(2).map(n).unwrap_or(Some(1.0))?;
    if step == 0.0 {
        return None;
    }
    Some(((b - a) / step + 1.0).floor().max(0.0))
}

fn column_ref(rel: &str, col: &str) -> A::Expr {
    A::Expr::CompoundIdentifier(vec![
        A::Ident::with_quote('"', rel),
        A::Ident::with_quote('"', col),
    ])
}

/// The output column name PostgreSQL would give an expression (FigureColname).
pub fn figure_colname(e: &A::Expr) -> String {
    fn figure(e: &A::Expr) -> Option<String> {
        match e {
            A::Expr::Identifier(i) => Some(ident(i)),
            A::Expr::CompoundIdentifier(v) => v.last().map(ident),
            A::Expr::Function(f) => f.name.0.last().and_then(|p| match p {
                A::ObjectNamePart::Identifier(i) => Some(ident(i)),
                _ => None,
            }),
            A::Expr::Nested(x) => figure(x),
            A::Expr::Cast {
                expr, data_type, ..
            } => figure(expr).or_else(|| {
                sql_type(data_type).ok().map(|t| match t {
                    SqlType::Varchar(_) => "varchar".to_string(),
                    SqlType::Char(_) => "bpchar".to_string(),
                    t => type_colname(t.data_type()).to_string(),
                })
            }),
            A::Expr::Value(v) if matches!(v.value, A::Value::Boolean(_)) => Some("bool".into()),
            _ => None,
        }
    }
    figure(e).unwrap_or_else(|| "?column?".into())
}

fn is_srf(e: &A::Expr) -> bool {
    matches!(e, A::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("generate_series"))
}

/// Finds `generate_series(...)` in a select list, directly or under casts/parens.
fn find_srf(items: &[A::SelectItem]) -> Option<(usize, A::Expr)> {
    fn walk(e: &A::Expr) -> Option<A::Expr> {
        if is_srf(e) {
            return Some(e.clone());
        }
        match e {
            A::Expr::Cast { expr, .. } | A::Expr::Nested(expr) => walk(expr),
            _ => None,
        }
    }
    for (i, it) in items.iter().enumerate() {
        let e = match it {
            A::SelectItem::UnnamedExpr(e) | A::SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        if let Some(f) = walk(e) {
            return Some((i, f));
        }
    }
    None
}

fn replace_srf(item: &mut A::SelectItem, with: &A::Expr) {
    fn walk(e: &mut A::Expr, with: &A::Expr) {
        if is_srf(e) {
            *e = with.clone();
            return;
        }
        match e {
            A::Expr::Cast { expr, .. } | A::Expr::Nested(expr) => walk(expr, with),
            _ => {}
        }
    }
    match item {
        // Keep PostgreSQL's column name for the unaliased case.
        A::SelectItem::UnnamedExpr(e) => {
            let name = figure_colname(e);
            let mut e2 = e.clone();
            walk(&mut e2, with);
            *item = A::SelectItem::ExprWithAlias {
                expr: e2,
                alias: A::Ident::with_quote('"', name),
            };
        }
        A::SelectItem::ExprWithAlias { expr, .. } => walk(expr, with),
        _ => {}
    }
}
