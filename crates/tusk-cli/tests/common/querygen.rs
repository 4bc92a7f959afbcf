//! Random schemas and queries for the differential fuzzer, in the style of
//! SQLancer: small tables of int, bigint, text, boolean, numeric, date and
//! timestamp with
//! NULLs and duplicates, and queries over a grammar that grows with what
//! tusk supports (joins of every kind, subqueries, aggregates, set
//! operations, CASE and friends).
//!
//! Everything is drawn from one seeded generator, so a seed reproduces a
//! run exactly.

/// xorshift64*: small, fast, and reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Int,
    BigInt,
    Text,
    Bool,
    Numeric,
    Date,
    Timestamp,
}

impl Ty {
    fn sql(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::BigInt => "bigint",
            Ty::Text => "text",
            Ty::Bool => "boolean",
            Ty::Numeric => "numeric",
            Ty::Date => "date",
            Ty::Timestamp => "timestamp",
        }
    }

    fn numeric(self) -> bool {
        matches!(self, Ty::Int | Ty::BigInt | Ty::Numeric)
    }
}

const TYPES: [Ty; 7] = [
    Ty::Int,
    Ty::BigInt,
    Ty::Text,
    Ty::Bool,
    Ty::Numeric,
    Ty::Date,
    Ty::Timestamp,
];

pub struct Table {
    pub name: String,
    pub cols: Vec<(String, Ty)>,
}

/// What the generator may use (features tusk has).
#[derive(Debug, Clone, Copy)]
pub struct Features {
    pub outer_joins: bool,
    pub subqueries: bool,
    pub set_ops: bool,
    pub case_exprs: bool,
    pub distinct: bool,
    /// Row constructors: `(a, b) < (c, d)`, row IN lists and subqueries,
    /// `(a, b) IS NULL`.
    pub row_comparisons: bool,
}

/// A column visible to an expression.
#[derive(Clone)]
struct ColRef {
    name: String,
    ty: Ty,
}

/// A generated query with its FROM clause and WHERE predicate apart, for
/// the ternary-logic-partitioning oracle.
pub struct Query {
    pub sql: String,
    /// `FROM ...` and the predicate, when the query is a plain
    /// `SELECT ... FROM f WHERE p`.
    pub tlp: Option<(String, String)>,
}

pub struct Gen<'a> {
    pub rng: &'a mut Rng,
    pub tables: &'a [Table],
    pub features: Features,
}

fn literal(rng: &mut Rng, ty: Ty) -> String {
    if rng.chance(10) {
        // Typed, so that `NULL + 3` stays a date.
        return match ty {
            Ty::Date => "NULL::date".into(),
            Ty::Timestamp => "NULL::timestamp".into(),
            _ => "NULL".into(),
        };
    }
    match ty {
        Ty::Int => {
            if rng.chance(5) {
                rng.pick(&["2147483647", "-2147483648"]).to_string()
            } else {
                (rng.below(11) as i64 - 5).to_string()
            }
        }
        Ty::BigInt => {
            if rng.chance(5) {
                "9223372036854775807".into()
            } else {
                (rng.below(21) as i64 - 10).to_string()
            }
        }
        Ty::Text => format!(
            "'{}'",
            rng.pick(&["a", "b", "ab", "", "A", "b ", "x%", "10"])
        ),
        Ty::Bool => rng.pick(&["true", "false"]).to_string(),
        Ty::Numeric => rng
            .pick(&["0.5", "-1.25", "3", "0.00", "100.125", "-0.001"])
            .to_string(),
        Ty::Date => rng
            .pick(&[
                "DATE '2000-01-01'",
                "DATE '2000-01-02'",
                "DATE '1999-12-31'",
                "DATE '2024-02-29'",
                "DATE 'infinity'",
            ])
            .to_string(),
        Ty::Timestamp => rng
            .pick(&[
                "TIMESTAMP '2000-01-01 00:00'",
                "TIMESTAMP '2000-01-01 12:30'",
                "TIMESTAMP '1999-12-31 23:59:59.5'",
                "TIMESTAMP '2000-01-02'",
                "TIMESTAMP '-infinity'",
            ])
            .to_string(),
    }
}

