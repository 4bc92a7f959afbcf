//! The session's statement cache: plans kept by the text they were made
//! from, so that a client sending the same statement again and again —
//! as text (pgbench's default mode, most ORMs without server-side
//! prepare), or as a Parse of the unnamed statement before each execution
//! (the extended protocol as libpq's `PQexecParams` and JDBC use it) —
//! skips parsing, binding and planning, as a prepared statement does.
//!
//! ## How a simple query uses it
//!
//! [`Session::split_simple`] takes the query's shape (`autoparam`: the
//! text with its parameterizable numeric literals taken out). If the cache
//! holds a valid plan for that shape, the statement comes back with it and
//! the literals' values ([`Lookup::Hit`]); `Session::prepare` hands that
//! plan out without a transaction, and `Session::start` runs it with the
//! values, as Bind and Execute run a prepared statement. Otherwise the
//! statement is parsed, bound and planned as always ([`Lookup::Miss`]),
//! and `Session::prepare` also prepares the shape's parameterized text
//! with the literals' types ([`Session::remember`]) and keeps it. A shape
//! whose parameterized text does not make a plan taking exactly those
//! parameters (a utility statement, `SELECT ... FOR UPDATE`, a type error)
//! is remembered as not cacheable, and so is a `DECLARE ... CURSOR` (whose
//! text the cursor keeps).
//!
//! A shape served from the cache also leaves its *template* (the query
//! string cut at its literals, `autoparam::Template`) among the last
//! [`MAX_TEMPLATES`]. A query string is first matched against those: one
//! that differs from a template only in the digits of its literals has the
//! template's shape, found without the scan (pgbench's statements, and any
//! client's repeated ones, come this way).
//!
//! ## How a Parse uses it
//!
//! [`Session::split_for_parse`] looks up the statement's text with the
//! parameter types the client declared. A hit is the plan an earlier Parse
//! of the same text made (its parameter types inferred as they were then);
//! a miss is parsed and prepared as always and its plan kept. What the
//! client names the statement does not matter: a named prepared statement
//! holds its own plan either way.
//!
//! So the first run of every statement is planned from its own text, with
//! its own messages and error positions; later runs of the same shape
//! share the plan of the parameterized text. Both plans are the same:
//! the binder types a parameter as it types the literal, the planner uses
//! parameters wherever it uses constants, and literals are only taken out
//! where no constant folding could involve them (see `autoparam`).
//!
//! ## When a plan is made again
//!
//! A cached plan is used only while everything it was made under holds:
//!
//! * **the catalog**: the one the session's transaction sees is the same
//!   (`Arc`) as when the plan was made. Committed DDL replaces it
//!   (`Session::start` also revalidates against DDL committed meanwhile,
//!   as for any prepared statement). While the transaction has DDL of its
//!   own, it sees a catalog of its own: the cache is left alone then.
//! * **the settings**: the session's [`Gucs::generation`] is the same —
//!   any SET, RESET or transaction end that changed or restored a setting
//!   (`search_path`, `DateStyle`, planner settings, ...) gives a new one.
//! * **the sizes**: each relation it reads or changes has about the size
//!   it had (at most twice or half as many pages, counting tables under
//!   ten pages as ten: the planner estimates those alike), so a plan made
//!   for a small table is made again once the table has grown.
//!
//! A stale entry is dropped and the statement planned afresh. The cache
//! holds at most [`MAX_ENTRIES`] shapes per session; when full, it starts
//! over. `SET tusk.statement_cache = off` turns it off for the session.
//!
//! [`Gucs::generation`]: crate::guc::Gucs::generation

use crate::autoparam::{self, Shape, Template};
use crate::portal::{Prepared, Statement};
use crate::session::{Result, Session};
use std::sync::Arc;
use tusk_storage::fasthash::FastHashMap;
use tusk_storage::{Catalog, DataType};

/// Shapes kept per session.
pub(crate) const MAX_ENTRIES: usize = 512;

/// Templates of recently served shapes kept per session.
const MAX_TEMPLATES: usize = 8;

