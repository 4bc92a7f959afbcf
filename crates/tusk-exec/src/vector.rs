//! Column vectors and batches: the unit of work of the executor.
//!
//! A [`Batch`] holds up to about [`BATCH_SIZE`] rows as one [`Vector`] per
//! column. A vector is a typed array plus an optional null mask (`true` =
//! NULL); the value stored under a NULL is arbitrary but valid. Text is kept
//! as one byte buffer with offsets, so a batch of strings is two allocations,
//! not one per row. Operators dispatch on the vector's type once per batch and
//! then run a tight loop over the array.

use crate::array::ArrayValue;
use crate::codec::VarCodec;
use crate::numeric::Numeric;
use crate::value::Value;
use tusk_storage::DataType;
use tusk_types::Interval;

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

    /// Total bytes of all strings.
    pub fn bytes_len(&self) -> usize {
        self.bytes.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

/// The values of a vector, by in-memory representation.
///
/// Several SQL types share a representation (see `tusk_storage::DataType`):
/// `Int4` also holds `date` (days since 2000-01-01), `Int8` also holds `time`,
/// `timestamp` and `timestamptz` (microseconds), and `Text` holds every
/// string type. The plan, not the vector, knows which SQL type a column has.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Bool(Vec<bool>),
    Int2(Vec<i16>),
    Int4(Vec<i32>),
    Int8(Vec<i64>),
    Float4(Vec<f32>),
    Float8(Vec<f64>),
    Numeric(Vec<Numeric>),
    Interval(Vec<Interval>),
    /// `uuid`s (see `DataType::Uuid`).
    Uuid(Vec<u128>),
    Text(Strings),
    /// `bytea`: byte strings, which (unlike `Text`'s) need not be UTF-8.
    Bytea(Strings),
    /// Arrays (and `int2vector` / `oidvector`), one value per row.
    Array(Vec<ArrayValue>),
}

/// Runs `$body` with `$v` bound to the typed array of every fixed-width
/// variant of `$data` (by `$pat` binding mode), and `$text` for strings.
/// The four-armed form sends `numeric` and arrays (whose values may own
/// heap memory, so are `Clone` but not `Copy`) to their own arm `$num`
/// instead.
macro_rules! with_fixed {
    ($data:expr, $v:ident => $body:expr, $s:ident => $text:expr) => {
        with_fixed!($data, $v => $body, $v => $body, $s => $text)
    };
    ($data:expr, $v:ident => $body:expr, $n:ident => $num:expr, $s:ident => $text:expr) => {
        match $data {
            Data::Bool($v) => $body,
            Data::Int2($v) => $body,
            Data::Int4($v) => $body,
            Data::Int8($v) => $body,
            Data::Float4($v) => $body,
            Data::Float8($v) => $body,
            Data::Numeric($n) => $num,
            Data::Array($n) => $num,
            Data::Interval($v) => $body,
            Data::Uuid($v) => $body,
            Data::Text($s) | Data::Bytea($s) => $text,
        }
    };
}
pub(crate) use with_fixed;

/// Builds a `Data` of the same variant as `$like` from the expression `$make`,
/// evaluated with `$v` bound to that variant's array (fixed-width variants),
/// or `$text` for strings.
macro_rules! map_fixed {
    ($like:expr, $v:ident => $make:expr, $s:ident => $text:expr) => {
        map_fixed!($like, $v => $make, $v => $make, $s => $text)
    };
    ($like:expr, $v:ident => $make:expr, $n:ident => $num:expr, $s:ident => $text:expr) => {
        match $like {
            Data::Bool($v) => Data::Bool($make),
            Data::Int2($v) => Data::Int2($make),
            Data::Int4($v) => Data::Int4($make),
            Data::Int8($v) => Data::Int8($make),
            Data::Float4($v) => Data::Float4($make),
            Data::Float8($v) => Data::Float8($make),
            Data::Numeric($n) => Data::Numeric($num),
            Data::Array($n) => Data::Array($num),
            Data::Interval($v) => Data::Interval($make),
            Data::Uuid($v) => Data::Uuid($make),
            Data::Text($s) => Data::Text($text),
            Data::Bytea($s) => Data::Bytea($text),
        }
    };
}

/// How values of each SQL type are held in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Physical {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Interval,
    Uuid,
    Text,
    Bytea,
    Array,
}

