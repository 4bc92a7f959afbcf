//! The NULL rules of a null-aware mark join (`x IN (subquery)`).
//!
//! The mark of an outer row is the three-valued OR, over every inner row,
//! of the condition C = (every key equal) AND join filter (see
//! `plan::JoinKind`). Probing finds the inner rows with equal keys: C is
//! true for one of them (MATCHED) or NULL through the filter (NULL_SEEN).
//! What probing cannot see are the pairs where a key is NULL on one side:
//! C is then NULL unless another key differs or the filter is false. So an
//! outer row without a match gets
//!
//! * with no key NULL: NULL if some inner row with a NULL key is *compatible*
//!   with it (every key equal or NULL on one side) and the filter is not
//!   false for the pair, else false. Only inner rows with a NULL key can
//!   be, and the join keeps them apart from the table (`null_inner`; all
//!   participants' in a Parallel Hash Join);
//! * with a NULL key: false if the inner side is empty, else NULL if some
//!   inner row at all is compatible with it and the filter is not false for
//!   the pair ([`AllInner`]: the table, or the build partitions of a
//!   spilling join, and the inner rows with NULL keys).
//!
//! With one key and no filter both questions have constant answers: NULL
//! when there is an inner row with a NULL key (resp. any inner row). Only
//! with several keys or a filter are pairs compared, outer rows against
//! inner rows as in a nested loop; outer rows with a NULL key are then set
//! aside and compared at the end, in blocks, with one pass over every inner
//! row per block. (PostgreSQL's hashed SubPlan scans its table of rows with
//! NULLs for every such outer row too, and does not hash correlated
//! subqueries at all.)

use super::shared_table::{ChunkWriter, SharedTable};
use super::table::JoinTable;
use super::{HashJoin, Phase};
use crate::error::Result;
use crate::expr::eval_all;
use crate::hashkey::encode_row;
use crate::join::row_range;
use crate::plan::JoinKind;
use crate::spill::{decode_row, SpillFile, SpillReader};
use crate::vector::{Batch, Vector, BATCH_SIZE};
use std::sync::Arc;

use super::outer::{MATCHED, NULL_SEEN};

pub(super) fn is_null_aware(kind: JoinKind) -> bool {
    matches!(kind, JoinKind::Mark { null_aware: true })
}

/// Whether the NULL rules compare pairs (several keys, or a filter), and so
/// need every inner row at the end.
pub(super) fn needs_all_inner(kind: JoinKind, keys: usize, filter: bool) -> bool {
    is_null_aware(kind) && (keys > 1 || filter)
}

/// Where every inner row with no NULL key is, once the build is done.
pub(super) enum AllInner {
    /// The serial join's table.
    Local(Arc<JoinTable>),
    /// The level-0 build partitions of a spilling join (every participant's).
    Files(Vec<Arc<SpillFile>>),
    /// The Parallel Hash Join's table, with every participant's chunks.
    Shared(Arc<SharedTable>, Vec<(u32, usize)>),
}

impl AllInner {
    /// The serial table, when the join's NULL rules need it.
    pub(super) fn local(j: &HashJoin, t: Arc<JoinTable>) -> Option<AllInner> {
        needs_all_inner(j.kind(), j.outer_keys.len(), j.filter.is_some())
            .then_some(AllInner::Local(t))
    }

