//! Definitions and stored expressions as SQL text, the way PostgreSQL's
//! `ruleutils.c` prints them: `pg_get_expr`, `pg_get_constraintdef`,
//! `pg_get_indexdef`, `pg_get_viewdef`, and the defaults and CHECK
//! constraints psql's `\d` shows.
//!
//! tusk keeps a DEFAULT or CHECK as the SQL text it was written in. To
//! print it as PostgreSQL prints its stored expression tree, the text is
//! bound again (without constant folding: PostgreSQL stores the parse
//! tree, not the plan) and the bound expression is printed by
//! PostgreSQL's rules:
//!
//! - constants carry a type label unless the parser would read them back
//!   as that type (`5`, `1.5`, `true`; `'-1'::integer`, `'x'::text`,
//!   `'5'::bigint`, `'100'::numeric`);
//! - casts print as `x::type`; implicit ones too, except at the top of the
//!   expression (a DEFAULT's coercion to its column's type) and where
//!   PostgreSQL has a cross-type operator and so no cast at all (between
//!   the integer types, between `real` and `double precision`, among the
//!   date and timestamp types), which tusk's binder adds;
//! - in pretty mode (`pg_get_expr(e, rel, true)`, `\d`) parentheses only
//!   where precedence needs them (`isSimpleNode`: `(1 + 2) * 3`, `a > 0 OR
//!   (b > 0 AND c)`), otherwise around every operator and boolean node
//!   (`((1 + 2) * 3)`);
//! - SQL value functions print as their keywords (`CURRENT_DATE`,
//!   `LOCALTIMESTAMP(3)`, `CURRENT_USER`), `x IN (...)` as `x = ANY
//!   (ARRAY[...])`, `BETWEEN` as the two comparisons it means.
//!
//! EXPLAIN prints the planner's (folded) expressions with its own printer
//! (`explain::deparse`): plans differ from stored trees (folded constants,
//! tusk's widening casts), so the two printers differ on purpose.

use crate::bind::{parse_expr, BindSettings, Binder};
use crate::names::quote_ident;
use tusk_exec::expr::{ArithOp, Expr};
use tusk_exec::func::Func;
use tusk_exec::Value;
use tusk_storage::{Catalog, DataType, IndexDef, IndexKind, SqlType, TableDef};

/// What an expression node is, for PostgreSQL's parenthesization rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    /// A binary operator (`+`, `=`, `||`, ...).
    Op(&'static str),
    /// A prefix operator (`-`).
    Prefix,
    And,
    Or,
    Not,
    /// `IS NULL`, `IS TRUE`, `IS DISTINCT FROM`.
    Test,
    /// `x = ANY (...)`.
    AnyArray,
    /// A cast.
    Cast,
    /// A function, CASE, COALESCE, ARRAY[], a constant, a column: prints
    /// with its own delimiters.
    Simple,
}

fn node_of(e: &Expr) -> Node {
    match e {
        Expr::Arith { rest, .. } => Node::Op(rest.last().map_or("+", |(op, _)| op.symbol())),
        Expr::Cmp { op, .. } => Node::Op(op.symbol()),
        Expr::Concat(_) => Node::Op("||"),
        Expr::Like { .. } | Expr::Regex { .. } => Node::Op("~"),
        Expr::Neg { .. } => Node::Prefix,
        Expr::And(_) => Node::And,
        Expr::Or(_) => Node::Or,
        Expr::Not(_) => Node::Not,
        Expr::IsNull { .. }
        | Expr::RowIsNull { .. }
        | Expr::BoolTest { .. }
        | Expr::IsDistinct { .. } => Node::Test,
        Expr::InList { .. } | Expr::AnyArray { .. } => Node::AnyArray,
        Expr::Cast { .. } | Expr::Typmod { .. } | Expr::BpcharToText(_) => Node::Cast,
        _ => Node::Simple,
    }
}