/// Tables under this many pages are planned alike (`physical::scan`'s
/// estimate for never-vacuumed small tables).
const SMALL_TABLE_PAGES: u32 = 10;

/// What the cache said about a statement.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// A valid plan (with a simple query's literals' values to run it with).
    Hit(Prepared),
    /// Not cached yet: keep the plan under `key` once the statement is
    /// prepared — of `shape`'s parameterized text for a simple query, the
    /// statement's own for a Parse.
    Miss {
        key: String,
        shape: Option<ShapeText>,
    },
}

/// A simple query's shape as the statement its plan is prepared from.
#[derive(Debug)]
pub(crate) struct ShapeText {
    /// The text with `$1`, `$2`, ... for the literals.
    sql: String,
    /// The literals' types.
    types: Vec<DataType>,
}

/// The cache (see the module doc).
#[derive(Default)]
pub(crate) struct StmtCache {
    entries: FastHashMap<String, Slot>,
    /// Templates of the shapes served last, newest first: a simple query
    /// one of them recognises needs no scan for its shape.
    templates: Vec<Template>,
    /// Statements served from the cache.
    hits: u64,
    /// Of those, the simple queries a template recognised.
    template_hits: u64,
}

/// What the cache holds for a key.
enum Cached {
    /// A valid plan.
    Plan(Prepared),
    /// Nothing to use: the shape is not cacheable, or the transaction has
    /// DDL of its own.
    Unusable,
    /// Nothing (any more): plan the statement and keep its plan.
    Absent,
}

enum Slot {
    Ready(Entry),
    /// The shape makes no plan that takes its literals as parameters.
    NotCacheable,
}

struct Entry {
    /// The plan of the shape's parameterized text.
    prepared: Prepared,
    /// The catalog the session's transaction saw.
    catalog: Arc<Catalog>,
    /// The settings' generation.
    gucs: u64,
    /// Each relation of the plan with its size in pages.
    sizes: Vec<(u32, u32)>,
}

/// Whether a relation planned at `then` pages is about as big `now`.
fn similar_size(then: u32, now: u32) -> bool {
    let (a, b) = (
        then.max(SMALL_TABLE_PAGES) as u64,
        now.max(SMALL_TABLE_PAGES) as u64,
    );
    a <= 2 * b && b <= 2 * a
}

impl Session {
    /// Splits a simple query's string into its statements, as
    /// [`Session::split`] does, consulting the statement cache for a
    /// string of one statement (see the module doc).
    pub fn split_simple(&mut self, sql: &str) -> Result<Vec<Statement>> {
        if !self.gucs.statement_cache() {
            return self.split(sql);
        }
        if let Some(st) = self.template_hit(sql) {
            return Ok(vec![st]);
        }
        let Some(mut shape) = autoparam::shape(sql) else {
            return self.split(sql);
        };
        let key = std::mem::take(&mut shape.key);
        self.split_cached(sql, key, Some(shape))
    }

    /// A simple query that a recent shape's template recognises, if that
    /// shape's plan is cached and valid (see `autoparam::Template`).
    fn template_hit(&mut self, sql: &str) -> Option<Statement> {
        let (i, values) = self
            .stmt_cache
            .templates
            .iter()
            .enumerate()
            .find_map(|(i, t)| Some((i, t.values(sql)?)))?;
        let key = std::mem::take(&mut self.stmt_cache.templates[i].key);
        let cached = self.cached(&key);
        self.stmt_cache.templates[i].key = key;
        let Cached::Plan(mut prepared) = cached else {
            return None;
        };
        prepared.literals = values;
        self.stmt_cache.template_hits += 1;
        Some(Statement::hit(prepared))
    }

    /// Keeps the template of `sql` (whose shape is `shape`, cached under
    /// `key`) among the recent ones, newest first.
    fn remember_template(&mut self, sql: &str, shape: &Shape, key: &str) {
        let templates = &mut self.stmt_cache.templates;
        if templates.iter().any(|t| t.key == key) {
            return;
        }
        if let Some(t) = Template::new(sql, shape, key) {
            templates.insert(0, t);
            templates.truncate(MAX_TEMPLATES);
        }
    }

