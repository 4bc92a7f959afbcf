//! An index as the SQL layer uses it: its definition, the encoding of its
//! keys from values or heap rows, PostgreSQL's size limit, and the errors
//! PostgreSQL reports.
//!
//! [`Index::open`] ties an [`IndexDef`] to its table: the key columns'
//! types (from the table's columns) and options give the [`KeyEncoder`].
//! The SQL layer then
//!
//! * encodes a row's key with [`Index::key_of_tuple`] (heap tuple bytes)
//!   or [`Index::key_of`] (values in key column order);
//! * inserts it with [`Index::insert`], which checks PostgreSQL's size
//!   limit (error 54000) and, for a unique index, uniqueness (see
//!   `unique`: a [`InsertOutcome::Conflict`] comes back, and the caller
//!   raises [`unique_violation`] with the key rendered by PostgreSQL's
//!   output functions, which only it has);
//! * looks for the conflicting row of INSERT ... ON CONFLICT with
//!   [`Index::find_conflict`];
//! * scans with [`Index::scan`] and bounds from [`ScanBounds::build`];
//! * builds a new index from the table's rows with [`Index::build`]
//!   (CREATE INDEX; a unique build that finds equal keys comes back as
//!   [`BuildOutcome::Duplicate`], which the caller raises as
//!   [`duplicate_key_error`]).
//!
//! A key whose PostgreSQL index tuple would exceed 2704 bytes gets
//! PostgreSQL's error; one within that limit whose tusk encoding still
//! does not fit a third of a page (possible only with many short text
//! columns, whose terminators cost more than PostgreSQL's 1-byte headers)
//! gets the same error with tusk's size.

use super::batch::BatchEntry;
use super::build::{BuildOutcome, IndexBuild};
use super::keyenc::{ColumnOrder, Datum, EncodedKey, KeyEncoder, KeyType};
use super::node::MAX_KEY;
use super::scan::{Cursor, Direction, ScanBounds};
use super::unique::{IndexWriter, InsertOutcome};
use super::Btree;
use crate::catalog::{DataType, IndexDef, TableDef};
use crate::heap::{self, Tid, Visibility};
use crate::snapshot::Snapshot;
use crate::toast;
use crate::tuple::{self, Attr};
use crate::txn::Xid;
use crate::{Database, ErrorReport, StorageError};
use std::borrow::Cow;

/// PostgreSQL's largest btree index tuple (`BTMaxItemSize`, version 4).
pub const PG_MAX_INDEX_TUPLE: usize = 2704;

/// An open index (see the module doc).
pub struct Index<'d> {
    db: &'d Database,
    def: Cow<'d, IndexDef>,
    table: Cow<'d, TableDef>,
    encoder: KeyEncoder,
    tree: Btree<'d>,
}