/// PostgreSQL's `isSimpleNode`: whether `child` needs no parentheses under
/// `parent` in pretty mode; `left` when it is the parent's first operand.
fn is_simple(child: &Expr, parent: Node, left: bool) -> bool {
    let priority = |op: &str| match op {
        "+" | "-" => Some(1),
        "*" | "/" | "%" => Some(2),
        _ => None,
    };
    match node_of(child) {
        Node::Simple => true,
        Node::Cast => match child {
            Expr::Cast { arg, .. } | Expr::Typmod { arg, .. } | Expr::BpcharToText(arg) => {
                is_simple(arg, Node::Cast, true)
            }
            _ => true,
        },
        Node::Op(op) => {
            if let Node::Op(parent_op) = parent {
                return match (priority(op), priority(parent_op)) {
                    (Some(2), Some(1)) => true,
                    (Some(1), Some(2)) => false,
                    (Some(_), Some(_)) => left,
                    _ => false,
                };
            }
            operand_of_separated(parent)
        }
        Node::Prefix | Node::AnyArray => false,
        Node::Test => operand_of_separated(parent),
        Node::And | Node::Not => matches!(parent, Node::And | Node::Or) || parent == Node::Simple,
        Node::Or => parent == Node::Or || parent == Node::Simple,
    }
}

/// Whether a parent of this kind separates its operands itself (boolean
/// operators, functions, CASE): an operator or test below it needs no
/// parentheses.
fn operand_of_separated(parent: Node) -> bool {
    matches!(parent, Node::And | Node::Or | Node::Simple)
}

/// Prints bound expressions over a relation's columns.
pub(crate) struct Deparser<'a> {
    /// Column names by position (`Expr::Column` indexes).
    pub columns: &'a [String],
    pub pretty: bool,
}