    /// Calls `f` with batches of every row until it returns false.
    fn for_each_batch(
        &self,
        j: &HashJoin,
        f: &mut dyn FnMut(&Batch) -> Result<bool>,
    ) -> Result<()> {
        let types = &j.out.inner_types;
        match self {
            AllInner::Local(t) => {
                let mut at = 0;
                while at < t.payload.len {
                    let end = (at + BATCH_SIZE).min(t.payload.len);
                    if !f(&t.payload.gather(&row_range(at, end)))? {
                        break;
                    }
                    at = end;
                }
            }
            AllInner::Files(files) => {
                let mut r = SpillReader::new(files, types.clone(), j.buf, j.ctx.spill.clone());
                while let Some((b, _)) = r.next_batch(BATCH_SIZE)? {
                    if !f(&b)? {
                        break;
                    }
                }
            }
            AllInner::Shared(table, extents) => {
                let empty = || types.iter().map(|&t| Vector::empty(t)).collect::<Vec<_>>();
                let (mut cols, mut n, mut scratch) = (empty(), 0, Vec::new());
                let mut go = true;
                table.for_each_tuple(extents, |_, bytes| {
                    if !go {
                        return Ok(());
                    }
                    let (_, row) = ChunkWriter::hash_and_row(table, bytes, &mut scratch);
                    decode_row(row, &mut cols);
                    n += 1;
                    if n == BATCH_SIZE {
                        go = f(&Batch::new(std::mem::replace(&mut cols, empty()), n))?;
                        n = 0;
                    }
                    Ok(())
                })?;
                if go && n > 0 {
                    f(&Batch::new(cols, n))?;
                }
            }
        }
        Ok(())
    }
}

/// Each key of each row encoded as `hashkey::encode_row` encodes it (so
/// that `integer` equals `bigint` and `1.0` equals `1.00`), or NULL.
struct KeyCodes {
    /// `ranges[key][row]`: the encoding's place in `arena`.
    ranges: Vec<Vec<Option<(u32, u32)>>>,
    arena: Vec<u8>,
}

impl KeyCodes {
    fn of(kv: &[Vector], n: usize) -> KeyCodes {
        let mut arena = Vec::new();
        let ranges = kv
            .iter()
            .map(|v| {
                (0..n)
                    .map(|r| {
                        let start = arena.len();
                        if encode_row(std::slice::from_ref(v), r, &mut arena) {
                            Some((start as u32, arena.len() as u32))
                        } else {
                            arena.truncate(start);
                            None
                        }
                    })
                    .collect()
            })
            .collect();
        KeyCodes { ranges, arena }
    }

    fn get(&self, key: usize, row: usize) -> Option<&[u8]> {
        self.ranges[key][row].map(|(a, b)| &self.arena[a as usize..b as usize])
    }

    /// Whether row `r` and row `i` of `other` have every key equal or NULL
    /// on one side (the key equalities are not false).
    fn compatible(&self, r: usize, other: &KeyCodes, i: usize) -> bool {
        (0..self.ranges.len()).all(|k| match (self.get(k, r), other.get(k, i)) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
    }
}

impl HashJoin {
    /// The marks of outer rows `batch` (states `state`, `key_null` telling
    /// the rows with a NULL key): the rows to emit now and their marks.
    /// Outer rows with a NULL key whose mark needs every inner row are set
    /// aside for the end (unless this is the end).
    pub(super) fn null_aware_marks(
        &mut self,
        batch: &Batch,
        state: &[u8],
        key_null: &[bool],
    ) -> Result<(Vec<u32>, Vec<Option<bool>>)> {
        let simple = !needs_all_inner(self.kind(), self.outer_keys.len(), self.filter.is_some());
        let at_end = self.phase == Phase::Finish;
        let null_inner = self.null_inner.iter().any(|s| !s.is_empty());
        let (mut rows, mut marks) = (Vec::new(), Vec::new());
        let (mut deferred, mut vs_null_inner, mut vs_all) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..batch.len {
            let mark = match state[r] {
                MATCHED => Some(true),
                NULL_SEEN => None,
                _ if key_null[r] && !self.inner_nonempty => Some(false),
                _ if key_null[r] && simple => None,
                _ if key_null[r] && !at_end => {
                    deferred.push(r as u32);
                    continue;
                }
                _ if key_null[r] => {
                    vs_all.push(r as u32);
                    continue;
                }
                _ if !null_inner => Some(false),
                _ if simple => None,
                _ => {
                    vs_null_inner.push(r as u32);
                    continue;
                }
            };
            rows.push(r as u32);
            marks.push(mark);
        }
        if !deferred.is_empty() {
            self.null_outer_store().push(batch.gather(&deferred))?;
        }
        for (list, all) in [(vs_null_inner, false), (vs_all, true)] {
            if list.is_empty() {
                continue;
            }
            let found = self.any_null_pair(batch, &list, all)?;
            rows.extend(&list);
            marks.extend(
                found
                    .into_iter()
                    .map(|f| if f { None } else { Some(false) }),
            );
        }
        Ok((rows, marks))
    }