/// CREATE TABLE and INSERT statements for `n` random tables.
pub fn schema(rng: &mut Rng, n: usize) -> (Vec<Table>, Vec<String>) {
    let mut tables = Vec::new();
    let mut sql = Vec::new();
    for t in 0..n {
        let ncols = 1 + rng.below(3);
        let cols: Vec<(String, Ty)> = (0..ncols)
            .map(|c| (format!("c{c}"), *rng.pick(&TYPES)))
            .collect();
        let name = format!("t{t}");
        let defs: Vec<String> = cols
            .iter()
            .map(|(c, ty)| format!("{c} {}", ty.sql()))
            .collect();
        sql.push(format!("create table {name} ({})", defs.join(", ")));
        let nrows = rng.below(9);
        if nrows > 0 {
            let mut rows = Vec::new();
            for _ in 0..nrows {
                let vals: Vec<String> = cols
                    .iter()
                    .map(|(_, ty)| {
                        // No extreme values in stored data: they would make
                        // most arithmetic over them an error.
                        let mut v = literal(rng, *ty);
                        while v.len() > 6 && ty.numeric() {
                            v = literal(rng, *ty);
                        }
                        v
                    })
                    .collect();
                rows.push(format!("({})", vals.join(", ")));
            }
            sql.push(format!("insert into {name} values {}", rows.join(", ")));
        }
        tables.push(Table { name, cols });
    }
    (tables, sql)
}

impl<'a> Gen<'a> {
    fn expr(&mut self, scope: &[ColRef], ty: Ty, depth: usize) -> String {
        let cols: Vec<&ColRef> = scope.iter().filter(|c| c.ty == ty).collect();
        if depth == 0 || self.rng.chance(35) {
            if !cols.is_empty() && self.rng.chance(70) {
                return cols[self.rng.below(cols.len())].name.clone();
            }
            return literal(self.rng, ty);
        }
        let d = depth - 1;
        if self.features.case_exprs && self.rng.chance(12) {
            let form = self.rng.below(3);
            let when = (form == 0).then(|| self.pred(scope, d));
            let first = self.expr(scope, ty, d);
            let mut second = self.expr(scope, ty, d);
            if first == "NULL" && second == "NULL" {
                // Of untyped NULLs alone the result is text, not `ty`
                // (and `NULL - text` is jsonb's operator, which tusk lacks).
                second = format!("NULL::{}", ty.sql());
            }
            return match when {
                Some(w) => format!("CASE WHEN {w} THEN {first} ELSE {second} END"),
                None if form == 1 => format!("COALESCE({first}, {second})"),
                None => format!("NULLIF({first}, {second})"),
            };
        }
        if self.features.subqueries && self.rng.chance(5) {
            if let Some(sub) = self.scalar_subquery(scope, ty, d) {
                return sub;
            }
        }
        match ty {
            Ty::Int | Ty::BigInt | Ty::Numeric => match self.rng.below(6) {
                0 => format!("(- {})", self.expr(scope, ty, d)),
                1 if ty != Ty::Numeric => {
                    let other = if ty == Ty::Int { Ty::BigInt } else { Ty::Int };
                    format!("({})::{}", self.expr(scope, other, d), ty.sql())
                }
                2 if ty == Ty::Numeric => format!("({})::numeric", self.expr(scope, Ty::Int, d)),
                _ => {
                    let op = self.rng.pick(&["+", "-", "*", "/", "%"]);
                    format!(
                        "({} {op} {})",
                        self.expr(scope, ty, d),
                        self.expr(scope, ty, d)
                    )
                }
            },
            Ty::Text => match self.rng.below(3) {
                0 => format!(
                    "({} || {})",
                    self.expr(scope, Ty::Text, d),
                    self.expr(scope, Ty::Text, d)
                ),
                1 => format!("({})::text", self.expr(scope, Ty::Int, d)),
                _ => self.expr(scope, Ty::Text, d),
            },
            Ty::Bool => self.pred(scope, depth),
            Ty::Date => match self.rng.below(3) {
                0 => format!(
                    "({} {} {})",
                    self.expr(scope, Ty::Date, d),
                    self.rng.pick(&["+", "-"]),
                    self.rng.below(40)
                ),
                1 => format!("({})::date", self.expr(scope, Ty::Timestamp, d)),
                _ => self.expr(scope, Ty::Date, d),
            },
            Ty::Timestamp => match self.rng.below(4) {
                0 => format!(
                    "({} {} INTERVAL '{}')",
                    self.expr(scope, Ty::Timestamp, d),
                    self.rng.pick(&["+", "-"]),
                    self.rng
                        .pick(&["1 day", "90 minutes", "1 month", "-1 year 2 hours"])
                ),
                1 => format!("({})::timestamp", self.expr(scope, Ty::Date, d)),
                2 => format!(
                    "date_trunc('{}', {})",
                    self.rng.pick(&["day", "month", "hour", "year"]),
                    self.expr(scope, Ty::Timestamp, d)
                ),
                _ => self.expr(scope, Ty::Timestamp, d),
            },
        }
    }