impl Deparser<'_> {
    /// The expression at the top: its coercion to the context's type is
    /// not shown.
    pub(crate) fn top(&self, e: &Expr) -> String {
        match e {
            Expr::Cast { arg, .. } | Expr::Typmod { arg, .. } => self.top(arg),
            e => self.expr(e),
        }
    }

    /// `e` under `parent`, parenthesized if pretty mode needs it.
    fn operand(&self, e: &Expr, parent: Node, left: bool) -> String {
        let s = self.expr(e);
        if self.pretty && !is_simple(e, parent, left) {
            format!("({s})")
        } else {
            s
        }
    }

    /// An operator's operand: the widening casts tusk adds where
    /// PostgreSQL has cross-type operators are not shown.
    fn op_operand(&self, e: &Expr, parent: Node, left: bool) -> String {
        match e {
            Expr::Cast { arg, to } if cross_type(arg.data_type(), *to) => {
                self.op_operand(arg, parent, left)
            }
            e => self.operand(e, parent, left),
        }
    }

    /// Outer parentheses of operator-like nodes outside pretty mode.
    fn wrap(&self, s: String) -> String {
        if self.pretty {
            s
        } else {
            format!("({s})")
        }
    }

    fn binary(&self, l: &Expr, op: &str, r: &Expr) -> String {
        let node = Node::Op(static_op(op));
        self.wrap(format!(
            "{} {op} {}",
            self.op_operand(l, node, true),
            self.op_operand(r, node, false)
        ))
    }

    fn list(&self, es: &[Expr]) -> String {
        es.iter()
            .map(|e| self.expr(e))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Prints one expression.
    pub(crate) fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Column { index, .. } => self
                .columns
                .get(*index)
                .map_or_else(|| format!("${index}"), |n| quote_ident(n)),
            Expr::Param { index, .. } => format!("${}", index + 1),
            Expr::Const { value, ty } => constant(value, *ty),
            Expr::Arith { first, rest, .. } => {
                // The left-deep chain as nested binary nodes.
                let mut acc = self.expr(first);
                let mut prev: &Expr = first;
                let mut prev_op: Option<ArithOp> = None;
                for (op, x) in rest {
                    let node = Node::Op(op.symbol());
                    let left = match prev_op {
                        None => self.op_operand(prev, node, true),
                        Some(p) => {
                            let simple = match (arith_priority(p), arith_priority(*op)) {
                                (2, 1) => true,
                                (1, 2) => false,
                                _ => true,
                            };
                            if self.pretty && !simple {
                                format!("({acc})")
                            } else {
                                acc
                            }
                        }
                    };
                    acc = self.wrap(format!(
                        "{left} {} {}",
                        op.symbol(),
                        self.op_operand(x, node, false)
                    ));
                    prev = x;
                    prev_op = Some(*op);
                }
                acc
            }
            Expr::Neg { arg, .. } => {
                let a = self.operand(arg, Node::Prefix, false);
                // A prefix operator is never simple under another operator.
                if self.pretty {
                    format!("- {a}")
                } else {
                    format!("(- {a})")
                }
            }
            Expr::Cmp { op, left, right } => self.binary(left, op.symbol(), right),
            // ruleutils prints a row comparison in its own parentheses.
            Expr::RowCompare { op, left, right } => format!(
                "(ROW({}) {} ROW({}))",
                self.list(left),
                op.symbol(),
                self.list(right)
            ),
            Expr::Concat(parts) => {
                // Left-deep `||` nodes: an inner one is not simple under
                // an outer one.
                let mut acc = self.op_operand(&parts[0], Node::Op("||"), true);
                for (k, p) in parts[1..].iter().enumerate() {
                    let left = if k > 0 && self.pretty {
                        format!("({acc})")
                    } else {
                        acc
                    };
                    acc = self.wrap(format!(
                        "{left} || {}",
                        self.op_operand(p, Node::Op("||"), false)
                    ));
                }
                acc
            }
            Expr::And(terms) | Expr::Or(terms) => {
                let node = if matches!(e, Expr::And(_)) {
                    Node::And
                } else {
                    Node::Or
                };
                let sep = if node == Node::And { " AND " } else { " OR " };
                let inner: Vec<String> =
                    terms.iter().map(|t| self.operand(t, node, false)).collect();
                self.wrap(inner.join(sep))
            }
            Expr::Not(arg) => self.wrap(format!("NOT {}", self.operand(arg, Node::Not, false))),
            Expr::IsNull { arg, negated } => self.wrap(format!(
                "{} IS {}NULL",
                self.operand(arg, Node::Test, true),
                if *negated { "NOT " } else { "" }
            )),
            // ruleutils prints the row constructor, then the test.
            Expr::RowIsNull { fields, negated } => self.wrap(format!(
                "ROW({}) IS {}NULL",
                self.list(fields),
                if *negated { "NOT " } else { "" }
            )),
            Expr::BoolTest { arg, test } => self.wrap(format!(
                "{} {}",
                self.operand(arg, Node::Test, true),
                test.sql()
            )),
            Expr::IsDistinct {
                left,
                right,
                negated,
            } => self.wrap(format!(
                "{} IS {}DISTINCT FROM {}",
                self.operand(left, Node::Test, true),
                if *negated { "NOT " } else { "" },
                self.operand(right, Node::Test, false)
            )),
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let op = tusk_exec::expr::like_operator(*negated, *case_insensitive);
                self.binary(arg, op, pattern)
            }
            Expr::Regex {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let op = tusk_exec::expr::regex_operator(*negated, *case_insensitive);
                self.binary(arg, op, pattern)
            }
            Expr::Cast { arg, to } => self.cast(arg, SqlType::of(*to)),
            Expr::Typmod { arg, ty, .. } => self.cast(arg, *ty),
            Expr::BpcharToText(arg) => self.cast(arg, SqlType::Text),
            Expr::Case {
                operand,
                whens,
                otherwise,
                ..
            } => {
                let mut out = String::from("CASE");
                if let Some(o) = operand {
                    out += &format!(" {}", self.expr(o));
                }
                for (w, t) in whens {
                    out += &format!(" WHEN {} THEN {}", self.expr(w), self.expr(t));
                }
                if let Some(x) = otherwise {
                    out += &format!(" ELSE {}", self.expr(x));
                }
                out + " END"
            }
            Expr::Coalesce(args) => format!("COALESCE({})", self.list(args)),
            Expr::MinMax { args, greatest } => format!(
                "{}({})",
                if *greatest { "GREATEST" } else { "LEAST" },
                self.list(args)
            ),
            Expr::NullIf { left, right } => {
                format!("NULLIF({}, {})", self.expr(left), self.expr(right))
            }
            Expr::InList {
                arg, list, negated, ..
            } => self.wrap(format!(
                "{} {} (ARRAY[{}])",
                self.operand(arg, Node::AnyArray, true),
                if *negated { "<> ALL" } else { "= ANY" },
                self.list(list)
            )),
            Expr::AnyArray {
                arg,
                array,
                op,
                all,
            } => self.wrap(format!(
                "{} {} {} ({})",
                self.operand(arg, Node::AnyArray, true),
                op.symbol(),
                if *all { "ALL" } else { "ANY" },
                self.expr(array)
            )),
            Expr::Array { elems, .. } => format!("ARRAY[{}]", self.list(elems)),
            Expr::Subscript { array, index, .. } => {
                let a = self.expr(array);
                let a = if matches!(**array, Expr::Column { .. }) {
                    a
                } else {
                    format!("({a})")
                };
                format!("{a}[{}]", self.expr(index))
            }
            Expr::Call { func, args, .. } => self.call(*func, args),
        }
    }

    /// A cast to `to` (`x::type`).
    fn cast(&self, arg: &Expr, to: SqlType) -> String {
        let inner = self.operand(arg, Node::Cast, true);
        let inner = if self.pretty {
            inner
        } else {
            format!("({inner})")
        };
        format!("{inner}::{}", to.display_name())
    }

    /// A function call; SQL's value functions print as their keywords.
    fn call(&self, func: Func, args: &[Expr]) -> String {
        if let Some(k) = sql_value_function(func) {
            return k.to_string();
        }
        if func == Func::RoundTime {
            if let [Expr::Call { func: f, .. }, Expr::Const { value, .. }] = args {
                if let Some(k) = sql_value_function(*f) {
                    return format!("{k}({})", value.to_text().unwrap_or_default());
                }
            }
        }
        if func == Func::Timezone && args.len() == 2 {
            return format!(
                "({} AT TIME ZONE {})",
                self.operand(&args[1], Node::Op("AT"), true),
                self.operand(&args[0], Node::Op("AT"), false)
            );
        }
        format!("{}({})", func.name(), self.list(args))
    }
}

