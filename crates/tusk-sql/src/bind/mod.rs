//! Binding: from sqlparser's AST to a typed [`Logical`] plan.
//!
//! The binder resolves every name (relations against the catalog, columns
//! against the scopes of the query and of the queries around it) and gives
//! every expression a type, inserting casts where PostgreSQL would. It never
//! plans: it builds the logical tree in the order SQL defines a SELECT's
//! meaning (FROM, WHERE, GROUP BY, aggregates, HAVING, window functions, the
//! select list, DISTINCT, ORDER BY, LIMIT) and leaves every choice of
//! algorithm and order to the rewrite passes and the physical planner.
//!
//! ## Scopes and correlation
//!
//! Each query level pushes a [`QueryScope`] holding the relations of its
//! FROM clause. A column name is looked up in the innermost scope first,
//! then outward; a hit in an outer scope is an *outer reference*, and the
//! subquery it appears in becomes correlated simply because its expressions
//! mention a [`ColumnId`] its own relations do not produce (see
//! [`Logical::free_columns`]).
//!
//! ## Subqueries in expressions
//!
//! A subquery inside an expression is bound to its own logical plan and
//! replaced by a reference to a fresh column; the clause that contains it
//! collects a [`PendingApply`], and the caller wraps the clause's input in
//! an `Apply` node that produces that column for each row. The decorrelation
//! pass later turns most `Apply` nodes into joins.
//!
//! ## Untyped literals and parameters
//!
//! A string literal or NULL has no type until its context gives one, as in
//! PostgreSQL (`unknown`): [`B::unknown`] marks it, and [`Binder::coerce`]
//! converts it to the type the context asks for. A `$n` parameter whose
//! type the client left open is untyped the same way, and the first context
//! that converts it fixes its type for the whole statement (the other
//! operand of an operator, the target column of INSERT or UPDATE, a cast:
//! PostgreSQL's `variable_coerce_param_hook`); [`Binder::params`] records
//! it, so that later uses of the same parameter see the type.

mod arrays;
mod between;
mod conflict;
mod datetime;
mod dml;
mod expr;
mod forms;
mod from;
mod func;
mod fuzzy;
mod grouping;
mod named_windows;
mod operators;
mod ordered_set;
mod query;
mod references;
mod row;
mod select;
mod srf;
mod stored;
mod table_func;

pub use datetime::interval_value;
pub(crate) use expr::literal_value;
pub(crate) use srf::is_sets_alias;
pub use stored::parse_expr;

use crate::error::{sqlstate, SqlError};
use crate::logical::{ColumnId, Columns, CteDef, Logical, SubqueryKind};
use tusk_exec::{Expr, Value};
use tusk_storage::{Catalog, DataType, SqlType};

pub(crate) use cast as cast_expr;
pub(crate) use dml::is_default_keyword;
pub use dml::{BoundChange, Returning};
pub use query::BoundQuery;
pub use references::{ColumnRef, References, RelationRef, StarRef};

pub(crate) type Result<T> = std::result::Result<T, SqlError>;

/// Deepest nesting of expressions and subqueries the binder follows before
/// it reports `stack depth limit exceeded`, as PostgreSQL does past
/// `max_stack_depth`. Left-deep chains of AND, OR and arithmetic are bound
/// iteratively and do not count against it.
pub const MAX_NESTING: usize = 1000;

pub(crate) fn err<T>(code: &'static str, msg: impl Into<String>) -> Result<T> {
    Err(SqlError::coded(code, msg))
}

/// A bound expression; `unknown` marks an untyped literal (a string or
/// NULL) whose type is still to be decided by its context.
#[derive(Debug, Clone)]
pub struct B {
    pub e: Expr,
    pub unknown: bool,
}

impl B {
    pub fn known(e: Expr) -> B {
        B { e, unknown: false }
    }

    pub fn ty(&self) -> DataType {
        self.e.data_type()
    }

    /// The type name PostgreSQL shows in messages (`unknown` for literals).
    pub fn type_name(&self) -> &'static str {
        if self.unknown {
            "unknown"
        } else {
            self.ty().display_name()
        }
    }
}