    /// A boolean expression.
    pub fn pred_in(&mut self, scope_tables: &[(String, &Table)], depth: usize) -> String {
        let scope = scope_of(scope_tables);
        self.pred(&scope, depth)
    }

    fn pred(&mut self, scope: &[ColRef], depth: usize) -> String {
        let bools: Vec<&ColRef> = scope.iter().filter(|c| c.ty == Ty::Bool).collect();
        if depth == 0 || self.rng.chance(15) {
            if !bools.is_empty() && self.rng.chance(50) {
                return bools[self.rng.below(bools.len())].name.clone();
            }
            let ty = *self.rng.pick(&[
                Ty::Int,
                Ty::Text,
                Ty::Numeric,
                Ty::BigInt,
                Ty::Date,
                Ty::Timestamp,
            ]);
            return format!(
                "({} {} {})",
                self.expr(scope, ty, 0),
                self.rng.pick(&["=", "<>", "<", "<=", ">", ">="]),
                self.expr(scope, ty, 0)
            );
        }
        let d = depth - 1;
        if self.features.row_comparisons && self.rng.chance(8) {
            return self.row_pred(scope, d);
        }
        match self.rng.below(11) {
            0 => format!("({} AND {})", self.pred(scope, d), self.pred(scope, d)),
            1 => format!("({} OR {})", self.pred(scope, d), self.pred(scope, d)),
            2 => format!("(NOT {})", self.pred(scope, d)),
            3 => {
                let ty = *self.rng.pick(&TYPES);
                let not = if self.rng.chance(50) { " NOT" } else { "" };
                format!("({} IS{not} NULL)", self.expr(scope, ty, d))
            }
            4 => {
                let ty = *self.rng.pick(&[Ty::Int, Ty::Numeric, Ty::Text, Ty::Date]);
                format!(
                    "({} BETWEEN {} AND {})",
                    self.expr(scope, ty, d),
                    self.expr(scope, ty, d),
                    self.expr(scope, ty, d)
                )
            }
            5 => {
                let ty = *self.rng.pick(&[Ty::Int, Ty::Text, Ty::BigInt]);
                let n = 1 + self.rng.below(4);
                let items: Vec<String> = (0..n).map(|_| literal(self.rng, ty)).collect();
                let not = if self.rng.chance(30) { " NOT" } else { "" };
                format!(
                    "({}{not} IN ({}))",
                    self.expr(scope, ty, d),
                    items.join(", ")
                )
            }
            6 => format!(
                "({} LIKE {})",
                self.expr(scope, Ty::Text, d),
                self.rng.pick(&["'a%'", "'%b'", "'_'", "'%'", "'a_'", "''"])
            ),
            7 if self.features.subqueries => self.subquery_pred(scope, d),
            8 => {
                let what = self
                    .rng
                    .pick(&["TRUE", "FALSE", "UNKNOWN", "NOT TRUE", "NOT FALSE"]);
                format!("({} IS {what})", self.pred(scope, d))
            }
            _ => {
                let ty = *self.rng.pick(&[
                    Ty::Int,
                    Ty::Text,
                    Ty::Numeric,
                    Ty::BigInt,
                    Ty::Bool,
                    Ty::Date,
                    Ty::Timestamp,
                ]);
                format!(
                    "({} {} {})",
                    self.expr(scope, ty, d),
                    self.rng.pick(&["=", "<>", "<", "<=", ">", ">="]),
                    self.expr(scope, ty, d)
                )
            }
        }
    }