impl<'d> Index<'d> {
    /// The index `def` of `table`.
    pub fn open(db: &'d Database, def: &'d IndexDef, table: &'d TableDef) -> Index<'d> {
        Index::open_cow(db, Cow::Borrowed(def), Cow::Borrowed(table))
    }

    /// [`Index::open`] keeping its own copies of the definitions (for a
    /// holder that outlives the ones it was given).
    pub fn open_owned(db: &'d Database, def: IndexDef, table: TableDef) -> Index<'d> {
        Index::open_cow(db, Cow::Owned(def), Cow::Owned(table))
    }

    fn open_cow(db: &'d Database, def: Cow<'d, IndexDef>, table: Cow<'d, TableDef>) -> Index<'d> {
        assert_eq!(def.table, table.oid, "the index's own table");
        let encoder = KeyEncoder::new(
            def.columns
                .iter()
                .map(|c| {
                    (
                        KeyType::of(table.columns[c.attno].ty),
                        ColumnOrder {
                            desc: c.desc,
                            nulls_first: c.nulls_first,
                        },
                    )
                })
                .collect(),
        );
        Index {
            db,
            tree: Btree::new(&db.pool, def.oid),
            def,
            table,
            encoder,
        }
    }

    pub fn def(&self) -> &IndexDef {
        &self.def
    }

    pub fn encoder(&self) -> &KeyEncoder {
        &self.encoder
    }

    pub fn tree(&self) -> &Btree<'d> {
        &self.tree
    }

    /// The key of values given in key column order.
    pub fn key_of(&self, values: &[Datum<'_>]) -> Result<EncodedKey, StorageError> {
        self.encoder
            .encode(values)
            .map_err(|e| StorageError::Other(format!("index \"{}\": {e}", self.def.name)))
    }

    /// The key of heap tuple `t` (a row of the table) into `out`.
    pub fn key_of_tuple(&self, t: &[u8], out: &mut EncodedKey) -> Result<(), StorageError> {
        self.tuple_keys().encode(Some(self.db), t, out)
    }

    /// What encodes this index's keys from heap tuples, apart from the
    /// open index (a bulk load encodes keys on another thread).
    pub fn tuple_keys(&self) -> TupleKeys {
        TupleKeys {
            index_name: self.def.name.clone(),
            columns: self.def.columns.iter().map(|c| c.attno).collect(),
            table_types: self.table.column_types(),
            encoder: self.encoder.clone(),
        }
    }

    /// PostgreSQL's error for a key too large to index (the row at `tid`).
    fn check_size(&self, key: &EncodedKey, tid: Tid) -> Result<(), StorageError> {
        let size = if key.pg_size > PG_MAX_INDEX_TUPLE {
            key.pg_size
        } else if key.bytes.len() > MAX_KEY {
            (key.bytes.len() + 8)
                .next_multiple_of(8)
                .max(PG_MAX_INDEX_TUPLE + 8)
        } else {
            return Ok(());
        };
        Err(StorageError::Report(Box::new(ErrorReport {
            code: "54000",
            message: format!(
                "index row size {size} exceeds btree version 4 maximum {PG_MAX_INDEX_TUPLE} for index \"{}\"",
                self.def.name
            ),
            detail: Some(format!(
                "Index row references tuple ({},{}) in relation \"{}\".",
                tid.block, tid.item, self.table.name
            )),
            hint: Some(
                "Values larger than 1/3 of a buffer page cannot be indexed.\n\
                 Consider a function index of an MD5 hash of the value, or use full text indexing."
                    .into(),
            ),
        })))
    }

    /// Inserts the entry for the row at `tid` (a HOT chain root: the
    /// version the heap insertion or a non-HOT update made) on behalf of
    /// `w`; checks uniqueness in a unique index (see `unique`).
    pub fn insert(
        &self,
        key: &EncodedKey,
        tid: Tid,
        w: &mut dyn IndexWriter,
    ) -> Result<InsertOutcome, StorageError> {
        self.check_size(key, tid)?;
        if self.def.unique() {
            self.tree
                .insert_unique(self.db, self.def.table, key, tid, w)
        } else {
            self.tree.insert(&key.bytes, tid, w.xid()?)?;
            Ok(InsertOutcome::Inserted)
        }
    }

    /// Inserts the entries of one batch of a bulk load: `keys[i]` for the
    /// row at `tids[i]`, rows in input order, on behalf of `w`. Returns
    /// the positions of the entries it left out, in input order, for the
    /// caller to insert one at a time with [`Index::insert`], which raises
    /// the error or waits as the row-at-a-time path would: all of them
    /// when a key is too large or two keys of a unique index are equal,
    /// else those from the first whose unique check found a conflict or a
    /// running writer (see `batch`).
    pub fn insert_batch(
        &self,
        keys: &[EncodedKey],
        tids: &[Tid],
        w: &mut dyn IndexWriter,
    ) -> Result<Vec<usize>, StorageError> {
        assert_eq!(keys.len(), tids.len(), "one TID per key");
        let all = || (0..keys.len()).collect();
        if keys
            .iter()
            .zip(tids)
            .any(|(k, &t)| self.check_size(k, t).is_err())
        {
            return Ok(all());
        }
        let mut order: Vec<usize> = (0..keys.len()).collect();
        let entry = |i: usize| BatchEntry {
            key: &keys[i].bytes,
            has_null: keys[i].has_null,
            tid: tids[i],
        };
        let sorted = |a: &BatchEntry<'_>, b: &BatchEntry<'_>| (a.key, a.tid) < (b.key, b.tid);
        if !order.windows(2).all(|p| sorted(&entry(p[0]), &entry(p[1]))) {
            order.sort_unstable_by(|&a, &b| {
                (&keys[a].bytes, tids[a]).cmp(&(&keys[b].bytes, tids[b]))
            });
        }
        let entries: Vec<BatchEntry<'_>> = order.iter().map(|&i| entry(i)).collect();
        let done =
            self.tree
                .insert_sorted(self.db, self.def.table, &entries, self.def.unique(), w)?;
        let mut rest = order.split_off(done);
        rest.sort_unstable();
        Ok(rest)
    }

    /// The live row whose key equals `key` (INSERT ... ON CONFLICT; see
    /// `unique`), after waiting for running writers of such rows.
    pub fn find_conflict(
        &self,
        key: &EncodedKey,
        w: &mut dyn IndexWriter,
    ) -> Result<Option<Tid>, StorageError> {
        self.tree.find_conflict(self.db, self.def.table, key, w)
    }

    /// A cursor over the entries within `bounds`.
    pub fn scan(&self, bounds: ScanBounds, dir: Direction) -> Result<Cursor, StorageError> {
        self.tree.scan(bounds, dir)
    }

    /// Builds the (new, empty) index from the table's rows that `snapshot`
    /// sees, pointing entries at HOT chain roots, as `xid` (CREATE INDEX),
    /// sorting within `maintenance_work_mem` bytes.
    pub fn build(
        &self,
        snapshot: Snapshot,
        xid: Xid,
        maintenance_work_mem: usize,
    ) -> Result<BuildOutcome, StorageError> {
        let pool = &self.db.pool;
        let nblocks = pool.nblocks(self.def.table)?;
        let mut vis = Visibility::new(&self.db.txn, snapshot);
        let mut build = IndexBuild::with_budget(maintenance_work_mem, self.db.temp_dir());
        let mut key = EncodedKey::default();
        let mut tids = Vec::new();
        let mut keys = Vec::new();
        for block in 0..nblocks {
            tids.clear();
            keys.clear();
            let mut err = Ok(());
            heap::scan_page(pool, self.def.table, block, &mut vis, |item, t| {
                if err.is_ok() {
                    err = self.key_of_tuple(t, &mut key);
                    tids.push(Tid { block, item });
                    keys.push(key.clone());
                }
            })?;
            err?;
            heap::index_tids(pool, self.def.table, &mut tids)?;
            for (k, &tid) in keys.iter().zip(&tids) {
                self.check_size(k, tid)?;
                build.push(k, tid)?;
            }
        }
        build.finish(&self.tree, self.def.unique(), xid)
    }
}

/// Encodes one index's keys from heap tuples of its table (see
/// [`Index::tuple_keys`]).
#[derive(Debug, Clone)]
pub struct TupleKeys {
    index_name: String,
    /// The key columns' attribute numbers, in key order.
    columns: Vec<usize>,
    table_types: Vec<DataType>,
    encoder: KeyEncoder,
}

impl TupleKeys {
    /// The key of heap tuple `t` into `out`. A toasted value is read
    /// through `db` (a tuple being built has none).
    pub fn encode(
        &self,
        db: Option<&Database>,
        t: &[u8],
        out: &mut EncodedKey,
    ) -> Result<(), StorageError> {
        let last = self.columns.iter().copied().max().unwrap_or(0);
        let mut attrs = vec![Attr::Null; last + 1];
        tuple::walk(t, &self.table_types, last, |i, a| attrs[i] = a);
        let mut detoasted: Vec<Vec<u8>> = Vec::new();
        for &c in &self.columns {
            if let Attr::Toasted(form) = attrs[c] {
                let db = db.ok_or_else(|| {
                    StorageError::Other("a toasted value needs its database".into())
                })?;
                let mut v = Vec::new();
                toast::detoast(db, form, &mut v)?;
                detoasted.push(v);
            }
        }
        let mut next = detoasted.iter();
        let values: Vec<Datum<'_>> = self
            .columns
            .iter()
            .map(|&c| match Datum::of_attr(attrs[c]) {
                Some(d) => d,
                None => Datum::Text(next.next().expect("detoasted above")),
            })
            .collect();
        self.encoder
            .encode_into(&values, out)
            .map_err(|e| StorageError::Other(format!("index \"{}\": {e}", self.index_name)))
    }
}

/// `(a, b)=(1, x)`: PostgreSQL's description of a key for DETAIL lines,
/// from the key columns' names and the values as PostgreSQL's output
/// functions print them (`null` for NULL).
pub fn describe_key(columns: &[&str], values: &[&str]) -> String {
    format!("({})=({})", columns.join(", "), values.join(", "))
}

/// `duplicate key value violates unique constraint "name"` (23505) with
/// DETAIL `Key (a)=(1) already exists.`; `key` from [`describe_key`].
pub fn unique_violation(index_name: &str, key: &str) -> StorageError {
    StorageError::Report(Box::new(ErrorReport {
        code: "23505",
        message: format!("duplicate key value violates unique constraint \"{index_name}\""),
        detail: Some(format!("Key {key} already exists.")),
        hint: None,
    }))
}

/// `could not create unique index "name"` (23505) with DETAIL `Key
/// (a)=(1) is duplicated.`; `key` from [`describe_key`].
pub fn duplicate_key_error(index_name: &str, key: &str) -> StorageError {
    StorageError::Report(Box::new(ErrorReport {
        code: "23505",
        message: format!("could not create unique index \"{index_name}\""),
        detail: Some(format!("Key {key} is duplicated.")),
        hint: None,
    }))
}
