//! Sequential scan of a columnar table (see `tusk_storage::columnar`).
//!
//! The scan reads the table's row groups, then its row-wise delta (an
//! ordinary heap scan, [`SeqScan`], over the same plan node). For the row
//! groups:
//!
//! 1. **Directory.** The metadata heap is read with the statement's
//!    snapshot ([`Directory::read`]): the row groups it sees, and for each
//!    the rows it sees deleted.
//! 2. **Skip.** A row group's header holds each segment's NULL count and
//!    bounds; a group that cannot hold a row passing one of the plan's
//!    [`SkipKey`](crate::plan::SkipKey)s is not read further (see `skip`).
//! 3. **Dictionary keys.** A skip key `=` / `IN` on a `text`, `varchar` or
//!    `char(n)` column whose segment is dictionary-encoded is tested once per
//!    dictionary entry; rows whose code fails drop out before anything else
//!    is decoded (they would fail the filter, of which the key is a
//!    conjunct), and the column's strings are made only for the rows that
//!    are left. The entry is compared as `=` compares: for `char(n)` with
//!    `char(n)` values, without trailing blanks; otherwise bytewise.
//! 4. **Dictionary terms.** A filter term that reads one string column
//!    and cannot raise an error (`LIKE '%BRASS'`) is, on a row group where
//!    that column's segment is dictionary-encoded, evaluated once per
//!    entry and tested on the rows' codes; the rest of the filter is
//!    evaluated without it (see `dict`).
//! 5. **Filter first.** A batch of rows is decoded column by column, and
//!    only the columns the filter reads are decoded before it runs —
//!    straight into vectors (`decode`), without the deleted rows, which
//!    never reach the filter as invisible heap rows never do. The other
//!    columns are decoded only for a batch where some row passed (and a
//!    batch where none did skips them), and only for the rows that passed
//!    when those are few (`decode::decode_rows`). Segments are fetched
//!    from their pages when a column is first needed in a group: columns
//!    the query does not read are never touched.
//! 6. **Join key filter.** A scan that is the probe side of a hash join
//!    that drops unmatched probe rows gets the join's keys; once the join
//!    has read its build side, the keys of the rows the filter kept are
//!    tested against the join's filter of build keys, and rows that cannot
//!    match drop out before the other columns are decoded. When the
//!    filter cannot raise an error (`Expr::cannot_raise`), the key test
//!    comes first and the filter is evaluated only on the rows it kept: no
//!    error can be missed, and the rows that pass both are the same (see
//!    `crate::keyfilter`; EXPLAIN ANALYZE: `tusk: rows removed by join key
//!    filter`).
//!
//! With a TID column (UPDATE, DELETE) each row of a group carries its
//! [`RowId`] as a TID, which `Transaction::delete` / `update` route back
//! to the columnar storage.
//!
//! ## Parallel
//!
//! Under a Gather the participants share a [`ColumnarShared`]: a counter
//! that hands out row groups one at a time (each is about fifty batches of
//! work), then the delta's blocks through the heap scan's own counter.
//! Every participant reads the directory itself; with one snapshot they
//! read the same list, so the counter's positions mean the same group to
//! all. Under EXPLAIN ANALYZE the participant that finishes last adds the
//! line `Columnar: row groups N, skipped M` (groups seen, groups skipped by
//! their statistics) to the node.

mod decode;
mod dict;
mod skip;

use crate::error::Result;
use crate::expr::{eval_all, strip_blanks, Expr};
use crate::keyfilter::{KeyFilter, ADAPT_ROWS, KEEP_RATE_LIMIT};
use crate::operator::{ExecContext, Operator};
use crate::parallel::NodeShared;
use crate::plan::{NodeKind, Plan};
use crate::scan::{ScanShared, SeqScan};
use crate::vector::{Batch, Data, Strings, Vector, BATCH_SIZE};
use dict::{DictTerm, GroupFilter};
use skip::Skip;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tusk_storage::columnar::{
    ColumnDecoder, Directory, GroupEntry, GroupReader, RowGroupHeader, RowId,
};
use tusk_storage::heap::Visibility;
use tusk_storage::{DataType, Database, Snapshot};