/// The keyword a SQL value function prints as.
pub(crate) fn sql_value_function(f: Func) -> Option<&'static str> {
    Some(match f {
        Func::CurrentTimestamp => "CURRENT_TIMESTAMP",
        Func::CurrentDate => "CURRENT_DATE",
        Func::LocalTimestamp => "LOCALTIMESTAMP",
        Func::LocalTime => "LOCALTIME",
        Func::CurrentUser => "CURRENT_USER",
        Func::SessionUser => "SESSION_USER",
        _ => return None,
    })
}

fn arith_priority(op: ArithOp) -> u8 {
    match op {
        ArithOp::Add | ArithOp::Sub => 1,
        _ => 2,
    }
}

/// The `'static` spelling of an operator symbol (for [`Node::Op`]).
fn static_op(op: &str) -> &'static str {
    [
        "=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||", "~~", "!~~", "~~*", "!~~*",
        "~", "!~", "~*", "!~*",
    ]
    .into_iter()
    .find(|o| *o == op)
    .unwrap_or("?")
}

/// Whether PostgreSQL compares or computes `from` with `to` by a
/// cross-type operator, with no cast.
fn cross_type(from: DataType, to: DataType) -> bool {
    use DataType as T;
    let ints = |t: DataType| matches!(t, T::Int2 | T::Int4 | T::Int8);
    let floats = |t: DataType| matches!(t, T::Float4 | T::Float8);
    let times = |t: DataType| matches!(t, T::Date | T::Timestamp | T::TimestampTz);
    (ints(from) && ints(to)) || (floats(from) && floats(to)) || (times(from) && times(to))
}

/// A constant as PostgreSQL's `get_const_expr` prints it.
pub(crate) fn constant(value: &Value, ty: DataType) -> String {
    let label = SqlType::of(ty).display_name();
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    match value {
        Value::Null => format!("NULL::{label}"),
        Value::Bool(b) => b.to_string(),
        Value::Int4(v) if *v >= 0 => v.to_string(),
        Value::Numeric(n) => {
            let s = n.to_string();
            let floaty = s.starts_with(|c: char| c.is_ascii_digit()) && s.contains(['.', 'e', 'E']);
            if floaty {
                s
            } else {
                format!("{}::{label}", quote(&s))
            }
        }
        other => {
            let text = tusk_exec::cast::output(other, &Default::default()).unwrap_or_default();
            format!("{}::{label}", quote(&text))
        }
    }
}

/// Binds a stored expression (a DEFAULT or CHECK text) over `table`'s
/// columns, unfolded, or `None` when it no longer binds.
fn bind_stored(catalog: &Catalog, table: Option<&TableDef>, sql: &str) -> Option<Expr> {
    let e = parse_expr(sql).ok()?;
    let mut binder = Binder::new(catalog, &BindSettings::default());
    match table {
        Some(t) => binder.bind_stored_expr(&t.name, &t.columns, &e).ok(),
        None => binder.bind_stored_expr("", &[], &e).ok(),
    }
}

fn column_names(table: Option<&TableDef>) -> Vec<String> {
    table.map_or_else(Vec::new, |t| {
        t.columns.iter().map(|c| c.name.clone()).collect()
    })
}