/// One relation visible in a FROM clause.
#[derive(Debug, Clone)]
pub(crate) struct ScopeRel {
    /// The name that qualifies its columns; `None` for the merged columns
    /// of a `JOIN ... USING`, which are reachable only unqualified.
    pub alias: Option<String>,
    pub cols: Vec<ScopeCol>,
}

#[derive(Debug, Clone)]
pub(crate) struct ScopeCol {
    pub name: String,
    pub id: ColumnId,
    /// Skipped by unqualified lookup (a column merged by USING).
    pub hidden: bool,
}

/// The names visible at one query level.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueryScope {
    pub rels: Vec<ScopeRel>,
    /// Columns in `SELECT *` order.
    pub star: Vec<ColumnId>,
    /// CTE names this level's WITH defines, and their ids in
    /// [`Binder::ctes`] (or work tables while a recursive CTE is bound).
    pub ctes: Vec<(String, CteName)>,
    /// While a JOIN's ON condition is bound: the relations it may see (the
    /// join's two sides); the FROM list's other items are out of reach.
    pub on_visible: Option<std::ops::Range<usize>>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum CteName {
    Cte(usize),
    /// The recursive CTE itself, seen from its recursive term.
    WorkTable {
        id: usize,
    },
}

/// A subquery met inside an expression, to be applied to the clause's input.
#[derive(Debug, Clone)]
pub(crate) struct PendingApply {
    pub subquery: Logical,
    pub kind: SubqueryKind,
    pub out: ColumnId,
}

/// Where an expression is being bound and what it may contain.
pub(crate) struct ExprCtx {
    /// The clause, for messages ("aggregate functions are not allowed in WHERE").
    pub clause: &'static str,
    pub allow_aggs: bool,
    pub allow_windows: bool,
    /// Aggregates found so far (shared by a grouped query's clauses).
    pub aggs: Vec<(ColumnId, tusk_exec::plan::AggCall)>,
    pub windows: Vec<(ColumnId, crate::logical::WindowCall)>,
    /// `GROUPING(args)` calls: their result column and arguments.
    pub groupings: Vec<(ColumnId, Vec<Expr>)>,
    /// Subqueries to apply to the clause's input.
    pub applies: Vec<PendingApply>,
    /// Subqueries inside aggregate arguments: applied below the aggregation.
    pub pre_agg_applies: Vec<PendingApply>,
    /// Inside an aggregate's arguments (nested aggregates are an error).
    pub in_aggregate: bool,
    /// Inside a window function's arguments.
    pub in_window: bool,
}

impl ExprCtx {
    pub fn new(clause: &'static str) -> ExprCtx {
        ExprCtx {
            clause,
            allow_aggs: false,
            allow_windows: false,
            aggs: Vec::new(),
            windows: Vec::new(),
            groupings: Vec::new(),
            applies: Vec::new(),
            pre_agg_applies: Vec::new(),
            in_aggregate: false,
            in_window: false,
        }
    }

    /// Wraps `input` in the Apply nodes this clause's subqueries need.
    pub fn apply_to(&mut self, mut input: Logical) -> Logical {
        for a in self.applies.drain(..) {
            input = Logical::Apply {
                input: Box::new(input),
                subquery: Box::new(a.subquery),
                kind: a.kind,
                out: a.out,
            };
        }
        input
    }
}

/// Settings that change what a statement means, fixed for its binding.
#[derive(Debug, Clone, Default)]
pub struct BindSettings {
    /// Types of the `$n` parameters as the client declared them (`None`:
    /// to be inferred).
    pub param_types: Vec<Option<DataType>>,
}

pub struct Binder<'a> {
    pub catalog: &'a Catalog,
    pub cols: Columns,
    pub ctes: Vec<CteDef>,
    /// How often each CTE is referenced (decides materialisation).
    pub cte_refs: Vec<usize>,
    pub(crate) scopes: Vec<QueryScope>,
    /// `$n` parameter types: declared, or inferred from first use (a
    /// cell: conversions that fix a type take `&self`).
    pub params: std::cell::RefCell<Vec<Option<DataType>>>,
    depth: usize,
    next_work_table: usize,
    /// Each CTE's column names (after its alias list).
    pub(crate) cte_names: Vec<Vec<String>>,
    /// Column names and types of each recursive CTE's work table.
    pub(crate) work_tables: Vec<(Vec<String>, Vec<DataType>)>,
    /// Where the query's text refers to relations and columns, when asked
    /// for (see [`references`]).
    references: Option<References>,
}