/// A selection of fewer than 1/SPARSE_FRACTION of a batch's rows is
/// decoded row run by row run (see [`decode::decode_rows`]).
const SPARSE_FRACTION: usize = 8;

/// What the participants of a parallel columnar scan share.
pub struct ColumnarShared {
    /// The next row group (a position in the directory) to hand out.
    next_group: AtomicUsize,
    /// The delta's blocks.
    delta: Arc<ScanShared>,
    participants: usize,
    finished: AtomicUsize,
    groups: AtomicU64,
    skipped: AtomicU64,
    /// Rows the join key filter removed, all participants'.
    key_removed: AtomicU64,
    /// The key filter of the Parallel Hash Join above (see `keyfilter`),
    /// made by the first participant's join.
    key_filter: OnceLock<Arc<KeyFilter>>,
}

impl NodeShared for ColumnarShared {}

impl ColumnarShared {
    /// The key filter the participants' Parallel Hash Join fills for
    /// this scan, made by the first to ask (sized for `rows` build rows,
    /// at most `max_bytes`).
    pub fn key_filter(&self, rows: f64, max_bytes: usize) -> Arc<KeyFilter> {
        self.key_filter
            .get_or_init(|| Arc::new(KeyFilter::for_rows(rows, max_bytes)))
            .clone()
    }
}

/// The join key filter's side of the scan: the join's probe keys over the
/// columns they read, and the filter once the join has made it.
struct KeyProbe {
    /// Output positions of the columns the keys read.
    columns: Vec<usize>,
    /// The keys, with column references renumbered to `columns`.
    keys: Vec<Expr>,
    /// Looked up when the first batch is read (the join exists by then).
    filter: Option<Arc<KeyFilter>>,
    looked_up: bool,
    tested: u64,
    kept: u64,
    /// Stopped testing: the filter kept nearly every row.
    off: bool,
    /// Test before the scan's filter: the filter cannot raise an error, so
    /// sparing it the rows the key filter drops changes no outcome.
    first: bool,
}

/// The filter over the columns it reads: those columns' output positions,
/// and the filter with its column references renumbered to them.
struct EarlyFilter {
    columns: Vec<usize>,
    expr: Expr,
}

impl EarlyFilter {
    /// `filter` (over output positions) over the columns it reads.
    fn over_read_columns(filter: Expr) -> EarlyFilter {
        let (columns, mut exprs) = over_read_columns(std::slice::from_ref(&filter));
        EarlyFilter {
            columns,
            expr: exprs.pop().expect("one filter"),
        }
    }
}

/// A skip key `=` / `IN` on a string column, as the dictionary test reads
/// it.
struct DictKey {
    /// Output position of the column.
    column: usize,
    /// The values' bytes (without trailing blanks when `bpchar`).
    values: Vec<Vec<u8>>,
    /// The comparison is `bpchar`'s: trailing blanks do not count.
    bpchar: bool,
}

/// A column's rows of the batch being read: decoded (all of them, or the
/// rows selected so far), or (a string key's dictionary column) its codes
/// and NULL flags, turned into strings only for the rows selected in the
/// end.
enum Raw {
    /// Decoded, every row of the batch.
    All(Vector),
    /// Decoded, the rows selected so far (in order).
    Selected(Vector),
    Codes {
        codes: Vec<u32>,
        nulls: Vec<bool>,
    },
    /// Handed out already.
    Used,
}

/// The row group being read.
struct Group {
    entry: GroupEntry,
    header: RowGroupHeader,
    /// Bitmap of the rows the snapshot sees deleted, if any.
    deleted: Option<Vec<u64>>,
    /// The next row to read.
    pos: usize,
    /// Per output column, its decoder once the column was needed.
    decoders: Vec<Option<ColumnDecoder>>,
    /// The dictionary terms' tests and the rest of the filter for this
    /// group, made at its first batch.
    filter: Option<GroupFilter>,
}