    /// Splits a Parse message's query string, as [`Session::split`] does,
    /// consulting the statement cache for the text with the parameter
    /// types the client declared (see the module doc).
    pub fn split_for_parse(
        &mut self,
        sql: &str,
        declared: &[Option<DataType>],
    ) -> Result<Vec<Statement>> {
        if !self.gucs.statement_cache() {
            return self.split(sql);
        }
        // \u{1} cannot start a simple query's shape (a keyword does).
        let mut key = String::with_capacity(2 + 9 * declared.len() + sql.len());
        key.push('\u{1}');
        for t in declared {
            key.push_str(t.map_or("?", |t| t.display_name()));
            key.push('\u{1}');
        }
        key.push_str(sql);
        self.split_cached(sql, key, None)
    }

    /// The statement cached under `key`, if valid; else `sql`'s
    /// statements, a single one marked to be kept under `key`. A simple
    /// query comes with its `shape` (whose key has been taken out).
    fn split_cached(
        &mut self,
        sql: &str,
        key: String,
        shape: Option<Shape>,
    ) -> Result<Vec<Statement>> {
        match self.cached(&key) {
            Cached::Unusable => return self.split(sql),
            Cached::Plan(mut prepared) => {
                if let Some(shape) = shape {
                    self.remember_template(sql, &shape, &key);
                    prepared.literals = shape.values;
                }
                return Ok(vec![Statement::hit(prepared)]);
            }
            Cached::Absent => {}
        }
        let mut statements = self.split(sql)?;
        if let [st] = statements.as_mut_slice() {
            let shape = shape.map(|s| ShapeText {
                sql: s.parameterized(sql),
                types: s.places.iter().map(|&(t, _, _)| t).collect(),
            });
            st.cache = Some(Arc::new(Lookup::Miss { key, shape }));
        }
        Ok(statements)
    }

    /// What the cache holds for `key` (a stale entry is dropped).
    fn cached(&mut self, key: &str) -> Cached {
        let gucs = self.gucs.generation();
        let catalog = self.catalog_view();
        if !Arc::ptr_eq(&catalog, &self.db.catalog_snapshot()) {
            // The transaction's own DDL: its plans are good for it alone.
            return Cached::Unusable;
        }
        match self.stmt_cache.entries.get(key) {
            Some(Slot::NotCacheable) => Cached::Unusable,
            Some(Slot::Ready(e)) => {
                let valid = e.gucs == gucs
                    && Arc::ptr_eq(&e.catalog, &catalog)
                    && e.sizes.iter().all(|&(rel, pages)| {
                        self.db
                            .nblocks(rel)
                            .is_ok_and(|now| similar_size(pages, now))
                    });
                if valid {
                    self.stmt_cache.hits += 1;
                    return Cached::Plan(e.prepared.clone());
                }
                self.stmt_cache.entries.remove(key);
                Cached::Absent
            }
            None => Cached::Absent,
        }
    }

