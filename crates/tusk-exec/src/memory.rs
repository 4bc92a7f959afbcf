//! Memory accounting of the operators that must stay within `work_mem`.
//!
//! An operator that buffers rows (sort, hash aggregation, set operations,
//! window partitions, materialised CTEs) counts the bytes it holds in a
//! [`MemUse`]: what it holds now and the most it ever held. The figures are
//! what the operator decides on (spill or not) and what EXPLAIN ANALYZE prints
//! (`Memory: NkB`); tests assert the peak against the limit. Counted are the
//! values of buffered vectors ([`batch_bytes`]), encoded keys, per-row
//! bookkeeping and the buffers of open spill files, the things that grow with
//! the input. Fixed per-operator overhead is not counted.

use crate::spill::SPILL_BUFFER_SIZE;
use crate::vector::{Batch, Vector};

/// Bytes held now and at most.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MemUse {
    pub current: usize,
    pub peak: usize,
}

impl MemUse {
    pub fn add(&mut self, n: usize) {
        self.current += n;
        self.peak = self.peak.max(self.current);
    }

    pub fn sub(&mut self, n: usize) {
        self.current = self.current.saturating_sub(n);
    }

    pub fn set(&mut self, n: usize) {
        self.current = n;
        self.peak = self.peak.max(n);
    }

    /// Folds in the peak of a phase that is over (its memory released).
    pub fn absorb_peak(&mut self, other_peak: usize) {
        self.peak = self.peak.max(self.current + other_peak);
    }

    /// Peak in kB as EXPLAIN prints it (rounded up, at least 1).
    pub fn peak_kb(&self) -> usize {
        self.peak.div_ceil(1024).max(1)
    }
}

/// Bytes the values and NULL masks of a vector occupy.
pub fn vector_bytes(v: &Vector) -> usize {
    v.data.byte_size() + v.nulls.as_ref().map_or(0, |n| n.len())
}

/// Bytes the values and NULL masks of a batch occupy.
pub fn batch_bytes(b: &Batch) -> usize {
    b.columns.iter().map(vector_bytes).sum()
}

/// Size of the buffer of each spill file an operator with limit `limit`
/// opens: a sixteenth of the limit, between 1 kB and [`SPILL_BUFFER_SIZE`],
/// so that a handful of open files never crowd out the rows.
pub fn spill_buffer_size(limit: usize) -> usize {
    (limit / 16).clamp(1024, SPILL_BUFFER_SIZE)
}

/// What a buffering operator may use: a memory limit, and where to spill
/// what does not fit.
#[derive(Clone)]
pub struct WorkMem {
    pub limit: usize,
    pub dir: std::path::PathBuf,
    pub spill: std::rc::Rc<crate::spill::SpillStats>,
}

impl WorkMem {
    /// `work_mem`, for sorts and materialisations.
    pub fn sort(ctx: &crate::operator::ExecContext) -> WorkMem {
        WorkMem {
            limit: ctx.work_mem,
            dir: ctx.db.temp_dir(),
            spill: ctx.spill.clone(),
        }
    }

    /// `work_mem × hash_mem_multiplier`, for hash tables.
    pub fn hash(ctx: &crate::operator::ExecContext) -> WorkMem {
        WorkMem {
            limit: (ctx.work_mem as f64 * ctx.hash_mem_multiplier) as usize,
            ..WorkMem::sort(ctx)
        }
    }

    /// Most bytes an output batch built from buffered rows should hold:
    /// an eighth of the limit, at least 8 kB.
    pub fn output_batch_bytes(&self) -> usize {
        (self.limit / 8).max(8 << 10)
    }

    /// The buffer size of each spill file (see [`spill_buffer_size`]).
    pub fn buffer(&self) -> usize {
        spill_buffer_size(self.limit)
    }
}