    /// A predicate over row constructors of two or three fields: a row
    /// comparison, a row IN list, a row IN subquery, or a row null test.
    fn row_pred(&mut self, scope: &[ColRef], depth: usize) -> String {
        let kinds = [
            Ty::Int,
            Ty::Text,
            Ty::Numeric,
            Ty::BigInt,
            Ty::Bool,
            Ty::Date,
        ];
        let n = 2 + self.rng.below(2);
        let types: Vec<Ty> = (0..n).map(|_| *self.rng.pick(&kinds)).collect();
        let row = |g: &mut Self, literals: bool| {
            let fields: Vec<String> = types
                .iter()
                .map(|&t| {
                    if literals {
                        literal(g.rng, t)
                    } else {
                        g.expr(scope, t, depth.min(1))
                    }
                })
                .collect();
            let spelled = if g.rng.chance(20) { "ROW" } else { "" };
            format!("{spelled}({})", fields.join(", "))
        };
        let left = row(self, false);
        match self.rng.below(4) {
            0 => {
                let op = self.rng.pick(&["=", "<>", "<", "<=", ">", ">="]);
                format!("({left} {op} {})", row(self, false))
            }
            1 => {
                let k = 1 + self.rng.below(3);
                let items: Vec<String> = (0..k).map(|_| row(self, true)).collect();
                let not = if self.rng.chance(40) { " NOT" } else { "" };
                format!("({left}{not} IN ({}))", items.join(", "))
            }
            2 if self.features.subqueries => {
                // Columns of one table with the row's types, when it has them.
                let t = self.table();
                let mut cols = Vec::new();
                for ty in &types {
                    match t.cols.iter().find(|(_, c)| c == ty) {
                        Some((name, _)) => cols.push(format!("rq.{name}")),
                        None => cols.push(literal(self.rng, *ty)),
                    }
                }
                let wh = if self.rng.chance(40) {
                    format!(" WHERE {}", self.pred(&aliased_cols(t, "rq"), 0))
                } else {
                    String::new()
                };
                let how = *self
                    .rng
                    .pick(&[" IN", " NOT IN", " = ANY", " <> ALL", " < ANY", " >= ALL"]);
                format!(
                    "({left}{how} (SELECT {} FROM {} rq{wh}))",
                    cols.join(", "),
                    t.name
                )
            }
            _ => {
                let not = if self.rng.chance(50) { " NOT" } else { "" };
                format!("({left} IS{not} NULL)")
            }
        }
    }