impl<'a> Binder<'a> {
    pub fn new(catalog: &'a Catalog, settings: &BindSettings) -> Binder<'a> {
        Binder {
            catalog,
            cols: Columns::default(),
            ctes: Vec::new(),
            cte_refs: Vec::new(),
            scopes: Vec::new(),
            params: std::cell::RefCell::new(settings.param_types.clone()),
            depth: 0,
            next_work_table: 0,
            cte_names: Vec::new(),
            work_tables: Vec::new(),
            references: None,
        }
    }

    /// Runs `f` one nesting level deeper, failing past [`MAX_NESTING`].
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING {
            return Err(SqlError::coded(
                sqlstate::STATEMENT_TOO_COMPLEX,
                "stack depth limit exceeded",
            )
            .with_hint(
                "Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.",
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    pub(crate) fn scope(&mut self) -> &mut QueryScope {
        self.scopes.last_mut().expect("inside a query")
    }

    pub(crate) fn new_work_table(&mut self) -> usize {
        self.next_work_table += 1;
        self.next_work_table - 1
    }

    /// Registers a new column.
    pub(crate) fn column(&mut self, name: &str, ty: SqlType, qualifier: Option<&str>) -> ColumnId {
        self.cols.add(name, ty, qualifier.map(str::to_string))
    }

    pub(crate) fn col_expr(&self, id: ColumnId) -> Expr {
        self.cols.expr(id)
    }

    /// Finds the column `qualifier.name` (or `name`) in the innermost scope
    /// that has it.
    pub(crate) fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<ColumnId> {
        for scope in self.scopes.iter().rev() {
            let visible = |i: usize| scope.on_visible.as_ref().is_none_or(|r| r.contains(&i));
            match qualifier {
                Some(q) => {
                    let rels: Vec<(usize, &ScopeRel)> = scope
                        .rels
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.alias.as_deref() == Some(q))
                        .collect();
                    if let Some(&(i, rel)) = rels.first() {
                        if !visible(i) {
                            return Err(SqlError::coded(
                                sqlstate::UNDEFINED_TABLE,
                                format!("invalid reference to FROM-clause entry for table \"{q}\""),
                            )
                            .with_hint(format!("There is an entry for table \"{q}\", but it cannot be referenced from this part of the query.")));
                        }
                        if let Some(c) = rel.cols.iter().find(|c| c.name == name) {
                            return Ok(c.id);
                        }
                        return Err(self.missing_column(qualifier, name));
                    }
                }
                None => {
                    let mut found: Option<ColumnId> = None;
                    for (i, rel) in scope.rels.iter().enumerate() {
                        if !visible(i) {
                            continue;
                        }
                        for c in &rel.cols {
                            if c.name == name && !c.hidden {
                                if found.is_some_and(|f| f != c.id) {
                                    return err(
                                        sqlstate::AMBIGUOUS_COLUMN,
                                        format!("column reference \"{name}\" is ambiguous"),
                                    );
                                }
                                found = Some(c.id);
                            }
                        }
                    }
                    if let Some(id) = found {
                        return Ok(id);
                    }
                }
            }
        }
        match qualifier {
            Some(q) => err(
                sqlstate::UNDEFINED_TABLE,
                format!("missing FROM-clause entry for table \"{q}\""),
            ),
            None => Err(self.missing_column(None, name)),
        }
    }

    /// PostgreSQL's `errorMissingColumn`: the error for a reference to a
    /// column no relation has, with a hint at the closest one
    /// ([`fuzzy`]).
    fn missing_column(&self, qualifier: Option<&str>, name: &str) -> SqlError {
        let message = match qualifier {
            Some(q) => format!("column {q}.{name} does not exist"),
            None => format!("column \"{name}\" does not exist"),
        };
        let e = SqlError::coded(sqlstate::UNDEFINED_COLUMN, message);
        match fuzzy::missing_column_hint(self.scopes.iter().rev(), qualifier, name) {
            Some(hint) => e.with_hint(hint),
            None => e,
        }
    }

    // ----- coercion -----

    /// Gives an expression type `to`: untyped literals are converted now,
    /// others get an implicit cast if PostgreSQL has one; `mismatch` words
    /// the error otherwise (it receives the expression's type name).
    pub(crate) fn coerce(
        &self,
        b: B,
        to: DataType,
        mismatch: impl Fn(&str) -> SqlError,
    ) -> Result<Expr> {
        if b.unknown {
            return self.convert_unknown(b.e, to);
        }
        let from = b.ty();
        if from == to {
            Ok(b.e)
        } else if operators::implicit(from, to) {
            Ok(cast(b.e, to))
        } else {
            Err(mismatch(from.display_name()))
        }
    }

    /// Converts an untyped literal (or an expression over one) to type
    /// `to`, as PostgreSQL's input function would; an untyped parameter
    /// takes type `to` from here on.
    pub(crate) fn convert_unknown(&self, e: Expr, to: DataType) -> Result<Expr> {
        match e {
            Expr::Const { value, .. } => {
                // Read with the session's settings (DateStyle, TimeZone).
                let v = match value.data_type() {
                    None => Value::Null,
                    Some(from) => tusk_exec::env::with(|env| {
                        tusk_exec::cast::cast_value_in(&value, from, to, env)
                    })?,
                };
                Ok(Expr::Const { value: v, ty: to })
            }
            Expr::Param { index, .. } if self.params.borrow().get(index) == Some(&None) => {
                self.params.borrow_mut()[index] = Some(to);
                Ok(Expr::Param { index, ty: to })
            }
            other => Ok(cast(other, to)),
        }
    }

    /// Coerces a value stored into a column of type `to` (PostgreSQL's
    /// assignment rules); `column` names the column in the error.
    pub(crate) fn assign_public(&self, b: B, to: DataType, column: &str) -> Result<Expr> {
        self.assign(b, to, column)
    }

    pub(crate) fn assign(&self, b: B, to: DataType, column: &str) -> Result<Expr> {
        if b.unknown {
            return self.convert_unknown(b.e, to);
        }
        let from = b.ty();
        if from == to {
            return Ok(b.e);
        }
        if operators::assignment(from, to) {
            return Ok(cast(b.e, to));
        }
        Err(SqlError::coded(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "column \"{column}\" is of type {} but expression is of type {}",
                to.display_name(),
                from.display_name()
            ),
        )
        .with_hint("You will need to rewrite or cast the expression."))
    }

    /// A boolean operand of `what` (`WHERE`, `AND`, `JOIN/ON`, ...).
    pub(crate) fn bool_operand(&self, b: B, what: &str) -> Result<Expr> {
        self.coerce(b, DataType::Bool, |t| {
            SqlError::coded(
                sqlstate::DATATYPE_MISMATCH,
                format!("argument of {what} must be type boolean, not type {t}"),
            )
        })
    }
}

/// `COALESCE(args)` (all of one type).
pub(crate) fn coalesce(args: Vec<Expr>) -> Expr {
    Expr::Coalesce(args)
}

/// `CAST(e AS to)`; a cast of a constant is folded later.
pub(crate) fn cast(e: Expr, to: DataType) -> Expr {
    let from = e.data_type();
    if from == to {
        return e;
    }
    // character(n) read as text loses its padding (PostgreSQL's rtrim in
    // bpchar-to-text); between string types nothing else changes.
    if from == DataType::Bpchar && matches!(to, DataType::Text | DataType::Varchar) {
        return Expr::BpcharToText(Box::new(e));
    }
    Expr::Cast {
        arg: Box::new(e),
        to,
    }
}

pub(crate) fn constant(value: Value, ty: DataType) -> Expr {
    Expr::Const { value, ty }
}