/// The in-memory representation of SQL type `ty`.
pub fn physical(ty: DataType) -> Physical {
    match ty {
        DataType::Bool => Physical::Bool,
        DataType::Int2 => Physical::Int2,
        DataType::Int4 | DataType::Date => Physical::Int4,
        DataType::Int8 | DataType::Time | DataType::Timestamp | DataType::TimestampTz => {
            Physical::Int8
        }
        DataType::Float4 => Physical::Float4,
        DataType::Float8 => Physical::Float8,
        DataType::Numeric => Physical::Numeric,
        DataType::Interval => Physical::Interval,
        DataType::Uuid => Physical::Uuid,
        DataType::Bytea => Physical::Bytea,
        DataType::Oid
        | DataType::RegClass
        | DataType::RegType
        | DataType::RegProc
        | DataType::RegNamespace
        | DataType::RegRole
        | DataType::Xid => Physical::Int8,
        DataType::Text
        | DataType::Varchar
        | DataType::Bpchar
        | DataType::Json
        | DataType::Jsonb
        | DataType::Name
        | DataType::Char
        | DataType::NodeTree => Physical::Text,
        DataType::Int2Vector | DataType::OidVector | DataType::Array(_) => Physical::Array,
    }
}

impl Data {
    fn with_capacity(p: Physical, n: usize) -> Data {
        match p {
            Physical::Bool => Data::Bool(Vec::with_capacity(n)),
            Physical::Int2 => Data::Int2(Vec::with_capacity(n)),
            Physical::Int4 => Data::Int4(Vec::with_capacity(n)),
            Physical::Int8 => Data::Int8(Vec::with_capacity(n)),
            Physical::Float4 => Data::Float4(Vec::with_capacity(n)),
            Physical::Float8 => Data::Float8(Vec::with_capacity(n)),
            Physical::Numeric => Data::Numeric(Vec::with_capacity(n)),
            Physical::Interval => Data::Interval(Vec::with_capacity(n)),
            Physical::Uuid => Data::Uuid(Vec::with_capacity(n)),
            Physical::Text => Data::Text(Strings::with_capacity(n, n * 8)),
            Physical::Bytea => Data::Bytea(Strings::with_capacity(n, n * 8)),
            Physical::Array => Data::Array(Vec::with_capacity(n)),
        }
    }

    /// `n` placeholder values (what a NULL slot holds).
    fn defaults(p: Physical, n: usize) -> Data {
        match p {
            Physical::Bool => Data::Bool(vec![false; n]),
            Physical::Int2 => Data::Int2(vec![0; n]),
            Physical::Int4 => Data::Int4(vec![0; n]),
            Physical::Int8 => Data::Int8(vec![0; n]),
            Physical::Float4 => Data::Float4(vec![0.0; n]),
            Physical::Float8 => Data::Float8(vec![0.0; n]),
            Physical::Numeric => Data::Numeric(vec![Numeric::from_i64(0); n]),
            Physical::Interval => Data::Interval(vec![Interval::default(); n]),
            Physical::Uuid => Data::Uuid(vec![0; n]),
            Physical::Text | Physical::Bytea => {
                let mut s = Strings::with_capacity(n, 0);
                for _ in 0..n {
                    s.push(b"");
                }
                if p == Physical::Text {
                    Data::Text(s)
                } else {
                    Data::Bytea(s)
                }
            }
            Physical::Array => Data::Array(vec![VarCodec::placeholder(); n]),
        }
    }

    pub fn physical(&self) -> Physical {
        match self {
            Data::Bool(_) => Physical::Bool,
            Data::Int2(_) => Physical::Int2,
            Data::Int4(_) => Physical::Int4,
            Data::Int8(_) => Physical::Int8,
            Data::Float4(_) => Physical::Float4,
            Data::Float8(_) => Physical::Float8,
            Data::Numeric(_) => Physical::Numeric,
            Data::Interval(_) => Physical::Interval,
            Data::Uuid(_) => Physical::Uuid,
            Data::Text(_) => Physical::Text,
            Data::Bytea(_) => Physical::Bytea,
            Data::Array(_) => Physical::Array,
        }
    }

