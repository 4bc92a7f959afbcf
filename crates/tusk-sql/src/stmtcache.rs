//! The session's statement cache: plans of simple queries kept by their
//! shape, so that a client sending the same statement again and again as
//! text (pgbench's default mode, most ORMs without server-side prepare)
//! skips parsing, binding and planning, as a prepared statement does.
//!
//! ## How a simple query uses it
//!
//! [`Session::split_simple`] takes the query's shape (`autoparam`: the
//! text with its parameterizable numeric literals taken out). If the cache
//! holds a valid plan for that shape, the statement comes back with it and
//! the literals' values ([`Simple::Hit`]); `Session::prepare` hands that
//! plan out without a transaction, and `Session::start` runs it with the
//! values, as Bind and Execute run a prepared statement. Otherwise the
//! statement is parsed, bound and planned as always ([`Simple::Miss`]),
//! and `Session::prepare` also prepares the shape's parameterized text
//! with the literals' types ([`Session::remember_simple`]) and keeps it.
//! A shape whose parameterized text does not make a plan taking exactly
//! those parameters (a utility statement, `SELECT ... FOR UPDATE`, a type
//! error) is remembered as not cacheable.
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

use crate::autoparam::{self, Shape};
use crate::portal::{Prepared, Statement};
use crate::session::{Result, Session};
use std::collections::HashMap;
use std::sync::Arc;
use tusk_storage::{Catalog, DataType};

/// Shapes kept per session.
pub(crate) const MAX_ENTRIES: usize = 512;

/// Tables under this many pages are planned alike (`physical::scan`'s
/// estimate for never-vacuumed small tables).
const SMALL_TABLE_PAGES: u32 = 10;

/// What the cache said about a simple query's statement.
#[derive(Debug)]
pub(crate) enum Simple {
    /// A valid plan, with the literals' values to run it with.
    Hit(Prepared),
    /// Not cached yet: prepare the shape too.
    Miss(Shape),
}

impl Simple {
    pub(crate) fn hit(&self) -> Option<&Prepared> {
        match self {
            Simple::Hit(p) => Some(p),
            Simple::Miss(_) => None,
        }
    }

    pub(crate) fn miss(&self) -> Option<&Shape> {
        match self {
            Simple::Miss(s) => Some(s),
            Simple::Hit(_) => None,
        }
    }
}

/// The cache (see the module doc).
#[derive(Default)]
pub(crate) struct StmtCache {
    entries: HashMap<String, Slot>,
    /// Statements served from the cache.
    hits: u64,
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
        let shape = self.gucs.statement_cache().then(|| autoparam::shape(sql));
        let Some(shape) = shape.flatten() else {
            return self.split(sql);
        };
        let gucs = self.gucs.generation();
        let catalog = self.catalog_view();
        if !Arc::ptr_eq(&catalog, &self.db.catalog_snapshot()) {
            // The transaction's own DDL: its plans are good for it alone.
            return self.split(sql);
        }
        match self.stmt_cache.entries.get(&shape.key) {
            Some(Slot::NotCacheable) => return self.split(sql),
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
                    let mut prepared = e.prepared.clone();
                    prepared.literals = shape.values.into_iter().map(|(v, _)| v).collect();
                    let parsed = prepared.statement.parsed.clone();
                    return Ok(vec![Statement::cached(parsed, Simple::Hit(prepared))]);
                }
                self.stmt_cache.entries.remove(&shape.key);
            }
            None => {}
        }
        let mut statements = self.split(sql)?;
        if let [st] = statements.as_mut_slice() {
            st.simple = Some(Arc::new(Simple::Miss(shape)));
        }
        Ok(statements)
    }

    /// Prepares `shape`'s parameterized text in the session's transaction
    /// and keeps the plan (or that there is none) for the shape.
    pub(crate) fn remember_simple(&mut self, shape: &Shape) {
        let slot = match self.prepare_shape(shape) {
            Ok(Some(entry)) => Slot::Ready(entry),
            Ok(None) | Err(_) => Slot::NotCacheable,
        };
        let entries = &mut self.stmt_cache.entries;
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(shape.key.clone(), slot);
    }

    fn prepare_shape(&mut self, shape: &Shape) -> Result<Option<Entry>> {
        let mut statements = self.split(&shape.sql)?;
        if statements.len() != 1 {
            return Ok(None);
        }
        let st = statements.remove(0);
        let types: Vec<DataType> = shape.values.iter().map(|(_, t)| *t).collect();
        let declared: Vec<Option<DataType>> = types.iter().map(|&t| Some(t)).collect();
        let prepared = self.prepare_in_transaction(&st, &declared, false)?;
        let Some(generic) = &prepared.generic else {
            return Ok(None);
        };
        if prepared.param_types() != types.as_slice() || !generic.all_params_used {
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
    fn cached(parsed: Arc<crate::parse::Parsed>, simple: Simple) -> Statement {
        Statement {
            parsed,
            simple: Some(Arc::new(simple)),
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
            out = match s.start(&mut p, &[], &mut |_, _| {}).unwrap() {
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