/// Sequential scan of a columnar table (see the module doc).
pub struct ColumnarScan {
    db: Arc<Database>,
    oid: u32,
    /// Table attribute of each output column (the TID column excluded).
    attrs: Vec<usize>,
    types: Vec<DataType>,
    with_tid: bool,
    /// The filter, over output positions.
    filter: Option<Expr>,
    /// Terms of the filter that may be tested on dictionaries.
    dict_terms: Vec<DictTerm>,
    skip: Vec<Skip>,
    /// Skip keys `=` / `IN` on string columns, tested on a dictionary
    /// segment's entries.
    dict_keys: Vec<DictKey>,
    key_probe: Option<KeyProbe>,
    /// Rows the join key filter removed.
    key_removed: u64,
    snapshot: Snapshot,
    ctx: ExecContext,
    id: usize,
    shared: Option<Arc<ColumnarShared>>,
    dir: Option<Directory>,
    /// The next directory position of a serial scan.
    next_serial: usize,
    group: Option<Group>,
    delta: SeqScan,
    /// Every row group has been handed out.
    groups_done: bool,
    groups: u64,
    skipped: u64,
    done: bool,
}

impl ColumnarScan {
    /// The shared state of a parallel columnar scan with `participants`.
    pub fn init_shared(participants: usize) -> Arc<ColumnarShared> {
        Arc::new(ColumnarShared {
            next_group: AtomicUsize::new(0),
            delta: SeqScan::init_shared(),
            participants,
            finished: AtomicUsize::new(0),
            groups: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            key_removed: AtomicU64::new(0),
            key_filter: OnceLock::new(),
        })
    }

    pub fn new(plan: &Plan, ctx: &ExecContext) -> Result<ColumnarScan> {
        let NodeKind::SeqScan {
            oid,
            table_types,
            columns,
            with_tid,
            filter,
            parallel,
            columnar,
            ..
        } = &plan.kind
        else {
            unreachable!()
        };
        let shared = if *parallel {
            Some(ctx.shared_state::<ColumnarShared>(plan.id, "Parallel Seq Scan")?)
        } else {
            None
        };
        let delta = SeqScan::with_shared(plan, ctx, shared.as_ref().map(|s| s.delta.clone()))?;
        let key_probe = columnar
            .as_ref()
            .filter(|spec| !spec.join_keys.is_empty())
            .map(|spec| {
                let (columns, keys) = over_read_columns(&spec.join_keys);
                KeyProbe {
                    columns,
                    keys,
                    filter: None,
                    looked_up: false,
                    tested: 0,
                    kept: 0,
                    off: false,
                    first: filter.as_ref().is_none_or(Expr::cannot_raise),
                }
            });
        let skip = match columnar {
            Some(spec) => skip::prepare(&spec.skip)?,
            None => Vec::new(),
        };
        let types: Vec<DataType> = columns.iter().map(|&a| table_types[a]).collect();
        let dict_terms = filter
            .as_ref()
            .map_or_else(Vec::new, |f| dict::dict_terms(f, &types));
        let specs = columnar.as_ref().map_or(&[][..], |s| &s.skip[..]);
        let dict_keys = skip
            .iter()
            .zip(specs)
            .filter_map(|(k, spec)| {
                let bpchar = match types.get(k.column)? {
                    DataType::Text | DataType::Varchar => false,
                    // `=` compares as `bpchar` (trailing blanks ignored)
                    // only when the values are `bpchar` too, as in
                    // `compare::is_bpchar`; otherwise bytewise.
                    DataType::Bpchar => spec
                        .values
                        .iter()
                        .all(|v| v.data_type() == DataType::Bpchar),
                    _ => return None,
                };
                let mut values = k.string_values()?;
                if bpchar {
                    for v in &mut values {
                        v.truncate(strip_blanks(v).len());
                    }
                }
                Some(DictKey {
                    column: k.column,
                    values,
                    bpchar,
                })
            })
            .collect();
        Ok(ColumnarScan {
            db: ctx.db.clone(),
            oid: *oid,
            attrs: columns.clone(),
            types,
            with_tid: *with_tid,
            filter: filter.clone(),
            dict_terms,
            skip,
            dict_keys,
            key_probe,
            key_removed: 0,
            snapshot: ctx.snapshot.clone(),
            ctx: ctx.clone(),
            id: plan.id,
            shared,
            dir: None,
            next_serial: 0,
            group: None,
            delta,
            groups_done: false,
            groups: 0,
            skipped: 0,
            done: false,
        })
    }