    /// For each outer row `rows` of `batch`: whether some inner row — one
    /// with a NULL key, or (`all`) any — is compatible with it and the join
    /// filter is not false for the pair.
    fn any_null_pair(&self, batch: &Batch, rows: &[u32], all: bool) -> Result<Vec<bool>> {
        let ob = batch.gather(rows);
        let n = ob.len;
        let ocodes = KeyCodes::of(&eval_all(&self.outer_keys, &ob)?, n);
        let mut found = vec![false; n];
        let mut left = n;
        let mut visit = |ib: &Batch| -> Result<bool> {
            let icodes = KeyCodes::of(&eval_all(&self.inner_keys, ib)?, ib.len);
            let (mut oi, mut ii) = (Vec::new(), Vec::new());
            for (r, f) in found.iter_mut().enumerate() {
                if *f {
                    continue;
                }
                for i in 0..ib.len {
                    if !ocodes.compatible(r, &icodes, i) {
                        continue;
                    }
                    if self.filter.is_none() {
                        *f = true;
                        left -= 1;
                        break;
                    }
                    oi.push(r as u32);
                    ii.push(i as u32);
                }
            }
            if let Some(filter) = &self.filter {
                for (o, i) in oi.chunks(BATCH_SIZE).zip(ii.chunks(BATCH_SIZE)) {
                    let cols = filter
                        .inner_cols
                        .iter()
                        .map(|&c| ib.columns[c].gather(i))
                        .collect();
                    for (k, v) in filter.eval(&ob, o, cols)?.into_iter().enumerate() {
                        let f = &mut found[o[k] as usize];
                        if v != Some(false) && !*f {
                            *f = true;
                            left -= 1;
                        }
                    }
                }
            }
            Ok(left > 0)
        };
        for store in &self.null_inner {
            let mut c = store.cursor(&self.ctx.spill);
            while let Some(ib) = c.next_batch(store)? {
                if !visit(&ib)? {
                    return Ok(found);
                }
            }
        }
        if all {
            if let Some(a) = &self.all_inner {
                a.for_each_batch(self, &mut visit)?;
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use tusk_storage::DataType;

    fn vec_of(ty: DataType, v: &[Value]) -> Vector {
        let mut out = Vector::empty(ty);
        for x in v {
            out.push_value(x);
        }
        out
    }

    /// `integer` equals `bigint`; a NULL on either side is compatible with
    /// anything; one differing key makes a pair incompatible.
    #[test]
    fn compatibility_of_keys() {
        let o = KeyCodes::of(
            &[
                vec_of(DataType::Int4, &[Value::Int4(1), Value::Null]),
                vec_of(
                    DataType::Text,
                    &[Value::Text("a".into()), Value::Text("b".into())],
                ),
            ],
            2,
        );
        let i = KeyCodes::of(
            &[
                vec_of(
                    DataType::Int8,
                    &[Value::Int8(1), Value::Int8(2), Value::Null],
                ),
                vec_of(
                    DataType::Text,
                    &[
                        Value::Null,
                        Value::Text("a".into()),
                        Value::Text("b".into()),
                    ],
                ),
            ],
            3,
        );
        assert!(o.compatible(0, &i, 0));
        assert!(!o.compatible(0, &i, 1));
        assert!(!o.compatible(0, &i, 2));
        assert!(!o.compatible(1, &i, 1));
        assert!(o.compatible(1, &i, 2));
    }
}