    /// Keeps a plan under `key` (in the session's transaction, just after
    /// `prepared` was made from the statement's text): for a simple query,
    /// one prepared from `shape`'s parameterized text; for a Parse,
    /// `prepared` itself. A statement without one is remembered as such.
    pub(crate) fn remember(&mut self, key: &str, shape: Option<&ShapeText>, prepared: &Prepared) {
        let entry = match shape {
            Some(shape) => self.prepare_shape(shape),
            None => self.entry(prepared.clone()),
        };
        let slot = match entry {
            Ok(Some(entry)) => Slot::Ready(entry),
            Ok(None) | Err(_) => Slot::NotCacheable,
        };
        let entries = &mut self.stmt_cache.entries;
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key.to_string(), slot);
    }

    fn prepare_shape(&mut self, shape: &ShapeText) -> Result<Option<Entry>> {
        let mut statements = self.split(&shape.sql)?;
        if statements.len() != 1 {
            return Ok(None);
        }
        let st = statements.remove(0);
        let types = &shape.types;
        let declared: Vec<Option<DataType>> = types.iter().map(|&t| Some(t)).collect();
        let prepared = self.prepare_in_transaction(&st, &declared, false)?;
        let all_used = prepared.generic.as_ref().is_some_and(|g| g.all_params_used);
        if prepared.param_types() != types.as_slice() || !all_used {
            return Ok(None);
        }
        self.entry(prepared)
    }

    /// An entry for `prepared`, if it has a plan, as of now.
    fn entry(&mut self, prepared: Prepared) -> Result<Option<Entry>> {
        let Some(generic) = &prepared.generic else {
            return Ok(None);
        };
        // A cursor keeps its DECLARE's text (`pg_cursors.statement`), which
        // must be the client's, not the parameterized shape's.
        if matches!(*generic.plan, crate::portal::Plan::Declare(..)) {
            return Ok(None);
        }
        let mut sizes = Vec::new();
        for rel in generic.plan.relations() {
            sizes.push((rel, self.db.nblocks(rel)?));
        }
        Ok(Some(Entry {
            catalog: self.catalog_view(),
            gucs: self.gucs.generation(),
            sizes,
            prepared,
        }))
    }
}