    /// The next row group to read, with its header; `None` when there are
    /// no more. Groups the skip keys rule out are counted and passed over.
    fn next_group(&mut self) -> Result<Option<Group>> {
        if self.dir.is_none() {
            let mut vis = Visibility::new(&self.db.txn, self.snapshot.clone());
            self.dir = Some(Directory::read(&self.db, self.oid, &mut vis)?);
        }
        let dir = self.dir.as_ref().expect("read above");
        loop {
            let i = match &self.shared {
                Some(s) => s.next_group.fetch_add(1, Ordering::Relaxed),
                None => {
                    self.next_serial += 1;
                    self.next_serial - 1
                }
            };
            let Some(&entry) = dir.groups.get(i) else {
                return Ok(None);
            };
            self.groups += 1;
            let reader = GroupReader::new(
                &self.db.pool,
                self.oid,
                entry.first_block,
                entry.stream_len as usize,
            );
            let header = reader.header()?;
            let ruled_out = self.skip.iter().any(|k| {
                let attr = self.attrs[k.column];
                header
                    .columns
                    .get(attr)
                    .is_some_and(|seg| !skip::may_match(k, &seg.stats, header.rows))
            });
            if ruled_out {
                self.skipped += 1;
                continue;
            }
            let deleted = (!dir.deleted[i].is_empty()).then(|| {
                let mut bits = vec![0u64; (entry.rows as usize).div_ceil(64)];
                for &r in &dir.deleted[i] {
                    if let Some(w) = bits.get_mut(r as usize / 64) {
                        *w |= 1 << (r % 64);
                    }
                }
                bits
            });
            return Ok(Some(Group {
                entry,
                header,
                deleted,
                pos: 0,
                decoders: (0..self.attrs.len()).map(|_| None).collect(),
                filter: None,
            }));
        }
    }