/// `pg_get_expr(expr, relation, pretty)`: a stored expression (its SQL
/// text) over `table`'s columns, as PostgreSQL prints it; the text itself
/// when it no longer binds.
pub(crate) fn stored_expression(
    catalog: &Catalog,
    table: Option<&TableDef>,
    sql: &str,
    pretty: bool,
) -> String {
    match bind_stored(catalog, table, sql) {
        Some(e) => {
            let names = column_names(table);
            Deparser {
                columns: &names,
                pretty,
            }
            .top(&e)
        }
        None => sql.to_string(),
    }
}

/// A stored expression as `information_schema` shows it (not pretty).
pub(crate) fn stored_expression_text(
    catalog: &Catalog,
    table: Option<&TableDef>,
    sql: &str,
) -> String {
    stored_expression(catalog, table, sql, false)
}

/// `pg_get_constraintdef(oid, pretty)` of a CHECK: `CHECK (expr)`.
pub(crate) fn check_definition(
    catalog: &Catalog,
    table: &TableDef,
    sql: &str,
    pretty: bool,
) -> String {
    let e = stored_expression(catalog, Some(table), sql, pretty);
    format!("CHECK ({e})")
}

/// `pg_get_constraintdef` of a PRIMARY KEY or UNIQUE constraint.
pub(crate) fn key_definition(table: &TableDef, index: &IndexDef) -> String {
    let cols: Vec<String> = index
        .columns
        .iter()
        .map(|k| quote_ident(&table.columns[k.attno].name))
        .collect();
    let kind = if index.kind == IndexKind::PrimaryKey {
        "PRIMARY KEY"
    } else {
        "UNIQUE"
    };
    format!("{kind} ({})", cols.join(", "))
}

/// `pg_get_indexdef(oid, column, pretty)`: `CREATE [UNIQUE] INDEX name ON
/// public.t USING btree (a, b DESC)`, or with `column` (from 1) only that
/// key column.
pub(crate) fn index_definition(
    table: &TableDef,
    index: &IndexDef,
    column: Option<usize>,
) -> String {
    let key = |k: &tusk_storage::IndexColumn| {
        let mut s = quote_ident(&table.columns[k.attno].name);
        match (k.desc, k.nulls_first) {
            (false, true) => s.push_str(" NULLS FIRST"),
            (true, false) => s.push_str(" DESC NULLS LAST"),
            (true, true) => s.push_str(" DESC"),
            (false, false) => {}
        }
        s
    };
    if let Some(c) = column {
        return index
            .columns
            .get(c.wrapping_sub(1))
            .map(|k| quote_ident(&table.columns[k.attno].name))
            .unwrap_or_default();
    }
    let cols: Vec<String> = index.columns.iter().map(key).collect();
    format!(
        "CREATE {}INDEX {} ON public.{} USING btree ({})",
        if index.unique() { "UNIQUE " } else { "" },
        quote_ident(&index.name),
        quote_ident(&table.name),
        cols.join(", ")
    )
}

/// `pg_get_viewdef`: the view's query. tusk keeps the query as written
/// (PostgreSQL prints its parse tree, normalized).
pub(crate) fn view_definition(view: &TableDef) -> String {
    format!(" {};", view.view.as_deref().unwrap_or_default().trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_carry_labels_where_postgresql_prints_them() {
        assert_eq!(constant(&Value::Int4(5), DataType::Int4), "5");
        assert_eq!(constant(&Value::Int4(-1), DataType::Int4), "'-1'::integer");
        assert_eq!(constant(&Value::Int8(5), DataType::Int8), "'5'::bigint");
        assert_eq!(
            constant(&Value::Text("it's".into()), DataType::Text),
            "'it''s'::text"
        );
        assert_eq!(
            constant(&Value::Text("y".into()), DataType::Varchar),
            "'y'::character varying"
        );
        assert_eq!(
            constant(&Value::Text("z".into()), DataType::Bpchar),
            "'z'::bpchar"
        );
        assert_eq!(constant(&Value::Bool(true), DataType::Bool), "true");
        assert_eq!(constant(&Value::Null, DataType::Date), "NULL::date");
        let n = |s: &str| Value::Numeric(tusk_exec::Numeric::from_text(s).unwrap());
        assert_eq!(constant(&n("1.5"), DataType::Numeric), "1.5");
        assert_eq!(constant(&n("100"), DataType::Numeric), "'100'::numeric");
        assert_eq!(constant(&n("-2.5"), DataType::Numeric), "'-2.5'::numeric");
    }
}