    pub fn len(&self) -> usize {
        with_fixed!(self, v => v.len(), s => s.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the values occupy (for memory accounting).
    pub fn byte_size(&self) -> usize {
        with_fixed!(self, v => std::mem::size_of_val(v.as_slice()),
            s => s.len() * 4 + s.bytes_len())
    }

    /// Appends a placeholder value (for a NULL).
    pub fn push_default(&mut self) {
        match self {
            Data::Bool(d) => d.push(false),
            Data::Int2(d) => d.push(0),
            Data::Int4(d) => d.push(0),
            Data::Int8(d) => d.push(0),
            Data::Float4(d) => d.push(0.0),
            Data::Float8(d) => d.push(0.0),
            Data::Numeric(d) => d.push(Numeric::from_i64(0)),
            Data::Interval(d) => d.push(Interval::default()),
            Data::Uuid(d) => d.push(0),
            Data::Text(d) | Data::Bytea(d) => d.push(b""),
            Data::Array(d) => d.push(VarCodec::placeholder()),
        }
    }
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
        Vector {
            data: Data::with_capacity(physical(ty), n),
            nulls: None,
        }
    }

    pub fn physical(&self) -> Physical {
        self.data.physical()
    }

    pub fn len(&self) -> usize {
        self.data.len()
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
        if v.is_null() {
            return Vector::nulls(ty, n);
        }
        let mut out = Vector::with_capacity(ty, n);
        if let (Data::Text(st), Value::Text(s)) = (&mut out.data, v) {
            for _ in 0..n {
                st.push(s.as_bytes());
            }
            return out;
        }
        if let (Data::Bytea(st), Value::Bytea(b)) = (&mut out.data, v) {
            for _ in 0..n {
                st.push(b);
            }
            return out;
        }
        out.push_value(v);
        let one = out.data;
        let data = map_fixed!(one, d => vec![d.into_iter().next().expect("one value"); n], s => s);
        Vector { data, nulls: None }
    }

    /// `n` NULLs of type `ty`.
    pub fn nulls(ty: DataType, n: usize) -> Vector {
        Vector {
            data: Data::defaults(physical(ty), n),
            nulls: if n > 0 { Some(vec![true; n]) } else { None },
        }
    }

    /// The value at row `i`, as SQL type `ty` (which must be held as this
    /// vector's representation).
    pub fn value_as(&self, i: usize, ty: DataType) -> Value {
        if self.is_null(i) {
            return Value::Null;
        }
        match (&self.data, ty) {
            (Data::Bool(v), _) => Value::Bool(v[i]),
            (Data::Int2(v), _) => Value::Int2(v[i]),
            (Data::Int4(v), DataType::Date) => Value::Date(v[i]),
            (Data::Int4(v), _) => Value::Int4(v[i]),
            (Data::Int8(v), DataType::Time) => Value::Time(v[i]),
            (Data::Int8(v), DataType::Timestamp) => Value::Timestamp(v[i]),
            (Data::Int8(v), DataType::TimestampTz) => Value::TimestampTz(v[i]),
            (Data::Int8(v), t) if t.is_oid() || t == DataType::Xid => Value::Oid {
                ty: t,
                oid: v[i] as u32,
            },
            (Data::Int8(v), _) => Value::Int8(v[i]),
            (Data::Float4(v), _) => Value::Float4(v[i]),
            (Data::Float8(v), _) => Value::Float8(v[i]),
            (Data::Numeric(v), _) => Value::Numeric(v[i].clone()),
            (Data::Interval(v), _) => Value::Interval(v[i]),
            (Data::Uuid(v), _) => Value::Uuid(v[i]),
            (Data::Text(v), _) => Value::Text(v.get_str(i).to_string()),
            (Data::Bytea(v), _) => Value::Bytea(v.get(i).to_vec()),
            (Data::Array(v), _) => Value::Array(Box::new(v[i].clone())),
        }
    }

    /// The value at row `i`, taking integers as `integer`/`bigint` (not as
    /// dates or timestamps): for code that only moves or compares values.
    pub fn value(&self, i: usize) -> Value {
        let ty = match self.physical() {
            Physical::Int8 => DataType::Int8,
            _ => DataType::Int4,
        };
        self.value_as(i, ty)
    }

    /// Appends a value (which must be NULL or held as this vector's representation).
    pub fn push_value(&mut self, v: &Value) {
        let n = self.len();
        let null = v.is_null();
        match (&mut self.data, v) {
            (Data::Bool(d), Value::Bool(x)) => d.push(*x),
            (Data::Int2(d), Value::Int2(x)) => d.push(*x),
            (Data::Int4(d), Value::Int4(x) | Value::Date(x)) => d.push(*x),
            (
                Data::Int8(d),
                Value::Int8(x) | Value::Time(x) | Value::Timestamp(x) | Value::TimestampTz(x),
            ) => d.push(*x),
            (Data::Float4(d), Value::Float4(x)) => d.push(*x),
            (Data::Float8(d), Value::Float8(x)) => d.push(*x),
            (Data::Numeric(d), Value::Numeric(x)) => d.push(x.clone()),
            (Data::Interval(d), Value::Interval(x)) => d.push(*x),
            (Data::Uuid(d), Value::Uuid(x)) => d.push(*x),
            (Data::Text(d), Value::Text(x)) => d.push(x.as_bytes()),
            (Data::Bytea(d), Value::Bytea(x)) => d.push(x),
            (Data::Int8(d), Value::Oid { oid, .. }) => d.push(*oid as i64),
            (Data::Array(d), Value::Array(x)) => d.push((**x).clone()),
            (d, _) => {
                debug_assert!(null, "push_value of {v:?} into {:?}", d.physical());
                d.push_default()
            }
        }
        self.push_null_flag(n, null);
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

    /// Appends row `i` of `other` (same representation).
    #[inline]
    pub fn push_from(&mut self, other: &Vector, i: usize) {
        let n = self.len();
        match (&mut self.data, &other.data) {
            (Data::Bool(d), Data::Bool(s)) => d.push(s[i]),
            (Data::Int2(d), Data::Int2(s)) => d.push(s[i]),
            (Data::Int4(d), Data::Int4(s)) => d.push(s[i]),
            (Data::Int8(d), Data::Int8(s)) => d.push(s[i]),
            (Data::Float4(d), Data::Float4(s)) => d.push(s[i]),
            (Data::Float8(d), Data::Float8(s)) => d.push(s[i]),
            (Data::Numeric(d), Data::Numeric(s)) => d.push(s[i].clone()),
            (Data::Interval(d), Data::Interval(s)) => d.push(s[i]),
            (Data::Uuid(d), Data::Uuid(s)) => d.push(s[i]),
            (Data::Text(d), Data::Text(s)) | (Data::Bytea(d), Data::Bytea(s)) => d.push(s.get(i)),
            (Data::Array(d), Data::Array(s)) => d.push(s[i].clone()),
            _ => panic!("push_from between vectors of different types"),
        }
        self.push_null_flag(n, other.is_null(i));
    }

    /// Rows `idx` of this vector, in that order.
    pub fn gather(&self, idx: &[u32]) -> Vector {
        let data = map_fixed!(&self.data,
        v => idx.iter().map(|&i| v[i as usize]).collect(),
        v => idx.iter().map(|&i| v[i as usize].clone()).collect(),
        v => {
            let mut s = Strings::with_capacity(idx.len(), idx.len() * 8);
            for &i in idx {
                s.push(v.get(i as usize));
            }
            s
        });
        let nulls = self
            .nulls
            .as_ref()
            .map(|n| idx.iter().map(|&i| n[i as usize]).collect::<Vec<bool>>());
        Vector::new(data, nulls)
    }

    /// Appends all rows of `other` (same representation).
    pub fn append(&mut self, other: &Vector) {
        let n = self.len();
        match (&mut self.data, &other.data) {
            (Data::Bool(d), Data::Bool(s)) => d.extend_from_slice(s),
            (Data::Int2(d), Data::Int2(s)) => d.extend_from_slice(s),
            (Data::Int4(d), Data::Int4(s)) => d.extend_from_slice(s),
            (Data::Int8(d), Data::Int8(s)) => d.extend_from_slice(s),
            (Data::Float4(d), Data::Float4(s)) => d.extend_from_slice(s),
            (Data::Float8(d), Data::Float8(s)) => d.extend_from_slice(s),
            (Data::Numeric(d), Data::Numeric(s)) => d.extend_from_slice(s),
            (Data::Interval(d), Data::Interval(s)) => d.extend_from_slice(s),
            (Data::Uuid(d), Data::Uuid(s)) => d.extend_from_slice(s),
            (Data::Array(d), Data::Array(s)) => d.extend_from_slice(s),
            (Data::Text(d), Data::Text(s)) | (Data::Bytea(d), Data::Bytea(s)) => {
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