    /// The decoder of output column `col` in group `g`, fetched and
    /// positioned at the group's next row on first use.
    fn decoder<'g>(&self, g: &'g mut Group, col: usize) -> Result<&'g mut ColumnDecoder> {
        if g.decoders[col].is_none() {
            let attr = self.attrs[col];
            let info = g.header.columns.get(attr).ok_or_else(|| {
                tusk_storage::StorageError::Other(format!(
                    "columnar row group at block {} lacks column {}",
                    g.entry.first_block,
                    attr + 1
                ))
            })?;
            let reader = GroupReader::new(
                &self.db.pool,
                self.oid,
                g.entry.first_block,
                g.entry.stream_len as usize,
            );
            let mut seg = Vec::new();
            reader.segment(info, &mut seg)?;
            let mut d = ColumnDecoder::new(seg, self.types[col], g.header.rows as usize)?;
            d.skip(g.pos);
            g.decoders[col] = Some(d);
        }
        Ok(g.decoders[col].as_mut().expect("set above"))
    }

    /// Column `col`'s next `n` rows in `raws` (decoded now if they are not
    /// there yet).
    fn decode_raw(
        &self,
        g: &mut Group,
        raws: &mut [Option<Raw>],
        col: usize,
        n: usize,
    ) -> Result<()> {
        if raws[col].is_none() {
            let dec = self.decoder(g, col)?;
            raws[col] = Some(Raw::All(decode::decode(dec, n, self.types[col])));
        }
        Ok(())
    }

    /// The next batch of group `g`'s rows that are visible and pass the
    /// filter; `None` when a batch's worth of rows had none. Rows are
    /// narrowed down step by step — visibility, the dictionary test of
    /// string keys, the filter — and each column is decoded when a step
    /// first needs it, for the batch's `n` rows, then gathered for the rows
    /// still selected.
    fn read_batch(&mut self, g: &mut Group) -> Result<Option<Batch>> {
        let n = BATCH_SIZE.min(g.header.rows as usize - g.pos);
        let start = g.pos;
        // The selected rows, relative to `start` (`None`: all of them).
        let mut sel: Option<Vec<u32>> = g.deleted.as_ref().map(|bits| {
            (0..n as u32)
                .filter(|&i| {
                    let r = start + i as usize;
                    bits[r / 64] & (1 << (r % 64)) == 0
                })
                .collect()
        });
        let visible_count = sel.as_ref().map_or(n, Vec::len);
        let mut raws: Vec<Option<Raw>> = (0..self.attrs.len()).map(|_| None).collect();
        // String keys on dictionary segments: test each entry once.
        for k in 0..self.dict_keys.len() {
            if sel.as_ref().is_some_and(Vec::is_empty) {
                break;
            }
            let key = &self.dict_keys[k];
            let (col, bpchar) = (key.column, key.bpchar);
            if !self.read_codes(g, &mut raws, col, n)? {
                continue;
            }
            let dict = self.decoder(g, col)?.dictionary().expect("a dictionary");
            let wanted = &self.dict_keys[k].values;
            let pass: Vec<bool> = dict
                .iter()
                .map(|&e| {
                    let e = if bpchar { strip_blanks(e) } else { e };
                    wanted.iter().any(|w| w.as_slice() == e)
                })
                .collect();
            select_codes(&raws[col], &mut sel, n, &pass, false);
        }
        // Filter terms on dictionary segments: tested on the codes.
        if g.filter.is_none() {
            g.filter = Some(self.group_filter(g)?);
        }
        let tests = g.filter.as_ref().map_or(0, |f| f.tests.len());
        for t in 0..tests {
            if sel.as_ref().is_some_and(Vec::is_empty) {
                break;
            }
            let col = g.filter.as_ref().expect("made above").tests[t].column;
            self.read_codes(g, &mut raws, col, n)?;
            let test = &g.filter.as_ref().expect("made above").tests[t];
            select_codes(&raws[col], &mut sel, n, &test.pass, test.null_pass);
        }
        let mut removed = visible_count - sel.as_ref().map_or(n, Vec::len);
        let key_first = self.key_probe.as_ref().is_some_and(|k| k.first);
        if key_first {
            self.key_step(g, &mut raws, &mut sel, n, start)?;
        }
        removed += self.filter_step(g, &mut raws, &mut sel, n, start)?;
        self.ctx.add_removed(self.id, removed as u64);
        if !key_first {
            self.key_step(g, &mut raws, &mut sel, n, start)?;
        }
        let out_rows = sel.as_ref().map_or(n, Vec::len);
        let mut columns = Vec::with_capacity(self.attrs.len() + usize::from(self.with_tid));
        if out_rows > 0 {
            for c in 0..self.attrs.len() {
                columns.push(self.column(g, &mut raws, c, n, sel.as_deref())?);
                // Decoded, so not to be skipped below.
                raws[c] = Some(Raw::Used);
            }
            if self.with_tid {
                columns.push(self.tids(g, start, sel.as_deref(), n));
            }
        }
        // Columns no step needed pass over the batch.
        for (d, raw) in g.decoders.iter_mut().zip(&raws) {
            if let (Some(d), None) = (d, raw) {
                d.skip(n);
            }
        }
        g.pos += n;
        Ok((out_rows > 0).then(|| Batch::new(columns, out_rows)))
    }

    /// Column `col`'s dictionary codes for the batch's `n` rows in `raws`
    /// (read now if the column is not there yet); false when the column's
    /// segment is not a dictionary or its rows are decoded already.
    fn read_codes(
        &self,
        g: &mut Group,
        raws: &mut [Option<Raw>],
        col: usize,
        n: usize,
    ) -> Result<bool> {
        match &raws[col] {
            Some(Raw::Codes { .. }) => return Ok(true),
            Some(_) => return Ok(false),
            None => {}
        }
        let dec = self.decoder(g, col)?;
        if !dec.is_dictionary() {
            return Ok(false);
        }
        let (mut codes, mut nulls) = (Vec::with_capacity(n), Vec::with_capacity(n));
        dec.next_nulls(n, &mut nulls);
        dec.next_codes(n, &mut codes);
        raws[col] = Some(Raw::Codes { codes, nulls });
        Ok(true)
    }

    /// Group `g`'s dictionary tests (the dictionary terms whose column's
    /// segment is a dictionary there) and the rest of the filter.
    fn group_filter(&self, g: &mut Group) -> Result<GroupFilter> {
        let mut tests = Vec::new();
        let mut handled = Vec::new();
        for term in &self.dict_terms {
            let dec = self.decoder(g, term.column)?;
            if let Some(entries) = dec.dictionary() {
                tests.push(dict::test_entries(term, &entries)?);
                handled.push(term.term());
            }
        }
        let rest = match &self.filter {
            Some(f) if !handled.is_empty() => dict::rest_of(f, &handled),
            Some(f) => Some(EarlyFilter::over_read_columns(f.clone())),
            None => None,
        };
        Ok(GroupFilter { tests, rest })
    }

    /// The filter over the selected rows (group `g`'s rest of it, see
    /// `dict`): narrows the selection to the rows it keeps and returns how
    /// many it removed.
    fn filter_step(
        &self,
        g: &mut Group,
        raws: &mut [Option<Raw>],
        sel: &mut Option<Vec<u32>>,
        n: usize,
        start: usize,
    ) -> Result<usize> {
        if sel.as_ref().is_some_and(Vec::is_empty) {
            return Ok(0);
        }
        let Some(early) = g.filter.as_mut().and_then(|f| f.rest.take()) else {
            return Ok(0);
        };
        let rows = sel.as_ref().map_or(n, Vec::len);
        let cols = self.selected(g, raws, sel.as_deref(), n, start, &early.columns);
        let outcome = cols.and_then(|cols| {
            let b = Batch::new(cols, rows);
            let ok = early.expr.eval_qual(&b)?;
            self.keep_selected(raws, &early.columns, b.columns);
            Ok(narrow(raws, sel, &ok))
        });
        g.filter.as_mut().expect("taken above").rest = Some(early);
        outcome
    }

    /// The join key filter over the selected rows, once the join has
    /// published it: narrows the selection to the rows whose keys may
    /// match.
    fn key_step(
        &mut self,
        g: &mut Group,
        raws: &mut [Option<Raw>],
        sel: &mut Option<Vec<u32>>,
        n: usize,
        start: usize,
    ) -> Result<()> {
        if sel.as_ref().is_some_and(Vec::is_empty) {
            return Ok(());
        }
        let Some(filter) = self.ready_key_filter() else {
            return Ok(());
        };
        let kp = self.key_probe.as_ref().expect("a key probe");
        let rows = sel.as_ref().map_or(n, Vec::len);
        let cols = self.selected(g, raws, sel.as_deref(), n, start, &kp.columns)?;
        let b = Batch::new(cols, rows);
        let kv = eval_all(&kp.keys, &b)?;
        let ok = filter.test(&kv, rows);
        let columns = kp.columns.clone();
        self.keep_selected(raws, &columns, b.columns);
        let dropped = narrow(raws, sel, &ok);
        self.key_removed += dropped as u64;
        let kp = self.key_probe.as_mut().expect("a key probe");
        kp.tested += rows as u64;
        kp.kept += (rows - dropped) as u64;
        if kp.tested >= ADAPT_ROWS && kp.kept as f64 > kp.tested as f64 * KEEP_RATE_LIMIT {
            kp.off = true;
        }
        Ok(())
    }

    /// Column `col`'s rows `sel` (all `n` without) of the batch, taken out
    /// of `raws`. A column not decoded yet is decoded for those rows only
    /// when they are fewer than an eighth of the batch (`decode_rows`: the
    /// gaps cost little to pass over), else for all rows and gathered.
    fn column(
        &self,
        g: &mut Group,
        raws: &mut [Option<Raw>],
        col: usize,
        n: usize,
        sel: Option<&[u32]>,
    ) -> Result<Vector> {
        if raws[col].is_none() {
            if let Some(rows) = sel.filter(|s| s.len() * SPARSE_FRACTION < n) {
                let ty = self.types[col];
                let dec = self.decoder(g, col)?;
                return Ok(decode::decode_rows(dec, n, ty, rows));
            }
        }
        self.decode_raw(g, raws, col, n)?;
        let raw = raws[col].take().expect("decoded above");
        Ok(self.materialize(g, raw, sel, col))
    }

    /// Columns `cols` (output positions; past the table's columns, the
    /// TID column) of the batch's rows `sel` (all `n` without), decoded
    /// when not yet. The table's columns are taken out of `raws`: give
    /// them back with [`ColumnarScan::keep_selected`].
    fn selected(
        &self,
        g: &mut Group,
        raws: &mut [Option<Raw>],
        sel: Option<&[u32]>,
        n: usize,
        start: usize,
        cols: &[usize],
    ) -> Result<Vec<Vector>> {
        let mut out = Vec::with_capacity(cols.len());
        for &c in cols {
            out.push(if c < self.attrs.len() {
                self.column(g, raws, c, n, sel)?
            } else {
                // A filter on the TID column (none are planned).
                self.tids(g, start, sel, n)
            });
        }
        Ok(out)
    }

    /// Puts the vectors [`ColumnarScan::selected`] made back as the
    /// columns' rows selected so far.
    fn keep_selected(&self, raws: &mut [Option<Raw>], cols: &[usize], vectors: Vec<Vector>) {
        for (&c, v) in cols.iter().zip(vectors) {
            if c < self.attrs.len() {
                raws[c] = Some(Raw::Selected(v));
            }
        }
    }

    /// The join key filter, when the join above has published it and it
    /// still pays (see `keyfilter`).
    fn ready_key_filter(&mut self) -> Option<Arc<KeyFilter>> {
        let kp = self.key_probe.as_mut()?;
        if kp.off {
            return None;
        }
        if !kp.looked_up {
            kp.looked_up = true;
            let local = self.ctx.key_filters.borrow().get(&self.id).cloned();
            kp.filter = local.or_else(|| {
                self.shared
                    .as_ref()
                    .and_then(|s| s.key_filter.get().cloned())
            });
        }
        kp.filter.as_ref().filter(|f| f.is_ready()).cloned()
    }

    /// Column `col` (of `raw`) for the rows `sel` (all without).
    fn materialize(&self, g: &Group, raw: Raw, sel: Option<&[u32]>, col: usize) -> Vector {
        match raw {
            Raw::All(v) => match sel {
                Some(idx) => v.gather(idx),
                None => v,
            },
            Raw::Selected(v) => v,
            Raw::Codes { codes, nulls } => {
                let dec = g.decoders[col]
                    .as_ref()
                    .expect("a dictionary column's decoder");
                let dict = dec.dictionary().expect("a dictionary segment");
                let mut s = Strings::with_capacity(sel.map_or(codes.len(), <[u32]>::len), 0);
                let mut flags = Vec::new();
                let mut push = |i: usize| {
                    s.push(dict[codes[i] as usize]);
                    flags.push(nulls[i]);
                };
                match sel {
                    Some(idx) => idx.iter().for_each(|&i| push(i as usize)),
                    None => (0..codes.len()).for_each(push),
                }
                Vector::new(Data::Text(s), Some(flags))
            }
            Raw::Used => unreachable!("a column is materialized once"),
        }
    }

    /// The row ids of `g`'s rows `start + i` for `i` in `sel` (all `n`
    /// without), as a TID column.
    fn tids(&self, g: &Group, start: usize, sel: Option<&[u32]>, n: usize) -> Vector {
        let group = g.entry.first_block;
        let tid = |i: u32| {
            RowId {
                group,
                row: start as u32 + i,
            }
            .to_tid()
            .to_u64() as i64
        };
        let tids = match sel {
            Some(idx) => idx.iter().map(|&i| tid(i)).collect(),
            None => (0..n as u32).map(tid).collect(),
        };
        Vector::new(Data::Int8(tids), None)
    }

    /// Records the scan's counts once every participant is done.
    fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let (groups, skipped, key_removed) = match &self.shared {
            Some(s) => {
                s.groups.fetch_add(self.groups, Ordering::Relaxed);
                s.skipped.fetch_add(self.skipped, Ordering::Relaxed);
                s.key_removed.fetch_add(self.key_removed, Ordering::Relaxed);
                if s.finished.fetch_add(1, Ordering::AcqRel) + 1 != s.participants {
                    return;
                }
                (
                    s.groups.load(Ordering::Relaxed),
                    s.skipped.load(Ordering::Relaxed),
                    s.key_removed.load(Ordering::Relaxed),
                )
            }
            None => (self.groups, self.skipped, self.key_removed),
        };
        self.ctx.note(
            self.id,
            format!("Columnar: row groups {groups}, skipped {skipped}"),
        );
        if self.key_probe.is_some() {
            self.ctx.note(
                self.id,
                format!("tusk: rows removed by join key filter: {key_removed}"),
            );
        }
    }
}

