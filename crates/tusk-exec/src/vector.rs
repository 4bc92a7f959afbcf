//! Column vectors and batches: the unit of work of the executor.
//!
//! A [`Batch`] holds up to about [`BATCH_SIZE`] rows as one [`Vector`] per
//! column. A vector is a typed array plus an optional null mask (`true` =
//! NULL); the value stored under a NULL is arbitrary but valid. Text is kept
//! as one byte buffer with offsets, so a batch of strings is two allocations,
//! not one per row. Operators dispatch on the vector's type once per batch and
//! then run a tight loop over the array.

use crate::numeric::Numeric;
use crate::value::Value;
use tusk_storage::DataType;

/// Rows per batch produced by scans.
pub const BATCH_SIZE: usize = 2048;

/// Variable-length strings in one buffer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Strings {
    offsets: Vec<u32>,
    bytes: Vec<u8>,
}

impl Strings {
    pub fn new() -> Self {
        Strings {
            offsets: vec![0],
            bytes: Vec::new(),
        }
    }

    pub fn with_capacity(rows: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Strings {
            offsets,
            bytes: Vec::with_capacity(bytes),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The string at `i` as `&str` (contents are always valid UTF-8).
    #[inline]
    pub fn get_str(&self, i: usize) -> &str {
        std::str::from_utf8(self.get(i)).unwrap_or("")
    }

    #[inline]
    pub fn push(&mut self, s: &[u8]) {
        self.bytes.extend_from_slice(s);
        self.offsets.push(self.bytes.len() as u32);
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

/// The values of a vector.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Bool(Vec<bool>),
    Int4(Vec<i32>),
    Int8(Vec<i64>),
    Numeric(Vec<Numeric>),
    Text(Strings),
}

/// One column of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    pub data: Data,
    /// `Some(mask)` when any value may be NULL; `mask[i]` is true for NULL.
    pub nulls: Option<Vec<bool>>,
}

impl Vector {
    pub fn new(data: Data, nulls: Option<Vec<bool>>) -> Vector {
        let nulls = nulls.filter(|n| n.iter().any(|&b| b));
        Vector { data, nulls }
    }

    pub fn empty(ty: DataType) -> Vector {
        Self::with_capacity(ty, 0)
    }

    pub fn with_capacity(ty: DataType, n: usize) -> Vector {
        let data = match ty {
            DataType::Bool => Data::Bool(Vec::with_capacity(n)),
            DataType::Int4 => Data::Int4(Vec::with_capacity(n)),
            DataType::Int8 => Data::Int8(Vec::with_capacity(n)),
            DataType::Numeric => Data::Numeric(Vec::with_capacity(n)),
            DataType::Text => Data::Text(Strings::with_capacity(n, n * 8)),
        };
        Vector { data, nulls: None }
    }

    pub fn data_type(&self) -> DataType {
        match &self.data {
            Data::Bool(_) => DataType::Bool,
            Data::Int4(_) => DataType::Int4,
            Data::Int8(_) => DataType::Int8,
            Data::Numeric(_) => DataType::Numeric,
            Data::Text(_) => DataType::Text,
        }
    }

    pub fn len(&self) -> usize {
        match &self.data {
            Data::Bool(v) => v.len(),
            Data::Int4(v) => v.len(),
            Data::Int8(v) => v.len(),
            Data::Numeric(v) => v.len(),
            Data::Text(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.as_ref().is_some_and(|n| n[i])
    }

    /// A vector of `n` copies of `v` (of type `ty` when `v` is NULL).
    pub fn constant(v: &Value, ty: DataType, n: usize) -> Vector {
        let data = match v {
            Value::Null => return Vector::nulls(ty, n),
            Value::Bool(b) => Data::Bool(vec![*b; n]),
            Value::Int4(x) => Data::Int4(vec![*x; n]),
            Value::Int8(x) => Data::Int8(vec![*x; n]),
            Value::Numeric(x) => Data::Numeric(vec![*x; n]),
            Value::Text(s) => {
                let mut st = Strings::with_capacity(n, n * s.len());
                for _ in 0..n {
                    st.push(s.as_bytes());
                }
                Data::Text(st)
            }
        };
        Vector { data, nulls: None }
    }

    /// `n` NULLs of type `ty`.
    pub fn nulls(ty: DataType, n: usize) -> Vector {
        let data = match ty {
            DataType::Bool => Data::Bool(vec![false; n]),
            DataType::Int4 => Data::Int4(vec![0; n]),
            DataType::Int8 => Data::Int8(vec![0; n]),
            DataType::Numeric => Data::Numeric(vec![Numeric::from_i64(0); n]),
            DataType::Text => {
                let mut s = Strings::with_capacity(n, 0);
                for _ in 0..n {
                    s.push(b"");
                }
                Data::Text(s)
            }
        };
        Vector {
            data,
            nulls: if n > 0 { Some(vec![true; n]) } else { None },
        }
    }

    /// The value at row `i`.
    pub fn value(&self, i: usize) -> Value {
        if self.is_null(i) {
            return Value::Null;
        }
        match &self.data {
            Data::Bool(v) => Value::Bool(v[i]),
            Data::Int4(v) => Value::Int4(v[i]),
            Data::Int8(v) => Value::Int8(v[i]),
            Data::Numeric(v) => Value::Numeric(v[i]),
            Data::Text(v) => Value::Text(v.get_str(i).to_string()),
        }
    }

    /// Appends a value (which must be NULL or of this vector's type).
    pub fn push_value(&mut self, v: &Value) {
        let n = self.len();
        let null = matches!(v, Value::Null);
        match (&mut self.data, v) {
            (Data::Bool(d), Value::Bool(x)) => d.push(*x),
            (Data::Int4(d), Value::Int4(x)) => d.push(*x),
            (Data::Int8(d), Value::Int8(x)) => d.push(*x),
            (Data::Numeric(d), Value::Numeric(x)) => d.push(*x),
            (Data::Text(d), Value::Text(x)) => d.push(x.as_bytes()),
            (Data::Bool(d), _) => d.push(false),
            (Data::Int4(d), _) => d.push(0),
            (Data::Int8(d), _) => d.push(0),
            (Data::Numeric(d), _) => d.push(Numeric::from_i64(0)),
            (Data::Text(d), _) => d.push(b""),
        }
        self.push_null_flag(n, null);
        debug_assert!(null || self.value(n) == *v);
    }

    /// Records whether the value just appended at row `n` is NULL,
    /// materialising the mask on the first NULL.
    #[inline]
    pub fn push_null_flag(&mut self, n: usize, null: bool) {
        match &mut self.nulls {
            Some(m) => m.push(null),
            None if null => {
                let mut m = vec![false; n];
                m.push(true);
                self.nulls = Some(m);
            }
            None => {}
        }
    }

    /// Appends row `i` of `other` (same type).
    #[inline]
    pub fn push_from(&mut self, other: &Vector, i: usize) {
        let n = self.len();
        match (&mut self.data, &other.data) {
            (Data::Bool(d), Data::Bool(s)) => d.push(s[i]),
            (Data::Int4(d), Data::Int4(s)) => d.push(s[i]),
            (Data::Int8(d), Data::Int8(s)) => d.push(s[i]),
            (Data::Numeric(d), Data::Numeric(s)) => d.push(s[i]),
            (Data::Text(d), Data::Text(s)) => d.push(s.get(i)),
            _ => panic!("push_from between vectors of different types"),
        }
        self.push_null_flag(n, other.is_null(i));
    }

    /// Rows `idx` of this vector, in that order.
    pub fn gather(&self, idx: &[u32]) -> Vector {
        let data = match &self.data {
            Data::Bool(v) => Data::Bool(idx.iter().map(|&i| v[i as usize]).collect()),
            Data::Int4(v) => Data::Int4(idx.iter().map(|&i| v[i as usize]).collect()),
            Data::Int8(v) => Data::Int8(idx.iter().map(|&i| v[i as usize]).collect()),
            Data::Numeric(v) => Data::Numeric(idx.iter().map(|&i| v[i as usize]).collect()),
            Data::Text(v) => {
                let mut s = Strings::with_capacity(idx.len(), idx.len() * 8);
                for &i in idx {
                    s.push(v.get(i as usize));
                }
                Data::Text(s)
            }
        };
        let nulls = self
            .nulls
            .as_ref()
            .map(|n| idx.iter().map(|&i| n[i as usize]).collect::<Vec<bool>>());
        Vector::new(data, nulls)
    }

    /// Appends all rows of `other` (same type).
    pub fn append(&mut self, other: &Vector) {
        let n = self.len();
        match (&mut self.data, &other.data) {
            (Data::Bool(d), Data::Bool(s)) => d.extend_from_slice(s),
            (Data::Int4(d), Data::Int4(s)) => d.extend_from_slice(s),
            (Data::Int8(d), Data::Int8(s)) => d.extend_from_slice(s),
            (Data::Numeric(d), Data::Numeric(s)) => d.extend_from_slice(s),
            (Data::Text(d), Data::Text(s)) => {
                for x in s.iter() {
                    d.push(x);
                }
            }
            _ => panic!("append between vectors of different types"),
        }
        match (&mut self.nulls, &other.nulls) {
            (Some(m), Some(o)) => m.extend_from_slice(o),
            (Some(m), None) => m.resize(n + other.len(), false),
            (None, Some(o)) => {
                let mut m = vec![false; n];
                m.extend_from_slice(o);
                self.nulls = Some(m);
            }
            (None, None) => {}
        }
    }
}

/// A set of rows as column vectors. `len` is kept separately so that a batch
/// with no columns (e.g. the input of `count(*)`) still has a row count.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub columns: Vec<Vector>,
    pub len: usize,
}

impl Batch {
    pub fn new(columns: Vec<Vector>, len: usize) -> Batch {
        debug_assert!(columns.iter().all(|c| c.len() == len));
        Batch { columns, len }
    }

    pub fn empty(types: &[DataType]) -> Batch {
        Batch {
            columns: types.iter().map(|&t| Vector::empty(t)).collect(),
            len: 0,
        }
    }

    /// Rows `idx` of the batch.
    pub fn gather(&self, idx: &[u32]) -> Batch {
        Batch {
            columns: self.columns.iter().map(|c| c.gather(idx)).collect(),
            len: idx.len(),
        }
    }

    pub fn append(&mut self, other: &Batch) {
        for (c, o) in self.columns.iter_mut().zip(&other.columns) {
            c.append(o);
        }
        self.len += other.len;
    }
}
