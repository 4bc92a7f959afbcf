//! The first half of a COPY FROM batch's work: its fields converted into
//! column vectors by each column's input function.
//!
//! A [`Converter`] knows the columns the input holds (which table column
//! each fills) and their [`ColumnParser`]s; [`Converter::convert`] turns a
//! [`RawBatch`] into a [`Converted`] batch. It needs nothing of the
//! database, so it runs on the pipeline's reading thread (see
//! `copy::pipeline`) while the loader stores the batch before.
//!
//! A parser stops at its column's first bad row; later columns then only
//! convert the rows before the earliest failure found so far, so the
//! failure kept is the one PostgreSQL meets first working row by row (the
//! earliest row, and in it the first input column).

use super::columns::{ColumnFailure, ColumnParser, Failed};
use super::reader::RawBatch;
use crate::cast::CastEnv;
use crate::vector::Vector;
use tusk_storage::TableDef;
use tusk_types::Settings;

/// Converts batches for one table (see the module doc).
#[derive(Debug, Clone)]
pub struct Converter {
    /// Per input column: the table column it fills.
    targets: Vec<usize>,
    /// Per table column: its parser.
    parsers: Vec<ColumnParser>,
    settings: Settings,
    now: i64,
}

/// The earliest conversion failure of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversionFailure {
    pub row: usize,
    /// The input column and the table column it fills.
    pub input_column: usize,
    pub table_column: usize,
    pub failure: ColumnFailure,
}

/// A batch with its input columns converted.
#[derive(Debug, Default)]
pub struct Converted {
    /// The fields (kept for context lines, and to be reused).
    pub batch: RawBatch,
    /// Per table column: its vector, if the input holds the column. Rows
    /// from the failure on may be missing.
    pub vectors: Vec<Option<Vector>>,
    pub failure: Option<ConversionFailure>,
}

impl Converter {
    /// A converter for input columns that fill `targets` of `table`,
    /// reading values with `settings` (`DateStyle`) and `now` (what
    /// `'now'` means).
    pub fn new(table: &TableDef, targets: Vec<usize>, settings: Settings, now: i64) -> Converter {
        Converter {
            targets,
            parsers: table
                .columns
                .iter()
                .map(|c| ColumnParser::new(c.ty))
                .collect(),
            settings,
            now,
        }
    }

    /// Converts every input column of `batch`.
    pub fn convert(&self, batch: RawBatch) -> Converted {
        let n = batch.rows();
        let env = CastEnv {
            settings: &self.settings,
            now: self.now,
        };
        let mut vectors: Vec<Option<Vector>> = vec![None; self.parsers.len()];
        let mut first: Option<ConversionFailure> = None;
        for (i, &c) in self.targets.iter().enumerate() {
            let rows = first.as_ref().map_or(n, |f| f.row);
            let (v, failed) = self.parsers[c].parse(&batch, i, rows, &env);
            if let Some(Failed { row, failure }) = failed {
                if first.as_ref().is_none_or(|f| row < f.row) {
                    first = Some(ConversionFailure {
                        row,
                        input_column: i,
                        table_column: c,
                        failure,
                    });
                }
            }
            vectors[c] = Some(v);
        }
        Converted {
            batch,
            vectors,
            failure: first,
        }
    }
}