/// The renumbering of `exprs` to the columns they read: those columns'
/// output positions, ascending, and the expressions over them.
fn over_read_columns(exprs: &[Expr]) -> (Vec<usize>, Vec<Expr>) {
    let mut used = Vec::new();
    for e in exprs {
        e.columns(&mut used);
    }
    used.sort_unstable();
    used.dedup();
    let exprs = exprs
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.remap_columns(&|c| used.binary_search(&c).expect("a column read"));
            e
        })
        .collect();
    (used, exprs)
}

/// Narrows the selection `sel` to the rows whose dictionary code in `raw`
/// passes (`pass` per code, `null_pass` for NULL). No column has been
/// decoded for the selection yet (codes come first).
fn select_codes(
    raw: &Option<Raw>,
    sel: &mut Option<Vec<u32>>,
    n: usize,
    pass: &[bool],
    null_pass: bool,
) {
    let Some(Raw::Codes { codes, nulls }) = raw else {
        unreachable!("codes read")
    };
    let ok = |i: u32| {
        if nulls[i as usize] {
            null_pass
        } else {
            pass[codes[i as usize] as usize]
        }
    };
    *sel = Some(match sel.take() {
        Some(v) => v.into_iter().filter(|&i| ok(i)).collect(),
        None => (0..n as u32).filter(|&i| ok(i)).collect(),
    });
}