    fn table(&mut self) -> &'a Table {
        let tables = self.tables;
        &tables[self.rng.below(tables.len())]
    }

    /// `(SELECT agg(col) FROM t)` of type `ty`, if some table has such a
    /// column; half the time a correlated one instead (`correlated_scalar`).
    fn scalar_subquery(&mut self, scope: &[ColRef], ty: Ty, depth: usize) -> Option<String> {
        if self.rng.chance(50) {
            if let Some(sub) = self.correlated_scalar(scope, ty, depth) {
                return Some(sub);
            }
        }
        let t = self.table();
        let (c, _) = t.cols.iter().find(|(_, cty)| *cty == ty)?;
        let agg = match ty {
            Ty::Int | Ty::Numeric | Ty::BigInt | Ty::Text | Ty::Date | Ty::Timestamp => {
                *self.rng.pick(&["max", "min"])
            }
            Ty::Bool => return None,
        };
        Some(format!("(SELECT {agg}(s.{c}) FROM {} s)", t.name))
    }

    /// `(SELECT agg(e) FROM t csN WHERE csN.k = outer [AND p])` of type
    /// `ty`, or now and then `(SELECT e FROM ...)` without the aggregate,
    /// which raises `more than one row returned by a subquery used as an
    /// expression` for an outer row that matches two inner rows (and only
    /// for such a row that reaches it). `e` and `p` may fail (`1 / 0`) on
    /// inner rows no outer row selects: PostgreSQL runs the subquery per
    /// outer row, so those rows must raise nothing.
    fn correlated_scalar(&mut self, scope: &[ColRef], ty: Ty, depth: usize) -> Option<String> {
        let t = self.table();
        // Nested ones get their own alias, so a correlation names the
        // level it means.
        let alias = format!("cs{depth}");
        let inner = aliased_cols(t, &alias);
        let pairs: Vec<(String, String)> = inner
            .iter()
            .flat_map(|i| {
                scope
                    .iter()
                    .filter(|o| o.ty == i.ty)
                    .map(|o| (i.name.clone(), o.name.clone()))
            })
            .collect();
        if pairs.is_empty() || !inner.iter().any(|c| c.ty == ty) {
            return None;
        }
        let (i, o) = pairs[self.rng.below(pairs.len())].clone();
        let mut wh = format!(" WHERE {i} = {o}");
        if self.rng.chance(40) {
            let p = self.pred(&inner, depth.min(1));
            wh.push_str(&format!(" AND {p}"));
        }
        let arg = self.expr(&inner, ty, depth.min(1));
        let name = &t.name;
        if ty == Ty::Bool || self.rng.chance(20) {
            return Some(format!("(SELECT {arg} FROM {name} {alias}{wh})"));
        }
        let agg = match ty {
            Ty::Numeric => *self.rng.pick(&["max", "min", "sum"]),
            _ => *self.rng.pick(&["max", "min"]),
        };
        Some(format!("(SELECT {agg}({arg}) FROM {name} {alias}{wh})"))
    }

    fn subquery_pred(&mut self, scope: &[ColRef], depth: usize) -> String {
        let t = self.table();
        let name = t.name.clone();
        let cols = t.cols.clone();
        let (c, ty) = cols[self.rng.below(cols.len())].clone();
        let inner_scope: Vec<ColRef> = cols
            .iter()
            .map(|(n, ty)| ColRef {
                name: format!("sq.{n}"),
                ty: *ty,
            })
            .collect();
        // Correlate with the outer scope now and then.
        let mut conds = Vec::new();
        if self.rng.chance(50) {
            conds.push(self.pred(&inner_scope, depth.min(1)));
        }
        if self.rng.chance(50) {
            if let Some(o) = scope.iter().find(|o| o.ty == ty) {
                conds.push(format!("sq.{c} = {}", o.name));
            }
        }
        let wh = if conds.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conds.join(" AND "))
        };
        match self.rng.below(3) {
            0 => format!(
                "({}EXISTS (SELECT 1 FROM {name} sq{wh}))",
                if self.rng.chance(30) { "NOT " } else { "" }
            ),
            1 => format!(
                "({}{} IN (SELECT sq.{c} FROM {name} sq{wh}))",
                self.expr(scope, ty, 0),
                if self.rng.chance(30) { " NOT" } else { "" }
            ),
            _ => format!(
                "({} {} {} (SELECT sq.{c} FROM {name} sq{wh}))",
                self.expr(scope, ty, 0),
                self.rng.pick(&["=", "<", ">="]),
                self.rng.pick(&["ANY", "ALL"])
            ),
        }
    }

    /// A FROM clause and the tables it names with their aliases.
    fn from(&mut self) -> (String, Vec<(String, usize)>) {
        let a = self.rng.below(self.tables.len());
        let mut names = vec![("a".to_string(), a)];
        let mut from = format!("{} a", self.tables[a].name);
        if self.rng.chance(55) {
            let b = self.rng.below(self.tables.len());
            names.push(("b".to_string(), b));
            let pair: Vec<(String, &Table)> = names
                .iter()
                .map(|(al, i)| (al.clone(), &self.tables[*i]))
                .collect();
            let scope = scope_of(&pair);
            let kinds: &[&str] = if self.features.outer_joins {
                &[
                    "JOIN",
                    "LEFT JOIN",
                    "RIGHT JOIN",
                    ",",
                    "CROSS JOIN",
                    "FULL JOIN",
                ]
            } else {
                &["JOIN", ","]
            };
            let kind = *self.rng.pick(kinds);
            match kind {
                "," | "CROSS JOIN" => {
                    from = format!(
                        "{from}{} {} b",
                        if kind == "," { "," } else { " CROSS JOIN" },
                        self.tables[b].name
                    )
                }
                "FULL JOIN" => {
                    // PostgreSQL needs an equality for FULL JOIN.
                    let eq = equality(&scope);
                    match eq {
                        Some(e) => {
                            from = format!("{from} FULL JOIN {} b ON {e}", self.tables[b].name)
                        }
                        None => from = format!("{from} CROSS JOIN {} b", self.tables[b].name),
                    }
                }
                k => {
                    let on = if self.rng.chance(60) {
                        equality(&scope).unwrap_or_else(|| "true".into())
                    } else if k == "JOIN" {
                        self.pred(&scope, 1)
                    } else {
                        // tusk refuses (0A000) a subquery in an outer join's
                        // ON that reads both sides; keep them out.
                        let subqueries = std::mem::replace(&mut self.features.subqueries, false);
                        let p = self.pred(&scope, 1);
                        self.features.subqueries = subqueries;
                        p
                    };
                    from = format!("{from} {k} {} b ON {on}", self.tables[b].name);
                }
            }
        }
        (from, names)
    }

    pub fn query(&mut self) -> Query {
        let (from, names) = self.from();
        let pair: Vec<(String, &Table)> = names
            .iter()
            .map(|(al, i)| (al.clone(), &self.tables[*i]))
            .collect();
        let scope = scope_of(&pair);
        let pred = self.pred(&scope, 2);
        match self.rng.below(if self.features.set_ops { 5 } else { 4 }) {
            // Plain projection.
            0 | 1 => {
                let n = 1 + self.rng.below(3);
                let items: Vec<String> = (0..n)
                    .map(|_| {
                        let ty = *self.rng.pick(&TYPES);
                        self.expr(&scope, ty, 2)
                    })
                    .collect();
                let distinct = if self.features.distinct && self.rng.chance(20) {
                    "DISTINCT "
                } else {
                    ""
                };
                Query {
                    sql: format!(
                        "SELECT {distinct}{} FROM {from} WHERE {pred}",
                        items.join(", ")
                    ),
                    tlp: Some((from.clone(), pred)),
                }
            }
            // Aggregation, grouped or not.
            2 | 3 => {
                let ty = *self.rng.pick(&[Ty::Int, Ty::Numeric, Ty::BigInt]);
                let arg = self.expr(&scope, ty, 1);
                let agg = self.rng.pick(&["count", "sum", "min", "max", "avg"]);
                let distinct = if self.features.distinct && self.rng.chance(15) {
                    "DISTINCT "
                } else {
                    ""
                };
                if self.rng.chance(50) {
                    let gty = *self.rng.pick(&TYPES);
                    let g = self.expr(&scope, gty, 0);
                    Query {
                        sql: format!(
                            "SELECT {g}, {agg}({distinct}{arg}), count(*) FROM {from} WHERE {pred} GROUP BY {g}"
                        ),
                        tlp: None,
                    }
                } else {
                    Query {
                        sql: format!(
                            "SELECT {agg}({distinct}{arg}), count(*) FROM {from} WHERE {pred}"
                        ),
                        tlp: None,
                    }
                }
            }
            // Set operations of two single-column selects.
            _ => {
                let ty = *self.rng.pick(&TYPES);
                let l = self.expr(&scope, ty, 1);
                let (from2, names2) = self.from();
                let pair2: Vec<(String, &Table)> = names2
                    .iter()
                    .map(|(al, i)| (al.clone(), &self.tables[*i]))
                    .collect();
                let scope2 = scope_of(&pair2);
                let r = self.expr(&scope2, ty, 1);
                let op = self.rng.pick(&[
                    "UNION",
                    "UNION ALL",
                    "INTERSECT",
                    "EXCEPT",
                    "INTERSECT ALL",
                    "EXCEPT ALL",
                ]);
                Query {
                    sql: format!(
                        "SELECT {l} FROM {from} WHERE {pred} {op} SELECT {r} FROM {from2}"
                    ),
                    tlp: None,
                }
            }
        }
    }
}

/// The columns of `t` as `alias.column`.
fn aliased_cols(t: &Table, alias: &str) -> Vec<ColRef> {
    t.cols
        .iter()
        .map(|(n, ty)| ColRef {
            name: format!("{alias}.{n}"),
            ty: *ty,
        })
        .collect()
}

fn scope_of(tables: &[(String, &Table)]) -> Vec<ColRef> {
    let mut out = Vec::new();
    for (alias, t) in tables {
        for (c, ty) in &t.cols {
            out.push(ColRef {
                name: format!("{alias}.{c}"),
                ty: *ty,
            });
        }
    }
    out
}

/// `a.x = b.y` for two columns of one type on the two sides, if any.
fn equality(scope: &[ColRef]) -> Option<String> {
    for a in scope.iter().filter(|c| c.name.starts_with("a.")) {
        for b in scope.iter().filter(|c| c.name.starts_with("b.")) {
            if a.ty == b.ty {
                return Some(format!("{} = {}", a.name, b.name));
            }
        }
    }
    None
}