impl Statement {
    /// A statement served from the cache with its plan.
    fn hit(prepared: Prepared) -> Statement {
        Statement {
            parsed: prepared.statement.parsed.clone(),
            cache: Some(Arc::new(Lookup::Hit(prepared))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::similar_size;
    use crate::portal::Started;
    use crate::session::Session;

    #[test]
    fn sizes() {
        assert!(similar_size(0, 9));
        assert!(similar_size(3, 20));
        assert!(!similar_size(3, 21));
        assert!(similar_size(100, 200));
        assert!(!similar_size(100, 201));
        assert!(!similar_size(100, 49));
    }

    /// Runs a Query message's statements as the server does; the rows of
    /// the last one, `|`-separated, or its tag.
    fn simple(s: &mut Session, sql: &str) -> Vec<String> {
        let mut out = Vec::new();
        for st in s.split_simple(sql).unwrap() {
            s.begin_statement();
            let mut p = s.prepare(&st, &[], false).unwrap();
            out = match s.start(&mut p, &[], &mut |_| {}).unwrap() {
                Started::Rows(mut stream) => {
                    let mut rows = Vec::new();
                    while let Some(b) = stream.next_batch().unwrap() {
                        for r in crate::render_rows(&b, stream.types(), s.settings()) {
                            let r: Vec<String> =
                                r.into_iter().map(|v| v.unwrap_or_default()).collect();
                            rows.push(r.join("|"));
                        }
                    }
                    rows
                }
                Started::Rendered { rows, .. } => rows
                    .into_iter()
                    .map(|r| r.into_iter().flatten().collect())
                    .collect(),
                Started::Command { tag } => vec![tag],
            };
            s.end_statement();
        }
        out
    }

    fn hits(s: &Session) -> u64 {
        s.stmt_cache.hits
    }

    fn session() -> (tempfile::TempDir, Session) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::open(dir.path()).unwrap();
        simple(&mut s, "create table t (a int primary key, b int)");
        simple(
            &mut s,
            "insert into t select g, g * 10 from generate_series(1, 100) g",
        );
        (dir, s)
    }

    #[test]
    fn literals_become_parameters_of_one_plan() {
        let (_d, mut s) = session();
        assert_eq!(simple(&mut s, "select b from t where a = 7"), ["70"]);
        assert_eq!(hits(&s), 0);
        assert_eq!(simple(&mut s, "select b from t where a = 8"), ["80"]);
        assert_eq!(
            simple(&mut s, "select b from t where a = -8"),
            Vec::<String>::new()
        );
        assert_eq!(simple(&mut s, "select b from t where a = 9;"), ["90"]);
        assert_eq!(hits(&s), 1, "`= -8` and the trailing `;` are other shapes");
        assert_eq!(
            simple(&mut s, "select b from t where a = -3"),
            Vec::<String>::new()
        );
        assert_eq!(hits(&s), 2);
        // bigint and numeric literals are shapes of their own.
        assert_eq!(
            simple(&mut s, "select b from t where a = 3000000000"),
            Vec::<String>::new()
        );
        assert_eq!(simple(&mut s, "select b from t where a = 2.0"), ["20"]);
        assert_eq!(simple(&mut s, "select b from t where a = 3.0"), ["30"]);
        assert_eq!(hits(&s), 3);
        assert_eq!(
            simple(&mut s, "update t set b = b + -5 where a = 1"),
            ["UPDATE 1"]
        );
        assert_eq!(
            simple(&mut s, "update t set b = b + -6 where a = 2"),
            ["UPDATE 1"]
        );
        assert_eq!(
            simple(&mut s, "insert into t values (1000, 1)"),
            ["INSERT 0 1"]
        );
        assert_eq!(
            simple(&mut s, "insert into t values (1001, 2)"),
            ["INSERT 0 1"]
        );
        assert_eq!(hits(&s), 5);
        assert_eq!(
            simple(
                &mut s,
                "select a, b from t where a <= 2 or a >= 1000 order by a"
            ),
            ["1|5", "2|14", "1000|1", "1001|2"]
        );
    }

    #[test]
    fn templates_recognise_shapes_served_before() {
        let (_d, mut s) = session();
        simple(&mut s, "select b from t where a = 7");
        // The first hit scans the string and leaves its template.
        assert_eq!(simple(&mut s, "select b from t where a = 8"), ["80"]);
        assert_eq!((hits(&s), s.stmt_cache.template_hits), (1, 0));
        assert_eq!(s.stmt_cache.templates.len(), 1);
        for a in [1, 50, 100] {
            let want = (a * 10).to_string();
            assert_eq!(
                simple(&mut s, &format!("select b from t where a = {a}")),
                [want]
            );
        }
        assert_eq!((hits(&s), s.stmt_cache.template_hits), (4, 3));
        // Another type, sign or spacing is another shape.
        for (sql, want) in [
            ("select b from t where a = 3000000000", None),
            ("select b from t where a = -1", None),
            ("select b from t where a =  1", Some("10")),
        ] {
            let want: Vec<String> = want.into_iter().map(String::from).collect();
            assert_eq!(simple(&mut s, sql), want, "{sql}");
        }
        assert_eq!(s.stmt_cache.template_hits, 3);
        // A stale plan is not served through its template either.
        simple(&mut s, "alter table t add column c int default 7");
        assert_eq!(simple(&mut s, "select b, c from t where a = 3"), ["30|7"]);
        assert_eq!(simple(&mut s, "select b from t where a = 4"), ["40"]);
        assert_eq!(s.stmt_cache.template_hits, 3);
        assert_eq!(simple(&mut s, "select b from t where a = 5"), ["50"]);
        assert_eq!(s.stmt_cache.template_hits, 4);
    }

    #[test]
    fn ddl_settings_and_growth_make_plans_again() {
        let (_d, mut s) = session();
        simple(&mut s, "select * from t where a = 1");
        assert_eq!(simple(&mut s, "select * from t where a = 2"), ["2|20"]);
        assert_eq!(hits(&s), 1);
        // DDL committed: a new catalog.
        simple(&mut s, "alter table t add column c int default 7");
        assert_eq!(simple(&mut s, "select * from t where a = 3"), ["3|30|7"]);
        assert_eq!(hits(&s), 1);
        // DDL of the session's own open transaction, then rolled back.
        simple(&mut s, "begin");
        simple(&mut s, "alter table t drop column c");
        assert_eq!(simple(&mut s, "select * from t where a = 4"), ["4|40"]);
        simple(&mut s, "rollback");
        assert_eq!(simple(&mut s, "select * from t where a = 5"), ["5|50|7"]);
        assert_eq!(simple(&mut s, "select * from t where a = 5"), ["5|50|7"]);
        assert_eq!(hits(&s), 2);
        // A setting changes: planned again, then kept under the new one.
        simple(&mut s, "set enable_indexscan = off");
        assert_eq!(simple(&mut s, "select * from t where a = 6"), ["6|60|7"]);
        assert_eq!(hits(&s), 2);
        assert_eq!(simple(&mut s, "select * from t where a = 7"), ["7|70|7"]);
        assert_eq!(hits(&s), 3);
        simple(&mut s, "reset enable_indexscan");
        simple(&mut s, "select * from t where a = 8");
        assert_eq!(hits(&s), 3);
        // The table grows past twice its size.
        simple(
            &mut s,
            "insert into t select g, g, g from generate_series(101, 20000) g",
        );
        assert_eq!(simple(&mut s, "select * from t where a = 9"), ["9|90|7"]);
        assert_eq!(hits(&s), 3);
        assert_eq!(
            simple(&mut s, "select * from t where a = 19999"),
            ["19999|19999|19999"]
        );
        assert_eq!(hits(&s), 4);
        // SET LOCAL lasts to the end of the block: the plan made under it
        // is not used after.
        simple(&mut s, "begin");
        simple(&mut s, "set local enable_indexscan = off");
        simple(&mut s, "select * from t where a = 10");
        simple(&mut s, "commit");
        simple(&mut s, "select * from t where a = 11");
        assert_eq!(hits(&s), 4);
        simple(&mut s, "select * from t where a = 12");
        assert_eq!(hits(&s), 5);
    }

    #[test]
    fn parse_messages_of_the_same_text_share_a_plan() {
        let (_d, mut s) = session();
        let sql = "select b from t where a = $1";
        let run = |s: &mut Session, declared: &[Option<tusk_storage::DataType>], a: i32| {
            let st = s.split_for_parse(sql, declared).unwrap().remove(0);
            let mut p = s.prepare(&st, declared, true).unwrap();
            assert_eq!(p.param_types(), [tusk_storage::DataType::Int4]);
            s.begin_statement();
            let Started::Rows(mut rows) = s
                .start(&mut p, &[tusk_exec::Value::Int4(a)], &mut |_| {})
                .unwrap()
            else {
                panic!("rows expected")
            };
            let b = rows.next_batch().unwrap().unwrap();
            s.end_statement();
            crate::render_rows(&b, rows.types(), s.settings())[0][0]
                .clone()
                .unwrap()
        };
        assert_eq!(run(&mut s, &[], 4), "40");
        assert_eq!(run(&mut s, &[], 5), "50");
        assert_eq!(hits(&s), 1);
        // Declared types are part of the key.
        assert_eq!(run(&mut s, &[Some(tusk_storage::DataType::Int4)], 6), "60");
        assert_eq!(hits(&s), 1);
        assert_eq!(run(&mut s, &[Some(tusk_storage::DataType::Int4)], 7), "70");
        assert_eq!(hits(&s), 2);
        // In a failed block, a hit fails as a Parse would.
        simple(&mut s, "begin");
        assert!(s.split_simple("select 1/0").is_ok());
        let st = s.split_simple("select 1/0").unwrap().remove(0);
        assert!(s.prepare(&st, &[], false).is_err());
        let st = s.split_for_parse(sql, &[]).unwrap().remove(0);
        assert_eq!(s.prepare(&st, &[], true).unwrap_err().code, "25P02");
        assert_eq!(hits(&s), 3);
    }

    #[test]
    fn statements_without_a_parameterized_plan_are_not_kept() {
        let (_d, mut s) = session();
        for a in [1, 2] {
            let sql = format!("select b from t where a = {a} for update");
            assert_eq!(simple(&mut s, &sql), [format!("{}", a * 10)]);
            assert_eq!(simple(&mut s, "select 1 + 1"), ["2"]);
        }
        assert_eq!(hits(&s), 1, "only `select 1 + 1`, whose shape is its text");
    }
}
