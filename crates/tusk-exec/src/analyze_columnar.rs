//! ANALYZE's sample of a columnar table (see `analyze` for the heap's and
//! for the statistics computed from it).
//!
//! A columnar table's rows live in compressed row groups, not in heap
//! blocks, so the heap's two-stage block sample does not apply. The sample
//! is instead Knuth's selection sampling over row positions: the rows the
//! metadata counts (`columnar::estimate_size`: the row groups' rows less
//! their deletions, plus the delta's estimate) are numbered in scan order
//! and up to `target` positions are chosen uniformly at random, in order;
//! then one sequential scan of the analyzed columns (the executor's
//! columnar scan, with the statement's snapshot, so that exactly the
//! visible rows are numbered) keeps the rows at those positions. Columns
//! not analyzed are never decoded. The scan also counts the visible rows,
//! which become the table's `reltuples`. If the count was low (rows
//! inserted since it was read) the rows past it are not sampled; if high,
//! the sample is a little smaller. The generator is seeded from the
//! table's OID, as the heap sample's is.

use crate::analyze::Sample;
use crate::error::Result;
use crate::operator::{ExecContext, Operator};
use crate::plan::{ColumnarSpec, NodeKind, Plan};
use crate::vector::{Batch, Vector};
use crate::Estimate;
use std::sync::Arc;
use tusk_storage::{DataType, Database, Snapshot};

/// Samples up to `target_rows` rows of columnar table `oid` (column types
/// `table_types`) as `snapshot` sees them, keeping attributes `columns`.
pub fn sample_columnar(
    db: &Arc<Database>,
    snapshot: &Snapshot,
    oid: u32,
    table_types: &[DataType],
    columns: &[usize],
    target_rows: usize,
) -> Result<Sample> {
    let (pages, counted) = tusk_storage::columnar::estimate_size(db, oid)?;
    let counted = counted.max(0.0) as u64;
    let mut rng = crate::analyze::Rng::seeded(oid);
    let chosen = crate::analyze::choose_positions(counted, target_rows, &mut rng);
    let types: Vec<DataType> = columns.iter().map(|&a| table_types[a]).collect();
    let plan = Plan::new(
        NodeKind::SeqScan {
            table: String::new(),
            alias: String::new(),
            oid,
            table_types: table_types.to_vec(),
            columns: columns.to_vec(),
            with_tid: false,
            filter: None,
            parallel: false,
            columnar: Some(Box::new(ColumnarSpec::default())),
        },
        vec![],
        types.clone(),
        vec![String::new(); types.len()],
        Estimate::default(),
    );
    let ctx = ExecContext {
        db: db.clone(),
        snapshot: snapshot.clone(),
        work_mem: 4 << 20,
        hash_mem_multiplier: 2.0,
        stats: None,
        spill: crate::spill::SpillStats::new(None),
        parallel: None,
        participant: 0,
        prefetch: false,
        hash_chunk_size: 1 << 16,
        interrupt: crate::interrupt::Interrupt::new(),
        env: Default::default(),
        ctes: Default::default(),
        key_filters: Default::default(),
        params: Default::default(),
    };
    let mut scan = crate::columnar_scan::ColumnarScan::new(&plan, &ctx)?;
    let mut out: Vec<Vector> = types
        .iter()
        .map(|&t| Vector::with_capacity(t, chosen.len()))
        .collect();
    let (mut seen, mut next) = (0u64, 0usize);
    while let Some(batch) = scan.next()? {
        let end = seen + batch.len as u64;
        while next < chosen.len() && chosen[next] < end {
            let row = (chosen[next] - seen) as usize;
            for (o, c) in out.iter_mut().zip(&batch.columns) {
                o.push_from(c, row);
            }
            next += 1;
        }
        seen = end;
    }
    Ok(Sample {
        rows: Batch::new(out, next),
        total_rows: seen as f64,
        pages: pages as u32,
    })
}
