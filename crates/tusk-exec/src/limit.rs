//! Limit: skips `offset` rows, then passes at most `limit` rows and stops
//! pulling its input.

use crate::error::Result;
use crate::operator::Operator;
use crate::vector::Batch;

pub struct Limit {
    input: Box<dyn Operator>,
    remaining: u64,
    skip: u64,
}

impl Limit {
    /// `limit` rows (all when `None`) after the first `offset`.
    pub fn new(input: Box<dyn Operator>, limit: Option<u64>, offset: u64) -> Limit {
        Limit {
            input,
            remaining: limit.unwrap_or(u64::MAX),
            skip: offset,
        }
    }
}

impl Operator for Limit {
    fn next(&mut self) -> Result<Option<Batch>> {
        while self.remaining > 0 {
            let Some(b) = self.input.next()? else {
                return Ok(None);
            };
            let n = b.len as u64;
            if self.skip >= n {
                self.skip -= n;
                continue;
            }
            let start = self.skip as usize;
            self.skip = 0;
            let take = ((n - start as u64).min(self.remaining)) as usize;
            self.remaining -= take as u64;
            if start == 0 && take == b.len {
                return Ok(Some(b));
            }
            let idx: Vec<u32> = (start..start + take).map(|i| i as u32).collect();
            return Ok(Some(b.gather(&idx)));
        }
        Ok(None)
    }
}