/// Narrows the selection `sel` (and the columns' vectors of the rows
/// selected so far) to the rows `ok` keeps, `ok` being one flag per row
/// selected; returns the number of rows dropped.
fn narrow(raws: &mut [Option<Raw>], sel: &mut Option<Vec<u32>>, ok: &[bool]) -> usize {
    if ok.iter().all(|&b| b) {
        return 0;
    }
    let positions: Vec<u32> = (0..ok.len() as u32).filter(|&i| ok[i as usize]).collect();
    for raw in raws.iter_mut().flatten() {
        if let Raw::Selected(v) = raw {
            *v = v.gather(&positions);
        }
    }
    let dropped = ok.len() - positions.len();
    *sel = Some(match sel.take() {
        Some(v) => positions.iter().map(|&p| v[p as usize]).collect(),
        None => positions,
    });
    dropped
}

impl Operator for ColumnarScan {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(mut g) = self.group.take() {
                if g.pos < g.header.rows as usize {
                    let b = self.read_batch(&mut g)?;
                    self.group = Some(g);
                    match b {
                        Some(b) => return Ok(Some(b)),
                        None => continue,
                    }
                }
            }
            if !self.groups_done {
                match self.next_group()? {
                    Some(g) => {
                        self.group = Some(g);
                        continue;
                    }
                    None => self.groups_done = true,
                }
            }
            let b = self.delta.next()?;
            if b.is_none() {
                self.finish();
            }
            return Ok(b);
        }
    }
}
